/*
 * The auth_request module: nginx's ngx_http_auth_request_module.
 *
 *   auth_request URI | off;           http, server, location
 *   auth_request_set $VAR VALUE;      http, server, location (VALUE may
 *                                     hold variables)
 *
 * In the access phase (after allow/deny and auth_basic, so that "satisfy"
 * combines them as nginx does), a GET subrequest to URI, without the
 * client's body, decides: a 2xx lets the request through, a 401 or 403 is
 * the client's answer (a 401 with the subrequest's first WWW-Authenticate), and
 * anything else (a 3xx, a 404, a failed upstream's 502, a timeout's 504)
 * is a 500. The subrequest's response body is dropped. auth_request_set's
 * values are made in the subrequest when it has ended, whatever its
 * status, so that $upstream_http_NAME and $upstream_status are its
 * upstream's; the variable is the client request's from then on.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_int_t           index;     /* the variable */
    sws_http_format_t  *value;     /* evaluated in the subrequest */
} sws_auth_request_var_t;

typedef struct {
    sws_str_t           uri;       /* data NULL: unset; len 0: off */
    sws_array_t        *vars;      /* sws_auth_request_var_t, NULL: none */
} sws_auth_request_loc_conf_t;

typedef struct {
    unsigned            done:1;
    sws_uint_t          status;
} sws_auth_request_ctx_t;

static char *sws_auth_request(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_auth_request_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_auth_request_create_loc_conf(sws_conf_t *cf);
static char *sws_auth_request_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_auth_request_init(sws_conf_t *cf);

#define SWS_AUTH_REQUEST_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_auth_request_commands[] = {
    { "auth_request", SWS_AUTH_REQUEST_CTX | SWS_CONF_TAKE1, sws_auth_request,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "auth_request_set", SWS_AUTH_REQUEST_CTX | SWS_CONF_TAKE2, sws_auth_request_set,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "auth_request",
    .commands = sws_auth_request_commands,
    .create_loc_conf = sws_auth_request_create_loc_conf,
    .merge_loc_conf = sws_auth_request_merge_loc_conf,
    .postconfiguration = sws_auth_request_init,
};


/* ---- the check ------------------------------------------------------ */

/* The 401's challenge, from the subrequest to the client's response
 * (copied: the subrequest's memory goes after this). The first one only,
 * as nginx 1.22 passes it (1.23 passes them all). */
static sws_int_t
sws_auth_request_challenges(sws_http_request_t *r, sws_http_request_t *sr)
{
    static const sws_str_t    name = sws_string("WWW-Authenticate");
    const sws_array_t        *out = sws_http_headers_out(sr);
    const sws_http_header_t  *h = out->elts;
    sws_str_t                 value;
    sws_uint_t                i;

    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash == 0 || h[i].name.len != name.len
            || sws_strncasecmp(h[i].name.data, name.data, name.len) != 0)
        {
            continue;
        }
        value.len = h[i].value.len;
        value.data = sws_pnalloc(sws_http_pool(r), value.len ? value.len : 1);
        if (value.data == NULL) {
            return SWS_ERROR;
        }
        sws_memcpy(value.data, h[i].value.data, value.len);
        return sws_http_header_out_add(r, &name, &value) ? SWS_OK : SWS_ERROR;
    }
    return SWS_OK;
}

