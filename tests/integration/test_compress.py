"""The compress module: gzip, brotli and zstd on the fly (static files,
proxied responses, streams) and precompressed siblings, over HTTP/1.x and
HTTP/2. Every compressed body is decoded with Python's zlib/gzip, brotli
and zstandard modules and compared byte for byte with the original."""
import gzip
import hashlib
import os
import time
import zlib

import brotli
import pytest
import zstandard

import swsharness as h
from proxyorigin import text_body

PAGE = text_body(100 * 1024)                # the 100 KiB page of the benchmark
SMALL = b"<p>tiny</p>\n"                     # under gzip_min_length (20)
PLAIN = text_body(5000)
FILES = {
    "html/page.html": PAGE,
    "html/small.html": SMALL,
    "html/plain.txt": PLAIN,
    "html/data.json": PLAIN,
}
ALL = "gzip on; brotli on; zstd on;"


def decode(coding, data):
    if coding == "gzip":
        return gzip.decompress(data)
    if coding == "br":
        return brotli.decompress(data)
    if coding == "zstd":
        # streamed frames may have no content size: decode as a stream
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    assert coding is None, coding
    return data


def get(srv, path, ae=None, headers=(), version="HTTP/1.1", method="GET"):
    hdrs = list(headers)
    if ae is not None:
        hdrs.append(("Accept-Encoding", ae))
    return h.exchange(srv.port, h.request(method, path, headers=hdrs, version=version),
                      method=method)


def check(r, coding, original):
    """r is a 200 with this coding (None: identity) whose body decodes to
    original."""
    assert r.status == 200, r
    assert r.header("content-encoding") == coding, r
    assert decode(coding, r.body) == original
    if coding:
        assert r.header("content-length") is None, r
        assert r.header("accept-ranges") is None, r
        if len(original) > 1000:
            assert len(r.body) < len(original)


# ---------------------------------------------------------------- codings

@pytest.fixture(scope="module")
def srv(sws_module, tmp_path_factory):
    return sws_module(files=FILES, http="    %s\n" % ALL, server="""
        location /prefer/ { alias @TMP@/html/; compress_prefer gzip br; }
        location /vary/ { alias @TMP@/html/; gzip_vary on; brotli_vary on; zstd_vary on; }
        location /types/ { alias @TMP@/html/; gzip_types text/plain; brotli off; zstd off; }
        location /any/ { alias @TMP@/html/; gzip_types *; brotli off; zstd off; }
        location /min/ { alias @TMP@/html/; gzip_min_length 6000; brotli off; zstd off; }
        location /zero/ { alias @TMP@/html/; gzip_min_length 0; brotli off; zstd off; }
        location /l9/ { alias @TMP@/html/; gzip_comp_level 9; brotli_comp_level 11;
                        zstd_comp_level 19; }
        location /l2/ { alias @TMP@/html/; gzip_comp_level 2; }
        location /h10/ { alias @TMP@/html/; gzip_http_version 1.0; brotli off; zstd off; }
        location /dis/ { alias @TMP@/html/; gzip_disable msie6 "BadBot"; brotli off; zstd off; }
        location /px/ { alias @TMP@/html/; gzip_proxied auth; brotli off; zstd off; }
        location /pxexp/ { alias @TMP@/html/; gzip_proxied auth; expires -1;
                           brotli off; zstd off; }
        location /pxexp1/ { alias @TMP@/html/; gzip_proxied expired; expires 1h;
                            brotli off; zstd off; }
        location /pxexp2/ { alias @TMP@/html/; gzip_proxied expired; expires -1;
                            brotli off; zstd off; }
        location /pxcc/ { alias @TMP@/html/; gzip_proxied no-cache;
                          add_header Cache-Control public; brotli off; zstd off; }
        location /pxcc2/ { alias @TMP@/html/; gzip_proxied no-cache no-store;
                           add_header Cache-Control "no-store"; brotli off; zstd off; }
        location /pxany/ { alias @TMP@/html/; gzip_proxied any; brotli off; zstd off; }
        location /pxetag/ { alias @TMP@/html/; gzip_proxied no_etag; etag off;
                            brotli off; zstd off; }
        location /tinybuf/ { alias @TMP@/html/; gzip_buffers 2 64; brotli_buffers 2 64;
                             zstd_buffers 2 64; }
        location /off/ { alias @TMP@/html/; gzip off; brotli off; zstd off; }
""")


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_each_coding_static_file(srv, coding):
    r = get(srv, "/page.html", coding)
    check(r, coding, PAGE)
    assert r.header("transfer-encoding") == "chunked"
    assert r.header("content-type") == "text/html"


