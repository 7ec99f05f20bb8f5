/*
 * On-the-fly compression: a header filter that decides, a body filter that
 * compresses as the body flows.
 *
 * The header filter compresses a response when a coding is on in the
 * location and: the status is 200, 403 or 404 (nginx's set); it has no
 * Content-Encoding and no "Cache-Control: no-transform"; it is not
 * header-only (HEAD, 204, 304); its type is in *_types; its length, when
 * known, is at least *_min_length (unless the client refused identity);
 * the request passes *_http_version, *_disable and *_proxied; and the
 * client's Accept-Encoding allows it. The response then loses its length
 * (chunked over HTTP/1.1) and its ranges (a Range request gets the whole
 * response, as from nginx), its ETag becomes weak, and with *_vary on it
 * says "Vary: Accept-Encoding" (also when this client got identity).
 *
 * The body filter takes input buffers as they come (memory, or file
 * ranges read with pread in chunks of SWS_COMPRESS_FILE_CHUNK) and writes
 * into at most *_buffers output buffers. When all of them wait for the
 * client it stops taking input: the producer's buffers stay unconsumed,
 * so the producer (the upstream framework) stops reading from its server,
 * and the request is marked buffered, so that the core calls the filter
 * again each time output was sent. A flush buffer (the upstream paused, an
 * SSE event) makes the coder flush; the last buffer finishes the stream.
 * Memory per request: the coder's state, the output buffers and one read
 * chunk, whatever the length of the body.
 */
#include <unistd.h>
#include "sws_compress.h"

#define SWS_COMPRESS_FILE_CHUNK  32768

typedef struct {
    sws_compress_stream_t  *stream;
    const sws_compress_coding_conf_t *cc;
    sws_chain_t            *in;         /* our links to input not yet consumed */
    sws_chain_t            *free;       /* output buffers ready for use */
    sws_chain_t            *busy;       /* passed on, not yet sent */
    sws_chain_t           **busy_tail;
    sws_chain_t            *out;        /* filled, to pass on */
    sws_chain_t           **out_tail;
    sws_chain_t            *cur;        /* the output buffer being filled */
    sws_int_t               nbufs;      /* output buffers allocated */
    sws_buf_t              *chunk;      /* file data read, being compressed */
    unsigned                flush:1;    /* a flush to do once the input is in */
    unsigned                last:1;     /* the last buffer arrived */
    unsigned                done:1;     /* the stream is finished and passed on */
} sws_compress_ctx_t;

static sws_http_header_filter_pt  sws_compress_next_header_filter;
static sws_http_body_filter_pt    sws_compress_next_body_filter;

static const sws_str_t  sws_compress_content_encoding = sws_string("Content-Encoding");
static const sws_str_t  sws_compress_vary = sws_string("Vary");
static const sws_str_t  sws_compress_accept_encoding = sws_string("Accept-Encoding");


/* ---- the decision -------------------------------------------------------- */

int
sws_compress_type_ok(const sws_compress_coding_conf_t *cc, const sws_str_t *type)
{
    size_t           len;
    sws_uint_t       i;
    const sws_str_t *t;

    /* "*" takes any response, even one without a type (as in nginx) */
    t = cc->types->elts;
    for (i = 0; i < cc->types->nelts; i++) {
        if (t[i].len == 1 && t[i].data[0] == '*') {
            return 1;
        }
    }
    if (type->len == 0) {
        return 0;
    }
    /* the media type without parameters ("text/html; charset=utf-8") */
    for (len = 0; len < type->len && type->data[len] != ';' && type->data[len] != ' '; len++) {
        /* find the end */
    }
    for (i = 0; i < cc->types->nelts; i++) {
        if (t[i].len == len && sws_strncasecmp(t[i].data, type->data, len) == 0) {
            return 1;
        }
    }
    return 0;
}


static int
sws_compress_has_token(const sws_str_t *v, const char *token)
{
    return v != NULL
           && sws_strlcasestrn(v->data, v->data + v->len, (const u_char *) token,
                               strlen(token) - 1) != NULL;
}


/* gzip_disable: "msie6" is MSIE 4 to 6 (without SV1); the others match
 * the User-Agent as case-insensitive substrings. */
