/*
 * Memory pools. The pool header lives at the start of its first block; small
 * allocations bump a pointer through a chain of equal-sized blocks, larger
 * ones are malloc()ed separately and kept on a list so they can be freed
 * early (sws_pfree) or with the pool.
 */
#include <stdlib.h>
#include <string.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_log.h>
#include "sws_palloc_internal.h"
#include "sws_alloc_cache.h"

#define SWS_POOL_ALIGN       (2 * sizeof(void *))
#define SWS_POOL_MIN_SIZE    256
/* A block that failed this many allocations is skipped from then on. */
#define SWS_POOL_MAX_FAILED  4

#define sws_align_ptr(p, a) \
    ((u_char *) (((uintptr_t) (p) + ((uintptr_t) (a) - 1)) & ~((uintptr_t) (a) - 1)))

typedef struct sws_pool_block_s sws_pool_block_t;
struct sws_pool_block_s {
    u_char            *last;     /* first free byte */
    u_char            *end;
    sws_pool_block_t  *next;
    sws_uint_t         failed;
};

/* Header in front of each large allocation; its size keeps malloc's
 * alignment for the payload. */
typedef struct sws_pool_large_s sws_pool_large_t;
struct sws_pool_large_s {
    sws_pool_large_t  *prev;
    sws_pool_large_t  *next;
};

struct sws_pool_s {
    sws_pool_block_t     block;     /* the first block; must stay first */
    sws_pool_block_t    *current;   /* first block worth trying */
    sws_pool_large_t    *large;
    sws_pool_cleanup_t  *cleanup;
    sws_chain_t         *chain;     /* free chain links */
    sws_log_t           *log;
    size_t               size;      /* bytes of every block */
    size_t               max;       /* larger requests go to malloc */
};

_Static_assert(sizeof(sws_pool_large_t) % SWS_POOL_ALIGN == 0, "large header alignment");
_Static_assert(sizeof(sws_pool_block_t) % SWS_POOL_ALIGN == 0, "block header alignment");

#define sws_pool_first_free(pool)  ((u_char *) (pool) + sizeof(sws_pool_t))
#define sws_block_first_free(b)    ((u_char *) (b) + sizeof(sws_pool_block_t))


void *
sws_alloc(size_t size, sws_log_t *log)
{
    void  *p = malloc(size);

    if (sws_unlikely(p == NULL)) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "malloc(%zu) failed", size);
    }
    return p;
}


void *
sws_calloc(size_t size, sws_log_t *log)
{
    void  *p = calloc(1, size);

    if (sws_unlikely(p == NULL)) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "calloc(%zu) failed", size);
    }
    return p;
}


/* Pool memory comes from the per-thread allocation cache: a pool made and
 * destroyed per request (an HTTP/2 stream's, a connection's) then costs
 * a free-list pop and push instead of malloc() and free(). */
static void *
sws_pool_mem(size_t size, sws_log_t *log)
{
    void  *p = sws_alloc_cache_malloc(size);

    if (sws_unlikely(p == NULL)) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "malloc(%zu) failed", size);
    }
    return p;
}


sws_pool_t *
sws_pool_create(size_t size, sws_log_t *log)
{
    sws_pool_t  *pool;

    size = sws_max(size, (size_t) SWS_POOL_MIN_SIZE);
    size = sws_align(size, SWS_POOL_ALIGN);

    pool = sws_pool_mem(size, log);
    if (pool == NULL) {
        return NULL;
    }

    pool->block.last = sws_pool_first_free(pool);
    pool->block.end = (u_char *) pool + size;
    pool->block.next = NULL;
    pool->block.failed = 0;
    pool->current = &pool->block;
    pool->large = NULL;
    pool->cleanup = NULL;
    pool->chain = NULL;
    pool->log = log;
    pool->size = size;
    pool->max = size - sizeof(sws_pool_block_t);

    return pool;
}


static void
sws_pool_run_cleanups(sws_pool_t *pool)
{
    sws_pool_cleanup_t  *c;

    /* Handlers may add cleanups or allocate; take them one at a time. */
    while ((c = pool->cleanup) != NULL) {
        pool->cleanup = c->next;
        c->handler(c->data);
    }
}


static void
sws_pool_free_large(sws_pool_t *pool)
{
    sws_pool_large_t  *l, *next;

    for (l = pool->large; l; l = next) {
        next = l->next;
        sws_alloc_cache_free(l);
    }
    pool->large = NULL;
}


void
sws_pool_destroy(sws_pool_t *pool)
{
    sws_pool_block_t  *b, *next;

    sws_pool_run_cleanups(pool);
    sws_pool_free_large(pool);

    for (b = pool->block.next; b; b = next) {
        next = b->next;
        sws_alloc_cache_free(b);
    }
    sws_alloc_cache_free(pool);
}


