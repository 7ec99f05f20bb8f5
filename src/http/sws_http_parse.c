/*
 * HTTP/1.1 request line, header field lines, Content-Length and Range
 * (RFC 9110, RFC 9112). Every function is a single pass over caller memory
 * driven by 256-entry character tables; nothing allocates.
 *
 * Strictness choices (where the RFCs leave room):
 *  - request-target bytes are those of RFC 3986 (pchar, '/', '?', '%');
 *    CTLs, SP, DEL, obs-text, '"' '<' '>' '\' '^' '`' '{' '|' '}' and '#'
 *    are rejected everywhere; '[' and ']' are tolerated in the query only
 *    (common "a[]=1" forms), never in the path;
 *  - absolute-form accepts only the http and https schemes, no userinfo,
 *    a non-empty host, a port of at most 65535; IPvFuture is rejected;
 *  - Content-Length lists must hold identical values, no empty elements;
 *  - Range: read as nginx's range filter reads it (sws_http_parse_range);
 *    more satisfiable ranges than the caller's max makes the header
 *    ignored (-1 -> full 200 response) rather than silently truncated.
 */
#include <string.h>
#include "sws_http_parse.h"
#include "sws_swar.h"

#define C_TCHAR  0x01   /* token char (RFC 9110 5.6.2) */
#define C_PCHAR  0x02   /* path byte needing no attention (not '/' or '%') */
#define C_QUERY  0x04   /* query byte */
#define C_HOST   0x08   /* reg-name byte: unreserved / sub-delims */
#define C_FIELD  0x10   /* field value byte: VCHAR, SP, HTAB, obs-text */
#define C_DIGIT  0x20

#define T_ C_TCHAR
#define P_ C_PCHAR
#define Q_ C_QUERY
#define H_ C_HOST
#define F_ C_FIELD

static const uint8_t sws_http_cls[256] = {
    ['\t'] = F_,
    [' '] = F_,
    ['!'] = T_|P_|Q_|H_|F_,
    ['"'] = F_,
    ['#'] = T_|F_,
    ['$'] = T_|P_|Q_|H_|F_,
    ['%'] = T_|Q_|F_,
    ['&'] = T_|P_|Q_|H_|F_,
    ['\''] = T_|P_|Q_|H_|F_,
    ['('] = P_|Q_|H_|F_,
    [')'] = P_|Q_|H_|F_,
    ['*'] = T_|P_|Q_|H_|F_,
    ['+'] = T_|P_|Q_|H_|F_,
    [','] = P_|Q_|H_|F_,
    ['-'] = T_|P_|Q_|H_|F_,
    ['.'] = T_|P_|Q_|H_|F_,
    ['/'] = Q_|F_,
    ['0' ... '9'] = T_|P_|Q_|H_|F_|C_DIGIT,
    [':'] = P_|Q_|F_,
    [';'] = P_|Q_|H_|F_,
    ['<'] = F_,
    ['='] = P_|Q_|H_|F_,
    ['>'] = F_,
    ['?'] = Q_|F_,
    ['@'] = P_|Q_|F_,
    ['A' ... 'Z'] = T_|P_|Q_|H_|F_,
    ['['] = Q_|F_,
    ['\\'] = F_,
    [']'] = Q_|F_,
    ['^'] = T_|F_,
    ['_'] = T_|P_|Q_|H_|F_,
    ['`'] = T_|F_,
    ['a' ... 'z'] = T_|P_|Q_|H_|F_,
    ['{'] = F_,
    ['|'] = T_|F_,
    ['}'] = F_,
    ['~'] = T_|P_|Q_|H_|F_,
    [0x80 ... 0xff] = F_,
};

/* Token chars lower-cased; 0 for anything that is not a tchar. */
static const u_char sws_http_name_lc[256] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x21, 0x00, 0x23, 0x24, 0x25, 0x26, 0x27, 0x00, 0x00, 0x2a, 0x2b, 0x00, 0x2d, 0x2e, 0x00,
    0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x00, 0x00, 0x5e, 0x5f,
    0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x00, 0x7c, 0x00, 0x7e, 0x00,
    /* 0x80 - 0xff: none */
};

/* For each byte of a lower-case field name: 0 for [a-z0-9-], 1 for '_',
 * 2 for any other (ignore_invalid_headers, underscores_in_headers). */
