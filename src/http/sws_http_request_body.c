/*
 * Request bodies, whatever the protocol: the SDK functions and the buffers
 * the body is kept in. The protocol (r->proto) reads or drops the bytes.
 */
#include "sws_http_core.h"

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

sws_int_t
sws_http_body_store(sws_http_request_t *r, const u_char *p, size_t n)
{
    sws_http_request_body_t *rb = r->body;
    size_t                   room, size;
    sws_chain_t             *cl;

    if (rb->sink) {
        /* Streaming: straight into the consumer's buffer (n fits). */
        rb->sink = sws_cpymem(rb->sink, p, n);
        return SWS_OK;
    }

    while (n) {
        if (rb->buf == NULL || rb->buf->last == rb->buf->end) {
            size = sws_http_core_loc(r)->client_body_buffer_size;
            if (rb->rest > 0 && (off_t) size > rb->rest) {
                size = (size_t) rb->rest;
            }
            if (size < n && rb->rest > 0) {
                size = n;
            }
            rb->buf = sws_create_temp_buf(r->pool, size);
            cl = sws_alloc_chain_link(r->pool);
            if (rb->buf == NULL || cl == NULL) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            cl->buf = rb->buf;
            cl->next = NULL;
            *rb->last = cl;
            rb->last = &cl->next;
        }
        room = rb->buf->end - rb->buf->last;
        if (room > n) {
            room = n;
        }
        rb->buf->last = sws_cpymem(rb->buf->last, p, room);
        p += room;
        n -= room;
    }
    return SWS_OK;
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
    rb->done = done;
    if (rb->finished) {
        done(r);
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

sws_int_t
sws_http_discard_body(sws_http_request_t *r)
{
    if (r->body) {
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
