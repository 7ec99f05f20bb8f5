/*
 * main(): the command line, then the start-up sequence: configuration,
 * daemon, pid file, and the master (or single) process cycle.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <scalws/scalws.h>
#include "sws_alloc_cache.h"
#include "sws_core_module.h"
#include "sws_cycle.h"
#include "sws_conf_tree.h"
#include "sws_daemon.h"
#include "sws_log_internal.h"
#include "sws_pidfile.h"
#include "sws_process.h"
#include "sws_process_internal.h"
#include "sws_proctitle.h"
#include "../event/sws_event.h"
#include "../event/sws_udp_steer.h"

#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

#ifndef SWS_PREFIX
#define SWS_PREFIX          "./"
#endif
#ifndef SWS_CONF_PATH
#define SWS_CONF_PATH       "conf/scalws.conf"
#endif
#ifndef SWS_CONFIGURE_ARGS
#define SWS_CONFIGURE_ARGS  ""
#endif

#define SWS_NAME  "scalwsd"

typedef struct {
    int               help;
    int               version;       /* 1: -v, 2: -V */
    int               test;          /* 1: -t, 2: -T */
    int               quiet;
    const char       *signal;
    sws_cycle_args_t  args;
} sws_options_t;

static const struct {
    const char  *name;
    int          signo;
} sws_signal_names[] = {
    { "stop", SIGTERM }, { "quit", SIGQUIT }, { "reopen", SIGUSR1 }, { "reload", SIGHUP },
};


static void
sws_show_help(void)
{
    fprintf(stderr,
        "Usage: " SWS_NAME " [-?hvVtTq] [-s signal] [-p prefix] [-c file] [-g directives]\n"
        "\n"
        "Options:\n"
        "  -?, -h         print this help and exit\n"
        "  -v             print the version and exit\n"
        "  -V             print the version, module ABI and build settings and exit\n"
        "  -t             check the configuration and exit\n"
        "  -T             check the configuration, print it to stdout and exit\n"
        "  -q             with -t/-T: print errors only\n"
        "  -s signal      tell the running master to: stop, quit, reopen, reload\n"
        "  -p prefix      prefix for relative paths (default: " SWS_PREFIX ")\n"
        "  -c file        configuration file (default: " SWS_CONF_PATH ")\n"
        "  -g directives  top-level directives added to the configuration\n");
}


static void
sws_show_version(int full)
{
    fprintf(stderr, SWS_NAME " version " SCALWS_VERSION "\n");
    if (!full) {
        return;
    }
#ifdef __VERSION__
    fprintf(stderr, "built with gcc " __VERSION__ "\n");
#endif
    fprintf(stderr, "module ABI: %d.%d\n", SWS_ABI_MAJOR, SWS_ABI_MINOR);
    fprintf(stderr, "built-in prefix: " SWS_PREFIX "\n");
    fprintf(stderr, "configure arguments: " SWS_CONFIGURE_ARGS "\n");
}


/* The built-in configuration path, relative to the prefix when it lies
 * under the built-in prefix, so that -p alone moves it too. */
static const char *
sws_default_conf_file(void)
{
    const char  *path = SWS_CONF_PATH;
    size_t       len = sizeof(SWS_PREFIX) - 1;

    if (len > 1 && strncmp(path, SWS_PREFIX, len) == 0 && path[len] != '\0'
        && (SWS_PREFIX[len - 1] == '/' || path[len] == '/'))
    {
        path += len;
        while (*path == '/') {
            path++;
        }
    }
    return path;
}


/* nginx-style flags: "-tq" groups flags; a value follows its letter in the
 * same word ("-cfile") or is the next word ("-c file"). */
