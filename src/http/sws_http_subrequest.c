/*
 * Subrequests: a request that runs a location of its parent's server
 * internally (auth_request's check, a mirror's copy). It is a request like
 * any other, with its own pool and module contexts, and a protocol of its
 * own below it: what the phases and filters send goes to no socket but to
 * the subrequest's record (sws_http_subreq_proto), which keeps the body up
 * to a limit or drops it, and never makes the producer wait.
 *
 * Lifetimes. A subrequest's pool is its own, and it reads some of its
 * parent's memory (the request headers, the client's address, the body),
 * so it never outlives its parent: the parent's pool cleanup destroys the
 * subrequests that still run (a client that went away, an HTTP/2 stream
 * reset). The other way round, a subrequest that ends tells its parent
 * from a posted event, outside the frames that finalized it: the parent's
 * callback reads the subrequest's status, headers, body and variables, then
 * the subrequest's pool goes. A background subrequest (a mirror) keeps its
 * parent past the parent's response: r->subreq_wait, and the core
 * releases the parent when the last one has ended (sws_http_request_end.c).
 *
 * An OUTPUT subrequest's body goes on the parent's response (nginx's
 * postponed output, one subrequest at a time): its buffers are queued at
 * the parent's protocol as they are, so the subrequest's producer waits
 * for the parent's client (the parent's write events are passed to it),
 * and the subrequest ends only when its bytes have left (its pool holds
 * them). The parent, finalized meanwhile, is held open (r->output_held)
 * until the last one has ended; then the core sends the end of the
 * response and finalizes it again.
 */
#include <errno.h>
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_times_internal.h"

#define SWS_HTTP_SUBREQUEST_MAX_DEPTH  50       /* nginx's */
#define SWS_HTTP_SUBREQUEST_POOL       4096

/* A request's running subrequests (in its pool). */
typedef struct sws_http_subreqs_s {
    sws_queue_t          live;          /* sws_http_subreq_t.link */
    sws_uint_t           nlive;
    struct sws_http_subreq_s *output;   /* the OUTPUT one running, or NULL */
    int                 *alive;         /* a completion's watch on the parent */
} sws_http_subreqs_t;

/* A subrequest's record (in its own pool): its r->stream, since the
 * protocol under it is this file's. */
typedef struct sws_http_subreq_s {
    sws_queue_t                  link;      /* in the parent's live list */
    sws_http_request_t          *parent;
    sws_http_request_t          *sr;
    sws_http_subrequest_done_pt  done;
    void                        *data;
    sws_uint_t                   flags;
    sws_uint_t                   depth;     /* 1 for a client request's */
    size_t                       limit;     /* CAPTURE: bytes kept */
    sws_str_t                    body;      /* captured so far */
    size_t                       body_size; /* room at body.data */
    off_t                        sent;      /* bytes the filters passed on */
    unsigned                     truncated:1;
    unsigned                     draining:1; /* OUTPUT: ended, its bytes not yet sent */
    unsigned                     failed:1;   /* OUTPUT: its response was not sent whole */
    unsigned                     writing:1;  /* it is its parent's subs->output */
    unsigned                     whole:1;    /* OUTPUT: its last buffer came */
    sws_event_t                  end;       /* posted when the core released it */
} sws_http_subreq_t;

static void sws_http_subreq_end(sws_event_t *ev);


/* ---- the parent's side ------------------------------------------------- */

/* The parent's pool goes: the subrequests still running go first (they
 * read its memory), without a word to the parent. */
static void
sws_http_subreqs_cleanup(void *data)
{
    sws_http_subreqs_t *subs = data;
    sws_http_subreq_t  *sub;

    if (subs->alive) {
        *subs->alive = 0;
    }
    while (!sws_queue_empty(&subs->live)) {
        sub = sws_queue_data(sws_queue_head(&subs->live), sws_http_subreq_t, link);
        sws_queue_remove(&sub->link);
        subs->nlive--;
        sws_log_error(SWS_LOG_INFO, sub->sr->log, 0, "subrequest \"%.*s\" ends with its "
                      "request", (int) sub->sr->uri.len, sub->sr->uri.data);
        sws_pool_destroy(sub->sr->pool);
    }
}

int
sws_http_subrequest_waits(sws_http_request_t *r)
{
    if (!r->subreq_wait) {
        return 0;
    }
    if (r->subreqs && r->subreqs->nlive) {
        return 1;
    }
    r->subreq_wait = 0;
    return 0;
}


