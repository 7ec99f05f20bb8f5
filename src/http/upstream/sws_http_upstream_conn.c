/*
 * Connections to upstream servers: non-blocking connect on the worker's
 * event loop, and the per-worker pools of idle keep-alive connections
 * (one per upstream group, newest first, no lock: each worker has its own).
 * An idle connection is closed when the server closes it or sends anything,
 * after keepalive_timeout, and when the worker needs the connection slot.
 * Also a small cache of response buffers, so that a request does not
 * malloc its buffers.
 */
#include <stdlib.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sws_http_upstream.h"

sws_int_t
sws_ups_connect(sws_http_upstream_peer_t *peer, const sws_ups_socket_opts_t *opts,
    sws_log_t *log, sws_connection_t **cp)
{
    sws_connection_t *c;
    int               fd, rc, err, on = 1;

    fd = socket(peer->sockaddr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "socket() for upstream %.*s failed",
                      (int) peer->name.len, peer->name.data);
        return SWS_BUSY;
    }
    c = sws_get_connection(fd, log);
    if (c == NULL) {
        close(fd);
        return SWS_BUSY;
    }
    c->unix_socket = peer->sockaddr.ss_family == AF_UNIX;
    c->addr_text = peer->name;
    if (c->unix_socket && opts != NULL && opts->recv_fds) {
        /* Before the event method sees it: this one is read with
         * recvmsg(), never on io_uring's ring (see sws_ups_ka_get). */
        c->recv = sws_unix_recv_fds;
    }
    if (!c->unix_socket) {
        /* Requests are written whole: Nagle would only delay them. */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
        if (sws_ups_socket_apply(fd, opts, log) != SWS_OK) {
            sws_close_connection(c);
            return SWS_BUSY;
        }
    }

    rc = connect(fd, (struct sockaddr *) &peer->sockaddr, peer->socklen);
    err = rc == -1 ? errno : 0;
    if (rc == -1 && err != EINPROGRESS) {
        sws_log_error(err == ECONNREFUSED || err == ENOENT || err == EAGAIN ? SWS_LOG_ERR
                                                                            : SWS_LOG_CRIT,
                      log, err, "connect() to %.*s failed", (int) peer->name.len,
                      peer->name.data);
        sws_close_connection(c);
        return SWS_ERROR;
    }
    if (sws_event_add_connection(c) != SWS_OK) {
        sws_close_connection(c);
        return SWS_BUSY;
    }
    c->write->ready = rc == 0;
    *cp = c;
    return rc == 0 ? SWS_OK : SWS_AGAIN;
}

sws_int_t
sws_ups_connect_test(sws_connection_t *c, sws_http_upstream_peer_t *peer)
{
    int        err = 0;
    socklen_t  len = sizeof(err);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1) {
        err = errno;
    }
    if (err) {
        sws_log_error(SWS_LOG_ERR, c->log, err, "connect() to %.*s failed",
                      (int) peer->name.len, peer->name.data);
        return SWS_ERROR;
    }
    return SWS_OK;
}

void
sws_ups_close_conn(sws_connection_t *c)
{
    sws_pool_t *pool = c->pool;      /* TLS state lives there */

    sws_close_connection(c);
    if (pool) {
        sws_pool_destroy(pool);
    }
}

/* ---- keep-alive pools ---- */

/* The worker's count of peer's idle connections, and the workers' sum in
 * its shared record (the admin module's "idle"). */
static void
sws_ups_ka_idle(sws_http_upstream_peer_t *peer, int n)
{
    peer->idle += n;
    if (peer->sh) {
        sws_ups_atomic_add(&peer->sh->idle, (uint64_t) (int64_t) n);
    }
}

/* Close an idle connection. Closed by our choice (the pool is full, its
 * time is up, the worker needs the slot; not when the worker exits), it
 * is reset rather than shut down: nothing is in flight on it, and the TIME_WAIT a close would leave
 * on our side holds an ephemeral port of the server's address for a
 * minute. A proxy opening and evicting thousands of connections a second
 * otherwise runs the port range down, and connect() then spends ever
 * longer looking for a free port (stalls of tens of ms were measured). */
static void
sws_ups_ka_close(sws_http_upstream_ka_t *item, int reset)
{
    sws_connection_t        *c = item->c;
    sws_http_upstream_srv_t *us = item->us;
    struct linger            abort_close = { 1, 0 };

    if (reset && !c->unix_socket) {
        (void) setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close));
    }
    sws_queue_remove(&item->queue);
    sws_queue_insert_head(&us->ka_free, &item->queue);
    item->c = NULL;
    sws_ups_ka_idle(item->peer, -1);
    sws_ups_close_conn(c);
}

