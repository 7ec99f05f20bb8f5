"""Malformed and unsupported HTTP/1.x input, sent with raw sockets: the
status code and, after framing errors, that the connection is closed."""
import time

import pytest

import swsharness as h


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(files={"html/hello.txt": b"hello\n"})


def bad(srv, data, expect, method="GET", must_close=True):
    """Send data; expect a status in expect (int or tuple) and, when
    must_close, the connection closed right after the response."""
    expect = (expect,) if isinstance(expect, int) else tuple(expect)
    with h.Conn(srv.port) as c:
        c.send(data)
        r = c.read_response(method)
        assert r is not None, "connection closed without a response to %r" % data[:200]
        assert r.status in expect, "sent %r: expected %s, got %r" % (data[:200], expect, r)
        assert r.header("Content-Length") == str(len(r.body)), r
        if r.status >= 400:
            assert len(r.body) < 4096, r
        if must_close:
            assert c.closed_within(3.0), \
                "connection left open after a framing error (%r)" % data[:200]
        return r


# ---------------------------------------------------------------- request line

@pytest.mark.parametrize("line", [
    b"GET /respond HTTP/1.1 extra",
    b"GET  /respond HTTP/1.1",
    b"GET /respond  HTTP/1.1",
    b"GE(T /respond HTTP/1.1",
    b"GET /respond HTTX/1.1",
    b"GET /respond HTTP/1",
    b"GET /respond HTTP/1.x",
    b"GET respond HTTP/1.1",
    b"GET /res\x01pond HTTP/1.1",
    b"GET /res pond HTTP/1.1",
    b"/respond HTTP/1.1",
    b"GET /respond",
    b"\x00GET /respond HTTP/1.1",
])
def test_malformed_request_line_400(srv, line):
    bad(srv, line + b"\r\nHost: localhost\r\n\r\n", 400)


