/*
 * io_uring's sends (src/event/sws_uring.c) and the core's part of them
 * (sws_close_connection, sws_connection_shutdown_write): a chain sent on
 * the ring leaves with the next wait, and what comes after it in the
 * writer's eyes (a close, a shutdown(SHUT_WR), more data) comes after it
 * on the wire too; an error it ends with is the writer's next send_chain's.
 * On a socket pair, the ring the server's workers use. Skipped where the
 * kernel refuses io_uring or the build has no liburing.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "sws_test_uring.h"

/* A client connection of the fixture's, its method the ring's. */
static sws_connection_t *
ring_conn(int sv[2], int sndbuf)
{
    sws_connection_t *c = conn(sv, sndbuf);

    ck_assert_ptr_ne(c->send_chain, sws_unix_send_chain);
    return c;
}

static sws_chain_t *
chain(sws_buf_t *b, sws_chain_t *cl, u_char *data, size_t n)
{
    memset(b, 0, sizeof(*b));
    b->fd = -1;
    b->pos = b->start = data;
    b->last = b->end = data + n;
    b->temporary = 1;
    cl->buf = b;
    cl->next = NULL;
    return cl;
}

/* What the peer can read now; -1 with errno EAGAIN when nothing, 0 at EOF. */
static ssize_t
peer_read(int fd, u_char *buf, size_t size)
{
    return recv(fd, buf, size, MSG_DONTWAIT);
}

START_TEST(close_comes_after_the_send)
{
    int               sv[2];
    sws_connection_t *c;
    sws_buf_t         b1, b2;
    sws_chain_t       l1, l2;
    u_char            buf[64], h[] = "hello, ", w[] = "world";
    ssize_t           n;

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    chain(&b1, &l1, h, 7);
    l1.next = chain(&b2, &l2, w, 5);
    ck_assert_ptr_null(c->send_chain(c, &l1, 0));
    ck_assert_ptr_eq(b1.pos, b1.last);
    ck_assert_int_eq(c->sent, 12);
    /* Queued, not submitted: nothing has left, and the buffers are the
     * writer's again (the ring has its copy). */
    memset(h, 'x', 7);
    n = peer_read(sv[1], buf, sizeof(buf));
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(errno, EAGAIN);

    /* Closed now: the socket stays, the slot counts, until it has left. */
    sws_close_connection(c);
    ck_assert_int_eq(c->fd, -1);
    ck_assert_uint_eq(sws_active_connections(), 1);
    n = peer_read(sv[1], buf, sizeof(buf));
    ck_assert_int_eq(n, -1);

    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_uint_eq(sws_active_connections(), 0);
    n = peer_read(sv[1], buf, sizeof(buf));
    ck_assert_int_eq(n, 12);
    ck_assert(memcmp(buf, "hello, world", 12) == 0);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), 0);     /* then EOF */
    close(sv[1]);
}
END_TEST

START_TEST(shutdown_comes_after_the_send)
{
    int               sv[2];
    sws_connection_t *c;
    sws_buf_t         b;
    sws_chain_t       l;
    u_char            buf[64], d[] = "abc";

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    ck_assert_ptr_null(c->send_chain(c, chain(&b, &l, d, 3), 0));
    ck_assert_int_eq(sws_connection_shutdown_write(c), SWS_OK);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), -1);   /* no early EOF */
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), 3);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), 0);
    ck_assert_int_ne(c->fd, -1);                                /* open to read */
    /* Nothing in flight: shutdown() at once, as on epoll. */
    ck_assert_int_eq(sws_connection_shutdown_write(c), SWS_OK);
    sws_close_connection(c);
    ck_assert_uint_eq(sws_active_connections(), 0);
    close(sv[1]);
}
END_TEST

START_TEST(error_reaches_the_writer)
{
    int               sv[2];
    sws_connection_t *c;
    sws_buf_t         b;
    sws_chain_t       l;
    u_char            d[] = "lost";

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    ck_assert_ptr_null(c->send_chain(c, chain(&b, &l, d, 4), 0));
    close(sv[1]);                        /* the peer goes before it is sent */
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert(c->write->error);
    ck_assert_ptr_eq(c->send_chain(c, chain(&b, &l, d, 4), 0), SWS_CHAIN_ERROR);
    sws_close_connection(c);
    ck_assert_uint_eq(sws_active_connections(), 0);
}
END_TEST

/* Several chains of 10 KiB into a socket that takes a few: the writer
 * waits while a send is in flight (write->ready = 0, its write handler
 * called when it is done), and the rest of a send the socket did not take
 * leaves when the peer reads; a close meanwhile waits for it. The peer
 * gets every byte once, in order, then EOF. */
