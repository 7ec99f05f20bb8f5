/*
 * The hooks of a response cache (sws_http_upstream_cache_t): where the
 * request driver asks the cache before any server is chosen, offers it the
 * response head and a copy of the body as it streams, hands it the 304 of
 * a revalidation, and tells it how the body ended. The cache itself
 * (storage, keys, freshness) is a module's; the framework only knows the
 * moments. Registered per location, in the http_upstream module's
 * location conf, so that every protocol module has it without a line of
 * its own.
 */
#include "sws_http_upstream.h"

void *
sws_ups_create_loc_conf(sws_conf_t *cf)
{
    sws_http_upstream_loc_conf_t *ulcf;

    ulcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_upstream_loc_conf_t));
    if (ulcf) {
        ulcf->resolver_timeout = SWS_UNSET_MSEC;
    }
    return ulcf;
}

char *
sws_ups_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_upstream_loc_conf_t *prev = parent, *conf = child;

    (void) cf;
    sws_ups_resolver_merge(prev, conf);
    if (!conf->cache_set) {
        conf->cache = prev->cache;
        conf->cache_data = prev->cache_data;
        conf->cache_set = prev->cache_set;
    }
    return SWS_CONF_OK;
}

sws_int_t
sws_http_upstream_cache_set(sws_conf_t *cf, const sws_http_upstream_cache_t *cache, void *data)
{
    sws_http_upstream_loc_conf_t *ulcf = sws_conf_http_loc_conf(cf, &sws_http_upstream_module);

    if (ulcf == NULL) {
        return SWS_ERROR;               /* not inside http { } */
    }
    if (ulcf->cache_set) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "a response cache (\"%s\") is already set "
                           "here", ulcf->cache ? ulcf->cache->name : "off");
        return SWS_ERROR;
    }
    ulcf->cache = cache;
    ulcf->cache_data = data;
    ulcf->cache_set = 1;
    return SWS_OK;
}

sws_int_t
sws_http_upstream_cache_validators(sws_http_upstream_t *u, const sws_str_t *etag,
    time_t last_modified)
{
    if (etag && etag->len) {
        u->cond_etag.data = sws_pnalloc(u->r->pool, etag->len);
        if (u->cond_etag.data == NULL) {
            return SWS_ERROR;
        }
        memcpy(u->cond_etag.data, etag->data, etag->len);
        u->cond_etag.len = etag->len;
    }
    u->cond_lm = last_modified;
    return SWS_OK;
}

int
sws_http_upstream_cache_request(sws_http_upstream_t *u, sws_str_t *if_none_match,
    sws_str_t *if_modified_since)
{
    const sws_str_t *v;
    u_char          *p;

    if_none_match->len = if_modified_since->len = 0;
    if_none_match->data = if_modified_since->data = NULL;
    if (!u->cache_offer) {
        return 0;
    }
    if (!u->revalidate) {
        /* a miss: the client's If-None-Match goes on if the cache says so
         * (RFC 9111 4.3.1); not for a background update: its client has
         * its answer, the cache wants the whole */
        v = u->cache_pass_inm && !u->background
            ? sws_http_header_in(u->r, "if-none-match", 13) : NULL;
        if (v) {
            *if_none_match = *v;
        }
    } else {
        *if_none_match = u->cond_etag;
        if (u->cond_lm != -1) {
            p = sws_pnalloc(u->r->pool, sizeof("Mon, 28 Sep 1970 06:00:00 GMT"));
            if (p == NULL) {
                return -1;
            }
            if_modified_since->data = p;
            if_modified_since->len = (size_t) (sws_http_time(p, u->cond_lm) - p);
        }
    }
    return 1;
}

void
sws_http_upstream_cache_pass_if_none_match(sws_http_upstream_t *u)
{
    u->cache_pass_inm = 1;
}

void
sws_http_upstream_cache_pass_range(sws_http_upstream_t *u)
{
    u->cache_pass_range = 1;
}

int
sws_ups_cache_passes_range(sws_http_upstream_t *u)
{
    return u->cache_offer && u->cache_pass_range && !u->revalidate && !u->background;
}

static sws_int_t sws_ups_cache_decide(sws_http_upstream_t *u, sws_int_t rc);
static sws_int_t sws_ups_cache_refetch(sws_http_upstream_t *u);

