"""Odd and malformed requests, side by side: nginx 1.22 and scalwsd run the
same configuration and get the same bytes over raw sockets; their status
codes (and the headers that go with them) are compared.

Each row names what nginx answers and what scalwsd answers. Where the two
are the same, the row checks both; where they differ, the difference is
one kept on purpose with the RFC's reason (docs/compat.md, "Differences
kept on purpose"), and the row checks that each server still answers as
documented.
"""
import calendar
import os

import pytest

import swsharness as h
from test_nginx_sites import NGINX, start_server

SITE = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @ROOT@;
        location = /text { return 200 "text\\n"; }
        location = /tagged {
            add_header ETag '"x"';
            return 200 "text\\n";
        }
        location / { }
    }
"""

BODY = b"0123456789"
MTIME = calendar.timegm((2020, 1, 2, 3, 4, 5))
LM = "Thu, 02 Jan 2020 03:04:05 GMT"
BEFORE = "Wed, 01 Jan 2020 00:00:00 GMT"
AFTER = "Fri, 03 Jan 2020 00:00:00 GMT"
ETAG = '"%x-%x"' % (MTIME, len(BODY))


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    tmp = tmp_path_factory.mktemp("compat2")
    root = tmp / "root"
    root.mkdir()
    for name, data in (("f.txt", BODY), ("empty.txt", b"")):
        (root / name).write_bytes(data)
        os.utime(root / name, (MTIME, MTIME))
    h.make_traversable(tmp)
    running, out = [], []
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp / who
            d.mkdir()
            port = h.free_port()
            site = SITE.replace("@PORT@", str(port)).replace("@ROOT@", str(root))
            running.append(start_server(who, d, port, site))
            out.append(port)
        yield out
    finally:
        for r in running:
            r.stop()


def raw(line, *fields, host="localhost", body=b""):
    """Request bytes: the request line, Host (None: none), fields as raw
    lines."""
    out = line.encode("latin-1") + b"\r\n"
    if host is not None:
        out += b"Host: " + host.encode("latin-1") + b"\r\n"
    for f in fields:
        out += f.encode("latin-1") + b"\r\n"
    return out + b"\r\n" + body


def get(target, *fields, **kw):
    return raw("GET %s HTTP/1.1" % target, *fields, **kw)


def head(target, *fields, **kw):
    return raw("HEAD %s HTTP/1.1" % target, *fields, **kw)


def post(target, *fields, body=b"hello", **kw):
    return raw("POST %s HTTP/1.1" % target, *fields, body=body, **kw)


def rng(value, target="/f.txt"):
    return get(target, "Range: " + value)


def method_of(data):
    return data.split(b" ", 1)[0].decode("latin-1")


def answer(port, data):
    """The status and the response (None: closed without an answer)."""
    r = h.exchange(port, data, method=method_of(data), timeout=5)
    return (None if r is None else r.status), r


# Compared whenever the statuses agree; Content-Length and Content-Type only
# below 400 (the error pages carry the server's name).
COMPARED = ("content-range", "etag", "last-modified", "location")
COMPARED_OK = ("content-length", "content-type")


def multipart(r):
    return (r.header("content-type") or "").startswith("multipart/byteranges")


def check(ports, what, data, nginx, scalwsd):
    """The row's answers, or what differs from them (a list of strings)."""
    (sn, rn), (ss, rs) = (answer(p, data) for p in ports)
    if sn != nginx:
        return ["%s: nginx answers %r (the row says %s)" % (what, rn, nginx)]
    if ss != scalwsd:
        return ["%s: scalwsd answers %r (the row says %s; nginx %r)" % (what, rs, scalwsd, rn)]
    if nginx != scalwsd or rn is None:
        return []
    bad = []
    names = COMPARED + (COMPARED_OK if nginx < 400 else ())
    for name in names:
        vn, vs = rn.header(name), rs.header(name)
        if name in ("content-type", "content-length") and multipart(rn):
            # the boundary is random in scalwsd (docs/compat.md)
            vn, vs = (v and v.split(";")[0] if name == "content-type" else None
                      for v in (vn, vs))
        if vn != vs:
            bad.append("%s: %s is %r, nginx's %r" % (what, name, vs, vn))
    if nginx < 300 and method_of(data) != "HEAD" and not multipart(rn) and rs.body != rn.body:
        bad.append("%s: the body is %r, nginx's %r" % (what, rs.body[:100], rn.body[:100]))
    return bad


