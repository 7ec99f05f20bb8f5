/*
 * The upstream request driver: the request body (buffered, streamed or
 * dropped), choosing a server and connecting (or taking an idle keep-alive
 * connection), sending the request, the timeouts, the client going away,
 * and ending the request. The response head and the retries are in
 * sws_http_upstream_head.c, the body in sws_http_upstream_response.c,
 * Upgrade tunnels in sws_http_upstream_tunnel.c.
 */
#include "sws_http_upstream.h"

static void sws_ups_send(sws_http_upstream_t *u);
static void sws_ups_check_broken(sws_http_request_t *r);
static void sws_ups_cleanup(void *data);
static void sws_ups_body_read_done(sws_http_request_t *r);
static void sws_ups_body_ready(sws_http_request_t *r);

/* ---- the SDK side ---- */

sws_http_upstream_t *
sws_http_upstream_create(sws_http_request_t *r, const sws_http_upstream_proto_t *proto,
    void *ctx, sws_http_upstream_conf_t *conf)
{
    sws_http_upstream_main_conf_t *umcf;
    sws_http_upstream_t           *u;

    u = sws_pcalloc(r->pool, sizeof(sws_http_upstream_t));
    if (u == NULL) {
        return NULL;
    }
    u->r = r;
    u->proto = proto;
    u->ctx = ctx;
    u->conf = conf;
    u->us = conf->upstream;
    u->buffering = conf->buffering ? 1 : 0;
    u->pending_tail = &u->pending;
    u->busy_tail = &u->busy;
    u->attempts = u->attempts_small;
    u->attempts_max = sws_nelems(u->attempts_small);
    umcf = sws_http_upstream_main();
    u->keep_headers = umcf && umcf->keep_headers;
    r->upstream = u;
    return u;
}

sws_http_upstream_t *sws_http_upstream_get(sws_http_request_t *r) { return r->upstream; }
sws_uint_t sws_http_upstream_body_mode(sws_http_upstream_t *u) { return u->body_mode; }
void sws_http_upstream_set_request_buffering(sws_http_upstream_t *u, int on) { u->buffering_forced = on ? 1 : 0; }
void sws_http_upstream_set_pass_body(sws_http_upstream_t *u, int on) { u->pass_body_off = on ? 0 : 1; }
void sws_http_upstream_set_keepalive(sws_http_upstream_t *u, int on) { u->keepalive = on ? 1 : 0; }
void sws_http_upstream_set_upgrade(sws_http_upstream_t *u) { u->upgrade = 1; }
int sws_http_upstream_can_keepalive(sws_http_upstream_t *u) { return u->us->keepalive > 0; }
void sws_http_upstream_set_body_piece(sws_http_upstream_t *u, size_t max) { u->body_piece = max; }

sws_int_t
sws_http_upstream_set_redirect(sws_http_upstream_t *u, const sws_str_t *uri,
    const sws_str_t *args)
{
    sws_pool_t *pool = u->r->pool;

    u->redirect_uri.data = sws_pnalloc(pool, uri->len + (args ? args->len : 0) + 1);
    if (u->redirect_uri.data == NULL) {
        return SWS_ERROR;
    }
    u->redirect_uri.len = uri->len;
    memcpy(u->redirect_uri.data, uri->data, uri->len);
    u->redirect_args.len = args ? args->len : 0;
    u->redirect_args.data = u->redirect_uri.data + uri->len;
    if (args && args->len) {
        memcpy(u->redirect_args.data, args->data, args->len);
    }
    u->redirect = 1;
    return SWS_OK;
}

const sws_str_t *
sws_http_upstream_peer_name(sws_http_upstream_t *u)
{
    static const sws_str_t none = sws_null_string;
    return u->peer ? &u->peer->name : &none;
}

