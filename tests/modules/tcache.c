/*
 * tcache: a tiny in-memory response cache on the upstream framework's
 * cache hooks (sws_http_upstream_cache_t), built by the integration tests
 * against the SDK only (tests/integration/test_upstream_cache.py). One
 * worker's memory: the tests run one worker.
 *
 *   tcache on|file;     (location) keep 200 responses to GET, keyed by the
 *                       URI with its query, and answer later GET/HEAD from
 *                       them; "file": the body also goes into a file of
 *                       tcache_dir, and hits are sent from that file
 *   tcache off;         none here (a parent's cache turned off)
 *   tcache_dir PATH;
 *   tcache_dump;        (content handler) ?KEY: that entry's body as it was
 *                       teed, with X-Complete, X-Status, X-Ends (store_end
 *                       calls), X-Revalidated, X-Lookups, X-Stores
 *
 * Request fields that steer it:
 *   X-TCache-Revalidate: yes    revalidate the entry with its validators
 *   X-TCache-Revalidate: stale  with an ETag the origin does not have
 *   X-TCache-Revalidate: none   REVALIDATE without validators (a 500)
 *   X-TCache-Stop: N            store_body gives up past N bytes
 * Its answers carry X-TCache: hit | revalidated.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

#define TC_ENTRIES  32
#define TC_RETIRED  256

typedef struct {
    sws_int_t   mode;            /* 0 off, 1 memory, 2 file; SWS_UNSET */
    sws_str_t   dir;
} tc_conf_t;

typedef struct {
    char              *key;
    sws_uint_t         status;
    sws_http_header_t *headers;
    sws_uint_t         nheaders;
    u_char            *body;
    size_t             len;
    size_t             size;
    int                fd;
    int                complete;
    sws_uint_t         ends;
    sws_uint_t         revalidated;
    sws_uint_t         lookups;
    sws_uint_t         stores;
    sws_str_t          etag;
    time_t             last_modified;
} tc_entry_t;

typedef struct {
    tc_entry_t  *entry;          /* being stored, or revalidated */
    size_t       stop;           /* X-TCache-Stop (0: none) */
    tc_conf_t   *conf;
} tc_ctx_t;

static tc_entry_t  tc_entries[TC_ENTRIES];
static void       *tc_retired[TC_RETIRED];   /* memory a hit may still send */
static sws_uint_t  tc_nretired;
static int         tc_retired_fd[TC_RETIRED];
static sws_uint_t  tc_nretired_fd;
static sws_uint_t  tc_files;

static void
tc_retire(void *p)
{
    if (p == NULL) {
        return;
    }
    if (tc_nretired < TC_RETIRED) {
        tc_retired[tc_nretired++] = p;
    } else {
        free(p);                 /* the tests never get here */
    }
}

static sws_str_t
tc_dup(const sws_str_t *s)
{
    sws_str_t d;

    d.len = s->len;
    d.data = malloc(s->len ? s->len : 1);
    if (d.data) {
        memcpy(d.data, s->data, s->len);
    }
    return d;
}

static tc_entry_t *
tc_find(sws_http_request_t *r, int create)
{
    const sws_str_t *uri = sws_http_unparsed_uri(r);
    sws_uint_t       i;

    for (i = 0; i < TC_ENTRIES && tc_entries[i].key; i++) {
        if (strlen(tc_entries[i].key) == uri->len
            && memcmp(tc_entries[i].key, uri->data, uri->len) == 0)
        {
            return &tc_entries[i];
        }
    }
    if (!create || i == TC_ENTRIES) {
        return NULL;
    }
    tc_entries[i].key = strndup((const char *) uri->data, uri->len);
    tc_entries[i].fd = -1;
    return tc_entries[i].key ? &tc_entries[i] : NULL;
}

static tc_ctx_t *
tc_ctx(sws_http_request_t *r, tc_conf_t *conf)
{
    tc_ctx_t        *ctx = sws_http_get_ctx(r, &sws_module);
    const sws_str_t *stop;

    if (ctx == NULL) {
        ctx = sws_pcalloc(sws_http_pool(r), sizeof(tc_ctx_t));
        if (ctx == NULL) {
            return NULL;
        }
        ctx->conf = conf;
        stop = sws_http_header_in(r, "x-tcache-stop", 13);
        if (stop) {
            ctx->stop = (size_t) sws_atoi(stop->data, stop->len);
        }
        sws_http_set_ctx(r, &sws_module, ctx);
    }
    return ctx;
}

