/*
 * A `resolver` directive's arguments into a resolver (identical directives
 * share one), and the answers' cache: one keyed shared zone, "resolver",
 * declared with the first resolver of a configuration (none without one),
 * whose records are keyed by the resolver's servers and address families
 * and the name, so that every worker uses what one of them asked.
 */
#include <stdio.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_resolver_internal.h"

#define SWS_RESOLVER_ZONE_SIZE  (1024 * 1024)
/* "SERVERS|46|name": the servers' text, the families, a name */
#define SWS_RESOLVER_KEY_MAX    (SWS_RESOLVER_MAX_SERVERS * 56 + 4 + 256)

typedef struct {
    sws_resolver_t  *first;          /* the configuration's resolvers */
} sws_resolver_set_t;

static int sws_resolver_zone_tag;

static const sws_keyed_zone_type_t  sws_resolver_zone_type = {
    .name = "resolver",
    .directive = "resolver",
    .tag = &sws_resolver_zone_tag,
    .record_size = sizeof(sws_resolver_cached_t),
    .evict = 1,                      /* names asked least recently make room */
};

/* status_zone=NAME: a zone of counters alone (no records are kept). */
static int  sws_resolver_status_tag;
static const char *const  sws_resolver_status_counters[] = {
    "queries", "answers", "nxdomain", "servfail", "timeouts", "errors", NULL
};

static const sws_keyed_zone_type_t  sws_resolver_status_type = {
    .name = "resolver_status",
    .directive = "resolver",
    .tag = &sws_resolver_status_tag,
    .record_size = 8,
    .counters = sws_resolver_status_counters,
};

#define SWS_RESOLVER_STATUS_SIZE  32768      /* the smallest keyed zone */

static sws_int_t
sws_resolver_on_off(const sws_str_t *v, size_t skip, unsigned *flag)
{
    if (v->len - skip == 2 && memcmp(v->data + skip, "on", 2) == 0) {
        *flag = 1;
        return SWS_OK;
    }
    if (v->len - skip == 3 && memcmp(v->data + skip, "off", 3) == 0) {
        *flag = 0;
        return SWS_OK;
    }
    return SWS_ERROR;
}

/* "ADDR[:PORT]": each address of it appended to csv, "a:p,[b]:p". */
static sws_int_t
sws_resolver_add_server(sws_conf_t *cf, const sws_str_t *arg, u_char *csv, size_t *len,
    sws_uint_t *n)
{
    char             host[256], port[8], text[INET6_ADDRSTRLEN];
    const u_char    *p = arg->data, *last = arg->data + arg->len, *colon;
    struct addrinfo  hints, *res, *ai;
    sws_int_t        pn = 53;
    size_t           hl;
    int              rc;

    if (arg->len && *p == '[') {
        colon = memchr(p, ']', arg->len);
        if (colon == NULL) {
            goto invalid;
        }
        hl = (size_t) (colon - p - 1);
        p++;
        colon = colon + 1 < last ? colon + 1 : NULL;
        if (colon && *colon != ':') {
            goto invalid;
        }
    } else {
        colon = memchr(p, ':', arg->len);
        if (colon && memchr(colon + 1, ':', (size_t) (last - colon - 1))) {
            colon = NULL;                /* a bare IPv6 address */
        }
        hl = colon ? (size_t) (colon - p) : arg->len;
    }
    if (colon) {
        pn = sws_atoi(colon + 1, (size_t) (last - colon - 1));
        if (pn < 1 || pn > 65535) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid port in resolver \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_ERROR;
        }
    }
    if (hl == 0 || hl >= sizeof(host)) {
        goto invalid;
    }
    memcpy(host, p, hl);
    host[hl] = '\0';
    snprintf(port, sizeof(port), "%d", (int) pn);

    /* At configuration time, in the master: a name may be looked up
     * (blocking is fine here, as for upstream servers). */
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "host not found in resolver \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_ERROR;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        if (*n == SWS_RESOLVER_MAX_SERVERS) {
            break;
        }
        if (ai->ai_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *) ai->ai_addr)->sin_addr, text,
                      sizeof(text));
            *len += (size_t) sprintf((char *) csv + *len, "%s%s:%d", *n ? "," : "", text,
                                     (int) pn);
        } else if (ai->ai_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr, text,
                      sizeof(text));
            *len += (size_t) sprintf((char *) csv + *len, "%s[%s]:%d", *n ? "," : "", text,
                                     (int) pn);
        } else {
            continue;
        }
        (*n)++;
    }
    freeaddrinfo(res);
    return SWS_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid address in resolver \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_ERROR;
}

