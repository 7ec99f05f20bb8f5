/*
 * The per-thread caching allocator (see sws_alloc_cache.h).
 *
 * Each block has a 16-byte header in front: its class (or BIG for blocks
 * above the largest class), what it costs against the cap and where, and a
 * tag that tells a live block from a cached one, which catches double
 * frees and foreign pointers. A cached block's first word links it to the
 * next one of its class; the header is written when the block comes from
 * malloc() and stays valid while it is cached, so the fast paths need no
 * table.
 *
 * The caps are "room" counters per thread: one per small class (blocks)
 * and one shared by the large classes (bytes). They start at zero, so the
 * first free() of a thread takes the slow path, which sets them and
 * registers a thread-exit destructor that empties the cache. A BIG block
 * weighs more than any room, so it always takes the slow path to free().
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sws_alloc_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define SWS_ALLOC_CACHE_PASS  1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWS_ALLOC_CACHE_PASS  1
#endif
#endif

#if defined(__GNUC__)
#define sws_ac_likely(x)    __builtin_expect(!!(x), 1)
#define sws_ac_unlikely(x)  __builtin_expect(!!(x), 0)
#else
#define sws_ac_likely(x)    (x)
#define sws_ac_unlikely(x)  (x)
#endif

/* Above this, sizes fail as glibc's do (and ASan, passing through, is
 * never asked for a size it would abort on). */
#define SWS_AC_LIMIT  ((size_t) PTRDIFF_MAX - SWS_AC_HDR)
#define SWS_AC_HDR    16


#ifdef SWS_ALLOC_CACHE_PASS

