/*
 * Range requests (RFC 9110 section 14) for responses whose producer called
 * sws_http_allow_ranges(r, 1): 200 responses of known length to GET
 * (sws_http_allow_single_range(r): one range at most, several get the
 * whole).
 *
 *   no Range, or Range ignored      200 + "Accept-Ranges: bytes"
 *   If-Range does not match         200 (the whole representation)
 *   no satisfiable range            416 + "Content-Range: bytes * /SIZE", no body
 *   one range                       206 + Content-Range, the body trimmed
 *   several ranges                  206 multipart/byteranges
 *   more than max_ranges            200, as without Range (max_ranges 0:
 *                                   no ranges, no Accept-Ranges; as nginx)
 *
 * The body filter never copies data: it trims the producer's buffers, or
 * makes new buffers pointing into the same file or memory. A multipart body
 * is collected until its last buffer (the static module sends one), so a
 * producer that allows ranges must not reuse its buffers before the
 * response is sent. Run after the not-modified filter.
 */
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_http_parse.h"


enum {
    SWS_HTTP_RANGE_DROP = 0,        /* 416: no body */
    SWS_HTTP_RANGE_SINGLE,
    SWS_HTTP_RANGE_MULTI
};

typedef struct {
    sws_uint_t         type;
    unsigned           done:1;      /* the last buffer went out */
    off_t              offset;      /* body bytes seen so far */
    off_t              size;        /* the whole representation */
    sws_http_range_t  *ranges;
    sws_uint_t         nranges;
    sws_str_t         *heads;       /* MULTI: part headers, one per range */
    sws_str_t          tail;        /* MULTI: the closing boundary */
    sws_chain_t       *body;        /* MULTI: the body collected so far */
    sws_buf_t         *page;        /* DROP: the 416 page sent instead */
} sws_http_range_ctx_t;


static sws_int_t sws_http_range_init(sws_conf_t *cf);

sws_module_t  sws_http_range_filter_module = {
    SWS_MODULE_ABI,
    .name = "range_filter",
    .postconfiguration = sws_http_range_init,
};

static sws_http_header_filter_pt  sws_http_next_header_filter;
static sws_http_body_filter_pt    sws_http_next_body_filter;

static const sws_str_t  sws_http_accept_ranges = sws_string("Accept-Ranges");
static const sws_str_t  sws_http_bytes = sws_string("bytes");
static const sws_str_t  sws_http_content_range = sws_string("Content-Range");
static sws_str_t        sws_http_range_no_type = { 0, (u_char *) "" };

#define SWS_HTTP_MULTIPART_TYPE  "multipart/byteranges; boundary="
#define SWS_HTTP_OFF_LEN         20     /* digits of the largest off_t */


/* ---- the header filter ---------------------------------------------- */

/* If-Range: an entity-tag matches the ETag by strong comparison; a date
 * must equal Last-Modified exactly. */
static int
sws_http_range_if_range(sws_http_request_t *r, const sws_str_t *v)
{
    time_t            t, lm;
    const sws_str_t  *etag;

    if (v->len >= 2 && v->data[0] == '"') {
        etag = sws_http_etag(r);
        return etag != NULL && etag->len == v->len
               && memcmp(etag->data, v->data, v->len) == 0;
    }

    if (v->len >= 2 && v->data[0] == 'W' && v->data[1] == '/') {
        return 0;                   /* a weak tag never matches strongly */
    }

    t = sws_parse_http_time(v->data, v->len);
    lm = sws_http_last_modified(r);

    return t != -1 && lm != -1 && t == lm;
}


/* One If-Range line? Two are a list, which is no validator: nothing
 * matches it (RFC 9110 13.1.5), and the whole is sent (nginx: 400). */
static int
sws_http_range_if_range_once(sws_http_request_t *r)
{
    const sws_array_t        *a = sws_http_headers_in(r);
    const sws_http_header_t  *h = a->elts;
    sws_uint_t                i, n = 0;

    for (i = 0; i < a->nelts; i++) {
        n += h[i].hash != 0 && h[i].name.len == 8 && memcmp(h[i].name.data, "if-range", 8) == 0;
    }
    return n == 1;
}


