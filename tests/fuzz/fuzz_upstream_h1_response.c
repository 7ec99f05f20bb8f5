/*
 * libFuzzer target: an HTTP/1.x response from an upstream server, as the
 * proxy, node and python modules read it (src/http/upstream/
 * sws_http_upstream_h1.c): the status line, interim 1xx responses, the
 * field lines (hop-by-hop ones kept back, Connection's names removed,
 * Content-Length and Transfer-Encoding), then the body, decoded in place
 * (Content-Length, chunked, or up to the close).
 *
 * The first byte chooses the size of the pieces the rest arrives in, and
 * the request's side: HEAD or GET, an upgrade asked for, an HTTP/1.0
 * request, $upstream_http_* kept. Each piece is an exact-size copy, freed
 * once parsed, so that a pointer the parser kept into its input is caught;
 * the head parser may only move forward over whole lines, the body
 * decoder must consume all it is given (or stop at the body's end) and
 * write no more than it read. The outcome (status, framing, reuse, the
 * decoded body) must be the same whatever the cutting. Each line of the
 * input, and the input as one line, are also checked against the
 * byte-wise reference field parser, cut at every position
 * (fuzz_http1_field_ref.h).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "sws_http_core.h"
#include "sws_http_upstream.h"
#include "sws_log_internal.h"
#include "fuzz_cycle.h"
#include "fuzz_http1_field_ref.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf_text[] =
    "error_log stderr emerg;\n"
    "events { }\n"
    "http { access_log off; server { listen 127.0.0.1:1; } }\n";

static sws_http_addr_t *fuzz_addr;
static sws_log_t       *fuzz_log;
static unsigned         interims;

static sws_int_t
fz_interim(sws_http_request_t *r, sws_uint_t status, const sws_http_header_t *h, sws_uint_t n)
{
    (void) r; (void) h; (void) n;
    if (status < 101 || status > 199) {
        abort();
    }
    interims++;
    return SWS_OK;
}

static const sws_http_proto_t fuzz_proto = { .name = "fuzz", .send_interim = fz_interim };

typedef struct {
    sws_int_t      head_rc;
    sws_int_t      body_rc;
    sws_uint_t     status;
    off_t          length;
    unsigned       keepalive, upgrade, interims;
    size_t         body_len;
    unsigned long  body_hash;
} outcome_t;

/* (no mark between calls: the body's hash does not depend on its pieces) */
static unsigned long
mix(unsigned long h, const u_char *p, size_t n)
{
    while (n--) {
        h = h * 131 + *p++;
    }
    return h;
}

static sws_http_request_t *
new_request(sws_pool_t *pool, unsigned flags)
{
    static struct sockaddr_in    peer = { .sin_family = AF_INET };
    static sws_http_upstream_conf_t uconf;
    static sws_http_session_t    s;
    sws_http_request_t          *r;
    sws_http_upstream_t         *u;

    memset(&s, 0, sizeof(s));
    s.addr = fuzz_addr;
    s.listening = fuzz_addr->listening;
    s.log = fuzz_log;
    s.sockaddr = (struct sockaddr *) &peer;
    s.socklen = sizeof(peer);
    s.cscf = fuzz_addr->default_server->ctx->srv_conf[sws_http_core_module.index];
    r = sws_http_create_request(&s, pool);
    u = r ? sws_pcalloc(pool, sizeof(*u)) : NULL;
    if (u == NULL) {
        abort();
    }
    r->proto = &fuzz_proto;
    r->method = (flags & 1) ? SWS_HTTP_HEAD : SWS_HTTP_GET;
    u->r = r;
    u->conf = &uconf;
    u->keep_headers = (flags >> 3) & 1;
    r->upstream = u;
    if (sws_ups_h1(u) == NULL) {
        abort();
    }
    u->h1->upgrade = (flags >> 1) & 1;
    u->h1->http10 = (flags >> 2) & 1;
    return r;
}

/* The unparsed rest of the head plus the next piece, in a buffer of
 * exactly that size; the old one is freed. */
static u_char *
regrow(u_char *old, const u_char *rest, size_t rest_len, const u_char *piece, size_t n)
{
    u_char *buf = malloc(rest_len + n ? rest_len + n : 1);

    if (buf == NULL) {
        abort();
    }
    if (rest_len) {
        memcpy(buf, rest, rest_len);    /* (rest is NULL before the first piece) */
    }
    memcpy(buf + rest_len, piece, n);
    free(old);
    return buf;
}

