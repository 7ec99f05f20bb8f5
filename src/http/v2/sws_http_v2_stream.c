/*
 * HTTP/2 streams as requests: HEADERS become an ordinary request object
 * (pseudo-header fields map to method, target, authority and scheme; other
 * fields, already lower-case, go to headers_in), DATA frames become its
 * body. nghttp2 validates the fields (RFC 9113 8.2, 8.3): connection-
 * specific fields, upper-case names, missing or repeated pseudo-header
 * fields, TE other than "trailers", content-length against the DATA all
 * reset the stream with PROTOCOL_ERROR. The limits and abuse checks are
 * here, and the few RFC 9113 checks nghttp2 leaves out: a new stream below
 * one opened (5.1.1), an initial window overflowing a stream's (6.9.2), a
 * Host differing from :authority (8.3.1).
 */
#include "sws_http_v2.h"
#include "sws_conn_stats.h"
#include "../sws_http_request_head.h"

#define SWS_H2_FLOOD_WINDOW  1000      /* ms */
#define SWS_H2_FLOOD_MAX     1000      /* control frames per window */
#define SWS_H2_BAD_STREAMS   16        /* refused header blocks per connection */
#define SWS_H2_RST_RATE      33        /* client resets a second, after the burst */

static void sws_http_v2_stream_timeout(sws_event_t *ev);

sws_http_v2_stream_t *
sws_http_v2_find_stream(sws_http_v2_conn_t *h2c, int32_t id)
{
    sws_http_v2_stream_t *st = h2c->last_st;

    /* Ids are never reused, and a stream leaves the cache as it closes. */
    if (st && st->id == id) {
        return st;
    }
    st = nghttp2_session_get_stream_user_data(h2c->session, id);
    if (st) {
        h2c->last_st = st;
    }
    return st;
}


/* ---- abuse accounting ---- */

/* A connection error of ours (nghttp2 does not see it): the read handler
 * ends the session with this code. */
static int
sws_http_v2_conn_error(sws_http_v2_conn_t *h2c, uint32_t code, const char *what)
{
    sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                  "client sent %s: closing the HTTP/2 connection", what);
    h2c->calm = code;
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int
sws_http_v2_calm(sws_http_v2_conn_t *h2c, const char *what)
{
    return sws_http_v2_conn_error(h2c, NGHTTP2_ENHANCE_YOUR_CALM, what);
}

/* ---- what nghttp2 lets pass ---- */

/* RFC 9113 5.1.1: a HEADERS opening a stream below one already opened is
 * a PROTOCOL_ERROR. nghttp2 ignores a HEADERS on a stream it does not know
 * (it might be a late trailer); it remembers closed streams, so one it
 * neither has nor had (or has as idle, from a PRIORITY frame) was never
 * opened. After streams were refused (never opened, but their trailers
 * may still come) this is not told apart. */
static int
sws_http_v2_check_stream_id(sws_http_v2_conn_t *h2c, nghttp2_session *session, int32_t id)
{
    nghttp2_stream *stream;

    if (!(id & 1) || id >= h2c->last_stream_id || h2c->refused) {
        return 0;
    }
    stream = nghttp2_session_find_stream(session, id);
    if (stream == NULL || nghttp2_stream_get_state(stream) == NGHTTP2_STREAM_STATE_IDLE) {
        return sws_http_v2_conn_error(h2c, NGHTTP2_PROTOCOL_ERROR,
                                      "a new stream with a lower identifier");
    }
    return 0;
}

/* Before a SETTINGS frame: the largest send window of a stream, to see a
 * new SETTINGS_INITIAL_WINDOW_SIZE take one past 2^31-1. RFC 9113 6.9.2
 * makes that a connection error (nghttp2 resets the stream only). */