static sws_int_t
sws_http_range_add_header(sws_http_request_t *r, const sws_str_t *name, const sws_str_t *value)
{
    return sws_http_header_out_add(r, name, value) != NULL ? SWS_OK : SWS_ERROR;
}


/* "bytes a-b/size" (b inclusive), or "bytes * /size" without range. */
static u_char *
sws_http_range_print(u_char *p, const sws_http_range_t *range, off_t size)
{
    p = sws_cpymem(p, "bytes ", 6);
    if (range == NULL) {
        *p++ = '*';
    } else {
        p = sws_sprint_uint(p, (uint64_t) range->start);
        *p++ = '-';
        p = sws_sprint_uint(p, (uint64_t) range->end - 1);
    }
    *p++ = '/';
    return sws_sprint_uint(p, (uint64_t) size);
}


static sws_int_t
sws_http_range_content_range(sws_http_request_t *r, const sws_http_range_t *range, off_t size)
{
    sws_str_t  *v;

    v = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + sizeof("bytes -/") - 1
                                     + 3 * SWS_HTTP_OFF_LEN);
    if (v == NULL) {
        return SWS_ERROR;
    }
    v->data = (u_char *) (v + 1);
    v->len = (size_t) (sws_http_range_print(v->data, range, size) - v->data);

    return sws_http_range_add_header(r, &sws_http_content_range, v);
}


