/*
 * Choosing a server: smooth weighted round robin (the default), least_conn,
 * hash KEY [consistent], ip_hash, random [two]; backup servers when no primary one
 * is usable; and passive health: max_fails failures within fail_timeout
 * make a server unavailable for fail_timeout (state shared by the workers).
 * Round robin weights and connection counts are per worker, like nginx
 * without a zone: no lock, no shared cache line on the hot path.
 */
#include <stdlib.h>
#include <unistd.h>
#include <netinet/in.h>
#include "sws_http_upstream.h"

#define SWS_UPS_RING_POINTS  160      /* per unit of weight */
#define SWS_UPS_HASH_TRIES   20

static int
sws_ups_point_cmp(const void *a, const void *b)
{
    const sws_ups_point_t *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* The points of the consistent hash ring: for the servers not removed. */
size_t
sws_ups_ring_size(sws_http_upstream_srv_t *us)
{
    sws_uint_t i, n = 0;

    for (i = 0; i < us->nall; i++) {
        if (!us->peers[i].dynamic || !us->peers[i].down) {
            n += SWS_UPS_RING_POINTS * (sws_uint_t) us->peers[i].weight;
        }
    }
    return n;
}

void
sws_ups_ring_fill(sws_http_upstream_srv_t *us, sws_ups_point_t *ring)
{
    sws_uint_t  i, j, n = 0;
    u_char      key[512 + 24];
    size_t      len;

    /* Points hashed from the server as written, so that the ring stays the
     * same when the same names resolve to other addresses. */
    for (i = 0; i < us->nall; i++) {
        if (us->peers[i].dynamic && us->peers[i].down) {
            continue;
        }
        for (j = 0; j < SWS_UPS_RING_POINTS * (sws_uint_t) us->peers[i].weight; j++) {
            len = (size_t) (sws_slprintf(key, key + sizeof(key), "%.*s-%.*s-%lu",
                                         (int) sws_min(us->peers[i].server.len, 256),
                                         us->peers[i].server.data,
                                         (int) sws_min(us->peers[i].name.len, 200),
                                         us->peers[i].name.data, (unsigned long) j) - key);
            ring[n].hash = sws_hash_key(key, len);
            ring[n].peer = (uint32_t) i;
            n++;
        }
    }
    qsort(ring, n, sizeof(sws_ups_point_t), sws_ups_point_cmp);
    us->ring = ring;
    us->nring = n;
}

sws_int_t
sws_ups_balancer_init(sws_conf_t *cf, sws_http_upstream_srv_t *us)
{
    sws_ups_point_t *ring;

    if (us->method != SWS_UPS_HASH || !us->consistent) {
        return SWS_OK;
    }
    ring = sws_palloc(sws_conf_pool(cf), sizeof(sws_ups_point_t) * sws_ups_ring_size(us));
    if (ring == NULL) {
        return SWS_ERROR;
    }
    sws_ups_ring_fill(us, ring);
    return SWS_OK;
}

void
sws_ups_balancer_init_worker(sws_http_upstream_srv_t *us)
{
    sws_uint_t i;

    srandom((unsigned) getpid() ^ (unsigned) sws_current_msec());
    for (i = 0; i < us->nall; i++) {
        us->peers[i].current_weight = 0;
        us->peers[i].effective_weight = us->peers[i].weight;
        us->peers[i].conns = 0;
        us->peers[i].idle = 0;
    }
    sws_queue_init(&us->waiters);
    us->nwaiting = us->wakes = 0;
}

int
sws_ups_peer_available(sws_http_upstream_peer_t *peer, sws_msec_t now)
{
    sws_ups_shared_t *sh = peer->sh;

    if (peer->down) {
        return 0;
    }
    if (sh == NULL) {
        return 1;
    }
    if (sws_ups_atomic_load(&sh->unhealthy)) {
        return 0;
    }
    /* A lone server is never taken out by passive health: there would be
     * nothing else to try. */
    if (peer->max_fails && peer->us->nlive > 1
        && sws_ups_atomic_load(&sh->fails) >= peer->max_fails
        && now < sws_ups_atomic_load(&sh->down_until))
    {
        return 0;
    }
    return 1;
}

const char *
sws_ups_peer_state(sws_http_upstream_peer_t *peer)
{
    if (peer->down) {
        return "down";
    }
    if (peer->sh && sws_ups_atomic_load(&peer->sh->unhealthy)) {
        return "unhealthy";
    }
    if (!sws_ups_peer_available(peer, sws_current_msec())) {
        return "unavail";
    }
    return "up";
}

#define sws_ups_tried(u, i)  ((u)->tried[(i) / 64] & ((uint64_t) 1 << ((i) % 64)))

/* Not tried yet, available, and below its max_conns: its connections in
 * use and idle stay within it, so one in use less is room (an idle one to
 * take, or one to open). */
static int
sws_ups_candidate(sws_http_upstream_t *u, sws_http_upstream_peer_t *p, sws_msec_t now)
{
    if (sws_ups_tried(u, p->index) || !sws_ups_peer_available(p, now)) {
        return 0;
    }
    if (p->max_conns && p->conns >= p->max_conns) {
        u->full = 1;
        return 0;
    }
    return 1;
}

/* Smooth weighted round robin over the candidates, primary or backup ones
 * (only those with least's connections-per-weight when least is set). */
static sws_http_upstream_peer_t *
sws_ups_rr(sws_http_upstream_t *u, sws_uint_t backup, sws_msec_t now,
    sws_http_upstream_peer_t *least)
{
    sws_http_upstream_srv_t  *us = u->us;
    sws_http_upstream_peer_t *p, *best = NULL;
    sws_int_t                 total = 0;
    sws_uint_t                i;

    for (i = 0; i < us->nused; i++) {
        p = &us->peers[i];
        if (p->backup != backup || !sws_ups_candidate(u, p, now)) {
            continue;
        }
        if (least && p->conns * (sws_uint_t) least->weight
                     != least->conns * (sws_uint_t) p->weight)
        {
            continue;
        }
        p->current_weight += p->effective_weight;
        total += p->effective_weight;
        if (p->effective_weight < p->weight) {
            p->effective_weight++;        /* recovers after failures */
        }
        if (best == NULL || p->current_weight > best->current_weight) {
            best = p;
        }
    }
    if (best) {
        best->current_weight -= total;
    }
    return best;
}

static sws_http_upstream_peer_t *
sws_ups_least_conn(sws_http_upstream_t *u, sws_uint_t backup, sws_msec_t now)
{
    sws_http_upstream_peer_t *p, *best = NULL;
    sws_uint_t                i, ties = 0;

    for (i = 0; i < u->us->nused; i++) {
        p = &u->us->peers[i];
        if (p->backup != backup || !sws_ups_candidate(u, p, now)) {
            continue;
        }
        /* conns / weight, compared without division */
        if (best == NULL
            || p->conns * (sws_uint_t) best->weight < best->conns * (sws_uint_t) p->weight)
        {
            best = p;
            ties = 1;
        } else if (p->conns * (sws_uint_t) best->weight
                   == best->conns * (sws_uint_t) p->weight)
        {
            ties++;
        }
    }
    if (best == NULL || ties == 1) {
        return best;
    }
    return sws_ups_rr(u, backup, now, best);
}

static uint32_t
sws_ups_key_hash(sws_http_upstream_t *u)
{
    sws_http_format_t *f = u->us->hash_key;
    u_char             stack[256];
    sws_str_t          key;

    if (sws_http_format_string(f, u->r, u->r->pool, 0, stack, sizeof(stack), &key)
        != SWS_OK)
    {
        return 0;
    }
    return sws_hash_key(key.data, key.len);
}

/* ip_hash: the client's network as nginx takes it (the first three bytes
 * of an IPv4 address, the whole of an IPv6 one), so that a client keeps
 * its server while the servers do not change (a `down` one keeps its
 * share). 0 for a client on a unix socket: round robin then. */
static int
sws_ups_ip_key(sws_http_upstream_t *u, uint32_t *hash)
{
    socklen_t              len;
    const struct sockaddr *sa = sws_http_remote_sockaddr(u->r, &len);
    const u_char          *p;
    size_t                 n;

    switch (sa ? sa->sa_family : AF_UNSPEC) {
    case AF_INET:
        p = (const u_char *) &((const struct sockaddr_in *) sa)->sin_addr;
        n = 3;
        break;
    case AF_INET6:
        p = (const u_char *) &((const struct sockaddr_in6 *) sa)->sin6_addr;
        n = 16;
        break;
    default:
        return 0;
    }
    *hash = sws_hash_key(p, n);
    return 1;
}

static sws_http_upstream_peer_t *
sws_ups_hash(sws_http_upstream_t *u, sws_msec_t now)
{
    sws_http_upstream_srv_t  *us = u->us;
    sws_http_upstream_peer_t *p;
    uint32_t                  hash;
    sws_int_t                 total = 0, w;
    sws_uint_t                i, tries, lo, hi, mid;

    if (us->method == SWS_UPS_IP_HASH) {
        if (!sws_ups_ip_key(u, &hash)) {
            return sws_ups_rr(u, 0, now, NULL);
        }
    } else {
        hash = sws_ups_key_hash(u);
    }
    if (us->consistent) {
        /* The first point at or after the key, then onwards around. */
        lo = 0;
        hi = us->nring;
        while (lo < hi) {
            mid = (lo + hi) / 2;
            if (us->ring[mid].hash < hash) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for (i = 0; i < us->nring; i++) {
            p = &us->peers[us->ring[(lo + i) % us->nring].peer];
            if (sws_ups_candidate(u, p, now)) {
                return p;
            }
        }
        return NULL;
    }

    for (i = 0; i < us->nused; i++) {
        total += us->peers[i].weight;          /* free slots weigh 0 */
    }
    for (tries = 0; tries < SWS_UPS_HASH_TRIES && total; tries++) {
        w = (sws_int_t) (hash % (uint32_t) total);
        for (i = 0; w >= us->peers[i].weight; i++) {
            w -= us->peers[i].weight;
        }
        p = &us->peers[i];
        if (sws_ups_candidate(u, p, now)) {
            return p;
        }
        /* Rehash: the next candidate depends on the key and the try. */
        hash = (hash ^ (uint32_t) (tries + 1)) * 0x9e3779b1u;
        hash ^= hash >> 15;
    }
    return sws_ups_rr(u, 0, now, NULL);
}

static sws_http_upstream_peer_t *
sws_ups_random_one(sws_http_upstream_t *u, sws_msec_t now, sws_http_upstream_peer_t *not)
{
    sws_http_upstream_srv_t  *us = u->us;
    sws_http_upstream_peer_t *p;
    sws_int_t                 total = 0, w;
    sws_uint_t                i;

    for (i = 0; i < us->nused; i++) {
        p = &us->peers[i];
        if (p != not && sws_ups_candidate(u, p, now)) {
            total += p->weight;
        }
    }
    if (total == 0) {
        return NULL;
    }
    w = (sws_int_t) (random() % total);
    for (i = 0; i < us->nused; i++) {
        p = &us->peers[i];
        if (p == not || !sws_ups_candidate(u, p, now)) {
            continue;
        }
        if (w < p->weight) {
            return p;
        }
        w -= p->weight;
    }
    return NULL;
}

static sws_http_upstream_peer_t *
sws_ups_random(sws_http_upstream_t *u, sws_msec_t now)
{
    sws_http_upstream_peer_t *a, *b;

    a = sws_ups_random_one(u, now, NULL);
    if (a == NULL || !u->us->random_two) {
        return a;
    }
    b = sws_ups_random_one(u, now, a);
    if (b && b->conns * (sws_uint_t) a->weight < a->conns * (sws_uint_t) b->weight) {
        return b;
    }
    return a;
}

sws_http_upstream_peer_t *
sws_ups_get_peer(sws_http_upstream_t *u)
{
    sws_http_upstream_srv_t  *us = u->us;
    sws_http_upstream_peer_t *p = NULL;
    sws_msec_t                now = sws_current_msec();

    if (us->list) {
        sws_ups_dyn_sync(us);          /* servers added, drained, removed */
    }
    switch (us->method) {
    case SWS_UPS_HASH:
    case SWS_UPS_IP_HASH:
        p = sws_ups_hash(u, now);
        break;
    case SWS_UPS_RANDOM:
        p = sws_ups_random(u, now);
        break;
    case SWS_UPS_LEAST_CONN:
        p = sws_ups_least_conn(u, 0, now);
        if (p == NULL && us->npeers > us->nprimary) {
            p = sws_ups_least_conn(u, 1, now);
        }
        break;
    default:
        p = sws_ups_rr(u, 0, now, NULL);
        if (p == NULL && us->npeers > us->nprimary) {
            p = sws_ups_rr(u, 1, now, NULL);
        }
    }
    if (p) {
        u->tried[p->index / 64] |= (uint64_t) 1 << (p->index % 64);
        p->conns++;
    }
    return p;
}

void
sws_ups_peer_done(sws_http_upstream_peer_t *peer, int failed, sws_log_t *log)
{
    sws_ups_shared_t *sh = peer->sh;
    sws_msec_t        now;
    uint32_t          fails;

    if (peer->conns) {
        peer->conns--;
    }
    if (peer->max_conns) {
        sws_ups_queue_wake(peer->us);
    }
    if (sh == NULL || peer->max_fails == 0) {
        return;
    }
    now = sws_current_msec();
    fails = sws_ups_atomic_load(&sh->fails);

    if (!failed) {
        /* Failures count within fail_timeout: after it, start afresh. */
        if (fails && now - sws_ups_atomic_load(&sh->fail_start) > peer->fail_timeout
            && now >= sws_ups_atomic_load(&sh->down_until))
        {
            sws_ups_atomic_store(&sh->fails, 0);
        }
        return;
    }

    if (fails >= peer->max_fails
        || now - sws_ups_atomic_load(&sh->fail_start) <= peer->fail_timeout)
    {
        fails = sws_ups_atomic_add(&sh->fails, 1);
    } else {
        sws_ups_atomic_store(&sh->fail_start, now);
        sws_ups_atomic_store(&sh->fails, 1);
        fails = 1;
    }
    if (fails >= peer->max_fails) {
        sws_ups_atomic_store(&sh->down_until, now + peer->fail_timeout);
        if (peer->us->nlive > 1) {
            sws_log_error(SWS_LOG_WARN, log, 0, "upstream server %.*s of \"%.*s\" "
                          "temporarily disabled for %lld ms after %u failures",
                          (int) peer->name.len, peer->name.data, (int) peer->us->name.len,
                          peer->us->name.data, (long long) peer->fail_timeout,
                          (unsigned) fails);
        }
    }
    peer->effective_weight -= peer->weight / (sws_int_t) peer->max_fails;
    if (peer->effective_weight < 0) {
        peer->effective_weight = 0;
    }
}
