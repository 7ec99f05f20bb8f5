/*
 * Unit tests of the syslog target (src/core/sws_syslog.c): the parameters
 * after "syslog:" with nginx's defaults and refusals, the RFC 3164 header,
 * and sending: a datagram on a loopback UDP socket, a drop (counted, not
 * waited for) while a unix socket is missing, and a new socket once it is
 * there.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <scalws/scalws.h>
#include "sws_syslog.h"

static sws_syslog_peer_t  peer;
static char               err[512];

static sws_int_t
parse(const char *text)
{
    err[0] = '\0';
    return sws_syslog_parse((const u_char *) text, strlen(text), &peer, err, sizeof(err));
}

#define refused(text, message)                                               \
    do {                                                                     \
        ck_assert_int_eq(parse(text), SWS_ERROR);                            \
        ck_assert_str_eq(err, message);                                      \
    } while (0)


START_TEST(defaults_and_addresses)
{
    struct sockaddr_in   *sin = (struct sockaddr_in *) &peer.addr;
    struct sockaddr_in6  *sin6 = (struct sockaddr_in6 *) &peer.addr;
    struct sockaddr_un   *sun = (struct sockaddr_un *) &peer.addr;

    ck_assert_int_eq(parse("server=192.0.2.1"), SWS_OK);
    ck_assert_int_eq(sin->sin_family, AF_INET);
    ck_assert_int_eq(ntohs(sin->sin_port), 514);
    ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), 0xc0000201);
    ck_assert_uint_eq(peer.facility, 23);           /* local7 */
    ck_assert_uint_eq(peer.severity, 6);            /* info */
    ck_assert_int_eq(peer.tag_len, 6);
    ck_assert(memcmp(peer.tag, "scalws", 6) == 0);
    ck_assert(!peer.nohostname);
    ck_assert_int_eq(peer.fd, -1);

    ck_assert_int_eq(parse("server=[::1]:5514,facility=kern,severity=emerg,tag=A_1,"
                           "nohostname"), SWS_OK);
    ck_assert_int_eq(sin6->sin6_family, AF_INET6);
    ck_assert_int_eq(ntohs(sin6->sin6_port), 5514);
    ck_assert_uint_eq(peer.facility, 0);
    ck_assert_uint_eq(peer.severity, 0);
    ck_assert(peer.nohostname && peer.tag_len == 3);

    ck_assert_int_eq(parse("tag=,server=unix:/dev/log"), SWS_OK);
    ck_assert_int_eq(sun->sun_family, AF_UNIX);
    ck_assert_str_eq(sun->sun_path, "/dev/log");
    ck_assert_int_eq(peer.tag_len, 0);

    /* a name is left for sws_syslog_resolve */
    ck_assert_int_eq(parse("server=localhost:1514"), SWS_OK);
    ck_assert_str_eq(peer.host, "localhost");
    ck_assert_uint_eq(peer.port, 1514);
    ck_assert_int_eq(peer.addrlen, 0);
    ck_assert_int_eq(sws_syslog_resolve(&peer, err, sizeof(err)), SWS_OK);
    ck_assert_int_ne(peer.addrlen, 0);
}
END_TEST


START_TEST(refusals)
{
    refused("", "unknown syslog parameter \"\"");
    refused("server=", "no host in syslog server \"\"");
    refused("server=1.2.3.4:0", "invalid port in syslog server \"1.2.3.4:0\"");
    refused("server=1.2.3.4:65536", "invalid port in syslog server \"1.2.3.4:65536\"");
    refused("server=[::1", "invalid host in syslog server \"[::1\"");
    refused("server=[::1]x", "invalid host in syslog server \"[::1]x\"");
    refused("server=[::1]:", "invalid port in syslog server \"[::1]:\"");
    refused("server=unix:", "no path in the unix domain socket in syslog server \"unix:\"");
    refused("server=1.2.3.4/x", "invalid host in syslog server \"1.2.3.4/x\"");
    refused("server=a,server=b", "duplicate syslog \"server\"");
    refused("server=a,facility=local8", "unknown syslog facility \"local8\"");
    refused("server=a,facility=user,facility=user", "duplicate syslog \"facility\"");
    refused("server=a,severity=warning", "unknown syslog severity \"warning\"");
    refused("server=a,severity=info,severity=info", "duplicate syslog \"severity\"");
    refused("server=a,tag=a.b",
            "syslog \"tag\" only allows alphanumeric characters and underscore");
    refused("server=a,tag=123456789012345678901234567890123", "syslog tag length exceeds 32");
    refused("server=a,tag=x,tag=y", "duplicate syslog \"tag\"");
    refused("server=a,nohostname=1", "unknown syslog parameter \"nohostname=1\"");
    refused("server=a,", "unknown syslog parameter \"\"");
    refused("facility=local0", "no syslog server specified");
    ck_assert_int_eq(parse("server=nonexistent.invalid"), SWS_OK);
    ck_assert_int_eq(sws_syslog_resolve(&peer, err, sizeof(err)), SWS_ERROR);
    ck_assert_str_eq(err, "host not found in syslog server \"nonexistent.invalid\"");
}
END_TEST


