/*
 * HTTP/3 over a QUIC connection once its handshake is done: nghttp3 reads
 * the frames and QPACK (and enforces RFC 9114 and 9204: their error codes
 * close the connection, sws_http_v3_conn.c), and calls back here with
 * each request stream's fields, body data and end. A request stream is a
 * core request (sws_http_create_request) started by the one request
 * start of all protocols (sws_http_start_request) once its head is
 * complete; its body is kept (flow control not given back) until the
 * request asks for it, then stored or pulled.
 */
#include "sws_http_v3.h"
#include "sws_http_request_head.h"

#define sws_http_v3_qc(s) \
    ((sws_http_v3_conn_t *) ((u_char *) (s) - offsetof(sws_http_v3_conn_t, session)))

void
sws_http_v3_consume(sws_http_v3_conn_t *qc, int64_t id, size_t n)
{
    if (qc == NULL || n == 0) {
        return;
    }
    ngtcp2_conn_extend_max_stream_offset(qc->conn, id, n);
    ngtcp2_conn_extend_max_offset(qc->conn, n);
    sws_http_v3_post_write(qc);
}

/* ---- streams ---- */

static sws_http_v3_stream_t *
sws_http_v3_stream_open(sws_http_v3_conn_t *qc, int64_t id)
{
    sws_http_v3_stream_t *st;
    sws_pool_t           *pool;

    pool = sws_pool_create(4096, qc->session.log);
    if (pool == NULL) {
        return NULL;
    }
    st = sws_pcalloc(pool, sizeof(sws_http_v3_stream_t));
    if (st == NULL) {
        sws_pool_destroy(pool);
        return NULL;
    }
    st->pool = pool;
    st->qc = qc;
    st->id = id;
    st->content_length = -1;
    st->preread_last = &st->preread;
    st->inflight_last = &st->inflight;
    st->pace.data = st;
    st->pace.handler = sws_http_v3_paced;
    st->r = sws_http_create_request(&qc->session, pool);
    if (st->r == NULL) {
        sws_pool_destroy(pool);
        return NULL;
    }
    st->r->connection = qc->session.connection;
    st->r->stream = st;
    st->r->proto = &sws_http_v3_proto;
    st->r->http_version = SWS_HTTP_VERSION_30;
    sws_queue_insert_tail(&qc->streams, &st->queue);
    qc->nstreams++;
    return st;
}

/* The stream is over at the QUIC level (or the connection is): the core
 * hears that the client's side of the request ended, whole or cut. */
static void
sws_http_v3_stream_end(sws_http_v3_stream_t *st)
{
    sws_http_v3_conn_t *qc = st->qc;
    sws_http_request_t *r = st->r;

    if (qc) {
        if (st->unconsumed) {
            sws_http_v3_consume(qc, st->id, st->unconsumed);
            st->unconsumed = 0;
        }
        sws_queue_remove(&st->queue);
        qc->nstreams--;
        st->qc = NULL;
        sws_http_v3_drained(qc);
    }
    st->closed = 1;
    sws_del_timer(&st->pace);
    if (r == NULL) {
        sws_pool_destroy(st->pool);
        return;
    }
    if (sws_http_request_ended(r, st->eof && st->inflight_bytes == 0 && !st->reset
                                  ? SWS_OK : SWS_ERROR)
        == SWS_AGAIN && qc)
    {
        /* over for the client, not for the server: released later */
        st->background = qc;
        qc->background++;
    }
}

void
sws_http_v3_streams_gone(sws_http_v3_conn_t *qc)
{
    sws_http_v3_stream_t *st;

    while (!sws_queue_empty(&qc->streams)) {
        st = sws_queue_data(sws_queue_head(&qc->streams), sws_http_v3_stream_t, queue);
        st->reset = 1;
        st->unconsumed = 0;
        sws_http_v3_stream_end(st);
    }
}

