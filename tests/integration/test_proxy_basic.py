"""proxy_pass: the request the origin gets (line, URI rules, headers), the
response the client gets (status, headers, bodies in every framing), and
request bodies (buffered, streamed, chunked, dropped)."""
import json
import socket
import time

import swsharness as h
from proxyorigin import pattern


def echo(resp):
    assert resp.status == 200, resp
    return json.loads(resp.body)


def hdr(req, name):
    """Values of a header the origin got (case-insensitive), in order."""
    return [v for k, v in req["headers"] if k.lower() == name.lower()]


# ------------------------------------------------------------ the request

def test_get_passes_through(sws, origin):
    o = origin("a")
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.curl(srv.url("/echo?x=1&y=%20"))
    req = echo(r)
    assert req["method"] == "GET"
    assert req["target"] == "/echo?x=1&y=%20"
    assert req["version"] == "HTTP/1.1"
    assert r.header("X-Origin") == "a"
    assert r.header("Server").startswith("scalws")      # the origin's is hidden
    assert r.header("Content-Type") == "application/json"


def test_default_forwarded_headers(sws, origin):
    """As nginx: a plain proxy_pass adds no X-Forwarded-* of its own, and
    the client's pass as they came (proxy_set_header makes them)."""
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.curl(srv.url("/echo"), headers=["X-Forwarded-For: 10.0.0.1",
                                          "X-Forwarded-For: 10.0.0.2",
                                          "X-Forwarded-Proto: https"])
    req = echo(r)
    assert hdr(req, "Host") == [o.addr]
    assert hdr(req, "X-Forwarded-For") == ["10.0.0.1", "10.0.0.2"]
    assert hdr(req, "X-Forwarded-Proto") == ["https"]
    req = echo(h.curl(srv.url("/echo")))
    assert hdr(req, "X-Forwarded-For") == [] and hdr(req, "X-Forwarded-Proto") == []
    assert hdr(req, "X-Request-Id") == []
    assert hdr(req, "Connection") == []                   # 1.1: keep-alive by default


def test_request_id_forwarded(sws, origin):
    o = origin()
    srv = sws(server="request_id on; location / { proxy_pass http://%s; }" % o.addr)
    # a well-formed id of the client is kept (the core's rule), once
    r = h.curl(srv.url("/echo"), headers=["X-Request-Id: from-client"])
    assert hdr(echo(r), "X-Request-Id") == ["from-client"]
    # a bad one is replaced by the server's
    r = h.curl(srv.url("/echo"), headers=["X-Request-Id: bad id!"])
    rid = hdr(echo(r), "X-Request-Id")
    assert len(rid) == 1 and len(rid[0]) == 32
    assert r.header("X-Request-Id") == rid[0]


