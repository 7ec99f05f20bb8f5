/* The core's side of shared memory zones (sws_cycle.c). */
#ifndef SWS_SHM_INTERNAL_H
#define SWS_SHM_INTERNAL_H

#include <scalws/scalws.h>
#include <scalws/sws_shm.h>

/* Map every zone of cycle (taking over the old cycle's where they match)
 * and run their init callbacks. On failure the zones mapped so far are
 * unmapped with the cycle's pool. */
sws_int_t sws_shm_map_zones(sws_cycle_t *cycle);
/* The cycle is in use: zones taken over from the old cycle now belong to
 * it (the old cycle's end does not unmap them). */
void      sws_shm_commit(sws_cycle_t *cycle);

#endif