void
sws_http_v3_write_hooks(sws_http_v3_conn_t *qc)
{
    sws_queue_t          *q, *next;
    sws_http_v3_stream_t *st;
    sws_http_request_t   *r;

    for (q = sws_queue_head(&qc->streams); q != sws_queue_sentinel(&qc->streams); q = next) {
        next = sws_queue_next(q);
        st = sws_queue_data(q, sws_http_v3_stream_t, queue);
        if (!st->drained) {
            continue;
        }
        st->drained = 0;
        r = st->r;
        if (r == NULL || st->reset) {
            continue;
        }
        if (r->filter_buffered && sws_http_output_resume(r) == SWS_ERROR) {
            sws_http_finalize(r, SWS_ERROR);
            continue;
        }
        if (!r->done && r->write_event_handler) {
            r->write_event_handler(r);
        }
    }
}

/* ---- the head ---- */

static sws_int_t
sws_http_v3_copy(sws_pool_t *pool, sws_str_t *dst, const nghttp3_vec *v)
{
    dst->data = sws_pnalloc(pool, v->len + 1);
    if (dst->data == NULL) {
        return SWS_ERROR;
    }
    sws_memcpy(dst->data, v->base, v->len);
    dst->data[v->len] = '\0';
    dst->len = v->len;
    return SWS_OK;
}

