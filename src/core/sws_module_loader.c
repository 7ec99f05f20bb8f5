/*
 * The module loader: built-in modules, then *.so files (dlopen), validated
 * and put in an order where every module comes after the ones it requires.
 * Loading is all-or-nothing.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include "sws_cycle.h"
#include "sws_sdk.h"

/* The descriptor's layout is the ABI: flags took a slot of reserved. */
_Static_assert(offsetof(sws_module_t, flags) == offsetof(sws_module_t, reserved)
               && offsetof(sws_module_t, index)
                  == offsetof(sws_module_t, reserved) + 8 * sizeof(void *),
               "sws_module_t keeps its 1.0 layout");

typedef struct {
    sws_module_t  *module;
    void          *handle;      /* NULL for a built-in */
    char          *path;
    int            state;       /* while sorting: 0 new, 1 visiting, 2 placed */
} sws_module_entry_t;

typedef struct {
    sws_cycle_t         *cycle;
    sws_array_t          entries;   /* sws_module_entry_t */
    sws_uint_t          *order;     /* entry indexes, sorted */
    sws_uint_t           placed;
    sws_uint_t          *stack;     /* the requirement chain being visited */
    sws_uint_t           depth;
} sws_module_loader_t;


static sws_int_t
sws_module_lookup(sws_module_loader_t *ld, const char *name)
{
    sws_uint_t           i;
    sws_module_entry_t  *e = ld->entries.elts;

    for (i = 0; i < ld->entries.nelts; i++) {
        if (strcmp(e[i].module->name, name) == 0) {
            return (sws_int_t) i;
        }
    }

    return -1;
}


/* Check a descriptor and add it; handle is dlclosed by the caller on error
 * only if it was not added. */
static sws_int_t
sws_module_add(sws_module_loader_t *ld, sws_module_t *m, void *handle, const char *path)
{
    sws_int_t            other;
    sws_log_t           *log = ld->cycle->log;
    sws_module_entry_t  *e;

    /* A newer minor may use functions this server lacks, unless the module
     * says it looks those up itself (then it loaded, so it links none). */
    if (m->abi_major != SWS_ABI_MAJOR
        || (m->abi_minor > SWS_ABI_MINOR && !(m->flags & SWS_MODULE_CHECKS_SDK)))
    {
        sws_log_error(SWS_LOG_EMERG, log, 0,
                      "module \"%s\" was built for ABI %u.%u, this scalwsd has ABI %d.%d",
                      path, (unsigned) m->abi_major, (unsigned) m->abi_minor,
                      SWS_ABI_MAJOR, SWS_ABI_MINOR);
        return SWS_ERROR;
    }

    if (m->name == NULL || m->name[0] == '\0') {
        sws_log_error(SWS_LOG_EMERG, log, 0, "module \"%s\" has no name", path);
        return SWS_ERROR;
    }

    other = sws_module_lookup(ld, m->name);
    if (other != -1) {
        e = ld->entries.elts;
        sws_log_error(SWS_LOG_EMERG, log, 0,
                      "module \"%s\" has the same name \"%s\" as module \"%s\"",
                      path, m->name, e[other].path);
        return SWS_ERROR;
    }

    e = sws_array_push(&ld->entries);
    if (e == NULL) {
        return SWS_ERROR;
    }

    e->module = m;
    e->handle = handle;
    e->path = (char *) path;
    e->state = 0;

    return SWS_OK;
}


/* glibc says "FILE: undefined symbol: NAME[, version V]" when a symbol of
 * FILE is missing: say which, and why, instead. (A library the module links
 * that misses a symbol of its own keeps the plain message, naming it.) */
#define SWS_UNDEFINED  ": undefined symbol: "

static void
sws_module_dlopen_failed(sws_module_loader_t *ld, const char *path, const char *err)
{
    char         name[256];
    size_t       len;
    const char  *p;

    if (err == NULL) {
        err = "unknown error";
    }

    len = strlen(path);

    if (strncmp(err, path, len) == 0
        && strncmp(err + len, SWS_UNDEFINED, sizeof(SWS_UNDEFINED) - 1) == 0)
    {
        p = err + len + sizeof(SWS_UNDEFINED) - 1;
        len = strcspn(p, ", \t\n");
        if (len > 0 && len < sizeof(name)) {
            memcpy(name, p, len);
            name[len] = '\0';
            sws_sdk_log_missing(ld->cycle->log, path, name);
            return;
        }
    }

    sws_log_error(SWS_LOG_EMERG, ld->cycle->log, 0, "dlopen() \"%s\" failed: %s", path, err);
}


