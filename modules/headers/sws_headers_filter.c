/*
 * The filters of the headers module. The header filter sets Expires and
 * Cache-Control, adds the add_header fields and, when add_trailer fields
 * apply, asks the core for trailers; the body filter adds those when the
 * last buffer goes by, so that their variables see the whole response
 * produced ($request_time ...), as nginx's do.
 *
 * Without "always", fields go only on the statuses nginx lists: 200, 201,
 * 204, 206, 301, 302, 303, 304, 307 and 308.
 */
#include "sws_headers.h"

static sws_http_header_filter_pt  sws_headers_next_header_filter;
static sws_http_body_filter_pt    sws_headers_next_body_filter;

/* Per request, only when trailers are to come. */
typedef struct {
    unsigned  safe:1;          /* the status was one of the list */
    unsigned  done:1;          /* trailers added */
} sws_headers_ctx_t;


static int
sws_headers_safe_status(sws_uint_t status)
{
    switch (status) {
    case SWS_HTTP_OK:
    case SWS_HTTP_CREATED:
    case SWS_HTTP_NO_CONTENT:
    case SWS_HTTP_PARTIAL_CONTENT:
    case SWS_HTTP_MOVED_PERMANENTLY:
    case SWS_HTTP_MOVED_TEMPORARILY:
    case SWS_HTTP_SEE_OTHER:
    case SWS_HTTP_NOT_MODIFIED:
    case SWS_HTTP_TEMPORARY_REDIRECT:
    case SWS_HTTP_PERMANENT_REDIRECT:
        return 1;
    default:
        return 0;
    }
}

/* The value of f for r, in the request's pool. A value made of variables
 * has control characters (a CR LF decoded from $uri, say) turned into
 * spaces, so that no value can start a field of its own. SWS_OK,
 * SWS_ERROR (no memory). */
