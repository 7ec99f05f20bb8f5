/*
 * TLS to upstream servers, at run time: the handshake after the TCP
 * connect (non-blocking, driven by the connection's events, bounded by the
 * connect timeout), SNI and verification of the server's name, resuming
 * sessions (a small per-worker cache filled by OpenSSL's new-session
 * callback, so TLS 1.3 tickets that come after the handshake count too),
 * and which kept connections may serve a request.
 *
 * The connection is the framework's ordinary one: once the handshake is
 * done, c->recv and c->send_chain are the TLS ones (sws_ssl.c) and nothing
 * else changes. Its TLS state lives in a small pool of the connection,
 * destroyed with it (sws_ups_close_conn).
 */
#include <stdlib.h>
#include <arpa/inet.h>
#include <openssl/x509v3.h>
#include "sws_http_upstream.h"

#define SWS_UPS_SSL_SESSIONS  64      /* per worker */

/* What a TLS connection was made for (SSL ex_data): the settings, the
 * name, the server. Kept connections serve only requests of the same
 * settings and name; sessions are cached under it. */
typedef struct {
    const sws_ups_ssl_conf_t  *conf;
    sws_str_t                  name;
    sws_str_t                  peer;
} sws_ups_ssl_key_t;

typedef struct {
    const sws_ups_ssl_conf_t  *conf;
    uint32_t                   hash;
    u_char                    *text;      /* peer '\n' name (malloc) */
    size_t                     len;
    SSL_SESSION               *session;
} sws_ups_ssl_session_t;

static int                    sws_ups_ssl_index = -1;
static sws_ups_ssl_session_t  sws_ups_ssl_sessions[SWS_UPS_SSL_SESSIONS];

static void sws_ups_ssl_step(sws_http_upstream_t *u);

/* ---- the request's side ---- */

static int
sws_ups_ssl_is_ip(const sws_str_t *name)
{
    char            buf[64];
    struct in6_addr a;

    if (name->len == 0 || name->len >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, name->data, name->len);
    buf[name->len] = '\0';
    return inet_pton(AF_INET, buf, &a) == 1 || inet_pton(AF_INET6, buf, &a) == 1;
}

/* The host of a target as a TLS name: without a port, and an IPv6
 * address without its brackets. */
static void
sws_ups_ssl_host(sws_str_t *name)
{
    u_char *p;

    if (name->len && name->data[0] == '[') {
        p = memchr(name->data, ']', name->len);
        name->data++;
        name->len = p ? (size_t) (p - name->data) : name->len - 1;
    } else if ((p = memchr(name->data, ':', name->len)) != NULL) {
        name->len = (size_t) (p - name->data);
    }
}

sws_int_t
sws_http_upstream_set_ssl(sws_http_upstream_t *u, const sws_str_t *host)
{
    sws_ups_ssl_conf_t *sc = u->conf->ssl;
    sws_http_request_t *r = u->r;
    sws_str_t           name;

    if (sc == NULL || sc->ssl == NULL) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "no TLS context for upstream requests here "
                      "(the module did not declare its location may use TLS)");
        return SWS_ERROR;
    }
    if (sc->name_fmt) {
        if (sws_http_format_string(sc->name_fmt, r, r->pool, 1, NULL, 0, &name) != SWS_OK) {
            return SWS_ERROR;
        }
    } else {
        name = *host;
    }
    sws_ups_ssl_host(&name);
    u->ssl = 1;
    u->ssl_name = name;
    u->ssl_sni = sc->server_name && name.len && !sws_ups_ssl_is_ip(&name);
    return SWS_OK;
}

sws_int_t
sws_ups_ssl_probe_conf(sws_conf_t *cf, sws_http_upstream_conf_t *conf)
{
    sws_http_upstream_srv_t *us = conf->upstream;
    sws_ups_ssl_conf_t      *sc = conf->ssl;
    sws_str_t                name;

    if (us == NULL) {
        return SWS_OK;
    }
    if (conf->ssl_wanted) {
        us->hc_tls_used = 1;
    } else {
        us->hc_plain_used = 1;
    }
    if (us->hc_interval && us->hc_tls_used && us->hc_plain_used && !us->hc_warned) {
        us->hc_warned = 1;
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "upstream \"%.*s\" is used over both "
                           "http:// and https://: its health probes use TLS",
                           (int) us->name.len, us->name.data);
    }
    if (us->hc_ssl || !conf->ssl_wanted || sc == NULL || sc->ssl == NULL) {
        return SWS_OK;
    }
    if (sc->name_fmt && sws_http_format_is_static(sc->name_fmt)) {
        /* No variables: the output does not depend on a request. */
        if (sws_http_format_string(sc->name_fmt, NULL, sws_conf_pool(cf), 1, NULL, 0, &name)
            != SWS_OK)
        {
            return SWS_ERROR;
        }
    } else {
        if (sc->name_fmt) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "the health probes of upstream "
                               "\"%.*s\" use its name for TLS (ssl_name has variables)",
                               (int) us->name.len, us->name.data);
        }
        if (us->unix_sock) {
            sws_str_set(&name, "localhost");
        } else {
            name = us->name;
        }
    }
    sws_ups_ssl_host(&name);
    us->hc_ssl = sc;
    us->hc_ssl_name = name;
    us->hc_ssl_sni = sc->server_name && name.len && !sws_ups_ssl_is_ip(&name);
    return SWS_OK;
}

