/*
 * HTTP/1.1 message parsing (RFC 9112) for modules that speak HTTP/1 to a
 * backend (the upstream protocols: proxy, node, python): status lines,
 * header lines, the chunked decoder. Pure functions over caller memory;
 * lines are handed over complete, without their terminator.
 */
#ifndef SWS_HTTP1_H
#define SWS_HTTP1_H

#include <scalws/sws_types.h>
#include <scalws/sws_http.h>

/*
 * A status line [start, end) ("HTTP/1.1 200 OK", the reason may be empty
 * or missing). Sets *status (100..999) and *version (1000 or 1001; 1.x with
 * x > 1 gives 1001). SWS_OK, or SWS_ERROR if it is not one.
 */
sws_int_t sws_http_parse_status_line(const u_char *start, const u_char *end,
    sws_uint_t *status, sws_uint_t *version);

/*
 * One header field line [start, end). The name is lower-cased into lc (at
 * least end - start bytes; lc == start is allowed) and h->name points
 * there; h->value is trimmed of leading/trailing SP/HTAB and points into
 * [start, end). Returns SWS_OK or SWS_HTTP_BAD_REQUEST for: an empty name,
 * a non-token name char, whitespace before ':', no ':', CR/LF/NUL/other CTL
 * (except HTAB) in the value, a line starting with SP/HTAB (obs-fold).
 */
sws_int_t sws_http_parse_header_line(sws_http_header_t *h, u_char *lc,
    u_char *start, u_char *end);

/* A Content-Length value: digits only, no sign, no overflow; a list of
 * identical values "5, 5" is accepted. -1 if invalid. */
off_t sws_http_parse_content_length(const u_char *p, size_t len);

/* Chunked transfer coding decoder state (RFC 9112 7.1), byte-incremental;
 * zero it to start. */
typedef struct {
    sws_uint_t  state;
    off_t       size;       /* bytes of chunk data left in the current chunk */
    off_t       total;      /* decoded bytes so far */
    sws_uint_t  ext_len;    /* bytes of extensions/trailer line so far */
} sws_http_chunked_t;

/*
 * Decode from *pos up to last. Returns:
 *   SWS_OK     chunk data is at *pos: ctx->size bytes remain in this chunk,
 *              of which min(ctx->size, last - *pos) are available; the caller
 *              consumes n of them, advancing *pos and decreasing ctx->size,
 *              then calls again;
 *   SWS_AGAIN  all input used (*pos == last), need more;
 *   SWS_DONE   last-chunk and trailer section complete; *pos after them;
 *   SWS_ERROR  malformed (bad hex, size overflow > 2^62, missing CRLF after
 *              data, bad extension/trailer bytes, lines over 4096 bytes).
 * Trailer fields are skipped (validated as header lines only loosely).
 */
sws_int_t sws_http_parse_chunked(sws_http_chunked_t *ctx, u_char **pos, u_char *last);

#endif
