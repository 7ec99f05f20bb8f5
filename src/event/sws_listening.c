/* Listening sockets: parsing listen addresses, opening them in the master
 * (inheriting the old cycle's on reload), and accepting in the workers. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include "sws_event.h"
#include "sws_conn_stats.h"
#include "sws_listening_env.h"
#include "sws_udp.h"
#include "sws_udp_steer.h"
#include "sws_process.h"

sws_listening_t *
sws_listening_create(sws_cycle_t *cycle, struct sockaddr *sa, socklen_t len,
    const sws_str_t *text)
{
    sws_listening_t *ls, **lsp;

    ls = sws_pcalloc(cycle->pool, sizeof(sws_listening_t));
    lsp = sws_array_push(&cycle->listening);
    if (ls == NULL || lsp == NULL) {
        return NULL;
    }
    *lsp = ls;
    ls->fd = -1;
    ls->steer_map = -1;
    sws_memcpy(&ls->sockaddr, sa, len);
    ls->socklen = len;
    ls->addr_text = *text;
    ls->backlog = 511;
    ls->ipv6only = 1;               /* as nginx: [::] does not take IPv4 */
    ls->unix_socket = (sa->sa_family == AF_UNIX);
    ls->pool_size = SWS_LISTEN_POOL_SIZE;
    return ls;
}

static sws_int_t
sws_parse_port(const u_char *p, size_t len)
{
    sws_int_t port = sws_atoi(p, len);
    return (port < 1 || port > 65535) ? SWS_ERROR : port;
}

sws_int_t
sws_parse_listen_addr(sws_pool_t *pool, const sws_str_t *text,
    struct sockaddr_storage *ss, socklen_t *len, sws_str_t *normalized)
{
    u_char              *p = text->data, *last = text->data + text->len, *colon;
    char                 host[INET6_ADDRSTRLEN + 1];
    sws_int_t            port;
    struct sockaddr_in  *sin;
    struct sockaddr_in6 *sin6;
    struct sockaddr_un  *sun;
    u_char               buf[INET6_ADDRSTRLEN + 16], *end;

    sws_memzero(ss, sizeof(*ss));

    if (text->len > 5 && sws_strncasecmp(p, (u_char *) "unix:", 5) == 0) {
        sun = (struct sockaddr_un *) ss;
        if (text->len - 5 >= sizeof(sun->sun_path) || text->len == 5) {
            return SWS_ERROR;
        }
        sun->sun_family = AF_UNIX;
        sws_memcpy(sun->sun_path, p + 5, text->len - 5);
        *len = sizeof(struct sockaddr_un);
        normalized->data = sws_pstrdup(pool, text);
        normalized->len = text->len;
        return normalized->data ? SWS_OK : SWS_ERROR;
    }

