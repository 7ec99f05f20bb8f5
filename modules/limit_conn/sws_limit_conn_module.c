/*
 * The limit_conn module: how many requests of one key are served at once.
 *
 *   limit_conn_zone KEY zone=NAME:SIZE;                  (http)
 *   limit_conn ZONE N;                                   (http, server, location)
 *   limit_conn_status CODE;  limit_conn_log_level info|notice|warn|error;
 *   limit_conn_dry_run on|off;
 *   $limit_conn_status: PASSED, REJECTED, REJECTED_DRY_RUN
 *
 * As in nginx, what is counted is requests being processed (each HTTP/2
 * stream is one), from the access phase until the request's pool goes,
 * after its log line. The counts live in a slab zone shared by the
 * workers and kept across reloads; a record goes as its count drops to
 * zero, so the zone holds only keys that have requests in flight. When it
 * is full, a new key is refused like one over its limit (and logged).
 */
#include <scalws/scalws.h>

#define SWS_LIMIT_CONN_PASSED            1
#define SWS_LIMIT_CONN_REJECTED          2
#define SWS_LIMIT_CONN_REJECTED_DRY_RUN  3

typedef struct {
    sws_slab_hash_node_t   hash;
    uint64_t               count;
    u_char                 key[];
} sws_limit_conn_node_t;

typedef struct {
    sws_slab_hash_t       *hash;
} sws_limit_conn_shctx_t;

typedef struct {
    sws_str_t              name;
    sws_http_format_t     *key;
    sws_shm_zone_t        *shm;
    const char            *file;
    sws_uint_t             line;
} sws_limit_conn_zone_t;

typedef struct {
    sws_limit_conn_zone_t *zone;
    sws_str_t              zone_name;
    uint64_t               conn;
    const char            *file;
    sws_uint_t             line;
} sws_limit_conn_t;

typedef struct {
    sws_array_t            zones;      /* sws_limit_conn_zone_t * */
} sws_limit_conn_main_conf_t;

typedef struct {
    sws_array_t           *limits;     /* sws_limit_conn_t, NULL: inherit */
    sws_int_t              status;
    sws_uint_t             log_level;
    sws_int_t              dry_run;
    void                  *mcf;        /* the http block's: its zones */
} sws_limit_conn_loc_conf_t;

typedef struct {
    sws_uint_t             status;     /* SWS_LIMIT_CONN_* */
} sws_limit_conn_ctx_t;

/* What a request holds, given back by its pool's cleanup. */
typedef struct {
    sws_slab_pool_t       *pool;
    sws_limit_conn_node_t *node;
} sws_limit_conn_held_t;

static char *sws_limit_conn_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_limit_conn(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_limit_conn_create_main_conf(sws_conf_t *cf);
static void *sws_limit_conn_create_loc_conf(sws_conf_t *cf);
static char *sws_limit_conn_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_limit_conn_init(sws_conf_t *cf);

#define SWS_LIMIT_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_limit_conn_commands[] = {
    { "limit_conn_zone", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE2, sws_limit_conn_zone,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "limit_conn", SWS_LIMIT_HTTP | SWS_CONF_TAKE2, sws_limit_conn,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "limit_conn_status", SWS_LIMIT_HTTP | SWS_CONF_TAKE1, sws_conf_set_status_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_conn_loc_conf_t, status), NULL },
    { "limit_conn_log_level", SWS_LIMIT_HTTP | SWS_CONF_TAKE1, sws_conf_set_log_level_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_conn_loc_conf_t, log_level), NULL },
    { "limit_conn_dry_run", SWS_LIMIT_HTTP | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_conn_loc_conf_t, dry_run), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "limit_conn",
    .commands = sws_limit_conn_commands,
    .create_main_conf = sws_limit_conn_create_main_conf,
    .create_loc_conf = sws_limit_conn_create_loc_conf,
    .merge_loc_conf = sws_limit_conn_merge_loc_conf,
    .postconfiguration = sws_limit_conn_init,
};


/* ---- the shared counts ----------------------------------------------- */

