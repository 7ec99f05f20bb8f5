"""sub_filter, side by side with nginx 1.22 on the same configuration: static
files and proxied responses (a body split at every offset of the strings to
replace, and byte by byte), several strings with common prefixes, once,
types, variables, Last-Modified and ETag, HEAD, Range and conditional
requests, an encoded upstream response, gzip after the replacement, HTTP/2;
and the configuration's errors."""
import email.utils
import gzip
import os
import socket
import time
import zlib

import pytest

import swsharness as h
from bodyorigin import Origin, SLOW as SLOW_PAUSE
from test_nginx_sites import NGINX, start_server, server_token

PAGE = b"<p>abc ABC abc xyz</p>\n<a href=\"http://origin.test/a\">Abc</a> aab ab abc\n"

MTIME = 1672628645                      # the files' mtime
IMS = email.utils.formatdate(MTIME, usegmt=True)

FILES = {"page.html": PAGE, "style.css": b"a { x: abc; }\n", "note.txt": b"abc\n",
         "empty.html": b""}

LOCATIONS = {
    "once": "sub_filter abc X; sub_filter xyz Y;",
    "many": "sub_filter abc X; sub_filter xyz Y; sub_filter_once off;",
    "ov1": "sub_filter ab 1; sub_filter abc 2; sub_filter_once off;",
    "ov2": "sub_filter abc 2; sub_filter ab 1; sub_filter_once off;",
    "ov3": "sub_filter b 1; sub_filter abc 2; sub_filter_once off;",
    "grow": "sub_filter a '[a long replacement, longer than the string]'; "
            "sub_filter_once off;",
    "vars": "sub_filter $arg_p [$arg_r$uri]; sub_filter_once off;",
    "types": "sub_filter abc X; sub_filter_types text/css;",
    "star": "sub_filter abc X; sub_filter_types *;",
    "lm": "sub_filter abc X; sub_filter_last_modified on;",
    "inherit": "",
    "own": "sub_filter xyz Z;",
    "ret": 'sub_filter_types *; sub_filter abc X; return 200 "abc ABC\\n";',
    "rettype": 'sub_filter abc X; return 200 "abc ABC\\n";',
}


def site(port, root, extra=""):
    locs = "\n".join("        location /%s/ { %s }" % (k, v) for k, v in LOCATIONS.items())
    return """
    server {
        listen 127.0.0.1:%d;
        root %s;
        sub_filter "origin.test" "example.org";
        sub_filter_once off;
%s
        location = /missing.html { sub_filter "Not Found" "is gone"; }
%s
    }
""" % (port, root, locs, extra)


@pytest.fixture
def servers(tmp_path):
    """start(extra) -> (nginx port, scalwsd port) on the same site; the
    origin of the proxied locations is servers.origin."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []
    origin = Origin()
    root = tmp_path / "root"
    for loc in LOCATIONS:
        for name, data in FILES.items():
            (root / loc).mkdir(parents=True, exist_ok=True)
            (root / loc / name).write_bytes(data)
            os.utime(root / loc / name, (MTIME, MTIME))
    h.make_traversable(tmp_path)

    def start(extra=""):
        ports = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            running.append(start_server(who, d, port,
                                        site(port, root, extra.replace("@ORIGIN@", origin.addr))))
            ports.append(port)
        return ports

    start.origin = origin
    yield start
    for r in running:
        r.stop()
    origin.stop()


# the fields a filter may change
FIELDS = ("content-type", "content-length", "last-modified", "etag", "content-encoding",
          "vary", "content-range", "accept-ranges", "transfer-encoding")


def get(port, path, headers=(), method="GET"):
    r = h.exchange(port, h.request(method, path, headers=headers), method=method)
    assert r is not None, path
    return r


def same(ports, path, headers=(), method="GET"):
    """Both answer alike: status, the fields above, the body's bytes."""
    rn, rs = (get(p, path, headers, method) for p in ports)
    assert rs.status == rn.status, (path, rn, rs)
    for f in FIELDS:
        assert rs.header(f) == rn.header(f), (path, headers, f, rn.headers, rs.headers)
    assert server_token(rs.body) == server_token(rn.body), (path, rn.body, rs.body)
    return rs


