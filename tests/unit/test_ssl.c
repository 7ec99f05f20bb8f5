/*
 * The TLS layer without a server: HKDF (RFC 5869 vectors) and the ticket
 * keys of each period, contexts and their error paths, and a real
 * handshake over a socketpair with sws_ssl_recv/sws_ssl_send_chain (memory
 * and file buffers, a full socket so that OpenSSL wants the same write
 * again).
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "sws_ssl.h"
#include "sws_conf_internal.h"
#include "sws_log_internal.h"

static struct sws_log_s  tlog;
static char              tdir[] = "/tmp/sws_test_ssl.XXXXXX";
static char              cert_path[256], key_path[256], other_key_path[256];

static const char *
log_text(void)
{
    static char buf[16384];
    ssize_t     n = pread(tlog.fd, buf, sizeof(buf) - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void
unhex(const char *hex, u_char *out, size_t *len)
{
    size_t i, n = strlen(hex) / 2;

    for (i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (u_char) v;
    }
    *len = n;
}

/* A self-signed P-256 certificate for "localhost", written as PEM (made
 * in main(), outside the tests: failures are reported with a return). */
static int
make_cert(const char *cert, const char *key)
{
    EVP_PKEY  *pk = EVP_EC_gen("P-256");
    X509      *x = X509_new();
    X509_NAME *name;
    FILE      *f;
    int        ok = 0;

    if (pk == NULL || x == NULL) {
        goto done;
    }
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 7);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, pk);
    name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (u_char *) "localhost", -1, -1, 0);
    X509_set_issuer_name(x, name);
    if (X509_sign(x, pk, EVP_sha256()) <= 0) {
        goto done;
    }
    if (cert) {
        f = fopen(cert, "w");
        if (f == NULL || PEM_write_X509(f, x) != 1) {
            goto done;
        }
        fclose(f);
    }
    f = fopen(key, "w");
    if (f == NULL || PEM_write_PrivateKey(f, pk, NULL, NULL, 0, NULL, NULL) != 1) {
        goto done;
    }
    fclose(f);
    ok = 1;
done:
    X509_free(x);
    EVP_PKEY_free(pk);
    return ok;
}

/* ---------------------------------------------------------------- HKDF */

START_TEST(hkdf_rfc5869_case1)
{
    u_char ikm[22], salt[13], info[10], out[42], want[42];
    size_t len;
    int    i;

    memset(ikm, 0x0b, sizeof(ikm));
    for (i = 0; i < 13; i++) {
        salt[i] = (u_char) i;
    }
    for (i = 0; i < 10; i++) {
        info[i] = (u_char) (0xf0 + i);
    }
    unhex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
          "34007208d5b887185865", want, &len);
    ck_assert_int_eq(sws_ssl_hkdf(salt, 13, ikm, 22, info, 10, out, 42), SWS_OK);
    ck_assert_mem_eq(out, want, 42);
}
END_TEST

START_TEST(hkdf_rfc5869_case3_no_salt_no_info)
{
    u_char ikm[22], out[42], want[42];
    size_t len;

    memset(ikm, 0x0b, sizeof(ikm));
    unhex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
          "9d201395faa4b61a96c8", want, &len);
    ck_assert_int_eq(sws_ssl_hkdf(NULL, 0, ikm, 22, (u_char *) "", 0, out, 42), SWS_OK);
    ck_assert_mem_eq(out, want, 42);
}
END_TEST

