/*
 * The charset module: nginx's charset directives, without recoding.
 *
 *   charset NAME | off;               http, server, location, if in location
 *   charset_types TYPE ... | *;       text/html always
 *   override_charset on | off;
 *   source_charset NAME;              the same as charset: nothing to recode
 *                                     (another is refused, as nginx's without
 *                                     a charset_map)
 *
 * A response whose Content-Type is one of charset_types gets
 * "; charset=NAME" (nginx's header filter), unless it names a charset
 * already (override_charset on replaces it) or is encoded
 * (Content-Encoding: an upstream's gzip) or a 301 or 302. charset_map (recoding tables)
 * is refused: say so rather than send bytes under a name they are not.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_uint_t         used;         /* a charset is set somewhere: the filter */
} sws_charset_main_conf_t;

typedef struct {
    sws_str_t          charset;      /* data NULL: unset; len 0: off */
    sws_array_t       *types;        /* sws_str_t, lower case; NULL: unset */
    sws_int_t          override;
    sws_str_t          source;
} sws_charset_loc_conf_t;

static char *sws_charset_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_charset_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_charset_map(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_charset_create_main_conf(sws_conf_t *cf);
static void *sws_charset_create_loc_conf(sws_conf_t *cf);
static char *sws_charset_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_charset_init(sws_conf_t *cf);

#define SWS_CHARSET_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_charset_commands[] = {
    { "charset", SWS_CHARSET_HTTP | SWS_HTTP_LIF_CONF | SWS_CONF_TAKE1, sws_charset_set,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_charset_loc_conf_t, charset), NULL },
    { "source_charset", SWS_CHARSET_HTTP | SWS_HTTP_LIF_CONF | SWS_CONF_TAKE1,
      sws_conf_set_str_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_charset_loc_conf_t, source), NULL },
    { "charset_types", SWS_CHARSET_HTTP | SWS_CONF_1MORE, sws_charset_types,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "override_charset", SWS_CHARSET_HTTP | SWS_HTTP_LIF_CONF | SWS_CONF_FLAG,
      sws_conf_set_flag_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_charset_loc_conf_t, override), NULL },
    { "charset_map", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE2, sws_charset_map,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "charset",
    .commands = sws_charset_commands,
    .create_main_conf = sws_charset_create_main_conf,
    .create_loc_conf = sws_charset_create_loc_conf,
    .merge_loc_conf = sws_charset_merge_loc_conf,
    .postconfiguration = sws_charset_init,
};

/* nginx's default charset_types (text/html is always one). */
static const char *const  sws_charset_default_types[] = {
    "text/html", "text/xml", "text/plain", "text/vnd.wap.wml", "application/javascript",
    "application/rss+xml", NULL
};

static sws_http_header_filter_pt  sws_charset_next_header_filter;


/* ---- the header filter --------------------------------------------- */

/* The media type of a Content-Type value: up to ';', spaces trimmed. */
static sws_str_t
sws_charset_media_type(const sws_str_t *ct)
{
    sws_str_t  t = *ct;
    u_char    *semi = memchr(t.data, ';', t.len);

    if (semi != NULL) {
        t.len = (size_t) (semi - t.data);
    }
    while (t.len && (t.data[t.len - 1] == ' ' || t.data[t.len - 1] == '\t')) {
        t.len--;
    }
    return t;
}

static int
sws_charset_has_param(const sws_str_t *ct)
{
    size_t  i;

    for (i = 0; i + 8 <= ct->len; i++) {
        if (sws_strncasecmp(ct->data + i, (u_char *) "charset=", 8) == 0) {
            return 1;
        }
    }
    return 0;
}

static int
sws_charset_type_listed(const sws_charset_loc_conf_t *lcf, const sws_str_t *type)
{
    const sws_str_t  *t = lcf->types->elts;
    sws_uint_t        i;

    for (i = 0; i < lcf->types->nelts; i++) {
        if ((t[i].len == 1 && t[i].data[0] == '*')
            || (t[i].len == type->len && sws_strncasecmp(t[i].data, type->data, type->len) == 0))
        {
            return 1;
        }
    }
    return 0;
}

static sws_int_t
sws_charset_header_filter(sws_http_request_t *r)
{
    const sws_charset_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t               *ct = sws_http_content_type(r);
    sws_str_t                      type, *v;
    u_char                        *p;

    /* not on a 301 or 302, as nginx (old browsers took the redirect's
     * charset for the next page's) */
    if (lcf == NULL || lcf->charset.len == 0 || ct == NULL || ct->len == 0
        || sws_http_status(r) == SWS_HTTP_MOVED_PERMANENTLY
        || sws_http_status(r) == SWS_HTTP_MOVED_TEMPORARILY
        || sws_http_header_out(r, "content-encoding", 16) != NULL)
    {
        return sws_charset_next_header_filter(r);
    }
    if (sws_charset_has_param(ct) && !lcf->override) {
        return sws_charset_next_header_filter(r);
    }
    type = sws_charset_media_type(ct);
    if (!sws_charset_type_listed(lcf, &type)) {
        return sws_charset_next_header_filter(r);
    }
    v = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + type.len + sizeof("; charset=") - 1
                                     + lcf->charset.len);
    if (v == NULL) {
        return SWS_ERROR;
    }
    v->data = (u_char *) (v + 1);
    p = sws_cpymem(v->data, type.data, type.len);
    p = sws_cpymem(p, "; charset=", sizeof("; charset=") - 1);
    p = sws_cpymem(p, lcf->charset.data, lcf->charset.len);
    v->len = (size_t) (p - v->data);
    sws_http_set_content_type(r, v);
    return sws_charset_next_header_filter(r);
}

