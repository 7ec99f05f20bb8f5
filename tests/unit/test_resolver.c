/*
 * Unit tests of the resolver's answer reading (src/event/sws_resolver_reply.c)
 * and its texts: A and AAAA answers into addresses and the smallest TTL,
 * the room given, answers without records, cut or garbled ones, and the
 * c-ares statuses as nginx's numbers and messages.
 */
#include <check.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ares.h>
#include "sws_resolver_internal.h"

/* An answer to "a.test" (qtype) with n records of rdata (rdlen bytes each)
 * and the TTLs given; its length. */
static size_t
reply(u_char *b, uint16_t qtype, sws_uint_t n, const u_char *rdata, size_t rdlen,
    const uint32_t *ttls, uint16_t rcode)
{
    static const u_char qname[] = "\001a\004test";
    size_t              len = 0;
    sws_uint_t          i;

    b[len++] = 0x12; b[len++] = 0x34;                 /* id */
    b[len++] = 0x81; b[len++] = (u_char) (0x80 | rcode);
    b[len++] = 0; b[len++] = 1;                        /* one question */
    b[len++] = 0; b[len++] = (u_char) n;               /* answers */
    memset(b + len, 0, 4);
    len += 4;
    memcpy(b + len, qname, sizeof(qname));             /* with its final 0 */
    len += sizeof(qname);
    b[len++] = 0; b[len++] = (u_char) qtype;
    b[len++] = 0; b[len++] = 1;
    for (i = 0; i < n; i++) {
        b[len++] = 0xc0; b[len++] = 12;                /* the question's name */
        b[len++] = 0; b[len++] = (u_char) qtype;
        b[len++] = 0; b[len++] = 1;
        b[len++] = (u_char) (ttls[i] >> 24); b[len++] = (u_char) (ttls[i] >> 16);
        b[len++] = (u_char) (ttls[i] >> 8); b[len++] = (u_char) ttls[i];
        b[len++] = 0; b[len++] = (u_char) rdlen;
        memcpy(b + len, rdata + i * rdlen, rdlen);
        len += rdlen;
    }
    return len;
}

