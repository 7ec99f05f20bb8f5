/*
 * TLS for QUIC: the servers' ssl_certificate / ssl_certificate_key files
 * (the same the TCP listeners load into OpenSSL) loaded into one GnuTLS
 * credentials set per QUIC address, which picks the certificate by the
 * client's SNI; and each connection's GnuTLS session, TLS 1.3 only, ALPN
 * "h3" required, driven by ngtcp2's crypto layer.
 */
#include "sws_http_v3.h"
#include "sws_http_ssl.h"
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
    return SWS_OK;
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

    if (gnutls_init(&qc->tls, GNUTLS_SERVER | GNUTLS_NO_END_OF_EARLY_DATA) < 0) {
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
    ngtcp2_conn_set_tls_native_handle(qc->conn, qc->tls);
    return SWS_OK;
}