def run_rows(ports, rows):
    bad = []
    for what, data, nginx, scalwsd in rows:
        bad += check(ports, what, data, nginx, scalwsd)
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------- 1. Host

HOST_ROWS = [
    ("Host: with nothing", raw("GET /text HTTP/1.1", "Host:", host=None), 400, 400),
    ("Host: and a space", get("/text", host=""), 400, 400),
    ("Host: and whitespace", raw("GET /text HTTP/1.1", "Host: \t ", host=None), 400, 400),
    ("HTTP/1.0, an empty Host", raw("GET /text HTTP/1.0", "Host:", host=None), 400, 400),
    ("HTTP/1.0 without Host", raw("GET /text HTTP/1.0", host=None), 200, 200),
    ("absolute-form, an empty Host",
     raw("GET http://localhost/text HTTP/1.1", "Host:", host=None), 400, 400),
    ("absolute-form, HTTP/1.1 without Host",
     raw("GET http://localhost/text HTTP/1.1", host=None), 400, 400),
    ("absolute-form, HTTP/1.0 without Host",
     raw("GET http://localhost/text HTTP/1.0", host=None), 200, 200),
    ("Host: a dot", get("/text", host="."), 400, 400),
    ("Host: a port alone", get("/text", host=":80"), 400, 400),
    ("Host: a name and a final dot", get("/text", host="localhost."), 200, 200),
]


def test_empty_host(ports):
    """An empty Host: 400 on every version and beside an absolute-form
    target, as nginx (RFC 9112 3.3: an http target URI has a host)."""
    run_rows(ports, HOST_ROWS)


# ---------------------------------------------------------------- 2, 3. Range

RANGE_ROWS = [
    ("first > last", rng("bytes=3-1"), 416, 416),
    ("first > last, beside a valid range", rng("bytes=3-1,0-1"), 206, 206),
    ("first = last + 1", rng("bytes=1-0"), 416, 416),
    ("SP after =", rng("bytes= 0-3"), 206, 206),
    ("SP around the dash", rng("bytes=0 - 3"), 206, 206),
    ("SP after a comma", rng("bytes=0-1, 3-4"), 206, 206),
    ("SP inside a suffix range", rng("bytes=- 3"), 416, 416),
    ("SP before a suffix range", rng("bytes= -3"), 206, 206),
    ("not numbers", rng("bytes=abc"), 416, 416),
    ("a bad range after a good one", rng("bytes=0-1,x"), 416, 416),
    ("a lone comma", rng("bytes=,"), 416, 416),
    ("a dash alone", rng("bytes=-"), 416, 416),
    ("three numbers", rng("bytes=1-2-3"), 416, 416),
    ("overlapping ranges longer than the file", rng("bytes=0-5,3-8"), 200, 200),
    ("overlapping ranges within the file", rng("bytes=0-2,1-3"), 206, 206),
    ("no = after the unit", rng("bytes 0-1"), 200, 200),
    ("nothing after =", rng("bytes="), 200, 200),
    ("another unit", rng("items=0-1"), 200, 200),
    ("an empty file from 0", rng("bytes=0-", "/empty.txt"), 200, 200),
    ("an empty file, a suffix", rng("bytes=-5", "/empty.txt"), 200, 200),
    ("an empty file from 1", rng("bytes=1-", "/empty.txt"), 416, 416),
    ("past the end", rng("bytes=10-"), 416, 416),
    # kept: RFC 9110 5.6.1.2 (empty list elements are ignored) and 5.6.1
    # (OWS is SP or HTAB around a list's commas)
    ("an empty list element", rng("bytes=0-1,,3-4"), 416, 206),
    ("a trailing comma", rng("bytes=0-1,"), 416, 206),
    ("HTAB after a comma", rng("bytes=0-1,\t3-4"), 416, 206),
    # kept: RFC 9110 14.1.1 (a last-pos past the end is the rest)
    ("a last-pos past 2^63", rng("bytes=0-99999999999999999999"), 416, 206),
]


def test_range(ports):
    """Range values nginx reads otherwise than RFC 9110's grammar: first >
    last and a list that does not parse are 416, whitespace is taken."""
    run_rows(ports, RANGE_ROWS)


