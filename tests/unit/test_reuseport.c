/*
 * The adaptive runtime's reuseport sockets (src/event/sws_reuseport.c and
 * sws_listening_worker_open/close) on a real group of loopback TCP
 * listeners, one per worker: the BPF program puts every new connection in
 * the queues of the first n sockets only, whatever n, and detached the
 * kernel's hash uses all of them again; the accept queue of one worker's
 * sockets is seen; a worker's socket closed leaves the group (nothing
 * reaches it, the others keep theirs), one opened again joins it; a
 * worker keeps no copy of the other workers' sockets.
 */
#define _GNU_SOURCE 1
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_event.h"
#include "sws_reuseport.h"

#define WORKERS  3

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_reuseport_log.XXXXXX";

typedef struct {
    struct sws_cycle_s       cycle;
    sws_listening_t         *ls;
    struct sockaddr_storage  ss;
    socklen_t                len;
} fixture_t;

static void
group(fixture_t *f)
{
    struct sockaddr_in  *sin = (struct sockaddr_in *) &f->ss;
    sws_str_t            text = sws_string("127.0.0.1:port");
    int                  fd;

    memset(f, 0, sizeof(*f));
    f->cycle.pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(f->cycle.pool);
    f->cycle.log = &tlog;
    ck_assert_int_eq(sws_array_init(&f->cycle.listening, f->cycle.pool, 2,
                                    sizeof(sws_listening_t *)), SWS_OK);
    /* A free port: bound to 0, looked at, let go. */
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->len = sizeof(*sin);
    ck_assert_int_eq(bind(fd, (struct sockaddr *) &f->ss, f->len), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &f->ss, &f->len), 0);
    close(fd);

    f->ls = sws_listening_create(&f->cycle, (struct sockaddr *) &f->ss, f->len, &text);
    ck_assert_ptr_nonnull(f->ls);
    f->ls->reuseport = 1;
    ck_assert_int_eq(sws_listening_open(&f->cycle, WORKERS), SWS_OK);
    ck_assert_uint_eq(f->ls->worker_fds_n, WORKERS);
    ck_assert(sws_reuseport_tcp(&f->cycle));
    ck_assert(!sws_reuseport_udp(&f->cycle));
}

static void
done(fixture_t *f)
{
    sws_listening_close(&f->cycle, 0);
    sws_pool_destroy(f->cycle.pool);
}

/* n connections made (each a new source port), then accepted from each
 * worker's socket: how many each had in its queue. */
static void
spread(fixture_t *f, int n, int got[WORKERS])
{
    int  i, w, c, a, clients[256];

    ck_assert_int_le(n, 256);
    for (i = 0; i < n; i++) {
        clients[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(connect(clients[i], (struct sockaddr *) &f->ss, f->len), 0);
    }
    for (w = 0; w < WORKERS; w++) {
        got[w] = 0;
        if (f->ls->worker_fds[w] == -1) {
            continue;
        }
        while ((a = accept4(f->ls->worker_fds[w], NULL, NULL, SOCK_NONBLOCK)) != -1) {
            close(a);
            got[w]++;
        }
        ck_assert_int_eq(errno, EAGAIN);
    }
    for (i = 0; i < n; i++) {
        close(clients[i]);
    }
    c = got[0] + got[1] + got[2];
    ck_assert_int_eq(c, n);
}

START_TEST(steered_to_the_first_n)
{
    fixture_t  f;
    int        got[WORKERS];

    group(&f);
    /* The listening sockets are nonblocking: accept4 returns EAGAIN. */
    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, 1), SWS_OK);
    spread(&f, 60, got);
    ck_assert_int_eq(got[0], 60);

    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, 2), SWS_OK);
    spread(&f, 120, got);
    ck_assert_int_gt(got[0], 0);
    ck_assert_int_gt(got[1], 0);
    ck_assert_int_eq(got[2], 0);

    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, WORKERS), SWS_OK);
    spread(&f, 150, got);
    ck_assert_int_gt(got[0], 0);
    ck_assert_int_gt(got[1], 0);
    ck_assert_int_gt(got[2], 0);

    /* More than there are: all of them (never an index past the group,
     * which the kernel would answer with its hash). */
    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, 7), SWS_OK);
    spread(&f, 150, got);
    ck_assert_int_gt(got[2], 0);

    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, 1), SWS_OK);
    sws_reuseport_unsteer(&f.cycle);
    spread(&f, 150, got);
    ck_assert_int_gt(got[1], 0);
    ck_assert_int_gt(got[2], 0);
    sws_reuseport_unsteer(&f.cycle);          /* none attached: harmless */
    done(&f);
}
END_TEST