static void
sws_http_v2_settings_begin(sws_http_v2_conn_t *h2c, nghttp2_session *session)
{
    sws_queue_t          *q;
    sws_http_v2_stream_t *st;
    int32_t               w;

    h2c->peer_window = (int32_t) nghttp2_session_get_remote_settings(session,
                                     NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE);
    h2c->peer_window_max = INT32_MIN;
    for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams);
         q = sws_queue_next(q))
    {
        st = sws_queue_data(q, sws_http_v2_stream_t, queue);
        w = nghttp2_session_get_stream_remote_window_size(session, st->id);
        if (w > h2c->peer_window_max) {
            h2c->peer_window_max = w;
        }
    }
}

static int
sws_http_v2_settings_recv(sws_http_v2_conn_t *h2c, const nghttp2_settings *settings)
{
    int64_t  cur = h2c->peer_window, max = h2c->peer_window_max;
    size_t   i;

    for (i = 0; i < settings->niv; i++) {
        if (settings->iv[i].settings_id != NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE) {
            continue;
        }
        max += (int64_t) settings->iv[i].value - cur;
        cur = settings->iv[i].value;
        if (max > NGHTTP2_MAX_WINDOW_SIZE) {
            return sws_http_v2_conn_error(h2c, NGHTTP2_FLOW_CONTROL_ERROR,
                                          "an initial window size overflowing a stream window");
        }
    }
    return 0;
}

