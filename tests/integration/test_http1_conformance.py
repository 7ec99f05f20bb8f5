"""HTTP/1.1 conformance, requirement by requirement: RFC 9112 (message
syntax) and RFC 9110 (semantics). One table row per requirement: the exact
bytes sent over a raw socket and the exact reaction expected (status,
fields present with their values, fields absent, body bytes, and whether
the connection is closed or kept), each read bounded in time.

Where nginx and the RFC differ, the row follows the RFC unless nginx's
choice is conformant too; the row's comment says which.

Every response is also checked for what RFC 9110 asks of all of them: a
Date in IMF-fixdate (6.6.1), a Server (10.2.4), framing that matches the
body (8.6), and no body nor Content-Length/Transfer-Encoding on 1xx and
204 (15.3.5, 8.6).
"""
import calendar
import re

import pytest

import echomod
import swsharness as h

RANGE = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"           # 36 bytes
HELLO = b"hello\n"
MTIME = calendar.timegm((2020, 1, 2, 3, 4, 5))
LM = "Thu, 02 Jan 2020 03:04:05 GMT"

FILES = {
    "html/hello.txt": HELLO,
    "html/range.txt": RANGE,
    "html/d/index.html": b"index\n",
    "html/exact/f.txt": b"exact\n",
    "html/future.txt": b"from the future\n",
}

LOCATIONS = """
        location /echo { echo; }
        location /discard { echo_discard; }
        location = /r204 { return 204; }
        location = /r304 { return 304; }
        location = /small { client_max_body_size 10; respond 200 "small"; }
        location /exact/ { if_modified_since exact; }
"""

# A second name on the same port: the absolute-form's authority picks it.
SERVERS = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name other.test;
        location / { respond 200 "other server"; }
    }
"""


@pytest.fixture(scope="module")
def srv(sws_module, tmp_path_factory):
    s = sws_module(files=FILES, server=LOCATIONS, servers=SERVERS,
                   load=echomod.build(tmp_path_factory.mktemp("echo")))
    import os
    import time
    for name in ("range.txt", "hello.txt", "exact/f.txt"):
        os.utime(s.tmp / "html" / name, (MTIME, MTIME))
    tomorrow = time.time() + 86400
    os.utime(s.tmp / "html" / "future.txt", (tomorrow, tomorrow))
    r = h.exchange(s.port, h.request("GET", "/range.txt"))
    s.etag = r.header("ETag")
    assert s.etag and re.match(r'^"[!#-~]+"$', s.etag), r     # strong, opaque-tag
    return s


# ---------------------------------------------------------------- expectations

class Expect:
    """status: an int or a tuple; headers: {name: exact value, or None for
    "present"}; absent: names that must not be there; body: exact bytes
    (None: not checked); close: True (closed right after), False (kept:
    a following request is answered), None (either); then: the responses
    expected next, for pipelined requests in the same bytes."""

    def __init__(self, status, headers=None, absent=(), body=None, close=None,
                 method="GET", then=(), check=None):
        self.status = (status,) if isinstance(status, int) else tuple(status)
        self.headers = headers or {}
        self.absent = absent
        self.body = body
        self.close = close
        self.method = method
        self.then = then
        self.check = check

    def __repr__(self):
        return "Expect(%s)" % (self.status,)


def OK(body=None, **kw):
    return Expect(200, body=body, **kw)


def BAD(status=400, **kw):
    """An error answered and the connection closed (a framing error)."""
    kw.setdefault("close", True)
    kw.setdefault("headers", {"Connection": "close"})
    return Expect(status, **kw)


HELLO_OK = Expect(200, body=HELLO, close=False)
ECHO_ABC = Expect(200, body=b"abc", headers={"X-Body-Length": "3"}, close=False)
NOT_MODIFIED = Expect(304, headers={"ETag": "{ETAG}", "Last-Modified": LM},
                      absent=("Content-Length", "Content-Type", "Transfer-Encoding",
                              "Content-Range", "Accept-Ranges"),
                      body=b"", close=False)
def nginx_page(title):
    """The core's error page (nginx's bytes, the server's name aside): 412
    and 416 carry it, as nginx's do."""
    def check(r):
        assert r.body.startswith(b"<html>\r\n<head><title>%s</title></head>\r\n"
                                 % title.encode()), r.body[:200]
        assert r.body.endswith(b"</center>\r\n</body>\r\n</html>\r\n"), r.body[-100:]
        assert r.header("Content-Type") == "text/html", r
    return check


FAILED = Expect(412, absent=("ETag", "Last-Modified", "Content-Range"), close=False,
                check=nginx_page("412 Precondition Failed"))
FULL = Expect(200, headers={"Accept-Ranges": "bytes", "Content-Length": "36"},
              absent=("Content-Range",), body=RANGE, close=False)


def PART(first, last):
    return Expect(206, headers={"Content-Range": "bytes %d-%d/36" % (first, last),
                                "Content-Length": str(last - first + 1),
                                "Content-Type": "text/plain", "ETag": "{ETAG}",
                                "Last-Modified": LM},
                  body=RANGE[first:last + 1], close=False)


UNSATISFIABLE = Expect(416, headers={"Content-Range": "bytes */36"},
                       absent=("ETag", "Last-Modified"), close=False,
                       check=nginx_page("416 Requested Range Not Satisfiable"))


def multipart(*spans):
    """206 multipart/byteranges with one part per (first, last), in order."""
    def check(r):
        ctype = r.header("Content-Type") or ""
        m = re.match(r'^multipart/byteranges; ?boundary="?([0-9A-Za-z\'()+_,./:=?-]{1,70})"?$',
                     ctype)
        assert m, ctype
        delim = b"--" + m.group(1).encode()
        body = r.body
        assert r.header("Content-Length") == str(len(body)), r
        # [preamble] then one "--B CRLF headers CRLF CRLF data CRLF" per part, "--B--"
        pieces = body.split(b"\r\n" + delim)
        assert pieces[0] == b"", "preamble %r" % pieces[0]
        assert pieces[-1] in (b"--", b"--\r\n"), pieces[-1][-40:]
        parts = pieces[1:-1]
        assert len(parts) == len(spans), (len(parts), spans)
        for part, (first, last) in zip(parts, spans):
            assert part.startswith(b"\r\n"), part[:40]
            head, sep, data = part[2:].partition(b"\r\n\r\n")
            assert sep, part[:200]
            fields = dict(ln.split(b": ", 1) for ln in head.split(b"\r\n"))
            assert fields[b"Content-Range"] == b"bytes %d-%d/36" % (first, last), fields
            assert fields[b"Content-Type"] == b"text/plain", fields
            assert data == RANGE[first:last + 1], (data, first, last)
        assert r.header("Content-Range") is None, r
    return Expect(206, headers={"ETag": "{ETAG}"}, check=check, close=False)


# ---------------------------------------------------------------- requests

def req(method="GET", target="/hello.txt", fields=(), body=b"", version="HTTP/1.1",
        host="localhost"):
    """Request bytes; fields as raw lines (str or bytes)."""
    out = b"%s %s %s\r\n" % (method.encode(), target.encode(), version.encode())
    if host is not None:
        out += b"Host: %s\r\n" % host.encode()
    for f in fields:
        out += (f.encode("latin-1") if isinstance(f, str) else f) + b"\r\n"
    return out + b"\r\n" + body


def get(target="/hello.txt", *fields, **kw):
    return req("GET", target, fields, **kw)


def post(target="/echo", *fields, body=b"", **kw):
    return req("POST", target, fields, body=body, **kw)


