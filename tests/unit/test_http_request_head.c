/*
 * Unit tests of the request start shared by the protocols: the fields the
 * core remembers (sws_http_request_header) and the rules on a complete
 * head (sws_http_process_request_headers), on real core structures: a
 * session on a listening address with two virtual servers, requests in a
 * real pool, HTTP/1's own part (sws_http1_proto) behind r->proto.
 */
#include <check.h>
#include <string.h>
#include "sws_http_request_head.h"
#include "v1/sws_http_h1.h"

static sws_pool_t                *pool;
static sws_http_core_srv_conf_t   dflt, other;
static void                      *dflt_srv[8], *other_srv[8];
static sws_http_core_loc_conf_t   dflt_loc, other_loc;      /* the servers' own levels */
static void                      *dflt_locs[8], *other_locs[8];
static sws_http_conf_ctx_t        dflt_ctx, other_ctx;
static sws_http_addr_t            addr;
static sws_http_session_t         session;
static struct sws_connection_s    conn;

static void
setup(void)
{
    sws_http_server_name_t *sn;

    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
    memset(&dflt, 0, sizeof(dflt));
    memset(&other, 0, sizeof(other));
    memset(&addr, 0, sizeof(addr));
    memset(&session, 0, sizeof(session));
    memset(&conn, 0, sizeof(conn));
    dflt_srv[sws_http_core_module.index] = &dflt;
    other_srv[sws_http_core_module.index] = &other;
    dflt_ctx.srv_conf = dflt_srv;
    other_ctx.srv_conf = other_srv;
    memset(&dflt_loc, 0, sizeof(dflt_loc));
    memset(&other_loc, 0, sizeof(other_loc));
    dflt_locs[sws_http_core_module.index] = &dflt_loc;
    other_locs[sws_http_core_module.index] = &other_loc;
    dflt_ctx.loc_conf = dflt_locs;
    other_ctx.loc_conf = other_locs;
    dflt.ctx = &dflt_ctx;
    other.ctx = &other_ctx;

    ck_assert_int_eq(sws_array_init(&addr.names, pool, 2, sizeof(sws_http_server_name_t)),
                     SWS_OK);
    sn = sws_array_push(&addr.names);
    ck_assert_ptr_nonnull(sn);
    memset(sn, 0, sizeof(*sn));
    sws_str_set(&sn->name, "other.test");
    sn->server = &other;
    addr.default_server = &dflt;
    addr.names_matter = 1;          /* two servers (sws_http_add_listen) */

    session.connection = &conn;
    session.addr = &addr;
    session.cscf = &dflt;
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
}

/* A request as HTTP/1 has it once the request line is parsed. */
static sws_http_request_t *
req(sws_uint_t version, sws_uint_t method, const char *path)
{
    sws_http_request_t *r = sws_pcalloc(pool, sizeof(sws_http_request_t));

    ck_assert_ptr_nonnull(r);
    r->pool = pool;
    r->connection = &conn;
    r->session = &session;
    r->proto = &sws_http1_proto;
    r->srv_conf = dflt_srv;
    r->http_version = version;
    r->method = method;
    r->content_length_n = -1;
    r->raw_path.data = (u_char *) path;
    r->raw_path.len = strlen(path);
    ck_assert_int_eq(sws_array_init(&r->headers_in, pool, 8, sizeof(sws_http_header_t)),
                     SWS_OK);
    return r;
}

/* Add a field as a protocol would; what sws_http_request_header says. */
static sws_int_t
field(sws_http_request_t *r, const char *name, const char *value)
{
    sws_http_header_t *h = sws_array_push(&r->headers_in);

    ck_assert_ptr_nonnull(h);
    h->name.data = (u_char *) name;
    h->name.len = strlen(name);
    h->value.data = (u_char *) value;
    h->value.len = strlen(value);
    h->hash = sws_hash_key(h->name.data, h->name.len);
    return sws_http_request_header(r, h);
}

#define V10  SWS_HTTP_VERSION_10
#define V11  SWS_HTTP_VERSION_11
#define V20  SWS_HTTP_VERSION_20
#define GET  SWS_HTTP_GET

/* ---- the fields ---- */

