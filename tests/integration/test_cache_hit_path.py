"""The hit path (modules/cache): a fresh hit is answered by the cache's hit
hook before proxy makes its upstream request (sws_http_upstream_cache_hit),
except where the key depends on what proxy computes first (a proxy_pass
with variables); the stored fields go back through the core's matching of
the fields it keeps apart, in any case, and never on a look-alike name."""
import gzip

import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, get, source, start, statuses  # noqa: F401


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
    srv = start(sws, o, "mem_size=0")
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


# A memory copy's fields are prepared once (sws_http_stored_prepare) and
# every hit gets a copy of them: the same fields as a hit from the file, and
# what one response's filters change is not seen by the next one.
PREPARED_FIELDS = [
    ("Content-Type", "text/x-p"), ("ETag", '"p1"'), ("Location", "http://elsewhere.example/p"),
    ("Last-Modified", "not a date"), ("X-One", "1"), ("Keep-Alive", "timeout=1"),
    ("X-Two", "two"), ("Cache-Control", "max-age=600")]


def _fields(r):
    """The response's fields as sent, without those of this response only."""
    return [(n.lower(), v) for n, v in r.headers if n.lower() not in ("date", "age")]


def test_a_memory_hit_sends_what_a_file_hit_does(sws, corigin):
    o = corigin()
    o.set("/c/p", body=b"prepared body", headers=PREPARED_FIELDS)
    mem = start(sws, o, "mem_size=1m")
    disk = start(sws, o, "mem_size=0")
    hits = []
    for srv, where in ((mem, "memory"), (disk, "file")):
        get(srv, "/c/p")
        r, st = get(srv, "/c/p")
        assert st == "HIT" and source(srv) == where
        assert r.status == 200 and r.body == b"prepared body"
        hits.append(_fields(r))
    assert hits[0] == hits[1], hits
    f = dict(hits[0])
    assert f["content-type"] == "text/x-p" and f["etag"] == '"p1"'
    assert f["location"] == "http://elsewhere.example/p" and f["last-modified"] == "not a date"
    assert f["x-one"] == "1" and f["x-two"] == "two"
    names = [n for n, _ in hits[0]]
    assert "keep-alive" not in names and names.count("content-length") == 1
    assert names.count("accept-ranges") == 1
    assert o.count("/c/p") == 2


def test_filters_on_one_memory_hit_leave_the_next_alone(sws, corigin):
    o = corigin()
    o.set("/c/f", body=b"0123456789", headers=PREPARED_FIELDS)
    srv = start(sws, o, "mem_size=1m", loc='add_header X-Added "$upstream_cache_status";')
    get(srv, "/c/f")
    first, st = get(srv, "/c/f")
    assert st == "HIT" and first.header("X-Added") == "HIT"
    # a 304, a 206, a 416 and a HEAD change the response each in their way
    r, st = get(srv, "/c/f", headers=['If-None-Match: "p1"'])
    assert st == "HIT" and r.status == 304 and r.header("Content-Type") is None
    r, st = get(srv, "/c/f", headers=["Range: bytes=2-4"])
    assert st == "HIT" and r.status == 206 and r.body == b"234"
    assert r.header("Content-Range") == "bytes 2-4/10"
    r, st = get(srv, "/c/f", headers=["Range: bytes=50-"])
    assert st == "HIT" and r.status == 416
    r, st = get(srv, "/c/f", method="HEAD")
    assert st == "HIT" and r.status == 200 and r.body == b""
    again, st = get(srv, "/c/f")
    assert st == "HIT" and again.status == 200 and again.body == b"0123456789"
    assert _fields(again) == _fields(first)
    assert o.count("/c/f") == 1


def test_memory_hits_gzipped_with_a_charset_and_over_http2(sws, corigin):
    o = corigin()
    page = b"<p>prepared</p>" * 200
    o.set("/c/z", body=page, headers=[("Content-Type", "text/html"), ("ETag", '"z1"'),
                                      ("Cache-Control", "max-age=600")])
    srv = start(sws, o, "mem_size=1m", ports=2,
                loc='gzip on; gzip_min_length 1; charset utf-8; '
                    'add_header X-Status "$upstream_cache_status";',
                server="listen 127.0.0.1:@PORT2@ http2;")
    get(srv, "/c/z")
    r, st = get(srv, "/c/z", headers=["Accept-Encoding: gzip"])
    assert st == "HIT" and source(srv) == "memory" and r.status == 200
    assert r.header("Content-Encoding") == "gzip" and gzip.decompress(r.body) == page
    assert r.header("ETag") == 'W/"z1"'            # the compressed body's, weak
    # the next hit, plain: the entry's own fields, not what gzip made of them
    r, st = get(srv, "/c/z")
    assert st == "HIT" and r.body == page and r.header("Content-Encoding") is None
    assert r.header("ETag") == '"z1"' and r.header("Content-Length") == str(len(page))
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    # HTTP/2 (h2c) clients get the same hit, with its Age
    r = h.curl("http://127.0.0.1:%d/c/z" % srv.ports[1], prior_knowledge=True)
    assert r.status == 200 and r.http_version == 3 and r.body == page
    assert r.header("X-Status") == "HIT" and r.header("Age") is not None
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    assert o.count("/c/z") == 1
