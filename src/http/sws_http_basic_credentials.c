/*
 * HTTP Basic credentials (RFC 7617) from an Authorization value: the
 * auth_basic module checks them, $remote_user shows their user (as nginx's,
 * whether or not the location checks them). Pure: the fuzz target
 * (tests/fuzz/fuzz_auth_basic.c) runs it alone.
 */
#include <scalws/scalws.h>

sws_int_t
sws_http_parse_basic_credentials(const u_char *value, size_t len, u_char *buf,
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
    if (end == b64 || (size_t) (end - b64) > SWS_HTTP_MAX_CREDENTIALS / 3 * 4) {
        return SWS_DECLINED;
    }
    n = sws_decode_base64(buf, b64, (size_t) (end - b64));
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