START_TEST(ticket_keys_per_period)
{
    u_char s1[32], s2[32];
    u_char n1[16], a1[32], h1[32], n2[16], a2[32], h2[32], n3[16], a3[32], h3[32];

    memset(s1, 1, sizeof(s1));
    memset(s2, 2, sizeof(s2));
    /* the same secret and period: the same key, in every worker */
    sws_ssl_ticket_key(s1, 1000, n1, a1, h1);
    sws_ssl_ticket_key(s1, 1000, n2, a2, h2);
    ck_assert_mem_eq(n1, n2, 16);
    ck_assert_mem_eq(a1, a2, 32);
    ck_assert_mem_eq(h1, h2, 32);
    /* the next period: another key (rotation) */
    sws_ssl_ticket_key(s1, 1001, n3, a3, h3);
    ck_assert(memcmp(n1, n3, 16) != 0);
    ck_assert(memcmp(a1, a3, 32) != 0);
    ck_assert(memcmp(h1, h3, 32) != 0);
    /* another secret: another key */
    sws_ssl_ticket_key(s2, 1000, n3, a3, h3);
    ck_assert(memcmp(n1, n3, 16) != 0);
    ck_assert(memcmp(a1, a3, 32) != 0);
    /* the parts of one key differ from each other */
    ck_assert(memcmp(a1, h1, 32) != 0);
}
END_TEST

/* ---------------------------------------------------------------- replay table */

/* A table in a slab zone of `size` of its own configuration (f). */
typedef struct {
    struct sws_cycle_s  cycle;
    struct sws_conf_s   conf;
} fake_t;

static int replay_tag;

static sws_slab_pool_t *
replay_table(fake_t *f, const char *name, size_t size, time_t started)
{
    sws_shm_zone_t  *z;
    sws_str_t        n = { strlen(name), (u_char *) name };
    sws_slab_pool_t *pool;

    sws_memzero(f, sizeof(*f));
    f->cycle.pool = sws_pool_create(4096, &tlog);
    f->cycle.log = &tlog;
    f->conf.cycle = &f->cycle;
    f->conf.pool = f->cycle.pool;
    f->conf.log = &tlog;
    z = sws_shm_zone_add(&f->conf, &n, size, NULL, &replay_tag);
    ck_assert_ptr_nonnull(z);
    pool = sws_slab_init(z, NULL);
    ck_assert_ptr_nonnull(pool);
    ck_assert_int_eq(sws_ssl_replay_create(pool, started), SWS_OK);
    return pool;
}

START_TEST(replay_ticket_once)
{
    fake_t            f;
    sws_slab_pool_t  *t = replay_table(&f, "replay-once", 65536, 1000);
    sws_ssl_replay_t *st = sws_slab_data(t);
    u_char            a[16], b[16];

    memset(a, 0xa1, sizeof(a));
    memset(b, 0xb2, sizeof(b));
    /* first use, then a replay, from any worker (one table) */
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1400, 1200), SWS_OK);
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1400, 1201), SWS_DECLINED);
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1400, 1399), SWS_DECLINED);
    ck_assert_uint_eq(st->replays, 2);
    /* another ticket is another record */
    ck_assert_int_eq(sws_ssl_replay_record(t, b, 1100, 1400, 1200), SWS_OK);
    /* issued before the table started: it may have been used before */
    ck_assert_int_eq(sws_ssl_replay_record(t, b, 999, 1400, 1200), SWS_DECLINED);
    ck_assert_int_eq(sws_ssl_replay_record(t, b, 1000, 1400, 1200), SWS_DECLINED);
    /* once the ticket expired its record goes (OpenSSL refuses the
     * ticket itself by then) */
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1400, 1400), SWS_OK);
    /* the ticket recorded again when its record ended is known again */
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1500, 1450), SWS_OK);
    ck_assert_int_eq(sws_ssl_replay_record(t, a, 1100, 1500, 1451), SWS_DECLINED);
    ck_assert_ptr_null(sws_slab_hash_find(st->hash, b, 16));      /* b ended: gone */
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* A zone full of live records refuses (fails closed), keeps knowing them
 * all, and takes new tickets as old ones expire, whatever order they were
 * used in. */
