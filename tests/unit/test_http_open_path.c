/*
 * disable_symlinks' path walk (sws_http_open_path.c): every component
 * below the prefix opened with O_NOFOLLOW; links to files and directories,
 * at the end and in the middle; the prefix (from=) not checked, also when
 * it ends inside a name; if_not_owner comparing the link's owner with its
 * target's; errors kept apart (a refused link ELOOP, a file used as a
 * directory ENOTDIR, a missing name ENOENT); and "off" as plain open().
 */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sws_http_open_path.h"

static char dir[64];

static void
mk(const char *rel, const char *content)
{
    char  p[256];
    FILE *f;

    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    if (content == NULL) {
        ck_assert_int_eq(mkdir(p, 0755), 0);
        return;
    }
    f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(content, f);
    fclose(f);
}

static void
ln(const char *target, const char *rel)
{
    char p[256];

    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    ck_assert_int_eq(symlink(target, p), 0);
}

static void
setup(void)
{
    strcpy(dir, "/tmp/sws_openpath_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    mk("root", NULL);
    mk("root/sub", NULL);
    mk("root/sub/f.txt", "F");
    mk("out", NULL);
    mk("out/secret", "S");
    ln("sub", "root/dirlink");
    ln("sub/f.txt", "root/filelink");
    ln("../out/secret", "root/outlink");
    ln("nothing", "root/dangling");
    ln("root", "rootlink");
}

static void
teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* open(rel) under mode with from = the length of dir + from_rel: the fd
 * closed, or -errno. */
static int
try_open(const char *rel, unsigned mode, const char *from_rel)
{
    char                 p[256];
    sws_http_symlinks_t  sl;
    int                  fd;

    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    sl.mode = mode;
    sl.from = from_rel ? strlen(dir) + strlen(from_rel) : 0;
    fd = sws_http_path_open((u_char *) p, strlen(p), &sl, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        return -errno;
    }
    close(fd);
    return 0;
}

static int
try_stat(const char *rel, unsigned mode, const char *from_rel, struct stat *st)
{
    char                 p[256];
    sws_http_symlinks_t  sl;

    snprintf(p, sizeof(p), "%s/%s", dir, rel);
    sl.mode = mode;
    sl.from = from_rel ? strlen(dir) + strlen(from_rel) : 0;
    return sws_http_path_stat((u_char *) p, strlen(p), &sl, st) == 0 ? 0 : -errno;
}

START_TEST(off_follows_everything)
{
    ck_assert_int_eq(try_open("root/outlink", SWS_HTTP_SYMLINKS_OFF, NULL), 0);
    ck_assert_int_eq(try_open("root/dirlink/f.txt", SWS_HTTP_SYMLINKS_OFF, NULL), 0);
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_OFF, NULL), 0);
    ck_assert_int_eq(try_open("root/dangling", SWS_HTTP_SYMLINKS_OFF, NULL), -ENOENT);
}
END_TEST

START_TEST(on_refuses_links_anywhere)
{
    struct stat st;

    ck_assert_int_eq(try_open("root/sub/f.txt", SWS_HTTP_SYMLINKS_ON, NULL), 0);
    ck_assert_int_eq(try_open("root/sub/", SWS_HTTP_SYMLINKS_ON, NULL), 0);
    ck_assert_int_eq(try_open("root/filelink", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    ck_assert_int_eq(try_open("root/outlink", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    ck_assert_int_eq(try_open("root/dirlink/f.txt", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    ck_assert_int_eq(try_open("root/dirlink/", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    ck_assert_int_eq(try_open("root/dangling", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_ON, NULL), -ELOOP);
    /* not links: the errors they always were */
    ck_assert_int_eq(try_open("root/sub/f.txt/x", SWS_HTTP_SYMLINKS_ON, NULL), -ENOTDIR);
    ck_assert_int_eq(try_open("root/missing", SWS_HTTP_SYMLINKS_ON, NULL), -ENOENT);
    ck_assert_int_eq(try_open("root/nodir/x", SWS_HTTP_SYMLINKS_ON, NULL), -ENOENT);
    /* stat the same way */
    ck_assert_int_eq(try_stat("root/sub/f.txt", SWS_HTTP_SYMLINKS_ON, NULL, &st), 0);
    ck_assert(S_ISREG(st.st_mode) && st.st_size == 1);
    ck_assert_int_eq(try_stat("root/sub/", SWS_HTTP_SYMLINKS_ON, NULL, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(try_stat("root/outlink", SWS_HTTP_SYMLINKS_ON, NULL, &st), -ELOOP);
    ck_assert_int_eq(try_stat("root/dirlink/f.txt", SWS_HTTP_SYMLINKS_ON, NULL, &st), -ELOOP);
    ck_assert_int_eq(try_stat("root/dirlink", SWS_HTTP_SYMLINKS_ON, NULL, &st), -ELOOP);
}
END_TEST

START_TEST(from_leaves_the_prefix_alone)
{
    /* "/rootlink" is the prefix: followed; below it checked */
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_ON, "/rootlink"), 0);
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_ON, "/rootlink/"), 0);
    ck_assert_int_eq(try_open("rootlink/outlink", SWS_HTTP_SYMLINKS_ON, "/rootlink"), -ELOOP);
    /* a prefix that ends inside a name checks that name */
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_ON, "/rootl"), -ELOOP);
    /* a prefix longer than the path: all checked */
    ck_assert_int_eq(try_open("rootlink/sub/f.txt", SWS_HTTP_SYMLINKS_ON,
                              "/rootlink/sub/f.txt/and/more"), -ELOOP);
}
END_TEST

START_TEST(if_not_owner_compares_owners)
{
    char p[256];

    ck_assert_int_eq(try_open("root/outlink", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL), 0);
    ck_assert_int_eq(try_open("root/dirlink/f.txt", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL), 0);
    ck_assert_int_eq(try_open("root/dangling", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL), -ENOENT);
    if (geteuid() != 0) {
        return;                 /* changing a link's owner needs root */
    }
    snprintf(p, sizeof(p), "%s/root/outlink", dir);
    ck_assert_int_eq(lchown(p, 65534, 65534), 0);
    snprintf(p, sizeof(p), "%s/root/dirlink", dir);
    ck_assert_int_eq(lchown(p, 65534, 65534), 0);
    ck_assert_int_eq(try_open("root/outlink", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL), -ELOOP);
    ck_assert_int_eq(try_open("root/dirlink/f.txt", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL),
                     -ELOOP);
    ck_assert_int_eq(try_open("root/filelink", SWS_HTTP_SYMLINKS_IF_NOT_OWNER, NULL), 0);
}
END_TEST

START_TEST(bad_paths)
{
    sws_http_symlinks_t sl = { SWS_HTTP_SYMLINKS_ON, 0 };
    char                big[PATH_MAX + 16];

    ck_assert_int_eq(sws_http_path_open((u_char *) "relative", 8, &sl, O_RDONLY), -1);
    ck_assert_int_eq(errno, ENOENT);
    memset(big, 'a', sizeof(big) - 1);
    big[0] = '/';
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(sws_http_path_open((u_char *) big, sizeof(big) - 1, &sl, O_RDONLY), -1);
    ck_assert_int_eq(errno, ENAMETOOLONG);
}
END_TEST

static Suite *
open_path_suite(void)
{
    Suite *s = suite_create("http_open_path");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, off_follows_everything);
    tcase_add_test(tc, on_refuses_links_anywhere);
    tcase_add_test(tc, from_leaves_the_prefix_alone);
    tcase_add_test(tc, if_not_owner_compares_owners);
    tcase_add_test(tc, bad_paths);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(open_path_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
