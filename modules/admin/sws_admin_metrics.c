/*
 * GET /metrics: the same figures as /api/, in the Prometheus text format
 * (0.0.4), or OpenMetrics 1.0 when the client asks for it in Accept. The
 * two differ in a counter's family name (OpenMetrics names the family
 * without "_total", its samples with it), the info type, and the "# EOF"
 * that ends an OpenMetrics exposition.
 */
#include <stdio.h>
#include "sws_admin.h"

typedef struct {
    sws_admin_out_t  *o;
    int               om;           /* OpenMetrics */
    const char       *name;         /* the family's base name */
    const char       *suffix;       /* of its samples: "_total", "_info", "" */
} sws_admin_prom_t;

#define SWS_ADMIN_COUNTER  0
#define SWS_ADMIN_GAUGE    1
#define SWS_ADMIN_INFO     2
#define SWS_ADMIN_HISTOGRAM  3

static void
sws_admin_prom_family(sws_admin_prom_t *m, const char *name, sws_uint_t type, const char *help)
{
    static const char *const  types[] = { "counter", "gauge", "info", "histogram" };
    const char               *fam;

    m->name = name;
    m->suffix = type == SWS_ADMIN_COUNTER ? "_total" : type == SWS_ADMIN_INFO ? "_info" : "";
    /* The text format has no info type: a gauge named NAME_info. */
    fam = m->om || (type != SWS_ADMIN_COUNTER && type != SWS_ADMIN_INFO) ? "" : m->suffix;
    if (!m->om && type == SWS_ADMIN_INFO) {
        type = SWS_ADMIN_GAUGE;
    }
    sws_admin_out_cstr(m->o, "# HELP ");
    sws_admin_out_cstr(m->o, name);
    sws_admin_out_cstr(m->o, fam);
    sws_admin_out_bytes(m->o, " ", 1);
    sws_admin_out_cstr(m->o, help);
    sws_admin_out_cstr(m->o, "\n# TYPE ");
    sws_admin_out_cstr(m->o, name);
    sws_admin_out_cstr(m->o, fam);
    sws_admin_out_bytes(m->o, " ", 1);
    sws_admin_out_cstr(m->o, types[type]);
    sws_admin_out_bytes(m->o, "\n", 1);
}

/* A label value: backslash, double quote and line feed escaped. */
static void
sws_admin_prom_label_value(sws_admin_out_t *o, const u_char *s, size_t len)
{
    const u_char *p, *run = s;

    for (p = s; p < s + len; p++) {
        if (*p == '\\' || *p == '"' || *p == '\n') {
            sws_admin_out_bytes(o, run, (size_t) (p - run));
            sws_admin_out_bytes(o, *p == '\n' ? "\\n" : *p == '"' ? "\\\"" : "\\\\", 2);
            run = p + 1;
        }
    }
    sws_admin_out_bytes(o, run, (size_t) (p - run));
}

/* Labels: up to three name/value pairs (name NULL ends them early). */
typedef struct {
    const char       *name;
    const u_char     *data;
    size_t            len;
} sws_admin_label_t;

static void
sws_admin_prom_sample_as(sws_admin_prom_t *m, const char *suffix, const sws_admin_label_t *l,
    sws_uint_t nl, uint64_t value, int milli)
{
    sws_uint_t  i;

    sws_admin_out_cstr(m->o, m->name);
    sws_admin_out_cstr(m->o, suffix);
    for (i = 0; i < nl && l[i].name; i++) {
        sws_admin_out_bytes(m->o, i ? "," : "{", 1);
        sws_admin_out_cstr(m->o, l[i].name);
        sws_admin_out_bytes(m->o, "=\"", 2);
        sws_admin_prom_label_value(m->o, l[i].data, l[i].len);
        sws_admin_out_bytes(m->o, "\"", 1);
    }
    sws_admin_out_cstr(m->o, i ? "} " : " ");
    if (milli) {
        sws_admin_out_milli(m->o, value);
    } else {
        sws_admin_out_uint(m->o, value);
    }
    sws_admin_out_bytes(m->o, "\n", 1);
}

