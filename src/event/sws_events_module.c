/* events { worker_connections N; } */
#include "sws_events_module.h"
#include "sws_conf_internal.h"
#include "sws_conn_stats.h"

static void *sws_events_create_conf(sws_conf_t *cf);
static char *sws_events_init_conf(sws_conf_t *cf, void *conf);
static char *sws_events_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_use(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_events_accept_delay(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_conf_enum_t sws_events_methods[] = {
    { sws_string("epoll"), 1 },
    { sws_null_string, 0 }
};

static const sws_command_t sws_events_commands[] = {
    { "events", SWS_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS,
      sws_events_block, 0, 0, NULL },
    { "worker_connections", SWS_EVENT_CONF | SWS_CONF_TAKE1,
      sws_conf_set_num_slot, SWS_CONF_MAIN_OFFSET,
      offsetof(sws_events_conf_t, worker_connections), NULL },
    { "use", SWS_EVENT_CONF | SWS_CONF_TAKE1, sws_events_use, 0, 0, sws_events_methods },
    { "multi_accept", SWS_EVENT_CONF | SWS_CONF_FLAG, sws_events_use, 0, 0, NULL },
    { "accept_mutex", SWS_EVENT_CONF | SWS_CONF_FLAG, sws_events_use, 0, 0, NULL },
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

/* "use epoll", "multi_accept" and "accept_mutex" are accepted for nginx
 * compatibility: epoll is the only method, accepting in batches is always
 * on, and the listening sockets are in each worker's epoll with
 * EPOLLEXCLUSIVE (or each worker has its own reuseport socket), so that one
 * worker is woken per connection, which is what nginx's mutex is for. */
static char *
sws_events_use(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t *v = sws_conf_arg(cf, 1);

    if (cmd->post && !sws_str_eq_cstr(v, "epoll")) {
        return "supports only \"epoll\"";
    }
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
