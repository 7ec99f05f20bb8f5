/*
 * The response: STDOUT records carry a CGI response (RFC 3875 6: header
 * lines, an empty line, the body), STDERR records the script's messages,
 * END_REQUEST its end. Records are unframed in place, in the framework's
 * buffers: in the head buffer, the STDOUT bytes of each read move down
 * over the record headers, so that [b->pos, b->last) is CGI text only,
 * parsed line by line; in the body, the input filter does the same into
 * in->out. STDERR goes to the error log line by line, with the request.
 */
#include "sws_fastcgi.h"

/* The longest STDERR line kept whole; longer ones are logged in pieces. */
#define SWS_FCGI_ERR_LINE  2048

/* ---- STDERR ---- */

static void
sws_fcgi_log_line(sws_http_request_t *r, const u_char *p, size_t n)
{
    const sws_str_t *id = sws_http_request_id(r);
    const sws_str_t *uri = sws_http_unparsed_uri(r);

    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) {
        n--;
    }
    if (n == 0) {
        return;
    }
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "FastCGI sent in stderr: \"%.*s\" "
                  "while reading the response from upstream %.*s, request%s%.*s: \"%.*s %.*s\", "
                  "client: %.*s", (int) n, p,
                  (int) sws_http_upstream_peer_name(sws_http_upstream_get(r))->len,
                  sws_http_upstream_peer_name(sws_http_upstream_get(r))->data,
                  id->len ? " id " : "", (int) id->len, id->data,
                  (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                  (int) sws_min(uri->len, 512), uri->data,
                  (int) sws_http_remote_addr(r)->len, sws_http_remote_addr(r)->data);
}

/* Bytes of STDERR: complete lines are logged, a partial one is kept (up
 * to SWS_FCGI_ERR_LINE) until its end comes, or the response's. */
static void
sws_fcgi_stderr(sws_http_request_t *r, sws_fcgi_ctx_t *ctx, const u_char *p, size_t n)
{
    const u_char *nl;
    size_t        k;

    while (n) {
        nl = memchr(p, '\n', n);
        k = nl ? (size_t) (nl - p) : n;
        if (ctx->err_len || nl == NULL) {
            if (ctx->err == NULL) {
                ctx->err = sws_pnalloc(sws_http_pool(r), SWS_FCGI_ERR_LINE);
                if (ctx->err == NULL) {
                    return;
                }
            }
            while (k) {
                size_t room = SWS_FCGI_ERR_LINE - ctx->err_len, m = sws_min(room, k);
                memcpy(ctx->err + ctx->err_len, p, m);
                ctx->err_len += m;
                p += m;
                n -= m;
                k -= m;
                if (ctx->err_len == SWS_FCGI_ERR_LINE) {
                    sws_fcgi_log_line(r, ctx->err, ctx->err_len);
                    ctx->err_len = 0;
                }
            }
            if (nl) {
                sws_fcgi_log_line(r, ctx->err, ctx->err_len);
                ctx->err_len = 0;
                p++;
                n--;
            }
            continue;
        }
        sws_fcgi_log_line(r, p, k);
        p += k + 1;
        n -= k + 1;
    }
}

static void
sws_fcgi_stderr_flush(sws_http_request_t *r, sws_fcgi_ctx_t *ctx)
{
    if (ctx->err_len) {
        sws_fcgi_log_line(r, ctx->err, ctx->err_len);
        ctx->err_len = 0;
    }
}

static void
sws_fcgi_bad_record(sws_http_request_t *r, const char *why)
{
    const sws_str_t *peer = sws_http_upstream_peer_name(sws_http_upstream_get(r));

    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "upstream %.*s sent an invalid FastCGI "
                  "response: %s", (int) peer->len, peer->data, why);
}

/* Unframe [from, last) onto out: STDOUT bytes are moved to out, STDERR
 * logged. Returns SWS_AGAIN (all consumed), SWS_FCGI_END (*from after
 * END_REQUEST) or SWS_FCGI_BAD; *outp advanced. */
static sws_int_t
sws_fcgi_unframe(sws_http_request_t *r, sws_fcgi_ctx_t *ctx, u_char **from, u_char *last,
    u_char **outp)
{
    sws_fcgi_piece_t  piece;
    sws_int_t         rc;
    u_char           *out = *outp;

    for ( ;; ) {
        rc = sws_fcgi_parse(&ctx->parser, from, last, &piece);
        if (rc == SWS_FCGI_DATA) {
            if (piece.type == SWS_FCGI_STDOUT) {
                if (out != piece.data) {
                    memmove(out, piece.data, piece.len);
                }
                out += piece.len;
            } else {
                sws_fcgi_stderr(r, ctx, piece.data, piece.len);
            }
            continue;
        }
        if (rc == SWS_FCGI_STDOUT_END) {
            continue;
        }
        break;
    }
    *outp = out;
    if (rc == SWS_FCGI_END || rc == SWS_FCGI_BAD) {
        sws_fcgi_stderr_flush(r, ctx);
    }
    return rc;
}

