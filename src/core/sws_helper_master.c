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
 *
 * A helper with a socket (sws_helper_set_socket) has it opened here at its
 * first start and kept while it restarts: connections wait in the backlog.
 * Until a start is ready (sws_helper_set_ready_probe) the master checks it
 * on a timer; the callbacks of the running definition hear of its
 * readiness and of every exit.
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
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sws_helper_internal.h"
#include "sws_process.h"
#include "sws_times_internal.h"

/* Output lines longer than this are logged in pieces of this size. */
#define SWS_HELPER_LINE       1024
/* Read at most this much of one pipe per wake-up: a helper that writes
 * without pause cannot keep the master from its signals. */
#define SWS_HELPER_READ_MAX   65536
/* How often a start that is not ready yet is checked, ms. */
#define SWS_HELPER_READY_POLL 50
/* How often a replaced process's work in flight is looked at, ms. */
#define SWS_HELPER_DRAIN_POLL 100
#define SWS_HELPER_BACKLOG    511

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
    unsigned            ready:1;    /* the running process became ready */
    unsigned            timed_out:1; /* stopped for not becoming ready: a failure */
    unsigned            retiring:2; /* dropped by a reload, running until a helper of
                                       its slot is ready (SWS_HELPER_RETIRE_SLOT), or
                                       of its slot's family (_FAMILY: a slot the
                                       configuration no longer has) */
    unsigned            dropped:1;  /* dropped by a reload with nothing to wait for:
                                       stopped once the older workers, which may still
                                       send it requests, have gone */
    /* replaced, its stop waits for its work in flight (def->busy of the
     * helper named drain_for) until drain_until; looked at drain_check */
    char                drain_for[SWS_HELPER_NAME_MAX + 1];
    sws_msec_t          drain_check;     /* 0: not draining */
    sws_msec_t          drain_until;
    unsigned            drain_retiring:2;  /* its retiring before: back to it if
                                              drain_for's process dies */
    char                slot[SWS_HELPER_SLOT_MAX];
    /* a unix path the program listens on itself (its ready probe): the
     * file a dead process left goes when the helper does */
    char                probe_path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
    sws_helper_out_t    out[2];     /* stdout, stderr */

    int                 sock;       /* the handed-off listening socket, -1 */
    struct sockaddr_storage  sock_sa;
    socklen_t           sock_salen;
    int                 probe;      /* a probe connection, -1 */
    uint32_t            backlog;    /* TCP: the backlog at the last check */
    sws_msec_t          ready_check;     /* the next check, 0: none due */
    sws_msec_t          watch_at;        /* the next watch call (def->watch) */
    sws_msec_t          ready_deadline;  /* 0: no limit */
    uint64_t            starts;
    uint64_t            exits;
    int                 last_code;
    int                 last_signo;
};

static sws_helper_proc_t  *sws_helper_procs;
static int                 sws_helpers_stopped;    /* the master is going away */
static struct pollfd      *sws_helper_pfds;
static sws_helper_out_t  **sws_helper_pouts;
static sws_uint_t          sws_helper_pfds_n;


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


