/*
 * HTTP/1.x to the servers, the response (<scalws/sws_upstream.h>), for
 * every module that talks HTTP/1 to its servers (proxy, node, python): the
 * head parsed line by line as it comes and copied into the request's pool,
 * interim 1xx passed on (100 excepted), 101 for an upgrade, the fields
 * (hop-by-hop and framing ones kept back, those Connection names removed),
 * how the body is delimited (Content-Length, chunked, the end of the
 * connection) and whether the connection may be reused; then the body,
 * decoded in place. The state of one request is u->h1 (sws_ups_h1()).
 */
#include "sws_http_upstream.h"
#include "sws_http_parse.h"
#include "sws_http_lc_eq.h"
#include "sws_swar.h"

#define SWS_UPS_H1_MAX_INTERIM   8      /* passed on per request; the rest dropped */

/* ---- the response head ---- */

void
sws_http_upstream_h1_reinit(sws_http_request_t *r, void *ctx)
{
    sws_ups_h1_t *st = r->upstream ? ((sws_http_upstream_t *) r->upstream)->h1 : NULL;

    (void) ctx;
    if (st == NULL) {
        return;
    }
    st->state = 0;
    st->status = 0;
    st->length = -1;
    st->conn_tokens = NULL;
    st->upgrade_value.len = 0;
    st->te_chunked = 0;
    st->conn_close = 0;
    st->conn_keepalive = 0;
    st->body = SWS_UPS_H1_BODY_NONE;
    st->rest = 0;
    sws_memzero(&st->chunked, sizeof(st->chunked));
}

/* Connection: close / keep-alive / upgrade, and the names of other fields
 * that are hop-by-hop for this response (v is in the head buffer: a name
 * kept is copied into the pool, most responses have none). */
static sws_int_t
sws_ups_h1_connection(sws_http_request_t *r, sws_ups_h1_t *st, const sws_str_t *v)
{
    u_char    *p = v->data, *last = p + v->len, *s, *e;
    sws_str_t *tok;

    while (p < last) {
        while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        for (s = p; p < last && *p != ','; p++) { /* the token */ }
        for (e = p; e > s && (e[-1] == ' ' || e[-1] == '\t'); e--) { /* trim */ }
        if (e == s) {
            continue;
        }
        if (e - s == 5 && sws_http_lc_eq(s, "close", 5)) {
            st->conn_close = 1;
        } else if (e - s == 10 && sws_http_lc_eq(s, "keep-alive", 10)) {
            st->conn_keepalive = 1;
        } else if (!(e - s == 7 && sws_http_lc_eq(s, "upgrade", 7))) {
            if (st->conn_tokens == NULL) {
                st->conn_tokens = sws_array_create(r->pool, 2, sizeof(sws_str_t));
                if (st->conn_tokens == NULL) {
                    return SWS_ERROR;
                }
            }
            tok = sws_array_push(st->conn_tokens);
            if (tok == NULL) {
                return SWS_ERROR;
            }
            tok->len = (size_t) (e - s);
            tok->data = sws_pnalloc(r->pool, tok->len);
            if (tok->data == NULL) {
                return SWS_ERROR;
            }
            memcpy(tok->data, s, tok->len);
        }
    }
    return SWS_OK;
}

/* The head is complete: framing and reuse. */
static sws_int_t
sws_ups_h1_head_done(sws_http_request_t *r, sws_ups_h1_t *st)
{
    static const sws_str_t  upgrade = sws_string("Upgrade");
    sws_http_upstream_t    *u = r->upstream;
    sws_str_t              *tok;
    sws_uint_t              i, status = st->status;
    int                     keepalive;

    if (st->conn_tokens) {
        tok = st->conn_tokens->elts;
        for (i = 0; i < st->conn_tokens->nelts; i++) {
            sws_http_header_out_remove(r, (const char *) tok[i].data, tok[i].len);
        }
    }

    if (status == SWS_HTTP_SWITCHING_PROTOCOLS) {
        if (!st->upgrade || st->upgrade_value.len == 0) {
            sws_log_error(SWS_LOG_ERR, r->log, 0,
                          "upstream sent 101 to a request that asked for no upgrade");
            return SWS_UPSTREAM_INVALID;
        }
        if (sws_http_header_out_add(r, &upgrade, &st->upgrade_value) == NULL) {
            return SWS_ERROR;
        }
        sws_http_upstream_set_upgrade(u);
        return SWS_OK;
    }

    keepalive = !st->http10
                && (st->version >= SWS_HTTP_VERSION_11 ? !st->conn_close : st->conn_keepalive);

    if ((r->method == SWS_HTTP_HEAD && !u->sent_as_get) || status == 204 || status == 304) {
        st->body = SWS_UPS_H1_BODY_NONE;
        sws_http_set_content_length(r, status == 204 ? -1 : st->length);
    } else if (st->te_chunked && st->length >= 0) {
        /* Both: a message that could smuggle another one (RFC 9112 6.1). */
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent \"Content-Length\" "
                      "and \"Transfer-Encoding\" at the same time");
        return SWS_UPSTREAM_INVALID;
    } else if (st->te_chunked) {
        st->body = SWS_UPS_H1_BODY_CHUNKED;
        sws_http_set_content_length(r, -1);
    } else if (st->length >= 0) {
        st->body = SWS_UPS_H1_BODY_LENGTH;
        st->rest = st->length;
        sws_http_set_content_length(r, st->length);
    } else {
        st->body = SWS_UPS_H1_BODY_CLOSE;
        keepalive = 0;
        sws_http_set_content_length(r, -1);
    }
    sws_http_upstream_set_keepalive(u, keepalive);
    return SWS_OK;
}