static void
sws_admin_prom_sample(sws_admin_prom_t *m, const sws_admin_label_t *l, sws_uint_t nl,
    uint64_t value)
{
    sws_admin_prom_sample_as(m, m->suffix, l, nl, value, 0);
}

static void
sws_admin_prom_one(sws_admin_prom_t *m, const char *name, sws_uint_t type, const char *help,
    uint64_t value)
{
    sws_admin_prom_family(m, name, type, help);
    sws_admin_prom_sample(m, NULL, 0, value);
}

#define sws_admin_label_cstr(n, s)  { n, (const u_char *) (s), sizeof(s) - 1 }

static const char *const  sws_admin_classes[5] = { "1xx", "2xx", "3xx", "4xx", "5xx" };

static void
sws_admin_metrics_server(sws_http_request_t *r, sws_admin_prom_t *m)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_admin_state_t     *st = amcf->zone->data;
    sws_server_status_t    ss;
    u_char                 abi[16], *p;
    sws_admin_label_t      l[2] = {
        sws_admin_label_cstr("version", SCALWS_VERSION), { "abi", abi, 0 }
    };

    p = sws_slprintf(abi, abi + sizeof(abi), "%u.%u", SWS_ABI_MAJOR, SWS_ABI_MINOR);
    l[1].len = (size_t) (p - abi);
    sws_admin_prom_family(m, "scalws_build", SWS_ADMIN_INFO, "The version of scalwsd.");
    sws_admin_prom_sample(m, l, 2, 1);
    sws_admin_prom_one(m, "scalws_start_time_seconds", SWS_ADMIN_GAUGE,
                       "When the server started, in seconds since the epoch.",
                       (uint64_t) st->start);
    sws_admin_prom_one(m, "scalws_config_load_time_seconds", SWS_ADMIN_GAUGE,
                       "When the running configuration was loaded.", (uint64_t) st->loaded);
    sws_memzero(&ss, sizeof(ss));
    ss.size = sizeof(ss);
    if (sws_server_status(&ss) == SWS_OK) {
        sws_admin_prom_one(m, "scalws_config_reloads", SWS_ADMIN_COUNTER,
                           "Reloads the master finished, done or refused.", ss.reloads);
        sws_admin_prom_one(m, "scalws_config_reload_failures", SWS_ADMIN_COUNTER,
                           "Reloads refused: the old configuration went on.",
                           ss.reload_failures);
        sws_admin_prom_one(m, "scalws_config_generation", SWS_ADMIN_GAUGE,
                           "The running configuration's generation (1 the first).",
                           ss.generation);
    }
    sws_admin_prom_one(m, "scalws_draining", SWS_ADMIN_GAUGE,
                       "1 while the server drains before it quits.", st->drain_at != 0);
}

