/*
 * TLS contexts over OpenSSL 3: the library's set-up, contexts with
 * ScalWS's defaults, certificates, protocols, ciphers, curves, early data,
 * kernel TLS and the SNI switch. Nothing here touches a socket, so that a
 * QUIC stack can use the same contexts; the TLS connections over TCP are
 * sws_ssl_io.c.
 */
#include <stdio.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/pem.h>
#include "sws_ssl.h"

#ifndef TCP_ULP
#define TCP_ULP  31
#endif

static int sws_ssl_inited;
/* Some context of this process takes early data: connections then start
 * with SSL_read_early_data (SNI may move them to that context). */
int sws_ssl_early_any;

sws_int_t
sws_ssl_init(sws_log_t *log)
{
    if (sws_ssl_inited) {
        return SWS_OK;
    }
    if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL) == 0) {
        sws_ssl_error(SWS_LOG_EMERG, log, 0, "OPENSSL_init_ssl() failed");
        return SWS_ERROR;
    }
    sws_ssl_inited = 1;
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

/* OpenSSL asks for the passphrase of an encrypted key: the one being
 * tried, or none (never a prompt on the terminal). */
static int
sws_ssl_password_callback(char *buf, int size, int rwflag, void *userdata)
{
    const sws_str_t *pwd = userdata;

    (void) rwflag;
    if (pwd == NULL || pwd->len > (size_t) size) {
        return 0;
    }
    memcpy(buf, pwd->data, pwd->len);
    return (int) pwd->len;
}

sws_int_t
sws_ssl_certificate(sws_ssl_t *ssl, const char *cert, const char *key,
    const sws_array_t *passwords)
{
    const sws_str_t *pwd = passwords ? passwords->elts : NULL;
    sws_uint_t       i, n = passwords ? passwords->nelts : 0;
    int              ok;

    if (SSL_CTX_use_certificate_chain_file(ssl->ctx, cert) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "cannot load certificate \"%s\": "
                      "SSL_CTX_use_certificate_chain_file() failed", cert);
        return SWS_ERROR;
    }
    /* Each passphrase in turn (ssl_password_file), as nginx does. */
    SSL_CTX_set_default_passwd_cb(ssl->ctx, sws_ssl_password_callback);
    i = 0;
    do {
        SSL_CTX_set_default_passwd_cb_userdata(ssl->ctx, n ? (void *) &pwd[i] : NULL);
        ok = SSL_CTX_use_PrivateKey_file(ssl->ctx, key, SSL_FILETYPE_PEM) == 1;
        if (!ok && i + 1 < n) {
            ERR_clear_error();
        }
    } while (!ok && ++i < n);
    SSL_CTX_set_default_passwd_cb_userdata(ssl->ctx, NULL);
    if (!ok) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "cannot load certificate key \"%s\": "
                      "SSL_CTX_use_PrivateKey_file() failed%s", key,
                      n ? " with every passphrase of the password file" : "");
        return SWS_ERROR;
    }
    if (SSL_CTX_check_private_key(ssl->ctx) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0,
                      "certificate \"%s\" and key \"%s\" do not match", cert, key);
        return SWS_ERROR;
    }
    return SWS_OK;
}

sws_array_t *
sws_ssl_read_passwords(sws_pool_t *pool, sws_log_t *log, const char *file)
{
    sws_array_t *list;
    sws_str_t   *pwd;
    u_char       buf[4096], *p, *end, *eol;
    size_t       len;
    FILE        *f;

    f = fopen(file, "r");
    if (f == NULL) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "cannot open password file \"%s\"", file);
        return NULL;
    }
    len = fread(buf, 1, sizeof(buf), f);
    if (ferror(f) || !feof(f)) {
        sws_log_error(SWS_LOG_EMERG, log, 0, "cannot read password file \"%s\" (at most "
                      "%zu bytes)", file, sizeof(buf) - 1);
        fclose(f);
        return NULL;
    }
    fclose(f);
    list = sws_array_create(pool, 4, sizeof(sws_str_t));
    if (list == NULL) {
        return NULL;
    }
    /* one passphrase a line (CRLF or LF); empty lines are none */
    for (p = buf, end = buf + len; p < end; p = eol + 1) {
        eol = memchr(p, '\n', (size_t) (end - p));
        if (eol == NULL) {
            eol = end;
        }
        len = (size_t) (eol - p);
        if (len && p[len - 1] == '\r') {
            len--;
        }
        if (len == 0) {
            continue;
        }
        pwd = sws_array_push(list);
        if (pwd == NULL) {
            return NULL;
        }
        pwd->data = sws_pnalloc(pool, len);
        if (pwd->data == NULL) {
            return NULL;
        }
        memcpy(pwd->data, p, len);
        pwd->len = len;
    }
    OPENSSL_cleanse(buf, sizeof(buf));
    if (list->nelts == 0) {
        sws_log_error(SWS_LOG_EMERG, log, 0, "no passphrase in password file \"%s\"", file);
        return NULL;
    }
    return list;
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

