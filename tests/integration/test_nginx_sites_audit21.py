"""HTTP/2 limits side by side with nginx 1.22 (audit21), over h2c with raw
frames: http2_max_concurrent_streams, keepalive_requests on HTTP/2,
client_max_body_size on a body with and without content-length (in padded
DATA frames after a WINDOW_UPDATE), and large_client_header_buffers as the
field limit. Both servers get the same site; the reactions must match."""
import os

import pytest

import h2raw
import swsharness as h
from test_http2_audit21 import padded_data, statuses, stream_end
from test_nginx_sites import NGINX, start_server

SITE = """
    server {
        listen 127.0.0.1:@PORT@ http2;
        server_name localhost;
        root @ROOT@;
        http2_max_concurrent_streams 3;
        keepalive_requests 6;
        keepalive_timeout 1s;
        large_client_header_buffers 4 1k;
        location /dav/ { dav_methods PUT; client_max_body_size 1k; }
    }
"""

BIG = os.urandom(1 << 20)


@pytest.fixture
def both(tmp_path):
    """(nginx port, scalwsd port), each with a document root of its own
    (fresh temporary directories: the PUTs write there)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running, ports = [], []
    for who in ("nginx", "scalwsd"):
        d = tmp_path / who
        root = d / "root"
        (root / "dav").mkdir(parents=True)
        (root / "big.bin").write_bytes(BIG)
        (root / "small.txt").write_bytes(b"small\n")
        h.make_traversable(tmp_path)
        port = h.free_port()
        running.append(start_server(who, d, port, SITE.replace("@PORT@", str(port))
                                    .replace("@ROOT@", str(root))))
        ports.append(port)
    yield ports
    for r in running:
        r.stop()


def connect(port, settings=None):
    c = h2raw.H2(port, settings=settings)
    c.frames(timeout=3, until=lambda f: f is None or (
        isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
    return c


def req(c, path, method="GET", extra=()):
    return c.request_headers(path, method=method, scheme="http", extra=list(extra))


def refused_streams(port):
    with connect(port, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        ids = [c.headers(req(c, "/big.bin")) for _ in range(5)]
        frames = c.frames(timeout=1.5)
    return ([ids.index(i) for i in ids if h2raw.rst_code(frames, i) == h2raw.REFUSED_STREAM],
            sorted(ids.index(i) for i in statuses(frames)))


def test_concurrent_streams_as_nginx(both):
    got = [refused_streams(p) for p in both]
    assert got[0] == got[1] == ([3, 4], [0, 1, 2]), got


def refused_flood(port):
    with connect(port, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        block = c.block(req(c, "/big.bin"))
        try:
            c.send(b"".join(h2raw.raw_frame(0x1, 0x5, c.new_id(), block) for _ in range(600)))
        except OSError:
            pass
        g = c.goaway(timeout=5)
        return g is not None and g.last_stream_id < 600, c.closed_within(5)


def test_refused_stream_flood_ends_the_connection_as_nginx(both):
    """600 streams over http2_max_concurrent_streams: both end the
    connection early (nginx 1.22 with GOAWAY NO_ERROR after about 100,
    scalwsd with ENHANCE_YOUR_CALM when the rapid reset bucket is empty)."""
    got = [refused_flood(p) for p in both]
    assert got[0] == got[1] == (True, True), got


def keepalive_requests_goaway(port):
    """Six requests one after the other (not at once: over
    http2_max_concurrent_streams scalwsd refuses them, as the frames of a
    read are all taken before any response ends, where nginx may have
    finished one already)."""
    with connect(port) as c:
        got, frames = [], []
        for _ in range(6):
            hdrs, _, fr = c.response(c.headers(req(c, "/small.txt")))
            got.append(h2raw.status(hdrs))
            frames += fr
        g = [f for f in frames if isinstance(f, h2raw.GoAwayFrame)] or [c.goaway(timeout=3)]
        return got, (g[0].error_code, g[0].last_stream_id) if g[0] else None


def test_keepalive_requests_as_nginx(both):
    got = [keepalive_requests_goaway(p) for p in both]
    assert got[0] == got[1] == ([200] * 6, (h2raw.NO_ERROR, 11)), got


def put(port, name, payload, length):
    with connect(port) as c:
        extra = [("content-length", str(length))] if length is not None else []
        sid = c.headers(req(c, "/dav/" + name, method="PUT", extra=extra), end_stream=False)
        out = h2raw.WindowUpdateFrame(0, window_increment=1 << 20).serialize()
        pieces = [payload[i:i + 100] for i in range(0, len(payload), 100)]
        for i, piece in enumerate(pieces):
            out += padded_data(sid, piece, 200, end_stream=(i == len(pieces) - 1))
        try:
            c.send(out)
        except OSError:
            pass
        frames = c.frames(timeout=5, until=stream_end(sid))
        return statuses(frames).get(sid)


@pytest.mark.parametrize("size,length", [(2000, 2000), (2000, None), (900, 900), (900, None)],
                         ids=["over, content-length", "over, none", "under, content-length",
                              "under, none"])
def test_client_max_body_size_as_nginx(both, size, length):
    got = [put(p, "f%d" % i, b"x" * size, length) for i, p in enumerate(both)]
    assert got[0] == got[1], got
    assert got[0] == (413 if size > 1024 else 201), got


def field_limit(port, size):
    """A field of size octets, sent as a literal without Huffman coding
    (nginx measures a field as sent, scalwsd as decoded: the same here)."""
    with connect(port) as c:
        block = c.enc.encode(req(c, "/small.txt", extra=[("x-field", "f" * size)]),
                             huffman=False)
        sid = c.headers(None, block=block)
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(f, h2raw.GoAwayFrame)
                          or stream_end(sid)(f))
    st = statuses(frames).get(sid)
    g = [f.error_code for f in frames if isinstance(f, h2raw.GoAwayFrame)]
    return st, h2raw.rst_code(frames, sid), g


def test_field_under_the_limit_as_nginx(both):
    got = [field_limit(p, 900) for p in both]
    assert got[0] == got[1] == (200, None, []), got


def test_field_over_the_limit_differs_from_nginx_as_documented(both):
    """nginx 1.22 ends the connection (GOAWAY ENHANCE_YOUR_CALM); scalwsd
    answers the stream 431 and keeps the connection (RFC 9113 10.5.1;
    docs/tls-http2.md)."""
    nginx, ours = [field_limit(p, 1100) for p in both]
    assert nginx == (None, None, [h2raw.ENHANCE_YOUR_CALM]), nginx
    assert ours == (431, None, []), ours


def header_list(port, n):
    """n fields of 900 octets each (no Huffman coding) in one request."""
    with connect(port) as c:
        extra = [("x-f%d" % i, "v" * 900) for i in range(n)]
        sid = c.headers(None, block=c.enc.encode(req(c, "/small.txt", extra=extra),
                                                 huffman=False))
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(f, h2raw.GoAwayFrame)
                          or stream_end(sid)(f))
    return (statuses(frames).get(sid), h2raw.rst_code(frames, sid),
            [f.error_code for f in frames if isinstance(f, h2raw.GoAwayFrame)])


def test_header_list_under_the_limit_as_nginx(both):
    got = [header_list(p, 3) for p in both]
    assert got[0] == got[1] == (200, None, []), got


def test_header_list_over_the_limit(both):
    """Over number x size of large_client_header_buffers (4k): refused by
    both; nginx ends the connection, scalwsd answers 431 (as for a field)."""
    nginx, ours = [header_list(p, 6) for p in both]
    assert nginx[0] is None and nginx[2], nginx
    assert ours == (431, None, []), ours


def idle_close(port):
    import time
    with connect(port) as c:
        c.response(c.headers(req(c, "/small.txt")))
        start = time.monotonic()
        g = c.goaway(timeout=5)
        closed = c.closed_within(3)
        return (g.error_code if g else None, closed, 0.5 < time.monotonic() - start < 4.5)


def test_idle_connection_closed_as_nginx(both):
    """keepalive_timeout (nginx 1.22 has no http2_idle_timeout any more):
    GOAWAY NO_ERROR and the close, after about a second, from both."""
    got = [idle_close(p) for p in both]
    assert got[0] == got[1] == (h2raw.NO_ERROR, True, True), got
