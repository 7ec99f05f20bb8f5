/*
 * UDP sockets for QUIC (src/event/sws_udp.c) on real loopback sockets:
 * batches with their peer and local addresses (a wildcard socket reached at
 * 127.0.0.2 answers from 127.0.0.2), ECN bits read and sent, IPv6 (skipped without ::1),
 * GSO trains arriving as separate datagrams with the kernel's GSO and with
 * the fallback, the reuseport group a cycle opens for two workers (both
 * bound, both get flows) and hands to the next cycle on reload, the event
 * loop delivering batches (and yielding after a turn's worth), and the
 * errors: a port in use, an address not on the machine, a datagram the
 * kernel refuses in the middle of a batch, one too long for a buffer.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/ip.h>

#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_udp.h"
#include "sws_udp_steer.h"

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_udp_log.XXXXXX";

static const char *
log_text(void)
{
    static char buf[16384];
    ssize_t     n = pread(tlog.fd, buf, sizeof(buf) - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static socklen_t
addr4(struct sockaddr_storage *ss, const char *ip, int port)
{
    struct sockaddr_in *sin = (struct sockaddr_in *) ss;

    memset(ss, 0, sizeof(*ss));
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    ck_assert_int_eq(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
    return sizeof(*sin);
}

static socklen_t
addr6(struct sockaddr_storage *ss, const char *ip, int port)
{
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) ss;

    memset(ss, 0, sizeof(*ss));
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    ck_assert_int_eq(inet_pton(AF_INET6, ip, &sin6->sin6_addr), 1);
    return sizeof(*sin6);
}

static int
port_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t               len = sizeof(ss);

    ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &ss, &len), 0);
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &ss)->sin6_port
                                          : ((struct sockaddr_in *) &ss)->sin_port);
}

static const char *
ntop(const struct sockaddr_storage *ss)
{
    static char buf[4][INET6_ADDRSTRLEN];
    static int  k;
    char       *b = buf[k++ % 4];

    if (ss->ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *) ss)->sin6_addr, b, INET6_ADDRSTRLEN);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *) ss)->sin_addr, b, INET6_ADDRSTRLEN);
    }
    return b;
}

/* A plain client socket bound to ip (port chosen by the kernel). */
static int
client(int family, const char *ip)
{
    struct sockaddr_storage ss;
    socklen_t               len;
    int                     fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    ck_assert_int_ge(fd, 0);
    len = family == AF_INET6 ? addr6(&ss, ip, 0) : addr4(&ss, ip, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *) &ss, len), 0);
    return fd;
}

static void
wait_readable(int fd)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };

    ck_assert_int_eq(poll(&p, 1, 2000), 1);
}

/* What the handler saw, copied out (the batch is valid only during it). */
#define SEEN_MAX 512
static struct {
    sws_uint_t              calls, n;
    size_t                  len[SEEN_MAX];
    char                    data[SEEN_MAX][64];
    struct sockaddr_storage peer[SEEN_MAX], local[SEEN_MAX];
    uint8_t                 ecn[SEEN_MAX];
    sws_udp_socket_t       *us[SEEN_MAX];
} seen;

static void
record(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n)
{
    sws_uint_t i;

    seen.calls++;
    for (i = 0; i < n && seen.n < SEEN_MAX; i++, seen.n++) {
        seen.len[seen.n] = d[i].len;
        memcpy(seen.data[seen.n], d[i].data, sws_min(d[i].len, (size_t) 63));
        seen.data[seen.n][sws_min(d[i].len, (size_t) 63)] = '\0';
        memcpy(&seen.peer[seen.n], &d[i].peer, d[i].peerlen);
        memcpy(&seen.local[seen.n], &d[i].local, d[i].locallen);
        seen.ecn[seen.n] = d[i].ecn;
        seen.us[seen.n] = us;
    }
}

/* Read from us until want datagrams were seen (bounded). */
static void
read_until(sws_udp_socket_t *us, sws_uint_t want)
{
    int tries;

    for (tries = 0; seen.n < want && tries < 50; tries++) {
        wait_readable(us->fd);
        ck_assert_int_ge(sws_udp_read(us, 4), 0);
    }
    ck_assert_uint_eq(seen.n, want);
}