static void
sws_admin_metrics_http(sws_admin_prom_t *m)
{
    sws_status_t       st, w[SWS_STATUS_WORKERS];
    u_char             id[SWS_STATUS_WORKERS][4];
    size_t             idlen[SWS_STATUS_WORKERS];
    int                used[SWS_STATUS_WORKERS];
    sws_admin_label_t  l[2];
    sws_uint_t         i, k;

    sws_status_get(&st);
    for (i = 0; i < SWS_STATUS_WORKERS; i++) {
        used[i] = sws_admin_worker_used(i, &w[i]);
        idlen[i] = (size_t) (sws_slprintf(id[i], id[i] + 4, "%lu", (unsigned long) i) - id[i]);
    }

    sws_admin_prom_one(m, "scalws_connections_accepted", SWS_ADMIN_COUNTER,
                       "Client connections accepted.", st.accepted);
    sws_admin_prom_one(m, "scalws_connections_handled", SWS_ADMIN_COUNTER,
                       "Client connections taken (not refused for lack of connections).",
                       st.handled);
    sws_admin_prom_one(m, "scalws_connections_active", SWS_ADMIN_GAUGE,
                       "Client connections open now.", st.active);
    sws_admin_prom_one(m, "scalws_connections_idle", SWS_ADMIN_GAUGE,
                       "Client connections with no request in progress.", st.waiting);

    sws_admin_prom_family(m, "scalws_http_requests_in_progress", SWS_ADMIN_GAUGE,
                          "Requests being read or answered now.");
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("state", "reading");
    sws_admin_prom_sample(m, l, 1, st.reading);
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("state", "writing");
    sws_admin_prom_sample(m, l, 1, st.writing);

    sws_admin_prom_family(m, "scalws_http_requests", SWS_ADMIN_COUNTER,
                          "Requests answered, by the class of their status.");
    for (k = 0; k < 5; k++) {
        l[0] = (sws_admin_label_t) { "code", (const u_char *) sws_admin_classes[k], 3 };
        sws_admin_prom_sample(m, l, 1, st.responses[k]);
    }
    sws_admin_prom_one(m, "scalws_http_received_bytes", SWS_ADMIN_COUNTER,
                       "Bytes of the requests answered (heads and bodies).", st.bytes_in);
    sws_admin_prom_one(m, "scalws_http_sent_bytes", SWS_ADMIN_COUNTER,
                       "Bytes of the responses (heads and bodies).", st.bytes_out);

    for (k = 0; k < 2; k++) {
        if (k == 0) {
            sws_admin_prom_family(m, "scalws_worker_connections_accepted", SWS_ADMIN_COUNTER,
                                  "Client connections accepted, by worker.");
        } else {
            sws_admin_prom_family(m, "scalws_worker_connections_active", SWS_ADMIN_GAUGE,
                                  "Client connections open now, by worker.");
        }
        for (i = 0; i < SWS_STATUS_WORKERS; i++) {
            if (used[i]) {
                l[0] = (sws_admin_label_t) { "worker", id[i], idlen[i] };
                sws_admin_prom_sample(m, l, 1, k == 0 ? w[i].accepted : w[i].active);
            }
        }
    }
    sws_admin_prom_family(m, "scalws_worker_http_requests", SWS_ADMIN_COUNTER,
                          "Requests answered, by worker and the class of their status.");
    for (i = 0; i < SWS_STATUS_WORKERS; i++) {
        for (k = 0; used[i] && k < 5; k++) {
            l[0] = (sws_admin_label_t) { "worker", id[i], idlen[i] };
            l[1] = (sws_admin_label_t) { "code", (const u_char *) sws_admin_classes[k], 3 };
            sws_admin_prom_sample(m, l, 2, w[i].responses[k]);
        }
    }
}

static void
sws_admin_metrics_protocols(sws_admin_prom_t *m)
{
    sws_status_protocols_t  st;
    sws_admin_label_t       l[1];

    sws_memzero(&st, sizeof(st));
    st.size = sizeof(st);
    (void) sws_status_get_protocols(&st);
    sws_admin_prom_family(m, "scalws_tls_handshakes", SWS_ADMIN_COUNTER,
                          "Clients' TLS handshakes, by result.");
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("result", "full");
    sws_admin_prom_sample(m, l, 1, st.tls_handshakes);
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("result", "resumed");
    sws_admin_prom_sample(m, l, 1, st.tls_resumed);
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("result", "failed");
    sws_admin_prom_sample(m, l, 1, st.tls_failed);
    sws_admin_prom_family(m, "scalws_tls_protocol_handshakes", SWS_ADMIN_COUNTER,
                          "Clients' TLS handshakes done, by protocol version.");
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("version", "TLSv1.3");
    sws_admin_prom_sample(m, l, 1, st.tls_v13);
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("version", "TLSv1.2");
    sws_admin_prom_sample(m, l, 1, st.tls_v12);
    l[0] = (sws_admin_label_t) sws_admin_label_cstr("version", "older");
    sws_admin_prom_sample(m, l, 1, st.tls_older);
    sws_admin_prom_one(m, "scalws_http2_connections", SWS_ADMIN_COUNTER,
                       "HTTP/2 connections.", st.http2_connections);
    sws_admin_prom_one(m, "scalws_http2_streams", SWS_ADMIN_COUNTER,
                       "HTTP/2 streams (requests).", st.http2_streams);
}

