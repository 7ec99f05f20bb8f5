/*
 * slice: nginx's ngx_http_slice_module.
 *
 *   slice SIZE;        0: off (the default); http, server, location
 *   $slice_range       "bytes=S-E" of the slice being fetched
 *
 * A client's request is answered from slices of the file of SIZE bytes
 * each, fetched by the location (proxy_set_header Range $slice_range) and
 * cached apart (proxy_cache_key ...$slice_range). The request itself
 * fetches the slice that holds the start of the client's range; each
 * further slice is an OUTPUT subrequest of the same URI (the core queues
 * its body on the client's response, one at a time, in order).
 *
 * The client's Range is read here, not by the core's range filter (the
 * body is not in one request): one range (bytes=A-B, A-, -N) gives a 206
 * of it, anything else (none, several ranges, If-Range, a range that
 * cannot be satisfied is left to the whole) a 200 of the whole file. Each
 * slice must be a 206 whose Content-Range starts where asked and counts
 * the same total, with the first slice's ETag; an origin that answers the
 * first slice with a 200 has it passed on as it is. A later slice that
 * breaks these ends the response (cut) with an error-log line, as nginx.
 */
#include <stdio.h>
#include <scalws/scalws.h>

typedef struct {
    size_t   size;               /* 0: off */
} sws_slice_loc_conf_t;

typedef struct {
    sws_uint_t  used;            /* a slice somewhere: the filters */
} sws_slice_main_conf_t;

/* A request's own slice (the client's, or a subrequest's): where its
 * bytes are in the file. */
typedef struct {
    struct sws_slice_ctx_s *main;
    off_t             pos;       /* the file offset of its next body byte */
    off_t             end;       /* the end of its slice */
    unsigned          ok:1;      /* its head checked: its body goes on */
} sws_slice_part_t;

/* The client's request's state (its ctx), read by its subrequests too. */
typedef struct sws_slice_ctx_s {
    off_t       start;           /* the slice being fetched */
    off_t       total;           /* the file's length, from the first slice */
    off_t       from, to;        /* the client's bytes [from, to) */
    sws_str_t   etag;            /* the first slice's */
    sws_str_t   range;           /* $slice_range's value for start */
    sws_buf_t  *page;            /* a 416's, sent instead of the slice */
    unsigned    active:1;        /* the first slice was a 206 that fits */
    unsigned    want_range:1;    /* the client gets a 206 */
    unsigned    suffix:1;        /* from is the last N bytes (to know total) */
    unsigned    whole:1;         /* several ranges: the whole */
    unsigned    if_range:1;      /* decided on the first slice's validators */
    unsigned    unsatisfiable:1; /* "bytes=5-2", "bytes=x": a 416 */
    unsigned    fetching:1;      /* a slice's subrequest runs */
    sws_slice_part_t  part;      /* the client's request's own slice */
} sws_slice_ctx_t;

static char *sws_slice_size(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_slice_create_main_conf(sws_conf_t *cf);
static void *sws_slice_create_loc_conf(sws_conf_t *cf);
static char *sws_slice_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_slice_init(sws_conf_t *cf);

#define SWS_SLICE_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_slice_commands[] = {
    { "slice", SWS_SLICE_HTTP | SWS_CONF_TAKE1, sws_slice_size,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_slice_loc_conf_t, size), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "slice",
    .commands = sws_slice_commands,
    .create_main_conf = sws_slice_create_main_conf,
    .create_loc_conf = sws_slice_create_loc_conf,
    .merge_loc_conf = sws_slice_merge_loc_conf,
    .postconfiguration = sws_slice_init,
};

static sws_http_header_filter_pt  sws_slice_next_header_filter;
static sws_http_body_filter_pt    sws_slice_next_body_filter;


/* ---- the client's range ------------------------------------------------ */

static int
sws_slice_digits(const u_char **pp, const u_char *last, off_t *v)
{
    const u_char *p = *pp;
    off_t         n = 0;

    if (p == last || *p < '0' || *p > '9') {
        return 0;
    }
    for (; p < last && *p >= '0' && *p <= '9'; p++) {
        if (n > ((off_t) 1 << 60)) {
            return 0;
        }
        n = n * 10 + (*p - '0');
    }
    *pp = p;
    *v = n;
    return 1;
}

