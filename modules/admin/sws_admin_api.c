/*
 * GET /api/ and /api/SECTION: the JSON documents, read from what the core
 * keeps in shared memory (docs/admin.md lists the fields).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sws_admin.h"

#define sws_admin_str(o, key, s)  sws_admin_json_str(o, key, (s)->data, (s)->len)

int
sws_admin_worker_used(sws_uint_t i, sws_status_t *st)
{
    if (sws_status_get_worker(i, st) != 0) {
        return 0;
    }
    return i == 0 || st->accepted || st->requests || st->active;
}

static void
sws_admin_api_server(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_admin_state_t     *st = amcf->zone->data;
    sws_server_status_t    ss;
    u_char                 abi[16], *p;

    p = sws_slprintf(abi, abi + sizeof(abi), "%u.%u", SWS_ABI_MAJOR, SWS_ABI_MINOR);
    sws_admin_json_open(o, key, '{');
    sws_admin_json_cstr(o, "version", SCALWS_VERSION);
    sws_admin_json_cstr(o, "build", "cc " __VERSION__);
    sws_admin_json_str(o, "abi", abi, (size_t) (p - abi));
    sws_admin_json_int(o, "start_time", (int64_t) st->start);
    sws_admin_json_int(o, "load_time", (int64_t) st->loaded);
    sws_admin_json_int(o, "now", (int64_t) sws_time_sec());
    sws_admin_json_int(o, "master_pid", (int64_t) getppid());
    sws_admin_json_int(o, "worker_pid", (int64_t) getpid());
    sws_admin_str(o, "config_file", &amcf->conf_file);
    sws_admin_json_cstr(o, "config_sha256", (char *) amcf->conf_sha256);
    sws_admin_json_bool(o, "draining", st->drain_at != 0);
    sws_memzero(&ss, sizeof(ss));
    ss.size = sizeof(ss);
    if (sws_server_status(&ss) == SWS_OK) {
        sws_admin_json_uint(o, "generation", ss.generation);
        sws_admin_json_uint(o, "reloads", ss.reloads);
        sws_admin_json_uint(o, "reload_failures", ss.reload_failures);
        if (ss.reloads) {
            sws_admin_json_bool(o, "last_reload_ok", ss.last_reload_ok);
            sws_admin_json_int(o, "last_reload_time", (int64_t) ss.last_reload);
            sws_admin_json_cstr(o, "last_reload_error",
                                ss.last_reload_ok ? NULL : ss.last_error);
        }
        if (ss.quit_in >= 0) {
            sws_admin_json_int(o, "quit_in_ms", ss.quit_in);
        }
    }
    sws_admin_json_close(o, '}');
}

static void
sws_admin_connections(sws_admin_out_t *o, const char *key, const sws_status_t *st)
{
    sws_admin_json_open(o, key, '{');
    sws_admin_json_uint(o, "accepted", st->accepted);
    sws_admin_json_uint(o, "handled", st->handled);
    sws_admin_json_uint(o, "dropped", st->accepted - st->handled);
    sws_admin_json_uint(o, "active", st->active);
    sws_admin_json_uint(o, "reading", st->reading);
    sws_admin_json_uint(o, "writing", st->writing);
    sws_admin_json_uint(o, "idle", st->waiting);
    sws_admin_json_close(o, '}');
}

static const char *const  sws_admin_classes[5] = { "1xx", "2xx", "3xx", "4xx", "5xx" };

/* "responses": {"1xx": N, ... "5xx": N} */
static void
sws_admin_classes_out(sws_admin_out_t *o, const uint64_t *responses)
{
    sws_uint_t  k;

    sws_admin_json_open(o, "responses", '{');
    for (k = 0; k < 5; k++) {
        sws_admin_json_uint(o, sws_admin_classes[k], responses[k]);
    }
    sws_admin_json_close(o, '}');
}

