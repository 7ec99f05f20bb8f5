/* The worker's connection table: preallocated connections and events, a
 * free list, and the queue of idle keep-alive connections that may be
 * closed when the table runs out. */
#include <unistd.h>
#include "sws_ssl.h"
#include "sws_conn_stats.h"

static sws_connection_t *connections;
static sws_event_t      *read_events, *write_events;
static sws_connection_t *free_connections;
static sws_uint_t        connection_n, free_connection_n;
static sws_uint_t        unused_connections;   /* never handed out: [this, n) */
static sws_queue_t       reusable_queue;
static uint64_t          connection_counter;

sws_int_t
sws_connections_init(sws_cycle_t *cycle, sws_uint_t n)
{
    connections = sws_calloc(sizeof(sws_connection_t) * n, cycle->log);
    read_events = sws_calloc(sizeof(sws_event_t) * n, cycle->log);
    write_events = sws_calloc(sizeof(sws_event_t) * n, cycle->log);
    if (connections == NULL || read_events == NULL || write_events == NULL) {
        return SWS_ERROR;
    }
    /* calloc'ed tables of this size are fresh zero pages: they cost memory
     * only once touched, so connections are set up on first use. */
    free_connections = NULL;
    unused_connections = 0;
    connection_n = n;
    free_connection_n = n;
    sws_queue_init(&reusable_queue);
    return SWS_OK;
}

sws_connection_t *
sws_get_connection(int fd, sws_log_t *log)
{
    sws_connection_t *c;
    sws_event_t      *rev, *wev;
    unsigned          instance;

    c = free_connections;
    if (c == NULL && unused_connections < connection_n) {
        c = &connections[unused_connections];
        c->read = &read_events[unused_connections];
        c->write = &write_events[unused_connections];
        c->data = NULL;
        unused_connections++;
        free_connections = c;
    }
    if (c == NULL) {
        sws_close_idle_connections(0);
        c = free_connections;
    }
    if (c == NULL) {
        sws_log_error(SWS_LOG_ALERT, log, 0,
                      "%lu worker_connections are not enough",
                      (unsigned long) connection_n);
        return NULL;
    }
    free_connections = c->data;
    free_connection_n--;

    rev = c->read;
    wev = c->write;
    instance = rev->instance;

    sws_memzero(c, sizeof(sws_connection_t));
    sws_memzero(rev, sizeof(sws_event_t));
    sws_memzero(wev, sizeof(sws_event_t));

    c->read = rev;
    c->write = wev;
    c->fd = fd;
    c->log = log;
    c->number = ++connection_counter;
    c->recv = sws_unix_recv;
    c->send_chain = sws_unix_send_chain;

    rev->instance = !instance;
    wev->instance = !instance;
    rev->data = c;
    wev->data = c;
    wev->write = 1;
    sws_heap_trim_note();
    return c;
}

void
sws_free_connection(sws_connection_t *c)
{
    c->data = free_connections;
    free_connections = c;
    free_connection_n++;
    sws_heap_trim_note();
}

void
sws_close_connection(sws_connection_t *c)
{
    int fd, held;

    if (c->fd == -1) {
        return;
    }
    if (c->ssl) {
        sws_ssl_close(c);
    }
    sws_connection_close_fds(c);
    sws_del_timer(c->read);
    sws_del_timer(c->write);
    sws_delete_posted_event(c->read);
    sws_delete_posted_event(c->write);
    sws_reusable_connection(c, 0);
    if (c->counted) {
        sws_conn_stat(active, -1);
        c->counted = 0;
    }

    held = sws_event_actions.close_connection != NULL
           && sws_event_actions.close_connection(c) == SWS_AGAIN;
    c->read->closed = 1;
    c->write->closed = 1;
    c->read->active = 0;
    c->write->active = 0;
    c->destroyed = 1;

    fd = c->fd;
    c->fd = -1;
    if (held) {
        /* The method still sends what was written: it closes the fd and
         * frees the connection (counted as active until then) after. */
        return;
    }
    sws_free_connection(c);
    if (close(fd) == -1) {
        sws_log_error(SWS_LOG_ALERT, c->log, errno, "close() socket %d failed", fd);
    }
}

int
sws_connection_peer_alive(sws_connection_t *c)
{
    u_char    byte;
    ssize_t   n;
    sws_int_t rc;

    if (c->read->eof || c->read->error || c->error) {
        return 0;
    }
    if (sws_event_actions.peer_alive != NULL) {
        rc = sws_event_actions.peer_alive(c);
        if (rc != SWS_DECLINED) {
            return rc == 1;
        }
    }
    /* A peek: what it finds stays for the next read. */
    n = recv(c->fd, &byte, 1, MSG_PEEK);
    return n > 0 || (n == -1 && (errno == EAGAIN || errno == EINTR));
}

void
sws_reusable_connection(sws_connection_t *c, int reusable)
{
    if (c->reusable) {
        sws_queue_remove(&c->queue);
    }
    c->reusable = reusable ? 1 : 0;
    if (reusable) {
        sws_queue_insert_head(&reusable_queue, &c->queue);
    }
}

/* Close idle keep-alive connections, oldest first: their read handler sees
 * `close` and ends them. A batch when connections run out; at graceful
 * shutdown all of them but those whose protocol ends them itself (a client
 * may be sending its next request on an idle connection right now: closed
 * under it, that request would be lost). */
void
sws_close_idle_connections(int all)
{
    sws_uint_t        i;
    sws_queue_t      *q;
    sws_connection_t *c;

    if (!all) {
        for (i = 0; i < 32 && !sws_queue_empty(&reusable_queue); i++) {
            q = sws_queue_last(&reusable_queue);
            c = sws_queue_data(q, sws_connection_t, queue);
            sws_reusable_connection(c, 0);
            c->close = 1;
            c->read->handler(c->read);
        }
        return;
    }
    /* A handler may close other connections of the queue (an upstream's
     * with its client's): look from the tail again after each. */
    for ( ;; ) {
        for (q = sws_queue_last(&reusable_queue);
             q != sws_queue_sentinel(&reusable_queue)
             && sws_queue_data(q, sws_connection_t, queue)->shutdown != NULL;
             q = sws_queue_prev(q))
        { /* skip */ }
        if (q == sws_queue_sentinel(&reusable_queue)) {
            return;
        }
        c = sws_queue_data(q, sws_connection_t, queue);
        sws_reusable_connection(c, 0);
        c->close = 1;
        c->read->handler(c->read);
    }
}

void
sws_shutdown_connections(void)
{
    sws_uint_t        i;
    sws_connection_t *c;

    /* The table, not the reusable queue: busy connections take part too
     * (HTTP/2 says GOAWAY on them at once). A hook may close connections
     * or open new ones (an upstream's): neither disturbs the walk. */
    for (i = 0; i < unused_connections; i++) {
        c = &connections[i];
        if (c->fd != -1 && !c->destroyed && c->shutdown != NULL) {
            c->shutdown(c);
        }
    }
    sws_close_idle_connections(1);
}

sws_uint_t
sws_active_connections(void)
{
    return connection_n - free_connection_n;
}

sws_uint_t
sws_connections_free(void)
{
    return free_connection_n;
}
