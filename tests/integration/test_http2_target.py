"""HTTP/2's :method and :path are checked and taken as HTTP/1's parser takes
a request line (sws_http_parse_method_target), without the line being
made and parsed again: each target below, sent in raw HEADERS frames over
h2c, gets the status the same target gets in an HTTP/1.1 request line on
the same server (bytes no target may hold, '#', '[' in the path, a bad
%-escape, a decoded NUL, ".." above the root, "%2F" to a file, a target
that is not origin-form, "*" but for OPTIONS, a method that is not a
token; the absolute-form HTTP/1 may send is refused), and $request in the access log shows the line HTTP/1 would have
sent, with HTTP/2.0, made only when the log asks for it: for a good
request, a refused one, and a POST that an error_page turned into a GET."""
import socket

import pytest

import h2raw
import swsharness as h
from test_http2_frames import connect      # h2c on srv.h2port, our SETTINGS acked

FILES = {"html/a.txt": b"A\n", "html/d/b.txt": b"B\n"}


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(files=FILES, ports=2,
                   http='    log_format req "$server_protocol|$request|$status";\n'
                        '    access_log @TMP@/req.log req;\n',
                   server="        listen 127.0.0.1:@PORT2@ http2;\n"
                          "        location = /post { return 500; error_page 500 /a.txt; }\n")
    s.h2port = s.ports[1]
    return s


def h1_status(srv, method, target):
    """The status an HTTP/1.1 request line "method target HTTP/1.1" gets."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        s.sendall(method + b" " + target + b" HTTP/1.1\r\nHost: localhost\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1])


def h2_status(srv, method, target):
    with connect(srv) as c:
        sid = c.headers([(b":method", method), (b":scheme", b"http"),
                         (b":authority", b"localhost"), (b":path", target)])
        hdrs, _, frames = c.response(sid, timeout=5)
    assert h2raw.rst_code(frames, sid) is None, (method, target, frames)
    return h2raw.status(hdrs)


GOOD = [
    (b"GET", b"/a.txt", 200),
    (b"GET", b"/a.txt?x=1&y[]=2", 200),            # '[' ']' in the query
    (b"GET", b"/d/./b.txt", 200),                  # dot segments resolved
    (b"GET", b"/d/../a.txt", 200),
    (b"GET", b"//d//b.txt", 200),
    (b"GET", b"/%61.txt", 200),                    # %-decoded
    (b"GET", b"/a.txt?p=%2F", 200),                # %2F in the query is no slash
    (b"GET", b"/nothing", 404),
    (b"OPTIONS", b"*", 200),
    (b"get", b"/a.txt", 501),                      # a token, of no method we know
]

REFUSED = [
    (b"GET", b"/a b"),                             # SP
    (b"GET", b"/a\x01b"),                          # a CTL
    (b"GET", b"/a\x7fb"),                          # DEL
    (b"GET", b"/a\xc3\xa9"),                       # obs-text
    (b"GET", b"/a\"b"),
    (b"GET", b"/a<b"),
    (b"GET", b"/a>b"),
    (b"GET", b"/a\\b"),
    (b"GET", b"/a^b"),
    (b"GET", b"/a`b"),
    (b"GET", b"/a{b"),
    (b"GET", b"/a|b"),
    (b"GET", b"/a}b"),
    (b"GET", b"/a.txt#frag"),
    (b"GET", b"/[x]"),                             # '[' in the path
    (b"GET", b"/a.txt?q=<"),                       # a bad byte in the query
    (b"GET", b"/%"),                               # bad %-escapes
    (b"GET", b"/%4"),
    (b"GET", b"/%zz"),
    (b"GET", b"/a%00b"),                           # a decoded NUL
    (b"GET", b"/../a.txt"),                        # above the root
    (b"GET", b"/d/../../a.txt"),
    (b"GET", b"/%2e%2e/a.txt"),
    (b"GET", b"/d%2Fb.txt"),                       # %2F to a file
    (b"GET", b"a.txt"),                            # not origin-form
    (b"GET", b"*"),                                # "*" but for OPTIONS
    (b"OPTIONS", b"*x"),
    (b"G(T", b"/a.txt"),                           # a method that is not a token
    (b"G\x01T", b"/a.txt"),
]


@pytest.mark.parametrize("method,target,status", GOOD)
def test_target_served_as_http1(srv, method, target, status):
    assert h1_status(srv, method, target) == status
    assert h2_status(srv, method, target) == status


@pytest.mark.parametrize("method,target", REFUSED)
def test_target_refused_as_http1(srv, method, target):
    assert h1_status(srv, method, target) == 400
    assert h2_status(srv, method, target) == 400


def test_absolute_form_refused(srv):
    # HTTP/1's absolute-form is served; a :path is never one (RFC 9113 8.3.1)
    assert h1_status(srv, b"GET", b"http://localhost/a.txt") == 200
    assert h2_status(srv, b"GET", b"http://localhost/a.txt") == 400


def test_request_line_in_the_log(srv):
    with connect(srv) as c:
        sid = c.get("/a.txt?x=1", scheme="http")
        hdrs, _, _ = c.response(sid, timeout=5)
        assert h2raw.status(hdrs) == 200
        sid = c.get("/a<b", scheme="http")
        hdrs, _, _ = c.response(sid, timeout=5)
        assert h2raw.status(hdrs) == 400
        sid = c.headers(c.request_headers("/post", method="POST", scheme="http"))
        hdrs, _, _ = c.response(sid, timeout=5)
        assert h2raw.status(hdrs) == 500
    log = lambda: h._read(srv.tmp / "req.log")
    assert h.wait_for(lambda: "HTTP/2.0|GET /a.txt?x=1 HTTP/2.0|200" in log()), log()
    assert h.wait_for(lambda: "HTTP/2.0|GET /a<b HTTP/2.0|400" in log()), log()
    assert h.wait_for(lambda: "HTTP/2.0|POST /post HTTP/2.0|500" in log()), log()
