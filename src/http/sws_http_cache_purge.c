/*
 * Response caches by name, for whoever wants to purge them: the module
 * that keeps responses registers each cache with its purge function, and
 * another module (an admin API) calls sws_http_cache_purge() without
 * knowing that module; the same for its figures (sws_http_cache_stats). The list belongs to one configuration (the http
 * core's main conf), so a reload brings its own.
 */
#include "sws_http_core.h"

typedef struct {
    sws_str_t                 name;
    sws_http_cache_purge_pt   purge;      /* NULL: none registered */
    void                     *data;
    sws_http_cache_stats_pt   stats;      /* NULL: none registered */
    void                     *stats_data;
} sws_http_cache_entry_t;

/* The entry of cache, made if need be; NULL: no memory. */
static sws_http_cache_entry_t *
sws_http_cache_entry(sws_conf_t *cf, const sws_str_t *cache)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_cache_entry_t    *e;
    sws_uint_t                 i;

    if (cmcf == NULL) {
        return NULL;
    }
    if (cmcf->caches == NULL) {
        cmcf->caches = sws_array_create(cf->pool, 2, sizeof(sws_http_cache_entry_t));
        if (cmcf->caches == NULL) {
            return NULL;
        }
    }
    e = cmcf->caches->elts;
    for (i = 0; i < cmcf->caches->nelts; i++) {
        if (sws_str_eq(&e[i].name, cache)) {
            return &e[i];
        }
    }
    e = sws_array_push(cmcf->caches);
    if (e == NULL) {
        return NULL;
    }
    sws_memzero(e, sizeof(*e));
    e->name = *cache;
    return e;
}

sws_int_t
sws_http_cache_purge_register(sws_conf_t *cf, const sws_str_t *cache,
    sws_http_cache_purge_pt purge, void *data)
{
    sws_http_cache_entry_t  *e = sws_http_cache_entry(cf, cache);

    if (e == NULL) {
        return SWS_ERROR;
    }
    e->purge = purge;
    e->data = data;
    return SWS_OK;
}

sws_int_t
sws_http_cache_stats_register(sws_conf_t *cf, const sws_str_t *cache,
    sws_http_cache_stats_pt stats, void *data)
{
    sws_http_cache_entry_t  *e = sws_http_cache_entry(cf, cache);

    if (e == NULL) {
        return SWS_ERROR;
    }
    e->stats = stats;
    e->stats_data = data;
    return SWS_OK;
}

sws_int_t
sws_http_cache_stats(sws_http_request_t *r, sws_uint_t i, sws_http_cache_stats_t *st)
{
    sws_http_core_main_conf_t *cmcf = sws_http_core_main(r);
    sws_http_cache_entry_t    *e;
    sws_http_cache_stats_t     out;
    sws_uint_t                 k;
    size_t                     size = st->size;

    if (size < offsetof(sws_http_cache_stats_t, reserved)) {
        return SWS_ERROR;
    }
    for (k = 0; cmcf->caches && k < cmcf->caches->nelts; k++) {
        e = (sws_http_cache_entry_t *) cmcf->caches->elts + k;
        if (e->stats == NULL || i-- > 0) {
            continue;
        }
        sws_memzero(&out, sizeof(out));
        e->stats(e->stats_data, &out);
        out.size = sws_min(size, sizeof(out));
        out.name = e->name;
        memcpy(st, &out, out.size);
        return SWS_OK;
    }
    return SWS_DECLINED;
}

sws_int_t
sws_http_cache_purge(sws_http_request_t *r, const sws_str_t *cache, const sws_str_t *key,
    sws_uint_t *removed)
{
    sws_http_core_main_conf_t *cmcf = sws_http_core_main(r);
    sws_http_cache_entry_t    *e;
    sws_uint_t                 i;

    *removed = 0;
    if (cmcf->caches == NULL) {
        return SWS_DECLINED;
    }
    e = cmcf->caches->elts;
    for (i = 0; i < cmcf->caches->nelts; i++) {
        if (sws_str_eq(&e[i].name, cache) && e[i].purge) {
            return e[i].purge(e[i].data, key, removed);
        }
    }
    return SWS_DECLINED;
}
