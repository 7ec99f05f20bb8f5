/* The "http_core" module: server, location, listen and the directives every
 * request depends on (root, types, timeouts, limits, keep-alive). */
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <limits.h>
#include "sws_http_core.h"
#include "sws_http_open_file_cache.h"
#include "sws_http_limit_rate.h"
#include "sws_http_open_path.h"
#include "sws_core_module.h"

sws_int_t sws_http_create_confs(sws_conf_t *cf, void ***confs, int what);

static void *sws_http_core_create_main_conf(sws_conf_t *cf);
static void *sws_http_core_create_srv_conf(sws_conf_t *cf);
static char *sws_http_core_merge_srv_conf(sws_conf_t *cf, void *parent, void *child);
static void *sws_http_core_create_loc_conf(sws_conf_t *cf);
static char *sws_http_core_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_http_core_server(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_location(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_listen(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_server_tokens(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_server_name(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_root(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_error_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_checked_only(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_send_lowat(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_keepalive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_large_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_error_page(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_open_file_cache(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_disable_symlinks(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_internal(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_http_core_set_keepalive_disable(sws_conf_t *cf, const sws_command_t *cmd,
    void *conf);

static const sws_conf_enum_t sws_http_core_satisfy[] = {
    { sws_string("all"), SWS_HTTP_SATISFY_ALL },
    { sws_string("any"), SWS_HTTP_SATISFY_ANY },
    { sws_null_string, 0 }
};

static const sws_conf_enum_t sws_http_core_lingering[] = {
    { sws_string("off"), SWS_HTTP_LINGERING_OFF },
    { sws_string("on"), SWS_HTTP_LINGERING_ON },
    { sws_string("always"), SWS_HTTP_LINGERING_ALWAYS },
    { sws_null_string, 0 }
};

static const sws_conf_enum_t sws_http_core_keepalive_disable[] = {
    { sws_string("none"), 0 },
    { sws_string("msie6"), SWS_HTTP_KEEPALIVE_DISABLE_MSIE6 },
    { sws_string("safari"), SWS_HTTP_KEEPALIVE_DISABLE_SAFARI },
    { sws_null_string, 0 }
};

/* open_file_cache when nothing says otherwise. */
static sws_http_ofc_conf_t sws_http_ofc_default = { 1000, 60000 };

#define HTTP_ALL   (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define HTTP_MS    (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF)
#define LOC_SLOT(name, args, set, field) \
    { name, HTTP_ALL | (args), set, SWS_HTTP_LOC_CONF_OFFSET, \
      offsetof(sws_http_core_loc_conf_t, field), NULL }
#define SRV_SLOT(name, args, set, field) \
    { name, HTTP_MS | (args), set, SWS_HTTP_SRV_CONF_OFFSET, \
      offsetof(sws_http_core_srv_conf_t, field), NULL }

static const sws_command_t sws_http_core_commands[] = {
    { "server", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_NOARGS,
      sws_http_core_server, 0, 0, NULL },
    { "location", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE12,
      sws_http_core_location, SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "listen", SWS_HTTP_SRV_CONF | SWS_CONF_1MORE, sws_http_core_listen,
      SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "server_name", SWS_HTTP_SRV_CONF | SWS_CONF_1MORE, sws_http_core_server_name,
      SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "root", HTTP_ALL | SWS_CONF_TAKE1, sws_http_core_root, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "alias", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, sws_http_core_root,
      SWS_HTTP_LOC_CONF_OFFSET, 1, NULL },
    { "types", HTTP_ALL | SWS_CONF_BLOCK | SWS_CONF_NOARGS, sws_http_core_types,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "error_log", HTTP_ALL | SWS_CONF_TAKE12, sws_http_core_error_log,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    /* nginx's, checked and without effect here (docs/directives.md says
     * why each changes nothing): the MSIE answers, the buffers of file data read without sendfile, postponed output,
     * the memory of subrequest bodies (no module here keeps one) */
    { "msie_padding", HTTP_ALL | SWS_CONF_FLAG, sws_http_core_checked_only,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "msie_refresh", HTTP_ALL | SWS_CONF_FLAG, sws_http_core_checked_only,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "output_buffers", HTTP_ALL | SWS_CONF_TAKE2, sws_http_core_checked_only,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "postpone_output", HTTP_ALL | SWS_CONF_TAKE1, sws_http_core_checked_only,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "subrequest_output_buffer_size", HTTP_ALL | SWS_CONF_TAKE1, sws_http_core_checked_only,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "send_lowat", HTTP_ALL | SWS_CONF_TAKE1, sws_http_core_send_lowat,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    LOC_SLOT("default_type", SWS_CONF_TAKE1, sws_conf_set_str_slot, default_type),
    LOC_SLOT("sendfile", SWS_CONF_FLAG, sws_conf_set_flag_slot, sendfile),
    LOC_SLOT("absolute_redirect", SWS_CONF_FLAG, sws_conf_set_flag_slot, absolute_redirect),
    LOC_SLOT("max_ranges", SWS_CONF_TAKE1, sws_conf_set_num_slot, max_ranges),
    LOC_SLOT("log_subrequest", SWS_CONF_FLAG, sws_conf_set_flag_slot, log_subrequest),
    LOC_SLOT("reset_timedout_connection", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             reset_timedout_connection),
    LOC_SLOT("recursive_error_pages", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             recursive_error_pages),
    LOC_SLOT("server_name_in_redirect", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             server_name_in_redirect),
    LOC_SLOT("port_in_redirect", SWS_CONF_FLAG, sws_conf_set_flag_slot, port_in_redirect),
    LOC_SLOT("tcp_nopush", SWS_CONF_FLAG, sws_conf_set_flag_slot, tcp_nopush),
    LOC_SLOT("tcp_nodelay", SWS_CONF_FLAG, sws_conf_set_flag_slot, tcp_nodelay),
    LOC_SLOT("server_tokens", SWS_CONF_TAKE1, sws_http_core_server_tokens, server_tokens),
    LOC_SLOT("request_id", SWS_CONF_FLAG, sws_conf_set_flag_slot, request_id),
    LOC_SLOT("chunked_transfer_encoding", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             chunked_transfer_encoding),
    { "satisfy", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_enum_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_http_core_loc_conf_t, satisfy), sws_http_core_satisfy },
    LOC_SLOT("keepalive_timeout", SWS_CONF_TAKE12, sws_http_core_keepalive, keepalive_timeout),
    LOC_SLOT("keepalive_requests", SWS_CONF_TAKE1, sws_conf_set_num_slot, keepalive_requests),
    LOC_SLOT("keepalive_time", SWS_CONF_TAKE1, sws_conf_set_msec_slot, keepalive_time),
    { "keepalive_disable", HTTP_ALL | SWS_CONF_TAKE12, sws_http_core_set_keepalive_disable,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "lingering_close", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_enum_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_http_core_loc_conf_t, lingering_close),
      sws_http_core_lingering },
    LOC_SLOT("send_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot, send_timeout),
    LOC_SLOT("sendfile_max_chunk", SWS_CONF_TAKE1, sws_conf_set_size_slot,
             sendfile_max_chunk),
    LOC_SLOT("client_body_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot, client_body_timeout),
    LOC_SLOT("client_max_body_size", SWS_CONF_TAKE1, sws_conf_set_size_slot,
             client_max_body_size),
    LOC_SLOT("client_body_buffer_size", SWS_CONF_TAKE1, sws_conf_set_size_slot,
             client_body_buffer_size),
    LOC_SLOT("lingering_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot, lingering_timeout),
    LOC_SLOT("lingering_time", SWS_CONF_TAKE1, sws_conf_set_msec_slot, lingering_time),
    LOC_SLOT("limit_rate", SWS_CONF_TAKE1, sws_http_limit_rate_set_slot, limit_rate),
    LOC_SLOT("limit_rate_after", SWS_CONF_TAKE1, sws_http_limit_rate_set_slot,
             limit_rate_after),
    { "error_page", HTTP_ALL | SWS_CONF_2MORE, sws_http_core_error_page,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "open_file_cache", HTTP_ALL | SWS_CONF_TAKE12, sws_http_core_open_file_cache,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    LOC_SLOT("open_file_cache_valid", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
             open_file_cache_valid),
    LOC_SLOT("open_file_cache_errors", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             open_file_cache_errors),
    LOC_SLOT("open_file_cache_min_uses", SWS_CONF_TAKE1, sws_conf_set_num_slot,
             open_file_cache_min_uses),
    { "disable_symlinks", HTTP_ALL | SWS_CONF_TAKE12, sws_http_core_disable_symlinks,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "limit_except", SWS_HTTP_LOC_CONF | SWS_CONF_BLOCK | SWS_CONF_1MORE,
      sws_http_core_limit_except, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "internal", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, sws_http_core_internal,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    /* nginx's hash sizes: accepted and checked, ours size themselves */
    { "types_hash_max_size", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_hash_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "types_hash_bucket_size", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_hash_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "server_names_hash_max_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "server_names_hash_bucket_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "variables_hash_max_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "variables_hash_bucket_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "map_hash_max_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "map_hash_bucket_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    SRV_SLOT("client_header_buffer_size", SWS_CONF_TAKE1, sws_conf_set_size_slot,
             client_header_buffer_size),
    SRV_SLOT("large_client_header_buffers", SWS_CONF_TAKE2, sws_http_core_large_buffers,
             large_client_header_buffers),
    SRV_SLOT("client_header_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot,
             client_header_timeout),
    SRV_SLOT("merge_slashes", SWS_CONF_FLAG, sws_conf_set_flag_slot, merge_slashes),
    SRV_SLOT("underscores_in_headers", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             underscores_in_headers),
    SRV_SLOT("ignore_invalid_headers", SWS_CONF_FLAG, sws_conf_set_flag_slot,
             ignore_invalid_headers),
    sws_null_command
};

sws_module_t sws_http_core_module = {
    SWS_MODULE_ABI, "http_core", NULL, sws_http_core_commands,
    sws_http_core_create_main_conf, NULL,
    sws_http_core_create_srv_conf, sws_http_core_merge_srv_conf,
    sws_http_core_create_loc_conf, sws_http_core_merge_loc_conf,
    NULL, NULL, NULL, NULL, { { NULL } }, 0, 0
};

static void *
sws_http_core_create_main_conf(sws_conf_t *cf)
{
    sws_http_core_main_conf_t *cmcf;

    cmcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_core_main_conf_t));
    if (cmcf == NULL
        || sws_array_init(&cmcf->servers, sws_conf_pool(cf), 4,
                          sizeof(sws_http_core_srv_conf_t *)) != SWS_OK)
    {
        return NULL;
    }
    if (sws_array_init(&cmcf->phase_handlers, sws_conf_pool(cf), 16,
                       sizeof(sws_http_phase_reg_t)) != SWS_OK)
    {
        return NULL;
    }
    return cmcf;
}

static void *
sws_http_core_create_srv_conf(sws_conf_t *cf)
{
    sws_http_core_srv_conf_t *cscf;
    sws_pool_t               *pool = sws_conf_pool(cf);

    cscf = sws_pcalloc(pool, sizeof(sws_http_core_srv_conf_t));
    if (cscf == NULL
        || sws_array_init(&cscf->server_names, pool, 2, sizeof(sws_str_t)) != SWS_OK
        || sws_array_init(&cscf->location_list, pool, 8, sizeof(void *)) != SWS_OK
        || sws_array_init(&cscf->listens, pool, 2, sizeof(sws_http_listen_t)) != SWS_OK)
    {
        return NULL;
    }
    cscf->client_header_buffer_size = SWS_UNSET_SIZE;
    cscf->large_client_header_buffer_size = SWS_UNSET_SIZE;
    cscf->large_client_header_buffers = SWS_UNSET_UINT;
    cscf->client_header_timeout = SWS_UNSET_MSEC;
    cscf->merge_slashes = SWS_UNSET;
    cscf->underscores_in_headers = SWS_UNSET;
    cscf->ignore_invalid_headers = SWS_UNSET;
    cscf->file = sws_conf_file(cf);
    cscf->line = sws_conf_line(cf);
    return cscf;
}

static char *
sws_http_core_merge_srv_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_core_srv_conf_t *prev = parent, *conf = child;

    sws_conf_merge_size_value(conf->client_header_buffer_size,
                              prev->client_header_buffer_size, 1024);
    sws_conf_merge_size_value(conf->large_client_header_buffer_size,
                              prev->large_client_header_buffer_size, 8192);
    sws_conf_merge_uint_value(conf->large_client_header_buffers,
                              prev->large_client_header_buffers, 4);
    sws_conf_merge_msec_value(conf->client_header_timeout, prev->client_header_timeout, 60000);
    sws_conf_merge_value(conf->merge_slashes, prev->merge_slashes, 1);
    sws_conf_merge_value(conf->underscores_in_headers, prev->underscores_in_headers, 0);
    sws_conf_merge_value(conf->ignore_invalid_headers, prev->ignore_invalid_headers, 1);

    if (conf->client_header_buffer_size < 128) {
        return "client_header_buffer_size must be at least 128 bytes";
    }
    if (conf->large_client_header_buffer_size < conf->client_header_buffer_size) {
        return "large_client_header_buffers size must not be less than "
               "client_header_buffer_size";
    }

    if (conf->listens.nelts == 0 && conf->ctx != NULL) {
        /* No listen: port 80 as root, 8000 otherwise, like nginx. */
        sws_http_listen_t *lsn = sws_array_push(&conf->listens);
        sws_str_t text = geteuid() == 0 ? (sws_str_t) sws_string("*:80")
                                        : (sws_str_t) sws_string("*:8000");
        if (lsn == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_memzero(lsn, sizeof(*lsn));
        if (sws_parse_listen_addr(sws_conf_pool(cf), &text, &lsn->sockaddr, &lsn->socklen,
                                  &lsn->addr_text) != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
        lsn->backlog = 511;
        lsn->file = conf->file;
        lsn->line = conf->line;
    }
    if (conf->server_names.nelts == 0) {
        sws_str_t *n = sws_array_push(&conf->server_names);
        if (n == NULL) {
            return SWS_CONF_ERROR;
        }
        n->len = 0;
        n->data = (u_char *) "";
    }
    conf->server_name = ((sws_str_t *) conf->server_names.elts)[0];
    return SWS_CONF_OK;
}

static void *
sws_http_core_create_loc_conf(sws_conf_t *cf)
{
    sws_http_core_loc_conf_t *clcf;

    clcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_core_loc_conf_t));
    if (clcf == NULL) {
        return NULL;
    }
    clcf->sendfile = SWS_UNSET;
    clcf->absolute_redirect = SWS_UNSET;
    clcf->max_ranges = SWS_UNSET;
    clcf->log_subrequest = SWS_UNSET;
    clcf->reset_timedout_connection = SWS_UNSET;
    clcf->recursive_error_pages = SWS_UNSET;
    clcf->server_name_in_redirect = SWS_UNSET;
    clcf->port_in_redirect = SWS_UNSET;
    clcf->tcp_nopush = SWS_UNSET;
    clcf->tcp_nodelay = SWS_UNSET;
    clcf->server_tokens = SWS_UNSET;
    clcf->request_id = SWS_UNSET;
    clcf->chunked_transfer_encoding = SWS_UNSET;
    clcf->satisfy = SWS_UNSET_UINT;
    clcf->keepalive_timeout = SWS_UNSET_MSEC;
    clcf->keepalive_requests = SWS_UNSET_UINT;
    clcf->keepalive_time = SWS_UNSET_MSEC;
    clcf->keepalive_disable = SWS_UNSET_UINT;
    clcf->lingering_close = SWS_UNSET_UINT;
    clcf->send_timeout = SWS_UNSET_MSEC;
    clcf->sendfile_max_chunk = SWS_UNSET_SIZE;
    clcf->client_body_timeout = SWS_UNSET_MSEC;
    clcf->client_max_body_size = SWS_UNSET_SIZE;
    clcf->client_body_buffer_size = SWS_UNSET_SIZE;
    clcf->lingering_timeout = SWS_UNSET_MSEC;
    clcf->lingering_time = SWS_UNSET_MSEC;
    clcf->open_file_cache_valid = SWS_UNSET_MSEC;
    clcf->open_file_cache_errors = SWS_UNSET;
    clcf->open_file_cache_min_uses = SWS_UNSET;
    clcf->disable_symlinks = SWS_UNSET;
    return clcf;
}

static char *
sws_http_core_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_core_loc_conf_t *prev = parent, *conf = child;
    sws_str_t                *pair;
    sws_uint_t                i;

    if (conf->root.data == NULL) {
        conf->alias = prev->alias;
        conf->alias_whole = prev->alias_whole;
        conf->root_format = prev->root_format;
        conf->root = prev->root;
        if (conf->root.data == NULL) {
            if (sws_core_default_path(cf, SWS_CORE_PATH_HTML, &conf->root) != SWS_OK) {
                return SWS_CONF_ERROR;
            }
        }
    }
    if (conf->types_list == NULL) {
        conf->types = prev->types;
        conf->types_list = prev->types_list;
    }
    if (conf->types == NULL && conf->types_list) {
        conf->types = sws_hash_create(sws_conf_pool(cf), conf->types_list->nelts / 2 + 1, 1);
        if (conf->types == NULL) {
            return SWS_CONF_ERROR;
        }
        pair = conf->types_list->elts;
        for (i = 0; i + 1 < conf->types_list->nelts; i += 2) {
            /* (each extension is there once: see sws_http_core_types) */
            if (sws_hash_add(conf->types, &pair[i], &pair[i + 1]) == SWS_ERROR) {
                return SWS_CONF_ERROR;
            }
        }
    }
    if (conf->handler == NULL) {
        conf->handler = prev->handler;
        conf->handler_owner = prev->handler_owner;
    }
    if (conf->error_pages == NULL) {
        conf->error_pages = prev->error_pages;
    }
    if (!conf->open_file_cache_set) {
        conf->open_file_cache_set = prev->open_file_cache_set;
        /* On by default (like h2o's and lighttpd's caches): inotify drops
         * changed files at once, so caching is safe to assume. */
        conf->open_file_cache = prev->open_file_cache_set ? prev->open_file_cache
                                                          : &sws_http_ofc_default;
    }
    sws_conf_merge_msec_value(conf->open_file_cache_valid, prev->open_file_cache_valid, 5000);
    sws_conf_merge_value(conf->open_file_cache_errors, prev->open_file_cache_errors, 0);
    sws_conf_merge_value(conf->open_file_cache_min_uses, prev->open_file_cache_min_uses, 1);
    if (conf->open_file_cache_min_uses < 1) {
        return "open_file_cache_min_uses must be at least 1";
    }
    if (conf->disable_symlinks == SWS_UNSET) {
        conf->disable_symlinks = prev->disable_symlinks == SWS_UNSET ? SWS_HTTP_SYMLINKS_OFF
                                                                      : prev->disable_symlinks;
        conf->disable_symlinks_from = prev->disable_symlinks_from;
        conf->disable_symlinks_root = prev->disable_symlinks_root;
    }
    sws_conf_merge_str_value(conf->default_type, prev->default_type, "text/plain");
    sws_conf_merge_value(conf->sendfile, prev->sendfile, 1);
    sws_conf_merge_value(conf->absolute_redirect, prev->absolute_redirect, 1);
    sws_conf_merge_value(conf->max_ranges, prev->max_ranges, SWS_HTTP_RANGE_MAX);
    sws_conf_merge_value(conf->log_subrequest, prev->log_subrequest, 0);
    sws_conf_merge_value(conf->reset_timedout_connection, prev->reset_timedout_connection, 0);
    sws_conf_merge_value(conf->recursive_error_pages, prev->recursive_error_pages, 0);
    if (conf->error_log == NULL) {
        conf->error_log = prev->error_log;
    }
    sws_conf_merge_value(conf->server_name_in_redirect, prev->server_name_in_redirect, 0);
    sws_conf_merge_value(conf->port_in_redirect, prev->port_in_redirect, 1);
    sws_conf_merge_value(conf->tcp_nopush, prev->tcp_nopush, 0);
    sws_conf_merge_value(conf->tcp_nodelay, prev->tcp_nodelay, 1);
    sws_conf_merge_value(conf->server_tokens, prev->server_tokens, 1);
    sws_conf_merge_value(conf->request_id, prev->request_id, 0);
    sws_conf_merge_value(conf->chunked_transfer_encoding, prev->chunked_transfer_encoding, 1);
    sws_conf_merge_uint_value(conf->satisfy, prev->satisfy, SWS_HTTP_SATISFY_ALL);
    sws_conf_merge_msec_value(conf->keepalive_timeout, prev->keepalive_timeout, 75000);
    sws_conf_merge_uint_value(conf->keepalive_requests, prev->keepalive_requests, 1000);
    sws_conf_merge_msec_value(conf->keepalive_time, prev->keepalive_time, 3600000);
    sws_conf_merge_uint_value(conf->keepalive_disable, prev->keepalive_disable,
                              SWS_HTTP_KEEPALIVE_DISABLE_MSIE6);
    sws_conf_merge_uint_value(conf->lingering_close, prev->lingering_close,
                              SWS_HTTP_LINGERING_ON);
    sws_conf_merge_msec_value(conf->send_timeout, prev->send_timeout, 60000);
    sws_conf_merge_size_value(conf->sendfile_max_chunk, prev->sendfile_max_chunk, 0);
    sws_conf_merge_msec_value(conf->client_body_timeout, prev->client_body_timeout, 60000);
    sws_conf_merge_size_value(conf->client_max_body_size, prev->client_max_body_size,
                              1024 * 1024);
    sws_conf_merge_size_value(conf->client_body_buffer_size, prev->client_body_buffer_size,
                              16384);
    sws_conf_merge_msec_value(conf->lingering_timeout, prev->lingering_timeout, 5000);
    sws_conf_merge_msec_value(conf->lingering_time, prev->lingering_time, 30000);
    sws_conf_merge_ptr_value(conf->limit_rate, prev->limit_rate, NULL);
    sws_conf_merge_ptr_value(conf->limit_rate_after, prev->limit_rate_after, NULL);
    if (conf->client_body_buffer_size < 1024) {
        conf->client_body_buffer_size = 1024;
    }
    return SWS_CONF_OK;
}

/* A new server { } in the http block being read: its confs, in the
 * servers' list. */
static sws_http_conf_ctx_t *
sws_http_core_server_create(sws_conf_t *cf)
{
    sws_http_conf_ctx_t        *http = cf->ctx, *ctx;
    sws_http_core_srv_conf_t   *cscf, **sp;
    sws_http_core_main_conf_t  *cmcf;
    sws_http_core_loc_conf_t   *clcf;

    ctx = sws_pcalloc(cf->pool, sizeof(sws_http_conf_ctx_t));
    if (ctx == NULL) {
        return NULL;
    }
    ctx->main_conf = http->main_conf;
    if (sws_http_create_confs(cf, &ctx->srv_conf, 1) != SWS_OK
        || sws_http_create_confs(cf, &ctx->loc_conf, 2) != SWS_OK)
    {
        return NULL;
    }
    cscf = ctx->srv_conf[sws_http_core_module.index];
    cscf->ctx = ctx;
    clcf = ctx->loc_conf[sws_http_core_module.index];
    clcf->loc_conf = ctx->loc_conf;

    cmcf = ctx->main_conf[sws_http_core_module.index];
    sp = sws_array_push(&cmcf->servers);
    if (sp == NULL) {
        return NULL;
    }
    *sp = cscf;
    return ctx;
}

/* server_tokens on | off | build: nginx's "build" adds the build's name,
 * which ours has none of: the same as on. */
static char *
sws_http_core_server_tokens(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t  *clcf = conf;
    const sws_str_t           *v = sws_conf_arg(cf, 1);

    (void) cmd;
    if (clcf->server_tokens != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_caseeq_cstr(v, "on") || sws_str_caseeq_cstr(v, "build")) {
        clcf->server_tokens = 1;
    } else if (sws_str_caseeq_cstr(v, "off")) {
        clcf->server_tokens = 0;
    } else {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"server_tokens\" "
                           "directive, it must be \"on\", \"off\" or \"build\"",
                           (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
sws_http_core_server(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_conf_ctx_t *ctx = sws_http_core_server_create(cf);

    if (ctx == NULL) {
        return SWS_CONF_ERROR;
    }
    return sws_conf_parse_block(cf, ctx, SWS_HTTP_SRV_CONF);
}

char *
sws_http_conf_own_server(sws_conf_t *cf, sws_http_handler_pt handler, const char *owner,
    const char *default_listen, sws_http_own_server_pt done, void *data)
{
    sws_http_conf_ctx_t       *ctx, *saved_ctx = cf->ctx;
    uint32_t                   saved_type = cf->cmd_type;
    sws_http_core_srv_conf_t  *cscf;
    sws_http_listen_t         *lsn;
    sws_str_t                  text;
    char                      *rv;

    ctx = sws_http_core_server_create(cf);
    if (ctx == NULL) {
        return SWS_CONF_ERROR;
    }
    cscf = ctx->srv_conf[sws_http_core_module.index];
    cscf->own = owner;
    cf->ctx = ctx;
    cf->cmd_type = SWS_HTTP_SRV_CONF;
    rv = SWS_CONF_ERROR;
    if (sws_http_set_content_handler(cf, handler, owner) != SWS_OK
        || sws_conf_parse_block(cf, ctx, SWS_HTTP_SRV_CONF) != SWS_CONF_OK)
    {
        goto done;
    }
    if (cscf->listens.nelts == 0) {
        lsn = sws_array_push(&cscf->listens);
        if (lsn == NULL) {
            goto done;
        }
        sws_memzero(lsn, sizeof(*lsn));
        text.data = (u_char *) default_listen;
        text.len = strlen(default_listen);
        if (sws_parse_listen_addr(cf->pool, &text, &lsn->sockaddr, &lsn->socklen,
                                  &lsn->addr_text) != SWS_OK)
        {
            goto done;
        }
        lsn->backlog = 511;
        lsn->file = cscf->file;
        lsn->line = cscf->line;
    }
    rv = done ? done(cf, data) : SWS_CONF_OK;

done:
    cf->ctx = saved_ctx;
    cf->cmd_type = saved_type;
    return rv;
}

/* Loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) or a unix socket. */
static int
sws_http_listen_is_private(const sws_http_listen_t *lsn)
{
    const struct sockaddr_in6 *sin6;
    const u_char              *a;

    switch (lsn->sockaddr.ss_family) {
    case AF_UNIX:
        return 1;
    case AF_INET:
        a = (const u_char *) &((const struct sockaddr_in *) &lsn->sockaddr)->sin_addr;
        return a[0] == 127;
    case AF_INET6:
        sin6 = (const struct sockaddr_in6 *) &lsn->sockaddr;
        if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr)) {
            return 1;
        }
        return IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) && sin6->sin6_addr.s6_addr[12] == 127;
    }
    return 0;
}

int
sws_http_conf_public_listen(sws_conf_t *cf, sws_str_t *addr, const char **file,
    sws_uint_t *line)
{
    sws_http_core_srv_conf_t *cscf = sws_conf_http_srv_conf(cf, &sws_http_core_module);
    sws_http_listen_t        *lsn;
    sws_uint_t                i;

    if (cscf == NULL) {
        return 0;
    }
    lsn = cscf->listens.elts;
    for (i = 0; i < cscf->listens.nelts; i++) {
        if (!sws_http_listen_is_private(&lsn[i])) {
            *addr = lsn[i].addr_text;
            *file = lsn[i].file;
            *line = lsn[i].line;
            return 1;
        }
    }
    return 0;
}

static char *
sws_http_core_location(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_conf_ctx_t       *parent = cf->ctx, *ctx;
    sws_http_core_srv_conf_t  *cscf = conf;
    sws_http_core_loc_conf_t  *clcf, **lp;
    sws_str_t                 *mod, *name, stripped;
    sws_uint_t                 n = sws_conf_nargs(cf);

    ctx = sws_pcalloc(cf->pool, sizeof(sws_http_conf_ctx_t));
    if (ctx == NULL) {
        return SWS_CONF_ERROR;
    }
    ctx->main_conf = parent->main_conf;
    ctx->srv_conf = parent->srv_conf;
    if (sws_http_create_confs(cf, &ctx->loc_conf, 2) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    clcf = ctx->loc_conf[sws_http_core_module.index];
    clcf->loc_conf = ctx->loc_conf;
    clcf->file = sws_conf_file(cf);
    clcf->line = sws_conf_line(cf);

    if (n == 3) {
        mod = sws_conf_arg(cf, 1);
        name = sws_conf_arg(cf, 2);
        if (sws_str_eq_cstr(mod, "=")) {
            clcf->exact = 1;
        } else if (sws_str_eq_cstr(mod, "^~")) {
            clcf->noregex = 1;
        } else if (sws_str_eq_cstr(mod, "~")) {
            clcf->regex = 1;
        } else if (sws_str_eq_cstr(mod, "~*")) {
            clcf->regex = 1;
            clcf->caseless = 1;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid location modifier \"%.*s\"",
                               (int) mod->len, mod->data);
            return SWS_CONF_ERROR;
        }
    } else {
        name = sws_conf_arg(cf, 1);
        if (name->len > 1 && name->data[0] == '=') {
            clcf->exact = 1;               /* "=/path" written without a space */
            stripped.len = name->len - 1;
            stripped.data = name->data + 1;
            name = &stripped;
        }
    }
    if (name->len == 0) {
        return "has an empty location";
    }
    clcf->name = *name;
    if (clcf->exact) {
        sws_http_path_exten(&clcf->name, &clcf->exten);
    }
    if (name->data[0] == '@' && n == 2) {
        if (name->len == 1) {
            return "has an empty name after \"@\"";
        }
        clcf->named = 1;             /* try_files, error_page: internal only */
    } else if (!clcf->regex && clcf->name.data[0] != '/') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "location \"%.*s\" must start with \"/\" (or \"@\" for a "
                           "named location)", (int) name->len, name->data);
        return SWS_CONF_ERROR;
    }
    if (sws_conf_context(cf) == SWS_HTTP_LOC_CONF) {
        /* nested in a location, with nginx's rules */
        sws_http_core_loc_conf_t  *pclcf = parent->loc_conf[sws_http_core_module.index];

        if (pclcf->noname) {
            return "is not allowed inside \"if\"";
        }
        if (pclcf->exact || pclcf->named || clcf->named) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, clcf->named
                               ? "named location \"%.*s\" can be on the server level only"
                               : pclcf->exact
                               ? "location \"%.*s\" cannot be inside the exact location \"%.*s\""
                               : "location \"%.*s\" cannot be inside the named location \"%.*s\"",
                               (int) name->len, name->data, (int) pclcf->name.len,
                               pclcf->name.data);
            return SWS_CONF_ERROR;
        }
        /* a prefix location inside a regex one must begin with the
         * regex's text too, as nginx wants: in effect it is refused */
        if (!clcf->regex
            && (name->len < pclcf->name.len
                || memcmp(name->data, pclcf->name.data, pclcf->name.len) != 0))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "location \"%.*s\" is outside location "
                               "\"%.*s\"", (int) name->len, name->data,
                               (int) pclcf->name.len, pclcf->name.data);
            return SWS_CONF_ERROR;
        }
        clcf->parent_loc = pclcf;
    }
    if (clcf->named) {
        sws_http_core_loc_conf_t **lp2 = cscf->location_list.elts;
        sws_uint_t                 k;

        for (k = 0; k < cscf->location_list.nelts; k++) {
            if (lp2[k]->named && lp2[k]->name.len == name->len
                && memcmp(lp2[k]->name.data, name->data, name->len) == 0)
            {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate location \"%.*s\"",
                                   (int) name->len, name->data);
                return SWS_CONF_ERROR;
            }
        }
    }

    if (clcf->regex) {
        /* compiled here too (the matcher compiles it again after the http
         * block): a bad pattern is reported at its line, and its named
         * groups are variables before the block's formats are compiled */
        const char   *err;
        sws_regex_t  *re;

        re = sws_regex_compile(cf->pool, name, clcf->caseless ? SWS_REGEX_CASELESS : 0, &err);
        if (re == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        if (sws_http_regex_variables(cf, re) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }

    lp = sws_array_push(&cscf->location_list);
    if (lp == NULL) {
        return SWS_CONF_ERROR;
    }
    *lp = clcf;
    return sws_conf_parse_block(cf, ctx, SWS_HTTP_LOC_CONF);
}

/* nginx's socket options of listen: SWS_OK (set; the address gets a
 * socket of its own), SWS_ERROR (logged; lsn->bind left 0), SWS_DECLINED
 * (not one of them). */
static sws_int_t
sws_http_core_listen_option(sws_conf_t *cf, sws_http_listen_t *lsn, const sws_str_t *arg)
{
    sws_str_t  v;
    ssize_t    size;
    sws_int_t  n;

    if (sws_str_eq_cstr(arg, "deferred")) {
        lsn->deferred = 1;
    } else if (sws_conf_param(arg, "ipv6only=", &v)) {
        if (!sws_str_eq_cstr(&v, "on") && !sws_str_eq_cstr(&v, "off")) {
            goto invalid;
        }
        lsn->ipv6only_off = sws_str_eq_cstr(&v, "off");
    } else if (sws_conf_param(arg, "rcvbuf=", &v) || sws_conf_param(arg, "sndbuf=", &v)) {
        size = sws_parse_size(&v);
        if (size <= 0 || size > INT_MAX) {
            goto invalid;
        }
        *(arg->data[0] == 'r' ? &lsn->rcvbuf : &lsn->sndbuf) = (int) size;
    } else if (sws_conf_param(arg, "fastopen=", &v)) {
        n = sws_atoi(v.data, v.len);
        if (n <= 0 || n > INT_MAX) {
            goto invalid;
        }
        lsn->fastopen = (int) n;
    } else if (sws_conf_param(arg, "so_keepalive=", &v)) {
        /* "on", "off", or nginx's [idle]:[intvl]:[cnt] (taken as on) */
        if (sws_str_eq_cstr(&v, "off")) {
            lsn->keepalive = -1;
        } else if (sws_str_eq_cstr(&v, "on") || memchr(v.data, ':', v.len) != NULL) {
            lsn->keepalive = 1;
        } else {
            goto invalid;
        }
    } else {
        return SWS_DECLINED;
    }
    lsn->bind = 1;
    return SWS_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_ERROR;
}

static char *
sws_http_core_listen(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_srv_conf_t *cscf = conf;
    sws_http_listen_t        *lsn;
    sws_str_t                *arg, v;
    sws_uint_t                i, n = sws_conf_nargs(cf);
    sws_int_t                 rc;

    lsn = sws_array_push(&cscf->listens);
    if (lsn == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(lsn, sizeof(*lsn));
    lsn->backlog = 511;
    lsn->file = sws_conf_file(cf);
    lsn->line = sws_conf_line(cf);

    arg = sws_conf_arg(cf, 1);
    if (sws_parse_listen_addr(cf->pool, arg, &lsn->sockaddr, &lsn->socklen, &lsn->addr_text)
        != SWS_OK)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid address \"%.*s\" in \"listen\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    for (i = 2; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_str_eq_cstr(arg, "default_server") || sws_str_eq_cstr(arg, "default")) {
            lsn->default_server = 1;
        } else if (sws_str_eq_cstr(arg, "bind")) {
            lsn->bind = 1;
        } else if (sws_str_eq_cstr(arg, "reuseport")) {
            lsn->reuseport = 1;
            lsn->bind = 1;          /* a socket option: the address's own socket */
        } else if (sws_str_eq_cstr(arg, "ssl")) {
            lsn->ssl = 1;
        } else if (sws_str_eq_cstr(arg, "http2")) {
            lsn->http2 = 1;
        } else if (sws_str_eq_cstr(arg, "proxy_protocol")) {
            lsn->proxy_protocol = 1;
        } else if (sws_str_eq_cstr(arg, "quic")) {
            lsn->quic = 1;
        } else if (sws_conf_param(arg, "backlog=", &v)) {
            sws_int_t b = sws_atoi(v.data, v.len);
            if (b <= 0) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid backlog \"%.*s\"",
                                   (int) v.len, v.data);
                return SWS_CONF_ERROR;
            }
            lsn->backlog = (int) b;
            lsn->bind = 1;
        } else if ((rc = sws_http_core_listen_option(cf, lsn, arg)) != SWS_DECLINED) {
            if (rc != SWS_OK) {
                return SWS_CONF_ERROR;
            }
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
    }
    if (lsn->quic) {
        /* QUIC has its own TLS and framing: as nginx, none of the TCP
         * protocol options, and no unix socket. */
        if (lsn->ssl || lsn->http2 || lsn->proxy_protocol) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"quic\" cannot go with \"%s\" "
                               "in \"listen\"", lsn->ssl ? "ssl" : lsn->http2 ? "http2"
                                                                 : "proxy_protocol");
            return SWS_CONF_ERROR;
        }
        if (lsn->sockaddr.ss_family != AF_INET && lsn->sockaddr.ss_family != AF_INET6) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"quic\" needs an IP address");
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

/* server_name ~RE: compiled now (its named groups become variables);
 * caseless when it has upper-case letters, as nginx's (hosts are
 * compared lower-cased). */
static sws_int_t
sws_http_core_server_regex(sws_conf_t *cf, sws_http_core_srv_conf_t *cscf,
    const sws_str_t *arg)
{
    sws_str_t     pattern = { arg->len - 1, arg->data + 1 };
    sws_regex_t **rp, *re;
    const char   *err;
    sws_uint_t    flags = 0;
    size_t        i;

    for (i = 0; i < pattern.len; i++) {
        if (pattern.data[i] >= 'A' && pattern.data[i] <= 'Z') {
            flags = SWS_REGEX_CASELESS;
            break;
        }
    }
    re = sws_regex_compile(cf->pool, &pattern, flags, &err);
    if (re == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_ERROR;
    }
    if (sws_http_regex_variables(cf, re) != SWS_OK) {
        return SWS_ERROR;
    }
    if (cscf->server_regexes == NULL) {
        cscf->server_regexes = sws_array_create(cf->pool, 2, sizeof(sws_regex_t *));
        if (cscf->server_regexes == NULL) {
            return SWS_ERROR;
        }
    }
    rp = sws_array_push(cscf->server_regexes);
    if (rp == NULL) {
        return SWS_ERROR;
    }
    *rp = re;
    return SWS_OK;
}

static char *
sws_http_core_server_name(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_srv_conf_t *cscf = conf;
    sws_str_t                *arg, *name;
    sws_uint_t                i, n = sws_conf_nargs(cf);

    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (arg->len > 1 && arg->data[0] == '~') {
            if (sws_http_core_server_regex(cf, cscf, arg) != SWS_OK) {
                return SWS_CONF_ERROR;
            }
            name = sws_array_push(&cscf->server_names);
            if (name == NULL) {
                return SWS_CONF_ERROR;
            }
            *name = *arg;            /* kept as written: a regex is not lower-cased */
            continue;
        }
        /* "*.x.com" and "mail.*": one '*', first or last, next to a dot */
        if (arg->len
            && memchr(arg->data + 1, '*', arg->len > 2 ? arg->len - 2 : 0) != NULL)
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid server name \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        if (arg->len > 1 && arg->data[arg->len - 1] == '*'
            && (arg->data[0] == '*' || arg->len < 3 || arg->data[arg->len - 2] != '.'))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid server name \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        name = sws_array_push(&cscf->server_names);
        if (name == NULL) {
            return SWS_CONF_ERROR;
        }
        name->len = arg->len;
        name->data = sws_pnalloc(cf->pool, arg->len + 1);
        if (name->data == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_strlow(name->data, arg->data, arg->len);
        name->data[arg->len] = '\0';
    }
    return SWS_CONF_OK;
}

/* root PATH / alias PATH (cmd->offset 1 marks alias) */
static char *
sws_http_core_root(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_str_t                 path = *sws_conf_arg(cf, 1);
    int                       alias = cmd->offset == 1;

    if (clcf->root.data) {
        return (clcf->alias == alias) ? "is duplicate"
                                      : "cannot be used together with the other of root/alias";
    }
    if (sws_conf_full_name(cf, &path, 0) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    /* root: no trailing slash (the URI brings it); alias: kept as written. */
    if (!alias) {
        while (path.len > 1 && path.data[path.len - 1] == '/') {
            path.len--;
        }
    }
    clcf->root = path;
    clcf->alias = alias;
    /* as nginx: a regex location's alias is the whole path (its captures
     * say what of the URI goes in it) */
    clcf->alias_whole = alias && clcf->regex;
    if (memchr(path.data, '$', path.len) != NULL) {
        const char  *err = NULL;

        clcf->root_format = sws_http_format_compile(cf->pool, &path, SWS_HTTP_ESCAPE_NONE,
                                                    &err);
        if (clcf->root_format == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%s\"",
                               err ? err : "cannot compile the path", cmd->name);
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

/* An extension given again takes the later type, with nginx's warning;
 * returns whether `ext` was there. */
static int
sws_http_core_types_replace(sws_array_t *list, const sws_str_t *ext, const sws_str_t *type,
                            const sws_conf_node_t *node, sws_log_t *log)
{
    sws_str_t  *pair = list->elts;
    sws_uint_t  i;

    for (i = 0; i + 1 < list->nelts; i += 2) {
        if (pair[i].len == ext->len && memcmp(pair[i].data, ext->data, ext->len) == 0) {
            sws_log_error(SWS_LOG_WARN, log, 0,
                          "duplicate extension \"%.*s\", content type: \"%.*s\", previous "
                          "content type: \"%.*s\" in %s:%lu", (int) ext->len, ext->data,
                          (int) type->len, type->data, (int) pair[i + 1].len, pair[i + 1].data,
                          node->file, (unsigned long) node->line);
            pair[i + 1] = *type;
            return 1;
        }
    }
    return 0;
}

static char *
sws_http_core_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_conf_node_t          *nodes;
    sws_str_t                *args, *pair;
    sws_uint_t                i, j;

    /* A second types block in the same place adds to the first, as nginx's
     * does (`include mime.types;` followed by a site's own `types { }`). */
    if (clcf->types_list == NULL) {
        clcf->types_list = sws_array_create(cf->pool, 256, sizeof(sws_str_t));
        if (clcf->types_list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    nodes = cf->node->children->elts;
    for (i = 0; i < cf->node->children->nelts; i++) {
        args = nodes[i].args.elts;
        if (nodes[i].children || nodes[i].args.nelts < 2) {
            sws_log_error(SWS_LOG_EMERG, cf->log, 0,
                          "invalid types entry \"%.*s\" in %s:%lu", (int) args[0].len,
                          args[0].data, nodes[i].file, (unsigned long) nodes[i].line);
            return SWS_CONF_ERROR;
        }
        for (j = 1; j < nodes[i].args.nelts; j++) {
            if (sws_http_core_types_replace(clcf->types_list, &args[j], &args[0], &nodes[i],
                                            cf->log)) {
                continue;
            }
            pair = sws_array_push_n(clcf->types_list, 2);
            if (pair == NULL) {
                return SWS_CONF_ERROR;
            }
            pair[0] = args[j];
            pair[1] = args[0];
        }
    }
    return SWS_CONF_OK;
}

static char *
sws_http_core_keepalive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_msec_t                ms;

    if (clcf->keepalive_timeout != SWS_UNSET_MSEC) {
        return "is duplicate";
    }
    ms = sws_parse_time_ms(sws_conf_arg(cf, 1));
    if (ms == SWS_ERROR) {
        return "has an invalid value";
    }
    /* The second (header_timeout) argument of nginx is accepted and unused. */
    clcf->keepalive_timeout = ms;
    return SWS_CONF_OK;
}

static char *
sws_http_core_large_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_srv_conf_t *cscf = conf;
    sws_int_t                 n;
    ssize_t                   size;

    if (cscf->large_client_header_buffers != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    n = sws_atoi(sws_conf_arg(cf, 1)->data, sws_conf_arg(cf, 1)->len);
    size = sws_parse_size(sws_conf_arg(cf, 2));
    if (n <= 0 || size <= 0) {
        return "has an invalid value";
    }
    if (size < 128) {
        return "buffer size must be at least 128 bytes";
    }
    cscf->large_client_header_buffers = (sws_uint_t) n;
    cscf->large_client_header_buffer_size = (size_t) size;
    return SWS_CONF_OK;
}

/* error_page CODE... [=RESPONSE] URI */
static char *
sws_http_core_error_page(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_http_error_page_t    *ep;
    sws_str_t                *uri, *arg;
    sws_uint_t                i, n = sws_conf_nargs(cf), last = n - 1;
    sws_int_t                 overwrite = -1, code;
    sws_http_format_t        *fmt = NULL;
    const char               *err;

    if (clcf->error_pages == NULL) {
        clcf->error_pages = sws_array_create(cf->pool, 4, sizeof(sws_http_error_page_t));
        if (clcf->error_pages == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    uri = sws_conf_arg(cf, last);
    /* a URL: the error becomes a redirect to it, as nginx's */
    if (uri->len == 0
        || (uri->data[0] != '/' && uri->data[0] != '@'
            && !(uri->len > 7 && sws_strncasecmp(uri->data, (u_char *) "http://", 7) == 0)
            && !(uri->len > 8 && sws_strncasecmp(uri->data, (u_char *) "https://", 8) == 0)))
    {
        return "URI must start with \"/\", \"@\" (a named location), \"http://\" or "
               "\"https://\"";
    }
    if (memchr(uri->data, '$', uri->len)) {
        /* "https://$host$request_uri", the usual answer to a 497 */
        fmt = sws_http_format_compile(cf->pool, uri, SWS_HTTP_ESCAPE_NONE, &err);
        if (fmt == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
    }
    arg = sws_conf_arg(cf, last - 1);
    if (arg->len && arg->data[0] == '=') {
        last--;
        overwrite = arg->len > 1 ? sws_atoi(arg->data + 1, arg->len - 1) : 0;
        if (overwrite < 0 || (overwrite && (overwrite < 200 || overwrite > 599))) {
            return "has an invalid response code";
        }
    }
    if (last < 2) {
        return "needs at least one status code";
    }
    for (i = 1; i < last; i++) {
        arg = sws_conf_arg(cf, i);
        code = sws_atoi(arg->data, arg->len);
        if (code < 300 || code > 599) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "value \"%.*s\" must be between 300 and 599",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        ep = sws_array_push(clcf->error_pages);
        if (ep == NULL) {
            return SWS_CONF_ERROR;
        }
        ep->status = (sws_uint_t) code;
        ep->uri = *uri;
        ep->overwrite = overwrite;
        ep->uri_fmt = fmt;
        if (overwrite == -1 && code >= SWS_HTTP_SSL_CERT_ERROR && code <= SWS_HTTP_TO_HTTPS) {
            ep->overwrite = SWS_HTTP_BAD_REQUEST;    /* nginx's own codes go out as 400 */
        }
    }
    return SWS_CONF_OK;
}

/* open_file_cache max=N [inactive=TIME] | off */
static char *
sws_http_core_open_file_cache(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_http_ofc_conf_t      *ofc;
    sws_str_t                *arg, v;
    sws_uint_t                i, n = sws_conf_nargs(cf);
    sws_int_t                 max = 0;
    sws_msec_t                inactive = 60000;

    if (clcf->open_file_cache_set) {
        return "is duplicate";
    }
    clcf->open_file_cache_set = 1;
    arg = sws_conf_arg(cf, 1);
    if (n == 2 && sws_str_eq_cstr(arg, "off")) {
        clcf->open_file_cache = NULL;
        return SWS_CONF_OK;
    }
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (sws_conf_param(arg, "max=", &v)) {
            max = sws_atoi(v.data, v.len);
            if (max <= 0) {
                goto invalid;
            }
        } else if (sws_conf_param(arg, "inactive=", &v)) {
            inactive = sws_parse_time_ms(&v);
            if (inactive == SWS_ERROR) {
                goto invalid;
            }
        } else {
            goto invalid;
        }
    }
    if (max == 0) {
        return "must have the \"max\" parameter";
    }
    ofc = sws_palloc(cf->pool, sizeof(sws_http_ofc_conf_t));
    if (ofc == NULL) {
        return SWS_CONF_ERROR;
    }
    ofc->max = (sws_uint_t) max;
    ofc->inactive = inactive;
    clcf->open_file_cache = ofc;
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid \"open_file_cache\" parameter \"%.*s\"",
                       (int) arg->len, arg->data);
    return SWS_CONF_ERROR;
}

/* ---- SDK functions bound to configuration ---- */

/* Phase handlers: kept as registered; sws_http_phases.c compiles them. */
sws_int_t
sws_http_register_phase_handler(sws_conf_t *cf, const sws_http_phase_handler_t *h)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_phase_reg_t      *reg;
    const sws_module_t        *m;

    if (cmcf == NULL || h == NULL || h->handler == NULL
        || !sws_http_phase_known(h->phase) || h->phase == SWS_HTTP_FIND_LOCATION_PHASE || (h->active && h->module == NULL))
    {
        return SWS_ERROR;
    }
    reg = sws_array_push(&cmcf->phase_handlers);
    if (reg == NULL) {
        return SWS_ERROR;
    }
    reg->h = *h;
    m = h->module ? h->module : cmcf->postconf_module;
    reg->module_name = m && m->name ? m->name : "";
    reg->seq = cmcf->phase_handlers.nelts;
    return SWS_OK;
}

sws_int_t
sws_http_add_phase_handler(sws_conf_t *cf, sws_http_phase_t phase, sws_http_handler_pt handler)
{
    sws_http_phase_handler_t h = {
        .phase = phase, .order = SWS_HTTP_ORDER_DEFAULT, .handler = handler
    };

    return sws_http_register_phase_handler(cf, &h);
}

sws_int_t
sws_http_set_directory_handler(sws_conf_t *cf, sws_http_handler_pt handler)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);

    if (cmcf == NULL || (cmcf->directory_handler && cmcf->directory_handler != handler)) {
        sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0,
                      "a second module wants to list directories");
        return SWS_ERROR;
    }
    cmcf->directory_handler = handler;
    return SWS_OK;
}

sws_int_t
sws_http_set_content_handler(sws_conf_t *cf, sws_http_handler_pt handler, const char *owner)
{
    sws_http_core_loc_conf_t *clcf = sws_conf_http_loc_conf(cf, &sws_http_core_module);

    if (clcf == NULL) {
        return SWS_ERROR;
    }
    if (clcf->handler && clcf->handler != handler) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "\"%s\" conflicts with \"%s\": a location has at most one "
                           "content handler", owner, clcf->handler_owner);
        return SWS_ERROR;
    }
    clcf->handler = handler;
    clcf->handler_owner = owner;
    return SWS_OK;
}

sws_int_t
sws_http_conf_location(sws_conf_t *cf, sws_str_t *name, sws_uint_t *kind)
{
    sws_http_core_loc_conf_t *clcf = sws_conf_http_loc_conf(cf, &sws_http_core_module);

    if (clcf == NULL || sws_conf_context(cf) != SWS_HTTP_LOC_CONF || clcf->name.len == 0) {
        return SWS_ERROR;
    }
    *name = clcf->name;
    *kind = clcf->noname ? SWS_HTTP_LOC_NESTED : clcf->named ? SWS_HTTP_LOC_NAMED
            : clcf->regex ? SWS_HTTP_LOC_REGEX : clcf->exact ? SWS_HTTP_LOC_EXACT
            : SWS_HTTP_LOC_PREFIX;
    return SWS_OK;
}


/* ---- nested locations: if blocks (the rewrite module) ---- */

sws_http_location_t *
sws_http_conf_nested_location(sws_conf_t *cf)
{
    sws_http_conf_ctx_t       *parent = cf->ctx;
    sws_http_core_loc_conf_t  *pclcf, *clcf, **np;
    void                     **confs;

    if (parent == NULL || !(cf->cmd_type & (SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF))) {
        return NULL;
    }
    pclcf = parent->loc_conf[sws_http_core_module.index];
    if (pclcf->noname) {
        return NULL;                 /* no if inside an if, as nginx */
    }
    if (sws_http_create_confs(cf, &confs, 2) != SWS_OK) {
        return NULL;
    }
    clcf = confs[sws_http_core_module.index];
    clcf->loc_conf = confs;
    clcf->file = sws_conf_file(cf);
    clcf->line = sws_conf_line(cf);
    clcf->noname = 1;
    /* what maps the URI (alias) is the enclosing location's */
    clcf->name = pclcf->name;
    clcf->exact = pclcf->exact;
    clcf->regex = pclcf->regex;
    clcf->caseless = pclcf->caseless;

    if (pclcf->nested == NULL) {
        pclcf->nested = sws_array_create(cf->pool, 2, sizeof(sws_http_core_loc_conf_t *));
        if (pclcf->nested == NULL) {
            return NULL;
        }
    }
    np = sws_array_push(pclcf->nested);
    if (np == NULL) {
        return NULL;
    }
    *np = clcf;
    return (sws_http_location_t *) clcf;
}


void *
sws_http_location_conf(sws_http_location_t *loc, const sws_module_t *m)
{
    return ((sws_http_core_loc_conf_t *) loc)->loc_conf[m->index];
}


char *
sws_http_conf_parse_nested(sws_conf_t *cf, sws_http_location_t *loc)
{
    sws_http_conf_ctx_t  *parent = cf->ctx, *ctx;

    ctx = sws_pcalloc(cf->pool, sizeof(sws_http_conf_ctx_t));
    if (ctx == NULL) {
        return SWS_CONF_ERROR;
    }
    ctx->main_conf = parent->main_conf;
    ctx->srv_conf = parent->srv_conf;
    ctx->loc_conf = ((sws_http_core_loc_conf_t *) loc)->loc_conf;
    /* In a location, an if block takes the location's directives; in a
     * server, only those declared for SWS_HTTP_LIF_CONF (rewrite's). */
    return sws_conf_parse_block(cf, ctx, (cf->cmd_type & SWS_HTTP_LOC_CONF)
                                         ? SWS_HTTP_LOC_CONF : SWS_HTTP_LIF_CONF);
}


/*
 * disable_symlinks off | on | if_not_owner [from=PATH|from=$document_root]
 * (sws_http_open_path.c does the checks). from= only with on/if_not_owner.
 */
static char *
sws_http_core_disable_symlinks(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;
    sws_str_t                *arg = sws_conf_arg(cf, 1), from;

    if (clcf->disable_symlinks != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(arg, "off")) {
        clcf->disable_symlinks = SWS_HTTP_SYMLINKS_OFF;
    } else if (sws_str_eq_cstr(arg, "on")) {
        clcf->disable_symlinks = SWS_HTTP_SYMLINKS_ON;
    } else if (sws_str_eq_cstr(arg, "if_not_owner")) {
        clcf->disable_symlinks = SWS_HTTP_SYMLINKS_IF_NOT_OWNER;
    } else {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" "
                           "(off, on or if_not_owner)", (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    if (sws_conf_nargs(cf) == 2) {
        return SWS_CONF_OK;
    }
    arg = sws_conf_arg(cf, 2);
    if (arg->len <= 5 || memcmp(arg->data, "from=", 5) != 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\" "
                           "(from=PATH)", (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    if (clcf->disable_symlinks == SWS_HTTP_SYMLINKS_OFF) {
        return "takes from= only with \"on\" or \"if_not_owner\"";
    }
    from.data = arg->data + 5;
    from.len = arg->len - 5;
    if (sws_str_eq_cstr(&from, "$document_root")) {
        clcf->disable_symlinks_root = 1;
        return SWS_CONF_OK;
    }
    if (memchr(from.data, '$', from.len) != NULL || from.data[0] != '/') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\" (from= takes "
                           "an absolute path or $document_root)", (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    clcf->disable_symlinks_from = from;
    return SWS_CONF_OK;
}

/* internal: only an internal redirect (error_page, try_files, ...) reaches
 * this location; a client's request for it gets 404, as nginx. */
static char *
sws_http_core_internal(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;

    if (clcf->internal) {
        return "is duplicate";
    }
    clcf->internal = 1;
    return SWS_CONF_OK;
}


/* keepalive_disable none | BROWSER ...: msie6, safari (nginx's names) */
static char *
sws_http_core_set_keepalive_disable(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t  *clcf = conf;
    const sws_conf_enum_t     *e;
    sws_str_t                 *arg;
    sws_uint_t                 i;

    (void) cmd;
    if (clcf->keepalive_disable != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    clcf->keepalive_disable = 0;
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        arg = sws_conf_arg(cf, i);
        for (e = sws_http_core_keepalive_disable; e->name.len; e++) {
            if (arg->len == e->name.len && memcmp(arg->data, e->name.data, arg->len) == 0) {
                break;
            }
        }
        if (e->name.len == 0 || (e->value == 0 && sws_conf_nargs(cf) > 2)) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" (none, msie6, "
                               "safari)", (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        clcf->keepalive_disable |= e->value;
    }
    return SWS_CONF_OK;
}


/* error_log FILE [LEVEL] in http, server or location: the requests there
 * log to it (the connection's messages stay in the main one). */
static char *
sws_http_core_error_log(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t *clcf = conf;

    (void) cmd;
    return sws_core_error_log_directive(cf, &clcf->error_log);
}


/* The directives of nginx that change nothing here: their values are
 * checked as nginx checks them (on|off, a size, "NUMBER SIZE"). */
static char *
sws_http_core_checked_only(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t  *v = sws_conf_arg(cf, 1);

    (void) conf;
    if (cmd->type & SWS_CONF_FLAG) {
        return sws_str_eq_cstr(v, "on") || sws_str_eq_cstr(v, "off")
               ? SWS_CONF_OK : "takes \"on\" or \"off\"";
    }
    if (sws_conf_nargs(cf) == 3) {            /* output_buffers NUMBER SIZE */
        if (sws_atoi(v->data, v->len) <= 0) {
            return "has an invalid number of buffers";
        }
        v = sws_conf_arg(cf, 2);
    }
    return sws_parse_size(v) > 0 || (v->len == 1 && v->data[0] == '0')
           ? SWS_CONF_OK : "has an invalid size";
}

/* send_lowat: SO_SNDLOWAT, which Linux does not change; nginx says so and
 * goes on, so does this. */
static char *
sws_http_core_send_lowat(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char *rv = sws_http_core_checked_only(cf, cmd, conf);

    if (rv == SWS_CONF_OK) {
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "\"send_lowat\" is not supported, ignored");
    }
    return rv;
}
