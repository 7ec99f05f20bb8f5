/*
 * The upstream framework's pure parts: choosing a server (round robin and
 * its weights, least_conn, hash and consistent hash, random, backup,
 * down), passive health, the HTTP/1 status line parser, addresses that
 * need no resolver, the HTTP/1 body framings, and shared memory zones (reuse across configurations,
 * the lock across processes).
 */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "sws_http_upstream.h"
#include "sws_log_internal.h"

static struct sws_log_s    tlog;
static sws_pool_t         *pool;

static void
setup(void)
{
    tlog.fd = open("/dev/null", O_WRONLY);
    tlog.level = SWS_LOG_DEBUG;
    pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(pool);
    sws_time_update();
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
    close(tlog.fd);
}

/* ---- a group of servers and a request, built by hand ---- */

typedef struct {
    sws_http_upstream_srv_t     us;
    sws_http_upstream_peer_t    peers[8];
    sws_ups_shared_t            sh[8];
    struct sws_http_request_s   r;
    sws_http_upstream_t         u;
    uint64_t                    tried[1];
} group_t;

static group_t *
group(sws_uint_t n, const sws_int_t *weights, sws_uint_t nbackup)
{
    group_t    *g = sws_pcalloc(pool, sizeof(group_t));
    sws_uint_t  i;
    char        name[32];

    ck_assert_ptr_nonnull(g);
    g->us.peers = g->peers;
    g->us.npeers = g->us.nall = g->us.nused = g->us.nlive = n;     /* no run-time slots */
    g->us.nprimary = n - nbackup;
    g->us.name.data = (u_char *) "g";
    g->us.name.len = 1;
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "10.0.0.%u:80", (unsigned) i);
        sws_str_from_cstr(pool, &g->peers[i].name, name);
        g->peers[i].server = g->peers[i].name;
        g->peers[i].weight = weights ? weights[i] : 1;
        g->peers[i].effective_weight = g->peers[i].weight;
        g->peers[i].max_fails = 1;
        g->peers[i].fail_timeout = 10000;
        g->peers[i].index = i;
        g->peers[i].us = &g->us;
        g->peers[i].sh = &g->sh[i];
        g->peers[i].backup = i >= n - nbackup;
    }
    g->r.pool = pool;
    g->r.log = &tlog;
    g->u.r = &g->r;
    g->u.us = &g->us;
    g->u.tried = g->tried;
    return g;
}

/* Choose for a new request: a fresh tried set; the connection ends at once. */
static sws_int_t
pick(group_t *g)
{
    sws_http_upstream_peer_t *p;

    g->tried[0] = 0;
    p = sws_ups_get_peer(&g->u);
    if (p == NULL) {
        return -1;
    }
    sws_ups_peer_done(p, 0, &tlog);
    return (sws_int_t) p->index;
}

START_TEST(rr_smooth_weights)
{
    static const sws_int_t w[] = { 5, 1, 1 };
    group_t   *g = group(3, w, 0);
    char       seq[8];
    sws_uint_t i;

    /* nginx's smooth weighted round robin: a a b a c a a */
    for (i = 0; i < 7; i++) {
        seq[i] = (char) ('a' + pick(g));
    }
    seq[7] = '\0';
    ck_assert_str_eq(seq, "aabacaa");
    for (i = 0; i < 7; i++) {
        seq[i] = (char) ('a' + pick(g));
    }
    ck_assert_str_eq(seq, "aabacaa");
}
END_TEST

