"""`server ... max_conns=N` and `queue N [timeout=T]`: a worker keeps at
most N connections (in use or idle) to a server, and requests that find
every server at its cap wait in order in the group's queue. The peer is a
FastCGI server with one "child", as a PHP-FPM child: it accepts one
connection and serves it until it closes, so a second connection waits
unserved in its listen queue; the test_fastcgi_records peer does exactly
that."""
import socket
import threading
import time

import conferr
import swsharness as h
from test_fastcgi_records import Peer, ok


def held(gate):
    """An answer that waits for gate (a script still running), then answers
    with the request's URI."""
    def answer(req):
        gate.wait(20)
        return ok(req["params"]["REQUEST_URI"])
    return answer


def site(sws, p, upstream, extra=""):
    return sws(server="""
        location / {
            fastcgi_pass fcgi;
            fastcgi_keep_conn on;
            include %s/conf/fastcgi.conf;
            %s
        }""" % (h.SRC, extra), http="upstream fcgi { server unix:%s %s }" % (p.path, upstream))


def in_thread(fn, *args):
    out = {}

    def run():
        out["r"] = fn(*args)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_one_child_never_stalls(sws, tmp_path):
    """Eight clients, forty requests, a server with one child: one connection
    only, every request answered. Without the cap the second connection
    waits in the child's listen queue behind the kept one, which the other
    clients keep reusing."""
    p = Peer(tmp_path / "p.sock", lambda r: ok(r["params"]["REQUEST_URI"]), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1; queue 64 timeout=20s;")
        results = []

        def client(n):
            for i in range(5):
                r = h.curl(s.url("/c%d/%d" % (n, i)), timeout=30)
                results.append((r.status, r.body, ("/c%d/%d" % (n, i)).encode()))
        ts = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert len(results) == 40
        assert all(st == 200 and body == want for st, body, want in results), results
        assert p.connections == 1 and len(p.requests) == 40
    finally:
        p.close()


def test_waiters_wait_in_scalwsd(sws, tmp_path):
    """While the child is busy, requests wait in scalwsd, not on a second
    connection that the child would never accept while the first is kept."""
    gate = threading.Event()
    p = Peer(tmp_path / "p.sock", held(gate), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1; queue 8;")
        first = in_thread(h.curl, s.url("/first"))
        assert h.wait_for(lambda: len(p.requests) == 1, 10)
        waiters = []
        for i in range(4):
            waiters.append(in_thread(h.curl, s.url("/w%d" % i)))
        gate.set()
        for t, out in [first] + waiters:
            t.join(30)
            assert out["r"].status == 200
        uris = [r["params"]["REQUEST_URI"] for r in p.requests]
        assert uris[0] == b"/first" and sorted(uris[1:]) == [b"/w0", b"/w1", b"/w2", b"/w3"]
        assert p.connections == 1
    finally:
        gate.set()
        p.close()


def test_no_queue_502(sws, tmp_path):
    """max_conns without a queue: a request finding the cap reached gets a
    502 at once (nginx's behaviour), logged."""
    gate = threading.Event()
    p = Peer(tmp_path / "p.sock", held(gate), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1;")
        first = in_thread(h.curl, s.url("/first"))
        assert h.wait_for(lambda: len(p.requests) == 1, 10)
        assert h.curl(s.url("/second")).status == 502
        assert h.wait_for(lambda: "every server at max_conns" in s.error_log(), 5)
        gate.set()
        first[0].join(30)
        assert first[1]["r"].status == 200
        assert h.curl(s.url("/third")).body == b"/third"
        assert p.connections == 1
    finally:
        gate.set()
        p.close()


def test_queue_full_502(sws, tmp_path):
    gate = threading.Event()
    p = Peer(tmp_path / "p.sock", held(gate), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1; queue 1;")
        first = in_thread(h.curl, s.url("/first"))
        assert h.wait_for(lambda: len(p.requests) == 1, 10)
        # two more at once: one waits (the queue's one place), the other
        # finds the queue full, whichever comes first
        more = [in_thread(h.curl, s.url("/a")), in_thread(h.curl, s.url("/b"))]
        assert h.wait_for(lambda: any("r" in out for _, out in more), 10)
        done = [out["r"] for _, out in more if "r" in out]
        assert len(done) == 1 and done[0].status == 502
        assert "the queue full" in s.error_log()
        gate.set()
        for t, out in [first] + more:
            t.join(30)
        assert sorted(out["r"].status for _, out in [first] + more) == [200, 200, 502]
        uris = [r["params"]["REQUEST_URI"] for r in p.requests]
        assert uris[0] == b"/first" and len(uris) == 2 and uris[1] in (b"/a", b"/b")
    finally:
        gate.set()
        p.close()


def test_queue_timeout_502(sws, tmp_path):
    gate = threading.Event()
    p = Peer(tmp_path / "p.sock", held(gate), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1; queue 4 timeout=1s;")
        first = in_thread(h.curl, s.url("/first"))
        assert h.wait_for(lambda: len(p.requests) == 1, 10)
        t0 = time.monotonic()
        r = h.curl(s.url("/second"))
        assert r.status == 502 and time.monotonic() - t0 >= 0.9
        assert "within its queue timeout" in s.error_log()
        gate.set()
        first[0].join(30)
        assert first[1]["r"].status == 200
        assert [r["params"]["REQUEST_URI"] for r in p.requests] == [b"/first"]
    finally:
        gate.set()
        p.close()


def test_waiter_leaves(sws, tmp_path):
    """A client that goes away while its request waits: never sent, and the
    room goes to the next waiter."""
    gate = threading.Event()
    p = Peer(tmp_path / "p.sock", held(gate), keep=True)
    try:
        s = site(sws, p, "max_conns=1; keepalive 1; queue 8;")
        first = in_thread(h.curl, s.url("/first"))
        assert h.wait_for(lambda: len(p.requests) == 1, 10)
        c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        c.sendall(b"GET /gone HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)              # it is waiting (nothing can tell from outside)
        c.close()
        last = in_thread(h.curl, s.url("/last"))
        time.sleep(0.3)
        gate.set()
        for t, out in (first, last):
            t.join(30)
            assert out["r"].status == 200
        assert [r["params"]["REQUEST_URI"] for r in p.requests] == [b"/first", b"/last"]
        assert h.curl(s.url("/after")).status == 200
    finally:
        gate.set()
        p.close()


def test_fastcgi_keep_conn_off_within_the_cap(sws, tmp_path):
    """Without keep-alive (the child closes after each request) the cap
    holds too: each request a connection, never two at once."""
    p = Peer(tmp_path / "p.sock", lambda r: ok(r["params"]["REQUEST_URI"]))
    try:
        s = sws(server="""
            location / { fastcgi_pass fcgi; include %s/conf/fastcgi.conf; }""" % h.SRC,
                http="upstream fcgi { server unix:%s max_conns=1; queue 64; }" % p.path)
        results = []

        def client(n):
            for i in range(4):
                results.append(h.curl(s.url("/k%d/%d" % (n, i)), timeout=30).status)
        ts = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert results == [200] * 24
        assert p.connections == 24
    finally:
        p.close()


class OneChildHttp:
    """An HTTP/1.1 origin with one "child": it accepts one connection and
    answers its requests (keep-alive) until the proxy closes it."""

    def __init__(self):
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.ls.settimeout(0.2)
        self.port = self.ls.getsockname()[1]
        self.connections = 0
        self.requests = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def serve(self, c):
        c.settimeout(5)
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            self.requests += 1
            path = head.split(b" ")[1]
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(path), path))

    def run(self):
        while not self.stop:
            try:
                c, _ = self.ls.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            try:
                self.serve(c)
            except OSError:
                pass
            finally:
                c.close()

    def close(self):
        self.stop = True
        self.t.join(5)
        self.ls.close()


def test_proxy_pass_one_child(sws):
    """The same for proxy_pass: the cap and the queue are the framework's."""
    o = OneChildHttp()
    try:
        s = sws(server="location / { proxy_pass http://one; }",
                http="upstream one { server 127.0.0.1:%d max_conns=1; keepalive 1; queue 32; }"
                     % o.port)
        results = []

        def client(n):
            for i in range(4):
                r = h.curl(s.url("/p%d/%d" % (n, i)), timeout=30)
                results.append((r.status, r.body, ("/p%d/%d" % (n, i)).encode()))
        ts = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(60)
        assert len(results) == 24
        assert all(st == 200 and body == want for st, body, want in results), results
        assert o.connections == 1 and o.requests == 24
    finally:
        o.close()


def test_configuration_errors(tmp_path):
    for i, (line, words) in enumerate([
            ("server 127.0.0.1:1 max_conns=x;", ['invalid parameter "max_conns=x"']),
            ("server 127.0.0.1:1 max_conns=-1;", ['invalid parameter "max_conns=-1"']),
            ("server 127.0.0.1:1; queue 0;", ["queue", "invalid value"]),
            ("server 127.0.0.1:1; queue 4 timeout=never;", ['invalid parameter "timeout=never"']),
            ("server 127.0.0.1:1; queue 4 wait=1s;", ['invalid parameter "wait=1s"']),
            ("server 127.0.0.1:1; queue 4; queue 5;", ["queue", "is duplicate"])]):
        conferr.check(tmp_path / ("c%d" % i), words,
                      http="    upstream u {\n        %s  # ERR\n    }\n" % line)
    conferr.check_ok(tmp_path / "ok", http="    upstream u {\n        server 127.0.0.1:1 "
                     "max_conns=8; queue 16 timeout=5s;\n    }\n")
