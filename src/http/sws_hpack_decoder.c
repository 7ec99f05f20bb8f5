/*
 * The HPACK decoder (sws_hpack_decoder.h). The dynamic table is a ring of
 * slots, oldest first, each an entry of its own (name and value octets
 * after a small header) from the per-thread allocation cache: an entry is
 * allocated as it is inserted and freed as it is evicted, which happens
 * only for a literal with incremental indexing; the ring starts at 16
 * slots and doubles up to the 128 a 4096-octet table can need (an entry
 * counts 32 octets more than its strings).
 */
#include <string.h>
#include <scalws/sws_string.h>
#include "sws_hpack_mem.h"
#include "sws_hpack_decoder.h"
#include "sws_hpack_encoder.h"
#include "sws_swar.h"

#define SWS_HPACK_FIRST_DSLOTS  16

struct sws_hpack_dentry_s {
    uint32_t  nlen;
    uint32_t  vlen;
    u_char    valid;
    u_char    data[];                /* the name, then the value */
};

/* The static entries as the classifier sees them: the same for every
 * decoder (there is one classifier, the request side's), found once. */
static u_char  sws_hpack_static_valid[SWS_HPACK_STATIC_ENTRIES + 1];

/* Huffman-decoded strings: a name and a value at most at a time, each at
 * most 8/5 of SWS_HPACK_STRING_MAX (the shortest code is 5 bits). A
 * worker is one thread, and a field's strings are used before the next
 * representation is decoded. */
#define SWS_HPACK_HUFFMAN_ROOM  (SWS_HPACK_STRING_MAX / 5 * 8 + 8)
static u_char  sws_hpack_scratch[2][SWS_HPACK_HUFFMAN_ROOM];

/* The last short Huffman-coded value and what it decodes to: a value a
 * client sends as a literal every time, the same each time (h2load's and
 * curl's :path, never indexed), is compared rather than decoded again.
 * The worker's, not a connection's: decoding depends on the octets alone.
 * Values only (a literal name and value of one field are decoded in one
 * call, and only the value's string is kept till the next). */
#define SWS_HPACK_MEMO_CODED  64
static u_char  sws_hpack_memo_coded[SWS_HPACK_MEMO_CODED];
static u_char  sws_hpack_memo_plain[SWS_HPACK_MEMO_CODED * 8 / 5 + 8];
static size_t  sws_hpack_memo_clen;            /* 0: nothing kept */
static size_t  sws_hpack_memo_plen;

void
sws_hpack_decoder_init(sws_hpack_decoder_t *d, sws_hpack_classify_pt classify)
{
    sws_uint_t i;

    memset(d, 0, sizeof(*d));
    d->capacity = SWS_HPACK_TABLE_MAX;
    d->classify = classify;
    if (classify && !sws_hpack_static_valid[1]) {
        for (i = 1; i <= SWS_HPACK_STATIC_ENTRIES; i++) {
            sws_hpack_static_valid[i] = classify((const u_char *) sws_hpack_static[i].name,
                                                 sws_hpack_static[i].nlen,
                                                 (const u_char *) sws_hpack_static[i].value,
                                                 sws_hpack_static[i].vlen);
        }
    }
}

static void
sws_hpack_dentry_free(sws_hpack_decoder_t *d)
{
    sws_hpack_dentry_t *e = d->entry[d->first];

    d->size -= e->nlen + e->vlen + 32;
    sws_hpack_mem_free(e, NULL);
    d->first = (d->first + 1) & (d->slots - 1);
    d->count--;
}

void
sws_hpack_decoder_release(sws_hpack_decoder_t *d)
{
    while (d->count) {
        sws_hpack_dentry_free(d);
    }
    if (d->entry) {
        sws_hpack_mem_free(d->entry, NULL);
        d->entry = NULL;
    }
    d->first = 0;
    d->slots = 0;
}

/* Oldest entries out until need more octets fit (RFC 7541 4.4). */
static void
sws_hpack_devict(sws_hpack_decoder_t *d, size_t need)
{
    while (d->count && d->size + need > d->capacity) {
        sws_hpack_dentry_free(d);
    }
}

