/*
 * The python bridge's framing (modules/python/sws_python_bridge_frame.c,
 * standalone: it is compiled into this test): frames written here are read
 * back whole and cut at every byte with the same pieces; each side accepts
 * its own frames only, with their flags and limits; REQUEST and RESPONSE
 * payloads decode to what was written, and each malformed one is refused.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../modules/python/sws_python_bridge_frame.c"

#define CHECK(c)  do { if (!(c)) ck_abort_msg("failed: %s", #c); } while (0)

/* A REQUEST payload at p: POST /a b (raw /a%20b?x=1), two fields. */
static size_t
request(unsigned char *p, unsigned nfields_claimed)
{
    unsigned char *e = p;

    *e++ = 1;
    *e++ = 1;
    *e++ = SWS_PYB_HTTPS;
    *e++ = 0;
    e = sws_pyb_put16(e, 40000);
    e = sws_pyb_put16(e, 443);
    e = sws_pyb_put64(e, 5);
    e = sws_pyb_put16(e, nfields_claimed);
    e = sws_pyb_put16(e, 0);
    e = sws_pyb_put_str(e, "POST", 4);
    e = sws_pyb_put_str(e, "/a b", 4);
    e = sws_pyb_put_str(e, "/a%20b?x=1", 10);
    e = sws_pyb_put_str(e, "x=1", 3);
    e = sws_pyb_put_str(e, "10.0.0.1", 8);
    e = sws_pyb_put_str(e, "10.0.0.2", 8);
    e = sws_pyb_put_str(e, "example.org", 11);
    e = sws_pyb_put_str(e, "host", 4);
    e = sws_pyb_put_str(e, "example.org", 11);
    e = sws_pyb_put_str(e, "x-empty", 7);
    e = sws_pyb_put_str(e, "", 0);
    return (size_t) (e - p);
}

static int
str_is(const sws_pyb_str_t *s, const char *text)
{
    return s->len == strlen(text) && memcmp(s->data, text, s->len) == 0;
}

START_TEST(request_decodes)
{
    unsigned char        buf[256];
    size_t               n = request(buf, 2);
    sws_pyb_request_t    rq;
    sws_pyb_str_t        name, value;
    const unsigned char *cur;

    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), 0);
    ck_assert(rq.major == 1 && rq.minor == 1 && rq.flags == SWS_PYB_HTTPS);
    ck_assert(rq.client_port == 40000 && rq.server_port == 443 && rq.content_length == 5);
    ck_assert(str_is(&rq.method, "POST") && str_is(&rq.path, "/a b"));
    ck_assert(str_is(&rq.raw, "/a%20b?x=1") && str_is(&rq.query, "x=1"));
    ck_assert(str_is(&rq.client, "10.0.0.1") && str_is(&rq.server, "10.0.0.2"));
    ck_assert(str_is(&rq.host, "example.org") && rq.nfields == 2);
    cur = rq.fields;
    ck_assert(sws_pyb_field_next(&cur, rq.end, &name, &value));
    ck_assert(str_is(&name, "host") && str_is(&value, "example.org"));
    ck_assert(sws_pyb_field_next(&cur, rq.end, &name, &value));
    ck_assert(str_is(&name, "x-empty") && value.len == 0);
    ck_assert(!sws_pyb_field_next(&cur, rq.end, &name, &value));
}
END_TEST

START_TEST(request_refusals)
{
    unsigned char      buf[256];
    size_t             n, i;
    sws_pyb_request_t  rq;

    /* a field count that does not match the fields */
    n = request(buf, 3);
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
    n = request(buf, 1);
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
    /* every cut short of the whole is refused */
    n = request(buf, 2);
    for (i = 0; i < n; i++) {
        CHECK(sws_pyb_request_decode(buf, i, &rq) == -1);
    }
    /* non-zero reserved bytes, unknown flags, an empty method */
    buf[3] = 1;
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
    buf[3] = 0;
    buf[2] = 0x80;
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
    buf[2] = 0;
    buf[19] = 1;
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
    buf[19] = 0;
    buf[20] = 0;
    buf[21] = 0;               /* the method's length: 0, its bytes then mis-read */
    ck_assert_int_eq(sws_pyb_request_decode(buf, n, &rq), -1);
}
END_TEST

