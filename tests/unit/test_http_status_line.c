/*
 * The status lines of responses (sws_http_status_line): registered codes
 * with their reason phrase, others as "NNN " with an empty one, in any
 * order of questions (the last registered code is remembered).
 */
#include <check.h>
#include <string.h>

#include "sws_http_core.h"

static void
line_is(sws_uint_t status, const char *want)
{
    const sws_str_t *s = sws_http_status_line(status);

    ck_assert_ptr_nonnull(s);
    ck_assert_msg(s->len == strlen(want) && memcmp(s->data, want, s->len) == 0,
                  "%u: \"%.*s\", not \"%s\"", (unsigned) status, (int) s->len, s->data, want);
}

START_TEST(lines_in_any_order)
{
    line_is(100, "100 Continue");         /* the first entry of the table */
    line_is(100, "100 Continue");
    line_is(200, "200 OK");
    line_is(200, "200 OK");
    line_is(404, "404 Not Found");
    line_is(200, "200 OK");
    line_is(299, "299 ");                 /* not registered */
    line_is(200, "200 OK");
    line_is(0, "000 ");
    line_is(0, "000 ");
    line_is(599, "599 ");
    line_is(304, "304 Not Modified");
    line_is(304, "304 Not Modified");
    line_is(100, "100 Continue");
}
END_TEST

static Suite *
status_line_suite(void)
{
    Suite *s = suite_create("http_status_line");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, lines_in_any_order);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(status_line_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
