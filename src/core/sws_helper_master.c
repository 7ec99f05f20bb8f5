/*
 * The master's side of helper processes (sws_helper_internal.h): one entry
 * per helper name, which outlives configurations, holding its process,
 * its restart state and the read ends of its stdout and stderr pipes.
 *
 * The master sleeps in ppoll() on those pipes with the same signal mask as
 * sigsuspend(), so output is logged as it comes, line by line, and signals
 * are handled exactly as before. A helper that dies is restarted after a
 * delay that doubles with each quick death; a stop is its stop signal,
 * then SIGKILL once its stop timeout passed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* ppoll, pipe2 */
#endif
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "sws_helper_internal.h"

/* Output lines longer than this are logged in pieces of this size. */
#define SWS_HELPER_LINE       1024
/* Read at most this much of one pipe per wake-up: a helper that writes
 * without pause cannot keep the master from its signals. */
#define SWS_HELPER_READ_MAX   65536

enum {
    SWS_HELPER_IDLE = 0,     /* no process, none due (exited for good, stopped) */
    SWS_HELPER_RUNNING,
    SWS_HELPER_STOPPING,     /* stop signal sent; SIGKILL at `at` */
    SWS_HELPER_PENDING       /* restart due at `at` */
};

typedef struct {
    int      fd;             /* read end, -1 when closed */
    size_t   len;
    u_char   buf[SWS_HELPER_LINE];
} sws_helper_out_t;

typedef struct sws_helper_proc_s sws_helper_proc_t;
struct sws_helper_proc_s {
    sws_helper_proc_t  *next;
    sws_helper_t       *def;        /* in the current cycle; NULL: dropped by a reload */
    sws_helper_t       *successor;  /* changed by a reload: started once this one exits */
    u_char             *signature;  /* of the definition last started (malloc) */
    size_t              signature_len;
    char                name[SWS_HELPER_NAME_MAX + 1];
    pid_t               pid;
    int                 state;
    int                 stop_signal;
    sws_msec_t          stop_timeout;
    sws_msec_t          started;
    sws_msec_t          stop_sent;  /* when the stop signal went */
    sws_msec_t          at;
    sws_msec_t          backoff;    /* the delay of the next restart */
    unsigned            killed:1;
    sws_helper_out_t    out[2];     /* stdout, stderr */
};

static sws_helper_proc_t  *sws_helper_procs;
static int                 sws_helpers_stopped;    /* the master is going away */
static struct pollfd      *sws_helper_pfds;
static sws_helper_out_t  **sws_helper_pouts;
static sws_uint_t          sws_helper_pfds_n;


static sws_msec_t
sws_helper_now(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (sws_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


/* ---------------------------------------------------------------- output */

static sws_helper_proc_t *
sws_helper_owner(sws_helper_out_t *o)
{
    sws_helper_proc_t  *p;

    for (p = sws_helper_procs; p; p = p->next) {
        if (o == &p->out[0] || o == &p->out[1]) {
            return p;
        }
    }
    return NULL;
}


static void
sws_helper_log_line(sws_cycle_t *cycle, sws_helper_proc_t *p, int stream,
    const u_char *data, size_t len)
{
    if (len > 0 && data[len - 1] == '\r') {
        len--;
    }
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" (pid %ld) %s: %.*s",
                  p->name, (long) p->pid, stream ? "stderr" : "stdout", (int) len, data);
}


/* Log the complete lines in the buffer; a full buffer without a newline
 * is a piece of a long line; at the end (flush) the rest is a line too. */
static void
sws_helper_lines(sws_cycle_t *cycle, sws_helper_proc_t *p, int stream, int flush)
{
    sws_helper_out_t  *o = &p->out[stream];
    u_char            *start = o->buf, *end = o->buf + o->len, *nl;

    while ((nl = memchr(start, '\n', end - start)) != NULL) {
        sws_helper_log_line(cycle, p, stream, start, nl - start);
        start = nl + 1;
    }
    if (start < end && (flush || (start == o->buf && o->len == sizeof(o->buf)))) {
        sws_helper_log_line(cycle, p, stream, start, end - start);
        start = end;
    }
    o->len = end - start;
    memmove(o->buf, start, o->len);
}


static void
sws_helper_out_close(sws_cycle_t *cycle, sws_helper_proc_t *p, int stream)
{
    sws_helper_out_t  *o = &p->out[stream];

    if (o->fd != -1) {
        sws_helper_lines(cycle, p, stream, 1);
        close(o->fd);
        o->fd = -1;
    }
    o->len = 0;
}


static void
sws_helper_read(sws_cycle_t *cycle, sws_helper_proc_t *p, int stream)
{
    sws_helper_out_t  *o = &p->out[stream];
    size_t             total = 0;
    ssize_t            n;

    while (o->fd != -1 && total < SWS_HELPER_READ_MAX) {
        n = read(o->fd, o->buf + o->len, sizeof(o->buf) - o->len);
        if (n > 0) {
            o->len += n;
            total += n;
            sws_helper_lines(cycle, p, stream, 0);
            continue;
        }
        if (n == -1 && errno == EINTR) {
            continue;
        }
        if (n == -1 && errno == EAGAIN) {
            return;
        }
        if (n == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "reading the output of helper "
                          "\"%s\" failed", p->name);
        }
        sws_helper_out_close(cycle, p, stream);     /* EOF: every writer is gone */
    }
}


