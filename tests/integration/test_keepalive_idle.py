"""Idle keep-alive connections: between requests an HTTP/1 connection gives
back its request pool and header buffer (and a TLS one OpenSSL's buffers)
and takes them again when bytes arrive. These tests use connections after
they were idle: plain, over TLS, HTTP/2; pipelined requests; requests split
across idle pauses; the buffer growing and shrinking again; idle
connections closed by the client, by the keep-alive timeout and when the
connection table runs out. (What the idle connections cost is measured
from outside, by bench/idle.)"""
import socket
import ssl
import time

import pytest

import h2raw
import swsharness as h
import tlsutil as t

HELLO = b"hello idle\n"
FILES = {"html/hello.txt": HELLO}
# A pause of IDLE is long enough for the server to have finished the
# response and gone idle (given its memory back) before the next bytes
# come. Most servers here have keepalive_timeout 1s; `slow` has the
# default of the harness (5s), for pauses longer than a second.
IDLE = 0.3
LONG_IDLE = 1.3


def tls_conn(port):
    """A raw h.Conn over TLS 1.3 (ALPN http/1.1)."""
    c = h.Conn(port)
    ctx = t.context(alpn=["http/1.1"], verify=False)
    c.sock = ctx.wrap_socket(c.sock, server_hostname="localhost")
    c.sock.settimeout(c.timeout)
    return c


def get_ok(c, path="/hello.txt", body=HELLO, **kw):
    c.send(h.request("GET", path, **kw))
    r = c.read_response()
    assert r is not None, "connection closed instead of answering"
    assert r.status == 200 and r.body == body, r
    return r


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(files=FILES, keepalive="1s",
                      server="        client_header_buffer_size 1k;\n")


@pytest.fixture(scope="module")
def slow(sws_module):
    return sws_module(files=FILES, server="        client_header_buffer_size 1k;\n")


# a response head larger than a page: the HEADERS frame fills pages of
# nghttp2's frame buffer that an idle HTTP/2 connection gave back
LONG_URL = "https://example.test/" + "".join("%04d" % i for i in range(1500))
TLS_SERVER = ("        client_header_buffer_size 1k;\n"
              "        location = /long-location { return 301 %s; }\n" % LONG_URL)


@pytest.fixture(scope="module")
def tls_srv(sws_module, pki):
    return t.launch(sws_module, pki, listen="http2", files=FILES, server=TLS_SERVER,
                    keepalive="1s")


# ---------------------------------------------------------------- plain

def test_requests_after_idle_pauses(srv):
    with h.Conn(srv.port) as c:
        for _ in range(4):
            get_ok(c)
            time.sleep(IDLE)
        get_ok(c, "/respond", b"Hello, world!")
        assert c.still_open(0.3)


def test_requests_after_long_idle_pauses(slow):
    with h.Conn(slow.port) as c:
        for _ in range(2):
            get_ok(c)
            time.sleep(LONG_IDLE)
        get_ok(c, headers=[("X-C", "c" * 3000)])     # large buffers again
        time.sleep(0.05)
        get_ok(c)
        assert c.still_open(0.3)


def test_idle_connection_closes_at_keepalive_timeout(sws):
    """Going idle (memory given back) leaves the keep-alive timer as it
    was: the connection closes keepalive_timeout (3s) after the response,
    not sooner, not later."""
    s = sws(files=FILES, keepalive="3s")
    with h.Conn(s.port) as c:
        get_ok(c)
        t0 = time.monotonic()
        assert c.still_open(2.0), "closed before keepalive_timeout"
        assert c.closed_within(3.0), "not closed after keepalive_timeout"
        assert 2.5 <= time.monotonic() - t0 <= 4.5


@pytest.mark.parametrize("which", ["srv", "slow"])
def test_request_split_across_idle_pauses(which, request):
    """The first byte wakes an idle connection (its buffer is taken
    again), then pauses: what came is kept until the rest arrives."""
    s = request.getfixturevalue(which)
    pause = IDLE if which == "srv" else LONG_IDLE
    data = h.request("GET", "/hello.txt", headers=[("X-Pad", "p" * 200)])
    with h.Conn(s.port) as c:
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        get_ok(c)
        time.sleep(pause)
        for piece in (data[:1], data[1:17], data[17:-2], data[-2:]):
            c.send(piece)
            time.sleep(IDLE)
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == HELLO, r
        get_ok(c)


