/*
 * The phase engine: every phase's handlers compiled into one flat array at
 * configuration time; a request walks it by index.
 */
#include "sws_http_core.h"

static sws_int_t sws_http_find_location_handler(sws_http_request_t *r);

sws_int_t
sws_http_phase_engine_init(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf)
{
    sws_http_phase_engine_t *pe = &cmcf->engine;
    sws_uint_t               p, i, n = 1, k = 0, first;
    sws_http_handler_pt     *hs;

    for (p = 0; p < SWS_HTTP_PHASE_COUNT; p++) {
        n += cmcf->phases[p].nelts;
    }
    n++;   /* FIND_LOCATION */

    pe->handlers = sws_pcalloc(cf->pool, sizeof(sws_http_handler_pt) * (n + 1));
    pe->next = sws_pcalloc(cf->pool, sizeof(sws_uint_t) * (n + 1));
    pe->phase_of = sws_pcalloc(cf->pool, sizeof(sws_http_phase_t) * (n + 1));
    if (pe->handlers == NULL || pe->next == NULL || pe->phase_of == NULL) {
        return SWS_ERROR;
    }

    for (p = 0; p < SWS_HTTP_PHASE_COUNT; p++) {
        first = k;
        if (p == SWS_HTTP_SERVER_REWRITE_PHASE) {
            pe->server_rewrite_index = k;
        }
        if (p == SWS_HTTP_CONTENT_PHASE) {
            pe->content_index = k;
        }
        if (p == SWS_HTTP_LOG_PHASE) {
            pe->log_index = k;
        }
        if (p == SWS_HTTP_REWRITE_PHASE) {
            pe->rewrite_index = k;
        }
        if (p == SWS_HTTP_ACCESS_PHASE) {
            pe->access_index = k;
        }
        if (p == SWS_HTTP_FIND_LOCATION_PHASE) {
            pe->find_location_index = k;
            pe->handlers[k] = sws_http_find_location_handler;
            pe->phase_of[k++] = p;
        } else {
            hs = cmcf->phases[p].elts;
            for (i = 0; i < cmcf->phases[p].nelts; i++) {
                pe->handlers[k] = hs[i];
                pe->phase_of[k++] = p;
            }
        }
        for (i = first; i < k; i++) {
            pe->next[i] = k;
        }
    }
    pe->handlers[k] = NULL;
    pe->next[k] = k;
    return SWS_OK;
}

static sws_int_t
sws_http_find_location_handler(sws_http_request_t *r)
{
    sws_int_t rc = sws_http_update_location(r);

    if (rc == SWS_OK && !r->internal && sws_http_core_loc(r)->internal) {
        return SWS_HTTP_NOT_FOUND;       /* "internal": not for clients */
    }
    return rc;
}

static sws_int_t
sws_http_no_content(sws_http_request_t *r)
{
    sws_http_core_main_conf_t *cmcf = sws_http_core_main(r);
    sws_str_t                  path;
    size_t                     root_len;
    sws_int_t                  rc;

    if (r->uri.len == 0 || r->uri.data[r->uri.len - 1] != '/') {
        return SWS_HTTP_NOT_FOUND;
    }
    if (cmcf->directory_handler) {
        /* after every content handler, as nginx's autoindex after index */
        rc = cmcf->directory_handler(r);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) == SWS_OK) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "directory index of \"%s\" is forbidden",
                      path.data);
    }
    return SWS_HTTP_FORBIDDEN;
}

/*
 * The access phase combines its checks (access, auth_basic, ...) as the
 * location's "satisfy" says, as nginx does. all: each check runs, SWS_OK
 * and SWS_DECLINED go on to the next, anything else ends the request.
 * any: the first SWS_OK lets the request through; a 403 or 401 is kept
 * (a 401 wins, so that the client is asked for credentials) and the next
 * check runs; when none said yes, the kept status ends the request.
 * Returns the next handler's index, or SWS_DONE when r was finalised
 * or suspended.
 */