sws_int_t
sws_http_upstream_cache_hit(sws_http_request_t *r)
{
    sws_http_upstream_loc_conf_t *ulcf;

    ulcf = sws_http_loc_conf(r, &sws_http_upstream_module);
    if (ulcf == NULL || ulcf->cache == NULL || ulcf->cache->hit == NULL || r->upstream) {
        return SWS_DECLINED;
    }
    return ulcf->cache->hit(r, ulcf->cache_data);
}

/* Before the body is read: SWS_DECLINED (go on to a server), or what the
 * content handler returns (the cache answered). */
sws_int_t
sws_ups_cache_lookup(sws_http_upstream_t *u)
{
    sws_http_upstream_loc_conf_t *ulcf;
    sws_int_t                     rc;

    ulcf = sws_http_loc_conf(u->r, &sws_http_upstream_module);
    if (ulcf == NULL || ulcf->cache == NULL || ulcf->cache->lookup == NULL) {
        return SWS_DECLINED;
    }
    u->cache = ulcf->cache;
    u->cache_data = ulcf->cache_data;
    u->cond_lm = -1;

    rc = u->cache->lookup(u->r, u->cache_data);
    if (rc == SWS_BUSY) {
        u->cache_waiting = 1;           /* sws_http_upstream_cache_resume() goes on */
        return SWS_DONE;
    }
    return sws_ups_cache_decide(u, rc);
}

/* What a lookup (or a resume) said. */
static sws_int_t
sws_ups_cache_decide(sws_http_upstream_t *u, sws_int_t rc)
{
    switch (rc) {
    case SWS_DECLINED:
        u->cache = NULL;
        return SWS_DECLINED;
    case SWS_UPSTREAM_CACHE_REVALIDATE:
        if (u->cond_etag.len == 0 && u->cond_lm == -1) {
            sws_log_error(SWS_LOG_ALERT, u->r->log, 0, "cache \"%s\" revalidates without "
                          "validators", u->cache->name);
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        u->revalidate = 1;
        /* fall through */
    case SWS_UPSTREAM_CACHE_MISS:
        u->cache_offer = 1;
        return SWS_DECLINED;
    case SWS_UPSTREAM_CACHE_WATCH:
        u->cache_watch = 1;            /* the head is shown, nothing else */
        return SWS_DECLINED;
    default:
        u->cache = NULL;               /* answered: nothing more to tell it */
        return rc;
    }
}

/* The final head is on r and goes to the client: may the cache see it? */
void
sws_ups_cache_header(sws_http_upstream_t *u)
{
    if (u->cache_watch) {
        if (u->cache->store_header) {
            (void) u->cache->store_header(u->r, u->cache_data);
        }
        return;
    }
    if (!u->cache_offer || u->cache->store_header == NULL) {
        return;
    }
    if (u->r->method == SWS_HTTP_HEAD && !u->sent_as_get) {
        /* ABI 1.8: a HEAD's head, for its fields (RFC 9111 4.3.5); it has
         * no body to keep: a store it starts ends at once */
        if (u->cache->store_header(u->r, u->cache_data) == SWS_OK && u->cache->store_end) {
            u->cache->store_end(u->r, u->cache_data, 0);
        }
        return;
    }
    if (u->cache->store_header(u->r, u->cache_data) == SWS_OK) {
        u->tee = 1;
    }
}

void
sws_ups_cache_body(sws_http_upstream_t *u, const u_char *p, size_t n)
{
    if (n == 0 || u->cache->store_body == NULL) {
        return;
    }
    if (u->cache->store_body(u->r, u->cache_data, p, n) != SWS_OK) {
        sws_ups_cache_end(u, 0);        /* the cache gave up on it */
    }
}

void
sws_ups_cache_end(sws_http_upstream_t *u, int complete)
{
    if (!u->tee) {
        return;
    }
    u->tee = 0;
    if (u->cache->store_end) {
        u->cache->store_end(u->r, u->cache_data, complete);
    }
}

/*
 * A revalidation got its 304: the connection goes back to the pool if the
 * (empty) body ends where the head did, and the cache answers the client
 * from what it has.
 */
void
sws_ups_cache_not_modified(sws_http_upstream_t *u)
{
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];
    sws_http_upstream_input_t    in;
    sws_connection_t            *c;
    sws_int_t                    rc;

    in.pos = in.out = u->head.pos;
    in.last = u->head.last;
    in.eof = 0;
    rc = u->proto->input_filter(u->r, u->ctx, &in);

    u->body_done = 1;
    a->response_ms = sws_current_msec() - u->attempt_msec;
    sws_ups_stats_attempt_end(u, 0);
    if (rc == SWS_DONE && in.pos == in.last && u->keepalive && u->request_sent
        && u->out == NULL)
    {
        c = u->c;
        u->c = NULL;
        sws_ups_ka_put(u->us, u->peer, c);
    } else {
        sws_ups_close_connection(u);
    }

    rc = u->cache->not_modified ? u->cache->not_modified(u->r, u->cache_data)
                                : SWS_HTTP_INTERNAL_SERVER_ERROR;
    if (rc == SWS_UPSTREAM_CACHE_MISS) {
        rc = sws_ups_cache_refetch(u);
        if (rc == SWS_DONE) {
            return;
        }
    }
    sws_ups_finalize(u, rc);
}

