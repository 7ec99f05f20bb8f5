/*
 * The cache module: directives, configuration, variables, the descriptor.
 *
 * The directives are nginx's, under each prefix of a protocol module on
 * the upstream framework: proxy_cache*, and fastcgi_cache*, uwsgi_cache*
 * and scgi_cache* for the CGI-style protocols.
 * They all write the same location configuration (the framework's cache
 * hooks do not care which protocol fetched the response); a prefix only
 * says what the default key is. SWS_CACHE_COMMANDS(prefix) is the whole
 * table of one prefix, so another protocol is one line below.
 *
 *   proxy_cache_path PATH keys_zone=NAME:SIZE [...];   (sws_cache_path.c)
 *   proxy_cache NAME|off;
 *   proxy_cache_key STRING;            default $scheme$proxy_host$request_uri
 *   proxy_cache_valid [CODE ...|any] TIME;
 *   proxy_cache_methods GET|HEAD|POST ...;
 *   proxy_cache_min_uses N;
 *   proxy_cache_bypass STRING ...;     proxy_no_cache STRING ...;
 *   proxy_ignore_headers Cache-Control|Expires|Set-Cookie|Vary|X-Accel-* ...;
 *   proxy_cache_revalidate on|off;
 *   proxy_cache_lock on|off;  proxy_cache_lock_timeout T;  proxy_cache_lock_age T;
 *   proxy_cache_use_stale error|timeout|invalid_header|updating|http_500|http_502|
 *                         http_503|http_504|off ...;
 *   proxy_cache_background_update on|off;   (the stale entry now, the update after)
 *   proxy_cache_partial on|off;             (206 parts stored and combined, ranges
 *                                            answered from them: sws_cache_partial.c)
 *   proxy_cache_request_directives on|off;  (the request's max-age, min-fresh,
 *                                            max-stale, no-cache: RFC 9111 5.2.1)
 *   proxy_cache_convert_head on|off;        (proxy only: a HEAD miss asks GET)
 *   proxy_cache_purge ADDRESS[/BITS] ... | all;   (sws_cache_purge.c)
 *   proxy_cache_heuristic off | N% [max=TIME];   (RFC 9111 4.2.2; default 10% max=1d)
 *   proxy_cache_targeted_fields FIELD ... | off;  (RFC 9213's target list; default
 *                                                 CDN-Cache-Control)
 *   proxy_cache_targeted_hide on|off;             (those fields not sent on; off)
 *
 * Variables: $upstream_cache_status (MISS HIT EXPIRED STALE UPDATING
 * REVALIDATED BYPASS), $upstream_cache_source (memory, file: where a
 * response from the cache came from).
 */
#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include "sws_cache.h"