START_TEST(full_socket_keeps_order_and_close_waits)
{
    enum { CHUNK = 10240, CHUNKS = 40 };
    int               sv[2], rounds;
    sws_connection_t *c;
    sws_buf_t         b;
    sws_chain_t       l, *rest;
    static u_char     src[CHUNK * CHUNKS], got[CHUNK * CHUNKS + 1];
    size_t            queued = 0, have = 0, i;
    ssize_t           n;

    if (!uring) {
        return;
    }
    for (i = 0; i < sizeof(src); i++) {
        src[i] = (u_char) (i % 251);
    }
    c = ring_conn(sv, 4096);
    for (rounds = 0; queued < sizeof(src) && rounds < 10000; rounds++) {
        while (c->write->ready && queued < sizeof(src)) {
            chain(&b, &l, src + queued, CHUNK);
            rest = c->send_chain(c, &l, 0);
            ck_assert_ptr_ne(rest, SWS_CHAIN_ERROR);
            queued += CHUNK - (size_t) (b.last - b.pos);
        }
        if (rounds == 5) {
            /* the peer has not read yet: the socket is full by now, and
             * the writer waits */
            ck_assert(!c->write->ready);
            ck_assert_uint_lt(queued, sizeof(src) / 4);
        }
        if (rounds >= 5) {
            n = peer_read(sv[1], got + have, sizeof(got) - have);
            if (n > 0) {
                have += (size_t) n;
            }
        }
        ck_assert_int_eq(sws_event_actions.process_events(&cycle, 50), SWS_OK);
    }
    ck_assert_uint_eq(queued, sizeof(src));
    ck_assert_int_gt(write_events, 0);
    sws_close_connection(c);
    for (rounds = 0; rounds < 10000; rounds++) {
        n = peer_read(sv[1], got + have, sizeof(got) - have);
        if (n == 0) {
            break;
        }
        if (n > 0) {
            have += (size_t) n;
        }
        ck_assert_int_eq(sws_event_actions.process_events(&cycle, 10), SWS_OK);
    }
    ck_assert_uint_eq(have, sizeof(src));
    ck_assert(memcmp(got, src, sizeof(src)) == 0);
    ck_assert_uint_eq(sws_active_connections(), 0);
    close(sv[1]);
}
END_TEST

/* An upstream's connection (no listening socket) sends on the ring only
 * while the upstream framework sets defer_send (a request it may send
 * again whatever of it was sent); otherwise send_chain is send()'s, and
 * the bytes are in the socket when it returns. */
START_TEST(upstream_sends_on_the_ring_only_when_deferrable)
{
    int               sv[2];
    sws_connection_t *c;
    sws_buf_t         b;
    sws_chain_t       l;
    u_char            buf[64], d[] = "POST /";

    if (!uring) {
        return;
    }
    c = upstream_conn(sv, 0);
    ck_assert(!c->defer_send);
    ck_assert_ptr_null(c->send_chain(c, chain(&b, &l, d, 6), 0));
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), 6);     /* sent at once */

    c->defer_send = 1;                                           /* a GET, say */
    ck_assert_ptr_null(c->send_chain(c, chain(&b, &l, d, 3), 0));
    ck_assert_int_eq(c->sent, 9);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), -1);    /* with the wait */
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(peer_read(sv[1], buf, sizeof(buf)), 3);
    sws_close_connection(c);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 100), SWS_OK);
    ck_assert_uint_eq(sws_active_connections(), 0);
    close(sv[1]);
}
END_TEST

/* Once its reads are on the ring, a connection whose sends are send()'s
 * polls for nothing: a Unix socket's room, reported each time the peer
 * reads, wakes nobody; a send that finds the socket full asks for room
 * (a one-shot poll), and the peer's reading wakes the writer. */
START_TEST(quiet_poll_asks_for_room_when_full)
{
    enum { CHUNK = 10240 };
    int               sv[2], sndbuf = 4096, rounds, before;
    sws_connection_t *c;
    sws_buf_t         b;
    sws_chain_t       l;
    static u_char     src[CHUNK], got[CHUNK * 64];
    u_char            buf[64];

    if (!uring) {
        return;
    }
    c = upstream_conn(sv, 1);
    ck_assert_int_eq(setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 100), SWS_OK);
    ck_assert(c->write->ready);                                 /* the first report */
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);  /* reads on the ring */
    ck_assert(c->event_recv.pollquiet);

    /* the peer reads what was sent: no wake-up for the room it makes */
    before = write_events;
    ck_assert_ptr_null(c->send_chain(c, chain(&b, &l, src, 100), 0));
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 10), SWS_OK);
    ck_assert_int_eq(peer_read(sv[1], got, sizeof(got)), 100);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 50), SWS_OK);
    ck_assert_int_eq(write_events, before);

    /* full: the send that found no room asked for it */
    for (rounds = 0; c->write->ready && rounds < 64; rounds++) {
        ck_assert_ptr_ne(c->send_chain(c, chain(&b, &l, src, CHUNK), 0), SWS_CHAIN_ERROR);
    }
    ck_assert(!c->write->ready);
    ck_assert(c->event_recv.roomwait);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 10), SWS_OK);
    ck_assert_int_eq(write_events, before);                     /* still full */
    ck_assert_int_gt(peer_read(sv[1], got, sizeof(got)), 0);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(write_events, before + 1);
    ck_assert(c->write->ready);
    ck_assert(!c->event_recv.roomwait);

    /* closed while it waits for room: its poll is cancelled with it */
    for (rounds = 0; c->write->ready && rounds < 64; rounds++) {
        ck_assert_ptr_ne(c->send_chain(c, chain(&b, &l, src, CHUNK), 0), SWS_CHAIN_ERROR);
    }
    ck_assert(c->event_recv.roomwait);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 10), SWS_OK);
    sws_close_connection(c);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 100), SWS_OK);
    ck_assert_uint_eq(sws_active_connections(), 0);
    /* the socket went: the peer sees its end once it has read the rest */
    for (rounds = 0; rounds < 1000 && peer_read(sv[1], got, sizeof(got)) != 0; rounds++) {
    }
    ck_assert_int_lt(rounds, 1000);
    close(sv[1]);
}
END_TEST

static Suite *
uring_send_suite(void)
{
    Suite *s = suite_create("uring_send");
    TCase *tc = tcase_create("sends");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, close_comes_after_the_send);
    tcase_add_test(tc, shutdown_comes_after_the_send);
    tcase_add_test(tc, error_reaches_the_writer);
    tcase_add_test(tc, full_socket_keeps_order_and_close_waits);
    tcase_add_test(tc, upstream_sends_on_the_ring_only_when_deferrable);
    tcase_add_test(tc, quiet_poll_asks_for_room_when_full);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    sr = srunner_create(uring_send_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
