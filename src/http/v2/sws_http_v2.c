/*
 * HTTP/2 connections: an nghttp2 server session fed from the socket (or
 * the TLS layer) and drained into it, the settings and limits, idle and
 * send timeouts, GOAWAY at shutdown and on abuse.
 *
 * nghttp2 is never re-entered: its callbacks (and the request handlers
 * they start) only queue work, and the event handlers here run the
 * session. A connection is closed only from these handlers.
 */
#include <unistd.h>
#include <sys/mman.h>
#include "sws_alloc_cache.h"
#include "sws_http_v2.h"
#include "sws_ssl.h"
#include "sws_conn_stats.h"

#define SWS_H2_OUT_BLOCK     16384          /* bytes of one output block */
#define SWS_H2_OUT_HIGH      (64 * 1024)    /* queue no more frames past this */
#define SWS_H2_OUT_FREE      8              /* spare blocks kept per worker */
#define SWS_H2_CONN_WINDOW   (16 << 20)     /* the connection's receive window */
#define SWS_H2_READ_ROUNDS   8              /* reads per event, then others' turn */
#define SWS_H2_SEND_ROUNDS   16

static void sws_http_v2_read_handler(sws_event_t *rev);
static void sws_http_v2_write_handler(sws_event_t *wev);
static void sws_http_v2_close(sws_http_v2_conn_t *h2c);
static void sws_http_v2_run(sws_http_v2_conn_t *h2c);
static void sws_http_v2_shutdown(sws_connection_t *c);
static void sws_http_v2_drain(sws_http_v2_conn_t *h2c);

/* The opaque data of the shutdown's PING. */
static const uint8_t  sws_http_v2_drain_ping[8] = { 's', 'w', 's', 'q', 'u', 'i', 't', '!' };

/* The receive buffer is per worker: nghttp2 keeps what it needs. */
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

sws_int_t
sws_http_v2_queue(sws_http_v2_conn_t *h2c, const u_char *data, size_t n)
{
    sws_http_v2_out_t *o;
    size_t             k;

    while (n) {
        o = h2c->out_tail;
        if (o == NULL || o->buf.last == o->buf.end) {
            o = sws_http_v2_out_alloc(h2c);
            if (o == NULL) {
                return SWS_ERROR;
            }
            if (h2c->out_tail) {
                h2c->out_tail->next = o;
                h2c->out_tail->cl.next = &o->cl;
            } else {
                h2c->out = o;
            }
            h2c->out_tail = o;
        }
        k = sws_min((size_t) (o->buf.end - o->buf.last), n);
        o->buf.last = sws_cpymem(o->buf.last, data, k);
        data += k;
        n -= k;
        h2c->out_bytes += k;
    }
    return SWS_OK;
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
        return SWS_OK;
    }
    return SWS_AGAIN;
}

/* ---- nghttp2 plumbing ---- */

static ssize_t
sws_http_v2_send_cb(nghttp2_session *session, const uint8_t *data, size_t length, int flags,
    void *user_data)
{
    sws_http_v2_conn_t *h2c = user_data;

    (void) session;
    (void) flags;

    /* An empty queue takes any frame: the mark only paces nghttp2. */
    if (h2c->out_bytes && length > sws_http_v2_queue_room(h2c)) {
        h2c->send_blocked = 1;
        return NGHTTP2_ERR_WOULDBLOCK;
    }
    if (data + length > h2c->fb_pages && data < h2c->fb_pages_end) {
        h2c->fb_dirty = 1;             /* a frame reached the pages given back */
    }
    return sws_http_v2_queue(h2c, data, length) == SWS_OK ? (ssize_t) length
                                                          : NGHTTP2_ERR_CALLBACK_FAILURE;
}

static int
sws_http_v2_error_cb(nghttp2_session *session, int lib_error_code, const char *msg,
    size_t len, void *user_data)
{
    sws_http_v2_conn_t *h2c = user_data;

    (void) session;
    (void) lib_error_code;

    sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0, "http2: %.*s", (int) len, msg);
    return 0;
}

/*
 * nghttp2 builds every frame but DATA (sent without a copy, see
 * sws_http_v2_response.c) in a buffer of its session, allocated when the
 * session is made and kept for its life: 16 KiB and 10 bytes. The frames
 * of a small response fill only the start of it, so the session's
 * allocator makes this one block itself, page-aligned, and an idle
 * connection gives its pages after the first back to the kernel (madvise:
 * what they held is gone, the next touch maps a zero page): once, then
 * again only after a frame reached them. The buffer is recognised by its
 * size among what the session allocates while it is made; with another
 * nghttp2 that is not recognised, nothing is given back.
 */
