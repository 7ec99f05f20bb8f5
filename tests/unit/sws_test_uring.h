/*
 * The fixture of the io_uring tests (test_uring_send.c, test_uring_recv.c):
 * a cycle with a connection table and the worker's ring, and client
 * connections on socket pairs registered with it. `uring` is 0 where the
 * kernel refuses io_uring or the build has no liburing: the tests skip.
 */
#ifndef SWS_TEST_URING_H
#define SWS_TEST_URING_H

#include <check.h>
#include <string.h>
#include <sys/socket.h>

#include "sws_cycle.h"
#include "sws_event.h"
#include "sws_log_internal.h"

static struct sws_log_s  tlog;
static sws_cycle_t       cycle;
static sws_listening_t   ls;            /* a client's connection has one */
static int               uring, write_events, read_events;

static void
noop(sws_event_t *ev)
{
    if (ev->write) {
        write_events++;
    } else {
        read_events++;
    }
}

static void
setup(void)
{
    memset(&cycle, 0, sizeof(cycle));
    memset(&ls, 0, sizeof(ls));
    tlog.fd = 2;
    tlog.level = SWS_LOG_ERR;
    cycle.log = &tlog;
    cycle.pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(cycle.pool);
    ck_assert_int_eq(sws_connections_init(&cycle, 8), SWS_OK);
    sws_event_timer_init();
    uring = sws_uring_init(&cycle, 64) == SWS_OK;
    write_events = 0;
    read_events = 0;
}

static void
teardown(void)
{
    if (uring) {
        sws_event_actions.done();
    }
    sws_pool_destroy(cycle.pool);
}

/* A client connection on sv[0], registered with the ring (sndbuf: its
 * send buffer, 0 for the default); sv[1] is the peer. */
static sws_connection_t *
conn(int sv[2], int sndbuf)
{
    sws_connection_t *c;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    if (sndbuf) {
        ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    }
    c = sws_get_connection(sv[0], &tlog);
    ck_assert_ptr_nonnull(c);
    c->listening = &ls;
    c->addr_text.data = (u_char *) "peer";
    c->addr_text.len = 4;
    c->read->handler = noop;
    c->write->handler = noop;
    ck_assert_int_eq(sws_event_add_connection(c), SWS_OK);
    return c;
}

/* An upstream's connection (no listening socket) on sv[0], registered
 * with the ring; unix_socket: as sws_ups_connect marks a Unix one (2: one
 * whose requests take passed descriptors, given recvmsg() first). */
static inline sws_connection_t *
upstream_conn(int sv[2], int unix_socket)
{
    sws_connection_t *c;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    c = sws_get_connection(sv[0], &tlog);
    ck_assert_ptr_nonnull(c);
    c->unix_socket = unix_socket != 0;
    if (unix_socket == 2) {
        c->recv = sws_unix_recv_fds;
    }
    c->read->handler = noop;
    c->write->handler = noop;
    ck_assert_int_eq(sws_event_add_connection(c), SWS_OK);
    return c;
}

#endif
