/*
 * limit_rate and limit_rate_after: the response of a request goes out at
 * most at rate bytes per second once limit_rate_after bytes were sent, as
 * nginx paces it: by the time t (ms) after the request started, at most
 * after + rate * (t + 1000) / 1000 bytes may have gone (a second's worth
 * at once, then the rate). The protocols ask how much may go now; when
 * nothing may, they wait on a timer for the time the rate needs, so a
 * paced response costs a few wake-ups a second, never a busy loop.
 *
 * The values are the location's (a size, or a format with variables
 * evaluated when the body starts), unless a module set them first for
 * the request (rewrite's "set $limit_rate").
 */
#include "sws_http_core.h"
#include "sws_http_limit_rate.h"
#include "sws_http_variables.h"

/* A format's value for r as a size ("20k", "1m", digits); 0 if empty or
 * invalid (then the limit is off, with a message). */
static off_t
sws_http_limit_rate_eval(sws_http_request_t *r, sws_http_format_t *f, const char *what)
{
    sws_str_t  v;
    ssize_t    n;
    u_char     buf[64];

    if (sws_http_format_string(f, r, NULL, 0, buf, sizeof(buf), &v) != SWS_OK
        || v.len == 0)
    {
        return 0;
    }
    n = sws_parse_size(&v);
    if (n == SWS_ERROR) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "invalid %s \"%.*s\": not limited", what,
                      (int) v.len, v.data);
        return 0;
    }
    return (off_t) n;
}

/* A map's $limit_rate: its value as a size (0: none). */
static off_t
sws_http_limit_rate_map(sws_http_request_t *r, const void *map)
{
    sws_str_t  v;
    ssize_t    n;

    sws_http_variable_ext_value(r, map, &v);
    if (v.len == 0) {
        return 0;
    }
    n = sws_parse_size(&v);
    if (n == SWS_ERROR) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "invalid $limit_rate \"%.*s\": not limited",
                      (int) v.len, v.data);
        return 0;
    }
    return (off_t) n;
}

off_t
sws_http_limit_rate(sws_http_request_t *r)
{
    sws_http_core_loc_conf_t *clcf;
    const void               *map;

    if (!r->limit_rate_set) {
        if (r->loc_conf == NULL) {
            return 0;              /* not located (a request a module made) */
        }
        clcf = sws_http_core_loc(r);
        map = r->main_conf ? sws_http_core_main(r)->limit_rate_map : NULL;
        r->limit_rate = clcf->limit_rate
                        ? sws_http_limit_rate_eval(r, clcf->limit_rate, "limit_rate")
                        : map ? sws_http_limit_rate_map(r, map) : 0;
        r->limit_rate_set = 1;
    }
    return r->limit_rate;
}

void
sws_http_limit_rate_set_text(sws_http_request_t *r, const sws_str_t *text)
{
    ssize_t  n = sws_parse_size(text);

    if (n == SWS_ERROR) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "invalid $limit_rate \"%.*s\": not changed",
                      (int) text->len, text->data);
        return;
    }
    sws_http_set_limit_rate(r, (off_t) n);
}

void
sws_http_set_limit_rate(sws_http_request_t *r, off_t rate)
{
    r->limit_rate = rate > 0 ? rate : 0;
    r->limit_rate_set = 1;
}

void
sws_http_set_limit_rate_after(sws_http_request_t *r, off_t after)
{
    r->limit_rate_after = after > 0 ? after : 0;
    r->limit_rate_after_set = 1;
}

/* sws_http_limit_rate_allow's rest (sws_http_limit_rate.h): a rate that
 * may be set. */
off_t
sws_http_limit_rate_pace(sws_http_request_t *r, off_t sent, sws_msec_t *delay)
{
    sws_http_core_loc_conf_t *clcf;
    off_t                     rate = sws_http_limit_rate(r), allowed;
    sws_msec_t                elapsed;

    *delay = 0;
    if (rate == 0) {
        return -1;
    }
    if (!r->limit_rate_after_set) {
        clcf = sws_http_core_loc(r);
        r->limit_rate_after = clcf->limit_rate_after
                              ? sws_http_limit_rate_eval(r, clcf->limit_rate_after,
                                                         "limit_rate_after")
                              : 0;
        r->limit_rate_after_set = 1;
    }
    elapsed = sws_current_msec() - r->start_msec;
    if (elapsed < 0) {
        elapsed = 0;
    }
    allowed = r->limit_rate_after + rate * (elapsed + 1000) / 1000 - sent;
    if (allowed > 0) {
        return allowed;
    }
    /* Until the rate has made room for at least one byte. */
    *delay = (sws_msec_t) ((-allowed + 1) * 1000 / rate) + 1;
    return 0;
}

/* limit_rate SIZE|FORMAT; limit_rate_after SIZE|FORMAT; (a constant is
 * checked here, at its line) */
char *
sws_http_limit_rate_set_slot(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_format_t **fp = (sws_http_format_t **) ((u_char *) conf + cmd->offset);
    sws_str_t          *arg = sws_conf_arg(cf, 1);
    const char         *err = NULL;

    if (*fp != NULL) {
        return "is duplicate";
    }
    *fp = sws_http_format_compile(sws_conf_pool(cf), arg, SWS_HTTP_ESCAPE_NONE, &err);
    if (*fp == NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s in \"%s\"", err ? err : "invalid value",
                           cmd->name);
        return SWS_CONF_ERROR;
    }
    if (sws_http_format_is_static(*fp) && sws_parse_size(arg) == SWS_ERROR) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"%s\" directive",
                           (int) arg->len, arg->data, cmd->name);
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}