/* the default largest payload, the frame header, a pad length byte */
#define SWS_H2_FRAMEBUF_LEN  (16384 + 9 + 1)

static void * __attribute__((noinline))
sws_http_v2_mem_framebuf(sws_http_v2_conn_t *h2c, size_t size)
{
    size_t  page = (size_t) sysconf(_SC_PAGESIZE);
    void   *p;

    if (h2c->fb != NULL || posix_memalign(&p, page, size) != 0) {
        return NULL;
    }
    h2c->fb = p;
    h2c->fb_pages = (u_char *) p + page;
    h2c->fb_pages_end = (u_char *) p + (size & ~(page - 1));
    h2c->fb_dirty = 1;                 /* glibc may hand out used memory */
    return p;
}

static void *
sws_http_v2_mem_malloc(size_t size, void *user)
{
    sws_http_v2_conn_t *h2c = user;
    void               *p;

    if (sws_unlikely(h2c->creating && size == SWS_H2_FRAMEBUF_LEN)) {
        p = sws_http_v2_mem_framebuf(h2c, size);
        if (p) {
            return p;
        }
    }
    return sws_alloc_cache_malloc(size);
}

static void
sws_http_v2_mem_free(void *p, void *user)
{
    sws_http_v2_conn_t *h2c = user;

    if (sws_unlikely(p == h2c->fb && p != NULL)) {
        h2c->fb = h2c->fb_pages = h2c->fb_pages_end = NULL;
        free(p);
        return;
    }
    sws_alloc_cache_free(p);
}

static void *
sws_http_v2_mem_realloc(void *p, size_t size, void *user)
{
    sws_http_v2_conn_t *h2c = user;
    void               *np;

    if (p == NULL) {
        np = h2c->creating && size == SWS_H2_FRAMEBUF_LEN
             ? sws_http_v2_mem_framebuf(h2c, size) : NULL;   /* nghttp2_buf_reserve */
        return np ? np : sws_alloc_cache_realloc(NULL, size);
    }
    if (p != h2c->fb) {
        return sws_alloc_cache_realloc(p, size);
    }
    /* Not done by nghttp2 1.52; if it were, the block leaves our hands. */
    if (size == 0) {
        sws_http_v2_mem_free(p, h2c);
        return NULL;
    }
    np = sws_alloc_cache_malloc(size);
    if (np != NULL) {
        memcpy(np, p, sws_min(size, (size_t) SWS_H2_FRAMEBUF_LEN));
        sws_http_v2_mem_free(p, h2c);
    }
    return np;
}

/* The connection is idle and nghttp2 has nothing to send: its frame
 * buffer holds nothing. */
static void
sws_http_v2_idle_pages(sws_http_v2_conn_t *h2c)
{
    if (h2c->fb_pages && h2c->fb_dirty && !nghttp2_session_want_write(h2c->session)) {
        h2c->fb_dirty = 0;
        (void) madvise(h2c->fb_pages, h2c->fb_pages_end - h2c->fb_pages, MADV_DONTNEED);
    }
}

