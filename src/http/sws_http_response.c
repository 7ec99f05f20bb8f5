/* The response side of the SDK: status and headers, the filter chains and
 * their bottom ends (which hand the response to the protocol). */
#include <stdio.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "sws_http_core.h"

sws_http_header_filter_pt sws_http_top_header_filter;
sws_http_body_filter_pt   sws_http_top_body_filter;

static sws_int_t
sws_http_core_header_filter(sws_http_request_t *r)
{
    sws_uint_t status;

    /* A page served for error_page keeps the error's status. */
    if (r->err_status && (r->status == SWS_HTTP_OK || r->status == 0)) {
        r->status = r->err_status;
    }
    /* ... and a 401's challenge (sws_http_special.c kept it), whatever
     * the page's status ("error_page 401 = /sign_in": nginx's keep it) */
    if (sws_unlikely(r->err_headers_out != NULL)
        && sws_http_header_out(r, "www-authenticate", 16) == NULL)
    {
        sws_http_header_t *h = r->err_headers_out->elts;
        sws_uint_t         i;

        for (i = 0; i < r->err_headers_out->nelts; i++) {
            if (sws_http_header_out_add(r, &h[i].name, &h[i].value) == NULL) {
                return SWS_ERROR;
            }
        }
    }
    status = r->status;
    r->header_sent = 1;
    if (r->method == SWS_HTTP_HEAD || status < 200 || status == 204 || status == 304) {
        r->header_only = 1;
    }
    return r->proto->send_header(r);
}

static sws_int_t
sws_http_core_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    return r->proto->send_body(r, in);
}

sws_int_t
sws_http_header_filter_init(sws_conf_t *cf)
{
    sws_http_top_header_filter = sws_http_core_header_filter;
    sws_http_top_body_filter = sws_http_core_body_filter;
    return SWS_OK;
}

sws_http_header_filter_pt
sws_http_insert_header_filter(sws_http_header_filter_pt f)
{
    sws_http_header_filter_pt next = sws_http_top_header_filter;
    sws_http_top_header_filter = f;
    return next;
}

sws_http_body_filter_pt
sws_http_insert_body_filter(sws_http_body_filter_pt f)
{
    sws_http_body_filter_pt next = sws_http_top_body_filter;
    sws_http_top_body_filter = f;
    return next;
}

sws_int_t
sws_http_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n)
{
    if (status < 100 || status > 199 || status == SWS_HTTP_CONTINUE
        || status == SWS_HTTP_SWITCHING_PROTOCOLS || r->header_sent
        || r->http_version < SWS_HTTP_VERSION_11 || r->proto->send_interim == NULL)
    {
        return SWS_DECLINED;
    }
    return r->proto->send_interim(r, status, headers, n);
}

/*
 * absolute_redirect (on by default, as nginx): a Location the server made
 * that starts with "/" goes out as scheme://host[:port]/... (an upstream's
 * goes as it came, as nginx passes it, also from a cache), host being the
 * request's Host (or server_name with server_name_in_redirect, or without a
 * Host), the port the listening one unless it is the scheme's default.
 */
static sws_int_t
sws_http_absolute_location(sws_http_request_t *r)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const struct sockaddr    *sa;
    sws_str_t                 host = r->host;
    sws_uint_t                port = 0, dflt;
    size_t                    len;
    u_char                   *start, *p;

    if (clcf->server_name_in_redirect || host.len == 0) {
        host = sws_http_core_srv(r)->server_name;
    }
    if (clcf->port_in_redirect && r->session && r->session->addr) {
        sa = (const struct sockaddr *) &r->session->addr->lsn->sockaddr;
        if (sa->sa_family == AF_INET) {
            port = ntohs(((const struct sockaddr_in *) sa)->sin_port);
        } else if (sa->sa_family == AF_INET6) {
            port = ntohs(((const struct sockaddr_in6 *) sa)->sin6_port);
        }
        dflt = (r->schema.len == 5) ? 443 : 80;
        if (port == dflt) {
            port = 0;
        }
    }

    len = r->schema.len + sizeof("://:65535") - 1 + host.len + r->location.len;
    start = sws_pnalloc(r->pool, len);
    if (start == NULL) {
        return SWS_ERROR;
    }
    p = sws_cpymem(start, r->schema.data, r->schema.len);
    p = sws_cpymem(p, "://", 3);
    p = sws_cpymem(p, host.data, host.len);
    if (port) {
        p += sprintf((char *) p, ":%u", (unsigned) port);
    }
    p = sws_cpymem(p, r->location.data, r->location.len);
    r->location.data = start;
    r->location.len = (size_t) (p - start);
    return SWS_OK;
}


