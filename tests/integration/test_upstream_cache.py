"""The upstream framework's cache hooks (sws_http_upstream_cache_t) and
sws_http_send_stored, through tests/modules/tcache.c: a tiny in-memory
cache, built against the SDK, in front of a real origin
(proxyorigin.py) that counts what it gets."""
from pathlib import Path

import pytest

import swsharness as h
from proxyorigin import pattern

TCACHE_SRC = Path(h.SRC) / "tests" / "modules" / "tcache.c"


@pytest.fixture(scope="module")
def tcache(tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("tcache"), "tcache", TCACHE_SRC.read_text())
    return "load_module %s;" % so


def start(sws, tmp_path, o, tcache, mode="on", extra=""):
    d = tmp_path / "bodies"
    d.mkdir(exist_ok=True)
    h.make_traversable(d)
    d.chmod(0o777)                     # the worker writes the bodies there
    return sws(load=tcache, server="""
        location = /dump { tcache_dump; }
        location / { proxy_pass http://%s; tcache %s; tcache_dir %s; %s }
        location /nocache/ { proxy_pass http://%s; tcache off; }
    """ % (o.addr, mode, d, extra, o.addr))


def dump(srv, key):
    r = h.curl(srv.url("/dump?" + key))
    assert r.status == 200, r
    return r


def count(o, path):
    return sum(1 for q in list(o.requests) if q.target == path)


@pytest.mark.parametrize("mode", ["on", "file"])
def test_hit_never_reaches_the_origin(sws, origin, tmp_path, tcache, mode):
    o = origin()
    srv = start(sws, tmp_path, o, tcache, mode)
    first = h.curl(srv.url("/len/70000"))
    assert first.status == 200 and first.body == pattern(70000)
    assert first.header("X-TCache") is None
    for _ in range(3):
        r = h.curl(srv.url("/len/70000"))
        assert r.status == 200, r
        assert r.header("X-TCache") == "hit"
        assert r.body == pattern(70000)
        assert r.header("Content-Length") == "70000"
        assert r.header("X-Origin") == "origin"          # stored headers came back
    assert count(o, "/len/70000") == 1
    d = dump(srv, "/len/70000")
    assert d.header("X-Lookups") == "3" and d.header("X-Stores") == "1"   # lookups that found it