START_TEST(rr_skips_tried_down_and_failed)
{
    group_t                  *g = group(3, NULL, 0);
    sws_http_upstream_peer_t *p;
    sws_uint_t                i;

    g->peers[1].down = 1;
    for (i = 0; i < 10; i++) {
        ck_assert_int_ne(pick(g), 1);
    }
    /* within one request, each server at most once */
    g->tried[0] = 0;
    p = sws_ups_get_peer(&g->u);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(sws_ups_get_peer(&g->u));
    ck_assert_ptr_null(sws_ups_get_peer(&g->u));      /* 0 and 2 tried, 1 down */

    /* a failure (max_fails 1) takes 0 out for fail_timeout */
    g->peers[1].down = 0;
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    ck_assert(!sws_ups_peer_available(&g->peers[0], sws_current_msec()));
    ck_assert_str_eq(sws_ups_peer_state(&g->peers[0]), "unavail");
    for (i = 0; i < 10; i++) {
        ck_assert_int_ne(pick(g), 0);
    }
    /* after it, it is tried again */
    ck_assert(sws_ups_peer_available(&g->peers[0], sws_current_msec() + 10001));

    /* an active check's verdict */
    g->sh[2].unhealthy = 1;
    ck_assert_str_eq(sws_ups_peer_state(&g->peers[2]), "unhealthy");
    for (i = 0; i < 10; i++) {
        ck_assert_int_eq(pick(g), 1);
    }
}
END_TEST

START_TEST(passive_window)
{
    group_t *g = group(2, NULL, 0);

    g->peers[0].max_fails = 3;
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    ck_assert(sws_ups_peer_available(&g->peers[0], sws_current_msec()));
    /* a success inside the window does not forgive */
    sws_ups_peer_done(&g->peers[0], 0, &tlog);
    ck_assert_uint_eq(g->sh[0].fails, 2);
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    ck_assert(!sws_ups_peer_available(&g->peers[0], sws_current_msec()));
    /* failures long ago start a new window */
    g->sh[0].fails = 2;
    g->sh[0].down_until = 0;
    g->sh[0].fail_start = sws_current_msec() - 20000;
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    ck_assert_uint_eq(g->sh[0].fails, 1);
    ck_assert(sws_ups_peer_available(&g->peers[0], sws_current_msec()));
    /* max_fails=0: never counted */
    g->peers[1].max_fails = 0;
    sws_ups_peer_done(&g->peers[1], 1, &tlog);
    ck_assert_uint_eq(g->sh[1].fails, 0);
}
END_TEST

START_TEST(lone_server_never_out)
{
    group_t *g = group(1, NULL, 0);

    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    sws_ups_peer_done(&g->peers[0], 1, &tlog);
    ck_assert_int_eq(pick(g), 0);
}
END_TEST

START_TEST(backup_only_when_primaries_out)
{
    group_t    *g = group(3, NULL, 1);
    sws_uint_t  i;

    for (i = 0; i < 10; i++) {
        ck_assert_int_lt(pick(g), 2);
    }
    g->peers[0].down = 1;
    g->sh[1].unhealthy = 1;
    for (i = 0; i < 4; i++) {
        ck_assert_int_eq(pick(g), 2);
    }
}
END_TEST

START_TEST(least_conn)
{
    group_t                  *g = group(3, NULL, 0);
    sws_http_upstream_peer_t *busy;

    g->us.method = SWS_UPS_LEAST_CONN;
    g->tried[0] = 0;
    busy = sws_ups_get_peer(&g->u);            /* stays connected */
    ck_assert_ptr_nonnull(busy);
    for (int i = 0; i < 6; i++) {
        ck_assert_int_ne(pick(g), (sws_int_t) busy->index);
    }
    /* weight counts: 2 connections on a weight-4 server beat 1 on weight 1 */
    g->peers[0].weight = 4;
    g->peers[0].conns = 2;
    g->peers[1].conns = 1;
    g->peers[2].conns = 1;
    busy->conns = busy->index == 0 ? 2 : 1;
    ck_assert_int_eq(pick(g), 0);
}
END_TEST

static sws_int_t
pick_key(group_t *g, const char *args)
{
    g->r.args.data = (u_char *) args;
    g->r.args.len = strlen(args);
    return pick(g);
}