static int
sws_compress_disabled(sws_http_request_t *r, const sws_compress_coding_conf_t *cc)
{
    const sws_str_t  *ua, *d;
    u_char           *p, *last;
    sws_uint_t        i;

    if (cc->disable == NULL || (ua = sws_http_header_in(r, "user-agent", 10)) == NULL) {
        return 0;
    }
    d = cc->disable->elts;
    for (i = 0; i < cc->disable->nelts; i++) {
        if (sws_str_eq_cstr(&d[i], "msie6")) {
            last = ua->data + ua->len;
            p = sws_strlcasestrn(ua->data, last, (const u_char *) "MSIE ", 4);
            if (p != NULL && p + 6 < last && p[5] >= '4' && p[5] <= '6' && p[6] == '.'
                && sws_strlcasestrn(ua->data, last, (const u_char *) "SV1", 2) == NULL)
            {
                return 1;
            }
            continue;
        }
        if (sws_strlcasestrn(ua->data, ua->data + ua->len, d[i].data, d[i].len - 1) != NULL) {
            return 1;
        }
    }
    return 0;
}


/* gzip_proxied: a request that came through a proxy (it has Via) is only
 * compressed when the flags allow it (nginx's rules). */
static int
sws_compress_proxied_ok(sws_http_request_t *r, const sws_compress_coding_conf_t *cc, int resp)
{
    sws_uint_t          p = cc->proxied;
    sws_http_header_t  *h;
    time_t              t;
    const sws_str_t    *etag;

    if (sws_http_header_in(r, "via", 3) == NULL) {
        return 1;
    }
    if (p & SWS_COMPRESS_PROXIED_OFF) {
        return 0;
    }
    if (p & SWS_COMPRESS_PROXIED_ANY) {
        return 1;
    }
    if ((p & SWS_COMPRESS_PROXIED_AUTH) && sws_http_header_in(r, "authorization", 13)) {
        return 1;
    }
    if (!resp) {
        return 0;
    }
    if ((p & SWS_COMPRESS_PROXIED_EXPIRED) && (h = sws_http_header_out(r, "expires", 7))) {
        t = sws_parse_http_time(h->value.data, h->value.len);
        if (t == -1 || t <= sws_time_sec()) {
            return 1;
        }
    }
    h = sws_http_header_out(r, "cache-control", 13);
    if (h != NULL && (((p & SWS_COMPRESS_PROXIED_NO_CACHE) && sws_compress_has_token(&h->value, "no-cache"))
                      || ((p & SWS_COMPRESS_PROXIED_NO_STORE) && sws_compress_has_token(&h->value, "no-store"))
                      || ((p & SWS_COMPRESS_PROXIED_PRIVATE) && sws_compress_has_token(&h->value, "private"))))
    {
        return 1;
    }
    if ((p & SWS_COMPRESS_PROXIED_NO_LM) && sws_http_last_modified(r) == -1) {
        return 1;
    }
    etag = sws_http_etag(r);
    if ((p & SWS_COMPRESS_PROXIED_NO_ETAG) && (etag == NULL || etag->len == 0)) {
        return 1;
    }
    return 0;
}


int
sws_compress_request_ok(sws_http_request_t *r, const sws_compress_coding_conf_t *cc, int resp)
{
    return sws_http_version(r) >= cc->http_version && !sws_compress_disabled(r, cc)
           && sws_compress_proxied_ok(r, cc, resp);
}


sws_int_t
sws_compress_negotiate(sws_http_request_t *r, const sws_compress_loc_conf_t *lcf,
    sws_uint_t allowed, sws_compress_accept_t *a)
{
    const sws_str_t  *ae = sws_http_header_in(r, "accept-encoding", 15);

    if (ae == NULL || ae->len == 0) {
        /* RFC 9110 12.5.3 lets us pick any coding then; nginx (and
         * every cautious server) sends identity */
        a->identity_q = 1000;
        return -1;
    }
    sws_compress_accept_parse(ae->data, ae->len, a);
    return sws_compress_accept_choose(a, allowed, lcf->prefer, lcf->nprefer);
}


sws_int_t
sws_compress_add_vary(sws_http_request_t *r)
{
    const sws_array_t        *headers = sws_http_headers_out(r);
    const sws_http_header_t  *h = headers->elts;
    sws_uint_t                i;

    for (i = 0; i < headers->nelts; i++) {
        if (h[i].hash && sws_str_caseeq_cstr(&h[i].name, "vary")
            && (sws_compress_has_token(&h[i].value, "accept-encoding")
                || (h[i].value.len == 1 && h[i].value.data[0] == '*')))
        {
            return SWS_OK;
        }
    }
    return sws_http_header_out_add(r, &sws_compress_vary, &sws_compress_accept_encoding)
           ? SWS_OK : SWS_ERROR;
}