START_TEST(fields_remembered)
{
    sws_http_request_t *r = req(V11, GET, "/");

    ck_assert_int_eq(field(r, "host", "a.test"), SWS_OK);
    ck_assert_int_eq(field(r, "connection", "keep-alive"), SWS_OK);
    ck_assert_int_eq(field(r, "connection", "upgrade"), SWS_OK);   /* a list */
    ck_assert_int_eq(field(r, "x-hostile", "1"), SWS_OK);
    ck_assert_int_eq(field(r, "content-length", "3"), SWS_OK);
    /* the same again: refused, as nginx refuses it (RFC 9110 8.6 allows either) */
    ck_assert_int_eq(field(r, "content-length", "3"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(field(r, "expect", "100-continue"), SWS_OK);
    ck_assert_int_eq(field(r, "x-request-id", "abc"), SWS_OK);
    ck_assert_ptr_nonnull(r->h_host);
    ck_assert_int_eq(r->h_host->len, 6);
    ck_assert_int_eq(r->h_connection->len, 10);                     /* the first */
    ck_assert_int_eq(r->h_content_length->len, 1);
    ck_assert_ptr_nonnull(r->h_expect);
    ck_assert_ptr_nonnull(r->h_request_id);
    ck_assert_ptr_null(r->h_transfer_encoding);
}
END_TEST

START_TEST(fields_refused_when_repeated)
{
    static const char *once[] = { "host", "expect", "x-request-id", "transfer-encoding",
                                  "content-length" };
    sws_http_request_t *r;
    unsigned            i;

    for (i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
        r = req(V11, GET, "/");
        ck_assert_int_eq(field(r, once[i], "a"), SWS_OK);
        ck_assert_int_eq(field(r, once[i], "a"), SWS_HTTP_BAD_REQUEST);
    }
    r = req(V11, GET, "/");
    ck_assert_int_eq(field(r, "content-length", "3"), SWS_OK);
    ck_assert_int_eq(field(r, "content-length", "03"), SWS_HTTP_BAD_REQUEST);
}
END_TEST

/* ---- the authority ---- */

START_TEST(host_required_from_http11)
{
    sws_http_request_t *r;

    r = req(V11, GET, "/");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    /* an absolute-form target does not exempt HTTP/1.1 (RFC 9112 3.2) */
    r = req(V11, GET, "/");
    sws_str_set(&r->host, "other.test");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    /* HTTP/1.0 may go without: the default server */
    r = req(V10, GET, "/");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_ptr_eq(r->srv_conf, dflt_srv);
    ck_assert_int_eq(r->host.len, 0);
    /* HTTP/2 and 3: :authority is enough, but one of them is needed */
    r = req(V20, GET, "/");
    sws_str_set(&r->host, "Other.Test");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_ptr_eq(r->srv_conf, other_srv);
    r = req(V20, GET, "/");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
}
END_TEST

START_TEST(host_picks_server)
{
    sws_http_request_t *r;

    r = req(V11, GET, "/");
    field(r, "host", "OTHER.test.:8080");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->host.len, 10);
    ck_assert_int_eq(memcmp(r->host.data, "other.test", 10), 0);
    ck_assert_ptr_eq(r->srv_conf, other_srv);
    /* the target's authority wins over Host */
    r = req(V11, GET, "/");
    field(r, "host", "other.test");
    sws_str_set(&r->host, "localhost");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_ptr_eq(r->srv_conf, dflt_srv);
}
END_TEST

/* An address whose names cannot matter (one server, no regex name): the
 * request stays in the server it started in, whatever its Host. */
START_TEST(host_one_server_address)
{
    sws_http_request_t *r;

    addr.names_matter = 0;
    r = req(V11, GET, "/");
    field(r, "host", "other.test");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_ptr_eq(r->srv_conf, dflt_srv);
    addr.names_matter = 1;
}
END_TEST

START_TEST(host_invalid)
{
    /* "", "." and ":80" name no host: nginx's 400 too */
    static const char *bad[] = { "a..b", "exa$mple", "a b", "h:8x", "[::1", "[zz]", "", ".",
                                 ":80" };
    sws_http_request_t *r;
    unsigned            i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = req(V11, GET, "/");
        field(r, "host", bad[i]);
        ck_assert_msg(sws_http_process_request_headers(r) == SWS_HTTP_BAD_REQUEST, "%s", bad[i]);
        /* as the target's authority too, with a good Host */
        r = req(V20, GET, "/");
        r->host.data = (u_char *) bad[i];
        r->host.len = strlen(bad[i]);
        ck_assert_msg(sws_http_process_request_headers(r) == SWS_HTTP_BAD_REQUEST, "%s", bad[i]);
    }
    /* an invalid Host is a 400 even beside a valid authority */
    r = req(V11, GET, "/");
    field(r, "host", "a..b");
    sws_str_set(&r->host, "other.test");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    /* an empty Host beside a target's authority, and on HTTP/1.0 */
    r = req(V11, GET, "/");
    field(r, "host", "");
    sws_str_set(&r->host, "other.test");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    r = req(V10, GET, "/");
    field(r, "host", "");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    /* IP literals and an empty port are hosts */
    r = req(V11, GET, "/");
    field(r, "host", "[::1]:");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    r = req(V11, GET, "/");
    field(r, "host", "127.0.0.1:80");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
}
END_TEST

/* The same Host again (the remembered one): the same result, from the
 * new request's own bytes; a different, an upper-case, an invalid or a long
 * one after it is judged on its own. */