    if (p < last && *p == '[') {
        u_char *rb = memchr(p, ']', text->len);
        if (rb == NULL || (size_t) (rb - p - 1) > INET6_ADDRSTRLEN || rb + 2 > last || rb[1] != ':') {
            return SWS_ERROR;
        }
        port = sws_parse_port(rb + 2, last - rb - 2);
        if (port == SWS_ERROR) {
            return SWS_ERROR;
        }
        sws_memcpy(host, p + 1, rb - p - 1);
        host[rb - p - 1] = '\0';
        sin6 = (struct sockaddr_in6 *) ss;
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t) port);
        if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1) {
            return SWS_ERROR;
        }
        *len = sizeof(struct sockaddr_in6);
        end = sws_slprintf(buf, buf + sizeof(buf), "[%s]:%d", host, (int) port);

    } else {
        sin = (struct sockaddr_in *) ss;
        sin->sin_family = AF_INET;
        colon = memchr(p, ':', text->len);
        if (colon == NULL) {
            /* "8080" alone is a port on every address */
            port = sws_parse_port(p, text->len);
            sin->sin_addr.s_addr = htonl(INADDR_ANY);
        } else {
            port = sws_parse_port(colon + 1, last - colon - 1);
            if ((size_t) (colon - p) > INET6_ADDRSTRLEN) {
                return SWS_ERROR;
            }
            if (colon - p == 1 && *p == '*') {
                sin->sin_addr.s_addr = htonl(INADDR_ANY);
            } else {
                sws_memcpy(host, p, colon - p);
                host[colon - p] = '\0';
                if (strcmp(host, "localhost") == 0) {
                    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                } else if (inet_pton(AF_INET, host, &sin->sin_addr) != 1) {
                    return SWS_ERROR;
                }
            }
        }
        if (port == SWS_ERROR) {
            return SWS_ERROR;
        }
        sin->sin_port = htons((uint16_t) port);
        *len = sizeof(struct sockaddr_in);
        inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
        end = sws_slprintf(buf, buf + sizeof(buf), "%s:%d", host, (int) port);
    }

    normalized->len = end - buf;
    normalized->data = sws_pnalloc(pool, normalized->len + 1);
    if (normalized->data == NULL) {
        return SWS_ERROR;
    }
    sws_memcpy(normalized->data, buf, normalized->len);
    normalized->data[normalized->len] = '\0';
    return SWS_OK;
}

/* listen's options (rcvbuf=, sndbuf=, so_keepalive=, deferred,
 * fastopen=): a failure is logged, the socket still serves, as nginx's. */
static void
sws_listening_options(sws_cycle_t *cycle, sws_listening_t *ls, int fd)
{
    int  v;

    if (ls->rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &ls->rcvbuf, sizeof(int)) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt(SO_RCVBUF) %s failed",
                      (char *) ls->addr_text.data);
    }
    if (ls->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &ls->sndbuf, sizeof(int)) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt(SO_SNDBUF) %s failed",
                      (char *) ls->addr_text.data);
    }
    if (ls->keepalive) {
        v = ls->keepalive == 1;
        if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, sizeof(v)) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno,
                          "setsockopt(SO_KEEPALIVE) %s failed", (char *) ls->addr_text.data);
        }
    }
    if (ls->deferred) {
        v = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &v, sizeof(v)) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno,
                          "setsockopt(TCP_DEFER_ACCEPT) %s failed", (char *) ls->addr_text.data);
        }
    }
    if (ls->fastopen
        && setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN, &ls->fastopen, sizeof(int)) == -1)
    {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt(TCP_FASTOPEN) %s failed",
                      (char *) ls->addr_text.data);
    }
}

/* The datagrams of all a worker's QUIC connections arrive on one socket:
 * the kernel's default receive buffer (net.core.rmem_default, 208 KiB on
 * Debian) overflows with a few dozen busy connections, and each datagram
 * dropped there costs its connection a loss recovery (a 1 MiB download
 * then took seconds). Unless listen's rcvbuf=/sndbuf= say otherwise, both
 * buffers get SWS_UDP_BUFFER; as root (the master) past net.core.*mem_max
 * too (SO_RCVBUFFORCE), else up to it. */
#define SWS_UDP_BUFFER  (4 * 1024 * 1024)

static void
sws_listening_udp_buffers(sws_cycle_t *cycle, sws_listening_t *ls, int fd)
{
    int  rcv = ls->rcvbuf ? ls->rcvbuf : SWS_UDP_BUFFER;
    int  snd = ls->sndbuf ? ls->sndbuf : SWS_UDP_BUFFER;

    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(int)) == -1
        && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(int)) == -1)
    {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt(SO_RCVBUF) %s failed",
                      (char *) ls->addr_text.data);
    }
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(int)) == -1
        && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(int)) == -1)
    {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt(SO_SNDBUF) %s failed",
                      (char *) ls->addr_text.data);
    }
}

