/*
 * The response of an HTTP/2 stream: sws_http_proto_t for streams. The head
 * is built from the same request fields as the HTTP/1 head and encoded at
 * at once with our HPACK encoder (its state is the order of the blocks on
 * the wire) into HEADERS
 * and CONTINUATION frames; the body is the request's output chain (r->out),
 * from which DATA frames are made as the flow-control windows open, the
 * streams taking turns by their RFC 9218 priority: memory is copied and
 * files are read with pread, one DATA frame (http2_chunk_size) at a time,
 * straight into the connection's output queue. Nothing is read whole.
 */
#include <unistd.h>
#include "sws_http_v2.h"
#include "sws_http_limit_rate.h"
#include "sws_swar.h"

#define SWS_SERVER_FULL  "scalws/" SCALWS_VERSION
#define SWS_H2_DATE_LEN  (sizeof("Mon, 28 Sep 1970 06:00:00 GMT") - 1)

static sws_int_t sws_http_v2_send_header(sws_http_request_t *r);
static sws_int_t sws_http_v2_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *h, sws_uint_t n);
static sws_int_t sws_http_v2_send_body(sws_http_request_t *r, sws_chain_t *in);
static void      sws_http_v2_finish(sws_http_request_t *r, sws_int_t rc);
static void      sws_http_v2_release(sws_http_request_t *r);
static off_t     sws_http_v2_bytes_sent(sws_http_request_t *r);

/* The encoded header block, before it is cut into frames (per worker). */
static u_char *sws_http_v2_hbuf;
static size_t  sws_http_v2_hbuf_size;

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

/* DATA frames are copied, from files too (sws_http_v2_stream_data). */
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
    if (sws_http_v2_queue_rst(st->h2c, (uint32_t) st->id, error) != SWS_OK) {
        st->h2c->closing = 1;
    }
    sws_http_v2_post_send(st->h2c);
}

/* The per-worker buffer a header block is encoded into, of size octets
 * at least (it grows to the largest block yet): NULL when out of memory. */
static u_char *
sws_http_v2_block_buf(size_t size)
{
    u_char *nb;

    if (size > sws_http_v2_hbuf_size) {
        nb = realloc(sws_http_v2_hbuf, size);
        if (nb == NULL) {
            return NULL;
        }
        sws_http_v2_hbuf = nb;
        sws_http_v2_hbuf_size = size;
    }
    return sws_http_v2_hbuf;
}

/* An encoded header block into HEADERS (+ CONTINUATION) frames for st. */
static sws_int_t
sws_http_v2_send_block(sws_http_v2_stream_t *st, const u_char *p, size_t left, int end_stream)
{
    sws_http_v2_conn_t *h2c = st->h2c;
    size_t              k;
    u_char              flags;
    int                 first = 1;

    for ( ;; ) {
        k = sws_min(left, (size_t) h2c->peer_max_frame);
        flags = (u_char) ((k == left ? SWS_H2_FLAG_END_HEADERS : 0)
                          | (first && end_stream ? SWS_H2_FLAG_END_STREAM : 0));
        if (sws_http_v2_queue_head(h2c, k, first ? SWS_H2_HEADERS : SWS_H2_CONTINUATION,
                                   flags, (uint32_t) st->id) != SWS_OK
            || sws_http_v2_queue(h2c, p, k) != SWS_OK)
        {
            /* the encoder's table moved with the block: no other may follow */
            h2c->closing = 1;
            return SWS_ERROR;
        }
        /* As nginx counts: the head's frames whole. */
        st->sent += SWS_H2_FRAME_HEADER + k;
        if (st->r) {
            st->r->header_size += SWS_H2_FRAME_HEADER + k;
        }
        p += k;
        left -= k;
        first = 0;
        if (left == 0) {
            break;
        }
    }
    if (end_stream) {
        st->out_closed = 1;
        sws_del_timer(&st->wev);
    }
    sws_http_v2_post_send(h2c);
    return SWS_OK;
}

