/*
 * Building a cycle: read the configuration tree, load the modules it names,
 * create and fill every module's configuration, open the listening sockets.
 * All or nothing: a failure leaves no trace and the old cycle untouched.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_cycle.h"
#include "sws_conf_internal.h"
#include "sws_conf_read.h"
#include "sws_core_module.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"
#include "../event/sws_event.h"
#include "../event/sws_events_module.h"

#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif
#ifndef SWS_MODULES_PATH
#define SWS_MODULES_PATH  "modules"
#endif

/* Modules whose create_main_conf is the top level rather than http { }. */
static int
sws_is_top_level_module(sws_module_t *m)
{
    return m == &sws_core_module || m == &sws_events_module;
}

static sws_int_t
sws_cycle_paths(sws_cycle_t *cycle, const sws_cycle_args_t *args)
{
    char        buf[PATH_MAX];
    const char *prefix = args->prefix ? args->prefix : "./";
    const char *conf = args->conf_file ? args->conf_file : "conf/scalws.conf";
    size_t      n;
    char       *slash;

    if (realpath(prefix, buf) == NULL) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, errno, "prefix \"%s\" is not usable", prefix);
        return SWS_ERROR;
    }
    n = strlen(buf);
    cycle->prefix.data = sws_pnalloc(cycle->pool, n + 2);
    if (cycle->prefix.data == NULL) {
        return SWS_ERROR;
    }
    sws_memcpy(cycle->prefix.data, buf, n);
    if (n == 0 || buf[n - 1] != '/') {
        cycle->prefix.data[n++] = '/';
    }
    cycle->prefix.data[n] = '\0';
    cycle->prefix.len = n;

    if (conf[0] == '/') {
        n = snprintf(buf, sizeof(buf), "%s", conf);
    } else {
        n = snprintf(buf, sizeof(buf), "%s%s", (char *) cycle->prefix.data, conf);
    }
    if (n >= sizeof(buf)) {
        sws_log_error(SWS_LOG_EMERG, cycle->log, 0, "configuration path too long");
        return SWS_ERROR;
    }
    cycle->conf_file.data = (u_char *) sws_pstrdup_cstr(cycle->pool,
                                &(sws_str_t) { n, (u_char *) buf });
    cycle->conf_file.len = n;
    slash = strrchr(buf, '/');
    n = slash - buf + 1;
    cycle->conf_prefix.data = (u_char *) sws_pstrdup_cstr(cycle->pool,
                                  &(sws_str_t) { n, (u_char *) buf });
    cycle->conf_prefix.len = n;
    return (cycle->conf_file.data && cycle->conf_prefix.data) ? SWS_OK : SWS_ERROR;
}

/* -g "directive args; ...": simple top-level directives appended to the
 * configuration, reported as coming from "command line". */
static sws_int_t
sws_cycle_add_cmdline(sws_cycle_t *cycle, const char *text)
{
    sws_conf_lexer_t  lx;
    sws_conf_node_t   node;
    sws_conf_tok_e    tok;
    sws_str_t         word, *arg;
    int               started = 0;

    sws_memzero(&lx, sizeof(lx));
    lx.pos = (const u_char *) text;
    lx.end = lx.pos + strlen(text);
    lx.line = 1;
    lx.file = "command line";
    lx.pool = cycle->pool;
    lx.log = cycle->log;

    for ( ;; ) {
        tok = sws_conf_lex(&lx, &word);
        switch (tok) {
        case SWS_CONF_TOK_WORD:
            if (!started) {
                if (sws_conf_node_init(cycle->pool, &node, "command line", 1) != SWS_OK) {
                    return SWS_ERROR;
                }
                started = 1;
            }
            arg = sws_array_push(&node.args);
            if (arg == NULL) {
                return SWS_ERROR;
            }
            *arg = word;
            break;
        case SWS_CONF_TOK_SEMI:
            if (started) {
                if (sws_conf_add_node(cycle->pool, cycle->log,
                                      cycle->conf_tree->children, &node, 0) != SWS_OK) {
                    return SWS_ERROR;
                }
                started = 0;
            }
            break;
        case SWS_CONF_TOK_EOF:
            if (started) {
                sws_log_error(SWS_LOG_EMERG, cycle->log, 0,
                              "unexpected end of parameter, expecting \";\" in command line");
                return SWS_ERROR;
            }
            return SWS_OK;
        case SWS_CONF_TOK_ERROR:
            return SWS_ERROR;
        default:
            sws_log_error(SWS_LOG_EMERG, cycle->log, 0,
                          "blocks are not allowed in command line directives");
            return SWS_ERROR;
        }
    }
}

