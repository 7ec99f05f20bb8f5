"""Streaming through the proxy: responses passed on as they come (SSE),
back-pressure both ways (a slow client or a slow server never makes the
worker hold a whole body), and WebSocket tunnels."""
import base64
import hashlib
import os
import socket
import time

import swsharness as h
from proxyorigin import pattern, read_ws_frame, ws_frame


def worker_rss_kb(srv):
    kids = srv.children()
    assert len(kids) == 1
    for line in open("/proc/%d/status" % kids[0]):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")



def assert_rest_is_pattern(c, size):
    """Skip the rest of the head on raw connection c, then check the body:
    size bytes of pattern(size), hashed as they come (not kept whole)."""
    while c.read_line() != b"":
        pass
    digest = hashlib.sha1(c.buf)
    got = len(c.buf)
    while got < size:
        d = c.sock.recv(1 << 20)
        assert d
        digest.update(d)
        got += len(d)
    assert digest.hexdigest() == hashlib.sha1(pattern(size)).hexdigest()

def test_sse_unbuffered(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_buffering off; }" % o.addr)
    with h.Conn(srv.port) as c:
        t0 = time.monotonic()
        c.send(h.request("GET", "/sse/5"))
        r_head = c.read_line()
        assert r_head.startswith(b"HTTP/1.1 200")
        while c.read_line() != b"":
            pass
        first = c.read_line()                   # the first chunk's size line
        t_first = time.monotonic() - t0
        assert int(first, 16) == len(b"data: 0\n\n")
        assert t_first < 0.3                    # not held until the end (0.5 s)
        body = b""
        while True:
            n = int(first, 16)
            if n == 0:
                break
            body += c.read_exact(n)
            assert c.read_line() == b""
            first = c.read_line()
        assert body == b"".join(b"data: %d\n\n" % i for i in range(5))
        assert time.monotonic() - t0 >= 0.4


def test_slow_client_back_pressure(sws, origin):
    o = origin()
    size = 64 * 1024 * 1024
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    h.curl(srv.url("/len/10"))                  # warm the worker up
    rss0 = worker_rss_kb(srv)
    c = h.Conn(srv.port, rcvbuf=16384, timeout=20)
    c.send(h.request("GET", "/big/%d" % size))
    assert c.read_line().startswith(b"HTTP/1.1 200")
    time.sleep(1.5)                             # not reading: the worker must not buffer
    rss1 = worker_rss_kb(srv)
    assert rss1 - rss0 < 8 * 1024, (rss0, rss1)
    # then all of it arrives, intact
    assert_rest_is_pattern(c, size)
    c.close()


def test_slow_server_request_back_pressure(sws, origin):
    o = origin()
    o.read_delay = 0.004
    size = 8 * 1024 * 1024
    srv = sws(server="""location / { proxy_pass http://%s; proxy_request_buffering off;
                        client_max_body_size 0; }""" % o.addr)
    h.curl(srv.url("/len/10"))
    rss0 = worker_rss_kb(srv)
    data = pattern(size)
    peak = [0]

    def watch(stop):
        while not stop.is_set():
            peak[0] = max(peak[0], worker_rss_kb(srv))
            time.sleep(0.05)
    w = h.Background(watch)
    w.start()
    with h.Conn(srv.port, timeout=30) as c:
        c.send(h.request("POST", "/len/3", headers=[("Content-Length", str(size))]))
        c.send(data)
        r = c.read_response()
        assert r.status == 200
    w.finish()
    assert o.last().body == data
    assert peak[0] - rss0 < 4 * 1024, (rss0, peak[0])