START_TEST(replay_full_zone_refuses)
{
    fake_t            f;
    sws_slab_pool_t  *t = replay_table(&f, "replay-full", 16384, 0);
    sws_ssl_replay_t *st = sws_slab_data(t);
    u_char            k[16];
    int               i, n;

    memset(k, 0x11, sizeof(k));
    /* Used in the order 0, 1, 2 ... but ending later for the first ones:
     * ticket i ends at 1000 - i. */
    for (n = 0; n < 1000; n++) {
        memcpy(k, &n, sizeof(n));
        if (sws_ssl_replay_record(t, k, 10, 1000 - n, 50) != SWS_OK) {
            break;
        }
    }
    ck_assert_int_gt(n, 100);                      /* 16 KiB: some 150 tickets */
    ck_assert_int_lt(n, 1000);
    ck_assert_uint_eq(st->full, 1);
    /* nothing forgotten while it lives: refused, fail closed */
    k[15] = 0xff;
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 5000, 60), SWS_BUSY);
    ck_assert_uint_eq(st->full, 2);
    for (i = 0; i < n; i++) {
        memcpy(k, &i, sizeof(i));
        k[15] = 0x11;
        ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 1000 - i, 60), SWS_DECLINED);
    }
    /* The last one used ends first: when it has, a new ticket fits. */
    k[15] = 0xff;
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 5000, 1000 - (n - 1)), SWS_OK);
    k[15] = 0xfe;
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 5000, 1000 - (n - 1)), SWS_BUSY);
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 5000, 1000 - (n - 2)), SWS_OK);
    /* every one ended: all room again */
    for (i = 0; i < n - 2; i++) {
        memcpy(k, &i, sizeof(i));
        k[15] = 0x33;
        ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 9000, 5000), SWS_OK);
    }
    i = n - 1;                                     /* the first 0xff one: ended, */
    memcpy(k, &i, sizeof(i));                      /* forgotten as others came */
    k[15] = 0xff;
    ck_assert_ptr_null(sws_slab_hash_find(st->hash, k, 16));
    ck_assert_uint_eq(sws_slab_hash_count(st->hash), (sws_uint_t) (n - 2));
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 6000, 5000), SWS_OK);
    ck_assert_int_eq(sws_ssl_replay_record(t, k, 10, 6000, 5001), SWS_DECLINED);
    sws_pool_destroy(f.cycle.pool);
}
END_TEST

/* ---------------------------------------------------------------- passwords */

static void
write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(password_file_lines)
{
    sws_pool_t   *pool = sws_pool_create(4096, &tlog);
    sws_array_t  *list;
    sws_str_t    *pwd;
    char          path[300];

    /* one a line, CRLF or LF, empty lines skipped, the last without LF */
    snprintf(path, sizeof(path), "%s/pass", tdir);
    write_text(path, "first\r\n\n second \nlast");
    list = sws_ssl_read_passwords(pool, &tlog, path);
    ck_assert_ptr_nonnull(list);
    ck_assert_uint_eq(list->nelts, 3);
    pwd = list->elts;
    ck_assert(pwd[0].len == 5 && memcmp(pwd[0].data, "first", 5) == 0);
    ck_assert(pwd[1].len == 8 && memcmp(pwd[1].data, " second ", 8) == 0);
    ck_assert(pwd[2].len == 4 && memcmp(pwd[2].data, "last", 4) == 0);
    /* none in it, no file */
    write_text(path, "\r\n\n");
    ck_assert_ptr_null(sws_ssl_read_passwords(pool, &tlog, path));
    ck_assert_ptr_nonnull(strstr(log_text(), "no passphrase in password file"));
    snprintf(path, sizeof(path), "%s/none", tdir);
    ck_assert_ptr_null(sws_ssl_read_passwords(pool, &tlog, path));
    ck_assert_ptr_nonnull(strstr(log_text(), "cannot open password file"));
    sws_pool_destroy(pool);
}
END_TEST

/* ---------------------------------------------------------------- contexts */

