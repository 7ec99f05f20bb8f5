/*
 * Unit tests of the HTTP/1.1 parsing functions: request line, header
 * lines, Content-Length, Range, chunked decoding and path normalisation.
 * Inputs are copied into exact-size heap blocks so that the sanitizers
 * catch any read past the end.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sws_http_parse.h"

/* ---- helpers ---------------------------------------------------------- */

#define MAX_BLOCKS 4096
static u_char  *blocks[MAX_BLOCKS];
static int      nblocks;

static u_char *
block(size_t n)
{
    u_char  *p = malloc(n ? n : 1);

    ck_assert_ptr_nonnull(p);
    ck_assert_int_lt(nblocks, MAX_BLOCKS);
    blocks[nblocks++] = p;
    return p;
}

static u_char *
dupn(const char *s, size_t n)
{
    u_char  *p = block(n);

    memcpy(p, s, n);
    return p;
}

static void
free_blocks(void)
{
    while (nblocks) {
        free(blocks[--nblocks]);
    }
}

static void setup(void) { nblocks = 0; }
static void teardown(void) { free_blocks(); }

static int
str_is(const sws_str_t *s, const char *expect)
{
    size_t  n = strlen(expect);

    return s->len == n && (n == 0 || memcmp(s->data, expect, n) == 0);
}

#define ck_str(s, e) \
    ck_assert_msg(str_is(s, e), "expected \"%s\", got \"%.*s\"", e, \
                  (int) (s)->len, (s)->data ? (char *) (s)->data : "")

static sws_http_request_line_t  rl;

/* Parse a request line given with its length (may contain NUL). */
static sws_int_t
rln(const char *s, size_t n)
{
    u_char  *p = dupn(s, n);

    memset(&rl, 0x5a, sizeof(rl));
    return sws_http_parse_request_line(&rl, p, p + n);
}

#define RL(s)  rln(s, sizeof(s) - 1)

/* ---- method and target apart (HTTP/2, HTTP/3) ------------------------- */

/* sws_http_parse_method_target(method, target) against the line "method
 * SP target SP HTTP/1.1": the same answer, and the same method, target,
 * path, query and flags when it is SWS_OK. */
static void
method_target_as_line(const char *method, const char *target)
{
    sws_http_request_line_t  a, b;
    u_char                   line[256], m[64], t[192];
    size_t                   ml = strlen(method), tl = strlen(target), n;
    sws_int_t                ra, rb;

    memcpy(m, method, ml);
    memcpy(t, target, tl);
    n = (size_t) snprintf((char *) line, sizeof(line), "%s %s HTTP/1.1", method, target);
    memset(&a, 0x5a, sizeof(a));
    memset(&b, 0x5a, sizeof(b));
    ra = sws_http_parse_method_target(&a, m, ml, t, tl);
    rb = sws_http_parse_request_line(&b, line, line + n);
    ck_assert_msg(ra == rb, "\"%s\" \"%s\": %d, the line %d", method, target, (int) ra,
                  (int) rb);
    if (ra != SWS_OK) {
        return;
    }
    ck_assert_uint_eq(a.method, b.method);
    ck_assert(a.method_name.len == b.method_name.len
              && memcmp(a.method_name.data, b.method_name.data, a.method_name.len) == 0);
    ck_assert(a.target.len == b.target.len
              && memcmp(a.target.data, b.target.data, a.target.len) == 0);
    ck_assert(a.path.len == b.path.len && memcmp(a.path.data, b.path.data, a.path.len) == 0);
    ck_assert(a.args.len == b.args.len && memcmp(a.args.data, b.args.data, a.args.len) == 0);
    ck_assert_uint_eq(a.host.len, b.host.len);
    ck_assert_uint_eq(a.complex_path, b.complex_path);
    ck_assert_uint_eq(a.encoded_slash, b.encoded_slash);
    ck_assert_uint_eq(a.asterisk, b.asterisk);
    ck_assert_uint_eq(a.authority, b.authority);
}

START_TEST(method_target_like_line)
{
    static const char *methods[] = { "GET", "HEAD", "POST", "OPTIONS", "CONNECT", "get",
                                     "M-SEARCH", "G(T", "G T", "G\x01T", "" };
    static const char *targets[] = {
        "/", "/a.txt", "/a?b=1&c[]=2", "/a/./b", "/a/../b", "//a", "/a/.", "/a/..",
        "/%61", "/a%2Fb", "/a%2fb", "/a?%2F", "/%", "/a b", "/a\"b", "/a<b", "/a#b",
        "/[x]", "/a?q=<", "/a\x7f", "/a\xc3\xa9", "/a\x01", "*", "*x", "a", "",
        "http://h/a", "https://h:8080/a?q", "http://h", "http://u@h/", "h:443",
        "localhost:80", "/a?", "/?",
    };
    size_t i, j;

    for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
        for (j = 0; j < sizeof(targets) / sizeof(targets[0]); j++) {
            method_target_as_line(methods[i], targets[j]);
        }
    }
}
END_TEST

/* ---- request line: good ----------------------------------------------- */

START_TEST(rl_simple_get)
{
    ck_assert_int_eq(RL("GET / HTTP/1.1"), SWS_OK);
    ck_assert_uint_eq(rl.method, SWS_HTTP_GET);
    ck_str(&rl.method_name, "GET");
    ck_str(&rl.target, "/");
    ck_str(&rl.path, "/");
    ck_str(&rl.args, "");
    ck_assert_uint_eq(rl.args.len, 0);
    ck_assert_uint_eq(rl.schema.len, 0);
    ck_assert_uint_eq(rl.host.len, 0);
    ck_assert_uint_eq(rl.version, SWS_HTTP_VERSION_11);
    ck_assert_uint_eq(rl.complex_path, 0);
    ck_assert_uint_eq(rl.asterisk, 0);
    ck_assert_uint_eq(rl.authority, 0);
}
END_TEST

START_TEST(rl_query_and_version)
{
    ck_assert_int_eq(RL("GET /index.html?a=1&b=2 HTTP/1.0"), SWS_OK);
    ck_str(&rl.target, "/index.html?a=1&b=2");
    ck_str(&rl.path, "/index.html");
    ck_str(&rl.args, "a=1&b=2");
    ck_assert_uint_eq(rl.version, SWS_HTTP_VERSION_10);

    ck_assert_int_eq(RL("GET /? HTTP/1.1"), SWS_OK);
    ck_str(&rl.path, "/");
    ck_str(&rl.args, "");

    ck_assert_int_eq(RL("GET /a?b?c/d:@!$&'()*+,;=%41 HTTP/1.1"), SWS_OK);
    ck_str(&rl.path, "/a");
    ck_str(&rl.args, "b?c/d:@!$&'()*+,;=%41");
    ck_assert_uint_eq(rl.complex_path, 0);   /* '%' in the query only */

    ck_assert_int_eq(RL("GET /a?x[]=1&y[k]=2 HTTP/1.1"), SWS_OK);
    ck_str(&rl.args, "x[]=1&y[k]=2");

    ck_assert_int_eq(RL("GET /a?//../ HTTP/1.1"), SWS_OK);
    ck_assert_uint_eq(rl.complex_path, 0);

    ck_assert_int_eq(RL("GET / HTTP/1.2"), SWS_OK);
    ck_assert_uint_eq(rl.version, SWS_HTTP_VERSION_11);
    ck_assert_int_eq(RL("GET / HTTP/1.9"), SWS_OK);
    ck_assert_uint_eq(rl.version, SWS_HTTP_VERSION_11);
}
END_TEST

START_TEST(rl_path_chars)
{
    ck_assert_int_eq(RL("GET /AZaz09-._~!$&'()*+,;=:@/x HTTP/1.1"), SWS_OK);
    ck_str(&rl.path, "/AZaz09-._~!$&'()*+,;=:@/x");
    ck_assert_uint_eq(rl.complex_path, 0);
}
END_TEST