static void
sws_limit_conn_release(void *data)
{
    sws_limit_conn_held_t  *held = data;
    sws_limit_conn_shctx_t *sh = sws_slab_data(held->pool);

    sws_slab_lock(held->pool);
    if (--held->node->count == 0) {
        sws_slab_hash_remove(sh->hash, &held->node->hash);
        sws_slab_free_locked(held->pool, held->node);
    }
    sws_slab_unlock(held->pool);
}

/* One more request of key in z, unless it has max already: the record
 * (counted), NULL over the limit (*full: the zone had no room). */
static sws_limit_conn_node_t *
sws_limit_conn_take(sws_limit_conn_zone_t *z, const sws_str_t *key, uint64_t max, int *full)
{
    sws_slab_pool_t        *pool = z->shm->data;
    sws_limit_conn_shctx_t *sh = sws_slab_data(pool);
    sws_slab_hash_node_t   *hn;
    sws_limit_conn_node_t  *n = NULL;

    *full = 0;
    sws_slab_lock(pool);
    hn = sws_slab_hash_find(sh->hash, key->data, key->len);
    if (hn) {
        n = sws_slab_hash_entry(hn, sws_limit_conn_node_t, hash);
        if (n->count >= max) {
            n = NULL;
        } else {
            n->count++;
        }
    } else {
        n = sws_slab_alloc_locked(pool, sizeof(sws_limit_conn_node_t) + key->len);
        if (n == NULL) {
            *full = 1;
        } else {
            n->count = 1;
            memcpy(n->key, key->data, key->len);
            sws_slab_hash_insert(sh->hash, &n->hash, n->key, key->len);
        }
    }
    sws_slab_unlock(pool);
    return n;
}


/* ---- the access phase ------------------------------------------------ */

