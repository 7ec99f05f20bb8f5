/*
 * The lookup hook: before any server is chosen, find the request's entry
 * (through its Vary marker when it has one), and answer a fresh one at
 * once, from the zone's memory copy (no file system call) or from its
 * file; a stale one is revalidated, replaced, or served stale while
 * another request updates it; with proxy_cache_lock a second miss for a
 * key waits for the first one's fill instead of asking the server too.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "sws_cache.h"

#define SWS_CACHE_LOCK_POLL  20       /* ms between looks at a busy key */

/* At the request's end: counted by its final status, unlocked, released. */
static void
sws_cache_cleanup(void *data)
{
    sws_cache_ctx_t *ctx = data;

    if (ctx->status != SWS_CACHE_NONE) {
        ctx->path->sh->rows[sws_cache_stat_slot].n[ctx->status - 1]++;
    }
    if (ctx->blob) {
        sws_cache_blob_release(ctx->path, ctx->blob);
        ctx->blob = NULL;
    }
    if (ctx->fd != -1 && !ctx->fd_cached) {
        close(ctx->fd);
    }
    ctx->fd = -1;
    if (ctx->tmp_fd != -1) {
        close(ctx->tmp_fd);
        ctx->tmp_fd = -1;
        unlink((char *) ctx->tmp_name.data);   /* a fill that did not finish */
    }
    sws_cache_unlock(ctx);
}

/* A key's fill is over (done or not): others need not wait for it. */
void
sws_cache_unlock(sws_cache_ctx_t *ctx)
{
    sws_cache_node_t *n;

    if (!ctx->locked) {
        return;
    }
    ctx->locked = 0;
    sws_slab_lock(ctx->path->pool);
    n = sws_cache_node_find_locked(ctx->path, ctx->lkey.data, ctx->lkey.len);
    if (n) {
        n->lock_until = 0;
    }
    sws_slab_unlock(ctx->path->pool);
}

static sws_int_t
sws_cache_eval(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out)
{
    return sws_http_format_string(f, r, sws_http_pool(r), 0, NULL, 0, out);
}

/* Any of the values not empty and not "0" (proxy_cache_bypass, proxy_no_cache). */
static int
sws_cache_any(sws_http_request_t *r, sws_array_t *list)
{
    sws_http_format_t **f;
    sws_str_t           v;
    sws_uint_t          i;

    if (list == NULL) {
        return 0;
    }
    f = list->elts;
    for (i = 0; i < list->nelts; i++) {
        if (sws_cache_eval(r, f[i], &v) != SWS_OK) {
            return 1;
        }
        if (v.len && !(v.len == 1 && v.data[0] == '0')) {
            return 1;
        }
    }
    return 0;
}

/* The variant's key: the base key, then "\n" name ":" for each Vary name,
 * and where the request has that field, its lines joined by "," in their
 * normal form (sws_cache_vary.c) and ",". */
sws_int_t
sws_cache_variant_key(sws_http_request_t *r, sws_cache_ctx_t *ctx, const u_char *vary,
    size_t vary_len)
{
    const sws_array_t        *in = sws_http_headers_in(r);
    const sws_http_header_t  *h = in->elts;
    const u_char             *name, *end = vary + vary_len, *comma, *v;
    size_t                    len = ctx->key.len, nlen, vlen;
    sws_uint_t                i, n, first = 0;
    u_char                   *p, *w, *scratch;
    union {
        void                 *align;
        u_char                bytes[1024];
    }                         small;

    if (vary_len == 0) {
        ctx->vkey = ctx->key;
        return SWS_OK;
    }
    /* at most: the names, and each field's lines as they came */
    for (name = vary; name < end; name = comma + 1) {
        comma = memchr(name, ',', (size_t) (end - name));
        comma = comma ? comma : end;
        nlen = (size_t) (comma - name);
        len += 2 + nlen;
        for (i = 0; i < in->nelts; i++) {
            if (h[i].name.len == nlen && memcmp(h[i].name.data, name, nlen) == 0) {
                len += h[i].value.len + 1;
            }
        }
        if (comma == end) {
            break;
        }
    }
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    ctx->vkey.data = p;
    p = sws_cpymem(p, ctx->key.data, ctx->key.len);
    for (name = vary; name < end; name = comma + 1) {
        comma = memchr(name, ',', (size_t) (end - name));
        comma = comma ? comma : end;
        nlen = (size_t) (comma - name);
        *p++ = '\n';
        p = sws_cpymem(p, name, nlen);
        *p++ = ':';
        for (i = 0, n = 0, vlen = 0; i < in->nelts; i++) {
            if (h[i].name.len == nlen && memcmp(h[i].name.data, name, nlen) == 0) {
                if (n++ == 0) {
                    first = i;
                }
                vlen += h[i].value.len + (n > 1);
            }
        }
        if (n == 0) {
            if (comma == end) {
                break;
            }
            continue;                  /* absent: not the same as empty */
        }
        v = h[first].value.data;
        if (n > 1) {                   /* several lines: one list */
            v = w = sws_pnalloc(sws_http_pool(r), vlen);
            if (w == NULL) {
                return SWS_ERROR;
            }
            for (i = first; i < in->nelts; i++) {
                if (h[i].name.len == nlen && memcmp(h[i].name.data, name, nlen) == 0) {
                    if (w > v) {
                        *w++ = ',';
                    }
                    w = sws_cpymem(w, h[i].value.data, h[i].value.len);
                }
            }
        }
        scratch = small.bytes;
        if (SWS_CACHE_VARY_SCRATCH(vlen) > sizeof(small.bytes)) {
            scratch = sws_palloc(sws_http_pool(r), SWS_CACHE_VARY_SCRATCH(vlen));
            if (scratch == NULL) {
                return SWS_ERROR;
            }
        }
        p += sws_cache_vary_normalize(sws_cache_vary_kind(name, nlen), v, vlen, p, scratch);
        *p++ = ',';
        if (comma == end) {
            break;
        }
    }
    ctx->vkey.len = (size_t) (p - ctx->vkey.data);
    return SWS_OK;
}

