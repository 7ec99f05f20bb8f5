/*
 * Detaching from the terminal. The original process waits until the
 * daemon reports that start-up finished (pid file written), so its exit
 * status tells the caller (a shell, systemd Type=forking) whether the
 * server started, and start-up errors still reach the terminal.
 */
#ifndef SWS_DAEMON_H
#define SWS_DAEMON_H

#include <scalws/sws_types.h>

/* Fork and setsid; stdin and stdout go to /dev/null. Returns in the daemon
 * only, with the fd to give to sws_daemon_done(); the original process
 * exits 0 once the daemon reports success, 1 otherwise (also when the
 * daemon exits without reporting). Returns -1 after logging when it fails
 * (in the original process or the daemon): the caller just exits 1. */
int  sws_daemon(sws_log_t *log);

/* Report start-up success (ok != 0) or failure to the waiting process and
 * close fd. On success stderr goes to /dev/null too, unless keep_stderr
 * (the error log is stderr). */
void sws_daemon_done(int fd, int ok, int keep_stderr, sws_log_t *log);

#endif
