"""events { wait_pause off | TIME; }: a worker that has just handled events
and finds none ready pauses for TIME before it blocks, so what clients send
meanwhile is taken in one wait (sws_epoll.c). Off by default."""
import statistics
import time

import pytest

import h2raw
import swsharness as h
import tlsutil as t
from test_events_uring import needs_uring

PAUSE_MS = 10           # the longest pause: long enough to be seen in a round trip
THINK_MS = 2            # the client's time between a response and its next request
ROUND_TRIPS = 12


def _round_trip_median(port, n):
    """The median seconds from a request to its response over n keep-alive
    round trips, each request sent THINK_MS after the response before it
    came (by then the worker, even a slow sanitizer build, has found nothing
    ready and is pausing)."""
    took = []
    with h.Conn(port) as cl:
        cl.send(h.request("GET", "/respond"))       # a worker that was idle
        assert cl.read_response().status == 200
        for _ in range(n):
            time.sleep(THINK_MS / 1000.0)
            t0 = time.monotonic()
            cl.send(h.request("GET", "/respond"))
            r = cl.read_response()
            took.append(time.monotonic() - t0)
            assert r.status == 200 and r.body == b"Hello, world!"
    return statistics.median(took)


@pytest.mark.skipif(h.EVENTS_USE == "io_uring", reason="wait_pause is epoll's")
def test_the_next_request_waits_for_the_pause(sws):
    # Each request comes while the worker, which answered the one before
    # THINK_MS ago and found nothing ready, pauses: it is read when the
    # pause is over, PAUSE_MS - THINK_MS later. Without the directive a
    # round trip on loopback is a fraction of that.
    paused = sws(events="wait_pause %dms;" % PAUSE_MS)
    plain = sws()
    half = (PAUSE_MS - THINK_MS) / 2000.0
    slow = _round_trip_median(paused.port, ROUND_TRIPS)
    assert slow >= half, slow
    fast = _round_trip_median(plain.port, ROUND_TRIPS)
    assert fast < half, fast


def test_an_idle_worker_blocks_at_once(sws):
    # After a pause in which nothing came the worker waits as before: a
    # request that comes later is not delayed by a pause, and timers
    # (keepalive_timeout) still fire.
    srv = sws(events="wait_pause 10ms;", keepalive="1s")
    with h.Conn(srv.port) as cl:
        cl.send(h.request("GET", "/respond"))
        assert cl.read_response().status == 200
        time.sleep(0.1)
        cl.send(h.request("GET", "/respond"))
        assert cl.read_response().status == 200
        assert cl.closed_within(3.0)


def test_http2_streams_over_tls_with_a_pause(sws, pki):
    # Ten streams a round on one TLS connection, the way h2load -m10 asks:
    # every response complete, the rounds answered after the pauses.
    srv = t.launch(sws, pki, listen="http2", events="wait_pause 200us;",
                   files={"html/hello.txt": "Hello, world\n"})
    with h2raw.H2(srv.port, tls=True) as c:
        for _ in range(5):
            got = {c.get("/hello.txt"): ([], b"") for _ in range(10)}
            open_ = set(got)
            while open_:
                f = c.read_frame(5)
                assert f is not None, got
                if f.stream_id not in open_:
                    continue
                hdrs, body = got[f.stream_id]
                if isinstance(f, h2raw.HeadersFrame):
                    hdrs = hdrs + f.decoded
                elif isinstance(f, h2raw.DataFrame):
                    body += f.data
                got[f.stream_id] = (hdrs, body)
                if "END_STREAM" in f.flags:
                    open_.discard(f.stream_id)
            for hdrs, body in got.values():
                assert h2raw.status(hdrs) == 200 and body == b"Hello, world\n"


def test_wait_pause_errors(tmp_path):
    cases = [
        ("wait_pause 0us;", 'must be "off" or longer than 0'),
        ("wait_pause 11ms;", "is too long (at most 10ms)"),
        ("wait_pause 10001us;", "is too long (at most 10ms)"),
        ("wait_pause 99999999999999999999us;", "is too long (at most 10ms)"),
        ("wait_pause 1s;", 'must be "off" or a time in "us" or "ms"'),
        ("wait_pause 50;", 'must be "off" or a time in "us" or "ms"'),
        ("wait_pause us;", 'must be "off" or a time in "us" or "ms"'),
        ("wait_pause 5usx;", 'must be "off" or a time in "us" or "ms"'),
        ("wait_pause on;", 'must be "off" or a time in "us" or "ms"'),
        ("wait_pause 50us; wait_pause off;", "is duplicate"),
    ]
    for i, (events, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, events=events)
        assert rc not in (None, 0) and needle in out, (events, out)
        assert not listening, events


def test_wait_pause_values_accepted(tmp_path):
    for i, v in enumerate(("off", "1us", "200us", "10000us", "10ms")):
        d = tmp_path / ("v%d" % i)
        d.mkdir()
        srv = h.launch(d, events="wait_pause %s;" % v)
        try:
            assert h.curl(srv.url("/respond")).status == 200
        finally:
            srv.stop()


@needs_uring
def test_no_effect_with_io_uring_is_said(tmp_path):
    srv = h.launch(tmp_path, events="use io_uring; wait_pause 200us;")
    try:
        assert h.curl(srv.url("/respond")).status == 200
        out = srv.stderr() + srv.error_log()
        assert '"wait_pause" has no effect with "use io_uring"' in out, out
    finally:
        srv.stop()
