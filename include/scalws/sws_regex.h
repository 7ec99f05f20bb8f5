/*
 * Regular expressions (PCRE2, JIT when available), for every module that
 * matches configuration patterns against request data: rewrite, map,
 * fastcgi_split_path_info, ... Compiled once at configuration time; the
 * match data is per process, sized for the largest pattern compiled.
 *
 * The request keeps the captures of its last successful sws_http_regex_exec()
 * (and of the regex location it was given): they are $1..$9 and the named
 * groups ($name, once sws_http_regex_variables() declared them), as in nginx.
 */
#ifndef SWS_REGEX_H
#define SWS_REGEX_H

#include <scalws/sws_types.h>
#include <scalws/sws_conf.h>

typedef struct sws_regex_s sws_regex_t;

#define SWS_REGEX_CASELESS  0x1

/* NULL with *err (pool memory or static) when the pattern does not compile:
 * "pcre2_compile() failed: missing ) in "(a" at offset 2". The code is
 * freed with the pool. */
sws_regex_t *sws_regex_compile(sws_pool_t *pool, const sws_str_t *pattern,
    sws_uint_t flags, const char **err);

/* The number of capture groups (not counting the whole match). */
sws_uint_t sws_regex_captures(const sws_regex_t *re);

/* The i-th named group (i from 0): sets *name and returns its number; 0
 * when there is no i-th name. */
sws_uint_t sws_regex_name(const sws_regex_t *re, sws_uint_t i, sws_str_t *name);

/*
 * Match s[0..len). On a match returns the number of pairs set (>= 1) and,
 * when ovector is not NULL, fills up to nvector pairs of offsets
 * (ovector[2i], ovector[2i+1]; an unset group is SWS_REGEX_UNSET twice).
 * SWS_DECLINED: no match. SWS_ERROR: the match failed (a PCRE2 limit); it
 * is logged to log when log is not NULL.
 */
#define SWS_REGEX_UNSET  ((size_t) -1)

sws_int_t sws_regex_exec(const sws_regex_t *re, const u_char *s, size_t len,
    size_t *ovector, sws_uint_t nvector, sws_log_t *log);

/*
 * As sws_regex_exec(), and on a match the request's captures become this
 * match's. s must live as long as the request (r->uri, a header value, a
 * string of the request's pool).
 */
sws_int_t sws_http_regex_exec(sws_http_request_t *r, const sws_regex_t *re,
    const sws_str_t *s);

/* Capture n of the request's last match into *value (empty when unset or
 * beyond the groups; n = 0 is the whole match). */
void sws_http_regex_capture(sws_http_request_t *r, sws_uint_t n, sws_str_t *value);

/* Declare $NAME for each named group of re (call at configuration time, as
 * for sws_http_variable_add()). */
sws_int_t sws_http_regex_variables(sws_conf_t *cf, const sws_regex_t *re);

#endif