/* ---- the head ---- */

/* Is h a field to send: not deleted (hash 0), named, no HTTP/1
 * connection field? */
static int
sws_http_v2_sent_field(const sws_http_header_t *h)
{
    return h->hash && h->name.len && !sws_http_connection_field(&h->name);
}

/* The most the fields h[0..n) can take encoded. */
static size_t
sws_http_v2_fields_bound(const sws_http_header_t *h, sws_uint_t n)
{
    size_t     bound = 0;
    sws_uint_t i;

    for (i = 0; i < n; i++) {
        bound += sws_hpack_field_bound(h[i].name.len, h[i].value.len);
    }
    return bound;
}

/* Header fields h[0..n) encoded at p (names go in lower case, as HTTP/2
 * wants them): returns the end. */
static u_char *
sws_http_v2_encode_fields(sws_hpack_encoder_t *e, u_char *p, const sws_http_header_t *h,
    sws_uint_t n)
{
    sws_uint_t i;

    for (i = 0; i < n; i++) {
        if (sws_http_v2_sent_field(&h[i])) {
            p = sws_hpack_encode_header(e, p, h[i].name.data, h[i].name.len, h[i].value.data,
                                        h[i].value.len);
        }
    }
    return p;
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
    sws_hpack_encoder_t  *e = &st->h2c->hpack;
    u_char               *buf, *p;

    if (st->reset) {
        return SWS_ERROR;
    }
    buf = sws_http_v2_block_buf(SWS_HPACK_BLOCK_BOUND + sws_hpack_field_bound(7, 3)
                                + sws_http_v2_fields_bound(h, n));
    if (buf == NULL) {
        return SWS_ERROR;
    }
    p = sws_hpack_encode_begin(e, buf);
    p = sws_hpack_encode_status(e, p, status);
    p = sws_http_v2_encode_fields(e, p, h, n);
    return sws_http_v2_send_block(st, buf, (size_t) (p - buf), 0);
}

sws_int_t
sws_http_v2_send_continue(sws_http_v2_stream_t *st)
{
    u_char buf[SWS_HPACK_BLOCK_BOUND + sws_hpack_field_bound(7, 3)], *p;

    p = sws_hpack_encode_begin(&st->h2c->hpack, buf);
    p = sws_hpack_encode_status(&st->h2c->hpack, p, 100);   /* no 1xx is in the static table */
    return sws_http_v2_send_block(st, buf, (size_t) (p - buf), 0);
}

/* One string of a key, after its tag and length: NULL when it does not fit. */
static u_char *
sws_http_v2_key_str(u_char *kp, const u_char *kend, u_char tag, u_char how, const u_char *s,
    size_t n)
{
    if (kp == NULL || (size_t) (kend - kp) < n + 4 || n > 0xffff) {
        return NULL;
    }
    kp[0] = tag;
    kp[1] = how;
    kp[2] = (u_char) (n >> 8);
    kp[3] = (u_char) n;
    return sws_swar_copy(kp + 4, s, n);
}

/* The key of a response head for the encoder's memo (sws_hpack_memo_get):
 * its status, the fields we make (known[0..k), the last the Date, empty
 * when the response has its own), the response's own fields that go
 * (names as they are: they are lowered as they are encoded). NULL when it
 * does not fit. */
static u_char *
sws_http_v2_key(u_char *kp, const u_char *kend, sws_uint_t status, const sws_hpack_known_t *known,
    sws_uint_t k, const sws_http_header_t *h, sws_uint_t n)
{
    sws_uint_t i;

    kp[0] = (u_char) (status >> 8);
    kp[1] = (u_char) status;
    kp += 2;
    for (i = 0; i < k; i++) {
        kp = sws_http_v2_key_str(kp, kend, (u_char) known[i].name_index, (u_char) known[i].how,
                                 known[i].value, known[i].vlen);
    }
    for (i = 0; i < n; i++) {
        if (sws_http_v2_sent_field(&h[i])) {
            kp = sws_http_v2_key_str(kp, kend, 0, 0xfe, h[i].name.data, h[i].name.len);
            kp = sws_http_v2_key_str(kp, kend, 0, 0xfd, h[i].value.data, h[i].value.len);
        }
    }
    return kp;
}

