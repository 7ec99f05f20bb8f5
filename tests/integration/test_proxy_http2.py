"""The proxy behind HTTP/2 (h2c by prior knowledge): the request goes to
the origin as HTTP/1.1, buffered or streamed bodies arrive whole, and a
large response is passed on through the stream's flow control."""
import json
import os

import h2raw
import swsharness as h
from proxyorigin import pattern


def h2(srv, path, **kw):
    return h.curl(srv.url(path), prior_knowledge=True, **kw)


def test_interim_response_over_h2(sws, origin):
    """A 103 from the origin is a HEADERS frame without END_STREAM ahead of
    the final one (RFC 9113 8.1)."""
    o = origin()
    srv = sws(server="http2 on; location / { proxy_pass http://%s; }" % o.addr)
    with h2raw.H2(srv.port) as c:
        sid = c.get("/interim", scheme="http")
        hdrs, body, frames = c.response(sid)
        blocks = [f for f in frames if f.stream_id == sid and type(f).__name__ == "HeadersFrame"]
        assert len(blocks) == 2, frames
        first = dict(blocks[0].decoded)
        assert first[":status"] == "103" and first["link"] == "</x.css>; rel=preload"
        assert "END_STREAM" not in blocks[0].flags
        assert dict(blocks[1].decoded)[":status"] == "200"
        assert body == b"final\n"


def test_interim_response_survives_the_head_buffer_making_room(sws, origin):
    """A 103 and a final head that do not fit the proxy's head buffer
    together: the buffer makes room (moving the final head's start over
    the 103's lines) and both HEADERS frames carry what the origin sent."""
    o = origin()
    srv = sws(server="http2 on; location / { proxy_pass http://%s; }" % o.addr)
    with h2raw.H2(srv.port) as c:
        sid = c.get("/interimfill", scheme="http")
        hdrs, body, frames = c.response(sid)
        blocks = [f for f in frames if f.stream_id == sid and type(f).__name__ == "HeadersFrame"]
        assert len(blocks) == 2, frames
        first = dict(blocks[0].decoded)
        assert first[":status"] == "103"
        assert first["link"] == "</%s.css>; rel=preload" % ("a" * 2000)
        assert dict(blocks[1].decoded)[":status"] == "200"
        assert h2raw.header(hdrs, "x-fill") == "p" * 7000     # (with its CONTINUATION)
        assert body == b"final\n"


def test_concurrent_streams_keep_their_own_headers(sws, origin):
    """Forty proxied streams of one connection answered by the origin at
    the same moment: each HEADERS frame carries its own response's fields
    (through the header list, content type and ETag alike)."""
    o = origin()
    srv = sws(server="http2 on; location / { proxy_pass http://%s; }" % o.addr)
    for _ in range(3):
        o.barriers.clear()
        with h2raw.H2(srv.port) as c:
            want = {}
            for i in range(40):
                v = "v%03d" % i
                want[c.get("/hdr/40/" + v, scheme="http")] = v
            hdrs = {sid: [] for sid in want}
            body = {sid: b"" for sid in want}
            ended = set()
            while len(ended) < len(want):
                f = c.read_frame(5.0)
                assert f is not None, "connection closed"
                if f.stream_id not in want:
                    continue
                if type(f).__name__ in ("HeadersFrame", "ContinuationFrame"):
                    hdrs[f.stream_id] += f.decoded
                elif type(f).__name__ == "DataFrame":
                    body[f.stream_id] += f.data
                if "END_STREAM" in f.flags:
                    ended.add(f.stream_id)
            for sid, v in want.items():
                assert h2raw.status(hdrs[sid]) == 200, hdrs[sid]
                assert h2raw.header(hdrs[sid], "x-value") == v, hdrs[sid]
                assert h2raw.header(hdrs[sid], "content-type") == "text/x-" + v, hdrs[sid]
                assert h2raw.header(hdrs[sid], "etag") == '"%s"' % v, hdrs[sid]
                assert body[sid] == v.encode()


def test_proxy_over_h2c(sws, origin):
    o = origin()
    srv = sws(server="""http2 on;
        location / { proxy_pass http://%s; }
        location /s/ { proxy_pass http://%s/; proxy_request_buffering off;
                       client_max_body_size 0; }""" % (o.addr, o.addr))

    r = h2(srv, "/echo?a=1")
    assert r.status == 200 and r.http_version == 3, r
    got = json.loads(r.body)
    assert got["method"] == "GET" and got["target"] == "/echo?a=1"
    assert got["version"] == "HTTP/1.1"

    body = os.urandom(300 * 1024)
    r = h2(srv, "/echo", method="POST", body=body)
    assert r.status == 200, r
    assert json.loads(r.body)["body"].encode("latin-1") == body

    # streamed to the origin as DATA frames arrive (window back-pressure)
    body = os.urandom(3 * 1024 * 1024 + 5)
    r = h2(srv, "/s/echo", method="POST", body=body)
    assert r.status == 200, r
    assert json.loads(r.body)["body"].encode("latin-1") == body

    size = 6 * 1024 * 1024 + 3
    r = h2(srv, "/big/%d" % size)
    assert r.status == 200 and len(r.body) == size
    assert r.body == pattern(size)

    r = h2(srv, "/status/404")
    assert r.status == 404


def test_proxy_h2_streamed_body_timeout(sws, origin):
    """A stream whose body stops coming: 408 on the stream, the origin's
    connection let go, the HTTP/2 connection still usable."""
    o = origin()
    srv = sws(server="""http2 on;
        location / { proxy_pass http://%s; proxy_request_buffering off;
                     client_body_timeout 300ms; }""" % o.addr)
    with h2raw.H2(srv.port) as c:
        sid = c.headers(c.request_headers("/echo", method="POST", scheme="http",
                                          extra=[("content-length", "100")]),
                        end_stream=False)
        c.data(sid, b"x" * 10)
        hdrs, body, frames = c.response(sid, timeout=5)
        assert h2raw.status(hdrs) == 408, frames
        assert h.wait_for(lambda: len(o.conns) == 0, 3)
        sid = c.get("/echo", scheme="http")
        hdrs, body, frames = c.response(sid, timeout=5)
        assert h2raw.status(hdrs) == 200
        assert json.loads(body)["method"] == "GET"
