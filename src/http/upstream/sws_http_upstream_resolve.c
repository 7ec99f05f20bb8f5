/*
 * Resolving an upstream's servers at the end of http { } (and so at every
 * reload): "unix:/path", "[v6]:port", "host[:port]" (every IPv4 and IPv6
 * address of the name) into the group's peers, primary ones first.
 */
#include <stdio.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include "sws_http_upstream.h"

typedef struct {
    struct sockaddr_storage  sa;
    socklen_t                len;
} sws_ups_addr_t;

static sws_int_t
sws_ups_port(const u_char *p, size_t len)
{
    sws_int_t port = sws_atoi(p, len);
    return (port < 1 || port > 65535) ? SWS_ERROR : port;
}

/*
 * An address that needs no resolver: "unix:/p", "[v6][:port]",
 * "a.b.c.d[:port]". Returns 1 (sa, len and host filled: host is the part
 * before the port), 0 for anything else (a name), -1 with *err set for a
 * malformed one.
 */
sws_int_t
sws_ups_parse_literal(const sws_str_t *text, sws_uint_t default_port,
    struct sockaddr_storage *sa, socklen_t *salen, sws_str_t *host, const char **err)
{
    u_char     *p = text->data, *last = text->data + text->len, *colon, *rb;
    sws_int_t   port = (sws_int_t) default_port;
    char        buf[INET6_ADDRSTRLEN];
    size_t      n;

    sws_memzero(sa, sizeof(*sa));
    if (text->len > 5 && sws_strncasecmp(p, (u_char *) "unix:", 5) == 0) {
        struct sockaddr_un *sun = (struct sockaddr_un *) sa;
        if (text->len - 5 >= sizeof(sun->sun_path) || p[5] != '/') {
            *err = "invalid unix socket path";
            return -1;
        }
        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path, p + 5, text->len - 5);
        *salen = sizeof(struct sockaddr_un);
        sws_str_set(host, "localhost");
        return 1;
    }

    if (p < last && *p == '[') {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) sa;
        rb = memchr(p, ']', text->len);
        if (rb == NULL || (size_t) (rb - p - 1) >= sizeof(buf)) {
            *err = "invalid IPv6 address";
            return -1;
        }
        if (rb + 1 < last) {
            if (rb[1] != ':' || (port = sws_ups_port(rb + 2, last - rb - 2)) == SWS_ERROR) {
                *err = "invalid port";
                return -1;
            }
        }
        memcpy(buf, p + 1, rb - p - 1);
        buf[rb - p - 1] = '\0';
        if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) != 1) {
            *err = "invalid IPv6 address";
            return -1;
        }
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t) port);
        *salen = sizeof(struct sockaddr_in6);
        host->data = p;
        host->len = rb + 1 - p;
        return 1;
    }

    colon = memchr(p, ':', text->len);
    n = (size_t) ((colon ? colon : last) - p);
    if (n == 0 || n >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (inet_pton(AF_INET, buf, &((struct sockaddr_in *) sa)->sin_addr) != 1) {
        return 0;                        /* a name */
    }
    if (colon && (port = sws_ups_port(colon + 1, last - colon - 1)) == SWS_ERROR) {
        *err = "invalid port";
        return -1;
    }
    ((struct sockaddr_in *) sa)->sin_family = AF_INET;
    ((struct sockaddr_in *) sa)->sin_port = htons((uint16_t) port);
    *salen = sizeof(struct sockaddr_in);
    host->data = p;
    host->len = n;
    return 1;
}

/* Resolve "unix:/p", "[v6][:port]", "host[:port]" into addrs (up to max).
 * Returns the count, or -1 with *err set. host gets the name without port. */
