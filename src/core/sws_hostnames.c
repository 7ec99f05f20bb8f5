/*
 * Wildcard host names (include/scalws/sws_hostnames.h): two lists, kept
 * longest first so that the first match is the longest. "*.x.com" and
 * ".x.com" are stored as ".x.com" (the latter marked bare: x.com too),
 * "www.x.*" as "www.x.". Lists are short (a map's or a location's
 * entries): a linear search is enough.
 */
#include <string.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_array.h>
#include <scalws/sws_string.h>
#include <scalws/sws_hostnames.h>

typedef struct {
    sws_str_t   key;
    void       *value;
    unsigned    bare:1;
} sws_hostname_t;

struct sws_hostnames_s {
    sws_pool_t   *pool;
    sws_array_t  *suffixes;
    sws_array_t  *prefixes;
};

/* Suffix forms: 1; prefix forms: 0; *kind the kind. */
static int
sws_hostnames_form(const sws_str_t *n, int *kind)
{
    const u_char  *p = n->data;
    size_t         len = n->len;

    *kind = SWS_HOSTNAME_WILDCARD;
    if (len > 2 && p[0] == '*' && p[1] == '.') {
        if (memchr(p + 1, '*', len - 1) == NULL) {
            return 1;
        }
    } else if (len > 2 && p[len - 1] == '*' && p[len - 2] == '.') {
        if (memchr(p, '*', len - 1) == NULL) {
            return 0;
        }
    } else if (memchr(p, '*', len) == NULL) {
        if (len > 1 && p[0] == '.') {
            return 1;
        }
        *kind = SWS_HOSTNAME_PLAIN;
        return 0;
    }
    *kind = SWS_HOSTNAME_INVALID;
    return 0;
}

int
sws_hostnames_kind(const sws_str_t *name)
{
    int  kind;

    (void) sws_hostnames_form(name, &kind);
    return kind;
}

sws_hostnames_t *
sws_hostnames_create(sws_pool_t *pool)
{
    sws_hostnames_t  *h = sws_pcalloc(pool, sizeof(sws_hostnames_t));

    if (h == NULL) {
        return NULL;
    }
    h->pool = pool;
    return h;
}

sws_int_t
sws_hostnames_add(sws_hostnames_t *h, const sws_str_t *name, void *value)
{
    sws_array_t    **list;
    sws_hostname_t  *e, tmp;
    sws_str_t        key = *name;
    sws_uint_t       i;
    int              kind, suffix = sws_hostnames_form(name, &kind);

    if (kind != SWS_HOSTNAME_WILDCARD) {
        return SWS_DECLINED;
    }
    if (suffix && key.data[0] == '*') {
        key.data++;
        key.len--;
    } else if (!suffix) {
        key.len--;
    }
    list = suffix ? &h->suffixes : &h->prefixes;
    if (*list == NULL) {
        *list = sws_array_create(h->pool, 4, sizeof(sws_hostname_t));
        if (*list == NULL) {
            return SWS_ERROR;
        }
    }
    e = (*list)->elts;
    for (i = 0; i < (*list)->nelts; i++) {
        if (e[i].key.len == key.len && sws_strncasecmp(e[i].key.data, key.data, key.len) == 0) {
            return SWS_BUSY;
        }
    }
    e = sws_array_push(*list);
    if (e == NULL) {
        return SWS_ERROR;
    }
    e->key.data = sws_pnalloc(h->pool, key.len);
    if (e->key.data == NULL) {
        return SWS_ERROR;
    }
    sws_strlow(e->key.data, key.data, key.len);
    e->key.len = key.len;
    e->value = value;
    e->bare = suffix && name->data[0] == '.';

    e = (*list)->elts;
    for (i = (*list)->nelts - 1; i > 0 && e[i - 1].key.len < e[i].key.len; i--) {
        tmp = e[i - 1];
        e[i - 1] = e[i];
        e[i] = tmp;
    }
    return SWS_OK;
}

void *
sws_hostnames_find(const sws_hostnames_t *h, const u_char *host, size_t len)
{
    const sws_hostname_t  *e;
    sws_uint_t             i;

    if (h->suffixes) {
        e = h->suffixes->elts;
        for (i = 0; i < h->suffixes->nelts; i++) {
            if (len > e[i].key.len
                && memcmp(host + len - e[i].key.len, e[i].key.data, e[i].key.len) == 0)
            {
                return e[i].value;
            }
            if (e[i].bare && len + 1 == e[i].key.len
                && memcmp(host, e[i].key.data + 1, len) == 0)
            {
                return e[i].value;
            }
        }
    }
    if (h->prefixes) {
        e = h->prefixes->elts;
        for (i = 0; i < h->prefixes->nelts; i++) {
            if (len > e[i].key.len && memcmp(host, e[i].key.data, e[i].key.len) == 0) {
                return e[i].value;
            }
        }
    }
    return NULL;
}
