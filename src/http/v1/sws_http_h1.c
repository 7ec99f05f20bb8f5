/*
 * HTTP/1.x connections: reading request heads line by line (in any number
 * of pieces, pipelined or not), keep-alive, finishing requests, closing.
 */
#include <unistd.h>
#include "sws_http_h1.h"
#include "sws_http_limit_rate.h"
#include "sws_http_request_head.h"
#include "sws_http_ssl.h"
#include "sws_times_internal.h"

static void sws_http1_read_head_handler(sws_event_t *rev);

static void sws_http1_writer(sws_event_t *wev);
static void sws_http1_lingering_handler(sws_event_t *rev);
static void sws_http1_empty_handler(sws_event_t *ev);
static sws_int_t sws_http1_process_head(sws_http_request_t *r);
static sws_int_t sws_http1_send_header(sws_http_request_t *r);
static int sws_http1_aborted(sws_http_request_t *r);
static sws_int_t sws_http1_tunnel(sws_http_request_t *r, sws_str_t *pending,
    sws_connection_t **bytes);
static int sws_http1_sendfile(sws_http_request_t *r);
static sws_int_t sws_http1_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *h, sws_uint_t n);
static void sws_http1_finish(sws_http_request_t *r, sws_int_t rc);
static void sws_http1_request_done(sws_http_request_t *r);
static void sws_http1_shutdown(sws_connection_t *c);
static void sws_http1_exiting_idle(sws_connection_t *c, int last_look);
static void sws_http1_lingering_close(sws_connection_t *c, int exiting);

static off_t
sws_http1_bytes_sent(sws_http_request_t *r)
{
    return r->connection->sent - r->sent_start;
}

const sws_http_proto_t sws_http1_proto = {
    .name = "HTTP/1.1",
    .process_head = sws_http1_process_head,
    .send_header = sws_http1_send_header,
    .send_body = sws_http1_send_body,
    .finish = sws_http1_finish,
    .release = sws_http1_request_done,
    .read_body = sws_http1_read_body,
    .read_body_data = sws_http1_read_body_data,
    .discard_body = sws_http1_discard_body,
    .bytes_sent = sws_http1_bytes_sent,
    .send_interim = sws_http1_send_interim,
    .aborted = sws_http1_aborted,
    .tunnel = sws_http1_tunnel,
    .sendfile = sws_http1_sendfile,
    .send_fixed = sws_http1_send_fixed,
};

static sws_int_t
sws_http1_init(sws_http_session_t *s)
{
    sws_connection_t *c = s->connection;
    sws_http1_conn_t *hc;

    hc = sws_pcalloc(c->pool, sizeof(sws_http1_conn_t));
    if (hc == NULL) {
        sws_http_close_connection(c);
        return SWS_ERROR;
    }
    hc->session = s;
    hc->idle_since = sws_now_msec();
    c->data = hc;
    c->shutdown = sws_http1_shutdown;
    c->read->handler = sws_http1_read_head_handler;
    c->write->handler = sws_http1_empty_handler;
    sws_add_timer(c->read, s->cscf->client_header_timeout);
    hc->header_timer = 1;
    return SWS_OK;
}

/* The session's protocol from now on (sws_http_protocol_t start). A
 * plain connection's head is read when the socket says so (at once if it
 * has said so already); after TLS at once: bytes may wait in the TLS
 * layer, or have been read while peeking. */
void
sws_http1_start(sws_http_session_t *s, const u_char *pre, size_t len)
{
    sws_connection_t *c = s->connection;

    (void) pre; (void) len;
    if (sws_http1_init(s) != SWS_OK) {
        return;
    }
    if (c->ssl || c->read->ready) {
        sws_http1_read_head_handler(c->read);
    }
}

/* Is b the start of the preface of the protocol a client may still choose
 * (s->prior: HTTP/2's prior knowledge)? 1 yes (all of it there), 0 no,
 * SWS_AGAIN: so far yes, need more, SWS_DECLINED: its first line, then
 * something else (a client of that protocol with an invalid preface, not
 * an HTTP/1 one). */
static sws_int_t
sws_http1_prior_preface(const sws_str_t *preface, sws_buf_t *b)
{
    size_t   n = sws_min((size_t) (b->last - b->pos), preface->len);
    u_char  *nl;

    if (memcmp(b->pos, preface->data, n) != 0) {
        nl = memchr(preface->data, '\n', preface->len);
        return nl && n > (size_t) (nl + 1 - preface->data)
               && memcmp(b->pos, preface->data, nl + 1 - preface->data) == 0 ? SWS_DECLINED : 0;
    }
    return n == preface->len ? 1 : SWS_AGAIN;
}

void
sws_http1_close_connection(sws_connection_t *c)
{
    sws_http1_conn_t *hc = c->data;

    if (hc && hc->rpool) {
        sws_pool_destroy(hc->rpool);
        hc->rpool = NULL;
    }
    sws_http_close_connection(c);
}

static void
sws_http1_empty_handler(sws_event_t *ev)
{
}

/* ---- reading the head ---- */

