/*
 * Response caches by name, for whoever wants to purge them: the module
 * that keeps responses registers each cache with its purge function, and
 * another module (an admin API) calls sws_http_cache_purge() without
 * knowing that module. The list belongs to one configuration (the http
 * core's main conf), so a reload brings its own.
 */
#include "sws_http_core.h"

typedef struct {
    sws_str_t                 name;
    sws_http_cache_purge_pt   purge;
    void                     *data;
} sws_http_cache_entry_t;

sws_int_t
sws_http_cache_purge_register(sws_conf_t *cf, const sws_str_t *cache,
    sws_http_cache_purge_pt purge, void *data)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_cache_entry_t    *e;

    if (cmcf == NULL) {
        return SWS_ERROR;
    }
    if (cmcf->caches == NULL) {
        cmcf->caches = sws_array_create(cf->pool, 2, sizeof(sws_http_cache_entry_t));
        if (cmcf->caches == NULL) {
            return SWS_ERROR;
        }
    }
    e = sws_array_push(cmcf->caches);
    if (e == NULL) {
        return SWS_ERROR;
    }
    e->name = *cache;
    e->purge = purge;
    e->data = data;
    return SWS_OK;
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
        if (sws_str_eq(&e[i].name, cache)) {
            return e[i].purge(e[i].data, key, removed);
        }
    }
    return SWS_DECLINED;
}
