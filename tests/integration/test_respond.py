"""Fixed responses: respond and return."""
import pytest

import swsharness as h

LOCATIONS = """
        location = /r204 { return 204; }
        location = /r404 { return 404; }
        location = /r301 { return 301 https://example.com/x; }
        location = /r302 { return 302 /relative; }
        location = /r444 { return 444; }
        location = /r200text { return 200 "from return"; }
        location = /teapot { respond 418 "short and stout"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=LOCATIONS)


def test_respond_exact_body(srv):
    r = h.curl(srv.url("/respond"))
    assert r.status == 200, r
    assert r.body == b"Hello, world!"
    assert r.header("Content-Length") == "13", r


def test_respond_raw_exact_bytes(srv):
    r = h.exchange(srv.port, h.request("GET", "/respond"))
    assert r.status == 200 and r.body == b"Hello, world!", r
    assert r.headers_all("Content-Length") == ["13"], r


def test_respond_other_status(srv):
    r = h.curl(srv.url("/teapot"))
    assert r.status == 418 and r.body == b"short and stout", r


def test_respond_head_no_body(srv):
    r = h.curl(srv.url("/respond"), method="HEAD")
    assert r.status == 200 and r.body == b""
    assert r.header("Content-Length") == "13", r
    with h.Conn(srv.port) as c:
        c.send(h.request("HEAD", "/respond") + h.request("GET", "/r200text"))
        r1 = c.read_response("HEAD")
        assert r1.status == 200 and r1.header("Content-Length") == "13", r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"from return", \
            "HEAD response followed by stray bytes: %r" % (r2,)


def test_return_204_no_body(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/r204") + h.request("GET", "/respond"))
        r1 = c.read_response()
        assert r1.status == 204, r1
        assert r1.header("Content-Length") in (None, "0"), r1
        assert r1.header("Transfer-Encoding") is None, r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"Hello, world!", r2


def test_return_404_error_page(srv):
    r = h.curl(srv.url("/r404"))
    assert r.status == 404, r
    assert r.header("Content-Length") == str(len(r.body)), r
    assert b"404" in r.body and b"<html" in r.body.lower(), r
    assert (r.header("Content-Type") or "").startswith("text/html"), r


def test_return_301_location(srv):
    r = h.curl(srv.url("/r301"))
    assert r.status == 301, r
    assert r.header("Location") == "https://example.com/x", r
    assert r.header("Content-Length") == str(len(r.body)), r


def test_return_302_relative(srv):
    r = h.curl(srv.url("/r302"))
    assert r.status == 302, r
    loc = r.header("Location") or ""
    assert loc.endswith("/relative"), r
    assert loc == "/relative" or loc.startswith("http://"), r


def test_return_200_text(srv):
    r = h.curl(srv.url("/r200text"))
    assert r.status == 200 and r.body == b"from return", r
    assert r.header("Content-Length") == "11"


def test_return_444_closes_without_response(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/r444"))
        assert c.closed_within(3.0), "connection still open after return 444"
        assert c.buf == b""


def test_respond_keepalive_after_post_body(srv):
    """A body sent to a respond location is consumed: keep-alive goes on."""
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", "11")],
                         body=b"hello=world"))
        r1 = c.read_response()
        assert r1.status == 200 and r1.body == b"Hello, world!", r1
        c.send(h.request("GET", "/r200text"))
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"from return", r2
