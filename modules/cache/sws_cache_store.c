/*
 * Filling the cache: the store hooks write a response to a temporary file
 * as it streams (the header's place kept at the start, written last, when
 * the body's length is known), and only a body that came whole, of the
 * length announced, is renamed into place and indexed. A worker killed,
 * a full disk or a server that dies mid-body leaves a temporary file at
 * most (the loader removes those), never an entry that a hit would serve
 * short. Small entries are also copied into the zone for memory hits.
 *
 * Also here: revalidation's 304 (the stored fields updated from it, the
 * entry written again with its body), stale entries answered when the
 * server fails (proxy_cache_use_stale, stale-if-error), invalidation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_cache.h"

/* Fields an entry does not keep: this response's framing, what the core
 * writes itself, and Age, which a hit computes. */
static int
sws_cache_field_skip(const sws_str_t *name)
{
    static const char *const skip[] = {
        "content-length", "transfer-encoding", "connection", "keep-alive", "date",
        "server", "age", "proxy-connection", "te", "trailer", "upgrade", NULL
    };
    sws_uint_t i;

    for (i = 0; skip[i]; i++) {
        if (name->len == strlen(skip[i])
            && sws_strncasecmp(name->data, (u_char *) skip[i], name->len) == 0)
        {
            return 1;
        }
    }
    return 0;
}

static void sws_cache_head_update(sws_http_request_t *r, sws_cache_ctx_t *ctx);

/* The fields of the response on r as a fields block (pool memory). The
 * response's Date is kept (the server's, hidden from the client or not;
 * else when it came): hits send it, not the time of the hit. */
sws_int_t
sws_cache_fields(sws_http_request_t *r, sws_str_t *block, uint32_t *nfields,
    const sws_str_t *strip)
{
    static const sws_str_t    ct = sws_string("Content-Type"), et = sws_string("ETag"),
                              lm = sws_string("Last-Modified"), lo = sws_string("Location"),
                              dt = sws_string("Date");
    const sws_array_t        *out = sws_http_headers_out(r);
    const sws_http_header_t  *h = out->elts;
    const sws_str_t          *special[5];
    const sws_str_t          *names[5] = { &ct, &et, &lm, &lo, &dt };
    sws_str_t                 lmv, dtv;
    u_char                    date[40], dated[40], *p;
    size_t                    len = 0;
    sws_uint_t                i, pass;
    time_t                    t = sws_http_last_modified(r), d = -1;

    special[0] = sws_http_content_type(r);
    special[1] = sws_http_etag(r);
    special[2] = NULL;
    if (t != -1) {
        lmv.data = date;
        lmv.len = (size_t) (sws_http_time(date, t) - date);
        special[2] = &lmv;
    }
    special[3] = sws_http_location(r);
    if (sws_http_upstream_get(r)) {
        d = sws_http_upstream_date(sws_http_upstream_get(r));
    }
    dtv.data = dated;
    dtv.len = (size_t) (sws_http_time(dated, d != -1 ? d : sws_time_sec()) - dated);
    special[4] = &dtv;

    *nfields = 0;
    p = NULL;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            p = sws_pnalloc(sws_http_pool(r), len ? len : 1);
            if (p == NULL) {
                return SWS_ERROR;
            }
            block->data = p;
        }
        for (i = 0; i < 5; i++) {
            if (special[i] == NULL || special[i]->len == 0 || special[i]->len > 65535
                || (strip->len && sws_cache_strips(strip, names[i])))
            {
                continue;
            }
            if (pass == 0) {
                len += sws_cache_field_size(names[i], special[i]);
                (*nfields)++;
            } else {
                p = sws_cache_field_write(p, names[i], special[i]);
            }
        }
        for (i = 0; i < out->nelts; i++) {
            if (h[i].hash == 0 || h[i].name.len == 0 || h[i].name.len > 255
                || h[i].value.len > 65535 || sws_cache_field_skip(&h[i].name)
                || (strip->len && sws_cache_strips(strip, &h[i].name)))
            {
                continue;
            }
            if (pass == 0) {
                len += sws_cache_field_size(&h[i].name, &h[i].value);
                (*nfields)++;
            } else {
                p = sws_cache_field_write(p, &h[i].name, &h[i].value);
            }
        }
        if (*nfields > SWS_CACHE_MAX_FIELDS || len > SWS_CACHE_MAX_HEADER) {
            return SWS_DECLINED;
        }
    }
    block->len = len;
    return SWS_OK;
}

