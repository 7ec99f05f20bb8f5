/*
 * The request to the server, in one buffer written in one pass (after one
 * pass to measure it): the request line with nginx's URI rules, Host,
 * Connection, X-Forwarded-For/-Proto, X-Request-Id, the body framing, the
 * location's proxy_set_header lines, then the client's headers without the
 * hop-by-hop ones (Connection and what it names, Keep-Alive, TE, Trailer,
 * Transfer-Encoding, Upgrade, Proxy-Authorization, Proxy-Connection) and
 * without those the proxy replaces.
 */
#include "sws_proxy.h"

/* Bytes of a decoded path that are escaped again for the request line. */
static const uint8_t sws_proxy_uri_escape[256] = {
    [0x00 ... 0x20] = 1, ['"'] = 1, ['#'] = 1, ['%'] = 1, ['<'] = 1, ['>'] = 1,
    ['?'] = 1, ['\\'] = 1, ['^'] = 1, ['`'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1,
    [0x7f ... 0xff] = 1
};

static size_t
sws_proxy_escaped_len(const u_char *p, size_t len)
{
    size_t n = len, i;

    for (i = 0; i < len; i++) {
        n += 2 * sws_proxy_uri_escape[p[i]];
    }
    return n;
}

static u_char *
sws_proxy_escape(u_char *dst, const u_char *p, size_t len)
{
    static const u_char hex[] = "0123456789ABCDEF";
    size_t              i;

    for (i = 0; i < len; i++) {
        if (sws_proxy_uri_escape[p[i]]) {
            *dst++ = '%';
            *dst++ = hex[p[i] >> 4];
            *dst++ = hex[p[i] & 0xf];
        } else {
            *dst++ = p[i];
        }
    }
    return dst;
}

/*
 * The URI to send. Without a URI part in proxy_pass: the target as the
 * client sent it (or, after an internal redirect, the normalised URI). With
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
    if (t->uri.data == NULL && !sws_http_is_internal(r) && raw->len && raw->data[0] == '/') {
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
    len = (t->uri.data ? t->uri.len : 0) + sws_proxy_escaped_len(rest, rest_len)
          + (args->len ? 1 + args->len : 0);
    p = sws_pnalloc(sws_http_pool(r), len ? len : 1);
    if (p == NULL) {
        return SWS_ERROR;
    }
    out->data = p;
    if (t->uri.data) {
        p = sws_cpymem(p, t->uri.data, t->uri.len);
    }
    p = sws_proxy_escape(p, rest, rest_len);
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

/* Does a Connection header of the client name this (lower-case) header? */
static int
sws_proxy_connection_names(sws_http_request_t *r, const sws_str_t *name)
{
    const sws_array_t       *hs = sws_http_headers_in(r);
    const sws_http_header_t *h = hs->elts;
    sws_uint_t               i;
    u_char                  *p, *last, *s, *e;

    for (i = 0; i < hs->nelts; i++) {
        if (h[i].name.len != 10 || memcmp(h[i].name.data, "connection", 10) != 0) {
            continue;
        }
        p = h[i].value.data;
        last = p + h[i].value.len;
        while (p < last) {
            while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
                p++;
            }
            for (s = p; p < last && *p != ','; p++) { /* the token */ }
            for (e = p; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--) { /* trim */ }
            if ((size_t) (e - s) == name->len
                && sws_strncasecmp(s, name->data, name->len) == 0)
            {
                return 1;
            }
        }
    }
    return 0;
}

/* The client's conditional and range fields: not sent when a cache takes
 * the response (it wants the whole one; the filters apply them later). */
