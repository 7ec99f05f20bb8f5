/*
 * Request bodies, whatever the protocol: the SDK functions and the buffers
 * the body is kept in. The protocol (r->proto) reads or drops the bytes.
 * Up to client_body_buffer_size stays in memory; a larger body goes to a
 * temporary file (client_body_temp_path) through one reused buffer, so an
 * upload costs the same memory whatever its size.
 */
#include <errno.h>
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_http_body_file.h"

sws_http_request_body_t *
sws_http_body_create(sws_http_request_t *r)
{
    sws_http_request_body_t *rb = sws_pcalloc(r->pool, sizeof(sws_http_request_body_t));

    if (rb) {
        rb->last = &rb->bufs;
        rb->rest = r->chunked_in ? -1 : (r->content_length_n > 0 ? r->content_length_n : 0);
        rb->finished = !sws_http_has_body(r);
        r->body = rb;
    }
    return rb;
}

/* The buffer the next body bytes go to, appended to the chain: the spare
 * one once the body is in a file, else a new one of client_body_buffer_size
 * (or less: the rest of a Content-Length body). */
static sws_int_t
sws_http_body_next_buf(sws_http_request_t *r)
{
    sws_http_request_body_t *rb = r->body;
    sws_buf_t               *b = rb->spare;
    sws_chain_t             *cl;
    size_t                   size;

    if (b) {
        b->pos = b->last = b->start;
        rb->spare = NULL;
    } else {
        size = sws_http_core_loc(r)->client_body_buffer_size;
        if (rb->rest > 0 && (off_t) size > rb->rest) {
            size = (size_t) rb->rest;
        }
        b = sws_create_temp_buf(r->pool, size);
    }
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    cl->buf = b;
    cl->next = NULL;
    *rb->last = cl;
    rb->last = &cl->next;
    rb->buf = b;
    return SWS_OK;
}

/* Everything of the body still in memory goes to the temporary file
 * (created on first use): the chain becomes the one file buffer, and the
 * buffer being filled is kept as the spare. */
