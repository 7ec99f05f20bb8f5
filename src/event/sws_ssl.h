/*
 * TLS over TCP with OpenSSL 3: contexts (sws_ssl_ctx.c), the non-blocking
 * handshake driven by the event loop, and the connection's recv/send_chain
 * replaced by TLS ones, kernel TLS with SSL_sendfile where the kernel
 * allows it (sws_ssl_io.c). Shared
 * session cache and ticket keys: sws_ssl_cache.c; OCSP stapling:
 * sws_ssl_stapling.c. The protocol on top (HTTP) chooses what a context
 * holds (sws_http_ssl_module.c).
 */
#ifndef SWS_SSL_H
#define SWS_SSL_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include "sws_event.h"

typedef void (*sws_ssl_handler_pt)(sws_connection_t *c);

/* One context: certificates, protocols, ciphers of a server. */
typedef struct {
    SSL_CTX      *ctx;
    sws_log_t    *log;
    sws_pool_t   *pool;
    char         *ciphers;         /* as configured, for sws_ssl_switch */
    size_t        buffer_size;     /* records are built from this much data */
    sws_shm_zone_t *replay;        /* early data: tickets used (sws_ssl_replay.c) */
    unsigned      ktls:1;          /* try kernel TLS on its connections */
} sws_ssl_t;

struct sws_ssl_connection_s {
    SSL                  *connection;
    sws_ssl_t            *ssl;
    sws_ssl_handler_pt    handler;       /* handshake finished (or failed) */
    size_t                last_len;      /* length of a write to repeat */
    u_char               *early;         /* early data read in the handshake */
    size_t                early_len;
    size_t                early_pos;
    /* handshaked: the protocol on top has the connection; with in_early
     * the handshake is still going on (0-RTT: the client is not yet
     * proven to be there, what it sent may be a replay). */
    unsigned              handshaked:1;
    unsigned              in_early:1;
    unsigned              ktls_send:1;
    unsigned              ktls_recv:1;
    unsigned              early_data:1;  /* accepted early data */
    unsigned              early_done:1;  /* done reading early data (end seen) */
    unsigned              no_shutdown:1; /* no close_notify: broken connection */
};

/* Set by sws_ssl_ctx.c, read by sws_ssl_io.c: whether some context of
 * this process takes early data (connections then start with
 * SSL_read_early_data). */
extern int sws_ssl_early_any;

/* The connection whose SSL call is running on this thread: set by
 * sws_ssl_io.c before it calls OpenSSL for a connection, read by the BIO
 * and by sws_ssl_get_connection (OpenSSL's callbacks). */
extern __thread sws_connection_t *sws_ssl_current;

/* Read and write the socket of sws_ssl_current through ScalWS's BIO
 * (sws_ssl_bio.c, one per thread): one recv() per request, none for
 * EAGAIN after a short read. */
sws_int_t  sws_ssl_bio_attach(SSL *s);
/* Process-wide set-up (library, ex_data index); once, in the master. */
sws_int_t  sws_ssl_init(sws_log_t *log);
/* A new context with ScalWS's defaults (no compression, no renegotiation,
 * partial writes, TLS 1.2+); freed with pool. */
sws_int_t  sws_ssl_create(sws_ssl_t *ssl, sws_pool_t *pool, sws_log_t *log);
/* The same for the client side (connections to upstream servers: see
 * sws_http_upstream_ssl.c, which puts them in the connect state). */
sws_int_t  sws_ssl_create_client(sws_ssl_t *ssl, sws_pool_t *pool, sws_log_t *log);
/* Load a certificate chain (PEM, leaf first) and its key; call once per
 * pair: an RSA and an ECDSA pair may share a context. An encrypted key is
 * read with each of passwords (sws_str_t; NULL: none) in turn. */
sws_int_t  sws_ssl_certificate(sws_ssl_t *ssl, const char *cert, const char *key,
    const sws_array_t *passwords);
/* The passphrases of a password file (one a line; ssl_password_file), in
 * pool; NULL (logged) if it cannot be read or holds none. */
sws_array_t *sws_ssl_read_passwords(sws_pool_t *pool, sws_log_t *log, const char *file);
/* "TLSv1.2 TLSv1.3" style bit set -> min/max versions. */
#define SWS_SSL_TLSv1    0x02
#define SWS_SSL_TLSv1_1  0x04
#define SWS_SSL_TLSv1_2  0x08
#define SWS_SSL_TLSv1_3  0x10
char      *sws_ssl_conf_protocols(sws_conf_t *cf, sws_uint_t *protocols);
sws_int_t  sws_ssl_protocols(sws_ssl_t *ssl, sws_uint_t protocols);
sws_int_t  sws_ssl_ciphers(sws_ssl_t *ssl, const sws_str_t *ciphers, int prefer_server);
sws_int_t  sws_ssl_ecdh_curve(sws_ssl_t *ssl, const sws_str_t *curves);
sws_int_t  sws_ssl_conf_commands(sws_ssl_t *ssl, const sws_str_t *pairs, sws_uint_t n);
sws_int_t  sws_ssl_dhparam(sws_ssl_t *ssl, const sws_str_t *file);
/* Early data (TLS 1.3 0-RTT): max bytes accepted, each ticket once
 * (replay: the table in zone, from sws_ssl_early_data_zone). */
