/*
 * The HPACK encoder (sws_hpack_encoder.h). The dynamic table is one block:
 * the entries' name and value octets in a ring, the entries themselves in
 * a ring of slots, oldest first (both a power of two; the block starts
 * small, for the few fields of a short connection, and doubles as the
 * entries need, up to a ring of SWS_HPACK_TABLE_MAX octets and 1/32 as many
 * slots: an entry counts 32 octets more than its strings, so a full table
 * fits those), and three small direct-mapped look-ups by slot: the
 * newest entry of each static-table name (a response's Date, ETag, ... are
 * found there with one comparison), a hash of name and value for the rest,
 * and a hash of the name alone (a name of no static entry). A look-up's
 * answer is always checked against the entry, so a slot reused or a hash
 * shared only costs a miss.
 */
#include <string.h>
#include <scalws/sws_string.h>
#include "sws_hpack_mem.h"
#include "sws_hpack_encoder.h"
#include "sws_swar.h"

#define SWS_HPACK_ENTRIES      (SWS_HPACK_TABLE_MAX / 32)   /* 32 octets each at least */
/* the first block's slots and ring octets */
#define SWS_HPACK_FIRST_SLOTS  16
#define SWS_HPACK_FIRST_RING   512
#define SWS_HPACK_VALUE_BUCKETS 256
#define SWS_HPACK_NAME_BUCKETS  64
/* Names longer than this go as literals without indexing (their lower
 * case is made on the stack). */
#define SWS_HPACK_NAME_MAX     256

typedef struct {
    uint32_t  hash;          /* of name and value */
    uint16_t  off;           /* the name, then the value, in the ring */
    uint16_t  nlen;
    uint16_t  vlen;
    uint8_t   name_index;    /* the name's static index, 0: none */
} sws_hpack_entry_t;

struct sws_hpack_table_s {
    uint32_t           first;         /* the oldest entry's slot */
    uint32_t           count;
    uint32_t           slot_mask;     /* slots - 1 */
    uint32_t           ring_mask;     /* ring octets - 1 */
    uint32_t           end;           /* where the next entry's octets go */
    uint32_t           bytes;         /* the entries' strings */
    sws_hpack_entry_t *entry;         /* after this header, in its block */
    u_char            *ring;          /* after the entries */
    /* slot + 1 (0: none) */
    uint8_t            by_static[SWS_HPACK_STATIC_ENTRIES + 1];
    uint8_t            by_value[SWS_HPACK_VALUE_BUCKETS];
    uint8_t            by_name[SWS_HPACK_NAME_BUCKETS];
    /* The memo (sws_hpack_memo_get): a caller's key and the block octets
     * it encoded to, while e->changes is memo_changes. */
    uint32_t           memo_changes;
    uint16_t           memo_klen;     /* 0: nothing kept */
    uint16_t           memo_blen;
    u_char             memo[SWS_HPACK_MEMO_MAX];
};

/* The same names' indexes grouped by length (each name once, its first
 * index), for sws_hpack_static_name: the group of length n is
 * sws_hpack_by_len[sws_hpack_len_start[n] .. sws_hpack_len_start[n + 1]). */
#define SWS_HPACK_STATIC_NAME_MAX  27
static const uint8_t sws_hpack_len_start[SWS_HPACK_STATIC_NAME_MAX + 2] = {
    0, 0, 0, 0, 2, 8, 11, 15, 21, 24, 24, 27, 28, 30, 36, 38, 40, 44, 46, 47, 50, 50, 50,
    50, 50, 50, 51, 51, 52
};
static const uint8_t sws_hpack_by_len[52] = {
    21, 60, 33, 34, 37, 38, 45, 59, 4, 22, 50, 19, 32, 35, 54, 2, 6, 8, 36, 51, 52, 39, 42,
    46, 1, 55, 58, 53, 31, 47, 18, 23, 24, 30, 41, 44, 15, 28, 16, 17, 26, 27, 29, 61, 40,
    57, 48, 25, 43, 49, 56, 20
};

