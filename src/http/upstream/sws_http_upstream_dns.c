/*
 * Run-time DNS for targets known per request (proxy_pass http://$host...,
 * fastcgi_pass $addr): a name that is neither an upstream the
 * configuration knows nor an address is asked of the location's resolver
 * when the request starts; its addresses become a group of the request's
 * own (round robin, no keep-alive), as nginx does. The `resolver` and
 * `resolver_timeout` directives (http, server, location) are here.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_http_upstream.h"

/* ---- the directives ---- */

char *
sws_ups_resolver_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_upstream_loc_conf_t *ulcf = conf;

    (void) cmd;
    if (ulcf->resolver) {
        return "is duplicate";
    }
    ulcf->resolver = sws_resolver_conf(cf, 1);
    return ulcf->resolver ? SWS_CONF_OK : SWS_CONF_ERROR;
}

void
sws_ups_resolver_merge(sws_http_upstream_loc_conf_t *prev, sws_http_upstream_loc_conf_t *conf)
{
    if (conf->resolver == NULL) {
        conf->resolver = prev->resolver;
    }
    sws_conf_merge_msec_value(conf->resolver_timeout, prev->resolver_timeout, 30000);
}

/* ---- the request ---- */

sws_int_t
sws_ups_resolve_later(sws_http_upstream_t *u, const sws_str_t *addr, sws_uint_t default_port)
{
    sws_http_request_t           *r = u->r;
    sws_http_upstream_loc_conf_t *ulcf = sws_http_loc_conf(r, &sws_http_upstream_module);
    u_char                       *colon = NULL, *p;
    sws_int_t                     port = (sws_int_t) default_port;

    for (p = addr->data + addr->len; p > addr->data; p--) {
        if (p[-1] == ':') {
            colon = p - 1;
            break;
        }
    }
    u->rname.data = addr->data;
    u->rname.len = colon ? (size_t) (colon - addr->data) : addr->len;
    if (colon) {
        port = sws_atoi(colon + 1, (size_t) (addr->data + addr->len - colon - 1));
        if (port < 1 || port > 65535 || u->rname.len == 0) {
            sws_log_error(SWS_LOG_ERR, r->log, 0, "invalid port in upstream \"%.*s\"",
                          (int) addr->len, addr->data);
            return SWS_DECLINED;
        }
    }
    if (ulcf->resolver == NULL) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "no resolver defined to resolve %.*s",
                      (int) u->rname.len, u->rname.data);
        return SWS_DECLINED;
    }
    u->rport = (sws_uint_t) port;
    u->raddr.data = sws_pstrdup(r->pool, addr);
    if (u->raddr.data == NULL) {
        return SWS_ERROR;
    }
    u->raddr.len = addr->len;
    u->rname.data = u->raddr.data;
    return SWS_OK;
}

/* The answer's addresses as the request's own group. SWS_OK or a status. */
static sws_int_t
sws_ups_resolved_group(sws_http_upstream_t *u, const sws_resolver_result_t *res)
{
    sws_http_request_t        *r = u->r;
    sws_http_upstream_srv_t   *us;
    sws_http_upstream_peer_t  *peer;
    sws_uint_t                 i, k, n = res->naddrs;
    static sws_uint_t          rotate;

    if (res->status != SWS_RESOLVE_OK || n == 0) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "%.*s could not be resolved (%d: %s)",
                      (int) u->rname.len, u->rname.data, (int) res->status,
                      sws_resolver_strerror(res->status));
        return SWS_HTTP_BAD_GATEWAY;
    }
    us = sws_pcalloc(r->pool, sizeof(sws_http_upstream_srv_t)
                              + n * sizeof(sws_http_upstream_peer_t));
    if (us == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    peer = (sws_http_upstream_peer_t *) (us + 1);
    us->name = u->raddr;
    us->port = u->rport;
    us->peers = peer;
    us->npeers = us->nprimary = us->nall = us->nused = us->nlive = n;
    us->method = SWS_UPS_RR;
    us->keepalive = 0;                  /* ka_items NULL: nothing is kept */
    /* Each request's group starts its round robin at the first peer: the
     * addresses are rotated from one request to the next (nginx rotates
     * them at random) so that all of them get requests. */
    rotate++;
    for (i = 0; i < n; i++, peer++) {
        k = (i + rotate) % n;
        memcpy(&peer->sockaddr, &res->addrs[k].sockaddr, res->addrs[k].socklen);
        peer->socklen = res->addrs[k].socklen;
        if (peer->sockaddr.ss_family == AF_INET6) {
            ((struct sockaddr_in6 *) &peer->sockaddr)->sin6_port = htons((uint16_t) u->rport);
        } else {
            ((struct sockaddr_in *) &peer->sockaddr)->sin_port = htons((uint16_t) u->rport);
        }
        if (sws_ups_addr_text(r->pool, &peer->sockaddr, &peer->name) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        peer->server = us->name;
        peer->host = u->rname;
        peer->weight = peer->effective_weight = 1;
        peer->index = i;
        peer->us = us;
    }
    u->us = us;
    return SWS_OK;
}

static void
sws_ups_resolved(void *data, const sws_resolver_result_t *res)
{
    sws_http_upstream_t *u = data;
    sws_http_request_t  *r = u->r;
    sws_int_t            rc;

    u->rquery = NULL;
    rc = sws_ups_resolved_group(u, res);
    if (u->rsync) {
        u->rrc = rc;                    /* sws_ups_resolve_start goes on */
        return;
    }
    if (rc == SWS_OK) {
        rc = sws_http_upstream_start(r);
    }
    if (rc != SWS_DONE) {
        sws_http_finalize(r, rc);
    }
}

/* The request ends before the answer: no one to tell. */
static void
sws_ups_resolve_cleanup(void *data)
{
    sws_http_upstream_t *u = data;

    if (u->rquery) {
        sws_resolver_cancel(u->rquery);
        u->rquery = NULL;
    }
}

sws_int_t
sws_ups_resolve_start(sws_http_upstream_t *u)
{
    sws_http_request_t           *r = u->r;
    sws_http_upstream_loc_conf_t *ulcf = sws_http_loc_conf(r, &sws_http_upstream_module);
    sws_int_t                     rc;

    if (sws_pool_cleanup_add(r->pool, sws_ups_resolve_cleanup, u) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u->rsync = 1;
    u->rrc = SWS_HTTP_INTERNAL_SERVER_ERROR;
    rc = sws_resolver_resolve(ulcf->resolver, &u->rname, ulcf->resolver_timeout, r->log,
                              sws_ups_resolved, u, &u->rquery);
    u->rsync = 0;
    if (rc == SWS_AGAIN) {
        return SWS_DONE;                /* sws_ups_resolved goes on */
    }
    if (rc != SWS_OK || u->rrc != SWS_OK) {
        return rc != SWS_OK ? SWS_HTTP_INTERNAL_SERVER_ERROR : u->rrc;
    }
    return sws_http_upstream_start(r);
}