int
sws_ups_ssl_match(sws_connection_t *c, sws_http_upstream_t *u)
{
    const sws_ups_ssl_key_t *key = SSL_get_ex_data(c->ssl->connection, sws_ups_ssl_index);

    return key && key->conf == u->conf->ssl && sws_str_eq(&key->name, &u->ssl_name);
}

/* ---- sessions ---- */

static sws_ups_ssl_session_t *
sws_ups_ssl_slot(const sws_ups_ssl_key_t *key, uint32_t *hash)
{
    *hash = sws_hash_key(key->peer.data, key->peer.len) * 31
            + sws_hash_key(key->name.data, key->name.len)
            + (uint32_t) ((uintptr_t) key->conf >> 4);
    return &sws_ups_ssl_sessions[*hash % SWS_UPS_SSL_SESSIONS];
}

static int
sws_ups_ssl_slot_is(const sws_ups_ssl_session_t *e, const sws_ups_ssl_key_t *key,
    uint32_t hash)
{
    return e->session && e->conf == key->conf && e->hash == hash
           && e->len == key->peer.len + 1 + key->name.len
           && memcmp(e->text, key->peer.data, key->peer.len) == 0
           && memcmp(e->text + key->peer.len + 1, key->name.data, key->name.len) == 0;
}

static void
sws_ups_ssl_slot_clear(sws_ups_ssl_session_t *e)
{
    if (e->session) {
        SSL_SESSION_free(e->session);
    }
    free(e->text);
    sws_memzero(e, sizeof(*e));
}

/* OpenSSL has a session to keep (after a TLS 1.2 handshake, or a TLS 1.3
 * ticket): the newest one per server and name. 1: the reference is ours. */
static int
sws_ups_ssl_new_session(SSL *s, SSL_SESSION *session)
{
    const sws_ups_ssl_key_t *key = SSL_get_ex_data(s, sws_ups_ssl_index);
    sws_ups_ssl_session_t   *e;
    uint32_t                 hash;

    if (key == NULL || !SSL_SESSION_is_resumable(session)) {
        return 0;
    }
    e = sws_ups_ssl_slot(key, &hash);
    if (!sws_ups_ssl_slot_is(e, key, hash)) {
        sws_ups_ssl_slot_clear(e);
        e->len = key->peer.len + 1 + key->name.len;
        e->text = malloc(e->len);
        if (e->text == NULL) {
            e->len = 0;
            return 0;
        }
        memcpy(e->text, key->peer.data, key->peer.len);
        e->text[key->peer.len] = '\n';
        memcpy(e->text + key->peer.len + 1, key->name.data, key->name.len);
        e->conf = key->conf;
        e->hash = hash;
    } else {
        SSL_SESSION_free(e->session);
    }
    e->session = session;
    return 1;
}

sws_int_t
sws_ups_ssl_sessions_init(sws_ups_ssl_conf_t *sc)
{
    SSL_CTX *ctx = sc->ssl->ctx;

    if (sws_ups_ssl_index == -1) {
        sws_ups_ssl_index = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
        if (sws_ups_ssl_index == -1) {
            sws_ssl_error(SWS_LOG_EMERG, sc->ssl->log, 0, "SSL_get_ex_new_index() failed");
            return SWS_ERROR;
        }
    }
    if (sc->session_reuse) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT
                                            | SSL_SESS_CACHE_NO_INTERNAL);
        SSL_CTX_sess_set_new_cb(ctx, sws_ups_ssl_new_session);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    }
    return SWS_OK;
}

/* ---- the handshake ---- */

