/*
 * Connection and request counters for stub_status and the admin module
 * (<scalws/sws_status.h>): three cache lines per worker in a shared zone (a
 * worker adds only to its own, so workers do not fight over one line),
 * summed when read. A worker index has two slots, one for the even
 * generations (configurations) and one for the odd: after a reload, the
 * old workers and the new ones of an index count apart. The connection
 * and request counts are atomic adds all the same (two reloads in quick
 * succession can still bring two generations of one parity together);
 * what the log phase counts (responses by class, bytes) are plain adds,
 * no lock on the request path. The zone keeps its name and size across
 * reloads, so what an old worker subtracts lands where it added.
 */
#ifndef SWS_CONN_STATS_H
#define SWS_CONN_STATS_H

#include <scalws/scalws.h>
#include "sws_process.h"            /* sws_worker */

#define SWS_CONN_STATS_SLOTS  (2 * SWS_STATUS_WORKERS)

typedef struct {
    uint64_t  accepted;
    uint64_t  handled;
    uint64_t  active;
    uint64_t  requests;
    uint64_t  reading;
    uint64_t  writing;
    uint64_t  busy;      /* client connections with a request in progress */
    uint64_t  pad;
    /* The second cache line: what the log phase counts (sws_status_t). */
    uint64_t  responses[5];
    uint64_t  bytes_in;
    uint64_t  bytes_out;
    uint64_t  pad2;
    /* The third: TLS handshakes of clients, HTTP/2 (sws_status_protocols_t);
     * plain adds too. */
    uint64_t  tls_full;
    uint64_t  tls_resumed;
    uint64_t  tls_failed;
    uint64_t  tls_v13;
    uint64_t  tls_v12;
    uint64_t  tls_older;
    uint64_t  h2_connections;
    uint64_t  h2_streams;
} sws_conn_stats_t;

extern sws_conn_stats_t *sws_conn_stats_base;   /* SLOTS of them */
/* This worker's slot: its index's, of its generation's parity, kept by
 * sws_conn_stats_attach (a counted event costs one add then). */
extern sws_conn_stats_t *sws_conn_stats_own;

#define sws_conn_stat(field, n) \
    ((void) __atomic_fetch_add(&sws_conn_stats_own->field, (uint64_t) (n), __ATOMIC_RELAXED))
/* The log phase's counts: this process alone writes its slot. */
#define sws_conn_stat_plain(field, n)  (sws_conn_stats_own->field += (uint64_t) (n))

/* When the zone or the worker's index changed. */
void sws_conn_stats_attach(void);

/* From the events module's configuration: the zone. */
sws_int_t sws_conn_stats_init(sws_conf_t *cf);

#endif
