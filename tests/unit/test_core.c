/* Unit tests of the core data structures: pools, buffers, strings, arrays,
 * red-black tree, hash, time cache and error log. */
#include <check.h>
#include <sys/socket.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <scalws/sws_types.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_string.h>
#include <scalws/sws_array.h>
#include <scalws/sws_rbtree.h>
#include <scalws/sws_hash.h>
#include <scalws/sws_time.h>
#include <scalws/sws_log.h>
#include <scalws/sws_cidr.h>
#include "sws_log_internal.h"
#include "sws_hash_internal.h"
#include "sws_swar.h"

#define STR(s)  (&(sws_str_t) sws_string(s))

/* A deterministic PRNG so failures reproduce. */
static uint64_t  rng_state = 88172645463325252ULL;

static uint64_t
rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}


/* ---------------------------------------------------------------- pools */

START_TEST(pool_small_allocs)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    u_char      *ptrs[5000];
    size_t       sizes[5000];
    int          i;

    ck_assert_ptr_nonnull(pool);
    for (i = 0; i < 5000; i++) {
        sizes[i] = 1 + rng() % 200;
        ptrs[i] = (i % 2) ? sws_palloc(pool, sizes[i]) : sws_pnalloc(pool, sizes[i]);
        ck_assert_ptr_nonnull(ptrs[i]);
        if (i % 2) {
            ck_assert_uint_eq((uintptr_t) ptrs[i] % (2 * sizeof(void *)), 0);
        }
        memset(ptrs[i], i & 0xff, sizes[i]);
    }
    /* No allocation overlapped another: each still holds its own byte
     * (one memcmp per allocation: a check per byte took seconds on a busy
     * machine, past Check's timeout). */
    for (i = 0; i < 5000; i++) {
        u_char  expect[200];

        memset(expect, i & 0xff, sizes[i]);
        ck_assert_msg(memcmp(ptrs[i], expect, sizes[i]) == 0, "allocation %d overwritten", i);
    }
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(pool_pnalloc_contiguous)
{
    sws_pool_t  *pool = sws_pool_create(4096, NULL);
    u_char      *a = sws_pnalloc(pool, 1), *b = sws_pnalloc(pool, 3), *c = sws_pnalloc(pool, 1);

    ck_assert_ptr_eq(b, a + 1);
    ck_assert_ptr_eq(c, b + 3);
    /* An aligned allocation right after skips to the boundary. */
    c = sws_palloc(pool, 1);
    ck_assert_uint_eq((uintptr_t) c % (2 * sizeof(void *)), 0);
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(pool_tiny_size)
{
    sws_pool_t  *pool = sws_pool_create(1, NULL);
    int          i;

    ck_assert_ptr_nonnull(pool);
    for (i = 0; i < 100; i++) {
        ck_assert_ptr_nonnull(sws_palloc(pool, 100));
    }
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(pool_large_and_pfree)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    u_char      *big1, *big2, *big3, *small;

    big1 = sws_palloc(pool, 100000);
    big2 = sws_pnalloc(pool, 5000);
    big3 = sws_pcalloc(pool, 3000);
    small = sws_palloc(pool, 16);
    ck_assert_ptr_nonnull(big1);
    ck_assert_ptr_nonnull(big2);
    ck_assert_ptr_nonnull(big3);
    ck_assert_uint_eq((uintptr_t) big1 % (2 * sizeof(void *)), 0);
    memset(big1, 1, 100000);
    memset(big2, 2, 5000);
    for (int i = 0; i < 3000; i++) {
        ck_assert_uint_eq(big3[i], 0);
    }

    ck_assert_int_eq(sws_pfree(pool, big2), SWS_OK);       /* middle of list */
    ck_assert_int_eq(sws_pfree(pool, big2), SWS_DECLINED); /* already freed */
    ck_assert_int_eq(sws_pfree(pool, small), SWS_DECLINED);
    ck_assert_int_eq(sws_pfree(pool, big3), SWS_OK);       /* head of list */
    ck_assert_uint_eq(big1[99999], 1);
    /* big1 is freed with the pool (ASan would report a leak otherwise). */
    sws_pool_destroy(pool);
}
END_TEST

static int  cleanup_order[8];
static int  cleanup_n;

static void
record_cleanup(void *data)
{
    cleanup_order[cleanup_n++] = (int) (intptr_t) data;
}

START_TEST(pool_cleanups_lifo)
{
    sws_pool_t  *pool = sws_pool_create(512, NULL);

    cleanup_n = 0;
    for (intptr_t i = 1; i <= 3; i++) {
        ck_assert_int_eq(sws_pool_cleanup_add(pool, record_cleanup, (void *) i), SWS_OK);
    }
    sws_pool_destroy(pool);
    ck_assert_int_eq(cleanup_n, 3);
    ck_assert_int_eq(cleanup_order[0], 3);
    ck_assert_int_eq(cleanup_order[1], 2);
    ck_assert_int_eq(cleanup_order[2], 1);
}
END_TEST

START_TEST(pool_reset)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    u_char      *first, *p;
    int          i;

    cleanup_n = 0;
    first = sws_palloc(pool, 64);
    for (i = 0; i < 200; i++) {            /* spill into more blocks */
        p = sws_palloc(pool, 100);
        memset(p, 0xab, 100);
    }
    sws_palloc(pool, 50000);               /* a large one */
    sws_pool_cleanup_add(pool, record_cleanup, (void *) 7);

    sws_pool_reset(pool);
    ck_assert_int_eq(cleanup_n, 1);
    ck_assert_int_eq(cleanup_order[0], 7);

    /* Rewound: the same memory is handed out again. */
    ck_assert_ptr_eq(sws_palloc(pool, 64), first);
    /* pcalloc must zero reused (dirty) memory. */
    for (i = 0; i < 200; i++) {
        p = sws_pcalloc(pool, 100);
        for (int j = 0; j < 100; j++) {
            ck_assert_uint_eq(p[j], 0);
        }
    }
    sws_pool_destroy(pool);
    ck_assert_int_eq(cleanup_n, 1);        /* not run again */
}
END_TEST