static sws_int_t sws_cache_postconfiguration(sws_conf_t *cf);
static sws_int_t sws_cache_init_master(sws_cycle_t *cycle);
static sws_int_t sws_cache_init_worker(sws_cycle_t *cycle);
static void *sws_cache_create_main_conf(sws_conf_t *cf);
static void *sws_cache_create_loc_conf(sws_conf_t *cf);
static char *sws_cache_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_cache_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_key_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_valid_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_methods_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_formats_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_ignore_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_stale_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_prefixed(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_heuristic_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_cache_targets_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_cache_prefix_t  sws_cache_proxy = { "proxy", "$scheme$proxy_host$request_uri" };
/* nginx has no default fastcgi_cache_key (nor uwsgi_, scgi_); the
 * request's own host is the closest to proxy's. */
static const sws_cache_prefix_t  sws_cache_fastcgi = { "fastcgi", "$scheme$host$request_uri" };
static const sws_cache_prefix_t  sws_cache_uwsgi = { "uwsgi", "$scheme$host$request_uri" };
static const sws_cache_prefix_t  sws_cache_scgi = { "scgi", "$scheme$host$request_uri" };

/* RFC 9213's target list when none is given: the CDN's field */
static sws_str_t    sws_cache_cdn_cc = sws_string("cdn-cache-control");
static sws_array_t  sws_cache_default_targets = { &sws_cache_cdn_cc, 1, sizeof(sws_str_t), 1,
                                                   NULL };

#define ALL       (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define LOC_OFF   SWS_HTTP_LOC_CONF_OFFSET
#define OFF(f)    offsetof(sws_cache_loc_conf_t, f)

/* The typed setters are wrapped (sws_cache_prefixed) so that every
 * directive records its prefix: cmd->post is the prefix, the setter is
 * found by the directive's suffix. */
#define SWS_CACHE_COMMANDS(P, pre)                                                        \
    { P "_cache_path", SWS_HTTP_MAIN_CONF | SWS_CONF_2MORE, sws_cache_path_directive,     \
      SWS_HTTP_MAIN_CONF_OFFSET, 0, &pre },                                               \
    { P "_cache", ALL | SWS_CONF_TAKE1, sws_cache_directive, LOC_OFF, 0, &pre },          \
    { P "_cache_key", ALL | SWS_CONF_TAKE1, sws_cache_key_directive, LOC_OFF, 0, &pre },  \
    { P "_cache_valid", ALL | SWS_CONF_1MORE, sws_cache_valid_directive, LOC_OFF, 0,      \
      &pre },                                                                             \
    { P "_cache_methods", ALL | SWS_CONF_1MORE, sws_cache_methods_directive, LOC_OFF, 0,  \
      &pre },                                                                             \
    { P "_cache_min_uses", ALL | SWS_CONF_TAKE1, sws_cache_prefixed, LOC_OFF,             \
      OFF(min_uses), &pre },                                                              \
    { P "_cache_bypass", ALL | SWS_CONF_1MORE, sws_cache_formats_directive, LOC_OFF,      \
      OFF(bypass), &pre },                                                                \
    { P "_no_cache", ALL | SWS_CONF_1MORE, sws_cache_formats_directive, LOC_OFF,          \
      OFF(no_cache), &pre },                                                              \
    { P "_ignore_headers", ALL | SWS_CONF_1MORE, sws_cache_ignore_directive, LOC_OFF, 0,  \
      &pre },                                                                             \
    { P "_cache_revalidate", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,            \
      OFF(revalidate), &pre },                                                            \
    { P "_cache_lock", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF, OFF(lock),       \
      &pre },                                                                             \
    { P "_cache_lock_timeout", ALL | SWS_CONF_TAKE1, sws_cache_prefixed, LOC_OFF,         \
      OFF(lock_timeout), &pre },                                                          \
    { P "_cache_lock_age", ALL | SWS_CONF_TAKE1, sws_cache_prefixed, LOC_OFF,             \
      OFF(lock_age), &pre },                                                              \
    { P "_cache_use_stale", ALL | SWS_CONF_1MORE, sws_cache_stale_directive, LOC_OFF, 0,  \
      &pre },                                                                             \
    { P "_cache_background_update", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,     \
      OFF(background_update), &pre },                                                     \
    { P "_cache_partial", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,               \
      OFF(partial), &pre },                                                               \
    { P "_cache_request_directives", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,    \
      OFF(request_directives), &pre },                                                    \
    { P "_cache_purge", SWS_HTTP_LOC_CONF | SWS_CONF_1MORE, sws_cache_purge_directive,    \
      LOC_OFF, 0, &pre },                                                                 \
    { P "_cache_heuristic", ALL | SWS_CONF_TAKE12, sws_cache_heuristic_directive,         \
      LOC_OFF, 0, &pre },                                                                 \
    { P "_cache_targeted_fields", ALL | SWS_CONF_1MORE, sws_cache_targets_directive,      \
      LOC_OFF, 0, &pre },                                                                 \
    { P "_cache_targeted_hide", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,         \
      OFF(targeted_hide), &pre }

static const sws_command_t sws_cache_commands[] = {
    SWS_CACHE_COMMANDS("proxy", sws_cache_proxy),
    /* proxy's alone: FastCGI's method is a parameter (REQUEST_METHOD) */
    { "proxy_cache_convert_head", ALL | SWS_CONF_FLAG, sws_cache_prefixed, LOC_OFF,
      OFF(convert_head), &sws_cache_proxy },
    SWS_CACHE_COMMANDS("fastcgi", sws_cache_fastcgi),
    SWS_CACHE_COMMANDS("uwsgi", sws_cache_uwsgi),
    SWS_CACHE_COMMANDS("scgi", sws_cache_scgi),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "cache",
    .commands = sws_cache_commands,
    .create_main_conf = sws_cache_create_main_conf,
    .create_loc_conf = sws_cache_create_loc_conf,
    .merge_loc_conf = sws_cache_merge_loc_conf,
    .postconfiguration = sws_cache_postconfiguration,
    .init_master = sws_cache_init_master,
    .init_worker = sws_cache_init_worker,
};

/* The paths of the configuration last read, for init_master (which sees
 * only the cycle): set anew by each postconfiguration. */
static sws_array_t  *sws_cache_paths;

const sws_http_upstream_cache_t sws_cache_hooks = {
    .name = "cache",
    .lookup = sws_cache_lookup,
    .store_header = sws_cache_store_header,
    .store_body = sws_cache_store_body,
    .store_end = sws_cache_store_end,
    .not_modified = sws_cache_not_modified,
    .failed = sws_cache_failed,
    .hit = sws_cache_hit,
};

static sws_int_t
sws_cache_postconfiguration(sws_conf_t *cf)
{
    static const sws_str_t  server_port = sws_string("$server_port");
    sws_cache_main_conf_t  *cmcf = sws_conf_http_main_conf(cf, &sws_module);
    const char             *err;

    sws_cache_paths = cmcf ? cmcf->paths : NULL;
    if (sws_cache_paths && sws_cache_paths->nelts) {
        /* the invalidation's origin check of a request without Host */
        cmcf->server_port = sws_http_format_compile(sws_conf_pool(cf), &server_port,
                                                    SWS_HTTP_ESCAPE_NONE, &err);
        if (cmcf->server_port == NULL) {
            return SWS_ERROR;
        }
    }
    if (sws_cache_stats_init(cf) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_cache_purge_init(cf);
}

/* The workers and the helpers write under PATH: theirs, when they change
 * user. */
static sws_int_t
sws_cache_init_master(sws_cycle_t *cycle)
{
    sws_cache_path_t **pp;
    sws_int_t          uid, gid;
    sws_uint_t         i;

    (void) cycle;
    if (sws_cache_paths == NULL) {
        return SWS_OK;
    }
    uid = sws_cycle_worker_user(cycle, &gid);
    if (uid == -1) {
        return SWS_OK;
    }
    pp = sws_cache_paths->elts;
    for (i = 0; i < sws_cache_paths->nelts; i++) {
        if (chown((char *) pp[i]->path.data, (uid_t) uid, (gid_t) gid) == -1) {
            sws_log_error(SWS_LOG_EMERG, NULL, errno, "chown(\"%s\") failed",
                          pp[i]->path.data);
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* ---- variables ---- */

static void
sws_cache_var_status(sws_http_request_t *r, void *data, sws_str_t *v)
{
    static const char *const names[] = { "", "MISS", "HIT", "EXPIRED", "STALE", "UPDATING",
                                         "REVALIDATED", "BYPASS" };
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    v->len = 0;
    if (ctx && ctx->status < sws_nelems(names)) {
        v->data = (u_char *) names[ctx->status];
        v->len = strlen(names[ctx->status]);
    }
}

static void
sws_cache_var_source(sws_http_request_t *r, void *data, sws_str_t *v)
{
    sws_cache_ctx_t *ctx = sws_http_get_ctx(r, &sws_module);

    (void) data;
    v->len = 0;
    if (ctx && ctx->source && (ctx->status == SWS_CACHE_HIT || ctx->status == SWS_CACHE_STALE
                               || ctx->status == SWS_CACHE_UPDATING
                               || ctx->status == SWS_CACHE_REVALIDATED))
    {
        v->data = (u_char *) ctx->source;
        v->len = strlen(ctx->source);
    }
}

/* ---- configuration ---- */

static void *
sws_cache_create_main_conf(sws_conf_t *cf)
{
    if (sws_http_variable_add(cf, "upstream_cache_status", sws_cache_var_status, NULL)
        != SWS_OK
        || sws_http_variable_add(cf, "upstream_cache_source", sws_cache_var_source, NULL)
           != SWS_OK)
    {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_cache_main_conf_t));
}

static void *
sws_cache_create_loc_conf(sws_conf_t *cf)
{
    sws_cache_loc_conf_t *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_cache_loc_conf_t));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->cache_set = SWS_UNSET;
    lcf->methods = SWS_UNSET_UINT;
    lcf->min_uses = SWS_UNSET;
    lcf->ignore = SWS_UNSET_UINT;
    lcf->revalidate = SWS_UNSET;
    lcf->lock = SWS_UNSET;
    lcf->lock_timeout = SWS_UNSET_MSEC;
    lcf->lock_age = SWS_UNSET_MSEC;
    lcf->use_stale = SWS_UNSET_UINT;
    lcf->background_update = SWS_UNSET;
    lcf->partial = SWS_UNSET;
    lcf->request_directives = SWS_UNSET;
    lcf->convert_head = SWS_UNSET;
    lcf->heuristic = SWS_UNSET;
    lcf->heuristic_max = SWS_UNSET;
    lcf->targeted_hide = SWS_UNSET;
    return lcf;
}

static char *
sws_cache_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_cache_loc_conf_t  *prev = parent, *conf = child;
    sws_str_t              key;
    const char            *err;

    if (conf->prefix == NULL) {
        conf->prefix = prev->prefix ? prev->prefix : &sws_cache_proxy;
    }
    if (conf->cache_set == SWS_UNSET) {
        conf->cache_set = prev->cache_set;
        conf->cache_name = prev->cache_name;
        conf->main = prev->main;
        conf->path = prev->path;
    }
    if (conf->cache_set == 1 && conf->path == NULL) {
        conf->path = conf->main ? sws_cache_path_find(conf->main, &conf->cache_name) : NULL;
        if (conf->path == NULL) {
            return "names a cache that no proxy_cache_path defines";
        }
    }
    if (conf->key == NULL) {
        conf->key = prev->key;
    }
    if (conf->key == NULL && conf->path) {
        key.data = (u_char *) conf->prefix->default_key;
        key.len = strlen(conf->prefix->default_key);
        conf->key = sws_http_format_compile(sws_conf_pool(cf), &key, SWS_HTTP_ESCAPE_NONE, &err);
        if (conf->key == NULL) {
            return "cannot compile the default cache key";
        }
    }
    if (conf->valid == NULL) {
        conf->valid = prev->valid;
    }
    sws_conf_merge_uint_value(conf->methods, prev->methods, SWS_HTTP_GET | SWS_HTTP_HEAD);
    sws_conf_merge_value(conf->min_uses, prev->min_uses, 1);
    if (conf->bypass == NULL) {
        conf->bypass = prev->bypass;
    }
    if (conf->no_cache == NULL) {
        conf->no_cache = prev->no_cache;
    }
    sws_conf_merge_uint_value(conf->ignore, prev->ignore, 0);
    /* on: a validation is conditional when the entry has a validator
     * (RFC 9111 4.3.1); nginx's default is off */
    sws_conf_merge_value(conf->revalidate, prev->revalidate, 1);
    sws_conf_merge_value(conf->lock, prev->lock, 0);
    sws_conf_merge_msec_value(conf->lock_timeout, prev->lock_timeout, 5000);
    sws_conf_merge_msec_value(conf->lock_age, prev->lock_age, 5000);
    sws_conf_merge_uint_value(conf->use_stale, prev->use_stale, SWS_CACHE_STALE_OFF);
    sws_conf_merge_value(conf->background_update, prev->background_update, 0);
    sws_conf_merge_value(conf->partial, prev->partial, 1);
    sws_conf_merge_value(conf->request_directives, prev->request_directives, 1);
    sws_conf_merge_value(conf->convert_head, prev->convert_head, 1);
    if (conf->heuristic == SWS_UNSET) {
        conf->heuristic = prev->heuristic;
        conf->heuristic_max = prev->heuristic_max;
    }
    if (conf->heuristic == SWS_UNSET) {
        conf->heuristic = 10;          /* RFC 9111 4.2.2's typical 10 % */
        conf->heuristic_max = 86400;
    }
    if (conf->prefix != &sws_cache_proxy) {
        conf->convert_head = 0;        /* FastCGI's method is its REQUEST_METHOD */
    }
    if (conf->purge_allow == NULL) {
        conf->purge_allow = prev->purge_allow;
    }
    if (conf->targets == NULL) {
        conf->targets = prev->targets ? prev->targets : &sws_cache_default_targets;
    }
    sws_conf_merge_value(conf->targeted_hide, prev->targeted_hide, 0);
    return SWS_CONF_OK;
}

static void
sws_cache_set_prefix(const sws_command_t *cmd, sws_cache_loc_conf_t *lcf)
{
    lcf->prefix = cmd->post;
}

/* proxy_cache_targeted_fields FIELD ... | off: RFC 9213's target list, the
 * first the most specific */
static char *
sws_cache_targets_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t  *lcf = conf;
    sws_str_t             *a, *t;
    sws_uint_t             i, j, n = sws_conf_nargs(cf);

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->targets) {
        return "is duplicate";
    }
    lcf->targets = sws_array_create(sws_conf_pool(cf), n, sizeof(sws_str_t));
    if (lcf->targets == NULL) {
        return SWS_CONF_ERROR;
    }
    if (n == 2 && sws_str_eq_cstr(sws_conf_arg(cf, 1), "off")) {
        return SWS_CONF_OK;            /* none: Cache-Control alone, as nginx */
    }
    for (i = 1; i < n; i++) {
        a = sws_conf_arg(cf, i);
        for (j = 0; j < a->len; j++) {
            if (!(isalnum(a->data[j]) || strchr("!#$%&'*+-.^_`|~", a->data[j]))) {
                break;
            }
        }
        if (a->len == 0 || j < a->len || sws_str_caseeq_cstr(a, "off")
            || sws_str_caseeq_cstr(a, "cache-control"))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: \"%.*s\" is not a targeted field "
                               "name (or \"off\" alone)", cmd->name, (int) a->len, a->data);
            return SWS_CONF_ERROR;
        }
        t = sws_array_push(lcf->targets);
        if (t == NULL) {
            return SWS_CONF_ERROR;
        }
        t->len = a->len;
        t->data = sws_pnalloc(sws_conf_pool(cf), a->len);
        if (t->data == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_strlow(t->data, a->data, a->len);
    }
    return SWS_CONF_OK;
}

