/*
 * The heap given back after a quiet second (src/event/sws_heap_trim.c):
 * with scalwsd's high trim threshold, free memory at the top of the heap
 * stays there until the worker has seen no new or closed connection for a
 * second; then malloc_trim() returns it. Nothing happens outside a
 * worker's loop (before sws_heap_trim_init: no timers to arm).
 */
#define _GNU_SOURCE 1
#include <check.h>
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>
#include "sws_event.h"

/* AddressSanitizer has a heap of its own (mallopt and mallinfo2 are
 * stubs): the timer's logic is checked, not what glibc gives back. */
#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_HEAP  0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GLIBC_HEAP  0
#endif
#endif
#ifndef GLIBC_HEAP
#define GLIBC_HEAP  1
#endif

#define BLOCKS      2048
#define BLOCK_SIZE  4096            /* 8 MiB in all, below the mmap threshold */

static void *blocks[BLOCKS];

/* The heap with 8 MiB free at its top, which glibc keeps (scalwsd's
 * thresholds, as in scalwsd.c: 2 MiB; here higher, so that nothing but
 * malloc_trim gives it back). */
static size_t
free_top(void)
{
    int i;

    if (!GLIBC_HEAP) {
        return 0;
    }
    ck_assert_int_eq(mallopt(M_MMAP_THRESHOLD, 1024 * 1024), 1);
    ck_assert_int_eq(mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024), 1);
    for (i = 0; i < BLOCKS; i++) {
        blocks[i] = malloc(BLOCK_SIZE);
        ck_assert_ptr_nonnull(blocks[i]);
    }
    for (i = BLOCKS - 1; i >= 0; i--) {
        free(blocks[i]);
    }
    return mallinfo2().arena;
}

static void
wait_ms(unsigned ms)
{
    usleep(ms * 1000);
    sws_time_update();
    sws_event_expire_timers();
}

START_TEST(not_outside_a_worker)
{
    sws_time_update();
    sws_event_timer_init();
    sws_heap_trim_note();
    ck_assert_int_eq(sws_event_find_timer(), -1);
}
END_TEST

START_TEST(given_back_after_a_quiet_second)
{
    size_t arena;

    sws_time_update();
    sws_event_timer_init();
    sws_heap_trim_init();
    arena = free_top();
    ck_assert(!GLIBC_HEAP || arena >= BLOCKS * BLOCK_SIZE);

    sws_heap_trim_note();                       /* a connection came */
    ck_assert_int_ge(sws_event_find_timer(), 0);
    ck_assert_int_le(sws_event_find_timer(), 1000);
    wait_ms(600);
    sws_heap_trim_note();                       /* another: not quiet */
    wait_ms(500);
    /* The first second had a connection: armed again, nothing given back. */
    ck_assert_int_ge(sws_event_find_timer(), 0);
    ck_assert(!GLIBC_HEAP || mallinfo2().arena >= BLOCKS * BLOCK_SIZE);

    wait_ms(1100);                              /* a quiet second */
    ck_assert_int_eq(sws_event_find_timer(), -1);
    ck_assert(!GLIBC_HEAP || mallinfo2().arena < arena - BLOCKS * BLOCK_SIZE / 2);

    /* The next connection arms it again. */
    sws_heap_trim_note();
    ck_assert_int_ge(sws_event_find_timer(), 0);
}
END_TEST

static Suite *
heap_trim_suite(void)
{
    Suite *s = suite_create("heap_trim");
    TCase *tc = tcase_create("trim");

    tcase_add_test(tc, not_outside_a_worker);
    tcase_add_test(tc, given_back_after_a_quiet_second);
    tcase_set_timeout(tc, 20);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    sr = srunner_create(heap_trim_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