int
sws_helpers_wait(sws_cycle_t *cycle, const sigset_t *mask, int extra)
{
    sws_helper_proc_t  *p;
    sws_uint_t          n = extra != -1, i;
    void               *m;
    int                 k, woke = 0;

    for (p = sws_helper_procs; p; p = p->next) {
        n += (p->out[0].fd != -1) + (p->out[1].fd != -1);
    }
    if (n == 0) {
        sigsuspend(mask);
        return 0;
    }
    if (n > sws_helper_pfds_n) {
        m = realloc(sws_helper_pfds, n * sizeof(struct pollfd));
        if (m == NULL) {
            sigsuspend(mask);
            return 0;
        }
        sws_helper_pfds = m;
        m = realloc(sws_helper_pouts, n * sizeof(sws_helper_out_t *));
        if (m == NULL) {
            sigsuspend(mask);
            return 0;
        }
        sws_helper_pouts = m;
        sws_helper_pfds_n = n;
    }
    i = 0;
    if (extra != -1) {
        sws_helper_pfds[0].fd = extra;
        sws_helper_pfds[0].events = POLLIN;
        sws_helper_pouts[i++] = NULL;
    }
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
        return 0;                              /* a signal (or an error: go on) */
    }
    for (i = 0; i < n; i++) {
        if (sws_helper_pfds[i].revents == 0) {
            continue;
        }
        if (sws_helper_pouts[i] == NULL) {
            woke = 1;
            continue;
        }
        p = sws_helper_owner(sws_helper_pouts[i]);
        sws_helper_read(cycle, p, sws_helper_pouts[i] == &p->out[1]);
    }
    return woke;
}


static void sws_helper_socket_close(sws_helper_proc_t *p, int unlink_path);
static void sws_helper_probe_close(sws_helper_proc_t *p);

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
        sws_helper_socket_close(p, 0);
        sws_helper_probe_close(p);
    }
}


/* ---------------------------------------------------------------- sockets */

static void
sws_helper_socket_close(sws_helper_proc_t *p, int unlink_path)
{
    if (p->sock == -1) {
        return;
    }
    close(p->sock);
    p->sock = -1;
    if (unlink_path && p->sock_sa.ss_family == AF_UNIX) {
        (void) unlink(((struct sockaddr_un *) &p->sock_sa)->sun_path);
    }
}


static void
sws_helper_probe_close(sws_helper_proc_t *p)
{
    if (p->probe != -1) {
        close(p->probe);
        p->probe = -1;
    }
}


/* A connection of the master's own, not waited for (the probes): 0
 * connected, 1 in progress (p->probe set either way), -1 refused. */
static int
sws_helper_connect(sws_helper_proc_t *p, const struct sockaddr_storage *sa, socklen_t len)
{
    int  fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), rc;

    if (fd == -1) {
        return -1;
    }
    rc = connect(fd, (const struct sockaddr *) sa, len) == 0 ? 0
         : errno == EINPROGRESS ? 1 : -1;
    if (rc == -1) {
        close(fd);
        return -1;
    }
    p->probe = fd;
    return rc;
}


/* A unix socket path that a dead process left: nobody accepts there. */
static int
sws_helper_stale_path(const struct sockaddr_storage *sa, socklen_t len)
{
    struct stat  st;
    int          fd, stale;

    if (lstat(((const struct sockaddr_un *) sa)->sun_path, &st) == -1 || !S_ISSOCK(st.st_mode)) {
        return 0;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        return 0;
    }
    stale = connect(fd, (const struct sockaddr *) sa, len) == -1 && errno == ECONNREFUSED;
    close(fd);
    return stale;
}


/* The socket file of a program that listened on its own unix path, when
 * nobody listens there any more. */
static void
sws_helper_unlink_probe(sws_helper_proc_t *p)
{
    struct sockaddr_un  sa;

    if (p->probe_path[0] == '\0' || p->pid != 0) {
        return;
    }
    sws_memzero(&sa, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, p->probe_path, sizeof(sa.sun_path));
    if (sws_helper_stale_path((struct sockaddr_storage *) &sa, sizeof(sa))) {
        (void) unlink(p->probe_path);
    }
}