/* ---- the subrequest's record -------------------------------------------- */

/* The subrequest's pool goes (its end, or its parent's): its completion
 * must not run any more. */
static void
sws_http_subreq_cleanup(void *data)
{
    sws_http_subreq_t *sub = data;

    if (sub->writing) {
        sub->parent->subreqs->output = NULL;    /* its parent ends first */
    }
    if (sub->end.posted) {
        sws_delete_posted_event(&sub->end);
    }
}

/* The core released the subrequest (both its sides ended): tell the
 * parent from the event loop. */
static void
sws_http_subreq_release(sws_http_request_t *sr)
{
    sws_http_subreq_t *sub = sr->stream;

    sws_post_event(&sub->end);
}

static void
sws_http_subreq_end(sws_event_t *ev)
{
    sws_http_subreq_t  *sub = ev->data;
    sws_http_request_t *r = sub->parent, *sr = sub->sr;
    sws_http_subreqs_t *subs = r->subreqs;
    int                 alive = 1;

    sws_queue_remove(&sub->link);
    subs->nlive--;
    if (sub->writing) {
        sub->writing = 0;
        subs->output = NULL;
    }
    /* the callback may end the parent: its cleanup says so here */
    subs->alive = &alive;
    if (sub->done) {
        sub->done(r, sr, sub->data);
    }
    if (alive && sub->failed && !r->done) {
        /* the rest of the parent's response is lost: cut it (before the
         * pool of the bytes it may still have queued goes) */
        sws_http_finalize(r, SWS_ERROR);
    }
    if (alive) {
        subs->alive = NULL;
    }
    sws_pool_destroy(sr->pool);        /* sub lives there too */
    if (alive && r->output_held && subs->output == NULL && !r->done) {
        sws_http_finalize(r, SWS_OK);  /* the response's end, at last */
        return;
    }
    if (alive && subs->nlive == 0 && r->subreq_wait && r->done && r->client_ended) {
        /* the parent's response was over; it waited for this one */
        r->subreq_wait = 0;
        r->proto->release(r);
    }
}


/* ---- the protocol under a subrequest ------------------------------------ */

static sws_int_t
sws_http_subreq_send_header(sws_http_request_t *sr)
{
    return SWS_OK;      /* status and headers stay on sr, for the parent */
}

/* Keep what fits of b's data in the capture (from memory, or read from
 * its file). */
static void
sws_http_subreq_capture(sws_http_subreq_t *sub, sws_buf_t *b)
{
    size_t   n, size = (size_t) sws_buf_size(b), room = sub->limit - sub->body.len;
    u_char  *p;
    ssize_t  got;

    n = sws_min(size, room);
    if (n < size) {
        sub->truncated = 1;
    }
    if (n == 0) {
        return;
    }
    if (sub->body.len + n > sub->body_size) {
        /* grow to what is needed, at least twice the room before */
        size = sws_min(sws_max(sub->body.len + n, sub->body_size * 2), sub->limit);
        p = sws_pnalloc(sub->sr->pool, size);
        if (p == NULL) {
            sub->truncated = 1;
            return;
        }
        if (sub->body.len) {
            sws_memcpy(p, sub->body.data, sub->body.len);
        }
        sub->body.data = p;
        sub->body_size = size;
    }
    p = sub->body.data + sub->body.len;
    if (sws_buf_in_memory(b)) {
        sws_memcpy(p, b->pos, n);
    } else {
        got = pread(b->fd, p, n, b->file_pos);
        if (got < 0) {
            sws_log_error(SWS_LOG_CRIT, sub->sr->log, errno, "pread() of a subrequest's "
                          "response failed");
            sub->truncated = 1;
            return;
        }
        n = (size_t) got;
    }
    sub->body.len += n;
}

/* An OUTPUT subrequest's body: its buffers queued at the parent's
 * protocol as they are (their positions move as they are sent: the
 * producer's flow control), without the end of the body, which is the
 * parent's. SWS_AGAIN while the parent's client is slow. */
