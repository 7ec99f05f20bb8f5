/* Pool-backed growable arrays and lists of fixed-size parts. */
#include <string.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_array.h>
#include "sws_palloc_internal.h"


sws_int_t
sws_array_init(sws_array_t *a, sws_pool_t *p, sws_uint_t n, size_t size)
{
    a->nelts = 0;
    a->size = size;
    a->nalloc = n;
    a->pool = p;
    a->elts = NULL;

    if (n == 0) {
        return SWS_OK;
    }
    if (size && n > SIZE_MAX / size) {
        return SWS_ERROR;
    }
    a->elts = sws_palloc(p, n * size);
    return a->elts ? SWS_OK : SWS_ERROR;
}


sws_array_t *
sws_array_create(sws_pool_t *p, sws_uint_t n, size_t size)
{
    sws_array_t  *a = sws_palloc(p, sizeof(sws_array_t));

    if (a == NULL || sws_array_init(a, p, n, size) != SWS_OK) {
        return NULL;
    }
    return a;
}


/* Make room for at least n more elements: double (or more) the capacity, in
 * place when the array is the latest allocation of its pool block. */
static sws_int_t
sws_array_grow(sws_array_t *a, sws_uint_t n)
{
    sws_uint_t  nalloc = 2 * sws_max(n, a->nalloc);
    size_t      used = a->nelts * a->size;
    u_char     *end;
    void       *elts;

    if (nalloc < a->nalloc || (a->size && nalloc > SIZE_MAX / a->size)) {
        return SWS_ERROR;
    }

    if (a->elts) {
        end = (u_char *) a->elts + a->nalloc * a->size;
        if (sws_pool_grow_last(a->pool, end, (nalloc - a->nalloc) * a->size)) {
            a->nalloc = nalloc;
            return SWS_OK;
        }
    }

    elts = sws_palloc(a->pool, nalloc * a->size);
    if (elts == NULL) {
        return SWS_ERROR;
    }
    if (used) {
        memcpy(elts, a->elts, used);
    }
    if (a->elts) {
        /* Big arrays live in the pool's large list: give the old copy back
         * (a no-op for small ones). */
        sws_pfree(a->pool, a->elts);
    }
    a->elts = elts;
    a->nalloc = nalloc;
    return SWS_OK;
}


void *
sws_array_push(sws_array_t *a)
{
    if (sws_unlikely(a->nelts == a->nalloc) && sws_array_grow(a, 1) != SWS_OK) {
        return NULL;
    }
    return (u_char *) a->elts + a->size * a->nelts++;
}


void *
sws_array_push_n(sws_array_t *a, sws_uint_t n)
{
    void  *elt;

    if (n > a->nalloc - a->nelts && sws_array_grow(a, n) != SWS_OK) {
        return NULL;
    }
    elt = (u_char *) a->elts + a->size * a->nelts;
    a->nelts += n;
    return elt;
}


sws_int_t
sws_list_init(sws_list_t *list, sws_pool_t *pool, sws_uint_t n, size_t size)
{
    if (n == 0 || (size && n > SIZE_MAX / size)) {
        return SWS_ERROR;
    }
    list->part.elts = sws_palloc(pool, n * size);
    if (list->part.elts == NULL) {
        return SWS_ERROR;
    }
    list->part.nelts = 0;
    list->part.next = NULL;
    list->last = &list->part;
    list->size = size;
    list->nalloc = n;
    list->pool = pool;
    return SWS_OK;
}


void *
sws_list_push(sws_list_t *list)
{
    sws_list_part_t  *last = list->last;

    if (sws_unlikely(last->nelts == list->nalloc)) {
        last = sws_palloc(list->pool, sizeof(sws_list_part_t));
        if (last == NULL) {
            return NULL;
        }
        last->elts = sws_palloc(list->pool, list->nalloc * list->size);
        if (last->elts == NULL) {
            return NULL;
        }
        last->nelts = 0;
        last->next = NULL;
        list->last->next = last;
        list->last = last;
    }
    return (u_char *) last->elts + list->size * last->nelts++;
}