START_TEST(rl_methods)
{
    static const struct { const char *line; sws_uint_t m; } t[] = {
        { "GET / HTTP/1.1", SWS_HTTP_GET },
        { "HEAD / HTTP/1.1", SWS_HTTP_HEAD },
        { "POST / HTTP/1.1", SWS_HTTP_POST },
        { "PUT / HTTP/1.1", SWS_HTTP_PUT },
        { "DELETE / HTTP/1.1", SWS_HTTP_DELETE },
        { "OPTIONS / HTTP/1.1", SWS_HTTP_OPTIONS },
        { "PATCH / HTTP/1.1", SWS_HTTP_PATCH },
        { "TRACE / HTTP/1.1", SWS_HTTP_TRACE },
        { "get / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "Get / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "GETX / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "GE / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "PROPFIND / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "M-SEARCH / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "!#$%&'*+-.^_`|~09aZ / HTTP/1.1", SWS_HTTP_UNKNOWN },
        { "X / HTTP/1.1", SWS_HTTP_UNKNOWN },
    };
    size_t  i;

    for (i = 0; i < sws_nelems(t); i++) {
        ck_assert_msg(rln(t[i].line, strlen(t[i].line)) == SWS_OK, "%s", t[i].line);
        ck_assert_msg(rl.method == t[i].m, "%s", t[i].line);
        ck_assert_uint_eq(rl.method_name.len, strchr(t[i].line, ' ') - t[i].line);
    }
}
END_TEST

