/* A case-insensitive comparison with a constant lower-case token, for
 * the field names and tokens the core looks for on hot paths (a cache
 * hit's stored fields, an upstream's Connection and Transfer-Encoding).
 * Core-private. */
#ifndef SWS_HTTP_LC_EQ_H
#define SWS_HTTP_LC_EQ_H

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/*
 * Are the n bytes at p, in any case, the lower-case name lc (letters and
 * '-' only)? Eight bytes at a time: a letter of lc has bit 0x40 set, so
 * (lc & 0x40..) >> 1 puts 0x20 on the letters only, and ORing that into p
 * lower-cases p's letters there while a '-' must match exactly. Each hit
 * passes its stored fields here, so it is worth a few lines; inlined, the
 * loops fold away (the names are constants).
 */
static inline __attribute__((always_inline)) int
sws_http_lc_eq(const u_char *p, const char *lc, size_t n)
{
    uint64_t  a, b;
    uint32_t  c, d;

    for ( ; n >= 8; n -= 8, p += 8, lc += 8) {
        memcpy(&a, p, 8);
        memcpy(&b, lc, 8);
        if ((a | ((b & 0x4040404040404040ULL) >> 1)) != b) {
            return 0;
        }
    }
    if (n >= 4) {
        memcpy(&c, p, 4);
        memcpy(&d, lc, 4);
        if ((c | ((d & 0x40404040U) >> 1)) != d) {
            return 0;
        }
        n -= 4;
        p += 4;
        lc += 4;
    }
    for ( ; n; n--, p++, lc++) {
        if ((u_char) (*p | ((*lc & 0x40) >> 1)) != (u_char) *lc) {
            return 0;
        }
    }
    return 1;
}

#endif
