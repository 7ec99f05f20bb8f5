/*
 * The native Python bridge, scalwsd's side: requests handed, already
 * parsed, to the runner (python3 -m scalws_bridge) over the bridge's
 * framing (sws_python_bridge_frame.h, docs/python-bridge.md), on the
 * upstream framework: keep-alive, the queue, timeouts, retries, buffering.
 *
 *   python_bridge_pass unix:/path | NAME | ADDR;   may hold variables
 *   python_bridge_pass_request_headers on|off;
 *   python_bridge_upgrade off|on|PROTOCOL ...;   Upgrade requests (websocket)
 *                                  handed to the runner, tunnelled after its 101
 *   python_bridge_connect_timeout ... python_bridge_intercept_errors:
 *                                  the framework's, as uwsgi_* has them
 *
 * The request goes as one REQUEST frame (method, path, query, fields ...);
 * its body as BODY frames (streamed as it comes, or the buffered body as
 * one) and a BODY_END. The response comes as RESPONSE, DATA frames and
 * END, whose KEEP flag lets the connection serve another request.
 */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <scalws/scalws.h>
#include "sws_python_module.h"
#include "sws_python_bridge.h"
#include "sws_python_bridge_frame.h"

typedef struct {
    sws_http_request_t   *r;
    sws_http_upstream_t  *u;
    sws_pyb_loc_conf_t   *conf;
    sws_pyb_reader_t      reader;         /* the response body's frames */
    off_t                 length;         /* the RESPONSE's Content-Length, -1 none */
    off_t                 received;       /* DATA bytes so far */
    sws_str_t             upgrade;        /* the RESPONSE's Upgrade field */
    u_char                file[SWS_PYB_FILE_LEN];  /* FILE's payload so far */
    unsigned              nfile;
    unsigned              upgrade_asked:1;  /* REQUEST said UPGRADE */
    unsigned              file_body:1;      /* a FILE came: nothing more */
} sws_pyb_ctx_t;

/* A port-less TCP address takes nginx's HTTP one (unix sockets are the
 * usual target). */
#define SWS_PYB_DEFAULT_PORT  80

/* ---- the request ---- */

/* A port number of the addresses' text, up to the space after it (0 if
 * none); *p moves past the space. */
static unsigned
sws_pyb_port(const u_char **p, const u_char *last)
{
    const u_char *start = *p, *q = start;
    sws_int_t     n;

    while (q < last && *q != ' ') {
        q++;
    }
    n = sws_atoi(start, (size_t) (q - start));
    *p = q < last ? q + 1 : q;
    return n > 0 && n <= 65535 ? (unsigned) n : 0;
}

/* A string of the head: its 16-bit length and its bytes. */
static size_t
sws_pyb_str_size(const sws_str_t *s)
{
    return 2 + s->len;
}

