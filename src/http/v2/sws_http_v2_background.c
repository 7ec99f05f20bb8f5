/*
 * Requests that outlive their stream (r->background: a cache update that
 * runs after the client got the stale entry). When such a stream closes,
 * for the protocol it is over (END_STREAM sent, the slot free under
 * SETTINGS_MAX_CONCURRENT_STREAMS, logged, nothing more written), but its
 * request, its pool and its upstream go on until the request is finalized:
 * the stream waits in h2c->background meanwhile.
 *
 * The request refers to the connection (its log, addresses, session), so
 * the connection's memory stays while one waits: closing the connection
 * then ends the client side only (socket shut down, no more events) and
 * the last background request to end closes it for good. The wait is
 * bounded by the update's own timeouts, and a worker's graceful exit
 * waits for it as for any connection (worker_shutdown_timeout included).
 */
#include <sys/socket.h>
#include "sws_http_v2.h"
#include "sws_ssl.h"

static void sws_http_v2_background_free(sws_event_t *ev);
static void sws_http_v2_gone_handler(sws_event_t *ev);

void
sws_http_v2_background_keep(sws_http_v2_stream_t *st)
{
    sws_http_v2_conn_t *h2c = st->h2c;

    st->background = 1;
    /* st->rev becomes the end of the request: the pool is freed from the
     * event loop, outside the finalizing caller's frames */
    st->rev.handler = sws_http_v2_background_free;
    sws_queue_insert_tail(&h2c->background, &st->queue);
}

void
sws_http_v2_background_done(sws_http_v2_stream_t *st)
{
    sws_post_event(&st->rev);
}

static void
sws_http_v2_background_free(sws_event_t *ev)
{
    sws_http_v2_stream_t *st = ev->data;
    sws_http_v2_conn_t   *h2c = st->h2c;

    sws_queue_remove(&st->queue);
    sws_pool_destroy(st->pool);         /* st lives there too */
    if (h2c->gone && sws_queue_empty(&h2c->background)) {
        sws_http_close_connection(h2c->connection);
    }
}

int
sws_http_v2_background_wait(sws_http_v2_conn_t *h2c)
{
    sws_connection_t *c = h2c->connection;

    if (sws_queue_empty(&h2c->background)) {
        return 0;
    }
    if (h2c->gone) {
        return 1;
    }
    h2c->gone = 1;
    sws_log_error(SWS_LOG_INFO, c->log, 0, "http2 connection closed while "
                  "background requests run: they go on");
    sws_del_timer(c->read);
    sws_del_timer(c->write);
    sws_delete_posted_event(c->read);
    sws_delete_posted_event(c->write);
    sws_reusable_connection(c, 0);
    c->shutdown = NULL;
    c->read->handler = sws_http_v2_gone_handler;
    c->write->handler = sws_http_v2_gone_handler;
    if (c->ssl) {
        sws_ssl_close(c);
    }
    (void) sws_epoll_del_connection(c);
    (void) shutdown(c->fd, SHUT_RDWR);   /* the client sees the end now */
    return 1;
}

/* A connection that is gone for its client: nothing to do. */
static void
sws_http_v2_gone_handler(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;

    ev->timedout = 0;
    c->close = 0;
}
