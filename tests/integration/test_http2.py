"""HTTP/2: over TLS (ALPN h2) and cleartext (prior knowledge), with the
same phases, modules and filters as HTTP/1.1: static files with ranges and
conditionals, respond, error pages, request bodies read and discarded,
flow control both ways, header mapping and validation, settings, limits,
timeouts and graceful shutdown."""
import hashlib
import os
import re
import signal
import socket
import subprocess
import time

import pytest

import echomod
import h2raw
import swsharness as h
import tlsutil as t

BIG = os.urandom(5 * 1024 * 1024 + 77)
MTIME = 1577934245          # 2020-01-02 03:04:05 UTC
FILES = {
    "html/hello.txt": b"Hello, HTTP/2!\n",
    "html/range.txt": b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "html/big.bin": BIG,
    "html/index.html": b"index\n",
    "html/empty.txt": b"",
}
LOG_H2 = ('    log_format h2 "$scheme $server_protocol $request $status $body_bytes_sent";\n'
          '    access_log @TMP@/h2.log h2;\n')
SERVER = """
        listen 127.0.0.1:@PORT2@ http2;
        location /echo { echo; }
        location /discard { echo_discard; }
        location /small/ { echo; client_max_body_size 1k; }
        location /slowbody { echo; client_body_timeout 1s; }
        location = /gone { return 410; }
        location = /moved { return 301 /hello.txt; }
        location /chunk1k/ { alias @TMP@/html/; http2_chunk_size 1k; }
"""


@pytest.fixture(scope="module")
def srv(sws_module, pki, tmp_path_factory):
    load = echomod.build(tmp_path_factory.mktemp("echo"))
    s = t.launch(sws_module, pki, listen="http2", ports=2, files=FILES, load=load,
                 server=SERVER, http=LOG_H2)
    os.utime(s.tmp / "html" / "range.txt", (MTIME, MTIME))
    s.port2 = s.ports[1]
    return s


def url(srv, path):
    return "https://localhost:%d%s" % (srv.port, path)


def get(srv, path, pki=None, **kw):
    return h.curl(url(srv, path), http2=True, insecure=True, **kw)


def h2log(srv):
    return h._read(srv.tmp / "h2.log")


# ---------------------------------------------------------------- basics

def test_h2_over_tls_static(srv):
    r = get(srv, "/hello.txt")
    assert r.status == 200 and r.http_version == 3, r        # CURL_HTTP_VERSION_2_0 == 3
    assert r.body == FILES["html/hello.txt"]
    assert r.header("content-length") == str(len(FILES["html/hello.txt"]))
    assert r.header("content-type").startswith("text/plain")
    assert r.header("server").startswith("scalws")
    assert h.IMF_FIXDATE.match(r.header("date"))
    assert h.wait_for(lambda: "https HTTP/2.0 GET /hello.txt HTTP/2.0 200 15" in h2log(srv)), \
        h2log(srv)


def test_h2_respond_module(srv):
    r = get(srv, "/respond")
    assert r.status == 200 and r.body == b"Hello, world!" and r.http_version == 3


def test_h2c_prior_knowledge(srv):
    r = h.curl("http://127.0.0.1:%d/hello.txt" % srv.port2, prior_knowledge=True)
    assert r.status == 200 and r.http_version == 3 and r.body == FILES["html/hello.txt"]
    assert h.wait_for(lambda: "http HTTP/2.0 GET /hello.txt" in h2log(srv)), h2log(srv)


def test_http11_still_works_on_h2c_port(srv):
    r = h.curl("http://127.0.0.1:%d/hello.txt" % srv.port2)
    assert r.status == 200 and r.http_version == 2 and r.body == FILES["html/hello.txt"]


def test_http11_over_tls_on_h2_port(srv):
    r = h.curl(url(srv, "/hello.txt"), insecure=True)
    assert r.status == 200 and r.http_version == 2


def test_h2_preface_byte_by_byte(srv):
    with h.Conn(srv.port2) as c:
        for b in h2raw.PREFACE:
            c.send(bytes([b]))
            time.sleep(0.001)
        c.send(h2raw.raw_frame(4, 0, 0))       # empty SETTINGS
        c.sock.settimeout(3)
        data = c.sock.recv(9)
        assert data[3] == 4, data               # the server's SETTINGS