/* ---- representations (RFC 7541 5, 6) ---- */

/* An integer with an n-bit prefix after the bits of first (5.1). */
static u_char *
sws_hpack_int(u_char *p, u_char first, unsigned n, size_t v)
{
    size_t max = ((size_t) 1 << n) - 1;

    if (v < max) {
        *p++ = (u_char) (first | v);
        return p;
    }
    *p++ = (u_char) (first | max);
    v -= max;
    while (v >= 128) {
        *p++ = (u_char) (0x80 | (v & 0x7f));
        v >>= 7;
    }
    *p++ = (u_char) v;
    return p;
}

/* A string literal (5.2): Huffman-coded when that is shorter. */
static u_char *
sws_hpack_string(const sws_hpack_encoder_t *e, u_char *p, const u_char *s, size_t n)
{
    size_t h;

    if (!e->raw && n) {
        h = sws_hpack_huffman_len(s, n);
        if (h < n) {
            p = sws_hpack_int(p, 0x80, 7, h);
            return sws_hpack_huffman_encode(p, s, n);
        }
    }
    p = sws_hpack_int(p, 0, 7, n);
    memcpy(p, s, n);
    return p + n;
}

/* ---- the table ---- */

static uint32_t
sws_hpack_hash(uint32_t h, const u_char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        h = (h ^ s[i]) * 16777619u;
    }
    return h;
}

static int
sws_hpack_live(const sws_hpack_table_t *t, uint32_t slot)
{
    return ((slot - t->first) & t->slot_mask) < t->count;
}

/* The HPACK index of a live slot: the newest entry is 62. */
static size_t
sws_hpack_index(const sws_hpack_table_t *t, uint32_t slot)
{
    return SWS_HPACK_STATIC_ENTRIES + 1
           + ((t->first + t->count - 1 - slot) & t->slot_mask);
}

static inline __attribute__((always_inline)) int
sws_hpack_ring_eq(const sws_hpack_table_t *t, uint32_t off, const u_char *s, size_t n)
{
    size_t k;

    off &= t->ring_mask;
    if (n <= t->ring_mask + 1 - off) {
        /* a response's values (a date, an ETag) are mostly 2 to 32
         * octets: compared in words, inline */
        if (n > 16 && n <= 32) {
            return sws_swar_eq(t->ring + off, s, 16)
                   && sws_swar_eq(t->ring + off + n - 16, s + n - 16, 16);
        }
        return sws_swar_eq(t->ring + off, s, n);
    }
    k = t->ring_mask + 1 - off;
    return memcmp(t->ring + off, s, k) == 0 && memcmp(t->ring, s + k, n - k) == 0;
}

static void
sws_hpack_ring_put(sws_hpack_table_t *t, uint32_t off, const u_char *s, size_t n)
{
    size_t k;

    off &= t->ring_mask;
    k = sws_min(n, (size_t) (t->ring_mask + 1 - off));
    memcpy(t->ring + off, s, k);
    memcpy(t->ring, s + k, n - k);
}

/* n octets from the ring at off to dst */
static void
sws_hpack_ring_get(const sws_hpack_table_t *t, uint32_t off, u_char *dst, size_t n)
{
    size_t k;

    off &= t->ring_mask;
    k = sws_min(n, (size_t) (t->ring_mask + 1 - off));
    memcpy(dst, t->ring + off, k);
    memcpy(dst + k, t->ring, n - k);
}

/* slot + 1 in a look-up, when it is a live entry */
static int
sws_hpack_slot(const sws_hpack_table_t *t, uint8_t v, uint32_t *slot)
{
    if (v == 0 || !sws_hpack_live(t, (uint32_t) v - 1)) {
        return 0;
    }
    *slot = (uint32_t) v - 1;
    return 1;
}

/* The slot of the newest entry of a static name (1) if its value is
 * value: a response's fields found without a hash. */
