/*
 * The headers module's directives, as nginx's:
 *
 *   add_header NAME VALUE [always];     http, server, location
 *   add_trailer NAME VALUE [always];
 *   expires [modified] TIME | epoch | max | off;
 *   expires @TIME-OF-DAY;               ("@15h30m": the next 15:30, local time)
 *   expires [modified] $VARIABLES;      (one of the above, per response)
 *
 * VALUE may hold variables ($host, ${upstream_cache_status} ...), those of
 * the core and those modules declare. A level with add_header of its own
 * replaces the whole list of the level around it (add_trailer likewise,
 * separately); a level without any inherits it.
 */
#include "sws_headers.h"

static char *sws_headers_add(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_headers_expires(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_headers_create_main_conf(sws_conf_t *cf);
static void *sws_headers_create_loc_conf(sws_conf_t *cf);
static char *sws_headers_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_headers_init(sws_conf_t *cf);

#define SWS_HEADERS_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF \
                          | SWS_HTTP_LIF_CONF)

static const sws_command_t sws_headers_commands[] = {
    { "add_header", SWS_HEADERS_CTX | SWS_CONF_TAKE23, sws_headers_add,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_headers_loc_conf_t, headers), NULL },
    { "add_trailer", SWS_HEADERS_CTX | SWS_CONF_TAKE23, sws_headers_add,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_headers_loc_conf_t, trailers), NULL },
    { "expires", SWS_HEADERS_CTX | SWS_CONF_TAKE12, sws_headers_expires,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "headers",
    .commands = sws_headers_commands,
    .create_main_conf = sws_headers_create_main_conf,
    .create_loc_conf = sws_headers_create_loc_conf,
    .merge_loc_conf = sws_headers_merge_loc_conf,
    .postconfiguration = sws_headers_init,
};


/* A field name is a token (RFC 9110 5.6.2). */
static int
sws_headers_valid_name(const sws_str_t *name)
{
    static const char  specials[] = "!#$%&'*+-.^_`|~";
    size_t             i;
    u_char             c;

    if (name->len == 0) {
        return 0;
    }
    for (i = 0; i < name->len; i++) {
        c = name->data[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c != 0 && strchr(specials, c) != NULL)))
        {
            return 0;
        }
    }
    return 1;
}

/* A field value may not hold CR, LF, NUL or other controls but HTAB: a
 * quoted "a\nb" in the file would otherwise start a field of its own. */
static int
sws_headers_valid_value(const sws_str_t *value)
{
    size_t  i;
    u_char  c;

    for (i = 0; i < value->len; i++) {
        c = value->data[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            return 0;
        }
    }
    return 1;
}

static void
sws_headers_mark_used(sws_conf_t *cf)
{
    sws_headers_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    if (mcf != NULL) {
        mcf->used = 1;
    }
}