static sws_int_t
sws_limit_conn_handler(sws_http_request_t *r)
{
    sws_limit_conn_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_limit_conn_ctx_t      *ctx;
    sws_limit_conn_held_t     *held;
    sws_limit_conn_node_t     *n;
    sws_limit_conn_t          *l;
    const sws_str_t           *addr;
    sws_str_t                  key;
    sws_uint_t                 i;
    int                        full;

    if (lcf->limits == NULL || lcf->limits->nelts == 0
        || sws_http_get_ctx(r, &sws_module) != NULL)
    {
        return SWS_DECLINED;
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_limit_conn_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    ctx->status = SWS_LIMIT_CONN_PASSED;
    l = lcf->limits->elts;

    for (i = 0; i < lcf->limits->nelts; i++) {
        key.len = sws_http_format_len(l[i].zone->key, r);
        if (key.len == 0 || key.len > 255) {
            continue;                 /* no key (or an unlikely long one): not limited */
        }
        key.data = sws_pnalloc(sws_http_pool(r), key.len);
        held = sws_palloc(sws_http_pool(r), sizeof(sws_limit_conn_held_t));
        if (key.data == NULL || held == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        (void) sws_http_format_render(l[i].zone->key, r, key.data);
        n = sws_limit_conn_take(l[i].zone, &key, l[i].conn, &full);
        if (n == NULL) {
            addr = sws_http_remote_addr(r);
            sws_log_error(lcf->log_level, sws_http_log(r), 0,
                          "%s%s by zone \"%.*s\", client: %.*s, request: \"%.*s %.*s\"",
                          full ? "limit_conn zone is full: limiting connections"
                               : "limiting connections",
                          lcf->dry_run ? ", dry run" : "",
                          (int) l[i].zone->name.len, l[i].zone->name.data,
                          (int) addr->len, addr->data,
                          (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                          (int) sws_http_unparsed_uri(r)->len,
                          sws_http_unparsed_uri(r)->data);
            if (lcf->dry_run) {
                ctx->status = SWS_LIMIT_CONN_REJECTED_DRY_RUN;
                continue;
            }
            /* what was taken by the limits before goes with the pool */
            ctx->status = SWS_LIMIT_CONN_REJECTED;
            return lcf->status;
        }
        held->pool = l[i].zone->shm->data;
        held->node = n;
        if (sws_pool_cleanup_add(sws_http_pool(r), sws_limit_conn_release, held) != SWS_OK) {
            sws_limit_conn_release(held);
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return SWS_DECLINED;
}

static void
sws_limit_conn_var_status(sws_http_request_t *r, void *data, sws_str_t *v)
{
    static const char *const  names[] = { NULL, "PASSED", "REJECTED", "REJECTED_DRY_RUN" };
    sws_limit_conn_ctx_t     *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    if (ctx == NULL || ctx->status == 0) {
        return;
    }
    v->data = (u_char *) names[ctx->status];
    v->len = strlen(names[ctx->status]);
}


/* ---- configuration --------------------------------------------------- */

static sws_int_t
sws_limit_conn_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_slab_pool_t        *pool = sws_slab_init(zone, old_data);
    sws_limit_conn_shctx_t *sh;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool) != NULL) {
        return SWS_OK;            /* a reload kept the zone and the requests in it */
    }
    sws_slab_lock(pool);
    sh = sws_slab_calloc_locked(pool, sizeof(sws_limit_conn_shctx_t));
    if (sh) {
        sh->hash = sws_slab_hash_create_locked(pool, (sws_uint_t) (zone->size / 256));
        sws_slab_set_data(pool, sh->hash ? sh : NULL);
    }
    sws_slab_unlock(pool);
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

static char *
sws_limit_conn_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_conn_main_conf_t *mcf = conf;
    sws_limit_conn_zone_t      *z, **zp, **all;
    sws_str_t                  *arg = sws_conf_arg(cf, 2), v, s, zname;
    const char                 *err = NULL;
    u_char                     *colon, buf[128];
    ssize_t                     size;
    sws_uint_t                  i;

    (void) cmd;
    z = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_conn_zone_t));
    if (z == NULL) {
        return SWS_CONF_ERROR;
    }
    z->file = sws_conf_file(cf);
    z->line = sws_conf_line(cf);
    z->key = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                     SWS_HTTP_ESCAPE_NONE, &err);
    if (z->key == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in the key of \"limit_conn_zone\"", err);
        return SWS_CONF_ERROR;
    }
    if (!sws_conf_param(arg, "zone=", &v)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    colon = memchr(v.data, ':', v.len);
    size = SWS_ERROR;
    if (colon && colon != v.data) {
        s.data = colon + 1;
        s.len = v.len - (size_t) (colon - v.data) - 1;
        size = sws_parse_size(&s);
    }
    if (size == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid zone size \"%.*s\"",
                           (int) v.len, v.data);
        return SWS_CONF_ERROR;
    }
    if (size < 32768) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "zone \"%.*s\" is too small",
                           (int) v.len, v.data);
        return SWS_CONF_ERROR;
    }
    z->name.data = v.data;
    z->name.len = (size_t) (colon - v.data);
    all = mcf->zones.elts;
    for (i = 0; i < mcf->zones.nelts; i++) {
        if (sws_str_eq(&all[i]->name, &z->name)) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate zone \"%.*s\" (first in "
                               "%s:%lu)", (int) z->name.len, z->name.data, all[i]->file,
                               (unsigned long) all[i]->line);
            return SWS_CONF_ERROR;
        }
    }
    z->name.data = sws_pstrdup(sws_conf_pool(cf), &z->name);
    zname.data = buf;
    zname.len = (size_t) (sws_slprintf(buf, buf + sizeof(buf), "limit_conn:%.*s",
                                       (int) z->name.len, z->name.data) - buf);
    zname.data = sws_pstrdup(sws_conf_pool(cf), &zname);
    if (z->name.data == NULL || zname.data == NULL) {
        return SWS_CONF_ERROR;
    }
    z->shm = sws_shm_zone_add(cf, &zname, (size_t) size, sws_limit_conn_zone_init,
                              &sws_module);
    zp = sws_array_push(&mcf->zones);
    if (z->shm == NULL || zp == NULL) {
        return SWS_CONF_ERROR;
    }
    *zp = z;
    return SWS_CONF_OK;
}

