/*
 * The admin module (docs/admin.md): what its files share.
 *
 *   sws_admin_module.c   the admin { } block, tokens, the routes
 *   sws_admin_api.c      GET /api/...: the JSON documents
 *   sws_admin_metrics.c  GET /metrics: Prometheus and OpenMetrics text
 *   sws_admin_change.c   POST/PATCH/DELETE under /api/: the changes
 *   sws_admin_state.c    the state file of the upstream changes
 *   sws_admin_console.c  GET /: the console page, its CSS and script
 *   sws_admin_json.c     the output buffer and the JSON writer
 */
#ifndef SWS_ADMIN_H
#define SWS_ADMIN_H

#include <scalws/scalws.h>
#include "sws_admin_json.h"

/* What lasts across reloads, in the shared zone "admin:state". */
typedef struct {
    time_t      start;          /* when the first configuration was loaded */
    time_t      loaded;         /* when the last one was read */
    sws_msec_t  drain_at;       /* a drain was asked then (0: none) */
} sws_admin_state_t;

typedef struct {
    sws_cycle_t        *cycle;       /* of this configuration */
    sws_shm_zone_t     *zone;        /* admin:state */
    sws_str_t           conf_file;
    u_char              conf_sha256[65];  /* hex; "" when it could not be read */
    sws_uint_t          parsing;     /* inside an admin { } block now */
    sws_str_t           state_file;  /* "" if none */
    sws_log_t          *log;
} sws_admin_main_conf_t;

#define SWS_ADMIN_READ   1
#define SWS_ADMIN_WRITE  2

typedef struct {
    sws_str_t   value;
    sws_uint_t  access;          /* SWS_ADMIN_READ, or | SWS_ADMIN_WRITE */
} sws_admin_token_t;

typedef struct {
    sws_uint_t    admin;         /* this server is an admin { } block */
    sws_array_t  *tokens;        /* sws_admin_token_t; NULL: no token_file */
    sws_str_t     token_file;
    sws_msec_t    drain_time;    /* drain_time: before a drain quits */
} sws_admin_srv_conf_t;

extern sws_module_t  sws_module;

/* A section of /api/: writes its value (an object or array) under key. */
typedef void (*sws_admin_section_pt)(sws_http_request_t *r, sws_admin_out_t *o,
    const char *key);

typedef struct {
    const char            *name;
    sws_admin_section_pt   write;
} sws_admin_section_t;

/* Ends with name NULL; a name with a "/" is part of another section, on
 * a path of its own only (not again in the whole /api/ document). */
extern const sws_admin_section_t  sws_admin_sections[];

/* The names of sws_http_cache_stats_t's responses[], as JSON keys and labels. */
extern const char *const  sws_admin_cache_statuses[SWS_HTTP_CACHE_STATUSES];

/* Keyed zone i of cycle counts outcomes and is the first of its type. */
int sws_admin_limits_first(sws_cycle_t *cycle, sws_uint_t i);
/* ... and is a resolver's status_zone (shown apart from the limits). */
int sws_admin_is_resolver(sws_cycle_t *cycle, sws_uint_t i);

/* The console's files (sws_admin_console.c), by path; ends with path NULL. */
typedef struct {
    const char  *path;
    const char  *type;
    const char  *data;
    size_t       len;
} sws_admin_asset_t;

extern const sws_admin_asset_t  sws_admin_console[];

/* GET /api/http/server_zones/NAME (location 0), location_zones/NAME (1):
 * the zone written to o (NULL: only looked for); SWS_DECLINED: none. */
sws_int_t sws_admin_status_zone_named(sws_http_request_t *r, sws_admin_out_t *o,
    sws_uint_t location, const sws_str_t *name);

/* The worker slots that have counted something (or slot 0). */
int sws_admin_worker_used(sws_uint_t i, sws_status_t *st);

sws_int_t sws_admin_metrics(sws_http_request_t *r, sws_admin_out_t *o, int openmetrics);

/* A POST, PATCH or DELETE under /api/ (path: what follows it), with a
 * read-write token: SWS_DONE or an HTTP status. */
sws_int_t sws_admin_change(sws_http_request_t *r, const sws_str_t *path);

/* The state file: written after a change, applied at configuration load. */
void      sws_admin_state_save(sws_http_request_t *r);
sws_int_t sws_admin_state_apply(sws_cycle_t *cycle, sws_admin_main_conf_t *amcf);

#endif
