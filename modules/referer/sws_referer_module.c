/*
 * valid_referers none | blocked | server_names | HOST[/URI] | ~REGEX ...;
 * referer_hash_max_size N; referer_hash_bucket_size N;  (checked only)
 * $invalid_referer: empty when the request's Referer is valid, "1" if not.
 *
 * As nginx's referer module. The Referer is valid when it is missing and
 * "none" was given; when it does not start with "http://" or "https://"
 * (any case; shorter than "http://i.ru" counts as such) and "blocked" was
 * given; when its host (lower-cased, up to ':' or '/', at most 256 bytes)
 * is a listed host, or a name of the server ("server_names"), and the
 * rest from the first '/' starts with the entry's URI part (case
 * sensitive); or when a regex (caseless; a server_name regex too) matches
 * the Referer without its scheme. Hosts may be "*.x.com" (names under
 * x.com), ".x.com" (x.com too) or "www.x.*"; the longest wildcard wins.
 * The directive adds to the location's list; a location without one takes
 * its parent's whole list. With no valid_referers, every request is valid.
 */
#include "sws_referer.h"

extern sws_module_t sws_module;

typedef struct {
    sws_hash_t       *exact;      /* host -> sws_str_t * (its URI part) */
    sws_hostnames_t  *wildcards;  /* the same, "*.x.com", ".x.com", "www.x.*" */
    sws_array_t  *regexes;        /* sws_regex_t * */
    unsigned      set:1;          /* valid_referers at this level */
    unsigned      none:1;
    unsigned      blocked:1;
    unsigned      server_names:1;
} sws_referer_conf_t;

static char *sws_referer_valid(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_referer_create_main_conf(sws_conf_t *cf);
static void *sws_referer_create_loc_conf(sws_conf_t *cf);
static char *sws_referer_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);

static const sws_command_t sws_referer_commands[] = {
    { "valid_referers", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_1MORE,
      sws_referer_valid, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "referer_hash_max_size", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "referer_hash_bucket_size", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1,
      sws_conf_set_hash_size_slot, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "referer",
    .commands = sws_referer_commands,
    .create_main_conf = sws_referer_create_main_conf,
    .create_loc_conf = sws_referer_create_loc_conf,
    .merge_loc_conf = sws_referer_merge_loc_conf,
};

static sws_str_t  sws_referer_invalid = sws_string("1");


/* ---- hosts ---- */

/* The URI part of the listed host, NULL if it is not listed. */
static sws_str_t *
sws_referer_host_find(const sws_referer_conf_t *rcf, const u_char *host, size_t len)
{
    sws_str_t  *uri = NULL;

    if (rcf->exact) {
        uri = sws_hash_find(rcf->exact, host, len);
    }
    if (uri == NULL && rcf->wildcards) {
        uri = sws_hostnames_find(rcf->wildcards, host, len);
    }
    return uri;
}


/* ---- the variable ---- */

static int
sws_referer_is_valid(sws_http_request_t *r, const sws_referer_conf_t *rcf)
{
    const sws_str_t     *ref = sws_http_header_in(r, "referer", 7);
    sws_regex_t *const  *re;
    sws_referer_parts_t  parts;
    sws_str_t           *uri;
    sws_uint_t           n;
    sws_int_t            rc;

    if (ref == NULL) {
        return rcf->none;
    }
    rc = sws_referer_parse(ref->data, ref->len, &parts);
    if (rc != SWS_OK) {
        return rc == SWS_DECLINED ? rcf->blocked : 0;
    }
    uri = sws_referer_host_find(rcf, parts.host.data, parts.host.len);
    if (uri != NULL) {
        /* a listed host: its URI part must start the path; no regex is
         * tried then */
        return uri->len == 0
               || (parts.path.len >= uri->len
                   && memcmp(parts.path.data, uri->data, uri->len) == 0);
    }
    if (rcf->regexes) {
        re = rcf->regexes->elts;
        for (n = 0; n < rcf->regexes->nelts; n++) {
            if (sws_regex_exec(re[n], parts.rest.data, parts.rest.len, NULL, 0, NULL) > 0) {
                return 1;
            }
        }
    }
    return rcf->server_names && sws_http_server_name_match(r, &parts.host, &parts.rest);
}

static void
sws_referer_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    const sws_referer_conf_t  *rcf = sws_http_loc_conf(r, &sws_module);

    (void) data;
    if (!rcf->set || sws_referer_is_valid(r, rcf)) {
        value->len = 0;
        value->data = NULL;
        return;
    }
    *value = sws_referer_invalid;
}


