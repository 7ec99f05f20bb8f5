/*
 * Running a rewrite script: each operation in order, the "if" blocks'
 * scripts inline when their condition holds. Everything here is
 * synchronous (conditions stat local files at most), so a script runs
 * within one call of the phase handler and keeps no state in the request.
 */
#include "sws_rewrite.h"


sws_int_t
sws_rewrite_render(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out)
{
    if (sws_http_format_string(f, r, sws_http_pool(r), 1, NULL, 0, out) != SWS_OK) {
        return SWS_ERROR;
    }
    out->data[out->len] = '\0';
    return SWS_OK;
}


static int
sws_rewrite_logging(sws_http_request_t *r)
{
    const sws_rewrite_loc_conf_t *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf->log == 1;
}


/* The URL of a redirect: the replacement, then the request's arguments
 * unless it ended with '?' ("&" when it has arguments of its own). */
static sws_int_t
sws_rewrite_redirect(sws_http_request_t *r, const sws_rewrite_op_t *op, const sws_str_t *res)
{
    const sws_str_t  *args = sws_http_args(r);
    sws_str_t        *loc;
    u_char           *p;
    int               append = !op->drop_args && args->len > 0;

    loc = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + res->len + 1 + args->len);
    if (loc == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    loc->data = (u_char *) (loc + 1);
    p = sws_cpymem(loc->data, res->data, res->len);
    if (append) {
        *p++ = memchr(res->data, '?', res->len) ? '&' : '?';
        p = sws_cpymem(p, args->data, args->len);
    }
    loc->len = (size_t) (p - loc->data);
    if (loc->len == 0) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "the rewritten URI has a zero length");
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_rewrite_logging(r)) {
        sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0, "rewritten redirect: \"%.*s\"",
                      (int) loc->len, loc->data);
    }
    sws_http_set_location(r, loc);
    return op->flag == SWS_REWRITE_FLAG_PERMANENT ? SWS_HTTP_MOVED_PERMANENTLY
                                                  : SWS_HTTP_MOVED_TEMPORARILY;
}


/* rewrite REGEX REPLACEMENT [flag]: SWS_DECLINED no match (go on), SWS_OK
 * rewritten, SWS_AGAIN rewritten and stop (last/break), else a status. */
static sws_int_t
sws_rewrite_rewrite(sws_http_request_t *r, const sws_rewrite_op_t *op)
{
    const sws_str_t  *uri = sws_http_uri(r), *oargs = sws_http_args(r);
    sws_str_t         res, nuri, nargs, *a;
    sws_int_t         rc;
    u_char           *q, *p;

    rc = sws_http_regex_exec(r, op->re, uri);
    if (rc == SWS_ERROR) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_rewrite_logging(r)) {
        sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0, "\"%.*s\" %s \"%.*s\"",
                      (int) op->pattern.len, op->pattern.data,
                      rc == SWS_DECLINED ? "does not match" : "matches",
                      (int) uri->len, uri->data);
    }
    if (rc == SWS_DECLINED) {
        return SWS_DECLINED;
    }
    if (sws_rewrite_render(r, op->value, &res) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (op->drop_args && res.len && res.data[res.len - 1] == '?') {
        res.len--;
    }
    if (op->redirect) {
        return sws_rewrite_redirect(r, op, &res);
    }

    /* an internal rewrite: "/new?a=1" takes a=1 (and the old arguments
     * after it, unless the replacement ended with '?') */
    nuri = res;
    a = NULL;
    q = memchr(res.data, '?', res.len);
    if (q != NULL) {
        nuri.len = (size_t) (q - res.data);
        nargs.data = q + 1;
        nargs.len = (size_t) (res.data + res.len - q - 1);
        if (!op->drop_args && oargs->len) {
            p = sws_pnalloc(sws_http_pool(r), nargs.len + 1 + oargs->len);
            if (p == NULL) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            nargs.data = p;
            p = sws_cpymem(p, q + 1, (size_t) (res.data + res.len - q - 1));
            *p++ = '&';
            p = sws_cpymem(p, oargs->data, oargs->len);
            nargs.len = (size_t) (p - nargs.data);
        }
        a = &nargs;
    } else if (op->drop_args) {
        nargs.data = res.data + res.len;
        nargs.len = 0;
        a = &nargs;
    }
    rc = sws_http_rewrite_uri(r, &nuri, a);
    if (rc != SWS_OK) {
        return rc;
    }
    if (sws_rewrite_logging(r)) {
        sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0,
                      "rewritten data: \"%.*s\", args: \"%.*s\"", (int) nuri.len, nuri.data,
                      (int) sws_http_args(r)->len, sws_http_args(r)->data);
    }
    return (op->flag == SWS_REWRITE_FLAG_LAST || op->flag == SWS_REWRITE_FLAG_BREAK)
           ? SWS_AGAIN : SWS_OK;
}


