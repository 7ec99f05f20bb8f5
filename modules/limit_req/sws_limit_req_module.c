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

/* The zone's outcome counters (sws_keyed_zone_counters): a request is
 * counted once by each zone that judged it, as that zone's verdict. */
static const char *const  sws_limit_req_counter_names[] = {
    "passed", "delayed", "rejected", "delayed_dry_run", "rejected_dry_run", NULL
};

#define sws_limit_req_count_outcome(z, status) \
    sws_keyed_zone_counters((z)->zone)[(status) - 1]++

/* A key's record, in the zone (sws_keyed_zone.h keeps the key). */
typedef struct {
    sws_msec_t             last;      /* monotonic ms (one clock for all workers) */
    uint64_t               excess;    /* thousandths of a request */
} sws_limit_req_node_t;

/* A limit_req_zone (configuration memory), the keyed zone's data. */
typedef struct {
    sws_keyed_zone_t      *zone;
    sws_http_format_t     *key;
    uint64_t               rate;      /* thousandths of a request per second */
} sws_limit_req_zone_t;

/* A limit_req. */
typedef struct {
    sws_keyed_zone_ref_t   ref;        /* first: its zone, by name until merged */
    uint64_t               burst;      /* thousandths */
    uint64_t               delay;      /* thousandths: excess above it waits */
} sws_limit_req_t;

/* The location conf: its limits (sws_limit_req_t), status, log level, dry run. */
typedef sws_keyed_zone_limits_t  sws_limit_req_loc_conf_t;

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

static const sws_keyed_zone_type_t  sws_limit_req_zone_type = {
    .name = "limit_req",
    .directive = "limit_req_zone",
    .tag = &sws_module,
    .record_size = sizeof(sws_limit_req_node_t),
    .evict = 1,                        /* the keys seen least recently make room */
    .counters = sws_limit_req_counter_names,
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
    sws_limit_req_node_t  *n;
    sws_msec_t             now = sws_current_msec(), ms;
    int64_t                excess = 0;
    uint64_t               drained;

    sws_keyed_zone_lock(z->zone);
    n = sws_keyed_zone_lookup(z->zone, key->data, key->len);
    if (n) {
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
            sws_keyed_zone_touch(z->zone, n);
        }
    } else if (upto >= 0) {
        n = sws_keyed_zone_insert(z->zone, key->data, key->len);
        if (n == NULL) {
            excess = -1;
        } else {
            n->last = now;
        }
    }
    sws_keyed_zone_unlock(z->zone);
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
                  (int) l->ref.name.len, l->ref.name.data, (int) addr->len, addr->data,
                  (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                  (int) sws_http_unparsed_uri(r)->len, sws_http_unparsed_uri(r)->data);
}