/* Answer from e through the filters (sws_http_send_stored). */
static sws_int_t
tc_send(sws_http_request_t *r, tc_entry_t *e, const char *how)
{
    static const sws_str_t name = sws_string("X-TCache");
    sws_http_header_t     *hs;
    sws_chain_t           *cl = NULL;
    sws_buf_t             *b;

    hs = sws_palloc(sws_http_pool(r), (e->nheaders + 1) * sizeof(sws_http_header_t));
    if (hs == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    memcpy(hs, e->headers, e->nheaders * sizeof(sws_http_header_t));
    hs[e->nheaders].name = name;
    hs[e->nheaders].value.data = (u_char *) how;
    hs[e->nheaders].value.len = strlen(how);
    hs[e->nheaders].hash = 1;

    if (e->len) {
        b = sws_calloc_buf(sws_http_pool(r));
        cl = sws_alloc_chain_link(sws_http_pool(r));
        if (b == NULL || cl == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (e->fd != -1) {
            b->in_file = 1;
            b->fd = e->fd;
            b->file_pos = 0;
            b->file_last = (off_t) e->len;
        } else {
            b->memory = 1;
            b->start = b->pos = e->body;
            b->end = b->last = e->body + e->len;
        }
        cl->buf = b;
        cl->next = NULL;
    }
    return sws_http_send_stored(r, e->status, hs, e->nheaders + 1, cl);
}

/* ---- the hooks ---- */

static sws_int_t
tc_lookup(sws_http_request_t *r, void *data)
{
    static const sws_str_t  stale = sws_string("\"stale\"");
    tc_conf_t              *conf = data;
    sws_http_upstream_t    *u = sws_http_upstream_get(r);
    const sws_str_t        *rv;
    tc_entry_t             *e;
    tc_ctx_t               *ctx;

    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_DECLINED;
    }
    ctx = tc_ctx(r, conf);
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    e = tc_find(r, 0);
    if (e) {
        e->lookups++;
    }
    if (e == NULL || !e->complete) {
        return SWS_UPSTREAM_CACHE_MISS;
    }
    rv = sws_http_header_in(r, "x-tcache-revalidate", 19);
    if (rv == NULL) {
        return tc_send(r, e, "hit");
    }
    ctx->entry = e;
    if (sws_str_eq_cstr(rv, "none")) {
        return SWS_UPSTREAM_CACHE_REVALIDATE;       /* no validators: refused */
    }
    if (sws_http_upstream_cache_validators(u, sws_str_eq_cstr(rv, "stale") ? &stale : &e->etag,
                                           sws_str_eq_cstr(rv, "stale") ? -1 : e->last_modified)
        != SWS_OK)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_UPSTREAM_CACHE_REVALIDATE;
}

static sws_int_t
tc_add_header(tc_entry_t *e, const char *name, const sws_str_t *value)
{
    sws_str_t n;

    n.data = (u_char *) name;
    n.len = strlen(name);
    e->headers[e->nheaders].name = tc_dup(&n);
    e->headers[e->nheaders].value = tc_dup(value);
    e->headers[e->nheaders].hash = 1;
    if (e->headers[e->nheaders].name.data == NULL
        || e->headers[e->nheaders].value.data == NULL)
    {
        return SWS_ERROR;
    }
    e->nheaders++;
    return SWS_OK;
}

static sws_int_t
tc_store_header(sws_http_request_t *r, void *data)
{
    tc_conf_t               *conf = data;
    const sws_array_t       *out = sws_http_headers_out(r);
    const sws_http_header_t *h = out->elts;
    const sws_str_t         *type = sws_http_content_type(r), *etag = sws_http_etag(r);
    tc_ctx_t                *ctx = tc_ctx(r, conf);
    tc_entry_t              *e;
    sws_uint_t               i;
    sws_str_t                v;
    u_char                   date[40];
    char                     path[512];

    if (ctx == NULL || sws_http_status(r) != SWS_HTTP_OK || sws_http_method(r) != SWS_HTTP_GET) {
        return SWS_DECLINED;
    }
    e = tc_find(r, 1);
    if (e == NULL) {
        return SWS_DECLINED;
    }
    /* A new version: the old one's memory may still be going to a client. */
    tc_retire(e->body);
    for (i = 0; i < e->nheaders; i++) {
        tc_retire(e->headers[i].name.data);
        tc_retire(e->headers[i].value.data);
    }
    tc_retire(e->headers);
    tc_retire(e->etag.data);
    if (e->fd != -1 && tc_nretired_fd < TC_RETIRED) {
        tc_retired_fd[tc_nretired_fd++] = e->fd;
    }
    e->fd = -1;
    e->body = NULL;
    e->len = e->size = 0;
    e->complete = 0;
    e->nheaders = 0;
    e->etag.len = 0;
    e->etag.data = NULL;
    e->stores++;
    e->status = sws_http_status(r);
    e->last_modified = sws_http_last_modified(r);
    e->headers = calloc(out->nelts + 3, sizeof(sws_http_header_t));
    if (e->headers == NULL) {
        return SWS_DECLINED;
    }
    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash == 0) {
            continue;                    /* deleted */
        }
        e->headers[e->nheaders].name = tc_dup(&h[i].name);
        e->headers[e->nheaders].value = tc_dup(&h[i].value);
        e->headers[e->nheaders++].hash = 1;
    }
    if (type && type->len && tc_add_header(e, "Content-Type", type) != SWS_OK) {
        return SWS_DECLINED;
    }
    if (etag && etag->len) {
        e->etag = tc_dup(etag);
        if (tc_add_header(e, "ETag", etag) != SWS_OK) {
            return SWS_DECLINED;
        }
    }
    if (e->last_modified != -1) {
        v.data = date;
        v.len = (size_t) (sws_http_time(date, e->last_modified) - date);
        if (tc_add_header(e, "Last-Modified", &v) != SWS_OK) {
            return SWS_DECLINED;
        }
    }
    if (conf->mode == 2) {
        snprintf(path, sizeof(path), "%.*s/tc-%u", (int) conf->dir.len,
                 (const char *) conf->dir.data, (unsigned) tc_files++);
        e->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (e->fd == -1) {
            return SWS_DECLINED;
        }
    }
    ctx->entry = e;
    return SWS_OK;
}

