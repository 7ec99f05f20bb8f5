/*
 * Shared by the configuration readers (sws_conf_nginx.c, sws_conf_yaml.c,
 * sws_conf_file.c): the nginx-syntax tokenizer (YAML scalars are split with
 * it too), node construction, include expansion and error reporting.
 */
#ifndef SWS_CONF_READ_H
#define SWS_CONF_READ_H

#include "sws_conf_tree.h"

#define SWS_CONF_MAX_INCLUDE_DEPTH  16

/* Tokens returned by sws_conf_lex(). */
typedef enum {
    SWS_CONF_TOK_WORD = 0,      /* a (possibly empty, when quoted) argument */
    SWS_CONF_TOK_SEMI,          /* ; */
    SWS_CONF_TOK_OPEN,          /* { */
    SWS_CONF_TOK_CLOSE,         /* } */
    SWS_CONF_TOK_EOF,
    SWS_CONF_TOK_ERROR          /* already logged */
} sws_conf_tok_e;

typedef struct {
    const u_char  *pos;
    const u_char  *end;
    sws_uint_t     line;        /* line of pos */
    sws_uint_t     tok_line;    /* line where the last token started */
    unsigned       yaml:1;      /* splitting a YAML scalar: '#' is plain */
    const char    *file;
    sws_pool_t    *pool;        /* words are copied here */
    sws_log_t     *log;
} sws_conf_lexer_t;

/* Next token; a word is unescaped and copied into lx->pool. */
sws_conf_tok_e sws_conf_lex(sws_conf_lexer_t *lx, sws_str_t *word);

/* "MESSAGE in FILE:LINE" at emerg (file NULL: just MESSAGE). */
void sws_conf_read_error(sws_log_t *log, const char *file, sws_uint_t line, int err,
    const char *fmt, ...) SWS_PRINTF(5, 6);

/* Read a whole file into a malloc()ed buffer (free() it); logs failures. */
u_char *sws_conf_load_file(sws_log_t *log, const char *path, size_t *len);

/* Read a file with the reader its extension selects. */
sws_conf_node_t *sws_conf_read_depth(sws_pool_t *pool, sws_log_t *log, const char *path,
    sws_uint_t depth);

/* An empty directive (no name yet, no children). */
sws_int_t sws_conf_node_init(sws_pool_t *pool, sws_conf_node_t *node, const char *file,
    sws_uint_t line);
/* A root node: name "", an empty children array. */
sws_conf_node_t *sws_conf_root_create(sws_pool_t *pool, const char *file);

/* Append a finished directive to block; an `include` is expanded instead
 * (depth is that of the file the directive came from). */
sws_int_t sws_conf_add_node(sws_pool_t *pool, sws_log_t *log, sws_array_t *block,
    const sws_conf_node_t *node, sws_uint_t depth);

#endif
