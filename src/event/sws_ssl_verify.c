/*
 * Client certificates (mutual TLS) on a server context: asking for one,
 * the CAs that verify it (and those named to the client), the CRLs, and
 * what a connection's certificate says ($ssl_client_* in HTTP).
 *
 * The handshake never fails on a certificate that does not verify: the
 * result stays with the connection (and its session, so that a resumed
 * session keeps it) and the protocol on top decides what to answer.
 */
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include "sws_ssl.h"

/* Every certificate is let through; X509 keeps the first error as the
 * verification's result (SSL_get_verify_result). What the check left in
 * the error queue goes (a bad signature leaves "EVP lib" there): the
 * handshake would otherwise fail on it at the next WANT_READ, or not,
 * depending on how the client's records arrive (nginx does). */
static int
sws_ssl_verify_callback(int ok, X509_STORE_CTX *store)
{
    (void) store;
    if (!ok) {
        ERR_clear_error();
    }
    return 1;
}

void
sws_ssl_verify_peer(sws_ssl_t *ssl, sws_uint_t depth)
{
    SSL_CTX_set_verify(ssl->ctx, SSL_VERIFY_PEER, sws_ssl_verify_callback);
    SSL_CTX_set_verify_depth(ssl->ctx, (int) depth);
}

sws_int_t
sws_ssl_verify_locations(sws_ssl_t *ssl, const char *file, int send_names, const char *where)
{
    STACK_OF(X509_NAME) *names;

    if (SSL_CTX_load_verify_locations(ssl->ctx, file, NULL) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "cannot load %s \"%s\": "
                      "SSL_CTX_load_verify_locations() failed", where, file);
        return SWS_ERROR;
    }
    if (!send_names) {
        return SWS_OK;
    }
    ERR_clear_error();
    names = SSL_load_client_CA_file(file);
    if (names == NULL) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "cannot load %s \"%s\": "
                      "SSL_load_client_CA_file() failed", where, file);
        return SWS_ERROR;
    }
    SSL_CTX_set_client_CA_list(ssl->ctx, names);           /* takes names */
    return SWS_OK;
}

sws_int_t
sws_ssl_crl(sws_ssl_t *ssl, const char *file, const char *where)
{
    X509_STORE  *store = SSL_CTX_get_cert_store(ssl->ctx);
    X509_LOOKUP *lookup;

    lookup = store ? X509_STORE_add_lookup(store, X509_LOOKUP_file()) : NULL;
    if (lookup == NULL) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "X509_STORE_add_lookup() failed");
        return SWS_ERROR;
    }
    if (X509_LOOKUP_load_file(lookup, file, X509_FILETYPE_PEM) == 0) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "cannot load %s \"%s\": "
                      "X509_LOOKUP_load_file() failed", where, file);
        return SWS_ERROR;
    }
    /* Every certificate of the chain is checked, as nginx does: a CA
     * without a CRL in the file fails ("unable to get certificate CRL"). */
    X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL);
    return SWS_OK;
}

int
sws_ssl_verify_error_optional(long err)
{
    return err == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
           || err == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN
           || err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT
           || err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
           || err == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE;
}

void
sws_ssl_verify_switch(SSL *s, SSL_CTX *to)
{
    STACK_OF(X509_NAME) *names = SSL_CTX_get_client_CA_list(to);

    SSL_set_verify(s, SSL_CTX_get_verify_mode(to), SSL_CTX_get_verify_callback(to));
    SSL_set_verify_depth(s, SSL_CTX_get_verify_depth(to));
    /* The names the CertificateRequest carries are the connection's own
     * copy, made from the first context. */
    SSL_set_client_CA_list(s, names ? SSL_dup_CA_list(names) : NULL);
}

void
sws_ssl_forget_session(SSL *s)
{
    SSL_SESSION *sess = SSL_get0_session(s);

    if (sess) {
        SSL_CTX_remove_session(SSL_get_SSL_CTX(s), sess);
    }
}