/* The header of the entry in ctx (key, vary, fields) into ctx->head. */
static sws_int_t
sws_cache_make_head(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *vary,
    const sws_str_t *fields)
{
    ctx->fh.key_len = (uint32_t) ctx->vkey.len;
    ctx->fh.base_len = (uint32_t) ctx->key.len;
    ctx->fh.vary_len = (uint32_t) vary->len;
    ctx->fh.fields_len = (uint32_t) fields->len;
    ctx->head_len = sws_cache_entry_header_size(ctx->vkey.len, vary->len, fields->len);
    ctx->head = sws_pnalloc(sws_http_pool(r), ctx->head_len);
    if (ctx->head == NULL) {
        return SWS_ERROR;
    }
    sws_cache_entry_write(ctx->head, &ctx->fh, ctx->vkey.data, vary->data, fields->data);
    return SWS_OK;
}

sws_int_t
sws_cache_tmp_open(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_cache_path_t  *p = ctx->path;
    const sws_str_t   *dir = &p->path;
    uint64_t           n;
    u_char            *s;

    /* use_temp_path=on: in the location's proxy_temp_path (or
     * fastcgi_temp_path), as nginx; moved into PATH when complete */
    if (p->use_temp_path == 1 && sws_http_upstream_get(r)) {
        dir = sws_http_upstream_temp_dir(sws_http_upstream_get(r));
    }
    sws_slab_lock(p->pool);
    n = ++p->sh->counter;
    sws_slab_unlock(p->pool);
    s = sws_pnalloc(sws_http_pool(r), dir->len + 64);
    if (s == NULL) {
        return SWS_ERROR;
    }
    ctx->tmp_name.data = s;
    ctx->tmp_name.len = (size_t) (sws_slprintf(s, s + dir->len + 63, "%.*s/.tmp.%ld.%llu",
                                               (int) dir->len, (char *) dir->data,
                                               (long) getpid(), (unsigned long long) n) - s);
    s[ctx->tmp_name.len] = '\0';
    ctx->tmp_fd = open((char *) s, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (ctx->tmp_fd == -1) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "open(\"%s\") failed", s);
        return SWS_ERROR;
    }
    return SWS_OK;
}

sws_int_t
sws_cache_write(int fd, const u_char *p, size_t n, off_t at)
{
    ssize_t  w;

    while (n) {
        w = pwrite(fd, p, n, at);
        if (w <= 0) {
            if (w == -1 && errno == EINTR) {
                continue;
            }
            return SWS_ERROR;
        }
        p += w;
        n -= (size_t) w;
        at += w;
    }
    return SWS_OK;
}

static sws_int_t
sws_cache_mem_add(sws_http_request_t *r, sws_cache_ctx_t *ctx, const u_char *p, size_t n)
{
    u_char  *nb;
    size_t   cap;

    if (ctx->mem == NULL) {
        return SWS_OK;
    }
    if (ctx->mem_len + n > ctx->path->mem_max_object) {
        ctx->mem = NULL;               /* too big for memory: the file only */
        return SWS_OK;
    }
    if (ctx->mem_len + n > ctx->mem_cap) {
        cap = sws_max(ctx->mem_cap * 2, ctx->mem_len + n);
        cap = sws_min(cap, ctx->path->mem_max_object);
        nb = sws_pnalloc(sws_http_pool(r), cap);
        if (nb == NULL) {
            ctx->mem = NULL;
            return SWS_OK;
        }
        memcpy(nb, ctx->mem, ctx->mem_len);
        ctx->mem = nb;
        ctx->mem_cap = cap;
    }
    memcpy(ctx->mem + ctx->mem_len, p, n);
    ctx->mem_len += n;
    return SWS_OK;
}

/* proxy_cache_targeted_hide: the target list's fields do not go on to the
 * client (RFC 9213 3: a CDN MAY remove them); the entry has none either. */
static void
sws_cache_hide_targets(sws_http_request_t *r, const sws_cache_loc_conf_t *lcf)
{
    const sws_str_t  *t;
    sws_uint_t        i;

    if (!lcf->targeted_hide || lcf->targets == NULL) {
        return;
    }
    t = lcf->targets->elts;
    for (i = 0; i < lcf->targets->nelts; i++) {
        sws_http_header_out_remove(r, (const char *) t[i].data, t[i].len);
    }
}

static sws_int_t sws_cache_store_head(sws_http_request_t *r, void *data);

sws_int_t
sws_cache_store_header(sws_http_request_t *r, void *data)
{
    sws_int_t  rc = sws_cache_store_head(r, data);

    sws_cache_hide_targets(r, sws_http_loc_conf(r, &sws_module));
    return rc;
}

