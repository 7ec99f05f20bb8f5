/* Status lines and the generated responses for errors and bodiless codes. */
#include "sws_http_core.h"

typedef struct {
    sws_uint_t  code;
    sws_str_t   line;     /* "404 Not Found" */
} sws_http_status_t;

#define S(code, text) { code, sws_string(#code " " text) }

static const sws_http_status_t sws_http_statuses[] = {
    S(100, "Continue"), S(101, "Switching Protocols"),
    S(102, "Processing"), S(103, "Early Hints"),
    S(200, "OK"), S(201, "Created"), S(202, "Accepted"),
    S(203, "Non-Authoritative Information"), S(204, "No Content"), S(205, "Reset Content"),
    S(206, "Partial Content"),
    S(300, "Multiple Choices"), S(301, "Moved Permanently"), S(302, "Found"),
    S(303, "See Other"), S(304, "Not Modified"), S(307, "Temporary Redirect"),
    S(308, "Permanent Redirect"),
    S(400, "Bad Request"), S(401, "Unauthorized"), S(402, "Payment Required"),
    S(403, "Forbidden"), S(404, "Not Found"), S(405, "Method Not Allowed"),
    S(406, "Not Acceptable"), S(407, "Proxy Authentication Required"),
    S(408, "Request Timeout"), S(409, "Conflict"), S(410, "Gone"),
    S(411, "Length Required"), S(412, "Precondition Failed"), S(413, "Content Too Large"),
    S(414, "URI Too Long"), S(415, "Unsupported Media Type"), S(416, "Range Not Satisfiable"),
    S(417, "Expectation Failed"), S(421, "Misdirected Request"),
    S(422, "Unprocessable Content"), S(425, "Too Early"), S(426, "Upgrade Required"),
    S(428, "Precondition Required"), S(429, "Too Many Requests"),
    S(431, "Request Header Fields Too Large"), S(451, "Unavailable For Legal Reasons"),
    S(500, "Internal Server Error"), S(501, "Not Implemented"), S(502, "Bad Gateway"),
    S(503, "Service Unavailable"), S(504, "Gateway Timeout"),
    S(505, "HTTP Version Not Supported"), S(507, "Insufficient Storage"),
};

#undef S

const sws_str_t *
sws_http_status_line(sws_uint_t status)
{
    static u_char     buf[8][5];
    static sws_str_t  unknown[8];
    static sws_uint_t next;
    /* the last registered code asked for: 200 on most responses */
    static const sws_http_status_t *last = &sws_http_statuses[0];
    sws_uint_t        lo = 0, hi = sws_nelems(sws_http_statuses), mid;
    sws_str_t        *s;

    if (status == last->code) {
        return &last->line;
    }
    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (sws_http_statuses[mid].code == status) {
            last = &sws_http_statuses[mid];
            return &last->line;
        }
        if (sws_http_statuses[mid].code < status) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    /* An unregistered code: "NNN " with an empty reason phrase is valid. */
    s = &unknown[next];
    u_char *p = buf[next];
    next = (next + 1) % 8;
    p[0] = (u_char) ('0' + status / 100 % 10);
    p[1] = (u_char) ('0' + status / 10 % 10);
    p[2] = (u_char) ('0' + status % 10);
    p[3] = ' ';
    s->data = p;
    s->len = 4;
    return s;
}

static int
sws_http_status_has_body(sws_uint_t status)
{
    return !(status < 200 || status == 204 || status == 304);
}

/* The codes nginx has a page for (its ngx_http_error_pages), and 431 (nginx
 * answers 400 there): the others answer with an empty body. */
static int
sws_http_status_has_page(sws_uint_t status)
{
    switch (status) {
    case 301: case 302: case 303: case 307: case 308:
    case 421: case 429: case 431: case 500: case 501: case 502: case 503: case 504:
    case 505: case 507:
        return 1;
    default:
        return (status >= 400 && status <= 416 && status != 407);
    }
}