/* Only where a charset is set: fixed responses elsewhere keep the core's
 * one-write path. */
static int
sws_charset_acts(sws_http_request_t *r)
{
    const sws_charset_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf != NULL && lcf->charset.len != 0;
}

static sws_int_t
sws_charset_init(sws_conf_t *cf)
{
    sws_charset_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    /* Without a charset anywhere the filter stays out of the chain. */
    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    sws_charset_next_header_filter = sws_http_insert_header_filter(sws_charset_header_filter);
    return sws_http_filters_act_when(cf, sws_charset_acts);
}


/* ---- configuration ------------------------------------------------- */

/* charset NAME | off; */
static char *
sws_charset_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_charset_loc_conf_t   *lcf = conf;
    sws_charset_main_conf_t  *mcf;
    sws_str_t                *v = sws_conf_arg(cf, 1);
    size_t                    i;

    (void) cmd;
    if (lcf->charset.data != NULL) {
        return "is duplicate";
    }
    if (sws_str_eq_cstr(v, "off")) {
        lcf->charset.data = (u_char *) "";
        lcf->charset.len = 0;
        return SWS_CONF_OK;
    }
    /* a token (RFC 9110 8.3.2): no variables, no quotes, no separators */
    for (i = 0; i < v->len; i++) {
        if (v->data[i] <= 0x20 || v->data[i] >= 0x7f || strchr("\"$;,\\()<>@:/[]?={}",
                                                                  v->data[i]) != NULL)
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid charset name \"%.*s\"",
                               (int) v->len, v->data);
            return SWS_CONF_ERROR;
        }
    }
    if (v->len == 0) {
        return "has an empty charset name";
    }
    lcf->charset.len = v->len;
    lcf->charset.data = (u_char *) sws_pstrdup(sws_conf_pool(cf), v);
    mcf = sws_conf_http_main_conf(cf, &sws_module);
    if (mcf != NULL) {
        mcf->used = 1;
    }
    return lcf->charset.data ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static sws_int_t
sws_charset_push(sws_pool_t *pool, sws_array_t *a, const u_char *data, size_t len)
{
    sws_str_t  *t = sws_array_push(a);

    if (t == NULL) {
        return SWS_ERROR;
    }
    t->len = len;
    t->data = sws_pnalloc(pool, len + 1);
    if (t->data == NULL) {
        return SWS_ERROR;
    }
    sws_strlow(t->data, (u_char *) data, len);
    t->data[len] = '\0';
    return SWS_OK;
}

/* charset_types TYPE ... | *; (text/html always) */
static char *
sws_charset_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_charset_loc_conf_t  *lcf = conf;
    sws_pool_t              *pool = sws_conf_pool(cf);
    sws_str_t               *v;
    sws_uint_t               i;

    (void) cmd;
    if (lcf->types != NULL) {
        return "is duplicate";
    }
    lcf->types = sws_array_create(pool, sws_conf_nargs(cf), sizeof(sws_str_t));
    if (lcf->types == NULL
        || sws_charset_push(pool, lcf->types, (u_char *) "text/html", 9) != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        if (sws_charset_push(pool, lcf->types, v->data, v->len) != SWS_OK) {
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

static char *
sws_charset_map(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cf; (void) cmd; (void) conf;
    return "is not supported: scalwsd does not recode responses (use UTF-8 sources)";
}

static void *
sws_charset_create_main_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_charset_main_conf_t));
}

static void *
sws_charset_create_loc_conf(sws_conf_t *cf)
{
    sws_charset_loc_conf_t  *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*lcf));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->override = SWS_UNSET;
    return lcf;
}

static char *
sws_charset_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_charset_loc_conf_t  *prev = parent, *conf = child;
    sws_pool_t              *pool = sws_conf_pool(cf);
    sws_uint_t               i;

    if (conf->charset.data == NULL) {
        conf->charset = prev->charset;
    }
    if (conf->source.data == NULL) {
        conf->source = prev->source;
    }
    sws_conf_merge_value(conf->override, prev->override, 0);
    /* as nginx without a charset_map between them: recoding is needed and
     * cannot be done, so the responses would be sent under a wrong name */
    if (conf->charset.len && conf->source.len
        && (conf->charset.len != conf->source.len
            || sws_strncasecmp(conf->charset.data, conf->source.data, conf->source.len) != 0))
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "no recoding from source_charset \"%.*s\" "
                           "to charset \"%.*s\" (charset_map is not supported)",
                           (int) conf->source.len, conf->source.data,
                           (int) conf->charset.len, conf->charset.data);
        return SWS_CONF_ERROR;
    }
    if (conf->types == NULL) {
        conf->types = prev->types;
    }
    if (conf->types == NULL) {
        /* the top level: nginx's defaults, shared below it */
        conf->types = sws_array_create(pool, 8, sizeof(sws_str_t));
        if (conf->types == NULL) {
            return SWS_CONF_ERROR;
        }
        for (i = 0; sws_charset_default_types[i]; i++) {
            if (sws_charset_push(pool, conf->types, (u_char *) sws_charset_default_types[i],
                                 strlen(sws_charset_default_types[i])) != SWS_OK)
            {
                return SWS_CONF_ERROR;
            }
        }
        prev->types = conf->types;
    }
    return SWS_CONF_OK;
}