static int
sws_rewrite_is_redirect(sws_uint_t status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}


/* return CODE [TEXT|URL]: the response is this request's. */
sws_int_t
sws_rewrite_return(sws_http_request_t *r, const sws_rewrite_op_t *op)
{
    sws_int_t   rc;
    sws_str_t  *text;

    if (op->status == SWS_HTTP_CLOSE) {
        return SWS_HTTP_CLOSE;
    }
    if (op->fixed == NULL && op->value == NULL) {
        /* >= 400: the error page. The body is left for now, as nginx: an
         * error_page may hand it on (to a proxy); the core drops it at the
         * request's end otherwise. */
        return (sws_int_t) op->status;
    }
    rc = sws_http_discard_body(r);
    if (rc != SWS_OK && rc != SWS_AGAIN) {
        return rc;
    }
    if (op->fixed != NULL) {
        sws_http_finalize(r, sws_http_send_fixed(r, op->fixed));
        return SWS_DONE;
    }
    text = sws_palloc(sws_http_pool(r), sizeof(sws_str_t));
    if (text == NULL || sws_rewrite_render(r, op->value, text) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_rewrite_is_redirect(op->status)) {
        sws_http_set_location(r, text);
        return (sws_int_t) op->status;      /* a page, Location kept */
    }
    sws_http_finalize(r, sws_http_send_response(r, op->status,
                                                sws_http_mime_type(r, sws_http_exten(r)),
                                                text));
    return SWS_DONE;
}


sws_int_t
sws_rewrite_run(sws_http_request_t *r, const sws_rewrite_loc_conf_t *lcf, int *changed)
{
    const sws_rewrite_op_t  *op, *end;
    sws_str_t                v;
    sws_int_t                rc;

    op = lcf->ops->elts;
    end = op + lcf->ops->nelts;

    for ( ; op < end; op++) {
        switch (op->kind) {

        case SWS_REWRITE_SET:
            if (sws_rewrite_render(r, op->value, &v) != SWS_OK
                || sws_http_variable_set(r, op->index, &v) != SWS_OK)
            {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            break;

        case SWS_REWRITE_REWRITE:
            rc = sws_rewrite_rewrite(r, op);
            if (rc == SWS_DECLINED) {
                break;
            }
            if (rc == SWS_OK || rc == SWS_AGAIN) {
                *changed = 1;
                if (rc == SWS_AGAIN) {
                    return op->flag == SWS_REWRITE_FLAG_BREAK ? SWS_OK : SWS_AGAIN;
                }
                break;
            }
            return rc;

        case SWS_REWRITE_RETURN:
            return sws_rewrite_return(r, op);

        case SWS_REWRITE_IF:
            rc = sws_rewrite_cond_eval(r, op->cond);
            if (rc == SWS_ERROR) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            if (sws_rewrite_logging(r)) {
                sws_log_error(SWS_LOG_NOTICE, sws_http_log(r), 0, "if %.*s: %s",
                              (int) op->cond->text.len, op->cond->text.data,
                              rc ? "true" : "false");
            }
            if (!rc) {
                break;
            }
            /* the block's configuration is the request's from now on */
            rc = sws_http_enter_location(r, op->loc);
            if (rc != SWS_OK) {
                return rc;
            }
            if (op->body->ops != NULL) {
                rc = sws_rewrite_run(r, op->body, changed);
                if (rc != SWS_DECLINED) {
                    return rc;
                }
            }
            break;

        default:                              /* SWS_REWRITE_BREAK */
            return SWS_OK;
        }
    }
    return SWS_DECLINED;
}
