/*
 * Responses a module kept (a cache's entry, a precomputed answer) sent
 * again through the ordinary header and body filters, so that Range,
 * If-None-Match / If-Modified-Since and HEAD work on them as on a file:
 * the producer only says status, headers and where the body is.
 *
 * sws_http_response_header_set() is also the upstream framework's way of
 * putting a received header on the response: the four fields the core
 * keeps apart are set as such, the others are added as they are.
 */
#include "sws_http_core.h"
#include "sws_http_lc_eq.h"

/* Is the name (lc: its lower-case form, or NULL) this lower-case one? */
#define sws_http_name_is(name, lc, s) \
    ((lc) ? memcmp(lc, s, sizeof(s) - 1) == 0 \
          : sws_http_lc_eq((name)->data, s, sizeof(s) - 1))

sws_int_t
sws_http_response_header_set(sws_http_request_t *r, const sws_str_t *name, const u_char *lc,
    const sws_str_t *value)
{
    time_t t;

    switch (name->len) {
    case 4:
        if (sws_http_name_is(name, lc, "etag")) {
            sws_http_set_etag(r, value);
            return SWS_OK;
        }
        break;
    case 8:
        if (sws_http_name_is(name, lc, "location")) {
            sws_http_set_location(r, value);
            return SWS_OK;
        }
        break;
    case 12:
        if (sws_http_name_is(name, lc, "content-type")) {
            sws_http_set_content_type(r, value);
            return SWS_OK;
        }
        break;
    case 13:
        if (sws_http_name_is(name, lc, "last-modified")) {
            t = sws_parse_http_time(value->data, value->len);
            if (t != -1) {
                r->last_modified = t;
                r->last_modified_passed = 1;
                return SWS_OK;
            }
        }
        break;
    }
    return sws_http_header_out_add(r, name, value) ? SWS_OK : SWS_ERROR;
}

/* What a stored field is to the response being sent. */
enum {
    SWS_HTTP_STORED_ADD = 0,      /* an ordinary field: added as it is */
    SWS_HTTP_STORED_SKIP,         /* this response's framing, or what the core writes */
    SWS_HTTP_STORED_ETAG,
    SWS_HTTP_STORED_LOCATION,
    SWS_HTTP_STORED_TYPE,
    SWS_HTTP_STORED_LAST_MODIFIED,
    SWS_HTTP_STORED_DATE           /* written in place of the core's (r->date) */
};

/* A stored Date is the response's own: it goes out instead of the time
 * now (RFC 9111 4: a cache does not make a response younger). One the
 * core cannot write as it is (not of an HTTP date's length) is left out. */
#define sws_http_stored_date_ok(v)  ((v)->len == sizeof("Sun, 06 Nov 1994 08:49:37 GMT") - 1)

/* By length, then by the first letter: a hit's fields pass here one by
 * one, so each costs at most one comparison of its name. */
static int
sws_http_stored_kind(const sws_str_t *name)
{
    const u_char *p = name->data;

    switch (name->len) {
    case 4:
        if ((p[0] | 0x20) == 'e') {
            return sws_http_lc_eq(p, "etag", 4) ? SWS_HTTP_STORED_ETAG : SWS_HTTP_STORED_ADD;
        }
        return sws_http_lc_eq(p, "date", 4) ? SWS_HTTP_STORED_DATE : SWS_HTTP_STORED_ADD;
    case 6:
        return sws_http_lc_eq(p, "server", 6) ? SWS_HTTP_STORED_SKIP : SWS_HTTP_STORED_ADD;
    case 8:
        return sws_http_lc_eq(p, "location", 8) ? SWS_HTTP_STORED_LOCATION
                                                : SWS_HTTP_STORED_ADD;
    case 10:
        return sws_http_lc_eq(p, "connection", 10) || sws_http_lc_eq(p, "keep-alive", 10)
               ? SWS_HTTP_STORED_SKIP : SWS_HTTP_STORED_ADD;
    case 12:
        return sws_http_lc_eq(p, "content-type", 12) ? SWS_HTTP_STORED_TYPE
                                                     : SWS_HTTP_STORED_ADD;
    case 13:
        switch (p[0] | 0x20) {
        case 'l':
            return sws_http_lc_eq(p, "last-modified", 13) ? SWS_HTTP_STORED_LAST_MODIFIED
                                                          : SWS_HTTP_STORED_ADD;
        case 'a':
            /* the range filter says it, for a 200 (else it was said twice) */
            return sws_http_lc_eq(p, "accept-ranges", 13) ? SWS_HTTP_STORED_SKIP
                                                          : SWS_HTTP_STORED_ADD;
        }
        return SWS_HTTP_STORED_ADD;
    case 14:
        return sws_http_lc_eq(p, "content-length", 14) ? SWS_HTTP_STORED_SKIP
                                                       : SWS_HTTP_STORED_ADD;
    case 17:
        return sws_http_lc_eq(p, "transfer-encoding", 17) ? SWS_HTTP_STORED_SKIP
                                                          : SWS_HTTP_STORED_ADD;
    }
    return SWS_HTTP_STORED_ADD;
}