START_TEST(pool_log_and_heap)
{
    sws_log_t   *log = sws_log_stderr();
    sws_pool_t  *pool = sws_pool_create(256, log);
    void        *p;

    ck_assert_ptr_eq(sws_pool_log(pool), log);
    sws_pool_destroy(pool);
    pool = sws_pool_create(256, NULL);
    ck_assert_ptr_null(sws_pool_log(pool));
    sws_pool_destroy(pool);

    p = sws_calloc(100, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(((u_char *) p)[99], 0);
    free(p);
    p = sws_alloc(10, NULL);
    ck_assert_ptr_nonnull(p);
    free(p);
}
END_TEST


/* ---------------------------------------------------------- buffers */

static sws_chain_t *
link_buf(sws_pool_t *pool, sws_chain_t **ll, sws_buf_t *b)
{
    sws_chain_t  *cl = sws_alloc_chain_link(pool);

    cl->buf = b;
    cl->next = NULL;
    *ll = cl;
    return cl;
}

static sws_buf_t *
mem_buf(sws_pool_t *pool, const char *s)
{
    sws_buf_t  *b = sws_create_temp_buf(pool, strlen(s));

    b->last = sws_cpymem(b->last, s, strlen(s));
    return b;
}

static sws_buf_t *
file_buf(sws_pool_t *pool, off_t from, off_t to)
{
    sws_buf_t  *b = sws_calloc_buf(pool);

    b->in_file = 1;
    b->fd = 42;
    b->file_pos = from;
    b->file_last = to;
    return b;
}

START_TEST(buf_create)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_buf_t   *b = sws_calloc_buf(pool);

    ck_assert_int_eq(b->fd, -1);
    ck_assert_ptr_null(b->pos);
    ck_assert(!b->temporary && !b->in_file);

    b = sws_create_temp_buf(pool, 100);
    ck_assert_int_eq(b->fd, -1);
    ck_assert(b->temporary);
    ck_assert_ptr_eq(b->pos, b->start);
    ck_assert_ptr_eq(b->last, b->start);
    ck_assert_int_eq(b->end - b->start, 100);
    ck_assert_int_eq(sws_buf_size(b), 0);

    b = sws_create_temp_buf(pool, 10000);  /* larger than a block */
    ck_assert_ptr_nonnull(b);
    memset(b->start, 0, 10000);
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(chain_size_and_sent)
{
    sws_pool_t   *pool = sws_pool_create(1024, NULL);
    sws_chain_t  *head = NULL, *l1, *l2, *l3, *l4, *l5, *r;
    sws_buf_t    *flush;

    flush = sws_calloc_buf(pool);
    flush->flush = 1;

    l1 = link_buf(pool, &head, mem_buf(pool, "0123456789"));     /* 10 */
    l2 = link_buf(pool, &l1->next, sws_create_temp_buf(pool, 8)); /* empty */
    l3 = link_buf(pool, &l2->next, file_buf(pool, 100, 200));      /* 100 */
    l4 = link_buf(pool, &l3->next, flush);
    l5 = link_buf(pool, &l4->next, mem_buf(pool, "abcde"));        /* 5 */
    l5->buf->last_buf = 1;

    ck_assert_int_eq(sws_chain_size(head), 115);
    ck_assert(sws_buf_special(flush));
    ck_assert(!sws_buf_special(l5->buf));

    /* Nothing sent: the first link is returned untouched. */
    ck_assert_ptr_eq(sws_chain_update_sent(head, 0), l1);
    ck_assert_ptr_eq(l1->buf->pos, l1->buf->start);

    /* Part of the memory buffer. */
    ck_assert_ptr_eq(sws_chain_update_sent(head, 4), l1);
    ck_assert_int_eq(l1->buf->pos - l1->buf->start, 4);

    /* Rest of it exactly: the empty link is stepped over. */
    ck_assert_ptr_eq(sws_chain_update_sent(head, 6), l3);
    ck_assert_ptr_eq(l1->buf->pos, l1->buf->last);

    /* Into the file buffer. */
    r = sws_chain_update_sent(head, 30);
    ck_assert_ptr_eq(r, l3);
    ck_assert_int_eq(l3->buf->file_pos, 130);
    ck_assert_int_eq(sws_chain_size(head), 75);

    /* Past the file buffer and the flush into the last buffer. */
    r = sws_chain_update_sent(r, 72);
    ck_assert_ptr_eq(r, l5);
    ck_assert_int_eq(l3->buf->file_pos, 200);
    ck_assert_int_eq(l5->buf->pos - l5->buf->start, 2);

    /* Everything sent. */
    ck_assert_ptr_null(sws_chain_update_sent(r, 3));
    ck_assert_int_eq(sws_chain_size(head), 0);
    ck_assert_ptr_null(sws_chain_update_sent(NULL, 0));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(chain_mem_and_file_buffer)
{
    sws_pool_t   *pool = sws_pool_create(1024, NULL);
    sws_chain_t  *head = NULL;
    sws_buf_t    *b = mem_buf(pool, "xxxxxxxxxx");

    /* A buffer both in memory and in a file advances both. */
    b->in_file = 1;
    b->file_pos = 1000;
    b->file_last = 1010;
    link_buf(pool, &head, b);
    ck_assert_int_eq(sws_chain_size(head), 10);
    ck_assert_ptr_eq(sws_chain_update_sent(head, 7), head);
    ck_assert_int_eq(b->pos - b->start, 7);
    ck_assert_int_eq(b->file_pos, 1007);
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(chain_links)
{
    sws_pool_t   *pool = sws_pool_create(1024, NULL);
    sws_chain_t  *a, *b, *out = NULL, *in = NULL, *cl;
    sws_buf_t    *b1 = mem_buf(pool, "one"), *b2 = mem_buf(pool, "two");
    int           n;

    a = sws_alloc_chain_link(pool);
    sws_free_chain(pool, a);
    b = sws_alloc_chain_link(pool);
    ck_assert_ptr_eq(a, b);                /* reused from the free list */
    ck_assert_ptr_ne(sws_alloc_chain_link(pool), b);

    link_buf(pool, &in, b1);
    link_buf(pool, &in->next, b2);
    ck_assert_int_eq(sws_chain_add_copy(pool, &out, in), SWS_OK);
    ck_assert_int_eq(sws_chain_add_copy(pool, &out, in), SWS_OK);
    for (n = 0, cl = out; cl; cl = cl->next, n++) {
        ck_assert_ptr_ne(cl, in);
        ck_assert_ptr_ne(cl, in->next);
        ck_assert_ptr_eq(cl->buf, (n % 2) ? b2 : b1);   /* shared buffers */
    }
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(sws_chain_size(out), 12);
    ck_assert_int_eq(sws_chain_add_copy(pool, &out, NULL), SWS_OK);
    ck_assert_int_eq(sws_chain_size(out), 12);

    /* After a reset the free list is empty (its links were pool memory). */
    sws_free_chain(pool, out);
    sws_pool_reset(pool);
    ck_assert_ptr_nonnull(sws_alloc_chain_link(pool));
    sws_pool_destroy(pool);
}
END_TEST


/* ---------------------------------------------------------- strings */

#define ATOI(s)   sws_atoi((const u_char *) (s), sizeof(s) - 1)
#define ATOOF(s)  sws_atoof((const u_char *) (s), sizeof(s) - 1)
#define HEXTOI(s) sws_hextoi((const u_char *) (s), sizeof(s) - 1)

START_TEST(str_base64)
{
    static const struct { const char *plain, *enc; } v[] = {   /* RFC 4648 10 */
        { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
        { "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
    };
    u_char   out[16];
    size_t   i;
    ssize_t  n;

    for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        n = sws_encode_base64(out, (const u_char *) v[i].plain, strlen(v[i].plain)) - out;
        ck_assert_int_eq(n, (ssize_t) strlen(v[i].enc));
        ck_assert(memcmp(out, v[i].enc, (size_t) n) == 0);
        n = sws_decode_base64(out, (const u_char *) v[i].enc, strlen(v[i].enc));
        ck_assert_int_eq(n, (ssize_t) strlen(v[i].plain));
        ck_assert(memcmp(out, v[i].plain, (size_t) n) == 0);
    }
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Zm8", 3), 2);   /* unpadded */
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Z", 1), -1);
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Zm=8", 4), -1);
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Zg===", 5), -1);
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Zm9v!A==", 8), -1);
    ck_assert_int_eq(sws_decode_base64(out, (const u_char *) "Zm9v YQ==", 9), -1);
}
END_TEST

START_TEST(cidr_parse_and_match)
{
    sws_cidr_t  c;
    uint8_t     a[16];
    int         f;

#define CIDR(t, fl)  sws_cidr_parse((const u_char *) (t), strlen(t), (fl), &c)
#define ADDR(t)      (f = sws_cidr_addr_text((const u_char *) (t), strlen(t), a))
    ck_assert_int_eq(CIDR("10.1.0.0/16", 0), SWS_OK);
    ck_assert_int_eq(c.family, AF_INET);
    ck_assert_int_eq(c.bits, 16);
    ADDR("10.1.200.3");
    ck_assert(sws_cidr_match(&c, f, a));
    ADDR("10.2.0.1");
    ck_assert(!sws_cidr_match(&c, f, a));
    ADDR("::ffff:10.1.0.9");                 /* IPv4-mapped counts as IPv4 */
    ck_assert_int_eq(f, AF_INET);
    ck_assert(sws_cidr_match(&c, f, a));
    ck_assert_int_eq(CIDR("10.1.2.3/16", 0), SWS_DONE);     /* host bits dropped */
    ck_assert_int_eq(c.addr[2], 0);
    ck_assert_int_eq(CIDR("192.168.1.7", 0), SWS_OK);
    ck_assert_int_eq(c.bits, 32);
    ck_assert_int_eq(CIDR("2001:db8::/32", 0), SWS_OK);
    ADDR("2001:db8:ffff::1");
    ck_assert(sws_cidr_match(&c, f, a));
    ADDR("2001:db9::1");
    ck_assert(!sws_cidr_match(&c, f, a));
    ADDR("10.1.0.1");
    ck_assert(!sws_cidr_match(&c, f, a));    /* another family */
    ck_assert_int_eq(CIDR("0.0.0.0/0", 0), SWS_OK);
    ck_assert(sws_cidr_match(&c, f, a));
    ck_assert_int_eq(CIDR("all", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("all", SWS_CIDR_ALL), SWS_OK);
    ck_assert_int_eq(c.family, 0);
    ck_assert_int_eq(CIDR("unix:", SWS_CIDR_UNIX), SWS_OK);
    ck_assert_int_eq(c.family, AF_UNIX);
    ck_assert(sws_cidr_match(&c, ADDR("unix:"), a));
    ck_assert_int_eq(CIDR("unix:", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("10.0.0.0/33", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("10.0.0.0/", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("10.0.0.0/1x", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("10.0.0.0/1234", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("/8", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("10.0.0", 0), SWS_ERROR);
    ck_assert_int_eq(CIDR("::/129", 0), SWS_ERROR);
    ck_assert_int_eq(ADDR("not-an-address"), -1);
#undef CIDR
#undef ADDR
}
END_TEST

START_TEST(str_atoi)
{
    ck_assert_int_eq(ATOI("0"), 0);
    ck_assert_int_eq(ATOI("007"), 7);
    ck_assert_int_eq(ATOI("123456"), 123456);
    ck_assert_int_eq(ATOI("9223372036854775807"), INTPTR_MAX);
    ck_assert_int_eq(ATOI("9223372036854775808"), SWS_ERROR);
    ck_assert_int_eq(ATOI("99999999999999999999999"), SWS_ERROR);
    ck_assert_int_eq(ATOI(""), SWS_ERROR);
    ck_assert_int_eq(ATOI("12a"), SWS_ERROR);
    ck_assert_int_eq(ATOI("-1"), SWS_ERROR);
    ck_assert_int_eq(ATOI("+1"), SWS_ERROR);
    ck_assert_int_eq(ATOI(" 1"), SWS_ERROR);
    ck_assert_int_eq(ATOI("1 "), SWS_ERROR);
    ck_assert_int_eq(sws_atoi((const u_char *) "123", 2), 12);

    ck_assert_int_eq(ATOOF("0"), 0);
    ck_assert_int_eq(ATOOF("10737418240"), 10737418240LL);
    ck_assert_int_eq(ATOOF("9223372036854775807"), INT64_MAX);
    ck_assert_int_eq(ATOOF("9223372036854775808"), SWS_ERROR);
    ck_assert_int_eq(ATOOF(""), SWS_ERROR);
    ck_assert_int_eq(ATOOF("1x"), SWS_ERROR);

    ck_assert_int_eq(HEXTOI("ff"), 255);
    ck_assert_int_eq(HEXTOI("FF"), 255);
    ck_assert_int_eq(HEXTOI("0aBc"), 0xabc);
    ck_assert_int_eq(HEXTOI("7fffffffffffffff"), INTPTR_MAX);
    ck_assert_int_eq(HEXTOI("8000000000000000"), SWS_ERROR);
    ck_assert_int_eq(HEXTOI("100000000000000000"), SWS_ERROR);
    ck_assert_int_eq(HEXTOI(""), SWS_ERROR);
    ck_assert_int_eq(HEXTOI("g"), SWS_ERROR);
    ck_assert_int_eq(HEXTOI("0x1"), SWS_ERROR);
}
END_TEST

START_TEST(str_parse_size)
{
    ck_assert_int_eq(sws_parse_size(STR("0")), 0);
    ck_assert_int_eq(sws_parse_size(STR("10")), 10);
    ck_assert_int_eq(sws_parse_size(STR("10k")), 10240);
    ck_assert_int_eq(sws_parse_size(STR("10K")), 10240);
    ck_assert_int_eq(sws_parse_size(STR("2m")), 2 * 1024 * 1024);
    ck_assert_int_eq(sws_parse_size(STR("2M")), 2 * 1024 * 1024);
    ck_assert_int_eq(sws_parse_size(STR("3g")), 3LL * 1024 * 1024 * 1024);
    ck_assert_int_eq(sws_parse_size(STR("3G")), 3LL * 1024 * 1024 * 1024);
    ck_assert_int_eq(sws_parse_size(STR("")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("k")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("10x")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("1.5k")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("-1")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("10kk")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("99999999999g")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_size(STR("99999999999999999999")), SWS_ERROR);
}
END_TEST

START_TEST(str_parse_time)
{
    ck_assert_int_eq(sws_parse_time_ms(STR("500ms")), 500);
    ck_assert_int_eq(sws_parse_time_ms(STR("10s")), 10000);
    ck_assert_int_eq(sws_parse_time_ms(STR("30")), 30000);
    ck_assert_int_eq(sws_parse_time_ms(STR("0")), 0);
    ck_assert_int_eq(sws_parse_time_ms(STR("5m")), 300000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1h")), 3600000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1d")), 86400000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1w")), 7LL * 86400000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1M")), 30LL * 86400000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1y")), 365LL * 86400000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1h 30m")), 5400000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1h  30m 15s 5ms")), 5415005);
    ck_assert_int_eq(sws_parse_time_ms(STR("2m 5")), 125000);
    ck_assert_int_eq(sws_parse_time_ms(STR("1y 1M 1w 1d")), (365LL + 30 + 7 + 1) * 86400000);

    ck_assert_int_eq(sws_parse_time_ms(STR("")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("  ")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("ms")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("s")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1x")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1H")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1mss")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1h1m")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("-1s")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1.5s")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("1h 1h")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("5s 1m")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("5 1")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("999999999999y")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("99999999999999999999ms")), SWS_ERROR);
    ck_assert_int_eq(sws_parse_time_ms(STR("292471208y 8M")), 9223372015488000000LL + 8 * 2592000000LL);
    ck_assert_int_eq(sws_parse_time_ms(STR("292471208y 9M")), SWS_ERROR);
}
END_TEST

START_TEST(str_compare)
{
    const u_char  *a = (const u_char *) "Content-Length", *b = (const u_char *) "content-LENGTH";
    u_char         low[16];
    u_char         text[] = "GET / HTTP/1.1 Keep-Alive, Upgrade";

    ck_assert_int_eq(sws_strncasecmp(a, b, 14), 0);
    ck_assert_int_lt(sws_strncasecmp((const u_char *) "abc", (const u_char *) "ABD", 3), 0);
    ck_assert_int_gt(sws_strncasecmp((const u_char *) "abd", (const u_char *) "ABC", 3), 0);
    ck_assert_int_eq(sws_strncasecmp((const u_char *) "abX", (const u_char *) "ABy", 2), 0);
    ck_assert_int_lt(sws_strncasecmp((const u_char *) "ab", (const u_char *) "abc", 5), 0);
    ck_assert_int_eq(sws_strcasecmp(a, b), 0);
    ck_assert_int_lt(sws_strcasecmp((const u_char *) "a", (const u_char *) "AB"), 0);
    ck_assert_int_gt(sws_strcasecmp((const u_char *) "b", (const u_char *) "A"), 0);

    sws_strlow(low, a, 14);
    ck_assert(memcmp(low, "content-length", 14) == 0);

    ck_assert(sws_str_eq(STR("abc"), STR("abc")));
    ck_assert(!sws_str_eq(STR("abc"), STR("abC")));
    ck_assert(!sws_str_eq(STR("abc"), STR("ab")));
    ck_assert(sws_str_eq(STR(""), &(sws_str_t) sws_null_string));
    ck_assert(sws_str_caseeq(STR("Host"), STR("hOST")));
    ck_assert(!sws_str_caseeq(STR("Host"), STR("Hosts")));
    ck_assert(!sws_str_caseeq(STR("a["), STR("A{")));   /* only letters fold */
    ck_assert(sws_str_eq_cstr(STR("gzip"), "gzip"));
    ck_assert(!sws_str_eq_cstr(STR("gzip"), "GZIP"));
    ck_assert(!sws_str_eq_cstr(STR("gzip"), "gzi"));
    ck_assert(sws_str_caseeq_cstr(STR("gzip"), "GZIP"));
    ck_assert(!sws_str_caseeq_cstr(STR("gzip"), "GZIPS"));

    ck_assert_ptr_eq(sws_strlcasestrn(text, text + sizeof(text) - 1, (const u_char *) "keep-alive", 10),
                     text + 15);
    ck_assert_ptr_eq(sws_strlcasestrn(text, text + sizeof(text) - 1, (const u_char *) "UPGRADE", 7),
                     text + 27);
    ck_assert_ptr_null(sws_strlcasestrn(text, text + sizeof(text) - 2, (const u_char *) "upgrade", 7));
    ck_assert_ptr_null(sws_strlcasestrn(text, text + 3, (const u_char *) "get /", 5));
    ck_assert_ptr_eq(sws_strlcasestrn(text, text + 3, (const u_char *) "get", 3), text);
    ck_assert_ptr_eq(sws_strlcasestrn(text, text + 3, (const u_char *) "", 0), text);
}
END_TEST

START_TEST(str_pool_copies)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_str_t    src = sws_string("hello world"), dst;
    u_char      *p;
    char        *c;

    /* Dirty the memory the copies will get. */
    memset(sws_pnalloc(pool, 500), 'X', 500);
    sws_pool_reset(pool);

    p = sws_pstrdup(pool, &src);
    ck_assert_ptr_ne(p, src.data);
    ck_assert_str_eq((char *) p, "hello world");
    c = sws_pstrdup_cstr(pool, &(sws_str_t) { 5, src.data });
    ck_assert_str_eq(c, "hello");
    c = sws_pstrdup_cstr(pool, &(sws_str_t) sws_null_string);
    ck_assert_str_eq(c, "");

    ck_assert_int_eq(sws_str_from_cstr(pool, &dst, "abc"), SWS_OK);
    ck_assert_uint_eq(dst.len, 3);
    ck_assert_str_eq((char *) dst.data, "abc");
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(str_format)
{
    u_char  buf[64], *p;
    u_char  big[3000];
    struct { uint64_t v; const char *s; } cases[] = {
        { 0, "0" }, { 7, "7" }, { 10, "10" }, { 99, "99" }, { 100, "100" },
        { 12345, "12345" }, { 1000000007, "1000000007" },
        { UINT64_MAX, "18446744073709551615" },
    };
    u_char  bytes[] = { 0x00, 0x0f, 0xa5, 0xff };

    for (size_t i = 0; i < sws_nelems(cases); i++) {
        p = sws_sprint_uint(buf, cases[i].v);
        ck_assert_uint_eq(p - buf, strlen(cases[i].s));
        ck_assert(memcmp(buf, cases[i].s, p - buf) == 0);
    }

    p = sws_hex_dump(buf, bytes, 4);
    ck_assert_int_eq(p - buf, 8);
    ck_assert(memcmp(buf, "000fa5ff", 8) == 0);
    ck_assert_ptr_eq(sws_hex_dump(buf, bytes, 0), buf);

    p = sws_slprintf(buf, buf + sizeof(buf), "%s=%d", "x", 42);
    ck_assert_int_eq(p - buf, 4);
    ck_assert(memcmp(buf, "x=42", 4) == 0);
    /* Truncation uses the whole room. */
    memset(buf, '.', sizeof(buf));
    p = sws_slprintf(buf, buf + 5, "hello world");
    ck_assert_ptr_eq(p, buf + 5);
    ck_assert(memcmp(buf, "hello.", 6) == 0);
    ck_assert_ptr_eq(sws_slprintf(buf, buf, "abc"), buf);
    /* Long truncated output stays within bounds. */
    p = sws_slprintf(big, big + 100, "%03000d", 1);
    ck_assert_int_le(p - big, 100);
    ck_assert_int_ge(p - big, 99);
}
END_TEST

START_TEST(str_hash_key)
{
    const u_char  *h1 = (const u_char *) "Host", *h2 = (const u_char *) "host";
    const u_char  *h3 = (const u_char *) "HOST";

    ck_assert_uint_eq(sws_hash_key_lc(h1, 4), sws_hash_key_lc(h2, 4));
    ck_assert_uint_eq(sws_hash_key_lc(h3, 4), sws_hash_key_lc(h2, 4));
    ck_assert_uint_eq(sws_hash_key_lc(h1, 4), sws_hash_key(h2, 4));
    ck_assert_uint_ne(sws_hash_key(h1, 4), sws_hash_key(h2, 4));
    ck_assert_uint_ne(sws_hash_key(h2, 4), sws_hash_key((const u_char *) "hosu", 4));
    ck_assert_uint_ne(sws_hash_key(h2, 3), sws_hash_key(h2, 4));
    ck_assert_uint_eq(sws_hash_key(h2, 0), sws_hash_key(h1, 0));
}
END_TEST

/* sws_swar_eq and sws_swar_cmp agree with memcmp at every length (the word paths up to 16,
 * memcmp past it) and offset, a single differing byte anywhere, including
 * the bytes only one of two overlapping loads covers. */
START_TEST(str_swar_compare)
{
    u_char  a[48], b[48];
    size_t  len, i, off;

    for (i = 0; i < sizeof(a); i++) {
        a[i] = (u_char) (0x30 + (i * 37) % 0xce);     /* 0x30..0xfd: +1 and -1 stay bytes */
    }
    for (off = 0; off < 3; off++) {
        for (len = 0; len + off <= 40; len++) {
            memcpy(b, a, sizeof(a));
            ck_assert_msg(sws_swar_eq(a + off, b + off, len), "len %zu", len);
            for (i = 0; i < len; i++) {
                b[off + i] ^= (i & 1) ? 0x80 : 0x01;
                ck_assert_msg(!sws_swar_eq(a + off, b + off, len), "len %zu at %zu", len, i);
                b[off + i] = a[off + i];
            }
            for (i = 0; i < len; i++) {
                int  want, got;

                b[off + i] = (u_char) (a[off + i] + 1);   /* b after a */
                if (i + 1 < len) {
                    b[off + len - 1] = (u_char) (a[off + len - 1] - 1);   /* not decisive */
                }
                want = memcmp(a + off, b + off, len);
                got = sws_swar_cmp(a + off, b + off, len);
                ck_assert_msg(want < 0 && got < 0, "len %zu at %zu: %d", len, i, got);
                got = sws_swar_cmp(b + off, a + off, len);
                ck_assert_msg(got > 0, "len %zu at %zu: %d", len, i, got);
                memcpy(b, a, sizeof(a));
            }
            ck_assert_int_eq(sws_swar_cmp(a + off, b + off, len), 0);
            /* a difference just past the n bytes is not looked at */
            b[off + len] ^= 0xff;
            ck_assert_msg(sws_swar_eq(a + off, b + off, len), "len %zu, past", len);
        }
    }
}
END_TEST

START_TEST(str_hash_key_random)
{
    static const u_char  alphabet[] = "aAzZ@[`{09-_\x80\xc1\xdaqQ";
    u_char               s[64], low[64];
    unsigned             buckets[1024] = { 0 }, max = 0;
    size_t               len, i;
    int                  n;

    /* The _lc variant equals hashing the lower-cased bytes, at every length
     * and alignment, including the edges of 'A'..'Z' and bytes >= 0x80. */
    for (n = 0; n < 20000; n++) {
        len = rng() % 40;
        for (i = 0; i < len + 1; i++) {
            s[i] = alphabet[rng() % (sizeof(alphabet) - 1)];
        }
        sws_strlow(low, s, len + 1);
        ck_assert_uint_eq(sws_hash_key_lc(s, len), sws_hash_key(low, len));
        ck_assert_uint_eq(sws_hash_key_lc(s + 1, len), sws_hash_key(low + 1, len));
    }
    for (i = 0; i < 26; i++) {
        u_char  c = (u_char) ('A' + i), l = (u_char) ('a' + i);
        ck_assert_uint_eq(sws_hash_key_lc(&c, 1), sws_hash_key(&l, 1));
    }
    ck_assert_uint_ne(sws_hash_key_lc((const u_char *) "@", 1), sws_hash_key((const u_char *) "`", 1));
    ck_assert_uint_ne(sws_hash_key_lc((const u_char *) "[", 1), sws_hash_key((const u_char *) "{", 1));

    /* Similar keys spread over the buckets. */
    for (n = 0; n < 16384; n++) {
        len = snprintf((char *) s, sizeof(s), "x-header-%d", n);
        buckets[sws_hash_key(s, len) & 1023]++;
    }
    for (i = 0; i < 1024; i++) {
        max = sws_max(max, buckets[i]);
    }
    ck_assert_uint_lt(max, 40);          /* mean 16 */
}
END_TEST


/* ------------------------------------------------------------ arrays */

START_TEST(array_growth)
{
    sws_pool_t   *pool = sws_pool_create(1024, NULL);
    sws_array_t  *a = sws_array_create(pool, 2, sizeof(int));
    sws_array_t   b;
    int          *e;
    int           i;

    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->nelts, 0);
    for (i = 0; i < 1000; i++) {
        e = sws_array_push(a);
        ck_assert_ptr_nonnull(e);
        *e = i;
        if (i % 100 == 0) {
            sws_palloc(pool, 8);   /* defeat in-place growth sometimes */
        }
    }
    ck_assert_uint_eq(a->nelts, 1000);
    ck_assert_uint_ge(a->nalloc, 1000);
    for (i = 0; i < 1000; i++) {
        ck_assert_int_eq(((int *) a->elts)[i], i);
    }

    e = sws_array_push_n(a, 5000);
    ck_assert_ptr_nonnull(e);
    for (i = 0; i < 5000; i++) {
        e[i] = -i;
    }
    ck_assert_uint_eq(a->nelts, 6000);
    ck_assert_int_eq(((int *) a->elts)[999], 999);
    ck_assert_int_eq(((int *) a->elts)[5999], -4999);

    /* An array initialised empty. */
    ck_assert_int_eq(sws_array_init(&b, pool, 0, sizeof(sws_str_t)), SWS_OK);
    for (i = 0; i < 10; i++) {
        sws_str_t  *s = sws_array_push(&b);
        ck_assert_ptr_nonnull(s);
        s->len = i;
    }
    ck_assert_uint_eq(((sws_str_t *) b.elts)[9].len, 9);
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(array_grow_in_place)
{
    sws_pool_t   *pool = sws_pool_create(4096, NULL);
    sws_array_t  *a = sws_array_create(pool, 4, sizeof(int));
    void         *elts = a->elts;
    int           i;

    for (i = 0; i < 16; i++) {
        *(int *) sws_array_push(a) = i;
    }
    ck_assert_ptr_eq(a->elts, elts);       /* it was the last allocation */
    sws_palloc(pool, 1);
    for (; i < 40; i++) {
        *(int *) sws_array_push(a) = i;
    }
    ck_assert_ptr_ne(a->elts, elts);
    for (i = 0; i < 40; i++) {
        ck_assert_int_eq(((int *) a->elts)[i], i);
    }
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(list_stable)
{
    sws_pool_t       *pool = sws_pool_create(1024, NULL);
    sws_list_t        list;
    sws_list_part_t  *part;
    long             *ptrs[300];
    long              n = 0;
    sws_uint_t        i, parts = 0;

    ck_assert_int_eq(sws_list_init(&list, pool, 0, sizeof(long)), SWS_ERROR);
    ck_assert_int_eq(sws_list_init(&list, pool, 7, sizeof(long)), SWS_OK);
    for (i = 0; i < 300; i++) {
        ptrs[i] = sws_list_push(&list);
        ck_assert_ptr_nonnull(ptrs[i]);
        *ptrs[i] = (long) i * 3;
    }
    for (i = 0; i < 300; i++) {
        ck_assert_int_eq(*ptrs[i], (long) i * 3);
    }
    for (part = &list.part; part; part = part->next, parts++) {
        for (i = 0; i < part->nelts; i++, n++) {
            ck_assert_int_eq(((long *) part->elts)[i], n * 3);
        }
    }
    ck_assert_int_eq(n, 300);
    ck_assert_uint_eq(parts, (300 + 6) / 7);
    sws_pool_destroy(pool);
}
END_TEST


/* ------------------------------------------------------------ rbtree */

/* Checks order, parent links and the red-black rules; returns the black
 * height of the subtree. */
static int
rb_check(sws_rbtree_t *t, sws_rbtree_node_t *n, sws_rbtree_node_t *parent)
{
    sws_rbtree_node_t  *s = t->sentinel;
    int                 lh, rh;

    if (n == s) {
        return 1;
    }
    ck_assert_ptr_eq(n->parent, parent);
    if (n->color) {
        ck_assert(!n->left->color && !n->right->color);
    }
    if (n->left != s) {
        ck_assert_uint_le(n->left->key, n->key);
    }
    if (n->right != s) {
        ck_assert_uint_ge(n->right->key, n->key);
    }
    lh = rb_check(t, n->left, n);
    rh = rb_check(t, n->right, n);
    ck_assert_int_eq(lh, rh);
    return lh + !n->color;
}

static void
rb_verify(sws_rbtree_t *t, sws_uint_t expect)
{
    sws_rbtree_node_t  *n;
    sws_uint_t          count = 0, prev = 0;

    ck_assert(!t->sentinel->color);
    if (t->root != t->sentinel) {
        ck_assert(!t->root->color);
        rb_check(t, t->root, NULL);
        for (n = sws_rbtree_min(t->root, t->sentinel); n; n = sws_rbtree_next(t, n)) {
            ck_assert_uint_ge(n->key, prev);
            prev = n->key;
            count++;
        }
    }
    ck_assert_uint_eq(count, expect);
}

START_TEST(rbtree_random)
{
    enum { N = 5000 };
    static sws_rbtree_node_t  nodes[N];
    sws_rbtree_node_t         sentinel;
    sws_rbtree_t              tree;
    sws_uint_t                i, live = N, j;
    int                       in[N];

    sws_rbtree_init(&tree, &sentinel, sws_rbtree_insert_value);
    rb_verify(&tree, 0);
    for (i = 0; i < N; i++) {
        nodes[i].key = rng() % 2000;           /* with duplicates */
        sws_rbtree_insert(&tree, &nodes[i]);
        in[i] = 1;
        if (i % 500 == 0) {
            rb_verify(&tree, i + 1);
        }
    }
    rb_verify(&tree, N);

    /* Delete in random order, reinsert some, check all the way down. */
    for (j = 0; j < 3 * N; j++) {
        i = rng() % N;
        if (in[i]) {
            sws_rbtree_delete(&tree, &nodes[i]);
            in[i] = 0;
            live--;
        } else if (j % 3 == 0) {
            nodes[i].key = rng() % 2000;
            sws_rbtree_insert(&tree, &nodes[i]);
            in[i] = 1;
            live++;
        }
        if (j % 997 == 0) {
            rb_verify(&tree, live);
        }
    }
    rb_verify(&tree, live);
    for (i = 0; i < N; i++) {
        if (in[i]) {
            sws_rbtree_delete(&tree, &nodes[i]);
        }
    }
    ck_assert_ptr_eq(tree.root, &sentinel);
    rb_verify(&tree, 0);
}
END_TEST

START_TEST(rbtree_timer_wrap)
{
    sws_rbtree_node_t   sentinel, n[6], *p;
    sws_rbtree_t        tree;
    sws_uint_t          keys[6] = { 5, UINTPTR_MAX - 5, 1000, 0, UINTPTR_MAX - 10, UINTPTR_MAX };
    sws_uint_t          order[6] = { UINTPTR_MAX - 10, UINTPTR_MAX - 5, UINTPTR_MAX, 0, 5, 1000 };
    int                 i;

    sws_rbtree_init(&tree, &sentinel, sws_rbtree_insert_timer_value);
    for (i = 0; i < 6; i++) {
        n[i].key = keys[i];
        sws_rbtree_insert(&tree, &n[i]);
    }
    p = sws_rbtree_min(tree.root, &sentinel);
    for (i = 0; i < 6; i++) {
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(p->key, order[i]);
        p = sws_rbtree_next(&tree, p);
    }
    ck_assert_ptr_null(p);

    /* Deleting the minimum repeatedly yields the same order. */
    for (i = 0; i < 6; i++) {
        p = sws_rbtree_min(tree.root, &sentinel);
        ck_assert_uint_eq(p->key, order[i]);
        sws_rbtree_delete(&tree, p);
    }
    ck_assert_ptr_eq(tree.root, &sentinel);
}
END_TEST


/* -------------------------------------------------------------- hash */

START_TEST(hash_basic)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_hash_t  *h = sws_hash_create(pool, 4, 0);
    int          v1, v2, v3;
    char         key[] = "temp";

    ck_assert_int_eq(sws_hash_add(h, STR("foo"), &v1), SWS_OK);
    ck_assert_int_eq(sws_hash_add(h, STR("bar"), &v2), SWS_OK);
    ck_assert_int_eq(sws_hash_add(h, STR(""), &v3), SWS_OK);
    ck_assert_int_eq(sws_hash_add(h, STR("foo"), &v3), SWS_BUSY);
    ck_assert_int_eq(sws_hash_add(h, STR("FOO"), &v3), SWS_OK);    /* case matters */
    ck_assert_uint_eq(sws_hash_count(h), 4);

    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "foo", 3), &v1);
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "bar", 3), &v2);
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "FOO", 3), &v3);
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "", 0), &v3);
    ck_assert_ptr_null(sws_hash_find(h, (const u_char *) "Foo", 3));
    ck_assert_ptr_null(sws_hash_find(h, (const u_char *) "fo", 2));
    ck_assert_ptr_null(sws_hash_find(h, (const u_char *) "foox", 4));

    /* The key is copied: changing the caller's buffer changes nothing. */
    ck_assert_int_eq(sws_hash_add(h, &(sws_str_t) { 4, (u_char *) key }, &v1), SWS_OK);
    key[0] = 'x';
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "temp", 4), &v1);
    ck_assert_ptr_null(sws_hash_find(h, (const u_char *) "xemp", 4));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(hash_lowercase)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_hash_t  *h = sws_hash_create(pool, 0, 1);
    int          v;

    ck_assert_int_eq(sws_hash_add(h, STR("Content-Type"), &v), SWS_OK);
    ck_assert_int_eq(sws_hash_add(h, STR("content-type"), &v), SWS_BUSY);
    ck_assert_int_eq(sws_hash_add(h, STR("CONTENT-TYPE"), &v), SWS_BUSY);
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "content-type", 12), &v);
    ck_assert_ptr_eq(sws_hash_find(h, (const u_char *) "CoNtEnT-TyPe", 12), &v);
    ck_assert_ptr_null(sws_hash_find(h, (const u_char *) "content_type", 12));
    ck_assert_uint_eq(sws_hash_count(h), 1);

    /* every length class of the comparison (bytes, two 4-byte words, an
     * overlapping 8-byte word): a difference in the last byte is seen */
    {
        static const char *keys[] = { "te", "date", "server", "x-accel-buffering",
                                      "content-length", "abcdefgh" };
        char                buf[32];
        size_t              i, n;

        for (i = 0; i < sws_nelems(keys); i++) {
            n = strlen(keys[i]);
            ck_assert_int_eq(sws_hash_add(h, &(sws_str_t) { n, (u_char *) keys[i] }, &v),
                             SWS_OK);
            memcpy(buf, keys[i], n);
            buf[0] = (char) toupper((unsigned char) buf[0]);
            buf[n - 1] = (char) toupper((unsigned char) buf[n - 1]);
            ck_assert_ptr_eq(sws_hash_find(h, (u_char *) buf, n), &v);
            buf[n - 1] ^= 1;
            ck_assert_ptr_null(sws_hash_find_hashed(h, sws_hash_key((u_char *) keys[i], n),
                                                    (u_char *) buf, n));
            buf[n - 1] ^= 1;
            buf[0] ^= 1;
            ck_assert_ptr_null(sws_hash_find_hashed(h, sws_hash_key((u_char *) keys[i], n),
                                                    (u_char *) buf, n));
        }
    }

    /* with the hash a parser took (sws_hash_key of the lower-case name) */
    ck_assert_ptr_eq(sws_hash_find_hashed(h, sws_hash_key((const u_char *) "content-type", 12),
                                          (const u_char *) "content-type", 12), &v);
    ck_assert_ptr_eq(sws_hash_find_hashed(h, sws_hash_key_lc((const u_char *) "Content-TYPE", 12),
                                          (const u_char *) "Content-TYPE", 12), &v);
    ck_assert_ptr_null(sws_hash_find_hashed(h, sws_hash_key((const u_char *) "content-typf", 12),
                                            (const u_char *) "content-typf", 12));
    /* a hash that matches while the key does not finds nothing */
    ck_assert_ptr_null(sws_hash_find_hashed(h, sws_hash_key((const u_char *) "content-type", 12),
                                            (const u_char *) "content_type", 12));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(hash_many)
{
    sws_pool_t  *pool = sws_pool_create(4096, NULL);
    sws_hash_t  *h = sws_hash_create(pool, 2, 1);
    char         key[32];
    sws_str_t    s;
    int          i, n;

    for (i = 0; i < 3000; i++) {
        n = snprintf(key, sizeof(key), "Key-%d", i);
        s.len = n;
        s.data = (u_char *) key;
        ck_assert_int_eq(sws_hash_add(h, &s, (void *) (intptr_t) (i + 1)), SWS_OK);
    }
    ck_assert_uint_eq(sws_hash_count(h), 3000);
    for (i = 0; i < 3000; i++) {
        n = snprintf(key, sizeof(key), "KEY-%d", i);
        ck_assert_ptr_eq(sws_hash_find(h, (u_char *) key, n), (void *) (intptr_t) (i + 1));
        s.len = n;
        s.data = (u_char *) key;
        ck_assert_int_eq(sws_hash_add(h, &s, NULL), SWS_BUSY);
    }
    for (i = 3000; i < 4000; i++) {
        n = snprintf(key, sizeof(key), "key-%d", i);
        ck_assert_ptr_null(sws_hash_find(h, (u_char *) key, n));
    }
    sws_pool_destroy(pool);
}
END_TEST


