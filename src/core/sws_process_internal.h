/* Shared by sws_process.c (signals, worker setup) and sws_master.c. */
#ifndef SWS_PROCESS_INTERNAL_H
#define SWS_PROCESS_INTERNAL_H

#include <signal.h>
#include "sws_process.h"

/* A worker exits with this code when it cannot start (privileges, init):
 * the master then respawns it at most once a second. */
#define SWS_WORKER_EXIT_FATAL  2

extern volatile sig_atomic_t sws_noaccept;  /* WINCH: stop workers, keep master */
extern volatile sig_atomic_t sws_upgrade;   /* USR2: binary upgrade (unsupported) */
extern volatile sig_atomic_t sws_alarm;     /* ALRM: the master's timer */

/* Shared by the master and its workers (an anonymous shared mapping made
 * before the first fork), one per worker index (sws_worker_stat_t is in
 * sws_process.h). */
extern sws_worker_stat_t *sws_worker_stats;
/* In a worker: the generation it belongs to. */
extern sws_uint_t  sws_worker_generation;

/* USR2: fork and exec the binary of the saved command line with cycle's
 * listening sockets inherited (sws_upgrade.c). The child's pid, or -1. */
pid_t sws_upgrade_exec(sws_cycle_t *cycle);
/* The old master, in a new binary started by its USR2 (sws_upgrade_began
 * notes it at start-up, when sockets were inherited); 0 in others. While it
 * runs, it is the one systemd may follow again (a rollback): this master's
 * end is not the service's. */
void  sws_upgrade_began(void);
int   sws_upgrade_parent_runs(void);

/* Run every module's init_master hook; logs which one failed. */
sws_int_t sws_init_master_modules(sws_cycle_t *cycle);

/* Become user (uid, gid, with its groups); as root only. Logs failures. */
sws_int_t sws_switch_user(sws_log_t *log, const char *user, uid_t uid, gid_t gid);

/* In a freshly forked child: become worker `worker` and run it; never
 * returns. master is the parent's pid (to notice it dying early). */
void sws_worker_process(sws_cycle_t *cycle, sws_uint_t worker, pid_t master)
    __attribute__((noreturn));

#endif
