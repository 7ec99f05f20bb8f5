/*
 * Helper definitions (src/core/sws_helper.c): names, setters, the check
 * made once the configuration is read (program lookup, directory, user,
 * argv) and the signatures a reload compares. Running helpers are tested
 * against the real master in tests/integration/test_helpers.py.
 */
#define _GNU_SOURCE
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sws_conf_internal.h"
#include "sws_core_module.h"
#include "sws_cycle.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"

static char               tdir[128];
static char               prefix[160];
static struct sws_log_s   tlog;
static char               logbuf[16384];
static void              *conf_ctx[64];
static sws_core_conf_t    ccf;

/* Two configurations side by side, as during a reload. */
typedef struct {
    sws_pool_t          *pool;
    struct sws_cycle_s   cycle;
    struct sws_conf_s    cf;
} fake_conf_t;

static fake_conf_t  a, b;


static void
fake_init(fake_conf_t *f)
{
    sws_memzero(f, sizeof(*f));
    f->pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(f->pool);
    f->cycle.pool = f->pool;
    f->cycle.log = &tlog;
    f->cycle.conf_ctx = conf_ctx;
    f->cycle.prefix.data = (u_char *) prefix;
    f->cycle.prefix.len = strlen(prefix);
    f->cf.cycle = &f->cycle;
    f->cf.pool = f->pool;
    f->cf.log = &tlog;
    f->cf.cmd_type = SWS_MAIN_CONF;
}


/* A configuration afresh (the previous one's pool freed). */
static void
fake_reset(fake_conf_t *f)
{
    sws_pool_destroy(f->pool);
    fake_init(f);
}


