/*
 * Temporary files: a 10-digit name from a per-process counter, created
 * with O_EXCL (another worker may have picked the same number: then the
 * next one), level subdirectories made on first use, plain blocking
 * pwrite, and a pool cleanup that closes the fd and removes the name
 * when asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "sws_http_temp_file.h"

#define SWS_TEMP_DIGITS  10
#define SWS_TEMP_TRIES   64

static uint32_t sws_temp_next;

char *
sws_http_temp_path_parse(sws_conf_t *cf, sws_http_temp_path_t *path)
{
    sws_uint_t  i, n = sws_conf_nargs(cf);
    sws_str_t  *arg;

    sws_memzero(path, sizeof(*path));
    path->name = *sws_conf_arg(cf, 1);
    while (path->name.len > 1 && path->name.data[path->name.len - 1] == '/') {
        path->name.len--;
    }
    if (path->name.len == 0) {
        return "has an empty path";
    }
    if (sws_conf_full_name(cf, &path->name, 0) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    for (i = 2; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (i - 2 >= SWS_HTTP_TEMP_LEVELS || arg->len != 1
            || arg->data[0] < '1' || arg->data[0] > '2')
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid level \"%.*s\": up to %d "
                               "levels of 1 or 2 digits", (int) arg->len, arg->data,
                               SWS_HTTP_TEMP_LEVELS);
            return SWS_CONF_ERROR;
        }
        path->level[i - 2] = (size_t) (arg->data[0] - '0');
        path->sublen += path->level[i - 2] + 1;
    }
    return SWS_CONF_OK;
}

sws_int_t
sws_http_temp_path_create(const sws_http_temp_path_t *path, uid_t uid, sws_log_t *log)
{
    const char  *name = (const char *) path->name.data;
    struct stat  st;

    if (mkdir(name, 0700) == -1 && errno != EEXIST) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "mkdir(\"%s\") failed", name);
        return SWS_ERROR;
    }
    if (stat(name, &st) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "stat(\"%s\") failed", name);
        return SWS_ERROR;
    }
    if (!S_ISDIR(st.st_mode)) {
        sws_log_error(SWS_LOG_EMERG, log, 0, "\"%s\" is not a directory", name);
        return SWS_ERROR;
    }
    if (uid != (uid_t) -1 && st.st_uid != uid && chown(name, uid, (gid_t) -1) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "chown(\"%s\") failed", name);
        return SWS_ERROR;
    }
    if ((st.st_mode & S_IRWXU) != S_IRWXU
        && chmod(name, (st.st_mode & 07777) | S_IRWXU) == -1)
    {
        sws_log_error(SWS_LOG_EMERG, log, errno, "chmod(\"%s\") failed", name);
        return SWS_ERROR;
    }
    return SWS_OK;
}

static void
sws_temp_file_cleanup(void *data)
{
    sws_http_temp_file_t *tf = data;

    if (tf->fd != -1) {
        close(tf->fd);
        tf->fd = -1;
    }
    if (tf->linked && tf->clean && unlink(tf->name) == -1 && errno != ENOENT) {
        sws_log_error(SWS_LOG_CRIT, tf->log, errno, "unlink(\"%s\") failed", tf->name);
    }
}

/* Write the name for number num: DIR/l1/l2/l3/NNNNNNNNNN. */
static void
sws_temp_name(char *buf, const sws_http_temp_path_t *path, uint32_t num)
{
    char    digits[SWS_TEMP_DIGITS + 1], *p;
    size_t  i, end = SWS_TEMP_DIGITS;

    snprintf(digits, sizeof(digits), "%0*u", SWS_TEMP_DIGITS, (unsigned) num);
    p = (char *) sws_cpymem(buf, path->name.data, path->name.len);
    *p++ = '/';
    for (i = 0; i < SWS_HTTP_TEMP_LEVELS && path->level[i]; i++) {
        end -= path->level[i];
        p = (char *) sws_cpymem(p, digits + end, path->level[i]);
        *p++ = '/';
    }
    p = (char *) sws_cpymem(p, digits, SWS_TEMP_DIGITS);
    *p = '\0';
}

/* The level subdirectories of the file name buf, each one made if missing. */
static int
sws_temp_make_levels(char *buf, const sws_http_temp_path_t *path)
{
    size_t  i, at = path->name.len + 1;

    for (i = 0; i < SWS_HTTP_TEMP_LEVELS && path->level[i]; i++) {
        at += path->level[i];
        buf[at] = '\0';
        if (mkdir(buf, 0700) == -1 && errno != EEXIST) {
            buf[at] = '/';
            return -1;
        }
        buf[at] = '/';
        at++;
    }
    return 0;
}

sws_http_temp_file_t *
sws_http_temp_file_open(sws_pool_t *pool, sws_log_t *log, const sws_http_temp_path_t *path,
    sws_uint_t mode)
{
    sws_http_temp_file_t *tf;
    sws_uint_t            tries;
    int                   err, levels_made = 0;

    tf = sws_pcalloc(pool, sizeof(sws_http_temp_file_t));
    if (tf == NULL) {
        return NULL;
    }
    tf->name = sws_pnalloc(pool, path->name.len + 1 + path->sublen + SWS_TEMP_DIGITS + 1);
    if (tf->name == NULL) {
        return NULL;
    }
    tf->fd = -1;
    tf->log = log;
    if (sws_temp_next == 0) {
        /* Different starting points in different workers: fewer EEXIST. */
        sws_temp_next = (uint32_t) getpid() * 100003u + (uint32_t) time(NULL);
    }

    for (tries = 0; tries < SWS_TEMP_TRIES; tries++) {
        sws_temp_name(tf->name, path, sws_temp_next);
        tf->fd = open(tf->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (tf->fd != -1) {
            break;
        }
        err = errno;
        if (err == ENOENT && path->level[0] && !levels_made) {
            levels_made = 1;
            if (sws_temp_make_levels(tf->name, path) == 0) {
                continue;                        /* the same name again */
            }
            err = errno;
        }
        sws_temp_next++;
        if (err != EEXIST) {
            sws_log_error(SWS_LOG_CRIT, log, err, "open() \"%s\" failed", tf->name);
            return NULL;
        }
    }
    if (tf->fd == -1) {
        sws_log_error(SWS_LOG_CRIT, log, EEXIST, "no free temporary file name in \"%s\"",
                      (char *) path->name.data);
        return NULL;
    }
    sws_temp_next++;
    tf->linked = 1;
    tf->clean = mode == SWS_HTTP_TEMP_CLEAN;

    if (sws_pool_cleanup_add(pool, sws_temp_file_cleanup, tf) != SWS_OK) {
        close(tf->fd);
        unlink(tf->name);
        return NULL;
    }
    if (mode == SWS_HTTP_TEMP_UNLINK) {
        if (unlink(tf->name) == -1) {
            sws_log_error(SWS_LOG_CRIT, log, errno, "unlink(\"%s\") failed", tf->name);
        } else {
            tf->linked = 0;
        }
    }
    return tf;
}

sws_int_t
sws_http_temp_file_write(sws_http_temp_file_t *tf, const u_char *p, size_t n)
{
    ssize_t  w;

    while (n) {
        w = pwrite(tf->fd, p, n, tf->offset);
        if (w <= 0) {
            if (w == -1 && errno == EINTR) {
                continue;
            }
            sws_log_error(SWS_LOG_CRIT, tf->log, w == 0 ? ENOSPC : errno, "pwrite() to \"%s\" failed", tf->name);
            return SWS_ERROR;
        }
        p += w;
        n -= (size_t) w;
        tf->offset += w;
    }
    return SWS_OK;
}
