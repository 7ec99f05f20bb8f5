/*
 * The master process: starts the workers, sleeps in sigsuspend() and acts
 * on signals. It never accepts connections.
 *
 * Workers are kept in a small table of children. A reload starts a new
 * generation of workers and, once they all accept connections (or after
 * SWS_READY_WAIT), tells the older ones to quit; only a worker of the
 * current generation that died without being told to is respawned.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "sws_server_control.h"
#include "sws_process.h"
#include "sws_process_internal.h"
#include "../event/sws_event.h"
#include "../event/sws_reuseport.h"
#include "../event/sws_udp_slots.h"
#include "../event/sws_udp_steer.h"
#include "sws_core_module.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"
#include "sws_notify.h"
#include "sws_pidfile.h"
#include "sws_shm_internal.h"
#include "sws_times_internal.h"

#define SWS_RESPAWN_DELAY   1000    /* ms between two starts of one worker */
#define SWS_TERMINATE_WAIT  1000    /* ms from TERM to KILL */
#define SWS_READY_WAIT      2000    /* ms a reload waits for its workers to accept */
#define SWS_READY_POLL      5       /* ms between two looks meanwhile */
#define SWS_ADAPT_PERIOD    1000    /* ms between two samples of the workers' load */
#define SWS_ADAPT_UP        75      /* % busy (mean) above which a worker is added */
#define SWS_ADAPT_DOWN      20      /* % busy below which, SWS_ADAPT_CALM samples */
#define SWS_ADAPT_CALM      3       /*   in a row with no backlog, one goes */
#define SWS_ADAPT_QUEUE     16      /* connections waiting that add a worker at
                                       once (fewer: two samples in a row) */

enum {
    SWS_CHILD_FREE = 0,
    SWS_CHILD_RUNNING,
    SWS_CHILD_QUITTING,     /* told to stop: never respawned */
    SWS_CHILD_PENDING       /* to be respawned at `at` */
};

/* What the adaptive runtime does with per-worker (reuseport) sockets
 * (sws_reuseport.c). */
enum {
    SWS_REUSEPORT_NONE = 0,  /* none */
    SWS_REUSEPORT_MIGRATE,   /* tcp_migrate_req: a retired worker's are closed */
    SWS_REUSEPORT_STEER      /* all open, new connections to the workers that run */
};

enum {
    SWS_MASTER_RUNNING = 0,
    SWS_MASTER_QUITTING,
    SWS_MASTER_TERMINATING
};

typedef struct {
    pid_t       pid;
    int         state;
    sws_uint_t  generation;
    sws_uint_t  worker;
    sws_msec_t  at;          /* started (RUNNING), due (PENDING) */
    uint64_t    busy_ns;     /* adaptive: its busy time at the last sample */
    int         sampled;     /* busy_ns is set */
    int         accepting;   /* it said so (sws_worker_stats[worker].ready) */
    sws_uint_t  slot;        /* its QUIC slot (sws_udp_steer.h), or none */
    int         to_signal;   /* sws_stop_children: told once steered away */
} sws_child_t;

static sws_child_t  *sws_children;
static sws_uint_t    sws_children_n;
static sws_uint_t    sws_generation;
static int           sws_master_state;
static int           sws_workers_stopped;   /* after WINCH, until HUP */
static sws_msec_t    sws_kill_at;           /* TERM deadline, 0: none */
static sws_msec_t    sws_retire_at;         /* older generations quit by then, 0: none */
static sws_uint_t    sws_retired_below;     /* generations below this were told to quit */
static sws_uint_t    sws_workers_n;         /* adaptive: workers of this generation */
static sws_msec_t    sws_adapt_at;          /* adaptive: the next sample, 0: off */
static uint64_t      sws_adapt_last_ns;
static sws_uint_t    sws_adapt_calm;        /* samples in a row below SWS_ADAPT_DOWN */
static sws_uint_t    sws_adapt_queued;      /* connections waiting at the last sample */
static int           sws_adapt_reuseport;   /* adaptive with reuseport: SWS_REUSEPORT_* */
static int           sws_quic_steered;      /* every QUIC group has a program */
static pid_t         sws_master_pid;
static char          sws_pid_path[PATH_MAX];
static pid_t         sws_new_binary;        /* USR2: the new master, 0: none */
static char          sws_pid_path_kept[PATH_MAX];  /* the pid file's name before */


static sws_child_t *
sws_child_slot(sws_log_t *log)
{
    sws_child_t  *c;
    sws_uint_t    i, n;

    for (i = 0; i < sws_children_n; i++) {
        if (sws_children[i].state == SWS_CHILD_FREE) {
            return &sws_children[i];
        }
    }
    n = sws_children_n ? sws_children_n * 2 : 8;
    c = realloc(sws_children, n * sizeof(sws_child_t));
    if (c == NULL) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "cannot grow the table of workers");
        return NULL;
    }
    memset(c + sws_children_n, 0, (n - sws_children_n) * sizeof(sws_child_t));
    sws_children = c;
    i = sws_children_n;
    sws_children_n = n;
    return &sws_children[i];
}


static void sws_note_accepting(void);


static int
sws_child_alive(const sws_child_t *c)
{
    return c->state == SWS_CHILD_RUNNING || c->state == SWS_CHILD_QUITTING;
}


/* The QUIC slot of a worker about to start: the lowest that no process
 * has, of either master of a binary upgrade (sws_udp_slots.h); its
 * sockets opened if it is a new one. While a new binary runs, only a slot
 * whose sockets this master has: the new binary's are not its. */