START_TEST(host_again)
{
    static const char *seq[][2] = {
        { "other.test.:8080", "other.test" }, { "other.test.:8080", "other.test" },
        { "other.test", "other.test" }, { "Other.test", "other.test" },
        { "Other.test", "other.test" }, { "other.test.:8080", "other.test" },
        { "127.0.0.1:80", "127.0.0.1" }, { "127.0.0.1:80", "127.0.0.1" },
        { "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.test",
          "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.test" },
        { "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.test",
          "a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.test" },
        { "127.0.0.1:80", "127.0.0.1" }, { "127.0.0.1:8x", NULL },
        { "127.0.0.1:80", "127.0.0.1" }, { "[::1]:80", "[::1]" }, { "[::1]:80", "[::1]" },
    };
    sws_http_request_t *r;
    unsigned            i;
    char               *value;

    for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        r = req(V11, GET, "/");
        value = sws_pnalloc(pool, strlen(seq[i][0]) + 1);   /* a new buffer each time */
        ck_assert_ptr_nonnull(value);
        strcpy(value, seq[i][0]);
        field(r, "host", value);
        if (seq[i][1] == NULL) {
            ck_assert_msg(sws_http_process_request_headers(r) == SWS_HTTP_BAD_REQUEST, "%u", i);
            continue;
        }
        ck_assert_msg(sws_http_process_request_headers(r) == SWS_OK, "%u", i);
        ck_assert_msg(r->host.len == strlen(seq[i][1])
                      && memcmp(r->host.data, seq[i][1], r->host.len) == 0,
                      "%u: %.*s", i, (int) r->host.len, r->host.data);
        /* the value's own bytes unless they had to be lower-cased */
        ck_assert_int_eq(r->host.data == (u_char *) value, value[0] != 'O');
    }
}
END_TEST

/* ---- framing, Expect, CONNECT, OPTIONS * ---- */

START_TEST(content_length)
{
    sws_http_request_t *r;

    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "12");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->content_length_n, 12);
    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "1x");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    /* a list of the same value: refused, as nginx does */
    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "12, 12");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
}
END_TEST

START_TEST(h1_transfer_encoding)
{
    sws_http_request_t *r;

    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "transfer-encoding", "chunked");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->chunked_in, 1);
    /* with Content-Length: refused, and no length is believed */
    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "5");
    field(r, "transfer-encoding", "chunked");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(r->content_length_n, -1);
    ck_assert_int_eq(r->chunked_in, 0);
    r = req(V10, SWS_HTTP_POST, "/");
    field(r, "transfer-encoding", "chunked");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_BAD_REQUEST);
    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "transfer-encoding", "gzip");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_NOT_IMPLEMENTED);
}
END_TEST

START_TEST(h1_keepalive)
{
    sws_http_request_t *r;

    r = req(V11, GET, "/");
    field(r, "host", "a");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->keepalive, 1);
    r = req(V11, GET, "/");
    field(r, "host", "a");
    field(r, "connection", "foo, Close");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->keepalive, 0);
    r = req(V10, GET, "/");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->keepalive, 0);
    r = req(V10, GET, "/");
    field(r, "connection", "Keep-Alive");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->keepalive, 1);
}
END_TEST

START_TEST(expect)
{
    sws_http_request_t *r;

    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "3");
    field(r, "expect", "100-Continue");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->expect_continue, 1);
    /* nothing to wait for without a body; HTTP/1.0 does not know 100 */
    r = req(V11, GET, "/");
    field(r, "host", "a");
    field(r, "expect", "100-continue");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->expect_continue, 0);
    r = req(V10, SWS_HTTP_POST, "/");
    field(r, "content-length", "3");
    field(r, "expect", "100-continue");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->expect_continue, 0);
    /* another expectation is ignored, as nginx ignores it (417 is a MAY) */
    r = req(V11, SWS_HTTP_POST, "/");
    field(r, "host", "a");
    field(r, "content-length", "3");
    field(r, "expect", "something-else");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->expect_continue, 0);
    r = req(V10, GET, "/");
    field(r, "expect", "something-else");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
}
END_TEST

START_TEST(connect_and_asterisk)
{
    sws_http_request_t *r;

    r = req(V11, SWS_HTTP_CONNECT, "");
    field(r, "host", "a:443");
    sws_str_set(&r->host, "a:443");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_HTTP_NOT_ALLOWED);
    r = req(V11, SWS_HTTP_OPTIONS, "*");
    field(r, "host", "a");
    r->asterisk = 1;
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_DONE);
    ck_assert_int_eq(r->uri.len, 1);
    /* an ordinary target: the URI is set */
    r = req(V11, GET, "/a/b");
    field(r, "host", "a");
    ck_assert_int_eq(sws_http_process_request_headers(r), SWS_OK);
    ck_assert_int_eq(r->uri.len, 4);
}
END_TEST

static Suite *
request_head_suite(void)
{
    Suite *s = suite_create("http_request_head");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, fields_remembered);
    tcase_add_test(tc, fields_refused_when_repeated);
    tcase_add_test(tc, host_required_from_http11);
    tcase_add_test(tc, host_one_server_address);
    tcase_add_test(tc, host_picks_server);
    tcase_add_test(tc, host_invalid);
    tcase_add_test(tc, host_again);
    tcase_add_test(tc, content_length);
    tcase_add_test(tc, h1_transfer_encoding);
    tcase_add_test(tc, h1_keepalive);
    tcase_add_test(tc, expect);
    tcase_add_test(tc, connect_and_asterisk);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(request_head_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
