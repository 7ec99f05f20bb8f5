/*
 * The lines of a CGI response head (RFC 3875 6), taken apart without a
 * request: the shared head parser (sws_http_upstream_cgi_head.c) and its
 * fuzz target (tests/fuzz/fuzz_cgi_head.c) use it.
 */
#ifndef SWS_HTTP_UPSTREAM_CGI_LINES_H
#define SWS_HTTP_UPSTREAM_CGI_LINES_H

#include <scalws/sws_types.h>
#include <scalws/sws_string.h>

#define SWS_CGI_LINE_FIELD   1     /* name, value (trimmed) */
#define SWS_CGI_LINE_STATUS  2     /* "HTTP/1.x NNN ...": status */
#define SWS_CGI_LINE_END     3     /* the empty line: the head ends */

/* What sws_cgi_line_next returns for a line that is not valid. */
#define SWS_CGI_LINE_INVALID  -100

typedef struct {
    sws_uint_t   kind;
    sws_str_t    name;             /* into the buffer, as received */
    sws_str_t    value;
    sws_uint_t   status;
    const char  *why;              /* SWS_CGI_LINE_INVALID: a static string */
} sws_cgi_line_t;

/* The next line of [*pos, last) (LF or CRLF ended): SWS_AGAIN (no whole
 * line: *pos unchanged), SWS_OK (*pos after it) or SWS_CGI_LINE_INVALID.
 * status_line: an HTTP status line may be this one (the first). */
sws_int_t  sws_cgi_line_next(u_char **pos, u_char *last, int status_line,
    sws_cgi_line_t *line);

/* "NNN[ reason]" of a Status: field: NNN in 200..599, else 0. */
sws_uint_t sws_cgi_status_value(const sws_str_t *v);

#endif
