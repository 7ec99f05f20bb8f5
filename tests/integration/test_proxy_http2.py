"""The proxy behind HTTP/2 (h2c by prior knowledge): the request goes to
the origin as HTTP/1.1, buffered or streamed bodies arrive whole, and a
large response is passed on through the stream's flow control."""
import json
import os

import swsharness as h
from proxyorigin import pattern


def h2(srv, path, **kw):
    return h.curl(srv.url(path), prior_knowledge=True, **kw)


def test_proxy_over_h2c(sws, origin):
    o = origin()
    srv = sws(server="""http2 on;
        location / { proxy_pass http://%s; }
        location /s/ { proxy_pass http://%s/; proxy_request_buffering off;
                       client_max_body_size 0; }""" % (o.addr, o.addr))

    r = h2(srv, "/echo?a=1")
    assert r.status == 200 and r.http_version == 3, r
    got = json.loads(r.body)
    assert got["method"] == "GET" and got["target"] == "/echo?a=1"
    assert got["version"] == "HTTP/1.1"

    body = os.urandom(300 * 1024)
    r = h2(srv, "/echo", method="POST", body=body)
    assert r.status == 200, r
    assert json.loads(r.body)["body"].encode("latin-1") == body

    # streamed to the origin as DATA frames arrive (window back-pressure)
    body = os.urandom(3 * 1024 * 1024 + 5)
    r = h2(srv, "/s/echo", method="POST", body=body)
    assert r.status == 200, r
    assert json.loads(r.body)["body"].encode("latin-1") == body

    size = 6 * 1024 * 1024 + 3
    r = h2(srv, "/big/%d" % size)
    assert r.status == 200 and len(r.body) == size
    assert r.body == pattern(size)

    r = h2(srv, "/status/404")
    assert r.status == 404
