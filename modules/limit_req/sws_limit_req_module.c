/*
 * The limit_req module: request rates per key (nginx's leaky bucket).
 *
 *   limit_req_zone KEY zone=NAME:SIZE rate=N r/s|r/m [sync];   (http)
 *   limit_req zone=NAME [burst=N] [nodelay | delay=N];         (http, server, location)
 *   limit_req_status CODE;  limit_req_log_level info|notice|warn|error;
 *   limit_req_dry_run on|off;
 *   $limit_req_status: PASSED, DELAYED, REJECTED, DELAYED_DRY_RUN, REJECTED_DRY_RUN
 *
 * Each key (a format: "$binary_remote_addr", "$server_name$uri" ...) has
 * a record in a slab zone shared by the workers and kept across reloads:
 * its excess (requests over the rate, in thousandths) and when it was last
 * seen. A request drains the excess by the time passed at the rate, then
 * adds one; above burst it is refused (503), above the delay threshold it
 * waits on a timer (sws_http_sleep) until the excess would be back at it.
 * Several limit_req of one level all apply: a request refused by one is
 * counted by none, a passed one by all, and waits for the longest delay.
 * When the zone is full, the keys seen least recently make room.
 */
#include <scalws/scalws.h>

#define SWS_LIMIT_REQ_PASSED     1
#define SWS_LIMIT_REQ_DELAYED    2
#define SWS_LIMIT_REQ_REJECTED   3
#define SWS_LIMIT_REQ_DELAYED_DRY_RUN   4
#define SWS_LIMIT_REQ_REJECTED_DRY_RUN  5

/* A key's record, in the zone. */
typedef struct {
    sws_slab_hash_node_t   hash;
    sws_slab_lru_node_t    lru;
    sws_msec_t             last;      /* monotonic ms (one clock for all workers) */
    uint64_t               excess;    /* thousandths of a request */
    u_char                 key[];
} sws_limit_req_node_t;

typedef struct {
    sws_slab_hash_t       *hash;
    sws_slab_lru_t         lru;
} sws_limit_req_shctx_t;

/* A limit_req_zone (configuration memory). */
typedef struct {
    sws_str_t              name;
    sws_http_format_t     *key;
    uint64_t               rate;      /* thousandths of a request per second */
    sws_shm_zone_t        *shm;
    const char            *file;
    sws_uint_t             line;
} sws_limit_req_zone_t;

/* A limit_req. */
typedef struct {
    sws_limit_req_zone_t  *zone;
    sws_str_t              zone_name;  /* until resolved */
    uint64_t               burst;      /* thousandths */
    uint64_t               delay;      /* thousandths: excess above it waits */
    const char            *file;
    sws_uint_t             line;
} sws_limit_req_t;

typedef struct {
    sws_array_t            zones;      /* sws_limit_req_zone_t * */
} sws_limit_req_main_conf_t;

typedef struct {
    sws_array_t           *limits;     /* sws_limit_req_t, NULL: inherit */
    sws_int_t              status;
    sws_uint_t             log_level;
    sws_int_t              dry_run;
    void                  *mcf;        /* the http block's: its zones */
} sws_limit_req_loc_conf_t;

typedef struct {
    sws_uint_t             status;     /* SWS_LIMIT_REQ_* */
    unsigned               waited:1;
} sws_limit_req_ctx_t;

static char *sws_limit_req_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_limit_req(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_limit_req_create_main_conf(sws_conf_t *cf);
static void *sws_limit_req_create_loc_conf(sws_conf_t *cf);
static char *sws_limit_req_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_limit_req_init(sws_conf_t *cf);

#define SWS_LIMIT_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_limit_req_commands[] = {
    { "limit_req_zone", SWS_HTTP_MAIN_CONF | SWS_CONF_2MORE, sws_limit_req_zone,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "limit_req", SWS_LIMIT_HTTP | SWS_CONF_TAKE123, sws_limit_req,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "limit_req_status", SWS_LIMIT_HTTP | SWS_CONF_TAKE1, sws_conf_set_status_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_req_loc_conf_t, status), NULL },
    { "limit_req_log_level", SWS_LIMIT_HTTP | SWS_CONF_TAKE1, sws_conf_set_log_level_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_req_loc_conf_t, log_level), NULL },
    { "limit_req_dry_run", SWS_LIMIT_HTTP | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_limit_req_loc_conf_t, dry_run), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "limit_req",
    .commands = sws_limit_req_commands,
    .create_main_conf = sws_limit_req_create_main_conf,
    .create_loc_conf = sws_limit_req_create_loc_conf,
    .merge_loc_conf = sws_limit_req_merge_loc_conf,
    .postconfiguration = sws_limit_req_init,
};


