/*
 * OpenSSL's memory functions (see sws_alloc_cache.h).
 *
 * Every block is an ordinary malloc() block with no header of ours, so a
 * long-lived block costs what it costs OpenSSL itself. A freed block is
 * kept on its thread instead, for the next allocation it fits, and its
 * size is malloc_usable_size()'s:
 * - below SWS_CRYPTO_SMALL_MAX, on the list of its 16-byte step (list i
 *   holds blocks of at least i * 16 - 8 usable bytes, malloc()'s steps),
 *   SWS_CRYPTO_SMALL_CAP of each: OpenSSL takes and frees a dozen small
 *   blocks per TLS record written;
 * - above, on one of a few lists of one usable size each, up to
 *   SWS_CRYPTO_KEEP_BYTES in all, taken back by an allocation that wastes
 *   at most a quarter of the block: the record buffers (about 17 KiB, two
 *   sizes), freed whenever a connection goes idle
 *   (SSL_MODE_RELEASE_BUFFERS) and taken again by its next request.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include "sws_alloc_cache.h"

#if defined(__SANITIZE_ADDRESS__)
#define SWS_CRYPTO_PASS  1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWS_CRYPTO_PASS  1
#endif
#endif

#define SWS_CRYPTO_SMALL_MAX   1024
#define SWS_CRYPTO_NSMALL      (SWS_CRYPTO_SMALL_MAX / 16 + 1)
#define SWS_CRYPTO_SMALL_CAP   16
#define SWS_CRYPTO_KEEP_MAX    SWS_ALLOC_CACHE_MAX
#define SWS_CRYPTO_KEEP_SIZES  6
#define SWS_CRYPTO_KEEP_BYTES  (256 * 1024)

#ifndef SWS_CRYPTO_PASS

typedef struct {
    void    *small[SWS_CRYPTO_NSMALL];
    uint8_t  nsmall[SWS_CRYPTO_NSMALL];
    size_t   usable[SWS_CRYPTO_KEEP_SIZES];     /* of every block on the list */
    void    *head[SWS_CRYPTO_KEEP_SIZES];
    uint64_t used[SWS_CRYPTO_KEEP_SIZES];       /* when last taken or given */
    uint64_t clock;
    size_t   bytes;                             /* kept, all lists */
    int      state;             /* 0: not set up, 1: keeping, 2: thread gone */
} sws_crypto_keep_t;

static __thread sws_crypto_keep_t  sws_ck;

static pthread_once_t  sws_ck_once = PTHREAD_ONCE_INIT;
static pthread_key_t   sws_ck_key;
static int             sws_ck_key_ok;


/* The blocks of large list i back to malloc(). */
static void
sws_ck_drop(unsigned i)
{
    void  *b;

    while ((b = sws_ck.head[i]) != NULL) {
        sws_ck.head[i] = *(void **) b;
        sws_ck.bytes -= sws_ck.usable[i];
        free(b);
    }
}


static void
sws_ck_release(void)
{
    unsigned  i;
    void     *b;

    for (i = 0; i < SWS_CRYPTO_NSMALL; i++) {
        while ((b = sws_ck.small[i]) != NULL) {
            sws_ck.small[i] = *(void **) b;
            free(b);
        }
        sws_ck.nsmall[i] = 0;
    }
    for (i = 0; i < SWS_CRYPTO_KEEP_SIZES; i++) {
        sws_ck_drop(i);
        sws_ck.usable[i] = 0;
    }
}


static void
sws_ck_thread_exit(void *arg)
{
    (void) arg;
    sws_ck.state = 2;           /* later frees go straight to free() */
    sws_ck_release();
}


static void
sws_ck_key_init(void)
{
    sws_ck_key_ok = pthread_key_create(&sws_ck_key, sws_ck_thread_exit) == 0;
}