static sws_int_t
sws_pyb_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_pyb_ctx_t            *ctx = data;
    sws_pyb_loc_conf_t       *lcf = ctx->conf;
    sws_http_upstream_t      *u = ctx->u;
    sws_pool_t               *pool = sws_http_pool(r);
    const sws_array_t        *hs = sws_http_headers_in(r);
    const sws_http_header_t  *h = hs->elts;
    sws_str_t                 strings[SWS_PYB_STRINGS], server, addrs;
    sws_uint_t                i, nfields = 0, mode = sws_http_upstream_body_mode(u);
    unsigned                  client_port, server_port;
    sws_chain_t              *end, **tail;
    size_t                    len;
    off_t                     body, clen;
    u_char                   *start, *p;
    const u_char             *a;
    u_char                    addr[96];

    /* both ports and the server's address from one evaluation */
    if (sws_http_format_string(lcf->addrs, r, NULL, 0, addr, sizeof(addr), &addrs)
        != SWS_OK)
    {
        addrs.len = 0;
        addrs.data = addr;
    }
    a = addrs.data;
    client_port = sws_pyb_port(&a, addrs.data + addrs.len);
    server_port = sws_pyb_port(&a, addrs.data + addrs.len);
    server.data = (u_char *) a;
    server.len = (size_t) (addrs.data + addrs.len - a);
    strings[0] = *sws_http_method_name(r);
    strings[1] = *sws_http_uri(r);
    strings[2] = *sws_http_unparsed_uri(r);
    strings[3] = *sws_http_args(r);
    strings[4] = *sws_http_remote_addr(r);
    strings[5] = server;
    strings[6] = *sws_http_host(r);

    len = SWS_PYB_HEAD_LEN + SWS_PYB_REQUEST_FIXED;
    for (i = 0; i < SWS_PYB_STRINGS; i++) {
        if (strings[i].len > SWS_PYB_MAX_STRING) {
            goto too_big;
        }
        len += sws_pyb_str_size(&strings[i]);
    }
    if (lcf->cgi.pass_request_headers) {
        for (i = 0; i < hs->nelts; i++) {
            if (h[i].hash == 0) {
                continue;           /* deleted */
            }
            if (h[i].name.len > SWS_PYB_MAX_STRING || h[i].value.len > SWS_PYB_MAX_STRING) {
                goto too_big;
            }
            len += sws_pyb_str_size(&h[i].name) + sws_pyb_str_size(&h[i].value);
            nfields++;
        }
    }
    if (nfields > SWS_PYB_MAX_FIELDS || len - SWS_PYB_HEAD_LEN > SWS_PYB_MAX_HEAD) {
        goto too_big;
    }
    body = mode == SWS_UPSTREAM_BODY_BUFFERED ? sws_http_upstream_body_length(u) : 0;
    if (body > (off_t) UINT32_MAX) {
        goto too_big;
    }
    /* the buffered body's BODY header and the BODY_END after it */
    start = sws_pnalloc(pool, len + 2 * SWS_PYB_HEAD_LEN);
    if (start == NULL) {
        return SWS_ERROR;
    }
    clen = mode == SWS_UPSTREAM_BODY_NONE ? 0 : sws_http_upstream_body_length(u);
    ctx->upgrade_asked = sws_http_upstream_upgrade_allowed(u) != 0;
    p = sws_pyb_put_head(start, SWS_PYB_REQUEST,
                         (mode == SWS_UPSTREAM_BODY_NONE ? 0 : SWS_PYB_REQUEST_BODY)
                         | (ctx->upgrade_asked ? SWS_PYB_REQUEST_UPGRADE : 0)
                         | SWS_PYB_REQUEST_FILE,     /* passed descriptors are taken */
                         (uint32_t) (len - SWS_PYB_HEAD_LEN));
    *p++ = (u_char) (sws_http_version(r) / 1000);
    *p++ = (u_char) (sws_http_version(r) % 1000);
    *p++ = sws_http_scheme(r)->len == 5 ? SWS_PYB_HTTPS : 0;    /* "https" */
    *p++ = 0;
    p = sws_pyb_put16(p, client_port);
    p = sws_pyb_put16(p, server_port);
    p = sws_pyb_put64(p, clen < 0 ? UINT64_MAX : (uint64_t) clen);
    p = sws_pyb_put16(p, (unsigned) nfields);
    p = sws_pyb_put16(p, 0);
    for (i = 0; i < SWS_PYB_STRINGS; i++) {
        p = sws_pyb_put_str(p, strings[i].data, strings[i].len);
    }
    for (i = 0; nfields && i < hs->nelts; i++) {
        if (h[i].hash) {
            p = sws_pyb_put_str(p, h[i].name.data, h[i].name.len);
            p = sws_pyb_put_str(p, h[i].value.data, h[i].value.len);
        }
    }
    if (mode != SWS_UPSTREAM_BODY_BUFFERED) {
        /* none, or streamed through sws_pyb_frame_body */
        return sws_http_cgi_request_chain(u, start, p, out);
    }
    if (body) {
        p = sws_pyb_put_head(p, SWS_PYB_BODY, 0, (uint32_t) body);
    }
    /* the head (and the BODY header), the body's buffers, BODY_END */
    if (sws_http_cgi_request_chain(u, start, p, out) != SWS_OK) {
        return SWS_ERROR;
    }
    for (tail = out; *tail; tail = &(*tail)->next) { /* void */ }
    end = sws_alloc_chain_link(pool);
    if (end == NULL) {
        return SWS_ERROR;
    }
    end->buf = sws_calloc_buf(pool);
    if (end->buf == NULL) {
        return SWS_ERROR;
    }
    end->buf->start = end->buf->pos = p;
    end->buf->end = end->buf->last = sws_pyb_put_head(p, SWS_PYB_BODY_END, 0, 0);
    end->buf->temporary = 1;
    end->next = NULL;
    *tail = end;
    return SWS_OK;

too_big:
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                  "python bridge: the request is too big for the framing");
    return SWS_ERROR;
}

/* A streamed body's piece: a BODY header before it, BODY_END after the last. */
static void
sws_pyb_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last)
{
    size_t n = (size_t) (b->last - b->pos);

    (void) r;
    (void) data;
    if (n) {
        b->pos -= SWS_PYB_HEAD_LEN;
        sws_pyb_put_head(b->pos, SWS_PYB_BODY, 0, (uint32_t) n);
    }
    if (last) {
        b->last = sws_pyb_put_head(b->last, SWS_PYB_BODY_END, 0, 0);
    }
}

