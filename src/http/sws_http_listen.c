/*
 * The servers' listen addresses: which servers (and which default) each
 * address:port has, its options, and the sockets behind them.
 *
 * Every distinct address:port is its own set of virtual hosts, with its
 * own default server and its own "ssl" and "http2". An IP address that is
 * not the wildcard of its port, when the port also has a wildcard address
 * and the address does not ask for a socket of its own ("bind", or a
 * socket option: reuseport, backlog=), gets no socket: the wildcard's
 * socket accepts its connections, and each connection is handed to the
 * address it was made to (getsockname). With "bind" both sockets are
 * opened, with SO_REUSEPORT, which Linux needs to let a wildcard and a
 * specific address of one port listen together; the kernel gives a
 * connection to the most specific socket. Unix sockets are their own
 * addresses, always.
 */
#include <netinet/in.h>
#include <sys/socket.h>
#include "sws_http_core.h"
#include "sws_ssl.h"

static int
sws_http_addr_is_ip(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET || ss->ss_family == AF_INET6;
}

static int
sws_http_addr_is_wildcard(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET) {
        return ((const struct sockaddr_in *) ss)->sin_addr.s_addr == htonl(INADDR_ANY);
    }
    if (ss->ss_family == AF_INET6) {
        return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *) ss)->sin6_addr);
    }
    return 0;
}

static in_port_t
sws_http_addr_port(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET ? ((const struct sockaddr_in *) ss)->sin_port
                                    : ((const struct sockaddr_in6 *) ss)->sin6_port;
}