/* The response fields not passed on as they are. */
static int
sws_ups_h1_hop_by_hop(const u_char *lc, size_t len)
{
    switch (len) {
    case 2:  return memcmp(lc, "te", 2) == 0;
    case 7:  return memcmp(lc, "trailer", 7) == 0 || memcmp(lc, "upgrade", 7) == 0;
    case 10: return memcmp(lc, "keep-alive", 10) == 0 || memcmp(lc, "connection", 10) == 0;
    case 14: return memcmp(lc, "content-length", 14) == 0;
    case 16: return memcmp(lc, "proxy-connection", 16) == 0;
    case 17: return memcmp(lc, "transfer-encoding", 17) == 0;
    default: return 0;
    }
}

/* Only chunked is understood, and only as the one coding. */
static sws_int_t
sws_ups_h1_transfer_encoding(sws_http_request_t *r, sws_ups_h1_t *st,
    const sws_str_t *v)
{
    u_char *last = v->data + v->len, *p;

    for (p = last; p > v->data && p[-1] != ','; p--) { /* the last coding */ }
    while (p < last && (*p == ' ' || *p == '\t')) {
        p++;
    }
    if (last - p != 7 || sws_strncasecmp(p, (u_char *) "chunked", 7) != 0 || p != v->data) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent an unsupported "
                      "\"Transfer-Encoding: %.*s\"", (int) sws_min(v->len, 64), v->data);
        return SWS_UPSTREAM_INVALID;
    }
    st->te_chunked = 1;
    return SWS_OK;
}

