/*
 * The "http_body_file" module: client_body_temp_path, client_body_in_file_only
 * and client_body_in_single_buffer, and the master creating every temporary
 * directory the configuration names before the workers start (owned by the
 * workers' user when they drop privileges). The bodies themselves are
 * written in sws_http_request_body.c.
 */
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_http_body_file.h"
#include "sws_core_module.h"

typedef struct {
    sws_array_t  paths;                   /* sws_http_temp_path_t *, distinct names */
} sws_http_body_file_main_conf_t;

static void *sws_body_file_create_main_conf(sws_conf_t *cf);
static void *sws_body_file_create_loc_conf(sws_conf_t *cf);
static char *sws_body_file_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_body_file_temp_path(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static sws_int_t sws_body_file_postconfiguration(sws_conf_t *cf);
static sws_int_t sws_body_file_init_master(sws_cycle_t *cycle);

static const sws_conf_enum_t sws_body_file_modes[] = {
    { sws_string("off"), SWS_HTTP_BODY_FILE_OFF },
    { sws_string("on"), SWS_HTTP_BODY_FILE_ON },
    { sws_string("clean"), SWS_HTTP_BODY_FILE_CLEAN },
    { sws_null_string, 0 }
};

#define HTTP_ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_body_file_commands[] = {
    { "client_body_temp_path", HTTP_ALL | SWS_CONF_TAKE1234, sws_body_file_temp_path,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "client_body_in_file_only", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_enum_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_http_body_file_conf_t, in_file_only),
      sws_body_file_modes },
    { "client_body_in_single_buffer", HTTP_ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_http_body_file_conf_t, single_buffer), NULL },
    sws_null_command
};

sws_module_t sws_http_body_file_module = {
    SWS_MODULE_ABI,
    .name = "http_body_file",
    .commands = sws_body_file_commands,
    .create_main_conf = sws_body_file_create_main_conf,
    .create_loc_conf = sws_body_file_create_loc_conf,
    .merge_loc_conf = sws_body_file_merge_loc_conf,
    .postconfiguration = sws_body_file_postconfiguration,
    .init_master = sws_body_file_init_master,
};

static void *
sws_body_file_create_main_conf(sws_conf_t *cf)
{
    sws_http_body_file_main_conf_t *mc;

    mc = sws_pcalloc(sws_conf_pool(cf), sizeof(*mc));
    if (mc == NULL
        || sws_array_init(&mc->paths, sws_conf_pool(cf), 2, sizeof(sws_http_temp_path_t *))
           != SWS_OK)
    {
        return NULL;
    }
    return mc;
}

static void *
sws_body_file_create_loc_conf(sws_conf_t *cf)
{
    sws_http_body_file_conf_t *conf;

    conf = sws_pcalloc(sws_conf_pool(cf), sizeof(*conf));
    if (conf == NULL) {
        return NULL;
    }
    conf->in_file_only = SWS_UNSET_UINT;
    conf->single_buffer = SWS_UNSET;
    return conf;
}

static char *
sws_body_file_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_body_file_conf_t *prev = parent, *conf = child;
    sws_http_temp_path_t      *path;

    if (conf->temp_path == NULL) {
        conf->temp_path = prev->temp_path;
    }
    if (conf->temp_path == NULL) {
        /* --http-client-body-temp-path (client_body_temp under the prefix). Each server makes its own
         * copy; the postconfiguration keeps one per name. */
        path = sws_pcalloc(sws_conf_pool(cf), sizeof(*path));
        if (path == NULL) {
            return SWS_CONF_ERROR;
        }
        if (sws_core_default_path(cf, SWS_CORE_PATH_CLIENT_BODY_TEMP, &path->name)
            != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
        conf->temp_path = prev->temp_path = path;
    }
    sws_conf_merge_uint_value(conf->in_file_only, prev->in_file_only, SWS_HTTP_BODY_FILE_OFF);
    sws_conf_merge_value(conf->single_buffer, prev->single_buffer, 0);
    return SWS_CONF_OK;
}

