/*
 * The io_uring method (events { use io_uring; }), on liburing.
 *
 * Readiness as with epoll, so that handlers, `ready` flags and the recv /
 * send / sendfile calls stay what they are: each connection has one
 * multishot poll (IORING_OP_POLL_ADD with IORING_POLL_ADD_MULTI, which is
 * edge-triggered like EPOLLET) for both directions, its cookie c|instance.
 * What a loop iteration asks of the kernel (new polls, removals) is queued
 * as submissions and handed over with the wait, in one io_uring_enter();
 * the loop's timer is that wait's timeout, and its signal mask the same as
 * epoll_pwait's.
 *
 * A poll holds a reference to its socket: close() of the fd alone would not
 * end the TCP connection. Closing a registered connection therefore queues
 * the cancellation of its poll (close_connection), and the socket goes when
 * that is submitted, at the end of the iteration, like everything else. A
 * poll queued for an fd closed before the submission resolves the number at
 * submission: the cancellation queued behind it ends it whatever it found.
 *
 * Sends: a plain connection's send_chain (a client's; an upstream's while
 * c->defer_send says its request may go again whatever of it was sent)
 * copies a chain that is all memory
 * and fits SWS_URING_SEND_BUF into a buffer of the method and queues an
 * IORING_OP_SEND, submitted with the wait; the writer goes on as if send()
 * had taken it all. What that promise needs is kept here: the copy lives
 * until the send is done; a second write while it is in flight waits for
 * it (write->ready = 0, the write handler is called when it completes), so
 * the bytes keep their order; shutdown(SHUT_WR)
 * (sws_connection_shutdown_write) and close come after it; an error it
 * ends with is the writer's next send_chain's (write->error, logged as
 * send()'s). The send is MSG_DONTWAIT, so that it completes within the
 * io_uring_enter() that submits it: the wait counts its completion and does
 * not end for it unless somebody waits for it. What a full socket did not
 * take is sent by a send that waits for room (MSG_WAITALL); a connection
 * closed meanwhile keeps its socket (and its slot in the connection table,
 * so that a graceful exit waits for it) until that is done or
 * SWS_URING_SEND_TIMEOUT has passed.
 *
 * Reads: a plain client connection's c->recv is the method's too (an
 * upstream's over TCP or a unix socket as well, unless it reads passed
 * descriptors with recvmsg()). Once a
 * read has drained the socket, a single recv into a provided buffer (a ring
 * of SWS_URING_RBUFS shared by the worker's connections) is queued and
 * submitted with the wait; its completion keeps the buffer on the
 * connection and runs the read handler, and c->recv copies out of it. A
 * connection holds one buffer at most, an idle one none. An SQE names its
 * file by number, resolved at the submission: a recv still queued when its
 * connection is closed becomes a no-op (sws_uring_recv_cancel), or it
 * would read the socket of whatever connection took that number in the
 * same iteration.
 *
 * A listening socket's poll is edge-triggered too: its handler, which
 * accepts a batch at a time, runs again by itself after a full batch
 * (sws_event_accept). A multishot accept was tried and left out: with it,
 * connections left the accept queue while the only worker was stopped
 * (test_adaptive_burst.py), held in a ring that no other worker can take
 * them from, and the adaptive runtime no longer saw them waiting.
 */
#include <stdlib.h>
#include <unistd.h>
#include "sws_event.h"
#include "sws_event_dispatch.h"
#include "sws_process.h"
/* SWS_HAVE_LIBURING */
#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

#if (SWS_HAVE_LIBURING)

#include <liburing.h>

/* The wait's timeout when no timer is set. */
#define SWS_URING_FOREVER_SEC  3600

/* user_data of a send: its state | SWS_URING_SEND_TAG (a connection's
 * cookie is c | instance, c aligned). */
#define SWS_URING_SEND_TAG      2
/* What a send copies at most: a response head with a small body. */
#define SWS_URING_SEND_BUF      16384
/* How long a closed connection's socket is kept to send the rest. */
#define SWS_URING_SEND_TIMEOUT  60000

/* Reads: a recv into a buffer of the provided buffer ring (group
 * SWS_URING_BGID), user_data c | instance | SWS_URING_RECV_TAG. */
#define SWS_URING_RECV_TAG      4
/* user_data of the update that takes POLLIN off a connection's poll. */
#define SWS_URING_POLL_UPDATE   8
/* A one-shot poll for room (sws_uring_room_wait): c | instance | both
 * tags (a send's state is malloc()ed: never has RECV_TAG). */
#define SWS_URING_ROOM_TAG      (SWS_URING_RECV_TAG | SWS_URING_SEND_TAG)
#define SWS_URING_BGID          0
#define SWS_URING_RBUFS         256          /* a power of 2 */
#define SWS_URING_RBUF          4096

typedef struct sws_uring_send_s  sws_uring_send_t;
struct sws_uring_send_s {
    sws_connection_t    *c;
    sws_uring_send_t    *next;       /* the free list */
    struct io_uring_sqe *sqe;        /* while queued: to add to it */
    unsigned             gen;        /* the submission it is queued for */
    unsigned             wait_gen;   /* the wait it was counted for */
    int                  fd;
    uint32_t             off, len;   /* sent, copied */
    unsigned             quiet:1;    /* counted in quiet_sends */
    unsigned             waiting:1;  /* the rest: a send that waits for room */
    unsigned             writer:1;   /* the write handler waits for it */
    unsigned             shut:1;     /* shutdown(SHUT_WR) after it */
    unsigned             closed:1;   /* the connection was closed */
    u_char               data[SWS_URING_SEND_BUF];
};

