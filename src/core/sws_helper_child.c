/*
 * Helper processes, the child's side: what a child of the master does to
 * become its helper (close what is the master's, drop privileges, tie its
 * life to the master's, then exec the program or run the function), and
 * the SDK functions a function helper calls from inside (sws_helper.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include "sws_helper_internal.h"
#include "sws_log_internal.h"
#include "sws_process.h"
#include "sws_process_internal.h"
#include "sws_proctitle.h"
#include "../event/sws_event.h"

static sws_helper_t  *sws_helper_self;       /* in a function helper */
static sigset_t       sws_helper_wait_mask;


static void
sws_helper_stop_handler(int signo)
{
    (void) signo;
    if (sws_helper_self != NULL) {
        sws_helper_self->stop = 1;
    }
}


static void
sws_helper_child_fail(sws_helper_t *h, int err, const char *what, const char *arg)
{
    sws_log_error(SWS_LOG_ALERT, h->cycle->log, err, "helper \"%s\": %s \"%s\" failed",
                  (char *) h->name.data, what, arg);
    _exit(SWS_HELPER_EXIT_START);
}


/* A program starts with the signals as a fresh process has them: default
 * actions (ignored SIGPIPE too), nothing blocked. The dispositions are
 * reset before the mask is cleared, so a stop signal that came early
 * takes its default action instead of a flag that exec would forget. */
/* systemd's socket activation (sd_listen_fds(3)): the socket as fd 3 and
 * the variables that say so, LISTEN_PID being this process (exec keeps
 * the pid). A master started by systemd with sockets of its own does not
 * pass its variables on. */
static void
sws_helper_listen_fds(sws_helper_t *h, int sock)
{
    char  pid[32];

    sws_log_t  **logs = h->cycle->open_logs.elts;
    sws_uint_t   i;
    int          moved = -1;

    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDNAMES");
    if (sock == -1) {
        return;
    }
    /* A log file at fd 3 (the error log, opened first) moves aside, so
     * that a failed execv is still logged. */
    for (i = 0; i < h->cycle->open_logs.nelts; i++) {
        if (logs[i]->fd == 3) {
            if (moved == -1) {
                moved = fcntl(3, F_DUPFD_CLOEXEC, 4);
            }
            if (moved != -1) {
                logs[i]->fd = moved;
            }
        }
    }
    if (h->cycle->log->fd == 3 && moved != -1) {
        h->cycle->log->fd = moved;
    }
    if (sock == 3) {
        if (fcntl(3, F_SETFD, 0) == -1) {
            sws_helper_child_fail(h, errno, "fcntl", "3");
        }
    } else if (dup2(sock, 3) == -1) {      /* without FD_CLOEXEC */
        sws_helper_child_fail(h, errno, "dup2", "3");
    } else {
        close(sock);
    }
    snprintf(pid, sizeof(pid), "%ld", (long) getpid());
    if (setenv("LISTEN_FDS", "1", 1) != 0 || setenv("LISTEN_PID", pid, 1) != 0
        || setenv("LISTEN_FDNAMES", (char *) h->fdname.data, 1) != 0)
    {
        sws_helper_child_fail(h, errno, "setenv", "LISTEN_FDS");
    }
}


