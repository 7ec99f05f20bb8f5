/*
 * RFC 9111 4.4: an unsafe request (any method but GET, HEAD, OPTIONS and
 * TRACE: POST, PUT, DELETE, an unknown one such as M-SEARCH) that the
 * server answers with a non-error status invalidates the target URI, and
 * the URIs of the response's Location and Content-Location when they are
 * of the same origin. After an error (4xx, 5xx, no answer) nothing is
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
 * The path and query of uri (a Location or Content-Location value) if it
 * names the request's origin: a reference from the root ("/x"), or an
 * absolute URI of the request's scheme and Host. 0 if not.
 */
static int
sws_cache_same_origin(sws_http_request_t *r, const sws_str_t *uri, sws_str_t *path)
{
    const sws_str_t *scheme = sws_http_scheme(r), *host;
    sws_str_t        auth, req;
    u_char          *p = uri->data, *end = uri->data + uri->len, *slash;

    if (uri->len && p[0] == '/') {
        if (uri->len > 1 && p[1] == '/') {
            return 0;                  /* "//host/x": another authority */
        }
        *path = *uri;
        return 1;
    }
    if ((size_t) (end - p) < scheme->len + 3
        || sws_strncasecmp(p, scheme->data, scheme->len) != 0
        || memcmp(p + scheme->len, "://", 3) != 0)
    {
        return 0;                      /* another scheme, or relative: not ours to judge */
    }
    p += scheme->len + 3;
    slash = memchr(p, '/', (size_t) (end - p));
    auth.data = p;
    auth.len = (size_t) ((slash ? slash : end) - p);
    host = sws_http_header_in(r, "host", 4);
    if (host == NULL) {
        return 0;
    }
    req = *host;
    sws_cache_authority_trim(&auth, scheme);
    sws_cache_authority_trim(&req, scheme);
    if (auth.len == 0 || auth.len != req.len
        || sws_strncasecmp(auth.data, req.data, auth.len) != 0)
    {
        return 0;
    }
    if (slash == NULL) {
        path->data = (u_char *) "/";
        path->len = 1;
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