static sws_int_t
sws_http_subreq_output(sws_http_subreq_t *sub, sws_chain_t *in)
{
    sws_http_request_t *r = sub->parent;
    sws_chain_t        *out = NULL, **ll = &out, *cl;
    sws_buf_t          *b;

    if (!r->header_sent || r->done) {
        sws_log_error(SWS_LOG_ALERT, sub->sr->log, 0, "an output subrequest without "
                      "its parent's response");
        return SWS_ERROR;
    }
    for ( ; in; in = in->next) {
        b = in->buf;
        if (b->last_buf) {
            sub->whole = 1;     /* else its producer cut it (an upstream gone) */
        }
        if (sws_buf_special(b) || sws_buf_size(b) == 0) {
            continue;
        }
        if (b->last_buf || b->last_in_chain) {
            /* data and the end in one buffer: the data alone */
            b = sws_calloc_buf(sub->sr->pool);
            if (b == NULL) {
                return SWS_ERROR;
            }
            *b = *in->buf;
            b->last_buf = 0;
            b->last_in_chain = 0;
            in->buf->pos = in->buf->last;
            in->buf->file_pos = in->buf->file_last;
        }
        sub->sent += sws_buf_size(b);
        cl = sws_alloc_chain_link(sub->sr->pool);
        if (cl == NULL) {
            return SWS_ERROR;
        }
        cl->buf = b;
        cl->next = NULL;
        *ll = cl;
        ll = &cl->next;
    }
    return r->proto->send_body(r, out);
}

/* The body goes to the capture or nowhere, all of it at once: the
 * producer never waits for a subrequest (but for an OUTPUT one). */
static sws_int_t
sws_http_subreq_send_body(sws_http_request_t *sr, sws_chain_t *in)
{
    sws_http_subreq_t *sub = sr->stream;
    sws_buf_t         *b;

    if (sub->flags & SWS_HTTP_SUBREQUEST_OUTPUT) {
        if (sr->header_only) {
            sub->whole = 1;
            return SWS_OK;
        }
        return sws_http_subreq_output(sub, in);
    }

    for ( ; in; in = in->next) {
        b = in->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        sub->sent += sws_buf_size(b);
        if ((sub->flags & SWS_HTTP_SUBREQUEST_CAPTURE) && !sr->header_only) {
            sws_http_subreq_capture(sub, b);
        }
        b->pos = b->last;
        b->file_pos = b->file_last;
    }
    return SWS_OK;
}

static void
sws_http_subreq_finish(sws_http_request_t *sr, sws_int_t rc)
{
    sws_http_subreq_t *sub = sr->stream;

    /* logged by the location it ended in, as nginx's log_subrequest */
    if (sr->loc_conf && sws_http_core_loc(sr)->log_subrequest) {
        sr->logged = 0;
    }
    if (rc == SWS_OK && sr->filter_buffered) {
        /* a filter holds the end of the body: room is never short here
         * (an OUTPUT subrequest's filters are asked again below) */
        (void) sws_http_output_resume(sr);
    }
    if (sub->flags & SWS_HTTP_SUBREQUEST_OUTPUT) {
        if (rc != SWS_OK || sr->filter_buffered || !sub->whole) {
            sub->failed = 1;
        } else {
            rc = sub->parent->proto->send_body(sub->parent, NULL);
            if (rc == SWS_AGAIN) {
                sub->draining = 1;      /* its bytes leave first: the parent's writer */
                return;
            }
            sub->failed = rc != SWS_OK;
        }
    }
    (void) sws_http_request_ended(sr, rc == SWS_OK ? SWS_OK : SWS_ERROR);
}

/* The parent's write handler while an OUTPUT subrequest runs: room was
 * made for its client, so the subrequest's producer may go on, or the
 * subrequest that waited for its bytes to leave ends. */
static void
sws_http_subreq_parent_writer(sws_http_request_t *r)
{
    sws_http_subreq_t  *sub = r->subreqs ? r->subreqs->output : NULL;
    sws_http_request_t *sr;
    sws_int_t           rc;

    if (sub == NULL) {
        return;
    }
    sr = sub->sr;
    if (sub->draining) {
        rc = r->proto->send_body(r, NULL);
        if (rc == SWS_AGAIN) {
            return;
        }
        sub->draining = 0;
        sub->failed = rc != SWS_OK;
        (void) sws_http_request_ended(sr, rc == SWS_OK ? SWS_OK : SWS_ERROR);
        return;
    }
    if (!sr->done && sr->write_event_handler) {
        sr->write_event_handler(sr);
    }
}