off_t
sws_http_upstream_body_length(sws_http_upstream_t *u)
{
    switch (u->body_mode) {
    case SWS_UPSTREAM_BODY_BUFFERED:
        return sws_chain_size(sws_http_request_body(u->r));
    case SWS_UPSTREAM_BODY_STREAM:
        return u->r->chunked_in ? -1 : u->r->content_length_n;
    default:
        return 0;
    }
}

sws_chain_t **
sws_http_upstream_body_chain(sws_http_upstream_t *u, sws_chain_t **tail)
{
    sws_http_request_t *r = u->r;
    sws_chain_t        *body, *cl;
    sws_buf_t          *b;

    if (u->body_mode != SWS_UPSTREAM_BODY_BUFFERED) {
        return tail;
    }
    for (body = sws_http_request_body(r); body; body = body->next) {
        /* copies of the buffers: sending moves theirs, and the body
         * stays whole for others ($request_body in the access log) */
        cl = sws_alloc_chain_link(r->pool);
        b = sws_calloc_buf(r->pool);
        if (cl == NULL || b == NULL) {
            return NULL;
        }
        *b = *body->buf;
        cl->buf = b;
        cl->next = NULL;
        *tail = cl;
        tail = &cl->next;
    }
    return tail;
}

/* Is each protocol of an Upgrade value ("websocket", "a/1, b") one the
 * location tunnels? Only the name counts, not the version. */
static int
sws_ups_upgrade_listed(const sws_http_upstream_conf_t *uc, const sws_str_t *v)
{
    static const sws_str_t  websocket = sws_string("websocket");
    const sws_str_t        *allowed = uc->upgrade_list ? uc->upgrade_list->elts : &websocket;
    sws_uint_t              i, n = uc->upgrade_list ? uc->upgrade_list->nelts : 1;
    u_char                 *p = v->data, *last = v->data + v->len, *s, *e;
    int                     any = 0;

    while (p < last) {
        while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        if (p == last) {
            break;
        }
        for (s = p; p < last && *p != ','; p++) { /* the element */ }
        for (e = s; e < p && *e != '/' && *e != ' ' && *e != '\t'; e++) { /* its name */ }
        for (i = 0; i < n; i++) {
            if ((size_t) (e - s) == allowed[i].len
                && sws_strncasecmp(s, allowed[i].data, allowed[i].len) == 0)
            {
                break;
            }
        }
        if (i == n) {
            return 0;
        }
        any = 1;
    }
    return any;
}

int
sws_http_upstream_upgrade_allowed(sws_http_upstream_t *u)
{
    sws_http_request_t      *r = u->r;
    const sws_http_header_t *h;
    sws_uint_t               i;
    int                      seen = 0;

    if (!u->conf->upgrade || r->http_version < SWS_HTTP_VERSION_11 || r->h_connection == NULL
        || r->proto->tunnel(r, NULL, NULL) != SWS_OK || sws_http_has_body(r)
        || sws_strlcasestrn(r->h_connection->data, r->h_connection->data
                            + r->h_connection->len, (u_char *) "upgrade", 7) == NULL)
    {
        return 0;
    }
    /* Every Upgrade field, not only the one passed on, must be allowed. */
    h = r->headers_in.elts;
    for (i = 0; i < r->headers_in.nelts; i++) {
        if (h[i].name.len == 7 && memcmp(h[i].name.data, "upgrade", 7) == 0) {
            if (!sws_ups_upgrade_listed(u->conf, &h[i].value)) {
                return 0;
            }
            seen = 1;
        }
    }
    return seen;
}

/* ---- starting ---- */

sws_int_t
sws_http_upstream_start(sws_http_request_t *r)
{
    sws_http_upstream_t *u = r->upstream;
    sws_int_t            rc;

    if (u == NULL || (u->us == NULL && u->rname.len == 0)
        || (u->us && u->us->npeers == 0 && u->us->resolving == NULL && !u->us->app))
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (u->started) {
        return SWS_DONE;
    }
    u->started = 1;
    rc = sws_ups_cache_lookup(u);
    if (rc != SWS_DECLINED) {
        return rc;                      /* answered from storage, or failed */
    }
    return sws_ups_start_servers(u);
}

