/*
 * TLS for QUIC: the servers' ssl_certificate / ssl_certificate_key files
 * (the same the TCP listeners load into OpenSSL) loaded into one GnuTLS
 * credentials set per QUIC address, which picks the certificate by the
 * client's SNI; and each connection's GnuTLS session, TLS 1.3 only, ALPN
 * "h3" required, driven by ngtcp2's crypto layer.
 *
 * Session tickets (resumption) and 0-RTT follow the address's default
 * server's ssl_session_tickets, ssl_session_ticket_key, ssl_session_timeout
 * and ssl_early_data, as over TCP. 0-RTT is replay-protected as TLS early
 * data over TCP is: GnuTLS records each ClientHello with early data for its
 * window (a ClientHello older than that has its early data refused by its
 * ticket age), in the table that all workers share with TCP's early data
 * (sws_ssl_replay.c), so that a ClientHello replayed to any worker has its
 * early data refused. The window is the tickets' lifetime: GnuTLS refuses
 * early data on tickets older than the window's start, which moves on by
 * a window at a time.
 */
#include <fcntl.h>
#include <unistd.h>
#include "sws_http_v3.h"
#include "sws_http_ssl.h"
#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>


/* TLS 1.3 and nothing older (RFC 9001 4.2); no middlebox compatibility
 * mode (RFC 9001 8.4). */
#define SWS_H3_PRIORITY  "NORMAL:-VERS-ALL:+VERS-TLS1.3:%DISABLE_TLS13_COMPAT_MODE"

static gnutls_priority_t sws_http_v3_priority;

static void
sws_http_v3_creds_free(void *data)
{
    sws_http_v3_addr_t *qa = data;

    if (qa->creds) {
        gnutls_certificate_free_credentials(qa->creds);
        qa->creds = NULL;
    }
    if (qa->anti_replay) {
        gnutls_anti_replay_deinit(qa->anti_replay);
        qa->anti_replay = NULL;
    }
    if (qa->ticket_key.data) {
        gnutls_memset(qa->ticket_key.data, 0, qa->ticket_key.size);
        gnutls_free(qa->ticket_key.data);
        qa->ticket_key.data = NULL;
    }
}

/* GnuTLS's anti-replay store: SWS_OK as the first sight of a ClientHello
 * with early data, GNUTLS_E_DB_ENTRY_EXISTS for a replay of one. */
static int
sws_http_v3_replay_add(void *ptr, time_t expire, const gnutls_datum_t *key,
    const gnutls_datum_t *data)
{
    sws_http_v3_addr_t *qa = ptr;
    sws_slab_pool_t    *pool = qa->replay->data;
    u_char              digest[32];
    time_t              now = time(NULL);
    sws_int_t           rc;

    (void) data;
    /* GnuTLS's key is its window's start (12 bytes, of each process's
     * own clock), then the ClientHello's PSK binder: the binder alone
     * names the ClientHello in every worker. */
    if (key->size <= 12
        || gnutls_hash_fast(GNUTLS_DIG_SHA256, key->data + 12, key->size - 12, digest) != 0)
    {
        return GNUTLS_E_DB_ERROR;
    }
    sws_slab_lock(pool);
    rc = sws_ssl_replay_record(pool, digest, now, expire, now);
    sws_slab_unlock(pool);
    if (rc == SWS_OK) {
        return 0;
    }
    if (qa->log) {
        sws_log_error(SWS_LOG_INFO, qa->log, 0, "QUIC 0-RTT refused: %s",
                      rc == SWS_BUSY ? "no room left to record the ClientHello"
                                     : "the ClientHello was seen before (a replay?)");
    }
    return rc == SWS_BUSY ? GNUTLS_E_DB_ERROR : GNUTLS_E_DB_ENTRY_EXISTS;
}

/* The ticket key: of ssl_session_ticket_key's file (the same in every
 * server of a cluster, across restarts) else random at each configuration
 * load, and of the transport parameters a client remembers for 0-RTT:
 * a server whose limits changed cannot read its old tickets, and the
 * client makes a full handshake instead of sending early data past the
 * new limits (RFC 9000 7.4.1). */