static sws_int_t
sws_ups_resolve(sws_conf_t *cf, const sws_str_t *text, sws_uint_t default_port,
    sws_ups_addr_t *addrs, sws_uint_t max, sws_str_t *host, const char **err)
{
    struct addrinfo   hints, *res, *ai;
    char             *name;
    u_char           *p = text->data, *last = text->data + text->len, *colon;
    sws_int_t         port = (sws_int_t) default_port, n = 0;
    sws_uint_t        i;
    int               rc;

    n = sws_ups_parse_literal(text, default_port, &addrs[0].sa, &addrs[0].len, host, err);
    if (n != 0) {
        return n;
    }

    colon = memchr(p, ':', text->len);
    if (colon) {
        port = sws_ups_port(colon + 1, last - colon - 1);
        if (port == SWS_ERROR) {
            *err = "invalid port";
            return -1;
        }
        last = colon;
    }
    if (last == p) {
        *err = "no host";
        return -1;
    }
    host->data = p;
    host->len = last - p;
    name = sws_pnalloc(cf->temp_pool ? cf->temp_pool : cf->pool, host->len + 1);
    if (name == NULL) {
        *err = "out of memory";
        return -1;
    }
    memcpy(name, p, host->len);
    name[host->len] = '\0';

    sws_memzero(&hints, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    rc = getaddrinfo(name, NULL, &hints, &res);
    if (rc != 0) {
        *err = gai_strerror(rc);
        return -1;
    }
    for (ai = res; ai && (sws_uint_t) n < max; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) {
            continue;
        }
        for (i = 0; i < (sws_uint_t) n; i++) {
            if (addrs[i].len == ai->ai_addrlen
                && memcmp(&addrs[i].sa, ai->ai_addr, ai->ai_addrlen) == 0)
            {
                break;
            }
        }
        if (i < (sws_uint_t) n) {
            continue;
        }
        sws_memzero(&addrs[n], sizeof(addrs[n]));
        memcpy(&addrs[n].sa, ai->ai_addr, ai->ai_addrlen);
        addrs[n].len = ai->ai_addrlen;
        if (ai->ai_family == AF_INET) {
            ((struct sockaddr_in *) &addrs[n].sa)->sin_port = htons((uint16_t) port);
        } else {
            ((struct sockaddr_in6 *) &addrs[n].sa)->sin6_port = htons((uint16_t) port);
        }
        n++;
    }
    freeaddrinfo(res);
    if (n == 0) {
        *err = "no IPv4 or IPv6 address";
        return -1;
    }
    return n;
}

size_t
sws_ups_addr_format(const struct sockaddr_storage *ss, char *buf, size_t size)
{
    char  ip[INET6_ADDRSTRLEN];
    int   n;

    switch (ss->ss_family) {
    case AF_INET: {
        const struct sockaddr_in *sin = (const struct sockaddr_in *) ss;
        inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
        n = snprintf(buf, size, "%s:%u", ip, ntohs(sin->sin_port));
        break;
    }
    case AF_INET6: {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *) ss;
        inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
        n = snprintf(buf, size, "[%s]:%u", ip, ntohs(sin6->sin6_port));
        break;
    }
    default:
        n = snprintf(buf, size, "unix:%s", ((const struct sockaddr_un *) ss)->sun_path);
    }
    return n < 0 ? 0 : sws_min((size_t) n, size - 1);
}

sws_int_t
sws_ups_addr_text(sws_pool_t *pool, const struct sockaddr_storage *ss, sws_str_t *out)
{
    char  buf[INET6_ADDRSTRLEN + 16 + sizeof(((struct sockaddr_un *) 0)->sun_path)];

    sws_ups_addr_format(ss, buf, sizeof(buf));
    return sws_str_from_cstr(pool, out, buf);
}

#define SWS_UPS_MAX_ADDRS  64