/* One field line [start, end) of the final response. */
static sws_int_t
sws_ups_h1_header_line(sws_http_request_t *r, sws_ups_h1_t *st, u_char *start,
    u_char *end)
{
    sws_http_upstream_t *u = r->upstream;
    sws_http_header_t    h;
    sws_str_t            name, value, orig;
    size_t               len = (size_t) (end - start);
    u_char               lc_small[256], *lc = lc_small, *p;
    off_t                n;

    if (len > sizeof(lc_small)) {
        lc = sws_pnalloc(r->pool, len);
        if (lc == NULL) {
            return SWS_ERROR;
        }
    }
    /* the name's hash only for the hidden fields' lookup, and only where a
     * hidden name has its length and the names are not the defaults */
    if (sws_http_parse_field_unhashed(&h, lc, start, end) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent an invalid header "
                      "line: \"%.*s\"", (int) sws_min(len, 64), start);
        return SWS_UPSTREAM_INVALID;
    }
    name.data = start;                 /* as written (h.name is lower case) */
    name.len = h.name.len;
    if (sws_ups_hide_needs_hash(u->conf, h.name.len)) {
        h.hash = sws_hash_key_lc(start, h.name.len);   /* == sws_hash_key(lc) */
    }

    if (sws_ups_h1_hop_by_hop(lc, h.name.len)) {
        /* Kept back, but seen by $upstream_http_NAME. */
        if (sws_http_upstream_header_received(u, &name, &h.value) != SWS_OK) {
            return SWS_ERROR;
        }
        switch (h.name.len) {
        case 7:
            if (lc[0] == 'u') {
                st->upgrade_value.data = sws_pstrdup(r->pool, &h.value);
                st->upgrade_value.len = h.value.len;
                return st->upgrade_value.data ? SWS_OK : SWS_ERROR;
            }
            return SWS_OK;
        case 10:
            if (lc[0] == 'c') {
                return sws_ups_h1_connection(r, st, &h.value);
            }
            return SWS_OK;
        case 14:
            n = sws_http_parse_content_length(h.value.data, h.value.len);
            if (n < 0 || (st->length >= 0 && n != st->length)) {
                sws_log_error(SWS_LOG_ERR, r->log, 0,
                              "upstream sent an invalid \"Content-Length\"");
                return SWS_UPSTREAM_INVALID;
            }
            st->length = n;
            return SWS_OK;
        case 17:
            return sws_ups_h1_transfer_encoding(r, st, &h.value);
        default:
            return SWS_OK;             /* TE, Trailer, Proxy-Connection */
        }
    }

    /* A hidden one (Date, Server by default) is dropped here, uncopied,
     * unless $upstream_http_NAME may want it (keep_headers: recorded as
     * sws_ups_header_hashed records it). */
    if (!u->keep_headers && sws_ups_header_hidden(u, lc, h.name.len, h.hash, &h.value)) {
        return SWS_OK;
    }

    /* An end-to-end field: copied with its name as the server wrote it. */
    p = sws_pnalloc(r->pool, h.name.len + h.value.len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    name.data = p;
    value.data = sws_swar_copy(p, start, h.name.len);
    value.len = h.value.len;
    sws_swar_copy(value.data, h.value.data, h.value.len);
    if (st->hook) {
        orig = value;
        if (st->hook(r, st->hook_data, &name, lc, &value) != SWS_OK) {
            return SWS_ERROR;
        }
        if (value.data != orig.data || value.len != orig.len) {
            if (sws_http_upstream_header_received(u, &name, &orig) != SWS_OK
                || sws_ups_header_hashed(u, &name, lc, h.hash, &value) != SWS_OK)
            {
                return SWS_ERROR;
            }
            /* A Location proxy_redirect rewrote is the server's own, made
             * absolute (absolute_redirect) as nginx makes it. */
            if (h.name.len == 8 && memcmp(lc, "location", 8) == 0) {
                r->location_as_is = 0;
            }
            return SWS_OK;
        }
    }
    return u->keep_headers ? sws_ups_header_hashed(u, &name, lc, h.hash, &value)
                           : sws_ups_header_pass(u, &name, lc, &value);
}

/* A field line of an interim response: copied out of the head buffer. */
static sws_int_t
sws_ups_h1_interim_line(sws_http_request_t *r, sws_ups_h1_t *st, u_char *start,
    u_char *end)
{
    sws_http_header_t  h, *out;
    size_t             len = (size_t) (end - start);
    u_char            *lc, *p;

    if (st->status == SWS_HTTP_CONTINUE || st->ninterim >= SWS_UPS_H1_MAX_INTERIM) {
        return SWS_OK;
    }
    lc = sws_pnalloc(r->pool, len ? len : 1);
    if (lc == NULL) {
        return SWS_ERROR;
    }
    if (sws_http_parse_header_line(&h, lc, start, end) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent an invalid header "
                      "line in a %lu response: \"%.*s\"", (unsigned long) st->status,
                      (int) sws_min(len, 64), start);
        return SWS_UPSTREAM_INVALID;
    }
    if (sws_ups_h1_hop_by_hop(lc, h.name.len)) {
        return SWS_OK;
    }
    if (st->interim == NULL) {
        st->interim = sws_array_create(r->pool, 4, sizeof(sws_http_header_t));
    }
    out = st->interim ? sws_array_push(st->interim) : NULL;
    p = sws_pnalloc(r->pool, h.name.len + h.value.len);
    if (out == NULL || p == NULL) {
        return SWS_ERROR;
    }
    out->name.data = p;                 /* as the server wrote it */
    out->name.len = h.name.len;
    memcpy(p, start, h.name.len);
    out->value.data = p + h.name.len;
    out->value.len = h.value.len;
    memcpy(out->value.data, h.value.data, h.value.len);
    out->hash = 1;
    return SWS_OK;
}

/* Interim responses other than 100 (Expect is answered here) are passed
 * on, as a proxy must (RFC 9110 15.2): 103 Early Hints above all. */
