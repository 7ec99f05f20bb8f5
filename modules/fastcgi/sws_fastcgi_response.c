/*
 * The response: STDOUT records carry a CGI response (RFC 3875 6: header
 * lines, an empty line, the body), STDERR records the script's messages,
 * END_REQUEST its end. Records are unframed in place, in the framework's
 * buffers: in the head buffer, the STDOUT bytes of each read move down
 * over the record headers, so that [b->pos, b->last) is CGI text only,
 * parsed by the core's CGI head parser (<scalws/sws_upstream_cgi.h>,
 * with local redirects); in the body, the input filter does the same into
 * in->out. STDERR goes to the error log line by line, with the request.
 */
#define _GNU_SOURCE     /* memmem */
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

/* fastcgi_catch_stderr: a text in a STDERR record that comes before the
 * head is complete makes the response invalid (as nginx: searched record
 * by record). */
static void
sws_fcgi_catch(sws_fcgi_ctx_t *ctx, const u_char *p, size_t n)
{
    const sws_str_t *t;
    sws_uint_t       i;

    if (!ctx->in_head || ctx->flcf->catch_stderr == NULL) {
        return;
    }
    t = ctx->flcf->catch_stderr->elts;
    for (i = 0; i < ctx->flcf->catch_stderr->nelts; i++) {
        if (t[i].len && t[i].len <= n && memmem(p, n, t[i].data, t[i].len)) {
            ctx->caught = 1;
        }
    }
}

/* Bytes of STDERR: complete lines are logged, a partial one is kept (up
 * to SWS_FCGI_ERR_LINE) until its end comes, or the response's. */
static void
sws_fcgi_stderr(sws_http_request_t *r, sws_fcgi_ctx_t *ctx, const u_char *p, size_t n)
{
    const u_char *nl;
    size_t        k;

    sws_fcgi_catch(ctx, p, n);
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
    sws_http_cgi_head_reset(ctx->head);
    ctx->dec = 0;
    ctx->predecoded = 0;
    ctx->err_len = 0;
    ctx->caught = 0;
}

sws_int_t
sws_fcgi_process_header(sws_http_request_t *r, void *data, sws_buf_t *b)
{
    sws_fcgi_ctx_t *ctx = data;
    u_char         *raw = b->pos + ctx->dec, *out = raw;
    sws_int_t       rc, prc;

    ctx->in_head = 1;
    prc = sws_fcgi_unframe(r, ctx, &raw, b->last, &out);
    ctx->in_head = 0;
    if (prc == SWS_FCGI_BAD) {
        sws_fcgi_bad_record(r, ctx->parser.error);
        return SWS_UPSTREAM_INVALID;
    }
    if (ctx->caught) {
        sws_fcgi_stderr_flush(r, ctx);
        sws_fcgi_bad_record(r, "its stderr has a fastcgi_catch_stderr text");
        return SWS_UPSTREAM_INVALID;
    }
    if (prc == SWS_FCGI_END && raw < b->last) {
        /* Bytes after the end: the connection is not to be reused. */
        ctx->keep = 0;
    }
    b->last = out;                 /* [pos, last): CGI text only */

    rc = sws_http_cgi_head_parse(ctx->head, b);
    if (rc == SWS_OK) {
        ctx->dec = 0;
        ctx->predecoded = 1;
        if (ctx->keep) {
            sws_http_upstream_set_keepalive(ctx->u, 1);
        }
        return SWS_OK;
    }
    if (rc != SWS_AGAIN) {
        return rc;
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
