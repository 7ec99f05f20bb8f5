/*
 * The server's response, as far as it is the proxy's: Location rewritten
 * by proxy_redirect, ranges cut here by proxy_force_ranges. The rest (the head parsed, interim responses,
 * hop-by-hop fields, framing, reuse, the body decoded) is the framework's
 * HTTP/1 client (sws_http_upstream_h1_*), which calls the hook below for
 * each end-to-end field.
 */
#include "sws_proxy.h"

/* proxy_redirect: the first rule whose FROM starts the value rewrites it. */
static sws_int_t
sws_proxy_rewrite_location(sws_http_request_t *r, sws_proxy_ctx_t *ctx, sws_str_t *v)
{
    sws_proxy_loc_conf_t *plcf = ctx->plcf;
    sws_proxy_redirect_t *pr, dflt;
    sws_array_t          *rules = plcf->redirects;
    sws_uint_t            i, n = rules ? rules->nelts : 1;
    sws_str_t             from, to;
    u_char               *p;

    for (i = 0; i < n; i++) {
        if (rules) {
            pr = (sws_proxy_redirect_t *) rules->elts + i;
        } else {
            sws_memzero(&dflt, sizeof(dflt));
            dflt.is_default = 1;
            pr = &dflt;
        }
        if (pr->is_default) {
            /* proxy_pass's URL (and URI part) -> the location */
            if (ctx->t->url.data == NULL) {
                continue;
            }
            from = ctx->t->url;
            if (ctx->t->uri.data) {
                to = plcf->location;
            } else {
                sws_str_set(&to, "/");
            }
        } else {
            from = pr->from;
            to = pr->to;
        }
        if (pr->is_default) {
            /* from is "http://authority" + (uri or "/") */
            size_t ulen = ctx->t->uri.data ? ctx->t->uri.len : 1;
            const u_char *udata = ctx->t->uri.data ? ctx->t->uri.data : (const u_char *) "/";
            if (v->len < from.len + ulen
                || sws_strncasecmp(v->data, from.data, from.len) != 0
                || memcmp(v->data + from.len, udata, ulen) != 0)
            {
                continue;
            }
            from.len += ulen;
        } else if (v->len < from.len || memcmp(v->data, from.data, from.len) != 0) {
            continue;
        }
        p = sws_pnalloc(sws_http_pool(r), to.len + v->len - from.len);
        if (p == NULL) {
            return SWS_ERROR;
        }
        memcpy(p, to.data, to.len);
        memcpy(p + to.len, v->data + from.len, v->len - from.len);
        v->data = p;
        v->len = to.len + v->len - from.len;
        return SWS_OK;
    }
    return SWS_OK;
}

sws_int_t
sws_proxy_response_header(sws_http_request_t *r, void *data, const sws_str_t *name,
    const u_char *lcname, sws_str_t *value)
{
    sws_proxy_ctx_t  *ctx = data;

    if (name->len == 8 && memcmp(lcname, "location", 8) == 0) {
        return sws_proxy_rewrite_location(r, data, value);
    }
    if (name->len == 10 && memcmp(lcname, "set-cookie", 10) == 0
        && (ctx->plcf->cookie_domains || ctx->plcf->cookie_paths))
    {
        return sws_proxy_rewrite_cookie(r, ctx->plcf, value);
    }
    return SWS_OK;
}

/*
 * proxy_force_ranges: the range filter cuts a client's Range from the
 * response (a 200 of known length) as if the server had offered ranges,
 * whose own Accept-Ranges is dropped (the filter sends one where it
 * applies). One range only: several get the whole (200), as in nginx,
 * since the body streams through buffers that cannot be held for a
 * multipart/byteranges. The cache keeps the whole response all the same.
 */
sws_int_t
sws_proxy_process_header(sws_http_request_t *r, void *data, sws_buf_t *b)
{
    sws_proxy_ctx_t  *ctx = data;
    sws_int_t         rc;

    rc = sws_http_upstream_h1_process_header(r, data, b);
    if (rc == SWS_OK && ctx->plcf->force_ranges) {
        sws_http_header_out_remove(r, "Accept-Ranges", 13);
        sws_http_allow_single_range(r);
    }
    return rc;
}
