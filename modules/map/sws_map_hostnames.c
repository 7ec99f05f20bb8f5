/*
 * The wildcard keys of a "hostnames" map, as nginx's server names:
 * "*.example.com" matches any name ending in ".example.com",
 * ".example.com" also "example.com" itself, "example.*" any name
 * starting with "example.". The longest matching key wins; the lists are
 * kept longest first, so the first match is the one.
 */
#include "sws_map.h"

int
sws_map_is_wildcard(const sws_str_t *key, int *head)
{
    if (key->len > 2 && key->data[0] == '*' && key->data[1] == '.') {
        *head = 1;
        return 1;
    }
    if (key->len > 1 && key->data[0] == '.') {
        *head = 1;
        return 1;
    }
    if (key->len > 2 && key->data[key->len - 1] == '*' && key->data[key->len - 2] == '.') {
        *head = 0;
        return 1;
    }
    return 0;
}

sws_int_t
sws_map_wildcard_add(sws_conf_t *cf, sws_array_t **list, const sws_str_t *key, int head,
    sws_map_value_t *value)
{
    sws_map_wildcard_t  *w, *all, tmp;
    sws_uint_t           i;
    size_t               len;
    u_char              *p;

    if (*list == NULL) {
        *list = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_map_wildcard_t));
        if (*list == NULL) {
            return SWS_ERROR;
        }
    }
    /* stored without the '*': ".example.com", "example." */
    if (head) {
        len = key->data[0] == '*' ? key->len - 1 : key->len;
        p = key->data + (key->len - len);
    } else {
        len = key->len - 1;
        p = key->data;
    }
    all = (*list)->elts;
    for (i = 0; i < (*list)->nelts; i++) {
        if (all[i].key.len == len && sws_strncasecmp(all[i].key.data, p, len) == 0
            && all[i].bare == (head && key->data[0] == '.'))
        {
            return SWS_BUSY;
        }
    }
    w = sws_array_push(*list);
    if (w == NULL) {
        return SWS_ERROR;
    }
    w->key.data = sws_pnalloc(sws_conf_pool(cf), len);
    if (w->key.data == NULL) {
        return SWS_ERROR;
    }
    sws_strlow(w->key.data, p, len);
    w->key.len = len;
    w->value = value;
    w->bare = head && key->data[0] == '.';

    /* keep the list longest first (insertion: maps are small) */
    all = (*list)->elts;
    for (i = (*list)->nelts - 1; i > 0 && all[i - 1].key.len < all[i].key.len; i--) {
        tmp = all[i - 1];
        all[i - 1] = all[i];
        all[i] = tmp;
    }
    return SWS_OK;
}

sws_map_value_t *
sws_map_wildcard_find(const sws_array_t *list, const sws_str_t *host, int head)
{
    const sws_map_wildcard_t  *w;
    sws_uint_t                 i;

    if (list == NULL) {
        return NULL;
    }
    w = list->elts;
    for (i = 0; i < list->nelts; i++) {
        if (head) {
            /* ".example.com": a name that ends with it, or the bare name */
            if (host->len > w[i].key.len
                && memcmp(host->data + host->len - w[i].key.len, w[i].key.data,
                          w[i].key.len) == 0)
            {
                return w[i].value;
            }
            if (w[i].bare && host->len + 1 == w[i].key.len
                && memcmp(host->data, w[i].key.data + 1, host->len) == 0)
            {
                return w[i].value;
            }
        } else if (host->len > w[i].key.len
                   && memcmp(host->data, w[i].key.data, w[i].key.len) == 0)
        {
            return w[i].value;
        }
    }
    return NULL;
}
