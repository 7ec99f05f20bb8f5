/*
 * A worker's graceful shutdown (src/event/sws_connection.c): every
 * connection with a shutdown hook has it called once, busy or idle; idle
 * keep-alive connections without one are closed (their read handler sees
 * `close`); a hooked idle connection is left to its protocol; and when
 * connections run out, idle ones are closed whatever their hook.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "sws_cycle.h"
#include "sws_event.h"
#include "sws_log_internal.h"

static struct sws_log_s  tlog;
static int               hooked[8], closed_by_read[8];

static int
index_of(sws_connection_t *c)
{
    return (int) (intptr_t) c->data;
}

static void
hook(sws_connection_t *c)
{
    hooked[index_of(c)]++;
}

/* The read handler of an idle connection: ends it if told to. */
static void
idle_read(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;

    if (c->close) {
        closed_by_read[index_of(c)]++;
        sws_close_connection(c);
    }
}

/* A hook that closes its connection and another one (as an HTTP/2 hook
 * may close an upstream connection of its streams). */
static sws_connection_t *victim;

static void
hook_closing(sws_connection_t *c)
{
    hooked[index_of(c)]++;
    sws_close_connection(c);
    if (victim && victim->fd != -1) {
        sws_close_connection(victim);
    }
}

static sws_connection_t *
conn(int i, void (*shutdown)(sws_connection_t *), int idle)
{
    int               sv[2];
    sws_connection_t *c;

    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close(sv[1]);
    c = sws_get_connection(sv[0], &tlog);
    ck_assert_ptr_nonnull(c);
    c->data = (void *) (intptr_t) i;
    c->shutdown = shutdown;
    c->read->handler = idle_read;
    if (idle) {
        sws_reusable_connection(c, 1);
    }
    return c;
}

static void
setup(sws_cycle_t *cycle)
{
    memset(cycle, 0, sizeof(*cycle));
    memset(hooked, 0, sizeof(hooked));
    memset(closed_by_read, 0, sizeof(closed_by_read));
    tlog.fd = 2;
    tlog.level = SWS_LOG_ERR;
    cycle->log = &tlog;
    ck_assert_int_eq(sws_connections_init(cycle, 8), SWS_OK);
}

START_TEST(hooks_called_once_idle_without_hook_closed)
{
    sws_cycle_t       cycle;
    sws_connection_t *busy, *idle_hooked, *idle_plain, *busy_plain;

    setup(&cycle);
    busy = conn(0, hook, 0);
    idle_hooked = conn(1, hook, 1);
    idle_plain = conn(2, NULL, 1);
    busy_plain = conn(3, NULL, 0);
    ck_assert_uint_eq(sws_active_connections(), 4);

    sws_shutdown_connections();
    ck_assert_int_eq(hooked[0], 1);
    ck_assert_int_eq(hooked[1], 1);
    ck_assert_int_eq(closed_by_read[2], 1);       /* an upstream's idle one */
    ck_assert_int_eq(closed_by_read[1], 0);       /* its protocol decides */
    ck_assert_int_eq(busy->fd != -1 && idle_hooked->fd != -1 && busy_plain->fd != -1, 1);
    ck_assert_int_eq(idle_plain->fd, -1);
    ck_assert_uint_eq(sws_active_connections(), 3);

    /* again (the loop does it every turn): idle hooked ones stay */
    sws_close_idle_connections(1);
    ck_assert_int_eq(closed_by_read[1], 0);
    /* running out of connections closes idle ones, hooked or not */
    sws_close_idle_connections(0);
    ck_assert_int_eq(closed_by_read[1], 1);
    ck_assert_uint_eq(sws_active_connections(), 2);
    sws_close_connection(busy);
    sws_close_connection(busy_plain);
}
END_TEST

START_TEST(hook_may_close_connections)
{
    sws_cycle_t       cycle;
    sws_connection_t *a, *b, *c;

    setup(&cycle);
    a = conn(0, hook_closing, 0);
    b = conn(1, hook, 0);           /* closed by a's hook before its turn */
    c = conn(2, hook, 1);
    victim = b;
    sws_shutdown_connections();
    victim = NULL;
    ck_assert_int_eq(hooked[0], 1);
    ck_assert_int_eq(hooked[1], 0);
    ck_assert_int_eq(hooked[2], 1);
    ck_assert_int_eq(a->fd, -1);
    ck_assert_int_eq(b->fd, -1);
    ck_assert_uint_eq(sws_active_connections(), 1);
    sws_close_connection(c);
}
END_TEST

static Suite *
shutdown_suite(void)
{
    Suite *s = suite_create("shutdown");
    TCase *tc = tcase_create("connections");

    tcase_add_test(tc, hooks_called_once_idle_without_hook_closed);
    tcase_add_test(tc, hook_may_close_connections);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    sr = srunner_create(shutdown_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
