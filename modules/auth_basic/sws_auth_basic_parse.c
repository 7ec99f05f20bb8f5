/*
 * The parsers of outside input of auth_basic: the Authorization field a
 * client sends, the lines of a password file, base64. Pure functions over
 * bytes, so that tests/fuzz/fuzz_auth_basic.c can run them alone.
 */
#include "sws_auth_basic.h"

static const char  sws_auth_basic_b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0..63, or 64 for a byte outside the alphabet */
static u_char
sws_auth_basic_b64_value(u_char c)
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
sws_auth_basic_decode_base64(u_char *dst, const u_char *src, size_t len)
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
        v = sws_auth_basic_b64_value(src[i]);
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
sws_auth_basic_encode_base64(u_char *dst, const u_char *src, size_t len)
{
    uint32_t  v;

    for (; len >= 3; src += 3, len -= 3) {
        v = ((uint32_t) src[0] << 16) | ((uint32_t) src[1] << 8) | src[2];
        *dst++ = (u_char) sws_auth_basic_b64[v >> 18];
        *dst++ = (u_char) sws_auth_basic_b64[(v >> 12) & 0x3f];
        *dst++ = (u_char) sws_auth_basic_b64[(v >> 6) & 0x3f];
        *dst++ = (u_char) sws_auth_basic_b64[v & 0x3f];
    }
    if (len) {
        v = (uint32_t) src[0] << 16 | (len == 2 ? (uint32_t) src[1] << 8 : 0);
        *dst++ = (u_char) sws_auth_basic_b64[v >> 18];
        *dst++ = (u_char) sws_auth_basic_b64[(v >> 12) & 0x3f];
        *dst++ = len == 2 ? (u_char) sws_auth_basic_b64[(v >> 6) & 0x3f] : '=';
        *dst++ = '=';
    }
    return dst;
}

sws_int_t
sws_auth_basic_parse_authorization(const u_char *value, size_t len, u_char *buf,
    sws_str_t *user, sws_str_t *password)
{
    const u_char  *p = value, *end = value + len, *b64;
    u_char        *colon;
    ssize_t        n, i;

    if (len < 6 || sws_strncasecmp(p, (const u_char *) "basic", 5) != 0
        || (p[5] != ' ' && p[5] != '\t'))
    {
        return SWS_DECLINED;
    }
    p += 5;
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    while (end > p && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    b64 = p;
    if (end == b64 || (size_t) (end - b64) > SWS_AUTH_BASIC_MAX_CREDENTIALS / 3 * 4) {
        return SWS_DECLINED;
    }
    n = sws_auth_basic_decode_base64(buf, b64, (size_t) (end - b64));
    if (n <= 0) {
        return SWS_DECLINED;
    }
    /* a NUL would cut the password short for crypt(); no control bytes */
    for (i = 0; i < n; i++) {
        if (buf[i] < 0x20 || buf[i] == 0x7f) {
            return SWS_DECLINED;
        }
    }
    colon = memchr(buf, ':', (size_t) n);
    if (colon == NULL) {
        return SWS_DECLINED;
    }
    user->data = buf;
    user->len = (size_t) (colon - buf);
    password->data = colon + 1;
    password->len = (size_t) (buf + n - colon - 1);
    return SWS_OK;
}

int
sws_auth_basic_next_line(const u_char **pos, const u_char *end, sws_str_t *line)
{
    const u_char  *p = *pos, *lf;

    if (p >= end) {
        return 0;
    }
    lf = memchr(p, '\n', (size_t) (end - p));
    line->data = (u_char *) p;
    line->len = (size_t) ((lf ? lf : end) - p);
    if (line->len && line->data[line->len - 1] == '\r') {
        line->len--;
    }
    *pos = lf ? lf + 1 : end;
    return 1;
}

sws_int_t
sws_auth_basic_parse_line(const sws_str_t *line, sws_str_t *user, sws_str_t *hash)
{
    u_char  *p = line->data, *end = line->data + line->len, *colon, *next;

    if (line->len == 0 || p[0] == '#') {
        return SWS_DECLINED;
    }
    colon = memchr(p, ':', line->len);
    if (colon == NULL || colon == p) {
        return SWS_DECLINED;
    }
    user->data = p;
    user->len = (size_t) (colon - p);
    hash->data = colon + 1;
    next = memchr(colon + 1, ':', (size_t) (end - colon - 1));
    hash->len = (size_t) ((next ? next : end) - hash->data);
    return SWS_OK;
}
