/*
 * The slab allocator of shared memory zones (see sws_slab.h).
 *
 * Layout of a zone: the pool header, one descriptor per page, then the
 * pages. A descriptor says what its page is:
 *
 *   FREE        first page of a run of free pages (run: its length), in
 *               the pool's list of free runs
 *   FREE_TAIL   last page of a free run of two or more (run: the distance
 *               back to the first), so that a run freed just after it
 *               finds it and merges
 *   SMALL       a page of chunks of one class; its free chunks form a
 *               list inside the chunks (each starts with the offset of the
 *               next); in its class's list while it has free chunks
 *   RUN         first page of an allocation of whole pages (run: pages)
 *   RUN_TAIL    last page of such an allocation of two pages or more
 *
 * Only first and last pages are kept accurate: the pages inside a run are
 * never looked at, except by a bad free, and a page stops being SMALL or
 * RUN when it is freed, so such a free finds nothing. Allocating pages is first fit over the free runs; a
 * zone holds at most some thousands of runs, and a page-sized allocation
 * is rarer than chunks by far.
 */
#include "sws_conf_internal.h"
#include "sws_shm_internal.h"
#include <scalws/sws_slab.h>

#define SWS_SLAB_MAGIC       0x534c4142u     /* "SLAB" */
#define SWS_SLAB_MIN_SHIFT   3               /* chunks of 8 bytes and up */
#define SWS_SLAB_PAGE_SHIFT  12              /* 4 KiB pages ... */
#define SWS_SLAB_PAGE_MIN    9               /* ... or down to 512 in small zones */
#define SWS_SLAB_MIN_PAGES   16
#define SWS_SLAB_CLASSES     (SWS_SLAB_PAGE_SHIFT - SWS_SLAB_MIN_SHIFT)
#define SWS_SLAB_NONE        0xffff          /* end of a page's free chunks */

enum {
    SWS_SLAB_FREE = 1,
    SWS_SLAB_FREE_TAIL,
    SWS_SLAB_SMALL,
    SWS_SLAB_RUN,
    SWS_SLAB_RUN_TAIL
};

typedef struct sws_slab_page_s sws_slab_page_t;
struct sws_slab_page_s {
    sws_slab_page_t  *next;
    sws_slab_page_t  *prev;
    uint32_t          run;
    uint8_t           type;
    uint8_t           cls;
    uint16_t          nfree;      /* SMALL: free chunks */
    uint16_t          free;       /* SMALL: offset of the first, or NONE */
};

typedef struct {
    sws_slab_page_t   partial;    /* sentinel: its pages with free chunks */
    sws_slab_page_t  *empty;      /* one of them with all chunks free, kept */
    uint64_t          pages;
    uint64_t          used;
    uint64_t          requests;
    uint64_t          failures;
} sws_slab_class_t;

struct sws_slab_pool_s {
    uint32_t          magic;
    uint32_t          page_shift;
    size_t            zone_size;
    void             *mutex;      /* the zone's */
    void             *data;       /* the owner's */
    u_char           *start;      /* the first page */
    sws_slab_page_t  *pages;      /* their descriptors */
    size_t            npages;
    size_t            nfree;
    sws_slab_page_t   free;       /* sentinel: the free runs */
    uint32_t          nclasses;   /* small ones: up to half a page */
    sws_slab_class_t  cls[SWS_SLAB_CLASSES];
    sws_slab_class_t  runs;       /* pages: pages in runs; used: runs */
};

sws_slab_pool_t *
sws_slab_of_zone(sws_shm_zone_t *zone)
{
    sws_slab_pool_t *pool = (sws_slab_pool_t *) zone->addr;

    if (zone->data != pool || zone->size < sizeof(sws_slab_pool_t)
        || pool->magic != SWS_SLAB_MAGIC || pool->zone_size != zone->size)
    {
        return NULL;
    }
    return pool;
}

/* ---- lists of pages ---- */

static void
sws_slab_list_init(sws_slab_page_t *head)
{
    head->next = head->prev = head;
}

static void
sws_slab_list_insert(sws_slab_page_t *head, sws_slab_page_t *p)
{
    p->next = head->next;
    p->prev = head;
    head->next->prev = p;
    head->next = p;
}

static void
sws_slab_list_remove(sws_slab_page_t *p)
{
    p->prev->next = p->next;
    p->next->prev = p->prev;
    p->next = p->prev = NULL;
}