/* The field of index i (2.3.3): SWS_ERROR for 0 or one past the tables. */
static inline sws_int_t
sws_hpack_dlookup(const sws_hpack_decoder_t *d, uint32_t i, sws_hpack_field_t *f)
{
    const sws_hpack_dentry_t *e;

    if (i == 0) {
        return SWS_ERROR;
    }
    if (i <= SWS_HPACK_STATIC_ENTRIES) {
        f->name = (const u_char *) sws_hpack_static[i].name;
        f->nlen = sws_hpack_static[i].nlen;
        f->value = (const u_char *) sws_hpack_static[i].value;
        f->vlen = sws_hpack_static[i].vlen;
        f->valid = sws_hpack_static_valid[i];
        return SWS_OK;
    }
    i -= SWS_HPACK_STATIC_ENTRIES + 1;
    if (i >= d->count) {
        return SWS_ERROR;
    }
    e = d->entry[(d->first + d->count - 1 - i) & (d->slots - 1)];
    f->name = e->data;
    f->nlen = e->nlen;
    f->value = e->data + e->nlen;
    f->vlen = e->vlen;
    f->valid = e->valid;
    return SWS_OK;
}

/* f into the table (4.4), f then pointing at the entry's copy: the copy
 * is made before anything is evicted, as f's name may be an entry's. */
static sws_int_t
sws_hpack_dinsert(sws_hpack_decoder_t *d, sws_hpack_field_t *f)
{
    sws_hpack_dentry_t **ring;
    sws_hpack_dentry_t  *e;
    size_t               need = f->nlen + f->vlen + 32;
    uint32_t             i, slots;

    if (need > d->capacity) {
        /* not an error: the table ends up empty, the name (an entry's,
         * it may be) kept aside first */
        memmove(sws_hpack_scratch[0], f->name, f->nlen);
        f->name = sws_hpack_scratch[0];
        sws_hpack_devict(d, need);
        return SWS_OK;
    }
    e = sws_hpack_mem_malloc(sizeof(sws_hpack_dentry_t) + f->nlen + f->vlen, NULL);
    if (e == NULL) {
        return SWS_ERROR;
    }
    e->nlen = (uint32_t) f->nlen;
    e->vlen = (uint32_t) f->vlen;
    memcpy(e->data, f->name, f->nlen);
    memcpy(e->data + f->nlen, f->value, f->vlen);
    e->valid = d->classify ? d->classify(e->data, e->nlen, e->data + e->nlen, e->vlen) : 0;
    sws_hpack_devict(d, need);
    if (d->count == d->slots) {
        slots = d->slots ? 2 * d->slots : SWS_HPACK_FIRST_DSLOTS;
        ring = sws_hpack_mem_malloc(slots * sizeof(sws_hpack_dentry_t *), NULL);
        if (ring == NULL) {
            sws_hpack_mem_free(e, NULL);
            return SWS_ERROR;
        }
        for (i = 0; i < d->count; i++) {
            ring[i] = d->entry[(d->first + i) & (d->slots - 1)];
        }
        if (d->entry) {
            sws_hpack_mem_free(d->entry, NULL);
        }
        d->entry = ring;
        d->first = 0;
        d->slots = slots;
    }
    d->entry[(d->first + d->count) & (d->slots - 1)] = e;
    d->count++;
    d->size += (uint32_t) need;
    f->name = e->data;
    f->value = e->data + e->nlen;
    f->valid = e->valid;
    return SWS_OK;
}

/* An integer with an n-bit prefix at *p (5.1), *p < end: one that does
 * not fit 32 bits is an error (every use of one is bounded far below). */
static inline sws_int_t
sws_hpack_dint(const u_char **p, const u_char *end, unsigned n, uint32_t *v)
{
    const u_char *q = *p;
    uint64_t      x;
    uint32_t      mask = (1u << n) - 1, shift = 0;
    u_char        b;

    x = *q++ & mask;
    if (x == mask) {
        do {
            if (q == end) {
                return SWS_AGAIN;
            }
            if (shift >= 32) {
                return SWS_ERROR;
            }
            b = *q++;
            x += (uint64_t) (b & 0x7f) << shift;
            if (x > UINT32_MAX) {
                return SWS_ERROR;
            }
            shift += 7;
        } while (b & 0x80);
    }
    *p = q;
    *v = (uint32_t) x;
    return SWS_OK;
}

/* A short Huffman-coded value: the memo's decoding if it is the memo's
 * octets, else decoded into the memo. */
static sws_int_t
sws_hpack_dmemo(const u_char *q, size_t len, const u_char **s, size_t *n)
{
    u_char *last;

    if (len != sws_hpack_memo_clen || !sws_swar_eq(q, sws_hpack_memo_coded, len)) {
        sws_hpack_memo_clen = 0;
        last = sws_hpack_huffman_decode(sws_hpack_memo_plain, q, len);
        if (last == NULL) {
            return SWS_ERROR;
        }
        memcpy(sws_hpack_memo_coded, q, len);
        sws_hpack_memo_clen = len;
        sws_hpack_memo_plen = (size_t) (last - sws_hpack_memo_plain);
    }
    *s = sws_hpack_memo_plain;
    *n = sws_hpack_memo_plen;
    return SWS_OK;
}

