"""gunzip, side by side with nginx 1.22 on the same configuration: a gzipped
upstream response decompressed for clients that do not take gzip (no
Accept-Encoding, "gzip;q=0", HTTP/1.0) and passed as it is to those that
do, Vary with gzip_vary, a body in pieces, several gzip members, a large
body through small buffers, with sub_filter and gzip after it, a
precompressed file (gzip_static always), HTTP/2; a corrupt or truncated
stream ends the response, logged, and the server goes on."""
import gzip
import os
import socket
import time

import pytest

import swsharness as h
from bodyorigin import Origin
from test_nginx_sites import NGINX, start_server

TEXT = b"".join(b"line %d: gzip on the way in, plain text on the way out\n" % i
                for i in range(200))

FIELDS = ("content-type", "content-length", "content-encoding", "etag", "last-modified",
          "vary", "accept-ranges", "transfer-encoding")


def site(port, origin, root):
    return """
    server {
        listen 127.0.0.1:%(port)d;
        root %(root)s;
        location /g/ { gunzip on; proxy_pass http://%(o)s/; }
        location /vary/ { gunzip on; gzip_vary on; proxy_pass http://%(o)s/; }
        location /small/ { gunzip on; gunzip_buffers 2 1k; proxy_pass http://%(o)s/; }
        location /unbuf/ { gunzip on; proxy_buffering off; proxy_pass http://%(o)s/; }
        location /off/ { proxy_pass http://%(o)s/; }
        location /sub/ {
            gunzip on; proxy_pass http://%(o)s/;
            sub_filter "plain text" "PLAIN TEXT"; sub_filter_once off;
        }
        location /subgz/ {
            gunzip on; proxy_pass http://%(o)s/; gzip on; gzip_min_length 1;
            sub_filter "plain text" "PLAIN TEXT"; sub_filter_once off;
        }
        location /static/ { gunzip on; gzip_static always; }
    }
""" % {"port": port, "o": origin.addr, "root": root}


@pytest.fixture
def servers(tmp_path):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    origin = Origin()
    origin.bodies["t"] = TEXT
    origin.bodies["big"] = TEXT * 200
    root = tmp_path / "root"
    (root / "static").mkdir(parents=True)
    (root / "static" / "page.html.gz").write_bytes(gzip.compress(TEXT, mtime=0))
    h.make_traversable(tmp_path)
    running, ports = [], []
    for who in ("nginx", "scalwsd"):
        d = tmp_path / who
        d.mkdir()
        port = h.free_port()
        running.append(start_server(who, d, port, site(port, origin, root)))
        ports.append(port)
    yield ports, origin, running[1]
    for r in running:
        r.stop()
    origin.stop()


def get(port, path, headers=(), version="HTTP/1.1", method="GET"):
    r = h.exchange(port, h.request(method, path, headers=headers, version=version),
                   method=method)
    assert r is not None, path
    return r


def same(ports, path, headers=(), version="HTTP/1.1", method="GET", skip=()):
    rn, rs = (get(p, path, headers, version, method) for p in ports)
    assert rs.status == rn.status, (path, rn, rs)
    for f in set(FIELDS) - set(skip):
        assert rs.header(f) == rn.header(f), (path, headers, f, rn.headers, rs.headers)
    assert rs.body == rn.body, (path, headers, len(rn.body), len(rs.body))
    return rs


def test_decompressed_for_clients_without_gzip(servers):
    ports, _, _ = servers
    r = same(ports, "/g/gz/t")
    assert r.body == TEXT and r.header("content-encoding") is None
    assert r.header("etag") == 'W/"origin-etag"'
    for ae in ("gzip;q=0", "gzip; q=0.000", "deflate, br", "identity"):
        assert same(ports, "/g/gz/t", ["Accept-Encoding: " + ae]).body == TEXT
    # HTTP/1.0 clients get it plain (gzip_http_version 1.1)
    assert same(ports, "/g/gz/t", ["Accept-Encoding: gzip"], version="HTTP/1.0").body == TEXT
    same(ports, "/g/gz/t", method="HEAD")
    # a plain response is left alone, and so is everything where gunzip is off
    assert same(ports, "/g/plain/t").body == TEXT
    assert gzip.decompress(same(ports, "/off/gz/t").body) == TEXT


def test_passed_on_to_clients_that_take_gzip(servers):
    ports, _, _ = servers
    for ae in ("gzip", "gzip, deflate, br", "br;q=1, gzip;q=0.5", "GZIP"):
        r = same(ports, "/g/gz/t", ["Accept-Encoding: " + ae])
        assert r.header("content-encoding") == "gzip" and gzip.decompress(r.body) == TEXT
    # gzip_vary on: both answers vary on Accept-Encoding
    r = same(ports, "/vary/gz/t")
    assert r.header("vary") == "Accept-Encoding" and r.body == TEXT
    r = same(ports, "/vary/gz/t", ["Accept-Encoding: gzip"])
    assert r.header("vary") == "Accept-Encoding" and r.header("content-encoding") == "gzip"


