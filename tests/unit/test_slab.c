/*
 * The slab allocator of shared zones: every size class and its boundaries,
 * size 0 and sizes past the zone, filling a zone until NULL, freeing and
 * reusing, runs of pages and their merging (fragmentation), bad frees,
 * statistics, small zones, the LRU and hash helpers, evicting to make
 * room, two processes allocating under the lock, and reloads (same name
 * and size: the same pool with its data; another size: a fresh one).
 */
#include <stddef.h>
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_log_internal.h"
#include <scalws/sws_slab.h>

#define STR(s)  (&(sws_str_t) sws_string(s))

static struct sws_log_s  tlog;
static char              logpath[] = "/tmp/sws_test_slab_log.XXXXXX";
static int               tag;

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

static sws_int_t
slab_zone_init(sws_shm_zone_t *zone, void *old)
{
    return sws_slab_init(zone, old) ? SWS_OK : SWS_ERROR;
}

/* A configuration with one slab zone of `size`. */
static sws_slab_pool_t *
slab_zone(fake_t *f, fake_t *old, const char *name, size_t size)
{
    sws_shm_zone_t *z;
    sws_str_t       n = { strlen(name), (u_char *) name };

    fake_init(f, old);
    z = sws_shm_zone_add(&f->conf, &n, size, slab_zone_init, &tag);
    return z ? z->data : NULL;
}

static sws_slab_stat_t
stat_of(sws_slab_pool_t *pool, sws_uint_t i)
{
    sws_slab_stat_t st;

    ck_assert_int_eq(sws_slab_stat(pool, i, &st), SWS_OK);
    return st;
}

static size_t
free_pages(sws_slab_pool_t *pool)
{
    size_t page, total, nfree;

    sws_slab_pages(pool, &page, &total, &nfree);
    return nfree;
}

static size_t
total_pages(sws_slab_pool_t *pool)
{
    size_t page, total, nfree;

    sws_slab_pages(pool, &page, &total, &nfree);
    return total;
}

/* ---------------------------------------------------------------- */

/* 8, 16 ... 2048 in 4 KiB pages; each exact size and the size one over
 * land in their class; half a page and one byte more is a run. */
START_TEST(every_size_class)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "classes", 1024 * 1024);
    sws_slab_stat_t  st;
    sws_uint_t       i, n;
    size_t           page, total, nfree;
    u_char          *p, *q;

    ck_assert_ptr_nonnull(pool);
    sws_slab_pages(pool, &page, &total, &nfree);
    ck_assert_uint_eq(page, 4096);
    ck_assert_uint_eq(total, nfree);
    ck_assert_uint_ge(total, 240);                /* 1 MiB less the descriptors */
    n = sws_slab_nclasses(pool);
    ck_assert_uint_eq(n, 10);                     /* 8 .. 2048, then runs */

    for (i = 0; i + 1 < n; i++) {
        st = stat_of(pool, i);
        ck_assert_uint_eq(st.size, (size_t) 8 << i);
        p = sws_slab_alloc(pool, st.size);        /* exactly the class */
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t) p % sws_min(st.size, 64), 0);
        memset(p, 0xa5, st.size);
        st = stat_of(pool, i);
        ck_assert_uint_eq(st.used, 1);
        ck_assert_uint_eq(st.pages, 1);
        ck_assert_uint_eq(st.total, 4096 / st.size);
        ck_assert_uint_eq(st.requests, i ? 2 : 1);    /* with the last one over */
        if (i + 2 < n) {
            q = sws_slab_alloc(pool, st.size + 1);   /* one over: the next class */
            ck_assert_ptr_nonnull(q);
            ck_assert_uint_eq(stat_of(pool, i + 1).used, 1);
            sws_slab_free(pool, q);
            ck_assert_uint_eq(stat_of(pool, i + 1).used, 0);
        }
        sws_slab_free(pool, p);
        st = stat_of(pool, i);
        ck_assert_uint_eq(st.used, 0);
        ck_assert_uint_eq(st.pages, 1);           /* the empty page is kept ... */
        ck_assert_uint_eq(free_pages(pool), total);   /* ... but free for all */
    }
    st = stat_of(pool, n - 1);
    ck_assert_uint_eq(st.size, 0);
    p = sws_slab_alloc(pool, 2049);               /* past half a page: a page */
    ck_assert_ptr_nonnull(p);
    st = stat_of(pool, n - 1);
    ck_assert_uint_eq(st.pages, 1);
    ck_assert_uint_eq(st.used, 1);
    sws_slab_free(pool, p);
    ck_assert_uint_eq(free_pages(pool), total);
    ck_assert_int_eq(sws_slab_stat(pool, n, &st), SWS_ERROR);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* sws_slab_stat_read (1.7) fills as far as the caller's struct_size:
 * a caller of 1.6's layout (no struct_size) is refused, a larger struct
 * keeps its tail, and 1.0's sws_slab_stat writes nothing from struct_size on. */
