/*
 * Request bodies over HTTP/1.1: Content-Length or chunked, read through the
 * connection buffer (so bytes after the body stay there for the next
 * pipelined request), stored by sws_http_body_store (a memory buffer, a
 * temporary file beyond client_body_buffer_size) or dropped when
 * discarded.
 */
#include "sws_http_h1.h"

static const char sws_continue[] = "HTTP/1.1 100 Continue\r\n\r\n";

/* Take body bytes from [pos, last); *used says how many were body. */
static sws_int_t
sws_http1_body_consume(sws_http_request_t *r, u_char *pos, u_char *last, size_t *used)
{
    sws_http_request_body_t *rb = r->body;
    size_t                   max = sws_http_core_loc(r)->client_max_body_size;
    u_char                  *start = pos;
    size_t                   n;
    sws_int_t                rc;

    if (!r->chunked_in) {
        n = sws_min((off_t) (last - pos), rb->rest);
        if (rb->sink) {
            n = sws_min(n, (size_t) (rb->sink_end - rb->sink));
        }
        if (!rb->discard && n && (rc = sws_http_body_store(r, pos, n)) != SWS_OK) {
            return rc;
        }
        rb->rest -= n;
        rb->received += n;
        pos += n;
        if (rb->rest == 0) {
            rb->finished = 1;
        }
        *used = pos - start;
        return SWS_OK;
    }

    while (pos < last && !rb->finished) {
        if (rb->sink && rb->sink == rb->sink_end) {
            break;                       /* the consumer's buffer is full */
        }
        rc = sws_http_parse_chunked(&rb->chunked, &pos, last);
        if (rc == SWS_OK) {
            n = sws_min((off_t) (last - pos), rb->chunked.size);
            if (rb->sink) {
                n = sws_min(n, (size_t) (rb->sink_end - rb->sink));
            }
            if (max && (size_t) (rb->received + n) > max) {
                sws_log_error(SWS_LOG_ERR, r->log, 0,
                              "client intended to send too large chunked body");
                return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
            }
            if (!rb->discard && (rc = sws_http_body_store(r, pos, n)) != SWS_OK) {
                return rc;
            }
            pos += n;
            rb->chunked.size -= n;
            rb->received += n;
            continue;
        }
        if (rc == SWS_DONE) {
            rb->finished = 1;
            break;
        }
        if (rc == SWS_AGAIN) {
            break;
        }
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid chunked body");
        return SWS_HTTP_BAD_REQUEST;
    }
    *used = pos - start;
    return SWS_OK;
}

/* The buffer body bytes are read into once the head's buffer is used up.
 * Not the head's buffer itself: the request line and headers (which the
 * request points into) must survive the body. Bytes read past the body (a
 * pipelined request) are carried over by sws_http1_request_done. */
static sws_buf_t *
sws_http1_body_buf(sws_http_request_t *r)
{
    sws_http_request_body_t *rb = r->body;
    sws_http1_conn_t        *hc = r->stream;

    if (rb->rbuf == NULL) {
        rb->rbuf = sws_create_temp_buf(r->pool, sws_http_core_loc(r)->client_body_buffer_size);
        if (rb->rbuf == NULL) {
            return NULL;
        }
    }
    rb->rbuf->pos = rb->rbuf->last = rb->rbuf->start;
    hc->buf = rb->rbuf;
    return rb->rbuf;
}

/* Read from the connection until the body is complete or the socket is
 * empty. SWS_OK (finished), SWS_AGAIN, or an HTTP status / SWS_ERROR. */
