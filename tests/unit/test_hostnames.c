/*
 * Unit tests of sws_hostnames (wildcard host names): the kinds of name,
 * suffix and prefix forms, ".x.com" matching x.com itself, the longest
 * match winning, conflicts, and names too short to match.
 */
#include <check.h>
#include <string.h>
#include <scalws/scalws.h>

static sws_pool_t       *pool;
static sws_hostnames_t  *h;

static sws_str_t
str(const char *s)
{
    sws_str_t  v = { strlen(s), (u_char *) s };
    return v;
}

static sws_int_t
add(const char *name, const char *value)
{
    sws_str_t  n = str(name);
    return sws_hostnames_add(h, &n, (void *) value);
}

static const char *
find(const char *host)
{
    return sws_hostnames_find(h, (const u_char *) host, strlen(host));
}

static void
setup(void)
{
    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
    h = sws_hostnames_create(pool);
    ck_assert_ptr_nonnull(h);
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
}

START_TEST(kinds)
{
    static const struct { const char *name; int kind; } cases[] = {
        { "*.x.com", SWS_HOSTNAME_WILDCARD }, { ".x.com", SWS_HOSTNAME_WILDCARD },
        { "www.x.*", SWS_HOSTNAME_WILDCARD }, { "x.com", SWS_HOSTNAME_PLAIN },
        { "*x.com", SWS_HOSTNAME_INVALID }, { "a.*.com", SWS_HOSTNAME_INVALID },
        { "*", SWS_HOSTNAME_INVALID }, { "*.", SWS_HOSTNAME_INVALID },
        { "*.a.*", SWS_HOSTNAME_INVALID }, { ".", SWS_HOSTNAME_PLAIN },
    };
    sws_str_t  n;
    size_t     i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = str(cases[i].name);
        ck_assert_msg(sws_hostnames_kind(&n) == cases[i].kind, "%s", cases[i].name);
    }
    ck_assert_int_eq(add("x.com", "v"), SWS_DECLINED);
}
END_TEST

START_TEST(matching)
{
    ck_assert_int_eq(add("*.example.com", "sub"), SWS_OK);
    ck_assert_int_eq(add(".Example.NET", "net"), SWS_OK);     /* any case */
    ck_assert_int_eq(add("*.deep.example.com", "deep"), SWS_OK);
    ck_assert_int_eq(add("www.example.*", "www"), SWS_OK);

    ck_assert_str_eq(find("a.example.com"), "sub");
    ck_assert_ptr_null(find("example.com"));               /* "*." needs a label */
    ck_assert_str_eq(find("a.deep.example.com"), "deep");   /* the longest wins */
    ck_assert_str_eq(find("example.net"), "net");           /* "." takes the bare name */
    ck_assert_str_eq(find("b.a.example.net"), "net");
    ck_assert_ptr_null(find("xexample.net"));
    ck_assert_str_eq(find("www.example.org"), "www");
    ck_assert_str_eq(find("www.example.com"), "sub");       /* suffix forms first */
    ck_assert_ptr_null(find("www.example."));               /* nothing after the prefix */
    ck_assert_ptr_null(find(""));
}
END_TEST

START_TEST(conflicts)
{
    ck_assert_int_eq(add(".a.com", "1"), SWS_OK);
    ck_assert_int_eq(add("*.a.com", "2"), SWS_BUSY);         /* one form, as nginx's */
    ck_assert_int_eq(add("*.A.COM", "3"), SWS_BUSY);
    ck_assert_int_eq(add("a.*", "4"), SWS_OK);
    ck_assert_int_eq(add("A.*", "5"), SWS_BUSY);
    ck_assert_str_eq(find("x.a.com"), "1");
}
END_TEST

static Suite *
hostnames_suite(void)
{
    Suite  *s = suite_create("hostnames");
    TCase  *tc = tcase_create("hostnames");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, kinds);
    tcase_add_test(tc, matching);
    tcase_add_test(tc, conflicts);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner  *sr;
    int       failed;

    sr = srunner_create(hostnames_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
