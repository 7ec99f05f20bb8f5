/*
 * Buffers and chains. A buffer is memory [pos, last) within [start, end) or a
 * file range [file_pos, file_last) of fd; a chain links buffers. Output flows
 * through the body filters as chains.
 */
#ifndef SWS_BUF_H
#define SWS_BUF_H

#include <scalws/sws_types.h>

typedef struct sws_buf_s sws_buf_t;
struct sws_buf_s {
    u_char     *pos;
    u_char     *last;
    off_t       file_pos;
    off_t       file_last;
    u_char     *start;
    u_char     *end;
    int         fd;              /* -1 when not a file buffer */
    unsigned    temporary:1;     /* memory may be changed */
    unsigned    memory:1;        /* read-only memory (static strings) */
    unsigned    in_file:1;       /* data is in fd at file_pos..file_last */
    unsigned    flush:1;         /* write everything so far now */
    unsigned    last_buf:1;      /* end of the response body */
    unsigned    last_in_chain:1;
    unsigned    sync:1;          /* carries no data, only flags */
    unsigned    reserved:25;
    void       *tag;             /* owner, for buffer reuse */
};

typedef struct sws_chain_s sws_chain_t;
struct sws_chain_s {
    sws_buf_t   *buf;
    sws_chain_t *next;
};

#define sws_buf_in_memory(b)  ((b)->temporary || (b)->memory)
#define sws_buf_size(b) \
    (sws_buf_in_memory(b) ? (off_t) ((b)->last - (b)->pos) : ((b)->file_last - (b)->file_pos))
#define sws_buf_special(b) \
    (((b)->flush || (b)->last_buf || (b)->sync) && !sws_buf_in_memory(b) && !(b)->in_file)

/* A zeroed buffer struct with fd = -1 and no memory. */
sws_buf_t   *sws_calloc_buf(sws_pool_t *pool);
/* A temporary buffer with size bytes of memory, pos = last = start. */
sws_buf_t   *sws_create_temp_buf(sws_pool_t *pool, size_t size);
/* A chain link from the pool's free list (or a new one). */
sws_chain_t *sws_alloc_chain_link(sws_pool_t *pool);
void         sws_free_chain(sws_pool_t *pool, sws_chain_t *cl);
/* Append a copy of the links of in to *chain (buffers are shared, not copied). */
sws_int_t    sws_chain_add_copy(sws_pool_t *pool, sws_chain_t **chain, sws_chain_t *in);
/* Total bytes in a chain. */
off_t        sws_chain_size(sws_chain_t *in);
/* Advance the chain past sent bytes; returns the first link not fully sent. */
sws_chain_t *sws_chain_update_sent(sws_chain_t *in, off_t sent);

#endif
