/*
 * A CGI response (<scalws/sws_upstream_cgi.h>), for fastcgi (after its
 * records are unframed), uwsgi and scgi: the head line by line (the lines
 * themselves in sws_http_upstream_cgi_lines.c), its status from Status:
 * or an HTTP status line, Location (RFC 3875 6.2.2 and 6.2.3), the
 * framing fields kept back; then a body that is the bytes that follow.
 */
#include "sws_http_upstream.h"
#include "sws_http_upstream_cgi_lines.h"
#include <scalws/sws_upstream_cgi.h>

struct sws_http_cgi_head_s {
    sws_http_upstream_t  *u;
    sws_http_request_t   *r;
    const char           *proto;
    sws_uint_t            flags;
    sws_str_t             location;
    off_t                 length;       /* Content-Length: -1 none */
    off_t                 rest;         /* of the body, with SWS_HTTP_CGI_LENGTH */
    unsigned              started:1;    /* a line was seen */
    unsigned              status_set:1;
    unsigned              status_line:1;  /* the status came from a status line */
    unsigned              no_body:1;
    unsigned              chunked:1;    /* Transfer-Encoding from the server */
};

sws_http_cgi_head_t *
sws_http_cgi_head_create(sws_http_upstream_t *u, const char *proto, sws_uint_t flags)
{
    sws_http_cgi_head_t *h = sws_palloc(u->r->pool, sizeof(sws_http_cgi_head_t));

    if (h == NULL) {
        return NULL;
    }
    h->u = u;
    h->r = u->r;
    h->proto = proto;
    h->flags = flags;
    sws_http_cgi_head_reset(h);
    return h;
}

void
sws_http_cgi_head_reset(sws_http_cgi_head_t *h)
{
    h->location.len = 0;
    h->location.data = NULL;
    h->length = -1;
    h->rest = 0;
    h->started = 0;
    h->status_set = 0;
    h->status_line = 0;
    h->no_body = 0;
    h->chunked = 0;
}

static sws_int_t
sws_cgi_invalid(sws_http_cgi_head_t *h, const char *why)
{
    const sws_str_t *peer = sws_http_upstream_peer_name(h->u);

    sws_log_error(SWS_LOG_ERR, h->r->log, 0, "upstream %.*s sent an invalid %s response: %s",
                  (int) peer->len, peer->data, h->proto, why);
    return SWS_UPSTREAM_INVALID;
}

/* One field (name and value point into the head buffer). */
static sws_int_t
sws_cgi_field(sws_http_cgi_head_t *h, const sws_str_t *n, const sws_str_t *v)
{
    sws_str_t  name, value;
    u_char    *lc;
    sws_uint_t status;

    /* Copies: the head buffer is reused for the body. */
    name.len = n->len;
    value.len = v->len;
    name.data = sws_pnalloc(h->r->pool, name.len * 2 + value.len + 1);
    if (name.data == NULL) {
        return SWS_ERROR;
    }
    memcpy(name.data, n->data, name.len);
    lc = name.data + name.len;
    sws_strlow(lc, n->data, name.len);
    value.data = lc + name.len;
    if (value.len) {
        memcpy(value.data, v->data, value.len);
    }

    switch (name.len) {
    case 6:
        if (memcmp(lc, "status", 6) == 0) {
            if (h->status_line) {
                return SWS_OK;        /* after a status line: that one counts */
            }
            status = sws_cgi_status_value(&value);
            if (h->status_set || status == 0) {
                return sws_cgi_invalid(h, "an invalid \"Status\" header");
            }
            h->status_set = 1;
            sws_http_set_status(h->r, status);
            return SWS_OK;
        }
        break;
    case 8:
        if (memcmp(lc, "location", 8) == 0) {
            if (h->location.len || value.len == 0) {
                return sws_cgi_invalid(h, "an invalid \"Location\" header");
            }
            h->location = value;
            return SWS_OK;         /* passed on (or followed) at the end */
        }
        break;
    case 10:
        if (memcmp(lc, "connection", 10) == 0 || memcmp(lc, "keep-alive", 10) == 0) {
            return sws_http_upstream_header_received(h->u, &name, &value);
        }
        break;
    case 14:
        if (memcmp(lc, "content-length", 14) == 0) {
            if (h->flags & SWS_HTTP_CGI_LENGTH) {
                off_t len = sws_http_parse_content_length(value.data, value.len);
                if (len < 0 || (h->length >= 0 && len != h->length)) {
                    return sws_cgi_invalid(h, "an invalid \"Content-Length\" header");
                }
                h->length = len;
            }
            /* Otherwise the protocol delimits the body: a length of the
             * program's own is not trusted to match what it sends. */
            return sws_http_upstream_header_received(h->u, &name, &value);
        }
        break;
    case 17:
        if (memcmp(lc, "transfer-encoding", 17) == 0) {
            h->chunked = 1;
            return sws_http_upstream_header_received(h->u, &name, &value);
        }
        break;
    }
    return sws_http_upstream_header(h->u, &name, lc, &value);
}