START_TEST(context_and_certificate_errors)
{
    sws_pool_t     *pool = sws_pool_create(4096, &tlog);
    sws_ssl_t       ssl;
    sws_str_t       bad = sws_string("NOT-A-CIPHER"), good = sws_string("HIGH:!aNULL");
    sws_shm_zone_t  zone;

    sws_memzero(&zone, sizeof(zone));

    sws_memzero(&ssl, sizeof(ssl));
    ck_assert_int_eq(sws_ssl_create(&ssl, pool, &tlog), SWS_OK);
    ck_assert_int_eq(sws_ssl_certificate(&ssl, "/nonexistent/cert.pem", key_path, NULL),
                     SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "cannot load certificate \"/nonexistent/cert.pem\""));
    ck_assert_int_eq(sws_ssl_certificate(&ssl, cert_path, other_key_path, NULL), SWS_ERROR);
    ck_assert_int_eq(sws_ssl_certificate(&ssl, cert_path, key_path, NULL), SWS_OK);
    ck_assert_int_eq(sws_ssl_ciphers(&ssl, &bad, 1), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "SSL_CTX_set_cipher_list(\"NOT-A-CIPHER\")"));
    ck_assert_ptr_nonnull(strstr(log_text(), "(SSL: error:"));
    ck_assert_int_eq(sws_ssl_ciphers(&ssl, &good, 1), SWS_OK);
    ck_assert(SSL_CTX_get_options(ssl.ctx) & SSL_OP_CIPHER_SERVER_PREFERENCE);
    ck_assert_str_eq(ssl.ciphers, "HIGH:!aNULL");
    ck_assert_int_eq(sws_ssl_protocols(&ssl, 0), SWS_ERROR);
    ck_assert_int_eq(sws_ssl_protocols(&ssl, SWS_SSL_TLSv1_3), SWS_OK);
    ck_assert_int_eq(SSL_CTX_get_min_proto_version(ssl.ctx), TLS1_3_VERSION);
    ck_assert_int_eq(SSL_CTX_get_max_proto_version(ssl.ctx), TLS1_3_VERSION);
    ck_assert_int_eq(sws_ssl_protocols(&ssl, SWS_SSL_TLSv1_2 | SWS_SSL_TLSv1_3), SWS_OK);
    ck_assert_int_eq(SSL_CTX_get_min_proto_version(ssl.ctx), TLS1_2_VERSION);
    /* the same certificates and names give the same session id context */
    ck_assert_int_eq(sws_ssl_session_id_context(&ssl, (u_char *) "a", 1), SWS_OK);
    /* early data off until asked for */
    ck_assert_uint_eq(SSL_CTX_get_max_early_data(ssl.ctx), 0);
    /* ... and never without the replay table */
    ck_assert_int_eq(sws_ssl_early_data(&ssl, 16384, NULL), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "early data needs its replay table"));
    ck_assert_uint_eq(SSL_CTX_get_max_early_data(ssl.ctx), 0);
    ck_assert_int_eq(sws_ssl_early_data(&ssl, 16384, &zone), SWS_OK);
    ck_assert_uint_eq(SSL_CTX_get_max_early_data(ssl.ctx), 16384);
    ck_assert_ptr_eq(ssl.replay, &zone);
    /* OpenSSL's per-process protection is replaced by ours */
    ck_assert(SSL_CTX_get_options(ssl.ctx) & SSL_OP_NO_ANTI_REPLAY);
    /* kernel TLS: probed once, the same answer after */
    ck_assert_int_eq(sws_ssl_ktls_available(), sws_ssl_ktls_available());
    sws_ssl_ktls(&ssl, 1);
    ck_assert_int_eq(!!(SSL_CTX_get_options(ssl.ctx) & SSL_OP_ENABLE_KTLS),
                     sws_ssl_ktls_available());
    sws_pool_destroy(pool);          /* frees the context */
    ck_assert_ptr_null(ssl.ctx);
}
END_TEST

/* ---------------------------------------------------------------- a connection */

typedef struct {
    struct sws_connection_s  c;
    struct sws_event_s       rev, wev;
    sws_pool_t              *pool;
    sws_ssl_t                ssl;
    SSL_CTX                 *cctx;
    SSL                     *client;
    int                      sv[2];
} pair_t;

