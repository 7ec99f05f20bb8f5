/*
 * Core-private pool accessors (not part of the module SDK): the chain-link
 * free list used by sws_buf.c and in-place growth used by sws_array.c.
 */
#ifndef SWS_PALLOC_INTERNAL_H
#define SWS_PALLOC_INTERNAL_H

#include <scalws/sws_pool.h>
#include <scalws/sws_buf.h>

/* A cleanup: handler(data) when the pool is reset or destroyed. */
typedef struct sws_pool_cleanup_s sws_pool_cleanup_t;
struct sws_pool_cleanup_s {
    sws_pool_cleanup_pt  handler;
    void                *data;
    sws_pool_cleanup_t  *next;
};

/* sws_pool_cleanup_add with the record in the caller's memory (an object
 * allocated from the pool that carries its own cleanup): no allocation.
 * handler and data are set by the caller. */
void sws_pool_cleanup_link(sws_pool_t *pool, sws_pool_cleanup_t *c);

/* The head of the pool's free list of chain links (emptied by reset). */
sws_chain_t **sws_pool_chain_free_list(sws_pool_t *pool);

/* If [.., end) is the most recent small allocation of its block and the block
 * has extra more bytes free, extend it in place and return 1; else 0. */
int sws_pool_grow_last(sws_pool_t *pool, void *end, size_t extra);

#endif
