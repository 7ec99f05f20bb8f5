/*
 * Vary (RFC 9111 4.1): the normal form of a request field's value before it
 * selects a variant, so that two requests a browser would call the same
 * find the same stored response.
 *
 *   Accept-Language, Accept-Encoding: a set of values with their q-values.
 *       Case, order, whitespace, repeats and "q=1" are not significant;
 *       "fr;q=0.50" is "fr;q=0.5". (A value with a quote in it: as below.)
 *   any other field: whitespace before, after, and around commas outside
 *       quoted strings is not significant; all else is.
 *
 * Several lines of a field are one list joined by ","; the caller joins
 * them. No request or shared state here: tests/fuzz/fuzz_cache_parse.c
 * drives it with any bytes.
 */
#include <stdlib.h>
#include "sws_cache.h"

/* [p, p + n) equals the lower-case lc, without case. (Inline: every
 * Vary'd hit asks for each of its names; a call of sws_strncasecmp per
 * name cost more than its normal form.) */
static int
sws_cache_vary_lc_eq(const u_char *p, const char *lc, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (sws_tolower(p[i]) != (u_char) lc[i]) {
            return 0;
        }
    }
    return 1;
}

int
sws_cache_vary_kind(const u_char *name, size_t len)
{
    if (len == 15 && sws_cache_vary_lc_eq(name, "accept-", 7)
        && (sws_cache_vary_lc_eq(name + 7, "language", 8)
            || sws_cache_vary_lc_eq(name + 7, "encoding", 8)))
    {
        return SWS_CACHE_VARY_SET;
    }
    return SWS_CACHE_VARY_PLAIN;
}

static int
sws_cache_vary_ows(u_char c)
{
    return c == ' ' || c == '\t';
}

/* Whitespace trimmed and dropped around commas outside quoted strings. */
static size_t
sws_cache_vary_plain(const u_char *in, size_t len, u_char *out)
{
    const u_char  *p = in, *last = in + len;
    u_char        *w = out;
    size_t         pending = 0;   /* whitespace seen, not written yet */
    int            quoted = 0;

    while (p < last && sws_cache_vary_ows(*p)) {
        p++;
    }
    for ( ; p < last; p++) {
        if (quoted) {
            *w++ = *p;
            if (*p == '\\' && p + 1 < last) {
                *w++ = *++p;
            } else if (*p == '"') {
                quoted = 0;
            }
            continue;
        }
        if (sws_cache_vary_ows(*p)) {
            pending++;
            continue;
        }
        if (*p == ',') {
            pending = 0;               /* none before a comma */
            *w++ = ',';
            while (p + 1 < last && sws_cache_vary_ows(p[1])) {
                p++;                   /* nor after it */
            }
            continue;
        }
        /* whitespace inside a value stays as it came */
        for ( ; pending; pending--) {
            *w++ = p[-(ptrdiff_t) pending];
        }
        if (*p == '"') {
            quoted = 1;
        }
        *w++ = *p;
    }
    return (size_t) (w - out);
}

/* A qvalue ("0", "0.5", "1.000"): thousandths, or -1. */
static int
sws_cache_vary_qvalue(const u_char *p, size_t len)
{
    int     q, scale = 100;
    size_t  i;

    if (len == 0 || (p[0] != '0' && p[0] != '1') || (len > 1 && p[1] != '.') || len > 5) {
        return -1;
    }
    q = (p[0] - '0') * 1000;
    for (i = 2; i < len; i++, scale /= 10) {
        if (p[i] < '0' || p[i] > '9') {
            return -1;
        }
        q += (p[i] - '0') * scale;
    }
    return q <= 1000 ? q : -1;
}

/*
 * One element of a set-like list, from *pp to the next ',' (or last),
 * canonical at w: the value lower case and trimmed, then its parameters
 * lower case without whitespace, where a lone valid q is written in its
 * shortest form (q=1: none). One pass; *pp is left at the ',' or last.
 * Returns its length (at most the element's).
 */
