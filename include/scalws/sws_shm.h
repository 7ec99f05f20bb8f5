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

/* A process-shared lock in the zone (robust: a worker that dies holding it
 * does not block the others). Keep critical sections short. */
void sws_shm_lock(sws_shm_zone_t *zone);
void sws_shm_unlock(sws_shm_zone_t *zone);

#endif