static int
sws_open_socket(sws_cycle_t *cycle, sws_listening_t *ls)
{
    int                 fd, on = 1;
    struct sockaddr_un *sun;
    struct stat         st;

    if (ls->udp) {
        fd = sws_udp_open((struct sockaddr *) &ls->sockaddr, ls->socklen, ls->reuseport,
                          (char *) ls->addr_text.data, cycle->log);
        if (fd != -1) {
            sws_listening_udp_buffers(cycle, ls, fd);
        }
        return fd;
    }

    fd = socket(ls->sockaddr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "socket() %s failed",
                      (char *) ls->addr_text.data);
        return -1;
    }
    if (!ls->unix_socket) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        if (ls->reuseport || ls->share_port) {
            setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
        }
        if (ls->sockaddr.ss_family == AF_INET6) {
            int v6only = ls->ipv6only;

            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
        }
        sws_listening_options(cycle, ls, fd);
    } else {
        /* A stale socket file from an earlier run: remove it, but never a
         * file that is not a socket. */
        sun = (struct sockaddr_un *) &ls->sockaddr;
        if (stat(sun->sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
            unlink(sun->sun_path);
        }
    }
    if (bind(fd, (struct sockaddr *) &ls->sockaddr, ls->socklen) == -1) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "bind() to %s failed",
                      (char *) ls->addr_text.data);
        close(fd);
        return -1;
    }
    if (ls->unix_socket) {
        sun = (struct sockaddr_un *) &ls->sockaddr;
        chmod(sun->sun_path, 0666);
    }
    if (listen(fd, ls->backlog) == -1) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "listen() to %s failed",
                      (char *) ls->addr_text.data);
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- sockets inherited from the old binary ---- */

#define SWS_INHERIT_MAX  1024

typedef struct {
    int                      fd;
    int                      type;        /* SOCK_STREAM, SOCK_DGRAM */
    int                      reuseport;
    struct sockaddr_storage  sockaddr;
    socklen_t                socklen;
} sws_inherited_t;

static sws_inherited_t  *sws_inherited;
static sws_uint_t        sws_inherited_n;