def test_pipelined_after_idle(srv):
    with h.Conn(srv.port) as c:
        get_ok(c)
        time.sleep(IDLE)
        c.send(h.request("GET", "/hello.txt") + h.request("GET", "/respond")
               + h.request("HEAD", "/hello.txt"))
        r1, r2, r3 = c.read_response(), c.read_response(), c.read_response("HEAD")
        assert r1.status == 200 and r1.body == HELLO, r1
        assert r2.status == 200 and r2.body == b"Hello, world!", r2
        assert r3.status == 200 and r3.header("Content-Length") == str(len(HELLO)), r3
        time.sleep(IDLE)
        get_ok(c)


def test_pipelined_rest_larger_than_header_buffer(srv):
    """A head that needed a large header buffer, with more than
    client_header_buffer_size (1k) of the next request behind it: what is
    left moves to a bigger buffer for the next request, which after an
    idle pause is the normal size again."""
    big1 = h.request("GET", "/hello.txt", headers=[("X-A", "a" * 2000)])
    big2 = h.request("GET", "/respond", headers=[("X-B", "b" * 1500)])
    with h.Conn(srv.port) as c:
        c.send(big1 + big2)
        r1, r2 = c.read_response(), c.read_response()
        assert r1.status == 200 and r1.body == HELLO, r1
        assert r2.status == 200 and r2.body == b"Hello, world!", r2
        time.sleep(IDLE)
        get_ok(c, headers=[("X-C", "c" * 3000)])     # large buffers again
        time.sleep(IDLE)
        get_ok(c)


def test_header_too_large_after_idle(srv):
    """The limits are the same after an idle pause (431, then close)."""
    with h.Conn(srv.port) as c:
        get_ok(c)
        time.sleep(IDLE)
        c.send(h.request("GET", "/hello.txt", headers=[("X-Big", "x" * 9000)]))
        r = c.read_response()
        assert r is not None and r.status == 431, r
        assert c.closed_within(3.0)


def test_garbage_after_idle_is_400(srv):
    with h.Conn(srv.port) as c:
        get_ok(c)
        time.sleep(IDLE)
        c.send(b"\x01\x02 nonsense\r\n\r\n")
        r = c.read_response()
        assert r is not None and r.status == 400, r
        assert c.closed_within(3.0)


def test_client_closes_idle_connection(srv):
    """Idle connections that the client closes (or resets) go without a
    trace; the server goes on serving."""
    conns = [h.Conn(srv.port) for _ in range(8)]
    try:
        for c in conns:
            get_ok(c)
        time.sleep(IDLE)
        for i, c in enumerate(conns):
            if i % 2:
                c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            c.close()
    finally:
        for c in conns:
            c.close()
    with h.Conn(srv.port) as c:
        get_ok(c)
    assert srv.proc.poll() is None


def test_keepalive_timeout_closes_idle(srv):
    with h.Conn(srv.port) as c:
        get_ok(c)
        t0 = time.monotonic()
        assert c.closed_within(4.0), "idle connection not closed by keepalive_timeout"
        assert time.monotonic() - t0 >= 0.8
    with h.Conn(srv.port) as c:
        get_ok(c)


def test_idle_connections_closed_when_table_runs_out(sws):
    """Idle (released) connections are the ones closed for a new one."""
    conf = h.MAIN_TEMPLATE.replace("worker_connections 1024;", "worker_connections 16;")
    s = sws(conf=conf, files=FILES, keepalive="1s")
    idle = []
    try:
        # one after the other, each idle before the next: the table (with
        # the listener and the channel to the master) fills with idle ones
        for _ in range(14):
            idle.append(h.Conn(s.port))
            get_ok(idle[-1])
        time.sleep(IDLE)
        with h.Conn(s.port) as c:
            get_ok(c)
        assert sum(1 for c in idle if c.closed_within(2.0)) >= 1
    finally:
        for c in idle:
            c.close()


# ---------------------------------------------------------------- TLS