static int
sws_http_v2_on_begin_frame(nghttp2_session *session, const nghttp2_frame_hd *hd,
    void *user_data)
{
    sws_http_v2_conn_t *h2c = user_data;
    sws_msec_t          now;
    int                 control = 0;

    switch (hd->type) {
    case NGHTTP2_HEADERS:
        h2c->block_bytes = hd->length;
        if (sws_http_v2_check_stream_id(h2c, session, hd->stream_id) != 0) {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        break;
    case NGHTTP2_CONTINUATION:
        /* nghttp2 limits how many; this limits how much, whatever HPACK
         * makes of it. */
        h2c->block_bytes += hd->length;
        if (h2c->block_bytes > h2c->max_header_size + 16384) {
            return sws_http_v2_calm(h2c, "a too large header block (CONTINUATION flood)");
        }
        break;
    case NGHTTP2_SETTINGS:
        if (!(hd->flags & NGHTTP2_FLAG_ACK)) {
            sws_http_v2_settings_begin(h2c, session);
        }
        control = 1;
        break;
    case NGHTTP2_PING:
    case NGHTTP2_PRIORITY:
        control = 1;
        break;
    case NGHTTP2_DATA:
        control = hd->length == 0 && !(hd->flags & NGHTTP2_FLAG_END_STREAM);
        break;
    case NGHTTP2_RST_STREAM:
        /* Rapid reset: streams opened and reset in a loop make the server
         * start work it throws away. */
        now = sws_current_msec();
        h2c->rst_tokens = (sws_uint_t) sws_min((sws_msec_t) h2c->rst_burst * 1000,
                              (sws_msec_t) h2c->rst_tokens
                              + (now - h2c->rst_last) * SWS_H2_RST_RATE);
        h2c->rst_last = now;
        if (h2c->rst_tokens < 1000) {
            return sws_http_v2_calm(h2c, "too many stream resets (rapid reset)");
        }
        h2c->rst_tokens -= 1000;
        break;
    }
    if (control) {
        now = sws_current_msec();
        if (now - h2c->flood_start >= SWS_H2_FLOOD_WINDOW) {
            h2c->flood_start = now;
            h2c->flood_frames = 0;
        }
        if (++h2c->flood_frames > SWS_H2_FLOOD_MAX) {
            return sws_http_v2_calm(h2c, "too many control frames (flood)");
        }
    }
    return 0;
}

/* ---- headers ---- */

static int
sws_http_v2_on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    sws_http_v2_conn_t   *h2c = user_data;
    sws_connection_t     *c = h2c->connection;
    sws_http_v2_stream_t *st;
    sws_pool_t           *pool;

    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) {
        return 0;                  /* trailers: no new stream */
    }
    pool = sws_pool_create(4096, c->log);
    if (pool == NULL) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    st = sws_pcalloc(pool, sizeof(sws_http_v2_stream_t));
    if (st == NULL) {
        sws_pool_destroy(pool);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    st->pool = pool;
    st->h2c = h2c;
    st->id = frame->hd.stream_id;
    st->preread_last = &st->preread;
    st->rev.data = st;
    st->rev.handler = sws_http_v2_stream_timeout;
    st->wev.data = st;
    st->wev.write = 1;
    st->wev.handler = sws_http_v2_stream_timeout;
    st->pace.data = st;
    st->pace.handler = sws_http_v2_paced;
    st->r = sws_http_create_request(h2c->client, pool);
    if (st->r == NULL
        || nghttp2_session_set_stream_user_data(session, st->id, st) != 0)
    {
        sws_pool_destroy(pool);
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    st->r->connection = c;
    st->r->stream = st;
    sws_conn_stat_plain(h2_streams, 1);
    st->r->proto = &sws_http_v2_proto;
    st->r->http_version = SWS_HTTP_VERSION_20;
    sws_queue_insert_tail(&h2c->streams, &st->queue);
    h2c->nstreams++;
    if (st->id > h2c->last_stream_id) {
        h2c->last_stream_id = st->id;
    }
    /* The whole header block must come within client_header_timeout: the
     * timer is armed by the read handler if the block is not whole yet. */
    h2c->headers_st = st;
    return 0;
}

static int
sws_http_v2_copy(sws_pool_t *pool, sws_str_t *dst, const uint8_t *src, size_t len)
{
    dst->data = sws_pnalloc(pool, len + 1);
    if (dst->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(dst->data, src, len);
    dst->data[len] = '\0';
    dst->len = len;
    return SWS_OK;
}

static int
sws_http_v2_on_header(nghttp2_session *session, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen,
    uint8_t flags, void *user_data)
{
    sws_http_v2_conn_t   *h2c = user_data;
    sws_http_v2_stream_t *st = sws_http_v2_find_stream(user_data, frame->hd.stream_id);
    sws_http_request_t   *r;
    sws_http_header_t    *h;
    sws_str_t            *slot = NULL, *ck;
    sws_int_t             rc;

    (void) flags;

    if (st == NULL || st->r == NULL) {
        return 0;
    }
    /* RFC 9113 6.5.2: the size of a field is its name, value and 32. */
    st->header_bytes += namelen + valuelen + 32;
    if (namelen + valuelen > h2c->max_field_size || st->header_bytes > h2c->max_header_size
        || st->r->headers_in.nelts >= SWS_HTTP_MAX_HEADERS)
    {
        if (!st->too_large) {
            st->too_large = 1;
            sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                          "client sent too large request headers on stream %d",
                          (int) st->id);
            if (++h2c->bad_streams > SWS_H2_BAD_STREAMS) {
                return sws_http_v2_calm(h2c, "too many too large header blocks");
            }
        }
        if (st->header_bytes > 4 * h2c->max_header_size) {
            /* Decoding on (HPACK state), but no more of it for us. */
            nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id,
                                      NGHTTP2_ENHANCE_YOUR_CALM);
            st->reset = 1;
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        return 0;
    }
    if (frame->headers.cat != NGHTTP2_HCAT_REQUEST || st->too_large) {
        return 0;                  /* trailers are accepted and dropped */
    }

    r = st->r;
    if (namelen && name[0] == ':') {
        if (namelen == 7 && memcmp(name, ":method", 7) == 0) {
            slot = &st->method;
        } else if (namelen == 5 && memcmp(name, ":path", 5) == 0) {
            slot = &st->path;
        } else if (namelen == 7 && memcmp(name, ":scheme", 7) == 0) {
            slot = &st->scheme;
        } else if (namelen == 10 && memcmp(name, ":authority", 10) == 0) {
            slot = &st->authority;
        } else {
            return 0;              /* nghttp2 refuses the others */
        }
        return sws_http_v2_copy(st->pool, slot, value, valuelen) == SWS_OK
               ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }

    /* Crumbs of one cookie (RFC 9113 8.2.3): joined at the end. */
    if (namelen == 6 && memcmp(name, "cookie", 6) == 0) {
        if (st->cookies == NULL) {
            st->cookies = sws_array_create(st->pool, 4, sizeof(sws_str_t));
        }
        ck = st->cookies ? sws_array_push(st->cookies) : NULL;
        if (ck == NULL || sws_http_v2_copy(st->pool, ck, value, valuelen) != SWS_OK) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        return 0;
    }

    h = sws_array_push(&r->headers_in);
    if (h == NULL || sws_http_v2_copy(st->pool, &h->name, name, namelen) != SWS_OK
        || sws_http_v2_copy(st->pool, &h->value, value, valuelen) != SWS_OK)
    {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    h->hash = sws_hash_key(h->name.data, h->name.len);
    r->head_length += (off_t) (namelen + valuelen + 4);   /* "name: value\r\n" */
    /* A field the core refuses (a second Host ...) is answered once the
     * block is complete: HPACK decoding must go on to its end. */
    rc = sws_http_request_header(r, h);
    if (rc == SWS_DECLINED) {
        r->headers_in.nelts--;           /* ignore_invalid_headers */
    } else if (rc != SWS_OK && st->field_error == 0) {
        st->field_error = (sws_uint_t) rc;
    }
    return 0;
}

static int
sws_http_v2_on_invalid_header(nghttp2_session *session, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value, size_t valuelen,
    uint8_t flags, void *user_data)
{
    sws_http_v2_conn_t *h2c = user_data;

    (void) session;
    (void) value;
    (void) valuelen;
    (void) flags;

    sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                  "client sent invalid header \"%.*s\" on stream %d: "
                  "reset with PROTOCOL_ERROR",
                  (int) sws_min(namelen, 64), name, (int) frame->hd.stream_id);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
}

/* ---- the request ---- */

static sws_int_t
sws_http_v2_join_cookies(sws_http_v2_stream_t *st)
{
    sws_str_t         *ck = st->cookies->elts;
    sws_http_header_t *h;
    sws_uint_t         i;
    size_t             len = 0;
    u_char            *p;

    for (i = 0; i < st->cookies->nelts; i++) {
        len += ck[i].len + 2;
    }
    h = sws_array_push(&st->r->headers_in);
    p = sws_pnalloc(st->pool, len);
    if (h == NULL || p == NULL) {
        return SWS_ERROR;
    }
    sws_str_set(&h->name, "cookie");
    h->hash = sws_hash_key(h->name.data, h->name.len);
    h->value.data = p;
    for (i = 0; i < st->cookies->nelts; i++) {
        if (i) {
            *p++ = ';';
            *p++ = ' ';
        }
        p = sws_cpymem(p, ck[i].data, ck[i].len);
    }
    h->value.len = p - h->value.data;
    return SWS_OK;
}

/* An authority without the default port of the scheme (RFC 3986 6.2.3). */
static sws_str_t
sws_http_v2_authority(const sws_str_t *a, const sws_str_t *scheme)
{
    sws_str_t out = *a;
    size_t    n;

    n = (scheme->len == 5 && memcmp(scheme->data, "https", 5) == 0) ? 4 : 3;
    if (out.len > n && memcmp(out.data + out.len - n, n == 4 ? ":443" : ":80", n) == 0) {
        out.len -= n;
    } else if (out.len && out.data[out.len - 1] == ':') {
        out.len--;
    }
    return out;
}

/* RFC 9113 8.3.1: a Host that names another authority than :authority
 * makes the request malformed (nghttp2 takes both). */
static int
sws_http_v2_host_differs(sws_http_v2_stream_t *st)
{
    sws_str_t a, h;

    if (st->authority.len == 0 || st->r->h_host == NULL) {
        return 0;
    }
    a = sws_http_v2_authority(&st->authority, &st->scheme);
    h = sws_http_v2_authority(st->r->h_host, &st->scheme);
    return !sws_str_caseeq(&a, &h);
}

/* The request line, as HTTP/1 would have sent it: the same parser checks
 * the method and target, $request shows it. */
static sws_int_t
sws_http_v2_request_line(sws_http_v2_stream_t *st)
{
    sws_http_request_t      *r = st->r;
    sws_http_request_line_t  rl;
    u_char                  *p, *start;
    sws_int_t                rc;

    start = sws_pnalloc(st->pool, st->method.len + st->path.len + 11);
    if (start == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = sws_cpymem(start, st->method.data, st->method.len);
    *p++ = ' ';
    p = sws_cpymem(p, st->path.data, st->path.len);
    p = sws_cpymem(p, " HTTP/1.1", 9);
    r->request_line.data = start;
    r->request_line.len = p - start;
    r->head_length += (off_t) r->request_line.len + 2;
    rc = sws_http_parse_request_line(&rl, start, p);
    memcpy(p - 3, "2.0", 3);            /* what $request shows */
    if (rc != SWS_OK) {
        return SWS_HTTP_BAD_REQUEST;
    }
    if (rl.host.len) {
        return SWS_HTTP_BAD_REQUEST;    /* :path is never absolute */
    }
    sws_http_request_line_take(r, &rl);
    return SWS_OK;
}

/* HTTP/2's part of the request start (sws_http_process_request_headers
 * has chosen the server by :authority or Host and parsed content-length):
 * the limits, the request line from the pseudo-header fields, and the
 * body, which is DATA frames until END_STREAM (RFC 9113 8.1). */
sws_int_t
sws_http_v2_process_head(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;
    sws_int_t             rc;

    if (st->too_large) {
        return SWS_HTTP_HEADERS_TOO_LARGE;
    }
    if (st->field_error) {
        return (sws_int_t) st->field_error;
    }
    if (st->cookies && sws_http_v2_join_cookies(st) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (st->method.len == 7 && memcmp(st->method.data, "CONNECT", 7) == 0) {
        /* No :path (RFC 9113 8.5): no request line; refused as CONNECT. */
        sws_str_set(&r->method_name, "CONNECT");
        r->method = SWS_HTTP_CONNECT;
        return SWS_OK;
    }
    rc = sws_http_v2_request_line(st);
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid request target \"%.*s\"",
                      (int) sws_min(st->path.len, 64), st->path.data);
        return rc;
    }
    if (!st->in_closed && r->content_length_n <= 0) {
        /* DATA frames will come: a body of unknown length. */
        r->content_length_n = -1;
        r->chunked_in = 1;
    }
    if (st->in_closed && r->content_length_n > 0) {
        return SWS_HTTP_BAD_REQUEST;    /* nghttp2 resets this; be safe */
    }
    return SWS_OK;
}

static void
sws_http_v2_start(sws_http_v2_stream_t *st)
{
    sws_http_v2_conn_t       *h2c = st->h2c;
    sws_http_request_t       *r = st->r;
    sws_http_core_loc_conf_t *clcf;
    sws_uint_t                max;

    sws_del_timer(&st->rev);
    if (h2c->headers_st == st) {
        h2c->headers_st = NULL;
    }
    if (sws_http_v2_host_differs(st)) {
        sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                      "client sent :authority \"%.*s\" and host \"%.*s\" on stream %d: "
                      "reset with PROTOCOL_ERROR",
                      (int) sws_min(st->authority.len, 64), st->authority.data,
                      (int) sws_min(r->h_host->len, 64), r->h_host->data, (int) st->id);
        sws_http_v2_reset(st, NGHTTP2_PROTOCOL_ERROR);
        return;
    }
    st->started = 1;
    h2c->processed++;
    clcf = h2c->client->cscf->ctx->loc_conf[sws_http_core_module.index];
    max = h2c->conf->max_requests != SWS_UNSET_UINT ? h2c->conf->max_requests
                                                    : clcf->keepalive_requests;
    if (h2c->processed >= max) {
        /* This one is served; the client opens a new connection after. */
        sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);
    }

    if (st->scheme.len) {
        r->schema = st->scheme;
    }
    r->host = st->authority;          /* validated with Host by the core */
    sws_http_start_request(r);
}

