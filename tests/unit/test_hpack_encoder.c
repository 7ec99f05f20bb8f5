/*
 * Our HPACK encoder (src/http/sws_hpack_encoder.c) against nghttp2's
 * decoder: every block encoded here is decoded there and must give back
 * the same fields in the same order, with the two dynamic tables the same
 * size after each block. Random field lists (repeated values that get
 * indexed, fields that evict others, empty and huge values, every octet
 * for the Huffman code, names in mixed case) go through table size changes
 * (SETTINGS_HEADER_TABLE_SIZE down to 0 and up again), the table given
 * back while idle, and the Huffman code on and off; and the representations
 * we promise are checked octet by octet (:status 200 in one octet, a
 * second ETag as an index, Set-Cookie never indexed, RFC 7541 C.4.1's
 * Huffman example).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>

#include "sws_hpack_encoder.h"

#define MAX_FIELDS  64
#define BUF_SIZE    (256 * 1024)

typedef struct {
    u_char  name[300];
    size_t  nlen;
    u_char  value[20000];
    size_t  vlen;
    int     never;       /* decoded with NGHTTP2_NV_FLAG_NO_INDEX */
} field_t;

static u_char  block[BUF_SIZE];
static field_t got[MAX_FIELDS];

/* Decode block[0..len) with d: the number of fields (into got), -1 when
 * nghttp2 refuses the block. */
static int
inflate(nghttp2_hd_inflater *d, const u_char *in, size_t len)
{
    nghttp2_nv  nv;
    int         flags, n = 0;
    ssize_t     rv;

    for ( ;; ) {
        flags = 0;
        rv = nghttp2_hd_inflate_hd2(d, &nv, &flags, in, len, 1);
        if (rv < 0) {
            return -1;
        }
        in += rv;
        len -= (size_t) rv;
        if (flags & NGHTTP2_HD_INFLATE_EMIT) {
            if (n == MAX_FIELDS || nv.namelen > sizeof(got[n].name)
                || nv.valuelen > sizeof(got[n].value))
            {
                return -1;
            }
            memcpy(got[n].name, nv.name, nv.namelen);
            got[n].nlen = nv.namelen;
            memcpy(got[n].value, nv.value, nv.valuelen);
            got[n].vlen = nv.valuelen;
            got[n].never = (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) != 0;
            n++;
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(d);
            return n;
        }
        if (rv == 0 && len == 0) {
            return -1;
        }
    }
}

static nghttp2_hd_inflater *
new_inflater(void)
{
    nghttp2_hd_inflater *d;

    ck_assert_int_eq(nghttp2_hd_inflate_new(&d), 0);
    return d;
}

/* ---- representations ---- */

