/*
 * The Referer field as valid_referers reads it, nginx's way: the scheme
 * "http://" or "https://" in any case, then the host up to ':' or '/'
 * (lower-cased, at most 256 bytes), then the path from the next '/'
 * (after a port, if any).
 */
#include "sws_referer.h"

sws_int_t
sws_referer_parse(const u_char *field, size_t len, sws_referer_parts_t *p)
{
    size_t  i, skip = 0;

    if (len >= sizeof("http://i.ru") - 1) {
        if (sws_strncasecmp(field, (u_char *) "http://", 7) == 0) {
            skip = 7;
        } else if (sws_strncasecmp(field, (u_char *) "https://", 8) == 0) {
            skip = 8;
        }
    }
    if (skip == 0) {
        return SWS_DECLINED;
    }
    p->rest.data = (u_char *) field + skip;
    p->rest.len = len - skip;
    for (i = 0; i < p->rest.len && p->rest.data[i] != '/' && p->rest.data[i] != ':'; i++) {
        if (i == SWS_REFERER_MAX_HOST) {
            return SWS_ERROR;
        }
        p->host_buf[i] = sws_tolower(p->rest.data[i]);
    }
    p->host.data = p->host_buf;
    p->host.len = i;
    while (i < p->rest.len && p->rest.data[i] != '/') {
        i++;                                  /* a port */
    }
    p->path.data = p->rest.data + i;
    p->path.len = p->rest.len - i;
    return SWS_OK;
}
