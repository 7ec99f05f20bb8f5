/* Unit tests of request variables and compiled formats (access log lines):
 * compile errors, every variable on a request built by hand, escaping. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_test_request.h"

/* The variables read the server's conf through the core module's index. */
sws_module_t  sws_http_core_module = { .index = 0 };

#define STR(s)  (&(sws_str_t) sws_string(s))

static sws_pool_t          *pool;
static sws_test_request_t   t;

/* the request's parts, as the tests below name them */
#define req      (t.req)
#define conn     (t.conn)
#define cscf     (t.cscf)

static void
add_header(sws_array_t *a, const char *name, const char *value)
{
    ck_assert_int_eq(sws_test_header_add(a, name, value), SWS_OK);
}

static void
setup(void)
{
    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
    sws_time_init();
    sws_time_update();
    ck_assert_int_eq(sws_test_request_init(&t, pool), SWS_OK);
    add_header(&req.headers_in, "referer", "http://ref/");
}

static void
teardown(void)
{
    sws_http_variables_reset();      /* the registry pointed into pool */
    sws_pool_destroy(pool);
}

/* Compile text, render it for req, check the length was exact, return a
 * NUL-terminated copy (pool memory). */
static char *
render(const char *text, int escape)
{
    sws_http_format_t  *f;
    const char         *err = NULL;
    size_t              len;
    u_char             *buf, *end;

    f = sws_http_format_compile(pool, &(sws_str_t) { strlen(text), (u_char *) text },
                                escape, &err);
    ck_assert_msg(f != NULL, "compile \"%s\": %s", text, err);
    len = sws_http_format_len(f, &req);
    buf = sws_pnalloc(pool, len + 16);
    memset(buf, 0xA5, len + 16);
    end = sws_http_format_render(f, &req, buf);
    ck_assert_uint_eq((size_t) (end - buf), len);
    ck_assert_uint_eq(buf[len], 0xA5);      /* nothing past the end */
    *end = '\0';
    return (char *) buf;
}

static const char *
compile_error(const char *text)
{
    const char  *err = NULL;

    ck_assert_ptr_null(sws_http_format_compile(pool,
                           &(sws_str_t) { strlen(text), (u_char *) text }, 0, &err));
    ck_assert_ptr_nonnull(err);
    return err;
}


/* ------------------------------------------------------------ compiling */

START_TEST(compile_unknown_variable)
{
    ck_assert_str_eq(compile_error("a $nosuch b"), "unknown variable \"$nosuch\"");
    ck_assert_str_eq(compile_error("${nosuch}x"), "unknown variable \"$nosuch\"");
    /* a prefix alone is not a variable */
    ck_assert_str_eq(compile_error("$http_"), "unknown variable \"$http_\"");
    ck_assert_str_eq(compile_error("$sent_http_"), "unknown variable \"$sent_http_\"");
    ck_assert_str_eq(compile_error("$arg_"), "unknown variable \"$arg_\"");
    /* names are case-insensitive ($Status is $status), as in nginx; an
     * unknown one is named as written */
    ck_assert_str_eq(compile_error("$NoSuch"), "unknown variable \"$NoSuch\"");
    ck_assert_str_eq(compile_error("$HTTP_"), "unknown variable \"$HTTP_\"");
    /* the name ends at the first non-name byte */
    ck_assert_str_eq(compile_error("$status$statusx"), "unknown variable \"$statusx\"");
}
END_TEST

START_TEST(compile_bad_syntax)
{
    ck_assert_str_eq(compile_error("x ${status"), "missing \"}\" after \"${status\"");
    ck_assert_str_eq(compile_error("${"), "missing \"}\" after \"${\"");
    ck_assert_str_eq(compile_error("${sta tus}"), "invalid variable name in \"${sta \"");
    ck_assert_str_eq(compile_error("${}"), "empty variable name \"${}\"");
    ck_assert_ptr_nonnull(strstr(compile_error("cost: $"), "invalid variable name"));
    ck_assert_ptr_nonnull(strstr(compile_error("$ status"), "invalid variable name"));
    ck_assert_ptr_nonnull(strstr(compile_error("$-x"), "invalid variable name"));
}
END_TEST

