/*
 * Body transforms: the body filter machinery of a module that turns the
 * response body into another as it flows (a compressor, a decompressor,
 * a substitution), with the module's coder as a callback.
 *
 * Input buffers are taken as they come (memory, or file ranges read with
 * pread in chunks of SWS_HTTP_TRANSFORM_FILE_CHUNK) and the coder writes
 * into at most nbufs output buffers of its own. When all of them wait for
 * the client it stops taking input: the producer's buffers stay
 * unconsumed, so the producer (the upstream framework) stops reading from
 * its server, and the request is marked buffered, so that the core calls
 * the filters again each time output was sent. A flush buffer (the
 * upstream paused, an SSE event) makes the coder flush; the last buffer
 * finishes it. Memory per request: the coder's state, the output buffers
 * and one read chunk, whatever the length of the body.
 *
 * Several transforms may be in one chain (gunzip, sub_filter, gzip): each
 * holds its own bit of the request's buffered mark, so that one clearing
 * its bit never hides what another still holds.
 */
#include <unistd.h>
#include "sws_http_core.h"

#define SWS_HTTP_TRANSFORM_FILE_CHUNK  32768

struct sws_http_transform_s {
    sws_http_transform_pt   run;
    void                   *data;
    sws_uint_t              nbufs_max;
    size_t                  bufsize;
    sws_uint_t              bit;        /* its bit of r->filter_buffered */
    sws_chain_t            *in;         /* our links to input not yet consumed */
    sws_chain_t            *free;       /* output buffers ready for use */
    sws_chain_t            *busy;       /* passed on, not yet sent */
    sws_chain_t           **busy_tail;
    sws_chain_t            *out;        /* filled, to pass on */
    sws_chain_t           **out_tail;
    sws_chain_t            *cur;        /* the output buffer being filled */
    sws_uint_t              nbufs;      /* output buffers allocated */
    sws_buf_t              *chunk;      /* file data read, being transformed */
    unsigned                flush:1;    /* a flush to do once the input is in */
    unsigned                last:1;     /* the last buffer arrived */
    unsigned                done:1;     /* finished and passed on */
};


sws_http_transform_t *
sws_http_transform_create(sws_http_request_t *r, sws_uint_t nbufs, size_t bufsize,
    sws_http_transform_pt run, void *data)
{
    sws_http_transform_t  *t;

    if (nbufs == 0 || bufsize == 0 || run == NULL) {
        return NULL;
    }
    t = sws_pcalloc(r->pool, sizeof(sws_http_transform_t));
    if (t == NULL) {
        return NULL;
    }
    t->run = run;
    t->data = data;
    t->nbufs_max = nbufs;
    t->bufsize = bufsize;
    /* bit 0 is sws_http_set_buffered()'s; a request has few transforms */
    t->bit = 1u << (1 + r->transforms % (SWS_HTTP_BUFFERED_BITS - 1));
    r->transforms++;
    t->busy_tail = &t->busy;
    t->out_tail = &t->out;
    return t;
}


static void
sws_http_transform_buffered(sws_http_request_t *r, sws_http_transform_t *t, int on)
{
    if (on) {
        r->filter_buffered |= t->bit;
    } else {
        r->filter_buffered &= ~t->bit;
    }
}


/* Sent output buffers go back to the free list. */
static void
sws_http_transform_reclaim(sws_http_transform_t *t)
{
    sws_chain_t  *cl;

    while ((cl = t->busy) != NULL && cl->buf->pos == cl->buf->last) {
        t->busy = cl->next;
        cl->buf->pos = cl->buf->last = cl->buf->start;
        cl->buf->flush = 0;
        cl->buf->last_buf = 0;
        cl->next = t->free;
        t->free = cl;
    }
    if (t->busy == NULL) {
        t->busy_tail = &t->busy;
    }
}


/* An output buffer to write into, or NULL when all of them wait to be
 * sent (or on a failed allocation: nbufs tells). */