static sws_uring_send_t *send_free;
/* Counts submissions (a send queued for the coming one can still grow)
 * and waits. */
static unsigned          submit_gen, wait_gen;
/* MSG_DONTWAIT sends queued since the last wait whose completion nobody
 * needs at once: each completes during the submission, and the wait does
 * not end for it. */
static unsigned          quiet_sends;
static sws_log_t        *uring_log;

static struct io_uring_buf_ring *rbuf_ring;
static u_char                   *rbufs;

static struct io_uring  ring;
/* The wait's timeout and signal mask (set once; the timeout's value each
 * wait). */
static struct __kernel_timespec       wait_ts;
static unsigned                       wait_max;  /* half the completion queue */
static struct io_uring_getevents_arg  wait_arg;
static int              ring_up;
static unsigned         enter_flags;     /* IORING_ENTER_REGISTERED_RING */
/* Cancellations queued since the last wait: each brings one completion
 * (the poll's -ECANCELED, or its own failure), which the wait need not
 * end for (a connection closed after its response would cost one more
 * io_uring_enter() otherwise). */
static unsigned         cancels;

static sws_int_t sws_uring_add_connection(sws_connection_t *c);
static sws_int_t sws_uring_add_listening(sws_connection_t *c, int exclusive);
static sws_int_t sws_uring_del_connection(sws_connection_t *c);
static sws_int_t sws_uring_close_connection(sws_connection_t *c);
static sws_int_t sws_uring_shutdown_write(sws_connection_t *c);
static sws_chain_t *sws_uring_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit);
static void      sws_uring_send_needed(sws_uring_send_t *s);
static void      sws_uring_send_done(sws_uring_send_t *s, int res);
static void      sws_uring_send_timedout(sws_event_t *wev);
static int       sws_uring_recv_init(sws_log_t *log);
static void      sws_uring_rbuf_put(unsigned bid);
static ssize_t   sws_uring_recv(sws_connection_t *c, u_char *buf, size_t size);
static void      sws_uring_recv_cancel(sws_connection_t *c);
static void      sws_uring_recv_done(uintptr_t cookie, int res, unsigned flags);
static void      sws_uring_room_wait(sws_connection_t *c);
static void      sws_uring_room_cancel(sws_connection_t *c);
static void      sws_uring_room_done(uintptr_t cookie, int res);
static sws_int_t sws_uring_peer_alive(sws_connection_t *c);
static sws_int_t sws_uring_process_events(sws_cycle_t *cycle, sws_msec_t timer);
static void      sws_uring_done(void);

static const sws_event_actions_t sws_uring_actions = {
    "io_uring",
    1,                          /* a listening socket's poll is edge-triggered */
    sws_uring_add_connection,
    sws_uring_add_listening,
    sws_uring_del_connection,
    sws_uring_close_connection,
    sws_uring_shutdown_write,
    sws_uring_process_events,
    sws_uring_done,
    sws_uring_peer_alive
};

sws_int_t
sws_uring_init(sws_cycle_t *cycle, sws_uint_t n)
{
    struct io_uring_params  p;
    int                     rc;

    sws_memzero(&p, sizeof(p));
    /* One task submits and reaps; completions are run when it waits. */
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN
              | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = (unsigned) n * 8;
    rc = io_uring_queue_init_params((unsigned) n, &ring, &p);
    if (rc == -EINVAL) {
        /* A kernel older than 6.1: without the task-run flags. */
        sws_memzero(&p, sizeof(p));
        p.flags = IORING_SETUP_CQSIZE;
        p.cq_entries = (unsigned) n * 8;
        rc = io_uring_queue_init_params((unsigned) n, &ring, &p);
    }
    if (rc < 0) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, -rc,
                      "io_uring_queue_init() failed: using epoll instead of io_uring");
        return SWS_DECLINED;
    }
    /* The wait's timeout and signal mask need EXT_ARG (5.11), multishot
     * poll 5.13 (the kernel that added RSRC_TAGS). */
    if (!(p.features & IORING_FEAT_EXT_ARG) || !(p.features & IORING_FEAT_RSRC_TAGS)) {
        io_uring_queue_exit(&ring);
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                      "io_uring of this kernel is older than 5.13: using epoll instead");
        return SWS_DECLINED;
    }
    /* Saves looking the ring's fd up on every io_uring_enter() (5.18). */
    enter_flags = io_uring_register_ring_fd(&ring) == 1 ? IORING_ENTER_REGISTERED_RING : 0;
    ring_up = 1;
    uring_log = cycle->log;
    wait_arg.sigmask = (uintptr_t) &sws_wait_sigmask;
    wait_arg.sigmask_sz = _NSIG / 8;
    wait_arg.ts = (uintptr_t) &wait_ts;
    wait_max = ring.cq.ring_entries / 2;
    (void) sws_uring_recv_init(cycle->log);
    sws_event_actions = sws_uring_actions;
    return SWS_OK;
}

static void
sws_uring_done(void)
{
    sws_uring_send_t *s;

    if (ring_up) {
        (void) io_uring_submit(&ring);   /* what the last iteration queued */
        io_uring_queue_exit(&ring);
        ring_up = 0;
    }
    free(rbufs);
    free(rbuf_ring);
    rbufs = NULL;
    rbuf_ring = NULL;
    while (send_free != NULL) {
        s = send_free;
        send_free = s->next;
        free(s);
    }
}

