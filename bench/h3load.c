/*
 * h3load: an HTTP/3 load client (and one-shot client for the tests) on
 * ngtcp2 0.12 (GnuTLS crypto backend) and nghttp3 0.8, as Debian 12 ships
 * them. Debian's h2load has no HTTP/3.
 *
 *   h3load [-c N] [-m M] [-n REQUESTS | -d SECONDS] [-k] [--no-gso]
 *          [--method M] [--data TEXT|@FILE] [-H 'Name: value']...
 *          [--trailer 'name: value']... [--expect-continue] [--window BYTES] [--stall]
 *          [--print] [-o FILE] [--json] URL [PATH|URL]...
 *
 * N connections, each keeping M requests (streams) in flight; the requests
 * go round the URL and the further paths. One thread, one epoll loop, one
 * connected UDP socket per connection; packets leave with GSO (one
 * sendmmsg() of runs of equal-sized datagrams) and arrive with GRO, unless
 * --no-gso. The summary (see print_summary) is one fact per line, or one
 * JSON object with --json; the client's own CPU time is getrusage()'s.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <ngtcp2/ngtcp2_crypto_gnutls.h>
#include <nghttp3/nghttp3.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define MAX_PKT        1500     /* the largest datagram ngtcp2 is let write */
#define BATCH_PKTS     64       /* datagrams gathered before one sendmmsg() */
#define GSO_RUN_BYTES  65000    /* a GSO send stays under the IP length limit */
#define RECV_MSGS      16
#define RECV_BUF       65536    /* one GRO-coalesced read */
#define READ_BATCHES   4        /* recvmmsg calls per connection per round */
#define MAX_HEADERS    32
#define MAX_TARGETS    64

/* ---- options ----------------------------------------------------------- */

static struct {
    int conns;
    int streams;
    uint64_t requests;          /* 0: by duration */
    double duration;            /* seconds, 0: by count */
    double timeout;             /* seconds: whole run for -n, grace after -d */
    int insecure;
    int gso;
    int print;
    int json;
    const char *output;
    const char *method;
    const char *data;
    size_t datalen;
    const char *headers[MAX_HEADERS];
    int nheaders;
    const char *trailers[MAX_HEADERS];  /* after a request body (--trailer) */
    int ntrailers;
    int expect_continue;        /* the body waits for a 100 (Continue) */
    uint8_t *raw;               /* --raw HEX: bytes on a request stream of their own */
    size_t rawlen;
    const char *host;           /* as in the URL */
    const char *port;
    char authority[300];
    const char *paths[MAX_TARGETS];
    int npaths;
    uint64_t window;            /* a stream's initial receive window */
    int debug;                  /* ngtcp2's log on stderr */
    int stall;                  /* take response bodies without giving back flow control */
} opt = {
    .conns = 1, .streams = 1, .timeout = 30.0, .gso = 1, .method = "GET",
    .window = 1024 * 1024,
};

/* ---- state ----------------------------------------------------------- */

struct conn;

struct stream {
    struct conn *c;
    int64_t id;
    uint64_t started;           /* ns */
    uint64_t body;
    int status;
    int ended;                  /* the response's end seen */
    int continued;              /* a 100 (Continue) came (--expect-continue) */
    struct stream *next_free;
};

struct conn {
    int fd;
    int index;
    ngtcp2_conn *qc;
    nghttp3_conn *h3;
    gnutls_session_t tls;
    ngtcp2_crypto_conn_ref ref;
    struct sockaddr_storage local, remote;
    socklen_t locallen, remotelen;
    ngtcp2_path path;
    ngtcp2_connection_close_error ccerr;
    struct stream *streams;
    int nslots;
    struct stream *free;
    int active;                 /* requests without their response's end */
    int handshaken;
    int dead;                   /* closed: no more I/O */
    int goaway;                 /* the server said no more requests */
    int want_requests;          /* open new streams after the current read */
    uint64_t done;              /* responses complete on it */
    uint64_t last_done;         /* ns: its last one's end */
    int64_t raw_id;             /* --raw: its stream, -1 before */
    size_t raw_off;             /* of it written */
    int raw_done;
    char why[160];              /* what killed it */
};

static struct {
    uint64_t issued, done, ok, failed, errored, timedout;
    uint64_t status[6];         /* by hundreds: 1xx .. 5xx, [0] other */
    uint64_t body_bytes;
    uint64_t conn_ok, conn_failed;
    uint64_t send_dropped;      /* datagrams not sent (EAGAIN) */
    uint64_t packets_out, packets_in, sends, recvs;
    size_t largest_in;          /* the largest datagram received (path MTU) */
    int max_active;             /* most requests in flight on one connection */
    uint64_t *lat;              /* ns per completed request */
    size_t nlat, cap;
    char first_error[200];
} st;