static sws_uint_t
sws_quic_slot_take(sws_cycle_t *cycle)
{
    sws_uint_t  s;

    sws_udp_slots_lock();
    for (s = 0; s < SWS_UDP_SLOTS_MAX; s++) {
        if (sws_udp_slots_free(s)
            && (sws_new_binary == 0 || sws_listening_slot_has(cycle, s)))
        {
            break;
        }
    }
    if (s == SWS_UDP_SLOTS_MAX || sws_listening_slot_open(cycle, s) != SWS_OK) {
        sws_udp_slots_unlock();
        sws_log_error(SWS_LOG_ALERT, cycle->log, 0, "no QUIC slot for a new worker: its "
                      "QUIC connections may not reach it");
        return SWS_UDP_NO_SLOT;
    }
    /* This master's until the worker's pid is known. */
    sws_udp_slots_hold(s, sws_master_pid, 0);
    sws_udp_slots_unlock();
    return s;
}


/* Tell the programs of the QUIC groups which slots are live (a process
 * runs there: the datagrams of its connections go to it) and which take
 * new connections (the running workers of this generation; of the new
 * binary while one runs: sws_udp_slots.h). */
static void
sws_quic_steer(sws_cycle_t *cycle)
{
    sws_uint_t   live[SWS_UDP_SLOTS_MAX], cur[SWS_UDP_SLOTS_MAX], nlive, ncur, i;
    sws_child_t *c;

    if (!sws_quic_steered) {
        return;
    }
    sws_udp_slots_lock();
    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (!sws_child_alive(c) || c->slot >= SWS_UDP_SLOTS_MAX) {
            continue;
        }
        sws_udp_slots_hold(c->slot, c->pid, c->state == SWS_CHILD_RUNNING
                           && c->generation == sws_generation && !sws_workers_stopped
                           && sws_master_state == SWS_MASTER_RUNNING);
    }
    sws_udp_slots_steering(live, &nlive, cur, &ncur);
    sws_udp_steer_update(cycle, live, nlive, cur, ncur);
    sws_udp_slots_unlock();
}


/* May move the table: callers must not keep slot pointers across it. */
static void
sws_spawn_worker(sws_cycle_t *cycle, sws_uint_t worker)
{
    sws_child_t  *c;
    pid_t         pid;

    c = sws_child_slot(cycle->log);
    if (c == NULL) {
        return;
    }

    if (sws_worker_stats != NULL && worker < SWS_CORE_MAX_WORKERS) {
        sws_note_accepting();                /* the slot's last word, first */
        sws_worker_stats[worker].ready = 0;  /* not this one yet */
    }
    /* Its reuseport sockets, if they were closed when a worker of its
     * index was retired (a new one joins its group). */
    sws_worker_slot = sws_reuseport_udp(cycle) ? sws_quic_slot_take(cycle) : worker;
    pid = sws_listening_worker_open(cycle, worker) == SWS_OK ? fork() : -1;
    if (pid == 0) {
        sws_worker_generation = sws_generation;
        sws_helpers_close_pipes();
        sws_worker_process(cycle, worker, sws_master_pid);
    }

    c->generation = sws_generation;
    c->worker = worker;
    c->sampled = 0;
    c->accepting = 0;
    c->slot = (pid == -1 || !sws_reuseport_udp(cycle)) ? SWS_UDP_NO_SLOT : sws_worker_slot;
    if (sws_reuseport_udp(cycle) && sws_worker_slot != SWS_UDP_NO_SLOT) {
        /* The slot is the worker's now (given back when it is reaped),
         * steered or not; or free again. */
        sws_udp_slots_lock();
        if (pid == -1) {
            sws_udp_slots_release(sws_worker_slot, sws_master_pid);
        } else {
            sws_udp_slots_hold(sws_worker_slot, pid, 0);
        }
        sws_udp_slots_unlock();
    }

    if (pid == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno,
                      "fork() failed for worker %lu, retrying in 1 s", (unsigned long) worker);
        c->pid = 0;
        c->state = SWS_CHILD_PENDING;
        c->at = sws_monotonic_msec() + SWS_RESPAWN_DELAY;
        return;
    }

    c->pid = pid;
    c->state = SWS_CHILD_RUNNING;
    c->at = sws_monotonic_msec();
    if (c->slot == SWS_UDP_NO_SLOT) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "started worker process %ld (worker %lu)",
                      (long) pid, (unsigned long) worker);
    } else {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "started worker process %ld (worker %lu, "
                      "QUIC slot %lu)", (long) pid, (unsigned long) worker,
                      (unsigned long) c->slot);
    }
    sws_quic_steer(cycle);
}


/*
 * The adaptive runtime with reuseport TCP sockets, n workers to start: with
 * tcp_migrate_req the sockets of the others are closed (their queues move
 * to the first n), else all stay open and new connections are steered to
 * the first n. 0: that cannot be done, keep the maximum.
 */
static int
sws_adapt_reuseport_mode(sws_cycle_t *cycle, sws_uint_t n)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);
    sws_uint_t        w;

    if (sws_reuseport_migrates()) {
        sws_reuseport_unsteer(cycle);
        for (w = n; w < (sws_uint_t) ccf->workers_max; w++) {
            sws_listening_worker_close(cycle, w);
        }
        sws_adapt_reuseport = SWS_REUSEPORT_MIGRATE;
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "adaptive: reuseport sockets of a "
                      "retired worker are closed (tcp_migrate_req: their queues move)");
        return 1;
    }
    for (w = 0; w < (sws_uint_t) ccf->workers_max; w++) {
        if (sws_listening_worker_open(cycle, w) != SWS_OK) {
            return 0;
        }
    }
    if (sws_reuseport_steer(cycle, n) != SWS_OK) {
        return 0;
    }
    sws_adapt_reuseport = SWS_REUSEPORT_STEER;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "adaptive: new connections of reuseport "
                  "sockets go to the running workers (BPF); a retired worker drains its queue");
    return 1;
}


