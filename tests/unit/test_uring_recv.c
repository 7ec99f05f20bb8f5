/*
 * io_uring's reads (src/event/sws_uring.c): once a read has drained a
 * client's socket, its next data comes with the ring's wait (a recv into a
 * provided buffer) and its read handler runs with it; c->recv hands it out
 * in the sizes asked for, then the end or the error as recv() would. On a
 * socket pair. Skipped where the kernel refuses io_uring or the build has
 * no liburing.
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

    ck_assert_ptr_ne(c->recv, sws_unix_recv);
    return c;
}


START_TEST(reads_come_on_the_ring)
{
    int               sv[2];
    sws_connection_t *c;
    u_char            buf[64];

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    /* The first read is recv()'s; it drains the socket. */
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);
    ck_assert(!c->read->ready);
    ck_assert_int_eq(send(sv[1], "GET / x", 7, 0), 7);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_ge(read_events, 1);
    ck_assert(c->read->ready);
    /* handed out in the sizes asked for */
    ck_assert_int_eq(c->recv(c, buf, 4), 4);
    ck_assert(memcmp(buf, "GET ", 4) == 0);
    ck_assert(c->read->ready);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 3);
    ck_assert(memcmp(buf, "/ x", 3) == 0);
    ck_assert(!c->read->ready);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);
    /* the end, as recv() says it */
    close(sv[1]);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_ge(read_events, 2);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 0);
    ck_assert(c->read->eof);
    sws_close_connection(c);
    ck_assert_uint_eq(sws_active_connections(), 0);
}
END_TEST

START_TEST(close_with_a_read_armed_or_unread)
{
    int               sv[2], sv2[2];
    sws_connection_t *c, *d;
    u_char            buf[64];

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);   /* armed */
    d = ring_conn(sv2, 0);
    ck_assert_int_eq(d->recv(d, buf, sizeof(buf)), SWS_AGAIN);
    ck_assert_int_eq(send(sv2[1], "unread", 6, 0), 6);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert(d->read->ready);
    /* Both closed: the armed recv is cancelled and the socket ends (the
     * peer sees EOF), the unread buffer goes back to the ring. */
    sws_close_connection(c);
    sws_close_connection(d);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 100), SWS_OK);
    ck_assert_int_eq(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 0);
    ck_assert_int_eq(recv(sv2[1], buf, sizeof(buf), MSG_DONTWAIT), 0);
    ck_assert_uint_eq(sws_active_connections(), 0);
    close(sv[1]);
    close(sv2[1]);
}
END_TEST

/* More than the provided buffers hold, read in small pieces: every byte
 * once, in order (a full buffer leaves the rest to recv()). */
START_TEST(large_input_in_order)
{
    enum { TOTAL = 300000 };
    int               sv[2], rounds;
    sws_connection_t *c;
    static u_char     src[TOTAL], got[TOTAL];
    size_t            sent = 0, have = 0, i;
    ssize_t           n;

    if (!uring) {
        return;
    }
    for (i = 0; i < TOTAL; i++) {
        src[i] = (u_char) (i % 253);
    }
    c = ring_conn(sv, 0);
    ck_assert_int_eq(c->recv(c, got, 100), SWS_AGAIN);
    for (rounds = 0; have < TOTAL && rounds < 100000; rounds++) {
        if (sent < TOTAL) {
            n = send(sv[1], src + sent, sws_min((size_t) 7000, TOTAL - sent), MSG_DONTWAIT);
            if (n > 0) {
                sent += (size_t) n;
            }
        }
        while (c->read->ready && have < TOTAL) {
            n = c->recv(c, got + have, sws_min((size_t) 1000, TOTAL - have));
            if (n <= 0) {
                break;
            }
            have += (size_t) n;
        }
        if (!c->read->ready) {
            ck_assert_int_eq(sws_event_actions.process_events(&cycle, 50), SWS_OK);
        }
    }
    ck_assert_uint_eq(have, TOTAL);
    ck_assert(memcmp(got, src, TOTAL) == 0);
    sws_close_connection(c);
    close(sv[1]);
}
END_TEST

/* A connection closed in the iteration that queued its recv (a request
 * read, answered and closed at once), and a new one accepted before the
 * submission under the same descriptor number: the recv must not be
 * submitted for that number, or it takes the new connection's first bytes
 * under the closed one's name, and they are lost. */
START_TEST(recv_of_a_closed_connection_takes_nothing_of_the_next)
{
    int               sv[2], sv2[2], fd;
    sws_connection_t *c, *d;
    u_char            buf[64];

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);   /* queued */
    fd = c->fd;
    sws_close_connection(c);
    d = ring_conn(sv2, 0);
    ck_assert_int_eq(d->fd, fd);                 /* the lowest free number */
    ck_assert_int_eq(send(sv2[1], "hello", 5, 0), 5);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 100), SWS_OK);
    d->read->ready = 1;
    ck_assert_int_eq(d->recv(d, buf, sizeof(buf)), 5);
    ck_assert(memcmp(buf, "hello", 5) == 0);
    /* and the closed one's socket did end */
    ck_assert_int_eq(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 0);
    sws_close_connection(d);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 10), SWS_OK);
    ck_assert_uint_eq(sws_active_connections(), 0);
    close(sv[1]);
    close(sv2[1]);
}
END_TEST

