/*
 * The core's body transforms (src/http/sws_http_transform.c) driven by
 * hand: a coder that copies (or fails), a next filter that plays a client
 * taking its output at once or only when told. Checked: back-pressure (no
 * more input taken than the output buffers hold while the client waits),
 * the request's buffered mark (each transform its own bit), file input in
 * chunks, flush and end, an empty body, a coder's error.
 */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sws_test_request.h"
#include "sws_log_internal.h"

static sws_pool_t          *pool;
static sws_test_request_t   t;
static sws_http_request_t  *r;

/* What the "client" got, and whether it takes output at once. */
static u_char       got[1 << 20];
static size_t       ngot;
static int          slow, flushes, lasts;
static sws_chain_t *held;                 /* links to buffers not taken yet */

static void
setup(void)
{
    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);
    ck_assert_int_eq(sws_test_request_init(&t, pool), SWS_OK);
    r = &t.req;
    r->log = sws_log_stderr();
    ngot = 0;
    slow = flushes = lasts = 0;
    held = NULL;
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
}

/* Take the data of a buffer (the client sent it). */
static void
take(sws_buf_t *b)
{
    size_t  n = (size_t) (b->last - b->pos);

    ck_assert(ngot + n <= sizeof(got));
    memcpy(got + ngot, b->pos, n);
    ngot += n;
    b->pos = b->last;
}

static sws_int_t
next_filter(sws_http_request_t *rr, sws_chain_t *in)
{
    sws_chain_t  *cl;

    (void) rr;
    for (; in; in = in->next) {
        flushes += in->buf->flush;
        lasts += in->buf->last_buf;
        if (slow) {
            cl = sws_alloc_chain_link(pool);
            cl->buf = in->buf;
            cl->next = held;
            held = cl;
        } else {
            take(in->buf);
        }
    }
    return held ? SWS_AGAIN : SWS_OK;
}

/* The slow client finally takes all it was given, oldest first. */
static void
take_held(void)
{
    sws_chain_t  *cl, *rev = NULL, *next;

    for (cl = held; cl; cl = next) {
        next = cl->next;
        cl->next = rev;
        rev = cl;
    }
    for (cl = rev; cl; cl = cl->next) {
        take(cl->buf);
    }
    held = NULL;
}

static int  fail_at = -1;

/* A coder that copies, failing when asked to. */
static sws_int_t
copy(sws_http_request_t *rr, void *data, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    size_t  n;

    (void) rr; (void) data; (void) mode;
    if (*in == NULL) {
        return SWS_OK;
    }
    n = (size_t) (in_end - *in);
    if (n > (size_t) (out_end - *out)) {
        n = (size_t) (out_end - *out);
    }
    if (fail_at >= 0 && ngot + n >= (size_t) fail_at) {
        return SWS_ERROR;
    }
    memcpy(*out, *in, n);
    *in += n;
    *out += n;
    return *in < in_end ? SWS_AGAIN : SWS_OK;
}

static sws_chain_t *
mem_chain(const char *text, int last)
{
    sws_buf_t    *b = sws_create_temp_buf(pool, strlen(text) + 1);
    sws_chain_t  *cl = sws_alloc_chain_link(pool);

    b->last = sws_cpymem(b->last, text, strlen(text));
    b->last_buf = last;
    cl->buf = b;
    cl->next = NULL;
    return cl;
}

START_TEST(passes_everything_with_a_fast_client)
{
    sws_http_transform_t  *tr = sws_http_transform_create(r, 2, 4, copy, NULL);
    sws_chain_t           *a = mem_chain("hello, ", 0), *b = mem_chain("world", 1);

    ck_assert_ptr_nonnull(tr);
    ck_assert_int_eq(sws_http_transform_filter(r, tr, a, next_filter), SWS_OK);
    ck_assert_int_eq(sws_http_transform_filter(r, tr, b, next_filter), SWS_OK);
    ck_assert_int_eq((int) ngot, 12);
    ck_assert_int_eq(memcmp(got, "hello, world", 12), 0);
    ck_assert_int_eq(lasts, 1);
    ck_assert_int_eq(r->filter_buffered, 0);
    /* done: what follows passes as it is */
    ck_assert_int_eq(sws_http_transform_filter(r, tr, NULL, next_filter), SWS_OK);
}
END_TEST

