/*
 * The admin API's changes (docs/admin.md), each with a read-write token
 * and logged with the caller's address:
 *
 *   POST   /api/reload                       as HUP; answers once the master
 *                                            loaded it, or with its refusal
 *   POST   /api/reopen                       as USR1
 *   POST   /api/drain     {"seconds": N}     /ready false now, quit after N
 *   POST   /api/upstreams/G/servers          {"server": ADDR, "weight": N}
 *   PATCH  /api/upstreams/G/servers/ADDR     {"state": "up"|"draining"|"down",
 *                                             "weight": N}
 *   DELETE /api/upstreams/G/servers/ADDR
 *   POST   /api/caches/NAME/purge            {"key": K} or {"prefix": P}
 *
 * A body is a JSON object (parsed by jansson); a bad one, an unknown
 * field, group or server is refused with nothing changed.
 */
#include <string.h>
#include <jansson.h>
#include "sws_admin.h"

#define SWS_ADMIN_BODY_MAX    65536
#define SWS_ADMIN_RELOAD_POLL  25           /* ms between looks at the master */
#define SWS_ADMIN_RELOAD_WAIT  30000        /* ms at most */
#define SWS_HTTP_UNPROCESSABLE 422
#define SWS_ADMIN_ACCEPTED     202

typedef sws_int_t (*sws_admin_change_pt)(sws_http_request_t *r, json_t *body);

typedef struct {
    sws_admin_change_pt  change;
    sws_str_t            target;       /* the rest of the path: group, cache */
    sws_str_t            target2;      /* a server's address */
    uint64_t             reloads;      /* the master's count before ours */
    sws_msec_t           until;
} sws_admin_ctx_t;

/* ---- answers ---- */

static sws_int_t
sws_admin_json_answer(sws_http_request_t *r, sws_uint_t status, sws_admin_out_t *o)
{
    static const sws_str_t  type = sws_string("application/json");
    sws_str_t               body;

    sws_admin_out_bytes(o, "\n", 1);
    if (o->overflow) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = o->start;
    body.len = (size_t) (o->pos - o->start);
    return sws_http_send_response(r, status, &type, &body);
}

static sws_int_t
sws_admin_begin(sws_http_request_t *r, sws_admin_out_t *o, size_t size)
{
    u_char *buf = sws_pnalloc(sws_http_pool(r), size);

    if (buf == NULL) {
        return SWS_ERROR;
    }
    sws_admin_out_init(o, buf, size);
    sws_admin_json_open(o, NULL, '{');
    return SWS_OK;
}

/* {"error": {"status": N, "message": "..."}} */
static sws_int_t
sws_admin_refuse(sws_http_request_t *r, sws_uint_t status, const char *fmt, ...)
{
    sws_admin_out_t  o;
    u_char           msg[1024], *p;
    va_list          args;

    va_start(args, fmt);
    p = sws_vslprintf(msg, msg + sizeof(msg), fmt, args);
    va_end(args);
    if (sws_admin_begin(r, &o, 128 + 6 * sizeof(msg)) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_json_open(&o, "error", '{');
    sws_admin_json_uint(&o, "status", status);
    sws_admin_json_str(&o, "message", msg, (size_t) (p - msg));
    sws_admin_json_close(&o, '}');
    sws_admin_json_close(&o, '}');
    return sws_admin_json_answer(r, status, &o);
}

/* What was changed, in the error log with who asked. */
static void
sws_admin_log_change(sws_http_request_t *r, const char *fmt, ...)
{
    const sws_str_t *addr = sws_http_remote_addr(r);
    u_char           msg[1024], *p, *q;
    va_list          args;

    va_start(args, fmt);
    p = sws_vslprintf(msg, msg + sizeof(msg), fmt, args);
    va_end(args);
    /* a key or a name from the client: one line in the log, whatever it is */
    for (q = msg; q < p; q++) {
        if (*q < 0x20 || *q == 0x7f) {
            *q = '?';
        }
    }
    sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0, "admin: %.*s (asked by %.*s)",
                  (int) (p - msg), msg, (int) addr->len, addr->data);
}

/* ---- the body ---- */

