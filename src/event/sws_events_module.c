/* events { worker_connections N; use epoll|io_uring; wait_pause off|TIME; } */
#include "sws_events_module.h"
#include "sws_conf_internal.h"
#include "sws_conn_stats.h"
/* SWS_HAVE_LIBURING */
#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

static void *sws_events_create_conf(sws_conf_t *cf);
static char *sws_events_init_conf(sws_conf_t *cf, void *conf);
static char *sws_events_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_use(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_compat(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_accept_delay(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_wait_pause(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t sws_events_commands[] = {
    { "events", SWS_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS,
      sws_events_block, 0, 0, NULL },
    { "worker_connections", SWS_EVENT_CONF | SWS_CONF_TAKE1,
      sws_conf_set_num_slot, SWS_CONF_MAIN_OFFSET,
      offsetof(sws_events_conf_t, worker_connections), NULL },
    { "use", SWS_EVENT_CONF | SWS_CONF_TAKE1, sws_events_use, SWS_CONF_MAIN_OFFSET, 0,
      NULL },
    { "wait_pause", SWS_EVENT_CONF | SWS_CONF_TAKE1, sws_events_wait_pause,
      SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "multi_accept", SWS_EVENT_CONF | SWS_CONF_FLAG, sws_events_compat, 0, 0, NULL },
    { "accept_mutex", SWS_EVENT_CONF | SWS_CONF_FLAG, sws_events_compat, 0, 0, NULL },
    { "accept_mutex_delay", SWS_EVENT_CONF | SWS_CONF_TAKE1, sws_events_accept_delay, 0, 0,
      NULL },
    sws_null_command
};

sws_module_t sws_events_module = {
    SWS_MODULE_ABI, "events", NULL, sws_events_commands,
    sws_events_create_conf, sws_events_init_conf,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, { { NULL } }, 0, 0
};

static void *
sws_events_create_conf(sws_conf_t *cf)
{
    sws_events_conf_t *ecf = sws_palloc(sws_conf_pool(cf), sizeof(sws_events_conf_t));
    if (ecf) {
        ecf->worker_connections = SWS_UNSET_UINT;
        ecf->method = SWS_UNSET_UINT;
        ecf->wait_pause_us = SWS_UNSET_UINT;
    }
    return ecf;
}

static char *
sws_events_init_conf(sws_conf_t *cf, void *conf)
{
    sws_events_conf_t *ecf = conf;

    if (ecf->worker_connections == SWS_UNSET_UINT) {
        ecf->worker_connections = 1024;
    }
    if (ecf->method == SWS_UNSET_UINT) {
        ecf->method = SWS_EVENTS_EPOLL;
    }
    if (ecf->wait_pause_us == SWS_UNSET_UINT) {
        ecf->wait_pause_us = 0;
    }
    if (ecf->wait_pause_us && ecf->method == SWS_EVENTS_IO_URING) {
        /* (a worker whose kernel refuses io_uring pauses on epoll) */
        sws_conf_log_error(SWS_LOG_WARN, cf, 0,
                           "\"wait_pause\" has no effect with \"use io_uring\"");
    }
    if (ecf->worker_connections < 16) {
        return "worker_connections must be at least 16";
    }
    return sws_conn_stats_init(cf) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static char *
sws_events_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    return sws_conf_parse_block(cf, NULL, SWS_EVENT_CONF);
}

/* use epoll | io_uring: the worker's event method (sws_event.h). A worker
 * whose kernel refuses io_uring uses epoll (sws_uring_init). */
static char *
sws_events_use(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_events_conf_t *ecf = conf;
    sws_str_t         *v = sws_conf_arg(cf, 1);

    (void) cmd;
    if (ecf->method != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "epoll")) {
        ecf->method = SWS_EVENTS_EPOLL;
        return SWS_CONF_OK;
    }
    if (sws_str_eq_cstr(v, "io_uring")) {
#if (SWS_HAVE_LIBURING)
        ecf->method = SWS_EVENTS_IO_URING;
        return SWS_CONF_OK;
#else
        return "io_uring: this scalwsd was built without liburing (liburing-dev)";
#endif
    }
    return "supports only \"epoll\" and \"io_uring\"";
}

/* "multi_accept" and "accept_mutex" are accepted for nginx compatibility:
 * accepting in batches is always on, and the listening sockets are in each
 * worker's event method exclusively (or each worker has its own reuseport
 * socket), so that one worker is woken per connection, which is what
 * nginx's mutex is for. */
static char *
sws_events_compat(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cf;
    (void) cmd;
    (void) conf;
    return SWS_CONF_OK;
}

/* accept_mutex_delay TIME: checked; there is no mutex to wait for. */
static char *
sws_events_accept_delay(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    if (sws_parse_time_ms(sws_conf_arg(cf, 1)) == (sws_msec_t) SWS_ERROR) {
        return "has an invalid time";
    }
    return SWS_CONF_OK;
}

/* wait_pause off | Nus | Nms: how long a worker that has just handled
 * events, and finds none ready, pauses before it blocks in its wait
 * (sws_epoll.c). Microseconds: the useful pauses are shorter than the
 * millisecond of the other time directives. */
static char *
sws_events_wait_pause(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_events_conf_t *ecf = conf;
    sws_str_t         *v = sws_conf_arg(cf, 1);
    sws_uint_t         n = 0, unit;
    size_t             i;

    (void) cmd;
    if (ecf->wait_pause_us != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "off")) {
        ecf->wait_pause_us = 0;
        return SWS_CONF_OK;
    }
    for (i = 0; i < v->len && v->data[i] >= '0' && v->data[i] <= '9'; i++) {
        if (n > SWS_EVENTS_MAX_PAUSE_US) {
            return "is too long (at most 10ms)";
        }
        n = n * 10 + (sws_uint_t) (v->data[i] - '0');
    }
    if (i == 0 || v->len - i != 2 || (v->data[i] != 'u' && v->data[i] != 'm')
        || v->data[i + 1] != 's')
    {
        return "must be \"off\" or a time in \"us\" or \"ms\" (\"50us\")";
    }
    unit = v->data[i] == 'm' ? 1000 : 1;
    if (n == 0) {
        return "must be \"off\" or longer than 0";
    }
    if (n > SWS_EVENTS_MAX_PAUSE_US / unit) {
        return "is too long (at most 10ms)";
    }
    ecf->wait_pause_us = n * unit;
    return SWS_CONF_OK;
}
