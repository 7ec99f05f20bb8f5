"""proxy_cache_background_update for HTTP/2 clients: the stream that finds
the entry stale gets it at once and ends; its request, and the update of
the entry from the (slow) origin, go on after the stream closed, after the
client's connection closed, and through a reload."""
import re
import signal
import time

import pytest
from hyperframe.frame import DataFrame, GoAwayFrame, HeadersFrame, RstStreamFrame

import h2raw
import swsharness as h
import tlsutil as t
from cacheorigin import corigin, get, start, statuses  # noqa: F401

LOC = ("proxy_cache_background_update on; proxy_cache_use_stale updating; "
       "add_header X-Cache-Status $upstream_cache_status;")
SLOW = 2.0          # how long the origin takes to answer the update


def cc(value):
    return [("Cache-Control", value)]


def stale(sws, corigin, paths=("/c/st",), loc=LOC, **kw):
    """A server whose entries for paths are stale, and the origin's next
    answer for them a new body that takes SLOW seconds."""
    o = corigin()
    for p in paths:
        o.set(p, body=b"stale body", headers=cc("max-age=1"))
    srv = start(sws, o, loc=loc, server="http2 on;", **kw)
    for p in paths:
        assert get(srv, p)[1] == "MISS"
    time.sleep(2.1)                     # max-age=1 in whole seconds
    for p in paths:
        o.set(p, body=b"new body", headers=cc("max-age=60"), delay=SLOW)
    return o, srv


def h2_get(conn, path, tag, timeout=10, scheme="http"):
    """One GET on conn: (status, {field: value}, body, seconds it took)."""
    t0 = time.monotonic()
    sid = conn.get(path, scheme=scheme, extra=[("x-tag", tag)])
    hdrs, body, _ = conn.response(sid, timeout=timeout)
    fields = {k.decode() if isinstance(k, bytes) else k: v.decode() if isinstance(v, bytes) else v
              for k, v in hdrs}
    return int(fields[":status"]), fields, body, time.monotonic() - t0


def responses(conn, sids, timeout):
    """The responses of streams sids, read together: {sid: (status, body)}."""
    hdrs, body, ended = {}, {}, set()
    deadline = time.monotonic() + timeout
    while ended != set(sids):
        f = conn.read_frame(max(deadline - time.monotonic(), 0.01))
        assert f is not None, "connection closed"
        if isinstance(f, HeadersFrame):
            hdrs.setdefault(f.stream_id, []).extend(f.decoded)
        elif isinstance(f, DataFrame):
            body[f.stream_id] = body.get(f.stream_id, b"") + f.data
        if f.stream_id and "END_STREAM" in f.flags:
            ended.add(f.stream_id)
    return {sid: (h2raw.status(hdrs.get(sid, [])), body.get(sid, b"")) for sid in sids}


def tagged(srv, tag):
    return [s for s in statuses(srv) if s[-1] == tag]


def updated(srv, o, path="/c/st", timeout=10):
    """The update landed: a request gets the new body as a HIT, and the
    origin saw the fill and one update only."""
    def hit():
        r, st = get(srv, path, prior_knowledge=True)
        return st == "HIT" and r.body == b"new body"
    ok = h.wait_for(hit, timeout=timeout, step=0.2)
    return ok and o.count(path) == 2


def no_crash(srv):
    log = srv.error_log()
    assert srv.alive(), log
    for bad in ("[alert]", "[emerg]", "signal", "core dumped", "AddressSanitizer"):
        assert bad not in log, log


def test_stale_hit_answered_at_once_and_updated_in_the_background(sws, corigin):
    o, srv = stale(sws, corigin)
    with h2raw.H2(srv.port) as conn:
        status, f, body, took = h2_get(conn, "/c/st", "h2a")
        assert status == 200 and body == b"stale body" and f["x-cache-status"] == "STALE"
        assert took < SLOW / 2, took              # not after the origin's answer
        assert int(f["age"]) >= 2
        assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
        # the stream was logged once, when its response was done
        assert [s[3] for s in tagged(srv, "h2a")] == ["STALE"]
        # the connection goes on meanwhile: another key, a plain miss
        status, _, body, _ = h2_get(conn, "/c/other", "h2b")
        assert status == 200 and body == b"/c/other"
    assert updated(srv, o)
    assert [s[3] for s in tagged(srv, "h2a")] == ["STALE"]   # the update was not logged
    no_crash(srv)