START_TEST(hash_and_consistent)
{
    static const sws_str_t   key = sws_string("$arg_k");
    group_t                 *g = group(4, NULL, 0);
    const char              *err;
    sws_int_t                before[64], after;
    char                     args[16];
    sws_uint_t               i, moved = 0, used = 0;
    struct sws_conf_s        cf;

    g->us.method = SWS_UPS_HASH;
    g->us.hash_key = sws_http_format_compile(pool, &key, SWS_HTTP_ESCAPE_NONE, &err);
    ck_assert_ptr_nonnull(g->us.hash_key);
    for (i = 0; i < 64; i++) {
        snprintf(args, sizeof(args), "k=%u", (unsigned) i);
        before[i] = pick_key(g, args);
        ck_assert_int_eq(pick_key(g, args), before[i]);      /* stable */
        used |= 1u << before[i];
    }
    ck_assert_uint_eq(used, 0xf);

    sws_memzero(&cf, sizeof(cf));
    cf.pool = pool;
    cf.log = &tlog;
    g->us.consistent = 1;
    ck_assert_int_eq(sws_ups_balancer_init(&cf, &g->us), SWS_OK);
    ck_assert_uint_eq(g->us.nring, 4 * 160);
    for (i = 0; i < 64; i++) {
        snprintf(args, sizeof(args), "k=%u", (unsigned) i);
        before[i] = pick_key(g, args);
    }
    /* one server out: only its keys move */
    g->peers[2].down = 1;
    for (i = 0; i < 64; i++) {
        snprintf(args, sizeof(args), "k=%u", (unsigned) i);
        after = pick_key(g, args);
        ck_assert_int_ne(after, 2);
        if (before[i] != 2) {
            ck_assert_int_eq(after, before[i]);
        } else {
            moved++;
        }
    }
    ck_assert_uint_gt(moved, 0);
}
END_TEST

START_TEST(random_weights)
{
    static const sws_int_t w[] = { 3, 1 };
    group_t   *g = group(2, w, 0);
    sws_uint_t n[2] = { 0, 0 }, i;

    g->us.method = SWS_UPS_RANDOM;
    for (i = 0; i < 4000; i++) {
        n[pick(g)]++;
    }
    ck_assert_uint_gt(n[0], 2700);
    ck_assert_uint_lt(n[0], 3300);
    g->us.random_two = 1;
    g->peers[0].conns = 5;
    for (i = 0; i < 50; i++) {
        ck_assert_int_eq(pick(g), 1);                 /* of the two, fewer connections */
    }
}
END_TEST

/* ---- status lines ---- */

START_TEST(status_lines)
{
    static const struct { const char *line; sws_int_t ok; sws_uint_t status, version; } t[] = {
        { "HTTP/1.1 200 OK", 1, 200, 1001 },
        { "HTTP/1.0 404 Not Found", 1, 404, 1000 },
        { "HTTP/1.1 599", 1, 599, 1001 },
        { "HTTP/1.1 204 ", 1, 204, 1001 },
        { "HTTP/1.9 101 Switching Protocols", 1, 101, 1001 },
        { "HTTP/1.1 200 \tweird\treason", 1, 200, 1001 },
        { "HTTP/1.1 20 OK", 0, 0, 0 },
        { "HTTP/1.1 2000 OK", 0, 0, 0 },
        { "HTTP/1.1 099 OK", 0, 0, 0 },
        { "HTTP/2.0 200 OK", 0, 0, 0 },
        { "HTTP/1.1  200 OK", 0, 0, 0 },
        { "HTTP/1.1 200 O\001K", 0, 0, 0 },
        { "HTTP/x 200", 0, 0, 0 },
        { "ICY 200 OK", 0, 0, 0 },
        { "", 0, 0, 0 },
    };
    sws_uint_t i, status, version;

    for (i = 0; i < sws_nelems(t); i++) {
        const u_char *p = (const u_char *) t[i].line;
        sws_int_t rc = sws_http_parse_status_line(p, p + strlen(t[i].line), &status, &version);
        ck_assert_msg((rc == SWS_OK) == t[i].ok, "%s", t[i].line);
        if (t[i].ok) {
            ck_assert_uint_eq(status, t[i].status);
            ck_assert_uint_eq(version, t[i].version);
        }
    }
}
END_TEST

/* ---- addresses that need no resolver (proxy_pass with variables) ---- */

/* ---- HTTP/1 to the servers: the body's framings (sws_http_upstream_h1*.c) ---- */

