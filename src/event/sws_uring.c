/*
 * The io_uring method (events { use io_uring; }), on liburing.
 *
 * Readiness as with epoll, so that handlers, `ready` flags and the recv /
 * send / sendfile calls stay what they are: each connection has one
 * multishot poll (IORING_OP_POLL_ADD with IORING_POLL_ADD_MULTI, which is
 * edge-triggered like EPOLLET) for both directions, its cookie c|instance.
 * What a loop iteration asks of the kernel (new polls, removals) is queued
 * as submissions and handed over with the wait, in one io_uring_enter();
 * the loop's timer is that wait's timeout, and its signal mask the same as
 * epoll_pwait's.
 *
 * A poll holds a reference to its socket: close() of the fd alone would not
 * end the TCP connection. Closing a registered connection therefore queues
 * the cancellation of its poll (close_connection), and the socket goes when
 * that is submitted, at the end of the iteration, like everything else. A
 * poll queued for an fd closed before the submission resolves the number at
 * submission: the cancellation queued behind it ends it whatever it found.
 *
 * A listening socket's poll is edge-triggered too: its handler, which
 * accepts a batch at a time, runs again by itself after a full batch
 * (sws_event_accept). A multishot accept was tried and left out: with it,
 * connections left the accept queue while the only worker was stopped
 * (test_adaptive_burst.py), held in a ring that no other worker can take
 * them from, and the adaptive runtime no longer saw them waiting.
 */
#include <stdlib.h>
#include <unistd.h>
#include "sws_event.h"
#include "sws_event_dispatch.h"
#include "sws_process.h"
/* SWS_HAVE_LIBURING */
#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

#if (SWS_HAVE_LIBURING)

#include <liburing.h>

/* The wait's timeout when no timer is set. */
#define SWS_URING_FOREVER_SEC  3600

static struct io_uring  ring;
static int              ring_up;
static unsigned         enter_flags;     /* IORING_ENTER_REGISTERED_RING */
/* Cancellations queued since the last wait: each brings one completion
 * (the poll's -ECANCELED, or its own failure), which the wait need not
 * end for (a connection closed after its response would cost one more
 * io_uring_enter() otherwise). */
static unsigned         cancels;

static sws_int_t sws_uring_add_connection(sws_connection_t *c);
static sws_int_t sws_uring_add_listening(sws_connection_t *c, int exclusive);
static sws_int_t sws_uring_del_connection(sws_connection_t *c);
static void      sws_uring_close_connection(sws_connection_t *c);
static sws_int_t sws_uring_process_events(sws_cycle_t *cycle, sws_msec_t timer);
static void      sws_uring_done(void);

static const sws_event_actions_t sws_uring_actions = {
    "io_uring",
    1,                          /* a listening socket's poll is edge-triggered */
    sws_uring_add_connection,
    sws_uring_add_listening,
    sws_uring_del_connection,
    sws_uring_close_connection,
    sws_uring_process_events,
    sws_uring_done
};

sws_int_t
sws_uring_init(sws_cycle_t *cycle, sws_uint_t n)
{
    struct io_uring_params  p;
    int                     rc;

    sws_memzero(&p, sizeof(p));
    /* One task submits and reaps; completions are run when it waits. */
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN
              | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = (unsigned) n * 8;
    rc = io_uring_queue_init_params((unsigned) n, &ring, &p);
    if (rc == -EINVAL) {
        /* A kernel older than 6.1: without the task-run flags. */
        sws_memzero(&p, sizeof(p));
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = (unsigned) n * 8;
        rc = io_uring_queue_init_params((unsigned) n, &ring, &p);
    }
    if (rc < 0) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, -rc,
                      "io_uring_queue_init() failed: using epoll instead of io_uring");
        return SWS_DECLINED;
    }
    /* The wait's timeout and signal mask need EXT_ARG (5.11), multishot
     * poll 5.13 (the kernel that added RSRC_TAGS). */
    if (!(p.features & IORING_FEAT_EXT_ARG) || !(p.features & IORING_FEAT_RSRC_TAGS)) {
        io_uring_queue_exit(&ring);
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                      "io_uring of this kernel is older than 5.13: using epoll instead");
        return SWS_DECLINED;
    }
    /* Saves looking the ring's fd up on every io_uring_enter() (5.18). */
    enter_flags = io_uring_register_ring_fd(&ring) == 1 ? IORING_ENTER_REGISTERED_RING : 0;
    ring_up = 1;
    sws_event_actions = sws_uring_actions;
    return SWS_OK;
}