def test_tls_requests_after_idle_pauses(tls_srv):
    c = tls_conn(tls_srv.port)
    try:
        for _ in range(4):
            get_ok(c)
            time.sleep(IDLE)
        get_ok(c, "/respond", b"Hello, world!")
    finally:
        c.close()


def test_tls_request_split_across_idle_pauses(tls_srv):
    data = h.request("GET", "/hello.txt", headers=[("X-Pad", "p" * 300)])
    c = tls_conn(tls_srv.port)
    try:
        get_ok(c)
        time.sleep(IDLE)
        for piece in (data[:1], data[1:40], data[40:]):
            c.send(piece)              # one TLS record each
            time.sleep(IDLE)
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == HELLO, r
    finally:
        c.close()


def test_tls_pipelined_after_idle(tls_srv):
    c = tls_conn(tls_srv.port)
    try:
        get_ok(c)
        time.sleep(IDLE)
        c.send(h.request("GET", "/hello.txt") + h.request("GET", "/respond"))
        r1, r2 = c.read_response(), c.read_response()
        assert r1.status == 200 and r1.body == HELLO, r1
        assert r2.status == 200 and r2.body == b"Hello, world!", r2
        time.sleep(IDLE)
        get_ok(c)
    finally:
        c.close()


def test_tls_response_larger_than_a_record_after_idle(sws, pki):
    """Responses are still written whole through the worker's shared send
    buffer, across idle pauses and interleaved connections."""
    files = {"html/a.bin": bytes(range(256)) * 300, "html/b.bin": b"B" * 50000}
    s = t.launch(sws, pki, files=files, server="        sendfile off;\n", keepalive="1s")
    a, b = tls_conn(s.port), tls_conn(s.port)
    try:
        for _ in range(3):
            a.send(h.request("GET", "/a.bin"))
            b.send(h.request("GET", "/b.bin"))
            ra, rb = a.read_response(), b.read_response()
            assert ra.status == 200 and ra.body == files["html/a.bin"]
            assert rb.status == 200 and rb.body == files["html/b.bin"]
            time.sleep(IDLE)
    finally:
        a.close()
        b.close()


# ---------------------------------------------------------------- HTTP/2

def test_h2_streams_after_idle_pauses(tls_srv):
    with h2raw.H2(tls_srv.port, tls=True) as c:
        for _ in range(4):
            sid = c.get("/hello.txt")
            hdrs, body, _ = c.response(sid)
            assert h2raw.status(hdrs) == 200 and body == HELLO, hdrs
            time.sleep(IDLE)
        # two at once after the pause
        s1, s2 = c.get("/hello.txt"), c.get("/respond")
        _, b1, _ = c.response(s1)
        _, b2, _ = c.response(s2)
        assert b1 == HELLO and b2 == b"Hello, world!"


def test_h2c_prior_knowledge_after_idle_pauses(sws):
    s = sws(files=FILES, server="        listen 127.0.0.1:@PORT2@ http2;\n", ports=2,
            keepalive="1s")
    with h2raw.H2(s.ports[1]) as c:
        for _ in range(3):
            sid = c.get("/hello.txt", scheme="http")
            hdrs, body, _ = c.response(sid)
            assert h2raw.status(hdrs) == 200 and body == HELLO, hdrs
            time.sleep(IDLE)


def test_h2_large_headers_frame_after_idle_pauses(tls_srv):
    """Idle, the frame buffer's pages were given back; a 6 KiB HEADERS
    frame is built in them again, and again after the next pause."""
    with h2raw.H2(tls_srv.port, tls=True) as c:
        for _ in range(3):
            sid = c.get("/hello.txt")
            _, body, _ = c.response(sid)
            assert body == HELLO
            time.sleep(IDLE)
            sid = c.get("/long-location")
            hdrs, _, _ = c.response(sid)
            assert h2raw.status(hdrs) == 301, hdrs
            assert h2raw.header(hdrs, "location") == LONG_URL
            time.sleep(IDLE)
        s1, s2 = c.get("/long-location"), c.get("/hello.txt")
        h1, _, _ = c.response(s1)
        _, b2, _ = c.response(s2)
        assert h2raw.header(h1, "location") == LONG_URL and b2 == HELLO
