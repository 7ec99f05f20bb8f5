"""The native Python bridge: python_bridge_pass to the runner
(python3 -m scalws_bridge, its C extension reading the frames), with a
Starlette ASGI application and a Flask WSGI one (tests/integration/
pybridge; and a Django one): GET and POST, large and streamed bodies both ways, fields and
query strings, errors of the application, a runner that is not there or is
killed in the middle of a response (502, no hang), a slow client that
does not make the application produce more than the buffers hold and a
slow application that holds back the client's upload the same way, 100
concurrent clients, ASGI lifespan, disconnect and websockets, WSGI close() and
wsgi.file_wrapper; the runner as a helper process of the master on a
socket it hands over; a fake runner (pybridgepeer.py) for the frames
scalwsd sends byte by byte and the replies it refuses; and the runner's C
extension on its own."""
import concurrent.futures
import hashlib
import json
import os
import shutil
import socket
import struct
import tempfile
import time

import pytest

import pybridge_runner as pr
import pybridgepeer as peer
import swsharness as h

KINDS = ("a", "w")           # the ASGI and the WSGI application's prefixes


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pybridge")
    sockdir = tempfile.mkdtemp(prefix="swspb")      # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)
    runners = {
        "a": pr.Runner(os.path.join(sockdir, "a.sock"), "asgi_app:app", "asgi",
                       tmp / "marks-a"),
        "w": pr.Runner(os.path.join(sockdir, "w.sock"), "wsgi_app:app", "wsgi",
                       tmp / "marks-w"),
        "d": pr.Runner(os.path.join(sockdir, "d.sock"), "django_app:application", "wsgi",
                       tmp / "marks-d", workers=1),
    }
    srv = None
    try:
        for r in runners.values():
            r.start()
        pr.wait_mark(runners["a"], "startup")
        srv = h.launch(tmp / "sws", ports=3, http="""
            client_max_body_size 64m;
            upstream asgi {{ server unix:{a}; keepalive 8; }}
            upstream wsgi {{ server unix:{w}; keepalive 8; }}
            upstream fake {{ server unix:{d}/fake.sock; keepalive 4; }}
        """.format(a=runners["a"].sock, w=runners["w"].sock, d=sockdir), server="""
            location /a/ {{ python_bridge_pass asgi; }}
            location /w/ {{ python_bridge_pass wsgi; }}
            location /d/ {{ python_bridge_pass unix:{d}/d.sock; }}
            location /dead/ {{ python_bridge_pass unix:{d}/none.sock;
                              python_bridge_connect_timeout 2s; }}
            location /fake/ {{ python_bridge_pass unix:{d}/fake.sock;
                              python_bridge_read_timeout 3s; }}
            location /fakeoff/ {{ python_bridge_pass unix:{d}/fake.sock;
                                 python_bridge_pass_request_headers off; }}
            location /fakeka/ {{ python_bridge_pass fake; }}
        """.format(d=sockdir), servers="""
            server {{
                listen 127.0.0.1:@PORT2@;
                python_bridge_buffering off;
                python_bridge_request_buffering off;
                location /a/ {{ python_bridge_pass unix:{a}; }}
                location /w/ {{ python_bridge_pass unix:{w}; }}
            }}
            server {{
                listen 127.0.0.1:@PORT3@;
                location / {{ python_bridge_pass unix:{d}/k.sock;
                             python_bridge_buffering off; }}
            }}
        """.format(a=runners["a"].sock, w=runners["w"].sock, d=sockdir))
        yield srv, runners, sockdir, tmp
    finally:
        if srv:
            srv.stop()
        for r in runners.values():
            r.stop()
        shutil.rmtree(sockdir, ignore_errors=True)


def get(srv, path, port=0, **kw):
    return h.curl(srv.url(path, port=srv.ports[port]), **kw)


def as_json(r):
    assert r.status == 200, (r.status, r.body[:500])
    return json.loads(r.body)


def logged(srv, since, needle, timeout=3.0):
    return h.wait_for(lambda: needle in h._read(srv.error_log_path)[since:], timeout)


# ---------------------------------------------------------------- requests

@pytest.mark.parametrize("k", KINDS)
def test_get_query_and_fields(env, k):
    srv = env[0]
    r = get(srv, "/%s/echo?x=1&name=caf%%C3%%A9&e=" % k,
            headers=["X-Custom: v1", "X-Custom: v2", "User-Agent: bridge-test"])
    e = as_json(r)
    assert e["method"] == "GET"
    assert e["path"] == "/%s/echo" % k
    assert e["query"] == "x=1&name=caf%C3%A9&e="
    assert e["args"] == {"x": "1", "name": "caf\u00e9", "e": ""}
    if k == "a":
        fields = [tuple(f) for f in e["headers"]]
        assert ("x-custom", "v1") in fields and ("x-custom", "v2") in fields
        assert ("user-agent", "bridge-test") in fields
        assert ("host", "127.0.0.1:%d" % srv.ports[0]) in fields
        assert e["client"][0] == "127.0.0.1" and e["client"][1] > 0
        assert e["server"] == ["127.0.0.1", srv.ports[0]]
        assert e["http_version"] == "1.1" and e["scheme"] == "http"
        assert e["raw_path"] == "/a/echo"
        assert e["started"] is True            # the lifespan's state
    else:
        assert e["http"]["HTTP_X_CUSTOM"] == "v1,v2"
        assert e["http"]["HTTP_USER_AGENT"] == "bridge-test"
        assert e["request_uri"] == "/w/echo?x=1&name=caf%C3%A9&e="
        assert e["remote_addr"] == "127.0.0.1"
        assert e["server_name"] == "127.0.0.1"
        assert e["server_port"] == str(srv.ports[0])
        assert e["protocol"] == "HTTP/1.1" and e["scheme"] == "http"
    assert e["length"] == 0


@pytest.mark.parametrize("k", KINDS)
def test_values_change_from_request_to_request(env, k):
    """The runner keeps the last value of each string and common field per
    connection and reuses it while the next request's is the same: values
    that change, come back, repeat and vanish, on kept connections (how the
    requests spread over them does not matter: each sees a sequence of
    changes; the extension's own test below fixes one)."""
    srv = env[0]
    steps = [("GET", "x=1", "ua-1", ["X-Custom: a"], "h1"),
             ("POST", "x=1", "ua-1", ["X-Custom: a"], "h1"),
             ("GET", "x=2", "ua-2", ["X-Custom: a", "X-Custom: b"], "h2"),
             ("PUT", "", "ua-1", [], "h1"),
             ("GET", "x=1", "ua-11", ["X-Custom: a"], "h1"),
             ("GET", "x=1", "ua-1", ["X-Custom: A"], "h1")]
    for method, query, ua, extra, host in steps:
        r = get(srv, "/%s/echo?%s" % (k, query), method=method,
                body=b"b" if method != "GET" else None,
                headers=["User-Agent: " + ua, "Host: %s.example" % host] + extra)
        e = as_json(r)
        assert e["method"] == method and e["query"] == query
        custom = [x.split(": ", 1)[1] for x in extra]
        if k == "a":
            fields = [tuple(f) for f in e["headers"]]
            assert ("user-agent", ua) in fields
            assert ("host", "%s.example" % host) in fields
            assert [v for n, v in fields if n == "x-custom"] == custom
        else:
            assert e["http"]["HTTP_USER_AGENT"] == ua
            assert e["http"]["HTTP_HOST"] == "%s.example" % host
            assert e["server_name"] == "%s.example" % host
            assert e["http"].get("HTTP_X_CUSTOM") == (",".join(custom) or None)


