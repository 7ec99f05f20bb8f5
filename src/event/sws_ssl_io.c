/*
 * TLS connections over TCP with OpenSSL 3 (contexts: sws_ssl_ctx.c): the
 * handshake driven by the event loop, reading and sending through SSL_read
 * and SSL_write (or SSL_sendfile when kernel TLS took over the socket).
 */
#include <limits.h>
#include <unistd.h>
#include "sws_ssl.h"

#define SWS_SSL_SEND_MAX  (2 * 1024 * 1024)   /* per call, so others get a turn */

static void sws_ssl_handshake_handler(sws_event_t *ev);

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
    if (ssl->ktls && sws_ssl_ktls_available()
        ? SSL_set_fd(sc->connection, c->fd) != 1
        : sws_ssl_bio_attach(sc->connection) != SWS_OK)
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
    sws_connection_t *c = sws_ssl_current;

    return (c != NULL && c->ssl != NULL && c->ssl->connection == ssl) ? c : NULL;
}

/*
 * The functions below that call OpenSSL for c (handshake, recv, send,
 * shutdown, close) make c the thread's current connection first, for the
 * BIO and the callbacks, and give the previous one back after: a callback
 * of one connection's call may close another.
 */
#define sws_ssl_enter(c)  sws_connection_t *sws_ssl_prev = sws_ssl_current; \
                          sws_ssl_current = (c)
#define sws_ssl_leave()   sws_ssl_current = sws_ssl_prev

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

static sws_int_t
sws_ssl_handshake_step(sws_connection_t *c)
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

sws_int_t
sws_ssl_handshake(sws_connection_t *c)
{
    sws_int_t  rc;

    sws_ssl_enter(c);
    rc = sws_ssl_handshake_step(c);
    sws_ssl_leave();
    return rc;
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

static ssize_t
sws_ssl_recv_on(sws_connection_t *c, u_char *buf, size_t size)
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

ssize_t
sws_ssl_recv(sws_connection_t *c, u_char *buf, size_t size)
{
    ssize_t  n;

    sws_ssl_enter(c);
    n = sws_ssl_recv_on(c, buf, size);
    sws_ssl_leave();
    return n;
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

/*
 * Small buffers (a response head and its body) are copied into one, so that
 * they go out in one record. The copy is made again from the chain before
 * every write, also when OpenSSL asks for the same bytes again after a
 * WANT_WRITE (it keeps what it encrypted, and the moving-buffer mode lets
 * the bytes come from anywhere), so nothing in it outlives a call: one
 * buffer serves every connection of the worker, instead of 16 KiB each.
 */
static u_char  sws_ssl_send_buf[16384];    /* the largest ssl_buffer_size */

/* Gather up to size bytes of memory buffers from in into sws_ssl_send_buf. */
static size_t
sws_ssl_coalesce(sws_connection_t *c, sws_chain_t *in, size_t size)
{
    u_char    *p = sws_ssl_send_buf;
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
    size_t                bsize = sws_min(sc->ssl->buffer_size, sizeof(sws_ssl_send_buf));
    size_t                size;
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
        size = sws_ssl_coalesce(c, in, (size_t) sws_min((off_t) bsize, max));
        return sws_ssl_write(c, sws_ssl_send_buf, size);
    }

    fsize = sws_min(b->file_last - b->file_pos, max);
    if (sc->ktls_send && c->sendfile && !sc->in_early) {
        ERR_clear_error();
        n = SSL_sendfile(sc->connection, b->fd, b->file_pos, (size_t) fsize, 0);
        return sws_ssl_write_result(c, n, "SSL_sendfile()");
    }
    size = (size_t) sws_min(fsize, (off_t) bsize);
    n = pread(b->fd, sws_ssl_send_buf, size, b->file_pos);
    if (n <= 0) {
        if (n == 0) {
            sws_log_error(SWS_LOG_CRIT, c->log, 0, "file was truncated while sending");
        } else {
            sws_log_error(SWS_LOG_CRIT, c->log, errno, "pread() failed");
        }
        c->write->error = 1;
        return SWS_ERROR;
    }
    return sws_ssl_write(c, sws_ssl_send_buf, (size_t) n);
}

static sws_chain_t *
sws_ssl_send_chain_on(sws_connection_t *c, sws_chain_t *in, off_t limit)
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

sws_chain_t *
sws_ssl_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    sws_chain_t  *rest;

    sws_ssl_enter(c);
    rest = sws_ssl_send_chain_on(c, in, limit);
    sws_ssl_leave();
    return rest;
}

/* ---- record buffers ---- */

/*
 * OpenSSL's record buffers (about 17 KiB each way) are freed after every
 * record with SSL_MODE_RELEASE_BUFFERS, so that an idle connection costs
 * no more than its TLS state; a connection that sends a request right
 * after its response then pays for two allocations and two frees per
 * request in OpenSSL (about 500 instructions of an HTTP/2 request, by
 * callgrind). Its protocol may keep them while the connection is busy,
 * and give them back when it goes quiet.
 */
void
sws_ssl_keep_buffers(sws_connection_t *c)
{
    if (c->ssl && c->ssl->connection) {
        SSL_clear_mode(c->ssl->connection, SSL_MODE_RELEASE_BUFFERS);
    }
}

int
sws_ssl_release_buffers(sws_connection_t *c)
{
    if (c->ssl == NULL || c->ssl->connection == NULL) {
        return 0;
    }
    /* Back to the default: buffers that hold a record now (SSL_free_buffers
     * refuses them) go as soon as OpenSSL is done with it. */
    SSL_set_mode(c->ssl->connection, SSL_MODE_RELEASE_BUFFERS);
    return SSL_free_buffers(c->ssl->connection) == 1;
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

static void
sws_ssl_shutdown_on(sws_connection_t *c)
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
sws_ssl_shutdown(sws_connection_t *c)
{
    sws_ssl_enter(c);
    sws_ssl_shutdown_on(c);
    sws_ssl_leave();
}

void
sws_ssl_close(sws_connection_t *c)
{
    sws_ssl_connection_t *sc = c->ssl;

    if (sc == NULL) {
        return;
    }
    sws_ssl_enter(c);
    sws_ssl_shutdown_on(c);
    SSL_free(sc->connection);
    sws_ssl_leave();
    sc->connection = NULL;
    c->ssl = NULL;
    c->recv = sws_unix_recv;
    c->send_chain = sws_unix_send_chain;
}
