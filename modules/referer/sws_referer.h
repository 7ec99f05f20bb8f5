/*
 * The referer module: valid_referers and $invalid_referer. Its parser of
 * the Referer field is apart (sws_referer_parse.c) for the fuzz target.
 */
#ifndef SWS_REFERER_H
#define SWS_REFERER_H

#include <scalws/scalws.h>

#define SWS_REFERER_MAX_HOST  256

/* An http:// or https:// Referer in parts (pointing into the field, but
 * host, lower-cased into host_buf). */
typedef struct {
    sws_str_t   rest;       /* the field without its scheme */
    sws_str_t   host;       /* up to ':' or '/' of rest, lower case */
    sws_str_t   path;       /* from the first '/' after the host; may be empty */
    u_char      host_buf[SWS_REFERER_MAX_HOST];
} sws_referer_parts_t;

/* SWS_OK; SWS_DECLINED for a field without "http://" or "https://" (any
 * case) or shorter than "http://i.ru" ("blocked"); SWS_ERROR for a host
 * longer than SWS_REFERER_MAX_HOST (invalid, as nginx's). */
sws_int_t sws_referer_parse(const u_char *field, size_t len, sws_referer_parts_t *parts);

#endif
