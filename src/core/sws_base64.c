/*
 * base64 (RFC 4648, the standard alphabet): HTTP Basic credentials, the
 * {SHA} password schemes, anything else a module needs.
 */
#include <scalws/sws_string.h>

static const char  sws_base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0..63, or 64 for a byte outside the alphabet */
static u_char
sws_base64_value(u_char c)
{
    if (c >= 'A' && c <= 'Z') {
        return (u_char) (c - 'A');
    }
    if (c >= 'a' && c <= 'z') {
        return (u_char) (c - 'a' + 26);
    }
    if (c >= '0' && c <= '9') {
        return (u_char) (c - '0' + 52);
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return 64;
}

ssize_t
sws_decode_base64(u_char *dst, const u_char *src, size_t len)
{
    u_char    *d = dst, v;
    uint32_t   acc = 0;
    size_t     i, n, pad = 0;

    /* "=" only at the end, at most two, and only to complete a quantum */
    while (pad < 2 && len > 0 && src[len - 1] == '=') {
        len--;
        pad++;
    }
    if (len % 4 == 1 || (pad && (len + pad) % 4 != 0)) {
        return -1;
    }
    for (i = 0, n = 0; i < len; i++) {
        v = sws_base64_value(src[i]);
        if (v == 64) {
            return -1;
        }
        acc = (acc << 6) | v;
        if (++n == 4) {
            *d++ = (u_char) (acc >> 16);
            *d++ = (u_char) (acc >> 8);
            *d++ = (u_char) acc;
            acc = 0;
            n = 0;
        }
    }
    if (n == 2) {
        *d++ = (u_char) (acc >> 4);
    } else if (n == 3) {
        *d++ = (u_char) (acc >> 10);
        *d++ = (u_char) (acc >> 2);
    }
    return d - dst;
}

u_char *
sws_encode_base64(u_char *dst, const u_char *src, size_t len)
{
    uint32_t  v;

    for (; len >= 3; src += 3, len -= 3) {
        v = ((uint32_t) src[0] << 16) | ((uint32_t) src[1] << 8) | src[2];
        *dst++ = (u_char) sws_base64_alphabet[v >> 18];
        *dst++ = (u_char) sws_base64_alphabet[(v >> 12) & 0x3f];
        *dst++ = (u_char) sws_base64_alphabet[(v >> 6) & 0x3f];
        *dst++ = (u_char) sws_base64_alphabet[v & 0x3f];
    }
    if (len) {
        v = (uint32_t) src[0] << 16 | (len == 2 ? (uint32_t) src[1] << 8 : 0);
        *dst++ = (u_char) sws_base64_alphabet[v >> 18];
        *dst++ = (u_char) sws_base64_alphabet[(v >> 12) & 0x3f];
        *dst++ = len == 2 ? (u_char) sws_base64_alphabet[(v >> 6) & 0x3f] : '=';
        *dst++ = '=';
    }
    return dst;
}
