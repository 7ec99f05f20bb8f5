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

char *
sws_http_cgi_pass(sws_conf_t *cf, sws_http_cgi_conf_t *c, const sws_str_t *addr,
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

sws_int_t
sws_http_cgi_target(sws_http_request_t *r, sws_http_upstream_t *u, const sws_http_cgi_conf_t *c,
    sws_uint_t default_port)
{
    sws_str_t  addr;
    sws_int_t  rc;

    if (c->pass == NULL) {
        return SWS_OK;
    }
    if (sws_http_format_string(c->pass, r, r->pool, 1, NULL, 0, &addr) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = sws_http_upstream_set_target(u, &addr, default_port);
    if (rc == SWS_DECLINED) {
        return SWS_HTTP_BAD_GATEWAY;
    }
    return rc == SWS_OK ? SWS_OK : SWS_HTTP_INTERNAL_SERVER_ERROR;
}
