"""io_uring's reads on an upstream connection (src/event/sws_uring.c): a
plain upstream connection's next response (over TCP or a unix socket)
comes with the ring's wait,
into a buffer of the method, as a client's requests do. These tests drive
what that must keep as it was with recv(): an idle kept connection whose
server sends something unasked is closed (those bytes are in the method's
buffer, not in the socket a peek looks at), one the server closes is not
reused, and a response that comes in pieces, larger than a buffer of the
ring, arrives whole and in order. Each runs on epoll too."""
import os
import shutil
import socket
import tempfile
import threading
import time

import pytest

import swsharness as h
from test_uring_sends import METHODS

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"


class RawOrigin:
    """An origin that plays a script per accepted connection: script(conn,
    index) reads the request and answers as the test needs. Records what
    each connection saw."""

    def __init__(self, script, family="tcp"):
        self.dir = None
        if family == "unix":
            # (a short path: sun_path holds 108 bytes)
            self.dir = tempfile.mkdtemp(prefix="sws-ur-")
            path = os.path.join(self.dir, "o.sock")
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.bind(path)
            # the worker may run as another user
            os.chmod(self.dir, 0o755)
            os.chmod(path, 0o777)
            self.addr = "unix:" + path
        else:
            self.sock = socket.socket()
            # small buffers (the accepted sockets inherit them): a large
            # request body fills the server's socket
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            self.sock.bind(("127.0.0.1", 0))
            self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.sock.listen(8)
        self.script = script
        self.accepted = 0
        self.notes = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        self.sock.settimeout(10)
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._one, args=(conn, self.accepted),
                             daemon=True).start()

    def _one(self, conn, index):
        conn.settimeout(5)
        with conn:
            try:
                self.script(self, conn, index)
            except OSError as e:
                self.notes.append((index, "error %s" % e))

    def close(self):
        self.done.set()
        self.sock.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data


def wait_end(conn, origin, index):
    """What comes next on conn: its end (noted "eof": a FIN, or a reset
    where the server closed with bytes it had not read) or bytes."""
    try:
        data = conn.recv(4096)
    except socket.timeout:
        data = b"timeout"
    except ConnectionResetError:
        data = b""
    origin.notes.append((index, "eof" if not data else data))


@pytest.fixture
def raw_origin():
    made = []

    def make(script, family="tcp"):
        o = RawOrigin(script, family)
        made.append(o)
        return o
    yield make
    for o in made:
        o.close()


@pytest.fixture
def proxy_to(tmp_path):
    """proxy_to(events, origin): a server proxying to origin with "events"
    in its events block; stopped at the end of the test."""
    running = []

    def launch(events, origin):
        srv = h.launch(tmp_path, events=events,
                       http="upstream o { server %s; keepalive 4; }" % origin.addr,
                       server="client_max_body_size 8m; location / { proxy_pass http://o; }")
        running.append(srv)
        return srv
    yield launch
    for srv in running:
        srv.stop()


