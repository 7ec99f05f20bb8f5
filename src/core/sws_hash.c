/*
 * Build-once string -> pointer table: open addressing with linear probing,
 * power-of-two capacity, load kept at or below one half so lookups usually
 * touch one or two slots. Keys are copied (lower-cased for case-insensitive
 * tables) into the pool.
 */
#include <string.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_string.h>
#include <scalws/sws_hash.h>
#include "sws_swar.h"
#include "sws_hash_internal.h"

typedef struct {
    const u_char  *key;       /* NULL: empty slot */
    void          *value;
    uint32_t       hash;
    uint32_t       len;
} sws_hash_slot_t;

struct sws_hash_s {
    sws_hash_slot_t  *slots;
    sws_uint_t        mask;      /* capacity - 1 */
    sws_uint_t        count;
    sws_pool_t       *pool;
    int               lowercase;
};


static sws_hash_slot_t *
sws_hash_alloc_slots(sws_pool_t *pool, sws_uint_t capacity)
{
    if (capacity > SIZE_MAX / sizeof(sws_hash_slot_t)) {
        return NULL;
    }
    return sws_pcalloc(pool, capacity * sizeof(sws_hash_slot_t));
}


sws_hash_t *
sws_hash_create(sws_pool_t *pool, sws_uint_t expected, int lowercase)
{
    sws_hash_t  *h;
    sws_uint_t   cap = 8;

    while (cap < 2 * expected) {
        cap <<= 1;
        if (cap == 0) {
            return NULL;
        }
    }

    h = sws_palloc(pool, sizeof(sws_hash_t));
    if (h == NULL) {
        return NULL;
    }
    h->slots = sws_hash_alloc_slots(pool, cap);
    if (h->slots == NULL) {
        return NULL;
    }
    h->mask = cap - 1;
    h->count = 0;
    h->pool = pool;
    h->lowercase = lowercase;
    return h;
}


static inline int
sws_hash_key_eq(const sws_hash_t *h, const sws_hash_slot_t *s, const u_char *key, size_t len)
{
    const u_char  *k = s->key;
    size_t         i = 0;

    if (s->len != len) {
        return 0;
    }
    if (!h->lowercase) {
        return memcmp(k, key, len) == 0;
    }
    /* Stored keys are lower case already. */
    for (; i + 8 <= len; i += 8) {
        if (sws_swar_lower(sws_load64(key + i)) != sws_load64(k + i)) {
            return 0;
        }
    }
    if (i == len) {
        return 1;
    }
    /* The rest in one or two loads overlapping what was compared: a
     * field's name (server, date) is mostly shorter than a word. */
    if (len >= 8) {
        return sws_swar_lower(sws_load64(key + len - 8)) == sws_load64(k + len - 8);
    }
    if (len >= 4) {
        return sws_swar_lower(sws_load32(key)) == sws_load32(k)
               && sws_swar_lower(sws_load32(key + len - 4)) == sws_load32(k + len - 4);
    }
    for (; i < len; i++) {
        if (k[i] != sws_tolower(key[i])) {
            return 0;
        }
    }
    return 1;
}


/* Double the capacity, reinserting every entry (config time only). */
static sws_int_t
sws_hash_grow(sws_hash_t *h)
{
    sws_uint_t        cap = (h->mask + 1) * 2, i, j;
    sws_hash_slot_t  *slots, *old = h->slots;

    if (cap == 0 || (slots = sws_hash_alloc_slots(h->pool, cap)) == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i <= h->mask; i++) {
        if (old[i].key == NULL) {
            continue;
        }
        for (j = old[i].hash & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1)) {
            /* probe */
        }
        slots[j] = old[i];
    }
    h->slots = slots;
    h->mask = cap - 1;
    return SWS_OK;
}


sws_int_t
sws_hash_add(sws_hash_t *h, const sws_str_t *key, void *value)
{
    sws_hash_slot_t  *s;
    sws_uint_t        i;
    uint32_t          hash;
    u_char           *copy;

    if (key->len > UINT32_MAX) {
        return SWS_ERROR;
    }
    hash = h->lowercase ? sws_hash_key_lc(key->data, key->len)
                        : sws_hash_key(key->data, key->len);

    for (i = hash & h->mask; h->slots[i].key; i = (i + 1) & h->mask) {
        if (h->slots[i].hash == hash && sws_hash_key_eq(h, &h->slots[i], key->data, key->len)) {
            return SWS_BUSY;
        }
    }

    if (2 * (h->count + 1) > h->mask + 1) {
        if (sws_hash_grow(h) != SWS_OK) {
            return SWS_ERROR;
        }
        for (i = hash & h->mask; h->slots[i].key; i = (i + 1) & h->mask) {
            /* probe */
        }
    }

    copy = sws_pnalloc(h->pool, key->len + 1);
    if (copy == NULL) {
        return SWS_ERROR;
    }
    if (h->lowercase) {
        sws_strlow(copy, key->data, key->len);
    } else if (key->len) {
        memcpy(copy, key->data, key->len);
    }
    copy[key->len] = '\0';

    s = &h->slots[i];
    s->key = copy;
    s->value = value;
    s->hash = hash;
    s->len = (uint32_t) key->len;
    h->count++;
    return SWS_OK;
}


static inline void *
sws_hash_probe(const sws_hash_t *h, uint32_t hash, const u_char *key, size_t len)
{
    const sws_hash_slot_t  *s;
    sws_uint_t              i;

    for (i = hash & h->mask; ; i = (i + 1) & h->mask) {
        s = &h->slots[i];
        if (s->key == NULL) {
            return NULL;
        }
        if (s->hash == hash && sws_hash_key_eq(h, s, key, len)) {
            return s->value;
        }
    }
}


void *
sws_hash_find(const sws_hash_t *h, const u_char *key, size_t len)
{
    return sws_hash_probe(h, h->lowercase ? sws_hash_key_lc(key, len) : sws_hash_key(key, len),
                          key, len);
}


void *
sws_hash_find_hashed(const sws_hash_t *h, uint32_t hash, const u_char *key, size_t len)
{
    return sws_hash_probe(h, hash, key, len);
}


sws_uint_t
sws_hash_count(const sws_hash_t *h)
{
    return h->count;
}