static sws_int_t
sws_http_v3_ticket_key(sws_conf_t *cf, sws_http_v3_addr_t *qa, sws_http_ssl_srv_conf_t *sscf)
{
    gnutls_hash_hd_t  hd;
    u_char            buf[4096];
    uint64_t          limits[2];
    ssize_t           n;
    int               fd;

    if (sscf->session_ticket_key.len == 0) {
        return gnutls_session_ticket_key_generate(&qa->ticket_key) == 0 ? SWS_OK : SWS_ERROR;
    }
    fd = open((char *) sscf->session_ticket_key.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "cannot open ssl_session_ticket_key "
                           "\"%s\"", (char *) sscf->session_ticket_key.data);
        return SWS_ERROR;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, n ? errno : 0, "ssl_session_ticket_key \"%s\" "
                           "is empty or unreadable", (char *) sscf->session_ticket_key.data);
        return SWS_ERROR;
    }
    limits[0] = qa->conf->max_concurrent_streams;
    limits[1] = qa->conf->stream_buffer_size;
    /* GnuTLS's ticket keys are 64 bytes: SHA-512's size */
    qa->ticket_key.size = 64;
    qa->ticket_key.data = gnutls_malloc(64);
    if (qa->ticket_key.data == NULL
        || gnutls_hash_init(&hd, GNUTLS_DIG_SHA512) != 0)
    {
        return SWS_ERROR;
    }
    (void) gnutls_hash(hd, buf, (size_t) n);
    (void) gnutls_hash(hd, limits, sizeof(limits));
    gnutls_hash_deinit(hd, qa->ticket_key.data);
    gnutls_memset(buf, 0, sizeof(buf));
    return SWS_OK;
}

/* Tickets and 0-RTT of the address, from its default server. */
static sws_int_t
sws_http_v3_tls_resumption(sws_conf_t *cf, sws_http_v3_addr_t *qa)
{
    sws_http_ssl_srv_conf_t *sscf =
        qa->addr->default_server->ctx->srv_conf[sws_http_ssl_module.index];

    if (!sscf->session_tickets) {
        return SWS_OK;
    }
    qa->ticket_lifetime = (unsigned) sscf->session_timeout;
    if (sws_http_v3_ticket_key(cf, qa, sscf) != SWS_OK) {
        return SWS_ERROR;
    }
    if (!sscf->early_data) {
        return SWS_OK;
    }
    qa->replay = sws_ssl_early_data_zone(cf);
    if (qa->replay == NULL || gnutls_anti_replay_init(&qa->anti_replay) != 0) {
        qa->anti_replay = NULL;
        return SWS_ERROR;
    }
    gnutls_anti_replay_set_window(qa->anti_replay,
                                  (unsigned) sws_max(qa->ticket_lifetime, 10) * 1000);
    gnutls_anti_replay_set_add_function(qa->anti_replay, sws_http_v3_replay_add);
    gnutls_anti_replay_set_ptr(qa->anti_replay, qa);
    return SWS_OK;
}

/* The certificates of server cscf, added to the address's set. */
static sws_int_t
sws_http_v3_tls_server(sws_conf_t *cf, sws_http_v3_addr_t *qa, sws_http_core_srv_conf_t *cscf)
{
    sws_http_ssl_srv_conf_t *sscf = cscf->ctx->srv_conf[sws_http_ssl_module.index];
    sws_str_t               *certs, *keys;
    sws_uint_t               i;
    int                      rv;

    if (sscf->certificates == NULL || sscf->certificates->nelts == 0) {
        return SWS_DECLINED;
    }
    if (sscf->certificate_keys == NULL
        || sscf->certificate_keys->nelts < sscf->certificates->nelts)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no \"ssl_certificate_key\" for every "
                           "certificate of the server in %s:%lu", cscf->file,
                           (unsigned long) cscf->line);
        return SWS_ERROR;
    }
    certs = sscf->certificates->elts;
    keys = sscf->certificate_keys->elts;
    for (i = 0; i < sscf->certificates->nelts; i++) {
        rv = gnutls_certificate_set_x509_key_file(qa->creds, (char *) certs[i].data,
                                                  (char *) keys[i].data, GNUTLS_X509_FMT_PEM);
        if (rv < 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "QUIC: cannot load \"%s\" and \"%s\" "
                               "into GnuTLS: %s", (char *) certs[i].data,
                               (char *) keys[i].data, gnutls_strerror(rv));
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

sws_int_t
sws_http_v3_tls_credentials(sws_conf_t *cf, sws_http_v3_addr_t *qa)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_core_srv_conf_t **servers = cmcf->servers.elts;
    sws_http_listen_t         *lsn;
    sws_uint_t                 s, l, loaded = 0;
    sws_int_t                  rc;
    const char                *err;

    if (sws_http_v3_priority == NULL
        && gnutls_priority_init(&sws_http_v3_priority, SWS_H3_PRIORITY, &err) < 0)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "QUIC: GnuTLS priority \"%s\" refused at "
                           "\"%s\"", SWS_H3_PRIORITY, err);
        return SWS_ERROR;
    }
    if (gnutls_certificate_allocate_credentials(&qa->creds) < 0) {
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(sws_conf_pool(cf), sws_http_v3_creds_free, qa) != SWS_OK) {
        sws_http_v3_creds_free(qa);
        return SWS_ERROR;
    }

    /* Every server on the address (SNI may choose any of them): the
     * default's first, the one GnuTLS falls back to. */
    rc = sws_http_v3_tls_server(cf, qa, qa->addr->default_server);
    if (rc == SWS_ERROR) {
        return SWS_ERROR;
    }
    loaded += rc == SWS_OK;
    for (s = 0; s < cmcf->servers.nelts; s++) {
        if (servers[s] == qa->addr->default_server) {
            continue;
        }
        lsn = servers[s]->listens.elts;
        for (l = 0; l < servers[s]->listens.nelts; l++) {
            if (lsn[l].quic && lsn[l].socklen == qa->addr->lsn->socklen
                && memcmp(&lsn[l].sockaddr, &qa->addr->lsn->sockaddr, lsn[l].socklen) == 0)
            {
                rc = sws_http_v3_tls_server(cf, qa, servers[s]);
                if (rc == SWS_ERROR) {
                    return SWS_ERROR;
                }
                loaded += rc == SWS_OK;
                break;
            }
        }
    }
    if (loaded == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no \"ssl_certificate\" is defined for "
                           "the server in %s:%lu that listens with \"quic\"",
                           qa->addr->default_server->file,
                           (unsigned long) qa->addr->default_server->line);
        return SWS_ERROR;
    }
    return sws_http_v3_tls_resumption(cf, qa);
}

