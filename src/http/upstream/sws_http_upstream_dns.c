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
#include "sws_process.h"

/* ---- the directives ---- */

/* "resolver" at the http levels (the location conf's field) and in an
 * upstream block (the group's, for its "server ... resolve" lines):
 * cmd->offset is the field's. */
char *
sws_ups_resolver_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_resolver_t **slot = (sws_resolver_t **) ((char *) conf + cmd->offset);

    if (*slot) {
        return "is duplicate";
    }
    *slot = sws_resolver_conf(cf, 1);
    return *slot ? SWS_CONF_OK : SWS_CONF_ERROR;
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
    if (rc != SWS_OK) {
        u->cache_offer = 0;             /* nginx: a 502, never a stale entry */
        sws_ups_finalize(u, rc);
        return;
    }
    rc = sws_ups_start_servers(u);
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
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (u->rrc != SWS_OK) {
        u->cache_offer = 0;
        sws_ups_finalize(u, u->rrc);
        return SWS_DONE;
    }
    return sws_ups_start_servers(u);
}

/* ---- "server NAME resolve" in an upstream { } block ---- */

/* One name a group follows, in worker 0. */
typedef struct {
    sws_http_upstream_srv_t  *us;
    sws_str_t                 host;       /* the name, without the port */
    sws_uint_t                port;
    sws_uint_t                weight;
    sws_uint_t                owner;      /* its line among us->resolving, 1-based */
    sws_event_t               timer;      /* the next question */
    sws_resolver_query_t     *query;
    sws_log_t                *log;
    sws_uint_t                naddrs;     /* in the list now */
    struct sockaddr_storage   addrs[SWS_RESOLVER_MAX_ADDRS];
} sws_ups_followed_t;

/* Asked again this long after a failure (valid= when set is the answer's). */
#define SWS_UPS_RESOLVE_RETRY  5000

char *
sws_ups_resolving_conf(sws_conf_t *cf, sws_http_upstream_srv_t *us)
{
    sws_http_upstream_loc_conf_t *ulcf = sws_conf_http_loc_conf(cf, &sws_http_upstream_module);
    sws_http_upstream_server_t   *s = us->resolving->elts;
    sws_uint_t                    i;
    u_char                       *colon;
    sws_int_t                     port;

    for (i = 0; i < us->resolving->nelts; i++) {
        colon = memchr(s[i].addr.data, ':', s[i].addr.len);
        port = colon ? sws_atoi(colon + 1, (size_t) (s[i].addr.data + s[i].addr.len - colon - 1))
                     : 80;
        if (port < 1 || port > 65535 || colon == s[i].addr.data || s[i].backup) {
            sws_log_error(SWS_LOG_EMERG, cf->log, 0, "%s in upstream \"%.*s\" in %s:%lu",
                          s[i].backup ? "a backup server cannot be resolved at run time"
                                      : "invalid port", (int) s[i].addr.len, s[i].addr.data,
                          s[i].file, (unsigned long) s[i].line);
            return SWS_CONF_ERROR;
        }
    }
    if (!us->zone) {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0, "resolving names at run time requires "
                      "upstream \"%.*s\" in %s:%lu to be in shared memory",
                      (int) us->name.len, us->name.data, us->file, (unsigned long) us->line);
        return SWS_CONF_ERROR;
    }
    if (us->resolver == NULL && ulcf) {
        us->resolver = ulcf->resolver;       /* the upstream's own first */
    }
    if (us->resolver == NULL) {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0, "no resolver defined to resolve names at "
                      "run time in upstream \"%.*s\" in %s:%lu", (int) us->name.len,
                      us->name.data, us->file, (unsigned long) us->line);
        return SWS_CONF_ERROR;
    }
    if (us->ndynamic == 0) {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0, "\"server %.*s resolve\" needs room for "
                      "run-time servers in upstream \"%.*s\" (dynamic_servers 0) in %s:%lu",
                      (int) s[0].addr.len, s[0].addr.data, (int) us->name.len,
                      us->name.data, s[0].file, (unsigned long) s[0].line);
        return SWS_CONF_ERROR;
    }
    if (us->resolver_timeout == SWS_UNSET_MSEC) {
        us->resolver_timeout = ulcf && ulcf->resolver_timeout != SWS_UNSET_MSEC
                               ? ulcf->resolver_timeout : 30000;
    }
    return SWS_CONF_OK;
}

static void
sws_ups_set_port(struct sockaddr_storage *ss, sws_uint_t port)
{
    if (ss->ss_family == AF_INET6) {
        ((struct sockaddr_in6 *) ss)->sin6_port = htons((uint16_t) port);
    } else {
        ((struct sockaddr_in *) ss)->sin_port = htons((uint16_t) port);
    }
}

