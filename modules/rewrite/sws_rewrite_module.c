/*
 * The rewrite module, nginx's directives of the same names:
 *
 *   rewrite REGEX REPLACEMENT [last|break|redirect|permanent];
 *   return CODE [TEXT|URL]; return URL;
 *   set $VAR VALUE;
 *   if (CONDITION) { ... }
 *   break;
 *   rewrite_log on|off;  uninitialized_variable_warn on|off (accepted)
 *
 * In a server they run in the server's rewrite phase, before the location
 * is chosen; in a location (and its if blocks) in the location's rewrite
 * phase. "last" in a location chooses the location again (at most 10
 * times in a request, as every internal redirect: 500 beyond); a location
 * whose URI was rewritten without a flag does the same at the end.
 * A return without variables is formatted at configuration time
 * (sws_http_fixed_create), the core's fast path.
 */
#include "sws_rewrite.h"

static char *sws_rewrite_set_rewrite(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_rewrite_set_return(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_rewrite_set_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_rewrite_set_if(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_rewrite_set_break(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_rewrite_create_loc_conf(sws_conf_t *cf);
static char *sws_rewrite_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_rewrite_init(sws_conf_t *cf);

#define SWS_REWRITE_CTX  (SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_HTTP_LIF_CONF)
#define SWS_REWRITE_ANY  (SWS_HTTP_MAIN_CONF | SWS_REWRITE_CTX)

static const sws_command_t sws_rewrite_commands[] = {
    { "rewrite", SWS_REWRITE_CTX | SWS_CONF_TAKE23, sws_rewrite_set_rewrite,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "return", SWS_REWRITE_CTX | SWS_CONF_TAKE12, sws_rewrite_set_return,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "set", SWS_REWRITE_CTX | SWS_CONF_TAKE2, sws_rewrite_set_set,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "if", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_BLOCK | SWS_CONF_1MORE,
      sws_rewrite_set_if, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "break", SWS_REWRITE_CTX | SWS_CONF_NOARGS, sws_rewrite_set_break,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "rewrite_log", SWS_REWRITE_ANY | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_rewrite_loc_conf_t, log), NULL },
    { "uninitialized_variable_warn", SWS_REWRITE_ANY | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_rewrite_loc_conf_t, uninit_warn), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "rewrite",
    .commands = sws_rewrite_commands,
    .create_loc_conf = sws_rewrite_create_loc_conf,
    .merge_loc_conf = sws_rewrite_merge_loc_conf,
    .postconfiguration = sws_rewrite_init,
};


/* ---- the phase handlers -------------------------------------------- */

static sws_int_t
sws_rewrite_server_handler(sws_http_request_t *r)
{
    sws_rewrite_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_int_t                rc;
    int                      changed = 0;

    if (lcf->ops == NULL) {
        return SWS_DECLINED;
    }
    rc = sws_rewrite_run(r, lcf, &changed);
    /* last, break or the end: the location is chosen for the URI as it is */
    return (rc == SWS_DECLINED || rc == SWS_OK || rc == SWS_AGAIN) ? SWS_DECLINED : rc;
}

static sws_int_t
sws_rewrite_location_handler(sws_http_request_t *r)
{
    sws_rewrite_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_int_t                rc;
    int                      changed = 0;

    /* No location matched: the server's level is the location, and its
     * script ran in the server's phase already (as nginx skips it). */
    if (lcf->ops == NULL || lcf->server) {
        return SWS_DECLINED;
    }
    /* A script that starts with a return is that return (a status,
     * SWS_DONE or 444: never a rewrite's codes below). */
    if (lcf->first_return) {
        return sws_rewrite_return(r, lcf->ops->elts);
    }
    rc = sws_rewrite_run(r, lcf, &changed);
    if (rc == SWS_AGAIN || (rc == SWS_DECLINED && changed)) {
        return sws_http_relocate(r);
    }
    return rc == SWS_OK ? SWS_DECLINED : rc;
}

/* Only where a script is written: it is not inherited. The server's
 * level is asked for the server's phase, each location for its own. */
static sws_uint_t
sws_rewrite_server_active(const void *conf)
{
    const sws_rewrite_loc_conf_t *lcf = conf;

    return lcf->ops != NULL;
}

static sws_uint_t
sws_rewrite_location_active(const void *conf)
{
    const sws_rewrite_loc_conf_t *lcf = conf;

    return lcf->ops != NULL && !lcf->server;
}

static sws_int_t
sws_rewrite_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t srv = {
        .phase = SWS_HTTP_SERVER_REWRITE_PHASE, .order = SWS_HTTP_ORDER_DEFAULT,
        .handler = sws_rewrite_server_handler, .module = &sws_module,
        .active = sws_rewrite_server_active
    };
    sws_http_phase_handler_t loc = {
        .phase = SWS_HTTP_REWRITE_PHASE, .order = SWS_HTTP_ORDER_DEFAULT,
        .handler = sws_rewrite_location_handler, .module = &sws_module,
        .active = sws_rewrite_location_active
    };

    if (sws_http_register_phase_handler(cf, &srv) != SWS_OK
        || sws_http_register_phase_handler(cf, &loc) != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}


/* ---- configuration ------------------------------------------------- */

static void *
sws_rewrite_create_loc_conf(sws_conf_t *cf)
{
    sws_rewrite_loc_conf_t  *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*lcf));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->log = SWS_UNSET;
    lcf->uninit_warn = SWS_UNSET;
    return lcf;
}

static char *
sws_rewrite_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_rewrite_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    /* the script is not inherited: the server's runs in its own phase */
    sws_conf_merge_value(conf->log, prev->log, 0);
    sws_conf_merge_value(conf->uninit_warn, prev->uninit_warn, 1);
    return SWS_CONF_OK;
}