/* ---- the body ---- */

static void
sws_http_v2_consume(sws_http_v2_stream_t *st, size_t n)
{
    if (n) {
        nghttp2_session_consume(st->h2c->session, st->id, n);
        sws_http_v2_post_send(st->h2c);
    }
}

static void
sws_http_v2_body_end(sws_http_v2_stream_t *st)
{
    sws_http_request_t      *r = st->r;
    sws_http_request_body_t *rb = r ? r->body : NULL;

    st->in_closed = 1;
    if (rb == NULL || rb->finished) {
        return;
    }
    if (st->streaming) {
        /* The consumer learns of the end when it has pulled the rest. */
        sws_del_timer(&st->rev);
        rb->done(r);
        return;
    }
    rb->finished = 1;
    if (st->reading) {
        st->reading = 0;
        sws_del_timer(&st->rev);
        rb->done(r);
    }
}

static sws_int_t
sws_http_v2_body_too_large(sws_http_v2_stream_t *st)
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
sws_http_v2_on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id,
    const uint8_t *data, size_t len, void *user_data)
{
    sws_http_v2_stream_t *st = sws_http_v2_find_stream(user_data, stream_id);
    sws_http_request_t   *r;
    sws_buf_t            *b;
    sws_chain_t          *cl;
    sws_int_t             rc;

    (void) flags;
    (void) user_data;

    if (st == NULL || st->r == NULL || st->reset) {
        /* Nobody wants it, but the connection's window must move on. */
        nghttp2_session_consume_connection(session, len);
        return 0;
    }
    r = st->r;
    st->received += len;

    if (r->body && r->body->discard) {
        sws_http_v2_consume(st, len);
        return 0;
    }
    if (st->reading) {
        sws_http_v2_consume(st, len);
        if (sws_http_v2_body_too_large(st)) {
            /* The rest is dropped (with its window given back) while the
             * 413 goes out. */
            st->reading = 0;
            r->body->discard = 1;
            sws_del_timer(&st->rev);
            sws_http_finalize(r, SWS_HTTP_REQUEST_ENTITY_TOO_LARGE);
            return 0;
        }
        rc = sws_http_body_store(r, data, len);
        if (rc != SWS_OK) {
            st->reading = 0;
            r->body->discard = 1;
            sws_del_timer(&st->rev);
            sws_http_finalize(r, rc);
            return 0;
        }
        r->body->received = st->received;
        sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
        return 0;
    }

    if (st->streaming && sws_http_v2_body_too_large(st)) {
        st->streaming = 0;
        r->body->discard = 1;
        sws_del_timer(&st->rev);
        sws_http_v2_consume(st, st->unconsumed + len);
        st->unconsumed = 0;
        st->preread = NULL;
        st->preread_last = &st->preread;
        r->body->done(r);      /* its next pull gets the 413 */
        return 0;
    }

    /* Before the handler asks for the body, or streaming until the
     * consumer pulls it: kept, and the window not given back, so the
     * stream's window bounds what waits here (back-pressure). */
    b = sws_create_temp_buf(st->pool, len);
    cl = sws_alloc_chain_link(st->pool);
    if (b == NULL || cl == NULL) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    b->last = sws_cpymem(b->last, data, len);
    cl->buf = b;
    cl->next = NULL;
    *st->preread_last = cl;
    st->preread_last = &cl->next;
    st->unconsumed += len;
    if (st->streaming) {
        r->body->received = st->received;
        sws_del_timer(&st->rev);
        r->body->done(r);
    }
    return 0;
}

