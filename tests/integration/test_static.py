"""Static files: types, validators, conditionals, ranges, directories,
try_files/alias/index, path safety, sendfile off and slow readers."""
import calendar
import hashlib
import os
import re
import time

import pytest

import swsharness as h

RANGE = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"          # 36 bytes
MTIME = calendar.timegm((2020, 1, 2, 3, 4, 5))
MTIME_HTTP = "Thu, 02 Jan 2020 03:04:05 GMT"
BIG = os.urandom(1 << 20)

FILES = {
    "html/hello.txt": b"Hello, static world!\n",
    "html/page.html": b"<html><body>page</body></html>\n",
    "html/blob.zzqx": b"unknown type\n",
    "html/image.png": b"\x89PNG\r\n\x1a\nnot really",
    "html/range.txt": RANGE,
    "html/index.html": b"root index\n",
    "html/sub/index.html": b"sub index\n",
    "html/noindex/file.txt": b"x\n",
    "html/multi/second.html": b"second\n",
    "html/multi2/first.html": b"first\n",
    "html/multi2/second.html": b"second\n",
    "html/fallback.html": b"fallback page\n",
    "html/tf/real.txt": b"real file\n",
    "html/tf404/real.txt": b"real 404 file\n",
    "html/big.bin": BIG,
    "other/aliased.txt": b"from alias dir\n",
    "html/typed/x.zzqx": b"typed\n",
}