START_TEST(status_indexed)
{
    sws_hpack_encoder_t  e;
    static const struct { sws_uint_t status; u_char octet; } indexed[] = {
        { 200, 0x88 }, { 204, 0x89 }, { 206, 0x8a }, { 304, 0x8b }, { 400, 0x8c },
        { 404, 0x8d }, { 500, 0x8e }
    };
    nghttp2_hd_inflater *d = new_inflater();
    u_char              *p;
    size_t               i;

    sws_hpack_encoder_init(&e, 4096);
    for (i = 0; i < sizeof(indexed) / sizeof(indexed[0]); i++) {
        p = sws_hpack_encode_begin(&e, block);
        p = sws_hpack_encode_status(&e, p, indexed[i].status);
        ck_assert_int_eq(p - block, 1);
        ck_assert_int_eq(block[0], indexed[i].octet);
    }
    /* another status: a literal with the name :status (8) indexed, then
     * one octet for the same status again */
    p = sws_hpack_encode_status(&e, block, 302);
    ck_assert_int_eq(block[0], 0x48);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert_int_eq(got[0].vlen, 3);
    ck_assert(memcmp(got[0].name, ":status", 7) == 0 && memcmp(got[0].value, "302", 3) == 0);
    p = sws_hpack_encode_status(&e, block, 302);
    ck_assert_int_eq(p - block, 1);
    ck_assert_int_eq(block[0], 0x80 | 62);
    ck_assert_int_eq(inflate(d, block, 1), 1);
    ck_assert(memcmp(got[0].value, "302", 3) == 0);
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

START_TEST(etag_indexed_second_time)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    const u_char        *etag = (u_char *) "\"66c3a1f2-d\"";
    u_char              *p;
    int                  round;

    sws_hpack_encoder_init(&e, 4096);
    for (round = 0; round < 3; round++) {
        p = sws_hpack_encode_begin(&e, block);
        p = sws_hpack_encode_field(&e, p, SWS_HPACK_ETAG, (u_char *) "etag", 4, etag, 12,
                                   SWS_HPACK_INDEX);
        if (round == 0) {
            ck_assert_int_eq(block[0], 0x40 | SWS_HPACK_ETAG);   /* indexed name, added */
        } else {
            ck_assert_int_eq(p - block, 1);
            ck_assert_int_eq(block[0], 0x80 | 62);
        }
        ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
        ck_assert(got[0].vlen == 12 && memcmp(got[0].value, etag, 12) == 0);
        ck_assert_int_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    }
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

/* The memo: kept while the table does not change, gone when an entry is
 * added or evicted, the capacity changes or the table is released; not
 * kept for a block whose fields changed the table. */
START_TEST(memo_while_table_unchanged)
{
    sws_hpack_encoder_t  e;
    const u_char        *key = (u_char *) "k1", *b;
    const u_char         oct[] = { 0xbe };
    uint32_t             changes;
    size_t               n = 0;
    u_char              *p;

    sws_hpack_encoder_init(&e, 4096);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));      /* no table yet */
    changes = e.changes;
    p = sws_hpack_encode_field(&e, block, SWS_HPACK_ETAG, (u_char *) "etag", 4,
                               (u_char *) "\"a\"", 3, SWS_HPACK_INDEX);
    ck_assert_int_ne(changes, e.changes);                          /* added */
    sws_hpack_memo_put(&e, changes, key, 2, block, (size_t) (p - block));
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));      /* not kept */
    changes = e.changes;
    sws_hpack_memo_put(&e, changes, key, 2, oct, 1);
    b = sws_hpack_memo_get(&e, key, 2, &n);
    ck_assert_ptr_nonnull(b);
    ck_assert(n == 1 && b[0] == 0xbe);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, (u_char *) "k2", 2, &n));   /* another key */
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 1, &n));
    /* an entry added: gone */
    sws_hpack_encode_field(&e, block, SWS_HPACK_ETAG, (u_char *) "etag", 4,
                           (u_char *) "\"b\"", 3, SWS_HPACK_INDEX);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));
    /* a field found in the table changes nothing: kept */
    sws_hpack_memo_put(&e, e.changes, key, 2, oct, 1);
    sws_hpack_encode_field(&e, block, SWS_HPACK_ETAG, (u_char *) "etag", 4,
                           (u_char *) "\"b\"", 3, SWS_HPACK_INDEX);
    ck_assert_ptr_nonnull(sws_hpack_memo_get(&e, key, 2, &n));
    /* the capacity changed: gone */
    sws_hpack_encoder_set_limit(&e, 2048);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));
    /* released: gone (and no table to keep one in) */
    sws_hpack_memo_put(&e, e.changes, key, 2, oct, 1);
    ck_assert_ptr_nonnull(sws_hpack_memo_get(&e, key, 2, &n));
    sws_hpack_encoder_release(&e);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));
    sws_hpack_memo_put(&e, e.changes, key, 2, oct, 1);
    ck_assert_ptr_null(sws_hpack_memo_get(&e, key, 2, &n));
}
END_TEST

START_TEST(sensitive_never_indexed)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    u_char              *p;
    int                  n;

    sws_hpack_encoder_init(&e, 4096);
    p = sws_hpack_encode_begin(&e, block);
    p = sws_hpack_encode_header(&e, p, (u_char *) "Set-Cookie", 10, (u_char *) "a=b", 3);
    /* 0001 with the index 55 in four bits: 15, then 40 */
    ck_assert_int_eq(block[0], 0x1f);
    ck_assert_int_eq(block[1], 55 - 15);
    p = sws_hpack_encode_header(&e, p, (u_char *) "Location", 8, (u_char *) "/x", 2);
    p = sws_hpack_encode_header(&e, p, (u_char *) "X-Secret-Name", 13, (u_char *) "v", 1);
    n = inflate(d, block, (size_t) (p - block));
    ck_assert_int_eq(n, 3);
    ck_assert(got[0].never && memcmp(got[0].name, "set-cookie", 10) == 0);
    ck_assert(!got[1].never && memcmp(got[1].name, "location", 8) == 0);
    ck_assert(memcmp(got[2].name, "x-secret-name", 13) == 0);
    /* only the last went into the table */
    ck_assert_int_eq(e.size, 13 + 1 + 32);
    ck_assert_int_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    /* a second one refers to the entry; a new value of the name to its name */
    p = sws_hpack_encode_header(&e, block, (u_char *) "x-secret-name", 13, (u_char *) "v", 1);
    ck_assert_int_eq(p - block, 1);
    p = sws_hpack_encode_header(&e, block, (u_char *) "X-SECRET-NAME", 13, (u_char *) "w", 1);
    ck_assert_int_eq(block[0], 0x40 | 62);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert(got[0].vlen == 1 && got[0].value[0] == 'w');
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