/* The client's Range, as nginx's range filter reads it: not "bytes=" is
 * no range (the whole); several ranges, the whole (nginx's slice asks for
 * one); one that does not parse (after "bytes=") or that is empty, a 416;
 * else one range: A-B, A- or the last N bytes (-N). */
static void
sws_slice_parse_range(sws_http_request_t *r, sws_slice_ctx_t *ctx)
{
    const sws_str_t *h = sws_http_header_in(r, "range", 5);
    const u_char    *p, *last;
    off_t            a = 0, b = -1;

    ctx->from = 0;
    ctx->to = -1;                       /* the end of the file */
    if (h == NULL || h->len < 7 || sws_strncasecmp(h->data, (u_char *) "bytes=", 6) != 0) {
        return;
    }
    if (memchr(h->data, ',', h->len) != NULL) {
        ctx->whole = 1;
        return;
    }
    ctx->want_range = 1;
    ctx->if_range = sws_http_header_in(r, "if-range", 8) != NULL;
    p = h->data + 6;
    last = h->data + h->len;
    while (p < last && *p == ' ') {
        p++;
    }
    if (p < last && *p == '-') {
        p++;
        if (!sws_slice_digits(&p, last, &b) || b == 0) {
            goto bad;
        }
        ctx->suffix = 1;
        ctx->from = b;                  /* the last b bytes: known with the total */
    } else {
        if (!sws_slice_digits(&p, last, &a)) {
            goto bad;
        }
        while (p < last && *p == ' ') {
            p++;
        }
        if (p == last || *p++ != '-') {
            goto bad;
        }
        while (p < last && *p == ' ') {
            p++;
        }
        if (p < last) {
            if (!sws_slice_digits(&p, last, &b)) {
                goto bad;
            }
            if (b < a) {
                goto bad;
            }
        }
        ctx->from = a;
        ctx->to = b >= 0 ? b + 1 : -1;
    }
    while (p < last && *p == ' ') {
        p++;
    }
    if (p == last) {
        return;
    }

bad:
    ctx->unsatisfiable = 1;
    ctx->suffix = 0;
    ctx->from = 0;
    ctx->to = -1;
}

static sws_int_t
sws_slice_set_range(sws_http_request_t *r, sws_slice_ctx_t *ctx, size_t size)
{
    u_char *p = sws_pnalloc(sws_http_pool(r), sizeof("bytes=-") + 2 * 20);

    if (p == NULL) {
        return SWS_ERROR;
    }
    ctx->range.data = p;
    ctx->range.len = (size_t) sprintf((char *) p, "bytes=%lld-%lld", (long long) ctx->start,
                                      (long long) (ctx->start + (off_t) size - 1));
    return SWS_OK;
}

/* The client's request's state, made at its first need. */
static sws_slice_ctx_t *
sws_slice_ctx(sws_http_request_t *r, const sws_slice_loc_conf_t *lcf)
{
    sws_slice_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    if (ctx != NULL || lcf->size == 0 || sws_http_parent(r) != NULL) {
        return ctx;
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_slice_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }
    sws_slice_parse_range(r, ctx);
    /* a suffix's start is known with the total only, If-Range's answer
     * with the validators: from the start (then on to the range's) */
    ctx->start = (ctx->suffix || ctx->if_range) ? 0 : ctx->from - ctx->from % (off_t) lcf->size;
    if (sws_slice_set_range(r, ctx, lcf->size) != SWS_OK) {
        return NULL;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    return ctx;
}

/* $slice_range: of the client's request, or of the slice a subrequest of
 * it fetches. */
static void
sws_slice_range_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_slice_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_http_request_t         *main = sws_http_parent(r);
    sws_slice_ctx_t            *ctx;

    (void) data;
    ctx = main ? sws_http_get_ctx(main, &sws_module) : sws_slice_ctx(r, lcf);
    if (ctx == NULL) {
        value->len = 0;
        value->data = NULL;
        return;
    }
    *value = ctx->range;
}