static int
sws_parse_options(int argc, char **argv, sws_options_t *o)
{
    const char  **value;
    char         *p;
    int           i;

    memset(o, 0, sizeof(*o));
    o->args.prefix = SWS_PREFIX;
    o->args.conf_file = sws_default_conf_file();

    for (i = 1; i < argc; i++) {
        p = argv[i];
        if (*p++ != '-' || *p == '\0') {
            fprintf(stderr, SWS_NAME ": invalid option: \"%s\"\n", argv[i]);
            return -1;
        }

        while (*p) {
            switch (*p++) {
            case '?':
            case 'h': o->help = 1; continue;
            case 'v': o->version = sws_max(o->version, 1); continue;
            case 'V': o->version = 2; continue;
            case 't': o->test = sws_max(o->test, 1); continue;
            case 'T': o->test = 2; continue;
            case 'q': o->quiet = 1; continue;
            case 'p': value = &o->args.prefix; break;
            case 'c': value = &o->args.conf_file; break;
            case 'g': value = &o->args.directives; break;
            case 's': value = &o->signal; break;
            default:
                fprintf(stderr, SWS_NAME ": invalid option: \"%c\"\n", p[-1]);
                return -1;
            }

            /* an option with a value ends the word */
            if (*p) {
                *value = p;
            } else if (i + 1 < argc) {
                *value = argv[++i];
            } else {
                fprintf(stderr, SWS_NAME ": option \"-%c\" requires an argument\n", p[-1]);
                return -1;
            }
            if (**value == '\0') {
                fprintf(stderr, SWS_NAME ": option \"-%c\" has an empty argument\n", p[-1]);
                return -1;
            }
            break;
        }
    }
    return 0;
}


static int
sws_signal_number(const char *name)
{
    size_t  i;

    for (i = 0; i < sws_nelems(sws_signal_names); i++) {
        if (strcmp(name, sws_signal_names[i].name) == 0) {
            return sws_signal_names[i].signo;
        }
    }
    return -1;
}


/* The configuration file as the cycle resolves it (relative to prefix). */
static void
sws_conf_path(const sws_options_t *o, char *buf, size_t size)
{
    const char  *prefix = o->args.prefix, *file = o->args.conf_file;
    size_t       len = strlen(prefix);

    if (file[0] == '/' || len == 0) {
        snprintf(buf, size, "%s", file);
    } else {
        snprintf(buf, size, "%s%s%s", prefix, prefix[len - 1] == '/' ? "" : "/", file);
    }
}


/* -t, -T, with -q. */
static int
sws_test_config(sws_options_t *o)
{
    sws_cycle_t  *cycle;
    char          file[4096];

    sws_conf_path(o, file, sizeof(file));
    o->args.test_only = 1;

    cycle = sws_cycle_init(NULL, &o->args);
    if (cycle == NULL) {
        fprintf(stderr, SWS_NAME ": configuration file %s test failed\n", file);
        return 1;
    }
    if (cycle->conf_file.len) {
        snprintf(file, sizeof(file), "%.*s", (int) cycle->conf_file.len,
                 (char *) cycle->conf_file.data);
    }
    if (!o->quiet) {
        fprintf(stderr, SWS_NAME ": the configuration file %s syntax is ok\n", file);
        fprintf(stderr, SWS_NAME ": configuration file %s test is successful\n", file);
    }
    if (o->test == 2 && cycle->conf_tree != NULL) {
        sws_conf_dump(cycle->conf_tree, stdout);
        fflush(stdout);
    }
    sws_cycle_destroy(cycle);
    return 0;
}


/* -s: find the pid file through the configuration and signal the master. */
static int
sws_signal_master(sws_options_t *o, sws_log_t *log)
{
    sws_cycle_t  *cycle;
    char          path[4096];
    pid_t         pid;
    int           signo;
    sws_str_t    *name;

    signo = sws_signal_number(o->signal);
    if (signo == -1) {
        fprintf(stderr, SWS_NAME ": invalid signal \"%s\": expected stop, quit, reopen "
                "or reload\n", o->signal);
        return 1;
    }

    o->args.test_only = 1;
    cycle = sws_cycle_init(NULL, &o->args);
    if (cycle == NULL) {
        fprintf(stderr, SWS_NAME ": cannot read the configuration to find the pid file\n");
        return 1;
    }
    name = &sws_core_conf(cycle)->pid;
    snprintf(path, sizeof(path), "%.*s", (int) name->len, (char *) name->data);
    sws_cycle_destroy(cycle);

    pid = sws_pidfile_read(path, log);
    if (pid == SWS_ERROR) {
        return 1;
    }
    if (kill(pid, signo) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "cannot send \"%s\" to the master "
                      "process %ld (pid file \"%s\")", o->signal, (long) pid, path);
        return 1;
    }
    return 0;
}


