/*
 * HTTP/2 connections: the socket (or the TLS layer) read into a per-worker
 * buffer whose frames are all processed (sws_http_v2_frame.c) before any
 * output is produced; then the DATA of the streams that may send, HEADERS
 * and control frames already queued in order, go out in one write. The
 * server preface, idle and send timeouts, GOAWAY at shutdown (graceful
 * drain) and on errors, and the lingering close after it.
 *
 * Request handlers and frame processing only queue: the streams that end
 * are closed, and output is written, from the event handlers here.
 */
#include <unistd.h>
#include "sws_alloc_cache.h"
#include "sws_hpack_mem.h"
#include "sws_http_v2.h"
#include "sws_ssl.h"
#include "sws_conn_stats.h"

#define SWS_H2_OUT_BLOCK     16384          /* bytes of one output block */
#define SWS_H2_OUT_HIGH      (64 * 1024)    /* produce no more DATA past this */
#define SWS_H2_OUT_FREE      8              /* spare blocks kept per worker */
#define SWS_H2_READ_ROUNDS   8              /* reads per event, then others' turn */
#define SWS_H2_SEND_ROUNDS   16
#define SWS_H2_TRIM_DELAY    1000           /* ms idle before the encoder goes */

static void sws_http_v2_read_handler(sws_event_t *rev);
static void sws_http_v2_write_handler(sws_event_t *wev);
static void sws_http_v2_close(sws_http_v2_conn_t *h2c);
static void sws_http_v2_run(sws_http_v2_conn_t *h2c);
static void sws_http_v2_shutdown(sws_connection_t *c);
static void sws_http_v2_drain(sws_http_v2_conn_t *h2c);
static void sws_http_v2_linger(sws_http_v2_conn_t *h2c);

/* The opaque data of the shutdown's PING. */
static const u_char sws_http_v2_drain_ping[8] = { 's', 'w', 's', 'q', 'u', 'i', 't', '!' };

/* The receive buffer is per worker; an incomplete frame is kept by its
 * connection (h2c->hold) and put back in front of the next read, for which
 * the buffer has a frame's room more than http2_recv_buffer_size. */
static u_char            *sws_http_v2_rbuf;
static size_t             sws_http_v2_rbuf_size;
static sws_http_v2_out_t *sws_http_v2_free_out;
static sws_uint_t         sws_http_v2_nfree_out;

/* ---- output queue ---- */

static sws_http_v2_out_t *
sws_http_v2_out_alloc(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_out_t *o = sws_http_v2_free_out;

    if (o) {
        sws_http_v2_free_out = o->next;
        sws_http_v2_nfree_out--;
    } else {
        o = sws_alloc(sizeof(sws_http_v2_out_t) + SWS_H2_OUT_BLOCK, h2c->connection->log);
        if (o == NULL) {
            return NULL;
        }
    }
    sws_memzero(&o->buf, sizeof(sws_buf_t));
    o->buf.fd = -1;
    o->buf.temporary = 1;
    o->buf.start = o->buf.pos = o->buf.last = o->data;
    o->buf.end = o->data + SWS_H2_OUT_BLOCK;
    o->cl.buf = &o->buf;
    o->cl.next = NULL;
    o->next = NULL;
    return o;
}

static void
sws_http_v2_out_free(sws_http_v2_out_t *o)
{
    if (sws_http_v2_nfree_out >= SWS_H2_OUT_FREE) {
        free(o);
        return;
    }
    o->next = sws_http_v2_free_out;
    sws_http_v2_free_out = o;
    sws_http_v2_nfree_out++;
}

size_t
sws_http_v2_queue_room(sws_http_v2_conn_t *h2c)
{
    return h2c->out_bytes >= SWS_H2_OUT_HIGH ? 0 : SWS_H2_OUT_HIGH - h2c->out_bytes;
}

/* The tail block with room, a new one if it is full. */
static sws_http_v2_out_t *
sws_http_v2_out_tail(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_out_t *o = h2c->out_tail;

    if (o && o->buf.last < o->buf.end) {
        return o;
    }
    o = sws_http_v2_out_alloc(h2c);
    if (o == NULL) {
        return NULL;
    }
    if (h2c->out_tail) {
        h2c->out_tail->next = o;
        h2c->out_tail->cl.next = &o->cl;
    } else {
        h2c->out = o;
    }
    h2c->out_tail = o;
    return o;
}

