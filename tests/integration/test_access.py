"""The access module: allow and deny, in order, first match wins (nginx's)."""
import pytest

import swsharness as h

SERVER = """
        location = /allow-me { allow 127.0.0.1; deny all; respond 200 "in"; }
        location = /deny-me { deny 127.0.0.1; allow all; respond 200 "in"; }
        location = /first-wins { deny 127.0.0.1; allow 127.0.0.1; respond 200 "in"; }
        location = /first-wins2 { allow 127.0.0.1; deny 127.0.0.1; respond 200 "in"; }
        location = /cidr8 { allow 127.0.0.0/8; deny all; respond 200 "in"; }
        location = /cidr24-deny { deny 127.0.0.0/24; allow all; respond 200 "in"; }
        location = /cidr-other { allow 10.0.0.0/8; allow 192.168.0.0/16; deny all;
                                 respond 200 "in"; }
        location = /cidr32 { allow 127.0.0.2/32; deny all; respond 200 "in"; }
        location = /cidr0 { deny 0.0.0.0/0; respond 200 "in"; }
        location = /v6-only { allow ::1; deny all; respond 200 "in"; }
        location = /no-match { deny 10.1.2.3; respond 200 "in"; }
        location = /unix-only { allow unix:; deny all; respond 200 "in"; }
        location = /low-bits { allow 127.0.0.1/8; deny all; respond 200 "in"; }
        location /static/ { deny all; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, files={"html/static/f.txt": b"file\n"})


@pytest.mark.parametrize("path,status", [
    ("/allow-me", 200), ("/deny-me", 403), ("/first-wins", 403), ("/first-wins2", 200),
    ("/cidr8", 200), ("/cidr24-deny", 403), ("/cidr-other", 403), ("/cidr32", 403),
    ("/cidr0", 403), ("/v6-only", 403), ("/no-match", 200), ("/unix-only", 403),
    ("/low-bits", 200), ("/static/f.txt", 403),
])
def test_rules_over_ipv4(srv, path, status):
    r = h.curl(srv.url(path))
    assert r.status == status, (path, r)
    if status == 200:
        assert r.body in (b"in", b"file\n"), r
    else:
        assert b"403" in r.body, r


def test_denied_request_is_logged(srv):
    r = h.curl(srv.url("/deny-me?x=1"))
    assert r.status == 403, r
    assert h.wait_file_contains(srv.error_log_path,
                                'access forbidden by rule, client: 127.0.0.1, uri: "/deny-me"')


def test_low_address_bits_warned(srv):
    assert "low address bits of 127.0.0.1/8 are meaningless" in srv.error_log() + srv.stderr()


def test_denied_over_http10_and_head(srv):
    r = h.exchange(srv.port, h.request("GET", "/deny-me", version="HTTP/1.0"))
    assert r.status == 403, r
    r = h.exchange(srv.port, h.request("HEAD", "/deny-me"), method="HEAD")
    assert r.status == 403 and r.body == b"", r


def test_inheritance_own_rules_replace_outer(sws):
    srv = sws(server="""
        deny all;
        location = /inherit { respond 200 "in"; }
        location = /own { allow 127.0.0.1; respond 200 "own"; }
        location = /own-deny { deny 10.0.0.1; respond 200 "own"; }
""")
    assert h.curl(srv.url("/inherit")).status == 403
    r = h.curl(srv.url("/own"))
    assert r.status == 200 and r.body == b"own", r
    # rules of its own, none matching: the server's "deny all" no longer applies
    r = h.curl(srv.url("/own-deny"))
    assert r.status == 200 and r.body == b"own", r


def test_http_level_rules(sws):
    srv = sws(http="    deny 127.0.0.1;\n", server="""
        location = /x { respond 200 "x"; }
""")
    assert h.curl(srv.url("/x")).status == 403
    assert h.curl(srv.url("/respond")).status == 403


def test_ipv6_rules(sws):
    if not h.have_ipv6():
        pytest.skip("no IPv6 loopback")
    srv = sws(ipv6=True, server="""
        listen [::1]:@PORT6@;
        location = /v6 { allow ::1; deny all; respond 200 "v6"; }
        location = /v6-net { allow 2001:db8::/32; deny all; respond 200 "v6"; }
        location = /v6-deny { deny ::1/128; allow all; respond 200 "v6"; }
        location = /v4-rule { allow 127.0.0.1; deny all; respond 200 "v6"; }
        location = /v6-prefix { allow ::/1; deny all; respond 200 "v6"; }
""")
    base = "http://[::1]:%d" % srv.port6
    r = h.curl(base + "/v6")
    assert r.status == 200 and r.body == b"v6", r
    assert h.curl(base + "/v6-net").status == 403
    assert h.curl(base + "/v6-deny").status == 403
    assert h.curl(base + "/v4-rule").status == 403
    assert h.curl(base + "/v6-prefix").status == 200
    # and the IPv4 client on the same server
    assert h.curl(srv.url("/v6")).status == 403
    assert h.curl(srv.url("/v4-rule")).status == 200


def test_unix_socket_rules(sws):
    srv = sws(server="""
        listen unix:@TMP@/s.sock;
        location = /u { allow unix:; deny all; respond 200 "unix"; }
        location = /no-unix { deny unix:; allow all; respond 200 "tcp"; }
""", unix_paths=["@TMP@/s.sock"])
    sock = str(srv.tmp / "s.sock")
    r = h.curl("http://localhost/u", unix=sock)
    assert r.status == 200 and r.body == b"unix", r
    assert h.curl(srv.url("/u")).status == 403
    assert h.curl("http://localhost/no-unix", unix=sock).status == 403
    r = h.curl(srv.url("/no-unix"))
    assert r.status == 200 and r.body == b"tcp", r


def test_config_errors_name_file_and_line(tmp_path):
    cases = [
        ("    allow 1.2.3.4/33;\n", 'invalid parameter "1.2.3.4/33" in "allow" directive in'),
        ("    allow 300.1.1.1;\n", 'invalid parameter "300.1.1.1"'),
        ("    deny foo;\n", 'invalid parameter "foo" in "deny" directive'),
        ("    deny ::1/129;\n", 'invalid parameter "::1/129"'),
        ("    allow 1.2.3.4/;\n", 'invalid parameter "1.2.3.4/"'),
        ("    allow 1.2.3.4/x;\n", 'invalid parameter "1.2.3.4/x"'),
        ("    allow unix;\n", 'invalid parameter "unix"'),
        ("    allow;\n", 'invalid number of arguments in "allow" directive'),
        ("    deny 1.2.3.4 5.6.7.8;\n", 'invalid number of arguments in "deny" directive'),
    ]
    for i, (http, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, http=http)
        assert rc not in (None, 0) and needle in out, (http, out)
        assert "scalws.conf:1" in out, out
        assert not listening, http