int
sws_http_subrequest_output_hold(sws_http_request_t *r, sws_int_t rc)
{
    sws_buf_t   *b;
    sws_chain_t  out;

    if (rc != SWS_OK) {
        r->output_held = 0;      /* an error: the response is cut */
        return 0;
    }
    if (r->subreqs && r->subreqs->output) {
        r->output_held = 1;
        r->write_event_handler = sws_http_subreq_parent_writer;
        return 1;
    }
    /* all of them ended: the end of the response, then r's own finish */
    r->output_held = 0;
    r->output_subreqs = 0;
    b = sws_calloc_buf(r->pool);
    if (b != NULL) {
        b->last_buf = 1;
        b->sync = 1;
        out.buf = b;
        out.next = NULL;
        (void) r->proto->send_body(r, &out);
    }
    return 0;
}

/* A subrequest's body is r's, complete, or none: nothing to read. */
static sws_int_t
sws_http_subreq_read_body(sws_http_request_t *sr)
{
    sr->body->finished = 1;
    sr->body->done(sr);
    return SWS_OK;
}

static sws_int_t
sws_http_subreq_read_body_data(sws_http_request_t *sr, u_char *buf, size_t size, size_t *n)
{
    *n = 0;
    return SWS_DONE;
}

static sws_int_t
sws_http_subreq_discard_body(sws_http_request_t *sr)
{
    sr->body->finished = 1;
    return SWS_OK;
}

static off_t
sws_http_subreq_bytes_sent(sws_http_request_t *sr)
{
    return ((sws_http_subreq_t *) sr->stream)->sent;
}

static sws_int_t
sws_http_subreq_send_interim(sws_http_request_t *sr, sws_uint_t status,
    const sws_http_header_t *h, sws_uint_t n)
{
    return SWS_DECLINED;          /* a 103 of a subrequest goes nowhere */
}

static int
sws_http_subreq_aborted(sws_http_request_t *sr)
{
    return 0;                     /* its parent's end ends it, not this */
}

static sws_int_t
sws_http_subreq_tunnel(sws_http_request_t *sr, sws_str_t *pending, sws_connection_t **bytes)
{
    return SWS_DECLINED;          /* no client to tunnel to */
}

static int
sws_http_subreq_sendfile(sws_http_request_t *sr)
{
    return 0;
}

const sws_http_proto_t sws_http_subreq_proto = {
    .name = "subrequest",
    .send_header = sws_http_subreq_send_header,
    .send_body = sws_http_subreq_send_body,
    .finish = sws_http_subreq_finish,
    .release = sws_http_subreq_release,
    .read_body = sws_http_subreq_read_body,
    .read_body_data = sws_http_subreq_read_body_data,
    .discard_body = sws_http_subreq_discard_body,
    .bytes_sent = sws_http_subreq_bytes_sent,
    .send_interim = sws_http_subreq_send_interim,
    .aborted = sws_http_subreq_aborted,
    .tunnel = sws_http_subreq_tunnel,
    .sendfile = sws_http_subreq_sendfile,
    .send_fixed = NULL,           /* filters may act: the ordinary path */
};


/* ---- making one --------------------------------------------------------- */

static const struct {
    sws_uint_t   method;
    sws_str_t    name;
} sws_http_subreq_methods[] = {
    { SWS_HTTP_GET, sws_string("GET") },
    { SWS_HTTP_HEAD, sws_string("HEAD") },
    { SWS_HTTP_POST, sws_string("POST") },
    { SWS_HTTP_PUT, sws_string("PUT") },
    { SWS_HTTP_DELETE, sws_string("DELETE") },
    { SWS_HTTP_OPTIONS, sws_string("OPTIONS") },
    { SWS_HTTP_PATCH, sws_string("PATCH") },
};

static sws_int_t
sws_http_subreq_method(sws_http_request_t *r, sws_http_request_t *sr,
    const sws_http_subrequest_conf_t *conf)
{
    sws_uint_t i, m = conf->method ? conf->method : SWS_HTTP_GET;

    if (conf->flags & SWS_HTTP_SUBREQUEST_PARENT_METHOD) {
        sr->method = r->method;
        sr->method_name = r->method_name;
        return SWS_OK;
    }
    for (i = 0; i < sizeof(sws_http_subreq_methods) / sizeof(sws_http_subreq_methods[0]); i++) {
        if (sws_http_subreq_methods[i].method == m) {
            sr->method = m;
            sr->method_name = sws_http_subreq_methods[i].name;
            return SWS_OK;
        }
    }
    return SWS_ERROR;
}