START_TEST(compile_bad_escape)
{
    const char  *err = NULL;

    ck_assert_ptr_null(sws_http_format_compile(pool, STR("x"), 3, &err));
    ck_assert_str_eq(err, "invalid escape mode");
    err = NULL;
    ck_assert_ptr_null(sws_http_format_compile(pool, STR("x"), -1, &err));
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(compile_copies_text)
{
    char                buf[] = "[$status] ok";
    const char         *err;
    sws_http_format_t  *f;
    u_char              out[64];

    f = sws_http_format_compile(pool, &(sws_str_t) { strlen(buf), (u_char *) buf }, 0, &err);
    ck_assert_ptr_nonnull(f);
    memset(buf, 'Z', strlen(buf));          /* the caller's memory may go */
    ck_assert_uint_eq(sws_http_format_len(f, &req), 8);
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "[200] ok");
    ck_assert(!sws_http_format_is_static(f));
}
END_TEST

START_TEST(literal_only)
{
    const char         *err;
    sws_http_format_t  *f = sws_http_format_compile(pool, STR("plain text"), 0, &err);

    ck_assert_ptr_nonnull(f);
    ck_assert(sws_http_format_is_static(f));
    ck_assert_str_eq(render("plain text", 0), "plain text");
    ck_assert_str_eq(render("", 0), "");
}
END_TEST


/* ------------------------------------------------------------ variables */

START_TEST(combined_line)
{
    char  expect[256];

    snprintf(expect, sizeof(expect),
             "192.0.2.7 - - [%.*s] \"GET /a%%20b?x=1&y=2 HTTP/1.1\" 200 3850 "
             "\"http://ref/\" \"curl/8.0\"",
             (int) sws_cached_log_time()->len, sws_cached_log_time()->data);
    ck_assert_str_eq(render("$remote_addr - $remote_user [$time_local] \"$request\" "
                            "$status $body_bytes_sent \"$http_referer\" "
                            "\"$http_user_agent\"", 0),
                     expect);
}
END_TEST

START_TEST(braces_and_adjacency)
{
    ck_assert_str_eq(render("$Status $URI $Request_Method", 0), "200 /a b GET");
    ck_assert_str_eq(render("${status}x$status.${request_method}$uri", 0),
                     "200x200.GET/a b");
    ck_assert_str_eq(render("a${status}${status}b", 0), "a200200b");
    /* "$$" is no escape for a dollar: a '$' must start a name */
    ck_assert_ptr_nonnull(strstr(compile_error("$$status"), "invalid variable name"));
    ck_assert_ptr_nonnull(strstr(compile_error("$status$"), "invalid variable name"));
}
END_TEST

START_TEST(request_fields)
{
    ck_assert_str_eq(render("$request_method $request_uri $uri $args", 0),
                     "GET /a%20b?x=1&y=2 /a b x=1&y=2");
    ck_assert_str_eq(render("$document_uri$is_args$query_string", 0), "/a b?x=1&y=2");
    ck_assert_str_eq(render("$arg_x $arg_Y $arg_z", 0), "1 2 -");
    sws_str_set(&req.args, "a&b=&c=3");
    ck_assert_str_eq(render("[$arg_a][$arg_b][$arg_c]", 0), "[-][-][3]");
    sws_str_set(&req.args, "");
    ck_assert_str_eq(render("[$is_args][$args][$arg_a]", 0), "[-][-][-]");
    ck_assert_str_eq(render("[$is_args][$args]", SWS_HTTP_ESCAPE_NONE), "[][]");
}
END_TEST

START_TEST(host_and_protocol)
{
    ck_assert_str_eq(render("$host $server_name $scheme", 0),
                     "www.example.com example.org http");
    req.host.len = 0;
    ck_assert_str_eq(render("$host", 0), "example.org");
    req.srv_conf = NULL;
    ck_assert_str_eq(render("$host", 0), "-");

    ck_assert_str_eq(render("$server_protocol", 0), "HTTP/1.1");
    req.http_version = SWS_HTTP_VERSION_10;
    ck_assert_str_eq(render("$server_protocol", 0), "HTTP/1.0");
    req.http_version = SWS_HTTP_VERSION_20;
    ck_assert_str_eq(render("$server_protocol", 0), "HTTP/2.0");
    req.http_version = 0;
    ck_assert_str_eq(render("$server_protocol", 0), "-");
}
END_TEST

