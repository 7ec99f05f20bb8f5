/*
 * The process model: master and workers, signals, pid file, privileges.
 * src/core/sws_process.c (master) and src/core/scalwsd.c (main).
 */
#ifndef SWS_PROCESS_H
#define SWS_PROCESS_H

#include <signal.h>
#include <scalws/scalws.h>
#include "sws_cycle.h"

#define SWS_PROCESS_SINGLE  0
#define SWS_PROCESS_MASTER  1
#define SWS_PROCESS_WORKER  2
#define SWS_PROCESS_HELPER  3     /* a helper of the master (sws_helper.c) */

extern int   sws_process;     /* SWS_PROCESS_* of this process */
extern pid_t sws_pid;         /* this process */
extern sws_uint_t sws_worker; /* index of this worker */
/* Its QUIC slot: its socket of each QUIC group and the number in its
 * connection IDs (sws_udp_steer.h); 0 in a single process. */
extern sws_uint_t sws_worker_slot;

/* Set by signal handlers, read by the loops. */
extern volatile sig_atomic_t sws_quit;        /* QUIT: graceful stop */
extern volatile sig_atomic_t sws_terminate;   /* TERM/INT: stop now */
extern volatile sig_atomic_t sws_reopen;      /* USR1: reopen logs */
extern volatile sig_atomic_t sws_reconfigure; /* HUP (master) */
extern volatile sig_atomic_t sws_child_exited;/* CHLD (master) */

/* Install the handlers; the handled signals stay blocked outside the
 * event loop's wait (src/event uses epoll_pwait with sws_wait_sigmask). */
sws_int_t sws_init_signals(sws_log_t *log);
extern sigset_t sws_wait_sigmask;

void sws_master_process_cycle(sws_cycle_t *cycle, const sws_cycle_args_t *args);
void sws_single_process_cycle(sws_cycle_t *cycle, const sws_cycle_args_t *args);

/*
 * The worker's event loop (src/event/sws_event_loop.c): initialises the
 * worker (events, init_worker hooks), serves until sws_terminate, or until
 * sws_quit and every connection has finished (or worker_shutdown_timeout),
 * runs exit_worker hooks, and returns. sws_reopen is handled inside.
 */
void sws_worker_run(sws_cycle_t *cycle, sws_uint_t worker);

/* Keep a copy of the command line for a binary upgrade (sws_upgrade.c). */
sws_int_t sws_save_argv(int argc, char *const *argv);

/* What a worker tells the master through shared memory, per worker index:
 * the generation of the last worker of that index that began accepting,
 * and (adaptive runtime) the time it spent outside its wait for events. */
typedef struct {
    sws_uint_t  ready;
    uint64_t    busy_ns;
    /* The master retires the worker of this pid with its own reuseport
     * sockets steered away (sws_reuseport.c): on QUIT it drains them. */
    pid_t       drain;
} sws_worker_stat_t;

/* In a worker whose busy time the master wants: its slot, else NULL. */
extern sws_worker_stat_t *sws_worker_stat;

/* A worker accepts connections now: it tells the master, which retires
 * the previous generation only then (sws_master.c). */
void sws_worker_accepting(sws_uint_t worker);

#endif
