"""
A third-party module for the helper process tests, built against the SDK
(<scalws/sws_helper.h>). In http { }:

  test_helper_function NAME FILE INTERVAL;
      a function helper: every INTERVAL it writes "PID COUNT" to FILE (by a
      rename, so a reader never sees half a file), adds one to a counter in
      the shared zone "test_helper", and logs "tick NAME COUNT"; it prints
      one line to stdout when it starts and logs its count when it stops.
  test_helper_program NAME PROGRAM [ARG...];   a program helper
  test_helper_env NAME VAR VALUE;
  test_helper_dir NAME DIR;
  test_helper_user NAME USER [GROUP];
  test_helper_restart NAME always|on-failure|never;
  test_helper_backoff NAME FIRST MAX RESET;    (times: 100ms, 2s ...)
  test_helper_stop NAME TERM|INT|QUIT|HUP|USR1|USR2|KILL TIMEOUT;
  test_helper_ticks;       (location) answers "ticks N", the shared counter
  test_helper_socket NAME ADDR [FDNAME];       socket handoff (ABI 1.7)
  test_helper_probe NAME ADDR;
  test_helper_ready_timeout NAME TIME;
  test_helper_events NAME FILE [GROUP ADDR];
      the ready and exit callbacks append a line to FILE:
        "ready NAME PID"
        "exit NAME PID code=C signal=S core=0 stopped=0|1 ready=0|1
         restarting=0|1 starts=N exits=N" (the last two: sws_helper_status)
      with GROUP: ready adds ADDR to that upstream's run-time list, exit
      drains it (by the list's handle, resolved once and kept across
      reloads), and the result follows:
      "add OK|BUSY|DECLINED|ERROR", "drain ..."

Every setting names a helper declared above it.
"""
from pathlib import Path

import swsharness as h