static void
sws_ups_followed_change(sws_ups_followed_t *f, const struct sockaddr_storage *sa, int add)
{
    char                     text[SWS_UPS_NAME_LEN];
    sws_str_t                addr;
    sws_int_t                rc;

    addr.len = sws_ups_addr_format(sa, text, sizeof(text));
    addr.data = (u_char *) text;
    rc = add ? sws_ups_dyn_add(f->us, &addr, f->weight, (int) f->owner)
             : sws_http_upstream_server_remove(&f->us->name, &addr);
    if (rc == SWS_BUSY) {
        sws_log_error(SWS_LOG_WARN, f->log, 0, "upstream \"%.*s\" has no room for %s of "
                      "\"%.*s\" (dynamic_servers)", (int) f->us->name.len, f->us->name.data,
                      text, (int) f->host.len, f->host.data);
    } else if (rc == SWS_OK) {
        sws_log_error(SWS_LOG_NOTICE, f->log, 0, "upstream \"%.*s\": %s %s (%.*s)",
                      (int) f->us->name.len, f->us->name.data, add ? "added" : "removed",
                      text, (int) f->host.len, f->host.data);
    }
}

/* The name's addresses now: those gone leave the list (requests on them
 * finish), new ones come, those that stay are not touched (nor are their
 * connections). */
static void
sws_ups_followed_answer(void *data, const sws_resolver_result_t *res)
{
    sws_ups_followed_t      *f = data;
    struct sockaddr_storage  now[SWS_RESOLVER_MAX_ADDRS];
    sws_uint_t               i, j, n = 0;
    sws_msec_t               next;

    f->query = NULL;
    if (res->status != SWS_RESOLVE_OK && res->status != SWS_RESOLVE_NXDOMAIN) {
        /* no answer to go by: the addresses stay until one comes */
        sws_log_error(SWS_LOG_ERR, f->log, 0, "%.*s could not be resolved (%d: %s)",
                      (int) f->host.len, f->host.data, (int) res->status,
                      sws_resolver_strerror(res->status));
        sws_add_timer(&f->timer, SWS_UPS_RESOLVE_RETRY);
        return;
    }
    if (res->status == SWS_RESOLVE_NXDOMAIN) {
        sws_log_error(SWS_LOG_ERR, f->log, 0, "%.*s could not be resolved (%d: %s)",
                      (int) f->host.len, f->host.data, (int) res->status,
                      sws_resolver_strerror(res->status));
    }
    for (i = 0; i < res->naddrs && n < SWS_RESOLVER_MAX_ADDRS; i++) {
        now[n] = res->addrs[i].sockaddr;
        sws_ups_set_port(&now[n++], f->port);
    }
    for (i = 0; i < f->naddrs; i++) {
        for (j = 0; j < n && !sws_ups_same_addr(&f->addrs[i], &now[j]); j++) { /* find */ }
        if (j == n) {
            sws_ups_followed_change(f, &f->addrs[i], 0);
        }
    }
    for (j = 0; j < n; j++) {
        for (i = 0; i < f->naddrs && !sws_ups_same_addr(&f->addrs[i], &now[j]); i++) { }
        if (i == f->naddrs) {
            sws_ups_followed_change(f, &now[j], 1);
        }
    }
    memcpy(f->addrs, now, n * sizeof(now[0]));
    f->naddrs = n;
    next = res->status == SWS_RESOLVE_OK ? (sws_msec_t) res->ttl * 1000 : SWS_UPS_RESOLVE_RETRY;
    sws_add_timer(&f->timer, next > 1000 ? next : 1000);
}

static void
sws_ups_followed_ask(sws_event_t *ev)
{
    sws_ups_followed_t *f = ev->data;

    if (f->query) {
        return;
    }
    if (sws_resolver_resolve(f->us->resolver, &f->host, f->us->resolver_timeout, f->log,
                             sws_ups_followed_answer, f, &f->query)
        == SWS_ERROR)
    {
        sws_add_timer(&f->timer, SWS_UPS_RESOLVE_RETRY);
    }
}

/* Worker 0 follows the names for every worker: the list is shared. */
sws_int_t
sws_ups_resolving_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us)
{
    sws_http_upstream_server_t *s = us->resolving->elts;
    sws_ups_followed_t         *f;
    sws_uint_t                  i;
    u_char                     *colon;
    sws_int_t                   port;

    if (sws_worker != 0) {
        return SWS_OK;
    }
    for (i = 0; i < us->resolving->nelts; i++) {
        f = sws_pcalloc(cycle->pool, sizeof(sws_ups_followed_t));
        if (f == NULL) {
            return SWS_ERROR;
        }
        f->us = us;
        f->owner = i + 1;
        f->weight = s[i].weight;
        /* after a reload: the addresses the last configuration had */
        f->naddrs = sws_ups_dyn_resolved(us, f->owner, f->addrs, SWS_RESOLVER_MAX_ADDRS);
        f->log = cycle->log;
        f->host = s[i].addr;
        f->port = 80;
        colon = memchr(s[i].addr.data, ':', s[i].addr.len);
        if (colon) {
            f->host.len = (size_t) (colon - s[i].addr.data);
            port = sws_atoi(colon + 1, s[i].addr.len - f->host.len - 1);
            f->port = (sws_uint_t) port;          /* checked at configuration */
        }
        f->timer.data = f;
        f->timer.handler = sws_ups_followed_ask;
        sws_add_timer(&f->timer, 1);
    }
    return SWS_OK;
}
