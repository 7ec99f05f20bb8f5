"""open_file_cache: cached descriptors, stat results and small-file contents
must never serve stale data after the file changes (inotify), must honour
open_file_cache_valid, errors caching, eviction, and bad configurations."""
import os
import time

import pytest

import swsharness as h

SMALL = b"small cached file\n"
BIG = os.urandom(100 * 1024)
RANGE = b"0123456789ABCDEFGHIJ"

CACHE = "open_file_cache max=100 inactive=30s;"


def fresh(s, path, want, timeout=1.0):
    """The new content must be served (almost) at once: inotify, not the
    60 s valid time."""
    got = h.wait_for(lambda: (lambda r: r if r.body == want else None)(
        h.curl(s.url(path))), timeout)
    return got


def test_small_file_cached_and_changed_in_place(sws):
    s = sws(http=CACHE, files={"html/a.txt": SMALL})
    for _ in range(3):
        r = h.curl(s.url("/a.txt"))
        assert r.status == 200 and r.body == SMALL, r
    etag1 = r.header("ETag")
    p = s.tmp / "html" / "a.txt"
    with open(p, "r+b") as f:          # same inode, new bytes and size
        f.write(b"changed in place, longer now\n")
    r2 = fresh(s, "/a.txt", b"changed in place, longer now\n")
    assert r2, "in-place change not seen within 1 s"
    assert r2.header("Content-Length") == str(len(b"changed in place, longer now\n"))
    assert r2.header("ETag") != etag1


def test_replaced_by_rename_and_deleted(sws):
    s = sws(http=CACHE, files={"html/b.txt": SMALL, "html/new.tmp": b"renamed over\n"})
    assert h.curl(s.url("/b.txt")).body == SMALL
    os.rename(s.tmp / "html" / "new.tmp", s.tmp / "html" / "b.txt")
    assert fresh(s, "/b.txt", b"renamed over\n"), "rename over the file not seen"
    (s.tmp / "html" / "b.txt").unlink()
    assert h.wait_for(lambda: h.curl(s.url("/b.txt")).status == 404, 1.0), \
        "deleted file still served"


def test_large_file_descriptor_cached(sws):
    s = sws(http=CACHE, files={"html/big.bin": BIG})
    for _ in range(3):
        r = h.curl(s.url("/big.bin"))
        assert r.status == 200 and r.body == BIG
    new = os.urandom(50 * 1024)
    tmp = s.tmp / "html" / "big.new"
    tmp.write_bytes(new)
    os.rename(tmp, s.tmp / "html" / "big.bin")
    assert fresh(s, "/big.bin", new), "replaced large file not seen"


def test_range_head_and_conditional_on_cached_file(sws):
    s = sws(http=CACHE, files={"html/r.txt": RANGE})
    h.curl(s.url("/r.txt"))
    r = h.curl(s.url("/r.txt"), headers=["Range: bytes=2-5"])
    assert r.status == 206 and r.body == b"2345", r
    r = h.curl(s.url("/r.txt"), method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "20"
    etag = r.header("ETag")
    r = h.curl(s.url("/r.txt"), headers=["If-None-Match: %s" % etag])
    assert r.status == 304 and r.body == b""


def test_directory_and_missing_with_cache(sws):
    s = sws(http=CACHE, files={"html/d/index.html": b"dir index\n"})
    r = h.curl(s.url("/d"))
    assert r.status == 301 and r.header("Location").endswith("/d/"), r
    assert h.curl(s.url("/d/")).body == b"dir index\n"
    assert h.curl(s.url("/nope.txt")).status == 404
    (s.tmp / "html" / "nope.txt").write_bytes(b"now here\n")
    # errors are not cached by default: the new file is served at once
    assert h.curl(s.url("/nope.txt")).body == b"now here\n"


def test_errors_cached_until_valid(sws):
    s = sws(http=CACHE + " open_file_cache_errors on; open_file_cache_valid 1s;")
    assert h.curl(s.url("/late.txt")).status == 404
    (s.tmp / "html" / "late.txt").write_bytes(b"late\n")
    got = h.wait_for(lambda: h.curl(s.url("/late.txt")).status == 200, 4.0)
    assert got, "a cached error outlived open_file_cache_valid"


def test_eviction_with_small_max(sws):
    files = {"html/f%d.txt" % i: (b"file %d\n" % i) for i in range(12)}
    s = sws(http="open_file_cache max=3 inactive=30s;", files=files)
    for _ in range(2):
        for i in range(12):
            r = h.curl(s.url("/f%d.txt" % i))
            assert r.status == 200 and r.body == b"file %d\n" % i, (i, r)


def test_cache_off_in_a_location(sws):
    s = sws(http=CACHE, files={"html/nc/x.txt": SMALL},
            server="        location /nc/ { open_file_cache off; }\n")
    assert h.curl(s.url("/nc/x.txt")).body == SMALL
    (s.tmp / "html" / "nc" / "x.txt").write_bytes(b"other\n")
    assert h.curl(s.url("/nc/x.txt")).body == b"other\n"


def test_graceful_quit_with_cache(sws):
    """The cache's inotify descriptor must not keep a quitting worker alive."""
    import signal
    s = sws(http=CACHE, files={"html/q.txt": SMALL})
    assert h.curl(s.url("/q.txt")).body == SMALL
    s.signal(signal.SIGQUIT)
    t0 = time.monotonic()
    assert h.wait_for(lambda: s.proc.poll() is not None, 5.0), "worker did not exit"
    assert time.monotonic() - t0 < 4.0


@pytest.mark.parametrize("value", ["max=0", "max=abc", "inactive=10s", "max=10 foo=1",
                                   "max=10 inactive=xyz"])
def test_bad_open_file_cache_values(tmp_path, value):
    conf = tmp_path / "scalws.conf"
    (tmp_path / "html").mkdir()
    text = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()],
                    http="    open_file_cache %s;  # ERR" % value)
    conf.write_text(text)
    line = [i for i, ln in enumerate(text.splitlines(), 1) if "# ERR" in ln][0]
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    assert r.returncode != 0
    assert ("%s:%d" % (conf, line)).encode() in r.stderr, r.stderr


