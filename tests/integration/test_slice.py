"""slice and $slice_range, side by side with nginx 1.22 on the same
configuration (nginx's documented one: proxy_cache keyed by $slice_range,
proxy_set_header Range $slice_range, 200 and 206 kept): a file fetched
from a Range-serving origin in slices of 1000 bytes, whole and in ranges
(inside one slice, across boundaries, a suffix, several ranges), again
from the cache (the origin sees nothing), an ETag that changes between
slices and an origin that goes away mid-way (the response is cut, logged),
over HTTP/1.1 and HTTP/2."""
import os
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import swsharness as h
from test_nginx_sites import NGINX, start_server

SLICE = 1000
DATA = bytes((i * 7 + i // 251) % 256 for i in range(4321))    # 5 slices, the last short
BIG = os.urandom(3 * 1024 * 1024 + 5)                          # for a slow client
FIELDS = ("content-length", "content-range", "etag", "content-type", "accept-ranges",
          "last-modified", "transfer-encoding")


class RangeOrigin:
    """Serves DATA at /f (and /etag, /down) with single byte ranges; logs
    every request's path and Range. /etag's ETag changes after its first
    slice; /down closes the connection for a range past the first slice."""

    def __init__(self):
        self.seen = []
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                rng = self.headers.get("Range")
                origin.seen.append((self.path, rng))
                data = BIG if self.path.startswith("/big") else DATA
                start, end = 0, len(data) - 1
                m = re.fullmatch(r"bytes=(\d+)-(\d*)", rng or "")
                if m:
                    start = int(m.group(1))
                    if m.group(2):
                        end = min(int(m.group(2)), len(data) - 1)
                if self.path.startswith("/down") and start > 0:
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if m and start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", "bytes */%d" % len(data))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                etag = '"v1"'
                if self.path.startswith("/etag") and start > 0:
                    etag = '"v2"'
                body = data[start:end + 1]
                self.send_response(206 if m and not self.path.startswith("/full") else 200)
                if m and not self.path.startswith("/full"):
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(data)))
                else:
                    body = data
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_HEAD = do_GET

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.addr = "127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def site(port, origin, d):
    return """
    proxy_cache_path %(d)s/cache keys_zone=slices:1m;
    server {
        listen 127.0.0.1:%(port)d sndbuf=32k;
        location / {
            slice %(slice)d;
            proxy_cache slices;
            proxy_cache_key $uri$is_args$args$slice_range;
            proxy_set_header Range $slice_range;
            proxy_cache_valid 200 206 1h;
            proxy_pass http://%(o)s;
        }
        location /nocache/ {
            slice %(slice)d;
            proxy_set_header Range $slice_range;
            proxy_pass http://%(o)s/;
        }
        location /slow/ {
            slice 256k;
            proxy_set_header Range $slice_range;
            proxy_pass http://%(o)s/;
        }
        location /plain/ { proxy_pass http://%(o)s/; }
        location = /var { return 200 "[$slice_range]"; }
    }
""" % {"port": port, "o": origin.addr, "d": d, "slice": SLICE}


@pytest.fixture
def servers(tmp_path):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    origin = RangeOrigin()
    h.make_traversable(tmp_path)
    running, ports, dirs = [], [], []
    for who in ("nginx", "scalwsd"):
        d = tmp_path / who
        d.mkdir()
        port = h.free_port()
        running.append(start_server(who, d, port, site(port, origin, d)))
        ports.append(port)
        dirs.append(d)
    yield ports, origin, dirs
    for r in running:
        r.stop()
    origin.stop()


def get(port, path, headers=()):
    r = h.exchange(port, h.request("GET", path, headers=headers))
    assert r is not None, path
    return r


def same(ports, path, headers=()):
    rn, rs = (get(p, path, headers) for p in ports)
    assert rs.status == rn.status, (path, headers, rn, rs)
    for f in FIELDS:
        assert rs.header(f) == rn.header(f), (path, headers, f, rn.headers, rs.headers)
    if rs.status < 400:         # error pages: the same but for the server's name
        assert rs.body == rn.body, (path, headers, len(rn.body), len(rs.body))
    return rs


