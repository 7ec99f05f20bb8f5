/* A worker's life: initialise, serve events and timers, shut down. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "sws_event.h"
#include "sws_process.h"
#include "sws_events_module.h"
#include "sws_reuseport.h"
#include "sws_conn_stats.h"
#include "sws_resolver_internal.h"
#include "sws_core_module.h"
#include "../core/sws_log_internal.h"

volatile int        sws_exiting;
sws_msec_t          sws_exiting_idle;
sws_event_actions_t sws_event_actions;
uint64_t            sws_event_woke_ns;

/* The most events one wait hands over. */
#define SWS_EVENT_BATCH  512

static void
sws_worker_reopen_logs(sws_cycle_t *cycle)
{
    sws_uint_t   i;
    sws_log_t  **logs = cycle->open_logs.elts;

    for (i = 0; i < cycle->open_logs.nelts; i++) {
        sws_log_reopen(logs[i]);
    }
}

/* events { use io_uring; } falls back to epoll where the kernel refuses
 * io_uring (sws_uring_init says why, once). */
static sws_int_t
sws_event_method_init(sws_cycle_t *cycle, sws_events_conf_t *ecf)
{
    if (ecf->method == SWS_EVENTS_IO_URING) {
        sws_int_t rc = sws_uring_init(cycle, SWS_EVENT_BATCH);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    return sws_epoll_init(cycle, SWS_EVENT_BATCH);
}

static void
sws_worker_init(sws_cycle_t *cycle, sws_uint_t worker)
{
    sws_events_conf_t *ecf = sws_events_conf(cycle);
    sws_uint_t         i;

    sws_time_update();
    sws_event_timer_init();
    sws_heap_trim_init();
    sws_conn_stats_attach();            /* this worker's counters */

    if (sws_event_method_init(cycle, ecf) != SWS_OK
        || sws_connections_init(cycle, ecf->worker_connections) != SWS_OK
        || sws_listening_enable(cycle, worker) != SWS_OK)
    {
        exit(2);
    }

    for (i = 0; i < cycle->modules_n; i++) {
        if (cycle->modules[i]->init_worker
            && cycle->modules[i]->init_worker(cycle) != SWS_OK)
        {
            sws_log_error(SWS_LOG_EMERG, cycle->log, 0,
                          "module \"%s\" failed to initialise the worker",
                          cycle->modules[i]->name);
            exit(2);
        }
    }
}

static void
sws_worker_exit(sws_cycle_t *cycle)
{
    sws_uint_t i;

    for (i = cycle->modules_n; i-- > 0; ) {
        if (cycle->modules[i]->exit_worker) {
            cycle->modules[i]->exit_worker(cycle);
        }
    }
    sws_resolver_exit_worker();
    sws_event_actions.done();
}

uint64_t
sws_worker_ns(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

void
sws_worker_run(sws_cycle_t *cycle, sws_uint_t worker)
{
    uint64_t         now;
    sws_core_conf_t *ccf = sws_core_conf(cycle);
    sws_msec_t       timer, deadline = 0, drain_until = 0;
    int              drain = 0;

    sws_worker_init(cycle, worker);
    sws_worker_accepting(worker);

    for ( ;; ) {
        if (sws_terminate) {
            break;
        }

        if (sws_quit && !sws_exiting) {
            /* Nothing that was asked is lost: no new connections, and
             * each protocol ends its connections once what they carry is
             * done (HTTP/1: "Connection: close" on the next response;
             * HTTP/2: GOAWAY). The worker exits when the last is gone. */
            sws_exiting = 1;
            sws_exiting_idle = ccf->shutdown_idle;
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "gracefully shutting down");
            drain = sws_worker_stat != NULL
                    && __atomic_load_n(&sws_worker_stat->drain, __ATOMIC_ACQUIRE) == sws_pid;
            if (drain) {
                drain_until = sws_current_msec() + SWS_REUSEPORT_DRAIN;
            }
            sws_listening_disable(cycle, drain);
            sws_shutdown_connections();
            if (ccf->shutdown_timeout > 0) {
                deadline = sws_current_msec() + ccf->shutdown_timeout;
            }
        }

        if (drain && sws_current_msec() >= drain_until
            && !sws_reuseport_queued(cycle, worker))
        {
            /* Retired: what began before the master steered new
             * connections away from this worker's sockets has come. */
            drain = 0;
            sws_listening_disable(cycle, 0);
        }

        if (sws_exiting) {
            sws_close_idle_connections(1);
            if (sws_active_connections() == 0) {
                break;
            }
            if (deadline && sws_current_msec() >= deadline) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                              "worker_shutdown_timeout: closing %lu connections",
                              (unsigned long) sws_active_connections());
                break;
            }
        }

        if (sws_reopen) {
            sws_reopen = 0;
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "reopening logs");
            sws_worker_reopen_logs(cycle);
        }

        timer = sws_event_find_timer();
        if (sws_exiting && (timer == -1 || timer > 500)) {
            timer = 500;   /* re-check the shutdown state */
        }
        if (drain && (timer == -1 || timer > 50)) {
            timer = 50;    /* the end of the drain */
        }

        /* The adaptive runtime: the time from a wake-up to the next wait is
         * busy, preempted included (the CPU time would not tell a worker
         * that cannot get the CPU it needs on a crowded machine). */
        if (sws_worker_stat != NULL && sws_event_woke_ns != 0 && !sws_exiting) {
            now = sws_worker_ns();
            __atomic_store_n(&sws_worker_stat->busy_ns,
                             sws_worker_stat->busy_ns + now - sws_event_woke_ns,
                             __ATOMIC_RELAXED);
        }
        if (sws_event_actions.process_events(cycle, timer) == SWS_ERROR) {
            break;
        }
        sws_event_expire_timers();
        sws_event_process_posted();
    }

    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "exiting");
    sws_worker_exit(cycle);
}