static void
sws_uring_done(void)
{
    if (ring_up) {
        io_uring_queue_exit(&ring);
        ring_up = 0;
    }
}

/* A free submission entry; a full queue is handed to the kernel first. */
static struct io_uring_sqe *
sws_uring_sqe(sws_log_t *log)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
    int                  rc;

    if (sqe == NULL) {
        rc = io_uring_submit(&ring);     /* sws_uring_flush() and an enter */
        if (rc < 0) {
            sws_log_error(SWS_LOG_ALERT, log, -rc, "io_uring_submit() failed");
        }
        sqe = io_uring_get_sqe(&ring);
    }
    return sqe;
}

static sws_int_t
sws_uring_poll(sws_connection_t *c, unsigned events)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(c->log);

    if (sqe == NULL) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "io_uring: no submission entry for %d",
                      c->fd);
        return SWS_ERROR;
    }
    io_uring_prep_poll_multishot(sqe, c->fd, events);
    io_uring_sqe_set_data64(sqe, (uintptr_t) c | c->read->instance);
    return SWS_OK;
}

/* The events a connection's poll asks for: a listening socket only reads. */
static unsigned
sws_uring_poll_events(sws_connection_t *c)
{
    return c->read->accept ? EPOLLIN : EPOLLIN | EPOLLOUT | EPOLLRDHUP;
}

static sws_int_t
sws_uring_add_connection(sws_connection_t *c)
{
    if (sws_uring_poll(c, sws_uring_poll_events(c)) != SWS_OK) {
        return SWS_ERROR;
    }
    c->read->active = 1;
    c->write->active = 1;
    return SWS_OK;
}

/* Workers that share a socket are all woken by a new connection (a poll
 * has no EPOLLEXCLUSIVE); the accept4() of all but one finds nothing. */
static sws_int_t
sws_uring_add_listening(sws_connection_t *c, int exclusive)
{
    (void) exclusive;
    if (sws_uring_poll(c, sws_uring_poll_events(c)) != SWS_OK) {
        return SWS_ERROR;
    }
    c->read->active = 1;
    return SWS_OK;
}

static sws_int_t
sws_uring_del_connection(sws_connection_t *c)
{
    struct io_uring_sqe *sqe;

    c->read->active = 0;
    c->write->active = 0;
    sqe = sws_uring_sqe(c->log);
    if (sqe == NULL) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "io_uring: no submission entry for %d",
                      c->fd);
        return SWS_ERROR;
    }
    /* A cancellation, not IORING_OP_POLL_REMOVE: that one fails with
     * EALREADY while a wake-up of the poll waits to be run (as it does
     * until the next wait with IORING_SETUP_DEFER_TASKRUN). */
    io_uring_prep_cancel64(sqe, (uintptr_t) c | c->read->instance, 0);
    io_uring_sqe_set_data64(sqe, 0);
    cancels++;
    /* Its completion says only that it was done (or found nothing). */
    io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
    return SWS_OK;
}

static void
sws_uring_close_connection(sws_connection_t *c)
{
    if (c->read->active || c->write->active) {
        (void) sws_uring_del_connection(c);
    }
}

/* One completion of a connection's poll. */
static void
sws_uring_poll_done(sws_connection_t *c, int res, unsigned flags)
{
    if (res < 0) {
        if (res == -ECANCELED) {
            return;             /* cancelled: the connection is closed */
        }
        sws_log_error(SWS_LOG_ALERT, c->log, -res, "io_uring poll on %d failed", c->fd);
        /* The handlers' calls find out what is wrong with the socket. */
        sws_event_dispatch(c, EPOLLERR);
        return;
    }
    if (!(flags & IORING_CQE_F_MORE) && (c->read->active || c->write->active)) {
        /* The kernel ended the multishot poll (a full completion queue): a
         * new one, armed at the next submission, reports the state then. */
        (void) sws_uring_poll(c, sws_uring_poll_events(c));
    }
    sws_event_dispatch(c, (uint32_t) res);
}

