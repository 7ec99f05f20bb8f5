"""Hits sent from the entry's file (modules/cache/sws_cache_file.c): the file
goes through the worker's open file cache, so a hot entry costs no open,
stat, read or close, and its header is read and checked once per opening.
Which file is the entry's is the index's word (the inode it recorded): a
replaced entry never sends the old file's bytes, a purge frees the file at
once, a reload leaves no descriptor behind, open_files bounds what a worker
keeps open. The system calls of a hit are counted against nginx's.
"""
import os
import shutil
import signal
import time

import pytest

import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, entry_files, get, source  # noqa: F401
from cacheorigin import start as cstart
from test_cache_large_hits import (BIG, SlowClient, _count_calls, _keepalive_hits, _per_hit,
                                   _worker, _workers, cc, nginx_hit_calls, numbered)

KB = 1024


def start(sws, o, params="mem_size=0", workers=1):
    """A cache whose hits all come from files (mem_size=0 unless said)."""
    return sws(workers=workers, http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m %s;
        %s
        sendfile on;
    """ % (params, LOG_FORMAT), server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache c;
            proxy_cache_purge 127.0.0.1;
            access_log @TMP@/cache.log cachelog;
        }
        location /n/ {
            proxy_pass http://%s/c/;
            proxy_cache c;
            access_log off;
        }
    """ % (o.addr, o.addr))


def cache_fds(pid, srv):
    """The descriptors of pid open on files under TMP/cache (deleted ones
    too): [target]."""
    out = []
    d = "/proc/%d/fd" % pid
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for fd in names:
        try:
            t = os.readlink(os.path.join(d, fd))
        except OSError:
            continue
        if t.startswith(str(srv.tmp / "cache") + "/"):
            out.append(t)
    return out


