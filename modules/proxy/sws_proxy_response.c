/*
 * The server's response: the status line and headers (parsed line by line
 * as they come, copied into the request's pool), interim 1xx responses
 * passed on (100 Continue excepted), 101 for upgrades, how the body is
 * delimited (Content-Length, chunked, or the end of the connection; none
 * for HEAD, 204, 304), whether the connection may be reused, and the body
 * decoded in place.
 */
#include "sws_proxy.h"

void
sws_proxy_reinit(sws_http_request_t *r, void *data)
{
    sws_proxy_ctx_t *ctx = data;

    (void) r;

    ctx->state = 0;
    ctx->status = 0;
    ctx->length = -1;
    ctx->conn_tokens = NULL;
    ctx->upgrade_value.len = 0;
    ctx->te_chunked = 0;
    ctx->conn_close = 0;
    ctx->conn_keepalive = 0;
    ctx->body = SWS_PROXY_BODY_NONE;
    ctx->rest = 0;
    sws_memzero(&ctx->chunked, sizeof(ctx->chunked));
}

/* proxy_redirect: the first rule whose FROM starts the value rewrites it. */
static sws_int_t
sws_proxy_rewrite_location(sws_http_request_t *r, sws_proxy_ctx_t *ctx, sws_str_t *v)
{
    sws_proxy_loc_conf_t *plcf = ctx->plcf;
    sws_proxy_redirect_t *pr, dflt;
    sws_array_t          *rules = plcf->redirects;
    sws_uint_t            i, n = rules ? rules->nelts : 1;
    sws_str_t             from, to;
    u_char               *p;

    for (i = 0; i < n; i++) {
        if (rules) {
            pr = (sws_proxy_redirect_t *) rules->elts + i;
        } else {
            sws_memzero(&dflt, sizeof(dflt));
            dflt.is_default = 1;
            pr = &dflt;
        }
        if (pr->is_default) {
            /* proxy_pass's URL (and URI part) -> the location */
            if (ctx->t->url.data == NULL) {
                continue;
            }
            from = ctx->t->url;
            if (ctx->t->uri.data) {
                to = plcf->location;
            } else {
                sws_str_set(&to, "/");
            }
        } else {
            from = pr->from;
            to = pr->to;
        }
        if (pr->is_default) {
            /* from is "http://authority" + (uri or "/") */
            size_t ulen = ctx->t->uri.data ? ctx->t->uri.len : 1;
            const u_char *udata = ctx->t->uri.data ? ctx->t->uri.data : (const u_char *) "/";
            if (v->len < from.len + ulen
                || sws_strncasecmp(v->data, from.data, from.len) != 0
                || memcmp(v->data + from.len, udata, ulen) != 0)
            {
                continue;
            }
            from.len += ulen;
        } else if (v->len < from.len || memcmp(v->data, from.data, from.len) != 0) {
            continue;
        }
        p = sws_pnalloc(sws_http_pool(r), to.len + v->len - from.len);
        if (p == NULL) {
            return SWS_ERROR;
        }
        memcpy(p, to.data, to.len);
        memcpy(p + to.len, v->data + from.len, v->len - from.len);
        v->data = p;
        v->len = to.len + v->len - from.len;
        return SWS_OK;
    }
    return SWS_OK;
}

/* Connection: close / keep-alive / upgrade, and the names of other headers
 * that are hop-by-hop for this response. */
static sws_int_t
sws_proxy_connection(sws_http_request_t *r, sws_proxy_ctx_t *ctx, const sws_str_t *v)
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
        if (e - s == 5 && sws_strncasecmp(s, (u_char *) "close", 5) == 0) {
            ctx->conn_close = 1;
        } else if (e - s == 10 && sws_strncasecmp(s, (u_char *) "keep-alive", 10) == 0) {
            ctx->conn_keepalive = 1;
        } else if (!(e - s == 7 && sws_strncasecmp(s, (u_char *) "upgrade", 7) == 0)) {
            if (ctx->conn_tokens == NULL) {
                ctx->conn_tokens = sws_array_create(sws_http_pool(r), 2, sizeof(sws_str_t));
                if (ctx->conn_tokens == NULL) {
                    return SWS_ERROR;
                }
            }
            tok = sws_array_push(ctx->conn_tokens);
            if (tok == NULL) {
                return SWS_ERROR;
            }
            tok->data = s;           /* pool memory: the header was copied */
            tok->len = (size_t) (e - s);
        }
    }
    return SWS_OK;
}