/* ---- the shared records ---------------------------------------------- */

/* The excess key would have with this request (thousandths): a key not
 * seen yet (or forgotten) has none. If it is at most upto (-1: never),
 * the request is counted, the record created if need be (the least
 * recently seen make room when the zone is full); -1 when even an empty
 * zone cannot hold the key. */
static int64_t
sws_limit_req_excess(sws_limit_req_zone_t *z, const sws_str_t *key, int64_t upto)
{
    sws_slab_pool_t       *pool = z->shm->data;
    sws_limit_req_shctx_t *sh = sws_slab_data(pool);
    sws_slab_hash_node_t  *hn;
    sws_slab_lru_node_t   *old;
    sws_limit_req_node_t  *n, *gone;
    sws_msec_t             now = sws_current_msec(), ms;
    int64_t                excess = 0;
    uint64_t               drained;

    sws_slab_lock(pool);
    hn = sws_slab_hash_find(sh->hash, key->data, key->len);
    if (hn) {
        n = sws_slab_hash_entry(hn, sws_limit_req_node_t, hash);
        ms = now - n->last;
        if (ms < 0) {
            ms = 0;
        }
        /* drained at the rate since last time, plus this request (a key
         * unseen for long enough is drained whatever its excess) */
        if (__builtin_mul_overflow(z->rate, (uint64_t) ms, &drained)
            || drained / 1000 >= n->excess + 1000)
        {
            excess = 0;
        } else {
            excess = (int64_t) (n->excess + 1000 - drained / 1000);
        }
        if (excess <= upto) {
            n->excess = (uint64_t) excess;
            n->last = now;
            sws_slab_lru_touch(&sh->lru, &n->lru);
        }
    } else if (upto >= 0) {
        while ((n = sws_slab_alloc_locked(pool, sizeof(sws_limit_req_node_t) + key->len))
               == NULL && (old = sws_slab_lru_oldest(&sh->lru)) != NULL)
        {
            gone = sws_slab_lru_entry(old, sws_limit_req_node_t, lru);
            sws_slab_lru_remove(&sh->lru, old);
            sws_slab_hash_remove(sh->hash, &gone->hash);
            sws_slab_free_locked(pool, gone);
        }
        if (n == NULL) {
            excess = -1;
        } else {
            n->excess = 0;
            n->last = now;
            memcpy(n->key, key->data, key->len);
            sws_slab_hash_insert(sh->hash, &n->hash, n->key, key->len);
            sws_slab_lru_insert(&sh->lru, &n->lru);
        }
    }
    sws_slab_unlock(pool);
    return excess;
}


/* ---- the access phase ------------------------------------------------ */

