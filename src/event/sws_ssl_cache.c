/*
 * TLS session resumption shared by every worker:
 *
 * - a session cache in a shared memory zone: serialized sessions in the
 *   zone's slab (sws_slab.h), found by id in its hash table, the least
 *   recently used forgotten first when the zone is full;
 * - session tickets whose keys every worker derives on its own (HKDF) from
 *   one secret and the current period: the secret is made once in the
 *   master (it survives reloads) or read from ssl_session_ticket_key, and
 *   the key changes every period while the previous one still decrypts.
 */
#define _GNU_SOURCE 1          /* memmem */
#include <string.h>
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <fcntl.h>
#include <unistd.h>
#include "sws_ssl.h"

/* The longest serialized session kept: a client certificate makes one
 * grow past the usual 170 to 200 bytes. */
#define SWS_SSL_SESSION_MAX  4096

/* A session in the zone's slab, found by id, evicted oldest first. The
 * id is a key into the serialized session itself (where i2d put it), so
 * that the usual session of some 180 bytes and this head fit a 256-byte
 * chunk; an id not found there is kept after the session. */
typedef struct {
    sws_slab_hash_node_t  hash;
    sws_slab_lru_node_t   lru;
    uint32_t              expire;        /* time_t, until 2106 */
    uint16_t              len;           /* of the session in data */
    u_char                data[];        /* i2d_SSL_SESSION [, id] */
} sws_ssl_sess_t;

typedef struct {
    sws_slab_hash_t      *hash;
    sws_slab_lru_t        lru;
    uint64_t              stored;        /* statistics */
    uint64_t              evicted;
} sws_ssl_cache_t;

/* The per-context state the callbacks need (SSL_CTX app data is the
 * sws_ssl_t; this hangs off ex_data). */
typedef struct {
    sws_shm_zone_t *zone;
    time_t          timeout;
    time_t          ticket_period;
    int             tickets;
    u_char          secret[32];     /* the ticket secret of this context */
    /* The keys of the last two periods, derived once per period and
     * process: an HKDF per ticket cost more than the resumed handshake's
     * own key schedule. */
    struct {
        uint64_t    period;
        int         valid;
        u_char      name[16], aes[32], hmac[32];
    }               keys[2];
} sws_ssl_resume_t;

static int      sws_ssl_resume_index = -1;
/* The master's own ticket secret, for contexts without a key file: made
 * once, kept across reloads (this process's memory outlives the cycles). */
static u_char   sws_ssl_ticket_secret[32];
static int      sws_ssl_ticket_secret_made;

/* ---- the shared cache ---- */

static sws_int_t
sws_ssl_cache_init(sws_shm_zone_t *zone, void *old)
{
    sws_slab_pool_t *pool = sws_slab_init(zone, old);
    sws_ssl_cache_t *cache;

    if (pool == NULL) {
        return SWS_ERROR;
    }
    if (sws_slab_data(pool)) {
        return SWS_OK;             /* same name and size: the sessions stay */
    }
    sws_slab_lock(pool);
    cache = sws_slab_calloc_locked(pool, sizeof(sws_ssl_cache_t));
    if (cache) {
        /* A bucket per 256 bytes: what a usual session takes here. */
        cache->hash = sws_slab_hash_create_locked(pool, zone->size / 256);
        sws_slab_lru_init(&cache->lru);
        sws_slab_set_data(pool, cache->hash ? cache : NULL);
    }
    sws_slab_unlock(pool);
    return sws_slab_data(pool) ? SWS_OK : SWS_ERROR;
}

sws_shm_zone_t *
sws_ssl_session_cache_zone(sws_conf_t *cf, const sws_str_t *name, size_t size)
{
    static int tag;

    return sws_shm_zone_add(cf, name, size, sws_ssl_cache_init, &tag);
}

static sws_ssl_sess_t *
sws_ssl_cache_find(sws_ssl_cache_t *cache, const u_char *id, size_t len)
{
    sws_slab_hash_node_t *node = sws_slab_hash_find(cache->hash, id, len);

    return node ? sws_slab_hash_entry(node, sws_ssl_sess_t, hash) : NULL;
}

static void
sws_ssl_cache_drop(sws_slab_pool_t *pool, sws_ssl_cache_t *cache, sws_ssl_sess_t *s)
{
    sws_slab_hash_remove(cache->hash, &s->hash);
    sws_slab_lru_remove(&cache->lru, &s->lru);
    sws_slab_free_locked(pool, s);
}

