/*
 * The response of an HTTP/3 request stream: sws_http_proto_t for streams.
 * The head is made of the same request fields as the other protocols'
 * heads and given to nghttp3 (which QPACK-encodes it); the body is the
 * request's output chain (r->out), which nghttp3 pulls as QUIC's flow
 * control and congestion window let it: each pull copies at most
 * SWS_H3_CHUNK bytes (memory copied, files read with one pread) into a
 * chunk that lives until the client acknowledges it. What a stream may
 * have unacknowledged grows with the path: twice the connection's
 * congestion window, between SWS_H3_INFLIGHT_MIN and SWS_H3_INFLIGHT_MAX
 * (and never more than the client's window lets out). Acknowledged chunks
 * are freed but SWS_H3_SPARE, so a stream whose client stopped reading
 * keeps at most that and the chunk nghttp3 holds. Nothing is read whole.
 */
#include "sws_http_v3.h"
#include "sws_http_limit_rate.h"

#define SWS_SERVER_FULL  "scalws/" SCALWS_VERSION

static sws_int_t sws_http_v3_send_header(sws_http_request_t *r);
static sws_int_t sws_http_v3_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *h, sws_uint_t n);
static sws_int_t sws_http_v3_send_body(sws_http_request_t *r, sws_chain_t *in);
static void      sws_http_v3_finish(sws_http_request_t *r, sws_int_t rc);
static void      sws_http_v3_release(sws_http_request_t *r);
static off_t     sws_http_v3_bytes_sent(sws_http_request_t *r);

static int
sws_http_v3_aborted(sws_http_request_t *r)
{
    sws_http_v3_stream_t *st = r->stream;

    return st->qc == NULL || st->reset;
}

/* No extended CONNECT (RFC 9220): Upgrade is not passed on. */
static sws_int_t
sws_http_v3_tunnel(sws_http_request_t *r, sws_str_t *pending, sws_connection_t **bytes)
{
    (void) r;
    (void) pending;
    (void) bytes;
    return SWS_DECLINED;
}

static int
sws_http_v3_sendfile(sws_http_request_t *r)
{
    (void) r;
    return 0;                           /* QUIC packets are made in memory */
}

const sws_http_proto_t sws_http_v3_proto = {
    .name = "HTTP/3.0",
    .process_head = sws_http_v3_process_head,
    .send_header = sws_http_v3_send_header,
    .send_body = sws_http_v3_send_body,
    .finish = sws_http_v3_finish,
    .release = sws_http_v3_release,
    .read_body = sws_http_v3_read_body,
    .read_body_data = sws_http_v3_read_body_data,
    .discard_body = sws_http_v3_discard_body,
    .bytes_sent = sws_http_v3_bytes_sent,
    .send_interim = sws_http_v3_send_interim,
    .aborted = sws_http_v3_aborted,
    .tunnel = sws_http_v3_tunnel,
    .sendfile = sws_http_v3_sendfile,
};

/* ---- the head ---- */

static void
sws_http_v3_nv(nghttp3_nv *nv, const char *name, size_t nlen, const u_char *value,
    size_t vlen)
{
    nv->name = (uint8_t *) name;
    nv->namelen = nlen;
    nv->value = (uint8_t *) value;
    nv->valuelen = vlen;
    nv->flags = NGHTTP3_NV_FLAG_NONE;
}

#define sws_http_v3_nv_lit(nv, name, value, vlen) \
    sws_http_v3_nv(nv, name, sizeof(name) - 1, value, vlen)

/* Fields after nv, names lower-cased (RFC 9114 4.2); deleted ones and
 * HTTP/1 connection fields left out. *date: set if one is a Date. Returns
 * the next free pair, NULL when out of memory. */
static nghttp3_nv *
sws_http_v3_fields(sws_http_request_t *r, nghttp3_nv *nv, const sws_http_header_t *h,
    sws_uint_t n, int *date)
{
    sws_uint_t  i;
    u_char     *name;

    for (i = 0; i < n; i++) {
        if (h[i].hash == 0 || h[i].name.len == 0 || sws_http_connection_field(&h[i].name)) {
            continue;
        }
        name = sws_pnalloc(r->pool, h[i].name.len);
        if (name == NULL) {
            return NULL;
        }
        sws_strlow(name, h[i].name.data, h[i].name.len);
        if (h[i].name.len == 4 && memcmp(name, "date", 4) == 0) {
            *date = 1;
        }
        sws_http_v3_nv(nv++, (char *) name, h[i].name.len, h[i].value.data, h[i].value.len);
    }
    return nv;
}