sws_int_t
sws_http_send_header(sws_http_request_t *r)
{
    if (r->header_sent) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "header already sent");
        return SWS_ERROR;
    }
    if (r->status == 0) {
        r->status = SWS_HTTP_OK;
    }
    /* A page served for error_page goes out with the error's status: set
     * here, before the filters, so that they all see it (add_header's
     * status list, the range and conditional filters), as in nginx. */
    if (r->err_status && r->status == SWS_HTTP_OK) {
        r->status = r->err_status;
    }
    /* A Last-Modified the server made only with 200, 206 and 304, as
     * nginx: an error page made from a file (error_page 404 /404.html)
     * does not claim to be the resource. One the origin sent is its own. */
    if (r->status != SWS_HTTP_OK && r->status != SWS_HTTP_PARTIAL_CONTENT
        && r->status != SWS_HTTP_NOT_MODIFIED && !r->last_modified_passed)
    {
        r->last_modified = -1;
    }
    if (r->location.len && r->location.data[0] == '/' && r->loc_conf && !r->location_as_is
        && sws_http_core_loc(r)->absolute_redirect
        && sws_http_absolute_location(r) != SWS_OK)
    {
        return SWS_ERROR;
    }
    /* conditional requests first, as nginx's not-modified filter (the top
     * of its chain): on the producer's validators, and every filter sees
     * the 304 or 412 */
    if (sws_http_not_modified_check(r) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_http_top_header_filter(r);
}

sws_int_t
sws_http_output(sws_http_request_t *r, sws_chain_t *in)
{
    sws_chain_t *cl;

    if (r->header_only) {
        /* HEAD, 204, 304: the body is dropped, only the end matters. */
        for (cl = in; cl; cl = cl->next) {
            if (cl->buf->last_buf) {
                return r->proto->send_body(r, NULL);
            }
        }
        return SWS_OK;
    }
    return sws_http_top_body_filter(r, in);
}

sws_int_t
sws_http_send_special(sws_http_request_t *r, int last)
{
    sws_buf_t   *b;
    sws_chain_t  out;

    b = sws_calloc_buf(r->pool);
    if (b == NULL) {
        return SWS_ERROR;
    }
    if (last) {
        b->last_buf = 1;
    } else {
        b->flush = 1;
    }
    b->sync = 1;
    out.buf = b;
    out.next = NULL;
    return sws_http_output(r, &out);
}

sws_int_t
sws_http_output_resume(sws_http_request_t *r)
{
    return sws_http_top_body_filter(r, NULL);
}

void
sws_http_set_buffered(sws_http_request_t *r, int on)
{
    if (on) {
        r->filter_buffered |= 1;
    } else {
        r->filter_buffered &= ~1u;
    }
}

