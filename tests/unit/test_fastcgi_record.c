/*
 * The fastcgi module's record layer (modules/fastcgi/sws_fastcgi_record.c,
 * standalone: it is compiled into this test): responses built here record
 * by record are parsed whole and cut at every byte and in every piece size
 * with the same result; each malformed record is refused with its reason;
 * the end of the input is judged; the writers' output decodes back.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../modules/fastcgi/sws_fastcgi_record.c"

/* Check's ck_assert() reports every passing check to the runner (a write
 * per check): in the byte-by-byte loops only failures are reported. */
#define CHECK(c)  do { if (!(c)) ck_abort_msg("failed: %s", #c); } while (0)

static size_t
rec(u_char *p, sws_uint_t type, const char *content, size_t len, sws_uint_t id,
    size_t padding)
{
    u_char *e = sws_fcgi_write_header(p, type, len, padding);

    p[3] = (u_char) id;
    p[2] = (u_char) (id >> 8);
    memcpy(e, content, len);
    memset(e + len, 0xee, padding);
    return SWS_FCGI_HEADER_LEN + len + padding;
}

static size_t
end_request(u_char *p, uint32_t app, u_char proto)
{
    u_char body[8] = { (u_char) (app >> 24), (u_char) (app >> 16), (u_char) (app >> 8),
                       (u_char) app, proto, 0, 0, 0 };
    return rec(p, SWS_FCGI_END_REQUEST, (const char *) body, 8, 1, 0);
}

typedef struct {
    char       out[65536];
    size_t     nout;
    char       err[4096];
    size_t     nerr;
    int        ended;
    int        stdout_end;
    uint32_t   app;
    const char *bad;
} result_t;

/* Feed [data, data + len) in pieces of step bytes (each copied into a
 * buffer of its exact size, so that a read past the end shows under ASan). */
static void
run(const u_char *data, size_t len, size_t step, result_t *res)
{
    sws_fcgi_parser_t  p;
    sws_fcgi_piece_t   piece;
    size_t             at, n;
    sws_int_t          rc;

    memset(res, 0, sizeof(*res));
    sws_fcgi_parser_init(&p);
    for (at = 0; at < len && !res->bad && !res->ended; at += n) {
        u_char *copy, *pos;

        n = len - at < step ? len - at : step;
        copy = malloc(n);
        CHECK(copy != NULL);
        memcpy(copy, data + at, n);
        pos = copy;
        while ((rc = sws_fcgi_parse(&p, &pos, copy + n, &piece)) != SWS_AGAIN) {
            CHECK(pos >= copy && pos <= copy + n);
            if (rc == SWS_FCGI_DATA) {
                CHECK(piece.len > 0 && piece.data >= copy && piece.data + piece.len <= pos);
                if (piece.type == SWS_FCGI_STDOUT) {
                    memcpy(res->out + res->nout, piece.data, piece.len);
                    res->nout += piece.len;
                } else {
                    CHECK(piece.type == SWS_FCGI_STDERR);
                    memcpy(res->err + res->nerr, piece.data, piece.len);
                    res->nerr += piece.len;
                }
            } else if (rc == SWS_FCGI_STDOUT_END) {
                res->stdout_end = 1;
            } else if (rc == SWS_FCGI_END) {
                res->ended = 1;
                res->app = p.app_status;
                /* what follows is the caller's: the parser, asked again,
                 * refuses it */
                if (pos < copy + n
                    && sws_fcgi_parse(&p, &pos, copy + n, &piece) == SWS_FCGI_BAD)
                {
                    res->bad = p.error;
                }
                break;
            } else {
                CHECK(rc == SWS_FCGI_BAD && p.error != NULL);
                res->bad = p.error;
                break;
            }
        }
        free(copy);
    }
    if (!res->bad && !res->ended) {
        res->bad = sws_fcgi_parse_eof(&p);
    }
}

static u_char  resp[200000];