static sws_int_t
sws_helper_socket_open(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    sws_helper_t  *h = p->def;
    int            fd, on = 1, family = h->socket_sa.ss_family;

    fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        goto failed;
    }
    if (family == AF_UNIX) {
        if (sws_helper_stale_path(&h->socket_sa, h->socket_salen)) {
            (void) unlink(((struct sockaddr_un *) &h->socket_sa)->sun_path);
        }
    } else if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1
               || (family == AF_INET6
                   && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) == -1))
    {
        goto failed;
    }
    if (bind(fd, (struct sockaddr *) &h->socket_sa, h->socket_salen) == -1) {
        goto failed;
    }
    /* As nginx does with its unix listeners: the workers, whatever their
     * user, connect to it. */
    if (family == AF_UNIX && chmod(((struct sockaddr_un *) &h->socket_sa)->sun_path, 0666) == -1) {
        goto failed;
    }
    if (listen(fd, SWS_HELPER_BACKLOG) == -1) {
        goto failed;
    }
    p->sock = fd;
    memcpy(&p->sock_sa, &h->socket_sa, sizeof(p->sock_sa));
    p->sock_salen = h->socket_salen;
    sws_log_error(SWS_LOG_INFO, cycle->log, 0, "helper \"%s\" listens on %s",
                  p->name, (char *) h->socket.data);
    return SWS_OK;

failed:
    sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "helper \"%s\": cannot listen on %s",
                  p->name, (char *) h->socket.data);
    if (fd != -1) {
        close(fd);
    }
    return SWS_ERROR;
}


/* The connections waiting in a TCP listener's backlog (UINT32_MAX: not
 * known, a unix socket). */
static uint32_t
sws_helper_backlog(sws_helper_proc_t *p)
{
    struct tcp_info  ti;
    socklen_t        len = sizeof(ti);

    if (p->sock_sa.ss_family == AF_UNIX
        || getsockopt(p->sock, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1)
    {
        return UINT32_MAX;
    }
    return ti.tcpi_unacked;            /* a listener's: its accept queue */
}


/* Before the fork: a connection of the master's own waits in the backlog,
 * so that the program is seen to accept once the backlog is empty. */
static void
sws_helper_queue_probe(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    struct pollfd  pfd;

    sws_helper_probe_close(p);
    if (sws_helper_connect(p, &p->sock_sa, p->sock_salen) == -1) {
        /* a full backlog: that it empties says as much */
        sws_log_error(SWS_LOG_INFO, cycle->log, errno, "helper \"%s\": no probe connection",
                      p->name);
    }
    pfd.fd = p->sock;
    pfd.events = POLLIN;
    (void) poll(&pfd, 1, 100);         /* the handshake is the kernel's: a moment */
    p->backlog = sws_helper_backlog(p);
}


/* 1 if the running start of p is ready. */
static int
sws_helper_check_ready(sws_helper_proc_t *p)
{
    struct pollfd  pfd;
    socklen_t      len = sizeof(int);
    uint32_t       backlog;
    int            err = 0;

    if (p->sock != -1) {
        /* The backlog, the probe in it, was emptied: the program accepts.
         * Under load it may not empty; a TCP backlog shorter than at the
         * last check says as much (only an accept takes from it). */
        pfd.fd = p->sock;
        pfd.events = POLLIN;
        if (poll(&pfd, 1, 0) == 0) {
            return 1;
        }
        backlog = sws_helper_backlog(p);
        if (backlog < p->backlog) {
            return 1;
        }
        p->backlog = backlog;
        return 0;
    }
    if (p->probe == -1) {
        return sws_helper_connect(p, &p->def->probe_sa, p->def->probe_salen) == 0;
    }
    pfd.fd = p->probe;
    pfd.events = POLLOUT;
    if (poll(&pfd, 1, 0) == 0) {
        return 0;                       /* still connecting */
    }
    if (getsockopt(p->probe, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        return 1;
    }
    sws_helper_probe_close(p);          /* refused: again at the next check */
    return 0;
}


static void sws_helper_stop(sws_cycle_t *cycle, sws_helper_proc_t *p, sws_msec_t timeout);

#define SWS_HELPER_RETIRE_SLOT    1
#define SWS_HELPER_RETIRE_FAMILY  2

/* The family of slot "NAME.K": the length of "NAME." (0: none). */
static size_t
sws_helper_family(const char *slot)
{
    const char  *dot = strrchr(slot, '.');

    return dot ? (size_t) (dot - slot) + 1 : 0;
}

/* Whether q, retiring, gives way to p, ready. */
static int
sws_helper_replaces(sws_helper_proc_t *p, sws_helper_proc_t *q)
{
    size_t  f = sws_helper_family(p->slot);

    if (q->retiring == SWS_HELPER_RETIRE_SLOT) {
        return strcmp(q->slot, p->slot) == 0;
    }
    return f > 0 && f == sws_helper_family(q->slot) && strncmp(q->slot, p->slot, f) == 0;
}

/* p, of a slot, is ready: the processes it replaces (a reload dropped
 * their helpers) stop now. Its ready callback came first: an application
 * takes the old process out of its server list before it goes. */
static void
sws_helper_retire(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    sws_helper_proc_t  *q;

    if (p->slot[0] == '\0') {
        return;
    }
    for (q = sws_helper_procs; q; q = q->next) {
        if (q != p && q->retiring && q->state == SWS_HELPER_RUNNING
            && sws_helper_replaces(p, q))
        {
            q->drain_retiring = q->retiring;
            q->retiring = 0;
            if (p->def->busy != NULL && p->def->busy(p->def, q->name, 0, p->def->cb_data)) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" process %ld is "
                              "replaced by helper \"%s\": stopping it once its requests in "
                              "flight are done", q->name, (long) q->pid, p->name);
                memcpy(q->drain_for, p->name, sizeof(q->drain_for));
                q->drain_until = sws_monotonic_msec() + q->stop_timeout;
                q->drain_check = sws_monotonic_msec() + SWS_HELPER_DRAIN_POLL;
                continue;
            }
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" process %ld is "
                          "replaced by helper \"%s\": stopping it", q->name, (long) q->pid,
                          p->name);
            sws_helper_stop(cycle, q, q->stop_timeout);
        }
    }
}


