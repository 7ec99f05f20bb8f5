/*
 * A heap of its own for blocks that come and go together (the HPACK
 * tables of HTTP/2 connections: sws_hpack_mem.c), so that freeing them
 * gives whole pages back instead of leaving holes between other blocks.
 *
 * An HTTP/2 connection idle for a second gives its HPACK tables back. In
 * malloc()'s heap they lay between blocks that stay (the connection's TLS
 * state, the next connections'), so thousands of connections going idle
 * left thousands of holes of a kilobyte or two that nothing filled and
 * malloc_trim() could not return (bench/idle: about 0.17 KiB per idle
 * HTTP/2 connection). Here blocks of one size lie packed in 64 KiB spans
 * of one address range reserved for the heap; a span whose last block is
 * freed goes back to the kernel (madvise), except one kept for the next
 * allocation, so that a connection alternating between one table and none
 * makes no system call.
 *
 * Sizes 1..SWS_SMALL_HEAP_MAX in steps of 16, 16-byte aligned. Blocks have
 * no header: the span of a block is its address rounded down. One thread
 * (a worker's): no lock. When the range is full, or could not be reserved,
 * sws_small_heap_alloc() returns NULL and the caller uses malloc().
 *
 * Core-private (not part of the module SDK).
 */
#ifndef SWS_SMALL_HEAP_H
#define SWS_SMALL_HEAP_H

#include <stddef.h>
#include <stdint.h>

#define SWS_SMALL_HEAP_MAX      4096
#define SWS_SMALL_HEAP_SPAN     65536
#define SWS_SMALL_HEAP_CLASSES  (SWS_SMALL_HEAP_MAX / 16)

typedef struct sws_small_span_s  sws_small_span_t;

/* Zero-initialised (static storage) is a heap ready for its first block;
 * the address range is reserved then. range: its size in bytes (0: the
 * default, 1 GiB), set before the first block. */
typedef struct {
    size_t             range;
    char              *base;        /* the first span */
    char              *top;         /* spans carved below this */
    char              *end;
    sws_small_span_t  *room[SWS_SMALL_HEAP_CLASSES];  /* spans with a free block */
    sws_small_span_t  *spare;       /* an empty span kept resident */
    uint32_t          *released;    /* numbers of the empty spans given back
                                     * (outside them: they read as zeros) */
    int                state;       /* 0: not yet, 1: ready, -1: no range */
    /* counts, for tests and the curious */
    size_t             spans;       /* holding blocks */
    size_t             nreleased;
    size_t             blocks;
} sws_small_heap_t;

/* A block of at least size bytes, or NULL (too large, or no room). */
void   *sws_small_heap_alloc(sws_small_heap_t *h, size_t size);
/* p: a block of h (sws_small_heap_owns). */
void    sws_small_heap_free(sws_small_heap_t *h, void *p);
/* 1 if p is a block of h, 0 if not (malloc()'s, say): inline, as every
 * free of a caller that mixes this heap with another asks it. */
static inline int
sws_small_heap_owns(const sws_small_heap_t *h, const void *p)
{
    return (const char *) p >= h->base && (const char *) p < h->top;
}
/* The size of block p (its class: >= what was asked). */
size_t  sws_small_heap_usable(const void *p);

#endif