static sws_int_t
sws_module_open(sws_module_loader_t *ld, const char *file)
{
    char          *path;
    void          *handle;
    size_t         len;
    sws_module_t  *m;

    /* without a slash dlopen() would search the library path */
    len = strlen(file) + 3;

    path = sws_pnalloc(ld->cycle->pool, len);
    if (path == NULL) {
        return SWS_ERROR;
    }
    snprintf(path, len, "%s%s", strchr(file, '/') ? "" : "./", file);

    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        sws_module_dlopen_failed(ld, path, dlerror());
        return SWS_ERROR;
    }

    if (sws_sdk_check_imports(handle, path, ld->cycle->log) != SWS_OK) {
        dlclose(handle);
        return SWS_ERROR;
    }

    m = dlsym(handle, SWS_MODULE_SYMBOL);
    if (m == NULL) {
        sws_log_error(SWS_LOG_EMERG, ld->cycle->log, 0,
                      "module \"%s\" has no \"" SWS_MODULE_SYMBOL "\" symbol", path);
        dlclose(handle);
        return SWS_ERROR;
    }

    if (sws_module_add(ld, m, handle, path) != SWS_OK) {
        dlclose(handle);
        return SWS_ERROR;
    }

    return SWS_OK;
}


static int
sws_module_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}


/* Every *.so of dir, sorted by name; a missing directory holds none. */
static sws_int_t
sws_module_open_dir(sws_module_loader_t *ld, const char *dir)
{
    DIR            *d;
    char          **names, **tmp, path[4096];
    size_t          n, nalloc, len, i;
    sws_int_t       rc;
    struct dirent  *de;

    d = opendir(dir);
    if (d == NULL) {
        if (errno == ENOENT) {
            return SWS_OK;
        }
        sws_log_error(SWS_LOG_EMERG, ld->cycle->log, errno, "opendir() \"%s\" failed", dir);
        return SWS_ERROR;
    }

    names = NULL;
    n = nalloc = 0;
    rc = SWS_OK;

    while ((de = readdir(d)) != NULL) {
        len = strlen(de->d_name);
        if (len <= 3 || strcmp(de->d_name + len - 3, ".so") != 0) {
            continue;
        }

        if (n == nalloc) {
            nalloc = nalloc ? nalloc * 2 : 16;
            tmp = realloc(names, nalloc * sizeof(char *));
            if (tmp == NULL) {
                rc = SWS_ERROR;
                break;
            }
            names = tmp;
        }

        names[n] = strdup(de->d_name);
        if (names[n] == NULL) {
            rc = SWS_ERROR;
            break;
        }
        n++;
    }

    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_EMERG, ld->cycle->log, ENOMEM, "reading \"%s\" failed", dir);
    }

    closedir(d);

    if (rc == SWS_OK && n > 0) {
        qsort(names, n, sizeof(char *), sws_module_cmp_names);
    }

    len = strlen(dir);

    for (i = 0; i < n && rc == SWS_OK; i++) {
        snprintf(path, sizeof(path), "%s%s%s", dir,
                 (len && dir[len - 1] == '/') ? "" : "/", names[i]);
        rc = sws_module_open(ld, path);
    }

    for (i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);

    return rc;
}


static sws_int_t
sws_module_check_requires(sws_module_loader_t *ld)
{
    sws_uint_t           i;
    const char *const   *r;
    sws_module_entry_t  *e = ld->entries.elts;

    for (i = 0; i < ld->entries.nelts; i++) {
        for (r = e[i].module->requires; r != NULL && *r != NULL; r++) {
            if (sws_module_lookup(ld, *r) == -1) {
                sws_log_error(SWS_LOG_EMERG, ld->cycle->log, 0,
                              "module \"%s\" (\"%s\") requires module \"%s\", "
                              "which is not loaded", e[i].path, e[i].module->name, *r);
                return SWS_ERROR;
            }
        }
    }

    return SWS_OK;
}


static void
sws_module_report_cycle(sws_module_loader_t *ld, sws_uint_t i)
{
    char                 chain[1024];
    size_t               n = 0;
    sws_uint_t           k;
    sws_module_entry_t  *e = ld->entries.elts;

    /* the chain from the first visit of i back to i */
    for (k = 0; k < ld->depth && ld->stack[k] != i; k++) { /* void */ }

    chain[0] = '\0';
    for ( /* void */ ; k < ld->depth && n < sizeof(chain); k++) {
        n += (size_t) snprintf(chain + n, sizeof(chain) - n, "%s -> ",
                               e[ld->stack[k]].module->name);
    }
    if (n < sizeof(chain)) {
        snprintf(chain + n, sizeof(chain) - n, "%s", e[i].module->name);
    }

    sws_log_error(SWS_LOG_EMERG, ld->cycle->log, 0,
                  "module \"%s\" (\"%s\") has circular requirements: %s",
                  e[i].path, e[i].module->name, chain);
}


