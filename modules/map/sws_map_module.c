/*
 * map SOURCE $var { default V; KEY V; ~REGEX V; ~*REGEX V; hostnames;
 *                   volatile; include FILE; '' V; }
 * map_hash_max_size N; map_hash_bucket_size N;   (accepted: sized alone)
 *
 * As nginx: SOURCE is text with variables; exact keys are compared
 * ignoring case (a hash), then with "hostnames" the wildcard keys (longest
 * first: "*.x.com"/".x.com", then "x.*"), then the regexes in order (their
 * captures are $1.. and named groups, usable in the value), then default
 * (empty without one). A value may hold variables. "\KEY" is the literal
 * KEY (for keys that read as a keyword: "\default", "\~x"). include is
 * expanded by the configuration reader. The variable is evaluated when
 * first read in a request, and kept (unless "volatile").
 */
#include "sws_map.h"

typedef struct {
    sws_regex_t         *re;
    sws_map_value_t     *value;
} sws_map_regex_t;

typedef struct {
    sws_http_format_t   *source;
    sws_hash_t          *exact;
    sws_hostnames_t     *wildcards;  /* hostnames: "*.x.com", ".x.com", "x.*" */
    sws_array_t         *regexes;    /* sws_map_regex_t */
    sws_map_value_t     *deflt;
    unsigned             hostnames:1;
    unsigned             volatile_:1;
} sws_map_t;

typedef struct {
    sws_int_t            hash_max_size;
    sws_int_t            hash_bucket_size;
} sws_map_main_conf_t;

static char *sws_map_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_map_create_main_conf(sws_conf_t *cf);

static const sws_command_t sws_map_commands[] = {
    { "map", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE2, sws_map_block,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "split_clients", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE2,
      sws_split_clients_block, SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "map_hash_max_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1, sws_conf_set_num_slot,
      SWS_HTTP_MAIN_CONF_OFFSET, offsetof(sws_map_main_conf_t, hash_max_size), NULL },
    { "map_hash_bucket_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1, sws_conf_set_num_slot,
      SWS_HTTP_MAIN_CONF_OFFSET, offsetof(sws_map_main_conf_t, hash_bucket_size), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "map",
    .commands = sws_map_commands,
    .create_main_conf = sws_map_create_main_conf,
};


static void *
sws_map_create_main_conf(sws_conf_t *cf)
{
    sws_map_main_conf_t  *mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*mcf));

    if (mcf == NULL) {
        return NULL;
    }
    mcf->hash_max_size = SWS_UNSET;
    mcf->hash_bucket_size = SWS_UNSET;
    return mcf;
}


/* ---- values ---- */

sws_map_value_t *
sws_map_value_compile(sws_conf_t *cf, const sws_str_t *text)
{
    sws_map_value_t  *v = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_map_value_t));
    const char       *err = NULL;

    if (v == NULL) {
        return NULL;
    }
    if (memchr(text->data, '$', text->len) == NULL) {
        v->text.len = text->len;
        v->text.data = (u_char *) sws_pstrdup(sws_conf_pool(cf), text);
        return v->text.data ? v : NULL;
    }
    v->fmt = sws_http_format_compile(sws_conf_pool(cf), text, SWS_HTTP_ESCAPE_NONE, &err);
    if (v->fmt == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return NULL;
    }
    return v;
}

static sws_int_t
sws_map_render(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out)
{
    return sws_http_format_string(f, r, sws_http_pool(r), 1, NULL, 0, out);
}

sws_int_t
sws_map_value_get(sws_http_request_t *r, const sws_map_value_t *v, sws_str_t *out)
{
    if (v->fmt == NULL) {
        *out = v->text;
        return SWS_OK;
    }
    return sws_map_render(r, v->fmt, out);
}

const char *
sws_map_var_name(sws_conf_t *cf, const sws_str_t *arg)
{
    char  *name;

    if (arg->len < 2 || arg->data[0] != '$') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid variable name \"%.*s\": it must "
                           "start with \"$\"", (int) arg->len, arg->data);
        return NULL;
    }
    name = sws_pnalloc(sws_conf_pool(cf), arg->len);
    if (name == NULL) {
        return NULL;
    }
    memcpy(name, arg->data + 1, arg->len - 1);
    name[arg->len - 1] = '\0';
    return name;
}


/* ---- the variable ---- */