START_TEST(huffman_rfc_example)
{
    static const u_char want[] = {
        0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff
    };
    u_char *end;

    ck_assert_int_eq(sws_hpack_huffman_len((u_char *) "www.example.com", 15), 12);
    end = sws_hpack_huffman_encode(block, (u_char *) "www.example.com", 15);
    ck_assert_int_eq(end - block, 12);
    ck_assert(memcmp(block, want, 12) == 0);
}
END_TEST

/* RFC 7541 Appendix A's names, by index */
static const char *static_names[62] = {
    "", ":authority", ":method", ":method", ":path", ":path", ":scheme", ":scheme",
    ":status", ":status", ":status", ":status", ":status", ":status", ":status",
    "accept-charset", "accept-encoding", "accept-language", "accept-ranges", "accept",
    "access-control-allow-origin", "age", "allow", "authorization", "cache-control",
    "content-disposition", "content-encoding", "content-language", "content-length",
    "content-location", "content-range", "content-type", "cookie", "date", "etag", "expect",
    "expires", "from", "host", "if-match", "if-modified-since", "if-none-match", "if-range",
    "if-unmodified-since", "last-modified", "link", "location", "max-forwards",
    "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh", "retry-after",
    "server", "set-cookie", "strict-transport-security", "transfer-encoding", "user-agent",
    "vary", "via", "www-authenticate"
};

/* Each static name in lower, upper and mixed case is its first index; a
 * name one octet off (also by 0x20 where that is no letter's case) is
 * not. */
START_TEST(static_names_any_case)
{
    u_char      name[64];
    size_t      n, i, k;
    sws_uint_t  first, got_index;
    static const u_char swaps[] = { 0x20, 0x01, 0x80 };

    for (i = 1; i <= 61; i++) {
        n = strlen(static_names[i]);
        for (first = 1; strcmp(static_names[first], static_names[i]) != 0; first++) { }
        memcpy(name, static_names[i], n);
        ck_assert_uint_eq(sws_hpack_static_name(name, n), first);
        for (k = 0; k < n; k++) {
            if (name[k] >= 'a' && name[k] <= 'z') {
                name[k] = (u_char) (name[k] - 32 * (k % 2 || i % 3 == 0));
            }
        }
        ck_assert_uint_eq(sws_hpack_static_name(name, n), first);
        for (k = 0; k < n; k++) {
            size_t j;

            for (j = 0; j < sizeof(swaps); j++) {
                u_char keep = name[k];

                name[k] ^= swaps[j];
                got_index = sws_hpack_static_name(name, n);
                if ((keep | 0x20) >= 'a' && (keep | 0x20) <= 'z' && swaps[j] == 0x20) {
                    ck_assert_uint_eq(got_index, first);       /* the other case */
                } else {
                    ck_assert_msg(got_index == 0 || strcmp(static_names[got_index],
                                                           static_names[i]) != 0,
                                  "%s with octet %zu ^ %#x", static_names[i], k, swaps[j]);
                }
                name[k] = keep;
            }
        }
        ck_assert_uint_eq(sws_hpack_static_name(name, n - 1),
                          sws_hpack_static_name((u_char *) static_names[i], n - 1));
    }
    ck_assert_uint_eq(sws_hpack_static_name((u_char *) "", 0), 0);
    ck_assert_uint_eq(sws_hpack_static_name((u_char *) "x-custom-field", 14), 0);
}
END_TEST

/* The peer's SETTINGS_HEADER_TABLE_SIZE to 0: the next block says so,
 * and nothing is indexed after; back to 4096: the block says that. */
