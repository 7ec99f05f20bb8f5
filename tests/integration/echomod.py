"""
A small third-party module for the HTTP/2 tests, built against the SDK:
"echo;" in a location answers with the request body it read
(sws_http_read_body) or, without a body, with what the request looked like
(method, URI, args, host, scheme, version, headers in order). "echo_discard;"
drops the body (sws_http_discard_body) and answers "discarded".
"echo_copy;" answers with the body copied out of its chain (memory or a
temporary file) with sws_http_request_body_copy, in two pieces.
"echo_sendfile;" answers "sendfile=1" or "sendfile=0": what
sws_http_sendfile_enabled says for the request.
"""
from pathlib import Path

import swsharness as h

SOURCE = r"""
#include <scalws/scalws.h>

extern sws_module_t sws_module;

/* 0 none, 1 echo, 2 discard, 3 copy, 4 sendfile */
typedef struct { sws_int_t mode; } echo_conf_t;

static const sws_str_t octets = sws_string("application/octet-stream");
static const sws_str_t text = sws_string("text/plain");
static const sws_str_t xlen = sws_string("X-Body-Length");

static void
echo_body_done(sws_http_request_t *r)
{
    sws_chain_t *cl, *body = sws_http_request_body(r);
    off_t        n = sws_chain_size(body);
    sws_str_t   *v = sws_palloc(sws_http_pool(r), sizeof(sws_str_t));
    u_char      *p = sws_pnalloc(sws_http_pool(r), 24);
    sws_int_t    rc;

    if (v == NULL || p == NULL) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    v->data = p;
    v->len = sws_sprint_uint(p, (uint64_t) n) - p;
    sws_http_header_out_add(r, &xlen, v);
    sws_http_set_status(r, SWS_HTTP_OK);
    sws_http_set_content_type(r, &octets);
    sws_http_set_content_length(r, n);
    rc = sws_http_send_header(r);
    if (rc != SWS_OK || sws_http_header_only(r)) {
        sws_http_finalize(r, rc);
        return;
    }
    for (cl = body; cl; cl = cl->next) {
        cl->buf->last_buf = 0;
    }
    if (body) {
        rc = sws_http_output(r, body);
        if (rc == SWS_ERROR) {
            sws_http_finalize(r, rc);
            return;
        }
    }
    sws_http_finalize(r, sws_http_send_special(r, 1));
}

static void
echo_copy_done(sws_http_request_t *r)
{
    off_t      n = sws_chain_size(sws_http_request_body(r));
    size_t     half = (size_t) n / 2;
    sws_str_t  out;

    out.data = sws_pnalloc(sws_http_pool(r), (size_t) n + 1);
    if (out.data == NULL
        || sws_http_request_body_copy(r, 0, out.data, half) != (ssize_t) half
        /* asks for one byte more than there is */
        || sws_http_request_body_copy(r, (off_t) half, out.data + half, (size_t) n + 1 - half)
           != (ssize_t) ((size_t) n - half)
        || sws_http_request_body_copy(r, n, out.data, 1) != 0)
    {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    out.len = (size_t) n;
    sws_http_finalize(r, sws_http_send_response(r, SWS_HTTP_OK, &octets, &out));
}

static sws_int_t
echo_request(sws_http_request_t *r)
{
    const sws_array_t *hs = sws_http_headers_in(r);
    sws_http_header_t *hd = hs->elts;
    sws_str_t          out;
    size_t             len = 256;
    sws_uint_t         i;
    u_char            *p, *last;

    for (i = 0; i < hs->nelts; i++) {
        len += hd[i].name.len + hd[i].value.len + 4;
    }
    len += sws_http_uri(r)->len + sws_http_args(r)->len + sws_http_host(r)->len
           + sws_http_method_name(r)->len;
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    last = p + len;
    out.data = p;
    p = sws_slprintf(p, last, "%.*s %.*s ?%.*s host=%.*s scheme=%.*s version=%lu\n",
                     (int) sws_http_method_name(r)->len, sws_http_method_name(r)->data,
                     (int) sws_http_uri(r)->len, sws_http_uri(r)->data,
                     (int) sws_http_args(r)->len, sws_http_args(r)->data,
                     (int) sws_http_host(r)->len, sws_http_host(r)->data,
                     (int) sws_http_scheme(r)->len, sws_http_scheme(r)->data,
                     (unsigned long) sws_http_version(r));
    for (i = 0; i < hs->nelts; i++) {
        p = sws_slprintf(p, last, "%.*s: %.*s\n", (int) hd[i].name.len, hd[i].name.data,
                         (int) hd[i].value.len, hd[i].value.data);
    }
    out.len = p - out.data;
    return sws_http_send_response(r, SWS_HTTP_OK, &text, &out);
}

static sws_int_t
echo_handler(sws_http_request_t *r)
{
    echo_conf_t *c = sws_http_loc_conf(r, &sws_module);
    static const sws_str_t discarded = sws_string("discarded");
    static const sws_str_t sf[2] = { sws_string("sendfile=0"), sws_string("sendfile=1") };
    sws_int_t    rc;

    if (c->mode == 4) {
        return sws_http_send_response(r, SWS_HTTP_OK, &text, &sf[sws_http_sendfile_enabled(r)]);
    }
    if (c->mode == 2) {
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK) {
            return rc;
        }
        return sws_http_send_response(r, SWS_HTTP_OK, &text, &discarded);
    }
    if (!sws_http_has_body(r)) {
        return echo_request(r);
    }
    rc = sws_http_read_body(r, c->mode == 3 ? echo_copy_done : echo_body_done);
    if (rc != SWS_OK) {
        return rc;
    }
    return SWS_DONE;
}

static void *
create_loc(sws_conf_t *cf)
{
    echo_conf_t *c = sws_pcalloc(sws_conf_pool(cf), sizeof(echo_conf_t));
    return c;
}

static char *
set_echo(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    echo_conf_t *c = conf;
    c->mode = cmd->offset;
    return sws_http_set_content_handler(cf, echo_handler, "echo") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static const sws_command_t commands[] = {
    { "echo", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_echo, SWS_HTTP_LOC_CONF_OFFSET, 1, NULL },
    { "echo_discard", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_echo, SWS_HTTP_LOC_CONF_OFFSET,
      2, NULL },
    { "echo_copy", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_echo, SWS_HTTP_LOC_CONF_OFFSET,
      3, NULL },
    { "echo_sendfile", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_echo, SWS_HTTP_LOC_CONF_OFFSET,
      4, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "echo",
    .commands = commands,
    .create_loc_conf = create_loc,
};
"""


def build(directory):
    """Build echo.so in directory; returns the "load_module ...;" line."""
    so = h.build_module(Path(directory), "echo", SOURCE)
    return "load_module %s;" % so