sws_int_t
sws_http_v2_read_body(sws_http_request_t *r)
{
    sws_http_v2_stream_t    *st = r->stream;
    sws_http_request_body_t *rb = r->body;
    nghttp2_nv               nv = { (uint8_t *) ":status", (uint8_t *) "100", 7, 3,
                                    NGHTTP2_NV_FLAG_NONE };

    if (st->body_error || sws_http_v2_body_too_large(st)) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (r->expect_continue && !r->continue_sent && !st->in_closed && st->preread == NULL) {
        r->continue_sent = 1;
        nghttp2_submit_headers(st->h2c->session, NGHTTP2_FLAG_NONE, st->id, NULL, &nv, 1,
                               NULL);
        sws_http_v2_post_send(st->h2c);
    }
    if (rb->stream) {
        /* The consumer pulls with read_body_data; the preread stays where
         * it is, its window given back as it is taken. */
        st->streaming = 1;
        rb->received = st->received;
        return SWS_OK;
    }
    if (st->preread) {
        *rb->last = st->preread;
        rb->last = st->preread_last;
        rb->buf = NULL;
        st->preread = NULL;
        st->preread_last = &st->preread;
    }
    rb->received = st->received;
    sws_http_v2_consume(st, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        rb->finished = 1;
        rb->done(r);
        return SWS_OK;
    }
    st->reading = 1;
    sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
    return SWS_OK;
}