static int
sws_proxy_conditional(const sws_str_t *name)
{
    static const char *const names[] = {
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
        "if-range", "range", NULL
    };
    sws_uint_t i;

    for (i = 0; names[i]; i++) {
        if (name->len == strlen(names[i]) && memcmp(name->data, names[i], name->len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Is the client's header h one the proxy does not pass on? */
static int
sws_proxy_skip(sws_http_request_t *r, sws_proxy_headers_t *hs, const sws_http_header_t *h,
    int check_connection, int for_cache)
{
    const u_char *n = h->name.data;

    if (for_cache && sws_proxy_conditional(&h->name)) {
        return 1;
    }
    switch (h->name.len) {
    case 2:
        return memcmp(n, "te", 2) == 0;
    case 4:
        return memcmp(n, "host", 4) == 0;
    case 6:
        if (memcmp(n, "expect", 6) == 0) {
            return 1;                  /* the proxy answered 100-continue itself */
        }
        break;
    case 7:
        if (memcmp(n, "trailer", 7) == 0 || memcmp(n, "upgrade", 7) == 0) {
            return 1;
        }
        break;
    case 10:
        if (memcmp(n, "connection", 10) == 0 || memcmp(n, "keep-alive", 10) == 0) {
            return 1;
        }
        break;
    case 12:
        if (memcmp(n, "x-request-id", 12) == 0 && sws_http_request_id(r)->len) {
            return 1;                  /* ours replaces it */
        }
        break;
    case 14:
        if (memcmp(n, "content-length", 14) == 0) {
            return 1;
        }
        break;
    case 15:
        if (memcmp(n, "x-forwarded-for", 15) == 0) {
            return 1;                  /* appended to in ours */
        }
        break;
    case 16:
        if (memcmp(n, "proxy-connection", 16) == 0) {
            return 1;
        }
        break;
    case 17:
        if (memcmp(n, "transfer-encoding", 17) == 0 || memcmp(n, "x-forwarded-proto", 17) == 0) {
            return 1;
        }
        break;
    case 19:
        if (memcmp(n, "proxy-authorization", 19) == 0) {
            return 1;
        }
        break;
    }
    if (hs->names && sws_hash_find(hs->names, n, h->name.len)) {
        return 1;                      /* proxy_set_header replaces it */
    }
    return check_connection && sws_proxy_connection_names(r, &h->name);
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

#define SWS_PROXY_LINE(name)  (sizeof(name ": \r\n") - 1)

sws_int_t
sws_proxy_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_proxy_ctx_t          *ctx = data;
    sws_proxy_loc_conf_t     *plcf = ctx->plcf;
    sws_proxy_headers_t      *hs = plcf->headers;
    sws_http_upstream_t      *u = ctx->u;
    const sws_array_t        *hin = sws_http_headers_in(r);
    const sws_http_header_t  *h = hin->elts;
    const sws_str_t          *method = sws_http_method_name(r), *rid = sws_http_request_id(r);
    const sws_str_t          *upgrade = NULL;
    sws_str_t                 uri, xff, inm, ims;
    sws_uint_t                i, mode = sws_http_upstream_body_mode(u);
    u_char                    skip_small[128], *skip = skip_small;
    u_char                    num[24], *numend = num;
    size_t                    len, *dlen = NULL;
    int                       v11 = plcf->http_version == SWS_HTTP_VERSION_11;
    int                       check_conn = sws_http_header_in(r, "connection", 10) != NULL;
    const char               *conn = NULL, *te = NULL;
    off_t                     body_len;
    sws_buf_t                *b;
    sws_chain_t              *cl, *body, **ll;
    u_char                   *p;

    int                       for_cache;

    if (sws_proxy_uri(r, ctx, &uri) != SWS_OK) {
        return SWS_ERROR;
    }
    for_cache = sws_http_upstream_cache_request(u, &inm, &ims);
    if (for_cache < 0) {
        return SWS_ERROR;
    }

    /* The body's framing. */
    if (mode == SWS_UPSTREAM_BODY_NONE) {
        if (sws_http_header_in(r, "content-length", 14) && !sws_http_has_body(r)) {
            numend = sws_cpymem(num, "0", 1);        /* "Content-Length: 0" stays */
        }
    } else {
        body_len = sws_http_upstream_body_length(u);
        if (body_len >= 0) {
            numend = sws_sprint_uint(num, (uint64_t) body_len);
        } else {
            te = "chunked";
            ctx->chunked_body = 1;
        }
    }

    if (ctx->upgrade) {
        upgrade = sws_http_header_in(r, "upgrade", 7);
        conn = "upgrade";
    } else if (!v11 || !sws_http_upstream_can_keepalive(u)) {
        conn = "close";
    }

    /* Measure. */
    len = method->len + 1 + uri.len + sizeof(" HTTP/1.1\r\n") - 1;
    if (!hs->host) {
        len += SWS_PROXY_LINE("Host") + ctx->t->host.len;
    }
    if (conn && !hs->connection) {
        len += SWS_PROXY_LINE("Connection") + strlen(conn);
    }
    if (upgrade && !hs->upgrade) {
        len += SWS_PROXY_LINE("Upgrade") + upgrade->len;
    }
    if (!hs->xff) {
        if (sws_proxy_xff(r, &xff) != SWS_OK) {
            return SWS_ERROR;
        }
        len += SWS_PROXY_LINE("X-Forwarded-For") + xff.len;
    }
    if (!hs->xfp) {
        len += SWS_PROXY_LINE("X-Forwarded-Proto") + sws_http_scheme(r)->len;
    }
    if (rid->len && !hs->xrid) {
        len += SWS_PROXY_LINE("X-Request-Id") + rid->len;
    }
    if (numend > num) {
        len += SWS_PROXY_LINE("Content-Length") + (size_t) (numend - num);
    }
    if (te) {
        len += SWS_PROXY_LINE("Transfer-Encoding") + strlen(te);
    }
    if (inm.len) {
        len += SWS_PROXY_LINE("If-None-Match") + inm.len;
    }
    if (ims.len) {
        len += SWS_PROXY_LINE("If-Modified-Since") + ims.len;
    }
    len += hs->static_text.len;
    if (hs->ndynamic) {
        dlen = sws_palloc(sws_http_pool(r), hs->ndynamic * sizeof(size_t));
        if (dlen == NULL) {
            return SWS_ERROR;
        }
        for (i = 0; i < hs->ndynamic; i++) {
            dlen[i] = sws_http_format_len(hs->dynamic[i].value, r);
            if (dlen[i]) {
                len += hs->dynamic[i].name.len + 4 + dlen[i];
            }
        }
    }
    if (plcf->pass_request_headers) {
        if (hin->nelts > sizeof(skip_small)) {
            skip = sws_pnalloc(sws_http_pool(r), hin->nelts);
            if (skip == NULL) {
                return SWS_ERROR;
            }
        }
        for (i = 0; i < hin->nelts; i++) {
            skip[i] = (u_char) sws_proxy_skip(r, hs, &h[i], check_conn, for_cache);
            if (!skip[i]) {
                len += h[i].name.len + 2 + h[i].value.len + 2;
            }
        }
    }
    len += 2;

    /* Write. */
    b = sws_create_temp_buf(sws_http_pool(r), len);
    cl = sws_alloc_chain_link(sws_http_pool(r));
    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    p = b->last;
    p = sws_cpymem(p, method->data, method->len);
    *p++ = ' ';
    p = sws_cpymem(p, uri.data, uri.len);
    p = sws_cpymem(p, v11 ? " HTTP/1.1\r\n" : " HTTP/1.0\r\n", 11);

#define SWS_PROXY_PUT(name, v, vlen) \
    p = sws_cpymem(p, name ": ", sizeof(name ": ") - 1); \
    p = sws_cpymem(p, v, vlen); *p++ = '\r'; *p++ = '\n'

    if (!hs->host) {
        SWS_PROXY_PUT("Host", ctx->t->host.data, ctx->t->host.len);
    }
    if (conn && !hs->connection) {
        SWS_PROXY_PUT("Connection", conn, strlen(conn));
    }
    if (upgrade && !hs->upgrade) {
        SWS_PROXY_PUT("Upgrade", upgrade->data, upgrade->len);
    }
    if (!hs->xff) {
        SWS_PROXY_PUT("X-Forwarded-For", xff.data, xff.len);
    }
    if (!hs->xfp) {
        SWS_PROXY_PUT("X-Forwarded-Proto", sws_http_scheme(r)->data, sws_http_scheme(r)->len);
    }
    if (rid->len && !hs->xrid) {
        SWS_PROXY_PUT("X-Request-Id", rid->data, rid->len);
    }
    if (numend > num) {
        SWS_PROXY_PUT("Content-Length", num, (size_t) (numend - num));
    }
    if (te) {
        SWS_PROXY_PUT("Transfer-Encoding", te, strlen(te));
    }
    if (inm.len) {
        SWS_PROXY_PUT("If-None-Match", inm.data, inm.len);
    }
    if (ims.len) {
        SWS_PROXY_PUT("If-Modified-Since", ims.data, ims.len);
    }
    if (hs->static_text.len) {
        p = sws_cpymem(p, hs->static_text.data, hs->static_text.len);
    }
    for (i = 0; i < hs->ndynamic; i++) {
        if (dlen[i] == 0) {
            continue;                  /* an empty value: no header */
        }
        p = sws_cpymem(p, hs->dynamic[i].name.data, hs->dynamic[i].name.len);
        *p++ = ':';
        *p++ = ' ';
        p = sws_http_format_render(hs->dynamic[i].value, r, p);
        *p++ = '\r';
        *p++ = '\n';
    }
    if (plcf->pass_request_headers) {
        for (i = 0; i < hin->nelts; i++) {
            if (skip[i]) {
                continue;
            }
            p = sws_cpymem(p, h[i].name.data, h[i].name.len);
            *p++ = ':';
            *p++ = ' ';
            p = sws_cpymem(p, h[i].value.data, h[i].value.len);
            *p++ = '\r';
            *p++ = '\n';
        }
    }
    *p++ = '\r';
    *p++ = '\n';
#undef SWS_PROXY_PUT
    b->last = p;

    cl->buf = b;
    cl->next = NULL;
    *out = cl;

    if (mode == SWS_UPSTREAM_BODY_BUFFERED) {
        ll = &cl->next;
        for (body = sws_http_request_body(r); body; body = body->next) {
            cl = sws_alloc_chain_link(sws_http_pool(r));
            if (cl == NULL) {
                return SWS_ERROR;
            }
            cl->buf = body->buf;
            cl->next = NULL;
            *ll = cl;
            ll = &cl->next;
        }
    }
    return SWS_OK;
}

/* Streaming a body of unknown length: each piece as a chunk. */
void
sws_proxy_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last)
{
    sws_proxy_ctx_t *ctx = data;
    u_char           head[20];
    size_t           size = (size_t) (b->last - b->pos), n;

    (void) r;

    if (!ctx->chunked_body) {
        return;
    }
    if (size) {
        n = (size_t) (sws_slprintf(head, head + sizeof(head), "%zx\r\n", size) - head);
        b->pos -= n;
        memcpy(b->pos, head, n);
        b->last = sws_cpymem(b->last, "\r\n", 2);
    }
    if (last) {
        b->last = sws_cpymem(b->last, "0\r\n\r\n", 5);
    }
}
