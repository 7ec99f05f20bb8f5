/*
 * The access log: log_format and access_log, and the LOG phase handler
 * that writes one line per request to every log of the request's location.
 *
 * Each distinct path is opened once per cycle (in the master, so workers
 * inherit the descriptor) and registered in cycle->open_logs for USR1.
 * Without buffer= a line is written with one write(2) (O_APPEND: lines of
 * several workers never interleave); with buffer= lines accumulate in a
 * per-worker buffer written when full, when the flush timer fires, and when
 * the worker exits. A "syslog:" target sends each line as a datagram
 * (sws_syslog.c) and is never buffered, as in nginx.
 */
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_log_internal.h"
#include "sws_syslog.h"
#include "sws_core_module.h"

#define SWS_HTTP_LOG_DEFAULT_BUFFER  (64 * 1024)  /* flush= without buffer= */
#define SWS_HTTP_LOG_DEFAULT_FLUSH   1000         /* ms, buffer= without flush= */
#define SWS_HTTP_LOG_STACK_LINE      2048         /* unbuffered lines up to this */

typedef struct {
    sws_str_t            name;
    sws_http_format_t   *format;
} sws_http_log_fmt_t;

typedef struct {
    sws_str_t            path;         /* absolute, or "stderr" */
    sws_log_t           *log;          /* the descriptor holder */
    sws_cycle_t         *cycle;
    u_char              *start;        /* the buffer; NULL: write each line */
    u_char              *pos;
    u_char              *end;
    sws_msec_t           flush;
    sws_event_t          flush_ev;
    time_t               error_logged; /* last write error report */
} sws_http_log_file_t;

typedef struct {
    sws_http_log_file_t *file;         /* NULL for syslog */
    sws_syslog_peer_t   *syslog;
    sws_http_format_t   *format;
    sws_http_format_t   *cond;         /* if=: no line when empty or "0" */
} sws_http_log_t;

typedef struct sws_http_log_main_conf_s sws_http_log_main_conf_t;
struct sws_http_log_main_conf_s {
    sws_array_t                formats;       /* sws_http_log_fmt_t */
    sws_array_t                files;         /* sws_http_log_file_t * */
    sws_array_t               *default_logs;  /* when no level sets access_log */
    sws_cycle_t               *cycle;
    sws_http_log_main_conf_t  *next;          /* of every live cycle, for exit_worker */
};

typedef struct {
    sws_array_t   *logs;    /* sws_http_log_t; NULL: unset */
    sws_int_t      off;     /* 1: access_log off */
} sws_http_log_loc_conf_t;

static void *sws_http_log_create_main_conf(sws_conf_t *cf);
static void *sws_http_log_create_loc_conf(sws_conf_t *cf);
static char *sws_http_log_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_http_log_postconfiguration(sws_conf_t *cf);
static void sws_http_log_exit_worker(sws_cycle_t *cycle);
static char *sws_http_log_set_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_log_set_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_log_set_file_cache(sws_conf_t *cf, const sws_command_t *cmd,
    void *conf);

