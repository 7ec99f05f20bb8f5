/*
 * The fastcgi module: configuration, the content handler and its variables.
 *
 *   fastcgi_pass ADDR|unix:/path|NAME;        may hold variables
 *   fastcgi_param NAME VALUE [if_not_empty];  VALUE may hold variables
 *   fastcgi_index NAME;                       appended to a URI ending in '/'
 *   fastcgi_split_path_info REGEX;            $fastcgi_script_name, $fastcgi_path_info
 *   fastcgi_keep_conn on|off;                 FCGI_KEEP_CONN: reuse connections
 *   fastcgi_catch_stderr TEXT;                TEXT in STDERR before the head: invalid
 *   fastcgi_pass_request_headers on|off;      the client's headers as HTTP_*
 *
 * fastcgi_param and fastcgi_pass_request_headers are the core's CGI
 * parameters (<scalws/sws_upstream_cgi.h>), and with them, the framework's
 * directives as uwsgi and scgi have them too (SWS_HTTP_CGI_COMMANDS):
 * fastcgi_connect_timeout,
 * fastcgi_send_timeout, fastcgi_read_timeout, fastcgi_next_upstream,
 * fastcgi_next_upstream_tries, fastcgi_next_upstream_timeout,
 * fastcgi_buffering, fastcgi_buffers, fastcgi_buffer_size,
 * fastcgi_request_buffering, fastcgi_pass_request_body,
 * fastcgi_ignore_client_abort, fastcgi_bind, fastcgi_socket_keepalive,
 * fastcgi_busy_buffers_size, fastcgi_limit_rate, fastcgi_hide_header, fastcgi_pass_header,
 * fastcgi_intercept_errors.
 */
#include "sws_fastcgi.h"

static void *sws_fcgi_create_main_conf(sws_conf_t *cf);
static void *sws_fcgi_create_loc_conf(sws_conf_t *cf);
static char *sws_fcgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_fcgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_fcgi_split_path_info(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/* FastCGI servers have no standard port; PHP-FPM's usual one. */
#define SWS_FCGI_DEFAULT_PORT  9000

#define LOC       SWS_HTTP_LOC_CONF
#define ALL       (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_fcgi_commands[] = {
    { "fastcgi_pass", LOC | SWS_CONF_TAKE1, sws_fcgi_pass, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "fastcgi_index", ALL | SWS_CONF_TAKE1, sws_conf_set_str_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_fcgi_loc_conf_t, index), NULL },
    { "fastcgi_split_path_info", LOC | SWS_CONF_TAKE1, sws_fcgi_split_path_info,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "fastcgi_keep_conn", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_fcgi_loc_conf_t, keep_conn), NULL },
    { "fastcgi_catch_stderr", ALL | SWS_CONF_TAKE1, sws_conf_set_str_array_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_fcgi_loc_conf_t, catch_stderr), NULL },
    SWS_HTTP_CGI_COMMANDS("fastcgi", sws_fcgi_loc_conf_t),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "fastcgi",
    .commands = sws_fcgi_commands,
    .create_main_conf = sws_fcgi_create_main_conf,
    .create_loc_conf = sws_fcgi_create_loc_conf,
    .merge_loc_conf = sws_fcgi_merge_loc_conf,
};

const sws_http_upstream_proto_t sws_fcgi_proto = {
    .name = "fastcgi",
    .create_request = sws_fcgi_create_request,
    .reinit = sws_fcgi_reinit,
    .process_header = sws_fcgi_process_header,
    .input_filter = sws_fcgi_input_filter,
    .frame_head = SWS_FCGI_HEADER_LEN,
    .frame_tail = SWS_FCGI_HEADER_LEN,
    .frame_body = sws_fcgi_frame_body,
    .finalize = sws_fcgi_finalize,
};

/* ---- the content handler ---- */

