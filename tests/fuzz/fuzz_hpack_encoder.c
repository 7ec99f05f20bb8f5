/*
 * libFuzzer target: our HPACK encoder (src/http/sws_hpack_encoder.c)
 * against nghttp2's decoder. The input is a program: each step either
 * changes the peer's table size (the decoder told too, as a SETTINGS would),
 * gives the table back as an idle connection does, turns the Huffman code
 * off or on, adds a field to the block being made (a name of the static
 * table or one from the input, in any case, a value from the input, one of
 * the three indexing choices or our policy), or ends the block: it is
 * decoded, and every field must come back as it went in, with the two
 * tables the same size. Any difference aborts.
 *
 * Build and run: make fuzz FUZZ_TARGETS=fuzz_hpack_encoder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>
#include "sws_hpack_encoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS  32

typedef struct {
    const u_char  *name;      /* as given (any case) */
    size_t         nlen;
    const u_char  *value;
    size_t         vlen;
    int            never;
} fuzz_field_t;

static u_char        block[MAX_FIELDS * (300 + 4096 + 32) + SWS_HPACK_BLOCK_BOUND];
static fuzz_field_t  fields[MAX_FIELDS];

static const char *names[] = {
    "server", "content-type", "etag", "last-modified", "date", "content-length",
    "cache-control", "vary", "set-cookie", "location", "age", "x-request-id", "X-Custom",
    "Accept-Ranges", "link", "content-range", "Authorization", ":status", "cookie",
    "Proxy-Authorization", "www-authenticate"
};

static int
lower_eq(const u_char *lower, const u_char *any, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        u_char c = any[i] >= 'A' && any[i] <= 'Z' ? (u_char) (any[i] | 0x20) : any[i];

        if (c != lower[i]) {
            return 0;
        }
    }
    return 1;
}

/* Decode the block and compare: abort on any difference. */
static void
check(nghttp2_hd_inflater *d, const sws_hpack_encoder_t *e, size_t len, int n)
{
    const u_char *in = block;
    nghttp2_nv    nv;
    int           flags, k = 0;
    ssize_t       rv;

    for ( ;; ) {
        flags = 0;
        rv = nghttp2_hd_inflate_hd2(d, &nv, &flags, in, len, 1);
        if (rv < 0) {
            fprintf(stderr, "nghttp2 refused the block: %zd\n", rv);
            abort();
        }
        in += rv;
        len -= (size_t) rv;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            if (k == n || nv.namelen != fields[k].nlen || nv.valuelen != fields[k].vlen
                || !lower_eq(nv.name, fields[k].name, nv.namelen)
                || (nv.valuelen && memcmp(nv.value, fields[k].value, nv.valuelen) != 0)
                || ((nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0) != fields[k].never)
            {
                fprintf(stderr, "field %d differs\n", k);
                abort();
            }
            k++;
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(d);
            break;
        }
        if (rv == 0 && len == 0) {
            abort();
        }
    }
    if (k != n || nghttp2_hd_inflate_get_dynamic_table_size(d) != e->size
        || e->size > e->capacity)
    {
        fprintf(stderr, "%d fields of %d, tables %zu and %u\n", k, n,
                nghttp2_hd_inflate_get_dynamic_table_size(d), (unsigned) e->size);
        abort();
    }
}