/* The WWW-Authenticate fields of a 401 go with the page served for it
 * (as nginx's do): kept aside, since the redirect clears the response,
 * and put back by the core header filter (sws_http_response.c). */
static sws_int_t
sws_http_keep_challenges(sws_http_request_t *r)
{
    sws_http_header_t *h = r->headers_out.elts, *k;
    sws_uint_t         i;

    for (i = 0; i < r->headers_out.nelts; i++) {
        if (h[i].hash == 0 || h[i].name.len != 16
            || sws_strncasecmp(h[i].name.data, (const u_char *) "www-authenticate", 16) != 0)
        {
            continue;
        }
        if (r->err_headers_out == NULL) {
            r->err_headers_out = sws_array_create(r->pool, 1, sizeof(sws_http_header_t));
            if (r->err_headers_out == NULL) {
                return SWS_ERROR;
            }
        }
        k = sws_array_push(r->err_headers_out);
        if (k == NULL) {
            return SWS_ERROR;
        }
        *k = h[i];
    }
    return SWS_OK;
}

static sws_int_t
sws_http_try_error_page(sws_http_request_t *r, sws_uint_t status)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_http_error_page_t    *ep;
    sws_uint_t                i;
    sws_str_t                 uri, args = sws_null_string;
    u_char                   *q;

    if (clcf->error_pages == NULL || r->error_page) {
        return SWS_DECLINED;
    }
    ep = clcf->error_pages->elts;
    for (i = 0; i < clcf->error_pages->nelts; i++) {
        if (ep[i].status != status) {
            continue;
        }
        /* the page's own error gets the built-in page, unless the location
         * that sent it there says recursive_error_pages (as nginx; the
         * internal redirects stay bounded) */
        r->error_page = clcf->recursive_error_pages ? 0 : 1;
        if (status == SWS_HTTP_UNAUTHORIZED && sws_http_keep_challenges(r) != SWS_OK) {
            return SWS_ERROR;
        }
        uri = ep[i].uri;
        if (ep[i].uri_fmt
            && sws_http_format_string(ep[i].uri_fmt, r, r->pool, 0, NULL, 0, &uri) != SWS_OK)
        {
            return SWS_ERROR;
        }
        if (uri.len == 0) {
            return SWS_DECLINED;            /* nothing to go to: the built-in page */
        }
        if (uri.data[0] != '/' && uri.data[0] != '@') {
            /* a URL: a redirect there, 302 unless "=CODE" is one */
            sws_uint_t  code = (sws_uint_t) ep[i].overwrite;

            if (!(code == 301 || code == 302 || code == 303 || code == 307 || code == 308)) {
                code = SWS_HTTP_MOVED_TEMPORARILY;
            }
            sws_http_clear_response(r);
            sws_http_set_location(r, &uri);
            /* sent: SWS_OK (or SWS_ERROR) */
            return sws_http_special_response(r, code) == SWS_ERROR ? SWS_ERROR : SWS_OK;
        }
        if (uri.data[0] == '@') {
            /* a named location keeps the method, as nginx */
            r->err_status = ep[i].overwrite >= 0 ? (sws_uint_t) ep[i].overwrite : status;
            sws_http_named_location(r, &uri);
            return SWS_DONE;
        }
        q = memchr(uri.data, '?', uri.len);
        if (q) {
            args.data = q + 1;
            args.len = uri.data + uri.len - q - 1;
            uri.len = q - uri.data;
        }
        if (r->method != SWS_HTTP_HEAD) {
            r->method = SWS_HTTP_GET;
            sws_str_set(&r->method_name, "GET");
        }
        /* The page goes out with the error's status unless "=CODE" (0: the
         * page's own status). */
        r->err_status = ep[i].overwrite >= 0 ? (sws_uint_t) ep[i].overwrite : status;
        sws_http_internal_redirect(r, &uri, &args);
        return SWS_DONE;
    }
    return SWS_DECLINED;
}