void sws_http_set_gzip_vary(sws_http_request_t *r) { r->gzip_vary = 1; }
int sws_http_gzip_vary(sws_http_request_t *r) { return r->gzip_vary; }
int sws_http_buffered(sws_http_request_t *r) { return r->filter_buffered != 0; }
int sws_http_header_sent(sws_http_request_t *r) { return r->header_sent; }
void sws_http_set_write_handler(sws_http_request_t *r, sws_http_event_handler_pt h) { r->write_event_handler = h; }
int sws_http_header_only(sws_http_request_t *r) { return r->header_only; }
void sws_http_set_status(sws_http_request_t *r, sws_uint_t status) { r->status = status; }
sws_uint_t sws_http_status(sws_http_request_t *r) { return r->status; }
void sws_http_set_content_length(sws_http_request_t *r, off_t n) { r->out_content_length = n; }
off_t sws_http_content_length(sws_http_request_t *r) { return r->out_content_length; }
const sws_str_t *sws_http_content_type(sws_http_request_t *r) { return &r->content_type; }
void
sws_http_set_last_modified(sws_http_request_t *r, time_t t)
{
    r->last_modified = t;
    r->last_modified_passed = 0;       /* the server's own */
}

time_t sws_http_last_modified(sws_http_request_t *r) { return r->last_modified; }
const sws_str_t *sws_http_response_date(sws_http_request_t *r) { return &r->date; }
const sws_str_t *sws_http_etag(sws_http_request_t *r) { return &r->etag; }
void
sws_http_allow_ranges(sws_http_request_t *r, int on)
{
    r->allow_ranges = on ? 1 : 0;
    r->single_range = 0;
}

void
sws_http_allow_single_range(sws_http_request_t *r)
{
    r->allow_ranges = 1;
    r->single_range = 1;
}

int sws_http_ranges_allowed(sws_http_request_t *r) { return r->allow_ranges; }
const sws_array_t *sws_http_headers_out(sws_http_request_t *r) { return &r->headers_out; }

void
sws_http_set_content_type(sws_http_request_t *r, const sws_str_t *type)
{
    if (type) {
        r->content_type = *type;
    } else {
        r->content_type.len = 0;
        r->content_type.data = NULL;
    }
}

void
sws_http_set_etag(sws_http_request_t *r, const sws_str_t *etag)
{
    if (etag) {
        r->etag = *etag;
    } else {
        r->etag.len = 0;
        r->etag.data = NULL;
    }
}

sws_int_t
sws_http_weak_etag(sws_http_request_t *r)
{
    u_char  *p;

    if (r->etag.len >= 2 && r->etag.data[0] == 'W' && r->etag.data[1] == '/') {
        return SWS_OK;                  /* weak already */
    }
    if (r->etag.len < 2 || r->etag.data[0] != '"') {
        r->etag.len = 0;                /* none, or not an entity-tag: dropped, as by nginx */
        return SWS_OK;
    }
    p = sws_pnalloc(r->pool, r->etag.len + 2);
    if (p == NULL) {
        return SWS_ERROR;
    }
    p[0] = 'W';
    p[1] = '/';
    sws_memcpy(p + 2, r->etag.data, r->etag.len);
    r->etag.data = p;
    r->etag.len += 2;
    return SWS_OK;
}

/* Lower-case hex of v, no leading zeros. */
static u_char *
sws_http_etag_hex(u_char *p, uint64_t v)
{
    static const u_char  hex[] = "0123456789abcdef";
    u_char               tmp[16], *t = tmp + sizeof(tmp);

    do {
        *--t = hex[v & 0xf];
        v >>= 4;
    } while (v);
    return sws_cpymem(p, t, (size_t) (tmp + sizeof(tmp) - t));
}

u_char *
sws_http_etag_make(u_char *buf, time_t mtime, off_t size)
{
    /* nginx's form, so that caches in front keep their tags when a site
     * moves between the two servers */
    *buf++ = '"';
    buf = sws_http_etag_hex(buf, (uint64_t) mtime);
    *buf++ = '-';
    buf = sws_http_etag_hex(buf, (uint64_t) size);
    *buf++ = '"';
    return buf;
}

