/*
 * QUIC steering (src/event/sws_udp_steer.c) on a real group of loopback
 * UDP sockets, one per slot: a datagram whose connection ID names a live
 * slot lands on that slot's socket (short and long headers); a client's
 * first Initial, an ID of a slot that is not live, one not of our layout
 * and a runt land on a current slot only; a slot opened later (in slot
 * order) is steered too; no current slot: the kernel's hash. Both the
 * classic program and (as root) the eBPF one.
 */
#define _GNU_SOURCE 1
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_event.h"
#include "sws_udp_steer.h"

#define WORKERS  3

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_udp_steer_log.XXXXXX";

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
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->len = sizeof(*sin);
    ck_assert_int_eq(bind(fd, (struct sockaddr *) &f->ss, f->len), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &f->ss, &f->len), 0);
    close(fd);

    f->ls = sws_listening_create(&f->cycle, (struct sockaddr *) &f->ss, f->len, &text);
    ck_assert_ptr_nonnull(f->ls);
    f->ls->udp = 1;
    f->ls->reuseport = 1;
    ck_assert_int_eq(sws_listening_open(&f->cycle, WORKERS), SWS_OK);
    /* room for more slots, the first WORKERS opened */
    ck_assert_uint_eq(f->ls->worker_fds_n, SWS_UDP_SLOTS(WORKERS));
    ck_assert_int_ne(f->ls->worker_fds[WORKERS - 1], -1);
    ck_assert_int_eq(f->ls->worker_fds[WORKERS], -1);
}

static void
done(fixture_t *f)
{
    sws_listening_close(&f->cycle, 0);
    ck_assert_int_eq(f->ls->steer_map, -1);
    sws_pool_destroy(f->cycle.pool);
}

/* The slot whose socket got d (sent from a new port), or -1. */
static int
landing(fixture_t *f, const u_char *d, size_t len)
{
    int      c, s, n;
    u_char   buf[2048];

    c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_eq(sendto(c, d, len, 0, (struct sockaddr *) &f->ss, f->len), (ssize_t) len);
    close(c);
    for (n = 0; n < 200; n++) {
        for (s = 0; s < (int) f->ls->worker_fds_n; s++) {
            if (f->ls->worker_fds[s] != -1
                && recv(f->ls->worker_fds[s], buf, sizeof(buf), MSG_DONTWAIT) == (ssize_t) len)
            {
                return s;
            }
        }
        usleep(1000);
    }
    return -1;
}

static size_t
short_header(u_char *d, unsigned slot, u_char magic)
{
    size_t  i;

    d[0] = 0x41;
    d[1] = magic;
    d[2] = (u_char) (slot >> 8);
    d[3] = (u_char) slot;
    for (i = 4; i < 60; i++) {
        d[i] = (u_char) random();
    }
    return 60;
}

static size_t
long_header(u_char *d, unsigned slot)
{
    static const u_char  head[] = { 0xe0, 0, 0, 0, 1, 16, 0x5c };
    size_t               i;

    memcpy(d, head, sizeof(head));
    d[7] = (u_char) (slot >> 8);
    d[8] = (u_char) slot;
    for (i = 9; i < 80; i++) {
        d[i] = (u_char) random();
    }
    return 80;
}

static size_t
initial(u_char *d)
{
    static const u_char  head[] = { 0xc0, 0, 0, 0, 1, 8 };
    size_t               i;

    memcpy(d, head, sizeof(head));
    for (i = sizeof(head); i < 1200; i++) {
        d[i] = (u_char) random();
    }
    return 1200;
}

