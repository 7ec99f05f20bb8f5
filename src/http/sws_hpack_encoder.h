/*
 * An HPACK encoder (RFC 7541) of our own for the header blocks HTTP/2 sends
 * (responses, interim responses, trailers); the request side's decoder is
 * nghttp2's. What it does that nghttp2's deflater would not let us: our own
 * indexing policy (the ETag and Content-Length of a response are indexed
 * too, so a second response of the same file is one-octet references
 * only), the static table's entries found by their number
 * (a :status of 200 is one byte, without a look-up), no allocation per
 * field, and the dynamic table in one block per connection that an idle
 * connection gives back.
 *
 * A block is encoded field by field into a buffer the caller sized with
 * SWS_HPACK_BLOCK_BOUND and sws_hpack_field_bound(): begin, then the
 * fields in order. Core-private (not part of the module SDK).
 */
#ifndef SWS_HPACK_ENCODER_H
#define SWS_HPACK_ENCODER_H

#include <scalws/sws_types.h>

/* The largest dynamic table we keep, whatever the peer allows (its
 * SETTINGS_HEADER_TABLE_SIZE: 4096 unless it says otherwise). */
#define SWS_HPACK_TABLE_MAX    4096
/* The memo's room for a key and its block (sws_hpack_memo_get). */
#define SWS_HPACK_MEMO_MAX     384
/* Bytes a block may need before its fields: two dynamic table size
 * updates (RFC 7541 4.2). */
#define SWS_HPACK_BLOCK_BOUND  12
/* The most one field can take: the representation's octets with the
 * index (3 at most), each string's length (6 at most below 2^35), name and
 * value as they are (a Huffman code is used only where shorter). */
#define sws_hpack_field_bound(nlen, vlen)  ((size_t) (nlen) + (size_t) (vlen) + 32)

/* The static table's names we send (RFC 7541 Appendix A): the index of
 * the first entry with the name. */
#define SWS_HPACK_STATUS              8
#define SWS_HPACK_ACCEPT_RANGES       18
#define SWS_HPACK_AGE                 21
#define SWS_HPACK_AUTHORIZATION       23
#define SWS_HPACK_CACHE_CONTROL       24
#define SWS_HPACK_CONTENT_ENCODING    26
#define SWS_HPACK_CONTENT_LENGTH      28
#define SWS_HPACK_CONTENT_RANGE       30
#define SWS_HPACK_CONTENT_TYPE        31
#define SWS_HPACK_COOKIE              32
#define SWS_HPACK_DATE                33
#define SWS_HPACK_ETAG                34
#define SWS_HPACK_LAST_MODIFIED       44
#define SWS_HPACK_LOCATION            46
#define SWS_HPACK_PROXY_AUTHORIZATION 49
#define SWS_HPACK_SERVER              54
#define SWS_HPACK_SET_COOKIE          55
#define SWS_HPACK_VARY                59
#define SWS_HPACK_STATIC_ENTRIES      61

/* The static table (RFC 7541 Appendix A) by index, 1 to 61
 * (sws_hpack_static.c; the decoder's too). */
typedef struct {
    uint8_t      nlen;
    uint8_t      vlen;
    const char  *name;
    const char  *value;
} sws_hpack_static_t;

extern const sws_hpack_static_t  sws_hpack_static[SWS_HPACK_STATIC_ENTRIES + 1];

/* How a field may enter the dynamic table (RFC 7541 6.2). */
typedef enum {
    SWS_HPACK_INDEX = 0,       /* with incremental indexing, when it fits */
    SWS_HPACK_NO_INDEX,        /* without indexing: a value of one response */
    SWS_HPACK_NEVER_INDEX      /* never indexed, by no intermediary either (7.1.3) */
} sws_hpack_index_e;

typedef struct sws_hpack_table_s sws_hpack_table_t;