/* add_header / add_trailer NAME VALUE [always]; */
static char *
sws_headers_add(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_array_t         **list = (sws_array_t **) ((char *) conf + cmd->offset);
    sws_str_t            *name = sws_conf_arg(cf, 1), *value = sws_conf_arg(cf, 2);
    sws_headers_field_t  *f;
    const char           *err = NULL;
    sws_pool_t           *pool = sws_conf_pool(cf);

    if (!sws_headers_valid_name(name)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid header name \"%.*s\" in \"%s\" "
                           "directive", (int) name->len, name->data, cmd->name);
        return SWS_CONF_ERROR;
    }
    if (!sws_headers_valid_value(value)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid character in the value of "
                           "\"%.*s\" in \"%s\" directive", (int) name->len, name->data,
                           cmd->name);
        return SWS_CONF_ERROR;
    }
    if (sws_conf_nargs(cf) == 4 && !sws_str_eq_cstr(sws_conf_arg(cf, 3), "always")) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\" in \"%s\" "
                           "directive", (int) sws_conf_arg(cf, 3)->len,
                           sws_conf_arg(cf, 3)->data, cmd->name);
        return SWS_CONF_ERROR;
    }

    if (*list == NULL) {
        *list = sws_array_create(pool, 4, sizeof(sws_headers_field_t));
        if (*list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    f = sws_array_push(*list);
    if (f == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(f, sizeof(sws_headers_field_t));
    f->name.len = name->len;
    f->name.data = sws_pstrdup(pool, name);
    if (f->name.data == NULL) {
        return SWS_CONF_ERROR;
    }
    f->always = sws_conf_nargs(cf) == 4;
    if (cmd->offset == offsetof(sws_headers_loc_conf_t, headers)) {
        if (sws_str_caseeq_cstr(name, "etag")) {
            f->kind = SWS_HEADERS_ETAG;
        } else if (sws_str_caseeq_cstr(name, "last-modified")) {
            f->kind = SWS_HEADERS_LAST_MODIFIED;
        }
    }

    f->value = sws_http_format_compile(pool, value, SWS_HTTP_ESCAPE_NONE, &err);
    if (f->value == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%s\" directive",
                           err ? err : "cannot compile the value", cmd->name);
        return SWS_CONF_ERROR;
    }
    if (sws_http_format_is_static(f->value)) {
        /* Known now: no evaluation per response. */
        f->text.len = value->len;
        f->text.data = sws_pstrdup(pool, value);
        if (f->text.data == NULL) {
            return SWS_CONF_ERROR;
        }
        f->value = NULL;
    }
    sws_headers_mark_used(cf);
    return SWS_CONF_OK;
}


/* expires [modified] TIME | epoch | max | off | @TIME; (or variables) */
static char *
sws_headers_expires(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_headers_loc_conf_t  *lcf = conf;
    sws_str_t               *v;
    const char              *err = NULL;
    int                      modified = 0;

    (void) cmd;
    if (lcf->expires != SWS_HEADERS_EXPIRES_UNSET) {
        return "is duplicate";
    }
    v = sws_conf_arg(cf, 1);
    if (sws_conf_nargs(cf) == 3) {
        if (!sws_str_eq_cstr(v, "modified")) {
            goto invalid;
        }
        modified = 1;
        v = sws_conf_arg(cf, 2);
    }

    if (memchr(v->data, '$', v->len) != NULL) {
        /* as nginx 1.7.9: the value is known per response ("expires
         * $expires;" with a map of $sent_http_content_type) */
        lcf->expires_value = sws_http_format_compile(sws_conf_pool(cf), v,
                                                     SWS_HTTP_ESCAPE_NONE, &err);
        if (lcf->expires_value == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"expires\" directive",
                               err ? err : "cannot compile the value");
            return SWS_CONF_ERROR;
        }
        lcf->expires = SWS_HEADERS_EXPIRES_VARIABLE;
        lcf->expires_modified = modified;
        sws_headers_mark_used(cf);
        return SWS_CONF_OK;
    }

    err = sws_headers_parse_expires(v, modified, &lcf->expires, &lcf->expires_time);
    if (err != NULL) {
        if (strcmp(err, "invalid value") == 0) {
            goto invalid;
        }
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s: \"%.*s\" in \"expires\" directive",
                           err, (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }
    if (lcf->expires != SWS_HEADERS_EXPIRES_OFF) {
        sws_headers_mark_used(cf);
    }
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"expires\" directive",
                       (int) v->len, v->data);
    return SWS_CONF_ERROR;
}


static void *
sws_headers_create_main_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_headers_main_conf_t));
}

static void *
sws_headers_create_loc_conf(sws_conf_t *cf)
{
    /* zeroed: no lists, expires unset */
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_headers_loc_conf_t));
}

static char *
sws_headers_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_headers_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    /* nginx's inheritance: a list of one's own replaces the outer one. */
    if (conf->headers == NULL) {
        conf->headers = prev->headers;
    }
    if (conf->trailers == NULL) {
        conf->trailers = prev->trailers;
    }
    if (conf->expires == SWS_HEADERS_EXPIRES_UNSET) {
        conf->expires = prev->expires;
        conf->expires_time = prev->expires_time;
        conf->expires_value = prev->expires_value;
        conf->expires_modified = prev->expires_modified;
    }
    return SWS_CONF_OK;
}

static sws_int_t
sws_headers_init(sws_conf_t *cf)
{
    sws_headers_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    /* Without a directive anywhere the filters stay out of the chain, so
     * fixed responses keep the core's one-write path. */
    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    return sws_headers_filter_init(cf);
}
