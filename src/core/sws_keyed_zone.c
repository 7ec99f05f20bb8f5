/*
 * Keyed shared zones (see sws_keyed_zone.h). A zone is a slab pool whose
 * root is a hash table of records and, for evicting zones, their LRU list.
 * A record is the core's header (hash node, LRU node if the zone evicts),
 * then the owner's record_size bytes, then the key. The zones a
 * configuration declares are listed in its cycle, for resolution by name.
 */
#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_shm_internal.h"
#include <scalws/sws_keyed_zone.h>
#include <scalws/sws_slab.h>
#include <scalws/sws_status.h>      /* sws_status_slot */

#define SWS_KEYED_ZONE_MIN  32768        /* eight pages of 4 KiB, as nginx */

struct sws_keyed_zone_s {
    const sws_keyed_zone_type_t  *type;
    sws_str_t                     name;
    sws_str_t                     key;
    size_t                        size;
    void                         *data;
    sws_shm_zone_t               *shm;
    sws_slab_pool_t              *pool;
    struct sws_keyed_zone_sh_s   *sh;       /* the pool's root, in the zone */
    void                         *mutex;    /* the zone's lock */
    size_t                        head;     /* the core's header of a record */
    size_t                        body;     /* the owner's part, 8-aligned */
    const char                   *file;     /* the declaration */
    sws_uint_t                    line;
};

/* A worker's row of outcome counters: a cache line of its own. */
typedef struct {
    uint64_t  n[SWS_KEYED_ZONE_COUNTERS];
} sws_keyed_zone_row_t;

/* One row per worker index and generation parity: the old and the new
 * workers of one index run side by side during a reload. */
#define SWS_KEYED_ZONE_ROWS  SWS_STATUS_SLOTS

/* The zone's root, in the zone. */
typedef struct sws_keyed_zone_sh_s {
    sws_slab_hash_t       *hash;
    sws_slab_lru_t         lru;
    sws_keyed_zone_row_t  *rows;    /* SWS_KEYED_ZONE_ROWS, or NULL: no counters */
} sws_keyed_zone_sh_t;

typedef struct {
    sws_slab_hash_node_t  hash;
    sws_slab_lru_node_t   lru;        /* evicting zones only */
} sws_keyed_zone_head_t;


/* ---- configuration ---------------------------------------------------- */

sws_int_t
sws_keyed_zone_parse(sws_conf_t *cf, const sws_str_t *spec, sws_str_t *name, size_t *size)
{
    u_char    *colon = memchr(spec->data, ':', spec->len);
    sws_str_t  s;
    ssize_t    n = SWS_ERROR;

    if (colon && colon != spec->data) {
        s.data = colon + 1;
        s.len = spec->len - (size_t) (colon - spec->data) - 1;
        n = sws_parse_size(&s);
    }
    if (n == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid zone size \"%.*s\"",
                           (int) spec->len, spec->data);
        return SWS_ERROR;
    }
    if (n < SWS_KEYED_ZONE_MIN) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "zone \"%.*s\" is too small",
                           (int) spec->len, spec->data);
        return SWS_ERROR;
    }
    name->data = spec->data;
    name->len = (size_t) (colon - spec->data);
    *size = (size_t) n;
    return SWS_OK;
}

static sws_keyed_zone_t *
sws_keyed_zone_find(sws_cycle_t *cycle, const sws_keyed_zone_type_t *type,
    const sws_str_t *name)
{
    sws_keyed_zone_t **all;
    sws_uint_t         i;

    if (cycle->keyed_zones == NULL) {
        return NULL;
    }
    all = cycle->keyed_zones->elts;
    for (i = 0; i < cycle->keyed_zones->nelts; i++) {
        if (all[i]->type->tag == type->tag && sws_str_eq(&all[i]->name, name)) {
            return all[i];
        }
    }
    return NULL;
}

sws_keyed_zone_t *
sws_keyed_zone_get(sws_conf_t *cf, const sws_keyed_zone_type_t *type, const sws_str_t *name)
{
    return sws_keyed_zone_find(cf->cycle, type, name);
}

