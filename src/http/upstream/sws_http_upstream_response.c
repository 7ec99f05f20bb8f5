/*
 * The response body, from the upstream to the client, with back-pressure.
 *
 * Bytes are read into a bounded set of buffers ("slots": the head buffer,
 * then up to N buffers of the location's buffer size; one buffer only with
 * buffering off), decoded in place by the protocol's input filter, and
 * passed to the client as "shadow" buffers pointing into the slots. A slot
 * is reused once every shadow of it is sent. When no slot has room the
 * worker stops reading from the upstream (its socket fills, TCP slows the
 * server down) until the client takes more: a slow client never makes the
 * worker hold more than the buffers of one request.
 *
 * Buffering on: read while there is room and data, then pass everything in
 * one go. Off: pass each piece as soon as it is read.
 *
 * proxy_limit_rate R: in the first t seconds of the body at most R * (t + 1)
 * bytes are read (nginx's allowance); past that the read waits on a timer
 * for the time the excess takes at R.
 */
#include <unistd.h>
#include "sws_http_upstream.h"

static void sws_ups_body_end(sws_http_upstream_t *u, int reuse);

/* ---- shadows ---- */

sws_chain_t *
sws_ups_shadow(sws_http_upstream_t *u)
{
    sws_chain_t *cl = u->free;
    sws_buf_t   *b;

    if (cl) {
        u->free = cl->next;
        cl->next = NULL;
        b = cl->buf;                 /* it may have been a file buffer */
        b->in_file = 0;
        b->fd = -1;
        b->file_pos = b->file_last = 0;
        return cl;
    }
    b = sws_calloc_buf(u->r->pool);
    cl = sws_alloc_chain_link(u->r->pool);
    if (b == NULL || cl == NULL) {
        return NULL;
    }
    b->temporary = 1;
    cl->buf = b;
    cl->next = NULL;
    return cl;
}

/* Body bytes [from, to) of slot s: extend the last pending shadow if it is
 * the same slot and contiguous, else queue a new one. */
static sws_int_t
sws_ups_add_data(sws_http_upstream_t *u, sws_http_upstream_slot_t *s, u_char *from, u_char *to)
{
    sws_chain_t *cl;
    sws_buf_t   *b;

    if (from == to) {
        return SWS_OK;
    }
    if (u->pending) {
        cl = (sws_chain_t *) ((u_char *) u->pending_tail - offsetof(sws_chain_t, next));
        b = cl->buf;
        if (b->tag == s && b->last == from) {
            b->last = to;
            return SWS_OK;
        }
    }
    cl = sws_ups_shadow(u);
    if (cl == NULL) {
        return SWS_ERROR;
    }
    b = cl->buf;
    b->start = b->pos = from;
    b->end = b->last = to;
    b->tag = s;
    b->temporary = 1;
    b->last_buf = 0;
    b->flush = 0;
    s->busy++;
    *u->pending_tail = cl;
    u->pending_tail = &cl->next;
    return SWS_OK;
}

/* A shadow without memory queued last: the caller makes it a file's
 * bytes or the end. NULL: no memory. */
static sws_buf_t *
sws_ups_queue_shadow(sws_http_upstream_t *u)
{
    sws_chain_t *cl;
    sws_buf_t   *b;

    cl = sws_ups_shadow(u);
    if (cl == NULL) {
        return NULL;
    }
    b = cl->buf;
    b->pos = b->last = b->start = b->end = NULL;
    b->temporary = 0;
    b->tag = NULL;
    b->last_buf = 0;
    b->flush = 0;
    *u->pending_tail = cl;
    u->pending_tail = &cl->next;
    return b;
}

/* Bytes [pos, last) of file fd, queued as a file buffer (the temporary
 * file's, a passed file's). */
sws_int_t
sws_ups_add_file(sws_http_upstream_t *u, int fd, off_t pos, off_t last)
{
    sws_buf_t *b = sws_ups_queue_shadow(u);

    if (b == NULL) {
        return SWS_ERROR;
    }
    b->in_file = 1;
    b->fd = fd;
    b->file_pos = pos;
    b->file_last = last;
    return SWS_OK;
}