/* W/"x" for "x": a compressed body is not byte-identical to the file. */
static sws_int_t
sws_compress_weaken_etag(sws_http_request_t *r)
{
    const sws_str_t  *etag = sws_http_etag(r);
    sws_str_t        *weak;

    if (etag == NULL || etag->len == 0 || etag->data[0] != '"') {
        return SWS_OK;                  /* none, or already weak */
    }
    weak = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + etag->len + 2);
    if (weak == NULL) {
        return SWS_ERROR;
    }
    weak->data = (u_char *) (weak + 1);
    weak->data[0] = 'W';
    weak->data[1] = '/';
    sws_memcpy(weak->data + 2, etag->data, etag->len);
    weak->len = etag->len + 2;
    sws_http_set_etag(r, weak);
    return SWS_OK;
}


static sws_int_t
sws_compress_header_filter(sws_http_request_t *r)
{
    sws_int_t                 coding;
    sws_uint_t                c, status, allowed = 0, vary = 0;
    off_t                     len;
    sws_http_header_t        *h;
    sws_compress_ctx_t       *ctx;
    sws_compress_accept_t     accept;
    const sws_str_t          *type;
    sws_compress_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_compress_coding_conf_t *cc;

    for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
        allowed |= lcf->coding[c].enable ? 1u << c : 0;
    }
    if (allowed == 0) {
        return sws_compress_next_header_filter(r);
    }

    status = sws_http_status(r);
    if ((status != SWS_HTTP_OK && status != SWS_HTTP_FORBIDDEN && status != SWS_HTTP_NOT_FOUND)
        || sws_http_header_only(r) || sws_http_method(r) == SWS_HTTP_HEAD
        || ((h = sws_http_header_out(r, "content-encoding", 16)) != NULL && h->value.len)
        || ((h = sws_http_header_out(r, "cache-control", 13)) != NULL
            && sws_compress_has_token(&h->value, "no-transform")))
    {
        return sws_compress_next_header_filter(r);
    }

    type = sws_http_content_type(r);
    len = sws_http_content_length(r);

    for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
        cc = &lcf->coding[c];
        if (!(allowed & (1u << c))) {
            continue;
        }
        if (len == 0 || !sws_compress_type_ok(cc, type)) {
            allowed &= ~(1u << c);
            continue;
        }
        vary |= (sws_uint_t) cc->vary;
        if (!sws_compress_request_ok(r, cc, 1)) {
            allowed &= ~(1u << c);
        }
    }

    if (vary && allowed != 0 && sws_compress_add_vary(r) != SWS_OK) {
        return SWS_ERROR;
    }
    if (vary && allowed == 0) {
        /* the type would be compressed for another client */
        for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
            if (lcf->coding[c].enable && lcf->coding[c].vary && len != 0
                && sws_compress_type_ok(&lcf->coding[c], type))
            {
                if (sws_compress_add_vary(r) != SWS_OK) {
                    return SWS_ERROR;
                }
                break;
            }
        }
    }
    if (allowed == 0) {
        return sws_compress_next_header_filter(r);
    }

    coding = sws_compress_negotiate(r, lcf, allowed, &accept);
    if (coding < 0) {
        return sws_compress_next_header_filter(r);
    }
    cc = &lcf->coding[coding];
    if ((len > 0 && (size_t) len < cc->min_length && accept.identity_q != 0)
        || sws_http_parent(r) != NULL)
    {
        /* (a subrequest's body is for the module that asked, not for
         * the client's Accept-Encoding: nginx leaves it too) */
        return sws_compress_next_header_filter(r);
    }

    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_compress_ctx_t));
    if (ctx == NULL) {
        return SWS_ERROR;
    }
    ctx->cc = cc;
    ctx->stream = sws_compress_stream_create(r, (sws_uint_t) coding, cc->level, len);
    if (ctx->stream == NULL) {
        return SWS_ERROR;
    }
    ctx->busy_tail = &ctx->busy;
    ctx->out_tail = &ctx->out;
    sws_http_set_ctx(r, &sws_module, ctx);

    if (sws_http_header_out_add(r, &sws_compress_content_encoding,
                                &sws_compress_token[coding]) == NULL
        || sws_compress_weaken_etag(r) != SWS_OK)
    {
        return SWS_ERROR;
    }
    sws_http_set_content_length(r, -1);
    sws_http_allow_ranges(r, 0);
    sws_http_header_out_remove(r, "accept-ranges", 13);

    return sws_compress_next_header_filter(r);
}


/* ---- the body ------------------------------------------------------------ */

