/*
 * The BIO that OpenSSL reads and writes a TLS connection's socket through,
 * instead of OpenSSL's own socket BIO, so that a request costs one recv():
 *
 * - with read-ahead on (see sws_ssl_create) OpenSSL asks for a whole buffer
 *   at once, not for a record header and then the record;
 * - a recv() that returns less than asked for drained the socket (the
 *   connection is edge-triggered, as in sws_unix_recv): `ready` is cleared
 *   and the next read says "retry" without a syscall until epoll reports
 *   new data, where OpenSSL's socket BIO would call recv() for an EAGAIN.
 *
 * Kernel TLS needs OpenSSL's socket BIO (it hands the keys to the socket
 * through it): connections that may use kTLS keep SSL_set_fd().
 *
 * Every connection of a thread shares one BIO (each SSL holds a reference
 * to it): the socket is that of sws_ssl_current, the connection whose SSL
 * call is running (sws_ssl_io.c sets it before each). A BIO of its own
 * cost an idle connection 208 bytes (the BIO and its lock); nothing in the
 * BIO outlives a call but its retry flags, which SSL_get_error reads right
 * after the call that set them.
 */
#include <openssl/bio.h>
#include "sws_event.h"
#include "sws_ssl.h"

static BIO_METHOD *sws_ssl_bio_method;
static __thread BIO *sws_ssl_bio_shared;

__thread sws_connection_t *sws_ssl_current;

static int
sws_ssl_bio_read(BIO *b, char *buf, size_t size, size_t *got)
{
    sws_connection_t *c = sws_ssl_current;
    ssize_t           n;

    BIO_clear_retry_flags(b);
    if (c == NULL) {
        return 0;                   /* not from a call of sws_ssl_io.c */
    }
    if (!c->read->ready) {
        BIO_set_retry_read(b);
        return 0;
    }
    for ( ;; ) {
        n = recv(c->fd, buf, size, 0);
        if (n > 0) {
            if ((size_t) n < size && !c->read->eof) {
                c->read->ready = 0;     /* drained (an EOF still needs a read) */
            }
            *got = (size_t) n;
            return 1;
        }
        if (n == 0) {
            c->read->ready = 0;
            c->read->eof = 1;
            return 0;               /* OpenSSL: unexpected EOF or close */
        }
        if (errno == EINTR) {
            continue;
        }
        c->read->ready = 0;
        if (errno == EAGAIN) {
            BIO_set_retry_read(b);
        }
        return 0;                   /* errno says why (SSL_ERROR_SYSCALL) */
    }
}

static int
sws_ssl_bio_write(BIO *b, const char *data, size_t size, size_t *sent)
{
    sws_connection_t *c = sws_ssl_current;
    ssize_t           n;

    BIO_clear_retry_flags(b);
    if (c == NULL) {
        return 0;
    }
    for ( ;; ) {
        n = send(c->fd, data, size, MSG_NOSIGNAL);
        if (n >= 0) {
            *sent = (size_t) n;
            return 1;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN) {
            c->write->ready = 0;
            BIO_set_retry_write(b);
        }
        return 0;
    }
}

static long
sws_ssl_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    sws_connection_t *c = sws_ssl_current;

    (void) b;
    (void) num;
    switch (cmd) {
    case BIO_CTRL_FLUSH:            /* nothing is buffered here */
        return 1;
    case BIO_C_GET_FD:              /* SSL_get_fd() */
        if (c == NULL) {
            return -1;
        }
        if (ptr != NULL) {
            *(int *) ptr = c->fd;
        }
        return c->fd;
    default:
        return 0;
    }
}

sws_int_t
sws_ssl_bio_attach(SSL *s)
{
    BIO *b;

    if (sws_ssl_bio_method == NULL) {
        BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                     "scalws socket");
        if (m == NULL
            || !BIO_meth_set_read_ex(m, sws_ssl_bio_read)
            || !BIO_meth_set_write_ex(m, sws_ssl_bio_write)
            || !BIO_meth_set_ctrl(m, sws_ssl_bio_ctrl))
        {
            BIO_meth_free(m);
            return SWS_ERROR;
        }
        sws_ssl_bio_method = m;     /* kept for the life of the process */
    }
    b = sws_ssl_bio_shared;
    if (b == NULL) {
        b = BIO_new(sws_ssl_bio_method);
        if (b == NULL) {
            return SWS_ERROR;
        }
        BIO_set_init(b, 1);
        sws_ssl_bio_shared = b;     /* this reference: the thread's */
    }
    if (!BIO_up_ref(b)) {
        return SWS_ERROR;
    }
    SSL_set_bio(s, b, b);           /* the SSL's reference (one, both ways) */
    return SWS_OK;
}
