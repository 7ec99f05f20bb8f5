/*
 * HTTP/1.x to the servers, the request (<scalws/sws_upstream.h>): the head
 * built from the client's request in one buffer, written in one pass after
 * one pass to measure it: the request line, Host, Connection, the module's
 * fields, the body's framing, a cache's revalidation fields, then the
 * client's fields without the hop-by-hop ones (RFC 9110 7.6.1: Connection
 * and those it names, Keep-Alive, TE, Transfer-Encoding, Upgrade, also
 * Trailer, Proxy-Connection, Proxy-Authorization, HTTP2-Settings) and
 * without those the module replaces; a streamed body of unknown length goes
 * chunked. Upgrade goes only with an upgrade the location allows
 * (sws_http_upstream_upgrade_allowed: never h2c), also when the module
 * sets it from a variable (nginx's "proxy_set_header Upgrade
 * $http_upgrade"). The
 * response is in sws_http_upstream_h1.c.
 */
#include "sws_http_upstream.h"

sws_ups_h1_t *
sws_ups_h1(sws_http_upstream_t *u)
{
    if (u->h1 == NULL) {
        u->h1 = &u->h1_state;          /* zero since sws_http_upstream_create */
        u->h1->length = -1;
    }
    return u->h1;
}

void
sws_http_upstream_h1_set_header_hook(sws_http_upstream_t *u, sws_http_upstream_h1_header_pt hook,
    void *data)
{
    sws_ups_h1_t *h = sws_ups_h1(u);

    if (h) {
        h->hook = hook;
        h->hook_data = data;
    }
}

/* ---- the request ---- */

/* Does a Connection field of the client name this (lower-case) one? */
static int
sws_ups_h1_connection_names(sws_http_request_t *r, const sws_str_t *name)
{
    const sws_http_header_t *h = r->headers_in.elts;
    sws_uint_t               i;
    u_char                  *p, *last, *s, *e;

    for (i = 0; i < r->headers_in.nelts; i++) {
        if (h[i].name.len != 10 || memcmp(h[i].name.data, "connection", 10) != 0) {
            continue;
        }
        p = h[i].value.data;
        last = p + h[i].value.len;
        while (p < last) {
            while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
                p++;
            }
            for (s = p; p < last && *p != ','; p++) { /* the token */ }
            for (e = p; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--) { /* trim */ }
            if ((size_t) (e - s) == name->len
                && sws_strncasecmp(s, name->data, name->len) == 0)
            {
                return 1;
            }
        }
    }
    return 0;
}