START_TEST(stat_read_by_size)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "statsize", 256 * 1024);
    struct {
        sws_slab_stat_t  st;
        uint64_t         later;      /* a field of a later SDK */
    } big;
    sws_slab_stat_t  st;
    void            *p;

    ck_assert_ptr_nonnull(pool);
    p = sws_slab_alloc(pool, 8);
    ck_assert_ptr_nonnull(p);

    memset(&st, 0, sizeof(st));
    st.struct_size = offsetof(sws_slab_stat_t, struct_size);     /* too small */
    ck_assert_int_eq(sws_slab_stat_read(pool, 0, &st), SWS_ERROR);
    st.struct_size = sizeof(st);
    ck_assert_int_eq(sws_slab_stat_read(pool, sws_slab_nclasses(pool), &st), SWS_ERROR);
    ck_assert_int_eq(sws_slab_stat_read(pool, 0, &st), SWS_OK);
    ck_assert_uint_eq(st.struct_size, sizeof(st));
    ck_assert_uint_eq(st.size, 8);
    ck_assert_uint_eq(st.used, 1);

    memset(&big, 0x5a, sizeof(big));
    big.st.struct_size = sizeof(big);
    ck_assert_int_eq(sws_slab_stat_read(pool, 0, &big.st), SWS_OK);
    ck_assert_uint_eq(big.st.struct_size, sizeof(sws_slab_stat_t));
    ck_assert_uint_eq(big.st.used, 1);
    ck_assert_uint_eq(big.later, 0x5a5a5a5a5a5a5a5aULL);       /* not its field */

    memset(&st, 0x5a, sizeof(st));
    ck_assert_int_eq(sws_slab_stat(pool, 0, &st), SWS_OK);
    ck_assert_uint_eq(st.struct_size, 0x5a5a5a5a5a5a5a5aULL);  /* 1.0's layout only */
    ck_assert_uint_eq(st.used, 1);
    sws_slab_free(pool, p);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

START_TEST(size_zero_and_too_big)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "edges", 256 * 1024);
    u_char          *a, *b;
    sws_uint_t       runs;
    size_t           total;

    ck_assert_ptr_nonnull(pool);
    runs = sws_slab_nclasses(pool) - 1;
    total = total_pages(pool);
    a = sws_slab_alloc(pool, 0);                  /* like malloc(0): a chunk */
    b = sws_slab_alloc(pool, 0);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_ne(a, b);
    ck_assert_uint_eq(stat_of(pool, 0).used, 2);

    ck_assert_ptr_null(sws_slab_alloc(pool, 256 * 1024 + 1));   /* past the zone */
    ck_assert_ptr_null(sws_slab_alloc(pool, total * 4096 + 1)); /* one byte past */
    ck_assert_ptr_null(sws_slab_alloc(pool, SIZE_MAX));        /* no overflow */
    ck_assert_ptr_null(sws_slab_calloc(pool, SIZE_MAX - 4095));
    ck_assert_uint_eq(stat_of(pool, runs).failures, 4);
    ck_assert_uint_eq(stat_of(pool, runs).requests, 4);
    ck_assert_uint_eq(free_pages(pool), total - 1);           /* nothing taken */

    sws_slab_free(pool, a);
    sws_slab_free(pool, b);
    /* Every free page but none over: the whole zone in one run. */
    a = sws_slab_alloc(pool, total * 4096);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(free_pages(pool), 0);
    ck_assert_ptr_null(sws_slab_alloc(pool, 1));
    ck_assert_uint_eq(stat_of(pool, 0).failures, 1);
    sws_slab_free(pool, a);
    ck_assert_uint_eq(free_pages(pool), total);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Fill with 64-byte chunks until NULL: every page used, no chunk shared
 * (each keeps its own pattern), then a freed chunk is handed out again. */
