/*
 * TLS connections over OpenSSL 3: contexts with ScalWS's defaults, the
 * handshake driven by the event loop, reading and sending through SSL_read
 * and SSL_write (or SSL_sendfile when kernel TLS took over the socket).
 */
#include <limits.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sws_ssl.h"

#ifndef TCP_ULP
#define TCP_ULP  31
#endif

#define SWS_SSL_SEND_MAX  (2 * 1024 * 1024)   /* per call, so others get a turn */

static int sws_ssl_conn_index = -1;
/* Some context of this process takes early data: connections then start
 * with SSL_read_early_data (SNI may move them to that context). */
static int sws_ssl_early_any;

static void sws_ssl_handshake_handler(sws_event_t *ev);

sws_int_t
sws_ssl_init(sws_log_t *log)
{
    if (sws_ssl_conn_index != -1) {
        return SWS_OK;
    }
    if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL) == 0) {
        sws_ssl_error(SWS_LOG_EMERG, log, 0, "OPENSSL_init_ssl() failed");
        return SWS_ERROR;
    }
    sws_ssl_conn_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
    if (sws_ssl_conn_index == -1) {
        sws_ssl_error(SWS_LOG_EMERG, log, 0, "SSL_get_ex_new_index() failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}

void
sws_ssl_error(sws_uint_t level, sws_log_t *log, int err, const char *fmt, ...)
{
    char           text[1024], *last = text + sizeof(text) - 1;
    char          *p = text;
    const char    *data;
    unsigned long  e;
    int            flags, n;
    va_list        args;

    va_start(args, fmt);
    n = vsnprintf(p, last - p, fmt, args);
    va_end(args);
    p += (n < 0) ? 0 : sws_min(n, last - p);

    /* The whole queue, oldest first: the first error says why. */
    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        if (last - p < 16) {
            continue;                   /* no room: just empty the queue */
        }
        p = (char *) sws_cpymem(p, " (SSL: ", 7);
        ERR_error_string_n(e, p, last - p);
        p += strlen(p);
        if ((flags & ERR_TXT_STRING) && data && *data && last - p > 2) {
            n = snprintf(p, last - p, ":%s", data);
            p += (n < 0) ? 0 : sws_min(n, last - p);
        }
        if (last - p > 0) {
            *p++ = ')';
        }
    }
    *p = '\0';
    sws_log_error(level, log, err, "%s", text);
}

static void
sws_ssl_ctx_cleanup(void *data)
{
    sws_ssl_t *ssl = data;

    SSL_CTX_free(ssl->ctx);
    ssl->ctx = NULL;
}

static sws_int_t
sws_ssl_create_ctx(sws_ssl_t *ssl, sws_pool_t *pool, sws_log_t *log, const SSL_METHOD *method)
{
    if (sws_ssl_init(log) != SWS_OK) {
        return SWS_ERROR;
    }
    ssl->log = log;
    ssl->pool = pool;
    ssl->buffer_size = 16384;
    ssl->ctx = SSL_CTX_new(method);
    if (ssl->ctx == NULL) {
        sws_ssl_error(SWS_LOG_EMERG, log, 0, "SSL_CTX_new() failed");
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(pool, sws_ssl_ctx_cleanup, ssl) != SWS_OK) {
        SSL_CTX_free(ssl->ctx);
        ssl->ctx = NULL;
        return SWS_ERROR;
    }
    SSL_CTX_set_ex_data(ssl->ctx, 0, ssl);
    SSL_CTX_set_options(ssl->ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION
                                  | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_SINGLE_ECDH_USE);
    /* Partial writes and a moving buffer: send_chain offers the same bytes
     * again after a WANT_WRITE, not necessarily from the same address. */
    SSL_CTX_set_mode(ssl->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE
                               | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER
                               | SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_min_proto_version(ssl->ctx, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(ssl->ctx, 0);
    /* Read whole buffers, not a record header and then its body: with
     * sws_ssl_bio.c a request costs one recv(). */
    SSL_CTX_set_read_ahead(ssl->ctx, 1);
    /* No 0-RTT unless asked for (replayable). */
    SSL_CTX_set_max_early_data(ssl->ctx, 0);
    SSL_CTX_set_recv_max_early_data(ssl->ctx, 0);
    return SWS_OK;
}

sws_int_t
sws_ssl_create(sws_ssl_t *ssl, sws_pool_t *pool, sws_log_t *log)
{
    return sws_ssl_create_ctx(ssl, pool, log, TLS_server_method());
}

sws_int_t
sws_ssl_create_client(sws_ssl_t *ssl, sws_pool_t *pool, sws_log_t *log)
{
    return sws_ssl_create_ctx(ssl, pool, log, TLS_client_method());
}

sws_int_t
sws_ssl_certificate(sws_ssl_t *ssl, const char *cert, const char *key)
{
    if (SSL_CTX_use_certificate_chain_file(ssl->ctx, cert) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "cannot load certificate \"%s\": "
                      "SSL_CTX_use_certificate_chain_file() failed", cert);
        return SWS_ERROR;
    }
    if (SSL_CTX_use_PrivateKey_file(ssl->ctx, key, SSL_FILETYPE_PEM) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "cannot load certificate key \"%s\": "
                      "SSL_CTX_use_PrivateKey_file() failed", key);
        return SWS_ERROR;
    }
    if (SSL_CTX_check_private_key(ssl->ctx) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "certificate \"%s\" and key \"%s\" do not match", cert, key);
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* "TLSv1.2 TLSv1.3" (the directive's arguments from the first on) as the
 * SWS_SSL_TLSv* bits; SSLv2 and SSLv3 are accepted and ignored with a
 * warning, as nginx does. For ssl_protocols and proxy_ssl_protocols. */
char *
sws_ssl_conf_protocols(sws_conf_t *cf, sws_uint_t *protocols)
{
    static const sws_conf_enum_t names[] = {
        { sws_string("TLSv1"), SWS_SSL_TLSv1 },
        { sws_string("TLSv1.1"), SWS_SSL_TLSv1_1 },
        { sws_string("TLSv1.2"), SWS_SSL_TLSv1_2 },
        { sws_string("TLSv1.3"), SWS_SSL_TLSv1_3 },
        { sws_string("SSLv2"), 0 },
        { sws_string("SSLv3"), 0 },
        { sws_null_string, 0 }
    };
    sws_str_t  *arg;
    sws_uint_t  i, j, set = 0;

    if (*protocols != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        arg = sws_conf_arg(cf, i);
        for (j = 0; names[j].name.len; j++) {
            if (sws_str_eq(arg, &names[j].name)) {
                break;
            }
        }
        if (names[j].name.len == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"%.*s\"",
                               (int) arg->len, arg->data, (int) sws_conf_arg(cf, 0)->len,
                               sws_conf_arg(cf, 0)->data);
            return SWS_CONF_ERROR;
        }
        if (names[j].value == 0) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "%.*s is not supported: ignored",
                               (int) arg->len, arg->data);
        }
        set |= names[j].value;
    }
    if (set == 0) {
        return "enables no supported protocol";
    }
    *protocols = set;
    return SWS_CONF_OK;
}

