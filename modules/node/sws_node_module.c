/*
 * The node module: Node.js applications run by the master (docs/apps.md).
 *
 *   node_app NAME {
 *       root DIR;  script FILE;  node PROGRAM;  arg ARG;
 *       processes N | MIN..MAX;  idle_timeout T;  env NAME VALUE;  user USER [GROUP];
 *       run_dir DIR;  start_timeout T;  stop_timeout T;
 *       max_requests N;  max_memory SIZE;
 *   }
 *
 * Each process runs "node FILE" in root with PORT set to the path of its
 * unix socket: an application that does listen(process.env.PORT), as
 * Express's and most Node.js servers' examples do, serves there. The
 * processes, their sockets and their upstream group (named NAME, reached
 * with node_pass NAME, a directive of the proxy module) are the core's
 * (<scalws/sws_app.h>).
 */
#include <scalws/scalws.h>

typedef struct {
    sws_app_t   *app;
    sws_str_t    script;
    sws_str_t    node;
    sws_array_t *args;           /* sws_str_t */
} sws_node_app_t;

static char *sws_node_app(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t sws_node_commands[] = {
    { "node_app", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE1, sws_node_app,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "node",
    .commands = sws_node_commands,
};

static char *
sws_node_entry(sws_conf_t *cf, void *data)
{
    sws_node_app_t *na = data;
    sws_str_t      *w = sws_conf_arg(cf, 0), *a;
    char           *rv;

    if (sws_app_entry(cf, na->app, &rv)) {
        return rv;
    }
    if (sws_str_eq_cstr(w, "script") || sws_str_eq_cstr(w, "node")) {
        sws_str_t *dst = w->data[0] == 's' ? &na->script : &na->node;

        if (sws_conf_nargs(cf) != 2) {
            return "takes one argument";
        }
        if (dst->data != NULL) {
            return "is duplicate";
        }
        *dst = *sws_conf_arg(cf, 1);
        return dst->len ? SWS_CONF_OK : "takes a non-empty argument";
    }
    if (sws_str_eq_cstr(w, "arg")) {
        if (sws_conf_nargs(cf) != 2) {
            return "takes one argument";
        }
        a = sws_array_push(na->args);
        if (a == NULL) {
            return SWS_CONF_ERROR;
        }
        *a = *sws_conf_arg(cf, 1);
        return SWS_CONF_OK;
    }
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unknown directive \"%.*s\" in node_app",
                       (int) w->len, w->data);
    return SWS_CONF_ERROR;
}

static char *
sws_node_app(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_str_t  node = sws_string("node"), port = sws_string("PORT");
    sws_node_app_t         *na;
    sws_str_t               name = *sws_conf_arg(cf, 1), *a;
    sws_uint_t              i;
    char                   *rv;

    (void) cmd; (void) conf;
    na = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_node_app_t));
    if (na == NULL
        || (na->args = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t))) == NULL)
    {
        return SWS_CONF_ERROR;
    }
    na->app = sws_app_add(cf, &name, "node");
    if (na->app == NULL) {
        return SWS_CONF_ERROR;
    }
    rv = sws_conf_parse_entries(cf, sws_node_entry, na);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (na->script.data == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "node_app \"%.*s\" has no script",
                           (int) name.len, name.data);
        return SWS_CONF_ERROR;
    }
    if (sws_app_set_program(na->app, na->node.data ? &na->node : &node) != SWS_OK
        || sws_app_add_arg(na->app, &na->script) != SWS_OK
        || sws_app_set_socket_env(na->app, &port) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    for (i = 0, a = na->args->elts; i < na->args->nelts; i++) {
        if (sws_app_add_arg(na->app, &a[i]) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }
    return sws_app_done(cf, na->app) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}