/* q, replaced, waits for its work in flight: done (or its replacement gone,
 * or out of time), it stops; else it is looked at again later. */
static void
sws_helper_drain_timer(sws_cycle_t *cycle, sws_helper_proc_t *q, sws_msec_t now)
{
    sws_helper_proc_t  *p;

    for (p = sws_helper_procs; p; p = p->next) {
        if (strcmp(p->name, q->drain_for) == 0) {
            break;
        }
    }
    if (p != NULL && (p->def == NULL || p->def->busy == NULL)) {
        p = NULL;
    }
    if (p != NULL && p->def->busy(p->def, q->name, now >= q->drain_until, p->def->cb_data)
        && now < q->drain_until)
    {
        q->drain_check = now + SWS_HELPER_DRAIN_POLL;
        return;
    }
    q->drain_check = 0;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" process %ld %s: stopping it",
                  q->name, (long) q->pid, now < q->drain_until ? "has finished its requests"
                  : "still has requests after its stop timeout");
    sws_helper_stop(cycle, q, q->stop_timeout);
}


/* p, ready, died (not stopped): the processes that drained for it are
 * kept, retiring again until its restart (or another helper of their
 * slot) is ready. */
static void
sws_helper_replacement_died(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    sws_helper_proc_t  *q;

    for (q = sws_helper_procs; q; q = q->next) {
        if (q->state != SWS_HELPER_RUNNING || q->drain_check == 0
            || strcmp(q->drain_for, p->name) != 0)
        {
            continue;
        }
        q->drain_check = 0;
        q->retiring = q->drain_retiring;
        sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" process %ld is kept: "
                      "helper \"%s\", which replaced it, died", q->name, (long) q->pid,
                      p->name);
        if (p->def->kept != NULL) {
            p->def->kept(p->def, q->name, p->def->cb_data);
        }
    }
}


/* p, dropped by a reload (its definition and callbacks went with the old
 * configuration), has exited: a helper of its slot's family that is
 * configured forgets it (an application takes it out of its group: it
 * may have died before its replacement was ready, or while it drained). */
