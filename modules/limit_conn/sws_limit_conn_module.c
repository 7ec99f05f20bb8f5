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

/* The zone's outcome counters (sws_keyed_zone_counters): a request is
 * counted once by each zone that judged it, as that zone's verdict. */
static const char *const  sws_limit_conn_counter_names[] = {
    "passed", "rejected", "rejected_dry_run", NULL
};

/* A key's record, in the zone (sws_keyed_zone.h keeps the key). */
typedef struct {
    uint64_t               count;
} sws_limit_conn_node_t;

/* A limit_conn_zone (configuration memory), the keyed zone's data. */
typedef struct {
    sws_keyed_zone_t      *zone;
    sws_http_format_t     *key;
} sws_limit_conn_zone_t;

typedef struct {
    sws_keyed_zone_ref_t   ref;        /* first: its zone, by name until merged */
    uint64_t               conn;
} sws_limit_conn_t;

/* The location conf: its limits (sws_limit_conn_t), status, log level, dry run. */
typedef sws_keyed_zone_limits_t  sws_limit_conn_loc_conf_t;

typedef struct {
    sws_uint_t             status;     /* SWS_LIMIT_CONN_* */
} sws_limit_conn_ctx_t;

/* What a request holds, given back by its pool's cleanup. */
typedef struct {
    sws_keyed_zone_t      *zone;
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

static const sws_keyed_zone_type_t  sws_limit_conn_zone_type = {
    .name = "limit_conn",
    .directive = "limit_conn_zone",
    .tag = &sws_module,
    .record_size = sizeof(sws_limit_conn_node_t),
    .evict = 0,                        /* a full zone refuses new keys */
    .counters = sws_limit_conn_counter_names,
};


/* ---- the shared counts ----------------------------------------------- */

static void
sws_limit_conn_release(void *data)
{
    sws_limit_conn_held_t  *held = data;

    sws_keyed_zone_lock(held->zone);
    if (--held->node->count == 0) {
        sws_keyed_zone_delete(held->zone, held->node);
    }
    sws_keyed_zone_unlock(held->zone);
}

/* One more request of key in z, unless it has max already: the record
 * (counted), NULL over the limit (*full: the zone had no room). */
static sws_limit_conn_node_t *
sws_limit_conn_take(sws_keyed_zone_t *zone, const sws_str_t *key, uint64_t max, int *full)
{
    sws_limit_conn_node_t  *n;

    *full = 0;
    sws_keyed_zone_lock(zone);
    n = sws_keyed_zone_lookup(zone, key->data, key->len);
    if (n) {
        if (n->count >= max) {
            n = NULL;
        } else {
            n->count++;
        }
    } else {
        n = sws_keyed_zone_insert(zone, key->data, key->len);
        if (n == NULL) {
            *full = 1;
        } else {
            n->count = 1;
        }
    }
    sws_keyed_zone_unlock(zone);
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
    sws_limit_conn_zone_t     *z;
    sws_str_t                  key;
    sws_uint_t                 i;
    int                        full;
    u_char                     buf[255];

    if (lcf->uses == NULL || lcf->uses->nelts == 0
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
    l = lcf->uses->elts;

    for (i = 0; i < lcf->uses->nelts; i++) {
        z = l[i].ref.data;
        if (sws_http_format_string(z->key, r, NULL, 0, buf, sizeof(buf), &key) != SWS_OK
            || key.len == 0)
        {
            continue;                 /* no key (or an unlikely long one): not limited */
        }
        held = sws_palloc(sws_http_pool(r), sizeof(sws_limit_conn_held_t));
        if (held == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        n = sws_limit_conn_take(z->zone, &key, l[i].conn, &full);
        if (n == NULL) {
            addr = sws_http_remote_addr(r);
            sws_log_error(lcf->log_level, sws_http_log(r), 0,
                          "%s%s by zone \"%.*s\", client: %.*s, request: \"%.*s %.*s\"",
                          full ? "limit_conn zone is full: limiting connections"
                               : "limiting connections",
                          lcf->dry_run ? ", dry run" : "",
                          (int) l[i].ref.name.len, l[i].ref.name.data,
                          (int) addr->len, addr->data,
                          (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                          (int) sws_http_unparsed_uri(r)->len,
                          sws_http_unparsed_uri(r)->data);
            if (lcf->dry_run) {
                ctx->status = SWS_LIMIT_CONN_REJECTED_DRY_RUN;
                sws_keyed_zone_counters(z->zone)[SWS_LIMIT_CONN_REJECTED_DRY_RUN - 1]++;
                continue;
            }
            sws_keyed_zone_counters(z->zone)[SWS_LIMIT_CONN_REJECTED - 1]++;
            /* what was taken by the limits before goes with the pool */
            ctx->status = SWS_LIMIT_CONN_REJECTED;
            return lcf->status;
        }
        sws_keyed_zone_counters(z->zone)[SWS_LIMIT_CONN_PASSED - 1]++;
        held->zone = z->zone;
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

static char *
sws_limit_conn_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_conn_zone_t      *z;
    sws_str_t                  *arg = sws_conf_arg(cf, 2), v, name;
    const char                 *err = NULL;
    size_t                      size;

    (void) cmd;
    (void) conf;
    z = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_conn_zone_t));
    if (z == NULL) {
        return SWS_CONF_ERROR;
    }
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
    if (sws_keyed_zone_parse(cf, &v, &name, &size) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    z->zone = sws_keyed_zone_add(cf, &sws_limit_conn_zone_type, &name, size,
                                 sws_conf_arg(cf, 1), z);
    return z->zone ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static char *
sws_limit_conn(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_conn_loc_conf_t *lcf = conf;
    sws_limit_conn_t          *l;
    sws_str_t                 *name = sws_conf_arg(cf, 1), *num = sws_conf_arg(cf, 2);
    sws_int_t                  n;
    char                      *err;

    (void) cmd;
    n = sws_atoi(num->data, num->len);
    if (n <= 0 || n > 65535) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid number of connections \"%.*s\"",
                           (int) num->len, num->data);
        return SWS_CONF_ERROR;
    }
    l = sws_keyed_zone_limits_add(cf, lcf, sizeof(sws_limit_conn_t), name, &err);
    if (l == NULL) {
        return err;
    }
    l->conn = (uint64_t) n;
    return SWS_CONF_OK;
}

static void *
sws_limit_conn_create_main_conf(sws_conf_t *cf)
{
    static int  marker;      /* no main conf: the zones are the core's */

    if (sws_http_variable_add(cf, "limit_conn_status", sws_limit_conn_var_status, NULL)
        != SWS_OK)
    {
        return NULL;
    }
    return &marker;
}

static void *
sws_limit_conn_create_loc_conf(sws_conf_t *cf)
{
    return sws_keyed_zone_limits_create(cf);
}

static char *
sws_limit_conn_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    return sws_keyed_zone_limits_merge(cf, &sws_limit_conn_zone_type, parent, child);
}

/* Only where limit_conn is written (here or above). */
static sws_uint_t
sws_limit_conn_active(const void *conf)
{
    const sws_limit_conn_loc_conf_t *lcf = conf;

    return lcf->uses != NULL && lcf->uses->nelts > 0;
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