sws_int_t  sws_ssl_early_data(sws_ssl_t *ssl, size_t max, sws_shm_zone_t *replay);
/* Kernel TLS: the probe result (made once). */
int        sws_ssl_ktls_available(void);
void       sws_ssl_ktls(sws_ssl_t *ssl, int on);
/* In the master once configured: if a context wanted kernel TLS that the
 * kernel lacks, say so (once per process). */
void       sws_ssl_ktls_report(sws_log_t *log);

/* Move a connection, while its ClientHello is being read, to another
 * context (SNI): certificates, and the versions, ciphers and options that
 * OpenSSL takes from a context only when a connection is created. */
sws_int_t  sws_ssl_switch(SSL *s, sws_ssl_t *to);

/* A TLS connection on c (server side): c->ssl. */
sws_int_t  sws_ssl_create_connection(sws_ssl_t *ssl, sws_connection_t *c);
/* Drive the handshake: SWS_OK (done: c->recv/send_chain are TLS now),
 * SWS_AGAIN (c's event handlers drive it; c->ssl->handler is called when it
 * ends, handshaked or not), SWS_ERROR (failed, logged). The caller arms the
 * handshake timer on c->read; a timeout ends it through the handler too. */
sws_int_t  sws_ssl_handshake(sws_connection_t *c);
/* Send close_notify if possible and free the TLS state (on close). */
void       sws_ssl_close(sws_connection_t *c);
/* After close_notify was sent or refused, the socket carries nothing for
 * TLS any more (lingering close reads and drops raw bytes). */
void       sws_ssl_shutdown(sws_connection_t *c);

ssize_t      sws_ssl_recv(sws_connection_t *c, u_char *buf, size_t size);
sws_chain_t *sws_ssl_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit);

/* A protocol whose connections go on at once (HTTP/2) may keep the record
 * buffers of c between records (sws_ssl_keep_buffers) instead of having
 * OpenSSL free them after every record and take them again for the next
 * (SSL_MODE_RELEASE_BUFFERS, the default of every context), until it
 * gives them back (sws_ssl_release_buffers: the default again, and 1 if
 * they went now, 0 if a record in them lets them go only once it is
 * done). */
void       sws_ssl_keep_buffers(sws_connection_t *c);
int        sws_ssl_release_buffers(sws_connection_t *c);

/* The connection of ssl in OpenSSL's callbacks (sws_ssl_current; NULL if
 * that is not ssl's): no ex_data per connection. */
sws_connection_t *sws_ssl_get_connection(const SSL *ssl);
/* The ALPN protocol chosen ("h2"), empty if none. */
void       sws_ssl_alpn(sws_connection_t *c, sws_str_t *proto);
/* Log fmt with the OpenSSL error queue appended (and clear it). */
void       sws_ssl_error(sws_uint_t level, sws_log_t *log, int err, const char *fmt, ...)
    SWS_PRINTF(4, 5);

/* ---- sws_ssl_cache.c ---- */

/* A shared session cache: a zone declared with sws_ssl_session_cache_zone
 * (at configuration), attached to a context. timeout: session lifetime. */
sws_shm_zone_t *sws_ssl_session_cache_zone(sws_conf_t *cf, const sws_str_t *name,
    size_t size);
sws_int_t  sws_ssl_session_cache(sws_ssl_t *ssl, sws_shm_zone_t *zone, int builtin,
    time_t timeout);
/* The id context that ties sessions to the server that made them: a hash
 * of the context's certificates and data (the server's names). */
sws_int_t  sws_ssl_session_id_context(sws_ssl_t *ssl, const u_char *data, size_t len);
/* Session tickets with keys derived from a secret shared by every worker
 * (made in the master, or read from key_file) and the current period of
 * `timeout`: rotated each period, the previous period's key still
 * decrypts. on = 0 disables tickets. */
sws_int_t  sws_ssl_session_tickets(sws_ssl_t *ssl, int on, const sws_str_t *key_file,
    time_t timeout);
/* HKDF-SHA256 (RFC 5869); exposed for the unit tests. */
sws_int_t  sws_ssl_hkdf(const u_char *salt, size_t salt_len, const u_char *secret,
    size_t secret_len, const u_char *info, size_t info_len, u_char *out, size_t out_len);
/* The ticket key of a period: name (16), AES-256 key (32), HMAC key (32). */
void       sws_ssl_ticket_key(const u_char secret[32], uint64_t period, u_char name[16],
    u_char aes[32], u_char hmac[32]);

/* ---- sws_ssl_replay.c ---- */

/* Early data is accepted once per ticket across the workers: a table of
 * the tickets used, in a shared memory zone's slab (the pool's data). */