static sws_udp_socket_t *
server(int family, const char *ip, sws_pool_t **pool)
{
    struct sockaddr_storage ss;
    socklen_t               len;
    sws_udp_socket_t       *us;
    int                     fd;

    *pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(*pool);
    len = family == AF_INET6 ? addr6(&ss, ip, 0) : addr4(&ss, ip, 0);
    fd = sws_udp_open((struct sockaddr *) &ss, len, 0, ip, &tlog);
    ck_assert_int_ge(fd, 0);
    us = sws_pcalloc(*pool, sizeof(*us));
    ck_assert_int_eq(sws_udp_init(us, fd, *pool, &tlog), SWS_OK);
    us->handler = record;
    return us;
}

START_TEST(batch_ipv4_addresses_and_answer_from_local)
{
    sws_pool_t             *pool;
    sws_udp_socket_t       *us = server(AF_INET, "0.0.0.0", &pool);
    struct sockaddr_storage to, from;
    socklen_t               tolen, fromlen;
    sws_udp_dgram_t         out[3];
    char                    msg[16], buf[64];
    int                     c1 = client(AF_INET, "127.0.0.1"), i, tos = 0x02;
    ssize_t                 n;

    memset(&seen, 0, sizeof(seen));
    /* ECT(0) on what the client sends: the server must see the ECN bits. */
    ck_assert_int_eq(setsockopt(c1, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);

    /* Ten datagrams to 127.0.0.2: the wildcard socket must learn that. */
    tolen = addr4(&to, "127.0.0.2", port_of(us->fd));
    for (i = 0; i < 10; i++) {
        snprintf(msg, sizeof(msg), "dgram %d", i);
        ck_assert_int_eq(sendto(c1, msg, strlen(msg), 0, (struct sockaddr *) &to, tolen),
                         (ssize_t) strlen(msg));
    }
    read_until(us, 10);
    ck_assert_uint_le(seen.calls, 2);           /* batches, not one by one */
    for (i = 0; i < 10; i++) {
        snprintf(msg, sizeof(msg), "dgram %d", i);
        ck_assert_str_eq(seen.data[i], msg);
        ck_assert_str_eq(ntop(&seen.peer[i]), "127.0.0.1");
        ck_assert_int_eq(ntohs(((struct sockaddr_in *) &seen.peer[i])->sin_port), port_of(c1));
        ck_assert_str_eq(ntop(&seen.local[i]), "127.0.0.2");
        ck_assert_int_eq(ntohs(((struct sockaddr_in *) &seen.local[i])->sin_port),
                         port_of(us->fd));
        ck_assert_uint_eq(seen.ecn[i], 0x02);
    }
    ck_assert_uint_eq(us->received, 10);

    /* Answers sent from the local address the peer used. */
    for (i = 0; i < 3; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].data = (u_char *) (i == 1 ? "second" : "answer");
        out[i].len = 6;
        memcpy(&out[i].peer, &seen.peer[0], sizeof(struct sockaddr_in));
        out[i].peerlen = sizeof(struct sockaddr_in);
        memcpy(&out[i].local, &seen.local[0], sizeof(struct sockaddr_in));
        out[i].locallen = sizeof(struct sockaddr_in);
    }
    ck_assert_int_eq(sws_udp_send(us, out, 3), 3);
    for (i = 0; i < 3; i++) {
        wait_readable(c1);
        fromlen = sizeof(from);
        n = recvfrom(c1, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fromlen);
        ck_assert_int_eq(n, 6);
        ck_assert_int_eq(memcmp(buf, i == 1 ? "second" : "answer", 6), 0);
        ck_assert_str_eq(ntop(&from), "127.0.0.2");
        ck_assert_int_eq(ntohs(((struct sockaddr_in *) &from)->sin_port), port_of(us->fd));
    }

    /* Without a local address: the kernel picks (127.0.0.1 towards it). */
    out[0].local.ss_family = 0;
    ck_assert_int_eq(sws_udp_send(us, out, 1), 1);
    wait_readable(c1);
    fromlen = sizeof(from);
    ck_assert_int_eq(recvfrom(c1, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fromlen), 6);
    ck_assert_str_eq(ntop(&from), "127.0.0.1");

    close(c1);
    close(us->fd);
    sws_pool_destroy(pool);
}
END_TEST