sws_int_t
sws_http_v2_queue(sws_http_v2_conn_t *h2c, const u_char *data, size_t n)
{
    sws_http_v2_out_t *o;
    size_t             k;

    while (n) {
        o = sws_http_v2_out_tail(h2c);
        if (o == NULL) {
            return SWS_ERROR;
        }
        k = sws_min((size_t) (o->buf.end - o->buf.last), n);
        o->buf.last = sws_cpymem(o->buf.last, data, k);
        data += k;
        n -= k;
        h2c->out_bytes += k;
    }
    return SWS_OK;
}

sws_int_t
sws_http_v2_queue_head(sws_http_v2_conn_t *h2c, size_t len, u_char type, u_char flags,
    uint32_t sid)
{
    u_char h[SWS_H2_FRAME_HEADER];

    h[0] = (u_char) (len >> 16);
    h[1] = (u_char) (len >> 8);
    h[2] = (u_char) len;
    h[3] = type;
    h[4] = flags;
    h[5] = (u_char) ((sid >> 24) & 0x7f);
    h[6] = (u_char) (sid >> 16);
    h[7] = (u_char) (sid >> 8);
    h[8] = (u_char) sid;
    return sws_http_v2_queue(h2c, h, sizeof(h));
}

sws_int_t
sws_http_v2_queue_buf(sws_http_v2_conn_t *h2c, sws_buf_t *b, size_t n)
{
    sws_http_v2_out_t *o;
    off_t              pos;
    size_t             k;
    ssize_t            got;

    if (sws_buf_in_memory(b)) {
        return sws_http_v2_queue(h2c, b->pos, n);
    }
    pos = b->file_pos;
    while (n) {
        o = sws_http_v2_out_tail(h2c);
        if (o == NULL) {
            return SWS_ERROR;
        }
        k = sws_min((size_t) (o->buf.end - o->buf.last), n);
        got = pread(b->fd, o->buf.last, k, pos);
        if (got != (ssize_t) k) {
            sws_log_error(SWS_LOG_CRIT, h2c->connection->log, got == -1 ? errno : 0,
                          "pread() of the response body failed%s",
                          got >= 0 ? " (file truncated?)" : "");
            return SWS_ERROR;
        }
        o->buf.last += k;
        pos += (off_t) k;
        n -= k;
        h2c->out_bytes += k;
    }
    return SWS_OK;
}

static u_char *
sws_http_v2_put32(u_char *p, uint32_t v)
{
    *p++ = (u_char) (v >> 24);
    *p++ = (u_char) (v >> 16);
    *p++ = (u_char) (v >> 8);
    *p++ = (u_char) v;
    return p;
}

