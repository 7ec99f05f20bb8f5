/*
 * The SDK's name table (generated from include/scalws by auto/sdk_symbols):
 * sorted and complete enough to bisect, every address that of the function
 * it names, and sws_sdk_function() answers NULL for anything not in it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sws_sdk.h"
#include <scalws/scalws.h>

START_TEST(table_sorted_and_filled)
{
    sws_uint_t  i;

    ck_assert_uint_gt(sws_sdk_symbols_n, 100);
    for (i = 0; i < sws_sdk_symbols_n; i++) {
        ck_assert_ptr_nonnull(sws_sdk_symbols[i].addr);
        ck_assert_msg(strncmp(sws_sdk_symbols[i].name, "sws_", 4) == 0,
                      "%s is not an sws_ name", sws_sdk_symbols[i].name);
        if (i > 0) {
            ck_assert_msg(strcmp(sws_sdk_symbols[i - 1].name, sws_sdk_symbols[i].name) < 0,
                          "%s before %s", sws_sdk_symbols[i - 1].name,
                          sws_sdk_symbols[i].name);
        }
        /* every entry is found by the bisection */
        ck_assert_ptr_eq(sws_sdk_find(sws_sdk_symbols[i].name), &sws_sdk_symbols[i]);
    }
}
END_TEST

START_TEST(function_addresses)
{
    ck_assert_ptr_eq(sws_sdk_function("sws_palloc"), (void *) &sws_palloc);
    ck_assert_ptr_eq(sws_sdk_function("sws_sdk_function"), (void *) &sws_sdk_function);
    ck_assert_ptr_eq(sws_sdk_function("sws_http_send_response"),
                     (void *) &sws_http_send_response);
    ck_assert_ptr_eq(sws_sdk_lookup(sws_pcalloc), &sws_pcalloc);
    /* the first and the last name */
    ck_assert_ptr_eq(sws_sdk_function(sws_sdk_symbols[0].name), sws_sdk_symbols[0].addr);
    ck_assert_ptr_eq(sws_sdk_function(sws_sdk_symbols[sws_sdk_symbols_n - 1].name),
                     sws_sdk_symbols[sws_sdk_symbols_n - 1].addr);
}
END_TEST

START_TEST(not_sdk_names)
{
    ck_assert_ptr_null(sws_sdk_function(NULL));
    ck_assert_ptr_null(sws_sdk_function(""));
    ck_assert_ptr_null(sws_sdk_function("malloc"));
    ck_assert_ptr_null(sws_sdk_function("main"));
    ck_assert_ptr_null(sws_sdk_function("sws_cycle_init"));     /* core, not SDK */
    ck_assert_ptr_null(sws_sdk_function("sws_pallo"));          /* a prefix */
    ck_assert_ptr_null(sws_sdk_function("sws_palloc_"));        /* longer */
    ck_assert_ptr_null(sws_sdk_function("SWS_PALLOC"));
    ck_assert_ptr_null(sws_sdk_function("sws_string"));         /* a macro */
    ck_assert_ptr_null(sws_sdk_function("sws_http_handler_pt")); /* a typedef */
    ck_assert_ptr_null(sws_sdk_function("\xff"));               /* after every name */
    ck_assert_ptr_null(sws_sdk_function("a"));                  /* before every name */
}
END_TEST

static Suite *
sdk_suite(void)
{
    Suite  *s = suite_create("sdk");
    TCase  *tc = tcase_create("names");

    tcase_add_test(tc, table_sorted_and_filled);
    tcase_add_test(tc, function_addresses);
    tcase_add_test(tc, not_sdk_names);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int      failed;

    sr = srunner_create(sdk_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