START_TEST(rl_asterisk)
{
    ck_assert_int_eq(RL("OPTIONS * HTTP/1.1"), SWS_OK);
    ck_assert_uint_eq(rl.method, SWS_HTTP_OPTIONS);
    ck_assert_uint_eq(rl.asterisk, 1);
    ck_str(&rl.path, "*");
    ck_str(&rl.target, "*");

    ck_assert_int_eq(RL("GET * HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("HEAD * HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("options * HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("OPTIONS *x HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("OPTIONS */ HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("OPTIONS ** HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
}
END_TEST

START_TEST(rl_connect)
{
    ck_assert_int_eq(RL("CONNECT example.com:443 HTTP/1.1"), SWS_OK);
    ck_assert_uint_eq(rl.method, SWS_HTTP_CONNECT);
    ck_assert_uint_eq(rl.authority, 1);
    ck_str(&rl.host, "example.com:443");
    ck_str(&rl.target, "example.com:443");

    ck_assert_int_eq(RL("CONNECT [::1]:8443 HTTP/1.1"), SWS_OK);
    ck_str(&rl.host, "[::1]:8443");
    ck_assert_int_eq(RL("CONNECT 10.0.0.1:1 HTTP/1.0"), SWS_OK);

    ck_assert_int_eq(RL("CONNECT / HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT example.com HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT example.com: HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT :443 HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT example.com:65536 HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT example.com:443/ HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT u@example.com:443 HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(RL("CONNECT http://example.com:443/ HTTP/1.1"),
                     SWS_HTTP_BAD_REQUEST);
    /* authority-form is for CONNECT only */
    ck_assert_int_eq(RL("GET example.com:80 HTTP/1.1"), SWS_HTTP_BAD_REQUEST);
}
END_TEST

START_TEST(rl_absolute)
{
    ck_assert_int_eq(RL("GET http://example.com/a/b?q=1 HTTP/1.1"), SWS_OK);
    ck_str(&rl.schema, "http");
    ck_str(&rl.host, "example.com");
    ck_str(&rl.path, "/a/b");
    ck_str(&rl.args, "q=1");
    ck_str(&rl.target, "http://example.com/a/b?q=1");
    ck_assert_uint_eq(rl.complex_path, 0);

    ck_assert_int_eq(RL("GET HTTPS://Example.COM:8443 HTTP/1.1"), SWS_OK);
    ck_str(&rl.schema, "https");
    ck_str(&rl.host, "Example.COM:8443");
    ck_str(&rl.path, "/");
    ck_str(&rl.args, "");

    ck_assert_int_eq(RL("GET hTTp://h?x=1 HTTP/1.1"), SWS_OK);
    ck_str(&rl.schema, "http");
    ck_str(&rl.host, "h");
    ck_str(&rl.path, "/");
    ck_str(&rl.args, "x=1");

    ck_assert_int_eq(RL("GET http://[::1]:80/ HTTP/1.1"), SWS_OK);
    ck_str(&rl.host, "[::1]:80");
    ck_assert_int_eq(RL("GET http://[2001:db8::7]/x HTTP/1.1"), SWS_OK);
    ck_str(&rl.host, "[2001:db8::7]");
    ck_assert_int_eq(RL("GET http://[::ffff:1.2.3.4]/ HTTP/1.1"), SWS_OK);
    ck_assert_int_eq(RL("GET http://127.0.0.1/ HTTP/1.1"), SWS_OK);
    ck_str(&rl.host, "127.0.0.1");
    ck_assert_int_eq(RL("GET http://h:/ HTTP/1.1"), SWS_OK);
    ck_str(&rl.host, "h:");

    ck_assert_int_eq(RL("GET http://h//a HTTP/1.1"), SWS_OK);
    ck_str(&rl.path, "//a");
    ck_assert_uint_eq(rl.complex_path, 1);
}
END_TEST

START_TEST(rl_absolute_bad)
{
    static const char *bad[] = {
        "GET http://user@host/ HTTP/1.1",
        "GET http://user:pw@host/ HTTP/1.1",
        "GET http://@host/ HTTP/1.1",
        "GET http:///a HTTP/1.1",
        "GET http:// HTTP/1.1",
        "GET http://:80/ HTTP/1.1",
        "GET ftp://h/ HTTP/1.1",
        "GET httpx://h/ HTTP/1.1",
        "GET http:/h/ HTTP/1.1",
        "GET http:h/ HTTP/1.1",
        "GET http HTTP/1.1",
        "GET h HTTP/1.1",
        "GET http://h:99999/ HTTP/1.1",
        "GET http://h:123456/ HTTP/1.1",
        "GET http://h:8x/ HTTP/1.1",
        "GET http://[zz::1]/ HTTP/1.1",
        "GET http://[::1/ HTTP/1.1",
        "GET http://[]/ HTTP/1.1",
        "GET http://[1]/ HTTP/1.1",
        "GET http://[v1.x]/ HTTP/1.1",
        "GET http://h/a#b HTTP/1.1",
        "GET http://h#b HTTP/1.1",
        "GET http://h%41/ HTTP/1.1",
        "GET http://h/a b HTTP/1.1",
        "GET http://h/a|b HTTP/1.1",
    };
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(rln(bad[i], strlen(bad[i])) == SWS_HTTP_BAD_REQUEST, "%s", bad[i]);
    }
}
END_TEST

START_TEST(rl_complex)
{
    static const struct { const char *path; int complex; } t[] = {
        { "/", 0 },
        { "/a/b/c", 0 },
        { "/a/", 0 },
        { "/a.b/c..d/.e/..f/g.", 0 },
        { "/a/.../b", 0 },
        { "/.x", 0 },
        { "/a%20b", 1 },
        { "/%", 1 },
        { "//", 1 },
        { "/a//b", 1 },
        { "/a/./b", 1 },
        { "/a/../b", 1 },
        { "/a/.", 1 },
        { "/a/..", 1 },
        { "/.", 1 },
        { "/..", 1 },
        { "/./", 1 },
        { "/../", 1 },
    };
    char    line[256];
    size_t  i, n;

    for (i = 0; i < sws_nelems(t); i++) {
        n = snprintf(line, sizeof(line), "GET %s HTTP/1.1", t[i].path);
        ck_assert_msg(rln(line, n) == SWS_OK, "%s", line);
        ck_assert_msg(rl.complex_path == (unsigned) t[i].complex, "%s", line);
        ck_str(&rl.path, t[i].path);

        n = snprintf(line, sizeof(line), "GET %s?q=1 HTTP/1.1", t[i].path);
        ck_assert_msg(rln(line, n) == SWS_OK, "%s", line);
        ck_assert_msg(rl.complex_path == (unsigned) t[i].complex, "%s", line);
        ck_str(&rl.path, t[i].path);
    }
}
END_TEST

/* The parser's note of an encoded slash in the path (static files refuse
 * it): the path's "%2F" in either case, never the query's, nor "%25" (an
 * encoded '%') followed by "2F", nor a '%' too near the end. */
START_TEST(rl_encoded_slash)
{
    static const struct { const char *target; int slash; } t[] = {
        { "/a/b", 0 },
        { "/a%2Fb", 1 },
        { "/a%2fb", 1 },
        { "/%2F", 1 },
        { "/a%2F?q=1", 1 },
        { "/a/%2e%2e%2F../b", 1 },
        { "/a%2", 0 },
        { "/a%", 0 },
        { "/a%2e", 0 },
        { "/a%20b", 0 },
        { "/a%252Fb", 0 },
        { "/a%F2b", 0 },
        { "/a?b=%2F", 0 },
        { "/a?%2F", 0 },
        { "http://h/a%2Fb", 1 },
        { "http://h/a?b=%2f", 0 },
    };
    char    line[256];
    size_t  i, n;

    for (i = 0; i < sws_nelems(t); i++) {
        n = snprintf(line, sizeof(line), "GET %s HTTP/1.1", t[i].target);
        ck_assert_msg(rln(line, n) == SWS_OK, "%s", line);
        ck_assert_msg(rl.encoded_slash == (unsigned) t[i].slash, "%s", line);
    }
    /* a line without one after a line with one: the flag is the line's */
    ck_assert_int_eq(rln("GET /a%2Fb HTTP/1.1", 19), SWS_OK);
    ck_assert_int_eq(rln("GET /a/b HTTP/1.1", 17), SWS_OK);
    ck_assert_uint_eq(rl.encoded_slash, 0);
}
END_TEST

/* ---- request line: bad ------------------------------------------------ */

START_TEST(rl_bad_syntax)
{
    static const char *bad[] = {
        "",
        "GET",
        "GET ",
        "GET /",
        "GET / ",
        "GET /index.html",              /* HTTP/0.9 */
        "GET  / HTTP/1.1",
        "GET /  HTTP/1.1",
        "GET / HTTP/1.1 ",
        "GET / HTTP/1.1  ",
        " GET / HTTP/1.1",
        "GET\t/ HTTP/1.1",
        "GET /\tHTTP/1.1",
        "GET / HTTP/1.1\t",
        "GET / HTTP/1.1\r",
        "GET / http/1.1",
        "GET / Http/1.1",
        "GET / HTTP/1.10",
        "GET / HTTP/11.1",
        "GET / HTTP/1",
        "GET / HTTP/1.",
        "GET / HTTP/",
        "GET / HTTP/1.x",
        "GET / HTTP/x.1",
        "GET / HTTP/1,1",
        "GET / HTTP/1.1x",
        "GET / HTTPS/1.1",
        "GET / HTTP /1.1",
        "GET / HTTP/ 1.1",
        "GET / xHTTP/1.1",
        "GET / / HTTP/1.1",
        "GET /a b HTTP/1.1",
        "GET a HTTP/1.1",
        "GET ?a HTTP/1.1",
        "GET HTTP/1.1",
        "GE(T / HTTP/1.1",
        "GET@ / HTTP/1.1",
        "G\"T / HTTP/1.1",
        "/ HTTP/1.1",
        "GET /a#frag HTTP/1.1",
        "GET /a?b#frag HTTP/1.1",
        "GET /# HTTP/1.1",
        "GET /a[0] HTTP/1.1",
        "GET /a]0 HTTP/1.1",
        "GET /a b HTTP/2.0",            /* malformed first: 400, not 505 */
    };
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(rln(bad[i], strlen(bad[i])) == SWS_HTTP_BAD_REQUEST,
                      "\"%s\"", bad[i]);
    }
}
END_TEST

START_TEST(rl_bad_target_chars)
{
    static const char  chars[] = "\"<>\\^`{|}# ";
    char                line[64];
    size_t              i, n;
    int                 c;

    for (i = 0; i < sizeof(chars) - 1; i++) {
        n = snprintf(line, sizeof(line), "GET /a%cb HTTP/1.1", chars[i]);
        ck_assert_msg(rln(line, n) == SWS_HTTP_BAD_REQUEST, "path %c", chars[i]);
        n = snprintf(line, sizeof(line), "GET /a?x=%cb HTTP/1.1", chars[i]);
        ck_assert_msg(rln(line, n) == SWS_HTTP_BAD_REQUEST, "query %c", chars[i]);
    }

    /* CTLs (NUL included), DEL and obs-text, in the path and in the query */
    for (c = 0; c < 256; c++) {
        if (!(c < 0x20 || c >= 0x7f)) {
            continue;
        }
        memcpy(line, "GET /aXb HTTP/1.1", 17);
        line[6] = (char) c;
        ck_assert_msg(rln(line, 17) == SWS_HTTP_BAD_REQUEST, "path byte 0x%02x", c);
        memcpy(line, "GET /?aXb HTTP/1.1", 18);
        line[7] = (char) c;
        ck_assert_msg(rln(line, 18) == SWS_HTTP_BAD_REQUEST, "query byte 0x%02x", c);
        memcpy(line, "GXT / HTTP/1.1", 14);
        line[1] = (char) c;
        ck_assert_msg(rln(line, 14) == SWS_HTTP_BAD_REQUEST, "method byte 0x%02x", c);
        memcpy(line, "GET / HTTP/1.1X", 15);
        line[14] = (char) c;
        ck_assert_msg(rln(line, 15) == SWS_HTTP_BAD_REQUEST, "trailing 0x%02x", c);
    }
}
END_TEST

START_TEST(rl_version_not_supported)
{
    ck_assert_int_eq(RL("GET / HTTP/2.0"), SWS_HTTP_VERSION_NOT_SUPPORTED);
    ck_assert_int_eq(RL("GET / HTTP/3.0"), SWS_HTTP_VERSION_NOT_SUPPORTED);
    ck_assert_int_eq(RL("GET / HTTP/0.9"), SWS_HTTP_VERSION_NOT_SUPPORTED);
    ck_assert_int_eq(RL("GET / HTTP/9.9"), SWS_HTTP_VERSION_NOT_SUPPORTED);
    ck_assert_int_eq(RL("OPTIONS * HTTP/2.0"), SWS_HTTP_VERSION_NOT_SUPPORTED);
    ck_assert_int_eq(RL("GET http://h/ HTTP/2.0"), SWS_HTTP_VERSION_NOT_SUPPORTED);
}
END_TEST

/* ---- header lines ----------------------------------------------------- */

static sws_http_header_t  hd;
static u_char             lcbuf[256];

static sws_int_t
hln(const char *s, size_t n)
{
    u_char  *p = dupn(s, n);

    memset(&hd, 0x5a, sizeof(hd));
    return sws_http_parse_header_line(&hd, lcbuf, p, p + n);
}

#define HL(s)  hln(s, sizeof(s) - 1)

START_TEST(hl_good)
{
    ck_assert_int_eq(HL("Host: example.com"), SWS_OK);
    ck_str(&hd.name, "host");
    ck_str(&hd.value, "example.com");
    ck_assert_ptr_eq(hd.name.data, lcbuf);
    ck_assert_uint_eq(hd.hash, sws_hash_key((u_char *) "host", 4));
    ck_assert_uint_ne(hd.hash, 0);

    ck_assert_int_eq(HL("CONTENT-Length:5"), SWS_OK);
    ck_str(&hd.name, "content-length");
    ck_str(&hd.value, "5");
    ck_assert_uint_eq(hd.hash, sws_hash_key((u_char *) "content-length", 14));

    ck_assert_int_eq(HL("X-Foo: \t bar  baz \t "), SWS_OK);
    ck_str(&hd.value, "bar  baz");

    ck_assert_int_eq(HL("X-Tab:a\tb"), SWS_OK);
    ck_str(&hd.value, "a\tb");

    ck_assert_int_eq(HL("X-Empty:"), SWS_OK);
    ck_str(&hd.name, "x-empty");
    ck_assert_uint_eq(hd.value.len, 0);

    ck_assert_int_eq(HL("X-Empty: \t  "), SWS_OK);
    ck_assert_uint_eq(hd.value.len, 0);

    ck_assert_int_eq(HL("X-Obs: caf\xc3\xa9 \x80\xff"), SWS_OK);
    ck_str(&hd.value, "caf\xc3\xa9 \x80\xff");

    ck_assert_int_eq(HL("!#$%&'*+-.^_`|~09AZaz: v"), SWS_OK);
    ck_str(&hd.name, "!#$%&'*+-.^_`|~09azaz");

    ck_assert_int_eq(HL("X: \"(),/:;<=>?@[\\]{}~"), SWS_OK);
    ck_str(&hd.value, "\"(),/:;<=>?@[\\]{}~");

    /* a tab in the tail of a long value: the word check refuses it, the
     * byte loop accepts it */
    ck_assert_int_eq(HL("X-Long: 0123456789\tab"), SWS_OK);
    ck_str(&hd.value, "0123456789\tab");
    ck_assert_int_eq(HL("X-Eight: 01234567"), SWS_OK);
    ck_str(&hd.value, "01234567");
    ck_assert_int_eq(HL("X-Nine: 012345678  "), SWS_OK);
    ck_str(&hd.value, "012345678");

    ck_assert_int_eq(HL("X:: v"), SWS_OK);
    ck_str(&hd.name, "x");
    ck_str(&hd.value, ": v");
}
END_TEST

START_TEST(hl_bad)
{
    static const struct { const char *s; size_t n; } bad[] = {
#define B(s) { s, sizeof(s) - 1 }
        B(""),
        B(" Host: x"),
        B("\tHost: x"),
        B("Host : x"),
        B("Host\t: x"),
        B(": x"),
        B(":"),
        B("Host x"),
        B("Host"),
        B("Ho st: x"),
        B("Host(: x"),
        B("Ho\"st: x"),
        B("H\xc3\xb6st: x"),
        B("Host\0: x"),
        B("Host: a\0b"),
        B("Host: a\rb"),
        B("Host: a\r"),
        B("Host: a\nb"),
        B("Host: \x01"),
        B("Host: a\x1f"),
        B("Host: a\x7f"),
        B("Host: a\x0b"),
        B("Host: a\x0c"),
        /* values of 8 bytes or more whose last word is checked overlapping
         * bytes already seen: a bad byte anywhere in it still fails */
        B("Host: example.co\x01"),
        B("Host: example.com\x7f"),
        B("Host: exa\x00mple.c"),
        B("Host: 0123456789abcde\x1f"),
        B("Host: 01234567\rx"),
        B("Host: 0123456\x0b"),
        B("Host: \x01" "0123456789abcdef"),
        B("Host: 01234567\x7f" "0123456789abcdef"),
#undef B
    };
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(hln(bad[i].s, bad[i].n) == SWS_HTTP_BAD_REQUEST, "case %zu", i);
    }
}
END_TEST

/* Every byte value at every position of a long value (the 8-byte fast path
 * and the byte loop must agree). */
START_TEST(hl_value_bytes)
{
    char    line[40];
    size_t  pos;
    int     c, good;

    for (c = 0; c < 256; c++) {
        good = (c == '\t' || (c >= 0x20 && c != 0x7f));
        for (pos = 0; pos < 26; pos++) {
            memcpy(line, "X: abcdefghijklmnopqrstuvwxyz", 29);
            line[3 + pos] = (char) c;
            ck_assert_msg((hln(line, 29) == SWS_OK) == good, "byte 0x%02x at %zu", c, pos);
            if (good) {
                ck_assert_uint_eq(hd.value.len,
                                  26 - ((c == ' ' || c == '\t') && (pos == 0 || pos == 25)));
            }
            free_blocks();
        }
    }
}
END_TEST

/* Every byte value at every position of names of 1 to 40 bytes (chunks of
 * 16 or 8 bytes and the byte loop after them must agree), parsed in place
 * as HTTP/1's request head parses them: only the name is lower-cased, the
 * value in the same chunk is left as it was, and the name's class is
 * sws_http_name_odd's. */
static int
tchar(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

START_TEST(hl_name_bytes)
{
    static const char  name[] = "Abcdefghijklmnopqrstuvwxyz-0123456789ABC";
    char               line[64], want[64];
    u_char            *p, odd, want_odd;
    size_t             len, pos, i;
    int                c, good;

    for (len = 1; len <= 40; len++) {
        for (pos = 0; pos < len; pos++) {
            for (c = 0; c < 256; c++) {
                memcpy(line, name, len);
                line[pos] = (char) c;
                memcpy(line + len, ": ValUE", 7);
                p = dupn(line, len + 7);
                good = tchar(c) || (c == ':' && pos > 0);
                ck_assert_msg((sws_http_parse_request_field(&hd, p, p, p + len + 7, &odd)
                               == SWS_OK) == good, "byte 0x%02x at %zu of %zu", c, pos, len);
                if (good) {
                    want_odd = 0;
                    for (i = 0; i < len && line[i] != ':'; i++) {
                        want[i] = (char) sws_tolower((u_char) line[i]);
                        want_odd |= sws_http_name_odd[(u_char) want[i]];
                    }
                    ck_assert_uint_eq(hd.name.len, i);
                    ck_assert(memcmp(p, want, i) == 0);
                    ck_assert(memcmp(p + i, line + i, len + 7 - i) == 0);
                    ck_assert_uint_eq(odd, want_odd);
                    ck_assert_uint_eq(hd.hash, sws_hash_key((u_char *) want, i));
                    ck_assert_ptr_eq(hd.value.data, c == ':' ? p + pos + 1 : p + len + 2);
                }
                free_blocks();
            }
        }
    }
}
END_TEST

/* Short values whose line is a chunk or longer: the chunk that ends at the
 * line's end overlaps the name, the colon and OWS. */
START_TEST(hl_short_value_tail)
{
    ck_assert_int_eq(HL("Content-Length: 13"), SWS_OK);
    ck_str(&hd.value, "13");
    ck_assert_int_eq(HL("Content-Length:\t13"), SWS_OK);
    ck_str(&hd.value, "13");
    ck_assert_int_eq(HL("Content-Length: 13\t"), SWS_OK);
    ck_str(&hd.value, "13");
    ck_assert_int_eq(HL("Content-Length: 1\x7f"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(HL("Content-Length:\t1\x01"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(HL("Content-Length: 1\r"), SWS_HTTP_BAD_REQUEST);
    ck_assert_int_eq(HL("X-Sixteen-Bytes: \x80"), SWS_OK);
    ck_assert_int_eq(HL("X-Sixteen-Bytes:\x80\xff\t"), SWS_OK);
    ck_str(&hd.value, "\x80\xff");
}
END_TEST

/* ---- Content-Length --------------------------------------------------- */

static off_t
cl(const char *s)
{
    size_t  n = strlen(s);

    return sws_http_parse_content_length(dupn(s, n), n);
}

START_TEST(cl_cases)
{
    ck_assert_int_eq(cl("0"), 0);
    ck_assert_int_eq(cl("5"), 5);
    ck_assert_int_eq(cl("007"), 7);
    ck_assert_int_eq(cl("1234567890"), 1234567890);
    ck_assert_int_eq(cl("4611686018427387904"), (off_t) 1 << 62);
    ck_assert_int_eq(cl("4611686018427387903"), ((off_t) 1 << 62) - 1);
    ck_assert_int_eq(cl("5, 5"), 5);
    ck_assert_int_eq(cl("5,5"), 5);
    ck_assert_int_eq(cl("5 ,\t5 , 5"), 5);
    ck_assert_int_eq(cl("05, 5"), 5);

    ck_assert_int_eq(cl("4611686018427387905"), -1);
    ck_assert_int_eq(cl("9223372036854775807"), -1);
    ck_assert_int_eq(cl("9223372036854775808"), -1);
    ck_assert_int_eq(cl("99999999999999999999999999"), -1);
    ck_assert_int_eq(cl("5, 6"), -1);
    ck_assert_int_eq(cl("+5"), -1);
    ck_assert_int_eq(cl("-1"), -1);
    ck_assert_int_eq(cl(""), -1);
    ck_assert_int_eq(cl(" "), -1);
    ck_assert_int_eq(cl("5 5"), -1);
    ck_assert_int_eq(cl("0x10"), -1);
    ck_assert_int_eq(cl("5a"), -1);
    ck_assert_int_eq(cl("1.0"), -1);
    ck_assert_int_eq(cl(",5"), -1);
    ck_assert_int_eq(cl("5,"), -1);
    ck_assert_int_eq(cl("5,,5"), -1);
    ck_assert_int_eq(cl("5;5"), -1);
}
END_TEST

/* ---- Range ------------------------------------------------------------ */

static sws_http_range_t  rg[8];

static sws_int_t
range(const char *s, off_t size, sws_uint_t max)
{
    size_t  n = strlen(s);

    memset(rg, 0x5a, sizeof(rg));
    return sws_http_parse_range(dupn(s, n), n, size, rg, max);
}

#define ck_range(i, a, b) do { \
    ck_assert_int_eq(rg[i].start, a); ck_assert_int_eq(rg[i].end, b); } while (0)

START_TEST(range_good)
{
    ck_assert_int_eq(range("bytes=0-499", 1000, 8), 1);
    ck_range(0, 0, 500);
    ck_assert_int_eq(range("bytes=500-", 1000, 8), 1);
    ck_range(0, 500, 1000);
    ck_assert_int_eq(range("bytes=-200", 1000, 8), 1);
    ck_range(0, 800, 1000);
    ck_assert_int_eq(range("bytes=-2000", 1000, 8), 1);
    ck_range(0, 0, 1000);
    ck_assert_int_eq(range("bytes=-1000", 1000, 8), 1);
    ck_range(0, 0, 1000);
    ck_assert_int_eq(range("bytes=0-1999", 1000, 8), 1);
    ck_range(0, 0, 1000);
    ck_assert_int_eq(range("bytes=999-999", 1000, 8), 1);
    ck_range(0, 999, 1000);
    ck_assert_int_eq(range("bytes=0-0", 1, 8), 1);
    ck_range(0, 0, 1);
    ck_assert_int_eq(range("bytes=0-0,-1", 1000, 8), 2);
    ck_range(0, 0, 1);
    ck_range(1, 999, 1000);
    ck_assert_int_eq(range("BYTES=0-1", 1000, 8), 1);
    ck_assert_int_eq(range("Bytes=0-1", 1000, 8), 1);
    ck_assert_int_eq(range("bytes=0-1 , 2-3,\t4-5", 1000, 8), 3);
    ck_range(2, 4, 6);
    ck_assert_int_eq(range("bytes=0-1,,2-3", 1000, 8), 2);
    ck_assert_int_eq(range("bytes=0-1,", 1000, 8), 1);
    ck_assert_int_eq(range("bytes=,0-1", 1000, 8), 1);
    /* unsatisfiable specs are skipped */
    ck_assert_int_eq(range("bytes=2000-,0-0", 1000, 8), 1);
    ck_range(0, 0, 1);
    /* huge numbers saturate */
    ck_assert_int_eq(range("bytes=0-99999999999999999999999", 1000, 8), 1);
    ck_range(0, 0, 1000);
    ck_assert_int_eq(range("bytes=-99999999999999999999999", 1000, 8), 1);
    ck_range(0, 0, 1000);
    ck_assert_int_eq(range("bytes=10-9223372036854775807", 1000, 8), 1);
    ck_range(0, 10, 1000);
    /* whitespace around the numbers (nginx takes it) */
    ck_assert_int_eq(range("bytes= 0-1", 1000, 8), 1);
    ck_range(0, 0, 2);
    ck_assert_int_eq(range("bytes=0 - 1", 1000, 8), 1);
    ck_range(0, 0, 2);
    ck_assert_int_eq(range("bytes= -5", 1000, 8), 1);
    ck_range(0, 995, 1000);
    /* a range with first > last is skipped as an unsatisfiable one */
    ck_assert_int_eq(range("bytes=5-4,0-1", 1000, 8), 1);
    ck_range(0, 0, 2);
}
END_TEST

START_TEST(range_unsatisfiable)
{
    ck_assert_int_eq(range("bytes=1000-", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=1000-2000", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=-0", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=1000-,-0", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=99999999999999999999999-", 1000, 8), 0);
    /* first > last: invalid, a 416 as nginx's */
    ck_assert_int_eq(range("bytes=3-1", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=1-0", 1000, 8), 0);
    ck_assert_int_eq(range("bytes=1-0", 0, 8), 0);
    ck_assert_int_eq(range("bytes=1-", 0, 8), 0);
}
END_TEST

/* An empty representation asked from its start: the whole (nginx's). */
START_TEST(range_empty_representation)
{
    ck_assert_int_eq(range("bytes=0-", 0, 8), -1);
    ck_assert_int_eq(range("bytes=-5", 0, 8), -1);
    ck_assert_int_eq(range("bytes=0-0", 0, 8), -1);
    ck_assert_int_eq(range("bytes=-0", 0, 8), -1);
    ck_assert_int_eq(range("bytes=5-,0-", 0, 8), -1);
}
END_TEST

/* Not a byte range at all: no Range (-1). */
START_TEST(range_not_bytes)
{
    static const char *bad[] = {
        "", "bytes", "bytes=", "bytes =0-1", "bytes = 0-1", "items=0-1", "byte=0-1",
        "bytesx=0-1", "bytes:0-1",
    };
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(range(bad[i], 1000, 8) == -1, "\"%s\"", bad[i]);
    }
}
END_TEST

/* "bytes=" and a list that does not parse: a 416 (0), as nginx's. */
START_TEST(range_malformed)
{
    static const char *bad[] = {
        "bytes=,", "bytes= ,", "bytes=a-b", "bytes=-", "bytes=--1", "bytes=- 1",
        "bytes=0-1;", "bytes=0-1 2-3", "bytes=1-2-3", "bytes=0-0x1", "bytes=0",
        "bytes=+1-2", "bytes=0-1,x", "bytes=0-1,-", "bytes=0-x",
    };
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(range(bad[i], 1000, 8) == 0, "\"%s\"", bad[i]);
    }
    /* malformed even when the representation is empty */
    ck_assert_int_eq(range("bytes=x", 0, 8), 0);
}
END_TEST

/* The texts of a multipart/byteranges body (RFC 9110 14.6), as the range
 * filter sends them and a cache's parts do too. */
START_TEST(range_multipart_text)
{
    sws_pool_t        *pool = sws_pool_create(4096, NULL);
    sws_http_range_t   rs[2] = { { 0, 10 }, { 990, 1000 } };
    sws_str_t          type, heads[2], tail, ct = { 10, (u_char *) "text/plain" };
    char               want[256], b[21];
    off_t              len;

    ck_assert_ptr_nonnull(pool);
    len = sws_http_range_multipart_text(pool, &ct, rs, 2, 1000, &type, heads, &tail);
    ck_assert_int_eq(type.len, sizeof("multipart/byteranges; boundary=") - 1 + 20);
    ck_assert(memcmp(type.data, "multipart/byteranges; boundary=", 31) == 0);
    memcpy(b, type.data + 31, 20);
    b[20] = '\0';
    ck_assert_int_eq(strspn(b, "0123456789"), 20);
    snprintf(want, sizeof(want), "\r\n--%s\r\nContent-Type: text/plain\r\n"
             "Content-Range: bytes 990-999/1000\r\n\r\n", b);
    ck_assert_int_eq(heads[1].len, strlen(want));
    ck_assert(memcmp(heads[1].data, want, heads[1].len) == 0);
    snprintf(want, sizeof(want), "\r\n--%s--\r\n", b);
    ck_assert_int_eq(tail.len, strlen(want));
    ck_assert(memcmp(tail.data, want, tail.len) == 0);
    ck_assert_int_eq(len, (off_t) (heads[0].len + heads[1].len + tail.len + 20));
    /* no type: no Content-Type line; a new boundary each time */
    len = sws_http_range_multipart_text(pool, NULL, rs, 1, 1000, &type, heads, &tail);
    snprintf(want, sizeof(want), "\r\n--%.20s\r\nContent-Range: bytes 0-9/1000\r\n\r\n",
             type.data + 31);
    ck_assert_int_eq(heads[0].len, strlen(want));
    ck_assert(memcmp(heads[0].data, want, heads[0].len) == 0);
    ck_assert(memcmp(type.data + 31, b, 20) != 0);
    ck_assert_int_eq(len, (off_t) (heads[0].len + tail.len + 10));
    sws_pool_destroy(pool);
}
END_TEST

START_TEST(range_max)
{
    ck_assert_int_eq(range("bytes=0-1,2-3", 1000, 2), 2);
    ck_assert_int_eq(range("bytes=0-1,2-3,4-5", 1000, 2), -1);
    /* only satisfiable ranges count */
    ck_assert_int_eq(range("bytes=0-1,2000-,4-5", 1000, 2), 2);
    ck_range(1, 4, 6);
    ck_assert_int_eq(range("bytes=0-1", 1000, 0), -1);
    ck_assert_int_eq(range("bytes=2000-", 1000, 0), 0);
    /* ranges longer together than the representation: the whole */
    ck_assert_int_eq(range("bytes=0-5,3-8", 10, 8), -1);
    ck_assert_int_eq(range("bytes=0-5,3-8", 36, 8), 2);
    ck_assert_int_eq(range("bytes=0-,0-", 4611686018427387904LL, 8), -1);
}
END_TEST

/* ---- chunked ---------------------------------------------------------- */

/* Feed pieces (split points given), consuming at most step bytes of data
 * per call. Returns the last rc; out gets the decoded data. *rest is set to
 * the bytes left after SWS_DONE. */
static sws_int_t
chunked_feed(const char *body, size_t len, const size_t *cuts, size_t ncuts,
    size_t step, u_char *out, size_t *outlen, size_t *rest)
{
    sws_http_chunked_t  ctx;
    size_t              i, from, to, n;
    u_char             *piece, *pos, *last;
    sws_int_t           rc = SWS_AGAIN;

    memset(&ctx, 0, sizeof(ctx));
    *outlen = 0;
    *rest = 0;

    for (i = 0; i <= ncuts; i++) {
        from = i ? cuts[i - 1] : 0;
        to = (i < ncuts) ? cuts[i] : len;
        piece = malloc(to - from ? to - from : 1);
        memcpy(piece, body + from, to - from);
        pos = piece;
        last = piece + (to - from);

        for ( ;; ) {
            rc = sws_http_parse_chunked(&ctx, &pos, last);
            if (rc == SWS_OK) {
                ck_assert(pos < last);
                ck_assert_int_gt(ctx.size, 0);
                n = sws_min((size_t) ctx.size, (size_t) (last - pos));
                n = sws_min(n, step);
                memcpy(out + *outlen, pos, n);
                *outlen += n;
                pos += n;
                ctx.size -= n;
                continue;
            }
            break;
        }

        if (rc == SWS_AGAIN) {
            ck_assert_ptr_eq(pos, last);
        }
        if (rc == SWS_DONE) {
            *rest = (last - pos) + (len - to);
        }
        free(piece);
        if (rc != SWS_AGAIN) {
            break;
        }
    }

    if (rc == SWS_DONE) {
        ck_assert_int_eq(ctx.total, (off_t) *outlen);
    }
    return rc;
}

static sws_int_t
chunked_whole(const char *body, size_t len, u_char *out, size_t *outlen)
{
    size_t  rest;

    return chunked_feed(body, len, NULL, 0, (size_t) -1, out, outlen, &rest);
}

#define CHUNKED_BODY \
    "5;name=val;q=\"a \\\"b\\\\ c\"\r\nhello\r\n" \
    "6 ; a = b ;c\r\n world\r\n" \
    "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n" \
    "00000000000000000000001\r\n!\r\n" \
    "0;end\r\nTrailer-A: x y\r\nT2:\r\n\r\n" \
    "NEXT"
#define CHUNKED_DATA "hello worldabcdefghijklmnopqrstuvwxyz!"

START_TEST(chunked_every_split)
{
    static const char  body[] = CHUNKED_BODY;
    size_t             len = sizeof(body) - 1, cut[2], outlen, rest, i, j;
    u_char             out[256];
    sws_int_t          rc;

    /* whole */
    rc = chunked_feed(body, len, NULL, 0, (size_t) -1, out, &outlen, &rest);
    ck_assert_int_eq(rc, SWS_DONE);
    ck_assert_uint_eq(outlen, sizeof(CHUNKED_DATA) - 1);
    ck_assert(memcmp(out, CHUNKED_DATA, outlen) == 0);
    ck_assert_uint_eq(rest, 4);

    /* one cut at every offset, two cuts at every pair of offsets */
    for (i = 0; i <= len; i++) {
        cut[0] = i;
        rc = chunked_feed(body, len, cut, 1, (size_t) -1, out, &outlen, &rest);
        ck_assert_msg(rc == SWS_DONE, "cut at %zu", i);
        ck_assert_uint_eq(outlen, sizeof(CHUNKED_DATA) - 1);
        ck_assert(memcmp(out, CHUNKED_DATA, outlen) == 0);
        ck_assert_uint_eq(rest, 4);

        for (j = i; j <= len; j++) {
            cut[1] = j;
            rc = chunked_feed(body, len, cut, 2, 3, out, &outlen, &rest);
            ck_assert_msg(rc == SWS_DONE, "cuts at %zu %zu", i, j);
            ck_assert(memcmp(out, CHUNKED_DATA, outlen) == 0);
            ck_assert_uint_eq(outlen, sizeof(CHUNKED_DATA) - 1);
        }
    }
}
END_TEST

START_TEST(chunked_byte_by_byte)
{
    static const char  body[] = CHUNKED_BODY;
    size_t             len = sizeof(body) - 1, cuts[sizeof(body)], outlen, rest, i;
    u_char             out[256];

    for (i = 0; i < len; i++) {
        cuts[i] = i + 1;
    }
    ck_assert_int_eq(chunked_feed(body, len, cuts, len - 1, 1, out, &outlen, &rest),
                     SWS_DONE);
    ck_assert_uint_eq(outlen, sizeof(CHUNKED_DATA) - 1);
    ck_assert(memcmp(out, CHUNKED_DATA, outlen) == 0);
    ck_assert_uint_eq(rest, 4);
}
END_TEST

START_TEST(chunked_good_variants)
{
    static const struct { const char *s; const char *data; } t[] = {
        { "0\r\n\r\n", "" },
        { "0\n\n", "" },
        { "5\nhello\n0\n\n", "hello" },
        { "5\r\nhello\n0\r\n\r\n", "hello" },
        { "a\r\n0123456789\r\n0\r\n\r\n", "0123456789" },
        { "A\r\n0123456789\r\n0\r\n\r\n", "0123456789" },
        { "1;a\r\nx\r\n0\r\n\r\n", "x" },
        { "1;a;b;c=d\r\nx\r\n0\r\n\r\n", "x" },
        { "1 ;a\r\nx\r\n0\r\n\r\n", "x" },
        { "1\t;\ta\t=\tb\r\nx\r\n0\r\n\r\n", "x" },
        { "1;a=\"\"\r\nx\r\n0\r\n\r\n", "x" },
        { "1;a=\"x\" ;b\r\nx\r\n0\r\n\r\n", "x" },
        { "1;a=\"\xc3\xa9\"\r\nx\r\n0\r\n\r\n", "x" },
        { "0\r\nA: b\r\nC: d\r\n\r\n", "" },
        { "0\r\nA:\xff\r\n\r\n", "" },
    };
    u_char  out[64];
    size_t  i, outlen;

    for (i = 0; i < sws_nelems(t); i++) {
        ck_assert_msg(chunked_whole(t[i].s, strlen(t[i].s), out, &outlen) == SWS_DONE,
                      "case %zu", i);
        ck_assert_uint_eq(outlen, strlen(t[i].data));
        ck_assert(memcmp(out, t[i].data, outlen) == 0);
    }
}
END_TEST

START_TEST(chunked_bad)
{
    static const char *bad[] = {
        "g\r\n",
        "\r\n",
        "\n",
        " 5\r\nhello\r\n0\r\n\r\n",
        "5 \r\nhello\r\n0\r\n\r\n",
        "-5\r\n",
        "+5\r\n",
        "0x5\r\n",
        "5\rX",
        "5\r\r\n",
        "5\r\nhelloX",
        "5\r\nhello\rX",
        "5\r\nhello\r\r\n",
        "5\r\nhello  \r\n",
        "5;\r\n",
        "5; \r\n",
        "5;a=\r\n",
        "5;a b\r\n",
        "5;a=b \r\n",
        "5;a=b c\r\n",
        "5;a=\"x\"y\r\n",
        "5;a=\"unterminated\r\n",
        "5;a=\"x\x01\"\r\n",
        "5;a=\"x\\\x01\"\r\n",
        "5;a=b\x01\r\n",
        "5;(=b\r\n",
        "5;a==b\r\n",
        "5;a=b=c\r\n",
        "5\x00\r\n",
        "1000000000000000\r\n",
        "FFFFFFFFFFFFFFFFFFFFFF\r\n",
        "0\r\n bad: x\r\n\r\n",
        "0\r\n\tbad: x\r\n\r\n",
        "0\r\nName x\r\n\r\n",
        "0\r\n: x\r\n\r\n",
        "0\r\nX: a\x01\r\n\r\n",
        "0\r\nX: a\x7f\r\n\r\n",
        "0\r\nX: a\rb\r\n\r\n",
        "0\r\nX\r\n\r\n",
        "0\r\n\rX",
    };
    u_char  out[64];
    size_t  i, n, outlen;

    for (i = 0; i < sws_nelems(bad); i++) {
        n = strlen(bad[i]);
        if (i == 28) {
            ck_assert(bad[i][0] == '5' && bad[i][1] == '\0');
            n = 4;      /* embedded NUL */
        }
        ck_assert_msg(chunked_whole(bad[i], n, out, &outlen) == SWS_ERROR,
                      "case %zu", i);
    }
}
END_TEST

START_TEST(chunked_limits)
{
    sws_http_chunked_t  ctx;
    u_char             *p, *pos, *buf;
    size_t              n;

    /* 15 significant hex digits is the most */
    memset(&ctx, 0, sizeof(ctx));
    p = dupn("FFFFFFFFFFFFFFF\r\nx", 18);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 18), SWS_OK);
    ck_assert_int_eq(ctx.size, ((off_t) 1 << 60) - 1);
    ck_assert_ptr_eq(pos, p + 17);

    /* leading zeros do not count */
    memset(&ctx, 0, sizeof(ctx));
    p = dupn("0000000000000000000000000010\r\n", 30);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 30), SWS_AGAIN);
    ck_assert_int_eq(ctx.size, 16);
    ck_assert_int_eq(ctx.state != 0, 1);

    /* the sum of chunk sizes stays under 2^62 */
    memset(&ctx, 0, sizeof(ctx));
    ctx.total = ((off_t) 1 << 62) - 10;
    p = dupn("B\r\n", 3);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 3), SWS_ERROR);

    memset(&ctx, 0, sizeof(ctx));
    ctx.total = ((off_t) 1 << 62) - 10;
    p = dupn("A\r\n", 3);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 3), SWS_AGAIN);
    ck_assert_int_eq(ctx.size, 10);

    /* a chunk-size line over 4096 bytes */
    n = 5000;
    buf = malloc(n);
    buf[0] = '1';
    buf[1] = ';';
    memset(buf + 2, 'a', n - 2);
    memset(&ctx, 0, sizeof(ctx));
    pos = buf;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, buf + 4000), SWS_AGAIN);
    pos = buf + 4000;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, buf + n), SWS_ERROR);

    /* a 4000-byte extension line is fine */
    memcpy(buf + 3998, "\r\nx\r\n0\r\n\r\n", 10);
    ck_assert_int_eq(chunked_whole((char *) buf, 4008, (u_char *) buf + 4100, &n),
                     SWS_DONE);

    /* a trailer section over 4096 bytes */
    memcpy(buf, "0\r\nX: ", 6);
    memset(buf + 6, 'v', n = 4200);
    memcpy(buf + 4206, "\r\n\r\n", 4);
    memset(&ctx, 0, sizeof(ctx));
    pos = buf;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, buf + 4210), SWS_ERROR);
    free(buf);
}
END_TEST

