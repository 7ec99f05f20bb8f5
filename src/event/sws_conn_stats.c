/* The shared connection and request counters (sws_conn_stats.h). */
#include "sws_conn_stats.h"
#include "sws_process_internal.h"    /* sws_worker_generation */

/* Until a configuration maps the zone (and in -t runs): local slots. */
static sws_conn_stats_t  sws_conn_stats_local[SWS_CONN_STATS_SLOTS];
sws_conn_stats_t        *sws_conn_stats_base = sws_conn_stats_local;
sws_conn_stats_t        *sws_conn_stats_own = sws_conn_stats_local;

void
sws_conn_stats_attach(void)
{
    sws_conn_stats_own = &sws_conn_stats_base[sws_status_slot()];
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

/* The counters of slots [from, to), every step. */
static void
sws_conn_stats_read(sws_status_t *st, sws_uint_t from, sws_uint_t to, sws_uint_t step)
{
    sws_conn_stats_t *cs;
    uint64_t          busy = 0;
    sws_uint_t        i, k;

    sws_memzero(st, sizeof(*st));
    st->size = sizeof(*st);
    for (i = from; i < to; i += step) {
        cs = &sws_conn_stats_base[i];
        st->accepted += __atomic_load_n(&cs->accepted, __ATOMIC_RELAXED);
        st->handled += __atomic_load_n(&cs->handled, __ATOMIC_RELAXED);
        st->active += __atomic_load_n(&cs->active, __ATOMIC_RELAXED);
        st->requests += __atomic_load_n(&cs->requests, __ATOMIC_RELAXED);
        st->reading += __atomic_load_n(&cs->reading, __ATOMIC_RELAXED);
        st->writing += __atomic_load_n(&cs->writing, __ATOMIC_RELAXED);
        busy += __atomic_load_n(&cs->busy, __ATOMIC_RELAXED);
        for (k = 0; k < 5; k++) {
            st->responses[k] += __atomic_load_n(&cs->responses[k], __ATOMIC_RELAXED);
        }
        st->bytes_in += __atomic_load_n(&cs->bytes_in, __ATOMIC_RELAXED);
        st->bytes_out += __atomic_load_n(&cs->bytes_out, __ATOMIC_RELAXED);
    }
    /* Read one by one: the difference may dip below zero for a moment. */
    st->waiting = st->active > busy ? st->active - busy : 0;
}

void
sws_status_get(sws_status_t *st)
{
    sws_conn_stats_read(st, 0, SWS_CONN_STATS_SLOTS, 1);
}

sws_int_t
sws_status_get_protocols(sws_status_protocols_t *st)
{
    sws_status_protocols_t  out;
    sws_conn_stats_t       *cs;
    sws_uint_t              i;
    size_t                  size = st->size;

    if (size < offsetof(sws_status_protocols_t, reserved)) {
        return SWS_ERROR;
    }
    sws_memzero(&out, sizeof(out));
    for (i = 0; i < SWS_CONN_STATS_SLOTS; i++) {
        cs = &sws_conn_stats_base[i];
        out.tls_handshakes += __atomic_load_n(&cs->tls_full, __ATOMIC_RELAXED);
        out.tls_resumed += __atomic_load_n(&cs->tls_resumed, __ATOMIC_RELAXED);
        out.tls_failed += __atomic_load_n(&cs->tls_failed, __ATOMIC_RELAXED);
        out.tls_v13 += __atomic_load_n(&cs->tls_v13, __ATOMIC_RELAXED);
        out.tls_v12 += __atomic_load_n(&cs->tls_v12, __ATOMIC_RELAXED);
        out.tls_older += __atomic_load_n(&cs->tls_older, __ATOMIC_RELAXED);
        out.http2_connections += __atomic_load_n(&cs->h2_connections, __ATOMIC_RELAXED);
        out.http2_streams += __atomic_load_n(&cs->h2_streams, __ATOMIC_RELAXED);
    }
    size = sws_min(size, sizeof(out));
    out.size = size;
    memcpy(st, &out, size);
    return SWS_OK;
}

sws_uint_t
sws_status_slot(void)
{
    return sws_worker % SWS_STATUS_WORKERS + SWS_STATUS_WORKERS * (sws_worker_generation & 1);
}

sws_int_t
sws_status_get_worker(sws_uint_t i, sws_status_t *st)
{
    if (i >= SWS_STATUS_WORKERS) {
        return -1;
    }
    sws_conn_stats_read(st, i, SWS_CONN_STATS_SLOTS, SWS_STATUS_WORKERS);  /* both parities */
    return 0;
}
