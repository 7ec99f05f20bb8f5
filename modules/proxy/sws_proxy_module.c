/*
 * The proxy module: configuration, the content handler and its variables.
 *
 *   proxy_pass http[s]://NAME|host[:port]|unix:/path[:][/uri];   may hold variables
 *   proxy_http_version 1.0|1.1;            1.1: keep-alive with the server
 *   proxy_set_header NAME VALUE;           VALUE may hold variables; "" drops
 *   proxy_pass_request_headers on|off;
 *   proxy_force_ranges on|off;             ranges cut here from a 200 of known
 *                                          length, whatever the server says
 *   proxy_redirect default|off|FROM TO;
 *   proxy_method METHOD;                   may hold variables
 *   proxy_set_body TEXT;                   may hold variables: the body instead of the client's
 *   node_pass, python_pass NAME|host:port|unix:/path;   proxy_pass to an application
 *                                          (docs/apps.md): the client's Host is sent
 *   proxy_headers_hash_max_size, proxy_headers_hash_bucket_size (checked, no effect)
 *
 * and, through the upstream framework: proxy_connect_timeout,
 * proxy_send_timeout, proxy_read_timeout, proxy_next_upstream,
 * proxy_next_upstream_tries, proxy_next_upstream_timeout, proxy_buffering,
 * proxy_buffers, proxy_buffer_size, proxy_temp_path, proxy_max_temp_file_size,
 * proxy_temp_file_write_size, proxy_request_buffering,
 * proxy_pass_request_body, proxy_ignore_client_abort, proxy_bind,
 * proxy_socket_keepalive, proxy_busy_buffers_size, proxy_limit_rate, proxy_hide_header,
 * proxy_pass_header, proxy_intercept_errors, proxy_upgrade, and TLS to
 * the servers: proxy_ssl_server_name, proxy_ssl_name, proxy_ssl_verify,
 * proxy_ssl_trusted_certificate, proxy_ssl_verify_depth,
 * proxy_ssl_protocols, proxy_ssl_ciphers, proxy_ssl_certificate,
 * proxy_ssl_certificate_key, proxy_ssl_password_file, proxy_ssl_session_reuse.
 */
#include "sws_proxy.h"