# the upstream's address: the reads are on the ring over either
FAMILIES = ["tcp", "unix"]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("events", METHODS)
def test_idle_upstream_connection_that_sends_unasked_is_closed(proxy_to, events, family, raw_origin):
    def script(o, conn, index):
        assert read_request(conn)
        body = b"first" if index == 1 else b"second"
        conn.sendall(RESPONSE % (len(body), body))
        if index == 1:
            time.sleep(0.2)            # idle in the server's keep-alive cache now
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
            wait_end(conn, o, index)
        else:
            wait_end(conn, o, index)

    o = raw_origin(script, family)
    srv = proxy_to(events, o)
    r = h.curl(srv.url("/a"))
    assert r.status == 200 and r.body == b"first"
    # the server closes the connection that spoke unasked ...
    assert h.wait_for(lambda: (1, "eof") in o.notes, 5), o.notes
    # ... and the next request goes on a new one, with its own answer
    r = h.curl(srv.url("/b"))
    assert r.status == 200 and r.body == b"second", r
    assert o.accepted == 2
    assert "[alert]" not in srv.error_log()


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("events", METHODS)
def test_upstream_closed_while_idle_is_not_reused(proxy_to, events, family, raw_origin):
    def script(o, conn, index):
        assert read_request(conn)
        body = b"one%d" % index
        conn.sendall(RESPONSE % (len(body), body))
        if index == 1:
            conn.shutdown(socket.SHUT_WR)     # the server's end while idle
            o.notes.append((1, "closed"))
        wait_end(conn, o, index)

    o = raw_origin(script, family)
    srv = proxy_to(events, o)
    assert h.curl(srv.url("/a")).body == b"one1"
    assert h.wait_for(lambda: (1, "eof") in o.notes, 5), o.notes
    r = h.curl(srv.url("/b"))
    assert r.status == 200 and r.body == b"one2", r
    assert o.accepted == 2


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("events", METHODS)
def test_upstream_response_in_pieces_on_a_kept_connection(proxy_to, events, family, raw_origin):
    # Bodies larger than a buffer of the ring (4 KiB), sent in pieces with
    # pauses, three responses on one upstream connection: every byte once,
    # in order.
    size = 50000

    def body(n):
        return bytes((n * 7 + i) % 251 for i in range(size))

    def script(o, conn, index):
        for n in range(3):
            if not read_request(conn):
                return
            data = RESPONSE % (size, body(n))
            for i in range(0, len(data), 9000):
                conn.sendall(data[i:i + 9000])
                time.sleep(0.01)
        wait_end(conn, o, index)

    o = raw_origin(script, family)
    srv = proxy_to(events, o)
    with h.Conn(srv.port) as c:
        for n in range(3):
            c.send(h.request("GET", "/p%d" % n))
            r = c.read_response()
            assert r.status == 200 and r.body == body(n), n
    assert o.accepted == 1


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("events", METHODS)
def test_kept_connection_after_a_response_of_a_whole_ring_buffer(proxy_to, events, family, raw_origin):
    # Responses of exactly 4096 bytes (a buffer of the ring): the read that
    # takes the last of one leaves the connection "ready" with no recv
    # queued, and the keep-alive cache's check must queue one, or the next
    # response on that connection wakes nothing.
    def response(n):
        head = b"HTTP/1.1 200 OK\r\nContent-Length: %05d\r\n\r\n"
        size = 4096 - len(head % 0)
        return head % size + (b"%d" % n) * size

    def script(o, conn, index):
        for n in range(4):
            if not read_request(conn):
                return
            conn.sendall(response(n))
        wait_end(conn, o, index)

    o = raw_origin(script, family)
    srv = proxy_to(events, o)
    for n in range(4):
        r = h.curl(srv.url("/w%d" % n))
        assert r.status == 200 and r.body == response(n).split(b"\r\n\r\n", 1)[1], n
    assert o.accepted == 1


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("events", METHODS)
def test_request_body_into_a_full_socket_on_a_kept_connection(proxy_to, events, family,
                                                              raw_origin):
    # Once a kept connection's reads are on the ring its poll reports no
    # room (a unix socket would report it each time the server reads); a
    # request body the server is slow to take fills the socket, and the
    # send that finds no room must ask for it, or the rest never goes.
    size = 6 << 20                         # more than TCP's send buffer grows to
    body = bytes(range(251)) * (size // 251) + bytes(size % 251)

    def script(o, conn, index):
        assert read_request(conn)
        conn.sendall(RESPONSE % (2, b"ok"))
        head = read_request(conn)
        if not head:
            return
        got = head.split(b"\r\n\r\n", 1)[1]
        time.sleep(0.3)                    # the server's socket fills meanwhile
        while len(got) < size:
            chunk = conn.recv(65536)
            if not chunk:
                break
            got += chunk
            time.sleep(0.001)
        o.notes.append((index, got == body))
        conn.sendall(RESPONSE % (4, b"done"))
        wait_end(conn, o, index)

    o = raw_origin(script, family)
    srv = proxy_to(events, o)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/first"))
        r = c.read_response()
        assert r.status == 200 and r.body == b"ok"
        c.send(h.request("POST", "/body", headers=[("Content-Length", str(size))], body=body))
        r = c.read_response()
        assert r.status == 200 and r.body == b"done", r
    assert (1, True) in o.notes, o.notes
    assert o.accepted == 1
