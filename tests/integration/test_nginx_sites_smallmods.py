"""proxy_force_ranges, random_index and flv (tests/sites/smallmods.conf)
under nginx and scalwsd side by side: the same requests, the same status,
headers (Content-Range, Accept-Ranges among them) and bodies."""
import swsharness as h
from test_nginx_sites import fetch, pair, same  # noqa: F401 (fixture)

BODY = bytes(range(256)) * 4 + b"tail"                 # 1028 bytes
FLV = b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00" + bytes(range(200)) * 5
FILES = {
    "files/data.bin": BODY,
    "pics/one/only.txt": "the only file\n",
    "pics/one/.hidden": "never chosen\n",
    "pics/one/sub/inner.txt": "a directory's file\n",
    "pics/three/a.txt": "A\n",
    "pics/three/b.txt": "B\n",
    "pics/three/c.txt": "C\n",
    "pics/three/sub/.only-dot": "hidden\n",
    "pics/dots/.only-dot": "hidden\n",
    "pics/page.txt": "a file, not a directory\n",
    "listed/dots/.x": "hidden\n",
    "video/clip.flv": FLV,
    "video/sub/x.flv": FLV,
}
ACCEPT = ("accept-ranges",)


def ranges_same(ports, path, also=ACCEPT):
    same(ports, "GET", path, also=also)
    same(ports, "HEAD", path, also=also, body=False)
    for rng in ("bytes=0-9", "bytes=1000-", "bytes=-4", "bytes=100-199",
                "bytes=5000-", "bytes=x", "bytes=9-3"):
        same(ports, "GET", path, ["Range: " + rng], also=also)
    # several: the same status (a multipart's boundary differs: compat.md)
    (rn, _), (rs, _) = (fetch(port, "GET", path, ["Range: bytes=0-1,5-6"]) for port in ports)
    assert rn.status == rs.status, (path, rn, rs)


def test_force_ranges(pair):
    ports = pair("smallmods.conf", FILES)
    # the server sends no Accept-Ranges and the whole: cut here
    r = same(ports, "GET", "/forced/data.bin", ["Range: bytes=10-19"], also=ACCEPT)
    assert (r.status, r.body, r.header("Content-Range")) == (206, BODY[10:20],
                                                            "bytes 10-19/1028"), r
    ranges_same(ports, "/forced/data.bin")
    # several ranges: the whole (200), with Accept-Ranges
    r = same(ports, "GET", "/forced/data.bin", ["Range: bytes=0-1,5-6"], also=ACCEPT)
    assert (r.status, r.body, r.header("Accept-Ranges")) == (200, BODY, "bytes"), r
    # If-Range that does not match: the whole
    same(ports, "GET", "/forced/data.bin", ["Range: bytes=0-9", 'If-Range: "nope"'],
         also=ACCEPT)
    # without the directive: the server's whole answer, no Accept-Ranges
    r = same(ports, "GET", "/plain/data.bin", ["Range: bytes=10-19"], also=ACCEPT)
    assert (r.status, r.header("Accept-Ranges")) == (200, None), r
    # a server that answers the range itself: its 206 (and its
    # Accept-Ranges on a 200 replaced by ours)
    ranges_same(ports, "/forced-ranged/data.bin")
    # a missing file, an error status: passed as they are
    same(ports, "GET", "/forced/none.bin", ["Range: bytes=0-9"], also=ACCEPT)


def test_force_ranges_unknown_length(pair):
    ports = pair("smallmods.conf", FILES)
    # chunked, of unknown length: no ranges, no Accept-Ranges
    r = same(ports, "GET", "/origin/chunked/3000", ["Range: bytes=0-9"], also=ACCEPT)
    assert (r.status, len(r.body), r.header("Accept-Ranges")) == (200, 3000, None), r
    # known length from the origin
    r = same(ports, "GET", "/origin/len/3000", ["Range: bytes=2990-"], also=ACCEPT)
    assert (r.status, len(r.body)) == (206, 10), r
    same(ports, "GET", "/origin/len/3000", ["Range: bytes=-10"], also=ACCEPT)
    same(ports, "GET", "/origin/status/404", ["Range: bytes=0-1"], also=ACCEPT)


def test_force_ranges_with_the_cache(pair):
    ports = pair("smallmods.conf", FILES)
    # a miss: the whole is asked for and stored, the range cut from it
    r = same(ports, "GET", "/cached/data.bin", ["Range: bytes=100-109"], also=ACCEPT)
    assert (r.status, r.body) == (206, BODY[100:110]), r
    # a hit: ranges of the stored whole
    r = same(ports, "GET", "/cached/data.bin", ["Range: bytes=-4"], also=ACCEPT)
    assert (r.status, r.body) == (206, b"tail"), r
    r = same(ports, "GET", "/cached/data.bin", also=ACCEPT)
    assert (r.status, r.body) == (200, BODY), r
    # a miss with several ranges: the whole, streamed
    same(ports, "GET", "/cached/data.bin?other", ["Range: bytes=0-1,5-6"], also=ACCEPT)


