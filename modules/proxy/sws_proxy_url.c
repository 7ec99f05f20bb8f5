/*
 * proxy_pass's URL into its parts: the scheme, the authority (what the
 * upstream framework connects to), what Host says, the port, and the URI
 * part. Used once at configuration time for a constant URL, and per
 * request for one with variables.
 *
 *   http[s]://NAME | host[:port] | [v6][:port] [/uri]
 *   http[s]://unix:/path [:/uri]
 */
#include "sws_proxy.h"

const char *
sws_proxy_parse_url(const sws_str_t *url, sws_proxy_target_t *t, sws_str_t *auth)
{
    u_char      *p, *last, *slash, *colon;
    size_t       skip;
    const char  *dport;

    sws_memzero(t, sizeof(*t));
    if (url->len >= 8 && sws_strncasecmp(url->data, (u_char *) "https://", 8) == 0) {
        t->ssl = 1;
        skip = 8;
        dport = "443";
    } else if (url->len >= 7 && sws_strncasecmp(url->data, (u_char *) "http://", 7) == 0) {
        skip = 7;
        dport = "80";
    } else {
        return "needs an http:// or https:// URL";
    }
    t->default_port = t->ssl ? 443 : 80;
    p = url->data + skip;
    last = url->data + url->len;

    if (last - p > 5 && sws_strncasecmp(p, (u_char *) "unix:", 5) == 0) {
        /* unix:/path, with ":/uri" after the path for a URI part */
        colon = memchr(p + 5, ':', (size_t) (last - p - 5));
        auth->data = p;
        auth->len = (size_t) ((colon ? colon : last) - p);
        if (colon) {
            if (colon + 1 == last || colon[1] != '/') {
                return "has an invalid URI after the unix socket path";
            }
            t->uri.data = colon + 1;
            t->uri.len = (size_t) (last - colon - 1);
        }
        sws_str_set(&t->host, "localhost");
        sws_str_set(&t->port, "");
    } else {
        slash = memchr(p, '/', (size_t) (last - p));
        auth->data = p;
        auth->len = (size_t) ((slash ? slash : last) - p);
        if (slash) {
            t->uri.data = slash;
            t->uri.len = (size_t) (last - slash);
        }
        if (auth->len == 0 || memchr(auth->data, '?', auth->len)
            || memchr(auth->data, '#', auth->len) || memchr(auth->data, '@', auth->len))
        {
            return "has an invalid host";
        }
        /* Host: as written, without the scheme's default port. */
        t->host = *auth;
        colon = auth->data[0] == '[' ? memchr(auth->data, ']', auth->len) : auth->data;
        colon = colon ? memchr(colon, ':', (size_t) (auth->data + auth->len - colon)) : NULL;
        if (colon) {
            t->port.data = colon + 1;
            t->port.len = (size_t) (auth->data + auth->len - colon - 1);
            if (t->port.len == strlen(dport) && memcmp(t->port.data, dport, t->port.len) == 0) {
                t->host.len = (size_t) (colon - auth->data);
            }
        } else {
            t->port.data = (u_char *) dport;
            t->port.len = strlen(dport);
        }
    }
    t->url.data = url->data;
    t->url.len = (size_t) (auth->data + auth->len - url->data);
    return NULL;
}
