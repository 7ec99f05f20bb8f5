/*
 * The state every worker shares about every upstream server, in one shared
 * memory zone: passive and active health, and the metrics the admin module
 * reads (requests, failures, responses by class, response time, active
 * connections). Updated with relaxed atomic operations: no lock on the
 * request path. The zone is named after the set of servers, so a reload
 * with the same servers keeps the state and the counters.
 *
 * Each server's record is allocated in the zone's slab and found by its
 * key (group, position, address) in the slab's hash table: a reload finds
 * the records again, and the zone has room for servers added later.
 */
#include "sws_http_upstream.h"

typedef struct {
    sws_slab_hash_node_t  hash;
    sws_ups_shared_t      sh;
    u_char                key[];      /* group NUL index NUL address */
} sws_ups_record_t;

static sws_http_upstream_main_conf_t *sws_ups_stats_main;

static const sws_msec_t  sws_ups_time_bounds[SWS_HTTP_UPSTREAM_TIME_BUCKETS] = {
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000
};

static sws_int_t
sws_ups_zone_init_cb(sws_shm_zone_t *zone, void *old_data)
{
    sws_slab_pool_t *pool = sws_slab_init(zone, old_data);
    sws_slab_hash_t *hash;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool) == NULL) {
        sws_slab_lock(pool);
        hash = sws_slab_hash_create_locked(pool, zone->size / 512);
        sws_slab_set_data(pool, hash);
        sws_slab_unlock(pool);
    }
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

/* The record of a server: the one a previous configuration made, or a
 * new one (zeroed). The caller holds the lock. */
static sws_ups_shared_t *
sws_ups_record(sws_slab_pool_t *pool, sws_http_upstream_srv_t *us, sws_uint_t j)
{
    sws_slab_hash_t      *hash = sws_slab_data(pool);
    sws_slab_hash_node_t *node;
    sws_ups_record_t     *rec;
    u_char                key[512], *p, *last = key + sizeof(key);
    size_t                len;

    p = sws_slprintf(key, last, "%.*s%c%lu%c%.*s", (int) us->name.len, us->name.data, 0,
                     (unsigned long) j, 0, (int) us->peers[j].name.len,
                     us->peers[j].name.data);
    len = (size_t) (p - key);
    node = sws_slab_hash_find(hash, key, len);
    if (node) {
        return &sws_slab_hash_entry(node, sws_ups_record_t, hash)->sh;
    }
    rec = sws_slab_calloc_locked(pool, sizeof(sws_ups_record_t) + len);
    if (rec == NULL) {
        return NULL;
    }
    memcpy(rec->key, key, len);
    sws_slab_hash_insert(hash, &rec->hash, rec->key, len);
    return &rec->sh;
}

sws_int_t
sws_ups_zone_init(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf)
{
    sws_http_upstream_srv_t **ups = umcf->upstreams.elts;
    sws_slab_pool_t          *pool;
    sws_uint_t                i, j;
    uint64_t                  sig = 1469598103934665603ULL;
    u_char                    name[32];
    sws_str_t                 zname;
    size_t                    size = 64 * 1024;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        sig = (sig ^ sws_hash_key(ups[i]->name.data, ups[i]->name.len)) * 1099511628211ULL;
        for (j = 0; j < ups[i]->npeers; j++) {
            sig = (sig ^ sws_hash_key(ups[i]->peers[j].name.data, ups[i]->peers[j].name.len))
                  * 1099511628211ULL;
            /* Twice what the record takes: room for servers added later. */
            size += 2 * sws_align(sizeof(sws_ups_record_t) + ups[i]->name.len
                                  + ups[i]->peers[j].name.len + 24, 64);
        }
    }
    zname.data = name;
    zname.len = (size_t) (sws_slprintf(name, name + sizeof(name), "upstream:%016llx",
                                       (unsigned long long) sig) - name);

    umcf->zone = sws_shm_zone_add(cf, &zname, sws_align(size, 4096), sws_ups_zone_init_cb,
                                  &sws_http_upstream_module);
    if (umcf->zone == NULL) {
        return SWS_ERROR;
    }
    pool = umcf->zone->data;
    sws_slab_lock(pool);
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        for (j = 0; j < ups[i]->npeers; j++) {
            ups[i]->peers[j].sh = sws_ups_record(pool, ups[i], j);
            if (ups[i]->peers[j].sh == NULL) {
                sws_slab_unlock(pool);
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no room for upstream \"%.*s\" "
                                   "in its shared memory zone", (int) ups[i]->name.len,
                                   ups[i]->name.data);
                return SWS_ERROR;
            }
        }
    }
    sws_slab_unlock(pool);
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
    sws_uint_t                   k;

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
        for (k = 0; k < SWS_HTTP_UPSTREAM_TIME_BUCKETS; k++) {
            if (ms <= sws_ups_time_bounds[k]) {
                sws_ups_atomic_add(&sh->time_buckets[k], 1);
                break;
            }
        }
    }
}