START_TEST(table_size_zero)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    u_char              *p;
    size_t               first;

    sws_hpack_encoder_init(&e, 4096);
    p = sws_hpack_encode_begin(&e, block);
    p = sws_hpack_encode_field(&e, p, SWS_HPACK_SERVER, (u_char *) "server", 6,
                               (u_char *) "scalws", 6, SWS_HPACK_INDEX);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert_int_eq(e.size, 6 + 6 + 32);

    sws_hpack_encoder_set_limit(&e, 0);
    ck_assert_int_eq(nghttp2_hd_inflate_change_table_size(d, 0), 0);
    ck_assert_int_eq(e.size, 0);
    p = sws_hpack_encode_begin(&e, block);
    ck_assert_int_eq(p - block, 1);
    ck_assert_int_eq(block[0], 0x20);
    p = sws_hpack_encode_field(&e, p, SWS_HPACK_SERVER, (u_char *) "server", 6,
                               (u_char *) "scalws", 6, SWS_HPACK_INDEX);
    ck_assert(block[1] == 0x0f && block[2] == SWS_HPACK_SERVER - 15);  /* without indexing */
    first = (size_t) (p - block);
    ck_assert_int_eq(inflate(d, block, first), 1);
    p = sws_hpack_encode_begin(&e, block);
    p = sws_hpack_encode_field(&e, p, SWS_HPACK_SERVER, (u_char *) "server", 6,
                               (u_char *) "scalws", 6, SWS_HPACK_INDEX);
    ck_assert_int_eq((size_t) (p - block), first - 1);       /* the same, no update */
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert_int_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), 0);
    ck_assert(e.table == NULL);

    /* 0 then 4096 before the next block: one update says 4096 */
    sws_hpack_encoder_set_limit(&e, 4096);
    ck_assert_int_eq(nghttp2_hd_inflate_change_table_size(d, 4096), 0);
    p = sws_hpack_encode_begin(&e, block);
    ck_assert_int_eq(p - block, 3);
    ck_assert(block[0] == 0x3f && block[1] == 0xe1 && block[2] == 0x1f);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 0);
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

/* Down and up between two blocks: the smallest, then the last (6.3). */
START_TEST(table_size_down_and_up)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    u_char              *p;

    sws_hpack_encoder_init(&e, 4096);
    p = sws_hpack_encode_begin(&e, block);
    p = sws_hpack_encode_header(&e, p, (u_char *) "x-a", 3, (u_char *) "1", 1);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    sws_hpack_encoder_set_limit(&e, 10);
    sws_hpack_encoder_set_limit(&e, 2000);
    ck_assert_int_eq(nghttp2_hd_inflate_change_table_size(d, 2000), 0);
    ck_assert_int_eq(e.size, 0);
    p = sws_hpack_encode_begin(&e, block);
    ck_assert_int_eq(block[0], 0x20 | 10);
    ck_assert_int_eq(block[1], 0x3f);
    p = sws_hpack_encode_header(&e, p, (u_char *) "x-a", 3, (u_char *) "1", 1);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert_int_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

/* Given back while idle: the next block empties the decoder's table
 * (size 0), then sets the size again, and the fields are added anew. */
START_TEST(release_empties_peer)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    u_char              *p;

    sws_hpack_encoder_init(&e, 4096);
    p = sws_hpack_encode_begin(&e, block);
    p = sws_hpack_encode_field(&e, p, SWS_HPACK_ETAG, (u_char *) "etag", 4, (u_char *) "\"a\"",
                               3, SWS_HPACK_INDEX);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    sws_hpack_encoder_release(&e);
    ck_assert(e.table == NULL);
    p = sws_hpack_encode_begin(&e, block);
    ck_assert_int_eq(p - block, 4);
    ck_assert(block[0] == 0x20 && block[1] == 0x3f);
    p = sws_hpack_encode_field(&e, p, SWS_HPACK_ETAG, (u_char *) "etag", 4, (u_char *) "\"a\"",
                               3, SWS_HPACK_INDEX);
    ck_assert_int_eq(block[4], 0x40 | SWS_HPACK_ETAG);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    ck_assert_int_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    ck_assert_int_eq(e.size, 4 + 3 + 32);
    /* a table never used: nothing to say */
    sws_hpack_encoder_release(&e);
    sws_hpack_encoder_init(&e, 4096);
    sws_hpack_encoder_release(&e);
    ck_assert_int_eq(sws_hpack_encode_begin(&e, block) - block, 0);
    nghttp2_hd_inflate_del(d);
}
END_TEST