/*
 * ABI 1.8: the cache could not use the 304 (RFC 9111 4.3.4: it names no
 * stored response), so the request goes again without its validators, as
 * a miss: once, and only when it has no body to send again. SWS_DONE, or
 * the status to end with.
 */
static sws_int_t
sws_ups_cache_refetch(sws_http_upstream_t *u)
{
    if (u->refetched || u->body_mode != SWS_UPSTREAM_BODY_NONE) {
        sws_log_error(SWS_LOG_ERR, u->r->log, 0, "cache \"%s\": the server's 304 names no "
                      "stored response, and the request cannot be sent again", u->cache->name);
        return SWS_HTTP_BAD_GATEWAY;
    }
    u->refetched = 1;
    u->revalidate = 0;
    u->cond_etag.len = 0;
    u->cond_lm = -1;
    if (u->peer) {
        /* the same server may answer it (not a failure of it) */
        u->tried[u->peer->index / 64] &= ~((uint64_t) 1 << (u->peer->index % 64));
    }
    sws_ups_init_request(u);
    return SWS_DONE;
}

void
sws_http_upstream_cache_resume(sws_http_request_t *r, sws_int_t rc)
{
    sws_http_upstream_t *u = r->upstream;

    if (u == NULL || !u->cache_waiting || u->cache == NULL) {
        return;
    }
    u->cache_waiting = 0;
    rc = sws_ups_cache_decide(u, rc);
    if (rc == SWS_DECLINED) {
        rc = sws_ups_start_servers(u);
    }
    if (rc != SWS_DONE) {
        sws_http_finalize(r, rc);
    }
}

/*
 * The response failed before the client saw anything of it (rc: 502, 504,
 * or the server's 5xx): the cache may answer instead. SWS_DECLINED, or
 * what it answered with.
 */
sws_int_t
sws_ups_cache_failed(sws_http_upstream_t *u, sws_int_t rc)
{
    if (!u->cache_offer || u->cache->failed == NULL || u->r->header_sent || rc < 500) {
        return SWS_DECLINED;
    }
    rc = u->cache->failed(u->r, u->cache_data, rc);
    if (rc != SWS_DECLINED) {
        u->cache_offer = 0;
    }
    return rc;
}

const sws_str_t *
sws_http_upstream_temp_dir(sws_http_upstream_t *u)
{
    return &u->conf->temp_path->name;
}

void
sws_http_upstream_cache_background(sws_http_upstream_t *u)
{
    sws_ups_cache_only(u);
}

/* The client has its whole answer: from now on the server's response goes
 * to the cache alone (and the protocol keeps the request past its response:
 * an HTTP/2 stream ends, its request goes on); the client's status stays
 * what the log says. */
void
sws_ups_cache_only(sws_http_upstream_t *u)
{
    u->background = 1;
    u->r->background = 1;
    u->client_status = u->r->status;
}

time_t
sws_http_upstream_date(sws_http_upstream_t *u)
{
    return u->date;
}

void
sws_http_upstream_cache_convert_head(sws_http_upstream_t *u)
{
    if (u->r->method == SWS_HTTP_HEAD) {
        u->head_as_get = 1;
    }
}