void
sws_http_set_location(sws_http_request_t *r, const sws_str_t *location)
{
    /* A relative reference is a valid Location (RFC 9110 10.2.2). */
    r->location = *location;
    r->location_as_is = 0;
}

const sws_str_t *
sws_http_location(sws_http_request_t *r)
{
    return &r->location;
}

void
sws_http_clear_response(sws_http_request_t *r)
{
    r->status = 0;
    r->headers_out.nelts = 0;
    r->out_content_length = -1;
    r->content_type.len = 0;
    r->content_type.data = NULL;
    r->last_modified = -1;
    r->last_modified_passed = 0;
    r->date.len = 0;
    r->etag.len = 0;
    r->etag.data = NULL;
    r->location.len = 0;
    r->location.data = NULL;
    r->location_as_is = 0;
    r->allow_ranges = 0;
    r->single_range = 0;
    r->trailers_out = NULL;
    r->expect_trailers = 0;
}

void
sws_http_expect_trailers(sws_http_request_t *r)
{
    r->expect_trailers = 1;
}

sws_http_header_t *
sws_http_trailer_out_add(sws_http_request_t *r, const sws_str_t *name, const sws_str_t *value)
{
    sws_http_header_t *h;

    if (r->trailers_out == NULL) {
        r->trailers_out = sws_array_create(r->pool, 4, sizeof(sws_http_header_t));
        if (r->trailers_out == NULL) {
            return NULL;
        }
    }
    h = sws_array_push(r->trailers_out);
    if (h == NULL) {
        return NULL;
    }
    h->name = *name;
    h->value = *value;
    h->hash = 1;
    return h;
}

const sws_array_t *
sws_http_trailers_out(sws_http_request_t *r)
{
    return r->trailers_out;
}

sws_http_header_t *
sws_http_header_out_add(sws_http_request_t *r, const sws_str_t *name, const sws_str_t *value)
{
    sws_http_header_t *h = sws_array_push(&r->headers_out);

    if (h == NULL) {
        return NULL;
    }
    h->name = *name;
    h->value = *value;
    h->hash = 1;
    return h;
}

void
sws_http_header_out_remove(sws_http_request_t *r, const char *name, size_t len)
{
    sws_http_header_t *h = r->headers_out.elts;
    sws_uint_t         i, j = 0;

    for (i = 0; i < r->headers_out.nelts; i++) {
        if (h[i].name.len == len
            && sws_strncasecmp(h[i].name.data, (const u_char *) name, len) == 0)
        {
            continue;
        }
        h[j++] = h[i];
    }
    r->headers_out.nelts = j;
}

sws_http_header_t *
sws_http_header_out(sws_http_request_t *r, const char *name, size_t len)
{
    sws_http_header_t *h = r->headers_out.elts;
    sws_uint_t         i;

    for (i = 0; i < r->headers_out.nelts; i++) {
        if (h[i].name.len == len
            && sws_strncasecmp(h[i].name.data, (const u_char *) name, len) == 0)
        {
            return &h[i];
        }
    }
    return NULL;
}

sws_int_t
sws_http_send_response(sws_http_request_t *r, sws_uint_t status, const sws_str_t *content_type,
    const sws_str_t *body)
{
    sws_buf_t   *b;
    sws_chain_t  out;
    sws_int_t    rc;

    r->status = status;
    sws_http_set_content_type(r, content_type);
    sws_http_set_content_length(r, body ? (off_t) body->len : 0);

    rc = sws_http_send_header(r);
    if (rc != SWS_OK) {
        return rc;
    }
    if (r->header_only || body == NULL || body->len == 0) {
        return sws_http_send_special(r, 1);
    }
    b = sws_create_temp_buf(r->pool, body->len);
    if (b == NULL) {
        return SWS_ERROR;
    }
    b->last = sws_cpymem(b->last, body->data, body->len);
    b->last_buf = 1;
    out.buf = b;
    out.next = NULL;
    return sws_http_output(r, &out);
}