static void
sws_start_workers(sws_cycle_t *cycle)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);
    sws_int_t         i, n = ccf->worker_processes;

    sws_adapt_reuseport = SWS_REUSEPORT_NONE;
    /* QUIC: datagrams to the worker of their connection, whichever
     * workers come and go (sws_udp_steer.c). */
    sws_quic_steered = sws_reuseport_udp(cycle)
                       && sws_udp_steer_attach(cycle, (sws_uint_t) ccf->quic_steering);
    if (!ccf->adaptive && sws_reuseport_tcp(cycle)) {
        /* A program of the configuration before (or of the other master
         * of an upgrade) would leave workers out. */
        sws_reuseport_unsteer(cycle);
    }
    if (ccf->adaptive) {
        /* A reload keeps the number reached, within the new bounds. */
        n = sws_workers_n ? (sws_int_t) sws_workers_n : ccf->workers_start;
        n = sws_max(sws_min(n, ccf->workers_max), ccf->workers_min);
        sws_adapt_at = sws_monotonic_msec() + SWS_ADAPT_PERIOD;
        sws_adapt_last_ns = 0;
        sws_adapt_calm = 0;
        sws_adapt_queued = 0;
    } else {
        sws_adapt_at = 0;
    }
    if (ccf->adaptive
        && ((sws_reuseport_udp(cycle) && !sws_quic_steered)
            || (sws_reuseport_tcp(cycle) && !sws_adapt_reuseport_mode(cycle, (sws_uint_t) n))))
    {
        /* QUIC's UDP sockets unsteered: a worker's flows would move. */
        sws_log_error(SWS_LOG_WARN, cycle->log, 0, "adaptive: %s keep worker_processes_max "
                      "(%ld) workers", sws_reuseport_udp(cycle) && !sws_quic_steered
                      ? "QUIC (UDP) sockets without steering"
                      : "reuseport sockets that cannot be steered", (long) ccf->workers_max);
        n = ccf->workers_max;
        sws_adapt_at = 0;
    }
    sws_workers_n = (sws_uint_t) n;
    for (i = 0; i < n; i++) {
        sws_spawn_worker(cycle, (sws_uint_t) i);
    }
}


static void
sws_signal_child(sws_cycle_t *cycle, sws_child_t *c, int signo)
{
    if (kill(c->pid, signo) == -1 && errno != ESRCH) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "kill(%ld, %d) failed",
                      (long) c->pid, signo);
    }
}


/* Tell children to stop (QUIT: graceful, TERM: now). Only those of a
 * generation older than `below` (the current one + 1 for all). */
static void
sws_stop_children(sws_cycle_t *cycle, int signo, sws_uint_t below)
{
    sws_uint_t    i;
    sws_child_t  *c;

    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (c->generation >= below) {
            continue;
        }
        if (c->state == SWS_CHILD_PENDING) {
            c->state = SWS_CHILD_FREE;
        } else if (c->state == SWS_CHILD_RUNNING) {
            c->state = SWS_CHILD_QUITTING;
            c->to_signal = 1;
        } else if (c->state == SWS_CHILD_QUITTING) {
            sws_signal_child(cycle, c, signo);
        }
    }
    /* New QUIC connections go elsewhere before they stop taking them. */
    sws_quic_steer(cycle);
    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (c->to_signal) {
            c->to_signal = 0;
            sws_signal_child(cycle, c, signo);
        }
    }
}


/*
 * After a reload the old workers go on accepting until every new one
 * does: told to quit at once, they would stop accepting while the new
 * ones still start, and the clients whose connections they end would
 * reconnect to the old worker that had not yet seen its QUIT, to be
 * ended a second time.
 */
/* Note which workers accept (their slot is reset when the next worker
 * of the same index starts: so before each start). */
static void
sws_note_accepting(void)
{
    sws_uint_t    i;
    sws_child_t  *c;

    for (i = 0; i < sws_children_n && sws_worker_stats != NULL; i++) {
        c = &sws_children[i];
        if (c->state == SWS_CHILD_RUNNING && !c->accepting && c->worker < SWS_CORE_MAX_WORKERS
            && __atomic_load_n(&sws_worker_stats[c->worker].ready, __ATOMIC_ACQUIRE)
               == c->generation)
        {
            c->accepting = 1;
        }
    }
}


/* Do all the running workers of generation g accept? (And has it any?) */
static int
sws_generation_accepts(sws_uint_t g)
{
    sws_uint_t    i, n = 0;
    sws_child_t  *c;

    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (c->generation != g) {
            continue;
        }
        if (c->state == SWS_CHILD_PENDING
            || (c->state == SWS_CHILD_RUNNING && !c->accepting))
        {
            return 0;
        }
        n += c->state == SWS_CHILD_RUNNING;
    }
    return n > 0;
}


static void
sws_retire_old(sws_cycle_t *cycle)
{
    sws_uint_t  g;

    if (sws_retire_at == 0) {
        return;
    }
    sws_note_accepting();
    if (sws_monotonic_msec() >= sws_retire_at) {
        sws_log_error(SWS_LOG_WARN, cycle->log, 0, "the workers of generation %lu do not "
                      "accept yet %d ms after the reload: retiring the old ones anyway",
                      (unsigned long) sws_generation, SWS_READY_WAIT);
        g = sws_generation;
    } else {
        /* Reloads faster than workers start: what is older than the newest
         * generation that accepts goes now, not after the last reload. */
        for (g = sws_generation; g > 1 && !sws_generation_accepts(g); g--) { /* older */ }
        if (g <= 1) {
            return;
        }
    }
    if (g == sws_generation) {
        sws_retire_at = 0;
    }
    if (g > sws_retired_below) {
        sws_retired_below = g;
        sws_stop_children(cycle, SIGQUIT, g);
    }
}


