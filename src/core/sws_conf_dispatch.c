/*
 * The directive dispatcher: walks a block of the configuration tree and
 * hands each directive to the module that declares it, plus the accessors
 * setters use to look at the directive being handled.
 */
#include <stdio.h>
#include "sws_conf_internal.h"
#include "sws_cycle.h"

#define SWS_CONF_HTTP_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF \
                            | SWS_HTTP_UPS_CONF | SWS_HTTP_LIF_CONF)


/* The directive's arguments as seen by setters: index 0 is the directive
 * name, so sws_conf_nargs() counts the name too ("listen 80;" gives 2). */
sws_uint_t
sws_conf_nargs(sws_conf_t *cf)
{
    return cf->node ? cf->node->args.nelts : 0;
}


sws_str_t *
sws_conf_arg(sws_conf_t *cf, sws_uint_t i)
{
    if (cf->node == NULL || i >= cf->node->args.nelts) {
        return NULL;
    }

    return (sws_str_t *) cf->node->args.elts + i;
}


sws_pool_t *
sws_conf_pool(sws_conf_t *cf)
{
    return cf->pool;
}


sws_cycle_t *
sws_conf_cycle(sws_conf_t *cf)
{
    return cf->cycle;
}


sws_log_t *
sws_conf_log(sws_conf_t *cf)
{
    return cf->log;
}


const char *
sws_conf_file(sws_conf_t *cf)
{
    return (cf->node && cf->node->file) ? cf->node->file : "";
}


sws_uint_t
sws_conf_line(sws_conf_t *cf)
{
    return cf->node ? cf->node->line : 0;
}


uint32_t
sws_conf_context(sws_conf_t *cf)
{
    return cf->cmd_type;
}


void
sws_conf_log_error(sws_uint_t level, sws_conf_t *cf, int err, const char *fmt, ...)
{
    char     msg[1024];
    va_list  args;

    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);

    if (cf->node == NULL) {
        sws_log_error(level, cf->log, err, "%s", msg);
        return;
    }

    sws_log_error(level, cf->log, err, "%s in %s:%lu", msg, sws_conf_file(cf),
                  (unsigned long) cf->node->line);
}


/* name is replaced by a NUL-terminated copy in cf->pool; a relative name is
 * joined to the prefix (or to the configuration's directory). */
sws_int_t
sws_conf_full_name(sws_conf_t *cf, sws_str_t *name, int conf_prefix)
{
    u_char     *p, *data;
    size_t      slash;
    sws_str_t  *prefix;

    prefix = &cf->cycle->prefix;
    if (conf_prefix && cf->cycle->conf_prefix.len != 0) {
        prefix = &cf->cycle->conf_prefix;
    }

    if (name->len != 0 && name->data[0] == '/') {
        prefix = NULL;
    }

    if (prefix != NULL && prefix->len == 0) {
        prefix = NULL;
    }

    slash = (prefix != NULL && prefix->data[prefix->len - 1] != '/') ? 1 : 0;

    data = sws_pnalloc(cf->pool, (prefix ? prefix->len : 0) + slash + name->len + 1);
    if (data == NULL) {
        return SWS_ERROR;
    }

    p = data;
    if (prefix != NULL) {
        p = sws_cpymem(p, prefix->data, prefix->len);
        if (slash) {
            *p++ = '/';
        }
    }
    p = sws_cpymem(p, name->data, name->len);
    *p = '\0';

    name->data = data;
    name->len = (size_t) (p - data);

    return SWS_OK;
}


static void **
sws_conf_http_ctx_confs(sws_conf_t *cf, int level)
{
    sws_http_conf_ctx_t  *ctx;

    if (!(cf->cmd_type & SWS_CONF_HTTP_CTX) || cf->ctx == NULL) {
        return NULL;
    }

    ctx = cf->ctx;

    return level == SWS_HTTP_MAIN_CONF_OFFSET ? ctx->main_conf
           : level == SWS_HTTP_SRV_CONF_OFFSET ? ctx->srv_conf : ctx->loc_conf;
}


static void *
sws_conf_http_conf(sws_conf_t *cf, const sws_module_t *m, int level)
{
    void  **confs = sws_conf_http_ctx_confs(cf, level);

    return confs ? confs[m->index] : NULL;
}


void *
sws_conf_http_main_conf(sws_conf_t *cf, const sws_module_t *m)
{
    return sws_conf_http_conf(cf, m, SWS_HTTP_MAIN_CONF_OFFSET);
}


void *
sws_conf_http_srv_conf(sws_conf_t *cf, const sws_module_t *m)
{
    return sws_conf_http_conf(cf, m, SWS_HTTP_SRV_CONF_OFFSET);
}


void *
sws_conf_http_loc_conf(sws_conf_t *cf, const sws_module_t *m)
{
    return sws_conf_http_conf(cf, m, SWS_HTTP_LOC_CONF_OFFSET);
}


/* The first command named name allowed in the current context; *seen tells
 * whether some module declares the name at all. */
