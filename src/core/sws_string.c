/* String helpers: comparison, copying, number parsing and formatting, hashing. */
#include <stdio.h>
#include <limits.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_string.h>
#include "sws_swar.h"

#define SWS_OFF_T_MAX \
    ((off_t) ((((uint64_t) 1) << (sizeof(off_t) * 8 - 1)) - 1))



void
sws_strlow(u_char *dst, const u_char *src, size_t n)
{
    while (n--) {
        *dst++ = sws_tolower(*src);
        src++;
    }
}


/* Stops at a NUL in either string, like strncasecmp(3). */
sws_int_t
sws_strncasecmp(const u_char *s1, const u_char *s2, size_t n)
{
    sws_uint_t  c1, c2;

    while (n--) {
        c1 = *s1++;
        c2 = *s2++;
        c1 = sws_tolower(c1);
        c2 = sws_tolower(c2);
        if (c1 != c2) {
            return (sws_int_t) c1 - (sws_int_t) c2;
        }
        if (c1 == 0) {
            return 0;
        }
    }
    return 0;
}


sws_int_t
sws_strcasecmp(const u_char *s1, const u_char *s2)
{
    sws_uint_t  c1, c2;

    for ( ;; ) {
        c1 = *s1++;
        c2 = *s2++;
        c1 = sws_tolower(c1);
        c2 = sws_tolower(c2);
        if (c1 != c2) {
            return (sws_int_t) c1 - (sws_int_t) c2;
        }
        if (c1 == 0) {
            return 0;
        }
    }
}


/* Case-insensitive equality of n bytes (NULs compared like any byte). */
static inline int
sws_mem_caseeq(const u_char *a, const u_char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i] && sws_tolower(a[i]) != sws_tolower(b[i])) {
            return 0;
        }
    }
    return 1;
}


int
sws_str_eq(const sws_str_t *a, const sws_str_t *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}


int
sws_str_caseeq(const sws_str_t *a, const sws_str_t *b)
{
    return a->len == b->len && sws_mem_caseeq(a->data, b->data, a->len);
}


int
sws_str_eq_cstr(const sws_str_t *a, const char *b)
{
    size_t  n = strlen(b);

    return a->len == n && (n == 0 || memcmp(a->data, b, n) == 0);
}


int
sws_str_caseeq_cstr(const sws_str_t *a, const char *b)
{
    size_t  n = strlen(b);

    return a->len == n && sws_mem_caseeq(a->data, (const u_char *) b, n);
}


/* Finds s2 (n bytes, any case) in [s1, last) ignoring case; NULL if absent. */
u_char *
sws_strlcasestrn(u_char *s1, u_char *last, const u_char *s2, size_t n)
{
    u_char  c;

    if (n == 0) {
        return s1;
    }
    if (last < s1 || (size_t) (last - s1) < n) {
        return NULL;
    }

    c = sws_tolower(s2[0]);
    last -= n - 1;              /* last possible start + 1 */

    for (; s1 < last; s1++) {
        if (sws_tolower(*s1) == c && sws_mem_caseeq(s1 + 1, s2 + 1, n - 1)) {
            return s1;
        }
    }
    return NULL;
}


u_char *
sws_pstrdup(sws_pool_t *pool, const sws_str_t *src)
{
    u_char  *dst = sws_pnalloc(pool, src->len + 1);

    if (dst) {
        if (src->len) {
            memcpy(dst, src->data, src->len);
        }
        dst[src->len] = '\0';
    }
    return dst;
}


char *
sws_pstrdup_cstr(sws_pool_t *pool, const sws_str_t *src)
{
    return (char *) sws_pstrdup(pool, src);
}


sws_int_t
sws_str_from_cstr(sws_pool_t *pool, sws_str_t *dst, const char *src)
{
    size_t  n = strlen(src);
    u_char *p = sws_pnalloc(pool, n + 1);

    if (p == NULL) {
        return SWS_ERROR;
    }
    memcpy(p, src, n + 1);
    dst->len = n;
    dst->data = p;
    return SWS_OK;
}