static int
sws_http_v3_begin_headers(nghttp3_conn *conn, int64_t id, void *conn_data, void *stream_data)
{
    sws_http_v3_conn_t   *qc = conn_data;
    sws_http_v3_stream_t *st;

    (void) stream_data;
    st = sws_http_v3_stream_open(qc, id);
    if (st == NULL || nghttp3_conn_set_stream_user_data(conn, id, st) != 0) {
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

/* The limits of a request head, as HTTP/1's large_client_header_buffers
 * allow: a field at most one buffer, the head all of them. */
static int
sws_http_v3_too_large(sws_http_v3_stream_t *st, size_t field)
{
    sws_http_core_srv_conf_t *cscf = sws_http_core_srv(st->r);

    return field > cscf->large_client_header_buffer_size
           || st->header_bytes > cscf->large_client_header_buffer_size
                                 * cscf->large_client_header_buffers
           || st->r->headers_in.nelts >= SWS_HTTP_MAX_HEADERS;
}

static int
sws_http_v3_recv_header(nghttp3_conn *conn, int64_t id, int32_t token, nghttp3_rcbuf *name,
    nghttp3_rcbuf *value, uint8_t flags, void *conn_data, void *stream_data)
{
    sws_http_v3_stream_t *st = stream_data;
    sws_http_request_t   *r;
    sws_http_header_t    *h;
    nghttp3_vec           n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    sws_str_t            *slot = NULL, *ck;
    sws_int_t             rc;

    (void) conn;
    (void) id;
    (void) flags;
    (void) conn_data;
    if (st == NULL || st->r == NULL) {
        return 0;
    }
    r = st->r;
    /* RFC 9114 4.2.2: a field's size is its name, value and 32 */
    st->header_bytes += n.len + v.len + 32;
    if (st->too_large || sws_http_v3_too_large(st, n.len + v.len)) {
        if (!st->too_large) {
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent too large request headers "
                          "on HTTP/3 stream %ld", (long) st->id);
        }
        st->too_large = 1;
        return 0;
    }
    /* nghttp3 has checked the names, values and pseudo-header fields
     * (RFC 9114 4.3): what is left is taking them. */
    switch (token) {
    case NGHTTP3_QPACK_TOKEN__METHOD:
        slot = &st->method;
        break;
    case NGHTTP3_QPACK_TOKEN__PATH:
        slot = &st->path;
        break;
    case NGHTTP3_QPACK_TOKEN__SCHEME:
        slot = &st->scheme;
        break;
    case NGHTTP3_QPACK_TOKEN__AUTHORITY:
        slot = &st->authority;
        break;
    case NGHTTP3_QPACK_TOKEN__PROTOCOL:
        return 0;                       /* no extended CONNECT */
    case NGHTTP3_QPACK_TOKEN_COOKIE:
        /* crumbs of one cookie (RFC 9114 4.2.1): joined at the end */
        if (st->cookies == NULL) {
            st->cookies = sws_array_create(st->pool, 4, sizeof(sws_str_t));
        }
        ck = st->cookies ? sws_array_push(st->cookies) : NULL;
        if (ck == NULL || sws_http_v3_copy(st->pool, ck, &v) != SWS_OK) {
            return NGHTTP3_ERR_CALLBACK_FAILURE;
        }
        return 0;
    case NGHTTP3_QPACK_TOKEN_HOST:
        st->host = 1;
        break;
    }
    if (slot) {
        return sws_http_v3_copy(st->pool, slot, &v) == SWS_OK ? 0
                                                            : NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    h = sws_array_push(&r->headers_in);
    if (h == NULL || sws_http_v3_copy(st->pool, &h->name, &n) != SWS_OK
        || sws_http_v3_copy(st->pool, &h->value, &v) != SWS_OK)
    {
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    h->hash = sws_hash_key(h->name.data, h->name.len);
    r->head_length += (off_t) (n.len + v.len + 4);      /* "name: value\r\n" */
    rc = sws_http_request_header(r, h);
    if (rc == SWS_DECLINED) {
        r->headers_in.nelts--;          /* ignore_invalid_headers */
    } else if (rc != SWS_OK && st->field_error == 0) {
        st->field_error = (sws_uint_t) rc;
    }
    return 0;
}

sws_int_t
sws_http_v3_process_head(sws_http_request_t *r)
{
    sws_http_v3_stream_t *st = r->stream;

    return sws_http_request_head_of_fields(r, &st->method, &st->path, st->cookies, "3.0",
                                           st->too_large, st->field_error, st->in_closed);
}

static int
sws_http_v3_end_headers(nghttp3_conn *conn, int64_t id, int fin, void *conn_data,
    void *stream_data)
{
    sws_http_v3_stream_t *st = stream_data;
    sws_http_request_t   *r;

    (void) conn;
    (void) id;
    (void) conn_data;
    if (st == NULL || st->r == NULL || st->started) {
        return 0;
    }
    r = st->r;
    st->started = 1;
    if (fin) {
        st->in_closed = 1;
    }
    if (st->scheme.len) {
        r->schema = st->scheme;
    }
    r->host = st->authority;            /* checked with Host by the core */
    sws_http_start_request(r);
    return 0;
}

/* ---- the body ---- */

static int
sws_http_v3_body_too_large(sws_http_v3_stream_t *st)
{
    size_t max = sws_http_core_loc(st->r)->client_max_body_size;

    if (max && (size_t) st->received > max) {
        if (!st->body_error) {
            sws_log_error(SWS_LOG_ERR, st->r->log, 0,
                          "client intended to send too large body: more than %zu bytes", max);
        }
        st->body_error = 1;
        return 1;
    }
    return 0;
}

static int
sws_http_v3_recv_data(nghttp3_conn *conn, int64_t id, const uint8_t *data, size_t len,
    void *conn_data, void *stream_data)
{
    sws_http_v3_conn_t   *qc = conn_data;
    sws_http_v3_stream_t *st = stream_data;
    sws_http_request_t   *r = st ? st->r : NULL;
    sws_buf_t            *b;
    sws_chain_t          *cl;
    sws_int_t             rc;

    (void) conn;
    if (st == NULL || r == NULL || st->reset || (r->body && r->body->discard)) {
        sws_http_v3_consume(qc, id, len);
        return 0;
    }
    st->received += (off_t) len;
    if (st->reading) {
        sws_http_v3_consume(qc, id, len);
        rc = sws_http_v3_body_too_large(st) ? SWS_HTTP_REQUEST_ENTITY_TOO_LARGE
                                            : sws_http_body_store(r, data, len);
        if (rc != SWS_OK) {
            st->reading = 0;
            r->body->discard = 1;
            sws_http_finalize(r, rc);
            return 0;
        }
        r->body->received = st->received;
        return 0;
    }
    if (st->streaming && sws_http_v3_body_too_large(st)) {
        st->streaming = 0;
        r->body->discard = 1;
        sws_http_v3_consume(qc, id, st->unconsumed + len);
        st->unconsumed = 0;
        st->preread = NULL;
        st->preread_last = &st->preread;
        r->body->done(r);               /* its next pull says 413 */
        return 0;
    }
    /* Kept, its window not given back: the stream's flow control bounds
     * what waits here. */
    b = sws_create_temp_buf(st->pool, len);
    cl = sws_alloc_chain_link(st->pool);
    if (b == NULL || cl == NULL) {
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    b->last = sws_cpymem(b->last, data, len);
    cl->buf = b;
    cl->next = NULL;
    *st->preread_last = cl;
    st->preread_last = &cl->next;
    st->unconsumed += len;
    if (st->streaming) {
        r->body->received = st->received;
        r->body->done(r);
    }
    return 0;
}

static int
sws_http_v3_end_stream(nghttp3_conn *conn, int64_t id, void *conn_data, void *stream_data)
{
    sws_http_v3_stream_t    *st = stream_data;
    sws_http_request_body_t *rb;

    (void) conn;
    (void) id;
    (void) conn_data;
    if (st == NULL) {
        return 0;
    }
    st->in_closed = 1;
    rb = st->r ? st->r->body : NULL;
    if (rb == NULL || rb->finished) {
        return 0;
    }
    if (st->streaming) {
        rb->done(st->r);                /* it pulls the rest, then hears the end */
    } else if (st->reading) {
        st->reading = 0;
        rb->finished = 1;
        rb->done(st->r);
    }
    return 0;
}

sws_int_t
sws_http_v3_read_body(sws_http_request_t *r)
{
    sws_http_v3_stream_t    *st = r->stream;
    sws_http_request_body_t *rb = r->body;
    sws_chain_t             *cl;
    sws_int_t                rc;

    if (st->body_error || sws_http_v3_body_too_large(st)) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (r->expect_continue && !r->continue_sent && !st->in_closed && st->preread == NULL) {
        /* RFC 9110 10.1.1: the content is wanted, and the client waits */
        r->continue_sent = 1;
        rc = sws_http_v3_proto.send_interim(r, 100, NULL, 0);
        if (rc != SWS_OK) {
            return rc;
        }
    }
    rb->received = st->received;
    if (rb->stream) {
        st->streaming = 1;
        return SWS_OK;
    }
    for (cl = st->preread; cl; cl = cl->next) {
        rc = sws_http_body_store(r, cl->buf->pos, (size_t) (cl->buf->last - cl->buf->pos));
        if (rc != SWS_OK) {
            return rc;
        }
    }
    st->preread = NULL;
    st->preread_last = &st->preread;
    sws_http_v3_consume(st->qc, st->id, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        rb->finished = 1;
        rb->done(r);
        return SWS_OK;
    }
    st->reading = 1;
    return SWS_OK;
}

sws_int_t
sws_http_v3_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    sws_http_v3_stream_t *st = r->stream;
    size_t                got;

    *n = 0;
    if (st->body_error) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    got = sws_http_chain_copy_out(&st->preread, buf, size);
    if (st->preread == NULL) {
        st->preread_last = &st->preread;
    }
    if (got) {
        st->unconsumed -= got;
        sws_http_v3_consume(st->qc, st->id, got);   /* the client may send as much again */
    }
    *n = got;
    if (st->preread == NULL && st->in_closed) {
        r->body->finished = 1;
        st->streaming = 0;
        return SWS_DONE;
    }
    if (st->qc == NULL || st->reset) {
        return SWS_HTTP_BAD_REQUEST;    /* cut: the body will not end */
    }
    return got ? SWS_OK : SWS_AGAIN;
}

sws_int_t
sws_http_v3_discard_body(sws_http_request_t *r)
{
    sws_http_v3_stream_t *st = r->stream;

    st->preread = NULL;
    st->preread_last = &st->preread;
    sws_http_v3_consume(st->qc, st->id, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        r->body->finished = 1;
    }
    return SWS_OK;
}

/* ---- the rest of nghttp3's callbacks ---- */

static int
sws_http_v3_acked_stream_data(nghttp3_conn *conn, int64_t id, uint64_t len, void *conn_data,
    void *stream_data)
{
    (void) conn;
    (void) id;
    (void) conn_data;
    if (stream_data) {
        sws_http_v3_acked(stream_data, len);
    }
    return 0;
}

static int
sws_http_v3_h3_stream_close(nghttp3_conn *conn, int64_t id, uint64_t code, void *conn_data,
    void *stream_data)
{
    sws_http_v3_stream_t *st = stream_data;

    (void) conn;
    (void) id;
    (void) conn_data;
    if (st) {
        if (code != NGHTTP3_H3_NO_ERROR) {
            st->reset = 1;
        }
        sws_http_v3_stream_end(st);
    }
    return 0;
}

static int
sws_http_v3_deferred_consume(nghttp3_conn *conn, int64_t id, size_t consumed,
    void *conn_data, void *stream_data)
{
    (void) conn;
    (void) stream_data;
    sws_http_v3_consume(conn_data, id, consumed);
    return 0;
}

/* nghttp3 asks for STOP_SENDING on a stream (the request's rest is not
 * wanted: a malformed one, or the response is complete). */
static int
sws_http_v3_stop_sending(nghttp3_conn *conn, int64_t id, uint64_t code, void *conn_data,
    void *stream_data)
{
    sws_http_v3_conn_t *qc = conn_data;

    (void) conn;
    (void) stream_data;
    return ngtcp2_conn_shutdown_stream_read(qc->conn, id, code) == 0
           ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

/* nghttp3 asks for RESET_STREAM: our side of the stream is cut (a
 * malformed request, RFC 9114 4.1.2). */
static int
sws_http_v3_reset_stream(nghttp3_conn *conn, int64_t id, uint64_t code, void *conn_data,
    void *stream_data)
{
    sws_http_v3_conn_t   *qc = conn_data;
    sws_http_v3_stream_t *st = stream_data;

    (void) conn;
    if (st) {
        st->reset = 1;
    }
    return ngtcp2_conn_shutdown_stream_write(qc->conn, id, code) == 0
           ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static const nghttp3_callbacks sws_http_v3_h3_callbacks = {
    .acked_stream_data = sws_http_v3_acked_stream_data,
    .stream_close = sws_http_v3_h3_stream_close,
    .recv_data = sws_http_v3_recv_data,
    .deferred_consume = sws_http_v3_deferred_consume,
    .begin_headers = sws_http_v3_begin_headers,
    .recv_header = sws_http_v3_recv_header,
    .end_headers = sws_http_v3_end_headers,
    .stop_sending = sws_http_v3_stop_sending,
    .end_stream = sws_http_v3_end_stream,
    .reset_stream = sws_http_v3_reset_stream,
};

/* The protocol's start (sws_http_protocol.c): nghttp3 on the connection,
 * with our control and QPACK streams. */
void
sws_http_v3_start(sws_http_session_t *s, const u_char *pre, size_t len)
{
    sws_http_v3_conn_t       *qc = sws_http_v3_qc(s);
    sws_http_core_srv_conf_t *cscf = s->cscf;
    nghttp3_settings          settings;
    int64_t                   ctrl, qenc, qdec;

    (void) pre;
    (void) len;
    nghttp3_settings_default(&settings);
    settings.max_field_section_size = cscf->large_client_header_buffer_size
                                      * cscf->large_client_header_buffers;
    settings.qpack_max_dtable_capacity = 4096;
    settings.qpack_blocked_streams = 100;
    if (nghttp3_conn_server_new(&qc->h3, &sws_http_v3_h3_callbacks, &settings, NULL, qc)
        != 0)
    {
        qc->h3 = NULL;
        return;
    }
    nghttp3_conn_set_max_client_streams_bidi(qc->h3, qc->qa->conf->max_concurrent_streams);
    if (ngtcp2_conn_open_uni_stream(qc->conn, &ctrl, NULL) != 0
        || nghttp3_conn_bind_control_stream(qc->h3, ctrl) != 0
        || ngtcp2_conn_open_uni_stream(qc->conn, &qenc, NULL) != 0
        || ngtcp2_conn_open_uni_stream(qc->conn, &qdec, NULL) != 0
        || nghttp3_conn_bind_qpack_streams(qc->h3, qenc, qdec) != 0)
    {
        nghttp3_conn_del(qc->h3);
        qc->h3 = NULL;
    }
}

sws_int_t
sws_http_v3_h3_start(sws_http_v3_conn_t *qc)
{
    static const sws_str_t     h3 = sws_string("h3");
    const sws_http_protocol_t *p;

    /* ALPN was "h3" (GnuTLS required it); the registry says whether the
     * session's server speaks it ("http3 off"). */
    p = sws_http_protocol_find(&qc->session, SWS_HTTP_LISTENER_QUIC, &h3);
    if (p == NULL) {
        sws_log_error(SWS_LOG_INFO, qc->session.log, 0, "HTTP/3 is off for this server");
        return SWS_ERROR;
    }
    p->start(&qc->session, NULL, 0);
    return qc->h3 ? SWS_OK : SWS_ERROR;
}