static sws_int_t
sws_fcgi_handler(sws_http_request_t *r)
{
    sws_fcgi_loc_conf_t *flcf = sws_http_loc_conf(r, &sws_module);
    sws_fcgi_ctx_t      *ctx;
    sws_http_upstream_t *u;
    sws_int_t            rc;

    /* A fresh fastcgi_cache hit before anything is made for the server. */
    if (flcf->cgi.pass == NULL) {
        rc = sws_http_upstream_cache_hit(r);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    /* Small (the parser's state is a few words): zeroing it is cheap; the
     * buffers the response goes through are the framework's, not zeroed. */
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_fcgi_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u = sws_http_upstream_create(r, &sws_fcgi_proto, ctx, flcf->cgi.upstream);
    if (u == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->u = u;
    ctx->flcf = flcf;
    ctx->head = sws_http_cgi_head_create(u, "FastCGI", SWS_HTTP_CGI_LOCAL_REDIRECT);
    if (ctx->head == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    rc = sws_http_cgi_target(r, u, &flcf->cgi, SWS_FCGI_DEFAULT_PORT);
    if (rc != SWS_OK) {
        return rc;
    }
    ctx->keep = flcf->keep_conn && sws_http_upstream_can_keepalive(u);
    /* A STDIN record carries 65535 bytes at most. */
    sws_http_upstream_set_body_piece(u, SWS_FCGI_MAX_CONTENT);
    if (sws_http_has_body(r) && sws_http_content_length_in(r) < 0) {
        /* CGI needs CONTENT_LENGTH (PHP reads that many bytes): a chunked
         * body is read whole first. */
        sws_http_upstream_set_request_buffering(u, 1);
    }
    return sws_http_upstream_start(r);
}

/* ---- $fastcgi_script_name, $fastcgi_path_info ---- */

/* fastcgi_split_path_info: the two captures of a match of the URI (as
 * nginx: no match leaves the URI whole, without path info). */
static sws_int_t
sws_fcgi_split_regex(sws_http_request_t *r, const sws_regex_t *re, const sws_str_t *uri,
    sws_str_t *script, sws_str_t *path_info)
{
    size_t    ov[6];
    sws_int_t rc;

    rc = sws_regex_exec(re, uri->data, uri->len, ov, 3, sws_http_log(r));
    if (rc < 3 || ov[2] == SWS_REGEX_UNSET) {
        return SWS_DECLINED;
    }
    script->data = uri->data + ov[2];
    script->len = ov[3] - ov[2];
    if (ov[4] != SWS_REGEX_UNSET) {
        path_info->data = uri->data + ov[4];
        path_info->len = ov[5] - ov[4];
    }
    return SWS_OK;
}

void
sws_fcgi_split(sws_http_request_t *r, sws_fcgi_loc_conf_t *flcf, sws_str_t *script,
    sws_str_t *path_info)
{
    sws_fcgi_ctx_t  *ctx = sws_http_get_ctx(r, &sws_module);
    const sws_str_t *uri = sws_http_uri(r);
    sws_str_t        s;

    if (ctx && ctx->split_done) {
        *script = ctx->script_name;
        *path_info = ctx->path_info;
        return;
    }
    s = *uri;
    path_info->len = 0;
    path_info->data = NULL;
    if (flcf && flcf->split_re
        && sws_fcgi_split_regex(r, flcf->split_re, uri, &s, path_info) != SWS_OK)
    {
        s = *uri;
    }
    if (flcf && flcf->index.len && s.len && s.data[s.len - 1] == '/') {
        u_char *p = sws_pnalloc(sws_http_pool(r), s.len + flcf->index.len);
        if (p) {
            memcpy(p, s.data, s.len);
            memcpy(p + s.len, flcf->index.data, flcf->index.len);
            s.data = p;
            s.len += flcf->index.len;
        }
    }
    *script = s;
    if (ctx) {
        ctx->script_name = s;
        ctx->path_info = *path_info;
        ctx->split_done = 1;
    }
}

static void
sws_fcgi_var_split(sws_http_request_t *r, void *data, sws_str_t *v)
{
    sws_str_t script, path_info;

    sws_fcgi_split(r, sws_http_loc_conf(r, &sws_module), &script, &path_info);
    *v = data ? path_info : script;
}

static void *
sws_fcgi_create_main_conf(sws_conf_t *cf)
{
    static int marker = 1;

    if (sws_http_variable_add(cf, "fastcgi_script_name", sws_fcgi_var_split, NULL) != SWS_OK
        || sws_http_variable_add(cf, "fastcgi_path_info", sws_fcgi_var_split, &marker)
           != SWS_OK)
    {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_uint_t));
}

/* ---- configuration ---- */

static void *
sws_fcgi_create_loc_conf(sws_conf_t *cf)
{
    sws_fcgi_loc_conf_t *flcf;

    flcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_fcgi_loc_conf_t));
    if (flcf == NULL) {
        return NULL;
    }
    if (sws_http_cgi_conf_init(cf, &flcf->cgi) != SWS_OK) {
        return NULL;
    }
    flcf->keep_conn = SWS_UNSET;
    return flcf;
}

static char *
sws_fcgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_fcgi_loc_conf_t *prev = parent, *conf = child;

    sws_conf_merge_value(conf->keep_conn, prev->keep_conn, 0);
    if (conf->index.data == NULL) {
        conf->index = prev->index;
    }
    if (conf->catch_stderr == NULL) {
        conf->catch_stderr = prev->catch_stderr;
    }
    return sws_http_cgi_conf_merge(cf, &prev->cgi, &conf->cgi, &sws_fcgi_pairs);
}

static char *
sws_fcgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_fcgi_loc_conf_t *flcf = conf;
    char                *rv;

    rv = sws_http_cgi_pass(cf, cmd, &flcf->cgi, sws_conf_arg(cf, 1), SWS_FCGI_DEFAULT_PORT,
                           sws_fcgi_handler);
    if (rv == SWS_CONF_OK && flcf->cgi.pass == NULL) {
        /* The group's health_check probes speak FastCGI. */
        sws_http_upstream_conf_set_probe(flcf->cgi.upstream, &sws_fcgi_probe, flcf);
    }
    return rv;
}

static char *
sws_fcgi_split_path_info(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_fcgi_loc_conf_t *flcf = conf;
    const char          *err;

    (void) cmd;
    if (flcf->split_re) {
        return "is duplicate";
    }
    flcf->split_re = sws_regex_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1), 0, &err);
    if (flcf->split_re == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "fastcgi_split_path_info: %s", err);
        return SWS_CONF_ERROR;
    }
    if (sws_regex_captures(flcf->split_re) != 2) {
        return "needs a regular expression with two captures (script, path info)";
    }
    return SWS_CONF_OK;
}
