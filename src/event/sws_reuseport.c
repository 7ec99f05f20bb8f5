/*
 * The adaptive runtime and `reuseport` listening sockets: one socket per
 * worker, all in one kernel reuseport group per address, each new
 * connection put in the queue of one of them. A worker that is retired
 * must not leave a queue behind that nobody accepts. Two ways, by what the
 * kernel does (net.ipv4.tcp_migrate_req):
 *
 *  - 1 (Linux 5.14): closing a socket of the group moves its queue, and
 *    the handshakes still under way, to the others. The master closes its
 *    copy of the retired worker's socket, the worker closes its own when it
 *    stops accepting; a worker added later gets a new socket, which joins
 *    the group (sws_listening_worker_open/close, sws_listening.c).
 *  - 0: closing would reset what is queued. So every socket stays open,
 *    and a classic BPF program attached to the group (SO_ATTACH_REUSEPORT_
 *    CBPF, no privilege needed) puts each new connection in the queue of
 *    one of the first n sockets only: those of the n workers that accept.
 *    The retired worker's socket then gets nothing new; the worker goes on
 *    accepting for SWS_REUSEPORT_DRAIN (the handshakes that began before
 *    the program changed end there), until its queue is empty, then it
 *    stops.
 *
 * The program returns an index into the group's array of sockets, which
 * is in the order the sockets started listening: the master opens worker
 * i's socket i-th, and the kernel only ever moves the last one into a
 * hole, so removing sockets of workers >= n never moves those below n.
 *
 * UDP (QUIC) sockets are left alone: a program picks a socket per
 * datagram, so narrowing the set would move the flows of the workers that
 * stay too, and the retired worker's flows at once; QUIC needs a
 * selection by connection id for this.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/filter.h>
#include "sws_event.h"
#include "sws_reuseport.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF  51
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF   68
#endif

#define SWS_MIGRATE_REQ  "/proc/sys/net/ipv4/tcp_migrate_req"


int
sws_reuseport_migrates(void)
{
    char     c = '0';
    int      fd;

    fd = open(SWS_MIGRATE_REQ, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return 0;                            /* older kernel: no migration */
    }
    if (read(fd, &c, 1) != 1) {
        c = '0';
    }
    close(fd);
    return c == '1';
}


int
sws_reuseport_tcp(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->worker_fds_n > 0 && !lss[i]->udp) {
            return 1;
        }
    }
    return 0;
}


int
sws_reuseport_udp(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->worker_fds_n > 0 && lss[i]->udp) {
            return 1;
        }
    }
    return 0;
}


/* A random socket among the first n of the group: A = random % n. (A
 * random pick, not a hash: TCP picks once per connection, at its SYN.) */
static sws_int_t
sws_reuseport_attach(int fd, sws_uint_t n)
{
    struct sock_filter  code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t) (SKF_AD_OFF + SKF_AD_RANDOM)),
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, (uint32_t) n),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog   prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };

    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) == 0
           ? SWS_OK : SWS_ERROR;
}


sws_int_t
sws_reuseport_steer(sws_cycle_t *cycle, sws_uint_t n)
{
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n == 0 || ls->udp) {
            continue;
        }
        /* The group has one program: set through any of its sockets. */
        if (sws_reuseport_attach(ls->worker_fds[0], sws_max(sws_min(n, ls->worker_fds_n), 1))
            != SWS_OK)
        {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt("
                          "SO_ATTACH_REUSEPORT_CBPF) on %s failed",
                          (char *) ls->addr_text.data);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}


void
sws_reuseport_unsteer(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_uint_t        i;
    int               one = 1;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n == 0 || ls->udp || ls->worker_fds[0] == -1) {
            continue;
        }
        /* ENOENT: there was none. */
        (void) setsockopt(ls->worker_fds[0], SOL_SOCKET, SO_DETACH_REUSEPORT_BPF,
                          &one, sizeof(one));
    }
}


int
sws_reuseport_queued(sws_cycle_t *cycle, sws_uint_t worker)
{
    sws_listening_t **lss = cycle->listening.elts, *ls;
    struct tcp_info   ti;
    socklen_t         len;
    sws_uint_t        i;
    int               fd;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n == 0 || ls->udp) {
            continue;
        }
        fd = ls->worker_fds[worker % ls->worker_fds_n];
        len = sizeof(ti);
        /* A listener's tcpi_unacked is the length of its accept queue. */
        if (fd != -1 && getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0
            && ti.tcpi_unacked > 0)
        {
            return 1;
        }
    }
    return 0;
}