/* Shadows the client has taken (in order): their slots may start over. */
static void
sws_ups_update_busy(sws_http_upstream_t *u)
{
    sws_chain_t              *cl;
    sws_http_upstream_slot_t *s;

    while ((cl = u->busy) != NULL && sws_buf_size(cl->buf) == 0) {
        u->busy = cl->next;
        s = cl->buf->tag;
        if (s && --s->busy == 0) {
            s->last = s->start;
        }
        cl->next = u->free;
        u->free = cl;
    }
    if (u->busy == NULL) {
        u->busy_tail = &u->busy;
    }
}

/* What is pending is all there is for now (the upstream paused, or
 * buffering is off): mark it flush, so that a filter holding data (a
 * compressor) passes it on instead of waiting for more, and events of a
 * stream (server-sent events) reach the client as they come. */
static void
sws_ups_mark_flush(sws_http_upstream_t *u)
{
    sws_chain_t *cl;

    if (u->pending) {
        cl = (sws_chain_t *) ((u_char *) u->pending_tail - offsetof(sws_chain_t, next));
        cl->buf->flush = 1;
    }
}

/* Pass what is pending to the client (and the end of the body with last). */
static sws_int_t
sws_ups_flush(sws_http_upstream_t *u, int last)
{
    sws_http_request_t *r = u->r;
    sws_chain_t        *out, *cl;
    sws_buf_t          *b;
    sws_int_t           rc;

    if (sws_ups_spill_queue(u) != SWS_OK) {
        return SWS_ERROR;
    }
    if (last) {
        b = sws_ups_queue_shadow(u);
        if (b == NULL) {
            return SWS_ERROR;
        }
        b->last_buf = 1;
    }
    out = u->pending;
    if (out == NULL) {
        return SWS_OK;
    }
    /* The links stay ours (the filters copy them): keep them in order to
     * see when their data is sent. */
    *u->busy_tail = out;
    u->busy_tail = u->pending_tail;
    u->pending = NULL;
    u->pending_tail = &u->pending;

    rc = u->background ? SWS_OK : sws_http_output(r, out);
    if (r->header_only || u->background) {
        /* The body goes nowhere: count it as sent. */
        for (cl = u->busy; cl; cl = cl->next) {
            cl->buf->pos = cl->buf->last;
            cl->buf->file_pos = cl->buf->file_last;
        }
    }
    sws_ups_update_busy(u);
    return rc == SWS_ERROR ? SWS_ERROR : SWS_OK;
}

/* ---- slots ---- */

static sws_http_upstream_slot_t *
sws_ups_slot_for_read(sws_http_upstream_t *u)
{
    sws_http_upstream_slot_t *s = &u->slots[u->cur];
    size_t                    size = u->conf->buffer_size;
    sws_uint_t                i;

    /* The current slot while it has a useful amount of room. */
    if ((size_t) (s->end - s->last) >= (size_t) (s->end - s->start) / 4) {
        return s;
    }
    for (i = 0; i < u->nslots; i++) {
        s = &u->slots[i];
        if (s->start && s->busy == 0 && s->last == s->start) {
            u->cur = i;
            return s;
        }
    }
    for (i = 0; i < u->nslots; i++) {
        s = &u->slots[i];
        if (s->start == NULL) {
            s->start = sws_ups_buf_alloc(size, u->r->log);
            if (s->start == NULL) {
                return NULL;
            }
            s->last = s->start;
            s->end = s->start + size;
            u->cur = i;
            return s;
        }
    }
    s = &u->slots[u->cur];
    return s->last < s->end ? s : NULL;
}

