/*
 * The per-thread caching allocator: alignment, contents kept by realloc()
 * across classes (and to and from blocks above the largest class), freed
 * blocks reused, the caps (blocks beyond them really freed), zero and huge
 * sizes, calloc() overflow, a thread's cache emptied when it exits, and the
 * OpenSSL and nghttp2 entry points. Built with ASan the allocator passes
 * through: the tests of caching then only check that nothing is cached.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scalws/sws_types.h>
#include "sws_alloc_cache.h"

static const size_t  sizes[] = {
    0, 1, 15, 16, 17, 31, 48, 63, 64, 65, 100, 127, 128, 129, 500, 1000,
    1024, 1025, 1500, 4095, 4096, 4097, 16384, 16716, 20480, 20481, 32767,
    32768, 32769, 65536, 200000
};


static void
fill(u_char *p, size_t n, unsigned seed)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        p[i] = (u_char) (i * 31 + seed);
    }
}


static int
check_fill(const u_char *p, size_t n, unsigned seed)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (p[i] != (u_char) (i * 31 + seed)) {
            return 0;
        }
    }
    return 1;
}


static void
stats(sws_alloc_cache_stats_t *st)
{
    sws_alloc_cache_stats(st);
}


/* Each test starts from an empty cache with its caps fresh. */
static void
setup(void)
{
    sws_alloc_cache_flush();
}


START_TEST(aligned_and_writable)
{
    void    *p[sws_nelems(sizes)];
    size_t   i;

    for (i = 0; i < sws_nelems(sizes); i++) {
        p[i] = sws_alloc_cache_malloc(sizes[i]);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert_uint_eq((uintptr_t) p[i] % 16, 0);
        fill(p[i], sizes[i], (unsigned) i);
    }
    for (i = 0; i < sws_nelems(sizes); i++) {
        ck_assert(check_fill(p[i], sizes[i], (unsigned) i));
        sws_alloc_cache_free(p[i]);
    }
    /* Reused blocks are aligned too. */
    for (i = 0; i < sws_nelems(sizes); i++) {
        p[i] = sws_alloc_cache_calloc(1, sizes[i]);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert_uint_eq((uintptr_t) p[i] % 16, 0);
    }
    for (i = 0; i < sws_nelems(sizes); i++) {
        sws_alloc_cache_free(p[i]);
    }
    sws_alloc_cache_free(NULL);
}
END_TEST


START_TEST(zero_size)
{
    u_char  *a, *b;

    a = sws_alloc_cache_malloc(0);
    b = sws_alloc_cache_malloc(0);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    sws_alloc_cache_free(a);

    a = sws_alloc_cache_calloc(0, 10);
    ck_assert_ptr_nonnull(a);
    sws_alloc_cache_free(a);
    a = sws_alloc_cache_calloc(10, 0);
    ck_assert_ptr_nonnull(a);

    /* realloc() to 0 frees; from NULL it allocates. */
    ck_assert_ptr_null(sws_alloc_cache_realloc(a, 0));
    a = sws_alloc_cache_realloc(NULL, 0);
    ck_assert_ptr_nonnull(a);
    sws_alloc_cache_free(a);
    a = sws_alloc_cache_realloc(NULL, 40);
    ck_assert_ptr_nonnull(a);
    fill(a, 40, 1);
    sws_alloc_cache_free(a);
    sws_alloc_cache_free(b);
}
END_TEST


/* Up through every class and beyond the largest, then down again. */
START_TEST(realloc_keeps_contents)
{
    static const size_t  steps[] = {
        1, 16, 17, 64, 65, 200, 1024, 1025, 3000, 16716, 32768, 32769, 100000,
        40000, 32768, 20000, 1000, 30, 5
    };
    u_char  *p, *q;
    size_t   i, kept;

    p = sws_alloc_cache_malloc(steps[0]);
    ck_assert_ptr_nonnull(p);
    fill(p, steps[0], 7);
    for (i = 1; i < sws_nelems(steps); i++) {
        p = sws_alloc_cache_realloc(p, steps[i]);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t) p % 16, 0);
        kept = sws_min(steps[i - 1], steps[i]);
        ck_assert_msg(check_fill(p, kept, 7), "lost contents from %zu to %zu bytes",
                      steps[i - 1], steps[i]);
        fill(p, steps[i], 7);
    }
    sws_alloc_cache_free(p);

    /* Within its class a block stays where it is. */
    p = sws_alloc_cache_malloc(1500);
    ck_assert_ptr_nonnull(p);
    q = sws_alloc_cache_realloc(p, 1536);
    if (sws_alloc_cache_active()) {
        ck_assert_ptr_eq(p, q);
    }
    sws_alloc_cache_free(q);
}
END_TEST


