/* Buffers and chains of buffers. */
#include <scalws/sws_pool.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_string.h>
#include "sws_palloc_internal.h"


sws_buf_t *
sws_calloc_buf(sws_pool_t *pool)
{
    sws_buf_t  *b = sws_palloc(pool, sizeof(sws_buf_t));

    /* (a whole-struct store: a few vector stores where memset was a call;
     * a buffer or two per response) */
    if (b) {
        *b = (sws_buf_t) { .fd = -1 };
    }
    return b;
}


sws_buf_t *
sws_create_temp_buf(sws_pool_t *pool, size_t size)
{
    sws_buf_t  *b = sws_palloc(pool, sizeof(sws_buf_t));
    u_char     *m;

    if (b == NULL) {
        return NULL;
    }
    m = sws_palloc(pool, size);
    if (m == NULL) {
        return NULL;
    }
    *b = (sws_buf_t) { .pos = m, .last = m, .start = m, .end = m + size, .fd = -1,
                       .temporary = 1 };
    return b;
}


sws_chain_t *
sws_alloc_chain_link(sws_pool_t *pool)
{
    sws_chain_t  **free_list = sws_pool_chain_free_list(pool);
    sws_chain_t   *cl = *free_list;

    if (cl) {
        *free_list = cl->next;
        return cl;
    }
    return sws_palloc(pool, sizeof(sws_chain_t));
}


/* Returns the one link cl (not the links after it) to the free list. */
void
sws_free_chain(sws_pool_t *pool, sws_chain_t *cl)
{
    sws_chain_t  **free_list = sws_pool_chain_free_list(pool);

    cl->next = *free_list;
    *free_list = cl;
}


sws_int_t
sws_chain_add_copy(sws_pool_t *pool, sws_chain_t **chain, sws_chain_t *in)
{
    sws_chain_t  **ll, *cl;

    for (ll = chain; *ll; ll = &(*ll)->next) {
        /* find the tail */
    }

    for (; in; in = in->next) {
        cl = sws_alloc_chain_link(pool);
        if (cl == NULL) {
            *ll = NULL;
            return SWS_ERROR;
        }
        cl->buf = in->buf;
        *ll = cl;
        ll = &cl->next;
    }
    *ll = NULL;
    return SWS_OK;
}


off_t
sws_chain_size(sws_chain_t *in)
{
    off_t  size = 0;

    for (; in; in = in->next) {
        if (!sws_buf_special(in->buf)) {
            size += sws_buf_size(in->buf);
        }
    }
    return size;
}


/*
 * Links without data (special or empty buffers) are stepped over, so the
 * result is the first link that still has data, or NULL when all is sent.
 * A buffer both in memory and in a file advances both positions.
 */
sws_chain_t *
sws_chain_update_sent(sws_chain_t *in, off_t sent)
{
    sws_buf_t  *b;
    off_t       size;

    for (; in; in = in->next) {
        b = in->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        size = sws_buf_size(b);
        if (size == 0) {
            continue;
        }
        if (sent == 0) {
            break;
        }
        if (sent < size) {
            if (sws_buf_in_memory(b)) {
                b->pos += sent;
            }
            if (b->in_file) {
                b->file_pos += sent;
            }
            break;
        }
        sent -= size;
        if (sws_buf_in_memory(b)) {
            b->pos = b->last;
        }
        if (b->in_file) {
            b->file_pos = b->file_last;
        }
    }
    return in;
}
