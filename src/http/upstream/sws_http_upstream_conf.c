/*
 * The "http_upstream" module: upstream { } blocks, the registry of every
 * upstream a configuration names (blocks and the implicit ones of
 * "proxy_pass http://host:port"), resolving their servers at the end of
 * http { } (sws_http_upstream_resolve.c), and the per-worker set-up.
 *
 *   upstream NAME {
 *       server ADDR [weight=N] [max_fails=N] [fail_timeout=T] [max_conns=N] [backup] [down];
 *       keepalive N; keepalive_timeout T; keepalive_requests N;
 *       queue N [timeout=T];
 *       least_conn; | hash KEY [consistent]; | ip_hash; | random [two [least_conn]];
 *       health_check [interval=T] [uri=PATH] [fails=N] [passes=N] [timeout=T];
 *   }
 */
#include "sws_http_upstream.h"

#define SWS_UPS_DEFAULT_KEEPALIVE  32

static void *sws_ups_create_main_conf(sws_conf_t *cf);
static char *sws_ups_init_main_conf(sws_conf_t *cf, void *conf);
static sws_int_t sws_ups_init_worker(sws_cycle_t *cycle);
static char *sws_ups_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_server(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_keepalive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_queue(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_method(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_health_check(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_ups_dynamic(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static sws_int_t sws_ups_init_master(sws_cycle_t *cycle);
static sws_int_t sws_ups_postconfiguration(sws_conf_t *cf);

#define UPS(args)  (SWS_HTTP_UPS_CONF | (args))

static const sws_command_t sws_ups_commands[] = {
    { "upstream", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE1, sws_ups_block,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "server", UPS(SWS_CONF_1MORE), sws_ups_server, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "keepalive", UPS(SWS_CONF_TAKE1), sws_ups_keepalive, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "keepalive_timeout", UPS(SWS_CONF_TAKE1), sws_ups_keepalive, SWS_HTTP_SRV_CONF_OFFSET, 1,
      NULL },
    { "keepalive_requests", UPS(SWS_CONF_TAKE1), sws_ups_keepalive, SWS_HTTP_SRV_CONF_OFFSET, 2,
      NULL },
    { "queue", UPS(SWS_CONF_TAKE12), sws_ups_queue, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "least_conn", UPS(SWS_CONF_NOARGS), sws_ups_method, SWS_HTTP_SRV_CONF_OFFSET,
      SWS_UPS_LEAST_CONN, NULL },
    { "hash", UPS(SWS_CONF_TAKE12), sws_ups_method, SWS_HTTP_SRV_CONF_OFFSET, SWS_UPS_HASH,
      NULL },
    { "random", UPS(SWS_CONF_NOARGS | SWS_CONF_TAKE12), sws_ups_method,
      SWS_HTTP_SRV_CONF_OFFSET, SWS_UPS_RANDOM, NULL },
    { "ip_hash", UPS(SWS_CONF_NOARGS), sws_ups_method, SWS_HTTP_SRV_CONF_OFFSET,
      SWS_UPS_IP_HASH, NULL },
    { "health_check", UPS(SWS_CONF_ANY), sws_ups_health_check, SWS_HTTP_SRV_CONF_OFFSET, 0,
      NULL },
    { "zone", UPS(SWS_CONF_TAKE12), sws_ups_zone, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "dynamic_servers", UPS(SWS_CONF_TAKE1), sws_ups_dynamic, SWS_HTTP_SRV_CONF_OFFSET, 0,
      NULL },
    /* run-time DNS for per-request targets (sws_http_upstream_dns.c) */
    { "resolver", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_1MORE,
      sws_ups_resolver_directive, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_http_upstream_loc_conf_t, resolver), NULL },
    { "resolver_timeout", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
      | SWS_CONF_TAKE1, sws_conf_set_msec_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_http_upstream_loc_conf_t, resolver_timeout), NULL },
    /* the same in an upstream block, for its "server ... resolve" (nginx 1.27.3) */
    { "resolver", UPS(SWS_CONF_1MORE), sws_ups_resolver_directive, SWS_HTTP_SRV_CONF_OFFSET,
      offsetof(sws_http_upstream_srv_t, resolver), NULL },
    { "resolver_timeout", UPS(SWS_CONF_TAKE1), sws_conf_set_msec_slot, SWS_HTTP_SRV_CONF_OFFSET,
      offsetof(sws_http_upstream_srv_t, resolver_timeout), NULL },
    sws_null_command
};

sws_module_t sws_http_upstream_module = {
    SWS_MODULE_ABI, "http_upstream", NULL, sws_ups_commands,
    sws_ups_create_main_conf, sws_ups_init_main_conf,
    NULL, NULL, sws_ups_create_loc_conf, sws_ups_merge_loc_conf,
    sws_ups_postconfiguration, sws_ups_init_master, sws_ups_init_worker, NULL, { { NULL } }, 0, 0
};

/* The running configuration's upstreams, in a worker. */
static sws_http_upstream_main_conf_t *sws_ups_current;

sws_http_upstream_main_conf_t *
sws_http_upstream_main(void)
{
    return sws_ups_current;
}

/* The temporary directories of buffered responses (noted while merging,
 * when the http block's confs are not at hand): made by the master with
 * client_body_temp_path's. */
static sws_int_t
sws_ups_postconfiguration(sws_conf_t *cf)
{
    sws_http_upstream_main_conf_t  *umcf = sws_conf_http_main_conf(cf, &sws_http_upstream_module);
    sws_http_temp_path_t          **paths;
    sws_http_upstream_srv_t       **ups;
    sws_uint_t                      i;

    if (umcf == NULL) {
        return SWS_OK;
    }
    /* "server ... resolve": the http level's resolver (known here, with the
     * http block's confs at hand) */
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (ups[i]->resolving && sws_ups_resolving_conf(cf, ups[i]) != SWS_CONF_OK) {
            return SWS_ERROR;
        }
    }
    paths = umcf->temp_paths.elts;
    for (i = 0; i < umcf->temp_paths.nelts; i++) {
        if (sws_http_temp_path_register(cf, paths[i]) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static void *
sws_ups_create_main_conf(sws_conf_t *cf)
{
    sws_http_upstream_main_conf_t *umcf;

    umcf = sws_pcalloc(cf->pool, sizeof(sws_http_upstream_main_conf_t));
    if (umcf == NULL
        || sws_array_init(&umcf->upstreams, cf->pool, 4, sizeof(sws_http_upstream_srv_t *))
           != SWS_OK
        || sws_array_init(&umcf->temp_paths, cf->pool, 2, sizeof(sws_http_temp_path_t *))
           != SWS_OK
        || sws_array_init(&umcf->app_passes, cf->pool, 2, sizeof(sws_app_pass_t)) != SWS_OK)
    {
        return NULL;
    }
    sws_ups_set_configuring(umcf);
    return umcf;
}

/* The upstream named name, created if new (defined later, or implicit). */
sws_http_upstream_srv_t *
sws_ups_lookup(sws_conf_t *cf, const sws_str_t *name, sws_uint_t port, int create)
{
    sws_http_upstream_main_conf_t  *umcf;
    sws_http_upstream_srv_t       **ups, *us;
    sws_uint_t                      i;

    umcf = sws_conf_http_main_conf(cf, &sws_http_upstream_module);
    if (umcf == NULL) {
        return NULL;
    }
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (sws_str_caseeq(&ups[i]->name, name)) {
            return ups[i];
        }
    }
    if (!create) {
        return NULL;
    }
    us = sws_pcalloc(cf->pool, sizeof(sws_http_upstream_srv_t));
    ups = sws_array_push(&umcf->upstreams);
    if (us == NULL || ups == NULL
        || sws_array_init(&us->servers, cf->pool, 4, sizeof(sws_http_upstream_server_t))
           != SWS_OK)
    {
        return NULL;
    }
    us->name.data = sws_pstrdup(cf->pool, name);
    us->name.len = name->len;
    if (us->name.data == NULL) {
        return NULL;
    }
    us->port = port;
    us->file = sws_conf_file(cf);
    us->line = sws_conf_line(cf);
    us->keepalive = SWS_UNSET_UINT;
    us->resolver_timeout = SWS_UNSET_MSEC;
    us->keepalive_timeout = SWS_UNSET_MSEC;
    us->keepalive_requests = SWS_UNSET_UINT;
    us->unix_sock = name->len > 5 && sws_strncasecmp(name->data, (u_char *) "unix:", 5) == 0;
    *ups = us;
    return us;
}

sws_http_upstream_srv_t *
sws_http_upstream_app_group(sws_conf_t *cf, const sws_str_t *name, sws_uint_t room)
{
    sws_http_upstream_srv_t  *us = sws_ups_lookup(cf, name, 80, 1);

    if (us == NULL) {
        return NULL;
    }
    if (us->defined) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "application \"%.*s\": %s \"%.*s\" "
                           "is already defined in %s:%lu", (int) name->len, name->data,
                           us->app ? "an application" : "an upstream", (int) name->len,
                           name->data, us->file, (unsigned long) us->line);
        return NULL;
    }
    us->defined = 1;                 /* no implicit server of its name */
    us->app = 1;
    us->file = sws_conf_file(cf);
    us->line = sws_conf_line(cf);
    us->ndynamic = room;
    us->ndynamic_set = 1;
    return us;
}

/* ---- upstream { } ---- */

static char *
sws_ups_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_conf_ctx_t      *parent = cf->ctx, *ctx;
    sws_http_upstream_srv_t  *us;
    sws_str_t                *name = sws_conf_arg(cf, 1);
    char                     *rv;

    (void) cmd; (void) conf;

    if (name->len == 0 || memchr(name->data, ':', name->len) || memchr(name->data, '/',
                                                                        name->len))
    {
        return "needs a plain name (without \":\" or \"/\")";
    }
    us = sws_ups_lookup(cf, name, 80, 1);
    if (us == NULL) {
        return SWS_CONF_ERROR;
    }
    if (us->defined) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate upstream \"%.*s\"",
                           (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    us->defined = 1;
    us->file = sws_conf_file(cf);
    us->line = sws_conf_line(cf);

    /* The block's directives find us as their "server" level conf. */
    ctx = sws_pcalloc(cf->pool, sizeof(sws_http_conf_ctx_t));
    if (ctx == NULL) {
        return SWS_CONF_ERROR;
    }
    ctx->main_conf = parent->main_conf;
    ctx->srv_conf = sws_pcalloc(cf->pool, sizeof(void *) * cf->cycle->modules_n);
    if (ctx->srv_conf == NULL) {
        return SWS_CONF_ERROR;
    }
    ctx->srv_conf[sws_http_upstream_module.index] = us;
    ctx->loc_conf = ctx->srv_conf;

    rv = sws_conf_parse_block(cf, ctx, SWS_HTTP_UPS_CONF);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (us->servers.nelts == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no servers are inside upstream \"%.*s\"",
                           (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static sws_int_t
sws_ups_param_num(const sws_str_t *v, sws_int_t min)
{
    sws_int_t n = sws_atoi(v->data, v->len);
    return n < min ? SWS_ERROR : n;
}

static char *
sws_ups_server(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t     *us = conf;
    sws_http_upstream_server_t  *s;
    sws_str_t                   *arg, v;
    sws_uint_t                   i, n = sws_conf_nargs(cf);
    sws_int_t                    num;

    (void) cmd;

    s = sws_array_push(&us->servers);
    if (s == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(s, sizeof(*s));
    s->addr = *sws_conf_arg(cf, 1);
    s->weight = 1;
    s->max_fails = 1;
    s->fail_timeout = 10000;
    s->file = sws_conf_file(cf);
    s->line = sws_conf_line(cf);

    for (i = 2; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "weight=", &v)) {
            num = sws_ups_param_num(&v, 1);
            if (num == SWS_ERROR) {
                goto invalid;
            }
            s->weight = (sws_uint_t) num;
        } else if (sws_conf_param(arg, "max_fails=", &v)) {
            num = sws_ups_param_num(&v, 0);
            if (num == SWS_ERROR) {
                goto invalid;
            }
            s->max_fails = (sws_uint_t) num;
        } else if (sws_conf_param(arg, "max_conns=", &v)) {
            num = sws_ups_param_num(&v, 0);
            if (num == SWS_ERROR) {
                goto invalid;
            }
            s->max_conns = (sws_uint_t) num;
        } else if (sws_conf_param(arg, "fail_timeout=", &v)) {
            s->fail_timeout = sws_parse_time_ms(&v);
            if (s->fail_timeout == SWS_ERROR) {
                goto invalid;
            }
        } else if (sws_str_eq_cstr(arg, "backup")) {
            s->backup = 1;
        } else if (sws_str_eq_cstr(arg, "down")) {
            s->down = 1;
        } else if (sws_str_eq_cstr(arg, "resolve")) {
            s->resolve = 1;
        } else {
            goto invalid;
        }
    }
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

/* keepalive N (offset 0), keepalive_timeout T (1), keepalive_requests N (2) */
static char *
sws_ups_keepalive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;
    sws_str_t               *arg = sws_conf_arg(cf, 1);
    sws_int_t                n;
    sws_msec_t               ms;

    switch (cmd->offset) {
    case 0:
        if (us->keepalive != SWS_UNSET_UINT) {
            return "is duplicate";
        }
        n = sws_atoi(arg->data, arg->len);
        if (n < 0) {
            return "has an invalid value";
        }
        us->keepalive = (sws_uint_t) n;
        return SWS_CONF_OK;
    case 1:
        if (us->keepalive_timeout != SWS_UNSET_MSEC) {
            return "is duplicate";
        }
        ms = sws_parse_time_ms(arg);
        if (ms == SWS_ERROR) {
            return "has an invalid value";
        }
        us->keepalive_timeout = ms;
        return SWS_CONF_OK;
    default:
        if (us->keepalive_requests != SWS_UNSET_UINT) {
            return "is duplicate";
        }
        n = sws_atoi(arg->data, arg->len);
        if (n <= 0) {
            return "has an invalid value";
        }
        us->keepalive_requests = (sws_uint_t) n;
        return SWS_CONF_OK;
    }
}

/* queue N [timeout=T]: at most N requests of a worker wait while every
 * server is at its max_conns, each at most T (60s). */
static char *
sws_ups_queue(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;
    sws_str_t               *arg = sws_conf_arg(cf, 1), v;
    sws_int_t                n;
    sws_msec_t               ms = 60000;

    (void) cmd;
    if (us->queue_max) {
        return "is duplicate";
    }
    n = sws_atoi(arg->data, arg->len);
    if (n <= 0) {
        return "has an invalid value";
    }
    if (sws_conf_nargs(cf) == 3) {
        arg = sws_conf_arg(cf, 2);
        if (!sws_conf_param(arg, "timeout=", &v)
            || (ms = sws_parse_time_ms(&v)) == SWS_ERROR || ms == 0)
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    us->queue_max = (sws_uint_t) n;
    us->queue_timeout = ms;
    return SWS_CONF_OK;
}

/* least_conn | hash KEY [consistent] | ip_hash | random [two [least_conn]] */
static char *
sws_ups_method(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;
    sws_uint_t               n = sws_conf_nargs(cf);
    sws_str_t               *arg;
    const char              *err;

    if (us->method_set) {
        return "load balancing method redefined";
    }
    us->method_set = 1;
    us->method = cmd->offset;

    if (cmd->offset == SWS_UPS_HASH) {
        us->hash_key = sws_http_format_compile(cf->pool, sws_conf_arg(cf, 1),
                                               SWS_HTTP_ESCAPE_NONE, &err);
        if (us->hash_key == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        if (n == 3) {
            if (!sws_str_eq_cstr(sws_conf_arg(cf, 2), "consistent")) {
                arg = sws_conf_arg(cf, 2);
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            us->consistent = 1;
        }
        return SWS_CONF_OK;
    }
    if (cmd->offset == SWS_UPS_RANDOM && n > 1) {
        if (!sws_str_eq_cstr(sws_conf_arg(cf, 1), "two")
            || (n == 3 && !sws_str_eq_cstr(sws_conf_arg(cf, 2), "least_conn")))
        {
            return "takes \"two [least_conn]\"";
        }
        us->random_two = 1;      /* of two, the one with fewer connections */
    }
    return SWS_CONF_OK;
}

/* health_check [interval=T] [uri=PATH] [fails=N] [passes=N] [timeout=T] */
static char *
sws_ups_health_check(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;
    sws_uint_t               i, n = sws_conf_nargs(cf);
    sws_str_t               *arg, v;
    sws_int_t                num;

    (void) cmd;

    if (us->hc_interval) {
        return "is duplicate";
    }
    us->hc_interval = 5000;
    us->hc_fails = 1;
    us->hc_passes = 1;
    us->hc_timeout = SWS_UNSET_MSEC;
    sws_str_set(&us->hc_uri, "/");

    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "interval=", &v)) {
            us->hc_interval = sws_parse_time_ms(&v);
            if (us->hc_interval <= 0) {
                goto invalid;
            }
        } else if (sws_conf_param(arg, "timeout=", &v)) {
            us->hc_timeout = sws_parse_time_ms(&v);
            if (us->hc_timeout <= 0) {
                goto invalid;
            }
        } else if (sws_conf_param(arg, "uri=", &v)) {
            if (v.data[0] != '/') {
                goto invalid;
            }
            for (size_t k = 0; k < v.len; k++) {
                if (v.data[k] <= ' ' || v.data[k] == 0x7f) {
                    goto invalid;
                }
            }
            us->hc_uri = v;
        } else if (sws_conf_param(arg, "fails=", &v)) {
            num = sws_ups_param_num(&v, 1);
            if (num == SWS_ERROR) {
                goto invalid;
            }
            us->hc_fails = (sws_uint_t) num;
        } else if (sws_conf_param(arg, "passes=", &v)) {
            num = sws_ups_param_num(&v, 1);
            if (num == SWS_ERROR) {
                goto invalid;
            }
            us->hc_passes = (sws_uint_t) num;
        } else {
            goto invalid;
        }
    }
    if (us->hc_timeout == SWS_UNSET_MSEC) {
        us->hc_timeout = sws_min(us->hc_interval, 5000);
    }
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

/* zone NAME [SIZE]: nginx's; the state is always shared here. */
static char *
sws_ups_zone(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;

    (void) cf; (void) cmd;
    us->zone = 1;                    /* every group's state is shared anyway */
    return SWS_CONF_OK;
}

/* dynamic_servers N: room for N servers added at run time (0 .. 1024). */
static char *
sws_ups_dynamic(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_srv_t *us = conf;
    sws_str_t               *arg = sws_conf_arg(cf, 1);
    sws_int_t                n;

    (void) cmd;
    if (us->ndynamic_set) {
        return "is duplicate";
    }
    n = sws_atoi(arg->data, arg->len);
    if (n < 0 || n > 1024) {
        return "has an invalid value (0 .. 1024)";
    }
    us->ndynamic = (sws_uint_t) n;
    us->ndynamic_set = 1;
    return SWS_CONF_OK;
}

static char *
sws_ups_init_main_conf(sws_conf_t *cf, void *conf)
{
    sws_http_upstream_main_conf_t  *umcf = conf;
    sws_http_upstream_srv_t       **ups = umcf->upstreams.elts, *us;
    sws_uint_t                      i;
    char                           *rv;
    int                             runtime = 0;

    if (sws_app_check_passes(cf, umcf) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    umcf->npeers = 0;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        us = ups[i];
        rv = sws_ups_init_peers(cf, us);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
        sws_conf_merge_uint_value(us->keepalive, SWS_UNSET_UINT, SWS_UPS_DEFAULT_KEEPALIVE);
        sws_conf_merge_msec_value(us->keepalive_timeout, SWS_UNSET_MSEC, 60000);
        sws_conf_merge_uint_value(us->keepalive_requests, SWS_UNSET_UINT, 1000);
        if (sws_ups_balancer_init(cf, us) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        umcf->npeers += us->npeers;
        runtime |= us->resolving != NULL || us->app;     /* servers at run time only */
    }
    if ((umcf->npeers || runtime) && (sws_ups_zone_init(cf, umcf) != SWS_OK
                         || sws_ups_dyn_init(cf, umcf) != SWS_OK))
    {
        return SWS_CONF_ERROR;
    }
    /* A worker finds the upstreams of its configuration here (the slot of
     * an http module in the cycle's top-level confs is otherwise unused). */
    cf->cycle->conf_ctx[sws_http_upstream_module.index] = umcf;
    return SWS_CONF_OK;
}

/* The master may change server lists too (application processes it runs). */
static sws_int_t
sws_ups_init_master(sws_cycle_t *cycle)
{
    sws_ups_current = cycle->conf_ctx[sws_http_upstream_module.index];
    sws_ups_dyn_handles_update(sws_ups_current);
    return SWS_OK;
}

static sws_int_t
sws_ups_init_worker(sws_cycle_t *cycle)
{
    sws_http_upstream_main_conf_t  *umcf;
    sws_http_upstream_srv_t       **ups;
    sws_uint_t                      i;

    umcf = cycle->conf_ctx[sws_http_upstream_module.index];
    sws_ups_current = umcf;
    sws_ups_dyn_handles_update(umcf);
    if (umcf == NULL) {
        return SWS_OK;
    }
    umcf->log = cycle->log;          /* the error_log (not yet known at parse time) */
    sws_ups_stats_set_main(umcf);
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        sws_ups_balancer_init_worker(ups[i]);
        if (sws_ups_ka_init_worker(cycle, ups[i]) != SWS_OK
            || sws_ups_health_init_worker(cycle, ups[i]) != SWS_OK
            || (ups[i]->resolving && sws_ups_resolving_init_worker(cycle, ups[i]) != SWS_OK))
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