START_TEST(a_records_and_smallest_ttl)
{
    u_char               b[512], ips[3][4] = { { 127, 0, 0, 1 }, { 10, 0, 0, 2 },
                                               { 192, 0, 2, 3 } };
    uint32_t             ttls[3] = { 300, 60, 3600 }, ttl = 86400;
    sws_resolver_addr_t  a[SWS_RESOLVER_MAX_ADDRS];
    sws_uint_t           n = 0;
    size_t               len = reply(b, 1, 3, &ips[0][0], 4, ttls, 0);
    char                 text[INET_ADDRSTRLEN];

    ck_assert_int_eq(sws_resolver_parse_reply(b, len, AF_INET, a, SWS_RESOLVER_MAX_ADDRS, &n,
                                              &ttl), SWS_RESOLVE_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(ttl, 60);
    ck_assert_int_eq(a[1].sockaddr.ss_family, AF_INET);
    ck_assert_uint_eq(a[1].socklen, sizeof(struct sockaddr_in));
    inet_ntop(AF_INET, &((struct sockaddr_in *) &a[1].sockaddr)->sin_addr, text, sizeof(text));
    ck_assert_str_eq(text, "10.0.0.2");
    ck_assert_uint_eq(ntohs(((struct sockaddr_in *) &a[1].sockaddr)->sin_port), 0);

    /* appended after what is there, within the room given; a TTL already
     * smaller stays */
    ttl = 10;
    ck_assert_int_eq(sws_resolver_parse_reply(b, len, AF_INET, a, 4, &n, &ttl),
                     SWS_RESOLVE_OK);
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(ttl, 10);
}
END_TEST

START_TEST(aaaa_records)
{
    u_char               b[512], ip[16];
    uint32_t             ttls[1] = { 0x80000000u }, ttl = 86400;   /* top bit: 0 (RFC 2181) */
    sws_resolver_addr_t  a[SWS_RESOLVER_MAX_ADDRS];
    sws_uint_t           n = 0;
    size_t               len;

    inet_pton(AF_INET6, "2001:db8::7", ip);
    len = reply(b, 28, 1, ip, 16, ttls, 0);
    ck_assert_int_eq(sws_resolver_parse_reply(b, len, AF_INET6, a, SWS_RESOLVER_MAX_ADDRS,
                                              &n, &ttl), SWS_RESOLVE_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(a[0].sockaddr.ss_family, AF_INET6);
    ck_assert_uint_eq(a[0].socklen, sizeof(struct sockaddr_in6));
    ck_assert_int_eq(memcmp(&((struct sockaddr_in6 *) &a[0].sockaddr)->sin6_addr, ip, 16), 0);
    ck_assert_uint_le(ttl, 0x7fffffffu);
}
END_TEST

START_TEST(no_records_cut_and_garbage)
{
    u_char               b[512], ip[4] = { 127, 0, 0, 1 };
    uint32_t             ttls[1] = { 5 }, ttl = 77;
    sws_resolver_addr_t  a[SWS_RESOLVER_MAX_ADDRS];
    sws_uint_t           n = 0;
    size_t               len, i;

    len = reply(b, 1, 0, NULL, 0, NULL, 0);
    ck_assert_int_eq(sws_resolver_parse_reply(b, len, AF_INET, a, 4, &n, &ttl),
                     SWS_RESOLVE_NXDOMAIN);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(ttl, 77);

    /* an A record asked as AAAA: no address of that family */
    len = reply(b, 1, 1, ip, 4, ttls, 0);
    ck_assert_int_ne(sws_resolver_parse_reply(b, len, AF_INET6, a, 4, &n, &ttl),
                     SWS_RESOLVE_OK);
    ck_assert_uint_eq(n, 0);

    /* every cut of a good answer: never an address from outside it */
    for (i = 0; i < len; i++) {
        n = 0;
        ck_assert_int_ne(sws_resolver_parse_reply(b, i, AF_INET, a, 4, &n, &ttl),
                         SWS_RESOLVE_OK);
        ck_assert_uint_eq(n, 0);
    }
    memset(b, 0xff, 64);
    ck_assert_int_eq(sws_resolver_parse_reply(b, 64, AF_INET, a, 4, &n, &ttl),
                     SWS_RESOLVE_FORMERR);
}
END_TEST

START_TEST(statuses_and_texts)
{
    ck_assert_int_eq(sws_resolver_status(ARES_SUCCESS), SWS_RESOLVE_OK);
    ck_assert_int_eq(sws_resolver_status(ARES_ENOTFOUND), SWS_RESOLVE_NXDOMAIN);
    ck_assert_int_eq(sws_resolver_status(ARES_ENODATA), SWS_RESOLVE_NXDOMAIN);
    ck_assert_int_eq(sws_resolver_status(ARES_ESERVFAIL), SWS_RESOLVE_SERVFAIL);
    ck_assert_int_eq(sws_resolver_status(ARES_EREFUSED), SWS_RESOLVE_REFUSED);
    ck_assert_int_eq(sws_resolver_status(ARES_ETIMEOUT), SWS_RESOLVE_TIMEDOUT);
    ck_assert_int_eq(sws_resolver_status(ARES_EBADRESP), SWS_RESOLVE_FORMERR);
    ck_assert_int_eq(sws_resolver_status(ARES_ECONNREFUSED), SWS_RESOLVE_SERVFAIL);
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_NXDOMAIN), "Host not found");
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_SERVFAIL), "Server failure");
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_FORMERR), "Format error");
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_NOTIMP), "Unimplemented");
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_REFUSED), "Operation refused");
    ck_assert_str_eq(sws_resolver_strerror(SWS_RESOLVE_TIMEDOUT), "Operation timed out");
    ck_assert_str_eq(sws_resolver_strerror(42), "Unknown error");
}
END_TEST

static Suite *
resolver_suite(void)
{
    Suite *s = suite_create("resolver");
    TCase *tc = tcase_create("answers");

    tcase_add_test(tc, a_records_and_smallest_ttl);
    tcase_add_test(tc, aaaa_records);
    tcase_add_test(tc, no_records_cut_and_garbage);
    tcase_add_test(tc, statuses_and_texts);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(resolver_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
