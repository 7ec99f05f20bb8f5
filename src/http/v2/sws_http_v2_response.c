/*
 * The response of an HTTP/2 stream: sws_http_proto_t for streams. The head
 * is built from the same request fields as the HTTP/1 head; the body is
 * the request's output chain (r->out), which nghttp2 pulls through a data
 * provider as the flow-control windows open: memory is copied and files
 * are read with pread, one DATA frame (http2_chunk_size) at a time,
 * straight into the connection's output queue. Nothing is read whole.
 */
#include <unistd.h>
#include "sws_http_v2.h"
#include "sws_http_limit_rate.h"

#define SWS_SERVER_FULL  "scalws/" SCALWS_VERSION

static sws_int_t sws_http_v2_send_header(sws_http_request_t *r);
static sws_int_t sws_http_v2_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *h, sws_uint_t n);
static sws_int_t sws_http_v2_send_body(sws_http_request_t *r, sws_chain_t *in);
static void      sws_http_v2_finish(sws_http_request_t *r, sws_int_t rc);
static void      sws_http_v2_release(sws_http_request_t *r);
static off_t     sws_http_v2_bytes_sent(sws_http_request_t *r);
static ssize_t   sws_http_v2_read_cb(nghttp2_session *session, int32_t stream_id,
    uint8_t *buf, size_t length, uint32_t *data_flags, nghttp2_data_source *source,
    void *user_data);

/* The client is gone for this request when it reset the stream (or we
 * did), or the connection is ending. A reset stream is usually closed at
 * once, and its request's pool with it; this covers the time between. */
static int
sws_http_v2_aborted(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;
    sws_connection_t     *c = r->connection;

    return st->reset || st->h2c->closing || c->error || c->read->eof;
}

/* An HTTP/2 stream is no byte stream of its own (that is extended
 * CONNECT, RFC 8441, not offered): the Upgrade headers are not passed on
 * and the request is served as an ordinary one. */
static sws_int_t
sws_http_v2_tunnel(sws_http_request_t *r, sws_str_t *pending, sws_connection_t **bytes)
{
    return SWS_DECLINED;
}

/* DATA frames are copied, from files too (sws_http_v2_send_data_cb). */
static int
sws_http_v2_sendfile(sws_http_request_t *r)
{
    return 0;
}

const sws_http_proto_t sws_http_v2_proto = {
    .name = "HTTP/2.0",
    .process_head = sws_http_v2_process_head,
    .send_header = sws_http_v2_send_header,
    .send_body = sws_http_v2_send_body,
    .finish = sws_http_v2_finish,
    .release = sws_http_v2_release,
    .read_body = sws_http_v2_read_body,
    .read_body_data = sws_http_v2_read_body_data,
    .discard_body = sws_http_v2_discard_body,
    .bytes_sent = sws_http_v2_bytes_sent,
    .send_interim = sws_http_v2_send_interim,
    .aborted = sws_http_v2_aborted,
    .tunnel = sws_http_v2_tunnel,
    .sendfile = sws_http_v2_sendfile,
};

void
sws_http_v2_reset(sws_http_v2_stream_t *st, uint32_t error)
{
    if (st->reset || (st->out_closed && st->in_closed)) {
        return;
    }
    st->reset = 1;
    nghttp2_submit_rst_stream(st->h2c->session, NGHTTP2_FLAG_NONE, st->id, error);
    sws_http_v2_post_send(st->h2c);
}

/* ---- the head ---- */

/* Names go to nghttp2 without a copy (nor its lower-casing them again):
 * they are literals, or lower-cased into the request's pool, which lives
 * until the stream closes, so past the HEADERS frame's encoding or its
 * being dropped with the stream. So do the values that live as long
 * ("ours"): those this file makes (the status, the date, the lengths) and
 * those of r->headers_out (the SDK asks them to live as long as the
 * request). The others are copied: the headers of an interim response
 * and the fields set with sws_http_set_content_type() and the like, of
 * which the SDK promises nothing (over HTTP/1 they are written out at
 * once). */
