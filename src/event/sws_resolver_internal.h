/*
 * The resolver's parts inside the core (sws_resolver.c: queries and the
 * event loop; sws_resolver_conf.c: the directive and the shared cache;
 * sws_resolver_reply.c: answers into addresses).
 */
#ifndef SWS_RESOLVER_INTERNAL_H
#define SWS_RESOLVER_INTERNAL_H

#include <scalws/scalws.h>
#include <scalws/sws_resolver.h>
#include <scalws/sws_keyed_zone.h>

/* The name servers one channel asks, at most (as nginx's resolver). */
#define SWS_RESOLVER_MAX_SERVERS  8

/* A name's answer in the shared cache. */
typedef struct {
    sws_msec_t    expire;          /* monotonic ms, the same in every worker */
    uint32_t      ttl;
    uint16_t      status;          /* SWS_RESOLVE_OK or NXDOMAIN (valid= only) */
    uint16_t      naddrs;
    struct {
        uint8_t   family;          /* AF_INET, AF_INET6 */
        uint8_t   addr[16];
    } addrs[SWS_RESOLVER_MAX_ADDRS];
} sws_resolver_cached_t;

struct sws_resolver_s {
    sws_str_t            servers;    /* "a:p,[b]:p": c-ares's csv, the cache key's start */
    sws_msec_t           valid;      /* valid=: overrides the TTLs (0: theirs) */
    unsigned             ipv4:1;
    unsigned             ipv6:1;
    sws_str_t            status_zone;
    sws_keyed_zone_t    *status;     /* status_zone's counters, or NULL */
    sws_keyed_zone_t    *cache;      /* the shared answers */
    sws_log_t           *log;        /* the cycle's error log */
    struct sws_resolver_worker_s *w; /* a worker's channel, made on first use */
    sws_resolver_t      *next;       /* the configuration's resolvers */
};

/*
 * An answer to one question (family AF_INET: A, AF_INET6: AAAA): its
 * addresses appended to addrs (*naddrs in and out, at most max) and the
 * smallest TTL of them into *ttl (left as it is when there are none).
 * SWS_RESOLVE_OK: some address; SWS_RESOLVE_NXDOMAIN: none;
 * SWS_RESOLVE_FORMERR: the answer is malformed.
 */
sws_int_t sws_resolver_parse_reply(const u_char *buf, size_t len, int family,
    sws_resolver_addr_t *addrs, sws_uint_t max, sws_uint_t *naddrs, uint32_t *ttl);

/* A status zone's counters (sws_keyed_zone_counters): the questions
 * asked (A and AAAA each count) and their answers by outcome. */
#define SWS_RESOLVER_QUERIES    0
#define SWS_RESOLVER_ANSWERS    1      /* NOERROR with addresses */
#define SWS_RESOLVER_NXDOMAIN   2      /* also: the name has no address */
#define SWS_RESOLVER_SERVFAIL   3
#define SWS_RESOLVER_TIMEOUTS   4      /* no answer in c-ares's retries */
#define SWS_RESOLVER_ERRORS     5      /* FORMERR, NOTIMP, REFUSED, others */

/* A c-ares status as nginx's number. */
sws_int_t sws_resolver_status(int ares_status);

/* The cache, with the zone's lock held inside: the answer of res for
 * name (lower case), or status -1 when none is there or it expired. */
void sws_resolver_cache_get(sws_resolver_t *res, const sws_str_t *name,
    sws_resolver_result_t *out, sws_resolver_addr_t *addrs);
void sws_resolver_cache_put(sws_resolver_t *res, const sws_str_t *name,
    const sws_resolver_result_t *r);

/* The worker exits (sws_event_loop.c). */
void sws_resolver_exit_worker(void);

#endif