static sws_int_t
sws_http_v2_send_header(sws_http_request_t *r)
{
    sws_http_v2_stream_t     *st = r->stream;
    sws_hpack_encoder_t      *e = &st->h2c->hpack;
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *date = r->date.len ? &r->date : sws_cached_http_time();
    sws_http_header_t        *h = r->headers_out.elts;
    sws_uint_t                n = r->headers_out.nelts;
    sws_str_t                 server;
    sws_hpack_known_t         known[7];
    sws_uint_t                k;
    u_char                   *buf, *p, *fields, num[24], lm[SWS_H2_DATE_LEN + 8], *end;
    u_char                    key[SWS_HPACK_MEMO_MAX], *kp;
    const u_char             *kept;
    size_t                    bound, klen;
    uint32_t                  changes;
    int                       body, date_own;

    if (st->reset) {
        return SWS_ERROR;
    }
    body = !(r->status < 200 || r->status == 204 || r->status == 304);
    if (clcf->server_tokens) {
        sws_str_set(&server, SWS_SERVER_FULL);
    } else {
        sws_str_set(&server, "scalws");
    }
    date_own = sws_http_v2_has_date(h, n);
    /* :status and content-length as 3 and 20 digits, last-modified and
     * date as dates */
    bound = SWS_HPACK_BLOCK_BOUND + sws_hpack_field_bound(7, 3)
            + sws_hpack_field_bound(6, server.len)
            + sws_hpack_field_bound(12, r->content_type.len)
            + sws_hpack_field_bound(14, 20) + sws_hpack_field_bound(13, SWS_H2_DATE_LEN)
            + sws_hpack_field_bound(4, r->etag.len) + sws_hpack_field_bound(8, r->location.len)
            + sws_http_v2_fields_bound(h, n) + sws_hpack_field_bound(4, date->len)
            + sws_hpack_field_bound(12, r->request_id.len);
    buf = sws_http_v2_block_buf(bound);
    if (buf == NULL) {
        return SWS_ERROR;
    }

    /* The fields we make: their static names by number, indexed but for
     * the Location (one response's); the response's own (headers_out)
     * after them, then the Date. */
    p = sws_hpack_encode_begin(e, buf);
    fields = p;
    k = 0;
    known[k++] = (sws_hpack_known_t) { SWS_HPACK_SERVER, server.data, server.len,
                                       SWS_HPACK_INDEX };
    if (r->content_type.len) {
        known[k++] = (sws_hpack_known_t) { SWS_HPACK_CONTENT_TYPE, r->content_type.data,
                                           r->content_type.len, SWS_HPACK_INDEX };
    }
    if (r->out_content_length >= 0 && (body || r->status == 304)) {
        end = sws_sprint_uint(num, (uint64_t) r->out_content_length);
        known[k++] = (sws_hpack_known_t) { SWS_HPACK_CONTENT_LENGTH, num,
                                           (size_t) (end - num), SWS_HPACK_INDEX };
    }
    if (r->last_modified >= 0) {
        end = sws_http_time(lm, r->last_modified);
        known[k++] = (sws_hpack_known_t) { SWS_HPACK_LAST_MODIFIED, lm, (size_t) (end - lm),
                                           SWS_HPACK_INDEX };
    }
    if (r->etag.len) {
        known[k++] = (sws_hpack_known_t) { SWS_HPACK_ETAG, r->etag.data, r->etag.len,
                                           SWS_HPACK_INDEX };
    }
    if (r->location.len) {
        known[k++] = (sws_hpack_known_t) { SWS_HPACK_LOCATION, r->location.data,
                                           r->location.len, SWS_HPACK_NO_INDEX };
    }
    /* ours, unless the response has its own (a proxied server's passed on,
     * a stored response's), as HTTP/1; the same second's is the entry the
     * first response of the second added */
    known[k] = (sws_hpack_known_t) { SWS_HPACK_DATE, date->data, date_own ? 0 : date->len,
                                     SWS_HPACK_INDEX };

    /* A connection's responses of one file are alike: what this one
     * encodes, as a key, finds the block of the last one that encoded the
     * same while the table has not changed (the fields' look-ups in the
     * table, the content-length's and date's fields, the names' static
     * search, all skipped). A request id is one response's: no memo. */
    kp = NULL;
    if (!(r->request_id.len && clcf->request_id)) {
        kp = sws_http_v2_key(key, key + sizeof(key), r->status, known, k + 1, h, n);
    }
    klen = kp ? (size_t) (kp - key) : 0;
    kept = klen ? sws_hpack_memo_get(e, key, klen, &bound) : NULL;
    if (kept) {
        p = sws_cpymem(p, kept, bound);

    } else {
        changes = e->changes;
        p = sws_hpack_encode_status(e, p, r->status);
        p = sws_hpack_encode_fields(e, p, known, k);
        p = sws_http_v2_encode_fields(e, p, h, n);
        if (!date_own) {
            p = sws_hpack_encode_fields(e, p, &known[k], 1);
        }
        if (r->request_id.len && clcf->request_id) {
            /* one response's */
            p = sws_hpack_encode_field(e, p, 0, (u_char *) "x-request-id", 12,
                                       r->request_id.data, r->request_id.len,
                                       SWS_HPACK_NO_INDEX);
        }
        if (klen) {
            sws_hpack_memo_put(e, changes, key, klen, fields, (size_t) (p - fields));
        }
    }

    /* Without a body (HEAD, 204, 304, an empty one) the HEADERS end the
     * stream. */
    st->data = !(r->header_only || !body
                 || (r->out_content_length == 0 && !r->expect_trailers));
    if (sws_http_v2_send_block(st, buf, (size_t) (p - buf), !st->data) != SWS_OK) {
        return SWS_ERROR;
    }
    st->submitted = 1;
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
    unsigned              last = 0;

    if (st->reset) {
        return SWS_ERROR;
    }
    if (!st->data) {
        return SWS_OK;         /* no body on this stream: dropped */
    }
    if (sws_http_out_queue(r, in, &last) != SWS_OK) {
        return SWS_ERROR;
    }
    if (last) {
        st->out_last = 1;
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
 * the stream instead of the last DATA frame (RFC 9113 8.1). *sent: 1 if
 * they went (0: none to send). */
static sws_int_t
sws_http_v2_trailers(sws_http_v2_stream_t *st, int *sent)
{
    sws_http_request_t  *r = st->r;
    sws_hpack_encoder_t *e = &st->h2c->hpack;
    sws_http_header_t   *h;
    sws_uint_t           i, n;
    u_char              *buf, *p;

    *sent = 0;
    if (r->trailers_out == NULL || r->trailers_out->nelts == 0) {
        return SWS_OK;
    }
    h = r->trailers_out->elts;
    n = r->trailers_out->nelts;
    for (i = 0; i < n && !sws_http_v2_sent_field(&h[i]); i++) { /* void */ }
    if (i == n) {
        return SWS_OK;
    }
    buf = sws_http_v2_block_buf(SWS_HPACK_BLOCK_BOUND + sws_http_v2_fields_bound(h, n));
    if (buf == NULL) {
        return SWS_ERROR;
    }
    p = sws_hpack_encode_begin(e, buf);
    p = sws_http_v2_encode_fields(e, p, h, n);
    *sent = 1;
    return sws_http_v2_send_block(st, buf, (size_t) (p - buf), 1);
}

static int
sws_http_v2_has_trailers(sws_http_request_t *r)
{
    return r->trailers_out && r->trailers_out->nelts;
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
        sws_http_v2_post_send(st->h2c);
    }
}

/* May st send now: DATA (within the windows) or its end? */
static int
sws_http_v2_sendable(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st)
{
    sws_http_request_t *r = st->r;

    if (!st->data || !st->submitted || st->out_closed || st->reset || st->paced
        || r == NULL)
    {
        return 0;
    }
    if (r->out == NULL) {
        return st->out_last;             /* the end needs no window */
    }
    return st->send_window > 0 && h2c->send_window > 0;
}

/* The stream to send next (RFC 9218 4): the lowest urgency first; within
 * it, non-incremental responses one after the other in the order of their
 * streams, then the incremental ones in turns. NULL: none may send. */
static sws_http_v2_stream_t *
sws_http_v2_next(sws_http_v2_conn_t *h2c)
{
    sws_queue_t          *q;
    sws_http_v2_stream_t *st, *best = NULL;

    for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams);
         q = sws_queue_next(q))
    {
        st = sws_queue_data(q, sws_http_v2_stream_t, queue);
        if (!sws_http_v2_sendable(h2c, st)) {
            continue;
        }
        if (best == NULL || st->urgency < best->urgency
            || (st->urgency == best->urgency
                && (st->incremental < best->incremental
                    || (st->incremental && best->incremental && st->served < best->served))))
        {
            best = st;      /* (in stream order: the first of equals stays) */
        }
    }
    return best;
}