static void *
sws_ck_malloc(size_t size)
{
    unsigned  i;
    void    **b;

    if (size < SWS_CRYPTO_SMALL_MAX - 8) {
        i = (unsigned) (size + 8 + 15) >> 4;        /* its usable >= size */
        b = sws_ck.small[i];
        if (b != NULL) {
            sws_ck.small[i] = *b;
            sws_ck.nsmall[i]--;
            return b;
        }
        return malloc(size);
    }
    if (size <= SWS_CRYPTO_KEEP_MAX) {
        for (i = 0; i < SWS_CRYPTO_KEEP_SIZES; i++) {
            b = sws_ck.head[i];
            if (b != NULL && sws_ck.usable[i] >= size
                && sws_ck.usable[i] - size <= sws_ck.usable[i] / 4)
            {
                sws_ck.head[i] = *b;
                sws_ck.bytes -= sws_ck.usable[i];
                sws_ck.used[i] = ++sws_ck.clock;
                return b;
            }
        }
    }
    return malloc(size);
}


/* The thread's first block kept: what it keeps goes when it ends. */
static int __attribute__((noinline))
sws_ck_start(void)
{
    pthread_once(&sws_ck_once, sws_ck_key_init);
    if (!sws_ck_key_ok || pthread_setspecific(sws_ck_key, &sws_ck) != 0) {
        sws_ck.state = 2;
        return 0;
    }
    sws_ck.state = 1;
    return 1;
}


static void
sws_ck_free(void *p)
{
    size_t    n;
    unsigned  i, spare = SWS_CRYPTO_KEEP_SIZES;

    if (p == NULL) {
        return;
    }
    if (sws_ck.state != 1 && (sws_ck.state == 2 || !sws_ck_start())) {
        free(p);
        return;
    }
    n = malloc_usable_size(p);
    if (n < SWS_CRYPTO_SMALL_MAX) {
        i = (unsigned) (n + 8) >> 4;                /* i * 16 - 8 <= n */
        if (sws_ck.nsmall[i] < SWS_CRYPTO_SMALL_CAP) {
            *(void **) p = sws_ck.small[i];
            sws_ck.small[i] = p;
            sws_ck.nsmall[i]++;
            return;
        }
        free(p);
        return;
    }
    if (n > SWS_CRYPTO_KEEP_MAX + 64 || sws_ck.bytes + n > SWS_CRYPTO_KEEP_BYTES) {
        free(p);
        return;
    }
    for (i = 0; i < SWS_CRYPTO_KEEP_SIZES; i++) {
        if (sws_ck.usable[i] == n) {
            break;
        }
        if (sws_ck.head[i] == NULL && spare == SWS_CRYPTO_KEEP_SIZES) {
            spare = i;
        }
    }
    if (i == SWS_CRYPTO_KEEP_SIZES) {
        if (spare == SWS_CRYPTO_KEEP_SIZES) {
            /* Every list holds another size: the one used longest ago
             * gives its blocks back (a handshake's sizes, say, must not
             * keep the record buffers' out for good). */
            spare = 0;
            for (i = 1; i < SWS_CRYPTO_KEEP_SIZES; i++) {
                if (sws_ck.used[i] < sws_ck.used[spare]) {
                    spare = i;
                }
            }
            sws_ck_drop(spare);
        }
        i = spare;
        sws_ck.usable[i] = n;
    }
    *(void **) p = sws_ck.head[i];
    sws_ck.head[i] = p;
    sws_ck.bytes += n;
    sws_ck.used[i] = ++sws_ck.clock;
}

#else   /* AddressSanitizer: every block straight to malloc() and free() */

static void *
sws_ck_malloc(size_t size)
{
    return malloc(size);
}

static void
sws_ck_free(void *p)
{
    free(p);
}

#endif


void *
sws_alloc_cache_crypto_malloc(size_t size, const char *file, int line)
{
    (void) file;
    (void) line;
    return sws_ck_malloc(size);
}


/* Every block is malloc()'s own, kept or not: realloc() takes any. */
void *
sws_alloc_cache_crypto_realloc(void *p, size_t size, const char *file, int line)
{
    (void) file;
    (void) line;
    if (p == NULL) {
        return sws_ck_malloc(size);
    }
    return realloc(p, size);
}


void
sws_alloc_cache_crypto_free(void *p, const char *file, int line)
{
    (void) file;
    (void) line;
    sws_ck_free(p);
}