/* ---- the slices' heads ------------------------------------------------- */

/* "bytes S-E/T" of a slice's 206. */
static sws_int_t
sws_slice_content_range(sws_http_request_t *r, off_t *s, off_t *e, off_t *t)
{
    sws_http_header_t *h = sws_http_header_out(r, "content-range", 13);
    const u_char      *p, *last;

    if (h == NULL || h->value.len < 6
        || sws_strncasecmp(h->value.data, (u_char *) "bytes ", 6) != 0)
    {
        return SWS_ERROR;
    }
    p = h->value.data + 6;
    last = h->value.data + h->value.len;
    while (p < last && *p == ' ') {
        p++;
    }
    if (!sws_slice_digits(&p, last, s) || p == last || *p++ != '-'
        || !sws_slice_digits(&p, last, e) || p == last || *p++ != '/'
        || !sws_slice_digits(&p, last, t) || p != last || *e < *s || *e >= *t)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static sws_str_t
sws_slice_etag(sws_http_request_t *r)
{
    const sws_str_t   *e = sws_http_etag(r);
    sws_http_header_t *h;
    sws_str_t          none = { 0, NULL };

    if (e->len) {
        return *e;
    }
    h = sws_http_header_out(r, "etag", 4);
    return h ? h->value : none;
}

static const sws_str_t  sws_slice_content_range_name = sws_string("Content-Range");
static const sws_str_t  sws_slice_accept_ranges_name = sws_string("Accept-Ranges");
static const sws_str_t  sws_slice_bytes = sws_string("bytes");

/* If-Range: the first slice's ETag (strong, the same bytes) or its
 * Last-Modified (the same second), as nginx's range filter. */
static int
sws_slice_if_range_holds(sws_http_request_t *r, const sws_slice_ctx_t *ctx)
{
    const sws_str_t *v = sws_http_header_in(r, "if-range", 8);
    sws_http_header_t *lm;
    time_t           t;

    if (v->len >= 2 && v->data[v->len - 1] == '"') {
        return ctx->etag.len == v->len && v->data[0] == '"'
               && memcmp(ctx->etag.data, v->data, v->len) == 0;
    }
    t = sws_parse_http_time(v->data, v->len);
    if (t == -1) {
        return 0;
    }
    if (sws_http_last_modified(r) != -1) {
        return sws_http_last_modified(r) == t;
    }
    lm = sws_http_header_out(r, "last-modified", 13);
    return lm != NULL && sws_parse_http_time(lm->value.data, lm->value.len) == t;
}

/* A range that cannot be: the core's 416 page instead of the slice, with
 * "Content-Range: bytes * /TOTAL" and without the file's validators, as
 * nginx's range filter answers. */
static sws_int_t
sws_slice_not_satisfiable(sws_http_request_t *r, sws_slice_ctx_t *ctx)
{
    static const sws_str_t  html = sws_string("text/html");
    sws_str_t               v;
    u_char                 *p;

    if (sws_http_error_page_make(r, SWS_HTTP_RANGE_NOT_SATISFIABLE, &ctx->page) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_http_set_status(r, SWS_HTTP_RANGE_NOT_SATISFIABLE);
    sws_http_set_content_length(r, ctx->page ? ctx->page->last - ctx->page->pos : 0);
    sws_http_set_content_type(r, ctx->page ? &html : NULL);
    sws_http_set_etag(r, NULL);
    sws_http_set_last_modified(r, -1);
    sws_http_header_out_remove(r, "etag", 4);
    sws_http_header_out_remove(r, "last-modified", 13);
    sws_http_header_out_remove(r, "accept-ranges", 13);
    p = sws_pnalloc(sws_http_pool(r), sizeof("bytes */") + 20);
    if (p == NULL) {
        return SWS_ERROR;
    }
    v.data = p;
    v.len = (size_t) sprintf((char *) p, "bytes */%lld", (long long) ctx->total);
    if (sws_http_header_out_add(r, &sws_slice_content_range_name, &v) == NULL) {
        return SWS_ERROR;
    }
    ctx->from = ctx->to = 0;            /* no byte of the slice goes on */
    return SWS_OK;
}

/* The client's response, from the first slice's head. */
static sws_int_t
sws_slice_client_head(sws_http_request_t *r, sws_slice_ctx_t *ctx)
{
    sws_str_t  v;
    u_char    *p;

    if (ctx->if_range && !sws_slice_if_range_holds(r, ctx)) {
        ctx->want_range = 0;
        ctx->suffix = 0;
        ctx->from = 0;
        ctx->to = -1;
    }

    sws_http_header_out_remove(r, "content-range", 13);
    if (ctx->suffix) {
        ctx->from = ctx->from >= ctx->total ? 0 : ctx->total - ctx->from;
        ctx->to = ctx->total;
    }
    if (ctx->to < 0 || ctx->to > ctx->total) {
        ctx->to = ctx->total;
    }
    if (ctx->want_range && (ctx->unsatisfiable || ctx->from >= ctx->total)) {
        return sws_slice_not_satisfiable(r, ctx);
    }
    if (!ctx->want_range) {
        /* the whole file */
        ctx->from = 0;
        ctx->to = ctx->total;
        ctx->want_range = 0;
        sws_http_set_status(r, SWS_HTTP_OK);
        sws_http_set_content_length(r, ctx->total);
        if (sws_http_header_out(r, "accept-ranges", 13) == NULL
            && sws_http_header_out_add(r, &sws_slice_accept_ranges_name,
                                       &sws_slice_bytes) == NULL)
        {
            return SWS_ERROR;
        }
        return SWS_OK;
    }
    p = sws_pnalloc(sws_http_pool(r), sizeof("bytes -/") + 3 * 20);
    if (p == NULL) {
        return SWS_ERROR;
    }
    v.data = p;
    v.len = (size_t) sprintf((char *) p, "bytes %lld-%lld/%lld", (long long) ctx->from,
                             (long long) (ctx->to - 1), (long long) ctx->total);
    if (sws_http_header_out_add(r, &sws_slice_content_range_name, &v) == NULL) {
        return SWS_ERROR;
    }
    sws_http_header_out_remove(r, "accept-ranges", 13);    /* as nginx's 206 */
    sws_http_set_status(r, SWS_HTTP_PARTIAL_CONTENT);
    sws_http_set_content_length(r, ctx->to - ctx->from);
    return SWS_OK;
}

static sws_int_t
sws_slice_header_filter(sws_http_request_t *r)
{
    const sws_slice_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_http_request_t         *main = sws_http_parent(r);
    sws_slice_ctx_t            *ctx;
    sws_slice_part_t           *part;
    sws_str_t                   etag;
    off_t                       s, e, t;

    if (main != NULL) {
        /* a further slice: a subrequest of this module's only */
        ctx = sws_http_get_ctx(main, &sws_module);
        part = sws_http_get_ctx(r, &sws_module);
        if (lcf->size == 0 || ctx == NULL || !ctx->active || (part == NULL && !ctx->fetching)) {
            return sws_slice_next_header_filter(r);
        }
        if (part == NULL) {
            part = sws_pcalloc(sws_http_pool(r), sizeof(sws_slice_part_t));
            if (part == NULL) {
                return SWS_ERROR;
            }
            part->main = ctx;
            sws_http_set_ctx(r, &sws_module, part);
        }
    } else {
        ctx = sws_http_get_ctx(r, &sws_module);
        if (ctx == NULL || lcf->size == 0) {
            return sws_slice_next_header_filter(r);
        }
        part = &ctx->part;
    }

    if (sws_http_status(r) != SWS_HTTP_PARTIAL_CONTENT) {
        if (main == NULL) {
            return sws_slice_next_header_filter(r);    /* a 200: as it is */
        }
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "unexpected status code %u in "
                      "slice response", (unsigned) sws_http_status(r));
        return SWS_ERROR;
    }
    if (sws_slice_content_range(r, &s, &e, &t) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "invalid range in slice response");
        return SWS_ERROR;
    }
    etag = sws_slice_etag(r);
    if (main == NULL) {
        if (s != ctx->start || (e + 1 != ctx->start + (off_t) lcf->size && e + 1 != t)) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "unexpected range in slice "
                          "response: %lld-%lld", (long long) s, (long long) e);
            return SWS_ERROR;
        }
        ctx->total = t;
        ctx->etag = etag;
        if (sws_slice_client_head(r, ctx) != SWS_OK) {
            return SWS_ERROR;
        }
        ctx->active = 1;
        part->main = ctx;
        part->pos = s;
        part->end = e + 1;
        part->ok = 1;
        sws_http_allow_ranges(r, 0);   /* the range is made here */
        return sws_slice_next_header_filter(r);
    }

    if (etag.len != ctx->etag.len
        || (etag.len && memcmp(etag.data, ctx->etag.data, etag.len) != 0))
    {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "etag mismatch in slice response");
        return SWS_ERROR;
    }
    if (s != ctx->start || t != ctx->total
        || (e + 1 != ctx->start + (off_t) lcf->size && e + 1 != t))
    {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "unexpected range in slice "
                      "response: %lld-%lld/%lld", (long long) s, (long long) e, (long long) t);
        return SWS_ERROR;
    }
    part->pos = s;
    part->end = e + 1;
    part->ok = 1;
    return sws_slice_next_header_filter(r);
}