/* Feed text to the input filter as the framework does (decoded in place). */
static sws_int_t
h1_feed(group_t *g, u_char *buf, const char *text, int eof, sws_str_t *out, size_t *left)
{
    sws_http_upstream_input_t in;
    size_t                    n = strlen(text);
    sws_int_t                 rc;

    memcpy(buf, text, n);
    in.pos = in.out = buf;
    in.last = buf + n;
    in.eof = eof;
    rc = sws_http_upstream_h1_input_filter(&g->r, NULL, &in);
    out->data = buf;
    out->len = (size_t) (in.out - buf);
    *left = (size_t) (in.last - in.pos);
    return rc;
}

START_TEST(h1_body_framings)
{
    group_t      *g = group(1, NULL, 0);
    sws_ups_h1_t *st = sws_pcalloc(pool, sizeof(sws_ups_h1_t));
    u_char        buf[128], frame[64];
    sws_str_t     out;
    size_t        left;
    sws_buf_t     b;

    ck_assert_ptr_nonnull(st);
    g->r.upstream = &g->u;
    g->u.h1 = st;

    /* Content-Length: what is past it is not body (the connection is not reused). */
    st->body = SWS_UPS_H1_BODY_LENGTH;
    st->rest = 10;
    ck_assert_int_eq(h1_feed(g, buf, "0123", 0, &out, &left), SWS_OK);
    ck_assert(out.len == 4 && memcmp(out.data, "0123", 4) == 0);
    ck_assert_int_eq(h1_feed(g, buf, "456789EXTRA", 0, &out, &left), SWS_DONE);
    ck_assert(out.len == 6 && left == 5);
    st->rest = 10;
    ck_assert_int_eq(h1_feed(g, buf, "0123", 1, &out, &left), SWS_UPSTREAM_INVALID);  /* cut */

    /* chunked, split inside a chunk and inside a size line */
    sws_memzero(&st->chunked, sizeof(st->chunked));
    st->body = SWS_UPS_H1_BODY_CHUNKED;
    ck_assert_int_eq(h1_feed(g, buf, "5\r\nhel", 0, &out, &left), SWS_OK);
    ck_assert(out.len == 3 && memcmp(out.data, "hel", 3) == 0);
    ck_assert_int_eq(h1_feed(g, buf, "lo\r\n1", 0, &out, &left), SWS_OK);
    ck_assert(out.len == 2 && memcmp(out.data, "lo", 2) == 0);
    ck_assert_int_eq(h1_feed(g, buf, "0\r\nabcdefghijklmnop\r\n0\r\n\r\n", 0, &out, &left),
                     SWS_DONE);
    ck_assert(out.len == 16 && memcmp(out.data, "abcdefghijklmnop", 16) == 0 && left == 0);
    sws_memzero(&st->chunked, sizeof(st->chunked));
    ck_assert_int_eq(h1_feed(g, buf, "5\r\nhello\r\n", 1, &out, &left), SWS_UPSTREAM_INVALID);
    sws_memzero(&st->chunked, sizeof(st->chunked));
    ck_assert_int_eq(h1_feed(g, buf, "zz\r\n", 0, &out, &left), SWS_UPSTREAM_INVALID);

    /* until the close */
    st->body = SWS_UPS_H1_BODY_CLOSE;
    ck_assert_int_eq(h1_feed(g, buf, "abc", 0, &out, &left), SWS_OK);
    ck_assert_int_eq(h1_feed(g, buf, "", 1, &out, &left), SWS_DONE);

    /* none (HEAD, 204, 304): done at once */
    st->body = SWS_UPS_H1_BODY_NONE;
    ck_assert_int_eq(h1_feed(g, buf, "", 0, &out, &left), SWS_DONE);

    /* a streamed request body of unknown length goes chunked */
    st->chunked_body = 1;
    sws_memzero(&b, sizeof(b));
    b.start = frame;
    b.pos = frame + SWS_UPSTREAM_H1_FRAME_HEAD;
    b.last = sws_cpymem(b.pos, "abc", 3);
    sws_http_upstream_h1_frame_body(&g->r, NULL, &b, 0);
    ck_assert(b.last - b.pos == 8 && memcmp(b.pos, "3\r\nabc\r\n", 8) == 0);
    b.pos = b.last = frame + SWS_UPSTREAM_H1_FRAME_HEAD;
    sws_http_upstream_h1_frame_body(&g->r, NULL, &b, 1);
    ck_assert(b.last - b.pos == 5 && memcmp(b.pos, "0\r\n\r\n", 5) == 0);
}
END_TEST

