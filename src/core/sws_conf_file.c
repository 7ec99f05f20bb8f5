/*
 * Configuration files: choosing the reader by extension, expanding
 * `include`, and printing a tree back as normalised nginx syntax.
 */
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_conf_read.h"


void
sws_conf_read_error(sws_log_t *log, const char *file, sws_uint_t line, int err,
    const char *fmt, ...)
{
    char     msg[1024];
    va_list  args;

    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);

    if (file == NULL) {
        sws_log_error(SWS_LOG_EMERG, log, err, "%s", msg);
    } else {
        sws_log_error(SWS_LOG_EMERG, log, err, "%s in %s:%lu", msg, file,
                      (unsigned long) line);
    }
}


u_char *
sws_conf_load_file(sws_log_t *log, const char *path, size_t *len)
{
    int          fd;
    u_char      *buf;
    size_t       size, n;
    ssize_t      r;
    struct stat  st;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "open() \"%s\" failed", path);
        return NULL;
    }

    if (fstat(fd, &st) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "fstat() \"%s\" failed", path);
        close(fd);
        return NULL;
    }

    size = S_ISREG(st.st_mode) ? (size_t) st.st_size : 0;
    buf = malloc(size + 1);
    if (buf == NULL) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "malloc(%zu) failed", size + 1);
        close(fd);
        return NULL;
    }

    for (n = 0; n < size; n += (size_t) r) {
        r = read(fd, buf + n, size - n);
        if (r == 0) {
            break;                      /* the file shrank meanwhile */
        }
        if (r == -1) {
            if (errno == EINTR) {
                r = 0;
                continue;
            }
            sws_log_error(SWS_LOG_EMERG, log, errno, "read() \"%s\" failed", path);
            free(buf);
            close(fd);
            return NULL;
        }
    }

    /* a directory or a special file: let read() tell what is wrong */
    if (!S_ISREG(st.st_mode) && read(fd, buf, 1) == -1) {
        sws_log_error(SWS_LOG_EMERG, log, errno, "read() \"%s\" failed", path);
        free(buf);
        close(fd);
        return NULL;
    }

    close(fd);
    buf[n] = '\0';
    *len = n;

    return buf;
}


static int
sws_conf_is_yaml(const char *path)
{
    size_t  n = strlen(path);

    return (n > 5 && strcasecmp(path + n - 5, ".yaml") == 0)
           || (n > 4 && strcasecmp(path + n - 4, ".yml") == 0);
}


sws_conf_node_t *
sws_conf_read_depth(sws_pool_t *pool, sws_log_t *log, const char *path, sws_uint_t depth)
{
    if (sws_conf_is_yaml(path)) {
        return sws_conf_read_yaml(pool, log, path, depth);
    }

    return sws_conf_read_nginx(pool, log, path, depth);
}


/* The main file being read: relative includes are relative to its
 * directory, at every depth (configuration is read by one thread). */
static const char  *sws_conf_main_file;

sws_conf_node_t *
sws_conf_read_file(sws_pool_t *pool, sws_log_t *log, const char *path)
{
    const char       *outer = sws_conf_main_file;
    sws_conf_node_t  *root;

    sws_conf_main_file = path;
    root = sws_conf_read_depth(pool, log, path, 0);
    sws_conf_main_file = outer;
    return root;
}


sws_int_t
sws_conf_node_init(sws_pool_t *pool, sws_conf_node_t *node, const char *file,
    sws_uint_t line)
{
    node->file = file;
    node->line = line;
    node->children = NULL;

    return sws_array_init(&node->args, pool, 4, sizeof(sws_str_t));
}


sws_conf_node_t *
sws_conf_root_create(sws_pool_t *pool, const char *file)
{
    char             *copy;
    sws_str_t        *name;
    sws_conf_node_t  *root;

    root = sws_palloc(pool, sizeof(sws_conf_node_t));
    copy = sws_pnalloc(pool, strlen(file) + 1);
    if (root == NULL || copy == NULL) {
        return NULL;
    }

    strcpy(copy, file);

    if (sws_conf_node_init(pool, root, copy, 0) != SWS_OK) {
        return NULL;
    }

    name = sws_array_push(&root->args);
    root->children = sws_array_create(pool, 16, sizeof(sws_conf_node_t));
    if (name == NULL || root->children == NULL) {
        return NULL;
    }

    name->len = 0;
    name->data = (u_char *) "";

    return root;
}


/* Read one included file and put its top-level directives into block. */
static sws_int_t
sws_conf_include_file(sws_pool_t *pool, sws_log_t *log, sws_array_t *block,
    const char *path, sws_uint_t depth)
{
    sws_uint_t        i;
    sws_conf_node_t  *root, *node, *child;

    root = sws_conf_read_depth(pool, log, path, depth);
    if (root == NULL) {
        return SWS_ERROR;
    }

    child = root->children->elts;

    for (i = 0; i < root->children->nelts; i++) {
        node = sws_array_push(block);
        if (node == NULL) {
            return SWS_ERROR;
        }
        *node = child[i];
    }

    return SWS_OK;
}


/* glob() error callback: a directory that does not exist matches nothing;
 * anything else (e.g. no permission) stops the expansion. glob() has no
 * user data pointer, hence the static (configuration is read by one thread). */
static int  sws_conf_glob_err;

static int
sws_conf_glob_error(const char *path, int err)
{
    (void) path;

    if (err == ENOENT || err == ENOTDIR) {
        return 0;
    }

    sws_conf_glob_err = err;
    return 1;
}


/* include PATTERN: relative to the main file's directory, as nginx (so
 * that Debian's snippets/fastcgi-php.conf finds "fastcgi.conf" next to
 * nginx.conf); a pattern with wildcards may match nothing, a plain file
 * name must exist. */
