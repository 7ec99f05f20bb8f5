/*
 * A target chosen per request (proxy_pass with variables): the name of an
 * upstream the configuration knows (an upstream { } block, or the
 * "host:port" of another proxy_pass, already resolved at start-up, with its
 * keep-alive pool), else an address that needs no resolver, else a name
 * that the location's resolver is asked when the request starts
 * (sws_http_upstream_dns.c; a worker never blocks on getaddrinfo()).
 *
 * A literal address gets a group of its own for the request (pool memory):
 * one server, no passive health, no keep-alive (like nginx, whose keep-alive
 * needs an upstream block).
 */
#include <sys/socket.h>
#include "sws_http_upstream.h"

static sws_http_upstream_srv_t *
sws_ups_find_known(const sws_str_t *addr, sws_uint_t default_port)
{
    sws_http_upstream_main_conf_t  *umcf = sws_http_upstream_main();
    sws_http_upstream_srv_t       **ups;
    sws_uint_t                      i;
    int                             has_port;

    if (umcf == NULL) {
        return NULL;
    }
    has_port = memchr(addr->data, ':', addr->len) != NULL
               && !(addr->len > 5 && sws_strncasecmp(addr->data, (u_char *) "unix:", 5) == 0)
               && addr->data[addr->len - 1] != ']';
    ups = umcf->upstreams.elts;
    for (i = 0; i < umcf->upstreams.nelts; i++) {
        if (!sws_str_caseeq(&ups[i]->name, addr)
            || (ups[i]->npeers == 0 && ups[i]->resolving == NULL && !ups[i]->app))
        {
            continue;
        }
        /* "proxy_pass http://h" elsewhere means h:80; here it may be 443. */
        if (!ups[i]->defined && !has_port && !ups[i]->unix_sock
            && ups[i]->port != default_port)
        {
            continue;
        }
        return ups[i];
    }
    return NULL;
}

sws_int_t
sws_http_upstream_set_target(sws_http_upstream_t *u, const sws_str_t *addr,
    sws_uint_t default_port)
{
    sws_http_request_t        *r = u->r;
    sws_http_upstream_srv_t   *us;
    sws_http_upstream_peer_t  *peer;
    sws_str_t                  host;
    const char                *err = "invalid address";
    sws_int_t                  rc;

    if (u->started || addr->len == 0) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "no upstream address given");
        return SWS_ERROR;
    }
    us = sws_ups_find_known(addr, default_port);
    if (us) {
        u->us = us;
        return SWS_OK;
    }

    us = sws_pcalloc(r->pool, sizeof(sws_http_upstream_srv_t)
                              + sizeof(sws_http_upstream_peer_t));
    if (us == NULL) {
        return SWS_ERROR;
    }
    peer = (sws_http_upstream_peer_t *) (us + 1);
    rc = sws_ups_parse_literal(addr, default_port, &peer->sockaddr, &peer->socklen, &host,
                               &err);
    if (rc == 0) {
        return sws_ups_resolve_later(u, addr, default_port);   /* a name: DNS */
    }
    if (rc < 0) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "%s in upstream \"%.*s\"", err,
                      (int) addr->len, addr->data);
        return SWS_DECLINED;
    }
    if (sws_ups_addr_text(r->pool, &peer->sockaddr, &peer->name) != SWS_OK) {
        return SWS_ERROR;
    }
    us->name.data = sws_pstrdup(r->pool, addr);
    us->name.len = addr->len;
    if (us->name.data == NULL) {
        return SWS_ERROR;
    }
    us->port = default_port;
    us->unix_sock = peer->sockaddr.ss_family == AF_UNIX;
    us->peers = peer;
    us->npeers = us->nprimary = us->nall = us->nused = us->nlive = 1;
    us->method = SWS_UPS_RR;
    us->keepalive = 0;                /* ka_items NULL: nothing is kept */
    peer->server = us->name;
    peer->host = host;
    peer->weight = peer->effective_weight = 1;
    peer->us = us;
    u->us = us;
    return SWS_OK;
}
