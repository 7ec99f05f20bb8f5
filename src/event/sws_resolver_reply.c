/*
 * A DNS answer into addresses and a TTL: the part of the resolver that
 * reads what the network sent (c-ares's parsers do the decoding; this
 * keeps the addresses in our form and the smallest TTL). Fuzzed by
 * tests/fuzz/fuzz_dns_reply.c.
 */
#include <string.h>
#include <netinet/in.h>
#include <arpa/nameser.h>
#include <ares.h>
#include <scalws/sws_types.h>
#include <scalws/sws_resolver.h>
#include "sws_resolver_internal.h"

sws_int_t
sws_resolver_status(int ares_status)
{
    switch (ares_status) {
    case ARES_SUCCESS:   return SWS_RESOLVE_OK;
    case ARES_EFORMERR:
    case ARES_EBADRESP:
    case ARES_EBADNAME:
    case ARES_EBADQUERY: return SWS_RESOLVE_FORMERR;
    case ARES_ENOTFOUND:
    case ARES_ENODATA:   return SWS_RESOLVE_NXDOMAIN;
    case ARES_ENOTIMP:   return SWS_RESOLVE_NOTIMP;
    case ARES_EREFUSED:  return SWS_RESOLVE_REFUSED;
    case ARES_ETIMEOUT:  return SWS_RESOLVE_TIMEDOUT;
    default:             return SWS_RESOLVE_SERVFAIL;   /* ESERVFAIL, ECONNREFUSED ... */
    }
}

sws_int_t
sws_resolver_parse_reply(const u_char *buf, size_t len, int family,
    sws_resolver_addr_t *addrs, sws_uint_t max, sws_uint_t *naddrs, uint32_t *ttl)
{
    struct ares_addrttl   a4[SWS_RESOLVER_MAX_ADDRS];
    struct ares_addr6ttl  a6[SWS_RESOLVER_MAX_ADDRS];
    struct sockaddr_in   *sin;
    struct sockaddr_in6  *sin6;
    int                   n = SWS_RESOLVER_MAX_ADDRS, rc, i, t;
    uint32_t              min = UINT32_MAX;

    if (len > INT32_MAX) {
        return SWS_RESOLVE_FORMERR;
    }
    rc = family == AF_INET6 ? ares_parse_aaaa_reply(buf, (int) len, NULL, a6, &n)
                            : ares_parse_a_reply(buf, (int) len, NULL, a4, &n);
    if (rc != ARES_SUCCESS) {
        return rc == ARES_ENODATA ? SWS_RESOLVE_NXDOMAIN : SWS_RESOLVE_FORMERR;
    }
    if (n < 0 || n > SWS_RESOLVER_MAX_ADDRS) {
        return SWS_RESOLVE_FORMERR;             /* never: c-ares keeps to n */
    }
    for (i = 0; i < n && *naddrs < max; i++) {
        sws_resolver_addr_t *a = &addrs[(*naddrs)++];

        memset(a, 0, sizeof(*a));
        if (family == AF_INET6) {
            sin6 = (struct sockaddr_in6 *) &a->sockaddr;
            sin6->sin6_family = AF_INET6;
            memcpy(&sin6->sin6_addr, &a6[i].ip6addr, sizeof(sin6->sin6_addr));
            a->socklen = sizeof(struct sockaddr_in6);
            t = a6[i].ttl;
        } else {
            sin = (struct sockaddr_in *) &a->sockaddr;
            sin->sin_family = AF_INET;
            sin->sin_addr = a4[i].ipaddr;
            a->socklen = sizeof(struct sockaddr_in);
            t = a4[i].ttl;
        }
        /* RFC 2181 8: a TTL with the top bit set counts as 0 */
        if ((uint32_t) (t < 0 ? 0 : t) < min) {
            min = (uint32_t) (t < 0 ? 0 : t);
        }
    }
    if (n == 0) {
        return SWS_RESOLVE_NXDOMAIN;
    }
    if (min != UINT32_MAX && min < *ttl) {
        *ttl = min;
    }
    return SWS_RESOLVE_OK;
}
