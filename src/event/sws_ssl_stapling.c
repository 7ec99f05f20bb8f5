/*
 * OCSP stapling. Each certificate of a context gets a staple: an OCSP
 * response sent to clients that ask for one (status_request). The response
 * comes from a file (ssl_stapling_file, DER, as made by "openssl ocsp
 * -respout"), or each worker fetches it from the responder (the
 * certificate's AIA URL or ssl_stapling_responder) over plain HTTP/1.0,
 * through its event loop, and refreshes it before it goes stale. A
 * response that does not verify or has expired is not stapled.
 */
#define _GNU_SOURCE 1
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>
#include "sws_ssl.h"

#define SWS_OCSP_TIMEOUT     10000          /* ms, one fetch */
#define SWS_OCSP_RETRY       (300 * 1000)   /* after a failed fetch */
#define SWS_OCSP_REFRESH     (3600 * 1000)  /* at most this long between fetches */
#define SWS_OCSP_MAX         (64 * 1024)    /* response size */

typedef struct {
    sws_queue_t         queue;              /* every staple of the process */
    sws_cycle_t        *cycle;
    sws_log_t          *log;
    X509               *cert;
    X509               *issuer;
    STACK_OF(X509)     *chain;
    X509_STORE         *store;              /* to verify responses */
    OCSP_CERTID        *id;
    u_char             *resp;               /* DER, OPENSSL_malloc'd */
    size_t              len;
    time_t              valid;              /* nextUpdate (0: none given) */
    unsigned            verify:1;
    unsigned            from_file:1;

    /* fetching */
    sws_str_t           host;               /* for the Host header */
    sws_str_t           path;
    struct sockaddr_storage addr;
    socklen_t           socklen;
    sws_event_t         timer;
    sws_connection_t   *conn;
    u_char             *buf;                /* request, then response */
    size_t              buf_len, buf_pos;
    unsigned            reading:1;          /* the request is sent */
} sws_ssl_staple_t;

static sws_queue_t  sws_ssl_staples = { &sws_ssl_staples, &sws_ssl_staples };
static int          sws_ssl_staples_index = -1;

static void sws_ssl_ocsp_start(sws_event_t *ev);
static void sws_ssl_ocsp_done(sws_ssl_staple_t *st, int ok);

static void
sws_ssl_staple_cleanup(void *data)
{
    sws_ssl_staple_t *st = data;

    sws_queue_remove(&st->queue);
    X509_free(st->cert);
    X509_free(st->issuer);
    X509_STORE_free(st->store);
    OCSP_CERTID_free(st->id);
    OPENSSL_free(st->resp);
}

/* ---- the status request callback ---- */