static inline __attribute__((always_inline)) int
sws_hpack_find_static(const sws_hpack_table_t *t, sws_uint_t name_index, const u_char *value,
    size_t vlen, uint32_t *slot)
{
    const sws_hpack_entry_t *en;
    uint32_t                 s;

    if (!sws_hpack_slot(t, t->by_static[name_index], &s)) {
        return 0;
    }
    en = &t->entry[s];
    if (en->name_index == name_index && en->vlen == vlen
        && sws_hpack_ring_eq(t, (uint32_t) en->off + en->nlen, value, vlen))
    {
        *slot = s;
        return 1;
    }
    return 0;
}

/* The slot of name: value (1), or 0; *named (when it is left -1 on
 * entry): a slot with the name, for a name of no static entry. */
static int
sws_hpack_find(const sws_hpack_table_t *t, uint32_t h, uint32_t hn, sws_uint_t name_index,
    const u_char *name, size_t nlen, const u_char *value, size_t vlen, uint32_t *slot,
    int64_t *named)
{
    const sws_hpack_entry_t *en;
    uint32_t                 s;

    if (sws_hpack_slot(t, t->by_value[h % SWS_HPACK_VALUE_BUCKETS], &s)) {
        en = &t->entry[s];
        if (en->hash == h && en->name_index == name_index && en->nlen == nlen
            && en->vlen == vlen
            && (name_index || sws_hpack_ring_eq(t, en->off, name, nlen))
            && sws_hpack_ring_eq(t, (uint32_t) en->off + nlen, value, vlen))
        {
            *slot = s;
            return 1;
        }
    }
    if (name_index == 0 && sws_hpack_slot(t, t->by_name[hn % SWS_HPACK_NAME_BUCKETS], &s)) {
        en = &t->entry[s];
        if (en->name_index == 0 && en->nlen == nlen && sws_hpack_ring_eq(t, en->off, name, nlen)) {
            *named = (int64_t) s;
        }
    }
    return 0;
}

/* The oldest entries go until need more octets fit the capacity (4.4). */
static void
sws_hpack_evict(sws_hpack_encoder_t *e, size_t need)
{
    sws_hpack_table_t       *t = e->table;
    const sws_hpack_entry_t *en;

    while (t && t->count && e->size + need > e->capacity) {
        e->changes++;
        en = &t->entry[t->first];
        e->size -= (uint32_t) en->nlen + en->vlen + 32;
        t->bytes -= (uint32_t) en->nlen + en->vlen;
        t->first = (t->first + 1) & t->slot_mask;
        t->count--;
    }
    if (t && t->count == 0) {
        t->end = 0;
    }
}

/* A table block of slots entries and ring octets, holding the entries of
 * the old one (NULL: a new table), in order from slot 0, with the look-ups
 * made again: NULL when out of memory. */
static sws_hpack_table_t *
sws_hpack_table_block(const sws_hpack_table_t *old, uint32_t slots, uint32_t ring)
{
    sws_hpack_table_t *t;
    sws_hpack_entry_t *en;
    uint32_t           i, off = 0;

    t = sws_hpack_mem_malloc(sizeof(sws_hpack_table_t) + slots * sizeof(sws_hpack_entry_t)
                             + ring, NULL);
    if (t == NULL) {
        return NULL;
    }
    t->entry = (sws_hpack_entry_t *) (t + 1);
    t->ring = (u_char *) (t->entry + slots);
    t->slot_mask = slots - 1;
    t->ring_mask = ring - 1;
    t->first = 0;
    t->count = old ? old->count : 0;
    memset(t->by_static, 0, sizeof(t->by_static));
    memset(t->by_value, 0, sizeof(t->by_value));
    memset(t->by_name, 0, sizeof(t->by_name));
    t->memo_klen = 0;
    for (i = 0; i < t->count; i++) {
        en = &t->entry[i];
        *en = old->entry[(old->first + i) & old->slot_mask];
        sws_hpack_ring_get(old, en->off, t->ring + off, (size_t) en->nlen + en->vlen);
        en->off = (uint16_t) off;
        off += (uint32_t) en->nlen + en->vlen;
        t->by_value[en->hash % SWS_HPACK_VALUE_BUCKETS] = (uint8_t) (i + 1);
        if (en->name_index) {
            t->by_static[en->name_index] = (uint8_t) (i + 1);
        } else {
            t->by_name[sws_hpack_hash(2166136261u, t->ring + en->off, en->nlen)
                       % SWS_HPACK_NAME_BUCKETS] = (uint8_t) (i + 1);
        }
    }
    t->bytes = off;
    t->end = off & t->ring_mask;
    return t;
}

