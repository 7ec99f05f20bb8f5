/*
 * A file hit: the entry's file through the worker's open file cache
 * (sws_http_open_cached), so that a hot entry costs no open, stat, read or
 * close; its header is read, checked and prepared for sending once per
 * opening, and kept with the cached descriptor (sws_http_file_attach).
 *
 * Which file is the entry's is the index's word, not the path's: the node
 * records the inode of the file it indexed (renamed into place by a fill or
 * a 304's update, or found by the loader), and a cached descriptor of any
 * other file at that path (one replaced since) is closed and the path
 * opened again. Header and body therefore always come from one file: a
 * hit never sends a replaced entry's bytes. A file removed (purge, the
 * manager, an invalidation) is closed by inotify in every worker, and at
 * once in the worker that removed it (sws_cache_file_forget).
 */
#include <stdlib.h>
#include "sws_cache.h"

/* What is kept with a cached entry file: its header (a copy), checked,
 * and its fields prepared as a memory copy's are. */
typedef struct {
    sws_cache_entry_t       entry;      /* pointers into header */
    sws_http_stored_head_t  head;
    u_char                 *header;
    sws_http_header_t       fields[];   /* head's; then the header's bytes */
} sws_cache_file_state_t;

static sws_cache_file_state_t *
sws_cache_file_state(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_http_file_t *f,
    const char *name)
{
    sws_cache_file_state_t  *st;
    sws_cache_entry_t        e;
    u_char                  *buf;
    const char              *why;
    size_t                   nf;

    why = sws_cache_read_header(sws_http_pool(r), f->fd, f->data, f->size, &ctx->vkey, &e, &buf);
    if (why) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "cache \"%.*s\": file \"%s\" %s: "
                      "not used", (int) ctx->path->name.len, ctx->path->name.data, name, why);
        return NULL;
    }
    nf = e.h.nfields;
    st = malloc(sizeof(sws_cache_file_state_t) + nf * sizeof(sws_http_header_t)
                + e.h.header_len);
    if (st == NULL) {
        return NULL;
    }
    st->header = (u_char *) &st->fields[nf];
    memcpy(st->header, buf, e.h.header_len);
    /* the same parts, in the copy */
    st->entry = e;
    st->entry.key = st->header + (e.key - buf);
    st->entry.vary = st->header + (e.vary - buf);
    st->entry.fields = st->header + (e.fields - buf);
    st->entry.body = NULL;
    if (e.etag.len) {
        st->entry.etag.data = st->header + (e.etag.data - buf);
    }
    sws_cache_entry_prepare(&st->entry, &st->head, st->fields);
    return st;
}

sws_int_t
sws_cache_file_cached(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    char                     name[4096];
    sws_str_t                path;
    sws_http_file_t          f;
    sws_http_file_cache_t    fc;
    sws_cache_file_state_t  *st;
    sws_int_t                rc;

    path.len = sws_cache_file_name(ctx->path, ctx->digest, name, sizeof(name));
    path.data = (u_char *) name;
    fc.max = ctx->path->open_files;
    fc.inactive = SWS_CACHE_OPEN_INACTIVE;
    fc.uniq = ctx->uniq;
    rc = sws_http_open_cached(r, &path, &fc, &f);
    if (rc != SWS_OK || !f.is_file) {
        return SWS_DECLINED;           /* gone, or replaced again: as before */
    }
    st = f.attached;
    if (st == NULL) {
        st = sws_cache_file_state(r, ctx, &f, name);
        if (st == NULL) {
            return SWS_DECLINED;
        }
        if (sws_http_file_attach(&f, st, free) != SWS_OK) {
            free(st);
            return SWS_DECLINED;
        }
    } else if (st->entry.h.key_len != ctx->vkey.len
               || memcmp(st->entry.key, ctx->vkey.data, ctx->vkey.len) != 0)
    {
        return SWS_DECLINED;           /* another key with the same digest */
    }
    ctx->entry = st->entry;
    ctx->prepared_head = &st->head;
    ctx->body_off = st->entry.h.header_len;
    ctx->fd = f.fd;                    /* -1 when the cache holds the bytes */
    ctx->fd_cached = 1;
    ctx->fdata = f.data;
    return SWS_OK;
}

void
sws_cache_file_forget(sws_cache_path_t *p, const u_char digest[16])
{
    char       name[4096];
    sws_str_t  path;

    if (p->open_files == 0) {
        return;
    }
    path.len = sws_cache_file_name(p, digest, name, sizeof(name));
    path.data = (u_char *) name;
    sws_http_file_forget(&path);
}