def test_header_names_lowercase_and_no_connection_headers(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        hdrs, body, _ = c.response(c.get("/hello.txt"))
    names = [k for k, _ in hdrs]
    assert all(k == k.lower() for k in names), names
    assert "connection" not in names and "transfer-encoding" not in names
    assert h2raw.status(hdrs) == 200 and body == FILES["html/hello.txt"]


def test_error_page_over_h2(srv):
    r = get(srv, "/nope.txt")
    assert r.status == 404 and b"404 Not Found" in r.body
    r = get(srv, "/gone")
    assert r.status == 410
    r = get(srv, "/moved")
    assert r.status == 301 and r.header("location").endswith("/hello.txt")


def test_head_has_no_body(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/hello.txt", method="HEAD"))
        hdrs, body, frames = c.response(sid)
    assert h2raw.status(hdrs) == 200 and body == b""
    assert h2raw.header(hdrs, "content-length") == str(len(FILES["html/hello.txt"]))
    assert not any(isinstance(f, h2raw.DataFrame) and f.stream_id == sid for f in frames)


def test_empty_file_ends_with_headers(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.get("/empty.txt")
        hdrs, body, frames = c.response(sid)
    assert h2raw.status(hdrs) == 200 and body == b""
    assert h2raw.header(hdrs, "content-length") == "0"


# ---------------------------------------------------------------- static features

def test_range_over_h2(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=2-5"])
    assert r.status == 206 and r.body == b"2345"
    assert r.header("content-range") == "bytes 2-5/36"


def test_multirange_over_h2(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=0-1,10-11"])
    assert r.status == 206
    assert r.header("content-type").startswith("multipart/byteranges")
    assert b"01" in r.body and b"AB" in r.body


def test_unsatisfiable_range(srv):
    r = get(srv, "/range.txt", headers=["Range: bytes=100-200"])
    assert r.status == 416


def test_conditionals_over_h2(srv):
    r = get(srv, "/range.txt")
    etag = r.header("etag")
    assert r.header("last-modified") == "Thu, 02 Jan 2020 03:04:05 GMT"
    r = get(srv, "/range.txt", headers=["If-None-Match: %s" % etag])
    assert r.status == 304 and r.body == b""
    r = get(srv, "/range.txt", headers=["If-Modified-Since: Thu, 02 Jan 2020 03:04:05 GMT"])
    assert r.status == 304
    r = get(srv, "/range.txt", headers=['If-Match: "nope"'])
    assert r.status == 412


def test_date_conditionals_and_range_fields_over_h2(srv):
    # the fields the parser notes as HTTP/2 decodes them (r->date_conditional,
    # r->range_in): If-Unmodified-Since alone, and Range after other fields
    r = get(srv, "/range.txt", headers=["If-Unmodified-Since: Wed, 01 Jan 2020 00:00:00 GMT"])
    assert r.status == 412, r
    r = get(srv, "/range.txt", headers=["If-Unmodified-Since: Thu, 02 Jan 2020 03:04:05 GMT",
                                        "X-Other: 1", "Range: bytes=-3"])
    assert r.status == 206 and r.body == b"XYZ", r


def test_encoded_slash_over_h2(srv):
    # the :path's "%2F" (noted by the request-line parser): 400 for a file
    for path in ("/range%2Ftxt", "/x%2fy.txt?q=1"):
        hdrs, body, _ = echo(srv, path=path)
        assert h2raw.status(hdrs) == 400, (path, hdrs)
    hdrs, body, _ = echo(srv, path="/range.txt?p=%2F")
    assert h2raw.status(hdrs) == 200, hdrs


def test_index_and_directory_redirect(srv):
    r = get(srv, "/")
    assert r.status == 200 and r.body == b"index\n"


def test_large_file_over_h2_tls_and_h2c(srv):
    r = get(srv, "/big.bin")
    assert r.status == 200 and hashlib.sha256(r.body).digest() == hashlib.sha256(BIG).digest()
    r = h.curl("http://127.0.0.1:%d/big.bin" % srv.port2, prior_knowledge=True)
    assert hashlib.sha256(r.body).digest() == hashlib.sha256(BIG).digest()
    assert h.wait_for(lambda: "GET /big.bin HTTP/2.0 200 %d" % len(BIG) in h2log(srv))


def test_large_file_with_small_client_windows(srv):
    # nghttp: stream window 2^10, connection window 2^16: the server must
    # wait for WINDOW_UPDATEs all along.
    r = subprocess.run(["nghttp", "-n", "-s", "-w", "10", "-W", "16",
                        "http://127.0.0.1:%d/big.bin" % srv.port2],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["nghttp", "-w", "12", "-W", "16",
                        "http://127.0.0.1:%d/big.bin" % srv.port2],
                       capture_output=True, timeout=120)
    assert r.returncode == 0 and hashlib.sha256(r.stdout).digest() == hashlib.sha256(BIG).digest()


def test_chunk_size_limits_data_frames(srv):
    with h2raw.H2(srv.port2) as c:
        hdrs, body, frames = c.response(c.headers(c.request_headers("/chunk1k/range.txt",
                                                                    scheme="http")))
        sizes = [len(f.data) for f in frames if isinstance(f, h2raw.DataFrame)]
        hdrs2, body2, frames2 = c.response(c.headers(c.request_headers("/chunk1k/big.bin",
                                                                       scheme="http")),
                                           timeout=30)
    assert body == FILES["html/range.txt"]
    sizes = [len(f.data) for f in frames2 if isinstance(f, h2raw.DataFrame)]
    assert max(sizes) == 1024, sizes[:10]
    assert body2 == BIG


def test_many_streams_multiplexed(srv):
    r = subprocess.run(["nghttp", "-n", "-s", "-m", "40",
                        "https://localhost:%d/hello.txt" % srv.port],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    with h2raw.H2(srv.port, tls=True) as c:
        ids = [c.get("/range.txt") for _ in range(20)]
        done = {}
        for f in c.frames(timeout=10, until=lambda f: f is None or len(done) == 20):
            if f is not None and isinstance(f, h2raw.DataFrame) and "END_STREAM" in f.flags:
                done[f.stream_id] = True
        assert sorted(done) == sorted(ids)


# ---------------------------------------------------------------- request headers

def echo(srv, path="/echo", extra=(), tls=True, authority="localhost"):
    with h2raw.H2(srv.port if tls else srv.port2, tls=tls) as c:
        sid = c.headers(c.request_headers(path, authority=authority,
                                          scheme="https" if tls else "http", extra=extra))
        hdrs, body, frames = c.response(sid)
        return hdrs, body.decode(), frames


def test_pseudo_headers_map_to_request(srv):
    hdrs, body, _ = echo(srv, "/echo/a%20b?x=1&y=2", authority="LocalHost:443")
    assert h2raw.status(hdrs) == 200, body
    first = body.splitlines()[0]
    assert first == "GET /echo/a b ?x=1&y=2 host=localhost scheme=https version=2000", first


def test_h2c_scheme_http(srv):
    _, body, _ = echo(srv, tls=False)
    assert "scheme=http " in body.splitlines()[0]


def test_regular_headers_arrive_lowercase_in_order(srv):
    _, body, _ = echo(srv, extra=[("x-one", "1"), ("user-agent", "h2raw"), ("x-two", "2")])
    lines = body.splitlines()[1:]
    assert lines[:3] == ["x-one: 1", "user-agent: h2raw", "x-two: 2"], lines


def test_cookie_crumbs_joined(srv):
    _, body, _ = echo(srv, extra=[("cookie", "a=1"), ("x-mid", "m"), ("cookie", "b=2"),
                                  ("cookie", "c=3")])
    assert "cookie: a=1; b=2; c=3" in body.splitlines(), body


def test_host_header_when_no_authority(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers([(":method", "GET"), (":scheme", "https"), (":path", "/echo"),
                         ("host", "Example.ORG")])
        hdrs, body, _ = c.response(sid)
    assert "host=example.org" in body.decode()


def test_authority_selects_virtual_server(sws, pki):
    s = t.launch(sws, pki, listen="http2", servers="""
    server {
        listen 127.0.0.1:@PORT@ ssl http2;
        server_name other.test;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        location / { respond 200 "other"; }
    }
""")
    with h2raw.H2(s.port, tls=True) as c:
        _, body, _ = c.response(c.get("/", authority="other.test"))
        assert body == b"other"
        _, body, _ = c.response(c.get("/respond", authority="localhost"))
        assert body == b"Hello, world!"


@pytest.mark.parametrize("headers,why", [
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("X-Upper", "1")], "uppercase name"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("connection", "keep-alive")], "connection-specific"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("transfer-encoding", "chunked")], "transfer-encoding"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("keep-alive", "5")], "keep-alive"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("upgrade", "h2c")], "upgrade"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("te", "gzip")], "TE other than trailers"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost")], "no :path"),
    ([(":scheme", "https"), (":authority", "localhost"), (":path", "/")], "no :method"),
    ([(":method", "GET"), (":authority", "localhost"), (":path", "/")], "no :scheme"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      (":path", "/x")], "repeated pseudo-header"),
    ([(":method", "GET"), (":scheme", "https"), ("x-a", "1"), (":authority", "localhost"),
      (":path", "/")], "pseudo-header after a regular one"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      (":status", "200")], "response pseudo-header"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "")],
     "empty :path"),
    ([(":method", "GET"), (":scheme", "https"), (":authority", "localhost"), (":path", "/"),
      ("x-bad", "a\r\nb")], "CR LF in a value"),
])
def test_invalid_request_headers_reset_stream(srv, headers, why):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(headers)
        frames = c.frames(timeout=3, until=lambda f: f is None or (
            isinstance(f, h2raw.RstStreamFrame) and f.stream_id == sid))
        assert h2raw.rst_code(frames, sid) == h2raw.PROTOCOL_ERROR, (why, frames)
        # The connection goes on.
        hdrs, body, _ = c.response(c.get("/respond"))
        assert body == b"Hello, world!", why