@pytest.mark.parametrize("k", KINDS)
@pytest.mark.parametrize("port", [0, 1], ids=["buffered", "streamed"])
@pytest.mark.parametrize("size", [11, 5 << 20])
def test_post_bodies(env, k, port, size):
    srv = env[0]
    body = os.urandom(size)
    r = get(srv, "/%s/echo" % k, port=port, method="POST", body=body,
            headers=["Content-Type: application/x-test"])
    e = as_json(r)
    assert e["method"] == "POST"
    assert e["length"] == size and e["sha256"] == hashlib.sha256(body).hexdigest()
    if k == "w":
        assert e["content_type"] == "application/x-test"
        assert e["content_length"] == str(size)


@pytest.mark.parametrize("k", KINDS)
@pytest.mark.parametrize("port", [0, 1], ids=["buffered", "streamed"])
def test_chunked_upload_read_as_a_stream(env, k, port):
    srv = env[0]
    body = os.urandom(3 << 20)
    r = get(srv, "/%s/upload" % k, port=port, method="POST", body=body,
            headers=["Transfer-Encoding: chunked"])
    e = as_json(r)
    assert e["length"] == len(body) and e["sha256"] == hashlib.sha256(body).hexdigest()
    if k == "a" and port == 1:
        assert e["pieces"] > 1              # it came as it was read


@pytest.mark.parametrize("k", KINDS)
@pytest.mark.parametrize("port", [0, 1], ids=["buffering", "nobuffering"])
def test_streamed_response(env, k, port):
    srv = env[0]
    r = get(srv, "/%s/stream?n=300&size=40000" % k, port=port)
    assert r.status == 200
    want = b"".join(bytes([65 + i % 26]) * 40000 for i in range(300))
    assert len(r.body) == len(want) and r.body == want
    assert r.header("Transfer-Encoding") == "chunked"


@pytest.mark.parametrize("k", KINDS)
def test_status_fields_and_head(env, k):
    srv = env[0]
    r = get(srv, "/%s/status/418" % k)
    assert r.status == 418
    assert r.body == b"status 418\n"
    assert r.header("X-Test") == "yes"
    assert r.header("Content-Length") == "11"
    cookies = sorted(v.split(";")[0] for v in r.headers_all("Set-Cookie"))
    assert cookies == ["a=1", "b=2"]
    r = get(srv, "/%s/status/204" % k)
    assert r.status == 204 and r.body == b""
    r = get(srv, "/%s/echo" % k, method="HEAD")
    assert r.status == 200 and r.body == b""
    r = get(srv, "/%s/nowhere" % k)
    assert r.status == 404


def test_keepalive_to_the_runner(env):
    """The kept connections serve request after request (END's KEEP)."""
    srv = env[0]
    for k in KINDS:
        for _ in range(20):
            assert get(srv, "/%s/echo" % k).status == 200
    assert "invalid python bridge" not in h._read(srv.error_log_path)


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("k", KINDS)
def test_runner_closes_a_connection_with_invalid_frames(env, k):
    """Bytes that are no frame, straight to the runner: it logs the framing
    error, closes that connection and serves the next one (the ASGI
    runner's transport hands reads to the parser itself, the WSGI loop's
    read_from feeds it)."""
    import socket
    srv, runners = env[0], env[1]
    r = runners[k]
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(5)
        s.connect(r.sock)
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert s.recv(100) == b""                    # closed
    assert h.wait_for(lambda: "scalws_bridge: python bridge: an invalid frame" in r.output(), 5)
    assert "Traceback" not in r.output()
    assert get(srv, "/%s/echo" % k).status == 200



@pytest.mark.parametrize("k", KINDS)
def test_application_exception_is_a_500(env, k):
    srv, runners = env[0], env[1]
    r = get(srv, "/%s/error" % k)
    assert r.status == 500
    assert h.wait_for(lambda: "the application failed on purpose" in runners[k].output())
    assert get(srv, "/%s/echo" % k).status == 200     # and it goes on


@pytest.mark.parametrize("k", KINDS)
def test_application_exception_in_the_middle_of_a_response(env, k):
    """The head has gone: the client's response is cut, never completed."""
    srv, runners = env[0], env[1]
    with h.Conn(srv.ports[0], timeout=5) as c:
        c.send(h.request(path="/%s/streamfail" % k, headers=["Connection: close"]))
        data = c.read_until_close(timeout=5)
    assert data.startswith(b"HTTP/1.1 200") and b"first part, " in data
    assert not data.endswith(b"0\r\n\r\n")
    assert h.wait_for(lambda: "the stream failed on purpose" in runners[k].output())
    assert get(srv, "/%s/echo" % k).status == 200


def test_runner_not_there(env):
    srv = env[0]
    t = time.monotonic()
    r = get(srv, "/dead/x")
    assert r.status == 502 and time.monotonic() - t < 3


def test_runner_killed(env):
    """SIGKILL in the middle of a streamed response: the client's response
    is cut (not completed, no hang); then 502 at once until it is back."""
    srv, _, sockdir, tmp = env
    k = pr.Runner(os.path.join(sockdir, "k.sock"), "asgi_app:app", "asgi",
                  tmp / "marks-k", workers=1).start()
    try:
        pr.wait_mark(k, "startup")
        with h.Conn(srv.ports[2], timeout=5) as c:
            c.send(h.request(path="/a/stream?n=100&size=1000&delay=0.05"))
            while len(c.buf) < 2000:
                assert c._fill(5)
            k.kill()
            t = time.monotonic()
            rest = c.read_until_close(timeout=5)
            assert time.monotonic() - t < 4
        data = c.buf + rest
        assert not data.endswith(b"0\r\n\r\n")       # no chunked end: the client knows
        t = time.monotonic()
        r = get(srv, "/a/echo", port=2)
        assert r.status == 502 and time.monotonic() - t < 3
    finally:
        k.kill()
    k2 = pr.Runner(os.path.join(sockdir, "k.sock"), "wsgi_app:app", "wsgi",
                   tmp / "marks-k2", workers=1).start()
    try:
        assert get(srv, "/w/echo", port=2).status == 200   # back
    finally:
        k2.stop()


@pytest.mark.parametrize("k", KINDS)
def test_slow_client_bounds_what_the_app_produces(env, k):
    """With buffering off a client that stops reading stops the
    application: it has made only what the sockets and buffers hold."""
    srv, runners = env[0], env[1]
    total = 256 << 20
    with h.Conn(srv.ports[1], timeout=5, rcvbuf=65536) as c:
        c.send(h.request(path="/%s/endless?total=%d" % (k, total)))
        while len(c.buf) < 100000:
            c._fill(5)
        time.sleep(1.5)
        produced = int(runners[k].mark("produced-" + ("asgi" if k == "a" else "wsgi")) or 0)
        print("produced by the application: %d bytes" % produced)
        assert produced < 16 << 20, produced       # of 256 MiB (4 MiB seen)
        time.sleep(0.5)
        assert int(runners[k].mark("produced-" + ("asgi" if k == "a" else "wsgi"))) \
            == produced, "it went on producing"
    assert get(srv, "/%s/echo" % k).status == 200


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) << 10
    return 0