static void
sws_admin_requests_fields(sws_admin_out_t *o, const sws_status_t *st)
{
    sws_admin_json_uint(o, "requests", st->requests);
    sws_admin_classes_out(o, st->responses);
    sws_admin_json_uint(o, "bytes_in", st->bytes_in);
    sws_admin_json_uint(o, "bytes_out", st->bytes_out);
}

static void
sws_admin_requests(sws_admin_out_t *o, const char *key, const sws_status_t *st)
{
    sws_admin_json_open(o, key, '{');
    sws_admin_requests_fields(o, st);
    sws_admin_json_close(o, '}');
}

/* {"requests": N, "responses": {"1xx": N, ...}, "codes": {"200": N, ...},
 * "discarded": N, "bytes_in": N, "bytes_out": N, "request_time_ms_total": N}:
 * status zone i, read into st. */
static void
sws_admin_status_zone(sws_http_request_t *r, sws_admin_out_t *o, const char *key,
    sws_uint_t i, const sws_http_status_zone_stats_t *st)
{
    sws_http_status_code_count_t  c[SWS_HTTP_STATUS_ZONE_CODES];
    sws_uint_t                    k, n = SWS_HTTP_STATUS_ZONE_CODES;
    char                          code[16];

    sws_admin_json_open(o, key, '{');
    sws_admin_json_uint(o, "requests", st->requests);
    sws_admin_classes_out(o, st->responses);
    sws_admin_json_open(o, "codes", '{');
    if (sws_http_status_zone_codes(r, i, c, &n) == SWS_OK) {
        for (k = 0; k < n; k++) {
            snprintf(code, sizeof(code), "%lu", (unsigned long) c[k].code);
            sws_admin_json_uint(o, code, c[k].count);
        }
    }
    sws_admin_json_close(o, '}');
    sws_admin_json_uint(o, "discarded", st->discarded);
    sws_admin_json_uint(o, "bytes_in", st->bytes_in);
    sws_admin_json_uint(o, "bytes_out", st->bytes_out);
    sws_admin_json_uint(o, "request_time_ms_total", st->time_ms);
    sws_admin_json_close(o, '}');
}

/* The next status zone of servers (location 0) or of locations (1) from
 * *i on, into st: SWS_OK, or SWS_DECLINED past the last. */
static sws_int_t
sws_admin_status_zone_next(sws_http_request_t *r, sws_uint_t location, sws_uint_t *i,
    sws_http_status_zone_stats_t *st)
{
    for ( ;; (*i)++) {
        sws_memzero(st, sizeof(*st));
        st->size = sizeof(*st);
        if (sws_http_status_zone_stats(r, *i, st) != SWS_OK) {
            return SWS_DECLINED;
        }
        if (st->location == location) {
            return SWS_OK;
        }
    }
}

/* {"NAME": {...}, ...}: the status zones of servers or of locations. */
static void
sws_admin_status_zones(sws_http_request_t *r, sws_admin_out_t *o, const char *key,
    sws_uint_t location)
{
    sws_http_status_zone_stats_t  st;
    sws_uint_t                    i;
    char                          name[256];

    sws_admin_json_open(o, key, '{');
    for (i = 0; sws_admin_status_zone_next(r, location, &i, &st) == SWS_OK; i++) {
        snprintf(name, sizeof(name), "%.*s", (int) st.name.len, st.name.data);
        sws_admin_status_zone(r, o, name, i, &st);
    }
    sws_admin_json_close(o, '}');
}

sws_int_t
sws_admin_status_zone_named(sws_http_request_t *r, sws_admin_out_t *o, sws_uint_t location,
    const sws_str_t *name)
{
    sws_http_status_zone_stats_t  st;
    sws_uint_t                    i;

    for (i = 0; sws_admin_status_zone_next(r, location, &i, &st) == SWS_OK; i++) {
        if (sws_str_eq(&st.name, name)) {
            if (o) {
                sws_admin_status_zone(r, o, NULL, i, &st);
            }
            return SWS_OK;
        }
    }
    return SWS_DECLINED;
}

static void
sws_admin_api_server_zones(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_status_zones(r, o, key, 0);
}

