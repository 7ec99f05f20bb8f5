/*
 * The "core" built-in module: the top-level directives of the process
 * model (daemon, workers, user, pid file, error log, module loading).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <scalws/scalws.h>
#include "sws_core_module.h"
#include "sws_cycle.h"
#include "sws_log_internal.h"
#include "sws_syslog.h"


#define SWS_CORE_MAX_CPUS     64     /* one uint64_t mask per worker */

static void *sws_core_create_conf(sws_conf_t *cf);
static char *sws_core_init_conf(sws_conf_t *cf, void *conf);
static char *sws_core_set_env(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_pcre_jit(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_workers(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_affinity(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_workers_bound(sws_conf_t *cf, const sws_command_t *cmd,
    void *conf);
static char *sws_core_set_cpus(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_user(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_nofile(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_error_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_core_set_load_module(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#define SWS_CORE_DIRECTIVE(name, args, set, field) \
    { name, SWS_MAIN_CONF | (args), set, SWS_CONF_MAIN_OFFSET, \
      offsetof(sws_core_conf_t, field), NULL }

/* quic_steering: the values are SWS_UDP_STEER_AUTO, _WANT_CBPF, _OFF
 * (src/event/sws_udp_steer.h). */
static const sws_conf_enum_t  sws_core_quic_steering[] = {
    { sws_string("auto"), 0 },
    { sws_string("cbpf"), 1 },
    { sws_string("off"), 2 },
    { sws_null_string, 0 }
};

static const sws_command_t  sws_core_commands[] = {
    SWS_CORE_DIRECTIVE("daemon", SWS_CONF_FLAG, sws_conf_set_flag_slot, daemon),
    SWS_CORE_DIRECTIVE("master_process", SWS_CONF_FLAG, sws_conf_set_flag_slot, master),
    SWS_CORE_DIRECTIVE("worker_processes", SWS_CONF_TAKE1, sws_core_set_workers,
                       worker_processes),
    SWS_CORE_DIRECTIVE("worker_cpu_affinity", SWS_CONF_1MORE, sws_core_set_affinity,
                       cpu_affinity),
    SWS_CORE_DIRECTIVE("worker_processes_min", SWS_CONF_TAKE1, sws_core_set_workers_bound,
                       workers_min),
    SWS_CORE_DIRECTIVE("worker_processes_max", SWS_CONF_TAKE1, sws_core_set_workers_bound,
                       workers_max),
    SWS_CORE_DIRECTIVE("worker_cpus", SWS_CONF_1MORE, sws_core_set_cpus, cpus),
    SWS_CORE_DIRECTIVE("pid", SWS_CONF_TAKE1, sws_conf_set_path_slot, pid),
    SWS_CORE_DIRECTIVE("user", SWS_CONF_TAKE12, sws_core_set_user, user),
    SWS_CORE_DIRECTIVE("worker_rlimit_nofile", SWS_CONF_TAKE1, sws_core_set_nofile,
                       rlimit_nofile),
    SWS_CORE_DIRECTIVE("worker_shutdown_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
                       shutdown_timeout),
    SWS_CORE_DIRECTIVE("worker_shutdown_idle", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
                       shutdown_idle),
    SWS_CORE_DIRECTIVE("error_log", SWS_CONF_TAKE12, sws_core_set_error_log, error_log),
    SWS_CORE_DIRECTIVE("env", SWS_CONF_TAKE1, sws_core_set_env, env),
    SWS_CORE_DIRECTIVE("pcre_jit", SWS_CONF_FLAG, sws_core_set_pcre_jit, pcre_jit),
    /* the time is read once per turn of the event loop (the vDSO's clock):
     * nothing for a resolution to save; the value is checked */
    SWS_CORE_DIRECTIVE("timer_resolution", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
                       timer_resolution),
    { "quic_steering", SWS_MAIN_CONF | SWS_CONF_TAKE1, sws_conf_set_enum_slot,
      SWS_CONF_MAIN_OFFSET, offsetof(sws_core_conf_t, quic_steering),
      (void *) sws_core_quic_steering },
    /* Both are read by the cycle before dispatch; the setters record them. */
    SWS_CORE_DIRECTIVE("modules_dir", SWS_CONF_TAKE1, sws_conf_set_path_slot, modules_dir),
    SWS_CORE_DIRECTIVE("load_module", SWS_CONF_TAKE1, sws_core_set_load_module,
                       load_modules),
    sws_null_command
};

sws_module_t  sws_core_module = {
    SWS_MODULE_ABI,
    .name = "core",
    .commands = sws_core_commands,
    .create_main_conf = sws_core_create_conf,
    .init_main_conf = sws_core_init_conf,
};


/* A message for the core to report, formatted into the configuration pool. */
static char *
sws_core_msg(sws_conf_t *cf, const char *fmt, ...) SWS_PRINTF(2, 3);

static char *
sws_core_msg(sws_conf_t *cf, const char *fmt, ...)
{
    va_list  args;
    u_char  *buf, *p;
    size_t   size = 512;

    buf = sws_pnalloc(sws_conf_pool(cf), size);
    if (buf == NULL) {
        return SWS_CONF_ERROR;
    }
    va_start(args, fmt);
    p = sws_vslprintf(buf, buf + size - 1, fmt, args);
    va_end(args);
    *p = '\0';
    return (char *) buf;
}


static void *
sws_core_create_conf(sws_conf_t *cf)
{
    sws_core_conf_t  *ccf;

    ccf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_core_conf_t));
    if (ccf == NULL) {
        return NULL;
    }
    /* strings, arrays and error_log: zeroed = unset */
    ccf->daemon = SWS_UNSET;
    ccf->master = SWS_UNSET;
    ccf->worker_processes = SWS_UNSET;
    ccf->workers_min = SWS_UNSET;
    ccf->workers_max = SWS_UNSET;
    ccf->cpu_affinity_auto = SWS_UNSET;
    ccf->uid = (uid_t) -1;
    ccf->gid = (gid_t) -1;
    ccf->rlimit_nofile = SWS_UNSET;
    ccf->shutdown_timeout = SWS_UNSET_MSEC;
    ccf->shutdown_idle = SWS_UNSET_MSEC;
    ccf->pcre_jit = SWS_UNSET;
    ccf->timer_resolution = SWS_UNSET_MSEC;
    ccf->quic_steering = SWS_UNSET_UINT;
    sws_regex_use_jit(1);              /* each configuration says again */
    return ccf;
}


/* Open an error log (path already absolute, or "stderr") and register it
 * for reopening on USR1. NULL with errno set on failure. */
static sws_log_t *
sws_core_open_log(sws_conf_t *cf, const char *path, sws_uint_t level)
{
    sws_cycle_t  *cycle = sws_conf_cycle(cf);
    sws_log_t    *log, **slot;

    log = sws_log_open(sws_conf_pool(cf), path, level);
    if (log == NULL) {
        return NULL;
    }
    slot = sws_array_push(&cycle->open_logs);
    if (slot == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    *slot = log;
    return log;
}


/* Resolve user/group to ids (group: the user's primary group unless
 * given). Returns a message for "\"user\" directive ..." naming what is
 * missing. */
static char *
sws_core_resolve_user(sws_conf_t *cf, sws_core_conf_t *ccf)
{
    struct passwd  *pw;
    struct group   *gr;
    char           *name;

    /* NUL-terminated copies: initgroups() needs the name in the worker. */
    name = sws_pstrdup_cstr(sws_conf_pool(cf), &ccf->user);
    if (name == NULL) {
        return SWS_CONF_ERROR;
    }
    ccf->user.data = (u_char *) name;

    errno = 0;
    pw = getpwnam(name);
    if (pw == NULL) {
        return sws_core_msg(cf, "has unknown user \"%s\"%s%s", name,
                            errno ? ": " : "", errno ? strerror(errno) : "");
    }
    ccf->uid = pw->pw_uid;
    ccf->gid = pw->pw_gid;

    if (ccf->group.data != NULL) {
        name = sws_pstrdup_cstr(sws_conf_pool(cf), &ccf->group);
        if (name == NULL) {
            return SWS_CONF_ERROR;
        }
        ccf->group.data = (u_char *) name;

        errno = 0;
        gr = getgrnam(name);
        if (gr == NULL) {
            return sws_core_msg(cf, "has unknown group \"%s\"%s%s", name,
                                errno ? ": " : "", errno ? strerror(errno) : "");
        }
        ccf->gid = gr->gr_gid;
    }
    return SWS_CONF_OK;
}


static char *
sws_core_init_conf(sws_conf_t *cf, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t         name;
    long              ncpu;
    char             *rv;
    int               explicit;

    if (ccf->daemon == SWS_UNSET) {
        ccf->daemon = 1;
    }
    if (ccf->master == SWS_UNSET) {
        ccf->master = 1;
    }
    explicit = ccf->worker_processes != SWS_UNSET;
    if (ccf->worker_processes == SWS_UNSET) {
        ccf->worker_processes = 1;
    }
    if (ccf->cpu_affinity_auto == SWS_UNSET) {
        ccf->cpu_affinity_auto = 0;
    }
    if (ccf->shutdown_timeout == SWS_UNSET_MSEC) {
        ccf->shutdown_timeout = 0;
    }
    if (ccf->quic_steering == SWS_UNSET_UINT) {
        ccf->quic_steering = 0;                  /* auto */
    }
    if (ccf->shutdown_idle == SWS_UNSET_MSEC) {
        ccf->shutdown_idle = 1000;
    }

    if (ccf->worker_processes == 0) {            /* auto */
        ncpu = ccf->cpus ? (long) ccf->cpus->nelts : sysconf(_SC_NPROCESSORS_ONLN);
        ccf->worker_processes = ncpu > 0 ? sws_min(ncpu, SWS_CORE_MAX_WORKERS) : 1;
    }

    /* The adaptive runtime: between a minimum and a maximum (by default
     * one worker, and one per CPU of worker_cpus or of the machine). */
    if (ccf->workers_min != SWS_UNSET || ccf->workers_max != SWS_UNSET) {
        if (ccf->workers_min == SWS_UNSET) {
            ccf->workers_min = 1;
        }
        if (ccf->workers_max == SWS_UNSET) {
            ncpu = ccf->cpus ? (long) ccf->cpus->nelts : sysconf(_SC_NPROCESSORS_ONLN);
            ccf->workers_max = sws_max(sws_min(ncpu, SWS_CORE_MAX_WORKERS), ccf->workers_min);
        }
        if (ccf->workers_min > ccf->workers_max) {
            return sws_core_msg(cf, "worker_processes_min %ld is more than "
                                "worker_processes_max %ld", (long) ccf->workers_min,
                                (long) ccf->workers_max);
        }
        if (ccf->cpu_affinity != NULL || ccf->cpu_affinity_auto == 1) {
            return sws_core_msg(cf, "worker_cpu_affinity and worker_processes_min/max: "
                                "use worker_cpus for an adaptive number of workers");
        }
        ccf->adaptive = ccf->workers_min < ccf->workers_max;
        /* worker_processes N or auto: where it starts (else at the minimum) */
        ccf->workers_start = explicit ? sws_max(sws_min(ccf->worker_processes,
                                                        ccf->workers_max), ccf->workers_min)
                                      : ccf->workers_min;
        /* What is opened per worker (reuseport sockets) is for the most. */
        ccf->worker_processes = ccf->workers_max;
    }

    if (ccf->cpu_affinity != NULL
        && ccf->cpu_affinity->nelts != (sws_uint_t) ccf->worker_processes)
    {
        sws_log_error(SWS_LOG_WARN, sws_conf_log(cf), 0,
                      "worker_cpu_affinity has %lu masks for %ld workers%s",
                      (unsigned long) ccf->cpu_affinity->nelts,
                      (long) ccf->worker_processes,
                      ccf->cpu_affinity->nelts < (sws_uint_t) ccf->worker_processes
                      ? ": the last mask is used for the others" : "");
    }

    if (ccf->pid.data == NULL) {
        if (sws_core_default_path(cf, SWS_CORE_PATH_PID, &name) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        ccf->pid = name;
    }

    if (ccf->modules_dir.data == NULL) {
        if (sws_core_default_path(cf, SWS_CORE_PATH_MODULES, &name) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        ccf->modules_dir = name;
    }

    /* Workers change user only when the master runs as root. */
    if (geteuid() == 0 && ccf->user.data == NULL) {
        sws_str_set(&ccf->user, "nobody");
        rv = sws_core_resolve_user(cf, ccf);
        if (rv != SWS_CONF_OK) {
            return rv == SWS_CONF_ERROR ? rv
                   : "the default user \"nobody\" does not exist: "
                     "set one with the \"user\" directive";
        }
    }

    if (ccf->error_log == NULL) {
        if (sws_core_default_path(cf, SWS_CORE_PATH_ERROR_LOG, &name) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        ccf->error_log = sws_core_open_log(cf, (char *) name.data, SWS_LOG_ERR);
        if (ccf->error_log == NULL) {
            return sws_core_msg(cf, "cannot open error log \"%s\": %s",
                                (char *) name.data, strerror(errno));
        }
    }
    return SWS_CONF_OK;
}


static char *
sws_core_set_workers(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t        *value = sws_conf_arg(cf, 1);
    sws_int_t         n;

    (void) cmd;
    if (ccf->worker_processes != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(value, "auto")) {
        ccf->worker_processes = 0;
        return SWS_CONF_OK;
    }
    n = sws_atoi(value->data, value->len);
    if (n < 1 || n > SWS_CORE_MAX_WORKERS) {
        return sws_core_msg(cf, "has invalid value \"%.*s\": "
                            "expected \"auto\" or a number from 1 to %d",
                            (int) value->len, value->data, SWS_CORE_MAX_WORKERS);
    }
    ccf->worker_processes = n;
    return SWS_CONF_OK;
}


/* worker_processes_min N, worker_processes_max N */
static char *
sws_core_set_workers_bound(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_int_t  *slot = (sws_int_t *) ((u_char *) conf + cmd->offset);
    sws_str_t  *value = sws_conf_arg(cf, 1);
    sws_int_t   n;

    if (*slot != SWS_UNSET) {
        return "is duplicate";
    }
    n = sws_atoi(value->data, value->len);
    if (n < 1 || n > SWS_CORE_MAX_WORKERS) {
        return sws_core_msg(cf, "has invalid value \"%.*s\": expected a number from 1 to %d",
                            (int) value->len, value->data, SWS_CORE_MAX_WORKERS);
    }
    *slot = n;
    return SWS_CONF_OK;
}


/* worker_cpus 0-3 6 ...: CPU numbers and ranges, also comma-separated. */
static char *
sws_core_set_cpus(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t        *value;
    sws_uint_t        i, nargs = sws_conf_nargs(cf);
    u_char           *p, *last, *s, *dash;
    sws_int_t         a, b, cpu;
    int              *slot;

    (void) cmd;
    if (ccf->cpus != NULL) {
        return "is duplicate";
    }
    ccf->cpus = sws_array_create(sws_conf_pool(cf), 8, sizeof(int));
    if (ccf->cpus == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 1; i < nargs; i++) {
        value = sws_conf_arg(cf, i);
        for (p = value->data, last = p + value->len; p < last; p = s + 1) {
            for (s = p; s < last && *s != ','; s++) { /* one item */ }
            dash = memchr(p, '-', s - p);
            a = sws_atoi(p, (dash ? dash : s) - p);
            b = dash ? sws_atoi(dash + 1, s - dash - 1) : a;
            if (a < 0 || b < a || b >= SWS_CORE_MAX_CPUS) {
                return sws_core_msg(cf, "has invalid CPU list \"%.*s\": expected numbers "
                                    "and ranges (\"0-3,6\") below %d",
                                    (int) value->len, value->data, SWS_CORE_MAX_CPUS);
            }
            for (cpu = a; cpu <= b; cpu++) {
                slot = sws_array_push(ccf->cpus);
                if (slot == NULL) {
                    return SWS_CONF_ERROR;
                }
                *slot = (int) cpu;
            }
        }
    }
    return SWS_CONF_OK;
}


/* "auto", or one binary mask per worker: the rightmost digit is CPU 0. */
static char *
sws_core_set_affinity(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t        *value;
    sws_uint_t        i, nargs = sws_conf_nargs(cf);
    uint64_t         *mask;
    size_t            j;

    (void) cmd;
    if (ccf->cpu_affinity != NULL || ccf->cpu_affinity_auto != SWS_UNSET) {
        return "is duplicate";
    }

    if (sws_str_eq_cstr(sws_conf_arg(cf, 1), "auto")) {
        if (nargs != 2) {
            return "takes no masks after \"auto\"";
        }
        ccf->cpu_affinity_auto = 1;
        return SWS_CONF_OK;
    }

    ccf->cpu_affinity = sws_array_create(sws_conf_pool(cf), nargs - 1, sizeof(uint64_t));
    if (ccf->cpu_affinity == NULL) {
        return SWS_CONF_ERROR;
    }
    ccf->cpu_affinity_auto = 0;

    for (i = 1; i < nargs; i++) {
        value = sws_conf_arg(cf, i);
        if (value->len == 0 || value->len > SWS_CORE_MAX_CPUS) {
            return sws_core_msg(cf, "has invalid CPU mask \"%.*s\": "
                                "expected 1 to %d binary digits",
                                (int) value->len, value->data, SWS_CORE_MAX_CPUS);
        }
        mask = sws_array_push(ccf->cpu_affinity);
        if (mask == NULL) {
            return SWS_CONF_ERROR;
        }
        *mask = 0;
        for (j = 0; j < value->len; j++) {
            if (value->data[j] != '0' && value->data[j] != '1') {
                return sws_core_msg(cf, "has invalid CPU mask \"%.*s\": "
                                    "only 0 and 1 are allowed",
                                    (int) value->len, value->data);
            }
            *mask = (*mask << 1) | (uint64_t) (value->data[j] - '0');
        }
        if (*mask == 0) {
            return sws_core_msg(cf, "has CPU mask \"%.*s\" "
                                "that selects no CPU", (int) value->len, value->data);
        }
    }
    return SWS_CONF_OK;
}


/* Whether the user named is the one we run as. */
static int
sws_core_is_euid(const sws_str_t *user)
{
    char            name[256];
    struct passwd  *pw;

    if (user->len >= sizeof(name)) {
        return 0;
    }
    memcpy(name, user->data, user->len);
    name[user->len] = '\0';
    pw = getpwnam(name);
    return pw != NULL && pw->pw_uid == geteuid();
}


static char *
sws_core_set_user(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;

    (void) cmd;
    if (ccf->user.data != NULL) {
        return "is duplicate";
    }
    ccf->user = *sws_conf_arg(cf, 1);
    if (sws_conf_nargs(cf) > 2) {
        ccf->group = *sws_conf_arg(cf, 2);
    }
    if (ccf->user.len == 0 || (ccf->group.data != NULL && ccf->group.len == 0)) {
        ccf->user.data = NULL;
        return "has an empty name";
    }
    if (geteuid() != 0) {
        /* Started as that user already (systemd's User=, with the same
         * configuration as a start as root): nothing to say. */
        if (!sws_core_is_euid(&ccf->user)) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "the \"user\" directive has effect only "
                               "when scalwsd is started as root, ignored");
        }
        return SWS_CONF_OK;
    }
    return sws_core_resolve_user(cf, ccf);
}


static char *
sws_core_set_nofile(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    char             *rv;

    rv = sws_conf_set_num_slot(cf, cmd, conf);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (ccf->rlimit_nofile < 1) {
        return "must be at least 1";
    }
    return SWS_CONF_OK;
}


static char *
sws_core_set_error_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;

    (void) cmd;
    return sws_core_error_log_directive(cf, &ccf->error_log);
}

/* "error_log FILE [LEVEL]" at any level (the main one, http, server,
 * location): the log opened and added to the chain at *log (several at
 * one level each get every message of their level, as in nginx),
 * registered for USR1's reopen. */
char *
sws_core_error_log_directive(sws_conf_t *cf, sws_log_t **log)
{
    sws_str_t           name, *level;
    sws_int_t           lv = SWS_LOG_ERR;
    sws_syslog_peer_t  *peer;
    sws_log_t          *new;
    int                 failed;

    if (sws_conf_nargs(cf) > 2) {
        level = sws_conf_arg(cf, 2);
        lv = sws_log_parse_level(level);
        if (lv == SWS_ERROR) {
            return sws_core_msg(cf, "has unknown log level \"%.*s\": "
                                "expected debug, info, notice, warn, error, crit, "
                                "alert or emerg", (int) level->len, level->data);
        }
    }

    name = *sws_conf_arg(cf, 1);
    peer = sws_syslog_conf(cf, &name, &failed);
    if (failed) {
        return SWS_CONF_ERROR;
    }
    if (peer) {
        new = sws_syslog_error_log(sws_conf_pool(cf), peer, (sws_uint_t) lv);
        if (new == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_log_chain(log, new);
        return SWS_CONF_OK;
    }
    if (name.len == 0) {
        return "has an empty file name";
    }
    if (sws_str_eq_cstr(&name, "stderr")) {
        sws_str_set(&name, "stderr");
    } else if (sws_conf_full_name(cf, &name, 0) != SWS_OK) {
        return SWS_CONF_ERROR;
    }

    new = sws_core_open_log(cf, (char *) name.data, (sws_uint_t) lv);
    if (new == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "cannot open error log \"%s\"",
                           (char *) name.data);
        return SWS_CONF_ERROR;
    }
    sws_log_chain(log, new);
    return SWS_CONF_OK;
}


static char *
sws_core_set_load_module(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t        *path;

    (void) cmd;
    if (ccf->load_modules == NULL) {
        ccf->load_modules = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t));
        if (ccf->load_modules == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    path = sws_array_push(ccf->load_modules);
    if (path == NULL) {
        return SWS_CONF_ERROR;
    }
    *path = *sws_conf_arg(cf, 1);
    if (path->len == 0) {
        return "has an empty path";
    }
    return SWS_CONF_OK;
}

sws_int_t
sws_cycle_worker_user(sws_cycle_t *cycle, sws_int_t *gid)
{
    sws_core_conf_t *ccf = sws_core_conf(cycle);

    *gid = -1;
    if (geteuid() != 0 || ccf == NULL || ccf->user.data == NULL) {
        return -1;
    }
    *gid = (sws_int_t) ccf->gid;
    return (sws_int_t) ccf->uid;
}

const sws_str_t *
sws_cycle_conf_file(sws_cycle_t *cycle)
{
    return &cycle->conf_file;
}


/* env NAME[=VALUE]: VALUE is put in the environment of the processes that
 * this configuration starts (sws_core_apply_env); a NAME alone is kept, as
 * every variable is (nginx clears the others). */
static char *
sws_core_set_env(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    sws_str_t        *v = sws_conf_arg(cf, 1), *slot;
    u_char           *eq;

    (void) cmd;
    eq = memchr(v->data, '=', v->len);
    if (v->len == 0 || eq == v->data) {
        return "needs a variable name";
    }
    if (eq == NULL) {
        return SWS_CONF_OK;           /* inherited already */
    }
    if (ccf->env == NULL) {
        ccf->env = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t));
        if (ccf->env == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    slot = sws_array_push(ccf->env);
    if (slot == NULL) {
        return SWS_CONF_ERROR;
    }
    slot->len = v->len;
    slot->data = (u_char *) sws_pstrdup_cstr(sws_conf_pool(cf), v);
    return slot->data ? SWS_CONF_OK : SWS_CONF_ERROR;
}

void
sws_core_apply_env(sws_core_conf_t *ccf)
{
    sws_str_t   *e;
    sws_uint_t   i;
    char        *eq;

    if (ccf->env == NULL) {
        return;
    }
    e = ccf->env->elts;
    for (i = 0; i < ccf->env->nelts; i++) {
        eq = strchr((char *) e[i].data, '=');
        *eq = '\0';
        setenv((char *) e[i].data, eq + 1, 1);
        *eq = '=';
    }
    sws_time_zone_changed();           /* env TZ=...: the local time of the logs */
}

/* pcre_jit on|off: the regular expressions compiled after it (JIT is on
 * unless a configuration says off; nginx's default is off). */
static char *
sws_core_set_pcre_jit(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_core_conf_t  *ccf = conf;
    char             *rv = sws_conf_set_flag_slot(cf, cmd, conf);

    if (rv == SWS_CONF_OK) {
        sws_regex_use_jit((int) ccf->pcre_jit);
    }
    return rv;
}
