/* The shared connection and request counters (sws_conn_stats.h). */
#include "sws_conn_stats.h"

/* Until a configuration maps the zone (and in -t runs): local slots. */
static sws_conn_stats_t  sws_conn_stats_local[SWS_CONN_STATS_SLOTS];
sws_conn_stats_t        *sws_conn_stats_base = sws_conn_stats_local;
sws_conn_stats_t        *sws_conn_stats_own = sws_conn_stats_local;

void
sws_conn_stats_attach(void)
{
    sws_conn_stats_own = &sws_conn_stats_base[sws_worker % SWS_CONN_STATS_SLOTS];
}

static sws_int_t
sws_conn_stats_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    (void) old_data;                /* kept memory: the counters go on */
    zone->data = zone->addr;
    sws_conn_stats_base = (sws_conn_stats_t *) zone->addr;
    sws_conn_stats_attach();
    return SWS_OK;
}

sws_int_t
sws_conn_stats_init(sws_conf_t *cf)
{
    static const sws_str_t name = sws_string("sws:connections");
    static int             tag;

    return sws_shm_zone_add(cf, &name, sizeof(sws_conn_stats_t) * SWS_CONN_STATS_SLOTS,
                            sws_conn_stats_zone_init, &tag) ? SWS_OK : SWS_ERROR;
}

static uint64_t
sws_conn_stats_sum(size_t offset)
{
    uint64_t   sum = 0;
    sws_uint_t i;

    for (i = 0; i < SWS_CONN_STATS_SLOTS; i++) {
        sum += __atomic_load_n((uint64_t *) ((u_char *) &sws_conn_stats_base[i] + offset),
                               __ATOMIC_RELAXED);
    }
    return sum;
}

void
sws_status_get(sws_status_t *st)
{
    uint64_t busy;

    sws_memzero(st, sizeof(*st));
    st->size = sizeof(*st);
    st->accepted = sws_conn_stats_sum(offsetof(sws_conn_stats_t, accepted));
    st->handled = sws_conn_stats_sum(offsetof(sws_conn_stats_t, handled));
    st->active = sws_conn_stats_sum(offsetof(sws_conn_stats_t, active));
    st->requests = sws_conn_stats_sum(offsetof(sws_conn_stats_t, requests));
    st->reading = sws_conn_stats_sum(offsetof(sws_conn_stats_t, reading));
    st->writing = sws_conn_stats_sum(offsetof(sws_conn_stats_t, writing));
    busy = sws_conn_stats_sum(offsetof(sws_conn_stats_t, busy));
    /* Read one by one: the difference may dip below zero for a moment. */
    st->waiting = st->active > busy ? st->active - busy : 0;
}