/* ---- the facts of the peer's certificate ---- */

/* What bio holds, copied into pool (a trailing newline kept). */
static sws_int_t
sws_ssl_bio_text(BIO *bio, sws_pool_t *pool, sws_str_t *out)
{
    char *data;
    long  len = BIO_get_mem_data(bio, &data);

    out->len = 0;
    if (len <= 0) {
        return SWS_OK;
    }
    out->data = sws_pnalloc(pool, (size_t) len);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(out->data, data, (size_t) len);
    out->len = (size_t) len;
    return SWS_OK;
}

/* The PEM with each line after the first indented by a tab and no final
 * newline: a value that fits one header field folded the old way. */
static sws_int_t
sws_ssl_pem_folded(const sws_str_t *pem, sws_pool_t *pool, sws_str_t *out)
{
    size_t  i, len;
    u_char *p;

    if (pem->len == 0) {
        *out = *pem;
        return SWS_OK;
    }
    len = pem->len - 1;
    for (i = 0; i < pem->len - 1; i++) {
        len += pem->data[i] == '\n';
    }
    p = out->data = sws_pnalloc(pool, len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < pem->len - 1; i++) {
        *p++ = pem->data[i];
        if (pem->data[i] == '\n') {
            *p++ = '\t';
        }
    }
    out->len = len;
    return SWS_OK;
}

static sws_int_t
sws_ssl_pem_escaped(const sws_str_t *pem, sws_pool_t *pool, sws_str_t *out)
{
    size_t  len = sws_escape_uri_len(pem->data, pem->len, SWS_ESCAPE_URI_COMPONENT);

    out->data = sws_pnalloc(pool, len ? len : 1);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    out->len = (size_t) (sws_escape_uri(out->data, pem->data, pem->len,
                                        SWS_ESCAPE_URI_COMPONENT) - out->data);
    return SWS_OK;
}

/* "/C=FR/O=.../CN=..." */
static sws_int_t
sws_ssl_name_oneline(X509_NAME *name, sws_pool_t *pool, sws_str_t *out)
{
    char      *line = X509_NAME_oneline(name, NULL, 0);
    sws_int_t  rc = SWS_ERROR;

    if (line == NULL) {
        return SWS_ERROR;
    }
    out->len = strlen(line);
    out->data = sws_pnalloc(pool, out->len ? out->len : 1);
    if (out->data) {
        memcpy(out->data, line, out->len);
        rc = SWS_OK;
    }
    OPENSSL_free(line);
    return rc;
}

static sws_int_t
sws_ssl_fingerprint(X509 *cert, sws_pool_t *pool, sws_str_t *out)
{
    u_char        md[EVP_MAX_MD_SIZE];
    unsigned int  len = 0;

    if (X509_digest(cert, EVP_sha1(), md, &len) != 1) {
        return SWS_ERROR;
    }
    out->data = sws_pnalloc(pool, 2 * len);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    out->len = (size_t) (sws_hex_dump(out->data, md, len) - out->data);
    return SWS_OK;
}

/* Whole days until the certificate expires, 0 once it has. */
static sws_int_t
sws_ssl_days_left(X509 *cert, sws_pool_t *pool, sws_str_t *out)
{
    int  days = 0, secs = 0;

    if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert)) != 1) {
        return SWS_ERROR;
    }
    if (days < 0 || secs < 0) {
        days = 0;                       /* both have the difference's sign */
    }
    out->data = sws_pnalloc(pool, 20);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    out->len = (size_t) (sws_sprint_uint(out->data, (uint64_t) days) - out->data);
    return SWS_OK;
}