void *
sws_alloc_cache_malloc(size_t size)
{
    if (size > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    return malloc(size);
}


void *
sws_alloc_cache_calloc(size_t nmemb, size_t size)
{
    size_t  total;

    if (__builtin_mul_overflow(nmemb, size, &total) || total > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    return calloc(nmemb, size);
}


void *
sws_alloc_cache_realloc(void *p, size_t size)
{
    if (size > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    if (p != NULL && size == 0) {
        free(p);
        return NULL;
    }
    return realloc(p, size);
}


void
sws_alloc_cache_free(void *p)
{
    free(p);
}


void
sws_alloc_cache_flush(void)
{
}


void
sws_alloc_cache_stats(sws_alloc_cache_stats_t *st)
{
    memset(st, 0, sizeof(*st));
}


int
sws_alloc_cache_active(void)
{
    return 0;
}

#else /* !SWS_ALLOC_CACHE_PASS */

#define SWS_AC_NCLASS  40        /* 16 .. 32768 */
#define SWS_AC_NSMALL  20        /* 16 .. 1024 */
#define SWS_AC_BIG     0xffffu   /* the class of blocks above the largest */
#define SWS_AC_LIVE    0x5a5a11feu
#define SWS_AC_CACHED  0x5a5acac8u

typedef struct {
    uint32_t  slot;      /* its room counter */
    uint32_t  weight;    /* what it takes from that room */
    uint32_t  cls;
    uint32_t  tag;       /* SWS_AC_LIVE or SWS_AC_CACHED */
} sws_ac_hdr_t;

_Static_assert(sizeof(sws_ac_hdr_t) <= SWS_AC_HDR, "header fits its 16 bytes");

/* A class: its size, its room counter, what a block weighs there. */
typedef struct {
    uint32_t  size;
    uint32_t  slot;
    uint32_t  weight;
} sws_ac_class_t;

/* Classes 0-3: 16, 32, 48, 64; then four per power of two: 80, 96, 112,
 * 128, 160, ... 28672, 32768. The small ones have a room counter each
 * (blocks), the large ones share the last (bytes). */
#define SWS_AC_SIZE(c) \
    ((c) < 4 ? ((c) + 1) << 4 : (5 + ((c) & 3)) << (((c) >> 2) + 3))
#define SWS_AC_C(c) \
    { SWS_AC_SIZE(c), (c) < SWS_AC_NSMALL ? (c) : SWS_AC_NSMALL, \
      (c) < SWS_AC_NSMALL ? 1 : SWS_AC_SIZE(c) }
#define SWS_AC_C4(c) \
    SWS_AC_C(c), SWS_AC_C(c + 1), SWS_AC_C(c + 2), SWS_AC_C(c + 3)

static const sws_ac_class_t  sws_ac_classes[SWS_AC_NCLASS] = {
    SWS_AC_C4(0), SWS_AC_C4(4), SWS_AC_C4(8), SWS_AC_C4(12), SWS_AC_C4(16),
    SWS_AC_C4(20), SWS_AC_C4(24), SWS_AC_C4(28), SWS_AC_C4(32), SWS_AC_C4(36)
};

_Static_assert(SWS_AC_SIZE(SWS_AC_NSMALL - 1) == SWS_ALLOC_CACHE_SMALL_MAX, "small classes");
_Static_assert(SWS_AC_SIZE(SWS_AC_NCLASS - 1) == SWS_ALLOC_CACHE_MAX, "largest class");

typedef struct {
    void      *head[SWS_AC_NCLASS];
    uint32_t   room[SWS_AC_NSMALL + 1];
    int        state;            /* 0: not set up, 1: caching, 2: thread gone */
    uint64_t   sys_allocs;
    uint64_t   sys_frees;
} sws_ac_thread_t;

static __thread sws_ac_thread_t  sws_ac;

static pthread_once_t  sws_ac_once = PTHREAD_ONCE_INIT;
static pthread_key_t   sws_ac_key;
static int             sws_ac_key_ok;


/* n = size - 1, size in 1 .. SWS_ALLOC_CACHE_MAX. */
static inline unsigned
sws_ac_class(size_t n)
{
    unsigned  b;

    if (n < 64) {
        return (unsigned) (n >> 4);
    }
    b = 63 - (unsigned) __builtin_clzll((unsigned long long) n);
    return 4 * b - 24 + (unsigned) (n >> (b - 2));
}


static void __attribute__((noreturn, noinline, cold))
sws_ac_corrupt(const char *what)
{
    static const char  msg[] = "scalwsd: alloc cache: ";

    (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void) !write(STDERR_FILENO, what, strlen(what));
    (void) !write(STDERR_FILENO, "\n", 1);
    abort();
}


static inline sws_ac_hdr_t *
sws_ac_hdr(void *p, const char *op)
{
    sws_ac_hdr_t  *h = (sws_ac_hdr_t *) ((char *) p - SWS_AC_HDR);

    if (sws_ac_unlikely(h->tag != SWS_AC_LIVE)) {
        sws_ac_corrupt(h->tag == SWS_AC_CACHED ? "double free" : op);
    }
    return h;
}


static void *
sws_ac_sys(sws_ac_hdr_t *h, uint32_t cls)
{
    if (h == NULL) {
        return NULL;
    }
    if (cls == SWS_AC_BIG) {
        h->slot = 0;
        h->weight = UINT32_MAX;
    } else {
        h->slot = sws_ac_classes[cls].slot;
        h->weight = sws_ac_classes[cls].weight;
    }
    h->cls = cls;
    h->tag = SWS_AC_LIVE;
    sws_ac.sys_allocs++;
    return (char *) h + SWS_AC_HDR;
}


static void * __attribute__((noinline))
sws_ac_malloc_slow(size_t size)
{
    unsigned  cls;

    if (size == 0) {
        size = 1;
    }
    if (size <= SWS_ALLOC_CACHE_MAX) {
        /* The class's list is empty. */
        cls = sws_ac_class(size - 1);
        return sws_ac_sys(malloc(SWS_AC_HDR + sws_ac_classes[cls].size), cls);
    }
    if (size > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    return sws_ac_sys(malloc(SWS_AC_HDR + size), SWS_AC_BIG);
}


static inline void *
sws_ac_malloc(size_t size)
{
    sws_ac_hdr_t   *h;
    unsigned        cls;
    void          **b;

    if (sws_ac_likely(size - 1 < SWS_ALLOC_CACHE_MAX)) {
        cls = sws_ac_class(size - 1);
        b = sws_ac.head[cls];
        if (sws_ac_likely(b != NULL)) {
            h = (sws_ac_hdr_t *) ((char *) b - SWS_AC_HDR);
            sws_ac.head[cls] = *b;
            sws_ac.room[h->slot] += h->weight;
            h->tag = SWS_AC_LIVE;
            return b;
        }
    }
    return sws_ac_malloc_slow(size);
}


static void
sws_ac_thread_exit(void *arg)
{
    (void) arg;
    /* No room from now on: blocks freed by later destructors go straight
     * to free(). */
    sws_ac.state = 2;
    memset(sws_ac.room, 0, sizeof(sws_ac.room));
    sws_alloc_cache_flush();
}


static void
sws_ac_key_init(void)
{
    sws_ac_key_ok = pthread_key_create(&sws_ac_key, sws_ac_thread_exit) == 0;
}


static void
sws_ac_set_room(void)
{
    unsigned  i;

    for (i = 0; i < SWS_AC_NSMALL; i++) {
        sws_ac.room[i] = SWS_ALLOC_CACHE_SMALL_CAP;
    }
    sws_ac.room[SWS_AC_NSMALL] = SWS_ALLOC_CACHE_LARGE_CAP;
}


/* No room (or a BIG block, or the thread's first free). */
static void __attribute__((noinline))
sws_ac_free_slow(sws_ac_hdr_t *h)
{
    if (sws_ac.state == 0 && h->cls != SWS_AC_BIG) {
        /* The thread's first free(): set the caps, then try again. */
        pthread_once(&sws_ac_once, sws_ac_key_init);
        if (sws_ac_key_ok && pthread_setspecific(sws_ac_key, &sws_ac) == 0) {
            sws_ac.state = 1;
            sws_ac_set_room();
            sws_alloc_cache_free((char *) h + SWS_AC_HDR);
            return;
        }
        sws_ac.state = 2;
    }
    h->tag = 0;
    sws_ac.sys_frees++;
    free(h);
}


static inline void
sws_ac_free(void *p)
{
    sws_ac_hdr_t  *h;
    uint32_t      *room;

    if (p == NULL) {
        return;
    }
    h = sws_ac_hdr(p, "free of a pointer it did not allocate");
    room = &sws_ac.room[h->slot];
    if (sws_ac_likely(*room >= h->weight)) {
        *room -= h->weight;
        h->tag = SWS_AC_CACHED;
        *(void **) p = sws_ac.head[h->cls];
        sws_ac.head[h->cls] = p;
        return;
    }
    sws_ac_free_slow(h);
}


void *
sws_alloc_cache_malloc(size_t size)
{
    return sws_ac_malloc(size);
}


void *
sws_alloc_cache_calloc(size_t nmemb, size_t size)
{
    size_t         total;
    sws_ac_hdr_t  *h;
    void          *p;

    if (__builtin_mul_overflow(nmemb, size, &total) || total > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    if (total <= SWS_ALLOC_CACHE_MAX) {
        p = sws_ac_malloc(total);
        if (p != NULL) {
            memset(p, 0, total);
        }
        return p;
    }
    /* calloc() may know the memory is zero already (fresh mmap). */
    h = calloc(1, SWS_AC_HDR + total);
    return sws_ac_sys(h, SWS_AC_BIG);
}


void *
sws_alloc_cache_realloc(void *p, size_t size)
{
    sws_ac_hdr_t  *h;
    size_t         have;
    void          *np;

    if (p == NULL) {
        return sws_ac_malloc(size);
    }
    if (size == 0) {
        sws_ac_free(p);
        return NULL;
    }
    if (size > SWS_AC_LIMIT) {
        errno = ENOMEM;
        return NULL;
    }
    h = sws_ac_hdr(p, "realloc of a pointer it did not allocate");

    if (h->cls == SWS_AC_BIG) {
        /* A big block stays one, whatever its new size. */
        h = realloc(h, SWS_AC_HDR + size);
        return h != NULL ? (char *) h + SWS_AC_HDR : NULL;
    }

    if (size <= SWS_ALLOC_CACHE_MAX && sws_ac_class(size - 1) == h->cls) {
        return p;
    }
    have = sws_ac_classes[h->cls].size;
    np = sws_ac_malloc(size);
    if (np == NULL) {
        return NULL;
    }
    memcpy(np, p, have < size ? have : size);
    sws_ac_free(p);
    return np;
}


void
sws_alloc_cache_free(void *p)
{
    sws_ac_free(p);
}


void
sws_alloc_cache_flush(void)
{
    unsigned       cls;
    void          *b;
    sws_ac_hdr_t  *h;

    for (cls = 0; cls < SWS_AC_NCLASS; cls++) {
        while ((b = sws_ac.head[cls]) != NULL) {
            sws_ac.head[cls] = *(void **) b;
            h = (sws_ac_hdr_t *) ((char *) b - SWS_AC_HDR);
            h->tag = 0;
            sws_ac.sys_frees++;
            free(h);
        }
    }
    if (sws_ac.state == 1) {
        sws_ac_set_room();
    }
}


void
sws_alloc_cache_stats(sws_alloc_cache_stats_t *st)
{
    unsigned   cls;
    void     **b;

    memset(st, 0, sizeof(*st));
    for (cls = 0; cls < SWS_AC_NCLASS; cls++) {
        for (b = sws_ac.head[cls]; b != NULL; b = *b) {
            st->cached_blocks++;
            st->cached_bytes += sws_ac_classes[cls].size;
        }
    }
    st->sys_allocs = sws_ac.sys_allocs;
    st->sys_frees = sws_ac.sys_frees;
}


int
sws_alloc_cache_active(void)
{
    return 1;
}

#endif /* SWS_ALLOC_CACHE_PASS */


void *
sws_alloc_cache_mem_malloc(size_t size, void *user)
{
    (void) user;
    return sws_alloc_cache_malloc(size);
}


void *
sws_alloc_cache_mem_calloc(size_t nmemb, size_t size, void *user)
{
    (void) user;
    return sws_alloc_cache_calloc(nmemb, size);
}


void *
sws_alloc_cache_mem_realloc(void *p, size_t size, void *user)
{
    (void) user;
    return sws_alloc_cache_realloc(p, size);
}


void
sws_alloc_cache_mem_free(void *p, void *user)
{
    (void) user;
    sws_alloc_cache_free(p);
}
