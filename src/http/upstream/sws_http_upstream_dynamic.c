/*
 * Server lists that change at run time: servers added (an application
 * process that started, the admin API), drained, removed, weighted, and
 * every worker sees it. Each group has one list in a slab zone of its own
 * ("upstream-list:..."): a slot per configured server, then dynamic_servers
 * free slots. A slot holds the server's state, weight and address; a change
 * takes the zone's lock and bumps the list's version.
 *
 * A worker keeps its own peers (round robin weights, connection counts and
 * keep-alive pools are per worker, without a lock) and brings them up to
 * date when it chooses a server and the version moved: one atomic load on
 * the request path when nothing changed. Peer i mirrors slot i, so the
 * indices (the tried bitmap, the stats of a slot) stay valid. A slot that
 * gets another address bumps its generation: the workers drop their idle
 * connections to the old one. A drained or removed server is only "down":
 * requests already on it finish.
 *
 * A reload seeds the lists from the configuration again; a list whose
 * group kept its servers is reused in place (the zone is named after them).
 */
#include <stdlib.h>
#include <sys/un.h>
#include <netinet/in.h>
#include "sws_http_upstream.h"

#define SWS_UPS_SLOT_FREE   0         /* removed, or never used */
#define SWS_UPS_SLOT_UP     1
#define SWS_UPS_SLOT_DRAIN  2

#define SWS_UPS_WEIGHT_MAX  1000

typedef struct {
    uint32_t                 state;
    uint32_t                 weight;
    uint32_t                 gen;         /* bumped when the address changes */
    socklen_t                socklen;
    struct sockaddr_storage  sockaddr;
    uint32_t                 name_len;
    u_char                   name[SWS_UPS_NAME_LEN];
    sws_ups_shared_t         sh;          /* an added server's health and counters */
} sws_ups_slot_t;

struct sws_ups_list_s {
    sws_slab_hash_node_t     hash;        /* by the group's name */
    uint64_t                 version;
    sws_slab_pool_t         *pool;
    uint32_t                 nconf;       /* slots of configured servers */
    uint32_t                 nslots;
    sws_ups_slot_t          *slots;
    u_char                   key[];       /* the group's name */
};

/* ---- configuration (in the master) ---- */

static sws_int_t
sws_ups_list_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_slab_pool_t *pool = sws_slab_init(zone, old_data);
    sws_slab_hash_t *hash;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool) == NULL) {
        sws_slab_lock(pool);
        hash = sws_slab_hash_create_locked(pool, 64);
        sws_slab_set_data(pool, hash);
        sws_slab_unlock(pool);
    }
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

/* The group's list: the previous configuration's if it has the same
 * slots, else a new one. The caller holds the lock. */
static sws_ups_list_t *
sws_ups_list_get(sws_slab_pool_t *pool, sws_http_upstream_srv_t *us)
{
    sws_slab_hash_t      *hash = sws_slab_data(pool);
    sws_slab_hash_node_t *node;
    sws_ups_list_t       *l;

    node = sws_slab_hash_find(hash, us->name.data, us->name.len);
    if (node) {
        l = sws_slab_hash_entry(node, sws_ups_list_t, hash);
        if (l->nslots == us->nall && l->nconf == us->npeers) {
            return l;
        }
        /* Old workers may still read it: it stays, out of the table. */
        sws_slab_hash_remove(hash, node);
    }
    l = sws_slab_calloc_locked(pool, sizeof(sws_ups_list_t) + us->name.len);
    if (l == NULL) {
        return NULL;
    }
    l->slots = sws_slab_calloc_locked(pool, us->nall * sizeof(sws_ups_slot_t));
    if (l->slots == NULL) {
        sws_slab_free_locked(pool, l);
        return NULL;
    }
    l->pool = pool;
    l->nslots = (uint32_t) us->nall;
    l->nconf = (uint32_t) us->npeers;
    memcpy(l->key, us->name.data, us->name.len);
    sws_slab_hash_insert(hash, &l->hash, l->key, us->name.len);
    return l;
}

