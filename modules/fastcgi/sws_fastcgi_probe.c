/*
 * Active health probes in FastCGI (health_check in an upstream { } block
 * that a fastcgi_pass names): a responder request for the probe's uri
 * (SCRIPT_NAME, SCRIPT_FILENAME and REQUEST_URI all the uri, GET, no
 * body), passed by a complete response head whose status is 2xx or 3xx.
 * With PHP-FPM: "ping.path = /ping" in the pool and
 * "health_check uri=/ping": the pool's own answer, which needs a free
 * child, so a pool whose children are all stuck fails its probes.
 *
 * The judge keeps no state between calls: what came so far (2 kB at most)
 * is parsed again from its start each time, and consumed once judged.
 */
#include "sws_fastcgi.h"

static const struct {
    const char *name;
    int         uri;       /* the value is the probe's uri */
    const char *value;
} sws_fcgi_probe_params[] = {
    { "SCRIPT_NAME", 1, NULL },
    { "SCRIPT_FILENAME", 1, NULL },
    { "REQUEST_URI", 1, NULL },
    { "DOCUMENT_URI", 1, NULL },
    { "REQUEST_METHOD", 0, "GET" },
    { "QUERY_STRING", 0, "" },
    { "SERVER_PROTOCOL", 0, "HTTP/1.1" },
    { "GATEWAY_INTERFACE", 0, "CGI/1.1" },
    { "SERVER_SOFTWARE", 0, "scalws-health-check" },
    { "REMOTE_ADDR", 0, "127.0.0.1" },
    { NULL, 0, NULL }
};

static sws_int_t
sws_fcgi_probe_create(void *data, const sws_str_t *uri, const sws_str_t *host, sws_buf_t *out)
{
    size_t  plen = 0, vlen, i;
    u_char *p;

    (void) data;
    (void) host;
    for (i = 0; sws_fcgi_probe_params[i].name; i++) {
        vlen = sws_fcgi_probe_params[i].uri ? uri->len : strlen(sws_fcgi_probe_params[i].value);
        plen += sws_fcgi_pair_len(strlen(sws_fcgi_probe_params[i].name), vlen);
    }
    if (plen > SWS_FCGI_MAX_CONTENT
        || 16 + 3 * SWS_FCGI_HEADER_LEN + plen > (size_t) (out->end - out->last))
    {
        return SWS_ERROR;
    }
    p = sws_fcgi_write_begin(out->last, 0);
    p = sws_fcgi_write_header(p, SWS_FCGI_PARAMS, plen, 0);
    for (i = 0; sws_fcgi_probe_params[i].name; i++) {
        const char *n = sws_fcgi_probe_params[i].name;

        if (sws_fcgi_probe_params[i].uri) {
            p = sws_fcgi_write_pair(p, (const u_char *) n, strlen(n), uri->data, uri->len);
        } else {
            p = sws_fcgi_write_pair(p, (const u_char *) n, strlen(n),
                                    (const u_char *) sws_fcgi_probe_params[i].value,
                                    strlen(sws_fcgi_probe_params[i].value));
        }
    }
    p = sws_fcgi_write_header(p, SWS_FCGI_PARAMS, 0, 0);
    out->last = sws_fcgi_write_header(p, SWS_FCGI_STDIN, 0, 0);
    return SWS_OK;
}

/* The status of a complete CGI head in [p, p + n): 0 while incomplete,
 * -1 if it is malformed. */
static sws_int_t
sws_fcgi_probe_status(const u_char *p, size_t n)
{
    const u_char *end = p + n, *nl;
    sws_int_t     status = 200;
    size_t        len;

    for ( ;; ) {
        nl = memchr(p, '\n', (size_t) (end - p));
        if (nl == NULL) {
            return 0;
        }
        len = (size_t) (nl - p);
        if (len && p[len - 1] == '\r') {
            len--;
        }
        if (len == 0) {
            return status;
        }
        if (memchr(p, ':', len) == NULL) {
            return -1;
        }
        if (len >= 11 && sws_strncasecmp((u_char *) p, (u_char *) "status:", 7) == 0) {
            const u_char *v = p + 7;
            while (v < p + len && *v == ' ') {
                v++;
            }
            if (p + len - v < 3) {
                return -1;
            }
            status = sws_atoi((u_char *) v, 3);
            if (status < 100) {
                return -1;
            }
        }
        p = nl + 1;
    }
}

static sws_int_t
sws_fcgi_probe_judge(void *data, sws_buf_t *in, int eof, const char **why)
{
    sws_fcgi_parser_t  parser;
    sws_fcgi_piece_t   piece;
    u_char             head[2048], *pos = in->pos;
    size_t             n = 0;
    sws_int_t          rc, status = 0;

    (void) data;
    sws_fcgi_parser_init(&parser);
    for ( ;; ) {
        rc = sws_fcgi_parse(&parser, &pos, in->last, &piece);
        if (rc == SWS_FCGI_DATA && piece.type == SWS_FCGI_STDOUT) {
            size_t k = sws_min(piece.len, sizeof(head) - n);
            memcpy(head + n, piece.data, k);
            n += k;
            continue;
        }
        if (rc == SWS_FCGI_DATA || rc == SWS_FCGI_STDOUT_END) {
            continue;
        }
        break;
    }
    if (rc == SWS_FCGI_BAD) {
        *why = "invalid FastCGI records";
        in->pos = in->last;
        return SWS_DECLINED;
    }
    status = sws_fcgi_probe_status(head, n);
    if (status == 0) {
        *why = "no response header";
        if (rc == SWS_FCGI_END || eof || n == sizeof(head)) {
            in->pos = in->last;
            return SWS_DECLINED;
        }
        return SWS_AGAIN;
    }
    in->pos = in->last;
    if (status < 0) {
        *why = "invalid response header";
        return SWS_DECLINED;
    }
    if (status >= 400) {
        *why = "bad status";
        return SWS_DECLINED;
    }
    return SWS_OK;
}

const sws_http_upstream_probe_t sws_fcgi_probe = {
    .name = "fastcgi",
    .create = sws_fcgi_probe_create,
    .judge = sws_fcgi_probe_judge,
};