/* ---- the bodies ---------------------------------------------------------- */

static void sws_slice_next(sws_http_request_t *r, sws_http_request_t *sr, void *data);

/* The next slice, if the client wants more: an OUTPUT subrequest of r. */
static sws_int_t
sws_slice_start_next(sws_http_request_t *r, sws_slice_ctx_t *ctx)
{
    const sws_slice_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_http_subrequest_conf_t   sc;

    sws_memzero(&sc, sizeof(sc));
    /* the next slice, or the one that holds the client's range's start
     * (a suffix's, known since the first slice) */
    ctx->start = sws_max(ctx->start + (off_t) lcf->size,
                         ctx->from - ctx->from % (off_t) lcf->size);
    if (sws_slice_set_range(r, ctx, lcf->size) != SWS_OK) {
        return SWS_ERROR;
    }
    sc.uri = *sws_http_uri(r);
    sc.args = *sws_http_args(r);
    sc.flags = SWS_HTTP_SUBREQUEST_OUTPUT;
    sc.done = sws_slice_next;
    sc.data = ctx;
    ctx->fetching = 1;
    return sws_http_subrequest(r, &sc, NULL);
}

/* A slice's subrequest ended: it brought its slice whole, or the client's
 * response is cut; then the next one. */
static void
sws_slice_next(sws_http_request_t *r, sws_http_request_t *sr, void *data)
{
    sws_slice_ctx_t  *ctx = data;
    sws_slice_part_t *part = sws_http_get_ctx(sr, &sws_module);

    ctx->fetching = 0;
    if (part == NULL || !part->ok || part->pos != part->end) {
        if (part != NULL && part->ok) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "slice %lld-%lld ended short "
                          "(%lld bytes)", (long long) ctx->start, (long long) part->end - 1,
                          (long long) (part->pos - ctx->start));
        }
        sws_http_finalize(r, SWS_ERROR);
        return;
    }
    if (part->end < ctx->to && sws_slice_start_next(r, ctx) != SWS_OK) {
        sws_http_finalize(r, SWS_ERROR);
    }
}