static const sws_command_t *
sws_conf_find_command(sws_conf_t *cf, const sws_str_t *name, sws_module_t **module,
    int *seen)
{
    sws_uint_t            i;
    const sws_command_t  *cmd;

    *seen = 0;

    for (i = 0; i < cf->cycle->modules_n; i++) {
        cmd = cf->cycle->modules[i]->commands;

        for ( /* void */ ; cmd != NULL && cmd->name != NULL; cmd++) {
            if (!sws_str_eq_cstr(name, cmd->name)) {
                continue;
            }

            *seen = 1;

            if (cmd->type & cf->cmd_type & SWS_CONF_CTX_MASK) {
                *module = cf->cycle->modules[i];
                return cmd;
            }
        }
    }

    return NULL;
}


/* NOARGS and TAKE1..TAKE7 are bits 0..7: bit n allows n arguments. */
static int
sws_conf_args_ok(uint32_t type, sws_uint_t n)
{
    return (type & SWS_CONF_ANY)
           || ((type & SWS_CONF_FLAG) && n == 1)
           || ((type & SWS_CONF_1MORE) && n >= 1)
           || ((type & SWS_CONF_2MORE) && n >= 2)
           || (n <= 7 && (type & (1u << n)));
}


static void *
sws_conf_command_conf(sws_conf_t *cf, const sws_command_t *cmd, sws_module_t *m)
{
    void  **confs;

    if (cmd->conf == SWS_CONF_MAIN_OFFSET) {
        return cf->cycle->conf_ctx ? cf->cycle->conf_ctx[m->index] : NULL;
    }

    confs = sws_conf_http_ctx_confs(cf, (int) cmd->conf);

    return confs ? confs[m->index] : NULL;
}


static sws_int_t
sws_conf_handle(sws_conf_t *cf, sws_conf_node_t *node)
{
    int                   seen;
    char                 *rv;
    sws_str_t            *name;
    sws_module_t         *module = NULL;
    const sws_command_t  *cmd;

    cf->node = node;
    name = node->args.elts;

    cmd = sws_conf_find_command(cf, name, &module, &seen);

    if (cmd == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           seen ? "\"%.*s\" directive is not allowed here"
                                : "unknown directive \"%.*s\"",
                           (int) name->len, name->data);
        return SWS_ERROR;
    }

    if (!sws_conf_args_ok(cmd->type, node->args.nelts - 1)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "invalid number of arguments in \"%s\" directive", cmd->name);
        return SWS_ERROR;
    }

    if ((cmd->type & SWS_CONF_BLOCK) && node->children == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "directive \"%s\" has no opening \"{\"", cmd->name);
        return SWS_ERROR;
    }

    if (!(cmd->type & SWS_CONF_BLOCK) && node->children != NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "directive \"%s\" is not terminated by \";\"", cmd->name);
        return SWS_ERROR;
    }

    rv = cmd->set(cf, cmd, sws_conf_command_conf(cf, cmd, module));

    /* the setter may have parsed a nested block: point back at this node */
    cf->node = node;

    if (rv == SWS_CONF_OK) {
        return SWS_OK;
    }

    if (rv != SWS_CONF_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"%s\" directive %s", cmd->name, rv);
    }

    return SWS_ERROR;
}


sws_int_t
sws_conf_dispatch(sws_conf_t *cf, sws_array_t *block)
{
    sws_uint_t        i;
    sws_conf_node_t  *node, *saved;

    if (block == NULL) {
        return SWS_OK;
    }

    saved = cf->node;
    node = block->elts;

    for (i = 0; i < block->nelts; i++) {
        if (sws_conf_handle(cf, &node[i]) != SWS_OK) {
            cf->node = saved;
            return SWS_ERROR;
        }
    }

    cf->node = saved;

    return SWS_OK;
}


char *
sws_conf_parse_block(sws_conf_t *cf, void *ctx, uint32_t cmd_type)
{
    void             *saved_ctx = cf->ctx;
    uint32_t          saved_type = cf->cmd_type;
    sws_int_t         rc;
    sws_conf_node_t  *node = cf->node;

    cf->ctx = ctx;
    cf->cmd_type = cmd_type;

    rc = sws_conf_dispatch(cf, node ? node->children : NULL);

    cf->ctx = saved_ctx;
    cf->cmd_type = saved_type;
    cf->node = node;

    return rc == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}


char *
sws_conf_parse_entries(sws_conf_t *cf, sws_conf_entry_pt handler, void *data)
{
    sws_conf_node_t  *node = cf->node, *entry;
    sws_uint_t        i;
    char             *rv;

    if (node == NULL || node->children == NULL) {
        return SWS_CONF_OK;
    }
    entry = node->children->elts;
    for (i = 0; i < node->children->nelts; i++) {
        cf->node = &entry[i];
        if (entry[i].children != NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "unexpected \"{\" after \"%.*s\"",
                               (int) ((sws_str_t *) entry[i].args.elts)[0].len,
                               ((sws_str_t *) entry[i].args.elts)[0].data);
            cf->node = node;
            return SWS_CONF_ERROR;
        }
        rv = handler(cf, data);
        if (rv != SWS_CONF_OK) {
            if (rv != SWS_CONF_ERROR) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", rv);
            }
            cf->node = node;
            return SWS_CONF_ERROR;
        }
    }
    cf->node = node;
    return SWS_CONF_OK;
}