static sws_int_t
sws_ups_h1_pass_interim(sws_http_request_t *r, sws_ups_h1_t *st)
{
    sws_int_t rc = SWS_OK;

    if (st->status != SWS_HTTP_CONTINUE && st->ninterim < SWS_UPS_H1_MAX_INTERIM) {
        st->ninterim++;
        rc = sws_http_send_interim(r, st->status, st->interim ? st->interim->elts : NULL,
                                   st->interim ? st->interim->nelts : 0);
    }
    if (st->interim) {
        st->interim->nelts = 0;
    }
    return rc == SWS_ERROR ? SWS_ERROR : SWS_OK;
}

sws_int_t
sws_http_upstream_h1_process_header(sws_http_request_t *r, void *ctx, sws_buf_t *b)
{
    sws_ups_h1_t *st = sws_ups_h1(r->upstream);
    u_char              *nl, *end;
    sws_int_t            rc;

    (void) ctx;
    if (st == NULL) {
        return SWS_ERROR;
    }
    for ( ;; ) {
        nl = memchr(b->pos, '\n', (size_t) (b->last - b->pos));
        if (nl == NULL) {
            return SWS_AGAIN;
        }
        end = (nl > b->pos && nl[-1] == '\r') ? nl - 1 : nl;

        if (st->state == 0) {
            if (sws_http_parse_status_line(b->pos, end, &st->status, &st->version)
                != SWS_OK)
            {
                sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent an invalid "
                              "status line: \"%.*s\"", (int) sws_min(end - b->pos, 64),
                              b->pos);
                return SWS_UPSTREAM_INVALID;
            }
            st->state = 1;
            b->pos = nl + 1;
            continue;
        }

        if (end == b->pos) {
            b->pos = nl + 1;
            if (st->status < 200 && st->status != SWS_HTTP_SWITCHING_PROTOCOLS) {
                /* 100 Continue, 102, 103: interim, the final one follows. */
                if (sws_ups_h1_pass_interim(r, st) != SWS_OK) {
                    return SWS_ERROR;
                }
                st->state = 0;
                continue;
            }
            sws_http_set_status(r, st->status);
            return sws_ups_h1_head_done(r, st);
        }

        if (st->status < 200 && st->status != SWS_HTTP_SWITCHING_PROTOCOLS) {
            rc = sws_ups_h1_interim_line(r, st, b->pos, end);
        } else {
            rc = sws_ups_h1_header_line(r, st, b->pos, end);
        }
        if (rc != SWS_OK) {
            return rc;
        }
        b->pos = nl + 1;
    }
}

/* ---- the response body ---- */

/* n body bytes at in->pos move to in->out. */
static void
sws_ups_h1_take(sws_http_upstream_input_t *in, size_t n)
{
    if (in->out != in->pos) {
        memmove(in->out, in->pos, n);
    }
    in->out += n;
    in->pos += n;
}

sws_int_t
sws_http_upstream_h1_input_filter(sws_http_request_t *r, void *ctx,
    sws_http_upstream_input_t *in)
{
    sws_ups_h1_t *st = ((sws_http_upstream_t *) r->upstream)->h1;
    size_t               n;
    sws_int_t            rc;

    (void) ctx;
    switch (st->body) {
    case SWS_UPS_H1_BODY_NONE:
        return SWS_DONE;

    case SWS_UPS_H1_BODY_LENGTH:
        n = (size_t) sws_min((off_t) (in->last - in->pos), st->rest);
        sws_ups_h1_take(in, n);
        st->rest -= (off_t) n;
        if (st->rest == 0) {
            return SWS_DONE;
        }
        return in->eof ? SWS_UPSTREAM_INVALID : SWS_OK;

    case SWS_UPS_H1_BODY_CHUNKED:
        while (in->pos < in->last) {
            rc = sws_http_parse_chunked(&st->chunked, &in->pos, in->last);
            if (rc == SWS_OK) {
                n = (size_t) sws_min((off_t) (in->last - in->pos), st->chunked.size);
                sws_ups_h1_take(in, n);
                st->chunked.size -= (off_t) n;
                continue;
            }
            if (rc == SWS_DONE) {
                return SWS_DONE;
            }
            if (rc == SWS_AGAIN) {
                break;
            }
            sws_log_error(SWS_LOG_ERR, r->log, 0, "upstream sent an invalid chunked body");
            return SWS_UPSTREAM_INVALID;
        }
        return in->eof ? SWS_UPSTREAM_INVALID : SWS_OK;

    default:                             /* until the connection closes */
        sws_ups_h1_take(in, (size_t) (in->last - in->pos));
        return in->eof ? SWS_DONE : SWS_OK;
    }
}