sws_int_t
sws_ssl_protocols(sws_ssl_t *ssl, sws_uint_t protocols)
{
    static const struct { sws_uint_t bit; int version; } v[] = {
        { SWS_SSL_TLSv1, TLS1_VERSION }, { SWS_SSL_TLSv1_1, TLS1_1_VERSION },
        { SWS_SSL_TLSv1_2, TLS1_2_VERSION }, { SWS_SSL_TLSv1_3, TLS1_3_VERSION },
    };
    int        min = 0, max = 0;
    sws_uint_t i;

    for (i = 0; i < sws_nelems(v); i++) {
        if (protocols & v[i].bit) {
            if (min == 0) {
                min = v[i].version;
            }
            max = v[i].version;
        }
    }
    if (min == 0) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, 0, "no TLS protocol enabled");
        return SWS_ERROR;
    }
    /* A gap ("TLSv1 TLSv1.2") cannot be expressed with min/max: the
     * versions between are refused through options. */
    SSL_CTX_set_min_proto_version(ssl->ctx, min);
    SSL_CTX_set_max_proto_version(ssl->ctx, max);
    if (!(protocols & SWS_SSL_TLSv1_1)) {
        SSL_CTX_set_options(ssl->ctx, SSL_OP_NO_TLSv1_1);
    }
    if (!(protocols & SWS_SSL_TLSv1_2)) {
        SSL_CTX_set_options(ssl->ctx, SSL_OP_NO_TLSv1_2);
    }
    if (protocols & (SWS_SSL_TLSv1 | SWS_SSL_TLSv1_1)) {
        /* OpenSSL 3's default security level refuses SHA-1 signatures,
         * which these versions need. */
        SSL_CTX_set_security_level(ssl->ctx, 0);
    }
    return SWS_OK;
}