sws_int_t
sws_http_v2_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    sws_http_v2_stream_t    *st = r->stream;
    sws_http_request_body_t *rb = r->body;
    sws_buf_t               *b;
    size_t                   k, got = 0;

    *n = 0;
    if (st->body_error) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (rb->timedout) {
        return SWS_HTTP_REQUEST_TIME_OUT;
    }
    while (st->preread && got < size) {
        b = st->preread->buf;
        k = sws_min((size_t) (b->last - b->pos), size - got);
        memcpy(buf + got, b->pos, k);
        b->pos += k;
        got += k;
        if (b->pos == b->last) {
            st->preread = st->preread->next;
        }
    }
    if (st->preread == NULL) {
        st->preread_last = &st->preread;
    }
    if (got) {
        /* Taken: the client may send as much again. */
        st->unconsumed -= got;
        sws_http_v2_consume(st, got);
    }
    *n = got;
    if (st->preread == NULL && st->in_closed) {
        rb->finished = 1;
        st->streaming = 0;
        sws_del_timer(&st->rev);
        return SWS_DONE;
    }
    if (got) {
        sws_del_timer(&st->rev);
        return SWS_OK;
    }
    sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
    return SWS_AGAIN;
}

sws_int_t
sws_http_v2_discard_body(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;

    st->preread = NULL;
    st->preread_last = &st->preread;
    sws_http_v2_consume(st, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        r->body->finished = 1;
    }
    return SWS_OK;
}