/* One family over every upstream server: field picks the value. */
typedef enum {
    SWS_ADMIN_UP_REQUESTS, SWS_ADMIN_UP_RESPONSES, SWS_ADMIN_UP_FAILURES, SWS_ADMIN_UP_ACTIVE,
    SWS_ADMIN_UP_IDLE,
    SWS_ADMIN_UP_STATE, SWS_ADMIN_UP_WEIGHT, SWS_ADMIN_UP_TIME, SWS_ADMIN_UP_CHECKS,
    SWS_ADMIN_UP_CHECK_FAILS
} sws_admin_up_field_t;

/* NAME_bucket{..., le="0.005"} ... le="+Inf", NAME_sum, NAME_count. */
static void
sws_admin_metrics_histogram(sws_admin_prom_t *m, sws_uint_t i, sws_admin_label_t *l,
    const sws_http_upstream_stats_t *us)
{
    sws_http_upstream_bucket_t  b[SWS_HTTP_UPSTREAM_TIME_BUCKETS];
    sws_uint_t                  k, n = SWS_HTTP_UPSTREAM_TIME_BUCKETS;
    sws_admin_out_t             le;
    u_char                      buf[SWS_HTTP_UPSTREAM_TIME_BUCKETS][24];

    if (sws_http_upstream_stats_histogram(i, b, &n) != SWS_OK) {
        n = 0;
    }
    for (k = 0; k <= n; k++) {
        if (k < n) {
            sws_admin_out_init(&le, buf[k], sizeof(buf[k]));
            sws_admin_out_milli(&le, (uint64_t) b[k].le);
            while (le.pos[-1] == '0') {        /* "0.010" -> "0.01", "1.000" -> "1" */
                le.pos--;
            }
            if (le.pos[-1] == '.') {
                le.pos--;
            }
            l[2] = (sws_admin_label_t) { "le", buf[k], (size_t) (le.pos - le.start) };
        } else {
            l[2] = (sws_admin_label_t) sws_admin_label_cstr("le", "+Inf");
        }
        sws_admin_prom_sample_as(m, "_bucket", l, 3, k < n ? b[k].count : us->responses, 0);
    }
    sws_admin_prom_sample_as(m, "_sum", l, 2, us->response_time_ms, 1);
    sws_admin_prom_sample_as(m, "_count", l, 2, us->responses, 0);
}

static void
sws_admin_metrics_upstream(sws_admin_prom_t *m, sws_admin_up_field_t field)
{
    sws_http_upstream_stats_t  us;
    sws_admin_label_t          l[3];
    sws_uint_t                 i, k, n = sws_http_upstream_stats_count();
    uint64_t                   v;

    for (i = 0; i < n; i++) {
        sws_memzero(&us, sizeof(us));
        us.size = sizeof(us);
        if (sws_http_upstream_stats_read(i, &us) != SWS_OK) {
            continue;
        }
        l[0] = (sws_admin_label_t) { "upstream", us.upstream.data, us.upstream.len };
        l[1] = (sws_admin_label_t) { "server", us.server.data, us.server.len };
        switch (field) {
        case SWS_ADMIN_UP_RESPONSES:
            for (k = 0; k < 5; k++) {
                l[2] = (sws_admin_label_t) { "code", (const u_char *) sws_admin_classes[k], 3 };
                sws_admin_prom_sample(m, l, 3, us.status[k]);
            }
            continue;
        case SWS_ADMIN_UP_STATE:
            l[2] = (sws_admin_label_t) { "state", (const u_char *) us.state,
                                         us.state ? strlen(us.state) : 0 };
            sws_admin_prom_sample(m, l, 3, 1);
            continue;
        case SWS_ADMIN_UP_TIME:
            sws_admin_metrics_histogram(m, i, l, &us);
            continue;
        case SWS_ADMIN_UP_REQUESTS:  v = us.requests; break;
        case SWS_ADMIN_UP_FAILURES:  v = us.failures; break;
        case SWS_ADMIN_UP_ACTIVE:    v = us.active; break;
        case SWS_ADMIN_UP_IDLE:      v = us.idle; break;
        case SWS_ADMIN_UP_WEIGHT:    v = us.weight; break;
        case SWS_ADMIN_UP_CHECKS:    v = us.health_checks; break;
        default:                     v = us.health_fails; break;
        }
        sws_admin_prom_sample(m, l, 2, v);
    }
}

