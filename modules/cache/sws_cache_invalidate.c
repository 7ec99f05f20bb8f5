/*
 * RFC 9111 4.4: an unsafe request (any method but GET, HEAD, OPTIONS and
 * TRACE: POST, PUT, DELETE, an unknown one such as M-SEARCH) that the
 * server answers with a non-error status invalidates the target URI, and
 * the URIs of the response's Location and Content-Location when they are
 * of the same origin (relative references resolved against the target). After an error (4xx, 5xx, no answer) nothing is
 * invalidated. The lookup asks to see the response's head
 * (SWS_UPSTREAM_CACHE_WATCH); store_header calls here.
 */
#include "sws_cache.h"

int
sws_cache_method_unsafe(sws_uint_t method)
{
    return !(method & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_OPTIONS | SWS_HTTP_TRACE));
}

/* The port part of an authority, without the scheme's default. */
static void
sws_cache_authority_trim(sws_str_t *a, const sws_str_t *scheme)
{
    const char *dflt = scheme->len == 5 ? ":443" : ":80";
    size_t      n = strlen(dflt);

    if (a->len > n && memcmp(a->data + a->len - n, dflt, n) == 0) {
        a->len -= n;
    }
}

/*
 * A reference relative to the request's target ("x", "../y", "?q",
 * RFC 3986 5.2.2) resolved to a path and query, into pool memory. 0 when
 * the target is not a path (an absolute-form target).
 */
static int
sws_cache_resolve(sws_http_request_t *r, const u_char *ref, size_t len, sws_str_t *path)
{
    const sws_str_t  *target = sws_http_unparsed_uri(r);

    path->data = sws_pnalloc(sws_http_pool(r), target->len + len + 1);
    if (path->data == NULL) {
        return 0;
    }
    path->len = sws_cache_ref_resolve(target->data, target->len, ref, len, path->data);
    return path->len != 0;
}

/* The authority of a request without Host (HTTP/2's, HTTP/3's
 * :authority): its host, and the port it came to. */
static sws_int_t
sws_cache_authority(sws_http_request_t *r, sws_str_t *auth)
{
    sws_cache_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);   /* this location's */
    const sws_str_t       *host = sws_http_host(r);
    sws_str_t              port;

    if (host->len == 0 || lcf->main == NULL || lcf->main->server_port == NULL
        || sws_http_format_string(lcf->main->server_port, r, sws_http_pool(r), 0, NULL, 0,
                                  &port) != SWS_OK)
    {
        return SWS_ERROR;
    }
    auth->len = host->len + 1 + port.len;
    auth->data = sws_pnalloc(sws_http_pool(r), auth->len);
    if (auth->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(auth->data, host->data, host->len);
    auth->data[host->len] = ':';
    memcpy(auth->data + host->len + 1, port.data, port.len);
    return SWS_OK;
}

/*
 * The path and query of uri (a Location or Content-Location value, a
 * URI-reference: RFC 9110 10.2.2, 8.7) if it names the request's origin:
 * a reference relative to the target ("x", "../y") or from the root
 * ("/x"), or a URI of the request's scheme and Host ("//host/x",
 * "http://host/x"). Its fragment does not count. 0 if not.
 */
static int
sws_cache_same_origin(sws_http_request_t *r, const sws_str_t *uri, sws_str_t *path)
{
    const sws_str_t *scheme = sws_http_scheme(r), *host;
    sws_str_t        auth, req;
    u_char          *p = uri->data, *end, *slash, *c;

    end = memchr(uri->data, '#', uri->len);
    if (end == NULL) {
        end = uri->data + uri->len;
    }
    if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
        p += 2;                                /* a network-path reference */
    } else if (p < end && p[0] == '/') {
        path->data = p;
        path->len = (size_t) (end - p);
        return 1;
    } else {
        for (c = p; c < end && *c != ':' && *c != '/' && *c != '?'; c++) { /* void */ }
        if (c == end || *c != ':') {
            return sws_cache_resolve(r, p, (size_t) (end - p), path);
        }
        if ((size_t) (end - p) < scheme->len + 3
            || sws_strncasecmp(p, scheme->data, scheme->len) != 0
            || memcmp(p + scheme->len, "://", 3) != 0)
        {
            return 0;                          /* another scheme */
        }
        p += scheme->len + 3;
    }
    slash = p;
    while (slash < end && *slash != '/' && *slash != '?') {
        slash++;
    }
    auth.data = p;
    auth.len = (size_t) (slash - p);
    host = sws_http_header_in(r, "host", 4);
    if (host) {
        req = *host;
    } else if (sws_cache_authority(r, &req) != SWS_OK) {
        return 0;
    }
    sws_cache_authority_trim(&auth, scheme);
    sws_cache_authority_trim(&req, scheme);
    if (auth.len == 0 || auth.len != req.len
        || sws_strncasecmp(auth.data, req.data, auth.len) != 0)
    {
        return 0;
    }
    if (slash == end || *slash == '?') {       /* "http://host" is "http://host/" */
        path->data = sws_pnalloc(sws_http_pool(r), (size_t) (end - slash) + 1);
        if (path->data == NULL) {
            return 0;
        }
        path->data[0] = '/';
        memcpy(path->data + 1, slash, (size_t) (end - slash));
        path->len = (size_t) (end - slash) + 1;
    } else {
        path->data = slash;
        path->len = (size_t) (end - slash);
    }
    return 1;
}

/* The key of another URI of this origin: the request's key with its
 * request target replaced (the key must end with $request_uri, as the
 * default keys do; a key made otherwise cannot be derived: 0). */
static int
sws_cache_key_of(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *path,
    sws_str_t *key)
{
    const sws_str_t *target = sws_http_unparsed_uri(r);
    size_t           prefix;

    if (ctx->key.len < target->len
        || memcmp(ctx->key.data + ctx->key.len - target->len, target->data, target->len) != 0)
    {
        return 0;
    }
    prefix = ctx->key.len - target->len;
    key->len = prefix + path->len;
    key->data = sws_pnalloc(sws_http_pool(r), key->len);
    if (key->data == NULL) {
        return 0;
    }
    memcpy(key->data, ctx->key.data, prefix);
    memcpy(key->data + prefix, path->data, path->len);
    return 1;
}

static void
sws_cache_invalidate_uri(sws_http_request_t *r, sws_cache_ctx_t *ctx, const sws_str_t *uri)
{
    sws_str_t path, key;

    if (uri && uri->len && sws_cache_same_origin(r, uri, &path)
        && sws_cache_key_of(r, ctx, &path, &key))
    {
        sws_cache_invalidate(ctx->path, &key, sws_http_log(r));
    }
}

void
sws_cache_invalidate_after(sws_http_request_t *r, sws_cache_ctx_t *ctx)
{
    sws_uint_t          status = sws_http_status(r);
    sws_http_header_t  *cl;

    if (status < 200 || status >= 400) {
        return;                        /* an error: nothing changed */
    }
    sws_cache_invalidate(ctx->path, &ctx->key, sws_http_log(r));
    sws_cache_invalidate_uri(r, ctx, sws_http_location(r));
    cl = sws_http_header_out(r, "content-location", sizeof("content-location") - 1);
    if (cl) {
        sws_cache_invalidate_uri(r, ctx, &cl->value);
    }
}
