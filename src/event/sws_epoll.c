/* The epoll backend. Connections: edge-triggered, both directions, added
 * once. Listening sockets: level-triggered with EPOLLEXCLUSIVE so that one
 * worker wakes per new connection when workers share a socket. */
#include <sys/epoll.h>
#include <stdlib.h>
#include <unistd.h>
#include "sws_event.h"
#include "sws_process.h"

static int                  ep = -1;
uint64_t                    sws_epoll_woke_ns;
static struct epoll_event  *event_list;
static sws_uint_t           nevents;

sws_int_t
sws_epoll_init(sws_cycle_t *cycle, sws_uint_t n)
{
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep == -1) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "epoll_create1() failed");
        return SWS_ERROR;
    }
    nevents = n;
    event_list = sws_alloc(sizeof(struct epoll_event) * n, cycle->log);
    return event_list ? SWS_OK : SWS_ERROR;
}

void
sws_epoll_done(void)
{
    if (ep != -1) {
        close(ep);
        ep = -1;
    }
    free(event_list);
    event_list = NULL;
}

sws_int_t
sws_epoll_add_connection(sws_connection_t *c)
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
    return SWS_OK;
}

sws_int_t
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

sws_int_t
sws_epoll_del_connection(sws_connection_t *c)
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

sws_int_t
sws_epoll_process_events(sws_cycle_t *cycle, sws_msec_t timer)
{
    int               i, n, err;
    uintptr_t         instance;
    uint32_t          revents;
    sws_connection_t *c;
    sws_event_t      *rev, *wev;

    n = epoll_pwait(ep, event_list, (int) nevents, (int) timer, &sws_wait_sigmask);
    err = (n == -1) ? errno : 0;
    if (sws_worker_stat != NULL) {
        sws_epoll_woke_ns = sws_worker_ns();
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
        c = event_list[i].data.ptr;
        instance = (uintptr_t) c & 1;
        c = (sws_connection_t *) ((uintptr_t) c & ~(uintptr_t) 1);
        if (c == NULL || c->fd == -1 || c->read->instance != instance) {
            continue;   /* closed (and maybe reused) earlier in this batch */
        }
        revents = event_list[i].events;
        rev = c->read;
        wev = c->write;

        if (revents & (EPOLLERR | EPOLLHUP)) {
            /* Let both handlers see it: the read or write call reports why. */
            revents |= EPOLLIN | EPOLLOUT;
        }

        if ((revents & EPOLLIN) && rev->active) {
            rev->ready = 1;
            if (revents & EPOLLRDHUP) {
                rev->eof = 1;
            }
            rev->handler(rev);
            /* The handler may have closed (and reused) the connection. */
            if (c->fd == -1 || c->read->instance != instance) {
                continue;
            }
        }

        if ((revents & EPOLLOUT) && wev->active) {
            wev->ready = 1;
            wev->handler(wev);
        }
    }

    return SWS_OK;
}
