"""The hit path (modules/cache): a fresh hit is answered by the cache's hit
hook before proxy makes its upstream request (sws_http_upstream_cache_hit),
except where the key depends on what proxy computes first (a proxy_pass
with variables); the stored fields go back through the core's matching of
the fields it keeps apart, in any case, and never on a look-alike name."""
import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, get, start, statuses  # noqa: F401


def test_a_target_with_variables_keeps_its_proxy_host_in_the_key(sws, corigin):
    a = corigin("a")
    b = corigin("b")
    a.set("/c/same", body=b"from a", headers=[("Cache-Control", "max-age=600")])
    b.set("/c/same", body=b"from b", headers=[("Cache-Control", "max-age=600")])
    srv = sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m;
        %s
    """ % LOG_FORMAT, server="""
        location /c/ {
            proxy_pass http://$http_x_target;
            proxy_cache c;
            access_log @TMP@/cache.log cachelog;
        }
    """)
    for o, body in ((a, b"from a"), (b, b"from b")):
        r, st = get(srv, "/c/same", headers=["X-Target: " + o.addr])
        assert st == "MISS" and r.body == body
    for o, body in ((a, b"from a"), (b, b"from b")):
        r, st = get(srv, "/c/same", headers=["X-Target: " + o.addr])
        assert st == "HIT" and r.body == body, (o.addr, r.body)
    assert a.count("/c/same") == 1 and b.count("/c/same") == 1


def test_stored_fields_in_any_case_and_look_alikes(sws, corigin):
    o = corigin()
    o.set("/c/case", body=b"case", headers=[
        ("cONTENT-tYPE", "text/x-case"), ("ETAG", '"e1"'), ("Cache-Control", "max-age=600"),
        ("ACCEPT-RANGES", "bytes"), ("Content_Type", "not-the-type"),
        ("Last-ModifieD", "Wed, 01 Jan 2025 00:00:00 GMT"), ("X-Date", "kept")])
    srv = start(sws, o, "mem_size=1m")
    get(srv, "/c/case")
    r, st = get(srv, "/c/case")
    assert st == "HIT" and r.body == b"case"
    assert r.header("Content-Type") == "text/x-case"
    assert r.header("Content_Type") == "not-the-type"       # '_' is no '-'
    assert r.header("ETag") == '"e1"'
    assert r.header("Last-Modified") == "Wed, 01 Jan 2025 00:00:00 GMT"
    assert r.header("X-Date") == "kept"
    names = [n.lower() for n, _ in r.headers]
    assert names.count("accept-ranges") == 1 and names.count("content-type") == 1
    assert names.count("date") == 1 and names.count("etag") == 1
    # the core's fields work on them: a conditional request is a 304
    r, st = get(srv, "/c/case", headers=['If-None-Match: "e1"'])
    assert st == "HIT" and r.status == 304


def test_a_damaged_entry_found_by_the_hit_hook_is_a_miss(sws, corigin):
    # the hit hook declines and the lookup stores the entry again
    o = corigin()
    srv = start(sws, o)
    get(srv, "/c/dmg")
    import cacheorigin
    [f] = cacheorigin.entry_files(srv)
    data = bytearray(open(f, "rb").read())
    data[-1] ^= 0xFF
    open(f, "wb").write(bytes(data[:-2]))
    r, st = get(srv, "/c/dmg")
    assert st == "MISS" and r.status == 200 and r.body == b"/c/dmg"
    assert get(srv, "/c/dmg")[1] == "HIT"
    assert o.count("/c/dmg") == 2
