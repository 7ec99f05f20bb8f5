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

/* The bytes %-decoded into dst; (size_t) -1 for a bad escape (a cut one,
 * or lower-case hex, which RFC 3986 2.1 says producers should not use).
 * Plain C checks in the loops: each ck_assert costs Check a message. */
static size_t
decode(u_char *dst, const u_char *src, size_t len)
{
    static const char  hex[] = "0123456789ABCDEF";
    size_t             i, n = 0;
    const char        *h1, *h2;

    for (i = 0; i < len; i++) {
        if (src[i] != '%') {
            dst[n++] = src[i];
            continue;
        }
        if (i + 2 >= len) {
            return (size_t) -1;
        }
        h1 = src[i + 1] ? strchr(hex, src[i + 1]) : NULL;
        h2 = src[i + 2] ? strchr(hex, src[i + 2]) : NULL;
        if (h1 == NULL || h2 == NULL) {
            return (size_t) -1;
        }
        dst[n++] = (u_char) ((h1 - hex) << 4 | (h2 - hex));
        i += 2;
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
    int         round, i, bad = -1;
    sws_uint_t  mode;

    srand(7);
    for (round = 0; round < 2000 && bad == -1; round++) {
        len = (size_t) (rand() % (int) sizeof(in));
        for (i = 0; i < (int) len; i++) {
            in[i] = (u_char) rand();
        }
        mode = round & 1;
        n = sws_escape_uri_len(in, len, mode);
        if (sws_escape_uri(out, in, len, mode) != out + n
            || decode(back, out, n) != len || (len && memcmp(back, in, len) != 0))
        {
            bad = round;
        }
    }
    ck_assert_msg(bad == -1, "round %d does not decode back", bad);
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
    u_char  buf[SWS_HTTP_ETAG_LEN + 1], *end;
    char    want[64];
    int     i;
    time_t  mtime;
    off_t   size;

    check_etag(0, 0);
    check_etag(1764547200, 1234);                 /* "692cda80-4d2" */
    check_etag(15, 16);
    /* the longest: both numbers with 16 hex digits fill the buffer exactly */
    ck_assert_uint_eq((size_t) (sws_http_etag_make(buf, (time_t) -1, (off_t) -1) - buf),
                      SWS_HTTP_ETAG_LEN);
    check_etag((time_t) INT64_MAX, (off_t) INT64_MAX);
    srand(11);
    for (i = 0; i < 1000; i++) {
        mtime = (time_t) (((uint64_t) rand() << 31) ^ (uint64_t) rand());
        size = (off_t) (rand() % 1000000007);
        snprintf(want, sizeof(want), "\"%" PRIx64 "-%" PRIx64 "\"", (uint64_t) mtime,
                 (uint64_t) size);
        end = sws_http_etag_make(buf, mtime, size);
        *end = '\0';
        if (strcmp((char *) buf, want) != 0) {
            ck_abort_msg("ETag %s, want %s", buf, want);
        }
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