static void
sws_admin_api_location_zones(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_status_zones(r, o, key, 1);
}

static void
sws_admin_api_connections(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_status_t  st;

    sws_status_get(&st);
    sws_admin_connections(o, key, &st);
}

/* The server's requests, and its status zones (status_zone). */
static void
sws_admin_api_http(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_status_t  st;

    sws_status_get(&st);
    sws_admin_json_open(o, key, '{');
    sws_admin_requests_fields(o, &st);
    sws_admin_api_server_zones(r, o, "server_zones");
    sws_admin_api_location_zones(r, o, "location_zones");
    sws_admin_json_close(o, '}');
}

/* TLS and HTTP/2 (zeros from a core that does not count them). */
static void
sws_admin_protocols(sws_status_protocols_t *st)
{
    sws_memzero(st, sizeof(*st));
    st->size = sizeof(*st);
    (void) sws_status_get_protocols(st);
}

static void
sws_admin_api_tls(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_status_protocols_t  st;

    sws_admin_protocols(&st);
    sws_admin_json_open(o, key, '{');
    sws_admin_json_uint(o, "handshakes", st.tls_handshakes);
    sws_admin_json_uint(o, "resumed", st.tls_resumed);
    sws_admin_json_uint(o, "failed", st.tls_failed);
    sws_admin_json_open(o, "versions", '{');
    sws_admin_json_uint(o, "TLSv1.3", st.tls_v13);
    sws_admin_json_uint(o, "TLSv1.2", st.tls_v12);
    sws_admin_json_uint(o, "older", st.tls_older);
    sws_admin_json_close(o, '}');
    sws_admin_json_close(o, '}');
}

static void
sws_admin_api_http2(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_status_protocols_t  st;

    sws_admin_protocols(&st);
    sws_admin_json_open(o, key, '{');
    sws_admin_json_uint(o, "connections", st.http2_connections);
    sws_admin_json_uint(o, "streams", st.http2_streams);
    sws_admin_json_close(o, '}');
}

static void
sws_admin_api_workers(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_status_t  st;
    sws_uint_t    i;

    sws_admin_json_open(o, key, '[');
    for (i = 0; i < SWS_STATUS_WORKERS; i++) {
        if (!sws_admin_worker_used(i, &st)) {
            continue;
        }
        sws_admin_json_open(o, NULL, '{');
        sws_admin_json_uint(o, "id", i);
        sws_admin_connections(o, "connections", &st);
        sws_admin_requests(o, "http", &st);
        sws_admin_json_close(o, '}');
    }
    sws_admin_json_close(o, ']');
}

static void
sws_admin_upstream_server(sws_admin_out_t *o, sws_uint_t i, const sws_http_upstream_stats_t *us)
{
    sws_http_upstream_bucket_t  b[SWS_HTTP_UPSTREAM_TIME_BUCKETS];
    sws_uint_t                  k, n = SWS_HTTP_UPSTREAM_TIME_BUCKETS;

    sws_admin_json_open(o, NULL, '{');
    sws_admin_str(o, "server", &us->server);
    sws_admin_str(o, "address", &us->addr);
    sws_admin_json_cstr(o, "state", us->state);
    sws_admin_json_uint(o, "weight", us->weight);
    sws_admin_json_bool(o, "backup", us->backup);
    sws_admin_json_uint(o, "active", us->active);
    sws_admin_json_uint(o, "idle", us->idle);
    sws_admin_json_uint(o, "requests", us->requests);
    sws_admin_json_uint(o, "responses", us->responses);
    sws_admin_json_open(o, "status", '{');
    for (k = 0; k < 5; k++) {
        sws_admin_json_uint(o, sws_admin_classes[k], us->status[k]);
    }
    sws_admin_json_close(o, '}');
    sws_admin_json_uint(o, "failures", us->failures);
    sws_admin_json_uint(o, "response_time_ms_total", us->response_time_ms);
    /* cumulative: [{"le": ms, "count": responses within}], then all */
    sws_admin_json_open(o, "response_time_histogram", '[');
    if (sws_http_upstream_stats_histogram(i, b, &n) == SWS_OK) {
        for (k = 0; k < n; k++) {
            sws_admin_json_open(o, NULL, '{');
            sws_admin_json_int(o, "le_ms", b[k].le);
            sws_admin_json_uint(o, "count", b[k].count);
            sws_admin_json_close(o, '}');
        }
    }
    sws_admin_json_close(o, ']');
    sws_admin_json_uint(o, "health_checks", us->health_checks);
    sws_admin_json_uint(o, "health_check_failures", us->health_fails);
    sws_admin_json_close(o, '}');
}

