/*
 * The mirror module: nginx's ngx_http_mirror_module.
 *
 *   mirror URI | off;               http, server, location (several: one
 *                                   mirror each)
 *   mirror_request_body on | off;   http, server, location (default on)
 *
 * Before the content phase each mirror URI gets a background subrequest
 * with the client's method, args and headers (and, with
 * mirror_request_body on, its body, read whole first): its response is
 * dropped, and the client's response never waits for it. The request is
 * released (an HTTP/1 connection goes on to its next request) once the
 * mirrors have ended, as in nginx. Subrequests are not mirrored.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_array_t   *uris;            /* sws_str_t; NULL: unset; nelts 0: off */
    sws_int_t      request_body;
} sws_mirror_loc_conf_t;

typedef struct {
    sws_int_t      status;          /* the handler's answer once mirrored */
    unsigned       mirrored:1;
    unsigned       in_handler:1;    /* the body came at once: no resume */
} sws_mirror_ctx_t;

static char *sws_mirror(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_mirror_create_loc_conf(sws_conf_t *cf);
static char *sws_mirror_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_mirror_init(sws_conf_t *cf);

#define SWS_MIRROR_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_mirror_commands[] = {
    { "mirror", SWS_MIRROR_CTX | SWS_CONF_TAKE1, sws_mirror, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    { "mirror_request_body", SWS_MIRROR_CTX | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_mirror_loc_conf_t, request_body), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "mirror",
    .commands = sws_mirror_commands,
    .create_loc_conf = sws_mirror_create_loc_conf,
    .merge_loc_conf = sws_mirror_merge_loc_conf,
    .postconfiguration = sws_mirror_init,
};


/* ---- mirroring ------------------------------------------------------ */

/* One background subrequest per URI: SWS_DECLINED (go on), or 500. */
static sws_int_t
sws_mirror_start(sws_http_request_t *r, sws_mirror_loc_conf_t *lcf)
{
    sws_http_subrequest_conf_t  sc;
    sws_str_t                  *uri = lcf->uris->elts;
    sws_uint_t                  i;

    sws_memzero(&sc, sizeof(sc));
    sc.args = *sws_http_args(r);
    sc.flags = SWS_HTTP_SUBREQUEST_BACKGROUND | SWS_HTTP_SUBREQUEST_PARENT_METHOD;
    if (lcf->request_body && sws_http_has_body(r)) {
        sc.flags |= SWS_HTTP_SUBREQUEST_BODY;
    }
    for (i = 0; i < lcf->uris->nelts; i++) {
        sc.uri = uri[i];
        if (sws_http_subrequest(r, &sc, NULL) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return SWS_DECLINED;
}

/* The client's body is all there: mirror, then on with the phases
 * (unless the handler is still on the stack: it goes on itself). */
static void
sws_mirror_body_read(sws_http_request_t *r)
{
    sws_mirror_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    ctx->status = sws_mirror_start(r, sws_http_loc_conf(r, &sws_module));
    ctx->mirrored = 1;
    if (!ctx->in_handler) {
        sws_http_run_phases(r);
    }
}

static sws_int_t
sws_mirror_handler(sws_http_request_t *r)
{
    sws_mirror_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);
    sws_mirror_ctx_t      *ctx;
    sws_int_t              rc;

    if (lcf == NULL || lcf->uris == NULL || lcf->uris->nelts == 0
        || sws_http_parent(r) != NULL)
    {
        return SWS_DECLINED;
    }
    ctx = sws_http_get_ctx(r, &sws_module);
    if (ctx != NULL) {
        return ctx->mirrored ? ctx->status : SWS_AGAIN;
    }
    if (!lcf->request_body || !sws_http_has_body(r)) {
        ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_mirror_ctx_t));
        if (ctx == NULL) {
            return SWS_ERROR;
        }
        ctx->status = sws_mirror_start(r, lcf);
        ctx->mirrored = 1;
        sws_http_set_ctx(r, &sws_module, ctx);
        return ctx->status;
    }

    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_mirror_ctx_t));
    if (ctx == NULL) {
        return SWS_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    ctx->in_handler = 1;
    rc = sws_http_read_body(r, sws_mirror_body_read);
    ctx->in_handler = 0;
    if (rc != SWS_OK) {
        return rc;                       /* 400, 408, 413 ... */
    }
    return ctx->mirrored ? ctx->status : SWS_AGAIN;
}


/* ---- configuration -------------------------------------------------- */

/* mirror URI | off; */
static char *
sws_mirror(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_mirror_loc_conf_t *lcf = conf;
    sws_str_t             *arg = sws_conf_arg(cf, 1), *uri;

    (void) cmd;
    if (sws_str_eq_cstr(arg, "off")) {
        if (lcf->uris != NULL) {
            return "is duplicate";
        }
        lcf->uris = sws_array_create(sws_conf_pool(cf), 1, sizeof(sws_str_t));
        return lcf->uris ? SWS_CONF_OK : SWS_CONF_ERROR;
    }
    if (lcf->uris != NULL && lcf->uris->nelts == 0) {
        return "is duplicate";          /* after "mirror off" */
    }
    if (lcf->uris == NULL) {
        lcf->uris = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_str_t));
        if (lcf->uris == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    uri = sws_array_push(lcf->uris);
    if (uri == NULL) {
        return SWS_CONF_ERROR;
    }
    *uri = *arg;
    return SWS_CONF_OK;
}

static void *
sws_mirror_create_loc_conf(sws_conf_t *cf)
{
    sws_mirror_loc_conf_t *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_mirror_loc_conf_t));

    if (lcf) {
        lcf->request_body = SWS_UNSET;
    }
    return lcf;
}

static char *
sws_mirror_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_mirror_loc_conf_t *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_ptr_value(conf->uris, prev->uris, NULL);
    sws_conf_merge_value(conf->request_body, prev->request_body, 1);
    return SWS_CONF_OK;
}

/* Only where mirror names a URI. */
static sws_uint_t
sws_mirror_active(const void *conf)
{
    const sws_mirror_loc_conf_t *lcf = conf;

    return lcf->uris != NULL && lcf->uris->nelts != 0;
}

static sws_int_t
sws_mirror_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_PRE_CONTENT_PHASE, .order = SWS_HTTP_ORDER_MIRROR,
        .handler = sws_mirror_handler, .module = &sws_module,
        .active = sws_mirror_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
