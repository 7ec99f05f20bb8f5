/*
 * Path normalisation: percent-decoding and dot-segment removal (RFC 3986
 * 5.2.4) in one pass. Dot segments are resolved on the decoded path, so
 * "/%2e%2e/" is "..", and a decoded "%2F" separates segments like '/'.
 * The output is never longer than the input.
 */
#include "sws_http_parse.h"
#include "sws_swar.h"

/* Hex digit values; 0xff for anything else. */
static const uint8_t sws_http_hexval[256] = {
    [0 ... '0' - 1] = 0xff,
    ['0'] = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    [':' ... '@'] = 0xff,
    ['A'] = 10, 11, 12, 13, 14, 15,
    ['G' ... '`'] = 0xff,
    ['a'] = 10, 11, 12, 13, 14, 15,
    ['g' ... 0xff] = 0xff,
};


/*
 * The segment [seg, u) of dst has just ended. Drops "." and ".." (with the
 * segment before it). Returns the new end of dst, or NULL above the root.
 * dst[0] is always '/', and seg[-1] is the '/' that opened the segment.
 */
static u_char *
sws_http_end_segment(u_char *dst, u_char *seg, u_char *u)
{
    size_t  n = u - seg;

    if (n == 0 || n > 2 || seg[0] != '.' || (n == 2 && seg[1] != '.')) {
        return u;
    }

    if (n == 1) {
        return seg;                 /* "." */
    }

    /* "..": back to after the '/' that opened the previous segment */
    if (seg - 1 == dst) {
        return NULL;
    }
    for (u = seg - 2; *u != '/'; u--) { /* void */ }

    return u + 1;
}


sws_int_t
sws_http_normalize_path(const u_char *src, size_t len, u_char *dst,
    size_t *dst_len, int merge_slashes)
{
    const u_char  *p, *end;
    u_char        *u, *seg, c, h, l;

    if (len == 0 || src[0] != '/') {
        return SWS_HTTP_BAD_REQUEST;
    }

    end = src + len;
    u = dst;
    *u++ = '/';
    seg = u;

    for (p = src + 1; p < end; p++) {
        c = *p;

        if (c == '%') {
            if (end - p < 3) {
                return SWS_HTTP_BAD_REQUEST;
            }
            h = sws_http_hexval[p[1]];
            l = sws_http_hexval[p[2]];
            if ((h | l) == 0xff) {
                return SWS_HTTP_BAD_REQUEST;
            }
            c = (u_char) ((h << 4) | l);
            if (c == '\0') {
                return SWS_HTTP_BAD_REQUEST;
            }
            p += 2;
        }

        if (c != '/') {
            *u++ = c;
            continue;
        }

        /* a segment ends */
        if (u - seg <= 2) {
            u_char  *nu = sws_http_end_segment(dst, seg, u);

            if (nu == NULL) {
                return SWS_HTTP_BAD_REQUEST;
            }
            if (nu != u) {
                /* a dot segment was removed; its '/' stays in place */
                u = nu;
                seg = u;
                continue;
            }
        }

        if (merge_slashes && u[-1] == '/') {
            continue;
        }

        *u++ = '/';
        seg = u;
    }

    /* a trailing "." or ".." leaves the directory with its slash */
    if (u - seg <= 2) {
        u = sws_http_end_segment(dst, seg, u);
        if (u == NULL) {
            return SWS_HTTP_BAD_REQUEST;
        }
    }

    *dst_len = u - dst;
    return SWS_OK;
}


/* 0x80 in each byte of w equal to c, 0 in the others (exact: no carry
 * between bytes). */
static inline uint64_t
sws_http_bytes_eq(uint64_t w, u_char c)
{
    uint64_t  x = w ^ (c * SWS_SWAR_ONES);
    uint64_t  t = (x & (0x7f * SWS_SWAR_ONES)) + 0x7f * SWS_SWAR_ONES;

    return ~(t | x | 0x7f * SWS_SWAR_ONES);
}

void
sws_http_path_exten(const sws_str_t *path, sws_str_t *exten)
{
    u_char    *p, *end;
    uint64_t   m = 0;

    /* Backwards to the last '.' or '/', eight bytes a step (every typed
     * response looks at its URI's extension). */
    end = path->data + path->len;
    for (p = end; p - path->data >= 8; p -= 8) {
        m = sws_load64(p - 8);
        m = sws_http_bytes_eq(m, '.') | sws_http_bytes_eq(m, '/');
        if (m) {
            p = p - 8 + ((63 - __builtin_clzll(m)) >> 3) + 1;   /* after the last */
            break;
        }
    }
    for ( ; m == 0 && p > path->data && p[-1] != '.' && p[-1] != '/'; p--) {
        /* void */
    }
    if (p > path->data && p[-1] == '.') {
        exten->data = p;
        exten->len = end - p;
        return;
    }

    exten->data = end;
    exten->len = 0;
}
