/* Unit tests of the access log module: log_format and access_log parsing
 * and their errors, inheritance between levels, the default log, and
 * writing (direct, buffered, flush timer, exit_worker). The directives are
 * run through the module's command table with a hand-made parser state. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sws_http_core.h"
#include "sws_log_internal.h"
#include "sws_auto_config.h"

sws_module_t         sws_http_core_module = { .index = 0 };
extern sws_module_t  sws_http_log_module;

/* The phase engine is the core's: record what the module registers. */
static sws_http_handler_pt  log_handler;
static sws_http_phase_t     log_phase;
static int                  handlers_added;

static sws_uint_t         (*log_active)(const void *conf);

sws_int_t
sws_http_register_phase_handler(sws_conf_t *cf, const sws_http_phase_handler_t *h)
{
    (void) cf;
    log_phase = h->phase;
    log_handler = h->handler;
    log_active = h->active;
    handlers_added++;
    return SWS_OK;
}

static char                 base[64];    /* removed by main(), even after failures */
static char                 tmp[256];
static sws_pool_t          *pool;
static struct sws_cycle_s   cycle;
static struct sws_conf_s    cf;
static sws_conf_node_t      node;
static sws_http_conf_ctx_t  ctx;
static void                *main_confs[2];
static void                *http_locs[2];
static void                *srv_locs[2];
static void                *loc_locs[2];
static sws_http_core_srv_conf_t  cscf;
static void                *srv_confs[2];

static struct sws_http_request_s  req;
static struct sws_connection_s    conn;

static const sws_module_t *M = &sws_http_log_module;

static void
setup(void)
{
    char  path[300];

    snprintf(tmp, sizeof(tmp), "%s/t.XXXXXX", base);
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    snprintf(path, sizeof(path), "%s/logs", tmp);
    ck_assert_int_eq(mkdir(path, 0755), 0);

    sws_time_init();
    sws_time_update();
    sws_event_timer_init();
    handlers_added = 0;
    log_handler = NULL;

    pool = sws_pool_create(4096, NULL);
    ck_assert_ptr_nonnull(pool);

    memset(&cycle, 0, sizeof(cycle));
    cycle.pool = pool;
    snprintf(path, sizeof(path), "%s/error.log", tmp);
    cycle.log = sws_log_open(pool, path, SWS_LOG_DEBUG);
    ck_assert_ptr_nonnull(cycle.log);
    snprintf(path, sizeof(path), "%s/", tmp);
    ck_assert_int_eq(sws_str_from_cstr(pool, &cycle.prefix, path), SWS_OK);
    ck_assert_int_eq(sws_array_init(&cycle.open_logs, pool, 4, sizeof(sws_log_t *)), SWS_OK);

    memset(&cf, 0, sizeof(cf));
    cf.cycle = &cycle;
    cf.pool = pool;
    cf.temp_pool = pool;
    cf.log = cycle.log;
    cf.ctx = &ctx;
    cf.cmd_type = SWS_HTTP_MAIN_CONF;
    cf.node = &node;
    node.file = "test.conf";
    node.line = 7;

    sws_http_log_module.index = 1;
    memset(main_confs, 0, sizeof(main_confs));
    main_confs[1] = M->create_main_conf(&cf);
    http_locs[1] = M->create_loc_conf(&cf);
    srv_locs[1] = M->create_loc_conf(&cf);
    loc_locs[1] = M->create_loc_conf(&cf);
    ck_assert_ptr_nonnull(main_confs[1]);
    ck_assert_ptr_nonnull(http_locs[1]);
    ctx.main_conf = main_confs;
    ctx.srv_conf = NULL;
    ctx.loc_conf = http_locs;

    memset(&cscf, 0, sizeof(cscf));
    srv_confs[0] = &cscf;

    memset(&req, 0, sizeof(req));
    memset(&conn, 0, sizeof(conn));
    sws_str_set(&conn.addr_text, "127.0.0.1");
    req.connection = &conn;
    req.addr_text = conn.addr_text;
    req.pool = pool;
    req.main_conf = main_confs;
    req.srv_conf = srv_confs;
    req.loc_conf = loc_locs;
    sws_str_set(&req.method_name, "GET");
    sws_str_set(&req.request_line, "GET / HTTP/1.1");
    sws_str_set(&req.uri, "/");
    req.status = 200;
    req.http_version = SWS_HTTP_VERSION_11;
    req.last_modified = -1;
    req.out_content_length = -1;
    sws_array_init(&req.headers_in, pool, 4, sizeof(sws_http_header_t));
    sws_array_init(&req.headers_out, pool, 4, sizeof(sws_http_header_t));
}