static char *
sws_limit_conn(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_conn_loc_conf_t *lcf = conf;
    sws_limit_conn_t          *l, *all;
    sws_str_t                 *name = sws_conf_arg(cf, 1), *num = sws_conf_arg(cf, 2);
    sws_int_t                  n;
    sws_uint_t                 i;

    (void) cmd;
    n = sws_atoi(num->data, num->len);
    if (n <= 0 || n > 65535) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid number of connections \"%.*s\"",
                           (int) num->len, num->data);
        return SWS_CONF_ERROR;
    }
    if (lcf->limits == NULL) {
        lcf->limits = sws_palloc(sws_conf_pool(cf), sizeof(sws_array_t));
        if (lcf->limits == NULL
            || sws_array_init(lcf->limits, sws_conf_pool(cf), 2, sizeof(sws_limit_conn_t))
               != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
    }
    all = lcf->limits->elts;
    for (i = 0; i < lcf->limits->nelts; i++) {
        if (sws_str_eq(&all[i].zone_name, name)) {
            return "is duplicate";
        }
    }
    l = sws_array_push(lcf->limits);
    if (l == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(l, sizeof(*l));
    l->zone_name.data = sws_pstrdup(sws_conf_pool(cf), name);
    l->zone_name.len = name->len;
    l->conn = (uint64_t) n;
    l->file = sws_conf_file(cf);
    l->line = sws_conf_line(cf);
    return l->zone_name.data ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
sws_limit_conn_create_main_conf(sws_conf_t *cf)
{
    sws_limit_conn_main_conf_t *mcf;

    mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_conn_main_conf_t));
    if (mcf == NULL
        || sws_array_init(&mcf->zones, sws_conf_pool(cf), 4, sizeof(sws_limit_conn_zone_t *))
           != SWS_OK
        || sws_http_variable_add(cf, "limit_conn_status", sws_limit_conn_var_status, NULL)
           != SWS_OK)
    {
        return NULL;
    }
    return mcf;
}

static void *
sws_limit_conn_create_loc_conf(sws_conf_t *cf)
{
    sws_limit_conn_loc_conf_t *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_conn_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    lcf->status = SWS_UNSET;
    lcf->log_level = SWS_UNSET_UINT;
    lcf->dry_run = SWS_UNSET;
    /* (the main conf is known while parsing, not while merging) */
    lcf->mcf = sws_conf_http_main_conf(cf, &sws_module);
    return lcf;
}

static sws_int_t
sws_limit_conn_resolve(sws_conf_t *cf, sws_limit_conn_main_conf_t *mcf, sws_array_t *limits)
{
    sws_limit_conn_zone_t **zones = mcf->zones.elts;
    sws_limit_conn_t       *l;
    sws_uint_t              i, j;

    if (limits == NULL) {
        return SWS_OK;
    }
    l = limits->elts;
    for (i = 0; i < limits->nelts; i++) {
        for (j = 0; l[i].zone == NULL && j < mcf->zones.nelts; j++) {
            if (sws_str_eq(&zones[j]->name, &l[i].zone_name)) {
                l[i].zone = zones[j];
            }
        }
        if (l[i].zone == NULL) {
            sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0,
                          "unknown limit_conn_zone \"%.*s\" in %s:%lu",
                          (int) l[i].zone_name.len, l[i].zone_name.data, l[i].file,
                          (unsigned long) l[i].line);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static char *
sws_limit_conn_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_limit_conn_loc_conf_t  *prev = parent, *conf = child;
    sws_limit_conn_main_conf_t *mcf = conf->mcf;

    if (sws_limit_conn_resolve(cf, mcf, prev->limits) != SWS_OK
        || sws_limit_conn_resolve(cf, mcf, conf->limits) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    sws_conf_merge_ptr_value(conf->limits, prev->limits, NULL);
    sws_conf_merge_value(conf->status, prev->status, SWS_HTTP_SERVICE_UNAVAILABLE);
    sws_conf_merge_uint_value(conf->log_level, prev->log_level, SWS_LOG_ERR);
    sws_conf_merge_value(conf->dry_run, prev->dry_run, 0);
    return SWS_CONF_OK;
}

/* Only where limit_conn is written (here or above). */
static sws_uint_t
sws_limit_conn_active(const void *conf)
{
    const sws_limit_conn_loc_conf_t *lcf = conf;

    return lcf->limits != NULL && lcf->limits->nelts > 0;
}

/* Before the access checks, as nginx: "satisfy any" lets no one past it. */
static sws_int_t
sws_limit_conn_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_PREACCESS_PHASE, .order = SWS_HTTP_ORDER_LIMIT_CONN,
        .handler = sws_limit_conn_handler, .module = &sws_module,
        .active = sws_limit_conn_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
