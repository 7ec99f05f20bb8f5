/*
 * The error log. Each line is formatted on the stack and written with a
 * single write(2), so lines from several processes sharing the file (opened
 * with O_APPEND) never interleave.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* GNU strerror_r */
#endif
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <scalws/sws_string.h>
#include <scalws/sws_time.h>
#include "sws_log_internal.h"

#define SWS_LOG_LINE_MAX   4096
/* Room kept at the end of a line for ": strerror (errno)\n". */
#define SWS_LOG_ERR_RESERVE 160

static const sws_str_t  sws_log_levels[] = {
    sws_string("notice"),    /* SWS_LOG_STDERR: always written */
    sws_string("emerg"),
    sws_string("alert"),
    sws_string("crit"),
    sws_string("error"),
    sws_string("warn"),
    sws_string("notice"),
    sws_string("info"),
    sws_string("debug"),
};

static sws_log_t  sws_stderr_log = { STDERR_FILENO, SWS_LOG_NOTICE, NULL, NULL, NULL, NULL };
static pid_t      sws_log_pid;
/* The text of the last emerg message (what refuses a configuration). */
static char       sws_log_emerg[512];


sws_log_t *
sws_log_stderr(void)
{
    return &sws_stderr_log;
}


void
sws_log_set_pid(pid_t pid)
{
    sws_log_pid = pid;
}


sws_int_t
sws_log_parse_level(const sws_str_t *name)
{
    sws_uint_t  i;

    for (i = SWS_LOG_EMERG; i <= SWS_LOG_DEBUG; i++) {
        if (sws_str_eq(name, &sws_log_levels[i])) {
            return (sws_int_t) i;
        }
    }
    return SWS_ERROR;
}


static int
sws_log_open_fd(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}


static void
sws_log_close(void *data)
{
    sws_log_t  *log = data;

    if (log->fd > STDERR_FILENO) {
        close(log->fd);
        log->fd = -1;
    }
}


sws_log_t *
sws_log_open(sws_pool_t *pool, const char *path, sws_uint_t level)
{
    sws_log_t  *log;
    size_t      len;
    int         err;

    log = sws_palloc(pool, sizeof(sws_log_t));
    if (log == NULL) {
        return NULL;
    }
    log->level = level;
    log->writer = NULL;
    log->wdata = NULL;
    log->next = NULL;

    if (strcmp(path, "stderr") == 0) {
        log->fd = STDERR_FILENO;
        log->path = NULL;
        return log;
    }

    len = strlen(path) + 1;
    log->path = sws_pnalloc(pool, len);
    if (log->path == NULL) {
        return NULL;
    }
    memcpy(log->path, path, len);

    log->fd = sws_log_open_fd(path);
    if (log->fd == -1) {
        return NULL;
    }
    if (sws_pool_cleanup_add(pool, sws_log_close, log) != SWS_OK) {
        err = errno;
        close(log->fd);
        errno = err;
        return NULL;
    }
    return log;
}


sws_log_t *
sws_log_create_writer(sws_pool_t *pool, sws_uint_t level, sws_log_writer_pt writer,
    void *wdata)
{
    sws_log_t  *log;

    log = sws_palloc(pool, sizeof(sws_log_t));
    if (log == NULL) {
        return NULL;
    }
    log->fd = -1;
    log->level = level;
    log->path = NULL;
    log->writer = writer;
    log->wdata = wdata;
    log->next = NULL;
    return log;
}


void
sws_log_chain(sws_log_t **head, sws_log_t *log)
{
    while (*head && (*head)->level >= log->level) {
        head = &(*head)->next;
    }
    log->next = *head;
    *head = log;
}


sws_int_t
sws_log_reopen(sws_log_t *log)
{
    int  fd, err;

    if (log->path == NULL) {
        return SWS_OK;
    }
    fd = sws_log_open_fd(log->path);
    if (fd == -1) {
        return SWS_ERROR;
    }
    /* dup3 keeps close-on-exec, which dup2 would drop. */
    if (dup3(fd, log->fd, O_CLOEXEC) == -1) {
        err = errno;
        close(fd);
        errno = err;
        return SWS_ERROR;
    }
    close(fd);
    return SWS_OK;
}


int
sws_log_enabled(sws_log_t *log, sws_uint_t level)
{
    if (log == NULL) {
        log = &sws_stderr_log;
    }
    return level <= log->level;
}


void
sws_log_verror(sws_uint_t level, sws_log_t *log, int err, const char *fmt, va_list args)
{
    u_char           line[SWS_LOG_LINE_MAX];
    u_char          *p, *msg, *last = line + sizeof(line);
    char             ebuf[128];
    const char      *estr;
    const sws_str_t *t, *lv;
    ssize_t          n;
    int              saved_errno = errno;

    if (log == NULL) {
        log = &sws_stderr_log;
    }
    if (level > log->level) {
        return;
    }

    t = sws_cached_err_log_time();
    if (t->data == NULL) {
        sws_time_update();
    }
    lv = &sws_log_levels[sws_min(level, (sws_uint_t) SWS_LOG_DEBUG)];

    p = sws_cpymem(line, t->data, t->len);
    *p++ = ' ';
    *p++ = '[';
    p = sws_cpymem(p, lv->data, lv->len);
    *p++ = ']';
    *p++ = ' ';
    p = sws_sprint_uint(p, (uint64_t) (sws_log_pid ? sws_log_pid : getpid()));
    p = sws_cpymem(p, "#0: ", 4);

    msg = p;
    p = sws_vslprintf(p, last - SWS_LOG_ERR_RESERVE, fmt, args);

    if (err) {
        estr = strerror_r(err, ebuf, sizeof(ebuf));
        /* leave one byte for the newline */
        p = sws_slprintf(p, last - 1, ": %s (%d)", estr, err);
    }
    if (level == SWS_LOG_EMERG) {
        n = sws_min(p - msg, (ssize_t) sizeof(sws_log_emerg) - 1);
        memcpy(sws_log_emerg, msg, (size_t) n);
        sws_log_emerg[n] = '\0';
    }
    /* the same line to each log of the chain that takes the level */
    *p = '\n';
    for ( ; log && level <= log->level; log = log->next) {
        if (log->writer) {
            log->writer(log, level, line, (size_t) (p - line));
        } else {
            n = write(log->fd, line, p + 1 - line);
            (void) n;
        }
    }
    errno = saved_errno;
}


const char *
sws_log_last_emerg(void)
{
    return sws_log_emerg;
}


void
sws_log_clear_emerg(void)
{
    sws_log_emerg[0] = '\0';
}


void
sws_log_error(sws_uint_t level, sws_log_t *log, int err, const char *fmt, ...)
{
    va_list  args;

    if (log == NULL) {
        log = &sws_stderr_log;
    }
    if (level > log->level) {
        return;
    }
    va_start(args, fmt);
    sws_log_verror(level, log, err, fmt, args);
    va_end(args);
}