static ngtcp2_conn *
sws_http_v3_get_conn(ngtcp2_crypto_conn_ref *ref)
{
    sws_http_v3_conn_t *qc = ref->user_data;

    return qc->conn;
}

sws_int_t
sws_http_v3_tls_session(sws_http_v3_conn_t *qc)
{
    static const gnutls_datum_t alpn = { (unsigned char *) "h3", 2 };
    sws_http_v3_addr_t         *qa = qc->qa;
    unsigned                    flags;

    /* (tickets are sent by sws_http_v3_tls_ticket, once the handshake
     * is complete) */
    flags = GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA | GNUTLS_NO_AUTO_SEND_TICKET;
    if (qa->anti_replay) {
        flags |= GNUTLS_ENABLE_EARLY_DATA;
    }
    if (gnutls_init(&qc->tls, flags) < 0) {
        qc->tls = NULL;
        return SWS_ERROR;
    }
    qc->ref.get_conn = sws_http_v3_get_conn;
    qc->ref.user_data = qc;
    gnutls_session_set_ptr(qc->tls, &qc->ref);
    if (gnutls_priority_set(qc->tls, sws_http_v3_priority) < 0
        || ngtcp2_crypto_gnutls_configure_server_session(qc->tls) != 0
        || gnutls_credentials_set(qc->tls, GNUTLS_CRD_CERTIFICATE, qc->qa->creds) < 0
        || gnutls_alpn_set_protocols(qc->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY) < 0)
    {
        return SWS_ERROR;
    }
    if (qa->ticket_key.size) {
        if (gnutls_session_ticket_enable_server(qc->tls, &qa->ticket_key) < 0) {
            return SWS_ERROR;
        }
        gnutls_db_set_cache_expiration(qc->tls, (int) qa->ticket_lifetime);
    }
    if (qa->anti_replay) {
        gnutls_anti_replay_enable(qc->tls, qa->anti_replay);
        /* RFC 9001 4.6.1: QUIC's tickets say 0xffffffff */
        if (gnutls_record_set_max_early_data_size(qc->tls, 0xffffffff) < 0) {
            return SWS_ERROR;
        }
    }
    ngtcp2_conn_set_tls_native_handle(qc->conn, qc->tls);
    return SWS_OK;
}

sws_int_t
sws_http_v3_tls_ticket(sws_http_v3_conn_t *qc)
{
    if (qc->qa->ticket_key.size == 0) {
        return SWS_OK;
    }
    return gnutls_session_ticket_send(qc->tls, 1, 0) == 0 ? SWS_OK : SWS_ERROR;
}

/* Did the client's early data come, and was it taken? */
int
sws_http_v3_tls_early(sws_http_v3_conn_t *qc)
{
    return qc->tls && (gnutls_session_get_flags(qc->tls) & GNUTLS_SFLAGS_EARLY_DATA);
}
