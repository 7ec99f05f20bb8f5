/*
 * Shared memory zones: declaration (same name, size and tag -> same zone,
 * another tag or size -> refused), the init callback, the lock across
 * processes (and a holder that dies), and a reload: the same memory with the
 * old data, or new memory for a new size, and a thrown-away configuration
 * that leaves the old zone alone. (tests/unit/test_upstream.c covers more.)
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_log_internal.h"
#include <scalws/sws_shm.h>

#define STR(s)  (&(sws_str_t) sws_string(s))

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_shm_log.XXXXXX";
static int               tag_a, tag_b;

typedef struct {
    struct sws_cycle_s  cycle;
    struct sws_conf_s   conf;
} fake_t;

static void
fake_init(fake_t *f, fake_t *old)
{
    sws_memzero(f, sizeof(*f));
    f->cycle.pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(f->cycle.pool);
    f->cycle.log = &tlog;
    f->cycle.old_cycle = old ? &old->cycle : NULL;
    f->conf.cycle = &f->cycle;
    f->conf.pool = f->cycle.pool;
    f->conf.log = &tlog;
}

static const char *
log_text(void)
{
    static char buf[8192];
    ssize_t     n = pread(tlog.fd, buf, sizeof(buf) - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int init_calls;
static void *init_old;

static sws_int_t
counting_init(sws_shm_zone_t *zone, void *old)
{
    init_calls++;
    init_old = old;
    if (old) {
        zone->data = old;
        return SWS_OK;
    }
    *(uint64_t *) zone->addr = 0x5157;
    zone->data = zone->addr;
    return SWS_OK;
}

static sws_int_t
failing_init(sws_shm_zone_t *zone, void *old)
{
    (void) zone;
    (void) old;
    return SWS_ERROR;
}

/* ---------------------------------------------------------------- */

START_TEST(add_same_name_same_tag)
{
    fake_t          f;
    sws_shm_zone_t *a, *b, *c;

    fake_init(&f, NULL);
    a = sws_shm_zone_add(&f.conf, STR("one"), 100000, NULL, &tag_a);
    b = sws_shm_zone_add(&f.conf, STR("one"), 100000, NULL, &tag_a);
    c = sws_shm_zone_add(&f.conf, STR("two"), 1, NULL, &tag_a);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_ne(a, c);
    ck_assert_int_eq((int) a->name.len, 3);
    ck_assert_int_eq(memcmp(a->name.data, "one", 3), 0);
    ck_assert_uint_ge(a->size, 100000);
    ck_assert_uint_eq(((uintptr_t) a->addr) % 64, 0);
    ck_assert_uint_eq(a->addr[99999], 0);         /* zeroed */
    /* another size in the same configuration: refused */
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("one"), 300000, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR(""), 8192, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("zero"), 0, NULL, &tag_a));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(add_same_name_other_tag_refused)
{
    fake_t f;

    fake_init(&f, NULL);
    ck_assert_ptr_nonnull(sws_shm_zone_add(&f.conf, STR("z"), 8192, NULL, &tag_a));
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("z"), 8192, NULL, &tag_b));
    ck_assert_ptr_nonnull(strstr(log_text(), "by another module"));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(init_callback_and_data)
{
    fake_t          f;
    sws_shm_zone_t *z;

    init_calls = 0;
    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("init"), 8192, counting_init, &tag_a);
    ck_assert_ptr_nonnull(z);
    ck_assert_int_eq(init_calls, 1);
    ck_assert_ptr_null(init_old);
    ck_assert_ptr_eq(z->data, z->addr);
    ck_assert_uint_eq(*(uint64_t *) z->addr, 0x5157);
    /* asked again: no second init */
    ck_assert_ptr_eq(sws_shm_zone_add(&f.conf, STR("init"), 8192, counting_init, &tag_a), z);
    ck_assert_int_eq(init_calls, 1);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(init_failure_refuses)
{
    fake_t f;

    fake_init(&f, NULL);
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("bad"), 8192, failing_init, &tag_a));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Memory written by a child is seen by the parent, and the lock makes
 * increments from two processes add up. */