/* Hands what was queued to the kernel's submission ring, as liburing's
 * io_uring_submit() does before its system call; returns how many wait
 * there. (The loop's wait is one io_uring_enter() of ours: liburing's
 * io_uring_submit_and_wait_timeout() costs 130 instructions more a call.) */
static unsigned
sws_uring_flush(void)
{
    struct io_uring_sq *sq = &ring.sq;
    unsigned            tail = sq->sqe_tail;

    if (sq->sqe_head != tail) {
        sq->sqe_head = tail;
        io_uring_smp_store_release(sq->ktail, tail);
    }
    return tail - io_uring_smp_load_acquire(sq->khead);
}

static sws_int_t
sws_uring_process_events(sws_cycle_t *cycle, sws_msec_t timer)
{
    struct __kernel_timespec       ts;
    struct io_uring_getevents_arg  arg;
    struct io_uring_cqe           *cqe;
    sws_connection_t              *c;
    uint64_t                       user_data;
    unsigned                       head, n, flags, wait;
    int                            rc, res;

    if (timer < 0) {
        ts.tv_sec = SWS_URING_FOREVER_SEC;
        ts.tv_nsec = 0;
    } else {
        ts.tv_sec = timer / 1000;
        ts.tv_nsec = (timer % 1000) * 1000000;
    }
    /* Submit what this iteration queued and wait for a completion (none
     * when one is there already), in one system call. */
    wait = 1 + sws_min(cancels, ring.cq.ring_entries / 2);
    cancels = 0;
    arg.sigmask = (uintptr_t) &sws_wait_sigmask;
    arg.sigmask_sz = _NSIG / 8;
    arg.pad = 0;
    arg.ts = (uintptr_t) &ts;
    rc = io_uring_enter2((unsigned) ring.enter_ring_fd, sws_uring_flush(), wait,
                         IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG | enter_flags,
                         (sigset_t *) &arg, sizeof(arg));
    if (sws_worker_stat != NULL) {
        sws_event_woke_ns = sws_worker_ns();
    }

    sws_time_update();

    /* -ETIME: the timer's time; -EBUSY, -EAGAIN: the completion queue is
     * full (what it holds is taken below). */
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, -rc, "io_uring_enter() failed");
        return SWS_ERROR;
    }

    /* Each completion is taken off the ring before its handlers run, so
     * that the ring has room for what they cause. At most a ring's worth:
     * the timers get their turn. */
    for (n = 0; n < ring.cq.ring_entries; n++) {
        head = *ring.cq.khead;
        if (head == io_uring_smp_load_acquire(ring.cq.ktail)) {
            break;
        }
        cqe = &ring.cq.cqes[head & ring.cq.ring_mask];
        user_data = cqe->user_data;
        res = cqe->res;
        flags = cqe->flags;
        io_uring_smp_store_release(ring.cq.khead, head + 1);

        if (user_data == 0) {
            /* A cancellation that failed (the others say nothing). */
            if (res != -ENOENT) {
                sws_log_error(SWS_LOG_ALERT, cycle->log, -res,
                              "io_uring: cancelling a poll failed");
            }
            continue;
        }
        c = sws_event_cookie_connection((uintptr_t) user_data);
        if (c != NULL) {
            sws_uring_poll_done(c, res, flags);
        }
    }

    return SWS_OK;
}

#else   /* !SWS_HAVE_LIBURING: the configuration refuses "use io_uring" */

sws_int_t
sws_uring_init(sws_cycle_t *cycle, sws_uint_t n)
{
    (void) n;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                  "built without liburing: using epoll instead of io_uring");
    return SWS_DECLINED;
}

#endif
