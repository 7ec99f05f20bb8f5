/*
 * Where HPACK tables live (see sws_hpack_mem.h). The signatures are
 * nghttp2_mem's (user is unused), so that nghttp2's decoder takes them as
 * they are.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sws_hpack_mem.h"
#include "sws_small_heap.h"

#if defined(__SANITIZE_ADDRESS__)
#define SWS_HPACK_MEM_PASS  1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWS_HPACK_MEM_PASS  1
#endif
#endif

#ifndef SWS_HPACK_MEM_PASS

static __thread sws_small_heap_t  sws_hpack_heap;

void *
sws_hpack_mem_malloc(size_t size, void *user)
{
    void  *p;

    (void) user;
    p = sws_small_heap_alloc(&sws_hpack_heap, size);
    return p != NULL ? p : malloc(size);
}

void
sws_hpack_mem_free(void *p, void *user)
{
    (void) user;
    if (sws_small_heap_owns(&sws_hpack_heap, p)) {
        sws_small_heap_free(&sws_hpack_heap, p);
    } else {
        free(p);
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
    if (!sws_small_heap_owns(&sws_hpack_heap, p)) {
        return realloc(p, size);
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
        sws_small_heap_free(&sws_hpack_heap, p);
    }
    return q;
}

#else   /* AddressSanitizer */

void *
sws_hpack_mem_malloc(size_t size, void *user)
{
    (void) user;
    return malloc(size);
}

void
sws_hpack_mem_free(void *p, void *user)
{
    (void) user;
    free(p);
}

void *
sws_hpack_mem_realloc(void *p, size_t size, void *user)
{
    (void) user;
    return realloc(p, size);
}

#endif

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