typedef struct {
    sws_hpack_table_t *table;     /* the entries: NULL until a field is indexed,
                                   * and after sws_hpack_encoder_release */
    uint32_t           capacity;  /* our table's maximum size: the peer's
                                   * SETTINGS_HEADER_TABLE_SIZE, at most
                                   * SWS_HPACK_TABLE_MAX */
    uint32_t           size;      /* its size now (RFC 7541 4.1) */
    uint32_t           low;       /* the smallest capacity since the last block */
    unsigned           update:1;  /* the next block starts with size updates */
    unsigned           raw:1;     /* no Huffman code (tests) */
    uint32_t           changes;   /* counts the table's changes (entries added
                                   * or evicted, the table freed) */
} sws_hpack_encoder_t;

/* An encoder for a decoder whose table may hold limit octets (what the
 * peer's SETTINGS_HEADER_TABLE_SIZE says: 4096 before it says anything). */
void    sws_hpack_encoder_init(sws_hpack_encoder_t *e, uint32_t limit);
/* The peer's SETTINGS_HEADER_TABLE_SIZE changed: entries are evicted now
 * as needed and the next block says the new size (RFC 7541 4.2, 6.3). */
void    sws_hpack_encoder_set_limit(sws_hpack_encoder_t *e, uint32_t limit);
/* The table's memory goes (an idle connection, or the end): the next block
 * tells the decoder to empty its table too, then the size again. */
void    sws_hpack_encoder_release(sws_hpack_encoder_t *e);

/* The start of a block at p: the size updates owed. Returns the end. */
u_char *sws_hpack_encode_begin(sws_hpack_encoder_t *e, u_char *p);
/* :status (100 to 999). */
u_char *sws_hpack_encode_status(sws_hpack_encoder_t *e, u_char *p, sws_uint_t status);
/* A field of a static name (SWS_HPACK_*) for sws_hpack_encode_fields. */
typedef struct {
    sws_uint_t         name_index;
    const u_char      *value;
    size_t             vlen;
    sws_hpack_index_e  how;
} sws_hpack_known_t;

/* The fields f[0..n), in order, as sws_hpack_encode_field would encode
 * each: a response's own fields in one call (the ones a connection's
 * previous response had cost a look-up each and no call). */
u_char *sws_hpack_encode_fields(sws_hpack_encoder_t *e, u_char *p, const sws_hpack_known_t *f,
    sws_uint_t n);
/*
 * A memo of one block's fields, kept in the table's block (so an idle
 * connection, whose table goes, keeps none): key is the caller's account
 * of everything it encodes after sws_hpack_encode_begin (each field's
 * name, value and indexing, in order); the octets they encode to depend
 * on nothing else while the table is unchanged. sws_hpack_memo_get: the
 * octets kept for key (*blen of them), NULL if none or the table changed
 * since. sws_hpack_memo_put: keep key -> [block, block + blen) when
 * e->changes is still changes (read before the fields were encoded: a
 * block that added entries encodes otherwise next time).
 */
const u_char *sws_hpack_memo_get(const sws_hpack_encoder_t *e, const u_char *key, size_t klen,
    size_t *blen);
void    sws_hpack_memo_put(sws_hpack_encoder_t *e, uint32_t changes, const u_char *key,
    size_t klen, const u_char *block, size_t blen);
/* A field whose name is lower case; name_index: its static table index
 * (SWS_HPACK_*), or 0 (the static table is searched). */
u_char *sws_hpack_encode_field(sws_hpack_encoder_t *e, u_char *p, sws_uint_t name_index,
    const u_char *name, size_t nlen, const u_char *value, size_t vlen,
    sws_hpack_index_e how);
/* A field of any case, as a module set it: the name goes in lower case,
 * and how it is indexed is our policy by name (never: credentials and
 * cookies; not: values that differ on every response). */
u_char *sws_hpack_encode_header(sws_hpack_encoder_t *e, u_char *p, const u_char *name,
    size_t nlen, const u_char *value, size_t vlen);

/* The static table's index of a lower-case name, 0 when it has none. */
sws_uint_t sws_hpack_static_name(const u_char *name, size_t nlen);

/* Huffman code (sws_hpack_huffman.c): the octets s[0..n) take, and the
 * code written at dst (returns the end). */
size_t  sws_hpack_huffman_len(const u_char *s, size_t n);
u_char *sws_hpack_huffman_encode(u_char *dst, const u_char *s, size_t n);

#endif
