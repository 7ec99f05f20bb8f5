/*
 * Shared memory zones (see <scalws/sws_shm.h>): declared during
 * configuration, mapped by the master after it (MAP_SHARED | MAP_ANONYMOUS,
 * inherited by the workers through fork), taken over by the next cycle on a
 * reload when name, size and tag match.
 */
#include <pthread.h>
#include <unistd.h>
#include <sys/mman.h>
#include "sws_cycle.h"
#include "sws_conf_internal.h"
#include "sws_shm_internal.h"

struct sws_shm_zone_s {
    sws_str_t             name;
    size_t                size;      /* requested (rounded to pages) */
    void                 *tag;
    sws_shm_zone_init_pt  init;
    void                 *ctx;
    void                 *data;
    u_char               *map;       /* the mapping; NULL before */
    size_t                map_size;
    unsigned              owner:1;   /* munmap at cycle end */
};

/* The mapping starts with the lock; the zone's memory follows. */
typedef struct {
    pthread_mutex_t  mutex;
} sws_shm_header_t;

#define SWS_SHM_HEADER  sws_align(sizeof(sws_shm_header_t), 64)

sws_shm_zone_t *
sws_shm_zone_add(sws_conf_t *cf, const sws_str_t *name, size_t size, void *tag)
{
    sws_cycle_t     *cycle = cf->cycle;
    sws_shm_zone_t **zones = cycle->shm_zones.elts, *z, **zp;
    size_t           page = (size_t) sysconf(_SC_PAGESIZE);
    sws_uint_t       i;

    if (size < 8192) {
        size = 8192;
    }
    size = sws_align(size + SWS_SHM_HEADER, page);

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        z = zones[i];
        if (z->name.len != name->len || memcmp(z->name.data, name->data, name->len) != 0) {
            continue;
        }
        if (z->tag != tag) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "the shared memory zone \"%.*s\" is already used by "
                               "another module", (int) name->len, name->data);
            return NULL;
        }
        if (size > z->size) {
            z->size = size;
        }
        return z;
    }

    z = sws_pcalloc(cycle->pool, sizeof(sws_shm_zone_t));
    zp = sws_array_push(&cycle->shm_zones);
    if (z == NULL || zp == NULL) {
        return NULL;
    }
    z->name.data = (u_char *) sws_pstrdup_cstr(cycle->pool, name);
    if (z->name.data == NULL) {
        return NULL;
    }
    z->name.len = name->len;
    z->size = size;
    z->tag = tag;
    *zp = z;
    return z;
}

void
sws_shm_zone_set_init(sws_shm_zone_t *zone, sws_shm_zone_init_pt init, void *ctx)
{
    zone->init = init;
    zone->ctx = ctx;
}

void *sws_shm_zone_addr(sws_shm_zone_t *zone) { return zone->map + SWS_SHM_HEADER; }
size_t sws_shm_zone_size(sws_shm_zone_t *zone) { return zone->map_size - SWS_SHM_HEADER; }
void *sws_shm_zone_ctx(sws_shm_zone_t *zone) { return zone->ctx; }
void *sws_shm_zone_data(sws_shm_zone_t *zone) { return zone->data; }
const sws_str_t *sws_shm_zone_name(sws_shm_zone_t *zone) { return &zone->name; }

void
sws_shm_lock(sws_shm_zone_t *zone)
{
    sws_shm_header_t *h = (sws_shm_header_t *) zone->map;

    if (pthread_mutex_lock(&h->mutex) == EOWNERDEAD) {
        /* A process died holding it: what it protected may be half
         * written, but zones hold caches and counters that tolerate it. */
        pthread_mutex_consistent(&h->mutex);
    }
}

void
sws_shm_unlock(sws_shm_zone_t *zone)
{
    sws_shm_header_t *h = (sws_shm_header_t *) zone->map;

    pthread_mutex_unlock(&h->mutex);
}

static void
sws_shm_zone_cleanup(void *data)
{
    sws_shm_zone_t *z = data;

    if (z->map && z->owner) {
        munmap(z->map, z->map_size);
    }
    z->map = NULL;
}

static sws_shm_zone_t *
sws_shm_find_old(sws_cycle_t *old, sws_shm_zone_t *z)
{
    sws_shm_zone_t **zones;
    sws_uint_t       i;

    if (old == NULL) {
        return NULL;
    }
    zones = old->shm_zones.elts;
    for (i = 0; i < old->shm_zones.nelts; i++) {
        if (zones[i]->map && zones[i]->owner && zones[i]->tag == z->tag
            && zones[i]->map_size == z->size && zones[i]->name.len == z->name.len
            && memcmp(zones[i]->name.data, z->name.data, z->name.len) == 0)
        {
            return zones[i];
        }
    }
    return NULL;
}

static sws_int_t
sws_shm_map(sws_cycle_t *cycle, sws_shm_zone_t *z)
{
    pthread_mutexattr_t  attr;
    sws_shm_header_t    *h;

    z->map = mmap(NULL, z->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (z->map == MAP_FAILED) {
        z->map = NULL;
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno,
                      "mmap() of %zu bytes for the shared memory zone \"%.*s\" failed",
                      z->size, (int) z->name.len, z->name.data);
        return SWS_ERROR;
    }
    z->map_size = z->size;
    z->owner = 1;
    h = (sws_shm_header_t *) z->map;
    if (pthread_mutexattr_init(&attr) != 0
        || pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) != 0
        || pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) != 0
        || pthread_mutex_init(&h->mutex, &attr) != 0)
    {
        sws_log_error(SWS_LOG_EMERG, cycle->log, 0, "cannot create the lock of the shared "
                      "memory zone \"%.*s\"", (int) z->name.len, z->name.data);
        return SWS_ERROR;
    }
    pthread_mutexattr_destroy(&attr);
    return SWS_OK;
}

sws_int_t
sws_shm_map_zones(sws_cycle_t *cycle)
{
    sws_shm_zone_t **zones = cycle->shm_zones.elts, *z, *old;
    sws_uint_t       i;

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        z = zones[i];
        if (sws_pool_cleanup_add(cycle->pool, sws_shm_zone_cleanup, z) != SWS_OK) {
            return SWS_ERROR;
        }
        old = sws_shm_find_old(cycle->old_cycle, z);
        if (old) {
            /* Owned by the old cycle until this one is committed. */
            z->map = old->map;
            z->map_size = old->map_size;
            z->owner = 0;
        } else if (sws_shm_map(cycle, z) != SWS_OK) {
            return SWS_ERROR;
        }
        if (z->init) {
            z->data = z->init(z, old ? old->data : NULL);
            if (z->data == NULL) {
                sws_log_error(SWS_LOG_EMERG, cycle->log, 0,
                              "cannot initialise the shared memory zone \"%.*s\"",
                              (int) z->name.len, z->name.data);
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}

void
sws_shm_commit(sws_cycle_t *cycle)
{
    sws_shm_zone_t **zones = cycle->shm_zones.elts, *old;
    sws_uint_t       i;

    for (i = 0; i < cycle->shm_zones.nelts; i++) {
        if (!zones[i]->owner) {
            old = sws_shm_find_old(cycle->old_cycle, zones[i]);
            if (old) {
                old->owner = 0;
            }
            zones[i]->owner = 1;
        }
    }
}