/* ---- answering from an entry ---- */

const char *
sws_cache_read_header(sws_pool_t *pool, int fd, const u_char *data, off_t size,
    const sws_str_t *key, sws_cache_entry_t *e, u_char **out)
{
    u_char      *buf;
    ssize_t      n;
    size_t       hl;
    const char  *why;

    if (data) {
        buf = (u_char *) data;         /* the whole file, read already */
        why = sws_cache_entry_parse(buf, (size_t) size, (uint64_t) size, e);
        goto key;
    }
    buf = sws_pnalloc(pool, 4096);
    if (buf == NULL) {
        return "cannot be read (no memory)";
    }
    n = pread(fd, buf, 4096, 0);
    if (n <= 0) {
        return "cannot be read";
    }
    why = sws_cache_entry_parse(buf, (size_t) n, (uint64_t) size, e);
    if (why && strcmp(why, "is truncated in its header") == 0
        && e->h.header_len <= SWS_CACHE_MAX_HEADER + 2 * SWS_CACHE_MAX_KEY + 128)
    {
        hl = e->h.header_len;          /* read as far as the header says */
        buf = sws_pnalloc(pool, hl);
        if (buf == NULL || pread(fd, buf, hl, 0) != (ssize_t) hl) {
            return "cannot be read";
        }
        why = sws_cache_entry_parse(buf, hl, (uint64_t) size, e);
    }
key:
    if (why == NULL
        && (e->h.key_len != key->len || memcmp(e->key, key->data, key->len) != 0))
    {
        why = "holds another key";
    }
    *out = buf;
    return why;
}

/* The entry's file: opened and its header checked, kept in ctx. */
sws_int_t
sws_cache_open_file(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    char          name[4096];
    u_char       *buf = NULL;
    off_t         size;
    const char   *why;

    sws_cache_file_name(ctx->path, ctx->digest, name, sizeof(name));
    ctx->fd_cached = 0;
    ctx->fdata = NULL;
    ctx->prepared_head = NULL;
    ctx->fd = open(name, O_RDONLY | O_CLOEXEC);
    if (ctx->fd == -1) {
        if (errno != ENOENT) {
            sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "open(\"%s\") failed", name);
        }
        return SWS_DECLINED;
    }
    size = lseek(ctx->fd, 0, SEEK_END);
    why = size < 0 ? "cannot be read"
                   : sws_cache_read_header(sws_http_pool(r), ctx->fd, NULL, size, &ctx->vkey,
                                           &ctx->entry, &buf);
    if (why) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "cache \"%.*s\": file \"%s\" %s: "
                      "not used", (int) ctx->path->name.len, ctx->path->name.data, name, why);
        close(ctx->fd);
        ctx->fd = -1;
        return SWS_DECLINED;
    }
    ctx->stored = buf;
    return SWS_OK;
}

/* What one answer from an entry needs besides its fields: one allocation. */
typedef struct {
    sws_http_header_t  age;
    sws_chain_t        cl;
    sws_buf_t          b;
    u_char             digits[24];
} sws_cache_answer_t;

/* Send the entry in ctx (memory copy or file) through the filters, with
 * its Age. */