@pytest.mark.parametrize("ae,expect", [
    ("gzip, deflate, br, zstd", "zstd"),            # a browser: the server's order
    ("gzip", "gzip"),
    ("x-gzip", "gzip"),
    ("GZIP", "gzip"),
    ("br;q=1.0, gzip;q=0.5", "br"),
    ("gzip;q=1, br;q=0.9, zstd;q=0.8", "gzip"),     # the client's q wins over ours
    ("gzip; q=0.5, br ;q=0.50", "br"),              # a tie: the server's order
    ("*", "zstd"),
    ("*;q=0.5, gzip", "gzip"),
    ("zstd;q=0, *", "br"),
    ("zstd;q=0, br;q=0", None),
    ("br;q=0.001", "br"),
    ("identity", None),
    ("", None),
    ("gzip;q=0", None),
    ("gzip;q=1.5", None),                           # invalid q: not acceptable
    ("gzip;q=x, br", "br"),
    ("deflate, compress", None),
    ('gzip;foo="a,b;q=0", br;q=0.1', "gzip"),       # a quoted comma is not a separator
    (",,, ,gzip,,", "gzip"),
    (None, None),                                   # no Accept-Encoding: identity
])
def test_negotiation(srv, ae, expect):
    check(get(srv, "/page.html", ae), expect, PAGE)


def test_server_preference(srv):
    check(get(srv, "/prefer/page.html", "zstd, br, gzip"), "gzip", PAGE)
    check(get(srv, "/prefer/page.html", "zstd, br"), "br", PAGE)
    check(get(srv, "/prefer/page.html", "zstd"), "zstd", PAGE)


def test_identity_refused_overrides_min_length(srv):
    check(get(srv, "/small.html", "gzip"), None, SMALL)
    check(get(srv, "/small.html", "gzip, identity;q=0"), "gzip", SMALL)
    check(get(srv, "/small.html", "gzip, *;q=0"), "gzip", SMALL)


def test_types(srv):
    check(get(srv, "/plain.txt", "gzip"), None, PLAIN)            # text/html only
    check(get(srv, "/types/plain.txt", "gzip"), "gzip", PLAIN)
    check(get(srv, "/types/page.html", "gzip"), "gzip", PAGE)     # html always
    check(get(srv, "/types/data.json", "gzip"), None, PLAIN)
    check(get(srv, "/any/data.json", "gzip"), "gzip", PLAIN)


def test_min_length(srv):
    check(get(srv, "/min/plain.txt", "gzip", ), None, PLAIN)     # not html: not at all
    check(get(srv, "/min/page.html", "gzip"), "gzip", PAGE)
    files = srv.tmp / "html"
    (files / "five.html").write_bytes(PLAIN)                     # 5000 < 6000
    check(get(srv, "/min/five.html", "gzip"), None, PLAIN)
    check(get(srv, "/zero/small.html", "gzip"), "gzip", SMALL)


def igzip_in(srv):
    """Whether the worker has ISA-L loaded: a build with libisal-dev makes
    gzip level 1 with igzip (modules/compress/sws_compress_codec.c)."""
    assert h.wait_for(lambda: len(srv.children()) == 1, 5), srv.children()
    with open("/proc/%d/maps" % srv.children()[0]) as f:
        return "libisal" in f.read()


def zlib_gzip(data, level, memlevel=7):
    """zlib's gzip of data: memLevel 7 is ours, 8 nginx's."""
    z = zlib.compressobj(level, zlib.DEFLATED, 16 + 15, memlevel)
    return z.compress(data) + z.flush()


def reference(coding, level, data):
    """What the library itself makes of data at this level."""
    if coding == "gzip":
        return zlib_gzip(data, level)
    if coding == "br":
        return brotli.compress(data, quality=level, lgwin=19)
    return zstandard.ZstdCompressor(level=level).compress(data)


@pytest.mark.parametrize("coding,path,level", [
    ("gzip", "/page.html", 1), ("gzip", "/l9/page.html", 9),
    ("br", "/page.html", 6), ("br", "/l9/page.html", 11),
    ("zstd", "/page.html", 1), ("zstd", "/l9/page.html", 19),
])
def test_comp_level(srv, coding, path, level):
    # The level reaches the library: the size is what the library makes at
    # that level (within 1 %: the stream is cut into buffers of 4 KiB).
    r = get(srv, path, coding)
    check(r, coding, PAGE)
    ref = reference(coding, level, PAGE)
    if coding == "gzip" and level == 1 and igzip_in(srv):
        # igzip, not zlib: no larger than nginx's zlib output (+1 %)
        nginx = zlib_gzip(PAGE, 1, 8)
        assert len(r.body) <= len(nginx) * 1.01, (len(r.body), len(nginx))
        return
    assert abs(len(r.body) - len(ref)) <= len(ref) // 100, (len(r.body), len(ref))