static void
sws_admin_metrics_upstreams(sws_admin_prom_t *m)
{
    static const struct {
        const char            *name;
        sws_uint_t             type;
        const char            *help;
        sws_admin_up_field_t   field;
    } fams[] = {
        { "scalws_upstream_requests", SWS_ADMIN_COUNTER,
          "Requests sent to an upstream server (attempts).", SWS_ADMIN_UP_REQUESTS },
        { "scalws_upstream_responses", SWS_ADMIN_COUNTER,
          "Response heads received, by the class of their status.", SWS_ADMIN_UP_RESPONSES },
        { "scalws_upstream_failures", SWS_ADMIN_COUNTER,
          "Errors, timeouts and invalid responses.", SWS_ADMIN_UP_FAILURES },
        { "scalws_upstream_connections_active", SWS_ADMIN_GAUGE,
          "Connections to the server in use now.", SWS_ADMIN_UP_ACTIVE },
        { "scalws_upstream_connections_idle", SWS_ADMIN_GAUGE,
          "Connections to the server idle in the keep-alive pools now.", SWS_ADMIN_UP_IDLE },
        { "scalws_upstream_server_state", SWS_ADMIN_GAUGE,
          "1 for the server's state now (up, draining, down, unhealthy, unavail).",
          SWS_ADMIN_UP_STATE },
        { "scalws_upstream_server_weight", SWS_ADMIN_GAUGE,
          "The server's weight.", SWS_ADMIN_UP_WEIGHT },
        { "scalws_upstream_response_time_seconds", SWS_ADMIN_HISTOGRAM,
          "Time to the response head.", SWS_ADMIN_UP_TIME },
        { "scalws_upstream_health_checks", SWS_ADMIN_COUNTER,
          "Active health check probes.", SWS_ADMIN_UP_CHECKS },
        { "scalws_upstream_health_check_failures", SWS_ADMIN_COUNTER,
          "Failed active health check probes.", SWS_ADMIN_UP_CHECK_FAILS },
    };
    sws_uint_t  f;

    if (sws_http_upstream_stats_count() == 0) {
        return;
    }
    for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
        sws_admin_prom_family(m, fams[f].name, fams[f].type, fams[f].help);
        sws_admin_metrics_upstream(m, fams[f].field);
    }
}

static void
sws_admin_metrics_zones(sws_http_request_t *r, sws_admin_prom_t *m)
{
    sws_admin_main_conf_t *amcf = sws_http_main_conf(r, &sws_module);
    sws_shm_zone_info_t    info;
    sws_shm_zone_t        *zone;
    sws_admin_label_t      l[2];
    sws_uint_t             i, pass, n = sws_shm_zone_count(amcf->cycle);

    for (pass = 0; pass < 3; pass++) {
        if (pass == 0) {
            sws_admin_prom_family(m, "scalws_shm_zone_size_bytes", SWS_ADMIN_GAUGE,
                                  "Usable bytes of a shared memory zone.");
        } else if (pass == 1) {
            sws_admin_prom_family(m, "scalws_shm_zone_used_pages", SWS_ADMIN_GAUGE,
                                  "Pages in use in a shared zone that is a slab pool.");
        } else {
            sws_admin_prom_family(m, "scalws_shm_zone_free_pages", SWS_ADMIN_GAUGE,
                                  "Free pages in a shared zone that is a slab pool.");
        }
        for (i = 0; i < n; i++) {
            zone = sws_shm_zone_get(amcf->cycle, i);
            sws_memzero(&info, sizeof(info));
            info.size = sizeof(info);
            if (zone == NULL || sws_shm_zone_info(amcf->cycle, zone, &info) != SWS_OK
                || (pass && info.slab == NULL))
            {
                continue;
            }
            l[0] = (sws_admin_label_t) { "zone", info.name.data, info.name.len };
            l[1] = (sws_admin_label_t) { "owner", (const u_char *) info.owner,
                                         strlen(info.owner) };
            sws_admin_prom_sample(m, l, 2, pass == 0 ? info.zone_size
                                         : pass == 1 ? info.used_pages : info.free_pages);
        }
    }
}