static int
sws_ssl_status_cb(SSL *ssl, void *arg)
{
    X509             *cert = SSL_get_certificate(ssl);
    sws_array_t      *staples = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl),
                                                    sws_ssl_staples_index);
    sws_ssl_staple_t **st;
    sws_uint_t        i;
    u_char           *p;

    (void) arg;

    if (staples == NULL || cert == NULL) {
        return SSL_TLSEXT_ERR_NOACK;
    }
    st = staples->elts;
    for (i = 0; i < staples->nelts; i++) {
        if (st[i]->cert != cert) {
            continue;
        }
        if (st[i]->resp == NULL || (st[i]->valid && st[i]->valid < sws_time_sec())) {
            return SSL_TLSEXT_ERR_NOACK;
        }
        /* OpenSSL frees what it is given. */
        p = OPENSSL_memdup(st[i]->resp, st[i]->len);
        if (p == NULL) {
            return SSL_TLSEXT_ERR_NOACK;
        }
        SSL_set_tlsext_status_ocsp_resp(ssl, p, (long) st[i]->len);
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/* ---- checking a response ---- */

/* Accept resp for st: successful, for st's certificate, good, current,
 * and (if asked) signed by someone we trust. */
static sws_int_t
sws_ssl_ocsp_check(sws_ssl_staple_t *st, const u_char *der, size_t len, int verify)
{
    const u_char          *p = der;
    OCSP_RESPONSE         *resp;
    OCSP_BASICRESP        *basic = NULL;
    ASN1_GENERALIZEDTIME  *thisupd, *nextupd;
    int                    status, reason;
    sws_int_t              rc = SWS_ERROR;
    struct tm              tm;

    resp = d2i_OCSP_RESPONSE(NULL, &p, (long) len);
    if (resp == NULL) {
        sws_ssl_error(SWS_LOG_ERR, st->log, 0, "OCSP response cannot be parsed");
        return SWS_ERROR;
    }
    status = OCSP_response_status(resp);
    if (status != OCSP_RESPONSE_STATUS_SUCCESSFUL) {
        sws_log_error(SWS_LOG_ERR, st->log, 0, "OCSP response not successful (%d: %s)",
                      status, OCSP_response_status_str(status));
        goto done;
    }
    basic = OCSP_response_get1_basic(resp);
    if (basic == NULL) {
        sws_ssl_error(SWS_LOG_ERR, st->log, 0, "OCSP response has no basic response");
        goto done;
    }
    if (verify && OCSP_basic_verify(basic, st->chain, st->store, 0) != 1) {
        sws_ssl_error(SWS_LOG_ERR, st->log, 0, "OCSP response does not verify");
        goto done;
    }
    if (st->id == NULL) {
        rc = SWS_OK;            /* issuer unknown: taken as it is (a file) */
        st->valid = 0;
        goto done;
    }
    if (OCSP_resp_find_status(basic, st->id, &status, &reason, NULL, &thisupd, &nextupd)
        != 1)
    {
        sws_log_error(SWS_LOG_ERR, st->log, 0,
                      "OCSP response is not for this certificate");
        goto done;
    }
    if (status != V_OCSP_CERTSTATUS_GOOD) {
        sws_log_error(SWS_LOG_ERR, st->log, 0, "OCSP response says the certificate is %s",
                      OCSP_cert_status_str(status));
        goto done;
    }
    if (OCSP_check_validity(thisupd, nextupd, 300, -1) != 1) {
        sws_ssl_error(SWS_LOG_ERR, st->log, 0, "OCSP response is not current");
        goto done;
    }
    st->valid = 0;
    if (nextupd && ASN1_TIME_to_tm(nextupd, &tm) == 1) {
        st->valid = timegm(&tm);
    }
    rc = SWS_OK;

done:
    OCSP_BASICRESP_free(basic);
    OCSP_RESPONSE_free(resp);
    return rc;
}

static sws_int_t
sws_ssl_staple_set(sws_ssl_staple_t *st, const u_char *der, size_t len)
{
    u_char *copy = OPENSSL_memdup(der, len);

    if (copy == NULL) {
        return SWS_ERROR;
    }
    OPENSSL_free(st->resp);
    st->resp = copy;
    st->len = len;
    return SWS_OK;
}

/* ---- configuration ---- */

static X509 *
sws_ssl_find_issuer(sws_ssl_staple_t *st)
{
    X509_STORE_CTX *sctx;
    X509           *issuer = NULL;
    int             i;

    for (i = 0; i < sk_X509_num(st->chain); i++) {
        X509 *c = sk_X509_value(st->chain, i);
        if (X509_check_issued(c, st->cert) == X509_V_OK) {
            X509_up_ref(c);
            return c;
        }
    }
    sctx = X509_STORE_CTX_new();
    if (sctx && X509_STORE_CTX_init(sctx, st->store, NULL, NULL) == 1) {
        if (X509_STORE_CTX_get1_issuer(&issuer, sctx, st->cert) != 1) {
            issuer = NULL;
        }
    }
    X509_STORE_CTX_free(sctx);
    return issuer;
}

static sws_int_t
sws_ssl_responder_addr(sws_conf_t *cf, sws_ssl_staple_t *st, const char *url)
{
    char            *host = NULL, *port = NULL, *path = NULL;
    int              use_ssl = 0;
    struct addrinfo  hints, *res = NULL;
    sws_pool_t      *pool = sws_conf_pool(cf);
    sws_int_t        rc = SWS_ERROR;
    size_t           n;

    if (OCSP_parse_url(url, &host, &port, &path, &use_ssl) != 1) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid OCSP responder URL \"%s\"", url);
        goto done;
    }
    if (use_ssl) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "OCSP responder \"%s\": https is not "
                           "supported", url);
        goto done;
    }
    /* Resolved once, here (the configuration is read before any event
     * loop runs); a responder that moves needs a reload. */
    sws_memzero(&hints, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0 || res == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "OCSP responder host \"%s\" not found", host);
        goto done;
    }
    memcpy(&st->addr, res->ai_addr, res->ai_addrlen);
    st->socklen = res->ai_addrlen;
    n = strlen(host) + strlen(port) + 2;
    st->host.data = sws_pnalloc(pool, n);
    st->path.len = strlen(path);
    st->path.data = sws_pnalloc(pool, st->path.len + 1);
    if (st->host.data == NULL || st->path.data == NULL) {
        goto done;
    }
    st->host.len = (size_t) snprintf((char *) st->host.data, n, "%s%s%s", host,
                                     strcmp(port, "80") ? ":" : "",
                                     strcmp(port, "80") ? port : "");
    memcpy(st->path.data, path, st->path.len + 1);
    rc = SWS_OK;

