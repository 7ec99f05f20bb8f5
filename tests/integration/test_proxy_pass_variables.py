"""proxy_pass with variables (nginx's rules): the target evaluated per
request (an upstream name first, else an IP literal or unix:, else a name for the resolver),
the URI part used as is, Host and $proxy_host per request. (Names and the
resolver: test_resolver.py.)"""
import json
import os

import swsharness as h


def echo(resp):
    assert resp.status == 200, resp
    return json.loads(resp.body)


def hdr(req, name):
    return [v for k, v in req["headers"] if k.lower() == name.lower()]


def test_upstream_chosen_by_header(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(http="upstream ua { server %s; } upstream ub { server %s; }" % (a.addr, b.addr),
              server="location / { proxy_pass http://$http_x_backend; }")
    assert h.curl(srv.url("/name"), headers=["X-Backend: ua"]).body == b"a"
    assert h.curl(srv.url("/name"), headers=["X-Backend: ub"]).body == b"b"
    assert h.curl(srv.url("/name"), headers=["X-Backend: UA"]).body == b"a"
    req = echo(h.curl(srv.url("/echo?q=1"), headers=["X-Backend: ub"]))
    assert req["target"] == "/echo?q=1"                  # no URI part: as sent
    assert hdr(req, "Host") == ["ub"]
    # nothing to go to: an invalid URL ("http://") is the server's error
    assert h.curl(srv.url("/name")).status == 500
    assert "proxy_pass URL \"http://\" has an invalid host" in srv.error_log()


def test_upstream_keepalive_pool_used(sws, origin):
    a = origin("a")
    srv = sws(http="upstream ua { server %s; keepalive 4; }" % a.addr,
              server="location / { proxy_pass http://$arg_b; }")
    with h.Conn(srv.port) as c:
        for _ in range(4):
            c.send(h.request("GET", "/len/10?b=ua"))
            assert c.read_response().status == 200
    assert a.accepted == 1


def test_literal_address_and_port(sws, origin):
    a = origin("a")
    srv = sws(server="location / { proxy_pass http://127.0.0.1:$arg_p; }")
    for _ in range(3):
        req = echo(h.curl(srv.url("/echo?p=%d" % a.port)))
        assert hdr(req, "Host") == ["127.0.0.1:%d" % a.port]
        assert hdr(req, "Connection") == ["close"]      # no pool for a literal
    assert a.accepted == 3


def test_literal_matches_another_proxy_pass(sws, origin):
    """An address another location proxies to statically is that location's
    group: already resolved, with its keep-alive pool."""
    a = origin("a")
    srv = sws(server="location /s/ { proxy_pass http://%s/; } "
                     "location / { proxy_pass http://$arg_t; }" % a.addr)
    with h.Conn(srv.port) as c:
        for path in ("/s/len/1", "/len/1?t=%s" % a.addr, "/len/2?t=%s" % a.addr):
            c.send(h.request("GET", path))
            assert c.read_response().status == 200
    assert a.accepted == 1


def test_ipv6_literal(sws, origin):
    if not h.have_ipv6():
        import pytest
        pytest.skip("no IPv6 loopback")
    a = origin("six", host="::1")
    srv = sws(server="location / { proxy_pass http://[::1]:$arg_p; }")
    r = h.curl(srv.url("/name?p=%d" % a.port))
    assert r.status == 200 and r.body == b"six"


def test_unix_socket(sws, origin, tmp_path):
    path = str(tmp_path / "o.sock")
    a = origin("unix", unix=path)
    srv = sws(server="location / { proxy_pass http://unix:$arg_s:/echo; }")
    req = echo(h.curl(srv.url("/anything?s=%s" % path)))
    assert req["target"] == "/echo"
    assert hdr(req, "Host") == ["localhost"]


def test_hostname_needs_resolver(sws, origin):
    srv = sws(server="location / { proxy_pass http://$arg_h:80; }")
    r = h.curl(srv.url("/x?h=localhost"))
    assert r.status == 502
    h.wait_for(lambda: "no resolver" in srv.error_log(), 2)
    assert "no resolver defined to resolve localhost" in srv.error_log()   # nginx's line
    # malformed literals are refused the same way, with the reason
    r = h.curl(srv.url("/x?h=127.0.0.1:99999"))
    assert r.status == 502
    assert "invalid port" in srv.error_log()
    r = h.curl(srv.url("/x?h=[::1"))
    assert r.status == 502
    assert "invalid IPv6 address" in srv.error_log()


def test_bad_scheme_is_500(sws):
    srv = sws(server="location / { proxy_pass $arg_u; }")
    assert h.curl(srv.url("/x?u=ftp://127.0.0.1")).status == 500
    assert "needs an http:// or https:// URL" in srv.error_log()


def test_uri_part_replaces_whole_uri(sws, origin):
    a = origin("a")
    srv = sws(http="upstream ua { server %s; }" % a.addr,
              server="location /api/ { proxy_pass http://ua/echo/$arg_x; } "
                     "location /fixed/ { proxy_pass http://$http_x_b/echo?k=1; } "
                     "location ~ ^/echo/re/ { proxy_pass http://ua$request_uri; } "
                     "location /echo/ { proxy_pass http://$http_x_b$uri; }")
    # the URI part replaces all of it: the location's rest and the query
    assert echo(h.curl(srv.url("/api/some/path?x=obj")))["target"] == "/echo/obj"
    assert echo(h.curl(srv.url("/fixed/a/b?z=2"),
                       headers=["X-B: ua"]))["target"] == "/echo?k=1"
    # allowed in a regex location (unlike a constant URI part)
    assert echo(h.curl(srv.url("/echo/re/a%20b?q=1")))["target"] == "/echo/re/a%20b?q=1"
    # used as is: $uri is decoded and is not escaped again (nginx does the same)
    assert echo(h.curl(srv.url("/echo/a%41"), headers=["X-B: ua"]))["target"] == "/echo/aA"


def test_proxy_host_and_redirect_per_request(sws, origin):
    a = origin("a")
    srv = sws(http='log_format ph "$proxy_host|$proxy_port|$upstream_addr";'
                   "upstream ua { server %s; }" % a.addr, access_log="off",
              server="access_log @TMP@/access.log ph; "
                     "location / { proxy_pass http://$arg_t; }")
    r = h.curl(srv.url("/redirect?t=ua"))
    assert r.status == 302
    # the origin's Location is http://ua/two/x?y=1: "default" maps it back
    # to /two/x?y=1, which absolute_redirect makes absolute, as nginx
    assert r.header("Location") == "http://127.0.0.1:%d/two/x?y=1" % srv.port
    assert h.curl(srv.url("/name?t=127.0.0.1:%d" % a.port)).status == 200
    h.wait_for(lambda: len(srv.access_log().splitlines()) == 2, 3)
    l1, l2 = srv.access_log().splitlines()
    assert l1 == "ua|80|%s" % a.addr
    assert l2 == "127.0.0.1:%d|%d|%s" % (a.port, a.port, a.addr)


def test_unreachable_literal_is_502(sws):
    port = h.free_port()
    srv = sws(server="location / { proxy_pass http://127.0.0.1:$arg_p; }")
    assert h.curl(srv.url("/x?p=%d" % port)).status == 502


def test_config_errors(tmp_path):
    cases = [
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass http://$nosuchvar; } }",
         'unknown variable "$nosuchvar"'),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_pass http://$arg_a; "
         "proxy_pass http://$arg_b; } }", "duplicate"),
    ]
    h.assert_config_errors(tmp_path, cases)