SOURCE = r"""
#include <stdio.h>
#include <signal.h>
#include <fcntl.h>
#include <unistd.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct {
    sws_str_t      name;
    sws_helper_t  *helper;
} th_entry_t;

typedef struct {
    sws_array_t     *helpers;     /* th_entry_t */
    sws_shm_zone_t  *zone;        /* the counter of ticks */
} th_main_t;

typedef struct {
    char            *file;
    char            *tmp;
    sws_msec_t       interval;
    sws_shm_zone_t  *zone;
} th_tick_t;

static const sws_str_t  zone_name = sws_string("test_helper");

typedef struct {
    char       *file;
    sws_str_t   group;           /* empty: none */
    sws_str_t   addr;
} th_events_t;

static void
th_event(th_events_t *ev, const char *line, size_t len)
{
    int fd = open(ev->file, O_WRONLY | O_CREAT | O_APPEND, 0644);

    if (fd != -1) {
        if (write(fd, line, len) != (ssize_t) len) {
            /* the test sees it missing */
        }
        close(fd);
    }
}

/* The handle of the events' group, resolved once in the master at the
 * first callback and kept across reloads (the module stays loaded): it
 * follows its group by name. */
static sws_int_t  th_list;

static sws_int_t
th_list_handle(th_events_t *ev)
{
    if (th_list <= 0) {
        th_list = sws_http_upstream_list_handle(&ev->group);
    }
    return th_list;
}

static const char *
th_rc(sws_int_t rc)
{
    return rc == SWS_OK ? "OK" : rc == SWS_BUSY ? "BUSY" : rc == SWS_DECLINED ? "DECLINED"
           : "ERROR";
}

static void
th_on_ready(sws_helper_t *hp, pid_t pid, void *data)
{
    th_events_t *ev = data;
    char         line[128];
    int          n;

    n = snprintf(line, sizeof(line), "ready %s %ld\n", (char *) sws_helper_name(hp)->data,
                 (long) pid);
    th_event(ev, line, n);
    if (ev->group.len) {
        n = snprintf(line, sizeof(line), "add %s\n",
                     th_rc(th_list_handle(ev) > 0
                           ? sws_http_upstream_list_add(th_list, &ev->addr, 1) : th_list));
        th_event(ev, line, n);
    }
}

static void
th_on_exit(sws_helper_t *hp, const sws_helper_exit_t *ex, void *data)
{
    th_events_t         *ev = data;
    sws_helper_status_t  st;
    char                 line[256];
    int                  n;

    st.size = sizeof(st);
    if (sws_helper_status(hp, &st) != SWS_OK) {
        st.starts = st.exits = 999;
    }
    n = snprintf(line, sizeof(line), "exit %s %ld code=%d signal=%d core=%u stopped=%u ready=%u "
                 "restarting=%u starts=%llu exits=%llu size=%zu\n",
                 (char *) sws_helper_name(hp)->data, (long) ex->pid, ex->code, ex->signo,
                 ex->core_dumped, ex->stopped, ex->was_ready, ex->restarting,
                 (unsigned long long) st.starts, (unsigned long long) st.exits, ex->size);
    th_event(ev, line, n);
    if (ev->group.len) {
        n = snprintf(line, sizeof(line), "drain %s\n",
                     th_rc(th_list_handle(ev) > 0
                           ? sws_http_upstream_list_drain(th_list, &ev->addr) : th_list));
        th_event(ev, line, n);
    }
}

static sws_int_t
th_zone_init(sws_shm_zone_t *zone, void *old)
{
    zone->data = old ? old : zone->addr;
    return SWS_OK;
}

static void *
th_create_main(sws_conf_t *cf)
{
    th_main_t *m = sws_pcalloc(sws_conf_pool(cf), sizeof(th_main_t));

    if (m == NULL) {
        return NULL;
    }
    m->helpers = sws_array_create(sws_conf_pool(cf), 4, sizeof(th_entry_t));
    m->zone = sws_shm_zone_add(cf, &zone_name, 4096, th_zone_init, &sws_module);
    return (m->helpers && m->zone) ? m : NULL;
}

static int
th_tick(sws_helper_t *hp, void *data)
{
    th_tick_t          *t = data;
    const sws_str_t    *name = sws_helper_name(hp);
    unsigned long       n = 0;
    char                line[64];
    int                 fd, len;

    printf("function helper %s up\n", (char *) name->data);
    fflush(stdout);
    for ( ;; ) {
        n++;
        len = snprintf(line, sizeof(line), "%ld %lu\n", (long) getpid(), n);
        fd = open(t->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd == -1 || write(fd, line, len) != len) {
            sws_log_error(SWS_LOG_ALERT, sws_helper_log(hp), errno, "cannot write %s", t->tmp);
            return 3;
        }
        close(fd);
        rename(t->tmp, t->file);
        __atomic_add_fetch((uint64_t *) t->zone->data, 1, __ATOMIC_RELAXED);
        sws_log_error(SWS_LOG_NOTICE, sws_helper_log(hp), 0, "tick %s %lu",
                      (char *) name->data, n);
        if (sws_helper_sleep(hp, t->interval) != SWS_OK) {
            break;
        }
    }
    sws_log_error(SWS_LOG_NOTICE, sws_helper_log(hp), 0, "tick %s stopping after %lu",
                  (char *) name->data, n);
    return 0;
}

static sws_helper_t *
th_find(th_main_t *m, sws_str_t *name)
{
    th_entry_t *e = m->helpers->elts;
    sws_uint_t  i;

    for (i = 0; i < m->helpers->nelts; i++) {
        if (sws_str_eq(&e[i].name, name)) {
            return e[i].helper;
        }
    }
    return NULL;
}

static sws_helper_t *
th_declare(sws_conf_t *cf, th_main_t *m)
{
    th_entry_t   *e;
    sws_helper_t *hp = sws_helper_add(cf, sws_conf_arg(cf, 1));

    if (hp == NULL || (e = sws_array_push(m->helpers)) == NULL) {
        return NULL;
    }
    e->name = *sws_conf_arg(cf, 1);
    e->helper = hp;
    return hp;
}

static char *
th_function(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    th_main_t    *m = conf;
    th_tick_t    *t = sws_pcalloc(sws_conf_pool(cf), sizeof(th_tick_t));
    sws_str_t     key, *file = sws_conf_arg(cf, 2), *iv = sws_conf_arg(cf, 3);
    sws_helper_t *hp;
    u_char       *p;

    if (t == NULL || (hp = th_declare(cf, m)) == NULL) {
        return SWS_CONF_ERROR;
    }
    t->interval = sws_parse_time_ms(iv);
    if (t->interval <= 0) {
        return "has an invalid interval";
    }
    t->file = sws_pstrdup_cstr(sws_conf_pool(cf), file);
    t->tmp = sws_pnalloc(sws_conf_pool(cf), file->len + 5);
    key.data = sws_pnalloc(sws_conf_pool(cf), file->len + iv->len + 2);
    if (t->file == NULL || t->tmp == NULL || key.data == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_slprintf((u_char *) t->tmp, (u_char *) t->tmp + file->len + 5, "%s.tmp", t->file);
    p = sws_slprintf(key.data, key.data + file->len + iv->len + 2, "%.*s %.*s",
                     (int) file->len, file->data, (int) iv->len, iv->data);
    key.len = p - key.data;
    t->zone = m->zone;
    if (sws_helper_set_function(hp, th_tick, t) != SWS_OK
        || sws_helper_set_key(hp, &key) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
th_program(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_helper_t *hp = th_declare(cf, conf);
    sws_uint_t    i;

    if (hp == NULL || sws_helper_set_program(hp, sws_conf_arg(cf, 2)) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    for (i = 3; i < sws_conf_nargs(cf); i++) {
        if (sws_helper_add_arg(hp, sws_conf_arg(cf, i)) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

static const struct { const char *name; int signo; } th_signals[] = {
    { "TERM", SIGTERM }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "HUP", SIGHUP },
    { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "KILL", SIGKILL }, { NULL, 0 }
};

static char *
th_setting(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_helper_t *hp = th_find(conf, sws_conf_arg(cf, 1));
    sws_str_t    *a2 = sws_conf_arg(cf, 2);
    sws_int_t     rc = SWS_ERROR;
    int           i;

    if (hp == NULL) {
        return "names an unknown helper";
    }
    switch (cmd->offset) {
    case 0:
        rc = sws_helper_set_env(hp, a2, sws_conf_arg(cf, 3));
        break;
    case 1:
        rc = sws_helper_set_directory(hp, a2);
        break;
    case 2:
        rc = sws_helper_set_restart(hp, sws_str_eq_cstr(a2, "always") ? SWS_HELPER_RESTART_ALWAYS
                                    : sws_str_eq_cstr(a2, "on-failure")
                                      ? SWS_HELPER_RESTART_ON_FAILURE
                                    : sws_str_eq_cstr(a2, "never") ? SWS_HELPER_RESTART_NEVER
                                    : 99);
        break;
    case 3:
        rc = sws_helper_set_backoff(hp, sws_parse_time_ms(a2),
                                    sws_parse_time_ms(sws_conf_arg(cf, 3)),
                                    sws_parse_time_ms(sws_conf_arg(cf, 4)));
        break;
    case 5:
        rc = sws_helper_set_user(hp, a2, sws_conf_nargs(cf) > 3 ? sws_conf_arg(cf, 3) : NULL);
        break;
    case 6:
        rc = sws_helper_set_socket(hp, a2, sws_conf_nargs(cf) > 3 ? sws_conf_arg(cf, 3) : NULL);
        break;
    case 7:
        rc = sws_helper_set_ready_probe(hp, a2);
        break;
    case 8:
        rc = sws_helper_set_ready_timeout(hp, sws_parse_time_ms(a2));
        break;
    case 9: {
        th_events_t *ev = sws_pcalloc(sws_conf_pool(cf), sizeof(th_events_t));

        if (ev == NULL || (ev->file = sws_pstrdup_cstr(sws_conf_pool(cf), a2)) == NULL) {
            return SWS_CONF_ERROR;
        }
        if (sws_conf_nargs(cf) > 4) {
            ev->group = *sws_conf_arg(cf, 3);
            ev->addr = *sws_conf_arg(cf, 4);
        }
        rc = sws_helper_set_callbacks(hp, th_on_ready, th_on_exit, ev);
        break;
    }
    case 4:
        for (i = 0; th_signals[i].name && !sws_str_eq_cstr(a2, th_signals[i].name); i++) {
            /* void */
        }
        rc = sws_helper_set_stop(hp, th_signals[i].signo,
                                 sws_parse_time_ms(sws_conf_arg(cf, 3)));
        break;
    }
    return rc == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static sws_int_t
th_ticks_handler(sws_http_request_t *r)
{
    static const sws_str_t type = sws_string("text/plain");
    th_main_t *m = sws_http_main_conf(r, &sws_module);
    sws_str_t  out;
    u_char    *p = sws_pnalloc(sws_http_pool(r), 32);

    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    out.data = p;
    out.len = sws_slprintf(p, p + 32, "ticks %llu",
                           (unsigned long long) __atomic_load_n((uint64_t *) m->zone->data,
                                                                __ATOMIC_RELAXED)) - p;
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &out);
}

static char *
th_ticks(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    return sws_http_set_content_handler(cf, th_ticks_handler, "test_helper_ticks") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

#define TH_MAIN (SWS_HTTP_MAIN_CONF)
static const sws_command_t commands[] = {
    { "test_helper_function", TH_MAIN | SWS_CONF_TAKE3, th_function,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "test_helper_program", TH_MAIN | SWS_CONF_2MORE, th_program,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "test_helper_env", TH_MAIN | SWS_CONF_TAKE3, th_setting, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "test_helper_dir", TH_MAIN | SWS_CONF_TAKE2, th_setting, SWS_HTTP_MAIN_CONF_OFFSET, 1, NULL },
    { "test_helper_restart", TH_MAIN | SWS_CONF_TAKE2, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 2, NULL },
    { "test_helper_backoff", TH_MAIN | SWS_CONF_TAKE4, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 3, NULL },
    { "test_helper_stop", TH_MAIN | SWS_CONF_TAKE3, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 4, NULL },
    { "test_helper_user", TH_MAIN | SWS_CONF_TAKE23, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 5, NULL },
    { "test_helper_socket", TH_MAIN | SWS_CONF_TAKE23, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 6, NULL },
    { "test_helper_probe", TH_MAIN | SWS_CONF_TAKE2, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 7, NULL },
    { "test_helper_ready_timeout", TH_MAIN | SWS_CONF_TAKE2, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 8, NULL },
    { "test_helper_events", TH_MAIN | SWS_CONF_TAKE2 | SWS_CONF_TAKE4, th_setting,
      SWS_HTTP_MAIN_CONF_OFFSET, 9, NULL },
    { "test_helper_ticks", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, th_ticks,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "test_helper",
    .commands = commands,
    .create_main_conf = th_create_main,
};
"""


def build(directory):
    """Build test_helper.so in directory; returns the "load_module ...;" line."""
    so = h.build_module(Path(directory), "test_helper", SOURCE)
    return "load_module %s;" % so
