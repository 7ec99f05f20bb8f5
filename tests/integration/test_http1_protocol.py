"""HTTP/1.1 connection management and protocol features (raw sockets)."""
import email.utils
import os
import time

import pytest

import swsharness as h


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(files={"html/hello.txt": b"hello file\n"})


def test_keepalive_two_requests(srv):
    with h.Conn(srv.port) as c:
        for _ in range(2):
            c.send(h.request("GET", "/respond"))
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"Hello, world!", r
            assert (r.header("Connection") or "keep-alive").lower() != "close", r
        assert c.still_open(0.3), "server closed a keep-alive connection"


def test_keepalive_with_curl_reuses_connection(srv):
    import pycurl
    handle = pycurl.Curl()
    try:
        r1 = h.curl(srv.url("/respond"), handle=handle)
        r2 = h.curl(srv.url("/hello.txt"), handle=handle)
    finally:
        handle.close()
    assert r1.status == 200 and r2.status == 200 and r2.body == b"hello file\n"
    assert r1.num_connects == 1 and r2.num_connects == 0, "connection not reused"


def test_pipelining_three_in_order(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/respond") + h.request("GET", "/hello.txt")
               + h.request("HEAD", "/respond"))
        r1 = c.read_response()
        r2 = c.read_response()
        r3 = c.read_response("HEAD")
        assert r1.status == 200 and r1.body == b"Hello, world!", r1
        assert r2.status == 200 and r2.body == b"hello file\n", r2
        assert r3 is not None and r3.status == 200 and r3.header("Content-Length") == "13", r3
        assert c.still_open(0.3)


def test_pipelining_byte_by_byte(srv):
    """A request arriving in many small pieces is parsed the same."""
    data = h.request("GET", "/hello.txt", headers=[("X-Long", "v" * 100)])
    with h.Conn(srv.port) as c:
        c.sock.setsockopt(6, 1, 1)   # TCP_NODELAY
        for i in range(0, len(data), 7):
            c.send(data[i:i + 7])
            time.sleep(0.002)
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"hello file\n", r