/* The head is complete: framing and reuse. */
static sws_int_t
sws_proxy_head_done(sws_http_request_t *r, sws_proxy_ctx_t *ctx)
{
    static const sws_str_t  upgrade = sws_string("Upgrade");
    sws_http_upstream_t    *u = ctx->u;
    sws_str_t              *tok;
    sws_uint_t              i, status = ctx->status;
    int                     keepalive;

    if (ctx->conn_tokens) {
        tok = ctx->conn_tokens->elts;
        for (i = 0; i < ctx->conn_tokens->nelts; i++) {
            sws_http_header_out_remove(r, (const char *) tok[i].data, tok[i].len);
        }
    }

    if (status == SWS_HTTP_SWITCHING_PROTOCOLS) {
        if (!ctx->upgrade || ctx->upgrade_value.len == 0) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "upstream sent 101 to a request that asked for no upgrade");
            return SWS_UPSTREAM_INVALID;
        }
        if (sws_http_header_out_add(r, &upgrade, &ctx->upgrade_value) == NULL) {
            return SWS_ERROR;
        }
        sws_http_upstream_set_upgrade(u);
        return SWS_OK;
    }

    keepalive = ctx->plcf->http_version == SWS_HTTP_VERSION_11
                && (ctx->version >= SWS_HTTP_VERSION_11 ? !ctx->conn_close
                                                        : ctx->conn_keepalive);

    if (sws_http_method(r) == SWS_HTTP_HEAD || status == 204 || status == 304) {
        ctx->body = SWS_PROXY_BODY_NONE;
        sws_http_set_content_length(r, status == 204 ? -1 : ctx->length);
    } else if (ctx->te_chunked && ctx->length >= 0) {
        /* Both: a message that could smuggle another one (RFC 9112 6.1). */
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent \"Content-Length\" "
                      "and \"Transfer-Encoding\" at the same time");
        return SWS_UPSTREAM_INVALID;
    } else if (ctx->te_chunked) {
        ctx->body = SWS_PROXY_BODY_CHUNKED;
        sws_http_set_content_length(r, -1);
    } else if (ctx->length >= 0) {
        ctx->body = SWS_PROXY_BODY_LENGTH;
        ctx->rest = ctx->length;
        sws_http_set_content_length(r, ctx->length);
    } else {
        ctx->body = SWS_PROXY_BODY_CLOSE;
        keepalive = 0;
        sws_http_set_content_length(r, -1);
    }
    sws_http_upstream_set_keepalive(u, keepalive);
    return SWS_OK;
}

/* The headers of a response the proxy does not pass on as they are. */
static int
sws_proxy_hop_by_hop(const u_char *lc, size_t len)
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