/* ---- random round trips ---- */

static uint64_t rng_state;

static uint32_t
rng(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t) (rng_state >> 33);
}

static const char *names[] = {
    "server", "content-type", "etag", "last-modified", "date", "content-length",
    "cache-control", "vary", "set-cookie", "location", "age", "x-request-id",
    "X-Custom", "x-custom", "Accept-Ranges", "link", "x-a", "x-bb", "content-range",
    "Authorization", "strict-transport-security", "x-frame-options", "alt-svc", ":status"
};

/* A value: from a small set (so that entries repeat), random octets, empty,
 * or long enough to go unindexed or to evict the rest. */
static size_t
random_value(u_char *v)
{
    static const char *common[] = {
        "\"66c3a1f2-d\"", "text/html", "scalws", "Sat, 05 Dec 2026 10:00:00 GMT", "13",
        "no-cache", "accept-encoding", "bytes", "1", "", "max-age=31536000"
    };
    size_t n, i;

    switch (rng() % 8) {
    case 0: case 1: case 2: case 3:
        strcpy((char *) v, common[rng() % (sizeof(common) / sizeof(common[0]))]);
        return strlen((char *) v);
    case 4:
        n = rng() % 40;
        for (i = 0; i < n; i++) {
            v[i] = (u_char) rng();          /* every octet, long codes too */
        }
        return n;
    case 5:
        n = rng() % 40;
        for (i = 0; i < n; i++) {
            v[i] = (u_char) ('a' + rng() % 26);
        }
        return n;
    case 6:
        return 0;
    default:
        n = (rng() % 2) ? 1500 + rng() % 1200 : 4000 + rng() % 15000;
        for (i = 0; i < n; i++) {
            v[i] = (u_char) ('0' + rng() % 64);
        }
        return n;
    }
}

static field_t want[MAX_FIELDS];

START_TEST(random_round_trips)
{
    static const uint32_t limits[] = { 0, 40, 100, 256, 1000, 4096, 4096, 4096, 8192, 1 << 20 };
    sws_hpack_encoder_t   e;
    nghttp2_hd_inflater  *d = new_inflater();
    u_char               *p, lower[300];
    size_t                bound, i, k;
    int                   blocks, n, j;
    sws_uint_t            status;

    rng_state = 0x5eed0000u + (uint64_t) _i;
    sws_hpack_encoder_init(&e, 4096);
    for (blocks = 0; blocks < 400; blocks++) {
        if (rng() % 16 == 0) {
            /* the peer's SETTINGS, acknowledged before our next block */
            uint32_t limit = limits[rng() % (sizeof(limits) / sizeof(limits[0]))];

            sws_hpack_encoder_set_limit(&e, limit);
            ck_assert_int_eq(nghttp2_hd_inflate_change_table_size(d, limit), 0);
        }
        if (rng() % 32 == 0) {
            sws_hpack_encoder_release(&e);
        }
        e.raw = rng() % 4 == 0;
        n = (int) (rng() % 12);
        p = sws_hpack_encode_begin(&e, block);
        bound = SWS_HPACK_BLOCK_BOUND;
        k = 0;
        if (rng() % 2) {
            static const sws_uint_t statuses[] = { 200, 204, 206, 304, 400, 404, 500, 302, 999,
                                                   100, 103 };
            status = statuses[rng() % (sizeof(statuses) / sizeof(statuses[0]))];
            p = sws_hpack_encode_status(&e, p, status);
            memcpy(want[k].name, ":status", 7);
            want[k].nlen = 7;
            snprintf((char *) want[k].value, 4, "%03u", (unsigned) status);
            want[k].vlen = 3;
            want[k].never = 0;
            k++;
            bound += sws_hpack_field_bound(7, 3);
        }
        for (j = 0; j < n; j++, k++) {
            const char *name = names[rng() % (sizeof(names) / sizeof(names[0]))];
            size_t      nlen = strlen(name);
            u_char     *before = p;

            want[k].vlen = random_value(want[k].value);
            for (i = 0; i < nlen; i++) {
                lower[i] = (u_char) (name[i] >= 'A' && name[i] <= 'Z' ? name[i] | 0x20 : name[i]);
            }
            memcpy(want[k].name, lower, nlen);
            want[k].nlen = nlen;
            if (rng() % 2 || name[0] == ':') {
                sws_hpack_index_e how = (sws_hpack_index_e) (rng() % 3);

                p = sws_hpack_encode_field(&e, p,
                                           rng() % 2 ? sws_hpack_static_name(lower, nlen) : 0,
                                           lower, nlen, want[k].value, want[k].vlen, how);
                want[k].never = how == SWS_HPACK_NEVER_INDEX;
            } else {
                p = sws_hpack_encode_header(&e, p, (u_char *) name, nlen, want[k].value,
                                            want[k].vlen);
                want[k].never = (nlen == 10 && memcmp(lower, "set-cookie", 10) == 0)
                                || (nlen == 13 && memcmp(lower, "authorization", 13) == 0);
            }
            ck_assert_uint_le((size_t) (p - before),
                              sws_hpack_field_bound(nlen, want[k].vlen));
            bound += sws_hpack_field_bound(nlen, want[k].vlen);
        }
        ck_assert_uint_le((size_t) (p - block), bound);
        ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), (int) k);
        for (i = 0; i < k; i++) {
            ck_assert_uint_eq(got[i].nlen, want[i].nlen);
            ck_assert_uint_eq(got[i].vlen, want[i].vlen);
            ck_assert(memcmp(got[i].name, want[i].name, want[i].nlen) == 0);
            ck_assert(memcmp(got[i].value, want[i].value, want[i].vlen) == 0);
            ck_assert_int_eq(got[i].never, want[i].never);
        }
        ck_assert_uint_le(e.size, e.capacity);
        ck_assert_uint_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    }
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