/* A full submission queue: handed to the kernel, then an entry of it. */
static struct io_uring_sqe * __attribute__((noinline))
sws_uring_sqe_full(sws_log_t *log)
{
    int rc;

    submit_gen++;
    rc = io_uring_submit(&ring);         /* sws_uring_flush() and an enter */
    if (rc < 0) {
        sws_log_error(SWS_LOG_ALERT, log, -rc, "io_uring_submit() failed");
    }
    return io_uring_get_sqe(&ring);
}

/* A free submission entry, as liburing's io_uring_get_sqe() without what
 * this ring does not use (SQPOLL, 128-byte entries): a request takes two
 * or three, and the call was 24 instructions each. */
static inline struct io_uring_sqe *
sws_uring_sqe(sws_log_t *log)
{
    struct io_uring_sq *sq = &ring.sq;
    unsigned            tail = sq->sqe_tail;

    if (sws_unlikely(tail - IO_URING_READ_ONCE(*sq->khead) >= sq->ring_entries)) {
        return sws_uring_sqe_full(log);
    }
    sq->sqe_tail = tail + 1;
    return &sq->sqes[tail & sq->ring_mask];
}

/* Fills a submission entry whole, the fields an operation does not name
 * zero: fewer stores than liburing's prep helpers, which write each field
 * and then the caller's flags and user data. */
static inline void
sws_uring_prep(struct io_uring_sqe *sqe, uint8_t op, uint8_t flags, int fd, uint64_t addr,
    uint32_t len, uint32_t op_flags, uint64_t user_data)
{
    *sqe = (struct io_uring_sqe) {
        .opcode = op, .flags = flags, .fd = fd, .addr = addr, .len = len,
        .msg_flags = op_flags, .user_data = user_data
    };
}

static sws_int_t
sws_uring_poll(sws_connection_t *c, unsigned events)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(c->log);

    if (sqe == NULL) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "io_uring: no submission entry for %d",
                      c->fd);
        return SWS_ERROR;
    }
    /* the events as IORING_OP_POLL_ADD takes them (poll32_events, in
     * msg_flags's place), IORING_POLL_ADD_MULTI in len */
    sws_uring_prep(sqe, IORING_OP_POLL_ADD, 0, c->fd, 0, IORING_POLL_ADD_MULTI,
                   __io_uring_prep_poll_mask(events), (uintptr_t) c | c->read->instance);
    return SWS_OK;
}

/* The events a connection's poll asks for: a listening socket only reads. */
static unsigned
sws_uring_poll_events(sws_connection_t *c)
{
    if (c->read->accept) {
        return EPOLLIN;
    }
    /* Reads on the ring: their completions say when data comes; room is
     * asked for when a send finds none, if the poll is quiet. (The
     * kernel adds EPOLLERR, EPOLLHUP and EPOLLRDHUP to any mask.) */
    if (c->event_recv.pollout) {
        return c->event_recv.pollquiet ? 0 : EPOLLOUT;
    }
    return EPOLLIN | EPOLLOUT | EPOLLRDHUP;
}

static sws_int_t
sws_uring_add_connection(sws_connection_t *c)
{
    if (sws_uring_poll(c, sws_uring_poll_events(c)) != SWS_OK) {
        return SWS_ERROR;
    }
    c->read->active = 1;
    c->write->active = 1;
    /* Sends go on the ring: a client's always, an upstream's while the
     * upstream framework says so (c->defer_send: a request it may send
     * again after a failure whatever of it was sent; for the others it
     * must know at once whether any was, and they stay send()). */
    if (c->send_chain == sws_unix_send_chain) {
        c->send_chain = sws_uring_send_chain;
        c->defer_send = c->listening != NULL;
    }
    /* A plain connection's reads too, from its first read that drains the
     * socket on (what the PROXY protocol or the TLS detection peek at comes
     * by recv()): a client's, and an upstream's over TCP or a Unix socket
     * (not one that reads passed descriptors: the upstream gave it
     * recvmsg() before this, c->recv is not sws_unix_recv; over TLS
     * OpenSSL reads the socket). Connections that never call c->recv (the
     * resolver's, UDP) never queue one. */
    if (c->recv == sws_unix_recv && rbuf_ring != NULL
        && (c->listening == NULL || !c->listening->ssl))
    {
        c->recv = sws_uring_recv;
    }
    return SWS_OK;
}

/* Workers that share a socket are all woken by a new connection (a poll
 * has no EPOLLEXCLUSIVE); the accept4() of all but one finds nothing. */
static sws_int_t
sws_uring_add_listening(sws_connection_t *c, int exclusive)
{
    (void) exclusive;
    if (sws_uring_poll(c, sws_uring_poll_events(c)) != SWS_OK) {
        return SWS_ERROR;
    }
    c->read->active = 1;
    return SWS_OK;
}

static sws_int_t
sws_uring_del_connection(sws_connection_t *c)
{
    struct io_uring_sqe *sqe;

    c->read->active = 0;
    c->write->active = 0;
    if (c->event_recv.armed || c->event_recv.data != NULL) {
        sws_uring_recv_cancel(c);
    }
    if (c->event_recv.roomwait) {
        sws_uring_room_cancel(c);
    }
    sqe = sws_uring_sqe(c->log);
    if (sqe == NULL) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "io_uring: no submission entry for %d",
                      c->fd);
        return SWS_ERROR;
    }
    /* A cancellation, not IORING_OP_POLL_REMOVE: that one fails with
     * EALREADY while a wake-up of the poll waits to be run (as it does
     * until the next wait with IORING_SETUP_DEFER_TASKRUN). */
    io_uring_prep_cancel64(sqe, (uintptr_t) c | c->read->instance, 0);
    io_uring_sqe_set_data64(sqe, 0);
    cancels++;
    /* Its completion says only that it was done (or found nothing). */
    io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
    return SWS_OK;
}