/* scalws_limit_req_requests_total{zone="one",result="passed"} ...: the
 * outcome counters of the keyed zones, a family per type (owner). */
static void
sws_admin_metrics_limits(sws_http_request_t *r, sws_admin_prom_t *m)
{
    sws_admin_main_conf_t       *amcf = sws_http_main_conf(r, &sws_module);
    const sws_keyed_zone_type_t *type;
    sws_keyed_zone_t            *z;
    const sws_str_t             *name;
    sws_admin_label_t            l[2];
    uint64_t                     sum[SWS_KEYED_ZONE_COUNTERS];
    sws_uint_t                   i, k, c;
    int                          resolver;
    char                         fam[96];

    for (i = 0; sws_keyed_zone_at(amcf->cycle, i); i++) {
        if (!sws_admin_limits_first(amcf->cycle, i)) {
            continue;
        }
        type = sws_keyed_zone_type(sws_keyed_zone_at(amcf->cycle, i));
        resolver = sws_admin_is_resolver(amcf->cycle, i);
        if (resolver) {
            /* counter 0 is the questions, the others their answers */
            sws_admin_prom_family(m, "scalws_resolver_queries", SWS_ADMIN_COUNTER,
                                  "DNS questions a resolver's status_zone asked.");
            for (k = i; (z = sws_keyed_zone_at(amcf->cycle, k)) != NULL; k++) {
                if (sws_keyed_zone_type(z) == type) {
                    sws_keyed_zone_counters_sum(z, sum, 1);
                    name = sws_keyed_zone_name(z);
                    l[0] = (sws_admin_label_t) { "zone", name->data, name->len };
                    sws_admin_prom_sample(m, l, 1, sum[0]);
                }
            }
            sws_admin_prom_family(m, "scalws_resolver_responses", SWS_ADMIN_COUNTER,
                                  "Answers to those questions, by outcome.");
        } else {
            snprintf(fam, sizeof(fam), "scalws_%s_requests", type->name);
            sws_admin_prom_family(m, fam, SWS_ADMIN_COUNTER,
                                  "Requests judged by a zone, by its verdict.");
        }
        for (k = i; (z = sws_keyed_zone_at(amcf->cycle, k)) != NULL; k++) {
            if (sws_keyed_zone_type(z) != type) {
                continue;
            }
            sws_keyed_zone_counters_sum(z, sum, SWS_KEYED_ZONE_COUNTERS);
            name = sws_keyed_zone_name(z);
            l[0] = (sws_admin_label_t) { "zone", name->data, name->len };
            for (c = resolver; type->counters[c] && c < SWS_KEYED_ZONE_COUNTERS; c++) {
                l[1] = (sws_admin_label_t) { "result", (const u_char *) type->counters[c],
                                             strlen(type->counters[c]) };
                sws_admin_prom_sample(m, l, 2, sum[c]);
            }
        }
    }
}