def test_te_trailers_is_fine(srv):
    hdrs, body, _ = echo(srv, extra=[("te", "trailers")])
    assert h2raw.status(hdrs) == 200


def test_invalid_path_is_400(srv):
    hdrs, body, _ = echo(srv, path="/../etc/passwd")
    assert h2raw.status(hdrs) == 400
    # Not origin-form: nghttp2 resets the stream (or we answer 400).
    hdrs, body, frames = echo(srv, path="http://localhost/abs")
    assert h2raw.status(hdrs) == 400 or h2raw.rst_code(frames, 1) == h2raw.PROTOCOL_ERROR


def test_connect_is_not_allowed(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers([(":method", "CONNECT"), (":authority", "localhost:443")])
        hdrs, _, _ = c.response(sid)
    assert h2raw.status(hdrs) == 405


def test_options_asterisk(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers([(":method", "OPTIONS"), (":scheme", "https"),
                         (":authority", "localhost"), (":path", "*")])
        hdrs, _, _ = c.response(sid)
    assert h2raw.status(hdrs) == 200 and h2raw.header(hdrs, "allow")


def test_too_large_header_is_431(srv):
    hdrs, _, _ = echo(srv, extra=[("x-big", "v" * 40000)])
    assert h2raw.status(hdrs) == 431


def test_server_settings(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        c.frames(timeout=1, until=lambda f: isinstance(f, h2raw.SettingsFrame))
        st = c.server_settings
    assert st.get(h2raw.MAX_CONCURRENT_STREAMS) == 128
    assert st.get(h2raw.INITIAL_WINDOW_SIZE) == 65536
    assert st.get(h2raw.MAX_HEADER_LIST_SIZE) == 4 * 8192


def test_settings_from_configuration(sws, pki):
    s = t.launch(sws, pki, listen="http2",
                 server="        http2_max_concurrent_streams 7;\n"
                        "        http2_body_preread_size 16k;\n"
                        "        large_client_header_buffers 2 4k;")
    with h2raw.H2(s.port, tls=True) as c:
        c.frames(timeout=1, until=lambda f: isinstance(f, h2raw.SettingsFrame))
        st = c.server_settings
    assert st.get(h2raw.MAX_CONCURRENT_STREAMS) == 7
    assert st.get(h2raw.INITIAL_WINDOW_SIZE) == 16384
    assert st.get(h2raw.MAX_HEADER_LIST_SIZE) == 8192


# ---------------------------------------------------------------- request bodies

def post(srv, path, body, extra=(), end=True, chunks=None, tls=True, timeout=10):
    with h2raw.H2(srv.port if tls else srv.port2, tls=tls) as c:
        sid = c.headers(c.request_headers(path, method="POST",
                                          scheme="https" if tls else "http",
                                          extra=list(extra)), end_stream=False)
        step = chunks or 16384
        for i in range(0, len(body), step):
            c.data(sid, body[i:i + step], end_stream=end and i + step >= len(body))
        if not body and end:
            c.data(sid, b"", end_stream=True)
        return c.response(sid, timeout=timeout)


def test_post_body_read(srv):
    hdrs, body, _ = post(srv, "/echo", b"hello body")
    assert h2raw.status(hdrs) == 200 and body == b"hello body"
    assert h2raw.header(hdrs, "x-body-length") == "10"


def test_post_with_content_length(srv):
    hdrs, body, _ = post(srv, "/echo", b"x" * 1000, extra=[("content-length", "1000")])
    assert body == b"x" * 1000


def test_post_content_length_mismatch_is_reset(srv):
    hdrs, body, frames = post(srv, "/echo", b"x" * 10, extra=[("content-length", "20")])
    assert h2raw.rst_code(frames, 1) == h2raw.PROTOCOL_ERROR, frames


def test_post_large_body_beyond_window(srv):
    # Larger than the 64k stream window: the window is given back as the
    # handler takes the body, or this would stall.
    data = os.urandom(900 * 1024)
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/echo", method="POST"), end_stream=False)
        sent = 0
        window = 65535        # the client's view (RFC default) until SETTINGS
        deadline = time.monotonic() + 20
        while sent < len(data) and time.monotonic() < deadline:
            n = min(16384, len(data) - sent, window)
            if n > 0:
                c.data(sid, data[sent:sent + n], end_stream=sent + n == len(data))
                sent += n
                window -= n
                continue
            for f in c.frames(timeout=2, until=lambda f: isinstance(f, h2raw.WindowUpdateFrame)
                              and f.stream_id == sid):
                if isinstance(f, h2raw.WindowUpdateFrame) and f.stream_id == sid:
                    window += f.window_increment
        assert sent == len(data), "the stream window was not given back"
        hdrs, body, _ = c.response(sid, timeout=20)
    assert body == data


def test_post_body_too_large_is_413(srv):
    hdrs, body, frames = post(srv, "/small/", b"y" * 4000)
    assert h2raw.status(hdrs) == 413
    hdrs, body, frames = post(srv, "/small/", b"y" * 4000, extra=[("content-length", "4000")])
    assert h2raw.status(hdrs) == 413


def test_post_body_discarded(srv):
    hdrs, body, frames = post(srv, "/discard", os.urandom(200000))
    assert h2raw.status(hdrs) == 200 and body == b"discarded"


def test_response_before_body_ends_resets_no_error(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/respond", method="POST"), end_stream=False)
        c.data(sid, b"part")
        hdrs, body, frames = c.response(sid)
        more = c.frames(timeout=1, until=lambda f: isinstance(f, h2raw.RstStreamFrame))
    assert body == b"Hello, world!"
    assert h2raw.rst_code(frames + more, sid) == h2raw.NO_ERROR


def test_expect_100_continue(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/echo", method="POST",
                                          extra=[("expect", "100-continue")]), end_stream=False)
        first = c.frames(timeout=3, until=lambda f: isinstance(f, h2raw.HeadersFrame))
        heads = [f for f in first if isinstance(f, h2raw.HeadersFrame)]
        assert heads and heads[0].decoded[0] == (":status", "100")
        c.data(sid, b"after continue", end_stream=True)
        hdrs, body, _ = c.response(sid)
    assert h2raw.status(hdrs) == 200 and body == b"after continue"


def test_body_timeout_is_408(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/slowbody", method="POST"), end_stream=False)
        c.data(sid, b"start")
        hdrs, body, _ = c.response(sid, timeout=5)
    assert h2raw.status(hdrs) == 408


def test_trailers_after_body(srv):
    with h2raw.H2(srv.port, tls=True) as c:
        sid = c.headers(c.request_headers("/echo", method="POST"), end_stream=False)
        c.data(sid, b"body then trailers")
        c.headers([("x-trailer", "t")], sid=sid, end_stream=True)
        hdrs, body, _ = c.response(sid)
    assert body == b"body then trailers"


def test_pycurl_post_over_h2(srv):
    r = h.curl(url(srv, "/echo"), http2=True, insecure=True, method="POST",
               body=b"z" * 300000)
    assert r.status == 200 and r.body == b"z" * 300000 and r.http_version == 3


# ---------------------------------------------------------------- connection life

def test_http2_on_directive_enables_alpn(sws, pki):
    s = t.launch(sws, pki, server="        http2 on;")
    out = t.s_client(s.port, "-alpn", "h2,http/1.1", input=b"Q\n")
    assert "ALPN protocol: h2" in out, out
    r = get(s, "/respond")
    assert r.http_version == 3


def test_directives_nginx_1_22_still_takes_are_ignored(sws, pki):
    # a configuration brought from nginx 1.22 starts: a warning each
    s = t.launch(sws, pki, listen="http2",
                 server="        http2_push_preload on;\n        http2_recv_timeout 30s;\n"
                        "        http2_streams_index_size 32;\n"
                        "        location /p/ { http2_push /style.css; return 200 p; }")
    log = s.stderr() + s.error_log()
    for name in ("http2_push_preload", "http2_recv_timeout", "http2_streams_index_size",
                 "http2_push"):
        assert '[warn]' in log and 'the "%s" directive is obsolete, ignored' % name in log, log
    assert get(s, "/p/x").status == 200


def test_no_h2_without_http2(sws, pki):
    s = t.launch(sws, pki)
    r = get(s, "/respond")
    assert r.status == 200 and r.http_version == 2


def test_idle_timeout_goaway(sws, pki):
    s = t.launch(sws, pki, listen="http2", server="        http2_idle_timeout 1s;")
    with h2raw.H2(s.port, tls=True) as c:
        c.response(c.get("/respond"))
        start = time.monotonic()
        g = c.goaway(timeout=5)
        assert g is not None and g.error_code == h2raw.NO_ERROR
        assert 0.7 < time.monotonic() - start < 4
        assert c.closed_within(3)


def test_keepalive_requests_limits_streams(sws, pki):
    s = t.launch(sws, pki, listen="http2", server="        keepalive_requests 3;")
    with h2raw.H2(s.port, tls=True) as c:
        for _ in range(3):
            hdrs, body, frames = c.response(c.get("/respond"))
            assert body == b"Hello, world!"
        g = [f for f in frames if isinstance(f, h2raw.GoAwayFrame)] or [c.goaway(timeout=3)]
        assert g[0] is not None and g[0].error_code == h2raw.NO_ERROR
        assert g[0].last_stream_id == 5


def test_graceful_shutdown_finishes_streams(sws, pki):
    s = t.launch(sws, pki, listen="http2", files=FILES)
    with h2raw.H2(s.port, tls=True, settings={h2raw.INITIAL_WINDOW_SIZE: 65535}) as c:
        sid = c.get("/big.bin")
        first = c.frames(timeout=3, until=lambda f: isinstance(f, h2raw.DataFrame))
        assert any(isinstance(f, h2raw.DataFrame) for f in first)
        s.signal(signal.SIGQUIT)
        # The download goes on to the end; a GOAWAY comes on the way.
        hdrs, body, frames = c.response(sid, timeout=30)
        got = first + frames
        data = b"".join(f.data for f in got if isinstance(f, h2raw.DataFrame))
        assert len(data) == len(BIG)
        # RFC 9113 6.8: first a notice (the largest stream id), then, once
        # a PING came back (this client answers none: after
        # worker_shutdown_idle), the GOAWAY naming the last stream.
        g = [f for f in got if isinstance(f, h2raw.GoAwayFrame)]
        while len(g) < 2:
            g.append(c.goaway(timeout=3))
            assert g[-1] is not None, "no final GOAWAY: %r" % g
        assert [f.error_code for f in g] == [h2raw.NO_ERROR] * 2
        assert g[0].last_stream_id == 2**31 - 1
        assert g[1].last_stream_id == sid
        assert c.closed_within(5)
    assert s.wait_exit(10) == 0


def test_client_reset_is_logged_499(sws, pki):
    s = t.launch(sws, pki, listen="http2", files=FILES, http=LOG_H2)
    with h2raw.H2(s.port, tls=True, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        sid = c.get("/big.bin")
        c.frames(timeout=1, until=lambda f: isinstance(f, h2raw.HeadersFrame))
        c.send_frame(h2raw.RstStreamFrame(sid, error_code=h2raw.CANCEL))
        sid2 = c.get("/respond")
        c.send_frame(h2raw.WindowUpdateFrame(sid2, window_increment=65535))
        hdrs, body, _ = c.response(sid2)
        assert body == b"Hello, world!"
    assert h.wait_for(lambda: "GET /big.bin HTTP/2.0 200 0" in h2log(s)), h2log(s)
