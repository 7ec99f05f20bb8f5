"""What the client sees when the upstream fails: 502 for refused or
invalid, 504 for timeouts, a cut response (never one that looks complete,
never a hang) when the server dies mid-body; and what the upstream sees
when the client goes away."""
import socket
import time

import swsharness as h
from proxyorigin import pattern


def test_refused_502(sws):
    port = h.free_port()
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % port)
    r = h.curl(srv.url("/x"))
    assert r.status == 502 and b"502 Bad Gateway" in r.body
    assert "connect() to 127.0.0.1:%d failed" % port in srv.error_log()


def test_refused_unix_502(sws, tmp_path):
    srv = sws(server="location / { proxy_pass http://unix:%s/none.sock; }" % tmp_path)
    assert h.curl(srv.url("/x")).status == 502


def test_invalid_response_502(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    assert h.curl(srv.url("/garbage")).status == 502
    assert "invalid status line" in srv.error_log()
    assert h.curl(srv.url("/drop")).status == 502


def test_invalid_headers_502(sws):
    """A hand-made server that answers with broken framing."""
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Header\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: " + b"a" * 20000 + b"\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX: a\x01b\r\n\r\n",
    ]
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)
    ls.settimeout(5)

    def serve(stop):
        for a in answers:
            c, _ = ls.accept()
            c.recv(65536)
            c.sendall(a)
            c.close()
    bg = h.Background(serve)
    bg.start()
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % ls.getsockname()[1])
    for _ in answers:
        assert h.curl(srv.url("/x")).status == 502
    bg.finish()
    ls.close()


def test_read_timeout_504(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_read_timeout 300ms; }" % o.addr)
    t0 = time.monotonic()
    r = h.curl(srv.url("/delay/2000"))
    assert r.status == 504 and time.monotonic() - t0 < 1.5
    assert "timed out" in srv.error_log()


def test_connect_timeout_504(sws):
    # A listener that never accepts, with its queue full: SYNs are dropped.
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(0)
    port = ls.getsockname()[1]
    fillers = []
    for _ in range(8):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(s)
    time.sleep(0.1)
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; proxy_connect_timeout 300ms; }"
              % port)
    t0 = time.monotonic()
    r = h.curl(srv.url("/x"))
    assert r.status == 504 and time.monotonic() - t0 < 2
    assert "timed out connecting" in srv.error_log()
    for s in fillers:
        s.close()
    ls.close()