/* {"GROUP": {"servers": [...]}, ...}: the stats list the configured
 * servers group by group; a group that takes changes at run time lists
 * them, then those added, from its run-time list. */
static void
sws_admin_api_upstreams(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_http_upstream_stats_t  us, ls;
    sws_uint_t                 i, k, first, n = sws_http_upstream_stats_count();
    sws_int_t                  list;
    u_char                    *name;

    sws_admin_json_open(o, key, '{');
    for (i = 0; i < n; i = first) {
        sws_memzero(&us, sizeof(us));
        us.size = sizeof(us);
        if (sws_http_upstream_stats_read(i, &us) != SWS_OK) {
            break;
        }
        /* the group's configured servers: [i, first) */
        for (first = i + 1; first < n; first++) {
            sws_memzero(&ls, sizeof(ls));
            ls.size = sizeof(ls);
            if (sws_http_upstream_stats_read(first, &ls) != SWS_OK
                || !sws_str_eq(&ls.upstream, &us.upstream))
            {
                break;
            }
        }
        /* the writer takes keys as C strings */
        name = sws_pnalloc(sws_http_pool(r), us.upstream.len + 1);
        if (name == NULL) {
            o->overflow = 1;
            return;
        }
        sws_memcpy(name, us.upstream.data, us.upstream.len);
        name[us.upstream.len] = '\0';
        sws_admin_json_open(o, (char *) name, '{');
        list = sws_http_upstream_list_handle(&us.upstream);
        sws_admin_json_bool(o, "changeable", list > 0);
        sws_admin_json_open(o, "servers", '[');
        for (k = 0; ; k++) {
            sws_memzero(&ls, sizeof(ls));
            ls.size = sizeof(ls);
            if (list > 0 ? sws_http_upstream_list_info(list, k, &ls) != SWS_OK
                         : (i + k >= first || sws_http_upstream_stats_read(i + k, &ls)
                                              != SWS_OK))
            {
                break;
            }
            /* an added server has no histogram (past the configured ones) */
            sws_admin_upstream_server(o, i + k < first ? i + k : n, &ls);
        }
        sws_admin_json_close(o, ']');
        sws_admin_json_close(o, '}');
    }
    sws_admin_json_close(o, '}');
}

static void
sws_admin_api_helpers(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_server_helper_t  hs;
    sws_uint_t           i;

    sws_admin_json_open(o, key, '[');
    for (i = 0; ; i++) {
        sws_memzero(&hs, sizeof(hs));
        hs.size = sizeof(hs);
        if (sws_server_helper(i, &hs) != SWS_OK) {
            break;
        }
        sws_admin_json_open(o, NULL, '{');
        sws_admin_json_cstr(o, "name", hs.name);
        sws_admin_json_int(o, "pid", hs.pid);
        sws_admin_json_cstr(o, "state", hs.ready ? "ready" : hs.running ? "starting"
                                                  : "stopped");
        sws_admin_json_uint(o, "starts", hs.starts);
        sws_admin_json_uint(o, "restarts", hs.starts ? hs.starts - 1 : 0);
        sws_admin_json_uint(o, "exits", hs.exits);
        if (hs.exits) {
            sws_admin_json_open(o, "last_exit", '{');
            sws_admin_json_int(o, "code", hs.last_code);
            sws_admin_json_int(o, "signal", hs.last_signo);
            sws_admin_json_close(o, '}');
        }
        sws_admin_json_close(o, '}');
    }
    sws_admin_json_close(o, ']');
}