static u_char *
sws_http_v3_status(sws_http_request_t *r, sws_uint_t status)
{
    u_char *p = sws_pnalloc(r->pool, 3);

    if (p) {
        p[0] = (u_char) ('0' + status / 100 % 10);
        p[1] = (u_char) ('0' + status / 10 % 10);
        p[2] = (u_char) ('0' + status % 10);
    }
    return p;
}

static size_t
sws_http_v3_head_size(const nghttp3_nv *nva, size_t n)
{
    size_t size = 0, i;

    for (i = 0; i < n; i++) {
        size += nva[i].namelen + nva[i].valuelen + 4;   /* as "name: value\r\n" */
    }
    return size;
}

static sws_int_t
sws_http_v3_send_interim(sws_http_request_t *r, sws_uint_t status, const sws_http_header_t *h,
    sws_uint_t n)
{
    sws_http_v3_stream_t *st = r->stream;
    nghttp3_nv           *nva, *nv;
    u_char               *code;
    int                   date = 0;

    if (st->qc == NULL || st->reset) {
        return SWS_ERROR;
    }
    nva = sws_palloc(r->pool, sizeof(nghttp3_nv) * (n + 1));
    code = sws_http_v3_status(r, status);
    if (nva == NULL || code == NULL) {
        return SWS_ERROR;
    }
    nv = nva;
    sws_http_v3_nv_lit(nv++, ":status", code, 3);
    nv = sws_http_v3_fields(r, nv, h, n, &date);
    if (nv == NULL || nghttp3_conn_submit_info(st->qc->h3, st->id, nva, (size_t) (nv - nva))
                      != 0)
    {
        return SWS_ERROR;
    }
    sws_http_v3_post_write(st->qc);
    return SWS_OK;
}

static sws_int_t
sws_http_v3_send_header(sws_http_request_t *r)
{
    static const nghttp3_data_reader  reader = { sws_http_v3_read_data };

    sws_http_v3_stream_t     *st = r->stream;
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *now = r->date.len ? &r->date : sws_cached_http_time();
    nghttp3_nv               *nva, *nv;
    u_char                   *status, *date, *lm, *len, *lenend;
    int                       body, has_date = 0;

    if (st->qc == NULL || st->reset) {
        return SWS_ERROR;
    }
    body = !(r->status < 200 || r->status == 204 || r->status == 304);
    nva = sws_palloc(r->pool, sizeof(nghttp3_nv) * (10 + r->headers_out.nelts));
    status = sws_http_v3_status(r, r->status);
    /* the date as of now: nghttp3 copies the fields when submitted */
    date = sws_pnalloc(r->pool, now->len);
    if (nva == NULL || status == NULL || date == NULL) {
        return SWS_ERROR;
    }
    sws_memcpy(date, now->data, now->len);
    nv = nva;
    sws_http_v3_nv_lit(nv++, ":status", status, 3);
    if (clcf->server_tokens) {
        sws_http_v3_nv_lit(nv++, "server", (u_char *) SWS_SERVER_FULL,
                           sizeof(SWS_SERVER_FULL) - 1);
    } else {
        sws_http_v3_nv_lit(nv++, "server", (u_char *) "scalws", 6);
    }
    if (r->content_type.len) {
        sws_http_v3_nv_lit(nv++, "content-type", r->content_type.data, r->content_type.len);
    }
    if (r->out_content_length >= 0 && (body || r->status == 304)) {
        len = sws_pnalloc(r->pool, 20);
        if (len == NULL) {
            return SWS_ERROR;
        }
        lenend = sws_sprint_uint(len, (uint64_t) r->out_content_length);
        sws_http_v3_nv_lit(nv++, "content-length", len, (size_t) (lenend - len));
    }
    if (r->last_modified >= 0) {
        lm = sws_pnalloc(r->pool, 29);
        if (lm == NULL) {
            return SWS_ERROR;
        }
        sws_http_v3_nv_lit(nv++, "last-modified", lm,
                           (size_t) (sws_http_time(lm, r->last_modified) - lm));
    }
    if (r->etag.len) {
        sws_http_v3_nv_lit(nv++, "etag", r->etag.data, r->etag.len);
    }
    if (r->location.len) {
        sws_http_v3_nv_lit(nv++, "location", r->location.data, r->location.len);
    }
    nv = sws_http_v3_fields(r, nv, r->headers_out.elts, r->headers_out.nelts, &has_date);
    if (nv == NULL) {
        return SWS_ERROR;
    }
    if (!has_date) {
        /* ours, unless the response has its own (a proxied one's) */
        sws_http_v3_nv_lit(nv++, "date", date, now->len);
    }
    if (r->request_id.len && clcf->request_id) {
        sws_http_v3_nv_lit(nv++, "x-request-id", r->request_id.data, r->request_id.len);
    }

    /* Without a body (HEAD, 204, 304, an empty one) the head ends the
     * stream. */
    st->data = !(r->header_only || !body || r->out_content_length == 0);
    if (nghttp3_conn_submit_response(st->qc->h3, st->id, nva, (size_t) (nv - nva),
                                     st->data ? &reader : NULL) != 0)
    {
        return SWS_ERROR;
    }
    if (!st->data) {
        st->eof = 1;
    }
    st->submitted = 1;
    st->head_size = sws_http_v3_head_size(nva, (size_t) (nv - nva));
    r->header_size = st->head_size;
    sws_http_v3_post_write(st->qc);
    return SWS_OK;
}

