/* What the event methods share: calling a connection's handlers for one
 * readiness report. epoll and io_uring's poll both report poll(2) bits
 * (EPOLLIN == POLLIN ...). */
#ifndef SWS_EVENT_DISPATCH_H
#define SWS_EVENT_DISPATCH_H

#include <sys/epoll.h>
#include "sws_event.h"

/* c|instance as the method's cookie: a report for a connection closed (and
 * maybe reused, which flips instance) earlier in the same batch is stale. */
static inline sws_connection_t *
sws_event_cookie_connection(uintptr_t cookie)
{
    sws_connection_t *c = (sws_connection_t *) (cookie & ~(uintptr_t) 1);

    if (c == NULL || c->fd == -1 || c->read->instance != (cookie & 1)) {
        return NULL;
    }
    return c;
}

static inline void
sws_event_dispatch(sws_connection_t *c, uint32_t revents)
{
    sws_event_t *rev = c->read, *wev = c->write;
    unsigned     instance = rev->instance;

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
            return;
        }
    }

    if ((revents & EPOLLOUT) && wev->active) {
        wev->ready = 1;
        wev->handler(wev);
    }
}

#endif