def bench_page():
    """The benchmark's page.html (bench/scenarios.py: HTML, varied text)."""
    import sys
    sys.path.insert(0, os.path.join(h.SRC, "bench"))
    try:
        import scenarios
    finally:
        sys.path.pop(0)
    return scenarios.page_html()


def test_gzip_coder_by_level(srv):
    # Level 1 (nginx's default) is igzip's when the build has ISA-L: on
    # the benchmark's page it makes output 3.6 % smaller than nginx's zlib
    # (more than 1 % smaller than ours: it is not zlib); levels 2 to 9
    # are zlib's, whose output at level 2 is what zlib makes (within 1 %).
    # Every body decodes byte-exact (the CRC and length are checked too).
    page = bench_page()
    src = open(os.path.join(h.SRC, "src", "http", "v1", "sws_http_h1.c"), "rb").read()
    for name, data in (("bench.html", page), ("h1.html", src)):
        (srv.tmp / "html" / name).write_bytes(data)
        r1 = get(srv, "/" + name, "gzip")
        check(r1, "gzip", data)
        r2 = get(srv, "/l2/" + name, "gzip")
        check(r2, "gzip", data)
        l2 = zlib_gzip(data, 2)
        assert abs(len(r2.body) - len(l2)) <= len(l2) // 100, (name, len(r2.body), len(l2))
        nginx = len(zlib_gzip(data, 1, 8))
        assert len(r1.body) <= nginx * 1.01, (name, len(r1.body), nginx)
        if igzip_in(srv):
            assert len(r1.body) < nginx, (name, len(r1.body), nginx)
            if name == "bench.html":
                assert len(r1.body) < len(zlib_gzip(data, 1)) * 0.99, (name, len(r1.body))
        else:
            ours = len(zlib_gzip(data, 1))
            assert abs(len(r1.body) - ours) <= ours // 100, (name, len(r1.body), ours)


def test_vary(srv):
    r = get(srv, "/vary/page.html", "gzip")
    assert r.header("vary") == "Accept-Encoding"
    r = get(srv, "/vary/page.html", "identity")          # varies for others
    check(r, None, PAGE)
    assert r.header("vary") == "Accept-Encoding"
    assert get(srv, "/vary/plain.txt", "gzip").header("vary") is None     # never compressed
    assert get(srv, "/page.html", "gzip").header("vary") is None          # gzip_vary off
    # a HEAD says what its GET says; a body under gzip_min_length never
    # varies, so no Vary (nginx sends none either)
    assert get(srv, "/vary/page.html", "gzip", method="HEAD").header("vary") == "Accept-Encoding"
    assert get(srv, "/vary/small.html", "gzip").header("vary") is None
    assert get(srv, "/vary/small.html", "gzip", method="HEAD").header("vary") is None


def test_http_version(srv):
    check(get(srv, "/page.html", "gzip", version="HTTP/1.0"), None, PAGE)
    r = get(srv, "/h10/page.html", "gzip", version="HTTP/1.0")
    check(r, "gzip", PAGE)                       # close-delimited
    assert r.header("transfer-encoding") is None


def test_disable(srv):
    ie6 = ("User-Agent", "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)")
    ie6sv1 = ("User-Agent", "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)")
    check(get(srv, "/dis/page.html", "gzip", [ie6]), None, PAGE)
    check(get(srv, "/dis/page.html", "gzip", [ie6sv1]), "gzip", PAGE)
    check(get(srv, "/dis/page.html", "gzip", [("User-Agent", "a badbot/1")]), None, PAGE)
    check(get(srv, "/dis/page.html", "gzip", [("User-Agent", "curl/8")]), "gzip", PAGE)
    check(get(srv, "/page.html", "gzip", [ie6]), "gzip", PAGE)


def test_proxied(srv):
    via = ("Via", "1.1 cache")
    check(get(srv, "/page.html", "gzip", [via]), None, PAGE)           # off
    # nginx's decision: a response without Expires and Cache-Control is
    # compressed whatever else the flags say (nginx 1.22 does so)
    check(get(srv, "/px/page.html", "gzip", [via]), "gzip", PAGE)
    check(get(srv, "/px/page.html", "gzip", [via, ("Authorization", "Basic eDp5")]),
          "gzip", PAGE)
    # with Expires: "expired" decides, and only for one already expired
    check(get(srv, "/pxexp/page.html", "gzip", [via]), None, PAGE)
    check(get(srv, "/pxexp1/page.html", "gzip", [via]), None, PAGE)
    check(get(srv, "/pxexp2/page.html", "gzip", [via]), "gzip", PAGE)
    # with Cache-Control: its flags decide
    check(get(srv, "/pxcc/page.html", "gzip", [via]), None, PAGE)
    check(get(srv, "/pxcc2/page.html", "gzip", [via]), "gzip", PAGE)
    check(get(srv, "/pxany/page.html", "gzip", [via]), "gzip", PAGE)
    check(get(srv, "/pxetag/page.html", "gzip", [via]), "gzip", PAGE)  # no ETag
    check(get(srv, "/px/page.html", "gzip"), "gzip", PAGE)             # not proxied


