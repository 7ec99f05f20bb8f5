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

/*
 * Are the n bytes at p, in any case, the lower-case name lc (letters and
 * '-' only)? Eight bytes at a time: a letter of lc has bit 0x40 set, so
 * (lc & 0x40..) >> 1 puts 0x20 on the letters only, and ORing that into p
 * lower-cases p's letters there while a '-' must match exactly. Each hit
 * passes its stored fields here, so it is worth a few lines; inlined, the
 * loops fold away (the names are constants).
 */
static inline __attribute__((always_inline)) int
sws_http_lc_eq(const u_char *p, const char *lc, size_t n)
{
    uint64_t  a, b;

    uint32_t  c, d;

    for ( ; n >= 8; n -= 8, p += 8, lc += 8) {
        memcpy(&a, p, 8);
        memcpy(&b, lc, 8);
        if ((a | ((b & 0x4040404040404040ULL) >> 1)) != b) {
            return 0;
        }
    }
    if (n >= 4) {
        memcpy(&c, p, 4);
        memcpy(&d, lc, 4);
        if ((c | ((d & 0x40404040U) >> 1)) != d) {
            return 0;
        }
        n -= 4;
        p += 4;
        lc += 4;
    }
    for ( ; n; n--, p++, lc++) {
        if ((u_char) (*p | ((*lc & 0x40) >> 1)) != (u_char) *lc) {
            return 0;
        }
    }
    return 1;
}

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
                sws_http_set_last_modified(r, t);
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
    SWS_HTTP_STORED_LAST_MODIFIED
};

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
        return sws_http_lc_eq(p, "date", 4) ? SWS_HTTP_STORED_SKIP : SWS_HTTP_STORED_ADD;
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

static sws_int_t sws_http_stored_send(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body, int copy);

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

static sws_int_t
sws_http_stored_send(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body, int copy)
{
    sws_http_header_t  *h;
    sws_chain_t        *cl;
    sws_str_t           name, value;
    sws_uint_t          i;
    time_t              t;
    int                 kind;

    if (r->header_sent) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a stored response after the header was sent");
        return SWS_ERROR;
    }
    sws_http_clear_response(r);
    sws_http_set_status(r, status);
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
        switch (kind) {
        case SWS_HTTP_STORED_ETAG:
            r->etag = value;
            continue;
        case SWS_HTTP_STORED_LOCATION:
            r->location = value;
            continue;
        case SWS_HTTP_STORED_TYPE:
            r->content_type = value;
            continue;
        case SWS_HTTP_STORED_LAST_MODIFIED:
            t = sws_parse_http_time(value.data, value.len);
            if (t != -1) {
                r->last_modified = t;
                continue;
            }
            break;                     /* not a date: kept as it came */
        }
        if (r->headers_out.nelts < r->headers_out.nalloc) {
            h = (sws_http_header_t *) r->headers_out.elts + r->headers_out.nelts++;
        } else {
            h = sws_array_push(&r->headers_out);
            if (h == NULL) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
        }
        h->name = name;
        h->value = value;
        h->hash = 1;
    }
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