def _client_hello():
    """The first flight of a real TLS client (Python's ssl, no socket)."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@pytest.mark.parametrize("prefix", ["tls", b"\x16\x03\x01", b"GE\x01", b"\r\x00"])
def test_line_that_cannot_become_a_request_400_at_once(srv, prefix):
    """No line end yet, but a byte no method has: 400 and close right away,
    not at client_header_timeout (60 s here)."""
    data = _client_hello() if prefix == "tls" else prefix
    t0 = time.monotonic()
    r = bad(srv, data, 400)
    assert time.monotonic() - t0 < 3.0, r


@pytest.mark.parametrize("prefix,rest", [
    (b"GE", b"T /hello.txt HTTP/1.1"),
    (b"GET", b" /hello.txt HTTP/1.1"),
    (b"GET /hello.txt HTTP/1.", b"1"),
    (b"\r", b"\nGET /hello.txt HTTP/1.1"),
    (b"\r\n", b"GET /hello.txt HTTP/1.1"),
])
def test_incomplete_request_line_waits(srv, prefix, rest):
    """A prefix that may still become a request is left waiting."""
    with h.Conn(srv.port) as c:
        c.send(prefix)
        assert c.still_open(0.5)
        c.send(rest + b"\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r is not None and r.status == 200, r


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/3.0", b"HTTP/9.9"])
def test_unsupported_version_505(srv, version):
    bad(srv, b"GET /respond " + version + b"\r\nHost: localhost\r\n\r\n", 505)


def test_lower_version_505_or_400(srv):
    bad(srv, b"GET /respond HTTP/0.1\r\nHost: localhost\r\n\r\n", (505, 400))


# ---------------------------------------------------------------- headers

def test_http11_missing_host_400(srv):
    bad(srv, b"GET /respond HTTP/1.1\r\nUser-Agent: x\r\n\r\n", 400)


def test_http10_without_host_ok(srv):
    with h.Conn(srv.port) as c:
        c.send(b"GET /respond HTTP/1.0\r\n\r\n")
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"Hello, world!", r


def test_two_host_headers_400(srv):
    bad(srv, b"GET /respond HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n", 400)


@pytest.mark.parametrize("header", [
    b"X-Foo : bar",                  # space before colon
    b"Host : localhost",
    b"X-Foo\t: bar",
    b"X Foo: bar",                   # space in the name
    b": novalue",                    # empty name
    b"NoColonHere",
    b"X-Foo: a\rb",                  # bare CR in a value
    b"X-Foo: a\x00b",                # NUL in a value
    b"X-F\x00oo: bar",               # NUL in a name
    b"X-Foo: a\x07b",                # other CTL
    b"X-F(o)o: bar",                 # non-token name chars
])
def test_bad_header_line_400(srv, header):
    bad(srv, b"GET /respond HTTP/1.1\r\nHost: localhost\r\n" + header + b"\r\n\r\n", 400)


def test_obs_fold_400(srv):
    bad(srv, b"GET /respond HTTP/1.1\r\nHost: localhost\r\nX-Foo: a\r\n  b\r\n\r\n", 400)


def test_obs_fold_first_header_400(srv):
    bad(srv, b"GET /respond HTTP/1.1\r\n Host: localhost\r\n\r\n", 400)


def test_host_with_bad_chars_400(srv):
    bad(srv, b"GET /respond HTTP/1.1\r\nHost: local/host\r\n\r\n", 400)


@pytest.mark.parametrize("host", [
    "a..b", "a b", "ex:am:ple", "host:12a", "host:-1", "[::1", "[g::1]", "[::1]x",
    "a%62", "a/b", "a@b", "\xc3\xa9.test",
])
def test_invalid_host_400(srv, host):
    bad(srv, b"GET /respond HTTP/1.1\r\nHost: " + host.encode("latin-1") + b"\r\n\r\n", 400)


@pytest.mark.parametrize("host", [
    "localhost", "LocalHost", "127.0.0.1", "127.0.0.1:8080", "localhost:", "a_b~c-d.test",
    "localhost.", ".localhost", "[::1]", "[::1]:80", "[FE80::1]",
])
def test_valid_host_200(srv, host):
    r = h.exchange(srv.port, b"GET /respond HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n")
    assert r is not None and r.status == 200, (host, r)


def test_bare_lf_line_endings_accepted(srv):
    """RFC 9112 2.2 lets a recipient accept LF alone; nginx does."""
    with h.Conn(srv.port) as c:
        c.send(b"GET /respond HTTP/1.1\nHost: localhost\n\n")
        r = c.read_response()
        assert r is not None and r.status in (200, 400), r


# ---------------------------------------------------------------- body framing

def post(headers, body=b""):
    return h.request("POST", "/respond", headers=headers, body=body)


def test_content_length_and_transfer_encoding_400(srv):
    bad(srv, post([("Content-Length", "5"), ("Transfer-Encoding", "chunked")],
                  b"5\r\nhello\r\n0\r\n\r\n"), 400)


def test_transfer_encoding_then_content_length_400(srv):
    bad(srv, post([("Transfer-Encoding", "chunked"), ("Content-Length", "5")],
                  b"5\r\nhello\r\n0\r\n\r\n"), 400)


def test_two_different_content_lengths_400(srv):
    bad(srv, post([("Content-Length", "5"), ("Content-Length", "6")], b"hello!"), 400)


def test_content_length_list_different_400(srv):
    bad(srv, post([("Content-Length", "5, 6")], b"hello!"), 400)


@pytest.mark.parametrize("value", ["abc", "-1", "+5", "5a", "0x5", "",
                                   "99999999999999999999999"])
def test_bad_content_length_400(srv, value):
    bad(srv, post([("Content-Length", value)], b"hello"), (400, 413))


@pytest.mark.parametrize("body", [
    b"zz\r\nhello\r\n0\r\n\r\n",                 # bad hex
    b"5\r\nhelloXX0\r\n\r\n",                     # no CRLF after data
    b"-5\r\nhello\r\n0\r\n\r\n",                  # sign
    b"fffffffffffffffffffff\r\nhello\r\n0\r\n\r\n",  # overflow
])
def test_bad_chunked_body_400(srv, body):
    bad(srv, post([("Transfer-Encoding", "chunked")], body), (400, 413))


def test_unknown_transfer_coding_501(srv):
    bad(srv, post([("Transfer-Encoding", "gzip")], b"hello"), 501)


def test_gzip_chunked_transfer_coding_501_or_400(srv):
    bad(srv, post([("Transfer-Encoding", "gzip, chunked")], b"5\r\nhello\r\n0\r\n\r\n"),
        (501, 400))


def test_chunked_not_last_400_or_501(srv):
    bad(srv, post([("Transfer-Encoding", "chunked, gzip")], b"5\r\nhello\r\n0\r\n\r\n"),
        (400, 501))


def test_transfer_encoding_http10_400(srv):
    """RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 is a framing fault."""
    data = (b"POST /respond HTTP/1.0\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n0\r\n\r\n")
    bad(srv, data, (400, 501))


# ---------------------------------------------------------------- error pages

@pytest.mark.parametrize("data,status", [
    (b"GET /res pond HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
    (b"GET /respond HTTP/2.0\r\nHost: localhost\r\n\r\n", 505),
    (h.request("GET", "/missing-file"), 404),
    (h.request("POST", "/hello.txt", headers=[("Content-Length", "0")]), 405),
])
def test_error_response_has_short_html_body(srv, data, status):
    with h.Conn(srv.port) as c:
        c.send(data)
        r = c.read_response()
        assert r is not None and r.status == status, r
        assert r.header("Content-Length") == str(len(r.body)), r
        assert 0 < len(r.body) < 2048, r
        assert b"<html" in r.body.lower() and str(status).encode() in r.body, r
        assert (r.header("Content-Type") or "").startswith("text/html"), r