sws_int_t
sws_cache_send(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    static const sws_str_t  age_name = sws_string("Age");
    sws_cache_entry_t      *e = &ctx->entry;
    sws_cache_answer_t     *a;
    sws_http_header_t      *hs;
    sws_chain_t            *cl = NULL;
    sws_buf_t              *b;
    sws_uint_t              n = 0, room;
    uint32_t                pos = 0;
    time_t                  age;
    int                     prepared = ctx->prepared_head && !ctx->unprepared;

    /* a memory copy has its fields prepared; a file's are walked here (and
     * Age and this answer's own fields after them) */
    room = prepared ? 0 : e->h.nfields + 1 + ctx->nextra;
    /* the fields first: sws_http_header_t is the stricter alignment */
    hs = sws_palloc(sws_http_pool(r), room * sizeof(sws_http_header_t)
                                      + sizeof(sws_cache_answer_t));
    if (hs == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    a = (sws_cache_answer_t *) (hs + room);
    while (n + 1 + ctx->nextra < room
           && sws_cache_entry_field(e, &pos, &hs[n].name, &hs[n].value))
    {
        hs[n++].hash = 1;
    }
    /* RFC 9111 5.1: every response from a cache says how old it is. */
    age = sws_cache_age(e->h.response_time, e->h.initial_age, sws_time_sec());
    a->age.name = age_name;
    a->age.value.data = a->digits;
    a->age.value.len = (size_t) (sws_sprint_uint(a->digits, (uint64_t) age) - a->digits);
    a->age.hash = 1;

    if (ctx->body) {
        cl = ctx->body;
    } else if (e->h.body_len) {
        b = &a->b;
        sws_memzero(b, sizeof(sws_buf_t));
        if (ctx->blob || ctx->fdata) {
            b->fd = -1;
            b->memory = 1;
            b->start = b->pos = (u_char *) (ctx->blob ? ctx->blob->data : ctx->fdata)
                                + ctx->body_off;
            b->end = b->last = b->pos + e->h.body_len;
        } else {
            b->in_file = 1;
            b->fd = ctx->fd;
            b->file_pos = ctx->body_off;
            b->file_last = ctx->body_off + (off_t) e->h.body_len;
        }
        cl = &a->cl;
        cl->buf = b;
        cl->next = NULL;
    }
    /* the fields stay where they are (the copy held, the pool) until the end */
    if (prepared) {
        return sws_http_send_stored_head(r, e->h.status, ctx->prepared_head, &a->age, 1, cl);
    }
    hs[n++] = a->age;
    if (ctx->nextra) {
        memcpy(&hs[n], ctx->extra, ctx->nextra * sizeof(sws_http_header_t));
        n += ctx->nextra;
    }
    return sws_http_send_stored_ref(r, e->h.status, hs, n, cl);
}

/* Take what node has (the lock held): its memory copy, or its digest to
 * open the file once the lock is let go. */
static void
sws_cache_take_locked(sws_cache_ctx_t *ctx, sws_cache_node_t *n)
{
    memcpy(ctx->digest, n->digest, 16);
    ctx->uniq = n->uniq;
    if (n->mem) {
        __atomic_add_fetch(&n->mem->refs, 1, __ATOMIC_SEQ_CST);
        ctx->blob = n->mem;
        sws_slab_lru_touch(&ctx->path->sh->mem_lru, &n->mem_lru);
    }
}

/* After sws_cache_take_locked, without the lock: the entry in ctx->entry.
 * answer: it is only sent (a hit, or stale as it is), not revalidated. */
static sws_int_t
sws_cache_load(sws_http_request_t *r, sws_cache_ctx_t *ctx, int answer)
{
    const char *why;

    if (ctx->blob) {
        if (answer && ctx->status != SWS_CACHE_STALE) {
            /* written by us into the zone: no need to check it again */
            sws_cache_entry_map(ctx->blob->data, ctx->blob->size, &ctx->entry);
            ctx->source = "memory";
            ctx->body_off = ctx->entry.h.header_len;
            if (ctx->blob->head_off) {
                ctx->prepared_head = (const sws_http_stored_head_t *)
                                         (ctx->blob->data + ctx->blob->head_off);
            }
            return SWS_OK;
        }
        /* stale: a revalidation needs its ETag, which the full read finds */
        why = sws_cache_entry_parse(ctx->blob->data, ctx->blob->size, ctx->blob->size,
                                    &ctx->entry);
        if (why == NULL) {
            ctx->source = "memory";
            ctx->body_off = ctx->entry.h.header_len;
            if (ctx->blob->head_off) {
                ctx->prepared_head = (const sws_http_stored_head_t *)
                                         (ctx->blob->data + ctx->blob->head_off);
            }
            return SWS_OK;
        }
        sws_log_error(SWS_LOG_ALERT, sws_http_log(r), 0, "cache \"%.*s\": a memory copy %s",
                      (int) ctx->path->name.len, ctx->path->name.data, why);
        sws_cache_blob_release(ctx->path, ctx->blob);
        ctx->blob = NULL;
    }
    if (answer && ctx->uniq && ctx->path->open_files
        && sws_cache_file_cached(r, ctx) == SWS_OK)
    {
        ctx->source = "file";
        return SWS_OK;
    }
    if (sws_cache_open_file(r, ctx) != SWS_OK) {
        return SWS_DECLINED;
    }
    if (ctx->entry.h.flags & SWS_CACHE_F_PARTIAL) {
        close(ctx->fd);                /* parts, put in place since the node was seen */
        ctx->fd = -1;
        return SWS_DECLINED;
    }
    ctx->source = "file";
    ctx->body_off = ctx->entry.h.header_len;
    return SWS_OK;
}

/* A file hit of an entry small enough: keep it in memory for the next
 * hits, if mem_size has room (the manager makes room, not requests). */
static void
sws_cache_promote(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_cache_path_t  *p = ctx->path;
    sws_cache_node_t  *n;
    uint64_t           total = ctx->entry.h.header_len + ctx->entry.h.body_len;
    u_char            *buf;

    if (p->mem_size == 0 || total > p->mem_max_object
        || p->sh->mem_used + total > p->mem_size)
    {
        return;
    }
    if (ctx->fdata) {
        buf = (u_char *) ctx->fdata;   /* the open file cache holds its bytes */
    } else {
        buf = sws_pnalloc(sws_http_pool(r), total);
        if (buf == NULL || pread(ctx->fd, buf, total, 0) != (ssize_t) total) {
            return;
        }
    }
    sws_slab_lock(p->pool);
    n = sws_cache_node_find_locked(p, ctx->vkey.data, ctx->vkey.len);
    if (n && n->exists && n->mem == NULL && memcmp(n->digest, ctx->digest, 16) == 0
        && n->response_time == ctx->entry.h.response_time)
    {
        sws_cache_mem_attach_locked(p, n, buf, total);
    }
    sws_slab_unlock(p->pool);
}

static sws_cache_ctx_t *
sws_cache_ctx(sws_http_request_t *r, sws_cache_loc_conf_t *lcf)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);
    sws_pool_t      *pool;

    if (ctx) {
        return ctx;
    }
    pool = sws_http_pool(r);
    ctx = sws_pcalloc(pool, sizeof(sws_cache_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }
    ctx->conf = lcf;
    ctx->path = lcf->path;
    ctx->fd = -1;
    ctx->tmp_fd = -1;
    ctx->expect_len = -1;
    if (sws_pool_cleanup_add(pool, sws_cache_cleanup, ctx) != SWS_OK) {
        return NULL;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    return ctx;
}

/* ---- the decision ---- */

/* Does the request's response fill the entry? A HEAD's only when it is
 * asked as GET (proxy_cache_convert_head; never for FastCGI). */
static int
sws_cache_fills(sws_http_request_t *r, const sws_cache_loc_conf_t *lcf)
{
    return sws_http_method(r) != SWS_HTTP_HEAD || lcf->convert_head;
}

/* Does the request let a fresh entry answer it without validation (RFC
 * 9111 5.2.1: its no-cache, max-age and min-fresh)? */
static int
sws_cache_request_takes_fresh(const sws_cache_ctx_t *ctx, const sws_cache_node_t *n, time_t now)
{
    if (!ctx->req_limits) {
        return 1;
    }
    if (ctx->req_no_cache) {
        return 0;
    }
    if (ctx->req_max_age >= 0
        && sws_cache_age(n->response_time, n->initial_age, now) > ctx->req_max_age)
    {
        return 0;
    }
    return ctx->req_min_fresh < 0 || n->fresh_until - now >= ctx->req_min_fresh;
}

/* Does the request take this stale entry as it is (its max-stale, within
 * its max-age), where the entry allows being served stale (4.2.4)? */
static int
sws_cache_request_takes_stale(const sws_cache_ctx_t *ctx, const sws_cache_node_t *n, time_t now)
{
    if (ctx->req_max_stale < 0 || ctx->req_no_cache
        || (n->flags & (SWS_CACHE_F_MUST_REVALIDATE | SWS_CACHE_F_NO_CACHE))
        || now - n->fresh_until > ctx->req_max_stale)
    {
        return 0;
    }
    return ctx->req_max_age < 0
           || sws_cache_age(n->response_time, n->initial_age, now) <= ctx->req_max_age;
}

static void sws_cache_wait_handler(sws_http_request_t *r);

/* The stored variants of marker (the lock held): their keys and digests,
 * for a variant miss to validate with their ETags once unlocked. */
static void
sws_cache_siblings_locked(sws_http_request_t *r, sws_cache_ctx_t *ctx, sws_cache_node_t *marker)
{
    sws_queue_t          *q;
    sws_cache_node_t     *v;
    sws_cache_sibling_t  *s;

    for (q = sws_queue_head(&marker->variants);
         q != sws_queue_sentinel(&marker->variants) && ctx->nsiblings < SWS_CACHE_MAX_SIBLINGS;
         q = sws_queue_next(q))
    {
        v = sws_queue_data(q, sws_cache_node_t, variants);
        if (!v->exists || (v->flags & SWS_CACHE_F_PARTIAL)) {
            continue;                  /* (parts are not a whole response) */
        }
        if (ctx->siblings == NULL) {
            ctx->siblings = sws_pcalloc(sws_http_pool(r),
                                        SWS_CACHE_MAX_SIBLINGS * sizeof(sws_cache_sibling_t));
            if (ctx->siblings == NULL) {
                return;
            }
        }
        s = &ctx->siblings[ctx->nsiblings];
        s->key.data = sws_pnalloc(sws_http_pool(r), v->key_len);
        if (s->key.data == NULL) {
            return;
        }
        memcpy(s->key.data, v->key, v->key_len);
        s->key.len = v->key_len;
        memcpy(s->digest, v->digest, 16);
        ctx->nsiblings++;
    }
}

/* Open sibling i's file as ctx's entry (ctx->vkey is its key meanwhile). */
static sws_int_t
sws_cache_sibling_open(sws_http_request_t *r, sws_cache_ctx_t *ctx, sws_uint_t i)
{
    sws_str_t  vkey = ctx->vkey;
    sws_int_t  rc;

    memcpy(ctx->digest, ctx->siblings[i].digest, 16);
    ctx->vkey = ctx->siblings[i].key;
    rc = sws_cache_open_file(r, ctx);
    ctx->vkey = vkey;
    return rc;
}

/*
 * A variant miss with other variants stored (RFC 9111 4.3.1): ask the
 * server with their ETags in If-None-Match; a 304 names the one that is
 * this request's too (sws_cache_sibling_load). SWS_OK: the validators are
 * set; SWS_DECLINED: no sibling has an ETag.
 */
static sws_int_t
sws_cache_siblings_validate(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_uint_t  i, j, n = 0;
    size_t      len = 0;
    sws_str_t   list, *e;
    u_char     *p;

    for (i = 0; i < ctx->nsiblings; i++) {
        if (sws_cache_sibling_open(r, ctx, i) != SWS_OK) {
            continue;
        }
        ctx->siblings[i].etag.data = sws_pstrdup(sws_http_pool(r), &ctx->entry.etag);
        ctx->siblings[i].etag.len = ctx->siblings[i].etag.data ? ctx->entry.etag.len : 0;
        len += ctx->siblings[i].etag.len ? ctx->siblings[i].etag.len + 2 : 0;
        close(ctx->fd);
        ctx->fd = -1;
    }
    if (len == 0 || (p = sws_pnalloc(sws_http_pool(r), len)) == NULL) {
        ctx->nsiblings = 0;
        return SWS_DECLINED;
    }
    list.data = p;
    for (i = 0; i < ctx->nsiblings; i++) {
        e = &ctx->siblings[i].etag;
        for (j = 0; j < i; j++) {       /* each tag once */
            if (ctx->siblings[j].etag.len == e->len
                && memcmp(ctx->siblings[j].etag.data, e->data, e->len) == 0)
            {
                break;
            }
        }
        if (e->len && j == i) {
            if (n++) {
                p = sws_cpymem(p, ", ", 2);
            }
            p = sws_cpymem(p, ctx->siblings[i].etag.data, ctx->siblings[i].etag.len);
        }
    }
    list.len = (size_t) (p - list.data);
    if (list.len == 0
        || sws_http_upstream_cache_validators(sws_http_upstream_get(r), &list, -1) != SWS_OK) {
        ctx->nsiblings = 0;
        return SWS_DECLINED;
    }
    return SWS_OK;
}

sws_int_t
sws_cache_sibling_load(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *etag)
{
    sws_uint_t  i;

    for (i = 0; i < ctx->nsiblings; i++) {
        if (etag->len && ctx->siblings[i].etag.len == etag->len
            && memcmp(ctx->siblings[i].etag.data, etag->data, etag->len) == 0
            && sws_cache_sibling_open(r, ctx, i) == SWS_OK)
        {
            if (ctx->entry.h.flags & SWS_CACHE_F_PARTIAL) {
                close(ctx->fd);        /* parts now: not a whole response */
                ctx->fd = -1;
                continue;
            }
            ctx->source = "file";
            ctx->body_off = ctx->entry.h.header_len;
            return SWS_OK;
        }
    }
    return SWS_DECLINED;
}

/*
 * Find the entry and decide: a hit answered (what send returns), MISS,
 * REVALIDATE, or SWS_BUSY (wait for the fill another request runs).
 */
static sws_int_t
sws_cache_decide(sws_http_request_t *r, sws_cache_ctx_t *ctx, int early)
{
    sws_cache_loc_conf_t  *lcf = ctx->conf;
    sws_cache_path_t      *p = ctx->path;
    sws_cache_node_t      *n, *marker;
    sws_msec_t             now_ms;
    time_t                 now = sws_time_sec();
    u_char                *vary;
    size_t                 vary_len;
    int                    fresh, forced, updating, stale_ok, background = 0;
    sws_int_t              rc;

    ctx->vkey = ctx->key;
    sws_slab_lock(p->pool);
    n = sws_cache_node_find_locked(p, ctx->key.data, ctx->key.len);
    marker = n && n->is_marker ? n : NULL;
    if (n && n->is_marker) {
        /* used with its variants: the manager must not take it first */
        n->last_access = now;
        sws_slab_lru_touch(&p->sh->lru, &n->lru);
        /* the names are copied: the marker may change once unlocked */
        vary_len = n->vary_len;
        vary = sws_pnalloc(sws_http_pool(r), vary_len ? vary_len : 1);
        if (vary == NULL) {
            sws_slab_unlock(p->pool);
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        memcpy(vary, n->vary, vary_len);
        sws_slab_unlock(p->pool);
        if (sws_cache_variant_key(r, ctx, vary, vary_len) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        sws_slab_lock(p->pool);
        n = sws_cache_node_find_locked(p, ctx->vkey.data, ctx->vkey.len);
        marker = sws_cache_node_find_locked(p, ctx->key.data, ctx->key.len);
        if (marker && !marker->is_marker) {
            marker = NULL;
        }
    }

    if (early && (n == NULL || !n->exists || ctx->bypass || now >= n->fresh_until
                  || (n->flags & (SWS_CACHE_F_NO_CACHE | SWS_CACHE_F_PARTIAL))
                  || ctx->req_limits))
    {
        /* not a fresh hit: the lookup decides, with its upstream request
         * made (nothing was counted or locked here) */
        sws_slab_unlock(p->pool);
        return SWS_DECLINED;
    }

    if (early) {
        /* a fresh hit (just seen): what the rest decides does not apply */
        n->last_access = now;
        sws_slab_lru_touch(&p->sh->lru, &n->lru);
        sws_cache_take_locked(ctx, n);
        sws_slab_unlock(p->pool);
        ctx->status = SWS_CACHE_HIT;
        goto send;
    }
    now_ms = sws_current_msec();

    if (ctx->bypass) {
        sws_slab_unlock(p->pool);
        ctx->status = SWS_CACHE_BYPASS;
        return SWS_UPSTREAM_CACHE_MISS;
    }

    if (n == NULL || !n->exists) {
        if (n == NULL && (lcf->min_uses > 1 || lcf->lock)) {
            n = sws_cache_node_new_locked(p, ctx->vkey.data, ctx->vkey.len);
        }
        if (n) {
            n->last_access = now;
            sws_slab_lru_touch(&p->sh->lru, &n->lru);
            if (lcf->min_uses > 1 && ++n->uses < (uint32_t) lcf->min_uses) {
                ctx->no_store = 1;     /* not asked for often enough yet */
            }
        }
        if (n && lcf->lock && !ctx->no_store && !ctx->locked
            && sws_cache_fills(r, lcf))
        {
            if (n->lock_until > now_ms) {
                sws_slab_unlock(p->pool);
                return SWS_BUSY;       /* another request fills it */
            }
            n->lock_until = now_ms + lcf->lock_age;
            ctx->locked = 1;
            ctx->lkey = ctx->vkey;
        }
        if (marker && lcf->revalidate && !ctx->no_store && ctx->vkey.len != ctx->key.len) {
            sws_cache_siblings_locked(r, ctx, marker);
        }
        sws_slab_unlock(p->pool);
        if (ctx->status == SWS_CACHE_NONE) {
            ctx->status = SWS_CACHE_MISS;
        }
        if (ctx->nsiblings && sws_cache_siblings_validate(r, ctx) == SWS_OK) {
            return SWS_UPSTREAM_CACHE_REVALIDATE;
        }
        return SWS_UPSTREAM_CACHE_MISS;
    }

    n->last_access = now;
    sws_slab_lru_touch(&p->sh->lru, &n->lru);
    fresh = now < n->fresh_until && !(n->flags & SWS_CACHE_F_NO_CACHE);
    if (n->flags & SWS_CACHE_F_PARTIAL) {
        /* parts of a representation: a range they hold, or the server */
        fresh = fresh && sws_cache_request_takes_fresh(ctx, n, now);
        memcpy(ctx->digest, n->digest, 16);
        sws_slab_unlock(p->pool);
        return sws_cache_partial_lookup(r, ctx, fresh);
    }
    /* fresh, but the request wants it validated (or younger): to the
     * origin for this request alone, the others still take the entry */
    forced = fresh && !sws_cache_request_takes_fresh(ctx, n, now);
    if (forced) {
        fresh = 0;
    }
    updating = n->lock_until > now_ms;
    stale_ok = !(n->flags & (SWS_CACHE_F_MUST_REVALIDATE | SWS_CACHE_F_NO_CACHE));
    if (!fresh && !forced && sws_cache_request_takes_stale(ctx, n, now)) {
        sws_cache_take_locked(ctx, n);
        sws_slab_unlock(p->pool);
        ctx->status = SWS_CACHE_STALE;
        goto send;
    }
    if (!fresh && !forced && updating && !ctx->locked) {
        /* another request updates it: stale meanwhile if allowed, else wait */
        if (stale_ok && ((lcf->use_stale & SWS_CACHE_STALE_UPDATING)
                         || now < n->fresh_until + n->swr))
        {
            sws_cache_take_locked(ctx, n);
            sws_slab_unlock(p->pool);
            ctx->status = SWS_CACHE_UPDATING;
            goto send;
        }
        if (lcf->lock) {
            sws_slab_unlock(p->pool);
            return SWS_BUSY;
        }
    }
    sws_cache_take_locked(ctx, n);
    if (!fresh && !forced && !ctx->locked && sws_cache_fills(r, lcf)) {
        n->lock_until = now_ms + lcf->lock_age;    /* "updating" for the others */
        ctx->locked = 1;
        ctx->lkey = ctx->vkey;
    }
    if (!fresh && stale_ok) {
        ctx->have_stale = 1;
    }
    /* proxy_cache_background_update, or the response's own
     * stale-while-revalidate within its window (RFC 5861 3): this client
     * gets the stale entry now, and the update runs for the cache alone
     * (the request outlives its response: an HTTP/2 stream ends, its
     * request goes on) */
    background = !fresh && stale_ok && ctx->locked && sws_http_method(r) == SWS_HTTP_GET
                 && ((lcf->background_update && (lcf->use_stale & SWS_CACHE_STALE_UPDATING))
                     || now < n->fresh_until + n->swr);
    sws_slab_unlock(p->pool);

    if (fresh) {
        ctx->status = SWS_CACHE_HIT;
        goto send;
    }

    /* stale: the entry stays at hand for a 304, or for an error */
    if (sws_cache_load(r, ctx, 0) != SWS_OK) {
        ctx->have_stale = 0;
        ctx->status = SWS_CACHE_MISS;
        return SWS_UPSTREAM_CACHE_MISS;
    }
    ctx->status = forced ? SWS_CACHE_MISS : SWS_CACHE_EXPIRED;
    /* a HEAD goes to the server as HEAD, and its answer updates the entry
     * (RFC 9111 4.3.5): no body to read for it */
    if (sws_http_method(r) == SWS_HTTP_HEAD) {
        ctx->head_update = 1;
    }
    if (background) {
        ctx->status = SWS_CACHE_STALE;
        rc = sws_cache_send(r, ctx);
        if (rc == SWS_ERROR || rc >= SWS_HTTP_BAD_REQUEST) {
            return rc;
        }
        ctx->background = 1;
        ctx->have_stale = 0;
        sws_http_upstream_cache_background(sws_http_upstream_get(r));
    }
    if ((lcf->revalidate || (ctx->entry.h.flags & SWS_CACHE_F_NO_CACHE))
        && (ctx->entry.etag.len || ctx->entry.h.last_modified != -1))
    {
        if (sws_http_upstream_cache_validators(sws_http_upstream_get(r), &ctx->entry.etag,
                                               (time_t) ctx->entry.h.last_modified)
            != SWS_OK)
        {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        return SWS_UPSTREAM_CACHE_REVALIDATE;
    }
    return SWS_UPSTREAM_CACHE_MISS;

send:
    if (sws_cache_load(r, ctx, 1) != SWS_OK) {
        ctx->status = SWS_CACHE_MISS;
        return early ? SWS_DECLINED : SWS_UPSTREAM_CACHE_MISS;
    }
    rc = sws_cache_send(r, ctx);
    if (ctx->blob == NULL && ctx->status == SWS_CACHE_HIT) {
        sws_cache_promote(r, ctx);
    }
    return rc;
}

/* What decide said, unless the request allows no origin request: a request
 * with only-if-cached that the cache cannot answer gets 504 (RFC 9111
 * 5.2.1.7). */
static sws_int_t
sws_cache_decided(sws_http_request_t *r, sws_cache_ctx_t *ctx, sws_int_t rc)
{
    if (rc == SWS_UPSTREAM_CACHE_MISS || rc == SWS_UPSTREAM_CACHE_REVALIDATE) {
        ctx->asked = sws_current_msec();   /* the server is asked now */
    }
    if (rc == SWS_UPSTREAM_CACHE_MISS) {
        /* RFC 9111 4.3.1: its 304 goes to the client, and is not stored */
        sws_http_upstream_cache_pass_if_none_match(sws_http_upstream_get(r));
    }
    if ((rc == SWS_UPSTREAM_CACHE_MISS || rc == SWS_UPSTREAM_CACHE_REVALIDATE)
        && !ctx->no_store && !ctx->head_update && sws_http_method(r) == SWS_HTTP_HEAD
        && sws_cache_fills(r, ctx->conf))
    {
        sws_http_upstream_cache_convert_head(sws_http_upstream_get(r));
    }
    if (ctx->only_if_cached
        && (rc == SWS_UPSTREAM_CACHE_MISS || rc == SWS_UPSTREAM_CACHE_REVALIDATE))
    {
        sws_cache_unlock(ctx);
        ctx->have_stale = 0;
        ctx->status = SWS_CACHE_MISS;
        return SWS_HTTP_GATEWAY_TIME_OUT;
    }
    return rc;
}

/* Waiting for another request's fill of the key: look again. */
static void
sws_cache_wait_handler(sws_http_request_t *r)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);
    sws_int_t        rc;

    if (sws_current_msec() >= ctx->wait_until) {
        /* waited long enough: to the server, and nothing is stored
         * (proxy_cache_lock_timeout, as nginx) */
        ctx->no_store = 1;
        ctx->status = SWS_CACHE_MISS;
        sws_http_upstream_cache_resume(r, sws_cache_decided(r, ctx, SWS_UPSTREAM_CACHE_MISS));
        return;
    }
    rc = sws_cache_decide(r, ctx, 0);
    if (rc == SWS_BUSY) {
        if (sws_http_set_timer(r, SWS_CACHE_LOCK_POLL, sws_cache_wait_handler) != SWS_OK) {
            sws_http_upstream_cache_resume(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        }
        return;
    }
    sws_http_upstream_cache_resume(r, sws_cache_decided(r, ctx, rc));
}

/* The request's key and what its fields and the location say of it, once
 * per request (the hit hook and the lookup may both ask): SWS_OK,
 * SWS_DECLINED (not for the cache), or an HTTP status. */
static sws_int_t
sws_cache_prepare(sws_http_request_t *r, sws_cache_loc_conf_t *lcf, sws_cache_ctx_t **out)
{
    sws_cache_ctx_t  *ctx;
    sws_cache_cc_t    rcc;

    ctx = sws_cache_ctx(r, lcf);
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    *out = ctx;
    if (ctx->prepared) {
        return ctx->key.len ? SWS_OK : SWS_DECLINED;
    }
    ctx->prepared = 1;
    if (sws_cache_eval(r, lcf->key, &ctx->key) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (ctx->key.len == 0 || ctx->key.len > SWS_CACHE_MAX_KEY / 2) {
        ctx->key.len = 0;
        return SWS_DECLINED;           /* a key too long for the file format */
    }
    ctx->bypass = lcf->bypass && sws_cache_any(r, lcf->bypass) ? 1 : 0;
    if (lcf->no_cache && sws_cache_any(r, lcf->no_cache)) {
        ctx->no_store = 1;
    }
    sws_cache_cc_request(r, &rcc);
    if (rcc.no_store) {
        ctx->no_store = 1;             /* nothing of this exchange is stored (5.2.1.5) */
    }
    ctx->only_if_cached = rcc.only_if_cached;
    ctx->req_max_age = ctx->req_min_fresh = ctx->req_max_stale = -1;
    if (lcf->request_directives) {
        ctx->req_no_cache = rcc.no_cache;
        ctx->req_max_age = rcc.max_age;
        ctx->req_min_fresh = rcc.min_fresh;
        ctx->req_max_stale = rcc.max_stale;
        ctx->req_limits = rcc.no_cache || rcc.max_age >= 0 || rcc.min_fresh >= 0
                          || rcc.max_stale >= 0;
    }
    if (ctx->path->sh == NULL) {      /* the zone's root (sws_slab_data), once made */
        ctx->key.len = 0;
        return SWS_DECLINED;
    }
    return SWS_OK;
}

/*
 * The hit hook: called by the protocol module before it makes anything
 * (sws_http_upstream_cache_hit), so that a fresh hit costs no upstream
 * request, no protocol context and no buffers. Anything but a fresh entry
 * of a GET or HEAD is left to the lookup, which runs later as always.
 */
sws_int_t
sws_cache_hit(sws_http_request_t *r, void *data)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    sws_cache_ctx_t       *ctx;
    sws_int_t              rc;

    (void) data;
    if (lcf->path == NULL || !(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_DECLINED;
    }
    rc = sws_cache_prepare(r, lcf, &ctx);
    if (rc != SWS_OK) {
        return rc;
    }
    return sws_cache_decide(r, ctx, 1);
}

sws_int_t
sws_cache_lookup(sws_http_request_t *r, void *data)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    sws_cache_ctx_t       *ctx;
    sws_uint_t             method = sws_http_method(r);
    sws_int_t              rc;

    (void) data;
    if (lcf->path == NULL) {
        return SWS_DECLINED;
    }
    if (lcf->purge_allow && method == SWS_HTTP_UNKNOWN
        && sws_str_eq_cstr(sws_http_method_name(r), "PURGE"))
    {
        return sws_cache_purge_request(r, lcf);
    }
    if (!(method & (lcf->methods | SWS_HTTP_HEAD))) {
        if (!sws_cache_method_unsafe(method)) {
            return SWS_DECLINED;
        }
        /* RFC 9111 4.4: what the answer invalidates depends on it (its
         * status, its Location): the framework shows the cache its head */
        ctx = sws_cache_ctx(r, lcf);
        if (ctx == NULL || sws_cache_eval(r, lcf->key, &ctx->key) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        ctx->prepared = 1;
        ctx->invalidate = 1;
        return SWS_UPSTREAM_CACHE_WATCH;
    }
    rc = sws_cache_prepare(r, lcf, &ctx);
    if (rc != SWS_OK) {
        return rc;
    }

    rc = sws_cache_decide(r, ctx, 0);
    if (rc != SWS_BUSY) {
        return sws_cache_decided(r, ctx, rc);
    }
    ctx->wait_until = sws_current_msec() + lcf->lock_timeout;
    if (sws_http_set_timer(r, SWS_CACHE_LOCK_POLL, sws_cache_wait_handler) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_BUSY;
}
