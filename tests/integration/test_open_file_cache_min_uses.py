"""open_file_cache_min_uses N: a file enters the worker's open file cache at
its N-th use within the cache's `inactive` time, and is opened without the
cache before that (nginx's meaning). Seen from the worker's descriptors: a
cached file larger than the in-memory limit stays open in the cache."""
import os

import conferr
import swsharness as h

BIG = os.urandom(100 * 1024)


def open_paths(srv):
    pids = srv.children()
    out = []
    for pid in pids:
        d = "/proc/%d/fd" % pid
        for fd in os.listdir(d):
            try:
                out.append(os.readlink(os.path.join(d, fd)))
            except OSError:
                pass
    return out


def test_the_third_use_enters_the_cache(sws):
    srv = sws(http="open_file_cache max=100 inactive=60s; open_file_cache_min_uses 3;",
              files={"html/big.bin": BIG})
    path = str(srv.tmp / "html" / "big.bin")
    for i in range(2):
        r = h.curl(srv.url("/big.bin"))
        assert r.status == 200 and r.body == BIG
        # closed once the request is released (the client may have the
        # whole body a moment before): a cached file would stay open
        assert h.wait_for(lambda: path not in open_paths(srv), timeout=3), \
            "cached at use %d" % (i + 1)
    assert h.curl(srv.url("/big.bin")).body == BIG
    assert h.wait_for(lambda: path in open_paths(srv), timeout=3)


def test_default_caches_at_first_use(sws):
    srv = sws(http="open_file_cache max=100 inactive=60s;", files={"html/big.bin": BIG})
    assert h.curl(srv.url("/big.bin")).body == BIG
    assert h.wait_for(lambda: str(srv.tmp / "html" / "big.bin") in open_paths(srv), timeout=3)


def test_min_uses_zero_is_refused(tmp_path):
    conferr.check(tmp_path, ["open_file_cache_min_uses", "at least 1"],
                  server="location /x/ { open_file_cache_min_uses 0; }  # ERR")