/* Room for one more entry of n octets of strings once the entries it
 * pushes out are gone: the table made, or grown, as needed (nothing is
 * evicted here: a table that cannot grow stays as the decoder's is).
 * 0 if there is no memory for it. */
static int
sws_hpack_room(sws_hpack_encoder_t *e, size_t n)
{
    sws_hpack_table_t       *t = e->table;
    const sws_hpack_entry_t *en;
    uint32_t                 size, count, bytes, s, slots, ring;

    if (t == NULL) {
        t = sws_hpack_table_block(NULL, SWS_HPACK_FIRST_SLOTS, SWS_HPACK_FIRST_RING);
        if (t == NULL) {
            return 0;
        }
        e->table = t;
    }
    size = e->size;
    count = t->count;
    bytes = t->bytes;
    for (s = t->first; count && size + n + 32 > e->capacity; s = (s + 1) & t->slot_mask) {
        en = &t->entry[s];
        size -= (uint32_t) en->nlen + en->vlen + 32;
        bytes -= (uint32_t) en->nlen + en->vlen;
        count--;
    }
    slots = t->slot_mask + 1;
    ring = t->ring_mask + 1;
    if (count < slots && bytes + n <= ring) {
        return 1;
    }
    /* (a full block of SWS_HPACK_ENTRIES slots and SWS_HPACK_TABLE_MAX
     * octets always has room: the loops end there) */
    while (slots <= count) {
        slots *= 2;
    }
    while (ring < bytes + n) {
        ring *= 2;
    }
    t = sws_hpack_table_block(e->table, slots, ring);
    if (t == NULL) {
        return 0;
    }
    sws_hpack_mem_free(e->table, NULL);
    e->table = t;
    return 1;
}

/* Add name: value as the decoder does on a literal with incremental
 * indexing (sws_hpack_room made room for it). */
static void
sws_hpack_insert(sws_hpack_encoder_t *e, uint32_t h, uint32_t hn, sws_uint_t name_index,
    const u_char *name, size_t nlen, const u_char *value, size_t vlen)
{
    sws_hpack_table_t *t;
    sws_hpack_entry_t *en;
    uint32_t           slot;

    sws_hpack_evict(e, nlen + vlen + 32);
    e->changes++;
    t = e->table;
    slot = (t->first + t->count) & t->slot_mask;
    en = &t->entry[slot];
    en->hash = h;
    en->off = (uint16_t) t->end;
    en->nlen = (uint16_t) nlen;
    en->vlen = (uint16_t) vlen;
    en->name_index = (uint8_t) name_index;
    sws_hpack_ring_put(t, t->end, name, nlen);
    sws_hpack_ring_put(t, t->end + (uint32_t) nlen, value, vlen);
    t->end = (t->end + (uint32_t) (nlen + vlen)) & t->ring_mask;
    t->bytes += (uint32_t) (nlen + vlen);
    t->count++;
    e->size += (uint32_t) (nlen + vlen + 32);

    t->by_value[h % SWS_HPACK_VALUE_BUCKETS] = (uint8_t) (slot + 1);
    if (name_index) {
        t->by_static[name_index] = (uint8_t) (slot + 1);
    } else {
        t->by_name[hn % SWS_HPACK_NAME_BUCKETS] = (uint8_t) (slot + 1);
    }
}

/* ---- the encoder ---- */

void
sws_hpack_encoder_init(sws_hpack_encoder_t *e, uint32_t limit)
{
    e->table = NULL;
    e->capacity = sws_min(limit, (uint32_t) SWS_HPACK_TABLE_MAX);
    e->size = 0;
    e->low = e->capacity;
    /* A decoder's table may be larger than ours: it evicts only by its
     * own size, and we refer to our newest entries only, which it holds
     * at the same indexes. */
    e->update = 0;
    e->raw = 0;
    e->changes = 0;
}

