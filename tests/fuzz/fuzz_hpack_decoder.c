/*
 * libFuzzer target: our HPACK decoder (src/http/sws_hpack_decoder.c)
 * against nghttp2's. The input is a run of header blocks, each a 2-octet
 * length, an octet that says where the block is cut in two fragments (as a
 * HEADERS and a CONTINUATION would carry it), then the block: both
 * decoders take every block, ours fragment by fragment (a representation
 * cut at the fragment's end handed again with the next fragment's octets
 * after it, as sws_http_v2_frame.c does), nghttp2's whole. Both must refuse
 * the same blocks (then the connection would end: so does the input), and
 * give the same fields of the others, in the same order, with the two
 * tables the same size; what the classifier said of each field of the
 * tables must be what it says of the field now. Any difference aborts.
 *
 * Build and run: make fuzz FUZZ_TARGETS=fuzz_hpack_decoder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>
#include "sws_hpack_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FIELDS  65536          /* a block is at most 65535 octets */

typedef struct {
    u_char  *name;
    size_t   nlen;
    u_char  *value;
    size_t   vlen;
} fuzz_field_t;

/* A classifier of its own (the request side's is in the HTTP/2 module):
 * anything that depends on every octet of the name and the value. */
static u_char
classify(const u_char *name, size_t nlen, const u_char *value, size_t vlen)
{
    u_char  h = (u_char) (nlen * 7 + vlen);
    size_t  i;

    for (i = 0; i < nlen; i++) {
        h = (u_char) (h * 31 + name[i]);
    }
    for (i = 0; i < vlen; i++) {
        h = (u_char) (h * 31 + value[i]);
    }
    return (u_char) (SWS_HPACK_KNOWN | (h & ~SWS_HPACK_KNOWN));
}

static fuzz_field_t  ours[MAX_FIELDS];
static int           nours;

static u_char *
dup(const u_char *s, size_t n)
{
    u_char *p = malloc(n + 1);

    if (p == NULL) {
        abort();
    }
    memcpy(p, s, n);
    return p;
}

/* Ours, fragment by fragment: the number of fields, or -1 if refused. */
static int
decode_ours(sws_hpack_decoder_t *d, const u_char *block, size_t n, size_t cut)
{
    sws_hpack_field_t  f;
    const u_char      *pos, *last;
    u_char            *joined = NULL, *rest = NULL;
    size_t             rest_len = 0, from, to;
    int                k = 0, frag;
    sws_int_t          rc;

    for (frag = 0; frag < 2; frag++) {
        from = frag ? cut : 0;
        to = frag ? n : cut;
        pos = block + from;
        last = block + to;
        if (rest) {
            joined = malloc(rest_len + (to - from) + 1);
            memcpy(joined, rest, rest_len);
            memcpy(joined + rest_len, block + from, to - from);
            pos = joined;
            last = joined + rest_len + (to - from);
            free(rest);
            rest = NULL;
        }
        for ( ;; ) {
            rc = sws_hpack_decode(d, &pos, last, &f);
            if (rc == SWS_AGAIN) {
                break;
            }
            if (rc != SWS_OK) {
                free(joined);
                return -1;
            }
            if ((f.valid & SWS_HPACK_KNOWN)
                && f.valid != classify(f.name, f.nlen, f.value, f.vlen))
            {
                fprintf(stderr, "a table's field classed otherwise\n");
                abort();
            }
            if (k == MAX_FIELDS) {
                abort();
            }
            ours[k].name = dup(f.name, f.nlen);
            ours[k].nlen = f.nlen;
            ours[k].value = dup(f.value, f.vlen);
            ours[k].vlen = f.vlen;
            nours = ++k;
        }
        if (pos < last) {
            if (frag == 1) {
                free(joined);
                return -1;                    /* the block ends within one */
            }
            rest_len = (size_t) (last - pos);
            rest = dup(pos, rest_len);
        }
        free(joined);
        joined = NULL;
    }
    sws_hpack_decode_end(d);
    return k;
}

static void
free_ours(void)
{
    int i;

    for (i = 0; i < nours; i++) {
        free(ours[i].name);
        free(ours[i].value);
    }
    nours = 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t        *p = data, *end = data + size;
    sws_hpack_decoder_t   d;
    nghttp2_hd_inflater  *ng;
    nghttp2_nv            nv;
    const uint8_t        *in;
    size_t                n, cut, left;
    ssize_t               rv;
    int                   k, i, flags, refused;

    if (nghttp2_hd_inflate_new(&ng) != 0) {
        return 0;
    }
    sws_hpack_decoder_init(&d, classify);
    while (end - p >= 3) {
        n = ((size_t) p[0] << 8 | p[1]);
        cut = p[2];
        p += 3;
        if (n > (size_t) (end - p)) {
            n = (size_t) (end - p);
        }
        cut = n ? cut % (n + 1) : 0;

        k = decode_ours(&d, p, n, cut);

        in = p;
        left = n;
        i = 0;
        refused = 0;
        for ( ;; ) {
            flags = 0;
            rv = nghttp2_hd_inflate_hd2(ng, &nv, &flags, in, left, 1);
            if (rv < 0) {
                refused = 1;
                break;
            }
            in += rv;
            left -= (size_t) rv;
            if (flags & NGHTTP2_HD_INFLATE_EMIT) {
                if (k >= 0 && (i >= k || nv.namelen != ours[i].nlen
                               || nv.valuelen != ours[i].vlen
                               || memcmp(nv.name, ours[i].name, nv.namelen) != 0
                               || memcmp(nv.value, ours[i].value, nv.valuelen) != 0))
                {
                    fprintf(stderr, "field %d differs\n", i);
                    abort();
                }
                i++;
            }
            if (flags & NGHTTP2_HD_INFLATE_FINAL) {
                nghttp2_hd_inflate_end_headers(ng);
                break;
            }
            if (!(flags & NGHTTP2_HD_INFLATE_EMIT) && left == 0) {
                break;
            }
        }
        if (refused != (k < 0)) {
            fprintf(stderr, "one decoder refused the block: ours %d, nghttp2's %d\n",
                    k < 0, refused);
            abort();
        }
        if (k >= 0) {
            if (i != k) {
                fprintf(stderr, "%d fields from ours, %d from nghttp2's\n", k, i);
                abort();
            }
            if (nghttp2_hd_inflate_get_dynamic_table_size(ng) != d.size
                || nghttp2_hd_inflate_get_num_table_entries(ng) != 61 + d.count)
            {
                fprintf(stderr, "tables differ: %zu/%zu and %u/%u\n",
                        nghttp2_hd_inflate_get_dynamic_table_size(ng),
                        nghttp2_hd_inflate_get_num_table_entries(ng),
                        (unsigned) d.size, (unsigned) d.count);
                abort();
            }
        }
        free_ours();
        if (refused) {
            break;
        }
        p += n;
    }
    sws_hpack_decoder_release(&d);
    nghttp2_hd_inflate_del(ng);
    return 0;
}