static sws_int_t
sws_http_range_not_satisfiable(sws_http_request_t *r, sws_http_range_ctx_t *ctx, off_t size)
{
    static sws_str_t  html = sws_string("text/html");

    ctx->type = SWS_HTTP_RANGE_DROP;

    /* the core's page for 416, without the representation's validators,
     * as nginx's */
    if (sws_http_error_page_make(r, SWS_HTTP_RANGE_NOT_SATISFIABLE, &ctx->page) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_http_set_status(r, SWS_HTTP_RANGE_NOT_SATISFIABLE);
    sws_http_set_content_length(r, ctx->page ? ctx->page->last - ctx->page->pos : 0);
    sws_http_set_content_type(r, ctx->page ? &html : &sws_http_range_no_type);
    sws_http_set_etag(r, NULL);
    sws_http_set_last_modified(r, -1);
    if (sws_http_method(r) == SWS_HTTP_HEAD) {
        ctx->page = NULL;
    }

    if (sws_http_range_content_range(r, NULL, size) != SWS_OK) {
        return SWS_ERROR;
    }

    return sws_http_next_header_filter(r);
}


static sws_int_t
sws_http_range_single(sws_http_request_t *r, sws_http_range_ctx_t *ctx,
    const sws_http_range_t *range, off_t size)
{
    ctx->type = SWS_HTTP_RANGE_SINGLE;

    sws_http_set_status(r, SWS_HTTP_PARTIAL_CONTENT);
    sws_http_set_content_length(r, range->end - range->start);

    if (sws_http_range_content_range(r, range, size) != SWS_OK) {
        return SWS_ERROR;
    }

    return sws_http_next_header_filter(r);
}


/* A 20-digit boundary, different per request and per worker. */
static u_char *
sws_http_range_boundary(u_char *p)
{
    static uint64_t  seq;
    uint64_t         x;
    u_char           digits[SWS_HTTP_OFF_LEN], *end;
    size_t           n;

    /* splitmix64 over (pid, time, sequence) */
    x = ((uint64_t) getpid() << 40) ^ ((uint64_t) sws_current_msec() << 8) ^ ++seq;
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;

    end = sws_sprint_uint(digits, x);
    n = (size_t) (end - digits);
    memset(p, '0', SWS_HTTP_OFF_LEN - n);

    return sws_cpymem(p + SWS_HTTP_OFF_LEN - n, digits, n);
}


off_t
sws_http_range_multipart_text(sws_pool_t *pool, const sws_str_t *content_type,
    const sws_http_range_t *ranges, sws_uint_t n, off_t size, sws_str_t *type,
    sws_str_t *heads, sws_str_t *tail)
{
    u_char            *p, *boundary;
    off_t              len;
    size_t             head_max;
    sws_uint_t         i;
    static sws_str_t   no_type = sws_null_string;

    if (content_type == NULL) {
        content_type = &no_type;
    }

    /* Content-Type: multipart/byteranges; boundary=B */
    type->data = sws_pnalloc(pool, sizeof(SWS_HTTP_MULTIPART_TYPE) - 1 + SWS_HTTP_OFF_LEN);
    if (type->data == NULL) {
        return -1;
    }
    p = sws_cpymem(type->data, SWS_HTTP_MULTIPART_TYPE, sizeof(SWS_HTTP_MULTIPART_TYPE) - 1);
    boundary = p;
    p = sws_http_range_boundary(p);
    type->len = (size_t) (p - type->data);

    /* each part: CRLF "--" B CRLF [Content-Type: T CRLF] Content-Range: R CRLF CRLF */
    head_max = sizeof("\r\n--\r\nContent-Type: \r\nContent-Range: bytes -/\r\n\r\n") - 1
               + SWS_HTTP_OFF_LEN + content_type->len + 3 * SWS_HTTP_OFF_LEN;

    p = sws_pnalloc(pool, n * head_max + sizeof("\r\n----\r\n") - 1 + SWS_HTTP_OFF_LEN);
    if (p == NULL) {
        return -1;
    }

    len = 0;

    for (i = 0; i < n; i++) {
        heads[i].data = p;
        p = sws_cpymem(p, "\r\n--", 4);
        p = sws_cpymem(p, boundary, SWS_HTTP_OFF_LEN);
        if (content_type->len) {
            p = sws_cpymem(p, "\r\nContent-Type: ", 16);
            p = sws_cpymem(p, content_type->data, content_type->len);
        }
        p = sws_cpymem(p, "\r\nContent-Range: ", 17);
        p = sws_http_range_print(p, &ranges[i], size);
        p = sws_cpymem(p, "\r\n\r\n", 4);
        heads[i].len = (size_t) (p - heads[i].data);

        len += (off_t) heads[i].len + ranges[i].end - ranges[i].start;
    }

    tail->data = p;
    p = sws_cpymem(p, "\r\n--", 4);
    p = sws_cpymem(p, boundary, SWS_HTTP_OFF_LEN);
    p = sws_cpymem(p, "--\r\n", 4);
    tail->len = (size_t) (p - tail->data);

    return len + (off_t) tail->len;
}


static sws_int_t
sws_http_range_multipart(sws_http_request_t *r, sws_http_range_ctx_t *ctx, off_t size)
{
    off_t        len;
    sws_str_t   *type;
    sws_pool_t  *pool = sws_http_pool(r);

    type = sws_palloc(pool, sizeof(sws_str_t));
    ctx->heads = sws_palloc(pool, ctx->nranges * sizeof(sws_str_t));
    if (type == NULL || ctx->heads == NULL) {
        return SWS_ERROR;
    }
    len = sws_http_range_multipart_text(pool, sws_http_content_type(r), ctx->ranges,
                                        ctx->nranges, size, type, ctx->heads, &ctx->tail);
    if (len < 0) {
        return SWS_ERROR;
    }

    ctx->type = SWS_HTTP_RANGE_MULTI;

    sws_http_set_status(r, SWS_HTTP_PARTIAL_CONTENT);
    sws_http_set_content_type(r, type);
    sws_http_set_content_length(r, len);

    return sws_http_next_header_filter(r);
}


static sws_int_t
sws_http_range_header_filter(sws_http_request_t *r)
{
    off_t                  size;
    sws_int_t              n;
    const sws_str_t       *range, *if_range;
    sws_http_range_t       ranges[SWS_HTTP_RANGE_MAX];
    sws_http_range_ctx_t  *ctx;
    sws_int_t              max = sws_http_core_loc(r)->max_ranges;

    /* (the request's fields read directly: this runs for every 200) */
    if (r->status != SWS_HTTP_OK || !r->allow_ranges || max == 0) {
        return sws_http_next_header_filter(r);
    }

    size = r->out_content_length;
    if (size < 0) {
        return sws_http_next_header_filter(r);
    }

    /* Range only for GET; HEAD gets the 200 head. r->range_in: the head
     * has a Range field (the usual request has none: no search). */
    if (r->method != SWS_HTTP_GET || !r->range_in || sws_http_is_subrequest(r)) {
        goto accept;                /* (the client's Range is not a subrequest's) */
    }

    range = sws_http_header_in(r, "range", 5);
    if (range == NULL) {
        goto accept;
    }

    if_range = sws_http_header_in(r, "if-range", 8);
    if (if_range != NULL
        && (!sws_http_range_if_range(r, if_range) || !sws_http_range_if_range_once(r)))
    {
        goto accept;
    }

    if (r->single_range) {
        max = 1;                    /* several: the whole, as nginx */
    }
    n = sws_http_parse_range(range->data, range->len, size, ranges,
                             (sws_uint_t) sws_min(max, SWS_HTTP_RANGE_MAX));
    if (n < 0) {
        goto accept;                /* malformed, not bytes, or too many */
    }

    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_http_range_ctx_t)
                                        + sws_max(n, 1) * sizeof(sws_http_range_t));
    if (ctx == NULL) {
        return SWS_ERROR;
    }
    ctx->size = size;
    ctx->ranges = (sws_http_range_t *) (ctx + 1);
    ctx->nranges = (sws_uint_t) n;
    memcpy(ctx->ranges, ranges, (size_t) n * sizeof(sws_http_range_t));

    sws_http_set_ctx(r, &sws_http_range_filter_module, ctx);

    if (n == 0) {
        return sws_http_range_not_satisfiable(r, ctx, size);
    }
    if (n == 1) {
        return sws_http_range_single(r, ctx, &ranges[0], size);
    }
    return sws_http_range_multipart(r, ctx, size);

