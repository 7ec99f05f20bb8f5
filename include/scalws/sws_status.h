/*
 * The server's connection and request counters, summed over every worker
 * (they live in shared memory), as nginx's stub_status shows them. A
 * snapshot: each counter is read on its own, so under load the sums may
 * be a few apart from each other.
 */
#ifndef SWS_STATUS_H
#define SWS_STATUS_H

#include <scalws/sws_types.h>

typedef struct {
    uint64_t  active;     /* client connections open now */
    uint64_t  accepted;   /* since start: connections accepted */
    uint64_t  handled;    /* ... and taken (not refused for lack of connections) */
    uint64_t  requests;   /* since start: requests (HTTP/1 and HTTP/2 streams) */
    uint64_t  reading;    /* requests whose head is being read */
    uint64_t  writing;    /* requests being processed and answered */
    uint64_t  waiting;    /* client connections with no request in progress */
    /* ABI 1.7 (was reserved[0]): the bytes the core filled,
     * sizeof(sws_status_t) as it knows it. A counter added later (taken
     * from reserved) is there only if it lies within size; a core of an
     * earlier SDK leaves size 0 and the reserved space zero. */
    uint64_t  size;
    uint64_t  reserved[8];
} sws_status_t;

void sws_status_get(sws_status_t *st);

#endif