/* The same IP address (of one family; the ports are not compared). */
static int
sws_http_addr_same_ip(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_INET) {
        return ((const struct sockaddr_in *) a)->sin_addr.s_addr
               == ((const struct sockaddr_in *) b)->sin_addr.s_addr;
    }
    return memcmp(&((const struct sockaddr_in6 *) a)->sin6_addr,
                  &((const struct sockaddr_in6 *) b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

/* A connection accepted on a wildcard socket that serves other addresses
 * too: to the address it was made to, if one of them. */
static void
sws_http_dispatch_connection(sws_connection_t *c)
{
    sws_http_addr_t         *wild = c->listening->servers;
    struct sockaddr_storage  ss;
    socklen_t                len = sizeof(ss);
    sws_uint_t               i;

    if (getsockname(c->fd, (struct sockaddr *) &ss, &len) == -1) {
        /* Not expected on an accepted socket; the wildcard's servers then. */
        sws_log_error(SWS_LOG_ALERT, c->log, errno, "getsockname() failed");
    } else {
        for (i = 0; i < wild->nvia; i++) {
            if (sws_http_addr_same_ip(&ss, &wild->via[i]->lsn->sockaddr)) {
                c->listening = wild->via[i]->listening;
                break;
            }
        }
    }
    sws_http_init_connection(c);
}

static sws_http_addr_t *
sws_http_find_addr(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf, sws_http_listen_t *lsn)
{
    sws_http_addr_t **addrs = cmcf->addrs.elts, *addr, **ap;
    sws_uint_t        i;

    for (i = 0; i < cmcf->addrs.nelts; i++) {
        if (addrs[i]->lsn->socklen == lsn->socklen && addrs[i]->quic == lsn->quic
            && memcmp(&addrs[i]->lsn->sockaddr, &lsn->sockaddr, lsn->socklen) == 0)
        {
            return addrs[i];
        }
    }
    addr = sws_pcalloc(cf->pool, sizeof(sws_http_addr_t));
    ap = sws_array_push(&cmcf->addrs);
    if (addr == NULL || ap == NULL
        || sws_array_init(&addr->names, cf->pool, 4, sizeof(sws_http_server_name_t)) != SWS_OK)
    {
        return NULL;
    }
    *ap = addr;
    addr->lsn = lsn;
    /* QUIC is TLS: $scheme and $https say so */
    addr->quic = lsn->quic;
    addr->ssl = lsn->quic;
    return addr;
}

static sws_int_t
sws_http_add_names(sws_http_addr_t *addr, sws_http_core_srv_conf_t *cscf)
{
    sws_http_server_name_t *sn;
    sws_str_t              *names = cscf->server_names.elts;
    sws_regex_t           **res = cscf->server_regexes ? cscf->server_regexes->elts : NULL;
    sws_uint_t              n, nre = 0;

    for (n = 0; n < cscf->server_names.nelts; n++) {
        /* "" (also the default, as nginx's): the requests without a Host */
        if (names[n].len == 0) {
            if (addr->no_host == NULL) {
                addr->no_host = cscf;
            }
            continue;
        }
        sn = sws_array_push(&addr->names);
        if (sn == NULL) {
            return SWS_ERROR;
        }
        sws_memzero(sn, sizeof(*sn));
        sn->server = cscf;
        sn->name = names[n];
        if (names[n].len > 1 && names[n].data[0] == '~') {
            sn->regex = res[nre++];        /* compiled in the same order */
            addr->names_matter = 1;
        } else if (names[n].len > 2 && names[n].data[names[n].len - 1] == '*') {
            sn->trailing = 1;              /* "mail.*": match by "mail." prefix */
            sn->name.len--;
        } else if (names[n].len > 2 && names[n].data[0] == '*' && names[n].data[1] == '.') {
            sn->wildcard = 1;          /* "*.x.com": match by ".x.com" suffix */
            sn->name.data++;
            sn->name.len--;
        } else if (names[n].data[0] == '.') {
            sn->wildcard = 1;          /* ".x.com": x.com and its subdomains */
            sn->bare = 1;
        }
    }
    return SWS_OK;
}

/* One server's listen on addr: its options, the default server. */
static sws_int_t
sws_http_add_listen(sws_conf_t *cf, sws_http_addr_t *addr, sws_http_listen_t *lsn,
    sws_http_core_srv_conf_t *cscf)
{
    sws_http_core_srv_conf_t *own, *other;

    /* "ssl", "http2" and "proxy_protocol" on any listen of an address apply to it; the
     * socket options (bind, reuseport, backlog=) are one listen's. */
    addr->ssl |= lsn->ssl;
    addr->http2 |= lsn->http2;
    addr->proxy_protocol |= lsn->proxy_protocol;
    if (lsn->bind) {
        if (addr->bind) {
            sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                          "duplicate listen options for %s in %s:%lu (first in %s:%lu)",
                          (char *) lsn->addr_text.data, lsn->file, (unsigned long) lsn->line,
                          addr->options->file, (unsigned long) addr->options->line);
            return SWS_ERROR;
        }
        addr->bind = 1;
        addr->options = lsn;
    }
    if (lsn->default_server) {
        if (addr->explicit_default) {
            sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                          "a duplicate default server for %s in %s:%lu",
                          (char *) lsn->addr_text.data, lsn->file, (unsigned long) lsn->line);
            return SWS_ERROR;
        }
        addr->default_server = cscf;
        addr->explicit_default = 1;
    } else if (addr->default_server == NULL) {
        addr->default_server = cscf;
    }
    if (addr->options == NULL) {
        addr->options = lsn;           /* the defaults, until one sets some */
    }
    if (addr->first && addr->first != cscf && (addr->first->own || cscf->own)) {
        /* A module's own server (admin) shares its addresses with nobody:
         * nothing of it answers on another server's address, and nothing
         * else on its. */
        own = addr->first->own ? addr->first : cscf;
        other = own == cscf ? addr->first : cscf;
        sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                      "%s in %s:%lu: an address of the %s server (in %s:%lu) is not "
                      "shared with another server (in %s:%lu)",
                      (char *) lsn->addr_text.data, lsn->file, (unsigned long) lsn->line,
                      own->own, own->file, (unsigned long) own->line, other->file,
                      (unsigned long) other->line);
        return SWS_ERROR;
    }
    if (addr->first == NULL) {
        addr->first = cscf;
    } else if (addr->first != cscf) {
        addr->names_matter = 1;
    }
    return sws_http_add_names(addr, cscf);
}

/* The wildcard address of addr's family and port, NULL if none. */
static sws_http_addr_t *
sws_http_find_wildcard(sws_http_core_main_conf_t *cmcf, sws_http_addr_t *addr)
{
    sws_http_addr_t **addrs = cmcf->addrs.elts;
    sws_uint_t        i;

    for (i = 0; i < cmcf->addrs.nelts; i++) {
        if (addrs[i]->lsn->sockaddr.ss_family == addr->lsn->sockaddr.ss_family
            && addrs[i]->quic == addr->quic
            && sws_http_addr_is_wildcard(&addrs[i]->lsn->sockaddr)
            && sws_http_addr_port(&addrs[i]->lsn->sockaddr)
               == sws_http_addr_port(&addr->lsn->sockaddr))
        {
            return addrs[i];
        }
    }
    return NULL;
}

/* A TLS connection keeps its sws_ssl_connection_t in the pool as well:
 * without room for it, an idle HTTP/1 connection over TLS took a second
 * block (0.4 KiB more per idle connection, bench/idle). */
static void
sws_http_pool_for_tls(sws_listening_t *ls)
{
    size_t size = SWS_LISTEN_POOL_SIZE + sizeof(sws_ssl_connection_t);

    ls->pool_size = sws_max(ls->pool_size, size);
}