sws_int_t
sws_http_v2_queue_rst(sws_http_v2_conn_t *h2c, uint32_t sid, uint32_t error)
{
    u_char f[SWS_H2_FRAME_HEADER + 4];

    if (sws_http_v2_queue_head(h2c, 4, SWS_H2_RST_STREAM, 0, sid) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_http_v2_put32(f, error);
    return sws_http_v2_queue(h2c, f, 4);
}

sws_int_t
sws_http_v2_queue_window(sws_http_v2_conn_t *h2c, uint32_t sid, uint32_t inc)
{
    u_char f[4];

    if (sws_http_v2_queue_head(h2c, 4, SWS_H2_WINDOW_UPDATE, 0, sid) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_http_v2_put32(f, inc);
    return sws_http_v2_queue(h2c, f, 4);
}

static sws_int_t
sws_http_v2_queue_goaway(sws_http_v2_conn_t *h2c, uint32_t last, uint32_t error)
{
    u_char f[8];

    if (sws_http_v2_queue_head(h2c, 8, SWS_H2_GOAWAY, 0, 0) != SWS_OK) {
        return SWS_ERROR;
    }
    sws_http_v2_put32(sws_http_v2_put32(f, last & 0x7fffffff), error);
    return sws_http_v2_queue(h2c, f, 8);
}

static void
sws_http_v2_out_release(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_out_t *o;

    while (h2c->out) {
        o = h2c->out;
        h2c->out = o->next;
        sws_http_v2_out_free(o);
    }
    h2c->out_tail = NULL;
    h2c->out_bytes = 0;
}

/* Write queued output: SWS_OK (all of it), SWS_AGAIN, SWS_ERROR. */
static sws_int_t
sws_http_v2_flush(sws_http_v2_conn_t *h2c)
{
    sws_connection_t  *c = h2c->connection;
    sws_chain_t       *rest;
    sws_http_v2_out_t *o;
    off_t              before;

    if (h2c->out == NULL) {
        return SWS_OK;
    }
    if (!c->write->ready) {
        return SWS_AGAIN;
    }
    before = c->sent;
    rest = c->send_chain(c, &h2c->out->cl, 0);
    if (rest == SWS_CHAIN_ERROR) {
        c->error = 1;
        return SWS_ERROR;
    }
    h2c->out_bytes -= (size_t) (c->sent - before);
    while (h2c->out && &h2c->out->cl != rest) {
        o = h2c->out;
        h2c->out = o->next;
        sws_http_v2_out_free(o);
    }
    if (h2c->out == NULL) {
        h2c->out_tail = NULL;
        h2c->out_bytes = 0;
        return SWS_OK;
    }
    return SWS_AGAIN;
}

/* ---- the session ---- */

/* Idle for a while: the encoder's table goes (the decoder's table is the
 * client's to empty, and stays), until the next response, whose block
 * empties the client's copy first. A decoder whose table is empty (a
 * client that indexes nothing, or whose entries were all evicted) between
 * header blocks gives back its ring of slots too: the next entry makes it
 * again. */
static void
sws_http_v2_trim(sws_http_v2_conn_t *h2c)
{
    /* The TLS record buffers too, kept while the connection was busy
     * (sws_http_v2_run); the heap's free pages go back a quiet second
     * later (sws_heap_trim.c), not before these were freed. */
    if (h2c->tls_buffers) {
        h2c->tls_buffers = 0;
        if (sws_ssl_release_buffers(h2c->connection)) {
            sws_heap_trim_note();
        }
        sws_log_debug(h2c->connection->log, "http2 connection idle: TLS record buffers freed");
    }
    sws_hpack_encoder_release(&h2c->hpack);
    if (h2c->hdec.entry && h2c->hdec.count == 0 && h2c->block == SWS_H2_BLOCK_NONE) {
        sws_hpack_decoder_release(&h2c->hdec);
    }
}

/* The server preface (RFC 9113 3.4): our SETTINGS, and the connection's
 * receive window opened past its default. */
static sws_int_t
sws_http_v2_session(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_srv_conf_t   *conf = h2c->conf;
    sws_http_core_srv_conf_t *cscf = h2c->client->cscf;
    u_char                    s[4 * 6], *p = s;
    size_t                    header_size;
    static const struct { uint16_t id; } order[4] = {
        { SWS_H2_SET_MAX_CONCURRENT_STREAMS }, { SWS_H2_SET_INITIAL_WINDOW_SIZE },
        { SWS_H2_SET_MAX_HEADER_LIST_SIZE }, { SWS_H2_SET_ENABLE_PUSH }
    };
    uint32_t                  value[4];
    int                       i;

    /* (4096: SETTINGS_HEADER_TABLE_SIZE until the client says otherwise) */
    sws_hpack_encoder_init(&h2c->hpack, 4096);
    /* (ours: we send no SETTINGS_HEADER_TABLE_SIZE, the default stands) */
    sws_hpack_decoder_init(&h2c->hdec, sws_http_v2_classify);
    sws_conn_stat_plain(h2_connections, 1);

    /* Rapid reset (CVE-2023-44487): a burst of twice the stream limit,
     * then 33 a second (sws_http_v2_frame.c). */
    h2c->rst_burst = sws_max(2 * conf->concurrent_streams, 64);
    h2c->rst_tokens = h2c->rst_burst * 1000;
    h2c->rst_last = sws_current_msec();
    /* nginx's limits: each field within one large header buffer, the
     * whole list within all of them. */
    header_size = conf->max_header_size != SWS_UNSET_SIZE
                  ? conf->max_header_size
                  : cscf->large_client_header_buffer_size * cscf->large_client_header_buffers;
    h2c->max_header_size = header_size;
    h2c->max_field_size = conf->max_field_size != SWS_UNSET_SIZE
                          ? conf->max_field_size : cscf->large_client_header_buffer_size;

    h2c->peer_initial_window = SWS_H2_DEFAULT_WINDOW;
    h2c->peer_max_frame = SWS_H2_DEFAULT_FRAME;
    h2c->send_window = SWS_H2_DEFAULT_WINDOW;
    h2c->recv_window = SWS_H2_CONN_WINDOW;
    /* Until the client acknowledges our SETTINGS it may use the default. */
    h2c->local_window = (int32_t) sws_max(conf->preread_size, SWS_H2_DEFAULT_WINDOW);
    h2c->preface_left = 24;

    value[0] = (uint32_t) conf->concurrent_streams;
    value[1] = (uint32_t) conf->preread_size;
    value[2] = (uint32_t) header_size;
    value[3] = 0;
    for (i = 0; i < 4; i++) {
        *p++ = (u_char) (order[i].id >> 8);
        *p++ = (u_char) order[i].id;
        p = sws_http_v2_put32(p, value[i]);
    }
    if (sws_http_v2_queue_head(h2c, sizeof(s), SWS_H2_SETTINGS, 0, 0) != SWS_OK
        || sws_http_v2_queue(h2c, s, sizeof(s)) != SWS_OK
        || sws_http_v2_queue_window(h2c, 0, SWS_H2_CONN_WINDOW - SWS_H2_DEFAULT_WINDOW)
           != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static void
sws_http_v2_session_cleanup(void *data)
{
    sws_http_v2_conn_t *h2c = data;

    sws_hpack_decoder_release(&h2c->hdec);
    free(h2c->hpack_rest);
    h2c->hpack_rest = NULL;
    sws_hpack_encoder_release(&h2c->hpack);
    free(h2c->hold);
    h2c->hold = NULL;
    sws_http_v2_out_release(h2c);
    free(h2c);
}

void
sws_http_v2_init(sws_http_session_t *s, const u_char *data, size_t len)
{
    sws_connection_t        *c = s->connection;
    sws_http_v2_conn_t      *h2c;
    sws_http_v2_main_conf_t *h2mcf;
    size_t                   size;
    ssize_t                  used;

    /* The connection's state is malloc()'s, freed by its cleanup (the
     * pool's last use of it): larger than a block of a connection's pool,
     * a pool would take it as a large block of the allocation cache, whose
     * size class (640 bytes and its header) cost every idle HTTP/2
     * connection 128 bytes more than malloc()'s chunk. */
    h2c = sws_calloc(sizeof(sws_http_v2_conn_t), c->log);
    if (h2c == NULL) {
        sws_http_close_connection(c);
        return;
    }
    if (sws_pool_cleanup_add(c->pool, sws_http_v2_session_cleanup, h2c) != SWS_OK) {
        free(h2c);
        sws_http_close_connection(c);
        return;
    }
    h2c->connection = c;
    h2c->client = s;
    h2c->conf = s->cscf->ctx->srv_conf[sws_http_v2_module.index];
    sws_queue_init(&h2c->streams);
    sws_http_v2_stream_ids_init(h2c);
    sws_queue_init(&h2c->background);
    h2mcf = s->cscf->ctx->main_conf[sws_http_v2_module.index];

    size = h2mcf->recv_buffer_size + SWS_H2_FRAME_HEADER + SWS_H2_DEFAULT_FRAME;
    if (sws_http_v2_rbuf == NULL || sws_http_v2_rbuf_size < size) {
        free(sws_http_v2_rbuf);
        sws_http_v2_rbuf = sws_alloc(size, c->log);
        sws_http_v2_rbuf_size = sws_http_v2_rbuf ? size : 0;
    }
    if (sws_http_v2_rbuf == NULL || sws_http_v2_session(h2c) != SWS_OK) {
        sws_log_error(SWS_LOG_ALERT, c->log, 0, "cannot start an HTTP/2 session");
        sws_http_close_connection(c);
        return;
    }

    c->data = h2c;
    c->shutdown = sws_http_v2_shutdown;
    c->read->handler = sws_http_v2_read_handler;
    c->write->handler = sws_http_v2_write_handler;
    c->idle = 0;

    if (len) {
        /* (the preface and what came with it: within one frame's room) */
        if (len > sws_http_v2_rbuf_size) {
            sws_http_v2_close(h2c);
            return;
        }
        memcpy(sws_http_v2_rbuf, data, len);
        h2c->in_recv = 1;
        used = sws_http_v2_frames(h2c, sws_http_v2_rbuf, len);
        h2c->in_recv = 0;
        if (used >= 0 && (size_t) used < len) {
            h2c->hold = malloc(len - used);
            if (h2c->hold == NULL) {
                sws_http_v2_close(h2c);
                return;
            }
            memcpy(h2c->hold, sws_http_v2_rbuf + used, len - used);
            h2c->hold_len = len - used;
        }
        if (h2c->closing) {
            sws_http_v2_run(h2c);
            return;
        }
    }
    /* The first read: the client's settings may be there already (and
     * the TLS layer may have read past the handshake: no edge will say). */
    c->read->ready = 1;
    sws_http_v2_read_handler(c->read);
}

void
sws_http_v2_post_send(sws_http_v2_conn_t *h2c)
{
    h2c->send_pending = 1;
    /* Processing frames or running, the output is produced next anyway:
     * an event would be a second, empty run. */
    if (!h2c->in_recv) {
        sws_post_event(h2c->connection->write);
    }
}

void
sws_http_v2_goaway(sws_http_v2_conn_t *h2c, uint32_t error)
{
    if (h2c->closing || (h2c->goaway && error == SWS_H2_NO_ERROR)) {
        return;
    }
    h2c->goaway = 1;
    h2c->goaway_last = h2c->last_stream_id;
    if (sws_http_v2_queue_goaway(h2c, (uint32_t) h2c->last_stream_id, error) != SWS_OK) {
        h2c->closing = 1;
        return;
    }
    if (error != SWS_H2_NO_ERROR) {
        /* An error ends the connection: streams are not finished. */
        h2c->closing = 1;
    }
    sws_http_v2_post_send(h2c);
}

/*
 * Graceful shutdown (RFC 9113 6.8): a GOAWAY with the largest stream id
 * first, which tells the client to open no more streams here but refuses
 * none of those already on their way, and a PING. When the PING comes back
 * every stream the client opened before it read the notice has arrived:
 * the final GOAWAY names the last of them, those are finished, then the
 * connection ends. A client that does not answer gets the final GOAWAY
 * after worker_shutdown_idle.
 */
static void
sws_http_v2_shutdown(sws_connection_t *c)
{
    sws_http_v2_conn_t *h2c = c->data;

    if (h2c->goaway || h2c->draining) {
        return;
    }
    sws_http_v2_drain(h2c);
    sws_http_v2_run(h2c);
}

static void
sws_http_v2_drain(sws_http_v2_conn_t *h2c)
{
    h2c->draining = 1;
    h2c->trimming = 0;                 /* the read timer waits for the ack now */
    if (sws_http_v2_queue_goaway(h2c, SWS_H2_MAX_WINDOW, SWS_H2_NO_ERROR) != SWS_OK
        || sws_http_v2_queue_head(h2c, 8, SWS_H2_PING, 0, 0) != SWS_OK
        || sws_http_v2_queue(h2c, sws_http_v2_drain_ping, 8) != SWS_OK)
    {
        sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);
        return;
    }
    /* The read timer is the idle one, or ignored while streams are open:
     * it bounds the wait for the ack now. */
    sws_add_timer(h2c->connection->read, sws_exiting_idle ? sws_exiting_idle : 1);
}

void
sws_http_v2_drain_ack(sws_http_v2_conn_t *h2c, const u_char *opaque)
{
    if (h2c->draining && !h2c->goaway
        && memcmp(opaque, sws_http_v2_drain_ping, sizeof(sws_http_v2_drain_ping)) == 0)
    {
        sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);
    }
}

static void
sws_http_v2_release(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_stream_t *st;

    while (!sws_queue_empty(&h2c->streams)) {
        st = sws_queue_data(sws_queue_head(&h2c->streams), sws_http_v2_stream_t, queue);
        sws_http_v2_stream_close(st, SWS_H2_CANCEL);
    }
    sws_http_v2_out_release(h2c);
    free(h2c->prio_idle);
    h2c->prio_idle = NULL;
    h2c->nprio_idle = 0;
    free(h2c->hold);
    h2c->hold = NULL;
    h2c->hold_len = 0;
}

static void
sws_http_v2_close(sws_http_v2_conn_t *h2c)
{
    sws_connection_t *c = h2c->connection;

    h2c->in_recv = 1;             /* no more posted runs */
    sws_http_v2_release(h2c);
    if (sws_http_v2_background_wait(h2c)) {
        return;             /* closed by the last background request */
    }
    sws_http_close_connection(c);
}

/* After our GOAWAY: what the client still sends must not make close()
 * reset the connection before it read the GOAWAY. Stop writing, drain
 * for a while, then close. */
static void
sws_http_v2_linger_handler(sws_event_t *rev)
{
    sws_connection_t   *c = rev->data;
    sws_http_v2_conn_t *h2c = c->data;
    ssize_t             n;

    if (rev->timedout || sws_current_msec() >= h2c->linger_deadline) {
        sws_http_v2_close(h2c);
        return;
    }
    do {
        n = sws_unix_recv(c, sws_http_v2_rbuf, sws_http_v2_rbuf_size);
        if (n == 0 || n == SWS_ERROR) {
            sws_http_v2_close(h2c);
            return;
        }
    } while (n > 0);
}

static void
sws_http_v2_linger(sws_http_v2_conn_t *h2c)
{
    sws_connection_t         *c = h2c->connection;
    sws_http_core_loc_conf_t *clcf = h2c->client->cscf->ctx->loc_conf[sws_http_core_module.index];

    h2c->in_recv = 1;
    sws_http_v2_release(h2c);
    if (c->ssl) {
        sws_ssl_shutdown(c);            /* close_notify, then raw bytes only */
    }
    if (c->error || c->read->eof || sws_connection_shutdown_write(c) != SWS_OK) {
        sws_http_v2_close(h2c);
        return;
    }
    if (c->reusable) {
        sws_reusable_connection(c, 0);
    }
    h2c->linger_deadline = sws_current_msec() + sws_min(clcf->lingering_time, 2000);
    c->read->handler = sws_http_v2_linger_handler;
    c->write->handler = sws_http_v2_linger_handler;
    sws_del_timer(c->write);
    sws_delete_posted_event(c->write);
    sws_add_timer(c->read, sws_min(clcf->lingering_timeout, 1000));
    c->read->ready = 1;
    sws_http_v2_linger_handler(c->read);
}

/* ---- the event handlers ---- */

/* How long a connection without streams stays. */
static sws_msec_t
sws_http_v2_idle_timeout(sws_http_v2_conn_t *h2c)
{
    sws_http_core_loc_conf_t *clcf = h2c->client->cscf->ctx->loc_conf[sws_http_core_module.index];

    return h2c->conf->idle_timeout != SWS_UNSET_MSEC ? h2c->conf->idle_timeout
                                                     : clcf->keepalive_timeout;
}

/* One read, after the incomplete frame kept from the last: SWS_OK (frames
 * processed), SWS_AGAIN, SWS_DONE (closing), SWS_ERROR (closed: h2c is
 * gone). */
static sws_int_t
sws_http_v2_read(sws_http_v2_conn_t *h2c)
{
    sws_connection_t *c = h2c->connection;
    size_t            held = h2c->hold_len, total;
    ssize_t           n, used;

    n = c->recv(c, sws_http_v2_rbuf + held, sws_http_v2_rbuf_size - held);
    if (n == SWS_AGAIN) {
        return SWS_AGAIN;
    }
    if (n == 0 || n == SWS_ERROR) {
        if (h2c->nstreams) {
            sws_log_error(SWS_LOG_INFO, c->log, 0, "client closed the HTTP/2 connection "
                          "with %lu streams open", (unsigned long) h2c->nstreams);
        }
        sws_http_v2_close(h2c);
        return SWS_ERROR;
    }
    if (held) {
        memcpy(sws_http_v2_rbuf, h2c->hold, held);
        free(h2c->hold);
        h2c->hold = NULL;
        h2c->hold_len = 0;
    }
    total = held + (size_t) n;

    h2c->in_recv = 1;
    used = sws_http_v2_frames(h2c, sws_http_v2_rbuf, total);
    h2c->in_recv = 0;
    if (used < 0 || h2c->closing) {
        return SWS_DONE;
    }
    if ((size_t) used < total) {
        h2c->hold = malloc(total - used);
        if (h2c->hold == NULL) {
            sws_http_v2_close(h2c);
            return SWS_ERROR;
        }
        memcpy(h2c->hold, sws_http_v2_rbuf + used, total - used);
        h2c->hold_len = total - used;
    }
    return SWS_OK;
}

static void
sws_http_v2_read_handler(sws_event_t *rev)
{
    sws_connection_t   *c = rev->data;
    sws_http_v2_conn_t *h2c = c->data;
    sws_uint_t          rounds = 0;
    sws_int_t           rc;

    if (rev->timedout) {
        rev->timedout = 0;
        if (h2c->trimming) {
            /* the first part of the idle time: give back, then the rest */
            h2c->trimming = 0;
            if (h2c->nstreams == 0 && !h2c->draining) {
                sws_http_v2_trim(h2c);
                sws_add_timer(rev, sws_http_v2_idle_timeout(h2c) - SWS_H2_TRIM_DELAY);
                if (!rev->ready) {
                    return;
                }
            }
        } else if (h2c->draining && !h2c->goaway) {
            sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);      /* no ack in time */
            sws_http_v2_run(h2c);
            return;
        } else if (h2c->nstreams == 0) {
            sws_log_debug(c->log, "http2 connection idle: closing");
            sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);
            h2c->closing = 1;
            sws_http_v2_run(h2c);
            return;
        }
    }
    if (c->close) {
        /* Worker shutdown, or connections ran out: no new streams. */
        c->close = 0;
        sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);
        if (h2c->nstreams == 0) {
            h2c->closing = 1;
        }
        sws_http_v2_run(h2c);
        return;
    }

    while (rev->ready && !h2c->closing) {
        if (++rounds > SWS_H2_READ_ROUNDS) {
            sws_post_event(rev);           /* more later: others' turn */
            break;
        }
        rc = sws_http_v2_read(h2c);
        if (rc == SWS_AGAIN) {
            break;
        }
        if (rc == SWS_ERROR) {
            return;                        /* closed */
        }
        if (rc == SWS_DONE) {
            break;
        }
    }
    if (h2c->headers_st && !h2c->headers_st->rev.timer_set) {
        sws_add_timer(&h2c->headers_st->rev, h2c->client->cscf->client_header_timeout);
    }
    sws_http_v2_run(h2c);
}

