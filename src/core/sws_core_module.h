/* The "core" built-in module: top-level directives of the process model. */
#ifndef SWS_CORE_MODULE_H
#define SWS_CORE_MODULE_H

#include <scalws/scalws.h>
#include <sys/types.h>

#define SWS_CORE_MAX_WORKERS  1024

typedef struct {
    sws_int_t     daemon;            /* daemon on|off (default on) */
    sws_int_t     master;            /* master_process on|off (default on) */
    sws_int_t     worker_processes;  /* N, or 0 for auto (= online CPUs); adaptive: the max */
    sws_int_t     workers_min;       /* worker_processes_min (adaptive runtime) */
    sws_int_t     workers_max;       /* worker_processes_max */
    sws_int_t     adaptive;          /* min < max: the master scales between them */
    sws_int_t     workers_start;     /* adaptive: worker_processes within [min, max] */
    sws_array_t  *cpus;              /* worker_cpus: int, worker i on cpus[i % n] */
    sws_int_t     cpu_affinity_auto; /* worker_cpu_affinity auto */
    sws_array_t  *cpu_affinity;      /* uint64_t masks, one per worker */
    sws_str_t     pid;               /* absolute path (default: --pid-path) */
    sws_str_t     user;              /* user USER [GROUP] (default nobody) */
    sws_str_t     group;
    uid_t         uid;
    gid_t         gid;
    sws_int_t     rlimit_nofile;     /* worker_rlimit_nofile */
    sws_msec_t    shutdown_timeout;  /* worker_shutdown_timeout (default 0: none) */
    sws_msec_t    shutdown_idle;     /* worker_shutdown_idle (default 1s) */
    sws_log_t    *error_log;         /* error_log FILE [LEVEL] (default --error-log-path error) */
    sws_str_t     modules_dir;       /* modules_dir DIR (default from configure) */
    sws_array_t  *load_modules;      /* load_module PATH; (sws_str_t) */
    sws_array_t  *env;               /* env NAME=VALUE; (sws_str_t "NAME=VALUE") */
    sws_int_t     pcre_jit;
    sws_msec_t    timer_resolution;  /* checked only */
    sws_uint_t    quic_steering;     /* quic_steering auto|cbpf|off (sws_udp_steer.h) */
} sws_core_conf_t;

extern sws_module_t sws_core_module;

/* A configure-time path under the configure-time prefix, made relative to
 * the prefix so that "scalwsd -p DIR" moves it too. */
void sws_core_strip_prefix(sws_str_t *path);

/* The configure-time defaults of the directives that name files
 * (--pid-path, --error-log-path ...). */
typedef enum {
    SWS_CORE_PATH_PID = 0,
    SWS_CORE_PATH_ERROR_LOG,
    SWS_CORE_PATH_MODULES,
    SWS_CORE_PATH_HTTP_LOG,
    SWS_CORE_PATH_CLIENT_BODY_TEMP,
    SWS_CORE_PATH_PROXY_TEMP,
    SWS_CORE_PATH_HTML
} sws_core_path_e;

/* Set *path to that default, made absolute: under the configure-time
 * prefix it follows "-p" (sws_core_strip_prefix), elsewhere it stays. */
sws_int_t sws_core_default_path(sws_conf_t *cf, sws_core_path_e which, sws_str_t *path);

/* pcre_jit: whether the regexes compiled from now on get JIT code
 * (sws_regex.c). */
void sws_regex_use_jit(int on);

/* env TZ=...: the local time of the logs follows (sws_times.c). */
void sws_time_zone_changed(void);

/* The env NAME=VALUE of a configuration, into this process's environment
 * (before it starts the processes of that configuration). */
void sws_core_apply_env(sws_core_conf_t *ccf);

/* "error_log FILE [LEVEL]" into *log (NULL: not given yet, else "is
 * duplicate"); for the main directive and http's. */
char *sws_core_error_log_directive(sws_conf_t *cf, sws_log_t **log);

#define sws_core_conf(cycle) \
    ((sws_core_conf_t *) (cycle)->conf_ctx[sws_core_module.index])

#endif