static char *
sws_body_file_temp_path(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_body_file_conf_t *bf = conf;

    if (bf->temp_path != NULL) {
        return "is duplicate";
    }
    bf->temp_path = sws_palloc(sws_conf_pool(cf), sizeof(sws_http_temp_path_t));
    if (bf->temp_path == NULL) {
        return SWS_CONF_ERROR;
    }
    return sws_http_temp_path_parse(cf, bf->temp_path);
}

/* Remember path once per name; one name with two sets of levels is an error. */
static sws_int_t
sws_body_file_add_path(sws_conf_t *cf, sws_http_body_file_main_conf_t *mc,
    sws_http_temp_path_t *path)
{
    sws_http_temp_path_t **paths = mc->paths.elts, **slot;
    sws_uint_t             i;

    for (i = 0; i < mc->paths.nelts; i++) {
        if (!sws_str_eq(&paths[i]->name, &path->name)) {
            continue;
        }
        if (memcmp(paths[i]->level, path->level, sizeof(path->level)) != 0) {
            sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0, "the same temporary path "
                          "\"%s\" is used with different levels",
                          (char *) path->name.data);
            return SWS_ERROR;
        }
        return SWS_OK;
    }
    slot = sws_array_push(&mc->paths);
    if (slot == NULL) {
        return SWS_ERROR;
    }
    *slot = path;
    return SWS_OK;
}

/* Another user of temporary files (the upstream framework's buffered
 * responses): its directory is created by the master with the others. */
sws_int_t
sws_http_temp_path_register(sws_conf_t *cf, sws_http_temp_path_t *path)
{
    sws_http_body_file_main_conf_t *mc;

    mc = sws_conf_http_main_conf(cf, &sws_http_body_file_module);
    return mc ? sws_body_file_add_path(cf, mc, path) : SWS_ERROR;
}

static sws_int_t
sws_body_file_postconfiguration(sws_conf_t *cf)
{
    sws_http_body_file_main_conf_t *mc;
    sws_http_core_main_conf_t      *cmcf;
    sws_http_core_srv_conf_t      **servers, *cscf;
    sws_http_core_loc_conf_t      **locs;
    sws_http_body_file_conf_t      *bf;
    sws_uint_t                      s, l, idx = sws_http_body_file_module.index;

    mc = sws_conf_http_main_conf(cf, &sws_http_body_file_module);
    cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    servers = cmcf->servers.elts;
    for (s = 0; s < cmcf->servers.nelts; s++) {
        cscf = servers[s];
        bf = cscf->ctx->loc_conf[idx];
        if (sws_body_file_add_path(cf, mc, bf->temp_path) != SWS_OK) {
            return SWS_ERROR;
        }
        locs = cscf->location_list.elts;
        for (l = 0; l < cscf->location_list.nelts; l++) {
            bf = locs[l]->loc_conf[idx];
            if (sws_body_file_add_path(cf, mc, bf->temp_path) != SWS_OK) {
                return SWS_ERROR;
            }
        }
    }
    /* For the master's init_master, which only sees the cycle. */
    sws_conf_cycle(cf)->conf_ctx[idx] = mc;
    return SWS_OK;
}

static sws_int_t
sws_body_file_init_master(sws_cycle_t *cycle)
{
    sws_http_body_file_main_conf_t *mc = cycle->conf_ctx[sws_http_body_file_module.index];
    sws_http_temp_path_t          **paths;
    sws_core_conf_t                *ccf = sws_core_conf(cycle);
    uid_t                           uid = (uid_t) -1;
    sws_uint_t                      i;

    if (mc == NULL) {
        return SWS_OK;                    /* no http block */
    }
    if (geteuid() == 0 && ccf != NULL) {
        uid = ccf->uid;                   /* the workers' user */
    }
    paths = mc->paths.elts;
    for (i = 0; i < mc->paths.nelts; i++) {
        if (sws_http_temp_path_create(paths[i], uid, cycle->log) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
