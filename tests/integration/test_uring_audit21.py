"""Issue 21's io_uring text (audit21): with `use io_uring;` a binary upgrade
(USR2, WINCH, QUIT) and reloads under a keep-alive load fail no request,
an HTTP/2 download in flight across them finishes, and the HTTP/2 abuse
limits hold on the ring as on epoll. (The refused ring's fallback is
test_events_uring.py's test_refused_io_uring_falls_back_to_epoll.)"""
import os
import signal

import pytest

import h2raw
import swsharness as h
from test_events_uring import _built_with_liburing, _fd_kinds
from test_upgrade import SMALL, check, loads_for, upgrade_under_load, wait_progress

pytestmark = pytest.mark.skipif(not _built_with_liburing(), reason="scalwsd built without liburing")

BIG = os.urandom(1 << 20)
FILES = {"html/file.txt": SMALL, "html/big.bin": BIG}
H2C = "        listen 127.0.0.1:@PORT2@ http2;\n"


def start(sws):
    s = sws(workers=2, ports=2, files=FILES, keepalive="60s", events="use io_uring;",
            http="    keepalive_requests 1000000;\n", server=H2C, loglevel="notice")
    s.port2 = s.ports[1]
    workers = s.wait_children(2)
    if not on_the_ring(workers):
        pytest.skip("the kernel refused io_uring here:\n" + s.error_log())
    return s, workers


def on_the_ring(pids):
    """Every worker of pids has its ring (none fell back to epoll)."""
    ring = "anon_inode:[io_uring]"
    return h.wait_for(lambda: all(ring in _fd_kinds(p) for p in pids), timeout=5)


def h2_download(s):
    """An h2c download held by a stream window of 0: (connection, stream)."""
    c = h2raw.H2(s.port2, settings={h2raw.INITIAL_WINDOW_SIZE: 0})
    sid = c.headers(c.request_headers("/big.bin", scheme="http"))
    c.frames(timeout=3, until=lambda f: f is None or (
        isinstance(f, h2raw.HeadersFrame) and f.stream_id == sid))
    return c, sid


def h2_finish(c, sid):
    """Open the windows; the download must end whole (the PING of the
    drain is answered on the way)."""
    c.send_frame(h2raw.WindowUpdateFrame(0, window_increment=1 << 24))
    c.send_frame(h2raw.SettingsFrame(0, settings={h2raw.INITIAL_WINDOW_SIZE: 1 << 24}))
    body = b""
    while True:
        f = c.read_frame(20)
        assert f is not None, "closed before the end of the download (%d octets)" % len(body)
        if isinstance(f, h2raw.PingFrame) and "ACK" not in f.flags:
            c.send_quiet(h2raw.PingFrame(0, flags=["ACK"], opaque_data=f.opaque_data))
        if isinstance(f, h2raw.RstStreamFrame) and f.stream_id == sid:
            raise AssertionError("download reset: %r" % f)
        if isinstance(f, h2raw.DataFrame) and f.stream_id == sid:
            body += f.data
            if "END_STREAM" in f.flags:
                break
    assert body == BIG
    c.close()


def test_binary_upgrade_on_io_uring_under_load(sws):
    s, old_workers = start(sws)

    def hold():
        c, sid = h2_download(s)
        return lambda: h2_finish(c, sid)

    def on_new(new):
        assert on_the_ring(h.children_of(new)), s.error_log()

    upgrade_under_load(s, old_workers, hold=hold, on_new=on_new)
    assert "using epoll instead" not in s.error_log()


def test_reloads_on_io_uring_under_load(sws):
    s, workers = start(sws)
    loads = loads_for(s)
    for ld in loads:
        ld.start()
    try:
        wait_progress(loads)
        for _ in range(3):
            c, sid = h2_download(s)
            s.signal(signal.SIGHUP)
            h2_finish(c, sid)
            assert h.wait_for(lambda: not set(workers) & set(s.children()), 10), s.error_log()
            workers = s.wait_children(2)
            assert on_the_ring(workers), s.error_log()
            wait_progress(loads)
    finally:
        stats = [ld.stop() for ld in loads]
    check(loads, stats)
    assert "[alert]" not in s.error_log() and "[emerg]" not in s.error_log(), s.error_log()


@pytest.mark.parametrize("kind", ["rapid reset", "PING", "empty DATA"])
def test_h2c_floods_on_io_uring(sws, kind):
    from test_http2_audit21 import FLOODS, send_all
    s, _ = start(sws)
    with h2raw.H2(s.port2) as c:
        c.scheme = "http"
        c.frames(timeout=3, until=lambda f: f is None or (
            isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
        send_all(c, FLOODS[kind](c))
        g = c.goaway(timeout=5)
        assert g is not None and g.error_code == h2raw.ENHANCE_YOUR_CALM, g
        assert c.closed_within(5)
    with h2raw.H2(s.port2) as c:
        hdrs, body, _ = c.response(c.get("/file.txt", scheme="http"))
    assert h2raw.status(hdrs) == 200 and body == SMALL