/* The head seen: stored (SWS_OK: the body follows), or not. */
static sws_int_t
sws_cache_store_head(sws_http_request_t *r, void *data)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    sws_cache_ctx_t       *ctx = sws_http_get_ctx(r, &sws_module);
    sws_str_t              vary, fields, strip;
    const char            *why;
    off_t                  len;
    sws_int_t              rc;

    if (ctx && ctx->invalidate) {
        sws_cache_invalidate_after(r, ctx);
        return SWS_DECLINED;
    }
    if (ctx && ctx->head_update) {
        sws_cache_head_update(r, ctx);
        sws_cache_unlock(ctx);
        return SWS_DECLINED;
    }
    if (ctx == NULL || ctx->no_store || !(sws_http_method(r) & lcf->methods)) {
        goto declined;
    }
    why = sws_cache_storable(r, lcf, &ctx->fh, &vary, sws_cache_response_delay(ctx), &strip, 0);
    if (why) {
        sws_log_error(SWS_LOG_DEBUG, sws_http_log(r), 0, "cache: not stored, as %s", why);
        goto declined;
    }
    if (vary.len) {
        if (sws_cache_variant_key(r, ctx, vary.data, vary.len) != SWS_OK) {
            goto declined;
        }
    } else {
        ctx->vkey = ctx->key;
    }
    if (ctx->vkey.len > SWS_CACHE_MAX_KEY) {
        goto declined;                 /* the Vary values make it too long to read back */
    }
    if (ctx->fh.status == SWS_HTTP_PARTIAL_CONTENT && sws_cache_partial_on(r, lcf)) {
        if (sws_cache_partial_header(r, ctx, &vary, &strip) != SWS_OK) {
            goto declined;             /* a part, beside the stored ones */
        }
        return SWS_OK;
    }
    rc = sws_cache_fields(r, &fields, &ctx->fh.nfields, &strip);
    if (rc != SWS_OK || sws_cache_make_head(r, ctx, &vary, &fields) != SWS_OK
        || sws_cache_tmp_open(r, ctx) != SWS_OK)
    {
        goto declined;
    }
    len = sws_http_content_length(r);
    ctx->expect_len = len;
    ctx->body_len = 0;
    if (ctx->path->mem_size && ctx->head_len + (len > 0 ? (size_t) len : 0)
                               <= ctx->path->mem_max_object)
    {
        ctx->mem_cap = ctx->head_len + (len > 0 ? (size_t) len : 1024);
        ctx->mem_cap = sws_min(ctx->mem_cap, ctx->path->mem_max_object);
        ctx->mem = sws_pnalloc(sws_http_pool(r), ctx->mem_cap);
        ctx->mem_len = ctx->head_len;   /* the header goes there at the end */
    }
    ctx->filling = 1;
    return SWS_OK;

declined:
    if (ctx) {
        sws_cache_unlock(ctx);
    }
    return SWS_DECLINED;
}

sws_int_t
sws_cache_store_body(sws_http_request_t *r, void *data, const u_char *p, size_t n)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    if (sws_cache_write(ctx->tmp_fd, p, n, (off_t) (ctx->head_len + ctx->body_len)) != SWS_OK) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "cache: writing \"%s\" failed",
                      ctx->tmp_name.data);
        return SWS_ERROR;
    }
    ctx->body_len += n;
    return sws_cache_mem_add(r, ctx, p, n);
}