static void
sws_helper_forget(sws_helper_proc_t *p)
{
    sws_helper_proc_t  *r;
    size_t              f = sws_helper_family(p->slot);

    if (f == 0) {
        return;
    }
    for (r = sws_helper_procs; r; r = r->next) {
        if (r != p && r->def != NULL && r->def->busy != NULL
            && f == sws_helper_family(r->slot) && strncmp(r->slot, p->slot, f) == 0)
        {
            (void) r->def->busy(r->def, p->name, 1, r->def->cb_data);
            return;
        }
    }
}


static void
sws_helper_became_ready(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    p->ready = 1;
    p->ready_check = 0;
    sws_helper_probe_close(p);
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" process %ld is ready",
                  p->name, (long) p->pid);
    p->watch_at = p->def->watch ? sws_monotonic_msec() + p->def->watch_every : 0;
    if (p->def->on_ready != NULL) {
        p->def->on_ready(p->def, p->pid, p->def->cb_data);
    }
    sws_helper_retire(cycle, p);
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
    /* A socket kept for another address (a reload changed it) goes. */
    if (p->sock != -1
        && (h->socket.data == NULL || h->socket_salen != p->sock_salen
            || memcmp(&h->socket_sa, &p->sock_sa, p->sock_salen) != 0))
    {
        sws_helper_socket_close(p, 1);
    }
    p->def = h;
    p->successor = NULL;
    p->retiring = 0;
    snprintf(p->slot, sizeof(p->slot), "%s", h->slot.data ? (char *) h->slot.data : "");
    snprintf(p->probe_path, sizeof(p->probe_path), "%s",
             h->probe.data != NULL && h->probe_sa.ss_family == AF_UNIX
             ? ((struct sockaddr_un *) &h->probe_sa)->sun_path : "");
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
    p->at = sws_monotonic_msec() + delay;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" %s: restarting it in %ld ms",
                  p->name, why, (long) delay);
}


static void
sws_helper_spawn(sws_cycle_t *cycle, sws_helper_proc_t *p)
{
    int         out[2] = { -1, -1 }, err[2] = { -1, -1 };
    pid_t       pid, master = getpid();
    sws_msec_t  now;

    if (p->def->socket.data != NULL) {
        if (p->sock == -1 && sws_helper_socket_open(cycle, p) != SWS_OK) {
            goto failed;
        }
        sws_helper_queue_probe(cycle, p);
    } else if (p->def->probe.data != NULL && p->def->probe_sa.ss_family == AF_UNIX
               && sws_helper_stale_path(&p->def->probe_sa, p->def->probe_salen))
    {
        /* A program that binds its own unix socket (node's listen(path))
         * fails on the file a dead process left. */
        (void) unlink(((struct sockaddr_un *) &p->def->probe_sa)->sun_path);
    }
    if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1) {
        sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "pipe2() failed for helper \"%s\"",
                      p->name);
        goto failed;
    }
    pid = fork();
    if (pid == 0) {
        close(out[0]);
        close(err[0]);
        sws_helper_child(p->def, out[1], err[1], p->sock, master);
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
    p->ready = 0;
    p->timed_out = 0;
    p->starts++;
    now = sws_monotonic_msec();
    p->started = now;
    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "started helper \"%s\" process %ld",
                  p->name, (long) pid);
    if (p->sock == -1 && p->def->probe.data == NULL) {
        sws_helper_became_ready(cycle, p);      /* nothing to wait for */
    } else {
        p->ready_check = now + SWS_HELPER_READY_POLL;
        p->ready_deadline = p->def->ready_timeout ? now + p->def->ready_timeout : 0;
    }
    return;

