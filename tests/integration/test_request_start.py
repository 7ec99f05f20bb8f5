"""One request start for every protocol: the rules of RFC 9110 on a request
head (its authority and Host, Content-Length, Expect, CONNECT, OPTIONS *)
are written once (sws_http_process_request_headers), so the same faulty
head gets the same answer over HTTP/1.1 (raw socket) and over HTTP/2 (raw
frames, cleartext prior knowledge, on the same port). Where a protocol
has a rule of its own (RFC 9112 framing; RFC 9113 malformed requests: a
stream error PROTOCOL_ERROR), the row says what each one answers.

Then the questions a handler asks of the client side through the
protocol table: has the client gone (a proxied request whose client left
is logged 499 and its upstream connection closed, over both protocols),
and can file data go with sendfile().
"""
import socket
import time

import pytest

import echomod
import h2raw
import swsharness as h

SERVERS = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name other.test;
        http2 on;
        location / { respond 200 "other server"; }
    }
"""

RESET = "reset"           # h2: RST_STREAM PROTOCOL_ERROR on the stream


@pytest.fixture(scope="module")
def srv(sws_module, tmp_path_factory):
    return sws_module(servers=SERVERS, access_log="@TMP@/access.log",
                      load=echomod.build(tmp_path_factory.mktemp("echo")),
                      server="http2 on;\n"
                             "        location /echo { echo; }\n"
                             "        location /sf { echo_sendfile; }\n"
                             "        location /nosf { sendfile off; echo_sendfile; }\n")


# ---------------------------------------------------------------- the two clients

def h1(srv, method="GET", target="/echo", host="localhost", fields=(), body=b"",
       version="HTTP/1.1"):
    """Send one HTTP/1.1 head (fields as (name, value)); the response."""
    data = b"%s %s %s\r\n" % (method.encode(), target.encode(), version.encode())
    if host is not None:
        data += b"Host: %s\r\n" % host.encode()
    for n, v in fields:
        data += b"%s: %s\r\n" % (n.encode(), v.encode())
    data += b"\r\n" + body
    with h.Conn(srv.port) as c:
        c.send(data)
        return c.read_response(method)


def h2(srv, method="GET", path="/echo", authority="localhost", fields=(), body=b""):
    """One HTTP/2 request (authority None: no :authority, path None: no
    :path); (status or RESET, headers, body)."""
    pseudo = [(":method", method)]
    if method != "CONNECT":             # RFC 9113 8.5: no :scheme, no :path
        pseudo.append((":scheme", "http"))
    if authority is not None:
        pseudo.append((":authority", authority))
    if path is not None:
        pseudo.append((":path", path))
    with h2raw.H2(srv.port) as c:
        sid = c.headers(pseudo + [(n.lower(), v) for n, v in fields], end_stream=not body)
        if body:
            c.data(sid, body, end_stream=True)
        hdrs, data, frames = c.response(sid, timeout=5)
        if h2raw.rst_code(frames, sid) is not None:
            assert h2raw.rst_code(frames, sid) == h2raw.PROTOCOL_ERROR, frames
            assert not hdrs, hdrs
            return RESET, [], b""
        # The connection goes on after the answer, whatever it was.
        hdrs2, data2, _ = c.response(c.headers([(":method", "GET"), (":scheme", "http"),
                                                (":authority", "localhost"),
                                                (":path", "/echo")]), timeout=5)
        assert h2raw.status(hdrs2) == 200, hdrs2
        # the final response's (after a 100, if one came)
        return [int(v) for k, v in hdrs if k == ":status"][-1], hdrs, data


# ---------------------------------------------------------------- one table, two protocols
#
# (requirement, HTTP/1.1 request kw, its status, HTTP/2 request kw, its answer)

ROWS = [
    # RFC 9110 7.2, RFC 9112 3.2, RFC 9113 8.3.1: the authority
    ("a Host with a bad byte is 400",
     dict(host="exa$mple"), 400, dict(authority=None, fields=[("host", "exa$mple")]), 400),
    ("a Host with an empty label is 400",
     dict(host="a..b"), 400, dict(authority=None, fields=[("host", "a..b")]), 400),
    ("an authority with an empty label is 400",
     dict(host="localhost", target="http://a..b/echo"), 400, dict(authority="a..b"), 400),
    ("a port that is not a number is 400",
     dict(host="localhost:8x"), 400, dict(authority="localhost:8x"), (400, RESET)),
    # (nghttp2 holds these h2 requests malformed before the core sees them)
    ("no authority at all is 400",
     dict(host=None), 400, dict(authority=None), RESET),
    ("an empty Host is 400 (nginx's answer)",
     dict(host=""), 400, dict(authority=None, fields=[("host", "")]), (400, RESET)),
    ("two Host fields are 400",
     dict(fields=[("Host", "localhost")]), 400,
     dict(authority=None, fields=[("host", "localhost"), ("host", "localhost")]), RESET),
    # the protocols' own rule on a Host beside the target's authority:
    # h1 takes the authority (a valid Host is ignored), h2 requires them
    # to agree (a malformed request)
    ("an invalid Host beside a valid authority",
     dict(host="a..b", target="http://localhost/echo"), 400,
     dict(authority="localhost", fields=[("host", "a..b")]), RESET),
    # RFC 9110 8.6: Content-Length
    ("differing Content-Length fields",
     dict(method="POST", fields=[("Content-Length", "3"), ("Content-Length", "4")],
          body=b"abc"), 400,
     dict(method="POST", fields=[("content-length", "3"), ("content-length", "4")],
          body=b"abc"), RESET),
    ("two identical Content-Length fields (nginx: 400)",
     dict(method="POST", fields=[("Content-Length", "3"), ("Content-Length", "3")],
          body=b"abc"), 400,
     dict(method="POST", fields=[("content-length", "3"), ("content-length", "3")],
          body=b"abc"), (400, RESET)),
    ("a Content-Length list of one value (nginx: 400)",
     dict(method="POST", fields=[("Content-Length", "3, 3")], body=b"abc"), 400,
     dict(method="POST", fields=[("content-length", "3, 3")], body=b"abc"), (400, RESET)),
    ("a Content-Length that is not a number",
     dict(method="POST", fields=[("Content-Length", "3x")], body=b"abc"), 400,
     dict(method="POST", fields=[("content-length", "3x")], body=b"abc"), RESET),
    # RFC 9112 6.3 (h1) / 9113 8.2.2 (h2): Transfer-Encoding
    ("Transfer-Encoding with Content-Length",
     dict(method="POST", fields=[("Content-Length", "3"), ("Transfer-Encoding", "chunked")],
          body=b"0\r\n\r\n"), 400,
     dict(method="POST", fields=[("transfer-encoding", "chunked")], body=b"abc"), RESET),
    # RFC 9110 10.1.1: Expect (another expectation MAY be a 417; nginx
    # ignores it, and so do we)
    ("an expectation other than 100-continue is ignored",
     dict(method="POST", fields=[("Expect", "something-else"), ("Content-Length", "3")],
          body=b"abc"), 200,
     dict(method="POST", fields=[("expect", "something-else")], body=b"abc"), 200),
    ("an expectation other than 100-continue, without a body, is ignored",
     dict(fields=[("Expect", "202-accepted")]), 200,
     dict(fields=[("expect", "202-accepted")]), 200),
    ("two Expect fields are 400",
     dict(fields=[("Expect", "100-continue"), ("Expect", "100-continue")]), 400,
     dict(fields=[("expect", "100-continue"), ("expect", "100-continue")]), 400),
    ("two X-Request-Id fields are 400",
     dict(fields=[("X-Request-Id", "a"), ("X-Request-Id", "b")]), 400,
     dict(fields=[("x-request-id", "a"), ("x-request-id", "b")]), 400),
    # RFC 9110 9.3.6: CONNECT, to a server that is not a proxy
    ("CONNECT is 405 with Allow",
     dict(method="CONNECT", target="localhost:443", host="localhost:443"), 405,
     dict(method="CONNECT", authority="localhost:443", path=None), 405),
]


def row_ids(rows):
    return [r[0] for r in rows]


def statuses(exp):
    return exp if isinstance(exp, tuple) else (exp,)


@pytest.mark.parametrize("what,req1,exp1,req2,exp2", ROWS, ids=row_ids(ROWS))
def test_same_rule_over_http1(srv, what, req1, exp1, req2, exp2):
    r = h1(srv, **req1)
    assert r is not None and r.status == exp1, (what, r)
    if exp1 >= 400:
        # A head found wrong: answered, then the connection is closed.
        assert r.header("Connection") == "close", (what, r)
    if exp1 == 405:
        assert r.header("Allow") == "GET, HEAD, POST, OPTIONS", r


@pytest.mark.parametrize("what,req1,exp1,req2,exp2", ROWS, ids=row_ids(ROWS))
def test_same_rule_over_http2(srv, what, req1, exp1, req2, exp2):
    status, hdrs, _ = h2(srv, **req2)
    assert status in statuses(exp2), (what, status, hdrs)
    if status == 405:
        assert h2raw.header(hdrs, "allow") == "GET, HEAD, POST, OPTIONS", hdrs


def test_options_asterisk_on_both(srv):
    r = h1(srv, method="OPTIONS", target="*")
    assert r.status == 200 and r.header("Allow") == "GET, HEAD, POST, OPTIONS", r
    status, hdrs, _ = h2(srv, method="OPTIONS", path="*")
    assert status == 200 and h2raw.header(hdrs, "allow") == "GET, HEAD, POST, OPTIONS", hdrs
    # "*" is for OPTIONS only (RFC 9112 3.2.4): the same parser says so
    assert h1(srv, method="GET", target="*").status == 400
    assert h2(srv, method="GET", path="*")[0] in (400, RESET)


@pytest.mark.parametrize("proto", ["h1", "h2"])
def test_host_picks_the_server_on_both(srv, proto):
    """The authority chooses the virtual server, lower-cased, without port
    or final dot, from Host or the target (absolute-form, :authority)."""
    for host, target, authority in (("Other.Test", "/", None),
                                    ("localhost", "http://OTHER.test:80/", "other.test:80"),
                                    ("other.test.", "/", "other.test.")):
        if proto == "h1":
            r = h1(srv, host=host, target=target)
            assert (r.status, r.body) == (200, b"other server"), (host, target, r)
        else:
            kw = dict(authority=authority, path="/")
            if authority is None:
                kw["fields"] = [("host", host)]
            status, _, body = h2(srv, **kw)
            assert (status, body) == (200, b"other server"), (host, authority, body)


def test_expect_100_continue_on_both(srv):
    """The one expectation there is: met when the body is read."""
    with h.Conn(srv.port) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
               b"Content-Length: 3\r\n\r\n")
        assert c.read_line().startswith(b"HTTP/1.1 100 ")
        assert c.read_line() == b""
        c.send(b"abc")
        r = c.read_response("POST")
        assert r.status == 200 and r.body == b"abc", r
    # HTTP/1.0 does not know 100: the body comes without waiting for it
    r = h1(srv, method="POST", version="HTTP/1.0",
           fields=[("Expect", "100-continue"), ("Content-Length", "3")], body=b"abc")
    assert r.status == 200 and r.body == b"abc", r
    status, hdrs, body = h2(srv, method="POST", fields=[("expect", "100-continue")],
                            body=b"abc")
    assert [v for k, v in hdrs if k == ":status"] == ["100", "200"] and body == b"abc", hdrs


def test_plain_request_on_a_tls_port_is_still_processed(sws, pki):
    """The session knows it was plain HTTP on a TLS port: 400 whatever the
    head, after the same processing (its own errors first)."""
    import tlsutil as t
    s = t.launch(sws, pki)
    r = h.exchange(s.port, h.request("GET", "/"))
    assert r.status == 400 and r.header("Connection") == "close", r
    r = h.exchange(s.port, h.request("CONNECT", "localhost:443", host="localhost:443"))
    assert r.status == 405, r


def test_connection_requests_counted_by_the_session(sws):
    """$connection_requests counts the requests of the client session, on
    HTTP/1.1 keep-alive as on HTTP/2 streams."""
    s = sws(http='log_format n "$connection_requests $server_protocol";', access_log="off",
            server="http2 on; access_log @TMP@/access.log n;\n"
                   "        location / { respond 200 ok; }")
    with h.Conn(s.port) as c:
        for _ in range(3):
            c.send(h.request("GET", "/"))
            assert c.read_response().status == 200
    with h2raw.H2(s.port) as c:
        for _ in range(2):
            hdrs, _, _ = c.response(c.get("/", scheme="http"))
            assert h2raw.status(hdrs) == 200
    assert h.wait_for(lambda: len(s.access_log().splitlines()) == 5, 3), s.access_log()
    assert s.access_log().splitlines() == ["1 HTTP/1.1", "2 HTTP/1.1", "3 HTTP/1.1",
                                           "1 HTTP/2.0", "2 HTTP/2.0"]


# ---------------------------------------------------------------- the client side, asked

def test_sendfile_is_asked_of_the_protocol(srv):
    """sws_http_sendfile_enabled: the location's sendfile, and a protocol
    that sends files that way (HTTP/1 on a plain socket; not HTTP/2)."""
    assert h1(srv, target="/sf").body == b"sendfile=1"
    assert h1(srv, target="/nosf").body == b"sendfile=0"
    assert h2(srv, path="/sf")[2] == b"sendfile=0"
    assert h2(srv, path="/nosf")[2] == b"sendfile=0"


@pytest.fixture
def held(sws):
    """A server proxying /hold to an origin that accepts and never
    answers; origin.conns: the connections it accepted (open or not)."""
    hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hold.bind(("127.0.0.1", 0))
    hold.listen(16)
    hold.settimeout(5)
    s = sws(access_log="@TMP@/access.log",
            server="http2 on;\n"
                   "        location /hold { proxy_pass http://127.0.0.1:%d;\n"
                   "                         proxy_read_timeout 20s; }"
                   % hold.getsockname()[1])
    yield s, hold
    hold.close()


def origin_sees_close(conn, timeout=5.0):
    conn.settimeout(timeout)
    try:
        while True:
            if not conn.recv(4096):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_client_gone_over_http1(held):
    s, hold = held
    c = h.Conn(s.port)
    c.send(h.request("GET", "/hold"))
    up, _ = hold.accept()
    c.close()
    assert origin_sees_close(up), "the upstream connection was kept"
    assert h.wait_for(lambda: " 499 " in s.access_log(), 3), s.access_log()
    up.close()


def test_client_gone_over_http2(held):
    """The client resets its stream: the upstream connection goes, the
    request is logged 499, the HTTP/2 connection goes on."""
    s, hold = held
    with h2raw.H2(s.port) as c:
        sid = c.get("/hold", scheme="http")
        up, _ = hold.accept()
        c.send_frame(h2raw.RstStreamFrame(sid, error_code=h2raw.CANCEL))
        assert origin_sees_close(up), "the upstream connection was kept"
        assert h.wait_for(lambda: " 499 " in s.access_log(), 3), s.access_log()
        up.close()
        # and the connection itself is gone: the other stream goes too
        sid = c.get("/hold", scheme="http")
        up, _ = hold.accept()
    assert origin_sees_close(up), "the upstream connection outlived the client's"
    up.close()