/* Put the finished entry (file renamed into place) in the index. */
static void
sws_cache_index(sws_http_request_t *r, sws_cache_ctx_t *ctx, const char *name, uint64_t total,
    uint64_t uniq)
{
    sws_cache_path_t  *p = ctx->path;
    sws_cache_node_t  *n, *m = NULL;
    int                variant = ctx->fh.vary_len != 0;
    const u_char      *vary = ctx->head + sizeof(sws_cache_file_header_t) + ctx->fh.key_len;

    sws_slab_lock(p->pool);
    if (variant) {
        m = sws_cache_node_find_locked(p, ctx->key.data, ctx->key.len);
        if (m && (!m->is_marker || m->vary_len != ctx->fh.vary_len
                  || memcmp(m->vary, vary, m->vary_len) != 0))
        {
            /* the response varies now, or on other fields: a new marker */
            if (m->exists) {
                char  old[4096];

                sws_cache_file_name(p, m->digest, old, sizeof(old));
                unlink(old);
            }
            sws_cache_node_remove_locked(p, m);
            m = NULL;
        }
        if (m == NULL) {
            m = sws_cache_node_new_locked(p, ctx->key.data, ctx->key.len);
            if (m) {
                m->vary = sws_slab_alloc_locked(p->pool, ctx->fh.vary_len);
                if (m->vary == NULL) {
                    sws_cache_node_remove_locked(p, m);
                    m = NULL;
                } else {
                    memcpy(m->vary, vary, ctx->fh.vary_len);
                    m->vary_len = ctx->fh.vary_len;
                    m->is_marker = 1;
                }
            }
        }
        if (m == NULL) {
            goto full;
        }
        m->last_access = sws_time_sec();
    }
    n = sws_cache_node_find_locked(p, ctx->vkey.data, ctx->vkey.len);
    if (n && n->is_marker) {
        sws_cache_node_remove_locked(p, n);     /* it varied before, not now */
        n = NULL;
    }
    if (n == NULL) {
        n = sws_cache_node_new_locked(p, ctx->vkey.data, ctx->vkey.len);
        if (n == NULL) {
            goto full;
        }
    }
    if (n->exists) {
        p->sh->fs_used -= n->fs_size;
    } else {
        p->sh->nentries++;
    }
    n->exists = 1;
    n->flags = ctx->fh.flags;
    n->fresh_until = ctx->fh.fresh_until;
    n->response_time = ctx->fh.response_time;
    n->initial_age = ctx->fh.initial_age;
    n->swr = ctx->fh.swr;
    n->sie = ctx->fh.sie;
    n->fs_size = total;
    n->uniq = uniq;
    n->uses = 0;
    n->last_access = sws_time_sec();
    p->sh->fs_used += total;
    if (m && n->marker != m) {
        if (n->marker) {
            sws_queue_remove(&n->variants);
        }
        sws_queue_insert_tail(&m->variants, &n->variants);
        n->marker = m;
    }
    if (ctx->mem && ctx->mem_len == total) {
        sws_cache_mem_attach_locked(p, n, ctx->mem, total);
    } else {
        sws_cache_mem_detach_locked(p, n);
    }
    sws_slab_lru_touch(&p->sh->lru, &n->lru);
    if (ctx->locked && ctx->lkey.len == ctx->vkey.len
        && memcmp(ctx->lkey.data, ctx->vkey.data, ctx->vkey.len) == 0)
    {
        n->lock_until = 0;
        ctx->locked = 0;
    }
    sws_slab_unlock(p->pool);
    return;

full:
    sws_slab_unlock(p->pool);
    sws_log_error(SWS_LOG_WARN, sws_http_log(r), 0, "cache \"%.*s\": keys zone is full, "
                  "entry not kept", (int) p->name.len, p->name.data);
    unlink(name);
}

/*
 * A temp file on another file system (use_temp_path=on): copied to a temp
 * file in PATH first, so that the rename into the entry's name stays
 * atomic; ctx->tmp_name is then the copy's (the first one goes).
 */
static sws_int_t
sws_cache_move_in(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_cache_path_t  *p = ctx->path;
    u_char             buf[65536], *s;
    ssize_t            n;
    off_t              at = 0;
    int                in, out;
    sws_int_t          rc = SWS_ERROR;

    s = sws_pnalloc(sws_http_pool(r), p->path.len + 64);
    if (s == NULL) {
        return SWS_ERROR;
    }
    sws_slab_lock(p->pool);
    n = (ssize_t) ++p->sh->counter;
    sws_slab_unlock(p->pool);
    *sws_slprintf(s, s + p->path.len + 63, "%s/.tmp.%ld.%llu", (char *) p->path.data,
                  (long) getpid(), (unsigned long long) n) = '\0';
    in = open((char *) ctx->tmp_name.data, O_RDONLY | O_CLOEXEC);
    out = open((char *) s, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (in != -1 && out != -1) {
        while ((n = pread(in, buf, sizeof(buf), at)) > 0
               && sws_cache_write(out, buf, (size_t) n, at) == SWS_OK)
        {
            at += n;
        }
        if (n == 0) {
            rc = SWS_OK;
        }
    }
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "copying \"%s\" to \"%s\" failed",
                      ctx->tmp_name.data, s);
    }
    if (in != -1) {
        close(in);
    }
    if (out != -1) {
        close(out);
        if (rc != SWS_OK) {
            unlink((char *) s);
        }
    }
    unlink((char *) ctx->tmp_name.data);
    ctx->tmp_name.data = s;
    ctx->tmp_name.len = strlen((char *) s);
    return rc;
}

