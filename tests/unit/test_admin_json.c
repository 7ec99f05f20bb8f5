/*
 * The admin module's JSON writer (modules/admin/sws_admin_json.c,
 * standalone: it is compiled into this test): commas and nesting, the
 * escapes, UTF-8 kept when well-formed and replaced when not, numbers at
 * their limits, and a buffer too small at every size: overflow, never a
 * byte past the end.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../modules/admin/sws_admin_json.c"

static char  out[4096];

static const char *
text(sws_admin_out_t *o)
{
    size_t n = (size_t) (o->pos - o->start);

    ck_assert(!o->overflow);
    memcpy(out, o->start, n);
    out[n] = '\0';
    return out;
}

static const char *
escaped(const char *s, size_t len)
{
    static u_char    buf[1024];
    sws_admin_out_t  o;

    sws_admin_out_init(&o, buf, sizeof(buf));
    sws_admin_json_str(&o, NULL, (const u_char *) s, len);
    return text(&o);
}

START_TEST(test_nesting_and_commas)
{
    u_char           buf[512];
    sws_admin_out_t  o;

    sws_admin_out_init(&o, buf, sizeof(buf));
    sws_admin_json_open(&o, NULL, '{');
    sws_admin_json_uint(&o, "a", 1);
    sws_admin_json_open(&o, "b", '[');
    sws_admin_json_int(&o, NULL, -2);
    sws_admin_json_open(&o, NULL, '{');
    sws_admin_json_close(&o, '}');
    sws_admin_json_open(&o, NULL, '[');
    sws_admin_json_close(&o, ']');
    sws_admin_json_bool(&o, NULL, 1);
    sws_admin_json_close(&o, ']');
    sws_admin_json_cstr(&o, "c", NULL);
    sws_admin_json_bool(&o, "d", 0);
    sws_admin_json_open(&o, "e", '{');
    sws_admin_json_cstr(&o, "f", "g");
    sws_admin_json_close(&o, '}');
    sws_admin_json_close(&o, '}');
    ck_assert_str_eq(text(&o),
                     "{\"a\":1,\"b\":[-2,{},[],true],\"c\":null,\"d\":false,\"e\":{\"f\":\"g\"}}");
    ck_assert_uint_eq(o.depth, 0);
}
END_TEST

START_TEST(test_numbers)
{
    u_char           buf[256];
    sws_admin_out_t  o;

    sws_admin_out_init(&o, buf, sizeof(buf));
    sws_admin_json_open(&o, NULL, '[');
    sws_admin_json_uint(&o, NULL, 0);
    sws_admin_json_uint(&o, NULL, UINT64_MAX);
    sws_admin_json_int(&o, NULL, INT64_MIN);
    sws_admin_json_int(&o, NULL, INT64_MAX);
    sws_admin_json_close(&o, ']');
    ck_assert_str_eq(text(&o), "[0,18446744073709551615,-9223372036854775808,"
                               "9223372036854775807]");
    sws_admin_out_init(&o, buf, sizeof(buf));
    sws_admin_out_milli(&o, 0);
    sws_admin_out_bytes(&o, " ", 1);
    sws_admin_out_milli(&o, 1234567);
    sws_admin_out_bytes(&o, " ", 1);
    sws_admin_out_milli(&o, 5);
    ck_assert_str_eq(text(&o), "0.000 1234.567 0.005");
}
END_TEST

START_TEST(test_escapes)
{
    ck_assert_str_eq(escaped("plain", 5), "\"plain\"");
    ck_assert_str_eq(escaped("a\"b\\c", 5), "\"a\\\"b\\\\c\"");
    ck_assert_str_eq(escaped("\n\r\t", 3), "\"\\n\\r\\t\"");
    ck_assert_str_eq(escaped("\x01\x1f", 2), "\"\\u0001\\u001f\"");
    ck_assert_str_eq(escaped("a\0b", 3), "\"a\\u0000b\"");
    ck_assert_str_eq(escaped("\x7f/", 2), "\"\x7f/\"");
    ck_assert_str_eq(escaped("", 0), "\"\"");
}
END_TEST

START_TEST(test_utf8)
{
    /* well-formed: kept as it is (2, 3 and 4 bytes, the limits) */
    ck_assert_str_eq(escaped("\xc3\xa9", 2), "\"\xc3\xa9\"");
    ck_assert_str_eq(escaped("\xe2\x82\xac", 3), "\"\xe2\x82\xac\"");
    ck_assert_str_eq(escaped("\xf0\x9f\x98\x80", 4), "\"\xf0\x9f\x98\x80\"");
    ck_assert_str_eq(escaped("\xf4\x8f\xbf\xbf", 4), "\"\xf4\x8f\xbf\xbf\"");
    ck_assert_str_eq(escaped("\xed\x9f\xbf", 3), "\"\xed\x9f\xbf\"");
    /* not: each bad byte one U+FFFD, what follows read afresh */
    ck_assert_str_eq(escaped("\xff", 1), "\"\\ufffd\"");
    ck_assert_str_eq(escaped("\xc0\xaf", 2), "\"\\ufffd\\ufffd\"");          /* overlong */
    ck_assert_str_eq(escaped("\xe0\x80\xaf", 3), "\"\\ufffd\\ufffd\\ufffd\"");
    ck_assert_str_eq(escaped("\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\"");  /* surrogate */
    ck_assert_str_eq(escaped("\xf4\x90\x80\x80", 4),                          /* > U+10FFFF */
                     "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    ck_assert_str_eq(escaped("\xc3", 1), "\"\\ufffd\"");                      /* cut short */
    ck_assert_str_eq(escaped("\xe2\x82" "a", 3), "\"\\ufffd\\ufffda\"");
    ck_assert_str_eq(escaped("a\x80" "b", 3), "\"a\\ufffdb\"");
}
END_TEST

