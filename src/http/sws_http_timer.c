/*
 * A timer for a module's request (sws_http_set_timer): a module that waits
 * for something other than I/O (a cache waiting for another request's
 * fill, a delay) gets called back after a time. One per request, in the
 * request's pool; the pool's end takes it out of the timer tree, so a
 * request that ends first is never called back.
 */
#include "sws_http_core.h"
#include "sws_event.h"

typedef struct {
    sws_event_t                ev;
    sws_http_request_t        *r;
    sws_http_event_handler_pt  handler;
} sws_http_timer_t;

static void
sws_http_timer_handler(sws_event_t *ev)
{
    sws_http_timer_t *t = ev->data;

    ev->timedout = 0;
    t->handler(t->r);
}

static void
sws_http_timer_cleanup(void *data)
{
    sws_http_timer_t *t = data;

    sws_del_timer(&t->ev);
}

sws_int_t
sws_http_set_timer(sws_http_request_t *r, sws_msec_t ms, sws_http_event_handler_pt handler)
{
    sws_http_timer_t *t = r->timer;

    if (t == NULL) {
        if (handler == NULL) {
            return SWS_OK;
        }
        t = sws_pcalloc(r->pool, sizeof(sws_http_timer_t));
        if (t == NULL || sws_pool_cleanup_add(r->pool, sws_http_timer_cleanup, t) != SWS_OK) {
            return SWS_ERROR;
        }
        t->ev.data = t;
        t->ev.handler = sws_http_timer_handler;
        t->r = r;
        r->timer = t;
    }
    sws_del_timer(&t->ev);
    t->handler = handler;
    if (handler) {
        sws_add_timer(&t->ev, ms > 0 ? ms : 0);
    }
    return SWS_OK;
}
