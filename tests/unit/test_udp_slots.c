/*
 * The table of QUIC slots shared by the masters of a binary upgrade
 * (src/event/sws_udp_slots.c): a slot is held by a process until it is
 * released or its process is gone; the live slots are all those held,
 * the current ones those of the newest master (epoch) that has some; a
 * new binary takes the table from its descriptor (the next epoch), and
 * a descriptor that is not a table gives a table of its own.
 */
#define _GNU_SOURCE 1
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_event.h"
#include "sws_udp_slots.h"
#include "sws_udp_steer.h"

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_udp_slots_log.XXXXXX";

static sws_uint_t  live[SWS_UDP_SLOTS_MAX], cur[SWS_UDP_SLOTS_MAX], nlive, ncur;

static void
steering(void)
{
    sws_udp_slots_lock();
    sws_udp_slots_steering(live, &nlive, cur, &ncur);
    sws_udp_slots_unlock();
}

/* A pid that no process has any more. */
static pid_t
gone(void)
{
    pid_t  pid = fork();

    if (pid == 0) {
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
    return pid;
}

START_TEST(held_and_released)
{
    ck_assert_int_eq(sws_udp_slots_init(&tlog, -1), SWS_OK);
    ck_assert_int_ne(sws_udp_slots_fd(), -1);
    ck_assert_uint_eq(sws_udp_slots_epoch(), 1);
    ck_assert(sws_udp_slots_free(0));
    sws_udp_slots_hold(0, getpid(), 1);
    sws_udp_slots_hold(1, getpid(), 0);
    sws_udp_slots_hold(SWS_UDP_SLOTS_MAX, getpid(), 1);     /* no such slot */
    ck_assert(!sws_udp_slots_free(0) && !sws_udp_slots_free(SWS_UDP_SLOTS_MAX));
    steering();
    ck_assert_uint_eq(nlive, 2);
    ck_assert_uint_eq(live[0], 0);
    ck_assert_uint_eq(live[1], 1);
    ck_assert_uint_eq(ncur, 1);
    ck_assert_uint_eq(cur[0], 0);
    /* only by its process */
    sws_udp_slots_release(1, getpid() + 1);
    ck_assert(!sws_udp_slots_free(1));
    sws_udp_slots_release(1, getpid());
    ck_assert(sws_udp_slots_free(1));
    /* a process gone without a word (its master killed): free */
    sws_udp_slots_hold(2, gone(), 1);
    ck_assert(sws_udp_slots_free(2));
    steering();
    ck_assert_uint_eq(nlive, 1);
    ck_assert_uint_eq(ncur, 1);
    /* none current: no current slot at all */
    sws_udp_slots_hold(0, getpid(), 0);
    steering();
    ck_assert_uint_eq(nlive, 1);
    ck_assert_uint_eq(ncur, 0);
}
END_TEST

START_TEST(new_binary)
{
    int    fd, status;
    pid_t  pid;

    ck_assert_int_eq(sws_udp_slots_init(&tlog, -1), SWS_OK);
    sws_udp_slots_hold(0, getpid(), 1);
    sws_udp_slots_hold(1, getpid(), 1);

    pid = fork();
    if (pid == 0) {
        /* as the new binary: the descriptor only */
        fd = dup(sws_udp_slots_fd());
        sws_udp_slots_worker();
        if (sws_udp_slots_init(&tlog, fd) != SWS_OK || sws_udp_slots_epoch() != 2
            || sws_udp_slots_free(0) || sws_udp_slots_free(1) || !sws_udp_slots_free(2))
        {
            _exit(1);
        }
        sws_udp_slots_hold(2, getpid(), 1);
        steering();
        /* the newest master's workers take the new connections */
        if (nlive != 3 || ncur != 1 || cur[0] != 2) {
            _exit(2);
        }
        /* it stops (a rollback): the old master's again */
        sws_udp_slots_hold(2, getpid(), 0);
        steering();
        if (nlive != 3 || ncur != 2 || cur[0] != 0 || cur[1] != 1) {
            _exit(3);
        }
        sws_udp_slots_hold(3, getpid(), 1);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    /* what it held is free now that it is gone */
    steering();
    ck_assert_uint_eq(nlive, 2);
    ck_assert_uint_eq(ncur, 2);
}
END_TEST

START_TEST(not_a_table)
{
    int  p[2];

    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(sws_udp_slots_init(&tlog, p[0]), SWS_OK);
    ck_assert_uint_eq(sws_udp_slots_epoch(), 1);
    ck_assert_int_ne(sws_udp_slots_fd(), -1);
    /* the pipe closed by it (its number may be the new table's) */
    ck_assert_int_eq(write(p[1], "x", 1), -1);
    close(p[1]);
    /* and an empty environment variable gives a new table as well */
    sws_udp_slots_worker();
    setenv(SWS_QUIC_ENV, "", 1);
    ck_assert_int_eq(sws_udp_steer_inherit(&tlog), SWS_OK);
    ck_assert_ptr_null(getenv(SWS_QUIC_ENV));
    ck_assert_uint_eq(sws_udp_slots_epoch(), 1);
    sws_udp_slots_worker();
    setenv(SWS_QUIC_ENV, "x;", 1);
    ck_assert_int_eq(sws_udp_steer_inherit(&tlog), SWS_OK);
    ck_assert_uint_eq(sws_udp_slots_epoch(), 1);
}
END_TEST

static Suite *
udp_slots_suite(void)
{
    Suite *s = suite_create("udp_slots");
    TCase *tc = tcase_create("table");

    tcase_add_test(tc, held_and_released);
    tcase_add_test(tc, new_binary);
    tcase_add_test(tc, not_a_table);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    signal(SIGPIPE, SIG_IGN);

    tlog.fd = mkstemp(logpath);
    if (tlog.fd == -1) {
        perror("mkstemp");
        return 1;
    }
    unlink(logpath);
    tlog.level = SWS_LOG_DEBUG;
    sws_time_update();
    sr = srunner_create(udp_slots_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
