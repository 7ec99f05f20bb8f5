/*
 * libFuzzer target: the cache module's parsers of outside fields
 * (modules/cache/sws_cache_parse.c): Cache-Control (and its no-cache="f" /
 * private="f" field lists), Age's delta-seconds, Expires' dates in any
 * letter case, targeted fields (CDN-Cache-Control: RFC 8941 Dictionaries);
 * the normal form of Vary'd request fields (sws_cache_vary.c); a 206's
 * Content-Range (sws_cache_range.c) and the parts it adds to.
 * Whatever the bytes, nothing is read outside them, the values are in
 * their ranges, a delta is digits only, the field names are measured as
 * they are written and hold no separator, a date read reads back the same
 * once formatted, a targeted field parses the same twice and still parses
 * with one more member, a normal form is no longer than its input, its own
 * normal form, and for a set the same whatever the order, a Content-Range
 * read is one range inside its length and reads back the same once
 * printed, parts added stay sorted, apart and holding every byte added,
 * and a reference resolved against a target (an invalidating Location) is
 * a path no longer than the two, without dot segments.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sws_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_cache_control(const sws_str_t *v)
{
    sws_cache_cc_t  cc;
    u_char         *names;
    size_t          n, m, i;

    sws_cache_cc_init(&cc);
    sws_cache_cc_parse(v, &cc);
    if (cc.max_age < -1 || cc.s_maxage < -1 || cc.swr < -1 || cc.sie < -1
        || cc.min_fresh < -1 || cc.max_stale < -1)
    {
        abort();
    }
    n = sws_cache_cc_field_names(v, NULL);
    if (n > v->len + 1 || (cc.strip && n == 0)) {
        abort();
    }
    names = malloc(n ? n : 1);
    if (names == NULL) {
        return;
    }
    m = sws_cache_cc_field_names(v, names);
    if (m != n || (n && names[n - 1] != ',')) {
        abort();
    }
    for (i = 0; i < n; i++) {
        if (names[i] == '"' || names[i] == ' ' || names[i] == '\t'
            || (names[i] == ',' && (i == 0 || names[i - 1] == ',')))
        {
            abort();
        }
    }
    free(names);
}

static void
check_delta(const u_char *p, size_t len)
{
    time_t  t = sws_cache_delta(p, p + len);
    size_t  i;
    int     digit = 0;

    if (t < -1) {
        abort();
    }
    if (t >= 0) {
        for (i = 0; i < len; i++) {
            if (p[i] >= '0' && p[i] <= '9') {
                digit = 1;
            } else if (p[i] != '"' && p[i] != ' ' && p[i] != '\t') {
                abort();               /* only digits (quotes, trailing blanks) */
            }
        }
        if (!digit) {
            abort();
        }
    }
}

static void
check_date(const u_char *p, size_t len)
{
    u_char  buf[64];
    time_t  t = sws_cache_parse_date(p, len), again;

    if (t < 0) {
        return;
    }
    again = sws_cache_parse_date(buf, (size_t) (sws_http_time(buf, t) - buf));
    if (again != t) {
        abort();
    }
}

static int
same_cc(const sws_cache_cc_t *a, const sws_cache_cc_t *b)
{
    return a->max_age == b->max_age && a->s_maxage == b->s_maxage && a->swr == b->swr
           && a->sie == b->sie && a->no_store == b->no_store && a->no_cache == b->no_cache
           && a->private_ == b->private_ && a->public_ == b->public_
           && a->must_revalidate == b->must_revalidate
           && a->proxy_revalidate == b->proxy_revalidate
           && a->must_understand == b->must_understand && a->strip == b->strip;
}

static void
check_targeted(const sws_str_t *v)
{
    sws_cache_cc_t   cc, again;
    sws_str_t        more;
    u_char          *names, *names2;
    size_t           n = 0, n2 = 0, i;
    sws_int_t        rc, rc2;

    names = malloc(v->len ? v->len : 1);
    names2 = malloc(v->len + 2);
    more.data = malloc(v->len + 2);
    if (names == NULL || names2 == NULL || more.data == NULL) {
        goto done;
    }
    sws_cache_cc_init(&cc);
    rc = sws_cache_targeted_parse(v, &cc, names, &n);
    if (rc == SWS_OK) {
        if (cc.max_age < -1 || cc.s_maxage < -1 || cc.swr < -1 || cc.sie < -1
            || cc.max_age > SWS_CACHE_ANY_STALE || n > v->len || cc.strip != (n != 0)
            || (n && names[n - 1] != ','))
        {
            abort();
        }
        for (i = 0; i < n; i++) {
            if (names[i] == '"' || names[i] == ' ' || names[i] == '\t'
                || (names[i] == ',' && (i == 0 || names[i - 1] == ',')))
            {
                abort();
            }
        }
        sws_cache_cc_init(&again);
        if (sws_cache_targeted_parse(v, &again, names2, &n2) != SWS_OK
            || !same_cc(&cc, &again) || n2 != n || memcmp(names, names2, n))
        {
            abort();
        }
    } else if (rc != SWS_DECLINED) {
        abort();
    }
    /* a Dictionary with one more member parses iff it did (an empty one
     * never does: ",x") */
    memcpy(more.data, v->data, v->len);
    memcpy(more.data + v->len, ",x", 2);
    more.len = v->len + 2;
    sws_cache_cc_init(&again);
    rc2 = sws_cache_targeted_parse(&more, &again, names2, &n2);
    if ((rc == SWS_OK) != (rc2 == SWS_OK)) {
        abort();
    }
done:
    free(names);
    free(names2);
    free(more.data);
}