/* The title of a page: nginx's words where they are older than RFC 9110's
 * (the status line keeps RFC 9110's: clients ignore its words), so that
 * the page's bytes are nginx's. */
static const sws_str_t *
sws_http_page_title(sws_uint_t status)
{
    static const sws_http_status_t  titles[] = {
        { 401, sws_string("401 Authorization Required") },
        { 405, sws_string("405 Not Allowed") },
        { 408, sws_string("408 Request Time-out") },
        { 413, sws_string("413 Request Entity Too Large") },
        { 414, sws_string("414 Request-URI Too Large") },
        { 416, sws_string("416 Requested Range Not Satisfiable") },
        { 503, sws_string("503 Service Temporarily Unavailable") },
        { 504, sws_string("504 Gateway Time-out") },
    };
    sws_uint_t  i;

    for (i = 0; i < sws_nelems(titles); i++) {
        if (titles[i].code == status) {
            return &titles[i].line;
        }
    }
    return sws_http_status_line(status);
}

/* nginx's own 4xx codes (sws_http_core.h): answered 400, with a page
 * that says why. */
static const sws_str_t *
sws_http_nginx_reason(sws_uint_t status)
{
    static const sws_str_t  reasons[] = {
        sws_string("The SSL certificate error"),                       /* 495 */
        sws_string("No required SSL certificate was sent"),            /* 496 */
        sws_string("The plain HTTP request was sent to HTTPS port"),   /* 497 */
    };

    if (status < SWS_HTTP_SSL_CERT_ERROR || status > SWS_HTTP_TO_HTTPS) {
        return NULL;
    }
    return &reasons[status - SWS_HTTP_SSL_CERT_ERROR];
}

/* nginx's page, byte for byte but the server's name, so that clients and
 * tests written against nginx see the same bytes. */
sws_int_t
sws_http_error_page_make(sws_http_request_t *r, sws_uint_t status, sws_buf_t **out)
{
    sws_http_core_loc_conf_t *clcf;
    const sws_str_t          *line, *title, *reason;
    sws_buf_t                *b;
    size_t                    len;
    u_char                   *p;

    *out = NULL;
    reason = sws_http_nginx_reason(status);
    if (reason) {
        status = SWS_HTTP_BAD_REQUEST;
    }
    if (!sws_http_status_has_body(status) || !sws_http_status_has_page(status)) {
        return SWS_OK;
    }
    clcf = r->loc_conf ? sws_http_core_loc(r) : NULL;
    line = sws_http_page_title(status);
    title = line;
    len = sizeof("<html>\r\n<head><title></title></head>\r\n<body>\r\n<center><h1></h1>"
                 "</center>\r\n<hr><center>scalws</center>\r\n</body>\r\n</html>\r\n") - 1
          + 2 * line->len
          + ((clcf == NULL || clcf->server_tokens) ? sizeof("/" SCALWS_VERSION) - 1 : 0);
    if (reason) {
        /* "<title>400 REASON</title>", and "<center>REASON</center>\r\n"
         * under the heading */
        len += 4 + reason->len - line->len + 8 + reason->len + 11;
    }
    b = sws_create_temp_buf(r->pool, len);
    if (b == NULL) {
        return SWS_ERROR;
    }
    p = b->last;
    p = sws_cpymem(p, "<html>\r\n<head><title>", 21);
    if (reason) {
        p = sws_cpymem(p, "400 ", 4);
        title = reason;
    }
    p = sws_cpymem(p, title->data, title->len);
    p = sws_cpymem(p, "</title></head>\r\n<body>\r\n<center><h1>", 37);
    p = sws_cpymem(p, line->data, line->len);
    p = sws_cpymem(p, "</h1></center>\r\n", 16);
    if (reason) {
        p = sws_cpymem(p, "<center>", 8);
        p = sws_cpymem(p, reason->data, reason->len);
        p = sws_cpymem(p, "</center>\r\n", 11);
    }
    p = sws_cpymem(p, "<hr><center>scalws", 18);
    if (clcf == NULL || clcf->server_tokens) {
        p = sws_cpymem(p, "/" SCALWS_VERSION, sizeof("/" SCALWS_VERSION) - 1);
    }
    p = sws_cpymem(p, "</center>\r\n</body>\r\n</html>\r\n", 29);
    b->last = p;
    *out = b;
    return SWS_OK;
}

