"""The subrequest API of the SDK, from a third-party module built against
include/scalws: "tsub URI LIMIT;" answers with what a subrequest to URI
gave (status, type, a header, the body captured up to LIMIT bytes, whether
it was cut); "tsub_self;" starts a subrequest to its own URI, which does
the same, until the nesting limit says "subrequests cycle"."""
import pytest

import swsharness as h

SOURCE = r"""
#include <stdio.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct { sws_str_t uri; size_t limit; sws_int_t self; } tsub_conf_t;

static const sws_str_t text = sws_string("text/plain");

static void
tsub_done(sws_http_request_t *r, sws_http_request_t *sr, void *data)
{
    sws_str_t                body, out;
    const sws_str_t         *type = sws_http_content_type(sr);
    const sws_http_header_t *x = sws_http_header_out(sr, "X-Origin", 8);
    sws_int_t                rc = sws_http_subrequest_body(sr, &body);
    u_char                  *p;

    (void) data;
    if (sws_http_parent(sr) != r || sws_http_parent(r) == sr) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    if (((tsub_conf_t *) sws_http_loc_conf(r, &sws_module))->self) {
        /* each level passes its subrequest's status up */
        sws_http_finalize(r, (sws_int_t) sws_http_status(sr));
        return;
    }
    p = sws_pnalloc(sws_http_pool(r), 200 + body.len);
    if (p == NULL) {
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return;
    }
    out.data = p;
    out.len = (size_t) snprintf((char *) p, 200, "status=%u type=%.*s origin=%.*s cut=%d "
                                "sent=%d body=", (unsigned) sws_http_status(sr),
                                (int) type->len, type->data,
                                x ? (int) x->value.len : 1, x ? x->value.data : (u_char *) "-",
                                rc == SWS_DECLINED, sws_http_header_sent(sr));
    sws_memcpy(p + out.len, body.data, body.len);
    out.len += body.len;
    sws_http_finalize(r, sws_http_send_response(r, 200, &text, &out));
}

static sws_int_t
tsub_handler(sws_http_request_t *r)
{
    tsub_conf_t                *cf = sws_http_loc_conf(r, &sws_module);
    sws_http_subrequest_conf_t  sc;

    sws_memzero(&sc, sizeof(sc));
    sc.uri = cf->self ? *sws_http_uri(r) : cf->uri;
    sc.flags = SWS_HTTP_SUBREQUEST_CAPTURE;
    sc.body_limit = cf->limit;
    sc.done = tsub_done;
    if (sws_http_subrequest(r, &sc, NULL) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_DONE;
}

static char *
tsub_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    tsub_conf_t *c = conf;

    (void) cmd;
    if (sws_conf_nargs(cf) == 1) {
        c->self = 1;
    } else {
        c->uri = *sws_conf_arg(cf, 1);
        c->limit = (size_t) atoi((char *) sws_conf_arg(cf, 2)->data);
    }
    return sws_http_set_content_handler(cf, tsub_handler, "tsub") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
tsub_create(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(tsub_conf_t));
}

static const sws_command_t tsub_commands[] = {
    { "tsub", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE2, tsub_set, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "tsub_self", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, tsub_set, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tsub",
    .commands = tsub_commands,
    .create_loc_conf = tsub_create,
};
"""


@pytest.fixture(scope="module")
def tsub(tmp_path_factory):
    return h.build_module(tmp_path_factory.mktemp("tsub"), "tsub", SOURCE)


@pytest.fixture
def srv(tmp_path, tsub, origin):
    o = origin("up")
    s = h.launch(tmp_path, ports=2, load="load_module %s;" % tsub,
                 files={"html/f.txt": "0123456789" * 10, "html/g.txt": "gz " * 100},
                 server="""
        location = /file { tsub /f.txt 1000; }
        location = /gz { tsub /g.txt 1000; }
        location = /g.txt { gzip on; gzip_min_length 1; gzip_types text/plain; }
        location = /file-cut { tsub /f.txt 25; }
        location = /up { tsub /internal-up 100000; }
        location = /missing { tsub /nothing-here 100; }
        location = /ret { tsub /r 100; }
        location = /r { internal; return 302 /elsewhere; }
        location /internal-up { internal; proxy_pass http://%s/len/3000; }
        location /self { tsub_self; }
        location = /nothing-here { internal; return 404; }
    """ % o.addr, servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
        location = /file { tsub /f.txt 1000; }
    }""")
    yield s
    s.stop()


def test_capture(srv):
    r = h.curl(srv.url("/file"))
    assert r.body == b"status=200 type=text/plain origin=- cut=0 sent=1 body=" + \
        b"0123456789" * 10, r
    r = h.curl(srv.url("/file-cut"))                 # a file's body, cut at the limit
    assert r.body == b"status=200 type=text/plain origin=- cut=1 sent=1 body=" + \
        b"0123456789" * 2 + b"01234", r
    r = h.curl(srv.url("/up"))                       # a proxied body, its headers
    head, body = r.body.split(b"body=", 1)
    assert head.startswith(b"status=200 ") and b"origin=up cut=0" in head, head
    assert len(body) == 3000
    r = h.curl(srv.url("/missing"))                  # an internal location's 404 page
    assert r.body.startswith(b"status=404 type=text/html origin=- cut=1 sent=1 body=<html>"), r
    assert len(r.body.split(b"body=", 1)[1]) == 100          # the page, cut at 100
    r = h.curl(srv.url("/ret"))
    assert r.body.startswith(b"status=302 "), r
    # the client's Accept-Encoding, Range and conditions are not the
    # subrequest's: its body is the file as it is
    r = h.curl(srv.url("/gz"), headers=["Accept-Encoding: gzip", "Range: bytes=0-3"])
    assert r.body == b"status=200 type=text/plain origin=- cut=0 sent=1 body=" + b"gz " * 100, r
    assert h.curl(srv.url("/g.txt"), headers=["Accept-Encoding: gzip"]).header(
        "Content-Encoding") == "gzip"                  # (the client's own request is)
    # an HTTP/2 client's request: the same
    r = h.curl("http://127.0.0.1:%d/file" % srv.ports[1], prior_knowledge=True)
    assert r.body.endswith(b"body=" + b"0123456789" * 10), r
    # the client's location stays out of reach of clients
    assert h.curl(srv.url("/nothing-here")).status == 404


def test_nesting_limit(srv):
    r = h.curl(srv.url("/self"))
    assert r.status == 500, r
    log = srv.error_log()
    assert log.count('subrequests cycle while processing "/self"') == 1, log[-1500:]
    assert h.curl(srv.url("/file")).status == 200     # and the server goes on
