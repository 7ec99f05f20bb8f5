/*
 * The YAML configuration reader (libyaml event API). It builds the same tree
 * as the nginx-syntax reader; the mapping is described in
 * docs/configuration-yaml.md. In short: a key is "name [args]", a scalar
 * value adds arguments (split like nginx tokens), a mapping value is a block,
 * a sequence repeats the directive once per item.
 */
#include <stdlib.h>
#include <yaml.h>
#include "sws_conf_read.h"


typedef struct {
    yaml_parser_t   parser;
    yaml_event_t    event;          /* the current event */
    int             have_event;
    sws_pool_t     *pool;
    sws_log_t      *log;
    const char     *file;
    sws_uint_t      depth;
} sws_yaml_t;


static sws_uint_t
sws_yaml_line(sws_yaml_t *y)
{
    return (sws_uint_t) y->event.start_mark.line + 1;
}


static void
sws_yaml_syntax_error(sws_yaml_t *y)
{
    yaml_parser_t  *p = &y->parser;

    if (p->error == YAML_MEMORY_ERROR) {
        sws_conf_read_error(y->log, y->file, 0, 0, "YAML parser: out of memory");

    } else if (p->error == YAML_READER_ERROR) {
        sws_conf_read_error(y->log, NULL, 0, 0, "YAML error: %s at byte %zu in %s",
                            p->problem ? p->problem : "invalid input",
                            p->problem_offset, y->file);

    } else {
        sws_conf_read_error(y->log, y->file, (sws_uint_t) p->problem_mark.line + 1, 0,
                            "YAML syntax error: %s%s%s%s, column %zu",
                            p->problem ? p->problem : "invalid input",
                            p->context ? " (" : "", p->context ? p->context : "",
                            p->context ? ")" : "", p->problem_mark.column + 1);
    }
}


/* Advance to the next event, refusing the YAML features we do not map. */
static sws_int_t
sws_yaml_next(sws_yaml_t *y)
{
    const char    *what;
    yaml_char_t   *anchor, *tag;
    yaml_event_t  *ev = &y->event;

    if (y->have_event) {
        yaml_event_delete(ev);
        y->have_event = 0;
    }

    if (!yaml_parser_parse(&y->parser, ev)) {
        sws_yaml_syntax_error(y);
        return SWS_ERROR;
    }

    y->have_event = 1;

    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
        break;
    case YAML_ALIAS_EVENT:
        sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                            "YAML aliases are not supported");
        return SWS_ERROR;
    default:
        return SWS_OK;
    }

    what = anchor ? "anchors" : tag ? "tags" : NULL;

    if (what != NULL) {
        sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                            "YAML %s are not supported", what);
        return SWS_ERROR;
    }

    return SWS_OK;
}


/* A plain empty, "~" or "null" scalar: no arguments. */
static int
sws_yaml_is_null(const yaml_event_t *ev)
{
    const char  *v = (const char *) ev->data.scalar.value;

    return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
           && (v[0] == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0
               || strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}


/* Split the current scalar event like an nginx line and append to args. */
static sws_int_t
sws_yaml_split(sws_yaml_t *y, sws_array_t *args)
{
    sws_str_t         word, *arg;
    sws_conf_tok_e    tok;
    sws_conf_lexer_t  lx;

    if (sws_yaml_is_null(&y->event)) {
        return SWS_OK;
    }

    sws_memzero(&lx, sizeof(lx));
    lx.pos = y->event.data.scalar.value;
    lx.end = lx.pos + y->event.data.scalar.length;
    lx.line = sws_yaml_line(y);
    lx.yaml = 1;
    lx.file = y->file;
    lx.pool = y->pool;
    lx.log = y->log;

    for ( ;; ) {
        tok = sws_conf_lex(&lx, &word);

        switch (tok) {
        case SWS_CONF_TOK_EOF:
            return SWS_OK;
        case SWS_CONF_TOK_ERROR:
            return SWS_ERROR;
        case SWS_CONF_TOK_SEMI:
        case SWS_CONF_TOK_OPEN:
        case SWS_CONF_TOK_CLOSE:
            sws_conf_read_error(y->log, y->file, lx.tok_line, 0, "unexpected \"%c\"",
                                lx.pos[-1]);
            return SWS_ERROR;
        case SWS_CONF_TOK_WORD:
            break;
        }

        arg = sws_array_push(args);
        if (arg == NULL) {
            return SWS_ERROR;
        }
        *arg = word;
    }
}


static sws_int_t sws_yaml_mapping(sws_yaml_t *y, sws_array_t *block);


/* The value at the current event (a scalar, a mapping or, wrongly, a
 * nested sequence, refused): completes node and adds it to block. */
static sws_int_t
sws_yaml_value(sws_yaml_t *y, sws_conf_node_t *node, sws_array_t *block)
{
    switch (y->event.type) {
    case YAML_SCALAR_EVENT:
        if (sws_yaml_split(y, &node->args) != SWS_OK) {
            return SWS_ERROR;
        }
        break;

    case YAML_MAPPING_START_EVENT:
        node->children = sws_array_create(y->pool, 4, sizeof(sws_conf_node_t));
        if (node->children == NULL || sws_yaml_mapping(y, node->children) != SWS_OK) {
            return SWS_ERROR;
        }
        break;

    default:
        sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                            "nested YAML sequences are not supported");
        return SWS_ERROR;
    }

    return sws_conf_add_node(y->pool, y->log, block, node, y->depth);
}


