"""Reloads that lose nothing: keep-alive loads across reloads (no request
failed or cut, every close announced), the wait of an idle kept connection
for one more request (worker_shutdown_idle), HTTP/2's two GOAWAYs, long
responses across a reload and worker_shutdown_timeout, and the old workers
leaving once their connections are done."""
import os
import signal
import socket
import time

import pytest

import h2raw
import kaload
import swsharness as h

SMALL = os.urandom(4096)
KEEP = "    keepalive_requests 1000000;\n"


def new_workers(s, old, timeout=5):
    """Wait for a worker that is not one of old (those may still be there)."""
    got = h.wait_for(lambda: set(s.children()) - set(old), timeout)
    assert got, "no new worker after the reload (old %r)\n%s" % (old, s.error_log())


# ---------------------------------------------------------------- under load

@pytest.mark.parametrize("reloads", [10])
def test_reloads_under_keepalive_load_lose_nothing(sws, reloads):
    s = sws(workers=2, files={"html/file.txt": SMALL}, keepalive="60s", http=KEEP,
            loglevel="notice")
    s.wait_children(2)
    watch = kaload.WorkerWatch(s.pid).start()
    loads = [kaload.Load(s.port, "/file.txt", 8, expect_body=SMALL, duration=60),
             kaload.Load(s.port, "/respond", 8, expect_body=b"Hello, world!", duration=60)]
    for ld in loads:
        ld.start()
    done = []
    try:
        assert h.wait_for(lambda: all(ld.stats["ok"] > 50 for ld in loads), 10), \
            [ld.stats for ld in loads]
        for _ in range(reloads):
            before = watch.children()
            t = time.monotonic()
            s.signal(signal.SIGHUP)
            done.append((t, before))
            time.sleep(0.3)
        # Under load, every old worker goes soon after its reload.
        assert h.wait_for(lambda: all(watch.gone_after(p, t) is not None for t, p in done),
                          10), "old workers still there:\n%s" % s.error_log(3000)
        after = [ld.stats["ok"] for ld in loads]
        assert h.wait_for(lambda: all(ld.stats["ok"] > a + 50
                                      for ld, a in zip(loads, after)), 10)
    finally:
        stats = [ld.stop() for ld in loads]
        watch.stop()
    for ld, st in zip(loads, stats):
        assert st["failed"] == 0 and st["cut"] == 0, (st, ld.errors)
        # Each end was said with "Connection: close" on the response before.
        assert st["closes"] == st["announced"], (st, ld.errors)
        # Every connection was moved by the reloads (on a slow machine
        # several reloads may pass while new workers start: then once for
        # them), none of them in a loop.
        assert ld.nconns <= st["closes"] <= 2 * ld.nconns * reloads, st
    assert s.alive()
    assert "[alert]" not in s.error_log() and "[crit]" not in s.error_log()


# ---------------------------------------------------------------- HTTP/1 idle

def test_idle_connection_is_answered_once_more_with_close(sws):
    s = sws(workers=1, main="worker_shutdown_idle 30s;", keepalive="60s")
    old = s.wait_children(1)
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond"))
        r = c.read_response()
        assert r.status == 200 and r.header("Connection") != "close", r
        s.signal(signal.SIGHUP)
        new_workers(s, old)
        assert h.wait_file_contains(s.error_log_path, "%d#0: gracefully shutting down"
                                    % old[0], 5), s.error_log()
        # The old worker waits for this connection's next request ...
        assert old[0] in s.children(), "the old worker did not wait for its kept connection"
        c.send(h.request("GET", "/respond"))
        r = c.read_response()
        # ... answers it, and says that it ends the connection.
        assert r is not None and r.status == 200 and r.body == b"Hello, world!", r
        assert r.header("Connection") == "close", r.headers
        assert c.closed_within(3.0)
    assert h.wait_for(lambda: old[0] not in s.children(), 5), \
        "the old worker stays after its last connection\n%s" % s.error_log()