START_TEST(chunked_states)
{
    sws_http_chunked_t  ctx;
    u_char             *p, *pos;

    /* data not consumed: SWS_OK again, same position */
    memset(&ctx, 0, sizeof(ctx));
    p = dupn("3\r\nabc\r\n0\r\n\r\nGET", 16);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 16), SWS_OK);
    ck_assert_ptr_eq(pos, p + 3);
    ck_assert_int_eq(ctx.size, 3);
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 16), SWS_OK);
    ck_assert_ptr_eq(pos, p + 3);

    /* data available only up to last: SWS_AGAIN when nothing is left */
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 3), SWS_AGAIN);

    pos += 3;
    ctx.size = 0;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 16), SWS_DONE);
    ck_assert_ptr_eq(pos, p + 13);
    ck_assert_int_eq(ctx.total, 3);

    /* done stays done, error stays error */
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 16), SWS_DONE);
    ck_assert_ptr_eq(pos, p + 13);

    memset(&ctx, 0, sizeof(ctx));
    p = dupn("z\r\n", 3);
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 3), SWS_ERROR);
    pos = p + 1;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p + 3), SWS_ERROR);

    /* empty input */
    memset(&ctx, 0, sizeof(ctx));
    pos = p;
    ck_assert_int_eq(sws_http_parse_chunked(&ctx, &pos, p), SWS_AGAIN);
    ck_assert_ptr_eq(pos, p);
}
END_TEST