# ---------------------------------------------------------------- 4, 5. the head's syntax

SYNTAX_ROWS = [
    # kept: RFC 9112 3 (an invalid request-line SHOULD be a 400, not
    # corrected: a fragment is never sent)
    ("a fragment", get("/f.txt#top"), 200, 400),
    ("a fragment after a query", get("/f.txt?a=1#top"), 200, 400),
    # kept: RFC 9112 2.2 and 5 (a field line without a colon is invalid)
    ("a field line without a colon", get("/text", "Foo"), 200, 400),
    ("a field name with a space, no colon", get("/text", "Foo bar"), 400, 400),
    ("obs-fold", get("/text", "X-A: a", " folded"), 400, 400),
    ("obs-fold with a tab", get("/text", "X-A: a", "\tfolded"), 400, 400),
    ("whitespace before the first field",
     raw("GET /text HTTP/1.1", " X-A: a", "Host: localhost", host=None), 400, 400),
    ("whitespace before the colon", get("/text", "X-A : b"), 400, 400),
    ("an empty field name", get("/text", ": b"), 400, 400),
    ("an underscore in a field name (ignored)", get("/text", "X_A: b"), 200, 200),
    # kept: RFC 9110 5.1 (a field name is a token)
    ("a field name with a parenthesis", get("/text", "X-(A): b"), 200, 400),
]


def test_request_syntax(ports):
    run_rows(ports, SYNTAX_ROWS)


# ---------------------------------------------------------------- 6, 7. Content-Length, Expect

BODY_ROWS = [
    ("two identical Content-Length lines",
     post("/text", "Content-Length: 5", "Content-Length: 5"), 400, 400),
    ("a Content-Length list of one value", post("/text", "Content-Length: 5, 5"), 400, 400),
    ("two different Content-Length lines",
     post("/text", "Content-Length: 5", "Content-Length: 6"), 400, 400),
    ("one Content-Length", post("/text", "Content-Length: 5"), 200, 200),
    ("an unknown expectation with a body",
     post("/text", "Expect: foo", "Content-Length: 5"), 200, 200),
    ("an unknown expectation without a body", get("/text", "Expect: foo"), 200, 200),
    ("HTTP/1.0, an unknown expectation",
     raw("GET /text HTTP/1.0", "Expect: foo"), 200, 200),
    ("100-continue in a list", post("/text", "Expect: 100-continue, foo", "Content-Length: 5"),
     200, 200),
]


def test_content_length_and_expect(ports):
    run_rows(ports, BODY_ROWS)


# ---------------------------------------------------------------- 8. conditional requests

