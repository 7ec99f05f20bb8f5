"""The admin module's cache counters (docs/admin.md): requests by their
final $upstream_cache_status, entries, bytes and evictions per cache zone,
in /api/caches and /metrics, adding up exactly to a known sequence."""
import shutil
import time

import swsharness as h
from test_admin import admin_block, api, get, metric, promtool

HTTP = """
    proxy_cache_path @TMP@/cache keys_zone=one:1m;
    proxy_cache_path @TMP@/gone keys_zone=gone:1m inactive=1s;
    upstream origin { server 127.0.0.1:@PORT2@; }
"""

SERVER = """
        location /r/ { proxy_pass http://origin/html/; proxy_cache one;
                       proxy_cache_valid 200 1s; proxy_cache_revalidate on;
                       proxy_cache_bypass $arg_nocache;
                       add_header X-Cache $upstream_cache_status; }
        location /e/ { proxy_pass http://origin/html/; proxy_cache one;
                       proxy_cache_valid 200 1s; proxy_cache_revalidate off;
                       add_header X-Cache $upstream_cache_status; }
        location /g/ { proxy_pass http://origin/html/; proxy_cache gone;
                       proxy_cache_valid 200 1h;
                       add_header X-Cache $upstream_cache_status; }
        location /plain/ { proxy_pass http://origin/html/; }
"""

ORIGIN = "server { listen 127.0.0.1:@PORT2@; root @TMP@; }"

STATUSES = ["miss", "hit", "expired", "stale", "updating", "revalidated", "bypass"]


def start(sws):
    return sws(ports=3, http=admin_block() + HTTP, server=SERVER, servers=ORIGIN,
               files={"html/f.txt": "f" * 1000, "html/g.txt": "g" * 500})


def cache_status(srv, path):
    r = h.curl(srv.url(path), fresh=True)
    assert r.status == 200, r
    return r.header("X-Cache")


def test_cache_counts_add_up(sws):
    srv = start(sws)
    zero = {s: 0 for s in STATUSES}
    caches = api(srv, "/api/caches")
    assert set(caches) == {"one", "gone"}
    assert caches["one"]["responses"] == zero and caches["one"]["entries"] == 0
    assert caches["one"]["max_disk_bytes"] == 0 and caches["one"]["evictions"] == 0

    seen = [cache_status(srv, p) for p in
            ("/r/f.txt", "/r/f.txt", "/r/f.txt", "/e/f.txt", "/e/f.txt", "/e/g.txt",
             "/r/f.txt?nocache=1", "/g/g.txt")]
    assert seen == ["MISS", "HIT", "HIT", "MISS", "HIT", "MISS", "BYPASS", "MISS"], seen
    assert h.curl(srv.url("/plain/f.txt")).status == 200     # no cache: not counted
    one = api(srv, "/api/caches")["one"]
    assert one["responses"] == dict(zero, miss=3, hit=3, bypass=1), one
    # (the bypassed response is stored, under its own key, as nginx does)
    assert one["entries"] == 4 and one["disk_bytes"] > 1000 * 3 + 500, one

    # past their second: /r/ revalidates (the origin's 304), /e/ has expired
    time.sleep(2.05)
    assert cache_status(srv, "/r/f.txt") == "REVALIDATED"
    assert cache_status(srv, "/e/f.txt") == "EXPIRED"
    one = api(srv, "/api/caches")["one"]
    assert one["responses"] == dict(zero, miss=3, hit=3, bypass=1, revalidated=1,
                                    expired=1), one
    assert one["entries"] == 4 and one["evictions"] == 0

    # the inactive entry of "gone" goes with the cache manager
    assert h.wait_for(lambda: api(srv, "/api/caches")["gone"]["evictions"] == 1, 5), \
        api(srv, "/api/caches")
    gone = api(srv, "/api/caches")["gone"]
    assert gone["entries"] == 0 and gone["disk_bytes"] == 0
    assert gone["responses"] == dict(zero, miss=1), gone

    r = get(srv, "/metrics")
    text = r.body.decode()
    for s in STATUSES:
        assert metric(text, "scalws_cache_responses_total", zone="one",
                      status=s) == one["responses"][s]
    assert metric(text, "scalws_cache_entries", zone="one") == 4
    assert metric(text, "scalws_cache_disk_bytes", zone="one") == one["disk_bytes"]
    assert metric(text, "scalws_cache_evictions_total", zone="gone") == 1
    if shutil.which("promtool"):
        rc, out = promtool(r.body)
        assert rc == 0 and out.strip() == "", out


def test_no_caches(sws):
    srv = sws(ports=3, http=admin_block())
    assert api(srv, "/api/caches") == {}
    assert "scalws_cache_" not in get(srv, "/metrics").body.decode()