static int
have_ipv6(void)
{
    struct sockaddr_storage ss;
    socklen_t               len = addr6(&ss, "::1", 0);
    int                     fd = socket(AF_INET6, SOCK_DGRAM, 0), ok;

    if (fd == -1) {
        return 0;
    }
    ok = bind(fd, (struct sockaddr *) &ss, len) == 0;
    close(fd);
    return ok;
}

START_TEST(batch_ipv6_addresses)
{
    sws_pool_t             *pool;
    sws_udp_socket_t       *us;
    struct sockaddr_storage to, from;
    socklen_t               tolen, fromlen = sizeof(from);
    sws_udp_dgram_t         out;
    char                    buf[64];
    int                     c, i, tclass = 0x01;

    if (!have_ipv6()) {
        fprintf(stderr, "test_udp: no ::1 on this machine, IPv6 test skipped\n");
        return;
    }
    memset(&seen, 0, sizeof(seen));
    us = server(AF_INET6, "::", &pool);
    c = client(AF_INET6, "::1");
    ck_assert_int_eq(setsockopt(c, IPPROTO_IPV6, IPV6_TCLASS, &tclass, sizeof(tclass)), 0);
    tolen = addr6(&to, "::1", port_of(us->fd));
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(sendto(c, "six", 3, 0, (struct sockaddr *) &to, tolen), 3);
    }
    read_until(us, 5);
    for (i = 0; i < 5; i++) {
        ck_assert_int_eq(seen.peer[i].ss_family, AF_INET6);
        ck_assert_str_eq(ntop(&seen.peer[i]), "::1");
        ck_assert_int_eq(ntohs(((struct sockaddr_in6 *) &seen.peer[i])->sin6_port), port_of(c));
        ck_assert_str_eq(ntop(&seen.local[i]), "::1");
        ck_assert_int_eq(ntohs(((struct sockaddr_in6 *) &seen.local[i])->sin6_port),
                         port_of(us->fd));
        ck_assert_uint_eq(seen.ecn[i], 0x01);    /* ECT(1) */
    }

    memset(&out, 0, sizeof(out));
    out.data = (u_char *) "back";
    out.len = 4;
    memcpy(&out.peer, &seen.peer[0], sizeof(struct sockaddr_in6));
    out.peerlen = sizeof(struct sockaddr_in6);
    memcpy(&out.local, &seen.local[0], sizeof(struct sockaddr_in6));
    ck_assert_int_eq(sws_udp_send(us, &out, 1), 1);
    wait_readable(c);
    ck_assert_int_eq(recvfrom(c, buf, sizeof(buf), 0, (struct sockaddr *) &from, &fromlen), 4);
    ck_assert_str_eq(ntop(&from), "::1");

    close(c);
    close(us->fd);
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(ecn_marks_sent_and_read)
{
    sws_pool_t       *p1, *p2;
    sws_udp_socket_t *a, *b;
    sws_udp_dgram_t   out[3];
    int               i, fam, v6 = have_ipv6();

    for (fam = 0; fam < (v6 ? 2 : 1); fam++) {
        memset(&seen, 0, sizeof(seen));
        a = server(fam ? AF_INET6 : AF_INET, fam ? "::1" : "127.0.0.1", &p1);
        b = server(fam ? AF_INET6 : AF_INET, fam ? "::1" : "127.0.0.1", &p2);
        memset(out, 0, sizeof(out));
        for (i = 0; i < 3; i++) {
            out[i].data = (u_char *) "ecn";
            out[i].len = 3;
            out[i].peerlen = fam ? addr6(&out[i].peer, "::1", port_of(b->fd))
                                 : addr4(&out[i].peer, "127.0.0.1", port_of(b->fd));
            out[i].ecn = (uint8_t) i;            /* none, ECT(1), ECT(0) */
        }
        out[2].ecn = 0xfe;                       /* only the 2 ECN bits go out */
        ck_assert_int_eq(sws_udp_send(a, out, 3), 3);
        read_until(b, 3);
        ck_assert_uint_eq(seen.ecn[0], 0);
        ck_assert_uint_eq(seen.ecn[1], 1);
        ck_assert_uint_eq(seen.ecn[2], 2);
        close(a->fd);
        close(b->fd);
        sws_pool_destroy(p1);
        sws_pool_destroy(p2);
    }
}
END_TEST

