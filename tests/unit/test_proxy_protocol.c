/*
 * Unit tests of the PROXY protocol parser (src/event/sws_proxy_protocol.c):
 * v1 and v2 headers whole and one byte at a time, where the header ends
 * (the bytes after it are not taken), and what is refused, as early as
 * the first wrong byte.
 */
#include <check.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_proxy_protocol.h"

static const u_char  v2sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a,
                                   0x51, 0x55, 0x49, 0x54, 0x0a };

/* Feed data whole (step 0) or step bytes at a time; the result, *end the
 * header's length when SWS_OK. */
static sws_int_t
feed(sws_proxy_protocol_t *pp, const u_char *data, size_t len, size_t step, size_t *end)
{
    size_t     off = 0, n, used = 0;
    sws_int_t  rc = SWS_AGAIN;

    memset(pp, 0, sizeof(*pp));
    while (off < len) {
        n = step ? sws_min(step, len - off) : len - off;
        rc = sws_proxy_protocol_parse(pp, data + off, n, &used);
        if (rc != SWS_AGAIN) {
            if (rc == SWS_OK) {
                *end = off + used;
            }
            return rc;
        }
        off += n;
    }
    return rc;
}

static void
check_v4(const struct sockaddr_storage *ss, const char *addr, unsigned port)
{
    const struct sockaddr_in *sin = (const struct sockaddr_in *) ss;
    char                      text[INET_ADDRSTRLEN];

    ck_assert_int_eq(sin->sin_family, AF_INET);
    ck_assert_str_eq(inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)), addr);
    ck_assert_uint_eq(ntohs(sin->sin_port), port);
}

static void
check_v6(const struct sockaddr_storage *ss, const char *addr, unsigned port)
{
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *) ss;
    char                       text[INET6_ADDRSTRLEN];

    ck_assert_int_eq(sin6->sin6_family, AF_INET6);
    ck_assert_str_eq(inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text)), addr);
    ck_assert_uint_eq(ntohs(sin6->sin6_port), port);
}

START_TEST(v1_tcp4_any_split)
{
    static const char     msg[] = "PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\nGET /";
    sws_proxy_protocol_t  pp;
    size_t                step, end = 0;

    for (step = 0; step <= 7; step++) {
        ck_assert_int_eq(feed(&pp, (const u_char *) msg, sizeof(msg) - 1, step, &end), SWS_OK);
        ck_assert_uint_eq(end, sizeof(msg) - 1 - 5);     /* "GET /" is not the header's */
        ck_assert_uint_eq(pp.version, 1);
        ck_assert(pp.has_addrs);
        check_v4(&pp.src, "192.0.2.1", 56324);
        check_v4(&pp.dst, "198.51.100.2", 443);
    }
}
END_TEST

START_TEST(v1_tcp6_and_unknown)
{
    static const char     six[] = "PROXY TCP6 2001:db8::1 ::1 1 65535\r\n";
    static const char     unk[] = "PROXY UNKNOWN whatever follows\r\n";
    static const char     unk2[] = "PROXY UNKNOWN\r\n";
    sws_proxy_protocol_t  pp;
    size_t                end = 0;

    ck_assert_int_eq(feed(&pp, (const u_char *) six, sizeof(six) - 1, 1, &end), SWS_OK);
    check_v6(&pp.src, "2001:db8::1", 1);
    check_v6(&pp.dst, "::1", 65535);
    ck_assert_int_eq(feed(&pp, (const u_char *) unk, sizeof(unk) - 1, 0, &end), SWS_OK);
    ck_assert(!pp.has_addrs);
    ck_assert_int_eq(feed(&pp, (const u_char *) unk2, sizeof(unk2) - 1, 0, &end), SWS_OK);
    ck_assert(!pp.has_addrs);
}
END_TEST

START_TEST(v1_refused)
{
    static const char *const  bad[] = {
        "GET / HTTP/1.1\r\n", "PROXZ", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",
        "PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",
        "PROXY TCP4 1.2.3.4  5.6.7.8 1 2\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 1 -2\r\n",
        "PROXY TCP4 1.2.3.4 5.6.7.8 123456 2\r\n", "PROXY TCP4 ::1 ::2 1 2\r\n",
        "PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n", "PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n",
        "PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX", "PROXY TCP4 1.2.3.4\x01 5.6.7.8 1 2\r\n",
        "PROXY \r\n", NULL
    };
    sws_proxy_protocol_t      pp;
    size_t                    i, end;

    for (i = 0; bad[i]; i++) {
        ck_assert_msg(feed(&pp, (const u_char *) bad[i], strlen(bad[i]), 1, &end) == SWS_ERROR,
                      "accepted: %s", bad[i]);
    }
}
END_TEST

START_TEST(v1_length_bound)
{
    u_char                line[200];
    sws_proxy_protocol_t  pp;
    size_t                end = 0;

    /* exactly 107 bytes with CR LF: taken; one more: refused before the end */
    memcpy(line, "PROXY UNKNOWN ", 14);
    memset(line + 14, 'x', 107 - 14 - 2);
    memcpy(line + 105, "\r\n", 2);
    ck_assert_int_eq(feed(&pp, line, 107, 0, &end), SWS_OK);
    ck_assert_uint_eq(end, 107);
    memset(line + 14, 'x', 200 - 14);
    ck_assert_int_eq(feed(&pp, line, 200, 0, &end), SWS_ERROR);
    ck_assert_uint_le(pp.total, 107);
}
END_TEST