#define O2 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2
const u_char sws_http_name_odd[256] = {
    O2, O2,                                                  /* 0x00 - 0x1f */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 2, 2,          /* 0x20: '-' */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2,          /* 0x30: 0-9 */
    O2,                                                      /* 0x40 */
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1,          /* 0x50: '_' */
    2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,          /* 0x60: a-o */
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2,          /* 0x70: p-z */
    O2, O2, O2, O2, O2, O2, O2, O2                           /* 0x80 - 0xff */
};
#undef O2

static u_char sws_http_slash[] = "/";
static u_char sws_http_schema_http[] = "http";
static u_char sws_http_schema_https[] = "https";

#define sws_http_bad  SWS_HTTP_BAD_REQUEST

/*
 * 8 field-value bytes at once: 0 if any is a CTL (HTAB included, which the
 * byte loop then handles) or DEL. Exact, no false negatives: a byte < 0x20
 * or == 0x7f always sets its high bit in one of the two masks.
 */
#define SWS_ONES8   0x0101010101010101ULL
#define SWS_HIGHS8  0x8080808080808080ULL

static inline int
sws_http_field_word_ok(uint64_t w)
{
    uint64_t  ctl, del;

    ctl = (w - SWS_ONES8 * 0x20) & ~w & SWS_HIGHS8;
    del = w ^ (SWS_ONES8 * 0x7f);
    del = (del - SWS_ONES8) & ~del & SWS_HIGHS8;

    return (ctl | del) == 0;
}

#define SWS_HTTP_OFF_MAX  ((off_t) 1 << 62)


static inline __attribute__((always_inline)) sws_uint_t
sws_http_method_id(const u_char *m, size_t len)
{
    switch (len) {
    case 3:
        if (memcmp(m, "GET", 3) == 0) return SWS_HTTP_GET;
        if (memcmp(m, "PUT", 3) == 0) return SWS_HTTP_PUT;
        break;
    case 4:
        if (memcmp(m, "HEAD", 4) == 0) return SWS_HTTP_HEAD;
        if (memcmp(m, "POST", 4) == 0) return SWS_HTTP_POST;
        break;
    case 5:
        if (memcmp(m, "PATCH", 5) == 0) return SWS_HTTP_PATCH;
        if (memcmp(m, "TRACE", 5) == 0) return SWS_HTTP_TRACE;
        break;
    case 6:
        if (memcmp(m, "DELETE", 6) == 0) return SWS_HTTP_DELETE;
        break;
    case 7:
        if (memcmp(m, "OPTIONS", 7) == 0) return SWS_HTTP_OPTIONS;
        if (memcmp(m, "CONNECT", 7) == 0) return SWS_HTTP_CONNECT;
        break;
    }
    return SWS_HTTP_UNKNOWN;
}


/*
 * authority = host [ ":" port ] (no userinfo) from p; stops at the first byte
 * that cannot continue it. Returns that position, or NULL if the host is
 * empty or malformed, or the port is not a number up to 65535. need_port:
 * the port must be present and non-empty (CONNECT).
 */