void
sws_hpack_encoder_set_limit(sws_hpack_encoder_t *e, uint32_t limit)
{
    uint32_t capacity = sws_min(limit, (uint32_t) SWS_HPACK_TABLE_MAX);

    if (capacity == e->capacity) {
        return;
    }
    e->capacity = capacity;
    e->changes++;             /* (what is indexed depends on the capacity) */
    /* the smallest size of the changes before the next block goes first */
    e->low = e->update ? sws_min(e->low, capacity) : capacity;
    e->update = 1;
    sws_hpack_evict(e, 0);
    if (capacity == 0 && e->table) {
        /* nothing can be indexed: no memory for it either */
        sws_hpack_mem_free(e->table, NULL);
        e->table = NULL;
    }
}

void
sws_hpack_encoder_release(sws_hpack_encoder_t *e)
{
    if (e->table == NULL) {
        return;
    }
    sws_hpack_mem_free(e->table, NULL);
    e->table = NULL;
    e->changes++;
    if (e->size) {
        /* the decoder still holds the entries: size 0 empties its table */
        e->size = 0;
        e->low = 0;
        e->update = 1;
    }
}

u_char *
sws_hpack_encode_begin(sws_hpack_encoder_t *e, u_char *p)
{
    if (e->update) {
        if (e->low < e->capacity) {
            p = sws_hpack_int(p, 0x20, 5, e->low);
        }
        p = sws_hpack_int(p, 0x20, 5, e->capacity);
        e->update = 0;
        e->low = e->capacity;
    }
    return p;
}

u_char *
sws_hpack_encode_status(sws_hpack_encoder_t *e, u_char *p, sws_uint_t status)
{
    u_char     code[3];
    sws_uint_t index;

    switch (status) {
    case 200: index = 8; break;
    case 204: index = 9; break;
    case 206: index = 10; break;
    case 304: index = 11; break;
    case 400: index = 12; break;
    case 404: index = 13; break;
    case 500: index = 14; break;
    default: index = 0;
    }
    if (index) {
        return sws_hpack_int(p, 0x80, 7, index);
    }
    code[0] = (u_char) ('0' + status / 100 % 10);
    code[1] = (u_char) ('0' + status / 10 % 10);
    code[2] = (u_char) ('0' + status % 10);
    return sws_hpack_encode_field(e, p, SWS_HPACK_STATUS, (u_char *) ":status", 7, code, 3,
                                  SWS_HPACK_INDEX);
}

/* sws_hpack_encode_field past the newest entry of a static name given by
 * number: a static name found by its string, a field found by hash, or a
 * literal. Apart, so that the usual case (a response's field as the one
 * before it on the connection) is a small function that calls nothing. */