/* The members of body must be among names (NULL-terminated). */
static const char *
sws_admin_unknown_member(json_t *body, const char *const *names)
{
    const char  *key;
    json_t      *v;
    sws_uint_t   i;

    json_object_foreach(body, key, v) {
        for (i = 0; names[i]; i++) {
            if (strcmp(key, names[i]) == 0) {
                break;
            }
        }
        if (names[i] == NULL) {
            return key;
        }
    }
    return NULL;
}

static void
sws_admin_body_read(sws_http_request_t *r)
{
    sws_admin_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);
    u_char          *buf;
    ssize_t          n;
    json_error_t     err;
    json_t          *body;
    sws_int_t        rc;

    buf = sws_pnalloc(sws_http_pool(r), SWS_ADMIN_BODY_MAX + 1);
    if (buf == NULL) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    n = sws_http_request_body_copy(r, 0, buf, SWS_ADMIN_BODY_MAX + 1);
    if (n < 0) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (n > SWS_ADMIN_BODY_MAX) {
        sws_http_finalize(r, sws_admin_refuse(r, 413, "the body is over %d bytes",
                                              SWS_ADMIN_BODY_MAX));
        return;
    }
    if (n == 0) {
        body = json_object();          /* no body: no parameters */
    } else {
        body = json_loadb((char *) buf, (size_t) n, JSON_REJECT_DUPLICATES, &err);
        if (body == NULL) {
            sws_http_finalize(r, sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST,
                                                  "the body is not JSON: %s (line %d, "
                                                  "column %d)", err.text, err.line,
                                                  err.column));
            return;
        }
    }
    if (!json_is_object(body)) {
        json_decref(body);
        sws_http_finalize(r, sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST,
                                              "the body is not a JSON object"));
        return;
    }
    rc = ctx->change(r, body);
    json_decref(body);
    if (rc != SWS_DONE) {
        sws_http_finalize(r, rc);
    }
}

/* ---- the server ---- */

static sws_int_t
sws_admin_reload_answer(sws_http_request_t *r, const sws_server_status_t *st)
{
    sws_admin_out_t  o;

    if (!st->last_reload_ok) {
        sws_admin_log_change(r, "reload refused: %s", st->last_error);
        return sws_admin_refuse(r, SWS_HTTP_UNPROCESSABLE,
                                "the new configuration is refused, the old one keeps "
                                "serving: %s", st->last_error);
    }
    if (sws_admin_begin(r, &o, 256) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_json_bool(&o, "reloaded", 1);
    sws_admin_json_uint(&o, "generation", st->generation);
    sws_admin_json_close(&o, '}');
    sws_admin_log_change(r, "configuration reloaded (generation %llu)",
                         (unsigned long long) st->generation);
    return sws_admin_json_answer(r, SWS_HTTP_OK, &o);
}

static void
sws_admin_reload_wait(sws_http_request_t *r)
{
    sws_admin_ctx_t     *ctx = sws_http_get_ctx(r, &sws_module);
    sws_server_status_t  st;

    sws_memzero(&st, sizeof(st));
    st.size = sizeof(st);
    if (sws_server_status(&st) == SWS_OK && st.reloads > ctx->reloads) {
        sws_http_finalize(r, sws_admin_reload_answer(r, &st));
        return;
    }
    if (sws_current_msec() >= ctx->until) {
        sws_http_finalize(r, sws_admin_refuse(r, SWS_HTTP_SERVICE_UNAVAILABLE,
                                              "the master did not answer in time"));
        return;
    }
    if (sws_http_set_timer(r, SWS_ADMIN_RELOAD_POLL, sws_admin_reload_wait) != SWS_OK) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
    }
}

static sws_int_t
sws_admin_reload(sws_http_request_t *r, json_t *body)
{
    static const char *const  none[] = { NULL };
    sws_admin_ctx_t          *ctx = sws_http_get_ctx(r, &sws_module);
    sws_server_status_t       st;
    const char               *bad = sws_admin_unknown_member(body, none);

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    sws_memzero(&st, sizeof(st));
    st.size = sizeof(st);
    if (sws_server_status(&st) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_CONFLICT, "no master process to reload");
    }
    ctx->reloads = st.reloads;
    ctx->until = sws_current_msec() + SWS_ADMIN_RELOAD_WAIT;
    if (sws_server_control(SWS_SERVER_RELOAD, 0) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_SERVICE_UNAVAILABLE, "the master was not told");
    }
    sws_admin_log_change(r, "reload asked");
    if (sws_http_set_timer(r, SWS_ADMIN_RELOAD_POLL, sws_admin_reload_wait) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_DONE;
}