/* ---- frames ---- */

static int
sws_http_v2_on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    sws_http_v2_stream_t *st;

    switch (frame->hd.type) {
    case NGHTTP2_SETTINGS:
        if (frame->hd.flags & NGHTTP2_FLAG_ACK) {
            return 0;
        }
        return sws_http_v2_settings_recv(user_data, &frame->settings);
    case NGHTTP2_GOAWAY:
        ((sws_http_v2_conn_t *) user_data)->goaway_seen = 1;
        return 0;
    case NGHTTP2_PING:
        if (frame->hd.flags & NGHTTP2_FLAG_ACK) {
            sws_http_v2_drain_ack(user_data, frame->ping.opaque_data);
        }
        return 0;
    case NGHTTP2_HEADERS:
        st = sws_http_v2_find_stream(user_data, frame->hd.stream_id);
        if (st == NULL || st->r == NULL) {
            return 0;
        }
        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
            st->in_closed = 1;
        }
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
            sws_http_v2_start(st);
        } else if (st->in_closed) {
            sws_http_v2_body_end(st);        /* after trailers */
        }
        return 0;
    case NGHTTP2_DATA:
        if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
            st = sws_http_v2_find_stream(user_data, frame->hd.stream_id);
            if (st && st->r) {
                sws_http_v2_body_end(st);
            }
        }
        return 0;
    }
    return 0;
}

