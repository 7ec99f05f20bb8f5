/*
 * Where HPACK tables live (see sws_hpack_mem.h). The signatures are
 * nghttp2_mem's (user is unused), so that nghttp2's decoder takes them as
 * they are.
 *
 * Blocks below SWS_HPACK_MEM_MIN are the allocation cache's: nghttp2's
 * decoder takes and frees one for each literal field of a request, and the
 * cache's per-thread lists are the shorter path; the tables and the
 * decoder itself are larger. A block that is not the heap's is the cache's
 * (also when the heap is full).
 */
#include <stdint.h>
#include <string.h>
#include "sws_alloc_cache.h"
#include "sws_hpack_mem.h"
#include "sws_small_heap.h"

#define SWS_HPACK_MEM_MIN  192

#if defined(__SANITIZE_ADDRESS__)
#define SWS_HPACK_MEM_PASS  1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWS_HPACK_MEM_PASS  1
#endif
#endif

static __thread sws_small_heap_t  sws_hpack_heap;

#ifndef SWS_HPACK_MEM_PASS
#define sws_hpack_heap_alloc(size)                                            \
    ((size) >= SWS_HPACK_MEM_MIN ? sws_small_heap_alloc(&sws_hpack_heap, size) : NULL)
#define sws_hpack_heap_owns(p)  sws_small_heap_owns(&sws_hpack_heap, p)
#else   /* AddressSanitizer: every block malloc()'s (the cache passes through) */
#define sws_hpack_heap_alloc(size)  NULL
#define sws_hpack_heap_owns(p)  0
#endif


void *
sws_hpack_mem_malloc(size_t size, void *user)
{
    void  *p;

    (void) user;
    p = sws_hpack_heap_alloc(size);
    return p != NULL ? p : sws_alloc_cache_malloc(size);
}


void
sws_hpack_mem_free(void *p, void *user)
{
    (void) user;
    if (sws_hpack_heap_owns(p)) {
        sws_small_heap_free(&sws_hpack_heap, p);
    } else {
        sws_alloc_cache_free(p);
    }
}


void *
sws_hpack_mem_realloc(void *p, size_t size, void *user)
{
    size_t  n;
    void   *q;

    if (p == NULL) {
        return sws_hpack_mem_malloc(size, user);
    }
    if (!sws_hpack_heap_owns(p)) {
        return sws_alloc_cache_realloc(p, size);
    }
    if (size == 0) {
        sws_hpack_mem_free(p, user);
        return NULL;
    }
    n = sws_small_heap_usable(p);
    if (size <= n) {
        return p;
    }
    q = sws_hpack_mem_malloc(size, user);
    if (q != NULL) {
        memcpy(q, p, n);
        sws_hpack_mem_free(p, user);
    }
    return q;
}


void *
sws_hpack_mem_calloc(size_t nmemb, size_t size, void *user)
{
    void  *p;

    if (size != 0 && nmemb > SIZE_MAX / size) {
        return NULL;
    }
    p = sws_hpack_mem_malloc(nmemb * size, user);
    if (p != NULL) {
        memset(p, 0, nmemb * size);
    }
    return p;
}
