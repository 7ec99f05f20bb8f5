/*
 * Our HPACK decoder (src/http/sws_hpack_decoder.c): RFC 7541 Appendix C's
 * request examples (C.3 without the Huffman code, C.4 with it), each
 * block also cut at every octet as CONTINUATION frames would cut it; the
 * Huffman code of every octet both ways; the errors RFC 7541 names (index
 * 0 and past the tables, a size update after a field or above 4096, an
 * integer over 32 bits, EOS in a string, a padding too long or not of
 * ones); a literal too large for the table whose name is a table entry's;
 * and the classifier's answer kept with each entry.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sws_hpack_decoder.h"
#include "sws_hpack_encoder.h"

#define MAX_FIELDS  16

typedef struct {
    u_char  name[256];
    size_t  nlen;
    u_char  value[256];
    size_t  vlen;
    u_char  valid;
} field_t;

static field_t  got[MAX_FIELDS];
static int      classified;

static u_char
classify(const u_char *name, size_t nlen, const u_char *value, size_t vlen)
{
    classified++;
    return (u_char) (SWS_HPACK_KNOWN | (nlen == 10 && vlen == 12 ? SWS_HPACK_VALUE_OK : 0));
}

static size_t
unhex(const char *hex, u_char *out)
{
    size_t       n = 0;
    unsigned int b;

    while (*hex) {
        if (*hex == ' ') {
            hex++;
            continue;
        }
        ck_assert(sscanf(hex, "%2x", &b) == 1);
        out[n++] = (u_char) b;
        hex += 2;
    }
    return n;
}

/* The fields of [*pos, last) into got from got[*k] on: SWS_AGAIN (*pos
 * where the rest begins) or SWS_ERROR. */
static sws_int_t
drain(sws_hpack_decoder_t *d, const u_char **pos, const u_char *last, int *k)
{
    sws_hpack_field_t  f;
    sws_int_t          rc;

    while ((rc = sws_hpack_decode(d, pos, last, &f)) == SWS_OK) {
        ck_assert_int_lt(*k, MAX_FIELDS);
        memcpy(got[*k].name, f.name, f.nlen);
        got[*k].nlen = f.nlen;
        memcpy(got[*k].value, f.value, f.vlen);
        got[*k].vlen = f.vlen;
        got[*k].valid = f.valid;
        (*k)++;
    }
    return rc;
}

/* The block in two fragments cut at cut (a representation cut handed
 * again with the rest, as sws_http_v2_frame.c does): the number of fields
 * (into got), -1 for an error. */
static int
decode(sws_hpack_decoder_t *d, const u_char *block, size_t len, size_t cut)
{
    const u_char  *pos = block;
    u_char         joined[1024];
    size_t         rest;
    int            k = 0;

    if (drain(d, &pos, block + cut, &k) != SWS_AGAIN) {
        return -1;
    }
    rest = (size_t) (block + cut - pos);
    ck_assert_uint_le(rest + len - cut, sizeof(joined));
    memcpy(joined, pos, rest);
    memcpy(joined + rest, block + cut, len - cut);
    pos = joined;
    if (drain(d, &pos, joined + rest + len - cut, &k) != SWS_AGAIN) {
        return -1;
    }
    if (pos != joined + rest + len - cut) {
        return -1;                   /* the block ends within a representation */
    }
    sws_hpack_decode_end(d);
    return k;
}

static void
expect(int i, const char *name, const char *value)
{
    ck_assert_uint_eq(got[i].nlen, strlen(name));
    ck_assert(memcmp(got[i].name, name, got[i].nlen) == 0);
    ck_assert_uint_eq(got[i].vlen, strlen(value));
    ck_assert(memcmp(got[i].value, value, got[i].vlen) == 0);
}

/* RFC 7541 C.3 (raw) and C.4 (Huffman): the same three requests. */
static const char *c3[3] = {
    "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
    "8286 84be 5808 6e6f 2d63 6163 6865",
    "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"
};
static const char *c4[3] = {
    "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
    "8286 84be 5886 a8eb 1064 9cbf",
    "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf"
};