static void
sws_ups_slot_set_addr(sws_ups_slot_t *sl, const struct sockaddr_storage *sa, socklen_t len)
{
    memcpy(&sl->sockaddr, sa, len);
    sl->socklen = len;
    sl->name_len = (uint32_t) sws_ups_addr_format(sa, (char *) sl->name, sizeof(sl->name));
}

sws_int_t
sws_ups_dyn_init(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf)
{
    sws_http_upstream_srv_t **ups = umcf->upstreams.elts, *us;
    sws_http_upstream_peer_t *p;
    sws_shm_zone_t           *zone;
    sws_slab_pool_t          *pool;
    sws_ups_list_t           *l;
    sws_ups_slot_t           *sl;
    sws_uint_t                i, j;
    uint64_t                  sig = 1469598103934665603ULL;
    size_t                    size = 64 * 1024;
    u_char                    name[40];
    sws_str_t                 zname;

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        us = ups[i];
        sig = (sig ^ sws_hash_key(us->name.data, us->name.len)) * 1099511628211ULL;
        sig = (sig ^ us->ndynamic) * 1099511628211ULL;
        for (j = 0; j < us->npeers; j++) {
            sig = (sig ^ sws_hash_key(us->peers[j].name.data, us->peers[j].name.len))
                  * 1099511628211ULL;
        }
        /* Twice what it takes: a reload with other slots makes a new one. */
        size += 2 * sws_align(sizeof(sws_ups_list_t) + us->name.len + 64
                              + us->nall * sizeof(sws_ups_slot_t), 4096);
    }
    zname.data = name;
    zname.len = (size_t) (sws_slprintf(name, name + sizeof(name), "upstream-list:%016llx",
                                       (unsigned long long) sig) - name);
    zone = sws_shm_zone_add(cf, &zname, sws_align(size, 4096), sws_ups_list_zone_init,
                            &sws_http_upstream_module);
    if (zone == NULL) {
        return SWS_ERROR;
    }
    pool = zone->data;

    sws_slab_lock(pool);
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        us = ups[i];
        l = sws_ups_list_get(pool, us);
        if (l == NULL) {
            sws_slab_unlock(pool);
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no room for the server list of "
                               "upstream \"%.*s\"", (int) us->name.len, us->name.data);
            return SWS_ERROR;
        }
        for (j = 0; j < us->nall; j++) {
            p = &us->peers[j];
            sl = &l->slots[j];
            if (!p->dynamic) {
                sl->state = p->down ? SWS_UPS_SLOT_FREE : SWS_UPS_SLOT_UP;
                sl->weight = (uint32_t) p->weight;
                sws_ups_slot_set_addr(sl, &p->sockaddr, p->socklen);
                continue;
            }
            /* Free again; the generation tells the workers of an old
             * configuration still reading it that the address went. */
            sl->state = SWS_UPS_SLOT_FREE;
            sl->weight = 0;
            sl->gen++;
            p->gen = sl->gen;
            p->sh = &sl->sh;
        }
        us->list = l;
        us->list_version = __atomic_add_fetch(&l->version, 1, __ATOMIC_RELEASE);
    }
    sws_slab_unlock(pool);
    return SWS_OK;
}

/* ---- a worker's view ---- */

