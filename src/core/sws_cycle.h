/*
 * A cycle is one loaded configuration: its pool, modules, module confs,
 * listening sockets and logs. A reload builds a new cycle next to the old.
 */
#ifndef SWS_CYCLE_H
#define SWS_CYCLE_H

#include <scalws/scalws.h>
#include "sws_conf_tree.h"

typedef struct sws_listening_s sws_listening_t;   /* src/event/sws_listening.h */

struct sws_cycle_s {
    sws_pool_t        *pool;
    sws_log_t         *log;            /* the error log */

    /* Modules in initialisation order (requirements first). */
    sws_module_t     **modules;
    sws_uint_t         modules_n;
    void             **module_handles; /* dlopen handles; NULL for built-ins */
    char             **module_paths;   /* file each came from; "built-in" */

    /* Top-level (main) conf of each module by module->index, or NULL. */
    void             **conf_ctx;

    sws_array_t        listening;      /* sws_listening_t * */
    sws_array_t        open_logs;      /* sws_log_t *, reopened on USR1 */

    sws_conf_node_t   *conf_tree;
    sws_str_t          prefix;         /* with trailing slash */
    sws_str_t          conf_file;      /* absolute */
    sws_str_t          conf_prefix;    /* directory of conf_file, trailing slash */

    sws_cycle_t       *old_cycle;

    /* sws_helper_t * declared by modules (sws_helper.c), or NULL. */
    sws_array_t       *helpers;

    /* sws_keyed_zone_t * declared by modules (sws_keyed_zone.c), or NULL. */
    sws_array_t       *keyed_zones;

    /* Worker runtime state (src/event). */
    void              *event_state;
};

/* Options from the command line (src/core/scalwsd.c). */
typedef struct {
    const char  *prefix;        /* -p */
    const char  *conf_file;     /* -c */
    const char  *directives;    /* -g, appended to the top level */
    int          test_only;     /* -t / -T: do not open listening sockets */
} sws_cycle_args_t;

/* Read the configuration, load the modules, run every conf hook and open
 * the listening sockets (reusing those of old with the same address).
 * Returns NULL after logging the reason; nothing of a failed cycle stays. */
sws_cycle_t *sws_cycle_init(sws_cycle_t *old, const sws_cycle_args_t *args);
void         sws_cycle_destroy(sws_cycle_t *cycle);

/* Built-in modules (core, events, http core, http log), in order. */
extern sws_module_t *sws_builtin_modules[];
extern sws_uint_t    sws_builtin_modules_n;

/*
 * Module loading (src/core/sws_module_loader.c): the built-ins, then every
 * *.so in dir (sorted by file name; dir may be NULL or missing: then none),
 * then each path in extra (char *). Validates each descriptor, refuses
 * duplicates, orders by requirements (stable), assigns index and ctx_index,
 * and fills cycle->modules, modules_n, module_handles, module_paths. On any
 * error logs it at emerg naming the file and returns SWS_ERROR with nothing
 * left loaded.
 */
sws_int_t sws_modules_load(sws_cycle_t *cycle, const char *dir, sws_array_t *extra);
void      sws_modules_unload(sws_cycle_t *cycle);

#endif
