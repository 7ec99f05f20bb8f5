/*
 * sub_filter: nginx's ngx_http_sub_filter_module.
 *
 *   sub_filter STRING REPLACEMENT;     both may hold variables; several
 *                                      per level, inherited only by a
 *                                      level that has none
 *   sub_filter_once on | off;          each string replaced once (on)
 *   sub_filter_types TYPE ... | *;     text/html always
 *   sub_filter_last_modified on | off; keep Last-Modified (ETag made weak)
 *
 * The header filter takes a response whose type is listed and whose
 * length is not 0, whatever its status and its Content-Encoding (as
 * nginx: an encoded body is searched as it is, see docs/sub-filter.md);
 * it loses its Content-Length, and its Last-Modified and ETag unless
 * sub_filter_last_modified is on (then the ETag becomes weak). The body
 * goes through the core's body transform with the streaming matcher of
 * sws_sub_filter_match.c as its coder: bounded output buffers, the
 * producer held back while the client is slow, no copy of the whole body.
 */
#include <scalws/scalws.h>
#include "sws_sub_filter.h"

/* Output buffers of a response: nginx has no directive for them. */
#define SWS_SUB_BUFS      8
#define SWS_SUB_BUF_SIZE  8192

typedef struct {
    sws_http_format_t  *match;      /* NULL: static (pat) */
    sws_http_format_t  *value;
    sws_str_t           pat;        /* lower case */
} sws_sub_pair_t;

typedef struct {
    sws_array_t        *pairs;      /* sws_sub_pair_t; NULL: unset */
    sws_sub_pattern_t  *pats;       /* of static pairs, built at merge */
    size_t              max_len;
    sws_int_t           once;
    sws_int_t           last_modified;
    sws_array_t        *types;      /* sws_str_t, lower case; NULL: unset */
} sws_sub_loc_conf_t;

typedef struct {
    sws_http_transform_t  *transform;
    sws_sub_state_t       *state;
    sws_sub_set_t          set;
    sws_sub_pair_t        *pairs;
    sws_uint_t            *pair_of;   /* a pattern's pair (dynamic) or NULL */
    sws_str_t             *values;    /* evaluated at the first match */
    sws_http_request_t    *r;
} sws_sub_ctx_t;

typedef struct {
    sws_uint_t          used;       /* a sub_filter somewhere: the filters */
} sws_sub_main_conf_t;

static char *sws_sub_filter(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_sub_create_main_conf(sws_conf_t *cf);
static char *sws_sub_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_sub_create_loc_conf(sws_conf_t *cf);
static char *sws_sub_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_sub_init(sws_conf_t *cf);

#define SWS_SUB_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_sub_commands[] = {
    { "sub_filter", SWS_SUB_HTTP | SWS_CONF_TAKE2, sws_sub_filter,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "sub_filter_types", SWS_SUB_HTTP | SWS_CONF_1MORE, sws_sub_types,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "sub_filter_once", SWS_SUB_HTTP | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_sub_loc_conf_t, once), NULL },
    { "sub_filter_last_modified", SWS_SUB_HTTP | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_sub_loc_conf_t, last_modified), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "sub_filter",
    .commands = sws_sub_commands,
    .create_main_conf = sws_sub_create_main_conf,
    .create_loc_conf = sws_sub_create_loc_conf,
    .merge_loc_conf = sws_sub_merge_loc_conf,
    .postconfiguration = sws_sub_init,
};

static sws_http_header_filter_pt  sws_sub_next_header_filter;
static sws_http_body_filter_pt    sws_sub_next_body_filter;


/* ---- the filters ----------------------------------------------------- */