static u_char *
sws_http_parse_authority(u_char *p, u_char *end, int need_port)
{
    u_char     *h;
    sws_uint_t  port, ndigits, colon;

    if (p < end && *p == '[') {
        /* IP-literal: IPv6 (hex, ':' and '.' for an embedded IPv4) */
        colon = 0;
        for (h = ++p; p < end && *p != ']'; p++) {
            if (*p == ':') {
                colon = 1;
            } else if (!((*p >= '0' && *p <= '9') || *p == '.'
                         || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')))
            {
                return NULL;
            }
        }
        if (p == end || p - h < 2 || !colon) {
            return NULL;
        }
        p++;

    } else {
        for (h = p; p < end && (sws_http_cls[*p] & C_HOST); p++) { /* void */ }
        if (p == h) {
            return NULL;
        }
    }

    if (p < end && *p == ':') {
        port = 0;
        ndigits = 0;
        for (p++; p < end && (sws_http_cls[*p] & C_DIGIT); p++) {
            port = port * 10 + (*p - '0');
            if (++ndigits > 5) {
                return NULL;
            }
        }
        if (port > 65535 || (need_port && ndigits == 0)) {
            return NULL;
        }

    } else if (need_port) {
        return NULL;
    }

    return p;
}


/*
 * path-abempty from p (at '/') to tend or '?': sets rl->path and
 * rl->complex_path; returns the stop position or NULL on a bad byte.
 */
static u_char *
sws_http_parse_path(sws_http_request_line_t *rl, u_char *p, u_char *tend)
{
    u_char     *seg, c;
    size_t      n;
    unsigned    complex = 0, slash = 0;

    rl->path.data = p;

    for (seg = p++; p < tend; p++) {
        c = *p;
        if (sws_likely(sws_http_cls[c] & C_PCHAR)) {
            continue;
        }
        if (c == '/') {
            /* the segment that ends here: "", "." or ".." */
            n = p - seg - 1;
            if (n == 0 || (n <= 2 && seg[1] == '.' && (n == 1 || seg[2] == '.'))) {
                complex = 1;
            }
            seg = p;
            continue;
        }
        if (c == '%') {
            complex = 1;
            /* (noted here, where the path is read anyway: static files
             * refuse it, sws_http_encoded_slash) */
            slash |= tend - p > 2 && p[1] == '2' && (p[2] | 0x20) == 'f';
            continue;
        }
        if (c == '?') {
            break;
        }
        return NULL;
    }

    n = p - seg - 1;
    if (n != 0 && n <= 2 && seg[1] == '.' && (n == 1 || seg[2] == '.')) {
        complex = 1;
    }

    rl->path.len = p - rl->path.data;
    rl->complex_path = complex;
    rl->encoded_slash = slash;
    return p;
}


int
sws_http_request_line_hopeless(const u_char *start, const u_char *last)
{
    const u_char  *p;

    for (p = start; p < last && *p != ' '; p++) {
        if (!(sws_http_cls[*p] & C_TCHAR) && !(*p == '\r' && p + 1 == last)) {
            return 1;
        }
    }
    return 0;
}


/* The fields a parse sets whatever the target's form. */
static void
sws_http_request_line_init(sws_http_request_line_t *rl)
{
    rl->schema.len = 0;
    rl->schema.data = NULL;
    rl->host.len = 0;
    rl->host.data = NULL;
    rl->complex_path = 0;
    rl->encoded_slash = 0;
    rl->asterisk = 0;
    rl->authority = 0;
}


/*
 * The request target [t, tend) (not empty) of rl->method: authority-form
 * for CONNECT, origin-form, "*" for OPTIONS, or absolute-form; SWS_OK or
 * 400. Inlined into both parsers: HTTP/1's runs for every request.
 */
static inline __attribute__((always_inline)) sws_int_t
sws_http_parse_target(sws_http_request_line_t *rl, u_char *t, u_char *tend)
{
    u_char  *p;

    rl->target.data = t;
    rl->target.len = tend - t;
    rl->args.len = 0;
    rl->args.data = tend;

    p = t;

    if (rl->method == SWS_HTTP_CONNECT) {
        /* authority-form only */
        p = sws_http_parse_authority(p, tend, 1);
        if (p == NULL || p != tend) {
            return sws_http_bad;
        }
        rl->host = rl->target;
        rl->path.data = tend;
        rl->path.len = 0;
        rl->authority = 1;
        return SWS_OK;
    }

    if (*p == '/') {
        p = sws_http_parse_path(rl, p, tend);
        if (p == NULL) {
            return sws_http_bad;
        }

    } else if (*p == '*') {
        if (tend - p != 1 || rl->method != SWS_HTTP_OPTIONS) {
            return sws_http_bad;
        }
        rl->path = rl->target;
        rl->asterisk = 1;
        return SWS_OK;

    } else {
        /* absolute-form: http:// or https://, scheme case-insensitive */
        if (tend - p >= 8
            && (p[0] | 0x20) == 'h' && (p[1] | 0x20) == 't'
            && (p[2] | 0x20) == 't' && (p[3] | 0x20) == 'p')
        {
            if (p[4] == ':') {
                rl->schema.data = sws_http_schema_http;
                rl->schema.len = 4;
                p += 5;
            } else if ((p[4] | 0x20) == 's' && p[5] == ':') {
                rl->schema.data = sws_http_schema_https;
                rl->schema.len = 5;
                p += 6;
            } else {
                return sws_http_bad;
            }
        } else {
            return sws_http_bad;
        }

        if (tend - p < 2 || p[0] != '/' || p[1] != '/') {
            return sws_http_bad;
        }
        p += 2;

        rl->host.data = p;
        p = sws_http_parse_authority(p, tend, 0);
        if (p == NULL) {
            return sws_http_bad;
        }
        rl->host.len = p - rl->host.data;

        if (p < tend && *p == '/') {
            p = sws_http_parse_path(rl, p, tend);
            if (p == NULL) {
                return sws_http_bad;
            }

        } else if (p == tend || *p == '?') {
            rl->path.data = sws_http_slash;
            rl->path.len = 1;

        } else {
            return sws_http_bad;      /* '@' (userinfo), '#', ... */
        }
    }

    if (p < tend) {
        /* p is at '?' */
        for (t = ++p; p < tend && (sws_http_cls[*p] & C_QUERY); p++) { /* void */ }
        if (p != tend) {
            return sws_http_bad;
        }
        rl->args.data = t;
        rl->args.len = tend - t;
    }

    return SWS_OK;
}


sws_int_t
sws_http_parse_request_line(sws_http_request_line_t *rl, u_char *start, u_char *end)
{
    u_char  *p, *t, *tend, *v;

    sws_http_request_line_init(rl);

    /* method SP */
    for (p = start; p < end && (sws_http_cls[*p] & C_TCHAR); p++) { /* void */ }

    if (p == start || p == end || *p != ' ') {
        return sws_http_bad;
    }

    rl->method_name.data = start;
    rl->method_name.len = p - start;
    rl->method = sws_http_method_id(start, p - start);

    /* the version is the last 8 bytes, after exactly one SP */
    t = p + 1;
    if (end - t < 10) {         /* 1 target byte, SP, "HTTP/x.y" */
        return sws_http_bad;
    }
    v = end - 8;
    tend = v - 1;

    if (sws_http_parse_target(rl, t, tend) != SWS_OK) {
        return sws_http_bad;
    }

    if (*tend != ' ' || memcmp(v, "HTTP/", 5) != 0
        || !(sws_http_cls[v[5]] & C_DIGIT) || v[6] != '.'
        || !(sws_http_cls[v[7]] & C_DIGIT))
    {
        return sws_http_bad;
    }

    if (v[5] != '1') {
        return SWS_HTTP_VERSION_NOT_SUPPORTED;
    }

    rl->version = (v[7] == '0') ? SWS_HTTP_VERSION_10 : SWS_HTTP_VERSION_11;

    return SWS_OK;
}


sws_int_t
sws_http_parse_method_target(sws_http_request_line_t *rl, u_char *method, size_t mlen,
    u_char *target, size_t tlen)
{
    size_t  i;

    sws_http_request_line_init(rl);
    rl->version = 0;

    if (mlen == 0 || tlen == 0) {
        return sws_http_bad;
    }
    for (i = 0; i < mlen; i++) {
        if (!(sws_http_cls[method[i]] & C_TCHAR)) {
            return sws_http_bad;
        }
    }
    rl->method_name.data = method;
    rl->method_name.len = mlen;
    rl->method = sws_http_method_id(method, mlen);

    return sws_http_parse_target(rl, target, target + tlen);
}


/*
 * Field names and values a chunk at a time: 16 bytes with SSE2 (every
 * x86-64), else 8 in a uint64_t (SWAR). Both are exact: a chunk either
 * passes whole or is left to the byte tables from the byte it stops at.
 * SWS_HTTP_PARSE_NO_SSE2 builds the portable one on x86-64 too (its fuzz
 * run).
 */
#if defined(__SSE2__) && !defined(SWS_HTTP_PARSE_NO_SSE2)

#include <emmintrin.h>

#define SWS_HTTP_CHUNK  16

/* The leading [A-Za-z0-9-] bytes (a name's usual ones, whose class in
 * sws_http_name_odd is 0) of the 16 at p, lower-cased into l; the bytes
 * after them are stored as they are (lc == start). Returns their count
 * (16: all). Signed compares: bytes >= 0x80 are below every range. */
static inline unsigned
sws_http_name_chunk(u_char *l, const u_char *p)
{
    __m128i   x, lo, alpha, digit, dash, before;
    unsigned  others, n;

    x = _mm_loadu_si128((const __m128i *) p);
    lo = _mm_or_si128(x, _mm_set1_epi8(0x20));
    alpha = _mm_and_si128(_mm_cmpgt_epi8(lo, _mm_set1_epi8('a' - 1)),
                          _mm_cmplt_epi8(lo, _mm_set1_epi8('z' + 1)));
    digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                          _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    dash = _mm_cmpeq_epi8(x, _mm_set1_epi8('-'));
    others = ~(unsigned) _mm_movemask_epi8(_mm_or_si128(alpha, _mm_or_si128(digit, dash)))
             & 0xffff;
    n = others ? (unsigned) __builtin_ctz(others) : 16;
    before = _mm_cmplt_epi8(_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm_set1_epi8((char) n));
    alpha = _mm_and_si128(_mm_and_si128(alpha, before), _mm_set1_epi8(0x20));
    _mm_storeu_si128((__m128i *) l, _mm_or_si128(x, alpha));
    return n;
}

/* Are the 16 bytes at p field-value bytes other than HTAB (which the
 * byte loop takes)? A CTL is <= 0x1f unsigned: min(x, 0x1f) == x. */
static inline int
sws_http_value_chunk_ok(const u_char *p)
{
    __m128i  x, ctl, del;

    x = _mm_loadu_si128((const __m128i *) p);
    ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
    del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
    return _mm_movemask_epi8(_mm_or_si128(ctl, del)) == 0;
}

#else

#define SWS_HTTP_CHUNK  8

/* 8 bytes with byte i in bits 8i..8i+7 whatever the machine's order (so
 * that the first byte of interest is the lowest set bit), and back. */
static inline uint64_t
sws_http_load_le(const u_char *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(sws_load64(p));
#else
    return sws_load64(p);
#endif
}


static inline void
sws_http_store_le(u_char *p, uint64_t w)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(p, &w, 8);
}


/* As the SSE2 one, 8 bytes: bit 7 of each [A-Za-z0-9-] byte and of each
 * letter. Each test adds a bias to the low 7 bits, so no carry crosses
 * into the next byte; bytes >= 0x80 are masked out at the end. */
static inline unsigned
sws_http_name_chunk(u_char *l, const u_char *p)
{
    uint64_t  w, low7, lo, a, d, m, others, keep;

    w = sws_http_load_le(p);
    low7 = w & (0x7f * SWS_ONES8);
    lo = low7 | (0x20 * SWS_ONES8);
    a = (lo + (0x80 - 'a') * SWS_ONES8) & ~(lo + (0x7f - 'z') * SWS_ONES8) & ~w & SWS_HIGHS8;
    d = (low7 + (0x80 - '0') * SWS_ONES8) & ~(low7 + (0x7f - '9') * SWS_ONES8);
    m = ~((low7 ^ ('-' * SWS_ONES8)) + 0x7f * SWS_ONES8);
    others = ((a | d | m) & ~w & SWS_HIGHS8) ^ SWS_HIGHS8;
    keep = (others & -others) - 1;          /* the bits below the first other */
    sws_http_store_le(l, w | ((a & keep) >> 2));
    return others ? (unsigned) __builtin_ctzll(others) >> 3 : 8;
}

static inline int
sws_http_value_chunk_ok(const u_char *p)
{
    return sws_http_field_word_ok(sws_load64(p));
}

#endif


/* The field line's parser; odd (if not NULL): the name's class, as
 * sws_http_name_odd's, taken in the same pass; hash: h->hash set (else
 * 0). Inlined into each caller so that the odd and hash tests fold away.
 * lc has room for end - start bytes (or is start), so a word stored at a
 * name byte 8 or more before end stays inside it. */
static inline __attribute__((always_inline)) sws_int_t
sws_http_parse_field(sws_http_header_t *h, u_char *lc, u_char *start, u_char *end, u_char *odd,
    int hash)
{
    u_char    *p, *l, *v, c, o = 0;
    unsigned   n;

    /* field-name ":" -- no whitespace before the colon, no obs-fold.
     * A chunk at a time while one is left: its leading [A-Za-z0-9-] bytes
     * lower-cased in one store, then the byte that stopped them through
     * the tables: another tchar ('_', '!' ...) continues the name,
     * anything else ends it. */
    p = start;
    l = lc;
    while (end - p >= SWS_HTTP_CHUNK) {
        n = sws_http_name_chunk(l, p);
        p += n;
        l += n;
        if (n == SWS_HTTP_CHUNK) {
            continue;
        }
        c = sws_http_name_lc[*p];
        if (c == 0) {
            goto name_end;
        }
        *l++ = c;
        p++;
        if (odd) {
            o |= sws_http_name_odd[c];
        }
    }
    for ( /* void */ ; p < end; p++) {
        c = sws_http_name_lc[*p];
        if (c == 0) {
            break;
        }
        *l++ = c;
        if (odd) {
            o |= sws_http_name_odd[c];
        }
    }

name_end:

    if (odd) {
        *odd = o;
    }

    if (p == start || p == end || *p != ':') {
        return sws_http_bad;
    }

    h->name.data = lc;
    h->name.len = p - start;
    /* from the source: reading lc right after its byte stores would stall
     * store-to-load forwarding; sws_hash_key_lc(s) == sws_hash_key(lc) */
    h->hash = hash ? sws_hash_key_lc(start, p - start) : 0;

    /* OWS field-value OWS */
    for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* void */ }

    v = p;

    while (end - p >= SWS_HTTP_CHUNK && sws_http_value_chunk_ok(p)) {
        p += SWS_HTTP_CHUNK;
    }

    /* The tail as one chunk ending at end, overlapping bytes already
     * seen: fewer than a chunk left (every one before passed) of a line of
     * at least a chunk. The bytes before the value are the name's, the
     * colon and OWS: no CTL but HTAB, which fails the chunk and leaves the
     * tail to the bytes, as a chunk that failed above is. */
    if (p < end && end - p < SWS_HTTP_CHUNK && end - start >= SWS_HTTP_CHUNK
        && sws_http_value_chunk_ok(end - SWS_HTTP_CHUNK))
    {
        p = end;
    }

    for ( /* void */ ; p < end && (sws_http_cls[*p] & C_FIELD); p++) { /* void */ }

    if (p != end) {
        return sws_http_bad;
    }

    while (p > v && (p[-1] == ' ' || p[-1] == '\t')) {
        p--;
    }

    h->value.data = v;
    h->value.len = p - v;

    return SWS_OK;
}