failed:
    sws_helper_probe_close(p);
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
    p->sock = p->probe = -1;
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
        if (p != NULL && !hp[i]->dormant) {
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
    sws_msec_t  at = sws_monotonic_msec() + timeout;

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
    sws_helper_socket_close(p, 1);
    sws_helper_probe_close(p);
    sws_helper_unlink_probe(p);
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
    sws_helper_t       *cb;
    sws_helper_exit_t   ex;
    sws_msec_t          now = sws_monotonic_msec();
    int                 failed, timed_out, drop = 0;

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

    /* For the exit callback: the running definition's (a changed helper's
     * old process: its successor's). */
    sws_memzero(&ex, sizeof(ex));
    ex.size = sizeof(ex);
    ex.pid = p->pid;
    ex.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    ex.signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    ex.core_dumped = WIFSIGNALED(status) && WCOREDUMP(status);
    ex.stopped = p->state == SWS_HELPER_STOPPING;
    ex.was_ready = p->ready;
    ex.ran = now - p->started;
    cb = p->def != NULL ? p->def : p->successor;
    p->exits++;
    p->last_code = ex.code;
    p->last_signo = ex.signo;
    p->pid = 0;
    p->ready = 0;
    p->ready_check = 0;
    sws_helper_probe_close(p);
    timed_out = p->timed_out;
    p->timed_out = 0;

    if (p->state == SWS_HELPER_STOPPING && !timed_out) {
        p->state = SWS_HELPER_IDLE;
        if (p->successor != NULL && !sws_helpers_stopped) {
            /* The old process's end is told before its successor can be
             * ready (a helper with nothing to wait for is ready at once). */
            ex.restarting = 1;
            if (cb->on_exit != NULL) {
                cb->on_exit(cb, &ex, cb->cb_data);
            }
            if (sws_helper_adopt(cycle, p, p->successor) == SWS_OK) {
                sws_helper_spawn(cycle, p);
            }
            return 1;
        }
        if (p->def == NULL) {
            sws_helper_forget(p);
            sws_helper_remove(p);
        }
        goto done;
    }

    p->state = SWS_HELPER_IDLE;
    drop = p->def == NULL;
    if (!drop && ex.was_ready && !sws_helpers_stopped) {
        sws_helper_replacement_died(cycle, p);
    }
    failed = timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    if (sws_helpers_stopped || p->def == NULL
        || p->def->restart == SWS_HELPER_RESTART_NEVER
        || (p->def->restart == SWS_HELPER_RESTART_ON_FAILURE && !failed))
    {
        if (p->def != NULL && !sws_helpers_stopped) {
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is not restarted "
                          "(restart %s)", p->name,
                          p->def->restart == SWS_HELPER_RESTART_NEVER ? "never" : "on-failure");
        }
        goto done;
    }
    if (now - p->started >= p->def->backoff_reset) {
        p->backoff = p->def->backoff_first;      /* it had run well for a while */
    }
    sws_helper_schedule(cycle, p, timed_out ? "was not ready" : "died");
    ex.restarting = 1;

done:
    if (cb != NULL && cb->on_exit != NULL) {
        cb->on_exit(cb, &ex, cb->cb_data);
    }
    if (drop) {
        sws_helper_forget(p);
        sws_helper_remove(p);          /* a dropped helper's process ended by itself */
    }
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
        if (p->state == SWS_HELPER_RUNNING && p->ready_check != 0
            && (next == 0 || p->ready_check < next))
        {
            next = p->ready_check;
        }
        if (p->state == SWS_HELPER_RUNNING && p->ready && p->watch_at != 0
            && (next == 0 || p->watch_at < next))
        {
            next = p->watch_at;
        }
        if (p->state == SWS_HELPER_RUNNING && p->drain_check != 0
            && (next == 0 || p->drain_check < next))
        {
            next = p->drain_check;
        }
    }
    return next;
}


/* A start not ready yet: ready now, or out of time (a failed start: it is
 * stopped, then restarted with the backoff), or checked again later. */