static void
sws_limit_req_log(sws_http_request_t *r, sws_uint_t level, const char *what,
    sws_limit_req_t *l, int64_t excess, int dry)
{
    const sws_str_t *addr = sws_http_remote_addr(r);

    sws_log_error(level, sws_http_log(r), 0,
                  "%s requests%s, excess: %lld.%03lld by zone \"%.*s\", client: %.*s, "
                  "request: \"%.*s %.*s\"", what, dry ? ", dry run" : "",
                  (long long) (excess / 1000), (long long) (excess % 1000),
                  (int) l->zone->name.len, l->zone->name.data, (int) addr->len, addr->data,
                  (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                  (int) sws_http_unparsed_uri(r)->len, sws_http_unparsed_uri(r)->data);
}

static sws_int_t
sws_limit_req_handler(sws_http_request_t *r)
{
    sws_limit_req_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_limit_req_ctx_t      *ctx = sws_http_get_ctx(r, &sws_module);
    sws_limit_req_t          *l;
    sws_str_t                *keys;
    sws_uint_t                i;
    int64_t                   excess;
    sws_msec_t                delay = 0, d;
    sws_limit_req_t          *worst = NULL;
    int64_t                   worst_excess = 0, *excesses;
    int                       single;

    if (ctx && ctx->waited) {
        return SWS_DECLINED;      /* back from the delay */
    }
    if (lcf->limits == NULL || lcf->limits->nelts == 0 || ctx) {
        return SWS_DECLINED;
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_limit_req_ctx_t));
    keys = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) * lcf->limits->nelts);
    excesses = sws_palloc(sws_http_pool(r), sizeof(int64_t) * lcf->limits->nelts);
    if (ctx == NULL || keys == NULL || excesses == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    l = lcf->limits->elts;
    /* One limit: verdict and count in one look (one lock). Several: first
     * every verdict, counting nothing, as a request refused by one limit
     * must not use up the others. */
    single = lcf->limits->nelts == 1;

    for (i = 0; i < lcf->limits->nelts; i++) {
        keys[i].len = sws_http_format_len(l[i].zone->key, r);
        if (keys[i].len == 0 || keys[i].len > 65535) {
            keys[i].data = NULL;          /* no key: not limited by this one */
            continue;
        }
        keys[i].data = sws_pnalloc(sws_http_pool(r), keys[i].len);
        if (keys[i].data == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        (void) sws_http_format_render(l[i].zone->key, r, keys[i].data);
        excesses[i] = sws_limit_req_excess(l[i].zone, &keys[i],
                                           single ? (int64_t) l[i].burst : -1);
        if (excesses[i] > (int64_t) l[i].burst) {
            sws_limit_req_log(r, lcf->log_level, "limiting", &l[i], excesses[i],
                              lcf->dry_run);
            if (lcf->dry_run) {
                ctx->status = SWS_LIMIT_REQ_REJECTED_DRY_RUN;
                return SWS_DECLINED;
            }
            ctx->status = SWS_LIMIT_REQ_REJECTED;
            return lcf->status;
        }
    }

    /* Passed: counted by all, and delayed by the one furthest over. */
    for (i = 0; i < lcf->limits->nelts; i++) {
        if (keys[i].data == NULL) {
            continue;
        }
        excess = single ? excesses[i] : sws_limit_req_excess(l[i].zone, &keys[i], INT64_MAX);
        if (excess < 0) {
            sws_log_error(SWS_LOG_ALERT, sws_http_log(r), 0,
                          "limit_req zone \"%.*s\" cannot hold a key of %zu bytes",
                          (int) l[i].zone->name.len, l[i].zone->name.data, keys[i].len);
            continue;
        }
        if (excess > (int64_t) l[i].delay) {
            d = (sws_msec_t) (((uint64_t) excess - l[i].delay) * 1000 / l[i].zone->rate);
            if (d > delay) {
                delay = d;
                worst = &l[i];
                worst_excess = excess;
            }
        }
    }
    if (delay == 0) {
        ctx->status = SWS_LIMIT_REQ_PASSED;
        return SWS_DECLINED;
    }
    /* delays are logged one level less severe, as nginx does */
    sws_limit_req_log(r, lcf->log_level == SWS_LOG_INFO ? SWS_LOG_INFO : lcf->log_level + 1,
                      "delaying", worst, worst_excess, lcf->dry_run);
    if (lcf->dry_run) {
        ctx->status = SWS_LIMIT_REQ_DELAYED_DRY_RUN;
        return SWS_DECLINED;
    }
    ctx->status = SWS_LIMIT_REQ_DELAYED;
    ctx->waited = 1;
    if (sws_http_sleep(r, delay) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_AGAIN;
}

static void
sws_limit_req_var_status(sws_http_request_t *r, void *data, sws_str_t *v)
{
    static const char *const  names[] = { NULL, "PASSED", "DELAYED", "REJECTED",
                                          "DELAYED_DRY_RUN", "REJECTED_DRY_RUN" };
    sws_limit_req_ctx_t      *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    if (ctx == NULL || ctx->status == 0) {
        return;                           /* empty */
    }
    v->data = (u_char *) names[ctx->status];
    v->len = strlen(names[ctx->status]);
}


/* ---- the zone -------------------------------------------------------- */

static sws_int_t
sws_limit_req_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_slab_pool_t       *pool = sws_slab_init(zone, old_data);
    sws_limit_req_shctx_t *sh;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool) != NULL) {
        return SWS_OK;            /* a reload kept the zone: the counts go on */
    }
    sws_slab_lock(pool);
    sh = sws_slab_calloc_locked(pool, sizeof(sws_limit_req_shctx_t));
    if (sh) {
        sh->hash = sws_slab_hash_create_locked(pool, (sws_uint_t) (zone->size / 256));
        sws_slab_lru_init(&sh->lru);
        sws_slab_set_data(pool, sh->hash ? sh : NULL);
    }
    sws_slab_unlock(pool);
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}