static void *sws_proxy_create_main_conf(sws_conf_t *cf);
static void *sws_proxy_create_loc_conf(sws_conf_t *cf);
static char *sws_proxy_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_proxy_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_proxy_app_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_proxy_http_version(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_proxy_set_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_proxy_redirect(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_proxy_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#define LOC       SWS_HTTP_LOC_CONF
#define ALL       (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define UPS(name, args, id) \
    { name, ALL | (args), sws_http_upstream_conf_directive, SWS_HTTP_LOC_CONF_OFFSET, id, NULL }

static const sws_command_t sws_proxy_commands[] = {
    { "proxy_pass", LOC | SWS_CONF_TAKE1, sws_proxy_pass, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "node_pass", LOC | SWS_CONF_TAKE1, sws_proxy_app_pass, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "python_pass", LOC | SWS_CONF_TAKE1, sws_proxy_app_pass, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    { "proxy_http_version", ALL | SWS_CONF_TAKE1, sws_proxy_http_version,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_set_header", ALL | SWS_CONF_TAKE2, sws_proxy_set_header,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_pass_request_headers", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, pass_request_headers), NULL },
    { "proxy_force_ranges", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, force_ranges), NULL },
    { "proxy_redirect", ALL | SWS_CONF_TAKE12, sws_proxy_redirect,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_method", ALL | SWS_CONF_TAKE1, sws_proxy_format,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, method), NULL },
    { "proxy_set_body", ALL | SWS_CONF_TAKE1, sws_proxy_format,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, body), NULL },
    { "proxy_cookie_domain", ALL | SWS_CONF_TAKE12, sws_proxy_cookie,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, cookie_domains), NULL },
    { "proxy_cookie_path", ALL | SWS_CONF_TAKE12, sws_proxy_cookie,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_proxy_loc_conf_t, cookie_paths), NULL },
    /* nginx's: accepted and checked, the proxy's header set sizes itself */
    { "proxy_headers_hash_max_size", ALL | SWS_CONF_TAKE1, sws_conf_set_hash_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "proxy_headers_hash_bucket_size", ALL | SWS_CONF_TAKE1, sws_conf_set_hash_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    UPS("proxy_connect_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_CONNECT_TIMEOUT),
    UPS("proxy_send_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SEND_TIMEOUT),
    UPS("proxy_read_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_READ_TIMEOUT),
    UPS("proxy_next_upstream", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_NEXT_UPSTREAM),
    UPS("proxy_next_upstream_tries", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TRIES),
    UPS("proxy_next_upstream_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TIMEOUT),
    UPS("proxy_buffering", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_BUFFERING),
    UPS("proxy_buffers", SWS_CONF_TAKE2, SWS_UPSTREAM_CONF_BUFFERS),
    UPS("proxy_buffer_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_BUFFER_SIZE),
    UPS("proxy_temp_path", SWS_CONF_TAKE1234, SWS_UPSTREAM_CONF_TEMP_PATH),
    UPS("proxy_max_temp_file_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_MAX_TEMP_FILE_SIZE),
    UPS("proxy_temp_file_write_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_TEMP_FILE_WRITE_SIZE),
    UPS("proxy_request_buffering", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_REQUEST_BUFFERING),
    UPS("proxy_pass_request_body", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_PASS_REQUEST_BODY),
    UPS("proxy_ignore_client_abort", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_IGNORE_CLIENT_ABORT),
    UPS("proxy_hide_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_HIDE_HEADER),
    UPS("proxy_pass_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_PASS_HEADER),
    UPS("proxy_intercept_errors", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_INTERCEPT_ERRORS),
    UPS("proxy_upgrade", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_UPGRADE),
    UPS("proxy_bind", SWS_CONF_TAKE12, SWS_UPSTREAM_CONF_BIND),
    UPS("proxy_socket_keepalive", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SOCKET_KEEPALIVE),
    UPS("proxy_busy_buffers_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_BUSY_BUFFERS_SIZE),
    UPS("proxy_limit_rate", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_LIMIT_RATE),
    UPS("proxy_ssl_server_name", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SSL_SERVER_NAME),
    UPS("proxy_ssl_name", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_NAME),
    UPS("proxy_ssl_verify", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SSL_VERIFY),
    UPS("proxy_ssl_trusted_certificate", SWS_CONF_TAKE1,
        SWS_UPSTREAM_CONF_SSL_TRUSTED_CERTIFICATE),
    UPS("proxy_ssl_verify_depth", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_VERIFY_DEPTH),
    UPS("proxy_ssl_protocols", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_SSL_PROTOCOLS),
    UPS("proxy_ssl_ciphers", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_CIPHERS),
    UPS("proxy_ssl_certificate", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_CERTIFICATE),
    UPS("proxy_ssl_certificate_key", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_CERTIFICATE_KEY),
    UPS("proxy_ssl_password_file", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE),
    UPS("proxy_ssl_session_reuse", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SSL_SESSION_REUSE),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "proxy",
    .commands = sws_proxy_commands,
    .create_main_conf = sws_proxy_create_main_conf,
    .create_loc_conf = sws_proxy_create_loc_conf,
    .merge_loc_conf = sws_proxy_merge_loc_conf,
};

/* HTTP/1 is the framework's: the proxy builds only its part of the request. */
const sws_http_upstream_proto_t sws_proxy_proto = {
    .name = "proxy",
    .create_request = sws_proxy_create_request,
    .reinit = sws_http_upstream_h1_reinit,
    .process_header = sws_proxy_process_header,
    .input_filter = sws_http_upstream_h1_input_filter,
    .frame_head = SWS_UPSTREAM_H1_FRAME_HEAD,
    .frame_tail = SWS_UPSTREAM_H1_FRAME_TAIL,
    .frame_body = sws_http_upstream_h1_frame_body,
};

/* ---- the content handler ---- */

/* proxy_pass with variables: this request's URL, and where it goes. */
static sws_int_t
sws_proxy_eval_target(sws_http_request_t *r, sws_proxy_ctx_t *ctx)
{
    sws_proxy_loc_conf_t *plcf = ctx->plcf;
    sws_proxy_target_t   *t;
    sws_str_t             url, auth;
    const char           *err;
    sws_int_t             rc;

    t = sws_palloc(sws_http_pool(r), sizeof(sws_proxy_target_t));
    if (t == NULL
        || sws_http_format_string(plcf->url_fmt, r, sws_http_pool(r), 1, NULL, 0, &url)
           != SWS_OK)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    err = sws_proxy_parse_url(&url, t, &auth);
    if (err) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "proxy_pass URL \"%.*s\" %s",
                      (int) sws_min(url.len, 256), url.data, err);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->t = t;
    rc = sws_http_upstream_set_target(ctx->u, &auth, t->default_port);
    if (rc == SWS_DECLINED) {
        return SWS_HTTP_BAD_GATEWAY;
    }
    return rc == SWS_OK ? SWS_OK : SWS_HTTP_INTERNAL_SERVER_ERROR;
}

static sws_int_t
sws_proxy_handler(sws_http_request_t *r)
{
    sws_proxy_loc_conf_t *plcf = sws_http_loc_conf(r, &sws_module);
    sws_proxy_ctx_t      *ctx;
    sws_http_upstream_t  *u;
    sws_int_t             rc;

    /* A fresh cache hit before anything is made for the server (the key's
     * $proxy_host is the configured one unless the target has variables). */
    if (plcf->url_fmt == NULL) {
        rc = sws_http_upstream_cache_hit(r);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    /* every field set here: no zeroing call per request */
    ctx = sws_palloc(sws_http_pool(r), sizeof(sws_proxy_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u = sws_http_upstream_create(r, &sws_proxy_proto, ctx, plcf->upstream);
    if (u == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->u = u;
    ctx->plcf = plcf;
    ctx->t = &plcf->target;
    ctx->upgrade = 0;
    ctx->rid = 0;
    if (plcf->body) {
        sws_http_upstream_set_pass_body(u, 0);   /* proxy_set_body's goes instead */
    }
    sws_http_upstream_h1_set_header_hook(u, sws_proxy_response_header, ctx);
    if (plcf->url_fmt) {
        /* $proxy_host and $proxy_port find this request's target here;
         * without variables the location's is the same one (the request's
         * context table is then not made for this alone) */
        sws_http_set_ctx(r, &sws_module, ctx);
        rc = sws_proxy_eval_target(r, ctx);
        if (rc != SWS_OK) {
            return rc;
        }
    }
    if (ctx->t->ssl && sws_http_upstream_set_ssl(u, &ctx->t->host) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (plcf->http_version == SWS_HTTP_VERSION_11) {
        ctx->upgrade = sws_http_upstream_upgrade_allowed(u) ? 1 : 0;
    } else if (sws_http_has_body(r) && sws_http_content_length_in(r) < 0) {
        /* HTTP/1.0 has no chunked bodies: the length must be known first. */
        sws_http_upstream_set_request_buffering(u, 1);
    }
    return sws_http_upstream_start(r);
}

/* ---- variables ---- */

static void
sws_proxy_var_host(sws_http_request_t *r, void *data, sws_str_t *v)
{
    sws_proxy_loc_conf_t     *plcf = sws_http_loc_conf(r, &sws_module);
    sws_proxy_ctx_t          *ctx = sws_http_get_ctx(r, &sws_module);
    const sws_proxy_target_t *t = NULL;

    if (ctx && ctx->t) {
        t = ctx->t;                      /* this request's (variables) */
    } else if (plcf && plcf->upstream && sws_http_upstream_conf_has_target(plcf->upstream)) {
        t = &plcf->target;
    }
    if (t) {
        *v = data ? t->port : t->host;
    }
}

static void
sws_proxy_var_xff(sws_http_request_t *r, void *data, sws_str_t *v)
{
    (void) data;
    if (sws_proxy_xff(r, v) != SWS_OK) {
        v->len = 0;
    }
}

static void *
sws_proxy_create_main_conf(sws_conf_t *cf)
{
    static int marker = 1;

    if (sws_http_variable_add(cf, "proxy_host", sws_proxy_var_host, NULL) != SWS_OK
        || sws_http_variable_add(cf, "proxy_port", sws_proxy_var_host, &marker) != SWS_OK
        || sws_http_variable_add(cf, "proxy_add_x_forwarded_for", sws_proxy_var_xff, NULL)
           != SWS_OK)
    {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_uint_t));
}

/* ---- configuration ---- */

static void *
sws_proxy_create_loc_conf(sws_conf_t *cf)
{
    sws_proxy_loc_conf_t *plcf;

    plcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_proxy_loc_conf_t));
    if (plcf == NULL) {
        return NULL;
    }
    plcf->upstream = sws_http_upstream_conf_create(cf);
    if (plcf->upstream == NULL) {
        return NULL;
    }
    plcf->http_version = SWS_UNSET_UINT;
    plcf->pass_request_headers = SWS_UNSET;
    plcf->force_ranges = SWS_UNSET;
    return plcf;
}

/* Which default headers the user replaced, and the text of the constant
 * ones, built once per list. */
static char *
sws_proxy_compile_headers(sws_conf_t *cf, sws_proxy_loc_conf_t *plcf)
{
    static int            marker;
    sws_pool_t           *pool = sws_conf_pool(cf);
    sws_proxy_headers_t  *hs;
    sws_str_t            *pair, lc;
    sws_uint_t            i, n;
    size_t                len = 0;
    u_char               *p;
    const char           *err;

    hs = sws_pcalloc(pool, sizeof(sws_proxy_headers_t));
    if (hs == NULL) {
        return SWS_CONF_ERROR;
    }
    plcf->headers = hs;
    if (plcf->set_list == NULL) {
        return SWS_CONF_OK;
    }
    pair = plcf->set_list->elts;
    n = plcf->set_list->nelts / 2;
    hs->names = sws_hash_create(pool, n, 1);
    hs->dynamic = sws_pcalloc(pool, sizeof(sws_proxy_header_t) * n);
    if (hs->names == NULL || hs->dynamic == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (memchr(pair[2 * i + 1].data, '$', pair[2 * i + 1].len) == NULL) {
            len += pair[2 * i].len + 2 + pair[2 * i + 1].len + 2;
        }
    }
    p = sws_pnalloc(pool, len + 1);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    hs->static_text.data = p;

    for (i = 0; i < n; i++) {
        sws_str_t *name = &pair[2 * i], *value = &pair[2 * i + 1];

        lc.len = name->len;
        lc.data = sws_pnalloc(pool, name->len);
        if (lc.data == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_strlow(lc.data, name->data, name->len);
        if (sws_hash_add(hs->names, &lc, &marker) == SWS_ERROR) {
            return SWS_CONF_ERROR;
        }
        if (sws_str_eq_cstr(&lc, "host")) {
            hs->host = 1;
        } else if (sws_str_eq_cstr(&lc, "connection")) {
            hs->connection = 1;
        } else if (sws_str_eq_cstr(&lc, "upgrade")) {
            hs->upgrade = 1;
        } else if (sws_str_eq_cstr(&lc, "x-forwarded-for")) {
            hs->xff = 1;
        } else if (sws_str_eq_cstr(&lc, "x-forwarded-proto")) {
            hs->xfp = 1;
        } else if (sws_str_eq_cstr(&lc, "x-request-id")) {
            hs->xrid = 1;
        } else if (sws_str_eq_cstr(&lc, "content-length") && value->len == 0) {
            /* what oauth2-proxy's and nginx's auth_request examples write
             * beside proxy_pass_request_body off: no length for a body
             * not passed (a body sent still gets its framing) */
            hs->no_length = 1;
        } else if (sws_str_eq_cstr(&lc, "content-length")
                   || sws_str_eq_cstr(&lc, "transfer-encoding"))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "proxy_set_header cannot set \"%.*s\": "
                               "the body framing is the proxy's", (int) name->len, name->data);
            return SWS_CONF_ERROR;
        }
        if (memchr(value->data, '$', value->len) == NULL) {
            if (value->len) {      /* "" only removes the header */
                p = sws_cpymem(p, name->data, name->len);
                *p++ = ':';
                *p++ = ' ';
                p = sws_cpymem(p, value->data, value->len);
                *p++ = '\r';
                *p++ = '\n';
            }
            continue;
        }
        hs->dynamic[hs->ndynamic].name = *name;
        hs->dynamic[hs->ndynamic].value = sws_http_format_compile(pool, value,
                                                                  SWS_HTTP_ESCAPE_NONE, &err);
        if (hs->dynamic[hs->ndynamic].value == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "proxy_set_header %.*s: %s",
                               (int) name->len, name->data, err);
            return SWS_CONF_ERROR;
        }
        hs->ndynamic++;
    }
    hs->static_text.len = (size_t) (p - hs->static_text.data);
    return SWS_CONF_OK;
}

static char *
sws_proxy_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_proxy_loc_conf_t *prev = parent, *conf = child;
    char                 *rv;

    rv = sws_http_upstream_conf_merge(cf, prev->upstream, conf->upstream);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (conf->target.url.data == NULL && conf->url_fmt == NULL) {
        /* an if block without proxy_pass (the only level under one that
         * has it) proxies as its location does */
        conf->target = prev->target;
        conf->url_fmt = prev->url_fmt;
        conf->location = prev->location;
        conf->location_kind = prev->location_kind;
        conf->app = prev->app;
    }
    sws_conf_merge_uint_value(conf->http_version, prev->http_version, SWS_HTTP_VERSION_11);
    sws_conf_merge_value(conf->pass_request_headers, prev->pass_request_headers, 1);
    sws_conf_merge_value(conf->force_ranges, prev->force_ranges, 0);
    if (conf->cookie_domains == NULL) {
        conf->cookie_domains = prev->cookie_domains;
    }
    if (conf->cookie_paths == NULL) {
        conf->cookie_paths = prev->cookie_paths;
    }
    if (conf->redirects == NULL) {
        conf->redirects = prev->redirects;
    }
    sws_conf_merge_ptr_value(conf->method, prev->method, NULL);
    sws_conf_merge_ptr_value(conf->body, prev->body, NULL);

    /* proxy_set_header: inherited only when none is set at this level. */
    if (conf->set_list == NULL) {
        conf->set_list = prev->set_list;
        conf->headers = prev->headers;
    }
    if (conf->headers == NULL) {
        rv = sws_proxy_compile_headers(cf, conf);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
        if (conf->set_list == prev->set_list) {
            prev->headers = conf->headers;     /* the siblings share it */
        }
    }
    return SWS_CONF_OK;
}

/* proxy_method METHOD, proxy_set_body TEXT: formats (variables allowed),
 * at cmd->offset. */
static char *
sws_proxy_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t  *plcf = conf;
    sws_http_format_t    **fmt = (sws_http_format_t **) ((u_char *) conf + cmd->offset);
    const sws_str_t       *arg = sws_conf_arg(cf, 1);
    int                    method = cmd->offset == offsetof(sws_proxy_loc_conf_t, method);
    const char            *err = NULL;

    if (method ? plcf->method_set : plcf->body_set) {
        return "is duplicate";
    }
    if (method && arg->len == 0) {
        return "takes a method name, not an empty one";
    }
    *fmt = sws_http_format_compile(sws_conf_pool(cf), arg, SWS_HTTP_ESCAPE_NONE, &err);
    if (*fmt == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_CONF_ERROR;
    }
    if (method) {
        plcf->method_set = 1;
    } else {
        plcf->body_set = 1;
    }
    return SWS_CONF_OK;
}

/* proxy_pass http[s]://NAME | host[:port][/uri] | unix:/path[:/uri], any
 * of it from variables. */
static char *
sws_proxy_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t *plcf = conf;
    sws_str_t            *url = sws_conf_arg(cf, 1), auth;
    const char           *err;
    char                 *rv;

    (void) cmd;

    if (plcf->target.url.data || plcf->url_fmt) {
        return "is duplicate";
    }
    if (sws_http_conf_location(cf, &plcf->location, &plcf->location_kind) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    if (memchr(url->data, '$', url->len)) {
        /* Evaluated per request (sws_proxy_eval_target). */
        plcf->url_fmt = sws_http_format_compile(sws_conf_pool(cf), url, SWS_HTTP_ESCAPE_NONE,
                                                &err);
        if (plcf->url_fmt == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "proxy_pass: %s", err);
            return SWS_CONF_ERROR;
        }
    } else {
        err = sws_proxy_parse_url(url, &plcf->target, &auth);
        if (err) {
            return (char *) err;
        }
        /* A URI part replaces the location's prefix: these have none. */
        if (plcf->target.uri.data && plcf->location_kind == SWS_HTTP_LOC_REGEX) {
            return "cannot have a URI part in a location given by a regular expression";
        }
        if (plcf->target.uri.data && plcf->location_kind == SWS_HTTP_LOC_NAMED) {
            return "cannot have a URI part inside a named location";
        }
        if (plcf->target.uri.data && plcf->location_kind == SWS_HTTP_LOC_NESTED) {
            return "cannot have a URI part inside an \"if\" statement or a \"limit_except\" block";
        }
        rv = sws_http_upstream_conf_set_target(cf, plcf->upstream, &auth,
                                               plcf->target.default_port);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
        /* an application under the native Python bridge speaks no HTTP */
        if (sws_app_expect_protocol(cf, sws_http_upstream_name(plcf->upstream), "http")
            != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
    }
    /* The TLS context is made (at merge) only where it may be used. */
    sws_http_upstream_conf_set_ssl(plcf->upstream, plcf->url_fmt || plcf->target.ssl);
    if (sws_http_set_content_handler(cf, sws_proxy_handler, "proxy_pass") != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

/* node_pass, python_pass NAME | host:port | unix:/path: proxy_pass
 * http://... to an application (managed: its group has its name), the
 * URI as the client sent it, with the client's Host. */
static char *
sws_proxy_app_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t *plcf = conf;
    sws_str_t            *arg = sws_conf_arg(cf, 1), *url;
    u_char               *p;

    if (arg->len == 0 || memchr(arg->data, '$', arg->len)
        || (arg->len > 5 && sws_strncasecmp(arg->data, (u_char *) "unix:", 5) == 0
            ? memchr(arg->data + 5, ':', arg->len - 5) != NULL
            : memchr(arg->data, '/', arg->len) != NULL))
    {
        return "takes an application's name, host:port or unix:/path (no URI, no variables)";
    }
    /* the URL proxy_pass would have: the argument is what sws_proxy_pass reads */
    url = sws_conf_arg(cf, 1);
    p = sws_pnalloc(sws_conf_pool(cf), arg->len + 7);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    memcpy(p, "http://", 7);
    memcpy(p + 7, arg->data, arg->len);
    url->data = p;
    url->len += 7;
    plcf->app = 1;
    return sws_proxy_pass(cf, cmd, conf);
}

static char *
sws_proxy_http_version(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t *plcf = conf;
    sws_str_t            *v = sws_conf_arg(cf, 1);

    (void) cmd;

    if (plcf->http_version != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "1.0")) {
        plcf->http_version = SWS_HTTP_VERSION_10;
    } else if (sws_str_eq_cstr(v, "1.1")) {
        plcf->http_version = SWS_HTTP_VERSION_11;
    } else {
        return "takes \"1.0\" or \"1.1\"";
    }
    return SWS_CONF_OK;
}

static char *
sws_proxy_set_header(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t *plcf = conf;
    sws_str_t            *pair, *name = sws_conf_arg(cf, 1);
    size_t                i;

    (void) cmd;

    for (i = 0; i < name->len; i++) {
        u_char c = name->data[i];
        if (c <= ' ' || c == ':' || c >= 0x7f) {
            return "has an invalid header name";
        }
    }
    if (name->len == 0 || memchr(sws_conf_arg(cf, 2)->data, '\n', sws_conf_arg(cf, 2)->len)
        || memchr(sws_conf_arg(cf, 2)->data, '\r', sws_conf_arg(cf, 2)->len))
    {
        return "has an invalid header";
    }
    if (plcf->set_list == NULL) {
        plcf->set_list = sws_array_create(sws_conf_pool(cf), 8, sizeof(sws_str_t));
        if (plcf->set_list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    pair = sws_array_push_n(plcf->set_list, 2);
    if (pair == NULL) {
        return SWS_CONF_ERROR;
    }
    pair[0] = *name;
    pair[1] = *sws_conf_arg(cf, 2);
    return SWS_CONF_OK;
}

/* proxy_redirect default | off | FROM TO */
static char *
sws_proxy_redirect(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_proxy_loc_conf_t *plcf = conf;
    sws_proxy_redirect_t *pr;
    sws_str_t            *a1 = sws_conf_arg(cf, 1);

    (void) cmd;

    if (plcf->redirect_off) {
        return "is duplicate";           /* nothing may follow "off" (nginx) */
    }
    if (plcf->redirects == NULL) {
        plcf->redirects = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_proxy_redirect_t));
        if (plcf->redirects == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    if (sws_conf_nargs(cf) == 2) {
        if (sws_str_eq_cstr(a1, "off")) {
            if (plcf->redirects->nelts) {
                return "\"off\" cannot be combined with other rules";
            }
            plcf->redirect_off = 1;
            return SWS_CONF_OK;          /* an empty list */
        }
        if (!sws_str_eq_cstr(a1, "default")) {
            return "takes \"default\", \"off\" or FROM TO";
        }
    }
    pr = sws_array_push(plcf->redirects);
    if (pr == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(pr, sizeof(*pr));
    if (sws_conf_nargs(cf) == 2) {
        pr->is_default = 1;
    } else {
        pr->from = *a1;
        pr->to = *sws_conf_arg(cf, 2);
    }
    return SWS_CONF_OK;
}