static size_t
sws_cache_vary_element(const u_char **pp, const u_char *last, u_char *w)
{
    const u_char  *p = *pp;
    u_char        *start = w, *end = w, *params;
    int            q;

    while (p < last && sws_cache_vary_ows(*p)) {
        p++;
    }
    for ( ; p < last && *p != ';' && *p != ','; p++) {
        *w++ = sws_tolower(*p);
        if (!sws_cache_vary_ows(*p)) {
            end = w;                   /* whitespace at its end goes */
        }
    }
    w = end;
    if (p == last || *p == ',') {
        *pp = p;
        return (size_t) (w - start);
    }
    params = w;
    for ( ; p < last && *p != ','; p++) {
        if (!sws_cache_vary_ows(*p)) {
            *w++ = sws_tolower(*p);
        }
    }
    *pp = p;
    /* params: ";q=0.50" */
    if (w - params >= 4 && params[1] == 'q' && params[2] == '=') {
        q = sws_cache_vary_qvalue(params + 3, (size_t) (w - params - 3));
        if (q == 1000) {
            w = params;
        } else if (q >= 0) {
            w = params + 3;
            *w++ = '0';
            if (q) {
                *w++ = '.';
                *w++ = (u_char) ('0' + q / 100);
                if (q % 100) {
                    *w++ = (u_char) ('0' + q / 10 % 10);
                    if (q % 10) {
                        *w++ = (u_char) ('0' + q % 10);
                    }
                }
            }
        }
    }
    return (size_t) (w - start);
}

/* memcmp's order, in line: the elements are a few bytes ("gzip", "fr"),
 * and a browser's values take a dozen comparisons each */
static int
sws_cache_vary_cmp(const void *a, const void *b)
{
    const sws_cache_vary_elt_t *x = a, *y = b;
    size_t                      n = x->len < y->len ? x->len : y->len, i;

    for (i = 0; i < n; i++) {
        if (x->p[i] != y->p[i]) {
            return x->p[i] < y->p[i] ? -1 : 1;
        }
    }
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The set's elements canonical, sorted, each once. */
static size_t
sws_cache_vary_set(const u_char *in, size_t len, u_char *out, u_char *scratch)
{
    sws_cache_vary_elt_t  *e;
    const u_char          *p = in, *last = in + len;
    u_char                *w = scratch, *o = out;
    size_t                 n = 0, i, j, l;

    /* the descriptors after the canonical bytes, aligned */
    e = (sws_cache_vary_elt_t *) (scratch + sws_align(len, sizeof(void *)));
    for ( ;; ) {
        l = sws_cache_vary_element(&p, last, w);
        if (l) {                       /* empty elements do not count */
            e[n].p = w;
            e[n++].len = l;
            w += l;
        }
        if (p == last) {
            break;
        }
        p++;                           /* the ',' */
    }
    if (n > 16) {
        qsort(e, n, sizeof(*e), sws_cache_vary_cmp);
    } else {
        /* a browser's few values: in place, no call per comparison */
        for (i = 1; i < n; i++) {
            sws_cache_vary_elt_t  x = e[i];

            for (j = i; j > 0 && sws_cache_vary_cmp(&e[j - 1], &x) > 0; j--) {
                e[j] = e[j - 1];
            }
            e[j] = x;
        }
    }
    for (i = 0; i < n; i++) {
        if (i && sws_cache_vary_cmp(&e[i - 1], &e[i]) == 0) {
            continue;
        }
        if (o > out) {
            *o++ = ',';
        }
        o = sws_cpymem(o, e[i].p, e[i].len);
    }
    return (size_t) (o - out);
}

size_t
sws_cache_vary_normalize(int kind, const u_char *in, size_t len, u_char *out, u_char *scratch)
{
    if (kind == SWS_CACHE_VARY_SET && (len == 0 || memchr(in, '"', len) == NULL)) {
        return sws_cache_vary_set(in, len, out, scratch);
    }
    return sws_cache_vary_plain(in, len, out);
}