/* Room for a session of len bytes: the oldest ones go until it fits (a
 * full cache forgets its least recently used sessions, never refuses). */
static sws_ssl_sess_t *
sws_ssl_cache_alloc(sws_slab_pool_t *pool, sws_ssl_cache_t *cache, size_t len, time_t now)
{
    sws_slab_lru_node_t *old;
    sws_ssl_sess_t      *s;
    int                  i;

    /* Expired ones at the old end go first, a few per session stored. */
    for (i = 0; i < 2 && (old = sws_slab_lru_oldest(&cache->lru)) != NULL; i++) {
        s = sws_slab_lru_entry(old, sws_ssl_sess_t, lru);
        if ((time_t) s->expire >= now) {
            break;
        }
        sws_ssl_cache_drop(pool, cache, s);
    }
    while ((s = sws_slab_alloc_locked(pool, sizeof(sws_ssl_sess_t) + len)) == NULL) {
        old = sws_slab_lru_oldest(&cache->lru);
        if (old == NULL) {
            return NULL;
        }
        sws_ssl_cache_drop(pool, cache, sws_slab_lru_entry(old, sws_ssl_sess_t, lru));
        cache->evicted++;
    }
    return s;
}

static sws_ssl_resume_t *
sws_ssl_resume(SSL_CTX *ctx)
{
    return SSL_CTX_get_ex_data(ctx, sws_ssl_resume_index);
}

/* OpenSSL calls the session and ticket callbacks of the context the
 * connection started with, even after SNI moved it to another: so does
 * this (c->ssl->ssl is that first context). */
static sws_ssl_resume_t *
sws_ssl_resume_of(SSL *ssl)
{
    sws_connection_t *c = sws_ssl_get_connection(ssl);

    return (c && c->ssl) ? sws_ssl_resume(c->ssl->ssl->ctx) : NULL;
}

static void
sws_ssl_resume_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl,
    void *argp)
{
    (void) parent;
    (void) ad;
    (void) idx;
    (void) argl;
    (void) argp;
    OPENSSL_clear_free(ptr, sizeof(sws_ssl_resume_t));
}

static int
sws_ssl_new_session(SSL *ssl, SSL_SESSION *sess)
{
    sws_ssl_resume_t *rs = sws_ssl_resume_of(ssl);
    sws_slab_pool_t  *pool;
    sws_ssl_cache_t  *cache;
    sws_ssl_sess_t   *s;
    const u_char     *id;
    unsigned int      id_len;
    u_char            buf[SWS_SSL_SESSION_MAX], *p = buf, *key;
    int               len;
    time_t            now = sws_time_sec();

    if (rs == NULL || rs->zone == NULL) {
        return 0;
    }
    /* TLS 1.3 with stateless tickets: the ticket is the session, its id a
     * dummy. OpenSSL makes tickets stateful (sessions looked up, and used
     * once) without tickets, and for early data with replay protection. */
    if (SSL_version(ssl) == TLS1_3_VERSION && !(SSL_get_options(ssl) & SSL_OP_NO_TICKET)
        && !(SSL_get_max_early_data(ssl) > 0
             && !(SSL_get_options(ssl) & SSL_OP_NO_ANTI_REPLAY)))
    {
        return 0;
    }
    len = i2d_SSL_SESSION(sess, NULL);
    if (len <= 0 || len > SWS_SSL_SESSION_MAX) {
        sws_log_debug(sws_ssl_get_connection(ssl)->log,
                      "TLS session of %d bytes not cached", len);
        return 0;
    }
    i2d_SSL_SESSION(sess, &p);
    id = SSL_SESSION_get_id(sess, &id_len);
    if (id_len == 0 || id_len > SSL_MAX_SSL_SESSION_ID_LENGTH) {
        return 0;
    }

    pool = rs->zone->data;
    cache = sws_slab_data(pool);
    sws_slab_lock(pool);
    s = sws_ssl_cache_find(cache, id, id_len);
    if (s) {
        sws_ssl_cache_drop(pool, cache, s);      /* replaced */
    }
    key = memmem(buf, (size_t) len, id, id_len);
    s = sws_ssl_cache_alloc(pool, cache, (size_t) len + (key ? 0 : id_len), now);
    if (s) {
        s->expire = (uint32_t) sws_min((uint64_t) now + (uint64_t) rs->timeout, UINT32_MAX);
        s->len = (uint16_t) len;
        memcpy(s->data, buf, (size_t) len);
        if (key) {
            key = s->data + (key - buf);
        } else {
            key = s->data + len;
            memcpy(key, id, id_len);
        }
        sws_slab_hash_insert(cache->hash, &s->hash, key, id_len);
        sws_slab_lru_insert(&cache->lru, &s->lru);
        cache->stored++;
    }
    sws_slab_unlock(pool);
    return 0;                      /* OpenSSL keeps no extra reference */
}

