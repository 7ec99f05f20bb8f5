/*
 * The charset module: nginx's charset, source_charset and charset_types.
 *
 *   charset NAME | off;            "; charset=NAME" on the Content-Type of
 *                                  responses of charset_types (default off)
 *   source_charset NAME;           the charset the responses are in
 *   charset_types TYPE ... | *;    the MIME types (text/html always)
 *
 * A response whose Content-Type names a charset already keeps it. Recoding
 * (charset_map) is not done: a source_charset other than charset is a
 * configuration error, as nginx's is without a charset_map between them.
 * The header filter is inserted only when some charset is on, so that
 * configurations without one keep the core's fast paths.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_str_t     charset;        /* empty: off */
    sws_str_t     source;         /* source_charset; empty: unset */
    sws_array_t  *types;          /* sws_str_t, lower case; NULL: the default */
    unsigned      any_type:1;     /* charset_types * */
    unsigned      charset_set:1;
} sws_charset_loc_conf_t;

typedef struct {
    sws_uint_t    used;           /* some "charset" is not off */
} sws_charset_main_conf_t;

static char *sws_charset_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_charset_set_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_charset_create_main_conf(sws_conf_t *cf);
static void *sws_charset_create_loc_conf(sws_conf_t *cf);
static char *sws_charset_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_charset_init(sws_conf_t *cf);

#define SWS_CHARSET_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_charset_commands[] = {
    { "charset", SWS_CHARSET_CTX | SWS_HTTP_LIF_CONF | SWS_CONF_TAKE1, sws_charset_set,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "source_charset", SWS_CHARSET_CTX | SWS_HTTP_LIF_CONF | SWS_CONF_TAKE1,
      sws_conf_set_str_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_charset_loc_conf_t, source), NULL },
    { "charset_types", SWS_CHARSET_CTX | SWS_CONF_1MORE, sws_charset_set_types,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
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

/* nginx's default charset_types (text/html is always one) */
static const char *const  sws_charset_default_types[] = {
    "text/html", "text/xml", "text/plain", "text/vnd.wap.wml", "application/javascript",
    "application/rss+xml", NULL
};

static sws_http_header_filter_pt  sws_charset_next_header_filter;


/* ---- the header filter ------------------------------------------------- */

/* Is the media type (the Content-Type before any parameter) one of lcf's? */
static int
sws_charset_type_is_listed(const sws_charset_loc_conf_t *lcf, const u_char *type, size_t len)
{
    const sws_str_t    *t;
    const char *const  *d;
    sws_uint_t          i;

    if (lcf->any_type || (len == 9 && sws_strncasecmp(type, (u_char *) "text/html", 9) == 0)) {
        return 1;
    }
    if (lcf->types == NULL) {
        for (d = sws_charset_default_types; *d; d++) {
            if (strlen(*d) == len && sws_strncasecmp(type, (u_char *) *d, len) == 0) {
                return 1;
            }
        }
        return 0;
    }
    t = lcf->types->elts;
    for (i = 0; i < lcf->types->nelts; i++) {
        if (t[i].len == len && sws_strncasecmp(type, t[i].data, len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Does a parameter list ("; a=b; charset=x") name a charset? */
static int
sws_charset_has_param(const u_char *p, const u_char *last)
{
    for (; p + 8 <= last; p++) {
        if ((*p | 0x20) == 'c' && sws_strncasecmp(p, (u_char *) "charset=", 8) == 0
            && (p[-1] == ';' || p[-1] == ' ' || p[-1] == '\t'))
        {
            return 1;
        }
    }
    return 0;
}

static sws_int_t
sws_charset_header_filter(sws_http_request_t *r)
{
    sws_charset_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t         *ct;
    const u_char            *semi;
    size_t                   tlen;
    sws_str_t                v;
    u_char                  *p;

    /* not on 301 and 302, as nginx (old browsers took a redirect's
     * charset for the next page's) */
    if (lcf == NULL || lcf->charset.len == 0 || sws_http_status(r) == 301
        || sws_http_status(r) == 302)
    {
        return sws_charset_next_header_filter(r);
    }
    ct = sws_http_content_type(r);
    if (ct == NULL || ct->len == 0) {
        return sws_charset_next_header_filter(r);
    }
    semi = memchr(ct->data, ';', ct->len);
    tlen = semi ? (size_t) (semi - ct->data) : ct->len;
    while (tlen && (ct->data[tlen - 1] == ' ' || ct->data[tlen - 1] == '\t')) {
        tlen--;
    }
    if (!sws_charset_type_is_listed(lcf, ct->data, tlen)
        || (semi && sws_charset_has_param(semi, ct->data + ct->len)))
    {
        return sws_charset_next_header_filter(r);   /* not ours, or it says already */
    }
    v.len = ct->len + sizeof("; charset=") - 1 + lcf->charset.len;
    v.data = sws_pnalloc(sws_http_pool(r), v.len);
    if (v.data == NULL) {
        return SWS_ERROR;
    }
    p = sws_cpymem(v.data, ct->data, ct->len);
    p = sws_cpymem(p, "; charset=", sizeof("; charset=") - 1);
    memcpy(p, lcf->charset.data, lcf->charset.len);
    sws_http_set_content_type(r, &v);
    return sws_charset_next_header_filter(r);
}


/* ---- configuration ----------------------------------------------------- */

static void *
sws_charset_create_main_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_charset_main_conf_t));
}

static void *
sws_charset_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_charset_loc_conf_t));
}

