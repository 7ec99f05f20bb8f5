/*
 * The headers module: add_header, add_trailer and expires, as nginx's
 * ngx_http_headers_module. The directives and their levels are in
 * sws_headers_module.c, the filters that apply them in sws_headers_filter.c,
 * the expires arithmetic in sws_headers_expires.c.
 */
#ifndef SWS_HEADERS_H
#define SWS_HEADERS_H

#include <scalws/scalws.h>

/* One add_header / add_trailer. */
typedef struct {
    sws_str_t           name;
    sws_http_format_t  *value;     /* NULL: the value is fixed (text) */
    sws_str_t           text;      /* the fixed value */
    unsigned            always:1;
    unsigned            kind:2;    /* SWS_HEADERS_PLAIN, _ETAG, _LAST_MODIFIED */
} sws_headers_field_t;

#define SWS_HEADERS_PLAIN          0
#define SWS_HEADERS_ETAG           1   /* replaces the response's ETag */
#define SWS_HEADERS_LAST_MODIFIED  2   /* replaces its Last-Modified */

/* expires */
#define SWS_HEADERS_EXPIRES_UNSET     0
#define SWS_HEADERS_EXPIRES_OFF       1
#define SWS_HEADERS_EXPIRES_EPOCH     2
#define SWS_HEADERS_EXPIRES_MAX       3
#define SWS_HEADERS_EXPIRES_ACCESS    4   /* now + time */
#define SWS_HEADERS_EXPIRES_MODIFIED  5   /* Last-Modified + time */
#define SWS_HEADERS_EXPIRES_DAILY     6   /* @time of day, next one */
#define SWS_HEADERS_EXPIRES_VARIABLE  7   /* one of the above, from variables */

typedef struct {
    sws_array_t  *headers;      /* sws_headers_field_t; NULL: not set here */
    sws_array_t  *trailers;     /* the same for add_trailer */
    sws_uint_t    expires;      /* SWS_HEADERS_EXPIRES_* */
    time_t        expires_time; /* seconds (daily: since midnight) */
    sws_http_format_t *expires_value;   /* _VARIABLE: the value */
    unsigned      expires_modified:1;   /* _VARIABLE: "modified" before it */
} sws_headers_loc_conf_t;

typedef struct {
    sws_uint_t    used;         /* a directive appears: install the filters */
} sws_headers_main_conf_t;

extern sws_module_t sws_module;

sws_int_t sws_headers_filter_init(sws_conf_t *cf);
/* Set Expires and Cache-Control on r: kind SWS_HEADERS_EXPIRES_EPOCH ..
 * _DAILY, t its time. */
sws_int_t sws_headers_set_expires(sws_http_request_t *r, sws_uint_t kind, time_t t);
/* An expires value (off, epoch, max, @TIME, TIME; "modified" given before
 * it or not): NULL with *kind and *t set, or what is wrong with it. */
const char *sws_headers_parse_expires(const sws_str_t *v, int modified, sws_uint_t *kind,
    time_t *t);
/* "1y 2M 3w 4d 5h 6m 7s", "1h30m", a bare number of seconds, an optional
 * leading '-'; units in decreasing order, each once. SWS_OK or SWS_ERROR. */
sws_int_t sws_headers_parse_time(const sws_str_t *text, time_t *out);
/* The next moment, after now, at daily seconds past local midnight. */
time_t    sws_headers_next_time(time_t now, time_t daily);

#endif