static int
sws_sub_type_ok(const sws_sub_loc_conf_t *lcf, const sws_str_t *ct)
{
    const sws_str_t  *t = lcf->types->elts;
    sws_uint_t        i;
    size_t            len;

    for (i = 0; i < lcf->types->nelts; i++) {
        if (t[i].len == 1 && t[i].data[0] == '*') {
            return 1;                   /* any, even none (nginx) */
        }
    }
    for (len = 0; len < ct->len && ct->data[len] != ';' && ct->data[len] != ' '; len++) {
        /* the media type without its parameters */
    }
    for (i = 0; len && i < lcf->types->nelts; i++) {
        if (t[i].len == len && sws_strncasecmp(t[i].data, ct->data, len) == 0) {
            return 1;
        }
    }
    return 0;
}


static sws_int_t
sws_sub_value(void *data, sws_uint_t i, sws_str_t *value)
{
    sws_sub_ctx_t   *ctx = data;
    sws_sub_pair_t  *pair;
    sws_str_t       *v = &ctx->values[i];

    if (v->data == NULL) {
        pair = &ctx->pairs[ctx->pair_of ? ctx->pair_of[i] : i];
        if (sws_http_format_string(pair->value, ctx->r, sws_http_pool(ctx->r), 0, NULL, 0, v)
            != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    *value = *v;
    return SWS_OK;
}


static sws_int_t
sws_sub_run(sws_http_request_t *r, void *data, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    sws_sub_ctx_t  *ctx = data;

    (void) r;
    return sws_sub_match_run(ctx->state, in, in_end, out, out_end, mode);
}


/* The strings of this request: those with variables evaluated (lower
 * case; an empty one is left out, as nginx). SWS_DECLINED: none left. */
static sws_int_t
sws_sub_dynamic_set(sws_http_request_t *r, const sws_sub_loc_conf_t *lcf, sws_sub_ctx_t *ctx)
{
    sws_pool_t         *pool = sws_http_pool(r);
    sws_sub_pattern_t  *pats;
    sws_uint_t          i, n = 0;
    sws_str_t           m;

    pats = sws_palloc(pool, lcf->pairs->nelts * sizeof(sws_sub_pattern_t));
    ctx->pair_of = sws_palloc(pool, lcf->pairs->nelts * sizeof(sws_uint_t));
    if (pats == NULL || ctx->pair_of == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < lcf->pairs->nelts; i++) {
        if (ctx->pairs[i].match == NULL) {
            m = ctx->pairs[i].pat;
        } else {
            if (sws_http_format_string(ctx->pairs[i].match, r, pool, 0, NULL, 0, &m) != SWS_OK) {
                return SWS_ERROR;
            }
            if (m.len == 0) {
                continue;
            }
            sws_strlow(m.data, m.data, m.len);
        }
        pats[n].data = m.data;
        pats[n].len = m.len;
        ctx->pair_of[n++] = i;
        if (m.len > ctx->set.max_len) {
            ctx->set.max_len = m.len;
        }
    }
    ctx->set.pats = pats;
    ctx->set.n = n;
    return n ? SWS_OK : SWS_DECLINED;
}


static sws_int_t
sws_sub_header_filter(sws_http_request_t *r)
{
    const sws_sub_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_pool_t                *pool;
    sws_sub_ctx_t             *ctx;
    sws_int_t                  rc;

    if (lcf->pairs == NULL || sws_http_content_length(r) == 0
        || !sws_sub_type_ok(lcf, sws_http_content_type(r)))
    {
        return sws_sub_next_header_filter(r);
    }

    pool = sws_http_pool(r);
    ctx = sws_pcalloc(pool, sizeof(sws_sub_ctx_t));
    if (ctx == NULL) {
        return SWS_ERROR;
    }
    ctx->r = r;
    ctx->pairs = lcf->pairs->elts;
    ctx->set.once = lcf->once ? 1 : 0;
    if (lcf->pats) {
        ctx->set.pats = lcf->pats;
        ctx->set.n = lcf->pairs->nelts;
        ctx->set.max_len = lcf->max_len;
    } else {
        rc = sws_sub_dynamic_set(r, lcf, ctx);
        if (rc == SWS_DECLINED) {
            return sws_sub_next_header_filter(r);
        }
        if (rc != SWS_OK) {
            return SWS_ERROR;
        }
    }

    if (!sws_http_header_only(r) && sws_http_method(r) != SWS_HTTP_HEAD) {
        ctx->values = sws_pcalloc(pool, ctx->set.n * sizeof(sws_str_t));
        ctx->state = sws_pcalloc(pool, sws_sub_state_size(&ctx->set));
        if (ctx->values == NULL || ctx->state == NULL) {
            return SWS_ERROR;
        }
        sws_sub_state_init(ctx->state, &ctx->set, sws_sub_value, ctx);
        ctx->transform = sws_http_transform_create(r, SWS_SUB_BUFS, SWS_SUB_BUF_SIZE,
                                                   sws_sub_run, ctx);
        if (ctx->transform == NULL) {
            return SWS_ERROR;
        }
        sws_http_set_ctx(r, &sws_module, ctx);
    }

    sws_http_set_content_length(r, -1);
    if (!lcf->last_modified) {
        sws_http_set_last_modified(r, -1);
        sws_http_set_etag(r, NULL);
    } else if (sws_http_weak_etag(r) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_sub_next_header_filter(r);
}


static sws_int_t
sws_sub_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_sub_ctx_t  *ctx = sws_http_get_ctx(r, &sws_module);

    if (ctx == NULL) {
        return sws_sub_next_body_filter(r, in);
    }
    return sws_http_transform_filter(r, ctx->transform, in, sws_sub_next_body_filter);
}


/* A fixed response (return TEXT) keeps its one write where no sub_filter is. */
static int
sws_sub_acts(sws_http_request_t *r)
{
    const sws_sub_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf->pairs != NULL;
}


static sws_int_t
sws_sub_init(sws_conf_t *cf)
{
    sws_sub_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    /* Without a sub_filter anywhere the filters stay out of the chain. */
    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    sws_sub_next_header_filter = sws_http_insert_header_filter(sws_sub_header_filter);
    sws_sub_next_body_filter = sws_http_insert_body_filter(sws_sub_body_filter);
    return sws_http_filters_act_when(cf, sws_sub_acts);
}


/* ---- configuration --------------------------------------------------- */

static sws_http_format_t *
sws_sub_compile(sws_conf_t *cf, const sws_str_t *text)
{
    sws_http_format_t  *f;
    const char         *err = NULL;

    f = sws_http_format_compile(sws_conf_pool(cf), text, SWS_HTTP_ESCAPE_NONE, &err);
    if (f == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err ? err : "out of memory");
    }
    return f;
}


/* sub_filter STRING REPLACEMENT; */
static char *
sws_sub_filter(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_sub_loc_conf_t  *lcf = conf;
    sws_pool_t          *pool = sws_conf_pool(cf);
    sws_str_t           *match = sws_conf_arg(cf, 1);
    sws_sub_pair_t      *pair;
    sws_sub_main_conf_t *mcf = sws_conf_http_main_conf(cf, &sws_module);

    (void) cmd;
    if (mcf != NULL) {
        mcf->used = 1;
    }
    if (match->len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "empty search pattern");
        return SWS_CONF_ERROR;
    }
    if (lcf->pairs == NULL) {
        lcf->pairs = sws_array_create(pool, 4, sizeof(sws_sub_pair_t));
        if (lcf->pairs == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    pair = sws_array_push(lcf->pairs);
    if (pair == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(pair, sizeof(*pair));
    pair->match = sws_sub_compile(cf, match);
    pair->value = sws_sub_compile(cf, sws_conf_arg(cf, 2));
    if (pair->match == NULL || pair->value == NULL) {
        return SWS_CONF_ERROR;
    }
    if (sws_http_format_is_static(pair->match)) {
        pair->match = NULL;
        pair->pat.len = match->len;
        pair->pat.data = sws_pnalloc(pool, match->len);
        if (pair->pat.data == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_strlow(pair->pat.data, match->data, match->len);
    }
    return SWS_CONF_OK;
}


static sws_int_t
sws_sub_push_type(sws_pool_t *pool, sws_array_t *a, const u_char *data, size_t len)
{
    sws_str_t  *t = sws_array_push(a);

    if (t == NULL || (t->data = sws_pnalloc(pool, len)) == NULL) {
        return SWS_ERROR;
    }
    sws_strlow(t->data, (u_char *) data, len);
    t->len = len;
    return SWS_OK;
}


/* sub_filter_types TYPE ... | *; (text/html always) */
static char *
sws_sub_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_sub_loc_conf_t  *lcf = conf;
    sws_pool_t          *pool = sws_conf_pool(cf);
    sws_str_t           *v;
    sws_uint_t           i;

    (void) cmd;
    if (lcf->types == NULL) {
        lcf->types = sws_array_create(pool, sws_conf_nargs(cf), sizeof(sws_str_t));
        if (lcf->types == NULL
            || sws_sub_push_type(pool, lcf->types, (u_char *) "text/html", 9) != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
    }
    /* a second sub_filter_types adds to the first, as nginx's does */
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        if (sws_sub_push_type(pool, lcf->types, v->data, v->len) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}


static void *
sws_sub_create_main_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_sub_main_conf_t));
}


static void *
sws_sub_create_loc_conf(sws_conf_t *cf)
{
    sws_sub_loc_conf_t  *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*lcf));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->once = SWS_UNSET;
    lcf->last_modified = SWS_UNSET;
    return lcf;
}


