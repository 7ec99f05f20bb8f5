/*
 * Temporary files of request bodies (sws_http_temp_file.c): the three
 * fates of a name (unlinked at once, kept, removed with the pool), level
 * subdirectories, close-on-exec, the fd closed with the pool, errors that
 * name the path (missing directory, a full disk), and the master's
 * directory creation.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sws_http_temp_file.h"
#include "sws_log_internal.h"

static struct sws_log_s  tlog;
static sws_pool_t       *pool;
static char              dir[64];
static char              logpath[128];

static void
setup(void)
{
    strcpy(dir, "/tmp/sws_tmpfile_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(logpath, sizeof(logpath), "%s.log", dir);
    tlog.fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(tlog.fd, 0);
    tlog.level = SWS_LOG_DEBUG;
    pool = sws_pool_create(4096, &tlog);
    ck_assert_ptr_nonnull(pool);
    sws_time_update();
}

static void
rm_tree(const char *path)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
}

static void
teardown(void)
{
    if (pool) {
        sws_pool_destroy(pool);
    }
    close(tlog.fd);
    rm_tree(dir);
    unlink(logpath);
}

static sws_http_temp_path_t
path_of(const char *name, size_t l1, size_t l2)
{
    sws_http_temp_path_t p;

    memset(&p, 0, sizeof(p));
    p.name.data = (u_char *) name;
    p.name.len = strlen(name);
    p.level[0] = l1;
    p.level[1] = l2;
    p.sublen = (l1 ? l1 + 1 : 0) + (l2 ? l2 + 1 : 0);
    return p;
}

static int
entries(const char *path)
{
    DIR           *d = opendir(path);
    struct dirent *e;
    int            n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            n++;
        }
    }
    closedir(d);
    return n;
}

static char *
log_text(void)
{
    static char buf[4096];
    int         fd = open(logpath, O_RDONLY);
    ssize_t     n;

    ck_assert_int_ge(fd, 0);
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int
fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

START_TEST(unlinked_at_once_and_closed_with_pool)
{
    sws_http_temp_path_t  p = path_of(dir, 0, 0);
    sws_http_temp_file_t *tf;
    char                  back[16];
    int                   fd;

    tf = sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_UNLINK);
    ck_assert_ptr_nonnull(tf);
    ck_assert_int_eq(entries(dir), 0);              /* no name left */
    ck_assert(fcntl(tf->fd, F_GETFD) & FD_CLOEXEC);
    ck_assert_int_eq(sws_http_temp_file_write(tf, (u_char *) "hello ", 6), SWS_OK);
    ck_assert_int_eq(sws_http_temp_file_write(tf, (u_char *) "world", 5), SWS_OK);
    ck_assert_int_eq(tf->offset, 11);
    ck_assert_int_eq(pread(tf->fd, back, 11, 0), 11);
    ck_assert(memcmp(back, "hello world", 11) == 0);
    fd = tf->fd;
    sws_pool_destroy(pool);
    pool = NULL;
    ck_assert(!fd_open(fd));
}
END_TEST

START_TEST(keep_and_clean)
{
    sws_http_temp_path_t  p = path_of(dir, 0, 0);
    sws_http_temp_file_t *keep, *clean;
    struct stat           st;
    char                  keep_name[128];

    keep = sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_KEEP);
    clean = sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_CLEAN);
    ck_assert_ptr_nonnull(keep);
    ck_assert_ptr_nonnull(clean);
    ck_assert_str_ne(keep->name, clean->name);
    ck_assert_int_eq(entries(dir), 2);
    /* DIR/ and ten digits, mode 0600 */
    ck_assert_uint_eq(strlen(keep->name), strlen(dir) + 1 + 10);
    ck_assert_int_eq(stat(keep->name, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(sws_http_temp_file_write(keep, (u_char *) "kept", 4), SWS_OK);
    snprintf(keep_name, sizeof(keep_name), "%s", keep->name);

    sws_pool_destroy(pool);
    pool = NULL;
    ck_assert_int_eq(entries(dir), 1);
    ck_assert_int_eq(stat(keep_name, &st), 0);
    ck_assert_int_eq(st.st_size, 4);
}
END_TEST

START_TEST(levels_make_subdirectories)
{
    sws_http_temp_path_t  p = path_of(dir, 1, 2);
    sws_http_temp_file_t *tf;
    const char           *name, *digits;
    char                  want[128];
    struct stat           st;

    tf = sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_KEEP);
    ck_assert_ptr_nonnull(tf);
    name = tf->name;
    digits = name + strlen(name) - 10;
    snprintf(want, sizeof(want), "%s/%c/%.2s/%s", dir, digits[9], digits + 7, digits);
    ck_assert_str_eq(name, want);
    ck_assert_int_eq(stat(name, &st), 0);
    /* a second file may reuse the directories or make new ones */
    ck_assert_ptr_nonnull(sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_UNLINK));
}
END_TEST

