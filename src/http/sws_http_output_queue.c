/*
 * The response output a protocol that frames it itself (HTTP/2, HTTP/3)
 * keeps in r->out between the body filters and its frames: what comes is
 * queued (data only: flags and empty buffers dropped, the end noted),
 * measured, copied out (memory copied, files read with pread) and taken
 * off as it goes. And the request body kept by such a protocol before the
 * request takes it: copied out of its chain of memory buffers.
 */
#include <unistd.h>
#include "sws_http_core.h"

sws_int_t
sws_http_out_queue(sws_http_request_t *r, sws_chain_t *in, unsigned *last)
{
    sws_chain_t **ll, *cl;

    for (ll = &r->out; *ll; ll = &(*ll)->next) { /* the tail */ }
    for (; in; in = in->next) {
        if (in->buf->last_buf) {
            *last = 1;
        }
        if (sws_buf_special(in->buf) || sws_buf_size(in->buf) == 0) {
            continue;
        }
        cl = sws_alloc_chain_link(r->pool);
        if (cl == NULL) {
            return SWS_ERROR;
        }
        cl->buf = in->buf;
        cl->next = NULL;
        *ll = cl;
        ll = &cl->next;
    }
    return SWS_OK;
}

size_t
sws_http_out_size(sws_http_request_t *r, size_t max)
{
    sws_chain_t *cl;
    size_t       n = 0;

    for (cl = r->out; cl && n < max; cl = cl->next) {
        if (!sws_buf_special(cl->buf)) {
            n += (size_t) sws_buf_size(cl->buf);
        }
    }
    return n;
}

sws_int_t
sws_http_out_take(sws_http_request_t *r, u_char *p, size_t n)
{
    sws_chain_t *cl;
    sws_buf_t   *b;
    size_t       k, done = 0, off;
    ssize_t      got = 0;

    for (cl = r->out; cl && done < n; cl = cl->next) {
        b = cl->buf;
        if (sws_buf_special(b)) {
            continue;
        }
        k = sws_min((size_t) sws_buf_size(b), n - done);
        if (sws_buf_in_memory(b)) {
            sws_memcpy(p + done, b->pos, k);
            done += k;
            continue;
        }
        for (off = 0; off < k; off += (size_t) got) {
            got = pread(b->fd, p + done, k - off, b->file_pos + (off_t) off);
            if (got <= 0) {
                sws_log_error(SWS_LOG_CRIT, r->log, got ? errno : 0,
                              "pread() of the response body failed");
                return SWS_ERROR;
            }
            done += (size_t) got;
        }
    }
    r->out = sws_chain_update_sent(r->out, (off_t) n);
    while (r->out && !sws_buf_special(r->out->buf) && sws_buf_size(r->out->buf) == 0) {
        r->out = r->out->next;
    }
    return SWS_OK;
}

size_t
sws_http_chain_copy_out(sws_chain_t **chain, u_char *buf, size_t size)
{
    sws_buf_t *b;
    size_t     k, got = 0;

    while (*chain && got < size) {
        b = (*chain)->buf;
        k = sws_min((size_t) (b->last - b->pos), size - got);
        sws_memcpy(buf + got, b->pos, k);
        b->pos += k;
        got += k;
        if (b->pos == b->last) {
            *chain = (*chain)->next;
        }
    }
    return got;
}