static void
sws_admin_api_zones(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_shm_zone_info_t    info;
    sws_shm_zone_t        *zone;
    sws_uint_t             i, n = sws_shm_zone_count(amcf->cycle);

    sws_admin_json_open(o, key, '[');
    for (i = 0; i < n; i++) {
        zone = sws_shm_zone_get(amcf->cycle, i);
        sws_memzero(&info, sizeof(info));
        info.size = sizeof(info);
        if (zone == NULL || sws_shm_zone_info(amcf->cycle, zone, &info) != SWS_OK) {
            continue;
        }
        sws_admin_json_open(o, NULL, '{');
        sws_admin_str(o, "name", &info.name);
        sws_admin_json_cstr(o, "owner", info.owner);
        sws_admin_json_uint(o, "size", info.zone_size);
        if (info.slab) {
            sws_admin_json_uint(o, "page_size", info.page_size);
            sws_admin_json_uint(o, "pages", info.pages);
            sws_admin_json_uint(o, "used_pages", info.used_pages);
            sws_admin_json_uint(o, "free_pages", info.free_pages);
        }
        sws_admin_json_close(o, '}');
    }
    sws_admin_json_close(o, ']');
}

/* Zone i of cycle is the first of its type among those that count: the
 * JSON and the metrics group the zones by type (owner). */
int
sws_admin_limits_first(sws_cycle_t *cycle, sws_uint_t i)
{
    sws_keyed_zone_t  *z = sws_keyed_zone_at(cycle, i);
    sws_uint_t         k;

    if (z == NULL || sws_keyed_zone_type(z)->counters == NULL) {
        return 0;
    }
    for (k = 0; k < i; k++) {
        if (sws_keyed_zone_type(sws_keyed_zone_at(cycle, k)) == sws_keyed_zone_type(z)) {
            return 0;
        }
    }
    return 1;
}

/* "ZONE": {["keys": N,] "COUNTER": N, ...} for each zone of the type of
 * zone i, from i on. */
static void
sws_admin_counted_zones(sws_admin_out_t *o, sws_cycle_t *cycle, sws_uint_t i, int keys)
{
    const sws_keyed_zone_type_t *type = sws_keyed_zone_type(sws_keyed_zone_at(cycle, i));
    sws_keyed_zone_t            *z;
    const sws_str_t             *name;
    uint64_t                     sum[SWS_KEYED_ZONE_COUNTERS];
    sws_uint_t                   c, n;
    char                         zname[256];

    for (; (z = sws_keyed_zone_at(cycle, i)) != NULL; i++) {
        if (sws_keyed_zone_type(z) != type) {
            continue;
        }
        name = sws_keyed_zone_name(z);
        snprintf(zname, sizeof(zname), "%.*s", (int) name->len, name->data);
        sws_admin_json_open(o, zname, '{');
        if (keys) {
            sws_keyed_zone_lock(z);
            n = sws_keyed_zone_count(z);
            sws_keyed_zone_unlock(z);
            sws_admin_json_uint(o, "keys", n);
        }
        sws_keyed_zone_counters_sum(z, sum, SWS_KEYED_ZONE_COUNTERS);
        for (c = 0; type->counters[c] && c < SWS_KEYED_ZONE_COUNTERS; c++) {
            sws_admin_json_uint(o, type->counters[c], sum[c]);
        }
        sws_admin_json_close(o, '}');
    }
}

/* The resolvers' status zones have a section of their own. */
int
sws_admin_is_resolver(sws_cycle_t *cycle, sws_uint_t i)
{
    return strcmp(sws_keyed_zone_type(sws_keyed_zone_at(cycle, i))->name,
                  "resolver_status") == 0;
}