static void
noop_handler(sws_connection_t *c)
{
    (void) c;
}

/* What OpenSSL's callbacks of the server's handshake found for their SSL. */
static sws_connection_t *seen_in_callback;
static int               callbacks_without;

static void
info_callback(const SSL *s, int where, int ret)
{
    sws_connection_t *c = sws_ssl_get_connection(s);

    (void) where;
    (void) ret;
    if (c != NULL) {
        seen_in_callback = c;
    } else {
        callbacks_without++;
    }
}

static void
pair_open(pair_t *p, int sndbuf)
{
    int n = 0;

    sws_memzero(p, sizeof(*p));
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, p->sv), 0);
    fcntl(p->sv[0], F_SETFL, O_NONBLOCK);
    fcntl(p->sv[1], F_SETFL, O_NONBLOCK);
    if (sndbuf) {
        setsockopt(p->sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        setsockopt(p->sv[1], SOL_SOCKET, SO_RCVBUF, &sndbuf, sizeof(sndbuf));
    }
    p->pool = sws_pool_create(4096, &tlog);
    ck_assert_int_eq(sws_ssl_create(&p->ssl, p->pool, &tlog), SWS_OK);
    ck_assert_int_eq(sws_ssl_certificate(&p->ssl, cert_path, key_path, NULL), SWS_OK);
    SSL_CTX_set_info_callback(p->ssl.ctx, info_callback);
    seen_in_callback = NULL;
    callbacks_without = 0;

    p->c.fd = p->sv[0];
    p->c.pool = p->pool;
    p->c.log = &tlog;
    p->c.read = &p->rev;
    p->c.write = &p->wev;
    p->rev.data = &p->c;
    p->wev.data = &p->c;
    p->wev.write = 1;
    p->rev.ready = 1;
    p->wev.ready = 1;
    p->c.recv = sws_unix_recv;
    p->c.send_chain = sws_unix_send_chain;
    ck_assert_int_eq(sws_ssl_create_connection(&p->ssl, &p->c), SWS_OK);
    p->c.ssl->handler = noop_handler;

    p->cctx = SSL_CTX_new(TLS_client_method());
    p->client = SSL_new(p->cctx);
    SSL_set_fd(p->client, p->sv[1]);
    SSL_set_connect_state(p->client);

    /* Both sides in turn until both are done. */
    for (n = 0; n < 100; n++) {
        int cr = SSL_do_handshake(p->client);
        sws_int_t sr;

        /* What epoll reports once the client's flight is in: the socket
         * BIO reads only when told the socket is readable (a short read
         * clears ready, as in sws_unix_recv). */
        p->rev.ready = 1;
        sr = p->c.ssl->handshaked ? SWS_OK : sws_ssl_handshake(&p->c);
        ck_assert_int_ne(sr, SWS_ERROR);
        if (cr == 1 && sr == SWS_OK) {
            break;
        }
    }
    ck_assert(p->c.ssl->handshaked);
    ck_assert_ptr_eq(p->c.recv, sws_ssl_recv);
    ck_assert_ptr_eq(p->c.send_chain, sws_ssl_send_chain);
    /* The callbacks in the handshake found the connection (the thread's
     * current one: no ex_data); outside a call of sws_ssl_io.c nothing
     * is current. */
    ck_assert_ptr_eq(seen_in_callback, &p->c);
    ck_assert_int_eq(callbacks_without, 0);
    ck_assert_ptr_null(sws_ssl_get_connection(p->c.ssl->connection));
}

static void
pair_close(pair_t *p)
{
    sws_ssl_close(&p->c);
    ck_assert_ptr_null(p->c.ssl);
    SSL_free(p->client);
    SSL_CTX_free(p->cctx);
    close(p->sv[0]);
    close(p->sv[1]);
    sws_pool_destroy(p->pool);
}

