/*
 * TLS 1.3 early data (0-RTT) accepted at most once per ticket, whichever
 * worker sees it (RFC 8446 8.1, "single-use tickets").
 *
 * Why not OpenSSL's own replay protection: it makes tickets stateful and
 * single-use through the session cache of one SSL_CTX, i.e. of one
 * process here, and it would take stateless tickets (keys shared by the
 * workers, sws_ssl_cache.c) away. So SSL_OP_NO_ANTI_REPLAY is set and an
 * allow_early_data callback decides instead. OpenSSL calls it only when it
 * would otherwise accept the early data: the ticket decrypted (or the
 * stateful session was found), it is within its lifetime and its age
 * matches what the client says within OpenSSL's allowance (10 s).
 *
 * The callback records the ticket in a table in shared memory, under one
 * lock for all workers: SHA-256 of the session's master key, which for a
 * TLS 1.3 ticket is the resumption PSK of that very ticket (each ticket
 * has its own nonce, hence its own PSK), so the same ticket always gives
 * the same record and two tickets never share one; a hash of it is all
 * that is kept. A record lives until the ticket expires (issue time +
 * lifetime): a replay before then finds it and its early data is
 * refused (the client gets a full 1-RTT handshake, resumed, and sends the
 * request again after it); after then OpenSSL refuses the ticket anyway.
 *
 * The records are in the zone's slab (sws_slab.h), found by key in its
 * hash table, and queued in the order they were made so that the oldest
 * can go when they expire. A zone full of live records refuses early data
 * rather than forget one (fails closed); so does a ticket issued before
 * the table existed (a restart with the same ticket key file would
 * otherwise forget what was used: RFC 8446 8.2). The zone survives
 * reloads, so do the records.
 */
#include <openssl/sha.h>
#include "sws_ssl.h"

#define SWS_SSL_REPLAY_SIZE  (4 * 1024 * 1024)

_Static_assert(sizeof(sws_ssl_replay_rec_t) <= 64, "a record is one chunk of 64 bytes");

sws_int_t
sws_ssl_replay_create(sws_slab_pool_t *pool, time_t started)
{
    sws_ssl_replay_t *t;
    size_t            page, total, nfree;

    sws_slab_pages(pool, &page, &total, &nfree);
    sws_slab_lock(pool);
    t = sws_slab_calloc_locked(pool, sizeof(sws_ssl_replay_t));
    if (t) {
        /* A record takes 64 bytes: about two per bucket when full. */
        t->hash = sws_slab_hash_create_locked(pool, total * page / 128);
        sws_slab_lru_init(&t->lru);
        t->started = started;
        sws_slab_set_data(pool, t->hash ? t : NULL);
    }
    sws_slab_unlock(pool);
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

static sws_int_t
sws_ssl_replay_init(sws_shm_zone_t *zone, void *old)
{
    sws_slab_pool_t *pool = sws_slab_init(zone, old);

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool)) {
        return SWS_OK;             /* a reload: the records stay */
    }
    return sws_ssl_replay_create(pool, time(NULL));
}

sws_shm_zone_t *
sws_ssl_early_data_zone(sws_conf_t *cf)
{
    static int       tag;
    static sws_str_t name = sws_string("scalws:ssl_early_data");

    return sws_shm_zone_add(cf, &name, SWS_SSL_REPLAY_SIZE, sws_ssl_replay_init, &tag);
}

static void
sws_ssl_replay_drop(sws_slab_pool_t *pool, sws_ssl_replay_t *t, sws_ssl_replay_rec_t *rec)
{
    sws_slab_hash_remove(t->hash, &rec->hash);
    sws_slab_lru_remove(&t->lru, &rec->lru);
    sws_slab_free_locked(pool, rec);
}

/* Forget every expired record; returns the earliest end of those left.
 * Records are queued by first use, not by end (a ticket may be used late
 * in its life), so this looks at all of them: it runs only when the zone
 * is full, and then not again before something can have expired. */
