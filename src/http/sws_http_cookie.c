/* Finding one cookie in a Cookie field (see sws_http_cookie.h). */
#include <string.h>
#include <scalws/sws_string.h>
#include "sws_http_cookie.h"

int
sws_http_cookie_find(const u_char *field, size_t len, const u_char *name, size_t nlen,
    sws_str_t *value)
{
    const u_char  *p = field, *end = field + len, *semi, *eq;

    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ';')) {
            p++;
        }
        semi = memchr(p, ';', (size_t) (end - p));
        if (semi == NULL) {
            semi = end;
        }
        eq = memchr(p, '=', (size_t) (semi - p));
        if (eq != NULL && (size_t) (eq - p) == nlen && sws_strncasecmp(p, name, nlen) == 0) {
            value->data = (u_char *) eq + 1;
            value->len = (size_t) (semi - eq - 1);
            return 1;
        }
        p = semi;
    }
    return 0;
}