START_TEST(literal_addresses)
{
    static const struct {
        const char *text;
        sws_int_t   rc;            /* 1 literal, 0 a name, -1 malformed */
        const char *name;          /* sws_ups_addr_text of the result */
        const char *host;
        const char *err;
    } t[] = {
        { "127.0.0.1", 1, "127.0.0.1:80", "127.0.0.1", NULL },
        { "10.1.2.3:8080", 1, "10.1.2.3:8080", "10.1.2.3", NULL },
        { "[::1]", 1, "[::1]:80", "[::1]", NULL },
        { "[2001:db8::5]:443", 1, "[2001:db8::5]:443", "[2001:db8::5]", NULL },
        { "unix:/tmp/app.sock", 1, "unix:/tmp/app.sock", "localhost", NULL },
        { "localhost", 0, NULL, NULL, NULL },
        { "backend:8080", 0, NULL, NULL, NULL },
        { "127.1", 0, NULL, NULL, NULL },              /* not dotted-quad: a name */
        { "example.com", 0, NULL, NULL, NULL },
        { "", 0, NULL, NULL, NULL },
        { "127.0.0.1:0", -1, NULL, NULL, "invalid port" },
        { "127.0.0.1:65536", -1, NULL, NULL, "invalid port" },
        { "127.0.0.1:", -1, NULL, NULL, "invalid port" },
        { "127.0.0.1:8x", -1, NULL, NULL, "invalid port" },
        { "[::1", -1, NULL, NULL, "invalid IPv6 address" },
        { "[::g]", -1, NULL, NULL, "invalid IPv6 address" },
        { "[::1]8080", -1, NULL, NULL, "invalid port" },
        { "[::1]:", -1, NULL, NULL, "invalid port" },
        { "unix:relative", -1, NULL, NULL, "invalid unix socket path" },
    };
    struct sockaddr_storage  sa;
    socklen_t                len;
    sws_str_t                text, host, name;
    const char              *err;
    sws_uint_t               i;
    sws_int_t                rc;

    for (i = 0; i < sws_nelems(t); i++) {
        text.data = (u_char *) t[i].text;
        text.len = strlen(t[i].text);
        err = NULL;
        rc = sws_ups_parse_literal(&text, 80, &sa, &len, &host, &err);
        ck_assert_msg(rc == t[i].rc, "%s: %ld", t[i].text, (long) rc);
        if (rc == 1) {
            ck_assert_int_eq(sws_ups_addr_text(pool, &sa, &name), SWS_OK);
            ck_assert_msg(name.len == strlen(t[i].name)
                          && memcmp(name.data, t[i].name, name.len) == 0, "%s -> %.*s",
                          t[i].text, (int) name.len, name.data);
            ck_assert_msg(host.len == strlen(t[i].host)
                          && memcmp(host.data, t[i].host, host.len) == 0, "%s", t[i].text);
        } else if (rc < 0) {
            ck_assert_str_eq(err, t[i].err);
        }
    }
}
END_TEST

/* ---- shared memory zones ---- */

static int init_calls;
static void *init_old;

static sws_int_t
zinit(sws_shm_zone_t *zone, void *old)
{
    init_calls++;
    init_old = old;
    if (old == NULL) {
        zone->data = zone->addr;
    }
    return SWS_OK;
}

static void
conf_for(struct sws_conf_s *cf, sws_cycle_t *cycle, sws_pool_t *p)
{
    sws_memzero(cf, sizeof(*cf));
    cf->cycle = cycle;
    cf->pool = p;
    cf->log = &tlog;
}