static sws_int_t
sws_uring_close_connection(sws_connection_t *c)
{
    sws_uring_send_t *s = c->event_send;

    if (c->read->active || c->write->active) {
        (void) sws_uring_del_connection(c);
    } else if (c->event_recv.armed || c->event_recv.data != NULL) {
        sws_uring_recv_cancel(c);
    }
    if (s == NULL) {
        return SWS_OK;
    }
    /* Its send goes on: the fd is closed, and c freed, when it is done. */
    s->closed = 1;
    sws_uring_send_needed(s);
    c->write->handler = sws_uring_send_timedout;
    if (s->waiting) {
        sws_add_timer(c->write, SWS_URING_SEND_TIMEOUT);
    }
    return SWS_AGAIN;
}

/* ---- sends ---- */

/* A send's completion that needs nothing more: all sent, and nobody waits
 * for it (the common case, checked where completions are taken). */
static inline int
sws_uring_send_settled(sws_uring_send_t *s, int res)
{
    return res == (int) (s->len - s->off) && !s->closed && !s->shut && !s->writer
           && s->c->write->ready;
}

static inline void
sws_uring_send_free(sws_uring_send_t *s)
{
    s->c->event_send = NULL;
    s->next = send_free;
    send_free = s;
}

/* (inlined: a response's send is queued here, on every request) */
static inline __attribute__((always_inline)) void
sws_uring_send_queue(sws_uring_send_t *s, sws_log_t *log)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(log);

    if (sqe == NULL) {
        /* Not queued: the completion it will not bring is made up. */
        sws_log_error(SWS_LOG_ALERT, log, 0, "io_uring: no submission entry for a send");
        sws_uring_send_done(s, -ENOBUFS);
        return;
    }
    if (s->waiting) {
        /* The socket was full: the kernel sends the rest as room comes;
         * its completion ends a wait, whoever needs it. */
        sws_uring_prep(sqe, IORING_OP_SEND, 0, s->fd, (uintptr_t) (s->data + s->off),
                       s->len - s->off, MSG_NOSIGNAL | MSG_WAITALL,
                       (uintptr_t) s | SWS_URING_SEND_TAG);
    } else {
        sws_uring_prep(sqe, IORING_OP_SEND, 0, s->fd, (uintptr_t) (s->data + s->off),
                       s->len - s->off, MSG_NOSIGNAL | MSG_DONTWAIT,
                       (uintptr_t) s | SWS_URING_SEND_TAG);
        s->sqe = sqe;
        s->gen = submit_gen;
        s->wait_gen = wait_gen;
        s->quiet = 1;
        quiet_sends++;
    }
}

/* Somebody waits for s now (the writer, a shutdown, a close): the wait
 * must end for its completion. */
static void
sws_uring_send_needed(sws_uring_send_t *s)
{
    if (s->quiet) {
        s->quiet = 0;
        if (s->wait_gen == wait_gen && quiet_sends > 0) {
            quiet_sends--;
        }
    }
}

/* send() and sendfile() as on epoll; a connection whose poll is quiet
 * has room asked for when they find none. */
static sws_chain_t *
sws_uring_send_plain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    in = sws_unix_send_chain(c, in, limit);
    if (!c->write->ready && c->event_recv.pollquiet && !c->event_recv.roomwait) {
        sws_uring_room_wait(c);
    }
    return in;
}

static sws_chain_t *
sws_uring_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    sws_uring_send_t *s = c->event_send;
    sws_chain_t      *cl;
    sws_buf_t        *b;
    size_t            room, size, len;

    if (s != NULL) {
        if (s->gen != submit_gen || s->waiting) {
            /* In flight: the bytes keep their order. */
            s->writer = 1;
            sws_uring_send_needed(s);
            c->write->ready = 0;
            return in;
        }
        len = s->len;                   /* queued: the chain is added to it */
    } else {
        if (c->write->error) {
            return SWS_CHAIN_ERROR;     /* what a send on the ring ended with */
        }
        if (!c->defer_send) {
            return sws_uring_send_plain(c, in, limit);
        }
        len = 0;
    }

    room = SWS_URING_SEND_BUF - len;
    if (limit > 0 && (off_t) room > limit) {
        room = (size_t) limit;
    }
    if (s == NULL) {
        s = send_free;
        if (s != NULL) {
            send_free = s->next;
        } else {
            s = malloc(sizeof(sws_uring_send_t));
            if (s == NULL) {
                return sws_uring_send_plain(c, in, limit);
            }
        }
        s->len = 0;
    }

    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;
        if (!sws_buf_in_memory(b)) {
            if (sws_buf_special(b)) {
                continue;
            }
            goto other;                 /* file data: sendfile() */
        }
        size = (size_t) (b->last - b->pos);
        if (size > room) {
            goto other;
        }
        sws_memcpy(s->data + s->len, b->pos, size);
        s->len += (uint32_t) size;
        room -= size;
    }

    size = s->len - len;
    if (size == 0) {
        if (len == 0) {
            s->next = send_free;
            send_free = s;
            return sws_uring_send_plain(c, in, limit);   /* flags only */
        }
        return NULL;
    }
    if (len == 0) {
        s->c = c;
        s->fd = c->fd;
        s->off = 0;
        s->quiet = 0;
        s->waiting = 0;
        s->writer = 0;
        s->shut = 0;
        s->closed = 0;
        c->event_send = s;
        sws_uring_send_queue(s, c->log);
    } else {
        s->sqe->len = s->len;           /* the queued send takes it too */
    }
    c->sent += (off_t) size;
    /* All of it was copied: sws_chain_update_sent() of the whole chain,
     * without its arithmetic. */
    for (cl = in; cl; cl = cl->next) {
        b = cl->buf;
        b->pos = b->last;
        if (b->in_file) {
            b->file_pos = b->file_last;
        }
    }
    return NULL;