static sws_http_request_t *
sws_http1_create_request(sws_connection_t *c)
{
    sws_http1_conn_t   *hc = c->data;
    sws_http_request_t *r;

    if (hc->rpool == NULL) {
        hc->rpool = sws_http1_take_pool(c);
        if (hc->rpool == NULL) {
            return NULL;
        }
    }
    r = sws_http_create_request(hc->session, hc->rpool);
    if (r == NULL) {
        return NULL;
    }
    r->connection = c;
    r->sent_start = c->sent;
    r->stream = hc;
    r->proto = &sws_http1_proto;
    r->pipelined = hc->pipelined;
    hc->pipelined = 0;
    hc->r = r;
    hc->request_line_done = 0;
    hc->empty_lines = 0;
    hc->nlarge = 0;
    return r;
}

/* Only token characters so far: the method alone fills the buffers. */
static int
sws_http1_all_tchar(const u_char *p, const u_char *last)
{
    for ( ; p < last; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
              || (*p > ' ' && *p < 0x7f && strchr("!#$%&'*+-.^_`|~", *p) != NULL)))
        {
            return 0;
        }
    }
    return 1;
}

/* Move the unfinished line to a large buffer. */
static sws_int_t
sws_http1_grow_buffer(sws_http_request_t *r)
{
    sws_http1_conn_t         *hc = r->stream;
    sws_http_core_srv_conf_t *cscf = hc->session->cscf;
    sws_buf_t                *b = hc->buf, *nb;
    size_t                    have = b->last - b->pos;
    sws_uint_t                status = hc->request_line_done ? SWS_HTTP_HEADERS_TOO_LARGE
                                                             : SWS_HTTP_REQUEST_URI_TOO_LARGE;

    if (b->pos > b->start && !hc->request_line_done) {
        /* Nothing of this request points into the buffer yet: make room. */
        memmove(b->start, b->pos, have);
        b->pos = b->start;
        b->last = b->start + have;
        if (b->last < b->end) {
            return SWS_OK;
        }
    }
    if (hc->nlarge >= cscf->large_client_header_buffers
        || have >= cscf->large_client_header_buffer_size)
    {
        if (!hc->request_line_done && sws_http1_all_tchar(b->pos, b->last)) {
            /* a method longer than any we know: 501 (RFC 9112 3) */
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent too long method");
            return SWS_HTTP_NOT_IMPLEMENTED;
        }
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent too long %s",
                      hc->request_line_done ? "header line" : "URI");
        return status;
    }
    nb = sws_create_temp_buf(r->pool, cscf->large_client_header_buffer_size);
    if (nb == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    nb->last = sws_cpymem(nb->pos, b->pos, have);
    b->pos = b->last;
    hc->buf = nb;
    hc->nlarge++;
    return SWS_OK;
}

/* Parse complete lines in hc->buf. SWS_OK: head complete; SWS_AGAIN: need
 * more; else an HTTP status. */
static sws_int_t
sws_http1_parse_head(sws_http_request_t *r)
{
    sws_http1_conn_t       *hc = r->stream;
    sws_buf_t              *b;
    u_char                 *nl, *end;
    sws_http_request_line_t rl;
    sws_http_header_t      *h;
    sws_int_t               rc;
    u_char                  odd;

    for ( ;; ) {
        b = hc->buf;
        /* The empty line that ends every head, seen without a call. */
        if (b->last - b->pos >= 2 && b->pos[0] == '\r' && b->pos[1] == '\n') {
            nl = b->pos + 1;
        } else {
            nl = memchr(b->pos, '\n', b->last - b->pos);
        }
        if (nl == NULL) {
            /* Answer what can never be a request now, not at the header
             * timeout (TLS to a plain port, as nginx does). */
            if (!hc->request_line_done && sws_http_request_line_hopeless(b->pos, b->last)) {
                return SWS_HTTP_BAD_REQUEST;
            }
            if (b->last == b->end) {
                rc = sws_http1_grow_buffer(r);
                if (rc != SWS_OK) {
                    return rc;
                }
            }
            return SWS_AGAIN;
        }
        end = (nl > b->pos && nl[-1] == '\r') ? nl - 1 : nl;
        r->head_length += nl + 1 - b->pos;      /* every line found is consumed */

        if (!hc->request_line_done) {
            if (end == b->pos) {
                /* Empty lines before a request are ignored (RFC 9112 2.2). */
                if (++hc->empty_lines > 8) {
                    return SWS_HTTP_BAD_REQUEST;
                }
                b->pos = nl + 1;
                continue;
            }
            rc = sws_http_parse_request_line(&rl, b->pos, end);
            if (rc != SWS_OK) {
                /* Still say which version the error is in where we can. */
                r->http_version = SWS_HTTP_VERSION_11;
                r->request_line.data = b->pos;
                r->request_line.len = end - b->pos;
                return rc;
            }
            r->method = rl.method;
            r->method_name = rl.method_name;
            r->http_version = rl.version;
            r->request_line.data = b->pos;
            r->request_line.len = end - b->pos;
            r->unparsed_uri = rl.target;
            r->args = rl.args;
            if (rl.host.len) {
                r->host = rl.host;           /* validated later */
                r->schema = rl.schema;
            }
            r->raw_path = rl.path;
            r->complex_uri = rl.complex_path;
            r->encoded_slash = rl.encoded_slash;
            r->asterisk = rl.asterisk;
            hc->request_line_done = 1;
            b->pos = nl + 1;
            continue;
        }

        if (end == b->pos) {
            b->pos = nl + 1;
            return SWS_OK;               /* the empty line: head complete */
        }

        h = sws_array_push(&r->headers_in);
        if (h == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        rc = sws_http_parse_request_field(h, b->pos, b->pos, end, &odd);
        if (rc != SWS_OK) {
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent invalid header line: \"%.*s\"",
                          (int) sws_min(end - b->pos, 64), b->pos);
            return rc;
        }
        if (r->headers_in.nelts > SWS_HTTP_MAX_HEADERS) {
            return SWS_HTTP_HEADERS_TOO_LARGE;
        }
        rc = sws_http_request_field(r, h, odd);
        if (rc == SWS_DECLINED) {
            r->headers_in.nelts--;       /* ignore_invalid_headers */
        } else if (rc != SWS_OK) {
            return rc;
        }
        b->pos = nl + 1;
    }
}

