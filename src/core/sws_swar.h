/* Word-at-a-time helpers (SIMD within a register) for string hashing and
 * case-insensitive comparison. Core-private. */
#ifndef SWS_SWAR_H
#define SWS_SWAR_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define SWS_SWAR_ONES  0x0101010101010101ULL

static inline uint64_t
sws_load64(const u_char *p)
{
    uint64_t  w;

    memcpy(&w, p, 8);
    return w;
}


static inline uint32_t
sws_load32(const u_char *p)
{
    uint32_t  w;

    memcpy(&w, p, 4);
    return w;
}


/* n bytes from s to p, returning p + n: a short string (a header's name or
 * value, a variable's value) in two overlapping moves rather than a call
 * to memcpy, which costs more than the copy at these lengths. */
static inline u_char *
sws_swar_copy(u_char *p, const u_char *s, size_t n)
{
    size_t  i;

    if (n > 16) {
        return (u_char *) memcpy(p, s, n) + n;
    }
    if (n >= 8) {
        memcpy(p, s, 8);
        memcpy(p + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(p, s, 4);
        memcpy(p + n - 4, s + n - 4, 4);
    } else {
        for (i = 0; i < n; i++) {
            p[i] = s[i];
        }
    }
    return p + n;
}


/* Are the n bytes at a and b the same? Up to 16 by two overlapping loads
 * of each (no call: the memo checks that run for every request, such as a
 * keep-alive client's Host), longer ones by memcmp. */
static inline int
sws_swar_eq(const u_char *a, const u_char *b, size_t n)
{
    if (n > 16) {
        return memcmp(a, b, n) == 0;
    }
    if (n >= 8) {
        return ((sws_load64(a) ^ sws_load64(b))
                | (sws_load64(a + n - 8) ^ sws_load64(b + n - 8))) == 0;
    }
    if (n >= 4) {
        return ((sws_load32(a) ^ sws_load32(b))
                | (sws_load32(a + n - 4) ^ sws_load32(b + n - 4))) == 0;
    }
    return n == 0 || ((a[0] ^ b[0]) | (a[n >> 1] ^ b[n >> 1]) | (a[n - 1] ^ b[n - 1])) == 0;
}


/* A word of bytes in their order: compared as integers, words compare as
 * memcmp compares their bytes. */
static inline uint64_t
sws_load64_be(const u_char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sws_load64(p);
#else
    return __builtin_bswap64(sws_load64(p));
#endif
}


static inline uint32_t
sws_load32_be(const u_char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return sws_load32(p);
#else
    return __builtin_bswap32(sws_load32(p));
#endif
}


/* memcmp's order of the n bytes at a and b (< 0, 0, > 0), up to 16 bytes
 * by two overlapping loads of each: when the first words are equal, the
 * first difference is in the last word, after bytes that are equal. */
static inline int
sws_swar_cmp(const u_char *a, const u_char *b, size_t n)
{
    uint64_t  x, y;
    size_t    i;

    if (n > 16) {
        return memcmp(a, b, n);
    }
    if (n >= 8) {
        x = sws_load64_be(a);
        y = sws_load64_be(b);
        if (x == y) {
            x = sws_load64_be(a + n - 8);
            y = sws_load64_be(b + n - 8);
        }
        return (x > y) - (x < y);
    }
    if (n >= 4) {
        x = sws_load32_be(a);
        y = sws_load32_be(b);
        if (x == y) {
            x = sws_load32_be(a + n - 4);
            y = sws_load32_be(b + n - 4);
        }
        return (x > y) - (x < y);
    }
    for (i = 0; i < n; i++) {
        if (a[i] != b[i]) {
            return a[i] < b[i] ? -1 : 1;
        }
    }
    return 0;
}


/* ASCII 'A'..'Z' -> 'a'..'z' in each byte; other bytes (including >= 0x80)
 * unchanged. Bit 7 of each lane flags "is upper" without carries between
 * lanes: low 7 bits plus a bias stay below 0x100. */
static inline uint64_t
sws_swar_lower(uint64_t w)
{
    uint64_t  low7 = w & (0x7f * SWS_SWAR_ONES);
    uint64_t  ge_a = low7 + (0x80 - 'A') * SWS_SWAR_ONES;
    uint64_t  gt_z = low7 + (0x7f - 'Z') * SWS_SWAR_ONES;
    uint64_t  upper = (ge_a ^ gt_z) & ~w & (0x80 * SWS_SWAR_ONES);

    return w | (upper >> 2);
}

#endif