sws_resolver_t *
sws_resolver_conf(sws_conf_t *cf, sws_uint_t first)
{
    static const sws_str_t  zname = sws_string("resolver");
    sws_resolver_set_t     *set;
    sws_keyed_zone_t       *zone;
    sws_resolver_t         *res, *r;
    sws_keyed_zone_t       *status = NULL;
    sws_str_t              *v;
    sws_msec_t              ms;
    u_char                  csv[SWS_RESOLVER_MAX_SERVERS * 56];
    size_t                  len = 0;
    sws_uint_t              i, n = 0, nargs = sws_conf_nargs(cf);
    unsigned                ipv4 = 1, ipv6 = 1;
    sws_msec_t              valid = 0;
    sws_str_t               status_zone = sws_null_string;

    for (i = first; i < nargs; i++) {
        v = sws_conf_arg(cf, i);
        if (v->len > 6 && memcmp(v->data, "valid=", 6) == 0) {
            sws_str_t t = { v->len - 6, v->data + 6 };
            ms = sws_parse_time_ms(&t);
            if (ms < 0) {
                goto invalid;
            }
            valid = ms;
        } else if (v->len >= 5 && memcmp(v->data, "ipv4=", 5) == 0) {
            if (sws_resolver_on_off(v, 5, &ipv4) != SWS_OK) {
                goto invalid;
            }
        } else if (v->len >= 5 && memcmp(v->data, "ipv6=", 5) == 0) {
            if (sws_resolver_on_off(v, 5, &ipv6) != SWS_OK) {
                goto invalid;
            }
        } else if (v->len > 12 && memcmp(v->data, "status_zone=", 12) == 0) {
            status_zone.data = v->data + 12;
            status_zone.len = v->len - 12;
        } else if (n == SWS_RESOLVER_MAX_SERVERS) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "too many name servers in resolver "
                               "(at most %d)", SWS_RESOLVER_MAX_SERVERS);
            return NULL;
        } else if (sws_resolver_add_server(cf, v, csv, &len, &n) != SWS_OK) {
            return NULL;
        }
    }
    if (!ipv4 && !ipv6) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"ipv4\" and \"ipv6\" cannot both be \"off\"");
        return NULL;
    }
    if (n == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no name servers defined in resolver");
        return NULL;
    }

    if (status_zone.len) {
        /* one zone per name, whichever resolvers count into it */
        status = sws_keyed_zone_get(cf, &sws_resolver_status_type, &status_zone);
        if (status == NULL) {
            status = sws_keyed_zone_add(cf, &sws_resolver_status_type, &status_zone,
                                        SWS_RESOLVER_STATUS_SIZE, &status_zone, NULL);
            if (status == NULL) {
                return NULL;
            }
        }
    }

    zone = sws_keyed_zone_get(cf, &sws_resolver_zone_type, &zname);
    if (zone == NULL) {
        set = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_resolver_set_t));
        if (set == NULL) {
            return NULL;
        }
        zone = sws_keyed_zone_add(cf, &sws_resolver_zone_type, &zname,
                                  SWS_RESOLVER_ZONE_SIZE, &zname, set);
        if (zone == NULL) {
            return NULL;
        }
    }
    set = sws_keyed_zone_data(zone);
    for (r = set->first; r; r = r->next) {
        if (r->servers.len == len && memcmp(r->servers.data, csv, len) == 0
            && r->valid == valid && r->ipv4 == ipv4 && r->ipv6 == ipv6
            && r->status == status)
        {
            return r;
        }
    }
    res = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_resolver_t));
    if (res == NULL) {
        return NULL;
    }
    res->servers.data = sws_pnalloc(sws_conf_pool(cf), len + 1);
    if (res->servers.data == NULL) {
        return NULL;
    }
    memcpy(res->servers.data, csv, len);
    res->servers.data[len] = '\0';
    res->servers.len = len;
    res->valid = valid;
    res->ipv4 = ipv4;
    res->ipv6 = ipv6;
    res->status_zone = status_zone;
    res->status = status;
    res->cache = zone;
    res->log = sws_conf_log(cf);
    res->next = set->first;
    set->first = res;
    return res;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter: %.*s", (int) v->len, v->data);
    return NULL;
}