/* The temp file holds header + body: into place and into the index. */
sws_int_t
sws_cache_commit(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    char         name[4096];
    uint64_t     total = ctx->head_len + ctx->body_len;
    struct stat  st;

    sws_cache_digest(ctx->vkey.data, ctx->vkey.len, ctx->digest);
    sws_cache_file_name(ctx->path, ctx->digest, name, sizeof(name));
    if (sws_cache_make_dirs(ctx->path, name, sws_http_log(r)) != SWS_OK) {
        return SWS_ERROR;
    }
    /* the inode the index records (sws_cache_file.c): the temp file's,
     * which no one else renames */
    st.st_ino = 0;
    if ((stat((char *) ctx->tmp_name.data, &st) == -1
         || rename((char *) ctx->tmp_name.data, name) == -1)
        && (errno != EXDEV || sws_cache_move_in(r, ctx) != SWS_OK
            || stat((char *) ctx->tmp_name.data, &st) == -1
            || rename((char *) ctx->tmp_name.data, name) == -1))
    {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "rename(\"%s\", \"%s\") failed",
                      ctx->tmp_name.data, name);
        return SWS_ERROR;
    }
    sws_cache_index(r, ctx, name, total, (uint64_t) st.st_ino);
    return SWS_OK;
}

void
sws_cache_store_end(sws_http_request_t *r, void *data, int complete)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    if (ctx == NULL || !ctx->filling) {
        return;
    }
    ctx->filling = 0;
    if (complete && ctx->expect_len >= 0 && (uint64_t) ctx->expect_len != ctx->body_len) {
        complete = 0;                  /* not what Content-Length said */
    }
    if (ctx->part_total) {
        sws_cache_partial_end(r, ctx, complete);
        sws_cache_unlock(ctx);
        return;
    }
    if (complete) {
        ctx->fh.body_len = ctx->body_len;
        sws_cache_entry_write(ctx->head, &ctx->fh, ctx->vkey.data,
                              ctx->head + sizeof(sws_cache_file_header_t) + ctx->fh.key_len,
                              ctx->head + sizeof(sws_cache_file_header_t) + ctx->fh.key_len
                              + ctx->fh.vary_len);
        if (ctx->mem) {
            memcpy(ctx->mem, ctx->head, ctx->head_len);
        }
        complete = sws_cache_write(ctx->tmp_fd, ctx->head, ctx->head_len, 0) == SWS_OK;
    }
    close(ctx->tmp_fd);
    ctx->tmp_fd = -1;
    if (!complete || sws_cache_commit(r, ctx) != SWS_OK) {
        unlink((char *) ctx->tmp_name.data);
    }
    sws_cache_unlock(ctx);
}

/* ---- revalidation ---- */

/* Merge the stored fields the 304 did not replace onto r, so that r holds
 * the updated response (RFC 9111 4.3.4). */