static size_t
good_response(void)
{
    size_t n = 0;
    char   big[40000];

    memset(big, 'b', sizeof(big));
    n += rec(resp + n, SWS_FCGI_STDOUT, "Status: 200 OK\r\n", 16, 1, 0);
    n += rec(resp + n, SWS_FCGI_STDERR, "oops\n", 5, 1, 3);
    n += rec(resp + n, SWS_FCGI_STDOUT, "\r\nbody", 6, 1, 255);
    n += rec(resp + n, SWS_FCGI_STDOUT, big, sizeof(big), 1, 7);
    n += rec(resp + n, SWS_FCGI_STDERR, "", 0, 1, 0);
    n += rec(resp + n, SWS_FCGI_STDOUT, "", 0, 1, 0);
    n += end_request(resp + n, 7, 0);
    return n;
}

START_TEST(parse_every_step)
{
    size_t    n = good_response(), step;
    result_t *res = malloc(sizeof(result_t));

    ck_assert_ptr_nonnull(res);
    for (step = 1; step <= 64; step++) {
        run(resp, n, step, res);
        ck_assert_msg(res->bad == NULL, "step %zu: %s", step, res->bad);
        ck_assert(res->ended && res->stdout_end);
        ck_assert_uint_eq(res->app, 7);
        ck_assert_uint_eq(res->nout, 16 + 6 + 40000);
        ck_assert(memcmp(res->out, "Status: 200 OK\r\n\r\nbody", 22) == 0);
        ck_assert_uint_eq(res->nerr, 5);
    }
    run(resp, n, n, res);
    ck_assert(res->bad == NULL && res->ended);
    free(res);
}
END_TEST

START_TEST(parse_cut_at_every_byte)
{
    size_t      n = good_response(), cut;
    result_t   *res = malloc(sizeof(result_t));

    ck_assert_ptr_nonnull(res);
    for (cut = 0; cut < n; cut += (cut < 200 || n - cut < 200) ? 1 : 997) {
        run(resp, cut, 4096, res);
        ck_assert_msg(!res->ended && res->bad != NULL, "cut at %zu", cut);
    }
    free(res);
}
END_TEST

static const char *
bad_one(u_char *p, size_t n)
{
    static result_t res;
    run(p, n, n, &res);
    return res.bad;
}

START_TEST(parse_refuses)
{
    u_char   b[256];
    size_t   n;

    n = rec(b, SWS_FCGI_STDOUT, "x", 1, 1, 0);
    b[0] = 2;
    ck_assert_str_eq(bad_one(b, n), "a record of an unknown FastCGI version");

    n = rec(b, SWS_FCGI_BEGIN_REQUEST, "12345678", 8, 1, 0);
    ck_assert_str_eq(bad_one(b, n), "a record of an unexpected type");
    n = rec(b, 11, "12345678", 8, 0, 0);
    ck_assert_str_eq(bad_one(b, n), "a record of an unexpected type");

    n = rec(b, SWS_FCGI_STDOUT, "x", 1, 2, 0);
    ck_assert_str_eq(bad_one(b, n), "a record for another request id");
    n = rec(b, SWS_FCGI_STDOUT, "x", 1, 0x101, 0);
    ck_assert_str_eq(bad_one(b, n), "a record for another request id");

    n = rec(b, SWS_FCGI_END_REQUEST, "1234", 4, 1, 0);
    ck_assert_str_eq(bad_one(b, n), "an END_REQUEST record whose length is not 8");

    n = end_request(b, 0, 2);
    ck_assert_str_eq(bad_one(b, n), "END_REQUEST: overloaded");
    n = end_request(b, 0, 9);
    ck_assert_str_eq(bad_one(b, n), "END_REQUEST with an unknown protocol status");

    n = rec(b, SWS_FCGI_STDOUT, "", 0, 1, 0);
    n += rec(b + n, SWS_FCGI_STDOUT, "x", 1, 1, 0);
    ck_assert_str_eq(bad_one(b, n), "a record on a stream already closed");

    n = rec(b, SWS_FCGI_STDOUT, "", 0, 1, 0);
    n += end_request(b + n, 0, 0);
    n += rec(b + n, SWS_FCGI_STDOUT, "x", 1, 1, 0);
    ck_assert_str_eq(bad_one(b, n), "data after END_REQUEST");
}
END_TEST