static void
sws_http_v2_nv(nghttp2_nv *nv, const char *name, size_t nlen, const u_char *value, size_t vlen,
    int ours)
{
    nv->name = (uint8_t *) name;
    nv->namelen = nlen;
    nv->value = (uint8_t *) value;
    nv->valuelen = vlen;
    nv->flags = NGHTTP2_NV_FLAG_NO_COPY_NAME | (ours ? NGHTTP2_NV_FLAG_NO_COPY_VALUE : 0);
}

/* A literal name, a value of ours / a module's */
#define sws_http_v2_nv_own(nv, name, value, vlen) \
    sws_http_v2_nv(nv, name, sizeof(name) - 1, value, vlen, 1)
#define sws_http_v2_nv_lit(nv, name, value, vlen) \
    sws_http_v2_nv(nv, name, sizeof(name) - 1, value, vlen, 0)

/* Fields of HTTP/1 connection management have no place in HTTP/2 (RFC
 * 9113 8.2.2): a module (a proxy passing headers on) may have set them. */
static int
sws_http_v2_hop_by_hop(const sws_str_t *name)
{
    static const char *const names[] = {
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", NULL
    };
    int i;

    for (i = 0; names[i]; i++) {
        if (name->len == strlen(names[i])
            && sws_strncasecmp(name->data, (const u_char *) names[i], name->len) == 0)
        {
            return 1;
        }
    }
    return 0;
}

/* Header fields as name/value pairs after nv: names in lower case, as
 * HTTP/2 wants them; deleted ones (hash 0) and HTTP/1 connection fields
 * left out; their values without a copy if "ours" (see sws_http_v2_nv).
 * Returns the next free pair, NULL when out of memory. */
static nghttp2_nv *
sws_http_v2_nv_fields(sws_http_request_t *r, nghttp2_nv *nv, const sws_http_header_t *h,
    sws_uint_t n, int ours)
{
    sws_uint_t  i;
    u_char     *name;

    for (i = 0; i < n; i++) {
        if (h[i].hash == 0 || h[i].name.len == 0 || sws_http_v2_hop_by_hop(&h[i].name)) {
            continue;
        }
        name = sws_pnalloc(r->pool, h[i].name.len);
        if (name == NULL) {
            return NULL;
        }
        sws_strlow(name, h[i].name.data, h[i].name.len);
        sws_http_v2_nv(nv++, (char *) name, h[i].name.len, h[i].value.data, h[i].value.len,
                       ours);
    }
    return nv;
}

/* Does the response have a Date field of its own? */
static int
sws_http_v2_has_date(const sws_http_header_t *h, sws_uint_t n)
{
    sws_uint_t i;

    for (i = 0; i < n; i++) {
        if (h[i].hash && h[i].name.len == 4
            && sws_strncasecmp(h[i].name.data, (u_char *) "date", 4) == 0)
        {
            return 1;
        }
    }
    return 0;
}

/* An interim response: a HEADERS frame with a 1xx :status that does not
 * end the stream (RFC 9113 8.1), lower-case names, no HTTP/1 connection
 * fields. */
static sws_int_t
sws_http_v2_send_interim(sws_http_request_t *r, sws_uint_t status, const sws_http_header_t *h,
    sws_uint_t n)
{
    sws_http_v2_stream_t *st = r->stream;
    nghttp2_nv           *nva, *nv;
    u_char               *code;

    if (st->reset) {
        return SWS_ERROR;
    }
    nva = sws_palloc(r->pool, sizeof(nghttp2_nv) * (n + 1));
    code = sws_pnalloc(r->pool, 3);
    if (nva == NULL || code == NULL) {
        return SWS_ERROR;
    }
    code[0] = (u_char) ('0' + status / 100 % 10);
    code[1] = (u_char) ('0' + status / 10 % 10);
    code[2] = (u_char) ('0' + status % 10);
    nv = nva;
    sws_http_v2_nv_own(nv++, ":status", code, 3);
    nv = sws_http_v2_nv_fields(r, nv, h, n, 0);
    if (nv == NULL) {
        return SWS_ERROR;
    }
    if (nghttp2_submit_headers(st->h2c->session, NGHTTP2_FLAG_NONE, st->id, NULL, nva,
                               (size_t) (nv - nva), NULL) < 0)
    {
        return SWS_ERROR;
    }
    sws_http_v2_post_send(st->h2c);
    return SWS_OK;
}

