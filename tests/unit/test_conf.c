/*
 * Configuration: the nginx-syntax and YAML readers, include expansion, the
 * dump, the directive dispatcher with its typed setters, and the module
 * loader (with small .so files compiled at run time).
 *
 * Build with -DSWS_TEST_INCLUDE_DIR="\"/path/to/include\"" (the SDK headers
 * the test modules are compiled against).
 */
#define _GNU_SOURCE
#include <check.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "sws_conf_internal.h"
#include "sws_cycle.h"
#include "sws_log_internal.h"

#ifndef SWS_TEST_INCLUDE_DIR
#error "compile with -DSWS_TEST_INCLUDE_DIR=\"\\\"/path/to/include\\\"\""
#endif


/* ---- fixture: a temp dir, a pool and a log captured in a file --------- */

static char               basedir[128];  /* removed by main(), whatever fails */
static char               tdir[256];
static struct sws_log_s   tlog;
static sws_pool_t        *pool;
static char               logbuf[65536];

static void
rm_rf(const char *dir)
{
    char  cmd[512];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "%s failed\n", cmd);
    }
}

static void
setup(void)
{
    char  path[300];

    snprintf(tdir, sizeof(tdir), "%s/t.XXXXXX", basedir);
    ck_assert_ptr_nonnull(mkdtemp(tdir));

    snprintf(path, sizeof(path), "%s/log", tdir);
    tlog.fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND, 0600);
    ck_assert_int_ge(tlog.fd, 0);
    tlog.level = SWS_LOG_DEBUG;
    tlog.path = NULL;

    pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(pool);
}

static void
teardown(void)
{
    sws_pool_destroy(pool);
    close(tlog.fd);
    rm_rf(tdir);
}

/* Everything logged since the last log_clear(). */
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

#define ck_assert_logged(s)                                                   \
    do { const char *l_ = log_text();                                         \
         ck_assert_msg(strstr(l_, (s)) != NULL,                               \
                       "expected in log: [%s]\nlog: [%s]", (s), l_); } while (0)

static char *
tpath(const char *name)
{
    static char  bufs[4][512];
    static int   k;

    k = (k + 1) % 4;
    snprintf(bufs[k], sizeof(bufs[k]), "%s/%s", tdir, name);
    return bufs[k];
}

/* Write name (relative to the temp dir, directories created) with text. */
static void
put(const char *name, const char *text)
{
    FILE  *f;
    char  *path = tpath(name), *slash, dir[512];

    strcpy(dir, path);
    for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(dir, 0700);
        *slash = '/';
    }

    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static sws_conf_node_t *
read_text(const char *name, const char *text)
{
    put(name, text);
    return sws_conf_read_file(pool, &tlog, tpath(name));
}

static char *
dump(const sws_conf_node_t *root)
{
    char    *buf, *copy;
    size_t   len;
    FILE    *f = open_memstream(&buf, &len);

    sws_conf_dump(root, f);
    fclose(f);

    copy = sws_pnalloc(pool, len + 1);
    memcpy(copy, buf, len + 1);
    free(buf);

    return copy;
}

static char *
dump_text(const char *name, const char *text)
{
    sws_conf_node_t  *root = read_text(name, text);

    ck_assert_msg(root != NULL, "reading %s failed: %s", name, log_text());
    return dump(root);
}

/* Read text as name and expect "MSG in FILE:LINE" in the log. */
static void
check_error(const char *name, const char *text, const char *msg, int line)
{
    char  expect[1024];

    log_clear();
    ck_assert_msg(read_text(name, text) == NULL, "%s: no error for [%s]", msg, text);
    snprintf(expect, sizeof(expect), "%s in %s:%d", msg, tpath(name), line);
    ck_assert_logged(expect);
}

static sws_conf_node_t *
child(const sws_conf_node_t *n, sws_uint_t i)
{
    ck_assert_ptr_nonnull(n->children);
    ck_assert_uint_lt(i, n->children->nelts);
    return (sws_conf_node_t *) n->children->elts + i;
}

static void
ck_node(const sws_conf_node_t *n, sws_uint_t line, sws_uint_t nargs, ...)
{
    va_list     ap;
    sws_uint_t  i;
    sws_str_t  *a = n->args.elts;
    const char *s;

    ck_assert_uint_eq(n->line, line);
    ck_assert_uint_eq(n->args.nelts, nargs);

    va_start(ap, nargs);
    for (i = 0; i < nargs; i++) {
        s = va_arg(ap, const char *);
        ck_assert_uint_eq(a[i].len, strlen(s));
        ck_assert_msg(memcmp(a[i].data, s, a[i].len) == 0, "arg %lu: [%.*s] != [%s]",
                      (unsigned long) i, (int) a[i].len, a[i].data, s);
    }
    va_end(ap);
}


/* ---- nginx syntax ----------------------------------------------------- */

