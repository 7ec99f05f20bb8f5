/*
 * TLS to upstream servers, the configuration: the PREFIX_ssl_* directives
 * (proxy_ssl_verify ...) and the client context of a location. A level
 * with none of the directives shares its parent's settings and context, so
 * one context serves every location that does not change them; it is made
 * only when a location may use TLS (an https:// target, or variables).
 */
#include "sws_http_upstream.h"

static sws_ups_ssl_conf_t *
sws_ups_ssl_conf_new(sws_pool_t *pool)
{
    sws_ups_ssl_conf_t *sc;

    sc = sws_pcalloc(pool, sizeof(sws_ups_ssl_conf_t));
    if (sc == NULL) {
        return NULL;
    }
    sc->server_name = SWS_UNSET;
    sc->verify = SWS_UNSET;
    sc->verify_depth = SWS_UNSET_UINT;
    sc->protocols = SWS_UNSET_UINT;
    sc->session_reuse = SWS_UNSET;
    return sc;
}

static char *
sws_ups_ssl_protocols(sws_conf_t *cf, sws_ups_ssl_conf_t *sc)
{
    return sws_ssl_conf_protocols(cf, &sc->protocols);
}

/* The directive's value as an absolute path (a C string). */
static char *
sws_ups_ssl_path(sws_conf_t *cf, sws_str_t *field)
{
    sws_str_t v = *sws_conf_arg(cf, 1);

    if (field->data) {
        return "is duplicate";
    }
    if (v.len == 0 || sws_conf_full_name(cf, &v, 1) != SWS_OK) {
        return v.len ? SWS_CONF_ERROR : "needs a file name";
    }
    field->data = (u_char *) sws_pstrdup_cstr(sws_conf_pool(cf), &v);
    field->len = v.len;
    return field->data ? SWS_CONF_OK : SWS_CONF_ERROR;
}