def test_whole_file_in_slices_then_from_the_cache(servers):
    ports, origin, _ = servers
    r = same(ports, "/f")
    assert r.status == 200 and r.body == DATA
    assert int(r.header("content-length")) == len(DATA)
    # each server asked for each slice once, in order
    asked = [rng for path, rng in origin.seen if path == "/f"]
    want = ["bytes=%d-%d" % (s, s + SLICE - 1) for s in range(0, len(DATA), SLICE)]
    assert asked == want * 2, asked
    # again: from the cache, the origin sees nothing
    origin.seen.clear()
    r = same(ports, "/f")
    assert r.body == DATA and origin.seen == []
    # a range of it too, from the cached slices
    r = same(ports, "/f", ["Range: bytes=1500-3600"])
    assert r.status == 206 and r.body == DATA[1500:3601] and origin.seen == []


@pytest.mark.parametrize("rng,lo,hi", [
    ("bytes=10-20", 10, 20),            # inside the first slice
    ("bytes=1200-1300", 1200, 1300),    # inside a later one
    ("bytes=999-1000", 999, 1000),      # across one boundary
    ("bytes=500-3500", 500, 3500),      # across several
    ("bytes=2000-", 2000, len(DATA) - 1),
    ("bytes=4000-9999", 4000, len(DATA) - 1),   # past the end: to the end
    ("bytes=-100", len(DATA) - 100, len(DATA) - 1),   # a suffix
])
def test_ranges(servers, rng, lo, hi):
    ports, origin, _ = servers
    r = same(ports, "/nocache/f", ["Range: " + rng])
    assert r.status == 206 and r.body == DATA[lo:hi + 1]
    assert r.header("content-range") == "bytes %d-%d/%d" % (lo, hi, len(DATA))
    # only the slices that hold the range were fetched (a suffix: the
    # first, which tells the length, then those)
    first = lo - lo % SLICE
    want = ["bytes=%d-%d" % (s, s + SLICE - 1) for s in range(first, hi + 1, SLICE)]
    if rng.startswith("bytes=-"):
        want = ["bytes=0-999"] + want
    assert [rng for path, rng in origin.seen if path == "/f"] == want * 2


def test_several_ranges_and_no_slice(servers):
    ports, _, _ = servers
    # several ranges: the whole file, 200
    r = same(ports, "/nocache/f", ["Range: bytes=0-1,5-6"])
    assert r.status == 200 and r.body == DATA
    # If-Range: the whole file, as nginx's slice (its start is 0)
    r = same(ports, "/nocache/f", ["Range: bytes=1500-1600", 'If-Range: "v1"'])
    # a range past the end, a malformed one
    for rng in ("bytes=9999-", "bytes=4400-4500", "bytes=5-2", "bytes=x-1", "bytes=1-2;",
                "bytes=-0", "bytes=1"):
        r = same(ports, "/nocache/f", ["Range: " + rng])
        assert r.status == 416 and r.header("content-range") == "bytes */4321", rng
    for rng in ("items=1-2", "bytes="):
        assert same(ports, "/nocache/f", ["Range: " + rng]).body == DATA
    # spaces where nginx takes them
    r = same(ports, "/nocache/f", ["Range: bytes= 10 - 20"])
    assert r.status == 206 and r.body == DATA[10:21]
    # an origin that answers the first slice with a 200: passed on as it is
    r = same(ports, "/nocache/full")
    assert r.status == 200 and r.body == DATA
    # $slice_range: empty where no slice is
    assert same(ports, "/var").body == b"[]"
    assert same(ports, "/plain/f").body == DATA


def cut_and_logged(ports, dirs, path, needle):
    for port, d in zip(ports, dirs):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(h.request("GET", path))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        # never a whole response: the connection is closed before its end
        # (nginx, whose output of so few bytes was not flushed yet, closes
        # it before the head; scalwsd after the first slice)
        if d.name == "scalwsd":
            assert head.startswith(b"HTTP/1.1 200") and body == DATA[:SLICE], (d, head)
        else:
            assert len(body) < len(DATA), (d, head)
        deadline = time.monotonic() + 5
        while needle not in h._read(d / "error.log") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert needle in h._read(d / "error.log"), d


