/*
 * libFuzzer target: the configuration readers (src/core/sws_conf_nginx.c,
 * sws_conf_yaml.c, sws_conf_file.c) on arbitrary text, up to the directive
 * tree; no module is loaded and nothing is dispatched. The first byte
 * picks the syntax (even: nginx, odd: YAML), the rest is the text of the
 * configuration file, written into a private directory and read as the
 * server reads it, includes and all. The tree is then checked (every
 * directive has a name, a file and a line; blocks nest no deeper than the
 * text could make them) and printed to /dev/null (sws_conf_dump).
 *
 * An include reads only what lies in the private directory: the target is
 * linked with open() and glob() wrapped (-Wl,--wrap), and the wrappers
 * refuse other paths, so that no input reads the machine's files or
 * blocks on a device.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sws_conf_read.h"
#include "sws_log_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int __real_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...);
int __real_glob(const char *pattern, int flags, int (*errfunc)(const char *, int),
    glob_t *pglob);
int __wrap_glob(const char *pattern, int flags, int (*errfunc)(const char *, int),
    glob_t *pglob);

static char               dir[] = "/tmp/sws_fuzz_conf.XXXXXX";
static size_t             dir_len;
static struct sws_log_s   quiet;
static FILE              *null_out;

/* Inside the private directory, without ".." (or /dev/null). */
static int
allowed(const char *path)
{
    return strcmp(path, "/dev/null") == 0
           || (strncmp(path, dir, dir_len) == 0 && path[dir_len] == '/'
               && strstr(path, "/..") == NULL);
}

int
__wrap_open(const char *path, int flags, ...)
{
    va_list  ap;
    int      mode;

    va_start(ap, flags);
    mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
    va_end(ap);
    if (!allowed(path)) {
        errno = ENOENT;
        return -1;
    }
    return __real_open(path, flags, mode);
}

int
__wrap_glob(const char *pattern, int flags, int (*errfunc)(const char *, int),
    glob_t *pglob)
{
    if (!allowed(pattern)) {
        sws_memzero(pglob, sizeof(*pglob));
        return GLOB_NOMATCH;
    }
    return __real_glob(pattern, flags, errfunc, pglob);
}

static void
cleanup(void)
{
    rmdir(dir);                          /* empty: each input's file is unlinked */
}

static void
setup(void)
{
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        abort();
    }
    atexit(cleanup);
    dir_len = strlen(dir);
    quiet.fd = __real_open("/dev/null", O_WRONLY);
    quiet.level = SWS_LOG_EMERG;
    null_out = fopen("/dev/null", "w");
    if (quiet.fd == -1 || null_out == NULL) {
        abort();
    }
    sws_time_init();
    sws_time_update();
}

static void
check_block(const sws_array_t *block, size_t depth, size_t size)
{
    const sws_conf_node_t  *n = block->elts;
    const sws_str_t        *args;
    sws_uint_t              i;

    /* a block takes at least a byte of text, in each of the files an
     * include may nest (the same file here) */
    if (depth > (size_t) (SWS_CONF_MAX_INCLUDE_DEPTH + 1) * size) {
        abort();
    }
    for (i = 0; i < block->nelts; i++) {
        args = n[i].args.elts;
        if (n[i].args.nelts == 0 || n[i].file == NULL || n[i].line == 0
            || (args[0].len && args[0].data == NULL))
        {
            abort();
        }
        if (n[i].children) {
            check_block(n[i].children, depth + 1, size);
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char              path[64];
    int               fd;
    sws_pool_t       *pool;
    sws_conf_node_t  *root;

    if (dir_len == 0) {
        setup();
    }
    if (size == 0) {
        return 0;
    }
    snprintf(path, sizeof(path), "%s/scalws.%s", dir, (data[0] & 1) ? "yaml" : "conf");
    fd = __real_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd == -1 || write(fd, data + 1, size - 1) != (ssize_t) (size - 1)) {
        abort();
    }
    close(fd);

    pool = sws_pool_create(4096, &quiet);
    if (pool == NULL) {
        abort();
    }
    root = sws_conf_read_file(pool, &quiet, path);
    if (root) {
        if (root->children == NULL) {
            abort();
        }
        check_block(root->children, 0, size);
        sws_conf_dump(root, null_out);
    }
    sws_pool_destroy(pool);
    unlink(path);
    return 0;
}