/*
 * The adaptive runtime: every SWS_ADAPT_PERIOD the master reads the busy
 * time of the current workers (shared memory: each adds the time from a
 * wake-up to its next wait) and the accept queues of the listening
 * sockets (TCP_INFO: tcpi_unacked is the queue of a listener). Busy above
 * SWS_ADAPT_UP on average, or connections waiting to be accepted: one
 * worker more, up to worker_processes_max. Below SWS_ADAPT_DOWN with
 * nothing waiting for SWS_ADAPT_CALM samples: the last worker goes, down
 * to worker_processes_min. It goes as on a reload: it stops accepting (on
 * a shared socket what waits is the others' to take), finishes what it
 * has, and exits.
 */
static sws_uint_t
sws_adapt_backlog(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    struct tcp_info   ti;
    socklen_t         len;
    sws_uint_t        i, w, n = 0;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->udp || lss[i]->unix_socket) {
            continue;
        }
        for (w = 0; w < sws_max(lss[i]->worker_fds_n, 1); w++) {
            len = sizeof(ti);
            if (getsockopt(lss[i]->worker_fds_n ? lss[i]->worker_fds[w] : lss[i]->fd,
                           IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
            {
                n += ti.tcpi_unacked;
            }
        }
    }
    return n;
}


static void
sws_adapt(sws_cycle_t *cycle)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);
    sws_child_t      *c;
    sws_uint_t        i, n = 0, backlog, busy;
    uint64_t          sum = 0, ns, now_ns;
    int               waiting;
    sws_msec_t        now = sws_monotonic_msec();

    /* While a new binary runs, its master steers the shared sockets. */
    if (sws_adapt_at == 0 || now < sws_adapt_at || sws_workers_stopped
        || sws_worker_stats == NULL || sws_retire_at != 0 || sws_new_binary != 0)
    {
        return;
    }
    sws_adapt_at = now + SWS_ADAPT_PERIOD;
    now_ns = sws_worker_ns();

    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (c->state != SWS_CHILD_RUNNING || c->generation != sws_generation
            || c->worker >= SWS_CORE_MAX_WORKERS)
        {
            continue;
        }
        ns = __atomic_load_n(&sws_worker_stats[c->worker].busy_ns, __ATOMIC_RELAXED);
        if (sws_adapt_last_ns != 0 && c->sampled && ns >= c->busy_ns) {
            sum += ns - c->busy_ns;
            n++;
        }
        c->busy_ns = ns;
        c->sampled = 1;
    }
    if (sws_adapt_last_ns == 0 || n == 0) {
        sws_adapt_last_ns = now_ns;
        return;                              /* the first sample of these workers */
    }
    /* A long turn of a worker is counted when it ends: at most 100 %. */
    busy = (sws_uint_t) sws_min(sum * 100 / n / sws_max(now_ns - sws_adapt_last_ns, 1), 100);
    sws_adapt_last_ns = now_ns;
    backlog = sws_adapt_backlog(cycle);
    sws_log_debug(cycle->log, "adaptive: %lu workers, %lu %% busy, %lu waiting",
                  (unsigned long) sws_workers_n, (unsigned long) busy, (unsigned long) backlog);

    /* One connection in a queue at the moment of a look is noise on a
     * crowded machine (a worker not scheduled yet); one at each of two
     * looks, or many at one, is not. */
    waiting = backlog >= SWS_ADAPT_QUEUE || (backlog > 0 && sws_adapt_queued > 0);
    sws_adapt_queued = backlog;

    if ((busy > SWS_ADAPT_UP || waiting) && sws_workers_n < (sws_uint_t) ccf->workers_max) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "adaptive: %lu workers %lu %% busy, "
                      "%lu connections waiting: starting worker %lu",
                      (unsigned long) sws_workers_n, (unsigned long) busy,
                      (unsigned long) backlog, (unsigned long) sws_workers_n);
        if (sws_adapt_reuseport == SWS_REUSEPORT_STEER) {
            /* Its queue fills from now on: it accepts once started. */
            (void) sws_reuseport_steer(cycle, sws_workers_n + 1);
        }
        sws_spawn_worker(cycle, sws_workers_n++);
        sws_adapt_calm = 0;
        sws_adapt_queued = 0;
        sws_adapt_last_ns = 0;               /* a new sample base with it */
        return;
    }
    if (busy >= SWS_ADAPT_DOWN || backlog > 0) {
        sws_adapt_calm = 0;
        return;
    }
    if (++sws_adapt_calm < SWS_ADAPT_CALM || sws_workers_n <= (sws_uint_t) ccf->workers_min) {
        return;
    }
    sws_adapt_calm = 0;
    for (i = 0; i < sws_children_n; i++) {
        c = &sws_children[i];
        if (c->generation == sws_generation && c->worker == sws_workers_n - 1
            && (c->state == SWS_CHILD_RUNNING || c->state == SWS_CHILD_PENDING))
        {
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "adaptive: %lu workers %lu %% busy: "
                          "retiring worker %lu (process %ld)", (unsigned long) sws_workers_n,
                          (unsigned long) busy, (unsigned long) c->worker, (long) c->pid);
            if (sws_adapt_reuseport == SWS_REUSEPORT_STEER
                && sws_reuseport_steer(cycle, sws_workers_n - 1) == SWS_OK
                && c->state == SWS_CHILD_RUNNING)
            {
                /* Nothing new comes to its sockets: it takes what came. */
                __atomic_store_n(&sws_worker_stats[c->worker].drain, c->pid,
                                 __ATOMIC_RELEASE);
            }
            if (c->state == SWS_CHILD_PENDING) {
                c->state = SWS_CHILD_FREE;
            } else {
                /* Its QUIC connections stay steered to it, new ones not. */
                c->state = SWS_CHILD_QUITTING;
                sws_quic_steer(cycle);
                sws_signal_child(cycle, c, SIGQUIT);
            }
            if (sws_adapt_reuseport == SWS_REUSEPORT_MIGRATE) {
                /* Its queue moves when the worker has closed its copy too. */
                sws_listening_worker_close(cycle, c->worker);
            }
            break;
        }
    }
    sws_workers_n--;
    sws_adapt_last_ns = 0;
}