/* ---- normalisation ---------------------------------------------------- */

static sws_int_t
norm(const char *src, int merge, char *res)
{
    size_t     n = strlen(src), dlen = 0;
    u_char    *s = dupn(src, n), *d = block(n);
    sws_int_t  rc;

    rc = sws_http_normalize_path(s, n, d, &dlen, merge);
    if (rc == SWS_OK) {
        ck_assert_uint_le(dlen, n);
        memcpy(res, d, dlen);
    }
    res[rc == SWS_OK ? dlen : 0] = '\0';
    return rc;
}

START_TEST(normalize_good)
{
    static const struct { const char *in; int merge; const char *out; } t[] = {
        { "/", 1, "/" },
        { "/a/b", 1, "/a/b" },
        { "/a/b/", 1, "/a/b/" },
        { "/a/./b", 1, "/a/b" },
        { "/a/../b", 1, "/b" },
        { "/a/b/..", 1, "/a/" },
        { "/a/b/.", 1, "/a/b/" },
        { "/a/b/../..", 1, "/" },
        { "/./", 1, "/" },
        { "/.", 1, "/" },
        { "/a/./", 1, "/a/" },
        { "/a/./../b/./c/", 1, "/b/c/" },
        { "/a/%2e%2e/b", 1, "/b" },
        { "/a/%2E%2e/b", 1, "/b" },
        { "/a/.%2e/b", 1, "/b" },
        { "/a/%2E/b", 1, "/a/b" },
        { "/a%2Fb", 1, "/a/b" },
        { "/a%2fb", 1, "/a/b" },
        { "/a%2F..%2Fb", 1, "/b" },
        { "/%41%62%7e", 1, "/Ab~" },
        { "/a%20b", 1, "/a b" },
        { "/a%25", 1, "/a%" },
        { "/a%2541", 1, "/a%41" },
        { "/%c3%a9", 1, "/\xc3\xa9" },
        { "/...", 1, "/..." },
        { "/a/..b/.c/c./b..", 1, "/a/..b/.c/c./b.." },
        { "/a/.hidden", 1, "/a/.hidden" },
        { "//a///b//", 1, "/a/b/" },
        { "//a///b//", 0, "//a///b//" },
        { "/a//../b", 1, "/b" },
        { "/a//../b", 0, "/a/b" },
        { "/a/b//..", 0, "/a/b/" },
        { "//..", 0, "/" },
        { "/a%2F%2Fb", 1, "/a/b" },
        { "/a%2F%2Fb", 0, "/a//b" },
        { "/a/./../../", 0, NULL },
    };
    char    res[256];
    size_t  i;

    for (i = 0; i < sws_nelems(t); i++) {
        if (t[i].out == NULL) {
            ck_assert_msg(norm(t[i].in, t[i].merge, res) == SWS_HTTP_BAD_REQUEST,
                          "%s", t[i].in);
            continue;
        }
        ck_assert_msg(norm(t[i].in, t[i].merge, res) == SWS_OK, "%s", t[i].in);
        ck_assert_msg(strcmp(res, t[i].out) == 0, "%s -> %s, expected %s",
                      t[i].in, res, t[i].out);
    }
}
END_TEST