def test_body_in_pieces_and_large(servers):
    ports, origin, _ = servers
    n = len(gzip.compress(TEXT, mtime=0))
    for k in (0, 1, 5, 10, 11, n // 2, n - 8, n - 1, n):
        assert same(ports, "/unbuf/gzsplit/%d/t" % k).body == TEXT
        assert same(ports, "/g/gzsplit/%d/t" % k).body == TEXT
    # much larger than the buffers: 2 x 1k of output for 2 MB
    assert same(ports, "/small/gz/big").body == TEXT * 200
    assert same(ports, "/g/gz/big").body == TEXT * 200
    # two gzip members one after the other are one body
    assert same(ports, "/g/gz2/t").body == TEXT
    assert same(ports, "/small/gz2/big").body == TEXT * 200


def test_with_sub_filter_and_gzip(servers):
    ports, _, _ = servers
    r = same(ports, "/sub/gz/t")
    assert r.body == TEXT.replace(b"plain text", b"PLAIN TEXT")
    # a client taking gzip gets the upstream's gzip: nothing is replaced in it
    r = same(ports, "/sub/gz/t", ["Accept-Encoding: gzip"])
    assert gzip.decompress(r.body) == TEXT
    # decompressed, rewritten, compressed again: for a client that takes
    # gzip that is the upstream's gzip (gunzip passes it); for one that
    # does not, plain and rewritten
    r = same(ports, "/subgz/gz/t")
    assert r.body == TEXT.replace(b"plain text", b"PLAIN TEXT")


def test_precompressed_file(servers):
    ports, _, _ = servers
    r = same(ports, "/static/page.html")
    assert r.body == TEXT
    # (nginx's gzip_static sends no Accept-Ranges with the .gz file; the
    # compress module's does: not gunzip's business)
    r = same(ports, "/static/page.html", ["Accept-Encoding: gzip"], skip=("accept-ranges",))
    assert gzip.decompress(r.body) == TEXT


def test_http2(servers, tmp_path):
    ports, origin, _ = servers
    srv = h.launch(tmp_path / "h2", server="""
        http2 on;
        location /g/ { gunzip on; gunzip_buffers 2 1k; proxy_pass http://%s/; }
""" % origin.addr)
    try:
        for path in ("/g/gz/t", "/g/gz/big", "/g/gzsplit/30/t"):
            r = h.curl("http://127.0.0.1:%d%s" % (srv.port, path), prior_knowledge=True)
            assert r.status == 200 and r.body == gzip.decompress(
                gzip.compress(origin.bodies[path.rsplit("/", 1)[1]])), path
        # a corrupt stream over HTTP/2: the stream ends short, the server goes on
        try:
            r = h.curl("http://127.0.0.1:%d/g/gzbad/big" % srv.port, prior_knowledge=True)
            assert len(r.body) < len(TEXT) * 200, len(r.body)
        except Exception as e:                  # pycurl: a reset stream
            assert "pycurl" in type(e).__module__ or "error" in type(e).__name__, e
        assert h.wait_for(lambda: "inflate() failed" in srv.error_log(), timeout=5)
        r = h.curl("http://127.0.0.1:%d/g/gz/t" % srv.port, prior_knowledge=True)
        assert r.status == 200 and r.body == TEXT
    finally:
        srv.stop()


def read_all(port, path, timeout=5):
    """The raw bytes until the server closes (or timeout: a hang)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(h.request("GET", path))
    data, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = s.recv(65536)
        if not d:
            s.close()
            return data, True
        data += d
    s.close()
    return data, False


def test_corrupt_and_truncated_streams(servers):
    ports, _, srv = servers
    for path, what in (("/g/gzbad/big", "inflate() failed"),
                       ("/g/gzcut/big", "truncated")):
        for port in ports:
            data, closed = read_all(port, path)
            assert closed, (port, path)             # cut, never a hang
            assert data.startswith(b"HTTP/1.1 200"), data[:100]
            assert not data.endswith(b"\r\n0\r\n\r\n"), (port, path)  # no last chunk
        assert h.wait_for(lambda: what in srv.error_log(), timeout=5), srv.error_log()
    # the server goes on
    assert same(ports, "/g/gz/t").body == TEXT
    assert srv.alive() and "[alert]" not in srv.error_log()


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("gunzip maybe;", 'invalid value "maybe" in "gunzip"'),
        ("gunzip_buffers 0 4k;", 'invalid value "0" in "gunzip_buffers" directive'),
        ("gunzip_buffers 4 x;", 'invalid value "x" in "gunzip_buffers" directive'),
        ("gunzip_buffers 4;", 'invalid number of arguments in "gunzip_buffers" directive'),
        ("gunzip_buffers 4 4k; gunzip_buffers 4 4k;", '"gunzip_buffers" directive is duplicate'),
    ])