/* peer is at its max_conns with an idle connection that the request at
 * hand cannot use: the least recently used of them goes, making room. */
void
sws_ups_ka_drop_one(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer)
{
    sws_queue_t            *q;
    sws_http_upstream_ka_t *item;

    for (q = sws_queue_last(&us->ka_cache); q != sws_queue_sentinel(&us->ka_cache);
         q = sws_queue_prev(q))
    {
        item = sws_queue_data(q, sws_http_upstream_ka_t, queue);
        if (item->peer == peer) {
            sws_ups_ka_close(item, 1);
            return;
        }
    }
}

/* A run-time slot's server changed or went: its idle connections go too. */
void
sws_ups_ka_drop_peer(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer)
{
    sws_queue_t            *q, *next;
    sws_http_upstream_ka_t *item;

    if (us->ka_items == NULL) {
        return;
    }
    for (q = sws_queue_head(&us->ka_cache); q != sws_queue_sentinel(&us->ka_cache); q = next) {
        next = sws_queue_next(q);
        item = sws_queue_data(q, sws_http_upstream_ka_t, queue);
        if (item->peer == peer) {
            sws_ups_ka_close(item, 1);
        }
    }
}

/* An idle connection: whatever happens on it (the server closes it, sends
 * something unasked, the timeout, the worker needs the slot) ends it. */
static void
sws_ups_ka_handler(sws_event_t *ev)
{
    sws_connection_t        *c = ev->data;
    sws_http_upstream_ka_t  *item = c->data;
    u_char                   byte;
    ssize_t                  n;

    if (ev->write) {
        return;
    }
    if (c->close || ev->timedout) {
        /* A worker that exits closes its idle connections as nginx does,
         * with a FIN: the server sees their end, not an error (Node.js
         * makes an Error with its stack of each reset, uvicorn an
         * exception; the bench shares one application between the
         * servers of a round). The ports' TIME_WAIT does not matter then. */
        sws_ups_ka_close(item, !sws_exiting);
        return;
    }
    if (c->ssl == NULL) {
        /* A read, not a peek: what the server sent unasked ends the
         * connection anyway, it may be in the event method's buffer
         * rather than in the socket (io_uring's reads on the ring), and
         * a read that finds nothing has the method wait for what comes
         * next (io_uring queues its recv; a peek would leave the
         * connection deaf to the next response). */
        n = c->recv(c, &byte, 1);
        if (n == SWS_AGAIN) {
            return;                      /* nothing after all */
        }
    } else {
        n = recv(c->fd, &byte, 1, MSG_PEEK);
        if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
            ev->ready = 0;
            return;                      /* nothing after all */
        }
    }
    sws_ups_ka_close(item, 0);          /* the server's doing: closed as usual */
}

/* A plain unix-socket connection the event method reads (io_uring's
 * reads on the ring): the bytes may be in the ring's buffer, so a
 * request that reads passed descriptors with recvmsg() cannot take it
 * (one of another location of the same group: its connections are
 * made to read with recvmsg() from the start, sws_ups_connect). */
static int
sws_ups_ka_reads_on_ring(sws_connection_t *c)
{
    return c->unix_socket && c->ssl == NULL && c->recv != sws_unix_recv
           && c->recv != sws_unix_recv_fds;
}

sws_connection_t *
sws_ups_ka_get(sws_http_upstream_t *u, sws_http_upstream_peer_t *peer)
{
    sws_http_upstream_srv_t *us = u->us;
    sws_queue_t            *q;
    sws_http_upstream_ka_t *item;
    sws_connection_t       *c;

    if (us->ka_items == NULL || u->conf->bind == 1) {
        return NULL;                  /* proxy_bind: see sws_ups_ka_put */
    }
    for (q = sws_queue_head(&us->ka_cache); q != sws_queue_sentinel(&us->ka_cache);
         q = sws_queue_next(q))
    {
        item = sws_queue_data(q, sws_http_upstream_ka_t, queue);
        if (item->peer != peer
            || (item->c->ssl ? !u->ssl || !sws_ups_ssl_match(item->c, u) : u->ssl)
            || (u->conf->recv_fds && sws_ups_ka_reads_on_ring(item->c)))
        {
            continue;
        }
        c = item->c;
        sws_queue_remove(&item->queue);
        sws_queue_insert_head(&us->ka_free, &item->queue);
        item->c = NULL;
        sws_ups_ka_idle(peer, -1);
        /* The idle timer stays: sending the request re-arms it as the read
         * timeout (usually the same duration: no tree operation at all). */
        sws_reusable_connection(c, 0);
        c->idle = 0;
        c->data = NULL;
        return c;
    }
    return NULL;
}