/* Depth first: a module is placed after everything it requires. */
static sws_int_t
sws_module_visit(sws_module_loader_t *ld, sws_uint_t i)
{
    const char *const   *r;
    sws_module_entry_t  *e = ld->entries.elts;

    if (e[i].state == 2) {
        return SWS_OK;
    }

    if (e[i].state == 1) {
        sws_module_report_cycle(ld, i);
        return SWS_ERROR;
    }

    e[i].state = 1;
    ld->stack[ld->depth++] = i;

    for (r = e[i].module->requires; r != NULL && *r != NULL; r++) {
        if (sws_module_visit(ld, (sws_uint_t) sws_module_lookup(ld, *r)) != SWS_OK) {
            return SWS_ERROR;
        }
    }

    ld->depth--;
    e[i].state = 2;
    ld->order[ld->placed++] = i;

    return SWS_OK;
}


static void
sws_module_close_all(sws_module_loader_t *ld)
{
    sws_uint_t           i;
    sws_module_entry_t  *e = ld->entries.elts;

    for (i = ld->entries.nelts; i-- > 0; /* void */) {
        if (e[i].handle != NULL) {
            dlclose(e[i].handle);
        }
    }
}


sws_int_t
sws_modules_load(sws_cycle_t *cycle, const char *dir, sws_array_t *extra)
{
    char                 **paths;
    sws_uint_t             i, n;
    sws_pool_t            *pool = cycle->pool;
    sws_module_entry_t    *e;
    sws_module_loader_t    ld;

    sws_memzero(&ld, sizeof(ld));
    ld.cycle = cycle;

    if (sws_array_init(&ld.entries, pool, 32, sizeof(sws_module_entry_t)) != SWS_OK) {
        return SWS_ERROR;
    }

    for (i = 0; i < sws_builtin_modules_n; i++) {
        if (sws_module_add(&ld, sws_builtin_modules[i], NULL, "built-in") != SWS_OK) {
            goto failed;
        }
    }

    if (dir != NULL && sws_module_open_dir(&ld, dir) != SWS_OK) {
        goto failed;
    }

    paths = extra ? extra->elts : NULL;
    for (i = 0; extra != NULL && i < extra->nelts; i++) {
        if (sws_module_open(&ld, paths[i]) != SWS_OK) {
            goto failed;
        }
    }

    if (sws_module_check_requires(&ld) != SWS_OK) {
        goto failed;
    }

    n = ld.entries.nelts;
    ld.order = sws_palloc(pool, (n + 1) * sizeof(sws_uint_t));
    ld.stack = sws_palloc(pool, (n + 1) * sizeof(sws_uint_t));
    cycle->modules = sws_pcalloc(pool, (n + 1) * sizeof(sws_module_t *));
    cycle->module_handles = sws_pcalloc(pool, (n + 1) * sizeof(void *));
    cycle->module_paths = sws_pcalloc(pool, (n + 1) * sizeof(char *));

    if (ld.order == NULL || ld.stack == NULL || cycle->modules == NULL
        || cycle->module_handles == NULL || cycle->module_paths == NULL)
    {
        goto failed;
    }

    /* the built-ins come first (they require only each other) */
    for (i = 0; i < n; i++) {
        if (sws_module_visit(&ld, i) != SWS_OK) {
            goto failed;
        }
    }

    e = ld.entries.elts;

    for (i = 0; i < n; i++) {
        cycle->modules[i] = e[ld.order[i]].module;
        cycle->module_handles[i] = e[ld.order[i]].handle;
        cycle->module_paths[i] = e[ld.order[i]].path;
        cycle->modules[i]->index = i;
        cycle->modules[i]->ctx_index = i;
    }

    cycle->modules_n = n;

    return SWS_OK;

failed:

    sws_module_close_all(&ld);

    cycle->modules = NULL;
    cycle->module_handles = NULL;
    cycle->module_paths = NULL;
    cycle->modules_n = 0;

    return SWS_ERROR;
}


void
sws_modules_unload(sws_cycle_t *cycle)
{
    sws_uint_t  i;

    /* dependents first */
    for (i = cycle->modules_n; cycle->module_handles != NULL && i-- > 0; /* void */) {
        if (cycle->module_handles[i] != NULL) {
            dlclose(cycle->module_handles[i]);
        }
    }

    cycle->modules = NULL;
    cycle->module_handles = NULL;
    cycle->module_paths = NULL;
    cycle->modules_n = 0;
}


sws_module_t *
sws_module_find(sws_cycle_t *cycle, const char *name)
{
    sws_uint_t  i;

    for (i = 0; i < cycle->modules_n; i++) {
        if (strcmp(cycle->modules[i]->name, name) == 0) {
            return cycle->modules[i];
        }
    }

    return NULL;
}