def test_small_buffers_stream_everything(srv):
    for coding in ("gzip", "br", "zstd"):
        check(get(srv, "/tinybuf/page.html", coding), coding, PAGE)


def test_off(srv):
    check(get(srv, "/off/page.html", "gzip, br, zstd"), None, PAGE)


def test_etag_weakened_and_conditionals(srv):
    plain = get(srv, "/page.html")
    r = get(srv, "/page.html", "gzip")
    assert plain.header("etag").startswith('"')
    assert r.header("etag") == "W/" + plain.header("etag")
    # If-None-Match compares weakly: the compressed one's tag matches
    r = get(srv, "/page.html", "gzip", [("If-None-Match", r.header("etag"))])
    assert r.status == 304 and r.body == b"" and r.header("content-encoding") is None


def test_head_gets_the_fields_of_its_get(srv):
    # RFC 9110 9.3.2, and nginx 1.22 answers so: the coding, the weak ETag,
    # Vary and no length, without a body
    get_r = get(srv, "/page.html", "gzip")
    r = get(srv, "/page.html", "gzip", method="HEAD")
    assert r.status == 200 and r.body == b""
    assert r.header("content-encoding") == "gzip" == get_r.header("content-encoding")
    assert r.header("etag") == get_r.header("etag") and r.header("etag").startswith("W/")
    assert r.header("vary") == get_r.header("vary")
    assert r.header("content-length") is None
    # without Accept-Encoding: the identity's fields
    r = get(srv, "/page.html", None, method="HEAD")
    assert r.header("content-encoding") is None
    assert r.header("content-length") == str(len(PAGE))
    # under gzip_min_length: no coding and no Vary (nginx sends none either)
    r = get(srv, "/small.html", "gzip", method="HEAD")
    assert r.header("content-encoding") is None and r.header("vary") is None, r
    assert get(srv, "/small.html", "gzip").header("vary") is None


def test_range_gets_the_whole_compressed_response(srv):
    r = get(srv, "/page.html", "gzip", [("Range", "bytes=0-99")])
    check(r, "gzip", PAGE)                       # 200, whole, as nginx answers
    r = get(srv, "/page.html", None, [("Range", "bytes=0-99")])
    assert r.status == 206 and r.body == PAGE[:100]


def test_keepalive_many_compressed_responses(srv):
    with h.Conn(srv.port) as c:
        for i, coding in enumerate(["gzip", "br", "zstd"] * 3):
            c.send(h.request("GET", "/page.html", headers=[("Accept-Encoding", coding)]))
            r = c.read_response()
            check(r, coding, PAGE)


def test_kept_coders_reused_across_sizes_levels_and_aborts(srv):
    """A worker keeps zlib states and zstd contexts between responses (by
    level and window): interleaved sizes (other windows), levels, codings
    and a response cut by its client must each give an exact body."""
    (srv.tmp / "html" / "mid.html").write_bytes(PAGE[:3000])
    # a client that goes away in the middle of a compressed response
    for coding in ("gzip", "zstd"):
        c = h.Conn(srv.port)
        c.send(h.request("GET", "/page.html", headers=[("Accept-Encoding", coding)]))
        c.read_exact(100)
        c.close()
    with h.Conn(srv.port) as c:
        for _ in range(3):
            for path, original in (("/page.html", PAGE), ("/mid.html", PAGE[:3000]),
                                   ("/l9/page.html", PAGE), ("/types/plain.txt", PLAIN),
                                   ("/l9/mid.html", PAGE[:3000])):
                for coding in ("gzip", "zstd"):
                    if path == "/types/plain.txt" and coding == "zstd":
                        continue
                    c.send(h.request("GET", path, headers=[("Accept-Encoding", coding)]))
                    check(c.read_response(), coding, original)


def test_error_pages_404_compressed(srv):
    big404 = text_body(3000)
    (srv.tmp / "html" / "nope.html").write_bytes(big404)
    r = get(srv, "/missing.html", "gzip")
    assert r.status == 404
    # the core's 404 page is small: below gzip_min_length? it is > 20 bytes
    assert r.header("content-encoding") in ("gzip", None)
    assert b"<h1>404 Not Found</h1>" in decode(r.header("content-encoding"), r.body)


