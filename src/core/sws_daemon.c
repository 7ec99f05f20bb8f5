/*
 * Daemonising: fork, setsid, and a pipe from the daemon back to the
 * original process so that it exits only once start-up is known to have
 * succeeded or failed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <scalws/sws_log.h>
#include "sws_daemon.h"


/* Point fd at /dev/null. */
static int
sws_daemon_null(int fd, sws_log_t *log)
{
    int  null;

    null = open("/dev/null", O_RDWR);
    if (null == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "cannot open \"/dev/null\"");
        return -1;
    }
    if (null != fd) {
        if (dup2(null, fd) == -1) {
            sws_log_error(SWS_LOG_EMERG, log, errno, "dup2(/dev/null, %d) failed", fd);
            close(null);
            return -1;
        }
        close(null);
    }
    return 0;
}


int
sws_daemon(sws_log_t *log)
{
    int      fds[2];
    char     c;
    ssize_t  n;

    if (pipe2(fds, O_CLOEXEC) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "pipe() failed");
        return -1;
    }

    /* Buffered output would otherwise be written twice. */
    fflush(NULL);

    switch (fork()) {
    case -1:
        sws_log_error(SWS_LOG_EMERG, log, errno, "fork() failed");
        close(fds[0]);
        close(fds[1]);
        return -1;

    case 0:
        break;

    default:
        /* The original process: wait for one byte, or EOF if the daemon
         * died or gave up. */
        close(fds[1]);
        do {
            n = read(fds[0], &c, 1);
        } while (n == -1 && errno == EINTR);
        _exit(n == 1 && c == '1' ? 0 : 1);
    }

    close(fds[0]);

    if (setsid() == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "setsid() failed");
        close(fds[1]);
        return -1;
    }
    if (sws_daemon_null(STDIN_FILENO, log) == -1
        || sws_daemon_null(STDOUT_FILENO, log) == -1)
    {
        close(fds[1]);
        return -1;
    }
    return fds[1];
}


void
sws_daemon_done(int fd, int ok, int keep_stderr, sws_log_t *log)
{
    char  c = ok ? '1' : '0';

    if (ok && !keep_stderr) {
        (void) sws_daemon_null(STDERR_FILENO, log);
    }
    if (write(fd, &c, 1) != 1) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "cannot report start-up to the parent");
    }
    close(fd);
}
