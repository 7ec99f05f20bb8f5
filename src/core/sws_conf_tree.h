/*
 * The configuration as a tree of directives, before any module sees it.
 * Both front ends (nginx syntax, YAML) produce this tree; `scalwsd -T`
 * prints it; the dispatcher walks it and calls the modules' setters.
 */
#ifndef SWS_CONF_TREE_H
#define SWS_CONF_TREE_H

#include <stdio.h>
#include <scalws/scalws.h>

typedef struct sws_conf_node_s sws_conf_node_t;
struct sws_conf_node_s {
    sws_array_t   args;        /* sws_str_t; args[0] is the directive name */
    const char   *file;        /* the file it came from (pool string) */
    sws_uint_t    line;
    sws_array_t  *children;    /* sws_conf_node_t; NULL unless a { } block */
};

/* Read a configuration file into a tree (a root node with name "" whose
 * children are the top-level directives). Files ending in .yaml/.yml are
 * read as YAML, others as nginx syntax; `include` (glob, relative to the
 * including file's directory) is expanded in place, each included file read
 * by its own extension. On error logs "MESSAGE in FILE:LINE" at emerg and
 * returns NULL. */
sws_conf_node_t *sws_conf_read_file(sws_pool_t *pool, sws_log_t *log, const char *path);
sws_conf_node_t *sws_conf_read_nginx(sws_pool_t *pool, sws_log_t *log, const char *path,
    sws_uint_t depth);
sws_conf_node_t *sws_conf_read_yaml(sws_pool_t *pool, sws_log_t *log, const char *path,
    sws_uint_t depth);

/* Print the tree in normalised nginx syntax (4-space indent, one directive a
 * line, arguments quoted only when needed). The same configuration written
 * in either syntax prints identically. */
void sws_conf_dump(const sws_conf_node_t *root, FILE *out);

#endif