def test_http10_closes(srv):
    with h.Conn(srv.port) as c:
        c.send(b"GET /respond HTTP/1.0\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r.status == 200 and r.body == b"Hello, world!", r
        assert (r.header("Connection") or "close").lower() == "close", r
        assert c.closed_within(3.0), "HTTP/1.0 connection not closed"


def test_http10_keepalive_stays_open(srv):
    with h.Conn(srv.port) as c:
        c.send(b"GET /respond HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n")
        r = c.read_response()
        assert r.status == 200 and r.body == b"Hello, world!", r
        assert (r.header("Connection") or "").lower() == "keep-alive", r
        c.send(b"GET /hello.txt HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n")
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"hello file\n", r2


def test_connection_close_honoured(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/respond", headers=[("Connection", "close")]))
        r = c.read_response()
        assert r.status == 200, r
        assert (r.header("Connection") or "").lower() == "close", r
        assert c.closed_within(3.0), "connection not closed after Connection: close"


def test_connection_close_in_pipeline_stops(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/respond", headers=[("Connection", "close")])
               + h.request("GET", "/hello.txt"))
        r = c.read_response()
        assert r.status == 200, r
        assert c.closed_within(3.0), "a request after Connection: close was answered"


def test_absolute_form_target(srv):
    with h.Conn(srv.port) as c:
        c.send(b"GET http://localhost/hello.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"hello file\n", r


def test_absolute_form_with_port_and_query(srv):
    data = ("GET http://localhost:%d/hello.txt?q=1 HTTP/1.1\r\nHost: localhost\r\n\r\n"
            % srv.port).encode()
    r = h.exchange(srv.port, data)
    assert r is not None and r.status == 200 and r.body == b"hello file\n", r


def test_expect_100_continue(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", "5"),
                                                     ("Expect", "100-continue")]))
        r = c.read_response()
        assert r is not None, "closed"
        if r.status == 100:
            assert r.version == "HTTP/1.1", r
            c.send(b"hello")
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"Hello, world!", r
            c.send(h.request("GET", "/hello.txt"))
            r3 = c.read_response()
            assert r3 is not None and r3.status == 200 and r3.body == b"hello file\n", r3
        else:
            # a final response straight away is allowed; then the server must
            # not read the unsent body as the next request
            assert r.status in (200, 417), r


def test_expect_100_continue_curl(srv):
    body = b"x" * 5000           # libcurl sends Expect: 100-continue itself
    r = h.curl(srv.url("/respond"), method="POST", body=body,
               headers=["Expect: 100-continue"])
    assert r.status == 200 and r.body == b"Hello, world!", r


def test_chunked_request_body_accepted(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Transfer-Encoding", "chunked")],
                         body=b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"Hello, world!", r
        c.send(h.request("GET", "/hello.txt"))
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"hello file\n", \
            "the chunked body was not consumed: %r" % (r2,)


def test_chunked_body_in_pieces(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Transfer-Encoding", "chunked")]))
        for piece in (b"5\r", b"\nhel", b"lo\r\n", b"0\r\n", b"\r\n"):
            time.sleep(0.02)
            c.send(piece)
        r = c.read_response()
        assert r is not None and r.status == 200, r
        c.send(h.request("GET", "/respond"))
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"Hello, world!", r2


def test_options_star(srv):
    r = h.exchange(srv.port, b"OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert r is not None and r.status < 500, r


# ---------------------------------------------------------------- Date, Server

def test_date_header_imf_fixdate(srv):
    r = h.exchange(srv.port, h.request("GET", "/respond"))
    date = r.header("Date")
    assert date and h.IMF_FIXDATE.match(date), r
    t = email.utils.parsedate_to_datetime(date).timestamp()
    assert abs(t - time.time()) < 10, date


def test_date_on_error_responses(srv):
    r = h.exchange(srv.port, b"GET /x HTTP/2.0\r\nHost: localhost\r\n\r\n")
    assert r is not None and r.status == 505, r
    assert h.IMF_FIXDATE.match(r.header("Date") or ""), r


def test_server_header_default(srv):
    r = h.exchange(srv.port, h.request("GET", "/respond"))
    assert (r.header("Server") or "").startswith("scalws"), r


@pytest.mark.parametrize("tokens,expect", [("on", "scalws/" + h.VERSION), ("off", "scalws"),
                                           ("build", "scalws/" + h.VERSION),
                                           ("OFF", "scalws")])
def test_server_tokens(sws, tokens, expect):
    s = sws(http="    server_tokens %s;\n" % tokens)
    for path in ("/respond", "/missing"):
        r = h.exchange(s.port, h.request("GET", path))
        assert r.header("Server") == expect, r
    r = h.exchange(s.port, b"GET /a b HTTP/1.1\r\nHost: x\r\n\r\n")
    assert r is not None and r.status == 400 and r.header("Server") == expect, r


def test_status_line_and_single_framing_header(srv):
    r = h.exchange(srv.port, h.request("GET", "/hello.txt"))
    assert r.version == "HTTP/1.1" and r.reason == "OK", r
    assert len(r.headers_all("Content-Length")) == 1, r
    assert not (r.header("Content-Length") and r.header("Transfer-Encoding")), r


def test_many_keepalive_requests_one_connection(srv):
    with h.Conn(srv.port) as c:
        for i in range(50):
            c.send(h.request("GET", "/respond" if i % 2 else "/hello.txt"))
            r = c.read_response()
            assert r is not None and r.status == 200, (i, r)


def test_hundred_pipelined_requests(srv):
    with h.Conn(srv.port) as c:
        c.send(b"".join(h.request("GET", "/respond?n=%d" % i) for i in range(100)))
        for i in range(100):
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"Hello, world!", (i, r)


def test_concurrent_connections(srv):
    conns = [h.Conn(srv.port) for _ in range(200)]
    try:
        for c in conns:
            c.send(h.request("GET", "/hello.txt"))
        for i, c in enumerate(conns):
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"hello file\n", (i, r)
    finally:
        for c in conns:
            c.close()


def test_transfer_encoding_case_insensitive(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Transfer-Encoding", "Chunked")],
                         body=b"3\r\nabc\r\n0\r\n\r\n") + h.request("GET", "/respond"))
        for _ in range(2):
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"Hello, world!", r


def test_content_length_identical_list_refused(srv):
    """A list of the same value is refused, as nginx refuses it (RFC 9110
    8.6 allows either): the rest of the bytes is not read as a request."""
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", "3, 3")],
                         body=b"abc") + h.request("GET", "/respond"))
        r = c.read_response()
        assert r is not None and r.status == 400 and r.header("Connection") == "close", r
        assert c.read_response() is None


def test_large_body_discarded_keepalive(srv):
    body = os.urandom(512 * 1024)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", str(len(body)))],
                         body=body))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"Hello, world!", r
        c.send(h.request("GET", "/hello.txt"))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"hello file\n", r
