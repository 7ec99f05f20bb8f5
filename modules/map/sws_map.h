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