def chunked(body, target="/echo", *fields):
    return post(target, "Transfer-Encoding: chunked", *fields, body=body)


def rng(value, *fields):
    return get("/range.txt", "Range: " + value, *fields)


def cond(*fields, target="/range.txt", method="GET"):
    return req(method, target, fields)


NEXT = get("/hello.txt")          # a request pipelined after the one tested


# ---------------------------------------------------------------- the table
#
# (section, requirement, request bytes, expectation). {ETAG} in the bytes
# or in an expected value is the ETag of /range.txt.

ROWS = [
    # -------- RFC 9112 2.2 message parsing
    ("9112 2.2", "CRLF line endings", get(), HELLO_OK),
    ("9112 2.2", "a bare LF ends a line (a recipient MAY recognize it; nginx does)",
     b"GET /hello.txt HTTP/1.1\nHost: localhost\n\n", HELLO_OK),
    ("9112 2.2", "a bare CR ending the request-line is rejected",
     b"GET /hello.txt HTTP/1.1\rHost: localhost\r\n\r\n", BAD()),
    ("9112 2.2", "a bare CR ending a field line is rejected",
     b"GET /hello.txt HTTP/1.1\r\nHost: localhost\rX-A: b\r\n\r\n", BAD()),
    ("9112 2.2", "a bare CR inside a field value is rejected",
     get("/hello.txt", b"X-A: a\rb"), BAD()),
    ("9112 2.2", "CR CR LF ending a field line is rejected",
     get("/hello.txt", b"X-A: b\r"), BAD()),
    ("9112 2.2", "CR CR LF ending the request-line is rejected",
     b"GET /hello.txt HTTP/1.1\r\r\nHost: localhost\r\n\r\n", BAD()),
    ("9112 2.2", "a bare LF ending the field section",
     b"GET /hello.txt HTTP/1.1\r\nHost: localhost\r\n\n", HELLO_OK),
    ("9112 2.2", "one empty line before the request-line is ignored",
     b"\r\n" + get(), HELLO_OK),
    ("9112 2.2", "several empty lines before the request-line are ignored",
     b"\r\n\n\r\n" + get(), HELLO_OK),
    ("9112 2.2", "whitespace between the start-line and the first field line",
     b"GET /hello.txt HTTP/1.1\r\n Host: localhost\r\n\r\n", BAD()),
    ("9112 2.2", "a line of whitespace inside the field section",
     b"GET /hello.txt HTTP/1.1\r\nHost: localhost\r\n \r\n\r\n", BAD()),

    # -------- 2.3 HTTP version
    ("9112 2.3", "HTTP/1.1 is answered with HTTP/1.1", get(), HELLO_OK),
    ("9112 2.3", "the version name is case-sensitive",
     get(version="http/1.1"), BAD()),
    ("9112 2.3", "HTTP/2.0 in an HTTP/1 request-line is 505",
     get(version="HTTP/2.0"), BAD(505)),
    ("9112 2.3", "HTTP/3.0 is 505", get(version="HTTP/3.0"), BAD(505)),
    # malformed for HTTP/1 (asterisk-form is OPTIONS only) before the
    # version is looked at; 505 would do as well
    ("9112 2.3", "the HTTP/2 preface on a port without http2",
     b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", BAD()),
    ("9112 2.3", "HTTP/0.9 named in a request-line is 505",
     get(version="HTTP/0.9", host=None), BAD(505)),
    ("9110 6.2", "a higher minor version, HTTP/1.2, is served as HTTP/1.1",
     get(version="HTTP/1.2"), HELLO_OK),
    ("9112 2.3", "a version with two digits is malformed",
     get(version="HTTP/1.10"), BAD()),
    ("9112 2.3", "a version with a leading zero is malformed",
     get(version="HTTP/01.1"), BAD()),
    ("9112 2.3", "no version (HTTP/0.9 simple request) is malformed",
     b"GET /hello.txt\r\n\r\n", BAD()),

    # -------- 3 request line
    ("9112 3", "the method is a token: ! . - are token characters",
     get().replace(b"GET", b"G.E-T!", 1), BAD(501, close=False, headers={})),
    ("9112 3", "a long unknown method is 501", get().replace(b"GET", b"M" * 100, 1),
     Expect(501, close=False)),
    ("9112 3", "a method longer than the buffers is still 501, not 414",
     get().replace(b"GET", b"M" * 20000, 1), BAD(501)),
    ("9112 3", "a method with a non-token character",
     get().replace(b"GET", b"GE(T", 1), BAD()),
    ("9112 3", "the method is case-sensitive: \"get\" is not GET (nginx: 400)",
     get().replace(b"GET", b"get", 1), Expect(501, close=False)),
    ("9112 3", "two spaces after the method", get().replace(b"GET ", b"GET  ", 1), BAD()),
    ("9112 3", "two spaces before the version",
     get().replace(b" HTTP/1.1", b"  HTTP/1.1", 1), BAD()),
    ("9112 3", "a tab instead of a space", get().replace(b"GET ", b"GET\t", 1), BAD()),
    ("9112 3", "a space after the version", get().replace(b"HTTP/1.1", b"HTTP/1.1 ", 1),
     BAD()),
    ("9112 3", "a space before the method", b" " + get(), BAD()),
    ("9112 3", "a space inside the target",
     b"GET /hel lo.txt HTTP/1.1\r\nHost: localhost\r\n\r\n", BAD()),
    ("9112 3", "a control character inside the target", get("/hel\x01lo.txt"), BAD()),
    ("9112 3", "a fragment is not part of a request-target", get("/hello.txt#top"), BAD()),
    # 9112 3.2: an invalid target SHOULD get 400 (or a 301), not be
    # autocorrected; nginx takes raw bytes and these characters as they are
    ("9112 3.2", "raw UTF-8 in the path (must be percent-encoded; nginx: served)",
     get("/caf\xc3\xa9.txt"), BAD()),
    ("9112 3.2", "raw UTF-8 in the query (nginx: served)", get("/hello.txt?q=\xc3\xa9"), BAD()),
    ("9112 3.2", "characters outside the URI syntax in the query (nginx: served)",
     get("/hello.txt?q=a|b{c}"), BAD()),
    ("9112 3.2", "a double quote in the path", get('/a"b'), BAD()),
    ("9112 3.2", "a backslash in the path", get("/a\\b"), BAD()),
    ("9112 3.2", "the characters a query may hold", get("/hello.txt?a=/?:@!$&'()*+,;=-._~%41"),
     HELLO_OK),
    # 3.2.1 origin-form
    ("9112 3.2.1", "origin-form with a query", get("/hello.txt?a=1&b=%20"), HELLO_OK),
    ("9112 3.2.1", "origin-form must start with /", get("hello.txt"), BAD()),
    # 3.2.2 absolute-form
    ("9112 3.2.2", "absolute-form is accepted", get("http://localhost/hello.txt"), HELLO_OK),
    ("9112 3.2.2", "absolute-form: the scheme and host are case-insensitive",
     get("HTTP://LocalHost/hello.txt"), HELLO_OK),
    ("9112 3.2.2", "absolute-form: Host is ignored for the target's authority",
     get("http://localhost:1234/echo?q=1", host="other.test"),
     Expect(200, body=b"GET /echo ?q=1 host=localhost scheme=http version=1001\n"
                      b"host: other.test\n", close=False)),
    ("9112 3.2.2", "absolute-form: its authority picks the virtual server",
     get("http://other.test/x"), Expect(200, body=b"other server", close=False)),
    ("9112 3.2.2", "absolute-form: Host naming another server does not matter",
     get("http://localhost/hello.txt", host="other.test"), HELLO_OK),
    ("9112 3.2.2", "absolute-form without a path is the root",
     get("http://other.test"), Expect(200, body=b"other server", close=False)),
    ("9110 4.2.4", "absolute-form with userinfo is rejected",
     get("http://user@localhost/hello.txt"), BAD()),
    ("9112 3.2.2", "absolute-form with another scheme", get("ftp://localhost/hello.txt"),
     BAD()),
    ("9112 3.2", "absolute-form still needs a Host in HTTP/1.1",
     get("http://localhost/hello.txt", host=None), BAD()),
    ("9112 3.2", "absolute-form with an invalid Host value is rejected",
     get("http://localhost/hello.txt", host="a b"), BAD()),
    # 3.2.3 authority-form
    ("9112 3.2.3", "authority-form is only for CONNECT", get("localhost:80"), BAD()),
    ("9112 3.2.3", "CONNECT needs authority-form", req("CONNECT", "/hello.txt"), BAD()),
    ("9110 9.3.6", "CONNECT: the server is no proxy, 405 with Allow",
     req("CONNECT", "localhost:80"),
     BAD(405, headers={"Connection": "close", "Allow": "GET, HEAD, POST, OPTIONS"})),
    # 3.2.4 asterisk-form
    ("9112 3.2.4", "asterisk-form is only for OPTIONS", get("*"), BAD()),
    ("9110 9.3.7", "OPTIONS * is answered for the server, with Allow",
     req("OPTIONS", "*"), Expect(200, headers={"Allow": "GET, HEAD, POST, OPTIONS",
                                               "Content-Length": "0"}, body=b"",
                                 close=False)),
    # 3.2 Host
    ("9112 3.2", "HTTP/1.1 without Host", get(host=None), BAD()),
    ("9112 3.2", "HTTP/1.0 without Host is served",
     get(version="HTTP/1.0", host=None), Expect(200, body=HELLO, close=True)),
    ("9112 3.2", "two Host field lines",
     get("/hello.txt", "Host: localhost"), BAD()),
    ("9112 3.2", "two Host field lines with different values",
     get("/hello.txt", "Host: other.test"), BAD()),
    ("9112 3.2", "Host with a space", get(host="local host"), BAD()),
    ("9112 3.2", "Host with a slash", get(host="local/host"), BAD()),
    ("9112 3.2", "Host with userinfo", get(host="user@localhost"), BAD()),
    ("9112 3.2", "Host with a non-numeric port", get(host="localhost:http"), BAD()),
    ("9112 3.2", "Host as an IPv6 literal with a port is valid",
     get(host="[::1]:8080"), HELLO_OK),
    ("9112 3.2", "Host with an empty port is valid (RFC 3986 port = *DIGIT)",
     get(host="localhost:"), HELLO_OK),
    # RFC 9112 3.3 lets a server reject a Host that leaves the http target
    # URI without a host (RFC 9110 4.2.1); nginx answers 400
    ("9112 3.3", "an empty Host is 400", get(host=""), BAD()),
    ("9112 3.3", "a Host of whitespace is 400",
     b"GET /hello.txt HTTP/1.1\r\nHost: \t \r\n\r\n", BAD()),
    ("9112 3.3", "a Host without a name (a dot, a port) is 400", get(host=".:80"), BAD()),
    ("9112 3.3", "an empty Host beside an absolute-form target is 400",
     get("http://localhost/hello.txt", host=""), BAD()),
    ("9112 3.3", "an HTTP/1.0 empty Host is 400", get(version="HTTP/1.0", host=""), BAD()),
    ("9112 3.2", "Host is case-insensitive",
     get("/x", host="OTHER.Test"), Expect(200, body=b"other server", close=False)),

    # -------- 5 field syntax
    ("9112 5.1", "whitespace between the field name and the colon",
     get("/hello.txt", "X-A : b"), BAD()),
    ("9112 5.1", "a tab between the field name and the colon",
     get("/hello.txt", "X-A\t: b"), BAD()),
    ("9112 5.1", "Host with whitespace before the colon",
     b"GET /hello.txt HTTP/1.1\r\nHost : localhost\r\n\r\n", BAD()),
    ("9112 5.1", "an empty field name", get("/hello.txt", ": b"), BAD()),
    ("9112 5.1", "a field line without a colon", get("/hello.txt", "X-A b"), BAD()),
    ("9110 5.1", "a field name with a non-token character",
     get("/hello.txt", "X-(A): b"), BAD()),
    ("9110 5.1", "a field name with a space", get("/hello.txt", "X A: b"), BAD()),
    ("9110 5.1", "a field name with NUL", get("/hello.txt", b"X-\x00A: b"), BAD()),
    ("9110 5.5", "leading and trailing whitespace is not part of the value",
     get("/echo", "X-A: \t  spaced out \t "),
     Expect(200, body=b"GET /echo ? host=localhost scheme=http version=1001\n"
                      b"host: localhost\nx-a: spaced out\n", close=False)),
    ("9110 5.5", "an empty field value", get("/hello.txt", "X-A:"), HELLO_OK),
    ("9110 5.5", "obs-text in a field value is accepted",
     get("/hello.txt", b"X-A: caf\xe9 \x80\xff"), HELLO_OK),
    ("9110 5.5", "NUL in a field value", get("/hello.txt", b"X-A: a\x00b"), BAD()),
    ("9110 5.5", "a control character in a field value",
     get("/hello.txt", b"X-A: a\x07b"), BAD()),
    ("9110 5.5", "DEL in a field value", get("/hello.txt", b"X-A: a\x7fb"), BAD()),
    ("9110 5.5", "a vertical tab in a field value", get("/hello.txt", b"X-A: a\x0bb"), BAD()),
    ("9110 5.5", "a vertical tab before Transfer-Encoding's value",
     post("/echo", b"Transfer-Encoding: \x0bchunked", body=b"3\r\nabc\r\n0\r\n\r\n"),
     BAD()),
    ("9110 5.5", "a tab inside a field value is allowed",
     get("/hello.txt", b"X-A: a\tb"), HELLO_OK),
    ("9112 5.2", "obs-fold is rejected (a server MUST reject it or replace it)",
     get("/hello.txt", "X-A: a", " b"), BAD()),
    ("9112 5.2", "obs-fold with a tab", get("/hello.txt", "X-A: a", "\tb"), BAD()),
    ("9110 5.3", "field names are case-insensitive",
     b"GET /hello.txt HTTP/1.1\r\nhOsT: localhost\r\n\r\n", HELLO_OK),

    # -------- 6 message body
    ("9112 6.1", "a chunked request body is decoded",
     chunked(b"1\r\na\r\n2\r\nbc\r\n0\r\n\r\n"), ECHO_ABC),
    ("9112 6.1", "the coding name is case-insensitive",
     post("/echo", "Transfer-Encoding: ChUnKeD", body=b"3\r\nabc\r\n0\r\n\r\n"), ECHO_ABC),
    ("9112 6.1", "Transfer-Encoding in HTTP/1.0 is a framing error",
     post("/echo", "Transfer-Encoding: chunked", body=b"3\r\nabc\r\n0\r\n\r\n",
          version="HTTP/1.0"), BAD()),
    ("9112 6.1", "an unknown final transfer coding is 501",
     post("/echo", "Transfer-Encoding: gzip", body=b"abc"), BAD(501)),
    ("9112 6.1", "identity is no longer a transfer coding: 501",
     post("/echo", "Transfer-Encoding: identity", body=b"abc"), BAD(501)),
    ("9112 6.1", "a coding before chunked that is not implemented is 501",
     post("/echo", "Transfer-Encoding: gzip, chunked", body=b"3\r\nabc\r\n0\r\n\r\n"),
     BAD(501)),
    ("9112 6.3", "chunked not the final coding: 400 and close",
     post("/echo", "Transfer-Encoding: chunked, gzip", body=b"3\r\nabc\r\n0\r\n\r\n"),
     BAD()),
    ("9112 6.1", "chunked applied twice in one field",
     post("/echo", "Transfer-Encoding: chunked, chunked", body=b"3\r\nabc\r\n0\r\n\r\n"),
     BAD()),
    ("9112 6.1", "chunked twice over two field lines",
     post("/echo", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked",
          body=b"3\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 6.1", "an empty Transfer-Encoding", post("/echo", "Transfer-Encoding:", body=b""),
     BAD()),
    ("9112 6.3", "Transfer-Encoding and Content-Length: 400 and close (smuggling)",
     post("/echo", "Content-Length: 3", "Transfer-Encoding: chunked",
          body=b"3\r\nabc\r\n0\r\n\r\n") + NEXT, BAD()),
    ("9112 6.3", "Content-Length and Transfer-Encoding: identity: 400 and close",
     post("/echo", "Content-Length: 3", "Transfer-Encoding: identity", body=b"abc") + NEXT,
     BAD()),
    ("9112 6.3", "Content-Length after Transfer-Encoding: 400 and close",
     post("/echo", "Transfer-Encoding: chunked", "Content-Length: 3",
          body=b"3\r\nabc\r\n0\r\n\r\n") + NEXT, BAD()),
    ("9112 6.2", "Content-Length frames the body; the next request follows",
     post("/echo", "Content-Length: 3", body=b"abc") + NEXT,
     Expect(200, body=b"abc", then=(HELLO_OK,), close=False)),
    ("9112 6.3", "a request without Content-Length or Transfer-Encoding has no body",
     post("/echo") + NEXT,
     Expect(200, body=b"POST /echo ? host=localhost scheme=http version=1001\n"
                      b"host: localhost\n", then=(HELLO_OK,), close=False)),
    ("9110 8.6", "Content-Length with leading zeros is a valid number",
     post("/echo", "Content-Length: 003", body=b"abc"), ECHO_ABC),
    ("9110 5.5", "OWS around the Content-Length value",
     post("/echo", "Content-Length:\t3 \t", body=b"abc"), ECHO_ABC),
    ("9110 5.5", "OWS after the Transfer-Encoding value",
     post("/echo", "Transfer-Encoding: chunked \t", body=b"3\r\nabc\r\n0\r\n\r\n"),
     ECHO_ABC),
    ("9110 8.6", "Content-Length followed by NUL",
     post("/echo", b"Content-Length: 3\x00", body=b"abc"), BAD()),
    ("9110 8.6", "Content-Length that is not a number",
     post("/echo", "Content-Length: abc", body=b"abc"), BAD()),
    ("9110 8.6", "a negative Content-Length", post("/echo", "Content-Length: -3", body=b"abc"),
     BAD()),
    ("9110 8.6", "Content-Length with a sign", post("/echo", "Content-Length: +3", body=b"abc"),
     BAD()),
    ("9110 8.6", "Content-Length in hex", post("/echo", "Content-Length: 0x3", body=b"abc"),
     BAD()),
    ("9110 8.6", "an empty Content-Length", post("/echo", "Content-Length:", body=b"abc"),
     BAD()),
    ("9110 8.6", "Content-Length with digits and a space",
     post("/echo", "Content-Length: 3 3", body=b"abc"), BAD()),
    # a numeral too large for any integer: invalid here (nginx too); 413
    # would do as well
    ("9110 8.6", "a Content-Length that overflows",
     post("/echo", "Content-Length: 99999999999999999999999", body=b"abc"), BAD()),
    ("9112 6.3", "two different Content-Length lines",
     post("/echo", "Content-Length: 3", "Content-Length: 4", body=b"abcd"), BAD()),
    ("9112 6.3", "a Content-Length list of different values",
     post("/echo", "Content-Length: 3, 4", body=b"abcd"), BAD()),
    ("9112 6.3", "a Content-Length list with an empty member",
     post("/echo", "Content-Length: 3,", body=b"abc"), BAD()),
    # RFC 9110 8.6 lets a recipient take identical repeated values as one
    # or reject them; nginx refuses them, and so do we (smuggling)
    ("9110 8.6", "repeated identical Content-Length lines are 400",
     post("/echo", "Content-Length: 3", "Content-Length: 3", body=b"abc"), BAD()),
    ("9110 8.6", "a list of identical Content-Length values is 400",
     post("/echo", "Content-Length: 3, 3", body=b"abc"), BAD()),
    ("9110 9.3.1", "a body on GET is read and dropped; keep-alive goes on",
     get("/hello.txt", "Content-Length: 5", body=b"xxxxx") + NEXT,
     Expect(200, body=HELLO, then=(HELLO_OK,), close=False)),
    ("9110 9.3.1", "a chunked body on GET is read and dropped",
     get("/hello.txt", "Transfer-Encoding: chunked", body=b"2\r\nxx\r\n0\r\n\r\n") + NEXT,
     Expect(200, body=HELLO, then=(HELLO_OK,), close=False)),
    ("9112 6.3", "a body the handler drops unread is consumed",
     post("/discard", "Content-Length: 3", body=b"abc") + NEXT,
     Expect(200, body=b"discarded", then=(HELLO_OK,), close=False)),

    # -------- 7.1 chunked coding
    ("9112 7.1", "hex chunk sizes, both cases, leading zeros",
     chunked(b"0001\r\na\r\nA\r\n" + b"b" * 10 + b"\r\na\r\n" + b"c" * 10 + b"\r\n0\r\n\r\n"),
     Expect(200, body=b"a" + b"b" * 10 + b"c" * 10, close=False)),
    ("9112 7.1", "a chunk size that is not hex", chunked(b"zz\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "a chunk size with a sign", chunked(b"+3\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "a chunk size that overflows",
     chunked(b"ffffffffffffffffffffff\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "a chunk size of 2^64+3 (wraps to 3 if unchecked)",
     chunked(b"10000000000000003\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "a chunk size with a 0x prefix", chunked(b"0x3\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "an empty chunk size", chunked(b"\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "whitespace after a chunk size without an extension",
     chunked(b"3 \r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "whitespace before a chunk size", chunked(b" 3\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "chunk data longer than its size (no CRLF after it)",
     chunked(b"3\r\nabcd\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1", "chunk data followed by a bare CR", chunked(b"3\r\nabc\rX0\r\n\r\n"), BAD()),
    ("9112 7.1", "the last chunk without the final CRLF: the next request is not taken "
     "as the end", chunked(b"3\r\nabc\r\n0\r\n") + b"GARBAGE\r\n\r\n", BAD()),
    ("9112 7.1.1", "chunk extensions are accepted and ignored",
     chunked(b"3;name=value;flag\r\nabc\r\n0;last=1\r\n\r\n"), ECHO_ABC),
    ("9112 7.1.1", "a quoted chunk extension value with a quoted-pair",
     chunked(b'3;n="a \\" ;b"\r\nabc\r\n0\r\n\r\n'), ECHO_ABC),
    ("9112 7.1.1", "BWS around the extension's ; and =",
     chunked(b"3 ; n = v\r\nabc\r\n0\r\n\r\n"), ECHO_ABC),
    ("9112 7.1.1", "NUL in a chunk extension", chunked(b"3;a=\x00\r\nabc\r\n0\r\n\r\n"),
     BAD()),
    ("9112 7.1.1", "a bare CR in a chunk extension", chunked(b"3;a\rb\r\nabc\r\n0\r\n\r\n"),
     BAD()),
    ("9112 7.1.1", "a malformed chunk extension", chunked(b"3;=v\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1.1", "chunk extensions are bounded (10000 bytes: 400)",
     chunked(b"3;" + b"x" * 10000 + b"\r\nabc\r\n0\r\n\r\n"), BAD()),
    ("9112 7.1.2", "trailer fields are accepted",
     chunked(b"3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\n") + NEXT,
     Expect(200, body=b"abc", then=(HELLO_OK,), close=False)),
    ("9112 7.1.2", "a Content-Length trailer does not change the framing",
     chunked(b"3\r\nabc\r\n0\r\nContent-Length: 100\r\n\r\n") + NEXT,
     Expect(200, body=b"abc", then=(HELLO_OK,), close=False)),
    ("9112 7.1.2", "a Transfer-Encoding trailer does not change the framing",
     chunked(b"3\r\nabc\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n") + NEXT,
     Expect(200, body=b"abc", then=(HELLO_OK,), close=False)),
    ("9112 7.1.2", "whitespace before a trailer field's colon",
     chunked(b"3\r\nabc\r\n0\r\nX-T : 1\r\n\r\n"), BAD()),
    ("9112 7.1.2", "obs-fold in the trailer section",
     chunked(b"3\r\nabc\r\n0\r\nX-T: 1\r\n 2\r\n\r\n"), BAD()),
    ("9112 7.1.2", "a control character in a trailer value",
     chunked(b"3\r\nabc\r\n0\r\nX-T: a\x01\r\n\r\n"), BAD()),
    ("9112 7.1.2", "a malformed trailer line", chunked(b"3\r\nabc\r\n0\r\nno colon\r\n\r\n"),
     BAD()),
    ("9112 7.1.2", "trailer fields are bounded (a 100 KB trailer: 400)",
     chunked(b"3\r\nabc\r\n0\r\nX-T: " + b"t" * 100000 + b"\r\n\r\n"), BAD()),
    ("9112 7.1", "bare LF in chunk framing (as in the rest of the message)",
     chunked(b"3\nabc\n0\n\n"), ECHO_ABC),

    # -------- 9 connection management
    ("9112 9.3", "HTTP/1.1 is persistent by default", get(), HELLO_OK),
    ("9112 9.6", "Connection: close is honoured and echoed",
     get("/hello.txt", "Connection: close") + NEXT,
     Expect(200, headers={"Connection": "close"}, body=HELLO, close=True)),
    ("9112 9.6", "the close option among others, in any case",
     get("/hello.txt", "Connection: keep-alive, CLOSE"),
     Expect(200, headers={"Connection": "close"}, body=HELLO, close=True)),
    ("9112 9.3", "HTTP/1.0 closes by default",
     get(version="HTTP/1.0"), Expect(200, headers={"Connection": "close"}, body=HELLO,
                                     close=True)),
    ("9112 9.3", "HTTP/1.0 with keep-alive is kept",
     get("/hello.txt", "Connection: keep-alive", version="HTTP/1.0"),
     Expect(200, headers={"Connection": "keep-alive"}, body=HELLO, close=False)),
    ("9112 9.3.2", "pipelined requests are answered in order",
     get("/range.txt") + req("HEAD", "/hello.txt") + get("/r204") + get("/echo?n=4"),
     Expect(200, body=RANGE, then=(
         Expect(200, headers={"Content-Length": "6"}, body=b"", method="HEAD"),
         Expect(204, body=b""),
         Expect(200, body=b"GET /echo ?n=4 host=localhost scheme=http version=1001\n"
                          b"host: localhost\n")), close=False)),

    # -------- RFC 9110 9 methods
    ("9110 9.3.1", "GET of a file", get(),
     Expect(200, headers={"Content-Type": "text/plain", "Content-Length": "6",
                          "Accept-Ranges": "bytes"}, body=HELLO, close=False)),
    ("9110 9.3.2", "HEAD: the GET head, no body",
     req("HEAD", "/range.txt") + NEXT,
     Expect(200, headers={"Content-Type": "text/plain", "Content-Length": "36",
                          "ETag": "{ETAG}", "Last-Modified": LM, "Accept-Ranges": "bytes"},
            method="HEAD", body=b"", then=(HELLO_OK,), close=False)),
    ("9110 9.3.2", "HEAD of a missing file: the 404 head, no body",
     req("HEAD", "/missing") + NEXT,
     Expect(404, headers={"Content-Type": "text/html"}, method="HEAD", body=b"",
            then=(HELLO_OK,), close=False)),
    ("9110 15.5.6", "POST to a file: 405 with Allow",
     post("/hello.txt", "Content-Length: 3", body=b"abc") + NEXT,
     Expect(405, headers={"Allow": "GET, HEAD"}, then=(HELLO_OK,), close=False)),
    ("9110 15.5.6", "PUT to a file: 405 with Allow",
     req("PUT", "/hello.txt", ["Content-Length: 3"], body=b"abc"),
     Expect(405, headers={"Allow": "GET, HEAD"}, close=False)),
    ("9110 15.5.6", "DELETE: 405 with Allow", req("DELETE", "/hello.txt"),
     Expect(405, headers={"Allow": "GET, HEAD"}, close=False)),
    ("9110 15.5.6", "PATCH: 405 with Allow", req("PATCH", "/hello.txt"),
     Expect(405, headers={"Allow": "GET, HEAD"}, close=False)),
    ("9110 9.3.8", "TRACE: 405 (not reflected)", req("TRACE", "/hello.txt"),
     Expect(405, headers={"Allow": "GET, HEAD"}, close=False)),
    ("9110 9.3.7", "OPTIONS on a file: 405 with Allow (nginx does the same)",
     req("OPTIONS", "/hello.txt"), Expect(405, headers={"Allow": "GET, HEAD"}, close=False)),
    ("9110 9.1", "an unknown method is 501 (nginx: 405)", req("FOO", "/hello.txt"),
     Expect(501, absent=("Allow",), close=False)),

    # -------- 10.1.1 Expect
    # a server MAY answer 417 to another expectation; nginx ignores it
    ("9110 10.1.1", "an unknown expectation is ignored",
     post("/echo", "Expect: something", "Content-Length: 3", body=b"abc"), ECHO_ABC),
    ("9110 10.1.1", "100-continue without a body: no 100, the response",
     get("/hello.txt", "Expect: 100-continue"), HELLO_OK),
    ("9110 10.1.1", "100-continue with an empty body: no 100, the response",
     post("/echo", "Expect: 100-continue", "Content-Length: 0"),
     Expect(200, body=b"POST /echo ? host=localhost scheme=http version=1001\n"
                      b"host: localhost\nexpect: 100-continue\ncontent-length: 0\n",
            close=False)),
    ("9110 10.1.1", "100-continue is case-insensitive",
     post("/echo", "Expect: 100-Continue", "Content-Length: 3", body=b"abc"), ECHO_ABC),
    ("9110 10.1.1", "an HTTP/1.0 request's 100-continue is ignored",
     post("/echo", "Expect: 100-continue", "Content-Length: 3", "Connection: keep-alive",
          body=b"abc", version="HTTP/1.0"), ECHO_ABC),
    ("9110 10.1.1", "a final response without reading the body says it closes",
     post("/respond", "Expect: 100-continue", "Content-Length: 3"),
     Expect(200, headers={"Connection": "close"}, body=b"Hello, world!", close=True)),
    ("9110 10.1.1", "a 405 without reading the body says it closes",
     post("/hello.txt", "Expect: 100-continue", "Content-Length: 3"),
     Expect(405, headers={"Connection": "close"}, close=True)),

    # -------- 15 status codes and response framing
    ("9110 15.3.5", "204: no body, no Content-Length, kept alive",
     get("/r204") + NEXT, Expect(204, absent=("Content-Length", "Transfer-Encoding",
                                              "Content-Type"),
                                 body=b"", then=(HELLO_OK,), close=False)),
    ("9110 15.4.5", "304 from return: no body",
     get("/r304") + NEXT, Expect(304, absent=("Transfer-Encoding", "Content-Length"), body=b"",
                                 then=(HELLO_OK,), close=False)),
    ("9110 15.5.5", "404 for a missing file, with an HTML body",
     get("/missing"), Expect(404, headers={"Content-Type": "text/html"}, close=False)),
    ("9110 15.5.15", "414 for a long URI, and close",
     get("/" + "a" * 20000), BAD(414)),
    ("6585 5", "431 for a large field, and close",
     get("/hello.txt", "X-Big: " + "b" * 20000), BAD(431)),
    ("6585 5", "431 for too many fields, and close",
     get("/hello.txt", *["X-H%d: %s" % (i, "v" * 1000) for i in range(100)]), BAD(431)),
    ("9110 15.5.14", "413 for a body over the limit, not read: close",
     post("/small", "Content-Length: 100", body=b"x" * 100), BAD(413)),
    ("9110 15.5.14", "413 for an announced body over the limit, Expect: no 100",
     post("/small", "Content-Length: 100", "Expect: 100-continue"), BAD(413)),
    ("9110 15.5.14", "413 for a chunked body over the limit: close",
     chunked(b"14\r\n" + b"x" * 20 + b"\r\n0\r\n\r\n", "/small"), BAD(413)),

    # -------- 4, 3986 the target's path
    ("3986 2.1", "percent-encoded octets are decoded", get("/%68%65llo.txt"), HELLO_OK),
    ("3986 2.1", "percent-encoding is case-insensitive", get("/%68%65%6C%6c%6F.txt"),
     HELLO_OK),
    ("3986 2.1", "a bad percent-encoding", get("/hello%zz.txt"), BAD()),
    ("3986 2.1", "a truncated percent-encoding", get("/hello.txt%4"), BAD()),
    ("3986 2.1", "an encoded NUL", get("/hello.txt%00.html"), BAD()),
    ("3986 2.2", "an encoded slash does not separate segments of a file path "
     "(nginx: decoded, served)", get("/d%2Findex.html"), BAD()),
    ("3986 2.2", "an encoded slash in lower case", get("/d%2findex.html"), BAD()),
    ("3986 2.2", "an encoded slash in an absolute-form target",
     get("http://localhost/d%2Findex.html"), BAD()),
    ("3986 2.2", "an encoded slash after other encodings", get("/%64%2e%2E/d%2Findex.html"),
     BAD()),
    ("3986 2.2", "an encoded '%' before \"2F\" is no slash (the file \"d%2Findex.html\")",
     get("/d%252Findex.html"), Expect(404, close=False)),
    ("3986 2.2", "an encoded slash in the query is fine", get("/hello.txt?p=%2F"), HELLO_OK),
    ("3986 2.2", "an encoded slash in the query after a '%' of the path",
     get("/%68ello.txt?p=%2f"), HELLO_OK),
    ("3986 5.2.4", "dot-segments are removed", get("/d/../d/./index.html"),
     Expect(200, body=b"index\n", close=False)),
    ("3986 5.2.4", "encoded dot-segments are removed", get("/d/%2e%2E/hello.txt"), HELLO_OK),
    ("3986 5.2.4", "a dot-segment above the root", get("/../hello.txt"), BAD()),
    ("3986 5.2.4", "an encoded dot-segment above the root", get("/%2e%2e/hello.txt"), BAD()),
    ("9110 4.2.3", "the query does not change the file",
     get("/hello.txt?../../../etc/passwd"), HELLO_OK),
    ("9110 4.2.3", "an empty query", get("/hello.txt?"), HELLO_OK),

    # -------- 13 conditional requests (ETag of /range.txt is {ETAG})
    ("9110 13.1.2", "If-None-Match with the ETag: 304",
     cond("If-None-Match: {ETAG}"), NOT_MODIFIED),
    ("9110 13.1.2", "If-None-Match uses weak comparison: W/ETag matches",
     cond("If-None-Match: W/{ETAG}"), NOT_MODIFIED),
    ("9110 13.1.2", "If-None-Match: the ETag in a list",
     cond('If-None-Match: "a", W/"b",{ETAG}'), NOT_MODIFIED),
    ("9110 13.1.2", "If-None-Match over two field lines",
     cond('If-None-Match: "a"', "If-None-Match: {ETAG}"), NOT_MODIFIED),
    ("9110 13.1.2", "If-None-Match: *", cond("If-None-Match: *"), NOT_MODIFIED),
    ("9110 13.1.2", "If-None-Match with other tags: 200",
     cond('If-None-Match: "other", W/"x"'), FULL),
    ("9110 13.1.2", "If-None-Match on HEAD: 304",
     cond("If-None-Match: {ETAG}", method="HEAD"),
     Expect(304, headers={"ETag": "{ETAG}"}, body=b"", method="HEAD", close=False)),
    ("9110 13.1.1", "If-Match with the ETag (strong): 200", cond("If-Match: {ETAG}"), FULL),
    ("9110 13.1.1", "If-Match uses strong comparison: W/ETag never matches",
     cond("If-Match: W/{ETAG}"), FAILED),
    ("9110 13.1.1", "If-Match: * with a representation", cond("If-Match: *"), FULL),
    ("9110 13.1.1", "If-Match with other tags: 412", cond('If-Match: "other"'), FAILED),
    ("9110 13.1.1", "If-Match: the ETag in a list", cond('If-Match: "a", {ETAG}'), FULL),
    ("9110 13.1.4", "If-Unmodified-Since before Last-Modified: 412",
     cond("If-Unmodified-Since: Wed, 01 Jan 2020 00:00:00 GMT"), FAILED),
    ("9110 13.1.4", "If-Unmodified-Since equal to Last-Modified: 200",
     cond("If-Unmodified-Since: " + LM), FULL),
    ("9110 13.1.4", "If-Unmodified-Since after Last-Modified: 200",
     cond("If-Unmodified-Since: Sat, 01 Jan 2022 00:00:00 GMT"), FULL),
    ("9110 13.1.4", "an invalid If-Unmodified-Since is ignored",
     cond("If-Unmodified-Since: yesterday"), FULL),
    ("9110 13.1.3", "If-Modified-Since equal to Last-Modified: 304",
     cond("If-Modified-Since: " + LM), NOT_MODIFIED),
    ("9110 13.1.3", "If-Modified-Since after Last-Modified: 304 (nginx's default: 200)",
     cond("If-Modified-Since: Sat, 01 Jan 2022 00:00:00 GMT"), NOT_MODIFIED),
    ("9110 13.1.3", "if_modified_since exact: only the same date is a 304",
     cond("If-Modified-Since: Sat, 01 Jan 2022 00:00:00 GMT", target="/exact/f.txt"),
     Expect(200, body=b"exact\n", close=False)),
    ("9110 13.1.3", "If-Modified-Since before Last-Modified: 200",
     cond("If-Modified-Since: Wed, 01 Jan 2020 00:00:00 GMT"), FULL),
    ("9110 13.1.3", "If-Modified-Since in the future is invalid: 200",
     cond("If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT"), FULL),
    ("9110 13.1.3", "an invalid If-Modified-Since is ignored",
     cond("If-Modified-Since: not a date"), FULL),
    ("9110 5.6.7", "If-Modified-Since in the obsolete RFC 850 format",
     cond("If-Modified-Since: Thursday, 02-Jan-20 03:04:05 GMT"), NOT_MODIFIED),
    ("9110 5.6.7", "If-Modified-Since in the obsolete asctime format",
     cond("If-Modified-Since: Thu Jan  2 03:04:05 2020"), NOT_MODIFIED),
    ("9110 13.2.2", "If-Match fails before If-None-Match matches: 412",
     cond('If-Match: "other"', "If-None-Match: {ETAG}"), FAILED),
    ("9110 13.2.2", "If-Unmodified-Since fails before If-None-Match matches: 412",
     cond("If-Unmodified-Since: Wed, 01 Jan 2020 00:00:00 GMT", "If-None-Match: *"), FAILED),
    ("9110 13.2.2", "If-Unmodified-Since is ignored when If-Match is there",
     cond("If-Match: {ETAG}", "If-Unmodified-Since: Wed, 01 Jan 2020 00:00:00 GMT"), FULL),
    ("9110 13.2.2", "If-Modified-Since is ignored when If-None-Match is there",
     cond('If-None-Match: "other"', "If-Modified-Since: " + LM), FULL),
    ("9110 13.2.2", "If-None-Match decides even when If-Modified-Since is old",
     cond("If-None-Match: {ETAG}", "If-Modified-Since: Wed, 01 Jan 2020 00:00:00 GMT"),
     NOT_MODIFIED),
    ("9110 13.2.1", "preconditions do not apply to a 404",
     cond("If-Match: \"x\"", "If-None-Match: *", target="/missing"),
     Expect(404, close=False)),
    ("9110 13.2.1", "preconditions do not apply to a 405",
     cond("If-None-Match: *", "Content-Length: 0", method="POST"),
     Expect(405, close=False)),
    ("9110 13.1.3", "If-Modified-Since is for GET and HEAD only: a 405 stays",
     cond("If-Modified-Since: " + LM, "Content-Length: 0", method="POST"),
     Expect(405, close=False)),

    # -------- 14 range requests
    ("9110 14.2", "bytes=0-0", rng("bytes=0-0"), PART(0, 0)),
    ("9110 14.1.1", "a closed range", rng("bytes=3-9"), PART(3, 9)),
    ("9110 14.1.1", "an open range N-", rng("bytes=30-"), PART(30, 35)),
    ("9110 14.1.1", "a suffix range -N", rng("bytes=-5"), PART(31, 35)),
    ("9110 14.1.1", "a suffix longer than the representation is all of it",
     rng("bytes=-100"), PART(0, 35)),
    ("9110 14.1.1", "a last-pos past the end is clamped", rng("bytes=30-1000"), PART(30, 35)),
    ("9110 14.1.1", "a last-pos too large for any integer is clamped",
     rng("bytes=0-99999999999999999999999"), PART(0, 35)),
    ("9110 14.1", "the range unit is case-insensitive", rng("BYTES=0-0"), PART(0, 0)),
    ("9110 14.1.1", "an empty list element is ignored", rng("bytes=0-0,"), PART(0, 0)),
    ("9110 14.1.1", "one satisfiable range among unsatisfiable ones: a single part",
     rng("bytes=0-1,50-60"), PART(0, 1)),
    ("9110 14.6", "several ranges: multipart/byteranges",
     rng("bytes=0-1,5-7,-2"), multipart((0, 1), (5, 7), (34, 35))),
    ("9110 5.6.1", "OWS around the commas of the list",
     rng("bytes=0-1 ,\t5-7"), multipart((0, 1), (5, 7))),
    # 14.2 lets a server coalesce overlapping ranges (MAY); we send them as asked
    ("9110 14.3", "overlapping ranges are served as asked",
     rng("bytes=0-5,3-8"), multipart((0, 5), (3, 8))),
    ("9110 14.2", "more than 16 ranges: Range is ignored (nginx: max_ranges)",
     rng("bytes=" + ",".join("%d-%d" % (i, i) for i in range(17))), FULL),
    ("9110 14.1.1", "unsatisfiable: first-pos at the end", rng("bytes=36-"), UNSATISFIABLE),
    ("9110 14.1.1", "unsatisfiable: a zero suffix", rng("bytes=-0"), UNSATISFIABLE),
    ("9110 14.1.1", "unsatisfiable: all ranges past the end",
     rng("bytes=40-50,60-70"), UNSATISFIABLE),
    ("9110 14.1.1", "unsatisfiable: a huge first-pos",
     rng("bytes=99999999999999999999999-"), UNSATISFIABLE),
    # 14.2: a server MAY ignore or reject an invalid ranges-specifier;
    # nginx rejects it (416), and takes whitespace around the numbers
    ("9110 14.2", "an invalid range (last < first) is 416", rng("bytes=5-3"), UNSATISFIABLE),
    ("9110 14.2", "an invalid range beside a valid one is skipped",
     rng("bytes=5-3,0-1"), PART(0, 1)),
    ("9110 14.2", "a range that is not numbers is 416", rng("bytes=abc"), UNSATISFIABLE),
    ("9110 14.2", "whitespace after = is taken", rng("bytes= 0-1"), PART(0, 1)),
    ("9110 14.2", "no = after the unit is invalid: ignored", rng("bytes 0-1"), FULL),
    ("9110 14.2", "an empty range set is ignored", rng("bytes="), FULL),
    ("9110 14.2", "another unit is ignored", rng("items=0-1"), FULL),
    ("9110 14.2", "Range on HEAD is ignored (defined for GET only)",
     req("HEAD", "/range.txt", ["Range: bytes=0-1"]),
     Expect(200, headers={"Content-Length": "36", "Accept-Ranges": "bytes"},
            absent=("Content-Range",), method="HEAD", body=b"", close=False)),
    ("9110 14.2", "Range on a response without ranges is ignored",
     get("/respond", "Range: bytes=0-1"),
     Expect(200, absent=("Content-Range", "Accept-Ranges"), body=b"Hello, world!",
            close=False)),
    ("9110 13.1.5", "If-Range with the strong ETag: 206",
     rng("bytes=0-1", "If-Range: {ETAG}"), PART(0, 1)),
    ("9110 13.1.5", "If-Range with the weak form of the ETag: 200 (strong comparison)",
     rng("bytes=0-1", "If-Range: W/{ETAG}"), FULL),
    ("9110 13.1.5", "If-Range with another ETag: 200", rng("bytes=0-1", 'If-Range: "x"'), FULL),
    ("9110 13.1.5", "If-Range with Last-Modified: 206", rng("bytes=0-1", "If-Range: " + LM),
     PART(0, 1)),
    ("9110 13.1.5", "If-Range with another date: 200",
     rng("bytes=0-1", "If-Range: Thu, 02 Jan 2020 03:04:06 GMT"), FULL),
    ("9110 13.1.5", "If-Range that is neither: 200", rng("bytes=0-1", "If-Range: soon"), FULL),
    ("9110 13.2.2", "If-None-Match is evaluated before Range: 304",
     rng("bytes=0-1", "If-None-Match: {ETAG}"), NOT_MODIFIED),
    ("9110 13.2.2", "If-Match is evaluated before Range: 412",
     rng("bytes=99-", 'If-Match: "x"'), FAILED),
]


# ---------------------------------------------------------------- running a row

def subst(data, srv):
    return data.replace(b"{ETAG}", srv.etag.encode())


def check_common(r, method):
    """What every response must have, whatever the request."""
    if r.status >= 200:
        assert h.IMF_FIXDATE.match(r.header("Date") or ""), ("Date", r)
    assert r.header("Server"), ("Server", r)
    assert len(r.headers_all("Content-Length")) <= 1, r
    assert not (r.header("Content-Length") and r.header("Transfer-Encoding")), r
    if r.status < 200 or r.status == 204:
        assert r.header("Content-Length") is None and r.header("Transfer-Encoding") is None, r
    if r.status >= 200 and method != "HEAD" and r.status not in (204, 304) \
            and r.header("Transfer-Encoding") is None:
        assert r.header("Content-Length") == str(len(r.body)), r


def check_response(c, exp, srv, what):
    r = c.read_response(exp.method)
    assert r is not None, "%s: closed without a response" % what
    check_common(r, exp.method)
    assert r.status in exp.status, "%s: expected %s, got %r" % (what, exp.status, r)
    for name, value in exp.headers.items():
        got = r.header(name)
        if value is None:
            assert got is not None, "%s: no %s in %r" % (what, name, r)
        else:
            assert got == value.replace("{ETAG}", srv.etag), \
                "%s: %s is %r, expected %r" % (what, name, got, value)
    for name in exp.absent:
        assert r.header(name) is None, "%s: unexpected %s in %r" % (what, name, r)
    if exp.body is not None:
        assert r.body == exp.body, "%s: body %r" % (what, r.body[:300])
    if exp.check:
        exp.check(r)
    return r


def run_row(srv, data, exp, what):
    with h.Conn(srv.port) as c:
        try:
            c.send(subst(data, srv))
        except OSError:
            pass                # the server may answer and close before reading all
        check_response(c, exp, srv, what)
        for nxt in exp.then:
            check_response(c, nxt, srv, what + " (pipelined)")
        if exp.close is True:
            assert c.closed_within(3.0), "%s: connection left open" % what
        elif exp.close is False:
            c.send(NEXT)
            check_response(c, Expect(200, body=HELLO), srv, what + " (then a new request)")


@pytest.mark.parametrize("sec,what,data,exp", [
    pytest.param(*r, id="%s %s" % (r[0], r[1])) for r in ROWS])
def test_row(srv, sec, what, data, exp):
    run_row(srv, data, exp, "%s %s" % (sec, what))


# ---------------------------------------------------------------- sequences

def test_9110_10_1_1_100_continue_then_body(srv):
    """100 Continue is sent when the body is wanted, once, before the final
    response; the body sent after it is the request's."""
    with h.Conn(srv.port) as c:
        c.send(post("/echo", "Expect: 100-continue", "Content-Length: 3"))
        r = c.read_response()
        assert r is not None and r.status == 100 and r.version == "HTTP/1.1", r
        assert r.header("Content-Length") is None and r.body == b"", r
        c.send(b"abc")
        check_response(c, ECHO_ABC, srv, "after 100")
        c.send(NEXT)
        check_response(c, HELLO_OK, srv, "then a new request")


def test_9110_10_1_1_100_continue_chunked(srv):
    with h.Conn(srv.port) as c:
        c.send(post("/echo", "Expect: 100-continue", "Transfer-Encoding: chunked"))
        r = c.read_response()
        assert r is not None and r.status == 100, r
        c.send(b"3\r\nabc\r\n0\r\n\r\n")
        check_response(c, ECHO_ABC, srv, "after 100")


def test_9110_10_1_1_no_100_for_a_body_already_sent(srv):
    """The server MAY omit 100 when the body arrived with the head; no 100
    may come after the final response."""
    with h.Conn(srv.port) as c:
        c.send(post("/echo", "Expect: 100-continue", "Content-Length: 3", body=b"abc") + NEXT)
        r = c.read_response()
        if r is not None and r.status == 100:
            r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"abc", r
        check_response(c, HELLO_OK, srv, "pipelined")


def test_9112_9_6_close_after_the_response_even_with_more_pipelined(srv):
    """Connection: close: later requests in the same bytes are not answered."""
    with h.Conn(srv.port) as c:
        c.send(get("/hello.txt", "Connection: close") + NEXT + NEXT)
        check_response(c, Expect(200, headers={"Connection": "close"}, body=HELLO), srv, "1")
        assert c.closed_within(3.0)


def test_9112_9_3_request_split_byte_by_byte(srv):
    """A request arriving one byte at a time is the same request."""
    import time
    data = chunked(b"3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n")
    with h.Conn(srv.port) as c:
        c.sock.setsockopt(6, 1, 1)           # TCP_NODELAY
        for i in range(len(data)):
            c.send(data[i:i + 1])
            if i % 16 == 0:
                time.sleep(0.001)
        check_response(c, ECHO_ABC, srv, "byte by byte")


def test_9110_8_8_validators_format(srv):
    """Last-Modified is an IMF-fixdate, the ETag an opaque-tag; both are the
    same on GET, HEAD, 206 and 304."""
    with h.Conn(srv.port) as c:
        c.send(get("/range.txt"))
        r = check_response(c, FULL, srv, "GET")
    assert h.IMF_FIXDATE.match(r.header("Last-Modified")), r
    assert r.header("Last-Modified") == LM
    assert re.match(r'^(W/)?"[\x21\x23-\x7e\x80-\xff]*"$', r.header("ETag")), r


def test_9110_8_8_2_last_modified_never_after_date(srv):
    """A file dated tomorrow: Last-Modified is the Date, not the future;
    the ETag still follows the file."""
    import email.utils
    with h.Conn(srv.port) as c:
        c.send(get("/future.txt"))
        r = check_response(c, Expect(200, body=b"from the future\n"), srv, "future")
    lm = email.utils.parsedate_to_datetime(r.header("Last-Modified"))
    date = email.utils.parsedate_to_datetime(r.header("Date"))
    assert lm <= date, r
    with h.Conn(srv.port) as c:      # the ETag validates it
        c.send(get("/future.txt", "If-None-Match: " + r.header("ETag")))
        check_response(c, Expect(304, headers={"ETag": r.header("ETag")}, body=b""),
                       srv, "future 304")


def test_9110_6_6_1_date_on_error_responses(srv):
    for data, status in ((get(version="HTTP/2.0"), 505), (get(host=None), 400),
                         (req("FOO", "/hello.txt"), 501),
                         (post("/small", "Content-Length: 100"), 413)):
        with h.Conn(srv.port) as c:
            c.send(data)
            r = c.read_response()
            assert r is not None and r.status == status, r
            check_common(r, "GET")
            assert (r.header("Content-Type") or "").startswith("text/html"), r


@pytest.mark.parametrize("target", ["/hello.txt", "/range.txt", "/missing", "/d", "/d/",
                                    "/respond", "/r204", "/echo?x=1"])
def test_9110_9_3_2_head_has_the_get_head(srv, target):
    """HEAD: the same status and fields as GET (Date aside), no body."""
    with h.Conn(srv.port) as c:
        c.send(get(target) + req("HEAD", target) + NEXT)
        g = c.read_response()
        hd = c.read_response("HEAD")
        check_response(c, HELLO_OK, srv, "after HEAD")
    assert g.status == hd.status, (g, hd)

    def fields(r):
        return [(k.lower(), v) for k, v in r.headers if k.lower() not in ("date",)]
    if target.startswith("/echo"):
        # the echo names the method, so the length differs by len("HEAD")-len("GET")
        assert int(hd.header("Content-Length")) == int(g.header("Content-Length")) + 1
        return
    assert fields(g) == fields(hd), (g, hd)