sws_uint_t
sws_listening_inherit(sws_log_t *log)
{
    const char      *env = getenv(SWS_LISTEN_ENV), *p;
    int              fd, on, rc;
    socklen_t        len;
    sws_inherited_t *in;

    if (env == NULL) {
        return 0;
    }
    sws_inherited = calloc(SWS_INHERIT_MAX, sizeof(sws_inherited_t));
    if (sws_inherited == NULL) {
        return 0;
    }
    for (p = env; (rc = sws_listening_env_next(&p, &fd)) != 0; ) {
        if (rc == -1) {
            sws_log_error(SWS_LOG_EMERG, log, 0, "invalid socket number in the "
                          SWS_LISTEN_ENV " environment variable: \"%s\", ignored", p);
            break;
        }
        if (sws_inherited_n == SWS_INHERIT_MAX) {
            sws_log_error(SWS_LOG_EMERG, log, 0, "more than %d sockets in the "
                          SWS_LISTEN_ENV " environment variable", SWS_INHERIT_MAX);
            break;
        }
        in = &sws_inherited[sws_inherited_n];
        in->fd = fd;
        in->socklen = sizeof(in->sockaddr);
        len = sizeof(in->type);
        errno = 0;
        on = 0;
        if (getsockopt(in->fd, SOL_SOCKET, SO_TYPE, &in->type, &len) == -1
            || getsockname(in->fd, (struct sockaddr *) &in->sockaddr, &in->socklen) == -1
            || (in->type != SOCK_STREAM && in->type != SOCK_DGRAM)
            || (in->type == SOCK_STREAM
                && (getsockopt(in->fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == -1 || !on)))
        {
            sws_log_error(SWS_LOG_EMERG, log, errno, "descriptor %d of the " SWS_LISTEN_ENV
                          " environment variable is not a usable socket, ignored", fd);
            continue;
        }
        len = sizeof(on);
        on = 0;
        (void) getsockopt(in->fd, SOL_SOCKET, SO_REUSEPORT, &on, &len);
        in->reuseport = on != 0;
        /* Ours now: not for the children we exec or the programs of helpers. */
        (void) fcntl(in->fd, F_SETFD, FD_CLOEXEC);
        sws_inherited_n++;
    }
    unsetenv(SWS_LISTEN_ENV);
    return sws_inherited_n;
}

static int
sws_same_address(const struct sockaddr_storage *a, socklen_t alen,
    const struct sockaddr_storage *b, socklen_t blen)
{
    if (a->ss_family != b->ss_family) {
        return 0;
    }
    if (a->ss_family == AF_UNIX) {
        /* getsockname() gives the path's length, the configuration all of it */
        return strncmp(((const struct sockaddr_un *) a)->sun_path,
                       ((const struct sockaddr_un *) b)->sun_path,
                       sizeof(((const struct sockaddr_un *) a)->sun_path)) == 0;
    }
    return alen == blen && memcmp(a, b, alen) == 0;
}

static int
sws_inherited_for(sws_inherited_t *in, sws_listening_t *ls)
{
    return in->fd != -1 && in->type == (ls->udp ? SOCK_DGRAM : SOCK_STREAM)
           && in->reuseport == (ls->reuseport || ls->share_port)
           && sws_same_address(&in->sockaddr, in->socklen, &ls->sockaddr, ls->socklen);
}

/* An inherited socket for ls (taken: no longer offered), or -1. */
static int
sws_take_inherited(sws_listening_t *ls)
{
    sws_uint_t  i;
    int         fd;

    for (i = 0; i < sws_inherited_n; i++) {
        if (sws_inherited_for(&sws_inherited[i], ls)) {
            fd = sws_inherited[i].fd;
            sws_inherited[i].fd = -1;
            return fd;
        }
    }
    return -1;
}

/* How many inherited sockets there are for ls: of a QUIC group, one per
 * slot of the old binary, in slot order (sws_listening_env). */
static sws_uint_t
sws_inherited_count(sws_listening_t *ls)
{
    sws_uint_t  i, n = 0;

    for (i = 0; i < sws_inherited_n; i++) {
        n += sws_inherited_for(&sws_inherited[i], ls);
    }
    return n;
}

void
sws_listening_inherited_close(void)
{
    sws_uint_t  i;

    for (i = 0; i < sws_inherited_n; i++) {
        if (sws_inherited[i].fd != -1) {
            close(sws_inherited[i].fd);      /* the old master keeps its own */
        }
    }
    free(sws_inherited);
    sws_inherited = NULL;
    sws_inherited_n = 0;
}

char *
sws_listening_env(sws_cycle_t *cycle)
{
    sws_uint_t        i, w, n = 0;
    sws_listening_t **lss = cycle->listening.elts, *ls;
    char             *env, *p, *last;
    size_t            size = sizeof(SWS_LISTEN_ENV "=");

    for (i = 0; i < cycle->listening.nelts; i++) {
        n += lss[i]->worker_fds_n ? lss[i]->worker_fds_n : 1;
    }
    size += n * 12;
    env = malloc(size);
    if (env == NULL) {
        return NULL;
    }
    p = env + snprintf(env, size, SWS_LISTEN_ENV "=");
    last = env + size;
    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n == 0) {
            if (ls->fd != -1) {
                p += snprintf(p, last - p, "%d;", ls->fd);
            }
            continue;
        }
        for (w = 0; w < ls->worker_fds_n; w++) {
            if (ls->worker_fds[w] != -1) {
                p += snprintf(p, last - p, "%d;", ls->worker_fds[w]);
            }
        }
    }
    return env;
}