static size_t
v2(u_char *b, u_char vercmd, u_char fam, const u_char *body, size_t len)
{
    memcpy(b, v2sig, 12);
    b[12] = vercmd;
    b[13] = fam;
    b[14] = (u_char) (len >> 8);
    b[15] = (u_char) len;
    memcpy(b + 16, body, len);
    return 16 + len;
}

START_TEST(v2_inet_with_tlvs_any_split)
{
    static const u_char   body[] = { 192, 0, 2, 9, 10, 0, 0, 1, 0x15, 0xb3, 0, 80,
                                     0x01, 0, 2, 'h', '2', 0x04, 0, 0, 0xea, 0, 1, 'z' };
    u_char                b[128];
    size_t                n = v2(b, 0x21, 0x11, body, sizeof(body)), step, end = 0;
    sws_proxy_protocol_t  pp;

    memcpy(b + n, "GET", 3);
    for (step = 0; step <= 5; step++) {
        ck_assert_int_eq(feed(&pp, b, n + 3, step, &end), SWS_OK);
        ck_assert_uint_eq(end, n);
        ck_assert_uint_eq(pp.version, 2);
        check_v4(&pp.src, "192.0.2.9", 5555);
        check_v4(&pp.dst, "10.0.0.1", 80);
    }
}
END_TEST

START_TEST(v2_inet6_local_unspec_unix)
{
    u_char                body[216], b[300];
    sws_proxy_protocol_t  pp;
    size_t                n, end = 0;

    memset(body, 0, sizeof(body));
    inet_pton(AF_INET6, "2001:db8::7", body);
    inet_pton(AF_INET6, "::1", body + 16);
    body[32] = 0x01; body[33] = 0x00;
    body[34] = 0x00; body[35] = 0x50;
    n = v2(b, 0x21, 0x21, body, 36);
    ck_assert_int_eq(feed(&pp, b, n, 1, &end), SWS_OK);
    check_v6(&pp.src, "2001:db8::7", 256);
    check_v6(&pp.dst, "::1", 80);

    n = v2(b, 0x20, 0x11, body, 12);                  /* LOCAL: addresses ignored */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_OK);
    ck_assert(!pp.has_addrs);
    n = v2(b, 0x20, 0x00, body, 0);                   /* LOCAL, nothing after */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_OK);
    ck_assert_uint_eq(end, 16);
    n = v2(b, 0x21, 0x00, body, 5);                   /* UNSPEC: skipped */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_OK);
    ck_assert(!pp.has_addrs);
    n = v2(b, 0x21, 0x31, body, 216);                 /* unix: no IP to take */
    ck_assert_int_eq(feed(&pp, b, n, 3, &end), SWS_OK);
    ck_assert(!pp.has_addrs);
}
END_TEST

START_TEST(v2_refused)
{
    u_char                body[64], b[128];
    sws_proxy_protocol_t  pp;
    size_t                n, end;

    memset(body, 0, sizeof(body));
    n = v2(b, 0x11, 0x11, body, 12);                  /* version 1 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    n = v2(b, 0x22, 0x11, body, 12);                  /* command 2 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    n = v2(b, 0x21, 0x41, body, 12);                  /* family 4 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    n = v2(b, 0x21, 0x13, body, 12);                  /* transport 3 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    n = v2(b, 0x21, 0x11, body, 11);                  /* inet needs 12 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    n = v2(b, 0x21, 0x21, body, 35);                  /* inet6 needs 36 */
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    body[12] = 1; body[13] = 0; body[14] = 9;         /* a TLV past the end */
    n = v2(b, 0x21, 0x11, body, 16);
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    body[12] = 1; body[13] = 0;                       /* a TLV header cut */
    n = v2(b, 0x21, 0x11, body, 14);
    ck_assert_int_eq(feed(&pp, b, n, 0, &end), SWS_ERROR);
    memcpy(b, v2sig, 12);
    b[12] = 0x21; b[13] = 0x11; b[14] = 0xff; b[15] = 0xff;   /* oversized */
    ck_assert_int_eq(feed(&pp, b, 16, 1, &end), SWS_ERROR);
    memcpy(b, v2sig, 12);
    b[5] = 'X';                                       /* the signature, at its 6th byte */
    ck_assert_int_eq(feed(&pp, b, 12, 1, &end), SWS_ERROR);
    ck_assert_uint_eq(pp.total, 6);
}
END_TEST

START_TEST(not_fed_again_after_the_end)
{
    static const char     msg[] = "PROXY UNKNOWN\r\n";
    sws_proxy_protocol_t  pp;
    size_t                end = 0;

    ck_assert_int_eq(feed(&pp, (const u_char *) msg, sizeof(msg) - 1, 0, &end), SWS_OK);
    ck_assert_int_eq(sws_proxy_protocol_parse(&pp, (const u_char *) "x", 1, &end), SWS_ERROR);
}
END_TEST

static Suite *
proxy_protocol_suite(void)
{
    Suite *s = suite_create("proxy_protocol");
    TCase *tc = tcase_create("parser");

    tcase_add_test(tc, v1_tcp4_any_split);
    tcase_add_test(tc, v1_tcp6_and_unknown);
    tcase_add_test(tc, v1_refused);
    tcase_add_test(tc, v1_length_bound);
    tcase_add_test(tc, v2_inet_with_tlvs_any_split);
    tcase_add_test(tc, v2_inet6_local_unspec_unix);
    tcase_add_test(tc, v2_refused);
    tcase_add_test(tc, not_fed_again_after_the_end);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(proxy_protocol_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
