/* Memory pools: allocate many small blocks, free them all at once. */
#ifndef SWS_POOL_H
#define SWS_POOL_H

#include <scalws/sws_types.h>

typedef void (*sws_pool_cleanup_pt)(void *data);

/* size: bytes of the first block (small allocations come from blocks of this
 * size; larger ones are allocated separately and freed with the pool). */
sws_pool_t *sws_pool_create(size_t size, sws_log_t *log);
void  sws_pool_destroy(sws_pool_t *pool);
/* Free everything but keep the first block, so the pool can be reused. */
void  sws_pool_reset(sws_pool_t *pool);

void *sws_palloc(sws_pool_t *pool, size_t size);    /* aligned */
void *sws_pnalloc(sws_pool_t *pool, size_t size);   /* unaligned (strings) */
void *sws_pcalloc(sws_pool_t *pool, size_t size);   /* zeroed */
/* Free a large allocation early (no-op for small ones); SWS_OK if freed. */
sws_int_t sws_pfree(sws_pool_t *pool, void *p);

/* Run handler(data) when the pool is destroyed or reset; LIFO order. */
sws_int_t sws_pool_cleanup_add(sws_pool_t *pool, sws_pool_cleanup_pt handler, void *data);

sws_log_t *sws_pool_log(sws_pool_t *pool);

/* Heap helpers that log failures. */
void *sws_alloc(size_t size, sws_log_t *log);
void *sws_calloc(size_t size, sws_log_t *log);

#endif