static sws_int_t
sws_keyed_zone_init(sws_shm_zone_t *shm, void *old_data)
{
    sws_slab_pool_t      *pool = sws_slab_init(shm, old_data);
    sws_keyed_zone_sh_t  *sh;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool) != NULL) {
        return SWS_OK;            /* a reload kept the zone: its records go on */
    }
    sws_slab_lock(pool);
    sh = sws_slab_calloc_locked(pool, sizeof(sws_keyed_zone_sh_t));
    if (sh) {
        sh->hash = sws_slab_hash_create_locked(pool, (sws_uint_t) (shm->size / 256));
        sws_slab_lru_init(&sh->lru);
        sws_slab_set_data(pool, sh->hash ? sh : NULL);
    }
    sws_slab_unlock(pool);
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

sws_keyed_zone_t *
sws_keyed_zone_add(sws_conf_t *cf, const sws_keyed_zone_type_t *type, const sws_str_t *name,
    size_t size, const sws_str_t *key, void *data)
{
    sws_cycle_t       *cycle = cf->cycle;
    sws_keyed_zone_t  *z, **zp;
    sws_str_t          shm_name;
    size_t             n;

    z = sws_keyed_zone_find(cycle, type, name);
    if (z && z->size != size) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "the size %zu of shared memory zone \"%.*s\" "
                           "conflicts with already declared size %zu",
                           size, (int) name->len, name->data, z->size);
        return NULL;
    }
    if (z) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s \"%.*s\" is already bound to key "
                           "\"%.*s\" (in %s:%lu)", type->directive,
                           (int) name->len, name->data, (int) z->key.len, z->key.data,
                           z->file, (unsigned long) z->line);
        return NULL;
    }

    if (cycle->keyed_zones == NULL) {
        cycle->keyed_zones = sws_array_create(cf->pool, 4, sizeof(sws_keyed_zone_t *));
        if (cycle->keyed_zones == NULL) {
            return NULL;
        }
    }
    z = sws_pcalloc(cf->pool, sizeof(sws_keyed_zone_t));
    if (z == NULL) {
        return NULL;
    }
    z->type = type;
    z->size = size;
    z->data = data;
    z->file = sws_conf_file(cf);
    z->line = sws_conf_line(cf);
    z->head = sws_align(type->evict ? sizeof(sws_keyed_zone_head_t)
                                    : sizeof(sws_slab_hash_node_t), 8);
    z->body = sws_align(type->record_size, 8);
    z->name.data = sws_pstrdup(cf->pool, name);
    z->name.len = name->len;
    z->key.data = sws_pstrdup(cf->pool, key);
    z->key.len = key->len;
    /* In the shared memory, "TYPE:NAME": each module has names of its own. */
    n = strlen(type->name);
    shm_name.len = n + 1 + name->len;
    shm_name.data = sws_pnalloc(cf->pool, shm_name.len);
    if (z->name.data == NULL || z->key.data == NULL || shm_name.data == NULL) {
        return NULL;
    }
    memcpy(shm_name.data, type->name, n);
    shm_name.data[n] = ':';
    memcpy(shm_name.data + n + 1, name->data, name->len);

    z->shm = sws_shm_zone_add(cf, &shm_name, size, sws_keyed_zone_init, type->tag);
    if (z->shm == NULL) {
        return NULL;
    }
    z->pool = z->shm->data;
    z->sh = sws_slab_data(z->pool);
    z->mutex = sws_shm_zone_mutex(z->shm);
    if (type->counters && z->sh->rows == NULL) {
        /* the zone's first configuration (a reload keeps the rows) */
        sws_slab_lock(z->pool);
        z->sh->rows = sws_slab_calloc_locked(z->pool, sizeof(sws_keyed_zone_row_t)
                                                      * SWS_KEYED_ZONE_ROWS);
        sws_slab_unlock(z->pool);
        if (z->sh->rows == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "zone \"%.*s\" is too small",
                               (int) name->len, name->data);
            return NULL;
        }
    }
    zp = sws_array_push(cycle->keyed_zones);
    if (zp == NULL) {
        return NULL;
    }
    *zp = z;
    return z;
}

