/*
 * Events, timers and connections of a worker's event loop (epoll, or
 * io_uring's multishot poll: the same readiness either way).
 * Connections are registered edge-triggered for both directions once, at
 * accept: handlers read/write until EAGAIN, and `ready` remembers the state.
 */
#ifndef SWS_EVENT_H
#define SWS_EVENT_H

#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <scalws/scalws.h>
#include "sws_cycle.h"

typedef void (*sws_event_handler_pt)(sws_event_t *ev);

struct sws_event_s {
    void                 *data;          /* the connection */
    sws_event_handler_pt  handler;
    sws_rbtree_node_t     timer;
    sws_queue_t           queue;         /* posted events */
    unsigned              write:1;
    unsigned              accept:1;
    unsigned              active:1;      /* registered with the event method */
    unsigned              ready:1;       /* may read/write without EAGAIN */
    unsigned              eof:1;         /* peer closed (read side) */
    unsigned              error:1;
    unsigned              timedout:1;
    unsigned              timer_set:1;
    unsigned              posted:1;
    unsigned              closed:1;
    unsigned              delayed:1;
    unsigned              instance:1;    /* detects stale events */
};

typedef ssize_t (*sws_recv_pt)(sws_connection_t *c, u_char *buf, size_t size);
/* Send as much of in as possible, at most limit bytes (0: no limit); returns
 * the first unsent link (NULL when all sent), or SWS_CHAIN_ERROR. */
typedef sws_chain_t *(*sws_send_chain_pt)(sws_connection_t *c, sws_chain_t *in, off_t limit);
#define SWS_CHAIN_ERROR  ((sws_chain_t *) SWS_ERROR)

typedef struct sws_udp_socket_s sws_udp_socket_t;   /* sws_udp.h */
typedef struct sws_udp_dgram_s  sws_udp_dgram_t;
/* A batch of datagrams read from a UDP socket; valid until it returns. */
typedef void (*sws_udp_handler_pt)(sws_udp_socket_t *us, sws_udp_dgram_t *d,
    sws_uint_t n);

struct sws_listening_s {
    int                   fd;
    int                  *worker_fds;    /* reuseport: one socket per worker */
    sws_uint_t            worker_fds_n;
    sws_uint_t            inherited_n;   /* worker_fds taken from the old cycle */
    struct sockaddr_storage sockaddr;
    socklen_t             socklen;
    sws_str_t             addr_text;     /* "127.0.0.1:8080", "[::1]:80", "unix:/p" */
    int                   backlog;
    unsigned              reuseport:1;
    unsigned              ipv6only:1;
    unsigned              unix_socket:1;
    unsigned              inherited:1;   /* taken over from the old cycle */
    unsigned              handed_over:1; /* given to the new cycle: don't close */
    unsigned              ssl:1;
    unsigned              share_port:1;  /* SO_REUSEPORT: a wildcard and a bound
                                            address of the same port (Linux
                                            refuses the overlap otherwise) */
    unsigned              udp:1;         /* datagrams (sws_udp.c), no accept */
    unsigned              deferred:1;    /* TCP_DEFER_ACCEPT (listen ... deferred) */
    unsigned              steer:2;       /* udp: SWS_UDP_STEER_* (sws_udp_steer.h) */
    int                   steer_map;     /* udp, eBPF: the group's sockets by slot */
    /* listen's socket options: 0 unset (the system's) */
    int                   rcvbuf;
    int                   sndbuf;
    int                   fastopen;
    int                   keepalive;     /* 1 on, -1 off */
    void                (*handler)(sws_connection_t *c);  /* new connection */
    sws_udp_handler_pt    udp_handler;   /* udp: each batch read */
    void                 *servers;       /* protocol data: virtual hosts */
    size_t                pool_size;     /* SWS_LISTEN_POOL_SIZE, more for TLS */
    sws_event_t          *event;         /* worker: the accept event */
    sws_connection_t     *connection;    /* worker: pseudo connection */
};

typedef struct sws_ssl_connection_s sws_ssl_connection_t;   /* sws_ssl.h */

/* A connection's pool: what it keeps for its life, in one block. An idle
 * HTTP/1 connection uses 440 bytes of it (the pool's head 88, the session
 * 152, the HTTP/1 state 80, the header buffer's sws_buf_t 64 and its
 * cleanup, each rounded up to 16); over TLS 504, with its
 * sws_ssl_connection_t (listeners with TLS add its size); an HTTP/2 one
 * takes a second block for its state. A block too small costs a second
 * block: at 384 an HTTP/1 connection took one for its buffer's 64 bytes.
 * Everything per request has its own pool. */