/* ---- the shared answers ---- */

/* "SERVERS|46|name" */
static size_t
sws_resolver_key(sws_resolver_t *res, const sws_str_t *name, u_char *key, size_t size)
{
    size_t n = res->servers.len + 4 + name->len;

    if (n > size) {
        return 0;
    }
    memcpy(key, res->servers.data, res->servers.len);
    n = res->servers.len;
    key[n++] = '|';
    key[n++] = res->ipv4 ? '4' : '-';
    key[n++] = res->ipv6 ? '6' : '-';
    key[n++] = '|';
    memcpy(key + n, name->data, name->len);
    return n + name->len;
}

void
sws_resolver_cache_get(sws_resolver_t *res, const sws_str_t *name,
    sws_resolver_result_t *out, sws_resolver_addr_t *addrs)
{
    u_char                 key[SWS_RESOLVER_KEY_MAX];
    sws_resolver_cached_t *rec;
    size_t                 klen = sws_resolver_key(res, name, key, sizeof(key));
    sws_msec_t             now = sws_current_msec();
    sws_uint_t             i;

    out->status = -1;
    if (klen == 0) {
        return;
    }
    sws_keyed_zone_lock(res->cache);
    rec = sws_keyed_zone_lookup(res->cache, key, klen);
    if (rec && rec->expire <= now) {
        sws_keyed_zone_delete(res->cache, rec);
        rec = NULL;
    }
    if (rec) {
        sws_keyed_zone_touch(res->cache, rec);
        out->status = rec->status;
        out->ttl = (uint32_t) ((rec->expire - now + 999) / 1000);
        out->naddrs = rec->naddrs;
        out->addrs = addrs;
        for (i = 0; i < rec->naddrs && i < SWS_RESOLVER_MAX_ADDRS; i++) {
            sws_resolver_addr_t *a = &addrs[i];

            memset(a, 0, sizeof(*a));
            a->sockaddr.ss_family = rec->addrs[i].family;
            if (rec->addrs[i].family == AF_INET6) {
                memcpy(&((struct sockaddr_in6 *) &a->sockaddr)->sin6_addr,
                       rec->addrs[i].addr, 16);
                a->socklen = sizeof(struct sockaddr_in6);
            } else {
                memcpy(&((struct sockaddr_in *) &a->sockaddr)->sin_addr,
                       rec->addrs[i].addr, 4);
                a->socklen = sizeof(struct sockaddr_in);
            }
        }
    }
    sws_keyed_zone_unlock(res->cache);
}

void
sws_resolver_cache_put(sws_resolver_t *res, const sws_str_t *name,
    const sws_resolver_result_t *r)
{
    u_char                 key[SWS_RESOLVER_KEY_MAX];
    sws_resolver_cached_t *rec;
    size_t                 klen = sws_resolver_key(res, name, key, sizeof(key));
    sws_msec_t             keep;
    sws_uint_t             i;

    /* valid= overrides the TTL; a "not found" is kept only for valid=
     * (an answer without its SOA gives no time for it); failures never. */
    if (r->status == SWS_RESOLVE_OK) {
        keep = res->valid ? res->valid : (sws_msec_t) r->ttl * 1000;
    } else if (r->status == SWS_RESOLVE_NXDOMAIN) {
        keep = res->valid;
    } else {
        keep = 0;
    }
    if (klen == 0 || keep <= 0) {
        return;
    }
    sws_keyed_zone_lock(res->cache);
    rec = sws_keyed_zone_lookup(res->cache, key, klen);
    if (rec == NULL) {
        rec = sws_keyed_zone_insert(res->cache, key, klen);
    }
    if (rec) {
        rec->expire = sws_current_msec() + keep;
        rec->ttl = r->ttl;
        rec->status = (uint16_t) r->status;
        rec->naddrs = (uint16_t) r->naddrs;
        for (i = 0; i < r->naddrs && i < SWS_RESOLVER_MAX_ADDRS; i++) {
            const struct sockaddr_storage *sa = &r->addrs[i].sockaddr;

            rec->addrs[i].family = (uint8_t) sa->ss_family;
            if (sa->ss_family == AF_INET6) {
                memcpy(rec->addrs[i].addr, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
            } else {
                memcpy(rec->addrs[i].addr, &((const struct sockaddr_in *) sa)->sin_addr, 4);
            }
        }
    }
    sws_keyed_zone_unlock(res->cache);
}