/* sws_connection_peer_alive(): a client that pipelined bytes and then
 * half-closed is still there while those bytes wait in the ring's buffer
 * (the socket itself is empty and at its end); gone once they are taken
 * and the end is read. */
START_TEST(peer_alive_counts_the_ring_buffer)
{
    int               sv[2];
    sws_connection_t *c;
    u_char            buf[64];

    if (!uring) {
        return;
    }
    c = ring_conn(sv, 0);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);   /* armed */
    ck_assert_int_eq(sws_connection_peer_alive(c), 1);          /* idle */
    ck_assert_int_eq(send(sv[1], "GET /next", 9, 0), 9);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert(c->read->ready);
    ck_assert_int_eq(shutdown(sv[1], SHUT_WR), 0);
    /* the socket: empty, at its end; the bytes: in the ring's buffer. As
     * with epoll (and nginx), a client that half-closes after pipelining
     * is gone. */
    ck_assert_int_eq(recv(c->fd, buf, 1, MSG_PEEK | MSG_DONTWAIT), 0);
    ck_assert_int_eq(sws_connection_peer_alive(c), 0);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 9);
    /* taken: now the socket says (its end, before the ring read it) */
    ck_assert_int_eq(sws_connection_peer_alive(c), 0);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(sws_connection_peer_alive(c), 0);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 0);
    sws_close_connection(c);
    close(sv[1]);
}
END_TEST

/* An upstream's connection (no listening socket): over TCP or a Unix
 * socket its reads are the ring's too (what the ring read is c->recv's,
 * not the socket's: the keep-alive cache's check reads, it does not
 * peek); one that reads passed descriptors keeps recvmsg(). */
START_TEST(upstream_reads_on_the_ring)
{
    int               sv[2], su[2];
    sws_connection_t *c, *u;
    u_char            buf[64];

    if (!uring) {
        return;
    }
    u = upstream_conn(su, 2);
    ck_assert_ptr_eq(u->recv, sws_unix_recv_fds);
    sws_close_connection(u);
    close(su[1]);
    u = upstream_conn(su, 1);
    ck_assert_ptr_ne(u->recv, sws_unix_recv);
    ck_assert_ptr_ne(u->recv, sws_unix_recv_fds);
    ck_assert_int_eq(u->recv(u, buf, sizeof(buf)), SWS_AGAIN);    /* armed */
    ck_assert_int_eq(send(su[1], "over unix", 9, 0), 9);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    /* the ring read it: the socket is empty */
    ck_assert_int_eq(recv(u->fd, buf, 1, MSG_PEEK | MSG_DONTWAIT), -1);
    ck_assert_int_eq(u->recv(u, buf, sizeof(buf)), 9);
    ck_assert(memcmp(buf, "over unix", 9) == 0);
    sws_close_connection(u);
    close(su[1]);

    c = upstream_conn(sv, 0);
    ck_assert_ptr_ne(c->recv, sws_unix_recv);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);   /* armed */
    /* idle in the keep-alive cache: the server sends something unasked */
    ck_assert_int_eq(send(sv[1], "junk", 4, 0), 4);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_ge(read_events, 1);
    /* the socket itself is empty: a peek would see nothing */
    ck_assert_int_eq(recv(c->fd, buf, 1, MSG_PEEK | MSG_DONTWAIT), -1);
    ck_assert_int_eq(c->recv(c, buf, 1), 1);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 3);
    ck_assert(memcmp(buf, "unk", 3) == 0);
    /* A read that finds nothing queues the next recv: the next bytes wake
     * the connection (its poll no longer reports them). */
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), SWS_AGAIN);
    read_events = 0;
    ck_assert_int_eq(send(sv[1], "next", 4, 0), 4);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(read_events, 1);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 4);
    /* its end, read by the ring */
    close(sv[1]);
    ck_assert_int_eq(sws_event_actions.process_events(&cycle, 1000), SWS_OK);
    ck_assert_int_eq(c->recv(c, buf, sizeof(buf)), 0);
    sws_close_connection(c);
    ck_assert_uint_eq(sws_active_connections(), 0);
}
END_TEST

static Suite *
uring_recv_suite(void)
{
    Suite *s = suite_create("uring_recv");
    TCase *tc = tcase_create("reads");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reads_come_on_the_ring);
    tcase_add_test(tc, close_with_a_read_armed_or_unread);
    tcase_add_test(tc, large_input_in_order);
    tcase_add_test(tc, recv_of_a_closed_connection_takes_nothing_of_the_next);
    tcase_add_test(tc, peer_alive_counts_the_ring_buffer);
    tcase_add_test(tc, upstream_reads_on_the_ring);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    sr = srunner_create(uring_recv_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
