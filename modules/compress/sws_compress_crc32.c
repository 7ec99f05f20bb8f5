/*
 * CRC-32 of gzip (RFC 1952: the reflected polynomial 0xedb88320) with the
 * carry-less multiply instruction, where the CPU has it.
 *
 * zlib's crc32_z (1.2.13, as Debian builds it) takes about 4 instructions
 * a byte: 6.5 % of a gzip response at level 1. Folding 64 bytes at a time
 * with PCLMULQDQ takes about a third of an instruction a byte.
 *
 * Folding: a 128-bit value A stands for the message so far when A(x) is
 * congruent to it modulo P; appending 128 bits B gives A(x)x^128 + B(x),
 * and with A = L x^64 + H (L: the low quadword, which in the reflected
 * order holds the higher degrees) that is congruent to
 * L (x^192 mod P) + H (x^128 mod P) + B: two carry-less products of a
 * quadword by a 32-bit constant, no wider than 128 bits. Four such values
 * fold 512 bits per step, then fold into one; the last 16 bytes and the
 * tail go through zlib's crc32. The constants, in the reflected order the
 * instruction sees (33 and 32 bits wide to line the products up), are
 * x^160 and x^95 mod P for one 128-bit step, x^544 and x^479 for four,
 * worked out and checked against zlib (tests/integration/test_compress.py
 * decodes every gzip body, of every length, with Python's zlib, which
 * checks the CRC).
 */
#include <zlib.h>
#include "sws_compress.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <immintrin.h>

#define SWS_CRC_K1_128  0x1751997d0ULL      /* x^160 mod P, reflected, 33 bits */
#define SWS_CRC_K2_128  0x0ccaa009eULL      /* x^95 mod P, reflected, 32 bits */
#define SWS_CRC_K1_512  0x154442bd4ULL      /* x^544 */
#define SWS_CRC_K2_512  0x01d9513d7ULL      /* x^479 */

__attribute__((target("pclmul,sse2")))
static inline __m128i
sws_crc_fold(__m128i a, __m128i k, __m128i b)
{
    /* L * k1 (imm 0x00: low quadwords) ^ H * k2 (0x11: high quadwords) */
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00),
                                       _mm_clmulepi64_si128(a, k, 0x11)), b);
}


__attribute__((target("pclmul,sse2")))
static uint32_t
sws_crc32_clmul(uint32_t crc, const u_char *p, size_t len)
{
    __m128i  a0, a1, a2, a3, k;
    uint8_t  last[16];

    /* the register's start value goes into the first 32 bits */
    a0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *) p), _mm_cvtsi32_si128((int) ~crc));
    p += 16;
    len -= 16;

    if (len >= 112) {
        a1 = _mm_loadu_si128((const __m128i *) p);
        a2 = _mm_loadu_si128((const __m128i *) (p + 16));
        a3 = _mm_loadu_si128((const __m128i *) (p + 32));
        p += 48;
        len -= 48;
        k = _mm_set_epi64x((long long) SWS_CRC_K2_512, (long long) SWS_CRC_K1_512);
        while (len >= 64) {
            a0 = sws_crc_fold(a0, k, _mm_loadu_si128((const __m128i *) p));
            a1 = sws_crc_fold(a1, k, _mm_loadu_si128((const __m128i *) (p + 16)));
            a2 = sws_crc_fold(a2, k, _mm_loadu_si128((const __m128i *) (p + 32)));
            a3 = sws_crc_fold(a3, k, _mm_loadu_si128((const __m128i *) (p + 48)));
            p += 64;
            len -= 64;
        }
        k = _mm_set_epi64x((long long) SWS_CRC_K2_128, (long long) SWS_CRC_K1_128);
        a0 = sws_crc_fold(a0, k, a1);
        a0 = sws_crc_fold(a0, k, a2);
        a0 = sws_crc_fold(a0, k, a3);
    }

    k = _mm_set_epi64x((long long) SWS_CRC_K2_128, (long long) SWS_CRC_K1_128);
    while (len >= 16) {
        a0 = sws_crc_fold(a0, k, _mm_loadu_si128((const __m128i *) p));
        p += 16;
        len -= 16;
    }

    /* A's 16 bytes as a message from a zero register (zlib's crc32 takes
     * and gives the register inverted), then the tail */
    _mm_storeu_si128((__m128i *) last, a0);
    crc = (uint32_t) crc32_z(0xffffffff, last, 16);
    crc = ~crc;
    return (uint32_t) crc32_z(~crc, p, len);
}


uint32_t
sws_compress_crc32(uint32_t crc, const u_char *p, size_t len)
{
    static int  clmul = -1;

    if (clmul < 0) {
        clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2");
    }
    if (!clmul || len < 64) {
        return (uint32_t) crc32_z(crc, p, len);
    }
    return sws_crc32_clmul(crc, p, len);
}

#else

uint32_t
sws_compress_crc32(uint32_t crc, const u_char *p, size_t len)
{
    return (uint32_t) crc32_z(crc, p, len);
}

#endif
