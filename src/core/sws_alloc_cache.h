/*
 * A per-thread caching allocator for the libraries that allocate and free
 * the same sizes on every request: OpenSSL (its ~17 KiB record buffers,
 * released while a connection is idle) and nghttp2 (streams, frames).
 *
 * Blocks up to SWS_ALLOC_CACHE_MAX bytes are rounded up to a size class
 * (16-byte steps up to 64, then four classes per power of two); a freed
 * block goes on its thread's list for the class, up to a cap, and the next
 * allocation of the class takes it back. Beyond the cap and above the
 * largest class, blocks go to malloc()/free(). Every block returned is
 * 16-byte aligned; a block must be freed with sws_alloc_cache_free(), from
 * any thread.
 *
 * Built with AddressSanitizer, every call goes straight to malloc(),
 * calloc(), realloc() and free(), so ASan sees each block.
 *
 * Core-private (not part of the module SDK).
 */
#ifndef SWS_ALLOC_CACHE_H
#define SWS_ALLOC_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SWS_ALLOC_CACHE_MAX         32768    /* the largest class */
#define SWS_ALLOC_CACHE_SMALL_MAX   1024     /* classes up to this are "small" */
/* Per thread: at most this many blocks cached in each small class, and
 * this many bytes in all the larger classes together. */
#define SWS_ALLOC_CACHE_SMALL_CAP   16
#define SWS_ALLOC_CACHE_LARGE_CAP   (256 * 1024)

typedef struct {
    size_t    cached_blocks;     /* on this thread's free lists */
    size_t    cached_bytes;      /* their class sizes */
    uint64_t  sys_allocs;        /* blocks this thread took from malloc() */
    uint64_t  sys_frees;         /* blocks this thread gave back to free() */
} sws_alloc_cache_stats_t;

/* As malloc(), calloc(), realloc() and free(), with these differences:
 * malloc(0) returns a (unique) block; realloc(p, 0) frees p and returns
 * NULL; sizes above PTRDIFF_MAX and calloc() products that overflow fail
 * with ENOMEM. A failed realloc() leaves p as it was. */
void *sws_alloc_cache_malloc(size_t size);
void *sws_alloc_cache_calloc(size_t nmemb, size_t size);
void *sws_alloc_cache_realloc(void *p, size_t size);
void  sws_alloc_cache_free(void *p);

/* OpenSSL's allocator, for CRYPTO_set_mem_functions() (it must be installed
 * before OpenSSL allocates anything): sws_alloc_cache_crypto.c. Not the
 * cache above: OpenSSL keeps a hundred small blocks per connection for the
 * connection's life, and the cache's header and size classes cost an idle
 * TLS connection 1.8 KiB. Every block is plain malloc(); only the large
 * ones that come and go with each request (the record buffers, released
 * while a connection is idle) are kept per thread for the next one. */
void *sws_alloc_cache_crypto_malloc(size_t size, const char *file, int line);
void *sws_alloc_cache_crypto_realloc(void *p, size_t size, const char *file, int line);
void  sws_alloc_cache_crypto_free(void *p, const char *file, int line);

/* The same with a user-data argument, for nghttp2_mem (ngtcp2_mem and
 * nghttp3_mem have the same members). */
void *sws_alloc_cache_mem_malloc(size_t size, void *user);
void *sws_alloc_cache_mem_calloc(size_t nmemb, size_t size, void *user);
void *sws_alloc_cache_mem_realloc(void *p, size_t size, void *user);
void  sws_alloc_cache_mem_free(void *p, void *user);

/* Give every block cached by the calling thread back to free(). */
void  sws_alloc_cache_flush(void);
/* The calling thread's counts; all zero when passing through. */
void  sws_alloc_cache_stats(sws_alloc_cache_stats_t *st);
/* 1 if blocks are cached, 0 if every call passes through (ASan). */
int   sws_alloc_cache_active(void);

#endif