static sws_int_t
sws_cache_merge_stored(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_str_t           name, value, *dn, *dv;
    uint32_t            pos = 0;
    time_t              t;

    while (sws_cache_entry_field(&ctx->entry, &pos, &name, &value)) {
        if (name.len == 12 && sws_strncasecmp(name.data, (u_char *) "content-type", 12) == 0) {
            if (sws_http_content_type(r) == NULL || sws_http_content_type(r)->len == 0) {
                goto copy;
            }
            continue;
        }
        if (name.len == 4 && sws_strncasecmp(name.data, (u_char *) "etag", 4) == 0) {
            if (sws_http_etag(r) == NULL || sws_http_etag(r)->len == 0) {
                goto copy;
            }
            continue;
        }
        if (name.len == 13 && sws_strncasecmp(name.data, (u_char *) "last-modified", 13) == 0) {
            if (sws_http_last_modified(r) == -1) {
                t = sws_parse_http_time(value.data, value.len);
                sws_http_set_last_modified(r, t);
            }
            continue;
        }
        if (name.len == 4 && sws_strncasecmp(name.data, (u_char *) "date", 4) == 0) {
            continue;                  /* the 304's Date is the entry's now */
        }
        if (sws_http_header_out(r, (const char *) name.data, name.len) != NULL) {
            continue;                  /* the 304 brought a newer one */
        }
copy:
        dn = sws_palloc(sws_http_pool(r), 2 * sizeof(sws_str_t));
        if (dn == NULL) {
            return SWS_ERROR;
        }
        dv = dn + 1;
        dn->len = name.len;
        dn->data = sws_pstrdup(sws_http_pool(r), &name);
        dv->len = value.len;
        dv->data = sws_pstrdup(sws_http_pool(r), &value);
        if (dn->data == NULL || dv->data == NULL) {
            return SWS_ERROR;
        }
        if (name.len == 12 && sws_strncasecmp(name.data, (u_char *) "content-type", 12) == 0) {
            sws_http_set_content_type(r, dv);
        } else if (name.len == 4 && sws_strncasecmp(name.data, (u_char *) "etag", 4) == 0) {
            sws_http_set_etag(r, dv);
        } else if (sws_http_header_out_add(r, dn, dv) == NULL) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* Copy the stored body after a new header into a temp file. */
static sws_int_t
sws_cache_copy_body(sws_cache_ctx_t *ctx)
{
    u_char   buf[65536];
    off_t    from = ctx->body_off, to = (off_t) ctx->head_len;
    uint64_t left = ctx->entry.h.body_len;
    ssize_t  n;

    if (ctx->blob) {
        return sws_cache_write(ctx->tmp_fd, ctx->blob->data + ctx->body_off, left, to);
    }
    while (left) {
        n = pread(ctx->fd, buf, sws_min(left, sizeof(buf)), from);
        if (n <= 0) {
            return SWS_ERROR;
        }
        if (sws_cache_write(ctx->tmp_fd, buf, (size_t) n, to) != SWS_OK) {
            return SWS_ERROR;
        }
        from += n;
        to += n;
        left -= (uint64_t) n;
    }
    return SWS_OK;
}

/* The entry in ctx written again with the fields now on r (the stored ones
 * the new response did not replace merged in) and its old body, and read
 * back into ctx->entry: RFC 9111 3.2's update, from a 304 or a HEAD's 200.
 * unstored (if not NULL): the names of the fields the entry does not keep
 * ("a,b,"). SWS_OK (also when the result may not be stored), SWS_ERROR. */
static sws_int_t
sws_cache_rewrite(sws_http_request_t *r, sws_cache_ctx_t *ctx, sws_str_t *unstored)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    sws_str_t              vary, fields, strip;
    const char            *why;
    u_char                *vp;

    if (sws_cache_merge_stored(r, ctx) != SWS_OK) {
        return SWS_ERROR;
    }
    why = sws_cache_storable(r, lcf, &ctx->fh, &vary, sws_cache_response_delay(ctx), &strip, 1);
    if (unstored) {
        unstored->len = why ? 0 : strip.len;
        unstored->data = why ? NULL : strip.data;
    }
    if (why != NULL || ctx->no_store) {
        return SWS_OK;
    }
    /* the stored Vary names stay: the variant is the same one */
    vary.len = ctx->entry.h.vary_len;
    vp = (u_char *) ctx->entry.vary;
    vary.data = vp;
    if (sws_cache_fields(r, &fields, &ctx->fh.nfields, &strip) != SWS_OK
        || sws_cache_make_head(r, ctx, &vary, &fields) != SWS_OK
        || sws_cache_tmp_open(r, ctx) != SWS_OK)
    {
        return SWS_OK;
    }
    ctx->fh.body_len = ctx->entry.h.body_len;
    ctx->body_len = ctx->entry.h.body_len;
    ctx->mem = NULL;
    if (ctx->head_len + ctx->body_len <= ctx->path->mem_max_object && ctx->path->mem_size) {
        ctx->mem = sws_pnalloc(sws_http_pool(r), ctx->head_len + ctx->body_len);
        ctx->mem_len = ctx->head_len + ctx->body_len;
    }
    sws_cache_entry_write(ctx->head, &ctx->fh, ctx->vkey.data, vary.data, fields.data);
    if (sws_cache_write(ctx->tmp_fd, ctx->head, ctx->head_len, 0) != SWS_OK
        || sws_cache_copy_body(ctx) != SWS_OK)
    {
        return SWS_OK;
    }
    if (ctx->mem) {
        memcpy(ctx->mem, ctx->head, ctx->head_len);
        if (ctx->blob) {
            memcpy(ctx->mem + ctx->head_len, ctx->blob->data + ctx->body_off, ctx->body_len);
        } else if (pread(ctx->fd, ctx->mem + ctx->head_len, ctx->body_len, ctx->body_off)
                   != (ssize_t) ctx->body_len)
        {
            ctx->mem = NULL;
        }
    }
    close(ctx->tmp_fd);
    ctx->tmp_fd = -1;
    if (sws_cache_commit(r, ctx) != SWS_OK) {
        unlink((char *) ctx->tmp_name.data);
    }
    /* what a client gets next: the updated header, the old body */
    if (sws_cache_entry_parse(ctx->head, ctx->head_len, ctx->head_len + ctx->body_len,
                              &ctx->entry) != NULL)
    {
        return SWS_ERROR;
    }
    ctx->unprepared = 1;
    return SWS_OK;
}

/* A field of a 304 that the updated entry does not keep but this client
 * gets with its answer from the entry: its Set-Cookie (unless cookies are
 * stored, proxy_ignore_headers Set-Cookie: then the entry has it), and the
 * fields its no-cache="..." or private="..." name (this answer is the
 * validated one, as a miss's is). Hidden targeted fields stay hidden. */
static int
sws_cache_for_client_only(const sws_cache_loc_conf_t *lcf, const sws_str_t *unstored,
    const sws_str_t *name)
{
    const sws_str_t  *t;
    sws_uint_t        i;

    if (lcf->targeted_hide && lcf->targets) {
        t = lcf->targets->elts;
        for (i = 0; i < lcf->targets->nelts; i++) {
            if (t[i].len == name->len && sws_strncasecmp(t[i].data, name->data, name->len) == 0) {
                return 0;
            }
        }
    }
    if (name->len == 10 && sws_strncasecmp(name->data, (u_char *) "set-cookie", 10) == 0
        && !(lcf->ignore & SWS_CACHE_IGN_SET_COOKIE))
    {
        return 1;
    }
    return unstored->len && sws_cache_strips(unstored, name);
}

static sws_int_t
sws_cache_keep_unstored(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *unstored)
{
    const sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    const sws_array_t           *out = sws_http_headers_out(r);
    const sws_http_header_t     *h = out->elts;
    sws_uint_t                   i, n = 0;

    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash && sws_cache_for_client_only(lcf, unstored, &h[i].name)) {
            if (ctx->extra == NULL) {
                ctx->extra = sws_palloc(sws_http_pool(r), out->nelts * sizeof(sws_http_header_t));
                if (ctx->extra == NULL) {
                    return SWS_ERROR;
                }
            }
            ctx->extra[n++] = h[i];
        }
    }
    ctx->nextra = n;
    if (n) {
        ctx->unprepared = 1;
    }
    return SWS_OK;
}