/* ---- the head ---- */

void
sws_fcgi_reinit(sws_http_request_t *r, void *data)
{
    sws_fcgi_ctx_t *ctx = data;

    (void) r;
    sws_fcgi_parser_init(&ctx->parser);
    ctx->dec = 0;
    ctx->location.len = 0;
    ctx->status_set = 0;
    ctx->predecoded = 0;
    ctx->err_len = 0;
}

static int
sws_fcgi_token(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "Status: 404 Not Found": the code only (the core writes the reason). */
static sws_int_t
sws_fcgi_status(sws_http_request_t *r, sws_fcgi_ctx_t *ctx, const sws_str_t *v)
{
    sws_int_t n;

    if (ctx->status_set || v->len < 3 || (v->len > 3 && v->data[3] != ' ')) {
        return SWS_UPSTREAM_INVALID;
    }
    n = sws_atoi(v->data, 3);
    if (n < 200 || n > 599) {
        return SWS_UPSTREAM_INVALID;
    }
    ctx->status_set = 1;
    sws_http_set_status(r, (sws_uint_t) n);
    return SWS_OK;
}

/* One header line [p, p + len) (no line end). */
static sws_int_t
sws_fcgi_header_line(sws_http_request_t *r, sws_fcgi_ctx_t *ctx, u_char *p, size_t len)
{
    sws_pool_t  *pool = sws_http_pool(r);
    sws_str_t    name, value;
    u_char      *colon, *lc, *v, *end = p + len;
    size_t       i;

    colon = memchr(p, ':', len);
    if (colon == NULL || colon == p) {
        return SWS_UPSTREAM_INVALID;
    }
    for (i = 0; p + i < colon; i++) {
        if (!sws_fcgi_token(p[i])) {
            return SWS_UPSTREAM_INVALID;
        }
    }
    v = colon + 1;
    while (v < end && (*v == ' ' || *v == '\t')) {
        v++;
    }
    while (end > v && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    for (i = 0; v + i < end; i++) {
        if ((v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f) {
            return SWS_UPSTREAM_INVALID;
        }
    }
    /* Copies: the head buffer is reused for the body. */
    name.len = (size_t) (colon - p);
    value.len = (size_t) (end - v);
    name.data = sws_pnalloc(pool, name.len * 2 + value.len + 1);
    if (name.data == NULL) {
        return SWS_ERROR;
    }
    memcpy(name.data, p, name.len);
    lc = name.data + name.len;
    sws_strlow(lc, p, name.len);
    value.data = lc + name.len;
    memcpy(value.data, v, value.len);

    switch (name.len) {
    case 6:
        if (memcmp(lc, "status", 6) == 0) {
            return sws_fcgi_status(r, ctx, &value);
        }
        break;
    case 8:
        if (memcmp(lc, "location", 8) == 0) {
            if (ctx->location.len || value.len == 0) {
                return SWS_UPSTREAM_INVALID;
            }
            ctx->location = value;
            return SWS_OK;         /* passed on (or followed) at the end */
        }
        break;
    case 10:
        if (memcmp(lc, "connection", 10) == 0 || memcmp(lc, "keep-alive", 10) == 0) {
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    case 14:
        /* The records delimit the body: a length of the script's own is
         * not trusted to match what it sends. */
        if (memcmp(lc, "content-length", 14) == 0) {
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    case 17:
        if (memcmp(lc, "transfer-encoding", 17) == 0) {
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    }
    return sws_http_upstream_header(ctx->u, &name, lc, &value);
}

/* The head is complete: the status, a redirect, keep-alive. */
static sws_int_t
sws_fcgi_head_done(sws_http_request_t *r, sws_fcgi_ctx_t *ctx)
{
    static const sws_str_t  loc_name = sws_string("Location");
    sws_str_t               uri, args;
    u_char                 *q;

    if (ctx->location.len && ctx->location.data[0] == '/' && !ctx->status_set) {
        /* RFC 3875 6.2.2: a local redirect, the request goes on at that
         * path (not the client's business). */
        q = memchr(ctx->location.data, '?', ctx->location.len);
        uri.data = ctx->location.data;
        uri.len = q ? (size_t) (q - uri.data) : ctx->location.len;
        args.data = q ? q + 1 : NULL;
        args.len = q ? ctx->location.len - uri.len - 1 : 0;
        if (sws_http_upstream_set_redirect(ctx->u, &uri, &args) != SWS_OK) {
            return SWS_ERROR;
        }
        sws_http_set_status(r, SWS_HTTP_MOVED_TEMPORARILY);
        return SWS_OK;
    }
    if (ctx->location.len && !ctx->status_set) {
        /* RFC 3875 6.2.3: an absolute URI without a status is a 302. */
        sws_http_set_status(r, SWS_HTTP_MOVED_TEMPORARILY);
        ctx->status_set = 1;
    }
    if (ctx->location.len
        && sws_http_upstream_header(ctx->u, &loc_name, (const u_char *) "location",
                                    &ctx->location) != SWS_OK)
    {
        return SWS_ERROR;
    }
    if (!ctx->status_set) {
        sws_http_set_status(r, SWS_HTTP_OK);
    }
    if (ctx->keep) {
        sws_http_upstream_set_keepalive(ctx->u, 1);
    }
    return SWS_OK;
}

sws_int_t
sws_fcgi_process_header(sws_http_request_t *r, void *data, sws_buf_t *b)
{
    sws_fcgi_ctx_t *ctx = data;
    u_char         *raw = b->pos + ctx->dec, *out = raw, *nl, *line;
    size_t          len;
    sws_int_t       rc, prc;

    prc = sws_fcgi_unframe(r, ctx, &raw, b->last, &out);
    if (prc == SWS_FCGI_BAD) {
        sws_fcgi_bad_record(r, ctx->parser.error);
        return SWS_UPSTREAM_INVALID;
    }
    if (prc == SWS_FCGI_END && raw < b->last) {
        /* Bytes after the end: the connection is not to be reused. */
        ctx->keep = 0;
    }
    b->last = out;                 /* [pos, last): CGI text only */

    for ( ;; ) {
        nl = memchr(b->pos, '\n', (size_t) (b->last - b->pos));
        if (nl == NULL) {
            break;
        }
        line = b->pos;
        len = (size_t) (nl - line);
        if (len && line[len - 1] == '\r') {
            len--;
        }
        b->pos = nl + 1;
        if (len == 0) {
            ctx->dec = 0;
            ctx->predecoded = 1;
            return sws_fcgi_head_done(r, ctx);
        }
        rc = sws_fcgi_header_line(r, ctx, line, len);
        if (rc != SWS_OK) {
            if (rc == SWS_UPSTREAM_INVALID) {
                sws_fcgi_bad_record(r, "an invalid header line");
            }
            return rc;
        }
    }
    ctx->dec = (size_t) (b->last - b->pos);
    if (prc == SWS_FCGI_END || ctx->parser.stdout_closed) {
        sws_fcgi_bad_record(r, "the output ended inside the header");
        return SWS_UPSTREAM_INVALID;
    }
    return SWS_AGAIN;
}

/* ---- the body ---- */

sws_int_t
sws_fcgi_input_filter(sws_http_request_t *r, void *data, sws_http_upstream_input_t *in)
{
    sws_fcgi_ctx_t *ctx = data;
    const char     *why;
    sws_int_t       rc;

    if (ctx->predecoded) {
        /* What followed the head was unframed with it. */
        ctx->predecoded = 0;
        in->out = in->pos = in->last;
        return ctx->parser.state == SWS_FCGI_ST_DONE ? SWS_DONE : SWS_OK;
    }
    if (ctx->parser.state == SWS_FCGI_ST_DONE) {
        return SWS_DONE;           /* bytes after the end: the framework says so */
    }
    rc = sws_fcgi_unframe(r, ctx, &in->pos, in->last, &in->out);
    if (rc == SWS_FCGI_END) {
        return SWS_DONE;
    }
    if (rc == SWS_FCGI_BAD) {
        sws_fcgi_bad_record(r, ctx->parser.error);
        return SWS_UPSTREAM_INVALID;
    }
    if (in->eof) {
        why = sws_fcgi_parse_eof(&ctx->parser);
        sws_fcgi_stderr_flush(r, ctx);
        sws_fcgi_bad_record(r, why ? why : "closed the connection");
        return SWS_ERROR;
    }
    return SWS_OK;
}

void
sws_fcgi_finalize(sws_http_request_t *r, void *data, sws_int_t rc)
{
    (void) rc;
    sws_fcgi_stderr_flush(r, data);
}