# try_files and index look through the cache too: what they see is what the
# static handler will open. A cached miss (open_file_cache_errors on) stays a
# miss until open_file_cache_valid has passed, for them as for a static file.
VALID = 3.0
LOOKUPS = """
        location /tf/ { try_files $uri /fallback.txt; }
        location /tfd/ { try_files $uri/ =404; }
"""


def late_file_sequence(s, url, before, after, path, content):
    """before: the answer while path is missing; it must stay so right after
    path is created (a cached miss), then become after within the valid
    time (and a bit)."""
    assert before(h.curl(s.url(url)))
    t0 = time.monotonic()
    p = s.tmp / "html" / path
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(content)
    r = h.curl(s.url(url))
    if time.monotonic() - t0 < VALID - 0.5:      # not too slow to tell
        assert before(r), "a cached miss was not used: %r" % r
    got = h.wait_for(lambda: after(h.curl(s.url(url))), VALID + 3.0)
    assert got, "a cached miss outlived open_file_cache_valid"
    return time.monotonic() - t0


def is_fallback(r):
    return r.status == 200 and r.body == b"fallback\n"


def test_try_files_cached_miss_until_valid(sws):
    s = sws(http=CACHE + " open_file_cache_errors on; open_file_cache_valid %ds;" % VALID,
            server=LOOKUPS, files={"html/fallback.txt": b"fallback\n"})
    took = late_file_sequence(s, "/tf/late.txt", is_fallback,
                              lambda r: r.status == 200 and r.body == b"late\n",
                              "tf/late.txt", b"late\n")
    assert took >= VALID - 1.0, "seen after %.1fs, before open_file_cache_valid" % took


def test_try_files_directory_cached_miss_until_valid(sws):
    s = sws(http=CACHE + " open_file_cache_errors on; open_file_cache_valid %ds;" % VALID,
            server=LOOKUPS)
    # "$uri/" found: the request goes on to the static handler, which
    # redirects to the directory with its slash
    took = late_file_sequence(s, "/tfd/sub", lambda r: r.status == 404,
                              lambda r: r.status == 301
                              and r.header("Location").endswith("/tfd/sub/"),
                              "tfd/sub/index.html", b"in sub\n")
    assert took >= VALID - 1.0


def test_index_cached_miss_until_valid(sws):
    s = sws(http=CACHE + " open_file_cache_errors on; open_file_cache_valid %ds;" % VALID,
            files={"html/d/other.txt": b"x\n"})
    took = late_file_sequence(s, "/d/", lambda r: r.status == 403,
                              lambda r: r.status == 200 and r.body == b"index\n",
                              "d/index.html", b"index\n")
    assert took >= VALID - 1.0
    assert "directory index of" in s.error_log()


def test_try_files_and_index_hits_through_the_cache(sws):
    # a hit is an entry of the cache: a change to the file is seen at once
    # (inotify), and the file the check found is the one served
    s = sws(http=CACHE + " open_file_cache_errors on; open_file_cache_valid 60s;",
            server=LOOKUPS, files={"html/fallback.txt": b"fallback\n",
                                   "html/tf/here.txt": b"here\n",
                                   "html/d/index.html": b"index\n"})
    for _ in range(3):
        assert h.curl(s.url("/tf/here.txt")).body == b"here\n"
        assert h.curl(s.url("/d/")).body == b"index\n"
    (s.tmp / "html" / "tf" / "here.txt").unlink()
    (s.tmp / "html" / "d" / "index.html").unlink()
    assert h.wait_for(lambda: is_fallback(h.curl(s.url("/tf/here.txt"))), 1.0), \
        "a deleted file still found by try_files"
    assert h.wait_for(lambda: h.curl(s.url("/d/")).status == 403, 1.0), \
        "a deleted index file still found"


@pytest.mark.parametrize("http", ["", CACHE], ids=["cache-off", "cache-errors-off"])
def test_try_files_and_index_new_file_seen_at_once(sws, http):
    # without the cache, or with misses not cached: as before, a new file is
    # found by the next request
    s = sws(http=http, server=LOOKUPS, files={"html/fallback.txt": b"fallback\n",
                                              "html/d/other.txt": b"x\n"})
    assert is_fallback(h.curl(s.url("/tf/new.txt")))
    assert h.curl(s.url("/d/")).status == 403
    assert h.curl(s.url("/tfd/sub")).status == 404
    (s.tmp / "html" / "tf").mkdir()
    (s.tmp / "html" / "tf" / "new.txt").write_bytes(b"new\n")
    (s.tmp / "html" / "d" / "index.html").write_bytes(b"index\n")
    (s.tmp / "html" / "tfd" / "sub").mkdir(parents=True)
    (s.tmp / "html" / "tfd" / "sub" / "index.html").write_bytes(b"in sub\n")
    assert h.curl(s.url("/tf/new.txt")).body == b"new\n"
    assert h.curl(s.url("/d/")).body == b"index\n"
    assert h.curl(s.url("/tfd/sub")).status == 301