other:
    /* More than the buffer takes, or a file: send() and sendfile() as on
     * epoll, once nothing is in flight. */
    if (len == 0) {
        s->next = send_free;
        send_free = s;
        return sws_uring_send_plain(c, in, limit);
    }
    s->len = (uint32_t) len;
    s->writer = 1;
    sws_uring_send_needed(s);
    c->write->ready = 0;
    return in;
}

static sws_int_t
sws_uring_shutdown_write(sws_connection_t *c)
{
    sws_uring_send_t *s = c->event_send;

    if (s == NULL) {
        return shutdown(c->fd, SHUT_WR) == -1 ? SWS_ERROR : SWS_OK;
    }
    s->shut = 1;
    sws_uring_send_needed(s);
    return SWS_OK;
}

/* A closed connection's send did not end in time: cancelled, its
 * completion (-ECANCELED) closes the socket. */
static void
sws_uring_send_timedout(sws_event_t *wev)
{
    sws_connection_t    *c = wev->data;
    struct io_uring_sqe *sqe = sws_uring_sqe(uring_log);

    wev->timedout = 0;
    if (sqe == NULL) {
        sws_add_timer(wev, 1000);
        return;
    }
    io_uring_prep_cancel64(sqe, (uintptr_t) c->event_send | SWS_URING_SEND_TAG, 0);
    io_uring_sqe_set_data64(sqe, 0);
    io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
    cancels++;
}

static void
sws_uring_send_done(sws_uring_send_t *s, int res)
{
    sws_connection_t *c = s->c;
    sws_log_t        *log;
    unsigned          writer;

    if (sws_uring_send_settled(s, res)) {
        sws_uring_send_free(s);
        return;
    }
    log = s->closed ? uring_log : c->log;
    s->quiet = 0;
    if (res > 0) {
        s->off += (uint32_t) res;
        if (s->off < s->len) {
            res = -EAGAIN;
        }
    } else if (res == 0 && s->off < s->len) {
        res = -EIO;
    }
    if (res == -EAGAIN) {
        /* The socket is full: the rest when there is room. */
        if (!s->closed) {
            c->write->ready = 0;
        } else if (!c->write->timer_set) {
            sws_add_timer(c->write, SWS_URING_SEND_TIMEOUT);
        }
        s->waiting = 1;
        sws_uring_send_queue(s, log);
        return;
    }

    c->event_send = NULL;
    s->next = send_free;
    send_free = s;
    if (s->closed) {
        /* (c's address went with its pool) */
        if (res < 0 && res != -ECANCELED) {
            sws_log_error(SWS_LOG_INFO, log, -res, "send() of a closed connection failed");
        }
        sws_del_timer(c->write);
        if (close(s->fd) == -1) {
            sws_log_error(SWS_LOG_ALERT, uring_log, errno, "close() socket %d failed", s->fd);
        }
        sws_free_connection(c);
    } else {
        if (res < 0) {
            sws_log_error((res == -EPIPE || res == -ECONNRESET) ? SWS_LOG_INFO : SWS_LOG_ERR,
                          log, -res, "send() to %.*s failed", (int) c->addr_text.len,
                          c->addr_text.data);
            c->write->error = 1;        /* the writer's next send_chain */
        } else if (s->shut && shutdown(s->fd, SHUT_WR) == -1) {
            sws_log_error(SWS_LOG_INFO, log, errno, "shutdown() failed");
        }
        writer = s->writer || !c->write->ready;
        if (writer && c->write->active) {
            sws_event_dispatch(c, EPOLLOUT);
        }
    }
}

/* ---- reads ---- */

/* The provided buffers: registered once, taken by the kernel for a recv
 * when data comes, given back when the connection has taken the data. */