@pytest.mark.parametrize("k", KINDS)
def test_slow_application_bounds_what_the_client_sends(env, k):
    """A streamed upload to an application that reads nothing for 1.5 s:
    the client gets only what the buffers hold through in that time, and
    scalwsd's worker does not grow by the body; then all of it arrives."""
    srv = env[0]
    total = 48 << 20
    worker = srv.children()[0]
    before = rss(worker)
    chunk = b"u" * 65536
    with h.Conn(srv.ports[1], timeout=5) as c:
        c.send(h.request(method="POST", path="/%s/lateread" % k,
                         headers=["Content-Length: %d" % total, "Connection: close"]))
        c.sock.settimeout(0.05)
        sent, deadline = 0, time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                sent += c.sock.send(chunk)
            except socket.timeout:
                pass
        grown = rss(worker) - before
        print("sent in the first second: %d bytes; the worker grew by %d" % (sent, grown))
        assert sent < 16 << 20, sent             # of 48 MiB (3-4 MiB seen)
        assert grown < 4 << 20, grown
        c.sock.settimeout(10)
        rest = total - sent
        while rest:
            n = c.sock.send(chunk[:min(rest, len(chunk))])
            rest -= n
        r = c.read_response()
    assert r.status == 200 and json.loads(r.body)["length"] == total


@pytest.mark.parametrize("k", KINDS)
def test_100_concurrent_clients(env, k):
    srv = env[0]
    bodies = [os.urandom(1000 + i * 37) for i in range(100)]

    def one(i):
        if i % 2:
            r = get(srv, "/%s/echo?i=%d" % (k, i), method="POST", body=bodies[i])
            e = as_json(r)
            return e["args"]["i"] == str(i) and \
                e["sha256"] == hashlib.sha256(bodies[i]).hexdigest()
        r = get(srv, "/%s/stream?n=20&size=5000" % k)
        return r.status == 200 and len(r.body) == 100000

    with concurrent.futures.ThreadPoolExecutor(100) as ex:
        results = list(ex.map(one, range(100), timeout=60))
    assert all(results)


# ---------------------------------------------------------------- ASGI

def test_asgi_disconnect_reaches_the_app(env):
    srv, runners = env[0], env[1]
    a = runners["a"]
    c = h.Conn(srv.ports[0], timeout=5)
    c.send(h.request(path="/a/disconnect"))
    time.sleep(0.3)
    c.close()
    pr.wait_mark(a, "disconnected")


def ws_frame(opcode, payload, fin=True):
    """A client's (masked) websocket frame."""
    key = os.urandom(4)
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def ws_read(c):
    """(opcode, payload) of a server's (unmasked) frame."""
    b0, b1 = c.read_exact(2)
    assert not b1 & 0x80, "a server's frame is not masked"
    n = b1 & 0x7F
    if n == 126:
        n = int.from_bytes(c.read_exact(2), "big")
    elif n == 127:
        n = int.from_bytes(c.read_exact(8), "big")
    return b0 & 0x0F, c.read_exact(n)


def ws_connect(srv, path, extra=()):
    import base64
    key = base64.b64encode(os.urandom(16)).decode()
    c = h.Conn(srv.ports[0], timeout=5)
    c.send(h.request(path=path, headers=["Upgrade: websocket", "Connection: Upgrade",
                                         "Sec-WebSocket-Key: " + key,
                                         "Sec-WebSocket-Version: 13"] + list(extra)))
    return c, key