START_TEST(calloc_zeroes_reused_blocks)
{
    u_char  *p;
    size_t   i, n;

    n = (size_t) _i == 0 ? 100 : 20000;
    p = sws_alloc_cache_malloc(n);
    ck_assert_ptr_nonnull(p);
    memset(p, 0xa5, n);
    sws_alloc_cache_free(p);

    p = sws_alloc_cache_calloc(n / 4, 4);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < n; i++) {
        ck_assert_uint_eq(p[i], 0);
    }
    sws_alloc_cache_free(p);

    p = sws_alloc_cache_calloc(3, 70000);
    ck_assert_ptr_nonnull(p);
    for (i = 0; i < 210000; i += 997) {
        ck_assert_uint_eq(p[i], 0);
    }
    sws_alloc_cache_free(p);
}
END_TEST


START_TEST(reuse_of_freed_blocks)
{
    sws_alloc_cache_stats_t   st0, st;
    void                     *a, *b, *c;

    a = sws_alloc_cache_malloc(300);
    b = sws_alloc_cache_malloc(16716);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    sws_alloc_cache_free(a);
    sws_alloc_cache_free(b);

    stats(&st0);
    c = sws_alloc_cache_malloc(290);          /* the same class as 300 */
    if (!sws_alloc_cache_active()) {
        ck_assert_uint_eq(st0.cached_blocks, 0);
        sws_alloc_cache_free(c);
        return;
    }
    ck_assert_uint_eq(st0.cached_blocks, 2);
    ck_assert_ptr_eq(c, a);
    sws_alloc_cache_free(c);
    c = sws_alloc_cache_malloc(17000);        /* ~17 KiB TLS buffers share a class */
    ck_assert_ptr_eq(c, b);

    stats(&st);
    ck_assert_uint_eq(st.sys_allocs, st0.sys_allocs);
    ck_assert_uint_eq(st.cached_blocks, 1);
    ck_assert_uint_eq(st.cached_bytes, 320);  /* 300 rounds up to 320 */
    sws_alloc_cache_free(c);

    /* Another class does not take it. */
    c = sws_alloc_cache_malloc(5000);
    ck_assert_ptr_ne(c, b);
    sws_alloc_cache_free(c);
}
END_TEST


START_TEST(small_cap)
{
    sws_alloc_cache_stats_t   st0, st;
    void                     *p[100];
    size_t                    i, n = sws_nelems(p);

    for (i = 0; i < n; i++) {
        p[i] = sws_alloc_cache_malloc(24);
        ck_assert_ptr_nonnull(p[i]);
    }
    stats(&st0);
    for (i = 0; i < n; i++) {
        sws_alloc_cache_free(p[i]);
    }
    stats(&st);
    if (!sws_alloc_cache_active()) {
        ck_assert_uint_eq(st.cached_blocks, 0);
        return;
    }
    ck_assert_uint_eq(st.cached_blocks, SWS_ALLOC_CACHE_SMALL_CAP);
    ck_assert_uint_eq(st.cached_bytes, SWS_ALLOC_CACHE_SMALL_CAP * 32);
    ck_assert_uint_eq(st.sys_frees - st0.sys_frees, n - SWS_ALLOC_CACHE_SMALL_CAP);

    /* Each small class has its own cap. */
    p[0] = sws_alloc_cache_malloc(1000);
    sws_alloc_cache_free(p[0]);
    stats(&st);
    ck_assert_uint_eq(st.cached_blocks, SWS_ALLOC_CACHE_SMALL_CAP + 1);

    /* Taken again, they make room for as many. */
    for (i = 0; i < n; i++) {
        p[i] = sws_alloc_cache_malloc(32);
    }
    stats(&st0);
    ck_assert_uint_eq(st0.sys_allocs - st.sys_allocs, n - SWS_ALLOC_CACHE_SMALL_CAP);
    for (i = 0; i < n; i++) {
        sws_alloc_cache_free(p[i]);
    }
    stats(&st);
    ck_assert_uint_eq(st.cached_blocks, SWS_ALLOC_CACHE_SMALL_CAP + 1);
}
END_TEST


