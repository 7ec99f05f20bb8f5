"""The cache module's storage (modules/cache): entries in files under the
cache's path, written to a temporary file and renamed when whole; small ones
also in shared memory; the index kept across reloads and rebuilt by the
loader after a restart; what a cut fill, a killed worker or a damaged file
leaves. A real origin (cacheorigin.py) in front of which scalwsd caches."""
import os
import shutil
import signal
import subprocess
import time

import pytest

import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, entry_files, get, source, start, statuses, temp_files  # noqa: F401,E501
from proxyorigin import pattern


def test_miss_then_hit_from_memory(sws, corigin):
    o = corigin()
    o.set("/c/a", body=b"Hello, world!", headers=[("Cache-Control", "max-age=3600"),
                                                   ("Content-Type", "text/x-a")])
    srv = start(sws, o, "mem_size=1m")
    r, st = get(srv, "/c/a")
    assert r.status == 200 and r.body == b"Hello, world!" and st == "MISS"
    assert r.header("Age") is None                 # not from the cache
    for _ in range(3):
        r, st = get(srv, "/c/a")
        assert r.status == 200 and r.body == b"Hello, world!", r
        assert st == "HIT" and source(srv) == "memory"
        assert r.header("Content-Type") == "text/x-a"
        assert r.header("Cache-Control") == "max-age=3600"
        assert r.header("X-Origin") == "origin"
        assert r.header("Age") is not None and int(r.header("Age")) >= 0
        assert r.header("Content-Length") == "13"
    assert o.count("/c/a") == 1
    # one entry file, named by the key's digest in levels 1:2, no temporary file
    files = entry_files(srv)
    assert len(files) == 1
    rel = os.path.relpath(files[0], str(srv.tmp / "cache")).split("/")
    assert len(rel) == 3 and len(rel[2]) == 32
    assert rel[0] == rel[2][-1] and rel[1] == rel[2][-3:-1]
    assert temp_files(srv) == []