sws_int_t
sws_ssl_ciphers(sws_ssl_t *ssl, const sws_str_t *ciphers, int prefer_server)
{
    char buf[1024];

    if (ciphers->len >= sizeof(buf)) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, 0, "ssl_ciphers is too long");
        return SWS_ERROR;
    }
    memcpy(buf, ciphers->data, ciphers->len);
    buf[ciphers->len] = '\0';
    ssl->ciphers = sws_pstrdup_cstr(ssl->pool, ciphers);
    if (ssl->ciphers == NULL) {
        return SWS_ERROR;
    }
    /* TLS 1.2 and below; TLS 1.3 suites keep OpenSSL's defaults. */
    if (SSL_CTX_set_cipher_list(ssl->ctx, buf) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CTX_set_cipher_list(\"%s\") failed",
                      buf);
        return SWS_ERROR;
    }
    if (prefer_server) {
        SSL_CTX_set_options(ssl->ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    } else {
        SSL_CTX_clear_options(ssl->ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    }
    return SWS_OK;
}

sws_int_t
sws_ssl_ecdh_curve(sws_ssl_t *ssl, const sws_str_t *curves)
{
    char buf[256];

    if (curves->len == 0 || (curves->len == 4 && memcmp(curves->data, "auto", 4) == 0)) {
        return SWS_OK;
    }
    if (curves->len >= sizeof(buf)) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, 0, "ssl_ecdh_curve is too long");
        return SWS_ERROR;
    }
    memcpy(buf, curves->data, curves->len);
    buf[curves->len] = '\0';
    if (SSL_CTX_set1_groups_list(ssl->ctx, buf) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CTX_set1_groups_list(\"%s\") failed",
                      buf);
        return SWS_ERROR;
    }
    return SWS_OK;
}

sws_int_t
sws_ssl_early_data(sws_ssl_t *ssl, size_t max, sws_shm_zone_t *replay)
{
    /* OpenSSL's replay protection makes tickets single-use through its
     * own session cache, which is per process here: ours, shared by the
     * workers, is sws_ssl_early_data_allow (sws_ssl_replay.c). Without
     * its table, no early data. */
    if (replay == NULL) {
        sws_log_error(SWS_LOG_EMERG, ssl->log, 0, "early data needs its replay table");
        return SWS_ERROR;
    }
    ssl->replay = replay;
    sws_ssl_early_any = 1;
    SSL_CTX_set_options(ssl->ctx, SSL_OP_NO_ANTI_REPLAY);
    if (SSL_CTX_set_max_early_data(ssl->ctx, (uint32_t) max) != 1
        || SSL_CTX_set_recv_max_early_data(ssl->ctx, (uint32_t) max) != 1)
    {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CTX_set_max_early_data() failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* ---- kernel TLS ---- */

/* -1 not probed, 0 missing, 1 there */
static int sws_ssl_ktls_state = -1;
static int sws_ssl_ktls_wanted, sws_ssl_ktls_reported;

int
sws_ssl_ktls_available(void)
{
    int fd, err;

    if (sws_ssl_ktls_state != -1) {
        return sws_ssl_ktls_state;
    }
    /* The "tls" upper layer protocol refuses an unconnected socket with
     * ENOTCONN when the kernel has it, and ENOENT when the module is
     * missing (and cannot be loaded). */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd == -1) {
        return 0;
    }
    err = setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof("tls")) == 0 ? 0 : errno;
    close(fd);
    sws_ssl_ktls_state = (err == 0 || err == ENOTCONN || err == EISCONN) ? 1 : 0;
    return sws_ssl_ktls_state;
}

void
sws_ssl_ktls(sws_ssl_t *ssl, int on)
{
    ssl->ktls = on ? 1 : 0;
    if (on) {
        sws_ssl_ktls_wanted = 1;
    }
    if (on && sws_ssl_ktls_available()) {
        SSL_CTX_set_options(ssl->ctx, SSL_OP_ENABLE_KTLS);
    } else {
        SSL_CTX_clear_options(ssl->ctx, SSL_OP_ENABLE_KTLS);
    }
}

void
sws_ssl_ktls_report(sws_log_t *log)
{
    if (sws_ssl_ktls_wanted && !sws_ssl_ktls_available() && !sws_ssl_ktls_reported) {
        sws_ssl_ktls_reported = 1;
        sws_log_error(SWS_LOG_NOTICE, log, 0, "kernel TLS is not available (the kernel has "
                      "no \"tls\" module): ssl_ktls falls back to user-space TLS");
    }
}