START_TEST(test_nginx_quotes_escapes)
{
    sws_conf_node_t  *r;

    r = read_text("t.conf",
        "a \"x y\" 'p q' \"\\\"\" '\\'' \"\\\\\" \"\\n\\r\\t\" \"\\q\" \"\" b\\\"c d\\\\e f\\n;\n"
        "b 'it\"s' \"semi;colon{}\" \"multi\nline\";\n"
        "c;\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->children->nelts, 3);
    ck_node(child(r, 0), 1, 12, "a", "x y", "p q", "\"", "'", "\\", "\n\r\t", "\\q", "",
            "b\"c", "d\\e", "f\n");
    ck_node(child(r, 1), 2, 4, "b", "it\"s", "semi;colon{}", "multi\nline");
    ck_node(child(r, 2), 4, 1, "c");

    /* An empty quoted first word is a node (a map's key ''), both quotes. */
    r = read_text("t.conf", "m {\n  '' 1;\n  \"\" 2;\n}\n");
    ck_assert_ptr_nonnull(r);
    ck_node(child(child(r, 0), 0), 2, 2, "", "1");
    ck_node(child(child(r, 0), 1), 3, 2, "", "2");
}
END_TEST

START_TEST(test_nginx_comments_blocks)
{
    sws_conf_node_t  *r, *http, *srv, *loc;

    r = read_text("t.conf",
        "# leading comment\n"
        "a b; # trailing\n"
        "c \"#not a comment\" d#e;#x\n"
        "http {\n"
        "    server {   # comment after {\n"
        "        location / { x 1; }\n"
        "        listen\n"
        "          80;\n"
        "    }\n"
        "    empty { }\n"
        "}\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->children->nelts, 3);
    ck_assert_ptr_null(child(r, 0)->children);
    ck_node(child(r, 0), 2, 2, "a", "b");
    ck_node(child(r, 1), 3, 3, "c", "#not a comment", "d#e");

    http = child(r, 2);
    ck_node(http, 4, 1, "http");
    ck_assert_uint_eq(http->children->nelts, 2);
    srv = child(http, 0);
    ck_node(srv, 5, 1, "server");
    loc = child(srv, 0);
    ck_node(loc, 6, 2, "location", "/");
    ck_node(child(loc, 0), 6, 2, "x", "1");
    ck_node(child(srv, 1), 7, 2, "listen", "80");
    ck_node(child(http, 1), 10, 1, "empty");
    ck_assert_uint_eq(child(http, 1)->children->nelts, 0);

    ck_assert_str_eq(r->file, tpath("t.conf"));
    ck_assert_str_eq(loc->file, tpath("t.conf"));
    ck_assert_uint_eq(((sws_str_t *) r->args.elts)->len, 0);
}
END_TEST

START_TEST(test_nginx_empty)
{
    sws_conf_node_t  *r;

    r = read_text("t.conf", "  # nothing\n\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->children->nelts, 0);
    ck_assert_str_eq(dump(r), "");
}
END_TEST

START_TEST(test_nginx_errors)
{
    check_error("t.conf", "a;\n}\n", "unexpected \"}\"", 2);
    check_error("t.conf", "a;\n\n{ b; }\n", "unexpected \"{\"", 3);
    check_error("t.conf", "a;\n;\n", "unexpected \";\"", 2);
    check_error("t.conf", "a {\n  b;\n", "unexpected end of file, expecting \"}\"", 3);
    check_error("t.conf", "a b", "unexpected end of file, expecting \";\" or \"}\"", 1);
    check_error("t.conf", "x;\na \"b\n\nc;\n", "unterminated quoted string", 2);
    check_error("t.conf", "a 'b\n", "unterminated quoted string", 1);
    check_error("t.conf", "a { b c }\n", "unexpected \"}\"", 1);
    check_error("t.conf", "a\n\"b\"c;\n", "unexpected \"c\" after a quoted string", 2);
    check_error("t.conf", "a {\n b { c; }\n\n", "unexpected end of file, expecting \"}\"", 4);
}
END_TEST

START_TEST(test_nginx_open_failure)
{
    log_clear();
    ck_assert_ptr_null(sws_conf_read_file(pool, &tlog, tpath("missing.conf")));
    ck_assert_logged("open() \"");
    ck_assert_logged("missing.conf\" failed: No such file or directory");

    /* a directory */
    log_clear();
    mkdir(tpath("dir.conf"), 0700);
    ck_assert_ptr_null(sws_conf_read_file(pool, &tlog, tpath("dir.conf")));
    ck_assert_logged("dir.conf\" failed: Is a directory");
}
END_TEST

START_TEST(test_include)
{
    sws_conf_node_t  *r, *http;

    put("sub/b.conf", "b2;\n");
    /* relative to the main file's directory at every depth, as nginx */
    put("sub/a.conf", "\n\na2 x;\ninclude inner.conf;\n");
    put("sub/c.yaml", "c2: y\n");
    put("sub/skip.txt", "not included;\n");
    put("inner.conf", "inner;\n");
    put("mime.types", "types {\n    text/html html;\n}\n");
    put("list.types", "text/css css;\ntext/plain txt;\n");

    r = read_text("t.conf",
        "a;\n"
        "include sub/*.conf;\n"
        "http { include mime.types; types { include list.types; } }\n"
        "include sub/*.yaml;\n"
        "include nothing/*.conf;\n"
        "z;\n");
    ck_assert_msg(r != NULL, "%s", log_text());
    ck_assert_uint_eq(r->children->nelts, 7);

    ck_node(child(r, 0), 1, 1, "a");
    ck_node(child(r, 1), 3, 2, "a2", "x");
    ck_assert_str_eq(child(r, 1)->file, tpath("sub/a.conf"));
    ck_node(child(r, 2), 1, 1, "inner");
    ck_assert_str_eq(child(r, 2)->file, tpath("inner.conf"));
    ck_node(child(r, 3), 1, 1, "b2");
    ck_assert_str_eq(child(r, 3)->file, tpath("sub/b.conf"));

    http = child(r, 4);
    ck_node(http, 3, 1, "http");
    ck_assert_uint_eq(http->children->nelts, 2);
    ck_node(child(http, 0), 1, 1, "types");
    ck_assert_str_eq(child(http, 0)->file, tpath("mime.types"));
    ck_node(child(child(http, 0), 0), 2, 2, "text/html", "html");
    ck_node(child(http, 1), 3, 1, "types");
    ck_assert_uint_eq(child(http, 1)->children->nelts, 2);
    ck_node(child(child(http, 1), 1), 2, 2, "text/plain", "txt");

    ck_node(child(r, 5), 1, 2, "c2", "y");
    ck_assert_str_eq(child(r, 5)->file, tpath("sub/c.yaml"));
    ck_node(child(r, 6), 6, 1, "z");
}
END_TEST

START_TEST(test_include_absolute)
{
    char              text[600];
    sws_conf_node_t  *r;

    put("abs/x.conf", "x;\n");
    snprintf(text, sizeof(text), "include %s;\ninclude \"%s/abs/*.conf\";\n",
             tpath("abs/x.conf"), tdir);
    r = read_text("t.conf", text);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(dump(r), "x;\nx;\n");
}
END_TEST

/* glob characters in the including file's directory are taken literally */
START_TEST(test_include_odd_dir)
{
    put("we[ir]d*/sub/x.conf", "x;\n");
    put("we[ir]d*/sub/y.conf", "y;\n");
    put("weidx/sub/no.conf", "no;\n");    /* what we[ir]d* would match */
    ck_assert_str_eq(dump_text("we[ir]d*/main.conf", "include sub/*.conf;\n"), "x;\ny;\n");
}
END_TEST

START_TEST(test_include_errors)
{
    char  expect[600];

    log_clear();
    ck_assert_ptr_null(read_text("t.conf", "a;\ninclude nothere.conf;\n"));
    snprintf(expect, sizeof(expect), "open() \"%s\" failed in %s:2: No such file",
             tpath("nothere.conf"), tpath("t.conf"));
    ck_assert_logged(expect);

    check_error("t.conf", "include a b;\n", "invalid number of arguments in \"include\" directive", 1);
    check_error("t.conf", "include;\n", "invalid number of arguments in \"include\" directive", 1);
    check_error("t.conf", "include \"\";\n", "empty file name in \"include\" directive", 1);
    check_error("t.conf", "\ninclude x { }\n", "directive \"include\" is not terminated by \";\"", 2);

    /* a file including itself */
    log_clear();
    ck_assert_ptr_null(read_text("self.conf", "a;\ninclude self.conf;\n"));
    snprintf(expect, sizeof(expect), "too deep include nesting in %s:2", tpath("self.conf"));
    ck_assert_logged(expect);

    /* an error inside an included file names that file */
    put("bad.conf", "ok;\n}\n");
    log_clear();
    ck_assert_ptr_null(read_text("t.conf", "include bad.conf;\n"));
    snprintf(expect, sizeof(expect), "unexpected \"}\" in %s:2", tpath("bad.conf"));
    ck_assert_logged(expect);
}
END_TEST

START_TEST(test_include_depth_limit)
{
    int   i;
    char  name[32], text[64];

    /* d0 includes d1 ... d15 includes d16: 16 levels deep is allowed */
    for (i = 0; i < 16; i++) {
        snprintf(name, sizeof(name), "d%d.conf", i);
        snprintf(text, sizeof(text), "include d%d.conf;\n", i + 1);
        put(name, text);
    }
    put("d16.conf", "leaf;\n");
    ck_assert_str_eq(dump_text("d0.conf", "include d1.conf;\n"), "leaf;\n");

    put("d16.conf", "include d17.conf;\n");
    put("d17.conf", "leaf;\n");
    log_clear();
    ck_assert_ptr_null(sws_conf_read_file(pool, &tlog, tpath("d0.conf")));
    snprintf(text, sizeof(text), "too deep include nesting in ");
    ck_assert_logged(text);
    ck_assert_logged("d16.conf:1\n");
}
END_TEST


/* ---- YAML --------------------------------------------------------------- */

static const char  *nginx_conf =
    "worker_processes 2;\n"
    "events {\n"
    "    worker_connections 1024;\n"
    "}\n"
    "http {\n"
    "    sendfile on;\n"
    "    server {\n"
    "        listen 8080 default_server;\n"
    "        listen 8081;\n"
    "        server_name example.com www.example.com;\n"
    "        root \"my dir\";\n"
    "        location = /respond {\n"
    "            respond 200 \"Hello, world!\";\n"
    "        }\n"
    "        location / {\n"
    "            index;\n"
    "            try_files $uri =404;\n"
    "        }\n"
    "    }\n"
    "    server {\n"
    "        listen 9090;\n"
    "    }\n"
    "}\n";

static const char  *yaml_conf =
    "# the same configuration\n"
    "worker_processes: 2\n"
    "events:\n"
    "  worker_connections: 1024\n"
    "http:\n"
    "  sendfile: on\n"
    "  server:\n"
    "    - listen:\n"
    "        - 8080 default_server\n"
    "        - 8081\n"
    "      server_name: example.com www.example.com\n"
    "      root: '\"my dir\"'\n"
    "      location = /respond:\n"
    "        respond: 200 \"Hello, world!\"\n"
    "      location /:\n"
    "        index:\n"
    "        try_files: $uri =404\n"
    "    - listen: 9090\n";

START_TEST(test_yaml_same_as_nginx)
{
    char  *a, *b;

    a = dump_text("t.conf", nginx_conf);
    b = dump_text("t.yaml", yaml_conf);
    ck_assert_str_eq(a, b);
    /* the dump of a normalised file is the file itself */
    ck_assert_str_eq(a, nginx_conf);
}
END_TEST

START_TEST(test_yaml_tree)
{
    sws_conf_node_t  *r, *s;

    r = read_text("t.yml",
        "a: 1 two \"three four\"\n"
        "b:\n"
        "c: ~\n"
        "d: null\n"
        "e: []\n"
        "f:\n"
        "  - x\n"
        "  -\n"
        "  - g: h\n"
        "    i:\n"
        "  - {}\n"
        "location = /x:\n"
        "  'k l': '\"v w\"'\n"
        "\"m n\": [o, p]\n"
        "text: |\n"
        "  line1\n"
        "  \"line 2\"\n"
        "hash: 'x #y'\n"
        "empty: '\"\"'\n"
        "onoff: off\n");
    ck_assert_msg(r != NULL, "%s", log_text());

    ck_node(child(r, 0), 1, 4, "a", "1", "two", "three four");
    ck_node(child(r, 1), 2, 1, "b");
    ck_assert_ptr_null(child(r, 1)->children);
    ck_node(child(r, 2), 3, 1, "c");
    ck_node(child(r, 3), 4, 1, "d");
    /* e: [] gives no directive at all */
    ck_node(child(r, 4), 7, 2, "f", "x");
    ck_node(child(r, 5), 8, 1, "f");
    s = child(r, 6);
    ck_node(s, 9, 1, "f");
    ck_assert_uint_eq(s->children->nelts, 2);
    ck_node(child(s, 0), 9, 2, "g", "h");
    ck_node(child(s, 1), 10, 1, "i");
    ck_node(child(r, 7), 11, 1, "f");
    ck_assert_uint_eq(child(r, 7)->children->nelts, 0);
    s = child(r, 8);
    ck_node(s, 12, 3, "location", "=", "/x");
    ck_node(child(s, 0), 13, 3, "k", "l", "v w");
    ck_node(child(r, 9), 14, 3, "m", "n", "o");
    ck_node(child(r, 10), 14, 3, "m", "n", "p");
    ck_node(child(r, 11), 15, 3, "text", "line1", "line 2");
    ck_node(child(r, 12), 18, 3, "hash", "x", "#y");
    ck_node(child(r, 13), 19, 2, "empty", "");
    ck_node(child(r, 14), 20, 2, "onoff", "off");
    ck_assert_uint_eq(r->children->nelts, 15);
    ck_assert_str_eq(child(r, 0)->file, tpath("t.yml"));
}
END_TEST

START_TEST(test_yaml_empty)
{
    ck_assert_str_eq(dump_text("t.yaml", ""), "");
    ck_assert_str_eq(dump_text("t.yaml", "# only a comment\n"), "");
    ck_assert_str_eq(dump_text("t.yaml", "---\n"), "");
    ck_assert_str_eq(dump_text("t.yaml", "{}\n"), "");
}
END_TEST

START_TEST(test_yaml_include)
{
    char  msg[600];

    put("inc/one.conf", "one;\n");
    put("inc/two.yaml", "two: 2\n");
    put("inc/three.yml", "three:\n  x: y\n");
    put("types.conf", "text/html html;\n");

    ck_assert_str_eq(dump_text("t.yaml",
        "a: 1\n"
        "include: inc/*.conf\n"
        "include:\n"
        "  - inc/two.yaml\n"
        "  - inc/*.yml\n"
        "include inc/none*:\n"
        "types:\n"
        "  include: types.conf\n"
        "z:\n"),
        "a 1;\none;\ntwo 2;\nthree {\n    x y;\n}\ntypes {\n    text/html html;\n}\nz;\n");

    snprintf(msg, sizeof(msg), "open() \"%s\" failed", tpath("missing.conf"));
    check_error("t.yaml", "a: 1\ninclude: missing.conf\n", msg, 2);
    check_error("t.yaml", "include:\n  x: y\n",
                "directive \"include\" is not terminated by \";\"", 1);
    check_error("t.yaml", "include: a b\n",
                "invalid number of arguments in \"include\" directive", 1);
}
END_TEST

START_TEST(test_yaml_errors)
{
    check_error("t.yaml", "a: b\n  c: d\n",
                "YAML syntax error: mapping values are not allowed in this context, column 4", 2);
    check_error("t.yaml", "a: 1\nb: \"x\n", "YAML syntax error: found unexpected end of stream "
                "(while scanning a quoted scalar), column 1", 3);
    check_error("t.yaml", "a:\n  - [x]\n", "nested YAML sequences are not supported", 2);
    check_error("t.yaml", "- a\n- b\n",
                "the top level of a YAML configuration must be a mapping", 1);
    check_error("t.yaml", "just text\n",
                "the top level of a YAML configuration must be a mapping", 1);
    check_error("t.yaml", "a: &x 1\nb: *x\n", "YAML anchors are not supported", 1);
    check_error("t.yaml", "a: 1\nb: !!str 2\n", "YAML tags are not supported", 2);
    check_error("t.yaml", "a: 1\n---\nb: 2\n", "only one YAML document is allowed", 2);
    check_error("t.yaml", "a: 1\n\"\": 2\n", "a directive with no name", 2);
    check_error("t.yaml", "a: 1\n~: 2\n", "a directive with no name", 2);
    check_error("t.yaml", "? [a]\n: 1\n", "a YAML mapping key must be a scalar", 1);
    check_error("t.yaml", "a: 80;\n", "unexpected \";\"", 1);
    check_error("t.yaml", "a:\n  b: x { y\n", "unexpected \"{\"", 2);
    check_error("t.yaml", "a: '\"unterminated'\n", "unterminated quoted string", 1);

    log_clear();
    ck_assert_ptr_null(sws_conf_read_file(pool, &tlog, tpath("missing.yaml")));
    ck_assert_logged("missing.yaml\" failed: No such file or directory");
}
END_TEST


/* ---- dump --------------------------------------------------------------- */

START_TEST(test_dump_quoting)
{
    char  *d, *again;

    d = dump_text("t.conf",
        "a \"\" \"x y\" 'q\"' \"b\\\\c\" plain \"semi;\" \"{\" \"}\" \"#\" \"'\" tab\\t"
        " a=b /x/y $v;\n"
        "b { c; e { } }\n");
    ck_assert_str_eq(d,
        "a \"\" \"x y\" \"q\\\"\" \"b\\\\c\" plain \"semi;\" \"{\" \"}\" \"#\" \"'\" \"tab\t\""
        " a=b /x/y $v;\n"
        "b {\n    c;\n    e {\n    }\n}\n");

    /* the dump reads back to the same tree */
    again = dump_text("again.conf", d);
    ck_assert_str_eq(again, d);
}
END_TEST

START_TEST(test_dump_null_root)
{
    char    *buf;
    size_t   len;
    FILE    *f = open_memstream(&buf, &len);

    sws_conf_dump(NULL, f);
    fclose(f);
    ck_assert_uint_eq(len, 0);
    free(buf);
}
END_TEST


/* ---- dispatch and setters --------------------------------------------- */

typedef struct {
    sws_int_t     flag;
    sws_int_t     num;
    size_t        size;
    sws_msec_t    msec;
    time_t        sec;
    sws_str_t     str;
    sws_array_t  *arr;
    sws_uint_t    en;
    sws_str_t     path;
    sws_int_t     status;
    sws_int_t     redirect;
    sws_uint_t    level;
    int           calls;
    sws_uint_t    nargs;
    sws_str_t     loc;
} test_conf_t;

static test_conf_t          main_conf, loc_conf, other_conf;
static sws_module_t         mod_a, mod_b;
static sws_module_t        *test_modules[] = { &mod_a, &mod_b };
static void                *test_conf_ctx[2];
static void                *test_loc_confs[2];
static sws_http_conf_ctx_t  test_http_ctx = { NULL, NULL, test_loc_confs };
static struct sws_cycle_s   cycle;
static struct sws_conf_s    conf;

static const sws_conf_enum_t  speeds[] = {
    { sws_string("slow"), 1 },
    { sws_string("fast"), 2 },
    { sws_null_string, 0 }
};

static const sws_conf_range_t  redirects = { 300, 399 };

static char *
set_record(sws_conf_t *cf, const sws_command_t *cmd, void *c)
{
    test_conf_t  *tc = c;

    (void) cmd;
    tc->calls++;
    tc->nargs = sws_conf_nargs(cf);
    ck_assert_ptr_null(sws_conf_arg(cf, sws_conf_nargs(cf)));
    return SWS_CONF_OK;
}

static char *
set_message(sws_conf_t *cf, const sws_command_t *cmd, void *c)
{
    (void) cf; (void) cmd; (void) c;
    return "is bogus";
}

static char *
set_error(sws_conf_t *cf, const sws_command_t *cmd, void *c)
{
    (void) cmd; (void) c;
    sws_conf_log_error(SWS_LOG_EMERG, cf, ENOENT, "custom failure %d", 42);
    return SWS_CONF_ERROR;
}

/* "loc { ... }": parses its children as a location. */
static char *
set_loc_block(sws_conf_t *cf, const sws_command_t *cmd, void *c)
{
    char  *rv;

    (void) cmd;
    ck_assert_ptr_eq(c, &main_conf);
    ck_assert_ptr_null(sws_conf_http_loc_conf(cf, &mod_a));
    ck_assert_uint_eq(sws_conf_context(cf), SWS_MAIN_CONF);

    rv = sws_conf_parse_block(cf, &test_http_ctx, SWS_HTTP_LOC_CONF);

    /* everything restored */
    ck_assert_uint_eq(sws_conf_context(cf), SWS_MAIN_CONF);
    ck_assert_str_eq((char *) sws_conf_arg(cf, 0)->data, "loc");
    return rv;
}

static char *
set_check_loc(sws_conf_t *cf, const sws_command_t *cmd, void *c)
{
    (void) cmd;
    ck_assert_ptr_eq(c, &loc_conf);
    ck_assert_ptr_eq(sws_conf_http_loc_conf(cf, &mod_a), &loc_conf);
    ck_assert_ptr_null(sws_conf_http_srv_conf(cf, &mod_a));
    ck_assert_ptr_null(sws_conf_http_main_conf(cf, &mod_a));
    ck_assert_uint_eq(sws_conf_context(cf), SWS_HTTP_LOC_CONF);
    return sws_conf_set_str_slot(cf, cmd, c);
}

#define M SWS_MAIN_CONF
#define OFF(f) offsetof(test_conf_t, f)

static const sws_command_t  commands_a[] = {
    { "flag", M | SWS_CONF_FLAG, sws_conf_set_flag_slot, SWS_CONF_MAIN_OFFSET, OFF(flag), NULL },
    { "num", M | SWS_CONF_TAKE1, sws_conf_set_num_slot, SWS_CONF_MAIN_OFFSET, OFF(num), NULL },
    { "size", M | SWS_CONF_TAKE1, sws_conf_set_size_slot, SWS_CONF_MAIN_OFFSET, OFF(size), NULL },
    { "msec", M | SWS_CONF_TAKE1, sws_conf_set_msec_slot, SWS_CONF_MAIN_OFFSET, OFF(msec), NULL },
    { "sec", M | SWS_CONF_TAKE1, sws_conf_set_sec_slot, SWS_CONF_MAIN_OFFSET, OFF(sec), NULL },
    { "str", M | SWS_CONF_TAKE1, sws_conf_set_str_slot, SWS_CONF_MAIN_OFFSET, OFF(str), NULL },
    { "arr", M | SWS_CONF_1MORE, sws_conf_set_str_array_slot, SWS_CONF_MAIN_OFFSET, OFF(arr), NULL },
    { "speed", M | SWS_CONF_TAKE1, sws_conf_set_enum_slot, SWS_CONF_MAIN_OFFSET, OFF(en), speeds },
    { "path", M | SWS_CONF_TAKE1, sws_conf_set_path_slot, SWS_CONF_MAIN_OFFSET, OFF(path), NULL },
    { "status", M | SWS_CONF_TAKE1, sws_conf_set_status_slot, SWS_CONF_MAIN_OFFSET, OFF(status),
      NULL },
    { "redirect", M | SWS_CONF_TAKE1, sws_conf_set_status_slot, SWS_CONF_MAIN_OFFSET,
      OFF(redirect), &redirects },
    { "level", M | SWS_CONF_TAKE1, sws_conf_set_log_level_slot, SWS_CONF_MAIN_OFFSET, OFF(level),
      NULL },
    { "noargs", M | SWS_CONF_NOARGS, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "take13", M | SWS_CONF_TAKE13, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "take7", M | SWS_CONF_TAKE7, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "more2", M | SWS_CONF_2MORE, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "any", M | SWS_CONF_ANY, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "msg", M | SWS_CONF_NOARGS, set_message, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "err", M | SWS_CONF_NOARGS, set_error, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "loc", M | SWS_CONF_BLOCK | SWS_CONF_NOARGS, set_loc_block, SWS_CONF_MAIN_OFFSET, 0, NULL },
    { "where", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, set_check_loc, SWS_HTTP_LOC_CONF_OFFSET,
      OFF(loc), NULL },
    { "loconly", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_record, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

/* the same name in another module, for another context */
static const sws_command_t  commands_b[] = {
    { "shared", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_record, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

static const sws_command_t  commands_a2[] = {
    { "shared", M | SWS_CONF_NOARGS, set_record, SWS_CONF_MAIN_OFFSET, 0, NULL },
    sws_null_command
};

static void
test_conf_init(test_conf_t *c)
{
    sws_memzero(c, sizeof(*c));
    c->flag = SWS_UNSET;
    c->num = SWS_UNSET;
    c->size = SWS_UNSET_SIZE;
    c->msec = SWS_UNSET_MSEC;
    c->sec = (time_t) SWS_UNSET;
    c->en = SWS_UNSET_UINT;
    c->status = SWS_UNSET;
    c->redirect = SWS_UNSET;
    c->level = SWS_UNSET_UINT;
}

static void
dispatch_setup(void)
{
    static const sws_command_t  *merged;
    static sws_command_t         a[sws_nelems(commands_a) + 1];

    setup();

    /* module a: commands_a plus "shared" for the main context */
    if (merged == NULL) {
        memcpy(a, commands_a, sizeof(commands_a));
        a[sws_nelems(commands_a) - 1] = commands_a2[0];
        a[sws_nelems(commands_a)] = commands_a2[1];
        merged = a;
    }

    sws_memzero(&mod_a, sizeof(mod_a));
    sws_memzero(&mod_b, sizeof(mod_b));
    mod_a.name = "a";
    mod_a.commands = merged;
    mod_a.index = 0;
    mod_b.name = "b";
    mod_b.commands = commands_b;
    mod_b.index = 1;

    test_conf_init(&main_conf);
    test_conf_init(&loc_conf);
    test_conf_init(&other_conf);
    test_conf_ctx[0] = &main_conf;
    test_conf_ctx[1] = NULL;
    test_loc_confs[0] = &loc_conf;
    test_loc_confs[1] = &other_conf;

    sws_memzero(&cycle, sizeof(cycle));
    cycle.pool = pool;
    cycle.log = &tlog;
    cycle.modules = test_modules;
    cycle.modules_n = 2;
    cycle.conf_ctx = test_conf_ctx;
    sws_str_set(&cycle.prefix, "/pfx/");
    sws_str_set(&cycle.conf_prefix, "/etc/conf/");

    sws_memzero(&conf, sizeof(conf));
    conf.cycle = &cycle;
    conf.pool = pool;
    conf.temp_pool = pool;
    conf.log = &tlog;
    conf.cmd_type = SWS_MAIN_CONF;
}

/* Read text as nginx syntax and dispatch it at the top level. */
static sws_int_t
run(const char *text)
{
    sws_conf_node_t  *r;

    log_clear();
    r = read_text("d.conf", text);
    ck_assert_msg(r != NULL, "%s", log_text());
    return sws_conf_dispatch(&conf, r->children);
}

static void
run_error(const char *text, const char *msg, int line)
{
    char  expect[600];

    test_conf_init(&main_conf);
    ck_assert_int_eq(run(text), SWS_ERROR);
    snprintf(expect, sizeof(expect), "%s in %s:%d", msg, tpath("d.conf"), line);
    ck_assert_logged(expect);
    ck_assert_logged("[emerg]");
}

START_TEST(test_dispatch_errors)
{
    run_error("num 1;\nnope;\n", "unknown directive \"nope\"", 2);
    run_error("\n\nloconly;\n", "\"loconly\" directive is not allowed here", 3);
    run_error("num;\n", "invalid number of arguments in \"num\" directive", 1);
    run_error("num 1 2;\n", "invalid number of arguments in \"num\" directive", 1);
    run_error("noargs x;\n", "invalid number of arguments in \"noargs\" directive", 1);
    run_error("take13 a b;\n", "invalid number of arguments in \"take13\" directive", 1);
    run_error("more2 a;\n", "invalid number of arguments in \"more2\" directive", 1);
    run_error("take7 1 2 3 4 5 6;\n", "invalid number of arguments in \"take7\" directive", 1);
    run_error("flag;\n", "invalid number of arguments in \"flag\" directive", 1);
    run_error("flag on off;\n", "invalid number of arguments in \"flag\" directive", 1);
    run_error("arr;\n", "invalid number of arguments in \"arr\" directive", 1);
    run_error("loc;\n", "directive \"loc\" has no opening \"{\"", 1);
    run_error("num 1 { }\n", "directive \"num\" is not terminated by \";\"", 1);
    run_error("x;\n", "unknown directive \"x\"", 1);
    run_error("num 1;\n'' 2;\n", "unknown directive \"\"", 2);
    run_error("msg;\n", "\"msg\" directive is bogus", 1);
    run_error("num 1;\nnum 2;\n", "\"num\" directive is duplicate", 2);
    run_error("loc {\n  where a;\n  nope;\n}\n", "unknown directive \"nope\"", 3);
    run_error("loc {\n  num 1;\n}\n", "\"num\" directive is not allowed here", 2);

    /* a setter's own message, with errno */
    run_error("\nerr;\n", "custom failure 42", 2);
    ck_assert_logged("custom failure 42 in ");
    ck_assert_logged(":2: No such file or directory");

    /* stops at the first error */
    test_conf_init(&main_conf);
    ck_assert_int_eq(run("num 1;\nbad;\nstr x;\n"), SWS_ERROR);
    ck_assert_int_eq(main_conf.num, 1);
    ck_assert_ptr_null(main_conf.str.data);
}
END_TEST

START_TEST(test_dispatch_args)
{
    ck_assert_int_eq(run("noargs;\ntake13 a;\n"), SWS_OK);
    ck_assert_int_eq(main_conf.calls, 2);
    ck_assert_uint_eq(main_conf.nargs, 2);
    ck_assert_int_eq(run("take13 a b c;\n"), SWS_OK);
    ck_assert_uint_eq(main_conf.nargs, 4);
    ck_assert_int_eq(run("take7 1 2 3 4 5 6 7;\n"), SWS_OK);
    ck_assert_uint_eq(main_conf.nargs, 8);
    ck_assert_int_eq(run("more2 a b c d e f g h i j;\n"), SWS_OK);
    ck_assert_uint_eq(main_conf.nargs, 11);
    ck_assert_int_eq(run("any;\nany 1 2 3 4 5 6 7 8 9;\n"), SWS_OK);
    ck_assert_uint_eq(main_conf.nargs, 10);

    /* "shared": module a in main, module b in a location */
    main_conf.calls = 0;
    ck_assert_int_eq(run("shared;\nloc { shared; where here; }\n"), SWS_OK);
    ck_assert_int_eq(main_conf.calls, 1);
    ck_assert_int_eq(other_conf.calls, 1);
    ck_assert_int_eq(loc_conf.calls, 0);
    ck_assert_str_eq((char *) loc_conf.loc.data, "here");
    ck_assert_ptr_null(conf.node);
    ck_assert_uint_eq(conf.cmd_type, SWS_MAIN_CONF);

    /* an empty block is fine */
    ck_assert_int_eq(run("loc { }\n"), SWS_OK);
    ck_assert_int_eq(sws_conf_dispatch(&conf, NULL), SWS_OK);
}
END_TEST

START_TEST(test_accessors)
{
    sws_conf_node_t  *r;
    sws_str_t         name;

    r = read_text("acc.conf", "\n\nfoo bar baz;\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(sws_conf_nargs(&conf), 0);
    ck_assert_ptr_null(sws_conf_arg(&conf, 0));
    ck_assert_str_eq(sws_conf_file(&conf), "");
    ck_assert_uint_eq(sws_conf_line(&conf), 0);

    conf.node = child(r, 0);
    ck_assert_uint_eq(sws_conf_nargs(&conf), 3);
    ck_assert_str_eq((char *) sws_conf_arg(&conf, 0)->data, "foo");
    ck_assert_str_eq((char *) sws_conf_arg(&conf, 2)->data, "baz");
    ck_assert_ptr_null(sws_conf_arg(&conf, 3));
    ck_assert_str_eq(sws_conf_file(&conf), tpath("acc.conf"));
    ck_assert_uint_eq(sws_conf_line(&conf), 3);
    ck_assert_ptr_eq(sws_conf_pool(&conf), pool);
    ck_assert_ptr_eq(sws_conf_cycle(&conf), &cycle);
    ck_assert_ptr_eq(sws_conf_log(&conf), &tlog);

    log_clear();
    sws_conf_log_error(SWS_LOG_WARN, &conf, 0, "hello %s", "there");
    ck_assert_logged("[warn]");
    ck_assert_logged("hello there in ");
    ck_assert_logged("acc.conf:3\n");

    sws_str_set(&name, "logs/x.log");
    ck_assert_int_eq(sws_conf_full_name(&conf, &name, 0), SWS_OK);
    ck_assert_str_eq((char *) name.data, "/pfx/logs/x.log");
    ck_assert_uint_eq(name.len, strlen("/pfx/logs/x.log"));

    sws_str_set(&name, "mime.types");
    ck_assert_int_eq(sws_conf_full_name(&conf, &name, 1), SWS_OK);
    ck_assert_str_eq((char *) name.data, "/etc/conf/mime.types");

    name.data = (u_char *) "/abs/olute!";
    name.len = 9;
    ck_assert_int_eq(sws_conf_full_name(&conf, &name, 1), SWS_OK);
    ck_assert_str_eq((char *) name.data, "/abs/olut");

    /* no conf prefix: the prefix; a prefix without a trailing slash */
    sws_str_set(&cycle.conf_prefix, "");
    sws_str_set(&cycle.prefix, "/p");
    sws_str_set(&name, "x");
    ck_assert_int_eq(sws_conf_full_name(&conf, &name, 1), SWS_OK);
    ck_assert_str_eq((char *) name.data, "/p/x");

    sws_str_set(&cycle.prefix, "");
    sws_str_set(&name, "rel");
    ck_assert_int_eq(sws_conf_full_name(&conf, &name, 0), SWS_OK);
    ck_assert_str_eq((char *) name.data, "rel");

    /* http confs only in http contexts */
    conf.ctx = &test_http_ctx;
    ck_assert_ptr_null(sws_conf_http_loc_conf(&conf, &mod_a));
    conf.cmd_type = SWS_HTTP_LOC_CONF;
    ck_assert_ptr_eq(sws_conf_http_loc_conf(&conf, &mod_b), &other_conf);
}
END_TEST

START_TEST(test_setters_ok)
{
    sws_str_t  *s;

    ck_assert_int_eq(run("flag on;\nnum 42;\nsize 10k;\nmsec \"1h 30m\";\nsec 1500ms;\n"
                         "str hello;\narr a;\narr b c;\nspeed fast;\npath logs/err.log;\n"),
                     SWS_OK);
    ck_assert_int_eq(main_conf.flag, 1);
    ck_assert_int_eq(main_conf.num, 42);
    ck_assert_uint_eq(main_conf.size, 10240);
    ck_assert_int_eq(main_conf.msec, 5400000);
    ck_assert_int_eq(main_conf.sec, 1);
    ck_assert_str_eq((char *) main_conf.str.data, "hello");
    ck_assert_uint_eq(main_conf.str.len, 5);
    ck_assert_ptr_nonnull(main_conf.arr);
    ck_assert_uint_eq(main_conf.arr->nelts, 3);
    s = main_conf.arr->elts;
    ck_assert_str_eq((char *) s[0].data, "a");
    ck_assert_str_eq((char *) s[2].data, "c");
    ck_assert_uint_eq(main_conf.en, 2);
    ck_assert_str_eq((char *) main_conf.path.data, "/pfx/logs/err.log");

    test_conf_init(&main_conf);
    ck_assert_int_eq(run("flag off;\nnum 0;\nsize 1m;\nmsec 250ms;\nsec 1m;\nstr \"\";\n"
                         "speed slow;\npath /abs;\n"), SWS_OK);
    ck_assert_int_eq(main_conf.flag, 0);
    ck_assert_int_eq(main_conf.num, 0);
    ck_assert_uint_eq(main_conf.size, 1048576);
    ck_assert_int_eq(main_conf.msec, 250);
    ck_assert_int_eq(main_conf.sec, 60);
    ck_assert_ptr_nonnull(main_conf.str.data);
    ck_assert_uint_eq(main_conf.str.len, 0);
    ck_assert_uint_eq(main_conf.en, 1);
    ck_assert_str_eq((char *) main_conf.path.data, "/abs");

    test_conf_init(&main_conf);
    ck_assert_int_eq(run("status 429;\nredirect 308;\nlevel notice;\n"), SWS_OK);
    ck_assert_int_eq(main_conf.status, 429);
    ck_assert_int_eq(main_conf.redirect, 308);
    ck_assert_uint_eq(main_conf.level, SWS_LOG_NOTICE);
    test_conf_init(&main_conf);
    ck_assert_int_eq(run("status 400;\nredirect 399;\nlevel info;\n"), SWS_OK);
    ck_assert_int_eq(main_conf.status, 400);
    ck_assert_uint_eq(main_conf.level, SWS_LOG_INFO);
    test_conf_init(&main_conf);
    ck_assert_int_eq(run("status 599;\nlevel error;\n"), SWS_OK);
    ck_assert_int_eq(main_conf.status, 599);
    ck_assert_uint_eq(main_conf.level, SWS_LOG_ERR);
}
END_TEST

START_TEST(test_setters_invalid)
{
    run_error("flag maybe;\n",
              "invalid value \"maybe\" in \"flag\" directive, it must be \"on\" or \"off\"", 1);
    run_error("num 4x;\n", "invalid value \"4x\" in \"num\" directive", 1);
    run_error("num -1;\n", "invalid value \"-1\" in \"num\" directive", 1);
    run_error("num 99999999999999999999;\n", "invalid value \"99999999999999999999\" in \"num\" directive", 1);
    run_error("size 10q;\n", "invalid value \"10q\" in \"size\" directive", 1);
    run_error("msec abc;\n", "invalid value \"abc\" in \"msec\" directive", 1);
    run_error("sec \"\";\n", "invalid value \"\" in \"sec\" directive", 1);
    run_error("speed FAST;\n",
              "invalid value \"FAST\" in \"speed\" directive, it must be one of \"slow\", \"fast\"", 1);
    ck_assert_uint_eq(main_conf.en, SWS_UNSET_UINT);
    run_error("status 200;\n", "value must be between 400 and 599 in \"status\"", 1);
    run_error("status 600;\n", "value must be between 400 and 599 in \"status\"", 1);
    run_error("status 4040;\n", "value must be between 400 and 599 in \"status\"", 1);
    run_error("status 40x;\n", "value must be between 400 and 599 in \"status\"", 1);
    run_error("redirect 404;\n", "value must be between 300 and 399 in \"redirect\"", 1);
    ck_assert_int_eq(main_conf.status, SWS_UNSET);
    run_error("level debug;\n", "invalid value \"debug\" in \"level\" directive, it must be "
              "one of \"info\", \"notice\", \"warn\", \"error\"", 1);
    ck_assert_uint_eq(main_conf.level, SWS_UNSET_UINT);
}
END_TEST

START_TEST(test_setters_duplicate)
{
    run_error("flag on;\nflag off;\n", "\"flag\" directive is duplicate", 2);
    run_error("num 1;\nnum 1;\n", "\"num\" directive is duplicate", 2);
    run_error("size 1;\nsize 1;\n", "\"size\" directive is duplicate", 2);
    run_error("msec 1;\nmsec 1;\n", "\"msec\" directive is duplicate", 2);
    run_error("sec 1;\nsec 1;\n", "\"sec\" directive is duplicate", 2);
    run_error("str \"\";\nstr 1;\n", "\"str\" directive is duplicate", 2);
    run_error("speed slow;\nspeed fast;\n", "\"speed\" directive is duplicate", 2);
    run_error("path a;\npath b;\n", "\"path\" directive is duplicate", 2);
    run_error("status 429;\nstatus 503;\n", "\"status\" directive is duplicate", 2);
    run_error("level warn;\nlevel info;\n", "\"level\" directive is duplicate", 2);
}
END_TEST

START_TEST(test_dispatch_yaml)
{
    sws_conf_node_t  *r;

    log_clear();
    r = read_text("d.yaml", "flag: on\narr: [x, y z]\nloc:\n  where: '\"a b\"'\n");
    ck_assert_msg(r != NULL, "%s", log_text());
    ck_assert_int_eq(sws_conf_dispatch(&conf, r->children), SWS_OK);
    ck_assert_int_eq(main_conf.flag, 1);
    ck_assert_uint_eq(main_conf.arr->nelts, 3);
    ck_assert_str_eq((char *) loc_conf.loc.data, "a b");

    log_clear();
    r = read_text("d.yaml", "flag: on\nnum:\n  - 1\n  - 2\n");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(sws_conf_dispatch(&conf, r->children), SWS_ERROR);
    ck_assert_logged("\"flag\" directive is duplicate in ");
    ck_assert_logged("d.yaml:1\n");
}
END_TEST


/* ---- module loader ---------------------------------------------------- */

static char          sodir[256];
static sws_module_t  builtin_core = {
    .abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR, .name = "core"
};
static const char   *const builtin_http_requires[] = { "core", NULL };
static sws_module_t  builtin_http = {
    .abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR, .name = "http",
    .requires = builtin_http_requires
};

sws_module_t  *sws_builtin_modules[] = { &builtin_core, &builtin_http };
sws_uint_t     sws_builtin_modules_n = 2;

static void
build_module(const char *name, const char *body)
{
    FILE  *f;
    char   src[512], cmd[2048];

    snprintf(src, sizeof(src), "%s/%s.c", sodir, name);
    f = fopen(src, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#include <scalws/sws_module.h>\n%s\n", body);
    fclose(f);

    snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -I'%s' -o '%s/%s.so' '%s'",
             SWS_TEST_INCLUDE_DIR, sodir, name, src);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

#define MODULE(fields) \
    "SWS_EXPORT sws_module_t sws_module = { " fields " };"

static void
loader_build(void)
{
    snprintf(sodir, sizeof(sodir), "%s/mods.XXXXXX", basedir);
    ck_assert_ptr_nonnull(mkdtemp(sodir));

    build_module("good", MODULE(".abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR, "
                                ".name = \"good\""));
    build_module("nosym", "int something_else = 1;");
    {
        char   junk[600];
        FILE  *f;

        snprintf(junk, sizeof(junk), "%s/junk.so", sodir);
        f = fopen(junk, "w");
        ck_assert_ptr_nonnull(f);
        fputs("this is not an ELF file\n", f);
        fclose(f);
    }
    build_module("abi2", MODULE(".abi_major = 2, .abi_minor = 0, .name = \"abi2\""));
    build_module("minor", MODULE(".abi_major = SWS_ABI_MAJOR, .abi_minor = SWS_ABI_MINOR + 1,"
                                 ".name = \"minor\""));
    build_module("older", MODULE(".abi_major = SWS_ABI_MAJOR, .abi_minor = 0,"
                                 ".name = \"older\""));
    build_module("dup", MODULE(".abi_major = 1, .abi_minor = 0, .name = \"good\""));
    build_module("noname", MODULE(".abi_major = 1, .abi_minor = 0, .name = \"\""));
    build_module("nullname", MODULE(".abi_major = 1, .abi_minor = 0"));
    build_module("needy", "static const char *const r[] = { \"core\", \"ghost\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"needy\", .requires = r"));
    build_module("a_needs_z", "static const char *const r[] = { \"zz\", \"http\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"a\", .requires = r"));
    build_module("b_plain", MODULE(".abi_major = 1, .abi_minor = 0, .name = \"b\""));
    build_module("zz", "static const char *const r[] = { \"core\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"zz\", .requires = r"));
    build_module("c1", "static const char *const r[] = { \"c2\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"c1\", .requires = r"));
    build_module("c2", "static const char *const r[] = { \"c3\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"c2\", .requires = r"));
    build_module("c3", "static const char *const r[] = { \"c2\", 0 };\n"
                 MODULE(".abi_major = 1, .abi_minor = 0, .name = \"c3\", .requires = r"));
}

static void
loader_clean(void)
{
    rm_rf(sodir);
}

static void
loader_setup(void)
{
    setup();
    sws_memzero(&cycle, sizeof(cycle));
    cycle.pool = pool;
    cycle.log = &tlog;
}

static char *
so(const char *name)
{
    char  *p = sws_pnalloc(pool, 600);

    snprintf(p, 600, "%s/%s.so", sodir, name);
    return p;
}

/* Load the named .so files (NULL-terminated) as extra paths. */
static sws_int_t
load_list(const char *dir, ...)
{
    va_list       ap;
    const char   *name;
    char        **slot;
    sws_array_t  *extra;

    extra = sws_array_create(pool, 4, sizeof(char *));
    va_start(ap, dir);
    while ((name = va_arg(ap, const char *)) != NULL) {
        slot = sws_array_push(extra);
        *slot = so(name);
    }
    va_end(ap);

    log_clear();
    return sws_modules_load(&cycle, dir, extra);
}

static int
is_loaded(const char *name)
{
    void  *h = dlopen(so(name), RTLD_NOW | RTLD_NOLOAD);

    if (h != NULL) {
        dlclose(h);
    }
    return h != NULL;
}

static void
ck_order(const char *first, ...)
{
    va_list      ap;
    const char  *name = first;
    sws_uint_t   i = 0;

    va_start(ap, first);
    for (i = 0; name != NULL; i++, name = va_arg(ap, const char *)) {
        ck_assert_uint_lt(i, cycle.modules_n);
        ck_assert_str_eq(cycle.modules[i]->name, name);
        ck_assert_uint_eq(cycle.modules[i]->index, i);
        ck_assert_uint_eq(cycle.modules[i]->ctx_index, i);
    }
    va_end(ap);
    ck_assert_uint_eq(i, cycle.modules_n);
}

START_TEST(test_loader_good)
{
    ck_assert_int_eq(load_list(NULL, "good", "older", NULL), SWS_OK);
    ck_order("core", "http", "good", "older", NULL);
    ck_assert_ptr_null(cycle.module_handles[0]);
    ck_assert_ptr_nonnull(cycle.module_handles[2]);
    ck_assert_str_eq(cycle.module_paths[0], "built-in");
    ck_assert_str_eq(cycle.module_paths[2], so("good"));
    ck_assert_ptr_eq(sws_module_find(&cycle, "good"), cycle.modules[2]);
    ck_assert_ptr_null(sws_module_find(&cycle, "nope"));
    ck_assert(is_loaded("good"));

    sws_modules_unload(&cycle);
    ck_assert_uint_eq(cycle.modules_n, 0);
    ck_assert(!is_loaded("good"));

    /* nothing extra: the built-ins only */
    ck_assert_int_eq(sws_modules_load(&cycle, NULL, NULL), SWS_OK);
    ck_order("core", "http", NULL);
    sws_modules_unload(&cycle);
}
END_TEST

static void
load_fails(const char *name, const char *msg)
{
    ck_assert_int_eq(load_list(NULL, "good", name, NULL), SWS_ERROR);
    ck_assert_logged("[emerg]");
    ck_assert_logged(msg);
    ck_assert_uint_eq(cycle.modules_n, 0);
    ck_assert_ptr_null(cycle.modules);
    /* all-or-nothing: good.so was closed again */
    ck_assert(!is_loaded("good"));
    ck_assert(!is_loaded(name));
}

START_TEST(test_loader_refusals)
{
    char  msg[1024];

    snprintf(msg, sizeof(msg), "module \"%s\" has no \"sws_module\" symbol", so("nosym"));
    load_fails("nosym", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" was built for ABI 2.0, this scalwsd has ABI %d.%d",
             so("abi2"), SWS_ABI_MAJOR, SWS_ABI_MINOR);
    load_fails("abi2", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" was built for ABI %d.%d, this scalwsd has ABI %d.%d",
             so("minor"), SWS_ABI_MAJOR, SWS_ABI_MINOR + 1, SWS_ABI_MAJOR, SWS_ABI_MINOR);
    load_fails("minor", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" has the same name \"good\" as module \"%s\"",
             so("dup"), so("good"));
    load_fails("dup", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" has no name", so("noname"));
    load_fails("noname", msg);
    snprintf(msg, sizeof(msg), "module \"%s\" has no name", so("nullname"));
    load_fails("nullname", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" (\"needy\") requires module \"ghost\", "
             "which is not loaded", so("needy"));
    load_fails("needy", msg);

    snprintf(msg, sizeof(msg), "module \"%s\" (\"a\") requires module \"zz\", which is not loaded",
             so("a_needs_z"));
    load_fails("a_needs_z", msg);

    /* not a shared object at all */
    snprintf(msg, sizeof(msg), "dlopen() \"%s\" failed: ", so("junk"));
    load_fails("junk", msg);
}
END_TEST

START_TEST(test_loader_circular)
{
    ck_assert_int_eq(load_list(NULL, "c1", "c2", "c3", NULL), SWS_ERROR);
    ck_assert_logged("(\"c2\") has circular requirements: c2 -> c3 -> c2");
    ck_assert(!is_loaded("c1"));
    ck_assert(!is_loaded("c2"));
}
END_TEST

START_TEST(test_loader_order)
{
    /* a requires zz which sorts later: zz is still initialised first */
    ck_assert_int_eq(load_list(NULL, "a_needs_z", "b_plain", "zz", NULL), SWS_OK);
    ck_order("core", "http", "zz", "a", "b", NULL);
    sws_modules_unload(&cycle);
}
END_TEST

START_TEST(test_conf_param)
{
    sws_str_t arg, v;

    sws_str_set(&arg, "weight=5");
    ck_assert_int_eq(sws_conf_param(&arg, "weight=", &v), 1);
    ck_assert_uint_eq(v.len, 1);
    ck_assert_int_eq(v.data[0], '5');
    sws_str_set(&arg, "weight=");          /* no value */
    ck_assert_int_eq(sws_conf_param(&arg, "weight=", &v), 0);
    sws_str_set(&arg, "weigh=5");
    ck_assert_int_eq(sws_conf_param(&arg, "weight=", &v), 0);
    sws_str_set(&arg, "w");
    ck_assert_int_eq(sws_conf_param(&arg, "weight=", &v), 0);
}
END_TEST

START_TEST(test_loader_dir)
{
    char  link[600], cmd[1400];

    put("mods/readme.txt", "not a module\n");
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' '%s' '%s/mods/' && cp '%s' '%s/mods/b.so.bak'",
             so("zz"), so("a_needs_z"), so("b_plain"), tdir, so("good"), tdir);
    ck_assert_int_eq(system(cmd), 0);

    ck_assert_int_eq(load_list(tpath("mods"), "good", NULL), SWS_OK);
    ck_order("core", "http", "zz", "a", "b", "good", NULL);
    snprintf(link, sizeof(link), "%s/mods/a_needs_z.so", tdir);
    ck_assert_str_eq(cycle.module_paths[3], link);
    sws_modules_unload(&cycle);

    /* a trailing slash is fine */
    snprintf(link, sizeof(link), "%s/", tpath("mods"));
    ck_assert_int_eq(load_list(link, NULL), SWS_OK);
    ck_assert_uint_eq(cycle.modules_n, 5);
    sws_modules_unload(&cycle);

    /* a missing directory holds no modules; a file is an error */
    ck_assert_int_eq(load_list(tpath("no-such-dir"), NULL), SWS_OK);
    ck_order("core", "http", NULL);
    sws_modules_unload(&cycle);

    ck_assert_int_eq(load_list(tpath("mods/readme.txt"), "good", NULL), SWS_ERROR);
    ck_assert_logged("opendir() \"");
    ck_assert_logged("readme.txt\" failed: Not a directory");
    ck_assert_uint_eq(cycle.modules_n, 0);

    /* a module in the directory and the same again as an extra path */
    ck_assert_int_eq(load_list(tpath("mods"), "zz", NULL), SWS_ERROR);
    ck_assert_logged("has the same name \"zz\" as module \"");
}
END_TEST


static Suite *
conf_suite(void)
{
    Suite  *s = suite_create("conf");
    TCase  *tc;

    tc = tcase_create("nginx");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_nginx_quotes_escapes);
    tcase_add_test(tc, test_nginx_comments_blocks);
    tcase_add_test(tc, test_nginx_empty);
    tcase_add_test(tc, test_nginx_errors);
    tcase_add_test(tc, test_nginx_open_failure);
    tcase_add_test(tc, test_include);
    tcase_add_test(tc, test_include_absolute);
    tcase_add_test(tc, test_include_odd_dir);
    tcase_add_test(tc, test_include_errors);
    tcase_add_test(tc, test_include_depth_limit);
    suite_add_tcase(s, tc);

    tc = tcase_create("yaml");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_yaml_same_as_nginx);
    tcase_add_test(tc, test_yaml_tree);
    tcase_add_test(tc, test_yaml_empty);
    tcase_add_test(tc, test_yaml_include);
    tcase_add_test(tc, test_yaml_errors);
    tcase_add_test(tc, test_dump_quoting);
    tcase_add_test(tc, test_dump_null_root);
    suite_add_tcase(s, tc);

    tc = tcase_create("dispatch");
    tcase_add_checked_fixture(tc, dispatch_setup, teardown);
    tcase_add_test(tc, test_dispatch_errors);
    tcase_add_test(tc, test_dispatch_args);
    tcase_add_test(tc, test_accessors);
    tcase_add_test(tc, test_setters_ok);
    tcase_add_test(tc, test_setters_invalid);
    tcase_add_test(tc, test_setters_duplicate);
    tcase_add_test(tc, test_dispatch_yaml);
    suite_add_tcase(s, tc);

    tc = tcase_create("loader");
    tcase_set_timeout(tc, 60);
    tcase_add_unchecked_fixture(tc, loader_build, loader_clean);
    tcase_add_checked_fixture(tc, loader_setup, teardown);
    tcase_add_test(tc, test_loader_good);
    tcase_add_test(tc, test_loader_refusals);
    tcase_add_test(tc, test_loader_circular);
    tcase_add_test(tc, test_loader_order);
    tcase_add_test(tc, test_loader_dir);
    tcase_add_test(tc, test_conf_param);
    suite_add_tcase(s, tc);

    return s;
}

int
main(void)
{
    int       failed;
    SRunner  *sr;

    strcpy(basedir, "/tmp/sws_test_conf.XXXXXX");
    if (mkdtemp(basedir) == NULL) {
        perror("mkdtemp");
        return EXIT_FAILURE;
    }

    sr = srunner_create(conf_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);

    rm_rf(basedir);

    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