sws_int_t
sws_ups_ssl_client(sws_connection_t *c, sws_ups_ssl_conf_t *sc, const sws_str_t *ssl_name,
    int sni, sws_http_upstream_peer_t *peer)
{
    sws_ups_ssl_key_t     *key;
    sws_ups_ssl_session_t *e;
    SSL                   *s;
    char                  *name;
    uint32_t               hash;

    if (c->pool == NULL) {
        c->pool = sws_pool_create(1024, c->log);
        if (c->pool == NULL) {
            return SWS_ERROR;
        }
    }
    key = sws_palloc(c->pool, sizeof(sws_ups_ssl_key_t));
    name = sws_pstrdup_cstr(c->pool, ssl_name);
    if (key == NULL || name == NULL || sws_ssl_create_connection(sc->ssl, c) != SWS_OK) {
        return SWS_ERROR;
    }
    s = c->ssl->connection;
    SSL_set_connect_state(s);
    key->conf = sc;
    key->name.data = (u_char *) name;
    key->name.len = ssl_name->len;
    key->peer.data = sws_pstrdup(c->pool, &peer->name);
    key->peer.len = peer->name.len;
    if (key->peer.data == NULL || SSL_set_ex_data(s, sws_ups_ssl_index, key) != 1) {
        return SWS_ERROR;
    }

    if (sni && SSL_set_tlsext_host_name(s, name) != 1) {
        sws_ssl_error(SWS_LOG_ERR, c->log, 0, "SSL_set_tlsext_host_name(\"%s\") failed", name);
        return SWS_ERROR;
    }
    if (sc->verify && ssl_name->len) {
        /* The chain is checked by OpenSSL; the name too, this way. */
        if (sws_ups_ssl_is_ip(ssl_name)
            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s), name) != 1
            : SSL_set1_host(s, name) != 1)
        {
            sws_ssl_error(SWS_LOG_ERR, c->log, 0, "setting the name to verify (\"%s\") "
                          "failed", name);
            return SWS_ERROR;
        }
    }
    if (sc->session_reuse) {
        e = sws_ups_ssl_slot(key, &hash);
        if (sws_ups_ssl_slot_is(e, key, hash) && SSL_set_session(s, e->session) != 1) {
            ERR_clear_error();
            sws_ups_ssl_slot_clear(e);
        }
    }
    return SWS_OK;
}

long
sws_ups_ssl_forget(sws_connection_t *c)
{
    sws_ups_ssl_key_t     *key = SSL_get_ex_data(c->ssl->connection, sws_ups_ssl_index);
    sws_ups_ssl_session_t *e;
    uint32_t               hash;

    if (key) {
        /* A session that led here is not offered again. */
        e = sws_ups_ssl_slot(key, &hash);
        if (sws_ups_ssl_slot_is(e, key, hash)) {
            sws_ups_ssl_slot_clear(e);
        }
    }
    return SSL_get_verify_result(c->ssl->connection);
}

static void
sws_ups_ssl_handler(sws_event_t *ev)
{
    sws_connection_t    *c = ev->data;
    sws_http_upstream_t *u = c->data;

    if (ev->timedout) {
        ev->timedout = 0;
        sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s timed out in the TLS handshake",
                      (int) u->peer->name.len, u->peer->name.data);
        c->ssl->no_shutdown = 1;
        sws_ups_next(u, SWS_UPS_FT_TIMEOUT);
        return;
    }
    sws_ups_ssl_step(u);
}

static void
sws_ups_ssl_failed(sws_http_upstream_t *u)
{
    sws_connection_t *c = u->c;
    long              v = sws_ups_ssl_forget(c);

    if (v != X509_V_OK) {
        sws_log_error(SWS_LOG_ERR, c->log, 0, "upstream %.*s: certificate verify error: "
                      "(%ld:%s) for name \"%.*s\"", (int) u->peer->name.len,
                      u->peer->name.data, v, X509_verify_cert_error_string(v),
                      (int) u->ssl_name.len, u->ssl_name.data);
    } else {
        sws_log_error(SWS_LOG_ERR, c->log, 0, "TLS handshake with upstream %.*s failed",
                      (int) u->peer->name.len, u->peer->name.data);
    }
    sws_ups_next(u, SWS_UPS_FT_ERROR);
}

static void
sws_ups_ssl_step(sws_http_upstream_t *u)
{
    sws_connection_t *c = u->c;
    sws_int_t         rc;

    rc = sws_ssl_handshake(c);
    if (rc == SWS_AGAIN) {
        /* Ours, not sws_ssl.c's (whose words are for clients). */
        c->read->handler = sws_ups_ssl_handler;
        c->write->handler = sws_ups_ssl_handler;
        return;
    }
    c->read->handler = sws_ups_event_handler;
    c->write->handler = sws_ups_event_handler;
    if (rc != SWS_OK) {
        sws_ups_ssl_failed(u);
        return;
    }
    sws_ups_connected(u);
}

void
sws_ups_ssl_handshake(sws_http_upstream_t *u)
{
    sws_connection_t *c = u->c;

    if (sws_ups_ssl_client(c, u->conf->ssl, &u->ssl_name, u->ssl_sni, u->peer) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, c->log, 0, "cannot start TLS with upstream %.*s",
                      (int) u->peer->name.len, u->peer->name.data);
        sws_ups_next(u, SWS_UPS_FT_ERROR);
        return;
    }
    u->connecting = 1;
    if (!c->write->timer_set) {
        sws_add_timer(c->write, u->conf->connect_timeout);
    }
    sws_ups_ssl_step(u);
}