/* A slice's bytes: those of the client's range go on, the others are
 * taken as sent. On the client's request, the end of its slice starts the
 * next one (the core ends the response after the last). */
static sws_int_t
sws_slice_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_request_t *main = sws_http_parent(r);
    sws_slice_ctx_t    *ctx;
    sws_slice_part_t   *part;
    sws_chain_t        *cl, page;
    sws_buf_t          *b;
    off_t               size, skip, cut;
    int                 last = 0;
    sws_int_t           rc;

    if (main == NULL) {
        ctx = sws_http_get_ctx(r, &sws_module);
        if (ctx == NULL || !ctx->active) {
            return sws_slice_next_body_filter(r, in);
        }
        part = &ctx->part;
    } else {
        part = sws_http_get_ctx(r, &sws_module);
        if (part == NULL) {
            return sws_slice_next_body_filter(r, in);
        }
        ctx = part->main;
        if (!part->ok) {
            /* a slice refused (its error page): nothing of it goes on */
            for (cl = in; cl; cl = cl->next) {
                cl->buf->pos = cl->buf->last;
                cl->buf->file_pos = cl->buf->file_last;
            }
            return SWS_OK;
        }
    }
    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;
        if (b->last_buf) {
            last = 1;
        }
        if (sws_buf_special(b)) {
            continue;
        }
        size = sws_buf_size(b);
        skip = part->pos < ctx->from ? sws_min(ctx->from - part->pos, size) : 0;
        cut = part->pos + size > ctx->to ? sws_min(part->pos + size - ctx->to, size - skip) : 0;
        part->pos += size;
        if (skip == 0 && cut == 0) {
            continue;
        }
        if (sws_buf_in_memory(b)) {
            b->pos += skip;
            b->last -= cut;
        } else {
            b->file_pos += skip;
            b->file_last -= cut;
        }
    }
    if (main == NULL && ctx->page != NULL) {
        /* a 416: its page, then the end */
        if (!last) {
            return SWS_OK;
        }
        ctx->page->last_buf = 1;
        page.buf = ctx->page;
        page.next = NULL;
        ctx->page = NULL;
        return sws_slice_next_body_filter(r, &page);
    }
    if (main == NULL && last && part->end < ctx->to) {
        /* more slices follow: the response's end is the core's */
        for (cl = in; cl; cl = cl->next) {
            cl->buf->last_buf = 0;
        }
        rc = sws_slice_next_body_filter(r, in);
        if (rc == SWS_ERROR) {
            return rc;
        }
        if (part->pos != part->end) {
            return SWS_ERROR;
        }
        return sws_slice_start_next(r, ctx) != SWS_OK ? SWS_ERROR : rc;
    }
    return sws_slice_next_body_filter(r, in);
}