#define SWS_LISTEN_POOL_SIZE  448

#define SWS_PASSED_FDS  2

/* A client's address as accept() gave it: IPv4 or IPv6; of a Unix-domain
 * peer only the family (its $remote_addr is "unix:"; no path was ever
 * read). Not a sockaddr_storage (128 bytes): every connection slot has
 * one, 0.1 KiB of each idle connection. */
typedef union {
    struct sockaddr       sa;
    struct sockaddr_in    sin;
    struct sockaddr_in6   sin6;
} sws_peer_addr_t;

struct sws_connection_s {
    void                 *data;
    sws_event_t          *read;
    sws_event_t          *write;
    int                   fd;
    sws_recv_pt           recv;
    sws_send_chain_pt     send_chain;
    sws_listening_t      *listening;
    sws_pool_t           *pool;
    sws_log_t            *log;
    sws_peer_addr_t       sockaddr;
    socklen_t             socklen;
    sws_str_t             addr_text;
    off_t                 sent;
    sws_buf_t            *buffer;
    sws_ssl_connection_t *ssl;           /* TLS: set by sws_ssl_create_connection */
    void                 *event_send;    /* io_uring: its send in flight (sws_uring.c) */
    struct {                             /* io_uring: its read on the ring */
        u_char           *data;          /* what it read, not yet taken */
        void             *sqe;           /* its submission entry while queued */
        uint32_t          pos, len;
        unsigned          gen;           /* the submission it is queued for */
        uint16_t          bid;           /* the provided buffer of data */
        unsigned          armed:1;       /* a recv is queued or in flight */
        unsigned          pollout:1;     /* the poll reports room only */
        unsigned          pollquiet:1;   /* ... not even room: asked when a
                                            send finds none (roomwait) */
        unsigned          roomwait:1;    /* that one-shot poll is queued */
        int               err;           /* what it ended with: errno, -1 EOF */
    }                     event_recv;
    /* The protocol's part of a graceful worker shutdown (sws_event_loop.c):
     * called once when the worker stops accepting, it has the connection
     * finish what it serves and end when it is idle. NULL: the connection
     * ends by itself (an upstream's, or one whose protocol is not known
     * yet and asks sws_exiting when it is). */
    void                (*shutdown)(sws_connection_t *c);
    sws_queue_t           queue;         /* reusable (idle keep-alive) */
    uint64_t              number;
    sws_uint_t            requests;
    unsigned              reusable:1;
    unsigned              idle:1;
    unsigned              close:1;
    unsigned              destroyed:1;
    unsigned              error:1;
    unsigned              timedout:1;
    unsigned              unix_socket:1;
    unsigned              tcp_nodelay_set:1;
    unsigned              shared:1;
    unsigned              sendfile:1;    /* send file buffers with sendfile() */
    /* The writer accepts that send_chain counts bytes as sent before the
     * kernel has taken them, an error coming with its next send_chain
     * (io_uring's sends on the ring): a client's connection; an
     * upstream's while its request may be sent again whatever was sent. */
    unsigned              defer_send:1;
    unsigned              counted:1;     /* an accepted client: in the status counters */
    unsigned              npassed:2;     /* descriptors in passed_fd */
    /* epoll: the socket's registration asks no room (EPOLLOUT) while no
     * send waits for it (sws_epoll.c) */
    unsigned              room_quiet:1;
    /* descriptors the peer passed with its bytes (sws_unix_recv_fds),
     * oldest first, until taken (sws_connection_take_fd) or closed with
     * the connection */
    int                   passed_fd[SWS_PASSED_FDS];
};

/* ---- timers (sws_event_timer.c) ---- */
void       sws_event_timer_init(void);
void       sws_add_timer(sws_event_t *ev, sws_msec_t ms);
void       sws_del_timer(sws_event_t *ev);
/* Milliseconds until the next timer (-1: none). */
sws_msec_t sws_event_find_timer(void);
void       sws_event_expire_timers(void);
/* 1 if only timers marked cancelable remain (for graceful exit). */

/* A connection came or went: the free heap is given back after a quiet
 * second (sws_heap_trim.c); from sws_heap_trim_init on (a worker, its
 * timers set up). */
void       sws_heap_trim_init(void);
void       sws_heap_trim_note(void);

