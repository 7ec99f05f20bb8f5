/*
 * Helper processes, core side: the definition behind the SDK's opaque
 * sws_helper_t (sws_helper.c: declaring, checking; sws_helper_child.c:
 * the child's start and its waits) and the master's supervision of the
 * running ones (sws_helper_master.c).
 */
#ifndef SWS_HELPER_INTERNAL_H
#define SWS_HELPER_INTERNAL_H

#include <signal.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <scalws/scalws.h>
#include "sws_cycle.h"

#define SWS_HELPER_NAME_MAX  32
#define SWS_HELPER_SLOT_MAX  48
/* A child that could not become its helper (chdir, user, exec) exits with
 * this code after logging why; it is backed off like any failure. */
#define SWS_HELPER_EXIT_START  127

struct sws_helper_s {
    sws_str_t           name;         /* NUL-terminated */
    sws_cycle_t        *cycle;
    sws_pool_t         *pool;         /* the cycle's */
    const char         *file;         /* where it was declared, for errors */
    sws_uint_t          line;

    sws_helper_run_pt   run;          /* a function helper, or */
    void               *data;
    sws_str_t           program;      /* a program (as given; resolved in path) */
    char               *path;         /* absolute, after sws_helpers_check() */
    sws_array_t         args;         /* sws_str_t, NUL-terminated, after argv[0] */
    sws_array_t         env;          /* sws_str_t "NAME=VALUE" */
    char              **argv;         /* built by sws_helpers_check() */
    sws_str_t           directory;
    sws_str_t           user;
    sws_str_t           group;
    uid_t               uid;          /* (uid_t) -1: do not switch */
    gid_t               gid;
    sws_str_t           key;

    sws_uint_t          restart;
    sws_msec_t          backoff_first;
    sws_msec_t          backoff_max;
    sws_msec_t          backoff_reset;
    int                 stop_signal;
    sws_msec_t          stop_timeout;

    /* ABI 1.7: the socket handed to the program as fd 3 (sws_helper_set_socket;
     * socket.len 0: none), the readiness probe, the callbacks. */
    sws_str_t           socket;       /* as given, NUL-terminated */
    sws_str_t           fdname;       /* LISTEN_FDNAMES */
    struct sockaddr_storage  socket_sa;
    socklen_t           socket_salen;
    sws_str_t           probe;        /* an address the program listens on */
    struct sockaddr_storage  probe_sa;
    socklen_t           probe_salen;
    sws_msec_t          ready_timeout;
    sws_helper_ready_pt on_ready;     /* not in the signature: a reload that */
    sws_helper_exit_pt  on_exit;      /* only moves the module keeps the process */
    void               *cb_data;
    /* ABI 1.9 (applications, sws_http_app.c): helpers of the same slot
     * replace one another across reloads: the process of a helper that a
     * reload dropped is kept while a new helper of its slot starts, and
     * stopped once that one is ready (empty: no slot; not in the
     * signature: the name is). Slot "NAME.K" is of family "NAME.": a
     * process whose slot the configuration no longer has waits for any
     * new helper of its family. */
    sws_str_t           slot;
    /* Applications' recycling: a dormant helper is not started with the
     * others but by sws_helper_start_now(); watch is called in the master
     * every watch_every ms while the process is ready. */
    unsigned            dormant:1;
    sws_msec_t          watch_every;
    void              (*watch)(sws_helper_t *h, pid_t pid, void *data);
    /* Whether the process of helper `name`, which h's ready process
     * replaces (same slot or family), still has work in flight: while it
     * says 1 that process's stop waits (asked again every
     * SWS_HELPER_DRAIN_POLL ms, up to its stop timeout). last: it is
     * stopped now whatever the answer (out of time, or its replacement
     * went): the callback forgets it. NULL: stopped at once. Not in the
     * signature. */
    int               (*busy)(sws_helper_t *h, const char *name, int last, void *data);
    /* h's ready process died (not stopped) while the process of helper
     * `name`, which it replaced, waited for its work in flight: that one
     * is not stopped but kept, and is replaced again once h's restart is
     * ready. Not in the signature. */
    void              (*kept)(sws_helper_t *h, const char *name, void *data);