static sws_listening_t *
sws_find_old_listening(sws_cycle_t *old, sws_listening_t *ls)
{
    sws_uint_t        i;
    sws_listening_t **olds;

    if (old == NULL) {
        return NULL;
    }
    olds = old->listening.elts;
    for (i = 0; i < old->listening.nelts; i++) {
        if (olds[i]->socklen == ls->socklen && !olds[i]->handed_over
            && olds[i]->udp == ls->udp
            && olds[i]->reuseport == ls->reuseport && olds[i]->share_port == ls->share_port
            && memcmp(&olds[i]->sockaddr, &ls->sockaddr, ls->socklen) == 0)
        {
            return olds[i];
        }
    }
    return NULL;
}

sws_int_t
sws_listening_open(sws_cycle_t *cycle, sws_uint_t workers)
{
    sws_uint_t        i, w, n;
    sws_listening_t **lss = cycle->listening.elts, *ls, *old;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        old = sws_find_old_listening(cycle->old_cycle, ls);

        if (ls->reuseport) {
            /* QUIC: a socket per slot (sws_udp_steer.h), those past the
             * first workers' opened by the master when a slot needs one;
             * a reload takes every socket of the group. */
            n = ls->udp ? sws_max(SWS_UDP_SLOTS(workers), old ? old->worker_fds_n
                                                              : sws_inherited_count(ls))
                        : workers;
            ls->worker_fds = sws_palloc(cycle->pool, sizeof(int) * n);
            if (ls->worker_fds == NULL) {
                return SWS_ERROR;
            }
            ls->worker_fds_n = n;
            for (w = 0; w < n; w++) {
                ls->worker_fds[w] = -1;
            }
            for (w = 0; w < n; w++) {
                if (ls->udp && old && w < old->worker_fds_n) {
                    ls->worker_fds[w] = old->worker_fds[w];
                    ls->inherited_n = w + 1;
                    continue;
                }
                if (ls->udp && !old) {
                    /* A new binary takes every slot's socket of the old
                     * one: the old binary's workers still use theirs,
                     * and a closed one would reorder the group. */
                    ls->worker_fds[w] = sws_take_inherited(ls);
                    if (ls->worker_fds[w] != -1) {
                        continue;
                    }
                }
                if (w >= workers || (ls->udp && old)) {
                    continue;
                }
                if (old && w < old->worker_fds_n) {
                    ls->worker_fds[w] = old->worker_fds[w];
                    ls->inherited_n = w + 1;
                    continue;
                }
                ls->worker_fds[w] = old ? -1 : sws_take_inherited(ls);
                if (ls->worker_fds[w] != -1) {
                    continue;
                }
                ls->worker_fds[w] = sws_open_socket(cycle, ls);
                if (ls->worker_fds[w] == -1) {
                    return SWS_ERROR;
                }
            }
            if (old) {
                old->handed_over = 1;
                old->inherited_n = ls->inherited_n;   /* how many it gave */
                ls->inherited = 1;
                /* the group's program stays: its map too */
                ls->steer = old->steer;
                ls->steer_map = old->steer_map;
            }
            ls->fd = ls->worker_fds[0];
            continue;
        }

        if (old) {
            ls->fd = old->fd;
            ls->inherited = 1;
            old->handed_over = 1;
            continue;
        }
        ls->fd = sws_take_inherited(ls);
        if (ls->fd != -1) {
            continue;
        }
        ls->fd = sws_open_socket(cycle, ls);
        if (ls->fd == -1) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* The adaptive runtime with tcp_migrate_req (sws_reuseport.c): worker w's
 * TCP sockets are opened before it starts, and the master's copies closed
 * when it is retired (the kernel moves their queues to the others once
 * the worker has closed its copies too). UDP sockets stay. */
sws_int_t
sws_listening_worker_open(sws_cycle_t *cycle, sws_uint_t w)
{
    sws_uint_t        i;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->udp || w >= ls->worker_fds_n || ls->worker_fds[w] != -1) {
            continue;
        }
        ls->worker_fds[w] = sws_open_socket(cycle, ls);
        if (ls->worker_fds[w] == -1) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

void
sws_listening_worker_close(sws_cycle_t *cycle, sws_uint_t w)
{
    sws_uint_t        i;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        /* Worker 0 always runs (worker_processes_min >= 1): ls->fd is its. */
        if (ls->udp || w == 0 || w >= ls->worker_fds_n || ls->worker_fds[w] == -1) {
            continue;
        }
        close(ls->worker_fds[w]);
        ls->worker_fds[w] = -1;
    }
}