done:
    if (res) {
        freeaddrinfo(res);
    }
    OPENSSL_free(host);
    OPENSSL_free(port);
    OPENSSL_free(path);
    return rc;
}

static sws_int_t
sws_ssl_staple_file(sws_conf_t *cf, sws_array_t *staples, const sws_str_t *file)
{
    sws_ssl_staple_t **st = staples->elts;
    u_char             buf[SWS_OCSP_MAX];
    ssize_t            n;
    sws_uint_t         i, used = 0;
    int                fd;

    fd = open((char *) file->data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "cannot open ssl_stapling_file \"%s\"",
                           (char *) file->data);
        return SWS_ERROR;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, n < 0 ? errno : 0,
                           "cannot read ssl_stapling_file \"%s\"", (char *) file->data);
        return SWS_ERROR;
    }
    /* The response goes to the certificate it is about; one about none
     * (issuer unknown) to the first certificate. */
    for (i = 0; i < staples->nelts; i++) {
        st[i]->from_file = 1;
        if (st[i]->id && sws_ssl_ocsp_check(st[i], buf, (size_t) n, 0) == SWS_OK) {
            if (sws_ssl_staple_set(st[i], buf, (size_t) n) != SWS_OK) {
                return SWS_ERROR;
            }
            used++;
        }
    }
    ERR_clear_error();
    if (used == 0) {
        if (st[0]->id) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "ssl_stapling_file \"%s\" does not match "
                               "any certificate: not stapled", (char *) file->data);
            return SWS_OK;
        }
        if (sws_ssl_ocsp_check(st[0], buf, (size_t) n, 0) != SWS_OK
            || sws_ssl_staple_set(st[0], buf, (size_t) n) != SWS_OK)
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid ssl_stapling_file \"%s\"",
                               (char *) file->data);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

sws_int_t
sws_ssl_stapling(sws_conf_t *cf, sws_ssl_t *ssl, const sws_str_t *file,
    const sws_str_t *responder, const sws_str_t *trusted, int verify)
{
    sws_pool_t         *pool = sws_conf_pool(cf);
    sws_array_t        *staples;
    sws_ssl_staple_t   *st, **sp;
    STACK_OF(OPENSSL_STRING) *aia;
    X509               *cert;
    int                 rc;
    char                url[1024];

    if (sws_ssl_staples_index == -1) {
        sws_ssl_staples_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
        if (sws_ssl_staples_index == -1) {
            return SWS_ERROR;
        }
    }
    staples = sws_array_create(pool, 2, sizeof(sws_ssl_staple_t *));
    if (staples == NULL) {
        return SWS_ERROR;
    }

    for (rc = SSL_CTX_set_current_cert(ssl->ctx, SSL_CERT_SET_FIRST); rc == 1;
         rc = SSL_CTX_set_current_cert(ssl->ctx, SSL_CERT_SET_NEXT))
    {
        cert = SSL_CTX_get0_certificate(ssl->ctx);
        if (cert == NULL) {
            continue;
        }
        st = sws_pcalloc(pool, sizeof(sws_ssl_staple_t));
        sp = sws_array_push(staples);
        if (st == NULL || sp == NULL) {
            return SWS_ERROR;
        }
        *sp = st;
        sws_queue_insert_tail(&sws_ssl_staples, &st->queue);
        st->cycle = sws_conf_cycle(cf);
        st->log = sws_conf_log(cf);
        st->verify = verify ? 1 : 0;
        X509_up_ref(cert);
        st->cert = cert;
        st->store = X509_STORE_new();
        if (sws_pool_cleanup_add(pool, sws_ssl_staple_cleanup, st) != SWS_OK
            || st->store == NULL)
        {
            return SWS_ERROR;
        }
        if (trusted && trusted->len
            && X509_STORE_load_file(st->store, (char *) trusted->data) != 1)
        {
            sws_ssl_error(SWS_LOG_EMERG, st->log, 0,
                          "cannot load ssl_trusted_certificate \"%s\"", (char *) trusted->data);
            return SWS_ERROR;
        }
        SSL_CTX_get0_chain_certs(ssl->ctx, &st->chain);
        st->issuer = sws_ssl_find_issuer(st);
        if (st->issuer) {
            st->id = OCSP_cert_to_id(NULL, st->cert, st->issuer);
            X509_STORE_add_cert(st->store, st->issuer);
        }
        ERR_clear_error();

        if (file && file->len) {
            continue;
        }
        if (st->issuer == NULL) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "no issuer certificate for OCSP "
                               "stapling (add it to the chain or to "
                               "ssl_trusted_certificate): not stapled");
            continue;
        }
        if (responder && responder->len) {
            snprintf(url, sizeof(url), "%.*s", (int) responder->len, responder->data);
        } else {
            aia = X509_get1_ocsp(st->cert);
            if (aia == NULL || sk_OPENSSL_STRING_num(aia) == 0) {
                X509_email_free(aia);
                sws_conf_log_error(SWS_LOG_WARN, cf, 0, "no OCSP responder URL in the "
                                   "certificate: not stapled");
                continue;
            }
            snprintf(url, sizeof(url), "%s", sk_OPENSSL_STRING_value(aia, 0));
            X509_email_free(aia);
        }
        if (sws_ssl_responder_addr(cf, st, url) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    if (staples->nelts == 0) {
        return SWS_OK;
    }
    if (file && file->len && sws_ssl_staple_file(cf, staples, file) != SWS_OK) {
        return SWS_ERROR;
    }
    SSL_CTX_set_ex_data(ssl->ctx, sws_ssl_staples_index, staples);
    SSL_CTX_set_tlsext_status_cb(ssl->ctx, sws_ssl_status_cb);
    return SWS_OK;
}