/* modules_dir and load_module must be known before directives can be
 * dispatched to the modules they bring: pick them from the top level. */
static sws_int_t
sws_cycle_load_modules(sws_cycle_t *cycle)
{
    sws_conf_node_t *nodes = cycle->conf_tree->children->elts;
    sws_array_t     *extra;
    sws_uint_t       i;
    sws_str_t       *name, *arg, dir = sws_null_string;
    char           **path;
    sws_conf_t       cf;

    extra = sws_array_create(cycle->pool, 4, sizeof(char *));
    if (extra == NULL) {
        return SWS_ERROR;
    }
    sws_memzero(&cf, sizeof(cf));
    cf.cycle = cycle;
    cf.pool = cycle->pool;
    cf.log = cycle->log;

    for (i = 0; i < cycle->conf_tree->children->nelts; i++) {
        name = nodes[i].args.elts;
        if (nodes[i].args.nelts != 2) {
            continue;   /* the dispatcher reports wrong argument counts */
        }
        arg = &name[1];
        if (sws_str_eq_cstr(name, "modules_dir")) {
            dir = *arg;
            cf.node = &nodes[i];
            if (sws_conf_full_name(&cf, &dir, 0) != SWS_OK) {
                return SWS_ERROR;
            }
        } else if (sws_str_eq_cstr(name, "load_module")) {
            sws_str_t p = *arg;
            cf.node = &nodes[i];
            if (sws_conf_full_name(&cf, &p, 0) != SWS_OK) {
                return SWS_ERROR;
            }
            if (access((char *) p.data, R_OK) != 0) {
                sws_log_error(SWS_LOG_EMERG, cycle->log, errno,
                              "load_module \"%s\" failed in %s:%lu", (char *) p.data,
                              nodes[i].file, (unsigned long) nodes[i].line);
                return SWS_ERROR;
            }
            path = sws_array_push(extra);
            if (path == NULL) {
                return SWS_ERROR;
            }
            *path = (char *) p.data;
        }
    }

    if (dir.data == NULL) {
        sws_str_t def = { strlen(SWS_MODULES_PATH), (u_char *) SWS_MODULES_PATH };
        dir = def;
        sws_core_strip_prefix(&dir);
        if (sws_conf_full_name(&cf, &dir, 0) != SWS_OK) {
            return SWS_ERROR;
        }
    }

    return sws_modules_load(cycle, (char *) dir.data, extra);
}

static sws_int_t
sws_cycle_configure(sws_cycle_t *cycle)
{
    sws_conf_t     cf;
    sws_uint_t     i;
    sws_module_t  *m;
    char          *rv;

    cycle->conf_ctx = sws_pcalloc(cycle->pool, sizeof(void *) * cycle->modules_n);
    if (cycle->conf_ctx == NULL) {
        return SWS_ERROR;
    }

    sws_memzero(&cf, sizeof(cf));
    cf.cycle = cycle;
    cf.pool = cycle->pool;
    cf.temp_pool = sws_pool_create(16384, cycle->log);
    cf.log = cycle->log;
    cf.cmd_type = SWS_MAIN_CONF;
    cf.node = cycle->conf_tree;
    if (cf.temp_pool == NULL) {
        return SWS_ERROR;
    }

    for (i = 0; i < cycle->modules_n; i++) {
        m = cycle->modules[i];
        if (sws_is_top_level_module(m) && m->create_main_conf) {
            cycle->conf_ctx[i] = m->create_main_conf(&cf);
            if (cycle->conf_ctx[i] == NULL) {
                goto failed;
            }
        }
    }

    if (sws_conf_dispatch(&cf, cycle->conf_tree->children) != SWS_OK) {
        goto failed;
    }

    cf.node = cycle->conf_tree;
    for (i = 0; i < cycle->modules_n; i++) {
        m = cycle->modules[i];
        if (sws_is_top_level_module(m) && m->init_main_conf) {
            rv = m->init_main_conf(&cf, cycle->conf_ctx[i]);
            if (rv != SWS_CONF_OK) {
                if (rv != SWS_CONF_ERROR) {
                    sws_log_error(SWS_LOG_EMERG, cycle->log, 0, "%s in %s", rv,
                                  (char *) cycle->conf_file.data);
                }
                goto failed;
            }
        }
    }

    sws_pool_destroy(cf.temp_pool);
    return SWS_OK;

failed:
    sws_pool_destroy(cf.temp_pool);
    return SWS_ERROR;
}