char *
sws_ups_ssl_directive(sws_conf_t *cf, const sws_command_t *cmd, sws_http_upstream_conf_t *uc)
{
    sws_ups_ssl_conf_t *sc;
    sws_command_t       typed = *cmd;
    sws_str_t          *arg = sws_conf_arg(cf, 1);
    const char         *err;

    if (uc->ssl == NULL) {
        uc->ssl = sws_ups_ssl_conf_new(sws_conf_pool(cf));
        if (uc->ssl == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    sc = uc->ssl;

#define SWS_UPS_SSL_TYPED(field, setter) \
    typed.offset = offsetof(sws_ups_ssl_conf_t, field); \
    return setter(cf, &typed, sc)

    switch (cmd->offset) {
    case SWS_UPSTREAM_CONF_SSL_SERVER_NAME:
        SWS_UPS_SSL_TYPED(server_name, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_SSL_VERIFY:
        SWS_UPS_SSL_TYPED(verify, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_SSL_SESSION_REUSE:
        SWS_UPS_SSL_TYPED(session_reuse, sws_conf_set_flag_slot);
    case SWS_UPSTREAM_CONF_SSL_CIPHERS:
        SWS_UPS_SSL_TYPED(ciphers, sws_conf_set_str_slot);
    case SWS_UPSTREAM_CONF_SSL_VERIFY_DEPTH:
        if (sc->verify_depth != SWS_UNSET_UINT) {
            return "is duplicate";
        }
        sc->verify_depth = (sws_uint_t) sws_atoi(arg->data, arg->len);
        if ((sws_int_t) sc->verify_depth < 0 || sc->verify_depth > 100) {
            return "has an invalid value (0..100)";
        }
        return SWS_CONF_OK;
    case SWS_UPSTREAM_CONF_SSL_NAME:
        if (sc->name_fmt) {
            return "is duplicate";
        }
        sc->name_fmt = sws_http_format_compile(sws_conf_pool(cf), arg, SWS_HTTP_ESCAPE_NONE,
                                               &err);
        if (sc->name_fmt == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    case SWS_UPSTREAM_CONF_SSL_PROTOCOLS:
        return sws_ups_ssl_protocols(cf, sc);
    case SWS_UPSTREAM_CONF_SSL_TRUSTED_CERTIFICATE:
        return sws_ups_ssl_path(cf, &sc->trusted);
    case SWS_UPSTREAM_CONF_SSL_CERTIFICATE:
        return sws_ups_ssl_path(cf, &sc->certificate);
    case SWS_UPSTREAM_CONF_SSL_CERTIFICATE_KEY:
        return sws_ups_ssl_path(cf, &sc->certificate_key);
    case SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE:
        return sws_ups_ssl_path(cf, &sc->password_file);
    }
#undef SWS_UPS_SSL_TYPED
    return "is not an upstream TLS directive";
}

/* Unset fields of sc from prev (which may be NULL), then the defaults. */
static void
sws_ups_ssl_inherit(sws_ups_ssl_conf_t *sc, const sws_ups_ssl_conf_t *prev)
{
    static const sws_ups_ssl_conf_t  unset = {
        .server_name = SWS_UNSET, .verify = SWS_UNSET, .verify_depth = SWS_UNSET_UINT,
        .protocols = SWS_UNSET_UINT, .session_reuse = SWS_UNSET
    };

    if (prev == NULL) {
        prev = &unset;
    }
    sws_conf_merge_value(sc->server_name, prev->server_name, 0);
    sws_conf_merge_value(sc->verify, prev->verify, 0);
    sws_conf_merge_uint_value(sc->verify_depth, prev->verify_depth, 1);
    sws_conf_merge_uint_value(sc->protocols, prev->protocols,
                              SWS_SSL_TLSv1_2 | SWS_SSL_TLSv1_3);
    sws_conf_merge_value(sc->session_reuse, prev->session_reuse, 1);
    sws_conf_merge_str_value(sc->ciphers, prev->ciphers, "DEFAULT");
    if (sc->name_fmt == NULL) {
        sc->name_fmt = prev->name_fmt;
    }
    if (sc->trusted.data == NULL) {
        sc->trusted = prev->trusted;
    }
    if (sc->certificate.data == NULL && sc->certificate_key.data == NULL) {
        sc->certificate = prev->certificate;
        sc->certificate_key = prev->certificate_key;
    }
    if (sc->password_file.data == NULL) {
        sc->password_file = prev->password_file;
    }
}

/* The client context of sc's settings. */
static sws_int_t
sws_ups_ssl_create(sws_conf_t *cf, sws_ups_ssl_conf_t *sc)
{
    sws_pool_t *pool = sws_conf_pool(cf);
    sws_log_t  *log = sws_conf_log(cf);
    SSL_CTX    *ctx;
    sws_array_t *passwords = NULL;

    if (sc->verify && sc->trusted.data == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "TLS verification of upstream servers "
                           "(ssl_verify on) needs a trusted certificate file "
                           "(ssl_trusted_certificate)");
        return SWS_ERROR;
    }
    if ((sc->certificate.data == NULL) != (sc->certificate_key.data == NULL)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "an upstream client certificate needs "
                           "both ssl_certificate and ssl_certificate_key");
        return SWS_ERROR;
    }
    sc->ssl = sws_pcalloc(pool, sizeof(sws_ssl_t));
    if (sc->ssl == NULL || sws_ssl_create_client(sc->ssl, pool, log) != SWS_OK) {
        return SWS_ERROR;
    }
    ctx = sc->ssl->ctx;
    if (sws_ssl_protocols(sc->ssl, sc->protocols) != SWS_OK
        || sws_ssl_ciphers(sc->ssl, &sc->ciphers, 0) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (sc->certificate.data && sc->password_file.data) {
        passwords = sws_ssl_read_passwords(pool, log, (char *) sc->password_file.data);
        if (passwords == NULL) {
            return SWS_ERROR;
        }
    }
    if (sc->certificate.data
        && sws_ssl_certificate(sc->ssl, (char *) sc->certificate.data,
                               (char *) sc->certificate_key.data, passwords) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (sc->trusted.data
        && SSL_CTX_load_verify_locations(ctx, (char *) sc->trusted.data, NULL) != 1)
    {
        sws_ssl_error(SWS_LOG_EMERG, log, 0, "cannot load trusted certificates \"%s\"",
                      (char *) sc->trusted.data);
        return SWS_ERROR;
    }
    /* The verdict is the handshake's: without verification the handshake
     * goes on whatever the certificate. */
    SSL_CTX_set_verify(ctx, sc->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
    SSL_CTX_set_verify_depth(ctx, (int) sc->verify_depth);
    return sws_ups_ssl_sessions_init(sc);
}

sws_int_t
sws_ups_ssl_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf)
{
    if (conf->ssl == NULL) {
        if (prev->ssl == NULL) {
            /* Nothing set above: one set of defaults for the siblings. */
            prev->ssl = sws_ups_ssl_conf_new(sws_conf_pool(cf));
            if (prev->ssl == NULL) {
                return SWS_ERROR;
            }
            sws_ups_ssl_inherit(prev->ssl, NULL);
        }
        conf->ssl = prev->ssl;
    } else if (conf->ssl != prev->ssl) {
        sws_ups_ssl_inherit(conf->ssl, prev->ssl);
    }
    if (!conf->ssl->merged) {
        sws_ups_ssl_inherit(conf->ssl, NULL);      /* the defaults (a top level) */
        conf->ssl->merged = 1;
    }
    if (conf->ssl_wanted && conf->ssl->ssl == NULL
        && sws_ups_ssl_create(cf, conf->ssl) != SWS_OK)
    {
        return SWS_ERROR;
    }
    return sws_ups_ssl_probe_conf(cf, conf);
}

void
sws_http_upstream_conf_set_ssl(sws_http_upstream_conf_t *conf, int on)
{
    conf->ssl_wanted = on ? 1 : 0;
}