/* ---- fetching, in the workers ---- */

sws_int_t
sws_ssl_stapling_init_worker(sws_cycle_t *cycle)
{
    sws_queue_t      *q;
    sws_ssl_staple_t *st;

    for (q = sws_queue_head(&sws_ssl_staples); q != sws_queue_sentinel(&sws_ssl_staples);
         q = sws_queue_next(q))
    {
        st = sws_queue_data(q, sws_ssl_staple_t, queue);
        if (st->cycle != cycle || st->from_file || st->socklen == 0) {
            continue;
        }
        st->log = cycle->log;         /* the configuration's was stderr */
        st->timer.data = st;
        st->timer.handler = sws_ssl_ocsp_start;
        sws_add_timer(&st->timer, 0);
    }
    return SWS_OK;
}

static void
sws_ssl_ocsp_close(sws_ssl_staple_t *st)
{
    if (st->conn) {
        sws_close_connection(st->conn);
        st->conn = NULL;
    }
    OPENSSL_free(st->buf);
    st->buf = NULL;
}

static void
sws_ssl_ocsp_done(sws_ssl_staple_t *st, int ok)
{
    sws_msec_t next = SWS_OCSP_RETRY;
    time_t     left;

    sws_ssl_ocsp_close(st);
    if (ok && st->valid) {
        /* Fetch again well before nextUpdate. */
        left = st->valid - sws_time_sec();
        next = left > 600 ? (sws_msec_t) (left - 300) * 1000 : 300 * 1000;
        if (next > SWS_OCSP_REFRESH) {
            next = SWS_OCSP_REFRESH;
        }
    } else if (ok) {
        next = SWS_OCSP_REFRESH;
    }
    st->timer.handler = sws_ssl_ocsp_start;
    sws_add_timer(&st->timer, next);
}

static void sws_ssl_ocsp_write(sws_event_t *ev);
static void sws_ssl_ocsp_read(sws_event_t *ev);