START_TEST(normalize_bad)
{
    static const char *bad[] = {
        "", "a/b", "%2Fa", "*",
        "/..", "/../", "/../a", "/a/../..", "/a/../../b", "/a/b/../../..",
        "/%2e%2e", "/%2e%2e/", "/.%2E", "/a/%2e%2e/%2e%2e/b", "/%2F%2e%2e/%2e%2e",
        "/%00", "/a%00b", "/a%0", "/a%", "/a%zz", "/a%g1", "/a%1g", "/a%2",
        "/%%41", "/a%-1", "/a% 1",
    };
    char    res[256];
    size_t  i;

    for (i = 0; i < sws_nelems(bad); i++) {
        ck_assert_msg(norm(bad[i], 1, res) == SWS_HTTP_BAD_REQUEST, "\"%s\"", bad[i]);
        ck_assert_msg(norm(bad[i], 0, res) == SWS_HTTP_BAD_REQUEST, "\"%s\"", bad[i]);
    }
}
END_TEST

START_TEST(exten_cases)
{
    static const struct { const char *path; const char *ext; } t[] = {
        { "/a/b.html", "html" },
        { "/a/b.tar.gz", "gz" },
        { "/b.", "" },
        { "/a/b", "" },
        { "/a.d/b", "" },
        { "/a.d/", "" },
        { "/a/.bashrc", "bashrc" },
        { "/", "" },
        { "", "" },
        { "x.Y", "Y" },
        /* longer than a word: the scan's eight-byte steps and the rest */
        { "/aaaaaaaa/bbbbbbbb.tar.gz", "gz" },
        { "/a.bcdefghijklmnop/x", "" },
        { "/abcdefghijklmnopq", "" },
        { "/x.abcdefghijklmnopqrs", "abcdefghijklmnopqrs" },
        { ".abcdefghijklmnop", "abcdefghijklmnop" },
        { "abcdefgh.", "" },
        { "/respond", "" },
    };
    sws_str_t  path, ext;
    size_t     i;

    for (i = 0; i < sws_nelems(t); i++) {
        path.len = strlen(t[i].path);
        path.data = (u_char *) t[i].path;
        sws_http_path_exten(&path, &ext);
        ck_assert_msg(str_is(&ext, t[i].ext), "%s", t[i].path);
        ck_assert_ptr_nonnull(ext.data);
    }
}
END_TEST