static sws_int_t
sws_http_stored_copy(sws_pool_t *pool, sws_str_t *dst, const sws_str_t *src)
{
    dst->len = src->len;
    dst->data = sws_pnalloc(pool, src->len ? src->len : 1);
    if (dst->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(dst->data, src->data, src->len);
    return SWS_OK;
}

/* The room for n more response fields: the list's own, or pushed. */
static sws_http_header_t *
sws_http_stored_room(sws_http_request_t *r, sws_uint_t n)
{
    sws_http_header_t *h;

    if (r->headers_out.nalloc - r->headers_out.nelts >= n) {
        h = (sws_http_header_t *) r->headers_out.elts + r->headers_out.nelts;
        r->headers_out.nelts += n;
        return h;
    }
    return sws_array_push_n(&r->headers_out, n);
}

/* One field, of this kind (not SKIP), on the response. */
static sws_int_t
sws_http_stored_put(sws_http_request_t *r, int kind, const sws_str_t *name,
    const sws_str_t *value)
{
    time_t t;

    switch (kind) {
    case SWS_HTTP_STORED_ETAG:
        r->etag = *value;
        return SWS_OK;
    case SWS_HTTP_STORED_LOCATION:
        r->location = *value;
        r->location_as_is = 1;
        return SWS_OK;
    case SWS_HTTP_STORED_TYPE:
        r->content_type = *value;
        return SWS_OK;
    case SWS_HTTP_STORED_LAST_MODIFIED:
        t = sws_parse_http_time(value->data, value->len);
        if (t != -1) {
            r->last_modified = t;
            r->last_modified_passed = 1;
            return SWS_OK;
        }
        break;                         /* not a date: kept as it came */
    case SWS_HTTP_STORED_DATE:
        if (sws_http_stored_date_ok(value)) {
            r->date = *value;
        }
        return SWS_OK;
    }
    return sws_http_header_out_add(r, name, value) ? SWS_OK : SWS_ERROR;
}

/* After the fields: the framing, the head through the filters, the body. */
static sws_int_t
sws_http_stored_finish(sws_http_request_t *r, sws_uint_t status, sws_chain_t *body)
{
    sws_chain_t *cl;

    sws_http_set_content_length(r, sws_chain_size(body));
    if (status == SWS_HTTP_OK) {
        sws_http_allow_ranges(r, 1);
    }

    if (sws_http_send_header(r) == SWS_ERROR) {
        return SWS_ERROR;
    }
    if (sws_http_header_only(r)) {
        return SWS_OK;                 /* HEAD, or a filter's 304/416 */
    }
    if (body == NULL) {
        return sws_http_send_special(r, 1);
    }
    for (cl = body; cl->next; cl = cl->next) { /* the last link */ }
    cl->buf->last_buf = 1;
    return sws_http_output(r, body);
}

/* A stored response replaces whatever was set on r. */
static sws_int_t
sws_http_stored_start(sws_http_request_t *r, sws_uint_t status)
{
    if (r->header_sent) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a stored response after the header was sent");
        return SWS_ERROR;
    }
    sws_http_clear_response(r);
    sws_http_set_status(r, status);
    return SWS_OK;
}