static __attribute__((noinline)) u_char *
sws_hpack_encode_other(sws_hpack_encoder_t *e, u_char *p, sws_uint_t name_index,
    const u_char *name, size_t nlen, const u_char *value, size_t vlen, sws_hpack_index_e how)
{
    uint32_t  h = 0, hn = 0, slot;
    int64_t   named = -1;
    size_t    nref;

    if (name_index == 0) {
        name_index = sws_hpack_static_name(name, nlen);
        if (name_index && how != SWS_HPACK_NEVER_INDEX && e->table
            && sws_hpack_find_static(e->table, name_index, value, vlen, &slot))
        {
            return sws_hpack_int(p, 0x80, 7, sws_hpack_index(e->table, slot));   /* 6.1 */
        }
    }
    nref = name_index;
    if (e->table || how == SWS_HPACK_INDEX) {
        hn = name_index ? (uint32_t) name_index * 2654435761u
                        : sws_hpack_hash(2166136261u, name, nlen);
        h = sws_hpack_hash(hn ^ 2166136261u, value, vlen);
    }
    if (e->table && e->table->count) {
        if (how != SWS_HPACK_NEVER_INDEX
            && sws_hpack_find(e->table, h, hn, name_index, name, nlen, value, vlen, &slot,
                              &named))
        {
            return sws_hpack_int(p, 0x80, 7, sws_hpack_index(e->table, slot));   /* 6.1 */
        }
        if (named >= 0) {
            nref = sws_hpack_index(e->table, (uint32_t) named);
        }
    }
    /* A field of more than half the table would push out most of what the
     * next responses could refer to: it goes without indexing. */
    if (how == SWS_HPACK_INDEX && nlen + vlen + 32 <= e->capacity / 2
        && sws_hpack_room(e, nlen + vlen))
    {
        p = sws_hpack_int(p, 0x40, 6, nref);                               /* 6.2.1 */
        if (nref == 0) {
            p = sws_hpack_string(e, p, name, nlen);
        }
        p = sws_hpack_string(e, p, value, vlen);
        sws_hpack_insert(e, h, hn, name_index, name, nlen, value, vlen);
        return p;
    }
    p = sws_hpack_int(p, how == SWS_HPACK_NEVER_INDEX ? 0x10 : 0x00, 4, nref); /* 6.2.2, 6.2.3 */
    if (nref == 0) {
        p = sws_hpack_string(e, p, name, nlen);
    }
    return sws_hpack_string(e, p, value, vlen);
}

u_char *
sws_hpack_encode_field(sws_hpack_encoder_t *e, u_char *p, sws_uint_t name_index,
    const u_char *name, size_t nlen, const u_char *value, size_t vlen, sws_hpack_index_e how)
{
    uint32_t  slot;

    if (name_index && how != SWS_HPACK_NEVER_INDEX && e->table
        && sws_hpack_find_static(e->table, name_index, value, vlen, &slot))
    {
        return sws_hpack_int(p, 0x80, 7, sws_hpack_index(e->table, slot));       /* 6.1 */
    }
    return sws_hpack_encode_other(e, p, name_index, name, nlen, value, vlen, how);
}

u_char *
sws_hpack_encode_fields(sws_hpack_encoder_t *e, u_char *p, const sws_hpack_known_t *f,
    sws_uint_t n)
{
    const sws_hpack_static_t *sn;
    sws_uint_t                i;
    uint32_t                  slot;

    for (i = 0; i < n; i++) {
        if (f[i].how != SWS_HPACK_NEVER_INDEX && e->table
            && sws_hpack_find_static(e->table, f[i].name_index, f[i].value, f[i].vlen, &slot))
        {
            p = sws_hpack_int(p, 0x80, 7, sws_hpack_index(e->table, slot));      /* 6.1 */
            continue;
        }
        sn = &sws_hpack_static[f[i].name_index];
        p = sws_hpack_encode_other(e, p, f[i].name_index, (const u_char *) sn->name, sn->nlen,
                                   f[i].value, f[i].vlen, f[i].how);
    }
    return p;
}

const u_char *
sws_hpack_memo_get(const sws_hpack_encoder_t *e, const u_char *key, size_t klen, size_t *blen)
{
    const sws_hpack_table_t *t = e->table;

    if (t == NULL || t->memo_klen != klen || t->memo_changes != e->changes || klen == 0
        || memcmp(t->memo, key, klen) != 0)
    {
        return NULL;
    }
    *blen = t->memo_blen;
    return t->memo + klen;
}

void
sws_hpack_memo_put(sws_hpack_encoder_t *e, uint32_t changes, const u_char *key, size_t klen,
    const u_char *block, size_t blen)
{
    sws_hpack_table_t *t = e->table;

    if (t == NULL) {
        return;
    }
    if (changes != e->changes || klen == 0 || klen + blen > SWS_HPACK_MEMO_MAX) {
        t->memo_klen = 0;
        return;
    }
    memcpy(t->memo, key, klen);
    memcpy(t->memo + klen, block, blen);
    t->memo_klen = (uint16_t) klen;
    t->memo_blen = (uint16_t) blen;
    t->memo_changes = changes;
}