START_TEST(shared_across_fork_with_lock)
{
    fake_t             f;
    sws_shm_zone_t    *z;
    volatile uint64_t *counter;
    pid_t              pid;
    int                i, status;

    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("count"), 8192, NULL, &tag_a);
    ck_assert_ptr_nonnull(z);
    counter = (volatile uint64_t *) z->addr;
    *counter = 0;

    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        for (i = 0; i < 200000; i++) {
            sws_shm_lock(z);
            (*counter)++;
            sws_shm_unlock(z);
        }
        _exit(0);
    }
    for (i = 0; i < 200000; i++) {
        sws_shm_lock(z);
        (*counter)++;
        sws_shm_unlock(z);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(*counter, 400000);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A process that dies holding the lock does not block the others. */
START_TEST(lock_holder_dies)
{
    fake_t          f;
    sws_shm_zone_t *z;
    pid_t           pid;
    int             status;

    fake_init(&f, NULL);
    z = sws_shm_zone_add(&f.conf, STR("dead"), 8192, NULL, &tag_a);
    ck_assert_ptr_nonnull(z);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sws_shm_lock(z);
        _exit(0);                         /* dies with it */
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    alarm(5);                             /* a deadlock fails the test */
    sws_shm_lock(z);
    sws_shm_unlock(z);
    sws_shm_lock(z);
    sws_shm_unlock(z);
    alarm(0);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Reload: a zone of the same name, size and tag takes the old mapping and
 * its data; the old configuration's end does not unmap it; a new size gets
 * new memory. */
START_TEST(reload_takes_over)
{
    fake_t          old, f;
    sws_shm_zone_t *zo, *zn, *zs;
    u_char         *addr;

    init_calls = 0;
    fake_init(&old, NULL);
    zo = sws_shm_zone_add(&old.conf, STR("keep"), 65536, counting_init, &tag_a);
    zs = sws_shm_zone_add(&old.conf, STR("resize"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zo);
    ck_assert_ptr_nonnull(zs);
    addr = zo->addr;
    memcpy(addr + 100, "survives", 9);
    memcpy(zs->addr + 100, "old", 4);

    fake_init(&f, &old);
    zn = sws_shm_zone_add(&f.conf, STR("keep"), 65536, counting_init, &tag_a);
    zs = sws_shm_zone_add(&f.conf, STR("resize"), 2 * 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zn);
    ck_assert_ptr_nonnull(zs);

    ck_assert_int_eq(init_calls, 2);
    ck_assert_ptr_eq(init_old, addr);            /* given the old data */
    ck_assert_ptr_eq(zn->addr, addr);
    ck_assert_uint_eq(zs->addr[100], 0);         /* a new zone */

    sws_pool_destroy(old.cycle.pool);            /* the old configuration ends */
    ck_assert_str_eq((char *) addr + 100, "survives");
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A new configuration that fails leaves the old zone alone. */
START_TEST(failed_reload_keeps_old_zone)
{
    fake_t          old, f;
    sws_shm_zone_t *zo, *zn;
    u_char         *addr;

    fake_init(&old, NULL);
    zo = sws_shm_zone_add(&old.conf, STR("keep"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zo);
    addr = zo->addr;
    memcpy(addr, "still here", 11);

    fake_init(&f, &old);
    zn = sws_shm_zone_add(&f.conf, STR("keep"), 65536, NULL, &tag_a);
    ck_assert_ptr_nonnull(zn);
    ck_assert_ptr_null(sws_shm_zone_add(&f.conf, STR("broken"), 8192, failing_init, &tag_a));
    ck_assert_ptr_eq(zn->addr, addr);
    sws_pool_destroy(f.cycle.pool);              /* thrown away */
    ck_assert_str_eq((char *) addr, "still here");
    sws_pool_destroy(old.cycle.pool);
}
END_TEST

static Suite *
shm_suite(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("zones");

    tcase_add_test(tc, add_same_name_same_tag);
    tcase_add_test(tc, add_same_name_other_tag_refused);
    tcase_add_test(tc, init_callback_and_data);
    tcase_add_test(tc, init_failure_refuses);
    tcase_add_test(tc, shared_across_fork_with_lock);
    tcase_add_test(tc, lock_holder_dies);
    tcase_add_test(tc, reload_takes_over);
    tcase_add_test(tc, failed_reload_keeps_old_zone);
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

    sr = srunner_create(shm_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
