/*
 * Upgrade (WebSocket and others): after the server's 101 the client gets
 * the 101 head, and from then on both connections are a byte tunnel. Each
 * direction has one buffer; a side that is full or not ready stops the
 * other (back-pressure both ways). The tunnel ends when a side closed and
 * what was in flight is delivered, on an error, or after read_timeout
 * without any traffic. The client side is the protocol's to give
 * (r->proto->tunnel): HTTP/1 only (an h2 stream would use extended
 * CONNECT instead).
 */
#include "sws_http_upstream.h"

static void sws_ups_tunnel_client(sws_http_request_t *r);
static void sws_ups_tunnel_process(sws_http_upstream_t *u);

void
sws_ups_tunnel_start(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    sws_buf_t          *b;
    sws_str_t           pre;
    size_t              size = u->conf->head_buffer_size;

    r->upgrade = 1;
    r->keepalive = 0;
    r->read_event_handler = NULL;
    r->write_event_handler = NULL;
    sws_http_set_content_length(r, -1);
    if (sws_http_send_header(r) != SWS_OK) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }

    /* The client side becomes a byte stream; what the client sent right
     * after its request (it may not wait for the 101) goes first. */
    if (r->proto->tunnel(r, &pre, &u->t_client) != SWS_OK) {
        sws_ups_finalize(u, SWS_ERROR);     /* never: upgrade_allowed asked */
        return;
    }
    b = sws_create_temp_buf(r->pool, sws_max(size, pre.len));
    if (b == NULL) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    b->last = sws_cpymem(b->last, pre.data, pre.len);
    u->t_up = b;
    /* Upstream -> client: the head buffer, with what came after the 101. */
    u->t_down = &u->head;
    u->tunnel = 1;
    r->read_event_handler = sws_ups_tunnel_client;

    sws_del_timer(u->c->write);
    sws_log_debug(r->log, "tunnel to %.*s", (int) u->peer->name.len, u->peer->name.data);
    sws_ups_tunnel_process(u);
}

/* Any event of the client's side (read or write). */
static void
sws_ups_tunnel_client(sws_http_request_t *r)
{
    if (r->upstream) {
        sws_ups_tunnel_event(r->upstream, 0);
    }
}

void
sws_ups_tunnel_event(sws_http_upstream_t *u, int from_upstream)
{
    (void) from_upstream;
    if (u->finished) {
        return;
    }
    if (u->c->read->timedout) {
        u->c->read->timedout = 0;
        sws_log_error(SWS_LOG_INFO, u->r->log, 0, "tunnel to %.*s idle for too long",
                      (int) u->peer->name.len, u->peer->name.data);
        sws_ups_finalize(u, SWS_OK);
        return;
    }
    sws_ups_tunnel_process(u);
}

/* Move what can be moved from src to dst through b. SWS_ERROR, or whether
 * anything moved. */
static sws_int_t
sws_ups_pump(sws_connection_t *src, sws_connection_t *dst, sws_buf_t *b, unsigned *eof)
{
    sws_chain_t  cl, *rest;
    ssize_t      n;
    sws_int_t    moved = 0;
    int          did;

    do {
        did = 0;
        if (b->pos < b->last && dst->write->ready) {
            cl.buf = b;
            cl.next = NULL;
            n = b->last - b->pos;
            rest = dst->send_chain(dst, &cl, 0);
            if (rest == SWS_CHAIN_ERROR) {
                return SWS_ERROR;
            }
            did = b->last - b->pos < n;
        }
        if (b->pos == b->last) {
            b->pos = b->last = b->start;
        }
        if (!*eof && b->last < b->end && src->read->ready) {
            n = src->recv(src, b->last, b->end - b->last);
            if (n == SWS_ERROR) {
                return SWS_ERROR;
            }
            if (n == 0) {
                *eof = 1;
                did = 1;
            } else if (n > 0) {
                b->last += n;
                did = 1;
            }
        }
        moved |= did;
    } while (did);
    return moved;
}

static void
sws_ups_tunnel_process(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    sws_connection_t   *c = u->t_client, *uc = u->c;
    sws_chain_t        *cl;
    sws_int_t           down, up;
    unsigned            eof;

    /* The 101 head first. */
    if (r->out) {
        if (!c->write->ready) {
            return;
        }
        cl = c->send_chain(c, r->out, 0);
        if (cl == SWS_CHAIN_ERROR) {
            sws_ups_finalize(u, SWS_ERROR);
            return;
        }
        r->out = cl;
        if (cl) {
            return;
        }
    }

    eof = u->t_down_eof;
    down = sws_ups_pump(uc, c, u->t_down, &eof);
    u->t_down_eof = eof;
    eof = u->t_up_eof;
    up = sws_ups_pump(c, uc, u->t_up, &eof);
    u->t_up_eof = eof;
    if (down == SWS_ERROR || up == SWS_ERROR) {
        sws_ups_finalize(u, SWS_OK);       /* logged with 101, closed */
        return;
    }

    /* A side closed: once what is in flight both ways has been delivered,
     * the tunnel ends (as nginx does; a half-open tunnel would only hold
     * the other side until the idle timeout). */
    if ((u->t_down_eof || u->t_up_eof) && u->t_down->pos == u->t_down->last
        && u->t_up->pos == u->t_up->last)
    {
        sws_ups_finalize(u, SWS_OK);
        return;
    }
    if (down || up || !uc->read->timer_set) {
        sws_add_timer(uc->read, u->conf->read_timeout);
    }
}