sws_int_t
sws_ssl_switch(SSL *s, sws_ssl_t *to)
{
    /* Not SSL_OP_NO_TICKET: tickets, like the session cache, are the
     * first context's business (OpenSSL calls its callbacks). */
    const uint64_t mask = SSL_OP_CIPHER_SERVER_PREFERENCE
                          | SSL_OP_NO_TLSv1_1 | SSL_OP_NO_TLSv1_2 | SSL_OP_ENABLE_KTLS
                          | SSL_OP_NO_ANTI_REPLAY;

    if (SSL_get_SSL_CTX(s) == to->ctx) {
        return SWS_OK;
    }
    if (SSL_set_SSL_CTX(s, to->ctx) == NULL) {
        return SWS_ERROR;
    }
    SSL_set_min_proto_version(s, SSL_CTX_get_min_proto_version(to->ctx));
    SSL_set_max_proto_version(s, SSL_CTX_get_max_proto_version(to->ctx));
    SSL_clear_options(s, mask);
    SSL_set_options(s, SSL_CTX_get_options(to->ctx) & mask);
    SSL_set_security_level(s, SSL_CTX_get_security_level(to->ctx));
    if (to->ciphers && SSL_set_cipher_list(s, to->ciphers) != 1) {
        ERR_clear_error();
        return SWS_ERROR;
    }
    SSL_set_max_early_data(s, SSL_CTX_get_max_early_data(to->ctx));
    SSL_set_recv_max_early_data(s, SSL_CTX_get_recv_max_early_data(to->ctx));
    return SWS_OK;
}

/* ---- connections ---- */

sws_int_t
sws_ssl_create_connection(sws_ssl_t *ssl, sws_connection_t *c)
{
    sws_ssl_connection_t *sc;

    sc = sws_pcalloc(c->pool, sizeof(sws_ssl_connection_t));
    if (sc == NULL) {
        return SWS_ERROR;
    }
    sc->ssl = ssl;
    sc->connection = SSL_new(ssl->ctx);
    if (sc->connection == NULL) {
        sws_ssl_error(SWS_LOG_ALERT, c->log, 0, "SSL_new() failed");
        return SWS_ERROR;
    }
    /* Kernel TLS is set up through OpenSSL's socket BIO; else ours. */
    if ((ssl->ktls && sws_ssl_ktls_available()
         ? SSL_set_fd(sc->connection, c->fd) != 1
         : sws_ssl_bio_attach(sc->connection, c) != SWS_OK)
        || SSL_set_ex_data(sc->connection, sws_ssl_conn_index, c) != 1)
    {
        sws_ssl_error(SWS_LOG_ALERT, c->log, 0, "attaching the socket failed");
        SSL_free(sc->connection);
        return SWS_ERROR;
    }
    if (ssl->ktls && sws_ssl_ktls_available()) {
        SSL_set_read_ahead(sc->connection, 0);   /* kTLS receive wants records */
    }
    SSL_set_accept_state(sc->connection);
    /* On the connection, not the context: SNI may move it from a context
     * without early data to one with. */
    SSL_set_allow_early_data_cb(sc->connection, sws_ssl_early_data_allow, NULL);
    c->ssl = sc;
    return SWS_OK;
}

sws_connection_t *
sws_ssl_get_connection(const SSL *ssl)
{
    return SSL_get_ex_data(ssl, sws_ssl_conn_index);
}

void
sws_ssl_alpn(sws_connection_t *c, sws_str_t *proto)
{
    const unsigned char *data = NULL;
    unsigned int         len = 0;

    if (c->ssl) {
        SSL_get0_alpn_selected(c->ssl->connection, &data, &len);
    }
    proto->data = (u_char *) data;
    proto->len = data ? len : 0;
}

/* Why a handshake failed: the client's doing (info) or ours (err). */
static void
sws_ssl_handshake_error(sws_connection_t *c, int sslerr, int err)
{
    unsigned long e;

    if (sslerr == SSL_ERROR_SYSCALL) {
        if (ERR_peek_error() == 0) {
            if (err == 0 || err == ECONNRESET || err == EPIPE || err == ETIMEDOUT) {
                sws_log_error(SWS_LOG_INFO, c->log, err,
                              "client closed the connection in the TLS handshake");
            } else {
                sws_log_error(SWS_LOG_ERR, c->log, err, "TLS handshake failed");
            }
            return;
        }
    }
    if (sslerr == SSL_ERROR_ZERO_RETURN) {
        sws_log_error(SWS_LOG_INFO, c->log, 0,
                      "client closed the connection in the TLS handshake");
        return;
    }
    e = ERR_peek_error();
    /* A malformed, truncated or unacceptable ClientHello (or any protocol
     * error of the client) is not a server problem. Resource failures
     * are. */
    if (ERR_GET_LIB(e) == ERR_LIB_SSL || ERR_GET_LIB(e) == 0) {
        sws_ssl_error(SWS_LOG_INFO, c->log, 0, "TLS handshake failed with %s",
                      (char *) c->addr_text.data ? (char *) c->addr_text.data : "client");
    } else {
        sws_ssl_error(SWS_LOG_ERR, c->log, 0, "TLS handshake failed");
    }
}

