"""SWS_HTTP_SUBREQUEST_OUTPUT from a third-party module built against
include/scalws: "tcat URI1 URI2;" answers "<", then the bodies of an
OUTPUT subrequest to URI1 and of one to URI2 started from the first's done
(a second one while the first runs is refused), finalized at once: the
core holds the response open until the last has ended and then ends it
(chunked over HTTP/1.1, END_STREAM over HTTP/2)."""
import pytest

import swsharness as h

SOURCE = r"""
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct { sws_str_t uri[2]; } tcat_conf_t;

static void
tcat_done(sws_http_request_t *r, sws_http_request_t *sr, void *data)
{
    tcat_conf_t                *cf = sws_http_loc_conf(r, &sws_module);
    sws_http_subrequest_conf_t  sc;

    if (data != NULL) {
        return;                             /* the second: the core ends r */
    }
    sws_memzero(&sc, sizeof(sc));
    sc.uri = cf->uri[1];
    sc.flags = SWS_HTTP_SUBREQUEST_OUTPUT;
    sc.done = tcat_done;
    sc.data = r;
    if (sws_http_subrequest(r, &sc, NULL) != SWS_OK) {
        sws_http_finalize(r, SWS_ERROR);
    }
}

static sws_int_t
tcat_handler(sws_http_request_t *r)
{
    static const sws_str_t      text = sws_string("text/plain");
    tcat_conf_t                *cf = sws_http_loc_conf(r, &sws_module);
    sws_http_subrequest_conf_t  sc;
    sws_buf_t                  *b;
    sws_chain_t                 out;

    sws_http_set_status(r, 200);
    sws_http_set_content_type(r, &text);
    if (sws_http_send_header(r) != SWS_OK) {
        return SWS_ERROR;
    }
    b = sws_create_temp_buf(sws_http_pool(r), 1);
    if (b == NULL) {
        return SWS_ERROR;
    }
    *b->last++ = '<';
    out.buf = b;
    out.next = NULL;
    if (sws_http_output(r, &out) == SWS_ERROR) {
        return SWS_ERROR;
    }
    sws_memzero(&sc, sizeof(sc));
    sc.uri = cf->uri[0];
    sc.flags = SWS_HTTP_SUBREQUEST_OUTPUT;
    sc.done = tcat_done;
    if (sws_http_subrequest(r, &sc, NULL) != SWS_OK) {
        return SWS_ERROR;
    }
    /* one at a time: a second while the first runs is refused */
    sc.done = NULL;
    if (sws_http_subrequest(r, &sc, NULL) != SWS_ERROR) {
        return SWS_ERROR;
    }
    return SWS_OK;          /* finalized now: the response waits for them */
}

static char *
tcat_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    tcat_conf_t *c = conf;

    (void) cmd;
    c->uri[0] = *sws_conf_arg(cf, 1);
    c->uri[1] = *sws_conf_arg(cf, 2);
    return sws_http_set_content_handler(cf, tcat_handler, "tcat") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static void *
tcat_create(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(tcat_conf_t));
}

static const sws_command_t tcat_commands[] = {
    { "tcat", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE2, tcat_set, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tcat",
    .commands = tcat_commands,
    .create_loc_conf = tcat_create,
};
"""

A = b"a file's bytes\n" * 5000


@pytest.fixture(scope="module")
def tcat(tmp_path_factory):
    return h.build_module(tmp_path_factory.mktemp("tcat"), "tcat", SOURCE)


@pytest.fixture
def srv(tmp_path, tcat, origin):
    o = origin("up")
    s = h.launch(tmp_path, ports=2, load="load_module %s;" % tcat, files={"html/a.txt": A},
                 server="""
        location = /cat { tcat /a.txt /internal-up; }
        location = /cat-cut { tcat /a.txt /cut; }
        location /internal-up { internal; proxy_pass http://%s/len/3000; }
        location = /cut { internal; proxy_pass http://%s/cut/20000; }
    """ % (o.addr, o.addr), servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
        location = /cat { tcat /a.txt /internal-up; }
        location /internal-up { internal; proxy_pass http://%s/len/3000; }
    }""" % o.addr)
    yield s
    s.stop()


def test_output_in_order(srv):
    for url, kw in ((srv.url("/cat"), {}),
                    ("http://127.0.0.1:%d/cat" % srv.ports[1], {"prior_knowledge": True})):
        r = h.curl(url, **kw)
        assert r.status == 200 and r.body[:1 + len(A)] == b"<" + A, r
        assert len(r.body) == 1 + len(A) + 3000, len(r.body)
    # twice on one HTTP/1.1 connection: the first response ended properly
    c = h.Conn(srv.ports[0])
    for _ in range(2):
        c.send(h.request("GET", "/cat"))
        r = c.read_response()
        assert r.status == 200 and r.header("transfer-encoding") == "chunked"
        assert len(r.body) == 1 + len(A) + 3000
    c.close()
    # the one alert: the second subrequest refused while the first runs
    alerts = [l for l in srv.error_log().splitlines() if "[alert]" in l]
    assert alerts and all("an output subrequest while another runs" in l for l in alerts)


def test_failed_output_cuts_the_response(srv):
    c = h.Conn(srv.ports[0])
    c.send(h.request("GET", "/cat-cut"))
    # an upstream that closes mid-body: the head, A and what came, then the
    # connection closed without the chunked end
    with pytest.raises(h.ProtocolError):
        c.read_response()
    c.close()
    assert h.curl(srv.url("/cat")).status == 200