static sws_int_t
sws_http1_body_read(sws_http_request_t *r)
{
    sws_connection_t *c = r->connection;
    sws_http1_conn_t *hc = r->stream;
    sws_buf_t        *b = hc->buf;
    ssize_t           n;
    size_t            used;
    sws_int_t         rc;

    while (!r->body->finished) {
        if (b->pos < b->last) {
            rc = sws_http1_body_consume(r, b->pos, b->last, &used);
            if (rc != SWS_OK) {
                return rc;
            }
            b->pos += used;
            continue;
        }
        b = sws_http1_body_buf(r);
        if (b == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        n = c->recv(c, b->last, b->end - b->last);
        if (n == SWS_AGAIN) {
            return SWS_AGAIN;
        }
        if (n == 0) {
            sws_log_error(SWS_LOG_INFO, c->log, 0, "client closed the connection while "
                          "sending the request body");
            return SWS_HTTP_BAD_REQUEST;
        }
        if (n == SWS_ERROR) {
            return SWS_ERROR;
        }
        b->last += n;
    }
    return SWS_OK;
}

static void
sws_http1_body_handler(sws_event_t *rev)
{
    sws_connection_t        *c = rev->data;
    sws_http1_conn_t        *hc = c->data;
    sws_http_request_t      *r = hc->r;
    sws_http_request_body_t *rb = r->body;
    sws_int_t                rc;

    if (rev->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out sending the request body");
        r->keepalive = 0;
        rev->handler = sws_http1_block_reading_handler;
        sws_http_finalize(r, SWS_HTTP_REQUEST_TIME_OUT);
        return;
    }
    rc = sws_http1_body_read(r);
    if (rc == SWS_AGAIN) {
        sws_add_timer(rev, sws_http_core_loc(r)->client_body_timeout);
        return;
    }
    sws_del_timer(rev);
    rev->handler = sws_http1_block_reading_handler;
    if (rc != SWS_OK) {
        r->keepalive = 0;
        sws_http_finalize(r, rc);
        return;
    }
    rb->done(r);
}

static void
sws_http1_send_continue(sws_http_request_t *r)
{
    sws_connection_t *c = r->connection;
    sws_http1_conn_t *hc = r->stream;
    sws_buf_t        *b;
    sws_chain_t      *cl, *rest;

    if (!r->expect_continue || r->continue_sent || hc->buf->pos < hc->buf->last) {
        return;
    }
    r->continue_sent = 1;
    /* Through the connection (TLS too). 25 bytes on a socket with nothing
     * queued almost always go at once; what does not goes first with the
     * response (sws_http1_send_header appends to r->out). */
    b = sws_calloc_buf(r->pool);
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return;
    }
    b->pos = b->start = (u_char *) sws_continue;
    b->last = b->end = (u_char *) sws_continue + sizeof(sws_continue) - 1;
    b->memory = 1;
    cl->buf = b;
    cl->next = NULL;
    rest = c->write->ready ? c->send_chain(c, cl, 0) : cl;
    if (rest == SWS_CHAIN_ERROR) {
        c->error = 1;
        r->keepalive = 0;
        return;
    }
    r->out = rest;
}

/* Streaming: tell the consumer; it pulls (or learns about the timeout). */
static void
sws_http1_body_stream_handler(sws_event_t *rev)
{
    sws_connection_t        *c = rev->data;
    sws_http1_conn_t        *hc = c->data;
    sws_http_request_t      *r = hc->r;
    sws_http_request_body_t *rb = r->body;

    if (rev->timedout) {
        rev->timedout = 0;
        rb->timedout = 1;
    }
    rb->done(r);
}