static SSL_SESSION *
sws_ssl_get_session(SSL *ssl, const unsigned char *id, int len, int *copy)
{
    sws_ssl_resume_t *rs = sws_ssl_resume_of(ssl);
    sws_slab_pool_t  *pool;
    sws_ssl_cache_t  *cache;
    sws_ssl_sess_t   *s;
    u_char            buf[SWS_SSL_SESSION_MAX];
    const u_char     *p = buf;
    int               n = 0;

    *copy = 0;
    if (rs == NULL || rs->zone == NULL || len <= 0 || len > SSL_MAX_SSL_SESSION_ID_LENGTH) {
        return NULL;
    }
    pool = rs->zone->data;
    cache = sws_slab_data(pool);
    sws_slab_lock(pool);
    s = sws_ssl_cache_find(cache, id, (size_t) len);
    if (s && (time_t) s->expire >= sws_time_sec()) {
        n = s->len;
        memcpy(buf, s->data, (size_t) n);
        sws_slab_lru_touch(&cache->lru, &s->lru);
    } else if (s) {
        sws_ssl_cache_drop(pool, cache, s);      /* expired */
    }
    sws_slab_unlock(pool);
    return n ? d2i_SSL_SESSION(NULL, &p, n) : NULL;
}

static void
sws_ssl_remove_session(SSL_CTX *ctx, SSL_SESSION *sess)
{
    sws_ssl_resume_t *rs = sws_ssl_resume(ctx);
    sws_slab_pool_t  *pool;
    sws_ssl_sess_t   *s;
    const u_char     *id;
    unsigned int      id_len;

    if (rs == NULL || rs->zone == NULL) {
        return;
    }
    id = SSL_SESSION_get_id(sess, &id_len);
    pool = rs->zone->data;
    sws_slab_lock(pool);
    s = sws_ssl_cache_find(sws_slab_data(pool), id, id_len);
    if (s) {
        sws_ssl_cache_drop(pool, sws_slab_data(pool), s);
    }
    sws_slab_unlock(pool);
}

static sws_ssl_resume_t *
sws_ssl_resume_get(sws_ssl_t *ssl)
{
    sws_ssl_resume_t *rs;

    if (sws_ssl_resume_index == -1) {
        sws_ssl_resume_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL,
                                                        sws_ssl_resume_free);
        if (sws_ssl_resume_index == -1) {
            return NULL;
        }
    }
    rs = SSL_CTX_get_ex_data(ssl->ctx, sws_ssl_resume_index);
    if (rs == NULL) {
        /* Freed with the context (sws_ssl_resume_free). */
        rs = OPENSSL_zalloc(sizeof(sws_ssl_resume_t));
        if (rs == NULL || SSL_CTX_set_ex_data(ssl->ctx, sws_ssl_resume_index, rs) != 1) {
            OPENSSL_free(rs);
            return NULL;
        }
    }
    return rs;
}

sws_int_t
sws_ssl_session_cache(sws_ssl_t *ssl, sws_shm_zone_t *zone, int builtin, time_t timeout)
{
    sws_ssl_resume_t *rs = sws_ssl_resume_get(ssl);

    if (rs == NULL) {
        return SWS_ERROR;
    }
    rs->timeout = timeout;
    SSL_CTX_set_timeout(ssl->ctx, (long) timeout);
    if (zone == NULL && builtin == 0) {
        SSL_CTX_set_session_cache_mode(ssl->ctx, SSL_SESS_CACHE_OFF);
        return SWS_OK;
    }
    if (zone == NULL) {
        /* builtin:N: OpenSSL's own cache, per worker. */
        SSL_CTX_set_session_cache_mode(ssl->ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ssl->ctx, builtin > 0 ? builtin : 20480);
        return SWS_OK;
    }
    rs->zone = zone;
    SSL_CTX_set_session_cache_mode(ssl->ctx, SSL_SESS_CACHE_SERVER
                                   | SSL_SESS_CACHE_NO_INTERNAL
                                   | SSL_SESS_CACHE_NO_AUTO_CLEAR);
    SSL_CTX_sess_set_new_cb(ssl->ctx, sws_ssl_new_session);
    SSL_CTX_sess_set_get_cb(ssl->ctx, sws_ssl_get_session);
    SSL_CTX_sess_set_remove_cb(ssl->ctx, sws_ssl_remove_session);
    return SWS_OK;
}

