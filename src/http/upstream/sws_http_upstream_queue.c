/*
 * Waiting for a connection (`queue N [timeout=T]` with `server ...
 * max_conns=M`): when every server a request could use has M connections
 * of this worker, in use or idle, the request waits in its group's queue,
 * oldest first, until an attempt on one of the servers ends; it then
 * chooses a server again (and takes the connection just kept, or opens
 * one). A server that serves one request per connection at a time, as a
 * PHP-FPM child does, accepts only as many connections as it has
 * children: the others wait in its listen queue behind kept connections
 * that keep being reused, without a bound (seconds were measured). Here
 * the wait is bounded and in order, and every connection opened is served.
 *
 * A wake is an event posted to the waiter, not a call: the attempt that
 * ended has not put its connection back in the keep-alive pool yet. Until
 * the waiter runs, new requests queue behind it (us->wakes), so that they
 * cannot take the room it was woken for.
 */
#include "sws_http_upstream.h"

static void sws_ups_queue_handler(sws_event_t *ev);

int
sws_ups_queue_behind(sws_http_upstream_t *u)
{
    sws_http_upstream_srv_t *us = u->us;

    return us->queue_max && !u->woken && (us->nwaiting || us->wakes);
}

sws_int_t
sws_ups_queue_wait(sws_http_upstream_t *u, int head)
{
    sws_http_upstream_srv_t *us = u->us;

    if (us->queue_max == 0 || us->nwaiting >= us->queue_max) {
        return SWS_DECLINED;
    }
    if (head) {
        sws_queue_insert_head(&us->waiters, &u->wait_link);
    } else {
        sws_queue_insert_tail(&us->waiters, &u->wait_link);
    }
    us->nwaiting++;
    u->waiting = 1;
    u->wait_ev.data = u;
    u->wait_ev.handler = sws_ups_queue_handler;
    if (!u->wait_ev.timer_set) {
        /* From the first wait: a request woken in vain keeps its time. */
        sws_add_timer(&u->wait_ev, us->queue_timeout);
    }
    return SWS_OK;
}

void
sws_ups_queue_wake(sws_http_upstream_srv_t *us)
{
    sws_queue_t         *q;
    sws_http_upstream_t *u;

    if (us->nwaiting == 0) {
        return;
    }
    q = sws_queue_head(&us->waiters);
    sws_queue_remove(q);
    us->nwaiting--;
    us->wakes++;
    u = sws_queue_data(q, sws_http_upstream_t, wait_link);
    u->waiting = 0;
    sws_post_event(&u->wait_ev);
}

void
sws_ups_queue_leave(sws_http_upstream_t *u)
{
    sws_http_upstream_srv_t *us = u->us;

    if (u->waiting) {
        sws_queue_remove(&u->wait_link);
        us->nwaiting--;
        u->waiting = 0;
    }
    if (u->wait_ev.posted) {
        /* Woken, gone before it ran: the room goes to the next one. */
        sws_delete_posted_event(&u->wait_ev);
        us->wakes--;
        sws_ups_queue_wake(us);
    }
    if (u->wait_ev.timer_set) {
        sws_del_timer(&u->wait_ev);
    }
}

static void
sws_ups_queue_handler(sws_event_t *ev)
{
    sws_http_upstream_t *u = ev->data;
    sws_http_request_t  *r = u->r;

    if (ev->timedout) {
        ev->timedout = 0;
        sws_ups_queue_leave(u);
        sws_log_error(SWS_LOG_ERR, r->log, 0, "no connection to upstream \"%.*s\" within "
                      "its queue timeout for \"%.*s\"", (int) u->us->name.len,
                      u->us->name.data, (int) sws_http_request_line(r)->len,
                      sws_http_request_line(r)->data);
        sws_ups_finalize(u, SWS_HTTP_BAD_GATEWAY);
        return;
    }
    u->us->wakes--;
    u->woken = 1;
    sws_ups_connect_peer(u);
    u->woken = 0;
}