/* The typed directives, by the suffix after the prefix. */
static char *
sws_cache_prefixed(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t  *lcf = conf;
    sws_command_t          c = *cmd;
    const char            *suffix = strchr(cmd->name, '_');

    sws_cache_set_prefix(cmd, lcf);
    c.post = NULL;
    if (strcmp(suffix, "_cache_min_uses") == 0) {
        return sws_conf_set_num_slot(cf, &c, conf);
    }
    if (strcmp(suffix, "_cache_lock_timeout") == 0 || strcmp(suffix, "_cache_lock_age") == 0) {
        return sws_conf_set_msec_slot(cf, &c, conf);
    }
    return sws_conf_set_flag_slot(cf, &c, conf);
}

/* proxy_cache NAME|off */
static char *
sws_cache_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t *lcf = conf;
    sws_str_t            *v = sws_conf_arg(cf, 1);

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->cache_set != SWS_UNSET) {
        return "is duplicate";
    }
    lcf->cache_set = sws_str_eq_cstr(v, "off") ? 0 : 1;
    if (lcf->cache_set) {
        lcf->cache_name = *v;
        lcf->main = sws_conf_http_main_conf(cf, &sws_module);
    }
    /* The hooks look at the request's own location conf, so data is not used. */
    if (sws_http_upstream_cache_set(cf, lcf->cache_set ? &sws_cache_hooks : NULL, lcf)
        != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
sws_cache_key_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t *lcf = conf;
    const char           *err;

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->key) {
        return "is duplicate";
    }
    lcf->key = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                       SWS_HTTP_ESCAPE_NONE, &err);
    if (lcf->key == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: %s", cmd->name, err);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

/* proxy_cache_valid [CODE ...|any] TIME */
/* proxy_cache_heuristic off | N% [max=TIME] */
static char *
sws_cache_heuristic_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t  *lcf = conf;
    sws_str_t             *a = sws_conf_arg(cf, 1), m;
    sws_int_t              n;
    sws_msec_t             ms;

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->heuristic != SWS_UNSET) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(a, "off")) {
        if (sws_conf_nargs(cf) != 2) {
            return "takes nothing after \"off\"";
        }
        lcf->heuristic = 0;
        lcf->heuristic_max = 0;
        return SWS_CONF_OK;
    }
    n = a->len > 1 && a->data[a->len - 1] == '%' ? sws_atoi(a->data, a->len - 1) : SWS_ERROR;
    if (n <= 0 || n > 100) {
        return "takes \"off\" or a percentage from 1% to 100%";
    }
    lcf->heuristic = n;
    lcf->heuristic_max = 86400;
    if (sws_conf_nargs(cf) == 3) {
        a = sws_conf_arg(cf, 2);
        if (a->len <= 4 || memcmp(a->data, "max=", 4) != 0) {
            return "takes \"max=TIME\" after the percentage";
        }
        m.data = a->data + 4;
        m.len = a->len - 4;
        ms = sws_parse_time_ms(&m);
        if (ms == (sws_msec_t) SWS_ERROR || ms < 1000) {
            return "has an invalid max= time";
        }
        lcf->heuristic_max = (time_t) (ms / 1000);
    }
    return SWS_CONF_OK;
}