/* Run the protocol's filter over n new bytes at s->last. */
static sws_int_t
sws_ups_input(sws_http_upstream_t *u, sws_http_upstream_slot_t *s, size_t n, int eof)
{
    sws_http_upstream_input_t in;
    sws_int_t                 rc;

    in.pos = s->last;
    in.last = s->last + n;
    in.out = s->last;
    in.eof = eof;
    u->in_slot = s;
    rc = u->proto->input_filter(u->r, u->ctx, &in);
    u->in_slot = NULL;
    if (rc != SWS_OK && rc != SWS_DONE) {
        return rc;
    }
    u->attempts[u->nattempts - 1].body += in.out - s->last;
    if (u->tee) {
        sws_ups_cache_body(u, s->last, (size_t) (in.out - s->last));
    }
    if (rc == SWS_DONE) {
        u->body_complete = 1;
    }
    if (s == &u->spill) {
        if (sws_ups_spill_write(u, s->last, in.out) != SWS_OK) {
            return SWS_ERROR;
        }
        s->last = s->start;          /* in the file now */
    } else {
        if (sws_ups_add_data(u, s, s->last, in.out) != SWS_OK) {
            return SWS_ERROR;
        }
        s->last = in.out;
    }
    if (rc == SWS_DONE && in.pos < in.last) {
        sws_log_error(SWS_LOG_WARN, u->r->log, 0, "upstream %.*s sent data after the "
                      "response", (int) u->peer->name.len, u->peer->name.data);
        u->keepalive = 0;
    }
    return rc;
}

/* ---- the body ---- */

/* How much limit_rate lets u read now (SIZE_MAX: no limit); 0: the read
 * timer is set for when more may come. */
static size_t
sws_ups_rate_allowance(sws_http_upstream_t *u)
{
    size_t      rate = u->conf->limit_rate;
    sws_msec_t  elapsed;
    off_t       limit;

    if (rate == 0) {
        return (size_t) -1;
    }
    elapsed = sws_current_msec() - u->rate_start;
    limit = (off_t) ((uint64_t) rate * (elapsed + 1000) / 1000) - u->rate_read;
    if (limit > 0) {
        return (size_t) limit;
    }
    u->rate_delayed = 1;
    sws_del_timer(u->c->read);
    sws_add_timer(u->c->read, (sws_msec_t) ((uint64_t) -limit * 1000 / rate + 1));
    return 0;
}

void
sws_ups_response_start(sws_http_upstream_t *u)
{
    sws_http_request_t       *r = u->r;
    sws_http_upstream_slot_t *s;
    sws_int_t                 rc;

    u->rate_start = sws_current_msec();
    u->rate_read = 0;
    u->rate_delayed = 0;
    u->nslots = u->buffering ? 1 + u->conf->nbuffers : 1;
    u->slots = sws_pcalloc(r->pool, u->nslots * sizeof(sws_http_upstream_slot_t));
    if (u->slots == NULL) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    /* Slot 0 is the head buffer: what came after the head is body. */
    s = &u->slots[0];
    s->start = u->head.start;
    s->end = u->head.end;
    s->last = u->head.pos;
    u->head.start = NULL;            /* the slot owns the memory now */

    rc = sws_ups_input(u, s, (size_t) (u->head.last - u->head.pos), 0);
    if (s->busy == 0) {
        s->last = s->start;
    }
    if (rc == SWS_DONE) {
        sws_ups_body_end(u, u->keepalive);
        return;
    }
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream %.*s sent an invalid response body",
                      (int) u->peer->name.len, u->peer->name.data);
        sws_ups_stats_attempt_end(u, 1);
        sws_ups_close_connection(u);
        sws_ups_flush(u, 0);
        sws_ups_finalize(u, SWS_HTTP_BAD_GATEWAY);
        return;
    }
    if (r->header_only && !u->background) {
        /* HEAD, or a filter made it a 304: the body is not wanted. */
        sws_ups_stats_attempt_end(u, 0);
        sws_ups_close_connection(u);
        sws_ups_body_end(u, 0);
        return;
    }
    r->write_event_handler = sws_ups_response_write_handler;
    if (!u->buffering) {
        sws_ups_mark_flush(u);
    }
    if (!u->buffering && sws_ups_flush(u, 0) == SWS_ERROR) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    sws_ups_response_read(u);
}

/* The body is complete (or not wanted): give the connection back (reuse)
 * or close it, send the end, finish. */