/* Read what the client can, appending to out. */
static size_t
client_read(pair_t *p, u_char *out, size_t have, size_t cap)
{
    int n;

    while (have < cap) {
        n = SSL_read(p->client, out + have, (int) (cap - have));
        if (n <= 0) {
            break;
        }
        have += (size_t) n;
    }
    return have;
}

START_TEST(recv_and_eof)
{
    pair_t  p;
    u_char  buf[64];
    ssize_t n;

    pair_open(&p, 0);
    ck_assert_int_eq(sws_ssl_recv(&p.c, buf, sizeof(buf)), SWS_AGAIN);
    ck_assert(!p.rev.ready);
    ck_assert_int_eq(SSL_write(p.client, "GET / HTTP/1.1\r\n", 16), 16);
    p.rev.ready = 1;                /* the edge epoll would report */
    n = sws_ssl_recv(&p.c, buf, 4);
    ck_assert_int_eq(n, 4);
    ck_assert_mem_eq(buf, "GET ", 4);
    /* more is held by OpenSSL: ready stays set until it says WANT_READ */
    n = sws_ssl_recv(&p.c, buf, sizeof(buf));
    ck_assert_int_eq(n, 12);
    ck_assert_mem_eq(buf, "/ HTTP/1.1\r\n", 12);
    /* Nothing more: WANT_READ clears ready, and then no recv() is made
     * until epoll says otherwise (the next bytes wait in the socket). */
    ck_assert_int_eq(sws_ssl_recv(&p.c, buf, sizeof(buf)), SWS_AGAIN);
    ck_assert(!p.rev.ready);
    ck_assert_int_eq(SSL_write(p.client, "Host: a\r\n", 9), 9);
    ck_assert_int_eq(sws_ssl_recv(&p.c, buf, sizeof(buf)), SWS_AGAIN);
    p.rev.ready = 1;
    n = sws_ssl_recv(&p.c, buf, sizeof(buf));
    ck_assert_int_eq(n, 9);
    ck_assert_mem_eq(buf, "Host: a\r\n", 9);
    /* ... and that read was short (read-ahead asks for a whole buffer):
     * the socket is drained, OpenSSL holds nothing, so no EAGAIN recv(). */
    ck_assert(!p.rev.ready);
    SSL_shutdown(p.client);
    p.rev.ready = 1;
    ck_assert_int_eq(sws_ssl_recv(&p.c, buf, sizeof(buf)), 0);
    ck_assert(p.rev.eof);
    pair_close(&p);
}
END_TEST

/* Two connections read and write through one BIO: each gets its own
 * socket's bytes, whichever was used last. */
START_TEST(two_connections_share_the_bio)
{
    pair_t  p1, p2;
    u_char  buf[64];

    pair_open(&p1, 0);
    pair_open(&p2, 0);
    ck_assert_ptr_eq(SSL_get_rbio(p1.c.ssl->connection), SSL_get_rbio(p2.c.ssl->connection));
    ck_assert_int_eq(SSL_write(p1.client, "one", 3), 3);
    ck_assert_int_eq(SSL_write(p2.client, "second", 6), 6);
    p1.rev.ready = 1;
    p2.rev.ready = 1;
    ck_assert_int_eq(sws_ssl_recv(&p2.c, buf, sizeof(buf)), 6);
    ck_assert_mem_eq(buf, "second", 6);
    ck_assert_int_eq(sws_ssl_recv(&p1.c, buf, sizeof(buf)), 3);
    ck_assert_mem_eq(buf, "one", 3);
    ck_assert_int_eq(sws_ssl_recv(&p1.c, buf, sizeof(buf)), SWS_AGAIN);
    pair_close(&p1);                /* p2 keeps the BIO's reference it holds */
    ck_assert_int_eq(SSL_write(p2.client, "after", 5), 5);
    p2.rev.ready = 1;
    ck_assert_int_eq(sws_ssl_recv(&p2.c, buf, sizeof(buf)), 5);
    ck_assert_mem_eq(buf, "after", 5);
    pair_close(&p2);
}
END_TEST