/* addr's listening: a socket to open, or (in via) served by the wildcard's
 * socket and never opened. */
static sws_int_t
sws_http_addr_listening(sws_conf_t *cf, sws_http_addr_t *addr, sws_http_addr_t *via)
{
    sws_http_listen_t *lsn = addr->lsn;
    sws_listening_t   *ls;

    if (via) {
        ls = sws_pcalloc(cf->pool, sizeof(sws_listening_t));
        if (ls == NULL) {
            return SWS_ERROR;
        }
        ls->fd = -1;
        sws_memcpy(&ls->sockaddr, &lsn->sockaddr, lsn->socklen);
        ls->socklen = lsn->socklen;
        ls->addr_text = lsn->addr_text;
        ls->backlog = via->listening->backlog;
        ls->pool_size = via->listening->pool_size;
    } else {
        ls = sws_listening_create(cf->cycle, (struct sockaddr *) &lsn->sockaddr,
                                  lsn->socklen, &lsn->addr_text);
        if (ls == NULL) {
            return SWS_ERROR;
        }
        ls->reuseport = addr->options->reuseport;
        ls->backlog = addr->options->backlog;
        ls->ipv6only = !addr->options->ipv6only_off;
        ls->deferred = addr->options->deferred;
        ls->rcvbuf = addr->options->rcvbuf;
        ls->sndbuf = addr->options->sndbuf;
        ls->fastopen = addr->options->fastopen;
        ls->keepalive = addr->options->keepalive;
    }
    ls->ssl = addr->ssl;
    if (addr->ssl) {
        /* the socket that accepts: the wildcard's when there is one */
        sws_http_pool_for_tls(via ? via->listening : ls);
    }
    ls->handler = sws_http_init_connection;
    ls->servers = addr;
    addr->listening = ls;
    return SWS_OK;
}

sws_int_t
sws_http_build_addrs(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf)
{
    sws_http_core_srv_conf_t **servers = cmcf->servers.elts, *cscf;
    sws_http_listen_t         *lsn;
    sws_http_addr_t          **addrs, *addr, *wild;
    sws_uint_t                 s, l, i, pass;

    if (sws_array_init(&cmcf->addrs, cf->pool, 4, sizeof(sws_http_addr_t *)) != SWS_OK) {
        return SWS_ERROR;
    }
    for (s = 0; s < cmcf->servers.nelts; s++) {
        cscf = servers[s];
        lsn = cscf->listens.elts;
        for (l = 0; l < cscf->listens.nelts; l++) {
            addr = sws_http_find_addr(cf, cmcf, &lsn[l]);
            if (addr == NULL || sws_http_add_listen(cf, addr, &lsn[l], cscf) != SWS_OK) {
                return SWS_ERROR;
            }
        }
    }

    /* The sockets: the addresses that have one first (the wildcards among
     * them), then those served through a wildcard's. */
    addrs = cmcf->addrs.elts;
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i < cmcf->addrs.nelts; i++) {
            addr = addrs[i];
            if (addr->quic) {
                continue;       /* HTTP/3 opens its UDP sockets itself */
            }
            wild = NULL;
            if (sws_http_addr_is_ip(&addr->lsn->sockaddr)
                && !sws_http_addr_is_wildcard(&addr->lsn->sockaddr))
            {
                wild = sws_http_find_wildcard(cmcf, addr);
            }
            if ((pass == 0) != (wild == NULL || addr->bind)) {
                continue;
            }
            if (pass == 1) {
                if (wild->via == NULL) {
                    wild->via = sws_palloc(cf->pool,
                                           sizeof(sws_http_addr_t *) * cmcf->addrs.nelts);
                    if (wild->via == NULL) {
                        return SWS_ERROR;
                    }
                }
                wild->via[wild->nvia++] = addr;
                wild->listening->handler = sws_http_dispatch_connection;
            }
            if (sws_http_addr_listening(cf, addr, pass == 1 ? wild : NULL) != SWS_OK) {
                return SWS_ERROR;
            }
            if (pass == 0 && wild) {
                /* Its own socket next to the wildcard's: both need it. */
                addr->listening->share_port = 1;
            }
        }
    }
    /* The wildcards of bound addresses: known once every socket exists. */
    for (i = 0; i < cmcf->addrs.nelts; i++) {
        if (!addrs[i]->quic && addrs[i]->listening->share_port) {
            wild = sws_http_find_wildcard(cmcf, addrs[i]);
            wild->listening->share_port = 1;
        }
    }
    return SWS_OK;
}