static sws_int_t
sws_admin_reopen(sws_http_request_t *r, json_t *body)
{
    static const char *const  none[] = { NULL };
    sws_admin_out_t           o;
    const char               *bad = sws_admin_unknown_member(body, none);

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    if (sws_server_control(SWS_SERVER_REOPEN, 0) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_CONFLICT, "no master process to tell");
    }
    sws_admin_log_change(r, "log files reopened");
    if (sws_admin_begin(r, &o, 64) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_json_bool(&o, "reopened", 1);
    sws_admin_json_close(&o, '}');
    return sws_admin_json_answer(r, SWS_HTTP_OK, &o);
}

static sws_int_t
sws_admin_drain(sws_http_request_t *r, json_t *body)
{
    static const char *const  names[] = { "seconds", NULL };
    sws_admin_main_conf_t    *amcf = sws_http_main_conf(r, &sws_module);
    sws_admin_srv_conf_t     *ascf = sws_http_srv_conf(r, &sws_module);
    sws_admin_state_t        *st = amcf->zone->data;
    sws_admin_out_t           o;
    json_t                   *v = json_object_get(body, "seconds");
    const char               *bad = sws_admin_unknown_member(body, names);
    sws_msec_t                ms = ascf->drain_time;

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    if (v) {
        if (!json_is_integer(v) || json_integer_value(v) < 0
            || json_integer_value(v) > 86400)
        {
            return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST,
                                    "\"seconds\" is a whole number of seconds, 0 to 86400");
        }
        ms = (sws_msec_t) json_integer_value(v) * 1000;
    }
    if (sws_server_control(SWS_SERVER_QUIT, ms > 0 ? ms : 1) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_CONFLICT, "no master process to tell");
    }
    /* /ready says no from now on, in every worker. */
    if (st->drain_at == 0) {
        st->drain_at = sws_current_msec();
    }
    sws_admin_log_change(r, "drain: not ready now, quitting in %lld ms", (long long) ms);
    if (sws_admin_begin(r, &o, 128) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_json_bool(&o, "draining", 1);
    sws_admin_json_int(&o, "quit_in_ms", ms);
    sws_admin_json_close(&o, '}');
    return sws_admin_json_answer(r, SWS_ADMIN_ACCEPTED, &o);
}

/* ---- upstream servers ---- */

/* The group's run-time list, or an answer (404) in *rc. */
static sws_int_t
sws_admin_list(sws_http_request_t *r, sws_admin_ctx_t *ctx, sws_int_t *rc)
{
    sws_int_t  list = sws_http_upstream_list_handle(&ctx->target);

    if (list <= 0) {
        *rc = sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no upstream group \"%.*s\" that "
                               "takes changes", (int) ctx->target.len, ctx->target.data);
    }
    return list;
}

/* The server of list whose address (or name as written) is addr: its
 * index and what the list says of it; SWS_DECLINED if none. */
static sws_int_t
sws_admin_find_server(sws_int_t list, const sws_str_t *addr, sws_http_upstream_stats_t *st)
{
    sws_uint_t  i;

    for (i = 0; ; i++) {
        sws_memzero(st, sizeof(*st));
        st->size = sizeof(*st);
        if (sws_http_upstream_list_info(list, i, st) != SWS_OK) {
            return SWS_DECLINED;
        }
        if (sws_str_eq(&st->addr, addr) || sws_str_eq(&st->server, addr)) {
            return SWS_OK;
        }
    }
}