# ---------------------------------------------------------------- HTTP/2

def test_http2_compressed(sws, tmp_path):
    srv = sws(files=FILES, http="    %s\n" % ALL,
              server="        listen 127.0.0.1:@PORT2@ http2;\n", ports=2)
    for coding in ("gzip", "br", "zstd"):
        r = h.curl("http://127.0.0.1:%d/page.html" % srv.ports[1], prior_knowledge=True,
                   headers=["Accept-Encoding: %s" % coding])
        assert r.http_version == 3, r                 # HTTP/2
        assert r.status == 200 and r.header("content-encoding") == coding, r
        assert decode(coding, r.body) == PAGE
    # a body bigger than the windows and the output buffers
    big = text_body(3 << 20)
    (srv.tmp / "html" / "big.html").write_bytes(big)
    r = h.curl("http://127.0.0.1:%d/big.html" % srv.ports[1], prior_knowledge=True,
               headers=["Accept-Encoding: gzip"])
    assert r.status == 200 and gzip.decompress(r.body) == big


# ---------------------------------------------------------------- proxied

def proxy_srv(sws, origin, extra=""):
    o = origin()
    srv = sws(http="    %s\n" % ALL, server="""
        location / { proxy_pass http://%s; %s }
        location /nobuf/ { proxy_pass http://%s/; proxy_buffering off;
                           gzip_types text/event-stream; brotli_types text/event-stream;
                           zstd_types text/event-stream; }
""" % (o.addr, extra, o.addr))
    return srv, o


def test_proxied_bodies(sws, origin):
    srv, o = proxy_srv(sws, origin)
    for coding in ("gzip", "br", "zstd"):
        check(get(srv, "/text/200000", coding), coding, text_body(200000))
        check(get(srv, "/text/200000?chunked=1", coding), coding, text_body(200000))
        check(get(srv, "/text/70000?pause=300", coding), coding, text_body(70000))


def test_gzip_crc_every_length(sws, origin):
    # The gzip trailer (our CRC-32, folded 64 bytes at a time, and the
    # length) for bodies of many lengths, and across the 4 KiB buffers:
    # gzip.decompress checks both.
    srv, o = proxy_srv(sws, origin)
    sizes = list(range(20, 700, 13)) + [4095, 4096, 4097, 65535, 65536, 65537, 131073]
    with h.Conn(srv.port) as c:
        for n in sizes:
            c.send(h.request("GET", "/text/%d" % n, headers=[("Accept-Encoding", "gzip")]))
            r = c.read_response()
            assert r.header("content-encoding") == "gzip", (n, r)
            assert gzip.decompress(r.body) == text_body(n), n


def test_empty_and_tiny_bodies_of_unknown_length(sws, origin):
    # A chunked body of 0, 1 or 2 bytes (no length, so no gzip_min_length):
    # a coder finished with (almost) nothing in it still makes a stream
    # that decodes, with its trailer.
    srv, o = proxy_srv(sws, origin)
    for coding in ("gzip", "br", "zstd"):
        for n in (0, 1, 2):
            check(get(srv, "/text/%d?chunked=1" % n, coding), coding, text_body(n))


def test_proxied_already_encoded_or_no_transform(sws, origin):
    srv, o = proxy_srv(sws, origin)
    r = get(srv, "/text/5000?ce=gzip", "gzip")
    assert r.header("content-encoding") == "gzip" and r.body == text_body(5000)  # as sent
    r = get(srv, "/text/5000?cc=public,%20no-transform", "gzip")
    check(r, None, text_body(5000))
    r = get(srv, "/text/5000?type=image/png", "gzip")
    check(r, None, text_body(5000))


def test_proxied_etag_weakened(sws, origin):
    srv, o = proxy_srv(sws, origin)
    r = get(srv, '/text/5000?etag=%22v7%22', "br")
    check(r, "br", text_body(5000))
    assert r.header("etag") == 'W/"v7"'
    r = get(srv, '/text/5000?etag=W/%22v8%22', "br")
    assert r.header("etag") == 'W/"v8"'


def test_proxied_gzip_proxied_flags(sws, origin):
    srv, o = proxy_srv(sws, origin, "gzip_proxied expired no-cache no_last_modified;")
    via = [("Via", "1.0 p")]
    check(get(srv, "/text/5000?lm=1", "gzip", via), None, text_body(5000))
    check(get(srv, "/text/5000", "gzip", via), "gzip", text_body(5000))        # no LM
    check(get(srv, "/text/5000?lm=1&cc=no-cache", "gzip", via), "gzip", text_body(5000))
    check(get(srv, "/text/5000?lm=1&expires=Thu,%2001%20Jan%201970%2000:00:00%20GMT", "gzip",
              via), "gzip", text_body(5000))
    check(get(srv, "/text/5000?lm=1&cc=private", "gzip", via), None, text_body(5000))