static sws_int_t
sws_headers_value(sws_http_request_t *r, sws_headers_field_t *f, sws_str_t *out)
{
    size_t   i;
    u_char  *p;

    if (f->value == NULL) {
        *out = f->text;
        return SWS_OK;
    }
    if (sws_http_format_string(f->value, r, sws_http_pool(r), 0, NULL, 0, out) != SWS_OK) {
        return SWS_ERROR;
    }
    p = out->data;
    for (i = 0; i < out->len; i++) {
        if ((p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f) {
            p[i] = ' ';
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_headers_add_fields(sws_http_request_t *r, sws_array_t *list, int safe)
{
    sws_headers_field_t  *f = list->elts;
    sws_str_t             value, *copy;
    sws_uint_t            i;
    time_t                t;

    for (i = 0; i < list->nelts; i++) {
        if (!safe && !f[i].always) {
            continue;
        }
        if (sws_headers_value(r, &f[i], &value) != SWS_OK) {
            return SWS_ERROR;
        }
        switch (f[i].kind) {
        case SWS_HEADERS_ETAG:
            /* replaces the ETag; an empty value removes it */
            if (value.len == 0) {
                sws_http_set_etag(r, NULL);
                continue;
            }
            copy = sws_palloc(sws_http_pool(r), sizeof(sws_str_t));
            if (copy == NULL) {
                return SWS_ERROR;
            }
            *copy = value;
            sws_http_set_etag(r, copy);
            continue;
        case SWS_HEADERS_LAST_MODIFIED:
            /* replaces Last-Modified; an empty value removes it. The time
             * is kept when it parses, for conditional requests. */
            sws_http_header_out_remove(r, "last-modified", 13);
            t = value.len ? sws_parse_http_time(value.data, value.len) : -1;
            sws_http_set_last_modified(r, t);
            if (value.len == 0 || t != -1) {
                continue;
            }
            break;                     /* not a date: sent as written */
        default:
            if (value.len == 0) {
                continue;              /* nginx adds no field with an empty value */
            }
            break;
        }
        if (sws_http_header_out_add(r, &f[i].name, &value) == NULL) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static int
sws_headers_any_applies(sws_array_t *list, int safe)
{
    sws_headers_field_t  *f;
    sws_uint_t            i;

    if (list == NULL) {
        return 0;
    }
    f = list->elts;
    for (i = 0; i < list->nelts; i++) {
        if (safe || f[i].always) {
            return 1;
        }
    }
    return 0;
}

/* expires as configured, or as its variables say for this response (a
 * value that is not one of expires' is logged and ignored). */
static sws_int_t
sws_headers_expires(sws_http_request_t *r, sws_headers_loc_conf_t *lcf)
{
    sws_headers_field_t  f;
    sws_str_t            value;
    sws_uint_t           kind;
    time_t               t;
    const char          *err;

    if (lcf->expires != SWS_HEADERS_EXPIRES_VARIABLE) {
        return sws_headers_set_expires(r, lcf->expires, lcf->expires_time);
    }
    sws_memzero(&f, sizeof(f));
    f.value = lcf->expires_value;
    if (sws_headers_value(r, &f, &value) != SWS_OK) {
        return SWS_ERROR;
    }
    err = sws_headers_parse_expires(&value, lcf->expires_modified, &kind, &t);
    if (err != NULL) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"expires\": %s \"%.*s\"", err,
                      (int) value.len, value.data);
        return SWS_OK;
    }
    if (kind == SWS_HEADERS_EXPIRES_OFF) {
        return SWS_OK;
    }
    return sws_headers_set_expires(r, kind, t);
}

static sws_int_t
sws_headers_header_filter(sws_http_request_t *r)
{
    sws_headers_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_headers_ctx_t       *ctx;
    int                      safe;

    if (lcf == NULL
        || (lcf->headers == NULL && lcf->trailers == NULL
            && lcf->expires <= SWS_HEADERS_EXPIRES_OFF))
    {
        return sws_headers_next_header_filter(r);
    }
    safe = sws_headers_safe_status(sws_http_status(r));

    if (lcf->expires > SWS_HEADERS_EXPIRES_OFF && safe
        && sws_headers_expires(r, lcf) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (lcf->headers && sws_headers_add_fields(r, lcf->headers, safe) != SWS_OK) {
        return SWS_ERROR;
    }
    if (sws_headers_any_applies(lcf->trailers, safe)) {
        ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_headers_ctx_t));
        if (ctx == NULL) {
            return SWS_ERROR;
        }
        ctx->safe = safe;
        sws_http_set_ctx(r, &sws_module, ctx);
        sws_http_expect_trailers(r);
    }
    return sws_headers_next_header_filter(r);
}

static sws_int_t
sws_headers_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_headers_ctx_t       *ctx = sws_http_get_ctx(r, &sws_module);
    sws_headers_loc_conf_t  *lcf;
    sws_headers_field_t     *f;
    sws_chain_t             *cl;
    sws_str_t                value;
    sws_uint_t               i;

    if (ctx == NULL || ctx->done) {
        return sws_headers_next_body_filter(r, in);
    }
    for (cl = in; cl; cl = cl->next) {
        if (cl->buf->last_buf) {
            break;
        }
    }
    if (cl == NULL) {
        return sws_headers_next_body_filter(r, in);
    }
    ctx->done = 1;
    lcf = sws_http_loc_conf(r, &sws_module);
    f = lcf->trailers->elts;
    for (i = 0; i < lcf->trailers->nelts; i++) {
        if (!ctx->safe && !f[i].always) {
            continue;
        }
        if (sws_headers_value(r, &f[i], &value) != SWS_OK) {
            return SWS_ERROR;
        }
        if (value.len && sws_http_trailer_out_add(r, &f[i].name, &value) == NULL) {
            return SWS_ERROR;
        }
    }
    return sws_headers_next_body_filter(r, in);
}

/* The filters act only where a level has add_header, add_trailer or
 * expires: elsewhere fixed responses keep the core's one-write path. */
static int
sws_headers_acts(sws_http_request_t *r)
{
    const sws_headers_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf != NULL && (lcf->headers != NULL || lcf->trailers != NULL
                           || lcf->expires > SWS_HEADERS_EXPIRES_OFF);
}

sws_int_t
sws_headers_filter_init(sws_conf_t *cf)
{
    sws_headers_next_header_filter = sws_http_insert_header_filter(sws_headers_header_filter);
    sws_headers_next_body_filter = sws_http_insert_body_filter(sws_headers_body_filter);
    return sws_http_filters_act_when(cf, sws_headers_acts);
}