static void
rfc_requests(const char **blocks, int every_cut)
{
    sws_hpack_decoder_t  d;
    u_char               b[3][64];
    size_t               n[3], cut, i;
    int                  k;

    for (i = 0; i < 3; i++) {
        n[i] = unhex(blocks[i], b[i]);
    }
    for (cut = 0; cut <= (every_cut ? n[0] : 0); cut++) {
        sws_hpack_decoder_init(&d, classify);
        k = decode(&d, b[0], n[0], every_cut ? cut : n[0]);
        ck_assert_int_eq(k, 4);
        expect(0, ":method", "GET");
        expect(1, ":scheme", "http");
        expect(2, ":path", "/");
        expect(3, ":authority", "www.example.com");
        ck_assert_uint_eq(d.size, 57);
        k = decode(&d, b[1], n[1], every_cut ? cut % (n[1] + 1) : n[1]);
        ck_assert_int_eq(k, 5);
        expect(3, ":authority", "www.example.com");
        expect(4, "cache-control", "no-cache");
        ck_assert_uint_eq(d.size, 110);
        k = decode(&d, b[2], n[2], every_cut ? cut % (n[2] + 1) : n[2]);
        ck_assert_int_eq(k, 5);
        expect(0, ":method", "GET");
        expect(1, ":scheme", "https");
        expect(2, ":path", "/index.html");
        expect(3, ":authority", "www.example.com");
        expect(4, "custom-key", "custom-value");
        ck_assert_uint_eq(d.size, 164);
        ck_assert_uint_eq(d.count, 3);
        sws_hpack_decoder_release(&d);
    }
}

START_TEST(rfc_c3_raw)
{
    rfc_requests(c3, 0);
    rfc_requests(c3, 1);
}
END_TEST

START_TEST(rfc_c4_huffman)
{
    rfc_requests(c4, 0);
    rfc_requests(c4, 1);
}
END_TEST

START_TEST(huffman_every_octet)
{
    u_char   s[256], enc[1024], dec[512], *last;     /* (codes of up to 30 bits) */
    size_t   i, n;

    for (i = 0; i < 256; i++) {
        s[i] = (u_char) (255 - i);
    }
    last = sws_hpack_huffman_encode(enc, s, 256);
    n = (size_t) (last - enc);
    ck_assert_uint_eq(n, sws_hpack_huffman_len(s, 256));
    last = sws_hpack_huffman_decode(dec, enc, n);
    ck_assert_ptr_nonnull(last);
    ck_assert_uint_eq((size_t) (last - dec), 256);
    ck_assert(memcmp(dec, s, 256) == 0);
    /* each octet alone, with its padding */
    for (i = 0; i < 256; i++) {
        last = sws_hpack_huffman_encode(enc, s + i, 1);
        last = sws_hpack_huffman_decode(dec, enc, (size_t) (last - enc));
        ck_assert_ptr_nonnull(last);
        ck_assert_uint_eq((size_t) (last - dec), 1);
        ck_assert_uint_eq(dec[0], s[i]);
    }
}
END_TEST

START_TEST(huffman_errors)
{
    static const u_char eos[] = { 0xff, 0xff, 0xff, 0xff };     /* EOS, then 2 ones */
    static const u_char long_pad[] = { 0x1f, 0xff };            /* 'a', then 11 ones */
    static const u_char zero_pad[] = { 0x18 };                  /* 'a', then 000 */
    static const u_char good[] = { 0x1f };                      /* 'a', then 111 */
    u_char              dec[16], *last;

    ck_assert_ptr_null(sws_hpack_huffman_decode(dec, eos, sizeof(eos)));
    ck_assert_ptr_null(sws_hpack_huffman_decode(dec, long_pad, sizeof(long_pad)));
    ck_assert_ptr_null(sws_hpack_huffman_decode(dec, zero_pad, sizeof(zero_pad)));
    last = sws_hpack_huffman_decode(dec, good, sizeof(good));
    ck_assert_ptr_nonnull(last);
    ck_assert_uint_eq((size_t) (last - dec), 1);
    ck_assert_uint_eq(dec[0], 'a');
}
END_TEST

static int
one_block(const char *hex)
{
    sws_hpack_decoder_t  d;
    u_char               b[64];
    size_t               n = unhex(hex, b);
    int                  k;

    sws_hpack_decoder_init(&d, classify);
    k = decode(&d, b, n, n);
    sws_hpack_decoder_release(&d);
    return k;
}