sws_int_t
sws_ssl_session_id_context(sws_ssl_t *ssl, const u_char *data, size_t len)
{
    EVP_MD_CTX   *md;
    X509         *cert;
    u_char        hash[EVP_MAX_MD_SIZE], *der;
    unsigned int  hlen = 0;
    int           rc, n, ok, i;
    STACK_OF(X509_NAME) *names;

    /* The certificates themselves and the server's names: the same
     * server elsewhere (another process, another machine sharing the
     * ticket key) accepts the session, another server does not. */
    md = EVP_MD_CTX_new();
    ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
    for (rc = SSL_CTX_set_current_cert(ssl->ctx, SSL_CERT_SET_FIRST); ok && rc == 1;
         rc = SSL_CTX_set_current_cert(ssl->ctx, SSL_CERT_SET_NEXT))
    {
        cert = SSL_CTX_get0_certificate(ssl->ctx);
        der = NULL;
        n = cert ? i2d_X509(cert, &der) : 0;
        if (n > 0) {
            ok = EVP_DigestUpdate(md, der, (size_t) n) == 1;
        }
        OPENSSL_free(der);
    }
    /* The CAs named to clients too: a session whose certificate was
     * verified against other CAs is not resumed. */
    names = SSL_CTX_get_client_CA_list(ssl->ctx);
    for (i = 0; ok && names && i < sk_X509_NAME_num(names); i++) {
        der = NULL;
        n = i2d_X509_NAME(sk_X509_NAME_value(names, i), &der);
        if (n > 0) {
            ok = EVP_DigestUpdate(md, der, (size_t) n) == 1;
        }
        OPENSSL_free(der);
    }
    ok = ok && EVP_DigestUpdate(md, data, len) == 1 && EVP_DigestFinal_ex(md, hash, &hlen) == 1;
    EVP_MD_CTX_free(md);
    ERR_clear_error();
    if (!ok || SSL_CTX_set_session_id_context(ssl->ctx, hash,
                                              sws_min(hlen, SSL_MAX_SID_CTX_LENGTH)) != 1)
    {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CTX_set_session_id_context() failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* ---- tickets ---- */

sws_int_t
sws_ssl_hkdf(const u_char *salt, size_t salt_len, const u_char *secret, size_t secret_len,
    const u_char *info, size_t info_len, u_char *out, size_t out_len)
{
    EVP_KDF      *kdf;
    EVP_KDF_CTX  *kctx;
    OSSL_PARAM    params[5], *p = params;
    int           rc;

    kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    if (kdf == NULL) {
        return SWS_ERROR;
    }
    kctx = EVP_KDF_CTX_new(kdf);
    EVP_KDF_free(kdf);
    if (kctx == NULL) {
        return SWS_ERROR;
    }
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *) "SHA256", 0);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *) secret, secret_len);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *) info, info_len);
    if (salt_len) {
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *) salt, salt_len);
    }
    *p = OSSL_PARAM_construct_end();
    rc = EVP_KDF_derive(kctx, out, out_len, params);
    EVP_KDF_CTX_free(kctx);
    return rc == 1 ? SWS_OK : SWS_ERROR;
}

void
sws_ssl_ticket_key(const u_char secret[32], uint64_t period, u_char name[16], u_char aes[32],
    u_char hmac[32])
{
    u_char info[24], out[80];
    int    i;

    memcpy(info, "scalws ticket key", 16);
    for (i = 0; i < 8; i++) {
        info[16 + i] = (u_char) (period >> (56 - 8 * i));
    }
    if (sws_ssl_hkdf((const u_char *) "scalws", 6, secret, 32, info, sizeof(info), out,
                     sizeof(out)) != SWS_OK)
    {
        /* Unreachable with a working libcrypto; keys that match nothing
         * make every ticket fall back to a full handshake. */
        RAND_bytes(out, sizeof(out));
    }
    memcpy(name, out, 16);
    memcpy(aes, out + 16, 32);
    memcpy(hmac, out + 48, 32);
}

/* The ticket key of `period`, from the per-process cache (slot by the
 * period's parity: the current and the previous one coexist). */
static void
sws_ssl_ticket_key_cached(sws_ssl_resume_t *rs, uint64_t period, u_char name[16],
    u_char aes[32], u_char hmac[32])
{
    typeof(rs->keys[0]) *k = &rs->keys[period & 1];

    if (!k->valid || k->period != period) {
        sws_ssl_ticket_key(rs->secret, period, k->name, k->aes, k->hmac);
        k->period = period;
        k->valid = 1;
    }
    memcpy(name, k->name, 16);
    memcpy(aes, k->aes, 32);
    memcpy(hmac, k->hmac, 32);
}