static void
sws_map_variable(sws_http_request_t *r, void *data, sws_str_t *value)
{
    sws_map_t              *map = data;
    sws_map_value_t        *v = NULL;
    const sws_map_regex_t  *re;
    sws_str_t               src, low;
    sws_uint_t              i;
    sws_int_t               rc;

    value->len = 0;
    value->data = NULL;
    /* in the request's pool: a regex's captures point into it */
    if (sws_map_render(r, map->source, &src) != SWS_OK) {
        return;
    }
    if (map->hostnames && src.len && src.data[src.len - 1] == '.') {
        src.len--;
    }
    if (map->exact) {
        v = sws_hash_find(map->exact, src.data, src.len);
    }
    if (v == NULL && map->wildcards) {
        low.data = sws_pnalloc(sws_http_pool(r), src.len + 1);
        if (low.data == NULL) {
            return;
        }
        sws_strlow(low.data, src.data, src.len);
        low.len = src.len;
        v = sws_hostnames_find(map->wildcards, low.data, low.len);
    }
    if (v == NULL && map->regexes) {
        re = map->regexes->elts;
        for (i = 0; i < map->regexes->nelts; i++) {
            rc = sws_http_regex_exec(r, re[i].re, &src);
            if (rc == SWS_ERROR) {
                return;                      /* logged: empty */
            }
            if (rc != SWS_DECLINED) {
                v = re[i].value;
                break;
            }
        }
    }
    if (v == NULL) {
        v = map->deflt;
    }
    if (v != NULL && sws_map_value_get(r, v, value) != SWS_OK) {
        value->len = 0;
    }
}


/* ---- the block ---- */

static char *
sws_map_entry(sws_conf_t *cf, void *data)
{
    sws_map_t        *map = data;
    sws_str_t        *key = sws_conf_arg(cf, 0), k;
    sws_map_value_t  *v;
    sws_map_regex_t  *mr;
    sws_uint_t        n = sws_conf_nargs(cf);
    sws_int_t         rc;
    const char       *err;
    int               caseless;

    if (n == 1 && sws_str_eq_cstr(key, "hostnames")) {
        map->hostnames = 1;
        return SWS_CONF_OK;
    }
    if (n == 1 && sws_str_eq_cstr(key, "volatile")) {
        map->volatile_ = 1;
        return SWS_CONF_OK;
    }
    if (n != 2) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid number of the map parameters "
                           "in \"%.*s\": a key and a value", (int) key->len, key->data);
        return SWS_CONF_ERROR;
    }
    v = sws_map_value_compile(cf, sws_conf_arg(cf, 1));
    if (v == NULL) {
        return SWS_CONF_ERROR;
    }

    if (sws_str_eq_cstr(key, "default")) {
        if (map->deflt) {
            return "duplicate default map parameter";
        }
        map->deflt = v;
        return SWS_CONF_OK;
    }

    if (key->len && key->data[0] == '~') {
        caseless = key->len > 1 && key->data[1] == '*';
        k.data = key->data + 1 + caseless;
        k.len = key->len - 1 - caseless;
        if (map->regexes == NULL) {
            map->regexes = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_map_regex_t));
            if (map->regexes == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        mr = sws_array_push(map->regexes);
        if (mr == NULL) {
            return SWS_CONF_ERROR;
        }
        mr->value = v;
        mr->re = sws_regex_compile(sws_conf_pool(cf), &k, caseless ? SWS_REGEX_CASELESS : 0,
                                   &err);
        if (mr->re == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
            return SWS_CONF_ERROR;
        }
        return sws_http_regex_variables(cf, mr->re) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
    }

    k = *key;
    if (k.len && k.data[0] == '\\') {
        k.data++;                             /* "\default": the literal key */
        k.len--;
    }
    if (map->hostnames && sws_hostnames_kind(&k) == SWS_HOSTNAME_WILDCARD) {
        if (map->wildcards == NULL) {
            map->wildcards = sws_hostnames_create(sws_conf_pool(cf));
            if (map->wildcards == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        rc = sws_hostnames_add(map->wildcards, &k, v);
    } else {
        if (map->hostnames && k.len && k.data[k.len - 1] == '.') {
            k.len--;
        }
        if (map->exact == NULL) {
            map->exact = sws_hash_create(sws_conf_pool(cf), 16, 1);
            if (map->exact == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        rc = sws_hash_add(map->exact, &k, v);
    }
    if (rc == SWS_BUSY) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "conflicting parameter \"%.*s\"",
                           (int) key->len, key->data);
        return SWS_CONF_ERROR;
    }
    return rc == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static char *
sws_map_block(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_map_t    *map;
    const char   *name, *err = NULL;
    char         *rv;

    (void) cmd;
    (void) conf;
    map = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_map_t));
    if (map == NULL) {
        return SWS_CONF_ERROR;
    }
    name = sws_map_var_name(cf, sws_conf_arg(cf, 2));
    if (name == NULL) {
        return SWS_CONF_ERROR;
    }
    map->source = sws_http_format_compile(sws_conf_pool(cf), sws_conf_arg(cf, 1),
                                          SWS_HTTP_ESCAPE_NONE, &err);
    if (map->source == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_CONF_ERROR;
    }
    rv = sws_conf_parse_entries(cf, sws_map_entry, map);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    if (sws_http_variable_add_cached(cf, name, sws_map_variable, map,
                                     map->volatile_ ? SWS_HTTP_VAR_VOLATILE : 0) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
