/*
 * The pid file. Written after daemonising, overwritten when it exists (a
 * stale file from a crash must not block a start), removed on exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <scalws/sws_log.h>
#include "sws_pidfile.h"

/* Longest pid file we accept: digits, optional whitespace, some slack. */
#define SWS_PIDFILE_MAX  64


sws_int_t
sws_pidfile_write(const char *path, pid_t pid, sws_log_t *log)
{
    char     buf[32];
    int      fd, len, err;
    ssize_t  n;

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "cannot open pid file \"%s\"", path);
        return SWS_ERROR;
    }

    len = snprintf(buf, sizeof(buf), "%ld\n", (long) pid);
    n = write(fd, buf, (size_t) len);
    err = errno;

    if (close(fd) == -1 && n == len) {
        n = -1;
        err = errno;
    }
    if (n != len) {
        sws_log_error(SWS_LOG_EMERG, log, n == -1 ? err : 0,
                      "cannot write pid file \"%s\"", path);
        return SWS_ERROR;
    }
    return SWS_OK;
}


pid_t
sws_pidfile_read(const char *path, sws_log_t *log)
{
    char     buf[SWS_PIDFILE_MAX + 1];
    ssize_t  n;
    size_t   len, i;
    long     pid;
    int      fd, err;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        if (errno == ENOENT) {
            sws_log_error(SWS_LOG_EMERG, log, 0,
                          "pid file \"%s\" does not exist: is scalwsd running?", path);
        } else {
            sws_log_error(SWS_LOG_EMERG, log, errno, "cannot open pid file \"%s\"", path);
        }
        return SWS_ERROR;
    }

    n = read(fd, buf, SWS_PIDFILE_MAX + 1);
    err = errno;
    close(fd);

    if (n == -1) {
        sws_log_error(SWS_LOG_EMERG, log, err, "cannot read pid file \"%s\"", path);
        return SWS_ERROR;
    }
    if (n > SWS_PIDFILE_MAX) {
        goto invalid;
    }

    /* Digits, then only white space (the newline). */
    len = (size_t) n;
    for (i = 0, pid = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
        pid = pid * 10 + (buf[i] - '0');
        if (pid > INT_MAX) {
            goto invalid;
        }
    }
    if (i == 0) {
        goto invalid;
    }
    for ( /* void */ ; i < len; i++) {
        if (buf[i] != '\n' && buf[i] != '\r' && buf[i] != ' ' && buf[i] != '\t') {
            goto invalid;
        }
    }
    if (pid <= 1) {
        /* 0 would signal our own process group, 1 is init */
        goto invalid;
    }
    return (pid_t) pid;

invalid:
    sws_log_error(SWS_LOG_EMERG, log, 0, "invalid pid in pid file \"%s\"", path);
    return SWS_ERROR;
}


sws_int_t
sws_pidfile_delete(const char *path, sws_log_t *log)
{
    if (unlink(path) == -1 && errno != ENOENT) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "cannot delete pid file \"%s\"", path);
        return SWS_ERROR;
    }
    return SWS_OK;
}
