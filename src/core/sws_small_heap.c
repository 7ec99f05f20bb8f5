/*
 * A heap of its own for blocks that come and go together (see
 * sws_small_heap.h).
 *
 * The range is reserved at the first allocation (PROT_NONE: no memory and
 * no commit charge until a span is made writable). It starts with the
 * stack of the numbers of released spans, then spans, carved in order. A
 * span's header says the size of its blocks; blocks are handed out from a
 * bump offset first (pages not reached yet are not touched), then from the
 * span's list of freed blocks. Spans with a free block are on their size's
 * list; a span whose last block is freed becomes the spare, and the spare
 * it replaces is released (madvise: zero pages from then on, its header
 * too, which is why the stack is kept outside the spans).
 */
#include <sys/mman.h>
#include "sws_small_heap.h"

#define SWS_SMALL_RANGE  ((size_t) 1 << 30)
#define SWS_SMALL_HEAD   64                 /* the span's header; blocks 16-aligned */

struct sws_small_span_s {
    sws_small_span_t  *next;        /* on its size's list */
    sws_small_span_t  *prev;
    void              *free;        /* freed blocks, linked by their first word */
    uint32_t           size;        /* of its blocks */
    uint32_t           bump;        /* offset of the first block never handed out */
    uint32_t           live;        /* handed out and not freed */
    uint32_t           listed;      /* on its size's list: it has room */
};


static int
sws_small_reserve(sws_small_heap_t *h)
{
    size_t  range = h->range ? h->range : SWS_SMALL_RANGE;
    size_t  meta;
    char   *r;

    range &= ~(size_t) (SWS_SMALL_HEAP_SPAN - 1);
    meta = (range / SWS_SMALL_HEAP_SPAN * sizeof(uint32_t) + SWS_SMALL_HEAP_SPAN - 1)
           & ~(size_t) (SWS_SMALL_HEAP_SPAN - 1);
    if (range <= meta) {
        return -1;
    }
    r = mmap(NULL, range + SWS_SMALL_HEAP_SPAN, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        return -1;
    }
    r = (char *) (((uintptr_t) r + SWS_SMALL_HEAP_SPAN - 1)
                  & ~(uintptr_t) (SWS_SMALL_HEAP_SPAN - 1));
    if (mprotect(r, meta, PROT_READ | PROT_WRITE) != 0) {
        return -1;
    }
    h->released = (uint32_t *) r;
    h->base = r + meta;
    h->top = h->base;
    h->end = r + range;
    return 1;
}

static void
sws_small_unlink(sws_small_heap_t *h, unsigned c, sws_small_span_t *s)
{
    if (s->prev) {
        s->prev->next = s->next;
    } else {
        h->room[c] = s->next;
    }
    if (s->next) {
        s->next->prev = s->prev;
    }
    s->listed = 0;
}

static void
sws_small_link(sws_small_heap_t *h, unsigned c, sws_small_span_t *s)
{
    s->prev = NULL;
    s->next = h->room[c];
    if (s->next) {
        s->next->prev = s;
    }
    h->room[c] = s;
    s->listed = 1;
}

/* A span for blocks of class c, on its list; NULL if there is no room. */
static sws_small_span_t *
sws_small_span(sws_small_heap_t *h, unsigned c)
{
    sws_small_span_t  *s;

    if (h->spare) {
        s = h->spare;
        h->spare = NULL;
    } else if (h->nreleased) {
        s = (sws_small_span_t *) (h->base + (size_t) h->released[--h->nreleased]
                                            * SWS_SMALL_HEAP_SPAN);
    } else {
        if (h->top >= h->end
            || mprotect(h->top, SWS_SMALL_HEAP_SPAN, PROT_READ | PROT_WRITE) != 0)
        {
            return NULL;
        }
        s = (sws_small_span_t *) h->top;
        h->top += SWS_SMALL_HEAP_SPAN;
    }
    s->free = NULL;
    s->size = (c + 1) * 16;
    s->bump = SWS_SMALL_HEAD;
    s->live = 0;
    sws_small_link(h, c, s);
    h->spans++;
    return s;
}


void *
sws_small_heap_alloc(sws_small_heap_t *h, size_t size)
{
    sws_small_span_t  *s;
    unsigned           c;
    void              *p;

    if (size == 0 || size > SWS_SMALL_HEAP_MAX) {
        return NULL;
    }
    if (h->state == 0) {
        h->state = sws_small_reserve(h);
    }
    c = (unsigned) ((size + 15) >> 4) - 1;
    s = h->room[c];
    if (s == NULL && (h->state < 0 || (s = sws_small_span(h, c)) == NULL)) {
        return NULL;
    }
    if (s->free) {
        p = s->free;
        s->free = *(void **) p;
    } else {
        p = (char *) s + s->bump;
        s->bump += s->size;
    }
    s->live++;
    h->blocks++;
    if (s->free == NULL && s->bump + s->size > SWS_SMALL_HEAP_SPAN) {
        sws_small_unlink(h, c, s);           /* full */
    }
    return p;
}


void
sws_small_heap_free(sws_small_heap_t *h, void *p)
{
    sws_small_span_t  *s, *old;
    unsigned           c;

    s = (sws_small_span_t *) ((uintptr_t) p & ~(uintptr_t) (SWS_SMALL_HEAP_SPAN - 1));
    c = s->size / 16 - 1;
    *(void **) p = s->free;
    s->free = p;
    s->live--;
    h->blocks--;
    if (s->live > 0) {
        if (!s->listed) {
            sws_small_link(h, c, s);
        }
        return;
    }
    if (s->listed) {
        sws_small_unlink(h, c, s);
    }
    h->spans--;
    old = h->spare;
    h->spare = s;
    if (old != NULL) {
        (void) madvise(old, SWS_SMALL_HEAP_SPAN, MADV_DONTNEED);
        h->released[h->nreleased++] =
            (uint32_t) (((char *) old - h->base) / SWS_SMALL_HEAP_SPAN);
    }
}


size_t
sws_small_heap_usable(const void *p)
{
    const sws_small_span_t *s;

    s = (const sws_small_span_t *) ((uintptr_t) p & ~(uintptr_t) (SWS_SMALL_HEAP_SPAN - 1));
    return s->size;
}
