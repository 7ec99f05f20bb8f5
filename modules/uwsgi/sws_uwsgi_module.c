/*
 * The uwsgi module: the uwsgi protocol to a uWSGI server (or any server
 * that speaks it) over the upstream framework.
 *
 *   uwsgi_pass [uwsgi://|suwsgi://]ADDR|unix:/path|NAME;  may hold variables;
 *                                  suwsgi: over TLS, with uwsgi_ssl_* (proxy's)
 *   uwsgi_modifier1 N;  uwsgi_modifier2 N;      the packet's modifiers (0)
 *
 * and the CGI-style family shared with fastcgi and scgi
 * (<scalws/sws_upstream_cgi.h>): uwsgi_param, uwsgi_pass_request_headers,
 * uwsgi_connect_timeout ... uwsgi_intercept_errors; uwsgi_cache* are the
 * cache module's.
 *
 * What is uwsgi's own is the wire format. The request is one packet: a
 * 4-byte header (modifier1, the size of the variables as 16 bits little
 * endian, modifier2), then each variable as a 16-bit little-endian length
 * and the name, a 16-bit length and the value; the body follows as it is
 * (CONTENT_LENGTH says how long). The response is HTTP: a status line and
 * header fields (or CGI ones), the body until the server closes or its
 * Content-Length ends.
 */
#include <scalws/scalws.h>

/* The largest the variables of one packet can be: a 16-bit size. */
#define SWS_UWSGI_MAX_VARS  65535
#define SWS_UWSGI_HEAD_LEN  4

typedef struct {
    sws_http_cgi_conf_t   cgi;            /* first: the framework's setter finds it */
    sws_int_t             modifier1;
    sws_int_t             modifier2;
} sws_uwsgi_loc_conf_t;

static void *sws_uwsgi_create_loc_conf(sws_conf_t *cf);
static char *sws_uwsgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_uwsgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_uwsgi_modifier(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/* uWSGI has no standard port: a port-less address takes nginx's HTTP one. */
#define SWS_UWSGI_DEFAULT_PORT  80

#define ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_uwsgi_commands[] = {
    { "uwsgi_pass", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, sws_uwsgi_pass,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "uwsgi_modifier1", ALL | SWS_CONF_TAKE1, sws_uwsgi_modifier, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_uwsgi_loc_conf_t, modifier1), NULL },
    { "uwsgi_modifier2", ALL | SWS_CONF_TAKE1, sws_uwsgi_modifier, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_uwsgi_loc_conf_t, modifier2), NULL },
    SWS_HTTP_CGI_COMMANDS("uwsgi", sws_uwsgi_loc_conf_t),
    /* TLS to the servers (uwsgi_pass suwsgi://) */
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_server_name", SWS_CONF_FLAG,
                      SWS_UPSTREAM_CONF_SSL_SERVER_NAME),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_name", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_NAME),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_verify", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SSL_VERIFY),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_trusted_certificate", SWS_CONF_TAKE1,
                      SWS_UPSTREAM_CONF_SSL_TRUSTED_CERTIFICATE),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_verify_depth", SWS_CONF_TAKE1,
                      SWS_UPSTREAM_CONF_SSL_VERIFY_DEPTH),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_protocols", SWS_CONF_1MORE,
                      SWS_UPSTREAM_CONF_SSL_PROTOCOLS),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_ciphers", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SSL_CIPHERS),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_certificate", SWS_CONF_TAKE1,
                      SWS_UPSTREAM_CONF_SSL_CERTIFICATE),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_certificate_key", SWS_CONF_TAKE1,
                      SWS_UPSTREAM_CONF_SSL_CERTIFICATE_KEY),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_session_reuse", SWS_CONF_FLAG,
                      SWS_UPSTREAM_CONF_SSL_SESSION_REUSE),
    SWS_HTTP_CGI_UPS_("uwsgi", "_ssl_password_file", SWS_CONF_TAKE1,
                      SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "uwsgi",
    .commands = sws_uwsgi_commands,
    .create_loc_conf = sws_uwsgi_create_loc_conf,
    .merge_loc_conf = sws_uwsgi_merge_loc_conf,
};

/* ---- the request packet ---- */

static u_char *
sws_uwsgi_write16(u_char *p, size_t n)
{
    *p++ = (u_char) (n & 0xff);
    *p++ = (u_char) ((n >> 8) & 0xff);
    return p;
}

static size_t
sws_uwsgi_pair_size(size_t nlen, size_t vlen)
{
    return 2 + nlen + 2 + vlen;
}

static u_char *
sws_uwsgi_before_name(u_char *p, size_t nlen, size_t vlen)
{
    (void) vlen;
    return sws_uwsgi_write16(p, nlen);
}