/* ---- the admin module's view ---- */

sws_uint_t
sws_http_upstream_stats_count(void)
{
    return sws_ups_stats_main ? sws_ups_stats_main->npeers : 0;
}

/* A server's statistics as the SDK gives them: its configuration and the
 * counters of its shared record. */
void
sws_ups_peer_stats(sws_http_upstream_stats_t *st, const sws_str_t *upstream,
    sws_http_upstream_peer_t *p)
{
    sws_ups_shared_t  *sh = p->sh;
    sws_uint_t         k;

    sws_memzero(st, sizeof(*st));
    st->upstream = *upstream;
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
        st->idle = sws_ups_atomic_load(&sh->idle);
        st->response_time_ms = sws_ups_atomic_load(&sh->response_ms);
        for (k = 0; k < 5; k++) {
            st->status[k] = sws_ups_atomic_load(&sh->status[k]);
        }
        st->health_checks = sws_ups_atomic_load(&sh->hc_checks);
        st->health_fails = sws_ups_atomic_load(&sh->hc_failed);
    }
}

/* Into the caller's struct as far as it knows it (size: its sizeof, or
 * the 1.6 layout for the functions of that SDK): a field appended later
 * never lands outside a module's older, shorter struct. */
void
sws_ups_stats_copy(sws_http_upstream_stats_t *st, sws_http_upstream_stats_t *out, size_t size)
{
    size = sws_min(size, sizeof(*out));
    out->size = size;
    memcpy(st, out, size);
}

/* The i-th server of every group, and its group's name. */
static sws_http_upstream_peer_t *
sws_ups_stats_peer(sws_uint_t i, sws_str_t **group)
{
    sws_http_upstream_main_conf_t  *umcf = sws_ups_stats_main;
    sws_http_upstream_srv_t       **ups;
    sws_uint_t                      g;

    if (umcf == NULL || i >= umcf->npeers) {
        return NULL;
    }
    ups = umcf->upstreams.elts;
    for (g = 0; i >= ups[g]->npeers; g++) {
        i -= ups[g]->npeers;
    }
    *group = &ups[g]->name;
    return &ups[g]->peers[i];
}

static sws_int_t
sws_ups_stats_fill(sws_uint_t i, sws_http_upstream_stats_t *st, size_t size)
{
    sws_http_upstream_peer_t   *p;
    sws_http_upstream_stats_t   out;
    sws_str_t                  *group;

    p = sws_ups_stats_peer(i, &group);
    if (p == NULL) {
        return SWS_ERROR;
    }
    sws_ups_peer_stats(&out, group, p);
    sws_ups_stats_copy(st, &out, size);
    return SWS_OK;
}

sws_int_t
sws_http_upstream_stats_histogram(sws_uint_t i, sws_http_upstream_bucket_t *b, sws_uint_t *n)
{
    sws_http_upstream_peer_t  *p;
    sws_str_t                 *group;
    uint64_t                   sum = 0;
    sws_uint_t                 k;

    p = sws_ups_stats_peer(i, &group);
    if (p == NULL) {
        return SWS_ERROR;
    }
    for (k = 0; k < *n && k < SWS_HTTP_UPSTREAM_TIME_BUCKETS; k++) {
        sum += p->sh ? sws_ups_atomic_load(&p->sh->time_buckets[k]) : 0;
        b[k].le = sws_ups_time_bounds[k];
        b[k].count = sum;
    }
    *n = k;
    return SWS_OK;
}

sws_int_t
sws_http_upstream_stats_get(sws_uint_t i, sws_http_upstream_stats_t *st)
{
    return sws_ups_stats_fill(i, st, offsetof(sws_http_upstream_stats_t, size));
}

sws_int_t
sws_http_upstream_stats_read(sws_uint_t i, sws_http_upstream_stats_t *st)
{
    if (st->size < offsetof(sws_http_upstream_stats_t, size)) {
        return SWS_ERROR;
    }
    return sws_ups_stats_fill(i, st, st->size);
}