static sws_uint_t
sws_live_children(void)
{
    sws_uint_t  i, n = 0;

    for (i = 0; i < sws_children_n; i++) {
        n += sws_children[i].state == SWS_CHILD_RUNNING
             || sws_children[i].state == SWS_CHILD_QUITTING;
    }
    return n;
}


/* Workers of a generation before the current one still there. */
static sws_uint_t
sws_older_children_live(void)
{
    sws_uint_t  i, n = 0;

    for (i = 0; i < sws_children_n; i++) {
        n += sws_children[i].generation < sws_generation
             && (sws_children[i].state == SWS_CHILD_RUNNING
                 || sws_children[i].state == SWS_CHILD_QUITTING);
    }
    return n;
}


static void
sws_log_exit(sws_cycle_t *cycle, sws_child_t *c, int status, int expected)
{
    sws_uint_t  level = expected ? SWS_LOG_NOTICE : SWS_LOG_ALERT;

    if (WIFSIGNALED(status)) {
        sws_log_error(level, cycle->log, 0,
                      "worker process %ld (worker %lu) exited on signal %d (%s)%s",
                      (long) c->pid, (unsigned long) c->worker, WTERMSIG(status),
                      strsignal(WTERMSIG(status)),
                      WCOREDUMP(status) ? ", core dumped" : "");
    } else {
        sws_log_error(WEXITSTATUS(status) ? SWS_LOG_ALERT : level, cycle->log, 0,
                      "worker process %ld (worker %lu) exited with code %d",
                      (long) c->pid, (unsigned long) c->worker, WEXITSTATUS(status));
    }
}


/*
 * USR2: the new binary starts with the listening sockets inherited and
 * writes its own pid file; ours becomes NAME.oldbin. Both masters' workers
 * then accept. WINCH here stops our workers, QUIT retires this master
 * (the helpers of each master are its own: the new one starts its own, ours
 * stop with us). To go back: HUP here starts our workers again, QUIT to
 * the new master, and when it has exited the pid file gets its name back.
 */
static void
sws_master_upgrade(sws_cycle_t *cycle)
{
    char   oldbin[PATH_MAX];
    pid_t  pid;

    if (sws_new_binary != 0) {
        sws_log_error(SWS_LOG_WARN, cycle->log, 0, "binary upgrade: the new binary runs "
                      "already (process %ld): USR2 ignored", (long) sws_new_binary);
        return;
    }
    if ((size_t) snprintf(oldbin, sizeof(oldbin), "%s.oldbin", sws_pid_path)
        >= sizeof(oldbin))
    {
        sws_log_error(SWS_LOG_ALERT, cycle->log, 0, "binary upgrade: pid file name too long");
        return;
    }
    if (rename(sws_pid_path, oldbin) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "binary upgrade: rename(\"%s\", "
                      "\"%s\") failed", sws_pid_path, oldbin);
        return;
    }
    pid = sws_upgrade_exec(cycle);
    if (pid == -1) {
        if (rename(oldbin, sws_pid_path) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "rename(\"%s\") back failed",
                          oldbin);
        }
        return;
    }
    sws_new_binary = pid;
    memcpy(sws_pid_path_kept, sws_pid_path, sizeof(sws_pid_path));
    memcpy(sws_pid_path, oldbin, sizeof(oldbin));
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "binary upgrade: started the new binary "
                  "(process %ld); this master's pid file is now \"%s\"", (long) pid, oldbin);
}


/* The new binary has exited: it could not start, or it was told to go
 * (a rollback). This master is the server again. */
static void
sws_upgrade_exited(sws_cycle_t *cycle, int status)
{
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "binary upgrade: the new binary (process "
                  "%ld) exited %s %d", (long) sws_new_binary,
                  WIFSIGNALED(status) ? "on signal" : "with code",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    sws_new_binary = 0;
    if (sws_adapt_reuseport == SWS_REUSEPORT_STEER && !sws_workers_stopped) {
        /* The new master steered them to its workers. */
        (void) sws_reuseport_steer(cycle, sws_workers_n);
    }
    if (sws_quic_steered) {
        /* Its QUIC programs replaced ours (slots of its own numbering). */
        sws_udp_steer_forget(cycle);
        sws_quic_steered = sws_udp_steer_attach(cycle, (sws_uint_t)
                                                sws_core_conf(cycle)->quic_steering);
        sws_quic_steer(cycle);
    }
    /* systemd followed the new master (its MAINPID=): this one again
     * (unless it is on its way out too). */
    if (sws_master_state == SWS_MASTER_RUNNING) {
        sws_notify(cycle->log, SWS_NOTIFY_READY, "the new binary exited: generation %lu %s",
                   (unsigned long) sws_generation, sws_workers_stopped
                   ? "stopped (WINCH), HUP starts it" : "serves");
    }
    if (rename(sws_pid_path, sws_pid_path_kept) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "rename(\"%s\", \"%s\") failed",
                      sws_pid_path, sws_pid_path_kept);
        return;
    }
    memcpy(sws_pid_path, sws_pid_path_kept, sizeof(sws_pid_path));
}


