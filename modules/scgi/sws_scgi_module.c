/*
 * The scgi module: SCGI (the Simple Common Gateway Interface) to an
 * application server over the upstream framework.
 *
 *   scgi_pass ADDR|unix:/path|NAME;    may hold variables
 *
 * and the CGI-style family shared with fastcgi and uwsgi
 * (<scalws/sws_upstream_cgi.h>): scgi_param, scgi_pass_request_headers,
 * scgi_connect_timeout ... scgi_intercept_errors; scgi_cache* are the
 * cache module's.
 *
 * What is SCGI's own is the wire format. The request's variables are one
 * netstring, "LEN:" then each name and value ended by a NUL, then ",":
 * CONTENT_LENGTH first (the length of the body, always there), then SCGI
 * with the value 1 unless an scgi_param sets it, then the scgi_param ones
 * and the client's fields; the body follows as it is. The response is CGI
 * (Status:, Location:) or HTTP (a status line first), the body until the
 * server closes or its Content-Length ends.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_http_cgi_conf_t   cgi;            /* first: the framework's setter finds it */
    unsigned              own_scgi:1;     /* an scgi_param sets SCGI */
} sws_scgi_loc_conf_t;

static void *sws_scgi_create_loc_conf(sws_conf_t *cf);
static char *sws_scgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_scgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/* SCGI has no standard port: a port-less address takes HTTP's. */
#define SWS_SCGI_DEFAULT_PORT  80

static const sws_command_t sws_scgi_commands[] = {
    { "scgi_pass", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, sws_scgi_pass,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    SWS_HTTP_CGI_COMMANDS("scgi", sws_scgi_loc_conf_t),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "scgi",
    .commands = sws_scgi_commands,
    .create_loc_conf = sws_scgi_create_loc_conf,
    .merge_loc_conf = sws_scgi_merge_loc_conf,
};

/* ---- the request netstring ---- */

static size_t
sws_scgi_pair_size(size_t nlen, size_t vlen)
{
    return nlen + 1 + vlen + 1;
}

static u_char *
sws_scgi_nul(u_char *p, size_t nlen, size_t vlen)
{
    (void) nlen;
    (void) vlen;
    *p++ = '\0';
    return p;
}

static const sws_http_cgi_pairs_t sws_scgi_pairs = {
    .size = sws_scgi_pair_size,
    .before_value = sws_scgi_nul,
    .after_value = sws_scgi_nul,
};

static sws_int_t
sws_scgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_http_cgi_ctx_t     *ctx = data;
    sws_scgi_loc_conf_t    *slcf = ctx->conf;
    sws_pool_t             *pool = sws_http_pool(r);
    sws_http_cgi_render_t  *rd;
    size_t                  len, clen, nlen;
    u_char                  cl_value[24], netlen[24], *start, *p;
    off_t                   body;

    rd = sws_http_cgi_params_measure(r, ctx->u, slcf->cgi.params,
                                     slcf->cgi.pass_request_headers
                                     ? SWS_HTTP_CGI_PASS_HEADERS : 0, &len);
    if (rd == NULL) {
        return SWS_ERROR;
    }
    body = sws_http_upstream_body_length(ctx->u);
    clen = (size_t) (sws_sprint_uint(cl_value, (uint64_t) (body > 0 ? body : 0)) - cl_value);
    len += sws_scgi_pair_size(sizeof("CONTENT_LENGTH") - 1, clen);
    if (!slcf->own_scgi) {
        len += sws_scgi_pair_size(sizeof("SCGI") - 1, 1);
    }
    nlen = (size_t) (sws_sprint_uint(netlen, (uint64_t) len) - netlen);

    start = sws_pnalloc(pool, nlen + 1 + len + 1);
    if (start == NULL) {
        return SWS_ERROR;
    }
    p = sws_cpymem(start, netlen, nlen);
    *p++ = ':';
    p = sws_cpymem(p, "CONTENT_LENGTH", sizeof("CONTENT_LENGTH"));   /* with its NUL */
    p = sws_cpymem(p, cl_value, clen);
    *p++ = '\0';
    if (!slcf->own_scgi) {
        p = sws_cpymem(p, "SCGI\0" "1", sizeof("SCGI\0" "1"));       /* with the last NUL */
    }
    p = sws_http_cgi_params_write(rd, p);
    *p++ = ',';
    /* A buffered body follows as it is (a streamed one goes unframed). */
    return sws_http_cgi_request_chain(ctx->u, start, p, out);
}

static const sws_http_upstream_proto_t sws_scgi_proto = {
    .name = "SCGI",
    .create_request = sws_scgi_create_request,
    .reinit = sws_http_cgi_reinit,
    .process_header = sws_http_cgi_process_header,
    .input_filter = sws_http_cgi_input_filter,
};

/* ---- the content handler ---- */

static sws_int_t
sws_scgi_handler(sws_http_request_t *r)
{
    return sws_http_cgi_handler(r, &sws_scgi_proto, sws_http_loc_conf(r, &sws_module),
                                SWS_HTTP_CGI_STATUS_LINE | SWS_HTTP_CGI_LENGTH,
                                SWS_SCGI_DEFAULT_PORT);
}

/* ---- configuration ---- */

static void *
sws_scgi_create_loc_conf(sws_conf_t *cf)
{
    sws_scgi_loc_conf_t *slcf;

    slcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_scgi_loc_conf_t));
    if (slcf == NULL || sws_http_cgi_conf_init(cf, &slcf->cgi) != SWS_OK) {
        return NULL;
    }
    return slcf;
}

static char *
sws_scgi_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_scgi_loc_conf_t *prev = parent, *conf = child;
    char                *rv;

    rv = sws_http_cgi_conf_merge(cf, &prev->cgi, &conf->cgi, &sws_scgi_pairs);
    conf->own_scgi = sws_http_cgi_params_has(conf->cgi.params, "SCGI");
    return rv;
}

static char *
sws_scgi_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_scgi_loc_conf_t *slcf = conf;

    return sws_http_cgi_pass(cf, cmd, &slcf->cgi, sws_conf_arg(cf, 1), SWS_SCGI_DEFAULT_PORT,
                             sws_scgi_handler);
}
