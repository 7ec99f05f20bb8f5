/*
 * tdyn: the run-time server list functions of the SDK behind a location,
 * for the tests (tests/integration/test_upstream_dynamic.py).
 *
 *   tdyn;    (location) ?op=add|drain|remove|weight&up=GROUP&addr=ADDR[&w=N]
 *            calls sws_http_upstream_server_<op> and answers its result:
 *            "OK", "DECLINED", "BUSY" or "ERROR";
 *            ?op=list&up=GROUP: a line per server (sws_http_upstream_server_info):
 *            "ADDR WEIGHT STATE REQUESTS"
 *
 *            with &h=N (or &h=name: the handle of up, resolved here): the
 *            same by handle (sws_http_upstream_list_*), the list through
 *            sws_http_upstream_list_info with the struct's size;
 *            ?op=handle&up=GROUP: the handle, or DECLINED
 *            ?op=sizes: the size fields of ABI 1.7, "status S stats S get S
 *            info S" (sws_status_get, sws_http_upstream_stats_read, then what
 *            the 1.6 functions _stats_get and _server_info of up left in a
 *            size preset to 7: they fill only the struct before it)
 *
 * Every response also gets "X-Worker: PID", so that a test knows which
 * worker served it.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

static sws_http_header_filter_pt  tdyn_next_header_filter;
static sws_str_t                  tdyn_pid;
static u_char                     tdyn_pid_buf[24];

/* The value of ?NAME=... (empty if absent). */
static sws_str_t
tdyn_arg(sws_http_request_t *r, const char *name)
{
    const sws_str_t *args = sws_http_args(r);
    sws_str_t        v = sws_null_string;
    u_char          *p = args->data, *last = p + args->len, *e;
    size_t           n = strlen(name);

    while (p < last) {
        e = memchr(p, '&', (size_t) (last - p));
        if (e == NULL) {
            e = last;
        }
        if ((size_t) (e - p) > n && memcmp(p, name, n) == 0 && p[n] == '=') {
            v.data = p + n + 1;
            v.len = (size_t) (e - v.data);
            return v;
        }
        p = e + 1;
    }
    return v;
}