START_TEST(a_slow_client_holds_the_input_back)
{
    sws_http_transform_t  *tr = sws_http_transform_create(r, 2, 4, copy, NULL);
    sws_chain_t           *in = mem_chain("0123456789abcdefghij", 1);
    sws_buf_t             *b = in->buf;
    int                    rounds = 0;

    slow = 1;
    ck_assert_int_eq(sws_http_transform_filter(r, tr, in, next_filter), SWS_AGAIN);
    /* two buffers of 4: 8 bytes taken, the rest left to the producer */
    ck_assert_int_eq((int) (b->last - b->pos), 12);
    ck_assert(r->filter_buffered != 0);
    ck_assert_int_eq((int) ngot, 0);
    while (r->filter_buffered && rounds++ < 20) {
        take_held();                    /* the client took it: go on */
        sws_http_transform_filter(r, tr, NULL, next_filter);
    }
    take_held();
    ck_assert_int_eq(r->filter_buffered, 0);
    ck_assert_int_eq((int) ngot, 20);
    ck_assert_int_eq(memcmp(got, "0123456789abcdefghij", 20), 0);
    ck_assert_int_eq(lasts, 1);
    ck_assert_int_eq((int) (b->last - b->pos), 0);
}
END_TEST

START_TEST(each_transform_has_its_own_bit)
{
    sws_http_transform_t  *t1 = sws_http_transform_create(r, 1, 4, copy, NULL);
    sws_http_transform_t  *t2 = sws_http_transform_create(r, 1, 4, copy, NULL);

    slow = 1;
    sws_http_set_buffered(r, 1);
    ck_assert_int_eq(sws_http_transform_filter(r, t1, mem_chain("0123456789", 0), next_filter),
                     SWS_AGAIN);
    /* the second one holds nothing: it clears its bit only */
    slow = 0;
    ck_assert_int_eq(sws_http_transform_filter(r, t2, mem_chain("ab", 0), next_filter), SWS_OK);
    ck_assert(r->filter_buffered != 0);
    sws_http_set_buffered(r, 0);
    ck_assert(sws_http_buffered(r));    /* t1 still holds */
    take_held();
    while (r->filter_buffered) {
        sws_http_transform_filter(r, t1, NULL, next_filter);
    }
    ck_assert(!sws_http_buffered(r));
}
END_TEST

START_TEST(file_input_in_chunks_flush_and_end)
{
    char                   path[] = "/tmp/sws_transform_XXXXXX";
    int                    fd = mkstemp(path);
    static u_char          data[100000];
    sws_http_transform_t  *tr = sws_http_transform_create(r, 4, 1000, copy, NULL);
    sws_buf_t             *b = sws_calloc_buf(pool), *f = sws_calloc_buf(pool);
    sws_chain_t            c1, c2;
    size_t                 i;

    ck_assert_int_ge(fd, 0);
    unlink(path);
    for (i = 0; i < sizeof(data); i++) {
        data[i] = (u_char) (i * 7 + i / 300);
    }
    ck_assert_int_eq((int) write(fd, data, sizeof(data)), (int) sizeof(data));
    b->in_file = 1;
    b->fd = fd;
    b->file_pos = 0;
    b->file_last = sizeof(data);
    f->flush = 1;
    f->sync = 1;
    c1.buf = b;
    c1.next = &c2;
    c2.buf = f;
    c2.next = NULL;
    ck_assert_int_eq(sws_http_transform_filter(r, tr, &c1, next_filter), SWS_OK);
    ck_assert_int_eq((int) ngot, (int) sizeof(data));
    ck_assert_int_eq(memcmp(got, data, sizeof(data)), 0);
    ck_assert_int_ge(flushes, 1);
    ck_assert_int_eq(lasts, 0);
    /* an empty end still ends the response */
    ck_assert_int_eq(sws_http_transform_filter(r, tr, mem_chain("", 1), next_filter), SWS_OK);
    ck_assert_int_eq(lasts, 1);
    close(fd);
}
END_TEST

START_TEST(an_empty_body_ends)
{
    sws_http_transform_t  *tr = sws_http_transform_create(r, 1, 16, copy, NULL);

    ck_assert_int_eq(sws_http_transform_filter(r, tr, mem_chain("", 1), next_filter), SWS_OK);
    ck_assert_int_eq(lasts, 1);
    ck_assert_int_eq((int) ngot, 0);
}
END_TEST

START_TEST(a_coder_error_is_an_error)
{
    sws_http_transform_t  *tr = sws_http_transform_create(r, 1, 4, copy, NULL);

    fail_at = 6;
    ck_assert_int_eq(sws_http_transform_filter(r, tr, mem_chain("0123456789", 1), next_filter),
                     SWS_ERROR);
    fail_at = -1;
    ck_assert_int_eq(r->filter_buffered, 0);
    ck_assert_ptr_null(sws_http_transform_create(r, 0, 4, copy, NULL));
    ck_assert_ptr_null(sws_http_transform_create(r, 1, 4, NULL, NULL));
}
END_TEST

static Suite *
transform_suite(void)
{
    Suite *s = suite_create("http_transform");
    TCase *tc = tcase_create("transform");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, passes_everything_with_a_fast_client);
    tcase_add_test(tc, a_slow_client_holds_the_input_back);
    tcase_add_test(tc, each_transform_has_its_own_bit);
    tcase_add_test(tc, file_input_in_chunks_flush_and_end);
    tcase_add_test(tc, an_empty_body_ends);
    tcase_add_test(tc, a_coder_error_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(transform_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