/* Servers, then the body: after the cache's lookup said to go on. */
sws_int_t
sws_ups_start_servers(sws_http_upstream_t *u)
{
    sws_http_request_t  *r = u->r;
    sws_uint_t           words;
    sws_int_t            rc;

    if (u->us == NULL) {
        /* A name (after the cache, which needs no address): its addresses
         * first, then here again. */
        return sws_ups_resolve_start(u);
    }
    if (u->us->list) {
        sws_ups_dyn_sync(u->us);        /* the tries below count the live servers */
    }
    words = (u->us->nall + 63) / 64;
    /* up to 64 servers (nearly every group): the word in u, zeroed with it */
    u->tried_one = 0;
    u->tried = words <= 1 ? &u->tried_one : sws_pcalloc(r->pool, words * sizeof(uint64_t));
    if (u->tried == NULL || sws_pool_cleanup_add(r->pool, sws_ups_cleanup, u) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->tries = u->us->nlive ? u->us->nlive : 1;
    if (u->conf->next_upstream_tries && u->conf->next_upstream_tries < u->tries) {
        u->tries = u->conf->next_upstream_tries;
    }
    u->start_msec = sws_current_msec();

    if (!sws_http_has_body(r)) {
        u->body_mode = SWS_UPSTREAM_BODY_NONE;
    } else if (!u->conf->pass_request_body || u->pass_body_off) {
        u->body_mode = SWS_UPSTREAM_BODY_NONE;
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK) {
            return rc;
        }
    } else if (u->conf->request_buffering || u->buffering_forced
               || (r->body && r->body->finished && !r->body->stream))
    {
        /* (a body read whole already, by a mirror or for a subrequest,
         * goes as it is) */
        u->body_mode = SWS_UPSTREAM_BODY_BUFFERED;
        rc = sws_http_read_body(r, sws_ups_body_read_done);
        return rc == SWS_OK ? SWS_DONE : rc;
    } else {
        u->body_mode = SWS_UPSTREAM_BODY_STREAM;
        u->streaming = 1;
        rc = sws_http_read_body_stream(r, sws_ups_body_ready);
        if (rc != SWS_OK) {
            return rc;
        }
    }
    sws_ups_init_request(u);
    return SWS_DONE;
}

/* Buffered: the whole body is in memory. */
static void
sws_ups_body_read_done(sws_http_request_t *r)
{
    sws_ups_init_request(r->upstream);
}

/* Streaming: body data may be there; take it if the connection has room. */
static void
sws_ups_body_ready(sws_http_request_t *r)
{
    sws_http_upstream_t *u = r->upstream;

    if (u->finished || u->c == NULL || u->connecting || u->out || u->request_sent) {
        return;          /* later: sws_ups_send pulls when it can */
    }
    sws_ups_send(u);
}

/* Build the request once; remember where each buffer starts (in memory
 * and in its file) so that a retry can send it again. (Built again only
 * when the cache asks for it unconditionally: sws_ups_cache_refetch.) */