def read_compressed_stream(c, decoder, until, timeout=5.0):
    """Read chunks from raw connection c (past the head), feeding decoder,
    until the decoded text contains until; returns (decoded, seconds)."""
    t0 = time.monotonic()
    out = b""
    while until not in out:
        assert time.monotonic() - t0 < timeout, out
        line = c.read_line()
        n = int(line, 16)
        assert n > 0, "stream ended before %r: %r" % (until, out)
        out += decoder(c.read_exact(n))
        assert c.read_line() == b""
    return out, time.monotonic() - t0


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_paused_stream_is_flushed(sws, origin, coding):
    # Server-sent events, 100 ms apart: each must reach the client (and
    # decode) as it comes, not when the stream ends.
    srv, o = proxy_srv(sws, origin)
    if coding == "gzip":
        d = zlib.decompressobj(16 + 15)
        dec = d.decompress
    elif coding == "br":
        d = brotli.Decompressor()
        dec = d.process
    else:
        dec = zstandard.ZstdDecompressor().decompressobj().decompress
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/nobuf/sse/8", headers=[("Accept-Encoding", coding)]))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        head = []
        while True:
            ln = c.read_line()
            if ln == b"":
                break
            head.append(ln.lower())
        assert b"content-encoding: " + coding.encode() in head, head
        got, t_first = read_compressed_stream(c, dec, b"data: 0\n\n")
        assert t_first < 0.4, t_first               # the stream takes 0.8 s
        got2, t_mid = read_compressed_stream(c, dec, b"data: 3\n\n")
        assert t_mid < 0.6
        got += got2
        rest, _ = read_compressed_stream(c, dec, b"data: 7\n\n")
        assert got + rest == b"".join(b"data: %d\n\n" % i for i in range(8))


def test_flushes_across_tiny_output_buffers(sws, origin):
    # Two 64-byte output buffers: each flush (an event) ends in a buffer
    # nearly full or nearly empty, so the coder's flush block and the
    # bits before it are split across buffers at every offset; each event
    # must still decode when it arrives, and the whole stream at the end.
    o = origin()
    srv = sws(http="    %s\n" % ALL, server="""
        location /nobuf/ { proxy_pass http://%s/; proxy_buffering off;
                           gzip_buffers 2 64; gzip_types text/event-stream; }
""" % o.addr)
    d = zlib.decompressobj(16 + 15)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/nobuf/sse/12", headers=[("Accept-Encoding", "gzip")]))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        while c.read_line() != b"":
            pass
        got, t_first = read_compressed_stream(c, d.decompress, b"data: 0\n\n")
        assert t_first < 0.4, t_first                  # the stream takes 1.2 s
        for i in range(1, 12):
            if b"data: %d\n\n" % i not in got:
                more, _ = read_compressed_stream(c, d.decompress, b"data: %d\n\n" % i)
                got += more
            assert got.endswith(b"\n\n"), (i, got)   # flushed whole events
        while True:                                    # the end: the trailer, then 0
            n = int(c.read_line(), 16)
            if n == 0:
                break
            got += d.decompress(c.read_exact(n))
            assert c.read_line() == b""
    assert d.eof and got == b"".join(b"data: %d\n\n" % i for i in range(12))


def test_coder_kept_after_a_stream_cut_between_flushes(sws, origin):
    # A client leaves a flushed gzip stream in the middle: the worker keeps
    # that coder (igzip's or zlib's) and hands it, reset, to the next
    # responses, which must be exact: a flushed one, then whole bodies.
    srv, o = proxy_srv(sws, origin)
    for _ in range(2):
        c = h.Conn(srv.port)
        c.send(h.request("GET", "/nobuf/sse/8", headers=[("Accept-Encoding", "gzip")]))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        while c.read_line() != b"":
            pass
        read_compressed_stream(c, zlib.decompressobj(16 + 15).decompress, b"data: 1\n\n")
        c.close()
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/nobuf/sse/3", headers=[("Accept-Encoding", "gzip")]))
        r = c.read_response()
        check(r, "gzip", b"".join(b"data: %d\n\n" % i for i in range(3)))
        for n in (100, 70000, 200000):
            c.send(h.request("GET", "/text/%d?chunked=1" % n,
                             headers=[("Accept-Encoding", "gzip")]))
            check(c.read_response(), "gzip", text_body(n))