/* TLS 1.3 early data: OpenSSL wants SSL_read_early_data before anything
 * else. The first piece read means it was accepted (sws_ssl_early_data_allow
 * agreed, the server's flight is out): the connection goes to the protocol
 * on top at once, with in_early set, and sws_ssl_recv reads the rest of
 * the early data, then finishes the handshake. SWS_OK (sc->early_len > 0:
 * early data; 0: none, or refused), SWS_AGAIN, SWS_ERROR. */
static sws_int_t
sws_ssl_read_early(sws_connection_t *c)
{
    static u_char         buf[16384];     /* a record's worth */
    sws_ssl_connection_t *sc = c->ssl;
    size_t                n;
    int                   rc, sslerr;

    for ( ;; ) {
        n = 0;
        ERR_clear_error();
        rc = SSL_read_early_data(sc->connection, buf, sizeof(buf), &n);
        if (rc == SSL_READ_EARLY_DATA_SUCCESS) {
            if (n == 0) {
                continue;
            }
            sc->early = sws_pnalloc(c->pool, n);
            if (sc->early == NULL) {
                return SWS_ERROR;
            }
            memcpy(sc->early, buf, n);
            sc->early_len = n;
            sc->early_data = 1;
            return SWS_OK;
        }
        if (rc == SSL_READ_EARLY_DATA_FINISH) {
            sc->early_done = 1;
            sc->early_data = SSL_get_early_data_status(sc->connection)
                             == SSL_EARLY_DATA_ACCEPTED;
            return SWS_OK;
        }
        sslerr = SSL_get_error(sc->connection, rc);
        if (sslerr == SSL_ERROR_WANT_READ) {
            c->read->ready = 0;
            return SWS_AGAIN;
        }
        if (sslerr == SSL_ERROR_WANT_WRITE) {
            c->write->ready = 0;
            return SWS_AGAIN;
        }
        sws_ssl_handshake_error(c, sslerr, errno);
        return SWS_ERROR;
    }
}

static void
sws_ssl_handshake_done(sws_connection_t *c)
{
    sws_ssl_connection_t *sc = c->ssl;
    BIO                  *wbio, *rbio;

    sc->handshaked = 1;
    c->recv = sws_ssl_recv;
    c->send_chain = sws_ssl_send_chain;
    wbio = SSL_get_wbio(sc->connection);
    rbio = SSL_get_rbio(sc->connection);
    sc->ktls_send = wbio && BIO_get_ktls_send(wbio) ? 1 : 0;
    sc->ktls_recv = rbio && BIO_get_ktls_recv(rbio) ? 1 : 0;
    if (sc->ssl->ktls && (SSL_CTX_get_options(sc->ssl->ctx) & SSL_OP_ENABLE_KTLS)
        && !sc->ktls_send)
    {
        sws_log_debug(c->log, "kernel TLS not used for %s (cipher %s)",
                      SSL_get_version(sc->connection), SSL_get_cipher_name(sc->connection));
    }
}

sws_int_t
sws_ssl_handshake(sws_connection_t *c)
{
    sws_ssl_connection_t *sc = c->ssl;
    int                   n, sslerr, err;
    sws_int_t             rc;

    if (!sc->early_done && sws_ssl_early_any) {
        rc = sws_ssl_read_early(c);
        if (rc == SWS_AGAIN) {
            goto again;
        }
        if (rc == SWS_ERROR) {
            sc->no_shutdown = 1;
            return SWS_ERROR;
        }
        if (sc->early_len) {
            /* 0-RTT: served now, the handshake ends in sws_ssl_recv. */
            sc->in_early = 1;
            c->read->ready = 1;
            sws_ssl_handshake_done(c);
            return SWS_OK;
        }
        sc->early_done = 1;
    }

    ERR_clear_error();
    n = SSL_do_handshake(sc->connection);
    if (n == 1) {
        sws_ssl_handshake_done(c);
        return SWS_OK;
    }
    err = errno;
    sslerr = SSL_get_error(sc->connection, n);
    if (sslerr == SSL_ERROR_WANT_READ) {
        c->read->ready = 0;
        goto again;
    }
    if (sslerr == SSL_ERROR_WANT_WRITE) {
        c->write->ready = 0;
        goto again;
    }
    c->read->error = 1;
    sc->no_shutdown = 1;
    sws_ssl_handshake_error(c, sslerr, err);
    return SWS_ERROR;

again:
    c->read->handler = sws_ssl_handshake_handler;
    c->write->handler = sws_ssl_handshake_handler;
    return SWS_AGAIN;
}