/* The patterns of a level whose strings have no variables, once. */
static char *
sws_sub_static_set(sws_conf_t *cf, sws_sub_loc_conf_t *conf)
{
    sws_sub_pair_t  *pair;
    sws_uint_t       i;

    if (conf->pairs == NULL || conf->pats != NULL) {
        return SWS_CONF_OK;
    }
    pair = conf->pairs->elts;
    for (i = 0; i < conf->pairs->nelts; i++) {
        if (pair[i].match != NULL) {
            return SWS_CONF_OK;         /* evaluated per request */
        }
    }
    conf->pats = sws_palloc(sws_conf_pool(cf), conf->pairs->nelts * sizeof(sws_sub_pattern_t));
    if (conf->pats == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 0; i < conf->pairs->nelts; i++) {
        conf->pats[i].data = pair[i].pat.data;
        conf->pats[i].len = pair[i].pat.len;
        if (pair[i].pat.len > conf->max_len) {
            conf->max_len = pair[i].pat.len;
        }
    }
    return SWS_CONF_OK;
}


static char *
sws_sub_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_sub_loc_conf_t  *prev = parent, *conf = child;
    sws_pool_t          *pool = sws_conf_pool(cf);

    sws_conf_merge_value(conf->once, prev->once, 1);
    sws_conf_merge_value(conf->last_modified, prev->last_modified, 0);

    if (conf->pairs == NULL) {
        if (sws_sub_static_set(cf, prev) != SWS_CONF_OK) {
            return SWS_CONF_ERROR;
        }
        conf->pairs = prev->pairs;
        conf->pats = prev->pats;
        conf->max_len = prev->max_len;
    } else if (sws_sub_static_set(cf, conf) != SWS_CONF_OK) {
        return SWS_CONF_ERROR;
    }

    if (conf->types == NULL) {
        conf->types = prev->types;
    }
    if (conf->types == NULL) {
        /* the top level: text/html, shared below it */
        conf->types = sws_array_create(pool, 1, sizeof(sws_str_t));
        if (conf->types == NULL
            || sws_sub_push_type(pool, conf->types, (u_char *) "text/html", 9) != SWS_OK)
        {
            return SWS_CONF_ERROR;
        }
        prev->types = conf->types;
    }
    return SWS_CONF_OK;
}