/* A string at *p (5.2), Huffman-decoded into scratch if it is coded (NULL:
 * a value's, through the memo when it is short). */
static sws_int_t
sws_hpack_dstr(const u_char **p, const u_char *end, u_char *scratch, const u_char **s,
    size_t *n)
{
    const u_char *q = *p;
    uint32_t      len;
    u_char       *last;
    sws_int_t     rc;
    int           huffman;

    if (q == end) {
        return SWS_AGAIN;
    }
    huffman = *q & 0x80;
    rc = sws_hpack_dint(&q, end, 7, &len);
    if (rc != SWS_OK) {
        return rc;
    }
    if (len > SWS_HPACK_STRING_MAX) {
        return SWS_ERROR;
    }
    if ((size_t) (end - q) < len) {
        return SWS_AGAIN;
    }
    if (huffman && scratch == NULL) {
        if (len != 0 && len <= SWS_HPACK_MEMO_CODED) {
            rc = sws_hpack_dmemo(q, len, s, n);
            if (rc != SWS_OK) {
                return rc;
            }
            *p = q + len;
            return SWS_OK;
        }
        scratch = sws_hpack_scratch[1];
    }
    if (huffman) {
        last = sws_hpack_huffman_decode(scratch, q, len);
        if (last == NULL) {
            return SWS_ERROR;
        }
        *s = scratch;
        *n = last - scratch;
    } else {
        *s = q;
        *n = len;
    }
    *p = q + len;
    return SWS_OK;
}

/* Any representation (not inlined into sws_hpack_decode: its one-octet
 * case then costs no saved registers). */
static sws_int_t __attribute__((noinline))
sws_hpack_decode_any(sws_hpack_decoder_t *d, const u_char **pos, const u_char *end,
    sws_hpack_field_t *f)
{
    const u_char *p;
    uint32_t      v;
    sws_int_t     rc;
    int           index;

    for ( ;; ) {
        p = *pos;
        if (p == end) {
            return SWS_AGAIN;
        }
        if (*p & 0x80) {                                /* indexed (6.1) */
            rc = sws_hpack_dint(&p, end, 7, &v);
            if (rc != SWS_OK) {
                return rc;
            }
            if (sws_hpack_dlookup(d, v, f) != SWS_OK) {
                return SWS_ERROR;
            }
            break;
        }
        if ((*p & 0xe0) == 0x20) {                      /* table size update (6.3) */
            if (d->fields) {
                return SWS_ERROR;        /* only at the block's start (4.2) */
            }
            rc = sws_hpack_dint(&p, end, 5, &v);
            if (rc != SWS_OK) {
                return rc;
            }
            if (v > SWS_HPACK_TABLE_MAX) {
                return SWS_ERROR;        /* over our SETTINGS_HEADER_TABLE_SIZE */
            }
            d->capacity = v;
            sws_hpack_devict(d, 0);
            *pos = p;
            continue;
        }
        /* a literal (6.2): with incremental indexing (01), without (0000)
         * or never indexed (0001); the name by index or a string */
        index = (*p & 0xc0) == 0x40;
        rc = sws_hpack_dint(&p, end, index ? 6 : 4, &v);
        if (rc != SWS_OK) {
            return rc;
        }
        if (v) {
            if (sws_hpack_dlookup(d, v, f) != SWS_OK) {
                return SWS_ERROR;
            }
        } else {
            rc = sws_hpack_dstr(&p, end, sws_hpack_scratch[0], &f->name, &f->nlen);
            if (rc != SWS_OK) {
                return rc;
            }
        }
        rc = sws_hpack_dstr(&p, end, NULL, &f->value, &f->vlen);
        if (rc != SWS_OK) {
            return rc;
        }
        f->valid = 0;
        if (index && sws_hpack_dinsert(d, f) != SWS_OK) {
            return SWS_ERROR;
        }
        break;
    }
    d->fields = 1;
    *pos = p;
    return SWS_OK;
}

sws_int_t
sws_hpack_decode(sws_hpack_decoder_t *d, const u_char **pos, const u_char *end,
    sws_hpack_field_t *f)
{
    const u_char *p = *pos;

    /* What a request's repeated fields are: an index of one octet (1 to
     * 126), found with nothing else to do. */
    if (p < end && *p > 0x80 && *p < 0xff) {
        if (sws_hpack_dlookup(d, *p & 0x7fu, f) != SWS_OK) {
            return SWS_ERROR;
        }
        d->fields = 1;
        *pos = p + 1;
        return SWS_OK;
    }
    return sws_hpack_decode_any(d, pos, end, f);
}

void
sws_hpack_decode_end(sws_hpack_decoder_t *d)
{
    d->fields = 0;
}