/* The group and server the path names: SWS_OK, or an answer (404). */
static sws_int_t
sws_admin_target_server(sws_http_request_t *r, sws_admin_ctx_t *ctx, sws_int_t *list,
    sws_http_upstream_stats_t *st)
{
    sws_int_t  rc;

    *list = sws_admin_list(r, ctx, &rc);
    if (*list <= 0) {
        return rc;
    }
    if (sws_admin_find_server(*list, &ctx->target2, st) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no server \"%.*s\" in upstream "
                                "\"%.*s\"", (int) ctx->target2.len, ctx->target2.data,
                                (int) ctx->target.len, ctx->target.data);
    }
    return SWS_OK;
}

/* weight: absent (0 in *w), or 1..1000. */
static sws_int_t
sws_admin_weight(json_t *body, sws_uint_t *w)
{
    json_t *v = json_object_get(body, "weight");

    *w = 0;
    if (v == NULL) {
        return SWS_OK;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000) {
        return SWS_ERROR;
    }
    *w = (sws_uint_t) json_integer_value(v);
    return SWS_OK;
}

static sws_int_t
sws_admin_server_answer(sws_http_request_t *r, sws_uint_t status, sws_int_t list,
    const sws_str_t *addr)
{
    sws_http_upstream_stats_t  st;
    sws_admin_out_t            o;

    if (sws_admin_begin(r, &o, 1024 + 6 * addr->len) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_admin_find_server(list, addr, &st) == SWS_OK) {
        sws_admin_json_str(&o, "server", st.server.data, st.server.len);
        sws_admin_json_str(&o, "address", st.addr.data, st.addr.len);
        sws_admin_json_cstr(&o, "state", st.state);
        sws_admin_json_uint(&o, "weight", st.weight);
    } else {
        sws_admin_json_str(&o, "server", addr->data, addr->len);
        sws_admin_json_cstr(&o, "state", "removed");
    }
    sws_admin_json_close(&o, '}');
    sws_admin_state_save(r);
    return sws_admin_json_answer(r, status, &o);
}

static sws_int_t
sws_admin_server_add(sws_http_request_t *r, json_t *body)
{
    static const char *const  names[] = { "server", "weight", NULL };
    sws_admin_ctx_t          *ctx = sws_http_get_ctx(r, &sws_module);
    json_t                   *v = json_object_get(body, "server");
    const char               *bad = sws_admin_unknown_member(body, names);
    sws_str_t                 addr;
    sws_uint_t                w;
    sws_int_t                 list, rc;

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    if (!json_is_string(v) || json_string_length(v) == 0) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "\"server\" (an address) is needed");
    }
    if (sws_admin_weight(body, &w) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "\"weight\" is 1 to 1000");
    }
    list = sws_admin_list(r, ctx, &rc);
    if (list <= 0) {
        return rc;
    }
    addr.data = (u_char *) json_string_value(v);
    addr.len = json_string_length(v);
    rc = sws_http_upstream_list_add(list, &addr, w ? w : 1);
    if (rc == SWS_BUSY) {
        return sws_admin_refuse(r, SWS_HTTP_CONFLICT, "upstream \"%.*s\" has no room for "
                                "another server (dynamic_servers)",
                                (int) ctx->target.len, ctx->target.data);
    }
    if (rc != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "\"%.*s\" is not an address without "
                                "a name to resolve", (int) addr.len, addr.data);
    }
    sws_admin_log_change(r, "upstream \"%.*s\": server %.*s added, weight %lu",
                         (int) ctx->target.len, ctx->target.data, (int) addr.len, addr.data,
                         (unsigned long) (w ? w : 1));
    return sws_admin_server_answer(r, SWS_HTTP_CREATED, list, &addr);
}