START_TEST(status_values)
{
    req.status = 0;
    ck_assert_str_eq(render("$status", 0), "000");
    req.status = 404;
    ck_assert_str_eq(render("$status", 0), "404");
    req.status = 99;
    ck_assert_str_eq(render("$status", 0), "099");
    req.status = 1234;
    ck_assert_str_eq(render("$status", 0), "1234");
}
END_TEST

START_TEST(byte_counts)
{
    ck_assert_str_eq(render("$bytes_sent $body_bytes_sent", 0), "4000 3850");
    /* nothing sent yet (or only part of the head): never negative */
    conn.sent = 1000;
    ck_assert_str_eq(render("$bytes_sent $body_bytes_sent", 0), "0 0");
    conn.sent = 1100;
    ck_assert_str_eq(render("$bytes_sent $body_bytes_sent", 0), "100 0");
    conn.sent = 500;
    ck_assert_str_eq(render("$bytes_sent $body_bytes_sent", 0), "0 0");
    req.proto = NULL;          /* a request not made by the core: no session */
    req.session = NULL;
    ck_assert_str_eq(render("$bytes_sent $body_bytes_sent [$remote_addr] $connection", 0),
                     "0 0 [-] -");
}
END_TEST

START_TEST(connection_fields)
{
    ck_assert_str_eq(render("$connection $connection_requests", 0), "42 3");
    t.session.number = 18446744073709551615ULL;
    ck_assert_str_eq(render("$connection", 0), "18446744073709551615");
}
END_TEST

/* A request with no location (one a module made, or the fuzzer's): the
 * variables that read the location's conf answer without it (found by
 * tests/fuzz/fuzz_log_format.c: $limit_rate read it). */
START_TEST(no_location)
{
    ck_assert_ptr_null(req.loc_conf);
    ck_assert_str_eq(render("[$limit_rate] [$document_root] [$request_filename]",
                            SWS_HTTP_ESCAPE_NONE), "[0] [] []");
}
END_TEST

START_TEST(request_time)
{
    req.start_msec = sws_current_msec() - 1234;
    ck_assert_str_eq(render("$request_time", 0), "1.234");
    req.start_msec = sws_current_msec() - 3;
    ck_assert_str_eq(render("$request_time", 0), "0.003");
    req.start_msec = sws_current_msec();
    ck_assert_str_eq(render("$request_time", 0), "0.000");
    req.start_msec = sws_current_msec() + 50;   /* clock oddities: not negative */
    ck_assert_str_eq(render("$request_time", 0), "0.000");
    req.start_msec = sws_current_msec() - 61010;
    ck_assert_str_eq(render("$request_time", 0), "61.010");
}
END_TEST

START_TEST(times)
{
    char     *s = render("$msec", 0);
    char     *dot = strchr(s, '.');
    long      sec;

    ck_assert_ptr_nonnull(dot);
    ck_assert_uint_eq(strlen(dot + 1), 3);
    ck_assert_uint_eq(strspn(dot + 1, "0123456789"), 3);
    sec = strtol(s, NULL, 10);
    ck_assert(labs(sec - (long) time(NULL)) <= 2);

    ck_assert_str_eq(render("$time_iso8601", 0),
                     (char *) sws_pstrdup(pool, sws_cached_iso8601_time()));
    ck_assert_uint_eq(strlen(render("$time_local", 0)), 26);
}
END_TEST

START_TEST(request_id)
{
    ck_assert_str_eq(render("[$request_id]", 0), "[-]");
    sws_str_set(&req.request_id, "0123456789abcdef0123456789abcdef");
    ck_assert_str_eq(render("$request_id", 0), "0123456789abcdef0123456789abcdef");
}
END_TEST

