/*
 * Fixed responses (respond, return): everything but Date, Connection and
 * the request id is formatted at configuration time. Over HTTP/1.x, when no
 * third-party filter has to see the response and no precondition can
 * change it, it is written as one buffer without header structures;
 * otherwise it takes the ordinary path.
 */
#include "sws_http_core.h"

struct sws_http_fixed_s {
    sws_uint_t  status;
    sws_str_t   content_type;
    sws_str_t   body;
    sws_str_t   location;
    /* "HTTP/1.1 200 OK\r\n" */
    sws_str_t   status_line;
    /* "Content-Type: ...\r\nContent-Length: N\r\n[Location: ...\r\n]" */
    sws_str_t   fields;
    unsigned    fast:1;      /* the preformatted path may be used */
    unsigned    typed:1;     /* Content-Type by the request's URI (types) */
};

/* Set once the built-in modules have registered their filters: when the
 * tops are still these, no third-party filter wants to see responses. */
sws_http_header_filter_pt sws_http_builtin_top_header_filter;
sws_http_body_filter_pt   sws_http_builtin_top_body_filter;

/* The modules' filters above the built-in ones: those whose module said
 * when they act, and whether any did not say (then every response may be
 * changed by one). Rebuilt with each configuration. */
#define SWS_HTTP_FIXED_ACTS_MAX  16

static sws_http_filters_acts_pt  sws_http_fixed_acts[SWS_HTTP_FIXED_ACTS_MAX];
static sws_uint_t                sws_http_fixed_nacts;
static sws_http_filters_acts_pt  sws_http_fixed_pending;   /* this module's */
static unsigned                  sws_http_fixed_opaque;
/* A built-in module's filter that acts on some responses (HTTP/3's
 * Alt-Svc, installed only when a server has a QUIC listener): asked even
 * where no loaded module filters. None where none said so. */
#define SWS_HTTP_FIXED_BUILTIN_MAX  4
static sws_http_filters_acts_pt  sws_http_fixed_builtin_acts[SWS_HTTP_FIXED_BUILTIN_MAX];
static sws_uint_t                sws_http_fixed_builtin_nacts;

void
sws_http_fixed_filters_reset(void)
{
    sws_http_fixed_nacts = 0;
    sws_http_fixed_builtin_nacts = 0;
    sws_http_fixed_pending = NULL;
    sws_http_fixed_opaque = 0;
}

sws_int_t
sws_http_fixed_builtin_end(sws_conf_t *cf)
{
    if (sws_http_fixed_pending != NULL) {
        if (sws_http_fixed_builtin_nacts == SWS_HTTP_FIXED_BUILTIN_MAX) {
            sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0,
                          "too many built-in filters that act on some responses");
            return SWS_ERROR;
        }
        sws_http_fixed_builtin_acts[sws_http_fixed_builtin_nacts++] = sws_http_fixed_pending;
    }
    sws_http_fixed_pending = NULL;
    return SWS_OK;
}

void
sws_http_fixed_module_begin(void)
{
    sws_http_fixed_pending = NULL;
}

sws_int_t
sws_http_filters_act_when(sws_conf_t *cf, sws_http_filters_acts_pt acts)
{
    (void) cf;
    if (acts == NULL) {
        return SWS_ERROR;
    }
    sws_http_fixed_pending = acts;
    return SWS_OK;
}

sws_int_t
sws_http_fixed_module_end(sws_conf_t *cf, int inserted)
{
    if (!inserted) {
        sws_http_fixed_pending = NULL;
        return SWS_OK;
    }
    if (sws_http_fixed_pending == NULL
        || sws_http_fixed_nacts == SWS_HTTP_FIXED_ACTS_MAX)
    {
        sws_http_fixed_opaque = 1;
    } else {
        sws_http_fixed_acts[sws_http_fixed_nacts++] = sws_http_fixed_pending;
    }
    sws_http_fixed_pending = NULL;
    (void) cf;
    return SWS_OK;
}

/* Would a module's filter change r's response? */
static int
sws_http_fixed_filtered(sws_http_request_t *r)
{
    sws_uint_t  i;

    for (i = 0; i < sws_http_fixed_builtin_nacts; i++) {
        if (sws_http_fixed_builtin_acts[i](r)) {
            return 1;
        }
    }
    if (sws_http_top_header_filter == sws_http_builtin_top_header_filter
        && sws_http_top_body_filter == sws_http_builtin_top_body_filter)
    {
        return 0;
    }
    if (sws_http_fixed_opaque) {
        return 1;
    }
    for (i = 0; i < sws_http_fixed_nacts; i++) {
        if (sws_http_fixed_acts[i](r)) {
            return 1;
        }
    }
    return 0;
}