START_TEST(large_cap_in_bytes)
{
    sws_alloc_cache_stats_t   st0, st;
    void                     *p[40];
    size_t                    i, n = sws_nelems(p), fit;

    /* 20 KiB blocks (the class of 16716); a 2 KiB one fills the rest. */
    for (i = 0; i < n; i++) {
        p[i] = sws_alloc_cache_malloc(16716);
        ck_assert_ptr_nonnull(p[i]);
    }
    stats(&st0);
    for (i = 0; i < n; i++) {
        sws_alloc_cache_free(p[i]);
    }
    stats(&st);
    if (!sws_alloc_cache_active()) {
        ck_assert_uint_eq(st.cached_blocks, 0);
        return;
    }
    fit = SWS_ALLOC_CACHE_LARGE_CAP / 20480;
    ck_assert_uint_eq(st.cached_blocks, fit);
    ck_assert_uint_eq(st.cached_bytes, fit * 20480);
    ck_assert_uint_eq(st.sys_frees - st0.sys_frees, n - fit);

    /* The cap is shared by the large classes. */
    p[0] = sws_alloc_cache_malloc(SWS_ALLOC_CACHE_LARGE_CAP - fit * 20480);
    p[1] = sws_alloc_cache_malloc(1100);
    sws_alloc_cache_free(p[0]);
    sws_alloc_cache_free(p[1]);
    stats(&st0);
    ck_assert_uint_eq(st0.cached_bytes, SWS_ALLOC_CACHE_LARGE_CAP);
    ck_assert_uint_eq(st0.sys_frees - st.sys_frees, 1);

    /* Small classes are not. */
    p[0] = sws_alloc_cache_malloc(100);
    sws_alloc_cache_free(p[0]);
    stats(&st);
    ck_assert_uint_eq(st.cached_blocks, st0.cached_blocks + 1);

    /* Nor are blocks above the largest class cached. */
    p[0] = sws_alloc_cache_malloc(SWS_ALLOC_CACHE_MAX + 1);
    sws_alloc_cache_free(p[0]);
    stats(&st0);
    ck_assert_uint_eq(st0.cached_blocks, st.cached_blocks);
    ck_assert_uint_eq(st0.sys_frees, st.sys_frees + 1);

    sws_alloc_cache_flush();
    stats(&st);
    ck_assert_uint_eq(st.cached_blocks, 0);
    ck_assert_uint_eq(st.cached_bytes, 0);
    ck_assert_uint_eq(st.sys_frees, st0.sys_frees + st0.cached_blocks);
}
END_TEST


START_TEST(huge_sizes)
{
    u_char  *p;

    errno = 0;
    ck_assert_ptr_null(sws_alloc_cache_malloc(SIZE_MAX));
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert_ptr_null(sws_alloc_cache_malloc(SIZE_MAX - 15));
    ck_assert_ptr_null(sws_alloc_cache_malloc((size_t) PTRDIFF_MAX));
    ck_assert_ptr_null(sws_alloc_cache_calloc(1, SIZE_MAX - 8));

    /* A failed realloc() leaves the block alone. */
    p = sws_alloc_cache_malloc(100);
    ck_assert_ptr_nonnull(p);
    fill(p, 100, 3);
    errno = 0;
    ck_assert_ptr_null(sws_alloc_cache_realloc(p, SIZE_MAX));
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert(check_fill(p, 100, 3));
    p = sws_alloc_cache_realloc(p, 1 << 20);
    ck_assert_ptr_nonnull(p);
    ck_assert(check_fill(p, 100, 3));
    ck_assert_ptr_null(sws_alloc_cache_realloc(p, SIZE_MAX - 4));
    ck_assert(check_fill(p, 100, 3));
    sws_alloc_cache_free(p);
}
END_TEST