static sws_int_t
tc_store_body(sws_http_request_t *r, void *data, const u_char *p, size_t n)
{
    tc_ctx_t   *ctx = sws_http_get_ctx(r, &sws_module);
    tc_entry_t *e = ctx->entry;
    u_char     *nb;

    (void) data;
    if (ctx->stop && e->len + n > ctx->stop) {
        return SWS_DECLINED;             /* "too big for me" */
    }
    if (e->len + n > e->size) {
        e->size = (e->len + n) * 2;
        nb = realloc(e->body, e->size);
        if (nb == NULL) {
            return SWS_ERROR;
        }
        e->body = nb;
    }
    memcpy(e->body + e->len, p, n);
    e->len += n;
    if (e->fd != -1 && write(e->fd, p, n) != (ssize_t) n) {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static void
tc_store_end(sws_http_request_t *r, void *data, int complete)
{
    tc_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    ctx->entry->complete = complete;
    ctx->entry->ends++;
}

static sws_int_t
tc_not_modified(sws_http_request_t *r, void *data)
{
    tc_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    ctx->entry->revalidated++;
    return tc_send(r, ctx->entry, "revalidated");
}

static const sws_http_upstream_cache_t tc_hooks = {
    .name = "tcache",
    .lookup = tc_lookup,
    .store_header = tc_store_header,
    .store_body = tc_store_body,
    .store_end = tc_store_end,
    .not_modified = tc_not_modified,
};

/* ---- tcache_dump ---- */

static sws_int_t
tc_dump_handler(sws_http_request_t *r)
{
    static const sws_str_t  type = sws_string("application/octet-stream");
    static const char      *names[] = { "X-Complete", "X-Status", "X-Ends",
                                        "X-Revalidated", "X-Lookups", "X-Stores" };
    const sws_str_t        *args = sws_http_args(r);
    sws_str_t               body, name, *v;
    sws_uint_t              i, vals[6];
    tc_entry_t             *e = NULL;
    u_char                 *p;

    for (i = 0; i < TC_ENTRIES && tc_entries[i].key; i++) {
        if (strlen(tc_entries[i].key) == args->len
            && memcmp(tc_entries[i].key, args->data, args->len) == 0)
        {
            e = &tc_entries[i];
        }
    }
    if (e == NULL) {
        return SWS_HTTP_NOT_FOUND;
    }
    vals[0] = (sws_uint_t) e->complete;
    vals[1] = e->status;
    vals[2] = e->ends;
    vals[3] = e->revalidated;
    vals[4] = e->lookups;
    vals[5] = e->stores;
    for (i = 0; i < 6; i++) {
        v = sws_palloc(sws_http_pool(r), sizeof(sws_str_t));
        p = sws_pnalloc(sws_http_pool(r), 24);
        if (v == NULL || p == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        v->data = p;
        v->len = (size_t) (sws_sprint_uint(p, vals[i]) - p);
        name.data = (u_char *) names[i];
        name.len = strlen(names[i]);
        sws_http_header_out_add(r, &name, v);
    }
    body.data = e->body ? e->body : (u_char *) "";
    body.len = e->len;
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

/* ---- configuration ---- */

static char *
tc_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    tc_conf_t *tc = conf;
    sws_str_t *v = sws_conf_arg(cf, 1);

    (void) cmd;
    if (sws_str_eq_cstr(v, "on")) {
        tc->mode = 1;
    } else if (sws_str_eq_cstr(v, "file")) {
        tc->mode = 2;
    } else if (sws_str_eq_cstr(v, "off")) {
        tc->mode = 0;
    } else {
        return "takes on, file or off";
    }
    /* The hooks get this level's conf; the merge fills its tcache_dir. */
    if (sws_http_upstream_cache_set(cf, tc->mode ? &tc_hooks : NULL, tc) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
tc_dump(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    return sws_http_set_content_handler(cf, tc_dump_handler, "tcache_dump") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
tc_create_loc(sws_conf_t *cf)
{
    tc_conf_t *c = sws_pcalloc(sws_conf_pool(cf), sizeof(tc_conf_t));

    if (c) {
        c->mode = SWS_UNSET;
    }
    return c;
}

static char *
tc_merge_loc(sws_conf_t *cf, void *parent, void *child)
{
    tc_conf_t *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_value(conf->mode, prev->mode, 0);
    sws_conf_merge_str_value(conf->dir, prev->dir, "/tmp");
    return SWS_CONF_OK;
}

static void
tc_exit_worker(sws_cycle_t *cycle)
{
    sws_uint_t i, j;

    (void) cycle;
    for (i = 0; i < TC_ENTRIES && tc_entries[i].key; i++) {
        for (j = 0; j < tc_entries[i].nheaders; j++) {
            free(tc_entries[i].headers[j].name.data);
            free(tc_entries[i].headers[j].value.data);
        }
        free(tc_entries[i].headers);
        free(tc_entries[i].body);
        free(tc_entries[i].etag.data);
        free(tc_entries[i].key);
        if (tc_entries[i].fd != -1) {
            close(tc_entries[i].fd);
        }
    }
    for (i = 0; i < tc_nretired; i++) {
        free(tc_retired[i]);
    }
    for (i = 0; i < tc_nretired_fd; i++) {
        close(tc_retired_fd[i]);
    }
}

#define TC_LOC  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t tc_commands[] = {
    { "tcache", TC_LOC | SWS_CONF_TAKE1, tc_directive, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "tcache_dir", TC_LOC | SWS_CONF_TAKE1, sws_conf_set_str_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(tc_conf_t, dir), NULL },
    { "tcache_dump", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, tc_dump, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tcache",
    .commands = tc_commands,
    .create_loc_conf = tc_create_loc,
    .merge_loc_conf = tc_merge_loc,
    .exit_worker = tc_exit_worker,
};