static sws_int_t
sws_http_v2_send_header(sws_http_request_t *r)
{
    sws_http_v2_stream_t     *st = r->stream;
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *date = r->date.len ? &r->date : sws_cached_http_time();
    sws_http_header_t        *h = r->headers_out.elts;
    nghttp2_data_provider     prd;
    nghttp2_nv               *nva, *nv;
    u_char                   *status, *now, *lm, *len, *lenend;
    int                       rv, body;

    if (st->reset) {
        return SWS_ERROR;
    }
    body = !(r->status < 200 || r->status == 204 || r->status == 304);
    nva = sws_palloc(r->pool, sizeof(nghttp2_nv) * (10 + r->headers_out.nelts));
    /* The status and the date as of now, in the pool: ours (see sws_http_v2_nv) */
    status = sws_pnalloc(r->pool, 3 + date->len);
    if (nva == NULL || status == NULL) {
        return SWS_ERROR;
    }
    now = sws_cpymem(status + 3, date->data, date->len) - date->len;
    nv = nva;
    status[0] = (u_char) ('0' + r->status / 100 % 10);
    status[1] = (u_char) ('0' + r->status / 10 % 10);
    status[2] = (u_char) ('0' + r->status % 10);
    sws_http_v2_nv_own(nv++, ":status", status, 3);
    if (clcf->server_tokens) {
        sws_http_v2_nv_own(nv++, "server", (u_char *) SWS_SERVER_FULL,
                           sizeof(SWS_SERVER_FULL) - 1);
    } else {
        sws_http_v2_nv_own(nv++, "server", (u_char *) "scalws", 6);
    }
    if (r->content_type.len) {
        sws_http_v2_nv_lit(nv++, "content-type", r->content_type.data, r->content_type.len);
    }
    if (r->out_content_length >= 0 && (body || r->status == 304)) {
        len = sws_pnalloc(r->pool, 20);
        if (len == NULL) {
            return SWS_ERROR;
        }
        lenend = sws_sprint_uint(len, (uint64_t) r->out_content_length);
        sws_http_v2_nv_own(nv++, "content-length", len, lenend - len);
    }
    if (r->last_modified >= 0) {
        lm = sws_pnalloc(r->pool, 29);
        if (lm == NULL) {
            return SWS_ERROR;
        }
        sws_http_v2_nv_own(nv++, "last-modified", lm, sws_http_time(lm, r->last_modified) - lm);
    }
    if (r->etag.len) {
        sws_http_v2_nv_lit(nv++, "etag", r->etag.data, r->etag.len);
    }
    if (r->location.len) {
        sws_http_v2_nv_lit(nv++, "location", r->location.data, r->location.len);
    }
    nv = sws_http_v2_nv_fields(r, nv, h, r->headers_out.nelts, 1);
    if (nv == NULL) {
        return SWS_ERROR;
    }
    if (!sws_http_v2_has_date(h, r->headers_out.nelts)) {
        /* ours, unless the response has its own (a proxied server's
         * passed on, a stored response's), as HTTP/1 */
        sws_http_v2_nv_own(nv++, "date", now, date->len);
    }
    if (r->request_id.len && clcf->request_id) {
        sws_http_v2_nv_lit(nv++, "x-request-id", r->request_id.data, r->request_id.len);
    }

    /* Without a body (HEAD, 204, 304, an empty one) the HEADERS end the
     * stream. */
    st->data = !(r->header_only || !body
                 || (r->out_content_length == 0 && !r->expect_trailers));
    prd.source.ptr = st;
    prd.read_callback = sws_http_v2_read_cb;
    rv = nghttp2_submit_response(st->h2c->session, st->id, nva, nv - nva,
                                 st->data ? &prd : NULL);
    if (rv != 0) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "http2: cannot submit the response: %s",
                      nghttp2_strerror(rv));
        return SWS_ERROR;
    }
    st->submitted = 1;
    sws_http_v2_post_send(st->h2c);
    return SWS_OK;
}

/* ---- the body ---- */

/* Bytes in r->out, counting up to max. */
static size_t
sws_http_v2_out_size(sws_http_request_t *r, size_t max)
{
    sws_chain_t *cl;
    size_t       n = 0;

    for (cl = r->out; cl && n < max; cl = cl->next) {
        if (!sws_buf_special(cl->buf)) {
            n += (size_t) sws_buf_size(cl->buf);
        }
    }
    return n;
}