static int
sws_uring_recv_init(sws_log_t *log)
{
    struct io_uring_buf_reg  reg;
    unsigned                 i;
    int                      rc;

    if (posix_memalign((void **) &rbuf_ring, 4096,
                       SWS_URING_RBUFS * sizeof(struct io_uring_buf)) != 0)
    {
        return 0;
    }
    rbufs = malloc((size_t) SWS_URING_RBUFS * SWS_URING_RBUF);
    if (rbufs == NULL) {
        free(rbuf_ring);
        rbuf_ring = NULL;
        return 0;
    }
    sws_memzero(rbuf_ring, SWS_URING_RBUFS * sizeof(struct io_uring_buf));
    sws_memzero(&reg, sizeof(reg));
    reg.ring_addr = (uintptr_t) rbuf_ring;
    reg.ring_entries = SWS_URING_RBUFS;
    reg.bgid = SWS_URING_BGID;
    rc = io_uring_register_buf_ring(&ring, &reg, 0);
    if (rc != 0) {
        /* (5.19) reads stay recv() */
        sws_log_error(SWS_LOG_INFO, log, -rc, "io_uring: no provided buffer ring");
        free(rbufs);
        free(rbuf_ring);
        rbufs = NULL;
        rbuf_ring = NULL;
        return 0;
    }
    io_uring_buf_ring_init(rbuf_ring);
    for (i = 0; i < SWS_URING_RBUFS; i++) {
        io_uring_buf_ring_add(rbuf_ring, rbufs + (size_t) i * SWS_URING_RBUF, SWS_URING_RBUF,
                              (unsigned short) i, SWS_URING_RBUFS - 1, (int) i);
    }
    io_uring_buf_ring_advance(rbuf_ring, SWS_URING_RBUFS);
    return 1;
}

/* io_uring_buf_ring_add() and _advance() of one buffer. */
static inline void
sws_uring_rbuf_put(unsigned bid)
{
    struct io_uring_buf *b = &rbuf_ring->bufs[rbuf_ring->tail & (SWS_URING_RBUFS - 1)];

    b->addr = (uintptr_t) (rbufs + (size_t) bid * SWS_URING_RBUF);
    b->len = SWS_URING_RBUF;
    b->bid = (uint16_t) bid;
    io_uring_smp_store_release(&rbuf_ring->tail, (uint16_t) (rbuf_ring->tail + 1));
}

/* The next data of c comes on the ring: a recv into a provided buffer,
 * submitted with the wait. (Inlined: queued on every request.) */
static inline __attribute__((always_inline)) void
sws_uring_recv_arm(sws_connection_t *c)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(c->log);

    if (sqe == NULL) {
        return;                 /* the poll says when there is data */
    }
    /* The socket was just drained: the kernel waits for data at once
     * (IORING_RECVSEND_POLL_FIRST, 5.19) instead of trying a recv that
     * finds nothing first. */
    sws_uring_prep(sqe, IORING_OP_RECV, IOSQE_BUFFER_SELECT, c->fd, 0, 0, 0,
                   (uintptr_t) c | c->read->instance | SWS_URING_RECV_TAG);
    sqe->ioprio = IORING_RECVSEND_POLL_FIRST;
    sqe->buf_group = SWS_URING_BGID;
    c->event_recv.armed = 1;
    c->event_recv.sqe = sqe;
    c->event_recv.gen = submit_gen;
    if (!c->event_recv.pollout) {
        /* From now on the poll reports room only: a wake-up for data
         * beside the recv's completion would end a wait of its own. Nor
         * room, where the sends are ours and none waits for it: a Unix
         * socket reports room each time the peer reads (a wake-up per
         * request, the server's reading of the request it was sent);
         * a send that finds none asks for it (sws_uring_send_plain). */
        c->event_recv.pollout = 1;
        c->event_recv.pollquiet = c->write->ready && c->ssl == NULL
                                  && c->send_chain == sws_uring_send_chain;
        sqe = sws_uring_sqe(c->log);
        if (sqe != NULL) {
            io_uring_prep_poll_update(sqe, (uintptr_t) c | c->read->instance, 0,
                                      sws_uring_poll_events(c), IORING_POLL_UPDATE_EVENTS);
            io_uring_sqe_set_data64(sqe, SWS_URING_POLL_UPDATE);
            io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
        }
    }
}

/* The cancellation of what user_data names, queued; its completion says
 * only that it failed, and the wait need not end for the one it brings. */
static void
sws_uring_cancel(uint64_t user_data, sws_log_t *log)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(log);

    if (sqe == NULL) {
        return;
    }
    io_uring_prep_cancel64(sqe, user_data, 0);
    io_uring_sqe_set_data64(sqe, 0);
    io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
    cancels++;
}

static void
sws_uring_recv_cancel(sws_connection_t *c)
{
    struct io_uring_sqe *sqe;

    if (c->event_recv.data != NULL) {
        sws_uring_rbuf_put(c->event_recv.bid);
        c->event_recv.data = NULL;
    }
    if (!c->event_recv.armed) {
        return;
    }
    c->event_recv.armed = 0;
    if (c->event_recv.gen == submit_gen) {
        /* Not submitted yet: its fd is resolved at the submission, when
         * the number may be a new connection's already (closed here, and
         * accepted again in the same iteration), whose data it would
         * take. It becomes a no-op that says nothing. */
        sqe = c->event_recv.sqe;
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, 0);
        io_uring_sqe_set_flags(sqe, IOSQE_CQE_SKIP_SUCCESS);
        return;
    }
    sws_uring_cancel((uintptr_t) c | c->read->instance | SWS_URING_RECV_TAG, c->log);
}

/* c->recv of a client's connection: what the ring read, else recv(); a
 * read that drains the socket has the next data come on the ring. */
