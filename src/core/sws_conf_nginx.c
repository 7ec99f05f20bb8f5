/*
 * The nginx-syntax configuration reader: a tokenizer (also used to split YAML
 * scalars into arguments) and a recursive parser building sws_conf_node_t.
 */
#include <stdlib.h>
#include "sws_conf_read.h"

#define sws_conf_is_space(c)  ((c) == ' ' || (c) == '\t' || (c) == '\r' || (c) == '\n')


/* Copy raw text into the pool, resolving backslash escapes: \" \' \\ \n \r
 * \t become one character, any other pair is kept as is. */
static sws_int_t
sws_conf_unescape(sws_pool_t *pool, const u_char *p, const u_char *last, sws_str_t *word)
{
    u_char  *d;

    /* +1: never a NULL data pointer, even for an empty word */
    word->data = sws_pnalloc(pool, (size_t) (last - p) + 1);
    if (word->data == NULL) {
        return SWS_ERROR;
    }

    d = word->data;

    while (p < last) {
        if (*p != '\\' || p + 1 == last) {
            *d++ = *p++;
            continue;
        }

        switch (p[1]) {
        case '"': case '\'': case '\\': *d++ = p[1]; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        default: *d++ = p[0]; *d++ = p[1]; break;
        }

        p += 2;
    }

    *d = '\0';
    word->len = (size_t) (d - word->data);

    return SWS_OK;
}


sws_conf_tok_e
sws_conf_lex(sws_conf_lexer_t *lx, sws_str_t *word)
{
    u_char         quote;
    const u_char  *start;

    for ( ;; ) {
        while (lx->pos < lx->end && sws_conf_is_space(*lx->pos)) {
            if (*lx->pos++ == '\n') {
                lx->line++;
            }
        }

        if (lx->pos == lx->end) {
            lx->tok_line = lx->line;
            return SWS_CONF_TOK_EOF;
        }

        if (*lx->pos != '#' || lx->yaml) {
            break;
        }

        while (lx->pos < lx->end && *lx->pos != '\n') {
            lx->pos++;
        }
    }

    lx->tok_line = lx->line;

    switch (*lx->pos) {
    case ';': lx->pos++; return SWS_CONF_TOK_SEMI;
    case '{': lx->pos++; return SWS_CONF_TOK_OPEN;
    case '}': lx->pos++; return SWS_CONF_TOK_CLOSE;
    }

    if (*lx->pos == '"' || *lx->pos == '\'') {
        quote = *lx->pos++;
        start = lx->pos;

        while (lx->pos < lx->end && *lx->pos != quote) {
            if (*lx->pos == '\\' && lx->pos + 1 < lx->end) {
                lx->pos++;
            }
            if (*lx->pos++ == '\n') {
                lx->line++;
            }
        }

        if (lx->pos == lx->end) {
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0,
                                "unterminated quoted string");
            return SWS_CONF_TOK_ERROR;
        }

        if (sws_conf_unescape(lx->pool, start, lx->pos++, word) != SWS_OK) {
            return SWS_CONF_TOK_ERROR;
        }

        /* "a"b would be ambiguous: the quote must end the token; a ')'
         * starts the next one, as in nginx: if ($a = "x") */
        if (lx->pos < lx->end && !sws_conf_is_space(*lx->pos)
            && *lx->pos != ';' && *lx->pos != '{' && *lx->pos != '}' && *lx->pos != ')')
        {
            sws_conf_read_error(lx->log, lx->file, lx->line, 0,
                                "unexpected \"%c\" after a quoted string", *lx->pos);
            return SWS_CONF_TOK_ERROR;
        }

        return SWS_CONF_TOK_WORD;
    }

    /* a bare word; a backslash keeps the next character in the word */
    start = lx->pos;

    while (lx->pos < lx->end && !sws_conf_is_space(*lx->pos)
           && *lx->pos != ';' && *lx->pos != '{' && *lx->pos != '}')
    {
        if (*lx->pos == '\\' && lx->pos + 1 < lx->end) {
            lx->pos++;
            if (*lx->pos == '\n') {
                lx->line++;
            }
        }
        lx->pos++;
    }

    if (sws_conf_unescape(lx->pool, start, lx->pos, word) != SWS_OK) {
        return SWS_CONF_TOK_ERROR;
    }

    return SWS_CONF_TOK_WORD;
}


/* Parse directives into block until "}" (nested) or the end of the file. */
static sws_int_t
sws_conf_parse_nginx(sws_conf_lexer_t *lx, sws_array_t *block, int nested, sws_uint_t depth)
{
    sws_str_t        word, *arg;
    sws_conf_node_t  node;
    sws_conf_tok_e   tok;

    for ( ;; ) {
        tok = sws_conf_lex(lx, &word);

        switch (tok) {
        case SWS_CONF_TOK_ERROR:
            return SWS_ERROR;

        case SWS_CONF_TOK_EOF:
            if (!nested) {
                return SWS_OK;
            }
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0,
                                "unexpected end of file, expecting \"}\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_CLOSE:
            if (nested) {
                return SWS_OK;
            }
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0, "unexpected \"}\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_SEMI:
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0, "unexpected \";\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_OPEN:
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0, "unexpected \"{\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_WORD:
            break;
        }

        /* An empty quoted first word ('' or "") is a node like any other:
         * blocks that read their contents as data (map: the key '') take
         * it, and anywhere else it is an unknown directive, as in nginx. */

        if (sws_conf_node_init(lx->pool, &node, lx->file, lx->tok_line) != SWS_OK) {
            return SWS_ERROR;
        }

        /* the name, then arguments up to ";" or "{" */
        for ( ;; ) {
            arg = sws_array_push(&node.args);
            if (arg == NULL) {
                return SWS_ERROR;
            }
            *arg = word;

            tok = sws_conf_lex(lx, &word);
            if (tok != SWS_CONF_TOK_WORD) {
                break;
            }
        }

        switch (tok) {
        case SWS_CONF_TOK_ERROR:
            return SWS_ERROR;

        case SWS_CONF_TOK_EOF:
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0,
                                "unexpected end of file, expecting \";\" or \"}\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_CLOSE:
            sws_conf_read_error(lx->log, lx->file, lx->tok_line, 0, "unexpected \"}\"");
            return SWS_ERROR;

        case SWS_CONF_TOK_OPEN:
            node.children = sws_array_create(lx->pool, 4, sizeof(sws_conf_node_t));
            if (node.children == NULL
                || sws_conf_parse_nginx(lx, node.children, 1, depth) != SWS_OK)
            {
                return SWS_ERROR;
            }
            break;

        default: /* ";" */
            break;
        }

        if (sws_conf_add_node(lx->pool, lx->log, block, &node, depth) != SWS_OK) {
            return SWS_ERROR;
        }
    }
}


sws_conf_node_t *
sws_conf_read_nginx(sws_pool_t *pool, sws_log_t *log, const char *path, sws_uint_t depth)
{
    u_char            *text;
    size_t             len;
    sws_int_t          rc;
    sws_conf_node_t   *root;
    sws_conf_lexer_t   lx;

    root = sws_conf_root_create(pool, path);
    if (root == NULL) {
        return NULL;
    }

    text = sws_conf_load_file(log, path, &len);
    if (text == NULL) {
        return NULL;
    }

    sws_memzero(&lx, sizeof(lx));
    lx.pos = text;
    lx.end = text + len;
    lx.line = 1;
    lx.file = root->file;
    lx.pool = pool;
    lx.log = log;

    rc = sws_conf_parse_nginx(&lx, root->children, 0, depth);

    free(text);

    return rc == SWS_OK ? root : NULL;
}
