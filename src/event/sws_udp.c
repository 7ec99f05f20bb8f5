/* UDP sockets for QUIC (see sws_udp.h): opening them with the options QUIC
 * wants, reading and writing batches of datagrams with their addresses, and
 * the per-worker listening sockets on the event loop. */
#define _GNU_SOURCE 1
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <arpa/inet.h>
#include "sws_udp.h"

/* Room for one pktinfo and one TOS/traffic class, the larger family's. */
#define SWS_UDP_CMSG_SIZE  (CMSG_SPACE(sizeof(struct in6_pktinfo)) \
                            + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint16_t)))

static void
sws_udp_setopt(int fd, int level, int name, int value, const char *what,
    const char *text, sws_log_t *log)
{
    /* None of these is needed to pass datagrams: say so and go on. */
    if (setsockopt(fd, level, name, &value, sizeof(value)) == -1) {
        sws_log_error(SWS_LOG_WARN, log, errno, "setsockopt(%s) on %s failed",
                      what, text);
    }
}

int
sws_udp_open(const struct sockaddr *sa, socklen_t len, int reuseport,
    const char *text, sws_log_t *log)
{
    int fd, on = 1;

    fd = socket(sa->sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "socket() %s failed", text);
        return -1;
    }
    /* No SO_REUSEADDR: for UDP it would let a second server bind the same
     * port without reuseport and steal part of the traffic. */
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "setsockopt(SO_REUSEPORT) on %s failed",
                      text);
        close(fd);
        return -1;
    }

    if (sa->sa_family == AF_INET6) {
        sws_udp_setopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY", text, log);
        sws_udp_setopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1, "IPV6_RECVPKTINFO",
                       text, log);
        sws_udp_setopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1, "IPV6_RECVTCLASS", text, log);
        /* DF on every datagram: QUIC probes the path MTU itself (RFC 9000,
         * 14.3) and must see a too-big datagram lost, not fragmented. */
        sws_udp_setopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO,
                       "IPV6_MTU_DISCOVER", text, log);
    } else if (sa->sa_family == AF_INET) {
        sws_udp_setopt(fd, IPPROTO_IP, IP_PKTINFO, 1, "IP_PKTINFO", text, log);
        sws_udp_setopt(fd, IPPROTO_IP, IP_RECVTOS, 1, "IP_RECVTOS", text, log);
        sws_udp_setopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO,
                       "IP_MTU_DISCOVER", text, log);
    }

    if (bind(fd, sa, len) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "bind() to %s failed", text);
        close(fd);
        return -1;
    }
    return fd;
}

int
sws_udp_gso_probe(int fd)
{
    int       segment = 0;
    socklen_t len = sizeof(segment);

    /* Kernels before 4.18 do not know the option at all. */
    return getsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, &len) == 0;
}

sws_int_t
sws_udp_init(sws_udp_socket_t *us, int fd, sws_pool_t *pool, sws_log_t *log)
{
    sws_memzero(us, sizeof(*us));
    us->fd = fd;
    us->log = log;
    us->socklen = sizeof(us->sockaddr);
    if (getsockname(fd, (struct sockaddr *) &us->sockaddr, &us->socklen) == -1) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "getsockname() of a UDP socket failed");
        return SWS_ERROR;
    }
    us->family = us->sockaddr.ss_family;
    us->gso = sws_udp_gso_probe(fd);
    us->buffers = sws_palloc(pool, SWS_UDP_BATCH * SWS_UDP_DGRAM_SIZE);
    return us->buffers ? SWS_OK : SWS_ERROR;
}

/* ---- reading ---- */

/* The destination address and ECN bits of a received datagram; the port is
 * the socket's (pktinfo carries only the address). */
