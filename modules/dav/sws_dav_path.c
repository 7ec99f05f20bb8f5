/*
 * The path of a Destination header (RFC 4918 10.3) decoded: percent
 * escapes undone, "." segments dropped, and what must never reach the
 * file system refused: a bad escape, a NUL, a ".." segment (written or
 * escaped). Pure, so that tests/fuzz/fuzz_dav_path.c drives it alone.
 */
#include "sws_dav_path.h"

static int
sws_dav_hex(u_char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (u_char) (c | 0x20);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

size_t
sws_dav_decode_path(const u_char *p, const u_char *last, u_char *out)
{
    u_char *d = out, *seg = out;
    int     hi, lo;

    while (p < last) {
        u_char c = *p++;
        if (c == '%') {
            if (last - p < 2 || (hi = sws_dav_hex(p[0])) < 0 || (lo = sws_dav_hex(p[1])) < 0) {
                return SWS_DAV_PATH_INVALID;
            }
            c = (u_char) (hi << 4 | lo);
            p += 2;
        }
        if (c == '\0') {
            return SWS_DAV_PATH_INVALID;
        }
        if (c == '/') {
            /* the segment just ended: "." goes, ".." is refused */
            if (d - seg == 2 && seg[0] == '/' && seg[1] == '.') {
                d = seg;
            } else if (d - seg == 3 && seg[0] == '/' && seg[1] == '.' && seg[2] == '.') {
                return SWS_DAV_PATH_INVALID;
            }
            seg = d;
        }
        *d++ = c;
    }
    if (d - seg == 3 && seg[0] == '/' && seg[1] == '.' && seg[2] == '.') {
        return SWS_DAV_PATH_INVALID;
    }
    if (d - seg == 2 && seg[0] == '/' && seg[1] == '.') {
        d = seg + 1;                    /* "/x/." is "/x/" */
    }
    *d = '\0';
    return (size_t) (d - out);
}