def test_static_files_as_nginx(servers):
    ports = servers()
    for loc in LOCATIONS:
        for name in FILES:
            same(ports, "/%s/%s" % (loc, name))
    r = same(ports, "/many/page.html")
    assert r.body == PAGE.replace(b"abc", b"X").replace(b"ABC", b"X").replace(
        b"Abc", b"X").replace(b"xyz", b"Y"), r.body
    assert r.header("content-length") is None and r.header("last-modified") is None
    # several strings at one place: the first configured wins
    assert b"a1 1 1c" in same(ports, "/ov1/page.html").body
    assert b"a1 1 2" in same(ports, "/ov2/page.html").body
    # variables in both strings; an empty string to look for is left out
    same(ports, "/vars/page.html?p=AbC&r=q")
    same(ports, "/vars/page.html?p=&r=q")
    same(ports, "/vars/page.html?p=a&r=")
    # Last-Modified kept, the ETag made weak
    r = same(ports, "/lm/page.html")
    assert r.header("last-modified") and r.header("etag").startswith('W/"'), r.headers
    # the server's strings where a location has none; its own replace them
    assert b"example.org" in same(ports, "/inherit/page.html").body
    r = same(ports, "/own/page.html")
    assert b"origin.test" in r.body and b"abc Z" in r.body
    # a fixed response (return) through the filter where its type is taken
    assert same(ports, "/ret/page.html").body == b"X X\n"     # (the server says once off)
    assert same(ports, "/rettype/page.html").body == b"X X\n"   # typed by .html
    assert same(ports, "/rettype/page.bin").body == b"abc ABC\n"
    # an error page is text/html too
    r = same(ports, "/missing.html")
    assert r.status == 404 and b"is gone" in r.body


def test_head_range_and_conditional_requests(servers):
    ports = servers()
    same(ports, "/many/page.html", method="HEAD")
    # a Range gets the whole replaced body (its length is not known)
    same(ports, "/many/page.html", ["Range: bytes=0-3"])
    same(ports, "/lm/page.html", ["Range: bytes=0-3"])
    # conditional requests are decided on the file's validators, before
    # sub_filter drops them or makes the ETag weak; the 304 carries the
    # file's (as nginx's, whose conditional filter runs first)
    r = get(ports[1], "/lm/page.html")
    etag = r.header("etag")[2:]                   # the file's strong one
    for loc in ("lm", "many"):
        for cond in ("If-None-Match: " + etag, "If-None-Match: W/" + etag,
                     "If-Modified-Since: " + IMS):
            r = same(ports, "/%s/page.html" % loc, [cond])
            assert r.status == 304 and r.header("etag") == etag, (loc, cond, r.headers)
        # If-Match compares strongly, with the file's tag
        assert same(ports, "/%s/page.html" % loc, ["If-Match: " + etag]).status == 200
        assert same(ports, "/%s/page.html" % loc, ["If-Match: W/" + etag]).status == 412


def proxied(loc, extra=""):
    return """
        location /%s/ {
            proxy_pass http://@ORIGIN@/;
            sub_filter "http://origin.test/a" "[link a]";
            sub_filter "http://origin.test" "[origin]";
            sub_filter "origin" "ORIGIN";
            sub_filter_once off;
            %s
        }
""" % (loc, extra)


SPLIT = (b"<a href='http://origin.test/b'>http://ORIGIN.TEST/a</a> "
         b"http://origin.tes http://origin.test/a origin.")
SPLIT_REPLACED = b"<a href='[origin]/b'>[link a]</a> http://ORIGIN.tes [link a] ORIGIN."


def test_proxied_body_split_at_every_offset(servers):
    ports = servers(proxied("p") + proxied("unbuf", "proxy_buffering off;"))
    servers.origin.bodies["s"] = SPLIT
    expect = None
    for loc in ("p", "unbuf"):
        for k in range(len(SPLIT) + 1):
            r = same(ports, "/%s/split/%d/s" % (loc, k))
            expect = expect or r.body
            assert r.body == expect, (k, r.body)
        assert same(ports, "/%s/bytes/s" % loc).body == expect
    assert expect == SPLIT_REPLACED


def test_proxied_large_body(servers):
    """A body much larger than the filter's buffers, with a match in every
    line and across every buffer boundary the origin makes."""
    ports = servers(proxied("p") + proxied("unbuf", "proxy_buffering off;"))
    line = b"line with http://origin.test/a and http://origin.test/b origin\n"
    servers.origin.bodies["big"] = line * 20000 + b"tail http://origin.te"
    for loc in ("p", "unbuf"):
        r = same(ports, "/%s/plain/big" % loc)
        # the body ends inside a possible match: those bytes as they are
        assert r.body.count(b"[link a]") == 20000 and r.body.endswith(b"tail http://origin.te")


