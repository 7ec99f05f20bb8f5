/*
 * libFuzzer target: the protocol-neutral request start, head to phases to
 * the end of the request. A real configuration (virtual servers by name,
 * wildcard and regex; exact, prefix, regex and named locations, error_page
 * and its internal redirects, the access log) is read once; each input
 * is then a request as a protocol hands it to the core: a session on the
 * configuration's listening address, a request line (parsed as HTTP/1
 * does; HTTP/2 builds one from its pseudo-header fields the same way),
 * fields with lower-case names one by one (sws_http_request_header), then
 * sws_http_start_request. Behind r->proto is a protocol of this file that
 * only moves bytes to nowhere and reports the client's end, so that the
 * core's finalisation, log and release (sws_http_request_end.c) run too.
 *
 * Input: the first byte's low bit chooses HTTP/1.1 or HTTP/2; then lines:
 * the request line, then "name:value" fields (a name starting with ':'
 * sets :authority as HTTP/2's does).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include "sws_http_core.h"
#include "sws_http_request_head.h"
#include "sws_log_internal.h"
#include "fuzz_cycle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The core's directives only (modules are .so files): no content handler,
 * so every request ends in an error page, by internal redirects. */
static const char conf_text[] =
    "error_log stderr emerg;\n"
    "events { }\n"
    "http {\n"
    "    log_format v \"$request|$host|$uri|$args|$http_user_agent|$n|$cookie_a|"
    "$request_completion|$bytes_sent|$tcpinfo_rtt|$ssl_protocol|$scheme|$status\";\n"
    "    access_log /dev/null v;\n"
    "    server {\n"
    "        listen 127.0.0.1:1;\n"
    "        server_name a.test *.b.test ~^re(?<n>\\d+)\\.test$;\n"
    "        error_page 404 /nf;\n"
    "        location = /nf { internal; error_page 404 = @named; }\n"
    "        location @named { root /nonexistent; }\n"
    "        location ~ \\.(txt|html)$ { error_page 404 =200 /nf; }\n"
    "        location /alias/ { alias /nonexistent/; }\n"
    "    }\n"
    "    server {\n"
    "        listen 127.0.0.1:1;\n"
    "        server_name other.test;\n"
    "        error_page 404 =410 /gone;\n"
    "    }\n"
    "}\n";

static sws_http_addr_t      *fuzz_addr;
static sws_log_t            *fuzz_log;
static int                   released;

/* ---- a protocol that moves bytes to nowhere ---- */

static sws_int_t fz_ok(sws_http_request_t *r) { (void) r; return SWS_OK; }
static sws_int_t fz_send_body(sws_http_request_t *r, sws_chain_t *in) { return SWS_OK; }
static void fz_finish(sws_http_request_t *r, sws_int_t rc) { sws_http_request_ended(r, rc); }
static void fz_release(sws_http_request_t *r) { released = 1; sws_pool_destroy(r->pool); }
static off_t fz_bytes_sent(sws_http_request_t *r) { return (off_t) r->header_size; }
static int fz_no(sws_http_request_t *r) { return 0; }
static sws_int_t fz_tunnel(sws_http_request_t *r, sws_str_t *pending, sws_connection_t **b)
{
    return SWS_DECLINED;
}
static sws_int_t fz_read_body(sws_http_request_t *r) { return SWS_HTTP_BAD_REQUEST; }
static sws_int_t fz_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    *n = 0;
    return SWS_DONE;
}
static sws_int_t fz_interim(sws_http_request_t *r, sws_uint_t status, const sws_http_header_t *h,
    sws_uint_t n)
{
    return SWS_OK;
}