static sws_int_t
sws_http_stored_send(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body, int copy)
{
    sws_str_t   name, value;
    sws_uint_t  i;
    int         kind;

    if (sws_http_stored_start(r, status) != SWS_OK) {
        return SWS_ERROR;
    }
    for (i = 0; i < n; i++) {
        kind = sws_http_stored_kind(&headers[i].name);
        if (kind == SWS_HTTP_STORED_SKIP) {
            continue;
        }
        /* Copied: the producer's storage may go (an evicted entry) while
         * the head waits in the filters; unless it says it stays. */
        if (!copy) {
            name = headers[i].name;
            value = headers[i].value;
        } else if (sws_http_stored_copy(r->pool, &name, &headers[i].name) != SWS_OK
                   || sws_http_stored_copy(r->pool, &value, &headers[i].value) != SWS_OK)
        {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (sws_http_stored_put(r, kind, &name, &value) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return sws_http_stored_finish(r, status, body);
}

sws_int_t
sws_http_send_stored(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body)
{
    return sws_http_stored_send(r, status, headers, n, body, 1);
}

sws_int_t
sws_http_send_stored_ref(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body)
{
    return sws_http_stored_send(r, status, headers, n, body, 0);
}

/* ---- prepared once, sent many times ---- */

void
sws_http_stored_prepare(sws_http_stored_head_t *head, sws_http_header_t *fields,
    const sws_http_header_t *headers, sws_uint_t n)
{
    sws_http_header_t  date;
    sws_uint_t         i, j = 0;
    time_t             t;

    sws_memzero(head, sizeof(sws_http_stored_head_t));
    date.name.len = 0;
    head->last_modified = -1;
    /* forward, j <= i: fields may be headers itself */
    for (i = 0; i < n; i++) {
        switch (sws_http_stored_kind(&headers[i].name)) {
        case SWS_HTTP_STORED_SKIP:
            continue;
        case SWS_HTTP_STORED_ETAG:
            head->etag = headers[i].value;
            continue;
        case SWS_HTTP_STORED_LOCATION:
            head->location = headers[i].value;
            continue;
        case SWS_HTTP_STORED_TYPE:
            head->content_type = headers[i].value;
            continue;
        case SWS_HTTP_STORED_LAST_MODIFIED:
            t = sws_parse_http_time(headers[i].value.data, headers[i].value.len);
            if (t != -1) {
                head->last_modified = t;
                continue;
            }
            break;
        case SWS_HTTP_STORED_DATE:
            if (sws_http_stored_date_ok(&headers[i].value)) {
                date = headers[i];
            }
            continue;
        }
        fields[j] = headers[i];
        fields[j++].hash = 1;
    }
    head->fields = fields;
    head->nfields = (uint32_t) j;
    if (date.name.len) {
        /* after the others (a slot is free: the Date's own, skipped) */
        fields[j] = date;
        head->flags |= SWS_HTTP_STORED_HEAD_DATE;
    }
}

sws_int_t
sws_http_send_stored_head(sws_http_request_t *r, sws_uint_t status,
    const sws_http_stored_head_t *head, const sws_http_header_t *more, sws_uint_t nmore,
    sws_chain_t *body)
{
    sws_http_header_t *h;

    if (sws_http_stored_start(r, status) != SWS_OK) {
        return SWS_ERROR;
    }
    r->content_type = head->content_type;
    r->etag = head->etag;
    r->location = head->location;
    r->location_as_is = 1;
    r->last_modified = (time_t) head->last_modified;
    r->last_modified_passed = 1;
    if (head->flags & SWS_HTTP_STORED_HEAD_DATE) {
        r->date = head->fields[head->nfields].value;
    }
    if (head->nfields) {
        /* copied into the request's list: filters may change it, never the head */
        h = sws_http_stored_room(r, head->nfields);
        if (h == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        memcpy(h, head->fields, head->nfields * sizeof(sws_http_header_t));
    }
    if (nmore) {
        h = sws_http_stored_room(r, nmore);
        if (h == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        memcpy(h, more, nmore * sizeof(sws_http_header_t));
    }
    return sws_http_stored_finish(r, status, body);
}
