/*
 * The response head: reading it into the head buffer, the protocol parsing
 * it, what a status means (another server? an intercepted error? an
 * upgrade?), retries on the next server and their rules, and the headers
 * the protocols hand over.
 */
#include "sws_http_upstream.h"

#define SWS_UPS_STALE_RETRIES  4

static void sws_ups_process_header(sws_http_upstream_t *u);

static sws_int_t
sws_ups_head_buffer(sws_http_upstream_t *u)
{
    sws_buf_t *b = &u->head;
    size_t     size = u->conf->head_buffer_size;

    if (b->start == NULL) {
        b->start = sws_ups_buf_alloc(size, u->r->log);
        if (b->start == NULL) {
            return SWS_ERROR;
        }
        b->pos = b->last = b->start;
        b->end = b->start + size;
        b->temporary = 1;
        b->fd = -1;
    }
    return SWS_OK;
}

/* The connection failed before any byte of a response came: a reused one
 * was probably closed by the server meanwhile; try a fresh one, without
 * counting it as a failure (only when the request may be sent again). */
int
sws_ups_stale(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;

    if (!u->reused || u->head.last != u->head.start || u->body_pulled
        || u->stale_retries >= SWS_UPS_STALE_RETRIES
        || (u->sent_any && !(r->method & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_OPTIONS
                                          | SWS_HTTP_PUT | SWS_HTTP_DELETE | SWS_HTTP_TRACE))))
    {
        return 0;
    }
    u->stale_retries++;
    sws_ups_close_connection(u);
    sws_ups_stats_attempt_end(u, 0);
    u->tried[u->peer->index / 64] &= ~((uint64_t) 1 << (u->peer->index % 64));
    if (u->nattempts) {
        u->nattempts--;              /* not an attempt of its own */
    }
    sws_ups_connect_peer(u);
    return 1;
}