/* -------------------------------------------------------------- time */

static void
check_http_time(time_t t, const char *expect)
{
    u_char  buf[32], *p;

    p = sws_http_time(buf, t);
    ck_assert_int_eq(p - buf, 29);
    *p = '\0';
    ck_assert_str_eq((char *) buf, expect);
}

START_TEST(time_http_format)
{
    u_char     buf[32], ref[64];
    struct tm  tm;
    time_t     t;
    int        i;

    check_http_time(0, "Thu, 01 Jan 1970 00:00:00 GMT");
    check_http_time(784111777, "Sun, 06 Nov 1994 08:49:37 GMT");
    check_http_time(951782400, "Tue, 29 Feb 2000 00:00:00 GMT");
    check_http_time(951868799, "Tue, 29 Feb 2000 23:59:59 GMT");
    check_http_time(978307199, "Sun, 31 Dec 2000 23:59:59 GMT");
    check_http_time(4102444800LL, "Fri, 01 Jan 2100 00:00:00 GMT");
    check_http_time(2147483648LL, "Tue, 19 Jan 2038 03:14:08 GMT");
    check_http_time(-5, "Thu, 01 Jan 1970 00:00:00 GMT");   /* clamped */

    /* Against the C library over a wide range. */
    for (i = 0; i < 20000; i++) {
        t = (time_t) (rng() % 253402300800ULL);
        ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
        strftime((char *) ref, sizeof(ref), "%a, %d %b %Y %H:%M:%S GMT", &tm);
        sws_http_time(buf, t);
        ck_assert(memcmp(buf, ref, 29) == 0);
        ck_assert_int_eq(sws_parse_http_time(buf, 29), t);
    }
}
END_TEST