static char *
sws_cache_valid_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const sws_uint_t  defaults[] = { 200, 301, 302 };
    sws_cache_loc_conf_t    *lcf = conf;
    sws_cache_valid_t       *v;
    sws_uint_t               i, n = sws_conf_nargs(cf);
    sws_msec_t               ms;
    sws_int_t                code;
    sws_str_t               *a;

    sws_cache_set_prefix(cmd, lcf);
    ms = sws_parse_time_ms(sws_conf_arg(cf, n - 1));
    if (ms == SWS_ERROR) {
        return "has an invalid time";
    }
    if (lcf->valid == NULL) {
        lcf->valid = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_cache_valid_t));
        if (lcf->valid == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    if (n == 2) {
        for (i = 0; i < sws_nelems(defaults); i++) {
            v = sws_array_push(lcf->valid);
            if (v == NULL) {
                return SWS_CONF_ERROR;
            }
            v->status = defaults[i];
            v->valid = (time_t) (ms / 1000);
        }
        return SWS_CONF_OK;
    }
    for (i = 1; i < n - 1; i++) {
        a = sws_conf_arg(cf, i);
        if (sws_str_eq_cstr(a, "any")) {
            code = 0;
        } else {
            code = sws_atoi(a->data, a->len);
            if (code < 200 || code > 599) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: invalid status \"%.*s\"",
                                   cmd->name, (int) a->len, a->data);
                return SWS_CONF_ERROR;
            }
        }
        v = sws_array_push(lcf->valid);
        if (v == NULL) {
            return SWS_CONF_ERROR;
        }
        v->status = (sws_uint_t) code;
        v->valid = (time_t) (ms / 1000);
    }
    return SWS_CONF_OK;
}