/* One header line [start, end) of the final response. */
static sws_int_t
sws_proxy_header_line(sws_http_request_t *r, sws_proxy_ctx_t *ctx, u_char *start, u_char *end)
{
    sws_http_header_t  h;
    sws_str_t          name, value;
    size_t             len = (size_t) (end - start);
    u_char             lc_small[256], *lc = lc_small, *p;
    u_char            *last;

    if (len > sizeof(lc_small)) {
        lc = sws_pnalloc(sws_http_pool(r), len);
        if (lc == NULL) {
            return SWS_ERROR;
        }
    }
    if (sws_http_parse_header_line(&h, lc, start, end) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent an invalid header "
                      "line: \"%.*s\"", (int) sws_min(len, 64), start);
        return SWS_UPSTREAM_INVALID;
    }
    name.data = start;                 /* as written (h.name is lower case) */
    name.len = h.name.len;

    /* The headers the proxy keeps to itself (framing, hop-by-hop) are
     * recorded for $upstream_http_NAME here; the others when passed on. */
    if (sws_proxy_hop_by_hop(lc, h.name.len)
        && sws_http_upstream_header_received(ctx->u, &name, &h.value) != SWS_OK)
    {
        return SWS_ERROR;
    }

    switch (h.name.len) {
    case 2:
        if (memcmp(lc, "te", 2) == 0) {
            return SWS_OK;
        }
        break;
    case 7:
        if (memcmp(lc, "trailer", 7) == 0) {
            return SWS_OK;
        }
        if (memcmp(lc, "upgrade", 7) == 0) {
            ctx->upgrade_value.data = sws_pstrdup(sws_http_pool(r), &h.value);
            ctx->upgrade_value.len = h.value.len;
            return ctx->upgrade_value.data ? SWS_OK : SWS_ERROR;
        }
        break;
    case 10:
        if (memcmp(lc, "keep-alive", 10) == 0) {
            return SWS_OK;
        }
        if (memcmp(lc, "connection", 10) == 0) {
            value.data = sws_pstrdup(sws_http_pool(r), &h.value);
            value.len = h.value.len;
            return value.data ? sws_proxy_connection(r, ctx, &value) : SWS_ERROR;
        }
        break;
    case 14:
        if (memcmp(lc, "content-length", 14) == 0) {
            off_t n = sws_http_parse_content_length(h.value.data, h.value.len);
            if (n < 0 || (ctx->length >= 0 && n != ctx->length)) {
                sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                              "upstream sent an invalid \"Content-Length\"");
                return SWS_UPSTREAM_INVALID;
            }
            ctx->length = n;
            return SWS_OK;
        }
        break;
    case 16:
        if (memcmp(lc, "proxy-connection", 16) == 0) {
            return SWS_OK;
        }
        break;
    case 17:
        if (memcmp(lc, "transfer-encoding", 17) == 0) {
            /* Only chunked is understood, and only as the last coding. */
            last = h.value.data + h.value.len;
            for (p = last; p > h.value.data && p[-1] != ','; p--) { /* last coding */ }
            while (p < last && (*p == ' ' || *p == '\t')) {
                p++;
            }
            if (last - p != 7 || sws_strncasecmp(p, (u_char *) "chunked", 7) != 0
                || p != h.value.data)
            {
                sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent an unsupported "
                              "\"Transfer-Encoding: %.*s\"", (int) sws_min(h.value.len, 64),
                              h.value.data);
                return SWS_UPSTREAM_INVALID;
            }
            ctx->te_chunked = 1;
            return SWS_OK;
        }
        break;
    }

    /* An end-to-end header: copied with its name as the server wrote it. */
    p = sws_pnalloc(sws_http_pool(r), h.name.len + h.value.len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    name.data = p;
    name.len = h.name.len;
    memcpy(p, start, h.name.len);
    value.data = p + h.name.len;
    value.len = h.value.len;
    memcpy(value.data, h.value.data, h.value.len);
    if (h.name.len == 8 && memcmp(lc, "location", 8) == 0
        && (sws_http_upstream_header_received(ctx->u, &name, &value) != SWS_OK
            || sws_proxy_rewrite_location(r, ctx, &value) != SWS_OK))
    {
        return SWS_ERROR;
    }
    return sws_http_upstream_header(ctx->u, &name, lc, &value);
}

/* Interim responses other than 100 (the core answers Expect itself) are
 * passed on, as a proxy must (RFC 9110 15.2): 103 Early Hints above all.
 * Their header lines are copied out of the upstream's buffer; at most
 * SWS_PROXY_MAX_INTERIM are passed on, the rest are dropped. */
#define SWS_PROXY_MAX_INTERIM  8

static sws_int_t
sws_proxy_interim_line(sws_http_request_t *r, sws_proxy_ctx_t *ctx, u_char *start, u_char *end)
{
    sws_http_header_t  h, *out;
    size_t             len = (size_t) (end - start);
    u_char            *lc, *p;

    if (ctx->status == SWS_HTTP_CONTINUE || ctx->ninterim >= SWS_PROXY_MAX_INTERIM) {
        return SWS_OK;
    }
    lc = sws_pnalloc(sws_http_pool(r), len ? len : 1);
    if (lc == NULL) {
        return SWS_ERROR;
    }
    if (sws_http_parse_header_line(&h, lc, start, end) != SWS_OK) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent an invalid header "
                      "line in a %lu response: \"%.*s\"", (unsigned long) ctx->status,
                      (int) sws_min(len, 64), start);
        return SWS_UPSTREAM_INVALID;
    }
    if (sws_proxy_hop_by_hop(lc, h.name.len)) {
        return SWS_OK;
    }
    if (ctx->interim == NULL) {
        ctx->interim = sws_array_create(sws_http_pool(r), 4, sizeof(sws_http_header_t));
    }
    out = ctx->interim ? sws_array_push(ctx->interim) : NULL;
    p = sws_pnalloc(sws_http_pool(r), h.name.len + h.value.len);
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