static u_char *
sws_uwsgi_before_value(u_char *p, size_t nlen, size_t vlen)
{
    (void) nlen;
    return sws_uwsgi_write16(p, vlen);
}

static const sws_http_cgi_pairs_t sws_uwsgi_pairs = {
    .size = sws_uwsgi_pair_size,
    .before_name = sws_uwsgi_before_name,
    .before_value = sws_uwsgi_before_value,
};

static sws_int_t
sws_uwsgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_http_cgi_ctx_t     *ctx = data;
    sws_uwsgi_loc_conf_t   *ulcf = ctx->conf;
    sws_pool_t             *pool = sws_http_pool(r);
    sws_http_cgi_render_t  *rd;
    size_t                  len;
    u_char                 *start, *p;

    rd = sws_http_cgi_params_measure(r, ctx->u, ulcf->cgi.params,
                                     ulcf->cgi.pass_request_headers
                                     ? SWS_HTTP_CGI_PASS_HEADERS : 0, &len);
    if (rd == NULL) {
        return SWS_ERROR;
    }
    if (len > SWS_UWSGI_MAX_VARS) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "uwsgi request is too big: %zu", len);
        return SWS_ERROR;
    }
    start = sws_pnalloc(pool, SWS_UWSGI_HEAD_LEN + len);
    if (start == NULL) {
        return SWS_ERROR;
    }
    p = start;
    *p++ = (u_char) ulcf->modifier1;
    p = sws_uwsgi_write16(p, len);
    *p++ = (u_char) ulcf->modifier2;
    p = sws_http_cgi_params_write(rd, p);
    /* A buffered body follows as it is (a streamed one goes unframed). */
    return sws_http_cgi_request_chain(ctx->u, start, p, out);
}

static const sws_http_upstream_proto_t sws_uwsgi_proto = {
    .name = "uwsgi",
    .create_request = sws_uwsgi_create_request,
    .reinit = sws_http_cgi_reinit,
    .process_header = sws_http_cgi_process_header,
    .input_filter = sws_http_cgi_input_filter,
};

/* ---- the content handler ---- */

static sws_int_t
sws_uwsgi_handler(sws_http_request_t *r)
{
    return sws_http_cgi_handler(r, &sws_uwsgi_proto, sws_http_loc_conf(r, &sws_module),
                                SWS_HTTP_CGI_STATUS_LINE | SWS_HTTP_CGI_LENGTH,
                                SWS_UWSGI_DEFAULT_PORT);
}

/* ---- configuration ---- */

static void *
sws_uwsgi_create_loc_conf(sws_conf_t *cf)
{
    sws_uwsgi_loc_conf_t *ulcf;

    ulcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_uwsgi_loc_conf_t));
    if (ulcf == NULL || sws_http_cgi_conf_init(cf, &ulcf->cgi) != SWS_OK) {
        return NULL;
    }
    ulcf->modifier1 = SWS_UNSET;
    ulcf->modifier2 = SWS_UNSET;
    return ulcf;
}

static char *
sws_uwsgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_uwsgi_loc_conf_t *prev = parent, *conf = child;

    sws_conf_merge_value(conf->modifier1, prev->modifier1, 0);
    sws_conf_merge_value(conf->modifier2, prev->modifier2, 0);
    return sws_http_cgi_conf_merge(cf, &prev->cgi, &conf->cgi, &sws_uwsgi_pairs);
}

static char *
sws_uwsgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_uwsgi_loc_conf_t *ulcf = conf;
    sws_str_t             addr = *sws_conf_arg(cf, 1);

    if (addr.len >= 9 && sws_strncasecmp(addr.data, (u_char *) "suwsgi://", 9) == 0) {
        addr.data += 9;
        addr.len -= 9;
        ulcf->cgi.ssl = 1;
    } else if (addr.len >= 8 && sws_strncasecmp(addr.data, (u_char *) "uwsgi://", 8) == 0) {
        addr.data += 8;
        addr.len -= 8;
    }
    return sws_http_cgi_pass(cf, cmd, &ulcf->cgi, &addr, SWS_UWSGI_DEFAULT_PORT,
                             sws_uwsgi_handler);
}

/* uwsgi_modifier1/2: a byte of the packet's header. */
static char *
sws_uwsgi_modifier(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_int_t *v = (sws_int_t *) ((u_char *) conf + cmd->offset);
    sws_str_t *arg = sws_conf_arg(cf, 1);

    if (*v != SWS_UNSET) {
        return "is duplicate";
    }
    *v = sws_atoi(arg->data, arg->len);
    if (*v < 0 || *v > 255) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid number \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