static struct conn *conns;
static gnutls_certificate_credentials_t cred;
static FILE *out_file;
static uint64_t t_start, t_stop_issuing, t_deadline, t_last_done;
static volatile sig_atomic_t interrupted;
static uint8_t sendbuf[BATCH_PKTS * MAX_PKT];
static int gso_ok = 1;          /* the kernel took a GSO send */
static uint64_t next_path;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("h3load: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void note_error(const char *fmt, ...)
{
    va_list ap;
    if (st.first_error[0])
        return;
    va_start(ap, fmt);
    vsnprintf(st.first_error, sizeof(st.first_error), fmt, ap);
    va_end(ap);
}

static void conn_kill(struct conn *c, const char *fmt, ...)
{
    va_list ap;
    if (c->dead)
        return;
    c->dead = 1;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
    note_error("connection %d: %s", c->index, c->why);
}

static int issuing(uint64_t now)
{
    if (interrupted)
        return 0;
    if (opt.requests && st.issued >= opt.requests)
        return 0;
    if (opt.duration > 0 && now >= t_stop_issuing)
        return 0;
    return 1;
}

/* ---- requests ------------------------------------------------------------ */

static nghttp3_nv make_nv(const char *name, size_t namelen, const char *value, size_t valuelen)
{
    nghttp3_nv nv = {
        .name = (uint8_t *) name, .value = (uint8_t *) value,
        .namelen = namelen, .valuelen = valuelen, .flags = NGHTTP3_NV_FLAG_NONE,
    };
    return nv;
}

/* "Name: value" fields (-H, --trailer) appended to nva at n. */
static size_t add_fields(nghttp3_nv *nva, size_t n, const char **fields, int count)
{
    for (int i = 0; i < count; i++) {
        const char *h = fields[i], *colon = strchr(h, ':');
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        nva[n++] = make_nv(h, (size_t) (colon - h), v, strlen(v));
    }
    return n;
}

static nghttp3_ssize read_body(nghttp3_conn *h3, int64_t stream_id, nghttp3_vec *vec,
                               size_t veccnt, uint32_t *pflags, void *user_data,
                               void *stream_user_data)
{
    nghttp3_nv nva[MAX_HEADERS];
    struct stream *s = stream_user_data;

    (void) veccnt; (void) user_data;
    if (opt.expect_continue && !s->continued)
        return NGHTTP3_ERR_WOULDBLOCK;  /* resumed by the 100 */
    /* the whole body at once: it lives as long as the run */
    vec[0].base = (uint8_t *) opt.data;
    vec[0].len = opt.datalen;
    *pflags |= NGHTTP3_DATA_FLAG_EOF;
    if (opt.ntrailers) {
        /* the stream ends with the trailer section instead */
        *pflags |= NGHTTP3_DATA_FLAG_NO_END_STREAM;
        if (nghttp3_conn_submit_trailers(h3, stream_id, nva,
                                         add_fields(nva, 0, opt.trailers, opt.ntrailers)) != 0)
            return NGHTTP3_ERR_CALLBACK_FAILURE;
    }
    return 1;
}

static int submit_one(struct conn *c)
{
    nghttp3_nv nva[MAX_HEADERS + 8];
    size_t n = 0;
    char lenbuf[32];
    struct stream *s = c->free;
    int64_t id;
    int rv;
    const char *path;

    if (!s)
        return -1;
    rv = ngtcp2_conn_open_bidi_stream(c->qc, &id, s);
    if (rv != 0)
        return -1;                  /* NGTCP2_ERR_STREAM_ID_BLOCKED: wait for MAX_STREAMS */
    c->free = s->next_free;
    memset(s, 0, sizeof(*s));
    s->c = c;
    s->id = id;
    s->started = now_ns();

    path = opt.paths[next_path++ % (uint64_t) opt.npaths];
    nva[n++] = make_nv(":method", 7, opt.method, strlen(opt.method));
    nva[n++] = make_nv(":scheme", 7, "https", 5);
    nva[n++] = make_nv(":authority", 10, opt.authority, strlen(opt.authority));
    nva[n++] = make_nv(":path", 5, path, strlen(path));
    nva[n++] = make_nv("user-agent", 10, "h3load", 6);
    if (opt.data) {
        snprintf(lenbuf, sizeof(lenbuf), "%zu", opt.datalen);
        nva[n++] = make_nv("content-length", 14, lenbuf, strlen(lenbuf));
    }
    if (opt.data && opt.expect_continue)
        nva[n++] = make_nv("expect", 6, "100-continue", 12);
    n = add_fields(nva, n, opt.headers, opt.nheaders);
    nghttp3_data_reader dr = { .read_data = read_body };
    rv = nghttp3_conn_submit_request(c->h3, id, nva, n, opt.data ? &dr : NULL, s);
    if (rv != 0) {
        conn_kill(c, "nghttp3_conn_submit_request: %s", nghttp3_strerror(rv));
        return -1;
    }
    st.issued++;
    c->active++;
    if (c->active > st.max_active)
        st.max_active = c->active;
    return 0;
}

static void fill_requests(struct conn *c)
{
    uint64_t now = now_ns();
    c->want_requests = 0;
    if (c->dead || !c->h3 || !c->handshaken || c->goaway)
        return;
    while (c->active < opt.streams && issuing(now))
        if (submit_one(c) != 0)
            break;
}

static void lat_add(uint64_t ns)
{
    if (st.nlat == st.cap) {
        st.cap = st.cap ? st.cap * 2 : 65536;
        st.lat = realloc(st.lat, st.cap * sizeof(*st.lat));
        if (!st.lat)
            die("out of memory");
    }
    st.lat[st.nlat++] = ns;
}

/* The response's end: counted, and the connection may send its next
 * request now (the stream itself closes once the server has acknowledged
 * the request's end, a little later). */
static void response_done(struct conn *c, struct stream *s)
{
    uint64_t now = now_ns();
    int k = s->status / 100;

    s->ended = 1;
    st.done++;
    st.status[k >= 1 && k <= 5 ? k : 0]++;
    if (s->status >= 200 && s->status < 400)
        st.ok++;
    else
        st.failed++;
    lat_add(now - s->started);
    t_last_done = now;
    c->done++;
    c->last_done = now;
    c->active--;
    c->want_requests = 1;
}

static void stream_closed(struct conn *c, struct stream *s, uint64_t app_error)
{
    if (!s->ended) {
        st.done++;
        st.errored++;
        note_error("stream %" PRId64 " on connection %d closed without a complete response, "
                   "error 0x%" PRIx64, s->id, c->index, app_error);
        c->active--;
        c->want_requests = 1;
    }
    s->next_free = c->free;
    c->free = s;
}

/* ---- nghttp3 callbacks ---------------------------------------------------- */

static int h3_stream_close(nghttp3_conn *h3, int64_t stream_id, uint64_t app_error_code,
                           void *user_data, void *stream_user_data)
{
    (void) h3; (void) stream_id;
    if (stream_user_data)
        stream_closed(user_data, stream_user_data, app_error_code);
    return 0;
}

static void extend_window(struct conn *c, int64_t stream_id, size_t n)
{
    ngtcp2_conn_extend_max_stream_offset(c->qc, stream_id, n);
    ngtcp2_conn_extend_max_offset(c->qc, n);
}

static int h3_recv_data(nghttp3_conn *h3, int64_t stream_id, const uint8_t *data,
                        size_t datalen, void *user_data, void *stream_user_data)
{
    struct stream *s = stream_user_data;
    (void) h3;
    if (s) {
        s->body += datalen;
        st.body_bytes += datalen;
        if (out_file && fwrite(data, 1, datalen, out_file) != datalen)
            die("writing the body: %s", strerror(errno));
    }
    if (!opt.stall)
        extend_window(user_data, stream_id, datalen);
    return 0;
}

static int h3_deferred_consume(nghttp3_conn *h3, int64_t stream_id, size_t consumed,
                               void *user_data, void *stream_user_data)
{
    (void) h3; (void) stream_user_data;
    extend_window(user_data, stream_id, consumed);
    return 0;
}

static int h3_recv_header(nghttp3_conn *h3, int64_t stream_id, int32_t token,
                          nghttp3_rcbuf *name, nghttp3_rcbuf *value, uint8_t flags,
                          void *user_data, void *stream_user_data)
{
    struct stream *s = stream_user_data;
    nghttp3_vec n = nghttp3_rcbuf_get_buf(name), v = nghttp3_rcbuf_get_buf(value);
    (void) h3; (void) stream_id; (void) flags; (void) user_data;
    if (!s)
        return 0;
    if (token == NGHTTP3_QPACK_TOKEN__STATUS) {
        int code = 0;
        for (size_t i = 0; i < v.len && i < 3; i++)
            code = code * 10 + (v.base[i] - '0');
        /* an interim (1xx) answer is followed by the final one */
        if (code >= 200 || !s->status)
            s->status = code;
        if (code == 100 && opt.expect_continue && !s->continued) {
            s->continued = 1;
            if (nghttp3_conn_resume_stream(h3, stream_id) != 0)
                return NGHTTP3_ERR_CALLBACK_FAILURE;
        }
    }
    if (opt.print)
        printf("%.*s: %.*s\n", (int) n.len, n.base, (int) v.len, v.base);
    return 0;
}

static int h3_end_headers(nghttp3_conn *h3, int64_t stream_id, int fin, void *user_data,
                          void *stream_user_data)
{
    (void) h3; (void) stream_id; (void) fin; (void) user_data; (void) stream_user_data;
    if (opt.print)
        putchar('\n');
    return 0;
}

static int h3_end_stream(nghttp3_conn *h3, int64_t stream_id, void *user_data,
                         void *stream_user_data)
{
    struct stream *s = stream_user_data;
    (void) h3; (void) stream_id;
    if (s && !s->ended)
        response_done(user_data, s);
    return 0;
}

static int h3_stop_sending(nghttp3_conn *h3, int64_t stream_id, uint64_t app_error_code,
                           void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    (void) h3; (void) stream_user_data;
    return ngtcp2_conn_shutdown_stream_read(c->qc, stream_id, app_error_code) == 0
           ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int h3_reset_stream(nghttp3_conn *h3, int64_t stream_id, uint64_t app_error_code,
                           void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    (void) h3; (void) stream_user_data;
    return ngtcp2_conn_shutdown_stream_write(c->qc, stream_id, app_error_code) == 0
           ? 0 : NGHTTP3_ERR_CALLBACK_FAILURE;
}

static int h3_shutdown(nghttp3_conn *h3, int64_t id, void *user_data)
{
    struct conn *c = user_data;
    (void) h3; (void) id;
    c->goaway = 1;
    return 0;
}

static int h3_setup(struct conn *c)
{
    nghttp3_callbacks cb = {
        .stream_close = h3_stream_close,
        .recv_data = h3_recv_data,
        .deferred_consume = h3_deferred_consume,
        .recv_header = h3_recv_header,
        .end_headers = h3_end_headers,
        .end_stream = h3_end_stream,
        .stop_sending = h3_stop_sending,
        .reset_stream = h3_reset_stream,
        .shutdown = h3_shutdown,
    };
    nghttp3_settings settings;
    int64_t ctrl, enc, dec;

    if (c->h3)
        return 0;
    nghttp3_settings_default(&settings);
    settings.qpack_max_dtable_capacity = 4096;
    settings.qpack_blocked_streams = 100;
    if (nghttp3_conn_client_new(&c->h3, &cb, &settings, NULL, c) != 0)
        return -1;
    if (ngtcp2_conn_open_uni_stream(c->qc, &ctrl, NULL) != 0
        || nghttp3_conn_bind_control_stream(c->h3, ctrl) != 0
        || ngtcp2_conn_open_uni_stream(c->qc, &enc, NULL) != 0
        || ngtcp2_conn_open_uni_stream(c->qc, &dec, NULL) != 0
        || nghttp3_conn_bind_qpack_streams(c->h3, enc, dec) != 0)
        return -1;
    return 0;
}

/* ---- ngtcp2 callbacks ------------------------------------------------------ */

static int q_recv_rx_key(ngtcp2_conn *qc, ngtcp2_crypto_level level, void *user_data)
{
    (void) qc;
    /* the server's SETTINGS may come with its first 1-RTT packets */
    if (level == NGTCP2_CRYPTO_LEVEL_APPLICATION && h3_setup(user_data) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_handshake_completed(ngtcp2_conn *qc, void *user_data)
{
    struct conn *c = user_data;
    gnutls_datum_t alpn;
    (void) qc;
    if (gnutls_alpn_get_selected_protocol(c->tls, &alpn) != 0
        || alpn.size != 2 || memcmp(alpn.data, "h3", 2) != 0) {
        conn_kill(c, "the server did not select ALPN h3");
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    c->handshaken = 1;
    st.conn_ok++;
    c->want_requests = 1;
    /* --raw: a request stream that nghttp3 does not know, its bytes
     * written as they are (a test of the server's checks) */
    if (opt.raw && c->raw_id < 0 && ngtcp2_conn_open_bidi_stream(c->qc, &c->raw_id, NULL) != 0)
        c->raw_id = -1;
    return 0;
}

static int q_recv_stream_data(ngtcp2_conn *qc, uint32_t flags, int64_t stream_id,
                              uint64_t offset, const uint8_t *data, size_t datalen,
                              void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    nghttp3_ssize n;
    (void) qc; (void) offset; (void) stream_user_data;
    if (!c->h3 && h3_setup(c) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    n = nghttp3_conn_read_stream(c->h3, stream_id, data, datalen,
                                 flags & NGTCP2_STREAM_DATA_FLAG_FIN);
    if (n < 0) {
        conn_kill(c, "nghttp3_conn_read_stream: %s", nghttp3_strerror((int) n));
        ngtcp2_connection_close_error_set_application_error(
            &c->ccerr, nghttp3_err_infer_quic_app_error_code((int) n), NULL, 0);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    extend_window(c, stream_id, (size_t) n);
    return 0;
}

static int q_acked_stream_data_offset(ngtcp2_conn *qc, int64_t stream_id, uint64_t offset,
                                      uint64_t datalen, void *user_data,
                                      void *stream_user_data)
{
    struct conn *c = user_data;
    (void) qc; (void) offset; (void) stream_user_data;
    if (c->h3 && nghttp3_conn_add_ack_offset(c->h3, stream_id, datalen) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stream_close(ngtcp2_conn *qc, uint32_t flags, int64_t stream_id,
                          uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    int rv;
    (void) qc; (void) stream_user_data;
    if (!(flags & NGTCP2_STREAM_CLOSE_FLAG_APP_ERROR_CODE_SET))
        app_error_code = NGHTTP3_H3_NO_ERROR;
    if (!c->h3)
        return 0;
    rv = nghttp3_conn_close_stream(c->h3, stream_id, app_error_code);
    if (rv != 0 && rv != NGHTTP3_ERR_STREAM_NOT_FOUND) {
        ngtcp2_connection_close_error_set_application_error(
            &c->ccerr, nghttp3_err_infer_quic_app_error_code(rv), NULL, 0);
        return NGTCP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

static int q_stream_reset(ngtcp2_conn *qc, int64_t stream_id, uint64_t final_size,
                          uint64_t app_error_code, void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    (void) qc; (void) final_size; (void) stream_user_data;
    if (stream_id == c->raw_id) {
        note_error("connection %d: the raw stream was reset by the server: error 0x%" PRIx64,
                   c->index, app_error_code);
        return 0;
    }
    if (c->h3 && nghttp3_conn_shutdown_stream_read(c->h3, stream_id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static int q_stream_stop_sending(ngtcp2_conn *qc, int64_t stream_id, uint64_t app_error_code,
                                 void *user_data, void *stream_user_data)
{
    return q_stream_reset(qc, stream_id, 0, app_error_code, user_data, stream_user_data);
}

static int q_extend_max_local_streams_bidi(ngtcp2_conn *qc, uint64_t max_streams,
                                           void *user_data)
{
    struct conn *c = user_data;
    (void) qc; (void) max_streams;
    c->want_requests = 1;
    return 0;
}

static int q_extend_max_stream_data(ngtcp2_conn *qc, int64_t stream_id, uint64_t max_data,
                                    void *user_data, void *stream_user_data)
{
    struct conn *c = user_data;
    (void) qc; (void) max_data; (void) stream_user_data;
    if (c->h3 && nghttp3_conn_unblock_stream(c->h3, stream_id) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    return 0;
}

static void q_rand(uint8_t *dest, size_t destlen, const ngtcp2_rand_ctx *rand_ctx)
{
    (void) rand_ctx;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, dest, destlen) != 0)
        die("gnutls_rnd failed");
}

static int q_get_new_connection_id(ngtcp2_conn *qc, ngtcp2_cid *cid, uint8_t *token,
                                   size_t cidlen, void *user_data)
{
    (void) qc; (void) user_data;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, cid->data, cidlen) != 0
        || gnutls_rnd(GNUTLS_RND_RANDOM, token, NGTCP2_STATELESS_RESET_TOKENLEN) != 0)
        return NGTCP2_ERR_CALLBACK_FAILURE;
    cid->datalen = cidlen;
    return 0;
}

static void q_log(void *user_data, const char *fmt, ...)
{
    va_list ap;
    (void) user_data;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static ngtcp2_conn *get_conn(ngtcp2_crypto_conn_ref *ref)
{
    return ((struct conn *) ref->user_data)->qc;
}

/* ---- UDP --------------------------------------------------------------------- */

/* Sends the gathered datagrams: with GSO, each run of equal-sized ones
 * (the last of a run may be shorter) as one message; else one message each.
 * A datagram the socket cannot take now is dropped: QUIC sends it again. */
static void send_batch(struct conn *c, const size_t *lens, size_t npkts)
{
    struct mmsghdr msgs[BATCH_PKTS];
    struct iovec iov[BATCH_PKTS];
    union { char buf[CMSG_SPACE(sizeof(uint16_t))]; struct cmsghdr align; } ctl[BATCH_PKTS];
    size_t nmsgs = 0, off = 0, i = 0;

    while (i < npkts) {
        size_t seg = lens[i], j = i + 1, bytes = lens[i];
        if (opt.gso && gso_ok) {
            while (j < npkts && bytes + lens[j] <= GSO_RUN_BYTES && lens[j] <= seg) {
                bytes += lens[j];
                if (lens[j++] < seg)
                    break;          /* a shorter datagram ends the run */
            }
        }
        memset(&msgs[nmsgs], 0, sizeof(msgs[nmsgs]));
        iov[nmsgs].iov_base = sendbuf + off;
        iov[nmsgs].iov_len = bytes;
        msgs[nmsgs].msg_hdr.msg_iov = &iov[nmsgs];
        msgs[nmsgs].msg_hdr.msg_iovlen = 1;
        if (j - i > 1) {
            struct cmsghdr *cm;
            uint16_t gso = (uint16_t) seg;
            msgs[nmsgs].msg_hdr.msg_control = ctl[nmsgs].buf;
            msgs[nmsgs].msg_hdr.msg_controllen = sizeof(ctl[nmsgs].buf);
            cm = CMSG_FIRSTHDR(&msgs[nmsgs].msg_hdr);
            cm->cmsg_level = SOL_UDP;
            cm->cmsg_type = UDP_SEGMENT;
            cm->cmsg_len = CMSG_LEN(sizeof(gso));
            memcpy(CMSG_DATA(cm), &gso, sizeof(gso));
        }
        off += bytes;
        nmsgs++;
        i = j;
    }
    st.packets_out += npkts;

    for (size_t k = 0; k < nmsgs;) {
        int n = sendmmsg(c->fd, msgs + k, (unsigned) (nmsgs - k), 0);
        st.sends++;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EIO && opt.gso && gso_ok) {
                /* no GSO here (a device without checksum offload): off */
                gso_ok = 0;
                note_error("GSO refused by the kernel (EIO): sending without it");
            }
            st.send_dropped++;
            k++;                    /* EAGAIN and the rest: this one is lost */
            continue;
        }
        k += (size_t) n;
    }
}

static void conn_write(struct conn *c)
{
    size_t lens[BATCH_PKTS], npkts = 0, off = 0;
    size_t max_pkt, max_pkts;
    ngtcp2_pkt_info pi;
    uint64_t ts = now_ns();

    if (c->dead)
        return;
    max_pkt = ngtcp2_conn_get_max_tx_udp_payload_size(c->qc);
    if (max_pkt > MAX_PKT)
        max_pkt = MAX_PKT;
    max_pkts = ngtcp2_conn_get_send_quantum(c->qc) / max_pkt;
    if (max_pkts < 1)
        max_pkts = 1;
    if (max_pkts > BATCH_PKTS)
        max_pkts = BATCH_PKTS;

    for (;;) {
        int64_t stream_id = -1;
        int fin = 0;
        nghttp3_vec vec[16];
        nghttp3_ssize nvec = 0;
        ngtcp2_ssize ndatalen = -1, nwrite;
        uint32_t flags = NGTCP2_WRITE_STREAM_FLAG_MORE;

        int raw = c->raw_id >= 0 && !c->raw_done;

        if (raw) {
            stream_id = c->raw_id;
            vec[0].base = opt.raw + c->raw_off;
            vec[0].len = opt.rawlen - c->raw_off;
            nvec = 1;
            fin = 1;
        } else if (c->h3 && ngtcp2_conn_get_max_data_left(c->qc)) {
            nvec = nghttp3_conn_writev_stream(c->h3, &stream_id, &fin, vec, 16);
            if (nvec < 0) {
                conn_kill(c, "nghttp3_conn_writev_stream: %s", nghttp3_strerror((int) nvec));
                return;
            }
        }
        if (fin)
            flags |= NGTCP2_WRITE_STREAM_FLAG_FIN;
        nwrite = ngtcp2_conn_writev_stream(c->qc, &c->path, &pi, sendbuf + off, max_pkt,
                                           &ndatalen, flags, stream_id,
                                           (const ngtcp2_vec *) vec, (size_t) nvec, ts);
        if (raw && (nwrite >= 0 || nwrite == NGTCP2_ERR_WRITE_MORE)) {
            if (ndatalen >= 0)
                c->raw_off += (size_t) ndatalen;
            c->raw_done = c->raw_off == opt.rawlen && ndatalen >= 0;
            if (nwrite == NGTCP2_ERR_WRITE_MORE)
                continue;
            ndatalen = -1;
        } else if (raw) {
            c->raw_done = 1;            /* shut, or blocked: as far as it went */
            if (nwrite == NGTCP2_ERR_STREAM_DATA_BLOCKED || nwrite == NGTCP2_ERR_STREAM_SHUT_WR)
                continue;
        }
        if (nwrite < 0) {
            switch (nwrite) {
            case NGTCP2_ERR_STREAM_DATA_BLOCKED:
                nghttp3_conn_block_stream(c->h3, stream_id);
                continue;
            case NGTCP2_ERR_STREAM_SHUT_WR:
                nghttp3_conn_shutdown_stream_write(c->h3, stream_id);
                continue;
            case NGTCP2_ERR_WRITE_MORE:
                if (nghttp3_conn_add_write_offset(c->h3, stream_id, (size_t) ndatalen) != 0) {
                    conn_kill(c, "nghttp3_conn_add_write_offset failed");
                    return;
                }
                continue;
            }
            conn_kill(c, "ngtcp2_conn_writev_stream: %s", ngtcp2_strerror((int) nwrite));
            return;
        }
        if (ndatalen >= 0 && c->h3
            && nghttp3_conn_add_write_offset(c->h3, stream_id, (size_t) ndatalen) != 0) {
            conn_kill(c, "nghttp3_conn_add_write_offset failed");
            return;
        }
        if (nwrite == 0)
            break;
        lens[npkts++] = (size_t) nwrite;
        off += (size_t) nwrite;
        /* a send quantum's worth leaves at once; then on with the next
         * (ngtcp2 says when there is nothing more it may send: 0 above) */
        if (npkts == max_pkts) {
            send_batch(c, lens, npkts);
            npkts = off = 0;
        }
    }
    if (npkts)
        send_batch(c, lens, npkts);
    /* The pacer: not during the handshake, where its first gap comes from
     * the initial RTT guess (333 ms) and would hold the client's Finished
     * back for many real round trips. */
    if (c->handshaken)
        ngtcp2_conn_update_pkt_tx_time(c->qc, ts);
}

static void conn_read(struct conn *c)
{
    static uint8_t bufs[RECV_MSGS][RECV_BUF];
    struct mmsghdr msgs[RECV_MSGS];
    struct iovec iov[RECV_MSGS];
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl[RECV_MSGS];
    ngtcp2_pkt_info pi = { 0 };

    /* At most READ_BATCHES reads, then the next connection's turn (epoll
     * is level-triggered: the rest is read on the next round). Reading one
     * busy connection until its socket is empty starved the others of
     * their acknowledgements: the client itself was unfair. */
    for (int batch = 0; batch < READ_BATCHES && !c->dead; batch++) {
        int n;
        for (int i = 0; i < RECV_MSGS; i++) {
            memset(&msgs[i], 0, sizeof(msgs[i]));
            iov[i].iov_base = bufs[i];
            iov[i].iov_len = RECV_BUF;
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
            msgs[i].msg_hdr.msg_control = ctl[i].buf;
            msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
        }
        n = recvmmsg(c->fd, msgs, RECV_MSGS, 0, NULL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                conn_kill(c, "recvmmsg: %s", strerror(errno));
            return;
        }
        st.recvs++;
        for (int i = 0; i < n && !c->dead; i++) {
            size_t len = msgs[i].msg_len, seg = len;
            struct cmsghdr *cm;
            for (cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm;
                 cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
                if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
                    int g;
                    memcpy(&g, CMSG_DATA(cm), sizeof(g));
                    if (g > 0)
                        seg = (size_t) g;
                }
            }
            /* GRO: several datagrams of `seg` bytes (the last may be shorter) */
            for (size_t o = 0; o < len && !c->dead; o += seg) {
                size_t one = len - o < seg ? len - o : seg;
                int rv = ngtcp2_conn_read_pkt(c->qc, &c->path, &pi, bufs[i] + o, one, now_ns());
                st.packets_in++;
                if (one > st.largest_in)
                    st.largest_in = one;
                if (rv == 0)
                    continue;
                if (rv == NGTCP2_ERR_DRAINING) {
                    ngtcp2_connection_close_error cc;
                    ngtcp2_conn_get_connection_close_error(c->qc, &cc);
                    conn_kill(c, "closed by the server: %s error 0x%" PRIx64,
                              cc.type == NGTCP2_CONNECTION_CLOSE_ERROR_CODE_TYPE_APPLICATION
                              ? "application" : "transport", cc.error_code);
                } else if (rv == NGTCP2_ERR_CRYPTO) {
                    ngtcp2_connection_close_error_set_transport_error_tls_alert(
                        &c->ccerr, ngtcp2_conn_get_tls_alert(c->qc), NULL, 0);
                    conn_kill(c, "TLS handshake failed: alert %u (%s)",
                              ngtcp2_conn_get_tls_alert(c->qc),
                              gnutls_alert_get_name((gnutls_alert_description_t)
                                                    ngtcp2_conn_get_tls_alert(c->qc)));
                } else if (!c->dead) {
                    ngtcp2_connection_close_error_set_transport_error_liberr(&c->ccerr, rv,
                                                                             NULL, 0);
                    conn_kill(c, "ngtcp2_conn_read_pkt: %s", ngtcp2_strerror(rv));
                }
            }
        }
        if (n < RECV_MSGS)
            return;
        /* more to read: acknowledge what came so far first */
        conn_write(c);
    }
}

/* ---- connections --------------------------------------------------------------- */

static void conn_open(struct conn *c, const struct addrinfo *ai)
{
    ngtcp2_callbacks cb = {
        .client_initial = ngtcp2_crypto_client_initial_cb,
        .recv_crypto_data = ngtcp2_crypto_recv_crypto_data_cb,
        .encrypt = ngtcp2_crypto_encrypt_cb,
        .decrypt = ngtcp2_crypto_decrypt_cb,
        .hp_mask = ngtcp2_crypto_hp_mask_cb,
        .recv_retry = ngtcp2_crypto_recv_retry_cb,
        .update_key = ngtcp2_crypto_update_key_cb,
        .delete_crypto_aead_ctx = ngtcp2_crypto_delete_crypto_aead_ctx_cb,
        .delete_crypto_cipher_ctx = ngtcp2_crypto_delete_crypto_cipher_ctx_cb,
        .get_path_challenge_data = ngtcp2_crypto_get_path_challenge_data_cb,
        .version_negotiation = ngtcp2_crypto_version_negotiation_cb,
        .rand = q_rand,
        .get_new_connection_id = q_get_new_connection_id,
        .handshake_completed = q_handshake_completed,
        .recv_rx_key = q_recv_rx_key,
        .recv_stream_data = q_recv_stream_data,
        .acked_stream_data_offset = q_acked_stream_data_offset,
        .stream_close = q_stream_close,
        .stream_reset = q_stream_reset,
        .stream_stop_sending = q_stream_stop_sending,
        .extend_max_local_streams_bidi = q_extend_max_local_streams_bidi,
        .extend_max_stream_data = q_extend_max_stream_data,
    };
    ngtcp2_settings settings;
    ngtcp2_transport_params params;
    ngtcp2_cid dcid, scid;
    int one = 1, bufsize = 4 << 20, rv;
    gnutls_datum_t alpn = { (unsigned char *) "h3", 2 };
    struct in6_addr a6;
    struct in_addr a4;

    c->fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (c->fd < 0)
        die("socket: %s", strerror(errno));
    setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof(bufsize));
    setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof(bufsize));
    if (opt.gso)
        setsockopt(c->fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
    if (connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0)
        die("connect: %s", strerror(errno));
    memcpy(&c->remote, ai->ai_addr, ai->ai_addrlen);
    c->remotelen = ai->ai_addrlen;
    c->locallen = sizeof(c->local);
    if (getsockname(c->fd, (struct sockaddr *) &c->local, &c->locallen) != 0)
        die("getsockname: %s", strerror(errno));
    c->path.local.addr = (ngtcp2_sockaddr *) &c->local;
    c->path.local.addrlen = c->locallen;
    c->path.remote.addr = (ngtcp2_sockaddr *) &c->remote;
    c->path.remote.addrlen = c->remotelen;

    dcid.datalen = 18;
    scid.datalen = 17;
    if (gnutls_rnd(GNUTLS_RND_RANDOM, dcid.data, dcid.datalen) != 0
        || gnutls_rnd(GNUTLS_RND_RANDOM, scid.data, scid.datalen) != 0)
        die("gnutls_rnd failed");

    ngtcp2_settings_default(&settings);
    settings.initial_ts = now_ns();
    if (opt.debug)
        settings.log_printf = q_log;
    if (opt.timeout * 1e9 < (double) settings.handshake_timeout)
        settings.handshake_timeout = (ngtcp2_duration) (opt.timeout * 1e9);
    /* windows that grow with the path, up to what a 1 MiB answer needs */
    settings.max_stream_window = opt.window > 16u << 20 ? opt.window : 16u << 20;
    settings.max_window = settings.max_stream_window * 2;
    ngtcp2_transport_params_default(&params);
    params.initial_max_stream_data_bidi_local = opt.window;
    params.initial_max_stream_data_uni = 256 * 1024;
    params.initial_max_data = opt.window * (uint64_t) (opt.streams < 16 ? 16 : opt.streams);
    params.initial_max_streams_bidi = 0;
    params.initial_max_streams_uni = 100;
    params.max_idle_timeout = 30 * NGTCP2_SECONDS;

    rv = ngtcp2_conn_client_new(&c->qc, &dcid, &scid, &c->path, NGTCP2_PROTO_VER_V1, &cb,
                                &settings, &params, NULL, c);
    if (rv != 0)
        die("ngtcp2_conn_client_new: %s", ngtcp2_strerror(rv));

    if (gnutls_init(&c->tls, GNUTLS_CLIENT | GNUTLS_NO_END_OF_EARLY_DATA) != 0)
        die("gnutls_init failed");
    /* QUIC: TLS 1.3 only, without the middlebox compatibility mode */
    if (gnutls_priority_set_direct(c->tls, "NORMAL:-VERS-ALL:+VERS-TLS1.3:"
                                           "%DISABLE_TLS13_COMPAT_MODE", NULL) != 0)
        die("gnutls_priority_set_direct failed");
    if (ngtcp2_crypto_gnutls_configure_client_session(c->tls) != 0)
        die("ngtcp2_crypto_gnutls_configure_client_session failed");
    c->ref.get_conn = get_conn;
    c->ref.user_data = c;
    gnutls_session_set_ptr(c->tls, &c->ref);
    gnutls_credentials_set(c->tls, GNUTLS_CRD_CERTIFICATE, cred);
    gnutls_alpn_set_protocols(c->tls, &alpn, 1, GNUTLS_ALPN_MANDATORY);
    /* SNI for a name only (RFC 6066: not for an address) */
    if (inet_pton(AF_INET, opt.host, &a4) != 1 && inet_pton(AF_INET6, opt.host, &a6) != 1)
        gnutls_server_name_set(c->tls, GNUTLS_NAME_DNS, opt.host, strlen(opt.host));
    if (!opt.insecure)
        gnutls_session_set_verify_cert(c->tls, opt.host, 0);
    ngtcp2_conn_set_tls_native_handle(c->qc, c->tls);

    /* two per request in flight: a stream stays open after its response
     * until the server acknowledges the request's end */
    c->nslots = 2 * opt.streams;
    c->streams = calloc((size_t) c->nslots, sizeof(*c->streams));
    if (!c->streams)
        die("out of memory");
    for (int i = c->nslots - 1; i >= 0; i--) {
        c->streams[i].next_free = c->free;
        c->free = &c->streams[i];
    }
}

/* CONNECTION_CLOSE to the server (so that it keeps nothing), then free. */
static void conn_close(struct conn *c)
{
    ngtcp2_pkt_info pi;
    ngtcp2_connection_close_error done;
    const ngtcp2_connection_close_error *err = &done;
    ngtcp2_ssize n;

    /* H3_NO_ERROR after a run; the error that killed it, if it has one */
    ngtcp2_connection_close_error_set_application_error(&done, NGHTTP3_H3_NO_ERROR, NULL, 0);
    if (c->dead)
        err = c->ccerr.error_code ? &c->ccerr : NULL;
    if (c->qc && err && !ngtcp2_conn_is_in_closing_period(c->qc)
        && !ngtcp2_conn_is_in_draining_period(c->qc)) {
        n = ngtcp2_conn_write_connection_close(c->qc, &c->path, &pi, sendbuf, MAX_PKT, err,
                                               now_ns());
        if (n > 0 && send(c->fd, sendbuf, (size_t) n, 0) < 0)
            st.send_dropped++;
    }
    /* requests still in flight end here: cut by an error, or out of time */
    if (c->dead)
        st.errored += (uint64_t) c->active;
    else
        st.timedout += (uint64_t) c->active;
    c->active = 0;
    if (!c->handshaken)
        st.conn_failed++;
    if (c->h3)
        nghttp3_conn_del(c->h3);
    if (c->qc)
        ngtcp2_conn_del(c->qc);
    if (c->tls)
        gnutls_deinit(c->tls);
    if (c->fd >= 0)
        close(c->fd);
    free(c->streams);
    c->h3 = NULL;
    c->qc = NULL;
    c->tls = NULL;
    c->fd = -1;
    c->streams = NULL;
}

static void conn_expiry(struct conn *c, uint64_t now)
{
    int rv;
    if (c->dead || ngtcp2_conn_get_expiry(c->qc) > now)
        return;
    rv = ngtcp2_conn_handle_expiry(c->qc, now);
    if (rv == NGTCP2_ERR_IDLE_CLOSE || rv == NGTCP2_ERR_HANDSHAKE_TIMEOUT) {
        conn_kill(c, c->handshaken ? "idle timeout" : "handshake timed out");
        return;
    }
    if (rv != 0) {
        conn_kill(c, "ngtcp2_conn_handle_expiry: %s", ngtcp2_strerror(rv));
        return;
    }
    conn_write(c);
}

/* ---- the summary -------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

static double pct_ms(double p)
{
    size_t i;
    if (!st.nlat)
        return 0.0;
    i = (size_t) (p * (double) (st.nlat - 1) + 0.5);
    return (double) st.lat[i] / 1e6;
}

/* Fairness: the fewest and most responses one connection completed, and
 * the earliest and latest time (ms from the start) a connection completed
 * its last one; with -n N -c N each has one, and the two times say how
 * much later the slowest finished than the fastest. */
struct spread {
    uint64_t done_min, done_max;
    double last_min_ms, last_max_ms;
};

static struct spread conn_spread(void)
{
    struct spread sp = { UINT64_MAX, 0, 0.0, 0.0 };
    int first = 1;
    for (int i = 0; i < opt.conns; i++) {
        struct conn *c = &conns[i];
        double ms = c->done ? (double) (c->last_done - t_start) / 1e6 : 0.0;
        if (c->done < sp.done_min)
            sp.done_min = c->done;
        if (c->done > sp.done_max)
            sp.done_max = c->done;
        if (!c->done)
            continue;
        if (first || ms < sp.last_min_ms)
            sp.last_min_ms = ms;
        if (first || ms > sp.last_max_ms)
            sp.last_max_ms = ms;
        first = 0;
    }
    if (sp.done_min == UINT64_MAX)
        sp.done_min = 0;
    return sp;
}

static void print_summary(double elapsed, double cpu_user, double cpu_sys)
{
    struct spread sp = conn_spread();
    double rps = elapsed > 0 ? (double) st.ok / elapsed : 0.0;
    double bps = elapsed > 0 ? (double) st.body_bytes / elapsed : 0.0;
    double mean = 0.0, cpu_us = st.done ? (cpu_user + cpu_sys) * 1e6 / (double) st.done : 0.0;

    if (st.nlat)
        qsort(st.lat, st.nlat, sizeof(*st.lat), cmp_u64);
    for (size_t i = 0; i < st.nlat; i++)
        mean += (double) st.lat[i];
    if (st.nlat)
        mean /= (double) st.nlat * 1e6;

    if (opt.json) {
        printf("{\"elapsed_s\": %.6f, \"rps\": %.2f, \"bytes_per_s\": %.0f, "
               "\"requested\": %" PRIu64 ", \"issued\": %" PRIu64 ", \"done\": %" PRIu64
               ", \"succeeded\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"errored\": %" PRIu64
               ", \"timeout\": %" PRIu64 ", \"status\": {\"1xx\": %" PRIu64 ", \"2xx\": %" PRIu64
               ", \"3xx\": %" PRIu64 ", \"4xx\": %" PRIu64 ", \"5xx\": %" PRIu64
               ", \"other\": %" PRIu64 "}, \"body_bytes\": %" PRIu64 ", "
               "\"latency_ms\": {\"min\": %.3f, \"mean\": %.3f, \"p50\": %.3f, \"p90\": %.3f, "
               "\"p99\": %.3f, \"max\": %.3f}, \"cpu\": {\"user_s\": %.3f, \"sys_s\": %.3f, "
               "\"us_per_req\": %.2f}, \"connections\": {\"opened\": %d, \"handshaken\": %" PRIu64
               ", \"failed\": %" PRIu64 "}, \"max_streams\": %d, \"gso\": %s, "
               "\"packets\": {\"out\": %" PRIu64 ", \"in\": %" PRIu64 ", \"sends\": %" PRIu64
               ", \"recvs\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"largest_in\": %zu}, "
               "\"per_connection\": "
               "{\"done_min\": %" PRIu64 ", \"done_max\": %" PRIu64 ", \"last_ms_min\": %.3f, "
               "\"last_ms_max\": %.3f}, \"error\": \"",
               elapsed, rps, bps, opt.requests, st.issued, st.done, st.ok, st.failed, st.errored,
               st.timedout, st.status[1], st.status[2], st.status[3], st.status[4], st.status[5],
               st.status[0], st.body_bytes, st.nlat ? (double) st.lat[0] / 1e6 : 0.0, mean,
               pct_ms(0.50), pct_ms(0.90), pct_ms(0.99),
               st.nlat ? (double) st.lat[st.nlat - 1] / 1e6 : 0.0, cpu_user, cpu_sys, cpu_us,
               opt.conns, st.conn_ok, st.conn_failed, st.max_active,
               opt.gso && gso_ok ? "true" : "false", st.packets_out, st.packets_in, st.sends,
               st.recvs, st.send_dropped, st.largest_in, sp.done_min, sp.done_max, sp.last_min_ms,
               sp.last_max_ms);
        for (const char *p = st.first_error; *p; p++) {
            if (*p == '"' || *p == '\\')
                putchar('\\');
            putchar((unsigned char) *p >= 0x20 ? *p : ' ');
        }
        printf("\"}\n");
        return;
    }
    printf("finished in %.6f s, %.2f req/s, %.0f bytes/s\n", elapsed, rps, bps);
    printf("requests: %" PRIu64 " issued, %" PRIu64 " done, %" PRIu64 " succeeded, %" PRIu64
           " failed, %" PRIu64 " errored, %" PRIu64 " timeout\n",
           st.issued, st.done, st.ok, st.failed, st.errored, st.timedout);
    printf("status codes: %" PRIu64 " 2xx, %" PRIu64 " 3xx, %" PRIu64 " 4xx, %" PRIu64
           " 5xx, %" PRIu64 " other\n",
           st.status[2], st.status[3], st.status[4], st.status[5], st.status[1] + st.status[0]);
    printf("body bytes: %" PRIu64 "\n", st.body_bytes);
    printf("latency ms: min %.3f, mean %.3f, p50 %.3f, p90 %.3f, p99 %.3f, max %.3f\n",
           st.nlat ? (double) st.lat[0] / 1e6 : 0.0, mean, pct_ms(0.50), pct_ms(0.90),
           pct_ms(0.99), st.nlat ? (double) st.lat[st.nlat - 1] / 1e6 : 0.0);
    printf("cpu: user %.3f s, sys %.3f s, %.2f us/req\n", cpu_user, cpu_sys, cpu_us);
    printf("connections: %d opened, %" PRIu64 " handshaken, %" PRIu64 " failed\n",
           opt.conns, st.conn_ok, st.conn_failed);
    printf("streams: %d per connection, %d at most in flight on one\n", opt.streams, st.max_active);
    printf("packets: %" PRIu64 " out in %" PRIu64 " sends (gso %s), %" PRIu64 " in in %" PRIu64
           " reads, %" PRIu64 " sends dropped, the largest in %zu bytes\n",
           st.packets_out, st.sends, opt.gso && gso_ok ? "on" : "off", st.packets_in, st.recvs,
           st.send_dropped, st.largest_in);
    printf("per connection: %" PRIu64 " to %" PRIu64 " responses, the last of each at %.3f to "
           "%.3f ms\n", sp.done_min, sp.done_max, sp.last_min_ms, sp.last_max_ms);
    if (st.first_error[0])
        printf("error: %s\n", st.first_error);
}

/* ---- main ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fputs("usage: h3load [options] URL [PATH|URL]...\n"
          "  -c N            connections (1)\n"
          "  -m M            requests in flight per connection (1)\n"
          "  -n N            requests in all (default 1 without -d)\n"
          "  -d SECONDS      issue requests for this long\n"
          "  -t SECONDS      give up after this long (-n), or wait this long for\n"
          "                  the answers in flight after -d (30)\n"
          "  -k              do not verify the server's certificate\n"
          "  -H 'Name: v'    a request header (repeatable)\n"
          "  --method M      request method (GET)\n"
          "  --data TEXT     request body; @FILE reads it from FILE\n"
          "  --trailer 'n: v' a trailer field after the body (repeatable)\n"
          "  --expect-continue  send Expect: 100-continue, the body after the 100\n"
          "  --raw HEX       also these bytes as they are on a request stream of\n"
          "                  their own, with its end (tests of the server's checks)\n"
          "  --window BYTES  a stream's initial receive window (1 MiB)\n"
          "  --no-gso        send datagrams one by one and read without GRO\n"
          "  --print         print the responses' header fields\n"
          "  -o FILE         write the responses' bodies to FILE\n"
          "  --json          the summary as one JSON object\n"
          "  --debug         ngtcp2's log on stderr\n"
          "  --stall         never give back the flow control of response bodies\n"
          "                  (a client that stops reading: the window closes)\n", f);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    struct stat sb;
    char *buf;
    if (!f || fstat(fileno(f), &sb) != 0)
        die("%s: %s", path, strerror(errno));
    buf = malloc((size_t) sb.st_size + 1);
    if (!buf || fread(buf, 1, (size_t) sb.st_size, f) != (size_t) sb.st_size)
        die("%s: cannot read", path);
    fclose(f);
    *len = (size_t) sb.st_size;
    return buf;
}

/* https://HOST[:PORT]/PATH: host, port and path (a literal IPv6 in []). */
static void parse_url(char *url, char **path)
{
    char *p, *host, *port = "443";
    if (strncmp(url, "https://", 8) != 0)
        die("only https:// URLs: %s", url);
    host = url + 8;
    p = strchr(host, '/');
    *path = p ? strdup(p) : "/";
    if (p)
        *p = '\0';
    snprintf(opt.authority, sizeof(opt.authority), "%s", host);
    if (*host == '[') {
        p = strchr(host, ']');
        if (!p)
            die("bad URL host: %s", host);
        *p++ = '\0';
        host++;
    } else {
        p = strchr(host, ':');
    }
    if (p && *p == ':') {
        *p = '\0';
        port = p + 1;
    }
    opt.host = host;
    opt.port = port;
}

static void on_signal(int sig)
{
    (void) sig;
    interrupted = 1;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "method", required_argument, NULL, 'M' },
        { "data", required_argument, NULL, 'D' },
        { "window", required_argument, NULL, 'W' },
        { "trailer", required_argument, NULL, 'T' },
        { "expect-continue", no_argument, NULL, 'E' },
        { "raw", required_argument, NULL, 'R' },
        { "no-gso", no_argument, NULL, 'G' },
        { "print", no_argument, NULL, 'P' },
        { "json", no_argument, NULL, 'J' },
        { "debug", no_argument, NULL, 'X' },
        { "stall", no_argument, NULL, 'S' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
    struct rusage ru0, ru1;
    struct epoll_event ev, events[64];
    char *first_path;
    int ep, ch, rv, alive, pwait2 = 1;

    while ((ch = getopt_long(argc, argv, "c:m:n:d:t:kH:o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': opt.conns = atoi(optarg); break;
        case 'm': opt.streams = atoi(optarg); break;
        case 'n': opt.requests = strtoull(optarg, NULL, 10); break;
        case 'd': opt.duration = atof(optarg); break;
        case 't': opt.timeout = atof(optarg); break;
        case 'k': opt.insecure = 1; break;
        case 'H':
            if (opt.nheaders == MAX_HEADERS)
                die("at most %d -H", MAX_HEADERS);
            if (!strchr(optarg, ':') || *optarg == ':')
                die("-H takes 'Name: value': %s", optarg);
            /* HTTP/3 field names are lower case */
            for (char *p = optarg; *p != ':'; p++)
                *p = (char) tolower((unsigned char) *p);
            opt.headers[opt.nheaders++] = optarg;
            break;
        case 'E': opt.expect_continue = 1; break;
        case 'R':
            opt.rawlen = strlen(optarg) / 2;
            opt.raw = malloc(opt.rawlen + 1);
            if (!opt.raw || strlen(optarg) % 2)
                die("--raw takes hex digits, two a byte");
            for (size_t i = 0; i < opt.rawlen; i++) {
                unsigned b;
                if (sscanf(optarg + 2 * i, "%2x", &b) != 1)
                    die("--raw takes hex digits: %s", optarg);
                opt.raw[i] = (uint8_t) b;
            }
            break;
        case 'T':
            if (opt.ntrailers == MAX_HEADERS || !strchr(optarg, ':'))
                die("--trailer takes 'name: value', at most %d", MAX_HEADERS);
            opt.trailers[opt.ntrailers++] = optarg;
            break;
        case 'o': opt.output = optarg; break;
        case 'M': opt.method = optarg; break;
        case 'D':
            if (optarg[0] == '@') {
                opt.data = read_file(optarg + 1, &opt.datalen);
            } else {
                opt.data = optarg;
                opt.datalen = strlen(optarg);
            }
            break;
        case 'W': opt.window = strtoull(optarg, NULL, 10); break;
        case 'G': opt.gso = 0; break;
        case 'P': opt.print = 1; break;
        case 'J': opt.json = 1; break;
        case 'X': opt.debug = 1; break;
        case 'S': opt.stall = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    if (opt.conns < 1 || opt.streams < 1 || opt.duration < 0 || opt.timeout <= 0
        || opt.window < 1024)
        die("-c, -m, -t and --window take positive numbers");
    if (!opt.requests && opt.duration <= 0)
        opt.requests = 1;
    parse_url(argv[optind], &first_path);
    opt.paths[opt.npaths++] = first_path;
    for (int i = optind + 1; i < argc; i++) {
        char *p = argv[i];
        if (opt.npaths == MAX_TARGETS)
            die("at most %d paths", MAX_TARGETS);
        if (strncmp(p, "https://", 8) == 0) {
            p = strchr(p + 8, '/');
            p = p ? p : "/";
        } else if (*p != '/') {
            die("not a path or https URL: %s", p);
        }
        opt.paths[opt.npaths++] = p;
    }
    if (opt.output && !(out_file = fopen(opt.output, "wb")))
        die("%s: %s", opt.output, strerror(errno));

    rv = getaddrinfo(opt.host, opt.port, &hints, &ai);
    if (rv != 0)
        die("%s: %s", opt.host, gai_strerror(rv));
    if (gnutls_certificate_allocate_credentials(&cred) != 0)
        die("gnutls_certificate_allocate_credentials failed");
    if (!opt.insecure && gnutls_certificate_set_x509_system_trust(cred) < 0)
        die("no system certificates (use -k for a self-signed server)");
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);

    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1: %s", strerror(errno));
    conns = calloc((size_t) opt.conns, sizeof(*conns));
    if (!conns)
        die("out of memory");

    getrusage(RUSAGE_SELF, &ru0);
    t_start = now_ns();
    t_stop_issuing = t_start + (uint64_t) (opt.duration * 1e9);
    t_deadline = opt.duration > 0 ? t_stop_issuing + (uint64_t) (opt.timeout * 1e9)
                                  : t_start + (uint64_t) (opt.timeout * 1e9);
    for (int i = 0; i < opt.conns; i++) {
        struct conn *c = &conns[i];
        c->index = i;
        c->raw_id = -1;
        conn_open(c, ai);
        ev.events = EPOLLIN;
        ev.data.ptr = c;
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) != 0)
            die("epoll_ctl: %s", strerror(errno));
        conn_write(c);
    }
    freeaddrinfo(ai);

    for (;;) {
        uint64_t now = now_ns(), next = t_deadline, wait;
        struct timespec tmo;
        int n;

        alive = 0;
        for (int i = 0; i < opt.conns; i++) {
            struct conn *c = &conns[i];
            uint64_t e;
            if (c->dead)
                continue;
            /* a connection is done when no request is in flight and no more come */
            if (!c->active && !issuing(now) && c->handshaken)
                continue;
            alive++;
            e = ngtcp2_conn_get_expiry(c->qc);
            if (e < next)
                next = e;
        }
        if (!alive || now >= t_deadline || (interrupted && !alive))
            break;
        /* to the nanosecond (the pacer's gaps are microseconds);
         * epoll_wait's milliseconds where the kernel is older than 5.11 */
        wait = next <= now ? 0 : next - now;
        tmo.tv_sec = (time_t) (wait / 1000000000u);
        tmo.tv_nsec = (long) (wait % 1000000000u);
        n = pwait2 ? epoll_pwait2(ep, events, 64, &tmo, NULL) : -1;
        if (n < 0 && errno == ENOSYS)
            pwait2 = 0;
        if (!pwait2)
            n = epoll_wait(ep, events, 64, (int) ((wait + 999999) / 1000000));
        if (n < 0 && errno != EINTR)
            die("epoll_wait: %s", strerror(errno));
        if (interrupted)
            break;
        for (int i = 0; i < n; i++) {
            struct conn *c = events[i].data.ptr;
            if (!c->dead) {
                conn_read(c);
                if (c->want_requests)
                    fill_requests(c);
                conn_write(c);
            }
            /* a dead connection's datagrams are not read: not waited for either */
            if (c->dead)
                epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        }
        now = now_ns();
        for (int i = 0; i < opt.conns; i++) {
            struct conn *c = &conns[i];
            if (c->dead)
                continue;
            conn_expiry(c, now);
            if (c->want_requests) {
                fill_requests(c);
                conn_write(c);
            }
        }
    }

    getrusage(RUSAGE_SELF, &ru1);
    {
        uint64_t end = opt.duration > 0 && t_last_done ? t_last_done : now_ns();
        double elapsed;
        double cpu_user = (double) (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec)
                          + (double) (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6;
        double cpu_sys = (double) (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec)
                         + (double) (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
        /* -t bounds the handshakes too: one still going at the deadline
         * timed out (ngtcp2 notices its own handshake time-out only at
         * its next timer, which may come after the deadline) */
        for (int i = 0; i < opt.conns; i++)
            if (!conns[i].dead && !conns[i].handshaken && !interrupted)
                conn_kill(&conns[i], "handshake timed out");
        for (int i = 0; i < opt.conns; i++)
            conn_close(&conns[i]);
        if (opt.requests && st.issued < opt.requests && !st.first_error[0])
            note_error("%" PRIu64 " of %" PRIu64 " requests never sent", opt.requests - st.issued,
                       opt.requests);
        elapsed = (double) (end - t_start) / 1e9;
        if (out_file && fclose(out_file) != 0)
            die("%s: %s", opt.output, strerror(errno));
        print_summary(elapsed, cpu_user, cpu_sys);
    }
    free(conns);
    free(st.lat);
    gnutls_certificate_free_credentials(cred);
    close(ep);
    /* success: every request asked for answered without a transport or
     * protocol error (any status code) */
    if (st.errored || st.timedout || st.conn_failed || !st.done
        || (opt.requests && st.done < opt.requests))
        return 1;
    return 0;
}
