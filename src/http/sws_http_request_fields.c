/*
 * Heads made of fields (HTTP/2's HEADERS, HTTP/3's): what such a protocol
 * makes of them for the core, the same whichever it is. :method and :path
 * checked and taken as HTTP/1's parser takes them from a request line
 * (sws_http_parse_method_target: the same checks, the same 400s), the
 * line $request shows made only when it is asked for; the crumbs of a cookie (RFC 9113 8.2.3, RFC 9114 4.2.1) joined into
 * one Cookie field; and the fields of HTTP/1's connection management,
 * which their responses do not carry (RFC 9113 8.2.2, RFC 9114 4.2).
 * HTTP/2 and HTTP/3 use them.
 */
#include "sws_http_request_head.h"

/* "method SP target SP HTTP/version" in r's pool (len 0 if there is no
 * memory for it). */
static void
sws_http_request_line_make(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *target, const char *version)
{
    u_char  *p, *start;

    start = sws_pnalloc(r->pool, method->len + target->len + 10);
    if (start == NULL) {
        return;
    }
    p = sws_cpymem(start, method->data, method->len);
    *p++ = ' ';
    p = sws_cpymem(p, target->data, target->len);
    p = sws_cpymem(p, " HTTP/", 6);
    p = sws_cpymem(p, version, 3);
    r->request_line.data = start;
    r->request_line.len = p - start;
}

sws_int_t
sws_http_request_line_of_fields(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *path, const char *version)
{
    sws_http_request_line_t  rl;

    /* $request_length counts the line HTTP/1 would have sent */
    r->head_length += (off_t) (method->len + path->len + 9 + 2);
    if (sws_http_parse_method_target(&rl, method->data, method->len, path->data, path->len)
        != SWS_OK || rl.host.len)
    {
        /* (:path is never absolute); the log shows the line */
        sws_http_request_line_make(r, method, path, version);
        return SWS_HTTP_BAD_REQUEST;
    }
    sws_http_request_line_take(r, &rl);
    /* the line itself only when it is asked for (sws_http_request_line),
     * of the method as it came (an error_page may make it GET) */
    r->line_method = rl.method_name;
    return SWS_OK;
}

const sws_str_t *
sws_http_request_line(sws_http_request_t *r)
{
    if (r->request_line.len == 0 && r->line_method.len && r->unparsed_uri.len) {
        sws_http_request_line_make(r, &r->line_method, &r->unparsed_uri,
                                   r->http_version == SWS_HTTP_VERSION_20 ? "2.0" : "3.0");
    }
    return &r->request_line;
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
    const char *a, *b = NULL;

    /* by length first: most of a response's names are none of them */
    switch (name->len) {
    case 7:
        a = "upgrade";
        break;
    case 10:
        a = "connection";
        b = "keep-alive";
        break;
    case 16:
        a = "proxy-connection";
        break;
    case 17:
        a = "transfer-encoding";
        break;
    default:
        return 0;
    }
    return sws_strncasecmp(name->data, (u_char *) a, name->len) == 0
           || (b && sws_strncasecmp(name->data, (u_char *) b, name->len) == 0);
}
