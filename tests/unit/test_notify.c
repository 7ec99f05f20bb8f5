/*
 * sd_notify messages (src/core/sws_notify.c) read from a real AF_UNIX
 * datagram socket passed as NOTIFY_SOCKET: each state's lines, STATUS= cut
 * at a newline (it would start another assignment) and at its length, the
 * monotonic time of RELOADING=1, nothing at all without the variable, and a
 * socket nobody listens on (a warning in the log, no failure).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <scalws/sws_time.h>
#include "sws_log_internal.h"
#include "sws_notify.h"
#include "sws_auto_config.h"

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_notify_log.XXXXXX";
static char              dir[] = "/tmp/sws_test_notify.XXXXXX";
static char              sockpath[128];
static int               sock = -1;

static const char *
log_text(void)
{
    static char buf[8192];
    ssize_t     n = pread(tlog.fd, buf, sizeof(buf) - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void
setup(void)
{
    struct sockaddr_un  sa;

    ck_assert_ptr_nonnull(mkdtemp(strcpy(dir, "/tmp/sws_test_notify.XXXXXX")));
    snprintf(sockpath, sizeof(sockpath), "%s/notify", dir);
    sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(sock, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, sockpath);
    ck_assert_int_eq(bind(sock, (struct sockaddr *) &sa, sizeof(sa)), 0);
    setenv("NOTIFY_SOCKET", sockpath, 1);
}

static void
teardown(void)
{
    close(sock);
    unlink(sockpath);
    rmdir(dir);
    unsetenv("NOTIFY_SOCKET");
}

/* The next datagram, NUL-terminated; "" if none within a second. */
static const char *
recv_msg(void)
{
    static char     buf[4096];
    struct timeval  tv = { 1, 0 };
    ssize_t         n;

    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = recv(sock, buf, sizeof(buf) - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static unsigned long long
now_usec(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long) ts.tv_sec * 1000000ULL + (unsigned long long) ts.tv_nsec / 1000;
}


#if (SWS_HAVE_SYSTEMD)

START_TEST(states)
{
    char  want[64];

    sws_notify(&tlog, SWS_NOTIFY_READY, "serving: %d workers", 3);
    snprintf(want, sizeof(want), "READY=1\nMAINPID=%ld\nSTATUS=serving: 3 workers",
             (long) getpid());
    ck_assert_str_eq(recv_msg(), want);

    sws_notify(&tlog, SWS_NOTIFY_STOPPING, "shutting down");
    ck_assert_str_eq(recv_msg(), "STOPPING=1\nSTATUS=shutting down");

    sws_notify(&tlog, SWS_NOTIFY_STATUS, "%s", "only a status");
    ck_assert_str_eq(recv_msg(), "STATUS=only a status");

    sws_notify(&tlog, SWS_NOTIFY_STOPPING, NULL);
    ck_assert_str_eq(recv_msg(), "STOPPING=1\n");
}
END_TEST

START_TEST(reloading_monotonic)
{
    unsigned long long  before, after, t;
    const char         *m;

    before = now_usec();
    sws_notify(&tlog, SWS_NOTIFY_RELOADING, "reloading");
    after = now_usec();
    m = recv_msg();
    ck_assert_int_eq(sscanf(m, "RELOADING=1\nMONOTONIC_USEC=%llu\n", &t), 1);
    ck_assert(before <= t && t <= after);
    ck_assert_ptr_nonnull(strstr(m, "\nSTATUS=reloading"));
}
END_TEST

START_TEST(status_one_line_bounded)
{
    char         big[1000];
    const char  *m;

    sws_notify(&tlog, SWS_NOTIFY_STATUS, "first line\nREADY=1");
    ck_assert_str_eq(recv_msg(), "STATUS=first line");

    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    sws_notify(&tlog, SWS_NOTIFY_READY, "%s", big);
    m = recv_msg();
    ck_assert_ptr_nonnull(strstr(m, "READY=1\n"));
    ck_assert_ptr_nonnull(strstr(m, "STATUS=xxx"));
    ck_assert_uint_lt(strlen(m), 512);
}
END_TEST

START_TEST(nobody_listens)
{
    close(sock);
    unlink(sockpath);
    sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sws_notify(&tlog, SWS_NOTIFY_READY, "x");
    ck_assert_ptr_nonnull(strstr(log_text(), "sd_notify(\"READY=1\") failed"));
}
END_TEST

#endif

START_TEST(without_the_variable)
{
    unsetenv("NOTIFY_SOCKET");
    sws_notify(&tlog, SWS_NOTIFY_READY, "x");
    sws_notify(&tlog, SWS_NOTIFY_STOPPING, "x");
    ck_assert_str_eq(recv_msg(), "");
}
END_TEST


static Suite *
notify_suite(void)
{
    Suite  *s = suite_create("notify");
    TCase  *tc = tcase_create("sd_notify");

    tcase_add_checked_fixture(tc, setup, teardown);
#if (SWS_HAVE_SYSTEMD)
    tcase_add_test(tc, states);
    tcase_add_test(tc, reloading_monotonic);
    tcase_add_test(tc, status_one_line_bounded);
    tcase_add_test(tc, nobody_listens);
#endif
    tcase_add_test(tc, without_the_variable);
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

    sr = srunner_create(notify_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