/* auth_request_set: each value made in sr, kept in r. */
static sws_int_t
sws_auth_request_set_vars(sws_http_request_t *r, sws_http_request_t *sr,
    sws_auth_request_loc_conf_t *lcf)
{
    sws_auth_request_var_t *v;
    sws_str_t               value;
    sws_uint_t              i;

    if (lcf->vars == NULL) {
        return SWS_OK;
    }
    v = lcf->vars->elts;
    for (i = 0; i < lcf->vars->nelts; i++) {
        if (sws_http_format_string(v[i].value, sr, sws_http_pool(r), 0, NULL, 0, &value)
            != SWS_OK
            || sws_http_variable_set(r, (sws_uint_t) v[i].index, &value) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* The subrequest has ended: its verdict, its variables, and the request
 * goes on from the same access handler. */
static void
sws_auth_request_done(sws_http_request_t *r, sws_http_request_t *sr, void *data)
{
    sws_auth_request_ctx_t      *ctx = data;
    sws_auth_request_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);

    ctx->done = 1;
    ctx->status = sws_http_status(sr);
    if (sws_auth_request_set_vars(r, sr, lcf) != SWS_OK
        || (ctx->status == SWS_HTTP_UNAUTHORIZED
            && sws_auth_request_challenges(r, sr) != SWS_OK))
    {
        ctx->status = 0;
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "auth request: no memory");
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    sws_http_run_phases(r);
}

static sws_int_t
sws_auth_request_handler(sws_http_request_t *r)
{
    sws_auth_request_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_auth_request_ctx_t      *ctx;
    sws_http_subrequest_conf_t   sc;

    if (lcf == NULL || lcf->uri.len == 0) {
        return SWS_DECLINED;
    }
    ctx = sws_http_get_ctx(r, &sws_module);
    if (ctx != NULL) {
        if (!ctx->done) {
            return SWS_AGAIN;                  /* the subrequest still runs */
        }
        if (ctx->status == SWS_HTTP_FORBIDDEN || ctx->status == SWS_HTTP_UNAUTHORIZED) {
            return (sws_int_t) ctx->status;
        }
        if (ctx->status >= 200 && ctx->status < 300) {
            return SWS_OK;
        }
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                      "auth request unexpected status: %u", (unsigned) ctx->status);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_auth_request_ctx_t));
    if (ctx == NULL) {
        return SWS_ERROR;
    }
    sws_memzero(&sc, sizeof(sc));
    sc.uri = lcf->uri;
    sc.method = SWS_HTTP_GET;
    sc.done = sws_auth_request_done;
    sc.data = ctx;
    if (sws_http_subrequest(r, &sc, NULL) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    return SWS_AGAIN;
}


/* ---- configuration -------------------------------------------------- */

/* auth_request URI | off; */
static char *
sws_auth_request(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_auth_request_loc_conf_t *lcf = conf;
    sws_str_t                   *arg = sws_conf_arg(cf, 1);

    (void) cmd;
    if (lcf->uri.data != NULL) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(arg, "off")) {
        lcf->uri.data = (u_char *) "";
        lcf->uri.len = 0;
        return SWS_CONF_OK;
    }
    /* taken as it is, as nginx does: a URI that no location matches is
     * a 404 of the subrequest, so a 500 */
    lcf->uri = *arg;
    return SWS_CONF_OK;
}

/* auth_request_set $VAR VALUE; */
static char *
sws_auth_request_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_auth_request_loc_conf_t *lcf = conf;
    sws_str_t                   *name = sws_conf_arg(cf, 1), *value = sws_conf_arg(cf, 2);
    sws_str_t                    var;
    sws_auth_request_var_t      *v;
    const char                  *err = NULL;

    (void) cmd;
    if (name->len < 2 || name->data[0] != '$') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid variable name \"%.*s\"",
                           (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    if (lcf->vars == NULL) {
        lcf->vars = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_auth_request_var_t));
        if (lcf->vars == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    v = sws_array_push(lcf->vars);
    if (v == NULL) {
        return SWS_CONF_ERROR;
    }
    var.data = name->data + 1;
    var.len = name->len - 1;
    v->index = sws_http_variable_writable(cf, &var);
    if (v->index == SWS_ERROR) {
        return SWS_CONF_ERROR;
    }
    v->value = sws_http_format_compile(sws_conf_pool(cf), value, SWS_HTTP_ESCAPE_NONE, &err);
    if (v->value == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"auth_request_set\" directive",
                           err ? err : "cannot compile the value");
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static void *
sws_auth_request_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_auth_request_loc_conf_t));
}

static char *
sws_auth_request_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_auth_request_loc_conf_t *prev = parent, *conf = child;

    (void) cf;
    if (conf->uri.data == NULL) {
        conf->uri = prev->uri;
    }
    if (conf->vars == NULL) {
        conf->vars = prev->vars;       /* nginx: the whole list, or none */
    }
    return SWS_CONF_OK;
}

/* Only where auth_request names a URI. */
static sws_uint_t
sws_auth_request_active(const void *conf)
{
    const sws_auth_request_loc_conf_t *lcf = conf;

    return lcf->uri.len != 0;
}

static sws_int_t
sws_auth_request_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_ACCESS_PHASE, .order = SWS_HTTP_ORDER_AUTH_REQUEST,
        .handler = sws_auth_request_handler, .module = &sws_module,
        .active = sws_auth_request_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
