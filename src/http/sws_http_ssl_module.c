/*
 * The "http_ssl" module: the ssl_* directives and, after the configuration
 * is read, one TLS context per server that listens with "ssl".
 */
#include "sws_http_ssl.h"

static void *sws_http_ssl_create_srv_conf(sws_conf_t *cf);
static char *sws_http_ssl_conf_command(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_ssl_merge_srv_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_http_ssl_postconfiguration(sws_conf_t *cf);
static sws_int_t sws_http_ssl_init_master(sws_cycle_t *cycle);
static sws_int_t sws_http_ssl_init_worker(sws_cycle_t *cycle);
static char *sws_http_ssl_protocols(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_ssl_session_cache(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_ssl_verify_client(sws_conf_t *cf, const sws_command_t *cmd,
    void *conf);
static char *sws_http_ssl_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_ssl_paths(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#define HTTP_MS  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF)
#define SSL_SLOT(name, args, set, field) \
    { name, HTTP_MS | (args), set, SWS_HTTP_SRV_CONF_OFFSET, \
      offsetof(sws_http_ssl_srv_conf_t, field), NULL }

static const sws_command_t sws_http_ssl_commands[] = {
    SSL_SLOT("ssl_certificate", SWS_CONF_TAKE1, sws_http_ssl_paths, certificates),
    SSL_SLOT("ssl_certificate_key", SWS_CONF_TAKE1, sws_http_ssl_paths, certificate_keys),
    SSL_SLOT("ssl_password_file", SWS_CONF_TAKE1, sws_http_ssl_file, password_file),
    SSL_SLOT("ssl_protocols", SWS_CONF_1MORE, sws_http_ssl_protocols, protocols),
    SSL_SLOT("ssl_ciphers", SWS_CONF_TAKE1, sws_conf_set_str_slot, ciphers),
    SSL_SLOT("ssl_prefer_server_ciphers", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             prefer_server_ciphers),
    SSL_SLOT("ssl_ecdh_curve", SWS_CONF_TAKE1, sws_conf_set_str_slot, ecdh_curve),
    SSL_SLOT("ssl_dhparam", SWS_CONF_TAKE1, sws_conf_set_path_slot, dhparam),
    SSL_SLOT("ssl_session_cache", SWS_CONF_TAKE12, sws_http_ssl_session_cache, session_cache),
    SSL_SLOT("ssl_session_timeout", SWS_CONF_TAKE1, sws_conf_set_sec_slot, session_timeout),
    SSL_SLOT("ssl_session_tickets", SWS_CONF_FLAG, sws_conf_set_flag_slot, session_tickets),
    SSL_SLOT("ssl_session_ticket_key", SWS_CONF_TAKE1, sws_conf_set_path_slot,
             session_ticket_key),
    SSL_SLOT("ssl_stapling", SWS_CONF_FLAG, sws_conf_set_flag_slot, stapling),
    SSL_SLOT("ssl_stapling_verify", SWS_CONF_FLAG, sws_conf_set_flag_slot, stapling_verify),
    SSL_SLOT("ssl_stapling_file", SWS_CONF_TAKE1, sws_conf_set_path_slot, stapling_file),
    SSL_SLOT("ssl_stapling_responder", SWS_CONF_TAKE1, sws_conf_set_str_slot,
             stapling_responder),
    SSL_SLOT("ssl_trusted_certificate", SWS_CONF_TAKE1, sws_http_ssl_file,
             trusted_certificate),
    SSL_SLOT("ssl_verify_client", SWS_CONF_TAKE1, sws_http_ssl_verify_client, verify),
    SSL_SLOT("ssl_client_certificate", SWS_CONF_TAKE1, sws_http_ssl_file,
             client_certificate),
    SSL_SLOT("ssl_verify_depth", SWS_CONF_TAKE1, sws_conf_set_num_slot, verify_depth),
    SSL_SLOT("ssl_crl", SWS_CONF_TAKE1, sws_http_ssl_file, crl),
    SSL_SLOT("ssl_early_data", SWS_CONF_FLAG, sws_conf_set_flag_slot, early_data),
    SSL_SLOT("ssl_ktls", SWS_CONF_FLAG, sws_conf_set_flag_slot, ktls),
    SSL_SLOT("ssl_buffer_size", SWS_CONF_TAKE1, sws_conf_set_size_slot, buffer_size),
    SSL_SLOT("ssl_conf_command", SWS_CONF_TAKE2, sws_http_ssl_conf_command, conf_commands),
    SSL_SLOT("ssl_handshake_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
             handshake_timeout),
    sws_null_command
};

sws_module_t sws_http_ssl_module = {
    SWS_MODULE_ABI, .name = "http_ssl", .commands = sws_http_ssl_commands,
    .create_srv_conf = sws_http_ssl_create_srv_conf,
    .merge_srv_conf = sws_http_ssl_merge_srv_conf,
    .postconfiguration = sws_http_ssl_postconfiguration,
    .init_master = sws_http_ssl_init_master,
    .init_worker = sws_http_ssl_init_worker,
};

static void *
sws_http_ssl_create_srv_conf(sws_conf_t *cf)
{
    sws_http_ssl_srv_conf_t *sscf;

    sscf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_ssl_srv_conf_t));
    if (sscf == NULL) {
        return NULL;
    }
    sscf->protocols = SWS_UNSET_UINT;
    sscf->prefer_server_ciphers = SWS_UNSET;
    sscf->session_cache = SWS_UNSET;
    sscf->session_timeout = (time_t) SWS_UNSET;
    sscf->session_tickets = SWS_UNSET;
    sscf->stapling = SWS_UNSET;
    sscf->stapling_verify = SWS_UNSET;
    sscf->early_data = SWS_UNSET;
    sscf->verify = SWS_UNSET_UINT;
    sscf->verify_depth = SWS_UNSET;
    sscf->ktls = SWS_UNSET;
    sscf->buffer_size = SWS_UNSET_SIZE;
    sscf->handshake_timeout = SWS_UNSET_MSEC;
    sscf->file = sws_conf_file(cf);
    sscf->line = sws_conf_line(cf);
    return sscf;
}

static char *
sws_http_ssl_merge_srv_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_ssl_srv_conf_t *prev = parent, *conf = child;

    (void) cf;

    if (conf->certificates == NULL) {
        conf->certificates = prev->certificates;
        if (conf->certificate_keys == NULL) {
            conf->certificate_keys = prev->certificate_keys;
        }
    }
    if (conf->password_file.name.data == NULL) {
        conf->password_file = prev->password_file;
    }
    sws_conf_merge_uint_value(conf->protocols, prev->protocols,
                              SWS_SSL_TLSv1_2 | SWS_SSL_TLSv1_3);
    sws_conf_merge_str_value(conf->ciphers, prev->ciphers, "HIGH:!aNULL:!MD5");
    sws_conf_merge_value(conf->prefer_server_ciphers, prev->prefer_server_ciphers, 0);
    sws_conf_merge_str_value(conf->ecdh_curve, prev->ecdh_curve, "auto");
    if (conf->conf_commands == NULL) {
        conf->conf_commands = prev->conf_commands;
        conf->conf_commands_file = prev->conf_commands_file;
        conf->conf_commands_line = prev->conf_commands_line;
    }
    if (conf->session_cache == SWS_UNSET) {
        conf->session_cache = prev->session_cache == SWS_UNSET ? SWS_HTTP_SSL_CACHE_NONE
                                                               : prev->session_cache;
        conf->builtin_size = prev->builtin_size;
        conf->shm_zone = prev->shm_zone;
    }
    if (conf->session_timeout == (time_t) SWS_UNSET) {
        conf->session_timeout = prev->session_timeout == (time_t) SWS_UNSET
                                ? 300 : prev->session_timeout;
    }
    sws_conf_merge_value(conf->session_tickets, prev->session_tickets, 1);
    if (conf->session_ticket_key.data == NULL) {
        conf->session_ticket_key = prev->session_ticket_key;
    }
    sws_conf_merge_value(conf->stapling, prev->stapling, 0);
    sws_conf_merge_value(conf->stapling_verify, prev->stapling_verify, 0);
    if (conf->stapling_file.data == NULL) {
        conf->stapling_file = prev->stapling_file;
    }
    if (conf->stapling_responder.data == NULL) {
        conf->stapling_responder = prev->stapling_responder;
    }
    if (conf->dhparam.data == NULL) {
        conf->dhparam = prev->dhparam;
    }
    if (conf->trusted_certificate.name.data == NULL) {
        conf->trusted_certificate = prev->trusted_certificate;
    }
    if (conf->verify == SWS_UNSET_UINT) {
        conf->verify = prev->verify == SWS_UNSET_UINT ? SWS_HTTP_SSL_VERIFY_OFF : prev->verify;
        conf->verify_file = prev->verify_file;
        conf->verify_line = prev->verify_line;
    }
    sws_conf_merge_value(conf->verify_depth, prev->verify_depth, 1);
    if (conf->client_certificate.name.data == NULL) {
        conf->client_certificate = prev->client_certificate;
    }
    if (conf->crl.name.data == NULL) {
        conf->crl = prev->crl;
    }
    sws_conf_merge_value(conf->early_data, prev->early_data, 0);
    sws_conf_merge_value(conf->ktls, prev->ktls, 0);
    sws_conf_merge_size_value(conf->buffer_size, prev->buffer_size, 16384);
    sws_conf_merge_msec_value(conf->handshake_timeout, prev->handshake_timeout, 60000);

    if (conf->buffer_size < 1024 || conf->buffer_size > 16384) {
        return "ssl_buffer_size must be between 1k and 16k";
    }
    if (conf->session_timeout <= 0) {
        return "ssl_session_timeout must be positive";
    }
    return SWS_CONF_OK;
}

/* ssl_verify_client on | off | optional | optional_no_ca */
static char *
sws_http_ssl_verify_client(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_conf_enum_t  modes[] = {
        { sws_string("off"), SWS_HTTP_SSL_VERIFY_OFF },
        { sws_string("on"), SWS_HTTP_SSL_VERIFY_ON },
        { sws_string("optional"), SWS_HTTP_SSL_VERIFY_OPTIONAL },
        { sws_string("optional_no_ca"), SWS_HTTP_SSL_VERIFY_OPTIONAL_NO_CA },
        { sws_null_string, 0 }
    };
    sws_http_ssl_srv_conf_t *sscf = conf;
    sws_command_t            typed = *cmd;

    typed.post = modes;
    sscf->verify_file = sws_conf_file(cf);
    sscf->verify_line = sws_conf_line(cf);
    return sws_conf_set_enum_slot(cf, &typed, conf);
}

/* ssl_client_certificate, ssl_trusted_certificate, ssl_crl: a file
 * relative to the configuration's directory, as nginx's. */
static char *
sws_http_ssl_file(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_ssl_file_t *f = (sws_http_ssl_file_t *) ((char *) conf + cmd->offset);
    sws_str_t            name = *sws_conf_arg(cf, 1);

    if (f->name.data != NULL) {
        return "is duplicate";
    }
    if (name.len == 0 || sws_conf_full_name(cf, &name, 1) != SWS_OK) {
        return name.len ? SWS_CONF_ERROR : "needs a file name";
    }
    f->name = name;                       /* NUL-terminated */
    f->file = sws_conf_file(cf);
    f->line = sws_conf_line(cf);
    return SWS_CONF_OK;
}

/* ssl_certificate / ssl_certificate_key: repeatable (an RSA and an ECDSA
 * pair); paths relative to the configuration's directory. */
static char *
sws_http_ssl_paths(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_array_t **field = (sws_array_t **) ((char *) conf + cmd->offset);
    sws_str_t    *s;

    if (*field == NULL) {
        *field = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_str_t));
        if (*field == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    s = sws_array_push(*field);
    if (s == NULL) {
        return SWS_CONF_ERROR;
    }
    *s = *sws_conf_arg(cf, 1);
    if (sws_conf_full_name(cf, s, 1) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
sws_http_ssl_protocols(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_ssl_srv_conf_t *sscf = conf;

    (void) cmd;
    return sws_ssl_conf_protocols(cf, &sscf->protocols);
}

/* ssl_session_cache off | none | [builtin[:size]] [shared:name:size] */
static char *
sws_http_ssl_session_cache(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_ssl_srv_conf_t *sscf = conf;
    sws_str_t               *arg, name, size;
    sws_uint_t               i;
    u_char                  *colon;
    ssize_t                  n;

    (void) cmd;

    if (sscf->session_cache != SWS_UNSET) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_str_eq_cstr(arg, "off")) {
            sscf->session_cache = SWS_HTTP_SSL_CACHE_OFF;
        } else if (sws_str_eq_cstr(arg, "none")) {
            sscf->session_cache = SWS_HTTP_SSL_CACHE_NONE;
        } else if (sws_str_eq_cstr(arg, "builtin")) {
            sscf->session_cache = SWS_HTTP_SSL_CACHE_BUILTIN;
            sscf->builtin_size = 0;
        } else if (arg->len > 8 && memcmp(arg->data, "builtin:", 8) == 0) {
            sscf->builtin_size = sws_atoi(arg->data + 8, arg->len - 8);
            if (sscf->builtin_size <= 0) {
                goto invalid;
            }
            if (sscf->session_cache != SWS_HTTP_SSL_CACHE_SHARED) {
                sscf->session_cache = SWS_HTTP_SSL_CACHE_BUILTIN;
            }
        } else if (arg->len > 7 && memcmp(arg->data, "shared:", 7) == 0) {
            name.data = arg->data + 7;
            colon = memchr(name.data, ':', arg->len - 7);
            if (colon == NULL || colon == name.data) {
                goto invalid;
            }
            name.len = colon - name.data;
            size.data = colon + 1;
            size.len = arg->data + arg->len - size.data;
            n = sws_parse_size(&size);
            if (n < 8192) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "session cache \"%.*s\" is too "
                                   "small (at least 8k)", (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            sscf->shm_zone = sws_ssl_session_cache_zone(cf, &name, (size_t) n);
            if (sscf->shm_zone == NULL) {
                return SWS_CONF_ERROR;
            }
            sscf->session_cache = SWS_HTTP_SSL_CACHE_SHARED;
        } else {
            goto invalid;
        }
        if (sws_conf_nargs(cf) > 2 && sscf->session_cache <= SWS_HTTP_SSL_CACHE_NONE) {
            goto invalid;
        }
    }
    return SWS_CONF_OK;

invalid:
    arg = sws_conf_arg(cf, i);
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid session cache \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

/* ---- the contexts ---- */

/* "ssl_crl of the server in FILE:LINE" style words for the log. */
static const char *
sws_http_ssl_where(sws_pool_t *pool, const char *directive, const sws_http_ssl_file_t *f)
{
    u_char     buf[1024];
    sws_str_t  s;

    s.data = buf;
    s.len = (size_t) (sws_slprintf(buf, buf + sizeof(buf), "%s (in %s:%lu)", directive,
                                   f->file ? f->file : "?", (unsigned long) f->line) - buf);
    return sws_pstrdup_cstr(pool, &s);
}

/* Client certificates: asked for (ssl_verify_client), verified against
 * ssl_client_certificate (named to clients) and ssl_trusted_certificate
 * (not named), checked against ssl_crl, as nginx does. */
static sws_int_t
sws_http_ssl_client_verification(sws_pool_t *pool, sws_log_t *log,
    sws_http_ssl_srv_conf_t *sscf)
{
    sws_ssl_t *ssl = sscf->ssl;

    if (sscf->verify != SWS_HTTP_SSL_VERIFY_OFF) {
        if (sscf->client_certificate.name.len == 0
            && sscf->verify != SWS_HTTP_SSL_VERIFY_OPTIONAL_NO_CA)
        {
            sws_log_error(SWS_LOG_EMERG, log, 0, "no ssl_client_certificate for "
                          "ssl_verify_client in %s:%lu", sscf->verify_file,
                          (unsigned long) sscf->verify_line);
            return SWS_ERROR;
        }
        sws_ssl_verify_peer(ssl, (sws_uint_t) sscf->verify_depth);
        if (sscf->client_certificate.name.len
            && sws_ssl_verify_locations(ssl, (char *) sscf->client_certificate.name.data, 1,
                   sws_http_ssl_where(pool, "ssl_client_certificate",
                                      &sscf->client_certificate)) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    if (sscf->trusted_certificate.name.len) {
        SSL_CTX_set_verify_depth(ssl->ctx, (int) sscf->verify_depth);
        if (sws_ssl_verify_locations(ssl, (char *) sscf->trusted_certificate.name.data, 0,
                sws_http_ssl_where(pool, "ssl_trusted_certificate",
                                   &sscf->trusted_certificate)) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    if (sscf->crl.name.len
        && sws_ssl_crl(ssl, (char *) sscf->crl.name.data,
                       sws_http_ssl_where(pool, "ssl_crl", &sscf->crl)) != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static sws_int_t
sws_http_ssl_context(sws_conf_t *cf, sws_http_core_srv_conf_t *cscf,
    sws_http_ssl_srv_conf_t *sscf)
{
    sws_pool_t *pool = sws_conf_pool(cf);
    sws_log_t  *log = sws_conf_log(cf);
    sws_str_t  *certs, *keys, *names;
    sws_array_t *passwords = NULL;
    sws_uint_t  i;
    u_char      idbuf[4096], *p = idbuf, *last = idbuf + sizeof(idbuf);

    if (sscf->certificates == NULL || sscf->certificates->nelts == 0) {
        sws_log_error(SWS_LOG_EMERG, log, 0, "no \"ssl_certificate\" is defined for the "
                      "server in %s:%lu that listens with \"ssl\"", cscf->file,
                      (unsigned long) cscf->line);
        return SWS_ERROR;
    }
    if (sscf->certificate_keys == NULL
        || sscf->certificate_keys->nelts < sscf->certificates->nelts)
    {
        sws_log_error(SWS_LOG_EMERG, log, 0, "no \"ssl_certificate_key\" is defined for "
                      "every certificate of the server in %s:%lu", cscf->file,
                      (unsigned long) cscf->line);
        return SWS_ERROR;
    }

    sscf->ssl = sws_pcalloc(pool, sizeof(sws_ssl_t));
    if (sscf->ssl == NULL || sws_ssl_create(sscf->ssl, pool, log) != SWS_OK) {
        return SWS_ERROR;
    }
    if (sscf->password_file.name.len) {
        passwords = sws_ssl_read_passwords(pool, log, (char *) sscf->password_file.name.data);
        if (passwords == NULL) {
            sws_log_error(SWS_LOG_EMERG, log, 0, "ssl_password_file in %s:%lu",
                          sscf->password_file.file, (unsigned long) sscf->password_file.line);
            return SWS_ERROR;
        }
    }
    certs = sscf->certificates->elts;
    keys = sscf->certificate_keys->elts;
    for (i = 0; i < sscf->certificates->nelts; i++) {
        if (sws_ssl_certificate(sscf->ssl, (char *) certs[i].data, (char *) keys[i].data,
                                passwords) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    sscf->ssl->buffer_size = sscf->buffer_size;

    if (sws_ssl_protocols(sscf->ssl, sscf->protocols) != SWS_OK
        || sws_ssl_ciphers(sscf->ssl, &sscf->ciphers, (int) sscf->prefer_server_ciphers)
           != SWS_OK
        || sws_ssl_ecdh_curve(sscf->ssl, &sscf->ecdh_curve) != SWS_OK
        || sws_ssl_dhparam(sscf->ssl, &sscf->dhparam) != SWS_OK)
    {
        return SWS_ERROR;
    }

    if (sws_http_ssl_client_verification(pool, log, sscf) != SWS_OK) {
        return SWS_ERROR;
    }

    /* Sessions resume only on the server (certificates and names) that
     * made them, and with the client certificate checked as it was. */
    names = cscf->server_names.elts;
    p = sws_slprintf(idbuf, last, "verify=%lu:%ld\n", (unsigned long) sscf->verify,
                     (long) sscf->verify_depth);
    for (i = 0; i < cscf->server_names.nelts; i++) {
        p = sws_slprintf(p, last, "%.*s\n", (int) names[i].len, names[i].data);
    }
    if (sws_ssl_session_id_context(sscf->ssl, idbuf, p - idbuf) != SWS_OK) {
        return SWS_ERROR;
    }
    if (sws_ssl_session_cache(sscf->ssl,
                              sscf->session_cache == SWS_HTTP_SSL_CACHE_SHARED
                              ? sscf->shm_zone : NULL,
                              sscf->session_cache == SWS_HTTP_SSL_CACHE_BUILTIN
                              ? (int) (sscf->builtin_size ? sscf->builtin_size : -1) : 0,
                              sscf->session_timeout) != SWS_OK
        || sws_ssl_session_tickets(sscf->ssl, (int) sscf->session_tickets,
                                   &sscf->session_ticket_key, sscf->session_timeout)
           != SWS_OK)
    {
        return SWS_ERROR;
    }
    /* Early data: each ticket once, whichever worker sees it. */
    if (sscf->early_data
        && sws_ssl_early_data(sscf->ssl, 16384, sws_ssl_early_data_zone(cf)) != SWS_OK)
    {
        return SWS_ERROR;
    }
    sws_ssl_ktls(sscf->ssl, (int) sscf->ktls);

    if (sscf->stapling
        && sws_ssl_stapling(cf, sscf->ssl, &sscf->stapling_file, &sscf->stapling_responder,
                            &sscf->trusted_certificate.name, (int) sscf->stapling_verify)
           != SWS_OK)
    {
        return SWS_ERROR;
    }

    /* Last, as nginx: OpenSSL's own settings override the directives'. */
    if (sscf->conf_commands
        && sws_ssl_conf_commands(sscf->ssl, sscf->conf_commands->elts,
                                 sscf->conf_commands->nelts / 2) != SWS_OK)
    {
        sws_log_error(SWS_LOG_EMERG, log, 0, "ssl_conf_command in %s:%lu",
                      sscf->conf_commands_file, (unsigned long) sscf->conf_commands_line);
        return SWS_ERROR;
    }

    SSL_CTX_set_client_hello_cb(sscf->ssl->ctx, sws_http_ssl_client_hello, NULL);
    SSL_CTX_set_tlsext_servername_callback(sscf->ssl->ctx, sws_http_ssl_servername);
    SSL_CTX_set_alpn_select_cb(sscf->ssl->ctx, sws_http_ssl_alpn_select, NULL);
    return SWS_OK;
}

static sws_int_t
sws_http_ssl_postconfiguration(sws_conf_t *cf)
{
    sws_http_core_main_conf_t  *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_core_srv_conf_t  **servers, *cscf;
    sws_http_ssl_srv_conf_t    *sscf;
    sws_http_listen_t          *lsn;
    sws_uint_t                  s, l;
    int                         ssl;

    if (cmcf == NULL) {
        return SWS_OK;
    }
    servers = cmcf->servers.elts;
    for (s = 0; s < cmcf->servers.nelts; s++) {
        cscf = servers[s];
        sscf = cscf->ctx->srv_conf[sws_http_ssl_module.index];
        lsn = cscf->listens.elts;
        ssl = 0;
        for (l = 0; l < cscf->listens.nelts; l++) {
            ssl |= lsn[l].ssl;
        }
        /* A server with certificates but no "listen ... ssl" of its own
         * may still be chosen by SNI on an address another server made
         * ssl: it gets a context too. */
        if (!ssl && (sscf->certificates == NULL || sscf->certificates->nelts == 0)) {
            continue;
        }
        if (sws_http_ssl_context(cf, cscf, sscf) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_http_ssl_init_master(sws_cycle_t *cycle)
{
    sws_ssl_ktls_report(cycle->log);
    return SWS_OK;
}

static sws_int_t
sws_http_ssl_init_worker(sws_cycle_t *cycle)
{
    return sws_ssl_stapling_init_worker(cycle);
}

/* ssl_conf_command NAME VALUE: an OpenSSL configuration command
 * (SSL_CONF_cmd), repeatable; applied when the context is made. */
static char *
sws_http_ssl_conf_command(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_ssl_srv_conf_t *sscf = conf;
    sws_str_t               *pair;

    (void) cmd;
    if (sscf->conf_commands == NULL) {
        sscf->conf_commands = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t));
        if (sscf->conf_commands == NULL) {
            return SWS_CONF_ERROR;
        }
        sscf->conf_commands_file = sws_conf_file(cf);
        sscf->conf_commands_line = sws_conf_line(cf);
    }
    pair = sws_array_push_n(sscf->conf_commands, 2);
    if (pair == NULL) {
        return SWS_CONF_ERROR;
    }
    pair[0] = *sws_conf_arg(cf, 1);
    pair[1] = *sws_conf_arg(cf, 2);
    return SWS_CONF_OK;
}