/* ---- configuration ---- */

static void *
sws_referer_create_main_conf(sws_conf_t *cf)
{
    /* $invalid_referer exists in every configuration, as nginx's */
    if (sws_http_variable_add(cf, "invalid_referer", sws_referer_variable, NULL) != SWS_OK) {
        return NULL;
    }
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_uint_t));
}

static void *
sws_referer_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_referer_conf_t));
}

static char *
sws_referer_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    const sws_referer_conf_t  *prev = parent;
    sws_referer_conf_t        *conf = child;

    if (!conf->set) {
        *conf = *prev;                /* the whole list, or none */
        return SWS_CONF_OK;
    }
    if ((conf->none || conf->blocked) && !conf->server_names && conf->exact == NULL
        && conf->wildcards == NULL)
    {
        /* nginx's check: a regex alone does not count */
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "the \"none\" or \"blocked\" referers "
                           "are specified in the \"valid_referers\" directive without "
                           "any valid referer");
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

/* HOST or HOST/URI */
static char *
sws_referer_add_host(sws_conf_t *cf, sws_referer_conf_t *rcf, const sws_str_t *arg)
{
    sws_str_t  host = *arg, *uri;
    u_char    *slash = memchr(arg->data, '/', arg->len);
    sws_int_t  rc;
    int        kind;

    uri = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_str_t));
    if (uri == NULL) {
        return SWS_CONF_ERROR;
    }
    if (slash != NULL) {
        host.len = (size_t) (slash - arg->data);
        uri->len = arg->len - host.len;
        uri->data = slash;            /* the configuration's text lives on */
    }
    kind = host.len ? sws_hostnames_kind(&host) : SWS_HOSTNAME_INVALID;
    if (kind == SWS_HOSTNAME_INVALID) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid hostname or wildcard \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    if (kind == SWS_HOSTNAME_WILDCARD) {
        if (rcf->wildcards == NULL) {
            rcf->wildcards = sws_hostnames_create(sws_conf_pool(cf));
            if (rcf->wildcards == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        rc = sws_hostnames_add(rcf->wildcards, &host, uri);
    } else {
        if (rcf->exact == NULL) {
            rcf->exact = sws_hash_create(sws_conf_pool(cf), 16, 1);
            if (rcf->exact == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        rc = sws_hash_add(rcf->exact, &host, uri);
    }
    if (rc == SWS_BUSY) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "conflicting parameter \"%.*s\"",
                           (int) host.len, host.data);
        return SWS_CONF_ERROR;
    }
    return rc == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static char *
sws_referer_add_regex(sws_conf_t *cf, sws_referer_conf_t *rcf, const sws_str_t *arg)
{
    sws_str_t     pattern = { arg->len - 1, arg->data + 1 };
    sws_regex_t **rp;
    const char   *err;

    if (pattern.len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "empty regex in \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    if (rcf->regexes == NULL) {
        rcf->regexes = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_regex_t *));
        if (rcf->regexes == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    rp = sws_array_push(rcf->regexes);
    if (rp == NULL) {
        return SWS_CONF_ERROR;
    }
    *rp = sws_regex_compile(sws_conf_pool(cf), &pattern, SWS_REGEX_CASELESS, &err);
    if (*rp == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

static char *
sws_referer_valid(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_referer_conf_t  *rcf = conf;
    sws_str_t           *arg;
    sws_uint_t           i, n = sws_conf_nargs(cf);
    char                *rv;

    (void) cmd;
    rcf->set = 1;
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (arg->len == 0) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid referer \"\"");
            return SWS_CONF_ERROR;
        }
        if (sws_str_eq_cstr(arg, "none")) {
            rcf->none = 1;
            continue;
        }
        if (sws_str_eq_cstr(arg, "blocked")) {
            rcf->blocked = 1;
            continue;
        }
        if (sws_str_eq_cstr(arg, "server_names")) {
            rcf->server_names = 1;
            continue;
        }
        rv = arg->data[0] == '~' ? sws_referer_add_regex(cf, rcf, arg)
                                 : sws_referer_add_host(cf, rcf, arg);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
    }
    return SWS_CONF_OK;
}