static sws_int_t
sws_http_v2_send_body(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_v2_stream_t *st = r->stream;
    sws_chain_t         **ll, *cl;

    if (st->reset) {
        return SWS_ERROR;
    }
    if (!st->data) {
        return SWS_OK;         /* no body on this stream: dropped */
    }
    for (ll = &r->out; *ll; ll = &(*ll)->next) { /* the tail */ }
    for (; in; in = in->next) {
        if (in->buf->last_buf) {
            st->out_last = 1;
        }
        if (sws_buf_special(in->buf) || sws_buf_size(in->buf) == 0) {
            continue;
        }
        cl = sws_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return SWS_ERROR;
        }
        cl->buf = in->buf;
        cl->next = NULL;
        *ll = cl;
        ll = &cl->next;
    }
    if (st->deferred && (r->out || st->out_last)) {
        st->deferred = 0;
        nghttp2_session_resume_data(st->h2c->session, st->id);
    }
    sws_http_v2_post_send(st->h2c);
    if (r->out == NULL) {
        return SWS_OK;
    }
    /* Waiting on the windows (or the socket) from now on: no longer than
     * send_timeout without progress. */
    if (!st->wev.timer_set) {
        sws_add_timer(&st->wev, sws_http_core_loc(r)->send_timeout);
    }
    return SWS_AGAIN;
}

/* At the end of the body: trailer fields go in a HEADERS frame that ends
 * the stream instead of the last DATA frame (RFC 9113 8.1), submitted
 * from the data callback as nghttp2 asks. */
static sws_int_t
sws_http_v2_trailers(sws_http_request_t *r, uint32_t *data_flags)
{
    sws_http_v2_stream_t *st = r->stream;
    nghttp2_nv           *nva, *nv;

    if (r->trailers_out == NULL || r->trailers_out->nelts == 0) {
        return SWS_OK;
    }
    nva = sws_palloc(r->pool, sizeof(nghttp2_nv) * r->trailers_out->nelts);
    if (nva == NULL) {
        return SWS_ERROR;
    }
    nv = sws_http_v2_nv_fields(r, nva, r->trailers_out->elts, r->trailers_out->nelts, 1);
    if (nv == NULL) {
        return SWS_ERROR;
    }
    if (nv == nva) {
        return SWS_OK;
    }
    if (nghttp2_submit_trailer(st->h2c->session, st->id, nva, (size_t) (nv - nva)) != 0) {
        return SWS_ERROR;
    }
    *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    return SWS_OK;
}

/* limit_rate: at most *chunk bytes now (lowered to what the rate allows),
 * or SWS_AGAIN and the stream's pace timer resumes it when some may go. */
static sws_int_t
sws_http_v2_pace(sws_http_v2_stream_t *st, size_t *chunk)
{
    sws_msec_t  delay;
    off_t       allow = sws_http_limit_rate_allow(st->r, st->sent, &delay);

    if (allow < 0) {
        return SWS_OK;
    }
    if (allow == 0) {
        st->paced = 1;
        sws_add_timer(&st->pace, delay);
        return SWS_AGAIN;
    }
    if ((off_t) *chunk > allow) {
        *chunk = (size_t) allow;
    }
    return SWS_OK;
}

void
sws_http_v2_paced(sws_event_t *ev)
{
    sws_http_v2_stream_t *st = ev->data;

    ev->timedout = 0;
    if (st->paced && !st->reset) {
        st->paced = 0;
        nghttp2_session_resume_data(st->h2c->session, st->id);
        sws_http_v2_post_send(st->h2c);
    }
}

