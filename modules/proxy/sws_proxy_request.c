/*
 * The proxy's part of the request to the server: the URI by nginx's rules,
 * Host, X-Request-Id, X-Forwarded-For/-Proto for an application's pass (a
 * plain proxy_pass sends them only when proxy_set_header says so, as
 * nginx) and the location's proxy_set_header lines, and which of the
 * client's fields those replace.
 * The framework's HTTP/1 client writes the head with them
 * (sws_http_upstream_h1_create_request): the Connection and framing lines,
 * and the client's fields without the hop-by-hop ones.
 */
#include "sws_proxy.h"

/*
 * The URI to send. Without a URI part in proxy_pass: the target as the
 * client sent it (or, after an internal redirect or "set $args", the
 * normalised URI and the args). With
 * one: the part of the normalised URI that matched the location replaced by
 * it; the query follows as received.
 */
static sws_int_t
sws_proxy_uri(sws_http_request_t *r, sws_proxy_ctx_t *ctx, sws_str_t *out)
{
    sws_proxy_loc_conf_t     *plcf = ctx->plcf;
    const sws_proxy_target_t *t = ctx->t;
    const sws_str_t *uri = sws_http_uri(r), *args = sws_http_args(r);
    const sws_str_t *raw = sws_http_unparsed_uri(r);
    const u_char    *rest;
    size_t           rest_len, len;
    u_char          *p;

    if (plcf->url_fmt && t->uri.data) {
        /* With variables, the URI part replaces the whole URI (nginx's rule). */
        *out = t->uri;
        return SWS_OK;
    }
    if (t->uri.data == NULL && sws_http_unparsed_uri_valid(r) && raw->len && raw->data[0] == '/') {
        *out = *raw;
        return SWS_OK;
    }
    if (t->uri.data == NULL) {
        rest = uri->data;
        rest_len = uri->len;
    } else {
        len = plcf->location_kind == SWS_HTTP_LOC_EXACT ? uri->len
              : sws_min(plcf->location.len, uri->len);
        rest = uri->data + len;
        rest_len = uri->len - len;
    }
    len = (t->uri.data ? t->uri.len : 0) + sws_escape_uri_len(rest, rest_len, SWS_ESCAPE_URI_PATH)
          + (args->len ? 1 + args->len : 0);
    p = sws_pnalloc(sws_http_pool(r), len ? len : 1);
    if (p == NULL) {
        return SWS_ERROR;
    }
    out->data = p;
    if (t->uri.data) {
        p = sws_cpymem(p, t->uri.data, t->uri.len);
    }
    p = sws_escape_uri(p, rest, rest_len, SWS_ESCAPE_URI_PATH);   /* decoded: again */
    if (args->len) {
        *p++ = '?';
        p = sws_cpymem(p, args->data, args->len);
    }
    out->len = (size_t) (p - out->data);
    if (out->len == 0) {
        out->data = (u_char *) "/";
        out->len = 1;
    }
    return SWS_OK;
}

/* Does the proxy replace the client's field h (sent its own, or none)? */
static int
sws_proxy_replaces(void *data, const sws_http_header_t *h)
{
    sws_proxy_ctx_t     *ctx = data;
    sws_proxy_headers_t *hs = ctx->plcf->headers;
    const u_char        *n = h->name.data;

    switch (h->name.len) {
    case 12:
        if (memcmp(n, "x-request-id", 12) == 0 && ctx->rid) {
            return 1;                  /* ours replaces it */
        }
        break;
    case 15:
        if (memcmp(n, "x-forwarded-for", 15) == 0 && ctx->plcf->app) {
            return 1;                  /* appended to in ours */
        }
        break;
    case 17:
        if (memcmp(n, "x-forwarded-proto", 17) == 0 && ctx->plcf->app) {
            return 1;
        }
        break;
    }
    return hs->names && sws_hash_find(hs->names, n, h->name.len);   /* proxy_set_header */
}

sws_int_t
sws_proxy_xff(sws_http_request_t *r, sws_str_t *out)
{
    const sws_array_t       *hs = sws_http_headers_in(r);
    const sws_http_header_t *h = hs->elts;
    const sws_str_t         *addr = sws_http_remote_addr(r);
    sws_uint_t               i;
    size_t                   len = addr->len;
    u_char                  *p;

    for (i = 0; i < hs->nelts; i++) {
        if (h[i].name.len == 15 && memcmp(h[i].name.data, "x-forwarded-for", 15) == 0
            && h[i].value.len)
        {
            len += h[i].value.len + 2;
        }
    }
    if (len == addr->len) {
        *out = *addr;
        return SWS_OK;
    }
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    out->data = p;
    for (i = 0; i < hs->nelts; i++) {
        if (h[i].name.len == 15 && memcmp(h[i].name.data, "x-forwarded-for", 15) == 0
            && h[i].value.len)
        {
            p = sws_cpymem(p, h[i].value.data, h[i].value.len);
            *p++ = ',';
            *p++ = ' ';
        }
    }
    p = sws_cpymem(p, addr->data, addr->len);
    out->len = (size_t) (p - out->data);
    return SWS_OK;
}

