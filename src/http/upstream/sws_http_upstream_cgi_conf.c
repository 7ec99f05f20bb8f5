/*
 * A CGI-style location's common configuration (<scalws/sws_upstream_cgi.h>):
 * the framework's part, the parameters, and the target of PREFIX_pass,
 * fixed or with variables.
 */
#include "sws_http_upstream.h"
#include <scalws/sws_upstream_cgi.h>

sws_int_t
sws_http_cgi_conf_init(sws_conf_t *cf, sws_http_cgi_conf_t *c)
{
    c->upstream = sws_http_upstream_conf_create(cf);
    if (c->upstream == NULL) {
        return SWS_ERROR;
    }
    c->pass_request_headers = SWS_UNSET;
    return SWS_OK;
}

char *
sws_http_cgi_conf_merge(sws_conf_t *cf, sws_http_cgi_conf_t *prev, sws_http_cgi_conf_t *conf,
    const sws_http_cgi_pairs_t *pairs)
{
    char *rv;

    rv = sws_http_upstream_conf_merge(cf, prev->upstream, conf->upstream);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    sws_conf_merge_value(conf->pass_request_headers, prev->pass_request_headers, 1);
    return sws_http_cgi_params_merge(cf, &prev->params, &conf->params, pairs);
}

static char *
sws_cgi_target_conf(sws_conf_t *cf, sws_http_cgi_conf_t *c, const sws_str_t *addr,
    sws_uint_t default_port)
{
    const char *err;

    if (c->pass || sws_http_upstream_conf_has_target(c->upstream)) {
        return "is duplicate";
    }
    if (addr->len == 0) {
        return "has an empty address";
    }
    if (memchr(addr->data, '$', addr->len)) {
        c->pass = sws_http_format_compile(sws_conf_pool(cf), addr, SWS_HTTP_ESCAPE_NONE, &err);
        if (c->pass == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%.*s: %s", (int) sws_conf_arg(cf, 0)->len,
                               sws_conf_arg(cf, 0)->data, err);
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    }
    if (addr->len > 7 && memcmp(addr->data, "http://", 7) == 0) {
        return "takes an address, not a URL";
    }
    return sws_http_upstream_conf_set_target(cf, c->upstream, addr, default_port);
}

char *
sws_http_cgi_pass(sws_conf_t *cf, const sws_command_t *cmd, sws_http_cgi_conf_t *c,
    const sws_str_t *addr, sws_uint_t default_port, sws_http_handler_pt handler)
{
    char *rv;

    rv = sws_cgi_target_conf(cf, c, addr, default_port);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    sws_http_upstream_conf_set_ssl(c->upstream, c->ssl);
    if (sws_http_set_content_handler(cf, handler, cmd->name) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

sws_int_t
sws_http_cgi_target(sws_http_request_t *r, sws_http_upstream_t *u, const sws_http_cgi_conf_t *c,
    sws_uint_t default_port)
{
    sws_str_t  addr;
    sws_int_t  rc;

    if (c->pass == NULL) {
        addr = *sws_http_upstream_name(c->upstream);
    } else {
        if (sws_http_format_string(c->pass, r, r->pool, 1, NULL, 0, &addr) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        rc = sws_http_upstream_set_target(u, &addr, default_port);
        if (rc == SWS_DECLINED) {
            return SWS_HTTP_BAD_GATEWAY;
        }
        if (rc != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    if (c->ssl && sws_http_upstream_set_ssl(u, &addr) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_OK;
}

/* ---- a protocol whose response is a CGI head and the bytes after it ---- */

sws_int_t
sws_http_cgi_handler(sws_http_request_t *r, const sws_http_upstream_proto_t *proto, void *conf,
    sws_uint_t head_flags, sws_uint_t default_port)
{
    sws_http_cgi_conf_t *c = conf;
    sws_http_cgi_ctx_t  *ctx;
    sws_http_upstream_t *u;
    sws_int_t            rc;

    /* A fresh cache hit before anything is made for the server. */
    if (c->pass == NULL) {
        rc = sws_http_upstream_cache_hit(r);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    ctx = sws_pcalloc(r->pool, sizeof(sws_http_cgi_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u = sws_http_upstream_create(r, proto, ctx, c->upstream);
    if (u == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->u = u;
    ctx->conf = conf;
    ctx->head = sws_http_cgi_head_create(u, proto->name, head_flags);
    if (ctx->head == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = sws_http_cgi_target(r, u, c, default_port);
    if (rc != SWS_OK) {
        return rc;
    }
    if (sws_http_has_body(r) && sws_http_content_length_in(r) < 0) {
        /* The program reads CONTENT_LENGTH bytes: a chunked body is read
         * whole first. */
        sws_http_upstream_set_request_buffering(u, 1);
    }
    return sws_http_upstream_start(r);
}

void
sws_http_cgi_reinit(sws_http_request_t *r, void *ctx)
{
    (void) r;
    sws_http_cgi_head_reset(((sws_http_cgi_ctx_t *) ctx)->head);
}

sws_int_t
sws_http_cgi_process_header(sws_http_request_t *r, void *ctx, sws_buf_t *b)
{
    (void) r;
    return sws_http_cgi_head_parse(((sws_http_cgi_ctx_t *) ctx)->head, b);
}

sws_int_t
sws_http_cgi_input_filter(sws_http_request_t *r, void *ctx, sws_http_upstream_input_t *in)
{
    (void) r;
    return sws_http_cgi_body(((sws_http_cgi_ctx_t *) ctx)->head, in);
}