static void
sws_ssl_ocsp_start(sws_event_t *ev)
{
    sws_ssl_staple_t *st = ev->data;
    OCSP_REQUEST     *req;
    u_char           *der = NULL, *p;
    int               fd, len;
    size_t            n;

    ev->timedout = 0;
    if (sws_exiting) {
        return;
    }
    if (st->conn) {
        /* The timer of a fetch in progress: it took too long. */
        sws_log_error(SWS_LOG_WARN, st->log, 0, "OCSP responder %.*s timed out",
                      (int) st->host.len, st->host.data);
        sws_ssl_ocsp_done(st, 0);
        return;
    }

    req = OCSP_REQUEST_new();
    if (req == NULL || OCSP_request_add0_id(req, OCSP_CERTID_dup(st->id)) == NULL) {
        OCSP_REQUEST_free(req);
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    len = i2d_OCSP_REQUEST(req, &der);
    OCSP_REQUEST_free(req);
    if (len <= 0) {
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    n = 256 + st->host.len + st->path.len + (size_t) len;
    st->buf = OPENSSL_malloc(sws_max(n, (size_t) SWS_OCSP_MAX));
    if (st->buf == NULL) {
        OPENSSL_free(der);
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    p = st->buf + snprintf((char *) st->buf, 256 + st->host.len + st->path.len,
                           "POST %s HTTP/1.0\r\nHost: %.*s\r\n"
                           "Content-Type: application/ocsp-request\r\n"
                           "Content-Length: %d\r\n\r\n",
                           (char *) st->path.data, (int) st->host.len, st->host.data, len);
    p = sws_cpymem(p, der, (size_t) len);
    OPENSSL_free(der);
    st->buf_len = p - st->buf;
    st->buf_pos = 0;
    st->reading = 0;

    fd = socket(st->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        sws_log_error(SWS_LOG_ERR, st->log, errno, "socket() for OCSP failed");
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    st->conn = sws_get_connection(fd, st->log);
    if (st->conn == NULL) {
        close(fd);
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    st->conn->data = st;
    st->conn->read->handler = sws_ssl_ocsp_read;
    st->conn->write->handler = sws_ssl_ocsp_write;
    if (connect(fd, (struct sockaddr *) &st->addr, st->socklen) == -1 && errno != EINPROGRESS) {
        sws_log_error(SWS_LOG_ERR, st->log, errno, "connect() to OCSP responder %.*s failed",
                      (int) st->host.len, st->host.data);
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    if (sws_event_add_connection(st->conn) != SWS_OK) {
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    sws_add_timer(&st->timer, SWS_OCSP_TIMEOUT);
}

static void
sws_ssl_ocsp_write(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_ssl_staple_t *st = c->data;
    ssize_t           n;

    while (!st->reading && st->conn == c) {
        n = send(c->fd, st->buf + st->buf_pos, st->buf_len - st->buf_pos, MSG_NOSIGNAL);
        if (n == -1) {
            if (errno == EAGAIN || errno == EINTR) {
                return;
            }
            sws_log_error(SWS_LOG_ERR, st->log, errno, "OCSP responder %.*s: send() failed",
                          (int) st->host.len, st->host.data);
            sws_ssl_ocsp_done(st, 0);
            return;
        }
        st->buf_pos += n;
        if (st->buf_pos == st->buf_len) {
            st->buf_len = st->buf_pos = 0;      /* now the response */
            st->reading = 1;
            sws_ssl_ocsp_read(c->read);
            return;
        }
    }
}

/* The response of an HTTP/1.0 exchange: read until the responder closes. */
static void
sws_ssl_ocsp_read(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_ssl_staple_t *st = c->data;
    u_char           *body;
    ssize_t           n;
    int               status = 0;

    if (!st->reading) {
        return;                                  /* still writing */
    }
    for ( ;; ) {
        if (st->buf_len == SWS_OCSP_MAX) {
            sws_log_error(SWS_LOG_ERR, st->log, 0, "OCSP response from %.*s is too large",
                          (int) st->host.len, st->host.data);
            sws_ssl_ocsp_done(st, 0);
            return;
        }
        n = recv(c->fd, st->buf + st->buf_len, SWS_OCSP_MAX - st->buf_len, 0);
        if (n > 0) {
            st->buf_len += n;
            continue;
        }
        if (n == -1 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        if (n == -1) {
            sws_log_error(SWS_LOG_ERR, st->log, errno, "OCSP responder %.*s: recv() failed",
                          (int) st->host.len, st->host.data);
            sws_ssl_ocsp_done(st, 0);
            return;
        }
        break;                                   /* closed: all there */
    }

    body = memmem(st->buf, st->buf_len, "\r\n\r\n", 4);
    if (st->buf_len > 12 && memcmp(st->buf, "HTTP/1.", 7) == 0) {
        status = (int) sws_atoi(st->buf + 9, 3);
    }
    if (body == NULL || status != 200) {
        sws_log_error(SWS_LOG_ERR, st->log, 0, "OCSP responder %.*s answered with status %d",
                      (int) st->host.len, st->host.data, status);
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    body += 4;
    n = st->buf + st->buf_len - body;
    if (sws_ssl_ocsp_check(st, body, (size_t) n, st->verify) != SWS_OK
        || sws_ssl_staple_set(st, body, (size_t) n) != SWS_OK)
    {
        ERR_clear_error();
        sws_ssl_ocsp_done(st, 0);
        return;
    }
    sws_log_error(SWS_LOG_INFO, st->log, 0, "OCSP response from %.*s stapled",
                  (int) st->host.len, st->host.data);
    sws_ssl_ocsp_done(st, 1);
}