static sws_int_t
sws_proxy_pass_interim(sws_http_request_t *r, sws_proxy_ctx_t *ctx)
{
    sws_int_t rc = SWS_OK;

    if (ctx->status != SWS_HTTP_CONTINUE && ctx->ninterim < SWS_PROXY_MAX_INTERIM) {
        ctx->ninterim++;
        rc = sws_http_send_interim(r, ctx->status, ctx->interim ? ctx->interim->elts : NULL,
                                   ctx->interim ? ctx->interim->nelts : 0);
    }
    if (ctx->interim) {
        ctx->interim->nelts = 0;
    }
    return rc == SWS_ERROR ? SWS_ERROR : SWS_OK;
}

sws_int_t
sws_proxy_process_header(sws_http_request_t *r, void *data, sws_buf_t *b)
{
    sws_proxy_ctx_t *ctx = data;
    u_char          *nl, *end;
    sws_int_t        rc;

    for ( ;; ) {
        nl = memchr(b->pos, '\n', (size_t) (b->last - b->pos));
        if (nl == NULL) {
            return SWS_AGAIN;
        }
        end = (nl > b->pos && nl[-1] == '\r') ? nl - 1 : nl;

        if (ctx->state == 0) {
            if (sws_http_parse_status_line(b->pos, end, &ctx->status, &ctx->version)
                != SWS_OK)
            {
                sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent an invalid "
                              "status line: \"%.*s\"", (int) sws_min(end - b->pos, 64),
                              b->pos);
                return SWS_UPSTREAM_INVALID;
            }
            ctx->state = 1;
            b->pos = nl + 1;
            continue;
        }

        if (end == b->pos) {
            b->pos = nl + 1;
            if (ctx->status < 200 && ctx->status != SWS_HTTP_SWITCHING_PROTOCOLS) {
                /* 100 Continue, 102, 103: interim, the final one follows. */
                if (sws_proxy_pass_interim(r, ctx) != SWS_OK) {
                    return SWS_ERROR;
                }
                ctx->state = 0;
                continue;
            }
            sws_http_set_status(r, ctx->status);
            return sws_proxy_head_done(r, ctx);
        }

        if (ctx->status < 200 && ctx->status != SWS_HTTP_SWITCHING_PROTOCOLS) {
            rc = sws_proxy_interim_line(r, ctx, b->pos, end);
            if (rc != SWS_OK) {
                return rc;
            }
            b->pos = nl + 1;           /* the header of an interim response */
            continue;
        }
        rc = sws_proxy_header_line(r, ctx, b->pos, end);
        if (rc != SWS_OK) {
            return rc;
        }
        b->pos = nl + 1;
    }
}

sws_int_t
sws_proxy_input_filter(sws_http_request_t *r, void *data, sws_http_upstream_input_t *in)
{
    sws_proxy_ctx_t *ctx = data;
    size_t           n;
    sws_int_t        rc;

    switch (ctx->body) {
    case SWS_PROXY_BODY_NONE:
        return SWS_DONE;

    case SWS_PROXY_BODY_LENGTH:
        n = (size_t) sws_min((off_t) (in->last - in->pos), ctx->rest);
        if (in->out != in->pos) {
            memmove(in->out, in->pos, n);
        }
        in->out += n;
        in->pos += n;
        ctx->rest -= (off_t) n;
        if (ctx->rest == 0) {
            return SWS_DONE;
        }
        return in->eof ? SWS_UPSTREAM_INVALID : SWS_OK;

    case SWS_PROXY_BODY_CHUNKED:
        while (in->pos < in->last) {
            rc = sws_http_parse_chunked(&ctx->chunked, &in->pos, in->last);
            if (rc == SWS_OK) {
                n = (size_t) sws_min((off_t) (in->last - in->pos), ctx->chunked.size);
                if (in->out != in->pos) {
                    memmove(in->out, in->pos, n);
                }
                in->out += n;
                in->pos += n;
                ctx->chunked.size -= (off_t) n;
                continue;
            }
            if (rc == SWS_DONE) {
                return SWS_DONE;
            }
            if (rc == SWS_AGAIN) {
                break;
            }
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream sent an invalid "
                          "chunked body");
            return SWS_UPSTREAM_INVALID;
        }
        return in->eof ? SWS_UPSTREAM_INVALID : SWS_OK;

    default:                             /* until the connection closes */
        n = (size_t) (in->last - in->pos);
        if (in->out != in->pos) {
            memmove(in->out, in->pos, n);
        }
        in->out += n;
        in->pos += n;
        return in->eof ? SWS_DONE : SWS_OK;
    }
}