static char *
sws_cache_methods_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t *lcf = conf;
    sws_uint_t            i, m = 0;
    sws_str_t            *a;

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->methods != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        a = sws_conf_arg(cf, i);
        if (sws_str_eq_cstr(a, "GET")) {
            m |= SWS_HTTP_GET;
        } else if (sws_str_eq_cstr(a, "HEAD")) {
            m |= SWS_HTTP_HEAD;
        } else if (sws_str_eq_cstr(a, "POST")) {
            m |= SWS_HTTP_POST;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: invalid method \"%.*s\" (GET, HEAD "
                               "or POST)", cmd->name, (int) a->len, a->data);
            return SWS_CONF_ERROR;
        }
    }
    lcf->methods = m | SWS_HTTP_GET | SWS_HTTP_HEAD;    /* as nginx: always */
    return SWS_CONF_OK;
}

/* proxy_cache_bypass / proxy_no_cache STRING ... */
static char *
sws_cache_formats_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_array_t        **list = (sws_array_t **) ((u_char *) conf + cmd->offset);
    sws_http_format_t  **f;
    sws_uint_t           i;
    const char          *err;

    sws_cache_set_prefix(cmd, conf);
    if (*list == NULL) {
        *list = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_http_format_t *));
        if (*list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        f = sws_array_push(*list);
        if (f == NULL) {
            return SWS_CONF_ERROR;
        }
        *f = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, i),
                                     SWS_HTTP_ESCAPE_NONE, &err);
        if (*f == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: %s", cmd->name, err);
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

static char *
sws_cache_ignore_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_loc_conf_t *lcf = conf;
    sws_uint_t            i, m = 0;
    sws_str_t            *a;

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->ignore != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        a = sws_conf_arg(cf, i);
        if (sws_str_caseeq_cstr(a, "Cache-Control")) {
            m |= SWS_CACHE_IGN_CC;
        } else if (sws_str_caseeq_cstr(a, "Expires")) {
            m |= SWS_CACHE_IGN_EXPIRES;
        } else if (sws_str_caseeq_cstr(a, "Set-Cookie")) {
            m |= SWS_CACHE_IGN_SET_COOKIE;
        } else if (sws_str_caseeq_cstr(a, "Vary")) {
            m |= SWS_CACHE_IGN_VARY;
        } else if (a->len > 8 && sws_strncasecmp(a->data, (u_char *) "X-Accel-", 8) == 0) {
            /* nginx's X-Accel-* fields mean nothing here: nothing to ignore */
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: unknown header \"%.*s\" (Cache-"
                               "Control, Expires, Set-Cookie, Vary)", cmd->name, (int) a->len,
                               a->data);
            return SWS_CONF_ERROR;
        }
    }
    lcf->ignore = m;
    return SWS_CONF_OK;
}