def test_hop_by_hop_request_headers_stripped(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    raw = h.request("GET", "/echo", headers=[
        ("Connection", "X-Secret, keep-alive"), ("X-Secret", "s"), ("Keep-Alive", "300"),
        ("TE", "trailers"), ("Trailer", "X-T"), ("Upgrade", "foo/1"),
        ("Proxy-Authorization", "Basic eA=="), ("Proxy-Connection", "keep-alive"),
        ("X-Kept", "yes")])
    req = json.loads(h.exchange(srv.port, raw).body)
    names = [k.lower() for k, v in req["headers"]]
    for n in ("connection", "x-secret", "keep-alive", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-connection"):
        assert n not in names, n
    assert hdr(req, "X-Kept") == ["yes"]


def test_proxy_set_header(sws, origin):
    o = origin()
    srv = sws(server="""
        location / {
            proxy_pass http://%s;
            proxy_set_header Host $host;
            proxy_set_header X-Static "fixed value";
            proxy_set_header X-Dyn "uri=$uri args=$args";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header User-Agent "";
            proxy_set_header X-Empty $http_x_nothing;
        }""" % o.addr)
    r = h.curl(srv.url("/echo?q=1"), headers=["Host: example.org", "X-Forwarded-For: 1.2.3.4"])
    req = echo(r)
    assert hdr(req, "Host") == ["example.org"]
    assert hdr(req, "X-Static") == ["fixed value"]
    assert hdr(req, "X-Dyn") == ["uri=/echo args=q=1"]
    assert hdr(req, "X-Forwarded-For") == ["1.2.3.4, 127.0.0.1"]
    assert hdr(req, "User-Agent") == []
    assert hdr(req, "X-Empty") == []


def test_proxy_set_header_inheritance(sws, origin):
    o = origin()
    srv = sws(server="""
        proxy_set_header X-Level server;
        location /inherit/ { proxy_pass http://%s/echo/; }
        location /own/ { proxy_pass http://%s/echo/; proxy_set_header X-Own own; }
        """ % (o.addr, o.addr))
    assert hdr(echo(h.curl(srv.url("/inherit/"))), "X-Level") == ["server"]
    req = echo(h.curl(srv.url("/own/")))
    assert hdr(req, "X-Own") == ["own"] and hdr(req, "X-Level") == []


def test_pass_request_headers_off(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_pass_request_headers off; }"
              % o.addr)
    req = echo(h.curl(srv.url("/echo"), headers=["X-Client: 1"]))
    assert hdr(req, "X-Client") == [] and hdr(req, "Host") == [o.addr]


def test_host_of_upstream_block_and_port(sws, origin):
    o = origin()
    srv = sws(http="upstream backend { server %s; }" % o.addr,
              server="""location /b/ { proxy_pass http://backend/; }
                        location /p/ { proxy_pass http://%s/; }""" % o.addr)
    assert hdr(echo(h.curl(srv.url("/b/echo"))), "Host") == ["backend"]
    assert hdr(echo(h.curl(srv.url("/p/echo"))), "Host") == [o.addr]


# ------------------------------------------------------------ URI rules

def test_uri_replacement(sws, origin):
    o = origin()
    srv = sws(server="""
        location /one/ { proxy_pass http://%s/echo/two/; }
        location /root/ { proxy_pass http://%s/; }
        location = /exact { proxy_pass http://%s/echo/exact-target; }
        location /asis/ { proxy_pass http://%s; }
        """ % (o.addr, o.addr, o.addr, o.addr))
    assert echo(h.curl(srv.url("/one/a/b?x=1")))["target"] == "/echo/two/a/b?x=1"
    # decoded and normalised, then escaped again
    assert echo(h.curl(srv.url("/one/a%20b/../c")))["target"] == "/echo/two/c"
    assert echo(h.curl(srv.url("/one/%41%3f")))["target"] == "/echo/two/A%3F"
    assert echo(h.curl(srv.url("/root/echo")))["target"] == "/echo"
    assert echo(h.curl(srv.url("/exact?k=v")))["target"] == "/echo/exact-target?k=v"
    # without a URI part: as the client sent it
    r = h.exchange(srv.port, h.request("GET", "/asis/%7Efoo/./x?a=%20"))
    assert r.status == 404 and o.last().target == "/asis/%7Efoo/./x?a=%20"


def test_uri_absolute_form(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    raw = b"GET http://localhost/echo/abs?z=9 HTTP/1.1\r\nHost: localhost\r\n\r\n"
    req = json.loads(h.exchange(srv.port, raw).body)
    assert req["target"] == "/echo/abs?z=9"


def test_unix_socket_origin(sws, origin):
    o = origin("u", unix=True)
    srv = sws(server="""
        location /plain/ { proxy_pass http://unix:%s; }
        location /uri/ { proxy_pass http://unix:%s:/echo/; }
        """ % (o.unix, o.unix))
    r = h.curl(srv.url("/plain/x"))
    assert r.status == 404 and r.header("X-Origin") == "u"
    req = echo(h.curl(srv.url("/uri/q")))
    assert req["target"] == "/echo/q"
    assert hdr(req, "Host") == ["localhost"]


# ------------------------------------------------------------ the response

def test_response_header_rules(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.exchange(srv.port, h.request("GET", "/headers"))
    assert r.status == 200
    names = [k.lower() for k, v in r.headers]
    for n in ("x-hop", "keep-alive", "proxy-connection", "trailer", "x-pad", "x-accel-expires"):
        assert n not in names, n
    assert r.header("Server").startswith("scalws")
    assert r.header("Date") != "Mon, 01 Jan 2001 00:00:00 GMT"
    assert r.header("X-Custom") == "kept"
    assert r.headers_all("Set-Cookie") == ["a=1", "b=2"]
    assert r.header("Content-Type") == "text/x-test"
    assert r.header("ETag") == '"e1"'
    assert r.header("Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT"
    assert r.header("Connection") is None
    assert r.body == b"headers\n"


def test_hide_and_pass_header(sws, origin):
    o = origin()
    srv = sws(server="""location / { proxy_pass http://%s;
                        proxy_hide_header X-Custom; proxy_pass_header Server; }""" % o.addr)
    r = h.exchange(srv.port, h.request("GET", "/headers"))
    assert r.header("X-Custom") is None
    assert r.headers_all("Server") == ["origin-server"]
    assert len(r.headers_all("Date")) == 1


def test_redirect_rewriting(sws, origin):
    o = origin()
    srv = sws(server="""
        location /one/ { proxy_pass http://%s/two/; }
        location /off/ { proxy_pass http://%s/two/; proxy_redirect off; }
        location /own/ { proxy_pass http://%s/two/; proxy_redirect http://%s/two/ /mine/; }
        """ % (o.addr, o.addr, o.addr, o.addr))
    # the origin's 302 points at http://<Host>/two/x?y=1
    assert h.curl(srv.url("/one/redirect")).status == 404     # route is /two/redirect
    srv2 = sws(server="""
        location /one/ { proxy_pass http://%s/; }
        location /off/ { proxy_pass http://%s/; proxy_redirect off; }
        location /own/ { proxy_pass http://%s/; proxy_redirect http://%s/two/ /mine/; }
        """ % (o.addr, o.addr, o.addr, o.addr))
    # rewritten to /one/two/x?y=1, then made absolute (absolute_redirect)
    r = h.curl(srv2.url("/one/redirect"))
    assert r.status == 302
    assert r.header("Location") == "http://127.0.0.1:%d/one/two/x?y=1" % srv2.port
    r = h.curl(srv2.url("/off/redirect"))
    assert r.header("Location") == "http://%s/two/x?y=1" % o.addr
    r = h.curl(srv2.url("/own/redirect"))
    assert r.header("Location") == "http://127.0.0.1:%d/mine/x?y=1" % srv2.port


def test_head_request(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("HEAD", "/head"))
        r = c.read_response("HEAD")
        assert r.status == 200 and r.header("Content-Length") == "1234"
        # the connection is still in step: a second request works
        c.send(h.request("GET", "/len/10"))
        r = c.read_response()
        assert r.status == 200 and r.body == pattern(10)
    assert o.requests[0].method == "HEAD"
    assert o.accepted == 1


def test_304_and_204(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/notmod"))
        r = c.read_response()
        assert r.status == 304 and r.body == b"" and r.header("ETag") == '"v1"'
        c.send(h.request("GET", "/status/204"))
        r = c.read_response()
        assert r.status == 204 and r.header("Content-Length") is None
        c.send(h.request("GET", "/len/3"))
        assert c.read_response().body == pattern(3)
    assert o.accepted == 1


def test_interim_responses_passed_on(sws, origin):
    """RFC 9110 15.2: a proxy passes 1xx responses on (the origin sends 100
    Continue, then 103 Early Hints, then 200): 103 with its Link reaches an
    HTTP/1.1 client before the final answer; 100 does not (the server
    answers Expect itself), and an HTTP/1.0 client gets no 1xx at all."""
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/interim"))
        r = c.read_response()
        assert r.status == 103 and r.reason == "Early Hints", r
        assert r.header("Link") == "</x.css>; rel=preload"
        assert r.header("Content-Length") is None and r.body == b""
        r = c.read_response()
        assert r.status == 200 and r.body == b"final\n"
        assert r.header("Link") is None
        assert c.still_open(0.2)
    r = h.exchange(srv.port, h.request("GET", "/interim", version="HTTP/1.0"))
    assert r.status == 200 and r.body == b"final\n"


def test_interim_responses_bounded_and_checked(sws, origin):
    """At most 8 interim responses are passed on (the rest dropped); an
    invalid header line in one makes the upstream's answer invalid: 502."""
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/interimmany/20"))
        got = []
        while True:
            r = c.read_response()
            if r.status != 103:
                break
            got.append(r.header("X-N"))
        assert got == [str(i) for i in range(8)]
        assert r.status == 200 and r.body == b"final\n"
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/interimbad"))
        r = c.read_response()
        assert r.status == 502, r
    assert "invalid header line in a 103 response" in srv.error_log()


def test_chunked_response(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/chunked/100000?size=777"))
        r = c.read_response()
        assert r.header("Transfer-Encoding") == "chunked"
        assert r.body == pattern(100000)
    # an HTTP/1.0 client: the end is the connection's
    r = h.exchange(srv.port, h.request("GET", "/chunked/5000", version="HTTP/1.0"))
    assert r.header("Transfer-Encoding") is None and r.body == pattern(5000)


def test_response_without_length(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/close/30000"))
        r = c.read_response()
        assert r.header("Transfer-Encoding") == "chunked"
        assert r.body == pattern(30000)
        c.send(h.request("GET", "/len/5"))
        assert c.read_response().body == pattern(5)


def test_large_response(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    r = h.curl(srv.url("/big/3000000"))
    assert r.status == 200 and len(r.body) == 3000000 and r.body == pattern(3000000)


def test_error_statuses_passed(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    for st in (404, 418, 500, 503, 599):
        r = h.curl(srv.url("/status/%d" % st))
        assert r.status == st and r.body == b"status %d\n" % st


def test_intercept_errors(sws, origin):
    o = origin()
    srv = sws(server="""
        error_page 404 /nf.html;
        location = /nf.html { respond 404 "our page"; }
        location / { proxy_pass http://%s; proxy_intercept_errors on; }
        """ % o.addr)
    r = h.curl(srv.url("/status/404"))
    assert r.status == 404 and r.body == b"our page"
    r = h.curl(srv.url("/status/500"))
    assert r.status == 500 and r.body == b"status 500\n"      # no error_page for it


def test_http_version_10(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_http_version 1.0; }" % o.addr)
    for _ in range(3):
        req = echo(h.curl(srv.url("/echo")))
        assert req["version"] == "HTTP/1.0"
        assert hdr(req, "Connection") == ["close"]
    assert o.accepted == 3


# ------------------------------------------------------------ request bodies

def test_post_body_buffered(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    body = pattern(200000).decode("latin-1")
    req = echo(h.curl(srv.url("/echo"), method="POST", body=body.encode("latin-1")))
    assert req["body"] == body
    assert hdr(req, "Content-Length") == ["200000"]
    srv_conf = srv  # noqa


def test_chunked_request_body_buffered(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    raw = (h.request("PUT", "/echo", headers=[("Transfer-Encoding", "chunked")])
           + b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
    req = json.loads(h.exchange(srv.port, raw).body)
    assert req["method"] == "PUT" and req["body"] == "hello world"
    assert hdr(req, "Content-Length") == ["11"] and not req["chunked"]


def test_expect_continue(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/echo", headers=[("Content-Length", "4"),
                                                   ("Expect", "100-continue")]))
        assert c.read_line() == b"HTTP/1.1 100 Continue"
        assert c.read_line() == b""
        c.send(b"data")
        req = json.loads(c.read_response().body)
    assert req["body"] == "data" and hdr(req, "Expect") == []


def test_pass_request_body_off(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_pass_request_body off; }"
              % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/echo", headers=[("Content-Length", "5")], body=b"abcde"))
        req = json.loads(c.read_response().body)
        assert req["body"] == "" and hdr(req, "Content-Length") == []
        c.send(h.request("GET", "/len/2"))       # the body was dropped, in step
        assert c.read_response().body == pattern(2)


def test_empty_post_keeps_content_length(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    raw = h.request("POST", "/echo", headers=[("Content-Length", "0")])
    req = json.loads(h.exchange(srv.port, raw).body)
    assert hdr(req, "Content-Length") == ["0"]


def test_request_buffering_off_length(sws, origin):
    o = origin()
    srv = sws(server="""location / { proxy_pass http://%s; proxy_request_buffering off;
                        client_body_buffer_size 4k; }""" % o.addr)
    data = pattern(300000)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/echo", headers=[("Content-Length", str(len(data)))]))
        c.send(data[:1000])
        # the origin is contacted before the body is all there
        assert h.wait_for(lambda: o.accepted == 1, 3)
        time.sleep(0.1)
        c.send(data[1000:])
        req = json.loads(c.read_response().body)
    assert req["body"].encode("latin-1") == data
    assert hdr(req, "Content-Length") == [str(len(data))]


def test_request_buffering_off_chunked(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; proxy_request_buffering off; }"
              % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/echo", headers=[("Transfer-Encoding", "chunked")]))
        for piece in (b"first ", b"second ", b"third"):
            c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.05)
        c.send(b"0\r\n\r\n")
        req = json.loads(c.read_response().body)
        assert req["body"] == "first second third" and req["chunked"]
        assert hdr(req, "Transfer-Encoding") == ["chunked"]
        c.send(h.request("GET", "/len/1"))
        assert c.read_response().body == pattern(1)


def test_request_buffering_off_http10_upstream_buffers(sws, origin):
    o = origin()
    srv = sws(server="""location / { proxy_pass http://%s; proxy_request_buffering off;
                        proxy_http_version 1.0; }""" % o.addr)
    raw = (h.request("POST", "/echo", headers=[("Transfer-Encoding", "chunked")])
           + b"3\r\nabc\r\n0\r\n\r\n")
    req = json.loads(h.exchange(srv.port, raw).body)
    assert req["body"] == "abc" and hdr(req, "Content-Length") == ["3"]


def test_body_too_large(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; client_max_body_size 10; }" % o.addr)
    r = h.exchange(srv.port, h.request("POST", "/echo", headers=[("Content-Length", "11")],
                                       body=b"x" * 11))
    assert r.status == 413
    assert o.accepted == 0


def test_pipelined_requests(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/len/100") + h.request("POST", "/echo",
               headers=[("Content-Length", "3")], body=b"abc") + h.request("GET", "/chunked/3000"))
        assert c.read_response().body == pattern(100)
        assert json.loads(c.read_response().body)["body"] == "abc"
        assert c.read_response().body == pattern(3000)
    assert o.accepted == 1


def test_not_modified_from_filter(sws, origin):
    """The origin ignores conditionals; the server's own filter answers 304
    from the proxied ETag, and the rest of the body is not waited for."""
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/headers", headers=[("If-None-Match", '"e1"')]))
        r = c.read_response()
        assert r.status == 304 and r.body == b""
        c.send(h.request("GET", "/len/7"))
        assert c.read_response().body == pattern(7)


def test_yaml_configuration(origin, tmp_path):
    o = origin()
    d = tmp_path / "y"
    (d / "html").mkdir(parents=True)
    h.make_traversable(d)
    port = h.free_port()
    text = """
modules_dir: %s
error_log: %s/error.log info
pid: %s/scalws.pid
daemon: "off"
events: {}
http:
  access_log: "off"
  upstream backend:
    server: %s
    keepalive: 8
  server:
    listen: 127.0.0.1:%d
    location /:
      proxy_pass: http://backend/echo/
      proxy_set_header: X-From yaml
""" % (h.MODULES, d, d, o.addr, port)
    srv = h.Server(d, text, [port], conf_name="scalws.yaml")
    srv.start()
    try:
        req = echo(h.curl(srv.url("/y")))
        assert req["target"] == "/echo/y" and hdr(req, "X-From") == ["yaml"]
    finally:
        srv.stop()