static void
sws_helper_exec(sws_helper_t *h, int sock)
{
    static const int  sigs[] = {
        SIGHUP, SIGQUIT, SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGCHLD, SIGWINCH, SIGALRM, SIGPIPE
    };
    sws_str_t        *e = h->env.elts;
    sigset_t          none;
    sws_uint_t        i;
    char             *eq;

    /* systemd's socket is the master's: the unit accepts what any of its
     * processes says there (NotifyAccess=all, for a binary upgrade), and an
     * application's READY=1 or STOPPING=1 is not the server's. (An env
     * line of the helper may still set it.) */
    unsetenv("NOTIFY_SOCKET");
    for (i = 0; i < h->env.nelts; i++) {
        eq = strchr((char *) e[i].data, '=');
        *eq = '\0';
        if (setenv((char *) e[i].data, eq + 1, 1) != 0) {
            sws_helper_child_fail(h, errno, "setenv", (char *) e[i].data);
        }
        *eq = '=';
    }
    /* Last, so that fd 3 is the socket whatever was there. */
    sws_helper_listen_fds(h, sock);
    for (i = 0; i < sws_nelems(sigs); i++) {
        signal(sigs[i], SIG_DFL);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    execv(h->path, h->argv);
    sws_helper_child_fail(h, errno, "execv", h->path);
}


static void
sws_helper_function(sws_helper_t *h)
{
    struct sigaction  sa;
    sigset_t          stop;
    char              title[64];

    /* The command line (ps, ps aux) and /proc/PID/comm (top, ps -e:
     * 15 bytes) say which helper this is. */
    snprintf(title, sizeof(title), "scalwsd: helper %s", (char *) h->name.data);
    sws_proctitle_set(title);
    snprintf(title, sizeof(title), "sws:%s", (char *) h->name.data);
    (void) prctl(PR_SET_NAME, title, 0, 0, 0);

    sws_helper_self = h;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sws_helper_stop_handler;
    sigfillset(&sa.sa_mask);
    sigaction(h->stop_signal, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    /* Blocked outside sws_helper_sleep(), like the core's signals. */
    sigemptyset(&stop);
    sigaddset(&stop, h->stop_signal);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    sws_helper_wait_mask = sws_wait_sigmask;
    sigdelset(&sws_helper_wait_mask, h->stop_signal);

    sws_log_error(SWS_LOG_INFO, h->cycle->log, 0, "helper \"%s\" running",
                  (char *) h->name.data);
    exit(h->run(h, h->data));
}


void
sws_helper_child(sws_helper_t *h, int out, int err, int sock, pid_t master)
{
    int  null;

    sws_process = SWS_PROCESS_HELPER;
    sws_pid = getpid();
    sws_log_set_pid(sws_pid);
    sws_quit = sws_terminate = sws_reopen = sws_reconfigure = 0;
    sws_child_exited = sws_noaccept = sws_upgrade = sws_alarm = 0;
    h->master = master;

    /* Nothing of the master's but the configuration: not the other
     * helpers' pipes, not the listening sockets (a helper kept across a
     * reload would hold a port the new configuration dropped), not the
     * other helpers' sockets: its own is kept aside first. */
    if (sock != -1) {
        sock = fcntl(sock, F_DUPFD_CLOEXEC, 3);
        if (sock == -1) {
            sws_helper_child_fail(h, errno, "fcntl", "F_DUPFD_CLOEXEC");
        }
    }
    sws_helpers_close_pipes();
    sws_listening_close(h->cycle, 0);
    if (dup2(out, STDOUT_FILENO) == -1 || dup2(err, STDERR_FILENO) == -1) {
        sws_helper_child_fail(h, errno, "dup2", "stdout");
    }
    close(out);
    close(err);
    /* Not the master's stdin: in the foreground that is a terminal. */
    null = open("/dev/null", O_RDONLY);
    if (null == -1 || dup2(null, STDIN_FILENO) == -1) {
        sws_helper_child_fail(h, errno, "open", "/dev/null");
    }
    if (null != STDIN_FILENO) {
        close(null);
    }

    if (chdir((char *) h->directory.data) == -1) {
        sws_helper_child_fail(h, errno, "chdir", (char *) h->directory.data);
    }
    if (h->uid != (uid_t) -1 && geteuid() == 0
        && sws_switch_user(h->cycle->log, (char *) h->user.data, h->uid, h->gid) != SWS_OK)
    {
        _exit(SWS_HELPER_EXIT_START);
    }
    /* None outlives the master, even one that ignores its stop signal
     * (set after the user switch, which clears it). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1) {
        sws_log_error(SWS_LOG_ALERT, h->cycle->log, errno, "prctl(PR_SET_PDEATHSIG) failed");
    }
    if (getppid() != master) {
        _exit(0);
    }

    if (h->run == NULL) {
        sws_helper_exec(h, sock);
    }
    sws_helper_function(h);
    exit(0);
}


/* ---------------------------------------------------------------- in it */

sws_cycle_t *
sws_helper_cycle(sws_helper_t *h)
{
    return h->cycle;
}


sws_log_t *
sws_helper_log(sws_helper_t *h)
{
    return h->cycle->log;
}


const sws_str_t *
sws_helper_name(sws_helper_t *h)
{
    return &h->name;
}


int
sws_helper_stopping(sws_helper_t *h)
{
    if (!h->stop && h->master != 0 && getppid() != h->master) {
        h->stop = 1;          /* the master is gone */
    }
    return h->stop;
}


static void
sws_helper_reopen_logs(sws_helper_t *h)
{
    sws_log_t  **logs = h->cycle->open_logs.elts;
    sws_uint_t   i;

    for (i = 0; i < h->cycle->open_logs.nelts; i++) {
        if (sws_log_reopen(logs[i]) != SWS_OK) {
            sws_log_error(SWS_LOG_ALERT, h->cycle->log, errno, "cannot reopen log \"%s\"",
                          logs[i]->path ? logs[i]->path : "stderr");
        }
    }
}


sws_int_t
sws_helper_sleep(sws_helper_t *h, sws_msec_t ms)
{
    struct timespec  ts;
    sws_msec_t       deadline, left;

    sws_time_update();
    deadline = sws_current_msec() + ms;

    for ( ;; ) {
        if (sws_reopen) {
            sws_reopen = 0;
            sws_helper_reopen_logs(h);
        }
        if (sws_helper_stopping(h)) {
            return SWS_DONE;
        }
        left = deadline - sws_current_msec();
        if (left <= 0) {
            return SWS_OK;
        }
        ts.tv_sec = left / 1000;
        ts.tv_nsec = (left % 1000) * 1000000;
        (void) ppoll(NULL, 0, &ts, &sws_helper_wait_mask);
        sws_time_update();
    }
}
