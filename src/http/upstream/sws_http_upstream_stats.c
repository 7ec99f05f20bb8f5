/*
 * The state every worker shares about every upstream server, in one shared
 * memory zone: passive and active health, and the metrics the admin module
 * reads (requests, failures, responses by class, response time, active
 * connections). Updated with relaxed atomic operations: no lock on the
 * request path. The zone is named after the set of servers, so a reload
 * with the same servers keeps the state and the counters.
 */
#include "sws_http_upstream.h"

#define SWS_UPS_ZONE_MAGIC  0x53575355u     /* "SWSU" */

typedef struct {
    uint32_t          magic;
    uint32_t          npeers;
    uint64_t          signature;
} sws_ups_zone_head_t;

#define SWS_UPS_ZONE_HEAD  sws_align(sizeof(sws_ups_zone_head_t), 64)

static sws_http_upstream_main_conf_t *sws_ups_stats_main;

static sws_int_t
sws_ups_zone_init_cb(sws_shm_zone_t *zone, void *old_data)
{
    sws_ups_zone_head_t *head = (sws_ups_zone_head_t *) zone->addr;

    if (old_data == NULL || head->magic != SWS_UPS_ZONE_MAGIC) {
        sws_memzero(zone->addr, zone->size);
        head->magic = SWS_UPS_ZONE_MAGIC;
    }
    zone->data = zone->addr;
    return SWS_OK;
}

sws_int_t
sws_ups_zone_init(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf)
{
    sws_http_upstream_srv_t **ups = umcf->upstreams.elts;
    sws_ups_zone_head_t      *head;
    sws_ups_shared_t         *sh;
    sws_uint_t                i, j, k = 0;
    uint64_t                  sig = 1469598103934665603ULL;
    u_char                    name[32];
    sws_str_t                 zname;
    size_t                    size;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        sig = (sig ^ sws_hash_key(ups[i]->name.data, ups[i]->name.len)) * 1099511628211ULL;
        for (j = 0; j < ups[i]->npeers; j++) {
            sig = (sig ^ sws_hash_key(ups[i]->peers[j].name.data, ups[i]->peers[j].name.len))
                  * 1099511628211ULL;
        }
    }
    zname.data = name;
    zname.len = (size_t) (sws_slprintf(name, name + sizeof(name), "upstream:%016llx",
                                       (unsigned long long) sig) - name);
    size = SWS_UPS_ZONE_HEAD + umcf->npeers * sizeof(sws_ups_shared_t);

    umcf->zone = sws_shm_zone_add(cf, &zname, size, sws_ups_zone_init_cb,
                                  &sws_http_upstream_module);
    if (umcf->zone == NULL) {
        return SWS_ERROR;
    }
    head = (sws_ups_zone_head_t *) umcf->zone->addr;
    head->npeers = (uint32_t) umcf->npeers;
    head->signature = sig;
    sh = (sws_ups_shared_t *) (umcf->zone->addr + SWS_UPS_ZONE_HEAD);
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        for (j = 0; j < ups[i]->npeers; j++) {
            ups[i]->peers[j].sh = &sh[k++];
        }
    }
    return SWS_OK;
}

void
sws_ups_stats_set_main(sws_http_upstream_main_conf_t *umcf)
{
    sws_ups_stats_main = umcf;
}

/* ---- attempts ---- */

void
sws_ups_stats_attempt_start(sws_http_upstream_t *u)
{
    sws_ups_shared_t *sh = u->peer->sh;

    u->attempt_open = 1;
    if (sh) {
        sws_ups_atomic_add(&sh->requests, 1);
        sws_ups_atomic_add(&sh->active, 1);
    }
}

void
sws_ups_stats_attempt_end(sws_http_upstream_t *u, int failed)
{
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];
    sws_ups_shared_t            *sh = u->peer->sh;
    sws_msec_t                   ms = sws_current_msec() - u->attempt_msec;

    if (!u->attempt_open) {
        return;
    }
    u->attempt_open = 0;
    if (a->response_ms < 0) {
        a->response_ms = ms;
    }
    sws_ups_peer_done(u->peer, failed, u->r->log);
    if (sh == NULL) {
        return;
    }
    sws_ups_atomic_sub(&sh->active, 1);
    if (failed) {
        sws_ups_atomic_add(&sh->failures, 1);
    }
    if (a->header_ms >= 0 && a->status >= 100 && a->status < 600) {
        sws_ups_atomic_add(&sh->responses, 1);
        sws_ups_atomic_add(&sh->status[a->status / 100 - 1], 1);
        sws_ups_atomic_add(&sh->response_ms, (uint64_t) (ms > 0 ? ms : 0));
    }
}

/* ---- the admin module's view ---- */

sws_uint_t
sws_http_upstream_stats_count(void)
{
    return sws_ups_stats_main ? sws_ups_stats_main->npeers : 0;
}

sws_int_t
sws_http_upstream_stats_get(sws_uint_t i, sws_http_upstream_stats_t *st)
{
    sws_http_upstream_main_conf_t  *umcf = sws_ups_stats_main;
    sws_http_upstream_srv_t       **ups;
    sws_http_upstream_peer_t       *p;
    sws_ups_shared_t               *sh;
    sws_uint_t                      g, k;

    if (umcf == NULL || i >= umcf->npeers) {
        return SWS_ERROR;
    }
    ups = umcf->upstreams.elts;
    for (g = 0; i >= ups[g]->npeers; g++) {
        i -= ups[g]->npeers;
    }
    p = &ups[g]->peers[i];
    sh = p->sh;
    sws_memzero(st, sizeof(*st));
    st->upstream = ups[g]->name;
    st->server = p->server;
    st->addr = p->name;
    st->weight = (sws_uint_t) p->weight;
    st->backup = p->backup;
    st->state = sws_ups_peer_state(p);
    if (sh) {
        st->requests = sws_ups_atomic_load(&sh->requests);
        st->responses = sws_ups_atomic_load(&sh->responses);
        st->failures = sws_ups_atomic_load(&sh->failures);
        st->active = sws_ups_atomic_load(&sh->active);
        st->response_time_ms = sws_ups_atomic_load(&sh->response_ms);
        for (k = 0; k < 5; k++) {
            st->status[k] = sws_ups_atomic_load(&sh->status[k]);
        }
        st->health_checks = sws_ups_atomic_load(&sh->hc_checks);
        st->health_fails = sws_ups_atomic_load(&sh->hc_failed);
    }
    return SWS_OK;
}