START_TEST(header)
{
    u_char            buf[SWS_SYSLOG_HEADER_MAX], *end;
    const sws_str_t  *host = sws_syslog_hostname();
    char              want[400];

    sws_time_update();
    ck_assert_int_eq(parse("server=127.0.0.1,facility=local3,tag=web"), SWS_OK);
    end = sws_syslog_header(&peer, 5, buf);
    /* "<157>Mmm dd hh:mm:ss HOST web: " */
    ck_assert(memcmp(buf, "<157>", 5) == 0);
    ck_assert(buf[8] == ' ' && buf[11] == ' ' && buf[14] == ':' && buf[17] == ':');
    ck_assert(buf[9] == ' ' || (buf[9] >= '1' && buf[9] <= '3'));
    snprintf(want, sizeof(want), " %.*s web: ", (int) host->len, host->data);
    ck_assert_int_eq(end - buf, 20 + (long) strlen(want));
    ck_assert(memcmp(buf + 20, want, strlen(want)) == 0);

    ck_assert_int_eq(parse("server=127.0.0.1,facility=kern,nohostname,tag="), SWS_OK);
    end = sws_syslog_header(&peer, 0, buf);
    ck_assert_int_eq(end - buf, 3 + 15 + 1 + 2);
    ck_assert(memcmp(buf, "<0>", 3) == 0 && memcmp(end - 3, " : ", 3) == 0);
}
END_TEST


START_TEST(sending)
{
    int                 rx, urx;
    struct sockaddr_in  sin;
    struct sockaddr_un  sun;
    socklen_t           len = sizeof(sin);
    char                text[128], path[64], dir[] = "/tmp/sws-syslog-XXXXXX";
    ssize_t             n;

    rx = socket(AF_INET, SOCK_DGRAM, 0);
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(rx, (struct sockaddr *) &sin, sizeof(sin)), 0);
    ck_assert_int_eq(getsockname(rx, (struct sockaddr *) &sin, &len), 0);
    snprintf(text, sizeof(text), "server=127.0.0.1:%u", ntohs(sin.sin_port));
    ck_assert_int_eq(parse(text), SWS_OK);
    ck_assert_int_eq(sws_syslog_send(&peer, (const u_char *) "<1>x", 4), 1);
    ck_assert_int_ge(peer.fd, 10);                  /* out of the low numbers */
    n = recv(rx, text, sizeof(text), 0);
    ck_assert_int_eq(n, 4);
    ck_assert(memcmp(text, "<1>x", 4) == 0);
    close(peer.fd);
    close(rx);

    /* a missing unix socket: dropped at once, then found once it is there */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/rx.sock", dir);
    snprintf(text, sizeof(text), "server=unix:%s", path);
    ck_assert_int_eq(parse(text), SWS_OK);
    ck_assert_int_eq(sws_syslog_send(&peer, (const u_char *) "a", 1), 0);
    ck_assert_int_eq(sws_syslog_send(&peer, (const u_char *) "b", 1), 0);
    ck_assert_uint_eq(peer.dropped, 2);
    ck_assert_int_eq(peer.fd, -1);
    urx = socket(AF_UNIX, SOCK_DGRAM, 0);
    memset(&sun, 0, sizeof(sun));
    sun.sun_family = AF_UNIX;
    strcpy(sun.sun_path, path);
    ck_assert_int_eq(bind(urx, (struct sockaddr *) &sun, sizeof(sun)), 0);
    ck_assert_int_eq(sws_syslog_send(&peer, (const u_char *) "c", 1), 1);
    n = recv(urx, text, sizeof(text), 0);
    ck_assert(n == 1 && text[0] == 'c');
    ck_assert_uint_eq(peer.dropped, 2);
    close(peer.fd);
    close(urx);
    unlink(path);
    rmdir(dir);
}
END_TEST


static Suite *
syslog_suite(void)
{
    Suite  *s = suite_create("syslog");
    TCase  *tc = tcase_create("syslog");

    tcase_add_test(tc, defaults_and_addresses);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, header);
    tcase_add_test(tc, sending);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner  *sr;
    int       failed;

    sr = srunner_create(syslog_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