static void
sws_udp_read_cmsgs(sws_udp_socket_t *us, struct msghdr *mh, sws_udp_dgram_t *d)
{
    struct cmsghdr      *cm;
    struct in_pktinfo   *pi;
    struct in6_pktinfo  *pi6;
    struct sockaddr_in  *sin = (struct sockaddr_in *) &d->local;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &d->local;
    int                  tclass;

    sws_memcpy(&d->local, &us->sockaddr, us->socklen);
    d->locallen = us->socklen;
    d->ifindex = 0;
    d->ecn = 0;

    for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
            pi = (struct in_pktinfo *) CMSG_DATA(cm);
            sin->sin_addr = pi->ipi_addr;
            d->ifindex = pi->ipi_ifindex;
        } else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS) {
            d->ecn = *(uint8_t *) CMSG_DATA(cm) & IPTOS_ECN_MASK;
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            pi6 = (struct in6_pktinfo *) CMSG_DATA(cm);
            sin6->sin6_addr = pi6->ipi6_addr;
            d->ifindex = pi6->ipi6_ifindex;
            /* a link-local address means nothing without its link */
            sin6->sin6_scope_id = IN6_IS_ADDR_LINKLOCAL(&pi6->ipi6_addr) ? d->ifindex : 0;
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS) {
            sws_memcpy(&tclass, CMSG_DATA(cm), sizeof(int));
            d->ecn = tclass & IPTOS_ECN_MASK;
        }
    }
}

sws_int_t
sws_udp_read(sws_udp_socket_t *us, sws_uint_t max)
{
    struct mmsghdr   msgs[SWS_UDP_BATCH];
    struct iovec     iov[SWS_UDP_BATCH];
    sws_udp_dgram_t  d[SWS_UDP_BATCH];
    u_char           control[SWS_UDP_BATCH][SWS_UDP_CMSG_SIZE]
                         __attribute__((aligned(sizeof(size_t))));
    sws_uint_t       batch, i, nd;
    sws_int_t        total = 0;
    int              n, err;

    us->more = 0;
    for (batch = 0; batch < max; batch++) {
        for (i = 0; i < SWS_UDP_BATCH; i++) {
            iov[i].iov_base = us->buffers + i * SWS_UDP_DGRAM_SIZE;
            iov[i].iov_len = SWS_UDP_DGRAM_SIZE;
            sws_memzero(&msgs[i].msg_hdr, sizeof(struct msghdr));
            msgs[i].msg_hdr.msg_name = &d[i].peer;
            msgs[i].msg_hdr.msg_namelen = sizeof(d[i].peer);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = control[i];
            msgs[i].msg_hdr.msg_controllen = sizeof(control[i]);
        }

        n = recvmmsg(us->fd, msgs, SWS_UDP_BATCH, 0, NULL);
        if (n == -1) {
            err = errno;
            if (err == EAGAIN || err == EINTR) {
                return total;
            }
            sws_log_error(SWS_LOG_ALERT, us->log, err, "recvmmsg() failed");
            return total ? total : SWS_ERROR;
        }

        /* Compact the batch to the datagrams kept, in place. */
        for (i = 0, nd = 0; i < (sws_uint_t) n; i++) {
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
                us->truncated++;
                continue;
            }
            if (nd != i) {
                sws_memcpy(&d[nd].peer, &d[i].peer, msgs[i].msg_hdr.msg_namelen);
            }
            d[nd].peerlen = msgs[i].msg_hdr.msg_namelen;
            d[nd].data = iov[i].iov_base;
            d[nd].len = msgs[i].msg_len;
            d[nd].segment = 0;
            sws_udp_read_cmsgs(us, &msgs[i].msg_hdr, &d[nd]);
            nd++;
        }
        us->received += nd;
        total += nd;
        if (nd) {
            us->handler(us, d, nd);
        }
        if (n < SWS_UDP_BATCH) {
            /* Empty: a datagram that comes now is a new edge for the event method. */
            return total;
        }
    }
    us->more = 1;
    return total;
}

/* ---- sending ---- */

typedef struct {
    struct mmsghdr   msgs[SWS_UDP_GSO_MAX];
    struct iovec     iov[SWS_UDP_GSO_MAX];
    sws_uint_t       entry[SWS_UDP_GSO_MAX];   /* message -> index in d */
    u_char           control[SWS_UDP_GSO_MAX][SWS_UDP_CMSG_SIZE]
                         __attribute__((aligned(sizeof(size_t))));
    sws_uint_t       n;
} sws_udp_out_t;

