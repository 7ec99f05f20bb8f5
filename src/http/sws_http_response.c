/* The response side of the SDK: status and headers, the filter chains and
 * their bottom ends (which hand the response to the protocol). */
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

void sws_http_set_buffered(sws_http_request_t *r, int on) { r->filter_buffered = on ? 1 : 0; }
int sws_http_buffered(sws_http_request_t *r) { return r->filter_buffered; }
int sws_http_header_sent(sws_http_request_t *r) { return r->header_sent; }
void sws_http_set_write_handler(sws_http_request_t *r, sws_http_event_handler_pt h) { r->write_event_handler = h; }
int sws_http_header_only(sws_http_request_t *r) { return r->header_only; }
void sws_http_set_status(sws_http_request_t *r, sws_uint_t status) { r->status = status; }
sws_uint_t sws_http_status(sws_http_request_t *r) { return r->status; }
void sws_http_set_content_length(sws_http_request_t *r, off_t n) { r->out_content_length = n; }
off_t sws_http_content_length(sws_http_request_t *r) { return r->out_content_length; }
const sws_str_t *sws_http_content_type(sws_http_request_t *r) { return &r->content_type; }
void sws_http_set_last_modified(sws_http_request_t *r, time_t t) { r->last_modified = t; }
time_t sws_http_last_modified(sws_http_request_t *r) { return r->last_modified; }
const sws_str_t *sws_http_etag(sws_http_request_t *r) { return &r->etag; }
void sws_http_allow_ranges(sws_http_request_t *r, int on) { r->allow_ranges = on ? 1 : 0; }
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
    r->etag.len = 0;
    r->etag.data = NULL;
    r->location.len = 0;
    r->location.data = NULL;
    r->allow_ranges = 0;
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