    /* Everything above that defines the helper, as bytes: a reload keeps
     * the running process when its signature is unchanged. */
    sws_str_t           signature;

    /* In the child only. */
    volatile sig_atomic_t  stop;
    pid_t               master;
};

/* The slot of h (see above): 1..SWS_HELPER_SLOT_MAX - 1 bytes. */
sws_int_t sws_helper_set_slot(sws_helper_t *h, const sws_str_t *slot);
/* In the master, for the running configuration's h: start its process
 * now if it has none (SWS_DECLINED if it has one), or stop it for good
 * (its stop signal; not restarted). */
sws_int_t sws_helper_start_now(sws_helper_t *h);
sws_int_t sws_helper_stop_now(sws_helper_t *h);

/* After the configuration is read (sws_cycle_init): complete and check
 * every helper (program found, directory, user), build argv and the
 * signatures. Logs and returns SWS_ERROR on a bad definition. */
sws_int_t sws_helpers_check(sws_cycle_t *cycle);

/* Helpers declared in cycle (sws_helper_t *), or NULL for none. */
sws_array_t *sws_helpers_of(sws_cycle_t *cycle);

/* In a forked child (sws_helper_child.c): become helper h (output on out and err, which are
 * dup'ed to 1 and 2; sock, unless -1, the listening socket handed over as fd 3), then run its function or exec its program; never
 * returns. */
void sws_helper_child(sws_helper_t *h, int out, int err, int sock, pid_t master)
    __attribute__((noreturn));

/*
 * The master's side (sws_helper_master.c). Helpers are started before the
 * first workers and kept across reloads by name and signature. QUIT stops
 * them once every worker has exited (workers may still be sending requests
 * to an application helper), TERM at the same time as the workers.
 */
void       sws_helpers_start(sws_cycle_t *cycle);
/* After a reload, cycle being the new configuration (the old one already
 * destroyed): keep, restart, stop or start helpers by their definition. */
void       sws_helpers_reload(sws_cycle_t *cycle);
/* No worker of an older generation is left: the helpers a reload dropped
 * (which such workers could still send requests to) are stopped now. */
void       sws_helpers_older_workers_gone(sws_cycle_t *cycle);
/* Stop every helper: fast (TERM) caps each stop timeout at `fast` ms. */
void       sws_helpers_stop(sws_cycle_t *cycle, sws_msec_t fast);
/* A child exited: 1 if it was a helper (logged, maybe rescheduled). */
int        sws_helpers_reaped(sws_cycle_t *cycle, pid_t pid, int status);
/* Helpers whose process is still there. */
sws_uint_t sws_helpers_live(void);
/* The earliest deadline (restart due, kill after stop timeout), 0: none;
 * and acting on the deadlines that passed. */
sws_msec_t sws_helpers_next_timer(void);
void       sws_helpers_run_timers(sws_cycle_t *cycle);
/* The master's sleep: sigsuspend() that also reads the helpers' output;
 * extra: one more fd to wait for (-1: none): 1 when it is readable. */
int        sws_helpers_wait(sws_cycle_t *cycle, const sigset_t *mask, int extra);
/* Up to n helpers' states, for sws_server_helper(): how many. */
sws_uint_t sws_helpers_snapshot(sws_server_helper_t *out, sws_uint_t n);
/* USR1: function helpers reopen their log files too. */
void       sws_helpers_signal_reopen(sws_cycle_t *cycle);
/* In any forked child of the master: close the helpers' pipes and their
 * handed-off sockets (without unlinking a unix path). */
void       sws_helpers_close_pipes(void);
/* At the master's exit. */
void       sws_helpers_free(void);

#endif