static const sws_command_t  sws_http_log_commands[] = {
    { "log_format", SWS_HTTP_MAIN_CONF | SWS_CONF_2MORE,
      sws_http_log_set_format, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "access_log", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
                    | SWS_CONF_TAKE1234,
      sws_http_log_set_log, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "open_log_file_cache", SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF
                             | SWS_CONF_TAKE1234,
      sws_http_log_set_file_cache, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

sws_module_t  sws_http_log_module = {
    SWS_MODULE_ABI,
    "http_log",
    NULL,
    sws_http_log_commands,
    sws_http_log_create_main_conf,
    NULL,
    NULL,
    NULL,
    sws_http_log_create_loc_conf,
    sws_http_log_merge_loc_conf,
    sws_http_log_postconfiguration,
    NULL,
    NULL,
    sws_http_log_exit_worker,
    { { NULL } },
    0, 0
};

static const sws_str_t  sws_http_log_combined =
    sws_string("$remote_addr - $remote_user [$time_local] \"$request\" $status "
               "$body_bytes_sent \"$http_referer\" \"$http_user_agent\"");

/* The main confs of the cycles of this process (a failed reload's cycle
 * unlinks itself when its pool goes). */
static sws_http_log_main_conf_t  *sws_http_log_confs;


/* ---- writing ---- */

static void
sws_http_log_write(sws_http_log_file_t *file, const u_char *data, size_t len)
{
    ssize_t  n;
    int      err = 0;
    time_t   now;

    while (len) {
        n = write(file->log->fd, data, len);
        if (n > 0) {
            data += n;
            len -= (size_t) n;
            continue;
        }
        if (n == -1 && errno == EINTR) {
            continue;
        }
        err = n == -1 ? errno : ENOSPC;
        break;
    }
    if (len == 0) {
        return;
    }

    /* Report at most once a second: a full disk would flood the error log. */
    now = sws_time_sec();
    if (now != file->error_logged) {
        file->error_logged = now;
        sws_log_error(SWS_LOG_ALERT, file->cycle->log, err,
                      "write() to access log \"%s\" failed, %lu bytes lost",
                      (char *) file->path.data, (unsigned long) len);
    }
}

static void
sws_http_log_flush(sws_http_log_file_t *file)
{
    if (file->flush_ev.timer_set) {
        sws_del_timer(&file->flush_ev);
    }
    if (file->start == NULL || file->pos == file->start) {
        return;
    }
    sws_http_log_write(file, file->start, (size_t) (file->pos - file->start));
    file->pos = file->start;
}

static void
sws_http_log_flush_handler(sws_event_t *ev)
{
    sws_http_log_flush(ev->data);
}

/* Pool cleanup, before the descriptor is closed: the last resort for lines
 * still buffered (exit_worker normally wrote them). */
static void
sws_http_log_file_cleanup(void *data)
{
    sws_http_log_file_t  *file = data;

    if (file->start && file->pos != file->start && file->log->fd != -1) {
        sws_http_log_write(file, file->start, (size_t) (file->pos - file->start));
    }
    file->pos = file->start;
}

static void
sws_http_log_line(sws_http_request_t *r, sws_http_log_t *log)
{
    sws_http_log_file_t  *file = log->file;
    u_char                stack[SWS_HTTP_LOG_STACK_LINE], *p;
    sws_str_t             line;
    int                   was_empty;

    if (file->start) {
        /* into the buffer, with the newline; if the buffer has no room
         * left, the line's length is known and its values kept */
        was_empty = file->pos == file->start;
        if (sws_http_format_string(log->format, r, NULL, 1, file->pos,
                                   (size_t) (file->end - file->pos), &line) != SWS_OK)
        {
            sws_http_log_flush(file);
            was_empty = 1;
            if (line.len + 1 > (size_t) (file->end - file->pos)) {
                /* longer than the whole buffer: written on its own, after
                 * the buffer's lines (flushed above), measured again (a
                 * line that long is rare) */
                goto alone;
            }
            line.data = file->pos;
            line.len = (size_t) (sws_http_format_render(log->format, r, file->pos)
                                 - file->pos);
        }
        p = line.data + line.len;
        *p++ = '\n';
        file->pos = p;
        if (was_empty && file->flush > 0 && !file->flush_ev.timer_set) {
            sws_add_timer(&file->flush_ev, file->flush);
        }
        return;
    }

alone:
    if (sws_http_format_string(log->format, r, r->pool, 1, stack, sizeof(stack), &line)
        != SWS_OK)
    {
        sws_log_error(SWS_LOG_ALERT, r->log ? r->log : file->cycle->log, 0,
                      "no memory for an access log line of %lu bytes",
                      (unsigned long) line.len + 1);
        return;
    }
    line.data[line.len++] = '\n';
    sws_http_log_write(file, line.data, line.len);
}

/* One datagram: the syslog header and the line, without a newline. A
 * line the socket does not take is dropped; the drops are reported to the
 * error log at most once a second. */
static void
sws_http_log_syslog(sws_http_request_t *r, sws_http_log_t *log)
{
    sws_syslog_peer_t  *peer = log->syslog;
    u_char              stack[SWS_SYSLOG_HEADER_MAX + SWS_HTTP_LOG_STACK_LINE], *msg, *p;
    size_t              len;
    time_t              now;

    len = sws_http_format_len(log->format, r);
    msg = stack;
    if (len > sizeof(stack) - SWS_SYSLOG_HEADER_MAX) {
        msg = sws_pnalloc(r->pool, SWS_SYSLOG_HEADER_MAX + len);
        if (msg == NULL) {
            return;
        }
    }
    p = sws_syslog_header(peer, peer->severity, msg);
    p = sws_http_format_render(log->format, r, p);
    if (sws_syslog_send(peer, msg, (size_t) (p - msg)) || peer->dropped == peer->reported) {
        return;
    }
    now = sws_time_sec();
    if (now != peer->report_time) {
        peer->report_time = now;
        sws_log_error(SWS_LOG_WARN, r->log, errno,
                      "send() to syslog server \"%s\" failed, %llu access log "
                      "line(s) dropped", peer->name,
                      (unsigned long long) (peer->dropped - peer->reported));
        peer->reported = peer->dropped;
    }
}

/* access_log ... if=COND: the line is written unless COND is empty or "0" */
static int
sws_http_log_cond(sws_http_request_t *r, sws_http_format_t *cond)
{
    u_char     buf[64];
    sws_str_t  v;

    if (sws_http_format_string(cond, r, NULL, 0, buf, sizeof(buf), &v) != SWS_OK) {
        return 1;                       /* longer than "0": true */
    }
    return v.len != 0 && !(v.len == 1 && v.data[0] == '0');
}

static sws_int_t
sws_http_log_handler(sws_http_request_t *r)
{
    sws_http_log_loc_conf_t   *lcf = r->loc_conf[sws_http_log_module.index];
    sws_http_log_main_conf_t  *lmcf;
    sws_array_t               *logs;
    sws_http_log_t            *log;
    sws_uint_t                 i;

    if (lcf == NULL || lcf->off == 1) {
        return SWS_DECLINED;
    }
    logs = lcf->logs;
    if (logs == NULL) {
        lmcf = r->main_conf[sws_http_log_module.index];
        logs = lmcf->default_logs;
        if (logs == NULL) {
            return SWS_DECLINED;
        }
    }

    log = logs->elts;
    for (i = 0; i < logs->nelts; i++) {
        if (log[i].cond == NULL || sws_http_log_cond(r, log[i].cond)) {
            if (log[i].syslog) {
                sws_http_log_syslog(r, &log[i]);
            } else {
                sws_http_log_line(r, &log[i]);
            }
        }
    }
    /* DECLINED: any other LOG handler runs too */
    return SWS_DECLINED;
}

static void
sws_http_log_exit_worker(sws_cycle_t *cycle)
{
    sws_http_log_main_conf_t   *lmcf;
    sws_http_log_file_t       **files;
    sws_uint_t                  i;

    for (lmcf = sws_http_log_confs; lmcf; lmcf = lmcf->next) {
        if (lmcf->cycle != cycle) {
            continue;
        }
        files = lmcf->files.elts;
        for (i = 0; i < lmcf->files.nelts; i++) {
            sws_http_log_flush(files[i]);
        }
    }
}


/* ---- configuration ---- */

static void
sws_http_log_unlink_conf(void *data)
{
    sws_http_log_main_conf_t  **pp;

    for (pp = &sws_http_log_confs; *pp; pp = &(*pp)->next) {
        if (*pp == data) {
            *pp = (*pp)->next;
            return;
        }
    }
}

static void *
sws_http_log_create_main_conf(sws_conf_t *cf)
{
    sws_pool_t                *pool = sws_conf_pool(cf);
    sws_http_log_main_conf_t  *lmcf;
    sws_http_log_fmt_t        *fmt;
    const char                *err;

    lmcf = sws_pcalloc(pool, sizeof(sws_http_log_main_conf_t));
    if (lmcf == NULL
        || sws_array_init(&lmcf->formats, pool, 4, sizeof(sws_http_log_fmt_t)) != SWS_OK
        || sws_array_init(&lmcf->files, pool, 4, sizeof(sws_http_log_file_t *)) != SWS_OK
        || sws_pool_cleanup_add(pool, sws_http_log_unlink_conf, lmcf) != SWS_OK)
    {
        return NULL;
    }
    lmcf->cycle = sws_conf_cycle(cf);
    lmcf->next = sws_http_log_confs;
    sws_http_log_confs = lmcf;

    fmt = sws_array_push(&lmcf->formats);
    if (fmt == NULL) {
        return NULL;
    }
    sws_str_set(&fmt->name, "combined");
    fmt->format = sws_http_format_compile(pool, &sws_http_log_combined,
                                          SWS_HTTP_ESCAPE_DEFAULT, &err);
    if (fmt->format == NULL) {
        sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0, "log_format combined: %s", err);
        return NULL;
    }
    return lmcf;
}

static void *
sws_http_log_create_loc_conf(sws_conf_t *cf)
{
    sws_http_log_loc_conf_t  *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_log_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    lcf->logs = NULL;
    lcf->off = SWS_UNSET;
    return lcf;
}

/* A level without access_log takes its parent's list (or off) whole. */
static char *
sws_http_log_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_log_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    if (conf->logs == NULL && conf->off == SWS_UNSET) {
        conf->logs = prev->logs;
        conf->off = prev->off;
    }
    return SWS_CONF_OK;
}