START_TEST(shm_reuse_across_configurations)
{
    static const sws_str_t  name = sws_string("test-zone");
    struct sws_cycle_s      c1, c2, c3;
    struct sws_conf_s       cf1, cf2, cf3;
    sws_pool_t             *p1 = sws_pool_create(4096, &tlog), *p2 = sws_pool_create(4096, &tlog);
    sws_pool_t             *p3 = sws_pool_create(4096, &tlog);
    sws_shm_zone_t         *z1, *z2, *z3;
    int                     tag;

    conf_for(&cf1, &c1, p1);
    conf_for(&cf2, &c2, p2);
    conf_for(&cf3, &c3, p3);
    init_calls = 0;

    z1 = sws_shm_zone_add(&cf1, &name, 1000, zinit, &tag);
    ck_assert_ptr_nonnull(z1);
    ck_assert_int_eq(init_calls, 1);
    ck_assert_ptr_null(init_old);
    ck_assert_uint_eq((uintptr_t) z1->addr % 64, 0);
    ck_assert_uint_eq(z1->addr[999], 0);
    memcpy(z1->addr, "state", 6);
    /* the same configuration asks again: the same zone, no new init */
    ck_assert_ptr_eq(sws_shm_zone_add(&cf1, &name, 1000, zinit, &tag), z1);
    ck_assert_ptr_null(sws_shm_zone_add(&cf1, &name, 2000, zinit, &tag));
    ck_assert_int_eq(init_calls, 1);

    /* a reload with the same name and size: the same memory */
    z2 = sws_shm_zone_add(&cf2, &name, 1000, zinit, &tag);
    ck_assert_ptr_nonnull(z2);
    ck_assert_int_eq(init_calls, 2);
    ck_assert_ptr_eq(init_old, z1->data);
    ck_assert_ptr_eq(z2->addr, z1->addr);
    sws_pool_destroy(p1);                   /* the old configuration goes */
    ck_assert_str_eq((char *) z2->addr, "state");

    /* another size: new memory */
    z3 = sws_shm_zone_add(&cf3, &name, 4000, zinit, &tag);
    ck_assert_ptr_nonnull(z3);
    ck_assert_ptr_null(init_old);
    ck_assert_uint_eq(z3->addr[0], 0);
    ck_assert_str_eq((char *) z2->addr, "state");
    sws_pool_destroy(p2);
    sws_pool_destroy(p3);
}
END_TEST

START_TEST(shm_lock_across_processes)
{
    static const sws_str_t  name = sws_string("lock-zone");
    struct sws_cycle_s      c;
    struct sws_conf_s       cf;
    sws_pool_t             *p = sws_pool_create(4096, &tlog);
    sws_shm_zone_t         *z;
    volatile uint64_t      *counter;
    pid_t                   pid;
    int                     i, st;

    conf_for(&cf, &c, p);
    z = sws_shm_zone_add(&cf, &name, 64, NULL, NULL);
    ck_assert_ptr_nonnull(z);
    counter = (volatile uint64_t *) z->addr;
    pid = fork();
    ck_assert_int_ge(pid, 0);
    for (i = 0; i < 20000; i++) {
        sws_shm_lock(z);
        *counter = *counter + 1;           /* not atomic: the lock makes it so */
        sws_shm_unlock(z);
    }
    if (pid == 0) {
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_uint_eq(*counter, 40000);

    /* a process that dies holding the lock does not block the others */
    pid = fork();
    if (pid == 0) {
        sws_shm_lock(z);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    sws_shm_lock(z);
    sws_shm_unlock(z);
    sws_pool_destroy(p);
}
END_TEST

static Suite *
upstream_suite(void)
{
    Suite *s = suite_create("upstream");
    TCase *tc = tcase_create("balance");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rr_smooth_weights);
    tcase_add_test(tc, rr_skips_tried_down_and_failed);
    tcase_add_test(tc, passive_window);
    tcase_add_test(tc, lone_server_never_out);
    tcase_add_test(tc, backup_only_when_primaries_out);
    tcase_add_test(tc, least_conn);
    tcase_add_test(tc, hash_and_consistent);
    tcase_add_test(tc, random_weights);
    suite_add_tcase(s, tc);

    tc = tcase_create("http1");
    tcase_add_test(tc, status_lines);
    suite_add_tcase(s, tc);

    tc = tcase_create("http1_body");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, h1_body_framings);
    suite_add_tcase(s, tc);

    tc = tcase_create("addresses");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, literal_addresses);
    suite_add_tcase(s, tc);

    tc = tcase_create("shm");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, shm_reuse_across_configurations);
    tcase_add_test(tc, shm_lock_across_processes);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(upstream_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