def test_paused_buffered_upstream_is_flushed(sws, origin):
    # proxy_buffering on: the first half must arrive (decodable) while the
    # origin pauses 1.5 s before the second.
    srv, o = proxy_srv(sws, origin)
    d = zlib.decompressobj(16 + 15)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/text/100000?chunked=1&pause=1500",
                         headers=[("Accept-Encoding", "gzip")]))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        while c.read_line() != b"":
            pass
        half = text_body(100000)[:40000]
        got, t = read_compressed_stream(c, d.decompress, half)
        assert t < 1.2, t
        rest, _ = read_compressed_stream(c, d.decompress, text_body(100000)[-100:])
        assert got + rest == text_body(100000)


def worker_status(srv, field):
    # the port accepts before the worker is forked: wait for it
    assert h.wait_for(lambda: len(srv.children()) == 1, 5), srv.children()
    kids = srv.children()
    for line in open("/proc/%d/status" % kids[0]):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError("no " + field)


def read_gzip_stream(c):
    """The rest of a close-delimited gzip response on raw connection c:
    decoded as it comes; returns (head, decoded length, sha256 of it)."""
    d = zlib.decompressobj(16 + 15)
    got = hashlib.sha256()
    n = 0
    data = c.buf
    c.buf = b""
    while b"\r\n\r\n" not in data:
        more = c.sock.recv(65536)
        assert more, data
        data += more
    i = data.index(b"\r\n\r\n")
    head, data = data[:i], data[i + 4:]
    while True:
        if data:
            out = d.decompress(data)
            got.update(out)
            n += len(out)
        data = c.sock.recv(1 << 20)
        if not data:
            break
    assert d.eof, "the gzip stream is not complete"
    return head, n, got.hexdigest()


def test_slow_client_proxied_memory_bounded(sws, origin):
    # A 40 MB proxied body to a client that does not read: the worker must
    # stop taking from the origin (the compressor's buffers all wait),
    # not keep compressing into memory.
    from proxyorigin import pattern
    srv, o = proxy_srv(sws, origin, "gzip_types *; gzip_http_version 1.0;")
    before = worker_status(srv, "VmRSS")
    with h.Conn(srv.port, rcvbuf=16384, timeout=30) as c:
        c.send(h.request("GET", "/big/40000000", headers=[("Accept-Encoding", "gzip")],
                         version="HTTP/1.0"))
        time.sleep(1.5)
        during = worker_status(srv, "VmRSS")
        assert during - before < 16 * 1024, (before, during)
        # then it all arrives, byte-exact
        head, n, digest = read_gzip_stream(c)
    assert head.startswith(b"HTTP/1.1 200") and b"Content-Encoding: gzip" in head, head
    assert n == 40000000 and digest == hashlib.sha256(pattern(40000000)).hexdigest()


def test_100mb_flat_memory(sws, tmp_path):
    # 100 MB of text compressed on the fly from a file: read in chunks,
    # output in gzip_buffers: the worker's peak RSS grows by the coder's
    # state and buffers, not by the body.
    srv = sws(http="    gzip on; gzip_types text/plain; gzip_http_version 1.0;\n")
    line = b"%08d the quick brown fox jumps over the lazy dog 0123456789abcdef\n"
    block = b"".join(line % i for i in range(16384))       # ~1.2 MB, varied
    size = 0
    want = hashlib.sha256()
    with open(srv.tmp / "html" / "big.txt", "wb") as f:
        while size < 100 * 1000 * 1000:
            f.write(block)
            want.update(block)
            size += len(block)
    base = worker_status(srv, "VmHWM")
    with h.Conn(srv.port, timeout=60) as c:
        c.send(h.request("GET", "/big.txt", headers=[("Accept-Encoding", "gzip")],
                         version="HTTP/1.0"))
        head, n, digest = read_gzip_stream(c)
    assert head.startswith(b"HTTP/1.1 200") and b"Content-Encoding: gzip" in head, head
    assert n == size and digest == want.hexdigest()
    peak = worker_status(srv, "VmHWM")
    assert peak - base < 12 * 1024, (base, peak)          # KiB


# ---------------------------------------------------------------- precompressed

def pre_files():
    return {
        "html/p.html": PAGE,
        "html/p.html.gz": gzip.compress(PAGE, 9),
        "html/p.html.br": brotli.compress(PAGE),
        "html/p.html.zst": zstandard.ZstdCompressor(level=19).compress(PAGE),
        "html/only.html.gz": gzip.compress(SMALL * 10),
        "html/stale.html": PAGE,
        "html/stale.html.gz": gzip.compress(b"old contents"),
    }


@pytest.fixture(scope="module")
def pre(sws_module):
    s = sws_module(files=pre_files(), http="    open_file_cache max=100;\n", server="""
        location /s/ { alias @TMP@/html/; gzip_static on; brotli_static on; zstd_static on;
                       gzip_vary on; }
        location /g/ { alias @TMP@/html/; gzip_static on; }
        location /a/ { alias @TMP@/html/; gzip_static always; }
        location /fly/ { alias @TMP@/html/; gzip_static on; gzip on; }
""")
    old = time.time() - 3600
    os.utime(s.tmp / "html" / "stale.html.gz", (old, old))
    return s