/* The body is all sent: the trailers end the stream, or an empty DATA
 * frame does. */
static sws_int_t
sws_http_v2_body_end(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st)
{
    int sent;

    if (sws_http_v2_trailers(st, &sent) != SWS_OK) {
        return SWS_ERROR;
    }
    if (!sent) {
        if (sws_http_v2_queue_head(h2c, 0, SWS_H2_DATA, SWS_H2_FLAG_END_STREAM,
                                   (uint32_t) st->id) != SWS_OK)
        {
            return SWS_ERROR;
        }
        st->out_closed = 1;
    }
    sws_del_timer(&st->wev);
    return SWS_OK;
}

/* One DATA frame of st (or the end of its body): SWS_OK or SWS_ERROR. */
static sws_int_t
sws_http_v2_stream_data(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st)
{
    sws_http_request_t     *r = st->r;
    sws_http_v2_loc_conf_t *h2lcf = sws_http_loc_conf(r, &sws_http_v2_module);
    sws_chain_t            *cl;
    size_t                  chunk, have, n, k, copied;
    int                     end;

    chunk = sws_min(h2lcf->chunk_size, (size_t) h2c->peer_max_frame);
    have = sws_http_v2_out_size(r, chunk + 1);
    if (have == 0) {
        return sws_http_v2_body_end(h2c, st);          /* out_last */
    }
    if (sws_http_v2_pace(st, &chunk) != SWS_OK) {
        return SWS_OK;                   /* paced: the timer resumes it */
    }
    n = sws_min(have, chunk);
    n = (size_t) sws_min((int64_t) n, st->send_window);
    n = (size_t) sws_min((int64_t) n, h2c->send_window);
    end = n == have && st->out_last && !sws_http_v2_has_trailers(r);

    if (sws_http_v2_queue_head(h2c, n, SWS_H2_DATA, end ? SWS_H2_FLAG_END_STREAM : 0,
                               (uint32_t) st->id) != SWS_OK)
    {
        return SWS_ERROR;
    }
    for (cl = r->out, copied = 0; cl && copied < n; cl = cl->next) {
        if (sws_buf_special(cl->buf)) {
            continue;
        }
        k = sws_min((size_t) sws_buf_size(cl->buf), n - copied);
        if (sws_http_v2_queue_buf(h2c, cl->buf, k) != SWS_OK) {
            return SWS_ERROR;
        }
        copied += k;
    }
    r->out = sws_chain_update_sent(r->out, (off_t) n);
    while (r->out && !sws_buf_special(r->out->buf) && sws_buf_size(r->out->buf) == 0) {
        r->out = r->out->next;
    }
    st->send_window -= (int64_t) n;
    h2c->send_window -= (int64_t) n;
    st->sent += (off_t) n;              /* of DATA the payload: $body_bytes_sent */
    st->served = ++h2c->rr;

    if ((!r->done && r->write_event_handler) || r->filter_buffered) {
        st->drained = 1;        /* room was made: the producer may go on */
    }
    if (st->wev.timer_set) {
        /* Progress: the send timeout starts again, or stops. */
        if (r->out) {
            sws_add_timer(&st->wev, sws_http_core_loc(r)->send_timeout);
        } else {
            sws_del_timer(&st->wev);
        }
    }
    if (end) {
        st->out_closed = 1;
        sws_del_timer(&st->wev);
    } else if (n == have && st->out_last) {
        return sws_http_v2_body_end(h2c, st);
    }
    return SWS_OK;
}

