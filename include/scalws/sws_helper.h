/*
 * Helper processes: long-running children of the master, declared by a
 * module at configuration time, that the master starts, restarts with
 * backoff, stops and whose output it writes to the error log. A helper
 * either runs a function of the module in a forked child of the master
 * (with the configuration and the shared zones, e.g. a cache manager) or
 * executes a program (e.g. "node app.js").
 *
 * The definition is an opaque handle filled with setters, so that a later
 * SDK can add settings without changing any layout. A reload keeps a
 * helper whose definition (everything set here, for a function helper its
 * function and its key) did not change, and restarts one whose definition
 * did. See docs/modules.md, "Helper processes".
 */
#ifndef SWS_HELPER_H
#define SWS_HELPER_H

#include <signal.h>           /* SIGTERM ... for sws_helper_set_stop() */
#include <scalws/sws_types.h>

typedef struct sws_helper_s sws_helper_t;

/* A function helper's body, run in the child; what it returns is the
 * child's exit code (0: success, for the on-failure restart policy). */
typedef int (*sws_helper_run_pt)(sws_helper_t *h, void *data);

#define SWS_HELPER_RESTART_ALWAYS      0   /* the default */
#define SWS_HELPER_RESTART_ON_FAILURE  1   /* unless it exited with code 0 */
#define SWS_HELPER_RESTART_NEVER       2

/* Declare a helper in the configuration being read (from a directive's
 * setter or a postconfiguration hook). name: 1..32 of [A-Za-z0-9_.-],
 * unique in the configuration. NULL after logging on failure. */
sws_helper_t *sws_helper_add(sws_conf_t *cf, const sws_str_t *name);

/* What to run: exactly one of a function or a program. data is handed to
 * run as is (e.g. the module's conf). */
sws_int_t sws_helper_set_function(sws_helper_t *h, sws_helper_run_pt run, void *data);
/* A program: an absolute path, a path relative to the prefix, or a name
 * looked up in PATH when the configuration is checked. It is argv[0]. */
sws_int_t sws_helper_set_program(sws_helper_t *h, const sws_str_t *path);
sws_int_t sws_helper_add_arg(sws_helper_t *h, const sws_str_t *arg);
/* Added to (or replacing in) the master's environment; programs only. */
sws_int_t sws_helper_set_env(sws_helper_t *h, const sws_str_t *name, const sws_str_t *value);
/* Working directory of the child (default: the prefix). */
sws_int_t sws_helper_set_directory(sws_helper_t *h, const sws_str_t *dir);
/* The user (and group, may be NULL: the user's) to run as when the master
 * runs as root; default: the workers' user. */
sws_int_t sws_helper_set_user(sws_helper_t *h, const sws_str_t *user, const sws_str_t *group);
/* Function helpers: a text standing for the configuration the function
 * depends on; a reload restarts the helper when it changes. */
sws_int_t sws_helper_set_key(sws_helper_t *h, const sws_str_t *key);

sws_int_t sws_helper_set_restart(sws_helper_t *h, sws_uint_t policy);
/* Restart delays: first, doubled after each exit up to max, back to first
 * when the helper had run for reset or longer (defaults 100 ms, 10 s, 10 s). */
sws_int_t sws_helper_set_backoff(sws_helper_t *h, sws_msec_t first, sws_msec_t max,
    sws_msec_t reset);
/* Graceful stop: signo (default SIGTERM), then SIGKILL after timeout ms
 * (default 5 s). */
sws_int_t sws_helper_set_stop(sws_helper_t *h, int signo, sws_msec_t timeout);

/*
 * Inside a function helper. The handled signals are blocked, as in every
 * ScalWS process, except while it waits in sws_helper_sleep(): loop on
 * "work, then sws_helper_sleep()" and return when it says the helper must
 * stop (its stop signal, TERM, or the master gone).
 */
sws_cycle_t     *sws_helper_cycle(sws_helper_t *h);
sws_log_t       *sws_helper_log(sws_helper_t *h);
const sws_str_t *sws_helper_name(sws_helper_t *h);
/* 1 once the helper was asked to stop. */
int              sws_helper_stopping(sws_helper_t *h);
/* Sleep ms (updating the time cache); SWS_OK after the time, SWS_DONE at
 * once or early when the helper must stop. Reopens the logs on USR1. */
sws_int_t        sws_helper_sleep(sws_helper_t *h, sws_msec_t ms);

#endif
