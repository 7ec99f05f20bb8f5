/*
 * "listen ... proxy_protocol": every connection of the address starts with
 * a PROXY protocol header (v1 or v2, sws_proxy_protocol.c) from the load
 * balancer in front. It is read before anything else, TLS included, within
 * client_header_timeout. The bytes are peeked, not read, and only the
 * header's are taken off the socket once it is complete, so what follows
 * (a ClientHello, a request) is read by the protocol after it as if it had
 * come first. A malformed or oversized header closes the connection at
 * once, without a response: the peer is a balancer, not a browser.
 *
 * The addresses go to the session ($proxy_protocol_addr and friends);
 * $remote_addr stays the balancer's unless realip is told to take them
 * (real_ip_header proxy_protocol), as in nginx.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_http_core.h"
#include "sws_proxy_protocol.h"

static void sws_http_proxy_protocol_read(sws_event_t *ev);

void
sws_http_proxy_protocol_start(sws_connection_t *c)
{
    sws_http_session_t   *s = c->data;
    sws_proxy_protocol_t *pp;

    pp = sws_pcalloc(c->pool, sizeof(sws_proxy_protocol_t));
    if (pp == NULL) {
        sws_http_close_connection(c);
        return;
    }
    s->pp_state = pp;
    c->read->handler = sws_http_proxy_protocol_read;
    c->write->handler = sws_http_proxy_protocol_read;
    sws_add_timer(c->read, s->cscf->client_header_timeout);
    sws_http_proxy_protocol_read(c->read);
}

/* addr and port of ss as text, in the connection's pool. */
static sws_int_t
sws_http_proxy_protocol_text(sws_pool_t *pool, const struct sockaddr_storage *ss,
    sws_str_t *addr, sws_str_t *port)
{
    char       text[INET6_ADDRSTRLEN];
    u_char     num[8], *end;
    in_port_t  p;

    if (ss->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *) ss)->sin_addr, text, sizeof(text));
        p = ((const struct sockaddr_in *) ss)->sin_port;
    } else {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) ss)->sin6_addr, text, sizeof(text));
        p = ((const struct sockaddr_in6 *) ss)->sin6_port;
    }
    end = sws_sprint_uint(num, ntohs(p));
    port->len = (size_t) (end - num);
    port->data = sws_pnalloc(pool, port->len);
    if (port->data == NULL || sws_str_from_cstr(pool, addr, text) != SWS_OK) {
        return SWS_ERROR;
    }
    memcpy(port->data, num, port->len);
    return SWS_OK;
}

static sws_int_t
sws_http_proxy_protocol_done(sws_connection_t *c, sws_proxy_protocol_t *pp)
{
    sws_http_session_t        *s = c->data;
    sws_http_proxy_protocol_t *h;

    if (!pp->has_addrs) {
        return SWS_OK;        /* LOCAL / UNKNOWN: the connection's addresses */
    }
    h = sws_pcalloc(c->pool, sizeof(sws_http_proxy_protocol_t));
    if (h == NULL) {
        return SWS_ERROR;
    }
    memcpy(&h->src, &pp->src, pp->src_len);
    memcpy(&h->dst, &pp->dst, pp->dst_len);
    h->src_len = pp->src_len;
    h->dst_len = pp->dst_len;
    if (sws_http_proxy_protocol_text(c->pool, &h->src, &h->src_addr, &h->src_port) != SWS_OK
        || sws_http_proxy_protocol_text(c->pool, &h->dst, &h->dst_addr, &h->dst_port)
           != SWS_OK)
    {
        return SWS_ERROR;
    }
    s->proxy = h;
    return SWS_OK;
}

static void
sws_http_proxy_protocol_read(sws_event_t *ev)
{
    u_char                buf[16 + SWS_PROXY_PROTOCOL_V2_MAX];
    sws_connection_t     *c = ev->data;
    sws_http_session_t   *s = c->data;
    sws_proxy_protocol_t *pp = s->pp_state;
    size_t                used = 0, fed;
    ssize_t               n;
    sws_int_t             rc;

    if (ev->write) {
        return;                   /* writable: nothing to write yet */
    }
    if (ev->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0,
                      "client %.*s timed out sending the PROXY protocol header",
                      (int) c->addr_text.len, c->addr_text.data);
        sws_http_close_connection(c);
        return;
    }
    if (c->close) {
        sws_http_close_connection(c);
        return;
    }
    /* Peek at everything so far and feed the parser what it has not seen:
     * the socket keeps the bytes until the header is known to be whole. */
    n = recv(c->fd, buf, sizeof(buf), MSG_PEEK);
    if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (n <= 0) {
        if (n == -1) {
            sws_log_error(SWS_LOG_INFO, c->log, errno,
                          "recv() failed reading the PROXY protocol header");
        }
        sws_http_close_connection(c);
        return;
    }
    fed = pp->total;
    if ((size_t) n <= fed) {
        return;                   /* nothing new (a spurious wake-up) */
    }
    rc = sws_proxy_protocol_parse(pp, buf + fed, (size_t) n - fed, &used);
    if (rc == SWS_AGAIN) {
        return;
    }
    if (rc == SWS_ERROR) {
        sws_log_error(SWS_LOG_INFO, c->log, 0,
                      "client %.*s sent a broken PROXY protocol header",
                      (int) c->addr_text.len, c->addr_text.data);
        sws_http_close_connection(c);
        return;
    }
    /* Take the header off the socket: exactly its bytes, which are there. */
    n = recv(c->fd, buf, fed + used, 0);
    if (n != (ssize_t) (fed + used) || sws_http_proxy_protocol_done(c, pp) != SWS_OK) {
        sws_http_close_connection(c);
        return;
    }
    sws_del_timer(c->read);
    s->pp_state = NULL;
    c->read->ready = 1;           /* what follows may be there already */
    sws_http_session_start(c);
}

/* ---- for the variables and realip ---- */

const struct sockaddr *
sws_http_proxy_protocol_addr(sws_http_request_t *r, int server, socklen_t *len)
{
    sws_http_proxy_protocol_t *h = r->session ? r->session->proxy : NULL;

    if (h == NULL) {
        return NULL;
    }
    if (len) {
        *len = server ? h->dst_len : h->src_len;
    }
    return (const struct sockaddr *) (server ? &h->dst : &h->src);
}