void
sws_helpers_wait(sws_cycle_t *cycle, const sigset_t *mask)
{
    sws_helper_proc_t  *p;
    sws_uint_t          n = 0, i;
    void               *m;
    int                 k;

    for (p = sws_helper_procs; p; p = p->next) {
        n += (p->out[0].fd != -1) + (p->out[1].fd != -1);
    }
    if (n == 0) {
        sigsuspend(mask);
        return;
    }
    if (n > sws_helper_pfds_n) {
        m = realloc(sws_helper_pfds, n * sizeof(struct pollfd));
        if (m == NULL) {
            sigsuspend(mask);
            return;
        }
        sws_helper_pfds = m;
        m = realloc(sws_helper_pouts, n * sizeof(sws_helper_out_t *));
        if (m == NULL) {
            sigsuspend(mask);
            return;
        }
        sws_helper_pouts = m;
        sws_helper_pfds_n = n;
    }
    i = 0;
    for (p = sws_helper_procs; p; p = p->next) {
        for (k = 0; k < 2; k++) {
            if (p->out[k].fd != -1) {
                sws_helper_pfds[i].fd = p->out[k].fd;
                sws_helper_pfds[i].events = POLLIN;
                sws_helper_pouts[i++] = &p->out[k];
            }
        }
    }

    if (ppoll(sws_helper_pfds, n, NULL, mask) <= 0) {
        return;                                /* a signal (or an error: go on) */
    }
    for (i = 0; i < n; i++) {
        if (sws_helper_pfds[i].revents != 0) {
            p = sws_helper_owner(sws_helper_pouts[i]);
            sws_helper_read(cycle, p, sws_helper_pouts[i] == &p->out[1]);
        }
    }
}


void
sws_helpers_close_pipes(void)
{
    sws_helper_proc_t  *p;

    for (p = sws_helper_procs; p; p = p->next) {
        for (int k = 0; k < 2; k++) {
            if (p->out[k].fd != -1) {
                close(p->out[k].fd);
                p->out[k].fd = -1;
            }
        }
    }
}


/* ---------------------------------------------------------------- start */

/* Take on definition h (first start, or a reload that changed it). */
static sws_int_t
sws_helper_adopt(sws_cycle_t *cycle, sws_helper_proc_t *p, sws_helper_t *h)
{
    u_char  *sig = malloc(h->signature.len ? h->signature.len : 1);

    if (sig == NULL) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "cannot start helper \"%s\"",
                      (char *) h->name.data);
        return SWS_ERROR;
    }
    memcpy(sig, h->signature.data, h->signature.len);
    free(p->signature);
    p->signature = sig;
    p->signature_len = h->signature.len;
    p->def = h;
    p->successor = NULL;
    p->stop_signal = h->stop_signal;
    p->stop_timeout = h->stop_timeout;
    p->backoff = h->backoff_first;
    return SWS_OK;
}


static void
sws_helper_schedule(sws_cycle_t *cycle, sws_helper_proc_t *p, const char *why)
{
    sws_msec_t  delay = p->backoff;

    p->backoff = sws_min(p->backoff * 2, p->def->backoff_max);
    p->state = SWS_HELPER_PENDING;
    p->at = sws_helper_now() + delay;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" %s: restarting it in %ld ms",
                  p->name, why, (long) delay);
}


