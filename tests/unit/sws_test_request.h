/*
 * A request built by hand, as a client on 192.0.2.7 sends
 * "GET /a%20b?x=1&y=2 HTTP/1.1" to example.org, for the tests of the
 * variables and formats (tests/unit/test_http_variables.c) and the format
 * fuzzer (tests/fuzz/fuzz_log_format.c). Not located (no loc_conf); the
 * variables read the server's conf through sws_http_core_module, whose
 * index the includer makes 0.
 */
#ifndef SWS_TEST_REQUEST_H
#define SWS_TEST_REQUEST_H

#include <string.h>
#include "sws_http_core.h"

typedef struct {
    struct sws_http_request_s  req;
    struct sws_connection_s    conn;
    sws_http_core_srv_conf_t   cscf;
    sws_http_session_t         session;
    sws_http_addr_t            addr;
    void                      *srv_confs[1];
} sws_test_request_t;

/* The protocol of the test's request: HTTP/1's count of bytes sent. */
static inline off_t
sws_test_bytes_sent(sws_http_request_t *r)
{
    return r->connection->sent - r->sent_start;
}

static const sws_http_proto_t sws_test_proto = {
    .name = "test", .bytes_sent = sws_test_bytes_sent
};

static inline sws_int_t
sws_test_header_add(sws_array_t *a, const char *name, const char *value)
{
    sws_http_header_t  *h = sws_array_push(a);

    if (h == NULL) {
        return SWS_ERROR;
    }
    h->name.data = (u_char *) name;
    h->name.len = strlen(name);
    h->value.data = (u_char *) value;
    h->value.len = strlen(value);
    h->hash = sws_hash_key_lc(h->name.data, h->name.len);
    return SWS_OK;
}

/* t zeroed and filled, its fields from pool; SWS_ERROR: no memory. */
static inline sws_int_t
sws_test_request_init(sws_test_request_t *t, sws_pool_t *pool)
{
    sws_http_request_t  *r = &t->req;

    memset(t, 0, sizeof(*t));
    sws_str_set(&t->conn.addr_text, "192.0.2.7");
    t->conn.fd = -1;
    t->conn.sent = 5000;
    t->conn.number = 42;
    t->session.connection = &t->conn;
    t->session.addr = &t->addr;
    t->session.addr_text = t->conn.addr_text;
    t->session.number = 42;
    t->session.requests = 3;
    sws_str_set(&t->cscf.server_name, "example.org");
    t->srv_confs[0] = &t->cscf;

    r->connection = &t->conn;
    r->session = &t->session;
    r->proto = &sws_test_proto;
    r->pool = pool;
    r->srv_conf = t->srv_confs;
    sws_str_set(&r->method_name, "GET");
    r->method = SWS_HTTP_GET;
    r->http_version = SWS_HTTP_VERSION_11;
    sws_str_set(&r->request_line, "GET /a%20b?x=1&y=2 HTTP/1.1");
    sws_str_set(&r->unparsed_uri, "/a%20b?x=1&y=2");
    sws_str_set(&r->uri, "/a b");
    sws_str_set(&r->args, "x=1&y=2");
    sws_str_set(&r->host, "www.example.com");
    r->status = 200;
    r->sent_start = 1000;
    r->header_size = 150;
    r->start_msec = sws_current_msec();
    r->out_content_length = -1;
    r->last_modified = -1;

    if (sws_array_init(&r->headers_in, pool, 8, sizeof(sws_http_header_t)) != SWS_OK
        || sws_array_init(&r->headers_out, pool, 8, sizeof(sws_http_header_t)) != SWS_OK
        || sws_test_header_add(&r->headers_in, "host", "www.example.com") != SWS_OK
        || sws_test_header_add(&r->headers_in, "user-agent", "curl/8.0") != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

#endif
