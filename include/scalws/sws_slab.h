/*
 * A slab allocator over a shared memory zone (sws_shm.h), for what the
 * workers share: cache indexes, counters, limits, session caches.
 *
 * The zone is cut into pages of one size (4 KiB, less for zones under
 * 64 KiB so that a small zone still has 16 pages). A page serves one size
 * class: chunks of 8, 16, 32 ... bytes up to half a page. Bigger requests
 * take a run of whole pages. A page whose chunks are all free goes back to
 * the free pages, and free runs next to each other merge.
 *
 * Pointers into the zone are plain pointers: the master maps the zone at
 * configuration time, before it forks the workers, and a reload that keeps
 * the zone keeps the mapping, so an address means the same in every
 * process and every configuration. They must not leave the zone (no
 * pointers to process memory inside it).
 *
 * Everything runs under the zone's lock (sws_shm_lock): the plain
 * functions take it, the _locked ones expect the caller to hold it (to
 * find, evict and allocate in one critical section). The LRU and hash
 * helpers never lock: the caller holds the lock.
 */
#ifndef SWS_SLAB_H
#define SWS_SLAB_H

#include <scalws/sws_types.h>
#include <scalws/sws_queue.h>
#include <scalws/sws_shm.h>

typedef struct sws_slab_pool_s  sws_slab_pool_t;    /* opaque: at the zone's start */

/*
 * Make the zone a slab pool; call it from the zone's init callback
 * (sws_shm_zone_init_pt) with its old_data. A reload that kept the memory
 * (old_data set) gets the same pool back with everything in it; otherwise
 * the pool is new and empty. Sets zone->data to the pool. NULL if the zone
 * is too small for two pages.
 */
sws_slab_pool_t *sws_slab_init(sws_shm_zone_t *zone, void *old_data);

/* The owner's root pointer (its table, its list ...), kept in the pool,
 * so it survives reloads with it. NULL in a new pool. */
void  *sws_slab_data(sws_slab_pool_t *pool);
void   sws_slab_set_data(sws_slab_pool_t *pool, void *data);

void   sws_slab_lock(sws_slab_pool_t *pool);
void   sws_slab_unlock(sws_slab_pool_t *pool);

/*
 * size bytes, aligned to its class size up to 64 bytes (8 for the
 * smallest); size 0 gets the smallest chunk. NULL when the zone has no
 * room: then evict something (sws_slab_lru_oldest) and try again. _calloc
 * zeroes the memory.
 */
void  *sws_slab_alloc(sws_slab_pool_t *pool, size_t size);
void  *sws_slab_calloc(sws_slab_pool_t *pool, size_t size);
void  *sws_slab_alloc_locked(sws_slab_pool_t *pool, size_t size);
void  *sws_slab_calloc_locked(sws_slab_pool_t *pool, size_t size);
/* p from this pool (NULL is ignored). A pointer that is not the start of
 * an allocation, or a page already free, is ignored rather than let it
 * corrupt the zone; a chunk freed twice is not always noticed. */
void   sws_slab_free(sws_slab_pool_t *pool, void *p);
void   sws_slab_free_locked(sws_slab_pool_t *pool, void *p);

/* ---- statistics (for the admin API) ---- */

/* Class i (0 .. sws_slab_nclasses() - 1): the small classes by size, then
 * one for the runs of whole pages (size 0). sws_slab_stat takes the lock. */
typedef struct {
    size_t     size;          /* the chunk size; 0: runs of whole pages */
    uint64_t   pages;         /* pages the class holds now (one may be empty) */
    uint64_t   used;          /* chunks in use now (runs: runs in use) */
    uint64_t   total;         /* chunks its pages hold (runs: = pages) */
    uint64_t   requests;      /* allocations asked for, ever */
    uint64_t   failures;      /* ... that found no room */
    /* ABI 1.7: room to grow. Before sws_slab_stat_read the caller sets
     * struct_size to its sizeof(sws_slab_stat_t); the core fills no more
     * than that and sets it to what it filled: a field appended later is
     * there only if it lies within struct_size. sws_slab_stat (1.0) fills
     * the fields before struct_size only, as it always did. */
    size_t     struct_size;
    uint64_t   reserved[6];
} sws_slab_stat_t;

sws_uint_t sws_slab_nclasses(sws_slab_pool_t *pool);
sws_int_t  sws_slab_stat(sws_slab_pool_t *pool, sws_uint_t i, sws_slab_stat_t *st);
/* ABI 1.7: the same, as far as st->struct_size says (SWS_ERROR if it is
 * too small or i is no class). */
sws_int_t  sws_slab_stat_read(sws_slab_pool_t *pool, sws_uint_t i, sws_slab_stat_t *st);
/* The page size, the pages of the zone, and how many are free now (with
 * the one empty page each class keeps for its next chunk: it goes to
 * whoever needs it when no other page is left). */
void       sws_slab_pages(sws_slab_pool_t *pool, size_t *page_size, size_t *total,
    size_t *nfree);

/* ---- LRU: an intrusive queue in the zone, the most recent first ---- */

typedef struct {
    sws_queue_t   queue;      /* sentinel */
    uint64_t      count;
} sws_slab_lru_t;

typedef sws_queue_t  sws_slab_lru_node_t;   /* embed one in the entry */

void  sws_slab_lru_init(sws_slab_lru_t *lru);
void  sws_slab_lru_insert(sws_slab_lru_t *lru, sws_slab_lru_node_t *node);  /* as newest */
void  sws_slab_lru_touch(sws_slab_lru_t *lru, sws_slab_lru_node_t *node);   /* used now */
void  sws_slab_lru_remove(sws_slab_lru_t *lru, sws_slab_lru_node_t *node);
/* The least recently used (NULL if empty); not removed. */
sws_slab_lru_node_t *sws_slab_lru_oldest(sws_slab_lru_t *lru);

#define sws_slab_lru_entry(node, type, member)  sws_queue_data(node, type, member)

/* ---- a hash table in the zone, keyed by bytes ---- */

typedef struct sws_slab_hash_s       sws_slab_hash_t;   /* opaque, in the zone */
typedef struct sws_slab_hash_node_s  sws_slab_hash_node_t;

/* Embed one in the entry; key points to the entry's own copy of the key,
 * in the zone. */
struct sws_slab_hash_node_s {
    sws_slab_hash_node_t  *next;
    uint32_t               hash;
    uint32_t               len;
    const u_char          *key;
};

/* A table of nbuckets (rounded up to a power of two) in the pool; the
 * table does not grow (size it for what the zone can hold). NULL if full. */
sws_slab_hash_t      *sws_slab_hash_create_locked(sws_slab_pool_t *pool, sws_uint_t nbuckets);
sws_slab_hash_node_t *sws_slab_hash_find(sws_slab_hash_t *h, const u_char *key, size_t len);
/* Add node under key (len < 4 GiB; key must stay valid as long as the node
 * is in): the caller has checked that the key is not in yet. */
void        sws_slab_hash_insert(sws_slab_hash_t *h, sws_slab_hash_node_t *node,
    const u_char *key, size_t len);
void        sws_slab_hash_remove(sws_slab_hash_t *h, sws_slab_hash_node_t *node);
sws_uint_t  sws_slab_hash_count(sws_slab_hash_t *h);

#define sws_slab_hash_entry(node, type, member) \
    ((type *) ((u_char *) (node) - offsetof(type, member)))

#endif
