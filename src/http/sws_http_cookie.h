/*
 * Cookie fields ("a=1; b=2"), read for $cookie_NAME: a parser of what
 * clients send, kept apart so that its fuzz target needs nothing else.
 */
#ifndef SWS_HTTP_COOKIE_H
#define SWS_HTTP_COOKIE_H

#include <scalws/sws_types.h>

/* The value of cookie name (compared ignoring ASCII case, as nginx) in
 * one Cookie field: 1 and *value (pointing into field) when it is there,
 * else 0. Pairs are separated by ';' with optional blanks; a pair without
 * '=' has no value and never matches. */
int sws_http_cookie_find(const u_char *field, size_t len, const u_char *name, size_t nlen,
    sws_str_t *value);

#endif