START_TEST(calloc_overflow)
{
    errno = 0;
    ck_assert_ptr_null(sws_alloc_cache_calloc(SIZE_MAX / 2 + 1, 2));
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert_ptr_null(sws_alloc_cache_calloc(2, SIZE_MAX / 2 + 1));
    ck_assert_ptr_null(sws_alloc_cache_calloc((size_t) 1 << 33, (size_t) 1 << 33));
    ck_assert_ptr_null(sws_alloc_cache_calloc(SIZE_MAX, SIZE_MAX));
    /* The product of 16 bytes wrapping around to a small size. */
    ck_assert_ptr_null(sws_alloc_cache_calloc(SIZE_MAX / 16 + 2, 16));
    ck_assert_ptr_null(sws_alloc_cache_mem_calloc(SIZE_MAX / 3 + 1, 3, NULL));
}
END_TEST


typedef struct {
    void                     *foreign;   /* allocated by the main thread */
    sws_alloc_cache_stats_t   st;
} thread_arg_t;


static pthread_key_t  late_key;
static void          *late[8];


/* Runs after the cache's own destructor (glibc runs them in the order of
 * their keys): what it frees must not be cached again, and lost. */
static void
late_free(void *arg)
{
    void   **blocks = arg;
    size_t   i;

    for (i = 0; i < sws_nelems(late); i++) {
        sws_alloc_cache_free(blocks[i]);
    }
}


static void *
thread_caches(void *arg)
{
    thread_arg_t  *ta = arg;
    void          *p[SWS_ALLOC_CACHE_LARGE_CAP / 20480];
    size_t         i;

    sws_alloc_cache_free(ta->foreign);
    for (i = 0; i < sws_nelems(late); i++) {
        late[i] = sws_alloc_cache_malloc(16716);
        memset(late[i], 2, 16716);
    }
    if (pthread_key_create(&late_key, late_free) != 0
        || pthread_setspecific(late_key, late) != 0)
    {
        return NULL;
    }
    for (i = 0; i < sws_nelems(p); i++) {
        p[i] = sws_alloc_cache_malloc(16716);
        memset(p[i], 1, 16716);
    }
    for (i = 0; i < sws_nelems(p); i++) {
        sws_alloc_cache_free(p[i]);
    }
    sws_alloc_cache_stats(&ta->st);
    return NULL;
}