static sws_int_t
sws_admin_server_change(sws_http_request_t *r, json_t *body)
{
    static const char *const   names[] = { "state", "weight", NULL };
    sws_admin_ctx_t           *ctx = sws_http_get_ctx(r, &sws_module);
    json_t                    *v = json_object_get(body, "state");
    const char                *bad = sws_admin_unknown_member(body, names), *state = NULL;
    sws_http_upstream_stats_t  st;
    sws_uint_t                 w;
    sws_int_t                  list, rc;

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    if (v) {
        state = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(state, "up") != 0 && strcmp(state, "draining") != 0
            && strcmp(state, "down") != 0)
        {
            return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST,
                                    "\"state\" is \"up\", \"draining\" or \"down\"");
        }
    }
    if (sws_admin_weight(body, &w) != SWS_OK) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "\"weight\" is 1 to 1000");
    }
    if (state == NULL && w == 0) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "nothing to change: \"state\" or "
                                "\"weight\"");
    }
    rc = sws_admin_target_server(r, ctx, &list, &st);
    if (rc != SWS_OK) {
        return rc;
    }
    /* by its address from now on (the list knows servers by address) */
    if (state && state[0] == 'u') {
        rc = sws_http_upstream_list_add(list, &st.addr, w ? w : st.weight);
    } else {
        rc = w ? sws_http_upstream_list_weight(list, &st.addr, w) : SWS_OK;
        if (rc == SWS_OK && state && state[1] == 'r') {
            rc = sws_http_upstream_list_drain(list, &st.addr);
        } else if (rc == SWS_OK && state) {
            /* down, not removed: an added server stays listed */
            rc = sws_http_upstream_list_down(list, &st.addr);
        }
    }
    if (rc == SWS_DECLINED) {
        /* a configured server removed (DELETE): listed, but out of the list */
        return sws_admin_refuse(r, SWS_HTTP_CONFLICT, "server \"%.*s\" of upstream \"%.*s\" "
                                "was removed: \"state\": \"up\" brings it back",
                                (int) st.addr.len, st.addr.data,
                                (int) ctx->target.len, ctx->target.data);
    }
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_log_change(r, "upstream \"%.*s\": server %.*s%s%s, weight %lu",
                         (int) ctx->target.len, ctx->target.data, (int) st.addr.len,
                         st.addr.data, state ? " set " : "", state ? state : "",
                         (unsigned long) (w ? w : st.weight));
    return sws_admin_server_answer(r, SWS_HTTP_OK, list, &st.addr);
}

static sws_int_t
sws_admin_server_remove(sws_http_request_t *r, json_t *body)
{
    static const char *const   none[] = { NULL };
    sws_admin_ctx_t           *ctx = sws_http_get_ctx(r, &sws_module);
    const char                *bad = sws_admin_unknown_member(body, none);
    sws_http_upstream_stats_t  st;
    sws_int_t                  list, rc;

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    rc = sws_admin_target_server(r, ctx, &list, &st);
    if (rc != SWS_OK) {
        return rc;
    }
    if (sws_http_upstream_list_remove(list, &st.addr) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_log_change(r, "upstream \"%.*s\": server %.*s removed",
                         (int) ctx->target.len, ctx->target.data, (int) st.addr.len,
                         st.addr.data);
    return sws_admin_server_answer(r, SWS_HTTP_OK, list, &st.addr);
}

/* ---- caches ---- */

static sws_int_t
sws_admin_purge(sws_http_request_t *r, json_t *body)
{
    static const char *const  names[] = { "key", "prefix", NULL };
    sws_admin_ctx_t          *ctx = sws_http_get_ctx(r, &sws_module);
    json_t                   *key = json_object_get(body, "key"),
                             *prefix = json_object_get(body, "prefix"), *v;
    const char               *bad = sws_admin_unknown_member(body, names);
    sws_admin_out_t           o;
    sws_str_t                 k;
    sws_uint_t                removed = 0;
    sws_int_t                 rc;

    if (bad) {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "unknown field \"%s\"", bad);
    }
    v = key ? key : prefix;
    if ((key == NULL) == (prefix == NULL) || !json_is_string(v)
        || (key && json_string_length(v) == 0))
    {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST,
                                "one of \"key\" (a cache key) or \"prefix\" is needed");
    }
    k.len = json_string_length(v) + (prefix != NULL);
    k.data = sws_pnalloc(sws_http_pool(r), k.len);
    if (k.data == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_memcpy(k.data, json_string_value(v), json_string_length(v));
    if (prefix) {
        k.data[k.len - 1] = '*';       /* the SDK's prefix form */
    } else if (k.data[k.len - 1] == '*') {
        return sws_admin_refuse(r, SWS_HTTP_BAD_REQUEST, "a key ends in \"*\": "
                                "use \"prefix\" for a prefix");
    }
    rc = sws_http_cache_purge(r, &ctx->target, &k, &removed);
    if (rc == SWS_DECLINED) {
        return sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no cache \"%.*s\"",
                                (int) ctx->target.len, ctx->target.data);
    }
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_log_change(r, "cache \"%.*s\": %lu entries of %s \"%.*s\" purged",
                         (int) ctx->target.len, ctx->target.data, (unsigned long) removed,
                         prefix ? "prefix" : "key", (int) json_string_length(v),
                         json_string_value(v));
    if (sws_admin_begin(r, &o, 64) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_admin_json_uint(&o, "purged", removed);
    sws_admin_json_close(&o, '}');
    return sws_admin_json_answer(r, SWS_HTTP_OK, &o);
}

