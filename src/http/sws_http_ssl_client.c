/*
 * Client certificates in HTTP: the answer to a request whose certificate
 * did not verify, or was required and not sent (nginx's 495 and 496). The
 * handshake took any certificate (sws_ssl_verify.c); the server the
 * request is for (by Host) decides. The $ssl_client_* variables are with
 * the other $ssl_* ones (sws_http_variables.c).
 */
#include <strings.h>
#include "sws_http_ssl.h"

/* nginx's rule: once a name was given in the handshake, a request for
 * another name may not reach a server that checks certificates (the
 * certificate was asked for, or not, by the handshake's server). */
static int
sws_http_ssl_misdirected(sws_http_request_t *r, SSL *ssl)
{
    const char *sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    size_t      len;

    if (sni == NULL || r->host.len == 0) {
        return 0;
    }
    len = strlen(sni);
    if (len && sni[len - 1] == '.') {
        len--;
    }
    return len != r->host.len || strncasecmp(sni, (const char *) r->host.data, len) != 0;
}

sws_int_t
sws_http_ssl_verify_request(sws_http_request_t *r)
{
    SSL                     *ssl = r->session->ssl;
    sws_http_ssl_srv_conf_t *sscf = r->srv_conf[sws_http_ssl_module.index];
    long                     rc;

    if (sscf->verify == SWS_HTTP_SSL_VERIFY_OFF) {
        return SWS_OK;
    }
    if (sws_http_ssl_misdirected(r, ssl)) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client attempted to request the server name "
                      "different from the one that was negotiated");
        return SWS_HTTP_MISDIRECTED_REQUEST;
    }
    rc = SSL_get_verify_result(ssl);
    if (rc != X509_V_OK
        && (sscf->verify != SWS_HTTP_SSL_VERIFY_OPTIONAL_NO_CA
            || !sws_ssl_verify_error_optional(rc)))
    {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client SSL certificate verify error: (%ld:%s)",
                      rc, X509_verify_cert_error_string(rc));
        sws_ssl_forget_session(ssl);
        return SWS_HTTP_SSL_CERT_ERROR;
    }
    if (sscf->verify == SWS_HTTP_SSL_VERIFY_ON && SSL_get0_peer_certificate(ssl) == NULL) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent no required SSL certificate");
        sws_ssl_forget_session(ssl);
        return SWS_HTTP_SSL_NO_CERT;
    }
    return SWS_OK;
}