void
sws_ups_init_request(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    sws_chain_t        *cl;
    sws_uint_t          n = 0;

    if (u->proto->create_request(r, u->ctx, &u->request) != SWS_OK) {
        sws_ups_finalize(u, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    for (cl = u->request; cl; cl = cl->next) {
        n++;
    }
    u->saved = n <= sws_nelems(u->saved_small)
               ? u->saved_small : sws_palloc(r->pool, n * sizeof(sws_ups_saved_pos_t));
    if (u->saved == NULL) {
        sws_ups_finalize(u, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    n = 0;
    for (cl = u->request; cl; cl = cl->next) {
        u->saved[n].pos = cl->buf->pos;
        u->saved[n++].file_pos = cl->buf->file_pos;
    }
    /* Told when the client goes away (while a body streams, reading it
     * tells that instead: the protocol calls this hook only once the
     * connection waits on the response). */
    r->read_event_handler = sws_ups_check_broken;
    sws_ups_connect_peer(u);
}

static void
sws_ups_rewind_request(sws_http_upstream_t *u)
{
    sws_chain_t *cl;
    sws_uint_t   n = 0;

    for (cl = u->request; cl; cl = cl->next) {
        /* Memory and file buffers alike (a body in a temporary file). */
        cl->buf->pos = u->saved[n].pos;
        cl->buf->file_pos = u->saved[n++].file_pos;
    }
    u->out = u->request;
}

/* ---- connecting ---- */

void
sws_ups_connected(sws_http_upstream_t *u)
{
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];

    if (u->ssl && u->c->ssl == NULL) {
        /* TCP is there; the TLS handshake comes back here when done. */
        sws_ups_ssl_handshake(u);
        return;
    }
    u->connecting = 0;
    sws_del_timer(u->c->write);
    a->connect_ms = sws_current_msec() - u->attempt_msec;
    sws_ups_send(u);
}

void
sws_ups_connect_peer(sws_http_upstream_t *u)
{
    sws_http_request_t          *r = u->r;
    sws_http_upstream_peer_t    *peer;
    sws_http_upstream_attempt_t *a;
    sws_ups_socket_opts_t        opts;
    sws_connection_t            *c;
    sws_int_t                    rc;

    if (sws_ups_queue_behind(u) && sws_ups_queue_wait(u, 0) == SWS_OK) {
        return;                         /* others wait for a connection already */
    }
    u->full = 0;
    peer = sws_ups_get_peer(u);
    if (peer == NULL) {
        if (u->full && sws_ups_queue_wait(u, u->woken) == SWS_OK) {
            return;                     /* every server at max_conns: wait */
        }
        if (u->us->app && u->us->nlive == 0 && u->status == 0) {
            /* an application none of whose processes is ready (starting,
             * restarting after a crash): unavailable for a while */
            sws_log_error(SWS_LOG_ERR, r->log, 0, "no process of application \"%.*s\" is "
                          "ready for \"%.*s\"", (int) u->us->name.len, u->us->name.data,
                          (int) sws_http_request_line(r)->len,
                          sws_http_request_line(r)->data);
            sws_ups_queue_leave(u);
            sws_ups_finalize(u, SWS_HTTP_SERVICE_UNAVAILABLE);
            return;
        }
        sws_log_error(SWS_LOG_ERR, r->log, 0, "%s in \"%.*s\" for \"%.*s\"",
                      !u->full ? "no live upstreams"
                      : u->us->queue_max ? "every server at max_conns, the queue full"
                      : "every server at max_conns", (int) u->us->name.len,
                      u->us->name.data, (int) sws_http_request_line(r)->len,
                      sws_http_request_line(r)->data);
        sws_ups_queue_leave(u);
        sws_ups_finalize(u, u->status ? u->status : SWS_HTTP_BAD_GATEWAY);
        return;
    }
    if (u->wait_ev.timer_set) {
        sws_del_timer(&u->wait_ev);     /* waited, and got one */
    }
    u->peer = peer;
    if (u->nattempts == u->attempts_max && u->attempts_max < SWS_UPS_ATTEMPTS_MAX) {
        /* Retries beyond the first two: a bigger record (the log's). */
        a = sws_palloc(r->pool, SWS_UPS_ATTEMPTS_MAX * sizeof(sws_http_upstream_attempt_t));
        if (a) {
            memcpy(a, u->attempts, u->nattempts * sizeof(sws_http_upstream_attempt_t));
            u->attempts = a;
            u->attempts_max = SWS_UPS_ATTEMPTS_MAX;
        }
    }
    if (u->nattempts < u->attempts_max) {
        u->nattempts++;
    }
    a = &u->attempts[u->nattempts - 1];
    a->addr = &peer->name;
    a->status = 0;
    a->connect_ms = a->header_ms = a->response_ms = -1;
    a->received = a->body = a->sent = 0;
    u->attempt_msec = sws_current_msec();
    sws_ups_stats_attempt_start(u);

    /* A fresh attempt: nothing of the last one's response is kept. */
    u->connecting = u->request_sent = u->sent_any = u->header_done = 0;
    u->body_done = u->keepalive = u->upgrade = u->reused = 0;
    u->date = -1;
    if (u->head.start) {
        u->head.pos = u->head.last = u->head.start;
    }
    if (u->nattempts > 1 || u->stale_retries) {
        sws_http_clear_response(r);
        if (u->headers_in) {
            u->headers_in->nelts = 0;
        }
        if (u->proto->reinit) {
            u->proto->reinit(r, u->ctx);
        }
    } else if (u->background) {
        /* the client's (stale) answer went out: the update's head starts
         * from nothing, not on top of it */
        sws_http_clear_response(r);
    }

    c = sws_ups_ka_get(u, peer);
    if (c) {
        u->reused = 1;
        rc = SWS_OK;
    } else {
        if (peer->max_conns && peer->conns + peer->idle > peer->max_conns) {
            sws_ups_ka_drop_one(u->us, peer);   /* idle, but not for u (TLS) */
        }
        rc = sws_ups_socket_opts(u, &opts) == SWS_OK
             ? sws_ups_connect(peer, &opts, r->log, &c) : SWS_BUSY;
        if (rc == SWS_ERROR) {
            sws_ups_next(u, SWS_UPS_FT_ERROR);
            return;
        }
        if (rc == SWS_BUSY) {
            sws_ups_stats_attempt_end(u, 0);
            sws_ups_finalize(u, SWS_HTTP_INTERNAL_SERVER_ERROR);
            return;
        }
    }
    u->c = c;
    c->data = u;
    c->log = r->log;
    if (u->conf->recv_fds && c->unix_socket && c->ssl == NULL && c->recv == sws_unix_recv) {
        c->recv = sws_unix_recv_fds;     /* kept connections too: set each time */
    }
    c->read->handler = sws_ups_event_handler;
    c->write->handler = sws_ups_event_handler;
    c->requests++;
    u->sent_start = c->sent;
    sws_ups_rewind_request(u);

    if (rc == SWS_AGAIN) {
        u->connecting = 1;
        sws_add_timer(c->write, u->conf->connect_timeout);
        return;
    }
    sws_ups_connected(u);
}

void
sws_ups_close_connection(sws_http_upstream_t *u)
{
    if (u->c) {
        sws_ups_close_conn(u->c);
        u->c = NULL;
    }
}

/* ---- sending ---- */

static sws_int_t
sws_ups_pull_body(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    sws_buf_t          *b = u->body_buf;
    size_t              size, n;
    sws_int_t           rc;

    if (b == NULL) {
        size = sws_http_core_loc(r)->client_body_buffer_size;
        if (u->body_piece && u->body_piece < size) {
            size = u->body_piece;
        }
        b = sws_create_temp_buf(r->pool, size + u->proto->frame_head + u->proto->frame_tail);
        if (b == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        u->body_buf = b;
    }
    b->pos = b->start + u->proto->frame_head;
    b->last = b->pos;
    rc = sws_http_read_body_data(r, b->pos, (size_t) (b->end - b->pos) - u->proto->frame_tail,
                                 &n);
    if (rc == SWS_AGAIN) {
        return SWS_OK;              /* nothing yet: the body handler calls again */
    }
    if (rc != SWS_OK && rc != SWS_DONE) {
        return rc;
    }
    b->last += n;
    if (n) {
        u->body_pulled = 1;
    }
    if (rc == SWS_DONE) {
        u->body_eof = 1;
    }
    if (u->proto->frame_body && (n || u->body_eof)) {
        u->proto->frame_body(r, u->ctx, b, u->body_eof);
    }
    if (b->pos < b->last) {
        u->body_link.buf = b;
        u->body_link.next = NULL;
        u->out = &u->body_link;
    }
    return SWS_OK;
}

static void
sws_ups_send(sws_http_upstream_t *u)
{
    sws_connection_t *c = u->c;
    sws_chain_t      *cl;
    sws_int_t         rc;

    for ( ;; ) {
        if (u->out) {
            if (!c->write->ready) {
                sws_add_timer(c->write, u->conf->send_timeout);
                return;
            }
            /* The event method may count the request sent before the
             * kernel has it (io_uring): only where a failure lets it go
             * again whatever was sent (the methods both sws_ups_stale
             * and sws_ups_next retry so). */
            c->defer_send = (u->r->method & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_OPTIONS
                                             | SWS_HTTP_PUT | SWS_HTTP_DELETE
                                             | SWS_HTTP_TRACE)) != 0;
            cl = c->send_chain(c, u->out, 0);
            if (c->sent > u->sent_start) {
                u->sent_any = 1;
                u->attempts[u->nattempts - 1].sent = c->sent - u->sent_start;
            }
            if (cl == SWS_CHAIN_ERROR) {
                sws_log_error(SWS_LOG_ERR, c->log, 0, "sending the request to upstream %.*s "
                              "failed", (int) u->peer->name.len, u->peer->name.data);
                if (u->header_done) {
                    /* The response is on its way: stop sending, go on reading. */
                    u->request_sent = 1;
                    u->keepalive = 0;
                    return;
                }
                if (!sws_ups_stale(u)) {
                    sws_ups_next(u, SWS_UPS_FT_ERROR);
                }
                return;
            }
            u->out = cl;
            if (cl) {
                sws_add_timer(c->write, u->conf->send_timeout);
                if (c->write->ready) {
                    sws_post_event(c->write);    /* the per-call limit: go on later */
                }
                return;
            }
            sws_del_timer(c->write);
        }
        if (!u->streaming || u->body_eof) {
            break;
        }
        rc = sws_ups_pull_body(u);
        if (rc != SWS_OK) {
            sws_ups_finalize(u, rc);
            return;
        }
        if (u->out == NULL && !u->body_eof) {
            return;                     /* sws_ups_body_ready calls again */
        }
    }

    if (u->request_sent) {
        return;
    }
    u->request_sent = 1;
    if (u->header_done) {
        return;
    }
    sws_add_timer(c->read, u->conf->read_timeout);
    if (c->read->ready) {
        sws_ups_read_header(u);
    }
}

/* ---- events ---- */

void
sws_ups_event_handler(sws_event_t *ev)
{
    sws_connection_t    *c = ev->data;
    sws_http_upstream_t *u = c->data;

    if (u->tunnel) {
        sws_ups_tunnel_event(u, 1);
        return;
    }

    if (ev->timedout) {
        ev->timedout = 0;
        if (u->rate_delayed && !ev->write) {
            u->rate_delayed = 0;          /* limit_rate's pause is over */
            sws_ups_response_read(u);
            return;
        }
        if (u->connecting) {
            sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s timed out connecting",
                          (int) u->peer->name.len, u->peer->name.data);
            sws_ups_next(u, SWS_UPS_FT_TIMEOUT);
            return;
        }
        if (ev->write) {
            sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s timed out reading the request",
                          (int) u->peer->name.len, u->peer->name.data);
            if (u->header_done) {
                u->request_sent = 1;
                u->keepalive = 0;
                return;
            }
            sws_ups_next(u, SWS_UPS_FT_TIMEOUT);
            return;
        }
        if (!u->request_sent && !u->header_done) {
            /* A kept connection's idle timer, still armed while the request
             * goes (sending has a timer of its own). */
            return;
        }
        if (!u->header_done) {
            sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s timed out sending the "
                          "response header", (int) u->peer->name.len, u->peer->name.data);
            sws_ups_next(u, SWS_UPS_FT_TIMEOUT);
            return;
        }
        sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s timed out sending the response",
                      (int) u->peer->name.len, u->peer->name.data);
        sws_ups_stats_attempt_end(u, 1);
        sws_ups_finalize(u, SWS_HTTP_GATEWAY_TIME_OUT);
        return;
    }

    if (u->connecting) {
        if (sws_ups_connect_test(c, u->peer) != SWS_OK) {
            sws_ups_next(u, SWS_UPS_FT_ERROR);
            return;
        }
        sws_ups_connected(u);
        return;
    }

    if (ev->write) {
        if (!u->request_sent) {
            sws_ups_send(u);
        }
        return;
    }
    if (!u->header_done) {
        sws_ups_read_header(u);
        return;
    }
    sws_ups_response_read(u);
}

