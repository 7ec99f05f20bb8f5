/* What the core's slab allocator (sws_slab.c) needs of a zone: its lock,
 * at an address that is the same in every process, so a pool in the zone
 * can keep it. */
#ifndef SWS_SHM_INTERNAL_H
#define SWS_SHM_INTERNAL_H

#include <scalws/sws_shm.h>

void *sws_shm_zone_mutex(sws_shm_zone_t *zone);

/* The zone lock (sws_shm_mutex.c): a word of SWS_SHM_MUTEX_SIZE bytes. */
#define SWS_SHM_MUTEX_SIZE  4
void  sws_shm_mutex_init(void *mutex);
void  sws_shm_mutex_lock(void *mutex);
void  sws_shm_mutex_unlock(void *mutex);
/* Frees the lock if the process pid (which has exited) holds it: 1 if so. */
int   sws_shm_mutex_unlock_dead(void *mutex, pid_t pid);

/* The master, for a child it reaped: frees every zone lock the child held,
 * with an alert naming the zone. */
void  sws_shm_unlock_dead(pid_t pid, sws_log_t *log);

/* The slab pool the zone is (sws_slab_init made it one), or NULL. */
struct sws_slab_pool_s *sws_slab_of_zone(sws_shm_zone_t *zone);

#endif
