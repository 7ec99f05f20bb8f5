/*
 * Where HPACK tables live: the encoder's (sws_hpack_encoder.c) and
 * our decoder's (sws_hpack_decoder.c). A heap of
 * their own (sws_small_heap.c) per thread: an HTTP/2 connection idle for a
 * second gives its tables back, and in malloc()'s heap that left a hole
 * between blocks that stay; here it gives pages back (bench/idle: about
 * 0.17 KiB less per idle HTTP/2 connection over TLS). Small blocks (a
 * literal field's bytes in the decoder), blocks above SWS_SMALL_HEAP_MAX,
 * and all when the heap is full come from the allocation cache
 * (sws_alloc_cache.h).
 *
 * Built with AddressSanitizer, every block is malloc()'s, so ASan sees it.
 *
 * Core-private (not part of the module SDK).
 */
#ifndef SWS_HPACK_MEM_H
#define SWS_HPACK_MEM_H

#include <stddef.h>

void *sws_hpack_mem_malloc(size_t size, void *user);
void *sws_hpack_mem_calloc(size_t nmemb, size_t size, void *user);
void *sws_hpack_mem_realloc(void *p, size_t size, void *user);
void  sws_hpack_mem_free(void *p, void *user);

#endif