sws_int_t
sws_keyed_zone_use(sws_conf_t *cf, sws_keyed_zone_ref_t *ref, const sws_str_t *name)
{
    ref->name.data = sws_pstrdup(cf->pool, name);
    ref->name.len = name->len;
    ref->zone = NULL;
    ref->file = sws_conf_file(cf);
    ref->line = sws_conf_line(cf);
    return ref->name.data ? SWS_OK : SWS_ERROR;
}

sws_int_t
sws_keyed_zone_resolve(sws_conf_t *cf, const sws_keyed_zone_type_t *type, sws_array_t *uses)
{
    sws_keyed_zone_ref_t  *ref;
    sws_uint_t             i;

    for (i = 0; uses && i < uses->nelts; i++) {
        ref = (sws_keyed_zone_ref_t *) ((u_char *) uses->elts + i * uses->size);
        if (ref->zone == NULL) {
            ref->zone = sws_keyed_zone_find(cf->cycle, type, &ref->name);
            ref->data = ref->zone ? ref->zone->data : NULL;
        }
        if (ref->zone == NULL) {
            /* nginx's words: a zone named but never declared has no size */
            sws_log_error(SWS_LOG_EMERG, cf->log, 0, "zero size shared memory zone "
                          "\"%.*s\" in %s:%lu", (int) ref->name.len, ref->name.data,
                          ref->file, (unsigned long) ref->line);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

sws_keyed_zone_limits_t *
sws_keyed_zone_limits_create(sws_conf_t *cf)
{
    sws_keyed_zone_limits_t *conf = sws_pcalloc(cf->pool, sizeof(sws_keyed_zone_limits_t));

    if (conf) {
        conf->status = SWS_UNSET;
        conf->log_level = SWS_UNSET_UINT;
        conf->dry_run = SWS_UNSET;
    }
    return conf;
}

void *
sws_keyed_zone_limits_add(sws_conf_t *cf, sws_keyed_zone_limits_t *conf, size_t size,
    const sws_str_t *name, char **err)
{
    sws_keyed_zone_ref_t  *ref;
    sws_uint_t             i;

    *err = SWS_CONF_ERROR;
    if (conf->uses == NULL) {
        conf->uses = sws_array_create(cf->pool, 2, size);
        if (conf->uses == NULL) {
            return NULL;
        }
    }
    for (i = 0; i < conf->uses->nelts; i++) {
        ref = (sws_keyed_zone_ref_t *) ((u_char *) conf->uses->elts + i * size);
        if (sws_str_eq(&ref->name, name)) {
            *err = "is duplicate";
            return NULL;
        }
    }
    ref = sws_array_push(conf->uses);
    if (ref == NULL) {
        return NULL;
    }
    sws_memzero(ref, size);
    return sws_keyed_zone_use(cf, ref, name) == SWS_OK ? ref : NULL;
}

char *
sws_keyed_zone_limits_merge(sws_conf_t *cf, const sws_keyed_zone_type_t *type,
    sws_keyed_zone_limits_t *prev, sws_keyed_zone_limits_t *conf)
{
    /* The uses name zones declared anywhere in the block: known now. */
    if (sws_keyed_zone_resolve(cf, type, prev->uses) != SWS_OK
        || sws_keyed_zone_resolve(cf, type, conf->uses) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    sws_conf_merge_ptr_value(conf->uses, prev->uses, NULL);
    sws_conf_merge_value(conf->status, prev->status, 503);     /* Service Unavailable */
    sws_conf_merge_uint_value(conf->log_level, prev->log_level, SWS_LOG_ERR);
    sws_conf_merge_value(conf->dry_run, prev->dry_run, 0);
    return SWS_CONF_OK;
}

const sws_str_t *
sws_keyed_zone_name(sws_keyed_zone_t *zone)
{
    return &zone->name;
}

void *
sws_keyed_zone_data(sws_keyed_zone_t *zone)
{
    return zone->data;
}

const sws_keyed_zone_type_t *
sws_keyed_zone_type(sws_keyed_zone_t *zone)
{
    return zone->type;
}

sws_keyed_zone_t *
sws_keyed_zone_at(sws_cycle_t *cycle, sws_uint_t i)
{
    if (cycle->keyed_zones == NULL || i >= cycle->keyed_zones->nelts) {
        return NULL;
    }
    return ((sws_keyed_zone_t **) cycle->keyed_zones->elts)[i];
}


/* ---- outcome counters ------------------------------------------------- */

uint64_t *
sws_keyed_zone_counters(sws_keyed_zone_t *zone)
{
    sws_keyed_zone_row_t  *rows = zone->sh->rows;

    if (rows == NULL) {
        return NULL;
    }
    return rows[sws_status_slot()].n;
}

void
sws_keyed_zone_counters_sum(sws_keyed_zone_t *zone, uint64_t *sum, sws_uint_t n)
{
    sws_keyed_zone_row_t  *rows = zone->sh->rows;
    sws_uint_t             i, k;

    for (k = 0; k < n; k++) {
        sum[k] = 0;
        for (i = 0; rows && k < SWS_KEYED_ZONE_COUNTERS && i < SWS_KEYED_ZONE_ROWS; i++) {
            sum[k] += __atomic_load_n(&rows[i].n[k], __ATOMIC_RELAXED);
        }
    }
}


/* ---- records ---------------------------------------------------------- */

/* (The functions below are on the requests' path: they reach the
 * zone's root and lock directly, not through the slab's accessors.) */

void
sws_keyed_zone_lock(sws_keyed_zone_t *zone)
{
    sws_shm_mutex_lock(zone->mutex);
}

void
sws_keyed_zone_unlock(sws_keyed_zone_t *zone)
{
    sws_shm_mutex_unlock(zone->mutex);
}

void *
sws_keyed_zone_lookup(sws_keyed_zone_t *zone, const u_char *key, size_t len)
{
    sws_slab_hash_node_t  *hn = sws_slab_hash_find(zone->sh->hash, key, len);

    return hn ? (u_char *) hn + zone->head : NULL;
}

void *
sws_keyed_zone_insert(sws_keyed_zone_t *zone, const u_char *key, size_t len)
{
    sws_keyed_zone_sh_t    *sh = zone->sh;
    size_t                  rsize = zone->head + zone->body, i;
    sws_keyed_zone_head_t  *h, *gone;
    sws_slab_lru_node_t    *old;
    u_char                 *copy;
    uint64_t               *body;

    while ((h = sws_slab_alloc_locked(zone->pool, rsize + len)) == NULL
           && zone->type->evict && (old = sws_slab_lru_oldest(&sh->lru)) != NULL)
    {
        gone = sws_slab_lru_entry(old, sws_keyed_zone_head_t, lru);
        sws_slab_lru_remove(&sh->lru, old);
        sws_slab_hash_remove(sh->hash, &gone->hash);
        sws_slab_free_locked(zone->pool, gone);
    }
    if (h == NULL) {
        return NULL;
    }
    body = (uint64_t *) ((u_char *) h + zone->head);
    for (i = 0; i < zone->body / 8; i++) {
        body[i] = 0;                    /* a few words: cheaper than memset */
    }
    copy = (u_char *) h + rsize;
    memcpy(copy, key, len);
    sws_slab_hash_insert(sh->hash, &h->hash, copy, len);
    if (zone->type->evict) {
        sws_slab_lru_insert(&sh->lru, &h->lru);
    }
    return (u_char *) h + zone->head;
}

void
sws_keyed_zone_touch(sws_keyed_zone_t *zone, void *record)
{
    sws_keyed_zone_sh_t    *sh = zone->sh;
    sws_keyed_zone_head_t  *h = (sws_keyed_zone_head_t *) ((u_char *) record - zone->head);

    if (zone->type->evict) {
        sws_slab_lru_touch(&sh->lru, &h->lru);
    }
}

void
sws_keyed_zone_delete(sws_keyed_zone_t *zone, void *record)
{
    sws_keyed_zone_sh_t    *sh = zone->sh;
    sws_keyed_zone_head_t  *h = (sws_keyed_zone_head_t *) ((u_char *) record - zone->head);

    if (zone->type->evict) {
        sws_slab_lru_remove(&sh->lru, &h->lru);
    }
    sws_slab_hash_remove(sh->hash, &h->hash);
    sws_slab_free_locked(zone->pool, h);
}

sws_uint_t
sws_keyed_zone_count(sws_keyed_zone_t *zone)
{
    sws_keyed_zone_sh_t *sh = zone->sh;

    return sws_slab_hash_count(sh->hash);
}