static time_t
sws_ssl_replay_sweep(sws_slab_pool_t *pool, sws_ssl_replay_t *t, time_t now)
{
    sws_queue_t          *q, *next;
    sws_ssl_replay_rec_t *rec;
    int64_t               first = INT64_MAX;

    for (q = sws_queue_head(&t->lru.queue); q != sws_queue_sentinel(&t->lru.queue); q = next) {
        next = sws_queue_next(q);
        rec = sws_slab_lru_entry(q, sws_ssl_replay_rec_t, lru);
        if (rec->expire <= (int64_t) now) {
            sws_ssl_replay_drop(pool, t, rec);
        } else if (rec->expire < first) {
            first = rec->expire;
        }
    }
    return (time_t) first;
}

sws_int_t
sws_ssl_replay_record(sws_slab_pool_t *pool, const u_char key[16], time_t issued,
    time_t expire, time_t now)
{
    sws_ssl_replay_t     *t = sws_slab_data(pool);
    sws_slab_hash_node_t *node;
    sws_slab_lru_node_t  *old;
    sws_ssl_replay_rec_t *rec;
    int                   i;

    if (issued < t->started) {
        return SWS_DECLINED;        /* may have been used before we started */
    }
    /* The oldest records usually expire first: a few go each time. */
    for (i = 0; i < 2 && (old = sws_slab_lru_oldest(&t->lru)) != NULL; i++) {
        rec = sws_slab_lru_entry(old, sws_ssl_replay_rec_t, lru);
        if (rec->expire > (int64_t) now) {
            break;
        }
        sws_ssl_replay_drop(pool, t, rec);
    }

    node = sws_slab_hash_find(t->hash, key, 16);
    if (node) {
        rec = sws_slab_hash_entry(node, sws_ssl_replay_rec_t, hash);
        if (rec->expire > (int64_t) now) {
            t->replays++;
            return SWS_DECLINED;
        }
        sws_ssl_replay_drop(pool, t, rec);       /* expired: a use like a first */
    }

    rec = sws_slab_alloc_locked(pool, sizeof(sws_ssl_replay_rec_t));
    if (rec == NULL && now >= t->sweep) {
        t->sweep = sws_ssl_replay_sweep(pool, t, now);
        rec = sws_slab_alloc_locked(pool, sizeof(sws_ssl_replay_rec_t));
    }
    if (rec == NULL) {
        t->full++;
        return SWS_BUSY;
    }
    memcpy(rec->key, key, 16);
    rec->expire = (int64_t) expire;
    sws_slab_hash_insert(t->hash, &rec->hash, rec->key, 16);
    sws_slab_lru_insert(&t->lru, &rec->lru);
    return SWS_OK;
}

/* SSL_allow_early_data_cb_fn: 1 accepts the early data, 0 refuses it (the
 * handshake goes on without it). */
int
sws_ssl_early_data_allow(SSL *s, void *arg)
{
    sws_connection_t *c = sws_ssl_get_connection(s);
    sws_ssl_t        *ssl = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(s), 0);
    SSL_SESSION      *sess = SSL_get_session(s);
    u_char            secret[256], digest[SHA256_DIGEST_LENGTH];
    size_t            len;
    time_t            issued, expire, started, now = time(NULL);
    sws_slab_pool_t  *pool;
    sws_int_t         rc;
    const char       *why;

    (void) arg;

    if (ssl == NULL || ssl->replay == NULL || sess == NULL) {
        return 0;
    }
    /* Hash-sized for tickets (32 or 48 bytes); a longer one is cut. */
    len = SSL_SESSION_get_master_key(sess, secret, sizeof(secret));
    if (len == 0) {
        return 0;
    }
    SHA256(secret, len, digest);
    OPENSSL_cleanse(secret, sizeof(secret));
    issued = (time_t) SSL_SESSION_get_time(sess);
    expire = issued + (time_t) SSL_SESSION_get_timeout(sess);
    /* Never shorter than OpenSSL's age allowance from now. */
    if (expire < now + 10) {
        expire = now + 10;
    }

    pool = ssl->replay->data;
    sws_slab_lock(pool);
    rc = sws_ssl_replay_record(pool, digest, issued, expire, now);
    started = ((sws_ssl_replay_t *) sws_slab_data(pool))->started;
    sws_slab_unlock(pool);

    if (rc == SWS_OK) {
        return 1;
    }
    why = rc == SWS_BUSY ? "no room left to record the ticket"
          : issued < started ? "the ticket is older than the server"
            : "the ticket was used for early data before (a replay?)";
    if (c) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "early data refused: %s", why);
    }
    return 0;
}
