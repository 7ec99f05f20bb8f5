/*
 * libFuzzer target: an HTTP/2 server connection driven by frames. A real
 * configuration (HTTP/2 on a listening address, a root with a small file
 * and a large one, error pages) is read once; each input is what a client
 * sends after the connection preface (which this file supplies), read by
 * the connection in pieces of a size the first byte chooses, through the
 * whole of src/http/v2: framing, stream states, settings, flow control,
 * HPACK, request start, the response's HEADERS and DATA, the abuse limits,
 * GOAWAY and the close. The transport is a fake: reads come from the input,
 * then the end of the stream; writes go nowhere (all taken at once, or a
 * little at a time when the first byte's high bit says so, so that the
 * output queue fills); posted events run between reads, and timers that
 * are left (send and body timeouts) fire at the end.
 *
 * Input: byte 0: bits 0-6 the read size (0: all at once), bit 7 a slow
 * writer; then the client's frames.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include "sws_http_core.h"
#include "sws_log_internal.h"
#include "v2/sws_http_v2.h"
#include "fuzz_cycle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_head[] =
    "error_log stderr emerg;\n"
    "events { }\n"
    "http {\n"
    "    access_log off;\n"
    "    server {\n"
    "        listen 127.0.0.1:1 http2;\n"
    "        server_name localhost;\n"
    "        http2_max_concurrent_streams 8;\n"
    "        http2_chunk_size 4k;\n"
    "        client_max_body_size 64k;\n"
    "        error_page 404 /small.txt;\n";
static const char conf_tail[] =
    "    }\n"
    "}\n";

static const u_char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static sws_http_addr_t *fuzz_addr;
static sws_log_t       *fuzz_log;

/* the fake transport of one input */
static const uint8_t   *in_data;
static size_t           in_left;
static size_t           in_step;
static int              slow_writer;

static ssize_t
fz_recv(sws_connection_t *c, u_char *buf, size_t size)
{
    size_t n;

    if (in_left == 0) {
        c->read->ready = 0;
        c->read->eof = 1;
        return 0;
    }
    n = sws_min(sws_min(in_left, size), in_step ? in_step : in_left);
    memcpy(buf, in_data, n);
    in_data += n;
    in_left -= n;
    c->read->ready = 0;              /* one read per event, as epoll's edge */
    return (ssize_t) n;
}

static sws_chain_t *
fz_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    off_t size, budget = slow_writer ? 1000 : -1;

    (void) limit;
    for (; in; in = in->next) {
        if (sws_buf_special(in->buf)) {
            continue;
        }
        size = sws_buf_size(in->buf);
        if (budget >= 0 && size > budget) {
            in->buf->pos += budget;
            c->sent += budget;
            c->write->ready = 0;     /* the socket is full */
            return in;
        }
        if (budget >= 0) {
            budget -= size;
        }
        c->sent += size;
        in->buf->pos = in->buf->last;
    }
    return NULL;
}

static int
fz_write_file(const char *dir, const char *name, size_t size)
{
    char  path[128];
    FILE *f;
    size_t i;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f == NULL) {
        return -1;
    }
    for (i = 0; i < size; i++) {
        fputc('a' + (int) (i % 26), f);
    }
    return fclose(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char         dir[] = "/tmp/fuzz_http2_frames.XXXXXX", conf[2048];
    sws_cycle_t *cycle;

    (void) argc; (void) argv;
    sws_time_init();
    sws_event_timer_init();
    fuzz_log = sws_log_stderr();
    fuzz_log->level = SWS_LOG_EMERG;
    if (mkdtemp(dir) == NULL || fz_write_file(dir, "small.txt", 100) != 0
        || fz_write_file(dir, "big.bin", 100000) != 0)
    {
        abort();
    }
    snprintf(conf, sizeof(conf), "%s        root %s;\n%s", conf_head, dir, conf_tail);
    fuzz_addr = fuzz_read_conf(dir, conf, &cycle);
    if (sws_connections_init(cycle, 4) != SWS_OK) {
        abort();
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sockaddr_in  peer = { .sin_family = AF_INET };
    static sws_connection_t    conn;
    static sws_event_t         rev, wev;
    sws_connection_t          *c = &conn;
    sws_http_session_t        *s;
    sws_pool_t                *pool;
    int                        rounds;

    if (size < 1) {
        return 0;
    }
    in_step = data[0] & 0x7f;
    slow_writer = (data[0] & 0x80) != 0;
    in_data = data + 1;
    in_left = size - 1;

    pool = sws_pool_create(4096, fuzz_log);
    s = pool ? sws_pcalloc(pool, sizeof(sws_http_session_t)) : NULL;
    if (s == NULL) {
        abort();
    }
    memset(c, 0, sizeof(*c));
    memset(&rev, 0, sizeof(rev));
    memset(&wev, 0, sizeof(wev));
    c->fd = open("/dev/null", O_RDWR);
    if (c->fd == -1) {
        abort();
    }
    c->pool = pool;
    c->log = fuzz_log;
    c->read = &rev;
    c->write = &wev;
    c->recv = fz_recv;
    c->send_chain = fz_send_chain;
    rev.data = c;
    wev.data = c;
    wev.write = 1;
    wev.ready = 1;

    s->connection = c;
    s->transport = &fuzz_transport;
    s->addr = fuzz_addr;
    s->listening = fuzz_addr->listening;
    s->log = fuzz_log;
    s->sockaddr = (struct sockaddr *) &peer;
    s->socklen = sizeof(peer);
    sws_str_set(&s->addr_text, "192.0.2.1");
    s->cscf = fuzz_addr->default_server->ctx->srv_conf[sws_http_core_module.index];

    sws_http_v2_init(s, preface, sizeof(preface) - 1);

    /* Events until the connection is gone: reads as the input lasts, the
     * socket writable again after each round, then timers as if their
     * time came. */
    for (rounds = 0; !c->destroyed && rounds < 10000; rounds++) {
        sws_event_process_posted();
        if (c->destroyed) {
            break;
        }
        if (!wev.ready && !wev.closed) {
            wev.ready = 1;
            wev.handler(&wev);
            continue;
        }
        if (!rev.closed) {
            rev.ready = 1;
            if (in_left == 0 && rounds > 64 && rev.timer_set) {
                rev.timedout = 1;
            }
            rev.handler(&rev);
        }
    }
    if (!c->destroyed) {
        abort();                     /* a connection that never ends */
    }
    return 0;
}