void
sws_ups_read_header(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;
    sws_connection_t   *c = u->c;
    sws_buf_t          *b;
    ssize_t             n;
    sws_int_t           rc;

    if (sws_ups_head_buffer(u) != SWS_OK) {
        sws_ups_finalize(u, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    b = &u->head;

    for ( ;; ) {
        if (b->last == b->end) {
            if (b->pos == b->start) {
                sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream %.*s sent too big a header",
                              (int) u->peer->name.len, u->peer->name.data);
                sws_ups_next(u, SWS_UPS_FT_INVALID_HEADER);
                return;
            }
            memmove(b->start, b->pos, b->last - b->pos);
            b->last -= b->pos - b->start;
            b->pos = b->start;
        }
        n = c->recv(c, b->last, b->end - b->last);
        if (n == SWS_AGAIN) {
            if (u->request_sent) {
                sws_add_timer(c->read, u->conf->read_timeout);
            }
            return;
        }
        if (n == 0 || n == SWS_ERROR) {
            if (sws_ups_stale(u)) {
                return;
            }
            sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream %.*s %s while reading the "
                          "response header", (int) u->peer->name.len, u->peer->name.data,
                          n == 0 ? "closed the connection" : "failed");
            sws_ups_next(u, SWS_UPS_FT_ERROR);
            return;
        }
        b->last += n;
        u->attempts[u->nattempts - 1].received += n;

        rc = u->proto->process_header(r, u->ctx, b);
        if (rc == SWS_AGAIN) {
            if (b->pos == b->last) {
                b->pos = b->last = b->start;
            }
            continue;
        }
        if (rc == SWS_OK) {
            break;
        }
        if (rc == SWS_UPSTREAM_INVALID) {
            sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream %.*s sent an invalid response",
                          (int) u->peer->name.len, u->peer->name.data);
            sws_ups_next(u, SWS_UPS_FT_INVALID_HEADER);
            return;
        }
        sws_ups_finalize(u, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    sws_ups_process_header(u);
}

static sws_uint_t
sws_ups_status_ft(sws_uint_t status)
{
    switch (status) {
    case 500: return SWS_UPS_FT_HTTP_500;
    case 502: return SWS_UPS_FT_HTTP_502;
    case 503: return SWS_UPS_FT_HTTP_503;
    case 504: return SWS_UPS_FT_HTTP_504;
    case 403: return SWS_UPS_FT_HTTP_403;
    case 404: return SWS_UPS_FT_HTTP_404;
    case 429: return SWS_UPS_FT_HTTP_429;
    default:  return 0;
    }
}

static int
sws_ups_idempotent(sws_http_request_t *r)
{
    return !(r->method & (SWS_HTTP_POST | SWS_HTTP_PATCH))
           && !(r->method == SWS_HTTP_UNKNOWN
                && sws_str_eq_cstr(&r->method_name, "LOCK"));
}

/* May the request go to another server after a failure of kind ft? */
static int
sws_ups_may_retry(sws_http_upstream_t *u, sws_uint_t ft)
{
    sws_http_upstream_conf_t *conf = u->conf;
    sws_http_request_t       *r = u->r;
    sws_msec_t                now = sws_current_msec();
    sws_uint_t                i;

    if (!(conf->next_upstream & ft) || (conf->next_upstream & SWS_UPS_FT_OFF)
        || u->tries <= 1 || r->header_sent || u->body_pulled || sws_exiting)
    {
        return 0;
    }
    if (conf->next_upstream_timeout && now - u->start_msec >= conf->next_upstream_timeout) {
        return 0;
    }
    if (u->sent_any && !sws_ups_idempotent(r)
        && !(conf->next_upstream & SWS_UPS_FT_NON_IDEMPOTENT))
    {
        return 0;
    }
    for (i = 0; i < u->us->nused; i++) {
        if (!(u->tried[i / 64] & ((uint64_t) 1 << (i % 64)))
            && sws_ups_peer_available(&u->us->peers[i], now))
        {
            return 1;
        }
    }
    return 0;
}

void
sws_ups_next(sws_http_upstream_t *u, sws_uint_t ft)
{
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];
    sws_uint_t                   status;
    int                          failed;

    if (ft == SWS_UPS_FT_TIMEOUT) {
        status = SWS_HTTP_GATEWAY_TIME_OUT;
    } else if (ft & (SWS_UPS_FT_ERROR | SWS_UPS_FT_INVALID_HEADER)) {
        status = SWS_HTTP_BAD_GATEWAY;
    } else {
        status = u->r->status;          /* an http_NNN condition */
    }
    /* 403/404 are answers, not failures of the server. */
    failed = !(ft & (SWS_UPS_FT_HTTP_403 | SWS_UPS_FT_HTTP_404));

    if (a->status == 0) {
        a->status = status;
    }
    sws_ups_close_connection(u);
    sws_ups_stats_attempt_end(u, failed);      /* and passive health */
    u->status = status;

    if (!sws_ups_may_retry(u, ft)) {
        sws_ups_finalize(u, status);
        return;
    }
    u->tries--;
    sws_ups_connect_peer(u);
}

static int
sws_ups_has_error_page(sws_http_request_t *r, sws_uint_t status)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_http_error_page_t    *ep;
    sws_uint_t                i;

    if (clcf->error_pages == NULL) {
        return 0;
    }
    ep = clcf->error_pages->elts;
    for (i = 0; i < clcf->error_pages->nelts; i++) {
        if (ep[i].status == status) {
            return 1;
        }
    }
    return 0;
}

/* A local redirect (sws_http_upstream_set_redirect): this response ends
 * here, unseen, and the request starts again at the new URI. */
static void
sws_ups_local_redirect(sws_http_upstream_t *u)
{
    sws_http_request_t *r = u->r;

    sws_ups_stats_attempt_end(u, 0);
    sws_ups_close_connection(u);
    u->finished = 1;
    sws_ups_cache_end(u, 0);
    r->read_event_handler = NULL;
    r->write_event_handler = NULL;
    if (u->proto->finalize) {
        u->proto->finalize(r, u->ctx, SWS_OK);
    }
    sws_ups_response_cleanup(u);
    r->upstream = NULL;
    /* As nginx does: the new URI is fetched (GET), not posted to again. */
    if (r->method != SWS_HTTP_HEAD) {
        r->method = SWS_HTTP_GET;
        sws_str_set(&r->method_name, "GET");
    }
    sws_http_internal_redirect(r, &u->redirect_uri, &u->redirect_args);
}