START_TEST(request_headers)
{
    add_header(&req.headers_in, "x-forwarded-for", "10.0.0.1");
    add_header(&req.headers_in, "x-forwarded-for", "10.0.0.2");
    add_header(&req.headers_in, "cookie", "a=1");
    add_header(&req.headers_in, "cookie", "b=2");
    add_header(&req.headers_in, "content-type", "text/plain");
    add_header(&req.headers_in, "x-gone", "deleted");
    ((sws_http_header_t *) req.headers_in.elts)[req.headers_in.nelts - 1].hash = 0;

    ck_assert_str_eq(render("$http_user_agent|$http_USER_AGENT|$http_User_Agent", 0),
                     "curl/8.0|curl/8.0|curl/8.0");
    ck_assert_str_eq(render("$http_x_forwarded_for", 0), "10.0.0.1, 10.0.0.2");
    ck_assert_str_eq(render("$http_cookie", 0), "a=1; b=2");
    ck_assert_str_eq(render("[$http_x_gone][$http_accept]", 0), "[-][-]");
    ck_assert_str_eq(render("$content_type [$content_length]", 0), "text/plain [-]");
    req.h_content_length = STR("12");
    ck_assert_str_eq(render("$content_length", 0), "12");
}
END_TEST

/* A field with '_' in its name (underscores_in_headers on) is read by the
 * variable whose name has '_' there, as a '-' is: nginx maps the field's
 * name (lower case, '-' as '_') and compares. */
START_TEST(request_headers_underscore)
{
    add_header(&req.headers_in, "x_foo", "under");
    add_header(&req.headers_in, "x-foo", "dash");
    add_header(&req.headers_in, "x_foo", "under2");
    add_header(&req.headers_in, "x-foo_", "trail");
    add_header(&req.headers_in, "x.bar", "dot");
    add_header(&req.headers_in, "x_forwarded_for", "6.6.6.6");
    add_header(&req.headers_in, "x-forwarded-for", "10.0.0.1");
    add_header(&req.headers_in, "referer", "r1");
    add_header(&req.headers_in, "referer", "r2");
    add_header(&req.headers_in, "x-gone_", "deleted");
    ((sws_http_header_t *) req.headers_in.elts)[req.headers_in.nelts - 1].hash = 0;

    /* the first spelling found, its later lines joined; the other
     * spelling is another field */
    ck_assert_str_eq(render("$http_x_foo", 0), "under, under2");
    ck_assert_str_eq(render("$HTTP_X_FOO", 0), "under, under2");
    ck_assert_str_eq(render("[$http_x_foo_][$http_x_foo__][$http_x_fo]", 0),
                     "[trail][-][-]");
    /* only '-' is read as '_': not '.' */
    ck_assert_str_eq(render("[$http_x_bar][$http_x_gone_]", 0), "[-][-]");
    /* the fields nginx keeps apart: that spelling only; Referer's first */
    ck_assert_str_eq(render("$http_x_forwarded_for", 0), "10.0.0.1");
    ck_assert_str_eq(render("$http_referer", 0), "http://ref/");    /* the request's own */
    ck_assert_str_eq(render("[$upstream_trailer_x_t]", 0), "[-]");
}
END_TEST

START_TEST(response_headers)
{
    ck_assert_str_eq(render("[$sent_http_content_type][$sent_http_content_length]"
                            "[$sent_http_location][$sent_http_last_modified]"
                            "[$sent_http_etag][$sent_http_transfer_encoding][$sent_http_x_a]",
                            0),
                     "[-][-][-][-][-][-][-]");

    sws_str_set(&req.content_type, "text/html");
    req.out_content_length = 1234;
    sws_str_set(&req.location, "http://x/y");
    req.last_modified = 784111777;
    sws_str_set(&req.etag, "\"abc\"");
    req.chunked_out = 1;
    add_header(&req.headers_out, "X-A", "one");
    add_header(&req.headers_out, "x-a", "two");
    add_header(&req.headers_out, "Cache-Control", "no-cache");
    add_header(&req.headers_out, "X_B", "under");
    add_header(&req.headers_out, "X-B", "dash");

    ck_assert_str_eq(render("$sent_http_content_type $sent_http_content_length "
                            "$sent_http_location", 0),
                     "text/html 1234 http://x/y");
    ck_assert_str_eq(render("$sent_http_last_modified", 0), "Sun, 06 Nov 1994 08:49:37 GMT");
    ck_assert_str_eq(render("$sent_http_etag $sent_http_transfer_encoding", 0),
                     "\\x22abc\\x22 chunked");
    ck_assert_str_eq(render("$sent_http_x_a|$sent_http_cache_control", 0),
                     "one, two|no-cache");
    /* a response field with '_' (from an upstream): the first spelling */
    ck_assert_str_eq(render("$sent_http_x_b|$Sent_Http_X_B", 0), "under|under");

    /* dedicated fields unset: headers_out is looked at */
    req.content_type.len = 0;
    req.out_content_length = -1;
    add_header(&req.headers_out, "Content-Type", "image/png");
    add_header(&req.headers_out, "content-length", "77");
    ck_assert_str_eq(render("$sent_http_content_type $sent_http_content_length", 0),
                     "image/png 77");
    ck_assert_str_eq(render("$sent_http_content_length", 0), "77");
    ck_assert_str_eq(render("$content_type", 0), "-");   /* request header, not response */
}
END_TEST