/* ---- posted events ---- */
void       sws_post_event(sws_event_t *ev);
void       sws_delete_posted_event(sws_event_t *ev);
void       sws_event_process_posted(void);

/* ---- the event method: epoll (sws_epoll.c) or io_uring (sws_uring.c) ----
 * A worker's method is chosen once, by its init function, which fills
 * sws_event_actions; the rest of the server calls the wrappers below. */
typedef struct {
    const char *name;
    /* A listening socket reports new connections only once: its accept
     * handler runs again by itself after a full batch. */
    int         edge_listening;
    sws_int_t (*add_connection)(sws_connection_t *c);
    sws_int_t (*add_listening)(sws_connection_t *c, int exclusive);
    sws_int_t (*del_connection)(sws_connection_t *c);
    /* Called before close(c->fd) of a connection; NULL where closing the
     * fd ends its registration by itself (epoll). SWS_AGAIN: the method
     * still sends what the connection wrote; it closes the fd and frees
     * the connection itself when that is done. */
    sws_int_t (*close_connection)(sws_connection_t *c);
    /* shutdown(c->fd, SHUT_WR) once what the method still sends for c is
     * sent; NULL: nothing is ever held back (epoll). */
    sws_int_t (*shutdown_write)(sws_connection_t *c);
    /* Wait up to timer ms (-1 forever) and call the handlers of ready events. */
    sws_int_t (*process_events)(sws_cycle_t *cycle, sws_msec_t timer);
    void      (*done)(void);
    /* sws_connection_peer_alive()'s answer where the method holds what
     * the peer sent (io_uring's provided buffer): 1 there, 0 gone,
     * SWS_DECLINED: the socket says. NULL: the socket always says. */
    sws_int_t (*peer_alive)(sws_connection_t *c);
} sws_event_actions_t;

extern sws_event_actions_t sws_event_actions;

sws_int_t  sws_epoll_init(sws_cycle_t *cycle, sws_uint_t nevents);
/* SWS_DECLINED, with a notice logged: the kernel refuses io_uring (or the
 * server was built without liburing); the caller falls back to epoll. */
sws_int_t  sws_uring_init(sws_cycle_t *cycle, sws_uint_t nevents);

static inline sws_int_t
sws_event_add_connection(sws_connection_t *c)
{
    return sws_event_actions.add_connection(c);
}

static inline sws_int_t
sws_event_add_listening(sws_connection_t *c, int exclusive)
{
    return sws_event_actions.add_listening(c, exclusive);
}

/* For sockets that stay open (listening sockets at graceful shutdown) or
 * that another library closes (c-ares). */
static inline sws_int_t
sws_event_del_connection(sws_connection_t *c)
{
    return sws_event_actions.del_connection(c);
}
/* The end of what a connection sends (the lingering close's
 * shutdown(SHUT_WR)): after the sends the event method still holds for it
 * (io_uring queues them and submits them with its wait). */
static inline sws_int_t
sws_connection_shutdown_write(sws_connection_t *c)
{
    if (sws_event_actions.shutdown_write != NULL) {
        return sws_event_actions.shutdown_write(c);
    }
    return shutdown(c->fd, SHUT_WR) == -1 ? SWS_ERROR : SWS_OK;
}

/* The names from when epoll was the only method: code written against
 * them builds the same. */
#define sws_epoll_add_connection  sws_event_add_connection
#define sws_epoll_del_connection  sws_event_del_connection

/* ---- connections (sws_connection.c) ---- */
sws_int_t         sws_connections_init(sws_cycle_t *cycle, sws_uint_t n);
sws_connection_t *sws_get_connection(int fd, sws_log_t *log);
void              sws_free_connection(sws_connection_t *c);
void              sws_close_connection(sws_connection_t *c);
/* Is the peer of c still there? For a handler that produces a response and
 * stops for a client that has gone. 0: it closed, or the connection
 * failed; 1: it is there, or it sent bytes nobody has read yet (a pipelined
 * request), wherever they wait: in the socket or with the event method. */
int               sws_connection_peer_alive(sws_connection_t *c);
/* Idle keep-alive connections may be closed when connections run out. */
void              sws_reusable_connection(sws_connection_t *c, int reusable);
void              sws_close_idle_connections(int all);
/* Graceful shutdown: call the shutdown hook of every connection that has
 * one; the idle ones without a hook are closed. */
void              sws_shutdown_connections(void);
sws_uint_t        sws_active_connections(void);
sws_uint_t        sws_connections_free(void);

