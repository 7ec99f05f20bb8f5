/*
 * libFuzzer target: the format compiler behind log_format, the access
 * log's lines and every value with variables (src/http/sws_http_format.c,
 * the variables of sws_http_variables.c), on arbitrary format strings,
 * rendered against a small fixed request. The first byte picks the escape
 * mode (default, json, none, or an invalid one that must be refused); the
 * rest is the format's text. A compiled format must render exactly the
 * length it measured, into a buffer of exactly that size (so that ASan
 * sees a byte written past it), and sws_http_format_string() the same
 * length; a refused one must say why.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>

#include "sws_http_core.h"
#include "sws_http_variables.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The variables read the server's conf through the core module's index. */
sws_module_t  sws_http_core_module = { .index = 0 };

static struct sws_http_request_s  req;
static struct sws_connection_s    conn;
static sws_http_core_srv_conf_t   cscf;
static sws_http_session_t         session;
static void                      *srv_confs[1];

static void
add_header(sws_pool_t *pool, sws_array_t *a, const char *name, const char *value)
{
    sws_http_header_t  *h = sws_array_push(a);

    if (h == NULL) {
        abort();
    }
    (void) pool;
    h->name.data = (u_char *) name;
    h->name.len = strlen(name);
    h->value.data = (u_char *) value;
    h->value.len = strlen(value);
    h->hash = sws_hash_key_lc(h->name.data, h->name.len);
}

/* A GET with a few fields, as a client on 192.0.2.7 sends it. */
static void
request_init(sws_pool_t *pool)
{
    memset(&req, 0, sizeof(req));
    memset(&conn, 0, sizeof(conn));
    memset(&cscf, 0, sizeof(cscf));
    memset(&session, 0, sizeof(session));

    sws_str_set(&conn.addr_text, "192.0.2.7");
    conn.fd = -1;
    conn.sent = 5000;
    conn.number = 42;
    session.connection = &conn;
    session.requests = 3;
    sws_str_set(&cscf.server_name, "example.org");
    srv_confs[0] = &cscf;

    req.connection = &conn;
    req.session = &session;
    req.pool = pool;
    req.srv_conf = srv_confs;
    sws_str_set(&req.method_name, "GET");
    req.method = SWS_HTTP_GET;
    req.http_version = SWS_HTTP_VERSION_11;
    sws_str_set(&req.request_line, "GET /a%20b?x=1&y=%22q%22 HTTP/1.1");
    sws_str_set(&req.unparsed_uri, "/a%20b?x=1&y=%22q%22");
    sws_str_set(&req.uri, "/a b");
    sws_str_set(&req.args, "x=1&y=%22q%22");
    sws_str_set(&req.host, "www.example.com");
    req.status = 200;
    req.sent_start = 1000;
    req.header_size = 150;
    req.start_msec = sws_current_msec();
    req.out_content_length = -1;
    req.last_modified = -1;

    if (sws_array_init(&req.headers_in, pool, 8, sizeof(sws_http_header_t)) != SWS_OK
        || sws_array_init(&req.headers_out, pool, 8, sizeof(sws_http_header_t)) != SWS_OK)
    {
        abort();
    }
    add_header(pool, &req.headers_in, "host", "www.example.com");
    add_header(pool, &req.headers_in, "user-agent", "curl/8.0 \"x\"\x01\xff");
    add_header(pool, &req.headers_in, "cookie", "a=1; session=\\\"z\\\"; b=");
    add_header(pool, &req.headers_out, "content-type", "text/plain");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int          started;
    static const int    modes[4] = { SWS_HTTP_ESCAPE_DEFAULT, SWS_HTTP_ESCAPE_JSON,
                                     SWS_HTTP_ESCAPE_NONE, SWS_HTTP_ESCAPE_NONE + 1 };
    sws_pool_t         *pool;
    sws_http_format_t  *f;
    sws_str_t           text, out;
    const char         *err = NULL;
    size_t              len;
    u_char             *buf, *end;
    int                 escape;

    if (!started) {
        sws_time_init();
        started = 1;
    }
    if (size == 0) {
        return 0;
    }
    sws_time_update();
    escape = modes[data[0] & 3];
    text.data = (u_char *) data + 1;
    text.len = size - 1;

    pool = sws_pool_create(4096, NULL);
    if (pool == NULL) {
        abort();
    }
    request_init(pool);
    f = sws_http_format_compile(pool, &text, escape, &err);
    if (f == NULL) {
        if (err == NULL || *err == '\0') {
            abort();                      /* refused without a reason */
        }
    } else if (escape > SWS_HTTP_ESCAPE_NONE) {
        abort();                          /* an invalid mode accepted */
    } else {
        len = sws_http_format_len(f, &req);
        buf = malloc(len ? len : 1);      /* exactly: ASan sees one byte more */
        if (buf == NULL) {
            abort();
        }
        end = sws_http_format_render(f, &req, buf);
        if ((size_t) (end - buf) != len) {
            abort();
        }
        /* again in one call: the same length ($msec, read from the clock
         * at each evaluation, may change its digits but not their number) */
        if (sws_http_format_string(f, &req, pool, 0, NULL, 0, &out) != SWS_OK
            || out.len != len)
        {
            abort();
        }
        if (sws_http_format_is_static(f) && memchr(text.data, '$', text.len)) {
            abort();
        }
        free(buf);
    }
    sws_http_variables_reset();           /* the registry pointed into pool */
    sws_pool_destroy(pool);
    return 0;
}