START_TEST(alloc_until_full_then_reuse)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "full", 128 * 1024);
    u_char         **ptrs;
    size_t           total, n = 0, i, max;
    sws_slab_stat_t  st;

    ck_assert_ptr_nonnull(pool);
    total = total_pages(pool);
    max = total * (4096 / 64);
    ptrs = calloc(max + 1, sizeof(u_char *));
    while ((ptrs[n] = sws_slab_alloc(pool, 64)) != NULL) {
        memset(ptrs[n], (int) (n & 0xff), 64);
        n++;
        ck_assert_uint_le(n, max);
    }
    ck_assert_uint_eq(n, max);                    /* every chunk of every page */
    ck_assert_uint_eq(free_pages(pool), 0);
    st = stat_of(pool, 3);
    ck_assert_uint_eq(st.size, 64);
    ck_assert_uint_eq(st.used, max);
    ck_assert_uint_eq(st.total, max);
    ck_assert_uint_eq(st.failures, 1);
    ck_assert_ptr_null(sws_slab_alloc(pool, 8));  /* another class: no page left */
    ck_assert_ptr_null(sws_slab_alloc(pool, 4096));
    for (i = 0; i < n; i++) {
        ck_assert_uint_eq(ptrs[i][0], i & 0xff);
        ck_assert_uint_eq(ptrs[i][63], i & 0xff);
    }

    sws_slab_free(pool, ptrs[77]);
    ck_assert_ptr_eq(sws_slab_alloc(pool, 60), ptrs[77]);      /* reused */
    ck_assert_ptr_null(sws_slab_alloc(pool, 64));

    for (i = 0; i < n; i++) {
        sws_slab_free(pool, ptrs[i]);
    }
    ck_assert_uint_eq(free_pages(pool), total);
    ck_assert_uint_eq(stat_of(pool, 3).pages, 1);  /* one kept, empty */
    ck_assert_uint_eq(stat_of(pool, 3).used, 0);
    /* The class takes its next chunk from the kept page ... */
    ptrs[0] = sws_slab_alloc(pool, 64);
    sws_slab_free(pool, ptrs[0]);
    ck_assert_ptr_eq(sws_slab_alloc(pool, 64), ptrs[0]);
    sws_slab_free(pool, ptrs[0]);
    ck_assert_uint_eq(stat_of(pool, 3).pages, 1);
    /* ... and gives it up when another needs every page. */
    ptrs[0] = sws_slab_alloc(pool, total * 4096);
    ck_assert_ptr_nonnull(ptrs[0]);
    ck_assert_uint_eq(stat_of(pool, 3).pages, 0);
    ck_assert_uint_eq(free_pages(pool), 0);
    sws_slab_free(pool, ptrs[0]);
    ck_assert_uint_eq(free_pages(pool), total);
    free(ptrs);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* Runs of pages: a hole of free pages between used ones is not a run of
 * two; freeing the pages between merges them, in both directions. */
