/*
 * A phase handler that must wait (limit_req's delay) sleeps on a timer:
 * the request keeps its place in the phase engine and runs again from the
 * same handler when the time is up. The timer belongs to the request's
 * pool, whose cleanup removes it, so a request that ends meanwhile (an
 * HTTP/2 stream reset, the connection closed) leaves no timer behind.
 */
#include "sws_http_core.h"

static void
sws_http_sleep_cleanup(void *data)
{
    sws_event_t *ev = data;

    if (ev->timer_set) {
        sws_del_timer(ev);
    }
}

static void
sws_http_sleep_handler(sws_event_t *ev)
{
    sws_http_request_t *r = ev->data;

    ev->timedout = 0;
    if (r->done) {
        return;
    }
    if (r->proto->aborted(r)) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client closed the connection while "
                      "the request was delayed");
        sws_http_finalize(r, SWS_HTTP_CLIENT_CLOSED_REQUEST);
        return;
    }
    sws_http_core_run_phases(r);
}

sws_int_t
sws_http_sleep(sws_http_request_t *r, sws_msec_t ms)
{
    sws_event_t *ev = r->sleep_event;

    if (ev == NULL) {
        ev = sws_pcalloc(r->pool, sizeof(sws_event_t));
        if (ev == NULL || sws_pool_cleanup_add(r->pool, sws_http_sleep_cleanup, ev) != SWS_OK) {
            return SWS_ERROR;
        }
        ev->data = r;
        ev->handler = sws_http_sleep_handler;
        r->sleep_event = ev;
    }
    sws_add_timer(ev, ms > 0 ? ms : 1);
    return SWS_OK;
}