static const sws_http_proto_t fuzz_proto = {
    .name = "fuzz",
    .process_head = fz_ok,
    .send_header = fz_ok,
    .send_body = fz_send_body,
    .finish = fz_finish,
    .release = fz_release,
    .read_body = fz_read_body,
    .read_body_data = fz_read_body_data,
    .discard_body = fz_ok,
    .bytes_sent = fz_bytes_sent,
    .send_interim = fz_interim,
    .aborted = fz_no,
    .tunnel = fz_tunnel,
    .sendfile = fz_no,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char dir[] = "/tmp/fuzz_request_start.XXXXXX";

    (void) argc; (void) argv;
    fuzz_log = fuzz_start(dir);
    fuzz_addr = fuzz_read_conf(dir, conf_text, NULL);
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sockaddr_in  peer = { .sin_family = AF_INET };
    sws_http_session_t         s;
    sws_http_request_t        *r;
    sws_http_request_line_t    rl;
    sws_http_header_t         *h;
    sws_pool_t                *pool;
    u_char                    *buf, *p, *last, *nl, *colon, *end;
    int                        h2;
    sws_int_t                  rc;

    if (size < 2) {
        return 0;
    }
    h2 = data[0] & 1;
    pool = sws_pool_create(4096, fuzz_log);
    buf = pool ? sws_pnalloc(pool, size) : NULL;
    if (buf == NULL) {
        abort();
    }
    memcpy(buf, data + 1, size - 1);
    p = buf;
    last = buf + size - 1;

    memset(&s, 0, sizeof(s));
    s.transport = &fuzz_transport;
    s.addr = fuzz_addr;
    s.listening = fuzz_addr->listening;
    s.log = fuzz_log;
    s.sockaddr = (struct sockaddr *) &peer;
    s.socklen = sizeof(peer);
    sws_str_set(&s.addr_text, "192.0.2.1");
    s.cscf = fuzz_addr->default_server->ctx->srv_conf[sws_http_core_module.index];

    r = sws_http_create_request(&s, pool);
    if (r == NULL) {
        abort();
    }
    r->proto = &fuzz_proto;
    released = 0;

    /* The request line, as HTTP/1 parses it (HTTP/2 parses the one it
     * builds from :method and :path the same way). */
    nl = memchr(p, '\n', last - p);
    end = nl ? nl : last;
    rc = sws_http_parse_request_line(&rl, p, end);
    r->request_line.data = p;
    r->request_line.len = end - p;
    r->http_version = h2 ? SWS_HTTP_VERSION_20 : SWS_HTTP_VERSION_11;
    if (rc == SWS_OK) {
        sws_http_request_line_take(r, &rl);
        if (!h2 && rl.host.len) {
            r->host = rl.host;
            r->schema = rl.schema;
        }
    }
    p = nl ? nl + 1 : last;

    /* The fields, names lower-cased as every protocol hands them. */
    while (rc == SWS_OK && p < last) {
        nl = memchr(p, '\n', last - p);
        end = nl ? nl : last;
        colon = end > p + 1 ? memchr(p + 1, ':', end - p - 1) : NULL;
        if (colon) {
            if (*p == ':') {
                r->host.data = colon + 1;        /* :authority */
                r->host.len = end - colon - 1;
            } else {
                h = sws_array_push(&r->headers_in);
                if (h == NULL) {
                    abort();
                }
                for (u_char *q = p; q < colon; q++) {
                    *q = sws_tolower(*q);
                }
                h->name.data = p;
                h->name.len = colon - p;
                h->value.data = colon + 1;
                h->value.len = end - colon - 1;
                h->hash = sws_hash_key(h->name.data, h->name.len);
                if (r->headers_in.nelts > SWS_HTTP_MAX_HEADERS) {
                    rc = SWS_HTTP_HEADERS_TOO_LARGE;
                    break;
                }
                rc = sws_http_request_header(r, h);
                if (rc == SWS_DECLINED) {
                    r->headers_in.nelts--;        /* ignore_invalid_headers */
                    rc = SWS_OK;
                }
            }
        }
        p = nl ? nl + 1 : last;
    }

    if (rc == SWS_OK) {
        sws_http_start_request(r);
    } else {
        sws_http_finalize(r, rc >= 100 ? rc : SWS_HTTP_BAD_REQUEST);
    }
    /* Every request here ends at once: nothing waits on an event. */
    if (!released) {
        sws_http_finalize(r, SWS_HTTP_CLOSE);
        if (!released) {
            abort();
        }
    }
    return 0;
}
