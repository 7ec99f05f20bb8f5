"""proxy_cache_path use_temp_path=on|off (modules/cache): a fill is written
in the cache's directory (off, the default here), or in the location's
proxy_temp_path (on, nginx's default) and moved into PATH when complete:
renamed on the same file system, copied then renamed across file systems
(/dev/shm is another one), so that an entry appears whole or not at all."""
import os
import shutil
import uuid

import pytest

import swsharness as h
from cacheorigin import corigin, entry_files, get, start, temp_files  # noqa: F401
from proxyorigin import pattern


def tmp_in(d):
    try:
        return [f for f in os.listdir(str(d)) if f.startswith(".tmp.")]
    except OSError:
        return []


def paused_fill(srv, o, path, size, where):
    """A fill caught in the middle (the origin pauses after half the body,
    until the temp file shows): where it is written, then the whole entry."""
    body = pattern(size)
    o.set(path, body=body, headers=[("Cache-Control", "max-age=600")], pause=3)
    bg = h.Background(lambda ev: h.curl(srv.url(path), timeout=20))
    bg.start()
    assert h.wait_for(lambda: tmp_in(where), timeout=10)
    seen = (tmp_in(where), temp_files(srv))
    r = bg.finish()
    assert r.status == 200 and r.body == body
    return seen, body


def test_use_temp_path_off_fills_in_the_cache_directory(sws, corigin):
    o = corigin()
    srv = start(sws, o, "use_temp_path=off", loc="proxy_temp_path @TMP@/ptemp;")
    (in_temp, in_cache), body = paused_fill(srv, o, "/c/off", 200000, srv.tmp / "cache")
    assert in_cache and not tmp_in(srv.tmp / "ptemp")
    r, st = get(srv, "/c/off")
    assert st == "HIT" and r.body == body


def test_use_temp_path_on_fills_in_proxy_temp_path(sws, corigin):
    o = corigin()
    srv = start(sws, o, "use_temp_path=on mem_size=1m", loc="proxy_temp_path @TMP@/ptemp;")
    (in_temp, in_cache), body = paused_fill(srv, o, "/c/on", 200000, srv.tmp / "ptemp")
    assert in_temp and in_cache == []          # nothing half-written under PATH
    assert h.wait_for(lambda: len(entry_files(srv)) == 1, timeout=5)
    assert tmp_in(srv.tmp / "ptemp") == [] and temp_files(srv) == []
    r, st = get(srv, "/c/on")
    assert st == "HIT" and r.body == body


def test_use_temp_path_on_another_file_system_is_copied_in(sws, corigin):
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat("/tmp").st_dev:
        pytest.skip("needs /dev/shm on another file system than the test's")
    shm = "/dev/shm/sws-test-%s" % uuid.uuid4().hex
    try:
        o = corigin()
        # max size of the memory copies below the body: hits come from the file
        srv = start(sws, o, "use_temp_path=on", loc="proxy_temp_path %s;" % shm)
        assert os.stat(shm).st_dev != os.stat(str(srv.tmp / "cache")).st_dev
        (in_temp, in_cache), body = paused_fill(srv, o, "/c/xdev", 300000, shm)
        assert in_temp and in_cache == []
        assert h.wait_for(lambda: len(entry_files(srv)) == 1, timeout=5)
        assert tmp_in(shm) == [] and temp_files(srv) == []
        r, st = get(srv, "/c/xdev")
        assert st == "HIT" and r.body == body
        assert o.count("/c/xdev") == 1
        # a cut fill leaves nothing anywhere
        o.set("/c/cut", body=pattern(100000), headers=[("Cache-Control", "max-age=600")],
              cut=True)
        try:
            h.curl(srv.url("/c/cut"))
        except Exception:
            pass
        assert h.wait_for(lambda: tmp_in(shm) == [], timeout=5)
        assert len(entry_files(srv)) == 1 and temp_files(srv) == []
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def test_use_temp_path_bad_value_names_file_and_line(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("proxy_cache_path %s/c keys_zone=z:1m use_temp_path=maybe;" % tmp_path,
         "invalid use_temp_path")])