def test_the_response_is_the_one_http1_gets(sws, corigin):
    o, srv = stale(sws, corigin, paths=("/c/one", "/c/two"))
    with h2raw.H2(srv.port) as conn:
        status, f, body, _ = h2_get(conn, "/c/two", "cmp")
    r1, st1 = get(srv, "/c/one")    # (HTTP/1.1 logs it after the update)
    assert st1 == "STALE" and r1.status == status == 200
    assert body == r1.body == b"stale body"
    h1 = {k.lower(): v for k, v in r1.headers}
    for name in ("content-type", "content-length", "cache-control", "x-cache-status"):
        assert f.get(name) == h1.get(name), (name, f, h1)
    assert abs(int(f["age"]) - int(h1["age"])) <= 1
    assert set(f) - {":status"} == set(h1) - {"connection"}, (f, h1)
    assert updated(srv, o, "/c/one") and updated(srv, o, "/c/two")


def test_streams_of_one_connection_share_one_update(sws, corigin):
    o, srv = stale(sws, corigin)
    with h2raw.H2(srv.port) as conn:
        sids = [conn.get("/c/st", scheme="http", extra=[("x-tag", "many%d" % i)]) for i in range(6)]
        got = responses(conn, sids, timeout=SLOW / 2)
        assert all(got[sid] == (200, b"stale body") for sid in sids), got
        assert h.wait_for(lambda: len([s for s in statuses(srv) if s[-1].startswith("many")])
                          == 6, timeout=5)
        st = sorted(s[3] for s in statuses(srv) if s[-1].startswith("many"))
        assert st == ["STALE"] + ["UPDATING"] * 5, st
        assert updated(srv, o)
    no_crash(srv)


@pytest.mark.parametrize("how", ["close", "goaway", "rst"])
def test_client_leaves_while_the_update_runs(sws, corigin, how):
    o, srv = stale(sws, corigin)
    conn = h2raw.H2(srv.port)
    try:
        if how == "rst":
            # reset at once, the response maybe not read: the update goes on
            sid = conn.get("/c/st", scheme="http", extra=[("x-tag", "left")])
            conn.send_frame(RstStreamFrame(sid, error_code=h2raw.CANCEL))
        else:
            status, _, body, _ = h2_get(conn, "/c/st", "left")
            assert status == 200 and body == b"stale body"
        if how == "goaway":
            conn.send_frame(GoAwayFrame(0, last_stream_id=0, error_code=h2raw.NO_ERROR))
            assert conn.closed_within(3)           # the server ends it at once
    finally:
        conn.close()
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    # while it runs the entry is "updating" (the lock is the update's) ...
    r, st = get(srv, "/c/st", prior_knowledge=True)
    assert r.body == b"stale body" and st == "UPDATING"
    # ... and then it is in the cache
    assert updated(srv, o)
    assert [s[3] for s in tagged(srv, "left")] == ["STALE"]
    assert "background requests run" in srv.error_log()    # it outlived the connection
    no_crash(srv)


def test_a_failed_update_after_the_client_left_lets_go_of_the_lock(sws, corigin):
    o, srv = stale(sws, corigin, loc=LOC + " proxy_read_timeout 500ms;")
    with h2raw.H2(srv.port) as conn:
        status, _, body, _ = h2_get(conn, "/c/st", "fail")
        assert body == b"stale body"
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    # the update timed out: the stale entry stays, and the next request
    # may start an update of its own (not stuck behind a lock)
    time.sleep(1.0)
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"))
    r, st = get(srv, "/c/st", prior_knowledge=True)
    assert r.body == b"stale body" and st == "STALE"
    assert h.wait_for(lambda: o.count("/c/st") == 3, timeout=5)
    assert h.wait_for(lambda: get(srv, "/c/st", prior_knowledge=True)[1] == "HIT", timeout=5)
    assert "timed out" in srv.error_log()
    no_crash(srv)


