/*
 * A 206's Content-Range (RFC 9110 14.4), which comes from the origin and
 * is outside input (fuzzed: tests/fuzz/fuzz_cache_parse.c), and the
 * arithmetic of a partial entry's parts: adding one, finding the one that
 * holds a range.
 */
#include "sws_cache.h"

/* Digits at *p (at least one, no sign), at most 2^62: else -1. */
static int64_t
sws_cache_range_number(const u_char **p, const u_char *end)
{
    int64_t  n = 0;

    if (*p == end || **p < '0' || **p > '9') {
        return -1;
    }
    while (*p < end && **p >= '0' && **p <= '9') {
        if (n > ((int64_t) 1 << 62) / 10) {
            return -1;
        }
        n = n * 10 + (**p - '0');
        (*p)++;
    }
    return n;
}

sws_int_t
sws_cache_content_range(const u_char *p, size_t len, sws_cache_part_t *part, uint64_t *total)
{
    const u_char  *end = p + len;
    int64_t        first, last, complete;

    /* range-unit (case-insensitive) SP: "bytes " */
    if (len < 6 || sws_strncasecmp((u_char *) p, (u_char *) "bytes ", 6) != 0) {
        return SWS_DECLINED;
    }
    p += 6;
    first = sws_cache_range_number(&p, end);
    if (first < 0 || p == end || *p++ != '-') {
        return SWS_DECLINED;
    }
    last = sws_cache_range_number(&p, end);
    if (last < 0 || p == end || *p++ != '/') {
        return SWS_DECLINED;
    }
    complete = sws_cache_range_number(&p, end);     /* "*": not stored */
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    if (complete < 0 || p != end || first > last || last >= complete) {
        return SWS_DECLINED;
    }
    part->start = (uint64_t) first;
    part->end = (uint64_t) last + 1;
    *total = (uint64_t) complete;
    return SWS_OK;
}

sws_uint_t
sws_cache_parts_add(sws_cache_part_t *parts, sws_uint_t n, const sws_cache_part_t *part)
{
    sws_cache_part_t  add = *part;
    sws_uint_t        i, j = 0;

    /* the parts before add are kept, those it meets (overlaps or touches)
     * grow it, and the first one after it ends the walk: add goes before
     * it and the rest move up (or down, after merges) behind */
    for (i = 0; i < n; i++) {
        if (parts[i].end < add.start) {
            parts[j++] = parts[i];
        } else if (parts[i].start > add.end) {
            memmove(&parts[j + 1], &parts[i], (n - i) * sizeof(sws_cache_part_t));
            parts[j] = add;
            return j + 1 + (n - i);
        } else {
            add.start = sws_min(add.start, parts[i].start);
            add.end = sws_max(add.end, parts[i].end);
        }
    }
    parts[j++] = add;
    return j;
}

const sws_cache_part_t *
sws_cache_parts_cover(const sws_cache_part_t *parts, sws_uint_t n, uint64_t start,
    uint64_t end)
{
    sws_uint_t  i;

    for (i = 0; i < n; i++) {
        if (parts[i].start <= start && end <= parts[i].end) {
            return &parts[i];
        }
    }
    return NULL;
}