/* ---- configuration --------------------------------------------------- */

/* "NAME:SIZE" of zone= (at least 32 KiB, as nginx's eight pages). */
static char *
sws_limit_zone_param(sws_conf_t *cf, const sws_str_t *v, sws_str_t *name, size_t *size)
{
    u_char    *colon = memchr(v->data, ':', v->len);
    sws_str_t  s;
    ssize_t    n;

    if (colon == NULL || colon == v->data) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid zone size \"%.*s\"",
                           (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }
    name->data = v->data;
    name->len = (size_t) (colon - v->data);
    s.data = colon + 1;
    s.len = v->len - name->len - 1;
    n = sws_parse_size(&s);
    if (n == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid zone size \"%.*s\"",
                           (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }
    if (n < 32768) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "zone \"%.*s\" is too small",
                           (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }
    *size = (size_t) n;
    return SWS_CONF_OK;
}

static char *
sws_limit_req_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_req_main_conf_t *mcf = conf;
    sws_limit_req_zone_t      *z, **zp, **all;
    sws_str_t                 *arg, v, zname;
    sws_uint_t                 i, n = sws_conf_nargs(cf);
    size_t                     size = 0;
    const char                *err = NULL;
    char                      *rv;
    u_char                    *p, buf[128];
    sws_int_t                  num;

    (void) cmd;
    z = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_req_zone_t));
    if (z == NULL) {
        return SWS_CONF_ERROR;
    }
    z->file = sws_conf_file(cf);
    z->line = sws_conf_line(cf);
    z->key = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                     SWS_HTTP_ESCAPE_NONE, &err);
    if (z->key == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in the key of \"limit_req_zone\"", err);
        return SWS_CONF_ERROR;
    }
    for (i = 2; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "zone=", &v)) {
            rv = sws_limit_zone_param(cf, &v, &z->name, &size);
            if (rv != SWS_CONF_OK) {
                return rv;
            }
        } else if (sws_conf_param(arg, "rate=", &v)) {
            for (p = v.data; p < v.data + v.len && *p >= '0' && *p <= '9'; p++) { }
            num = sws_atoi(v.data, (size_t) (p - v.data));
            if (num <= 0 || v.data + v.len - p != 3
                || (memcmp(p, "r/s", 3) != 0 && memcmp(p, "r/m", 3) != 0))
            {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid rate \"%.*s\"",
                                   (int) v.len, v.data);
                return SWS_CONF_ERROR;
            }
            z->rate = (uint64_t) num * 1000 / (p[2] == 'm' ? 60 : 1);
            if (z->rate == 0) {
                z->rate = 1;
            }
        } else if (sws_str_eq_cstr(arg, "sync")) {
            /* nginx Plus: state shared across a cluster. One server here. */
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    if (z->name.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req_zone\" must have \"zone\" "
                           "parameter");
        return SWS_CONF_ERROR;
    }
    if (z->rate == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req_zone\" must have \"rate\" "
                           "parameter");
        return SWS_CONF_ERROR;
    }
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
    /* The zones of limit_req and limit_conn have names of their own. */
    zname.data = buf;
    zname.len = (size_t) (sws_slprintf(buf, buf + sizeof(buf), "limit_req:%.*s",
                                       (int) z->name.len, z->name.data) - buf);
    zname.data = sws_pstrdup(sws_conf_pool(cf), &zname);
    if (z->name.data == NULL || zname.data == NULL) {
        return SWS_CONF_ERROR;
    }
    z->shm = sws_shm_zone_add(cf, &zname, size, sws_limit_req_zone_init, &sws_module);
    zp = sws_array_push(&mcf->zones);
    if (z->shm == NULL || zp == NULL) {
        return SWS_CONF_ERROR;
    }
    *zp = z;
    return SWS_CONF_OK;
}

/* A number of requests (burst=, delay=), in thousandths. */
static int
sws_limit_req_count(const sws_str_t *v, uint64_t *out)
{
    sws_int_t  n = sws_atoi(v->data, v->len);

    if (n < 0) {
        return -1;
    }
    *out = (uint64_t) n * 1000;
    return 0;
}