def test_etag_changing_between_slices(servers):
    ports, _, dirs = servers
    cut_and_logged(ports, dirs, "/nocache/etag", "etag mismatch in slice response")


def test_origin_down_mid_way(servers):
    ports, _, dirs = servers
    # nginx: "upstream prematurely closed connection while reading response
    # header from upstream"; scalwsd: "upstream ADDR closed the connection
    # while reading the response header"
    cut_and_logged(ports, dirs, "/nocache/down", "while reading")


def test_slow_client_holds_the_slices_back(servers):
    """A client that does not read: the next slice is not fetched while the
    last one's bytes wait for it (no whole file in the server), and it has
    the file whole, in order, when it reads."""
    ports, origin, _ = servers
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(20)
    s.connect(("127.0.0.1", ports[1]))
    s.sendall(h.request("GET", "/slow/big"))
    time.sleep(1.0)
    asked = [rng for path, rng in origin.seen if path == "/big"]
    assert 1 <= len(asked) <= 3, asked          # of 13 slices
    data, head, body = b"", b"", b""
    while True:
        chunk = s.recv(1 << 20)
        if not chunk:
            break
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep and len(body) >= len(BIG):
            break
    s.close()
    assert head.startswith(b"HTTP/1.1 200") and body == BIG
    assert len([p for p, _ in origin.seen if p == "/big"]) == 13


def test_http2_client(servers):
    ports, origin, _ = servers
    for rng, want, status in ((None, DATA, 200), ("bytes=900-2100", DATA[900:2101], 206)):
        hdrs = ["Range: " + rng] if rng else []
        for port in ports:
            r = h.curl("http://127.0.0.1:%d/nocache/f" % port, headers=hdrs, http2=True)
            assert r.status == status and r.body == want, (port, r)


def test_head_and_http10(servers):
    ports, _, _ = servers
    for port in ports:
        r = h.exchange(port, h.request("HEAD", "/nocache/f"), method="HEAD")
        assert r.status == 200 and r.header("content-length") == str(len(DATA)) and r.body == b""
    r = same(ports, "/nocache/f", ["Range: bytes=100-2100"])
    rn, rs = (h.exchange(p, h.request("GET", "/nocache/f", headers=["Range: bytes=100-2100"],
                                      version="HTTP/1.0")) for p in ports)
    assert rn.status == rs.status == 206 and rn.body == rs.body == DATA[100:2101]


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("slice x;", 'invalid value "x" in "slice" directive'),
        ("slice;", 'invalid number of arguments in "slice" directive'),
        ("slice 1m 2m;", 'invalid number of arguments in "slice" directive'),
        ("slice 1m; slice 2m;", '"slice" directive is duplicate'),
    ])


def test_client_gone_mid_way(servers, tmp_path):
    """A client that leaves while a slice's subrequest runs (an HTTP/1
    connection closed, an HTTP/2 stream reset): the subrequest ends with its
    request, no further slice is fetched, and the server goes on."""
    from h2raw import H2, raw_frame
    ports, origin, dirs = servers
    s = socket.create_connection(("127.0.0.1", ports[1]), timeout=10)
    s.sendall(h.request("GET", "/slow/big"))
    got = b""
    while len(got) < 600000:                    # into the third slice
        got += s.recv(65536)
    s.close()
    with H2(ports[1]) as c:
        sid = c.get("/slow/big", scheme="http")
        deadline = time.monotonic() + 5
        n = 0
        while n < 60000 and time.monotonic() < deadline:   # no WINDOW_UPDATE: it stalls
            f = c.read_frame(1)
            if f is not None and f.stream_id == sid and hasattr(f, "data"):
                n += len(f.data)
        c.send(raw_frame(3, 0, sid, (8).to_bytes(4, "big")))      # RST_STREAM CANCEL
        time.sleep(0.5)
    asked = len([p for p, _ in origin.seen if p == "/big"])
    assert asked <= 6, origin.seen          # of 2 x 13
    r = same(ports, "/nocache/f", ["Range: bytes=900-1100"])
    assert r.body == DATA[900:1101]
    log = h._read(dirs[1] / "error.log")
    assert "[alert]" not in log and "[crit]" not in log, log