static void
rm_tree(const char *dir)
{
    DIR            *d = opendir(dir);
    struct dirent  *e;
    char            path[600];

    if (d == NULL) {
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) {
            rm_tree(path);
        }
    }
    closedir(d);
    rmdir(dir);
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
    rm_tree(tmp);
}

/* Run directive NAME ARGS... (NULL-ended) on conf; returns the setter's
 * result. */
static char *
directive(void *conf, const char *name, ...)
{
    const sws_command_t  *cmd;
    sws_str_t            *a;
    const char           *s;
    va_list               ap;

    ck_assert_int_eq(sws_array_init(&node.args, pool, 8, sizeof(sws_str_t)), SWS_OK);
    a = sws_array_push(&node.args);
    a->data = (u_char *) name;
    a->len = strlen(name);
    va_start(ap, name);
    while ((s = va_arg(ap, const char *)) != NULL) {
        a = sws_array_push(&node.args);
        a->data = (u_char *) s;
        a->len = strlen(s);
    }
    va_end(ap);

    for (cmd = M->commands; cmd->name; cmd++) {
        if (strcmp(cmd->name, name) == 0) {
            return cmd->set(&cf, cmd, conf);
        }
    }
    ck_abort_msg("no directive %s", name);
    return SWS_CONF_ERROR;
}

static char *
file_text(const char *name)
{
    static char  buf[65536];
    char         path[300];
    int          fd;
    ssize_t      n;

    snprintf(path, sizeof(path), "%s/%s", tmp, name);
    fd = open(path, O_RDONLY);
    if (fd == -1) {
        return NULL;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int
count_lines(const char *name)
{
    char  *t = file_text(name);
    int    n = 0;

    ck_assert_ptr_nonnull(t);
    for ( ; *t; t++) {
        n += *t == '\n';
    }
    return n;
}

static char *
abs_path(const char *name)
{
    static char  path[4][300];
    static int   i;

    i = (i + 1) % 4;
    snprintf(path[i], sizeof(path[i]), "%s/%s", tmp, name);
    return path[i];
}

/* Merge http -> server -> location and finish the configuration. */
static void
finish_conf(void)
{
    ck_assert_ptr_null(M->merge_loc_conf(&cf, http_locs[1], srv_locs[1]));
    ck_assert_ptr_null(M->merge_loc_conf(&cf, srv_locs[1], loc_locs[1]));
    ck_assert_int_eq(M->postconfiguration(&cf), SWS_OK);
    ck_assert_int_eq(handlers_added, 1);
    ck_assert_int_eq(log_phase, SWS_HTTP_LOG_PHASE);
}

static void
log_request(const char *uri)
{
    req.uri.data = (u_char *) uri;
    req.uri.len = strlen(uri);
    ck_assert_int_eq(log_handler(&req), SWS_DECLINED);
}


/* ------------------------------------------------------------ log_format */

START_TEST(format_duplicate)
{
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "combined", "$status", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"),
                                 "duplicate log_format name \"combined\" in test.conf:7"));
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "main", "$status", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "main", "$uri", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"),
                                 "duplicate log_format name \"main\""));
}
END_TEST

START_TEST(format_errors)
{
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "a", "$nosuch", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"),
                                 "unknown variable \"$nosuch\" in log_format \"a\""));
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "b", "escape=xml", "$uri", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "escaping \"xml\""));
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "c", "escape=json", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "has no format string"));
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "d", "x ${uri", NULL),
                     SWS_CONF_ERROR);
    /* a failed format does not take the name */
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "a", "$uri", NULL), SWS_CONF_OK);
}
END_TEST

START_TEST(format_strings_joined_and_escape)
{
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "j", "escape=json",
                               "{\"uri\":\"$uri\",", "\"st\":$status}", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("j.log"), "j", NULL),
                     SWS_CONF_OK);
    finish_conf();
    log_request("/a\"b");
    ck_assert_str_eq(file_text("j.log"), "{\"uri\":\"/a\\\"b\",\"st\":200}\n");
}
END_TEST


/* ------------------------------------------------------------ access_log */

START_TEST(access_log_errors)
{
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "nosuch", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "unknown log format \"nosuch\""));
    ck_assert_ptr_nonnull(directive(http_locs[1], "access_log", "off", "combined", NULL));
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "combined",
                               "gzip", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "invalid parameter \"gzip\""));
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "combined",
                               "buffer=0", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "combined",
                               "buffer=abc", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "combined",
                               "flush=-1", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("x.log"), "combined",
                               "buffer=1k", "buffer=2k", NULL),
                     SWS_CONF_ERROR);
    /* a directory that does not exist */
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("no/dir/x.log"), NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "cannot open access log"));
    /* nothing above was opened */
    ck_assert_uint_eq(cycle.open_logs.nelts, 0);
}
END_TEST