static char *
sws_cache_stale_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    static const struct {
        const char  *name;
        sws_uint_t   flag;
    } names[] = {
        { "error", SWS_CACHE_STALE_ERROR }, { "timeout", SWS_CACHE_STALE_TIMEOUT },
        { "invalid_header", SWS_CACHE_STALE_ERROR }, { "updating", SWS_CACHE_STALE_UPDATING },
        { "http_500", SWS_CACHE_STALE_500 }, { "http_502", SWS_CACHE_STALE_502 },
        { "http_503", SWS_CACHE_STALE_503 }, { "http_504", SWS_CACHE_STALE_504 },
        { "off", SWS_CACHE_STALE_OFF },
    };
    sws_cache_loc_conf_t *lcf = conf;
    sws_uint_t            i, j, m = 0;
    sws_str_t            *a;

    sws_cache_set_prefix(cmd, lcf);
    if (lcf->use_stale != SWS_UNSET_UINT) {
        return "is duplicate";
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        a = sws_conf_arg(cf, i);
        for (j = 0; j < sws_nelems(names); j++) {
            if (sws_str_eq_cstr(a, names[j].name)) {
                m |= names[j].flag;
                break;
            }
        }
        if (j == sws_nelems(names)) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: unknown condition \"%.*s\"",
                               cmd->name, (int) a->len, a->data);
            return SWS_CONF_ERROR;
        }
    }
    if ((m & SWS_CACHE_STALE_OFF) && m != SWS_CACHE_STALE_OFF) {
        return "cannot combine \"off\" with other conditions";
    }
    lcf->use_stale = m;
    return SWS_CONF_OK;
}

/* This worker's row of the zones' counters, found once: the request's end
 * adds to it (sws_cache_lookup.c) without a call. */
sws_uint_t  sws_cache_stat_slot;

static sws_int_t
sws_cache_init_worker(sws_cycle_t *cycle)
{
    (void) cycle;
    sws_cache_stat_slot = sws_status_slot();
    return SWS_OK;
}