accept:

    if (sws_http_range_add_header(r, &sws_http_accept_ranges, &sws_http_bytes) != SWS_OK) {
        return SWS_ERROR;
    }

    return sws_http_next_header_filter(r);
}


/* ---- the body filter ------------------------------------------------ */

/* The producer's buffer is done with (for producers that reuse buffers). */
static void
sws_http_range_consume(sws_buf_t *b)
{
    b->pos = b->last;
    b->file_pos = b->file_last;
}


/* Append a link to b at *ll; returns the new tail pointer or NULL. */
static sws_chain_t **
sws_http_range_link(sws_pool_t *pool, sws_chain_t **ll, sws_buf_t *b)
{
    sws_chain_t  *cl = sws_alloc_chain_link(pool);

    if (cl == NULL) {
        return NULL;
    }
    cl->buf = b;
    cl->next = NULL;
    *ll = cl;
    return &cl->next;
}


static sws_int_t
sws_http_range_send_last(sws_http_request_t *r)
{
    sws_buf_t    *b;
    sws_chain_t  *out = NULL;
    sws_pool_t   *pool = sws_http_pool(r);

    b = sws_calloc_buf(pool);
    if (b == NULL || sws_http_range_link(pool, &out, b) == NULL) {
        return SWS_ERROR;
    }
    b->last_buf = 1;
    b->last_in_chain = 1;

    return sws_http_next_body_filter(r, out);
}


static sws_int_t
sws_http_range_short(sws_http_request_t *r, sws_http_range_ctx_t *ctx)
{
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                  "range: the body ended after %lld of %lld bytes",
                  (long long) ctx->offset, (long long) ctx->size);
    return SWS_ERROR;
}