sws_int_t
sws_http_parse_header_line(sws_http_header_t *h, u_char *lc, u_char *start, u_char *end)
{
    return sws_http_parse_field(h, lc, start, end, NULL, 1);
}


sws_int_t
sws_http_parse_field_unhashed(sws_http_header_t *h, u_char *lc, u_char *start, u_char *end)
{
    return sws_http_parse_field(h, lc, start, end, NULL, 0);
}


sws_int_t
sws_http_parse_request_field(sws_http_header_t *h, u_char *lc, u_char *start, u_char *end,
    u_char *odd)
{
    return sws_http_parse_field(h, lc, start, end, odd, 1);
}


/* 1*DIGIT at *pp, saturating at SWS_HTTP_OFF_MAX + 1; -1 if no digit. */
static off_t
sws_http_parse_pos(const u_char **pp, const u_char *end)
{
    const u_char  *p = *pp;
    off_t          n = 0;

    if (p == end || !(sws_http_cls[*p] & C_DIGIT)) {
        return -1;
    }

    for (; p < end && (sws_http_cls[*p] & C_DIGIT); p++) {
        if (n <= SWS_HTTP_OFF_MAX / 10) {
            n = n * 10 + (*p - '0');
        } else {
            n = SWS_HTTP_OFF_MAX + 1;
        }
    }

    *pp = p;
    return sws_min(n, SWS_HTTP_OFF_MAX + 1);
}


