/*
 * The map module: variables whose value depends on another value, as
 * nginx's map and split_clients. Both are evaluated lazily, when a format
 * first reads them in a request, and kept for the request (map's
 * "volatile" evaluates on every read): sws_http_variable_add_cached.
 */
#ifndef SWS_MAP_H
#define SWS_MAP_H

#include <scalws/scalws.h>

extern sws_module_t sws_module;

/* A value: literal text, or a format when it has variables. */
typedef struct {
    sws_str_t           text;
    sws_http_format_t  *fmt;
} sws_map_value_t;

/* hostnames: "*.example.com" / ".example.com" (suffix) and "example.*"
 * (prefix) keys, the longest first (sws_map_hostnames.c). */
typedef struct {
    sws_str_t           key;      /* ".example.com" or "example." */
    sws_map_value_t    *value;
    unsigned            bare:1;   /* ".example.com" matches "example.com" too */
} sws_map_wildcard_t;

sws_int_t sws_map_wildcard_add(sws_conf_t *cf, sws_array_t **list, const sws_str_t *key,
    int head, sws_map_value_t *value);
/* The value for host (lower case) in the head (suffix) or tail (prefix)
 * list, NULL if none matches. */
sws_map_value_t *sws_map_wildcard_find(const sws_array_t *list, const sws_str_t *host,
    int head);
/* 1 when key is a wildcard of a hostnames map; head: suffix form. */
int sws_map_is_wildcard(const sws_str_t *key, int *head);

/* split_clients (sws_split_clients.c) */
char *sws_split_clients_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
uint32_t sws_murmur_hash2(const u_char *data, size_t len);

/* A value (literal or format) of a map or split_clients entry. */
sws_map_value_t *sws_map_value_compile(sws_conf_t *cf, const sws_str_t *text);
sws_int_t sws_map_value_get(sws_http_request_t *r, const sws_map_value_t *v, sws_str_t *out);
/* "$name" of the directive's second argument, NUL-terminated, or NULL
 * (logged). */
const char *sws_map_var_name(sws_conf_t *cf, const sws_str_t *arg);

#endif
