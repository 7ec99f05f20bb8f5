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
 * ABI 1.7: what an application module needs to put a helper behind a
 * run-time server list (sws_upstream.h) without watching it itself.
 *
 * Socket handoff, as systemd's socket activation does it (programs only):
 * the master opens addr ("127.0.0.1:8080", "[::1]:8080", "unix:/path";
 * backlog 511), and the program finds it listening as fd 3 with
 * LISTEN_FDS=1, LISTEN_PID=its pid and LISTEN_FDNAMES=fdname (NULL or
 * empty: the helper's name). The master keeps the socket open while the
 * helper restarts, so connections wait in the backlog; a reload keeps it
 * while the helper keeps the same address. It is closed (a unix path
 * unlinked) when the helper is no longer configured and when the master
 * exits. SWS_OK, or SWS_ERROR (logged) for an address that is not one.
 */
sws_int_t sws_helper_set_socket(sws_helper_t *h, const sws_str_t *addr,
    const sws_str_t *fdname);

/*
 * Readiness. A helper with a socket is ready once its program accepts on
 * it: the master queues a probe connection of its own at each start and
 * the helper is ready when the backlog has been emptied (the program sees
 * that connection close without a request), or for TCP has shrunk. A helper without one may name
 * an address that it listens on itself (same forms): it is ready when a
 * connection to it succeeds. With neither, it is ready as soon as it has
 * started. The master checks every 50 ms; a helper not ready within
 * timeout ms (default 30 s; 0: no limit) is a failed start: logged, stopped
 * (its stop signal, then SIGKILL) and restarted with the backoff.
 */
sws_int_t sws_helper_set_ready_probe(sws_helper_t *h, const sws_str_t *addr);
sws_int_t sws_helper_set_ready_timeout(sws_helper_t *h, sws_msec_t timeout);

/* How a helper's process ended: for the exit callback. size is
 * sizeof(sws_helper_exit_t) of the core that filled it: a module built
 * against a later SDK reads a field only if it lies within size. */
typedef struct {
    size_t      size;
    pid_t       pid;
    int         code;          /* its exit code, -1 if a signal ended it */
    int         signo;         /* the signal that ended it, 0 if it exited */
    unsigned    core_dumped:1;
    unsigned    stopped:1;     /* the master had asked it to stop (reload,
                                  quit, ready timeout) */
    unsigned    was_ready:1;   /* it had become ready */
    unsigned    restarting:1;  /* it will be started again */
    unsigned    reserved_bits:28;
    sws_msec_t  ran;           /* how long it ran, ms */
    uint64_t    reserved[6];
} sws_helper_exit_t;

/* Called in the master, with the running configuration's h and data:
 * ready when a start of the helper (process pid) becomes ready; on_exit
 * for every end of one of its processes, ready or not. A helper that a
 * reload changed gets the old process's exit through the new definition's
 * callbacks; one that the configuration no longer declares gets none. The
 * workers learn of it through what the callbacks change in shared memory
 * (a server list, a zone). Either may be NULL. */
typedef void (*sws_helper_ready_pt)(sws_helper_t *h, pid_t pid, void *data);
typedef void (*sws_helper_exit_pt)(sws_helper_t *h, const sws_helper_exit_t *ex, void *data);
sws_int_t sws_helper_set_callbacks(sws_helper_t *h, sws_helper_ready_pt ready,
    sws_helper_exit_pt on_exit, void *data);

/* A helper's state as the master sees it (call in the master: from a
 * callback, an init_master hook; in another process it answers SWS_DECLINED).
 * st->size: the caller's sizeof(sws_helper_status_t); the core fills no
 * more than that and sets it to what it filled. */
typedef struct {
    size_t      size;
    pid_t       pid;           /* 0: no process now */
    unsigned    running:1;     /* a process, being stopped or not */
    unsigned    ready:1;       /* that process is ready */
    unsigned    reserved_bits:30;
    uint64_t    starts;        /* processes started */
    uint64_t    exits;         /* ... and ended */
    int         last_code;     /* the last end, as in sws_helper_exit_t */
    int         last_signo;
    uint64_t    reserved[6];
} sws_helper_status_t;

sws_int_t sws_helper_status(sws_helper_t *h, sws_helper_status_t *st);

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
