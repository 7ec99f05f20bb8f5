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
 * requests already on it finish. A server marked down stays in the list,
 * with its address, weight and counters, until it is brought up again
 * (or removed): down is a state, not a removal.
 *
 * A reload seeds the configured servers' slots from the configuration
 * again and keeps the servers added at run time to a group that is still
 * there by name (sws_ups_dyn_keep): in place when the group kept its
 * configured servers and its room (the zone is named after them), else
 * copied into the new list. A group the configuration dropped drops its
 * list.
 *
 * Handles (sws_http_upstream_list_handle) are indices into a table of this
 * process that names the groups: each entry follows its group by name from
 * one configuration to the next, so that a handle stays good across
 * reloads and costs no name lookup.
 */
#include <stdlib.h>
#include <sys/un.h>
#include <netinet/in.h>
#include "sws_http_upstream.h"

#define SWS_UPS_SLOT_FREE   0         /* removed, or never used */
#define SWS_UPS_SLOT_UP     1
#define SWS_UPS_SLOT_DRAIN  2
#define SWS_UPS_SLOT_DOWN   3         /* marked down: listed, never chosen */

#define SWS_UPS_WEIGHT_MAX  1000

typedef struct {
    uint32_t                 state;
    uint32_t                 weight;
    uint32_t                 gen;         /* bumped when the address changes */
    uint32_t                 resolved;    /* an address of the Nth "server NAME
                                             resolve" line (1-based), 0: not */
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
sws_ups_list_get(sws_slab_pool_t *pool, sws_http_upstream_srv_t *us, int *in_place)
{
    sws_slab_hash_t      *hash = sws_slab_data(pool);
    sws_slab_hash_node_t *node;
    sws_ups_list_t       *l;

    node = sws_slab_hash_find(hash, us->name.data, us->name.len);
    if (node) {
        l = sws_slab_hash_entry(node, sws_ups_list_t, hash);
        if (l->nslots == us->nall && l->nconf == us->npeers) {
            *in_place = 1;
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

/* A server added at run time, carried from the previous configuration's
 * list into the new one. */
typedef struct {
    struct sockaddr_storage  sockaddr;
    socklen_t                socklen;
    uint32_t                 weight;
    uint32_t                 state;
    uint32_t                 resolved;
} sws_ups_kept_t;

static sws_http_upstream_srv_t *sws_ups_dyn_group(sws_http_upstream_main_conf_t *umcf,
    const sws_str_t *name);

/* The run-time servers of the previous configuration's group of the same
 * name (in the master, the running configuration), into *kept (in pool);
 * their number, or SWS_ERROR. */
static sws_int_t
sws_ups_dyn_old(sws_pool_t *pool, sws_http_upstream_srv_t *us, sws_ups_kept_t **keep)
{
    sws_http_upstream_srv_t  *old;
    sws_ups_list_t           *ol;
    sws_ups_slot_t           *sl;
    sws_ups_kept_t           *kept;
    sws_uint_t                i, n = 0, max;

    old = sws_ups_dyn_group(sws_http_upstream_main(), &us->name);
    if (old == NULL || old->list == NULL || old->list->nslots == old->list->nconf) {
        return 0;
    }
    ol = old->list;
    max = ol->nslots - ol->nconf;      /* read without the lock: fixed */
    kept = sws_palloc(pool, max * sizeof(sws_ups_kept_t));
    if (kept == NULL) {
        return SWS_ERROR;
    }
    *keep = kept;
    sws_slab_lock(ol->pool);
    for (i = ol->nconf; i < ol->nslots && n < max; i++) {
        sl = &ol->slots[i];
        if (sl->state != SWS_UPS_SLOT_FREE) {
            memcpy(&kept[n].sockaddr, &sl->sockaddr, sizeof(sl->sockaddr));
            kept[n].socklen = sl->socklen;
            kept[n].weight = sl->weight;
            kept[n].resolved = sl->resolved;
            kept[n].state = sl->state;
            n++;
        }
    }
    sws_slab_unlock(ol->pool);
    return (sws_int_t) n;
}

/* Is the server at sa configured in us? */
static int
sws_ups_dyn_configured(sws_http_upstream_srv_t *us, const struct sockaddr_storage *sa)
{
    sws_uint_t  j;

    for (j = 0; j < us->npeers; j++) {
        if (sws_ups_same_addr(&us->peers[j].sockaddr, sa)) {
            return 1;
        }
    }
    return 0;
}

/* The run-time slots of l for the new configuration (the lock held):
 * reused in place, an added server stays where it is; in a new list the
 * kept ones take the first slots. An added server that the configuration
 * now names itself goes (the configured one stands); one beyond the room
 * goes too, logged. */
static void
sws_ups_dyn_keep(sws_conf_t *cf, sws_http_upstream_srv_t *us, sws_ups_list_t *l,
    int in_place, sws_ups_kept_t *kept, sws_uint_t nkept)
{
    sws_ups_slot_t  *sl;
    sws_uint_t       i, k = 0;
    char             name[SWS_UPS_NAME_LEN];
    uint32_t         nresolving = us->resolving ? (uint32_t) us->resolving->nelts : 0;

    for (i = l->nconf; i < l->nslots; i++) {
        sl = &l->slots[i];
        if (in_place) {
            /* An address of a "resolve" line the configuration no longer
             * has goes; the others stay, for the new worker 0 to go on
             * from (sws_ups_dyn_resolved). */
            if (sl->state != SWS_UPS_SLOT_FREE
                && (sl->resolved > nresolving
                    || sws_ups_dyn_configured(us, &sl->sockaddr)))
            {
                sl->state = SWS_UPS_SLOT_FREE;
                sl->weight = 0;
                sl->gen++;
            }
            continue;
        }
        while (k < nkept && (sws_ups_dyn_configured(us, &kept[k].sockaddr)
                             || kept[k].resolved > nresolving))
        {
            k++;
        }
        if (k == nkept) {
            break;
        }
        sws_ups_slot_set_addr(sl, &kept[k].sockaddr, kept[k].socklen);
        sl->resolved = kept[k].resolved;
        sl->state = kept[k].state;
        sl->weight = kept[k].weight;
        sl->gen++;
        k++;
    }
    for ( ; !in_place && k < nkept; k++) {
        if (!sws_ups_dyn_configured(us, &kept[k].sockaddr) && kept[k].resolved <= nresolving) {
            sws_ups_addr_format(&kept[k].sockaddr, name, sizeof(name));
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "upstream \"%.*s\" has no room for "
                               "server %s added at run time: dropped", (int) us->name.len,
                               us->name.data, name);
        }
    }
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
    sws_ups_kept_t           *kept = NULL;
    sws_uint_t                i, j;
    sws_int_t                 nkept;
    uint64_t                  sig = 1469598103934665603ULL;
    size_t                    size = 64 * 1024;
    u_char                    name[40];
    sws_str_t                 zname;
    int                       in_place;

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

    for (i = 0; i < umcf->upstreams.nelts; i++) {
        us = ups[i];
        /* Read before the list may be reseeded in place. */
        nkept = sws_ups_dyn_old(cf->temp_pool ? cf->temp_pool : cf->pool, us, &kept);
        if (nkept == SWS_ERROR) {
            return SWS_ERROR;
        }
        in_place = 0;

        sws_slab_lock(pool);
        l = sws_ups_list_get(pool, us, &in_place);
        if (l == NULL) {
            sws_slab_unlock(pool);
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no room for the server list of "
                               "upstream \"%.*s\"", (int) us->name.len, us->name.data);
            return SWS_ERROR;
        }
        for (j = 0; j < us->npeers; j++) {
            p = &us->peers[j];
            sl = &l->slots[j];
            /* "down" in the configuration: marked down, in the list */
            sl->state = p->down ? SWS_UPS_SLOT_DOWN : SWS_UPS_SLOT_UP;
            sl->weight = (uint32_t) p->weight;
            sws_ups_slot_set_addr(sl, &p->sockaddr, p->socklen);
        }
        if (!in_place) {
            for (j = us->npeers; j < us->nall; j++) {
                l->slots[j].state = SWS_UPS_SLOT_FREE;
            }
        }
        sws_ups_dyn_keep(cf, us, l, in_place, kept, (sws_uint_t) nkept);
        for (j = us->npeers; j < us->nall; j++) {
            /* The workers of this configuration take each slot's server
             * from the list at their first choice (the generation differs). */
            us->peers[j].gen = l->slots[j].gen - 1;
            us->peers[j].sh = &l->slots[j].sh;
        }
        us->list = l;
        __atomic_add_fetch(&l->version, 1, __ATOMIC_RELEASE);
        us->list_version = 0;          /* synced at the first choice */
        sws_slab_unlock(pool);
    }
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
            /* a server marked down is in the list, as a configured
             * "down" one is out of it: neither takes a try */
            live += sl->state != SWS_UPS_SLOT_DOWN;
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

int
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

/* The group of that name with a run-time list in umcf, or NULL. */
static sws_http_upstream_srv_t *
sws_ups_dyn_group(sws_http_upstream_main_conf_t *umcf, const sws_str_t *name)
{
    sws_http_upstream_srv_t  **ups;
    sws_uint_t                 i;

    if (umcf == NULL) {
        return NULL;
    }
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (sws_str_caseeq(&ups[i]->name, name) && ups[i]->list) {
            return ups[i];
        }
    }
    return NULL;
}

/* The slot of addr in the group's list (NULL: none). SWS_OK, SWS_ERROR
 * (not an address). */
static sws_int_t
sws_ups_dyn_find(sws_http_upstream_srv_t *us, const sws_str_t *addr,
    struct sockaddr_storage *sa, socklen_t *salen, sws_ups_slot_t **slot)
{
    sws_ups_list_t  *l = us->list;
    sws_str_t        host;
    const char      *err;
    sws_uint_t       i;

    if (addr->len == 0
        || sws_ups_parse_literal(addr, us->defined ? 80 : us->port, sa, salen, &host, &err)
           != 1)
    {
        return SWS_ERROR;
    }
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
sws_ups_dyn_add(sws_http_upstream_srv_t *us, const sws_str_t *addr, sws_uint_t weight,
    int resolved)
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
    rc = sws_ups_dyn_find(us, addr, &sa, &salen, &sl);
    if (rc != SWS_OK) {
        return rc;
    }
    l = us->list;
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
        /* New counters, but not the gauges: the workers count the slot's
         * last server's connections (in use, idle) off them as they go. */
        sws_memzero(&sl->sh, offsetof(sws_ups_shared_t, active));
        sws_ups_slot_set_addr(sl, &sa, salen);
        sl->gen++;
        sl->resolved = (uint32_t) resolved;
    } else if (!resolved) {
        sl->resolved = 0;              /* named by hand: no name's to remove */
    }
    sl->weight = (uint32_t) weight;
    sl->state = SWS_UPS_SLOT_UP;
    sws_ups_dyn_changed(l);
    sws_slab_unlock(l->pool);
    return SWS_OK;
}

sws_uint_t
sws_ups_dyn_resolved(sws_http_upstream_srv_t *us, sws_uint_t owner,
    struct sockaddr_storage *out, sws_uint_t max)
{
    sws_ups_list_t  *l = us->list;
    sws_uint_t       i, n = 0;

    if (l == NULL) {
        return 0;
    }
    sws_slab_lock(l->pool);
    for (i = l->nconf; i < l->nslots && n < max; i++) {
        if (l->slots[i].state != SWS_UPS_SLOT_FREE && l->slots[i].resolved == owner) {
            memcpy(&out[n++], &l->slots[i].sockaddr, sizeof(l->slots[i].sockaddr));
        }
    }
    sws_slab_unlock(l->pool);
    return n;
}

/* Drain, down, remove (state), weight (weight, not 0): a change to a
 * server the list has (a removed one is not there; one marked down is). */
static sws_int_t
sws_ups_dyn_change(sws_http_upstream_srv_t *us, const sws_str_t *addr, uint32_t state,
    sws_uint_t weight)
{
    sws_ups_list_t          *l;
    sws_ups_slot_t          *sl;
    struct sockaddr_storage  sa;
    socklen_t                salen;
    sws_int_t                rc;

    if (us == NULL) {
        return SWS_DECLINED;
    }
    rc = sws_ups_dyn_find(us, addr, &sa, &salen, &sl);
    if (rc != SWS_OK) {
        return rc;
    }
    l = us->list;
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

static sws_int_t sws_ups_dyn_info(sws_http_upstream_srv_t *us, sws_uint_t i,
    sws_http_upstream_stats_t *st, size_t size);

/* ---- by name ---- */

sws_int_t
sws_http_upstream_server_add(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight)
{
    sws_http_upstream_srv_t  *us = sws_ups_dyn_group(sws_http_upstream_main(), upstream);

    if (us == NULL) {
        return SWS_DECLINED;
    }
    return sws_ups_dyn_add(us, addr, weight, 0);
}

sws_int_t
sws_http_upstream_server_drain(const sws_str_t *upstream, const sws_str_t *addr)
{
    return sws_ups_dyn_change(sws_ups_dyn_group(sws_http_upstream_main(), upstream), addr,
                              SWS_UPS_SLOT_DRAIN, 0);
}

sws_int_t
sws_http_upstream_server_remove(const sws_str_t *upstream, const sws_str_t *addr)
{
    return sws_ups_dyn_change(sws_ups_dyn_group(sws_http_upstream_main(), upstream), addr,
                              SWS_UPS_SLOT_FREE, 0);
}

sws_int_t
sws_http_upstream_server_weight(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight)
{
    if (weight < 1 || weight > SWS_UPS_WEIGHT_MAX) {
        return SWS_ERROR;
    }
    return sws_ups_dyn_change(sws_ups_dyn_group(sws_http_upstream_main(), upstream), addr, 0,
                              weight);
}

sws_int_t
sws_http_upstream_server_info(const sws_str_t *upstream, sws_uint_t i,
    sws_http_upstream_stats_t *st)
{
    /* A module of ABI 1.6 or older knows the struct up to size. */
    return sws_ups_dyn_info(sws_ups_dyn_group(sws_http_upstream_main(), upstream), i, st,
                            offsetof(sws_http_upstream_stats_t, size));
}

/* ---- by handle ---- */

typedef struct {
    sws_str_t                 name;      /* malloc()ed */
    sws_http_upstream_srv_t  *us;        /* in the running configuration, or NULL */
} sws_ups_handle_t;

static sws_ups_handle_t  *sws_ups_handles;
static sws_uint_t         sws_ups_handles_n;
static sws_uint_t         sws_ups_handles_cap;

/* A new running configuration in this process: each handle follows its
 * group by name (NULL when the group is gone). */
void
sws_ups_dyn_handles_update(sws_http_upstream_main_conf_t *umcf)
{
    sws_uint_t  i;

    for (i = 0; i < sws_ups_handles_n; i++) {
        sws_ups_handles[i].us = sws_ups_dyn_group(umcf, &sws_ups_handles[i].name);
    }
}

sws_int_t
sws_http_upstream_list_handle(const sws_str_t *upstream)
{
    sws_http_upstream_srv_t  *us = sws_ups_dyn_group(sws_http_upstream_main(), upstream);
    sws_ups_handle_t         *hs;
    sws_uint_t                i;
    u_char                   *name;

    if (us == NULL) {
        return SWS_DECLINED;
    }
    for (i = 0; i < sws_ups_handles_n; i++) {
        if (sws_str_caseeq(&sws_ups_handles[i].name, upstream)) {
            return (sws_int_t) i + 1;
        }
    }
    if (sws_ups_handles_n == sws_ups_handles_cap) {
        hs = realloc(sws_ups_handles, (sws_ups_handles_cap * 2 + 8) * sizeof(*hs));
        if (hs == NULL) {
            return SWS_ERROR;
        }
        sws_ups_handles = hs;
        sws_ups_handles_cap = sws_ups_handles_cap * 2 + 8;
    }
    name = malloc(sws_max(upstream->len, 1));
    if (name == NULL) {
        return SWS_ERROR;
    }
    memcpy(name, upstream->data, upstream->len);
    hs = &sws_ups_handles[sws_ups_handles_n++];
    hs->name.data = name;
    hs->name.len = upstream->len;
    hs->us = us;
    return (sws_int_t) sws_ups_handles_n;
}

/* The group behind a handle: SWS_OK, SWS_ERROR (no such handle),
 * SWS_DECLINED (its group is not in the running configuration). */
static sws_int_t
sws_ups_dyn_handle(sws_int_t list, sws_http_upstream_srv_t **us)
{
    if (list < 1 || (sws_uint_t) list > sws_ups_handles_n) {
        return SWS_ERROR;
    }
    *us = sws_ups_handles[list - 1].us;
    return *us ? SWS_OK : SWS_DECLINED;
}

sws_int_t
sws_http_upstream_list_add(sws_int_t list, const sws_str_t *addr, sws_uint_t weight)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    return rc == SWS_OK ? sws_ups_dyn_add(us, addr, weight, 0) : rc;
}

sws_int_t
sws_http_upstream_list_drain(sws_int_t list, const sws_str_t *addr)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    return rc == SWS_OK ? sws_ups_dyn_change(us, addr, SWS_UPS_SLOT_DRAIN, 0) : rc;
}