START_TEST(errors)
{
    ck_assert_int_eq(one_block("80"), -1);                        /* index 0 */
    ck_assert_int_eq(one_block("be"), -1);                        /* 62: an empty table */
    ck_assert_int_eq(one_block("7e 01 61"), -1);                  /* name index 62 */
    ck_assert_int_eq(one_block("82 20"), -1);                     /* size update after a field */
    ck_assert_int_eq(one_block("3f e2 1f"), -1);                  /* size 4097 */
    ck_assert_int_eq(one_block("3f e1 1f 20 82"), 1);             /* 4096, then 0: allowed */
    ck_assert_int_eq(one_block("ff ff ff ff ff 0f"), -1);         /* index over 32 bits */
    ck_assert_int_eq(one_block("ff 80 80 80 80 80 01"), -1);      /* shift over 32 */
    ck_assert_int_eq(one_block("00 01 61 7f 80 01 62"), -1);      /* a string past the block */
    ck_assert_int_eq(one_block("00 01 61 84 ff ff ff ff"), -1);   /* EOS */
    ck_assert_int_eq(one_block("00 01 61 81 1f"), 1);             /* a valid Huffman value */
    ck_assert_int_eq(one_block("00 01 61 7f 82 80 04"), -1);      /* a string over 65536 */
    ck_assert_int_eq(one_block("82 83"), 2);
}
END_TEST

/* One never-indexed :path (name index 4) whose value is s Huffman-coded,
 * or hex as given when s is NULL: the value decoded (into got[0]), or -1. */
static int
path_block(sws_hpack_decoder_t *d, const char *s, const char *hex)
{
    u_char  b[64], *p;
    size_t  n;
    int     k;

    if (s) {
        b[0] = 0x14;
        n = sws_hpack_huffman_len((const u_char *) s, strlen(s));
        b[1] = (u_char) (0x80 | n);
        p = sws_hpack_huffman_encode(b + 2, (const u_char *) s, strlen(s));
        n = (size_t) (p - b);
    } else {
        n = unhex(hex, b);
    }
    k = decode(d, b, n, n);
    sws_hpack_decode_end(d);
    return k;
}

/* The last short Huffman-coded value is kept with its decoding: the same
 * octets again give the same value, other octets of the same length
 * theirs, an invalid code after a kept one is still an error, a literal
 * name decoded beside a value does not disturb it. */
START_TEST(value_memo)
{
    sws_hpack_decoder_t  d;

    sws_hpack_decoder_init(&d, classify);
    ck_assert_int_eq(path_block(&d, "/index.html", NULL), 1);
    ck_assert_int_eq(path_block(&d, "/index.html", NULL), 1);
    ck_assert_uint_eq(got[0].vlen, 11);
    ck_assert(memcmp(got[0].value, "/index.html", 11) == 0);
    ck_assert_int_eq(path_block(&d, "/a", NULL), 1);
    ck_assert(got[0].vlen == 2 && memcmp(got[0].value, "/a", 2) == 0);
    ck_assert_int_eq(path_block(&d, "/b", NULL), 1);          /* 2 octets too */
    ck_assert(got[0].vlen == 2 && memcmp(got[0].value, "/b", 2) == 0);
    ck_assert_int_eq(path_block(&d, NULL, "14 84 ff ff ff ff"), -1);     /* EOS */
    sws_hpack_decoder_release(&d);
    sws_hpack_decoder_init(&d, classify);
    ck_assert_int_eq(path_block(&d, NULL, "14 84 ff ff ff ff"), -1);     /* again */
    sws_hpack_decoder_release(&d);
    sws_hpack_decoder_init(&d, classify);
    ck_assert_int_eq(path_block(&d, "/b", NULL), 1);
    ck_assert(got[0].vlen == 2 && memcmp(got[0].value, "/b", 2) == 0);
    /* a literal name and value, both "a" Huffman-coded (0x1f) */
    ck_assert_int_eq(one_block("00 81 1f 81 1f"), 1);
    ck_assert(got[0].nlen == 1 && got[0].name[0] == 'a');
    ck_assert(got[0].vlen == 1 && got[0].value[0] == 'a');
    sws_hpack_decoder_release(&d);
}
END_TEST

/* A literal with incremental indexing too large for the table (RFC 7541
 * 4.4: the table is emptied, the field is not an error) whose name is the
 * entry the emptying evicts: the field keeps its name. */