/* Keeps every block (rewound) so a reused pool does not malloc again. */
void
sws_pool_reset(sws_pool_t *pool)
{
    sws_pool_block_t  *b;

    sws_pool_run_cleanups(pool);
    sws_pool_free_large(pool);

    pool->block.last = sws_pool_first_free(pool);
    pool->block.failed = 0;
    for (b = pool->block.next; b; b = b->next) {
        b->last = sws_block_first_free(b);
        b->failed = 0;
    }
    pool->current = &pool->block;
    pool->chain = NULL;
}


static void *
sws_palloc_large(sws_pool_t *pool, size_t size)
{
    sws_pool_large_t  *l;

    if (sws_unlikely(size > SIZE_MAX - sizeof(sws_pool_large_t))) {
        sws_log_error(SWS_LOG_EMERG, pool->log, 0, "pool allocation of %zu bytes too large", size);
        return NULL;
    }

    l = sws_pool_mem(sizeof(sws_pool_large_t) + size, pool->log);
    if (l == NULL) {
        return NULL;
    }
    l->prev = NULL;
    l->next = pool->large;
    if (l->next) {
        l->next->prev = l;
    }
    pool->large = l;
    return l + 1;
}


/* No block from current on had room: append a new one. */
static void * __attribute__((noinline))
sws_palloc_block(sws_pool_t *pool, size_t size)
{
    sws_pool_block_t  *b, *nb;
    u_char            *m;

    nb = sws_pool_mem(pool->size, pool->log);
    if (nb == NULL) {
        return NULL;
    }
    m = sws_block_first_free(nb);
    nb->last = m + size;
    nb->end = (u_char *) nb + pool->size;
    nb->next = NULL;
    nb->failed = 0;

    for (b = pool->current; b->next; b = b->next) {
        if (b->failed++ > SWS_POOL_MAX_FAILED) {
            pool->current = b->next;
        }
    }
    b->next = nb;

    return m;
}


static inline void *
sws_palloc_small(sws_pool_t *pool, size_t size, int align)
{
    sws_pool_block_t  *b = pool->current;
    u_char            *m;

    do {
        m = align ? sws_align_ptr(b->last, SWS_POOL_ALIGN) : b->last;
        if (sws_likely(m <= b->end && (size_t) (b->end - m) >= size)) {
            b->last = m + size;
            return m;
        }
        b = b->next;
    } while (b);

    return sws_palloc_block(pool, size);
}


void *
sws_palloc(sws_pool_t *pool, size_t size)
{
    if (sws_likely(size <= pool->max)) {
        return sws_palloc_small(pool, size, 1);
    }
    return sws_palloc_large(pool, size);
}


void *
sws_pnalloc(sws_pool_t *pool, size_t size)
{
    if (sws_likely(size <= pool->max)) {
        return sws_palloc_small(pool, size, 0);
    }
    return sws_palloc_large(pool, size);
}


void *
sws_pcalloc(sws_pool_t *pool, size_t size)
{
    void  *p = sws_palloc(pool, size);

    if (p) {
        memset(p, 0, size);
    }
    return p;
}


sws_int_t
sws_pfree(sws_pool_t *pool, void *p)
{
    sws_pool_large_t  *l;

    for (l = pool->large; l; l = l->next) {
        if ((void *) (l + 1) != p) {
            continue;
        }
        if (l->prev) {
            l->prev->next = l->next;
        } else {
            pool->large = l->next;
        }
        if (l->next) {
            l->next->prev = l->prev;
        }
        sws_alloc_cache_free(l);
        return SWS_OK;
    }
    return SWS_DECLINED;
}


sws_int_t
sws_pool_cleanup_add(sws_pool_t *pool, sws_pool_cleanup_pt handler, void *data)
{
    sws_pool_cleanup_t  *c;

    c = sws_palloc(pool, sizeof(sws_pool_cleanup_t));
    if (c == NULL) {
        return SWS_ERROR;
    }
    c->handler = handler;
    c->data = data;
    c->next = pool->cleanup;
    pool->cleanup = c;
    return SWS_OK;
}


void
sws_pool_cleanup_link(sws_pool_t *pool, sws_pool_cleanup_t *c)
{
    c->next = pool->cleanup;
    pool->cleanup = c;
}


sws_log_t *
sws_pool_log(sws_pool_t *pool)
{
    return pool->log;
}


sws_chain_t **
sws_pool_chain_free_list(sws_pool_t *pool)
{
    return &pool->chain;
}


int
sws_pool_grow_last(sws_pool_t *pool, void *end, size_t extra)
{
    sws_pool_block_t  *b;

    for (b = pool->current; b; b = b->next) {
        if (b->last == (u_char *) end) {
            if ((size_t) (b->end - b->last) >= extra) {
                b->last += extra;
                return 1;
            }
            return 0;
        }
    }
    return 0;
}