/* The head is complete: the status, a redirect, the body's length. */
static sws_int_t
sws_cgi_head_done(sws_http_cgi_head_t *h)
{
    static const sws_str_t  loc_name = sws_string("Location");
    sws_http_request_t     *r = h->r;
    sws_str_t               uri, args;
    sws_uint_t              status;
    u_char                 *q;

    if (h->location.len && h->location.data[0] == '/' && !h->status_set
        && (h->flags & SWS_HTTP_CGI_LOCAL_REDIRECT))
    {
        /* RFC 3875 6.2.2: a local redirect, the request goes on at that
         * path (not the client's business). */
        q = memchr(h->location.data, '?', h->location.len);
        uri.data = h->location.data;
        uri.len = q ? (size_t) (q - uri.data) : h->location.len;
        args.data = q ? q + 1 : NULL;
        args.len = q ? h->location.len - uri.len - 1 : 0;
        if (sws_http_upstream_set_redirect(h->u, &uri, &args) != SWS_OK) {
            return SWS_ERROR;
        }
        sws_http_set_status(r, SWS_HTTP_MOVED_TEMPORARILY);
        return SWS_OK;
    }
    if (h->location.len && !h->status_set) {
        /* RFC 3875 6.2.3: an absolute URI without a status is a 302. */
        sws_http_set_status(r, SWS_HTTP_MOVED_TEMPORARILY);
        h->status_set = 1;
    }
    if (h->location.len
        && sws_http_upstream_header(h->u, &loc_name, (const u_char *) "location",
                                    &h->location) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (!h->status_set) {
        sws_http_set_status(r, SWS_HTTP_OK);
    }
    status = sws_http_status(r);
    h->no_body = sws_http_method(r) == SWS_HTTP_HEAD || status == 204 || status == 304;
    if (!(h->flags & SWS_HTTP_CGI_LENGTH)) {
        return SWS_OK;
    }
    if (h->chunked && h->length >= 0) {
        return sws_cgi_invalid(h, "both \"Content-Length\" and \"Transfer-Encoding\"");
    }
    h->rest = h->length;
    sws_http_set_content_length(r, status == 204 ? -1 : h->length);
    return SWS_OK;
}

sws_int_t
sws_http_cgi_head_parse(sws_http_cgi_head_t *h, sws_buf_t *b)
{
    sws_cgi_line_t  line;
    sws_int_t       rc;

    for ( ;; ) {
        rc = sws_cgi_line_next(&b->pos, b->last,
                               (h->flags & SWS_HTTP_CGI_STATUS_LINE) && !h->started, &line);
        if (rc == SWS_AGAIN) {
            return SWS_AGAIN;
        }
        if (rc != SWS_OK) {
            return sws_cgi_invalid(h, line.why);
        }
        if (line.kind == SWS_CGI_LINE_END) {
            return sws_cgi_head_done(h);
        }
        if (line.kind == SWS_CGI_LINE_STATUS) {
            h->status_set = 1;
            h->status_line = 1;
            sws_http_set_status(h->r, line.status);
        } else {
            rc = sws_cgi_field(h, &line.name, &line.value);
            if (rc != SWS_OK) {
                return rc;
            }
        }
        h->started = 1;
    }
}

sws_int_t
sws_http_cgi_body(sws_http_cgi_head_t *h, sws_http_upstream_input_t *in)
{
    size_t n = (size_t) (in->last - in->pos);

    if (h->no_body) {
        return SWS_DONE;
    }
    if ((h->flags & SWS_HTTP_CGI_LENGTH) && h->length >= 0) {
        if ((off_t) n > h->rest) {
            n = (size_t) h->rest;
        }
        if (in->out != in->pos && n) {
            memmove(in->out, in->pos, n);
        }
        in->out += n;
        in->pos += n;
        h->rest -= (off_t) n;
        if (h->rest == 0) {
            return SWS_DONE;
        }
        if (in->eof) {
            sws_log_error(SWS_LOG_ERR, h->r->log, 0, "upstream prematurely closed the "
                          "connection while reading the %s response body", h->proto);
            return SWS_ERROR;
        }
        return SWS_OK;
    }
    if (in->out != in->pos && n) {
        memmove(in->out, in->pos, n);
    }
    in->out += n;
    in->pos += n;
    return in->eof ? SWS_DONE : SWS_OK;
}