START_TEST(queued_per_worker)
{
    fixture_t  f;
    int        c, a, w;

    group(&f);
    ck_assert_int_eq(sws_reuseport_steer(&f.cycle, 1), SWS_OK);
    for (w = 0; w < WORKERS; w++) {
        ck_assert(!sws_reuseport_queued(&f.cycle, w));
    }
    c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_eq(connect(c, (struct sockaddr *) &f.ss, f.len), 0);
    ck_assert(sws_reuseport_queued(&f.cycle, 0));
    ck_assert(!sws_reuseport_queued(&f.cycle, 1));
    ck_assert(!sws_reuseport_queued(&f.cycle, 2));
    a = accept4(f.ls->worker_fds[0], NULL, NULL, SOCK_NONBLOCK);
    ck_assert_int_ge(a, 0);
    ck_assert(!sws_reuseport_queued(&f.cycle, 0));
    close(a);
    close(c);
    done(&f);
}
END_TEST

START_TEST(closed_and_opened_again)
{
    fixture_t  f;
    int        got[WORKERS], fd0;

    group(&f);
    fd0 = f.ls->worker_fds[0];
    sws_listening_worker_close(&f.cycle, 2);
    ck_assert_int_eq(f.ls->worker_fds[2], -1);
    sws_listening_worker_close(&f.cycle, 2);          /* twice: nothing */
    sws_listening_worker_close(&f.cycle, 0);          /* worker 0's stays */
    ck_assert_int_eq(f.ls->worker_fds[0], fd0);
    sws_listening_worker_close(&f.cycle, 9);          /* no such worker */
    ck_assert(!sws_reuseport_queued(&f.cycle, 2));
    spread(&f, 90, got);
    ck_assert_int_gt(got[0], 0);
    ck_assert_int_gt(got[1], 0);

    ck_assert_int_eq(sws_listening_worker_open(&f.cycle, 2), SWS_OK);
    ck_assert_int_ne(f.ls->worker_fds[2], -1);
    spread(&f, 150, got);
    ck_assert_int_gt(got[2], 0);
    /* Open: nothing to do for sockets that are there. */
    fd0 = f.ls->worker_fds[2];
    ck_assert_int_eq(sws_listening_worker_open(&f.cycle, 2), SWS_OK);
    ck_assert_int_eq(f.ls->worker_fds[2], fd0);
    done(&f);
}
END_TEST

START_TEST(a_worker_keeps_only_its_own)
{
    fixture_t  f;
    int        fds[WORKERS], w, got[WORKERS];

    group(&f);
    for (w = 0; w < WORKERS; w++) {
        fds[w] = f.ls->worker_fds[w];
    }
    ck_assert_int_eq(sws_epoll_init(&f.cycle, 64), SWS_OK);
    ck_assert_int_eq(sws_connections_init(&f.cycle, 16), SWS_OK);
    sws_event_timer_init();
    /* Worker 1: the copies of workers 0 and 2's sockets are closed, or a
     * retired worker's socket would stay in the group through them. */
    ck_assert_int_eq(sws_listening_enable(&f.cycle, 1), SWS_OK);
    ck_assert_int_eq(f.ls->worker_fds[0], -1);
    ck_assert_int_eq(f.ls->worker_fds[1], fds[1]);
    ck_assert_int_eq(f.ls->worker_fds[2], -1);
    ck_assert_int_eq(f.ls->fd, fds[1]);
    ck_assert_int_eq(fcntl(fds[0], F_GETFD), -1);
    ck_assert_int_eq(fcntl(fds[2], F_GETFD), -1);
    /* The others' sockets gone, the kernel's hash has only this one. */
    spread(&f, 30, got);
    ck_assert_int_eq(got[1], 30);
    sws_listening_disable(&f.cycle, 0);
    f.ls->worker_fds[1] = -1;                  /* closed with its connection */
    sws_event_actions.done();
    done(&f);
}
END_TEST

START_TEST(migrate_req_read)
{
    FILE  *fp = fopen("/proc/sys/net/ipv4/tcp_migrate_req", "r");
    int    v = 0;

    if (fp == NULL) {
        ck_assert(!sws_reuseport_migrates());     /* Linux < 5.14 */
        return;
    }
    ck_assert_int_eq(fscanf(fp, "%d", &v), 1);
    fclose(fp);
    ck_assert_int_eq(sws_reuseport_migrates(), v == 1);
}
END_TEST

static Suite *
reuseport_suite(void)
{
    Suite *s = suite_create("reuseport");
    TCase *tc = tcase_create("group");

    tcase_add_test(tc, steered_to_the_first_n);
    tcase_add_test(tc, queued_per_worker);
    tcase_add_test(tc, closed_and_opened_again);
    tcase_add_test(tc, a_worker_keeps_only_its_own);
    tcase_add_test(tc, migrate_req_read);
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

    sr = srunner_create(reuseport_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