/* Our indexing policy for a name (lower case) that no caller chose for. */
static sws_hpack_index_e
sws_hpack_policy(sws_uint_t name_index, const u_char *name, size_t nlen)
{
    switch (name_index) {
    case SWS_HPACK_AUTHORIZATION:
    case SWS_HPACK_PROXY_AUTHORIZATION:
    case SWS_HPACK_COOKIE:
    case SWS_HPACK_SET_COOKIE:
        return SWS_HPACK_NEVER_INDEX;          /* secrets: kept out of every table */
    case SWS_HPACK_AGE:
    case SWS_HPACK_LOCATION:
    case SWS_HPACK_CONTENT_RANGE:
        return SWS_HPACK_NO_INDEX;             /* one response's */
    case 0:
        if (nlen == 12 && memcmp(name, "x-request-id", 12) == 0) {
            return SWS_HPACK_NO_INDEX;
        }
        return SWS_HPACK_INDEX;
    default:
        return SWS_HPACK_INDEX;
    }
}

u_char *
sws_hpack_encode_header(sws_hpack_encoder_t *e, u_char *p, const u_char *name, size_t nlen,
    const u_char *value, size_t vlen)
{
    u_char      low[SWS_HPACK_NAME_MAX];
    sws_uint_t  name_index;
    size_t      i;

    if (nlen > sizeof(low)) {
        /* a literal name, in lower case as it goes */
        p = sws_hpack_int(p, 0x00, 4, 0);
        p = sws_hpack_int(p, 0, 7, nlen);
        for (i = 0; i < nlen; i++) {
            *p++ = sws_tolower(name[i]);
        }
        return sws_hpack_string(e, p, value, vlen);
    }
    name_index = sws_hpack_static_name(name, nlen);
    if (name_index) {
        /* (the name goes by its index: its case does not matter) */
        name = (const u_char *) sws_hpack_static[name_index].name;
    } else {
        sws_strlow(low, name, nlen);
        name = low;
    }
    return sws_hpack_encode_field(e, p, name_index, name, nlen, value, vlen,
                                  sws_hpack_policy(name_index, name, nlen));
}

/* 8 octets with A-Z lowered, all at once: a byte's high bit after adding
 * 0x3f to its low 7 bits says >= 'A', after adding 0x25 > 'Z'. */
static uint64_t
sws_hpack_lower8(uint64_t x)
{
    uint64_t low7 = x & 0x7f7f7f7f7f7f7f7full;
    uint64_t upper = (low7 + 0x3f3f3f3f3f3f3f3full) & ~(low7 + 0x2525252525252525ull) & ~x
                     & 0x8080808080808080ull;

    return x | (upper >> 2);
}

/* Is name (any case) the lower-case static name sn, both n octets? */
static int
sws_hpack_name_eq(const u_char *name, const char *sn, size_t n)
{
    uint64_t a, b;
    size_t   k;

    if (n < 8) {
        for (k = 0; k < n; k++) {
            if (sws_tolower(name[k]) != (u_char) sn[k]) {
                return 0;
            }
        }
        return 1;
    }
    /* words, the last one overlapping the one before */
    for (k = 0; ; k += 8) {
        if (k + 8 > n) {
            k = n - 8;
        }
        memcpy(&a, name + k, 8);
        memcpy(&b, sn + k, 8);
        if (sws_hpack_lower8(a) != b) {
            return 0;
        }
        if (k + 8 == n) {
            return 1;
        }
    }
}

sws_uint_t
sws_hpack_static_name(const u_char *name, size_t nlen)
{
    const char *sn;
    sws_uint_t  i, index;

    if (nlen > SWS_HPACK_STATIC_NAME_MAX) {
        return 0;
    }
    for (i = sws_hpack_len_start[nlen]; i < sws_hpack_len_start[nlen + 1]; i++) {
        index = sws_hpack_by_len[i];
        sn = sws_hpack_static[index].name;
        if (sws_hpack_name_eq(name, sn, nlen)) {
            return index;
        }
    }
    return 0;
}