/* 416: drop the body, pass on only its end (after the page). */
static sws_int_t
sws_http_range_drop(sws_http_request_t *r, sws_http_range_ctx_t *ctx, sws_chain_t *in)
{
    int           last = 0;
    sws_chain_t  *out = NULL;

    for ( ; in != NULL; in = in->next) {
        last |= in->buf->last_buf;
        sws_http_range_consume(in->buf);
    }

    if (!last || ctx->done) {
        return SWS_OK;
    }
    ctx->done = 1;
    if (ctx->page) {
        ctx->page->last_buf = 1;
        ctx->page->last_in_chain = 1;
        if (sws_http_range_link(sws_http_pool(r), &out, ctx->page) == NULL) {
            return SWS_ERROR;
        }
        return sws_http_next_body_filter(r, out);
    }

    return sws_http_range_send_last(r);
}


/* One range [start, end): trim each buffer to its part of it, in place. */
static sws_int_t
sws_http_range_single_body(sws_http_request_t *r, sws_http_range_ctx_t *ctx, sws_chain_t *in)
{
    off_t          start, end, size, from, to;
    sws_buf_t     *b;
    sws_pool_t    *pool = sws_http_pool(r);
    sws_chain_t   *out = NULL, **ll = &out;

    start = ctx->ranges[0].start;
    end = ctx->ranges[0].end;

    for ( ; in != NULL; in = in->next) {
        b = in->buf;

        if (ctx->done) {
            sws_http_range_consume(b);
            continue;
        }

        if (sws_buf_special(b)) {
            if (b->last_buf) {
                return sws_http_range_short(r, ctx);
            }
            ll = sws_http_range_link(pool, ll, b);      /* flush, sync */
            if (ll == NULL) {
                return SWS_ERROR;
            }
            continue;
        }

        size = sws_buf_size(b);
        from = ctx->offset;
        ctx->offset += size;

        if (ctx->offset <= start || from >= end) {
            if (b->last_buf) {
                return sws_http_range_short(r, ctx);
            }
            sws_http_range_consume(b);
            continue;
        }

        /* [from, offset) overlaps [start, end): keep the overlap */
        to = sws_min(end, ctx->offset) - from;
        from = sws_max(start, from) - from;

        if (sws_buf_in_memory(b)) {
            b->last = b->pos + to;
            b->pos += from;
        }
        if (b->in_file) {
            b->file_last = b->file_pos + to;
            b->file_pos += from;
        }

        if (ctx->offset >= end) {
            b->last_buf = 1;
            b->last_in_chain = 1;
            ctx->done = 1;

        } else if (b->last_buf) {
            return sws_http_range_short(r, ctx);
        }

        ll = sws_http_range_link(pool, ll, b);
        if (ll == NULL) {
            return SWS_ERROR;
        }
    }

    if (out == NULL) {
        return SWS_OK;
    }

    return sws_http_next_body_filter(r, out);
}


/* A memory buffer for part headers and the closing boundary. */
static sws_buf_t *
sws_http_range_text_buf(sws_pool_t *pool, const sws_str_t *s)
{
    sws_buf_t  *b = sws_calloc_buf(pool);

    if (b != NULL) {
        b->memory = 1;
        b->start = b->pos = s->data;
        b->end = b->last = s->data + s->len;
    }
    return b;
}