def test_tee_sees_the_exact_decoded_bytes(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    # chunked from the origin: the tee gets the body without the framing
    r = h.curl(srv.url("/chunked/25000?size=777"))
    assert r.status == 200 and r.body == pattern(25000)
    d = dump(srv, "/chunked/25000?size=777")
    assert d.body == pattern(25000)
    assert d.header("X-Complete") == "1" and d.header("X-Ends") == "1"
    assert d.header("X-Status") == "200"
    # a close-delimited body is complete at the close
    r = h.curl(srv.url("/close/3000"))
    assert r.body == pattern(3000)
    d = dump(srv, "/close/3000")
    assert d.body == pattern(3000) and d.header("X-Complete") == "1"
    # an empty body
    h.curl(srv.url("/len/0"))
    d = dump(srv, "/len/0")
    assert d.body == b"" and d.header("X-Complete") == "1"
    r = h.curl(srv.url("/len/0"))
    assert r.header("X-TCache") == "hit" and r.body == b""


@pytest.mark.parametrize("path", ["/cut/4000", "/cutchunked"])
def test_cut_body_is_reported_cut(sws, origin, tmp_path, tcache, path):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    with pytest.raises(Exception):
        h.curl(srv.url(path))                      # the client sees it cut too
    d = dump(srv, path)
    assert d.header("X-Complete") == "0" and d.header("X-Ends") == "1"
    if path == "/cut/4000":
        assert d.body == pattern(2000)             # what came before the cut
    # not served from the cache: the origin is asked again
    with pytest.raises(Exception):
        h.curl(srv.url(path))
    assert count(o, path) == 2


def test_store_gives_up_and_is_told_cut(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    r = h.curl(srv.url("/len/50000"), headers=["X-TCache-Stop: 10000"])
    assert r.status == 200 and r.body == pattern(50000)     # the client is not hurt
    d = dump(srv, "/len/50000")
    assert d.header("X-Complete") == "0" and d.header("X-Ends") == "1"
    assert len(d.body) <= 10000
    h.curl(srv.url("/len/50000"))
    assert count(o, "/len/50000") == 2


def test_only_200_is_stored_and_hooks_can_be_off(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    for _ in range(2):
        assert h.curl(srv.url("/status/404")).status == 404
    assert count(o, "/status/404") == 2
    for _ in range(2):
        assert h.curl(srv.url("/nocache/len/10")).header("X-TCache") is None
    assert count(o, "/nocache/len/10") == 2
    # POST is declined by the lookup: passes, nothing stored
    r = h.curl(srv.url("/echo"), method="POST", body=b"x=1")
    assert r.status == 200
    assert h.curl(srv.url("/dump?/echo")).status == 404


def test_revalidation_sends_the_conditional_and_gets_the_304(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    r = h.curl(srv.url("/cond/v7"))
    assert r.status == 200 and r.body == b"v7" and r.header("ETag") == '"v7"'
    r = h.curl(srv.url("/cond/v7"), headers=["X-TCache-Revalidate: yes"])
    q = o.last()
    assert q.header("If-None-Match") == '"v7"'
    assert q.header("If-Modified-Since") == "Sun, 06 Nov 1994 08:49:37 GMT"
    # the client got the stored 200, not the origin's 304
    assert r.status == 200, r
    assert r.body == b"v7" and r.header("X-TCache") == "revalidated"
    assert r.header("X-Revalidated") is None
    d = dump(srv, "/cond/v7")
    assert d.header("X-Revalidated") == "1" and d.header("X-Stores") == "1"
    assert count(o, "/cond/v7") == 2
    # the 304's connection went back to the pool: the next miss reuses it
    assert h.curl(srv.url("/len/10")).status == 200
    assert o.accepted == 1


def test_revalidation_replaces_the_client_conditionals(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    h.curl(srv.url("/cond/a"))
    r = h.curl(srv.url("/cond/a"), headers=["X-TCache-Revalidate: yes",
                                            'If-None-Match: "client"', "Range: bytes=0-0"])
    q = o.last()
    assert q.headers_all("If-None-Match") == ['"a"']
    assert q.header("Range") is None
    # the filters judged the client's own fields on the stored response
    assert r.status == 206 and r.body == b"a", r


def test_revalidation_with_a_changed_response_stores_it_again(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    h.curl(srv.url("/cond/b"))
    r = h.curl(srv.url("/cond/b"), headers=["X-TCache-Revalidate: stale"])
    assert o.last().header("If-None-Match") == '"stale"'
    assert o.last().header("If-Modified-Since") is None
    assert r.status == 200 and r.body == b"b" and r.header("X-TCache") is None
    d = dump(srv, "/cond/b")
    assert d.header("X-Stores") == "2" and d.header("X-Revalidated") == "0"
    assert d.header("X-Complete") == "1"


def test_revalidation_without_validators_is_an_error(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    h.curl(srv.url("/cond/c"))
    r = h.curl(srv.url("/cond/c"), headers=["X-TCache-Revalidate: none"])
    assert r.status == 500
    assert count(o, "/cond/c") == 1
    assert "revalidates without validators" in srv.error_log()


def test_miss_does_not_pass_client_conditionals(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    r = h.curl(srv.url("/cond/d"), headers=['If-None-Match: "d"', "Range: bytes=0-0",
                                            "If-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT"])
    q = o.last()
    assert q.header("If-None-Match") is None and q.header("Range") is None
    assert q.header("If-Modified-Since") is None
    # the origin sent the whole 200 (stored); the client's If-None-Match made it a 304
    assert r.status == 304, r
    r = h.curl(srv.url("/cond/d"))
    assert r.status == 200 and r.header("X-TCache") == "hit" and r.body == b"d"


@pytest.mark.parametrize("mode", ["on", "file"])
def test_stored_response_goes_through_the_filters(sws, origin, tmp_path, tcache, mode):
    o = origin()
    srv = start(sws, tmp_path, o, tcache, mode)
    h.curl(srv.url("/hdr/zz"))
    h.curl(srv.url("/len/5000"))
    # Range on a hit
    r = h.curl(srv.url("/len/5000"), headers=["Range: bytes=1000-1009"])
    assert r.status == 206, r
    assert r.body == pattern(5000)[1000:1010]
    assert r.header("Content-Range") == "bytes 1000-1009/5000"
    r = h.curl(srv.url("/len/5000"), headers=["Range: bytes=0-1,4998-"])
    assert r.status == 206 and b"multipart" in r.header("Content-Type", "").encode()
    r = h.curl(srv.url("/len/5000"), headers=["Range: bytes=9000-"])
    assert r.status == 416
    # HEAD: the head of the stored response, no body
    r = h.curl(srv.url("/len/5000"), method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "5000"
    assert r.header("X-TCache") == "hit"
    # a conditional request: the not-modified filter answers from the stored ETag
    r = h.curl(srv.url("/hdr/zz"), headers=['If-None-Match: "zz"'])
    assert r.status == 304 and r.body == b""
    r = h.curl(srv.url("/hdr/zz"))
    assert r.status == 200 and r.body == b"zz"
    assert r.header("Content-Type") == "text/x-zz" and r.header("X-Value") == "zz"
    assert r.header("ETag") == '"zz"'
    assert len(r.headers_all("Date")) == 1 and len(r.headers_all("Content-Length")) == 1
    assert count(o, "/len/5000") == 1 and count(o, "/hdr/zz") == 1


def test_head_miss_is_not_stored(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    r = h.curl(srv.url("/head"), method="HEAD")
    assert r.status == 200 and r.body == b""
    assert h.curl(srv.url("/dump?/head")).status == 404
    r = h.curl(srv.url("/head"))
    assert r.body == pattern(1234)
    r = h.curl(srv.url("/head"), method="HEAD")
    assert r.header("X-TCache") == "hit" and r.header("Content-Length") == "1234"
    assert count(o, "/head") == 2


def test_two_caches_at_one_level_are_refused(tmp_path, tcache):
    rc, out, listening = h.start_expect_failure(
        tmp_path, load=tcache,
        server="location / { proxy_pass http://127.0.0.1:9; tcache on; tcache on; }")
    assert rc not in (None, 0) and not listening
    assert 'a response cache ("tcache") is already set here' in out, out


def test_client_gone_mid_body_is_reported_cut(sws, origin, tmp_path, tcache):
    o = origin()
    srv = start(sws, tmp_path, o, tcache)
    with h.Conn(srv.port, rcvbuf=4096) as c:
        c.send(b"GET /big/30000000 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.read_line().startswith(b"HTTP/1.1 200")
    # the worker notices when writing, and the cache hears of the end once
    assert h.wait_for(lambda: dump(srv, "/big/30000000").header("X-Ends") == "1", 10)
    d = dump(srv, "/big/30000000")
    assert d.header("X-Complete") == "0"
    assert 0 < len(d.body) < 30000000