/* {"limit_req": {"ZONE": {"keys": N, "passed": N, ...}}, "limit_conn": ...} */
static void
sws_admin_api_limits(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_main_conf_t  *amcf = sws_http_main_conf(r, &sws_module);
    sws_uint_t              i;

    sws_admin_json_open(o, key, '{');
    for (i = 0; sws_keyed_zone_at(amcf->cycle, i); i++) {
        if (sws_admin_limits_first(amcf->cycle, i) && !sws_admin_is_resolver(amcf->cycle, i)) {
            sws_admin_json_open(o, sws_keyed_zone_type(sws_keyed_zone_at(amcf->cycle, i))->name,
                                '{');
            sws_admin_counted_zones(o, amcf->cycle, i, 1);
            sws_admin_json_close(o, '}');
        }
    }
    sws_admin_json_close(o, '}');
}

/* {"ZONE": {"queries": N, "answers": N, ...}}: the resolvers' status_zone */
static void
sws_admin_api_resolvers(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_admin_main_conf_t  *amcf = sws_http_main_conf(r, &sws_module);
    sws_uint_t              i;

    sws_admin_json_open(o, key, '{');
    for (i = 0; sws_keyed_zone_at(amcf->cycle, i); i++) {
        if (sws_admin_limits_first(amcf->cycle, i) && sws_admin_is_resolver(amcf->cycle, i)) {
            sws_admin_counted_zones(o, amcf->cycle, i, 0);
        }
    }
    sws_admin_json_close(o, '}');
}

const char *const  sws_admin_cache_statuses[SWS_HTTP_CACHE_STATUSES] = {
    "miss", "hit", "expired", "stale", "updating", "revalidated", "bypass"
};

/* {"NAME": {"entries": N, "disk_bytes": N, ..., "responses": {"miss": N, ...}}} */
static void
sws_admin_api_caches(sws_http_request_t *r, sws_admin_out_t *o, const char *key)
{
    sws_http_cache_stats_t  st;
    sws_uint_t              i, k;
    char                    name[256];

    sws_admin_json_open(o, key, '{');
    for (i = 0; ; i++) {
        sws_memzero(&st, sizeof(st));
        st.size = sizeof(st);
        if (sws_http_cache_stats(r, i, &st) != SWS_OK) {
            break;
        }
        snprintf(name, sizeof(name), "%.*s", (int) st.name.len, st.name.data);
        sws_admin_json_open(o, name, '{');
        sws_admin_json_uint(o, "entries", st.entries);
        sws_admin_json_uint(o, "disk_bytes", st.disk_bytes);
        sws_admin_json_uint(o, "memory_bytes", st.memory_bytes);
        sws_admin_json_uint(o, "max_disk_bytes", st.max_disk_bytes);
        sws_admin_json_uint(o, "max_memory_bytes", st.max_memory_bytes);
        sws_admin_json_uint(o, "evictions", st.evictions);
        sws_admin_json_open(o, "responses", '{');
        for (k = 0; k < SWS_HTTP_CACHE_STATUSES; k++) {
            sws_admin_json_uint(o, sws_admin_cache_statuses[k], st.responses[k]);
        }
        sws_admin_json_close(o, '}');
        sws_admin_json_close(o, '}');
    }
    sws_admin_json_close(o, '}');
}

const sws_admin_section_t  sws_admin_sections[] = {
    { "server", sws_admin_api_server },
    { "connections", sws_admin_api_connections },
    { "http", sws_admin_api_http },
    { "workers", sws_admin_api_workers },
    { "tls", sws_admin_api_tls },
    { "http2", sws_admin_api_http2 },
    { "upstreams", sws_admin_api_upstreams },
    { "helpers", sws_admin_api_helpers },
    { "zones", sws_admin_api_zones },
    { "limits", sws_admin_api_limits },
    { "caches", sws_admin_api_caches },
    { "resolvers", sws_admin_api_resolvers },
    /* parts of one above, on their own paths (not again in /api/) */
    { "http/server_zones", sws_admin_api_server_zones },
    { "http/location_zones", sws_admin_api_location_zones },
    { NULL, NULL }
};
