/*
 * Heads made of fields (HTTP/2's HEADERS, HTTP/3's): what such a protocol
 * makes of them for the core, the same whichever it is. The request line
 * HTTP/1 would have sent, from :method and :path, through HTTP/1's parser
 * (so that the method and target are checked alike and $request shows
 * it); the crumbs of a cookie (RFC 9113 8.2.3, RFC 9114 4.2.1) joined into
 * one Cookie field; and the fields of HTTP/1's connection management,
 * which their responses do not carry (RFC 9113 8.2.2, RFC 9114 4.2).
 * HTTP/2 and HTTP/3 use them.
 */
#include "sws_http_request_head.h"

sws_int_t
sws_http_request_line_of_fields(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *path, const char *version)
{
    sws_http_request_line_t  rl;
    u_char                  *p, *start;
    sws_int_t                rc;

    start = sws_pnalloc(r->pool, method->len + path->len + 10);
    if (start == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = sws_cpymem(start, method->data, method->len);
    *p++ = ' ';
    p = sws_cpymem(p, path->data, path->len);
    p = sws_cpymem(p, " HTTP/1.1", 9);
    r->request_line.data = start;
    r->request_line.len = p - start;
    r->head_length += (off_t) r->request_line.len + 2;
    rc = sws_http_parse_request_line(&rl, start, p);
    sws_memcpy(p - 3, version, 3);      /* what $request shows */
    if (rc != SWS_OK || rl.host.len) {
        return SWS_HTTP_BAD_REQUEST;    /* (:path is never absolute) */
    }
    sws_http_request_line_take(r, &rl);
    return SWS_OK;
}

sws_int_t
sws_http_request_head_of_fields(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *path, const sws_array_t *cookies, const char *version,
    int too_large, sws_uint_t field_error, int in_closed)
{
    sws_int_t  rc;

    if (too_large) {
        return SWS_HTTP_HEADERS_TOO_LARGE;
    }
    if (field_error) {
        return (sws_int_t) field_error;
    }
    if (cookies && sws_http_request_cookie_join(r, cookies) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (method->len == 7 && memcmp(method->data, "CONNECT", 7) == 0) {
        /* no :path (RFC 9113 8.5, RFC 9114 4.4): no request line; the
         * core refuses CONNECT */
        sws_str_set(&r->method_name, "CONNECT");
        r->method = SWS_HTTP_CONNECT;
        return SWS_OK;
    }
    if (method->len == 0 || path->len == 0) {
        return SWS_HTTP_BAD_REQUEST;
    }
    rc = sws_http_request_line_of_fields(r, method, path, version);
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid request target \"%.*s\"",
                      (int) sws_min(path->len, 64), path->data);
        return rc;
    }
    if (!in_closed && r->content_length_n <= 0) {
        /* DATA frames will come: a body of unknown length */
        r->content_length_n = -1;
        r->chunked_in = 1;
    }
    return SWS_OK;
}

sws_int_t
sws_http_request_cookie_join(sws_http_request_t *r, const sws_array_t *crumbs)
{
    const sws_str_t   *ck = crumbs->elts;
    sws_http_header_t *h;
    sws_uint_t         i;
    size_t             len = 0;
    u_char            *p;

    for (i = 0; i < crumbs->nelts; i++) {
        len += ck[i].len + 2;
    }
    h = sws_array_push(&r->headers_in);
    p = sws_pnalloc(r->pool, len);
    if (h == NULL || p == NULL) {
        return SWS_ERROR;
    }
    sws_str_set(&h->name, "cookie");
    h->hash = sws_hash_key(h->name.data, h->name.len);
    h->value.data = p;
    for (i = 0; i < crumbs->nelts; i++) {
        if (i) {
            *p++ = ';';
            *p++ = ' ';
        }
        p = sws_cpymem(p, ck[i].data, ck[i].len);
    }
    h->value.len = p - h->value.data;
    return SWS_OK;
}

int
sws_http_connection_field(const sws_str_t *name)
{
    static const sws_str_t names[] = {
        sws_string("connection"), sws_string("keep-alive"), sws_string("proxy-connection"),
        sws_string("transfer-encoding"), sws_string("upgrade")
    };
    sws_uint_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (name->len == names[i].len
            && sws_strncasecmp(name->data, names[i].data, name->len) == 0)
        {
            return 1;
        }
    }
    return 0;
}