/* ---- the body ---- */

static void
sws_http_v3_resume(sws_http_v3_stream_t *st)
{
    if (st->blocked && st->qc && st->qc->h3 && !st->reset) {
        st->blocked = 0;
        (void) nghttp3_conn_resume_stream(st->qc->h3, st->id);
    }
    if (st->qc) {
        sws_http_v3_post_write(st->qc);
    }
}

static sws_int_t
sws_http_v3_send_body(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_v3_stream_t *st = r->stream;
    unsigned              last = 0;

    if (st->qc == NULL || st->reset) {
        return SWS_ERROR;
    }
    if (!st->data) {
        return SWS_OK;                  /* no body on this stream: dropped */
    }
    if (sws_http_out_queue(r, in, &last) != SWS_OK) {
        return SWS_ERROR;
    }
    if (last) {
        st->out_last = 1;
    }
    sws_http_v3_resume(st);
    return r->out ? SWS_AGAIN : SWS_OK;
}

/* How much response data of st may wait for acknowledgement. */
static size_t
sws_http_v3_inflight_limit(sws_http_v3_stream_t *st)
{
    ngtcp2_conn_stat cs;
    uint64_t         limit;

    if (st->qc == NULL || st->qc->conn == NULL) {
        return SWS_H3_INFLIGHT_MIN;
    }
    ngtcp2_conn_get_conn_stat(st->qc->conn, &cs);
    limit = 2 * cs.cwnd;
    return (size_t) sws_max(SWS_H3_INFLIGHT_MIN, sws_min(limit, SWS_H3_INFLIGHT_MAX));
}

static void
sws_http_v3_chunks_free(void *data)
{
    sws_http_v3_stream_t *st = data;
    sws_http_v3_chunk_t  *c, *next;

    for (c = st->inflight; c; c = next) {
        next = c->next;
        free(c);
    }
    for (c = st->free; c; c = next) {
        next = c->next;
        free(c);
    }
    st->inflight = NULL;
    st->inflight_last = &st->inflight;
    st->free = NULL;
    st->nfree = 0;
}

static sws_http_v3_chunk_t *
sws_http_v3_chunk_get(sws_http_v3_stream_t *st)
{
    sws_http_v3_chunk_t *c = st->free;

    if (c) {
        st->free = c->next;
        st->nfree--;
        return c;
    }
    if (!st->chunks) {
        if (sws_pool_cleanup_add(st->pool, sws_http_v3_chunks_free, st) != SWS_OK) {
            return NULL;
        }
        st->chunks = 1;
    }
    return sws_alloc(sizeof(sws_http_v3_chunk_t), st->r->log);
}

static void
sws_http_v3_chunk_put(sws_http_v3_stream_t *st, sws_http_v3_chunk_t *c)
{
    if (st->nfree >= SWS_H3_SPARE) {
        free(c);
        return;
    }
    c->next = st->free;
    st->free = c;
    st->nfree++;
}

void
sws_http_v3_paced(sws_event_t *ev)
{
    sws_http_v3_stream_t *st = ev->data;

    ev->timedout = 0;
    sws_http_v3_resume(st);
}