/* A cache takes the response: the client's conditions are not the server's. */
static int
sws_ups_h1_conditional(const sws_str_t *name)
{
    static const char *const names[] = {
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
        "if-range", "range", NULL
    };
    sws_uint_t i;

    for (i = 0; names[i]; i++) {
        if (name->len == strlen(names[i]) && memcmp(name->data, names[i], name->len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Is the client's field h one that does not go to the server? */
static int
sws_ups_h1_skip(sws_http_request_t *r, const sws_http_upstream_h1_request_t *rq,
    const sws_http_header_t *h, int check_connection, int for_cache)
{
    const u_char *n = h->name.data;
    sws_uint_t    i;

    switch (h->name.len) {
    case 2:
        if (memcmp(n, "te", 2) == 0) {
            return 1;
        }
        break;
    case 4:
        if (memcmp(n, "host", 4) == 0) {
            return 1;
        }
        break;
    case 6:
        if (memcmp(n, "expect", 6) == 0) {
            return 1;                  /* 100-continue was answered here */
        }
        break;
    case 7:
        if (memcmp(n, "trailer", 7) == 0 || memcmp(n, "upgrade", 7) == 0) {
            return 1;
        }
        break;
    case 10:
        if (memcmp(n, "connection", 10) == 0 || memcmp(n, "keep-alive", 10) == 0) {
            return 1;
        }
        break;
    case 14:
        if (memcmp(n, "content-length", 14) == 0 || memcmp(n, "http2-settings", 14) == 0) {
            return 1;                  /* HTTP2-Settings: h2c's, never passed on */
        }
        break;
    case 16:
        if (memcmp(n, "proxy-connection", 16) == 0) {
            return 1;
        }
        break;
    case 17:
        if (memcmp(n, "transfer-encoding", 17) == 0) {
            return 1;
        }
        break;
    case 19:
        if (memcmp(n, "proxy-authorization", 19) == 0) {
            return 1;
        }
        break;
    }
    if (for_cache && sws_ups_h1_conditional(&h->name)
        && !(for_cache == 2 && h->name.len == 5))   /* "range", passed on */
    {
        return 1;
    }
    if (rq->replaces) {
        if (rq->replaces(rq->data, h)) {
            return 1;
        }
    } else {
        for (i = 0; i < rq->nfields; i++) {
            if (sws_str_caseeq(&rq->fields[i].name, &h->name)) {
                return 1;
            }
        }
    }
    return check_connection && sws_ups_h1_connection_names(r, &h->name);
}

#define SWS_UPS_H1_LINE(name)  (sizeof(name ": \r\n") - 1)

sws_int_t
sws_http_upstream_h1_create_request(sws_http_upstream_t *u,
    const sws_http_upstream_h1_request_t *rq, sws_chain_t **out)
{
    sws_http_request_t      *r = u->r;
    sws_ups_h1_t     *st = sws_ups_h1(u);
    const sws_http_header_t *h = r->headers_in.elts;
    const sws_str_t         *method = rq->method.len ? &rq->method : &r->method_name;
    static const sws_str_t   upgrade_name = sws_string("upgrade");
    static const sws_str_t   get_name = sws_string("GET");
    const sws_str_t         *upgrade = NULL;
    const sws_http_header_t *fields;
    sws_http_header_t       *f;
    sws_str_t                inm, ims;
    sws_uint_t               j, nf, i, mode = u->body_mode, nin = r->headers_in.nelts;
    u_char                   skip_small[128], *skip = skip_small;
    u_char                   num[24], *numend = num;
    const char              *conn = NULL, *te = NULL;
    int                      check_conn, for_cache;
    off_t                    body_len;
    size_t                   len;
    sws_buf_t               *b;
    sws_chain_t             *cl;
    u_char                  *p;

    if (st == NULL) {
        return SWS_ERROR;
    }
    st->http10 = rq->http10;
    st->upgrade = rq->upgrade && !rq->http10;
    st->chunked_body = 0;
    for_cache = sws_http_upstream_cache_request(u, &inm, &ims);
    if (for_cache < 0) {
        return SWS_ERROR;
    }
    if (for_cache && sws_ups_cache_passes_range(u)) {
        for_cache = 2;                 /* the client's Range goes on */
    }
    /* proxy_cache_convert_head: the whole response, for the cache */
    u->sent_as_get = for_cache && u->head_as_get && r->method == SWS_HTTP_HEAD;
    if (u->sent_as_get) {
        method = &get_name;
    }
    check_conn = sws_http_header_in(r, "connection", 10) != NULL;

    /* The body's framing. */
    if (rq->body != NULL) {
        numend = sws_sprint_uint(num, (uint64_t) rq->body->len);   /* proxy_set_body */
        mode = SWS_UPSTREAM_BODY_NONE;
    } else if (mode == SWS_UPSTREAM_BODY_NONE) {
        if (sws_http_header_in(r, "content-length", 14) && !sws_http_has_body(r)
            && !rq->own_length)
        {
            numend = sws_cpymem(num, "0", 1);        /* "Content-Length: 0" stays */
        }
    } else {
        body_len = sws_http_upstream_body_length(u);
        if (body_len >= 0) {
            numend = sws_sprint_uint(num, (uint64_t) body_len);
        } else {
            te = "chunked";
            st->chunked_body = 1;
        }
    }
    if (st->upgrade) {
        upgrade = sws_http_header_in(r, "upgrade", 7);
        conn = "upgrade";
    } else if (rq->http10 || !sws_http_upstream_can_keepalive(u)) {
        conn = "close";
    }

    /* Measure. */
    nf = rq->nfields;
    fields = rq->fields;
    if (!st->upgrade) {
        for (i = 0; i < nf; i++) {
            if (sws_str_caseeq(&fields[i].name, &upgrade_name)) {
                break;
            }
        }
        if (i < nf) {              /* a copy without it */
            f = sws_palloc(r->pool, nf * sizeof(sws_http_header_t));
            if (f == NULL) {
                return SWS_ERROR;
            }
            for (i = 0, j = 0; i < nf; i++) {
                if (!sws_str_caseeq(&fields[i].name, &upgrade_name)) {
                    f[j++] = fields[i];
                }
            }
            fields = f;
            nf = j;
        }
    }
    len = method->len + 1 + rq->target.len + sizeof(" HTTP/1.1\r\n") - 1;
    if (rq->host.len) {
        len += SWS_UPS_H1_LINE("Host") + rq->host.len;
    }
    for (i = 0; i < nf; i++) {
        if (fields[i].value.len) {
            len += fields[i].name.len + 4 + fields[i].value.len;
        }
    }
    len += rq->text.len;
    if (conn && !rq->own_connection) {
        len += SWS_UPS_H1_LINE("Connection") + strlen(conn);
    }
    if (upgrade && !rq->own_upgrade) {
        len += SWS_UPS_H1_LINE("Upgrade") + upgrade->len;
    }
    if (numend > num) {
        len += SWS_UPS_H1_LINE("Content-Length") + (size_t) (numend - num);
    }
    if (te) {
        len += SWS_UPS_H1_LINE("Transfer-Encoding") + strlen(te);
    }
    if (inm.len) {
        len += SWS_UPS_H1_LINE("If-None-Match") + inm.len;
    }
    if (ims.len) {
        len += SWS_UPS_H1_LINE("If-Modified-Since") + ims.len;
    }
    if (!rq->no_client_fields) {
        if (nin > sizeof(skip_small)) {
            skip = sws_pnalloc(r->pool, nin);
            if (skip == NULL) {
                return SWS_ERROR;
            }
        }
        for (i = 0; i < nin; i++) {
            skip[i] = (u_char) sws_ups_h1_skip(r, rq, &h[i], check_conn, for_cache);
            if (!skip[i]) {
                len += h[i].name.len + 2 + h[i].value.len + 2;
            }
        }
    }
    len += 2;

    /* Write. */
    b = sws_create_temp_buf(r->pool, len);
    cl = sws_alloc_chain_link(r->pool);
    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    p = b->last;
    p = sws_cpymem(p, method->data, method->len);
    *p++ = ' ';
    p = sws_cpymem(p, rq->target.data, rq->target.len);
    p = sws_cpymem(p, rq->http10 ? " HTTP/1.0\r\n" : " HTTP/1.1\r\n", 11);

#define SWS_UPS_H1_PUT(name, nlen, v, vlen) \
    p = sws_cpymem(p, name, nlen); *p++ = ':'; *p++ = ' '; \
    p = sws_cpymem(p, v, vlen); *p++ = '\r'; *p++ = '\n'
#define SWS_UPS_H1_PUTC(name, v, vlen)  SWS_UPS_H1_PUT(name, sizeof(name) - 1, v, vlen)

    if (rq->host.len) {
        SWS_UPS_H1_PUTC("Host", rq->host.data, rq->host.len);
    }
    if (conn && !rq->own_connection) {
        SWS_UPS_H1_PUTC("Connection", conn, strlen(conn));
    }
    if (upgrade && !rq->own_upgrade) {
        SWS_UPS_H1_PUTC("Upgrade", upgrade->data, upgrade->len);
    }
    for (i = 0; i < nf; i++) {
        if (fields[i].value.len) {
            SWS_UPS_H1_PUT(fields[i].name.data, fields[i].name.len,
                           fields[i].value.data, fields[i].value.len);
        }
    }
    if (numend > num) {
        SWS_UPS_H1_PUTC("Content-Length", num, (size_t) (numend - num));
    }
    if (te) {
        SWS_UPS_H1_PUTC("Transfer-Encoding", te, strlen(te));
    }
    if (inm.len) {
        SWS_UPS_H1_PUTC("If-None-Match", inm.data, inm.len);
    }
    if (ims.len) {
        SWS_UPS_H1_PUTC("If-Modified-Since", ims.data, ims.len);
    }
    if (rq->text.len) {
        p = sws_cpymem(p, rq->text.data, rq->text.len);
    }
    if (!rq->no_client_fields) {
        for (i = 0; i < nin; i++) {
            if (!skip[i]) {
                SWS_UPS_H1_PUT(h[i].name.data, h[i].name.len, h[i].value.data, h[i].value.len);
            }
        }
    }
    *p++ = '\r';
    *p++ = '\n';
#undef SWS_UPS_H1_PUTC
#undef SWS_UPS_H1_PUT
    b->last = p;

    cl->buf = b;
    cl->next = NULL;
    *out = cl;

    if (rq->body != NULL && rq->body->len) {
        b = sws_calloc_buf(r->pool);
        cl->next = sws_alloc_chain_link(r->pool);
        if (b == NULL || cl->next == NULL) {
            return SWS_ERROR;
        }
        b->pos = b->start = rq->body->data;
        b->last = b->end = rq->body->data + rq->body->len;
        b->memory = 1;
        cl->next->buf = b;
        cl->next->next = NULL;
    }
    if (sws_http_upstream_body_chain(u, &cl->next) == NULL) {
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* Streaming a body of unknown length: each piece as a chunk. */
void
sws_http_upstream_h1_frame_body(sws_http_request_t *r, void *ctx, sws_buf_t *b, int last)
{
    sws_ups_h1_t *st = r->upstream ? ((sws_http_upstream_t *) r->upstream)->h1 : NULL;
    u_char               head[20];
    size_t               size = (size_t) (b->last - b->pos), n;

    (void) ctx;
    if (st == NULL || !st->chunked_body) {
        return;
    }
    if (size) {
        n = (size_t) (sws_slprintf(head, head + sizeof(head), "%zx\r\n", size) - head);
        b->pos -= n;
        memcpy(b->pos, head, n);
        b->last = sws_cpymem(b->last, "\r\n", 2);
    }
    if (last) {
        b->last = sws_cpymem(b->last, "0\r\n\r\n", 5);
    }
}