void
sws_ups_ka_put(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer,
    sws_connection_t *c)
{
    sws_queue_t            *q;
    sws_http_upstream_ka_t *item;

    sws_connection_close_fds(c);       /* passed and not taken: no one will */
    /* A connection from a proxy_bind address is not kept: the pool is the
     * group's, and another location's request would go from its address. */
    if (us->ka_items == NULL || sws_exiting || c->close || c->read->eof || c->read->error
        || c->write->error || c->requests >= us->keepalive_requests
        || (c->data && ((sws_http_upstream_t *) c->data)->conf->bind == 1))
    {
        sws_ups_close_conn(c);
        return;
    }
    if (sws_queue_empty(&us->ka_free)) {
        /* Full: the least recently used one goes. */
        q = sws_queue_last(&us->ka_cache);
        item = sws_queue_data(q, sws_http_upstream_ka_t, queue);
        sws_ups_ka_close(item, 1);
    }
    q = sws_queue_head(&us->ka_free);
    item = sws_queue_data(q, sws_http_upstream_ka_t, queue);
    sws_queue_remove(q);
    sws_queue_insert_head(&us->ka_cache, q);
    item->c = c;
    item->peer = peer;
    sws_ups_ka_idle(peer, 1);

    sws_del_timer(c->write);
    c->data = item;
    c->read->handler = sws_ups_ka_handler;
    c->write->handler = sws_ups_ka_handler;
    c->idle = 1;
    sws_reusable_connection(c, 1);
    sws_add_timer(c->read, us->keepalive_timeout);   /* re-arms the read timeout */
    if (c->read->ready) {
        sws_post_event(c->read);      /* something is there already? */
    }
}

sws_int_t
sws_ups_ka_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us)
{
    sws_uint_t i;

    sws_queue_init(&us->ka_cache);
    sws_queue_init(&us->ka_free);
    us->ka_items = NULL;
    if (us->keepalive == 0) {
        return SWS_OK;
    }
    us->ka_items = sws_calloc(sizeof(sws_http_upstream_ka_t) * us->keepalive, cycle->log);
    if (us->ka_items == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < us->keepalive; i++) {
        us->ka_items[i].us = us;
        sws_queue_insert_tail(&us->ka_free, &us->ka_items[i].queue);
    }
    return SWS_OK;
}

/* ---- response buffers ---- */

#define SWS_UPS_BUF_CLASSES  4
#define SWS_UPS_BUF_KEEP     64       /* per size */

typedef struct {
    size_t       size;
    void        *free;                /* the next one is in the first bytes */
    sws_uint_t   n;
} sws_ups_buf_class_t;

static sws_ups_buf_class_t sws_ups_bufs[SWS_UPS_BUF_CLASSES];

u_char *
sws_ups_buf_alloc(size_t size, sws_log_t *log)
{
    sws_uint_t  i;
    void       *p;

    for (i = 0; i < SWS_UPS_BUF_CLASSES; i++) {
        if (sws_ups_bufs[i].size == size && sws_ups_bufs[i].free) {
            p = sws_ups_bufs[i].free;
            sws_ups_bufs[i].free = *(void **) p;
            sws_ups_bufs[i].n--;
            return p;
        }
    }
    return sws_alloc(sws_max(size, sizeof(void *)), log);
}

void
sws_ups_buf_free(u_char *p, size_t size)
{
    sws_uint_t i;

    if (p == NULL) {
        return;
    }
    for (i = 0; i < SWS_UPS_BUF_CLASSES; i++) {
        if (sws_ups_bufs[i].size == size
            || (sws_ups_bufs[i].size == 0 && (sws_ups_bufs[i].size = size)))
        {
            if (sws_ups_bufs[i].n < SWS_UPS_BUF_KEEP) {
                *(void **) p = sws_ups_bufs[i].free;
                sws_ups_bufs[i].free = p;
                sws_ups_bufs[i].n++;
                return;
            }
            break;
        }
    }
    free(p);
}