off_t
sws_http_parse_content_length(const u_char *p, size_t len)
{
    const u_char  *end = p + len;
    off_t          n, first = -1;

    for ( ;; ) {
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }

        n = sws_http_parse_pos(&p, end);
        if (n < 0 || n > SWS_HTTP_OFF_MAX || (first >= 0 && n != first)) {
            return -1;
        }
        first = n;

        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }

        if (p == end) {
            return n;
        }
        if (*p++ != ',') {
            return -1;
        }
    }
}


/* SP and HTAB at p: where nginx's range parser skips SP, this one skips
 * OWS (RFC 9110 5.6.1). */
static const u_char *
sws_http_range_ows(const u_char *p, const u_char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    return p;
}


/*
 * The categories are nginx's range filter's (each one checked side by
 * side in tests/integration/test_nginx_sites_compat2.py):
 *  - not "bytes=" with something after it: no Range (-1);
 *  - anything after "bytes=" that is not a list of ranges (a letter, a
 *    second '-', a bare "-"): 416 (0). RFC 9110 14.2 lets a server reject
 *    an invalid ranges-specifier;
 *  - first-pos > last-pos ("3-1"): an invalid range-spec, skipped as an
 *    unsatisfiable one, so alone it is a 416;
 *  - an empty representation and a range from 0 (or a suffix): the whole
 *    (-1), nginx's answer (a range of nothing cannot be sent);
 *  - more than max ranges, or ranges that together are longer than the
 *    representation (overlaps): the whole (-1);
 *  - whitespace around the numbers and the '-' of an int-range is taken
 *    (nginx takes SP there), and empty list elements are skipped (RFC 9110
 *    5.6.1.2; nginx answers 416 to "0-1,,2-3" and "0-1,");
 *  - numbers too large for an off_t saturate: a last-pos past the end is
 *    the rest, a suffix longer than the representation all of it (RFC 9110
 *    14.1.1; nginx answers 416 past 2^63).
 */