static void
sws_ssl_handshake_handler(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;

    if (ev->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out in the TLS handshake");
        c->timedout = 1;
        c->ssl->no_shutdown = 1;
        c->ssl->handler(c);
        return;
    }
    if (c->close) {
        c->ssl->no_shutdown = 1;
        c->ssl->handler(c);
        return;
    }
    if (sws_ssl_handshake(c) == SWS_AGAIN) {
        return;
    }
    c->ssl->handler(c);
}

/* ---- I/O ---- */

/*
 * The error queue is not emptied before every SSL_read and SSL_write (a
 * thread-local lookup that cost about 400 instructions a call, twice per
 * HTTP/2 request): a call that succeeds never looks at it. A failure that
 * SSL_get_error blames on the queue may be an older error's doing, left by
 * some other OpenSSL call: the queue is emptied and the call repeated once
 * (harmless: after WANT_READ/WANT_WRITE the same call is what OpenSSL
 * expects, and a broken connection fails again).
 */
static int
sws_ssl_maybe_stale(int sslerr)
{
    return sslerr == SSL_ERROR_SSL || (sslerr == SSL_ERROR_SYSCALL && ERR_peek_error() != 0);
}

/* The rest of the early data: bytes, SWS_AGAIN, SWS_ERROR, or SWS_DONE
 * at its end (then SSL_read finishes the handshake). */
static ssize_t
sws_ssl_recv_early(sws_connection_t *c, u_char *buf, size_t size)
{
    sws_ssl_connection_t *sc = c->ssl;
    size_t                n;
    int                   rc, sslerr;

    while (!sc->early_done) {
        n = 0;
        ERR_clear_error();
        rc = SSL_read_early_data(sc->connection, buf, size, &n);
        if (rc == SSL_READ_EARLY_DATA_SUCCESS) {
            if (n > 0) {
                return (ssize_t) n;
            }
            continue;
        }
        if (rc == SSL_READ_EARLY_DATA_FINISH) {
            sc->early_done = 1;
            break;
        }
        sslerr = SSL_get_error(sc->connection, rc);
        c->read->ready = 0;
        if (sslerr == SSL_ERROR_WANT_READ) {
            return SWS_AGAIN;
        }
        if (sslerr == SSL_ERROR_WANT_WRITE) {
            c->write->ready = 0;
            return SWS_AGAIN;
        }
        c->read->error = 1;
        sc->no_shutdown = 1;
        sws_ssl_error(SWS_LOG_INFO, c->log, sslerr == SSL_ERROR_SYSCALL ? errno : 0,
                      "SSL_read_early_data() failed");
        return SWS_ERROR;
    }
    return SWS_DONE;
}

ssize_t
sws_ssl_recv(sws_connection_t *c, u_char *buf, size_t size)
{
    sws_ssl_connection_t *sc = c->ssl;
    int                   n, sslerr, err, retried;
    size_t                left;
    ssize_t               early;

    if (sc->early_pos < sc->early_len) {
        /* Early data first: it came before anything else. */
        left = sc->early_len - sc->early_pos;
        n = (int) sws_min(left, size);
        memcpy(buf, sc->early + sc->early_pos, (size_t) n);
        sc->early_pos += n;
        return n;
    }
    if (sc->in_early) {
        early = sws_ssl_recv_early(c, buf, sws_min(size, (size_t) INT_MAX));
        if (early != SWS_DONE) {
            return early;
        }
    }

    for (retried = 0; ; retried = 1) {
        n = SSL_read(sc->connection, buf, (int) sws_min(size, (size_t) INT_MAX));
        if (sc->in_early && SSL_is_init_finished(sc->connection)) {
            sc->in_early = 0;             /* the client's Finished came */
        }
        if (n > 0) {
            /* OpenSSL may hold more than it returned (read ahead, or a
             * record larger than buf) although the socket is drained:
             * readers loop while ready, so ready stays set while anything
             * is pending. */
            if (SSL_has_pending(sc->connection)) {
                c->read->ready = 1;
            }
            return n;
        }
        err = errno;
        sslerr = SSL_get_error(sc->connection, n);
        if (retried || !sws_ssl_maybe_stale(sslerr)) {
            break;
        }
        ERR_clear_error();
    }
    switch (sslerr) {
    case SSL_ERROR_WANT_READ:
        c->read->ready = 0;
        return SWS_AGAIN;
    case SSL_ERROR_WANT_WRITE:
        /* A post-handshake message wants a reply and the socket is full:
         * the next write flushes it. */
        c->read->ready = 0;
        c->write->ready = 0;
        return SWS_AGAIN;
    case SSL_ERROR_ZERO_RETURN:
        c->read->ready = 0;
        c->read->eof = 1;
        return 0;
    case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0 && err == 0) {
            c->read->ready = 0;
            c->read->eof = 1;
            return 0;
        }
        /* fall through */
    default:
        c->read->ready = 0;
        c->read->error = 1;
        sc->no_shutdown = 1;
        if (sslerr == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
            sws_log_error((err == ECONNRESET || err == EPIPE) ? SWS_LOG_INFO : SWS_LOG_ERR,
                          c->log, err, "SSL_read() failed");
        } else {
            sws_ssl_error(SWS_LOG_INFO, c->log, 0, "SSL_read() failed");
        }
        return SWS_ERROR;
    }
}