static sws_buf_t *
sws_http_transform_out_buf(sws_http_request_t *r, sws_http_transform_t *t)
{
    sws_chain_t  *cl;
    sws_buf_t    *b;

    if (t->cur) {
        return t->cur->buf;
    }
    cl = t->free;
    if (cl) {
        t->free = cl->next;
    } else {
        if (t->nbufs >= t->nbufs_max) {
            return NULL;
        }
        b = sws_create_temp_buf(r->pool, t->bufsize);
        cl = sws_alloc_chain_link(r->pool);
        if (b == NULL || cl == NULL) {
            return NULL;
        }
        b->tag = t;
        cl->buf = b;
        t->nbufs++;
    }
    cl->next = NULL;
    t->cur = cl;
    return cl->buf;
}


/* Queue the current output buffer (with its own link) to be passed on. */
static void
sws_http_transform_out_done(sws_http_transform_t *t)
{
    *t->out_tail = t->cur;
    t->out_tail = &t->cur->next;
    t->cur = NULL;
}


/*
 * Drop the input links whose data is all taken, noting their flags. At
 * once: a producer reuses a buffer as soon as it sees it taken (the
 * upstream framework does, for its next read), and a stale link to it
 * would take the new data twice.
 */
static void
sws_http_transform_drop_used(sws_http_request_t *r, sws_http_transform_t *t)
{
    sws_chain_t  *cl;
    sws_buf_t    *b;

    if (t->chunk && t->chunk->pos < t->chunk->last) {
        return;                         /* the file buffer is not done */
    }
    while ((cl = t->in) != NULL) {
        b = cl->buf;
        if (sws_buf_in_memory(b) ? b->pos < b->last
                                 : b->in_file && b->file_pos < b->file_last)
        {
            return;
        }
        if (b->flush) {
            t->flush = 1;
        }
        if (b->last_buf) {
            t->last = 1;
        }
        t->in = cl->next;
        sws_free_chain(r->pool, cl);
    }
}


/*
 * The input to transform now, as memory [pos, last) of *from: the first
 * input buffer with data (file data read into t->chunk first). Returns
 * 0 when no input is left.
 */
static sws_int_t
sws_http_transform_input(sws_http_request_t *r, sws_http_transform_t *t, sws_buf_t **from)
{
    sws_buf_t    *b, *ch;
    ssize_t       n;
    size_t        size;

    if (t->chunk && t->chunk->pos < t->chunk->last) {
        *from = t->chunk;
        return 1;
    }
    sws_http_transform_drop_used(r, t);
    if (t->in == NULL) {
        return 0;
    }
    b = t->in->buf;
    if (sws_buf_in_memory(b)) {
        *from = b;
        return 1;
    }

    /* a file range (drop_used left only one with data): the next chunk */
    if (t->chunk == NULL) {
        t->chunk = sws_create_temp_buf(r->pool, SWS_HTTP_TRANSFORM_FILE_CHUNK);
        if (t->chunk == NULL) {
            return SWS_ERROR;
        }
    }
    ch = t->chunk;
    size = (size_t) sws_min((off_t) SWS_HTTP_TRANSFORM_FILE_CHUNK, b->file_last - b->file_pos);
    n = pread(b->fd, ch->start, size, b->file_pos);
    if (n <= 0) {
        sws_log_error(SWS_LOG_CRIT, r->log, n == -1 ? errno : 0,
                      "pread() of the response body failed%s",
                      n == 0 ? " (file truncated?)" : "");
        return SWS_ERROR;
    }
    b->file_pos += n;
    ch->pos = ch->start;
    ch->last = ch->start + n;
    *from = ch;
    return 1;
}


/* Transform what input there is into free output buffers. Returns SWS_OK
 * (input used up, or the transform done), SWS_AGAIN (out of output
 * buffers), SWS_ERROR. */