/* ssl_conf_command: n (name, value) pairs given to OpenSSL's SSL_CONF_cmd
 * as a server's configuration file would give them. */
sws_int_t
sws_ssl_conf_commands(sws_ssl_t *ssl, const sws_str_t *pairs, sws_uint_t n)
{
    SSL_CONF_CTX *cctx = SSL_CONF_CTX_new();
    sws_uint_t    i;
    char          name[128], value[1024];
    sws_int_t     rc = SWS_OK;

    if (cctx == NULL) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CONF_CTX_new() failed");
        return SWS_ERROR;
    }
    SSL_CONF_CTX_set_flags(cctx, SSL_CONF_FLAG_FILE | SSL_CONF_FLAG_SERVER
                                 | SSL_CONF_FLAG_CERTIFICATE | SSL_CONF_FLAG_SHOW_ERRORS);
    SSL_CONF_CTX_set_ssl_ctx(cctx, ssl->ctx);
    for (i = 0; i < n && rc == SWS_OK; i++) {
        const sws_str_t *k = &pairs[2 * i], *v = &pairs[2 * i + 1];

        if (k->len >= sizeof(name) || v->len >= sizeof(value)) {
            sws_log_error(SWS_LOG_EMERG, ssl->log, 0, "ssl_conf_command \"%.*s\" is too long",
                          (int) sws_min(k->len, 64), k->data);
            rc = SWS_ERROR;
            break;
        }
        memcpy(name, k->data, k->len);
        name[k->len] = '\0';
        memcpy(value, v->data, v->len);
        value[v->len] = '\0';
        if (SSL_CONF_cmd(cctx, name, value) <= 0) {
            sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CONF_cmd(\"%s\", \"%s\") failed",
                          name, value);
            rc = SWS_ERROR;
        }
    }
    if (rc == SWS_OK && SSL_CONF_CTX_finish(cctx) != 1) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CONF_finish() failed");
        rc = SWS_ERROR;
    }
    SSL_CONF_CTX_free(cctx);
    return rc;
}

/* ssl_dhparam FILE: the DH parameters (PEM) of the DHE ciphers of TLS 1.2;
 * without it they are not offered, as in nginx. */
sws_int_t
sws_ssl_dhparam(sws_ssl_t *ssl, const sws_str_t *file)
{
    EVP_PKEY  *dh = NULL;
    BIO       *bio;

    if (file->len == 0) {
        return SWS_OK;
    }
    bio = BIO_new_file((char *) file->data, "r");
    if (bio == NULL) {
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "BIO_new_file(\"%s\") failed",
                      (char *) file->data);
        return SWS_ERROR;
    }
    dh = PEM_read_bio_Parameters(bio, NULL);
    BIO_free(bio);
    if (dh == NULL || EVP_PKEY_base_id(dh) != EVP_PKEY_DH) {
        EVP_PKEY_free(dh);
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "ssl_dhparam \"%s\": no DH parameters "
                      "in it", (char *) file->data);
        return SWS_ERROR;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ssl->ctx, dh) != 1) {      /* takes dh */
        EVP_PKEY_free(dh);
        sws_ssl_error(SWS_LOG_EMERG, ssl->log, 0, "SSL_CTX_set0_tmp_dh_pkey(\"%s\") failed",
                      (char *) file->data);
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
    sws_ssl_verify_switch(s, to->ctx);
    SSL_set_max_early_data(s, SSL_CTX_get_max_early_data(to->ctx));
    SSL_set_recv_max_early_data(s, SSL_CTX_get_recv_max_early_data(to->ctx));
    return SWS_OK;
}