START_TEST(missing_directory_is_logged)
{
    char                  gone[128];
    sws_http_temp_path_t  p;

    snprintf(gone, sizeof(gone), "%s/gone", dir);
    p = path_of(gone, 0, 0);
    ck_assert_ptr_null(sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_UNLINK));
    ck_assert_ptr_nonnull(strstr(log_text(), gone));
    ck_assert_ptr_nonnull(strstr(log_text(), strerror(ENOENT)));

    /* levels do not hide a missing base directory */
    p = path_of(gone, 2, 0);
    ck_assert_ptr_null(sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_UNLINK));
}
END_TEST

START_TEST(write_error_is_logged)
{
    sws_http_temp_path_t  p = path_of(dir, 0, 0);
    sws_http_temp_file_t *tf;
    int                   full = open("/dev/full", O_WRONLY | O_CLOEXEC);

    if (full == -1) {
        return;                                      /* no /dev/full here */
    }
    tf = sws_http_temp_file_open(pool, &tlog, &p, SWS_HTTP_TEMP_UNLINK);
    ck_assert_ptr_nonnull(tf);
    dup2(full, tf->fd);                              /* the disk is full */
    close(full);
    ck_assert_int_eq(sws_http_temp_file_write(tf, (u_char *) "x", 1), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), tf->name));
    ck_assert_ptr_nonnull(strstr(log_text(), "pwrite()"));
}
END_TEST

START_TEST(master_creates_directory)
{
    char                  sub[128], file[128];
    sws_http_temp_path_t  p;
    struct stat           st;
    int                   fd;

    snprintf(sub, sizeof(sub), "%s/body", dir);
    p = path_of(sub, 0, 0);
    ck_assert_int_eq(sws_http_temp_path_create(&p, (uid_t) -1, &tlog), SWS_OK);
    ck_assert_int_eq(stat(sub, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(st.st_mode & 0777, 0700);
    /* again: already there is fine; a lost owner permission comes back */
    chmod(sub, 0500);
    ck_assert_int_eq(sws_http_temp_path_create(&p, (uid_t) -1, &tlog), SWS_OK);
    ck_assert_int_eq(stat(sub, &st), 0);
    ck_assert_int_eq(st.st_mode & 0700, 0700);
    if (geteuid() == 0) {
        ck_assert_int_eq(sws_http_temp_path_create(&p, 65534, &tlog), SWS_OK);
        ck_assert_int_eq(stat(sub, &st), 0);
        ck_assert_int_eq(st.st_uid, 65534);
    }

    /* a file in the way, a missing parent */
    snprintf(file, sizeof(file), "%s/file", dir);
    fd = open(file, O_WRONLY | O_CREAT, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
    p = path_of(file, 0, 0);
    ck_assert_int_eq(sws_http_temp_path_create(&p, (uid_t) -1, &tlog), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "is not a directory"));
    snprintf(sub, sizeof(sub), "%s/no/such", dir);
    p = path_of(sub, 0, 0);
    ck_assert_int_eq(sws_http_temp_path_create(&p, (uid_t) -1, &tlog), SWS_ERROR);
    ck_assert_ptr_nonnull(strstr(log_text(), "mkdir("));
}
END_TEST

static Suite *
temp_file_suite(void)
{
    Suite *s = suite_create("http_temp_file");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, unlinked_at_once_and_closed_with_pool);
    tcase_add_test(tc, keep_and_clean);
    tcase_add_test(tc, levels_make_subdirectories);
    tcase_add_test(tc, missing_directory_is_logged);
    tcase_add_test(tc, write_error_is_logged);
    tcase_add_test(tc, master_creates_directory);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(temp_file_suite());
    int      failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
