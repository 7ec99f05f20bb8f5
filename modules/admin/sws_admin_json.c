/* The admin module's output buffer and JSON writer (sws_admin_json.h). */
#include <string.h>
#include "sws_admin_json.h"

void
sws_admin_out_init(sws_admin_out_t *o, u_char *buf, size_t size)
{
    o->start = buf;
    o->pos = buf;
    o->end = buf + size;
    o->overflow = 0;
    o->depth = 0;
    o->has_value = 0;
}

void
sws_admin_out_bytes(sws_admin_out_t *o, const void *p, size_t n)
{
    if (o->overflow || (size_t) (o->end - o->pos) < n) {
        o->overflow = 1;
        return;
    }
    memcpy(o->pos, p, n);
    o->pos += n;
}

void
sws_admin_out_cstr(sws_admin_out_t *o, const char *s)
{
    sws_admin_out_bytes(o, s, strlen(s));
}

void
sws_admin_out_uint(sws_admin_out_t *o, uint64_t n)
{
    u_char  digits[20], *p = digits + sizeof(digits);

    do {
        *--p = (u_char) ('0' + n % 10);
        n /= 10;
    } while (n);
    sws_admin_out_bytes(o, p, (size_t) (digits + sizeof(digits) - p));
}

void
sws_admin_out_milli(sws_admin_out_t *o, uint64_t n)
{
    u_char  frac[4];

    sws_admin_out_uint(o, n / 1000);
    frac[0] = '.';
    frac[1] = (u_char) ('0' + n / 100 % 10);
    frac[2] = (u_char) ('0' + n / 10 % 10);
    frac[3] = (u_char) ('0' + n % 10);
    sws_admin_out_bytes(o, frac, 4);
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), 0 if it is not. */
static size_t
sws_admin_utf8_len(const u_char *p, size_t n)
{
    u_char  c = p[0], lo = 0x80, hi = 0xbf;
    size_t  len, i;

    if (c < 0x80) {
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) {
            lo = 0xa0;
        } else if (c == 0xed) {
            hi = 0x9f;
        }
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) {
            lo = 0x90;
        } else if (c == 0xf4) {
            hi = 0x8f;
        }
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (i = 2; i < len; i++) {
        if (p[i] < 0x80 || p[i] > 0xbf) {
            return 0;
        }
    }
    return len;
}

void
sws_admin_json_escape(sws_admin_out_t *o, const u_char *s, size_t len)
{
    static const char  hex[] = "0123456789abcdef";
    const u_char      *p = s, *last = s + len, *run = s;
    u_char             esc[6];
    size_t             n;

    while (p < last) {
        if (*p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) {
            p++;
            continue;
        }
        n = *p >= 0x80 ? sws_admin_utf8_len(p, (size_t) (last - p)) : 0;
        if (n) {
            p += n;                    /* well-formed: as it is */
            continue;
        }
        sws_admin_out_bytes(o, run, (size_t) (p - run));
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = *p;
            sws_admin_out_bytes(o, esc, 2);
        } else if (*p == '\n') {
            sws_admin_out_bytes(o, "\\n", 2);
        } else if (*p == '\r') {
            sws_admin_out_bytes(o, "\\r", 2);
        } else if (*p == '\t') {
            sws_admin_out_bytes(o, "\\t", 2);
        } else if (*p < 0x20) {
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = (u_char) hex[*p >> 4];
            esc[5] = (u_char) hex[*p & 0xf];
            sws_admin_out_bytes(o, esc, 6);
        } else {
            sws_admin_out_bytes(o, "\\ufffd", 6);   /* not UTF-8 */
        }
        p++;
        run = p;
    }
    sws_admin_out_bytes(o, run, (size_t) (p - run));
}

/* The comma and the key before a value at the current level. */
static void
sws_admin_json_member(sws_admin_out_t *o, const char *key)
{
    uint32_t  bit = 1u << o->depth;

    if (o->has_value & bit) {
        sws_admin_out_bytes(o, ",", 1);
    }
    o->has_value |= bit;
    if (key) {
        sws_admin_out_bytes(o, "\"", 1);
        sws_admin_json_escape(o, (const u_char *) key, strlen(key));
        sws_admin_out_bytes(o, "\":", 2);
    }
}

void
sws_admin_json_open(sws_admin_out_t *o, const char *key, char bracket)
{
    sws_admin_json_member(o, key);
    sws_admin_out_bytes(o, &bracket, 1);
    if (o->depth + 1 >= SWS_ADMIN_JSON_DEPTH) {
        o->overflow = 1;               /* deeper than any document of ours */
        return;
    }
    o->depth++;
    o->has_value &= ~(1u << o->depth);
}

void
sws_admin_json_close(sws_admin_out_t *o, char bracket)
{
    if (o->depth > 0) {
        o->depth--;
    }
    sws_admin_out_bytes(o, &bracket, 1);
}

void
sws_admin_json_str(sws_admin_out_t *o, const char *key, const u_char *s, size_t len)
{
    sws_admin_json_member(o, key);
    sws_admin_out_bytes(o, "\"", 1);
    sws_admin_json_escape(o, s, len);
    sws_admin_out_bytes(o, "\"", 1);
}

void
sws_admin_json_cstr(sws_admin_out_t *o, const char *key, const char *s)
{
    if (s == NULL) {
        sws_admin_json_member(o, key);
        sws_admin_out_bytes(o, "null", 4);
        return;
    }
    sws_admin_json_str(o, key, (const u_char *) s, strlen(s));
}

void
sws_admin_json_uint(sws_admin_out_t *o, const char *key, uint64_t n)
{
    sws_admin_json_member(o, key);
    sws_admin_out_uint(o, n);
}

void
sws_admin_json_int(sws_admin_out_t *o, const char *key, int64_t n)
{
    sws_admin_json_member(o, key);
    if (n < 0) {
        sws_admin_out_bytes(o, "-", 1);
        sws_admin_out_uint(o, (uint64_t) 0 - (uint64_t) n);
        return;
    }
    sws_admin_out_uint(o, (uint64_t) n);
}

void
sws_admin_json_bool(sws_admin_out_t *o, const char *key, int b)
{
    sws_admin_json_member(o, key);
    if (b) {
        sws_admin_out_bytes(o, "true", 4);
    } else {
        sws_admin_out_bytes(o, "false", 5);
    }
}
