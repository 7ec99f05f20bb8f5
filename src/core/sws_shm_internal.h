/* What the core's slab allocator (sws_slab.c) needs of a zone: its lock,
 * at an address that is the same in every process, so a pool in the zone
 * can keep it. */
#ifndef SWS_SHM_INTERNAL_H
#define SWS_SHM_INTERNAL_H

#include <scalws/sws_shm.h>

void *sws_shm_zone_mutex(sws_shm_zone_t *zone);
void  sws_shm_mutex_lock(void *mutex);
void  sws_shm_mutex_unlock(void *mutex);

/* The slab pool the zone is (sws_slab_init made it one), or NULL. */
struct sws_slab_pool_s *sws_slab_of_zone(sws_shm_zone_t *zone);

#endif