int
sws_listening_slot_has(sws_cycle_t *cycle, sws_uint_t slot)
{
    sws_uint_t        i;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->udp && ls->worker_fds_n != 0
            && (slot >= ls->worker_fds_n || ls->worker_fds[slot] == -1))
        {
            return 0;
        }
    }
    return 1;
}

sws_int_t
sws_listening_slot_open(sws_cycle_t *cycle, sws_uint_t slot)
{
    sws_uint_t        i, s;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (!ls->udp || ls->worker_fds_n == 0) {
            continue;
        }
        if (slot >= ls->worker_fds_n) {
            return SWS_ERROR;
        }
        /* In slot order: the index of a socket in its group is its slot. */
        for (s = 0; s <= slot; s++) {
            if (ls->worker_fds[s] != -1) {
                continue;
            }
            ls->worker_fds[s] = sws_open_socket(cycle, ls);
            if (ls->worker_fds[s] == -1) {
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}

static void
sws_listening_close_some(sws_cycle_t *cycle, int unlink_unix, int udp)
{
    sws_uint_t        i, w;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->udp && !udp) {
            continue;
        }
        if (ls->steer_map != -1 && !ls->handed_over) {
            close(ls->steer_map);
            ls->steer_map = -1;
        }
        if (ls->handed_over) {
            /* The new cycle owns the sockets; close only the extra
             * reuseport sockets it did not take. */
            for (w = ls->inherited_n; w < ls->worker_fds_n; w++) {
                if (ls->worker_fds[w] != -1) {
                    close(ls->worker_fds[w]);
                }
            }
            continue;
        }
        if (ls->worker_fds_n) {
            for (w = 0; w < ls->worker_fds_n; w++) {
                if (ls->worker_fds[w] != -1) {
                    close(ls->worker_fds[w]);
                    ls->worker_fds[w] = -1;
                }
            }
        } else if (ls->fd != -1) {
            close(ls->fd);
        } else {
            continue;          /* closed already */
        }
        if (unlink_unix && ls->unix_socket) {
            unlink(((struct sockaddr_un *) &ls->sockaddr)->sun_path);
        }
        ls->fd = -1;
    }
}

void
sws_listening_close(sws_cycle_t *cycle, int unlink_unix)
{
    sws_listening_close_some(cycle, unlink_unix, 1);
}

void
sws_listening_close_accepting(sws_cycle_t *cycle, int unlink_unix)
{
    sws_listening_close_some(cycle, unlink_unix, 0);
}

void
sws_listening_abandon(sws_cycle_t *cycle)
{
    sws_uint_t        i, w;
    sws_listening_t **lss = cycle->listening.elts, *ls;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n) {
            for (w = ls->inherited ? ls->inherited_n : 0; w < ls->worker_fds_n; w++) {
                if (ls->worker_fds[w] != -1) {
                    close(ls->worker_fds[w]);
                }
            }
        } else if (!ls->inherited && ls->fd != -1) {
            close(ls->fd);
        }
        ls->fd = -1;
    }
}

/* ---- worker side ---- */

#define SWS_ACCEPT_BATCH 64