static int
sws_ssl_ticket_cb(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *ectx,
    EVP_MAC_CTX *hctx, int enc)
{
    sws_ssl_resume_t *rs = sws_ssl_resume_of(ssl);
    u_char            kname[16], aes[32], hmac[32];
    uint64_t          period;
    OSSL_PARAM        params[3];
    int               rc = 1;

    if (rs == NULL || rs->ticket_period <= 0) {
        return enc ? -1 : 0;
    }
    period = (uint64_t) (sws_time_sec() / rs->ticket_period);

    if (enc) {
        sws_ssl_ticket_key_cached(rs, period, kname, aes, hmac);
        if (RAND_bytes(iv, EVP_CIPHER_iv_length(EVP_aes_256_cbc())) != 1) {
            return -1;
        }
        memcpy(name, kname, 16);
        if (EVP_EncryptInit_ex(ectx, EVP_aes_256_cbc(), NULL, aes, iv) != 1) {
            return -1;
        }
    } else {
        sws_ssl_ticket_key_cached(rs, period, kname, aes, hmac);
        if (memcmp(name, kname, 16) != 0) {
            /* The previous period's key still decrypts; renew the ticket. */
            sws_ssl_ticket_key_cached(rs, period - 1, kname, aes, hmac);
            if (memcmp(name, kname, 16) != 0) {
                return 0;                  /* unknown key: full handshake */
            }
            rc = 2;
        }
        if (EVP_DecryptInit_ex(ectx, EVP_aes_256_cbc(), NULL, aes, iv) != 1) {
            return -1;
        }
    }
    params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, hmac, sizeof(hmac));
    params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *) "SHA256", 0);
    params[2] = OSSL_PARAM_construct_end();
    if (EVP_MAC_CTX_set_params(hctx, params) != 1) {
        return -1;
    }
    return rc;
}

/* The secret from a key file (any length of random bytes, e.g. 80 bytes
 * as for nginx): every server reading the same file shares tickets. */
static sws_int_t
sws_ssl_read_ticket_key(sws_ssl_t *ssl, const sws_str_t *file, u_char secret[32])
{
    u_char   buf[512];
    ssize_t  n;
    int      fd;

    fd = open((char *) file->data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, errno, "cannot open ssl_session_ticket_key "
                      "\"%s\"", (char *) file->data);
        return SWS_ERROR;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n < 32) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, n < 0 ? errno : 0,
                      "ssl_session_ticket_key \"%s\" must hold at least 32 bytes",
                      (char *) file->data);
        return SWS_ERROR;
    }
    SHA256(buf, (size_t) n, secret);
    OPENSSL_cleanse(buf, sizeof(buf));
    return SWS_OK;
}

sws_int_t
sws_ssl_session_tickets(sws_ssl_t *ssl, int on, const sws_str_t *key_file, time_t timeout)
{
    sws_ssl_resume_t *rs;

    if (!on) {
        SSL_CTX_set_options(ssl->ctx, SSL_OP_NO_TICKET);
        return SWS_OK;
    }
    rs = sws_ssl_resume_get(ssl);
    if (rs == NULL) {
        return SWS_ERROR;
    }
    if (key_file && key_file->len) {
        if (sws_ssl_read_ticket_key(ssl, key_file, rs->secret) != SWS_OK) {
            return SWS_ERROR;
        }
    } else {
        if (!sws_ssl_ticket_secret_made) {
            if (RAND_bytes(sws_ssl_ticket_secret, sizeof(sws_ssl_ticket_secret)) != 1) {
                sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "RAND_bytes() failed");
                return SWS_ERROR;
            }
            sws_ssl_ticket_secret_made = 1;
        }
        memcpy(rs->secret, sws_ssl_ticket_secret, sizeof(rs->secret));
    }
    rs->keys[0].valid = rs->keys[1].valid = 0;     /* a new secret */
    rs->ticket_period = timeout > 0 ? timeout : 300;
    rs->tickets = 1;
    SSL_CTX_clear_options(ssl->ctx, SSL_OP_NO_TICKET);
    if (SSL_CTX_set_tlsext_ticket_key_evp_cb(ssl->ctx, sws_ssl_ticket_cb) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "SSL_CTX_set_tlsext_ticket_key_evp_cb() failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}
