/*
 * Shared memory zones (see sws_shm.h). The mappings live in a list of the
 * master process that outlives configurations: a zone of a new
 * configuration with the name and size of a mapped one takes it over, and a
 * mapping is unmapped when the last configuration using it is destroyed.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_shm_internal.h"

#define SWS_SHM_HEAD  64     /* the lock, then the zone's memory */

typedef struct sws_shm_map_s sws_shm_map_t;
struct sws_shm_map_s {
    sws_shm_map_t   *next;
    char            *name;       /* malloc()ed, NUL-terminated */
    size_t           name_len;
    size_t           size;       /* usable */
    u_char          *base;       /* the mapping: lock, then memory */
    size_t           map_len;
    sws_uint_t       refs;       /* configurations using it */
    void            *data;       /* the owner's data as last initialised */
    void            *tag;
    sws_cycle_t     *cycle;      /* the last configuration that added it */
    sws_shm_zone_t  *zone;       /* ... and its zone */
};

_Static_assert(SWS_SHM_MUTEX_SIZE <= SWS_SHM_HEAD, "the zone lock fits its header");

static sws_shm_map_t  *sws_shm_maps;

static sws_shm_map_t *
sws_shm_map_find(const sws_str_t *name)
{
    sws_shm_map_t *m;

    for (m = sws_shm_maps; m; m = m->next) {
        if (m->name_len == name->len && memcmp(m->name, name->data, name->len) == 0) {
            return m;
        }
    }
    return NULL;
}

static sws_shm_map_t *
sws_shm_map_create(const sws_str_t *name, size_t size, void *tag, sws_log_t *log)
{
    sws_shm_map_t       *m;
    size_t               len = SWS_SHM_HEAD + sws_align(size, 64);

    m = sws_calloc(sizeof(sws_shm_map_t) + name->len + 1, log);
    if (m == NULL) {
        return NULL;
    }
    m->name = (char *) (m + 1);
    memcpy(m->name, name->data, name->len);
    m->name_len = name->len;
    m->size = size;
    m->tag = tag;
    m->map_len = len;
    m->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m->base == MAP_FAILED) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "mmap(MAP_SHARED, %zu) for zone \"%.*s\" failed",
                      len, (int) name->len, name->data);
        free(m);
        return NULL;
    }
    sws_shm_mutex_init(m->base);
    m->next = sws_shm_maps;
    sws_shm_maps = m;
    return m;
}

static void
sws_shm_map_release(void *data)
{
    sws_shm_zone_t  *zone = data;
    sws_shm_map_t   *m = zone->map, **pp;

    if (m->zone == zone) {
        m->zone = NULL;
        m->cycle = NULL;
    }
    m->data = zone->data;
    if (--m->refs > 0) {
        return;
    }
    for (pp = &sws_shm_maps; *pp; pp = &(*pp)->next) {
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    }
    munmap(m->base, m->map_len);
    free(m);
}

sws_shm_zone_t *
sws_shm_zone_add(sws_conf_t *cf, const sws_str_t *name, size_t size,
    sws_shm_zone_init_pt init, void *tag)
{
    sws_shm_map_t   *m;
    sws_shm_zone_t  *zone;
    void            *old_data = NULL;

    if (name->len == 0 || size == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "a shared memory zone needs a name and a size");
        return NULL;
    }

    m = sws_shm_map_find(name);
    if (m && m->cycle == cf->cycle) {
        /* The same configuration asks again. */
        if (m->size != size || m->tag != tag) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "shared memory zone \"%.*s\" is already declared with "
                               "another size or by another module",
                               (int) name->len, name->data);
            return NULL;
        }
        return m->zone;
    }
    if (m && (m->size != size || m->tag != tag)) {
        /* Same name, other shape: the old configuration keeps its mapping
         * until it goes; this one gets a new one (the name is reused). */
        m->name_len = 0;
        m = NULL;
    }
    zone = sws_pcalloc(cf->pool, sizeof(sws_shm_zone_t));
    if (zone == NULL) {
        return NULL;
    }
    if (m) {
        old_data = m->data;
    } else {
        m = sws_shm_map_create(name, size, tag, cf->log);
        if (m == NULL) {
            return NULL;
        }
    }

    zone->name.data = (u_char *) m->name;
    zone->name.len = name->len;
    zone->size = size;
    zone->addr = m->base + SWS_SHM_HEAD;
    zone->data = old_data;
    zone->init = init;
    zone->tag = tag;
    zone->map = m;
    m->refs++;
    m->cycle = cf->cycle;
    m->zone = zone;
    if (sws_pool_cleanup_add(cf->pool, sws_shm_map_release, zone) != SWS_OK) {
        sws_shm_map_release(zone);
        return NULL;
    }
    if (init && init(zone, old_data) != SWS_OK) {
        return NULL;          /* the cycle's pool cleanup unmaps it */
    }
    m->data = zone->data;
    return zone;
}