/* Sent output buffers go back to the free list. */
static void
sws_compress_reclaim(sws_compress_ctx_t *ctx)
{
    sws_chain_t  *cl;

    while ((cl = ctx->busy) != NULL && cl->buf->pos == cl->buf->last) {
        ctx->busy = cl->next;
        cl->buf->pos = cl->buf->last = cl->buf->start;
        cl->buf->flush = 0;
        cl->buf->last_buf = 0;
        cl->next = ctx->free;
        ctx->free = cl;
    }
    if (ctx->busy == NULL) {
        ctx->busy_tail = &ctx->busy;
    }
}


/* An output buffer to write into, or NULL when all of them wait to be sent. */
static sws_buf_t *
sws_compress_out_buf(sws_http_request_t *r, sws_compress_ctx_t *ctx)
{
    sws_chain_t  *cl;
    sws_buf_t    *b;

    if (ctx->cur) {
        return ctx->cur->buf;
    }
    cl = ctx->free;
    if (cl) {
        ctx->free = cl->next;
    } else {
        if (ctx->nbufs >= ctx->cc->bufs_num) {
            return NULL;
        }
        b = sws_create_temp_buf(sws_http_pool(r), ctx->cc->bufs_size);
        cl = sws_alloc_chain_link(sws_http_pool(r));
        if (b == NULL || cl == NULL) {
            return NULL;
        }
        b->tag = ctx;
        cl->buf = b;
        ctx->nbufs++;
    }
    cl->next = NULL;
    ctx->cur = cl;
    return cl->buf;
}


/* Queue the current output buffer (with its own link) to be passed on. */
static void
sws_compress_out_done(sws_compress_ctx_t *ctx)
{
    *ctx->out_tail = ctx->cur;
    ctx->out_tail = &ctx->cur->next;
    ctx->cur = NULL;
}


/*
 * Drop the input links whose data is all taken, noting their flags. At
 * once: a producer reuses a buffer as soon as it sees it taken (the
 * upstream framework does, for its next read), and a stale link to it
 * would take the new data twice.
 */
static void
sws_compress_drop_used(sws_http_request_t *r, sws_compress_ctx_t *ctx)
{
    sws_chain_t  *cl;
    sws_buf_t    *b;

    if (ctx->chunk && ctx->chunk->pos < ctx->chunk->last) {
        return;                         /* the file buffer is not done */
    }
    while ((cl = ctx->in) != NULL) {
        b = cl->buf;
        if (sws_buf_in_memory(b) ? b->pos < b->last
                                 : b->in_file && b->file_pos < b->file_last)
        {
            return;
        }
        if (b->flush) {
            ctx->flush = 1;
        }
        if (b->last_buf) {
            ctx->last = 1;
        }
        ctx->in = cl->next;
        sws_free_chain(sws_http_pool(r), cl);
    }
}


/*
 * The input to compress now, as memory [pos, last) of *from: the first
 * input buffer with data (file data read into ctx->chunk first). Returns
 * 0 when no input is left.
 */
static sws_int_t
sws_compress_input(sws_http_request_t *r, sws_compress_ctx_t *ctx, sws_buf_t **from)
{
    sws_buf_t    *b, *ch;
    ssize_t       n;
    size_t        size;

    if (ctx->chunk && ctx->chunk->pos < ctx->chunk->last) {
        *from = ctx->chunk;
        return 1;
    }
    sws_compress_drop_used(r, ctx);
    if (ctx->in == NULL) {
        return 0;
    }
    b = ctx->in->buf;
    if (sws_buf_in_memory(b)) {
        *from = b;
        return 1;
    }

    /* a file range (drop_used left only one with data): the next chunk */
    if (ctx->chunk == NULL) {
        ctx->chunk = sws_create_temp_buf(sws_http_pool(r), SWS_COMPRESS_FILE_CHUNK);
        if (ctx->chunk == NULL) {
            return SWS_ERROR;
        }
    }
    ch = ctx->chunk;
    size = (size_t) sws_min((off_t) SWS_COMPRESS_FILE_CHUNK, b->file_last - b->file_pos);
    n = pread(b->fd, ch->start, size, b->file_pos);
    if (n <= 0) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), n == -1 ? errno : 0,
                      "pread() of the body to compress failed%s",
                      n == 0 ? " (file truncated?)" : "");
        return SWS_ERROR;
    }
    b->file_pos += n;
    ch->pos = ch->start;
    ch->last = ch->start + n;
    *from = ch;
    return 1;
}


/* Compress what input there is into free output buffers. Returns SWS_OK
 * (input used up, or the stream done), SWS_AGAIN (out of output buffers),
 * SWS_ERROR. */
