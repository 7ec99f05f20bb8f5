"""flv: a .flv asked for with ?start=N is sent from byte N after the
13-byte FLV header (nginx's ngx_http_flv_module); without a usable start,
the plain file. Compared with nginx in test_nginx_sites_smallmods.py."""
import conferr
import swsharness as h

HEADER = b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00"
SMALL = HEADER + bytes(range(256)) * 2                     # 525 bytes
BIG = HEADER + bytes(range(256)) * 1024                    # 256 KiB: sent from the file
FILES = {"html/v/small.flv": SMALL, "html/v/big.flv": BIG, "html/v/dir/x.flv": SMALL}
SERVER = ("        location /v/ { flv; }\n"
          "        location /cached/ { alias @TMP@/html/v/; flv;\n"
          "            open_file_cache max=10; open_file_cache_valid 1m; }\n")


def test_start_sends_the_header_and_the_rest(sws):
    s = sws(server=SERVER, files=FILES)
    for base in ("/v/", "/cached/"):
        for name, data in (("small.flv", SMALL), ("big.flv", BIG)):
            for start in (13, 100, len(data) - 1):
                r = h.curl(s.url(base + name + "?start=%d" % start))
                assert r.status == 200 and r.body == HEADER + data[start:], (base, name, start)
                assert r.header("Content-Length") == str(13 + len(data) - start), r
                assert r.header("Content-Type") == "video/x-flv", r
                assert r.header("Accept-Ranges") == "bytes", r
    r = h.curl(s.url("/v/big.flv?start=1000"), method="HEAD")
    assert (r.status, r.body, r.header("Content-Length")) == (200, b"", str(13 + len(BIG) - 1000))


def test_no_usable_start_is_the_plain_file(sws):
    s = sws(server=SERVER, files=FILES)
    plain = h.curl(s.url("/v/small.flv"))
    assert plain.status == 200 and plain.body == SMALL, plain
    for q in ("?start=0", "?start=", "?start", "?start=abc", "?start=-1", "?start=+1",
              "?start=1x", "?start=%d" % len(SMALL), "?start=%d" % (len(SMALL) + 9),
              "?start=99999999999999999999999", "?begin=100", "?xstart=100"):
        r = h.curl(s.url("/v/small.flv" + q))
        assert (r.status, r.body) == (200, SMALL), q
        assert r.header("ETag") == plain.header("ETag"), q
    # the first start= counts, any case of the name
    assert h.curl(s.url("/v/small.flv?a=1&START=20&start=30")).body == HEADER + SMALL[20:]


def test_ranges_and_validators_of_what_is_sent(sws):
    s = sws(server=SERVER, files=FILES)
    u = s.url("/v/big.flv?start=5000")
    sent = HEADER + BIG[5000:]
    r = h.curl(u, headers=["Range: bytes=0-99"])
    assert (r.status, r.body) == (206, sent[:100]), r
    assert r.header("Content-Range") == "bytes 0-99/%d" % len(sent), r
    r = h.curl(u, headers=["Range: bytes=-7"])
    assert (r.status, r.body) == (206, sent[-7:]), r
    r = h.curl(u, headers=["Range: bytes=0-1,20-30"])
    assert r.status == 206 and r.header("Content-Type").startswith("multipart/byteranges")
    assert sent[20:31] in r.body and b"bytes 0-1/%d" % len(sent) in r.body, r
    assert h.curl(u, headers=["Range: bytes=%d-" % len(sent)]).status == 416
    # each start is its own representation: its own ETag (as nginx's)
    etag = h.curl(u).header("ETag")
    assert etag != h.curl(s.url("/v/big.flv")).header("ETag")
    assert h.curl(u, headers=["If-None-Match: " + etag]).status == 304
    r = h.curl(u, headers=["Range: bytes=0-9", "If-Range: " + etag])
    assert (r.status, r.body) == (206, sent[:10]), r


def test_keepalive_after_a_start(sws):
    s = sws(server=SERVER, files=FILES)
    with h.Conn(s.port) as c:
        for start in (100, 200000, 0):
            c.send(h.request("GET", "/v/big.flv?start=%d" % start))
            r = c.read_response("GET")
            assert r.status == 200 and r.body == (HEADER + BIG[start:] if start else BIG)


def test_what_is_not_a_file(sws):
    s = sws(server=SERVER, files=FILES)
    assert h.curl(s.url("/v/none.flv?start=10")).status == 404
    r = h.curl(s.url("/v/dir?start=10"))
    assert r.status == 301 and r.header("Location").endswith("/v/dir/?start=10"), r
    assert h.curl(s.url("/v/dir/?start=10")).status == 403        # no index, no listing
    for method in ("POST", "PUT", "DELETE"):
        assert h.curl(s.url("/v/small.flv?start=10"), method=method, body=b"x").status == 405
        assert h.curl(s.url("/v/none.flv"), method=method, body=b"x").status == 405


def test_flv_directive_errors(tmp_path):
    conferr.check(tmp_path / "a", ["invalid number of arguments"],
                  server="        location /v/ { flv on;  # ERR\n }\n")
    conferr.check(tmp_path / "c", ["not allowed"], server="        flv;  # ERR\n")
    conferr.check_ok(tmp_path / "d", server="        location /v/ { flv; flv; }\n")  # as nginx


def test_over_http2(sws):
    s = sws(server=SERVER + "        listen 127.0.0.1:@PORT2@ http2;\n", files=FILES, ports=2)
    u = "http://127.0.0.1:%d/v/big.flv?start=70000" % s.ports[1]
    r = h.curl(u, prior_knowledge=True)
    assert (r.status, r.body) == (200, HEADER + BIG[70000:]), r
    r = h.curl(u, prior_knowledge=True, headers=["Range: bytes=5-20"])
    assert (r.status, r.body) == (206, (HEADER + BIG[70000:])[5:21]), r
