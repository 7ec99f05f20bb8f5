"""Size limits and timeouts."""
import time

import pytest

import swsharness as h


def status_then_closed(port, data, expect, close_timeout=3.0):
    with h.Conn(port) as c:
        try:
            c.send(data)
        except OSError:
            pass          # the server may answer and close before reading all
        r = c.read_response()
        assert r is not None, "closed without a response"
        expect = (expect,) if isinstance(expect, int) else expect
        assert r.status in expect, "expected %s, got %r" % (expect, r)
        assert r.header("Content-Length") == str(len(r.body)), r
        assert c.closed_within(close_timeout), "connection left open after %d" % r.status
        return r


# ---------------------------------------------------------------- header sizes

@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server="""
        location = /small { client_max_body_size 100; respond 200 "small"; }
""")


def test_uri_too_long_414_default_buffers(srv):
    status_then_closed(srv.port, h.request("GET", "/" + "a" * 20000), 414)


def test_header_too_large_default_buffers(srv):
    status_then_closed(srv.port, h.request("GET", "/respond",
                                           headers=[("X-Big", "b" * 20000)]), (431, 400))


def test_headers_total_too_large(srv):
    hdrs = [("X-H%d" % i, "v" * 1000) for i in range(200)]
    status_then_closed(srv.port, h.request("GET", "/respond", headers=hdrs), (431, 400))


def test_uri_below_limit_ok(srv):
    r = h.exchange(srv.port, h.request("GET", "/respond?" + "q" * 4000))
    assert r is not None and r.status == 200, r


@pytest.fixture(scope="module")
def small_buffers(sws_module):
    return sws_module(http="""
    client_header_buffer_size 1k;
    large_client_header_buffers 4 2k;
""")


def test_uri_longer_than_large_buffer_414(small_buffers):
    status_then_closed(small_buffers.port, h.request("GET", "/" + "a" * 3000), 414)


def test_header_longer_than_large_buffer(small_buffers):
    status_then_closed(small_buffers.port,
                       h.request("GET", "/respond", headers=[("X-Big", "b" * 3000)]),
                       (431, 400))


def test_request_fits_large_buffer_ok(small_buffers):
    r = h.exchange(small_buffers.port, h.request("GET", "/respond?" + "q" * 1500,
                                                 headers=[("X-A", "a" * 1500)]))
    assert r is not None and r.status == 200, r


# ---------------------------------------------------------------- body size

def test_body_over_max_content_length_413(srv):
    status_then_closed(srv.port, h.request("POST", "/small",
                                           headers=[("Content-Length", "1000")],
                                           body=b"x" * 1000), 413)


def test_body_over_max_chunked_413(srv):
    body = b"".join(b"64\r\n" + b"x" * 100 + b"\r\n" for _ in range(10)) + b"0\r\n\r\n"
    status_then_closed(srv.port, h.request("POST", "/small",
                                           headers=[("Transfer-Encoding", "chunked")],
                                           body=body), 413)


def test_body_over_max_announced_only_413(srv):
    """Content-Length over the limit is refused before any body is sent."""
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/small", headers=[("Content-Length", "100000000")]))
        r = c.read_response()
        assert r is not None and r.status == 413, r


def test_body_under_max_ok(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/small", headers=[("Content-Length", "100")],
                         body=b"y" * 100))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"small", r
        c.send(h.request("POST", "/small", headers=[("Transfer-Encoding", "chunked")],
                         body=b"32\r\n" + b"z" * 50 + b"\r\n0\r\n\r\n"))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"small", r


def test_default_max_body_1m(srv):
    """nginx's default client_max_body_size is 1m."""
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", str(2 << 20))]))
        r = c.read_response()
        assert r is not None and r.status == 413, r


# ---------------------------------------------------------------- timeouts

@pytest.fixture(scope="module")
def timeouts(sws_module):
    return sws_module(keepalive="1s", http="""
    client_header_timeout 1s;
    client_body_timeout 1s;
""")


def closes_in(c, low, high):
    """The peer closes (408 response allowed first) between low and high s."""
    t0 = time.monotonic()
    data = b""
    while True:
        left = t0 + high - time.monotonic()
        assert left > 0, "connection still open after %.1f s (got %r)" % (high, data[:200])
        try:
            if not c._fill(left):
                break
        except OSError:
            assert False, "connection still open after %.1f s" % high
        data += c._take(len(c.buf))
    took = time.monotonic() - t0
    assert took >= low, "closed too early (%.2f s)" % took
    return data, took