typedef struct {
    sws_slab_hash_node_t   hash;
    sws_slab_lru_node_t    lru;       /* in the order first used */
    int64_t                expire;    /* the ticket's end */
    u_char                 key[16];   /* SHA-256 of the ticket's PSK, cut */
} sws_ssl_replay_rec_t;

typedef struct {
    sws_slab_hash_t       *hash;
    sws_slab_lru_t         lru;
    time_t                 started;   /* tickets issued before: refused */
    time_t                 sweep;     /* full: nothing expires before this */
    uint32_t               replays;   /* statistics */
    uint32_t               full;
} sws_ssl_replay_t;

/* The zone of the table (one per configuration, 4 MiB: ~60000 tickets). */
sws_shm_zone_t *sws_ssl_early_data_zone(sws_conf_t *cf);
/* Make pool (a fresh slab) hold a table started at `started`; SWS_ERROR
 * if it has no room. Exposed for the unit tests, like the next one. */
sws_int_t  sws_ssl_replay_create(sws_slab_pool_t *pool, time_t started);
/* Record a ticket (key) used at now, valid until expire: SWS_OK (first
 * use), SWS_DECLINED (seen before, or issued before the table started),
 * SWS_BUSY (no room: the zone is full of live tickets). The caller holds
 * the pool's lock. */
sws_int_t  sws_ssl_replay_record(sws_slab_pool_t *pool, const u_char key[16], time_t issued,
    time_t expire, time_t now);
/* The SSL_allow_early_data_cb_fn set on every connection. */
int        sws_ssl_early_data_allow(SSL *s, void *arg);

/* ---- sws_ssl_verify.c ---- */

/* Ask clients for a certificate and verify it up to depth; the handshake
 * goes on whatever the verdict (SSL_get_verify_result holds it). */
void       sws_ssl_verify_peer(sws_ssl_t *ssl, sws_uint_t depth);
/* Trust the CAs of file (PEM) to verify peers; with send_names, also name
 * them in the CertificateRequest (ssl_client_certificate, as opposed to
 * ssl_trusted_certificate). where: what the file is, for the log
 * ("ssl_client_certificate of the server in FILE:LINE"). */
sws_int_t  sws_ssl_verify_locations(sws_ssl_t *ssl, const char *file, int send_names,
    const char *where);
/* Check every certificate of a peer's chain against the CRLs of file. */
sws_int_t  sws_ssl_crl(sws_ssl_t *ssl, const char *file, const char *where);
/* The errors "optional_no_ca" lets through: an issuer not known here. */
int        sws_ssl_verify_error_optional(long err);
/* Part of sws_ssl_switch: the verification settings of the new context
 * (OpenSSL copies them into a connection when it is created). */
void       sws_ssl_verify_switch(SSL *s, SSL_CTX *to);
/* Take s's session out of the session cache (its certificate was refused:
 * it is not resumed). */
void       sws_ssl_forget_session(SSL *s);
/* A fact of the peer's certificate as text in pool: empty without a
 * certificate, but VERIFY: "NONE". */
#define SWS_SSL_PEER_VERIFY        0   /* SUCCESS, FAILED:reason, NONE */
#define SWS_SSL_PEER_S_DN          1   /* RFC 2253 */
#define SWS_SSL_PEER_I_DN          2
#define SWS_SSL_PEER_S_DN_LEGACY   3   /* /C=../CN=.. */
#define SWS_SSL_PEER_I_DN_LEGACY   4
#define SWS_SSL_PEER_SERIAL        5   /* hex */
#define SWS_SSL_PEER_FINGERPRINT   6   /* SHA-1, hex */
#define SWS_SSL_PEER_CERT          7   /* PEM, lines after the first tab-indented */
#define SWS_SSL_PEER_RAW_CERT      8   /* PEM */
#define SWS_SSL_PEER_ESCAPED_CERT  9   /* PEM, percent-escaped */
#define SWS_SSL_PEER_V_START      10   /* "Mon DD HH:MM:SS YYYY GMT" */
#define SWS_SSL_PEER_V_END        11
#define SWS_SSL_PEER_V_REMAIN     12   /* whole days left */
sws_int_t  sws_ssl_peer_fact(SSL *s, sws_uint_t fact, sws_pool_t *pool, sws_str_t *out);

/* ---- sws_ssl_stapling.c ---- */

/* OCSP stapling for every certificate of ssl: the response from file (DER)
 * if given, else fetched from responder (or the certificate's AIA URL) by
 * each worker and refreshed. verify: check the response against trusted
 * (or the chain). */
sws_int_t  sws_ssl_stapling(sws_conf_t *cf, sws_ssl_t *ssl, const sws_str_t *file,
    const sws_str_t *responder, const sws_str_t *trusted, int verify);
/* Worker start: begin fetching the responses that come from responders. */
sws_int_t  sws_ssl_stapling_init_worker(sws_cycle_t *cycle);

#endif