static void
sws_ups_body_end(sws_http_upstream_t *u, int reuse)
{
    sws_http_upstream_attempt_t *a = &u->attempts[u->nattempts - 1];

    u->body_done = 1;
    a->response_ms = sws_current_msec() - u->attempt_msec;
    if (u->c) {
        sws_ups_stats_attempt_end(u, 0);
        if (reuse && u->request_sent && u->out == NULL) {
            sws_connection_t *c = u->c;
            u->c = NULL;
            sws_ups_ka_put(u->us, u->peer, c);
        } else {
            sws_ups_close_connection(u);
        }
    }
    if (sws_ups_flush(u, 1) == SWS_ERROR) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    sws_ups_finalize(u, SWS_OK);
}

void
sws_ups_response_read(sws_http_upstream_t *u)
{
    sws_http_request_t       *r = u->r;
    sws_connection_t         *c = u->c;
    sws_http_upstream_slot_t *s;
    ssize_t                   n;
    sws_int_t                 rc = SWS_OK;
    const char               *why = NULL;
    off_t                     spilled = 0;
    int                       yield = 0;
    size_t                    allowed, room;

    if (u->finished || u->body_done || c == NULL || u->rate_delayed) {
        return;
    }
    u->paused = 0;
    while (c->read->ready) {
        allowed = sws_ups_rate_allowance(u);
        if (allowed == 0) {
            break;                   /* the timer set, reading goes on then */
        }
        s = u->spilling ? &u->spill : sws_ups_slot_for_read(u);
        if (s == NULL && sws_ups_spill_begin(u) == SWS_OK) {
            s = &u->spill;           /* the buffers wait: the rest to a file */
        }
        if (s == NULL) {
            u->paused = 1;           /* every buffer waits for the client */
            sws_del_timer(c->read);
            break;
        }
        if (s == &u->spill && (spilled += s->end - s->start) > 1024 * 1024) {
            yield = 1;               /* others get a turn: go on from a posted event */
            break;
        }
        room = sws_min((size_t) (s->end - s->last), allowed);
        n = c->recv(c, s->last, room);
        if (n == SWS_AGAIN) {
            break;
        }
        if (n == SWS_ERROR) {
            why = "failed";
            break;
        }
        if (n > 0) {
            u->attempts[u->nattempts - 1].received += n;
            u->rate_read += n;
        }
        rc = sws_ups_input(u, s, (size_t) (n > 0 ? n : 0), n == 0);
        if (rc == SWS_DONE) {
            sws_ups_body_end(u, n > 0 && u->keepalive);
            return;
        }
        if (rc != SWS_OK) {
            why = u->spill_failed ? "response could not be written to its temporary file"
                  : n == 0 ? "closed the connection before the end of the response"
                           : "sent an invalid response body";
            break;
        }
        if (n == 0) {
            why = "closed the connection";
            break;
        }
        if (!u->buffering) {
            sws_ups_mark_flush(u);
            if (sws_ups_flush(u, 0) == SWS_ERROR) {
                sws_ups_finalize(u, SWS_ERROR);
                return;
            }
        }
    }

    if (why) {
        /* Cut: what came goes to the client, then its connection closes. */
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream %.*s %s", (int) u->peer->name.len,
                      u->peer->name.data, why);
        sws_ups_stats_attempt_end(u, 1);
        sws_ups_close_connection(u);
        sws_ups_flush(u, 0);
        sws_ups_finalize(u, SWS_HTTP_BAD_GATEWAY);
        return;
    }
    if (!u->paused && (!c->read->ready || u->rate_delayed)) {
        sws_ups_mark_flush(u);       /* all the upstream has sent so far (or may, now) */
    }
    if (sws_ups_flush(u, 0) == SWS_ERROR) {
        sws_ups_finalize(u, SWS_ERROR);
        return;
    }
    if (yield) {
        sws_post_event(c->read);
    }
    if (u->rate_delayed) {
        /* limit_rate's timer is set */
    } else if (!u->paused) {
        sws_add_timer(c->read, u->conf->read_timeout);
    } else if (sws_ups_slot_for_read(u)) {
        /* Flushing made room at once (a fast client): go on later. */
        u->paused = 0;
        sws_post_event(c->read);
    }
}