static size_t
vary_normal(int kind, const u_char *in, size_t len, u_char **out)
{
    u_char  *scratch = malloc(SWS_CACHE_VARY_SCRATCH(len));
    size_t   n;

    *out = malloc(len ? len : 1);
    if (scratch == NULL || *out == NULL) {
        abort();
    }
    n = sws_cache_vary_normalize(kind, in, len, *out, scratch);
    free(scratch);
    if (n > len) {
        abort();
    }
    return n;
}

static void
check_vary(const u_char *p, size_t len)
{
    u_char  *a, *b, *rev;
    size_t   n, m, i, j, k;
    int      kind, set;

    /* a name's kind, compared in line: the two set-like names in any
     * letter case, and nothing else */
    set = len == 15 && (sws_strncasecmp((u_char *) p, (u_char *) "accept-language", 15) == 0
                        || sws_strncasecmp((u_char *) p, (u_char *) "accept-encoding", 15) == 0);
    if (sws_cache_vary_kind(p, len) != (set ? SWS_CACHE_VARY_SET : SWS_CACHE_VARY_PLAIN)) {
        abort();
    }
    for (kind = SWS_CACHE_VARY_PLAIN; kind <= SWS_CACHE_VARY_SET; kind++) {
        n = vary_normal(kind, p, len, &a);
        m = vary_normal(kind, a, n, &b);
        if (m != n || memcmp(a, b, n) != 0) {
            abort();                   /* the normal form is its own */
        }
        free(b);
        if (kind == SWS_CACHE_VARY_SET && memchr(p, '"', len) == NULL) {
            /* the elements the other way round: the same set */
            rev = malloc(len ? len : 1);
            if (rev == NULL) {
                abort();
            }
            for (i = len, k = 0; ; ) {
                for (j = i; j > 0 && p[j - 1] != ','; j--) {
                    /* void */
                }
                memcpy(rev + k, p + j, i - j);
                k += i - j;
                if (j == 0) {
                    break;
                }
                rev[k++] = ',';
                i = j - 1;
            }
            m = vary_normal(kind, rev, len, &b);
            if (m != n || memcmp(a, b, n) != 0) {
                abort();
            }
            free(b);
            free(rev);
        }
        free(a);
    }
}

/* The parts the bytes make, two numbers a part (below 4096 each), added
 * one by one: sorted, apart, each added one held whole. */
static void
check_parts(const u_char *p, size_t len)
{
    sws_cache_part_t  parts[SWS_CACHE_MAX_PARTS + 1], add;
    sws_uint_t        n = 0, i;
    size_t            k;

    for (k = 0; k + 4 <= len && n < SWS_CACHE_MAX_PARTS; k += 4) {
        add.start = (uint64_t) ((p[k] << 4) | (p[k + 1] >> 4));
        add.end = add.start + 1 + (uint64_t) (((p[k + 2] & 0x0f) << 8) | p[k + 3]);
        n = sws_cache_parts_add(parts, n, &add);
        for (i = 0; i < n; i++) {
            if (parts[i].start >= parts[i].end || (i && parts[i].start <= parts[i - 1].end)) {
                abort();
            }
        }
        if (sws_cache_parts_cover(parts, n, add.start, add.end) == NULL) {
            abort();
        }
    }
}

static void
check_content_range(const u_char *p, size_t len)
{
    sws_cache_part_t  part, again;
    uint64_t          total, total2;
    char              buf[96];
    int               n;

    if (sws_cache_content_range(p, len, &part, &total) != SWS_OK) {
        return;
    }
    if (part.start >= part.end || part.end > total || total > ((uint64_t) 1 << 62)) {
        abort();
    }
    n = snprintf(buf, sizeof(buf), "bytes %llu-%llu/%llu", (unsigned long long) part.start,
                 (unsigned long long) part.end - 1, (unsigned long long) total);
    if (sws_cache_content_range((u_char *) buf, (size_t) n, &again, &total2) != SWS_OK
        || again.start != part.start || again.end != part.end || total2 != total)
    {
        abort();
    }
}

/* The input cut in two at its first NUL: a request target and a relative
 * reference (a Location the cache invalidates), as the cache sees them. */
static void
check_resolve(const u_char *p, size_t len)
{
    const u_char  *nul = memchr(p, '\0', len), *ref, *seg, *end;
    size_t         tlen, rlen, n;
    u_char        *out;

    if (nul == NULL) {
        return;
    }
    tlen = (size_t) (nul - p);
    ref = nul + 1;
    rlen = len - tlen - 1;
    out = malloc(tlen + rlen + 1);
    if (out == NULL) {
        return;
    }
    n = sws_cache_ref_resolve(p, tlen, ref, rlen, out);
    if (n > tlen + rlen + 1 || (n == 0) != (tlen == 0 || p[0] != '/')
        || (n && out[0] != '/'))
    {
        abort();
    }
    if (n && rlen && ref[0] != '?' && memchr(ref, '?', rlen) == NULL
        && memchr(p, '?', tlen) == NULL)
    {
        /* a merged path: no "." or ".." segment is left */
        for (end = out + n, seg = out; seg < end; ) {
            const u_char *s = ++seg;

            while (seg < end && *seg != '/') {
                seg++;
            }
            if ((seg - s == 1 && s[0] == '.') || (seg - s == 2 && s[0] == '.' && s[1] == '.')) {
                abort();
            }
        }
    }
    free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char     *copy;
    sws_str_t   v;

    /* an exact-size copy, so that a read past the end is caught */
    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    v.data = copy;
    v.len = size;
    check_cache_control(&v);
    check_delta(copy, size);
    check_date(copy, size);
    check_targeted(&v);
    check_vary(copy, size);
    check_content_range(copy, size);
    check_parts(copy, size);
    check_resolve(copy, size);
    free(copy);
    return 0;
}
