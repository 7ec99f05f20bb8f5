/* The HTTP/1.1 response head, built in one buffer from the response fields. */
#include "sws_http_h1.h"
#include "sws_swar.h"
#include "sws_times_internal.h"

/* keepalive_disable: MSIE 6 and older after a POST, Safari (nginx's tests
 * of the User-Agent). */
static int
sws_http1_keepalive_disabled(sws_http_request_t *r, sws_uint_t which)
{
    const sws_str_t  *ua;
    const u_char     *p, *last;

    if ((which & SWS_HTTP_KEEPALIVE_DISABLE_MSIE6) && r->method == SWS_HTTP_POST
        && (ua = sws_http_header_in(r, "user-agent", 10)) != NULL)
    {
        last = ua->data + ua->len;
        for (p = ua->data; p + 7 <= last; p++) {
            if (memcmp(p, "MSIE ", 5) == 0 && p[5] >= '1' && p[5] <= '6' && p[6] == '.') {
                return 1;
            }
        }
    }
    if ((which & SWS_HTTP_KEEPALIVE_DISABLE_SAFARI)
        && (ua = sws_http_header_in(r, "user-agent", 10)) != NULL)
    {
        last = ua->data + ua->len;
        for (p = ua->data; p + 7 <= last; p++) {
            if (memcmp(p, "Safari/", 7) == 0) {
                return 1;
            }
            if (memcmp(p, "Chrome/", 7) == 0) {
                return 0;              /* Chrome says Safari too */
            }
        }
    }
    return 0;
}

void
sws_http1_decide_keepalive(sws_http_request_t *r)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);

    if (r->keepalive
        && (clcf->keepalive_timeout == 0
            || r->session->requests >= clcf->keepalive_requests
            || sws_now_msec() - r->session->start_msec >= clcf->keepalive_time
            || sws_exiting || r->connection->close
            || (clcf->keepalive_disable && sws_http1_keepalive_disabled(r,
                                                                 clcf->keepalive_disable))))
    {
        r->keepalive = 0;
    }
    /* Answered before reading a body the client holds back until a 100
     * Continue: the connection is closed after the response (the rest of
     * the body never comes), so say so (RFC 9110 10.1.1). */
    if (r->keepalive && r->expect_continue && !r->continue_sent
        && (r->content_length_n > 0 || r->chunked_in) && !(r->body && r->body->finished))
    {
        r->keepalive = 0;
    }
}

#define SWS_HEAD_FIELD(name)  (sizeof(name ": \r\n") - 1)

#define SWS_SERVER_FULL  "Server: scalws/" SCALWS_VERSION "\r\nDate: "
#define SWS_SERVER_BARE  "Server: scalws\r\nDate: "

/* Room for the fields every response has (Server, Date, Connection,
 * X-Request-Id) and the empty line. */
static size_t
sws_http1_common_len(sws_http_request_t *r)
{
    return sizeof(SWS_SERVER_FULL "\r\n") - 1 + sws_cached_http_time()->len
           + sizeof("Connection: keep-alive\r\n") - 1
           + SWS_HEAD_FIELD("X-Request-Id") + r->request_id.len + 2;
}

static u_char *
sws_http1_server_date(sws_http_request_t *r, u_char *p)
{
    /* the response's own (a stored one's: exactly this length), or now */
    const sws_str_t *date = r->date.len ? &r->date : sws_cached_http_time();

    if (sws_http_core_loc(r)->server_tokens) {
        p = sws_cpymem(p, SWS_SERVER_FULL, sizeof(SWS_SERVER_FULL) - 1);
    } else {
        p = sws_cpymem(p, SWS_SERVER_BARE, sizeof(SWS_SERVER_BARE) - 1);
    }
    /* a length the compiler knows: moves, not a call to memcpy */
    p = sws_cpymem(p, date->data, SWS_HTTP_TIME_LEN);
    return sws_cpymem(p, "\r\n", 2);
}