COND_ROWS = [
    # return 200 TEXT: no validators
    ("return: If-None-Match *", get("/text", "If-None-Match: *"), 304, 304),
    ("return: If-None-Match a tag", get("/text", 'If-None-Match: "x"'), 200, 200),
    ("return: If-Match *", get("/text", "If-Match: *"), 200, 200),
    ("return: If-Match a tag", get("/text", 'If-Match: "x"'), 412, 412),
    ("return: If-Modified-Since", get("/text", "If-Modified-Since: " + LM), 200, 200),
    ("return: HEAD, If-None-Match *", head("/text", "If-None-Match: *"), 304, 304),
    ("return: HEAD, If-Match a tag", head("/text", 'If-Match: "x"'), 412, 412),
    ("return: If-None-Match * and If-Match *",
     get("/text", "If-None-Match: *", "If-Match: *"), 304, 304),
    # add_header's ETag is added after the check, in both
    ("add_header ETag: If-None-Match that tag", get("/tagged", 'If-None-Match: "x"'),
     200, 200),
    ("add_header ETag: If-Match that tag", get("/tagged", 'If-Match: "x"'), 412, 412),
    # kept: RFC 9110 13.1.4 (If-Unmodified-Since is ignored without a
    # modification date, with an invalid date, and beside If-Match)
    ("return: If-Unmodified-Since", get("/text", "If-Unmodified-Since: " + LM), 412, 200),
    ("return: If-Unmodified-Since not a date", get("/text", "If-Unmodified-Since: soon"),
     412, 200),
    ("file: If-Unmodified-Since not a date", get("/f.txt", "If-Unmodified-Since: soon"),
     412, 200),
    ("file: If-Match that matches, If-Unmodified-Since before",
     get("/f.txt", "If-Match: " + ETAG, "If-Unmodified-Since: " + BEFORE), 412, 200),
    # kept: RFC 9110 13.1.3 (If-Modified-Since is ignored beside
    # If-None-Match)
    ("return: If-None-Match * and If-Modified-Since",
     get("/text", "If-None-Match: *", "If-Modified-Since: " + LM), 200, 304),
    ("file: If-None-Match that matches, If-Modified-Since before",
     get("/f.txt", "If-None-Match: " + ETAG, "If-Modified-Since: " + BEFORE), 200, 304),
    # kept: if_modified_since's default is before (RFC 9110 13.1.3), exact in nginx
    ("file: If-Modified-Since after", get("/f.txt", "If-Modified-Since: " + AFTER), 200, 304),
    # the same in both
    ("file: If-Unmodified-Since before", get("/f.txt", "If-Unmodified-Since: " + BEFORE),
     412, 412),
    ("file: If-Unmodified-Since the same", get("/f.txt", "If-Unmodified-Since: " + LM),
     200, 200),
    ("file: If-Modified-Since the same", get("/f.txt", "If-Modified-Since: " + LM), 304, 304),
    ("file: If-None-Match that matches", get("/f.txt", "If-None-Match: " + ETAG), 304, 304),
    ("file: If-Match another tag", get("/f.txt", 'If-Match: "x"'), 412, 412),
    # kept: preconditions are evaluated for GET and HEAD (RFC 9110 13.1.1:
    # against the state before the method; a response's validators are not it)
    ("return: POST, If-Match a tag", post("/text", 'If-Match: "x"', "Content-Length: 5"),
     412, 200),
]


def test_conditional_requests(ports):
    run_rows(ports, COND_ROWS)


# ---------------------------------------------------------------- more odd requests

