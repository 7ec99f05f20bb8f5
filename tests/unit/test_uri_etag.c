/*
 * The SDK's URI escaper (sws_escape_uri, both modes) checked byte by byte
 * against the character classes of RFC 3986 written out here, with round
 * trips through a decoder; and the ETag builder (sws_http_etag_make)
 * against printf's hex, at the extremes that must fit SWS_HTTP_ETAG_LEN.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scalws/scalws.h>

/* RFC 3986 2.3 */
static int
unreserved(int c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
           || c == '-' || c == '.' || c == '_' || c == '~';
}

/* What a path may not carry as is: no controls, space or non-ASCII, and
 * none of the bytes that end a path or that are unsafe in one. */
static int
path_escaped(int c)
{
    return c <= 0x20 || c >= 0x7f || (c && strchr("\"#%<>?\\^`{|}", c) != NULL);
}

static size_t
decode(u_char *dst, const u_char *src, size_t len)
{
    size_t i, n = 0;
    char   hex[3] = { 0 };

    for (i = 0; i < len; i++) {
        if (src[i] == '%') {
            ck_assert_uint_le(i + 2, len - 1);
            hex[0] = src[i + 1];
            hex[1] = src[i + 2];
            /* upper-case hex only (RFC 3986 2.1 "should") */
            ck_assert(strchr("0123456789ABCDEF", hex[0]) && strchr("0123456789ABCDEF", hex[1]));
            dst[n++] = (u_char) strtoul(hex, NULL, 16);
            i += 2;
        } else {
            dst[n++] = src[i];
        }
    }
    return n;
}

static void
check_every_byte(sws_uint_t mode, int (*escaped)(int))
{
    u_char  in[1], out[4], back[4];
    size_t  len;
    int     c;

    for (c = 0; c < 256; c++) {
        in[0] = (u_char) c;
        len = sws_escape_uri_len(in, 1, mode);
        ck_assert_msg(len == (escaped(c) ? 3u : 1u), "byte 0x%02x: length %zu", c, len);
        memset(out, 0, sizeof(out));
        ck_assert_ptr_eq(sws_escape_uri(out, in, 1, mode), out + len);
        if (escaped(c)) {
            ck_assert_int_eq(out[0], '%');
        } else {
            ck_assert_int_eq(out[0], c);
        }
        ck_assert_uint_eq(decode(back, out, len), 1);
        ck_assert_int_eq(back[0], c);
    }
}

static int
component_escaped(int c)
{
    return !unreserved(c);
}

START_TEST(escape_path_every_byte)
{
    check_every_byte(SWS_ESCAPE_URI_PATH, path_escaped);
}
END_TEST

START_TEST(escape_component_every_byte)
{
    check_every_byte(SWS_ESCAPE_URI_COMPONENT, component_escaped);
}
END_TEST

START_TEST(escape_strings)
{
    static const struct {
        const char *in;
        sws_uint_t  mode;
        const char *out;
    } cases[] = {
        { "/a b/c%d?e#f", SWS_ESCAPE_URI_PATH, "/a%20b/c%25d%3Fe%23f" },
        { "/caf\xc3\xa9/x.html", SWS_ESCAPE_URI_PATH, "/caf%C3%A9/x.html" },
        { "/keep:@!$&'()*+,;=/", SWS_ESCAPE_URI_PATH, "/keep:@!$&'()*+,;=/" },
        { "a b/c?d=e&f", SWS_ESCAPE_URI_COMPONENT, "a%20b%2Fc%3Fd%3De%26f" },
        { "Az09-._~", SWS_ESCAPE_URI_COMPONENT, "Az09-._~" },
        { "\x7f\x01", SWS_ESCAPE_URI_COMPONENT, "%7F%01" },
        { "", SWS_ESCAPE_URI_PATH, "" },
    };
    u_char  buf[128], *end;
    size_t  i, len;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        len = strlen(cases[i].in);
        ck_assert_uint_eq(sws_escape_uri_len((u_char *) cases[i].in, len, cases[i].mode),
                          strlen(cases[i].out));
        end = sws_escape_uri(buf, (u_char *) cases[i].in, len, cases[i].mode);
        *end = '\0';
        ck_assert_str_eq((char *) buf, cases[i].out);
    }
}
END_TEST

START_TEST(escape_random_round_trip)
{
    u_char      in[200], out[600], back[600];
    size_t      len, n;
    int         round, i;
    sws_uint_t  mode;

    srand(7);
    for (round = 0; round < 2000; round++) {
        len = (size_t) (rand() % (int) sizeof(in));
        for (i = 0; i < (int) len; i++) {
            in[i] = (u_char) rand();
        }
        mode = round & 1;
        n = sws_escape_uri_len(in, len, mode);
        ck_assert_ptr_eq(sws_escape_uri(out, in, len, mode), out + n);
        ck_assert_uint_eq(decode(back, out, n), len);
        ck_assert(len == 0 || memcmp(back, in, len) == 0);
    }
}
END_TEST

static void
check_etag(time_t mtime, off_t size)
{
    u_char  buf[SWS_HTTP_ETAG_LEN + 1], *end;
    char    want[64];

    snprintf(want, sizeof(want), "\"%" PRIx64 "-%" PRIx64 "\"", (uint64_t) mtime,
             (uint64_t) size);
    memset(buf, 0xee, sizeof(buf));
    end = sws_http_etag_make(buf, mtime, size);
    ck_assert_uint_le((size_t) (end - buf), SWS_HTTP_ETAG_LEN);
    ck_assert_int_eq(buf[SWS_HTTP_ETAG_LEN], 0xee);          /* nothing beyond */
    *end = '\0';
    ck_assert_str_eq((char *) buf, want);
}

START_TEST(etag_values)
{
    u_char  buf[SWS_HTTP_ETAG_LEN];
    int     i;

    check_etag(0, 0);
    check_etag(1764547200, 1234);                 /* "692cda80-4d2" */
    check_etag(15, 16);
    /* the longest: both numbers with 16 hex digits fill the buffer exactly */
    ck_assert_uint_eq((size_t) (sws_http_etag_make(buf, (time_t) -1, (off_t) -1) - buf),
                      SWS_HTTP_ETAG_LEN);
    check_etag((time_t) INT64_MAX, (off_t) INT64_MAX);
    srand(11);
    for (i = 0; i < 1000; i++) {
        check_etag((time_t) (((uint64_t) rand() << 31) ^ (uint64_t) rand()),
                   (off_t) (rand() % 1000000007));
    }
}
END_TEST

START_TEST(etag_known_text)
{
    u_char  buf[SWS_HTTP_ETAG_LEN], *end;

    end = sws_http_etag_make(buf, 1764547200, 1234);
    ck_assert_int_eq((int) (end - buf), 14);
    ck_assert_int_eq(memcmp(buf, "\"692cda80-4d2\"", 14), 0);
}
END_TEST

static Suite *
uri_etag_suite(void)
{
    Suite *s = suite_create("uri_etag");
    TCase *tc = tcase_create("escape");

    tcase_add_test(tc, escape_path_every_byte);
    tcase_add_test(tc, escape_component_every_byte);
    tcase_add_test(tc, escape_strings);
    tcase_add_test(tc, escape_random_round_trip);
    suite_add_tcase(s, tc);

    tc = tcase_create("etag");
    tcase_add_test(tc, etag_values);
    tcase_add_test(tc, etag_known_text);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(uri_etag_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