sws_int_t
sws_http_parse_range(const u_char *p, size_t len, off_t size,
    sws_http_range_t *ranges, sws_uint_t max)
{
    const u_char  *end = p + len;
    off_t          a, b, total = 0;
    sws_uint_t     n = 0;
    int            over = 0;

    if (len < 7 || (p[0] | 0x20) != 'b' || (p[1] | 0x20) != 'y'
        || (p[2] | 0x20) != 't' || (p[3] | 0x20) != 'e'
        || (p[4] | 0x20) != 's' || p[5] != '=')
    {
        return -1;
    }
    p += 6;

    /* 1#range-spec */
    for ( ;; ) {
        p = sws_http_range_ows(p, end);
        if (p == end) {
            break;
        }
        if (*p == ',') {
            p++;                    /* an empty list element */
            continue;
        }

        if (*p == '-') {
            /* suffix-range */
            p++;
            b = sws_http_parse_pos(&p, end);
            if (b < 0) {
                return 0;
            }
            if (size == 0) {
                return -1;
            }
            if (b == 0) {
                goto next;          /* unsatisfiable */
            }
            a = (b >= size) ? 0 : size - b;
            b = size;

        } else {
            a = sws_http_parse_pos(&p, end);
            if (a < 0) {
                return 0;
            }
            p = sws_http_range_ows(p, end);
            if (p == end || *p++ != '-') {
                return 0;
            }
            p = sws_http_range_ows(p, end);
            if (p < end && (sws_http_cls[*p] & C_DIGIT)) {
                b = sws_http_parse_pos(&p, end);
                if (a > b) {
                    goto next;      /* an invalid int-range */
                }
            } else {
                b = SWS_HTTP_OFF_MAX;
            }
            if (a == 0 && size == 0) {
                return -1;
            }
            if (a >= size) {
                goto next;          /* unsatisfiable */
            }
            b = (b >= size) ? size : b + 1;
        }

        if (n == max) {
            return -1;              /* too many */
        }
        ranges[n].start = a;
        ranges[n].end = b;
        n++;
        if (b - a > size - total) {
            over = 1;               /* (checked so that the sum cannot overflow) */
        } else {
            total += b - a;
        }

    next:
        p = sws_http_range_ows(p, end);
        if (p == end) {
            break;
        }
        if (*p++ != ',') {
            return 0;
        }
    }

    if (over) {
        return -1;                  /* overlapping ranges: the whole */
    }

    return n;
}


/* "HTTP/1.x SP 3DIGIT [SP reason]": the reason phrase is not checked
 * beyond having no CTL other than HTAB; a missing SP before an empty
 * reason is tolerated (some servers send "HTTP/1.1 200"). */
sws_int_t
sws_http_parse_status_line(const u_char *p, const u_char *end, sws_uint_t *status,
    sws_uint_t *version)
{
    sws_uint_t  code;

    if (end - p < 12 || memcmp(p, "HTTP/", 5) != 0 || p[5] != '1' || p[6] != '.'
        || p[7] < '0' || p[7] > '9' || p[8] != ' ')
    {
        return SWS_ERROR;
    }
    *version = p[7] == '0' ? SWS_HTTP_VERSION_10 : SWS_HTTP_VERSION_11;
    p += 9;
    if (p[0] < '1' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9') {
        return SWS_ERROR;
    }
    code = (sws_uint_t) (p[0] - '0') * 100 + (sws_uint_t) (p[1] - '0') * 10
           + (sws_uint_t) (p[2] - '0');
    p += 3;
    if (p < end && *p != ' ') {
        return SWS_ERROR;
    }
    for ( ; p < end; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            return SWS_ERROR;
        }
    }
    *status = code;
    return SWS_OK;
}