static sws_int_t
sws_http_transform_step(sws_http_request_t *r, sws_http_transform_t *t)
{
    sws_buf_t     *in, *out;
    sws_int_t      rc, have;
    const u_char  *pos;
    int            mode;

    for ( ;; ) {
        have = sws_http_transform_input(r, t, &in);
        if (have == SWS_ERROR) {
            return SWS_ERROR;
        }
        if (!have && t->last) {
            mode = SWS_HTTP_TRANSFORM_FINISH;
        } else if (!have && t->flush) {
            mode = SWS_HTTP_TRANSFORM_FLUSH;
        } else if (!have) {
            return SWS_OK;                  /* wait for more input */
        } else {
            mode = SWS_HTTP_TRANSFORM_RUN;
        }

        out = sws_http_transform_out_buf(r, t);
        if (out == NULL) {
            return t->nbufs >= t->nbufs_max ? SWS_AGAIN : SWS_ERROR;
        }

        if (have) {
            pos = in->pos;
            rc = t->run(r, t->data, &pos, in->last, &out->last, out->end, mode);
            in->pos = (u_char *) pos;
            sws_http_transform_drop_used(r, t);
        } else {
            pos = NULL;
            rc = t->run(r, t->data, &pos, NULL, &out->last, out->end, mode);
        }
        if (rc == SWS_ERROR) {
            return SWS_ERROR;
        }

        if (out->last == out->end) {
            sws_http_transform_out_done(t);
        }
        if (rc == SWS_OK && mode != SWS_HTTP_TRANSFORM_RUN) {
            /* everything so far is in the buffers: pass it on now */
            if (t->cur && t->cur->buf->last > t->cur->buf->pos) {
                sws_http_transform_out_done(t);
            }
            if (t->out == NULL) {
                /* nothing new: an empty buffer still carries the flush
                 * (for a coder further on) or the end */
                out = sws_http_transform_out_buf(r, t);
                if (out == NULL) {
                    return t->nbufs >= t->nbufs_max ? SWS_AGAIN : SWS_ERROR;
                }
                sws_http_transform_out_done(t);
            }
            out = ((sws_chain_t *) ((u_char *) t->out_tail
                                    - offsetof(sws_chain_t, next)))->buf;
            out->flush = 1;
            out->last_buf = mode == SWS_HTTP_TRANSFORM_FINISH;
            t->flush = 0;
            if (mode == SWS_HTTP_TRANSFORM_FINISH) {
                t->done = 1;
                return SWS_OK;
            }
        }
    }
}


sws_int_t
sws_http_transform_filter(sws_http_request_t *r, sws_http_transform_t *t, sws_chain_t *in,
    sws_http_body_filter_pt next)
{
    sws_chain_t  *out;
    sws_int_t     rc, next_rc = SWS_OK;

    if (t->done) {
        sws_http_transform_buffered(r, t, 0);
        return next(r, in);
    }

    /* our own links to the input: the caller may reuse its chain */
    if (in && sws_chain_add_copy(r->pool, &t->in, in) != SWS_OK) {
        return SWS_ERROR;
    }

    for ( ;; ) {
        sws_http_transform_reclaim(t);

        rc = sws_http_transform_step(r, t);
        if (rc == SWS_ERROR) {
            sws_http_transform_buffered(r, t, 0);
            return SWS_ERROR;
        }

        out = t->out;
        t->out = NULL;
        t->out_tail = &t->out;
        if (out == NULL && in != NULL && rc == SWS_OK) {
            break;                      /* nothing to pass yet: more input first */
        }

        next_rc = next(r, out);
        if (next_rc == SWS_ERROR) {
            sws_http_transform_buffered(r, t, 0);
            return SWS_ERROR;
        }
        /* our output buffers among the links just passed on: keep them
         * in order to know when they were sent (the links are ours; the
         * next filters copy them) */
        *t->busy_tail = out;
        while (*t->busy_tail) {
            t->busy_tail = &(*t->busy_tail)->next;
        }
        sws_http_transform_reclaim(t);

        /* out of buffers and the client took some at once: go on */
        if (rc == SWS_AGAIN && t->free != NULL) {
            in = NULL;
            continue;
        }
        break;
    }

    /* Holding input (or output to flush or finish) while the client is
     * slow: the core calls again once some output went out. */
    if (!t->done && rc == SWS_AGAIN) {
        sws_http_transform_buffered(r, t, 1);
        return SWS_AGAIN;
    }
    sws_http_transform_buffered(r, t, 0);
    return t->busy ? SWS_AGAIN : next_rc;
}