/* key: [item, ...]: the directive once per item (the current event is
 * SEQUENCE_START). Each item's node has the item's line. */
static sws_int_t
sws_yaml_sequence(sws_yaml_t *y, const sws_conf_node_t *key, sws_array_t *block)
{
    void             *args;
    sws_conf_node_t   item;

    for ( ;; ) {
        if (sws_yaml_next(y) != SWS_OK) {
            return SWS_ERROR;
        }

        if (y->event.type == YAML_SEQUENCE_END_EVENT) {
            return SWS_OK;
        }

        if (sws_conf_node_init(y->pool, &item, y->file, sws_yaml_line(y)) != SWS_OK) {
            return SWS_ERROR;
        }

        args = sws_array_push_n(&item.args, key->args.nelts);
        if (args == NULL) {
            return SWS_ERROR;
        }
        sws_memcpy(args, key->args.elts, key->args.nelts * sizeof(sws_str_t));

        if (sws_yaml_value(y, &item, block) != SWS_OK) {
            return SWS_ERROR;
        }
    }
}


/* The entries of a mapping (the current event is MAPPING_START). */
static sws_int_t
sws_yaml_mapping(sws_yaml_t *y, sws_array_t *block)
{
    sws_conf_node_t  node;

    for ( ;; ) {
        if (sws_yaml_next(y) != SWS_OK) {
            return SWS_ERROR;
        }

        if (y->event.type == YAML_MAPPING_END_EVENT) {
            return SWS_OK;
        }

        if (y->event.type != YAML_SCALAR_EVENT) {
            sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                                "a YAML mapping key must be a scalar");
            return SWS_ERROR;
        }

        if (sws_conf_node_init(y->pool, &node, y->file, sws_yaml_line(y)) != SWS_OK
            || sws_yaml_split(y, &node.args) != SWS_OK)
        {
            return SWS_ERROR;
        }

        /* A key of no words ("", ~) has no name; a quoted empty first
         * word ("''") is a node, as in the nginx syntax. */
        if (node.args.nelts == 0) {
            sws_conf_read_error(y->log, y->file, node.line, 0,
                                "a directive with no name");
            return SWS_ERROR;
        }

        if (sws_yaml_next(y) != SWS_OK) {
            return SWS_ERROR;
        }

        if (y->event.type == YAML_SEQUENCE_START_EVENT) {
            if (sws_yaml_sequence(y, &node, block) != SWS_OK) {
                return SWS_ERROR;
            }
            continue;
        }

        if (sws_yaml_value(y, &node, block) != SWS_OK) {
            return SWS_ERROR;
        }
    }
}


/* stream { document { mapping } }: at most one document, a mapping (or
 * nothing at all: an empty configuration). */
static sws_int_t
sws_yaml_document(sws_yaml_t *y, sws_array_t *top)
{
    if (sws_yaml_next(y) != SWS_OK) {               /* STREAM_START */
        return SWS_ERROR;
    }

    if (sws_yaml_next(y) != SWS_OK) {
        return SWS_ERROR;
    }

    if (y->event.type == YAML_STREAM_END_EVENT) {
        return SWS_OK;
    }

    if (sws_yaml_next(y) != SWS_OK) {               /* after DOCUMENT_START */
        return SWS_ERROR;
    }

    if (y->event.type == YAML_MAPPING_START_EVENT) {
        if (sws_yaml_mapping(y, top) != SWS_OK) {
            return SWS_ERROR;
        }

    } else if (y->event.type != YAML_SCALAR_EVENT || !sws_yaml_is_null(&y->event)) {
        sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                            "the top level of a YAML configuration must be a mapping");
        return SWS_ERROR;
    }

    if (sws_yaml_next(y) != SWS_OK                  /* DOCUMENT_END */
        || sws_yaml_next(y) != SWS_OK)
    {
        return SWS_ERROR;
    }

    if (y->event.type != YAML_STREAM_END_EVENT) {
        sws_conf_read_error(y->log, y->file, sws_yaml_line(y), 0,
                            "only one YAML document is allowed");
        return SWS_ERROR;
    }

    return SWS_OK;
}


sws_conf_node_t *
sws_conf_read_yaml(sws_pool_t *pool, sws_log_t *log, const char *path, sws_uint_t depth)
{
    u_char           *text;
    size_t            len;
    sws_int_t         rc;
    sws_yaml_t        y;
    sws_conf_node_t  *root;

    root = sws_conf_root_create(pool, path);
    if (root == NULL) {
        return NULL;
    }

    text = sws_conf_load_file(log, path, &len);
    if (text == NULL) {
        return NULL;
    }

    sws_memzero(&y, sizeof(y));
    y.pool = pool;
    y.log = log;
    y.file = root->file;
    y.depth = depth;

    if (!yaml_parser_initialize(&y.parser)) {
        sws_conf_read_error(log, NULL, 0, 0, "yaml_parser_initialize() failed");
        free(text);
        return NULL;
    }

    yaml_parser_set_input_string(&y.parser, text, len);

    rc = sws_yaml_document(&y, root->children);

    if (y.have_event) {
        yaml_event_delete(&y.event);
    }
    yaml_parser_delete(&y.parser);
    free(text);

    return rc == SWS_OK ? root : NULL;
}