/* A charset name: a token (RFC 9110 5.6.2), as it goes into a header. */
static int
sws_charset_valid_name(const sws_str_t *name)
{
    size_t  i;
    u_char  c;

    for (i = 0; i < name->len; i++) {
        c = name->data[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || strchr("!#$%&'*+-.^_`|~", c) != NULL))
        {
            return 0;
        }
    }
    return name->len > 0;
}

/* charset NAME | off */
static char *
sws_charset_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_charset_loc_conf_t   *lcf = conf;
    sws_charset_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);
    sws_str_t                *arg = sws_conf_arg(cf, 1);

    (void) cmd;
    if (lcf->charset_set) {
        return "is duplicate";
    }
    lcf->charset_set = 1;
    if (sws_str_eq_cstr(arg, "off")) {
        return SWS_CONF_OK;                 /* charset empty: off */
    }
    if (!sws_charset_valid_name(arg)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid charset name \"%.*s\"",
                           (int) arg->len, arg->data);
        return SWS_CONF_ERROR;
    }
    lcf->charset = *arg;
    if (mcf) {
        mcf->used = 1;
    }
    return SWS_CONF_OK;
}

/* charset_types TYPE ... | * */
static char *
sws_charset_set_types(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_charset_loc_conf_t  *lcf = conf;
    sws_str_t               *arg, *t;
    sws_uint_t               i, n = sws_conf_nargs(cf);
    size_t                   k;

    (void) cmd;
    if (lcf->types || lcf->any_type) {
        return "is duplicate";
    }
    lcf->types = sws_array_create(sws_conf_pool(cf), n, sizeof(sws_str_t));
    if (lcf->types == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 1; i < n; i++) {
        arg = sws_conf_arg(cf, i);
        if (arg->len == 1 && arg->data[0] == '*') {
            lcf->any_type = 1;
            continue;
        }
        t = sws_array_push(lcf->types);
        if (t == NULL) {
            return SWS_CONF_ERROR;
        }
        *t = *arg;
        for (k = 0; k < t->len; k++) {
            t->data[k] = (u_char) sws_tolower(t->data[k]);
        }
    }
    return SWS_CONF_OK;
}

static char *
sws_charset_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_charset_loc_conf_t  *prev = parent, *conf = child;

    if (!conf->charset_set) {
        conf->charset = prev->charset;
        conf->charset_set = prev->charset_set;
    }
    if (conf->source.data == NULL) {
        conf->source = prev->source;
    }
    if (conf->types == NULL && !conf->any_type) {
        conf->types = prev->types;
        conf->any_type = prev->any_type;
    }
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
    return SWS_CONF_OK;
}

static sws_int_t
sws_charset_init(sws_conf_t *cf)
{
    sws_charset_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    sws_charset_next_header_filter = sws_http_insert_header_filter(sws_charset_header_filter);
    return SWS_OK;
}
