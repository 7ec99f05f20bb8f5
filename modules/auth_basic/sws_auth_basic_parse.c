/*
 * The parsers of outside input of auth_basic: the lines of a password file
 * (the Authorization field and base64 are the core's). Pure functions over
 * bytes, so that tests/fuzz/fuzz_auth_basic.c can run them alone.
 */
#include "sws_auth_basic.h"

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
