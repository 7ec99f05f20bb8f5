/*
 * Finding and evicting in a slab zone (see sws_slab.h): an LRU queue of
 * entries and a hash table of fixed size, both in the zone, both used
 * under the zone's lock that the caller holds. Entries embed their nodes,
 * so neither allocates anything but the table's buckets.
 */
#include "sws_conf_internal.h"
#include <scalws/sws_slab.h>

/* ---- LRU ---- */

void
sws_slab_lru_init(sws_slab_lru_t *lru)
{
    sws_queue_init(&lru->queue);
    lru->count = 0;
}

void
sws_slab_lru_insert(sws_slab_lru_t *lru, sws_slab_lru_node_t *node)
{
    sws_queue_insert_head(&lru->queue, node);
    lru->count++;
}

void
sws_slab_lru_touch(sws_slab_lru_t *lru, sws_slab_lru_node_t *node)
{
    if (sws_queue_head(&lru->queue) != node) {
        sws_queue_remove(node);
        sws_queue_insert_head(&lru->queue, node);
    }
}

void
sws_slab_lru_remove(sws_slab_lru_t *lru, sws_slab_lru_node_t *node)
{
    sws_queue_remove(node);
    lru->count--;
}

sws_slab_lru_node_t *
sws_slab_lru_oldest(sws_slab_lru_t *lru)
{
    return sws_queue_empty(&lru->queue) ? NULL : sws_queue_last(&lru->queue);
}

/* ---- hash table ---- */

struct sws_slab_hash_s {
    uint32_t               mask;
    uint32_t               count;
    sws_slab_hash_node_t  *buckets[];
};

sws_slab_hash_t *
sws_slab_hash_create_locked(sws_slab_pool_t *pool, sws_uint_t nbuckets)
{
    sws_slab_hash_t *h;
    sws_uint_t       n = 1;

    while (n < nbuckets && n < ((sws_uint_t) 1 << 30)) {
        n <<= 1;
    }
    h = sws_slab_calloc_locked(pool, sizeof(sws_slab_hash_t) + n * sizeof(h->buckets[0]));
    if (h) {
        h->mask = (uint32_t) (n - 1);
    }
    return h;
}

sws_slab_hash_node_t *
sws_slab_hash_find(sws_slab_hash_t *h, const u_char *key, size_t len)
{
    uint32_t               hash = sws_hash_key(key, len);
    sws_slab_hash_node_t  *node;

    for (node = h->buckets[hash & h->mask]; node; node = node->next) {
        if (node->hash == hash && node->len == len && memcmp(node->key, key, len) == 0) {
            return node;
        }
    }
    return NULL;
}

void
sws_slab_hash_insert(sws_slab_hash_t *h, sws_slab_hash_node_t *node, const u_char *key,
    size_t len)
{
    sws_slab_hash_node_t **b;

    node->hash = sws_hash_key(key, len);
    node->len = (uint32_t) len;
    node->key = key;
    b = &h->buckets[node->hash & h->mask];
    node->next = *b;
    *b = node;
    h->count++;
}

void
sws_slab_hash_remove(sws_slab_hash_t *h, sws_slab_hash_node_t *node)
{
    sws_slab_hash_node_t **pp;

    for (pp = &h->buckets[node->hash & h->mask]; *pp; pp = &(*pp)->next) {
        if (*pp == node) {
            *pp = node->next;
            node->next = NULL;
            h->count--;
            return;
        }
    }
}

sws_uint_t
sws_slab_hash_count(sws_slab_hash_t *h)
{
    return h->count;
}