static u_char *
sws_slab_page_addr(sws_slab_pool_t *pool, sws_slab_page_t *p)
{
    return pool->start + ((size_t) (p - pool->pages) << pool->page_shift);
}

/* ---- the pool ---- */

sws_slab_pool_t *
sws_slab_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_slab_pool_t  *pool = (sws_slab_pool_t *) zone->addr;
    size_t            head, page, n;
    uint32_t          shift, i;
    u_char           *end = zone->addr + zone->size;

    if (old_data == pool && pool->magic == SWS_SLAB_MAGIC && pool->zone_size == zone->size) {
        zone->data = pool;           /* a reload kept the memory: keep all */
        return pool;
    }

    head = sws_align(sizeof(sws_slab_pool_t), 64);
    if (zone->size < head) {
        return NULL;
    }
    /* Small zones get smaller pages rather than too few of them. */
    for (shift = SWS_SLAB_PAGE_SHIFT;
         shift > SWS_SLAB_PAGE_MIN && zone->size < ((size_t) SWS_SLAB_MIN_PAGES << shift);
         shift--)
    {
        /* void */
    }
    page = (size_t) 1 << shift;
    n = (zone->size - head) / (page + sizeof(sws_slab_page_t));
    while (n > 0 && zone->addr + sws_align(head + n * sizeof(sws_slab_page_t), 64)
                    + n * page > end)
    {
        n--;
    }
    if (n < 2) {
        return NULL;
    }

    sws_memzero(pool, head + n * sizeof(sws_slab_page_t));
    pool->page_shift = shift;
    pool->zone_size = zone->size;
    pool->mutex = sws_shm_zone_mutex(zone);
    pool->pages = (sws_slab_page_t *) (zone->addr + head);
    pool->start = zone->addr + sws_align(head + n * sizeof(sws_slab_page_t), 64);
    pool->npages = n;
    pool->nfree = n;
    pool->nclasses = shift - SWS_SLAB_MIN_SHIFT;
    for (i = 0; i < SWS_SLAB_CLASSES; i++) {
        sws_slab_list_init(&pool->cls[i].partial);
    }
    sws_slab_list_init(&pool->runs.partial);
    sws_slab_list_init(&pool->free);
    pool->pages[0].type = SWS_SLAB_FREE;
    pool->pages[0].run = (uint32_t) n;
    pool->pages[n - 1].type = SWS_SLAB_FREE_TAIL;
    pool->pages[n - 1].run = (uint32_t) (n - 1);
    sws_slab_list_insert(&pool->free, &pool->pages[0]);
    pool->magic = SWS_SLAB_MAGIC;
    zone->data = pool;
    return pool;
}

void *
sws_slab_data(sws_slab_pool_t *pool)
{
    return pool->data;
}

void
sws_slab_set_data(sws_slab_pool_t *pool, void *data)
{
    pool->data = data;
}

void
sws_slab_lock(sws_slab_pool_t *pool)
{
    sws_shm_mutex_lock(pool->mutex);
}

void
sws_slab_unlock(sws_slab_pool_t *pool)
{
    sws_shm_mutex_unlock(pool->mutex);
}

/* ---- pages ---- */

/* Make p .. p + n - 1 one free run, in the list. */
static void
sws_slab_free_run(sws_slab_pool_t *pool, sws_slab_page_t *p, size_t n)
{
    p->type = SWS_SLAB_FREE;
    p->run = (uint32_t) n;
    if (n > 1) {
        p[n - 1].type = SWS_SLAB_FREE_TAIL;
        p[n - 1].run = (uint32_t) (n - 1);
    }
    sws_slab_list_insert(&pool->free, p);
}

static void sws_slab_pages_free(sws_slab_pool_t *pool, sws_slab_page_t *p, size_t n);

/* The empty pages the classes keep go back when pages run out. */
static sws_uint_t
sws_slab_release_empty(sws_slab_pool_t *pool)
{
    sws_slab_class_t *c;
    sws_uint_t        i, n = 0;

    for (i = 0; i < pool->nclasses; i++) {
        c = &pool->cls[i];
        if (c->empty) {
            sws_slab_list_remove(c->empty);
            sws_slab_pages_free(pool, c->empty, 1);
            c->empty = NULL;
            c->pages--;
            n++;
        }
    }
    return n;
}