def test_idle_connection_ends_after_shutdown_idle(sws):
    s = sws(workers=1, main="worker_shutdown_idle 300ms;", keepalive="60s")
    old = s.wait_children(1)
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond"))
        assert c.read_response().status == 200
        t = time.monotonic()
        s.signal(signal.SIGHUP)
        # An orderly end (EOF, not a reset), long before keepalive_timeout.
        c.sock.settimeout(10)
        try:
            data = c.sock.recv(100)
        except ConnectionResetError:
            pytest.fail("the idle connection was reset, not closed")
        assert data == b"", data
        assert time.monotonic() - t < 5
    assert h.wait_for(lambda: old[0] not in s.children(), 5), s.error_log()


def test_shutdown_idle_zero_closes_idle_connections_at_once(sws):
    s = sws(workers=1, main="worker_shutdown_idle 0;", keepalive="60s")
    s.wait_children(1)
    with h.Conn(s.port) as c:
        c.send(h.request("GET", "/respond"))
        assert c.read_response().status == 200
        s.signal(signal.SIGQUIT)
        assert c.closed_within(3.0)
    assert s.wait_exit(5) == 0


def test_request_in_flight_at_reload_is_answered_with_close(sws):
    """A request that is being read when the reload comes: answered (with
    Connection: close), not dropped."""
    s = sws(workers=1, keepalive="60s")
    old = s.wait_children(1)
    with h.Conn(s.port) as c:
        c.send(b"GET /respond HTTP/1.1\r\nHost: localhost\r\n")     # head not finished
        time.sleep(0.1)
        s.signal(signal.SIGHUP)
        new_workers(s, old)
        assert h.wait_file_contains(s.error_log_path, "%d#0: gracefully shutting down"
                                    % old[0], 5), s.error_log()
        c.send(b"\r\n")
        r = c.read_response()
        assert r is not None and r.status == 200 and r.header("Connection") == "close", r
        assert c.closed_within(3.0)


def test_pipelined_requests_at_shutdown_are_not_reset(sws):
    """Two pipelined requests on a connection when the worker shuts down:
    the first is answered with Connection: close and the connection then
    ends without a reset (the second, unread, must not destroy the first
    response in flight)."""
    s = sws(workers=1, files={"html/big.bin": os.urandom(1 << 20)}, keepalive="60s")
    worker = s.wait_children(1)[0]
    with h.Conn(s.port, rcvbuf=16384) as c:
        c.send(h.request("GET", "/respond"))
        assert c.read_response().status == 200
        s.signal(signal.SIGQUIT)
        # the worker's own line (the master says it too, maybe first)
        assert h.wait_file_contains(s.error_log_path,
                                    "%d#0: gracefully shutting down" % worker, 5)
        c.send(h.request("GET", "/big.bin") + h.request("GET", "/respond"))
        r = c.read_response()
        assert r is not None and r.status == 200 and len(r.body) == 1 << 20, r
        assert r.header("Connection") == "close"
    assert s.wait_exit(10) == 0


# ---------------------------------------------------------------- long-lived

def slow_download(port, path):
    c = h.Conn(port, rcvbuf=16384, timeout=10)
    c.send(h.request("GET", path))
    while b"\r\n\r\n" not in c.buf:
        assert c._fill(), "closed before the head"
    head, _, rest = c.buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    c.buf = b""
    return c, len(rest)


def test_long_download_survives_reloads(sws):
    size = 8 << 20
    s = sws(workers=1, files={"html/big.bin": os.urandom(size)})
    old = s.wait_children(1)
    c, n = slow_download(s.port, "/big.bin")
    try:
        for _ in range(3):
            s.signal(signal.SIGHUP)
            time.sleep(0.2)
        assert old[0] in s.children(), "the worker with a download in flight left"
        deadline = time.monotonic() + 60
        while n < size:
            assert time.monotonic() < deadline, "download stalled at %d" % n
            d = c.sock.recv(65536)
            assert d, "the download was cut at %d of %d bytes by the reloads" % (n, size)
            n += len(d)
    finally:
        c.close()
    assert h.wait_for(lambda: old[0] not in s.children(), 5), s.error_log()