/* Reap every exited child; respawn the workers that died unexpectedly. */
static void
sws_reap_children(sws_cycle_t *cycle)
{
    sws_child_t  *c;
    sws_uint_t    i, worker;
    sws_msec_t    now;
    pid_t         pid;
    int           status;

    for ( ;; ) {
        pid = waitpid(-1, &status, WNOHANG);
        if (pid == 0) {
            return;
        }
        if (pid == -1) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != ECHILD) {
                sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "waitpid() failed");
            }
            return;
        }
        sws_shm_unlock_dead(pid, cycle->log);

        for (i = 0, c = NULL; i < sws_children_n; i++) {
            if (sws_children[i].pid == pid && sws_children[i].state != SWS_CHILD_FREE
                && sws_children[i].state != SWS_CHILD_PENDING)
            {
                c = &sws_children[i];
                break;
            }
        }
        if (c == NULL && pid == sws_new_binary) {
            sws_upgrade_exited(cycle, status);
            continue;
        }
        if (c == NULL) {
            if (sws_helpers_reaped(cycle, pid, status)) {
                continue;
            }
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                          "child process %ld exited (status %d)", (long) pid, status);
            continue;
        }

        sws_log_exit(cycle, c, status, c->state == SWS_CHILD_QUITTING);
        if (c->slot < SWS_UDP_SLOTS_MAX) {
            /* Its slot is free for either master (steered by the caller). */
            sws_udp_slots_lock();
            sws_udp_slots_release(c->slot, pid);
            sws_udp_slots_unlock();
            c->slot = SWS_UDP_NO_SLOT;
        }

        if (c->state != SWS_CHILD_RUNNING || sws_master_state != SWS_MASTER_RUNNING
            || c->generation != sws_generation || sws_workers_stopped)
        {
            c->state = SWS_CHILD_FREE;
            continue;
        }

        /* Respawn; but not more than once a second, so that a worker that
         * cannot start does not make the master fork in a loop. */
        now = sws_monotonic_msec();
        if (now - c->at < SWS_RESPAWN_DELAY) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, 0, "worker %lu %s; respawning it in %ld ms",
                          (unsigned long) c->worker,
                          WIFEXITED(status) && WEXITSTATUS(status) == SWS_WORKER_EXIT_FATAL
                          ? "could not start" : "died right after its start",
                          (long) (c->at + SWS_RESPAWN_DELAY - now));
            c->pid = 0;
            c->state = SWS_CHILD_PENDING;
            c->at += SWS_RESPAWN_DELAY;
            continue;
        }
        worker = c->worker;
        c->state = SWS_CHILD_FREE;
        sws_spawn_worker(cycle, worker);
    }
}


/* The TERM deadline and the delayed respawns. */
static void
sws_run_timers(sws_cycle_t *cycle)
{
    sws_uint_t  i, worker;
    sws_msec_t  now = sws_monotonic_msec();

    if (sws_kill_at != 0 && now >= sws_kill_at) {
        sws_kill_at = 0;
        for (i = 0; i < sws_children_n; i++) {
            if (sws_children[i].state == SWS_CHILD_QUITTING) {
                sws_log_error(SWS_LOG_WARN, cycle->log, 0,
                              "worker process %ld did not exit in time: killing it",
                              (long) sws_children[i].pid);
                sws_signal_child(cycle, &sws_children[i], SIGKILL);
            }
        }
    }

    for (i = 0; i < sws_children_n; i++) {
        if (sws_children[i].state == SWS_CHILD_PENDING && now >= sws_children[i].at) {
            worker = sws_children[i].worker;
            sws_children[i].state = SWS_CHILD_FREE;
            sws_spawn_worker(cycle, worker);     /* may move the table */
        }
    }

    sws_helpers_run_timers(cycle);
}


/* One-shot ALRM at the earliest deadline; it only wakes sigsuspend(). */
static void
sws_arm_timer(sws_cycle_t *cycle)
{
    struct itimerval  itv;
    sws_msec_t        next = sws_kill_at, delay, helper = sws_helpers_next_timer();
    sws_msec_t        quit = sws_server_quit_at();
    sws_uint_t        i;

    if (sws_retire_at != 0) {
        delay = sws_min(sws_retire_at, sws_monotonic_msec() + SWS_READY_POLL);
        if (next == 0 || delay < next) {
            next = delay;
        }
    }
    if (sws_adapt_at != 0 && sws_master_state == SWS_MASTER_RUNNING
        && (next == 0 || sws_adapt_at < next))
    {
        next = sws_adapt_at;
    }

    for (i = 0; i < sws_children_n; i++) {
        if (sws_children[i].state == SWS_CHILD_PENDING
            && (next == 0 || sws_children[i].at < next))
        {
            next = sws_children[i].at;
        }
    }

    if (helper != 0 && (next == 0 || helper < next)) {
        next = helper;
    }
    if (quit != 0 && sws_master_state == SWS_MASTER_RUNNING && (next == 0 || quit < next)) {
        next = quit;
    }

    memset(&itv, 0, sizeof(itv));
    if (next != 0) {
        delay = sws_max(next - sws_monotonic_msec(), 1);
        itv.it_value.tv_sec = delay / 1000;
        itv.it_value.tv_usec = (delay % 1000) * 1000;
    }
    if (setitimer(ITIMER_REAL, &itv, NULL) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setitimer() failed");
    }
}


