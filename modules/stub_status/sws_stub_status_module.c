/*
 * The stub_status module: nginx's status page, in nginx's exact text, for
 * the monitoring that already reads it (collectd, Telegraf, the Prometheus
 * nginx exporter, Datadog ...):
 *
 *   Active connections: 2 \n
 *   server accepts handled requests\n
 *    10 10 25 \n
 *   Reading: 0 Writing: 1 Waiting: 1 \n
 *
 *   stub_status;          (or nginx's older "stub_status on;")   server, location
 *
 * and the variables $connections_active, $connections_reading,
 * $connections_writing, $connections_waiting. The numbers are the core's
 * counters, summed over all workers (<scalws/sws_status.h>).
 */
#include <scalws/scalws.h>

typedef struct {
    sws_int_t  enable;
} sws_stub_status_loc_conf_t;

static char *sws_stub_status(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_stub_status_create_main_conf(sws_conf_t *cf);
static void *sws_stub_status_create_loc_conf(sws_conf_t *cf);

static const sws_command_t sws_stub_status_commands[] = {
    { "stub_status", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS | SWS_CONF_TAKE1,
      sws_stub_status, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "stub_status",
    .commands = sws_stub_status_commands,
    .create_main_conf = sws_stub_status_create_main_conf,
    .create_loc_conf = sws_stub_status_create_loc_conf,
};

static const sws_str_t sws_stub_status_type = sws_string("text/plain");

static sws_int_t
sws_stub_status_handler(sws_http_request_t *r)
{
    sws_status_t  st;
    sws_str_t     body;
    u_char       *p, *last;
    sws_int_t     rc;

    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_HTTP_NOT_ALLOWED;
    }
    rc = sws_http_discard_body(r);
    if (rc != SWS_OK && rc != SWS_AGAIN) {
        return rc;
    }

    sws_status_get(&st);
    /* 7 numbers of up to 20 digits and the text around them */
    p = sws_pnalloc(sws_http_pool(r), 256);
    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    last = sws_slprintf(p, p + 256,
                        "Active connections: %llu \n"
                        "server accepts handled requests\n"
                        " %llu %llu %llu \n"
                        "Reading: %llu Writing: %llu Waiting: %llu \n",
                        (unsigned long long) st.active, (unsigned long long) st.accepted,
                        (unsigned long long) st.handled, (unsigned long long) st.requests,
                        (unsigned long long) st.reading, (unsigned long long) st.writing,
                        (unsigned long long) st.waiting);
    body.data = p;
    body.len = (size_t) (last - p);
    return sws_http_send_response(r, SWS_HTTP_OK, &sws_stub_status_type, &body);
}

/* ---- variables ---- */

static void
sws_stub_status_variable(sws_http_request_t *r, void *data, sws_str_t *v)
{
    sws_status_t  st;
    uint64_t      n;
    u_char       *p;

    sws_status_get(&st);
    switch ((uintptr_t) data) {
    case 0:  n = st.active; break;
    case 1:  n = st.reading; break;
    case 2:  n = st.writing; break;
    default: n = st.waiting; break;
    }
    p = sws_pnalloc(sws_http_pool(r), 24);
    if (p == NULL) {
        v->len = 0;
        return;
    }
    v->data = p;
    v->len = (size_t) (sws_slprintf(p, p + 24, "%llu", (unsigned long long) n) - p);
}

static void *
sws_stub_status_create_main_conf(sws_conf_t *cf)
{
    static const char *const names[] = {
        "connections_active", "connections_reading", "connections_writing",
        "connections_waiting"
    };
    static int  marker;
    uintptr_t   i;

    for (i = 0; i < 4; i++) {
        if (sws_http_variable_add(cf, names[i], sws_stub_status_variable, (void *) i)
            != SWS_OK)
        {
            return NULL;
        }
    }
    return &marker;
}

/* ---- configuration ---- */

static void *
sws_stub_status_create_loc_conf(sws_conf_t *cf)
{
    sws_stub_status_loc_conf_t *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_stub_status_loc_conf_t));
    if (lcf) {
        lcf->enable = SWS_UNSET;
    }
    return lcf;
}

static char *
sws_stub_status(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_stub_status_loc_conf_t *lcf = conf;
    sws_str_t                  *arg;

    if (lcf->enable != SWS_UNSET) {
        return "is duplicate";
    }
    /* nginx before 1.7.5 wrote "stub_status on;": the argument is ignored
     * there; here it must be "on" (anything else would mean something). */
    if (sws_conf_nargs(cf) == 2) {
        arg = sws_conf_arg(cf, 1);
        if (!sws_str_eq_cstr(arg, "on")) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in "
                               "\"stub_status\" directive, it takes no value or \"on\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    lcf->enable = 1;
    if (sws_http_set_content_handler(cf, sws_stub_status_handler, "stub_status") != SWS_OK) {
        return "conflicts with the content handler already set here";
    }
    return SWS_CONF_OK;
}
