/*
 * What an idle HTTP/1 connection gives back: between requests it keeps
 * only its small state (sws_http1_conn_t, in the connection's pool); the
 * request pool (4 KiB and more) and the header buffer (1 KiB by default)
 * go when it goes idle and are taken again when bytes arrive.
 *
 * A keep-alive client usually sends its next request within a round
 * trip, so this happens on almost every request: the pools and buffers
 * given back wait on small per-worker stacks for the next connection that
 * needs one, a push and a pop, where destroying and making them again
 * cost ~235 instructions per request (callgrind, static-small). What the
 * stacks hold is bounded (SWS_HTTP1_SPARE of each: 160 KiB a worker).
 */
#include "sws_alloc_cache.h"
#include "sws_http_h1.h"

#define SWS_HTTP1_SPARE       32
#define SWS_HTTP1_POOL_SIZE   4096

static sws_pool_t  *sws_http1_spare_pools[SWS_HTTP1_SPARE];
static sws_uint_t   sws_http1_nspare_pools;
static u_char      *sws_http1_spare_bufs[SWS_HTTP1_SPARE];
static size_t       sws_http1_spare_buf_size;      /* of each of them */
static sws_uint_t   sws_http1_nspare_bufs;

sws_pool_t *
sws_http1_take_pool(sws_connection_t *c)
{
    if (sws_http1_nspare_pools) {
        return sws_http1_spare_pools[--sws_http1_nspare_pools];
    }
    return sws_pool_create(SWS_HTTP1_POOL_SIZE, c->log);
}

/* pool was reset (no cleanups, no large blocks left). */
static void
sws_http1_give_pool(sws_pool_t *pool)
{
    if (sws_http1_nspare_pools < SWS_HTTP1_SPARE) {
        sws_http1_spare_pools[sws_http1_nspare_pools++] = pool;
        return;
    }
    sws_pool_destroy(pool);
}

static u_char *
sws_http1_take_mem(size_t size)
{
    if (size == sws_http1_spare_buf_size && sws_http1_nspare_bufs) {
        return sws_http1_spare_bufs[--sws_http1_nspare_bufs];
    }
    return sws_alloc_cache_malloc(size);
}

static void
sws_http1_give_mem(u_char *p, size_t size)
{
    if (sws_http1_nspare_bufs == 0) {
        sws_http1_spare_buf_size = size;       /* the usual size, mostly */
    }
    if (size == sws_http1_spare_buf_size && sws_http1_nspare_bufs < SWS_HTTP1_SPARE) {
        sws_http1_spare_bufs[sws_http1_nspare_bufs++] = p;
        return;
    }
    sws_alloc_cache_free(p);
}

/* The header buffer's memory is the connection's until it closes, however
 * it closes (HTTP/1, or HTTP/2 after a preface in it). */
static void
sws_http1_buffer_cleanup(void *data)
{
    sws_buf_t *b = data;

    if (b->start) {
        sws_http1_give_mem(b->start, b->end - b->start);
        b->start = b->pos = b->last = b->end = NULL;
    }
}

static sws_int_t __attribute__((noinline))
sws_http1_take_buffer_slow(sws_connection_t *c, size_t size)
{
    sws_http1_conn_t *hc = c->data;
    sws_buf_t       *b = hc->small;
    u_char          *p;

    if (b == NULL) {
        b = sws_calloc_buf(c->pool);
        if (b == NULL || sws_pool_cleanup_add(c->pool, sws_http1_buffer_cleanup, b) != SWS_OK) {
            return SWS_ERROR;
        }
        b->temporary = 1;
        hc->small = b;
    }
    p = sws_http1_take_mem(size);
    if (p == NULL) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "no memory for a header buffer");
        return SWS_ERROR;
    }
    if (b->start) {
        sws_http1_give_mem(b->start, b->end - b->start);
    }
    b->start = b->pos = b->last = p;
    b->end = p + size;
    return SWS_OK;
}

sws_int_t
sws_http1_take_buffer(sws_connection_t *c, size_t size)
{
    sws_buf_t *b = ((sws_http1_conn_t *) c->data)->small;
    u_char    *p;

    /* The usual case, kept short: an idle connection's buffer again. */
    if (sws_likely(b != NULL && b->start == NULL && size == sws_http1_spare_buf_size
                   && sws_http1_nspare_bufs))
    {
        p = sws_http1_spare_bufs[--sws_http1_nspare_bufs];
        b->start = b->pos = b->last = p;
        b->end = p + size;
        return SWS_OK;
    }
    return sws_http1_take_buffer_slow(c, size);
}

void
sws_http1_release(sws_connection_t *c)
{
    sws_http1_conn_t *hc = c->data;

    if (hc->rpool) {
        sws_http1_give_pool(hc->rpool);
        hc->rpool = NULL;
    }
    sws_http1_buffer_cleanup(hc->small);
}