static sws_int_t
tdyn_list(sws_http_request_t *r, const sws_str_t *up, sws_int_t handle)
{
    static const sws_str_t     type = sws_string("text/plain");
    sws_http_upstream_stats_t  st;
    sws_str_t                  body;
    sws_uint_t                 i;
    u_char                    *p, *last;

    p = sws_pnalloc(sws_http_pool(r), 4096);
    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = p;
    last = p + 4096;
    for (i = 0; ; i++) {
        if (handle) {
            st.size = sizeof(st);
            if (sws_http_upstream_list_info(handle, i, &st) != SWS_OK) {
                break;
            }
            if (st.size != sizeof(st)) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
        } else if (sws_http_upstream_server_info(up, i, &st) != SWS_OK) {
            break;
        }
        p = sws_slprintf(p, last, "%.*s %lu %s %llu\n", (int) st.addr.len, st.addr.data,
                         (unsigned long) st.weight, st.state,
                         (unsigned long long) st.requests);
    }
    body.len = (size_t) (p - body.data);
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

static sws_int_t
tdyn_handler(sws_http_request_t *r)
{
    static const sws_str_t  type = sws_string("text/plain");
    sws_str_t               op = tdyn_arg(r, "op"), up = tdyn_arg(r, "up");
    sws_str_t               addr = tdyn_arg(r, "addr"), w = tdyn_arg(r, "w"), body;
    sws_uint_t              weight = w.len ? (sws_uint_t) sws_atoi(w.data, w.len) : 1;
    sws_str_t               hs = tdyn_arg(r, "h");
    sws_int_t               rc, handle = 0;
    u_char                  buf[32];

    if (sws_str_eq_cstr(&op, "sizes")) {
        sws_status_t               ss;
        sws_http_upstream_stats_t  st, old;
        size_t                     info;
        u_char                     out[160];

        sws_status_get(&ss);
        st.size = sizeof(st);
        if (sws_http_upstream_stats_read(0, &st) != SWS_OK) {
            st.size = 0;
        }
        old.size = 7;
        (void) sws_http_upstream_stats_get(0, &old);
        info = old.size;
        old.size = 7;
        (void) sws_http_upstream_server_info(&up, 0, &old);
        body.data = out;
        body.len = (size_t) (sws_slprintf(out, out + sizeof(out), "status %llu/%zu stats %zu/%zu "
                                          "get %zu info %zu", (unsigned long long) ss.size,
                                          sizeof(ss), st.size, sizeof(st), info, old.size)
                             - out);
        return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
    }
    if (sws_str_eq_cstr(&op, "handle")) {
        rc = sws_http_upstream_list_handle(&up);
        if (rc > 0) {
            body.data = buf;
            body.len = (size_t) (sws_slprintf(buf, buf + sizeof(buf), "%ld", (long) rc) - buf);
            return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
        }
        goto answer;
    }
    if (hs.len) {
        handle = sws_str_eq_cstr(&hs, "name") ? sws_http_upstream_list_handle(&up)
                 : hs.data[0] == '-' ? -sws_atoi(hs.data + 1, hs.len - 1)
                 : sws_atoi(hs.data, hs.len);
        if (handle == 0) {
            handle = -1000;            /* "0": no handle either */
        }
    }
    if (sws_str_eq_cstr(&op, "list")) {
        return tdyn_list(r, &up, handle);
    }
    if (handle) {
        rc = sws_str_eq_cstr(&op, "add") ? sws_http_upstream_list_add(handle, &addr, weight)
             : sws_str_eq_cstr(&op, "drain") ? sws_http_upstream_list_drain(handle, &addr)
             : sws_str_eq_cstr(&op, "remove") ? sws_http_upstream_list_remove(handle, &addr)
             : sws_str_eq_cstr(&op, "weight") ? sws_http_upstream_list_weight(handle, &addr,
                                                                                weight)
             : SWS_ABORT;
        if (rc == SWS_ABORT) {
            return SWS_HTTP_BAD_REQUEST;
        }
    } else if (sws_str_eq_cstr(&op, "add")) {
        rc = sws_http_upstream_server_add(&up, &addr, weight);
    } else if (sws_str_eq_cstr(&op, "drain")) {
        rc = sws_http_upstream_server_drain(&up, &addr);
    } else if (sws_str_eq_cstr(&op, "remove")) {
        rc = sws_http_upstream_server_remove(&up, &addr);
    } else if (sws_str_eq_cstr(&op, "weight")) {
        rc = sws_http_upstream_server_weight(&up, &addr, weight);
    } else {
        return SWS_HTTP_BAD_REQUEST;
    }
answer:
    switch (rc) {
    case SWS_OK:       sws_str_set(&body, "OK"); break;
    case SWS_DECLINED: sws_str_set(&body, "DECLINED"); break;
    case SWS_BUSY:     sws_str_set(&body, "BUSY"); break;
    default:           sws_str_set(&body, "ERROR");
    }
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

static sws_int_t
tdyn_header_filter(sws_http_request_t *r)
{
    static const sws_str_t name = sws_string("X-Worker");

    if (tdyn_pid.len == 0) {
        tdyn_pid.data = tdyn_pid_buf;
        tdyn_pid.len = (size_t) snprintf((char *) tdyn_pid_buf, sizeof(tdyn_pid_buf), "%ld",
                                         (long) getpid());
    }
    sws_http_header_out_add(r, &name, &tdyn_pid);
    return tdyn_next_header_filter(r);
}

static char *
tdyn_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    return sws_http_set_content_handler(cf, tdyn_handler, "tdyn") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static sws_int_t
tdyn_init(sws_conf_t *cf)
{
    (void) cf;
    tdyn_next_header_filter = sws_http_insert_header_filter(tdyn_header_filter);
    return SWS_OK;
}

static sws_int_t
tdyn_init_worker(sws_cycle_t *cycle)
{
    (void) cycle;
    tdyn_pid.len = 0;                  /* this process's pid, not the master's */
    return SWS_OK;
}

static const sws_command_t tdyn_commands[] = {
    { "tdyn", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, tdyn_directive, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tdyn",
    .commands = tdyn_commands,
    .postconfiguration = tdyn_init,
    .init_worker = tdyn_init_worker,
};
