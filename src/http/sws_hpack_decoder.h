/*
 * An HPACK decoder (RFC 7541) of our own for the header blocks HTTP/2
 * receives (requests and their trailers), beside our encoder
 * (sws_hpack_encoder.h). What it does that nghttp2's inflater did not let
 * us: a field referred to by index (what a client sends for the fields
 * that repeat from request to request) costs a look-up and nothing else,
 * without reference counts, a copy into a buffer of the library's or a call
 * per field into a shared library; and each entry of the dynamic table
 * keeps what RFC 9113 8.2.1 says of it (sws_hpack_field_t.valid), found
 * once as it entered the table, so that the request side checks the
 * fields of a repeated request only once (sws_http_v2_stream.c).
 *
 * A block is decoded representation by representation as its fragments
 * come (HEADERS, then CONTINUATION): sws_hpack_decode() returns the next
 * field; a representation cut by the fragment's end is left for the caller
 * to hand again with the next fragment's octets after it. Our
 * SETTINGS_HEADER_TABLE_SIZE is the protocol's default, 4096: the table
 * never holds more. Core-private (not part of the module SDK).
 */
#ifndef SWS_HPACK_DECODER_H
#define SWS_HPACK_DECODER_H

#include <scalws/sws_types.h>

/* The longest string a representation may carry, as it is sent (Huffman
 * coded or not): longer ones are a COMPRESSION_ERROR (nghttp2's limit). */
#define SWS_HPACK_STRING_MAX   65536
/* The most octets one representation can take that the decoder accepts:
 * what a caller may have to keep of a fragment for the next one. */
#define SWS_HPACK_REPR_MAX     (2 * SWS_HPACK_STRING_MAX + 16)

/* sws_hpack_field_t.valid: what is known of a field of the dynamic or the
 * static table (RFC 9113 8.2.1), 0 for a literal (nothing known). */
#define SWS_HPACK_KNOWN        0x01   /* the bits below are set */
#define SWS_HPACK_VALUE_OK     0x02   /* no NUL, CR, LF; no SP or HTAB at either end */
#define SWS_HPACK_NAME_OK      0x04   /* lower-case token characters, not empty */
#define SWS_HPACK_NAME_ODD     0x18   /* the name's class for the core, << 3
                                       * (sws_http_name_odd ORed) */
#define SWS_HPACK_ODD_SHIFT    3

typedef struct {
    const u_char  *name;
    const u_char  *value;
    size_t         nlen;
    size_t         vlen;
    u_char         valid;         /* SWS_HPACK_KNOWN ... */
} sws_hpack_field_t;

typedef struct sws_hpack_dentry_s sws_hpack_dentry_t;

/* Classes a field as sws_hpack_field_t.valid says (the request side's
 * checks, sws_http_v2_stream.c): given to sws_hpack_decoder_init, called
 * once for each entry as it enters the table, and for the static table's
 * once per process (there is one classifier). */
typedef u_char (*sws_hpack_classify_pt)(const u_char *name, size_t nlen, const u_char *value,
    size_t vlen);

typedef struct {
    sws_hpack_dentry_t **entry;       /* a ring of slots, newest last; NULL
                                       * until the first entry */
    sws_hpack_classify_pt classify;
    uint32_t             first;       /* the oldest entry's slot */
    uint32_t             count;
    uint32_t             slots;       /* a power of two */
    uint32_t             size;        /* RFC 7541 4.1 */
    uint32_t             capacity;    /* the encoder's maximum size (4.2) */
    unsigned             fields:1;    /* a field of this block came: no
                                       * size update after it */
} sws_hpack_decoder_t;

void      sws_hpack_decoder_init(sws_hpack_decoder_t *d, sws_hpack_classify_pt classify);
void      sws_hpack_decoder_release(sws_hpack_decoder_t *d);

/* The next field of a block from [*pos, end): SWS_OK with *f (its strings
 * valid until the next call) and *pos past it; SWS_AGAIN when [*pos, end)
 * ends within a representation, or is empty (*pos is where the next
 * fragment's octets continue it); SWS_ERROR for a block that cannot be
 * decoded (RFC 9113 4.3: a COMPRESSION_ERROR). Dynamic table size updates
 * are taken on the way. */
sws_int_t sws_hpack_decode(sws_hpack_decoder_t *d, const u_char **pos, const u_char *end,
    sws_hpack_field_t *f);

/* The block ended (after its last field). */
void      sws_hpack_decode_end(sws_hpack_decoder_t *d);

/* Huffman decoding (sws_hpack_huffman.c): the n octets of s decoded into
 * dst (room for n * 8 / 5 + 1 octets); the end of what was written, or
 * NULL for a string that is not a valid code (EOS in it, a padding longer
 * than 7 bits or not of ones: RFC 7541 5.2). */
u_char   *sws_hpack_huffman_decode(u_char *dst, const u_char *s, size_t n);

#endif
