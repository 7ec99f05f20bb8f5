/*
 * The TLS side of HTTP connections: a first look at the bytes (a plain
 * HTTP request on a TLS port gets a 400), the handshake with the default
 * server's context, SNI choosing the server (and its certificate), ALPN
 * choosing the protocol (sws_http_protocol.c).
 */
#include "sws_http_ssl.h"
#include "sws_conn_stats.h"

static void sws_http_ssl_peek(sws_event_t *rev);
static void sws_http_ssl_handshaked(sws_connection_t *c);

static sws_http_ssl_srv_conf_t *
sws_http_ssl_conf(sws_http_core_srv_conf_t *cscf)
{
    return cscf->ctx->srv_conf[sws_http_ssl_module.index];
}

void
sws_http_ssl_init_connection(sws_connection_t *c)
{
    sws_http_session_t *s = c->data;

    c->read->handler = sws_http_ssl_peek;
    c->write->handler = sws_http_ssl_peek;
    sws_add_timer(c->read, sws_http_ssl_conf(s->cscf)->handshake_timeout);
}

/* The first byte says which: a TLS record (handshake 0x16) or an HTTP
 * method (a letter). */
static void
sws_http_ssl_peek(sws_event_t *ev)
{
    sws_connection_t        *c = ev->data;
    sws_http_session_t      *s = c->data;
    sws_http_ssl_srv_conf_t *sscf = sws_http_ssl_conf(s->cscf);
    u_char                   byte;
    ssize_t                  n;
    sws_int_t                rc;

    if (ev->write) {
        return;                   /* writable: nothing to do yet */
    }
    if (ev->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out before the TLS handshake");
        sws_http_close_connection(c);
        return;
    }
    if (c->close) {
        sws_http_close_connection(c);
        return;
    }
    n = recv(c->fd, &byte, 1, MSG_PEEK);
    if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
        return;
    }
    if (n <= 0) {
        if (n == -1) {
            sws_log_error(SWS_LOG_INFO, c->log, errno, "recv() failed before the TLS handshake");
        }
        sws_http_close_connection(c);
        return;
    }
    if (byte != 0x16 && byte >= 'A' && byte <= 'Z') {
        /* HTTP/1.x in clear text: read it as such and answer 400. */
        sws_del_timer(c->read);
        s->plain_on_tls = 1;
        sws_http_protocol_start(s, SWS_HTTP_LISTENER_TLS, NULL);
        return;
    }
    if (sscf->ssl == NULL || sws_ssl_create_connection(sscf->ssl, c) != SWS_OK) {
        sws_http_close_connection(c);
        return;
    }
    c->ssl->handler = sws_http_ssl_handshaked;
    rc = sws_ssl_handshake(c);
    if (rc == SWS_AGAIN) {
        return;
    }
    sws_http_ssl_handshaked(c);
}

static void
sws_http_ssl_handshaked(sws_connection_t *c)
{
    sws_http_session_t *s = c->data;
    sws_str_t        alpn;

    sws_del_timer(c->read);
    if (!c->ssl->handshaked || c->close) {
        sws_conn_stat_plain(tls_failed, 1);
        sws_http_close_connection(c);
        return;
    }
    s->ssl = c->ssl->connection;     /* the session's TLS facts ($ssl_*) */
    if (SSL_session_reused(s->ssl)) {
        sws_conn_stat_plain(tls_resumed, 1);
    } else {
        sws_conn_stat_plain(tls_full, 1);
    }
    switch (SSL_version(s->ssl)) {
    case TLS1_3_VERSION: sws_conn_stat_plain(tls_v13, 1); break;
    case TLS1_2_VERSION: sws_conn_stat_plain(tls_v12, 1); break;
    default:             sws_conn_stat_plain(tls_older, 1); break;
    }
    sws_ssl_alpn(c, &alpn);
    sws_http_protocol_start(s, SWS_HTTP_LISTENER_TLS, &alpn);
}

/* ---- callbacks ---- */

/* The server for an SNI name (NUL-free, len bytes), or NULL. */
static sws_http_core_srv_conf_t *
sws_http_ssl_find(sws_http_session_t *s, const u_char *name, size_t len)
{
    u_char     buf[256];
    sws_str_t  host;
    size_t     i;

    if (len == 0 || len >= sizeof(buf)) {
        return NULL;
    }
    for (i = 0; i < len; i++) {
        buf[i] = sws_tolower(name[i]);
        if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= '0' && buf[i] <= '9')
              || buf[i] == '-' || buf[i] == '.' || buf[i] == '_'))
        {
            return NULL;                    /* not a host name: the default */
        }
    }
    if (buf[len - 1] == '.') {
        len--;
    }
    host.data = buf;
    host.len = len;
    return sws_http_find_server(s->addr, &host);
}

int
sws_http_ssl_client_hello(SSL *ssl, int *al, void *arg)
{
    sws_connection_t         *c = sws_ssl_get_connection(ssl);
    sws_http_session_t       *s;
    sws_http_core_srv_conf_t *cscf;
    sws_http_ssl_srv_conf_t  *sscf;
    const unsigned char      *p;
    size_t                    len, list, nlen;

    (void) arg;

    if (c == NULL || !SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_server_name, &p, &len)) {
        return SSL_CLIENT_HELLO_SUCCESS;
    }
    /* server_name_list: length, then (type, length, name): the first
     * host_name (RFC 6066 3). OpenSSL checks the extension itself later. */
    if (len < 5) {
        return SSL_CLIENT_HELLO_SUCCESS;
    }
    list = ((size_t) p[0] << 8) | p[1];
    nlen = ((size_t) p[3] << 8) | p[4];
    if (list + 2 != len || p[2] != TLSEXT_NAMETYPE_host_name || nlen + 3 > list
        || memchr(p + 5, '\0', nlen))
    {
        return SSL_CLIENT_HELLO_SUCCESS;
    }
    s = c->data;
    cscf = sws_http_ssl_find(s, p + 5, nlen);
    if (cscf == NULL) {
        return SSL_CLIENT_HELLO_SUCCESS;
    }
    /* The server's own limits and timeouts apply from now on. */
    s->cscf = cscf;
    sscf = sws_http_ssl_conf(cscf);
    if (sscf->ssl && sws_ssl_switch(ssl, sscf->ssl) != SWS_OK) {
        *al = SSL_AD_INTERNAL_ERROR;
        return SSL_CLIENT_HELLO_ERROR;
    }
    return SSL_CLIENT_HELLO_SUCCESS;
}

/* The server was chosen in the ClientHello callback: this only lets
 * OpenSSL acknowledge the name (and keep it in the session). */
int
sws_http_ssl_servername(SSL *ssl, int *ad, void *arg)
{
    (void) ssl;
    (void) ad;
    (void) arg;
    return SSL_TLSEXT_ERR_OK;
}

int
sws_http_ssl_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
    sws_connection_t   *c = sws_ssl_get_connection(ssl);
    sws_http_session_t *s = c ? c->data : NULL;

    (void) arg;

    /* Our preference among what the client offers (the registry's). */
    if (s == NULL
        || !sws_http_protocol_alpn_select(s, SWS_HTTP_LISTENER_TLS, out, outlen, in, inlen))
    {
        /* Nothing in common: go on without ALPN (RFC 7301 allows a fatal
         * alert, but an HTTP/1.1 answer is friendlier). */
        return SSL_TLSEXT_ERR_NOACK;
    }
    return SSL_TLSEXT_ERR_OK;
}
