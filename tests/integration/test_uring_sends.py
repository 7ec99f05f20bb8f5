"""io_uring's sends (src/event/sws_uring.c): a response is copied and sent
by the ring with the loop's wait, and the writer goes on as if send() had
taken it. These tests drive what that promise needs: a socket too full to
take a response (the rest is sent when the client reads, in order), a
connection closed before its last response has left (its socket is kept
until it has), a graceful exit that waits for it, a client that resets
meanwhile (the error ends the send; the connection is freed), and the
lingering close's shutdown(SHUT_WR) after the response. Each runs on epoll
too: both methods must answer the same."""
import re
import socket
import struct
import time

import pytest

import swsharness as h
from test_events_uring import needs_uring

# Ten locations, each with a body of its own: a response out of order, cut
# or doubled shows in the bodies.
BODY_SIZE = 3000
N_LOC = 10


def _body(i):
    return (chr(ord("a") + i) * (BODY_SIZE - 1) + "\n").encode()


# A response the ring takes whole (it copies up to 16 KiB) but that the
# small socket buffers below do not.
BIG = b"z" * 15000

SERVER = "\n".join('location = /b%d { respond 200 "%s"; }' % (i, _body(i).decode()[:-1])
                   for i in range(N_LOC)) + (
    '\nlocation = /big { respond 200 "%s"; }' % BIG.decode()
    + "\nlocation = /status { stub_status; }")

METHODS = [pytest.param("use io_uring;", id="io_uring", marks=needs_uring),
           pytest.param("use epoll;", id="epoll")]


def _launch(tmp_path, events, **kw):
    # A small send buffer: the responses fill the socket at once.
    conf = h.MAIN_TEMPLATE.replace("listen 127.0.0.1:@PORT@;",
                                   "listen 127.0.0.1:@PORT@ sndbuf=4096;")
    return h.launch(tmp_path, conf=conf, events=events, server=SERVER, **kw)


def _pipeline(n, close_last=True):
    reqs = []
    for j in range(n):
        headers = [("Connection", "close")] if close_last and j == n - 1 else []
        reqs.append(h.request("GET", "/b%d" % (j % N_LOC), headers=headers))
    return b"".join(reqs)


def _read_all(cl, n):
    for j in range(n):
        r = cl.read_response()
        assert r is not None, "connection closed before response %d" % j
        assert r.status == 200, (j, r.status)
        # respond adds no newline: the body is the string itself
        assert r.body == _body(j % N_LOC)[:-1], "response %d: %r" % (j, r.body[:40])


def _no_alerts(srv):
    log = srv.error_log()
    assert "[alert]" not in log and "[crit]" not in log, log


def _active(port):
    r = h.exchange(port, h.request("GET", "/status"))
    m = re.search(rb"Active connections: (\d+)", r.body)
    return int(m.group(1))


@pytest.mark.parametrize("events", METHODS)
def test_full_socket_keeps_order_and_close_waits(tmp_path, events):
    srv = _launch(tmp_path, events)
    try:
        n = 120
        with h.Conn(srv.port, rcvbuf=4096) as cl:
            cl.send(_pipeline(n))
            # The client reads nothing for a while: the server's sends meet
            # a full socket, and it closes after the last response.
            time.sleep(0.5)
            _read_all(cl, n)
            assert cl.closed_within(3.0)
        assert h.wait_for(lambda: _active(srv.port) == 1, timeout=3), srv.diagnostics()
        _no_alerts(srv)
    finally:
        srv.stop()