/* SSL_write / SSL_sendfile outcome: bytes, SWS_AGAIN or SWS_ERROR. */
static ssize_t
sws_ssl_write_result(sws_connection_t *c, ssize_t n, const char *what)
{
    sws_ssl_connection_t *sc = c->ssl;
    int                   err = errno, sslerr;

    if (n > 0) {
        sc->last_len = 0;
        return n;
    }
    sslerr = SSL_get_error(sc->connection, (int) n);
    if (sslerr == SSL_ERROR_WANT_WRITE || sslerr == SSL_ERROR_WANT_READ) {
        c->write->ready = 0;
        return SWS_AGAIN;
    }
    c->write->error = 1;
    sc->no_shutdown = 1;
    if (sslerr == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        sws_log_error((err == EPIPE || err == ECONNRESET) ? SWS_LOG_INFO : SWS_LOG_ERR,
                      c->log, err, "%s to client failed", what);
    } else {
        sws_ssl_error(SWS_LOG_INFO, c->log, 0, "%s to client failed", what);
    }
    return SWS_ERROR;
}

static ssize_t
sws_ssl_write(sws_connection_t *c, const u_char *data, size_t size)
{
    ssize_t n;
    size_t  written = 0;

    if (c->ssl->in_early) {
        ERR_clear_error();
        /* Before the client's Finished: SSL_write would wait for it. */
        n = SSL_write_early_data(c->ssl->connection, data, size, &written) == 1
            ? (ssize_t) written : 0;
        n = sws_ssl_write_result(c, n, "SSL_write_early_data()");
    } else {
        n = SSL_write(c->ssl->connection, data, (int) size);
        if (n <= 0 && sws_ssl_maybe_stale(SSL_get_error(c->ssl->connection, (int) n))) {
            ERR_clear_error();            /* and look again, see above */
            n = SSL_write(c->ssl->connection, data, (int) size);
        }
        n = sws_ssl_write_result(c, n, "SSL_write()");
    }
    if (n == SWS_AGAIN) {
        /* OpenSSL wants at least these bytes again. */
        c->ssl->last_len = size;
    }
    return n;
}

/* Gather up to size bytes of memory buffers from in into sc->buf. */
static size_t
sws_ssl_coalesce(sws_connection_t *c, sws_chain_t *in, size_t size)
{
    u_char    *p = c->ssl->buf;
    size_t     n, have = 0;
    sws_buf_t *b;

    for (; in && have < size; in = in->next) {
        b = in->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        if (!sws_buf_in_memory(b)) {
            break;
        }
        n = sws_min((size_t) (b->last - b->pos), size - have);
        memcpy(p + have, b->pos, n);
        have += n;
    }
    return have;
}

/* One write from the front of in (at most max bytes): bytes sent, or
 * SWS_AGAIN / SWS_ERROR. */