static sws_int_t
sws_http_v2_session(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_srv_conf_t    *conf = h2c->conf;
    sws_http_core_srv_conf_t  *cscf = h2c->client->cscf;
    nghttp2_session_callbacks *cb;
    nghttp2_option            *opt;
    nghttp2_settings_entry     iv[4];
    nghttp2_mem                mem;
    size_t                     header_size;
    int                        rv;

    if (nghttp2_session_callbacks_new(&cb) != 0) {
        return SWS_ERROR;
    }
    nghttp2_session_callbacks_set_send_callback(cb, sws_http_v2_send_cb);
    nghttp2_session_callbacks_set_error_callback2(cb, sws_http_v2_error_cb);
    sws_http_v2_stream_callbacks(cb);
    sws_http_v2_response_callbacks(cb);

    if (nghttp2_option_new(&opt) != 0) {
        nghttp2_session_callbacks_del(cb);
        return SWS_ERROR;
    }
    /* Windows are given back as the request handler takes the body. */
    nghttp2_option_set_no_auto_window_update(opt, 1);
    /* Closed streams are remembered (as many as streams may be open):
     * frames after END_STREAM or RST_STREAM on them are STREAM_CLOSED
     * errors (RFC 9113 5.1), not silently dropped. */
    nghttp2_option_set_no_closed_streams(opt, 0);
    nghttp2_option_set_max_outbound_ack(opt, 1000);
    nghttp2_option_set_max_settings(opt, 32);
    nghttp2_option_set_max_continuations(opt, 8);
    /* Rapid reset (CVE-2023-44487): counted in sws_http_v2_stream.c (a
     * burst of twice the stream limit, then 33 a second), which answers
     * ENHANCE_YOUR_CALM; nghttp2's own limit is a backstop above it. */
    h2c->rst_burst = sws_max(2 * conf->concurrent_streams, 64);
    h2c->rst_tokens = h2c->rst_burst * 1000;
    h2c->rst_last = sws_current_msec();
    nghttp2_option_set_stream_reset_rate_limit(opt, 2 * h2c->rst_burst, 33);
    /* nginx's limits: each field within one large header buffer, the
     * whole list within all of them. */
    header_size = conf->max_header_size != SWS_UNSET_SIZE
                  ? conf->max_header_size
                  : cscf->large_client_header_buffer_size * cscf->large_client_header_buffers;
    h2c->max_header_size = header_size;
    h2c->max_field_size = conf->max_field_size != SWS_UNSET_SIZE
                          ? conf->max_field_size : cscf->large_client_header_buffer_size;
    nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);

    /* nghttp2 allocates and frees streams and frames on every request:
     * from the per-thread cache, not malloc(). The session keeps its own
     * copy of this, with h2c for the frame buffer. */
    mem.mem_user_data = h2c;
    mem.malloc = sws_http_v2_mem_malloc;
    mem.free = sws_http_v2_mem_free;
    mem.calloc = sws_alloc_cache_mem_calloc;
    mem.realloc = sws_http_v2_mem_realloc;
    h2c->creating = 1;
    rv = nghttp2_session_server_new3(&h2c->session, cb, h2c, opt, &mem);
    h2c->creating = 0;
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    if (rv != 0) {
        return SWS_ERROR;
    }
    sws_conn_stat_plain(h2_connections, 1);

    iv[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    iv[0].value = (uint32_t) conf->concurrent_streams;
    iv[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
    iv[1].value = (uint32_t) conf->preread_size;
    iv[2].settings_id = NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE;
    iv[2].value = (uint32_t) header_size;
    iv[3].settings_id = NGHTTP2_SETTINGS_ENABLE_PUSH;
    iv[3].value = 0;
    if (nghttp2_submit_settings(h2c->session, NGHTTP2_FLAG_NONE, iv, 4) != 0
        || nghttp2_session_set_local_window_size(h2c->session, NGHTTP2_FLAG_NONE, 0,
                                                 SWS_H2_CONN_WINDOW) != 0)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}

static void
sws_http_v2_session_cleanup(void *data)
{
    sws_http_v2_conn_t *h2c = data;

    if (h2c->session) {
        nghttp2_session_del(h2c->session);
        h2c->session = NULL;
    }
}

void
sws_http_v2_init(sws_http_session_t *s, const u_char *data, size_t len)
{
    sws_connection_t        *c = s->connection;
    sws_http_v2_conn_t      *h2c;
    sws_http_v2_main_conf_t *h2mcf;
    ssize_t                  rv;

    h2c = sws_pcalloc(c->pool, sizeof(sws_http_v2_conn_t));
    if (h2c == NULL || sws_pool_cleanup_add(c->pool, sws_http_v2_session_cleanup, h2c)
                       != SWS_OK)
    {
        sws_http_close_connection(c);
        return;
    }
    h2c->connection = c;
    h2c->client = s;
    h2c->conf = s->cscf->ctx->srv_conf[sws_http_v2_module.index];
    sws_queue_init(&h2c->streams);
    sws_queue_init(&h2c->background);
    h2mcf = s->cscf->ctx->main_conf[sws_http_v2_module.index];

    if (sws_http_v2_rbuf == NULL || sws_http_v2_rbuf_size < h2mcf->recv_buffer_size) {
        free(sws_http_v2_rbuf);
        sws_http_v2_rbuf = sws_alloc(h2mcf->recv_buffer_size, c->log);
        sws_http_v2_rbuf_size = sws_http_v2_rbuf ? h2mcf->recv_buffer_size : 0;
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
        h2c->in_recv = 1;
        rv = nghttp2_session_mem_recv(h2c->session, data, len);
        h2c->in_recv = 0;
        if (rv < 0) {
            sws_http_v2_close(h2c);
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
    /* Inside nghttp2_session_mem_recv() the read handler runs the
     * session next anyway: an event would be a second, empty run. */
    if (!h2c->in_recv) {
        sws_post_event(h2c->connection->write);
    }
}

void
sws_http_v2_goaway(sws_http_v2_conn_t *h2c, uint32_t error)
{
    if (h2c->goaway) {
        return;
    }
    h2c->goaway = 1;
    if (error == NGHTTP2_NO_ERROR) {
        nghttp2_submit_goaway(h2c->session, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(h2c->session),
                              NGHTTP2_NO_ERROR, NULL, 0);
        return;
    }
    /* An error ends the connection: streams are not finished. */
    nghttp2_session_terminate_session(h2c->session, error);
    h2c->closing = 1;
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
    if (nghttp2_submit_shutdown_notice(h2c->session) != 0
        || nghttp2_submit_ping(h2c->session, NGHTTP2_FLAG_NONE, sws_http_v2_drain_ping) != 0)
    {
        sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);
        return;
    }
    /* The read timer is the idle one, or ignored while streams are open:
     * it bounds the wait for the ack now. */
    sws_add_timer(h2c->connection->read, sws_exiting_idle ? sws_exiting_idle : 1);
}

void
sws_http_v2_drain_ack(sws_http_v2_conn_t *h2c, const uint8_t *opaque)
{
    if (h2c->draining && !h2c->goaway
        && memcmp(opaque, sws_http_v2_drain_ping, sizeof(sws_http_v2_drain_ping)) == 0)
    {
        sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);
    }
}

static void
sws_http_v2_release(sws_http_v2_conn_t *h2c)
{
    sws_http_v2_stream_t *st;

    while (!sws_queue_empty(&h2c->streams)) {
        st = sws_queue_data(sws_queue_head(&h2c->streams), sws_http_v2_stream_t, queue);
        sws_http_v2_stream_close(st, NGHTTP2_CANCEL);
    }
    while (h2c->out) {
        sws_http_v2_out_t *o = h2c->out;
        h2c->out = o->next;
        sws_http_v2_out_free(o);
    }
    h2c->out_tail = NULL;
}

static void
sws_http_v2_close(sws_http_v2_conn_t *h2c)
{
    sws_connection_t *c = h2c->connection;

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

    sws_http_v2_release(h2c);
    if (c->ssl) {
        sws_ssl_shutdown(c);            /* close_notify, then raw bytes only */
    }
    if (c->error || c->read->eof || shutdown(c->fd, SHUT_WR) == -1) {
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
    sws_add_timer(c->read, sws_min(clcf->lingering_timeout, 1000));
    c->read->ready = 1;
    sws_http_v2_linger_handler(c->read);
}

/* ---- the event handlers ---- */

static void
sws_http_v2_read_handler(sws_event_t *rev)
{
    sws_connection_t   *c = rev->data;
    sws_http_v2_conn_t *h2c = c->data;
    ssize_t             n, rv;
    sws_uint_t          rounds = 0;
    uint32_t            code;

    if (rev->timedout) {
        rev->timedout = 0;
        if (h2c->draining && !h2c->goaway) {
            sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);      /* no ack in time */
            sws_http_v2_run(h2c);
            return;
        }
        if (h2c->nstreams == 0) {
            sws_log_debug(c->log, "http2 connection idle: closing");
            sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);
            h2c->closing = 1;
            sws_http_v2_run(h2c);
            return;
        }
    }
    if (c->close) {
        /* Worker shutdown, or connections ran out: no new streams. */
        c->close = 0;
        sws_http_v2_goaway(h2c, NGHTTP2_NO_ERROR);
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
        n = c->recv(c, sws_http_v2_rbuf, sws_http_v2_rbuf_size);
        if (n == SWS_AGAIN) {
            break;
        }
        if (n == 0 || n == SWS_ERROR) {
            if (h2c->nstreams) {
                sws_log_error(SWS_LOG_INFO, c->log, 0, "client closed the HTTP/2 connection "
                              "with %lu streams open", (unsigned long) h2c->nstreams);
            }
            sws_http_v2_close(h2c);
            return;
        }
        h2c->in_recv = 1;
        rv = nghttp2_session_mem_recv(h2c->session, sws_http_v2_rbuf, (size_t) n);
        h2c->in_recv = 0;
        if (rv < 0) {
            /* Fatal for the session (the errors it handles itself it
             * answers with a GOAWAY of the right code and goes on). */
            sws_log_error(SWS_LOG_INFO, c->log, 0, "client sent invalid HTTP/2: %s",
                          nghttp2_strerror((int) rv));
            if (rv == NGHTTP2_ERR_NOMEM) {
                sws_http_v2_close(h2c);
                return;
            }
            if (rv == NGHTTP2_ERR_CALLBACK_FAILURE && h2c->calm) {
                code = h2c->calm;        /* our own verdict */
            } else if (rv == NGHTTP2_ERR_FLOODED || rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
                code = NGHTTP2_ENHANCE_YOUR_CALM;
            } else {
                code = NGHTTP2_PROTOCOL_ERROR;
            }
            /* Said once: nghttp2 refuses a second GOAWAY. */
            (void) nghttp2_session_terminate_session(h2c->session, code);
            h2c->goaway = 1;
            h2c->closing = 1;
            break;
        }
        if (h2c->calm) {
            sws_http_v2_goaway(h2c, h2c->calm);
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
     * epoll this comes with every read, and the read handler has run the
     * session already. */
    if (h2c->out == NULL && !h2c->send_pending) {
        return;
    }
    sws_http_v2_run(h2c);
}

/* Send what nghttp2 has, then decide about timers and the connection's
 * end. */
static void
sws_http_v2_run(sws_http_v2_conn_t *h2c)
{
    sws_connection_t         *c = h2c->connection;
    sws_http_core_loc_conf_t *clcf;
    sws_int_t                 rc;
    sws_uint_t                rounds = 0;
    int                       rv;

    if (sws_exiting && !h2c->goaway && !h2c->draining) {
        sws_http_v2_drain(h2c);         /* a connection begun while exiting */
    }
    h2c->send_pending = 0;

    for ( ;; ) {
        rc = sws_http_v2_flush(h2c);
        if (rc == SWS_ERROR) {
            sws_http_v2_close(h2c);
            return;
        }
        if (rc == SWS_AGAIN) {
            break;
        }
        /* nghttp2_session_send() gives all it has unless our queue
         * stopped it: only then is there more to ask for (asking
         * nghttp2_session_want_write() first costs as much as a send
         * that finds nothing). */
        if (rounds && !h2c->send_blocked) {
            break;
        }
        if (++rounds > SWS_H2_SEND_ROUNDS) {
            h2c->send_pending = 1;          /* others' turn, then more */
            sws_post_event(c->write);
            break;
        }
        h2c->send_blocked = 0;
        h2c->in_send = 1;
        rv = nghttp2_session_send(h2c->session);
        h2c->in_send = 0;
        if (rv != 0) {
            sws_log_error(SWS_LOG_INFO, c->log, 0, "http2 send failed: %s",
                          nghttp2_strerror(rv));
            sws_http_v2_close(h2c);
            return;
        }
        if (h2c->out == NULL) {
            break;                          /* nothing could be produced */
        }
    }
    sws_http_v2_write_hooks(h2c);

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
     * or the session's (after a GOAWAY with an error it wants nothing
     * more, whatever streams were open). */
    if (h2c->closing || (h2c->goaway && h2c->nstreams == 0)
        || (h2c->goaway_seen
            && !nghttp2_session_want_read(h2c->session)
            && !nghttp2_session_want_write(h2c->session)))
    {
        sws_http_v2_linger(h2c);
        return;
    }

    /* Idle: no stream open. The keep-alive timer runs, and the connection
     * may be closed when connections run out. */
    if (h2c->nstreams == 0) {
        if (!c->reusable) {
            sws_reusable_connection(c, 1);
        }
        sws_http_v2_idle_pages(h2c);
        if (!h2c->draining || h2c->goaway) {     /* else it waits for the ack */
            sws_add_timer(c->read, h2c->conf->idle_timeout != SWS_UNSET_MSEC
                                   ? h2c->conf->idle_timeout : clcf->keepalive_timeout);
        }
    } else if (c->reusable) {
        /* The idle timer is left to run (a tree operation less per
         * request): firing with streams open, it is ignored, and the next
         * idle moment sets it again. */
        sws_reusable_connection(c, 0);
    }
}