START_TEST(response_decodes_and_refusals)
{
    unsigned char        buf[64], *e;
    sws_pyb_response_t   rs;
    sws_pyb_str_t        name, value;
    const unsigned char *cur;

    e = sws_pyb_put16(buf, 404);
    e = sws_pyb_put16(e, 1);
    e = sws_pyb_put_str(e, "Content-Type", 12);
    e = sws_pyb_put_str(e, "text/plain", 10);
    ck_assert_int_eq(sws_pyb_response_decode(buf, (size_t) (e - buf), &rs), 0);
    ck_assert(rs.status == 404 && rs.nfields == 1);
    cur = rs.fields;
    ck_assert(sws_pyb_field_next(&cur, rs.end, &name, &value));
    ck_assert(str_is(&name, "Content-Type") && str_is(&value, "text/plain"));
    /* bytes after the last field */
    ck_assert_int_eq(sws_pyb_response_decode(buf, (size_t) (e - buf) + 1, &rs), -1);
    /* a status out of range */
    sws_pyb_put16(buf, 99);
    ck_assert_int_eq(sws_pyb_response_decode(buf, (size_t) (e - buf), &rs), -1);
    sws_pyb_put16(buf, 1000);
    ck_assert_int_eq(sws_pyb_response_decode(buf, (size_t) (e - buf), &rs), -1);
    /* an empty field name */
    e = sws_pyb_put16(buf, 200);
    e = sws_pyb_put16(e, 1);
    e = sws_pyb_put_str(e, "", 0);
    e = sws_pyb_put_str(e, "v", 1);
    ck_assert_int_eq(sws_pyb_response_decode(buf, (size_t) (e - buf), &rs), -1);
}
END_TEST

/* Frames read from [p, p + n) in pieces of step bytes: the frames' types
 * and the payload bytes, appended to out; the last return code. */
static int
read_all(unsigned side, const unsigned char *p, size_t n, size_t step, char *types,
    unsigned char *out, size_t *outlen)
{
    sws_pyb_reader_t     rd;
    const unsigned char *pos, *piece;
    size_t               at, k, len;
    int                  rc = SWS_PYB_AGAIN;

    sws_pyb_reader_init(&rd, side);
    *outlen = 0;
    for (at = 0; at < n; at += len) {
        len = n - at < step ? n - at : step;
        pos = p + at;
        while ((rc = sws_pyb_read(&rd, &pos, p + at + len, &piece, &k)) != SWS_PYB_AGAIN) {
            if (rc == SWS_PYB_INVALID) {
                return rc;
            }
            if (rc == SWS_PYB_FRAME) {
                *types++ = (char) ('0' + rd.type % 16);
                *types = '\0';
            } else {
                memcpy(out + *outlen, piece, k);
                *outlen += k;
            }
        }
    }
    return rc;
}

START_TEST(frames_however_cut)
{
    unsigned char  buf[256], out[256], *e;
    char           types[32], types1[32];
    size_t         n, outlen, outlen1, step;

    e = sws_pyb_put_head(buf, SWS_PYB_RESPONSE, 0, 4);
    e = sws_pyb_put16(e, 200);
    e = sws_pyb_put16(e, 0);
    e = sws_pyb_put_head(e, SWS_PYB_DATA, 0, 5);
    memcpy(e, "hello", 5);
    e += 5;
    e = sws_pyb_put_head(e, SWS_PYB_DATA, 0, 0);
    e = sws_pyb_put_head(e, SWS_PYB_END, SWS_PYB_END_KEEP, 0);
    n = (size_t) (e - buf);
    ck_assert_int_eq(read_all(SWS_PYB_TO_SERVER, buf, n, n, types, out, &outlen),
                     SWS_PYB_AGAIN);
    ck_assert_str_eq(types, "1223");
    ck_assert(outlen == 9 && memcmp(out + 4, "hello", 5) == 0);
    for (step = 1; step < n; step++) {
        CHECK(read_all(SWS_PYB_TO_SERVER, buf, n, step, types1, out, &outlen1)
              == SWS_PYB_AGAIN);
        CHECK(strcmp(types, types1) == 0 && outlen1 == outlen);
    }
    /* the runner accepts none of them */
    ck_assert_int_eq(read_all(SWS_PYB_TO_RUNNER, buf, n, n, types, out, &outlen),
                     SWS_PYB_INVALID);
}
END_TEST