static void
steered(fixture_t *f)
{
    sws_uint_t  live[] = { 0, 1, 2, 5 }, cur[] = { 1, 5 };
    u_char      d[1200];
    int         i, s, seen[8] = { 0 };

    /* slot 5: its socket and those below opened, in order */
    ck_assert_int_eq(sws_listening_slot_open(&f->cycle, 5), SWS_OK);
    for (s = 0; s <= 5; s++) {
        ck_assert_int_ne(f->ls->worker_fds[s], -1);
    }
    ck_assert_int_eq(f->ls->worker_fds[6], -1);
    ck_assert_int_eq(sws_listening_slot_open(&f->cycle, 999), SWS_ERROR);
    sws_udp_steer_update(&f->cycle, live, 4, cur, 2);

    for (i = 0; i < 4; i++) {
        for (s = 0; s < 4; s++) {
            ck_assert_int_eq(landing(f, d, short_header(d, live[s], 0x5c)), (int) live[s]);
            ck_assert_int_eq(landing(f, d, long_header(d, live[s])), (int) live[s]);
        }
    }
    /* not live (3: open, no process), past the sockets, not ours, runts,
     * a client's first Initial: a current slot */
    for (i = 0; i < 40; i++) {
        s = landing(f, d, initial(d));
        ck_assert(s == 1 || s == 5);
        seen[s]++;
        s = landing(f, d, short_header(d, 3, 0x5c));
        ck_assert(s == 1 || s == 5);
        s = landing(f, d, short_header(d, 300, 0x5c));
        ck_assert(s == 1 || s == 5);
        s = landing(f, d, short_header(d, 0, 0x11));
        ck_assert(s == 1 || s == 5);
        s = landing(f, d, 3);
        ck_assert(s == 1 || s == 5);
    }
    ck_assert_int_gt(seen[1], 0);
    ck_assert_int_gt(seen[5], 0);

    /* slot 1 retired: still live, no longer current */
    cur[0] = 2;
    sws_udp_steer_update(&f->cycle, live, 4, cur, 2);
    ck_assert_int_eq(landing(f, d, short_header(d, 1, 0x5c)), 1);
    for (i = 0; i < 20; i++) {
        s = landing(f, d, initial(d));
        ck_assert(s == 2 || s == 5);
    }
    /* slot 1 gone: its IDs to a current slot */
    live[1] = 2;
    sws_udp_steer_update(&f->cycle, live, 4, cur, 2);
    for (i = 0; i < 10; i++) {
        s = landing(f, d, short_header(d, 1, 0x5c));
        ck_assert(s == 2 || s == 5);
    }
    /* none current (every worker stopping): the kernel's hash, anywhere */
    live[1] = 5;
    sws_udp_steer_update(&f->cycle, live, 3, cur, 0);
    ck_assert_int_eq(landing(f, d, short_header(d, 5, 0x5c)), 5);
    ck_assert_int_ge(landing(f, d, initial(d)), 0);
}

START_TEST(classic_bpf)
{
    fixture_t  f;

    group(&f);
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_WANT_CBPF), 1);
    ck_assert_uint_eq(f.ls->steer, SWS_UDP_STEER_CBPF);
    ck_assert_int_eq(f.ls->steer_map, -1);
    steered(&f);
    done(&f);
}
END_TEST

START_TEST(ebpf)
{
    fixture_t  f;

    if (geteuid() != 0) {
        return;                         /* CAP_BPF: the master is root */
    }
    group(&f);
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_AUTO), 1);
    ck_assert_uint_eq(f.ls->steer, SWS_UDP_STEER_EBPF);
    ck_assert_int_ne(f.ls->steer_map, -1);
    /* attached already: kept */
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_AUTO), 1);
    steered(&f);
    /* cbpf asked for: the classic program replaces it */
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_WANT_CBPF), 1);
    ck_assert_uint_eq(f.ls->steer, SWS_UDP_STEER_CBPF);
    ck_assert_int_eq(f.ls->steer_map, -1);
    done(&f);
}
END_TEST

START_TEST(off)
{
    fixture_t  f;
    u_char     d[1200];
    int        s, seen[WORKERS] = { 0 }, i;

    group(&f);
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_WANT_CBPF), 1);
    ck_assert_int_eq(sws_udp_steer_attach(&f.cycle, SWS_UDP_STEER_OFF), 0);
    ck_assert_uint_eq(f.ls->steer, SWS_UDP_STEER_NONE);
    /* the program detached: the kernel's hash over the three */
    for (i = 0; i < 60; i++) {
        s = landing(&f, d, short_header(d, 0, 0x5c));
        ck_assert(s >= 0 && s < WORKERS);
        seen[s]++;
    }
    ck_assert(seen[1] + seen[2] > 0);
    done(&f);
}
END_TEST

static Suite *
udp_steer_suite(void)
{
    Suite *s = suite_create("udp_steer");
    TCase *tc = tcase_create("group");

    tcase_add_test(tc, classic_bpf);
    tcase_add_test(tc, ebpf);
    tcase_add_test(tc, off);
    tcase_set_timeout(tc, 60);
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
    srandom((unsigned) getpid());

    sr = srunner_create(udp_steer_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