MORE_ROWS = [
    ("absolute-form", get("http://localhost/f.txt"), 200, 200),
    ("absolute-form, another host", get("http://other.test/f.txt"), 200, 200),
    ("absolute-form https", get("https://localhost/f.txt"), 200, 200),
    # kept: RFC 9110 4.2 and 7.4 (another scheme is not this server's
    # resource; nginx takes any scheme)
    ("absolute-form, another scheme", get("ftp://localhost/f.txt"), 200, 400),
    (".. above the root", get("/../f.txt"), 400, 400),
    (".. inside", get("/a/../f.txt"), 200, 200),
    ("%2e%2e above the root", get("/%2e%2e/f.txt"), 400, 400),
    ("%2e%2e inside", get("/a/%2e%2e/f.txt"), 200, 200),
    ("//", get("//f.txt"), 200, 200),
    ("/./", get("/./f.txt"), 200, 200),
    ("an encoded NUL", get("/f.txt%00"), 400, 400),
    ("chunked", post("/text", "Transfer-Encoding: chunked", body=b"5\r\nhello\r\n0\r\n\r\n"),
     200, 200),
    ("Chunked", post("/text", "Transfer-Encoding: Chunked", body=b"5\r\nhello\r\n0\r\n\r\n"),
     200, 200),
    ("gzip", post("/text", "Transfer-Encoding: gzip"), 501, 501),
    ("gzip, chunked", post("/text", "Transfer-Encoding: gzip, chunked",
                           body=b"5\r\nhello\r\n0\r\n\r\n"), 501, 501),
    ("chunked and Content-Length",
     post("/text", "Transfer-Encoding: chunked", "Content-Length: 5",
          body=b"5\r\nhello\r\n0\r\n\r\n"), 400, 400),
    ("chunked on HTTP/1.0", raw("POST /text HTTP/1.0", "Transfer-Encoding: chunked",
                                body=b"5\r\nhello\r\n0\r\n\r\n"), 400, 400),
    ("HTTP/1.2", raw("GET /f.txt HTTP/1.2"), 200, 200),
    ("HTTP/2.0 on an HTTP/1 connection", raw("GET /f.txt HTTP/2.0"), 505, 505),
    ("HTTP/3.0", raw("GET /f.txt HTTP/3.0"), 505, 505),
    ("a long URI", get("/" + "a" * 9000), 414, 414),
    ("a 7000-byte field value", get("/text", "X-A: " + "v" * 7000), 200, 200),
    ("a NUL in a field value", get("/text", "X-A: a\x00b"), 400, 400),
    ("obs-text in a field value", get("/text", "X-A: caf\xe9"), 200, 200),
    ("a space in the query", raw("GET /f.txt?a b HTTP/1.1"), 400, 400),
    ("a lower-case version", raw("GET /f.txt http/1.1"), 400, 400),
    ("a tab after the method", raw("GET\t/f.txt HTTP/1.1"), 400, 400),
    ("the HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, 400),
    ("absolute-form with userinfo", get("http://u@localhost/f.txt"), 400, 400),
    ("absolute-form without a path", get("http://localhost"), 403, 403),
    ("absolute-form, upper-case scheme", get("HTTP://localhost/f.txt"), 200, 200),
    ("* with GET", get("*"), 400, 400),
    ("Host with a port past 65535", get("/text", host="localhost:99999"), 200, 200),
    ("Host with an underscore", get("/text", host="a_b"), 200, 200),
    ("Content-Length: 05", post("/text", "Content-Length: 05"), 200, 200),
    ("Content-Length: +5", post("/text", "Content-Length: +5"), 400, 400),
    ("Transfer-Encoding twice",
     post("/text", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked",
          body=b"0\r\n\r\n"), 400, 400),
    ("Transfer-Encoding: identity", post("/text", "Transfer-Encoding: identity"), 501, 501),
    ("a file as a directory", get("/f.txt/"), 404, 404),
    ("%2E in a name", get("/f%2Etxt"), 200, 200),
    ("two Range lines: the first", get("/f.txt", "Range: bytes=0-1", "Range: bytes=2-3"),
     206, 206),
    ("If-Range with the date", get("/f.txt", "Range: bytes=0-1", "If-Range: " + LM), 206, 206),
    ("If-Range with a weak tag", get("/f.txt", "Range: bytes=0-1", "If-Range: W/" + ETAG),
     200, 200),
    # kept: RFC 9112 6.1 (chunked twice is a framing error), 6.3 (no final
    # chunked: 400); nginx 501 for any value but "chunked"
    ("Transfer-Encoding: chunked, chunked",
     post("/text", "Transfer-Encoding: chunked, chunked", body=b"0\r\n\r\n"), 501, 400),
    ("an empty Transfer-Encoding", post("/text", "Transfer-Encoding:"), 501, 400),
    # kept: an encoded slash (docs/directives.md, static files)
    ("%2F", get("/f.txt%2F"), 404, 400),
    # kept: CONNECT to a server that is no proxy is 405 with Allow (RFC 9110
    # 9.3.6, 15.5.6)
    ("CONNECT", raw("CONNECT localhost:80 HTTP/1.1"), 400, 405),
    # kept: at most 100 fields in a head (RFC 6585 5: 431)
    ("150 fields", get("/text", *["X-N%d: v" % i for i in range(150)]), 200, 431),
    # kept: no 100 Continue without a body to wait for (RFC 9110 10.1.1
    # lets a server omit it); nginx sends one
    ("100-continue without a body", get("/text", "Expect: 100-continue"), 100, 200),
    # kept: several lines of a list field are one list (RFC 9110 5.3);
    # nginx refuses a second If-Match or If-None-Match
    ("two If-None-Match lines",
     get("/f.txt", 'If-None-Match: "x"', "If-None-Match: " + ETAG), 400, 304),
    ("two If-Match lines", get("/f.txt", "If-Match: " + ETAG, 'If-Match: "x"'), 400, 200),
    # kept: two lines of a date are a list, which is ignored (RFC 9110
    # 13.1.3, 13.1.4), and two If-Range lines match nothing (13.1.5)
    ("two If-Modified-Since lines",
     get("/f.txt", "If-Modified-Since: " + LM, "If-Modified-Since: " + LM), 400, 200),
    ("two If-Unmodified-Since lines",
     get("/f.txt", "If-Unmodified-Since: " + BEFORE, "If-Unmodified-Since: " + BEFORE),
     400, 200),
    ("two If-Range lines",
     get("/f.txt", "Range: bytes=0-1", "If-Range: " + ETAG, "If-Range: " + ETAG), 400, 200),
]


def test_more_odd_requests(ports):
    run_rows(ports, MORE_ROWS)