static void
sws_event_accept(sws_event_t *ev)
{
    sws_connection_t *lc = ev->data, *c;
    sws_listening_t  *ls = lc->listening;
    struct sockaddr_storage sa;
    socklen_t         len;
    sws_uint_t        i;
    int               fd, err;

    for (i = 0; i < SWS_ACCEPT_BATCH; i++) {
        len = sizeof(sa);
        fd = accept4(lc->fd, (struct sockaddr *) &sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd == -1) {
            err = errno;
            if (err == EAGAIN || err == ECONNABORTED || err == EINTR) {
                return;
            }
            sws_log_error((err == EMFILE || err == ENFILE) ? SWS_LOG_CRIT : SWS_LOG_ALERT,
                          lc->log, err, "accept4() failed");
            return;
        }
        sws_conn_stat(accepted, 1);

        c = sws_get_connection(fd, lc->log);
        if (c == NULL) {
            close(fd);
            return;
        }
        sws_conn_stat(handled, 1);
        sws_conn_stat(active, 1);
        c->counted = 1;                 /* closing it counts it out */
        c->pool = sws_pool_create(ls->pool_size, lc->log);
        if (c->pool == NULL) {
            sws_close_connection(c);
            return;
        }
        if (sa.ss_family != AF_INET && sa.ss_family != AF_INET6) {
            len = sizeof(sa_family_t);          /* a Unix socket's peer */
        }
        sws_memcpy(&c->sockaddr, &sa, sws_min((size_t) len, sizeof(c->sockaddr)));
        c->socklen = (socklen_t) sws_min((size_t) len, sizeof(c->sockaddr));
        c->listening = ls;
        c->unix_socket = ls->unix_socket;
        if (sws_event_add_connection(c) != SWS_OK) {
            sws_pool_destroy(c->pool);
            sws_close_connection(c);
            continue;
        }
        ls->handler(c);
    }
    if (sws_event_actions.edge_listening) {
        /* A full batch: more may wait, of which no new report comes. */
        sws_post_event(ev);
    }
}

sws_int_t
sws_listening_enable(sws_cycle_t *cycle, sws_uint_t worker)
{
    sws_uint_t        i, w;
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_connection_t *c;
    int               fd;

    sws_udp_steer_worker(cycle);
    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        fd = ls->worker_fds_n ? ls->worker_fds[worker % ls->worker_fds_n] : ls->fd;
        if (ls->udp && sws_worker_slot < ls->worker_fds_n
            && ls->worker_fds[sws_worker_slot] != -1)
        {
            fd = ls->worker_fds[sws_worker_slot];     /* sws_udp_steer.h */
        }
        /* The other workers' sockets are theirs: a copy here would keep a
         * retired worker's socket in its group, with a queue nobody
         * accepts (sws_reuseport.c). */
        for (w = 0; w < ls->worker_fds_n; w++) {
            if (ls->worker_fds[w] != fd && ls->worker_fds[w] != -1) {
                close(ls->worker_fds[w]);
                ls->worker_fds[w] = -1;
            }
        }
        if (ls->worker_fds_n) {
            ls->fd = fd;
        }
        if (ls->udp) {
            if (sws_udp_listening_enable(ls, fd, cycle) != SWS_OK) {
                return SWS_ERROR;
            }
            continue;
        }
        c = sws_get_connection(fd, cycle->log);
        if (c == NULL) {
            return SWS_ERROR;
        }
        c->listening = ls;
        c->log = cycle->log;
        c->read->handler = sws_event_accept;
        c->read->accept = 1;
        ls->connection = c;
        if (sws_event_add_listening(c, ls->worker_fds_n == 0) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

void
sws_listening_disable(sws_cycle_t *cycle, int keep_own)
{
    sws_uint_t        i;
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_connection_t *c;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        c = ls->connection;
        if (c == NULL || (keep_own && ls->worker_fds_n > 0 && !ls->udp)) {
            continue;
        }
        if (ls->udp && c->shutdown != NULL) {
            /* QUIC: the connections of this socket are still served
             * through it; its protocol closes it when they are done. */
            continue;
        }
        /* Close this worker's copy: the master keeps the socket open for the
         * other (and the next) workers. */
        sws_event_del_connection(c);
        sws_close_connection(c);
        ls->connection = NULL;
    }
}