/* r's body (read whole before) for sr: its buffers copied, so that each
 * reader moves its own positions over the same memory or file. */
static sws_int_t
sws_http_subreq_body(sws_http_request_t *r, sws_http_request_t *sr)
{
    sws_http_request_body_t *rb = r->body, *srb;
    sws_chain_t             *cl, *ncl, **last;
    sws_buf_t               *b;

    if (rb == NULL || !rb->finished || rb->discard || rb->stream) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a subrequest asked for a body not read");
        return SWS_ERROR;
    }
    srb = sws_pcalloc(sr->pool, sizeof(sws_http_request_body_t));
    if (srb == NULL) {
        return SWS_ERROR;
    }
    last = &srb->bufs;
    for (cl = rb->bufs; cl; cl = cl->next) {
        ncl = sws_alloc_chain_link(sr->pool);
        b = sws_calloc_buf(sr->pool);
        if (ncl == NULL || b == NULL) {
            return SWS_ERROR;
        }
        *b = *cl->buf;
        ncl->buf = b;
        ncl->next = NULL;
        *last = ncl;
        last = &ncl->next;
        if (cl == rb->file_link) {
            /* in r's temporary file: sr's reads of it take it as it is */
            srb->file = rb->file;
            srb->file_link = ncl;
        }
    }
    srb->last = last;
    srb->finished = 1;
    sr->body = srb;
    sr->content_length_n = sws_chain_size(srb->bufs);
    return SWS_OK;
}