/* Turn the "server" lines (or the implicit name) into peers. */
char *
sws_ups_init_peers(sws_conf_t *cf, sws_http_upstream_srv_t *us)
{
    sws_http_upstream_server_t *s;
    sws_http_upstream_peer_t   *peer;
    sws_ups_addr_t              addrs[SWS_UPS_MAX_ADDRS];
    sws_str_t                   host;
    sws_uint_t                  i, j, k, total = 0, pass;
    sws_int_t                   n;
    const char                 *err;
    struct {
        sws_uint_t  n;
        sws_int_t   first;
    } *res;

    if (!us->defined) {
        /* "proxy_pass http://host:port": one server, nginx's defaults. */
        s = sws_array_push(&us->servers);
        if (s == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_memzero(s, sizeof(*s));
        s->addr = us->name;
        s->weight = 1;
        s->max_fails = 1;
        s->fail_timeout = 10000;
        s->file = us->file;
        s->line = us->line;
    }

    s = us->servers.elts;
    res = sws_pcalloc(cf->pool, sizeof(*res) * us->servers.nelts);
    if (res == NULL) {
        return SWS_CONF_ERROR;
    }
    /* Resolve once to count, then fill (resolution is repeated: simple,
     * and only at start-up). A "resolve" server is followed at run time,
     * in the room for run-time servers: no configured peer. */
    for (i = 0; i < us->servers.nelts; i++) {
        if (s[i].resolve) {
            if (us->resolving == NULL) {
                us->resolving = sws_array_create(cf->pool, 2,
                                                 sizeof(sws_http_upstream_server_t));
                if (us->resolving == NULL) {
                    return SWS_CONF_ERROR;
                }
            }
            if (sws_array_push(us->resolving) == NULL) {
                return SWS_CONF_ERROR;
            }
            ((sws_http_upstream_server_t *) us->resolving->elts)[us->resolving->nelts - 1] = s[i];
            continue;
        }
        n = sws_ups_resolve(cf, &s[i].addr, us->defined ? 80 : us->port, addrs,
                            SWS_UPS_MAX_ADDRS, &host, &err);
        if (n < 0) {
            sws_log_error(SWS_LOG_EMERG, cf->log, 0, "%s in upstream \"%.*s\" in %s:%lu",
                          err, (int) s[i].addr.len, s[i].addr.data, s[i].file,
                          (unsigned long) s[i].line);
            return SWS_CONF_ERROR;
        }
        res[i].n = (sws_uint_t) n;
        total += (sws_uint_t) n;
    }

    /* Room after them for servers added at run time (sws_http_upstream_dynamic.c). */
    if (!us->ndynamic_set) {
        us->ndynamic = us->defined ? SWS_UPS_DEFAULT_DYNAMIC : 0;
    }
    us->peers = sws_pcalloc(cf->pool, sizeof(sws_http_upstream_peer_t)
                                      * (total + us->ndynamic));
    if (us->peers == NULL) {
        return SWS_CONF_ERROR;
    }
    k = 0;
    for (pass = 0; pass < 2; pass++) {           /* primary, then backup */
        for (i = 0; i < us->servers.nelts; i++) {
            if (s[i].backup != pass || s[i].resolve) {
                continue;
            }
            n = sws_ups_resolve(cf, &s[i].addr, us->defined ? 80 : us->port, addrs,
                                SWS_UPS_MAX_ADDRS, &host, &err);
            if (n < 0 || (sws_uint_t) n != res[i].n) {
                sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                              "the addresses of \"%.*s\" changed while starting",
                              (int) s[i].addr.len, s[i].addr.data);
                return SWS_CONF_ERROR;
            }
            for (j = 0; j < (sws_uint_t) n; j++) {
                peer = &us->peers[k];
                memcpy(&peer->sockaddr, &addrs[j].sa, addrs[j].len);
                peer->socklen = addrs[j].len;
                if (sws_ups_addr_text(cf->pool, &peer->sockaddr, &peer->name) != SWS_OK) {
                    return SWS_CONF_ERROR;
                }
                peer->server = s[i].addr;
                peer->host.data = sws_pstrdup(cf->pool, &host);
                peer->host.len = host.len;
                peer->weight = (sws_int_t) s[i].weight;
                peer->effective_weight = peer->weight;
                peer->max_fails = s[i].max_fails;
                peer->fail_timeout = s[i].fail_timeout;
                peer->max_conns = s[i].max_conns;
                peer->backup = s[i].backup;
                peer->down = s[i].down;
                peer->index = k;
                peer->us = us;
                k++;
            }
        }
        if (pass == 0) {
            us->nprimary = k;
        }
    }
    us->npeers = k;
    us->nall = k + us->ndynamic;
    us->nused = us->nlive = k;
    for (; k < us->nall; k++) {
        peer = &us->peers[k];
        peer->dynamic = 1;
        peer->down = 1;                  /* a free slot */
        peer->max_fails = 1;             /* a server line's defaults */
        peer->fail_timeout = 10000;
        peer->index = k;
        peer->us = us;
    }
    if (us->nprimary == 0 && us->resolving == NULL && !us->app) {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                      "upstream \"%.*s\" has only backup servers in %s:%lu",
                      (int) us->name.len, us->name.data, us->file, (unsigned long) us->line);
        return SWS_CONF_ERROR;
    }
    if (us->npeers > us->nprimary && us->method != SWS_UPS_RR
        && us->method != SWS_UPS_LEAST_CONN)
    {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                      "balancing method of upstream \"%.*s\" does not support backup "
                      "servers in %s:%lu", (int) us->name.len, us->name.data, us->file,
                      (unsigned long) us->line);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
