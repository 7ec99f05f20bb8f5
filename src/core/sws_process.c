/*
 * Signals and the single-process mode; the setup of a worker process after
 * fork (CPU affinity, limits, privileges). The master's loop is in
 * sws_master.c.
 *
 * The handled signals are blocked everywhere except inside the waits
 * (sigsuspend in the master, epoll_pwait in workers), so a signal can only
 * arrive while a process sleeps and a flag set by a handler is never missed
 * between the check and the next sleep.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* sched_setaffinity, CPU_SET */
#endif
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include "sws_process.h"
#include "sws_process_internal.h"
#include "sws_core_module.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"
#include "sws_notify.h"
#include "sws_pidfile.h"

/* sws_process, sws_pid, sws_worker, sws_worker_generation: sws_process_id.c */

volatile sig_atomic_t  sws_quit;
volatile sig_atomic_t  sws_terminate;
volatile sig_atomic_t  sws_reopen;
volatile sig_atomic_t  sws_reconfigure;
volatile sig_atomic_t  sws_child_exited;
volatile sig_atomic_t  sws_noaccept;
volatile sig_atomic_t  sws_upgrade;
volatile sig_atomic_t  sws_alarm;

sws_worker_stat_t  *sws_worker_stats;
sws_worker_stat_t  *sws_worker_stat;

sigset_t  sws_wait_sigmask;

/* ALRM is the master's timer (the TERM deadline, delayed respawns). */
static const int  sws_signals[] = {
    SIGHUP, SIGQUIT, SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGCHLD, SIGWINCH, SIGALRM
};


static void
sws_signal_handler(int signo)
{
    int  err = errno;

    switch (signo) {
    case SIGQUIT:  sws_quit = 1; break;
    case SIGTERM:
    case SIGINT:   sws_terminate = 1; break;
    case SIGUSR1:  sws_reopen = 1; break;
    case SIGHUP:   sws_reconfigure = 1; break;
    case SIGCHLD:  sws_child_exited = 1; break;
    case SIGWINCH: sws_noaccept = 1; break;
    case SIGUSR2:  sws_upgrade = 1; break;
    case SIGALRM:  sws_alarm = 1; break;
    }
    errno = err;
}


sws_int_t
sws_init_signals(sws_log_t *log)
{
    struct sigaction  sa;
    sigset_t          set;
    size_t            i;

    sigemptyset(&set);
    for (i = 0; i < sws_nelems(sws_signals); i++) {
        sigaddset(&set, sws_signals[i]);
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sws_signal_handler;
    sa.sa_mask = set;                       /* handlers never nest */
    sa.sa_flags = SA_RESTART;

    for (i = 0; i < sws_nelems(sws_signals); i++) {
        sa.sa_flags = SA_RESTART | (sws_signals[i] == SIGCHLD ? SA_NOCLDSTOP : 0);
        if (sigaction(sws_signals[i], &sa, NULL) == -1) {
            sws_log_error(SWS_LOG_EMERG, log, errno, "sigaction(%d) failed", sws_signals[i]);
            return SWS_ERROR;
        }
    }

    /* A closed peer must give EPIPE, not kill the process. */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGPIPE, &sa, NULL) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "sigaction(SIGPIPE) failed");
        return SWS_ERROR;
    }

    if (sigprocmask(SIG_BLOCK, &set, &sws_wait_sigmask) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "sigprocmask() failed");
        return SWS_ERROR;
    }
    for (i = 0; i < sws_nelems(sws_signals); i++) {
        sigdelset(&sws_wait_sigmask, sws_signals[i]);
    }
    return SWS_OK;
}


sws_int_t
sws_init_master_modules(sws_cycle_t *cycle)
{
    sws_uint_t  i;

    for (i = 0; i < cycle->modules_n; i++) {
        if (cycle->modules[i]->init_master != NULL
            && cycle->modules[i]->init_master(cycle) != SWS_OK)
        {
            sws_log_error(SWS_LOG_EMERG, cycle->log, 0,
                          "init_master of module \"%s\" failed", cycle->modules[i]->name);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}


static void
sws_set_nofile(sws_cycle_t *cycle, sws_core_conf_t *ccf)
{
    struct rlimit  rl;

    if (ccf->rlimit_nofile == SWS_UNSET) {
        return;
    }
    rl.rlim_cur = (rlim_t) ccf->rlimit_nofile;
    rl.rlim_max = (rlim_t) ccf->rlimit_nofile;
    if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno,
                      "setrlimit(RLIMIT_NOFILE, %ld) failed", (long) ccf->rlimit_nofile);
    }
}


