/*
 * The heap of blocks that come and go together (src/core/sws_small_heap.c)
 * and the HPACK tables' allocator on it (src/http/sws_hpack_mem.c): blocks
 * of every size are aligned, as large as asked and apart; a span whose
 * blocks are all freed goes back to the kernel (its pages are no longer
 * resident), except one kept for the next block; a full range says NULL.
 */
#define _GNU_SOURCE 1
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "sws_small_heap.h"
#include "sws_hpack_mem.h"

#define SPAN  SWS_SMALL_HEAP_SPAN

/* Resident pages of the span holding p. */
static size_t
resident(const void *p)
{
    size_t         page = (size_t) sysconf(_SC_PAGESIZE), n = 0, i;
    unsigned char  vec[SPAN / 4096 + 1];
    void          *span = (void *) ((uintptr_t) p & ~(uintptr_t) (SPAN - 1));

    ck_assert_int_eq(mincore(span, SPAN, vec), 0);
    for (i = 0; i < SPAN / page; i++) {
        n += vec[i] & 1;
    }
    return n;
}

START_TEST(test_sizes)
{
    static sws_small_heap_t  h;
    static unsigned char    *b[SWS_SMALL_HEAP_MAX + 1];
    size_t                   size;
    void                    *m;

    ck_assert_ptr_null(sws_small_heap_alloc(&h, 0));
    ck_assert_ptr_null(sws_small_heap_alloc(&h, SWS_SMALL_HEAP_MAX + 1));
    for (size = 1; size <= SWS_SMALL_HEAP_MAX; size++) {
        b[size] = sws_small_heap_alloc(&h, size);
        ck_assert_ptr_nonnull(b[size]);
        ck_assert_uint_eq((uintptr_t) b[size] % 16, 0);
        ck_assert_uint_ge(sws_small_heap_usable(b[size]), size);
        ck_assert_uint_lt(sws_small_heap_usable(b[size]), size + 16);
        ck_assert(sws_small_heap_owns(&h, b[size]));
        memset(b[size], (int) (size & 0xff), size);
    }
    /* each kept its own bytes: no two blocks overlap */
    for (size = 1; size <= SWS_SMALL_HEAP_MAX; size++) {
        ck_assert_uint_eq(b[size][0], size & 0xff);
        ck_assert_uint_eq(b[size][size - 1], size & 0xff);
    }
    ck_assert_uint_eq(h.blocks, SWS_SMALL_HEAP_MAX);
    m = malloc(64);
    ck_assert(!sws_small_heap_owns(&h, m));
    free(m);
    for (size = 1; size <= SWS_SMALL_HEAP_MAX; size++) {
        sws_small_heap_free(&h, b[size]);
    }
    ck_assert_uint_eq(h.blocks, 0);
    ck_assert_uint_eq(h.spans, 0);
}
END_TEST

/* Spans filled with 1 KiB blocks, then all freed: every span but the
 * spare gives its pages back; the spare serves the next block without a
 * fault, and a released span is taken again (zero pages, written anew). */
START_TEST(test_release)
{
    static sws_small_heap_t  h;
    enum { N = 63 * 6 };                    /* 63 blocks of 1 KiB a span: 6 spans */
    static void             *b[N];
    void                    *first, *again;
    int                      i;

    for (i = 0; i < N; i++) {
        b[i] = sws_small_heap_alloc(&h, 1024);
        ck_assert_ptr_nonnull(b[i]);
        memset(b[i], 0xa5, 1024);
    }
    ck_assert_uint_eq(h.spans, 6);
    first = b[0];
    ck_assert_uint_ge(resident(first), 15);
    for (i = 0; i < N; i++) {
        sws_small_heap_free(&h, b[i]);
    }
    ck_assert_uint_eq(h.spans, 0);
    ck_assert_uint_eq(h.nreleased, 5);          /* the last one emptied is the spare */
    ck_assert_uint_eq(resident(first), 0);      /* the first span emptied went back */
    ck_assert_ptr_nonnull(h.spare);
    ck_assert_uint_ge(resident(h.spare), 15);

    /* one block comes and goes: the spare, no release */
    again = sws_small_heap_alloc(&h, 100);
    ck_assert_ptr_nonnull(again);
    ck_assert_ptr_null(h.spare);
    sws_small_heap_free(&h, again);
    ck_assert_ptr_nonnull(h.spare);
    ck_assert_uint_eq(h.nreleased, 5);

    /* two spans' worth: the spare, then a released span */
    for (i = 0; i < 126; i++) {
        b[i] = sws_small_heap_alloc(&h, 1024);
        ck_assert_ptr_nonnull(b[i]);
        memset(b[i], 0x5a, 1024);
    }
    ck_assert_uint_eq(h.nreleased, 4);
    for (i = 0; i < 126; i++) {
        ck_assert_uint_eq(((unsigned char *) b[i])[1023], 0x5a);
        sws_small_heap_free(&h, b[i]);
    }
}
END_TEST

