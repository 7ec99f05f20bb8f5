/*
 * Partial content (RFC 9111 3.3 and 3.4, RFC 9110 14), proxy_cache_partial
 * on (the default):
 *
 * - A 206 from the server (its Range was the client's, passed on below or
 *   by proxy_set_header; or the server answers only ranges) whose
 *   Content-Range is one range of a known length is stored as a part of
 *   the representation: a partial entry (SWS_CACHE_F_PARTIAL) whose body
 *   holds the parts at their own offsets (the rest is a hole of the file)
 *   and lists them after its fields. A later part of the same
 *   representation (the same strong ETag, or without ETags the same
 *   Last-Modified, and the same length) is combined with the stored ones;
 *   a part of another one replaces them. Once the parts hold the whole,
 *   the entry is an ordinary 200 entry.
 * - A GET with ranges (A-B, A-, -N) that the stored parts hold, each
 *   range within one part, of a fresh entry, with an If-Range that holds
 *   if any, is answered from the parts (a HIT): one range as a 206 with
 *   its Content-Range, several as a multipart/byteranges 206 made as the
 *   range filter makes one for a file (sws_http_range_multipart_text).
 *   The client's If-None-Match and If-Modified-Since on such a request are
 *   judged by the stored validators (RFC 9111 4.3.2), as the not-modified
 *   filter judges a whole entry's hit: a 304 when they say so, else the
 *   parts. If-Match and If-Unmodified-Since are the origin's to judge.
 *   One range the parts do not hold goes to the server with the client's
 *   Range, and its 206 is stored beside the parts; otherwise (no range,
 *   several not all held, an If-Range that does not hold) the server is
 *   asked for the whole, as on any miss, and its 200 replaces the parts.
 *
 * Not for subrequests, nor where proxy_cache_valid names 206: there each
 * 206 is an entry of its own key, as nginx keeps them (slice).
 */
#define _GNU_SOURCE                    /* copy_file_range */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "sws_cache.h"

static const sws_str_t  sws_cache_content_range_name = sws_string("Content-Range");

/* If-Range (RFC 9110 13.1.5) against the stored entry: a strong ETag
 * equal to its ETag, or a date equal to its Last-Modified. */
static int
sws_cache_partial_if_range(const sws_cache_entry_t *e, const sws_str_t *v)
{
    time_t  t;

    if (v->len >= 2 && v->data[0] == '"') {
        return e->etag.len == v->len && memcmp(e->etag.data, v->data, v->len) == 0;
    }
    t = sws_parse_http_time(v->data, v->len);
    return t != -1 && e->h.last_modified != -1 && t == (time_t) e->h.last_modified;
}

/* Most ranges of a Range answered from parts (the range filter's most). */
#define SWS_CACHE_MAX_RANGES  16

/* The client's conditions on a range of a partial entry: none; only those
 * a cache judges from the stored validators (If-None-Match,
 * If-Modified-Since: RFC 9111 4.3.2); or one an origin judges (If-Match,
 * If-Unmodified-Since: the request goes there, and its answer to the
 * client). */
enum {
    SWS_CACHE_COND_NONE = 0,
    SWS_CACHE_COND_STORED,
    SWS_CACHE_COND_ORIGIN
};

static int
sws_cache_partial_conditions(sws_http_request_t *r)
{
    if (sws_http_header_in(r, "if-match", 8) != NULL
        || sws_http_header_in(r, "if-unmodified-since", 19) != NULL)
    {
        return SWS_CACHE_COND_ORIGIN;
    }
    if (sws_http_header_in(r, "if-none-match", 13) != NULL
        || sws_http_header_in(r, "if-modified-since", 17) != NULL)
    {
        return SWS_CACHE_COND_STORED;
    }
    return SWS_CACHE_COND_NONE;
}

/* Does a 304 answer the client's conditions, by the entry's validators?
 * Its ETag, and its Last-Modified read as the core reads a stored one, so
 * that the not-modified filter, which judges the 200 sent for it
 * (sws_cache_partial_not_modified), judges alike. No Date stands for a
 * missing Last-Modified here: what this does not call a 304 goes out as
 * parts, and the filter never sees it. */