static void
sws_helper_spawn(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    int    out[2] = { -1, -1 }, err[2] = { -1, -1 };
    pid_t  pid, master = getpid();

    if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "pipe2() failed for helper \"%s\"",
                      p->name);
        goto failed;
    }
    pid = fork();
    if (pid == 0) {
        close(out[0]);
        close(err[0]);
        sws_helper_child(p->def, out[1], err[1], master);
    }
    if (pid == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "fork() failed for helper \"%s\"",
                      p->name);
        goto failed;
    }
    close(out[1]);
    close(err[1]);
    (void) fcntl(out[0], F_SETFL, O_NONBLOCK);
    (void) fcntl(err[0], F_SETFL, O_NONBLOCK);
    p->out[0].fd = out[0];
    p->out[1].fd = err[0];
    p->out[0].len = p->out[1].len = 0;
    p->pid = pid;
    p->state = SWS_HELPER_RUNNING;
    p->killed = 0;
    p->started = sws_helper_now();
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "started helper \"%s\" process %ld",
                  p->name, (long) pid);
    return;

failed:
    for (int k = 0; k < 2; k++) {
        if (out[k] != -1) {
            close(out[k]);
        }
        if (err[k] != -1) {
            close(err[k]);
        }
    }
    sws_helper_schedule(cycle, p, "could not be started");
}


static sws_helper_proc_t *
sws_helper_proc_new(sws_cycle_t *cycle, sws_helper_t *h)
{
    sws_helper_proc_t  *p = calloc(1, sizeof(sws_helper_proc_t));

    if (p == NULL) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "cannot start helper \"%s\"",
                      (char *) h->name.data);
        return NULL;
    }
    snprintf(p->name, sizeof(p->name), "%s", (char *) h->name.data);
    p->out[0].fd = p->out[1].fd = -1;
    if (sws_helper_adopt(cycle, p, h) != SWS_OK) {
        free(p);
        return NULL;
    }
    p->next = sws_helper_procs;
    sws_helper_procs = p;
    return p;
}


void
sws_helpers_start(sws_cycle_t *cycle)
{
    sws_array_t        *defs = sws_helpers_of(cycle);
    sws_helper_t      **hp;
    sws_helper_proc_t  *p;
    sws_uint_t          i;

    if (defs == NULL) {
        return;
    }
    hp = defs->elts;
    for (i = 0; i < defs->nelts; i++) {
        p = sws_helper_proc_new(cycle, hp[i]);
        if (p != NULL) {
            sws_helper_spawn(cycle, p);
        }
    }
}


/* ---------------------------------------------------------------- stop */

static void
sws_helper_signal(sws_cycle_t *cycle, sws_helper_proc_t *p, int signo)
{
    if (kill(p->pid, signo) == -1 && errno != ESRCH) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "kill(%ld, %d) failed",
                      (long) p->pid, signo);
    }
}


static void
sws_helper_stop(sws_cycle_t *cycle, sws_helper_proc_t *p, sws_msec_t timeout)
{
    sws_msec_t  at = sws_helper_now() + timeout;

    if (p->state == SWS_HELPER_STOPPING) {
        p->at = sws_min(p->at, at);
        return;
    }
    if (p->state != SWS_HELPER_RUNNING) {
        p->state = SWS_HELPER_IDLE;
        return;
    }
    sws_helper_signal(cycle, p, p->stop_signal);
    p->state = SWS_HELPER_STOPPING;
    p->stop_sent = at - timeout;
    p->at = at;
}


void
sws_helpers_stop(sws_cycle_t *cycle, sws_msec_t fast)
{
    sws_helper_proc_t  *p;

    if (sws_helpers_stopped && fast == 0) {
        return;                 /* already asked: their deadlines stand */
    }
    if (!sws_helpers_stopped && sws_helpers_live() > 0) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "stopping the helpers");
    }
    for (p = sws_helper_procs; p; p = p->next) {
        p->successor = NULL;
        sws_helper_stop(cycle, p, fast ? sws_min(fast, p->stop_timeout) : p->stop_timeout);
    }
    sws_helpers_stopped = 1;
}