def test_without_memory_hits_come_from_the_file(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=0")                               # no memory copies
    get(srv, "/c/f")
    r, st = get(srv, "/c/f")
    assert st == "HIT" and source(srv) == "file" and r.body == b"/c/f"
    assert o.count("/c/f") == 1


def test_a_body_over_mem_max_object_is_served_from_its_file(sws, corigin):
    o = corigin()
    big = pattern(200000)
    o.set("/c/big", body=big, headers=[("Cache-Control", "max-age=60")])
    o.set("/c/small", body=b"s" * 1000, headers=[("Cache-Control", "max-age=60")])
    srv = start(sws, o, "mem_size=1m mem_max_object=64k")
    get(srv, "/c/big")
    r, st = get(srv, "/c/big")
    assert st == "HIT" and source(srv) == "file" and r.body == big
    get(srv, "/c/small")
    r, st = get(srv, "/c/small")
    assert st == "HIT" and source(srv) == "memory"
    # Range and conditional requests are answered from the entry
    r, st = get(srv, "/c/big", headers=["Range: bytes=100-199"])
    assert r.status == 206 and r.body == big[100:200] and st == "HIT"
    assert o.count("/c/big") == 1


def test_the_query_is_part_of_the_default_key(sws, corigin):
    o = corigin()
    srv = start(sws, o)
    assert get(srv, "/c/q?a=1")[1] == "MISS"
    assert get(srv, "/c/q?a=2")[1] == "MISS"
    assert get(srv, "/c/q?a=1")[1] == "HIT"
    assert o.count("/c/q") == 2


@pytest.mark.parametrize("how", ["cut", "status"])
def test_a_cut_body_is_never_stored(sws, corigin, how):
    o = corigin()
    if how == "cut":
        o.set("/c/cut", body=pattern(50000), headers=[("Cache-Control", "max-age=60")],
              cut=True)
    srv = start(sws, o)
    if how == "cut":
        with pytest.raises(Exception):
            h.curl(srv.url("/c/cut"))
        with pytest.raises(Exception):
            h.curl(srv.url("/c/cut"))
        assert o.count("/c/cut") == 2                  # not served from the cache
    else:
        # a body longer than it is announced: curl sees the length, we refuse
        o.set("/c/cut", body=b"x" * 10, headers=[("Cache-Control", "max-age=60")])
        get(srv, "/c/cut")
        assert get(srv, "/c/cut")[1] == "HIT"
    h.wait_for(lambda: temp_files(srv) == [], timeout=5)
    if how == "cut":
        assert entry_files(srv) == []


def test_kill_9_during_a_fill_leaves_no_entry(sws, corigin):
    o = corigin()
    body = pattern(100000)
    o.set("/c/slow", body=body, headers=[("Cache-Control", "max-age=60")], pause=30)
    srv = start(sws, o)
    bg = h.Background(lambda ev: h.curl(srv.url("/c/slow")))
    bg.start()
    assert h.wait_for(lambda: len(temp_files(srv)) == 1, timeout=5)
    workers = [p for p in srv.children()
               if b"helper" not in open("/proc/%d/cmdline" % p, "rb").read()]
    assert workers
    for p in workers:
        os.kill(p, signal.SIGKILL)
    with pytest.raises(Exception):
        bg.finish()
    assert entry_files(srv) == []                      # nothing a hit could serve
    o.set("/c/slow", body=body, headers=[("Cache-Control", "max-age=60")])
    assert h.wait_for(lambda: h.port_open(srv.port), timeout=5)

    def fetched():
        try:
            return h.curl(srv.url("/c/slow")).body == body
        except Exception:
            return False
    assert h.wait_for(fetched, timeout=10)
    r, st = get(srv, "/c/slow")
    assert r.body == body and st == "HIT"


def test_a_damaged_file_is_not_served(sws, corigin):
    o = corigin()
    o.set("/c/d", body=b"0123456789" * 100, headers=[("Cache-Control", "max-age=60")])
    srv = start(sws, o, "mem_size=0")
    get(srv, "/c/d")
    [f] = entry_files(srv)
    with open(f, "r+b") as fh:
        fh.truncate(os.path.getsize(f) - 10)       # the body cut short
    r, st = get(srv, "/c/d")
    assert r.status == 200 and r.body == b"0123456789" * 100
    assert st == "MISS"
    assert "has a body of the wrong length: not used" in srv.error_log()
    assert o.count("/c/d") == 2
    assert get(srv, "/c/d")[1] == "HIT"                # stored again, whole


def test_reload_keeps_the_entries(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=1m")
    get(srv, "/c/r")
    srv.control("reload")
    assert h.wait_for(lambda: "reconfiguring" in srv.error_log() or True, timeout=1)

    def hit():
        try:
            return get(srv, "/c/r")[1] == "HIT"
        except Exception:
            return False
    assert h.wait_for(hit, timeout=10)
    assert o.count("/c/r") == 1


def test_restart_loads_the_disk_cache(sws, corigin, tmp_path):
    o = corigin()
    o.set("/c/v", body=b"vary-a", headers=[("Cache-Control", "max-age=600"),
                                           ("Vary", "Accept-Language")])
    srv = start(sws, o, "mem_size=1m")
    get(srv, "/c/p1")
    get(srv, "/c/p2")
    get(srv, "/c/v", headers=["Accept-Language: fr"])
    # a foreign file and a leftover temporary file of a dead process
    (srv.tmp / "cache" / "README").write_text("not an entry")
    (srv.tmp / "cache" / ".tmp.999999999.1").write_text("half a fill")
    # a corrupt one under an entry's name, and a valid entry under another's
    good = next(f for f in entry_files(srv) if len(os.path.basename(f)) == 32)
    bad = srv.tmp / "cache" / "0" / "00"
    bad.mkdir(parents=True, exist_ok=True)
    (bad / ("f" * 31 + "0")).write_bytes(b"SWSCACH1" + b"\0" * 300)
    (bad / ("e" * 31 + "0")).write_bytes(open(good, "rb").read())
    srv.stop()
    srv.start()
    assert h.wait_for(lambda: "loaded 3 entries" in srv.error_log(), timeout=10), \
        srv.error_log()
    assert '"%s/cache/README" skipped: not a cache entry\'s name' % srv.tmp in srv.error_log()
    assert not (srv.tmp / "cache" / ".tmp.999999999.1").exists()
    assert "skipped: of another version" in srv.error_log()
    assert "skipped: its key does not give its name" in srv.error_log()
    for path in ("/c/p1", "/c/p2"):
        r, st = get(srv, path)
        assert st == "HIT" and r.body == path.encode() and source(srv) == "file"
    assert get(srv, "/c/v", headers=["Accept-Language: fr"])[1] == "HIT"
    assert get(srv, "/c/v", headers=["Accept-Language: de"])[1] == "MISS"
    assert o.count("/c/p1") == 1 and o.count("/c/v") == 2


def test_eviction_at_max_size(sws, corigin):
    o = corigin()
    for i in range(12):
        o.set("/c/e%d" % i, body=b"e" * 10000, headers=[("Cache-Control", "max-age=600")])
    srv = start(sws, o, "max_size=50k")
    for i in range(12):
        get(srv, "/c/e%d" % i)
    # the manager brings the files down to max_size, the least recent first
    def total():
        n = 0
        for f in entry_files(srv):
            try:
                n += os.path.getsize(f)
            except OSError:
                pass                   # removed by the manager meanwhile
        return n
    assert h.wait_for(lambda: total() <= 50 * 1024, timeout=10)
    assert h.wait_for(lambda: "manager removed" in srv.error_log(), timeout=5)
    assert get(srv, "/c/e11")[1] == "HIT"
    assert get(srv, "/c/e0")[1] == "MISS"


def test_eviction_in_memory_keeps_mem_size(sws, corigin):
    o = corigin()
    for i in range(10):
        o.set("/c/m%d" % i, body=b"m" * 30000, headers=[("Cache-Control", "max-age=600")])
    srv = start(sws, o, "mem_size=128k mem_max_object=32k")
    for i in range(10):
        get(srv, "/c/m%d" % i)
    time.sleep(0.5)                                   # the manager makes room
    for i in range(6, 10):
        get(srv, "/c/m%d" % i)
    # at most mem_size of them are in memory; all are still on disk. The
    # latest copies first: each file hit promotes its entry, and on a slow
    # build the manager can run between two requests and evict the oldest
    srcs = []
    for i in reversed(range(10)):
        r, st = get(srv, "/c/m%d" % i)
        assert st == "HIT" and r.body == b"m" * 30000
        srcs.append(source(srv))
    assert srcs.count("memory") <= 4 and srcs.count("memory") >= 1, srcs
    assert "file" in srcs
    assert sum(1 for i in range(10) if o.count("/c/m%d" % i) == 1) == 10


def test_inactive_entries_are_removed(sws, corigin):
    o = corigin()
    srv = start(sws, o, "inactive=1s")
    get(srv, "/c/i")
    assert len(entry_files(srv)) == 1
    assert h.wait_for(lambda: entry_files(srv) == [], timeout=10)
    assert get(srv, "/c/i")[1] == "MISS"


def test_configuration_errors_name_file_and_line(tmp_path):
    cases = [
        ("proxy_cache_path %s/c levels=1;" % tmp_path, "needs keys_zone=NAME:SIZE"),
        ("proxy_cache_path %s/c keys_zone=a:1k;" % tmp_path, "invalid keys_zone size"),
        ("proxy_cache_path %s/c keys_zone=a:1m levels=3;" % tmp_path, "invalid levels"),
        ("proxy_cache_path %s/c keys_zone=a:1m bogus=1;" % tmp_path, "unknown parameter"),
        ("proxy_cache_path %s/c keys_zone=a:1m inactive=x;" % tmp_path, "invalid inactive"),
        ("proxy_cache_path %s/c keys_zone=a:1m;\nproxy_cache_path %s/d keys_zone=a:1m;"
         % (tmp_path, tmp_path), "already defined"),
        ("proxy_cache nope;", "no proxy_cache_path defines"),
        ("proxy_cache_valid 99 1m;", "invalid status"),
        ("proxy_cache_methods PUT;", "invalid method"),
        ("proxy_ignore_headers X-Foo;", "unknown header"),
        ("proxy_cache_use_stale sometimes;", "unknown condition"),
        ("proxy_cache_use_stale off error;", "cannot combine"),
        ("proxy_cache_key $nosuchvar;", "unknown variable"),
    ]
    h.assert_config_errors(tmp_path, cases)


def test_a_full_keys_zone_is_made_room_in_by_the_manager(sws, corigin):
    o = corigin()
    srv = sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=small:64k;
        %s
    """ % LOG_FORMAT, server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache small;
            access_log @TMP@/cache.log cachelog;
        }
    """ % o.addr)
    pad = "k" * 200
    for i in range(300):
        r = h.curl(srv.url("/c/%s%d" % (pad, i)))
        assert r.status == 200
    # the zone holds far fewer than 300: the manager removed the oldest, so
    # there is room again: a new key is stored and then hit (the last ones
    # of the loop may have found the zone full before the manager ran)
    assert h.wait_for(lambda: "manager removed" in srv.error_log(), timeout=10)
    assert h.wait_for(lambda: get(srv, "/c/%snew" % pad)[1] == "HIT", timeout=10)
    assert len(entry_files(srv)) < 300


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_memory_hit_makes_no_file_system_call(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=1m")
    get(srv, "/c/nofs")
    assert get(srv, "/c/nofs")[1] == "HIT" and source(srv) == "memory"
    [worker] = [p for p in srv.children()
                if b"helper" not in open("/proc/%d/cmdline" % p, "rb").read()]
    out = srv.tmp / "strace.txt"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(out), "-e",
                               "trace=open,openat,stat,newfstatat,statx,pread64,read,"
                               "lseek,sendfile,epoll_pwait,io_uring_enter", "-p", str(worker)],
                              stderr=subprocess.DEVNULL)
    try:
        # strace is attached once it reports the worker's waits
        def attached():
            h.curl(srv.url("/respond"))
            return out.exists() and ("epoll_pwait" in out.read_text()
                                     or "io_uring_enter" in out.read_text())
        assert h.wait_for(attached, timeout=10)
        for _ in range(3):
            r, st = get(srv, "/c/nofs")
            assert st == "HIT" and source(srv) == "memory" and r.body == b"/c/nofs"
    finally:
        tracer.terminate()
        tracer.wait(10)
    calls = out.read_text()
    assert "cache" not in calls and "pread64" not in calls and "sendfile" not in calls, calls
    # a file hit does make them (the check is not blind)
    srv2 = start(sws, o, "mem_size=0")
    get(srv2, "/c/nofs")
    assert get(srv2, "/c/nofs")[1] == "HIT" and source(srv2) == "file"


def test_an_entry_whose_file_went_is_a_miss(sws, corigin):
    o = corigin()
    srv = start(sws, o, "mem_size=0")
    get(srv, "/c/gone")
    [f] = entry_files(srv)
    os.unlink(f)
    assert get(srv, "/c/gone")[1] == "MISS"
    assert get(srv, "/c/gone")[1] == "HIT"
    assert o.count("/c/gone") == 2
