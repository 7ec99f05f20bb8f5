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
    /* ABI 1.8 (were reserved[0..6]): since start, the requests logged by
     * the class of their status: [0] 1xx .. [4] 5xx (a status out of
     * 100..599, 0 for one broken off, counts as 4xx, as the client's
     * fault: 499, 444); the bytes of those requests, in (head and body
     * read) and out (head and body sent). */
    uint64_t  responses[5];
    uint64_t  bytes_in;
    uint64_t  bytes_out;
    uint64_t  reserved[1];
} sws_status_t;

void sws_status_get(sws_status_t *st);

/* ABI 1.8: the counters of the workers of index i alone (worker_processes'
 * index, modulo SWS_STATUS_WORKERS; the process of a single-process server
 * is 0), of every generation: 0, or -1 for i out of range. */
#define SWS_STATUS_WORKERS  32
sws_int_t sws_status_get_worker(sws_uint_t i, sws_status_t *st);

/* ABI 1.8: this process's row among SWS_STATUS_SLOTS, for a module's own
 * per-worker counters in shared memory: its worker index and the parity of
 * its configuration generation (the old and new workers of one index run
 * side by side during a reload), as the core's counters are kept. A
 * process that is no worker (the master, a helper) has the row of worker
 * 0 of its generation. */
#define SWS_STATUS_SLOTS  (2 * SWS_STATUS_WORKERS)
sws_uint_t sws_status_slot(void);

/* ABI 1.8: the clients' TLS handshakes and HTTP/2, since start, summed
 * over the workers. st->size: the caller's sizeof; the core fills no more
 * than that and sets it to what it filled (SWS_ERROR if too small). */
typedef struct {
    size_t    size;
    uint64_t  tls_handshakes;     /* done in full */
    uint64_t  tls_resumed;        /* done by resuming a session */
    uint64_t  tls_failed;         /* failed, timed out, or left by the client */
    uint64_t  tls_v13;            /* the done ones by protocol version */
    uint64_t  tls_v12;
    uint64_t  tls_older;
    uint64_t  http2_connections;
    uint64_t  http2_streams;      /* the HTTP/2 requests */
    uint64_t  reserved[8];
} sws_status_protocols_t;

sws_int_t sws_status_get_protocols(sws_status_protocols_t *st);

#endif