static sws_http_format_t *
sws_http_log_find_format(sws_http_log_main_conf_t *lmcf, const sws_str_t *name)
{
    sws_http_log_fmt_t  *fmt = lmcf->formats.elts;
    sws_uint_t           i;

    for (i = 0; i < lmcf->formats.nelts; i++) {
        if (sws_str_eq(&fmt[i].name, name)) {
            return fmt[i].format;
        }
    }
    return NULL;
}

/* log_format NAME [escape=default|json|none] STRING... */
static char *
sws_http_log_set_format(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_log_main_conf_t  *lmcf = conf;
    sws_pool_t                *pool = sws_conf_pool(cf);
    sws_uint_t                 nargs = sws_conf_nargs(cf), i = 2;
    sws_str_t                 *name = sws_conf_arg(cf, 1), *arg, text;
    sws_http_log_fmt_t        *fmt;
    int                        escape = SWS_HTTP_ESCAPE_DEFAULT;
    size_t                     len = 0;
    u_char                    *p;
    const char                *err;

    (void) cmd;
    if (sws_http_log_find_format(lmcf, name)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate log_format name \"%.*s\"",
                           (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }

    arg = sws_conf_arg(cf, 2);
    if (arg->len > 7 && memcmp(arg->data, "escape=", 7) == 0) {
        if (sws_str_eq_cstr(arg, "escape=default")) {
            escape = SWS_HTTP_ESCAPE_DEFAULT;
        } else if (sws_str_eq_cstr(arg, "escape=json")) {
            escape = SWS_HTTP_ESCAPE_JSON;
        } else if (sws_str_eq_cstr(arg, "escape=none")) {
            escape = SWS_HTTP_ESCAPE_NONE;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "unknown log format escaping \"%.*s\", it must be "
                               "\"default\", \"json\" or \"none\"",
                               (int) (arg->len - 7), arg->data + 7);
            return SWS_CONF_ERROR;
        }
        i = 3;
        if (nargs < 4) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "log_format \"%.*s\" has no format string",
                               (int) name->len, name->data);
            return SWS_CONF_ERROR;
        }
    }

    /* the strings are joined as they are, like adjacent literals */
    for (sws_uint_t j = i; j < nargs; j++) {
        len += sws_conf_arg(cf, j)->len;
    }
    text.data = p = sws_pnalloc(pool, len ? len : 1);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    for ( ; i < nargs; i++) {
        arg = sws_conf_arg(cf, i);
        p = sws_cpymem(p, arg->data, arg->len);
    }
    text.len = len;

    fmt = sws_array_push(&lmcf->formats);
    if (fmt == NULL) {
        return SWS_CONF_ERROR;
    }
    fmt->name = *name;
    fmt->format = sws_http_format_compile(pool, &text, escape, &err);
    if (fmt->format == NULL) {
        lmcf->formats.nelts--;
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in log_format \"%.*s\"",
                           err, (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

/* The file object of path (absolute or "stderr"), opened on first use. */
static sws_http_log_file_t *
sws_http_log_get_file(sws_conf_t *cf, sws_http_log_main_conf_t *lmcf, const sws_str_t *path)
{
    sws_pool_t            *pool = sws_conf_pool(cf);
    sws_cycle_t           *cycle = sws_conf_cycle(cf);
    sws_http_log_file_t  **files = lmcf->files.elts, *file, **fp;
    sws_log_t            **lp;
    sws_uint_t             i;

    for (i = 0; i < lmcf->files.nelts; i++) {
        if (sws_str_eq(&files[i]->path, path)) {
            return files[i];
        }
    }

    file = sws_pcalloc(pool, sizeof(sws_http_log_file_t));
    fp = sws_array_push(&lmcf->files);
    if (file == NULL || fp == NULL) {
        return NULL;
    }
    *fp = file;
    file->path = *path;
    file->cycle = cycle;
    file->error_logged = -1;
    file->flush_ev.data = file;
    file->flush_ev.handler = sws_http_log_flush_handler;

    /* at the lowest level: the log object only holds the descriptor */
    file->log = sws_log_open(pool, (char *) path->data, SWS_LOG_STDERR);
    if (file->log == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "cannot open access log \"%s\"",
                           (char *) path->data);
        lmcf->files.nelts--;
        return NULL;
    }
    /* registered after sws_log_open's close cleanup, so it runs before it */
    if (sws_pool_cleanup_add(pool, sws_http_log_file_cleanup, file) != SWS_OK) {
        return NULL;
    }
    if (file->log->path) {
        lp = sws_array_push(&cycle->open_logs);
        if (lp == NULL) {
            return NULL;
        }
        *lp = file->log;
    }
    return file;
}

/* Give the file a buffer, or check that the one it has agrees. */
static char *
sws_http_log_set_buffer(sws_conf_t *cf, sws_http_log_file_t *file, size_t size,
    sws_msec_t flush)
{
    if (file->start) {
        if ((size_t) (file->end - file->start) != size || file->flush != flush) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "access_log \"%s\" already has a different buffer or flush",
                               (char *) file->path.data);
            return SWS_CONF_ERROR;
        }
        return SWS_CONF_OK;
    }
    file->start = sws_pnalloc(sws_conf_pool(cf), size);
    if (file->start == NULL) {
        return SWS_CONF_ERROR;
    }
    file->pos = file->start;
    file->end = file->start + size;
    file->flush = flush;
    return SWS_CONF_OK;
}

