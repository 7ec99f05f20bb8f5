/*
 * Shared memory zones: anonymous MAP_SHARED mappings made by the master at
 * configuration time, before the workers are forked, so every worker sees
 * the same memory. A zone is named; a reload that asks for a zone with the
 * same name and size gets the same memory back (its contents survive), any
 * other zone of the old configuration is unmapped when that configuration
 * is destroyed (workers still running keep their own mapping). To keep
 * more than one fixed struct in a zone, make it a slab pool (sws_slab.h).
 */
#ifndef SWS_SHM_H
#define SWS_SHM_H

#include <scalws/sws_types.h>

typedef struct sws_shm_zone_s sws_shm_zone_t;

/* Called once per configuration that uses the zone, in the master, right
 * after the zone is mapped: old_data is the zone's data pointer as the
 * previous configuration left it when the memory is reused, else NULL (the
 * memory is then zeroed). Returns SWS_OK or SWS_ERROR. */
typedef sws_int_t (*sws_shm_zone_init_pt)(sws_shm_zone_t *zone, void *old_data);

struct sws_shm_zone_s {
    sws_str_t              name;
    size_t                 size;      /* usable bytes at addr */
    u_char                *addr;      /* 64-byte aligned */
    void                  *data;      /* the owner's, kept across reloads */
    sws_shm_zone_init_pt   init;
    void                  *tag;       /* the owner (a module), for conflicts */
    void                  *map;       /* the core's: the mapping it lives in */
};

/*
 * Add a zone to the configuration being read (cf) and map it (or reuse the
 * mapping of the previous configuration: same name and size). A second add
 * with the same name in one configuration returns the same zone if size
 * and tag match, else NULL after logging. init runs once per configuration.
 */
sws_shm_zone_t *sws_shm_zone_add(sws_conf_t *cf, const sws_str_t *name, size_t size,
    sws_shm_zone_init_pt init, void *tag);

/* A process-shared lock in the zone (a worker that dies holding it does not
 * block the others: the master frees it). Keep critical sections short. */
void sws_shm_lock(sws_shm_zone_t *zone);
void sws_shm_unlock(sws_shm_zone_t *zone);

/* ---- inspection (for the admin API; ABI 1.7) ---- */

/* The zones of cycle (a configuration), in no particular order: i from 0
 * to sws_shm_zone_count() - 1. A zone's name is the one it was added
 * with: modules prefix theirs ("limit_req:one", "cache1.NAME.z"). */
sws_uint_t      sws_shm_zone_count(sws_cycle_t *cycle);
sws_shm_zone_t *sws_shm_zone_get(sws_cycle_t *cycle, sws_uint_t i);
sws_shm_zone_t *sws_shm_zone_find(sws_cycle_t *cycle, const sws_str_t *name);

/* What sws_shm_zone_info() tells. Set size to sizeof(sws_shm_zone_info_t)
 * before the call: fields appended later are filled only for callers that
 * know them. */
typedef struct {
    size_t            size;
    sws_str_t         name;
    size_t            zone_size;   /* usable bytes */
    const char       *owner;       /* the module that added it, or "core" */
    /* A zone that is a slab pool (sws_slab.h); else slab NULL and the
     * page counts 0. Its size classes: sws_slab_nclasses, sws_slab_stat. */
    struct sws_slab_pool_s  *slab;   /* a sws_slab_pool_t */
    size_t            page_size;
    size_t            pages;
    size_t            used_pages;
    size_t            free_pages;  /* with the empty page a class keeps */
} sws_shm_zone_info_t;

/* Fill info (up to info->size bytes) for zone of cycle. SWS_ERROR if
 * info->size is too small for the fields of ABI 1.7. Takes the zone's
 * lock for a slab pool's counts. */
sws_int_t sws_shm_zone_info(sws_cycle_t *cycle, sws_shm_zone_t *zone,
    sws_shm_zone_info_t *info);

#endif