static void
sws_http_v2_write_handler(sws_event_t *wev)
{
    sws_connection_t   *c = wev->data;
    sws_http_v2_conn_t *h2c = c->data;

    if (wev->timedout) {
        wev->timedout = 0;
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out reading HTTP/2 frames");
        c->timedout = 1;
        sws_http_v2_close(h2c);
        return;
    }
    /* Writable again with nothing waiting for it: with edge-triggered
     * epoll this comes with every read, and the read handler has run
     * already. */
    if (h2c->out == NULL && !h2c->send_pending) {
        return;
    }
    sws_http_v2_run(h2c);
}

/* Produce the DATA that may go, send it with what is queued, close the
 * streams that are over, then decide about timers and the connection's
 * end. */
static void
sws_http_v2_run(sws_http_v2_conn_t *h2c)
{
    sws_connection_t         *c = h2c->connection;
    sws_http_core_loc_conf_t *clcf;
    sws_msec_t                idle;
    sws_int_t                 rc;
    sws_uint_t                rounds = 0;
    int                       produced;

    if (sws_exiting && !h2c->goaway && !h2c->draining && !h2c->closing) {
        sws_http_v2_drain(h2c);         /* a connection begun while exiting */
    }

    h2c->in_recv = 1;
    for ( ;; ) {
        h2c->send_pending = 0;
        produced = h2c->closing ? 0 : sws_http_v2_send_data(h2c);
        sws_http_v2_close_streams(h2c);
        rc = sws_http_v2_flush(h2c);
        if (rc == SWS_ERROR) {
            sws_http_v2_close(h2c);
            return;
        }
        if (rc == SWS_AGAIN) {
            break;
        }
        if (!produced && !h2c->send_pending) {
            break;
        }
        if (++rounds > SWS_H2_SEND_ROUNDS) {
            h2c->send_pending = 1;          /* others' turn, then more */
            sws_post_event(c->write);
            break;
        }
    }
    h2c->in_recv = 0;
    if (!h2c->closing) {
        sws_http_v2_write_hooks(h2c);
    }

    clcf = h2c->client->cscf->ctx->loc_conf[sws_http_core_module.index];
    if (h2c->out) {
        if (!c->write->timer_set) {
            sws_add_timer(c->write, clcf->send_timeout);
        }
        if (c->write->ready) {
            sws_post_event(c->write);
        }
        return;
    }
    sws_del_timer(c->write);

    /* The end: ours (closing, or a GOAWAY with nothing left in flight),
     * or the client's (its GOAWAY, and no stream left). */
    if (h2c->closing || ((h2c->goaway || h2c->goaway_seen) && h2c->nstreams == 0)) {
        sws_http_v2_linger(h2c);
        return;
    }

    /* Idle: no stream open. The keep-alive timer runs, and the connection
     * may be closed when connections run out. */
    if (h2c->nstreams == 0) {
        if (!c->reusable) {
            sws_reusable_connection(c, 1);
        }
        /* A client that came back for a second stream is likely to come
         * back at once again (a page's resources, a load generator): its
         * TLS record buffers stay between requests from now on, until the
         * connection pauses (sws_http_v2_trim). Not from the first
         * request: a connection left idle after one request must cost
         * what it did (bench/idle; buffers kept a second by thousands of
         * such connections leave holes in the heap once freed). */
        if (c->ssl && !h2c->tls_buffers && h2c->last_stream_id > 1 && !h2c->draining) {
            sws_ssl_keep_buffers(c);
            h2c->tls_buffers = 1;
        }
        if (!h2c->draining || h2c->goaway) {     /* else it waits for the ack */
            idle = sws_http_v2_idle_timeout(h2c);
            /* A client that pauses gives the HPACK tables and the TLS
             * record buffers back after a while (sws_http_v2_trim); one
             * that goes on at once keeps them. */
            h2c->trimming = (h2c->hpack.table || h2c->hdec.entry || h2c->tls_buffers)
                            && idle > 2 * SWS_H2_TRIM_DELAY;
            sws_add_timer(c->read, h2c->trimming ? SWS_H2_TRIM_DELAY : idle);
        }
    } else {
        if (c->reusable) {
            /* The idle timer is left to run (a tree operation less per
             * request): firing with streams open, it is ignored, and the
             * next idle moment sets it again. */
            sws_reusable_connection(c, 0);
        }
        /* Streams open and nothing to write: they wait for something
         * (an upstream, a long poll, a request body, the client's
         * window), maybe for long: the TLS record buffers go now, as
         * every record freed them before they were kept. */
        if (h2c->tls_buffers) {
            h2c->tls_buffers = 0;
            (void) sws_ssl_release_buffers(c);
            sws_log_debug(c->log, "http2 streams waiting: TLS record buffers freed");
        }
    }
}