def test_timeout_mid_body_cuts(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_read_timeout 300ms; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/delaybody/2000"))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        t0 = time.monotonic()
        rest = c.read_until_close(timeout=3)
        assert time.monotonic() - t0 < 1.5
        assert rest.split(b"\r\n\r\n", 1)[1] == b""       # Content-Length 5, nothing came


def test_cut_length_response(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/cut/100000"))
        assert c.read_line().startswith(b"HTTP/1.1 200")
        data = c.read_until_close(timeout=3)
        head, body = data.split(b"\r\n\r\n", 1)
        assert b"Content-Length: 100000" in head
        assert len(body) == 50000 and body == pattern(50000)
    assert "closed the connection" in srv.error_log()


def test_cut_chunked_response(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/cutchunked"))
        data = c.read_until_close(timeout=3)
        assert b"Transfer-Encoding: chunked" in data
        assert data.endswith(b"5\r\nhello\r\n")           # no last chunk
        assert b"0\r\n\r\n" not in data.split(b"\r\n\r\n", 1)[1]


def test_cut_close_delimited_to_http10(sws, origin):
    """The one case a cut can't be told from an end (as with nginx): the
    origin's close ends a close-delimited response normally."""
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.exchange(srv.port, h.request("GET", "/close/1000", version="HTTP/1.0"))
    assert r.status == 200 and r.body == pattern(1000)


def test_client_abort_before_response(sws, origin):
    o = origin()
    srv = sws(access_log="@TMP@/access.log",
              server="location / { proxy_pass http://%s; }" % o.addr)
    c = h.Conn(srv.port)
    c.send(h.request("GET", "/delay/1500"))
    assert h.wait_for(lambda: o.accepted == 1, 3)
    c.close()
    assert h.wait_for(lambda: " 499 " in srv.access_log(), 3)
    # the upstream connection was closed, not kept: the next request opens one
    time.sleep(1.7)
    assert h.curl(srv.url("/name")).status == 200
    assert o.accepted == 2


def test_client_abort_ignored(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_ignore_client_abort on; }"
              % o.addr)
    c = h.Conn(srv.port)
    c.send(h.request("GET", "/delay/500"))
    assert h.wait_for(lambda: o.accepted == 1, 3)
    c.close()
    time.sleep(0.8)
    # the response was read to its end: the connection went back to the pool
    assert h.curl(srv.url("/name")).status == 200
    assert o.accepted == 1


def test_client_abort_mid_response(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    c = h.Conn(srv.port, rcvbuf=4096)
    c.send(h.request("GET", "/big/50000000"))
    assert c.read_line().startswith(b"HTTP/1.1 200")
    c.sock.recv(10000)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    c.close()                                       # a reset
    # the origin's connection is closed (its send fails), not kept
    assert h.wait_for(lambda: len(o.conns) == 0, 5)
    assert h.curl(srv.url("/name")).status == 200
    assert o.accepted == 2


def test_error_page_for_502(sws):
    port = h.free_port()
    srv = sws(files={"html/oops.html": "friendly"},
              server="""error_page 502 /oops.html;
                        location = /oops.html { }
                        location / { proxy_pass http://127.0.0.1:%d; }""" % port)
    r = h.curl(srv.url("/x"))
    assert r.status == 502 and r.body == b"friendly"


def test_server_keeps_serving_after_errors(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_read_timeout 200ms; }" % o.addr)
    for path in ("/garbage", "/drop", "/cut/1000", "/delay/1000", "/cutchunked"):
        try:
            h.curl(srv.url(path), timeout=3)
        except Exception:
            pass
    with h.Conn(srv.port) as c:
        for _ in range(3):
            c.send(h.request("GET", "/len/10"))
            assert c.read_response().body == pattern(10)


# ------------------------------------------------------------ configuration

def test_config_errors(tmp_path):
    cases = [
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass http://no.such.host.invalid; } }",
         "in upstream"),
        ("upstream u { } server { listen 127.0.0.1:@PORT@; }", "no servers"),
        ("upstream u { server 127.0.0.1:1; } upstream u { server 127.0.0.1:2; }",
         "duplicate upstream"),
        ("upstream u { hash $uri; server 127.0.0.1:1; server 127.0.0.1:2 backup; }",
         "does not support backup"),
        ("server { listen 127.0.0.1:@PORT@; location ~ /x { proxy_pass http://127.0.0.1:1/y; } }",
         "regular expression"),
        # a URI part replaces the location's prefix: refused where there is
        # none, as nginx refuses it
        ("server { listen 127.0.0.1:@PORT@; location @x { proxy_pass http://127.0.0.1:1/y; } }",
         "inside a named location"),
        ("server { listen 127.0.0.1:@PORT@; location /x { if ($arg_a) { "
         "proxy_pass http://127.0.0.1:1/y; } } }", "inside an \"if\" statement"),
        ("server { listen 127.0.0.1:@PORT@; location /x { limit_except GET { "
         "proxy_pass http://127.0.0.1:1/y; } } }", "\"limit_except\" block"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass https://; } }",
         "invalid host"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass 127.0.0.1:1; } }",
         "http://"),
        ("upstream u { server 127.0.0.1:1 weight=0; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1 weight=; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1 max_fails=x; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1 fail_timeout=soon; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1; health_check timeout=x; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1; health_check uri=noslash; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1; health_check fails=0; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:1; health_check passes=0; }", "invalid parameter"),
        ("upstream u { server 127.0.0.1:99999; }", "invalid port"),
        ("upstream u { least_conn; hash $uri; server 127.0.0.1:1; }", "redefined"),
        ("upstream u { server 127.0.0.1:1; health_check interval=0; }", "invalid parameter"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_next_upstream error bogus; "
         "proxy_pass http://127.0.0.1:1; } }", "invalid value"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_set_header Content-Length 1; "
         "proxy_pass http://127.0.0.1:1; } }", "framing"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass http://127.0.0.1:1; "
         "proxy_pass http://127.0.0.1:2; } }", "duplicate"),
        ("server { listen 127.0.0.1:@PORT@; location / { respond 200; "
         "proxy_pass http://127.0.0.1:1; } }", "content handler"),
    ]
    h.assert_config_errors(tmp_path, cases)