static sws_int_t
sws_http_body_spill(sws_http_request_t *r)
{
    sws_http_request_body_t   *rb = r->body;
    sws_http_body_file_conf_t *bf = sws_http_body_file_conf(r);
    sws_http_temp_file_t      *tf = rb->file;
    sws_chain_t               *cl, *next;
    sws_buf_t                 *b;
    sws_uint_t                 mode;

    if (tf == NULL) {
        mode = bf->in_file_only == SWS_HTTP_BODY_FILE_ON ? SWS_HTTP_TEMP_KEEP
             : bf->in_file_only == SWS_HTTP_BODY_FILE_CLEAN ? SWS_HTTP_TEMP_CLEAN
             : SWS_HTTP_TEMP_UNLINK;
        tf = sws_http_temp_file_open(r->pool, r->log, bf->temp_path, mode);
        b = sws_calloc_buf(r->pool);
        cl = sws_alloc_chain_link(r->pool);
        if (tf == NULL || b == NULL || cl == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        b->in_file = 1;
        b->fd = tf->fd;
        cl->buf = b;
        rb->file = tf;
        rb->file_link = cl;
    }
    for (cl = rb->bufs; cl; cl = next) {
        next = cl->next;
        if (cl == rb->file_link) {
            continue;
        }
        b = cl->buf;
        if (sws_buf_in_memory(b) && b->last > b->pos
            && sws_http_temp_file_write(tf, b->pos, (size_t) (b->last - b->pos)) != SWS_OK)
        {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        sws_free_chain(r->pool, cl);
    }
    b = rb->file_link->buf;
    b->file_pos = 0;
    b->file_last = tf->offset;
    rb->file_link->next = NULL;
    rb->bufs = rb->file_link;
    rb->last = &rb->file_link->next;
    if (rb->buf) {
        rb->spare = rb->buf;
        rb->buf = NULL;
    }
    return SWS_OK;
}

sws_int_t
sws_http_body_store(sws_http_request_t *r, const u_char *p, size_t n)
{
    sws_http_request_body_t *rb = r->body;
    size_t                   room;
    sws_int_t                rc;

    if (rb->sink) {
        /* Streaming: straight into the consumer's buffer (n fits). */
        rb->sink = sws_cpymem(rb->sink, p, n);
        return SWS_OK;
    }

    while (n) {
        if (rb->buf == NULL) {
            rc = sws_http_body_next_buf(r);
        } else if (rb->buf->last == rb->buf->end) {
            /* Full, and more comes: the body does not fit in memory. */
            rc = sws_http_body_spill(r);
        } else {
            room = sws_min((size_t) (rb->buf->end - rb->buf->last), n);
            rb->buf->last = sws_cpymem(rb->buf->last, p, room);
            p += room;
            n -= room;
            continue;
        }
        if (rc != SWS_OK) {
            return rc;
        }
    }
    return SWS_OK;
}

/* The body is complete: one file buffer if any of it went to a file, if
 * client_body_in_file_only says so, or if more arrived than fits in
 * memory (HTTP/2 keeps DATA that comes before the body is asked for); else
 * memory, in one buffer with client_body_in_single_buffer. */
static sws_int_t
sws_http_body_finish(sws_http_request_t *r)
{
    sws_http_request_body_t *rb = r->body;
    sws_chain_t             *cl;
    sws_buf_t               *b;
    off_t                    size;

    if (rb->bufs == NULL) {
        return SWS_OK;
    }
    size = sws_chain_size(rb->bufs);
    if (rb->file || sws_http_body_file_conf(r)->in_file_only != SWS_HTTP_BODY_FILE_OFF
        || size > (off_t) sws_http_core_loc(r)->client_body_buffer_size)
    {
        return sws_http_body_spill(r);
    }
    if (rb->bufs->next == NULL || !sws_http_body_file_conf(r)->single_buffer) {
        return SWS_OK;
    }
    b = sws_create_temp_buf(r->pool, (size_t) size);
    if (b == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    for (cl = rb->bufs; cl; cl = cl->next) {
        b->last = sws_cpymem(b->last, cl->buf->pos, cl->buf->last - cl->buf->pos);
    }
    rb->bufs->buf = b;
    rb->bufs->next = NULL;
    rb->last = &rb->bufs->next;
    rb->buf = b;
    return SWS_OK;
}

/* Between the protocol (the body is all there) and the caller of
 * sws_http_read_body. */
static void
sws_http_body_read_done(sws_http_request_t *r)
{
    sws_int_t rc = sws_http_body_finish(r);

    if (rc != SWS_OK) {
        sws_http_finalize(r, rc);
        return;
    }
    r->body->read_done(r);
}

sws_int_t
sws_http_read_body(sws_http_request_t *r, sws_http_event_handler_pt done)
{
    sws_http_request_body_t *rb = r->body;

    if (rb && rb->discard) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;   /* discarded already */
    }
    if (rb == NULL) {
        rb = sws_http_body_create(r);
        if (rb == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    rb->done = sws_http_body_read_done;
    rb->read_done = done;
    if (rb->finished) {
        sws_http_body_read_done(r);
        return SWS_OK;
    }
    return r->proto->read_body(r);
}

sws_int_t
sws_http_read_body_stream(sws_http_request_t *r, sws_http_event_handler_pt handler)
{
    sws_http_request_body_t *rb = r->body;

    if (rb && (rb->discard || rb->bufs)) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;   /* discarded or read already */
    }
    if (rb == NULL) {
        rb = sws_http_body_create(r);
        if (rb == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    rb->stream = 1;
    rb->done = handler;
    if (rb->finished) {
        return SWS_OK;           /* the first pull says SWS_DONE */
    }
    return r->proto->read_body(r);
}

sws_int_t
sws_http_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    *n = 0;
    if (r->body == NULL || !r->body->stream) {
        return SWS_ERROR;
    }
    if (r->body->finished) {
        return SWS_DONE;
    }
    return r->proto->read_body_data(r, buf, size, n);
}

sws_chain_t *
sws_http_request_body(sws_http_request_t *r)
{
    return r->body ? r->body->bufs : NULL;
}

ssize_t
sws_http_request_body_copy(sws_http_request_t *r, off_t offset, u_char *buf, size_t size)
{
    sws_chain_t *cl;
    sws_buf_t   *b;
    u_char      *p = buf;
    off_t        len;
    ssize_t      n, got;

    for (cl = sws_http_request_body(r); cl && size; cl = cl->next) {
        b = cl->buf;
        len = sws_buf_special(b) ? 0 : sws_buf_size(b);
        if (offset >= len) {
            offset -= len;
            continue;
        }
        len = sws_min(len - offset, (off_t) size);
        if (sws_buf_in_memory(b)) {
            sws_memcpy(p, b->pos + offset, (size_t) len);
        } else {
            for (n = 0; n < len; n += got) {
                got = pread(b->fd, p + n, (size_t) (len - n), b->file_pos + offset + n);
                if (got <= 0) {
                    if (got == -1 && errno == EINTR) {
                        got = 0;
                        continue;
                    }
                    sws_log_error(SWS_LOG_CRIT, r->log, got == 0 ? EIO : errno,
                                  "pread() of the request body failed");
                    return -1;
                }
            }
        }
        p += len;
        size -= (size_t) len;
        offset = 0;
    }
    return p - buf;
}

sws_int_t
sws_http_discard_body(sws_http_request_t *r)
{
    if (r->body) {
        return SWS_OK;
    }
    if (!sws_http_has_body(r)) {
        /* Nothing will come to discard: no body object either (a GET's
         * usual case). A later read makes one that is finished at once. */
        return SWS_OK;
    }
    if (sws_http_body_create(r) == NULL) {
        return SWS_ERROR;
    }
    r->body->discard = 1;
    if (r->body->finished || r->proto == NULL) {
        return SWS_OK;
    }
    return r->proto->discard_body(r);
}