sws_int_t
sws_http_upstream_list_down(sws_int_t list, const sws_str_t *addr)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    return rc == SWS_OK ? sws_ups_dyn_change(us, addr, SWS_UPS_SLOT_DOWN, 0) : rc;
}

sws_int_t
sws_http_upstream_list_remove(sws_int_t list, const sws_str_t *addr)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    return rc == SWS_OK ? sws_ups_dyn_change(us, addr, SWS_UPS_SLOT_FREE, 0) : rc;
}

sws_int_t
sws_http_upstream_list_weight(sws_int_t list, const sws_str_t *addr, sws_uint_t weight)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    if (rc == SWS_OK && (weight < 1 || weight > SWS_UPS_WEIGHT_MAX)) {
        return SWS_ERROR;
    }
    return rc == SWS_OK ? sws_ups_dyn_change(us, addr, 0, weight) : rc;
}

sws_int_t
sws_http_upstream_list_info(sws_int_t list, sws_uint_t i, sws_http_upstream_stats_t *st)
{
    sws_http_upstream_srv_t  *us;
    sws_int_t                 rc = sws_ups_dyn_handle(list, &us);

    if (rc != SWS_OK) {
        return rc;
    }
    if (st->size < offsetof(sws_http_upstream_stats_t, size)) {
        return SWS_ERROR;
    }
    return sws_ups_dyn_info(us, i, st, st->size);
}

/* The i-th server of us as its list has it now, into st: no more than
 * size bytes of it. */
static sws_int_t
sws_ups_dyn_info(sws_http_upstream_srv_t *us, sws_uint_t i, sws_http_upstream_stats_t *st,
    size_t size)
{
    sws_http_upstream_stats_t   out;
    sws_http_upstream_peer_t   *p;
    sws_uint_t                  j;
    uint32_t                    state;

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
    sws_ups_peer_stats(&out, &us->name, p);
    if (state == SWS_UPS_SLOT_DRAIN) {
        out.state = "draining";
    }
    sws_ups_stats_copy(st, &out, size);
    return SWS_OK;
}