static sws_int_t
sws_ssl_verify_text(SSL *s, sws_pool_t *pool, sws_str_t *out)
{
    long        rc = SSL_get_verify_result(s);
    const char *why;
    size_t      len;

    if (rc == X509_V_OK) {
        sws_str_set(out, "SUCCESS");
        return SWS_OK;
    }
    why = X509_verify_cert_error_string(rc);
    len = strlen(why);
    out->data = sws_pnalloc(pool, sizeof("FAILED:") - 1 + len);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    memcpy(out->data, "FAILED:", sizeof("FAILED:") - 1);
    memcpy(out->data + sizeof("FAILED:") - 1, why, len);
    out->len = sizeof("FAILED:") - 1 + len;
    return SWS_OK;
}

/* The facts OpenSSL prints (into bio): 1 printed, 0 failed, -1 not one. */
static int
sws_ssl_print_fact(BIO *bio, X509 *cert, sws_uint_t fact)
{
    switch (fact) {
    case SWS_SSL_PEER_S_DN:
        return X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0;
    case SWS_SSL_PEER_I_DN:
        return X509_NAME_print_ex(bio, X509_get_issuer_name(cert), 0, XN_FLAG_RFC2253) >= 0;
    case SWS_SSL_PEER_SERIAL:
        return i2a_ASN1_INTEGER(bio, X509_get0_serialNumber(cert)) >= 0;
    case SWS_SSL_PEER_CERT:
    case SWS_SSL_PEER_RAW_CERT:
    case SWS_SSL_PEER_ESCAPED_CERT:
        return PEM_write_bio_X509(bio, cert) == 1;
    case SWS_SSL_PEER_V_START:
        return ASN1_TIME_print(bio, X509_get0_notBefore(cert)) == 1;
    case SWS_SSL_PEER_V_END:
        return ASN1_TIME_print(bio, X509_get0_notAfter(cert)) == 1;
    default:
        return -1;
    }
}

sws_int_t
sws_ssl_peer_fact(SSL *s, sws_uint_t fact, sws_pool_t *pool, sws_str_t *out)
{
    X509      *cert;
    BIO       *bio;
    sws_str_t  pem;
    sws_int_t  rc;
    int        printed;

    out->len = 0;
    cert = s ? SSL_get1_peer_certificate(s) : NULL;
    if (cert == NULL) {
        if (s && fact == SWS_SSL_PEER_VERIFY) {
            sws_str_set(out, "NONE");
        }
        return SWS_OK;
    }
    bio = BIO_new(BIO_s_mem());
    printed = bio ? sws_ssl_print_fact(bio, cert, fact) : 0;
    if (printed == 1) {
        rc = sws_ssl_bio_text(bio, pool, &pem);
        if (rc == SWS_OK && fact == SWS_SSL_PEER_CERT) {
            rc = sws_ssl_pem_folded(&pem, pool, out);
        } else if (rc == SWS_OK && fact == SWS_SSL_PEER_ESCAPED_CERT) {
            rc = sws_ssl_pem_escaped(&pem, pool, out);
        } else {
            *out = pem;
        }
    } else if (printed == 0) {
        rc = SWS_ERROR;
    } else if (fact == SWS_SSL_PEER_VERIFY) {
        rc = sws_ssl_verify_text(s, pool, out);
    } else if (fact == SWS_SSL_PEER_S_DN_LEGACY) {
        rc = sws_ssl_name_oneline(X509_get_subject_name(cert), pool, out);
    } else if (fact == SWS_SSL_PEER_I_DN_LEGACY) {
        rc = sws_ssl_name_oneline(X509_get_issuer_name(cert), pool, out);
    } else if (fact == SWS_SSL_PEER_FINGERPRINT) {
        rc = sws_ssl_fingerprint(cert, pool, out);
    } else if (fact == SWS_SSL_PEER_V_REMAIN) {
        rc = sws_ssl_days_left(cert, pool, out);
    } else {
        rc = SWS_ERROR;
    }
    BIO_free(bio);
    X509_free(cert);
    if (rc != SWS_OK) {
        out->len = 0;
        ERR_clear_error();
    }
    return rc;
}