/* Every byte string of up to 3 bytes comes out as a JSON string with no
 * control character, quote or backslash unescaped, and no invalid UTF-8. */
START_TEST(test_all_short_strings)
{
    u_char           in[3], buf[64];
    sws_admin_out_t  o;
    unsigned         v, n;
    u_char          *p;

    for (n = 1; n <= 3; n++) {
        for (v = 0; v < (1u << (8 * n)); v += n == 3 ? 7 : 1) {
            in[0] = (u_char) v;
            in[1] = (u_char) (v >> 8);
            in[2] = (u_char) (v >> 16);
            sws_admin_out_init(&o, buf, sizeof(buf));
            sws_admin_json_escape(&o, in, n);
            if (o.overflow) {
                ck_abort_msg("overflow");
            }
            for (p = buf; p < o.pos; p++) {
                if (*p < 0x20 || *p == '"') {
                    ck_abort_msg("raw byte %02x for %06x/%u", *p, v, n);
                }
                if (*p == '\\' && !(p + 1 < o.pos && strchr("\"\\nrtu", p[1]))) {
                    ck_abort_msg("bad escape for %06x/%u", v, n);
                }
                if (*p == '\\') {
                    p++;
                } else if (*p >= 0x80) {
                    size_t k = sws_admin_utf8_len(p, (size_t) (o.pos - p));
                    if (k == 0) {
                        ck_abort_msg("invalid UTF-8 out for %06x/%u", v, n);
                    }
                    p += k - 1;
                }
            }
        }
    }
}
END_TEST

START_TEST(test_overflow_at_every_size)
{
    u_char           buf[128];
    sws_admin_out_t  o;
    size_t           size, full = 0;

    for (size = 0; size <= 80; size++) {
        memset(buf, 0xaa, sizeof(buf));
        sws_admin_out_init(&o, buf, size);
        sws_admin_json_open(&o, NULL, '{');
        sws_admin_json_cstr(&o, "k\n", "v\"\xff");
        sws_admin_json_uint(&o, "n", 1234567890);
        sws_admin_json_close(&o, '}');
        ck_assert(o.pos <= buf + size);
        ck_assert_uint_eq(buf[size], 0xaa);
        if (!o.overflow && full == 0) {
            full = size;
            buf[o.pos - buf] = '\0';
            ck_assert_str_eq((char *) buf, "{\"k\\n\":\"v\\\"\\ufffd\",\"n\":1234567890}");
        }
    }
    ck_assert_uint_eq(full, strlen("{\"k\\n\":\"v\\\"\\ufffd\",\"n\":1234567890}"));
}
END_TEST

START_TEST(test_too_deep)
{
    u_char           buf[256];
    sws_admin_out_t  o;
    unsigned         i;

    sws_admin_out_init(&o, buf, sizeof(buf));
    for (i = 0; i < SWS_ADMIN_JSON_DEPTH + 2; i++) {
        sws_admin_json_open(&o, NULL, '[');
    }
    ck_assert(o.overflow);
}
END_TEST

static Suite *
admin_json_suite(void)
{
    Suite *s = suite_create("admin_json");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_nesting_and_commas);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_escapes);
    tcase_add_test(tc, test_utf8);
    tcase_add_test(tc, test_all_short_strings);
    tcase_add_test(tc, test_overflow_at_every_size);
    tcase_add_test(tc, test_too_deep);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(admin_json_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