static sws_int_t
sws_conf_include(sws_pool_t *pool, sws_log_t *log, sws_array_t *block,
    const sws_conf_node_t *node, sws_uint_t depth)
{
    int         fd, rc;
    char       *path, *p, *globbed;
    const char *base;
    size_t      dirlen;
    glob_t      gl;
    sws_str_t  *pattern;
    sws_uint_t  i;

    if (node->children != NULL) {
        sws_conf_read_error(log, node->file, node->line, 0,
                            "directive \"include\" is not terminated by \";\"");
        return SWS_ERROR;
    }

    pattern = node->args.elts;

    if (node->args.nelts != 2) {
        sws_conf_read_error(log, node->file, node->line, 0,
                            "invalid number of arguments in \"include\" directive");
        return SWS_ERROR;
    }

    if (pattern[1].len == 0) {
        sws_conf_read_error(log, node->file, node->line, 0,
                            "empty file name in \"include\" directive");
        return SWS_ERROR;
    }

    if (depth + 1 > SWS_CONF_MAX_INCLUDE_DEPTH) {
        sws_conf_read_error(log, node->file, node->line, 0, "too deep include nesting");
        return SWS_ERROR;
    }

    pattern = &pattern[1];
    base = sws_conf_main_file ? sws_conf_main_file : node->file;
    p = strrchr(base, '/');
    dirlen = (pattern->data[0] == '/' || p == NULL) ? 0 : (size_t) (p - base) + 1;

    path = sws_pnalloc(pool, dirlen + pattern->len + 1);
    if (path == NULL) {
        return SWS_ERROR;
    }

    p = (char *) sws_cpymem(path, base, dirlen);
    p = (char *) sws_cpymem(p, pattern->data, pattern->len);
    *p = '\0';

    if (strpbrk(path + dirlen, "*?[") == NULL) {
        /* report a missing file at the include, then read it */
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd == -1) {
            sws_conf_read_error(log, node->file, node->line, errno,
                                "open() \"%s\" failed", path);
            return SWS_ERROR;
        }
        close(fd);

        return sws_conf_include_file(pool, log, block, path, depth + 1);
    }

    /* the directory part is literal: escape what glob() would expand */
    globbed = sws_pnalloc(pool, 2 * dirlen + pattern->len + 1);
    if (globbed == NULL) {
        return SWS_ERROR;
    }

    for (p = globbed, i = 0; i < dirlen; i++) {
        if (strchr("*?[\\", path[i]) != NULL) {
            *p++ = '\\';
        }
        *p++ = path[i];
    }
    strcpy(p, path + dirlen);

    sws_conf_glob_err = 0;
    rc = glob(globbed, 0, sws_conf_glob_error, &gl);     /* sorted */

    if (rc == GLOB_NOMATCH) {
        return SWS_OK;
    }

    if (rc != 0) {
        sws_conf_read_error(log, node->file, node->line, sws_conf_glob_err,
                            "glob() \"%s\" failed", path);
        globfree(&gl);
        return SWS_ERROR;
    }

    for (i = 0; i < gl.gl_pathc; i++) {
        if (sws_conf_include_file(pool, log, block, gl.gl_pathv[i], depth + 1) != SWS_OK) {
            globfree(&gl);
            return SWS_ERROR;
        }
    }

    globfree(&gl);

    return SWS_OK;
}


sws_int_t
sws_conf_add_node(sws_pool_t *pool, sws_log_t *log, sws_array_t *block,
    const sws_conf_node_t *node, sws_uint_t depth)
{
    sws_conf_node_t  *slot;

    if (sws_str_eq_cstr(node->args.elts, "include")) {
        return sws_conf_include(pool, log, block, node, depth);
    }

    slot = sws_array_push(block);
    if (slot == NULL) {
        return SWS_ERROR;
    }

    *slot = *node;

    return SWS_OK;
}


/* Bare when unambiguous, otherwise in double quotes with " and \ escaped. */
static void
sws_conf_dump_arg(const sws_str_t *arg, FILE *out)
{
    size_t  i;

    if (arg->len != 0) {
        for (i = 0; i < arg->len; i++) {
            /* strchr() also finds a NUL byte: quoted too */
            if (strchr(" \t\r\n;{}#\"'\\", arg->data[i]) != NULL) {
                break;
            }
        }

        if (i == arg->len) {
            fwrite(arg->data, 1, arg->len, out);
            return;
        }
    }

    fputc('"', out);

    for (i = 0; i < arg->len; i++) {
        if (arg->data[i] == '"' || arg->data[i] == '\\') {
            fputc('\\', out);
        }
        fputc(arg->data[i], out);
    }

    fputc('"', out);
}


static void
sws_conf_dump_block(const sws_array_t *block, int level, FILE *out)
{
    sws_uint_t              i, j;
    const sws_str_t        *arg;
    const sws_conf_node_t  *node;

    node = block->elts;

    for (i = 0; i < block->nelts; i++, node++) {
        fprintf(out, "%*s", level * 4, "");

        arg = node->args.elts;
        for (j = 0; j < node->args.nelts; j++) {
            if (j != 0) {
                fputc(' ', out);
            }
            sws_conf_dump_arg(&arg[j], out);
        }

        if (node->children == NULL) {
            fputs(";\n", out);
            continue;
        }

        fputs(" {\n", out);
        sws_conf_dump_block(node->children, level + 1, out);
        fprintf(out, "%*s}\n", level * 4, "");
    }
}


void
sws_conf_dump(const sws_conf_node_t *root, FILE *out)
{
    if (root != NULL && root->children != NULL) {
        sws_conf_dump_block(root->children, 0, out);
    }
}