/* Module descriptors are shared with the old cycle (dlopen of the same file
 * returns the same object): give them back the old cycle's indexes. */
static void
sws_cycle_restore_indexes(sws_cycle_t *old)
{
    sws_uint_t i;

    if (old == NULL) {
        return;
    }
    for (i = 0; i < old->modules_n; i++) {
        old->modules[i]->index = i;
        old->modules[i]->ctx_index = i;
    }
}

/* Started as root, a log file that root owns (just created) goes to the
 * workers' user at once, as the files reopened on USR1 do: otherwise a log
 * made by a check as root ("scalwsd -t") would keep the same server from
 * opening it when it runs as that user from the start (systemd's User=). */
static void
sws_cycle_chown_logs(sws_cycle_t *cycle, const sws_core_conf_t *ccf)
{
    sws_log_t  **logs = cycle->open_logs.elts;
    sws_uint_t   i;
    struct stat  st;

    if (geteuid() != 0 || ccf->uid == (uid_t) -1) {
        return;
    }
    for (i = 0; i < cycle->open_logs.nelts; i++) {
        if (logs[i]->path == NULL || fstat(logs[i]->fd, &st) == -1
            || !S_ISREG(st.st_mode) || st.st_uid != 0)
        {
            continue;
        }
        if (fchown(logs[i]->fd, ccf->uid, (gid_t) -1) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "fchown(\"%s\") failed",
                          logs[i]->path);
        }
    }
}


sws_cycle_t *
sws_cycle_init(sws_cycle_t *old, const sws_cycle_args_t *args)
{
    sws_pool_t      *pool;
    sws_cycle_t     *cycle;
    sws_log_t       *log = old ? old->log : sws_log_stderr();
    sws_core_conf_t *ccf;
    sws_uint_t       workers;

    sws_time_update();

    pool = sws_pool_create(16384, log);
    if (pool == NULL) {
        return NULL;
    }
    cycle = sws_pcalloc(pool, sizeof(sws_cycle_t));
    if (cycle == NULL
        || sws_array_init(&cycle->listening, pool, 8, sizeof(sws_listening_t *)) != SWS_OK
        || sws_array_init(&cycle->open_logs, pool, 4, sizeof(sws_log_t *)) != SWS_OK)
    {
        sws_pool_destroy(pool);
        return NULL;
    }
    cycle->pool = pool;
    cycle->log = log;
    cycle->old_cycle = old;

    if (sws_cycle_paths(cycle, args) != SWS_OK) {
        goto failed;
    }

    cycle->conf_tree = sws_conf_read_file(pool, log, (char *) cycle->conf_file.data);
    if (cycle->conf_tree == NULL) {
        goto failed;
    }
    if (args->directives && sws_cycle_add_cmdline(cycle, args->directives) != SWS_OK) {
        goto failed;
    }

    if (sws_cycle_load_modules(cycle) != SWS_OK) {
        goto failed;
    }
    if (sws_cycle_configure(cycle) != SWS_OK || sws_helpers_check(cycle) != SWS_OK) {
        goto failed_modules;
    }

    ccf = sws_core_conf(cycle);
    if (ccf->error_log) {
        cycle->log = ccf->error_log;
    }
    if (!args->test_only) {
        sws_core_apply_env(ccf);
    }
    sws_cycle_chown_logs(cycle, ccf);

    if (!args->test_only) {
        workers = ccf->master ? (sws_uint_t) ccf->worker_processes : 1;
        if (sws_listening_open(cycle, workers) != SWS_OK) {
            sws_listening_abandon(cycle);
            goto failed_modules;
        }
    }

    return cycle;

failed_modules:
    sws_modules_unload(cycle);
failed:
    sws_cycle_restore_indexes(old);
    if (old) {
        /* Give back any listening socket this attempt took over. */
        sws_listening_t **lss = old->listening.elts;
        for (sws_uint_t i = 0; i < old->listening.nelts; i++) {
            lss[i]->handed_over = 0;
            lss[i]->inherited_n = 0;
        }
    }
    sws_pool_destroy(pool);
    return NULL;
}

void
sws_cycle_destroy(sws_cycle_t *cycle)
{
    sws_listening_close(cycle, 0);
    sws_modules_unload(cycle);
    sws_pool_destroy(cycle->pool);
}
