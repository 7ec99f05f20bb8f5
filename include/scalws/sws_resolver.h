/*
 * Run-time DNS (ABI 1.8): names resolved by a worker without blocking, on
 * c-ares driven by the worker's event loop, with a cache shared by every
 * worker that honours the answers' TTLs (or the resolver's valid=).
 *
 * A resolver is what one `resolver ADDR... [valid=T] [ipv4=] [ipv6=]`
 * directive describes (sws_resolver_conf: a module with a directive of
 * its own parses its arguments with it; the http levels' `resolver` is
 * the upstream framework's, which proxy_pass and fastcgi_pass use).
 * Identical directives share one resolver.
 */
#ifndef SWS_RESOLVER_H
#define SWS_RESOLVER_H

#include <sys/socket.h>
#include <scalws/sws_types.h>
#include <scalws/sws_conf.h>

typedef struct sws_resolver_s        sws_resolver_t;        /* opaque */
typedef struct sws_resolver_query_s  sws_resolver_query_t;  /* opaque */

/* The most addresses an answer gives (the rest are dropped). */
#define SWS_RESOLVER_MAX_ADDRS  16

/* An answer's status: nginx's numbers, for the same log lines
 * ("NAME could not be resolved (3: Host not found)"). */
#define SWS_RESOLVE_OK         0
#define SWS_RESOLVE_FORMERR    1      /* a malformed question or answer */
#define SWS_RESOLVE_SERVFAIL   2
#define SWS_RESOLVE_NXDOMAIN   3      /* also: the name has no address */
#define SWS_RESOLVE_NOTIMP     4
#define SWS_RESOLVE_REFUSED    5
#define SWS_RESOLVE_TIMEDOUT   110

typedef struct {
    struct sockaddr_storage  sockaddr;    /* port 0 */
    socklen_t                socklen;
} sws_resolver_addr_t;

typedef struct {
    sws_int_t                  status;    /* SWS_RESOLVE_* */
    const sws_str_t           *name;      /* as asked */
    sws_uint_t                 naddrs;    /* > 0 when status is OK */
    const sws_resolver_addr_t *addrs;     /* valid during the call only */
    uint32_t                   ttl;       /* seconds the answer is good for */
    void                      *reserved[2];
} sws_resolver_result_t;

/* Called once per query that was not cancelled, from the event loop (or
 * from sws_resolver_resolve itself: see there). */
typedef void (*sws_resolver_handler_pt)(void *data, const sws_resolver_result_t *res);

/*
 * At configuration time: the resolver of the directive being read, from
 * its arguments first .. last: "ADDR[:PORT]" (an IPv4 or [IPv6] address,
 * port 53 by default), "valid=TIME", "ipv4=on|off", "ipv6=on|off",
 * "status_zone=NAME". Logs nginx's messages ("invalid parameter ...",
 * "host not found in resolver ...") and returns NULL.
 */
sws_resolver_t *sws_resolver_conf(sws_conf_t *cf, sws_uint_t first);

/*
 * Resolve name (a host name; an IP address is answered at once) with res,
 * giving up after timeout ms (resolver_timeout). Returns:
 *   SWS_OK     answered already (the cache, an address): handler was
 *              called before the return;
 *   SWS_AGAIN  asked: *q is the query, handler comes later, exactly once,
 *              unless sws_resolver_cancel(*q) is called before;
 *   SWS_ERROR  no memory (nothing is called).
 * log: where the resolver's own messages about this query go.
 */
sws_int_t sws_resolver_resolve(sws_resolver_t *res, const sws_str_t *name,
    sws_msec_t timeout, sws_log_t *log, sws_resolver_handler_pt handler, void *data,
    sws_resolver_query_t **q);

/* The query's owner is done before the answer (its request ended): the
 * handler will not be called. The question may still be answered, into the
 * cache. */
void sws_resolver_cancel(sws_resolver_query_t *q);

/* nginx's texts for a status: "Host not found", "Operation timed out" ... */
const char *sws_resolver_strerror(sws_int_t status);

#endif
