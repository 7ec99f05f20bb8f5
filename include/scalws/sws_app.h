/*
 * Managed applications (ABI 1.9; 1.10: protocols): what modules/node and modules/python
 * build on. An application is a set of helper processes (sws_helper.h) of
 * one program, each listening on a unix socket of its own in a run
 * directory, behind an upstream group of the application's name that has
 * run-time servers only (sws_upstream.h): a process is added to the group
 * once it accepts connections and taken out when it exits, so a location
 * that proxies to the group (node_pass, python_pass, proxy_pass
 * http://NAME) uses every ready process at once and never waits for a dead
 * one: with none ready it answers 503.
 *
 * A reload keeps the processes of an application whose block did not
 * change; for one whose block changed, each process is replaced by a new
 * one started beside it, and the old one leaves the group and is stopped
 * only once the new one is ready (a new block that never gets ready leaves
 * the old processes serving). See docs/apps.md.
 *
 * A module declares an application from its block directive:
 *
 *     app = sws_app_add(cf, name, "node");
 *     ... for each entry of the block: sws_app_entry(cf, app, &rv), or its own
 *     sws_app_set_program(app, ...); sws_app_add_arg(...); ...
 *     sws_app_done(cf, app);
 */
#ifndef SWS_APP_H
#define SWS_APP_H

#include <scalws/sws_types.h>

typedef struct sws_app_s sws_app_t;

/* Declare application name (1..16 of [A-Za-z0-9_-]; it names its upstream
 * group too) in the http block being parsed; kind ("node") is for
 * messages. NULL after logging. */
sws_app_t *sws_app_add(sws_conf_t *cf, const sws_str_t *name, const char *kind);

/*
 * The entries every application block has, for a block parsed with
 * sws_conf_parse_entries(): root DIR; processes N | MIN..MAX;
 * idle_timeout T; env NAME VALUE; user USER [GROUP]; run_dir DIR;
 * start_timeout T; stop_timeout T; keepalive N (the idle connections
 * each worker keeps to the processes: the group's upstream keepalive);
 * max_requests N; max_memory SIZE (recycling: a process past either is
 * replaced by a new one, which takes its requests before it stops).
 * Returns 1 and sets *rv (SWS_CONF_OK or an error) when the entry is one
 * of them, 0 when it is not (the module's own, or unknown).
 */
int sws_app_entry(sws_conf_t *cf, sws_app_t *app, char **rv);

/* What the block said. root: absolute, empty when not given; env_set: 1
 * if the block's env sets a variable whose name begins with prefix. */
const sws_str_t *sws_app_name(sws_app_t *app);
const sws_str_t *sws_app_root(sws_app_t *app);
int              sws_app_env_set(sws_app_t *app, const char *prefix);

/* What to run (as sws_helper_set_program, sws_helper_add_arg). */
sws_int_t sws_app_set_program(sws_app_t *app, const sws_str_t *path);
sws_int_t sws_app_add_arg(sws_app_t *app, const sws_str_t *arg);
/* An argument made of prefix and the process's socket path
 * ("unix:" gives "unix:/run/dir/NAME-1a2b3c4d.0.sock"). */
sws_int_t sws_app_add_socket_arg(sws_app_t *app, const sws_str_t *prefix);
/* An environment variable whose value is the process's socket path (node's
 * PORT). */
sws_int_t sws_app_set_socket_env(sws_app_t *app, const sws_str_t *name);
/* An environment variable of the module's; the block's env of the same
 * name wins. */
sws_int_t sws_app_set_env(sws_app_t *app, const sws_str_t *name, const sws_str_t *value);

/* ABI 1.10: what the application's processes speak, for the locations that
 * pass requests to it: protocol "http" unless said so (a python_app with
 * "server native" speaks "python-bridge"), pass the directive that reaches
 * it, named when another one is refused (default: KIND_pass, "node_pass").
 * Strings that live as long as the configuration (literals). */
void sws_app_set_protocol(sws_app_t *app, const char *protocol, const char *pass);

/* ABI 1.10: the directive being read passes requests, in protocol, to the
 * upstream group name. If name is an application that speaks another
 * protocol, the configuration is refused once the http block is read (the
 * application may be declared after the location), with a message naming
 * the directive's file and line and the directive to use. Any group name
 * may be given: one that is no application's is never refused. SWS_OK or
 * SWS_ERROR (no memory). */
sws_int_t sws_app_expect_protocol(sws_conf_t *cf, const sws_str_t *name, const char *protocol);

/* After the block and the module's settings: declare the processes.
 * SWS_OK, or SWS_ERROR (logged). */
sws_int_t sws_app_done(sws_conf_t *cf, sws_app_t *app);

#endif
