/*
 * limit_except METHOD ... { ... }: nginx's. In a location, the block's
 * directives (allow, deny, auth_basic, ...) apply to the requests whose
 * method is not listed; GET brings HEAD with it. The block is a nested
 * location (as an "if" block is), merged with its location, so the content
 * handler (proxy_pass ...) and everything else not set in it are the
 * location's; the request enters it once its location is found
 * (sws_http_limit_except() in sws_http_core.h).
 */
#include "sws_http_core.h"

static const struct {
    const char  *name;
    sws_uint_t   method;
} sws_http_limit_methods[] = {
    { "GET", SWS_HTTP_GET | SWS_HTTP_HEAD }, { "HEAD", SWS_HTTP_HEAD },
    { "POST", SWS_HTTP_POST }, { "PUT", SWS_HTTP_PUT }, { "DELETE", SWS_HTTP_DELETE },
    { "OPTIONS", SWS_HTTP_OPTIONS }, { "PATCH", SWS_HTTP_PATCH },
    { "TRACE", SWS_HTTP_TRACE }, { "CONNECT", SWS_HTTP_CONNECT },
    { NULL, 0 }
};

/* WebDAV methods nginx knows by name; the core parses them as unknown */
static const char *const  sws_http_limit_named[] = {
    "MKCOL", "COPY", "MOVE", "PROPFIND", "PROPPATCH", "LOCK", "UNLOCK", NULL
};

char *
sws_http_core_limit_except(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_core_loc_conf_t  *clcf = conf;
    sws_http_location_t       *loc;
    sws_str_t                 *arg, *name;
    sws_uint_t                 i, k;

    (void) cmd;
    if (clcf->limit_except_loc) {
        return "is duplicate";
    }
    if (clcf->noname) {
        return "is not allowed here";        /* in an if or limit_except block */
    }
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        arg = sws_conf_arg(cf, i);
        for (k = 0; sws_http_limit_methods[k].name; k++) {
            /* names in any case, as nginx takes them */
            if (arg->len == strlen(sws_http_limit_methods[k].name)
                && sws_strncasecmp(arg->data, (u_char *) sws_http_limit_methods[k].name,
                                   arg->len) == 0)
            {
                clcf->limit_except |= sws_http_limit_methods[k].method;
                break;
            }
        }
        if (sws_http_limit_methods[k].name) {
            continue;
        }
        for (k = 0; sws_http_limit_named[k]; k++) {
            if (arg->len == strlen(sws_http_limit_named[k])
                && sws_strncasecmp(arg->data, (u_char *) sws_http_limit_named[k], arg->len) == 0)
            {
                break;
            }
        }
        if (sws_http_limit_named[k] == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid method \"%.*s\"",
                               (int) arg->len, arg->data);
            return SWS_CONF_ERROR;
        }
        if (clcf->limit_except_names == NULL) {
            clcf->limit_except_names = sws_array_create(cf->pool, 2, sizeof(sws_str_t));
            if (clcf->limit_except_names == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        name = sws_array_push(clcf->limit_except_names);
        if (name == NULL) {
            return SWS_CONF_ERROR;
        }
        name->data = (u_char *) sws_http_limit_named[k];     /* its canonical case */
        name->len = arg->len;
    }
    loc = sws_http_conf_nested_location(cf);
    if (loc == NULL) {
        return SWS_CONF_ERROR;
    }
    clcf->limit_except_loc = (sws_http_core_loc_conf_t *) loc;
    return sws_http_conf_parse_nested(cf, loc);
}