/* The response caches: a family per figure, a sample per cache. */
static void
sws_admin_metrics_caches(sws_http_request_t *r, sws_admin_prom_t *m)
{
    static const struct {
        const char  *name;
        sws_uint_t   type;
        const char  *help;
    } fams[] = {
        { "scalws_cache_responses", SWS_ADMIN_COUNTER,
          "Requests that used a cache, by their $upstream_cache_status." },
        { "scalws_cache_entries", SWS_ADMIN_GAUGE, "Complete entries stored." },
        { "scalws_cache_disk_bytes", SWS_ADMIN_GAUGE, "Bytes of the entries' files." },
        { "scalws_cache_memory_bytes", SWS_ADMIN_GAUGE,
          "Bytes of the entries' copies in shared memory." },
        { "scalws_cache_evictions", SWS_ADMIN_COUNTER,
          "Entries the cache manager removed (inactive, or for room)." },
    };
    sws_http_cache_stats_t  st;
    sws_admin_label_t       l[2];
    sws_uint_t              f, i, k;

    sws_memzero(&st, sizeof(st));
    st.size = sizeof(st);
    if (sws_http_cache_stats(r, 0, &st) != SWS_OK) {
        return;                           /* no cache */
    }
    for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
        sws_admin_prom_family(m, fams[f].name, fams[f].type, fams[f].help);
        for (i = 0; ; i++) {
            sws_memzero(&st, sizeof(st));
            st.size = sizeof(st);
            if (sws_http_cache_stats(r, i, &st) != SWS_OK) {
                break;
            }
            l[0] = (sws_admin_label_t) { "zone", st.name.data, st.name.len };
            if (f == 0) {
                for (k = 0; k < SWS_HTTP_CACHE_STATUSES; k++) {
                    l[1] = (sws_admin_label_t) {
                        "status", (const u_char *) sws_admin_cache_statuses[k],
                        strlen(sws_admin_cache_statuses[k]) };
                    sws_admin_prom_sample(m, l, 2, st.responses[k]);
                }
                continue;
            }
            sws_admin_prom_sample(m, l, 1, f == 1 ? st.entries : f == 2 ? st.disk_bytes
                                           : f == 3 ? st.memory_bytes : st.evictions);
        }
    }
}

/* The status zones (status_zone): scalws_server_zone_* and
 * scalws_location_zone_*, a family per figure, a sample per zone. */
typedef enum {
    SWS_ADMIN_ZONE_CLASSES, SWS_ADMIN_ZONE_CODES, SWS_ADMIN_ZONE_DISCARDED,
    SWS_ADMIN_ZONE_IN, SWS_ADMIN_ZONE_OUT, SWS_ADMIN_ZONE_TIME
} sws_admin_zone_field_t;

static void
sws_admin_metrics_zone(sws_http_request_t *r, sws_admin_prom_t *m, sws_uint_t i,
    const sws_http_status_zone_stats_t *st, sws_admin_zone_field_t field)
{
    sws_http_status_code_count_t  c[SWS_HTTP_STATUS_ZONE_CODES];
    sws_admin_label_t             l[2];
    sws_uint_t                    k, n = SWS_HTTP_STATUS_ZONE_CODES;
    u_char                        code[16];

    l[0] = (sws_admin_label_t) { "zone", st->name.data, st->name.len };
    switch (field) {
    case SWS_ADMIN_ZONE_CLASSES:
        for (k = 0; k < 5; k++) {
            l[1] = (sws_admin_label_t) { "code", (const u_char *) sws_admin_classes[k], 3 };
            sws_admin_prom_sample(m, l, 2, st->responses[k]);
        }
        return;
    case SWS_ADMIN_ZONE_CODES:
        if (sws_http_status_zone_codes(r, i, c, &n) != SWS_OK) {
            return;
        }
        for (k = 0; k < n; k++) {
            l[1] = (sws_admin_label_t) { "code", code,
                (size_t) (sws_slprintf(code, code + sizeof(code), "%lu",
                                       (unsigned long) c[k].code) - code) };
            sws_admin_prom_sample(m, l, 2, c[k].count);
        }
        return;
    case SWS_ADMIN_ZONE_TIME:
        sws_admin_prom_sample_as(m, m->suffix, l, 1, st->time_ms, 1);
        return;
    default:
        sws_admin_prom_sample(m, l, 1, field == SWS_ADMIN_ZONE_DISCARDED ? st->discarded
                                       : field == SWS_ADMIN_ZONE_IN ? st->bytes_in
                                       : st->bytes_out);
    }
}

