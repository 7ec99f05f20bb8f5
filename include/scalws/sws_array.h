/* Growable arrays (pool-backed) and lists of fixed-size parts. */
#ifndef SWS_ARRAY_H
#define SWS_ARRAY_H

#include <scalws/sws_types.h>

typedef struct {
    void        *elts;
    sws_uint_t   nelts;
    size_t       size;
    sws_uint_t   nalloc;
    sws_pool_t  *pool;
} sws_array_t;

sws_array_t *sws_array_create(sws_pool_t *p, sws_uint_t n, size_t size);
sws_int_t    sws_array_init(sws_array_t *a, sws_pool_t *p, sws_uint_t n, size_t size);
/* Returns a pointer to a new (uninitialised) element; NULL on failure. */
void        *sws_array_push(sws_array_t *a);
void        *sws_array_push_n(sws_array_t *a, sws_uint_t n);

/* A list never moves its elements (unlike an array): safe to keep pointers. */
typedef struct sws_list_part_s sws_list_part_t;
struct sws_list_part_s {
    void            *elts;
    sws_uint_t       nelts;
    sws_list_part_t *next;
};

typedef struct {
    sws_list_part_t *last;
    sws_list_part_t  part;
    size_t           size;
    sws_uint_t       nalloc;
    sws_pool_t      *pool;
} sws_list_t;

sws_int_t sws_list_init(sws_list_t *list, sws_pool_t *pool, sws_uint_t n, size_t size);
void     *sws_list_push(sws_list_t *list);

#endif