int
sws_http_v2_send_data(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_stream_t *st;
    int                   produced = 0;

    while (!h2c->closing) {
        if (sws_http_v2_queue_room(h2c) == 0) {
            return 1;                    /* at the mark: more after the write */
        }
        st = sws_http_v2_next(h2c);
        if (st == NULL) {
            break;
        }
        if (sws_http_v2_stream_data(h2c, st) != SWS_OK) {
            sws_http_v2_reset(st, SWS_H2_INTERNAL_ERROR);
        }
        produced = 1;
    }
    return produced;
}

/*
 * A complete response, a request body still to come with a content-length
 * and all of its rest within the stream's window: the stream stays open
 * until the END_STREAM, so that a body of another length is still the
 * stream error RFC 9113 8.1.1 asks for (a RST_STREAM NO_ERROR now would
 * make the answer depend on which read the DATA fell into). The rest takes
 * no window of ours; client_body_timeout bounds the wait.
 */
static int
sws_http_v2_body_rest_awaited(sws_http_v2_stream_t *st)
{
    sws_http_v2_conn_t *h2c = st->h2c;

    if (st->content_length < 0 || st->r == NULL || h2c->goaway || h2c->draining
        || st->content_length - st->received > st->recv_window)
    {
        return 0;
    }
    if (!st->rev.timer_set) {
        sws_add_timer(&st->rev, sws_http_core_loc(st->r)->client_body_timeout);
    }
    return 1;
}