static sws_slab_page_t *
sws_slab_pages_alloc(sws_slab_pool_t *pool, size_t n)
{
    sws_slab_page_t *p;
    size_t           have;
    int              again = 1;

retry:
    for (p = pool->free.next; p != &pool->free; p = p->next) {
        if (p->run < n) {
            continue;
        }
        have = p->run;
        sws_slab_list_remove(p);
        if (have > n) {
            sws_slab_free_run(pool, p + n, have - n);
        }
        p->run = (uint32_t) n;
        if (n > 1) {
            p[n - 1].type = SWS_SLAB_RUN_TAIL;
            p[n - 1].run = (uint32_t) (n - 1);
        }
        pool->nfree -= n;
        return p;                 /* the caller sets its type */
    }
    if (again-- && sws_slab_release_empty(pool)) {
        goto retry;
    }
    return NULL;
}

static void
sws_slab_pages_free(sws_slab_pool_t *pool, sws_slab_page_t *p, size_t n)
{
    sws_slab_page_t *q;

    /* No longer a head: a second free of it, or of a chunk in it, finds
     * nothing to free even once it is inside a bigger free run. */
    p->type = 0;
    pool->nfree += n;
    if (p + n < pool->pages + pool->npages && p[n].type == SWS_SLAB_FREE) {
        q = p + n;                /* the run after */
        sws_slab_list_remove(q);
        n += q->run;
    }
    if (p > pool->pages) {
        q = p - 1;                /* the run before: its last page */
        if (q->type == SWS_SLAB_FREE_TAIL) {
            q -= q->run;
        }
        if (q->type == SWS_SLAB_FREE) {
            sws_slab_list_remove(q);
            n += q->run;
            p = q;
        }
    }
    sws_slab_free_run(pool, p, n);
}

/* ---- allocation ---- */

void *
sws_slab_alloc_locked(sws_slab_pool_t *pool, size_t size)
{
    sws_slab_class_t *c;
    sws_slab_page_t  *p;
    u_char           *addr;
    size_t            chunk = (size_t) 1 << SWS_SLAB_MIN_SHIFT, n, k;
    uint32_t          i = 0;

    while (chunk < size && i < pool->nclasses) {
        chunk <<= 1;
        i++;
    }

    if (i == pool->nclasses) {
        /* Whole pages; a size past the zone cannot fit (nor overflow). */
        c = &pool->runs;
        c->requests++;
        n = size >> pool->page_shift;      /* no overflow: size + page - 1 could */
        n += (size & (((size_t) 1 << pool->page_shift) - 1)) != 0;
        if (n > pool->npages || (p = sws_slab_pages_alloc(pool, n)) == NULL) {
            c->failures++;
            return NULL;
        }
        p->type = SWS_SLAB_RUN;
        c->pages += p->run;
        c->used++;
        return sws_slab_page_addr(pool, p);
    }

    c = &pool->cls[i];
    c->requests++;
    p = c->partial.next;
    if (p == &c->partial) {
        p = sws_slab_pages_alloc(pool, 1);
        if (p == NULL) {
            c->failures++;
            return NULL;
        }
        p->type = SWS_SLAB_SMALL;
        p->cls = (uint8_t) i;
        n = ((size_t) 1 << pool->page_shift) / chunk;
        addr = sws_slab_page_addr(pool, p);
        for (k = 0; k < n; k++) {
            *(uint16_t *) (addr + k * chunk) = (uint16_t) (k + 1 < n ? (k + 1) * chunk
                                                                     : SWS_SLAB_NONE);
        }
        p->free = 0;
        p->nfree = (uint16_t) n;
        sws_slab_list_insert(&c->partial, p);
        c->pages++;
    }
    if (p == c->empty) {
        c->empty = NULL;
    }
    addr = sws_slab_page_addr(pool, p) + p->free;
    p->free = *(uint16_t *) addr;
    if (--p->nfree == 0) {
        sws_slab_list_remove(p);  /* full */
    }
    c->used++;
    return addr;
}

void *
sws_slab_calloc_locked(sws_slab_pool_t *pool, size_t size)
{
    void *p = sws_slab_alloc_locked(pool, size);

    if (p) {
        sws_memzero(p, size);
    }
    return p;
}

void *
sws_slab_alloc(sws_slab_pool_t *pool, size_t size)
{
    void *p;

    sws_slab_lock(pool);
    p = sws_slab_alloc_locked(pool, size);
    sws_slab_unlock(pool);
    return p;
}