LOCATIONS = """
        location /a/ { alias @TMP@/other/; }
        location /tf/ { try_files $uri /fallback.html; }
        location /tf404/ { try_files $uri =404; }
        location /multi/ { index first.html second.html; }
        location /multi2/ { index first.html second.html; }
        location /typed/ { default_type text/x-sws-default; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(files=FILES, server=LOCATIONS)
    os.utime(s.tmp / "html" / "range.txt", (MTIME, MTIME))
    os.utime(s.tmp / "html" / "hello.txt", (MTIME, MTIME))
    return s


def get(srv, path, **kw):
    return h.curl(srv.url(path), **kw)


# ---------------------------------------------------------------- basics

def test_get_file_body_length_type(srv):
    r = get(srv, "/hello.txt")
    assert r.status == 200, r
    assert r.body == FILES["html/hello.txt"]
    assert r.header("Content-Length") == str(len(FILES["html/hello.txt"]))
    assert (r.header("Content-Type") or "").split(";")[0] == "text/plain", r


@pytest.mark.parametrize("path,ctype", [
    ("/page.html", "text/html"),
    ("/hello.txt", "text/plain"),
    ("/image.png", "image/png"),
    ("/blob.zzqx", "application/octet-stream"),     # unknown -> default_type
    ("/typed/x.zzqx", "text/x-sws-default"),        # default_type in a location
])
def test_content_type_from_mime_types(srv, path, ctype):
    r = get(srv, path)
    assert r.status == 200, r
    assert (r.header("Content-Type") or "").split(";")[0].strip() == ctype, r


def test_last_modified_and_etag(srv):
    r = get(srv, "/range.txt")
    assert r.status == 200
    assert r.header("Last-Modified") == MTIME_HTTP, r
    etag = r.header("ETag")
    assert etag and re.match(r'^(W/)?"[^"]+"$', etag), r
    # the same resource gives the same ETag
    assert get(srv, "/range.txt").header("ETag") == etag
    # another file has another ETag
    assert get(srv, "/hello.txt").header("ETag") != etag


def test_query_string_ignored_for_file(srv):
    r = get(srv, "/hello.txt?x=1&y=2")
    assert r.status == 200 and r.body == FILES["html/hello.txt"], r


def test_encoded_path(srv):
    r = get(srv, "/%68ello.txt")
    assert r.status == 200 and r.body == FILES["html/hello.txt"], r


def test_missing_file_404(srv):
    r = get(srv, "/no-such-file.txt")
    assert r.status == 404, r
    assert r.header("Content-Length") == str(len(r.body))


def test_post_to_file_405_with_allow(srv):
    r = get(srv, "/hello.txt", method="POST", body=b"x=1")
    assert r.status == 405, r
    allow = (r.header("Allow") or "").upper()
    assert "GET" in allow and "HEAD" in allow, r


# ---------------------------------------------------------------- conditionals

def etag_of(srv, path="/range.txt"):
    return get(srv, path).header("ETag")


def test_if_none_match_etag_304(srv):
    etag = etag_of(srv)
    r = get(srv, "/range.txt", headers=["If-None-Match: %s" % etag])
    assert r.status == 304, r
    assert r.body == b""
    assert r.header("ETag") == etag, r


def test_if_none_match_in_list_304(srv):
    etag = etag_of(srv)
    r = get(srv, "/range.txt", headers=['If-None-Match: "nope", %s' % etag])
    assert r.status == 304, r


def test_if_none_match_star_304(srv):
    r = get(srv, "/range.txt", headers=["If-None-Match: *"])
    assert r.status == 304, r
    assert r.body == b""


def test_if_none_match_other_200(srv):
    r = get(srv, "/range.txt", headers=['If-None-Match: "something-else"'])
    assert r.status == 200 and r.body == RANGE, r


def test_304_raw_has_no_body(srv):
    """The 304 carries no body: the next pipelined response follows at once."""
    etag = etag_of(srv)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/range.txt", headers=[("If-None-Match", etag)])
               + h.request("GET", "/respond"))
        r1 = c.read_response()
        assert r1.status == 304, r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"Hello, world!", r2


def test_if_modified_since_equal_304(srv):
    r = get(srv, "/range.txt", headers=["If-Modified-Since: %s" % MTIME_HTTP])
    assert r.status == 304, r
    assert r.body == b""


def test_if_modified_since_older_200(srv):
    r = get(srv, "/range.txt", headers=["If-Modified-Since: Wed, 01 Jan 2020 00:00:00 GMT"])
    assert r.status == 200 and r.body == RANGE, r


def test_if_modified_since_invalid_200(srv):
    r = get(srv, "/range.txt", headers=["If-Modified-Since: not a date"])
    assert r.status == 200 and r.body == RANGE, r


def test_if_none_match_wins_over_if_modified_since(srv):
    """RFC 9110 13.2.2: If-None-Match is evaluated, If-Modified-Since ignored."""
    r = get(srv, "/range.txt", headers=['If-None-Match: "other"',
                                       "If-Modified-Since: %s" % MTIME_HTTP])
    assert r.status == 200, r


def test_if_match_mismatch_412(srv):
    r = get(srv, "/range.txt", headers=['If-Match: "does-not-match"'])
    assert r.status == 412, r


def test_if_match_match_200(srv):
    etag = etag_of(srv)
    r = get(srv, "/range.txt", headers=["If-Match: %s" % etag])
    assert r.status == 200 and r.body == RANGE, r


def test_if_unmodified_since_older_412(srv):
    r = get(srv, "/range.txt", headers=["If-Unmodified-Since: Wed, 01 Jan 2020 00:00:00 GMT"])
    assert r.status == 412, r


# ---------------------------------------------------------------- ranges

def test_range_first_bytes(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=0-4"])
    assert r.status == 206, r
    assert r.header("Content-Range") == "bytes 0-4/36", r
    assert r.header("Content-Length") == "5"
    assert r.body == b"01234"


def test_range_suffix(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=-3"])
    assert r.status == 206, r
    assert r.header("Content-Range") == "bytes 33-35/36", r
    assert r.body == b"XYZ"


def test_range_open_end(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=5-"])
    assert r.status == 206, r
    assert r.header("Content-Range") == "bytes 5-35/36", r
    assert r.body == RANGE[5:]


def test_range_end_past_size_is_clamped(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=30-100"])
    assert r.status == 206, r
    assert r.header("Content-Range") == "bytes 30-35/36", r
    assert r.body == RANGE[30:]


def test_range_unsatisfiable_416(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=36-"])
    assert r.status == 416, r
    assert r.header("Content-Range") == "bytes */36", r
    assert r.header("Content-Length") == str(len(r.body))


@pytest.mark.parametrize("value", ["items=0-4", "bytes 0-4", "bytes="])
def test_range_not_bytes_ignored(srv, value):
    r = get(srv, "/range.txt", headers=["Range: %s" % value])
    assert r.status == 200, r
    assert r.body == RANGE


@pytest.mark.parametrize("value", ["bytes=abc", "bytes=4-2", "bytes=0-1,x"])
def test_range_malformed_416(srv, value):
    """After "bytes=", a list that does not parse and a range whose first
    byte is after its last are a 416, as nginx answers (RFC 9110 14.2)."""
    r = get(srv, "/range.txt", headers=["Range: %s" % value])
    assert r.status == 416, r
    assert r.header("Content-Range") == "bytes */36", r


def parse_multipart(ctype, body):
    m = re.search(r'boundary="?([^";]+)"?', ctype)
    assert m, "no boundary in %r" % ctype
    boundary = m.group(1).encode()
    parts = []
    chunks = body.split(b"--" + boundary)
    assert chunks[-1].strip() in (b"--", b"--\r\n".strip()), \
        "missing closing delimiter: %r" % chunks[-1][:100]
    for chunk in chunks[1:-1]:
        assert chunk.startswith(b"\r\n"), chunk[:50]
        head, _, data = chunk[2:].partition(b"\r\n\r\n")
        assert data.endswith(b"\r\n"), data[-20:]
        data = data[:-2]
        hdrs = {}
        for ln in head.split(b"\r\n"):
            k, _, v = ln.decode().partition(":")
            hdrs[k.strip().lower()] = v.strip()
        parts.append((hdrs, data))
    return parts


def test_range_multiple_multipart(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=0-1,5-7,-2"])
    assert r.status == 206, r
    ctype = r.header("Content-Type") or ""
    assert ctype.startswith("multipart/byteranges"), r
    assert r.header("Content-Length") in (None, str(len(r.body))), r
    parts = parse_multipart(ctype, r.body)
    assert [p[1] for p in parts] == [b"01", b"567", b"YZ"], parts
    assert [p[0].get("content-range") for p in parts] == \
        ["bytes 0-1/36", "bytes 5-7/36", "bytes 34-35/36"], parts
    for hdrs, _ in parts:
        assert hdrs.get("content-type", "").startswith("text/plain"), hdrs


def test_if_range_matching_etag_206(srv):
    etag = etag_of(srv)
    r = get(srv, "/range.txt", headers=["Range: bytes=0-4", "If-Range: %s" % etag])
    assert r.status == 206 and r.body == b"01234", r


def test_if_range_other_etag_200(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=0-4", 'If-Range: "other"'])
    assert r.status == 200 and r.body == RANGE, r


def test_if_range_matching_date_206(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=0-4", "If-Range: %s" % MTIME_HTTP])
    assert r.status == 206 and r.body == b"01234", r


def test_accept_ranges_advertised(srv):
    r = get(srv, "/range.txt")
    assert r.header("Accept-Ranges") == "bytes", r


# ---------------------------------------------------------------- HEAD

def test_head_same_headers_no_body(srv):
    g = get(srv, "/page.html")
    r = get(srv, "/page.html", method="HEAD")
    assert r.status == 200 and r.body == b""
    for name in ("Content-Length", "Content-Type", "Last-Modified", "ETag"):
        assert r.header(name) == g.header(name), (name, r, g)


def test_head_raw_next_response_follows(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("HEAD", "/page.html") + h.request("GET", "/respond"))
        r1 = c.read_response("HEAD")
        assert r1.status == 200, r1
        assert r1.header("Content-Length") == str(len(FILES["html/page.html"])), r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"Hello, world!", \
            "bytes after the HEAD response: %r" % (r2,)


# ---------------------------------------------------------------- directories

def test_directory_without_slash_301(srv):
    r = get(srv, "/sub")
    assert r.status == 301, r
    assert (r.header("Location") or "").endswith("/sub/"), r


def test_directory_with_slash_index(srv):
    r = get(srv, "/sub/")
    assert r.status == 200 and r.body == b"sub index\n", r


def test_root_index(srv):
    r = get(srv, "/")
    assert r.status == 200 and r.body == b"root index\n", r


def test_directory_without_index_403(srv):
    r = get(srv, "/noindex/")
    assert r.status == 403, r


def test_index_several_names_second_exists(srv):
    r = get(srv, "/multi/")
    assert r.status == 200 and r.body == b"second\n", r


def test_index_several_names_first_wins(srv):
    r = get(srv, "/multi2/")
    assert r.status == 200 and r.body == b"first\n", r


# ---------------------------------------------------------------- alias / try_files

def test_alias(srv):
    r = get(srv, "/a/aliased.txt")
    assert r.status == 200 and r.body == b"from alias dir\n", r


def test_alias_missing_404(srv):
    assert get(srv, "/a/nothing.txt").status == 404


def test_try_files_existing(srv):
    r = get(srv, "/tf/real.txt")
    assert r.status == 200 and r.body == b"real file\n", r


def test_try_files_fallback(srv):
    r = get(srv, "/tf/nothing-here")
    assert r.status == 200 and r.body == b"fallback page\n", r


def test_try_files_equals_404(srv):
    assert get(srv, "/tf404/nothing").status == 404
    r = get(srv, "/tf404/real.txt")
    assert r.status == 200 and r.body == b"real 404 file\n", r


def test_try_files_any_variable(sws):
    """try_files takes any variable, as nginx (Debian's fastcgi-php.conf
    says try_files $fastcgi_script_name =404): the value is looked up under
    the root; the last argument is the fallback URI."""
    srv = sws(files={"html/pages/a.html": "page a\n", "html/other.html": "other\n",
                     "outside.html": "outside the root\n"},
              server="""
        location /v/ { try_files /pages/$arg_p.html $http_x_file /other.html?from=$arg_p; }
        location /miss/ { try_files $http_x_file =404; }
        location = /other.html { }
        """)
    assert get(srv, "/v/?p=a").body == b"page a\n"
    r = h.exchange(srv.port, h.request("GET", "/v/?p=b", headers=["X-File: /pages/a.html"]))
    assert r.status == 200 and r.body == b"page a\n", r
    assert get(srv, "/v/?p=zz").body == b"other\n"
    assert get(srv, "/miss/x").status == 404                   # empty value: no file
    r = h.exchange(srv.port, h.request("GET", "/miss/x", headers=["X-File: /other.html"]))
    assert r.status == 200 and r.body == b"other\n", r
    # no way out of the root through a variable
    assert (srv.tmp / "html" / ".." / "outside.html").is_file()
    for value in ("/../outside.html", "/pages/../../outside.html", ".."):
        r = h.exchange(srv.port, h.request("GET", "/miss/x", headers=["X-File: " + value]))
        assert r.status == 404, (value, r)


def test_try_files_unknown_variable_is_refused(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { listen 127.0.0.1:@PORT@; location / { try_files $nope =404; } }",
         "unknown variable \"$nope\""),
    ])


# ---------------------------------------------------------------- path safety

@pytest.fixture(scope="module")
def trav(sws_module):
    files = {
        "www/html/index.html": b"inside\n",
        "www/etc/passwd": b"SECRET-ONE-LEVEL\n",
        "etc/passwd": b"SECRET-TWO-LEVELS\n",
    }
    return sws_module(files=files, server="""
        location / { root @TMP@/www/html; }