void
sws_ups_dyn_sync(sws_http_upstream_srv_t *us)
{
    sws_ups_list_t           *l = us->list;
    sws_http_upstream_peer_t *p;
    sws_ups_slot_t           *sl;
    sws_ups_point_t          *ring, *old = NULL;
    sws_uint_t                i, live = 0, used = us->npeers;
    sws_int_t                 w;
    uint64_t                  v;
    int                       moved = 0;

    v = __atomic_load_n(&l->version, __ATOMIC_ACQUIRE);
    if (v == us->list_version) {
        return;
    }
    sws_slab_lock(l->pool);
    v = l->version;
    for (i = 0; i < us->nall && i < l->nslots; i++) {
        p = &us->peers[i];
        sl = &l->slots[i];
        if (p->dynamic && p->gen != sl->gen) {
            /* Another server in this slot: nothing of the old one is kept. */
            sws_ups_ka_drop_peer(us, p);
            memcpy(&p->sockaddr, &sl->sockaddr, sizeof(p->sockaddr));
            p->socklen = sl->socklen;
            memcpy(p->text, sl->name, sl->name_len);
            p->name.data = p->text;
            p->name.len = sl->name_len;
            p->server = p->name;
            p->host = p->name;
            p->gen = sl->gen;
            p->weight = -1;            /* set below */
        }
        w = (sws_int_t) sl->weight;
        if (p->weight != w) {
            p->weight = p->effective_weight = w;
            p->current_weight = 0;
            moved = 1;
        }
        if (p->down != (sl->state != SWS_UPS_SLOT_UP)) {
            p->down = sl->state != SWS_UPS_SLOT_UP;
            moved = 1;
        }
        if (sl->state != SWS_UPS_SLOT_FREE) {
            live++;
            if (i >= used) {
                used = i + 1;
            }
        }
    }
    sws_slab_unlock(l->pool);
    us->nlive = live;
    us->nused = used;
    us->list_version = v;

    if (moved && us->method == SWS_UPS_HASH && us->consistent) {
        /* The ring of the configuration is in its pool; later ones are ours. */
        ring = malloc(sws_max(sws_ups_ring_size(us), 1) * sizeof(sws_ups_point_t));
        if (ring) {
            if (us->ring_heap) {
                old = us->ring;
            }
            sws_ups_ring_fill(us, ring);
            us->ring_heap = 1;
            free(old);
        }
    }
}

/* ---- the SDK ---- */

static int
sws_ups_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    const struct sockaddr_in  *a4 = (const void *) a, *b4 = (const void *) b;
    const struct sockaddr_in6 *a6 = (const void *) a, *b6 = (const void *) b;

    if (a->ss_family != b->ss_family) {
        return 0;
    }
    switch (a->ss_family) {
    case AF_INET:
        return a4->sin_port == b4->sin_port && a4->sin_addr.s_addr == b4->sin_addr.s_addr;
    case AF_INET6:
        return a6->sin6_port == b6->sin6_port
               && memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr)) == 0;
    default:
        return strcmp(((const struct sockaddr_un *) a)->sun_path,
                      ((const struct sockaddr_un *) b)->sun_path) == 0;
    }
}

/* The group's list and the slot of addr in it (NULL: none). SWS_OK,
 * SWS_DECLINED (no such group), SWS_ERROR (not an address). */
static sws_int_t
sws_ups_dyn_find(const sws_str_t *upstream, const sws_str_t *addr, sws_ups_list_t **list,
    struct sockaddr_storage *sa, socklen_t *salen, sws_ups_slot_t **slot)
{
    sws_http_upstream_main_conf_t  *umcf = sws_http_upstream_main();
    sws_http_upstream_srv_t       **ups, *us = NULL;
    sws_ups_list_t                 *l;
    sws_str_t                       host;
    const char                     *err;
    sws_uint_t                      i;

    if (umcf == NULL) {
        return SWS_DECLINED;
    }
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (sws_str_caseeq(&ups[i]->name, upstream) && ups[i]->list) {
            us = ups[i];
            break;
        }
    }
    if (us == NULL) {
        return SWS_DECLINED;
    }
    if (addr->len == 0
        || sws_ups_parse_literal(addr, us->defined ? 80 : us->port, sa, salen, &host, &err)
           != 1)
    {
        return SWS_ERROR;
    }
    l = us->list;
    *list = l;
    *slot = NULL;
    for (i = 0; i < l->nslots; i++) {
        if (l->slots[i].socklen && sws_ups_same_addr(&l->slots[i].sockaddr, sa)) {
            *slot = &l->slots[i];
            break;
        }
    }
    return SWS_OK;
}

static void
sws_ups_dyn_changed(sws_ups_list_t *l)
{
    __atomic_add_fetch(&l->version, 1, __ATOMIC_RELEASE);
}