START_TEST(large_and_fragmentation)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "frag", 256 * 1024);
    u_char         **pg, *big;
    size_t           total, i;
    sws_uint_t       runs;

    ck_assert_ptr_nonnull(pool);
    runs = sws_slab_nclasses(pool) - 1;
    total = total_pages(pool);
    pg = calloc(total, sizeof(u_char *));
    for (i = 0; i < total; i++) {
        pg[i] = sws_slab_alloc(pool, 4096);
        ck_assert_ptr_nonnull(pg[i]);
        if (i) {
            ck_assert_ptr_eq(pg[i], pg[i - 1] + 4096);       /* in order: first fit */
        }
    }
    ck_assert_uint_eq(stat_of(pool, runs).used, total);
    ck_assert_ptr_null(sws_slab_alloc(pool, 4096));

    for (i = 0; i < total; i += 2) {
        sws_slab_free(pool, pg[i]);                          /* every other page */
    }
    ck_assert_uint_eq(free_pages(pool), (total + 1) / 2);
    ck_assert_ptr_null(sws_slab_alloc(pool, 8192));          /* no two side by side */
    ck_assert_uint_eq(stat_of(pool, runs).failures, 2);

    sws_slab_free(pool, pg[1]);                              /* 0, 1, 2 merge */
    big = sws_slab_alloc(pool, 3 * 4096);
    ck_assert_ptr_eq(big, pg[0]);
    ck_assert_ptr_null(sws_slab_alloc(pool, 8192));
    sws_slab_free(pool, big);

    sws_slab_free(pool, pg[1]);                              /* in a free run now */
    ck_assert_uint_eq(free_pages(pool), (total + 1) / 2 + 1);
    for (i = 3; i < total; i += 2) {
        sws_slab_free(pool, pg[i]);
    }
    ck_assert_uint_eq(free_pages(pool), total);
    ck_assert_uint_eq(stat_of(pool, runs).pages, 0);
    ck_assert_uint_eq(stat_of(pool, runs).used, 0);
    big = sws_slab_alloc(pool, total * 4096);                /* all one run again */
    ck_assert_ptr_eq(big, pg[0]);
    sws_slab_free(pool, big);

    /* Freed backwards (each merges with the run after it), then a run of
     * 5 in the middle of chunks' pages. */
    for (i = 0; i < total; i++) {
        pg[i] = sws_slab_alloc(pool, 4096);
    }
    for (i = total; i-- > 0;) {
        sws_slab_free(pool, pg[i]);
    }
    ck_assert_ptr_eq(sws_slab_alloc(pool, total * 4096), pg[0]);
    sws_slab_free(pool, pg[0]);
    free(pg);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* What is not the start of an allocation is ignored: nothing changes. */
START_TEST(bad_free_ignored)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "bad", 128 * 1024);
    u_char          *a, *run, local[16];
    size_t           nfree;

    ck_assert_ptr_nonnull(pool);
    a = sws_slab_alloc(pool, 100);                /* class 128 */
    run = sws_slab_alloc(pool, 3 * 4096);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(run);
    nfree = free_pages(pool);

    sws_slab_free(pool, NULL);
    sws_slab_free(pool, local);                   /* not in the zone */
    sws_slab_free(pool, a + 8);                   /* inside a chunk */
    ck_assert_uint_eq(stat_of(pool, 4).used, 1);
    sws_slab_free(pool, run + 4096);              /* inside a run */
    sws_slab_free(pool, run + 10);
    ck_assert_uint_eq(free_pages(pool), nfree);
    ck_assert_uint_eq(stat_of(pool, sws_slab_nclasses(pool) - 1).used, 1);

    sws_slab_free(pool, run);
    sws_slab_free(pool, run);                     /* twice: the page is free already */
    ck_assert_uint_eq(free_pages(pool), nfree + 3);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* calloc zeroes memory that held something before, chunks and runs. */
START_TEST(calloc_zeroes_reused_memory)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "calloc", 128 * 1024);
    u_char          *p, *q;
    size_t           sizes[] = { 0, 24, 2048, 5000 }, i, k;

    ck_assert_ptr_nonnull(pool);
    for (i = 0; i < sws_nelems(sizes); i++) {
        p = sws_slab_alloc(pool, sizes[i]);
        ck_assert_ptr_nonnull(p);
        memset(p, 0xee, sizes[i] ? sizes[i] : 8);
        sws_slab_free(pool, p);
        q = sws_slab_calloc(pool, sizes[i]);
        ck_assert_ptr_eq(q, p);
        for (k = 0; k < sizes[i]; k++) {
            ck_assert_uint_eq(q[k], 0);
        }
        sws_slab_free(pool, q);
    }
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A zone under 64 KiB gets smaller pages, so it still has several;
 * one too small for two pages is refused. */