START_TEST(conflicting_buffers)
{
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("b.log"), "combined",
                               "buffer=4k", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(srv_locs[1], "access_log", abs_path("b.log"), "combined",
                               "buffer=4k", "flush=1s", NULL),
                     SWS_CONF_OK);                 /* same as the default flush */
    ck_assert_ptr_eq(directive(srv_locs[1], "access_log", abs_path("b.log"), "combined",
                               "buffer=8k", NULL),
                     SWS_CONF_ERROR);
    ck_assert_ptr_nonnull(strstr(file_text("error.log"), "different buffer"));
    /* without buffer= it shares the file's buffer */
    ck_assert_ptr_eq(directive(loc_locs[1], "access_log", abs_path("b.log"), NULL),
                     SWS_CONF_OK);
    ck_assert_uint_eq(cycle.open_logs.nelts, 1);     /* one file object per path */
}
END_TEST

START_TEST(relative_path_and_open_logs)
{
    sws_log_t  **logs;

    ck_assert_ptr_eq(directive(http_locs[1], "access_log", "logs/rel.log", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("logs/rel.log"), NULL),
                     SWS_CONF_OK);
    ck_assert_uint_eq(cycle.open_logs.nelts, 1);
    logs = cycle.open_logs.elts;
    ck_assert_str_eq(logs[0]->path, abs_path("logs/rel.log"));
    finish_conf();
    log_request("/r");
    /* two access_log lines for one path: two lines */
    ck_assert_int_eq(count_lines("logs/rel.log"), 2);
    /* no default log: the http level has its own */
    ck_assert_ptr_null(file_text("logs/access.log"));
}
END_TEST

/* The configure-time default (--http-log-path) as a name under the test's
 * prefix: it follows the prefix when it lies under the configure-time one.
 * NULL for a default elsewhere (/var/log/... of a packaged build), which a
 * unit test cannot write. */
static const char *
default_log_name(void)
{
    size_t  n = strlen(SWS_PREFIX);

    if (strncmp(SWS_HTTP_LOG_PATH, SWS_PREFIX, n) != 0) {
        return NULL;
    }
    return SWS_HTTP_LOG_PATH + n;
}

START_TEST(default_log)
{
    char  *t;

    if (default_log_name() == NULL) {
        return;
    }
    finish_conf();
    log_request("/d");
    t = file_text(default_log_name());
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "127.0.0.1 - - ["));
    ck_assert_ptr_nonnull(strstr(t, "] \"GET / HTTP/1.1\" 200 0 \"-\" \"-\"\n"));
    ck_assert_uint_eq(cycle.open_logs.nelts, 1);
}
END_TEST

START_TEST(default_log_off)
{
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", "off", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(loc_locs[1], "access_log", abs_path("loc.log"), NULL),
                     SWS_CONF_OK);
    finish_conf();
    if (default_log_name() != NULL) {
        ck_assert_ptr_null(file_text(default_log_name()));   /* never opened */
    }
    log_request("/x");
    ck_assert_ptr_nonnull(strstr(file_text("loc.log"), "GET / HTTP/1.1"));
    req.loc_conf = srv_locs;                           /* the server inherits off */
    log_request("/y");
    ck_assert_int_eq(count_lines("loc.log"), 1);
    /* the engine leaves the handler out where the log is off */
    ck_assert_ptr_nonnull(log_active);
    ck_assert_uint_eq(log_active(srv_locs[1]), 0);
    ck_assert_uint_eq(log_active(loc_locs[1]), 1);
}
END_TEST

START_TEST(levels_replace_and_inherit)
{
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "u", "$uri", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("h1.log"), "u", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("h2.log"), "u", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(loc_locs[1], "access_log", abs_path("l.log"), "u", NULL),
                     SWS_CONF_OK);
    finish_conf();

    req.loc_conf = srv_locs;            /* inherits both http-level logs */
    log_request("/srv");
    req.loc_conf = loc_locs;            /* its own list replaces them */
    log_request("/loc");
    ck_assert_str_eq(file_text("h1.log"), "/srv\n");
    ck_assert_str_eq(file_text("h2.log"), "/srv\n");
    ck_assert_str_eq(file_text("l.log"), "/loc\n");
}
END_TEST

START_TEST(off_wins_at_its_level)
{
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("h.log"), NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(loc_locs[1], "access_log", "off", NULL), SWS_CONF_OK);
    finish_conf();
    log_request("/off");
    ck_assert_str_eq(file_text("h.log"), "");
    ck_assert_uint_eq(log_active(loc_locs[1]), 0);
    ck_assert_uint_eq(log_active(srv_locs[1]), 1);
}
END_TEST


/* ------------------------------------------------------------ buffering */