static char *
sws_limit_req(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_req_loc_conf_t *lcf = conf;
    sws_limit_req_t          *l, *all;
    sws_str_t                *arg, v;
    sws_uint_t                i, n = sws_conf_nargs(cf);
    int                       nodelay = 0, delay_set = 0;

    (void) cmd;
    if (lcf->limits == NULL) {
        lcf->limits = sws_palloc(sws_conf_pool(cf), sizeof(sws_array_t));
        if (lcf->limits == NULL
            || sws_array_init(lcf->limits, sws_conf_pool(cf), 2, sizeof(sws_limit_req_t))
               != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
    }
    l = sws_array_push(lcf->limits);
    if (l == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(l, sizeof(*l));
    l->file = sws_conf_file(cf);
    l->line = sws_conf_line(cf);
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "zone=", &v)) {
            l->zone_name.data = sws_pstrdup(sws_conf_pool(cf), &v);
            l->zone_name.len = v.len;
        } else if (sws_conf_param(arg, "burst=", &v)) {
            if (sws_limit_req_count(&v, &l->burst) != 0) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid burst value \"%.*s\"",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
        } else if (sws_conf_param(arg, "delay=", &v)) {
            if (sws_limit_req_count(&v, &l->delay) != 0) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid delay value \"%.*s\"",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            delay_set = 1;
        } else if (sws_str_eq_cstr(arg, "nodelay")) {
            nodelay = 1;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    if (l->zone_name.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req\" must have \"zone\" parameter");
        return SWS_CONF_ERROR;
    }
    if (nodelay && delay_set) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"nodelay\" and \"delay=\" exclude each "
                           "other");
        return SWS_CONF_ERROR;
    }
    if (nodelay) {
        l->delay = l->burst;      /* everything within the burst goes at once */
    }
    all = lcf->limits->elts;
    for (i = 0; i + 1 < lcf->limits->nelts; i++) {
        if (sws_str_eq(&all[i].zone_name, &l->zone_name)) {
            return "is duplicate";     /* nginx: one limit per zone and level */
        }
    }
    return SWS_CONF_OK;
}

static void *
sws_limit_req_create_main_conf(sws_conf_t *cf)
{
    sws_limit_req_main_conf_t *mcf;

    mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_req_main_conf_t));
    if (mcf == NULL
        || sws_array_init(&mcf->zones, sws_conf_pool(cf), 4, sizeof(sws_limit_req_zone_t *))
           != SWS_OK
        || sws_http_variable_add(cf, "limit_req_status", sws_limit_req_var_status, NULL)
           != SWS_OK)
    {
        return NULL;
    }
    return mcf;
}

static void *
sws_limit_req_create_loc_conf(sws_conf_t *cf)
{
    sws_limit_req_loc_conf_t *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_req_loc_conf_t));
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
sws_limit_req_resolve(sws_conf_t *cf, sws_limit_req_main_conf_t *mcf, sws_array_t *limits)
{
    sws_limit_req_zone_t **zones = mcf->zones.elts;
    sws_limit_req_t       *l;
    sws_uint_t             i, j;

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
                          "unknown limit_req_zone \"%.*s\" in %s:%lu",
                          (int) l[i].zone_name.len, l[i].zone_name.data, l[i].file,
                          (unsigned long) l[i].line);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static char *
sws_limit_req_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_limit_req_loc_conf_t  *prev = parent, *conf = child;
    sws_limit_req_main_conf_t *mcf = conf->mcf;

    /* The limits name their zones, declared anywhere in http (the http
     * level is only ever a parent). */
    if (sws_limit_req_resolve(cf, mcf, prev->limits) != SWS_OK
        || sws_limit_req_resolve(cf, mcf, conf->limits) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    sws_conf_merge_ptr_value(conf->limits, prev->limits, NULL);
    sws_conf_merge_value(conf->status, prev->status, SWS_HTTP_SERVICE_UNAVAILABLE);
    sws_conf_merge_uint_value(conf->log_level, prev->log_level, SWS_LOG_ERR);
    sws_conf_merge_value(conf->dry_run, prev->dry_run, 0);
    return SWS_CONF_OK;
}

/* Only where limit_req is written (here or above). */
static sws_uint_t
sws_limit_req_active(const void *conf)
{
    const sws_limit_req_loc_conf_t *lcf = conf;

    return lcf->limits != NULL && lcf->limits->nelts > 0;
}

/* Before the access checks, as nginx: "satisfy any" lets no one past it. */
static sws_int_t
sws_limit_req_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_PREACCESS_PHASE, .order = SWS_HTTP_ORDER_LIMIT_REQ,
        .handler = sws_limit_req_handler, .module = &sws_module,
        .active = sws_limit_req_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
