/*
 * libFuzzer target: datagrams to a QUIC listener of a real configuration
 * ("listen ... quic" with a certificate made at start), through the whole
 * of what a worker does with them (src/http/v3): connection ID lookup,
 * version negotiation, stateless resets, Retry, Initials that make a
 * connection (ngtcp2 and GnuTLS then run the handshake on what follows),
 * and what the connections send back (to a socket that refuses it: nothing
 * leaves). After each input the posted events run and every connection is
 * closed, so that nothing is kept from one input to the next.
 *
 * Input: datagrams, each a 2-byte big-endian length and its bytes (a
 * length past the end takes what is left). The first byte of the input,
 * bit 0: quic_retry on (a second configuration).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include "sws_http_core.h"
#include "sws_log_internal.h"
#include "v3/sws_http_v3.h"
#include "fuzz_cycle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_fmt[] =
    "error_log stderr emerg;\n"
    "events { }\n"
    "http {\n"
    "    access_log off;\n"
    "    server {\n"
    "        listen 127.0.0.1:1 quic;\n"
    "        server_name localhost;\n"
    "        ssl_certificate %s/cert.pem;\n"
    "        ssl_certificate_key %s/key.pem;\n"
    "        quic_retry %s;\n"
    "        http3_max_concurrent_streams 4;\n"
    "        root %s;\n"
    "    }\n"
    "}\n";

static sws_log_t        *fuzz_log;
static sws_udp_socket_t  fuzz_us[2];     /* quic_retry off, on */
static sws_connection_t  fuzz_conn;
static sws_pool_t       *fuzz_pool;      /* the sockets' buffers */

static void
fz_write(const char *dir, const char *name, const gnutls_datum_t *d)
{
    char  path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f == NULL || fwrite(d->data, 1, d->size, f) != d->size || fclose(f) != 0) {
        abort();
    }
}

/* A self-signed P-256 certificate for localhost, valid now. */
static void
fz_certificate(const char *dir)
{
    gnutls_x509_privkey_t key;
    gnutls_x509_crt_t     crt;
    gnutls_datum_t        out;
    unsigned char         serial = 1;
    time_t                now = time(NULL);

    if (gnutls_x509_privkey_init(&key) < 0
        || gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                        GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0) < 0
        || gnutls_x509_crt_init(&crt) < 0
        || gnutls_x509_crt_set_version(crt, 3) < 0
        || gnutls_x509_crt_set_serial(crt, &serial, 1) < 0
        || gnutls_x509_crt_set_activation_time(crt, now - 3600) < 0
        || gnutls_x509_crt_set_expiration_time(crt, now + 30 * 86400) < 0
        || gnutls_x509_crt_set_dn(crt, "CN=localhost", NULL) < 0
        || gnutls_x509_crt_set_key(crt, key) < 0
        || gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0)
    {
        abort();
    }
    if (gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out) < 0) {
        abort();
    }
    fz_write(dir, "cert.pem", &out);
    gnutls_free(out.data);
    if (gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &out) < 0) {
        abort();
    }
    fz_write(dir, "key.pem", &out);
    gnutls_free(out.data);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
}

/* A socket whose datagrams go nowhere: sends to an IP address fail on it. */
static void
fz_socket(sws_udp_socket_t *us, void *servers, sws_pool_t *pool)
{
    int sv[2];

    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv) != 0
        || sws_udp_init(us, sv[0], pool, fuzz_log) != SWS_OK)
    {
        abort();
    }
    close(sv[1]);
    us->handler = sws_http_v3_read_handler;
    us->data = servers;
    us->connection = &fuzz_conn;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char         dir[] = "/tmp/fuzz_http3_datagrams.XXXXXX", conf[2048];
    sws_cycle_t *cycle;
    void        *servers;
    int          retry;

    (void) argc; (void) argv;
    sws_time_init();
    sws_event_timer_init();
    fuzz_log = sws_log_stderr();
    fuzz_log->level = SWS_LOG_EMERG;
    if (mkdtemp(dir) == NULL) {
        abort();
    }
    fz_certificate(dir);
    fuzz_pool = sws_pool_create(4096, fuzz_log);
    for (retry = 0; retry < 2; retry++) {
        snprintf(conf, sizeof(conf), conf_fmt, dir, dir, retry ? "on" : "off", dir);
        servers = fuzz_read_conf(dir, conf, &cycle);
        fz_socket(&fuzz_us[retry], servers, fuzz_pool);
    }
    fuzz_conn.fd = -1;
    fuzz_conn.log = fuzz_log;
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sockaddr_in  peer = { .sin_family = AF_INET, .sin_port = 0x5111 };
    static struct sockaddr_in  local = { .sin_family = AF_INET, .sin_port = 0x0100 };
    sws_udp_socket_t          *us;
    sws_udp_dgram_t            d[8];
    u_char                    *copy[8];
    size_t                     len;
    sws_uint_t                 n = 0, i;

    if (size < 1) {
        return 0;
    }
    us = &fuzz_us[data[0] & 1];
    data++;
    size--;
    peer.sin_addr.s_addr = htonl(0xc0000201);         /* 192.0.2.1 */
    local.sin_addr.s_addr = htonl(0x7f000001);

    /* Up to 8 datagrams, in one batch as recvmmsg would give them. */
    while (size >= 2 && n < 8) {
        len = (size_t) data[0] << 8 | data[1];
        data += 2;
        size -= 2;
        if (len > size) {
            len = size;
        }
        if (len > SWS_UDP_DGRAM_SIZE) {
            len = SWS_UDP_DGRAM_SIZE;         /* longer ones are truncated: dropped */
        }
        copy[n] = malloc(len ? len : 1);      /* exactly: ASan sees an over-read */
        if (copy[n] == NULL) {
            abort();
        }
        memcpy(copy[n], data, len);
        memset(&d[n], 0, sizeof(d[n]));
        d[n].data = copy[n];
        d[n].len = len;
        memcpy(&d[n].peer, &peer, sizeof(peer));
        d[n].peerlen = sizeof(peer);
        memcpy(&d[n].local, &local, sizeof(local));
        d[n].locallen = sizeof(local);
        data += len;
        size -= len;
        n++;
    }
    if (n) {
        us->handler(us, d, n);
    }
    sws_event_process_posted();
    sws_http_v3_close_all(us);
    sws_event_process_posted();
    for (i = 0; i < n; i++) {
        free(copy[i]);
    }
    return 0;
}