sws_int_t
sws_atoi(const u_char *line, size_t n)
{
    sws_int_t  value = 0, d;
    sws_int_t  cutoff = INTPTR_MAX / 10, cutlim = INTPTR_MAX % 10;

    if (n == 0) {
        return SWS_ERROR;
    }
    for (; n--; line++) {
        if (*line < '0' || *line > '9') {
            return SWS_ERROR;
        }
        d = *line - '0';
        if (value > cutoff || (value == cutoff && d > cutlim)) {
            return SWS_ERROR;
        }
        value = value * 10 + d;
    }
    return value;
}


off_t
sws_atoof(const u_char *line, size_t n)
{
    off_t  value = 0, d;
    off_t  cutoff = SWS_OFF_T_MAX / 10, cutlim = SWS_OFF_T_MAX % 10;

    if (n == 0) {
        return SWS_ERROR;
    }
    for (; n--; line++) {
        if (*line < '0' || *line > '9') {
            return SWS_ERROR;
        }
        d = *line - '0';
        if (value > cutoff || (value == cutoff && d > cutlim)) {
            return SWS_ERROR;
        }
        value = value * 10 + d;
    }
    return value;
}


sws_int_t
sws_hextoi(const u_char *line, size_t n)
{
    sws_int_t  value = 0, d;
    u_char     c;

    if (n == 0) {
        return SWS_ERROR;
    }
    for (; n--; line++) {
        c = *line;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else {
            c |= 0x20;
            if (c >= 'a' && c <= 'f') {
                d = c - 'a' + 10;
            } else {
                return SWS_ERROR;
            }
        }
        if (value > (INTPTR_MAX >> 4)) {
            return SWS_ERROR;
        }
        value = (value << 4) | d;
    }
    return value;
}


ssize_t
sws_parse_size(const sws_str_t *line)
{
    size_t     len = line->len;
    ssize_t    scale = 1;
    sws_int_t  n;

    if (len == 0) {
        return SWS_ERROR;
    }
    switch (line->data[len - 1]) {
    case 'k': case 'K': scale = 1024; len--; break;
    case 'm': case 'M': scale = 1024 * 1024; len--; break;
    case 'g': case 'G': scale = 1024 * 1024 * 1024; len--; break;
    default: break;
    }

    n = sws_atoi(line->data, len);
    if (n == SWS_ERROR || n > SSIZE_MAX / scale) {
        return SWS_ERROR;
    }
    return (ssize_t) n * scale;
}


/*
 * "1h 30m 10s 500ms": terms separated by blanks, each a number and a unit
 * (y M w d h m s ms; none = seconds). Units must come largest first, each at
 * most once, so "1h 1h" or "5s 1m" are rejected as likely mistakes.
 */
sws_msec_t
sws_parse_time_ms(const sws_str_t *line)
{
    static const sws_msec_t  unit_ms[] = {
        365LL * 86400000, 30LL * 86400000, 7LL * 86400000, 86400000,
        3600000, 60000, 1000, 1
    };
    enum { U_Y, U_MON, U_W, U_D, U_H, U_M, U_S, U_MS, U_NONE };

    const u_char  *p = line->data, *end = line->data + line->len;
    sws_msec_t     total = 0, value, max;
    int            unit, prev = -1, terms = 0;

    for ( ;; ) {
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }
        if (p == end) {
            break;
        }

        if (*p < '0' || *p > '9') {
            return SWS_ERROR;
        }
        value = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            if (value > (INT64_MAX - 9) / 10) {
                return SWS_ERROR;
            }
            value = value * 10 + (*p - '0');
        }

        unit = U_NONE;
        if (p < end) {
            switch (*p) {
            case 'y': unit = U_Y; break;
            case 'M': unit = U_MON; break;
            case 'w': unit = U_W; break;
            case 'd': unit = U_D; break;
            case 'h': unit = U_H; break;
            case 's': unit = U_S; break;
            case 'm':
                if (p + 1 < end && p[1] == 's') {
                    unit = U_MS;
                    p++;
                } else {
                    unit = U_M;
                }
                break;
            case ' ': case '\t': break;
            default: return SWS_ERROR;
            }
            if (unit != U_NONE) {
                p++;
                if (p < end && *p != ' ' && *p != '\t') {
                    return SWS_ERROR;
                }
            }
        }
        if (unit == U_NONE) {
            unit = U_S;
        }
        if (unit <= prev) {
            return SWS_ERROR;
        }
        prev = unit;

        max = INT64_MAX / unit_ms[unit];
        if (value > max) {
            return SWS_ERROR;
        }
        value *= unit_ms[unit];
        if (total > INT64_MAX - value) {
            return SWS_ERROR;
        }
        total += value;
        terms++;
    }

    return terms ? total : SWS_ERROR;
}