/* Connection, X-Request-Id and the empty line that ends the head. */
static u_char *
sws_http1_head_end(sws_http_request_t *r, u_char *p)
{
    if (r->upgrade) {
        p = sws_cpymem(p, "Connection: upgrade\r\n", 21);
    } else if (!r->keepalive) {
        p = sws_cpymem(p, "Connection: close\r\n", 19);
    } else if (r->http_version == SWS_HTTP_VERSION_10) {
        p = sws_cpymem(p, "Connection: keep-alive\r\n", 24);
    }
    if (r->request_id.len && sws_http_core_loc(r)->request_id) {
        p = sws_cpymem(p, "X-Request-Id: ", 14);
        p = sws_cpymem(p, r->request_id.data, r->request_id.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    return sws_cpymem(p, "\r\n", 2);
}

sws_buf_t *
sws_http1_build_head(sws_http_request_t *r)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *line = sws_http_status_line(r->status);
    sws_http_header_t        *h = r->headers_out.elts;
    sws_buf_t                *b;
    sws_uint_t                i;
    size_t                    len;
    u_char                   *p;
    int                       body_allowed = !(r->status < 200 || r->status == 204
                                               || r->status == 304);
    unsigned                  own = 0;     /* 1: a Server field given, 2: a Date */

    /* Body length: known, chunked (1.1), or until close (1.0). */
    r->chunked_out = 0;
    if (r->out_content_length < 0 && body_allowed && !r->header_only) {
        if (r->http_version >= SWS_HTTP_VERSION_11 && clcf->chunked_transfer_encoding) {
            r->chunked_out = 1;
        } else {
            r->keepalive = 0;
        }
    } else if (r->expect_trailers && body_allowed && !r->header_only
               && r->http_version >= SWS_HTTP_VERSION_11 && clcf->chunked_transfer_encoding)
    {
        /* Trailer fields need the chunked framing, whatever the length
         * (as nginx does). */
        r->chunked_out = 1;
        r->out_content_length = -1;
    }
    sws_http1_decide_keepalive(r);

    len = sizeof("HTTP/1.1 \r\n") - 1 + line->len + sws_http1_common_len(r);
    if (r->content_type.len) {
        len += SWS_HEAD_FIELD("Content-Type") + r->content_type.len;
    }
    if (r->out_content_length >= 0 && (body_allowed || r->status == 304)) {
        len += SWS_HEAD_FIELD("Content-Length") + 20;
    }
    if (r->chunked_out) {
        len += sizeof("Transfer-Encoding: chunked\r\n") - 1;
    }
    if (r->last_modified >= 0) {
        len += SWS_HEAD_FIELD("Last-Modified") + 29;
    }
    if (r->etag.len) {
        len += SWS_HEAD_FIELD("ETag") + r->etag.len;
    }
    if (r->location.len) {
        len += SWS_HEAD_FIELD("Location") + r->location.len;
    }
    for (i = 0; i < r->headers_out.nelts; i++) {
        len += h[i].name.len + 2 + h[i].value.len + 2;
        /* A Server or Date the handler passed on (a proxied server's)
         * replaces ours. */
        if ((h[i].name.len == 6 && sws_strncasecmp(h[i].name.data, (u_char *) "server", 6) == 0)
            || (h[i].name.len == 4 && sws_strncasecmp(h[i].name.data, (u_char *) "date", 4) == 0))
        {
            own |= h[i].name.len == 6 ? 1 : 2;
        }
    }

    b = sws_create_temp_buf(r->pool, len);
    if (b == NULL) {
        return NULL;
    }
    p = sws_cpymem(b->last, "HTTP/1.1 ", 9);
    p = sws_swar_copy(p, line->data, line->len);     /* (short: no memcpy call) */
    p = sws_cpymem(p, "\r\n", 2);
    if (own == 0) {
        p = sws_http1_server_date(r, p);
    } else {
        /* the lines without the "Date: " they end with */
        if (!(own & 1) && clcf->server_tokens) {
            p = sws_cpymem(p, SWS_SERVER_FULL, sizeof(SWS_SERVER_FULL) - 7);
        } else if (!(own & 1)) {
            p = sws_cpymem(p, SWS_SERVER_BARE, sizeof(SWS_SERVER_BARE) - 7);
        }
        if (!(own & 2)) {
            p = sws_cpymem(p, "Date: ", 6);
            p = sws_cpymem(p, r->date.len ? r->date.data : sws_cached_http_time()->data,
                           SWS_HTTP_TIME_LEN);
            p = sws_cpymem(p, "\r\n", 2);
        }
    }
    if (r->content_type.len) {
        p = sws_cpymem(p, "Content-Type: ", 14);
        p = sws_swar_copy(p, r->content_type.data, r->content_type.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (r->out_content_length >= 0 && (body_allowed || r->status == 304)) {
        p = sws_cpymem(p, "Content-Length: ", 16);
        p = sws_sprint_uint(p, (uint64_t) r->out_content_length);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (r->chunked_out) {
        p = sws_cpymem(p, "Transfer-Encoding: chunked\r\n", 28);
    }
    if (r->last_modified >= 0) {
        p = sws_cpymem(p, "Last-Modified: ", 15);
        p = sws_http_time(p, r->last_modified);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (r->etag.len) {
        p = sws_cpymem(p, "ETag: ", 6);
        p = sws_swar_copy(p, r->etag.data, r->etag.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (r->location.len) {
        p = sws_cpymem(p, "Location: ", 10);
        p = sws_cpymem(p, r->location.data, r->location.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    for (i = 0; i < r->headers_out.nelts; i++) {
        if (h[i].hash == 0) {
            continue;
        }
        p = sws_swar_copy(p, h[i].name.data, h[i].name.len);
        *p++ = ':';
        *p++ = ' ';
        p = sws_swar_copy(p, h[i].value.data, h[i].value.len);
        *p++ = '\r';
        *p++ = '\n';
    }
    b->last = sws_http1_head_end(r, p);
    return b;
}

/* ---- fixed responses: one buffer, no header structures ---- */

sws_int_t
sws_http1_send_fixed(sws_http_request_t *r, const sws_str_t *status_line,
    const sws_str_t *type, const sws_str_t *fields, const sws_str_t *body, sws_uint_t status)
{
    sws_buf_t   *b;
    sws_chain_t *cl;
    u_char      *p;
    int          head = r->method == SWS_HTTP_HEAD || status < 200
                        || status == 204 || status == 304;

    r->status = status;
    r->header_sent = 1;
    r->header_only = head;
    sws_http1_decide_keepalive(r);

    b = sws_create_temp_buf(r->pool, status_line->len
                                     + (type ? sizeof("Content-Type: \r\n") - 1 + type->len : 0)
                                     + fields->len + sws_http1_common_len(r)
                                     + (head ? 0 : body->len));
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    /* short pieces: copied without calls to memcpy */
    p = sws_swar_copy(b->last, status_line->data, status_line->len);
    p = sws_http1_server_date(r, p);
    if (type) {
        p = sws_swar_copy(p, (const u_char *) "Content-Type: ", 14);
        p = sws_swar_copy(p, type->data, type->len);
        *p++ = '\r';
        *p++ = '\n';
    }
    p = sws_swar_copy(p, fields->data, fields->len);
    p = sws_http1_head_end(r, p);
    r->header_size = p - b->last;
    if (!head && body->len) {
        p = sws_swar_copy(p, body->data, body->len);
    }
    b->last = p;
    b->last_buf = 1;
    r->out_content_length = (off_t) body->len;
    cl->buf = b;
    cl->next = NULL;
    if (r->out == NULL) {
        r->out = cl;
    } else {
        sws_chain_t *t = r->out;        /* the rest of a 100 Continue */
        while (t->next) {
            t = t->next;
        }
        t->next = cl;
    }
    return SWS_OK;
}