static void
sws_helper_ready_timer(sws_cycle_t *cycle, sws_helper_proc_t *p, sws_msec_t now)
{
    if (sws_helper_check_ready(p)) {
        sws_helper_became_ready(cycle, p);
        return;
    }
    if (p->ready_deadline == 0 || now < p->ready_deadline) {
        p->ready_check = now + SWS_HELPER_READY_POLL;
        return;
    }
    sws_log_error(SWS_LOG_ERR, cycle->log, 0, "helper \"%s\" process %ld did not become "
                  "ready within %ld ms", p->name, (long) p->pid, (long) p->def->ready_timeout);
    p->ready_check = 0;
    sws_helper_probe_close(p);
    sws_helper_stop(cycle, p, p->stop_timeout);
    p->timed_out = 1;
}


void
sws_helpers_run_timers(sws_cycle_t *cycle)
{
    sws_helper_proc_t  *p;
    sws_msec_t          now = sws_monotonic_msec();

    for (p = sws_helper_procs; p; p = p->next) {
        if (p->state == SWS_HELPER_RUNNING && p->ready_check != 0 && now >= p->ready_check
            && p->def != NULL)
        {
            sws_helper_ready_timer(cycle, p, now);
            continue;
        }
        if (p->state == SWS_HELPER_RUNNING && p->drain_check != 0 && now >= p->drain_check) {
            sws_helper_drain_timer(cycle, p, now);
            continue;
        }
        if (p->state == SWS_HELPER_RUNNING && p->ready && p->watch_at != 0 && now >= p->watch_at) {
            if (p->def != NULL && p->def->watch != NULL) {
                p->watch_at = now + p->def->watch_every;
                p->def->watch(p->def, p->pid, p->def->cb_data);
            } else {
                p->watch_at = 0;
            }
            continue;
        }
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


/* How a process of this slot, dropped by a reload, waits for its
 * replacement: a helper of defs (started now, not dormant) has the slot
 * (SWS_HELPER_RETIRE_SLOT), or only others of its family
 * (SWS_HELPER_RETIRE_FAMILY: fewer processes), or none (0: it stops). */
static unsigned
sws_helper_slot_taken(sws_array_t *defs, const char *slot)
{
    sws_helper_t  **hp;
    sws_uint_t      i;
    size_t          f = sws_helper_family(slot);
    unsigned        how = 0;

    if (defs == NULL) {
        return 0;
    }
    hp = defs->elts;
    for (i = 0; i < defs->nelts; i++) {
        if (hp[i]->slot.data == NULL || hp[i]->dormant) {
            continue;
        }
        if (strcmp((char *) hp[i]->slot.data, slot) == 0) {
            return SWS_HELPER_RETIRE_SLOT;
        }
        if (f > 0 && f == sws_helper_family((char *) hp[i]->slot.data)
            && strncmp((char *) hp[i]->slot.data, slot, f) == 0)
        {
            how = SWS_HELPER_RETIRE_FAMILY;
        }
    }
    return how;
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
        p->timed_out = 0;          /* a stop by this reload is no failed start */
        p->retiring = 0;
        p->dropped = 0;
        p->drain_check = 0;        /* replaced again below, or kept, or dropped */

        if (h == NULL) {
            p->retiring = p->state == SWS_HELPER_RUNNING && p->ready && p->slot[0] != '\0'
                          ? sws_helper_slot_taken(defs, p->slot) : 0;
            if (p->retiring) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is no longer "
                              "configured: kept until its slot's new helper is ready",
                              p->name);
            } else if (p->state == SWS_HELPER_RUNNING) {
                sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is no longer "
                              "configured: stopping it once the older workers have gone",
                              p->name);
                p->dropped = 1;
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
        if (p == NULL && (p = sws_helper_proc_new(cycle, hp[i])) != NULL
            && !hp[i]->dormant)
        {
            sws_helper_spawn(cycle, p);
        }
    }
    /* A slot whose kept process is ready already (a reload back to it)
     * needs none of the others. */
    for (p = sws_helper_procs; p; p = p->next) {
        if (p->def != NULL && p->ready && p->state == SWS_HELPER_RUNNING) {
            sws_helper_retire(cycle, p);
        }
    }
}