static ssize_t
sws_http_v2_read_cb(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t length,
    uint32_t *data_flags, nghttp2_data_source *source, void *user_data)
{
    sws_http_v2_stream_t   *st = source->ptr;
    sws_http_request_t     *r = st->r;
    sws_http_v2_loc_conf_t *h2lcf = sws_http_loc_conf(r, &sws_http_v2_module);
    size_t                  chunk = sws_min(length, h2lcf->chunk_size), have;

    (void) session;
    (void) stream_id;
    (void) buf;
    (void) user_data;

    have = sws_http_v2_out_size(r, chunk + 1);
    if (have > 0 && sws_http_v2_pace(st, &chunk) != SWS_OK) {
        return NGHTTP2_ERR_DEFERRED;
    }
    if (have == 0) {
        if (st->out_last) {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF;
            return sws_http_v2_trailers(r, data_flags) == SWS_OK
                   ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        st->deferred = 1;
        return NGHTTP2_ERR_DEFERRED;
    }
    *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    if (have <= chunk && st->out_last) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        if (sws_http_v2_trailers(r, data_flags) != SWS_OK) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
    }
    return (ssize_t) sws_min(have, chunk);
}

/* The DATA frame nghttp2 decided on: its header and length bytes of
 * r->out, read (files) or copied (memory) once, into the output queue. */
static int
sws_http_v2_send_data_cb(nghttp2_session *session, nghttp2_frame *frame,
    const uint8_t *framehd, size_t length, nghttp2_data_source *source, void *user_data)
{
    static u_char           data[16384 + 256];
    sws_http_v2_conn_t     *h2c = user_data;
    sws_http_v2_stream_t   *st = source->ptr;
    sws_http_request_t     *r = st->r;
    sws_chain_t            *cl;
    sws_buf_t              *b;
    size_t                  have = 0, k;
    ssize_t                 n;
    u_char                  pad;

    (void) session;

    if (length > sizeof(data) - 1) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;       /* never: frames are <= 16k */
    }
    if (h2c->out_bytes && 9 + 1 + length > sws_http_v2_queue_room(h2c)) {
        h2c->send_blocked = 1;
        return NGHTTP2_ERR_WOULDBLOCK;
    }
    /* Gather first: a frame header must not go out without its data. */
    for (cl = r->out; cl && have < length; cl = cl->next) {
        b = cl->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        k = sws_min((size_t) sws_buf_size(b), length - have);
        if (sws_buf_in_memory(b)) {
            memcpy(data + have, b->pos, k);
        } else {
            n = pread(b->fd, data + have, k, b->file_pos);
            if (n != (ssize_t) k) {
                sws_log_error(SWS_LOG_CRIT, r->log, n == -1 ? errno : 0,
                              "pread() of the response body failed%s",
                              n >= 0 ? " (file truncated?)" : "");
                return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
            }
        }
        have += k;
    }
    if (have != length) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
    r->out = sws_chain_update_sent(r->out, (off_t) length);
    while (r->out && !sws_buf_special(r->out->buf) && sws_buf_size(r->out->buf) == 0) {
        r->out = r->out->next;
    }

    if (sws_http_v2_queue(h2c, framehd, 9) != SWS_OK) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (frame->data.padlen > 0) {
        pad = (u_char) (frame->data.padlen - 1);
        if (sws_http_v2_queue(h2c, &pad, 1) != SWS_OK) {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    }
    if (sws_http_v2_queue(h2c, data, length) != SWS_OK) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (frame->data.padlen > 1) {
        memset(data, 0, frame->data.padlen - 1);
        if (sws_http_v2_queue(h2c, data, frame->data.padlen - 1) != SWS_OK) {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
    }
    return 0;
}

static int
sws_http_v2_on_frame_send(nghttp2_session *session, const nghttp2_frame *frame,
    void *user_data)
{
    sws_http_v2_conn_t   *h2c = user_data;
    sws_http_v2_stream_t *st;

    if (frame->hd.type == NGHTTP2_RST_STREAM
        && frame->rst_stream.error_code == NGHTTP2_REFUSED_STREAM)
    {
        h2c->refused = 1;        /* see sws_http_v2_check_stream_id() */
    }
    if (frame->hd.type == NGHTTP2_GOAWAY) {
        h2c->goaway_seen = 1;
    }
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) {
        return 0;
    }
    st = sws_http_v2_find_stream(h2c, frame->hd.stream_id);
    if (st == NULL) {
        return 0;
    }
    /* As nginx counts: the head's frames whole, of DATA the payload (so
     * that $body_bytes_sent is the body's length). */
    if (frame->hd.type == NGHTTP2_HEADERS) {
        st->sent += 9 + frame->hd.length;
        st->r->header_size += 9 + frame->hd.length;
    } else {
        st->sent += frame->data.padlen ? frame->hd.length - frame->data.padlen
                                       : frame->hd.length;
    }
    if (frame->hd.type == NGHTTP2_DATA
        && ((!st->r->done && st->r->write_event_handler) || st->r->filter_buffered))
    {
        st->drained = 1;        /* room was made: the producer may go on */
    }
    if (frame->hd.type == NGHTTP2_DATA && st->wev.timer_set) {
        /* Progress: the send timeout starts again, or stops. */
        if (st->r->out) {
            sws_add_timer(&st->wev, sws_http_core_loc(st->r)->send_timeout);
        } else {
            sws_del_timer(&st->wev);
        }
    }
    if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
        st->out_closed = 1;
        sws_del_timer(&st->wev);
        if (!st->in_closed && !st->reset) {
            /* The response is complete: the rest of the request body is
             * not needed (RFC 9113 8.1). */
            st->reset = 1;
            nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, st->id, NGHTTP2_NO_ERROR);
        }
    }
    return 0;
}