static void
sws_admin_metrics_status_zones(sws_http_request_t *r, sws_admin_prom_t *m)
{
    static const struct {
        const char              *name;
        const char              *help;
        sws_admin_zone_field_t   field;
    } fams[] = {
        { "requests", "Requests ended with a response, by the class of its status.",
          SWS_ADMIN_ZONE_CLASSES },
        { "responses", "Responses by status code (the common codes).", SWS_ADMIN_ZONE_CODES },
        { "discarded_requests", "Requests ended without a response head (the client "
          "left, 444).", SWS_ADMIN_ZONE_DISCARDED },
        { "received_bytes", "Bytes of the requests (heads and bodies).", SWS_ADMIN_ZONE_IN },
        { "sent_bytes", "Bytes of the responses (heads and bodies).", SWS_ADMIN_ZONE_OUT },
        { "request_time_seconds", "The requests' times ($request_time) together.",
          SWS_ADMIN_ZONE_TIME },
    };
    sws_http_status_zone_stats_t  st;
    sws_uint_t                    kind, f, i, any;
    char                          fam[64];

    for (kind = 0; kind < 2; kind++) {
        for (f = 0; f < sizeof(fams) / sizeof(fams[0]); f++) {
            for (i = 0, any = 0; ; i++) {
                sws_memzero(&st, sizeof(st));
                st.size = sizeof(st);
                if (sws_http_status_zone_stats(r, i, &st) != SWS_OK) {
                    break;
                }
                if (st.location != kind) {
                    continue;
                }
                if (!any++) {
                    snprintf(fam, sizeof(fam), "scalws_%s_zone_%s",
                             kind ? "location" : "server", fams[f].name);
                    sws_admin_prom_family(m, fam, SWS_ADMIN_COUNTER, fams[f].help);
                }
                sws_admin_metrics_zone(r, m, i, &st, fams[f].field);
            }
        }
    }
}

static void
sws_admin_metrics_helpers(sws_admin_prom_t *m)
{
    sws_server_helper_t  hs;
    sws_admin_label_t    l[1];
    sws_uint_t           i, pass;

    for (pass = 0; pass < 3; pass++) {
        if (pass == 0) {
            sws_admin_prom_family(m, "scalws_helper_up", SWS_ADMIN_GAUGE,
                                  "1 while a helper process runs.");
        } else if (pass == 1) {
            sws_admin_prom_family(m, "scalws_helper_starts", SWS_ADMIN_COUNTER,
                                  "Processes started for a helper.");
        } else {
            sws_admin_prom_family(m, "scalws_helper_exits", SWS_ADMIN_COUNTER,
                                  "Processes of a helper that ended.");
        }
        for (i = 0; ; i++) {
            sws_memzero(&hs, sizeof(hs));
            hs.size = sizeof(hs);
            if (sws_server_helper(i, &hs) != SWS_OK) {
                break;
            }
            l[0] = (sws_admin_label_t) { "helper", (u_char *) hs.name, strlen(hs.name) };
            sws_admin_prom_sample(m, l, 1, pass == 0 ? hs.running
                                         : pass == 1 ? hs.starts : hs.exits);
        }
    }
}

sws_int_t
sws_admin_metrics(sws_http_request_t *r, sws_admin_out_t *o, int openmetrics)
{
    sws_admin_prom_t  m = { o, openmetrics, NULL, NULL };

    sws_admin_metrics_server(r, &m);
    sws_admin_metrics_http(&m);
    sws_admin_metrics_status_zones(r, &m);
    sws_admin_metrics_protocols(&m);
    sws_admin_metrics_upstreams(&m);
    sws_admin_metrics_helpers(&m);
    sws_admin_metrics_zones(r, &m);
    sws_admin_metrics_limits(r, &m);
    sws_admin_metrics_caches(r, &m);
    if (openmetrics) {
        sws_admin_out_cstr(o, "# EOF\n");
    }
    return SWS_OK;
}