void *
sws_shm_zone_mutex(sws_shm_zone_t *zone)
{
    sws_shm_map_t *m = zone->map;

    return m->base;
}

void
sws_shm_unlock_dead(pid_t pid, sws_log_t *log)
{
    sws_shm_map_t *m;

    for (m = sws_shm_maps; m; m = m->next) {
        if (sws_shm_mutex_unlock_dead(m->base, pid)) {
            sws_log_error(SWS_LOG_ALERT, log, 0,
                          "process %ld exited holding the lock of zone \"%s\": unlocked",
                          (long) pid, m->name);
        }
    }
}

void
sws_shm_lock(sws_shm_zone_t *zone)
{
    sws_shm_mutex_lock(sws_shm_zone_mutex(zone));
}

void
sws_shm_unlock(sws_shm_zone_t *zone)
{
    sws_shm_mutex_unlock(sws_shm_zone_mutex(zone));
}


/* ---- inspection ---- */

/* The zones of a cycle are the maps it was the last to add. */
sws_uint_t
sws_shm_zone_count(sws_cycle_t *cycle)
{
    sws_shm_map_t *m;
    sws_uint_t     n = 0;

    for (m = sws_shm_maps; m; m = m->next) {
        n += (m->cycle == cycle && m->zone);
    }
    return n;
}

sws_shm_zone_t *
sws_shm_zone_get(sws_cycle_t *cycle, sws_uint_t i)
{
    sws_shm_map_t *m;

    for (m = sws_shm_maps; m; m = m->next) {
        if (m->cycle == cycle && m->zone && i-- == 0) {
            return m->zone;
        }
    }
    return NULL;
}

sws_shm_zone_t *
sws_shm_zone_find(sws_cycle_t *cycle, const sws_str_t *name)
{
    sws_shm_map_t *m = sws_shm_map_find(name);

    /* (a name reused with another shape: the old map's name is hidden) */
    return m && m->cycle == cycle ? m->zone : NULL;
}

sws_int_t
sws_shm_zone_info(sws_cycle_t *cycle, sws_shm_zone_t *zone, sws_shm_zone_info_t *info)
{
    sws_shm_zone_info_t  all;
    sws_uint_t           i;

    if (info->size < offsetof(sws_shm_zone_info_t, free_pages) + sizeof(size_t)) {
        return SWS_ERROR;
    }
    sws_memzero(&all, sizeof(all));
    all.size = info->size;
    all.name = zone->name;
    all.zone_size = zone->size;
    all.owner = "core";
    for (i = 0; i < cycle->modules_n; i++) {
        if (zone->tag == cycle->modules[i]) {
            all.owner = cycle->modules[i]->name;
        }
    }
    all.slab = sws_slab_of_zone(zone);
    if (all.slab) {
        sws_slab_pages(all.slab, &all.page_size, &all.pages, &all.free_pages);
        all.used_pages = all.pages - all.free_pages;
    }
    memcpy(info, &all, sws_min(info->size, sizeof(all)));
    return SWS_OK;
}