/*
 * STOPPING=1, unless the service goes on in the other master of a binary
 * upgrade: this one is the old binary (the new one said MAINPID= itself),
 * or the new binary being rolled back (the old one said it again). The
 * unit has NotifyAccess=all for that (contrib/systemd/scalws.service).
 */
static void
sws_notify_stopping(sws_cycle_t *cycle, const char *status)
{
    if (sws_new_binary != 0 || sws_upgrade_parent_runs()) {
        return;
    }
    sws_notify(cycle->log, SWS_NOTIFY_STOPPING, "%s", status);
}


static void
sws_master_stop(sws_cycle_t *cycle, int signo)
{
    if (signo == SIGQUIT) {
        if (sws_master_state != SWS_MASTER_RUNNING) {
            return;
        }
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "gracefully shutting down");
        sws_notify_stopping(cycle, "gracefully shutting down");
        sws_master_state = SWS_MASTER_QUITTING;
    } else {
        if (sws_master_state == SWS_MASTER_TERMINATING) {
            return;
        }
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "shutting down");
        sws_notify_stopping(cycle, "shutting down");
        sws_master_state = SWS_MASTER_TERMINATING;
        sws_kill_at = sws_monotonic_msec() + SWS_TERMINATE_WAIT;
        /* Fast: the helpers stop with the workers, not after them. */
        sws_helpers_stop(cycle, SWS_TERMINATE_WAIT);
    }
    sws_retire_at = 0;
    sws_stop_children(cycle, signo, sws_generation + 1);
    /* No new connections from now on: the workers finish what they have
     * (QUIC's go on reaching them: the master keeps those groups until it
     * exits, with no current slot: sws_quic_steer). The sockets of a new
     * binary stay where they are. */
    sws_listening_close_accepting(cycle, sws_new_binary == 0);
}


static void
sws_master_exit(sws_cycle_t *cycle)
{
    (void) sws_pidfile_delete(sws_pid_path, cycle->log);
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "exit");
    sws_cycle_destroy(cycle);
    sws_helpers_free();
    free(sws_children);
    exit(0);
}


/* USR1: the master reopens the files first (as root they are created
 * owned by root: hand them to the workers' user so they can reopen too). */
static void
sws_master_reopen(sws_cycle_t *cycle)
{
    sws_core_conf_t  *ccf = sws_core_conf(cycle);
    sws_log_t       **logs = cycle->open_logs.elts;
    sws_uint_t        i;

    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "reopening logs");

    for (i = 0; i < cycle->open_logs.nelts; i++) {
        if (logs[i]->path == NULL) {
            continue;
        }
        if (sws_log_reopen(logs[i]) != SWS_OK) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "cannot reopen log \"%s\"",
                          logs[i]->path);
            continue;
        }
        if (geteuid() == 0 && ccf->uid != (uid_t) -1
            && fchown(logs[i]->fd, ccf->uid, (gid_t) -1) == -1)
        {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "fchown(\"%s\") failed",
                          logs[i]->path);
        }
    }

    for (i = 0; i < sws_children_n; i++) {
        if (sws_children[i].state == SWS_CHILD_RUNNING
            || sws_children[i].state == SWS_CHILD_QUITTING)
        {
            sws_signal_child(cycle, &sws_children[i], SIGUSR1);
        }
    }
    sws_helpers_signal_reopen(cycle);
}


static void
sws_set_pid_path(sws_cycle_t *cycle)
{
    sws_str_t  *pid = &sws_core_conf(cycle)->pid;

    snprintf(sws_pid_path, sizeof(sws_pid_path), "%.*s", (int) pid->len, pid->data);
}


/* READY=1 for systemd, with what serves. */
static void
sws_notify_serving(sws_cycle_t *cycle)
{
    sws_int_t  n = sws_core_conf(cycle)->worker_processes;

    sws_notify(cycle->log, SWS_NOTIFY_READY, "serving: %ld worker%s, generation %lu",
               (long) n, n == 1 ? "" : "s", (unsigned long) sws_generation);
}


/* HUP: a new cycle, a new generation of workers; the old ones finish what
 * they serve and exit. Returns the cycle now in use. */
static sws_cycle_t *
sws_master_reload(sws_cycle_t *cycle, const sws_cycle_args_t *args)
{
    sws_cycle_t  *new;
    char          old_pid[PATH_MAX];

    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "reloading the configuration");
    sws_notify(cycle->log, SWS_NOTIFY_RELOADING, "reloading the configuration");

    sws_log_clear_emerg();
    new = sws_cycle_init(cycle, args);
    if (new == NULL) {
        sws_server_reloaded(0, sws_generation);
        sws_log_error(SWS_LOG_ERR, cycle->log, 0,
                      "reload failed, the old configuration keeps serving");
        sws_notify(cycle->log, SWS_NOTIFY_READY, "reload failed: generation %lu keeps serving",
                   (unsigned long) sws_generation);
        return cycle;
    }
    /* The new cycle already owns the listening sockets it took over from
     * the old one, and destroying it would close them: so a failed
     * init_master does not stop the switch. */
    if (sws_init_master_modules(new) != SWS_OK) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, 0,
                      "init_master failed for the new configuration, switching anyway");
    }

    sws_generation++;
    sws_workers_stopped = 0;
    sws_start_workers(new);
    /* The old ones quit when the new ones accept (sws_retire_old). */
    sws_retire_at = sws_monotonic_msec() + SWS_READY_WAIT;

    memcpy(old_pid, sws_pid_path, sizeof(old_pid));
    if (sws_new_binary == 0) {
        sws_set_pid_path(new);       /* else it is the .oldbin one until the end */
    }
    if (strcmp(old_pid, sws_pid_path) != 0) {
        if (sws_pidfile_write(sws_pid_path, sws_master_pid, new->log) == SWS_OK) {
            (void) sws_pidfile_delete(old_pid, new->log);
        } else {
            memcpy(sws_pid_path, old_pid, sizeof(old_pid));
        }
    }

    sws_cycle_destroy(cycle);
    new->old_cycle = NULL;
    /* Only now: a helper started earlier would inherit the old
     * configuration's listening sockets. */
    sws_helpers_reload(new);
    sws_log_error(SWS_LOG_NOTICE, new->log, 0, "configuration reloaded (generation %lu)",
                  (unsigned long) sws_generation);
    sws_server_reloaded(1, sws_generation);
    sws_notify_serving(new);
    return new;
}