static int
sws_cache_partial_not_modified_judged(sws_http_request_t *r, const sws_cache_entry_t *e)
{
    sws_str_t  lm;
    time_t     t = -1;

    if (sws_cache_entry_value(e, "last-modified", 13, &lm)) {
        t = sws_parse_http_time(lm.data, lm.len);
    }
    return sws_http_preconditions(r, &e->etag, t, NULL) == SWS_HTTP_NOT_MODIFIED;
}

/* The 304: the entry's fields as a 200 without a body, which the
 * not-modified filter turns into the 304 a whole entry's hit gets. */
static sws_int_t
sws_cache_partial_not_modified(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    ctx->entry.h.status = SWS_HTTP_OK;
    ctx->entry.h.body_len = 0;
    ctx->source = "file";
    ctx->status = SWS_CACHE_HIT;
    return sws_cache_send(r, ctx);
}

/* Is each of the n ranges within one of the parts? */
static int
sws_cache_partial_covered(const sws_cache_entry_t *e, const sws_http_range_t *ranges,
    sws_int_t n)
{
    sws_cache_part_t  parts[SWS_CACHE_MAX_PARTS];
    sws_int_t         i;

    memcpy(parts, e->parts, e->h.parts_len);                     /* aligned */
    for (i = 0; i < n; i++) {
        if (!sws_cache_parts_cover(parts, e->h.parts_len / sizeof(sws_cache_part_t),
                                   (uint64_t) ranges[i].start, (uint64_t) ranges[i].end))
        {
            return 0;
        }
    }
    return n > 0;
}

/* Several ranges from the parts: a multipart/byteranges 206 of the
 * file's slices between the range filter's texts. */