START_TEST(small_zones)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "tiny", 8192);
    size_t           page, total, nfree;
    u_char          *p;

    ck_assert_ptr_nonnull(pool);
    sws_slab_pages(pool, &page, &total, &nfree);
    ck_assert_uint_eq(page, 512);
    ck_assert_uint_ge(total, 12);
    ck_assert_uint_eq(sws_slab_nclasses(pool), 7);          /* 8 .. 256, runs */
    ck_assert_uint_eq(stat_of(pool, 5).size, 256);
    p = sws_slab_alloc(pool, 257);                          /* a page of 512 */
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(stat_of(pool, 6).pages, 1);
    p = sws_slab_alloc(pool, 600);                          /* two */
    ck_assert_uint_eq(stat_of(pool, 6).pages, 3);
    sws_pool_destroy(f.cycle.pool);

    ck_assert_ptr_null(slab_zone(&f, NULL, "tinier", 1024));
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

typedef struct {
    sws_slab_lru_node_t   lru;
    sws_slab_hash_node_t  hash;
    int                   value;
    u_char                key[8];
} entry_t;

START_TEST(lru_order)
{
    sws_slab_lru_t  lru;
    entry_t         e[3];
    int             i;

    sws_slab_lru_init(&lru);
    ck_assert_ptr_null(sws_slab_lru_oldest(&lru));
    for (i = 0; i < 3; i++) {
        e[i].value = i;
        sws_slab_lru_insert(&lru, &e[i].lru);
    }
    ck_assert_uint_eq(lru.count, 3);
    ck_assert_int_eq(sws_slab_lru_entry(sws_slab_lru_oldest(&lru), entry_t, lru)->value, 0);
    sws_slab_lru_touch(&lru, &e[0].lru);          /* 0 used: 1 is the oldest */
    ck_assert_ptr_eq(sws_slab_lru_oldest(&lru), &e[1].lru);
    sws_slab_lru_touch(&lru, &e[0].lru);          /* the newest already */
    ck_assert_ptr_eq(sws_slab_lru_oldest(&lru), &e[1].lru);
    sws_slab_lru_remove(&lru, &e[1].lru);
    ck_assert_ptr_eq(sws_slab_lru_oldest(&lru), &e[2].lru);
    ck_assert_uint_eq(lru.count, 2);
    sws_slab_lru_remove(&lru, &e[2].lru);
    ck_assert_ptr_eq(sws_slab_lru_oldest(&lru), &e[0].lru);
    sws_slab_lru_remove(&lru, &e[0].lru);
    ck_assert_ptr_null(sws_slab_lru_oldest(&lru));
    ck_assert_uint_eq(lru.count, 0);
}
END_TEST