void *
sws_slab_calloc(sws_slab_pool_t *pool, size_t size)
{
    void *p;

    sws_slab_lock(pool);
    p = sws_slab_calloc_locked(pool, size);
    sws_slab_unlock(pool);
    return p;
}

void
sws_slab_free_locked(sws_slab_pool_t *pool, void *ptr)
{
    u_char           *addr = ptr;
    sws_slab_page_t  *p;
    sws_slab_class_t *c;
    size_t            off, chunk, n;

    if (addr == NULL || addr < pool->start
        || addr >= pool->start + (pool->npages << pool->page_shift))
    {
        return;                   /* not ours */
    }
    p = &pool->pages[(size_t) (addr - pool->start) >> pool->page_shift];
    off = (size_t) (addr - pool->start) & (((size_t) 1 << pool->page_shift) - 1);

    if (p->type == SWS_SLAB_RUN && off == 0) {
        pool->runs.pages -= p->run;
        pool->runs.used--;
        sws_slab_pages_free(pool, p, p->run);
        return;
    }
    if (p->type != SWS_SLAB_SMALL) {
        return;                   /* inside a run, or free already */
    }
    c = &pool->cls[p->cls];
    chunk = (size_t) 1 << (p->cls + SWS_SLAB_MIN_SHIFT);
    n = ((size_t) 1 << pool->page_shift) / chunk;
    if ((off & (chunk - 1)) != 0 || p->nfree >= n) {
        return;                   /* not a chunk's start, or a page with none in use */
    }
    *(uint16_t *) addr = p->free;
    p->free = (uint16_t) off;
    if (p->nfree++ == 0) {
        sws_slab_list_insert(&c->partial, p);
    }
    c->used--;
    if (p->nfree == n) {
        /* All free: one such page stays with the class, so that a chunk
         * taken and given back again and again does not rebuild a page
         * each time; the others go back, for any class or a run (and the
         * kept ones too when pages run out). */
        if (c->empty == NULL) {
            c->empty = p;
            return;
        }
        sws_slab_list_remove(p);
        c->pages--;
        sws_slab_pages_free(pool, p, 1);
    }
}

void
sws_slab_free(sws_slab_pool_t *pool, void *p)
{
    sws_slab_lock(pool);
    sws_slab_free_locked(pool, p);
    sws_slab_unlock(pool);
}

/* ---- statistics ---- */

sws_uint_t
sws_slab_nclasses(sws_slab_pool_t *pool)
{
    return pool->nclasses + 1;
}

sws_int_t
sws_slab_stat(sws_slab_pool_t *pool, sws_uint_t i, sws_slab_stat_t *st)
{
    sws_slab_class_t *c;

    if (i > pool->nclasses) {
        return SWS_ERROR;
    }
    sws_slab_lock(pool);
    c = i < pool->nclasses ? &pool->cls[i] : &pool->runs;
    st->size = i < pool->nclasses ? (size_t) 1 << (i + SWS_SLAB_MIN_SHIFT) : 0;
    st->pages = c->pages;
    st->used = c->used;
    st->total = st->size ? c->pages * (((size_t) 1 << pool->page_shift) / st->size) : c->pages;
    st->requests = c->requests;
    st->failures = c->failures;
    sws_slab_unlock(pool);
    return SWS_OK;
}

sws_int_t
sws_slab_stat_read(sws_slab_pool_t *pool, sws_uint_t i, sws_slab_stat_t *st)
{
    size_t  have = st->struct_size;

    if (have < offsetof(sws_slab_stat_t, struct_size) + sizeof(st->struct_size)) {
        return SWS_ERROR;
    }
    if (sws_slab_stat(pool, i, st) != SWS_OK) {
        return SWS_ERROR;
    }
    /* every field this core knows lies before reserved; a caller's larger
     * struct keeps its own zeroes beyond */
    st->struct_size = have < sizeof(*st) ? have : sizeof(*st);
    return SWS_OK;
}

void
sws_slab_pages(sws_slab_pool_t *pool, size_t *page_size, size_t *total, size_t *nfree)
{
    sws_uint_t i;

    sws_slab_lock(pool);
    *page_size = (size_t) 1 << pool->page_shift;
    *total = pool->npages;
    *nfree = pool->nfree;
    for (i = 0; i < pool->nclasses; i++) {
        *nfree += pool->cls[i].empty != NULL;     /* kept, but free for all */
    }
    sws_slab_unlock(pool);
}