START_TEST(buffered_flush_timer)
{
    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "u", "$uri", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("b.log"), "u",
                               "buffer=1k", "flush=20ms", NULL),
                     SWS_CONF_OK);
    finish_conf();
    log_request("/one");
    log_request("/two");
    ck_assert_str_eq(file_text("b.log"), "");          /* still in the buffer */
    ck_assert_int_ge(sws_event_find_timer(), 0);
    ck_assert_int_le(sws_event_find_timer(), 20);

    usleep(40 * 1000);
    sws_time_update();
    sws_event_expire_timers();
    ck_assert_str_eq(file_text("b.log"), "/one\n/two\n");
    ck_assert_int_eq(sws_event_find_timer(), -1);      /* nothing buffered: no timer */

    log_request("/three");
    ck_assert_int_ge(sws_event_find_timer(), 0);
    sws_http_log_module.exit_worker(&cycle);
    ck_assert_str_eq(file_text("b.log"), "/one\n/two\n/three\n");
    ck_assert_int_eq(sws_event_find_timer(), -1);
}
END_TEST

START_TEST(buffered_full_and_long_lines)
{
    char  uri[200], big[3000], *t;
    int   i;

    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "u", "$uri", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("f.log"), "u",
                               "buffer=1k", NULL),
                     SWS_CONF_OK);
    finish_conf();

    /* 100-byte lines: the 11th does not fit, the first 10 are written */
    for (i = 0; i < 11; i++) {
        snprintf(uri, sizeof(uri), "/%02d%s", i, "................................................"
                 "..................................................");
        uri[99] = '\0';
        log_request(uri);
    }
    ck_assert_uint_eq(strlen(file_text("f.log")), 1000);

    /* longer than the buffer: the buffered line first, then it, whole */
    memset(big, 'x', sizeof(big) - 1);
    big[0] = '/';
    big[sizeof(big) - 1] = '\0';
    log_request(big);
    t = file_text("f.log");
    ck_assert_uint_eq(strlen(t), 1000 + 100 + 3000);
    ck_assert(strncmp(t + 1000, "/10", 3) == 0);
    ck_assert(strncmp(t + 1100, "/xxx", 4) == 0);
    ck_assert_int_eq(t[4099], '\n');
}
END_TEST

START_TEST(pool_destroy_writes_buffer)
{
    char  path[300];
    int   fd;
    char  buf[64];
    ssize_t n;

    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "u", "$uri", NULL), SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("p.log"), "u",
                               "buffer=1k", NULL),
                     SWS_CONF_OK);
    finish_conf();
    log_request("/kept");
    snprintf(path, sizeof(path), "%s/p.log", tmp);
    sws_event_timer_init();      /* forget the timer: the pool holds its event */
    sws_pool_destroy(pool);
    pool = sws_pool_create(1024, NULL);
    fd = open(path, O_RDONLY);
    ck_assert_int_ne(fd, -1);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    ck_assert_int_eq(n, 6);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "/kept\n");
}
END_TEST

START_TEST(unbuffered_long_line)
{
    static char  big[20000];

    ck_assert_ptr_eq(directive(main_confs[1], "log_format", "u", "escape=none", "$uri", NULL),
                     SWS_CONF_OK);
    ck_assert_ptr_eq(directive(http_locs[1], "access_log", abs_path("u.log"), "u", NULL),
                     SWS_CONF_OK);
    finish_conf();
    memset(big, 'y', sizeof(big) - 1);
    log_request(big);
    log_request("/short");
    ck_assert_uint_eq(strlen(file_text("u.log")), sizeof(big) - 1 + 1 + 7);
}
END_TEST


static Suite *
log_suite(void)
{
    Suite  *s = suite_create("http_log");
    TCase  *tc = tcase_create("directives");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, format_duplicate);
    tcase_add_test(tc, format_errors);
    tcase_add_test(tc, format_strings_joined_and_escape);
    tcase_add_test(tc, access_log_errors);
    tcase_add_test(tc, conflicting_buffers);
    tcase_add_test(tc, relative_path_and_open_logs);
    tcase_add_test(tc, default_log);
    tcase_add_test(tc, default_log_off);
    tcase_add_test(tc, levels_replace_and_inherit);
    tcase_add_test(tc, off_wins_at_its_level);
    suite_add_tcase(s, tc);

    tc = tcase_create("writing");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, buffered_flush_timer);
    tcase_add_test(tc, buffered_full_and_long_lines);
    tcase_add_test(tc, pool_destroy_writes_buffer);
    tcase_add_test(tc, unbuffered_long_line);
    suite_add_tcase(s, tc);

    return s;
}

int
main(void)
{
    SRunner  *sr = srunner_create(log_suite());
    int       failed;

    strcpy(base, "/tmp/test_http_log.XXXXXX");
    if (mkdtemp(base) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    rm_tree(base);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