static ssize_t
sws_ssl_send_front(sws_connection_t *c, sws_chain_t *in, off_t max)
{
    sws_ssl_connection_t *sc = c->ssl;
    sws_buf_t            *b = in->buf;
    size_t                bsize = sc->ssl->buffer_size, size;
    off_t                 fsize;
    ssize_t               n;

    /* After a WANT_WRITE, OpenSSL needs at least as much again. */
    if (sc->last_len > (size_t) max) {
        max = (off_t) sc->last_len;
    }

    if (sws_buf_in_memory(b)) {
        size = b->last - b->pos;
        if (size >= bsize || in->next == NULL) {
            /* Large enough for full records (or all there is): no copy. */
            return sws_ssl_write(c, b->pos, (size_t) sws_min((off_t) size, max));
        }
        if (sc->buf == NULL) {
            sc->buf = sws_palloc(c->pool, bsize);
            if (sc->buf == NULL) {
                return SWS_ERROR;
            }
        }
        size = sws_ssl_coalesce(c, in, (size_t) sws_min((off_t) bsize, max));
        return sws_ssl_write(c, sc->buf, size);
    }

    fsize = sws_min(b->file_last - b->file_pos, max);
    if (sc->ktls_send && c->sendfile && !sc->in_early) {
        ERR_clear_error();
        n = SSL_sendfile(sc->connection, b->fd, b->file_pos, (size_t) fsize, 0);
        return sws_ssl_write_result(c, n, "SSL_sendfile()");
    }
    if (sc->buf == NULL) {
        sc->buf = sws_palloc(c->pool, bsize);
        if (sc->buf == NULL) {
            return SWS_ERROR;
        }
    }
    size = (size_t) sws_min(fsize, (off_t) bsize);
    n = pread(b->fd, sc->buf, size, b->file_pos);
    if (n <= 0) {
        if (n == 0) {
            sws_log_error(SWS_LOG_CRIT, c->log, 0, "file was truncated while sending");
        } else {
            sws_log_error(SWS_LOG_CRIT, c->log, errno, "pread() failed");
        }
        c->write->error = 1;
        return SWS_ERROR;
    }
    return sws_ssl_write(c, sc->buf, (size_t) n);
}

sws_chain_t *
sws_ssl_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    off_t    sent_total = 0;
    ssize_t  n;

    if (limit == 0 || limit > SWS_SSL_SEND_MAX) {
        limit = SWS_SSL_SEND_MAX;
    }
    while (sent_total < limit) {
        /* Flag-only and empty buffers at the front count as sent. */
        while (in && (sws_buf_special(in->buf) || sws_buf_size(in->buf) == 0)) {
            in = in->next;
        }
        if (in == NULL) {
            return NULL;
        }
        n = sws_ssl_send_front(c, in, limit - sent_total);
        if (n == SWS_AGAIN) {
            return in;
        }
        if (n == SWS_ERROR) {
            return SWS_CHAIN_ERROR;
        }
        c->sent += n;
        sent_total += n;
        in = sws_chain_update_sent(in, n);
    }
    return in;
}

/* ---- the end ---- */

/* Closing in early data: the rest of it (nobody wants it now) and the
 * end of the handshake if the client's Finished is there already, so
 * close_notify can be sent. SWS_OK, or not now (no close_notify). */
static sws_int_t
sws_ssl_finish_early(sws_connection_t *c)
{
    static u_char         drain[4096];
    sws_ssl_connection_t *sc = c->ssl;
    size_t                n;
    int                   rc;

    while (!sc->early_done) {
        rc = SSL_read_early_data(sc->connection, drain, sizeof(drain), &n);
        if (rc == SSL_READ_EARLY_DATA_FINISH) {
            sc->early_done = 1;
        } else if (rc != SSL_READ_EARLY_DATA_SUCCESS) {
            ERR_clear_error();
            return SWS_AGAIN;
        }
    }
    if (SSL_do_handshake(sc->connection) != 1) {
        ERR_clear_error();
        return SWS_AGAIN;
    }
    sc->in_early = 0;
    return SWS_OK;
}

void
sws_ssl_shutdown(sws_connection_t *c)
{
    sws_ssl_connection_t *sc = c->ssl;

    if (sc == NULL || sc->no_shutdown) {
        return;
    }
    sc->no_shutdown = 1;
    if (!sc->handshaked || c->read->error || c->write->error || c->timedout) {
        return;
    }
    ERR_clear_error();
    if (sc->in_early && sws_ssl_finish_early(c) != SWS_OK) {
        return;
    }
    /* One non-blocking attempt: close_notify if the socket takes it; the
     * peer's close_notify is not waited for. */
    SSL_set_quiet_shutdown(sc->connection, 0);
    ERR_clear_error();
    (void) SSL_shutdown(sc->connection);
    ERR_clear_error();
}

void
sws_ssl_close(sws_connection_t *c)
{
    sws_ssl_connection_t *sc = c->ssl;

    if (sc == NULL) {
        return;
    }
    sws_ssl_shutdown(c);
    SSL_free(sc->connection);
    sc->connection = NULL;
    c->ssl = NULL;
    c->recv = sws_unix_recv;
    c->send_chain = sws_unix_send_chain;
}