/* A block freed in a full span makes room there again, and a span of a
 * size serves only that size. */
START_TEST(test_reuse)
{
    static sws_small_heap_t  h;
    static void             *b[64];
    void                    *p, *q;
    int                      i;

    for (i = 0; i < 64; i++) {
        b[i] = sws_small_heap_alloc(&h, 1000);
    }
    ck_assert_uint_eq(h.spans, 1);              /* 64 blocks of 1008 bytes: full */
    ck_assert_ptr_null(h.room[1008 / 16 - 1]);
    sws_small_heap_free(&h, b[10]);
    p = sws_small_heap_alloc(&h, 1008);
    ck_assert_ptr_eq(p, b[10]);
    q = sws_small_heap_alloc(&h, 16);
    ck_assert_uint_ne((uintptr_t) q & ~(uintptr_t) (SPAN - 1),
                      (uintptr_t) p & ~(uintptr_t) (SPAN - 1));
    ck_assert_uint_eq(h.spans, 2);
    sws_small_heap_free(&h, q);
    for (i = 0; i < 64; i++) {
        sws_small_heap_free(&h, b[i]);
    }
    ck_assert_uint_eq(h.blocks, 0);
}
END_TEST

/* A range with room for two spans: the third says NULL, and a freed
 * block makes room again. */
START_TEST(test_full)
{
    static sws_small_heap_t  h;
    void                    *a, *b, *c;

    h.range = 3 * SPAN;                         /* one for the stack of released spans */
    a = sws_small_heap_alloc(&h, 16);
    b = sws_small_heap_alloc(&h, 32);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_null(sws_small_heap_alloc(&h, 48));
    sws_small_heap_free(&h, a);                 /* its span: the spare */
    c = sws_small_heap_alloc(&h, 48);
    ck_assert_ptr_nonnull(c);
    sws_small_heap_free(&h, b);
    sws_small_heap_free(&h, c);
}
END_TEST

/* The HPACK allocator: realloc keeps the bytes across sizes, the heap's and
 * malloc()'s, calloc zeroes and refuses an overflowing product. */
START_TEST(test_hpack_mem)
{
    unsigned char *p, *q;
    size_t         i;

    p = sws_hpack_mem_malloc(100, NULL);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < 100; i++) {
        p[i] = (unsigned char) i;
    }
    p = sws_hpack_mem_realloc(p, 110, NULL);    /* same class: stays */
    ck_assert_ptr_nonnull(p);
    p = sws_hpack_mem_realloc(p, 3000, NULL);
    ck_assert_ptr_nonnull(p);
    p = sws_hpack_mem_realloc(p, 9000, NULL);   /* above the heap's sizes */
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < 100; i++) {
        ck_assert_uint_eq(p[i], i);
    }
    sws_hpack_mem_free(p, NULL);

    q = sws_hpack_mem_calloc(30, 40, NULL);
    ck_assert_ptr_nonnull(q);
    for (i = 0; i < 1200; i++) {
        ck_assert_uint_eq(q[i], 0);
    }
    memset(q, 0xff, 1200);
    sws_hpack_mem_free(q, NULL);
    q = sws_hpack_mem_calloc(30, 40, NULL);      /* a block used before: zeroed */
    for (i = 0; i < 1200; i++) {
        ck_assert_uint_eq(q[i], 0);
    }
    sws_hpack_mem_free(q, NULL);
    ck_assert_ptr_null(sws_hpack_mem_calloc(SIZE_MAX / 2, 4, NULL));
    ck_assert_ptr_null(sws_hpack_mem_realloc(sws_hpack_mem_malloc(8, NULL), 0, NULL));
    sws_hpack_mem_free(NULL, NULL);
}
END_TEST

int
main(void)
{
    Suite   *s = suite_create("small_heap");
    TCase   *tc = tcase_create("core");
    SRunner *sr;
    int      failed;

    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_release);
    tcase_add_test(tc, test_reuse);
    tcase_add_test(tc, test_full);
    tcase_add_test(tc, test_hpack_mem);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