static sws_rewrite_op_t *
sws_rewrite_push(sws_conf_t *cf, sws_rewrite_loc_conf_t *lcf, sws_uint_t kind)
{
    sws_rewrite_op_t  *op;

    if (lcf->ops == NULL) {
        lcf->ops = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_rewrite_op_t));
        if (lcf->ops == NULL) {
            return NULL;
        }
    }
    op = sws_array_push(lcf->ops);
    if (op == NULL) {
        return NULL;
    }
    sws_memzero(op, sizeof(*op));
    op->kind = kind;
    op->line = sws_conf_line(cf);
    if (sws_conf_context(cf) == SWS_HTTP_SRV_CONF) {
        lcf->server = 1;
    }
    return op;
}

static sws_http_format_t *
sws_rewrite_format(sws_conf_t *cf, const sws_str_t *text)
{
    const char         *err = NULL;
    sws_http_format_t  *f;

    f = sws_http_format_compile(sws_conf_pool(cf), text, SWS_HTTP_ESCAPE_NONE, &err);
    if (f == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%.*s\"", err,
                           (int) sws_conf_arg(cf, 0)->len, sws_conf_arg(cf, 0)->data);
    }
    return f;
}

static int
sws_rewrite_is_url(const sws_str_t *v)
{
    return (v->len > 7 && sws_strncasecmp(v->data, (u_char *) "http://", 7) == 0)
           || (v->len > 8 && sws_strncasecmp(v->data, (u_char *) "https://", 8) == 0)
           || (v->len >= 7 && memcmp(v->data, "$scheme", 7) == 0);
}