ssize_t      sws_unix_recv(sws_connection_t *c, u_char *buf, size_t size);
/* sws_unix_recv with recvmsg(): descriptors passed with the bytes
 * (SCM_RIGHTS, a unix socket) are kept on c, at most SWS_PASSED_FDS not
 * yet taken (more are closed and logged). */
ssize_t      sws_unix_recv_fds(sws_connection_t *c, u_char *buf, size_t size);
/* The oldest kept descriptor (the caller's from here), or -1. */
int          sws_connection_take_fd(sws_connection_t *c);
/* Close the kept descriptors. */
void         sws_connection_close_fds(sws_connection_t *c);
sws_chain_t *sws_unix_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit);

/* ---- listening sockets (sws_listening.c) ---- */
sws_listening_t *sws_listening_create(sws_cycle_t *cycle, struct sockaddr *sa,
    socklen_t len, const sws_str_t *text);
/* Parse "8080", "127.0.0.1:80", "*:80", "[::1]:80", "unix:/path". */
sws_int_t sws_parse_listen_addr(sws_pool_t *pool, const sws_str_t *text,
    struct sockaddr_storage *ss, socklen_t *len, sws_str_t *normalized);
/* Open (or inherit from old) every listening socket of cycle. */
sws_int_t sws_listening_open(sws_cycle_t *cycle, sws_uint_t workers);
void      sws_listening_close(sws_cycle_t *cycle, int unlink_unix);
/* Master, stopping: close the sockets that take new connections, but keep
 * the QUIC groups (UDP) as they are until it exits: the stopping workers
 * finish their connections there, and a socket closed would move the
 * group's last one into its place, where classic BPF steering by place
 * (sws_udp_steer.c) would send another worker's datagrams. */
void      sws_listening_close_accepting(sws_cycle_t *cycle, int unlink_unix);
/* A new cycle that will not be used: close only what it opened itself. */
void      sws_listening_abandon(sws_cycle_t *cycle);
/* Binary upgrade (as nginx's NGINX=): the listening sockets, TCP and UDP,
 * that the old master handed to this process in SWS_LISTEN_ENV, "fd;fd;".
 * sws_listening_inherit() reads (and removes) the variable, checking each
 * fd is a socket: returns how many were taken (0: none or no variable).
 * sws_listening_open() then takes an inherited socket of the same type and
 * address before it opens one, and sws_listening_inherited_close() closes
 * those the configuration did not want. sws_listening_env() formats the
 * variable for the new binary: every socket of cycle, in order. */
#define SWS_LISTEN_ENV  "SCALWS"
sws_uint_t sws_listening_inherit(sws_log_t *log);
void       sws_listening_inherited_close(void);
char      *sws_listening_env(sws_cycle_t *cycle);
/* Worker: register the accept events of this worker's sockets. */
sws_int_t sws_listening_enable(sws_cycle_t *cycle, sws_uint_t worker);
/* Worker: stop accepting (graceful shutdown); keep_own: except on this
 * worker's own (reuseport) TCP sockets, which a retired worker drains. */
void      sws_listening_disable(sws_cycle_t *cycle, int keep_own);
/* Master, adaptive runtime: open worker w's missing reuseport TCP sockets;
 * close the master's copies of them. */
sws_int_t sws_listening_worker_open(sws_cycle_t *cycle, sws_uint_t w);
void      sws_listening_worker_close(sws_cycle_t *cycle, sws_uint_t w);
/* Master: open the sockets of QUIC slot `slot` (sws_udp_steer.h), and of
 * the slots below it that have none, in every UDP reuseport group. */
sws_int_t sws_listening_slot_open(sws_cycle_t *cycle, sws_uint_t slot);
/* Has every UDP reuseport group a socket of this master at slot? (While a
 * new binary runs, the slots it opened are not the old master's.) */
int       sws_listening_slot_has(sws_cycle_t *cycle, sws_uint_t slot);

/* ---- the worker loop (sws_event_loop.c) ---- */
/* CLOCK_MONOTONIC in ns. While the master measures the worker's busy time
 * (sws_worker_stat), the method's process_events() notes when its wait
 * ended. */
uint64_t sws_worker_ns(void);
extern uint64_t sws_event_woke_ns;
extern sws_uint_t sws_worker_connections;
extern volatile int sws_exiting;
/* While exiting: how long a kept connection may wait for one more request
 * (worker_shutdown_idle), counted from the end of its last response. */
extern sws_msec_t sws_exiting_idle;

#endif