/* A train of 9 x 1000 + 500 bytes must arrive as 10 datagrams, each with
 * its own content, whether the kernel or sws_udp_send() splits it. */
static void
gso_train(int use_kernel_gso)
{
    sws_pool_t             *pool;
    sws_udp_socket_t       *us = server(AF_INET, "127.0.0.1", &pool);
    int                     c = client(AF_INET, "127.0.0.1"), i;
    u_char                  train[9500];
    char                    buf[2048];
    sws_udp_dgram_t         out[2];
    ssize_t                 n;

    if (use_kernel_gso && !us->gso) {
        fprintf(stderr, "test_udp: the kernel has no UDP GSO, kernel train skipped\n");
        goto done;
    }
    us->gso = use_kernel_gso;
    for (i = 0; i < (int) sizeof(train); i++) {
        train[i] = (u_char) ('a' + i / 1000);
    }
    memset(out, 0, sizeof(out));
    out[0].data = train;
    out[0].len = sizeof(train);
    out[0].segment = 1000;
    out[0].peerlen = addr4(&out[0].peer, "127.0.0.1", port_of(c));
    out[1].data = (u_char *) "tail";
    out[1].len = 4;
    out[1].peerlen = addr4(&out[1].peer, "127.0.0.1", port_of(c));

    ck_assert_int_eq(sws_udp_send(us, out, 2), 2);
    for (i = 0; i < 11; i++) {
        wait_readable(c);
        n = recv(c, buf, sizeof(buf), 0);
        if (i < 9) {
            ck_assert_int_eq(n, 1000);
            ck_assert_int_eq(buf[0], 'a' + i);
            ck_assert_int_eq(buf[999], 'a' + i);
        } else if (i == 9) {
            ck_assert_int_eq(n, 500);
            ck_assert_int_eq(buf[0], 'j');
        } else {
            ck_assert_int_eq(n, 4);
            ck_assert_int_eq(memcmp(buf, "tail", 4), 0);
        }
    }
    ck_assert_int_eq(us->gso, use_kernel_gso);
done:
    close(c);
    close(us->fd);
    sws_pool_destroy(pool);
}

START_TEST(gso_train_kernel)
{
    gso_train(1);
}
END_TEST

START_TEST(gso_train_fallback)
{
    gso_train(0);
}
END_TEST

START_TEST(gso_train_too_long_refused)
{
    sws_pool_t       *pool;
    sws_udp_socket_t *us = server(AF_INET, "127.0.0.1", &pool);
    int               c = client(AF_INET, "127.0.0.1");
    static u_char     big[65600];
    sws_udp_dgram_t   out[2];
    char              buf[16];

    memset(out, 0, sizeof(out));
    out[0].data = (u_char *) "first";
    out[0].len = 5;
    out[0].peerlen = addr4(&out[0].peer, "127.0.0.1", port_of(c));
    out[1] = out[0];
    out[1].data = big;
    out[1].len = 65 * 100;
    out[1].segment = 100;                      /* 65 segments: one too many */
    ck_assert_int_eq(sws_udp_send(us, out, 2), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "more than 64 segments"));
    out[1].len = 65600;
    out[1].segment = 1200;                     /* 55 segments, but > 64 KiB */
    ck_assert_int_eq(sws_udp_send(us, out, 2), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "train of 65600 bytes"));
    /* refused before anything was sent: the first is not out either */
    ck_assert_int_eq(recv(c, buf, sizeof(buf), MSG_DONTWAIT), -1);
    ck_assert_int_eq(errno, EAGAIN);
    /* the longest train allowed goes */
    out[1].len = SWS_UDP_TRAIN_MAX;
    ck_assert_int_eq(sws_udp_send(us, out, 2), 2);
    close(c);
    close(us->fd);
    sws_pool_destroy(pool);
}
END_TEST

typedef struct {
    struct sws_cycle_s  cycle;
} fake_t;

static void
fake_cycle(fake_t *f)
{
    memset(f, 0, sizeof(*f));
    f->cycle.pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(f->cycle.pool);
    f->cycle.log = &tlog;
    ck_assert_int_eq(sws_array_init(&f->cycle.listening, f->cycle.pool, 2,
                                    sizeof(sws_listening_t *)), SWS_OK);
}

/* Any free port, found by binding to port 0 without keeping it. */
static int
free_port(void)
{
    int fd = client(AF_INET, "127.0.0.1"), port = port_of(fd);

    close(fd);
    return port;
}