/* rewrite REGEX REPLACEMENT [last|break|redirect|permanent]; */
static char *
sws_rewrite_set_rewrite(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_rewrite_loc_conf_t  *lcf = conf;
    sws_rewrite_op_t        *op;
    sws_str_t               *pattern = sws_conf_arg(cf, 1), *repl = sws_conf_arg(cf, 2), *flag;
    const char              *err;

    (void) cmd;
    op = sws_rewrite_push(cf, lcf, SWS_REWRITE_REWRITE);
    if (op == NULL) {
        return SWS_CONF_ERROR;
    }
    op->re = sws_regex_compile(sws_conf_pool(cf), pattern, 0, &err);
    if (op->re == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return SWS_CONF_ERROR;
    }
    if (sws_http_regex_variables(cf, op->re) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    op->pattern.len = pattern->len;
    op->pattern.data = (u_char *) sws_pstrdup(sws_conf_pool(cf), pattern);
    if (op->pattern.data == NULL) {
        return SWS_CONF_ERROR;
    }

    if (sws_conf_nargs(cf) == 4) {
        flag = sws_conf_arg(cf, 3);
        if (sws_str_eq_cstr(flag, "last")) {
            op->flag = SWS_REWRITE_FLAG_LAST;
        } else if (sws_str_eq_cstr(flag, "break")) {
            op->flag = SWS_REWRITE_FLAG_BREAK;
        } else if (sws_str_eq_cstr(flag, "redirect")) {
            op->flag = SWS_REWRITE_FLAG_REDIRECT;
        } else if (sws_str_eq_cstr(flag, "permanent")) {
            op->flag = SWS_REWRITE_FLAG_PERMANENT;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                               (int) flag->len, flag->data);
            return SWS_CONF_ERROR;
        }
    }
    if (repl->len == 0) {
        return "has an empty replacement";
    }
    op->redirect = sws_rewrite_is_url(repl) || op->flag == SWS_REWRITE_FLAG_REDIRECT
                   || op->flag == SWS_REWRITE_FLAG_PERMANENT;
    op->drop_args = repl->data[repl->len - 1] == '?';
    op->value = sws_rewrite_format(cf, repl);
    return op->value ? SWS_CONF_OK : SWS_CONF_ERROR;
}


/* "NNN" as a status; SWS_ERROR if not three digits. */
static sws_int_t
sws_rewrite_parse_status(const sws_str_t *v)
{
    if (v->len != 3) {
        return SWS_ERROR;
    }
    return sws_atoi(v->data, v->len);
}

static int
sws_rewrite_status_redirect(sws_int_t status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}