sws_int_t
sws_http_subrequest(sws_http_request_t *r, const sws_http_subrequest_conf_t *conf,
    sws_http_request_t **out)
{
    sws_http_subreqs_t  *subs = r->subreqs;
    sws_http_subreq_t   *sub;
    sws_http_request_t  *sr;
    sws_pool_t          *pool;
    sws_http_header_t   *h;
    sws_uint_t           depth = sws_http_is_subrequest(r)
                                 ? ((sws_http_subreq_t *) r->stream)->depth + 1 : 1;

    if (out) {
        *out = NULL;
    }
    if (depth > SWS_HTTP_SUBREQUEST_MAX_DEPTH) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "subrequests cycle while processing \"%.*s\"",
                      (int) conf->uri.len, conf->uri.data);
        return SWS_ERROR;
    }
    if (conf->uri.len == 0) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a subrequest without a URI");
        return SWS_ERROR;
    }
    if ((conf->flags & SWS_HTTP_SUBREQUEST_OUTPUT) && subs && subs->output) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "an output subrequest while another runs");
        return SWS_ERROR;
    }
    if (subs == NULL) {
        subs = sws_pcalloc(r->pool, sizeof(sws_http_subreqs_t));
        if (subs == NULL || sws_pool_cleanup_add(r->pool, sws_http_subreqs_cleanup, subs)
                            != SWS_OK)
        {
            return SWS_ERROR;
        }
        sws_queue_init(&subs->live);
        r->subreqs = subs;
    }

    pool = sws_pool_create(SWS_HTTP_SUBREQUEST_POOL, r->log);
    if (pool == NULL) {
        return SWS_ERROR;
    }
    sr = sws_pcalloc(pool, sizeof(sws_http_request_t));
    sub = sws_pcalloc(pool, sizeof(sws_http_subreq_t));
    h = sws_palloc(pool, 8 * sizeof(sws_http_header_t));
    if (sr == NULL || sub == NULL || h == NULL
        || sws_pool_cleanup_add(pool, sws_http_subreq_cleanup, sub) != SWS_OK)
    {
        sws_pool_destroy(pool);
        return SWS_ERROR;
    }
    sub->parent = r;
    sub->sr = sr;
    sub->done = conf->done;
    sub->data = conf->data;
    sub->flags = conf->flags;
    sub->depth = depth;
    sub->limit = conf->body_limit;
    sub->end.data = sub;
    sub->end.handler = sws_http_subreq_end;

    /* what the parent is: its client, server, head and variables */
    sr->session = r->session;
    sr->connection = r->connection;
    sr->stream = sub;
    sr->proto = &sws_http_subreq_proto;
    sr->pool = pool;
    sr->log = r->log;
    sr->main_conf = r->main_conf;
    sr->srv_conf = r->srv_conf;
    sr->loc_conf = sws_http_core_srv(r)->ctx->loc_conf;
    sr->http_version = r->http_version;
    sr->request_line = *sws_http_request_line(r);
    sr->unparsed_uri = r->unparsed_uri;        /* $request_uri: the client's */
    sr->encoded_slash = r->encoded_slash;
    sr->host = r->host;
    sr->schema = r->schema;
    /* the parent's fields, read only: an addition goes to a copy */
    sr->headers_in = r->headers_in;
    sr->headers_in.nalloc = sr->headers_in.nelts;
    sr->headers_in.pool = pool;
    sr->h_host = r->h_host;
    sr->h_connection = r->h_connection;
    sr->h_request_id = r->h_request_id;
    sr->h_authorization = r->h_authorization;
    sr->h_expect = NULL;
    sr->content_length_n = -1;
    sr->vars = r->vars;
    sr->sockaddr = r->sockaddr;
    sr->socklen = r->socklen;
    sr->addr_text = r->addr_text;
    sr->request_id = r->request_id;
    sr->start_msec = sws_now_msec();
    sr->start_sec = sws_now_sec();
    sr->out_content_length = -1;
    sr->last_modified = -1;
    sr->internal = 1;
    sr->logged = 1;                 /* until its end: see sws_http_subreq_finish */
    sr->headers_out.elts = h;
    sr->headers_out.size = sizeof(sws_http_header_t);
    sr->headers_out.nalloc = 8;
    sr->headers_out.pool = pool;

    if (sws_http_subreq_method(r, sr, conf) != SWS_OK) {
        sws_log_error(SWS_LOG_ALERT, r->log, 0, "a subrequest with an unknown method");
        sws_pool_destroy(pool);
        return SWS_ERROR;
    }
    sr->uri.data = sws_pnalloc(pool, conf->uri.len + conf->args.len + 1);
    if (sr->uri.data == NULL
        || ((conf->flags & SWS_HTTP_SUBREQUEST_BODY) && sws_http_subreq_body(r, sr) != SWS_OK))
    {
        sws_pool_destroy(pool);
        return SWS_ERROR;
    }
    sws_memcpy(sr->uri.data, conf->uri.data, conf->uri.len);
    sr->uri.len = conf->uri.len;
    sr->raw_path = sr->uri;
    sr->args.data = sr->uri.data + sr->uri.len;
    if (conf->args.len) {
        sws_memcpy(sr->args.data, conf->args.data, conf->args.len);
    }
    sr->args.len = conf->args.len;
    sws_http_path_exten(&sr->uri, &sr->exten);
    if (sr->method == SWS_HTTP_HEAD) {
        sr->header_only = 1;
    }

    sws_queue_insert_tail(&subs->live, &sub->link);
    subs->nlive++;
    if (conf->flags & SWS_HTTP_SUBREQUEST_BACKGROUND) {
        r->subreq_wait = 1;
    }
    if (conf->flags & SWS_HTTP_SUBREQUEST_OUTPUT) {
        subs->output = sub;
        sub->writing = 1;
        r->output_subreqs = 1;
        if (r->done || r->output_held) {
            r->write_event_handler = sws_http_subreq_parent_writer;
        }
    }
    if (out) {
        *out = sr;
    }
    sws_log_debug(r->log, "subrequest \"%.*s?%.*s\" (depth %u)", (int) sr->uri.len,
                  sr->uri.data, (int) sr->args.len, sr->args.data, (unsigned) depth);
    /* the server's rewrites, then its location's phases; its end is posted */
    sws_http_run_phases_from(sr, SWS_HTTP_SERVER_REWRITE_PHASE);
    return SWS_OK;
}

sws_http_request_t *
sws_http_parent(sws_http_request_t *r)
{
    return sws_http_is_subrequest(r) ? ((sws_http_subreq_t *) r->stream)->parent : NULL;
}

sws_int_t
sws_http_subrequest_body(sws_http_request_t *sr, sws_str_t *body)
{
    sws_http_subreq_t *sub = sr->stream;

    if (!sws_http_is_subrequest(sr)) {
        body->data = NULL;
        body->len = 0;
        return SWS_OK;
    }
    *body = sub->body;
    return sub->truncated ? SWS_DECLINED : SWS_OK;
}
