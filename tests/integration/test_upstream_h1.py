"""The HTTP/1 client protocol the framework exports (sws_http_upstream_h1_*)
used by a module that is not proxy: tests/modules/th1.c is an HTTP/1
protocol module made only of those functions, in front of a real origin
(proxyorigin.py). proxy itself uses them too (test_proxy_*.py)."""
import json
from pathlib import Path

import pytest

import swsharness as h
from proxyorigin import pattern

TH1_SRC = Path(h.SRC) / "tests" / "modules" / "th1.c"


@pytest.fixture(scope="module")
def th1(tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("th1"), "th1", TH1_SRC.read_text())
    return "load_module %s;" % so


def names(req, name):
    return [v for k, v in req["headers"] if k.lower() == name]


def start(sws, th1, o):
    return sws(load=th1, server="""location / { th1_pass %s; }
                                   location /echo/ten { th1_pass %s; th1_http10; }"""
               % (o.addr, o.addr))


def test_request_hop_by_hop_fields_are_removed(sws, origin, th1):
    o = origin()
    srv = start(sws, th1, o)
    r = h.curl(srv.url("/echo?a=1"), headers=[
        "Connection: X-Secret, keep-alive", "X-Secret: s", "Keep-Alive: timeout=5",
        "TE: trailers", "Proxy-Connection: keep-alive", "Proxy-Authorization: Basic eA==",
        "Trailer: X-T", "X-Kept: k", "X-Th1: from-client"])
    assert r.status == 200, r
    req = json.loads(r.body)
    assert req["method"] == "GET" and req["target"] == "/echo?a=1"
    assert req["version"] == "HTTP/1.1"
    got = {k.lower() for k, v in req["headers"]}
    for gone in ("connection", "x-secret", "keep-alive", "te", "proxy-connection",
                 "proxy-authorization", "trailer"):
        assert gone not in got, (gone, req["headers"])
    assert names(req, "host") == ["th1"]
    assert names(req, "x-th1") == ["yes"]           # the module's replaces the client's
    assert names(req, "x-kept") == ["k"]


def test_response_framing_and_fields(sws, origin, th1):
    o = origin()
    srv = start(sws, th1, o)
    r = h.curl(srv.url("/chunked/20000?size=999"))
    assert r.status == 200 and r.body == pattern(20000)
    r = h.curl(srv.url("/close/5000"))
    assert r.status == 200 and r.body == pattern(5000)
    r = h.curl(srv.url("/len/0"))
    assert r.status == 200 and r.body == b""
    r = h.curl(srv.url("/headers"))
    assert r.header("X-Custom") == "kept"
    for gone in ("X-Hop", "Keep-Alive", "Proxy-Connection", "Trailer"):
        assert r.header(gone) is None, gone
    assert r.headers_all("Set-Cookie") == ["a=1", "b=2"]
    r = h.curl(srv.url("/head"), method="HEAD")
    assert r.status == 200 and r.header("Content-Length") == "1234" and r.body == b""


def test_keepalive_and_http10(sws, origin, th1):
    o = origin()
    srv = start(sws, th1, o)
    for _ in range(3):
        assert h.curl(srv.url("/len/100")).body == pattern(100)
    assert o.accepted == 1                          # HTTP/1.1: kept
    for _ in range(2):
        r = h.curl(srv.url("/echo/ten"))
        req = json.loads(r.body)
        assert req["version"] == "HTTP/1.0" and names(req, "connection") == ["close"]
    # the first went on the kept connection, which its "close" ends: the
    # second needed a new one
    assert o.accepted == 2


def test_request_body(sws, origin, th1):
    o = origin()
    srv = start(sws, th1, o)
    r = h.curl(srv.url("/echo"), method="POST", body=b"k=v&x=y")
    req = json.loads(r.body)
    assert req["body"] == "k=v&x=y" and names(req, "content-length") == ["7"]


def test_invalid_and_cut_responses(sws, origin, th1):
    o = origin()
    srv = start(sws, th1, o)
    assert h.curl(srv.url("/garbage")).status == 502
    assert "invalid status line" in srv.error_log()
    with pytest.raises(Exception):
        h.curl(srv.url("/cutchunked"))