def test_random_index(pair, tmp_path):
    ports = pair("smallmods.conf", FILES)
    one = tmp_path / "root" / "pics" / "one"
    (one / "dirlink").symlink_to(one / "sub")
    (one / "dangling.txt").symlink_to(tmp_path / "none")
    # one regular file beside a dot file, a directory and links to a
    # directory and to nothing: always that one
    for _ in range(10):
        r = same(ports, "GET", "/pics/one/")
        assert (r.status, r.body) == (200, b"the only file\n"), r
    # a link to a file counts as one (nginx stats each entry)
    (tmp_path / "root" / "pics" / "dots" / "link.txt").symlink_to(
        tmp_path / "root" / "pics" / "page.txt")
    r = same(ports, "GET", "/pics/dots/")
    assert (r.status, r.body) == (200, b"a file, not a directory\n"), r
    same(ports, "HEAD", "/pics/one/", body=False)
    same(ports, "GET", "/pics/one/?q=1")
    same(ports, "POST", "/pics/one/")                 # the file refuses POST: 405
    same(ports, "PUT", "/pics/one/")
    # several files: each request one of them, not always the same
    seen = set()
    for _ in range(30):
        for port in ports:
            r, body = fetch(port, "GET", "/pics/three/")
            assert r.status == 200 and body in (b"A\n", b"B\n", b"C\n"), (port, r)
            if port == ports[1]:
                seen.add(body)
    assert len(seen) > 1, seen
    # no file to choose: the index handler's answer (403), the listing
    same(ports, "GET", "/pics/three/sub/")
    r = same(ports, "GET", "/listed/dots/")
    assert r.status == 200 and b".x" not in r.body, r
    # missing, not a directory, outside the root
    same(ports, "GET", "/pics/missing/")
    same(ports, "GET", "/pics/page.txt/")
    same(ports, "GET", "/pics/one")                   # the directory: 301
    same(ports, "GET", "/pics/../files/")
    same(ports, "GET", "/pics/%2e%2e/%2e%2e/")
    same(ports, "GET", "/pics/one/sub/")


def test_flv(pair):
    ports = pair("smallmods.conf", FILES)
    p = "/video/clip.flv"
    r = same(ports, "GET", p + "?start=113", also=ACCEPT + ("content-length",))
    assert r.status == 200 and r.body == FLV[:13] + FLV[113:], r
    assert r.header("Content-Length") == str(13 + len(FLV) - 113), r
    for q in ("", "?start=0", "?start=abc", "?start=-5", "?start=+5", "?start=",
              "?start", "?start=%d" % len(FLV), "?start=%d" % (len(FLV) - 1),
              "?start=99999999999999999999", "?START=20", "?x=1&start=20",
              "?start=20&start=30", "?xstart=20", "?start=20x"):
        same(ports, "GET", p + q, also=ACCEPT + ("content-length",))
    same(ports, "HEAD", p + "?start=100", also=ACCEPT + ("content-length",), body=False)
    # Range applies to what is sent (the header and the rest)
    for rng in ("bytes=0-20", "bytes=-5", "bytes=10-", "bytes=5000-"):
        same(ports, "GET", p + "?start=100", ["Range: " + rng], also=ACCEPT)
    # several ranges: nginx closes the connection ("range in overlapped
    # buffers": its multipart needs the body in one buffer); scalwsd sends
    # the multipart/byteranges
    multi = ["Range: bytes=0-1,20-30"]
    assert h.exchange(ports[0], h.request("GET", p + "?start=100", headers=multi)) is None
    rs, body = fetch(ports[1], "GET", p + "?start=100", multi)
    assert rs.status == 206 and rs.header("Content-Type").startswith("multipart/byteranges")
    assert b"Content-Range: bytes 0-1/" in body and b"FL" in body, body
    # conditional requests against the file's validators
    r, _ = fetch(ports[0], "GET", p)
    for cond in ("If-None-Match: " + r.header("ETag"),
                 "If-Modified-Since: " + r.header("Last-Modified")):
        same(ports, "GET", p + "?start=100", [cond], also=ACCEPT)
    # what is not a file to send
    for path in ("/video/none.flv?start=10", "/video/sub?start=10", "/video/sub/?start=10",
                 "/video/?start=1", "/video/sub/x.flv?start=50"):
        same(ports, "GET", path, also=ACCEPT)
    for method in ("POST", "PUT", "DELETE"):
        same(ports, method, p + "?start=10")
        same(ports, method, "/video/none.flv")
