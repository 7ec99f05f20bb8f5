/*
 * Client sessions: an accepted connection becomes a session (its address
 * text, the listening address and its default server), then goes through
 * TLS, and speaks HTTP/1 or HTTP/2 on top. What a request needs of its
 * client whatever the protocol is here, not in the protocols' state.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include "sws_ssl.h"
#include "sws_http_core.h"
#include "sws_http_ssl.h"

static sws_int_t
sws_http_addr_text(sws_connection_t *c)
{
    char  text[INET6_ADDRSTRLEN + 8];
    const char *p = text;

    switch (c->sockaddr.sa.sa_family) {
    case AF_INET:
        inet_ntop(AF_INET, &c->sockaddr.sin.sin_addr, text, sizeof(text));
        break;
    case AF_INET6:
        inet_ntop(AF_INET6, &c->sockaddr.sin6.sin6_addr, text, sizeof(text));
        break;
    default:
        p = "unix:";
    }
    return sws_str_from_cstr(c->pool, &c->addr_text, p);
}

/* ---- TCP: what the transport of HTTP/1 and HTTP/2 knows ---- */

static sws_int_t
sws_http_tcp_info(sws_http_session_t *s, sws_http_transport_info_t *info)
{
    sws_connection_t *c = s->connection;
    struct tcp_info   ti;
    socklen_t         len = sizeof(ti);

    if (c->unix_socket || getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) {
        return SWS_DECLINED;
    }
    info->rtt = ti.tcpi_rtt;
    info->rttvar = ti.tcpi_rttvar;
    info->snd_cwnd = ti.tcpi_snd_cwnd;
    info->rcv_space = ti.tcpi_rcv_space;
    return SWS_OK;
}

static sws_int_t
sws_http_tcp_local_addr(sws_http_session_t *s, struct sockaddr_storage *sa)
{
    socklen_t len = sizeof(*sa);

    return getsockname(s->connection->fd, (struct sockaddr *) sa, &len) == 0 ? SWS_OK
                                                                               : SWS_ERROR;
}

static int
sws_http_tcp_tls_early(sws_http_session_t *s)
{
    sws_connection_t *c = s->connection;

    return c->ssl && c->ssl->in_early;
}

static const sws_http_transport_t sws_http_tcp_transport = {
    .name = "tcp",
    .info = sws_http_tcp_info,
    .local_addr = sws_http_tcp_local_addr,
    .tls_early = sws_http_tcp_tls_early,
};

void
sws_http_init_connection(sws_connection_t *c)
{
    sws_http_session_t *s;
    sws_http_addr_t    *addr = c->listening->servers;
    int                 on = 1;

    s = sws_pcalloc(c->pool, sizeof(sws_http_session_t));
    if (s == NULL || sws_http_addr_text(c) != SWS_OK) {
        sws_http_close_connection(c);
        return;
    }
    s->connection = c;
    s->transport = &sws_http_tcp_transport;
    s->addr = addr;
    s->listening = c->listening;
    s->log = c->log;
    s->sockaddr = &c->sockaddr.sa;
    s->socklen = c->socklen;
    s->addr_text = c->addr_text;
    s->number = c->number;
    s->start_msec = sws_current_msec();
    s->cscf = addr->default_server->ctx->srv_conf[sws_http_core_module.index];
    c->data = s;
    c->write->ready = 1;        /* a new socket has room to write */

    if (!c->unix_socket) {
        /* Responses are written whole; Nagle would only delay pipelined
         * and keep-alive answers. */
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    }
    if (addr->proxy_protocol) {
        /* The balancer's header first: sws_http_session_start after it. */
        sws_http_proxy_protocol_start(c);
        return;
    }
    sws_http_session_start(c);
}

/* TLS, or the plain listener's protocol (sws_http_protocol.c) from here
 * on. After a
 * PROXY header (c->read->ready), bytes may be waiting already: with
 * edge-triggered events none would come for them, so read at once. */
void
sws_http_session_start(sws_connection_t *c)
{
    sws_http_session_t *s = c->data;
    sws_http_addr_t    *addr = s->addr;

    if (!addr->ssl) {
        sws_http_protocol_start(s, SWS_HTTP_LISTENER_TCP, NULL);
        return;
    }
    sws_http_ssl_init_connection(c);
    if (c->read->ready) {
        c->read->handler(c->read);
    }
}

/* The session and what a protocol hung on c->data live in the
 * connection's pool (HTTP/1 destroys its request pool first:
 * sws_http1_close_connection). */
void
sws_http_close_connection(sws_connection_t *c)
{
    sws_pool_t *pool = c->pool;

    c->pool = NULL;
    sws_close_connection(c);
    if (pool) {
        sws_pool_destroy(pool);
    }
}
