/*
 * The lines of a CGI response head (sws_cgi_line_next, shared by fastcgi,
 * uwsgi and scgi): fields with their blanks trimmed, the empty line, an
 * HTTP status line only where one may come, LF or CRLF, an incomplete line
 * left for later, and each kind of invalid line refused with a reason.
 */
#include <check.h>
#include <string.h>

#include "sws_http_upstream_cgi_lines.h"

typedef struct {
    u_char          buf[256];
    u_char         *pos, *last;
    sws_cgi_line_t  line;
} input_t;

static void
input(input_t *in, const char *text)
{
    size_t n = strlen(text);

    memcpy(in->buf, text, n);
    in->pos = in->buf;
    in->last = in->buf + n;
}

static sws_int_t
next(input_t *in, int status_line)
{
    memset(&in->line, 0, sizeof(in->line));
    return sws_cgi_line_next(&in->pos, in->last, status_line, &in->line);
}

static int
str_is(const sws_str_t *s, const char *want)
{
    return s->len == strlen(want) && (s->len == 0 || memcmp(s->data, want, s->len) == 0);
}

START_TEST(fields_and_end)
{
    input_t in;

    input(&in, "Content-Type:  text/html \t\r\nX-Empty:\nStatus: 404 Not Found\r\n\r\nbody");
    ck_assert_int_eq(next(&in, 0), SWS_OK);
    ck_assert_uint_eq(in.line.kind, SWS_CGI_LINE_FIELD);
    ck_assert(str_is(&in.line.name, "Content-Type") && str_is(&in.line.value, "text/html"));
    ck_assert_int_eq(next(&in, 0), SWS_OK);
    ck_assert(str_is(&in.line.name, "X-Empty") && in.line.value.len == 0);
    ck_assert_int_eq(next(&in, 0), SWS_OK);
    ck_assert(str_is(&in.line.value, "404 Not Found"));
    ck_assert_int_eq(next(&in, 0), SWS_OK);
    ck_assert_uint_eq(in.line.kind, SWS_CGI_LINE_END);
    ck_assert(in.last - in.pos == 4 && memcmp(in.pos, "body", 4) == 0);
}
END_TEST

START_TEST(incomplete_line_waits)
{
    input_t  in;
    u_char  *at;

    input(&in, "X-A: 1\r\nX-B: par");
    ck_assert_int_eq(next(&in, 0), SWS_OK);
    at = in.pos;
    ck_assert_int_eq(next(&in, 0), SWS_AGAIN);
    ck_assert_ptr_eq(in.pos, at);
}
END_TEST

START_TEST(status_lines)
{
    input_t in;

    input(&in, "HTTP/1.1 418 I'm a teapot\r\n");
    ck_assert_int_eq(next(&in, 1), SWS_OK);
    ck_assert_uint_eq(in.line.kind, SWS_CGI_LINE_STATUS);
    ck_assert_uint_eq(in.line.status, 418);
    input(&in, "HTTP/1.0 200\n");
    ck_assert_int_eq(next(&in, 1), SWS_OK);
    ck_assert_uint_eq(in.line.status, 200);
    /* not where no status line may come: a field without a colon */
    input(&in, "HTTP/1.1 200 OK\r\n");
    ck_assert_int_eq(next(&in, 0), SWS_CGI_LINE_INVALID);
    ck_assert_ptr_nonnull(in.line.why);
}
END_TEST

START_TEST(status_values)
{
    static const struct { const char *v; sws_uint_t status; } cases[] = {
        { "200", 200 }, { "404 Not Found", 404 }, { "599 x", 599 }, { "199", 0 },
        { "600", 0 }, { "20", 0 }, { "2000", 0 }, { "abc", 0 }, { "20x", 0 }, { "", 0 },
    };
    sws_str_t  v;
    size_t     i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        v.data = (u_char *) cases[i].v;
        v.len = strlen(cases[i].v);
        ck_assert_msg(sws_cgi_status_value(&v) == cases[i].status, "\"%s\"", cases[i].v);
    }
}
END_TEST

START_TEST(invalid_lines)
{
    static const char *bad[] = {
        "no colon here\r\n", ": no name\r\n", "Bad Name: x\r\n", "Bad\x01: x\r\n",
        "X-A: a\x01b\r\n", "X-A: a\x7f\r\n", "HTTP/1.1 9x9 Bad\r\n", "HTTP/1.1 100 Continue\r\n",
        "HTTP/x.1 200 OK\r\n", "HTTP/1.1  200 OK\r\n", "HTTP/1.1 200OK\r\n",
    };
    input_t in;
    size_t  i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        input(&in, bad[i]);
        ck_assert_msg(next(&in, 1) == SWS_CGI_LINE_INVALID && in.line.why != NULL,
                      "accepted: %s", bad[i]);
    }
}
END_TEST

static Suite *
cgi_lines_suite(void)
{
    Suite *s = suite_create("cgi_lines");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, fields_and_end);
    tcase_add_test(tc, incomplete_line_waits);
    tcase_add_test(tc, status_lines);
    tcase_add_test(tc, status_values);
    tcase_add_test(tc, invalid_lines);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(cgi_lines_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