/* The client took some of the output: slots free up, reading resumes. */
void
sws_ups_response_write_handler(sws_http_request_t *r)
{
    sws_http_upstream_t *u = r->upstream;

    if (u == NULL || u->finished || u->tunnel) {
        return;
    }
    sws_ups_update_busy(u);
    if (u->paused && !u->rate_delayed && u->c && sws_ups_slot_for_read(u)) {
        u->paused = 0;
        if (u->c->read->ready) {
            sws_ups_response_read(u);
        } else {
            sws_add_timer(u->c->read, u->conf->read_timeout);
        }
    }
}

void
sws_ups_response_cleanup(sws_http_upstream_t *u)
{
    sws_uint_t i;

    if (u->head.start) {
        sws_ups_buf_free(u->head.start, (size_t) (u->head.end - u->head.start));
        u->head.start = NULL;
    }
    /* The slots with memory are the first ones: slot 0 (the head's), then
     * each taken in order (sws_ups_slot_for_read), none freed alone. */
    for (i = 0; i < u->nslots && u->slots[i].start; i++) {
        sws_ups_buf_free(u->slots[i].start, (size_t) (u->slots[i].end - u->slots[i].start));
        u->slots[i].start = NULL;
    }
    u->nslots = 0;
    sws_ups_spill_cleanup(u);
}

/* ---- a body from a file (sws_http_upstream_body_file) ---- */

static void
sws_ups_close_body_fd(void *data)
{
    (void) close((int) (intptr_t) data);
}

/* A cache that stores the response gets the file's bytes too. */
static sws_int_t
sws_ups_cache_file(sws_http_upstream_t *u, int fd, off_t offset, off_t length)
{
    u_char   buf[16384];
    ssize_t  n;

    while (length > 0) {
        n = pread(fd, buf, (size_t) sws_min(length, (off_t) sizeof(buf)), offset);
        if (n <= 0) {
            if (n == -1 && errno == EINTR) {
                continue;
            }
            sws_log_error(SWS_LOG_ERR, u->r->log, n == -1 ? errno : 0,
                          "upstream %.*s: pread() of a passed file failed",
                          (int) u->peer->name.len, u->peer->name.data);
            return SWS_ERROR;
        }
        sws_ups_cache_body(u, buf, (size_t) n);
        offset += n;
        length -= n;
    }
    return SWS_OK;
}

sws_int_t
sws_http_upstream_body_file(sws_http_upstream_t *u, sws_http_upstream_input_t *in, int fd,
    off_t offset, off_t length)
{
    sws_http_upstream_slot_t *s = u->in_slot;
    off_t                     n;

    /* the request's from here: closed when it ends (after the sending) */
    if (sws_pool_cleanup_add(u->r->pool, sws_ups_close_body_fd, (void *) (intptr_t) fd)
        != SWS_OK)
    {
        (void) close(fd);
        return SWS_ERROR;
    }
    if (s == NULL || s == &u->spill || u->tf != NULL || offset < 0 || length < 0) {
        return SWS_DECLINED;         /* no order to keep with a temporary file */
    }
    /* what the filter decoded before it goes first */
    n = in->out - s->last;
    u->attempts[u->nattempts - 1].body += n;
    if (u->tee) {
        sws_ups_cache_body(u, s->last, (size_t) n);
    }
    if (sws_ups_add_data(u, s, s->last, in->out) != SWS_OK) {
        return SWS_ERROR;
    }
    s->last = in->out;
    if (length == 0) {
        return SWS_OK;
    }
    if (sws_ups_add_file(u, fd, offset, offset + length) != SWS_OK) {
        return SWS_ERROR;
    }
    u->attempts[u->nattempts - 1].body += length;
    if (u->tee && sws_ups_cache_file(u, fd, offset, length) != SWS_OK) {
        return SWS_ERROR;
    }
    return SWS_OK;
}