/* ---- routing ---- */

/* path, after "/api/", starts with "word/": the rest in *rest. */
static int
sws_admin_path_prefix(const sws_str_t *path, const char *word, sws_str_t *rest)
{
    size_t n = strlen(word);

    if (path->len <= n || memcmp(path->data, word, n) != 0) {
        return 0;
    }
    rest->data = path->data + n;
    rest->len = path->len - n;
    return 1;
}

sws_int_t
sws_admin_change(sws_http_request_t *r, const sws_str_t *path)
{
    sws_admin_ctx_t  *ctx;
    sws_uint_t        method = sws_http_method(r);
    sws_str_t         rest;
    u_char           *slash;
    sws_int_t         rc;

    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_admin_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_str_eq_cstr(path, "reload") || sws_str_eq_cstr(path, "reopen")
        || sws_str_eq_cstr(path, "drain"))
    {
        if (method != SWS_HTTP_POST) {
            return sws_admin_refuse(r, SWS_HTTP_NOT_ALLOWED, "POST here");
        }
        ctx->change = path->data[2] == 'l' ? sws_admin_reload
                    : path->data[2] == 'o' ? sws_admin_reopen : sws_admin_drain;
    } else if (sws_admin_path_prefix(path, "upstreams/", &rest)) {
        /* G/servers or G/servers/ADDR (an address may have slashes) */
        slash = memchr(rest.data, '/', rest.len);
        if (slash == NULL || slash == rest.data) {
            return sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no such API path");
        }
        ctx->target.data = rest.data;
        ctx->target.len = (size_t) (slash - rest.data);
        rest.len -= ctx->target.len + 1;
        rest.data = slash + 1;
        if (rest.len == sizeof("servers") - 1 && memcmp(rest.data, "servers", rest.len) == 0) {
            if (method != SWS_HTTP_POST) {
                return sws_admin_refuse(r, SWS_HTTP_NOT_ALLOWED, "POST here");
            }
            ctx->change = sws_admin_server_add;
        } else if (sws_admin_path_prefix(&rest, "servers/", &ctx->target2)) {
            if (method == SWS_HTTP_PATCH) {
                ctx->change = sws_admin_server_change;
            } else if (method == SWS_HTTP_DELETE) {
                ctx->change = sws_admin_server_remove;
            } else {
                return sws_admin_refuse(r, SWS_HTTP_NOT_ALLOWED, "PATCH or DELETE here");
            }
        } else {
            return sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no such API path");
        }
    } else if (sws_admin_path_prefix(path, "caches/", &rest)) {
        if (rest.len <= sizeof("/purge") - 1
            || memcmp(rest.data + rest.len - 6, "/purge", 6) != 0)
        {
            return sws_admin_refuse(r, SWS_HTTP_NOT_FOUND, "no such API path");
        }
        if (method != SWS_HTTP_POST) {
            return sws_admin_refuse(r, SWS_HTTP_NOT_ALLOWED, "POST here");
        }
        ctx->target.data = rest.data;
        ctx->target.len = rest.len - 6;
        ctx->change = sws_admin_purge;
    } else {
        return sws_admin_refuse(r, SWS_HTTP_NOT_ALLOWED, "this path takes GET only");
    }
    sws_http_set_ctx(r, &sws_module, ctx);
    rc = sws_http_read_body(r, sws_admin_body_read);
    return rc == SWS_OK ? SWS_DONE : rc;
}