@pytest.mark.parametrize("size", [13, 100 * KB])
def test_a_hot_file_hit_is_sent_from_the_kept_file(sws, corigin, size):
    o = corigin()
    body = numbered(size)
    o.set("/c/f", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    assert get(srv, "/c/f")[1] == "MISS"
    for _ in range(3):
        r, st = get(srv, "/c/f")
        assert st == "HIT" and source(srv) == "file" and r.body == body
    assert o.count("/c/f") == 1
    # one file, kept open by the worker (a small one's bytes are kept
    # instead: its descriptor is closed)
    fds = cache_fds(_worker(srv), srv)
    assert fds == (entry_files(srv) if size > 8 * KB else []), fds


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
@pytest.mark.parametrize("size", [13, 100 * KB])
def test_a_file_hit_makes_no_file_system_call(sws, corigin, size):
    o = corigin()
    body = numbered(size)
    o.set("/c/f", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    _keepalive_hits(srv.port, "/n/f", 2)              # the fill, then a hit
    n = 20
    ours, bodies = _count_calls(_worker(srv), srv.port, "/n/f", n, srv.tmp)
    assert bodies == [body] * n and o.count("/c/f") == 1
    assert not any(k in ours for k in ("open", "openat", "read", "pread64", "preadv", "lseek",
                                       "stat", "newfstatat", "fstat", "statx")), ours
    assert ours.get("close", 0) <= 2, ours            # the connections, not files
    if size > 8 * KB:
        assert ours.get("sendfile", 0) >= n, ours     # the body from the file
    else:
        assert "sendfile" not in ours, ours           # the kept bytes, with the head


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_100k_file_hit_makes_fewer_system_calls_than_nginx(sws, corigin, tmp_path):
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                      else None)
    if nginx is None:
        pytest.skip("nginx is not installed")
    o = corigin()
    body = numbered(100 * KB)
    o.set("/c/100k", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    _keepalive_hits(srv.port, "/n/100k", 2)
    n = 20
    ours, bodies = _count_calls(_worker(srv), srv.port, "/n/100k", n, srv.tmp)
    assert bodies == [body] * n
    theirs = nginx_hit_calls(nginx, o, "/c/100k", body, n, tmp_path)
    # nginx opens, stats, reads the header of and closes the file per hit
    assert "openat" in theirs or "open" in theirs, theirs
    assert _per_hit(ours, n) < _per_hit(theirs, n), (ours, theirs)


@pytest.mark.parametrize("size", [100, 100 * KB])
def test_a_replaced_entry_never_sends_the_old_files_bytes(sws, corigin, size):
    o = corigin()
    srv = start(sws, o)
    for i in range(4):
        # the same length each time: only which file it is tells them apart
        body = numbered(size, seed=i)
        o.set("/c/r", body=body, headers=cc("max-age=600"))
        # the request's no-cache: to the origin, whose answer replaces the entry
        r, st = get(srv, "/c/r", headers=["Cache-Control: no-cache"])
        assert r.body == body and st in ("MISS", "EXPIRED"), st
        for _ in range(2):
            r, st = get(srv, "/c/r")
            assert st == "HIT" and source(srv) == "file" and r.body == body, (i, st)
    assert len(entry_files(srv)) == 1
    # the old files' descriptors are gone, not only unused
    assert len(cache_fds(_worker(srv), srv)) <= 1


def test_a_replaced_entry_in_another_worker(sws, corigin):
    """Two workers, each with the file open: one replaces it, both send the
    new bytes at once."""
    o = corigin()
    srv = start(sws, o, workers=2)
    old, new = numbered(100 * KB, 1), numbered(100 * KB, 2)
    o.set("/c/w", body=old, headers=cc("max-age=600"))
    conns = [h.Conn(srv.port) for _ in range(8)]
    try:
        def hit(c):
            c.send(b"GET /c/w HTTP/1.1\r\nHost: x\r\n\r\n")
            return c.read_response()
        for c in conns:
            assert hit(c).body == old
        o.set("/c/w", body=new, headers=cc("max-age=600"))
        r, st = get(srv, "/c/w", headers=["Cache-Control: no-cache"])
        assert r.body == new
        for c in conns:
            assert hit(c).body == new
    finally:
        for c in conns:
            c.close()
    assert o.count("/c/w") == 2


def test_a_purge_frees_the_file_at_once(sws, corigin):
    o = corigin()
    body = numbered(100 * KB)
    o.set("/c/p", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    get(srv, "/c/p")
    assert get(srv, "/c/p")[1] == "HIT"
    w = _worker(srv)
    [f] = entry_files(srv)
    assert cache_fds(w, srv) == [f]
    assert h.curl(srv.url("/c/p"), method="PURGE").body == b"purged 1\n"
    assert entry_files(srv) == []
    # not held open as a deleted file: its space is back
    assert cache_fds(w, srv) == []
    r, st = get(srv, "/c/p")
    assert st == "MISS" and r.body == body


def test_a_file_changed_in_place_is_not_sent(sws, corigin):
    """Damage to a kept file (the same inode) is seen: inotify drops the
    descriptor and the file is checked again when it is next opened."""
    o = corigin()
    body = numbered(100 * KB)
    o.set("/c/d", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    get(srv, "/c/d")
    assert get(srv, "/c/d")[1] == "HIT"
    [f] = entry_files(srv)
    with open(f, "r+b") as w:
        w.seek(40)
        w.write(b"\xff" * 16)                         # into the header
    assert h.wait_for(lambda: cache_fds(_worker(srv), srv) == [], timeout=5)
    r, st = get(srv, "/c/d")
    assert st == "MISS" and r.body == body
    assert "not used" in srv.error_log()


def test_a_reload_leaves_no_descriptor_behind(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    paths = ["/c/e%d" % i for i in range(3)]
    for p in paths:
        o.set(p, body=numbered(64 * KB, 3), headers=cc("max-age=600"))
        get(srv, p)
        assert get(srv, p)[1] == "HIT"
    old = _worker(srv)
    assert len(cache_fds(old, srv)) == 3
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: old not in srv.children() and len(_workers(srv)) == 1, timeout=10)
    for p in paths:
        assert get(srv, p)[1] == "HIT"
    new = _worker(srv)
    assert new != old and len(cache_fds(new, srv)) == 3
    assert cache_fds(srv.pid, srv) == []              # nor does the master


def test_open_files_bounds_what_a_worker_keeps(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=0 open_files=2")
    for i in range(5):
        p = "/c/b%d" % i
        o.set(p, body=numbered(64 * KB, i), headers=cc("max-age=600"))
        get(srv, p)
        r, st = get(srv, p)
        assert st == "HIT" and r.body == numbered(64 * KB, i)
    assert len(cache_fds(_worker(srv), srv)) <= 2


def test_open_files_0_keeps_nothing_open(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=0 open_files=0")
    body = numbered(64 * KB)
    o.set("/c/z", body=body, headers=cc("max-age=600"))
    get(srv, "/c/z")
    for _ in range(2):
        r, st = get(srv, "/c/z")
        assert st == "HIT" and source(srv) == "file" and r.body == body
    assert cache_fds(_worker(srv), srv) == []


@pytest.mark.parametrize("value", ["x", "-1", "65537", "2k"])
def test_open_files_must_be_a_number(tmp_path, value):
    h.assert_config_errors(tmp_path, [(
        "proxy_cache_path @TMP@/cache keys_zone=c:1m open_files=%s;" % value,
        "invalid open_files")])


def test_a_stale_file_entry_is_revalidated_and_then_sent_from_the_new_file(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    a, b = numbered(100 * KB, 4), numbered(100 * KB, 5)
    o.set("/c/s", body=a, headers=cc("max-age=2") + [("ETag", '"a"')])
    get(srv, "/c/s")
    stored = time.monotonic()
    st = get(srv, "/c/s")[1]
    # (a loaded machine may take the second to come past the lifetime)
    assert st == "HIT" or time.monotonic() - stored > 1.5, st
    time.sleep(max(0.0, stored + 2.2 - time.monotonic()))
    o.set("/c/s", body=b, headers=cc("max-age=600") + [("ETag", '"b"')])
    r, st = get(srv, "/c/s")
    assert st == "EXPIRED" and r.body == b
    r, st = get(srv, "/c/s")
    assert st == "HIT" and source(srv) == "file" and r.body == b


def test_a_purge_while_a_slow_client_reads_a_file_hit(sws, corigin):
    """The kept descriptor outlives a purge for the request sending from it:
    the client gets the whole entry; then the file is closed."""
    o = corigin()
    body = numbered(BIG)
    o.set("/c/slow", body=body, headers=cc("max-age=600"))
    srv = start(sws, o)
    get(srv, "/c/slow")
    assert get(srv, "/c/slow")[1] == "HIT"
    c = SlowClient(srv, "/c/slow", "slow")
    c.read(64 * KB)
    assert h.curl(srv.url("/c/slow"), method="PURGE").body == b"purged 1\n"
    assert entry_files(srv) == []
    # still open for the request sending from it, not for the cache
    assert [t.endswith(" (deleted)") for t in cache_fds(_worker(srv), srv)] == [True]
    assert c.rest() == body
    assert h.wait_for(lambda: cache_fds(_worker(srv), srv) == [], timeout=5)


def test_http2_file_hits(sws, corigin):
    o = corigin()
    body = numbered(300 * KB)
    o.set("/c/h2", body=body, headers=cc("max-age=600"))
    srv = cstart(sws, o, "mem_size=0", server="http2 on;")
    get(srv, "/c/h2")
    for _ in range(2):
        r, st = get(srv, "/c/h2", prior_knowledge=True)
        assert st == "HIT" and source(srv) == "file" and r.http_version == 3
        assert r.body == body


def test_the_static_open_file_cache_does_not_push_entry_files_out(sws, corigin):
    """Entry files are a kind of their own in the worker's open file cache:
    open_file_cache max=1 churning through static files closes none."""
    o = corigin()
    srv = sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m mem_size=0;
        open_file_cache max=1;
        %s
    """ % LOG_FORMAT, server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache c;
            access_log @TMP@/cache.log cachelog;
        }
    """ % o.addr, files={"html/s%d.bin" % i: b"s" * (20 * KB) for i in range(4)})
    for i in range(3):
        o.set("/c/k%d" % i, body=numbered(64 * KB, i), headers=cc("max-age=600"))
        get(srv, "/c/k%d" % i)
        assert get(srv, "/c/k%d" % i)[1] == "HIT"
    for i in range(4):
        assert h.curl(srv.url("/s%d.bin" % i)).body == b"s" * (20 * KB)
    assert len(cache_fds(_worker(srv), srv)) == 3


@pytest.mark.parametrize("size", [100, 100 * KB])
def test_a_hit_pipelined_behind_the_replacing_request_sends_the_new_file(sws, corigin, size):
    """The request that replaces the entry and a hit after it in one write:
    the worker answers the hit before inotify can tell it of the rename, so
    only the index's record of the file says the kept one is the old."""
    o = corigin()
    srv = start(sws, o)
    old, new = numbered(size, 6), numbered(size, 7)
    o.set("/c/pl", body=old, headers=cc("max-age=600"))
    get(srv, "/c/pl")
    assert get(srv, "/c/pl")[0].body == old                 # kept open now
    o.set("/c/pl", body=new, headers=cc("max-age=600"))
    with h.Conn(srv.port) as c:
        c.send(b"GET /c/pl HTTP/1.1\r\nHost: x\r\nCache-Control: no-cache\r\n\r\n"
               b"GET /c/pl HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.read_response().body == new
        assert c.read_response().body == new
    assert o.count("/c/pl") == 2


def test_an_entry_the_manager_removes_is_closed_by_the_workers(sws, corigin):
    """The cache manager (another process) unlinks an entry unused for
    inactive: inotify tells the worker, which closes its kept file."""
    o = corigin()
    body = numbered(100 * KB)
    o.set("/c/ev", body=body, headers=cc("max-age=600"))
    srv = start(sws, o, "mem_size=0 inactive=2s")
    get(srv, "/c/ev")
    assert get(srv, "/c/ev")[1] == "HIT"
    assert len(cache_fds(_worker(srv), srv)) == 1
    assert h.wait_for(lambda: entry_files(srv) == [], timeout=10)
    assert h.wait_for(lambda: cache_fds(_worker(srv), srv) == [], timeout=5)
    r, st = get(srv, "/c/ev")
    assert st == "MISS" and r.body == body
