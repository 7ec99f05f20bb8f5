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
        if (p == SWS_HTTP_FIND_LOCATION_PHASE) {
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