/* RFC 9111 4.3.4: a 304 with a strong ETag updates only an entry of that
 * ETag; without one (or with a weak one) it is taken as the entry's. */
static int
sws_cache_304_names_entry(const sws_str_t *etag, const sws_cache_entry_t *e)
{
    if (etag == NULL || etag->len == 0 || (etag->len > 1 && etag->data[0] == 'W'
                                           && etag->data[1] == '/'))
    {
        return 1;
    }
    return e->etag.len == etag->len && memcmp(e->etag.data, etag->data, etag->len) == 0;
}

sws_int_t
sws_cache_not_modified(sws_http_request_t *r, void *data)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);
    const sws_str_t *etag = sws_http_etag(r);
    sws_str_t        unstored;

    /* a variant miss validated with the other variants' ETags: the one
     * the 304 names is this variant's entry too; a 304 that names no
     * stored response updates nothing (RFC 9111 4.3.4): the request goes
     * again without validators (with the client's own If-None-Match: a
     * 304 to it is the client's) */
    if (ctx->nsiblings ? sws_cache_sibling_load(r, ctx, etag) != SWS_OK
                       : !sws_cache_304_names_entry(etag, &ctx->entry))
    {
        sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0, "cache \"%.*s\": a 304 names no "
                      "stored response: asked again without validators",
                      (int) ctx->path->name.len, ctx->path->name.data);
        ctx->nsiblings = 0;
        sws_http_upstream_cache_pass_if_none_match(sws_http_upstream_get(r));
        return SWS_UPSTREAM_CACHE_MISS;
    }
    if (!ctx->background) {
        ctx->status = SWS_CACHE_REVALIDATED;
    }
    sws_http_set_status(r, ctx->entry.h.status);
    if (sws_cache_rewrite(r, ctx, &unstored) != SWS_OK
        || sws_cache_keep_unstored(r, ctx, &unstored) != SWS_OK)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_cache_unlock(ctx);
    if (ctx->background) {
        return SWS_OK;                 /* the client had the stale entry already */
    }
    return sws_cache_send(r, ctx);
}