START_TEST(hash_find_insert_remove)
{
    fake_t                f;
    sws_slab_pool_t      *pool = slab_zone(&f, NULL, "hash", 256 * 1024);
    sws_slab_hash_t      *h, *one;
    sws_slab_hash_node_t *n;
    entry_t              *e[200];
    int                   i;

    ck_assert_ptr_nonnull(pool);
    sws_slab_lock(pool);
    h = sws_slab_hash_create_locked(pool, 50);     /* 64 buckets */
    one = sws_slab_hash_create_locked(pool, 0);    /* 1: every key collides */
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_nonnull(one);
    for (i = 0; i < 200; i++) {
        e[i] = sws_slab_calloc_locked(pool, sizeof(entry_t));
        ck_assert_ptr_nonnull(e[i]);
        e[i]->value = i;
        memcpy(e[i]->key, &i, sizeof(i));
        sws_slab_hash_insert(i % 2 ? one : h, &e[i]->hash, e[i]->key, sizeof(i));
    }
    ck_assert_uint_eq(sws_slab_hash_count(h), 100);
    ck_assert_uint_eq(sws_slab_hash_count(one), 100);
    for (i = 0; i < 200; i++) {
        n = sws_slab_hash_find(i % 2 ? one : h, (u_char *) &i, sizeof(i));
        ck_assert_ptr_nonnull(n);
        ck_assert_int_eq(sws_slab_hash_entry(n, entry_t, hash)->value, i);
        ck_assert_ptr_null(sws_slab_hash_find(i % 2 ? h : one, (u_char *) &i, sizeof(i)));
    }
    ck_assert_ptr_null(sws_slab_hash_find(h, (u_char *) "abc", 3));   /* other length */
    for (i = 0; i < 200; i += 3) {
        sws_slab_hash_remove(i % 2 ? one : h, &e[i]->hash);
    }
    for (i = 0; i < 200; i++) {
        n = sws_slab_hash_find(i % 2 ? one : h, (u_char *) &i, sizeof(i));
        ck_assert(i % 3 == 0 ? n == NULL : n == &e[i]->hash);
    }
    ck_assert_uint_eq(sws_slab_hash_count(h) + sws_slab_hash_count(one), 200 - 67);
    sws_slab_unlock(pool);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A cache's loop: allocation fails, evict the oldest, retry. The most
 * recent entries survive, and so does one touched early on. */
START_TEST(evict_oldest_to_make_room)
{
    fake_t                f;
    sws_slab_pool_t      *pool = slab_zone(&f, NULL, "evict", 64 * 1024);
    sws_slab_lru_t       *lru;
    sws_slab_hash_t      *h;
    sws_slab_lru_node_t  *old;
    entry_t              *e, *keep = NULL;
    int                   i, evicted = 0;

    ck_assert_ptr_nonnull(pool);
    sws_slab_lock(pool);
    lru = sws_slab_alloc_locked(pool, sizeof(*lru));
    h = sws_slab_hash_create_locked(pool, 256);
    sws_slab_lru_init(lru);
    for (i = 0; i < 5000; i++) {
        while ((e = sws_slab_calloc_locked(pool, 100)) == NULL) {
            old = sws_slab_lru_oldest(lru);
            ck_assert_ptr_nonnull(old);
            e = sws_slab_lru_entry(old, entry_t, lru);
            ck_assert_ptr_ne(e, keep);
            sws_slab_lru_remove(lru, old);
            sws_slab_hash_remove(h, &e->hash);
            sws_slab_free_locked(pool, e);
            evicted++;
        }
        e->value = i;
        memcpy(e->key, &i, sizeof(i));
        sws_slab_hash_insert(h, &e->hash, e->key, sizeof(i));
        sws_slab_lru_insert(lru, &e->lru);
        if (i == 10) {
            keep = e;
        }
        if (keep) {
            sws_slab_lru_touch(lru, &keep->lru);   /* used all along */
        }
    }
    ck_assert_int_gt(evicted, 4000);
    ck_assert_uint_eq(lru->count, sws_slab_hash_count(h));
    ck_assert_uint_eq(lru->count, 5000 - evicted);
    i = 4999;
    ck_assert_ptr_nonnull(sws_slab_hash_find(h, (u_char *) &i, sizeof(i)));
    i = 10;
    ck_assert_ptr_eq(sws_slab_hash_find(h, (u_char *) &i, sizeof(i)), &keep->hash);
    i = 11;
    ck_assert_ptr_null(sws_slab_hash_find(h, (u_char *) &i, sizeof(i)));
    sws_slab_unlock(pool);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* What a child allocates, the parent sees; two processes allocating and
 * freeing at once under the lock leave a consistent pool. */
START_TEST(across_fork)
{
    fake_t           f;
    sws_slab_pool_t *pool = slab_zone(&f, NULL, "fork", 512 * 1024);
    pid_t            pid;
    int              status, round, k;
    size_t           total;
    char            *s;
    u_char          *mine[64];

    ck_assert_ptr_nonnull(pool);
    total = total_pages(pool);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        s = sws_slab_alloc(pool, 32);
        if (s == NULL) {
            _exit(2);
        }
        strcpy(s, "from the child");
        sws_slab_lock(pool);
        sws_slab_set_data(pool, s);
        sws_slab_unlock(pool);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    s = sws_slab_data(pool);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "from the child");
    ck_assert_uint_eq(stat_of(pool, 2).used, 1);
    sws_slab_free(pool, s);

    alarm(20);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    for (round = 0; round < 2000; round++) {
        for (k = 0; k < 64; k++) {
            mine[k] = sws_slab_alloc(pool, (size_t) (8 + (k * 37 + round) % 3000));
            if (mine[k] == NULL) {
                if (pid == 0) {
                    _exit(3);
                }
                ck_abort_msg("allocation failed");
            }
            memset(mine[k], pid == 0 ? 0xc1 : 0x9a, 8);
        }
        for (k = 0; k < 64; k++) {
            if (mine[k][0] != (pid == 0 ? 0xc1 : 0x9a) || mine[k][7] != mine[k][0]) {
                if (pid == 0) {
                    _exit(4);                       /* the other wrote into mine */
                }
                ck_abort_msg("a chunk handed out twice");
            }
            sws_slab_free(pool, mine[k]);
        }
    }
    if (pid == 0) {
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    alarm(0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(free_pages(pool), total);
    for (k = 0; k < (int) sws_slab_nclasses(pool); k++) {
        ck_assert_uint_eq(stat_of(pool, (sws_uint_t) k).used, 0);
    }
    for (status = 0, k = 0; k < (int) sws_slab_nclasses(pool); k++) {
        status += (int) stat_of(pool, (sws_uint_t) k).requests;
    }
    ck_assert_int_eq(status, 1 + 2 * 2000 * 64);  /* the child's string, then both loops */
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A reload with the same name and size gets the pool back with what it
 * held; another size gets a new, empty one; the old stays intact until
 * its configuration goes. */
START_TEST(reload_keeps_or_renews)
{
    fake_t           old, f, g;
    sws_slab_pool_t *p0, *p1, *p2;
    char            *s;
    size_t           total;

    p0 = slab_zone(&old, NULL, "reload", 128 * 1024);
    ck_assert_ptr_nonnull(p0);
    s = sws_slab_alloc(p0, 40);
    strcpy(s, "kept");
    sws_slab_set_data(p0, s);
    total = total_pages(p0);

    p1 = slab_zone(&f, &old, "reload", 128 * 1024);
    ck_assert_ptr_eq(p1, p0);
    ck_assert_ptr_eq(sws_slab_data(p1), s);
    ck_assert_str_eq(sws_slab_data(p1), "kept");
    ck_assert_uint_eq(stat_of(p1, 3).used, 1);     /* the counts too */
    ck_assert_uint_eq(stat_of(p1, 3).requests, 1);
    ck_assert_uint_eq(free_pages(p1), total - 1);
    sws_pool_destroy(old.cycle.pool);
    ck_assert_str_eq(sws_slab_data(p1), "kept");

    p2 = slab_zone(&g, &f, "reload", 256 * 1024);  /* resized */
    ck_assert_ptr_nonnull(p2);
    ck_assert_ptr_ne(p2, p1);
    ck_assert_ptr_null(sws_slab_data(p2));
    ck_assert_uint_eq(stat_of(p2, 3).requests, 0);
    ck_assert_uint_eq(free_pages(p2), total_pages(p2));
    ck_assert_str_eq(sws_slab_data(p1), "kept");   /* the old one until it goes */
    sws_pool_destroy(f.cycle.pool);
    sws_pool_destroy(g.cycle.pool);
}
END_TEST

static Suite *
slab_suite(void)
{
    Suite *s = suite_create("slab");
    TCase *tc = tcase_create("slab");

    tcase_add_test(tc, every_size_class);
    tcase_add_test(tc, stat_read_by_size);
    tcase_add_test(tc, size_zero_and_too_big);
    tcase_add_test(tc, alloc_until_full_then_reuse);
    tcase_add_test(tc, large_and_fragmentation);
    tcase_add_test(tc, bad_free_ignored);
    tcase_add_test(tc, calloc_zeroes_reused_memory);
    tcase_add_test(tc, small_zones);
    tcase_add_test(tc, lru_order);
    tcase_add_test(tc, hash_find_insert_remove);
    tcase_add_test(tc, evict_oldest_to_make_room);
    tcase_add_test(tc, across_fork);
    tcase_add_test(tc, reload_keeps_or_renews);
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

    sr = srunner_create(slab_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    return failed == 0 ? 0 : 1;
}