/* n octets of the input, or fewer at its end */
static const uint8_t *
take(const uint8_t **p, const uint8_t *end, size_t *n)
{
    const uint8_t *s = *p;

    if (*n > (size_t) (end - s)) {
        *n = (size_t) (end - s);
    }
    *p += *n;
    return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t  limits[] = { 0, 1, 32, 63, 100, 256, 1024, 4095, 4096, 65536 };
    const uint8_t         *p = data, *end = data + size;
    sws_hpack_encoder_t    e;
    nghttp2_hd_inflater   *d;
    u_char                *out, lower[64];
    int                    n = 0;
    size_t                 k, nlen, i;
    uint8_t                op, b;
    sws_hpack_index_e      how;

    if (nghttp2_hd_inflate_new(&d) != 0) {
        return 0;
    }
    sws_hpack_encoder_init(&e, 4096);
    out = sws_hpack_encode_begin(&e, block);
    while (p < end) {
        op = *p++;
        switch (op & 7) {
        case 0:                                   /* the block ends */
            check(d, &e, (size_t) (out - block), n);
            n = 0;
            out = sws_hpack_encode_begin(&e, block);
            break;
        case 1:                                   /* the peer's table size */
            if (out != block || n) {
                break;                            /* between blocks only */
            }
            sws_hpack_encoder_set_limit(&e, limits[(op >> 3) % 10]);
            if (nghttp2_hd_inflate_change_table_size(d, limits[(op >> 3) % 10]) != 0) {
                abort();
            }
            out = sws_hpack_encode_begin(&e, block);
            break;
        case 2:                                   /* idle: the table goes */
            if (out != block || n) {
                break;
            }
            sws_hpack_encoder_release(&e);
            out = sws_hpack_encode_begin(&e, block);
            break;
        case 3:
            e.raw = !e.raw;
            break;
        case 4:                                   /* a status */
            if (n == MAX_FIELDS || p == end) {
                break;
            }
            b = *p++;
            {
                static const sws_uint_t st[] = { 200, 204, 206, 304, 400, 404, 500, 100, 302,
                                                 999, 103, 429, 503, 301, 307, 418 };
                static u_char           text[16][3];
                sws_uint_t              s = st[b % 16];

                text[b % 16][0] = (u_char) ('0' + s / 100);
                text[b % 16][1] = (u_char) ('0' + s / 10 % 10);
                text[b % 16][2] = (u_char) ('0' + s % 10);
                fields[n] = (fuzz_field_t) { (u_char *) ":status", 7, text[b % 16], 3, 0 };
                out = sws_hpack_encode_status(&e, out, s);
                n++;
            }
            break;
        default:                                  /* a field */
            if (n == MAX_FIELDS || end - p < 2) {
                break;
            }
            b = *p++;
            if (b & 0x80) {                       /* a name from the input */
                nlen = (size_t) (b & 0x3f) + 1;
                fields[n].name = take(&p, end, &nlen);
                fields[n].nlen = nlen;
            } else {
                fields[n].name = (const u_char *) names[b % (sizeof(names) / sizeof(names[0]))];
                fields[n].nlen = strlen((const char *) fields[n].name);
            }
            if (p == end) {
                break;
            }
            b = *p++;
            k = b & 0x40 ? (size_t) (b & 0x3f) * 64 : (size_t) (b & 0x3f);
            fields[n].value = take(&p, end, &k);
            fields[n].vlen = k;
            how = (sws_hpack_index_e) ((op >> 3) % 4);
            if (how == 3 || fields[n].nlen > sizeof(lower)) {
                /* our policy, names in any case */
                out = sws_hpack_encode_header(&e, out, fields[n].name, fields[n].nlen,
                                              fields[n].value, fields[n].vlen);
                for (i = 0; i < fields[n].nlen && i < sizeof(lower); i++) {
                    lower[i] = fields[n].name[i] >= 'A' && fields[n].name[i] <= 'Z'
                               ? (u_char) (fields[n].name[i] | 0x20) : fields[n].name[i];
                }
                nlen = fields[n].nlen;
                fields[n].never = nlen <= sizeof(lower)
                    && ((nlen == 10 && memcmp(lower, "set-cookie", 10) == 0)
                        || (nlen == 6 && memcmp(lower, "cookie", 6) == 0)
                        || (nlen == 13 && memcmp(lower, "authorization", 13) == 0)
                        || (nlen == 19 && memcmp(lower, "proxy-authorization", 19) == 0));
            } else {
                for (i = 0; i < fields[n].nlen; i++) {
                    lower[i] = fields[n].name[i] >= 'A' && fields[n].name[i] <= 'Z'
                               ? (u_char) (fields[n].name[i] | 0x20) : fields[n].name[i];
                }
                out = sws_hpack_encode_field(&e, out, (op & 0x80) ? 0
                                             : sws_hpack_static_name(lower, fields[n].nlen),
                                             lower, fields[n].nlen, fields[n].value,
                                             fields[n].vlen, how);
                fields[n].never = how == SWS_HPACK_NEVER_INDEX;
            }
            n++;
            break;
        }
    }
    check(d, &e, (size_t) (out - block), n);
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
    return 0;
}