START_TEST(thread_has_its_own_cache)
{
    sws_alloc_cache_stats_t   mine0, mine;
    thread_arg_t              ta;
    struct mallinfo2          m0, m;
    pthread_t                 t;

    memset(&ta, 0, sizeof(ta));
    ta.foreign = sws_alloc_cache_malloc(500);
    ck_assert_ptr_nonnull(ta.foreign);
    stats(&mine0);
    m0 = mallinfo2();
    ck_assert_int_eq(pthread_create(&t, NULL, thread_caches, &ta), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    m = mallinfo2();
    stats(&mine);
    ck_assert_uint_eq(mine.cached_blocks, mine0.cached_blocks);
    if (!sws_alloc_cache_active()) {
        ck_assert_uint_eq(ta.st.cached_blocks, 0);
        return;
    }
    /* The other thread's block and its own twelve were in its cache... */
    ck_assert_uint_eq(ta.st.cached_blocks, 1 + SWS_ALLOC_CACHE_LARGE_CAP / 20480);
    ck_assert_uint_eq(ta.st.sys_allocs, sws_nelems(late) + SWS_ALLOC_CACHE_LARGE_CAP / 20480);
    /* ...and were given back to free() when the thread ended, as were
     * the blocks freed by a later destructor. */
    ck_assert_msg(m.uordblks < m0.uordblks + 64 * 1024,
                  "%zu bytes more in use after the thread", m.uordblks - m0.uordblks);
}
END_TEST


START_TEST(library_entry_points)
{
    u_char  *p;

    p = sws_alloc_cache_crypto_malloc(17000, __FILE__, __LINE__);
    ck_assert_ptr_nonnull(p);
    fill(p, 17000, 9);
    p = sws_alloc_cache_crypto_realloc(p, 40000, __FILE__, __LINE__);
    ck_assert_ptr_nonnull(p);
    ck_assert(check_fill(p, 17000, 9));
    sws_alloc_cache_crypto_free(p, __FILE__, __LINE__);
    sws_alloc_cache_crypto_free(NULL, __FILE__, __LINE__);

    p = sws_alloc_cache_mem_calloc(10, 10, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p[99], 0);
    fill(p, 100, 4);
    p = sws_alloc_cache_mem_realloc(p, 300, NULL);
    ck_assert(check_fill(p, 100, 4));
    sws_alloc_cache_mem_free(p, NULL);
    p = sws_alloc_cache_mem_malloc(8, NULL);
    ck_assert_ptr_nonnull(p);
    sws_alloc_cache_mem_free(p, NULL);
}
END_TEST


/* The expected abort's message is not for the test log. */
static void
quiet_stderr(void)
{
    int  fd = open("/dev/null", O_WRONLY);

    if (fd != -1) {
        dup2(fd, STDERR_FILENO);
        close(fd);
    }
}


/* Freeing a block twice is caught, not a corrupted free list. */
START_TEST(double_free_aborts)
{
    void  *p;

    quiet_stderr();
    p = sws_alloc_cache_malloc(64);
    sws_alloc_cache_free(p);
    sws_alloc_cache_free(p);
}
END_TEST


START_TEST(foreign_pointer_aborts)
{
    u_char  *p;

    quiet_stderr();
    p = sws_alloc_cache_calloc(1, 1024);
    sws_alloc_cache_free(p + 64);
}
END_TEST


/* OpenSSL's allocator: plain malloc() blocks (no header: glibc's own
 * functions take them), the freed ones kept for the next allocation. */
START_TEST(crypto_blocks_are_mallocs)
{
    u_char  *p = sws_alloc_cache_crypto_malloc(100, __FILE__, __LINE__);

    ck_assert_ptr_nonnull(p);
    ck_assert_uint_ge(malloc_usable_size(p), 100);
    fill(p, 100, 3);
    free(p);                           /* glibc's free() takes it as it is */
    p = sws_alloc_cache_crypto_realloc(NULL, 5000, __FILE__, __LINE__);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_ge(malloc_usable_size(p), 5000);
    p = realloc(p, 9000);              /* and its realloc() */
    ck_assert_ptr_nonnull(p);
    sws_alloc_cache_crypto_free(p, __FILE__, __LINE__);
    ck_assert_ptr_null(sws_alloc_cache_crypto_realloc(
        sws_alloc_cache_crypto_malloc(10, __FILE__, __LINE__), 0, __FILE__, __LINE__));
}
END_TEST


START_TEST(crypto_keeps_freed_blocks)
{
    void  *a, *b, *r, *r2;

    if (!sws_alloc_cache_active()) {
        return;                        /* ASan: straight to malloc() */
    }
    /* small blocks, by their 16-byte step */
    a = sws_alloc_cache_crypto_malloc(40, __FILE__, __LINE__);
    sws_alloc_cache_crypto_free(a, __FILE__, __LINE__);
    b = sws_alloc_cache_crypto_malloc(33, __FILE__, __LINE__);
    ck_assert_ptr_eq(a, b);
    ck_assert_uint_ge(malloc_usable_size(b), 33);
    sws_alloc_cache_crypto_free(b, __FILE__, __LINE__);

    /* a record buffer, freed while idle, taken again by the next request */
    r = sws_alloc_cache_crypto_malloc(17000, __FILE__, __LINE__);
    sws_alloc_cache_crypto_free(r, __FILE__, __LINE__);
    ck_assert_ptr_eq(sws_alloc_cache_crypto_malloc(16900, __FILE__, __LINE__), r);
    /* but not for a much smaller one: a quarter of it at most is wasted */
    r2 = sws_alloc_cache_crypto_malloc(8000, __FILE__, __LINE__);
    ck_assert_ptr_ne(r2, r);
    sws_alloc_cache_crypto_free(r2, __FILE__, __LINE__);
    sws_alloc_cache_crypto_free(r, __FILE__, __LINE__);
}
END_TEST


START_TEST(crypto_oldest_size_gives_way)
{
    void      *p[6], *r;
    unsigned   i;

    if (!sws_alloc_cache_active()) {
        return;
    }
    /* six other large sizes fill the lists (a handshake's, say) */
    for (i = 0; i < 6; i++) {
        p[i] = sws_alloc_cache_crypto_malloc(2000 + 2000 * i, __FILE__, __LINE__);
    }
    for (i = 0; i < 6; i++) {
        sws_alloc_cache_crypto_free(p[i], __FILE__, __LINE__);
    }
    /* the record buffer's size still finds a list */
    r = sws_alloc_cache_crypto_malloc(17000, __FILE__, __LINE__);
    sws_alloc_cache_crypto_free(r, __FILE__, __LINE__);
    ck_assert_ptr_eq(sws_alloc_cache_crypto_malloc(17000, __FILE__, __LINE__), r);
    /* the newest of the six is still kept; the oldest went back */
    ck_assert_ptr_eq(sws_alloc_cache_crypto_malloc(12000, __FILE__, __LINE__), p[5]);
    sws_alloc_cache_crypto_free(r, __FILE__, __LINE__);
}
END_TEST


static void *
crypto_thread(void *arg)
{
    void      *p[64];
    unsigned   i;

    (void) arg;
    for (i = 0; i < 64; i++) {
        p[i] = sws_alloc_cache_crypto_malloc(16 + 200 * i, __FILE__, __LINE__);
    }
    for (i = 0; i < 64; i++) {
        sws_alloc_cache_crypto_free(p[i], __FILE__, __LINE__);
    }
    return NULL;
}


START_TEST(crypto_thread_exit_gives_back)
{
    struct mallinfo2  m0, m;
    pthread_t         t;

    m0 = mallinfo2();
    ck_assert_int_eq(pthread_create(&t, NULL, crypto_thread, NULL), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    m = mallinfo2();
    ck_assert_msg(m.uordblks < m0.uordblks + 16 * 1024,
                  "%zu bytes more in use after the thread", m.uordblks - m0.uordblks);
}
END_TEST


static Suite *
alloc_cache_suite(void)
{
    Suite  *s = suite_create("alloc_cache");
    TCase  *tc = tcase_create("alloc_cache");

    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, aligned_and_writable);
    tcase_add_test(tc, zero_size);
    tcase_add_test(tc, realloc_keeps_contents);
    tcase_add_loop_test(tc, calloc_zeroes_reused_blocks, 0, 2);
    tcase_add_test(tc, reuse_of_freed_blocks);
    tcase_add_test(tc, small_cap);
    tcase_add_test(tc, large_cap_in_bytes);
    tcase_add_test(tc, huge_sizes);
    tcase_add_test(tc, calloc_overflow);
    tcase_add_test(tc, thread_has_its_own_cache);
    tcase_add_test(tc, library_entry_points);
    tcase_add_test(tc, crypto_blocks_are_mallocs);
    tcase_add_test(tc, crypto_keeps_freed_blocks);
    tcase_add_test(tc, crypto_oldest_size_gives_way);
    tcase_add_test(tc, crypto_thread_exit_gives_back);
    if (sws_alloc_cache_active()) {
        /* (ASan reports the double free itself.) */
        tcase_add_test_raise_signal(tc, double_free_aborts, SIGABRT);
        tcase_add_test_raise_signal(tc, foreign_pointer_aborts, SIGABRT);
    }
    suite_add_tcase(s, tc);
    return s;
}


int
main(void)
{
    SRunner  *sr = srunner_create(alloc_cache_suite());
    int       failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