/* ---- the client side ---- */

static void
sws_ups_check_broken(sws_http_request_t *r)
{
    sws_http_upstream_t *u = r->upstream;

    /* A background update is the cache's: it goes on without the client. */
    if (u == NULL || u->finished || u->conf->ignore_client_abort || u->background
        || !r->proto->aborted(r))
    {
        return;
    }
    sws_log_error(SWS_LOG_INFO, r->log, 0, "client closed the connection while waiting "
                  "for upstream %.*s", u->peer ? (int) u->peer->name.len : 0,
                  u->peer ? u->peer->name.data : (u_char *) "");
    if (u->c && !u->finished) {
        sws_ups_stats_attempt_end(u, 0);
    }
    sws_ups_finalize(u, SWS_HTTP_CLIENT_CLOSED_REQUEST);
}

/* ---- the end ---- */

void
sws_ups_finalize(sws_http_upstream_t *u, sws_int_t rc)
{
    sws_http_request_t *r = u->r;

    if (u->finished) {
        return;
    }
    u->finished = 1;
    sws_ups_queue_leave(u);
    if (u->c) {
        sws_ups_stats_attempt_end(u, 0);
        sws_ups_close_connection(u);
    }
    sws_ups_cache_end(u, u->body_complete);
    if (rc >= SWS_HTTP_INTERNAL_SERVER_ERROR && !r->header_sent) {
        sws_int_t alt = sws_ups_cache_failed(u, rc);   /* a stale entry instead */
        if (alt != SWS_DECLINED) {
            rc = alt;
        }
    }
    if (u->background) {
        r->status = u->client_status;   /* for the log: what the client got */
        if (rc >= 100) {
            rc = SWS_OK;                /* the client was answered from the cache */
        }
    }
    r->read_event_handler = NULL;
    r->write_event_handler = NULL;
    if (u->proto->finalize) {
        u->proto->finalize(r, u->ctx, rc);
    }

    if (rc == SWS_OK || rc == SWS_DONE) {
        sws_http_finalize(r, SWS_OK);
        return;
    }
    if (rc >= 100 && r->header_sent && rc != SWS_HTTP_CLIENT_CLOSED_REQUEST) {
        /* Too late for an error page: send what came, then close, so the
         * client sees the response cut. */
        r->keepalive = 0;
        sws_http_finalize(r, SWS_OK);
        return;
    }
    sws_http_finalize(r, rc);
}

/* The request's pool goes (the response is over, or the client left): let
 * go of everything still held. */
static void
sws_ups_cleanup(void *data)
{
    sws_http_upstream_t *u = data;

    sws_ups_queue_leave(u);
    if (u->c) {
        sws_ups_stats_attempt_end(u, 0);
        sws_ups_close_connection(u);
    }
    u->finished = 1;
    sws_ups_cache_end(u, 0);           /* the client went away first */
    sws_ups_response_cleanup(u);
}
