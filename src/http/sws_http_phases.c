/*
 * The phase engine. Modules register their phase handlers with a phase, an
 * order within it and a test of where they have work; at configuration
 * time every location (server level, if block, limit_except block) gets a
 * flat array of the handlers that have work there, in the order of the
 * phases (the table below, not the enum's values) and of the handlers. A
 * request walks its location's array by index.
 */
#include <stdlib.h>
#include "sws_http_core.h"
#include "sws_conn_stats.h"

/* The phases in the order they run; a step's phase is its position here. */
static const sws_http_phase_t sws_http_phase_order[] = {
    SWS_HTTP_POST_READ_PHASE,
    SWS_HTTP_SERVER_REWRITE_PHASE,
    SWS_HTTP_FIND_LOCATION_PHASE,
    SWS_HTTP_REWRITE_PHASE,
    SWS_HTTP_PREACCESS_PHASE,
    SWS_HTTP_ACCESS_PHASE,
    SWS_HTTP_PRE_CONTENT_PHASE,
    SWS_HTTP_CONTENT_PHASE,
    SWS_HTTP_LOG_PHASE,
};

enum {
    SWS_HTTP_POS_FIND_LOCATION = 2,
    SWS_HTTP_POS_PREACCESS = 4,
    SWS_HTTP_POS_ACCESS = 5,
    SWS_HTTP_POS_CONTENT = 7,
    SWS_HTTP_POS_LOG = 8,
    SWS_HTTP_POSITIONS = 9
};

#define SWS_HTTP_STEP_KEY(pos, rank)  (((uint32_t) (pos) << 16) | (uint32_t) (rank))


static sws_uint_t
sws_http_phase_position(sws_http_phase_t phase)
{
    sws_uint_t p;

    for (p = 0; p < SWS_HTTP_POSITIONS; p++) {
        if (sws_http_phase_order[p] == phase) {
            return p;
        }
    }
    return SWS_HTTP_POSITIONS;
}


int
sws_http_phase_known(sws_http_phase_t phase)
{
    return sws_http_phase_position(phase) < SWS_HTTP_POSITIONS;
}


/* ---- compiling --------------------------------------------------------- */