/* Whether any open log writes to stderr (then a daemon keeps it). */
static int
sws_logs_use_stderr(sws_cycle_t *cycle)
{
    sws_log_t  **logs = cycle->open_logs.elts;
    sws_uint_t   i;

    if (cycle->log != NULL && cycle->log->fd == STDERR_FILENO) {
        return 1;
    }
    for (i = 0; i < cycle->open_logs.nelts; i++) {
        if (logs[i]->fd == STDERR_FILENO) {
            return 1;
        }
    }
    return 0;
}


int
main(int argc, char **argv)
{
    sws_options_t     o;
    sws_cycle_t      *cycle;
    sws_core_conf_t  *ccf;
    sws_log_t        *log;
    int               notify = -1;
    sws_uint_t        inherited;

    /* First of all: OpenSSL takes other memory functions only until its
     * first allocation (its TLS record buffers then come from the cache).
     * Refused (something made it allocate already), it keeps malloc():
     * as correct, only slower. */
    (void) CRYPTO_set_mem_functions(sws_alloc_cache_crypto_malloc,
                                    sws_alloc_cache_crypto_realloc,
                                    sws_alloc_cache_crypto_free);

    /*
     * glibc gives the top of the heap back (brk) as soon as 128 KiB of it
     * are free, and moves its mmap() threshold as blocks come and go. A
     * response that needs a few hundred KiB for a moment (zlib's window and
     * hash: 200 KiB a gzip response) then grows and shrinks the heap on
     * every request: measured, 4 brk() and 24 page faults per gzip request,
     * more system time than deflate's own user time, and from one start of
     * the server to the next, as the heap's layout falls. Fixed thresholds
     * keep up to 2 MiB of free heap and serve blocks below 1 MiB from it.
     */
    (void) mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
    (void) mallopt(M_TRIM_THRESHOLD, 2 * 1024 * 1024);

    if (sws_save_argv(argc, argv) != SWS_OK) {
        fprintf(stderr, SWS_NAME ": cannot keep a copy of the command line\n");
        return 1;
    }
    sws_proctitle_init(argc, argv);
    if (sws_parse_options(argc, argv, &o) != 0) {
        fprintf(stderr, "Try \"" SWS_NAME " -h\" for help.\n");
        return 1;
    }
    if (o.help) {
        sws_show_help();
        return 0;
    }
    if (o.version) {
        sws_show_version(o.version == 2);
        if (!o.test) {
            return 0;
        }
    }

    sws_time_init();
    log = sws_log_stderr();
    sws_pid = getpid();
    sws_log_set_pid(sws_pid);

    if (o.test) {
        if (o.quiet) {
            log->level = SWS_LOG_ERR;
        }
        return sws_test_config(&o);
    }
    if (o.signal) {
        return sws_signal_master(&o, log);
    }

    if (sws_init_signals(log) != SWS_OK) {
        return 1;
    }

    /* Started by a master's USR2: its listening sockets are ours too. */
    inherited = sws_listening_inherit(log);
    /* and the QUIC slots of its workers (sws_udp_slots.h) */
    (void) sws_udp_steer_inherit(log);
    if (inherited) {
        sws_log_error(SWS_LOG_NOTICE, log, 0, "binary upgrade: %lu listening sockets "
                      "inherited", (unsigned long) inherited);
        sws_upgrade_began();
    }

    cycle = sws_cycle_init(NULL, &o.args);
    sws_listening_inherited_close();
    if (cycle == NULL) {
        return 1;
    }
    ccf = sws_core_conf(cycle);

    /* A new binary stays the old master's child (as nginx's): it sees
     * this one exit, and gives the pid file its name back (a rollback). */
    if (ccf->daemon && !inherited) {
        notify = sws_daemon(log);
        if (notify == -1) {
            return 1;
        }
        sws_pid = getpid();
        sws_log_set_pid(sws_pid);
    }

    if (sws_pidfile_write((const char *) ccf->pid.data, sws_pid, log) != SWS_OK) {
        if (notify != -1) {
            sws_daemon_done(notify, 0, 1, log);
        }
        return 1;
    }

    sws_log_error(SWS_LOG_NOTICE, cycle->log, 0, SWS_NAME "/" SCALWS_VERSION " started");

    if (notify != -1) {
        sws_daemon_done(notify, 1, sws_logs_use_stderr(cycle), cycle->log);
    }

    if (ccf->master) {
        sws_master_process_cycle(cycle, &o.args);
    } else {
        sws_single_process_cycle(cycle, &o.args);
    }
    return 0;
}