def test_x_accel_buffering(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.exchange(srv.port, h.request("GET", "/sse/2"))
    assert r.body == b"data: 0\n\ndata: 1\n\n"


# ------------------------------------------------------------ WebSocket

def ws_handshake(port, path="/ws", extra=b""):
    key = base64.b64encode(os.urandom(16)).decode()
    c = h.Conn(port)
    c.send(h.request("GET", path, headers=[("Upgrade", "websocket"),
                                            ("Connection", "Upgrade"),
                                            ("Sec-WebSocket-Key", key),
                                            ("Sec-WebSocket-Version", "13")]) + extra)
    return c, key


def test_websocket_echo(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    c, key = ws_handshake(srv.port, extra=ws_frame(1, b"early"))
    r = c.read_response()
    assert r.status == 101, r
    assert r.header("Upgrade") == "websocket"
    assert r.header("Connection").lower() == "upgrade"
    accept = base64.b64encode(hashlib.sha1(
        (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    assert r.header("Sec-WebSocket-Accept") == accept
    req = o.last()
    assert req.header("Upgrade") == "websocket" and req.header("Connection") == "upgrade"

    buf = c.buf
    frame, buf = read_ws_frame(c.sock, buf)
    assert frame == (1, b"early")           # sent before the 101: not lost
    c.send(ws_frame(1, b"hello"))
    frame, buf = read_ws_frame(c.sock, buf)
    assert frame == (1, b"hello")
    big = os.urandom(300000)
    c.send(ws_frame(2, big))
    frame, buf = read_ws_frame(c.sock, buf)
    assert frame == (2, big)
    c.send(ws_frame(8, b"\x03\xe8"))
    frame, buf = read_ws_frame(c.sock, buf)
    assert frame[0] == 8
    c.buf = buf
    assert c.closed_within(3)
    c.close()
    assert h.wait_for(lambda: " 101 " in srv.access_log(), 3)


def test_websocket_idle_timeout(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_read_timeout 300ms; }" % o.addr)
    c, _ = ws_handshake(srv.port)
    assert c.read_response().status == 101
    t0 = time.monotonic()
    c.timeout = 3
    assert c.closed_within(3)
    assert time.monotonic() - t0 < 2


def test_websocket_client_closes(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    c, _ = ws_handshake(srv.port)
    assert c.read_response().status == 101
    c.close()
    assert h.wait_for(lambda: len(o.conns) == 0, 3)


def test_upgrade_not_allowed(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_upgrade off; }" % o.addr)
    c, _ = ws_handshake(srv.port, path="/echo")
    r = c.read_response()
    assert r.status == 200                    # an ordinary request
    assert b"Upgrade" not in r.body and b"upgrade" not in r.body
    c.close()
    # a server that answers 101 anyway is not believed
    c, _ = ws_handshake(srv.port)
    assert c.read_response().status == 502
    c.close()


def test_upgrade_http10_client(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    raw = h.request("GET", "/echo", version="HTTP/1.0",
                    headers=[("Upgrade", "websocket"), ("Connection", "Upgrade")])
    r = h.exchange(srv.port, raw)
    assert r.status == 200


def test_unbuffered_large_and_slow_client(sws, origin):
    o = origin()
    size = 8 * 1024 * 1024
    srv = sws(server="location / { proxy_pass http://%s; proxy_buffering off; }" % o.addr)
    c = h.Conn(srv.port, rcvbuf=16384, timeout=20)
    c.send(h.request("GET", "/big/%d" % size))
    r_line = c.read_line()
    assert r_line.startswith(b"HTTP/1.1 200")
    time.sleep(0.5)
    assert_rest_is_pattern(c, size)
    c.close()


def test_streamed_body_client_timeout(sws, origin):
    o = origin()
    srv = sws(server="""location / { proxy_pass http://%s; proxy_request_buffering off;
                        client_body_timeout 300ms; }""" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/echo", headers=[("Content-Length", "100")], body=b"x" * 10))
        r = c.read_response()
        assert r.status == 408
    assert h.wait_for(lambda: len(o.conns) == 0, 3)     # the upstream let go


def test_early_response_while_streaming_body(sws):
    """The server answers before it read the body (a 413, say): the answer
    goes to the client, the rest of the body is dropped."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    ls.settimeout(5)

    def serve(stop):
        s, _ = ls.accept()
        s.recv(100)
        s.sendall(b"HTTP/1.1 413 Too Big\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope")
        time.sleep(0.5)
        s.close()
    bg = h.Background(serve)
    bg.start()
    srv = sws(server="""location / { proxy_pass http://127.0.0.1:%d;
                        proxy_request_buffering off; }""" % ls.getsockname()[1])
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/x", headers=[("Content-Length", "200000")]))
        c.send(b"y" * 1000)
        r = c.read_response()
        assert r.status == 413 and r.body == b"nope"
    bg.finish()
    ls.close()