/* What an application gets as Host: the client's, as it sent it (its
 * port too: an application builds its absolute URLs from it), or the
 * request's host name (HTTP/2's :authority, HTTP/1.0 without Host). */
static sws_str_t
sws_proxy_client_host(sws_http_request_t *r, sws_proxy_ctx_t *ctx)
{
    const sws_array_t       *hs = sws_http_headers_in(r);
    const sws_http_header_t *h = hs->elts;
    sws_uint_t               i;

    for (i = 0; i < hs->nelts; i++) {
        if (h[i].name.len == 4 && memcmp(h[i].name.data, "host", 4) == 0 && h[i].value.len) {
            return h[i].value;
        }
    }
    return sws_http_host(r)->len ? *sws_http_host(r) : ctx->t->host;
}

/* A format's text for r, in the request's pool. */
static sws_int_t
sws_proxy_render(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out)
{
    return sws_http_format_string(f, r, sws_http_pool(r), 0, NULL, 0, out);
}

/* What is the proxy's own in the request; the rest (framing, Connection,
 * the client's fields without the hop-by-hop ones) is the framework's
 * HTTP/1 client (sws_http_upstream_h1_create_request). */
sws_int_t
sws_proxy_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    static const sws_str_t          xff_name = sws_string("X-Forwarded-For");
    static const sws_str_t          xfp_name = sws_string("X-Forwarded-Proto");
    static const sws_str_t          xrid_name = sws_string("X-Request-Id");
    sws_proxy_ctx_t                *ctx = data;
    sws_proxy_loc_conf_t           *plcf = ctx->plcf;
    sws_proxy_headers_t            *hs = plcf->headers;
    const sws_str_t                *rid = sws_http_request_id(r);
    sws_http_upstream_h1_request_t  rq;
    sws_str_t                       body;
    sws_http_header_t              *f;
    sws_uint_t                      i, n = 0;

    sws_memzero(&rq, sizeof(rq));
    ctx->rid = rid->len != 0;
    if (sws_proxy_uri(r, ctx, &rq.target) != SWS_OK) {
        return SWS_ERROR;
    }
    f = sws_palloc(sws_http_pool(r), (3 + hs->ndynamic) * sizeof(sws_http_header_t));
    if (f == NULL) {
        return SWS_ERROR;
    }
    if (plcf->app && !hs->xff) {
        f[n].name = xff_name;
        if (sws_proxy_xff(r, &f[n++].value) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (plcf->app && !hs->xfp) {
        f[n].name = xfp_name;
        f[n++].value = *sws_http_scheme(r);
    }
    if (rid->len && !hs->xrid) {
        f[n].name = xrid_name;
        f[n++].value = *rid;
    }
    for (i = 0; i < hs->ndynamic; i++) {
        f[n].name = hs->dynamic[i].name;
        /* An empty value: no field (and the client's is not sent either). */
        if (sws_http_format_string(hs->dynamic[i].value, r, sws_http_pool(r), 0, NULL, 0,
                                   &f[n].value) != SWS_OK)
        {
            return SWS_ERROR;
        }
        n++;
    }
    if (!hs->host) {
        rq.host = plcf->app ? sws_proxy_client_host(r, ctx) : ctx->t->host;
    }
    rq.fields = f;
    rq.nfields = n;
    rq.text = hs->static_text;
    rq.replaces = sws_proxy_replaces;
    rq.data = ctx;
    rq.http10 = plcf->http_version != SWS_HTTP_VERSION_11;
    rq.upgrade = ctx->upgrade;
    rq.own_connection = hs->connection;
    rq.own_upgrade = hs->upgrade;
    rq.no_client_fields = !plcf->pass_request_headers;
    if (sws_unlikely(hs->no_length)) {
        rq.own_length = 1;
    }
    if ((plcf->method && sws_proxy_render(r, plcf->method, &rq.method) != SWS_OK)
        || (plcf->body && sws_proxy_render(r, plcf->body, &body) != SWS_OK))
    {
        return SWS_ERROR;
    }
    if (plcf->body) {
        rq.body = &body;
    }
    return sws_http_upstream_h1_create_request(ctx->u, &rq, out);
}