sws_int_t
sws_http_special_response(sws_http_request_t *r, sws_uint_t status)
{
    sws_http_header_t        *allow;
    sws_uint_t                page;
    sws_str_t                 allow_value = sws_null_string, location;
    sws_buf_t                *b;
    sws_chain_t               out;
    sws_int_t                 rc;
    static const sws_str_t    html = sws_string("text/html");

    if (sws_http_nginx_reason(status)) {
        r->keepalive = 0;                      /* before any error_page, as nginx */
    }
    if (status >= 300 && r->loc_conf) {
        rc = sws_http_try_error_page(r, status);
        if (rc == SWS_DONE || rc == SWS_ERROR || rc == SWS_OK) {
            return rc;
        }
    }
    /* A 401 keeps its challenges (auth_basic's WWW-Authenticate). */
    if (status == SWS_HTTP_UNAUTHORIZED && r->err_headers_out == NULL
        && sws_http_keep_challenges(r) != SWS_OK)
    {
        return SWS_ERROR;
    }

    /* Keep an Allow header a handler set for 405; drop everything else. */
    allow = sws_http_header_out(r, "allow", 5);
    if (allow) {
        allow_value = allow->value;
    }
    location = r->location;
    sws_http_clear_response(r);
    if (status >= 300 && status < 400) {
        r->location = location;        /* a redirect keeps its target */
    }
    if (status == SWS_HTTP_NOT_ALLOWED && allow_value.len) {
        static const sws_str_t allow_name = sws_string("Allow");
        sws_http_header_out_add(r, &allow_name, &allow_value);
    }

    page = status;
    if (sws_http_nginx_reason(status)) {
        status = SWS_HTTP_BAD_REQUEST;         /* the page says which */
    }
    switch (status) {
    case SWS_HTTP_BAD_REQUEST:
    case SWS_HTTP_REQUEST_TIME_OUT:
    case SWS_HTTP_REQUEST_ENTITY_TOO_LARGE:
    case SWS_HTTP_REQUEST_URI_TOO_LARGE:
    case SWS_HTTP_HEADERS_TOO_LARGE:
    case SWS_HTTP_VERSION_NOT_SUPPORTED:
        /* Framing and limit errors: the rest of the input can't be trusted. */
        r->keepalive = 0;
        break;
    default:
        break;
    }
    r->status = status;

    if (!sws_http_status_has_body(status)) {
        sws_http_set_content_length(r, -1);
        if (sws_http_send_header(r) != SWS_OK) {
            return SWS_ERROR;
        }
        return sws_http_send_special(r, 1);
    }

    if (!sws_http_status_has_page(status)) {
        /* as nginx: a code without a page of its own answers empty */
        sws_http_set_content_length(r, 0);
        if (sws_http_send_header(r) != SWS_OK) {
            return SWS_ERROR;
        }
        return sws_http_send_special(r, 1);
    }

    if (sws_http_error_page_make(r, page, &b) != SWS_OK || b == NULL) {
        return SWS_ERROR;
    }
    b->last_buf = 1;
    sws_http_set_content_type(r, &html);
    sws_http_set_content_length(r, b->last - b->pos);
    if (sws_http_send_header(r) != SWS_OK) {
        return SWS_ERROR;
    }
    if (r->header_only) {
        return sws_http_send_special(r, 1);
    }
    out.buf = b;
    out.next = NULL;
    rc = sws_http_output(r, &out);
    return rc == SWS_ERROR ? SWS_ERROR : SWS_OK;
}