void
sws_helpers_older_workers_gone(sws_cycle_t *cycle)
{
    sws_helper_proc_t  *p;

    for (p = sws_helper_procs; p; p = p->next) {
        if (p->dropped) {
            p->dropped = 0;
            sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, "helper \"%s\" is no longer "
                          "configured: stopping it", p->name);
            sws_helper_stop(cycle, p, p->stop_timeout);
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

    for (p = sws_helper_procs; p; p = p->next) {
        sws_helper_socket_close(p, 1);          /* the master's: unlinked */
        sws_helper_unlink_probe(p);
    }
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


sws_uint_t
sws_helpers_snapshot(sws_server_helper_t *out, sws_uint_t n)
{
    sws_helper_proc_t  *p;
    sws_uint_t          i = 0;

    for (p = sws_helper_procs; p && i < n; p = p->next) {
        if (p->def == NULL && p->pid == 0) {
            continue;                  /* dropped by a reload, and gone */
        }
        sws_memzero(&out[i], sizeof(out[i]));
        out[i].size = sizeof(out[i]);
        memcpy(out[i].name, p->name, sws_min(strlen(p->name), sizeof(out[i].name) - 1));
        out[i].pid = p->pid;
        out[i].running = p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING;
        out[i].ready = p->ready;
        out[i].starts = p->starts;
        out[i].exits = p->exits;
        out[i].last_code = p->last_code;
        out[i].last_signo = p->last_signo;
        i++;
    }
    return i;
}

static sws_helper_proc_t *
sws_helper_proc_of(sws_helper_t *h)
{
    sws_helper_proc_t  *p;

    if (sws_process != SWS_PROCESS_MASTER) {
        return NULL;
    }
    for (p = sws_helper_procs; p; p = p->next) {
        if (p->def == h) {
            return p;
        }
    }
    return NULL;
}


sws_int_t
sws_helper_start_now(sws_helper_t *h)
{
    sws_helper_proc_t  *p = sws_helper_proc_of(h);

    if (p == NULL || sws_helpers_stopped) {
        return SWS_ERROR;
    }
    if (p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING) {
        return SWS_DECLINED;
    }
    p->backoff = h->backoff_first;
    sws_helper_spawn(h->cycle, p);
    return SWS_OK;
}


sws_int_t
sws_helper_stop_now(sws_helper_t *h)
{
    sws_helper_proc_t  *p = sws_helper_proc_of(h);

    if (p == NULL) {
        return SWS_ERROR;
    }
    sws_helper_stop(h->cycle, p, p->stop_timeout);     /* a pending restart is dropped */
    return SWS_OK;
}


sws_int_t
sws_helper_status(sws_helper_t *h, sws_helper_status_t *st)
{
    sws_helper_status_t  s;
    sws_helper_proc_t   *p;

    if (sws_process != SWS_PROCESS_MASTER || st->size < offsetof(sws_helper_status_t, pid)) {
        return SWS_DECLINED;
    }
    for (p = sws_helper_procs; p; p = p->next) {
        if (p->def == h || p->successor == h) {
            break;
        }
    }
    if (p == NULL) {
        return SWS_DECLINED;
    }
    sws_memzero(&s, sizeof(s));
    s.size = sws_min(st->size, sizeof(s));
    s.pid = p->pid;
    s.running = p->state == SWS_HELPER_RUNNING || p->state == SWS_HELPER_STOPPING;
    s.ready = p->ready;
    s.starts = p->starts;
    s.exits = p->exits;
    s.last_code = p->last_code;
    s.last_signo = p->last_signo;
    memcpy(st, &s, s.size);
    return SWS_OK;
}