@pytest.mark.parametrize("events", METHODS)
def test_graceful_exit_waits_for_the_last_response(tmp_path, events):
    srv = _launch(tmp_path, events)
    try:
        old = srv.wait_children(1)
        with h.Conn(srv.port, rcvbuf=4096) as cl:
            cl.send(h.request("GET", "/big", headers=[("Connection", "close")]))
            time.sleep(0.5)
            # The old worker exits gracefully while the response has not
            # left (on io_uring its connection is closed already, the rest
            # in the ring's send): what the client reads after is all of it.
            srv.signal(h._signal.SIGHUP)
            time.sleep(0.5)
            r = cl.read_response()
            assert r.status == 200 and r.body == BIG
            assert cl.closed_within(3.0)
        assert h.wait_for(lambda: not set(old) & set(srv.children()), timeout=5), \
            srv.diagnostics()
    finally:
        srv.stop()


@pytest.mark.parametrize("events", METHODS)
def test_client_reset_while_sending(tmp_path, events):
    srv = _launch(tmp_path, events)
    try:
        for close_last in (True, False):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.settimeout(h.NET_TIMEOUT)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(_pipeline(80, close_last=close_last))
            time.sleep(0.3)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()                   # a reset, the responses unread
        # Both connections end (their sends fail), and the server serves on.
        assert h.wait_for(lambda: _active(srv.port) == 1, timeout=5), srv.diagnostics()
        with h.Conn(srv.port) as cl:
            cl.send(h.request("GET", "/b3"))
            r = cl.read_response()
            assert r.status == 200 and r.body == _body(3)[:-1]
        _no_alerts(srv)
    finally:
        srv.stop()


@pytest.mark.parametrize("events", METHODS)
def test_lingering_close_after_the_response(tmp_path, events):
    # A request whose body is not read: the response, then shutdown(SHUT_WR)
    # (after the response has left), then the rest of the body is drained.
    srv = _launch(tmp_path, events)
    try:
        with h.Conn(srv.port) as cl:
            cl.send(h.request("POST", "/b1", headers=[("Content-Length", "100000"),
                                                       ("Connection", "close")],
                              body=b"x" * 1000))
            r = cl.read_response()
            assert r.status == 200 and r.body == _body(1)[:-1]
            assert cl.closed_within(3.0)
    finally:
        srv.stop()


@pytest.mark.parametrize("events", METHODS)
def test_file_into_a_full_socket_after_a_first_request(tmp_path, events):
    # After the first request has drained the socket, the connection's
    # reads are on the ring and its poll reports no room; a file response
    # (sendfile(), not the ring's copy) that fills the socket must have the
    # send that found no room ask for it, or the rest never leaves.
    data = bytes((i * 7) % 251 for i in range(1 << 20))
    srv = _launch(tmp_path, events, files={"html/f.bin": data})
    try:
        with h.Conn(srv.port, rcvbuf=4096) as cl:
            _file_after_small_ones(cl, 1, data)
        _no_alerts(srv)
    finally:
        srv.stop()


def _file_after_small_ones(cl, n, data):
    """n small responses on cl, then /f.bin (data), read only once the
    server's socket has filled."""
    for j in range(1, n + 1):
        cl.send(h.request("GET", "/b%d" % j))
        r = cl.read_response()
        assert r.status == 200 and r.body == _body(j)[:-1]
    cl.send(h.request("GET", "/f.bin"))
    time.sleep(0.3)
    r = cl.read_response()
    assert r is not None and r.status == 200 and r.body == data


@pytest.mark.parametrize("events", METHODS)
def test_file_to_a_unix_socket_client_after_a_first_request(tmp_path, events):
    # A unix socket reports room each time its peer reads; the event
    # methods stop asking for it on a connection no send waits on, so a
    # file that fills the socket after a first request must have the send
    # that found no room ask for it again.
    data = bytes(range(251)) * 16000            # 4 MB: more than the socket holds
    srv = h.launch(tmp_path, events=events, files={"html/f.bin": data},
                   unix_paths=["@TMP@/c.sock"], server="listen unix:@TMP@/c.sock;\n" + SERVER)
    try:
        with h.Conn(unix=str(tmp_path / "c.sock")) as cl:
            _file_after_small_ones(cl, 2, data)
        _no_alerts(srv)
    finally:
        srv.stop()