static void
sws_udp_add(sws_udp_socket_t *us, sws_udp_out_t *out, sws_udp_dgram_t *d,
    sws_uint_t entry, u_char *data, size_t len, uint16_t segment)
{
    struct msghdr       *mh = &out->msgs[out->n].msg_hdr;
    struct cmsghdr      *cm;
    struct in_pktinfo   *pi;
    struct in6_pktinfo  *pi6;
    size_t               clen = 0;
    int                  tos;

    sws_memzero(mh, sizeof(*mh));
    out->iov[out->n].iov_base = data;
    out->iov[out->n].iov_len = len;
    mh->msg_name = &d->peer;
    mh->msg_namelen = d->peerlen;
    mh->msg_iov = &out->iov[out->n];
    mh->msg_iovlen = 1;
    mh->msg_control = out->control[out->n];
    mh->msg_controllen = sizeof(out->control[out->n]);
    sws_memzero(out->control[out->n], sizeof(out->control[out->n]));
    cm = CMSG_FIRSTHDR(mh);

    /* The source address: a wildcard socket answers from the address the
     * peer used, or the peer's QUIC stack drops the answer. */
    if (d->local.ss_family == AF_INET) {
        cm->cmsg_level = IPPROTO_IP;
        cm->cmsg_type = IP_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof(struct in_pktinfo));
        pi = (struct in_pktinfo *) CMSG_DATA(cm);
        pi->ipi_spec_dst = ((struct sockaddr_in *) &d->local)->sin_addr;
        clen += CMSG_SPACE(sizeof(struct in_pktinfo));
        cm = CMSG_NXTHDR(mh, cm);
    } else if (d->local.ss_family == AF_INET6) {
        cm->cmsg_level = IPPROTO_IPV6;
        cm->cmsg_type = IPV6_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof(struct in6_pktinfo));
        pi6 = (struct in6_pktinfo *) CMSG_DATA(cm);
        pi6->ipi6_addr = ((struct sockaddr_in6 *) &d->local)->sin6_addr;
        pi6->ipi6_ifindex = ((struct sockaddr_in6 *) &d->local)->sin6_scope_id;
        clen += CMSG_SPACE(sizeof(struct in6_pktinfo));
        cm = CMSG_NXTHDR(mh, cm);
    }
    if (d->ecn) {
        tos = d->ecn & IPTOS_ECN_MASK;
        cm->cmsg_level = (us->family == AF_INET6) ? IPPROTO_IPV6 : IPPROTO_IP;
        cm->cmsg_type = (us->family == AF_INET6) ? IPV6_TCLASS : IP_TOS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        sws_memcpy(CMSG_DATA(cm), &tos, sizeof(int));
        clen += CMSG_SPACE(sizeof(int));
        cm = CMSG_NXTHDR(mh, cm);
    }
    if (segment) {
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        sws_memcpy(CMSG_DATA(cm), &segment, sizeof(uint16_t));
        clen += CMSG_SPACE(sizeof(uint16_t));
    }
    mh->msg_controllen = clen;
    if (clen == 0) {
        mh->msg_control = NULL;
    }
    out->entry[out->n++] = entry;
}

/* Messages of entry i: 1, or its segments when split here. */
static sws_uint_t
sws_udp_messages(sws_udp_socket_t *us, sws_udp_dgram_t *d)
{
    if (d->segment == 0 || d->len <= d->segment || us->gso) {
        return 1;
    }
    return (d->len + d->segment - 1) / d->segment;
}

/* What the kernel takes in one train: at most 64 segments, and one IP
 * packet's worth of bytes in all. Checked for every entry before anything
 * is sent, so that a refusal sends nothing. */