static ssize_t
sws_uring_recv(sws_connection_t *c, u_char *buf, size_t size)
{
    sws_event_t *rev = c->read;
    size_t       n;
    ssize_t      rc;
    int          err;

    if (c->event_recv.data != NULL) {
        n = sws_min(size, (size_t) (c->event_recv.len - c->event_recv.pos));
        sws_memcpy(buf, c->event_recv.data + c->event_recv.pos, n);
        c->event_recv.pos += (uint32_t) n;
        if (c->event_recv.pos == c->event_recv.len) {
            sws_uring_rbuf_put(c->event_recv.bid);
            c->event_recv.data = NULL;
            if (c->event_recv.len != SWS_URING_RBUF) {
                /* all the socket had: the next data on the ring */
                if (n < size) {
                    rev->ready = 0;
                }
                if (rev->active) {
                    sws_uring_recv_arm(c);
                }
            }
        }
        return (ssize_t) n;
    }
    if (c->event_recv.armed) {
        rev->ready = 0;
        return SWS_AGAIN;
    }
    if (c->event_recv.err != 0) {
        err = c->event_recv.err;
        c->event_recv.err = 0;
        rev->ready = 0;
        if (err == -1) {
            rev->eof = 1;
            return 0;
        }
        rev->error = 1;
        sws_log_error(err == ECONNRESET ? SWS_LOG_INFO : SWS_LOG_ERR, c->log, err,
                      "recv() failed");
        return SWS_ERROR;
    }
    rc = sws_unix_recv(c, buf, size);
    if (!rev->ready && !rev->eof && !rev->error && rev->active) {
        sws_uring_recv_arm(c);
    }
    return rc;
}

/* sws_connection_peer_alive(): the end or error the ring read; else what
 * the socket holds. Bytes in the ring's buffer do not make the peer
 * there: with epoll (EPOLLRDHUP) and in nginx a client that pipelines a
 * request and half-closes is gone, and the socket behind the buffer says
 * the same (no recv is in flight while the buffer holds bytes; one queued
 * takes nothing a peek could see before the next wait). */
static sws_int_t
sws_uring_peer_alive(sws_connection_t *c)
{
    if (c->event_recv.err != 0) {
        return 0;
    }
    return SWS_DECLINED;
}

/* A recv's completion: its data (or end) is the connection's next read. */
static void
sws_uring_recv_done(uintptr_t cookie, int res, unsigned flags)
{
    sws_connection_t *c = sws_event_cookie_connection(cookie & ~(uintptr_t) SWS_URING_RECV_TAG);
    unsigned          bid = flags >> IORING_CQE_BUFFER_SHIFT;

    if (c == NULL || !c->event_recv.armed) {
        /* The connection is gone (or its slot is another's now, that has
         * no recv in flight: this one was cancelled). */
        if (flags & IORING_CQE_F_BUFFER) {
            sws_uring_rbuf_put(bid);
        }
        return;
    }
    c->event_recv.armed = 0;
    if (res > 0) {
        c->event_recv.data = rbufs + (size_t) bid * SWS_URING_RBUF;
        c->event_recv.pos = 0;
        c->event_recv.len = (uint32_t) res;
        c->event_recv.bid = (uint16_t) bid;     /* (a full buffer: more may wait) */
    } else if (res == 0) {
        c->event_recv.err = -1;
        c->read->eof = 1;
    } else if (res == -ECANCELED) {
        return;
    } else if (res != -ENOBUFS) {
        /* ENOBUFS: no buffer was free; the read is recv()'s */
        c->event_recv.err = -res;
    }
    sws_event_dispatch(c, EPOLLIN);
}

/* A quiet poll's connection whose send found no room: a one-shot poll
 * for it (it looks at the socket when it is armed: room that came since
 * the send is not missed), submitted with the wait. A cancellation is
 * queued behind it when the connection goes (sws_uring_room_cancel), so
 * that it never outlives it, whatever socket its number named. */
static void
sws_uring_room_wait(sws_connection_t *c)
{
    struct io_uring_sqe *sqe = sws_uring_sqe(c->log);

    if (sqe == NULL) {
        /* No entry (logged): the writer tries again in this iteration. */
        c->write->ready = 1;
        sws_post_event(c->write);
        return;
    }
    sws_uring_prep(sqe, IORING_OP_POLL_ADD, 0, c->fd, 0, 0,
                   __io_uring_prep_poll_mask(EPOLLOUT),
                   (uintptr_t) c | c->read->instance | SWS_URING_ROOM_TAG);
    c->event_recv.roomwait = 1;
}

static void
sws_uring_room_cancel(sws_connection_t *c)
{
    c->event_recv.roomwait = 0;
    sws_uring_cancel((uintptr_t) c | c->read->instance | SWS_URING_ROOM_TAG, c->log);
}

/* The room a send waited for (or the socket's error or end). */
static void
sws_uring_room_done(uintptr_t cookie, int res)
{
    sws_connection_t *c = sws_event_cookie_connection(cookie & ~(uintptr_t) SWS_URING_ROOM_TAG);

    if (c == NULL || !c->event_recv.roomwait || res == -ECANCELED) {
        return;                 /* gone, or another connection's slot now */
    }
    c->event_recv.roomwait = 0;
    if (res < 0) {
        sws_log_error(SWS_LOG_ALERT, c->log, -res, "io_uring poll on %d failed", c->fd);
        res = EPOLLERR;
    }
    /* the read side is the recv's */
    sws_event_dispatch(c, ((uint32_t) res & ~(uint32_t) (EPOLLIN | EPOLLRDHUP)) | EPOLLOUT);
}