#define PARSE(s)  sws_parse_http_time((const u_char *) (s), sizeof(s) - 1)

START_TEST(time_http_parse)
{
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
    ck_assert_int_eq(PARSE("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
    ck_assert_int_eq(PARSE("Sun Nov  6 08:49:37 1994"), 784111777);
    ck_assert_int_eq(PARSE("Sun Nov 06 08:49:37 1994"), 784111777);
    ck_assert_int_eq(PARSE("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
    ck_assert_int_eq(PARSE("Tue, 29 Feb 2000 00:00:00 GMT"), 951782400);
    ck_assert_int_eq(PARSE("Wednesday, 09-Nov-16 08:49:37 GMT"), 1478681377);
    ck_assert_int_eq(PARSE("Wed Nov 16 08:49:37 2016"), 1479286177);
    ck_assert_int_eq(PARSE("Thu, 31 Dec 2099 23:59:59 GMT"), 4102444799LL);

    /* malformed */
    ck_assert_int_eq(PARSE(""), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:37"), -1);        /* no GMT */
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:37 UTC"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:37 GMTx"), -1);   /* trailing */
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:37 GMT "), -1);
    ck_assert_int_eq(PARSE(" Sun, 06 Nov 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 31 Nov 1994 08:49:37 GMT"), -1);    /* no Nov 31 */
    ck_assert_int_eq(PARSE("Sun, 00 Nov 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 29 Feb 1995 08:49:37 GMT"), -1);    /* not leap */
    ck_assert_int_eq(PARSE("Mon, 29 Feb 2100 08:49:37 GMT"), -1);    /* not leap */
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 24:00:00 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:60:00 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08:49:61 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1994 08-49-37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 6 Nov 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Xyz, 06 Nov 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 nov 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Foo 1994 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 19a4 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06 Nov 1969 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sunday, 06-Nov-94 08:49:37"), -1);
    ck_assert_int_eq(PARSE("Sunday, 06-Nov-94 08:49:37 GMT junk"), -1);
    ck_assert_int_eq(PARSE("Sunday, 06 Nov 94 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Funday, 06-Nov-94 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun, 06-Nov-94 08:49:37 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun Nov 6 08:49:37 1994"), -1);
    ck_assert_int_eq(PARSE("Sun Nov  6 08:49:37 1994 "), -1);
    ck_assert_int_eq(PARSE("Sun Nov  6 08:49:37 1994 GMT"), -1);
    ck_assert_int_eq(PARSE("Sun Nov  0 08:49:37 1994"), -1);
    ck_assert_int_eq(PARSE("Sun Nov 31 08:49:37 1994"), -1);
    ck_assert_int_eq(PARSE("Sun Nov   08:49:37 1994"), -1);
    ck_assert_int_eq(PARSE("1994-11-06T08:49:37Z"), -1);
}
END_TEST

START_TEST(time_cache)
{
    const sws_str_t  *s;
    struct tm         lt;
    time_t            sec;
    char              ref[64];
    u_char            buf[32];
    sws_msec_t        m1, m2;

    sws_time_init();
    sec = sws_time_sec();
    ck_assert_int_gt(sec, 1600000000);
    ck_assert(localtime_r(&sec, &lt) != NULL);

    s = sws_cached_http_time();
    ck_assert_uint_eq(s->len, 29);
    sws_http_time(buf, sec);
    ck_assert(memcmp(s->data, buf, 29) == 0);

    s = sws_cached_err_log_time();
    ck_assert_uint_eq(s->len, 19);
    strftime(ref, sizeof(ref), "%Y/%m/%d %H:%M:%S", &lt);
    ck_assert(memcmp(s->data, ref, 19) == 0);

    s = sws_cached_log_time();
    ck_assert_uint_eq(s->len, 26);
    strftime(ref, sizeof(ref), "%d/%b/%Y:%H:%M:%S %z", &lt);
    ck_assert(memcmp(s->data, ref, 26) == 0);

    s = sws_cached_iso8601_time();
    ck_assert_uint_eq(s->len, 25);
    strftime(ref, sizeof(ref), "%Y-%m-%dT%H:%M:%S%z", &lt);     /* +hhmm */
    ck_assert(memcmp(s->data, ref, 22) == 0);
    ck_assert_int_eq(s->data[22], ':');
    ck_assert(memcmp(s->data + 23, ref + 22, 2) == 0);

    m1 = sws_current_msec();
    usleep(20000);
    sws_time_update();
    m2 = sws_current_msec();
    ck_assert_int_ge(m2 - m1, 15);
    ck_assert_int_lt(m2 - m1, 5000);
}
END_TEST

/* The cache reformats only when the second changes: wait for the next one. */
static void
update_next_second(void)
{
    time_t  now;
    int     i;

    sws_time_update();
    now = sws_time_sec();
    for (i = 0; i < 300 && sws_time_sec() == now; i++) {
        usleep(10000);
        sws_time_update();
    }
    ck_assert_int_ne(sws_time_sec(), now);
}

START_TEST(time_cache_offsets)
{
    /* Changing TZ is harmless here: the C library re-reads it on tzset(). */
    setenv("TZ", "UTC0", 1);
    tzset();
    update_next_second();
    ck_assert(memcmp(sws_cached_log_time()->data + 20, " +0000", 6) == 0);
    ck_assert(memcmp(sws_cached_iso8601_time()->data + 19, "+00:00", 6) == 0);

    setenv("TZ", "XST+03:30", 1);      /* 3h30 west of Greenwich */
    tzset();
    update_next_second();
    ck_assert(memcmp(sws_cached_log_time()->data + 20, " -0330", 6) == 0);
    ck_assert(memcmp(sws_cached_iso8601_time()->data + 19, "-03:30", 6) == 0);

    unsetenv("TZ");
    tzset();
}
END_TEST


/* --------------------------------------------------------------- log */

static char  tmpdir[64];

static void
log_setup(void)
{
    strcpy(tmpdir, "/tmp/sws_test_core.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void
log_teardown(void)
{
    char  cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) {
        /* best effort */
    }
}

/* Reads a whole file into a static buffer (NUL-terminated). */
static char *
slurp(const char *path)
{
    static char  buf[65536];
    int          fd = open(path, O_RDONLY);
    ssize_t      n;

    if (fd == -1) {
        return NULL;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n < 0 ? 0 : n] = '\0';
    return buf;
}

static int
count_lines(const char *s)
{
    int  n = 0;

    for (; *s; s++) {
        n += (*s == '\n');
    }
    return n;
}

START_TEST(log_levels)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_log_t   *log;
    char         path[128], *text, *line, expect[64];
    int          y, mo, d, h, mi, s, pid, n;

    snprintf(path, sizeof(path), "%s/error.log", tmpdir);
    log = sws_log_open(pool, path, SWS_LOG_WARN);
    ck_assert_ptr_nonnull(log);
    ck_assert(sws_log_enabled(log, SWS_LOG_WARN));
    ck_assert(sws_log_enabled(log, SWS_LOG_STDERR));
    ck_assert(!sws_log_enabled(log, SWS_LOG_NOTICE));

    sws_log_error(SWS_LOG_ERR, log, 0, "first %d", 1);
    sws_log_error(SWS_LOG_WARN, log, ENOENT, "open \"%s\" failed", "/x");
    sws_log_error(SWS_LOG_NOTICE, log, 0, "filtered notice");
    sws_log_error(SWS_LOG_INFO, log, 0, "filtered info");
    sws_log_debug(log, "filtered debug %d", 3);
    sws_log_error(SWS_LOG_EMERG, log, 0, "emergency");
    sws_log_error(SWS_LOG_STDERR, log, 0, "always");
    sws_log_set_pid(4242);
    sws_log_error(SWS_LOG_CRIT, log, 0, "with pid");

    text = slurp(path);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(count_lines(text), 5);
    ck_assert_ptr_null(strstr(text, "filtered"));

    /* "YYYY/MM/DD HH:MM:SS [error] PID#0: first 1" */
    n = 0;
    ck_assert_int_eq(sscanf(text, "%4d/%2d/%2d %2d:%2d:%2d [error] %d#0: first 1\n%n",
                            &y, &mo, &d, &h, &mi, &s, &pid, &n), 7);
    ck_assert_int_eq(text[19], ' ');
    ck_assert_int_eq(pid, getpid());
    line = strchr(text, '\n') + 1;
    snprintf(expect, sizeof(expect), "[warn] %d#0: open \"/x\" failed: ", (int) getpid());
    ck_assert_ptr_nonnull(strstr(line, expect));
    ck_assert_ptr_nonnull(strstr(line, ": No such file or directory (2)\n"));
    ck_assert_ptr_nonnull(strstr(text, "[emerg] "));
    ck_assert_ptr_nonnull(strstr(text, "#0: always\n"));
    ck_assert_ptr_nonnull(strstr(text, "[crit] 4242#0: with pid\n"));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(log_long_message)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_log_t   *log;
    char         path[128], *msg, *text;
    size_t       len;

    snprintf(path, sizeof(path), "%s/long.log", tmpdir);
    log = sws_log_open(pool, path, SWS_LOG_DEBUG);
    msg = malloc(20001);
    memset(msg, 'm', 20000);
    msg[20000] = '\0';

    sws_log_error(SWS_LOG_ERR, log, EACCES, "%s", msg);
    sws_log_error(SWS_LOG_ERR, log, 0, "%s", msg);
    sws_log_error(SWS_LOG_DEBUG, log, 0, "short");
    free(msg);

    text = slurp(path);
    ck_assert_int_eq(count_lines(text), 3);
    len = strchr(text, '\n') - text + 1;
    ck_assert_uint_le(len, 4096);
    ck_assert_uint_gt(len, 3500);
    /* The errno text survives truncation of the message. */
    ck_assert_ptr_nonnull(strstr(text, "mmm: Permission denied (13)\n"));
    ck_assert_ptr_nonnull(strstr(text, "[debug] "));
    ck_assert_ptr_nonnull(strstr(text, "#0: short\n"));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(log_reopen)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_log_t   *log;
    char         path[128], old[140], *text;
    int          fd;

    snprintf(path, sizeof(path), "%s/rot.log", tmpdir);
    snprintf(old, sizeof(old), "%s.1", path);
    log = sws_log_open(pool, path, SWS_LOG_NOTICE);
    ck_assert_ptr_nonnull(log);
    fd = log->fd;

    sws_log_error(SWS_LOG_NOTICE, log, 0, "before rotation");
    ck_assert_int_eq(rename(path, old), 0);
    sws_log_error(SWS_LOG_NOTICE, log, 0, "still old file");
    ck_assert_int_eq(access(path, F_OK), -1);

    ck_assert_int_eq(sws_log_reopen(log), SWS_OK);
    ck_assert_int_eq(log->fd, fd);                  /* same descriptor number */
    ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    sws_log_error(SWS_LOG_NOTICE, log, 0, "new file");

    text = slurp(old);
    ck_assert_ptr_nonnull(strstr(text, "before rotation"));
    ck_assert_ptr_nonnull(strstr(text, "still old file"));
    ck_assert_ptr_null(strstr(text, "new file"));
    text = slurp(path);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "new file"));
    ck_assert_int_eq(count_lines(text), 1);

    /* Reopen fails if the directory is gone; the old fd stays usable. */
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(unlink(old), 0);
    ck_assert_int_eq(rmdir(tmpdir), 0);
    errno = 0;
    ck_assert_int_eq(sws_log_reopen(log), SWS_ERROR);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_ne(fcntl(fd, F_GETFD), -1);
    ck_assert_int_eq(mkdir(tmpdir, 0700), 0);

    /* Destroying the pool closes the file. */
    sws_pool_destroy(pool);
    ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
}
END_TEST

START_TEST(log_open_errors_and_stderr)
{
    sws_pool_t  *pool = sws_pool_create(1024, NULL);
    sws_log_t   *log;
    char         path[128], *text;
    int          saved, fd;

    snprintf(path, sizeof(path), "%s/no/such/dir/x.log", tmpdir);
    errno = 0;
    ck_assert_ptr_null(sws_log_open(pool, path, SWS_LOG_ERR));
    ck_assert_int_eq(errno, ENOENT);

    log = sws_log_open(pool, "stderr", SWS_LOG_INFO);
    ck_assert_ptr_nonnull(log);
    ck_assert_int_eq(log->fd, 2);
    ck_assert_ptr_null(log->path);
    ck_assert_int_eq(sws_log_reopen(log), SWS_OK);

    log = sws_log_stderr();
    ck_assert_int_eq(log->fd, 2);
    ck_assert_uint_eq(log->level, SWS_LOG_NOTICE);

    /* A NULL log writes to stderr at level notice. */
    snprintf(path, sizeof(path), "%s/stderr.txt", tmpdir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    saved = dup(2);
    dup2(fd, 2);
    sws_log_error(SWS_LOG_ERR, NULL, 0, "via null log");
    sws_log_error(SWS_LOG_INFO, NULL, 0, "hidden");
    sws_log_error(SWS_LOG_NOTICE, sws_log_stderr(), 0, "via stderr log");
    dup2(saved, 2);
    close(saved);
    close(fd);
    ck_assert(!sws_log_enabled(NULL, SWS_LOG_INFO));
    ck_assert(sws_log_enabled(NULL, SWS_LOG_NOTICE));

    text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "[error] "));
    ck_assert_ptr_nonnull(strstr(text, "via null log\n"));
    ck_assert_ptr_nonnull(strstr(text, "[notice] "));
    ck_assert_ptr_null(strstr(text, "hidden"));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(log_parse_level)
{
    static const struct { const char *name; sws_int_t level; } cases[] = {
        { "debug", SWS_LOG_DEBUG }, { "info", SWS_LOG_INFO },
        { "notice", SWS_LOG_NOTICE }, { "warn", SWS_LOG_WARN },
        { "error", SWS_LOG_ERR }, { "crit", SWS_LOG_CRIT },
        { "alert", SWS_LOG_ALERT }, { "emerg", SWS_LOG_EMERG },
        { "warning", SWS_ERROR }, { "", SWS_ERROR }, { "ERROR", SWS_ERROR },
        { "err", SWS_ERROR }, { "debugx", SWS_ERROR },
    };
    sws_str_t  s;

    for (size_t i = 0; i < sws_nelems(cases); i++) {
        s.len = strlen(cases[i].name);
        s.data = (u_char *) cases[i].name;
        ck_assert_int_eq(sws_log_parse_level(&s), cases[i].level);
    }
}
END_TEST


static Suite *
core_suite(void)
{
    Suite  *s = suite_create("core");
    TCase  *tc;

    tc = tcase_create("pool");
    tcase_add_test(tc, pool_small_allocs);
    tcase_add_test(tc, pool_pnalloc_contiguous);
    tcase_add_test(tc, pool_tiny_size);
    tcase_add_test(tc, pool_large_and_pfree);
    tcase_add_test(tc, pool_cleanups_lifo);
    tcase_add_test(tc, pool_reset);
    tcase_add_test(tc, pool_log_and_heap);
    suite_add_tcase(s, tc);

    tc = tcase_create("buf");
    tcase_add_test(tc, buf_create);
    tcase_add_test(tc, chain_size_and_sent);
    tcase_add_test(tc, chain_mem_and_file_buffer);
    tcase_add_test(tc, chain_links);
    suite_add_tcase(s, tc);

    tc = tcase_create("string");
    tcase_add_test(tc, str_atoi);
    tcase_add_test(tc, str_base64);
    tcase_add_test(tc, cidr_parse_and_match);
    tcase_add_test(tc, str_parse_size);
    tcase_add_test(tc, str_parse_time);
    tcase_add_test(tc, str_compare);
    tcase_add_test(tc, str_pool_copies);
    tcase_add_test(tc, str_format);
    tcase_add_test(tc, str_hash_key);
    tcase_add_test(tc, str_hash_key_random);
    tcase_add_test(tc, str_swar_compare);
    suite_add_tcase(s, tc);

    tc = tcase_create("array");
    tcase_add_test(tc, array_growth);
    tcase_add_test(tc, array_grow_in_place);
    tcase_add_test(tc, list_stable);
    suite_add_tcase(s, tc);

    tc = tcase_create("rbtree");
    tcase_add_test(tc, rbtree_random);
    tcase_add_test(tc, rbtree_timer_wrap);
    suite_add_tcase(s, tc);

    tc = tcase_create("hash");
    tcase_add_test(tc, hash_basic);
    tcase_add_test(tc, hash_lowercase);
    tcase_add_test(tc, hash_many);
    suite_add_tcase(s, tc);

    tc = tcase_create("time");
    tcase_add_test(tc, time_http_format);
    tcase_add_test(tc, time_http_parse);
    tcase_add_test(tc, time_cache);
    tcase_add_test(tc, time_cache_offsets);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);

    tc = tcase_create("log");
    tcase_add_checked_fixture(tc, log_setup, log_teardown);
    tcase_add_test(tc, log_levels);
    tcase_add_test(tc, log_long_message);
    tcase_add_test(tc, log_reopen);
    tcase_add_test(tc, log_open_errors_and_stderr);
    tcase_add_test(tc, log_parse_level);
    suite_add_tcase(s, tc);

    return s;
}


int
main(void)
{
    SRunner  *sr = srunner_create(core_suite());
    int       failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
