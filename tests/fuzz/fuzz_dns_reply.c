/*
 * libFuzzer target: a DNS answer into addresses and a TTL
 * (src/event/sws_resolver_reply.c, on c-ares's parsers), for A and AAAA
 * questions, the first byte choosing the family and the room left. The
 * verdict must be one of the three, the addresses within the room and of
 * the family asked, the TTL never raised, and the same bytes twice give
 * the same result.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "sws_resolver_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sws_int_t
parse(const uint8_t *p, size_t n, int family, sws_uint_t max, sws_resolver_addr_t *addrs,
    sws_uint_t *naddrs, uint32_t *ttl)
{
    *naddrs = 0;
    *ttl = 86400;
    return sws_resolver_parse_reply(p, n, family, addrs, max, naddrs, ttl);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_resolver_addr_t  a1[SWS_RESOLVER_MAX_ADDRS], a2[SWS_RESOLVER_MAX_ADDRS];
    sws_uint_t           n1, n2, max, i;
    uint32_t             t1, t2;
    sws_int_t            rc1, rc2;
    int                  family;

    if (size < 1) {
        return 0;
    }
    family = (data[0] & 1) ? AF_INET6 : AF_INET;
    max = (data[0] >> 1) % (SWS_RESOLVER_MAX_ADDRS + 1);
    data++;
    size--;

    rc1 = parse(data, size, family, max, a1, &n1, &t1);
    rc2 = parse(data, size, family, max, a2, &n2, &t2);
    if (rc1 != SWS_RESOLVE_OK && rc1 != SWS_RESOLVE_NXDOMAIN && rc1 != SWS_RESOLVE_FORMERR) {
        abort();
    }
    if (rc1 != rc2 || n1 != n2 || t1 != t2 || n1 > max || t1 > 86400) {
        abort();
    }
    if (rc1 != SWS_RESOLVE_OK && n1 != 0) {
        abort();
    }
    for (i = 0; i < n1; i++) {
        if (a1[i].sockaddr.ss_family != family
            || a1[i].socklen != (family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                   : sizeof(struct sockaddr_in))
            || memcmp(&a1[i], &a2[i], sizeof(a1[i])) != 0)
        {
            abort();
        }
    }
    return 0;
}
