/*
 * Unit tests of sws_regex: compile errors, captures and unset groups,
 * named groups, caseless matching, binary subjects, and the per-process
 * match data growing when a pattern with more groups is compiled later.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <scalws/scalws.h>

static sws_pool_t  *pool;

static void
setup(void)
{
    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
}

static sws_regex_t *
compile(const char *pattern, sws_uint_t flags, const char **err)
{
    sws_str_t  s;

    s.len = strlen(pattern);
    s.data = (u_char *) pattern;
    *err = NULL;
    return sws_regex_compile(pool, &s, flags, err);
}

static sws_int_t
run(sws_regex_t *re, const char *subject, size_t *ov, sws_uint_t n)
{
    return sws_regex_exec(re, (const u_char *) subject, strlen(subject), ov, n, NULL);
}

START_TEST(compile_error)
{
    const char  *err;

    ck_assert_ptr_null(compile("^/(a", 0, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "pcre2_compile() failed"));
    ck_assert_ptr_nonnull(strstr(err, "\"^/(a\""));
    ck_assert_ptr_null(compile("[z-a]", 0, &err));
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(captures_and_unset)
{
    const char   *err;
    size_t        ov[10];
    sws_regex_t  *re = compile("^/(\\d+)(/x)?/(\\w+)$", 0, &err);

    ck_assert_ptr_nonnull(re);
    ck_assert_uint_eq(sws_regex_captures(re), 3);
    ck_assert_int_eq(run(re, "/12/ab", ov, 5), 4);
    ck_assert_uint_eq(ov[2], 1);
    ck_assert_uint_eq(ov[3], 3);
    ck_assert(ov[4] == SWS_REGEX_UNSET && ov[5] == SWS_REGEX_UNSET);
    ck_assert_uint_eq(ov[6], 4);
    ck_assert_uint_eq(ov[7], 6);
    ck_assert(ov[8] == SWS_REGEX_UNSET);          /* beyond the groups */
    ck_assert_int_eq(run(re, "/ab/12", ov, 5), SWS_DECLINED);
    ck_assert_int_eq(run(re, "/12/x/y", NULL, 0), 4);
}
END_TEST

START_TEST(named_groups)
{
    const char   *err;
    sws_str_t     name;
    sws_regex_t  *re = compile("^/(?<year>\\d{4})/(\\d+)/(?<slug>[a-z-]+)$", 0, &err);
    sws_uint_t    i, g, year = 0, slug = 0;

    ck_assert_ptr_nonnull(re);
    for (i = 0; (g = sws_regex_name(re, i, &name)) != 0; i++) {
        if (name.len == 4 && memcmp(name.data, "year", 4) == 0) {
            year = g;
        } else if (name.len == 4 && memcmp(name.data, "slug", 4) == 0) {
            slug = g;
        } else {
            ck_abort_msg("unexpected name");
        }
    }
    ck_assert_uint_eq(i, 2);
    ck_assert_uint_eq(year, 1);
    ck_assert_uint_eq(slug, 3);
    ck_assert_uint_eq(sws_regex_name(compile("(a)(b)", 0, &err), 0, &name), 0);
}
END_TEST

START_TEST(caseless_and_binary)
{
    const char   *err;
    sws_regex_t  *re = compile("\\.PHP$", SWS_REGEX_CASELESS, &err);
    u_char        bin[] = { '/', 0, 'a', '.', 'p', 'h', 'p' };

    ck_assert_ptr_nonnull(re);
    ck_assert_int_eq(run(re, "/index.php", NULL, 0), 1);
    ck_assert_int_eq(sws_regex_exec(re, bin, sizeof(bin), NULL, 0, NULL), 1);
    ck_assert_int_eq(run(compile("\\.PHP$", 0, &err), "/index.php", NULL, 0), SWS_DECLINED);
    ck_assert_int_eq(sws_regex_exec(re, NULL, 0, NULL, 0, NULL), SWS_DECLINED);
}
END_TEST

START_TEST(match_data_grows)
{
    const char   *err;
    size_t        ov[2 * 13];
    sws_regex_t  *small = compile("(a)", 0, &err);
    sws_regex_t  *big;

    ck_assert_int_eq(run(small, "a", ov, 2), 2);  /* match data made for 2 pairs */
    big = compile("(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)(l)", 0, &err);
    ck_assert_ptr_nonnull(big);
    ck_assert_int_eq(run(big, "abcdefghijkl", ov, 13), 13);
    ck_assert_uint_eq(ov[24], 11);
    ck_assert_uint_eq(ov[25], 12);
}
END_TEST

static Suite *
regex_suite(void)
{
    Suite  *s = suite_create("regex");
    TCase  *tc = tcase_create("regex");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, compile_error);
    tcase_add_test(tc, captures_and_unset);
    tcase_add_test(tc, named_groups);
    tcase_add_test(tc, caseless_and_binary);
    tcase_add_test(tc, match_data_grows);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner  *sr;
    int       failed;

    sr = srunner_create(regex_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
