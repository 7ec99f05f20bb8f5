/*
 * The http { } block: creates the configuration levels (http, server,
 * location), merges them, builds the location matchers and virtual hosts,
 * runs the modules' postconfiguration and compiles the phase engine.
 */
#include "sws_http_core.h"
#include "sws_http_variables.h"

static char *sws_http_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t sws_http_commands[] = {
    { "http", SWS_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS, sws_http_block, 0, 0, NULL },
    sws_null_command
};

sws_module_t sws_http_module = {
    SWS_MODULE_ABI, "http", NULL, sws_http_commands,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, { { NULL } }, 0, 0
};

static int
sws_http_is_http_module(sws_cycle_t *cycle, sws_uint_t i)
{
    /* The top-level modules keep their main conf at the top level. */
    return strcmp(cycle->modules[i]->name, "core") != 0
           && strcmp(cycle->modules[i]->name, "events") != 0;
}

/* Create one level's confs for every module. what: 0 main, 1 srv, 2 loc. */
sws_int_t
sws_http_create_confs(sws_conf_t *cf, void ***confs, int what)
{
    sws_cycle_t  *cycle = cf->cycle;
    sws_module_t *m;
    sws_uint_t    i;
    void         *(*create)(sws_conf_t *);

    *confs = sws_pcalloc(cf->pool, sizeof(void *) * cycle->modules_n);
    if (*confs == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < cycle->modules_n; i++) {
        if (!sws_http_is_http_module(cycle, i)) {
            continue;
        }
        m = cycle->modules[i];
        create = what == 0 ? m->create_main_conf : what == 1 ? m->create_srv_conf
                                                             : m->create_loc_conf;
        if (create) {
            (*confs)[i] = create(cf);
            if ((*confs)[i] == NULL) {
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_http_report(sws_conf_t *cf, char *rv, const char *file, sws_uint_t line)
{
    if (rv == SWS_CONF_OK) {
        return SWS_OK;
    }
    if (rv != SWS_CONF_ERROR) {
        sws_log_error(SWS_LOG_EMERG, cf->log, 0, "%s in %s:%lu", rv, file, (unsigned long) line);
    }
    return SWS_ERROR;
}

static sws_int_t
sws_http_merge_loc(sws_conf_t *cf, void **parent, void **child, const char *file,
    sws_uint_t line)
{
    sws_cycle_t *cycle = cf->cycle;
    sws_uint_t   i;

    for (i = 0; i < cycle->modules_n; i++) {
        if (sws_http_is_http_module(cycle, i) && cycle->modules[i]->merge_loc_conf
            && sws_http_report(cf, cycle->modules[i]->merge_loc_conf(cf, parent[i], child[i]),
                               file, line) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* Merge the if blocks inside clcf's level (and theirs) with it. */
static sws_int_t
sws_http_merge_nested(sws_conf_t *cf, sws_http_core_loc_conf_t *clcf)
{
    sws_http_core_loc_conf_t  **nested;
    sws_uint_t                  i;

    if (clcf->nested == NULL) {
        return SWS_OK;
    }
    nested = clcf->nested->elts;
    for (i = 0; i < clcf->nested->nelts; i++) {
        if (sws_http_merge_loc(cf, clcf->loc_conf, nested[i]->loc_conf, nested[i]->file,
                               nested[i]->line) != SWS_OK
            || sws_http_merge_nested(cf, nested[i]) != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_http_merge_servers(sws_conf_t *cf, sws_http_conf_ctx_t *http)
{
    sws_cycle_t                *cycle = cf->cycle;
    sws_http_core_main_conf_t  *cmcf = http->main_conf[sws_http_core_module.index];
    sws_http_core_srv_conf_t  **servers = cmcf->servers.elts, *cscf;
    sws_http_core_loc_conf_t  **locs, *clcf;
    sws_http_loc_matcher_t     *matcher;
    void                      **parent;
    sws_http_loc_kind_t         kind;
    sws_uint_t                  s, i, l;
    const char                 *err;

    for (s = 0; s < cmcf->servers.nelts; s++) {
        cscf = servers[s];
        for (i = 0; i < cycle->modules_n; i++) {
            if (sws_http_is_http_module(cycle, i) && cycle->modules[i]->merge_srv_conf
                && sws_http_report(cf, cycle->modules[i]->merge_srv_conf(cf,
                                       http->srv_conf[i], cscf->ctx->srv_conf[i]),
                                   cscf->file, cscf->line) != SWS_OK)
            {
                return SWS_ERROR;
            }
        }
        if (sws_http_merge_loc(cf, http->loc_conf, cscf->ctx->loc_conf, cscf->file,
                               cscf->line) != SWS_OK
            || sws_http_merge_nested(cf, cscf->ctx->loc_conf[sws_http_core_module.index])
               != SWS_OK)
        {
            return SWS_ERROR;
        }

        cscf->locations = sws_http_loc_matcher_create(cf->pool);
        if (cscf->locations == NULL) {
            return SWS_ERROR;
        }
        locs = cscf->location_list.elts;
        for (l = 0; l < cscf->location_list.nelts; l++) {
            clcf = locs[l];
            /* a nested location merges with its parent (merged before it:
             * the list has parents first), and is matched in its level */
            matcher = cscf->locations;
            parent = cscf->ctx->loc_conf;
            if (clcf->parent_loc) {
                parent = clcf->parent_loc->loc_conf;
                if (clcf->parent_loc->children == NULL) {
                    clcf->parent_loc->children = sws_http_loc_matcher_create(cf->pool);
                    if (clcf->parent_loc->children == NULL) {
                        return SWS_ERROR;
                    }
                }
                matcher = clcf->parent_loc->children;
                cscf->nested_locations = 1;
            }
            /* a location's merge error names the location's line */
            if (sws_http_merge_loc(cf, parent, clcf->loc_conf,
                                   clcf->file ? clcf->file : cscf->file,
                                   clcf->file ? clcf->line : cscf->line) != SWS_OK
                || sws_http_merge_nested(cf, clcf) != SWS_OK)
            {
                return SWS_ERROR;
            }
            if (clcf->named) {
                continue;            /* reached by name only, never by a URI */
            }
            kind = clcf->exact ? SWS_LOC_EXACT
                 : clcf->noregex ? SWS_LOC_PREFIX_NOREGEX
                 : clcf->regex ? (clcf->caseless ? SWS_LOC_REGEX_CASELESS : SWS_LOC_REGEX)
                 : SWS_LOC_PREFIX;
            if (sws_http_loc_matcher_add(matcher, kind, &clcf->name, clcf, &err)
                != SWS_OK)
            {
                sws_log_error(SWS_LOG_EMERG, cf->log, 0, "%s in %s:%lu", err, clcf->file,
                              (unsigned long) clcf->line);
                return SWS_ERROR;
            }
        }
        if (sws_http_loc_matcher_finalize(cscf->locations) != SWS_OK) {
            return SWS_ERROR;
        }
        for (l = 0; l < cscf->location_list.nelts; l++) {
            if (locs[l]->children
                && sws_http_loc_matcher_finalize(locs[l]->children) != SWS_OK)
            {
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}

static char *
sws_http_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_conf_ctx_t        *ctx;
    sws_http_core_main_conf_t  *cmcf;
    sws_cycle_t                *cycle = cf->cycle;
    sws_uint_t                  i;
    char                       *rv;
    const char                 *file = sws_conf_file(cf);
    sws_uint_t                  line = sws_conf_line(cf);

    /* Modules declare their variables again; names used before they are
     * declared are resolved at the end of the block. */
    sws_http_variables_begin(cf);

    ctx = sws_pcalloc(cf->pool, sizeof(sws_http_conf_ctx_t));
    if (ctx == NULL
        || sws_http_create_confs(cf, &ctx->main_conf, 0) != SWS_OK
        || sws_http_create_confs(cf, &ctx->srv_conf, 1) != SWS_OK
        || sws_http_create_confs(cf, &ctx->loc_conf, 2) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }

    rv = sws_conf_parse_block(cf, ctx, SWS_HTTP_MAIN_CONF);
    if (rv != SWS_CONF_OK) {
        sws_http_variables_reset();
        return rv;
    }

    for (i = 0; i < cycle->modules_n; i++) {
        if (sws_http_is_http_module(cycle, i) && cycle->modules[i]->init_main_conf
            && sws_http_report(cf, cycle->modules[i]->init_main_conf(cf, ctx->main_conf[i]),
                               file, line) != SWS_OK)
        {
            sws_http_variables_reset();
            return SWS_CONF_ERROR;
        }
    }

    cmcf = ctx->main_conf[sws_http_core_module.index];
    cmcf->nmodules = cycle->modules_n;
    if (sws_http_variables_end(cf, &cmcf->nvariables) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    cmcf->limit_rate_settable = sws_http_variables_limit_rate(&cmcf->limit_rate_slot,
                                                              &cmcf->limit_rate_map);
    cmcf->args_settable = sws_http_variables_args(&cmcf->args_slot);
    if (sws_http_merge_servers(cf, ctx) != SWS_OK
        || sws_http_build_addrs(cf, cmcf) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }

    /* Filters: the core's last filters first, then each module puts its own
     * on top in module order. */
    {
        void *saved_ctx = cf->ctx;
        uint32_t saved_type = cf->cmd_type;
        cf->ctx = ctx;
        cf->cmd_type = SWS_HTTP_MAIN_CONF;
        if (sws_http_header_filter_init(cf) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
        sws_http_fixed_filters_reset();
        for (i = 0; i < cycle->modules_n; i++) {
            sws_http_header_filter_pt  top_h = sws_http_top_header_filter;
            sws_http_body_filter_pt    top_b = sws_http_top_body_filter;

            sws_http_fixed_module_begin();
            cmcf->postconf_module = cycle->modules[i];
            if (cycle->modules[i]->postconfiguration
                && cycle->modules[i]->postconfiguration(cf) != SWS_OK)
            {
                sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                              "postconfiguration of module \"%s\" failed",
                              cycle->modules[i]->name);
                return SWS_CONF_ERROR;
            }
            if (i >= sws_builtin_modules_n
                ? sws_http_fixed_module_end(cf, top_h != sws_http_top_header_filter
                                                || top_b != sws_http_top_body_filter)
                  != SWS_OK
                : sws_http_fixed_builtin_end(cf) != SWS_OK)
            {
                return SWS_CONF_ERROR;
            }
            if (i + 1 == sws_builtin_modules_n) {
                /* Built-ins come first in module order. */
                sws_http_builtin_top_header_filter = sws_http_top_header_filter;
                sws_http_builtin_top_body_filter = sws_http_top_body_filter;
            }
        }
        cf->ctx = saved_ctx;
        cf->cmd_type = saved_type;
    }

    if (sws_http_phase_engine_init(cf, cmcf) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