START_TEST(reuseport_group_of_two_workers)
{
    fake_t                  f;
    sws_listening_t        *ls;
    struct sockaddr_storage ss;
    socklen_t               len;
    sws_str_t               text = sws_string("127.0.0.1:port");
    sws_udp_socket_t        us[2];
    int                     port = free_port(), i, c, got0 = 0, got1 = 0;

    fake_cycle(&f);
    len = addr4(&ss, "127.0.0.1", port);
    ls = sws_udp_listening_create(&f.cycle, (struct sockaddr *) &ss, len, &text, record);
    ck_assert_ptr_nonnull(ls);
    ck_assert(ls->udp && ls->reuseport);
    ck_assert_int_eq(sws_listening_open(&f.cycle, 2), SWS_OK);
    /* room for the QUIC slots of more processes, the two workers' opened */
    ck_assert_uint_eq(ls->worker_fds_n, SWS_UDP_SLOTS(2));
    ck_assert_int_eq(ls->worker_fds[2], -1);
    ck_assert_int_ne(ls->worker_fds[0], ls->worker_fds[1]);
    ck_assert_int_eq(port_of(ls->worker_fds[0]), port);
    ck_assert_int_eq(port_of(ls->worker_fds[1]), port);

    /* Flows from 64 source ports: the kernel spreads them over both. */
    memset(&seen, 0, sizeof(seen));
    for (i = 0; i < 2; i++) {
        ck_assert_int_eq(sws_udp_init(&us[i], ls->worker_fds[i], f.cycle.pool, &tlog), SWS_OK);
        us[i].handler = record;
    }
    for (i = 0; i < 64; i++) {
        c = client(AF_INET, "127.0.0.1");
        ck_assert_int_eq(sendto(c, "x", 1, 0, (struct sockaddr *) &ss, len), 1);
        close(c);
    }
    for (i = 0; i < 2; i++) {
        if (poll(&(struct pollfd) { .fd = us[i].fd, .events = POLLIN }, 1, 500) == 1) {
            ck_assert_int_ge(sws_udp_read(&us[i], 8), 1);
        }
    }
    for (i = 0; i < (int) seen.n; i++) {
        got0 += seen.us[i] == &us[0];
        got1 += seen.us[i] == &us[1];
    }
    ck_assert_int_eq(got0 + got1, 64);
    ck_assert_int_gt(got0, 0);
    ck_assert_int_gt(got1, 0);

    sws_listening_close(&f.cycle, 0);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A port free for both UDP and TCP on 127.0.0.1 (bounded tries). */
static int
free_port_both(void)
{
    struct sockaddr_storage ss;
    socklen_t               len;
    int                     tries, port, fd, ok;

    for (tries = 0; tries < 50; tries++) {
        port = free_port();
        len = addr4(&ss, "127.0.0.1", port);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        ok = bind(fd, (struct sockaddr *) &ss, len) == 0;
        close(fd);
        if (ok) {
            return port;
        }
    }
    ck_abort_msg("no port free for both UDP and TCP");
    return -1;
}

START_TEST(reload_hands_sockets_over)
{
    fake_t                  f, g;
    sws_listening_t        *ls, *ls2, *tcp;
    struct sockaddr_storage ss;
    socklen_t               len;
    sws_str_t               text = sws_string("127.0.0.1:port");
    int                     port = free_port_both(), fd0, fd1;

    fake_cycle(&f);
    len = addr4(&ss, "127.0.0.1", port);
    ls = sws_udp_listening_create(&f.cycle, (struct sockaddr *) &ss, len, &text, record);
    ck_assert_ptr_nonnull(ls);
    ck_assert_int_eq(sws_listening_open(&f.cycle, 2), SWS_OK);
    fd0 = ls->worker_fds[0];
    fd1 = ls->worker_fds[1];

    /* The next configuration: the same UDP address keeps its sockets (no
     * datagram lost to a closed socket), a TCP listener on the same port
     * number is another socket. */
    fake_cycle(&g);
    g.cycle.old_cycle = &f.cycle;
    ls2 = sws_udp_listening_create(&g.cycle, (struct sockaddr *) &ss, len, &text, record);
    tcp = sws_listening_create(&g.cycle, (struct sockaddr *) &ss, len, &text);
    ck_assert_ptr_nonnull(ls2);
    ck_assert_ptr_nonnull(tcp);
    tcp->reuseport = 1;
    ck_assert_int_eq(sws_listening_open(&g.cycle, 2), SWS_OK);
    ck_assert_int_eq(ls2->worker_fds[0], fd0);
    ck_assert_int_eq(ls2->worker_fds[1], fd1);
    ck_assert(ls->handed_over);
    ck_assert_int_ne(tcp->worker_fds[0], fd0);
    ck_assert_int_ne(tcp->worker_fds[0], fd1);

    /* The old cycle goes: the sockets stay open for the new one. */
    sws_listening_close(&f.cycle, 0);
    ck_assert_int_eq(port_of(fd0), port);
    ck_assert_int_eq(port_of(fd1), port);
    sws_listening_close(&g.cycle, 0);
    sws_pool_destroy(f.cycle.pool);
    sws_pool_destroy(g.cycle.pool);
}
END_TEST

/* A binary upgrade: the new binary takes the old one's sockets, UDP (one
 * per worker) and TCP, from SCALWS=fd;fd;, by type and address; what it
 * does not want it closes; garbage in the variable is ignored. */
START_TEST(upgrade_inherits_sockets)
{
    fake_t                  f, g;
    sws_listening_t        *ls, *tcp, *ls2, *tcp2;
    struct sockaddr_storage ss;
    socklen_t               len;
    sws_str_t               text = sws_string("127.0.0.1:port");
    int                     port = free_port_both(), fd0, fd1, fdt, extra, pfd[2];
    char                   *env, bad[64];

    fake_cycle(&f);
    len = addr4(&ss, "127.0.0.1", port);
    ls = sws_udp_listening_create(&f.cycle, (struct sockaddr *) &ss, len, &text, record);
    tcp = sws_listening_create(&f.cycle, (struct sockaddr *) &ss, len, &text);
    ck_assert_ptr_nonnull(ls);
    ck_assert_ptr_nonnull(tcp);
    ck_assert_int_eq(sws_listening_open(&f.cycle, 2), SWS_OK);
    fd0 = ls->worker_fds[0];
    fd1 = ls->worker_fds[1];
    fdt = tcp->fd;
    /* one more, that the next configuration does not have */
    extra = dup(fdt);
    ck_assert_int_ge(extra, 0);

    env = sws_listening_env(&f.cycle);
    ck_assert_ptr_nonnull(env);
    snprintf(bad, sizeof(bad), "%s%d;", env + strlen(SWS_LISTEN_ENV "="), extra);
    ck_assert_int_eq(setenv(SWS_LISTEN_ENV, bad, 1), 0);
    free(env);
    ck_assert_int_eq(sws_listening_inherit(&tlog), 4);
    ck_assert_ptr_null(getenv(SWS_LISTEN_ENV));

    fake_cycle(&g);
    ls2 = sws_udp_listening_create(&g.cycle, (struct sockaddr *) &ss, len, &text, record);
    tcp2 = sws_listening_create(&g.cycle, (struct sockaddr *) &ss, len, &text);
    ck_assert_int_eq(sws_listening_open(&g.cycle, 2), SWS_OK);
    /* the UDP sockets in their order, the TCP one: no new bind */
    ck_assert_int_eq(ls2->worker_fds[0], fd0);
    ck_assert_int_eq(ls2->worker_fds[1], fd1);
    ck_assert(tcp2->fd == fdt || tcp2->fd == extra);
    sws_listening_inherited_close();
    /* the one not taken is closed */
    ck_assert_int_eq(fcntl(tcp2->fd == fdt ? extra : fdt, F_GETFD), -1);
    ck_assert_int_eq(port_of(fd0), port);

    /* garbage and a descriptor that is no socket: logged, ignored */
    ck_assert_int_eq(pipe(pfd), 0);
    snprintf(bad, sizeof(bad), "%d;x1;", pfd[0]);
    ck_assert_int_eq(setenv(SWS_LISTEN_ENV, bad, 1), 0);
    ck_assert_int_eq(sws_listening_inherit(&tlog), 0);
    sws_listening_inherited_close();
    close(pfd[0]);
    close(pfd[1]);
    ck_assert_ptr_nonnull(strstr(log_text(), "is not a usable socket"));
    ck_assert_ptr_nonnull(strstr(log_text(), "invalid socket number"));

    sws_listening_close(&g.cycle, 0);
    sws_pool_destroy(f.cycle.pool);
    sws_pool_destroy(g.cycle.pool);
}
END_TEST

START_TEST(event_loop_delivers_batches)
{
    fake_t                  f;
    sws_listening_t        *ls;
    struct sockaddr_storage ss;
    socklen_t               len;
    sws_str_t               text = sws_string("127.0.0.1:port");
    int                     c, i, rounds, rcvbuf = 1 << 20, posted_before;

    fake_cycle(&f);
    len = addr4(&ss, "127.0.0.1", free_port());
    ls = sws_udp_listening_create(&f.cycle, (struct sockaddr *) &ss, len, &text, record);
    ck_assert_ptr_nonnull(ls);
    ck_assert_int_eq(sws_listening_open(&f.cycle, 1), SWS_OK);
    /* room for all the datagrams sent below before the loop reads any */
    ck_assert_int_eq(setsockopt(ls->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
    ck_assert_int_eq(sws_epoll_init(&f.cycle, 64), SWS_OK);
    ck_assert_int_eq(sws_connections_init(&f.cycle, 16), SWS_OK);
    sws_event_timer_init();
    ck_assert_int_eq(sws_listening_enable(&f.cycle, 0), SWS_OK);

    /* More than one turn's batches at once: the handler reads a turn's
     * worth, and posts itself for the rest. */
    memset(&seen, 0, sizeof(seen));
    c = client(AF_INET, "127.0.0.1");
    for (i = 0; i < SWS_UDP_READ_BATCHES * SWS_UDP_BATCH + 10; i++) {
        ck_assert_int_eq(sendto(c, "loop", 4, 0, (struct sockaddr *) &ss, len), 4);
    }
    ck_assert_int_le(i, SEEN_MAX);
    ck_assert_int_eq(sws_event_actions.process_events(&f.cycle, 2000), SWS_OK);
    posted_before = (int) seen.n;
    ck_assert_int_eq(posted_before, SWS_UDP_READ_BATCHES * SWS_UDP_BATCH);
    for (rounds = 0; seen.n < (sws_uint_t) i && rounds < 20; rounds++) {
        sws_event_process_posted();
        ck_assert_int_eq(sws_event_actions.process_events(&f.cycle, 0), SWS_OK);
    }
    ck_assert_uint_eq(seen.n, (sws_uint_t) i);
    ck_assert_str_eq(seen.data[0], "loop");
    ck_assert_ptr_eq(seen.us[0]->listening, ls);
    ck_assert_int_ge(rounds, 1);

    sws_listening_disable(&f.cycle, 0);
    sws_listening_close(&f.cycle, 0);
    close(c);
    sws_event_actions.done();
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(port_in_use_without_reuseport)
{
    struct sockaddr_storage ss;
    socklen_t               len;
    int                     a, b, port = free_port();

    len = addr4(&ss, "127.0.0.1", port);
    a = sws_udp_open((struct sockaddr *) &ss, len, 0, "127.0.0.1:a", &tlog);
    ck_assert_int_ge(a, 0);
    b = sws_udp_open((struct sockaddr *) &ss, len, 0, "127.0.0.1:b", &tlog);
    ck_assert_int_eq(b, -1);
    ck_assert_ptr_nonnull(strstr(log_text(), "bind() to 127.0.0.1:b failed"));
    ck_assert_ptr_nonnull(strstr(log_text(), "Address already in use"));
    /* Asking for reuseport does not join a socket that did not. */
    b = sws_udp_open((struct sockaddr *) &ss, len, 1, "127.0.0.1:c", &tlog);
    ck_assert_int_eq(b, -1);
    ck_assert_ptr_nonnull(strstr(log_text(), "bind() to 127.0.0.1:c failed"));
    close(a);
}
END_TEST

START_TEST(bad_addresses)
{
    struct sockaddr_storage ss;
    socklen_t               len;

    /* TEST-NET-1: on no interface of this machine. */
    len = addr4(&ss, "192.0.2.1", 0);
    ck_assert_int_eq(sws_udp_open((struct sockaddr *) &ss, len, 0, "192.0.2.1:0", &tlog), -1);
    ck_assert_ptr_nonnull(strstr(log_text(), "bind() to 192.0.2.1:0 failed"));
    ck_assert_ptr_nonnull(strstr(log_text(), "Cannot assign requested address"));
    /* A length too short for the family. */
    len = addr4(&ss, "127.0.0.1", 0);
    ck_assert_int_eq(sws_udp_open((struct sockaddr *) &ss, 4, 0, "short", &tlog), -1);
    ck_assert_ptr_nonnull(strstr(log_text(), "bind() to short failed"));
    /* No such family. */
    ss.ss_family = 250;
    ck_assert_int_eq(sws_udp_open((struct sockaddr *) &ss, len, 0, "family", &tlog), -1);
    ck_assert_ptr_nonnull(strstr(log_text(), "socket() family failed"));
}
END_TEST

START_TEST(refused_datagram_mid_batch_and_truncated)
{
    sws_pool_t       *pool;
    sws_udp_socket_t *us = server(AF_INET, "127.0.0.1", &pool);
    int               c = client(AF_INET, "127.0.0.1");
    sws_udp_dgram_t   out[3];
    char              buf[64];
    static u_char     big[SWS_UDP_DGRAM_SIZE + 100];
    struct sockaddr_storage to;
    socklen_t         tolen;

    memset(out, 0, sizeof(out));
    out[0].data = (u_char *) "one";
    out[0].len = 3;
    out[0].peerlen = addr4(&out[0].peer, "127.0.0.1", port_of(c));
    /* An IPv6 peer on an IPv4 socket: the kernel refuses this one only. */
    out[1].data = (u_char *) "bad";
    out[1].len = 3;
    out[1].peerlen = addr6(&out[1].peer, "::1", port_of(c));
    out[2] = out[0];
    out[2].data = (u_char *) "three";
    out[2].len = 5;

    ck_assert_int_eq(sws_udp_send(us, out, 3), 3);
    ck_assert_uint_eq(us->send_errors, 1);
    ck_assert_ptr_nonnull(strstr(log_text(), "sendmmsg() failed"));
    wait_readable(c);
    ck_assert_int_eq(recv(c, buf, sizeof(buf), 0), 3);
    wait_readable(c);
    ck_assert_int_eq(recv(c, buf, sizeof(buf), 0), 5);
    ck_assert_int_eq(memcmp(buf, "three", 5), 0);

    /* Longer than a receive buffer: dropped and counted, not cut. */
    memset(&seen, 0, sizeof(seen));
    tolen = addr4(&to, "127.0.0.1", port_of(us->fd));
    ck_assert_int_eq(sendto(c, big, sizeof(big), 0, (struct sockaddr *) &to, tolen),
                     (ssize_t) sizeof(big));
    ck_assert_int_eq(sendto(c, "small", 5, 0, (struct sockaddr *) &to, tolen), 5);
    read_until(us, 1);
    ck_assert_str_eq(seen.data[0], "small");
    ck_assert_uint_eq(us->truncated, 1);

    close(c);
    close(us->fd);
    sws_pool_destroy(pool);
}
END_TEST

static Suite *
udp_suite(void)
{
    Suite *s = suite_create("udp");
    TCase *tc = tcase_create("sockets");

    tcase_add_test(tc, batch_ipv4_addresses_and_answer_from_local);
    tcase_add_test(tc, batch_ipv6_addresses);
    tcase_add_test(tc, ecn_marks_sent_and_read);
    tcase_add_test(tc, gso_train_kernel);
    tcase_add_test(tc, gso_train_fallback);
    tcase_add_test(tc, gso_train_too_long_refused);
    tcase_add_test(tc, reuseport_group_of_two_workers);
    tcase_add_test(tc, reload_hands_sockets_over);
    tcase_add_test(tc, upgrade_inherits_sockets);
    tcase_add_test(tc, event_loop_delivers_batches);
    tcase_add_test(tc, port_in_use_without_reuseport);
    tcase_add_test(tc, bad_addresses);
    tcase_add_test(tc, refused_datagram_mid_batch_and_truncated);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    tlog.fd = mkstemp(logpath);
    if (tlog.fd == -1) {
        perror("mkstemp");
        return 1;
    }
    unlink(logpath);
    tlog.level = SWS_LOG_DEBUG;
    sws_time_update();

    sr = srunner_create(udp_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