START_TEST(file_payloads)
{
    unsigned char  p[SWS_PYB_FILE_LEN + 1];
    uint64_t       offset, length;
    static const struct {
        uint64_t offset, length;
        int      ok;
    } cases[] = {
        { 0, 0, 0 },
        { 4096, 1048576, 0 },
        { ((uint64_t) 1 << 63) - 2, 1, 0 },
        { ((uint64_t) 1 << 63) - 1, 1, -1 },      /* the sum reaches 2^63 */
        { (uint64_t) 1 << 63, 0, -1 },
        { 0, (uint64_t) 1 << 63, -1 },
        { UINT64_MAX, UINT64_MAX, -1 },            /* the sum wraps */
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sws_pyb_put64(sws_pyb_put64(p, cases[i].offset), cases[i].length);
        ck_assert_msg(sws_pyb_file_decode(p, SWS_PYB_FILE_LEN, &offset, &length)
                      == cases[i].ok, "case %zu", i);
        if (cases[i].ok == 0) {
            ck_assert(offset == cases[i].offset && length == cases[i].length);
        }
    }
    ck_assert_int_eq(sws_pyb_file_decode(p, SWS_PYB_FILE_LEN - 1, &offset, &length), -1);
    ck_assert_int_eq(sws_pyb_file_decode(p, SWS_PYB_FILE_LEN + 1, &offset, &length), -1);
}
END_TEST

START_TEST(frame_headers_refused)
{
    unsigned char        h[SWS_PYB_HEAD_LEN];
    const unsigned char *pos, *piece;
    sws_pyb_reader_t     rd;
    size_t               k;
    static const struct {
        unsigned side, type, flags;
        uint32_t len;
        int      ok;
    } cases[] = {
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 0, SWS_PYB_REQUEST_FIXED, 1 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 3, SWS_PYB_REQUEST_FIXED, 1 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 7, SWS_PYB_REQUEST_FIXED, 1 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 8, SWS_PYB_REQUEST_FIXED, 0 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 0, SWS_PYB_REQUEST_FIXED - 1, 0 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_REQUEST, 0, SWS_PYB_MAX_HEAD + 1, 0 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_BODY, 0, 0xffffffff, 1 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_BODY_END, 0, 1, 0 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_DATA, 0, 1, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_RESPONSE, 0, SWS_PYB_MAX_HEAD, 1 },
        { SWS_PYB_TO_SERVER, SWS_PYB_RESPONSE, 1, 4, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_END, 1, 0, 1 },
        { SWS_PYB_TO_SERVER, SWS_PYB_END, 2, 0, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_END, 0, 3, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_BODY, 0, 3, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_FILE, 0, SWS_PYB_FILE_LEN, 1 },
        { SWS_PYB_TO_SERVER, SWS_PYB_FILE, 0, SWS_PYB_FILE_LEN - 1, 0 },
        { SWS_PYB_TO_SERVER, SWS_PYB_FILE, 1, SWS_PYB_FILE_LEN, 0 },
        { SWS_PYB_TO_RUNNER, SWS_PYB_FILE, 0, SWS_PYB_FILE_LEN, 0 },
        { SWS_PYB_TO_SERVER, 0, 0, 0, 0 },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sws_pyb_put_head(h, cases[i].type, cases[i].flags, cases[i].len);
        sws_pyb_reader_init(&rd, cases[i].side);
        pos = h;
        ck_assert_msg((sws_pyb_read(&rd, &pos, h + sizeof(h), &piece, &k) == SWS_PYB_FRAME)
                      == cases[i].ok, "case %zu", i);
    }
    /* non-zero reserved bytes */
    sws_pyb_put_head(h, SWS_PYB_DATA, 0, 1);
    h[3] = 1;
    sws_pyb_reader_init(&rd, SWS_PYB_TO_SERVER);
    pos = h;
    ck_assert_int_eq(sws_pyb_read(&rd, &pos, h + sizeof(h), &piece, &k), SWS_PYB_INVALID);
}
END_TEST

static Suite *
python_bridge_suite(void)
{
    Suite *s = suite_create("python_bridge_frame");
    TCase *tc = tcase_create("frames");

    tcase_add_test(tc, request_decodes);
    tcase_add_test(tc, request_refusals);
    tcase_add_test(tc, response_decodes_and_refusals);
    tcase_add_test(tc, frames_however_cut);
    tcase_add_test(tc, frame_headers_refused);
    tcase_add_test(tc, file_payloads);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(python_bridge_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