static sws_int_t
sws_cache_partial_multipart(sws_http_request_t *r, sws_cache_ctx_t *ctx,
    const sws_http_range_t *ranges, sws_uint_t n)
{
    static const sws_str_t  type_name = sws_string("Content-Type");
    sws_pool_t             *pool = sws_http_pool(r);
    sws_http_header_t      *type;
    sws_str_t              *heads, tail, stored_type;
    sws_chain_t            *out = NULL, **ll = &out;
    sws_buf_t              *b;
    sws_uint_t              i, k;
    int                     typed;

    type = sws_pcalloc(pool, sizeof(sws_http_header_t));
    heads = sws_palloc(pool, n * sizeof(sws_str_t));
    if (type == NULL || heads == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    typed = sws_cache_entry_value(&ctx->entry, "content-type", 12, &stored_type);
    if (sws_http_range_multipart_text(pool, typed ? &stored_type : NULL, ranges, n,
                                      (off_t) ctx->entry.h.body_len, &type->value, heads,
                                      &tail) < 0)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    /* heads[0], range 0, heads[1], ..., range n - 1, tail */
    for (i = 0; i < 2 * n + 1; i++) {
        b = sws_calloc_buf(pool);
        *ll = sws_alloc_chain_link(pool);
        if (b == NULL || *ll == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        k = i / 2;
        if (i % 2 == 0) {
            b->memory = 1;
            b->start = b->pos = k < n ? heads[k].data : tail.data;
            b->end = b->last = b->pos + (k < n ? heads[k].len : tail.len);
        } else {
            b->in_file = 1;
            b->fd = ctx->fd;
            b->file_pos = (off_t) ctx->entry.h.header_len + ranges[k].start;
            b->file_last = (off_t) ctx->entry.h.header_len + ranges[k].end;
        }
        (*ll)->buf = b;
        (*ll)->next = NULL;
        ll = &(*ll)->next;
    }
    /* after the entry's fields, its Content-Type replaced */
    type->name = type_name;
    type->hash = 1;
    ctx->extra = type;
    ctx->nextra = 1;
    ctx->body = out;
    ctx->source = "file";
    ctx->status = SWS_CACHE_HIT;
    return sws_cache_send(r, ctx);
}

/* Answer [range) from the part the entry in ctx holds: a 206. */
static sws_int_t
sws_cache_partial_send(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_http_range_t *range)
{
    sws_http_header_t  *cr;
    u_char             *p;
    uint64_t            total = ctx->entry.h.body_len;

    cr = sws_pcalloc(sws_http_pool(r), sizeof(sws_http_header_t) + sizeof("bytes -/") + 60);
    if (cr == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = (u_char *) (cr + 1);
    cr->name = sws_cache_content_range_name;
    cr->value.data = p;
    p = sws_cpymem(p, "bytes ", 6);
    p = sws_sprint_uint(p, (uint64_t) range->start);
    *p++ = '-';
    p = sws_sprint_uint(p, (uint64_t) range->end - 1);
    *p++ = '/';
    p = sws_sprint_uint(p, total);
    cr->value.len = (size_t) (p - cr->value.data);
    cr->hash = 1;
    ctx->extra = cr;
    ctx->nextra = 1;
    /* the entry's body, seen from here on, is the range */
    ctx->body_off = ctx->entry.h.header_len + range->start;
    ctx->entry.h.body_len = (uint64_t) (range->end - range->start);
    ctx->source = "file";
    ctx->status = SWS_CACHE_HIT;
    return sws_cache_send(r, ctx);
}

sws_int_t
sws_cache_partial_lookup(sws_http_request_t *r, sws_cache_ctx_t *ctx, int fresh)
{
    const sws_str_t         *v, *if_range;
    sws_http_range_t         ranges[SWS_CACHE_MAX_RANGES];
    sws_int_t                n;
    int                      cond;

    ctx->status = fresh ? SWS_CACHE_MISS : SWS_CACHE_EXPIRED;
    v = sws_http_header_in(r, "range", 5);
    if (sws_http_method(r) != SWS_HTTP_GET || v == NULL
        || !sws_cache_partial_on(r, ctx->conf) || sws_cache_open_file(r, ctx) != SWS_OK)
    {
        return SWS_UPSTREAM_CACHE_MISS;          /* the whole, from the server */
    }
    if (!(ctx->entry.h.flags & SWS_CACHE_F_PARTIAL)) {
        goto whole;                              /* replaced meanwhile */
    }
    if_range = sws_http_header_in(r, "if-range", 8);
    if (if_range && !sws_cache_partial_if_range(&ctx->entry, if_range)) {
        goto whole;                              /* the client wants the whole */
    }
    n = sws_http_parse_range(v->data, v->len, (off_t) ctx->entry.h.body_len, ranges,
                             SWS_CACHE_MAX_RANGES);
    if (n < 0) {
        goto whole;                              /* malformed, or too many */
    }
    cond = sws_cache_partial_conditions(r);
    if (fresh && cond != SWS_CACHE_COND_ORIGIN && sws_cache_partial_covered(&ctx->entry, ranges, n))
    {
        if (cond == SWS_CACHE_COND_STORED
            && sws_cache_partial_not_modified_judged(r, &ctx->entry))
        {
            return sws_cache_partial_not_modified(r, ctx);
        }
        return n == 1 ? sws_cache_partial_send(r, ctx, &ranges[0])
                      : sws_cache_partial_multipart(r, ctx, ranges, (sws_uint_t) n);
    }
    if (n > 1) {
        goto whole;                              /* several, not all held */
    }
    close(ctx->fd);
    ctx->fd = -1;
    /* a range the parts do not hold (or none that can be satisfied: the
     * server's 416), or of a stale entry: the server is asked for it, and
     * its 206 joins the parts or replaces them. With If-Range, the whole:
     * the server would judge the client's condition on its own current
     * representation, not on the stored one (RFC 9110 13.1.5). */
    if (if_range == NULL) {
        sws_http_upstream_cache_pass_range(sws_http_upstream_get(r));
    }
    return SWS_UPSTREAM_CACHE_MISS;

whole:
    close(ctx->fd);
    ctx->fd = -1;
    return SWS_UPSTREAM_CACHE_MISS;
}

/* ---- storing a part ---- */

sws_int_t
sws_cache_partial_header(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *vary,
    const sws_str_t *strip)
{
    static const char    drop[] = "content-range,";
    sws_http_header_t   *cr = sws_http_header_out(r, "content-range", 13);
    off_t                len = sws_http_content_length(r);
    sws_str_t            names;
    const char          *why = NULL;

    if (cr == NULL || sws_cache_content_range(cr->value.data, cr->value.len, &ctx->part,
                                              &ctx->part_total) != SWS_OK)
    {
        why = "its Content-Range is not one range of a known length";
    } else if (len >= 0 && (uint64_t) len != ctx->part.end - ctx->part.start) {
        why = "its Content-Length is not its Content-Range's";
    }
    if (why) {
        sws_log_error(SWS_LOG_WARN, sws_http_log(r), 0, "cache \"%.*s\": a 206 not stored, "
                      "as %s", (int) ctx->path->name.len, ctx->path->name.data, why);
        ctx->part_total = 0;
        return SWS_DECLINED;
    }
    /* the entry's fields: the response's without its Content-Range (a hit
     * says the range it answers) */
    names.len = strip->len + sizeof(drop) - 1;
    names.data = sws_pnalloc(sws_http_pool(r), names.len);
    if (names.data == NULL) {
        ctx->part_total = 0;
        return SWS_DECLINED;
    }
    if (strip->len) {
        memcpy(names.data, strip->data, strip->len);
    }
    memcpy(names.data + strip->len, drop, sizeof(drop) - 1);
    if (sws_cache_fields(r, &ctx->part_fields, &ctx->fh.nfields, &names) != SWS_OK
        || sws_cache_tmp_open(r, ctx) != SWS_OK)
    {
        ctx->part_total = 0;
        return SWS_DECLINED;
    }
    ctx->part_vary = *vary;
    /* the body goes to the temporary file from its start: the entry is
     * written when the part is whole (sws_cache_partial_end) */
    ctx->head_len = 0;
    ctx->body_len = 0;
    ctx->expect_len = (off_t) (ctx->part.end - ctx->part.start);
    ctx->mem = NULL;
    ctx->filling = 1;
    return SWS_OK;
}

/* Is the entry in ctx (just read) the representation the new part on r is
 * of (RFC 9111 3.4): the same length, and the same strong ETag, or without
 * ETags the same Last-Modified? */
static int
sws_cache_partial_same(sws_http_request_t *r, const sws_cache_entry_t *e, uint64_t total)
{
    const sws_str_t  *etag = sws_http_etag(r);
    time_t            lm = sws_http_last_modified(r);

    if (e->h.body_len != total) {
        return 0;
    }
    if (etag && etag->len) {
        return etag->data[0] == '"' && e->etag.len == etag->len
               && memcmp(e->etag.data, etag->data, etag->len) == 0;
    }
    return e->etag.len == 0 && lm != -1 && (int64_t) lm == e->h.last_modified;
}

/* len bytes from at in one file to to_at in another: in the kernel where
 * it can, else through a buffer. */
static sws_int_t
sws_cache_partial_copy(int from, off_t at, int to, off_t to_at, uint64_t len)
{
    u_char   buf[65536];
    ssize_t  n;

    while (len) {
        n = copy_file_range(from, &at, to, &to_at, len, 0);
        if (n > 0) {
            len -= (uint64_t) n;
            continue;
        }
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == 0 || (errno != EXDEV && errno != ENOSYS && errno != EINVAL
                       && errno != EOPNOTSUPP))
        {
            return SWS_ERROR;
        }
        n = pread(from, buf, sws_min(len, sizeof(buf)), at);
        if (n <= 0 || sws_cache_write(to, buf, (size_t) n, to_at) != SWS_OK) {
            return SWS_ERROR;
        }
        at += n;
        to_at += n;
        len -= (uint64_t) n;
    }
    return SWS_OK;
}

void
sws_cache_partial_end(sws_http_request_t *r, sws_cache_ctx_t *ctx, int complete)
{
    sws_cache_part_t   parts[SWS_CACHE_MAX_PARTS + 1], old[SWS_CACHE_MAX_PARTS];
    sws_uint_t         nparts = 0, nold = 0, i;
    uint64_t           total = ctx->part_total, stored = 0;
    sws_str_t          fill = ctx->tmp_name, block;
    int                fill_fd = -1, keep = 0, whole;
    size_t             parts_len;

    close(ctx->tmp_fd);
    ctx->tmp_fd = -1;
    if (!complete || ctx->body_len != ctx->part.end - ctx->part.start) {
        goto done;
    }
    fill_fd = open((char *) fill.data, O_RDONLY | O_CLOEXEC);
    if (fill_fd == -1) {
        goto done;
    }

    /* what the key holds now: parts of the same representation are kept */
    sws_cache_digest(ctx->vkey.data, ctx->vkey.len, ctx->digest);
    if (ctx->fd != -1) {
        close(ctx->fd);
        ctx->fd = -1;
    }
    if (sws_cache_open_file(r, ctx) == SWS_OK && sws_cache_partial_same(r, &ctx->entry, total)) {
        if (!(ctx->entry.h.flags & SWS_CACHE_F_PARTIAL)) {
            goto done;                 /* the whole is stored: the part adds nothing */
        }
        nparts = nold = ctx->entry.h.parts_len / sizeof(sws_cache_part_t);
        memcpy(parts, ctx->entry.parts, ctx->entry.h.parts_len);
        memcpy(old, parts, ctx->entry.h.parts_len);
        keep = 1;
    }
    nparts = sws_cache_parts_add(parts, nparts, &ctx->part);
    if (nparts > SWS_CACHE_MAX_PARTS) {
        parts[0] = ctx->part;          /* too scattered: the new part alone */
        nparts = 1;
        keep = 0;
    }
    whole = nparts == 1 && parts[0].start == 0 && parts[0].end == total;

    /* the entry's header: a 206 with its parts, or a 200 once whole */
    parts_len = whole ? 0 : nparts * sizeof(sws_cache_part_t);
    ctx->fh.status = whole ? SWS_HTTP_OK : SWS_HTTP_PARTIAL_CONTENT;
    ctx->fh.flags = whole ? (ctx->fh.flags & ~SWS_CACHE_F_PARTIAL)
                          : (ctx->fh.flags | SWS_CACHE_F_PARTIAL);
    ctx->fh.body_len = total;
    ctx->fh.parts_len = (uint32_t) parts_len;
    ctx->fh.key_len = (uint32_t) ctx->vkey.len;
    ctx->fh.base_len = (uint32_t) ctx->key.len;
    ctx->fh.vary_len = (uint32_t) ctx->part_vary.len;
    ctx->fh.fields_len = (uint32_t) ctx->part_fields.len;
    block.len = ctx->part_fields.len + parts_len;
    block.data = sws_pnalloc(sws_http_pool(r), block.len ? block.len : 1);
    ctx->head_len = sws_cache_entry_header_size(ctx->vkey.len, ctx->part_vary.len, block.len);
    ctx->head = sws_pnalloc(sws_http_pool(r), ctx->head_len);
    if (block.data == NULL || ctx->head == NULL) {
        goto done;
    }
    memcpy(block.data, ctx->part_fields.data, ctx->part_fields.len);
    memcpy(block.data + ctx->part_fields.len, parts, parts_len);
    sws_cache_entry_write(ctx->head, &ctx->fh, ctx->vkey.data, ctx->part_vary.data, block.data);

    /* a new file: the header, the stored parts, the new one at its offset,
     * the length of the whole (holes where nothing is) */
    if (sws_cache_tmp_open(r, ctx) != SWS_OK) {
        goto done;
    }
    if (sws_cache_write(ctx->tmp_fd, ctx->head, ctx->head_len, 0) != SWS_OK) {
        goto failed;
    }
    if (keep) {
        for (i = 0; i < nold; i++) {
            if (sws_cache_partial_copy(ctx->fd,
                                       (off_t) (ctx->entry.h.header_len + old[i].start),
                                       ctx->tmp_fd, (off_t) (ctx->head_len + old[i].start),
                                       old[i].end - old[i].start) != SWS_OK)
            {
                goto failed;
            }
        }
    }
    if (sws_cache_partial_copy(fill_fd, 0, ctx->tmp_fd,
                               (off_t) (ctx->head_len + ctx->part.start),
                               ctx->part.end - ctx->part.start) != SWS_OK
        || ftruncate(ctx->tmp_fd, (off_t) (ctx->head_len + total)) == -1)
    {
        goto failed;
    }
    close(ctx->tmp_fd);
    ctx->tmp_fd = -1;
    for (i = 0; i < nparts; i++) {
        stored += parts[i].end - parts[i].start;
    }
    ctx->body_len = stored;            /* the bytes the entry takes on the disk */
    if (sws_cache_commit(r, ctx) != SWS_OK) {
        unlink((char *) ctx->tmp_name.data);
    }
    goto done;

failed:
    sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "cache: writing \"%s\" failed",
                  ctx->tmp_name.data);
    close(ctx->tmp_fd);
    ctx->tmp_fd = -1;
    unlink((char *) ctx->tmp_name.data);

done:
    if (fill_fd != -1) {
        close(fill_fd);
    }
    unlink((char *) fill.data);
}
