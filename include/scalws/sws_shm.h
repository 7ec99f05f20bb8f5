/*
 * Shared memory zones: memory that every worker process sees, for state
 * they share (the TLS session cache, counters, health state of upstreams).
 *
 * A zone is declared while the configuration is read, from a directive's
 * handler or a create/merge/postconfiguration hook:
 *
 *     zone = sws_shm_zone_add(cf, &name, 1024 * 1024, &my_module);
 *     sws_shm_zone_set_init(zone, my_init, my_conf);
 *
 * When the whole configuration has been read, the master maps every zone
 * (anonymous MAP_SHARED memory, before the workers are forked) and calls its
 * init callback once, in the master. On a reload, a zone of the same name,
 * size and tag in the new configuration takes over the old mapping: init
 * is then called with the old zone's data (what the old init returned), so
 * the contents survive; a changed size gives a new, empty zone.
 *
 * sws_shm_zone_addr() is the zone's usable memory: size bytes minus a
 * small header, zeroed at creation. The lock is a process-shared robust
 * mutex: a worker that dies holding it does not block the others (the next
 * locker takes it over). Keep critical sections short: they run in event
 * loops. Pointers stored inside a zone stay valid in every process (the
 * mapping is made before fork, at one address everywhere).
 */
#ifndef SWS_SHM_H
#define SWS_SHM_H

#include <scalws/sws_types.h>

typedef struct sws_shm_zone_s sws_shm_zone_t;

/* Called in the master once the zone is mapped. old_data: what the init of
 * the zone this one takes over returned (reload), else NULL. Returns the
 * zone's data (kept for sws_shm_zone_data and the next reload), or NULL on
 * failure (the configuration is then refused). */
typedef void *(*sws_shm_zone_init_pt)(sws_shm_zone_t *zone, void *old_data);

/* Declare a zone (size is rounded up to pages; at least 8 KiB). The same
 * name declared again with the same tag returns the same zone (the larger
 * size wins); with another tag it is an error (NULL, logged). */
sws_shm_zone_t *sws_shm_zone_add(sws_conf_t *cf, const sws_str_t *name, size_t size,
    void *tag);
void        sws_shm_zone_set_init(sws_shm_zone_t *zone, sws_shm_zone_init_pt init,
    void *ctx);

/* After mapping: the usable memory and its size. */
void       *sws_shm_zone_addr(sws_shm_zone_t *zone);
size_t      sws_shm_zone_size(sws_shm_zone_t *zone);
/* The ctx given to sws_shm_zone_set_init, and the data init returned. */
void       *sws_shm_zone_ctx(sws_shm_zone_t *zone);
void       *sws_shm_zone_data(sws_shm_zone_t *zone);
const sws_str_t *sws_shm_zone_name(sws_shm_zone_t *zone);

void        sws_shm_lock(sws_shm_zone_t *zone);
void        sws_shm_unlock(sws_shm_zone_t *zone);

#endif
