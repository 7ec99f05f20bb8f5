/*
 * The module descriptor. Every module (.so) exports exactly one symbol,
 * `sws_module`, of this type. Its layout is part of the ABI: fields are only
 * ever appended (taking from `reserved`) with a minor ABI bump.
 */
#ifndef SWS_MODULE_H
#define SWS_MODULE_H

#include <scalws/sws_types.h>

#define SWS_ABI_MAJOR  1
#define SWS_ABI_MINOR  12     /* 1.1: sws_sdk_function(), .flags; 1.2: sws_http_set_timer,
                                 the cache hooks' failed and resume; 1.3: regex,
                                 base64, Basic credentials, CIDR, conf setters for
                                 status codes and log levels, typed fixed responses;
                                 1.4: the cache's hit hook, sws_http_upstream_cache_hit;
                                 1.5: sws_http_upstream_date,
                                 sws_http_upstream_cache_convert_head, prepared stored
                                 heads (sws_http_stored_prepare, sws_http_send_stored_head);
                                 1.6: sws_http_server_name_match, sws_hostnames,
                                 the framework's bind, socket_keepalive,
                                 busy_buffers_size, limit_rate, h1 request body;
                                 1.7: helpers' socket handoff, readiness, ready and
                                 exit callbacks, sws_helper_status; server lists by
                                 handle (sws_http_upstream_list*); size fields in
                                 the statistics structs; SWS_HTTP_PREACCESS_PHASE,
                                 sws_http_register_phase_handler (a handler's
                                 phase, order and the locations it has work in);
                                 sws_http_connection() retired (a request
                                 has a session, not a connection; no module
                                 used it); sws_http_format_string (inline),
                                 keyed shared zones (sws_keyed_zone.h), the
                                 zones listed and inspected (sws_shm_zone_count
                                 .. _info);
                                 1.8: run-time DNS (sws_resolver.h: sws_resolver_conf,
                                 _resolve, _cancel, _strerror), sws_keyed_zone_get;
                                 subrequests (sws_http_subrequest,
                                 sws_http_parent, sws_http_subrequest_body,
                                 SWS_HTTP_SUBREQUEST_OUTPUT: a subrequest's
                                 body to the parent's client, in order),
                                 SWS_HTTP_ORDER_AUTH_REQUEST, _MIRROR; the h1
                                 request's own_length;
                                 SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE
                                 (proxy_ssl_password_file);
                                 body transforms (sws_http_transform_create,
                                 sws_http_transform_filter), for gzip, gunzip and
                                 sub_filter in one chain; sws_http_set_gzip_vary,
                                 sws_http_gzip_vary, sws_http_weak_etag;
                                 CGI-style protocols'
                                 shared parameters, response head and
                                 directive table (sws_upstream_cgi.h:
                                 sws_http_cgi_*), sws_http_upstream_body_chain;
                                 (the admin module) sws_http_conf_own_server,
                                 sws_http_conf_public_listen, sws_cycle_conf_file;
                                 responses by status class and bytes in
                                 sws_status_t, sws_status_get_worker,
                                 sws_status_get_protocols (TLS, HTTP/2);
                                 sws_server.h (sws_server_control, _status,
                                 _helper); sws_http_upstream_stats_histogram;
                                 the cache hooks' SWS_UPSTREAM_CACHE_WATCH,
                                 sws_http_upstream_cache_pass_if_none_match
                                 (store_header sees the head of a response it
                                 does not store), a HEAD's head; a stored Date
                                 sent as the response's own
                                 (sws_http_response_date), the stored head's
                                 flags (SWS_HTTP_STORED_HEAD_DATE);
                                 a keyed zone's outcome counters
                                 (sws_keyed_zone_type_t's counters,
                                 sws_keyed_zone_counters, _counters_sum)
                                 and the zones listed (sws_keyed_zone_at,
                                 sws_keyed_zone_type); sws_status_slot
                                 (a module's per-worker counters); a
                                 cache's figures (sws_http_cache_stats,
                                 _stats_register);
                                 1.9: SWS_HTTP_LOC_NAMED, _NESTED
                                 (sws_http_conf_location's kind of a named
                                 location and of an if/limit_except block);
                                 status zones (sws_http_status_zone_stats,
                                 _codes); a server marked down, kept listed
                                 (sws_http_upstream_list_down);
                                 not_modified's SWS_UPSTREAM_CACHE_MISS (the
                                 request again, without validators);
                                 sws_http_upstream_cache_pass_range (a MISS
                                 sends the client's Range), sws_http_parse_range
                                 and sws_http_range_t;
                                 a module's own files through the worker's
                                 open file cache (sws_http_open_cached with
                                 sws_http_file_cache_t, sws_http_file_attach,
                                 sws_http_file_forget; sws_http_file_t's
                                 attached and cached, from reserved);
                                 managed applications (sws_app.h: sws_app_add,
                                 _entry, _set_program, _add_arg, _add_socket_arg,
                                 _set_socket_env, _set_env, _done, _name, _root,
                                 _env_set);
                                 1.10: sws_http_unparsed_uri_valid (set $args
                                 changes the request's query);
                                 what an application speaks and the
                                 passes to it checked against it
                                 (sws_app_set_protocol,
                                 sws_app_expect_protocol); a body from a
                                 file the server passes
                                 (sws_http_upstream_conf_set_recv_fds,
                                 _take_fd, _body_file);
                                 sws_http_range_multipart_text (a
                                 multipart/byteranges body's texts, as the
                                 range filter makes them),
                                 sws_http_preconditions (the not-modified
                                 filter's judgement against given
                                 validators);
                                 1.11: sws_http_allow_single_range (one
                                 range at most: proxy_force_ranges);
                                 1.12: sws_http_encoded_slash (the
                                 parser's note of a %2F in the path) */

/* Put this first in a module's descriptor initialiser; the fields after it
 * may be given in order, or better by name (.name = "x", .commands = ...). */
#define SWS_MODULE_ABI  .abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR

#define SWS_MODULE_SYMBOL "sws_module"

struct sws_module_s {
    uint32_t              abi_major;
    uint32_t              abi_minor;
    const char           *name;
    /* Names of modules that must be loaded (and are initialised) first;
     * NULL-terminated, or NULL. */
    const char *const    *requires;
    /* Directives; the array ends with an entry whose name is NULL. */
    const sws_command_t  *commands;

    /* Configuration hooks. create_* return a new conf struct (pool memory)
     * with every field unset; merge_* fill unset child fields from parent.
     * They return NULL (SWS_CONF_OK) or an error message. */
    void       *(*create_main_conf)(sws_conf_t *cf);
    char       *(*init_main_conf)(sws_conf_t *cf, void *conf);
    void       *(*create_srv_conf)(sws_conf_t *cf);
    char       *(*merge_srv_conf)(sws_conf_t *cf, void *parent, void *child);
    void       *(*create_loc_conf)(sws_conf_t *cf);
    char       *(*merge_loc_conf)(sws_conf_t *cf, void *parent, void *child);

    /* After the whole configuration is read: register phase handlers and
     * filters (sws_http.h). */
    sws_int_t   (*postconfiguration)(sws_conf_t *cf);
    sws_int_t   (*init_master)(sws_cycle_t *cycle);
    sws_int_t   (*init_worker)(sws_cycle_t *cycle);
    void        (*exit_worker)(sws_cycle_t *cycle);

    /* New fields come from here, each with a minor bump. The union keeps
     * the layout, and initialisers written for 1.0 ({ NULL } here) valid. */
    union {
        void        *reserved[8];
        struct {
            sws_uint_t   flags;  /* SWS_MODULE_* below (ABI 1.1) */
        };
    };

    /* Set by the core at load time; modules never write these. */
    sws_uint_t   index;          /* position among all loaded modules */
    sws_uint_t   ctx_index;      /* position among modules with http confs */
};

/* flags: the module may be loaded by a server of an older minor ABI (from
 * 1.1 on): it takes every function newer than that server through
 * sws_sdk_function() and copes with NULL. Without it, a module built for a
 * newer minor is refused. */
#define SWS_MODULE_CHECKS_SDK  0x0001

/* The address of the SDK function (or object) called name if this scalwsd
 * has it, else NULL. Calling a function by name links nothing, so a module
 * that asks for a newer function still loads where it is missing. */
void *sws_sdk_function(const char *name);

/* The same, typed from the declaration in the SDK headers the module was
 * built with (no reference to the symbol is made):
 *     __typeof__(&sws_x) x = sws_sdk_lookup(sws_x);   ... if (x) x(...);  */
#define sws_sdk_lookup(name)  ((__typeof__(&(name))) sws_sdk_function(#name))

/* Loaded modules, for other modules that want to look one up. */
sws_module_t *sws_module_find(sws_cycle_t *cycle, const char *name);

/* The user the workers (and helpers) of cycle run as, when the master runs
 * as root and they change to it; else -1, and so is *gid. For a module
 * that makes directories the workers write into (a cache path). ABI 1.2. */
sws_int_t sws_cycle_worker_user(sws_cycle_t *cycle, sws_int_t *gid);

/* The main configuration file of cycle, an absolute path (NUL-terminated).
 * ABI 1.8. */
const sws_str_t *sws_cycle_conf_file(sws_cycle_t *cycle);

#endif