def test_client_header_timeout_nothing_sent(timeouts):
    with h.Conn(timeouts.port, timeout=6) as c:
        data, took = closes_in(c, 0.5, 3.5)
        assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:200]


def test_client_header_timeout_half_request(timeouts):
    with h.Conn(timeouts.port, timeout=6) as c:
        c.send(b"GET /respond HTTP/1.1\r\nHost: local")
        data, took = closes_in(c, 0.5, 3.5)
        assert data == b"" or data.startswith(b"HTTP/1.1 408"), data[:200]


def test_client_header_timeout_trickle_does_not_extend_forever(timeouts):
    """Bytes trickling in slowly do not keep a header alive indefinitely
    (nginx: client_header_timeout covers the whole header)."""
    with h.Conn(timeouts.port, timeout=6) as c:
        c.send(b"GET /respond HTTP/1.1\r\n")
        t0 = time.monotonic()
        closed = False
        while time.monotonic() - t0 < 6:
            try:
                c.send(b"X-A: b\r\n")
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            try:
                if c.closed_within(0.4):
                    closed = True
                    break
            except h.ProtocolError:
                closed = True        # a 408 arrived
                break
        assert closed, "a trickling header kept the connection for 6 s"


def test_client_body_timeout_partial_body(timeouts):
    with h.Conn(timeouts.port, timeout=6) as c:
        c.send(h.request("POST", "/respond", headers=[("Content-Length", "100")],
                         body=b"0123456789"))
        data, took = closes_in(c, 0.5, 4.0)
        # 408, or nothing, or (respond answered before the body) a 200 and
        # then the close when the rest of the body never came
        assert data == b"" or data.startswith(b"HTTP/1.1 408") \
            or data.startswith(b"HTTP/1.1 200"), data[:200]


def test_keepalive_timeout_closes_idle(timeouts):
    with h.Conn(timeouts.port, timeout=6) as c:
        c.send(h.request("GET", "/respond"))
        r = c.read_response()
        assert r.status == 200, r
        t0 = time.monotonic()
        assert c.closed_within(3.5), "idle keep-alive connection not closed"
        took = time.monotonic() - t0
        assert took >= 0.5, "closed too early (%.2f s)" % took


def test_keepalive_timeout_zero_disables(sws):
    s = sws(keepalive="0")
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond"))
        r = c.read_response()
        assert r.status == 200 and (r.header("Connection") or "").lower() == "close", r
        assert c.closed_within(3.0)


def test_keepalive_requests_limit(sws):
    s = sws(http="    keepalive_requests 2;\n")
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond"))
        r1 = c.read_response()
        assert r1.status == 200 and (r1.header("Connection") or "").lower() != "close", r1
        c.send(h.request("GET", "/respond"))
        r2 = c.read_response()
        assert r2.status == 200, r2
        assert (r2.header("Connection") or "").lower() == "close", r2
        assert c.closed_within(3.0), "connection open after keepalive_requests"


def test_keepalive_requests_limit_pipelined(sws):
    s = sws(http="    keepalive_requests 2;\n")
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond") * 3)
        r1 = c.read_response()
        r2 = c.read_response()
        assert r1.status == 200 and r2.status == 200
        assert (r2.header("Connection") or "").lower() == "close", r2
        assert c.closed_within(3.0), "a third request was answered"


def test_413_readable_while_client_still_sends(srv):
    """Lingering close: the client gets the 413 even though it keeps sending
    the body it announced (no reset that destroys the response)."""
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/small", headers=[("Content-Length", str(4 << 20))]))
        chunk = b"z" * 65536
        try:
            for _ in range(16):
                c.sock.sendall(chunk)
        except OSError:
            pass
        r = c.read_response()
        assert r is not None and r.status == 413, r


def test_send_timeout_closes_stalled_reader(sws):
    import os
    s = sws(files={"html/big.bin": os.urandom(16 << 20)}, http="    send_timeout 1s;\n")
    with h.Conn(s.port, rcvbuf=16384, timeout=10) as c:
        c.send(h.request("GET", "/big.bin"))
        time.sleep(3.5)
        total = 0
        t0 = time.monotonic()
        while True:
            assert time.monotonic() - t0 < 10, "still sending after 10 s"
            try:
                d = c.sock.recv(1 << 20)
            except ConnectionResetError:
                break
            if not d:
                break
            total += len(d)
        assert total < (16 << 20), "the whole file arrived although the reader stalled"
