/*
 * The fields of a request head the core looks at, taken as they arrive,
 * by every protocol (h1 per header line, h2 per decoded field). Inline:
 * it runs for every field of every request, and each protocol's parser
 * is the only caller in its file.
 */
#ifndef SWS_HTTP_REQUEST_HEAD_H
#define SWS_HTTP_REQUEST_HEAD_H

#include "sws_http_core.h"

/* Logs why h is refused; 400. */
sws_int_t sws_http_request_header_refused(sws_http_request_t *r, sws_http_header_t *h);

/* A name with '_' or another character than [a-z0-9-]: is it dropped
 * (ignore_invalid_headers, underscores_in_headers)? Logs it if so. */
int       sws_http_request_header_ignored(sws_http_request_t *r, const sws_http_header_t *h,
    u_char odd);

/* A field of the request head (name lower-case) arrived: the ones the core
 * looks at are remembered (r->h_host ...). SWS_OK, SWS_DECLINED for a field
 * to drop (ignore_invalid_headers: the caller takes it off), or 400 for a repeated
 * Host, Expect, Transfer-Encoding, X-Request-Id, Authorization or
 * Content-Length (as nginx: which one a module would check must not be a
 * guess). Connection is a list: the first one is what the core reads.
 * If-Match and If-None-Match are only noted (r->etag_conditional), as are
 * If-Modified-Since and If-Unmodified-Since (r->date_conditional) and
 * Range (r->range_in): the filters that read them skip the search of the
 * fields when the head has none. odd:
 * the name's class (sws_http_name_odd), which HTTP/1's parser finds as it
 * lower-cases the name (sws_http_parse_request_field). */
static inline sws_int_t
sws_http_request_field(sws_http_request_t *r, sws_http_header_t *h, u_char odd)
{
    sws_str_t   **slot = NULL;

    if (sws_unlikely(odd) && sws_http_request_header_ignored(r, h, odd)) {
        return SWS_DECLINED;             /* the caller drops it */
    }

    switch (h->name.len) {
    case 4:
        if (memcmp(h->name.data, "host", 4) == 0) {
            slot = &r->h_host;
        }
        break;
    case 5:
        if (memcmp(h->name.data, "range", 5) == 0) {
            r->range_in = 1;
        }
        return SWS_OK;
    case 6:
        if (memcmp(h->name.data, "expect", 6) == 0) {
            slot = &r->h_expect;
        }
        break;
    case 8:
        if (memcmp(h->name.data, "if-match", 8) == 0) {
            r->etag_conditional = 1;
        }
        return SWS_OK;
    case 10:
        if (memcmp(h->name.data, "connection", 10) == 0 && r->h_connection == NULL) {
            r->h_connection = &h->value;
        }
        return SWS_OK;
    case 12:
        if (memcmp(h->name.data, "x-request-id", 12) == 0) {
            slot = &r->h_request_id;
        }
        break;
    case 13:
        if (memcmp(h->name.data, "authorization", 13) == 0) {
            slot = &r->h_authorization;
        } else if (memcmp(h->name.data, "if-none-match", 13) == 0) {
            r->etag_conditional = 1;
        }
        break;
    case 14:
        if (memcmp(h->name.data, "content-length", 14) == 0) {
            /* RFC 9110 8.6 lets a recipient take the same value repeated
             * as one; nginx refuses any second line, and so do we: the
             * body's framing must not depend on a parser's leniency. */
            slot = &r->h_content_length;
        }
        break;
    case 17:
        if (memcmp(h->name.data, "transfer-encoding", 17) == 0) {
            slot = &r->h_transfer_encoding;
        } else if (memcmp(h->name.data, "if-modified-since", 17) == 0) {
            r->date_conditional = 1;
        }
        break;
    case 19:
        if (memcmp(h->name.data, "if-unmodified-since", 19) == 0) {
            r->date_conditional = 1;
        }
        return SWS_OK;
    }
    if (slot) {
        if (*slot) {
            return sws_http_request_header_refused(r, h);
        }
        *slot = &h->value;
    }
    return SWS_OK;
}

/* sws_http_request_field for a field whose name's class is not known yet
 * (HTTP/2's decoded fields). */
static inline sws_int_t
sws_http_request_header(sws_http_request_t *r, sws_http_header_t *h)
{
    const u_char *p = h->name.data;
    size_t        n = h->name.len;
    u_char        odd = 0;

    while (n--) {
        odd |= sws_http_name_odd[*p++];
    }
    return sws_http_request_field(r, h, odd);
}

/* The request line as parsed (sws_http_parse_request_line): HTTP/1's, or
 * the one HTTP/2 makes of :method and :path. The version, the line itself
 * and an absolute-form authority are the protocol's to take. */
static inline void
sws_http_request_line_take(sws_http_request_t *r, const sws_http_request_line_t *rl)
{
    r->method = rl->method;
    r->method_name = rl->method_name;
    r->unparsed_uri = rl->target;
    r->args = rl->args;
    r->raw_path = rl->path;
    r->complex_uri = rl->complex_path;
    r->encoded_slash = rl->encoded_slash;
    r->asterisk = rl->asterisk;
}

#endif