def test_asgi_websocket_echo(env):
    import base64
    srv, runners = env[0], env[1]
    c, key = ws_connect(srv, "/a/ws", ["Sec-WebSocket-Protocol: other, chat"])
    with c:
        r = c.read_response()
        assert r.status == 101, r
        assert r.header("Upgrade").lower() == "websocket"
        assert r.header("Connection").lower() == "upgrade"
        assert r.header("Sec-WebSocket-Accept") == base64.b64encode(hashlib.sha1(
            (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        assert r.header("Sec-WebSocket-Protocol") == "chat"
        c.send(ws_frame(0x1, "h\u00e9llo".encode()))
        assert ws_read(c) == (0x1, "echo: h\u00e9llo".encode())
        big = os.urandom(200000)                      # a 64-bit length, both ways
        c.send(ws_frame(0x2, big))
        assert ws_read(c) == (0x2, big[::-1])
        c.send(ws_frame(0x1, b"frag", fin=False) + ws_frame(0x0, b"mented"))
        assert ws_read(c) == (0x1, b"echo: fragmented")
        c.send(ws_frame(0x9, b"pi"))
        assert ws_read(c) == (0xA, b"pi")
        c.send(ws_frame(0x1, b"bye"))
        op, payload = ws_read(c)
        assert op == 0x8 and int.from_bytes(payload[:2], "big") == 4000
        c.read_until_close(timeout=5)
    # the client's own close reaches the application as a disconnect
    c, key = ws_connect(srv, "/a/ws")
    with c:
        assert c.read_response().status == 101
        c.send(ws_frame(0x8, (1001).to_bytes(2, "big")))
        op, payload = ws_read(c)
        assert op == 0x8 and int.from_bytes(payload[:2], "big") == 1001
        c.read_until_close(timeout=5)
    assert pr.wait_mark(runners["a"], "ws-disconnected") == "1001"
    assert get(srv, "/a/echo").status == 200


def test_asgi_websocket_slow_client_bounds_what_the_app_sends(env):
    """A websocket client that reads nothing: the application's sends wait
    once the sockets and buffers between are full (of 256 MiB it would
    send); the client then reads what was sent, whole frames; once it
    went, the application's next send raises (its task ends)."""
    srv, runners = env[0], env[1]
    a = runners["a"]
    c, _ = ws_connect(srv, "/a/ws-flood")
    with c:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        assert c.read_response().status == 101
        pr.wait_mark(a, "ws-produced")
        time.sleep(1.5)
        produced = int(a.mark("ws-produced"))
        print("sent by the application: %d bytes" % produced)
        assert produced < 16 << 20, produced
        time.sleep(0.5)
        assert int(a.mark("ws-produced")) == produced, "it went on sending"
        for _ in range(8):
            assert ws_read(c) == (0x2, b"f" * 65536)
    # gone: its next send raises an OSError, which ends the application's
    # loop (the runner logs no traceback for it)
    assert pr.wait_mark(a, "ws-flood-ended") == "OSError"
    assert "ClientDisconnected" not in a.output()
    assert get(srv, "/a/echo").status == 200


def test_asgi_websocket_slow_app_bounds_what_the_client_sends(env):
    """A websocket client sending 64 KiB messages to an application that
    receives nothing for 1.5 s: what it gets through in the first second is
    what the buffers hold (the runner's queue stops reading at 1 MiB), not
    the 48 MiB; then every byte arrives."""
    srv, runners = env[0], env[1]
    a = runners["a"]
    total, msg = 48 << 20, ws_frame(0x2, b"m" * 65536)
    c, _ = ws_connect(srv, "/a/ws-deaf")
    with c:
        assert c.read_response().status == 101
        c.sock.settimeout(0.05)
        sent, deadline, view = 0, time.monotonic() + 1.0, memoryview(msg)
        pos = 0
        while time.monotonic() < deadline:
            try:
                n = c.sock.send(view[pos:])
            except socket.timeout:
                continue
            pos += n
            if pos == len(msg):
                sent, pos = sent + 65536, 0
        print("sent in the first second: %d bytes" % sent)
        assert sent < 16 << 20, sent
        c.sock.settimeout(10)
        c.sock.sendall(view[pos:])
        sent += 65536
        while sent < total:
            c.sock.sendall(msg)
            sent += 65536
        c.send(ws_frame(0x8, (1000).to_bytes(2, "big")))
        assert ws_read(c)[0] == 0x8
    assert int(pr.wait_mark(a, "ws-deaf-got", 10)) == total


def test_asgi_websocket_refused(env):
    srv = env[0]
    c, _ = ws_connect(srv, "/a/ws-refuse")
    with c:
        r = c.read_response()
        assert r.status == 403, r


def test_asgi_lifespan_shutdown(env):
    _, _, sockdir, tmp = env
    r = pr.Runner(os.path.join(sockdir, "l.sock"), "asgi_app:app", "asgi",
                  tmp / "marks-l", workers=1).start()
    pr.wait_mark(r, "startup")
    assert r.stop() == 0
    pr.wait_mark(r, "shutdown")
    assert not os.path.exists(r.sock)


def test_asgi_lifespan_startup_failed_or_unsupported(env):
    """lifespan.startup.failed: the runner logs the application's message
    and exits without serving; an application that raises on the lifespan
    scope is served without one (no state)."""
    srv, _, sockdir, tmp = env
    r = pr.Runner(os.path.join(sockdir, "lf.sock"), "lifespan_app:failing", "asgi",
                  tmp / "marks-lf", workers=1)
    r.start(check=False)
    assert r.proc.wait(10) == 3
    assert "startup failed: no database here" in r.output(), r.output()
    u = pr.Runner(os.path.join(sockdir, "k.sock"), "lifespan_app:unsupported", "asgi",
                  tmp / "marks-lu", workers=1).start()
    try:
        r = get(srv, "/x", port=2)
        assert r.status == 200 and r.body == b"served without a lifespan, state None", r.body
    finally:
        u.stop()


def test_asgi_task_factory_of_the_application(env):
    """The runner makes (and names) its request tasks itself, unless the
    application set a task factory in its lifespan: then the factory makes
    them, as loop.create_task would."""
    srv, runners, sockdir, tmp = env
    r = as_json(get(srv, "/a/task", port=0))
    assert r["task"] == "scalws-request"
    f = pr.Runner(os.path.join(sockdir, "k.sock"), "factory_app:app", "asgi",
                  tmp / "marks-f", workers=1).start()
    try:
        names = [as_json(get(srv, "/x", port=2)) for _ in range(3)]
    finally:
        f.stop()
    assert [n["task"] for n in names] == ["from-factory-%d" % n["made"] for n in names]
    assert [n["made"] for n in names] == sorted({n["made"] for n in names})
    assert names[0]["made"] >= 1


def test_runner_refuses_an_app_it_cannot_load(env):
    _, _, sockdir, tmp = env
    r = pr.Runner(os.path.join(sockdir, "bad.sock"), "no_such_module:app", "wsgi",
                  tmp / "marks-bad", workers=2)
    r.start(check=False)
    assert r.proc.wait(10) == 3
    assert "No module named 'no_such_module'" in r.output()


# ---------------------------------------------------------------- WSGI

def test_wsgi_close_and_write(env):
    srv, runners = env[0], env[1]
    r = get(srv, "/w/raw/closing")
    assert r.status == 200 and r.body == b"one two three"
    pr.wait_mark(runners["w"], "closed")
    r = get(srv, "/w/raw/write")
    assert r.status == 201 and r.body == b"written and returned"


def test_wsgi_close_when_the_client_goes(env):
    """An endless iterable whose client goes in the middle: close() is
    called all the same (PEP 3333), and the runner serves on."""
    srv, runners = env[0], env[1]
    w = runners["w"]
    with h.Conn(srv.ports[1], timeout=5) as c:
        c.send(h.request(path="/w/raw/endless"))
        while len(c.buf) < 200000:
            assert c._fill(5)
    assert pr.wait_mark(w, "closed-endless") == ""
    assert get(srv, "/w/echo").status == 200


def test_wsgi_file_wrapper(env):
    srv, runners = env[0], env[1]
    data = os.urandom(3 << 20)
    (runners["w"].marks / "file.bin").write_bytes(data)
    for port in (0, 1):
        r = get(srv, "/w/raw/file", port=port)
        assert r.status == 200 and r.body == data


def test_wsgi_environ_and_input_per_pep_3333(env):
    """A raw WSGI app under wsgiref.validate's validator: the environ's CGI
    variables (PATH_INFO decoded, its bytes as latin-1; the query as sent),
    native strings, the wsgi.* keys, wsgi.errors to the runner's output,
    and wsgi.input read with readline(), read(n) and iteration up to its
    end, for a body of known length and a chunked one."""
    srv, _, sockdir, tmp = env
    v = pr.Runner(os.path.join(sockdir, "k.sock"), "pep3333_app:app", "wsgi",
                  tmp / "marks-v", workers=1).start()
    try:
        e = as_json(get(srv, "/v/caf%C3%A9%20x%2Fy?q=%20&r", port=2, headers=["X-A: 1"]))
        assert {k: e[k] for k in e if k.isupper()} == {
            "REQUEST_METHOD": "GET", "SCRIPT_NAME": "", "PATH_INFO": "/v/caf\u00c3\u00a9 x/y",
            "QUERY_STRING": "q=%20&r", "CONTENT_TYPE": None, "CONTENT_LENGTH": None,
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": str(srv.ports[2]),
            "SERVER_PROTOCOL": "HTTP/1.1"}, e
        assert e["native"] and e["http"]["HTTP_X_A"] == "1"
        assert e["wsgi"] == {"version": [1, 0], "url_scheme": "http", "flags": [True] * 3,
                             "run_once": False, "errors": True}
        assert e["body"] == 0
        for extra in ([], ["Transfer-Encoding: chunked"]):
            e = as_json(get(srv, "/v/lines", port=2, method="POST", headers=extra,
                            body=b"one\ntwo\nthree\nfour"))
            assert e["lines"] == ["one\n", "two\nt", "hree\n", "four"] and e["eof"], e
            assert e["CONTENT_LENGTH"] == "18"
        assert "pep3333 app: wsgi.errors works" in v.output()
        assert "Traceback" not in v.output(), v.output()
    finally:
        v.stop()


def test_django(env):
    """Django's WSGI handler: a form POST, and a FileResponse, which it
    hands to wsgi.file_wrapper (sent with sendfile by the runner)."""
    srv, runners = env[0], env[1]
    e = as_json(get(srv, "/d/echo?x=1&y=%C3%A9", headers=["User-Agent: dj"]))
    assert e["method"] == "GET" and e["path"] == "/d/echo"
    assert e["get"] == {"x": "1", "y": "\u00e9"} and e["agent"] == "dj"
    assert e["host"] == "127.0.0.1:%d" % srv.ports[0]
    e = as_json(get(srv, "/d/echo", method="POST", body=b"a=1&b=two+words",
                    headers=["Content-Type: application/x-www-form-urlencoded"]))
    assert e["post"] == {"a": "1", "b": "two words"} and e["length"] == 15
    data = os.urandom((2 << 20) + 123)
    (runners["d"].marks / "file.bin").write_bytes(data)
    r = get(srv, "/d/file")
    assert r.status == 200 and r.body == data
    assert r.header("Content-Length") == str(len(data))


def runner_workers(runner):
    """The runner's worker processes (its first process's children)."""
    pid = runner.proc.pid
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        return [int(x) for x in f.read().split()]


def written(pids):
    """Bytes the processes wrote so far (write, send and sendfile alike)."""
    total = 0
    for pid in pids:
        with open("/proc/%d/io" % pid) as f:
            total += int(dict(l.split(": ") for l in f.read().splitlines())["wchar"])
    return total


def worker_fds(srv):
    """The targets of the open descriptors of scalwsd's worker(s)."""
    return [f for pid in srv.children() for f in h.open_files(pid)]


@pytest.mark.parametrize("port", [0, 1], ids=["buffered", "streamed"])
def test_wsgi_send_file_is_sent_by_scalwsd(env, port):
    """Flask's send_file of 1 MiB: the runner passes the descriptor with a
    FILE frame and scalwsd sends the file (the runner's workers write a few
    hundred bytes, not the file); the body, its Content-Length, a Range
    (Werkzeug answers it with its own wrapper: the iterable's path), a
    file_wrapper from the file's position with the application's length,
    and a file_wrapper of a BytesIO (no descriptor). No descriptor stays
    open in scalwsd's worker."""
    srv, runners = env[0], env[1]
    data = os.urandom(1 << 20)
    path = runners["w"].marks / "big.bin"
    path.write_bytes(data)
    workers = runner_workers(runners["w"])
    r = get(srv, "/w/sendfile", port=port)        # a first one: imports, caches
    assert r.status == 200 and r.body == data
    before = written(workers)
    for _ in range(4):
        r = get(srv, "/w/sendfile", port=port)
        assert r.status == 200 and r.body == data
        assert r.header("Content-Length") == str(len(data))
    assert written(workers) - before < 64 * 1024, written(workers) - before
    r = get(srv, "/w/sendfile", port=port, headers=["Range: bytes=1000-1999"])
    assert r.status == 206 and r.body == data[1000:2000]
    assert r.header("Content-Range") == "bytes 1000-1999/%d" % len(data)
    r = get(srv, "/w/raw/fileat", port=port)
    assert r.status == 200 and r.body == data[1000:6000]
    assert r.header("Content-Length") == "5000"
    r = get(srv, "/w/raw/fileat", port=port, method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "5000"
    r = get(srv, "/w/raw/bytesio", port=port)
    assert r.status == 200 and r.body == b"not a file, " * 1000
    assert h.wait_for(lambda: str(path) not in worker_fds(srv), 3), worker_fds(srv)


def test_file_frames_from_a_fake_runner(env, fake, tmp_path):
    """REQUEST says FILE; a FILE frame with its descriptor is the body
    (the range of the file), and the descriptor is closed after it."""
    srv = env[0]
    data = os.urandom(300000)
    f = tmp_path / "fake.bin"
    f.write_bytes(data)
    fd = os.open(f, os.O_RDONLY)
    try:
        fake.reply = (peer.response(200, [("Content-Length", "200000")], end=False)
                      + peer.frame(peer.FILE, struct.pack(">QQ", 50000, 200000))
                      + peer.frame(peer.END, flags=1), [fd])
        r = get(srv, "/fake/file")
        assert r.status == 200 and r.body == data[50000:250000]
        assert fake.requests[-1]["frame_flags"] & 0x04
    finally:
        os.close(fd)
    assert h.wait_for(lambda: str(f) not in worker_fds(srv), 3), worker_fds(srv)


@pytest.mark.parametrize("what", ["none", "pipe", "past", "after-data", "length"])
def test_invalid_file_frames(env, fake, tmp_path, what):
    srv = env[0]
    f = tmp_path / "small.bin"
    f.write_bytes(b"x" * 100)
    fds = [os.open(f, os.O_RDONLY)]
    head = peer.response(200, end=False)
    rng = struct.pack(">QQ", 0, 100)
    why = "a FILE frame of no regular file, or past its end"
    if what == "none":
        reply, fds, why = head + peer.frame(peer.FILE, rng) + peer.frame(peer.END), [], \
            "a FILE frame without a descriptor"
    elif what == "pipe":
        rd, wr = os.pipe()
        os.close(fds[0])
        os.close(wr)
        fds = [rd]
        reply = head + peer.frame(peer.FILE, rng) + peer.frame(peer.END)
    elif what == "past":
        reply = head + peer.frame(peer.FILE, struct.pack(">QQ", 50, 51)) + peer.frame(peer.END)
    elif what == "after-data":
        reply = head + peer.frame(peer.DATA, b"abc") + peer.frame(peer.FILE, rng) \
            + peer.frame(peer.END)
        why = "a FILE frame after the body began"
    else:
        reply = peer.response(200, [("Content-Length", "10")], end=False) \
            + peer.frame(peer.FILE, rng) + peer.frame(peer.END)
        why = "more data than its Content-Length"
    since = len(h._read(srv.error_log_path))
    fake.reply = (reply, fds) if fds else reply
    try:
        with h.Conn(srv.ports[0], timeout=5) as c:
            c.send(h.request(path="/fake/x", headers=["Connection: close"]))
            data = c.read_until_close(timeout=5)
    finally:
        for fd in fds:
            os.close(fd)
    head = data.split(b"\r\n", 1)[0] if data else b""
    assert head.endswith(b" 502 Bad Gateway") or head.startswith(b"HTTP/1.1 200"), data[:200]
    assert b"x" * 100 not in data
    assert logged(srv, since, why), h._read(srv.error_log_path)[since:]
    assert h.wait_for(lambda: str(f) not in worker_fds(srv), 3), worker_fds(srv)


# ---------------------------------------------------------------- the framing

@pytest.fixture
def fake(env):
    p = peer.Peer(os.path.join(env[2], "fake.sock"))
    yield p
    p.stop()
    os.unlink(p.path)


def test_request_frames_byte_by_byte(env, fake):
    srv = env[0]
    fake.reply = peer.response(201, [("X-From", "fake"), ("Content-Length", "5")], b"hello")
    r = get(srv, "/fake/p%20q?a=1&b", method="POST", body=b"0123456789",
            headers=["X-One: 1", "X-One: 2"])
    assert r.status == 201 and r.body == b"hello" and r.header("X-From") == "fake"
    q = fake.requests[-1]
    assert q["method"] == "POST" and q["path"] == "/fake/p q"
    assert q["raw"] == "/fake/p%20q?a=1&b" and q["query"] == "a=1&b"
    assert q["version"] == (1, 1) and not q["https"]
    assert q["client"] == "127.0.0.1" and q["client_port"] > 0
    assert q["server"] == "127.0.0.1" and q["server_port"] == srv.ports[0]
    assert q["host"] == "127.0.0.1"
    assert q["content_length"] == 10 and q["body"] == b"0123456789" and q["pieces"] == 1
    assert ("x-one", "1") in q["fields"] and ("x-one", "2") in q["fields"]
    assert ("host", "127.0.0.1:%d" % srv.ports[0]) in q["fields"]
    r = get(srv, "/fakeoff/x")
    assert r.status == 201
    q = fake.requests[-1]
    assert q["fields"] == [] and q["content_length"] == 0 and q["body"] == b""


@pytest.mark.parametrize("keep", [True, False])
def test_end_keep_decides_the_connection(env, keep):
    """END with KEEP: scalwsd sends the next request on the same
    connection; without it, it closes the connection."""
    srv = env[0]
    p = peer.Peer(os.path.join(env[2], "fake.sock"), keep=True)
    try:
        p.reply = peer.response(200, [("Content-Length", "2")], b"ok", keep=keep)
        for i in range(5):
            r = get(srv, "/fakeka/%d" % i, method="POST" if i % 2 else "GET",
                    body=b"x" * 100 if i % 2 else None)
            assert r.status == 200 and r.body == b"ok"
        assert [q["path"] for q in p.requests] == ["/fakeka/%d" % i for i in range(5)]
        assert p.connections == (1 if keep else 5)
    finally:
        p.stop()
        os.unlink(p.path)


@pytest.mark.parametrize("reply, why", [
    (b"HTTP/1.1 200 OK\r\n\r\n", "no RESPONSE frame first"),
    (peer.frame(peer.RESPONSE, b"\x00\x01\x00\x00"), "a malformed RESPONSE frame"),
    (peer.frame(peer.RESPONSE, b"\x00\xc8\x00\x01\x00\x01"), "a malformed RESPONSE frame"),
    (peer.response(200, end=False) + peer.frame(peer.RESPONSE, b"\x00\xc8\x00\x00"),
     "a frame out of place"),
    (peer.response(200, end=False) + peer.frame(0x7f), "an invalid frame"),
    (peer.response(200, [("Content-Length", "2")], b"abc"),
     "more data than its Content-Length"),
    (peer.response(200, end=False) + peer.frame(peer.DATA, b"cut"),
     "the connection closed before END"),
    (peer.response(101, [("Upgrade", "websocket")], end=False),
     "a 101 to a request that asked for no upgrade"),
])
def test_invalid_replies(env, fake, reply, why):
    srv = env[0]
    since = len(h._read(srv.error_log_path))
    fake.reply = reply
    t = time.monotonic()
    with h.Conn(srv.ports[0], timeout=5) as c:
        c.send(h.request(path="/fake/x", headers=["Connection: close"]))
        data = c.read_until_close(timeout=5)
    assert time.monotonic() - t < 4
    head = data.split(b"\r\n", 1)[0] if data else b""
    if why in ("no RESPONSE frame first", "a malformed RESPONSE frame",
               "a 101 to a request that asked for no upgrade"):
        assert head.endswith(b" 502 Bad Gateway"), data[:200]
    elif not head.endswith(b" 502 Bad Gateway"):
        # the head had gone to the client: its response is cut
        assert head.startswith(b"HTTP/1.1 200"), data[:200]
        assert not data.endswith(b"0\r\n\r\n"), data[-50:]
    assert logged(srv, since, why), h._read(srv.error_log_path)[since:]


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { listen 127.0.0.1:1; location / { python_bridge_pass unix:/a; "
         "python_bridge_pass unix:/b; } }", "is duplicate"),
        ("python_bridge_pass unix:/a;", "not allowed here"),
    ])


# ---------------------------------------------------------------- the extension

def bridge_module():
    import importlib
    import sys
    pr.require()
    if pr.BRIDGE not in sys.path:
        sys.path.insert(0, pr.BRIDGE)
    return importlib.import_module("scalws_bridge._bridge")


def request_payload(method=b"GET", path=b"/x", raw=b"/x?q=1", query=b"q=1", fields=(),
                    clen=0, server_port=80):
    def s(b):
        return len(b).to_bytes(2, "big") + b
    p = bytes([1, 1, 0, 0]) + (1234).to_bytes(2, "big") + server_port.to_bytes(2, "big")
    p += clen.to_bytes(8, "big") + len(fields).to_bytes(2, "big") + b"\0\0"
    for x in (method, path, raw, query, b"127.0.0.1", b"127.0.0.2", b"example.org"):
        p += s(x)
    for n, v in fields:
        p += s(n) + s(v)
    return p


def test_extension_reads_frames_however_cut():
    """The runner's parser: the same scopes, environs and body pieces
    whether the bytes come whole or one at a time; out-of-place or invalid
    frames are a ValueError."""
    b = bridge_module()
    stream = peer.frame(peer.REQUEST, request_payload(
        b"POST", fields=[(b"content-type", b"text/plain"), (b"x-a", b"1"), (b"x-a", b"2")],
        clen=7), 1)
    stream += peer.frame(peer.BODY, b"abc") + peer.frame(peer.BODY, b"defg") + \
        peer.frame(peer.BODY_END)
    stream += peer.frame(peer.REQUEST, request_payload())

    def run(mode, pieces):
        events = []
        p = b.Parser(lambda r, body: events.append(("req", r, body)),
                     lambda d: events.append(("body", d)),
                     lambda: events.append(("end",)), mode,
                     {"version": "3.0"} if mode == b.MODE_ASGI else {"wsgi.version": (1, 0)})
        for x in pieces:
            p.feed(x)
        body = b"".join(e[1] for e in events if e[0] == "body")
        return [e for e in events if e[0] != "body"], body

    for mode in (b.MODE_ASGI, b.MODE_WSGI):
        whole = run(mode, [stream])
        cut = run(mode, [stream[i:i + 1] for i in range(len(stream))])
        assert whole == cut and whole[1] == b"abcdefg"
        (_, first, has_body), end, (_, second, no_body) = whole[0]
        assert has_body == b.REQUEST_BODY and no_body == 0 and end == ("end",)
        if mode == b.MODE_ASGI:
            assert first["method"] == "POST" and first["path"] == "/x"
            assert first["raw_path"] == b"/x" and first["query_string"] == b"q=1"
            assert first["client"] == ("127.0.0.1", 1234)
            assert first["server"] == ("127.0.0.2", 80)
            assert first["headers"][1:] == [(b"x-a", b"1"), (b"x-a", b"2")]
        else:
            assert first["REQUEST_METHOD"] == "POST" and first["PATH_INFO"] == "/x"
            assert first["CONTENT_TYPE"] == "text/plain" and first["CONTENT_LENGTH"] == "7"
            assert first["HTTP_X_A"] == "1,2" and first["SERVER_NAME"] == "example.org"
            assert first["REMOTE_PORT"] == "1234" and first["wsgi.version"] == (1, 0)
            assert second["REQUEST_METHOD"] == "GET" and "CONTENT_LENGTH" not in second
    bad = [
        b"GET / HTTP/1.1\r\n\r\n",                                  # not a frame
        peer.frame(peer.BODY, b"x"),                                # a body before a request
        peer.frame(peer.RESPONSE, b"\0\xc8\0\0"),                   # the other direction's
        peer.frame(peer.REQUEST, request_payload()[:-3]),           # a string cut
        peer.frame(peer.REQUEST, request_payload(), 1) + peer.frame(peer.REQUEST,
                                                                    request_payload()),
    ]
    for data in bad:
        p = b.Parser(lambda r, body: None, lambda d: None, lambda: None, b.MODE_ASGI, {})
        with pytest.raises(ValueError):
            p.feed(data)


def test_extension_reuses_values_only_while_they_are_the_same():
    """A parser shares a value with the previous request's only when the
    bytes are the same (the server's port, a field), and forgets them all
    when it is set up again (bytes in ASGI are str in WSGI)."""
    b = bridge_module()
    got = []
    p = b.Parser(lambda r, f: got.append(r), lambda d: None, lambda: None, b.MODE_ASGI, {})
    for port, ua in ((80, b"ua-a"), (8080, b"ua-b"), (80, b"ua-a"), (80, b"ua-c")):
        p.feed(peer.frame(peer.REQUEST, request_payload(fields=[(b"user-agent", ua)],
                                                        server_port=port)))
    assert [r["server"] for r in got] == [("127.0.0.2", 80), ("127.0.0.2", 8080),
                                          ("127.0.0.2", 80), ("127.0.0.2", 80)]
    assert [r["headers"] for r in got] == [[(b"user-agent", v)]
                                           for v in (b"ua-a", b"ua-b", b"ua-a", b"ua-c")]
    assert got[2]["server"] is got[3]["server"]
    assert got[2]["headers"][0][1] is not got[3]["headers"][0][1]
    # every scope is its own dict, whatever the one before held
    https = bytearray(request_payload())
    https[2] = 1
    for payload in (bytes(https), request_payload()):
        p.feed(peer.frame(peer.REQUEST, payload))
    assert [r["scheme"] for r in got[4:]] == ["https", "http"]
    got[4]["path"] = "changed"
    p.feed(peer.frame(peer.REQUEST, request_payload()))
    assert got[6]["path"] == "/x" and got[6] is not got[5]
    del got[4:]
    p.__init__(lambda r, f: got.append(r), lambda d: None, lambda: None, b.MODE_WSGI, {})
    for port in (80, 8080):
        p.feed(peer.frame(peer.REQUEST, request_payload(fields=[(b"user-agent", b"ua-a")],
                                                        server_port=port)))
    for e, port in zip(got[4:], ("80", "8080")):
        assert e["SERVER_PORT"] == port and e["QUERY_STRING"] == "q=1"
        assert e["REQUEST_URI"] == "/x?q=1" and e["HTTP_USER_AGENT"] == "ua-a"


def test_extension_scope_follows_each_request():
    """An ASGI scope is a copy of the parser's first, which keeps the first
    request's method, version, path, raw path, query and server: each scope
    must still be exactly what a new parser makes of the same request, as
    these change and come back, while the application changes the scope
    before."""
    b = bridge_module()

    def payload(method=b"GET", path=b"/x", raw=b"/x?q=1", query=b"q=1", port=80,
                version=(1, 1)):
        p = bytearray(request_payload(method, path, raw, query,
                                      fields=[(b"host", b"h")], server_port=port))
        p[0], p[1] = version
        return bytes(p)

    requests = [
        payload(), payload(), payload(method=b"POST"), payload(),
        payload(version=(1, 0)), payload(version=(2, 0)), payload(),
        payload(path=b"/y", raw=b"/y?q=1"), payload(path=b"/caf\xc3\xa9", raw=b"/caf%C3%A9"),
        payload(), payload(query=b"", raw=b"/x"), payload(query=b"r=2", raw=b"/x?r=2"),
        payload(port=8080), payload(), payload(path=b"/\xff", raw=b"/%FF"), payload(),
    ]
    got = []
    p = b.Parser(lambda r, f: got.append(r), lambda d: None, lambda: None, b.MODE_ASGI,
                 {"version": "3.0"})
    for i, req in enumerate(requests):
        p.feed(peer.frame(peer.REQUEST, req))
        want = []
        b.Parser(lambda r, f: want.append(r), lambda d: None, lambda: None, b.MODE_ASGI,
                 {"version": "3.0"}).feed(peer.frame(peer.REQUEST, req))
        assert list(got[-1].items()) == list(want[0].items()), i
        got[-1]["method"] = got[-1]["path"] = "changed by the application"
        got[-1]["server"] = None


def test_extension_environ_follows_each_request():
    """A WSGI environ whose field names are the previous request's starts as
    a copy of that environ: each one must still be exactly what a parser
    that never saw the one before makes (same keys, same order, same
    values), whatever changes between them (values, the names, a
    CONTENT_LENGTH from the frame or from a field, repeated fields), and
    what the application did to the previous one is not seen. Also feed()
    without on_request: (environ, flags) returned, one per call."""
    b = bridge_module()
    base = {"wsgi.version": (1, 0), "wsgi.input": None}
    unknown = 2 ** 64 - 1
    ua = (b"user-agent", b"ua-a")
    steps = [
        dict(fields=[ua], clen=5),
        dict(fields=[ua], clen=unknown),
        dict(fields=[(b"user-agent", b"ua-b")], clen=unknown),
        dict(fields=[(b"user-agent", b"ua-b")], clen=unknown, method=b"POST"),
        dict(fields=[ua, (b"x-a", b"1")]),
        dict(fields=[ua]),
        dict(fields=[ua], clen=7),
        dict(fields=[ua], clen=9),
        dict(fields=[ua], clen=0),
        dict(fields=[(b"x-a", b"1"), (b"x-a", b"2")]),
        dict(fields=[(b"x-a", b"3"), (b"x-a", b"4")]),
        dict(fields=[(b"content-length", b"3")], clen=3),
        dict(fields=[(b"content-length", b"4")], clen=4),
        dict(fields=[(b"User-Agent", b"ua-a")]),
        dict(fields=[ua]),
        # the same names, other values: the path, the query, the port, a
        # field that is not a common one, and back
        dict(fields=[ua], path=b"/y", raw=b"/y?q=1"),
        dict(fields=[ua]),
        dict(fields=[ua], query=b"r=2", raw=b"/x?r=2"),
        dict(fields=[ua], server_port=8080),
        dict(fields=[ua]),
        dict(fields=[ua, (b"x-a", b"1")]),
        dict(fields=[ua, (b"x-a", b"2")]),
        dict(fields=[(b"user-agent", b"ua-b"), (b"x-a", b"2")]),
        dict(fields=[ua, (b"x-a", b"2")], method=b"PUT"),
        dict(fields=[ua, (b"x-a", b"2")]),
    ]
    p = b.Parser(None, lambda d: None, lambda: None, b.MODE_WSGI, base)
    before = None
    for kw in steps:
        data = peer.frame(peer.REQUEST, request_payload(**kw))
        env, flags = p.feed(data)
        ref, _ = b.Parser(None, lambda d: None, lambda: None, b.MODE_WSGI, base).feed(data)
        assert list(env.items()) == list(ref.items()), kw
        assert env is not before
        if before is not None:
            before["HTTP_USER_AGENT"] = "changed by the application"
            before["wsgi.input"] = "changed"
        before = env
    # ASGI: the path str is the previous one's while an ASCII path repeats
    got = []
    p2 = b.Parser(lambda r, f: got.append(r), lambda d: None, lambda: None, b.MODE_ASGI, {})
    paths = [b"/x", b"/x", b"/caf\xc3\xa9", b"/caf\xc3\xa9", b"/x\xff", b"/x", b"/y"]
    for path in paths:
        p2.feed(peer.frame(peer.REQUEST, request_payload(path=path)))
    assert [r["path"] for r in got] == [x.decode("utf-8", "surrogateescape") for x in paths]
    assert got[0]["path"] is got[1]["path"] and got[5]["path"] is not got[4]["path"]
    # feed(data, n): only the first n bytes; one REQUEST per call
    data = peer.frame(peer.REQUEST, request_payload())
    buf = bytearray(data + b"garbage")
    assert p.feed(buf, 0) is None
    env, flags = p.feed(buf, len(data))
    assert env["PATH_INFO"] == "/x" and flags == 0
    for n in (-1, len(buf) + 1):
        with pytest.raises(ValueError):
            p.feed(buf, n)
    with pytest.raises(ValueError):
        p.feed(data + data)


def test_extension_reads_and_sends_without_waiting():
    """Parser.read_from(fd) and send_some(fd, data), the WSGI loop's I/O:
    neither waits; nothing to read is None, the peer's close EOFError, a
    bad descriptor OSError; a full socket takes 0 bytes."""
    import socket
    b = bridge_module()
    a, c = socket.socketpair()
    try:
        p = b.Parser(None, lambda d: None, lambda: None, b.MODE_WSGI, {})
        assert p.read_from(a.fileno()) is None
        data = peer.frame(peer.REQUEST, request_payload())
        c.sendall(data[:5])
        assert p.read_from(a.fileno()) is None
        c.sendall(data[5:])
        env, flags = p.read_from(a.fileno())
        assert env["PATH_INFO"] == "/x" and flags == 0
        sent = 0
        while True:
            n = b.send_some(c.fileno(), b"x" * 65536)
            if n == 0:
                break
            sent += n
        assert sent > 0
        c.close()
        with pytest.raises(ValueError):      # the x's are no frame
            while True:
                p.read_from(a.fileno())
        p2 = b.Parser(None, lambda d: None, lambda: None, b.MODE_WSGI, {})
        a2, c2 = socket.socketpair()
        c2.close()
        with pytest.raises(EOFError):
            p2.read_from(a2.fileno())
        a2.close()
        with pytest.raises(OSError):
            p2.read_from(a2.fileno())
        with pytest.raises(OSError):
            b.send_some(a2.fileno(), b"x")
    finally:
        a.close()
        c.close()


def test_extension_done_is_a_finished_coroutine():
    """_bridge.DONE, what the ASGI send() returns: awaitable at once to
    None, and a coroutine to asyncio (create_task, gather, wait_for)."""
    import asyncio
    import collections.abc
    b = bridge_module()
    d = b.DONE
    assert isinstance(d, collections.abc.Coroutine) and asyncio.iscoroutine(d)

    async def main():
        return [await d, await asyncio.create_task(d), await asyncio.gather(d, d),
                await asyncio.wait_for(d, 1)]
    assert asyncio.run(main()) == [None, None, [None, None], None]
    with pytest.raises(StopIteration):
        d.send(None)
    with pytest.raises(KeyError):
        d.throw(KeyError("x"))
    assert d.close() is None and list(d) == []
    import importlib
    asgi = importlib.import_module("scalws_bridge.asgi")
    assert asyncio.iscoroutinefunction(asgi.Cycle(None, {}, 0).send)


def test_extension_gate():
    """_bridge.Gate, where the ASGI serving task waits for its next request:
    hand_over() (from a callback, as the protocol's data_received calls it)
    runs the waiting task at once, in the task's context, and the await
    gives the value; the gate serves wait after wait; set_result() wakes it
    at the loop's next turn; cancelling the waiting task raises
    CancelledError from the await; done twice is an error; hand_over() from
    within a task raises (asyncio enters no task within another) and the
    waiting task runs at the next turn instead."""
    import asyncio
    import contextvars
    b = bridge_module()
    var = contextvars.ContextVar("v", default="caller")

    async def main():
        loop = asyncio.get_running_loop()
        gate = b.Gate(loop)
        got = []

        def outside(fn, *args):
            """fn(*args) from a callback of the loop's: what got holds
            right after it, or its exception"""
            f = loop.create_future()

            def cb():
                try:
                    fn(*args)
                    f.set_result((list(got), var.get()))
                except BaseException as e:       # noqa: B902
                    f.set_exception(e)
            loop.call_soon(cb)
            return f

        async def waiter():
            var.set("task")
            while True:
                v = await gate
                got.append((v, var.get()))
                if v == "last":
                    return v

        t = asyncio.create_task(waiter())
        await asyncio.sleep(0)                  # it waits
        for i in range(3):
            seen, ctx = await outside(gate.hand_over, i)
            assert seen[-1] == (i, "task") and ctx == "caller"   # ran within hand_over
        seen, _ = await outside(gate.set_result, 3)
        assert seen[-1] == (2, "task")          # not yet
        await asyncio.sleep(0)
        assert got[-1] == (3, "task")
        with pytest.raises(RuntimeError):
            gate.hand_over(4)                   # from this task
        assert got[-1] == (3, "task")
        await asyncio.sleep(0)
        assert got[-1] == (4, "task")
        await outside(gate.hand_over, "last")
        assert await t == "last" and t.done()
        assert len(got) == 6
        # nobody waits: the next await has it at once
        await outside(gate.hand_over, "early")
        assert await gate == "early"
        gate.set_result(1)
        with pytest.raises(RuntimeError):
            gate.hand_over(2)
        assert await gate == 1
        gate.set_result("v")                    # its iterator's next()
        with pytest.raises(StopIteration) as stop:
            next(gate.__await__())
        assert stop.value.value == "v"

        # cancelled while it waits
        gate2 = b.Gate(loop)

        async def waits():
            return await gate2
        t2 = asyncio.create_task(waits())
        await asyncio.sleep(0)
        t2.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t2

    asyncio.run(asyncio.wait_for(main(), 10))
    with pytest.raises(TypeError):
        b.Gate()


def test_extension_writes_response_frames():
    b = bridge_module()
    out = b.response(404, [(b"content-type", b"text/plain"), ("X-Str", "caf\u00e9")],
                     b"nope", b.END_KEEP)
    kind, flags, zero, n = __import__("struct").unpack(">BBHI", out[:8])
    assert (kind, flags, zero) == (peer.RESPONSE, 0, 0)
    assert out[8:8 + n] == (404).to_bytes(2, "big") + (2).to_bytes(2, "big") + \
        peer.s16(b"content-type") + peer.s16(b"text/plain") + peer.s16(b"X-Str") + \
        peer.s16("caf\u00e9".encode("latin-1"))
    assert out[8 + n:] == peer.frame(peer.DATA, b"nope") + peer.frame(peer.END, flags=1)
    assert b.data(b"") == b"" and b.data(b"ab") == peer.frame(peer.DATA, b"ab")
    assert b.end(0) == peer.frame(peer.END)
    # by keyword, pairs as lists, more fields than the stack holds
    assert b.response(status=404, headers=[[b"content-type", b"text/plain"],
                                           ("X-Str", "caf\u00e9")], body=b"nope",
                      end=b.END_KEEP) == out
    many = [(b"x-%d" % i, b"%d" % i) for i in range(40)]
    head = b.response(200, many)
    assert head[8:12] == (200).to_bytes(2, "big") + (40).to_bytes(2, "big")
    assert head[12:] == b"".join(peer.s16(n) + peer.s16(v) for n, v in many)
    for status, headers in ((99, []), (200, [(b"", b"x")]), (200, [(b"a",)]),
                            (200, [(1, b"x")]), (200, [(b"a", b"x" * 70000)]),
                            (200, [(b"a", b"b")] * 20 + [(b"a", 1)]), (200, 5)):
        with pytest.raises((ValueError, TypeError)):
            b.response(status, headers)
    for args, kw in (((200,), {}), ((200, [], None, -1, 0), {}),
                     ((200, []), {"colour": 1}), ((200, []), {"status": 201})):
        with pytest.raises(TypeError):
            b.response(*args, **kw)


# ---------------------------------------------------------------- as a helper process

def test_runner_as_a_helper_process(sws, tmp_path):
    """The runner run by scalwsd's master as a helper (the test module
    helpermod.py declares it) on a socket the master makes and hands over
    (LISTEN_FDS, fd 3): it serves; killed with SIGKILL, its workers go with
    it (finishing what they have), the master starts it again, and requests
    made meanwhile wait in the socket's backlog: none fails."""
    import helpermod
    import re
    load = helpermod.build(tmp_path / "helpermod")
    sockdir = tempfile.mkdtemp(prefix="swspbh")
    os.chmod(sockdir, 0o755)
    marks = tmp_path / "marks"
    marks.mkdir()
    path = os.path.join(sockdir, "app.sock")
    try:
        s = sws(load=load, main="user root;" if os.geteuid() == 0 else "", http="""
            test_helper_program pyb /usr/bin/python3 -m scalws_bridge --app wsgi_app:app
                --interface wsgi --workers 2 --path {apps};
            test_helper_socket pyb unix:{path};
            test_helper_env pyb PYTHONPATH {bridge};
            test_helper_env pyb MARKS {marks};
        """.format(apps=pr.APPS, path=path, bridge=pr.BRIDGE, marks=marks),
            server="location /w/ {{ python_bridge_pass unix:{p}; }}".format(p=path))
        assert h.wait_for(lambda: 'helper "pyb" process' in s.error_log()
                          and "is ready" in s.error_log(), 15), s.error_log()
        first = as_json(h.curl(s.url("/w/echo")))["pid"]
        pids = [int(p) for p in re.findall(r'started helper "pyb" process (\d+)',
                                           s.error_log())]
        runner = pids[-1]
        workers = [p for p in h.children_of(runner)]
        assert first in workers and len(workers) == 2
        os.kill(runner, 9)
        # (an old worker, stopping gracefully, may still answer this one)
        assert h.curl(s.url("/w/echo"), timeout=15).status == 200
        assert h.wait_for(lambda: not any(os.path.exists("/proc/%d" % p)
                                          and h._state(p) != "Z" for p in workers), 5)
        r = h.curl(s.url("/w/echo"), timeout=15)
        assert r.status == 200 and json.loads(r.body)["pid"] not in workers
    finally:
        shutil.rmtree(sockdir, ignore_errors=True)