sws_int_t
sws_http_upstream_server_add(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight)
{
    sws_ups_list_t          *l;
    sws_ups_slot_t          *sl;
    struct sockaddr_storage  sa;
    socklen_t                salen;
    sws_uint_t               i;
    sws_int_t                rc;

    if (weight < 1 || weight > SWS_UPS_WEIGHT_MAX) {
        return SWS_ERROR;
    }
    rc = sws_ups_dyn_find(upstream, addr, &l, &sa, &salen, &sl);
    if (rc != SWS_OK) {
        return rc;
    }
    sws_slab_lock(l->pool);
    if (sl == NULL || (sl->state == SWS_UPS_SLOT_FREE && sl >= &l->slots[l->nconf])) {
        /* A new server (or an added one that was removed): a free slot of
         * the room for them, with counters of its own. */
        sl = NULL;
        for (i = l->nconf; i < l->nslots; i++) {
            if (l->slots[i].state == SWS_UPS_SLOT_FREE) {
                sl = &l->slots[i];
                break;
            }
        }
        if (sl == NULL) {
            sws_slab_unlock(l->pool);
            return SWS_BUSY;
        }
        sws_memzero(&sl->sh, sizeof(sl->sh));
        sws_ups_slot_set_addr(sl, &sa, salen);
        sl->gen++;
    }
    sl->weight = (uint32_t) weight;
    sl->state = SWS_UPS_SLOT_UP;
    sws_ups_dyn_changed(l);
    sws_slab_unlock(l->pool);
    return SWS_OK;
}

/* Drain, remove, weight: a change to a server the list has. */
static sws_int_t
sws_ups_dyn_change(const sws_str_t *upstream, const sws_str_t *addr, uint32_t state,
    sws_uint_t weight)
{
    sws_ups_list_t          *l;
    sws_ups_slot_t          *sl;
    struct sockaddr_storage  sa;
    socklen_t                salen;
    sws_int_t                rc;

    rc = sws_ups_dyn_find(upstream, addr, &l, &sa, &salen, &sl);
    if (rc != SWS_OK) {
        return rc;
    }
    sws_slab_lock(l->pool);
    if (sl == NULL || sl->state == SWS_UPS_SLOT_FREE) {
        sws_slab_unlock(l->pool);
        return SWS_DECLINED;
    }
    if (weight) {
        sl->weight = (uint32_t) weight;
    } else {
        sl->state = state;
    }
    sws_ups_dyn_changed(l);
    sws_slab_unlock(l->pool);
    return SWS_OK;
}

sws_int_t
sws_http_upstream_server_drain(const sws_str_t *upstream, const sws_str_t *addr)
{
    return sws_ups_dyn_change(upstream, addr, SWS_UPS_SLOT_DRAIN, 0);
}

sws_int_t
sws_http_upstream_server_remove(const sws_str_t *upstream, const sws_str_t *addr)
{
    return sws_ups_dyn_change(upstream, addr, SWS_UPS_SLOT_FREE, 0);
}

sws_int_t
sws_http_upstream_server_weight(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight)
{
    if (weight < 1 || weight > SWS_UPS_WEIGHT_MAX) {
        return SWS_ERROR;
    }
    return sws_ups_dyn_change(upstream, addr, 0, weight);
}

sws_int_t
sws_http_upstream_server_info(const sws_str_t *upstream, sws_uint_t i,
    sws_http_upstream_stats_t *st)
{
    sws_http_upstream_main_conf_t  *umcf = sws_http_upstream_main();
    sws_http_upstream_srv_t       **ups, *us = NULL;
    sws_http_upstream_peer_t       *p;
    sws_uint_t                      j;
    uint32_t                        state;

    if (umcf == NULL) {
        return SWS_DECLINED;
    }
    ups = umcf->upstreams.elts;
    for (j = 0; j < umcf->upstreams.nelts; j++) {
        if (sws_str_caseeq(&ups[j]->name, upstream) && ups[j]->list) {
            us = ups[j];
            break;
        }
    }
    if (us == NULL) {
        return SWS_DECLINED;
    }
    sws_ups_dyn_sync(us);              /* this process's peers mirror the list */
    for (j = 0; j < us->nall; j++) {
        p = &us->peers[j];
        state = us->list->slots[j].state;
        if (p->dynamic && state == SWS_UPS_SLOT_FREE) {
            continue;                  /* free room, not a server */
        }
        if (i-- == 0) {
            break;
        }
    }
    if (j == us->nall) {
        return SWS_DECLINED;
    }
    sws_ups_peer_stats(st, &us->name, p);
    if (state == SWS_UPS_SLOT_DRAIN) {
        st->state = "draining";
    }
    return SWS_OK;
}
