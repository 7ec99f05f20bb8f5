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
 * The table is 8-way set associative. A set full of live records refuses
 * early data rather than forget one (fails closed); so does a ticket
 * issued before the table existed (a restart with the same ticket key file
 * would otherwise forget what was used: RFC 8446 8.2). The zone survives
 * reloads, so do the records.
 */
#include <openssl/sha.h>
#include "sws_ssl.h"

#define SWS_SSL_REPLAY_SIZE  (1024 * 1024)

static sws_int_t
sws_ssl_replay_init(sws_shm_zone_t *zone, void *old)
{
    sws_ssl_replay_t *t = (sws_ssl_replay_t *) zone->addr;
    size_t            n;

    if (old) {
        zone->data = old;
        return SWS_OK;
    }
    n = (zone->size - sizeof(sws_ssl_replay_t)) / sizeof(sws_ssl_replay_slot_t);
    t->nsets = (uint32_t) (n / SWS_SSL_REPLAY_WAYS);
    t->started = time(NULL);
    if (t->nsets == 0) {
        return SWS_ERROR;
    }
    zone->data = t;
    return SWS_OK;
}

sws_shm_zone_t *
sws_ssl_early_data_zone(sws_conf_t *cf)
{
    static int       tag;
    static sws_str_t name = sws_string("scalws:ssl_early_data");

    return sws_shm_zone_add(cf, &name, SWS_SSL_REPLAY_SIZE, sws_ssl_replay_init, &tag);
}

sws_int_t
sws_ssl_replay_record(sws_ssl_replay_t *t, const u_char key[16], time_t issued,
    time_t expire, time_t now)
{
    sws_ssl_replay_slot_t *set, *free_slot = NULL;
    uint32_t               h;
    int                    i;

    if (issued < t->started) {
        return SWS_DECLINED;        /* may have been used before we started */
    }
    /* The key is a hash already: its first bytes choose the set. */
    h = (uint32_t) key[0] | (uint32_t) key[1] << 8 | (uint32_t) key[2] << 16
        | (uint32_t) key[3] << 24;
    set = &t->slots[(h % t->nsets) * SWS_SSL_REPLAY_WAYS];
    for (i = 0; i < SWS_SSL_REPLAY_WAYS; i++) {
        if (set[i].expire <= (int64_t) now) {
            if (free_slot == NULL) {
                free_slot = &set[i];     /* empty (0) or expired */
            }
            continue;
        }
        if (memcmp(set[i].key, key, 16) == 0) {
            t->replays++;
            return SWS_DECLINED;
        }
    }
    if (free_slot == NULL) {
        t->full++;
        return SWS_BUSY;
    }
    memcpy(free_slot->key, key, 16);
    free_slot->expire = (int64_t) expire;
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
    time_t            issued, expire, now = time(NULL);
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

    sws_shm_lock(ssl->replay);
    rc = sws_ssl_replay_record(ssl->replay->data, digest, issued, expire, now);
    sws_shm_unlock(ssl->replay);

    if (rc == SWS_OK) {
        return 1;
    }
    why = rc == SWS_BUSY ? "no room left to record the ticket"
          : issued < ((sws_ssl_replay_t *) ssl->replay->data)->started
            ? "the ticket is older than the server"
            : "the ticket was used for early data before (a replay?)";
    if (c) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "early data refused: %s", why);
    }
    return 0;
}
