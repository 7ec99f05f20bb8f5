/*
 * The respond module: fixed responses decided at configuration time.
 *
 *   respond CODE [BODY];           Caddy-like; a body is text/plain; charset=utf-8
 *   respond 444;                   close the connection without a response
 *
 * In server or location context: the location's content handler. The
 * response is built once with sws_http_fixed_create (the core's fast
 * path); a location without its own respond inherits the one of its
 * server. nginx's "return" (with variables, in the rewrite phase) is the
 * rewrite module's.
 */
#include <scalws/scalws.h>


typedef struct {
    sws_int_t           status;     /* SWS_UNSET: no respond/return here */
    sws_http_fixed_t   *fixed;      /* NULL: answer with the status alone */
} sws_respond_loc_conf_t;


static char *sws_respond_set_respond(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_respond_create_loc_conf(sws_conf_t *cf);
static char *sws_respond_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);

static const sws_command_t sws_respond_commands[] = {
    { "respond", SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF | SWS_CONF_TAKE12,
      sws_respond_set_respond, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "respond",
    .commands = sws_respond_commands,
    .create_loc_conf = sws_respond_create_loc_conf,
    .merge_loc_conf = sws_respond_merge_loc_conf,
};

static const sws_str_t  sws_respond_text_plain = sws_string("text/plain; charset=utf-8");


/* ---- the content handler ------------------------------------------- */

static sws_int_t
sws_respond_handler(sws_http_request_t *r)
{
    sws_int_t                rc;
    sws_respond_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    if (lcf->status == SWS_HTTP_CLOSE) {
        return SWS_HTTP_CLOSE;
    }

    rc = sws_http_discard_body(r);
    if (rc != SWS_OK && rc != SWS_AGAIN) {
        return rc;
    }

    if (lcf->fixed != NULL) {
        return sws_http_send_fixed(r, lcf->fixed);
    }

    /* >= 400 without text: the core's error page for the status */
    return lcf->status;
}


/* ---- configuration ------------------------------------------------- */

static void *
sws_respond_create_loc_conf(sws_conf_t *cf)
{
    sws_respond_loc_conf_t  *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_respond_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }
    lcf->status = SWS_UNSET;

    return lcf;
}


static char *
sws_respond_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_respond_loc_conf_t  *prev = parent;
    sws_respond_loc_conf_t  *conf = child;

    (void) cf;

    if (conf->status == SWS_UNSET) {
        conf->status = prev->status;
        conf->fixed = prev->fixed;
    }

    return SWS_CONF_OK;
}


/* "NNN" as a status; SWS_ERROR if not three digits. */
static sws_int_t
sws_respond_parse_status(const sws_str_t *v)
{
    if (v->len != 3) {
        return SWS_ERROR;
    }
    return sws_atoi(v->data, v->len);
}




/* The status of respond/return: 200..599 (444 included); 1xx is refused. */
static char *
sws_respond_check_status(sws_conf_t *cf, const sws_str_t *v, sws_int_t status)
{
    if (status >= 100 && status <= 199) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "status %.*s is not allowed in \"%.*s\": 1xx responses cannot "
                           "be configured", (int) v->len, v->data,
                           (int) sws_conf_arg(cf, 0)->len, sws_conf_arg(cf, 0)->data);
        return SWS_CONF_ERROR;
    }

    if (status < 200 || status > 599) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "invalid status \"%.*s\" in \"%.*s\": it must be from 200 to 599",
                           (int) v->len, v->data,
                           (int) sws_conf_arg(cf, 0)->len, sws_conf_arg(cf, 0)->data);
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


/*
 * Store the response at this level and make respond this level's content
 * handler. text is a body (content type text/plain) or, with url set, the
 * Location of a redirect; NULL for neither.
 */
static char *
sws_respond_install(sws_conf_t *cf, sws_respond_loc_conf_t *lcf, sws_int_t status,
    const sws_str_t *text, int url)
{
    sws_str_t  *copy = NULL;

    if (text != NULL && !url
        && (status == SWS_HTTP_NO_CONTENT || status == SWS_HTTP_NOT_MODIFIED))
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "a %d response cannot have a body",
                           (int) status);
        return SWS_CONF_ERROR;
    }

    if (status == SWS_HTTP_CLOSE && text != NULL) {
        return "takes no text with 444 (close the connection)";
    }

    if (text != NULL) {
        copy = sws_palloc(sws_conf_pool(cf), sizeof(sws_str_t));
        if (copy == NULL) {
            return SWS_CONF_ERROR;
        }
        copy->len = text->len;
        copy->data = sws_pstrdup(sws_conf_pool(cf), text);
        if (copy->data == NULL) {
            return SWS_CONF_ERROR;
        }
    }

    if (sws_http_set_content_handler(cf, sws_respond_handler, "respond") != SWS_OK) {
        return "conflicts with the content handler already set here";
    }

    lcf->status = status;
    lcf->fixed = NULL;

    if (status == SWS_HTTP_CLOSE) {
        return SWS_CONF_OK;
    }

    lcf->fixed = sws_http_fixed_create(cf, (sws_uint_t) status,
                                       (copy && !url) ? &sws_respond_text_plain : NULL,
                                       url ? NULL : copy, url ? copy : NULL);
    if (lcf->fixed == NULL) {
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


static char *
sws_respond_duplicate(sws_conf_t *cf)
{
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                       "\"%.*s\": only one \"respond\" is allowed per server or location", (int) sws_conf_arg(cf, 0)->len,
                       sws_conf_arg(cf, 0)->data);
    return SWS_CONF_ERROR;
}


/* respond CODE [BODY]; */
static char *
sws_respond_set_respond(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char                    *rv;
    sws_int_t                status;
    sws_str_t               *code;
    sws_respond_loc_conf_t  *lcf = conf;

    (void) cmd;

    if (lcf->status != SWS_UNSET) {
        return sws_respond_duplicate(cf);
    }

    code = sws_conf_arg(cf, 1);
    status = sws_respond_parse_status(code);
    if (status == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid status \"%.*s\" in \"respond\"",
                           (int) code->len, code->data);
        return SWS_CONF_ERROR;
    }

    rv = sws_respond_check_status(cf, code, status);
    if (rv != SWS_CONF_OK) {
        return rv;
    }

    return sws_respond_install(cf, lcf, status,
                               sws_conf_nargs(cf) == 3 ? sws_conf_arg(cf, 2) : NULL, 0);
}