void
sws_http_v2_close_streams(sws_http_v2_conn_t *h2c)
{
    sws_queue_t          *q, *next;
    sws_http_v2_stream_t *st;

    for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams); q = next) {
        next = sws_queue_next(q);
        st = sws_queue_data(q, sws_http_v2_stream_t, queue);
        if (st->reset) {
            sws_http_v2_stream_close(st, SWS_H2_CANCEL);
            continue;
        }
        if (!st->out_closed) {
            continue;
        }
        if (!st->in_closed) {
            if (sws_http_v2_body_rest_awaited(st)) {
                continue;
            }
            /* The response is complete: the rest of the request body is
             * not needed (RFC 9113 8.1). */
            st->reset = 1;
            if (sws_http_v2_queue_rst(h2c, (uint32_t) st->id, SWS_H2_NO_ERROR) != SWS_OK) {
                h2c->closing = 1;
            }
        }
        sws_http_v2_stream_close(st, SWS_H2_NO_ERROR);
    }
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
            sws_http_v2_reset(st, SWS_H2_INTERNAL_ERROR);
        }
        return;
    }
    if (!r->filter_buffered) {
        st->out_last = 1;  /* nothing more will come (else: the filter's last_buf) */
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

/* Outside frame processing, once the frames are out: a streaming
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
            sws_http_v2_reset(st, SWS_H2_INTERNAL_ERROR);
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
