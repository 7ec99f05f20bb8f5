/*
 * The differential check of the HTTP/1 field-line parsers (the client's
 * request head: sws_http_parse_request_field; an upstream's response head:
 * sws_http_parse_field_unhashed, sws_http_parse_header_line) against a
 * reference that walks the line a byte at a time, as the server's parser
 * did before it read names and values a chunk at a time. The reference
 * lives only here; its classes are written as predicates from RFC 9110
 * (tchar, field-vchar) rather than taken from the server's tables.
 *
 * fuzz_field_diff(line, len) runs every parser and the reference on the
 * line and on each of its prefixes (the line cut at every position), each
 * in a buffer of exactly its size (so that a chunk read past the end is an
 * ASan report), and aborts on any difference: the result, the name's
 * bytes and length, its hash, the value's place and length, the name's
 * class, and for the in-place parse every byte of the buffer after it
 * (lc == start: only the name may be lower-cased).
 *
 * The parsers read 16 bytes at a time with SSE2; the portable 8-byte path
 * is checked by building a target with -DSWS_HTTP_PARSE_NO_SSE2 added to
 * make fuzz's clang command line (sws_http_parse.c is compiled with it).
 */
#ifndef FUZZ_HTTP1_FIELD_REF_H
#define FUZZ_HTTP1_FIELD_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sws_http_parse.h"

/* RFC 9110 5.6.2 */
static int
ref_tchar(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* RFC 9110 5.5: field-vchar (VCHAR, obs-text), SP, HTAB */
static int
ref_field_byte(u_char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* 0 for [a-z0-9-], 1 for '_', 2 for any other tchar (lower case) */
static u_char
ref_odd(u_char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') {
        return 0;
    }
    return c == '_' ? 1 : 2;
}

/* The byte-wise parser: the same contract as sws_http_parse_request_field,
 * the hash taken from the lower-cased name. */
static sws_int_t
ref_parse_field(sws_http_header_t *h, u_char *lc, u_char *start, u_char *end, u_char *odd)
{
    u_char  *p, *l, *v, c, o = 0;

    for (p = start, l = lc; p < end && ref_tchar(*p); p++) {
        c = (*p >= 'A' && *p <= 'Z') ? (u_char) (*p | 0x20) : *p;
        *l++ = c;
        o |= ref_odd(c);
    }
    *odd = o;
    if (p == start || p == end || *p != ':') {
        return SWS_HTTP_BAD_REQUEST;
    }
    h->name.data = lc;
    h->name.len = (size_t) (p - start);
    h->hash = sws_hash_key(lc, h->name.len);

    for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* OWS */ }
    v = p;
    for ( /* void */ ; p < end; p++) {
        if (!ref_field_byte(*p)) {
            return SWS_HTTP_BAD_REQUEST;
        }
    }
    while (p > v && (p[-1] == ' ' || p[-1] == '\t')) {
        p--;
    }
    h->value.data = v;
    h->value.len = (size_t) (p - v);
    return SWS_OK;
}

static void
fuzz_field_fail(const char *what, const u_char *line, size_t len)
{
    size_t  i;

    fprintf(stderr, "field parser differs from the reference: %s on %zu bytes:", what, len);
    for (i = 0; i < len; i++) {
        fprintf(stderr, " %02x", line[i]);
    }
    fprintf(stderr, "\n");
    abort();
}

static u_char *
fuzz_field_copy(const u_char *line, size_t len)
{
    u_char  *b = malloc(len ? len : 1);

    if (b == NULL) {
        abort();
    }
    memcpy(b, line, len);
    return b;
}

/* One parser with a separate lc (exactly len bytes) against the reference's
 * result; the input must stay as it was. */
static void
fuzz_field_separate(const u_char *line, size_t len, sws_int_t ref_rc,
    const sws_http_header_t *ref, int hashed)
{
    sws_http_header_t   h;
    u_char             *src = fuzz_field_copy(line, len), *lc = fuzz_field_copy(line, len);
    sws_int_t           rc;

    memset(&h, 0, sizeof(h));
    rc = hashed ? sws_http_parse_header_line(&h, lc, src, src + len)
                : sws_http_parse_field_unhashed(&h, lc, src, src + len);
    if (rc != ref_rc) {
        fuzz_field_fail(hashed ? "header_line rc" : "unhashed rc", line, len);
    }
    if (memcmp(src, line, len) != 0) {
        fuzz_field_fail("input changed", line, len);
    }
    if (rc == SWS_OK
        && (h.name.data != lc || h.name.len != ref->name.len
            || memcmp(lc, ref->name.data, h.name.len) != 0
            || h.hash != (hashed ? ref->hash : 0)
            || h.value.data - src != ref->value.data - ref->name.data
            || h.value.len != ref->value.len))
    {
        fuzz_field_fail(hashed ? "header_line field" : "unhashed field", line, len);
    }
    free(src);
    free(lc);
}

static void
fuzz_field_diff_one(const u_char *line, size_t len)
{
    sws_http_header_t   ref, h;
    u_char             *rb = fuzz_field_copy(line, len), *nb = fuzz_field_copy(line, len);
    u_char              ref_odd_v, odd;
    sws_int_t           ref_rc, rc;

    memset(&ref, 0, sizeof(ref));
    memset(&h, 0, sizeof(h));
    ref_rc = ref_parse_field(&ref, rb, rb, rb + len, &ref_odd_v);

    /* as HTTP/1's request head: in place, with the name's class */
    odd = 0xff;
    rc = sws_http_parse_request_field(&h, nb, nb, nb + len, &odd);
    if (rc != ref_rc) {
        fuzz_field_fail("request_field rc", line, len);
    }
    if (memcmp(rb, nb, len) != 0) {
        fuzz_field_fail("request_field buffer", line, len);
    }
    if (odd != ref_odd_v) {
        fuzz_field_fail("request_field odd", line, len);
    }
    if (rc == SWS_OK
        && (h.name.data != nb || h.name.len != ref.name.len || h.hash != ref.hash
            || h.value.data - nb != ref.value.data - rb || h.value.len != ref.value.len))
    {
        fuzz_field_fail("request_field field", line, len);
    }

    /* as an upstream's response head: a separate lc, hashed or not */
    fuzz_field_separate(line, len, ref_rc, &ref, 1);
    fuzz_field_separate(line, len, ref_rc, &ref, 0);
    free(rb);
    free(nb);
}

/* The line, and the line cut at every position (a line longer than
 * FUZZ_FIELD_ALL_CUTS: at the first and last 64 only, so that the check
 * stays linear where make fuzz's 4 KiB inputs would make it quadratic). */
#define FUZZ_FIELD_ALL_CUTS  1024

static void
fuzz_field_diff(const u_char *line, size_t len)
{
    size_t  k;

    for (k = 0; k <= len; k++) {
        if (len > FUZZ_FIELD_ALL_CUTS && k == 64 && len - 64 > k) {
            k = len - 64;
        }
        fuzz_field_diff_one(line, k);
    }
}

#endif
