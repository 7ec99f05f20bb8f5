/* The epoll method. Connections: edge-triggered, both directions, added
 * once. Listening sockets: level-triggered with EPOLLEXCLUSIVE so that one
 * worker wakes per new connection when workers share a socket.
 *
 * A Unix socket reports room each time its peer reads (TCP only after a
 * send found none): an application that reads the request it was sent
 * woke the worker once more per request, with nothing to do. A plain
 * Unix-socket connection whose sends are ours (sws_epoll_send_chain) and
 * that reports room while no send waits for it is registered without
 * EPOLLOUT from then on (one epoll_ctl() a connection); a send that finds
 * the socket full puts it back (EPOLL_CTL_MOD looks at the socket: room
 * that came since is reported), and the next report of room that nobody
 * waited for takes it off again. */
#include <sys/epoll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "sws_event.h"
#include "sws_event_dispatch.h"
#include "sws_events_module.h"
#include "sws_process.h"

static int                  ep = -1;
static struct epoll_event  *event_list;
static sws_uint_t           nevents;
static long                 pause_ns;     /* wait_pause; 0: off */
static int                  busy;         /* the last wait handed events over */

static sws_int_t sws_epoll_add(sws_connection_t *c);
static sws_int_t sws_epoll_add_listening(sws_connection_t *c, int exclusive);
static sws_int_t sws_epoll_del(sws_connection_t *c);
static sws_int_t sws_epoll_process_events(sws_cycle_t *cycle, sws_msec_t timer);
static sws_chain_t *sws_epoll_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit);
static void      sws_epoll_done(void);

static const sws_event_actions_t sws_epoll_actions = {
    "epoll",
    0,                          /* listening sockets: level-triggered */
    sws_epoll_add,
    sws_epoll_add_listening,
    sws_epoll_del,
    NULL,                       /* close() removes the fd from epoll */
    NULL,                       /* sends are done when send() returns */
    sws_epoll_process_events,
    sws_epoll_done,
    NULL                        /* what the peer sent is in the socket */
};

sws_int_t
sws_epoll_init(sws_cycle_t *cycle, sws_uint_t n)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep == -1) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "epoll_create1() failed");
        return SWS_ERROR;
    }
    nevents = n;
    {
        /* (a cycle without configuration, as the unit tests make: no pause) */
        sws_events_conf_t *ecf = cycle->conf_ctx ? sws_events_conf(cycle) : NULL;

        pause_ns = ecf ? (long) ecf->wait_pause_us * 1000 : 0;
    }
    event_list = sws_alloc(sizeof(struct epoll_event) * n, cycle->log);
    if (event_list == NULL) {
        return SWS_ERROR;
    }
    sws_event_actions = sws_epoll_actions;
    return SWS_OK;
}

static void
sws_epoll_done(void)
{
    if (ep != -1) {
        close(ep);
        ep = -1;
    }
    free(event_list);
    event_list = NULL;
}

static sws_int_t
sws_epoll_add(sws_connection_t *c)
{
    struct epoll_event ee;

    ee.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP;
    ee.data.ptr = (void *) ((uintptr_t) c | c->read->instance);
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ee) == -1) {
        sws_log_error(SWS_LOG_ALERT, c->log, errno, "epoll_ctl(ADD, %d) failed", c->fd);
        return SWS_ERROR;
    }
    c->read->active = 1;
    c->write->active = 1;
    /* (not a TLS listener's: OpenSSL's sends come after the first read) */
    if (c->unix_socket && c->send_chain == sws_unix_send_chain
        && (c->listening == NULL || !c->listening->ssl))
    {
        c->send_chain = sws_epoll_send_chain;
    }
    return SWS_OK;
}