/* Append to *ll the slices of the collected body covering [start, end). */
static sws_chain_t **
sws_http_range_slices(sws_pool_t *pool, sws_chain_t **ll, sws_chain_t *body,
    off_t start, off_t end)
{
    off_t       at, size, from, to;
    sws_buf_t  *b, *s;

    for (at = 0; body != NULL && at < end; body = body->next) {
        b = body->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        size = sws_buf_size(b);
        if (at + size <= start || size == 0) {
            at += size;
            continue;
        }

        from = sws_max(start, at) - at;
        to = sws_min(end, at + size) - at;
        at += size;

        s = sws_palloc(pool, sizeof(sws_buf_t));
        if (s == NULL) {
            return NULL;
        }
        *s = *b;
        s->flush = 0;
        s->last_buf = 0;
        s->last_in_chain = 0;
        s->sync = 0;

        if (sws_buf_in_memory(b)) {
            s->pos = b->pos + from;
            s->last = b->pos + to;
            s->temporary = 0;       /* shared by the parts: read-only */
            s->memory = 1;
        }
        if (b->in_file) {
            s->file_pos = b->file_pos + from;
            s->file_last = b->file_pos + to;
        }

        ll = sws_http_range_link(pool, ll, s);
        if (ll == NULL) {
            return NULL;
        }
    }
    return ll;
}


/* Several ranges: collect the body to its last buffer, then send the parts
 * as slices of it between their headers. */
static sws_int_t
sws_http_range_multi_body(sws_http_request_t *r, sws_http_range_ctx_t *ctx, sws_chain_t *in)
{
    int            last = 0;
    sws_buf_t     *b;
    sws_uint_t     i;
    sws_pool_t    *pool = sws_http_pool(r);
    sws_chain_t   *cl, *out = NULL, **ll = &out;

    if (ctx->done) {
        for (cl = in; cl != NULL; cl = cl->next) {
            sws_http_range_consume(cl->buf);
        }
        return SWS_OK;
    }

    for (cl = in; cl != NULL; cl = cl->next) {
        b = cl->buf;
        last |= b->last_buf;
        if (!sws_buf_special(b)) {
            ctx->offset += sws_buf_size(b);
        }
    }

    if (sws_chain_add_copy(pool, &ctx->body, in) != SWS_OK) {
        return SWS_ERROR;
    }

    if (!last) {
        return SWS_OK;
    }

    if (ctx->offset != ctx->size) {
        return sws_http_range_short(r, ctx);
    }

    for (i = 0; i < ctx->nranges; i++) {
        b = sws_http_range_text_buf(pool, &ctx->heads[i]);
        if (b == NULL || (ll = sws_http_range_link(pool, ll, b)) == NULL) {
            return SWS_ERROR;
        }
        ll = sws_http_range_slices(pool, ll, ctx->body, ctx->ranges[i].start,
                                   ctx->ranges[i].end);
        if (ll == NULL) {
            return SWS_ERROR;
        }
    }

    b = sws_http_range_text_buf(pool, &ctx->tail);
    if (b == NULL || sws_http_range_link(pool, ll, b) == NULL) {
        return SWS_ERROR;
    }
    b->last_buf = 1;
    b->last_in_chain = 1;

    for (cl = ctx->body; cl != NULL; cl = cl->next) {
        sws_http_range_consume(cl->buf);
    }
    ctx->body = NULL;
    ctx->done = 1;

    return sws_http_next_body_filter(r, out);
}


static sws_int_t
sws_http_range_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_range_ctx_t  *ctx;

    /* only a head with Range gets a context (the header filter's) */
    if (sws_likely(!r->range_in) || in == NULL) {
        return sws_http_next_body_filter(r, in);
    }
    ctx = sws_http_get_ctx(r, &sws_http_range_filter_module);
    if (ctx == NULL) {
        return sws_http_next_body_filter(r, in);
    }

    switch (ctx->type) {
    case SWS_HTTP_RANGE_DROP:
        return sws_http_range_drop(r, ctx, in);
    case SWS_HTTP_RANGE_SINGLE:
        return sws_http_range_single_body(r, ctx, in);
    default:
        return sws_http_range_multi_body(r, ctx, in);
    }
}


static sws_int_t
sws_http_range_init(sws_conf_t *cf)
{
    (void) cf;

    sws_http_next_header_filter = sws_http_insert_header_filter(sws_http_range_header_filter);
    sws_http_next_body_filter = sws_http_insert_body_filter(sws_http_range_body_filter);

    return SWS_OK;
}