/* ---- the response ---- */

static sws_int_t
sws_pyb_invalid(sws_pyb_ctx_t *ctx, const char *why)
{
    const sws_str_t *peer = sws_http_upstream_peer_name(ctx->u);

    sws_log_error(SWS_LOG_ERR, sws_http_log(ctx->r), 0,
                  "upstream %.*s sent an invalid python bridge response: %s",
                  (int) peer->len, peer->data, why);
    return SWS_UPSTREAM_INVALID;
}

static void
sws_pyb_reinit(sws_http_request_t *r, void *data)
{
    sws_pyb_ctx_t *ctx = data;

    (void) r;
    sws_pyb_reader_init(&ctx->reader, SWS_PYB_TO_SERVER);
    ctx->length = -1;
    ctx->received = 0;
    ctx->upgrade.len = 0;
    ctx->nfile = 0;
    ctx->file_body = 0;
}

/* One field of the RESPONSE (copied: the head buffer is reused). */
static sws_int_t
sws_pyb_field(sws_pyb_ctx_t *ctx, const sws_pyb_str_t *n, const sws_pyb_str_t *v)
{
    sws_pool_t         *pool = sws_http_pool(ctx->r);
    sws_str_t           name, value;
    u_char             *lc;
    off_t               len;

    name.len = n->len;
    value.len = v->len;
    name.data = sws_pnalloc(pool, name.len * 2 + value.len + 1);
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
    value.data[value.len] = '\0';

    switch (name.len) {
    case 7:
        if (memcmp(lc, "upgrade", 7) == 0) {
            ctx->upgrade = value;         /* the client gets it with a 101 */
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    case 10:
        if (memcmp(lc, "connection", 10) == 0 || memcmp(lc, "keep-alive", 10) == 0) {
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    case 14:
        if (memcmp(lc, "content-length", 14) == 0) {
            len = sws_http_parse_content_length(value.data, value.len);
            if (len < 0 || (ctx->length >= 0 && len != ctx->length)) {
                return sws_pyb_invalid(ctx, "an invalid \"Content-Length\" field");
            }
            ctx->length = len;
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    case 17:
        if (memcmp(lc, "transfer-encoding", 17) == 0) {
            /* the frames delimit the body */
            return sws_http_upstream_header_received(ctx->u, &name, &value);
        }
        break;
    }
    return sws_http_upstream_header(ctx->u, &name, lc, &value);
}

static sws_int_t
sws_pyb_process_header(sws_http_request_t *r, void *data, sws_buf_t *b)
{
    sws_pyb_ctx_t       *ctx = data;
    sws_pyb_reader_t     rd;
    sws_pyb_response_t   rs;
    sws_pyb_str_t        name, value;
    const u_char        *pos = b->pos, *piece, *cur;
    size_t               n;
    sws_int_t            rc;
    sws_uint_t           status;

    /* The whole RESPONSE frame at once: it must fit the head buffer
     * (python_bridge_buffer_size). */
    if ((size_t) (b->last - b->pos) < SWS_PYB_HEAD_LEN) {
        return SWS_AGAIN;
    }
    sws_pyb_reader_init(&rd, SWS_PYB_TO_SERVER);
    if (sws_pyb_read(&rd, &pos, b->last, &piece, &n) != SWS_PYB_FRAME
        || rd.type != SWS_PYB_RESPONSE)
    {
        return sws_pyb_invalid(ctx, "no RESPONSE frame first");
    }
    if ((size_t) (b->last - pos) < rd.len) {
        return SWS_AGAIN;
    }
    if (sws_pyb_response_decode(pos, rd.len, &rs) != 0) {
        return sws_pyb_invalid(ctx, "a malformed RESPONSE frame");
    }
    b->pos = (u_char *) pos + rd.len;
    for (cur = rs.fields; sws_pyb_field_next(&cur, rs.end, &name, &value); ) {
        rc = sws_pyb_field(ctx, &name, &value);
        if (rc != SWS_OK) {
            return rc;
        }
    }
    status = rs.status;
    if (status == SWS_HTTP_SWITCHING_PROTOCOLS) {
        static const sws_str_t  upgrade = sws_string("Upgrade");

        if (!ctx->upgrade_asked || ctx->upgrade.len == 0) {
            return sws_pyb_invalid(ctx, "a 101 to a request that asked for no upgrade");
        }
        sws_http_set_status(r, status);
        if (sws_http_header_out_add(r, &upgrade, &ctx->upgrade) == NULL) {
            return SWS_ERROR;
        }
        /* from here on, the bytes of both sides as they are */
        sws_http_upstream_set_upgrade(ctx->u);
        return SWS_OK;
    }
    if (status < 200) {
        return sws_pyb_invalid(ctx, "an interim status");
    }
    sws_http_set_status(r, status);
    if (status == 204 || status == 304) {
        sws_http_set_content_length(r, -1);
    } else {
        sws_http_set_content_length(r, ctx->length);
    }
    if (status == 204 || status == 304 || sws_http_method(r) == SWS_HTTP_HEAD) {
        /* a length that describes a body not sent (a HEAD's: the GET's) */
        ctx->length = -1;
    }
    return SWS_OK;
}

/* FILE's payload is complete: the descriptor that came with it is the
 * body (from scalwsd's own sendfile), checked against the file. */
static sws_int_t
sws_pyb_file(sws_pyb_ctx_t *ctx, sws_http_upstream_input_t *in)
{
    uint64_t     offset, length;
    struct stat  st;
    sws_int_t    rc;
    int          fd;

    if (sws_pyb_file_decode(ctx->file, sizeof(ctx->file), &offset, &length) != 0) {
        return sws_pyb_invalid(ctx, "a malformed FILE frame");
    }
    fd = sws_http_upstream_take_fd(ctx->u);
    if (fd == -1) {
        return sws_pyb_invalid(ctx, "a FILE frame without a descriptor");
    }
    if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)
        || offset + length > (uint64_t) st.st_size)
    {
        (void) close(fd);
        return sws_pyb_invalid(ctx, "a FILE frame of no regular file, or past its end");
    }
    ctx->received += (off_t) length;
    if (ctx->length >= 0 && ctx->received > ctx->length) {
        (void) close(fd);
        return sws_pyb_invalid(ctx, "more data than its Content-Length");
    }
    ctx->file_body = 1;
    rc = sws_http_upstream_body_file(ctx->u, in, fd, (off_t) offset, (off_t) length);
    if (rc == SWS_DECLINED) {
        return sws_pyb_invalid(ctx, "a FILE frame while the response goes to a temporary "
                                    "file");
    }
    return rc;
}

/* DATA frames decoded in place (or one FILE frame), up to END. */
static sws_int_t
sws_pyb_input_filter(sws_http_request_t *r, void *data, sws_http_upstream_input_t *in)
{
    sws_pyb_ctx_t  *ctx = data;
    const u_char   *pos = in->pos, *piece;
    size_t          n;
    int             rc;

    (void) r;
    for ( ;; ) {
        rc = sws_pyb_read(&ctx->reader, &pos, in->last, &piece, &n);
        in->pos = (u_char *) pos;
        switch (rc) {
        case SWS_PYB_AGAIN:
            if (in->eof) {
                sws_pyb_invalid(ctx, "the connection closed before END");
                return SWS_ERROR;
            }
            return SWS_OK;
        case SWS_PYB_PIECE:
            if (ctx->reader.type == SWS_PYB_FILE) {
                memcpy(ctx->file + ctx->nfile, piece, n);   /* the reader bounds n */
                ctx->nfile += (unsigned) n;
                if (ctx->reader.rest == 0) {
                    rc = (int) sws_pyb_file(ctx, in);
                    if (rc != SWS_OK) {
                        return rc;
                    }
                }
                break;
            }
            ctx->received += (off_t) n;
            if (ctx->length >= 0 && ctx->received > ctx->length) {
                return sws_pyb_invalid(ctx, "more data than its Content-Length");
            }
            memmove(in->out, piece, n);
            in->out += n;
            break;
        case SWS_PYB_FRAME:
            if (ctx->reader.type == SWS_PYB_DATA) {
                if (ctx->file_body) {
                    return sws_pyb_invalid(ctx, "a DATA frame after FILE");
                }
                break;
            }
            if (ctx->reader.type == SWS_PYB_FILE) {
                if (ctx->file_body || ctx->received) {
                    return sws_pyb_invalid(ctx, "a FILE frame after the body began");
                }
                ctx->nfile = 0;
                break;
            }
            if (ctx->reader.type != SWS_PYB_END) {
                return sws_pyb_invalid(ctx, "a frame out of place");
            }
            if (ctx->length >= 0 && ctx->received != ctx->length) {
                return sws_pyb_invalid(ctx, "less data than its Content-Length");
            }
            sws_http_upstream_set_keepalive(ctx->u,
                                            (ctx->reader.flags & SWS_PYB_END_KEEP) != 0);
            return SWS_DONE;
        default:
            return sws_pyb_invalid(ctx, "an invalid frame");
        }
    }
}

static const sws_http_upstream_proto_t sws_pyb_proto = {
    .name = "python bridge",
    .create_request = sws_pyb_create_request,
    .reinit = sws_pyb_reinit,
    .process_header = sws_pyb_process_header,
    .input_filter = sws_pyb_input_filter,
    .frame_head = SWS_PYB_HEAD_LEN,
    .frame_tail = SWS_PYB_HEAD_LEN,
    .frame_body = sws_pyb_frame_body,
};

/* ---- the content handler ---- */

static sws_int_t
sws_pyb_handler(sws_http_request_t *r)
{
    sws_pyb_loc_conf_t   *lcf = sws_http_loc_conf(r, &sws_module);
    sws_http_upstream_t  *u;
    sws_pyb_ctx_t        *ctx;
    sws_int_t             rc;

    if (lcf->cgi.pass == NULL) {
        rc = sws_http_upstream_cache_hit(r);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    ctx = sws_pcalloc(sws_http_pool(r), sizeof(sws_pyb_ctx_t));
    if (ctx == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    u = sws_http_upstream_create(r, &sws_pyb_proto, ctx, lcf->cgi.upstream);
    if (u == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    ctx->r = r;
    ctx->u = u;
    ctx->conf = lcf;
    sws_pyb_reinit(r, ctx);
    rc = sws_http_cgi_target(r, u, &lcf->cgi, SWS_PYB_DEFAULT_PORT);
    if (rc != SWS_OK) {
        return rc;
    }
    return sws_http_upstream_start(r);
}

/* ---- configuration ---- */

sws_int_t
sws_python_bridge_conf_init(sws_conf_t *cf, sws_pyb_loc_conf_t *lcf)
{
    return sws_http_cgi_conf_init(cf, &lcf->cgi);
}

void *
sws_python_bridge_create_loc_conf(sws_conf_t *cf)
{
    sws_pyb_loc_conf_t *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_pyb_loc_conf_t));
    if (lcf == NULL || sws_python_bridge_conf_init(cf, lcf) != SWS_OK) {
        return NULL;
    }
    return lcf;
}

static sws_http_format_t *
sws_pyb_format(sws_conf_t *cf, const char *text)
{
    sws_str_t    s;
    const char  *err;

    s.data = (u_char *) text;
    s.len = strlen(text);
    return sws_http_format_compile(sws_conf_pool(cf), &s, SWS_HTTP_ESCAPE_NONE, &err);
}

char *
sws_python_bridge_conf_merge(sws_conf_t *cf, sws_pyb_loc_conf_t *prev, sws_pyb_loc_conf_t *conf)
{
    char *rv;

    rv = sws_http_upstream_conf_merge(cf, prev->cgi.upstream, conf->cgi.upstream);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    sws_conf_merge_value(conf->cgi.pass_request_headers, prev->cgi.pass_request_headers, 1);
    if (conf->cgi.pass || sws_http_upstream_conf_has_target(conf->cgi.upstream)) {
        conf->addrs = sws_pyb_format(cf, "$remote_port $server_port $server_addr");
        if (conf->addrs == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

char *
sws_python_bridge_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    return sws_python_bridge_conf_merge(cf, parent, child);
}

char *
sws_python_bridge_set_pass(sws_conf_t *cf, const sws_command_t *cmd, sws_pyb_loc_conf_t *lcf,
    const sws_str_t *addr)
{
    char *rv;

    rv = sws_http_cgi_pass(cf, cmd, &lcf->cgi, addr, SWS_PYB_DEFAULT_PORT, sws_pyb_handler);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    /* wsgi.file_wrapper: the runner passes the file (REQUEST_FILE) */
    sws_http_upstream_conf_set_recv_fds(lcf->cgi.upstream);
    if (lcf->cgi.pass != NULL) {
        return rv;                     /* an address from variables: no group */
    }
    /* an application under uvicorn or gunicorn speaks HTTP: refused */
    if (sws_app_expect_protocol(cf, sws_http_upstream_name(lcf->cgi.upstream), "python-bridge")
        != SWS_OK)
    {
        return SWS_CONF_ERROR;
    }
    return SWS_CONF_OK;
}

char *
sws_python_bridge_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    return sws_python_bridge_set_pass(cf, cmd, conf, sws_conf_arg(cf, 1));
}