/* return CODE [TEXT|URL]; return URL; */
static char *
sws_rewrite_set_return(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_rewrite_loc_conf_t  *lcf = conf;
    sws_rewrite_op_t        *op;
    sws_str_t               *code = sws_conf_arg(cf, 1), *text, *copy;
    sws_int_t                status;
    int                      url;
    size_t                   i;

    (void) cmd;
    text = sws_conf_nargs(cf) == 3 ? sws_conf_arg(cf, 2) : NULL;
    status = sws_rewrite_parse_status(code);

    if (status == SWS_ERROR) {
        if (text != NULL || !sws_rewrite_is_url(code)) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "invalid return code \"%.*s\": it must be a status (200..599) "
                               "or a URL starting with http://, https:// or $scheme",
                               (int) code->len, code->data);
            return SWS_CONF_ERROR;
        }
        status = SWS_HTTP_MOVED_TEMPORARILY;
        text = code;
    } else if (status >= 100 && status <= 199) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "status %.*s is not allowed in \"return\": "
                           "1xx responses cannot be configured", (int) code->len, code->data);
        return SWS_CONF_ERROR;
    } else if (status < 200 || status > 599) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid status \"%.*s\" in \"return\": it "
                           "must be from 200 to 599", (int) code->len, code->data);
        return SWS_CONF_ERROR;
    }

    url = text != NULL && sws_rewrite_status_redirect(status);
    if (text != NULL && !url && (status == 204 || status == 304)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "a %d response cannot have a body",
                           (int) status);
        return SWS_CONF_ERROR;
    }
    if (status == SWS_HTTP_CLOSE && text != NULL) {
        return "takes no text with 444 (close the connection)";
    }
    if (url) {
        if (text->len == 0) {
            return "has an empty URL";
        }
        for (i = 0; i < text->len; i++) {
            if (text->data[i] <= 0x20 || text->data[i] == 0x7f) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                                   "invalid URL \"%.*s\" in \"return\": spaces and control "
                                   "characters must be %%-encoded",
                                   (int) text->len, text->data);
                return SWS_CONF_ERROR;
            }
        }
    }

    op = sws_rewrite_push(cf, lcf, SWS_REWRITE_RETURN);
    if (op == NULL) {
        return SWS_CONF_ERROR;
    }
    op->status = (sws_uint_t) status;
    if (lcf->ops->nelts == 1) {
        lcf->first_return = 1;
    }
    if (status == SWS_HTTP_CLOSE) {
        return SWS_CONF_OK;
    }
    if (text != NULL) {
        op->value = sws_rewrite_format(cf, text);
        if (op->value == NULL) {
            return SWS_CONF_ERROR;
        }
        if (url || !sws_http_format_is_static(op->value)) {
            /* per request; a redirect's page is the core's, as an error's */
            return SWS_CONF_OK;
        }
    } else if (status >= 300) {
        return SWS_CONF_OK;                   /* the core's page */
    }

    /* no variables: the whole response is made now */
    copy = NULL;
    if (text != NULL) {
        copy = sws_palloc(sws_conf_pool(cf), sizeof(sws_str_t));
        if (copy == NULL) {
            return SWS_CONF_ERROR;
        }
        copy->len = text->len;
        copy->data = (u_char *) sws_pstrdup(sws_conf_pool(cf), text);
        if (copy->data == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    /* typed as nginx types it: by the URI's extension, else default_type */
    op->fixed = sws_http_fixed_create_typed(cf, (sws_uint_t) status, copy);
    return op->fixed ? SWS_CONF_OK : SWS_CONF_ERROR;
}


/* set $VAR VALUE; */
static char *
sws_rewrite_set_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_rewrite_loc_conf_t  *lcf = conf;
    sws_rewrite_op_t        *op;
    sws_str_t               *var = sws_conf_arg(cf, 1), name;
    sws_int_t                index;
    size_t                   i;

    (void) cmd;
    if (var->len < 2 || var->data[0] != '$') {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid variable name \"%.*s\": it must "
                           "start with \"$\"", (int) var->len, var->data);
        return SWS_CONF_ERROR;
    }
    name.data = var->data + 1;
    name.len = var->len - 1;
    for (i = 0; i < name.len; i++) {
        u_char c = name.data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_'))
        {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid variable name \"%.*s\"",
                               (int) var->len, var->data);
            return SWS_CONF_ERROR;
        }
    }
    index = sws_http_variable_writable(cf, &name);
    if (index < 0) {
        return SWS_CONF_ERROR;
    }
    op = sws_rewrite_push(cf, lcf, SWS_REWRITE_SET);
    if (op == NULL) {
        return SWS_CONF_ERROR;
    }
    op->index = (sws_uint_t) index;
    op->name = name;
    op->value = sws_rewrite_format(cf, sws_conf_arg(cf, 2));
    return op->value ? SWS_CONF_OK : SWS_CONF_ERROR;
}


/* if (CONDITION) { ... } */
static char *
sws_rewrite_set_if(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_rewrite_loc_conf_t  *lcf = conf;
    sws_rewrite_op_t        *op;
    sws_http_location_t     *loc;
    char                    *rv;

    (void) cmd;
    op = sws_rewrite_push(cf, lcf, SWS_REWRITE_IF);
    if (op == NULL) {
        return SWS_CONF_ERROR;
    }
    op->cond = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_rewrite_cond_t));
    if (op->cond == NULL) {
        return SWS_CONF_ERROR;
    }
    rv = sws_rewrite_cond_parse(cf, op->cond);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    loc = sws_http_conf_nested_location(cf);
    if (loc == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "\"if\" directive is not allowed here (no \"if\" inside \"if\")");
        return SWS_CONF_ERROR;
    }
    op->loc = loc;
    op->body = sws_http_location_conf(loc, &sws_module);
    return sws_http_conf_parse_nested(cf, loc);
}


static char *
sws_rewrite_set_break(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    return sws_rewrite_push(cf, conf, SWS_REWRITE_BREAK) ? SWS_CONF_OK : SWS_CONF_ERROR;
}
