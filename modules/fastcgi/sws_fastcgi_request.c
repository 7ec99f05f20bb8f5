/*
 * The request as FastCGI records: BEGIN_REQUEST, the PARAMS stream (the
 * core's CGI parameters, written in FastCGI's pairs), then STDIN: the
 * buffered body framed here, or a streamed one piece by piece through
 * frame_body. Everything of one request's head goes in one buffer sized
 * exactly; nothing is zeroed.
 */
#include "sws_fastcgi.h"

/* A FastCGI name-value pair: the two lengths, then both. */
const sws_http_cgi_pairs_t sws_fcgi_pairs = {
    .size = sws_fcgi_pair_len,
    .before_name = sws_fcgi_write_lens,
};

/* ---- the request ---- */

/* The PARAMS stream's content at p (size known), then cut into records of
 * at most 65535 bytes: pairs were written after room for the headers, and
 * each piece moves down behind its header (a no-op for one record). */
static u_char *
sws_fcgi_frame_params(u_char *start, size_t plen, sws_uint_t nrec)
{
    u_char     *out = start, *src = start + nrec * SWS_FCGI_HEADER_LEN;
    size_t      n;
    sws_uint_t  i;

    for (i = 0; i < nrec; i++) {
        n = sws_min(plen, (size_t) SWS_FCGI_MAX_CONTENT);
        out = sws_fcgi_write_header(out, SWS_FCGI_PARAMS, n, 0);
        if (out != src) {
            memmove(out, src, n);
        }
        out += n;
        src += n;
        plen -= n;
    }
    return out;
}

/* The buffered body as STDIN records: record headers (8 bytes each, from
 * one array) and shadows of the body's buffers, memory or file. */
static sws_int_t
sws_fcgi_body_records(sws_http_request_t *r, sws_chain_t ***tail)
{
    sws_pool_t   *pool = sws_http_pool(r);
    sws_chain_t  *in, *cl;
    sws_buf_t    *b, *hb;
    off_t         size, n, at;
    u_char       *h;

    for (in = sws_http_request_body(r); in; in = in->next) {
        size = sws_buf_size(in->buf);
        at = 0;
        while (at < size) {
            n = sws_min(size - at, (off_t) SWS_FCGI_MAX_CONTENT);
            h = sws_pnalloc(pool, SWS_FCGI_HEADER_LEN);
            hb = sws_calloc_buf(pool);
            b = sws_calloc_buf(pool);
            cl = sws_alloc_chain_link(pool);
            if (h == NULL || hb == NULL || b == NULL || cl == NULL) {
                return SWS_ERROR;
            }
            hb->start = hb->pos = h;
            hb->end = hb->last = sws_fcgi_write_header(h, SWS_FCGI_STDIN, (size_t) n, 0);
            hb->temporary = 1;
            hb->fd = -1;
            cl->buf = hb;
            **tail = cl;
            *tail = &cl->next;

            cl = sws_alloc_chain_link(pool);
            if (cl == NULL) {
                return SWS_ERROR;
            }
            *b = *in->buf;
            b->last_buf = 0;
            if (in->buf->in_file && !sws_buf_in_memory(in->buf)) {
                b->file_pos = in->buf->file_pos + at;
                b->file_last = b->file_pos + n;
            } else {
                b->pos = in->buf->pos + at;
                b->last = b->pos + n;
                b->in_file = 0;
            }
            cl->buf = b;
            **tail = cl;
            *tail = &cl->next;
            at += n;
        }
    }
    return SWS_OK;
}

sws_int_t
sws_fcgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_fcgi_ctx_t           *ctx = data;
    sws_fcgi_loc_conf_t      *flcf = ctx->flcf;
    sws_http_upstream_t      *u = ctx->u;
    sws_pool_t               *pool = sws_http_pool(r);
    sws_http_cgi_render_t    *rd;
    sws_uint_t                nrec, mode;
    size_t                    plen;
    u_char                   *start, *p, *e;
    sws_chain_t              *cl, **tail;
    sws_buf_t                *b;

    mode = sws_http_upstream_body_mode(u);
    rd = sws_http_cgi_params_measure(r, u, flcf->cgi.params,
                                     flcf->cgi.pass_request_headers ? SWS_HTTP_CGI_PASS_HEADERS : 0,
                                     &plen);
    if (rd == NULL) {
        return SWS_ERROR;
    }
    nrec = plen ? (sws_uint_t) ((plen + SWS_FCGI_MAX_CONTENT - 1) / SWS_FCGI_MAX_CONTENT) : 0;

    /* BEGIN_REQUEST, the PARAMS records, the empty one, and without a
     * streamed body the empty STDIN (after the body's records, if any). */
    start = sws_pnalloc(pool, 16 + nrec * SWS_FCGI_HEADER_LEN + plen + 2 * SWS_FCGI_HEADER_LEN);
    b = sws_calloc_buf(pool);
    cl = sws_alloc_chain_link(pool);
    if (start == NULL || b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    p = sws_fcgi_write_begin(start, ctx->keep);
    e = p + nrec * SWS_FCGI_HEADER_LEN;        /* the pairs go here first */
    sws_http_cgi_params_write(rd, e);
    p = sws_fcgi_frame_params(p, plen, nrec);
    p = sws_fcgi_write_header(p, SWS_FCGI_PARAMS, 0, 0);

    b->start = b->pos = start;
    b->temporary = 1;
    b->fd = -1;
    cl->buf = b;
    cl->next = NULL;
    *out = cl;
    tail = &cl->next;

    if (mode == SWS_UPSTREAM_BODY_BUFFERED) {
        if (sws_fcgi_body_records(r, &tail) != SWS_OK) {
            return SWS_ERROR;
        }
        /* The empty STDIN after the body: at the end of the head's buffer,
         * in a link of its own. */
        e = p;
        p = sws_fcgi_write_header(p, SWS_FCGI_STDIN, 0, 0);
        b->end = b->last = e;
        b = sws_calloc_buf(pool);
        cl = sws_alloc_chain_link(pool);
        if (b == NULL || cl == NULL) {
            return SWS_ERROR;
        }
        b->start = b->pos = e;
        b->end = b->last = p;
        b->temporary = 1;
        b->fd = -1;
        cl->buf = b;
        cl->next = NULL;
        *tail = cl;
        return SWS_OK;
    }
    if (mode != SWS_UPSTREAM_BODY_STREAM) {
        p = sws_fcgi_write_header(p, SWS_FCGI_STDIN, 0, 0);
    }
    b->end = b->last = p;
    return SWS_OK;
}

/* A streamed body's piece (at most 65535 bytes: the handler set that)
 * becomes one STDIN record; the last is followed by the empty one. */
void
sws_fcgi_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last)
{
    size_t n = (size_t) (b->last - b->pos);

    (void) r;
    (void) data;
    if (n) {
        b->pos -= SWS_FCGI_HEADER_LEN;
        sws_fcgi_write_header(b->pos, SWS_FCGI_STDIN, n, 0);
    }
    if (last) {
        b->last = sws_fcgi_write_header(b->last, SWS_FCGI_STDIN, 0, 0);
    }
}