u_char *
sws_vslprintf(u_char *buf, u_char *last, const char *fmt, va_list args)
{
    size_t   avail;
    int      n;
    va_list  copy;
    char     tmp[2048];

    if (buf >= last) {
        return buf;
    }
    avail = last - buf;

    va_copy(copy, args);
    n = vsnprintf((char *) buf, avail, fmt, args);
    if (n < 0) {
        va_end(copy);
        return buf;
    }
    if ((size_t) n < avail) {
        va_end(copy);
        return buf + n;
    }

    /* Truncated: vsnprintf kept a byte for the NUL. Recover the full width
     * from a second pass when the output is small enough for the stack. */
    if ((size_t) n < sizeof(tmp)) {
        vsnprintf(tmp, sizeof(tmp), fmt, copy);
        memcpy(buf, tmp, avail);
        va_end(copy);
        return last;
    }
    va_end(copy);
    return last - 1;
}


u_char *
sws_slprintf(u_char *buf, u_char *last, const char *fmt, ...)
{
    va_list  args;

    va_start(args, fmt);
    buf = sws_vslprintf(buf, last, fmt, args);
    va_end(args);
    return buf;
}


static const char sws_digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";


u_char *
sws_sprint_uint(u_char *buf, uint64_t n)
{
    u_char    tmp[20], *p = tmp + sizeof(tmp);
    size_t    len;
    unsigned  d;

    /* one or two digits (a small Content-Length, an Age) written in place:
     * the copy below costs more than the number */
    if (n < 10) {
        *buf = (u_char) ('0' + n);
        return buf + 1;
    }
    if (n < 100) {
        d = (unsigned) n * 2;
        buf[0] = sws_digit_pairs[d];
        buf[1] = sws_digit_pairs[d + 1];
        return buf + 2;
    }
    while (n >= 100) {
        d = (unsigned) (n % 100) * 2;
        n /= 100;
        *--p = sws_digit_pairs[d + 1];
        *--p = sws_digit_pairs[d];
    }
    if (n >= 10) {
        d = (unsigned) n * 2;
        *--p = sws_digit_pairs[d + 1];
        *--p = sws_digit_pairs[d];
    } else {
        *--p = (u_char) ('0' + n);
    }

    len = tmp + sizeof(tmp) - p;
    memcpy(buf, p, len);
    return buf + len;
}


u_char *
sws_hex_dump(u_char *dst, const u_char *src, size_t len)
{
    static const u_char  hex[] = "0123456789abcdef";

    while (len--) {
        *dst++ = hex[*src >> 4];
        *dst++ = hex[*src++ & 0xf];
    }
    return dst;
}


/* Bit c of a map: byte c is escaped. */
static const uint32_t  sws_escape_uri_maps[2][8] = {
    /* PATH */
    { 0xffffffff,       /* 0x00-0x1f */
      0xd000002d,       /* space " # % < > ? */
      0x50000000,       /* \ ^ */
      0xb8000001,       /* ` { | } DEL */
      0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff },
    /* COMPONENT: all but A-Z a-z 0-9 - . _ ~ */
    { 0xffffffff,
      0xfc009fff,       /* keeps - . 0-9 */
      0x78000001,       /* keeps A-Z _ */
      0xb8000001,       /* keeps a-z ~ */
      0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }
};