static sws_int_t
sws_limit_req_handler(sws_http_request_t *r)
{
    sws_limit_req_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_limit_req_ctx_t      *ctx = sws_http_get_ctx(r, &sws_module);
    sws_limit_req_t          *l;
    sws_limit_req_zone_t     *z;
    sws_str_t                *keys;
    sws_uint_t                i;
    int64_t                   excess;
    sws_msec_t                delay = 0, d;
    sws_limit_req_t          *worst = NULL;
    int64_t                   worst_excess = 0, *excesses;
    int                       single, keyed = 0;

    if (ctx && ctx->waited) {
        return SWS_DECLINED;      /* back from the delay */
    }
    if (lcf->uses == NULL || lcf->uses->nelts == 0 || ctx) {
        return SWS_DECLINED;
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_limit_req_ctx_t));
    keys = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) * lcf->uses->nelts);
    excesses = sws_palloc(sws_http_pool(r), sizeof(int64_t) * lcf->uses->nelts);
    if (ctx == NULL || keys == NULL || excesses == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    l = lcf->uses->elts;
    /* One limit: verdict and count in one look (one lock). Several: first
     * every verdict, counting nothing, as a request refused by one limit
     * must not use up the others. */
    single = lcf->uses->nelts == 1;

    for (i = 0; i < lcf->uses->nelts; i++) {
        z = l[i].ref.data;
        if (sws_http_format_string(z->key, r, sws_http_pool(r), 0, NULL, 0, &keys[i])
            != SWS_OK)
        {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (keys[i].len == 0 || keys[i].len > 65535) {
            keys[i].data = NULL;          /* no key: not limited by this one */
            continue;
        }
        keyed = 1;
        excesses[i] = sws_limit_req_excess(z, &keys[i], single ? (int64_t) l[i].burst : -1);
        if (excesses[i] > (int64_t) l[i].burst) {
            sws_limit_req_log(r, lcf->log_level, "limiting", &l[i], excesses[i],
                              lcf->dry_run);
            ctx->status = lcf->dry_run ? SWS_LIMIT_REQ_REJECTED_DRY_RUN
                                       : SWS_LIMIT_REQ_REJECTED;
            sws_limit_req_count_outcome(z, ctx->status);
            return lcf->dry_run ? SWS_DECLINED : lcf->status;
        }
    }

    /* Passed: counted by all, and delayed by the one furthest over. */
    for (i = 0; i < lcf->uses->nelts; i++) {
        if (keys[i].data == NULL) {
            continue;
        }
        z = l[i].ref.data;
        excess = single ? excesses[i] : sws_limit_req_excess(z, &keys[i], INT64_MAX);
        if (excess < 0) {
            sws_log_error(SWS_LOG_ALERT, sws_http_log(r), 0,
                          "limit_req zone \"%.*s\" cannot hold a key of %zu bytes",
                          (int) l[i].ref.name.len, l[i].ref.name.data, keys[i].len);
            continue;
        }
        if (excess <= (int64_t) l[i].delay) {
            sws_limit_req_count_outcome(z, SWS_LIMIT_REQ_PASSED);
        } else {
            sws_limit_req_count_outcome(z, lcf->dry_run ? SWS_LIMIT_REQ_DELAYED_DRY_RUN
                                                        : SWS_LIMIT_REQ_DELAYED);
            d = (sws_msec_t) (((uint64_t) excess - l[i].delay) * 1000 / z->rate);
            if (d > delay) {
                delay = d;
                worst = &l[i];
                worst_excess = excess;
            }
        }
    }
    if (delay == 0) {
        /* no limit had a key: not limited at all, $limit_req_status stays
         * empty (as nginx's) */
        ctx->status = keyed ? SWS_LIMIT_REQ_PASSED : 0;
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


/* ---- configuration --------------------------------------------------- */

static char *
sws_limit_req_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_limit_req_zone_t      *z;
    sws_str_t                 *arg, v, name = { 0, NULL };
    sws_uint_t                 i, n = sws_conf_nargs(cf);
    size_t                     size = 0;
    const char                *err = NULL;
    u_char                    *p;
    sws_int_t                  num;

    (void) cmd;
    (void) conf;
    z = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_limit_req_zone_t));
    if (z == NULL) {
        return SWS_CONF_ERROR;
    }
    z->key = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                     SWS_HTTP_ESCAPE_NONE, &err);
    if (z->key == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in the key of \"limit_req_zone\"", err);
        return SWS_CONF_ERROR;
    }
    for (i = 2; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "zone=", &v)) {
            if (sws_keyed_zone_parse(cf, &v, &name, &size) != SWS_OK) {
                return SWS_CONF_ERROR;
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
    if (name.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req_zone\" must have \"zone\" "
                           "parameter");
        return SWS_CONF_ERROR;
    }
    if (z->rate == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req_zone\" must have \"rate\" "
                           "parameter");
        return SWS_CONF_ERROR;
    }
    z->zone = sws_keyed_zone_add(cf, &sws_limit_req_zone_type, &name, size,
                                 sws_conf_arg(cf, 1), z);
    return z->zone ? SWS_CONF_OK : SWS_CONF_ERROR;
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
    sws_limit_req_t           lim, *l;
    sws_str_t                *arg, v, zone = { 0, NULL };
    sws_uint_t                i, n = sws_conf_nargs(cf);
    int                       nodelay = 0, delay_set = 0;
    char                     *err;

    (void) cmd;
    sws_memzero(&lim, sizeof(lim));
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "zone=", &v)) {
            zone = v;
        } else if (sws_conf_param(arg, "burst=", &v)) {
            if (sws_limit_req_count(&v, &lim.burst) != 0) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid burst value \"%.*s\"",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
        } else if (sws_conf_param(arg, "delay=", &v)) {
            if (sws_limit_req_count(&v, &lim.delay) != 0) {
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
    if (zone.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"limit_req\" must have \"zone\" parameter");
        return SWS_CONF_ERROR;
    }
    if (nodelay && delay_set) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"nodelay\" and \"delay=\" exclude each "
                           "other");
        return SWS_CONF_ERROR;
    }
    if (nodelay) {
        lim.delay = lim.burst;    /* everything within the burst goes at once */
    }
    l = sws_keyed_zone_limits_add(cf, lcf, sizeof(sws_limit_req_t), &zone, &err);
    if (l == NULL) {
        return err;
    }
    l->burst = lim.burst;
    l->delay = lim.delay;
    return SWS_CONF_OK;
}

static void *
sws_limit_req_create_main_conf(sws_conf_t *cf)
{
    static int  marker;      /* no main conf: the zones are the core's */

    if (sws_http_variable_add(cf, "limit_req_status", sws_limit_req_var_status, NULL)
        != SWS_OK)
    {
        return NULL;
    }
    return &marker;
}

static void *
sws_limit_req_create_loc_conf(sws_conf_t *cf)
{
    return sws_keyed_zone_limits_create(cf);
}

static char *
sws_limit_req_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    return sws_keyed_zone_limits_merge(cf, &sws_limit_req_zone_type, parent, child);
}

/* Only where limit_req is written (here or above). */
static sws_uint_t
sws_limit_req_active(const void *conf)
{
    const sws_limit_req_loc_conf_t *lcf = conf;

    return lcf->uses != NULL && lcf->uses->nelts > 0;
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