/* ---- suite ------------------------------------------------------------ */

static Suite *
http_parse_suite(void)
{
    Suite  *s = suite_create("http_parse");
    TCase  *tc;

    tc = tcase_create("request_line");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rl_simple_get);
    tcase_add_test(tc, method_target_like_line);
    tcase_add_test(tc, rl_query_and_version);
    tcase_add_test(tc, rl_path_chars);
    tcase_add_test(tc, rl_methods);
    tcase_add_test(tc, rl_asterisk);
    tcase_add_test(tc, rl_connect);
    tcase_add_test(tc, rl_absolute);
    tcase_add_test(tc, rl_absolute_bad);
    tcase_add_test(tc, rl_complex);
    tcase_add_test(tc, rl_encoded_slash);
    tcase_add_test(tc, rl_bad_syntax);
    tcase_add_test(tc, rl_bad_target_chars);
    tcase_add_test(tc, rl_version_not_supported);
    suite_add_tcase(s, tc);

    tc = tcase_create("header_line");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hl_good);
    tcase_add_test(tc, hl_bad);
    tcase_add_test(tc, hl_value_bytes);
    tcase_add_test(tc, hl_name_bytes);
    tcase_add_test(tc, hl_short_value_tail);
    suite_add_tcase(s, tc);

    tc = tcase_create("content_length_range");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, cl_cases);
    tcase_add_test(tc, range_good);
    tcase_add_test(tc, range_unsatisfiable);
    tcase_add_test(tc, range_empty_representation);
    tcase_add_test(tc, range_not_bytes);
    tcase_add_test(tc, range_malformed);
    tcase_add_test(tc, range_max);
    tcase_add_test(tc, range_multipart_text);
    suite_add_tcase(s, tc);

    tc = tcase_create("chunked");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, chunked_every_split);
    tcase_add_test(tc, chunked_byte_by_byte);
    tcase_add_test(tc, chunked_good_variants);
    tcase_add_test(tc, chunked_bad);
    tcase_add_test(tc, chunked_limits);
    tcase_add_test(tc, chunked_states);
    suite_add_tcase(s, tc);

    tc = tcase_create("normalize");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, normalize_good);
    tcase_add_test(tc, normalize_bad);
    tcase_add_test(tc, exten_cases);
    suite_add_tcase(s, tc);

    return s;
}


int
main(void)
{
    SRunner  *sr;
    int       failed;

    sr = srunner_create(http_parse_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    return failed ? 1 : 0;
}