START_TEST(send_chain_memory_and_file_with_retries)
{
    pair_t       p;
    u_char      *want, *got;
    size_t       total = 0, have = 0, i;
    sws_chain_t  links[6], *in, *rest;
    sws_buf_t    bufs[6];
    char         fpath[300];
    int          fd, rounds;
    u_char       small1[] = "head: ", small2[] = "value\r\n\r\n";
    static u_char big[70000];
    static u_char fdata[300000];

    for (i = 0; i < sizeof(big); i++) {
        big[i] = (u_char) (i * 7);
    }
    for (i = 0; i < sizeof(fdata); i++) {
        fdata[i] = (u_char) (i * 13 + 1);
    }
    snprintf(fpath, sizeof(fpath), "%s/file.bin", tdir);
    fd = open(fpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, fdata, sizeof(fdata)), (ssize_t) sizeof(fdata));

    pair_open(&p, 8192);            /* small socket buffers: WANT_WRITE often */

    /* two small memory buffers (coalesced), a flag-only one, a large
     * memory buffer (written from its own memory), a file range */
    sws_memzero(bufs, sizeof(bufs));
    bufs[0].pos = bufs[0].start = small1; bufs[0].last = bufs[0].end = small1 + 6;
    bufs[0].memory = 1;
    bufs[1].pos = bufs[1].start = small2; bufs[1].last = bufs[1].end = small2 + 9;
    bufs[1].memory = 1;
    bufs[2].flush = 1;
    bufs[3].pos = bufs[3].start = big; bufs[3].last = bufs[3].end = big + sizeof(big);
    bufs[3].temporary = 1;
    bufs[4].in_file = 1;
    bufs[4].fd = fd;
    bufs[4].file_pos = 1000;
    bufs[4].file_last = sizeof(fdata) - 1000;
    bufs[5].last_buf = 1;
    for (i = 0; i < 6; i++) {
        links[i].buf = &bufs[i];
        links[i].next = i < 5 ? &links[i + 1] : NULL;
        if (i != 2 && i != 5) {
            total += (size_t) sws_buf_size(&bufs[i]);
        }
    }
    want = malloc(total);
    got = malloc(total);
    memcpy(want, small1, 6);
    memcpy(want + 6, small2, 9);
    memcpy(want + 15, big, sizeof(big));
    memcpy(want + 15 + sizeof(big), fdata + 1000, sizeof(fdata) - 2000);

    in = &links[0];
    for (rounds = 0; in && rounds < 10000; rounds++) {
        rest = sws_ssl_send_chain(&p.c, in, 0);
        ck_assert_ptr_ne(rest, SWS_CHAIN_ERROR);
        in = rest;
        /* The socket filled (or not): the client takes what it can. */
        have = client_read(&p, got, have, total);
        p.wev.ready = 1;
    }
    have = client_read(&p, got, have, total);
    ck_assert_ptr_null(in);
    ck_assert_uint_gt(rounds, 3);              /* it did have to wait */
    ck_assert_uint_eq(have, total);
    ck_assert_mem_eq(got, want, total);
    ck_assert_int_eq(p.c.sent, (off_t) total);

    free(want);
    free(got);
    close(fd);
    pair_close(&p);
}
END_TEST

START_TEST(send_to_closed_peer_fails)
{
    pair_t       p;
    sws_buf_t    b;
    sws_chain_t  cl;
    static u_char data[100000];
    sws_chain_t *rest = NULL;
    int          i;

    pair_open(&p, 0);
    SSL_free(p.client);
    p.client = NULL;
    close(p.sv[1]);
    p.sv[1] = open("/dev/null", O_RDONLY);      /* pair_close closes it */
    sws_memzero(&b, sizeof(b));
    b.pos = b.start = data;
    b.last = b.end = data + sizeof(data);
    b.temporary = 1;
    cl.buf = &b;
    cl.next = NULL;
    for (i = 0; i < 10; i++) {
        rest = sws_ssl_send_chain(&p.c, &cl, 0);
        if (rest == SWS_CHAIN_ERROR) {
            break;
        }
        p.wev.ready = 1;
    }
    ck_assert_ptr_eq(rest, SWS_CHAIN_ERROR);
    ck_assert(p.wev.error);
    ck_assert(p.c.ssl->no_shutdown);
    pair_close(&p);
}
END_TEST