static void
sws_ups_process_header(sws_http_upstream_t *u)
{
    sws_http_request_t          *r = u->r;
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];
    sws_uint_t                   status = r->status, ft;

    a->status = status;
    a->header_ms = sws_current_msec() - u->attempt_msec;

    if (u->redirect) {
        sws_ups_local_redirect(u);
        return;
    }

    ft = sws_ups_status_ft(status);
    if (ft && sws_ups_may_retry(u, ft)) {
        sws_ups_next(u, ft);
        return;
    }
    if (status >= SWS_HTTP_INTERNAL_SERVER_ERROR && u->cache_offer) {
        sws_int_t rc = sws_ups_cache_failed(u, status);   /* stale instead */
        if (rc != SWS_DECLINED) {
            sws_ups_finalize(u, rc);
            return;
        }
    }
    if (u->conf->intercept_errors && status >= 300 && sws_ups_has_error_page(r, status)) {
        sws_ups_stats_attempt_end(u, 0);
        sws_ups_close_connection(u);
        sws_ups_finalize(u, status);
        return;
    }

    u->header_done = 1;
    if (u->upgrade) {
        sws_ups_tunnel_start(u);
        return;
    }
    if (u->revalidate && status == SWS_HTTP_NOT_MODIFIED) {
        sws_ups_cache_not_modified(u);  /* the client never sees this 304 */
        return;
    }
    sws_ups_cache_header(u);
    /* background: the client has its answer already; this one is the cache's */
    if (!u->background && sws_http_send_header(r) == SWS_ERROR) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    if (r->header_only && u->tee) {
        /* a HEAD asked with GET, or a 304 of the filters: the client has
         * all it gets, the body is read for the cache alone */
        sws_ups_cache_only(u);
    }
    sws_ups_response_start(u);
}

/* ---- response headers (the protocols call this) ---- */

sws_int_t
sws_http_upstream_header(sws_http_upstream_t *u, const sws_str_t *name, const u_char *lcname,
    const sws_str_t *value)
{
    return sws_ups_header_hashed(u, name, lcname,
                                 sws_ups_hide_needs_hash(u->conf, name->len)
                                 ? sws_hash_key_lc(lcname, name->len) : 0, value);
}

int
sws_ups_header_hidden(sws_http_upstream_t *u, const u_char *lcname, size_t len, uint32_t hash,
    const sws_str_t *value)
{
    if (!sws_ups_may_hide(u->conf, len)
        || !(u->conf->hide_default ? sws_ups_hidden_by_default(lcname, len)
                                   : sws_hash_find_hashed(u->conf->hide, hash, lcname, len)
             != NULL))
    {
        return 0;
    }
    if (len == 17 && memcmp(lcname, "x-accel-buffering", 17) == 0) {
        /* The server may turn buffering off for its response (SSE). */
        u->buffering = !(value->len == 2 && sws_strncasecmp(value->data,
                                                             (u_char *) "no", 2) == 0);
    } else if (u->cache && len == 4 && memcmp(lcname, "date", 4) == 0) {
        /* hidden from the client, but the cache counts the age by it */
        u->date = sws_parse_http_time(value->data, value->len);
    }
    return 1;
}

sws_int_t
sws_ups_header_pass(sws_http_upstream_t *u, const sws_str_t *name, const u_char *lcname,
    const sws_str_t *value)
{
    sws_http_request_t *r = u->r;

    if (name->len == 8 && memcmp(lcname, "location", 8) == 0) {
        /* Passed as it came (nginx does not complete an upstream's
         * relative Location). */
        if (sws_http_response_header_set(r, name, lcname, value) != SWS_OK) {
            return SWS_ERROR;
        }
        r->location_as_is = 1;
        return SWS_OK;
    }
    return sws_http_response_header_set(r, name, lcname, value);
}

sws_int_t
sws_ups_header_hashed(sws_http_upstream_t *u, const sws_str_t *name, const u_char *lcname,
    uint32_t hash, const sws_str_t *value)
{
    if (u->keep_headers) {
        /* Unless the protocol just recorded this one's original value. */
        if (!(u->noted && u->headers_in && u->headers_in->nelts
              && sws_str_caseeq(&((sws_http_header_t *) u->headers_in->elts)
                                [u->headers_in->nelts - 1].name, name))
            && sws_ups_header_record(u, name, value, 0) != SWS_OK)
        {
            return SWS_ERROR;
        }
        u->noted = 0;
    }
    if (sws_ups_header_hidden(u, lcname, name->len, hash, value)) {
        return SWS_OK;
    }
    return sws_ups_header_pass(u, name, lcname, value);
}