@pytest.mark.parametrize("coding,suffix", [("gzip", ".gz"), ("br", ".br"), ("zstd", ".zst")])
def test_static_siblings(pre, coding, suffix):
    sibling = (pre.tmp / "html" / ("p.html" + suffix)).read_bytes()
    r = get(pre, "/s/p.html", coding)
    assert r.status == 200 and r.header("content-encoding") == coding, r
    assert r.body == sibling                               # the file itself
    assert r.header("content-length") == str(len(sibling))
    assert r.header("content-type") == "text/html"
    assert r.header("vary") == ("Accept-Encoding" if coding == "gzip" else None)
    assert decode(coding, r.body) == PAGE
    # again, from the open file cache
    r = get(pre, "/s/p.html", coding)
    assert r.body == sibling


def test_static_negotiation(pre):
    assert get(pre, "/s/p.html", "gzip, br, zstd").header("content-encoding") == "zstd"
    assert get(pre, "/s/p.html", "gzip, br;q=0.5").header("content-encoding") == "gzip"
    check(get(pre, "/s/p.html", "identity"), None, PAGE)
    check(get(pre, "/s/p.html"), None, PAGE)
    assert get(pre, "/g/p.html", "br, gzip").header("content-encoding") == "gzip"
    check(get(pre, "/g/p.html", "br"), None, PAGE)      # only gzip_static there


def test_static_stale_sibling_not_used(pre):
    check(get(pre, "/g/stale.html", "gzip"), None, PAGE)
    assert "is older than the file" in pre.error_log()
    # with gzip on as well, the original is compressed on the fly instead
    check(get(pre, "/fly/stale.html", "gzip"), "gzip", PAGE)


def test_static_sibling_without_original(pre):
    r = get(pre, "/g/only.html", "gzip")
    assert r.status == 200 and gzip.decompress(r.body) == SMALL * 10
    r = get(pre, "/g/only.html", "br")
    assert r.status == 404


def test_static_always(pre):
    r = get(pre, "/a/p.html")                          # no Accept-Encoding at all
    assert r.header("content-encoding") == "gzip" and gzip.decompress(r.body) == PAGE


def test_static_range_and_head(pre):
    sibling = (pre.tmp / "html" / "p.html.gz").read_bytes()
    r = get(pre, "/g/p.html", "gzip", [("Range", "bytes=10-19")])
    assert r.status == 206 and r.body == sibling[10:20]
    r = get(pre, "/g/p.html", "gzip", method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("content-length") == str(len(sibling))


def test_static_over_http2(sws):
    srv = sws(files=pre_files(), ports=2, server="""
        listen 127.0.0.1:@PORT2@ http2;
        location / { gzip_static on; brotli_static on; }
""")
    r = h.curl("http://127.0.0.1:%d/p.html" % srv.ports[1], prior_knowledge=True,
               headers=["Accept-Encoding: br"])
    assert r.status == 200 and r.header("content-encoding") == "br"
    assert brotli.decompress(r.body) == PAGE


# ---------------------------------------------------------------- configuration

@pytest.mark.parametrize("directive,message", [
    ("gzip_comp_level 10;", '"gzip_comp_level" must be from 1 to 9, not 10'),
    ("brotli_comp_level 12;", '"brotli_comp_level" must be from 0 to 11, not 12'),
    ("zstd_comp_level 0;", '"zstd_comp_level" must be from 1 to 19, not 0'),
    ("gzip_proxied sometimes;", 'invalid value "sometimes" in "gzip_proxied" directive'),
    ("gzip_proxied off any;", '"gzip_proxied" directive has "off" with other values'),
    ("gzip_buffers 0 4k;", 'invalid value "0 4k" in "gzip_buffers" directive'),
    ("gzip_buffers 4 huge;", 'invalid value "4 huge" in "gzip_buffers" directive'),
    ("gzip_http_version 2.0;", 'invalid value "2.0" in "gzip_http_version" directive'),
    ("gzip_static maybe;", 'invalid value "maybe" in "gzip_static" directive'),
    ("compress_prefer lzma;", 'unknown coding "lzma" in "compress_prefer"'),
    ("compress_prefer gzip gzip;", 'repeated coding "gzip" in "compress_prefer"'),
    ("gzip on; gzip off;", '"gzip" directive is duplicate'),
])
def test_config_errors(tmp_path, directive, message):
    h.assert_config_errors(tmp_path, [(directive, message)])
