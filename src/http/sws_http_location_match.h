/*
 * Location matching as nginx does it: exact (=) first; then the longest
 * matching prefix; if that prefix is ^~ it wins, otherwise regexes (~, ~*)
 * are tried in configuration order and the first match wins; else the
 * longest prefix. Regexes use PCRE2, compiled once at configuration time.
 */
#ifndef SWS_HTTP_LOCATION_MATCH_H
#define SWS_HTTP_LOCATION_MATCH_H

#include <scalws/scalws.h>

typedef enum {
    SWS_LOC_EXACT,          /* = /path */
    SWS_LOC_PREFIX,         /* /path */
    SWS_LOC_PREFIX_NOREGEX, /* ^~ /path */
    SWS_LOC_REGEX,          /* ~ re */
    SWS_LOC_REGEX_CASELESS  /* ~* re */
} sws_http_loc_kind_t;

typedef struct sws_http_loc_matcher_s sws_http_loc_matcher_t;

sws_http_loc_matcher_t *sws_http_loc_matcher_create(sws_pool_t *pool);
/* data: the caller's location. On error returns SWS_ERROR and sets *err to
 * a message in pool memory (regex compile error with offset; duplicate
 * location "X"). */
sws_int_t sws_http_loc_matcher_add(sws_http_loc_matcher_t *m, sws_http_loc_kind_t kind,
    const sws_str_t *pattern, void *data, const char **err);
/* Build the lookup structures (sorted prefixes etc.). */
sws_int_t sws_http_loc_matcher_finalize(sws_http_loc_matcher_t *m);
/* The matching location's data, or NULL if none matches. The lookup does
 * not allocate (regex match data is preallocated per matcher). */
void *sws_http_loc_matcher_find(sws_http_loc_matcher_t *m, const u_char *uri, size_t len);

/* As find; *matched is the regex of a regex location that matched (NULL
 * for an exact or prefix one), so that the request can take its captures. */
void *sws_http_loc_matcher_match(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    const sws_regex_t **matched);

/* The two halves of a match, for nested locations (nginx's order: a
 * level's exact or longest prefix, the prefix's own locations, then the
 * level's regexes unless the prefix is ^~). static: the exact or the
 * longest prefix location, *kind its kind (NULL: none). regex: the first
 * regex location that matches (NULL: none), *matched its regex. */
void *sws_http_loc_matcher_static(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    sws_http_loc_kind_t *kind);
void *sws_http_loc_matcher_regex(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    const sws_regex_t **matched);

#endif
