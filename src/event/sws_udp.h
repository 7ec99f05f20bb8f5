/*
 * UDP sockets for QUIC: one SO_REUSEPORT socket per worker (the kernel
 * spreads the flows by their addresses), datagrams read and written in
 * batches (recvmmsg/sendmmsg), the local address of each datagram (a
 * wildcard socket must answer from the address it was reached at), UDP GSO
 * where the kernel has it, DF set (QUIC finds its path MTU itself) and the
 * ECN bits of what arrives. Nothing HTTP: HTTP/3 sits on top.
 */
#ifndef SWS_UDP_H
#define SWS_UDP_H

#include <sys/socket.h>
#include <netinet/in.h>
#include "sws_event.h"

#define SWS_UDP_BATCH       32      /* datagrams per recvmmsg/sendmmsg */
#define SWS_UDP_DGRAM_SIZE  4096    /* receive buffer of one datagram */
#define SWS_UDP_GSO_MAX     64      /* segments in one GSO train (kernel: 64) */
#define SWS_UDP_TRAIN_MAX   65507   /* bytes in one train: one IPv4 packet's */
#define SWS_UDP_READ_BATCHES 8      /* batches per read event, then others' turn */

/* One datagram, received or to send (sws_udp_dgram_t, sws_event.h). */
struct sws_udp_dgram_s {
    u_char                  *data;
    size_t                   len;
    struct sockaddr_storage  peer;
    socklen_t                peerlen;
    /* Received: the address it was sent to (IP_PKTINFO / IPV6_PKTINFO) and
     * its interface. To send: the source address to use, or ss_family 0 for
     * the socket's own. */
    struct sockaddr_storage  local;
    socklen_t                locallen;
    unsigned                 ifindex;
    /* The 2 ECN bits of the TOS / traffic class: those received, or those
     * to send (QUIC marks its packets ECT(0) to validate ECN, RFC 9000
     * 13.4); 0 sends the socket's own. */
    uint8_t                  ecn;
    /* To send: 0 for one datagram; else data is a GSO train of datagrams of
     * this size (the last may be shorter), split by the kernel, or by
     * sws_udp_send() when the kernel cannot. */
    uint16_t                 segment;
};

struct sws_udp_socket_s {
    int                      fd;
    int                      family;
    sws_udp_handler_pt       handler;
    /* The socket can take more after a send returned SWS_AGAIN. */
    void                   (*write_handler)(sws_udp_socket_t *us);
    void                    *data;           /* the protocol's */
    sws_log_t               *log;
    sws_listening_t         *listening;
    sws_connection_t        *connection;     /* worker: its epoll events */
    u_char                  *buffers;        /* SWS_UDP_BATCH receive buffers */
    struct sockaddr_storage  sockaddr;       /* bound to (getsockname) */
    socklen_t                socklen;
    uint64_t                 received;
    uint64_t                 truncated;      /* longer than a buffer: dropped */
    uint64_t                 send_errors;    /* datagrams the kernel refused */
    unsigned                 gso:1;          /* kernel takes UDP_SEGMENT */
    unsigned                 more:1;         /* read stopped at max: go on */
};

/* A non-blocking UDP socket bound to sa, with the options above (and
 * SO_REUSEPORT if reuseport); -1 after logging at emerg. */
int       sws_udp_open(const struct sockaddr *sa, socklen_t len, int reuseport,
    const char *text, sws_log_t *log);
/* 1 if the kernel takes UDP_SEGMENT on fd (asked once per socket). */
int       sws_udp_gso_probe(int fd);
/* Set up us for fd (buffers from pool). */
sws_int_t sws_udp_init(sws_udp_socket_t *us, int fd, sws_pool_t *pool, sws_log_t *log);

/* Read batches until the socket is empty or max batches were read (then
 * us->more is set), each handed to us->handler. Returns the datagrams
 * read, or SWS_ERROR. */
sws_int_t sws_udp_read(sws_udp_socket_t *us, sws_uint_t max);

/* Send n datagrams (a GSO train is one entry). Returns how many entries
 * are done: sent, or refused by the kernel (counted in send_errors and
 * logged: QUIC sees a lost packet). Fewer than n when the socket is full:
 * wait for write_handler; a train split here and partly sent is advanced
 * past what went out. SWS_ERROR (nothing sent): a train of more than
 * SWS_UDP_GSO_MAX segments or SWS_UDP_TRAIN_MAX bytes. */
sws_int_t sws_udp_send(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n);

/* A listening socket of cycle for UDP (one socket per worker, opened by
 * sws_listening_open); handler gets the datagrams in the workers. */
sws_listening_t *sws_udp_listening_create(sws_cycle_t *cycle, struct sockaddr *sa,
    socklen_t len, const sws_str_t *text, sws_udp_handler_pt handler);
/* Worker: register this worker's socket of ls with the event loop. */
sws_int_t sws_udp_listening_enable(sws_listening_t *ls, int fd, sws_cycle_t *cycle);

#endif