/* ------------------------------------------------------------ escaping */

START_TEST(escape_default)
{
    sws_str_set(&req.uri, "/q\"uo\\te\x01\x1f\x7f\xc3\xa9 ok");
    ck_assert_str_eq(render("\"$uri\"", SWS_HTTP_ESCAPE_DEFAULT),
                     "\"/q\\x22uo\\x5Cte\\x01\\x1F\\x7F\\xC3\\xA9 ok\"");
    /* literal text is never escaped */
    ck_assert_str_eq(render("\"\\\x01", SWS_HTTP_ESCAPE_DEFAULT), "\"\\\x01");
    sws_str_set(&req.uri, "line\nbreak\ttab");
    ck_assert_str_eq(render("$uri", 0), "line\\x0Abreak\\x09tab");
}
END_TEST

START_TEST(escape_json)
{
    sws_str_set(&req.uri, "/q\"uo\\te\x01\x1f\x7f\xc3\xa9\b\f\n\r\t/");
    ck_assert_str_eq(render("{\"uri\":\"$uri\"}", SWS_HTTP_ESCAPE_JSON),
                     "{\"uri\":\"/q\\\"uo\\\\te\\u0001\\u001F\x7f\xc3\xa9\\b\\f\\n\\r\\t/\"}");
    /* empty values stay empty in JSON */
    ck_assert_str_eq(render("{\"u\":\"$remote_user\",\"a\":\"$http_accept\"}",
                            SWS_HTTP_ESCAPE_JSON),
                     "{\"u\":\"\",\"a\":\"\"}");
}
END_TEST

START_TEST(escape_none)
{
    sws_str_set(&req.uri, "/q\"uo\\te\x01\xff");
    ck_assert_str_eq(render("$uri|$remote_user|", SWS_HTTP_ESCAPE_NONE),
                     "/q\"uo\\te\x01\xff||");
}
END_TEST

START_TEST(escape_every_byte)
{
    static u_char  all[256];
    size_t         i, n;
    char          *s;

    for (i = 0; i < 256; i++) {
        all[i] = (u_char) i;
    }
    req.uri.data = all;
    req.uri.len = 256;

    s = render("$uri", 0);
    /* 0x20..0x7e except '"' and '\\' pass: 93 bytes; the other 163 take 4
     * (the output has no NUL: a NUL is written as \x00) */
    ck_assert_uint_eq(strlen(s), 93 + 163 * 4);
    ck_assert(memcmp(s, "\\x00\\x01", 8) == 0);

    req.uri.data = all + 1;        /* skip NUL so strlen works below */
    req.uri.len = 255;
    s = render("$uri", SWS_HTTP_ESCAPE_JSON);
    /* 0x01..0x1f: 7 short (\b \t \n \f \r ... are 5 of them), the rest \u00XX */
    n = 255 + 5 * 1 + (31 - 5) * 5 + 2;     /* + '"' and '\\' one each */
    ck_assert_uint_eq(strlen(s), n);
}
END_TEST