sws_int_t
sws_http1_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    sws_connection_t        *c = r->connection;
    sws_http1_conn_t        *hc = r->stream;
    sws_http_request_body_t *rb = r->body;
    sws_buf_t               *b = hc->buf;
    size_t                   used;
    ssize_t                  got;
    sws_int_t                rc = SWS_OK;

    *n = 0;
    if (rb->finished) {
        return SWS_DONE;
    }
    if (rb->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out sending the request body");
        r->keepalive = 0;
        return SWS_HTTP_REQUEST_TIME_OUT;
    }

    rb->sink = buf;
    rb->sink_end = buf + size;
    while (!rb->finished && rb->sink < rb->sink_end) {
        if (b->pos < b->last) {
            rc = sws_http1_body_consume(r, b->pos, b->last, &used);
            if (rc != SWS_OK) {
                break;
            }
            b->pos += used;
            continue;
        }
        if (rb->sink > buf && !c->read->ready) {
            break;                    /* give what we have, don't wait */
        }
        if (!r->chunked_in) {
            /* A length-delimited body goes straight into the caller's buffer. */
            got = c->recv(c, rb->sink, (size_t) sws_min((off_t) (rb->sink_end - rb->sink),
                                                        rb->rest));
            if (got > 0) {
                rb->sink += got;
                rb->rest -= got;
                rb->received += got;
                rb->finished = rb->rest == 0;
                continue;
            }
        } else {
            b = sws_http1_body_buf(r);
            if (b == NULL) {
                rc = SWS_HTTP_INTERNAL_SERVER_ERROR;
                break;
            }
            got = c->recv(c, b->last, b->end - b->last);
            if (got > 0) {
                b->last += got;
                continue;
            }
        }
        if (got == SWS_AGAIN) {
            rc = SWS_AGAIN;
            break;
        }
        if (got == 0) {
            sws_log_error(SWS_LOG_INFO, c->log, 0, "client closed the connection while "
                          "sending the request body");
            rc = SWS_HTTP_BAD_REQUEST;
        } else {
            rc = SWS_ERROR;
        }
        break;
    }
    *n = rb->sink - buf;
    rb->sink = NULL;
    rb->sink_end = NULL;

    if (rc != SWS_OK && rc != SWS_AGAIN) {
        r->keepalive = 0;
        sws_del_timer(c->read);
        c->read->handler = sws_http1_block_reading_handler;
        return rc;
    }
    if (rb->finished) {
        sws_del_timer(c->read);
        c->read->handler = sws_http1_block_reading_handler;
        return SWS_DONE;
    }
    if (*n) {
        /* Progress: the client is not idle. */
        sws_del_timer(c->read);
        return SWS_OK;
    }
    sws_add_timer(c->read, sws_http_core_loc(r)->client_body_timeout);
    return SWS_AGAIN;
}

sws_int_t
sws_http1_read_body(sws_http_request_t *r)
{
    sws_connection_t *c = r->connection;
    sws_int_t         rc;

    sws_http1_send_continue(r);
    if (r->body->stream) {
        /* Not the keep-alive timer left armed through the request: the
         * body timer is armed when the consumer waits on the client. */
        sws_del_timer(c->read);
        c->read->handler = sws_http1_body_stream_handler;
        return SWS_OK;
    }
    rc = sws_http1_body_read(r);
    if (rc == SWS_OK) {
        r->body->done(r);
        return SWS_OK;
    }
    if (rc == SWS_AGAIN) {
        c->read->handler = sws_http1_body_handler;
        sws_add_timer(c->read, sws_http_core_loc(r)->client_body_timeout);
        return SWS_OK;
    }
    r->keepalive = 0;
    return rc;
}

sws_int_t
sws_http1_discard_some(sws_http_request_t *r)
{
    sws_int_t rc;

    if (r->body == NULL) {
        if (sws_http_discard_body(r) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (r->body == NULL || r->body->finished) {     /* none, or read */
        return SWS_OK;
    }
    if (r->expect_continue && !r->continue_sent) {
        return SWS_AGAIN;        /* the client waits: it will not send it */
    }
    r->body->discard = 1;
    rc = sws_http1_body_read(r);
    return rc == SWS_OK ? SWS_OK : (rc == SWS_AGAIN ? SWS_AGAIN : SWS_ERROR);
}

sws_int_t
sws_http1_discard_body(sws_http_request_t *r)
{
    sws_http1_conn_t *hc = r->stream;
    size_t           used;
    sws_int_t        rc;

    /* What already arrived goes now; the rest after the response. A body
     * that is already malformed or too large is answered as such. */
    rc = sws_http1_body_consume(r, hc->buf->pos, hc->buf->last, &used);
    if (rc != SWS_OK) {
        r->keepalive = 0;
        return rc;
    }
    hc->buf->pos += used;
    return SWS_OK;
}