static void
write_file(const char *name, const char *text, mode_t mode)
{
    char  path[300];
    int   fd;

    snprintf(path, sizeof(path), "%s/%s", tdir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
    close(fd);
    ck_assert_int_eq(chmod(path, mode), 0);
}


static void
setup(void)
{
    char  path[300];

    strcpy(tdir, "/tmp/sws_test_helper.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tdir));
    snprintf(prefix, sizeof(prefix), "%s/", tdir);
    snprintf(path, sizeof(path), "%s/log", tdir);
    tlog.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
    ck_assert_int_ge(tlog.fd, 0);
    tlog.level = SWS_LOG_DEBUG;
    tlog.path = NULL;

    /* the workers' user, the default of a helper when running as root */
    sws_memzero(&ccf, sizeof(ccf));
    sws_str_set(&ccf.user, "root");
    ccf.uid = 0;
    ccf.gid = 0;
    ck_assert_uint_lt(sws_core_module.index, sws_nelems(conf_ctx));
    conf_ctx[sws_core_module.index] = &ccf;

    snprintf(path, sizeof(path), "%s/bin", tdir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/app", tdir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    write_file("bin/tool", "#!/bin/sh\nexit 0\n", 0755);
    write_file("bin/plain", "not a program\n", 0644);

    fake_init(&a);
    fake_init(&b);
}


static void
teardown(void)
{
    char  cmd[200];

    sws_pool_destroy(a.pool);
    sws_pool_destroy(b.pool);
    close(tlog.fd);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
    ck_assert_int_eq(system(cmd), 0);
}


static const char *
log_text(void)
{
    ssize_t  n = pread(tlog.fd, logbuf, sizeof(logbuf) - 1, 0);

    logbuf[n > 0 ? n : 0] = '\0';
    return logbuf;
}


static void
log_clear(void)
{
    ck_assert_int_eq(ftruncate(tlog.fd, 0), 0);
}


#define ck_assert_logged(s) \
    ck_assert_msg(strstr(log_text(), (s)) != NULL, "\"%s\" not in log:\n%s", (s), log_text())


static sws_str_t
str(const char *s)
{
    sws_str_t  v = { strlen(s), (u_char *) s };

    return v;
}


static sws_helper_t *
add(fake_conf_t *f, const char *name)
{
    sws_str_t  n = str(name);

    return sws_helper_add(&f->cf, &n);
}


static sws_helper_t *
add_program(fake_conf_t *f, const char *name, const char *program)
{
    sws_helper_t  *h = add(f, name);
    sws_str_t      p = str(program);

    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(sws_helper_set_program(h, &p), SWS_OK);
    return h;
}


static int
run_a(sws_helper_t *h, void *data)
{
    (void) h; (void) data;
    return 0;
}


static int
run_b(sws_helper_t *h, void *data)
{
    (void) h; (void) data;
    return 1;
}


START_TEST(test_names)
{
    char  long_name[40];

    memset(long_name, 'n', 33);
    long_name[33] = '\0';

    ck_assert_ptr_null(add(&a, ""));
    ck_assert_logged("invalid helper name \"\"");
    ck_assert_ptr_null(add(&a, "has space"));
    ck_assert_ptr_null(add(&a, "slash/no"));
    ck_assert_ptr_null(add(&a, long_name));
    long_name[32] = '\0';
    ck_assert_ptr_nonnull(add(&a, long_name));
    ck_assert_ptr_nonnull(add(&a, "A-z_0.9"));

    log_clear();
    ck_assert_ptr_null(add(&a, "A-z_0.9"));
    ck_assert_logged("helper \"A-z_0.9\" is already declared");
    /* another configuration has its own names */
    ck_assert_ptr_nonnull(add(&b, "A-z_0.9"));
    ck_assert_uint_eq(sws_helpers_of(&a.cycle)->nelts, 2);
    ck_assert_uint_eq(sws_helpers_of(&b.cycle)->nelts, 1);
}
END_TEST


START_TEST(test_setters)
{
    sws_helper_t  *h = add(&a, "s");
    sws_str_t      name = str("A=B"), value = str("v"), empty = str("");

    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(sws_helper_set_function(h, NULL, NULL), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_program(h, &empty), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_env(h, &name, &value), SWS_ERROR);
    ck_assert_logged("invalid environment variable name");
    ck_assert_int_eq(sws_helper_set_restart(h, 3), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_backoff(h, 0, 10, 10), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_backoff(h, 20, 10, 10), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_backoff(h, 10, 10, -1), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_stop(h, 0, 100), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_stop(h, SIGSTOP, 100), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_stop(h, SIGTERM, -1), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_stop(h, NSIG, 100), SWS_ERROR);

    /* the defaults stand after refused values */
    ck_assert_uint_eq(h->restart, SWS_HELPER_RESTART_ALWAYS);
    ck_assert_int_eq(h->backoff_first, 100);
    ck_assert_int_eq(h->backoff_max, 10000);
    ck_assert_int_eq(h->stop_signal, SIGTERM);
    ck_assert_int_eq(h->stop_timeout, 5000);

    ck_assert_int_eq(sws_helper_set_restart(h, SWS_HELPER_RESTART_NEVER), SWS_OK);
    ck_assert_int_eq(sws_helper_set_backoff(h, 10, 10, 0), SWS_OK);
    ck_assert_int_eq(sws_helper_set_stop(h, SIGKILL, 0), SWS_OK);
    ck_assert_uint_eq(h->restart, SWS_HELPER_RESTART_NEVER);
    ck_assert_int_eq(h->stop_signal, SIGKILL);
}
END_TEST


/* ABI 1.7: the socket, the probe, the ready timeout. */
START_TEST(test_socket_setters)
{
    sws_helper_t  *h = add(&a, "s");
    sws_str_t      bad = str("host.example:80"), empty = str(""), nul = { 5, (u_char *) "1:\0:2" },
                   v4 = str("127.0.0.1:8080"), unix_path = str("unix:/tmp/x.sock"),
                   colon = str("a:b"), space = str("a b"), name = str("web");

    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(sws_helper_set_socket(h, &bad, NULL), SWS_ERROR);
    ck_assert_logged("invalid socket address");
    ck_assert_int_eq(sws_helper_set_socket(h, &empty, NULL), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_socket(h, &nul, NULL), SWS_ERROR);
    ck_assert_int_eq(sws_helper_set_socket(h, &v4, &colon), SWS_ERROR);
    ck_assert_logged("invalid socket name");
    ck_assert_int_eq(sws_helper_set_socket(h, &v4, &space), SWS_ERROR);
    ck_assert_ptr_null(h->socket.data);
    ck_assert_int_eq(sws_helper_set_ready_probe(h, &bad), SWS_ERROR);
    ck_assert_logged("invalid ready probe address");
    ck_assert_int_eq(sws_helper_set_ready_timeout(h, -1), SWS_ERROR);
    ck_assert_int_eq(h->ready_timeout, 30000);

    ck_assert_int_eq(sws_helper_set_socket(h, &unix_path, NULL), SWS_OK);
    ck_assert_str_eq((char *) h->socket.data, "unix:/tmp/x.sock");
    ck_assert_int_eq(h->socket_sa.ss_family, AF_UNIX);
    ck_assert_int_eq(sws_helper_set_socket(h, &v4, &name), SWS_OK);
    ck_assert_str_eq((char *) h->socket.data, "127.0.0.1:8080");
    ck_assert_str_eq((char *) h->fdname.data, "web");
    ck_assert_int_eq(sws_helper_set_ready_timeout(h, 0), SWS_OK);
    ck_assert_int_eq(sws_helper_set_callbacks(h, NULL, NULL, NULL), SWS_OK);
}
END_TEST


/* A socket without a name is named after its helper; a socket is for a
 * program, without a probe. */
START_TEST(test_check_socket)
{
    sws_helper_t  *h = add_program(&a, "web", "/bin/sh");
    sws_str_t      v4 = str("127.0.0.1:8080"), probe = str("127.0.0.1:8081"), fn = str("fn");

    ck_assert_int_eq(sws_helper_set_socket(h, &v4, NULL), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_OK);
    ck_assert_str_eq((char *) h->fdname.data, "web");

    ck_assert_int_eq(sws_helper_set_ready_probe(h, &probe), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    ck_assert_logged("has both a socket and a ready probe");

    fake_reset(&b);
    h = sws_helper_add(&b.cf, &fn);
    ck_assert_int_eq(sws_helper_set_function(h, run_a, NULL), SWS_OK);
    ck_assert_int_eq(sws_helper_set_socket(h, &v4, NULL), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&b.cycle), SWS_ERROR);
    ck_assert_logged("a socket is handed to a program only");
}
END_TEST


START_TEST(test_check_program)
{
    sws_helper_t  *t, *p, *rel;
    sws_str_t      arg1 = str("--one"), arg2 = str("two words"), n = str("K"), v = str("1");
    char           expect[300];

    t = add_program(&a, "path", "sh");
    ck_assert_int_eq(sws_helper_add_arg(t, &arg1), SWS_OK);
    ck_assert_int_eq(sws_helper_add_arg(t, &arg2), SWS_OK);
    ck_assert_int_eq(sws_helper_set_env(t, &n, &v), SWS_OK);
    p = add_program(&a, "abs", "/bin/sh");
    rel = add_program(&a, "rel", "bin/tool");
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_OK);

    /* a bare name is looked up in PATH now, and stays argv[0] */
    ck_assert_ptr_nonnull(t->path);
    ck_assert_ptr_nonnull(strstr(t->path, "/sh"));
    ck_assert_int_eq(access(t->path, X_OK), 0);
    ck_assert_str_eq(t->argv[0], "sh");
    ck_assert_str_eq(t->argv[1], "--one");
    ck_assert_str_eq(t->argv[2], "two words");
    ck_assert_ptr_null(t->argv[3]);
    ck_assert_str_eq((char *) ((sws_str_t *) t->env.elts)[0].data, "K=1");
    ck_assert_str_eq(p->path, "/bin/sh");
    snprintf(expect, sizeof(expect), "%sbin/tool", prefix);
    ck_assert_str_eq(rel->path, expect);
    /* the working directory defaults to the prefix */
    ck_assert_str_eq((char *) t->directory.data, prefix);
}
END_TEST


START_TEST(test_check_errors)
{
    sws_helper_t  *h;
    sws_str_t      d = str("no/such/dir"), app = str("app"), u = str("no-such-user-xyz");
    char           expect[400];

    setenv("PATH", "/no/such/bin:/also/not", 1);
    add_program(&a, "lost", "sh");
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    ck_assert_logged("helper \"lost\": program \"sh\" not found in PATH \"/no/such/bin:/also/not\"");
    setenv("PATH", "/usr/bin:/bin", 1);

    fake_reset(&a);
    add_program(&a, "plain", "bin/plain");
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    snprintf(expect, sizeof(expect), "helper \"plain\": cannot execute program %sbin/plain",
             prefix);
    ck_assert_logged(expect);

    fake_reset(&a);
    h = add_program(&a, "dir", "/bin/sh");
    ck_assert_int_eq(sws_helper_set_directory(h, &d), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    snprintf(expect, sizeof(expect), "helper \"dir\": no such directory %sno/such/dir", prefix);
    ck_assert_logged(expect);

    fake_reset(&a);
    h = add_program(&a, "dir2", "/bin/sh");
    ck_assert_int_eq(sws_helper_set_directory(h, &app), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_OK);
    snprintf(expect, sizeof(expect), "%sapp", prefix);
    ck_assert_str_eq((char *) h->directory.data, expect);

    fake_reset(&a);
    ck_assert_ptr_nonnull(add(&a, "empty"));
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    ck_assert_logged("helper \"empty\": has nothing to run");

    fake_reset(&a);
    h = add_program(&a, "both", "/bin/sh");
    ck_assert_int_eq(sws_helper_set_function(h, run_a, NULL), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
    ck_assert_logged("helper \"both\": has both a function and a program");

    fake_reset(&a);
    h = add_program(&a, "user", "/bin/sh");
    ck_assert_int_eq(sws_helper_set_user(h, &u, NULL), SWS_OK);
    if (geteuid() == 0) {
        ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_ERROR);
        ck_assert_logged("helper \"user\": unknown user no-such-user-xyz");
    } else {
        ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_OK);
        ck_assert_logged("a user has effect only when the master runs as root");
    }
}
END_TEST


/* Declare the same program helper in cf, then let change() alter it. */
static sws_helper_t *
declare(fake_conf_t *f, int change)
{
    sws_helper_t  *h = add_program(f, "app", "/bin/sh");
    sws_str_t      arg = str(change == 1 ? "b.js" : "a.js"), n = str("PORT"),
                   v = str(change == 2 ? "3001" : "3000");

    ck_assert_int_eq(sws_helper_add_arg(h, &arg), SWS_OK);
    ck_assert_int_eq(sws_helper_set_env(h, &n, &v), SWS_OK);
    if (change == 3) {
        ck_assert_int_eq(sws_helper_set_restart(h, SWS_HELPER_RESTART_NEVER), SWS_OK);
    } else if (change == 4) {
        ck_assert_int_eq(sws_helper_set_backoff(h, 100, 20000, 10000), SWS_OK);
    } else if (change == 5) {
        ck_assert_int_eq(sws_helper_set_stop(h, SIGINT, 5000), SWS_OK);
    } else if (change == 6) {
        /* "a.js" and "" as two arguments, against one "a.js" */
        ck_assert_int_eq(sws_helper_add_arg(h, &(sws_str_t) sws_string("")), SWS_OK);
    } else if (change == 7) {
        ck_assert_int_eq(sws_helper_set_socket(h, &(sws_str_t) sws_string("127.0.0.1:1"),
                                               NULL), SWS_OK);
    } else if (change == 8) {
        ck_assert_int_eq(sws_helper_set_socket(h, &(sws_str_t) sws_string("127.0.0.1:1"),
                                               &(sws_str_t) sws_string("other")), SWS_OK);
    } else if (change == 9) {
        ck_assert_int_eq(sws_helper_set_ready_probe(h, &(sws_str_t) sws_string("127.0.0.1:1")),
                         SWS_OK);
    } else if (change == 10) {
        ck_assert_int_eq(sws_helper_set_ready_timeout(h, 1000), SWS_OK);
    }
    /* the callbacks are not part of the definition */
    ck_assert_int_eq(sws_helper_set_callbacks(h, NULL, NULL, f), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&f->cycle), SWS_OK);
    return h;
}


static int
same(sws_helper_t *x, sws_helper_t *y)
{
    return x->signature.len == y->signature.len
           && memcmp(x->signature.data, y->signature.data, x->signature.len) == 0;
}


START_TEST(test_signatures)
{
    sws_helper_t  *x, *y;
    sws_str_t      key1 = str("zone=1m"), key2 = str("zone=2m"), fn = str("fn");
    int            change, data1 = 1, data2 = 2;

    x = declare(&a, 0);
    y = declare(&b, 0);
    ck_assert(same(x, y));
    ck_assert_uint_gt(x->signature.len, 0);

    for (change = 1; change <= 10; change++) {
        fake_reset(&b);
        y = declare(&b, change);
        ck_assert_msg(!same(x, y), "change %d gives the same signature", change);
    }

    /* function helpers: the function and the key count, not the data */
    fake_reset(&a);
    fake_reset(&b);
    x = sws_helper_add(&a.cf, &fn);
    y = sws_helper_add(&b.cf, &fn);
    sws_helper_set_function(x, run_a, &data1);
    sws_helper_set_function(y, run_a, &data2);
    sws_helper_set_key(x, &key1);
    sws_helper_set_key(y, &key1);
    ck_assert_int_eq(sws_helpers_check(&a.cycle), SWS_OK);
    ck_assert_int_eq(sws_helpers_check(&b.cycle), SWS_OK);
    ck_assert(same(x, y));

    sws_helper_set_key(y, &key2);
    ck_assert_int_eq(sws_helpers_check(&b.cycle), SWS_OK);
    ck_assert(!same(x, y));

    sws_helper_set_key(y, &key1);
    sws_helper_set_function(y, run_b, &data2);
    ck_assert_int_eq(sws_helpers_check(&b.cycle), SWS_OK);
    ck_assert(!same(x, y));
}
END_TEST


static Suite *
helper_suite(void)
{
    Suite  *s = suite_create("helper");
    TCase  *tc = tcase_create("definitions");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_setters);
    tcase_add_test(tc, test_socket_setters);
    tcase_add_test(tc, test_check_socket);
    tcase_add_test(tc, test_check_program);
    tcase_add_test(tc, test_check_errors);
    tcase_add_test(tc, test_signatures);
    suite_add_tcase(s, tc);
    return s;
}


int
main(void)
{
    int       failed;
    SRunner  *sr = srunner_create(helper_suite());

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
