/*
 * The client's address as a request sees it. It starts as the
 * connection's peer; a module that knows better (realip: a trusted proxy
 * named the client in a header, or the PROXY protocol did) replaces it
 * for the request only, so the next request of the connection (or
 * another HTTP/2 stream) starts from the peer again.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_http_core.h"

const struct sockaddr *
sws_http_remote_sockaddr(sws_http_request_t *r, socklen_t *len)
{
    if (len) {
        *len = r->socklen;
    }
    return r->sockaddr;
}

sws_int_t
sws_http_set_remote_addr(sws_http_request_t *r, const struct sockaddr *sa, socklen_t len)
{
    char        text[INET6_ADDRSTRLEN];
    const char *p = text;
    void       *copy;

    if (len == 0 || len > sizeof(struct sockaddr_storage)) {
        return SWS_ERROR;
    }
    switch (sa->sa_family) {
    case AF_INET:
        inet_ntop(AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, text, sizeof(text));
        break;
    case AF_INET6:
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *) sa)->sin6_addr, text,
                  sizeof(text));
        break;
    default:
        p = "unix:";
    }
    copy = sws_palloc(r->pool, sizeof(struct sockaddr_storage));
    if (copy == NULL || sws_str_from_cstr(r->pool, &r->addr_text, p) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_memzero(copy, sizeof(struct sockaddr_storage));
    memcpy(copy, sa, len);
    r->sockaddr = copy;
    r->socklen = len;
    return SWS_OK;
}