START_TEST(render_without_len)
{
    const char         *err;
    sws_http_format_t  *f = sws_http_format_compile(pool, STR("$status $uri"), 0, &err);
    u_char              out[64];
    struct sws_http_request_s  other = req;

    ck_assert_ptr_nonnull(f);
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "200 /a b");

    /* len for one request, render for another: values are those of the
     * request rendered */
    other.status = 500;
    (void) sws_http_format_len(f, &req);
    *sws_http_format_render(f, &other, out) = '\0';
    ck_assert_str_eq((char *) out, "500 /a b");
}
END_TEST

START_TEST(same_format_many_times)
{
    int  i;

    add_header(&req.headers_in, "x-a", "1");
    add_header(&req.headers_in, "x-a", "2");
    for (i = 0; i < 1000; i++) {
        req.status = 100 + i % 500;
        ck_assert_uint_eq(strlen(render("$status $http_x_a", 0)), 3 + 1 + 4);
    }
}
END_TEST



/* ------------------------------------------------ cookies, set, map-like */

START_TEST(cookie_variables)
{
    add_header(&req.headers_in, "cookie", "a=1; session=xyz; b=; flag");
    add_header(&req.headers_in, "cookie", "c=3");
    ck_assert_str_eq(render("$cookie_session|$cookie_b|$cookie_c|$cookie_none|$cookie_SESSION"
                            "|$cookie_flag|$cookie_a", SWS_HTTP_ESCAPE_NONE),
                     "xyz||3||xyz||1");
}
END_TEST

static struct sws_conf_s          vcf;
static sws_http_core_main_conf_t  vcmcf;
static void                      *vmain[1];
static int                        calls;

static void
count_get(sws_http_request_t *r, void *data, sws_str_t *v)
{
    (void) r;
    calls++;
    v->data = (u_char *) data;
    v->len = strlen(data);
}

static sws_http_format_t  *self_fmt;

static void
self_get(sws_http_request_t *r, void *data, sws_str_t *v)
{
    size_t   len = sws_http_format_len(self_fmt, r);
    u_char  *p = sws_pnalloc(r->pool, len + 1);

    (void) data;
    v->data = p;
    v->len = (size_t) (sws_http_format_render(self_fmt, r, p) - p);
}

static void
vars_begin(void)
{
    memset(&vcf, 0, sizeof(vcf));
    memset(&vcmcf, 0, sizeof(vcmcf));
    vcf.pool = pool;
    vmain[0] = &vcmcf;
    req.main_conf = vmain;
    sws_http_variables_begin(&vcf);
}

START_TEST(writable_and_cached)
{
    const char  *err = NULL;
    sws_str_t    v = sws_string("x"), name = sws_string("v"), upper = sws_string("V");
    sws_http_format_t  *f;
    u_char       out[64];

    vars_begin();
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &name), 0);
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &name), 0);   /* the same one */
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &upper), 0);  /* names: any case */
    ck_assert_int_eq(sws_http_variable_add_cached(&vcf, "m", count_get, "M", 0), SWS_OK);
    /* $later is declared after the format that reads it */
    f = sws_http_format_compile(pool, STR("$V|$m|$M|$Later"), SWS_HTTP_ESCAPE_NONE, &err);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sws_http_variable_add(&vcf, "later", count_get, "L"), SWS_OK);
    ck_assert_int_eq(sws_http_variables_end(&vcf, &vcmcf.nvariables), SWS_OK);
    ck_assert_uint_eq(vcmcf.nvariables, 2);

    calls = 0;
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "|M|M|L");
    ck_assert_int_eq(calls, 2);                 /* $m once, $later once */
    ck_assert_int_eq(sws_http_variable_set(&req, 0, &v), SWS_OK);
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "x|M|M|L");
    ck_assert_int_eq(calls, 3);                 /* $m kept, $later again */
    ck_assert_int_eq(sws_http_variable_set(&req, 7, &v), SWS_ERROR);
}
END_TEST

