/*
 * HTTP/1.1 message parsing (RFC 9112), one complete line at a time: the
 * connection code finds the end of a line and hands it over, so a request
 * may arrive in any number of pieces. Pure functions over caller memory.
 */
#ifndef SWS_HTTP_PARSE_H
#define SWS_HTTP_PARSE_H

#include <scalws/scalws.h>
#include <scalws/sws_http1.h>

/* The request line, pointers into the caller's buffer. */
typedef struct {
    sws_str_t   method_name;
    sws_uint_t  method;        /* SWS_HTTP_GET ... or SWS_HTTP_UNKNOWN */
    sws_str_t   target;        /* as received */
    sws_str_t   schema;        /* absolute-form only: "http" */
    sws_str_t   host;          /* absolute-form only: host[:port] */
    sws_str_t   path;          /* origin-form path (raw, still encoded), or "*" */
    sws_str_t   args;          /* query without '?', empty if none */
    sws_uint_t  version;       /* 1000 or 1001 (1.x with x > 1 -> 1001) */
    unsigned    complex_path:1;  /* has %, /./, /../, // or trailing /. */
    unsigned    encoded_slash:1; /* the path has "%2F" (or "%2f") */
    unsigned    asterisk:1;      /* OPTIONS * */
    unsigned    authority:1;     /* CONNECT host:port */
} sws_http_request_line_t;

/*
 * Parse [start, end): the request line without its line terminator (the
 * caller strips "\n" and one "\r" before it). Returns SWS_OK, or:
 *   SWS_HTTP_BAD_REQUEST         malformed (bad method token, not exactly
 *                                one SP between parts, bad target chars,
 *                                CTL/NUL, bad version syntax, HTTP/0.9)
 *   SWS_HTTP_VERSION_NOT_SUPPORTED  well-formed HTTP/M.m with M != 1
 */
sws_int_t sws_http_parse_request_line(sws_http_request_line_t *rl,
    u_char *start, u_char *end);

/*
 * A method and a target given apart (HTTP/2's and HTTP/3's :method and
 * :path), checked as sws_http_parse_request_line checks them in the line
 * "method SP target SP HTTP/1.1": the method a token, the target of one of
 * the forms a line may have, its bytes the same ones. SWS_OK (rl->version
 * 0), or SWS_HTTP_BAD_REQUEST (either empty too).
 */
sws_int_t sws_http_parse_method_target(sws_http_request_line_t *rl, u_char *method,
    size_t mlen, u_char *target, size_t tlen);

/* Whether the start of a request line not yet complete (start..last, no LF)
 * can no longer become one: a byte before the first SP that no method may
 * have (a TLS ClientHello sent to a plain port starts with 0x16). A lone CR
 * at the end (of an empty line) is not one. */
int       sws_http_request_line_hopeless(const u_char *start, const u_char *last);

/* Header lines, Content-Length, the chunked decoder and status lines are
 * in the SDK: <scalws/sws_http1.h>. */

/*
 * Percent-decode src (a raw path starting with '/') and resolve "." and
 * ".." segments into dst (room for len bytes). Merges repeated slashes when
 * merge_slashes. Returns SWS_OK with *dst_len set, or SWS_HTTP_BAD_REQUEST
 * for a bad %-escape, a decoded NUL, or ".." above the root. Decoded "%2F"
 * is a '/' (so it is subject to dot resolution too).
 */
sws_int_t sws_http_normalize_path(const u_char *src, size_t len, u_char *dst,
    size_t *dst_len, int merge_slashes);

/* For each byte of a lower-case field name: 0 for [a-z0-9-], 1 for '_',
 * 2 for any other. */
extern const u_char sws_http_name_odd[256];

/* sws_http_parse_header_line (the SDK's) for a request's field: *odd is
 * the name's class (the OR of sws_http_name_odd over its bytes), found in
 * the same pass as the lower-casing. */
sws_int_t sws_http_parse_request_field(sws_http_header_t *h, u_char *lc, u_char *start,
    u_char *end, u_char *odd);

/* sws_http_parse_header_line without the name's hash (h->hash is 0): for
 * a caller that looks few names up (an upstream's response fields). */
sws_int_t sws_http_parse_field_unhashed(sws_http_header_t *h, u_char *lc, u_char *start,
    u_char *end);

/* The extension of the last segment of a normalised path ("" if none). */
void sws_http_path_exten(const sws_str_t *path, sws_str_t *exten);

/* sws_http_parse_range: in <scalws/sws_http.h> (ABI 1.9). */

#endif