START_TEST(too_large_entry_keeps_its_name)
{
    sws_hpack_decoder_t  d;
    u_char               b[64];
    size_t               n;
    int                  k;

    sws_hpack_decoder_init(&d, classify);
    /* custom-key: custom-value indexed (size 54), then the table's size
     * set to 60 (it stays), then a literal with indexing named by index
     * 62 with a value of 20 octets: 10 + 20 + 32 > 60 */
    n = unhex("400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", b);
    ck_assert_int_eq(decode(&d, b, n, n), 1);
    ck_assert_uint_eq(d.size, 54);
    n = unhex("3f1d 7e14 6161 6161 6161 6161 6161 6161 6161 6161 6161 6161", b);
    k = decode(&d, b, n, n);
    ck_assert_int_eq(k, 1);
    expect(0, "custom-key", "aaaaaaaaaaaaaaaaaaaa");
    ck_assert_uint_eq(got[0].valid, 0);
    ck_assert_uint_eq(d.size, 0);
    ck_assert_uint_eq(d.count, 0);
    sws_hpack_decoder_release(&d);
}
END_TEST

START_TEST(classified_once_per_entry)
{
    sws_hpack_decoder_t  d;
    u_char               b[64];
    size_t               n;
    int                  before;

    sws_hpack_decoder_init(&d, classify);
    n = unhex("400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", b);
    before = classified;
    ck_assert_int_eq(decode(&d, b, n, n), 1);
    ck_assert_int_eq(classified, before + 1);
    ck_assert_uint_eq(got[0].valid, SWS_HPACK_KNOWN | SWS_HPACK_VALUE_OK);
    n = unhex("be be", b);                     /* the entry, twice */
    ck_assert_int_eq(decode(&d, b, n, n), 2);
    ck_assert_int_eq(classified, before + 1);
    ck_assert_uint_eq(got[1].valid, SWS_HPACK_KNOWN | SWS_HPACK_VALUE_OK);
    n = unhex("000a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", b);
    ck_assert_int_eq(decode(&d, b, n, n), 1);  /* a literal without indexing */
    ck_assert_uint_eq(got[0].valid, 0);
    n = unhex("82", b);                        /* the static table's, known too */
    ck_assert_int_eq(decode(&d, b, n, n), 1);
    ck_assert(got[0].valid & SWS_HPACK_KNOWN);
    sws_hpack_decoder_release(&d);
}
END_TEST

/* Eviction: 4096 octets of entries of 100 (68 + 32) hold 40; the 41st
 * evicts the oldest, and index 62 is always the newest. */
START_TEST(eviction_keeps_newest)
{
    sws_hpack_decoder_t  d;
    u_char               b[128], v[68];
    size_t               n;
    int                  i;

    sws_hpack_decoder_init(&d, classify);
    for (i = 0; i < 50; i++) {
        memset(v, 'a' + i % 26, sizeof(v));
        b[0] = 0x40;
        b[1] = 1;
        b[2] = 'x';
        b[3] = 67;
        memcpy(b + 4, v, 67);
        n = 71;
        ck_assert_int_eq(decode(&d, b, n, n), 1);
        ck_assert_uint_le(d.size, 4096);
        ck_assert_uint_eq(d.count, i < 40 ? (unsigned) i + 1 : 40u);
        b[0] = 0xbe;
        ck_assert_int_eq(decode(&d, b, 1, 1), 1);
        ck_assert_uint_eq(got[0].value[0], (u_char) ('a' + i % 26));
    }
    b[0] = 0xbe + 40;                           /* index 102: past the 40 */
    ck_assert_int_eq(decode(&d, b, 1, 1), -1);
    sws_hpack_decoder_release(&d);
}
END_TEST

static Suite *
hpack_decoder_suite(void)
{
    Suite *s = suite_create("hpack_decoder");
    TCase *tc = tcase_create("decoder");

    tcase_add_test(tc, rfc_c3_raw);
    tcase_add_test(tc, rfc_c4_huffman);
    tcase_add_test(tc, huffman_every_octet);
    tcase_add_test(tc, huffman_errors);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, value_memo);
    tcase_add_test(tc, too_large_entry_keeps_its_name);
    tcase_add_test(tc, classified_once_per_entry);
    tcase_add_test(tc, eviction_keeps_newest);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(hpack_decoder_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