static int
sws_http_v2_on_frame_not_send(nghttp2_session *session, const nghttp2_frame *frame,
    int lib_error_code, void *user_data)
{
    sws_http_v2_conn_t *h2c = user_data;

    (void) session;

    sws_log_debug(h2c->connection->log, "http2 frame type %d on stream %d not sent: %s",
                  (int) frame->hd.type, (int) frame->hd.stream_id,
                  nghttp2_strerror(lib_error_code));
    return 0;
}

/* ---- the end ---- */

static void
sws_http_v2_finish(sws_http_request_t *r, sws_int_t rc)
{
    sws_http_v2_stream_t *st = r->stream;

    /* (a background request failing cuts nothing: the client's response
     * was complete before it began) */
    if (rc == SWS_ERROR && !r->background) {
        /* Cut: the client must not take a partial body for a whole one. */
        if (!st->out_closed) {
            sws_http_v2_reset(st, NGHTTP2_INTERNAL_ERROR);
        }
        return;
    }
    if (!r->filter_buffered) {
        st->out_last = 1;  /* nothing more will come (else: the filter's last_buf) */
    }
    if (st->data && st->deferred) {
        st->deferred = 0;
        nghttp2_session_resume_data(st->h2c->session, st->id);
    }
    sws_http_v2_post_send(st->h2c);
}

/* The core is done with r: the stream's pool goes (st lives there too);
 * for a stream that closed before its request was finalized, from the
 * event loop, outside the finalizing caller's frames. */
static void
sws_http_v2_release(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;

    if (st->background) {
        sws_http_v2_background_done(st);
        return;
    }
    sws_pool_destroy(st->pool);
}

/* Outside nghttp2's callbacks, once the frames are out: a streaming
 * producer (the upstream framework) refills as its output drains, as the
 * HTTP/1 writer lets it. */
void
sws_http_v2_write_hooks(sws_http_v2_conn_t *h2c)
{
    sws_queue_t          *q, *next;
    sws_http_v2_stream_t *st;
    sws_http_request_t   *r;

    for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams); q = next) {
        next = sws_queue_next(q);
        st = sws_queue_data(q, sws_http_v2_stream_t, queue);
        if (!st->drained) {
            continue;
        }
        st->drained = 0;
        r = st->r;
        if (r && !st->reset && r->filter_buffered && sws_http_output_resume(r) == SWS_ERROR) {
            sws_http_v2_reset(st, NGHTTP2_INTERNAL_ERROR);
            continue;
        }
        if (r && !r->done && !st->reset && r->write_event_handler) {
            r->write_event_handler(r);
        }
    }
}

static off_t
sws_http_v2_bytes_sent(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;

    return st ? st->sent : 0;
}

void
sws_http_v2_response_callbacks(nghttp2_session_callbacks *cb)
{
    nghttp2_session_callbacks_set_send_data_callback(cb, sws_http_v2_send_data_cb);
    nghttp2_session_callbacks_set_on_frame_send_callback(cb, sws_http_v2_on_frame_send);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cb,
                                                             sws_http_v2_on_frame_not_send);
}
