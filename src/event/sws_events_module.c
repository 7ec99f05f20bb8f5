/* events { worker_connections N; use epoll|io_uring; } */
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

static const sws_command_t sws_events_commands[] = {
    { "events", SWS_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS,
      sws_events_block, 0, 0, NULL },
    { "worker_connections", SWS_EVENT_CONF | SWS_CONF_TAKE1,
      sws_conf_set_num_slot, SWS_CONF_MAIN_OFFSET,
      offsetof(sws_events_conf_t, worker_connections), NULL },
    { "use", SWS_EVENT_CONF | SWS_CONF_TAKE1, sws_events_use, SWS_CONF_MAIN_OFFSET, 0,
      NULL },
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