/* Room asked for (EPOLLOUT) or not: EPOLL_CTL_MOD of c's registration. */
static void
sws_epoll_room(sws_connection_t *c, unsigned quiet)
{
    struct epoll_event ee;

    ee.events = EPOLLIN | (quiet ? 0 : EPOLLOUT) | EPOLLET | EPOLLRDHUP;
    ee.data.ptr = (void *) ((uintptr_t) c | c->read->instance);
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ee) == -1) {
        sws_log_error(SWS_LOG_ALERT, c->log, errno, "epoll_ctl(MOD, %d) failed", c->fd);
        return;                 /* as it was */
    }
    c->room_quiet = quiet;
}

/* A plain Unix socket's sends: one that finds no room asks for it. */
static sws_chain_t *
sws_epoll_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    in = sws_unix_send_chain(c, in, limit);
    if (c->room_quiet && !c->write->ready) {
        sws_epoll_room(c, 0);
    }
    return in;
}

static sws_int_t
sws_epoll_add_listening(sws_connection_t *c, int exclusive)
{
    struct epoll_event ee;

    ee.events = EPOLLIN | (exclusive ? EPOLLEXCLUSIVE : 0);
    ee.data.ptr = (void *) ((uintptr_t) c | c->read->instance);
    if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ee) == -1) {
        sws_log_error(SWS_LOG_ALERT, c->log, errno, "epoll_ctl(ADD, %d) failed", c->fd);
        return SWS_ERROR;
    }
    c->read->active = 1;
    return SWS_OK;
}

static sws_int_t
sws_epoll_del(sws_connection_t *c)
{
    struct epoll_event ee;

    /* close() removes the fd from epoll by itself; this is for sockets
     * that stay open (listening sockets at graceful shutdown). */
    ee.events = 0;
    ee.data.ptr = NULL;
    c->read->active = 0;
    c->write->active = 0;
    if (epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, &ee) == -1) {
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* wait_pause: a worker that has just handled events and finds none ready
 * pauses outside epoll before it blocks. A client's write that comes
 * meanwhile finds no waiter to wake (that wake-up is the writer's cost, an
 * IPI to a halted CPU on a VM), and the wait after the pause takes all
 * that came at once: fewer, larger batches when the clients are slower
 * than the worker. Under full load there is always something ready and
 * the worker never pauses; idle, it blocks at once. */
static int
sws_epoll_wait(sws_msec_t timer)
{
    struct timespec ts;
    int             n;

    if (pause_ns != 0 && busy && timer != 0) {
        n = epoll_pwait(ep, event_list, (int) nevents, 0, &sws_wait_sigmask);
        if (n != 0) {
            return n;
        }
        ts.tv_sec = 0;
        ts.tv_nsec = pause_ns;
        if (timer != (sws_msec_t) -1) {
            /* not past the next timer */
            ts.tv_nsec = sws_min(ts.tv_nsec, (long) timer * 1000000);
            timer -= ts.tv_nsec / 1000000;
        }
        (void) clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    }
    return epoll_pwait(ep, event_list, (int) nevents, (int) timer, &sws_wait_sigmask);
}

static sws_int_t
sws_epoll_process_events(sws_cycle_t *cycle, sws_msec_t timer)
{
    int               i, n, err;
    sws_connection_t *c;

    n = sws_epoll_wait(timer);
    err = (n == -1) ? errno : 0;
    busy = n > 0;
    if (sws_worker_stat != NULL) {
        sws_event_woke_ns = sws_worker_ns();
    }

    sws_time_update();

    if (err) {
        if (err == EINTR) {
            return SWS_OK;
        }
        sws_log_error(SWS_LOG_ALERT, cycle->log, err, "epoll_pwait() failed");
        return SWS_ERROR;
    }

    for (i = 0; i < n; i++) {
        c = sws_event_cookie_connection((uintptr_t) event_list[i].data.ptr);
        if (c != NULL) {
            if (sws_unlikely(c->send_chain == sws_epoll_send_chain)
                && (event_list[i].events & EPOLLOUT) && c->write->ready && !c->room_quiet
                && c->ssl == NULL)
            {
                sws_epoll_room(c, 1);       /* room nobody waited for */
            }
            sws_event_dispatch(c, event_list[i].events);
        }
    }

    return SWS_OK;
}