sws_uint_t
sws_helpers_live(void)
{
    sws_helper_proc_t  *p;
    sws_uint_t          n = 0;

    for (p = sws_helper_procs; p; p = p->next) {
        n += p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING;
    }
    return n;
}


static void
sws_helper_remove(sws_helper_proc_t *p)
{
    sws_helper_proc_t  **pp;

    for (pp = &sws_helper_procs; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    free(p->signature);
    free(p);
}


/* ---------------------------------------------------------------- exits */

static void
sws_helper_log_exit(sws_cycle_t *cycle, sws_helper_proc_t *p, int status, int expected)
{
    sws_uint_t  level = expected ? SWS_LOG_NOTICE : SWS_LOG_ALERT;

    if (WIFSIGNALED(status)) {
        sws_log_error(level, cycle->log, 0, "helper \"%s\" process %ld exited on signal %d "
                      "(%s)%s", p->name, (long) p->pid, WTERMSIG(status),
                      strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
    } else {
        sws_log_error(WEXITSTATUS(status) ? SWS_LOG_ALERT : level, cycle->log, 0,
                      "helper \"%s\" process %ld exited with code %d",
                      p->name, (long) p->pid, WEXITSTATUS(status));
    }
}


int
sws_helpers_reaped(sws_cycle_t *cycle, pid_t pid, int status)
{
    sws_helper_proc_t  *p;
    sws_msec_t          now = sws_helper_now();
    int                 failed;

    for (p = sws_helper_procs; p; p = p->next) {
        if (p->pid == pid
            && (p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING))
        {
            break;
        }
    }
    if (p == NULL) {
        return 0;
    }

    /* What it wrote last is read before its end is logged. */
    sws_helper_read(cycle, p, 0);
    sws_helper_read(cycle, p, 1);
    sws_helper_out_close(cycle, p, 0);
    sws_helper_out_close(cycle, p, 1);
    /* a helper that ends its work (code 0, not to be restarted) ends as expected */
    sws_helper_log_exit(cycle, p, status,
                        p->state == SWS_HELPER_STOPPING
                        || (WIFEXITED(status) && WEXITSTATUS(status) == 0 && p->def != NULL
                            && p->def->restart != SWS_HELPER_RESTART_ALWAYS));
    p->pid = 0;

    if (p->state == SWS_HELPER_STOPPING) {
        p->state = SWS_HELPER_IDLE;
        if (p->successor != NULL && !sws_helpers_stopped
            && sws_helper_adopt(cycle, p, p->successor) == SWS_OK)
        {
            sws_helper_spawn(cycle, p);
        } else if (p->def == NULL) {
            sws_helper_remove(p);
        }
        return 1;
    }

    p->state = SWS_HELPER_IDLE;
    failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (sws_helpers_stopped || p->def == NULL
        || p->def->restart == SWS_HELPER_RESTART_NEVER
        || (p->def->restart == SWS_HELPER_RESTART_ON_FAILURE && !failed))
    {
        if (p->def != NULL && !sws_helpers_stopped) {
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is not restarted "
                          "(restart %s)", p->name,
                          p->def->restart == SWS_HELPER_RESTART_NEVER ? "never" : "on-failure");
        }
        return 1;
    }
    if (now - p->started >= p->def->backoff_reset) {
        p->backoff = p->def->backoff_first;      /* it had run well for a while */
    }
    sws_helper_schedule(cycle, p, "died");
    return 1;
}


/* ---------------------------------------------------------------- timers */

sws_msec_t
sws_helpers_next_timer(void)
{
    sws_helper_proc_t  *p;
    sws_msec_t          next = 0;

    for (p = sws_helper_procs; p; p = p->next) {
        if ((p->state == SWS_HELPER_PENDING || (p->state == SWS_HELPER_STOPPING && !p->killed))
            && (next == 0 || p->at < next))
        {
            next = sws_max(p->at, 1);
        }
    }
    return next;
}


void
sws_helpers_run_timers(sws_cycle_t *cycle)
{
    sws_helper_proc_t  *p;
    sws_msec_t          now = sws_helper_now();

    for (p = sws_helper_procs; p; p = p->next) {
        if (now < p->at) {
            continue;
        }
        if (p->state == SWS_HELPER_PENDING) {
            sws_helper_spawn(cycle, p);
        } else if (p->state == SWS_HELPER_STOPPING && !p->killed) {
            sws_log_error(SWS_LOG_WARN, cycle->log, 0, "helper \"%s\" process %ld did not "
                          "stop within %ld ms: killing it", p->name, (long) p->pid,
                          (long) (now - p->stop_sent));
            sws_helper_signal(cycle, p, SIGKILL);
            p->killed = 1;
        }
    }
}


/* ---------------------------------------------------------------- reload */

static sws_helper_t *
sws_helper_find(sws_array_t *defs, const char *name)
{
    sws_helper_t  **hp;
    sws_uint_t      i;

    if (defs == NULL) {
        return NULL;
    }
    hp = defs->elts;
    for (i = 0; i < defs->nelts; i++) {
        if (strcmp((char *) hp[i]->name.data, name) == 0) {
            return hp[i];
        }
    }
    return NULL;
}


void
sws_helpers_reload(sws_cycle_t *cycle)
{
    sws_array_t        *defs = sws_helpers_of(cycle);
    sws_helper_proc_t  *p, *next;
    sws_helper_t      **hp, *h;
    sws_uint_t          i;
    int                 same;

    /* The old definitions went with the old cycle: every entry gets its
     * new one, or none. */
    for (p = sws_helper_procs; p; p = next) {
        next = p->next;
        h = sws_helper_find(defs, p->name);
        p->def = NULL;
        p->successor = NULL;

        if (h == NULL) {
            if (p->state == SWS_HELPER_RUNNING) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is no longer "
                              "configured: stopping it", p->name);
                sws_helper_stop(cycle, p, p->stop_timeout);
            } else if (p->state != SWS_HELPER_STOPPING) {
                sws_helper_remove(p);
            }
            continue;
        }

        same = h->signature.len == p->signature_len
               && memcmp(h->signature.data, p->signature, p->signature_len) == 0;
        if (same && p->state != SWS_HELPER_STOPPING) {
            p->def = h;       /* kept as it is: running, waiting or done */
            if (p->state == SWS_HELPER_RUNNING) {
                sws_log_error(SWS_LOG_INFO, cycle->log, 0, "helper \"%s\" process %ld is "
                              "unchanged: kept", p->name, (long) p->pid);
            }
            continue;
        }
        if (p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING) {
            /* Its successor starts once it has gone, so that the two never
             * run together (an application would find its port taken). */
            if (p->state == SWS_HELPER_RUNNING) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" has changed: "
                              "restarting it", p->name);
            }
            sws_helper_stop(cycle, p, p->stop_timeout);
            p->successor = h;
            continue;
        }
        if (sws_helper_adopt(cycle, p, h) == SWS_OK) {
            sws_helper_spawn(cycle, p);
        }
    }

    if (defs == NULL) {
        return;
    }
    hp = defs->elts;
    for (i = 0; i < defs->nelts; i++) {
        for (p = sws_helper_procs; p; p = p->next) {
            if (strcmp(p->name, (char *) hp[i]->name.data) == 0) {
                break;
            }
        }
        if (p == NULL && (p = sws_helper_proc_new(cycle, hp[i])) != NULL) {
            sws_helper_spawn(cycle, p);
        }
    }
}


/* ---------------------------------------------------------------- misc */

void
sws_helpers_signal_reopen(sws_cycle_t *cycle)
{
    sws_helper_proc_t  *p;

    for (p = sws_helper_procs; p; p = p->next) {
        /* A program's output goes through the master: nothing to reopen. */
        if (p->state == SWS_HELPER_RUNNING && p->def != NULL && p->def->run != NULL) {
            sws_helper_signal(cycle, p, SIGUSR1);
        }
    }
}


void
sws_helpers_free(void)
{
    sws_helper_proc_t  *p, *next;

    sws_helpers_close_pipes();
    for (p = sws_helper_procs; p; p = next) {
        next = p->next;
        free(p->signature);
        free(p);
    }
    sws_helper_procs = NULL;
    free(sws_helper_pfds);
    free(sws_helper_pouts);
    sws_helper_pfds = NULL;
    sws_helper_pouts = NULL;
    sws_helper_pfds_n = 0;
}