static sws_int_t
sws_compress_deflate(sws_http_request_t *r, sws_compress_ctx_t *ctx)
{
    sws_buf_t     *in, *out;
    sws_int_t      rc, have;
    const u_char  *pos;
    int            mode;

    for ( ;; ) {
        have = sws_compress_input(r, ctx, &in);
        if (have == SWS_ERROR) {
            return SWS_ERROR;
        }
        if (!have && ctx->last) {
            mode = SWS_COMPRESS_FINISH;
        } else if (!have && ctx->flush) {
            mode = SWS_COMPRESS_FLUSH;
        } else if (!have) {
            return SWS_OK;                  /* wait for more input */
        } else {
            mode = SWS_COMPRESS_RUN;
        }

        out = sws_compress_out_buf(r, ctx);
        if (out == NULL) {
            return ctx->nbufs >= ctx->cc->bufs_num ? SWS_AGAIN : SWS_ERROR;
        }

        if (have) {
            pos = in->pos;
            rc = sws_compress_stream_run(ctx->stream, &pos, in->last, &out->last, out->end,
                                         mode);
            in->pos = (u_char *) pos;
            sws_compress_drop_used(r, ctx);
        } else {
            pos = NULL;
            rc = sws_compress_stream_run(ctx->stream, &pos, NULL, &out->last, out->end, mode);
        }
        if (rc == SWS_ERROR) {
            return SWS_ERROR;
        }

        if (out->last == out->end) {
            sws_compress_out_done(ctx);
        }
        if (rc == SWS_OK && mode != SWS_COMPRESS_RUN) {
            /* everything so far is in the buffers: pass it on now */
            if (ctx->cur && ctx->cur->buf->last > ctx->cur->buf->pos) {
                sws_compress_out_done(ctx);
            }
            if (ctx->out) {
                out = ((sws_chain_t *) ((u_char *) ctx->out_tail
                                        - offsetof(sws_chain_t, next)))->buf;
                out->flush = 1;
                out->last_buf = mode == SWS_COMPRESS_FINISH;
            }
            ctx->flush = 0;
            if (mode == SWS_COMPRESS_FINISH) {
                ctx->done = 1;
                return SWS_OK;
            }
        }
    }
}


/* Our output buffers among the links just passed on: keep them in order
 * to know when they were sent (the links are ours; the next filters copy
 * them). */
static void
sws_compress_to_busy(sws_http_request_t *r, sws_compress_ctx_t *ctx, sws_chain_t *out)
{
    (void) r;
    *ctx->busy_tail = out;
    while (*ctx->busy_tail) {
        ctx->busy_tail = &(*ctx->busy_tail)->next;
    }
}


static sws_int_t
sws_compress_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_compress_ctx_t  *ctx = sws_http_get_ctx(r, &sws_module);
    sws_chain_t         *out;
    sws_int_t            rc, next_rc = SWS_OK;

    if (ctx == NULL || ctx->done) {
        return sws_compress_next_body_filter(r, in);
    }

    /* our own links to the input: the caller may reuse its chain */
    if (in && sws_chain_add_copy(sws_http_pool(r), &ctx->in, in) != SWS_OK) {
        return SWS_ERROR;
    }

    for ( ;; ) {
        sws_compress_reclaim(ctx);

        rc = sws_compress_deflate(r, ctx);
        if (rc == SWS_ERROR) {
            sws_http_set_buffered(r, 0);
            return SWS_ERROR;
        }

        out = ctx->out;
        ctx->out = NULL;
        ctx->out_tail = &ctx->out;
        if (out == NULL && in != NULL && rc == SWS_OK) {
            break;                      /* nothing to pass yet: more input first */
        }

        next_rc = sws_compress_next_body_filter(r, out);
        if (next_rc == SWS_ERROR) {
            sws_http_set_buffered(r, 0);
            return SWS_ERROR;
        }
        sws_compress_to_busy(r, ctx, out);
        sws_compress_reclaim(ctx);

        /* out of buffers and the client took some at once: go on */
        if (rc == SWS_AGAIN && ctx->free != NULL) {
            in = NULL;
            continue;
        }
        break;
    }

    /* Holding input (or output to flush or finish) while the client is
     * slow: the core calls again once some output went out. */
    if (!ctx->done && rc == SWS_AGAIN) {
        sws_http_set_buffered(r, 1);
        return SWS_AGAIN;
    }
    sws_http_set_buffered(r, 0);
    return ctx->busy ? SWS_AGAIN : next_rc;
}


sws_int_t
sws_compress_filter_init(sws_conf_t *cf)
{
    (void) cf;
    sws_compress_next_header_filter = sws_http_insert_header_filter(sws_compress_header_filter);
    sws_compress_next_body_filter = sws_http_insert_body_filter(sws_compress_body_filter);
    return SWS_OK;
}
