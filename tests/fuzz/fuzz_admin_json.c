/*
 * The admin module's JSON string escaping (modules/admin/sws_admin_json.c,
 * compiled in): any bytes come out as the inside of a JSON string that
 * decodes to the input with each byte that is not well-formed UTF-8
 * replaced by U+FFFD, with nothing unescaped that JSON forbids; a buffer
 * too small (its size from the first input byte) overflows without a byte
 * written past its end.
 */
#include <stdlib.h>
#include <string.h>

#include "../../modules/admin/sws_admin_json.c"

static int
hexval(u_char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    abort();
}

/* The JSON string's content decoded (the escapes the writer makes). */
static size_t
decode(const u_char *p, const u_char *last, u_char *out)
{
    u_char  *o = out;
    unsigned cp;

    while (p < last) {
        if (*p < 0x20 || *p == '"') {
            abort();                   /* must have been escaped */
        }
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        if (last - p < 2) {
            abort();
        }
        switch (p[1]) {
        case '"': case '\\': *o++ = p[1]; p += 2; break;
        case 'n': *o++ = '\n'; p += 2; break;
        case 'r': *o++ = '\r'; p += 2; break;
        case 't': *o++ = '\t'; p += 2; break;
        case 'u':
            if (last - p < 6) {
                abort();
            }
            cp = (unsigned) (hexval(p[2]) << 12 | hexval(p[3]) << 8 | hexval(p[4]) << 4
                             | hexval(p[5]));
            if (cp < 0x20) {
                *o++ = (u_char) cp;
            } else if (cp == 0xfffd) {
                *o++ = 0xef; *o++ = 0xbf; *o++ = 0xbd;
            } else {
                abort();               /* the writer makes no other */
            }
            p += 6;
            break;
        default:
            abort();
        }
    }
    return (size_t) (o - out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_admin_out_t  o;
    u_char          *buf, *want, *got;
    size_t           i, n, wn = 0, cap = 6 * size + 8, small;

    buf = malloc(cap);
    want = malloc(3 * size + 1);
    got = malloc(3 * size + 1);
    if (buf == NULL || want == NULL || got == NULL) {
        abort();
    }
    sws_admin_out_init(&o, buf, cap);
    sws_admin_json_escape(&o, data, size);
    if (o.overflow) {
        abort();
    }
    for (i = 0; i < size; i += n) {
        n = sws_admin_utf8_len(data + i, size - i);
        if (n == 0) {
            want[wn++] = 0xef; want[wn++] = 0xbf; want[wn++] = 0xbd;
            n = 1;
        } else {
            memcpy(want + wn, data + i, n);
            wn += n;
        }
    }
    n = decode(buf, o.pos, got);
    if (n != wn || memcmp(got, want, n) != 0) {
        abort();
    }

    /* a smaller buffer: overflow, nothing past its end */
    small = size ? data[0] % (size_t) (o.pos - buf + 1) : 0;
    memset(buf, 0xaa, cap);
    sws_admin_out_init(&o, buf, small);
    sws_admin_json_escape(&o, data, size);
    if (o.pos > buf + small || (small < cap && buf[small] != 0xaa)) {
        abort();
    }
    free(buf);
    free(want);
    free(got);
    return 0;
}