#define sws_escape_uri_test(map, c)  (((map)[(c) >> 5] >> ((c) & 0x1f)) & 1)

size_t
sws_escape_uri_len(const u_char *src, size_t len, sws_uint_t mode)
{
    const uint32_t *map = sws_escape_uri_maps[mode ? 1 : 0];
    size_t          n = len, i;

    for (i = 0; i < len; i++) {
        n += 2 * sws_escape_uri_test(map, src[i]);
    }
    return n;
}

u_char *
sws_escape_uri(u_char *dst, const u_char *src, size_t len, sws_uint_t mode)
{
    static const u_char  hex[] = "0123456789ABCDEF";
    const uint32_t      *map = sws_escape_uri_maps[mode ? 1 : 0];
    size_t               i;

    for (i = 0; i < len; i++) {
        if (sws_escape_uri_test(map, src[i])) {
            *dst++ = '%';
            *dst++ = hex[src[i] >> 4];
            *dst++ = hex[src[i] & 0xf];
        } else {
            *dst++ = src[i];
        }
    }
    return dst;
}


/*
 * String hash: 8 bytes per step (multiply and xor-shift), short tails read
 * with overlapping loads. sws_hash_key_lc lower-cases each word first, so
 * sws_hash_key_lc(s) == sws_hash_key(lowercase(s)). Values depend on byte
 * order; never store them outside the running processes.
 */
#define SWS_HASH_K1  0x9e3779b97f4a7c15ULL
#define SWS_HASH_K2  0xff51afd7ed558ccdULL

static inline uint64_t
sws_hash_mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * SWS_HASH_K1;
    return h ^ (h >> 29);
}


/* The last n bytes (1..8) of a key at least 8 bytes long, as one word. */
static inline uint64_t
sws_hash_tail8(const u_char *end, size_t n)
{
    uint64_t  w = sws_load64(end - 8);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return n == 8 ? w : w & ((1ULL << (n * 8)) - 1);
#else
    return w >> ((8 - n) * 8);
#endif
}


/* A key shorter than 8 bytes as one word (n 0..7). */
static inline uint64_t
sws_hash_short(const u_char *p, size_t n)
{
    if (n >= 4) {
        return sws_load32(p) | ((uint64_t) sws_load32(p + n - 4) << 32);
    }
    if (n) {
        return p[0] | ((uint64_t) p[n >> 1] << 8) | ((uint64_t) p[n - 1] << 16);
    }
    return 0;
}


static inline uint32_t
sws_hash_final(uint64_t h)
{
    h ^= h >> 32;
    h *= SWS_HASH_K2;
    h ^= h >> 29;
    return (uint32_t) h;
}


static inline uint32_t
sws_hash_any(const u_char *p, size_t len, int lc)
{
    uint64_t       h = len * SWS_HASH_K2, w;
    const u_char  *end = p + len;
    size_t         n = len;

    if (n < 8) {
        w = sws_hash_short(p, n);
        return sws_hash_final(sws_hash_mix(h, lc ? sws_swar_lower(w) : w));
    }
    while (n > 8) {
        w = sws_load64(p);
        h = sws_hash_mix(h, lc ? sws_swar_lower(w) : w);
        p += 8;
        n -= 8;
    }
    w = sws_hash_tail8(end, n);
    return sws_hash_final(sws_hash_mix(h, lc ? sws_swar_lower(w) : w));
}


uint32_t
sws_hash_key(const u_char *data, size_t len)
{
    return sws_hash_any(data, len, 0);
}


uint32_t
sws_hash_key_lc(const u_char *data, size_t len)
{
    return sws_hash_any(data, len, 1);
}
