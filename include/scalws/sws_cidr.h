/*
 * Addresses and networks of configurations: allow/deny, set_real_ip_from,
 * proxy_cache_purge, geo. One parser and one matcher for all of them.
 */
#ifndef SWS_CIDR_H
#define SWS_CIDR_H

#include <sys/socket.h>
#include <scalws/sws_types.h>

typedef struct {
    int      family;      /* AF_INET, AF_INET6; AF_UNIX ("unix:"); 0 ("all") */
    uint8_t  addr[16];    /* the network, in network order, masked */
    uint8_t  mask[16];
    uint8_t  bits;        /* the prefix length */
} sws_cidr_t;

/* Flags of sws_cidr_parse: which words besides addresses it takes. */
#define SWS_CIDR_ALL   0x1     /* "all": family 0, matches everything */
#define SWS_CIDR_UNIX  0x2     /* "unix:": family AF_UNIX, matches unix-socket clients */

/*
 * "a.b.c.d", "a.b.c.d/N", an IPv6 address with or without "/N" (and the
 * words flags allows). SWS_OK; SWS_DONE when address bits beyond the prefix
 * were set (they are dropped: nginx warns "low address bits of ... are
 * meaningless"); SWS_ERROR when it is none of these.
 */
sws_int_t sws_cidr_parse(const u_char *text, size_t len, sws_uint_t flags, sws_cidr_t *cidr);

/* Does an address (family and its 4 or 16 bytes, see sws_cidr_addr) fall
 * in the network? */
int sws_cidr_match(const sws_cidr_t *cidr, int family, const uint8_t *addr);

/* A socket address as a family and bytes for sws_cidr_match: an IPv4-mapped
 * IPv6 address counts as IPv4. Returns AF_INET, AF_INET6, AF_UNIX, or -1. */
int sws_cidr_addr(const struct sockaddr *sa, uint8_t addr[16]);

/* The same for an address in text ("127.0.0.1", "::1", "unix:"). */
int sws_cidr_addr_text(const u_char *text, size_t len, uint8_t addr[16]);

#endif