static int
sws_http_phase_reg_cmp(const void *one, const void *two)
{
    const sws_http_phase_reg_t *a = one, *b = two;
    sws_uint_t                  pa = sws_http_phase_position(a->h.phase);
    sws_uint_t                  pb = sws_http_phase_position(b->h.phase);
    int                         c;

    if (pa != pb) {
        return pa < pb ? -1 : 1;
    }
    if (a->h.order != b->h.order) {
        return a->h.order < b->h.order ? -1 : 1;
    }
    c = strcmp(a->module_name, b->module_name);
    if (c) {
        return c;
    }
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* The engine of one level: loc_conf its confs, or NULL for every handler. */
static sws_http_phase_engine_t *
sws_http_phase_engine_build(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf, void **loc_conf)
{
    sws_http_phase_reg_t    *regs = cmcf->phase_handlers.elts;
    sws_http_phase_engine_t *pe;
    sws_http_phase_step_t   *st;
    sws_uint_t               n = cmcf->phase_handlers.nelts, i, k = 0, nlog = 0, pos;
    sws_uint_t               start[SWS_HTTP_POSITIONS + 1];
    const sws_http_phase_handler_t *h;

    pe = sws_pcalloc(cf->pool, sizeof(sws_http_phase_engine_t));
    st = sws_pcalloc(cf->pool, sizeof(sws_http_phase_step_t) * (n + 2));
    pe->log = sws_pcalloc(cf->pool, sizeof(sws_http_handler_pt) * (n + 1));
    if (pe == NULL || st == NULL || pe->log == NULL) {
        return NULL;
    }
    pe->steps = st;
    i = 0;
    for (pos = 0; pos < SWS_HTTP_POSITIONS; pos++) {
        start[pos] = k;
        if (pos == SWS_HTTP_POS_FIND_LOCATION) {
            st[k].marks = SWS_HTTP_STEP_FIND_LOCATION;
            st[k].key = SWS_HTTP_STEP_KEY(pos, 0);
            st[k++].phase = (uint8_t) pos;
        }
        for ( ; i < n && sws_http_phase_position(regs[i].h.phase) == pos; i++) {
            h = &regs[i].h;
            if (loc_conf && h->active && !h->active(loc_conf[h->module->index])) {
                continue;              /* not configured here: costs nothing */
            }
            if (pos == SWS_HTTP_POS_LOG) {
                pe->log[nlog++] = h->handler;
                continue;
            }
            st[k].handler = h->handler;
            st[k].key = SWS_HTTP_STEP_KEY(pos, i + 1);
            st[k++].phase = (uint8_t) pos;
        }
    }
    start[SWS_HTTP_POSITIONS] = k;
    st[k].key = SWS_HTTP_STEP_KEY(SWS_HTTP_POS_LOG, 0);
    st[k].phase = SWS_HTTP_POS_LOG;
    st[k].marks = SWS_HTTP_STEP_END;
    st[k].next = (uint16_t) k;
    for (pos = 0; pos < SWS_HTTP_POS_LOG; pos++) {
        for (i = start[pos]; i < start[pos + 1]; i++) {
            st[i].next = (uint16_t) start[pos + 1];
        }
    }
    /* several marks may fall on one step (empty phases): the runner takes
     * them in this order */
    if (start[SWS_HTTP_POS_PREACCESS] < start[SWS_HTTP_POS_ACCESS + 1]) {
        st[start[SWS_HTTP_POS_PREACCESS]].marks |= SWS_HTTP_STEP_PREACCESS;
    }
    st[start[SWS_HTTP_POS_ACCESS]].marks |= SWS_HTTP_STEP_ACCESS_START;
    st[start[SWS_HTTP_POS_ACCESS + 1]].marks |= SWS_HTTP_STEP_ACCESS_END;
    st[start[SWS_HTTP_POS_CONTENT]].marks |= SWS_HTTP_STEP_CONTENT;
    pe->server_rewrite_index = (uint16_t) start[1];
    pe->find_location_index = (uint16_t) start[SWS_HTTP_POS_FIND_LOCATION];
    pe->rewrite_index = (uint16_t) start[SWS_HTTP_POS_FIND_LOCATION + 1];
    pe->access_end_index = (uint16_t) start[SWS_HTTP_POS_ACCESS + 1];
    return pe;
}

/* A level and what is nested in it (if blocks, limit_except blocks). */
static sws_int_t
sws_http_phase_engine_tree(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf,
    sws_http_core_loc_conf_t *clcf)
{
    sws_http_core_loc_conf_t **nested;
    sws_uint_t                 i;

    if (clcf == NULL || clcf->engine) {
        return SWS_OK;
    }
    clcf->engine = sws_http_phase_engine_build(cf, cmcf, clcf->loc_conf);
    if (clcf->engine == NULL
        || sws_http_phase_engine_tree(cf, cmcf, clcf->limit_except_loc) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (clcf->nested) {
        nested = clcf->nested->elts;
        for (i = 0; i < clcf->nested->nelts; i++) {
            if (sws_http_phase_engine_tree(cf, cmcf, nested[i]) != SWS_OK) {
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}

sws_int_t
sws_http_phase_engine_init(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf)
{
    sws_http_core_srv_conf_t **servers = cmcf->servers.elts;
    sws_http_core_loc_conf_t **locs, *clcf;
    sws_uint_t                 s, i;

    if (cmcf->phase_handlers.nelts > 0xfff0) {
        return SWS_ERROR;
    }
    qsort(cmcf->phase_handlers.elts, cmcf->phase_handlers.nelts,
          sizeof(sws_http_phase_reg_t), sws_http_phase_reg_cmp);

    cmcf->engine = sws_http_phase_engine_build(cf, cmcf, NULL);
    if (cmcf->engine == NULL) {
        return SWS_ERROR;
    }
    for (s = 0; s < cmcf->servers.nelts; s++) {
        clcf = servers[s]->ctx->loc_conf[sws_http_core_module.index];
        if (sws_http_phase_engine_tree(cf, cmcf, clcf) != SWS_OK) {
            return SWS_ERROR;
        }
        locs = servers[s]->location_list.elts;
        for (i = 0; i < servers[s]->location_list.nelts; i++) {
            if (sws_http_phase_engine_tree(cf, cmcf, locs[i]) != SWS_OK) {
                return SWS_ERROR;
            }
        }
    }
    return SWS_OK;
}


/* ---- running ----------------------------------------------------------- */

static inline const sws_http_phase_engine_t *
sws_http_loc_engine(sws_http_request_t *r)
{
    const sws_http_phase_engine_t *pe = sws_http_core_loc(r)->engine;

    return sws_likely(pe != NULL) ? pe : sws_http_core_main(r)->engine;
}

/* r goes on in pe (its location's engine) at the first step whose place
 * in the order of all handlers is key or later. */
static void
sws_http_phase_rebase(sws_http_request_t *r, const sws_http_phase_engine_t *pe, uint32_t key)
{
    sws_uint_t i = 0;

    while (!(pe->steps[i].marks & SWS_HTTP_STEP_END) && pe->steps[i].key < key) {
        i++;
    }
    r->phase_engine = pe;
    r->phase_handler = i;
}

void
sws_http_run_phases_from(sws_http_request_t *r, sws_http_phase_t phase)
{
    const sws_http_phase_engine_t *pe = sws_http_loc_engine(r);

    r->phase_engine = pe;
    switch (phase) {
    case SWS_HTTP_POST_READ_PHASE:
        r->phase_handler = 0;
        break;
    case SWS_HTTP_SERVER_REWRITE_PHASE:
        r->phase_handler = pe->server_rewrite_index;
        break;
    case SWS_HTTP_FIND_LOCATION_PHASE:
        r->phase_handler = pe->find_location_index;
        break;
    default:
        r->phase_handler = pe->rewrite_index;
        break;
    }
    sws_http_core_run_phases(r);
}

/* The find-location step: SWS_OK with r in the location found, its
 * engine's REWRITE phase next, or a status. */
static sws_int_t
sws_http_find_location_step(sws_http_request_t *r)
{
    sws_int_t rc = sws_http_update_location(r);

    if (rc != SWS_OK) {
        return rc;
    }
    if (!r->internal && sws_http_core_loc(r)->internal) {
        return SWS_HTTP_NOT_FOUND;       /* "internal": not for clients */
    }
    r->phase_engine = sws_http_loc_engine(r);
    r->phase_handler = r->phase_engine->rewrite_index;
    return SWS_OK;
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
 * Returns the next step's index, or SWS_DONE when r was finalised or
 * suspended.
 */
static sws_int_t
sws_http_access_step(sws_http_request_t *r, const sws_http_phase_step_t *st, sws_uint_t i,
    sws_int_t rc)
{
    if (sws_http_core_loc(r)->satisfy == SWS_HTTP_SATISFY_ALL) {
        if (rc == SWS_OK || rc == SWS_DECLINED) {
            return (sws_int_t) i + 1;
        }
    } else {
        if (rc == SWS_OK) {
            if (r->access_code == SWS_HTTP_UNAUTHORIZED) {
                /* an earlier check's challenge does not go with the
                 * answer this one allowed (nginx drops it too) */
                sws_http_header_out_remove(r, "WWW-Authenticate", 16);
            }
            r->access_code = 0;
            return (sws_int_t) st->next;
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

/* What a step's marks ask before its handler runs: SWS_OK to run it,
 * SWS_AGAIN when r moved on (run the loop again from r->phase_handler), SWS_DONE when r was
 * finalised. */
static sws_int_t
sws_http_phase_marks(sws_http_request_t *r, const sws_http_phase_step_t *st)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_int_t                 rc;

    /* (one test for both: a location without limits or access checks
     * pays nothing for subrequests) */
    if (st->marks & (SWS_HTTP_STEP_FIND_LOCATION | SWS_HTTP_STEP_PREACCESS)) {
        if (st->marks & SWS_HTTP_STEP_FIND_LOCATION) {
            rc = sws_http_find_location_step(r);
            if (rc == SWS_OK) {
                return SWS_AGAIN;
            }
            sws_http_finalize(r, rc);
            return SWS_DONE;
        }
        if (sws_http_is_subrequest(r)) {
            /* A subrequest runs no limits and no access checks (nginx's):
             * its parent passed them; an auth_request's own location
             * would otherwise ask itself. */
            r->phase_handler = r->phase_engine->access_end_index;
            return SWS_AGAIN;
        }
    }
    if (st->marks & SWS_HTTP_STEP_ACCESS_START) {
        r->access_code = 0;
    }
    if ((st->marks & SWS_HTTP_STEP_ACCESS_END) && r->access_code) {
        /* satisfy any, and no check said yes */
        rc = (sws_int_t) r->access_code;
        r->access_code = 0;
        sws_http_finalize(r, rc);
        return SWS_DONE;
    }
    if ((st->marks & SWS_HTTP_STEP_CONTENT) && clcf->handler) {
        sws_http_finalize(r, clcf->handler(r));
        return SWS_DONE;
    }
    if (st->marks & SWS_HTTP_STEP_END) {
        /* No content handler answered: for a directory (the index handler
         * found no index file) the listing module, else 403, as nginx. */
        sws_http_finalize(r, sws_http_no_content(r));
        return SWS_DONE;
    }
    return SWS_OK;
}

/* After a handler moved r into another location (an "if" block): on at
 * the same place among that location's handlers. SWS_OK to go on. */
static sws_int_t
sws_http_phase_moved(sws_http_request_t *r, const sws_http_phase_step_t *st, sws_int_t rc)
{
    uint32_t key;

    if (rc == SWS_DECLINED) {
        key = st->key + 1;
    } else if (rc == SWS_AGAIN) {
        key = st->key;                                   /* this handler again */
    } else if (rc == SWS_OK) {
        key = SWS_HTTP_STEP_KEY(st->phase + 1, 0);       /* the next phase */
    } else {
        sws_http_finalize(r, rc);
        return SWS_DONE;
    }
    sws_http_phase_rebase(r, sws_http_loc_engine(r), key);
    return rc == SWS_AGAIN ? SWS_DONE : SWS_OK;
}

/* r's engine, after r was moved to another level since its step was set
 * (while it was suspended): the same place there. */
static const sws_http_phase_engine_t *
sws_http_phase_resync(sws_http_request_t *r)
{
    const sws_http_phase_engine_t *pe = sws_http_loc_engine(r);

    if (sws_unlikely(pe != r->phase_engine)) {
        sws_http_phase_rebase(r, pe, r->phase_engine
                                     ? r->phase_engine->steps[r->phase_handler].key : 0);
    }
    return pe;
}

/* Walk r's location's engine from r->phase_handler until a handler
 * suspends the request or the content phase finishes it. The engine and
 * the step stay in registers while the request stays at its level. */
void
sws_http_core_run_phases(sws_http_request_t *r)
{
    const sws_http_phase_engine_t *pe = sws_http_phase_resync(r);
    const sws_http_phase_step_t   *st;
    void                         **level = r->loc_conf;   /* each level has its own */
    sws_int_t                      rc;
    sws_uint_t                     i = r->phase_handler;

    for ( ;; ) {
        st = &pe->steps[i];
        r->phase_handler = i;

        if (st->marks) {
            rc = sws_http_phase_marks(r, st);
            if (rc == SWS_DONE) {
                return;
            }
            if (rc == SWS_AGAIN) {     /* a location was found, or skipped to */
                pe = r->phase_engine;
                level = r->loc_conf;
                i = r->phase_handler;
                continue;
            }
        }

        rc = st->handler(r);

        /* SWS_DONE: r may be gone (finalized, its connection closed) */
        if (rc != SWS_DONE && sws_unlikely(r->loc_conf != level)) {
            if (sws_http_phase_moved(r, st, rc) != SWS_OK) {
                return;
            }
            pe = r->phase_engine;
            level = r->loc_conf;
            i = r->phase_handler;
            continue;
        }
        if (st->phase == SWS_HTTP_POS_ACCESS) {
            rc = sws_http_access_step(r, st, i, rc);
            if (rc == SWS_DONE) {
                return;
            }
            i = (sws_uint_t) rc;
            continue;
        }
        if (rc == SWS_DECLINED) {
            i++;
            continue;
        }
        if (st->phase == SWS_HTTP_POS_CONTENT) {
            sws_http_finalize(r, rc);
            return;
        }
        if (rc == SWS_OK) {
            i = st->next;
            continue;
        }
        if (rc != SWS_AGAIN && rc != SWS_DONE) {
            sws_http_finalize(r, rc);
        }
        return;
    }
}

void
sws_http_run_phases(sws_http_request_t *r)
{
    sws_http_core_run_phases(r);
}

/* Run the LOG phase handlers of r's location once. */
void
sws_http_log_request(sws_http_request_t *r)
{
    sws_http_handler_pt *h;

    sws_uint_t           cls;

    if (r->logged || r->main_conf == NULL) {
        return;
    }
    r->logged = 1;
    /* The status class and the bytes (sws_status_t): 0 and the statuses
     * out of 100..599 (a head broken off) are the client's, 4xx. */
    cls = r->status / 100 - 1;
    if (sws_unlikely(cls > 4)) {
        cls = 3;
    }
    sws_conn_stat_plain(responses[cls], 1);
    sws_conn_stat_plain(bytes_in, r->head_length + (r->body ? r->body->received : 0));
    sws_conn_stat_plain(bytes_out, r->proto->bytes_sent(r));
    for (h = sws_http_loc_engine(r)->log; *h; h++) {
        (*h)(r);
    }
}