static void
sws_set_affinity(sws_cycle_t *cycle, sws_core_conf_t *ccf, sws_uint_t worker)
{
    cpu_set_t   set, allowed;
    uint64_t    mask;
    sws_uint_t  n, cpu, k;

    CPU_ZERO(&set);

    if (ccf->cpu_affinity_auto == 1) {
        /* worker i gets the (i mod n)-th CPU we are allowed to use */
        if (sched_getaffinity(0, sizeof(allowed), &allowed) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "sched_getaffinity() failed");
            return;
        }
        n = (sws_uint_t) CPU_COUNT(&allowed);
        if (n == 0) {
            return;
        }
        k = worker % n;
        for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
            if (CPU_ISSET(cpu, &allowed) && k-- == 0) {
                CPU_SET(cpu, &set);
                break;
            }
        }

    } else if (ccf->cpus != NULL && ccf->cpus->nelts > 0) {
        /* worker_cpus: one CPU of the set per worker, in order */
        cpu = (sws_uint_t) ((int *) ccf->cpus->elts)[worker % ccf->cpus->nelts];
        CPU_SET(cpu, &set);

    } else if (ccf->cpu_affinity != NULL && ccf->cpu_affinity->nelts > 0) {
        /* fewer masks than workers: the last one serves the rest */
        n = sws_min(worker, ccf->cpu_affinity->nelts - 1);
        mask = ((uint64_t *) ccf->cpu_affinity->elts)[n];
        for (cpu = 0; cpu < 64; cpu++) {
            if (mask & ((uint64_t) 1 << cpu)) {
                CPU_SET(cpu, &set);
            }
        }

    } else {
        return;
    }

    if (sched_setaffinity(0, sizeof(set), &set) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno,
                      "sched_setaffinity() failed for worker %lu", (unsigned long) worker);
    }
}


static sws_int_t
sws_drop_privileges(sws_cycle_t *cycle, sws_core_conf_t *ccf)
{
    if (ccf->uid == (uid_t) -1 || ccf->user.data == NULL) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, 0, "no user to run the worker as");
        return SWS_ERROR;
    }
    return sws_switch_user(cycle->log, (const char *) ccf->user.data, ccf->uid, ccf->gid);
}


sws_int_t
sws_switch_user(sws_log_t *log, const char *user, uid_t uid, gid_t gid)
{
    if (uid == geteuid() && gid == getegid()) {
        /* Already that user (e.g. "user root;"): nothing to drop, and no
         * initgroups(), which loads every NSS module into the worker. */
        return SWS_OK;
    }
    if (setgid(gid) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "setgid(%ld) failed", (long) gid);
        return SWS_ERROR;
    }
    if (initgroups(user, gid) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "initgroups(%s, %ld) failed",
                      user, (long) gid);
        return SWS_ERROR;
    }
    if (setuid(uid) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "setuid(%ld) failed", (long) uid);
        return SWS_ERROR;
    }
    if (getuid() != uid || geteuid() != uid
        || getgid() != gid || getegid() != gid)
    {
        sws_log_error(SWS_LOG_EMERG, log, 0, "privileges were not dropped to user \"%s\"",
                      user);
        return SWS_ERROR;
    }
    return SWS_OK;
}


void
sws_worker_process(sws_cycle_t *cycle, sws_uint_t worker, pid_t master)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);

    sws_process = SWS_PROCESS_WORKER;
    sws_worker = worker;
    sws_pid = getpid();
    sws_log_set_pid(sws_pid);

    /* flags of the master's pending work are not ours */
    sws_quit = sws_terminate = sws_reopen = sws_reconfigure = 0;
    sws_child_exited = sws_noaccept = sws_upgrade = sws_alarm = 0;

    sws_set_affinity(cycle, ccf, worker);
    sws_set_nofile(cycle, ccf);
    if (ccf->adaptive && sws_worker_stats != NULL && worker < SWS_CORE_MAX_WORKERS) {
        sws_worker_stat = &sws_worker_stats[worker];
    }

    if (geteuid() == 0 && sws_drop_privileges(cycle, ccf) != SWS_OK) {
        exit(SWS_WORKER_EXIT_FATAL);
    }

    /* Stop when the master dies (set after setuid, which clears it). */
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "prctl(PR_SET_PDEATHSIG) failed");
    }
    if (getppid() != master) {
        exit(0);
    }

    sws_worker_run(cycle, worker);
    exit(0);
}


void
sws_worker_accepting(sws_uint_t worker)
{
    if (sws_process != SWS_PROCESS_WORKER || sws_worker_stats == NULL
        || worker >= SWS_CORE_MAX_WORKERS)
    {
        return;
    }
    /* No signal: a worker that dropped privileges may not send one to
     * the master; the master looks while it waits (SWS_READY_POLL). */
    __atomic_store_n(&sws_worker_stats[worker].ready, sws_worker_generation, __ATOMIC_RELEASE);
}


void
sws_single_process_cycle(sws_cycle_t *cycle, const sws_cycle_args_t *args)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);

    (void) args;
    sws_process = SWS_PROCESS_SINGLE;

    if (sws_init_master_modules(cycle) != SWS_OK) {
        (void) sws_pidfile_delete((const char *) ccf->pid.data, cycle->log);
        exit(1);
    }
    sws_set_nofile(cycle, ccf);
    if (sws_helpers_of(cycle) != NULL && sws_helpers_of(cycle)->nelts > 0) {
        sws_log_error(SWS_LOG_WARN, cycle->log, 0,
                      "helper processes need \"master_process on\": not started");
    }

    sws_notify(cycle->log, SWS_NOTIFY_READY, "serving: single process");
    sws_worker_run(cycle, 0);
    sws_notify(cycle->log, SWS_NOTIFY_STOPPING, "shutting down");

    if (sws_reconfigure) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                      "a reload (HUP) was asked for, but reloading needs "
                      "\"master_process on\": ignored");
    }
    (void) sws_pidfile_delete((const char *) ccf->pid.data, cycle->log);
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "exit");
    sws_cycle_destroy(cycle);
    exit(0);
}
