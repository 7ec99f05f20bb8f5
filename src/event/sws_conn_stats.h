/*
 * Connection and request counters for stub_status (<scalws/sws_status.h>):
 * one cache line per worker in a shared zone (a worker adds only to its
 * own, so workers do not fight over one line), summed when read. Adds are
 * atomic all the same: after a reload, an old worker and a new one can
 * have the same index. The zone keeps its name and size across reloads,
 * so what an old worker subtracts lands where it added.
 */
#ifndef SWS_CONN_STATS_H
#define SWS_CONN_STATS_H

#include <scalws/scalws.h>
#include "sws_process.h"            /* sws_worker */

#define SWS_CONN_STATS_SLOTS  64

typedef struct {
    uint64_t  accepted;
    uint64_t  handled;
    uint64_t  active;
    uint64_t  requests;
    uint64_t  reading;
    uint64_t  writing;
    uint64_t  busy;      /* client connections with a request in progress */
    uint64_t  pad;
} sws_conn_stats_t;

extern sws_conn_stats_t *sws_conn_stats_base;   /* SLOTS of them */
/* This worker's slot: base + sws_worker % SLOTS, kept by
 * sws_conn_stats_attach (a counted event costs one add then). */
extern sws_conn_stats_t *sws_conn_stats_own;

#define sws_conn_stat(field, n) \
    ((void) __atomic_fetch_add(&sws_conn_stats_own->field, (uint64_t) (n), __ATOMIC_RELAXED))

/* When the zone or the worker's index changed. */
void sws_conn_stats_attach(void);

/* From the events module's configuration: the zone. */
sws_int_t sws_conn_stats_init(sws_conf_t *cf);

#endif
