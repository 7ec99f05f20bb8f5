"""The headers module: add_header, add_trailer, expires (nginx's semantics)."""
import calendar
import email.utils
import os
import time

import pytest

import h2raw
import swsharness as h

MTIME = 1577934245          # 2020-01-02 03:04:05 UTC
FILES = {
    "html/a.txt": b"hello\n",
    "html/in/b.txt": b"bee\n",
    "html/own/c.txt": b"sea\n",
    "html/exp/e.txt": b"e\n",
    "html/tr/t.txt": b"trailed\n",
    "html/err/404.html": b"custom 404\n",
    "html/always/x.txt": b"x\n",
    "html/etag/x.txt": b"x\n",
}

HTTP = """
    add_header X-Http-Level http;
"""

SERVER = """
        listen 127.0.0.1:@PORT2@ http2;
        add_header X-Server-Level server;
        add_header X-Host "$host";
        location / { }
        location /in/ { }
        location /own/ {
            add_header X-Own own;
            add_header X-Uri "uri=$uri";
            add_header X-Empty "$http_x_absent";
        }
        location /always/ {
            add_header X-Safe safe;
            add_header X-Always yes always;
        }
        location = /ret200 { add_header X-Ret ret; return 200 "fixed"; }
        location = /ret404 { add_header X-Ret ret; add_header X-Ret-Always ret always;
                             return 404; }
        location = /ret302 { add_header X-Ret ret; return 302 /a.txt; }
        location = /ret201 { add_header X-Ret ret; return 201 "made"; }
        location = /ret500 { add_header X-Ret ret; return 500; }
        location /err/ {
            error_page 404 /err/404.html;
            add_header X-Err err;
            add_header X-Err-Always err always;
        }
        location /etag/ {
            add_header ETag '"mine"';
            add_header Last-Modified "Wed, 01 Jan 2020 00:00:00 GMT";
        }
        location = /etag/none { add_header ETag ""; add_header Last-Modified "";
                                alias @TMP@/html/etag/x.txt; }
        location /exp/ { expires 1h; }
        location = /exp/max { expires max; return 200 m; }
        location = /exp/epoch { expires epoch; return 200 e; }
        location = /exp/neg { expires -1; return 200 n; }
        location = /exp/off { expires off; return 200 o; }
        location = /exp/mod { expires modified 1d; alias @TMP@/html/exp/e.txt; }
        location = /exp/modret { expires modified 2h; return 200 nolm; }
        location = /exp/daily { expires @15h30m; return 200 d; }
        location = /exp/compound { expires "1d 2h30m"; return 200 c; }
        location = /exp/plus { expires +90m; return 200 p; }
        location = /exp/modplus { expires modified +1d; alias @TMP@/html/exp/e.txt; }
        location = /exp/404 { expires 1h; return 404; }
        location = /exp/var { expires $arg_e; return 200 v; }
        location = /exp/varmod { expires modified "${arg_e}"; alias @TMP@/html/exp/e.txt; }
        location /tr/ {
            add_trailer X-Trailer "t-$status";
            add_trailer X-Trailer-Always a always;
        }
        location = /tr/ret { add_trailer X-Ret-Trailer rt; return 200 "fixed"; }
        location = /tr/404 { add_trailer X-Safe-Trailer s; add_trailer X-T-Always a always;
                             return 404; }
        location = /tr/empty { add_trailer X-E "$http_x_absent"; add_trailer X-F f;
                               return 200 "y"; }
        location = /tr/nochunk { chunked_transfer_encoding off; add_trailer X-N n;
                                 return 200 "z"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(http=HTTP, server=SERVER, files=FILES, ports=2)
    os.utime(s.tmp / "html" / "exp" / "e.txt", (MTIME, MTIME))
    s.port2 = s.ports[1]
    return s


def raw(srv, path, method="GET", version="HTTP/1.1", headers=()):
    return h.exchange(srv.port, h.request(method, path, version=version, headers=headers),
                      method=method)


def read_chunked_with_trailers(c):
    """A chunked response read by hand: (head response, body, trailer pairs)."""
    while b"\r\n\r\n" not in c.buf:
        assert c._fill(), "closed in the head"
    i = c.buf.index(b"\r\n\r\n")
    head = c._take(i + 4).decode("latin-1").split("\r\n")
    fields = [ln.split(":", 1) for ln in head[1:] if ln]
    fields = [(k, v.strip()) for k, v in fields]
    assert ("Transfer-Encoding", "chunked") in fields, head
    body = b""
    while True:
        size = int(c.read_line().split(b";")[0], 16)
        if size == 0:
            break
        body += c.read_exact(size)
        assert c.read_line() == b""
    trailers = []
    while True:
        ln = c.read_line()
        if ln == b"":
            break
        k, v = ln.decode("latin-1").split(":", 1)
        trailers.append((k, v.strip()))
    return head[0], fields, body, trailers


def h1_trailers(srv, path, version="HTTP/1.1"):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", path, version=version))
        return read_chunked_with_trailers(c)


def h2_get(srv, path, method="GET"):
    """(response head pairs, body, trailer pairs or None) over cleartext HTTP/2."""
    with h2raw.H2(srv.port2) as c:
        sid = c.get(path, scheme="http", method=method)
        hdrs, body, frames = c.response(sid)
    blocks = [f for f in frames if isinstance(f, h2raw.HeadersFrame) and f.stream_id == sid]
    trailers = None
    if len(blocks) > 1:
        assert "END_STREAM" in blocks[-1].flags, frames
        trailers = blocks[-1].decoded
    datas = [f for f in frames if isinstance(f, h2raw.DataFrame) and f.stream_id == sid]
    return blocks[0].decoded, body, trailers, datas


# ---------------------------------------------------------------- add_header

def test_add_header_inherited_from_outer_levels(srv):
    r = h.curl(srv.url("/a.txt"))
    assert r.status == 200, r
    # the server has add_header of its own: the http level's are replaced
    assert r.header("X-Server-Level") == "server", r
    assert r.header("X-Http-Level") is None, r
    assert r.header("X-Host") == "127.0.0.1", r
    r = h.curl(srv.url("/in/b.txt"))
    assert r.header("X-Server-Level") == "server", r


def test_add_header_own_level_replaces_outer(srv):
    r = h.curl(srv.url("/own/c.txt"))
    assert r.status == 200, r
    assert r.header("X-Own") == "own", r
    assert r.header("X-Uri") == "uri=/own/c.txt", r
    assert r.header("X-Server-Level") is None and r.header("X-Host") is None, r


def test_add_header_not_on_errors_without_always(srv):
    r = h.curl(srv.url("/own/none"))
    assert r.status == 404, r
    assert r.header("X-Own") is None, r


def test_add_header_empty_value_adds_nothing(srv):
    r = raw(srv, "/own/c.txt")
    assert r.status == 200, r
    assert r.header("X-Empty") is None, r
    r = raw(srv, "/own/c.txt", headers=[("X-Absent", "present")])
    assert r.header("X-Empty") == "present", r


def test_add_header_variables_cannot_inject_fields(srv):
    # %0d%0a decodes into $uri: it must not start a field of its own
    r = raw(srv, "/own/x%0d%0aSet-Cookie:%20evil=1")
    assert r.header("Set-Cookie") is None, r
    r = raw(srv, "/own/c.txt%0d%0aSet-Cookie:%20evil=1")
    assert r.header("Set-Cookie") is None, r


def test_add_header_only_on_safe_statuses_unless_always(srv):
    r = h.curl(srv.url("/always/x.txt"))
    assert r.status == 200, r
    assert r.header("X-Safe") == "safe" and r.header("X-Always") == "yes", r
    r = h.curl(srv.url("/always/missing"))
    assert r.status == 404, r
    assert r.header("X-Safe") is None and r.header("X-Always") == "yes", r


@pytest.mark.parametrize("path,status,present", [
    ("/ret200", 200, True), ("/ret201", 201, True), ("/ret302", 302, True),
    ("/ret404", 404, False), ("/ret500", 500, False),
])
def test_add_header_on_fixed_responses(srv, path, status, present):
    r = raw(srv, path)
    assert r.status == status, r
    assert (r.header("X-Ret") == "ret") == present, r
    if path == "/ret404":
        assert r.header("X-Ret-Always") == "ret", r


def test_add_header_on_error_page(srv):
    r = h.curl(srv.url("/err/missing"))
    assert r.status == 404 and r.body == b"custom 404\n", r
    assert r.header("X-Err-Always") == "err", r
    assert r.header("X-Err") is None, r


def test_add_header_on_head_and_304(srv):
    r = raw(srv, "/always/x.txt", method="HEAD")
    assert r.status == 200 and r.header("X-Safe") == "safe", r
    etag = r.header("ETag")
    r = raw(srv, "/always/x.txt", headers=[("If-None-Match", etag)])
    assert r.status == 304, r
    assert r.header("X-Safe") == "safe", r


def test_add_header_over_http2(srv):
    head, body, trailers, _ = h2_get(srv, "/own/c.txt")
    assert trailers is None
    assert h2raw.status(head) == 200 and body == b"sea\n", head
    assert h2raw.header(head, "x-own") == "own", head
    assert h2raw.header(head, "x-uri") == "uri=/own/c.txt", head


def test_add_header_etag_and_last_modified_replace(srv):
    r = raw(srv, "/etag/x.txt")
    assert r.status == 200, r
    assert r.headers_all("ETag") == ['"mine"'], r
    assert r.headers_all("Last-Modified") == ["Wed, 01 Jan 2020 00:00:00 GMT"], r
    # conditional requests are decided on the file's own validators, before
    # add_header replaces them, as nginx 1.22 does (its not-modified filter
    # runs first): "mine" is not the file's tag, the file's tag is
    r = raw(srv, "/etag/x.txt", headers=[("If-None-Match", '"mine"')])
    assert r.status == 200, r
    st = os.stat(srv.tmp / "html" / "etag" / "x.txt")
    file_etag = '"%x-%x"' % (int(st.st_mtime), st.st_size)
    r = raw(srv, "/etag/x.txt", headers=[("If-None-Match", file_etag)])
    assert r.status == 304 and r.headers_all("ETag") == ['"mine"'], r
    r = raw(srv, "/etag/none")
    assert r.status == 200, r
    assert r.header("ETag") is None and r.header("Last-Modified") is None, r


def test_add_header_on_proxied_response_with_module_variable(sws, origin):
    o = origin()
    srv = sws(server="""
        location /name {
            proxy_pass http://127.0.0.1:%d;
            add_header X-Proxied "$proxy_host" always;
            add_header X-Safe-Only safe;
        }
        location /status/ {
            proxy_pass http://127.0.0.1:%d;
            add_header X-Proxied "$proxy_host" always;
            add_header X-Safe-Only safe;
        }