/* Many distinct fields: the table stays within its capacity, evicting the
 * oldest, and what is left is still found (one octet each). */
START_TEST(eviction_keeps_newest)
{
    sws_hpack_encoder_t  e;
    nghttp2_hd_inflater *d = new_inflater();
    u_char               v[16], *p;
    int                  i, len;

    sws_hpack_encoder_init(&e, 4096);
    for (i = 0; i < 1000; i++) {
        len = snprintf((char *) v, sizeof(v), "\"%d\"", i);
        p = sws_hpack_encode_begin(&e, block);
        p = sws_hpack_encode_field(&e, p, SWS_HPACK_ETAG, (u_char *) "etag", 4, v,
                                   (size_t) len, SWS_HPACK_INDEX);
        ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
        ck_assert_uint_le(e.size, 4096);
        ck_assert_uint_eq(nghttp2_hd_inflate_get_dynamic_table_size(d), e.size);
    }
    /* the newest ones are references now; the first ones are gone */
    for (i = 999; i > 960; i--) {
        len = snprintf((char *) v, sizeof(v), "\"%d\"", i);
        p = sws_hpack_encode_field(&e, block, SWS_HPACK_ETAG, (u_char *) "etag", 4, v,
                                   (size_t) len, SWS_HPACK_INDEX);
        ck_assert_int_eq(p - block, block[0] < 0xff ? 1 : 2);
        ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
        ck_assert(got[0].vlen == (size_t) len && memcmp(got[0].value, v, (size_t) len) == 0);
    }
    p = sws_hpack_encode_field(&e, block, SWS_HPACK_ETAG, (u_char *) "etag", 4,
                               (u_char *) "\"0\"", 3, SWS_HPACK_INDEX);
    ck_assert_int_eq(block[0], 0x40 | SWS_HPACK_ETAG);
    ck_assert_int_eq(inflate(d, block, (size_t) (p - block)), 1);
    sws_hpack_encoder_release(&e);
    nghttp2_hd_inflate_del(d);
}
END_TEST

static Suite *
hpack_suite(void)
{
    Suite *s = suite_create("hpack_encoder");
    TCase *tc = tcase_create("representations");

    tcase_add_test(tc, status_indexed);
    tcase_add_test(tc, etag_indexed_second_time);
    tcase_add_test(tc, sensitive_never_indexed);
    tcase_add_test(tc, huffman_rfc_example);
    tcase_add_test(tc, static_names_any_case);
    suite_add_tcase(s, tc);

    tc = tcase_create("table");
    tcase_add_test(tc, table_size_zero);
    tcase_add_test(tc, table_size_down_and_up);
    tcase_add_test(tc, release_empties_peer);
    tcase_add_test(tc, memo_while_table_unchanged);
    tcase_add_test(tc, eviction_keeps_newest);
    suite_add_tcase(s, tc);

    tc = tcase_create("round_trip");
    tcase_add_loop_test(tc, random_round_trips, 0, 16);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(hpack_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