static sws_int_t
sws_http_access_step(sws_http_request_t *r, sws_http_phase_engine_t *pe, sws_uint_t i,
    sws_int_t rc)
{
    if (sws_http_core_loc(r)->satisfy == SWS_HTTP_SATISFY_ALL) {
        if (rc == SWS_OK || rc == SWS_DECLINED) {
            return (sws_int_t) i + 1;
        }
    } else {
        if (rc == SWS_OK) {
            r->access_code = 0;
            return (sws_int_t) pe->next[i];
        }
        if (rc == SWS_DECLINED) {
            return (sws_int_t) i + 1;
        }
        if (rc == SWS_HTTP_FORBIDDEN || rc == SWS_HTTP_UNAUTHORIZED) {
            if (r->access_code != SWS_HTTP_UNAUTHORIZED) {
                r->access_code = (sws_uint_t) rc;
            }
            return (sws_int_t) i + 1;
        }
    }
    if (rc != SWS_AGAIN && rc != SWS_DONE) {
        sws_http_finalize(r, rc);
    }
    return SWS_DONE;
}

/* Walk the engine from r->phase_handler until a handler suspends the request
 * or the content phase finishes it. */
void
sws_http_core_run_phases(sws_http_request_t *r)
{
    sws_http_phase_engine_t  *pe = &sws_http_core_main(r)->engine;
    sws_http_core_loc_conf_t *clcf;
    sws_http_handler_pt       h;
    sws_int_t                 rc;
    sws_uint_t                i;

    for ( ;; ) {
        i = r->phase_handler;

        if (i == pe->access_index) {
            r->access_code = 0;
        }
        if (r->access_code && pe->phase_of[i] != SWS_HTTP_ACCESS_PHASE) {
            /* satisfy any, and no check said yes */
            rc = (sws_int_t) r->access_code;
            r->access_code = 0;
            sws_http_finalize(r, rc);
            return;
        }

        if (i == pe->content_index) {
            clcf = sws_http_core_loc(r);
            if (clcf->handler) {
                sws_http_finalize(r, clcf->handler(r));
                return;
            }
        }

        h = pe->handlers[i];
        if (h == NULL || pe->phase_of[i] >= SWS_HTTP_LOG_PHASE) {
            /* No content handler answered: for a directory (the index
             * handler found no index file) the listing module, else 403,
             * as nginx. */
            sws_http_finalize(r, sws_http_no_content(r));
            return;
        }

        rc = h(r);

        if (pe->phase_of[i] == SWS_HTTP_ACCESS_PHASE) {
            rc = sws_http_access_step(r, pe, i, rc);
            if (rc == SWS_DONE) {
                return;
            }
            r->phase_handler = (sws_uint_t) rc;
            continue;
        }
        if (rc == SWS_DECLINED) {
            r->phase_handler = i + 1;
            continue;
        }
        if (pe->phase_of[i] == SWS_HTTP_CONTENT_PHASE) {
            sws_http_finalize(r, rc);
            return;
        }
        if (rc == SWS_OK) {
            r->phase_handler = pe->next[i];
            continue;
        }
        if (rc == SWS_AGAIN || rc == SWS_DONE) {
            return;
        }
        sws_http_finalize(r, rc);
        return;
    }
}

void
sws_http_run_phases(sws_http_request_t *r)
{
    sws_http_core_run_phases(r);
}

/* Run the LOG phase handlers once. */
void
sws_http_log_request(sws_http_request_t *r)
{
    sws_http_phase_engine_t *pe;
    sws_uint_t               i;

    if (r->logged || r->main_conf == NULL) {
        return;
    }
    r->logged = 1;
    pe = &sws_http_core_main(r)->engine;
    for (i = pe->log_index; pe->handlers[i]; i++) {
        pe->handlers[i](r);
    }
}