""" % (o.port, o.port))
    r = h.curl(srv.url("/name"))
    assert r.status == 200, r
    assert r.header("X-Proxied") == "127.0.0.1:%d" % o.port, r
    assert r.header("X-Safe-Only") == "safe", r
    r = h.curl(srv.url("/status/503"))
    assert r.status == 503, r
    assert r.header("X-Proxied") == "127.0.0.1:%d" % o.port, r
    assert r.header("X-Safe-Only") is None, r


# ---------------------------------------------------------------- expires

def _date(v):
    return calendar.timegm(email.utils.parsedate(v))


def test_expires_time(srv):
    before = int(time.time())
    r = raw(srv, "/exp/e.txt")
    after = int(time.time()) + 1
    assert r.status == 200, r
    assert r.header("Cache-Control") == "max-age=3600", r
    assert before + 3600 <= _date(r.header("Expires")) <= after + 3600, r


def test_expires_max_epoch_negative_off(srv):
    r = raw(srv, "/exp/max")
    assert r.header("Expires") == "Thu, 31 Dec 2037 23:55:55 GMT", r
    assert r.header("Cache-Control") == "max-age=315360000", r
    r = raw(srv, "/exp/epoch")
    assert r.header("Expires") == "Thu, 01 Jan 1970 00:00:01 GMT", r
    assert r.header("Cache-Control") == "no-cache", r
    r = raw(srv, "/exp/neg")
    assert r.header("Cache-Control") == "no-cache", r
    assert _date(r.header("Expires")) <= int(time.time()), r
    r = raw(srv, "/exp/off")
    assert r.header("Expires") is None and r.header("Cache-Control") is None, r


def test_expires_modified(srv):
    r = raw(srv, "/exp/mod")
    assert r.status == 200, r
    assert _date(r.header("Expires")) == MTIME + 86400, r
    # that moment has passed: no-cache
    assert r.header("Cache-Control") == "no-cache", r
    # no Last-Modified: counted from now, as nginx does
    before = int(time.time())
    r = raw(srv, "/exp/modret")
    assert r.header("Cache-Control") == "max-age=7200", r
    assert _date(r.header("Expires")) >= before + 7200, r


def test_expires_with_a_plus_sign(srv):
    # nginx takes an explicit "+" ("expires modified +24h" in its documentation)
    r = raw(srv, "/exp/plus")
    assert r.header("Cache-Control") == "max-age=5400", r
    r = raw(srv, "/exp/modplus")
    assert r.status == 200 and _date(r.header("Expires")) == MTIME + 86400, r


def test_expires_daily(srv):
    r = raw(srv, "/exp/daily")
    age = int(r.header("Cache-Control").split("=")[1])
    assert 0 < age <= 86400 + 3600, r
    exp = _date(r.header("Expires"))
    lt = time.localtime(exp)
    assert (lt.tm_hour, lt.tm_min, lt.tm_sec) == (15, 30, 0), r


def test_expires_compound_time(srv):
    r = raw(srv, "/exp/compound")
    assert r.header("Cache-Control") == "max-age=%d" % (86400 + 2 * 3600 + 30 * 60), r


def test_expires_from_variables(srv):
    r = raw(srv, "/exp/var?e=1h")
    assert r.header("Cache-Control") == "max-age=3600", r
    r = raw(srv, "/exp/var?e=epoch")
    assert r.header("Cache-Control") == "no-cache", r
    assert r.header("Expires") == "Thu, 01 Jan 1970 00:00:01 GMT", r
    r = raw(srv, "/exp/var?e=max")
    assert r.header("Cache-Control") == "max-age=315360000", r
    r = raw(srv, "/exp/var?e=off")
    assert r.status == 200 and r.header("Expires") is None, r
    # not an expires value: ignored, logged
    r = raw(srv, "/exp/var?e=soon")
    assert r.status == 200 and r.header("Expires") is None, r
    assert h.wait_file_contains(srv.error_log_path, '"expires": invalid value "soon"')
    r = raw(srv, "/exp/var")
    assert r.status == 200 and r.header("Expires") is None, r
    r = raw(srv, "/exp/varmod?e=2d")
    assert _date(r.header("Expires")) == MTIME + 2 * 86400, r
    r = raw(srv, "/exp/varmod?e=@1h")
    assert r.status == 200 and r.header("Expires") is None, r


def test_expires_not_on_errors(srv):
    r = raw(srv, "/exp/404")
    assert r.status == 404, r
    assert r.header("Expires") is None and r.header("Cache-Control") is None, r


def test_expires_replaces_the_origins_fields(sws, origin):
    o = origin()
    srv = sws(server="""
        location /text/ { proxy_pass http://127.0.0.1:%d; expires 10m; }
""" % o.port)
    r = h.curl(srv.url("/text/10?cc=private&expires=0"))
    assert r.status == 200, r
    assert r.headers_all("Cache-Control") == ["max-age=600"], r
    assert len(r.headers_all("Expires")) == 1 and r.header("Expires") != "0", r


# ---------------------------------------------------------------- add_trailer

def test_trailer_http11_static_file_goes_chunked(srv):
    line, fields, body, trailers = h1_trailers(srv, "/tr/t.txt")
    assert "200" in line and body == b"trailed\n", (line, fields)
    assert not [k for k, _ in fields if k.lower() == "content-length"], fields
    assert ("X-Trailer", "t-200") in trailers, trailers
    assert ("X-Trailer-Always", "a") in trailers, trailers


def test_trailer_on_fixed_response(srv):
    line, fields, body, trailers = h1_trailers(srv, "/tr/ret")
    assert body == b"fixed" and trailers == [("X-Ret-Trailer", "rt")], trailers


def test_trailer_only_always_on_errors(srv):
    line, fields, body, trailers = h1_trailers(srv, "/tr/404")
    assert "404" in line, line
    assert trailers == [("X-T-Always", "a")], trailers


def test_trailer_empty_value_left_out(srv):
    _, _, body, trailers = h1_trailers(srv, "/tr/empty")
    assert trailers == [("X-F", "f")], trailers


def test_trailer_not_for_http10_head_or_without_chunked(srv):
    r = raw(srv, "/tr/t.txt", version="HTTP/1.0")
    assert r.status == 200 and r.body == b"trailed\n", r
    assert r.header("Content-Length") == "8" and r.header("Transfer-Encoding") is None, r
    r = raw(srv, "/tr/t.txt", method="HEAD")
    assert r.status == 200 and r.header("Transfer-Encoding") is None, r
    r = raw(srv, "/tr/nochunk")
    assert r.status == 200 and r.body == b"z", r
    assert r.header("Content-Length") == "1", r


def test_trailer_keepalive_goes_on(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/tr/t.txt") + h.request("GET", "/a.txt"))
        _, _, body, trailers = read_chunked_with_trailers(c)
        assert body == b"trailed\n" and trailers, trailers
        r = c.read_response()
        assert r.status == 200 and r.body == b"hello\n", r


def test_trailer_http2(srv):
    head, body, trailers, datas = h2_get(srv, "/tr/t.txt")
    assert h2raw.status(head) == 200 and body == b"trailed\n", head
    # the trailers' HEADERS frame ends the stream, not the last DATA frame
    assert datas and not any("END_STREAM" in f.flags for f in datas), datas
    assert trailers is not None, head
    assert ("x-trailer", "t-200") in trailers and ("x-trailer-always", "a") in trailers, \
        trailers
    head, body, trailers, _ = h2_get(srv, "/tr/ret")
    assert body == b"fixed" and trailers == [("x-ret-trailer", "rt")], trailers


def test_trailer_http2_head_has_none(srv):
    head, body, trailers, datas = h2_get(srv, "/tr/t.txt", method="HEAD")
    assert h2raw.status(head) == 200 and trailers is None and not datas, head


# ---------------------------------------------------------------- configuration

def test_config_errors_name_file_and_line(tmp_path):
    cases = [
        ("    add_header \"\" v;\n", "invalid header name \"\" in \"add_header\" directive in"),
        ("    add_header X:Y v;\n", "invalid header name \"X:Y\""),
        ("    add_header X v sometimes;\n", "invalid parameter \"sometimes\" in \"add_header\""),
        ("    add_header X \"a\nb\";\n", "invalid character in the value of \"X\""),
        ("    add_header X $nosuchvar;\n", "unknown variable"),
        ("    add_trailer X v never;\n", "invalid parameter \"never\" in \"add_trailer\""),
        ("    add_header X;\n", "invalid number of arguments in \"add_header\""),
        ("    expires soon;\n", "invalid value \"soon\" in \"expires\" directive in"),
        ("    expires 1x;\n", "invalid value \"1x\""),
        ("    expires 30m1h;\n", "invalid value \"30m1h\""),
        ("    expires modified max;\n", "invalid value \"max\""),
        ("    expires later 1h;\n", "invalid value \"later\""),
        ("    expires @25h;\n", "must be less than 24 hours"),
        ("    expires @-1h;\n", "invalid value \"@-1h\""),
        ("    expires +-1h;\n", "invalid value \"+-1h\""),
        ("    expires @+1h;\n", "invalid value \"@+1h\""),
        ("    expires +;\n", "invalid value \"+\""),
        ("    expires modified @1h;\n", "daily time cannot be used with \"modified\""),
        ("    expires 1h;\n    expires 2h;\n", "\"expires\" directive is duplicate"),
        ("    expires $nosuchvar;\n", "unknown variable"),
        ("    expires modified;\n", "invalid value \"modified\""),
    ]
    for i, (http, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, http=http)
        assert rc not in (None, 0) and needle in out, (http, out)
        # the line is named: the http block's directives start at line 15
        assert "scalws.conf:" in out, out
        assert not listening, http