/* A fixed response (return TEXT) keeps its one write where no slice is. */
static int
sws_slice_acts(sws_http_request_t *r)
{
    const sws_slice_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf->size != 0;
}

static sws_int_t
sws_slice_init(sws_conf_t *cf)
{
    sws_slice_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    /* Without a slice anywhere the filters stay out of the chain. */
    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    sws_slice_next_header_filter = sws_http_insert_header_filter(sws_slice_header_filter);
    sws_slice_next_body_filter = sws_http_insert_body_filter(sws_slice_body_filter);
    return sws_http_filters_act_when(cf, sws_slice_acts);
}


/* ---- configuration --------------------------------------------------- */

/* slice SIZE; */
static char *
sws_slice_size(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_slice_main_conf_t *mcf = sws_conf_http_main_conf(cf, &sws_module);
    sws_slice_loc_conf_t  *lcf = conf;
    char                  *rv;

    rv = sws_conf_set_size_slot(cf, cmd, conf);
    if (rv == SWS_CONF_OK && lcf->size != 0 && mcf != NULL) {
        mcf->used = 1;
    }
    return rv;
}

static void *
sws_slice_create_main_conf(sws_conf_t *cf)
{
    /* $slice_range in every configuration, as nginx's */
    if (sws_http_variable_add(cf, "slice_range", sws_slice_range_variable, NULL) != SWS_OK) {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_slice_main_conf_t));
}

static void *
sws_slice_create_loc_conf(sws_conf_t *cf)
{
    sws_slice_loc_conf_t  *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*lcf));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->size = SWS_UNSET_SIZE;
    return lcf;
}

static char *
sws_slice_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_slice_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_size_value(conf->size, prev->size, 0);
    return SWS_CONF_OK;
}