static sws_http_log_t *
sws_http_log_add(sws_conf_t *cf, sws_http_log_loc_conf_t *lcf, sws_http_log_file_t *file,
    sws_http_format_t *format)
{
    sws_http_log_t  *log;

    if (lcf->logs == NULL) {
        lcf->logs = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_http_log_t));
        if (lcf->logs == NULL) {
            return NULL;
        }
    }
    log = sws_array_push(lcf->logs);
    if (log == NULL) {
        return NULL;
    }
    log->file = file;
    log->syslog = NULL;
    log->format = format;
    log->cond = NULL;
    return log;
}

/* access_log PATH [FORMAT [buffer=SIZE] [flush=TIME] [if=COND]] | off;
 * access_log syslog:... [FORMAT [if=COND]] */
static char *
sws_http_log_set_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_log_loc_conf_t   *lcf = conf;
    sws_http_log_main_conf_t  *lmcf;
    sws_uint_t                 nargs = sws_conf_nargs(cf), i;
    sws_str_t                  path = *sws_conf_arg(cf, 1), *arg, fname, v;
    sws_http_format_t         *format, *cond = NULL;
    sws_http_log_file_t       *file;
    sws_http_log_t            *log;
    sws_syslog_peer_t         *peer;
    const char                *err = NULL;
    int                        failed;
    ssize_t                    size = 0;
    sws_msec_t                 flush = 0;
    char                      *rv;

    (void) cmd;
    if (sws_str_eq_cstr(&path, "off")) {
        if (nargs != 2) {
            return "has parameters after \"off\"";
        }
        lcf->off = 1;
        return SWS_CONF_OK;
    }

    lmcf = sws_conf_http_main_conf(cf, &sws_http_log_module);
    if (lmcf == NULL) {
        return "is not in an http block";
    }
    peer = sws_syslog_conf(cf, &path, &failed);
    if (failed) {
        return SWS_CONF_ERROR;
    }

    sws_str_set(&fname, "combined");
    if (nargs > 2) {
        fname = *sws_conf_arg(cf, 2);
    }
    format = sws_http_log_find_format(lmcf, &fname);
    if (format == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unknown log format \"%.*s\"",
                           (int) fname.len, fname.data);
        return SWS_CONF_ERROR;
    }

    for (i = 3; i < nargs; i++) {
        arg = sws_conf_arg(cf, i);
        if (size == 0 && sws_conf_param(arg, "buffer=", &v)) {
            size = sws_parse_size(&v);
            if (size <= 0) {
                goto invalid;
            }
        } else if (flush == 0 && sws_conf_param(arg, "flush=", &v)) {
            flush = sws_parse_time_ms(&v);
            if (flush <= 0) {
                goto invalid;
            }
        } else if (cond == NULL && sws_conf_param(arg, "if=", &v)) {
            cond = sws_http_format_compile(sws_conf_pool(cf), &v, SWS_HTTP_ESCAPE_NONE, &err);
            if (cond == NULL) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%.*s\"",
                                   err ? err : "invalid condition", (int) arg->len,
                                   arg->data);
                return SWS_CONF_ERROR;
            }
        } else {
            goto invalid;
        }
    }

    if (peer) {
        /* nginx's checks, in its order */
        if (flush && size == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "no buffer is defined for access_log \"%.*s\"",
                               (int) path.len, path.data);
            return SWS_CONF_ERROR;
        }
        if (size) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "logs to syslog cannot be buffered");
            return SWS_CONF_ERROR;
        }
        log = sws_http_log_add(cf, lcf, NULL, format);
        if (log == NULL) {
            return SWS_CONF_ERROR;
        }
        log->syslog = peer;
        log->cond = cond;
        return SWS_CONF_OK;
    }

    if (!sws_str_eq_cstr(&path, "stderr")) {
        if (sws_conf_full_name(cf, &path, 0) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    } else {
        path.data = (u_char *) "stderr";
    }

    file = sws_http_log_get_file(cf, lmcf, &path);
    if (file == NULL) {
        return SWS_CONF_ERROR;
    }

    if (size || flush) {
        rv = sws_http_log_set_buffer(cf, file,
                                     size ? (size_t) size : SWS_HTTP_LOG_DEFAULT_BUFFER,
                                     flush ? flush : SWS_HTTP_LOG_DEFAULT_FLUSH);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
    }

    log = sws_http_log_add(cf, lcf, file, format);
    if (log == NULL) {
        return SWS_CONF_ERROR;
    }
    log->cond = cond;
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\" of access_log",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

/* Not where access_log is off. */
static sws_uint_t
sws_http_log_active(const void *conf)
{
    const sws_http_log_loc_conf_t *lcf = conf;

    return lcf != NULL && lcf->off != 1;
}

/* Register the handler; when the http level sets nothing (not even off),
 * requests of levels that set nothing either go to the --http-log-path
 * default (logs/access.log). */
static sws_int_t
sws_http_log_postconfiguration(sws_conf_t *cf)
{
    sws_http_log_main_conf_t  *lmcf = sws_conf_http_main_conf(cf, &sws_http_log_module);
    sws_http_log_loc_conf_t   *lcf = sws_conf_http_loc_conf(cf, &sws_http_log_module);
    sws_http_log_loc_conf_t    dflt = { NULL, SWS_UNSET };
    sws_http_log_file_t       *file;
    sws_str_t                  path;

    if (lmcf == NULL || lcf == NULL) {
        return SWS_ERROR;
    }

    if (lcf->logs == NULL && lcf->off == SWS_UNSET) {
        if (sws_core_default_path(cf, SWS_CORE_PATH_HTTP_LOG, &path) != SWS_OK) {
            return SWS_ERROR;
        }
        file = sws_http_log_get_file(cf, lmcf, &path);
        if (file == NULL
            || sws_http_log_add(cf, &dflt, file,
                                sws_http_log_find_format(lmcf, &(sws_str_t) sws_string("combined")))
               == NULL)
        {
            return SWS_ERROR;
        }
        lmcf->default_logs = dflt.logs;
    }

    {
        sws_http_phase_handler_t h = {
            .phase = SWS_HTTP_LOG_PHASE, .order = SWS_HTTP_ORDER_DEFAULT,
            .handler = sws_http_log_handler, .module = &sws_http_log_module,
            .active = sws_http_log_active
        };
        return sws_http_register_phase_handler(cf, &h);
    }
}


/*
 * open_log_file_cache max=N [inactive=T] [min_uses=N] [valid=T] | off:
 * nginx's cache of the descriptors of logs whose paths hold variables.
 * Paths here hold none: every log file is opened once per configuration,
 * so there is nothing to cache. The parameters are checked as nginx does.
 */
static char *
sws_http_log_set_file_cache(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t   *arg, v;
    sws_uint_t   i, nargs = sws_conf_nargs(cf);
    int          max = 0;

    (void) cmd;
    (void) conf;
    if (nargs == 2 && sws_str_eq_cstr(sws_conf_arg(cf, 1), "off")) {
        return SWS_CONF_OK;
    }
    for (i = 1; i < nargs; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "max=", &v)) {
            if (sws_atoi(v.data, v.len) <= 0) {
                goto invalid;
            }
            max = 1;
        } else if (sws_conf_param(arg, "min_uses=", &v)) {
            if (sws_atoi(v.data, v.len) < 0) {
                goto invalid;
            }
        } else if (sws_conf_param(arg, "inactive=", &v) || sws_conf_param(arg, "valid=", &v)) {
            if (sws_parse_time_ms(&v) < 0) {
                goto invalid;
            }
        } else {
            goto invalid;
        }
    }
    if (!max) {
        return "must have \"max\" parameter";
    }
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid \"open_log_file_cache\" parameter "
                       "\"%.*s\"", (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}