def first_text(port, path, headers, want, timeout=3.0):
    """Read a chunked response as it comes: (seconds until the decoded body,
    inflated when gzipped, holds want; that body so far)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.sendall(h.request("GET", path, headers=headers))
    t0, data, plain = time.monotonic(), b"", b""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if headers else None
    try:
        while want not in plain and time.monotonic() - t0 < timeout:
            data += sock.recv(65536)
            head, sep, rest = data.partition(b"\r\n\r\n")
            plain = b""
            if inflate:
                inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            while sep and b"\r\n" in rest:
                size, _, after = rest.partition(b"\r\n")
                n = int(size, 16)
                if n == 0 or len(after) < n + 2:
                    break
                plain += inflate.decompress(after[:n]) if inflate else after[:n]
                rest = after[n + 2:]
        return time.monotonic() - t0, plain
    finally:
        sock.close()


def test_streams_what_it_has(servers):
    """A paused upstream: what is decided reaches the client before the
    rest is sent (no buffering of the whole body), through gzip too; the
    bytes that may start a match wait for the rest."""
    ports = servers(proxied("unbuf", "proxy_buffering off;")
                    + proxied("gz", "proxy_buffering off; gzip on; gzip_min_length 1;"))
    body = b"first http://origin.test/a part, then http://origin.test/a the rest"
    servers.origin.bodies["s"] = body
    k = body.index(b"test/a the")               # the pause inside the second link
    for loc, headers in (("unbuf", []), ("gz", ["Accept-Encoding: gzip"])):
        took, plain = first_text(ports[1], "/%s/slow/%d/s" % (loc, k), headers,
                                 b"[link a] part, then ")
        assert took < SLOW_PAUSE, (loc, took, plain)   # before the pause ended
        assert plain == b"first [link a] part, then ", (loc, plain)
        rn, rs = (get(p, "/%s/slow/%d/s" % (loc, k), headers) for p in ports)
        if headers:
            rn.body, rs.body = gzip.decompress(rn.body), gzip.decompress(rs.body)
        assert rs.body == rn.body == body.replace(b"http://origin.test/a", b"[link a]")


def test_encoded_upstream_response(servers):
    """nginx searches an encoded body as it is (it does not look at
    Content-Encoding): nothing is found in the gzip bytes, which pass
    unchanged, and Content-Length, Last-Modified and ETag go as for any
    other. proxy_set_header Accept-Encoding "" asks the origin for plain
    text, which is replaced, and gzip after sub_filter compresses that."""
    ports = servers(proxied("p") + proxied("plain", 'proxy_set_header Accept-Encoding "";')
                    + proxied("gzip", 'proxy_set_header Accept-Encoding ""; gzip on;'))
    servers.origin.bodies["s"] = SPLIT * 50
    ae = ["Accept-Encoding: gzip"]
    r = same(ports, "/p/gz/s", ae)
    assert r.header("content-encoding") == "gzip" and r.header("content-length") is None
    assert gzip.decompress(r.body) == SPLIT * 50
    r = same(ports, "/plain/ae/s", ae)
    assert r.header("content-encoding") is None and b"[link a]" in r.body
    rn, rs = (get(p, "/gzip/ae/s", ae) for p in ports)
    assert rs.header("content-encoding") == rn.header("content-encoding") == "gzip"
    assert gzip.decompress(rs.body) == gzip.decompress(rn.body) == r.body


def test_static_gzip_after_sub_filter(tmp_path, servers):
    ports = servers("""
        location /z/ { sub_filter abc X; sub_filter_once off; gzip on; gzip_min_length 1; }
""")
    d = tmp_path / "root" / "z"
    d.mkdir()
    (d / "big.html").write_bytes(PAGE * 3000)
    h.make_traversable(tmp_path)
    rn, rs = (get(p, "/z/big.html", ["Accept-Encoding: gzip"]) for p in ports)
    assert rs.header("content-encoding") == rn.header("content-encoding") == "gzip"
    plain = gzip.decompress(rs.body)
    assert plain == gzip.decompress(rn.body)
    assert plain == (PAGE * 3000).replace(b"abc", b"X").replace(b"ABC", b"X").replace(
        b"Abc", b"X")


def test_http2(servers, tmp_path):
    """Over HTTP/2 (h2c, prior knowledge) the same bytes as nginx's over
    HTTP/1.1, for a static file and a proxied body in pieces."""
    ports = servers()
    servers.origin.bodies["s"] = SPLIT
    srv = h.launch(tmp_path / "h2", server="""
        http2 on;
        location /many/ { root %s; sub_filter abc X; sub_filter xyz Y; sub_filter_once off; }
        %s
""" % (tmp_path / "root", proxied("p").replace("@ORIGIN@", servers.origin.addr)))
    try:
        r = h.curl("http://127.0.0.1:%d/many/page.html" % srv.port, prior_knowledge=True)
        assert r.status == 200 and r.body == get(ports[0], "/many/page.html").body, r.body
        for path in ("/p/split/20/s", "/p/bytes/s"):
            r = h.curl("http://127.0.0.1:%d%s" % (srv.port, path), prior_knowledge=True)
            assert r.status == 200 and r.body == SPLIT_REPLACED, (path, r.body)
    finally:
        srv.stop()


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ('sub_filter "" x;', "empty search pattern in"),
        ("sub_filter a;", 'invalid number of arguments in "sub_filter" directive'),
        ("sub_filter_once maybe;", 'invalid value "maybe" in "sub_filter_once"'),
        ("sub_filter_types;", 'invalid number of arguments in "sub_filter_types" directive'),
        ("sub_filter $nosuch x;", "unknown variable"),
        ("sub_filter_last_modified on on;",
         'invalid number of arguments in "sub_filter_last_modified" directive'),
    ])