START_TEST(handshake_garbage_fails_at_info)
{
    pair_t                 p;
    struct sws_connection_s c;
    struct sws_event_s     rev, wev;
    int                    sv[2];

    (void) p;
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    sws_memzero(&c, sizeof(c));
    sws_memzero(&rev, sizeof(rev));
    sws_memzero(&wev, sizeof(wev));
    c.fd = sv[0];
    c.pool = sws_pool_create(4096, &tlog);
    c.log = &tlog;
    c.read = &rev;
    c.write = &wev;
    rev.data = wev.data = &c;
    sws_memzero(&p.ssl, sizeof(p.ssl));
    ck_assert_int_eq(sws_ssl_create(&p.ssl, c.pool, &tlog), SWS_OK);
    ck_assert_int_eq(sws_ssl_certificate(&p.ssl, cert_path, key_path, NULL), SWS_OK);
    ck_assert_int_eq(sws_ssl_create_connection(&p.ssl, &c), SWS_OK);
    ck_assert_int_eq(write(sv[1], "\x16\x03\x01\x00\x05hello", 10), 10);
    rev.ready = 1;
    ck_assert_int_eq(sws_ssl_handshake(&c), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "[info]"));
    ck_assert_ptr_nonnull(strstr(log_text(), "TLS handshake failed"));
    ck_assert_ptr_null(strstr(log_text(), "[error]"));
    sws_ssl_close(&c);
    close(sv[0]);
    close(sv[1]);
    sws_pool_destroy(c.pool);
}
END_TEST

static Suite *
ssl_suite(void)
{
    Suite *s = suite_create("ssl");
    TCase *tc = tcase_create("ssl");

    tcase_add_test(tc, hkdf_rfc5869_case1);
    tcase_add_test(tc, hkdf_rfc5869_case3_no_salt_no_info);
    tcase_add_test(tc, ticket_keys_per_period);
    tcase_add_test(tc, replay_ticket_once);
    tcase_add_test(tc, replay_full_zone_refuses);
    tcase_add_test(tc, password_file_lines);
    tcase_add_test(tc, context_and_certificate_errors);
    tcase_add_test(tc, recv_and_eof);
    tcase_add_test(tc, two_connections_share_the_bio);
    tcase_add_test(tc, send_chain_memory_and_file_with_retries);
    tcase_add_test(tc, send_to_closed_peer_fails);
    tcase_add_test(tc, handshake_garbage_fails_at_info);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;
    char     log_path[300], cmd[300];

    if (mkdtemp(tdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(log_path, sizeof(log_path), "%s/log", tdir);
    tlog.fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
    tlog.level = SWS_LOG_DEBUG;
    snprintf(cert_path, sizeof(cert_path), "%s/cert.pem", tdir);
    snprintf(key_path, sizeof(key_path), "%s/key.pem", tdir);
    snprintf(other_key_path, sizeof(other_key_path), "%s/other.pem", tdir);
    sws_time_update();
    signal(SIGPIPE, SIG_IGN);         /* as the server does (sws_process.c) */
    if (sws_ssl_init(&tlog) != SWS_OK) {
        return 1;
    }
    if (!make_cert(cert_path, key_path) || !make_cert(NULL, other_key_path)) {
        ERR_print_errors_fp(stderr);
        fprintf(stderr, "cannot make a test certificate\n");
        return 1;
    }

    sr = srunner_create(ssl_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    close(tlog.fd);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cleanup failed\n");
    }
    return failed == 0 ? 0 : 1;
}