/* One completion of a connection's poll. */
static void
sws_uring_poll_done(sws_connection_t *c, int res, unsigned flags)
{
    if (res < 0) {
        if (res == -ECANCELED) {
            return;             /* cancelled: the connection is closed */
        }
        sws_log_error(SWS_LOG_ALERT, c->log, -res, "io_uring poll on %d failed", c->fd);
        /* The handlers' calls find out what is wrong with the socket. */
        sws_event_dispatch(c, EPOLLERR);
        return;
    }
    if (!(flags & IORING_CQE_F_MORE) && (c->read->active || c->write->active)) {
        /* The kernel ended the multishot poll (a full completion queue): a
         * new one, armed at the next submission, reports the state then. */
        (void) sws_uring_poll(c, sws_uring_poll_events(c));
    }
    if (c->event_recv.armed) {
        /* The recv's completion brings the data (or the end). */
        res &= ~(EPOLLIN | EPOLLRDHUP);
        if (res == 0) {
            return;
        }
    }
    sws_event_dispatch(c, (uint32_t) res);
}

/* Hands what was queued to the kernel's submission ring, as liburing's
 * io_uring_submit() does before its system call; returns how many wait
 * there. (The loop's wait is one io_uring_enter() of ours: liburing's
 * io_uring_submit_and_wait_timeout() costs 130 instructions more a call.) */
static unsigned
sws_uring_flush(void)
{
    struct io_uring_sq *sq = &ring.sq;
    unsigned            tail = sq->sqe_tail;

    if (sq->sqe_head != tail) {
        sq->sqe_head = tail;
        io_uring_smp_store_release(sq->ktail, tail);
    }
    submit_gen++;
    return tail - io_uring_smp_load_acquire(sq->khead);
}

static sws_int_t
sws_uring_process_events(sws_cycle_t *cycle, sws_msec_t timer)
{
    struct io_uring_cqe           *cqe, *cqes;
    sws_connection_t              *c;
    sws_uring_send_t              *s;
    uint64_t                       user_data;
    unsigned                       head, tail, n, flags, wait, mask, entries;
    unsigned                      *khead;
    int                            rc, res;

    if (timer < 0) {
        wait_ts.tv_sec = SWS_URING_FOREVER_SEC;
        wait_ts.tv_nsec = 0;
    } else {
        wait_ts.tv_sec = timer / 1000;
        wait_ts.tv_nsec = (timer % 1000) * 1000000;
    }
    /* Submit what this iteration queued and wait for a completion (none
     * when one is there already), in one system call. */
    wait = 1 + sws_min(cancels + quiet_sends, wait_max);
    cancels = 0;
    quiet_sends = 0;
    wait_gen++;
    rc = io_uring_enter2((unsigned) ring.enter_ring_fd, sws_uring_flush(), wait,
                         IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG | enter_flags,
                         (sigset_t *) &wait_arg, sizeof(wait_arg));
    if (sws_worker_stat != NULL) {
        sws_event_woke_ns = sws_worker_ns();
    }

    sws_time_update();

    /* -ETIME: the timer's time; -EBUSY, -EAGAIN: the completion queue is
     * full (what it holds is taken below). */
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, -rc, "io_uring_enter() failed");
        return SWS_ERROR;
    }

    /* Each completion is taken off the ring before its handlers run, so
     * that the ring has room for what they cause. At most a ring's worth:
     * the timers get their turn. */
    /* (the ring's geometry in registers: the handlers do not change it) */
    khead = ring.cq.khead;
    cqes = ring.cq.cqes;
    mask = ring.cq.ring_mask;
    entries = ring.cq.ring_entries;
    head = *khead;
    tail = io_uring_smp_load_acquire(ring.cq.ktail);
    for (n = 0; n < entries; n++) {
        if (head == tail) {
            /* (a handler's full submission queue may have brought more) */
            tail = io_uring_smp_load_acquire(ring.cq.ktail);
            if (head == tail) {
                break;
            }
        }
        cqe = &cqes[head & mask];
        user_data = cqe->user_data;
        res = cqe->res;
        flags = cqe->flags;
        io_uring_smp_store_release(khead, ++head);

        /* the common ones first: a request's recv and its response's send */
        if (user_data & SWS_URING_RECV_TAG) {
            if (sws_unlikely(user_data & SWS_URING_SEND_TAG)) {
                sws_uring_room_done((uintptr_t) user_data, res);
            } else {
                sws_uring_recv_done((uintptr_t) user_data, res, flags);
            }
            continue;
        }
        if (user_data & SWS_URING_SEND_TAG) {
            s = (sws_uring_send_t *) (uintptr_t) (user_data & ~(uint64_t) SWS_URING_SEND_TAG);
            if (sws_likely(sws_uring_send_settled(s, res))) {
                sws_uring_send_free(s);
            } else {
                sws_uring_send_done(s, res);
            }
            continue;
        }
        if (user_data <= SWS_URING_POLL_UPDATE) {
            /* 0: a cancellation that failed (the others say nothing);
             * SWS_URING_POLL_UPDATE: an update that failed (a wake-up was
             * pending): POLLIN stays. */
            if (user_data == 0 && res != -ENOENT) {
                sws_log_error(SWS_LOG_ALERT, cycle->log, -res,
                              "io_uring: cancelling a poll failed");
            }
            continue;
        }
        c = sws_event_cookie_connection((uintptr_t) user_data);
        if (c != NULL) {
            sws_uring_poll_done(c, res, flags);
        }
    }

    return SWS_OK;
}

#else   /* !SWS_HAVE_LIBURING: the configuration refuses "use io_uring" */

sws_int_t
sws_uring_init(sws_cycle_t *cycle, sws_uint_t n)
{
    (void) n;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0,
                  "built without liburing: using epoll instead of io_uring");
    return SWS_DECLINED;
}

#endif