static int
sws_http_v2_on_stream_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
    void *user_data)
{
    sws_http_v2_stream_t *st = sws_http_v2_find_stream(user_data, stream_id);

    (void) user_data;

    if (st) {
        sws_http_v2_stream_close(st, error_code);
    }
    return 0;
}

void
sws_http_v2_stream_close(sws_http_v2_stream_t *st, uint32_t error)
{
    sws_http_v2_conn_t *h2c = st->h2c;
    sws_http_request_t *r = st->r;

    if (st->unconsumed) {
        nghttp2_session_consume_connection(h2c->session, st->unconsumed);
        st->unconsumed = 0;
    }
    nghttp2_session_set_stream_user_data(h2c->session, st->id, NULL);
    if (h2c->last_st == st) {
        h2c->last_st = NULL;
    }
    if (h2c->headers_st == st) {
        h2c->headers_st = NULL;
    }
    sws_del_timer(&st->rev);
    sws_del_timer(&st->wev);
    sws_del_timer(&st->pace);
    sws_queue_remove(&st->queue);
    h2c->nstreams--;

    if (error != NGHTTP2_NO_ERROR && r) {
        sws_log_debug(r->log, "http2 stream %d closed with error %u", (int) st->id,
                      (unsigned) error);
    }
    if (r == NULL) {
        sws_pool_destroy(st->pool);    /* never became a request */
    } else if (sws_http_request_ended(r, st->out_closed ? SWS_OK : SWS_ERROR) == SWS_AGAIN) {
        /* Over for the client, not for the server: the core releases it
         * when it is finalized. */
        sws_http_v2_background_keep(st);
    }
    sws_http_v2_post_send(h2c);
}

static void
sws_http_v2_stream_timeout(sws_event_t *ev)
{
    sws_http_v2_stream_t *st = ev->data;
    sws_http_request_t   *r = st->r;

    ev->timedout = 0;
    if (ev->write) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out reading the response "
                      "on stream %d", (int) st->id);
        sws_http_v2_reset(st, NGHTTP2_CANCEL);
        return;
    }
    if (!st->started) {
        /* A header block left unfinished: HPACK state is half updated and
         * only CONTINUATION may follow, so the connection cannot go on. */
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out sending the request "
                      "head on stream %d", (int) st->id);
        if (!st->h2c->goaway) {
            st->h2c->goaway = 1;
            nghttp2_session_terminate_session(st->h2c->session, NGHTTP2_NO_ERROR);
        }
        st->h2c->closing = 1;
        sws_http_v2_post_send(st->h2c);
        return;
    }
    sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out sending the request body "
                  "on stream %d", (int) st->id);
    st->reading = 0;
    if (st->streaming && r->body) {
        r->body->timedout = 1;       /* the consumer's next pull says 408 */
        r->body->done(r);
        sws_http_v2_post_send(st->h2c);
        return;
    }
    sws_http_finalize(r, SWS_HTTP_REQUEST_TIME_OUT);
    sws_http_v2_post_send(st->h2c);
}

void
sws_http_v2_stream_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_on_begin_frame_callback(cb, sws_http_v2_on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, sws_http_v2_on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cb, sws_http_v2_on_header);
    nghttp2_session_callbacks_set_on_invalid_header_callback(cb,
                                                             sws_http_v2_on_invalid_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, sws_http_v2_on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, sws_http_v2_on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, sws_http_v2_on_stream_close);
}