/*
 * RFC 9111 4.3.5: a 200 to a HEAD that went to the server for a stale
 * entry updates the entry's fields and freshness when each validator it
 * carries (ETag, Last-Modified) is the entry's and its Content-Length, if
 * any, is the stored body's; an entry without validators is updated by a
 * HEAD without them too (HEAD is how such an entry is freshened). When
 * they differ, the entry is no longer the resource's: it goes.
 */
static void
sws_cache_head_update(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    const sws_str_t  *etag = sws_http_etag(r);
    time_t            lm = sws_http_last_modified(r);
    off_t             len = sws_http_content_length(r);

    if (sws_http_status(r) != SWS_HTTP_OK) {
        return;
    }
    if (ctx->entry.h.status != SWS_HTTP_OK
        || (etag != NULL && etag->len
            && (etag->len != ctx->entry.etag.len
                || memcmp(etag->data, ctx->entry.etag.data, etag->len) != 0))
        || (lm != -1 && lm != ctx->entry.h.last_modified)
        || (len != -1 && (uint64_t) len != ctx->entry.h.body_len))
    {
        sws_cache_invalidate(ctx->path, &ctx->vkey, sws_http_log(r));
        return;
    }
    (void) sws_cache_rewrite(r, ctx, NULL);
}

/* ---- stale on errors ---- */

sws_int_t
sws_cache_failed(sws_http_request_t *r, void *data, sws_int_t rc)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    sws_cache_ctx_t       *ctx = sws_http_get_ctx(r, &sws_module);
    sws_uint_t             want;
    sws_cache_cc_t         rcc;
    time_t                 now = sws_time_sec();

    if (ctx == NULL || !ctx->have_stale || ctx->background) {
        return SWS_DECLINED;
    }
    switch (rc) {
    case SWS_HTTP_INTERNAL_SERVER_ERROR:
        want = SWS_CACHE_STALE_500;
        break;
    case SWS_HTTP_BAD_GATEWAY:
        want = SWS_CACHE_STALE_ERROR | SWS_CACHE_STALE_502;
        break;
    case SWS_HTTP_SERVICE_UNAVAILABLE:
        want = SWS_CACHE_STALE_503;
        break;
    case SWS_HTTP_GATEWAY_TIME_OUT:
        want = SWS_CACHE_STALE_TIMEOUT | SWS_CACHE_STALE_504;
        break;
    default:
        want = 0;
    }
    /* proxy_cache_use_stale, or stale-if-error of the response or of the
     * request (RFC 5861 4; read here, only when it is needed): an error
     * there is a 500, 502, 503 or 504, or no answer (a 501 or 505 is the
     * server's answer, not a failure) */
    if (!(lcf->use_stale & want)
        && !(want && ctx->entry.h.sie && now < ctx->entry.h.fresh_until + ctx->entry.h.sie))
    {
        if (want == 0 || !lcf->request_directives) {
            return SWS_DECLINED;
        }
        sws_cache_cc_request(r, &rcc);
        if (rcc.sie < 0 || now >= ctx->entry.h.fresh_until + rcc.sie) {
            return SWS_DECLINED;
        }
    }
    ctx->status = SWS_CACHE_STALE;
    ctx->filling = 0;
    sws_cache_unlock(ctx);
    return sws_cache_send(r, ctx);
}

/* ---- invalidation ---- */

sws_uint_t
sws_cache_drop_node_locked(sws_cache_path_t *p, sws_cache_node_t *n)
{
    sws_cache_node_t  *v;
    sws_uint_t         removed = 0;
    char               name[4096];

    if (n->is_marker) {
        while (!sws_queue_empty(&n->variants)) {
            v = sws_queue_data(sws_queue_head(&n->variants), sws_cache_node_t, variants);
            removed += sws_cache_drop_node_locked(p, v);
        }
    }
    if (n->exists) {
        sws_cache_file_name(p, n->digest, name, sizeof(name));
        unlink(name);
        sws_cache_file_forget(p, n->digest);    /* its space back now */
        removed++;
    }
    sws_cache_node_remove_locked(p, n);
    return removed;
}

sws_uint_t
sws_cache_invalidate(sws_cache_path_t *p, const sws_str_t *key, sws_log_t *log)
{
    sws_cache_node_t  *n;
    sws_uint_t         removed = 0;

    (void) log;
    sws_slab_lock(p->pool);
    n = sws_cache_node_find_locked(p, key->data, key->len);
    if (n) {
        removed = sws_cache_drop_node_locked(p, n);
    }
    sws_slab_unlock(p->pool);
    return removed;
}
