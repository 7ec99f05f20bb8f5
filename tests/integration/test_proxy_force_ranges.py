"""proxy_force_ranges: a proxied 200 of known length is cut to the
client's range here even though the server offers no ranges (nginx's
single_range: several ranges get the whole); the server's own 206 passes;
a body of unknown length is sent whole. Compared with nginx in
test_nginx_sites_smallmods.py."""
import conferr
import swsharness as h
from proxyorigin import pattern


def start(sws, origin, extra=""):
    o = origin()
    s = sws(http="    proxy_cache_path @TMP@/cache keys_zone=fr:1m;\n",
            server=("        location /f/ { proxy_pass http://%s/; proxy_force_ranges on;%s }\n"
                    "        location /c/ { proxy_pass http://%s/; proxy_force_ranges on;\n"
                    "                       proxy_cache fr; proxy_cache_valid 200 1m; }\n"
                    "        location /n/ { proxy_pass http://%s/; }\n"
                    % (o.addr, extra, o.addr, o.addr)))
    return o, s


def ranges_sent(o, path):
    return [r.header("Range") for r in o.requests if r.path == path]


def test_one_range_cut_here(sws, origin):
    o, s = start(sws, origin)
    body = pattern(5000)
    r = h.curl(s.url("/f/len/5000"), headers=["Range: bytes=100-199"])
    assert (r.status, r.body) == (206, body[100:200]), r
    assert r.header("Content-Range") == "bytes 100-199/5000", r
    assert r.header("Content-Length") == "100", r
    assert ranges_sent(o, "/len/5000") == ["bytes=100-199"]     # passed on, as nginx
    for rng, part in (("bytes=-10", body[-10:]), ("bytes=4990-", body[4990:]),
                      ("bytes=0-0", body[:1]), ("bytes=4000-99999", body[4000:])):
        r = h.curl(s.url("/f/len/5000"), headers=["Range: " + rng])
        assert (r.status, r.body) == (206, part), (rng, r)
    r = h.curl(s.url("/f/len/5000"))
    assert (r.status, r.body, r.header("Accept-Ranges")) == (200, body, "bytes"), r
    r = h.curl(s.url("/f/len/5000"), method="HEAD", headers=["Range: bytes=0-9"])
    assert (r.status, r.header("Content-Length")) == (200, "5000"), r
    # off (the default): the server's answer as it is
    r = h.curl(s.url("/n/len/5000"), headers=["Range: bytes=100-199"])
    assert (r.status, len(r.body), r.header("Accept-Ranges")) == (200, 5000, None), r


def test_bad_and_several_ranges(sws, origin):
    o, s = start(sws, origin)
    body = pattern(5000)
    # several ranges: the whole (the body streams, no multipart of it)
    r = h.curl(s.url("/f/len/5000"), headers=["Range: bytes=0-1,10-20"])
    assert (r.status, r.body, r.header("Accept-Ranges")) == (200, body, "bytes"), r
    r = h.curl(s.url("/f/len/5000"), headers=["Range: bytes=5000-"])
    assert r.status == 416 and r.header("Content-Range") == "bytes */5000", r
    for rng in ("bytes=x", "bytes=9-3", "bytes=-0"):
        assert h.curl(s.url("/f/len/5000"), headers=["Range: " + rng]).status == 416, rng
    for rng in ("items=0-9", "bytes"):
        r = h.curl(s.url("/f/len/5000"), headers=["Range: " + rng])
        assert (r.status, r.body) == (200, body), rng
    r = h.curl(s.url("/f/len/5000"), headers=["Range: bytes=0-9", 'If-Range: "x"'])
    assert (r.status, r.body) == (200, body), r


def test_unknown_length_and_errors_pass_whole(sws, origin):
    o, s = start(sws, origin)
    r = h.curl(s.url("/f/chunked/3000"), headers=["Range: bytes=0-9"])
    assert (r.status, len(r.body), r.header("Accept-Ranges")) == (200, 3000, None), r
    r = h.curl(s.url("/f/close/3000"), headers=["Range: bytes=0-9"])
    assert (r.status, len(r.body)) == (200, 3000), r
    r = h.curl(s.url("/f/status/404"), headers=["Range: bytes=0-1"])
    assert r.status == 404 and r.header("Content-Range") is None, r


def test_big_body_and_keepalive(sws, origin):
    o, s = start(sws, origin, " proxy_buffers 2 4k; proxy_buffer_size 4k;")
    n = 2 * 1024 * 1024
    body = pattern(n)
    with h.Conn(s.port) as c:
        for rng, part in (("bytes=1000000-1000099", body[1000000:1000100]),
                          ("bytes=10-", body[10:]), ("bytes=0-4", body[:5])):
            c.send(h.request("GET", "/f/big/%d" % n, headers=["Range: " + rng]))
            r = c.read_response("GET")
            assert (r.status, r.body) == (206, part), rng
        c.send(h.request("GET", "/respond"))
        assert c.read_response("GET").body == b"Hello, world!"


def test_with_the_cache(sws, origin):
    o, s = start(sws, origin)
    body = pattern(5000)
    r = h.curl(s.url("/c/len/5000"), headers=["Range: bytes=10-19"])
    assert (r.status, r.body) == (206, body[10:20]), r          # a miss, cut
    assert ranges_sent(o, "/len/5000") == [None]                # the whole asked for
    r = h.curl(s.url("/c/len/5000"), headers=["Range: bytes=0-1,10-20"])
    assert r.status == 206 and r.header("Content-Type").startswith("multipart/"), r
    r = h.curl(s.url("/c/len/5000"))
    assert (r.status, r.body) == (200, body), r
    assert len(ranges_sent(o, "/len/5000")) == 1                # hits


def test_directive(tmp_path, sws, origin):
    conferr.check(tmp_path / "a", ["must be \"on\" or \"off\""],
                  server="        location /f/ { proxy_force_ranges yes;  # ERR\n }\n")
    conferr.check(tmp_path / "b", ["is duplicate"],
                  server="        proxy_force_ranges on;\n proxy_force_ranges on;  # ERR\n")
    # inherited from the server level
    o = origin()
    s = sws(server="        proxy_force_ranges on;\n"
                   "        location /f/ { proxy_pass http://%s/; }\n" % o.addr)
    r = h.curl(s.url("/f/len/100"), headers=["Range: bytes=0-9"])
    assert (r.status, r.body) == (206, pattern(100)[:10]), r


def test_over_http2(sws, origin):
    o = origin()
    s = sws(server=("        listen 127.0.0.1:@PORT2@ http2;\n"
                    "        location /f/ { proxy_pass http://%s/; proxy_force_ranges on; }\n"
                    % o.addr), ports=2)
    u = "http://127.0.0.1:%d/f/big/300000" % s.ports[1]
    r = h.curl(u, prior_knowledge=True, headers=["Range: bytes=250000-250099"])
    assert (r.status, r.body) == (206, pattern(300000)[250000:250100]), r
    r = h.curl(u, prior_knowledge=True, headers=["Range: bytes=0-1,3-4"])
    assert (r.status, r.body) == (200, pattern(300000)), r
