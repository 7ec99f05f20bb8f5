/*
 * The socket of an upstream connection, before it connects: the local
 * address ("proxy_bind ADDRESS | off", variables allowed: evaluated per
 * request, an empty value binds nothing) and SO_KEEPALIVE
 * ("proxy_socket_keepalive on"). ADDRESS is an IPv4 or IPv6 address, with
 * a port or not ("127.0.0.2", "127.0.0.2:5000", "::1", "[::1]:5000");
 * port 0 lets the kernel choose, as nginx does. "transparent" (a
 * non-local address, which needs CAP_NET_ADMIN and routing set up for it)
 * is refused.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_http_upstream.h"

/* "addr", "addr:port", "[v6]", "[v6]:port", "v6": SWS_OK or SWS_ERROR. */
static sws_int_t
sws_ups_bind_parse(const u_char *text, size_t len, struct sockaddr_storage *ss,
    socklen_t *socklen)
{
    struct sockaddr_in   *sin = (struct sockaddr_in *) ss;
    struct sockaddr_in6  *sin6 = (struct sockaddr_in6 *) ss;
    char                  host[INET6_ADDRSTRLEN + 1];
    const u_char         *colon = NULL, *h = text, *end = text + len;
    size_t                hlen = len;
    sws_int_t             port = 0;

    if (len && text[0] == '[') {
        const u_char *close = memchr(text, ']', len);

        if (close == NULL || (close + 1 < end && close[1] != ':')) {
            return SWS_ERROR;
        }
        h = text + 1;
        hlen = (size_t) (close - h);
        colon = close + 1 < end ? close + 1 : NULL;
    } else {
        colon = memchr(text, ':', len);
        if (colon && memchr(colon + 1, ':', (size_t) (end - colon - 1)) != NULL) {
            colon = NULL;                     /* a bare IPv6 address: no port */
        }
        hlen = colon ? (size_t) (colon - text) : len;
    }
    if (colon) {
        port = sws_atoi(colon + 1, (size_t) (end - colon - 1));
        if (port < 0 || port > 65535) {
            return SWS_ERROR;
        }
    }
    if (hlen == 0 || hlen > INET6_ADDRSTRLEN) {
        return SWS_ERROR;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    sws_memzero(ss, sizeof(*ss));
    if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
        sin->sin_family = AF_INET;
        sin->sin_port = htons((uint16_t) port);
        *socklen = sizeof(*sin);
        return SWS_OK;
    }
    if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t) port);
        *socklen = sizeof(*sin6);
        return SWS_OK;
    }
    return SWS_ERROR;
}

char *
sws_ups_set_bind(sws_conf_t *cf, sws_http_upstream_conf_t *uc)
{
    sws_str_t   *arg = sws_conf_arg(cf, 1);
    const char  *err = NULL;

    if (uc->bind != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_conf_nargs(cf) == 3) {
        if (!sws_str_eq_cstr(sws_conf_arg(cf, 2), "transparent")) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) sws_conf_arg(cf, 2)->len, sws_conf_arg(cf, 2)->data);
            return SWS_CONF_ERROR;
        }
        return "transparent is not supported: a non-local source address needs "
               "routing this server does not set up";
    }
    if (sws_str_eq_cstr(arg, "off")) {
        uc->bind = 0;
        return SWS_CONF_OK;
    }
    uc->bind = 1;
    if (memchr(arg->data, '$', arg->len) != NULL) {
        uc->bind_fmt = sws_http_format_compile(sws_conf_pool(cf), arg, SWS_HTTP_ESCAPE_NONE,
                                               &err);
        if (uc->bind_fmt == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    }
    if (sws_ups_bind_parse(arg->data, arg->len, &uc->bind_sa, &uc->bind_socklen) != SWS_OK) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid address \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

/* The options of u's next connection into *opts: SWS_OK, or SWS_ERROR
 * (an address from variables that is not one: logged). */
sws_int_t
sws_ups_socket_opts(sws_http_upstream_t *u, sws_ups_socket_opts_t *opts)
{
    sws_http_upstream_conf_t  *uc = u->conf;
    sws_http_request_t        *r = u->r;
    sws_str_t                  v;

    sws_memzero(opts, sizeof(*opts));
    opts->keepalive = uc->socket_keepalive == 1;
    opts->recv_fds = uc->recv_fds;
    if (uc->bind != 1) {
        return SWS_OK;
    }
    if (uc->bind_fmt == NULL) {
        opts->local = (const struct sockaddr *) &uc->bind_sa;
        opts->local_len = uc->bind_socklen;
        return SWS_OK;
    }
    if (sws_http_format_string(uc->bind_fmt, r, r->pool, 0, NULL, 0, &v) != SWS_OK) {
        return SWS_ERROR;
    }
    if (v.len == 0) {
        return SWS_OK;                        /* empty: no bind, as nginx */
    }
    if (sws_ups_bind_parse(v.data, v.len, &opts->sa, &opts->local_len) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "invalid local address \"%.*s\"",
                      (int) sws_min(v.len, 128), v.data);
        return SWS_ERROR;
    }
    opts->local = (const struct sockaddr *) &opts->sa;
    return SWS_OK;
}

/* Before connect(): SWS_OK, or SWS_ERROR (logged). */
sws_int_t
sws_ups_socket_apply(int fd, const sws_ups_socket_opts_t *opts, sws_log_t *log)
{
    int  on = 1;

    if (opts == NULL) {
        return SWS_OK;
    }
    if (opts->keepalive
        && setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on)) == -1)
    {
        sws_log_error(SWS_LOG_ALERT, log, errno, "setsockopt(SO_KEEPALIVE) failed, ignored");
    }
    if (opts->local && bind(fd, opts->local, opts->local_len) == -1) {
        sws_log_error(SWS_LOG_CRIT, log, errno, "bind() to a local address for an upstream "
                      "connection failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}
