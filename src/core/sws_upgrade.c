/*
 * Binary upgrade, the old master's side (USR2, as nginx does it): start the
 * binary found at the path this one was started from, with the same
 * command line and the listening sockets (TCP and UDP) inherited: their
 * numbers go in the SCALWS environment variable (sws_listening_env), and
 * the new binary takes them instead of binding again (sws_listening.c), so
 * no connection is refused meanwhile; and in SCALWS_QUIC what keeps the
 * QUIC connections of both binaries' workers (the table of QUIC slots and
 * the BPF maps, sws_udp_slots.h). The pid file and what the master does
 * with the new binary's process are in sws_master.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* execvpe */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sws_process.h"
#include "sws_process_internal.h"
#include "../event/sws_event.h"
#include "../event/sws_udp_steer.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"

extern char **environ;

static char **sws_argv;
static pid_t   sws_upgrade_parent;


/* A copy of the command line, argv[0] made absolute: the master may run
 * in another directory by then, and a helper rewrites the memory of argv
 * (sws_proctitle.c). */
sws_int_t
sws_save_argv(int argc, char *const *argv)
{
    char   cwd[PATH_MAX], *arg0;
    int    i;
    size_t n;

    sws_argv = calloc((size_t) argc + 1, sizeof(char *));
    if (sws_argv == NULL || argc < 1) {
        return SWS_ERROR;
    }
    if (argv[0][0] != '/' && strchr(argv[0], '/') != NULL && getcwd(cwd, sizeof(cwd))) {
        n = strlen(cwd) + 1 + strlen(argv[0]) + 1;
        arg0 = malloc(n);
        if (arg0 == NULL) {
            return SWS_ERROR;
        }
        snprintf(arg0, n, "%s/%s", cwd, argv[0]);
    } else {
        arg0 = strdup(argv[0]);          /* absolute, or found in PATH */
    }
    sws_argv[0] = arg0;
    for (i = 1; i < argc; i++) {
        sws_argv[i] = strdup(argv[i]);
        if (sws_argv[i] == NULL) {
            return SWS_ERROR;
        }
    }
    return arg0 ? SWS_OK : SWS_ERROR;
}


/* Every socket of cycle stays open across exec(). In the child only: the
 * descriptor flags are the child's own after fork(). */
static void
sws_upgrade_keep_sockets(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_uint_t        i, w;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (ls->worker_fds_n == 0) {
            if (ls->fd != -1) {
                (void) fcntl(ls->fd, F_SETFD, 0);
            }
            continue;
        }
        for (w = 0; w < ls->worker_fds_n; w++) {
            if (ls->worker_fds[w] != -1) {
                (void) fcntl(ls->worker_fds[w], F_SETFD, 0);
            }
        }
    }
}


pid_t
sws_upgrade_exec(sws_cycle_t *cycle)
{
    char     *var, *quic, **env;
    size_t    n, i, k;
    pid_t     pid;
    sigset_t  none;

    if (sws_argv == NULL) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, 0, "binary upgrade: the command line "
                      "was not saved");
        return -1;
    }
    var = sws_listening_env(cycle);
    quic = sws_udp_steer_env(cycle);
    for (n = 0; environ[n] != NULL; n++) { /* count */ }
    env = calloc(n + 3, sizeof(char *));
    if (var == NULL || quic == NULL || env == NULL) {
        free(var);
        free(quic);
        free(env);
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "binary upgrade: out of memory");
        return -1;
    }
    for (i = 0, k = 0; i < n; i++) {
        if (strncmp(environ[i], SWS_LISTEN_ENV "=", sizeof(SWS_LISTEN_ENV)) != 0
            && strncmp(environ[i], SWS_QUIC_ENV "=", sizeof(SWS_QUIC_ENV)) != 0)
        {
            env[k++] = environ[i];
        }
    }
    env[k++] = var;
    env[k++] = quic;
    env[k] = NULL;

    pid = fork();
    if (pid == 0) {
        sws_helpers_close_pipes();
        sws_upgrade_keep_sockets(cycle);
        sws_udp_steer_keep(cycle);
        /* A fresh process as far as signals go: the master keeps its
         * handled signals blocked outside its wait. */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        execve(sws_argv[0], sws_argv, env);
        if (errno == ENOENT && strchr(sws_argv[0], '/') == NULL) {
            execvpe(sws_argv[0], sws_argv, env);
        }
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "binary upgrade: execve(\"%s\") failed",
                      sws_argv[0]);
        _exit(1);
    }
    if (pid == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "binary upgrade: fork() failed");
    }
    free(var);
    free(quic);
    free(env);
    return pid;
}


void
sws_upgrade_began(void)
{
    sws_upgrade_parent = getppid();
}


int
sws_upgrade_parent_runs(void)
{
    /* Once it has exited this process has another parent (init, or a
     * subreaper such as systemd). */
    return sws_upgrade_parent > 1 && getppid() == sws_upgrade_parent;
}