""")


@pytest.mark.parametrize("target", [
    "/../etc/passwd",
    "/../../etc/passwd",
    "/%2e%2e/etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/a/..%2f..%2f../etc/passwd",
    "/..%2f..%2fetc/passwd",
    "/x/../../etc/passwd",
    "/%2E%2E/%2E%2E/etc/passwd",
])
def test_path_traversal_refused(trav, target):
    assert h.curl(trav.url("/")).body == b"inside\n"
    # raw socket: libcurl would normalise the dots itself
    r = h.exchange(trav.port, h.request("GET", target))
    assert r is not None, "connection closed without a response"
    assert r.status in (400, 404), r
    assert b"SECRET" not in r.body and b"root:" not in r.body, r


# ---------------------------------------------------------------- sendfile off

@pytest.fixture(scope="module")
def nosendfile(sws_module):
    return sws_module(files={"html/big.bin": BIG, "html/hello.txt": b"small body\n"},
                      http="    sendfile off;\n")


def test_sendfile_off_small(nosendfile):
    r = h.curl(nosendfile.url("/hello.txt"))
    assert r.status == 200 and r.body == b"small body\n", r


def test_sendfile_off_1mib(nosendfile):
    r = h.curl(nosendfile.url("/big.bin"))
    assert r.status == 200
    assert r.header("Content-Length") == str(len(BIG))
    assert len(r.body) == len(BIG) and r.body == BIG


def test_sendfile_off_range(nosendfile):
    r = h.curl(nosendfile.url("/big.bin"), headers=["Range: bytes=100000-100099"])
    assert r.status == 206 and r.body == BIG[100000:100100], r


def test_sendfile_on_1mib(srv):
    r = get(srv, "/big.bin")
    assert r.status == 200 and r.body == BIG


# ---------------------------------------------------------------- slow reader

def slow_download(port, path, expect_len, chunk=16384, pause=0.004, budget=20.0):
    with h.Conn(port, rcvbuf=32768, timeout=10) as c:
        c.send(h.request("GET", path))
        start = time.monotonic()
        while b"\r\n\r\n" not in c.buf:
            assert c._fill(), "closed before the head"
        head, _, rest = c.buf.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        got = hashlib.sha256(rest)
        n = len(rest)
        c.buf = b""
        while n < expect_len:
            assert time.monotonic() - start < budget, "download too slow: %d bytes" % n
            d = c.sock.recv(chunk)
            assert d, "connection closed after %d of %d bytes" % (n, expect_len)
            got.update(d)
            n += len(d)
            time.sleep(pause)
        return n, got.hexdigest()


@pytest.mark.parametrize("which", ["sendfile_on", "sendfile_off"])
def test_large_file_slow_reader(sws, tmp_path, which):
    data = os.urandom(4 << 20)
    s = sws(files={"html/large.bin": data},
            http="" if which == "sendfile_on" else "    sendfile off;\n")
    n, digest = slow_download(s.port, "/large.bin", len(data))
    assert n == len(data)
    assert digest == hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- more paths

@pytest.fixture(scope="module")
def misc(sws_module):
    return sws_module(files={
        "html/with space.txt": b"spaced\n",
        "html/empty.txt": b"",
        "html/UPPER.HTML": b"<p>upper</p>\n",
        "html/hello.txt": b"hello\n",
    })


def test_encoded_space_in_name(misc):
    r = h.curl(misc.url("/with%20space.txt"))
    assert r.status == 200 and r.body == b"spaced\n", r


def test_empty_file(misc):
    r = h.exchange(misc.port, h.request("GET", "/empty.txt"))
    assert r.status == 200 and r.body == b"", r
    assert r.header("Content-Length") == "0", r


def test_extension_case_insensitive_type(misc):
    r = h.curl(misc.url("/UPPER.HTML"))
    assert r.status == 200
    assert (r.header("Content-Type") or "").startswith("text/html"), r


def test_file_with_trailing_slash_404(misc):
    r = h.curl(misc.url("/hello.txt/"))
    assert r.status == 404, r


def test_encoded_nul_400(misc):
    r = h.exchange(misc.port, h.request("GET", "/hello.txt%00.html"))
    assert r is not None and r.status in (400, 404), r


def test_bad_percent_escape_400(misc):
    r = h.exchange(misc.port, h.request("GET", "/hello%zz.txt"))
    assert r is not None and r.status == 400, r


def test_head_404_has_no_body(misc):
    with h.Conn(misc.port) as c:
        c.send(h.request("HEAD", "/missing") + h.request("GET", "/hello.txt"))
        r1 = c.read_response("HEAD")
        assert r1.status == 404, r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 200 and r2.body == b"hello\n", r2


def test_get_with_body_keepalive(misc):
    with h.Conn(misc.port) as c:
        c.send(h.request("GET", "/hello.txt", headers=[("Content-Length", "4")], body=b"abcd")
               + h.request("GET", "/hello.txt"))
        for _ in range(2):
            r = c.read_response()
            assert r is not None and r.status == 200 and r.body == b"hello\n", r


def test_modified_file_served_fresh(sws):
    s = sws(files={"html/changing.txt": b"version one\n"})
    r1 = h.curl(s.url("/changing.txt"))
    assert r1.body == b"version one\n"
    p = s.tmp / "html" / "changing.txt"
    p.write_bytes(b"version two, longer\n")
    os.utime(p, (time.time() + 5, time.time() + 5))
    r2 = h.wait_for(lambda: (lambda r: r if r.body == b"version two, longer\n" else None)(
        h.curl(s.url("/changing.txt"))), 3)
    assert r2, "changed file not served within 3 s"
    assert r2.header("Content-Length") == "20", r2
    assert r2.header("ETag") != r1.header("ETag"), (r1, r2)
    p.unlink()
    assert h.wait_for(lambda: h.curl(s.url("/changing.txt")).status == 404, 3), \
        "deleted file still served after 3 s"


def test_client_abort_mid_download_server_healthy(sws):
    s = sws(files={"html/big.bin": os.urandom(8 << 20)})
    for _ in range(3):
        c = h.Conn(s.port, rcvbuf=16384)
        c.send(h.request("GET", "/big.bin"))
        c._fill()
        c.close()
    r = h.curl(s.url("/respond"))
    assert r.status == 200 and r.body == b"Hello, world!", r
    assert s.alive()


def test_log_not_found(sws):
    # a missing file is an error-log line unless log_not_found is off (404 both ways)
    s = sws(server="""
        location /quiet/ { log_not_found off; }
        location /loud/ { }
    """)
    assert h.curl(s.url("/quiet/nothere-q.txt")).status == 404
    assert h.curl(s.url("/loud/nothere-l.txt")).status == 404
    assert h.wait_file_contains(s.error_log_path, "nothere-l.txt", 5), s.error_log()
    assert "nothere-q.txt" not in s.error_log()


def test_max_ranges(sws):
    # more ranges than max_ranges: the whole file, as without Range; 0: no
    # ranges at all, and no Accept-Ranges (nginx's rule)
    s = sws(files={"html/one/r.txt": RANGE, "html/zero/r.txt": RANGE}, server="""
        location /one/ { max_ranges 1; }
        location /zero/ { max_ranges 0; }
    """)
    r = h.curl(s.url("/one/r.txt"), headers=["Range: bytes=0-1,4-5"])
    assert r.status == 200 and r.body == RANGE and r.header("Accept-Ranges") == "bytes", r
    r = h.curl(s.url("/one/r.txt"), headers=["Range: bytes=2-4"])
    assert r.status == 206 and r.body == RANGE[2:5], r
    r = h.curl(s.url("/zero/r.txt"), headers=["Range: bytes=2-4"])
    assert r.status == 200 and r.body == RANGE and r.header("Accept-Ranges") is None, r


def test_sendfile_max_chunk(sws):
    # at most 8 KiB per send call: the 1 MiB file still arrives whole
    s = sws(files={"html/chunk/big.bin": BIG}, server="""
        location /chunk/ { sendfile_max_chunk 8k; }
    """)
    for _ in range(2):
        r = h.curl(s.url("/chunk/big.bin"))
        assert r.status == 200 and r.body == BIG, r