@pytest.mark.parametrize("keep", [True, False])
def test_reload_while_an_update_of_an_http2_client_runs(sws, corigin, keep):
    o, srv = stale(sws, corigin)
    old = set(re.findall(r"started worker process (\d+)", srv.error_log()))
    assert len(old) == 1
    conn = h2raw.H2(srv.port)
    try:
        status, _, body, _ = h2_get(conn, "/c/st", "reload")
        assert body == b"stale body"
        if not keep:
            conn.close()
        assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
        t0 = time.monotonic()
        srv.signal(signal.SIGHUP)
        if keep:
            assert conn.goaway(timeout=5) is not None   # the old worker says goodbye
        # the old worker exits once the update is done, not later
        assert h.wait_for(lambda: not {str(p) for p in srv.children()} & old, timeout=SLOW + 8)
        assert time.monotonic() - t0 < SLOW + 8
    finally:
        conn.close()
    assert updated(srv, o)
    no_crash(srv)


def test_over_tls_the_update_outlives_the_connection(sws, corigin, pki):
    o = corigin()
    o.set("/c/st", body=b"stale body", headers=cc("max-age=1"))
    srv = start(lambda **kw: t.launch(sws, pki, listen="http2", **kw), o, loc=LOC)

    def tls_get(tag):
        with h2raw.H2(srv.port, tls=True) as conn:
            return h2_get(conn, "/c/st", tag, scheme="https")
    assert tls_get("fill")[1]["x-cache-status"] == "MISS"
    time.sleep(2.1)
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"), delay=SLOW)
    status, f, body, took = tls_get("tls")       # closed right after the response
    assert body == b"stale body" and f["x-cache-status"] == "STALE" and took < SLOW / 2
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)

    def hit():
        _, f, body, _ = tls_get("poll")
        return f["x-cache-status"] == "HIT" and body == b"new body"
    assert h.wait_for(hit, timeout=10, step=0.2)
    assert o.count("/c/st") == 2
    assert "background requests run" in srv.error_log()
    no_crash(srv)


def test_an_update_done_before_the_slow_client_read_the_stale_entry(sws, corigin):
    # the update ends while the stream still sends: it ends as any stream
    big = bytes(range(256)) * 200
    o = corigin()
    o.set("/c/big", body=big, headers=cc("max-age=1"))
    srv = start(sws, o, loc=LOC, server="http2 on;")
    assert get(srv, "/c/big")[1] == "MISS"
    time.sleep(2.1)
    o.set("/c/big", body=b"new body", headers=cc("max-age=60"))
    with h2raw.H2(srv.port, settings={h2raw.INITIAL_WINDOW_SIZE: 4096}) as conn:
        sid = conn.get("/c/big", scheme="http", extra=[("x-tag", "slowread")])
        assert h.wait_for(lambda: o.count("/c/big") == 2, timeout=5)
        time.sleep(0.5)                           # the update is in by now
        hdrs, body, _ = conn.response(sid, timeout=20)
        assert h2raw.status(hdrs) == 200 and body == big
    assert [s[3] for s in tagged(srv, "slowread")] == ["STALE"]
    r, st = get(srv, "/c/big", prior_knowledge=True)
    assert st == "HIT" and r.body == b"new body"
    no_crash(srv)


def test_worker_shutdown_timeout_bounds_a_slow_update(sws, corigin):
    # an update slower than worker_shutdown_timeout does not keep the old
    # worker; the entry stays stale, and is updated later
    o, srv = stale(sws, corigin, loc=LOC + " proxy_cache_lock_age 1s;",
                   main="worker_shutdown_timeout 1s;")
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"), delay=6)
    old = set(re.findall(r"started worker process (\d+)", srv.error_log()))
    with h2raw.H2(srv.port) as conn:
        assert h2_get(conn, "/c/st", "slowest")[2] == b"stale body"
    assert h.wait_for(lambda: o.count("/c/st") == 2, timeout=5)
    t0 = time.monotonic()
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: not {str(p) for p in srv.children()} & old, timeout=5)
    assert time.monotonic() - t0 < 4
    assert "worker_shutdown_timeout: closing" in srv.error_log()
    o.set("/c/st", body=b"new body", headers=cc("max-age=60"))
    # the dead worker's claim on the key lasts proxy_cache_lock_age at most
    assert h.wait_for(lambda: get(srv, "/c/st", prior_knowledge=True)[1] == "HIT", timeout=8,
                      step=0.3)
    no_crash(srv)