def test_worker_shutdown_timeout_ends_long_download(sws):
    s = sws(workers=1, files={"html/big.bin": os.urandom(16 << 20)},
            main="worker_shutdown_timeout 500ms;")
    old = s.wait_children(1)
    c, _ = slow_download(s.port, "/big.bin")
    try:
        t = time.monotonic()
        s.signal(signal.SIGHUP)
        assert h.wait_for(lambda: old[0] not in s.children(), 5), \
            "worker_shutdown_timeout did not end the old worker\n%s" % s.error_log()
        assert time.monotonic() - t >= 0.4
    finally:
        c.close()
    assert h.wait_file_contains(s.error_log_path, "worker_shutdown_timeout: closing", 3)


# ---------------------------------------------------------------- HTTP/2

def h2_server(sws, **kw):
    return sws(workers=1, server="        http2 on;\n", keepalive="60s", **kw)


def goaways(frames):
    return [f for f in frames if isinstance(f, h2raw.GoAwayFrame)]


def test_h2_shutdown_notice_ping_then_final_goaway(sws):
    s = h2_server(sws)
    with h2raw.H2(s.port) as c:
        sid = c.get("/respond", scheme="http")
        _, body, _ = c.response(sid)
        assert body == b"Hello, world!"
        s.signal(signal.SIGQUIT)
        got = []
        while not (goaways(got) and any(isinstance(f, h2raw.PingFrame) for f in got)):
            more = c.frames(timeout=5, until=lambda f: isinstance(f, (h2raw.PingFrame,
                                                                       h2raw.GoAwayFrame)))
            assert more and more[-1] is not None, "no notice and PING: %r" % got
            got += more
        g = goaways(got)
        pings = [f for f in got if isinstance(f, h2raw.PingFrame)]
        assert g and g[0].last_stream_id == 2**31 - 1 and g[0].error_code == 0, got
        assert pings and "ACK" not in pings[0].flags, got
        # A stream opened before the client answers is still served ...
        sid2 = c.get("/respond", scheme="http")
        c.send_frame(h2raw.PingFrame(0, opaque_data=pings[0].opaque_data, flags=["ACK"]))
        _, body2, frames = c.response(sid2)
        assert body2 == b"Hello, world!"
        # ... and named by the final GOAWAY; then the connection ends.
        final = goaways(frames) or [c.goaway(timeout=3)]
        assert final[-1] is not None and final[-1].last_stream_id == sid2, frames
        assert c.closed_within(5)
    assert s.wait_exit(5) == 0


def test_h2_final_goaway_without_ping_answer(sws):
    s = h2_server(sws, main="worker_shutdown_idle 300ms;")
    with h2raw.H2(s.port) as c:
        sid = c.get("/respond", scheme="http")
        c.response(sid)
        s.signal(signal.SIGQUIT)
        got = c.frames(timeout=5, until=lambda f: isinstance(f, h2raw.GoAwayFrame)
                       and f.last_stream_id != 2**31 - 1)
        g = goaways(got)
        assert len(g) == 2 and g[1].last_stream_id == sid, got
        assert c.closed_within(5)
    assert s.wait_exit(5) == 0


def test_h2_busy_connection_gets_goaway_and_finishes(sws):
    size = 4 << 20
    s = h2_server(sws, files={"html/big.bin": os.urandom(size)})
    with h2raw.H2(s.port, settings={h2raw.INITIAL_WINDOW_SIZE: 65535}) as c:
        sid = c.get("/big.bin", scheme="http")
        c.frames(timeout=3, until=lambda f: isinstance(f, h2raw.DataFrame))
        s.signal(signal.SIGQUIT)
        _, body, frames = c.response(sid, timeout=30)
        assert goaways(frames), "no GOAWAY on a busy connection"
        assert c.closed_within(5)
    assert s.wait_exit(10) == 0


# ---------------------------------------------------------------- configuration

def test_worker_shutdown_idle_bad_value(tmp_path):
    rc, out, listening = h.start_expect_failure(tmp_path, main="worker_shutdown_idle soon;")
    assert rc not in (None, 0) and not listening, out
    assert "worker_shutdown_idle" in out and "scalws.conf:" in out, out