static sws_int_t
sws_udp_trains_ok(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n)
{
    sws_uint_t i;

    for (i = 0; i < n; i++) {
        if (d[i].segment == 0 || d[i].len <= d[i].segment) {
            continue;
        }
        if ((d[i].len + d[i].segment - 1) / d[i].segment > SWS_UDP_GSO_MAX
            || d[i].len > SWS_UDP_TRAIN_MAX)
        {
            sws_log_error(SWS_LOG_ALERT, us->log, 0,
                          "a UDP GSO train of %lu bytes in segments of %u is more than "
                          "%d segments or %d bytes", (unsigned long) d[i].len,
                          (unsigned) d[i].segment, SWS_UDP_GSO_MAX, SWS_UDP_TRAIN_MAX);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

sws_int_t
sws_udp_send(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n)
{
    sws_udp_out_t  out;
    sws_uint_t     done = 0, i, k, m, sent_segs;
    size_t         off, len;
    uint16_t       segment;
    int            r, err, gso_used;

    if (sws_udp_trains_ok(us, d, n) != SWS_OK) {
        return SWS_ERROR;
    }

    while (done < n) {
        /* As many whole entries as fit in one sendmmsg. */
        out.n = 0;
        gso_used = 0;
        for (i = done; i < n; i++) {
            m = sws_udp_messages(us, &d[i]);
            if (out.n + m > SWS_UDP_GSO_MAX) {
                break;
            }
            if (m == 1) {
                segment = (d[i].segment && d[i].len > d[i].segment) ? d[i].segment : 0;
                gso_used |= (segment != 0);
                sws_udp_add(us, &out, &d[i], i, d[i].data, d[i].len, segment);
                continue;
            }
            for (off = 0; off < d[i].len; off += d[i].segment) {
                len = sws_min(d[i].segment, d[i].len - off);
                sws_udp_add(us, &out, &d[i], i, d[i].data + off, len, 0);
            }
        }

        r = sendmmsg(us->fd, out.msgs, out.n, 0);
        if (r == -1) {
            err = errno;
            if (err == EINTR) {
                continue;
            }
            if (err == EAGAIN) {
                return done;
            }
            if (err == EIO && gso_used) {
                /* The device cannot segment (no checksum offload): split
                 * trains here from now on. */
                sws_log_error(SWS_LOG_INFO, us->log, err,
                              "UDP GSO refused, sending datagrams one by one");
                us->gso = 0;
                continue;
            }
            /* This datagram only: QUIC takes it as lost. */
            us->send_errors++;
            sws_log_error(SWS_LOG_INFO, us->log, err, "sendmmsg() failed");
            r = 1;
        }

        k = (sws_uint_t) r;
        if (k == out.n) {
            done = out.entry[k - 1] + 1;
            continue;
        }
        /* The kernel stopped at message k: the next round asks it why
         * (EAGAIN, or an error for that datagram). A train split here and
         * cut in the middle is advanced past its sent segments. */
        i = out.entry[k];
        for (sent_segs = 0; sent_segs < k && out.entry[k - 1 - sent_segs] == i; sent_segs++) {
            /* count them */
        }
        d[i].data += (size_t) sent_segs * d[i].segment;
        d[i].len -= (size_t) sent_segs * d[i].segment;
        done = i;
    }
    return done;
}

/* ---- listening sockets ---- */

sws_listening_t *
sws_udp_listening_create(sws_cycle_t *cycle, struct sockaddr *sa, socklen_t len,
    const sws_str_t *text, sws_udp_handler_pt handler)
{
    sws_listening_t *ls;

    ls = sws_listening_create(cycle, sa, len, text);
    if (ls == NULL) {
        return NULL;
    }
    /* One socket per worker: the kernel hashes a flow's addresses to one
     * of them, so a QUIC connection's datagrams reach the same worker. */
    ls->udp = 1;
    ls->reuseport = 1;
    ls->udp_handler = handler;
    return ls;
}

static void
sws_udp_read_event(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_udp_socket_t *us = c->data;

    /* Edge-triggered: read to the end, but give other connections a turn
     * after a few batches. */
    if (sws_udp_read(us, SWS_UDP_READ_BATCHES) != SWS_ERROR && us->more) {
        sws_post_event(ev);
    }
}

static void
sws_udp_write_event(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_udp_socket_t *us = c->data;

    if (us->write_handler) {
        us->write_handler(us);
    }
}

sws_int_t
sws_udp_listening_enable(sws_listening_t *ls, int fd, sws_cycle_t *cycle)
{
    sws_connection_t *c;
    sws_udp_socket_t *us;

    us = sws_palloc(cycle->pool, sizeof(sws_udp_socket_t));
    if (us == NULL || sws_udp_init(us, fd, cycle->pool, cycle->log) != SWS_OK) {
        return SWS_ERROR;
    }
    us->handler = ls->udp_handler;
    us->listening = ls;
    us->data = ls->servers;

    c = sws_get_connection(fd, cycle->log);
    if (c == NULL) {
        return SWS_ERROR;
    }
    c->data = us;
    c->listening = ls;
    c->log = cycle->log;
    c->read->handler = sws_udp_read_event;
    c->write->handler = sws_udp_write_event;
    us->connection = c;
    ls->connection = c;
    return sws_event_add_connection(c);
}