static void
body(sws_http_request_t *r, const u_char *data, size_t size, size_t step, outcome_t *o)
{
    sws_http_upstream_input_t  in;
    size_t                     done = 0, n;
    u_char                    *piece;

    for ( ;; ) {
        n = size - done < step ? size - done : step;
        piece = malloc(n ? n : 1);
        if (piece == NULL) {
            abort();
        }
        memcpy(piece, data + done, n);
        done += n;
        in.pos = in.out = piece;
        in.last = piece + n;
        in.eof = done == size;
        o->body_rc = sws_http_upstream_h1_input_filter(r, NULL, &in);
        if (in.out > in.pos || in.pos > in.last || in.out < piece) {
            abort();
        }
        if (o->body_rc == SWS_OK && in.pos != in.last) {
            abort();
        }
        o->body_len += (size_t) (in.out - piece);
        o->body_hash = mix(o->body_hash, piece, (size_t) (in.out - piece));
        free(piece);
        if (o->body_rc != SWS_OK || done == size) {
            return;
        }
    }
}

static void
run(const uint8_t *data, size_t size, size_t step, unsigned flags, outcome_t *o)
{
    sws_http_request_t *r;
    sws_pool_t         *pool;
    sws_buf_t           b;
    size_t              have = 0, n, rest;
    u_char             *buf = NULL, *before;

    memset(o, 0, sizeof(*o));
    interims = 0;
    pool = sws_pool_create(4096, fuzz_log);
    if (pool == NULL) {
        abort();
    }
    r = new_request(pool, flags);
    memset(&b, 0, sizeof(b));
    o->head_rc = SWS_AGAIN;
    while (o->head_rc == SWS_AGAIN && have < size) {
        n = size - have < step ? size - have : step;
        rest = buf ? (size_t) (b.last - b.pos) : 0;
        buf = regrow(buf, buf ? b.pos : NULL, rest, data + have, n);
        have += n;
        b.start = b.pos = buf;
        b.last = b.end = buf + rest + n;
        before = b.pos;
        o->head_rc = sws_http_upstream_h1_process_header(r, NULL, &b);
        if (b.pos < before || b.pos > b.last || (b.pos > before && b.pos[-1] != '\n')) {
            abort();
        }
        if (o->head_rc == SWS_AGAIN && memchr(b.pos, '\n', (size_t) (b.last - b.pos))) {
            abort();
        }
    }
    o->status = r->status;
    o->length = r->out_content_length;
    o->interims = interims;
    if (o->head_rc == SWS_OK) {
        sws_http_upstream_t *u = r->upstream;

        o->keepalive = u->keepalive;
        o->upgrade = u->upgrade;
        if (!u->upgrade) {
            /* what came with the head's last piece, then the rest */
            rest = (size_t) (b.last - b.pos);
            u_char *tail = malloc(rest + (size - have) + 1);

            if (tail == NULL) {
                abort();
            }
            memcpy(tail, b.pos, rest);
            memcpy(tail + rest, data + have, size - have);
            body(r, tail, rest + (size - have), step, o);
            free(tail);
        }
    }
    free(buf);
    sws_pool_destroy(pool);
}

/* The field parsers against the reference: the whole, and each line as the
 * head parser cuts them (without LF and one CR before it). */
static void
fuzz_field_lines(const uint8_t *data, size_t size)
{
    const u_char  *p = data, *last = data + size, *nl, *end;

    fuzz_field_diff(data, size);
    while (p < last && (nl = memchr(p, '\n', (size_t) (last - p))) != NULL) {
        end = (nl > p && nl[-1] == '\r') ? nl - 1 : nl;
        fuzz_field_diff(p, (size_t) (end - p));
        p = nl + 1;
    }
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char dir[] = "/tmp/fuzz_upstream_h1.XXXXXX";

    (void) argc; (void) argv;
    fuzz_log = fuzz_start(dir);
    fuzz_addr = fuzz_read_conf(dir, conf_text, NULL);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    outcome_t  whole, cut;
    size_t     step;
    unsigned   flags;

    if (size < 2) {
        return 0;
    }
    fuzz_field_lines(data + 1, size - 1);
    flags = data[0] & 0x0f;
    step = (size_t) (data[0] >> 4) * 3 + 1;
    run(data + 1, size - 1, size, flags, &whole);
    run(data + 1, size - 1, step, flags, &cut);
    if (whole.head_rc != cut.head_rc || whole.status != cut.status
        || whole.length != cut.length
        || whole.keepalive != cut.keepalive || whole.upgrade != cut.upgrade
        || whole.interims != cut.interims || whole.body_rc != cut.body_rc
        || whole.body_len != cut.body_len || whole.body_hash != cut.body_hash)
    {
        if (getenv("FUZZ_DEBUG")) {
            fprintf(stderr, "whole: head %ld status %lu len %ld ka %u up %u int %u body %ld %zu\n"
                    "cut:   head %ld status %lu len %ld ka %u up %u int %u body %ld %zu\n",
                    (long) whole.head_rc, (unsigned long) whole.status, (long) whole.length,
                    whole.keepalive, whole.upgrade, whole.interims, (long) whole.body_rc,
                    whole.body_len, (long) cut.head_rc, (unsigned long) cut.status,
                    (long) cut.length, cut.keepalive, cut.upgrade, cut.interims,
                    (long) cut.body_rc, cut.body_len);
        }
        abort();
    }
    return 0;
}
