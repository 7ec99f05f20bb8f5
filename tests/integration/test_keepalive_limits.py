"""keepalive_time (a connection's longest keep-alive life), keepalive_disable
(msie6 after POST, safari, none) and lingering_close's values, as nginx's."""
import time

import pytest

import conferr
import swsharness as h

MSIE6 = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)"
SAFARI = "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/605.1.15"
CHROME = "Mozilla/5.0 (X11) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server="""
        location /short/ { keepalive_time 1s; respond 200 "s"; }
        location /safari/ { keepalive_disable safari; respond 200 "f"; }
        location /none/ { keepalive_disable none; respond 200 "n"; }
        location /lo/ { lingering_close off; respond 200 "lo"; }
        location /la/ { lingering_close always; respond 200 "la"; }
        location / { respond 200 "d"; }
    """)


def connection(srv, method, path, ua=None, c=None):
    hdrs = [("User-Agent", ua)] if ua else []
    body = b"a=1" if method == "POST" else b""
    if body:
        hdrs.append(("Content-Length", "3"))
    c.send(h.request(method, path, host="x", headers=hdrs, body=body))
    r = c.read_response(method)
    assert r.status == 200, r
    # HTTP/1.1 keeps the connection without saying so
    return "close" if (r.header("Connection") or "").lower() == "close" else "keep-alive"


@pytest.mark.parametrize("method,path,ua,expected", [
    ("POST", "/x", MSIE6, "close"),          # the default: msie6
    ("GET", "/x", MSIE6, "keep-alive"),
    ("POST", "/x", CHROME, "keep-alive"),
    ("POST", "/none/x", MSIE6, "keep-alive"),
    ("GET", "/safari/x", SAFARI, "close"),
    ("GET", "/safari/x", CHROME, "keep-alive"),
])
def test_keepalive_disable(srv, method, path, ua, expected):
    with h.Conn(srv.port) as c:
        assert connection(srv, method, path, ua, c) == expected


def test_keepalive_time(srv):
    with h.Conn(srv.port) as c:
        assert connection(srv, "GET", "/short/a", c=c) == "keep-alive"
        time.sleep(1.2)
        assert connection(srv, "GET", "/short/b", c=c) == "close"


@pytest.mark.parametrize("path", ["/lo/", "/la/"])
def test_lingering_close_values_answer(srv, path):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", path, host="x", headers=[("Connection", "close")]))
        r = c.read_response()
        assert r.status == 200, r


@pytest.mark.parametrize("line,words", [
    ("lingering_close sometimes;", ["invalid value"]),
    ("keepalive_disable opera;", ["invalid value"]),
    ("keepalive_disable none msie6;", ["invalid value"]),
])
def test_configuration_errors(tmp_path, line, words):
    conferr.check(tmp_path, words, server="        %s  # ERR\n" % line)