void
sws_master_process_cycle(sws_cycle_t *cycle, const sws_cycle_args_t *args)
{
    sws_msec_t  quit_at;
    sws_uint_t  asked;

    sws_process = SWS_PROCESS_MASTER;
    sws_master_pid = getpid();
    sws_pid = sws_master_pid;
    sws_set_pid_path(cycle);

    if (sws_init_master_modules(cycle) != SWS_OK) {
        (void) sws_pidfile_delete(sws_pid_path, cycle->log);
        exit(1);
    }

    sws_generation = 1;
    sws_worker_stats = mmap(NULL, SWS_CORE_MAX_WORKERS * sizeof(sws_worker_stat_t),
                            PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sws_worker_stats == MAP_FAILED) {
        /* Reloads then retire the old workers after SWS_READY_WAIT. */
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "mmap() of the workers' states failed");
        sws_worker_stats = NULL;
    }
    sws_server_control_init(cycle->log, sws_master_pid);
    /* The QUIC slots: a new binary's are the old master's table. */
    (void) sws_udp_slots_init(cycle->log, -1);
    /* Helpers first: the workers may send requests to them at once. */
    sws_helpers_start(cycle);
    sws_start_workers(cycle);
    /* The listeners were opened with the cycle: connections queue there
     * until a worker accepts them. */
    sws_notify_serving(cycle);
    sws_server_publish_helpers();

    for ( ;; ) {
        if (sws_master_state != SWS_MASTER_RUNNING && sws_live_children() == 0) {
            /* QUIT: the helpers go once the last worker is gone. */
            sws_helpers_stop(cycle, 0);
            if (sws_helpers_live() == 0) {
                sws_master_exit(cycle);
            }
        }

        sws_arm_timer(cycle);
        if (sws_helpers_wait(cycle, &sws_wait_sigmask, sws_server_control_fd())) {
            /* What a worker asked for, as the signals would (sws_server.h). */
            asked = sws_server_control_take();
            sws_reconfigure |= (asked >> SWS_SERVER_RELOAD) & 1;
            sws_reopen |= (asked >> SWS_SERVER_REOPEN) & 1;
        }
        sws_time_update();

        if (sws_child_exited) {
            sws_child_exited = 0;
            sws_reap_children(cycle);
            sws_quic_steer(cycle);          /* the slots of those gone */
        }
        if (sws_terminate) {
            sws_terminate = 0;
            sws_master_stop(cycle, SIGTERM);
        }
        if (sws_quit) {
            sws_quit = 0;
            sws_master_stop(cycle, SIGQUIT);
        }
        sws_alarm = 0;
        sws_run_timers(cycle);
        sws_retire_old(cycle);
        if (sws_older_children_live() == 0) {
            /* The applications a reload dropped served them until now. */
            sws_helpers_older_workers_gone(cycle);
        }
        sws_server_publish_helpers();
        if (sws_master_state == SWS_MASTER_RUNNING) {
            sws_adapt(cycle);
            /* A drain asked by a worker (sws_server_control) is over. */
            quit_at = sws_server_quit_at();
            if (quit_at != 0 && sws_monotonic_msec() >= quit_at) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "the drain asked for is over");
                sws_master_stop(cycle, SIGQUIT);
            }
        }

        if (sws_reopen) {
            sws_reopen = 0;
            sws_master_reopen(cycle);
        }

        if (sws_master_state != SWS_MASTER_RUNNING) {
            sws_reconfigure = sws_noaccept = sws_upgrade = 0;
            continue;
        }

        if (sws_reconfigure && sws_workers_stopped) {
            /* After WINCH (a binary upgrade being rolled back): the same
             * configuration again, as it served before. */
            sws_reconfigure = 0;
            sws_workers_stopped = 0;
            sws_generation++;
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "starting the workers again (HUP "
                          "after WINCH), generation %lu", (unsigned long) sws_generation);
            sws_start_workers(cycle);
            /* A rollback: systemd follows this master again (MAINPID=). */
            sws_notify_serving(cycle);
        }
        if (sws_reconfigure) {
            sws_reconfigure = 0;
            cycle = sws_master_reload(cycle, args);
        }
        if (sws_noaccept) {
            sws_noaccept = 0;
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                          "stopping the workers gracefully (WINCH); HUP starts them again");
            sws_workers_stopped = 1;
            sws_retire_at = 0;
            sws_stop_children(cycle, SIGQUIT, sws_generation + 1);
        }
        if (sws_upgrade) {
            sws_upgrade = 0;
            sws_master_upgrade(cycle);
        }
    }
}