sws_http_fixed_t *
sws_http_fixed_create(sws_conf_t *cf, sws_uint_t status, const sws_str_t *content_type,
    const sws_str_t *body, const sws_str_t *location)
{
    sws_pool_t       *pool = sws_conf_pool(cf);
    sws_http_fixed_t *f;
    const sws_str_t  *line;
    u_char           *p;
    size_t            len;
    int               has_body = !(status < 200 || status == 204 || status == 304);

    f = sws_pcalloc(pool, sizeof(sws_http_fixed_t));
    if (f == NULL) {
        return NULL;
    }
    f->status = status;
    if (content_type) {
        f->content_type = *content_type;
    }
    if (body) {
        f->body = *body;
    }
    if (location) {
        f->location = *location;
    }

    line = sws_http_status_line(status);
    f->status_line.data = sws_pnalloc(pool, sizeof("HTTP/1.1 \r\n") + line->len);
    if (f->status_line.data == NULL) {
        return NULL;
    }
    p = sws_cpymem(f->status_line.data, "HTTP/1.1 ", 9);
    p = sws_cpymem(p, line->data, line->len);
    p = sws_cpymem(p, "\r\n", 2);
    f->status_line.len = p - f->status_line.data;

    len = sizeof("Content-Type: \r\nContent-Length: 18446744073709551615\r\nLocation: \r\n")
          + f->content_type.len + f->location.len;
    f->fields.data = sws_pnalloc(pool, len);
    if (f->fields.data == NULL) {
        return NULL;
    }
    p = f->fields.data;
    if (f->content_type.len && has_body) {
        p = sws_cpymem(p, "Content-Type: ", 14);
        p = sws_cpymem(p, f->content_type.data, f->content_type.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (has_body) {
        p = sws_cpymem(p, "Content-Length: ", 16);
        p = sws_sprint_uint(p, f->body.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    if (f->location.len) {
        p = sws_cpymem(p, "Location: ", 10);
        p = sws_cpymem(p, f->location.data, f->location.len);
        p = sws_cpymem(p, "\r\n", 2);
    }
    f->fields.len = p - f->fields.data;
    f->fast = 1;
    return f;
}

sws_http_fixed_t *
sws_http_fixed_create_typed(sws_conf_t *cf, sws_uint_t status, const sws_str_t *body)
{
    sws_http_fixed_t *f = sws_http_fixed_create(cf, status, NULL, body, NULL);

    if (f != NULL) {
        f->typed = !(status < 200 || status == 204 || status == 304);
    }
    return f;
}

static sws_int_t
sws_http_send_fixed_slow(sws_http_request_t *r, const sws_http_fixed_t *f,
    const sws_str_t *type)
{
    sws_buf_t   *b;
    sws_chain_t  out;
    sws_int_t    rc;

    r->status = f->status;
    if (type != NULL && type->len) {
        sws_http_set_content_type(r, type);
    }
    if (f->location.len) {
        sws_http_set_location(r, &f->location);
    }
    sws_http_set_content_length(r, (off_t) f->body.len);
    rc = sws_http_send_header(r);
    if (rc != SWS_OK) {
        return rc;
    }
    if (r->header_only || f->body.len == 0) {
        return sws_http_send_special(r, 1);
    }
    b = sws_calloc_buf(r->pool);
    if (b == NULL) {
        return SWS_ERROR;
    }
    b->pos = b->start = f->body.data;
    b->last = b->end = f->body.data + f->body.len;
    b->memory = 1;
    b->last_buf = 1;
    out.buf = b;
    out.next = NULL;
    return sws_http_output(r, &out);
}

/* Would the conditional check (sws_http_not_modified_check, on the
 * ordinary path) change a 200 that has no validators? Only If-Match (a 412
 * unless "*") and If-None-Match ("*": a 304) can, on GET and HEAD, as
 * nginx's not-modified filter does for its "return 200 TEXT";
 * If-Modified-Since and If-Unmodified-Since need a Last-Modified. The
 * head's parser noted the two fields. */
static int
sws_http_fixed_conditional(sws_http_request_t *r)
{
    return r->etag_conditional && (r->method & (SWS_HTTP_GET | SWS_HTTP_HEAD));
}

sws_int_t
sws_http_send_fixed(sws_http_request_t *r, const sws_http_fixed_t *f)
{
    const sws_str_t  *type = &f->content_type;

    if (f->typed) {
        type = sws_http_mime_type(r, sws_http_exten(r));
    }
    /* an error page given another status (error_page 404 =418 ...) takes
     * the ordinary path, where the header filter applies it; so does a
     * relative Location that absolute_redirect completes */
    if (!f->fast || r->proto->send_fixed == NULL || r->err_status
        || (f->location.len && f->location.data[0] == '/'
            && sws_http_core_loc(r)->absolute_redirect)
        || sws_http_fixed_filtered(r)
        || (f->status == SWS_HTTP_OK && sws_http_fixed_conditional(r)))
    {
        return sws_http_send_fixed_slow(r, f, type);
    }
    return r->proto->send_fixed(r, &f->status_line, f->typed && type->len ? type : NULL,
                                &f->fields, &f->body, f->status);
}