START_TEST(parse_eof)
{
    sws_fcgi_parser_t p;
    sws_fcgi_piece_t  piece;
    u_char            b[64], *pos;
    size_t            n;

    sws_fcgi_parser_init(&p);
    ck_assert_str_eq(sws_fcgi_parse_eof(&p), "closed the connection before END_REQUEST");
    n = rec(b, SWS_FCGI_STDOUT, "abc", 3, 1, 2);
    pos = b;
    ck_assert_int_eq(sws_fcgi_parse(&p, &pos, b + 3, &piece), SWS_AGAIN);
    ck_assert_str_eq(sws_fcgi_parse_eof(&p), "closed the connection inside a record header");
    ck_assert_int_eq(sws_fcgi_parse(&p, &pos, b + n - 1, &piece), SWS_FCGI_DATA);
    ck_assert_int_eq(sws_fcgi_parse(&p, &pos, b + n - 1, &piece), SWS_AGAIN);
    ck_assert_str_eq(sws_fcgi_parse_eof(&p), "closed the connection inside a record");
    /* the padding byte still due, then END_REQUEST: complete */
    b[0] = 0;
    n = 1 + end_request(b + 1, 0, 0);
    pos = b;
    ck_assert_int_eq(sws_fcgi_parse(&p, &pos, b + n, &piece), SWS_FCGI_END);
    ck_assert_ptr_eq(pos, b + n);
    ck_assert_ptr_null(sws_fcgi_parse_eof(&p));
}
END_TEST

/* A decoder of name-value pairs, as a FastCGI server reads them. */
static size_t
read_len(const u_char **p)
{
    size_t n;

    if (**p < 128) {
        return *(*p)++;
    }
    n = ((size_t) ((*p)[0] & 0x7f) << 24) | ((size_t) (*p)[1] << 16) | ((size_t) (*p)[2] << 8)
        | (*p)[3];
    *p += 4;
    return n;
}

START_TEST(write_pairs_and_begin)
{
    static u_char  buf[400000], value[200000];
    const u_char  *p;
    u_char        *e;
    size_t         sizes[] = { 0, 1, 127, 128, 255, 65535, 65536, 200000 }, i, nl, vl;

    memset(value, 'v', sizeof(value));
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        e = sws_fcgi_write_pair(buf, (const u_char *) "NAME", 4, value, sizes[i]);
        ck_assert_uint_eq((size_t) (e - buf), sws_fcgi_pair_len(4, sizes[i]));
        p = buf;
        nl = read_len(&p);
        vl = read_len(&p);
        ck_assert_uint_eq(nl, 4);
        ck_assert_uint_eq(vl, sizes[i]);
        ck_assert(memcmp(p, "NAME", 4) == 0);
        ck_assert_ptr_eq(p + 4 + vl, e);
    }
    e = sws_fcgi_write_begin(buf, 1);
    ck_assert_uint_eq((size_t) (e - buf), 16);
    ck_assert(memcmp(buf, "\1\1\0\1\0\x08\0\0\0\1\1\0\0\0\0\0", 16) == 0);
    e = sws_fcgi_write_begin(buf, 0);
    ck_assert_uint_eq(buf[10], 0);
    e = sws_fcgi_write_header(buf, SWS_FCGI_STDIN, 65535, 0);
    ck_assert(memcmp(buf, "\1\5\0\1\xff\xff\0\0", 8) == 0);
}
END_TEST

static Suite *
fastcgi_suite(void)
{
    Suite *s = suite_create("fastcgi_record");
    TCase *tc = tcase_create("parse");

    tcase_add_test(tc, parse_every_step);
    tcase_add_test(tc, parse_cut_at_every_byte);
    tcase_add_test(tc, parse_refuses);
    tcase_add_test(tc, parse_eof);
    suite_add_tcase(s, tc);
    tc = tcase_create("write");
    tcase_add_test(tc, write_pairs_and_begin);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(fastcgi_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
