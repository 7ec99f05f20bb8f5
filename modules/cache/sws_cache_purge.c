/*
 * Purging (open-source nginx has none):
 *
 *   proxy_cache_purge ADDRESS[/BITS] ... | all;    (location)
 *
 * A PURGE request to such a location, from an allowed address, removes the
 * entry of the key the request would have (with its variants), or, when
 * the key ends with "*", every entry whose key starts with what comes
 * before it: 200 "purged N", 404 when nothing was there, 403 from
 * elsewhere. Each cache is also registered with the core
 * (sws_http_cache_purge_register), so that an admin module can purge by
 * name and key through sws_http_cache_purge() without knowing this one.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include "sws_cache.h"

typedef struct {
    int         family;          /* AF_INET, AF_INET6; 0: all */
    u_char      addr[16];
    sws_uint_t  bits;
} sws_cache_cidr_t;

char *
sws_cache_purge_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t *lcf = conf;
    sws_cache_cidr_t     *c;
    sws_str_t            *a;
    sws_uint_t            i, max;
    char                  text[64], *slash;
    sws_int_t             bits;

    lcf->prefix = cmd->post;
    if (lcf->purge_allow) {
        return "is duplicate";
    }
    lcf->purge_allow = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_cache_cidr_t));
    if (lcf->purge_allow == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        a = sws_conf_arg(cf, i);
        c = sws_array_push(lcf->purge_allow);
        if (c == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_memzero(c, sizeof(*c));
        if (sws_str_eq_cstr(a, "all")) {
            continue;
        }
        if (a->len >= sizeof(text)) {
            goto invalid;
        }
        memcpy(text, a->data, a->len);
        text[a->len] = '\0';
        slash = strchr(text, '/');
        if (slash) {
            *slash++ = '\0';
        }
        if (inet_pton(AF_INET, text, c->addr) == 1) {
            c->family = AF_INET;
            max = 32;
        } else if (inet_pton(AF_INET6, text, c->addr) == 1) {
            c->family = AF_INET6;
            max = 128;
        } else {
            goto invalid;
        }
        c->bits = max;
        if (slash) {
            bits = sws_atoi((u_char *) slash, strlen(slash));
            if (bits < 0 || (sws_uint_t) bits > max) {
                goto invalid;
            }
            c->bits = (sws_uint_t) bits;
        }
    }
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: invalid address \"%.*s\"", cmd->name,
                       (int) a->len, a->data);
    return SWS_CONF_ERROR;
}

static int
sws_cache_purge_allowed(sws_http_request_t *r, sws_array_t *allow)
{
    const sws_str_t   *ra = sws_http_remote_addr(r);
    sws_cache_cidr_t  *c = allow->elts;
    u_char             addr[16];
    char               text[64];
    int                family;
    sws_uint_t         i, full, rest;

    if (ra->len >= sizeof(text)) {
        return 0;
    }
    memcpy(text, ra->data, ra->len);
    text[ra->len] = '\0';
    if (inet_pton(AF_INET, text, addr) == 1) {
        family = AF_INET;
    } else if (inet_pton(AF_INET6, text, addr) == 1) {
        family = AF_INET6;
    } else {
        family = -1;                   /* unix socket clients: "all" only */
    }
    for (i = 0; i < allow->nelts; i++) {
        if (c[i].family == 0) {
            return 1;
        }
        if (c[i].family != family) {
            continue;
        }
        full = c[i].bits / 8;
        rest = c[i].bits % 8;
        if (memcmp(addr, c[i].addr, full) == 0
            && (rest == 0 || ((addr[full] ^ c[i].addr[full]) & (0xff << (8 - rest))) == 0))
        {
            return 1;
        }
    }
    return 0;
}

/* The purge function of a cache (also the core's registered one). */
static sws_int_t
sws_cache_purge_key(void *data, const sws_str_t *key, sws_uint_t *removed)
{
    sws_cache_path_t     *p = data;
    sws_cache_node_t    **found, *n;
    sws_queue_t          *q;
    sws_uint_t            nfound = 0, cap, i;
    size_t                plen;

    *removed = 0;
    if (key->len == 0 || key->data[key->len - 1] != '*') {
        *removed = sws_cache_invalidate(p, key, NULL);
        return SWS_OK;
    }
    plen = key->len - 1;
    sws_slab_lock(p->pool);
    cap = (sws_uint_t) p->sh->lru.count + 1;
    found = malloc(cap * sizeof(sws_cache_node_t *));
    if (found == NULL) {
        sws_slab_unlock(p->pool);
        return SWS_ERROR;
    }
    /* first the list (removing a marker removes its variants with it) */
    for (q = sws_queue_head(&p->sh->lru.queue); q != &p->sh->lru.queue; q = q->next) {
        n = sws_queue_data(q, sws_cache_node_t, lru);
        if (n->key_len < plen || memcmp(n->key, key->data, plen) != 0) {
            continue;
        }
        if (n->marker && n->marker->key_len >= plen
            && memcmp(n->marker->key, key->data, plen) == 0)
        {
            continue;                  /* goes with its marker */
        }
        if (nfound < cap) {
            found[nfound++] = n;
        }
    }
    for (i = 0; i < nfound; i++) {
        *removed += sws_cache_drop_node_locked(p, found[i]);
    }
    sws_slab_unlock(p->pool);
    free(found);
    return SWS_OK;
}

sws_int_t
sws_cache_purge_request(sws_http_request_t *r, sws_cache_loc_conf_t *lcf)
{
    static const sws_str_t  type = sws_string("text/plain");
    sws_str_t               key, body;
    sws_uint_t              removed;
    u_char                 *p;

    if (!sws_cache_purge_allowed(r, lcf->purge_allow)) {
        return SWS_HTTP_FORBIDDEN;
    }
    sws_http_discard_body(r);
    p = sws_pnalloc(sws_http_pool(r), 64);
    if (p == NULL
        || sws_http_format_string(lcf->key, r, sws_http_pool(r), 1, NULL, 0, &key) != SWS_OK)
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_cache_purge_key(lcf->path, &key, &removed) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = p;
    body.len = (size_t) (sws_slprintf(p, p + 64, "purged %lu\n", (unsigned long) removed) - p);
    sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0, "cache \"%.*s\": purged %lu for \"%.*s\"",
                  (int) lcf->path->name.len, lcf->path->name.data, (unsigned long) removed,
                  (int) sws_min(key.len, 512), key.data);
    return sws_http_send_response(r, removed ? SWS_HTTP_OK : SWS_HTTP_NOT_FOUND, &type, &body);
}

/* postconfiguration: every cache by name, for sws_http_cache_purge(). */
sws_int_t
sws_cache_purge_init(sws_conf_t *cf)
{
    sws_cache_main_conf_t  *cmcf = sws_conf_http_main_conf(cf, &sws_module);
    sws_cache_path_t      **pp;
    sws_uint_t              i;

    if (cmcf == NULL || cmcf->paths == NULL) {
        return SWS_OK;
    }
    pp = cmcf->paths->elts;
    for (i = 0; i < cmcf->paths->nelts; i++) {
        if (sws_http_cache_purge_register(cf, &pp[i]->name, sws_cache_purge_key, pp[i])
            != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