START_TEST(declaration_errors)
{
    sws_str_t  uri = sws_string("URI"), hdr = sws_string("Http_X"), m = sws_string("m");
    const char *err = NULL;

    vars_begin();
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &uri), SWS_ERROR);
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &hdr), SWS_ERROR);
    ck_assert_int_eq(sws_http_variable_add_cached(&vcf, "host", count_get, "", 0), SWS_ERROR);
    ck_assert_int_eq(sws_http_variable_add_cached(&vcf, "m", count_get, "", 0), SWS_OK);
    ck_assert_int_eq(sws_http_variable_add_cached(&vcf, "m", count_get, "", 0), SWS_ERROR);
    ck_assert_int_eq(sws_http_variable_writable(&vcf, &m), SWS_ERROR);
    /* a name nobody declares is an error at the end of the block */
    ck_assert_ptr_nonnull(sws_http_format_compile(pool, STR("$nobody"), 0, &err));
    ck_assert_int_eq(sws_http_variables_end(&vcf, &vcmcf.nvariables), SWS_ERROR);
}
END_TEST

START_TEST(cycle_is_empty)
{
    const char  *err = NULL;
    u_char       out[64];
    sws_http_format_t  *f;

    vars_begin();
    ck_assert_int_eq(sws_http_variable_add_cached(&vcf, "self", self_get, NULL, 0), SWS_OK);
    self_fmt = sws_http_format_compile(pool, STR("<$self>"), SWS_HTTP_ESCAPE_NONE, &err);
    f = sws_http_format_compile(pool, STR("$self"), SWS_HTTP_ESCAPE_NONE, &err);
    ck_assert_ptr_nonnull(self_fmt);
    ck_assert_int_eq(sws_http_variables_end(&vcf, &vcmcf.nvariables), SWS_OK);
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "<>");
}
END_TEST

START_TEST(many_module_variables)
{
    char         name[16];
    const char  *err = NULL;
    int          i;
    u_char       out[64];
    sws_http_format_t  *f;

    vars_begin();
    for (i = 0; i < 500; i++) {
        snprintf(name, sizeof(name), "v%d", i);
        ck_assert_int_eq(sws_http_variable_add_cached(&vcf, name, count_get, "z", 0), SWS_OK);
    }
    f = sws_http_format_compile(pool, STR("$v499$v0"), SWS_HTTP_ESCAPE_NONE, &err);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(sws_http_variables_end(&vcf, &vcmcf.nvariables), SWS_OK);
    ck_assert_uint_eq(vcmcf.nvariables, 500);
    *sws_http_format_render(f, &req, out) = '\0';
    ck_assert_str_eq((char *) out, "zz");
}
END_TEST

static Suite *
variables_suite(void)
{
    Suite  *s = suite_create("http_variables");
    TCase  *tc = tcase_create("compile");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, compile_unknown_variable);
    tcase_add_test(tc, no_location);
    tcase_add_test(tc, compile_bad_syntax);
    tcase_add_test(tc, compile_bad_escape);
    tcase_add_test(tc, compile_copies_text);
    tcase_add_test(tc, literal_only);
    suite_add_tcase(s, tc);

    tc = tcase_create("variables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, combined_line);
    tcase_add_test(tc, braces_and_adjacency);
    tcase_add_test(tc, request_fields);
    tcase_add_test(tc, host_and_protocol);
    tcase_add_test(tc, status_values);
    tcase_add_test(tc, byte_counts);
    tcase_add_test(tc, connection_fields);
    tcase_add_test(tc, request_time);
    tcase_add_test(tc, times);
    tcase_add_test(tc, request_id);
    tcase_add_test(tc, request_headers);
    tcase_add_test(tc, request_headers_underscore);
    tcase_add_test(tc, response_headers);
    tcase_add_test(tc, render_without_len);
    tcase_add_test(tc, same_format_many_times);
    tcase_add_test(tc, cookie_variables);
    tcase_add_test(tc, writable_and_cached);
    tcase_add_test(tc, declaration_errors);
    tcase_add_test(tc, cycle_is_empty);
    tcase_add_test(tc, many_module_variables);
    suite_add_tcase(s, tc);

    tc = tcase_create("escape");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, escape_default);
    tcase_add_test(tc, escape_json);
    tcase_add_test(tc, escape_none);
    tcase_add_test(tc, escape_every_byte);
    suite_add_tcase(s, tc);

    return s;
}

int
main(void)
{
    SRunner  *sr = srunner_create(variables_suite());
    int       failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