/* Does the comma-separated list v contain token (case-insensitive)? */
static int
sws_http1_has_token(const sws_str_t *v, const char *token, size_t len)
{
    u_char *p = v->data, *last = v->data + v->len, *s, *e;

    while (p < last) {
        while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        s = p;
        while (p < last && *p != ',') {
            p++;
        }
        e = p;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) {
            e--;
        }
        if ((size_t) (e - s) == len && sws_strncasecmp(s, (const u_char *) token, len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Transfer-Encoding: only "chunked" is implemented. RFC 9112 6.3: chunked
 * must be the final coding of a request (else 400); other codings -> 501. */
static sws_int_t
sws_http1_transfer_encoding(sws_http_request_t *r)
{
    sws_str_t *v = r->h_transfer_encoding;
    u_char    *last = v->data + v->len, *p = last;
    sws_str_t  final;

    while (p > v->data && p[-1] != ',') {
        p--;
    }
    final.data = p;
    final.len = last - p;
    while (final.len && (*final.data == ' ' || *final.data == '\t')) {
        final.data++;
        final.len--;
    }
    if (!sws_str_caseeq_cstr(&final, "chunked")) {
        return sws_http1_has_token(v, "chunked", 7) ? SWS_HTTP_BAD_REQUEST
               : (final.len ? SWS_HTTP_NOT_IMPLEMENTED : SWS_HTTP_BAD_REQUEST);
    }
    if (p != v->data) {
        /* "chunked, chunked": chunked applied twice, which a sender must
         * never do (RFC 9112 6.1), is a framing error; "gzip, chunked": a
         * coding before chunked that we can't decode */
        final.data = v->data;
        final.len = p - v->data;
        return sws_http1_has_token(&final, "chunked", 7) ? SWS_HTTP_BAD_REQUEST
                                                          : SWS_HTTP_NOT_IMPLEMENTED;
    }
    r->chunked_in = 1;
    return SWS_OK;
}

/* HTTP/1's part of the request start (sws_http_process_request_headers
 * has chosen the server and parsed Content-Length): the body's framing
 * (RFC 9112 6), and whether the connection is kept. */
static sws_int_t
sws_http1_process_head(sws_http_request_t *r)
{
    if (r->http_version >= SWS_HTTP_VERSION_11) {
        r->keepalive = !(r->h_connection && sws_http1_has_token(r->h_connection, "close", 5));
    } else {
        r->keepalive = r->h_connection && sws_http1_has_token(r->h_connection, "keep-alive", 10);
    }
    if (r->h_transfer_encoding) {
        if (r->h_content_length) {
            /* A smuggling attempt, or a broken client: which one frames
             * the body is not known, so none is read (RFC 9112 6.3). */
            sws_log_error(SWS_LOG_INFO, r->log, 0, "client sent \"Content-Length\" and "
                          "\"Transfer-Encoding\" headers at the same time");
            r->content_length_n = -1;
            return SWS_HTTP_BAD_REQUEST;
        }
        if (r->http_version < SWS_HTTP_VERSION_11) {
            return SWS_HTTP_BAD_REQUEST;
        }
        return sws_http1_transfer_encoding(r);
    }
    return SWS_OK;
}

static void
sws_http1_read_head_handler(sws_event_t *rev)
{
    sws_connection_t   *c = rev->data;
    sws_http1_conn_t   *hc = c->data;
    sws_http_request_t *r = hc->r;
    sws_buf_t          *b;
    ssize_t             n;
    sws_int_t           rc;
    int                 last_look = 0;

    if (rev->timedout) {
        if (r && (hc->buf->last > hc->buf->start || hc->request_line_done)) {
            sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out sending the request head");
            r->keepalive = 0;
            sws_http_finalize(r, SWS_HTTP_REQUEST_TIME_OUT);
            return;
        }
        if (!sws_exiting) {
            sws_http1_close_connection(c);
            return;
        }
        /* Shutting down, and the wait for one more request is over: a
         * request that came meanwhile is still answered. */
        rev->timedout = 0;
        last_look = 1;
    }
    if (c->close) {
        sws_http1_close_connection(c);
        return;
    }

    if (hc->small == NULL || hc->small->start == NULL) {
        if (sws_http1_take_buffer(c, hc->session->cscf->client_header_buffer_size) != SWS_OK) {
            sws_http1_close_connection(c);
            return;
        }
        hc->buf = hc->small;
    }

    for ( ;; ) {
        b = hc->buf;

        if (r == NULL && b->pos < b->last && hc->session->prior
            && hc->session->requests == 0)
        {
            const sws_http_protocol_t *prior = hc->session->prior;

            rc = sws_http1_prior_preface(&prior->preface, b);
            if (rc == 1) {
                sws_del_timer(rev);
                prior->start(hc->session, b->pos, b->last - b->pos);
                return;
            }
            if (rc == SWS_DECLINED) {
                sws_log_error(SWS_LOG_INFO, c->log, 0, "client sent an invalid %s preface",
                              prior->name);
                if (prior->bad_preface) {
                    prior->bad_preface(hc->session);
                }
                sws_http1_close_connection(c);
                return;
            }
            if (rc == 0) {
                hc->session->prior = NULL;
            }
        }

        if (r == NULL && b->pos < b->last && hc->session->prior == NULL) {
            /* The first bytes of a request (maybe pipelined after the last
             * one): from now on the head must arrive within the header
             * timeout, not the keep-alive one. */
            r = sws_http1_create_request(c);
            if (r == NULL) {
                sws_http1_close_connection(c);
                return;
            }
            if (c->idle) {
                /* The keep-alive timer stays until the head turns out to
                 * need more than this read (then the header timeout
                 * applies): most heads arrive whole, and this saves two
                 * timer tree operations per request. */
                c->idle = 0;
                sws_reusable_connection(c, 0);
            }
        }

        if (r) {
            rc = sws_http1_parse_head(r);
            if (rc == SWS_OK) {
                /* The read timer is left armed: re-armed for keep-alive at
                 * the end, usually to about the same time (no tree work). */
                rev->handler = sws_http1_block_reading_handler;
                sws_http_start_request(r);
                return;
            }
            if (rc != SWS_AGAIN) {
                sws_del_timer(rev);
                rev->handler = sws_http1_block_reading_handler;
                r->keepalive = 0;
                sws_http_finalize(r, rc);
                return;
            }
            b = hc->buf;     /* parsing may have moved to a large buffer */
        }

        if (b->last == b->end) {
            /* Only possible with no request yet and a full buffer. */
            b->pos = b->last = b->start;
        }
        n = c->recv(c, b->last, b->end - b->last);
        if (n == SWS_AGAIN) {
            if (!rev->timer_set || (r && !hc->header_timer)) {
                sws_add_timer(rev, hc->session->cscf->client_header_timeout);
                hc->header_timer = 1;
            }
            if (r == NULL && b->pos == b->last) {
                b->pos = b->last = b->start;
                if (c->idle) {
                    sws_http1_release(c);     /* woken for nothing */
                }
            }
            if (r == NULL && sws_exiting) {
                sws_http1_exiting_idle(c, last_look);
            }
            return;
        }
        if (n == 0 || n == SWS_ERROR) {
            if (r) {
                sws_log_error(SWS_LOG_INFO, c->log, 0,
                              "client closed the connection while sending the request head");
                r->keepalive = 0;
                (void) sws_http_request_ended(r, SWS_HTTP_BAD_REQUEST);   /* closes */
                return;
            }
            sws_http1_close_connection(c);
            return;
        }
        b->last += n;
    }
}

/* While a response is being produced, input waits in the socket (pipelined
 * requests, or the body for a handler that reads it later). */
void
sws_http1_block_reading_handler(sws_event_t *rev)
{
    sws_connection_t *c = rev->data;
    sws_http1_conn_t *hc = c->data;

    /* The keep-alive timer left from before the request may expire while
     * a long response is sent: it is re-armed when the request ends. */
    if (rev->timedout) {
        rev->timedout = 0;
        return;
    }
    /* A handler waiting on something else (an upstream) wants to know
     * when the client goes away. */
    if (hc && hc->r && hc->r->read_event_handler && !hc->r->done) {
        hc->r->read_event_handler(hc->r);
    }
}

/* A handler producing the response asks whether the client is still
 * there. Pipelined input counts as there, and stays for the next request
 * (in the socket, or in the event method's buffer: io_uring's reads). */
static int
sws_http1_aborted(sws_http_request_t *r)
{
    return !sws_connection_peer_alive(r->connection);
}

/* ---- Upgrade: the connection as a byte tunnel ---- */

static void
sws_http1_tunnel_handler(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_http1_conn_t *hc = c->data;

    if (hc->r && hc->r->read_event_handler) {
        hc->r->read_event_handler(hc->r);
    }
}

static sws_int_t
sws_http1_tunnel(sws_http_request_t *r, sws_str_t *pending, sws_connection_t **bytes)
{
    sws_http1_conn_t *hc = r->stream;
    sws_connection_t *c = r->connection;

    if (pending == NULL) {
        return SWS_OK;
    }
    *bytes = c;
    /* What the client sent right after its request (it need not wait for
     * the 101) is the tunnel's first data. */
    pending->data = hc->buf->pos;
    pending->len = hc->buf->last - hc->buf->pos;
    hc->buf->pos = hc->buf->last;
    /* No header, body or keep-alive timer: the tunnel has its own. */
    sws_del_timer(c->read);
    sws_del_timer(c->write);
    c->read->handler = sws_http1_tunnel_handler;
    c->write->handler = sws_http1_tunnel_handler;
    return SWS_OK;
}

/* ---- the response ---- */

/* File buffers go with sendfile() on a plain socket, and with
 * SSL_sendfile() once kernel TLS took over; else they are read and
 * written (sws_ssl.c). */
static int
sws_http1_sendfile(sws_http_request_t *r)
{
    sws_connection_t *c = r->connection;

    return c->ssl == NULL || c->ssl->ktls_send;
}

static sws_int_t
sws_http1_send_header(sws_http_request_t *r)
{
    sws_buf_t   *b;
    sws_chain_t *cl, **ll;

    /* The location is final now: its "sendfile" holds for the body. */
    r->connection->sendfile = sws_http_core_loc(r)->sendfile ? 1 : 0;
    b = sws_http1_build_head(r);
    if (b == NULL) {
        return SWS_ERROR;
    }
    r->header_size = b->last - b->pos;
    cl = sws_alloc_chain_link(r->pool);
    if (cl == NULL) {
        return SWS_ERROR;
    }
    cl->buf = b;
    cl->next = NULL;
    /* Sent with the first body data, in one write (after what is left of
     * a 100 Continue, if anything). */
    for (ll = &r->out; *ll; ll = &(*ll)->next) { /* the tail */ }
    *ll = cl;
    return SWS_OK;
}

/* An interim response goes out at once (an early hint is only worth its
 * earliness); what the socket does not take waits in r->out, ahead of the
 * final head, which sws_http1_send_header appends. */
static sws_int_t
sws_http1_send_interim(sws_http_request_t *r, sws_uint_t status, const sws_http_header_t *h,
    sws_uint_t n)
{
    sws_connection_t *c = r->connection;
    const sws_str_t  *line = sws_http_status_line(status);
    size_t            len = sizeof("HTTP/1.1 \r\n\r\n") - 1 + line->len;
    sws_uint_t        i;
    sws_buf_t        *b;
    sws_chain_t      *cl, **ll, *rest;
    u_char           *p;

    for (i = 0; i < n; i++) {
        len += h[i].hash ? h[i].name.len + 2 + h[i].value.len + 2 : 0;
    }
    b = sws_create_temp_buf(r->pool, len);
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    p = sws_cpymem(b->last, "HTTP/1.1 ", 9);
    p = sws_cpymem(p, line->data, line->len);
    *p++ = '\r';
    *p++ = '\n';
    for (i = 0; i < n; i++) {
        if (h[i].hash == 0) {
            continue;                   /* deleted */
        }
        p = sws_cpymem(p, h[i].name.data, h[i].name.len);
        *p++ = ':';
        *p++ = ' ';
        p = sws_cpymem(p, h[i].value.data, h[i].value.len);
        *p++ = '\r';
        *p++ = '\n';
    }
    *p++ = '\r';
    *p++ = '\n';
    b->last = p;
    cl->buf = b;
    cl->next = NULL;
    for (ll = &r->out; *ll; ll = &(*ll)->next) { /* the tail */ }
    *ll = cl;

    rest = c->write->ready ? c->send_chain(c, r->out, 0) : r->out;
    if (rest == SWS_CHAIN_ERROR) {
        c->error = 1;
        r->keepalive = 0;
        return SWS_ERROR;
    }
    r->out = rest;
    return SWS_OK;
}

/* Chunk framing buffers are recycled through r->out_free once sent, so a
 * long streamed response does not grow the pool with every piece. */
static int sws_http1_framing_tag;

static sws_chain_t *
sws_http1_framing(sws_http_request_t *r)
{
    sws_chain_t *cl = r->out_free;
    sws_buf_t   *b;

    if (cl) {
        r->out_free = cl->next;
        cl->buf->pos = cl->buf->last = cl->buf->start;
        return cl;
    }
    b = sws_create_temp_buf(r->pool, 24);
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NULL;
    }
    b->tag = &sws_http1_framing_tag;
    cl->buf = b;
    return cl;
}

/* Return the links of [from, upto) (all sent) for reuse. */
static void
sws_http1_free_sent(sws_http_request_t *r, sws_chain_t *from, sws_chain_t *upto)
{
    sws_chain_t *next;

    for ( ; from && from != upto; from = next) {
        next = from->next;
        if (from->buf->tag == &sws_http1_framing_tag) {
            from->next = r->out_free;
            r->out_free = from;
        } else {
            sws_free_chain(r->pool, from);
        }
    }
}

/* The end of a chunked body with trailer fields: [CRLF after the last
 * data] "0" CRLF, the fields, CRLF (RFC 9112 7.1.2). Fields without a
 * name or with a hash of 0 (deleted) are left out. */
static sws_chain_t *
sws_http1_trailers(sws_http_request_t *r, int after_data)
{
    sws_http_header_t *h = r->trailers_out->elts;
    sws_chain_t       *cl;
    sws_buf_t         *b;
    sws_uint_t         i;
    size_t             len = sizeof("\r\n0\r\n\r\n") - 1;
    u_char            *p;

    for (i = 0; i < r->trailers_out->nelts; i++) {
        len += h[i].name.len + 2 + h[i].value.len + 2;
    }
    b = sws_create_temp_buf(r->pool, len);
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return NULL;
    }
    p = b->last;
    if (after_data) {
        p = sws_cpymem(p, "\r\n", 2);
    }
    p = sws_cpymem(p, "0\r\n", 3);
    for (i = 0; i < r->trailers_out->nelts; i++) {
        if (h[i].hash == 0 || h[i].name.len == 0) {
            continue;
        }
        p = sws_cpymem(p, h[i].name.data, h[i].name.len);
        *p++ = ':';
        *p++ = ' ';
        p = sws_cpymem(p, h[i].value.data, h[i].value.len);
        *p++ = '\r';
        *p++ = '\n';
    }
    b->last = sws_cpymem(p, "\r\n", 2);
    cl->buf = b;
    return cl;
}

/* A chunk's size line, "1a2b\r\n" (at most 18 bytes): by hand, since
 * printf cost more than the rest of the framing (700 instructions a
 * response, measured with the php scenario's callgrind). */
static u_char *
sws_http1_chunk_size(u_char *p, uint64_t size)
{
    static const u_char  hex[] = "0123456789abcdef";
    u_char               tmp[16], *t = tmp + sizeof(tmp);

    do {
        *--t = hex[size & 0xf];
        size >>= 4;
    } while (size);
    p = sws_cpymem(p, t, (size_t) (tmp + sizeof(tmp) - t));
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

/* Frame body data as chunks: "size\r\n" data "\r\n", and "0\r\n\r\n" last. */
static sws_chain_t *
sws_http1_chunk(sws_http_request_t *r, sws_chain_t *in, sws_chain_t ***tail)
{
    sws_chain_t *out = NULL, **ll = &out, *cl;
    sws_buf_t   *b;
    off_t        size = 0;
    int          last = 0;
    const char  *p;

    for (cl = in; cl; cl = cl->next) {
        if (!sws_buf_special(cl->buf)) {
            size += sws_buf_size(cl->buf);
        }
        if (cl->buf->last_buf) {
            last = 1;
        }
    }
    if (size) {
        cl = sws_http1_framing(r);
        if (cl == NULL) {
            return SWS_CHAIN_ERROR;
        }
        b = cl->buf;
        b->last = sws_http1_chunk_size(b->last, (uint64_t) size);
        *ll = cl;
        ll = &cl->next;
    }
    for (; in; in = in->next) {
        cl = sws_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return SWS_CHAIN_ERROR;
        }
        cl->buf = in->buf;
        *ll = cl;
        ll = &cl->next;
    }
    if (last && r->trailers_out && r->trailers_out->nelts) {
        cl = sws_http1_trailers(r, size != 0);
        if (cl == NULL) {
            return SWS_CHAIN_ERROR;
        }
        *ll = cl;
        ll = &cl->next;
    } else if (size || last) {
        cl = sws_http1_framing(r);
        if (cl == NULL) {
            return SWS_CHAIN_ERROR;
        }
        b = cl->buf;
        p = last ? (size ? "\r\n0\r\n\r\n" : "0\r\n\r\n") : "\r\n";
        b->last = sws_cpymem(b->last, p, strlen(p));
        *ll = cl;
        ll = &cl->next;
    }
    *ll = NULL;
    *tail = ll;
    return out;
}

sws_int_t
sws_http1_send_body(sws_http_request_t *r, sws_chain_t *in)
{
    sws_connection_t *c = r->connection;
    sws_chain_t     **ll, *cl, *add;
    sws_http_core_loc_conf_t *clcf;
    off_t             limit, chunk;
    sws_msec_t        delay;

    /* Append in to the queue (links copied: the caller owns its chain). */
    for (ll = &r->out; *ll; ll = &(*ll)->next) { /* find the tail */ }
    if (in) {
        if (r->chunked_out) {
            sws_chain_t **tail;
            add = sws_http1_chunk(r, in, &tail);
            if (add == SWS_CHAIN_ERROR) {
                return SWS_ERROR;
            }
            *ll = add;
        } else {
            for (; in; in = in->next) {
                cl = sws_alloc_chain_link(r->pool);
                if (cl == NULL) {
                    return SWS_ERROR;
                }
                cl->buf = in->buf;
                cl->next = NULL;
                *ll = cl;
                ll = &cl->next;
            }
        }
    }

    if (r->out == NULL) {
        return SWS_OK;
    }
    if (c->write->delayed) {
        return SWS_AGAIN;         /* limit_rate: the writer goes on after the delay */
    }
    limit = sws_http_limit_rate_allow(r, c->sent - r->sent_start, &delay);
    if (limit == 0) {
        /* Over the rate: nothing before the time it needs. The write
         * event's timer is the delay now (send_timeout again after it). */
        c->write->delayed = 1;
        c->write->handler = sws_http1_writer;
        sws_add_timer(c->write, delay);
        return SWS_AGAIN;
    }
    chunk = (off_t) sws_http_core_loc(r)->sendfile_max_chunk;
    if (chunk > 0 && (limit <= 0 || limit > chunk)) {
        limit = chunk;                 /* sendfile_max_chunk: others get a turn sooner */
    }
    if (c->write->ready) {
        cl = c->send_chain(c, r->out, limit > 0 ? limit : 0);
        if (cl == SWS_CHAIN_ERROR) {
            c->error = 1;
            return SWS_ERROR;
        }
        sws_http1_free_sent(r, r->out, cl);
        r->out = cl;
        if (cl == NULL) {
            if (c->write->timer_set) {
                sws_del_timer(c->write);
            }
            return SWS_OK;
        }
    }
    /* The rest goes when the socket has room: the write handler carries on. */
    clcf = sws_http_core_loc(r);
    c->write->handler = sws_http1_writer;
    sws_add_timer(c->write, clcf->send_timeout);
    if (c->write->ready) {
        /* Sent as much as one call may: go on after others had a turn. */
        sws_post_event(c->write);
    }
    return SWS_AGAIN;
}

static void
sws_http1_writer(sws_event_t *wev)
{
    sws_connection_t   *c = wev->data;
    sws_http1_conn_t   *hc = c->data;
    sws_http_request_t *r = hc->r;
    sws_int_t           rc;

    if (r == NULL) {
        return;
    }
    if (wev->delayed) {
        if (!wev->timedout) {
            return;               /* room in the socket, but limit_rate waits */
        }
        wev->timedout = 0;
        wev->delayed = 0;
    }
    if (wev->timedout) {
        sws_log_error(SWS_LOG_INFO, c->log, 0, "client timed out reading the response");
        wev->timedout = 0;
        c->timedout = 1;
        r->keepalive = 0;
        c->write->handler = sws_http1_empty_handler;
        (void) sws_http_request_ended(r, SWS_ERROR);
        return;
    }
    /* a filter holding data goes on first: it queues more, or ends */
    rc = r->filter_buffered ? sws_http_output_resume(r) : sws_http1_send_body(r, NULL);
    if (rc == SWS_ERROR) {
        r->keepalive = 0;
        c->write->handler = sws_http1_empty_handler;
        (void) sws_http_request_ended(r, SWS_ERROR);
        return;
    }
    if (rc == SWS_OK && r->done && !r->filter_buffered) {
        c->write->handler = sws_http1_empty_handler;
        (void) sws_http_request_ended(r, SWS_OK);
        return;
    }
    if (!r->done && r->write_event_handler) {
        /* Room was made: a streaming handler may produce more. */
        r->write_event_handler(r);
    }
}

/* The response is produced: send the rest (the writer goes on if the
 * socket is full), or cut it. The connection's fate is the release's. */
static void
sws_http1_finish(sws_http_request_t *r, sws_int_t rc)
{
    if (rc == SWS_OK) {
        rc = r->filter_buffered ? sws_http_output_resume(r) : sws_http1_send_body(r, NULL);
        if (rc == SWS_AGAIN || (rc == SWS_OK && r->filter_buffered)) {
            return;          /* sws_http1_writer finishes */
        }
    }
    (void) sws_http_request_ended(r, rc);
}

/* ---- after the response ---- */

/* exiting: the worker is shutting down and c was idle: the client sees
 * the end within a round trip and closes too, so the wait is short. */
static void
sws_http1_lingering_close(sws_connection_t *c, int exiting)
{
    sws_http1_conn_t         *hc = c->data;
    sws_http_core_loc_conf_t *clcf = hc->r ? sws_http_core_loc(hc->r)
                                     : hc->session->cscf->ctx->loc_conf[sws_http_core_module.index];
    sws_msec_t                timeout = clcf->lingering_timeout;
    sws_msec_t                total = clcf->lingering_time;

    if (exiting) {
        timeout = sws_min(timeout, 1000);
        total = sws_min(total, 2000);
    }

    /* Unread input would make close() send a reset that can destroy the
     * response in flight: stop writing, then drain for a while. */
    if (c->ssl) {
        sws_ssl_shutdown(c);            /* close_notify first */
    }
    if (sws_connection_shutdown_write(c) != SWS_OK) {
        sws_http1_close_connection(c);
        return;
    }
    hc->lingering = 1;
    hc->lingering_deadline = sws_current_msec() + total;
    c->read->handler = sws_http1_lingering_handler;
    sws_add_timer(c->read, timeout);
    sws_http1_lingering_handler(c->read);
}

static void
sws_http1_lingering_handler(sws_event_t *rev)
{
    static u_char     drain[4096];
    sws_connection_t *c = rev->data;
    sws_http1_conn_t *hc = c->data;
    ssize_t           n;

    if (rev->timedout || c->close || sws_current_msec() >= hc->lingering_deadline) {
        sws_http1_close_connection(c);
        return;
    }
    do {
        n = c->recv(c, drain, sizeof(drain));
        if (n == 0 || n == SWS_ERROR) {
            sws_http1_close_connection(c);
            return;
        }
    } while (n > 0);
}

/* Dropping the rest of an unread body after the response was sent. */
static void
sws_http1_discard_handler(sws_event_t *rev)
{
    sws_connection_t   *c = rev->data;
    sws_http1_conn_t   *hc = c->data;
    sws_http_request_t *r = hc->r;
    sws_int_t           rc;

    if (rev->timedout || c->close) {
        sws_http1_close_connection(c);
        return;
    }
    rc = sws_http1_discard_some(r);
    if (rc == SWS_AGAIN) {
        sws_add_timer(rev, sws_http_core_loc(r)->client_body_timeout);
        return;
    }
    sws_del_timer(rev);
    if (rc != SWS_OK) {
        sws_http1_close_connection(c);
        return;
    }
    rev->handler = sws_http1_block_reading_handler;
    sws_http1_request_done(r);
}

/* The core is done with r (sws_http_proto_t release): a cut response
 * closes the connection (with a reset where reset_timedout_connection
 * says); else an unread body is dropped, and the connection is kept for
 * the next request or closed gently. */
static void
sws_http1_request_done(sws_http_request_t *r)
{
    sws_connection_t         *c = r->connection;
    sws_http1_conn_t         *hc = r->stream;
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_buf_t                *b;
    size_t                    left;
    int                       linger = 0;
    struct linger             reset = { 1, 0 };

    if (sws_unlikely(r->cut)) {
        /* reset_timedout_connection: a client that stopped reading, or a
         * "return 444", gets a RST, and the socket's buffers go at once */
        if ((c->timedout || r->status == SWS_HTTP_CLOSE)
            && clcf->reset_timedout_connection == 1)
        {
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        }
        sws_http1_close_connection(c);
        return;
    }

    /* A body nobody read: drop it. What has not arrived yet is read and
     * dropped in the background; the connection is reused after it. */
    if ((r->content_length_n > 0 || r->chunked_in) && !(r->body && r->body->finished)) {
        sws_int_t rc = sws_http1_discard_some(r);
        if (rc == SWS_AGAIN && r->keepalive && (r->continue_sent || !r->expect_continue)
            && !c->close && !sws_exiting)
        {
            c->read->handler = sws_http1_discard_handler;
            sws_add_timer(c->read, clcf->client_body_timeout);
            return;
        }
        if (rc != SWS_OK) {
            r->keepalive = 0;
            linger = rc == SWS_AGAIN;
        }
    }

    /* Shutting down, a response that said keep-alive (its head went out
     * before) keeps the connection: the client may be sending its next
     * request already, which is answered with "Connection: close". */
    if (!r->keepalive || c->close || c->error) {
        /* input waits (shutting down, or a request refused before all of
         * it was read: 414, 431 ...): a reset would cut the response */
        if (!c->error && (hc->buf->pos < hc->buf->last || c->read->ready)) {
            linger = 1;
        }
        /* lingering_close: always waits for the client's end; off never */
        if (clcf->lingering_close != SWS_HTTP_LINGERING_ON) {
            linger = clcf->lingering_close == SWS_HTTP_LINGERING_ALWAYS;
        }
        hc->r = NULL;
        if (linger && !c->error) {
            sws_http1_lingering_close(c, 0);
            return;
        }
        sws_http1_close_connection(c);
        return;
    }

    /* Keep-alive: keep any pipelined bytes, free the request. (Reading the
     * body may have moved hc->buf to a buffer of the request's pool.) */
    b = hc->buf;
    left = b->last - b->pos;
    if (b != hc->small) {
        if (left > (size_t) (hc->small->end - hc->small->start)
            && sws_http1_take_buffer(c, left) != SWS_OK)
        {
            sws_http1_close_connection(c);
            return;
        }
        hc->small->pos = hc->small->start;
        hc->small->last = sws_cpymem(hc->small->start, b->pos, left);
        hc->buf = hc->small;
    } else if (left == 0) {
        b->pos = b->last = b->start;
    }
    hc->r = NULL;
    hc->pipelined = left > 0;
    sws_pool_reset(hc->rpool);

    c->read->handler = sws_http1_read_head_handler;
    c->write->handler = sws_http1_empty_handler;
    if (left || c->read->ready) {
        sws_add_timer(c->read, hc->session->cscf->client_header_timeout);
        hc->header_timer = 1;
        sws_post_event(c->read);
        return;
    }
    sws_http1_release(c);
    c->idle = 1;
    sws_reusable_connection(c, 1);
    sws_add_timer(c->read, clcf->keepalive_timeout);
    hc->header_timer = 0;
    hc->idle_since = sws_now_msec();
    if (sws_exiting) {
        sws_http1_exiting_idle(c, 0);
    }
}

/*
 * Graceful shutdown of the worker (c->shutdown). A request being read or
 * served decides at its end: its head says "Connection: close" if it is
 * built from now on. A connection waiting for a request waits a little
 * longer (sws_http1_exiting_idle).
 */
static void
sws_http1_shutdown(sws_connection_t *c)
{
    sws_http1_conn_t *hc = c->data;

    if (hc->r == NULL && !hc->lingering) {
        sws_http1_exiting_idle(c, 0);
    }
}

/*
 * A kept connection of a worker that is shutting down, with no request.
 * Closing it now would lose a request the client may be sending at this
 * moment: a keep-alive client sends its next one as soon as it has read
 * a response. So it waits until it has been idle for worker_shutdown_idle
 * (a request that comes is served, with "Connection: close"), then it
 * ends: write side first, and what still comes is drained, so that the
 * client sees an orderly end, not a reset.
 */
static void
sws_http1_exiting_idle(sws_connection_t *c, int last_look)
{
    sws_http1_conn_t *hc = c->data;
    sws_msec_t        now = sws_current_msec(), end = hc->idle_since + sws_exiting_idle;

    if (last_look || now >= end) {
        if (c->idle) {
            c->idle = 0;
            sws_reusable_connection(c, 0);
        }
        sws_http1_lingering_close(c, 1);
        return;
    }
    sws_add_timer(c->read, end - now);
    hc->header_timer = 0;
}