nghttp3_ssize
sws_http_v3_read_data(nghttp3_conn *conn, int64_t id, nghttp3_vec *vec, size_t veccnt,
    uint32_t *pflags, void *conn_data, void *stream_data)
{
    sws_http_v3_stream_t *st = stream_data;
    sws_http_request_t   *r = st ? st->r : NULL;
    sws_http_v3_chunk_t  *c;
    sws_msec_t            delay;
    size_t                have, n;
    off_t                 allow;

    (void) conn;
    (void) id;
    (void) conn_data;
    if (r == NULL || veccnt == 0 || st->reset) {
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    if (st->inflight_bytes >= sws_http_v3_inflight_limit(st)) {
        st->blocked = 1;                /* acknowledgements resume it */
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    have = sws_http_out_size(r, SWS_H3_CHUNK + 1);
    if (have == 0) {
        if (st->out_last) {
            *pflags |= NGHTTP3_DATA_FLAG_EOF;
            st->eof = 1;
            return 0;
        }
        st->blocked = 1;                /* send_body resumes it */
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    n = sws_min(have, SWS_H3_CHUNK);
    allow = sws_http_limit_rate_allow(r, st->sent + (off_t) st->head_size, &delay);
    if (allow == 0) {
        st->blocked = 1;
        sws_add_timer(&st->pace, delay);
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    if (allow > 0 && (off_t) n > allow) {
        n = (size_t) allow;
    }

    c = sws_http_v3_chunk_get(st);
    if (c == NULL) {
        return NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    if (sws_http_out_take(r, c->data, n) != SWS_OK) {
        sws_http_v3_chunk_put(st, c);
        st->reset = 1;
        (void) ngtcp2_conn_shutdown_stream(st->qc->conn, st->id, NGHTTP3_H3_INTERNAL_ERROR);
        return NGHTTP3_ERR_WOULDBLOCK;
    }
    c->len = n;
    c->acked = 0;
    c->next = NULL;
    *st->inflight_last = c;
    st->inflight_last = &c->next;
    st->inflight_bytes += n;
    st->sent += (off_t) n;
    vec[0].base = c->data;
    vec[0].len = n;
    if (n == have && st->out_last) {
        *pflags |= NGHTTP3_DATA_FLAG_EOF;
        st->eof = 1;
    }
    if ((!r->done && r->write_event_handler) || r->filter_buffered) {
        st->drained = 1;                /* room was made: the producer may go on */
    }
    return 1;
}

void
sws_http_v3_acked(sws_http_v3_stream_t *st, uint64_t n)
{
    sws_http_v3_chunk_t *c;
    size_t               k;

    while (n && st->inflight) {
        c = st->inflight;
        k = (size_t) sws_min((uint64_t) (c->len - c->acked), n);
        c->acked += k;
        n -= k;
        if (c->acked < c->len) {
            break;
        }
        st->inflight = c->next;
        if (st->inflight == NULL) {
            st->inflight_last = &st->inflight;
        }
        st->inflight_bytes -= c->len;
        sws_http_v3_chunk_put(st, c);
    }
    if (st->blocked && !st->pace.timer_set
        && st->inflight_bytes < sws_http_v3_inflight_limit(st))
    {
        sws_http_v3_resume(st);
    }
}

/* ---- the end ---- */

static void
sws_http_v3_finish(sws_http_request_t *r, sws_int_t rc)
{
    sws_http_v3_stream_t *st = r->stream;
    sws_http_v3_conn_t   *qc = st->qc;

    if (qc == NULL) {
        return;
    }
    if (rc == SWS_ERROR && !r->background) {
        /* Cut: the client must not take a part for the whole. */
        if (!st->reset && !(st->eof && st->inflight_bytes == 0)) {
            st->reset = 1;
            (void) ngtcp2_conn_shutdown_stream(qc->conn, st->id, NGHTTP3_H3_INTERNAL_ERROR);
            sws_http_v3_post_write(qc);
        }
        return;
    }
    if (!r->filter_buffered) {
        st->out_last = 1;  /* nothing more will come (else: the filter's last_buf) */
    }
    if (!st->in_closed && !st->reset) {
        /* The response is all there is: the rest of the request body is
         * not needed (RFC 9114 4.1.2). */
        (void) nghttp3_conn_shutdown_stream_read(qc->h3, st->id);
        (void) ngtcp2_conn_shutdown_stream_read(qc->conn, st->id, NGHTTP3_H3_NO_ERROR);
    }
    sws_http_v3_resume(st);
}

/* The core is done with r: the stream's pool goes (st lives there). */
static void
sws_http_v3_release(sws_http_request_t *r)
{
    sws_http_v3_stream_t *st = r->stream;
    sws_http_v3_conn_t   *qc = st->background;

    sws_del_timer(&st->pace);
    sws_pool_destroy(st->pool);
    if (qc) {
        sws_http_v3_background_done(qc);
    }
}

static off_t
sws_http_v3_bytes_sent(sws_http_request_t *r)
{
    sws_http_v3_stream_t *st = r->stream;

    return st ? st->sent + (off_t) st->head_size : 0;
}
