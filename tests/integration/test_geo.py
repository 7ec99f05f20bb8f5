"""The geo module: the most specific network, $address from a variable,
ranges (overlapping ones: the later wins), delete, proxy with
X-Forwarded-For (and proxy_recursive), configuration errors. The expected
values are what nginx 1.22 answers to the same configuration."""
import pytest

import conferr
import swsharness as h

HTTP = """
    geo $g { default none; 127.0.0.0/8 loop; 127.0.0.1 one; 10.0.0.0/8 ten;
             10.1.0.0/16 tenone; ::1 six; delete 10.1.0.0/16; }
    geo $arg_ip $a { default none; 127.0.0.0/8 loop; 10.0.0.0/8 ten; 10.1.0.0/16 tenone;
                     2001:db8::/32 doc; }
    geo $arg_ip $r { ranges; default none; 10.0.0.0-10.0.0.255 a; 10.0.1.0-10.0.1.255 b;
                     10.0.0.128-10.0.0.130 c; }
    geo $arg_ip $s { ranges; 10.0.5.0-10.0.5.255 five; 10.0.1.0-10.0.1.9 one;
                     10.0.3.3 three; }
    geo $x { default none; proxy 127.0.0.0/8; 192.168.0.0/16 lan; 8.8.8.8 g; }
    geo $y { default none; proxy 127.0.0.0/8; proxy 192.168.0.0/16; proxy_recursive;
             192.168.0.0/16 lan; 8.8.8.8 g; }
    geo $nodefault { 10.0.0.0/8 ten; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(http=HTTP, server="""
        location / { return 200 "g=$g a=$a r=$r s=$s x=$x y=$y n=[$nodefault]"; }
    """)


def vals(srv, query="", xff=None):
    r = h.curl(srv.url("/" + query), headers=["X-Forwarded-For: " + xff] if xff else [])
    assert r.status == 200, r
    return dict(kv.split("=", 1) for kv in r.body.decode().split(" "))


@pytest.mark.parametrize("query,a,r", [
    ("", "none", "none"),
    ("?ip=10.1.2.3", "tenone", "none"),
    ("?ip=10.2.2.3", "ten", "none"),
    ("?ip=2001:db8::5", "doc", "none"),
    ("?ip=garbage", "none", "none"),
    ("?ip=10.0.0.129", "ten", "c"),         # the later, overlapping range
    ("?ip=10.0.0.5", "ten", "a"),
    ("?ip=10.0.1.5", "ten", "b"),
    ("?ip=10.0.2.5", "ten", "none"),
])
def test_networks_and_ranges(srv, query, a, r):
    v = vals(srv, query)
    assert (v["g"], v["a"], v["r"]) == ("one", a, r), v    # 127.0.0.1 beats 127/8


@pytest.mark.parametrize("ip,s", [("10.0.5.7", "five"), ("10.0.1.9", "one"),
                                  ("10.0.1.10", ""), ("10.0.3.3", "three"),
                                  ("10.0.3.4", ""), ("9.9.9.9", "")])
def test_ranges_out_of_order_are_searched(srv, ip, s):
    assert vals(srv, "?ip=" + ip)["s"] == s


def test_no_default_is_empty(srv):
    assert vals(srv)["n"] == "[]"
    assert vals(srv, "?ip=10.0.0.1")["n"] == "[]"      # $nodefault uses the client


@pytest.mark.parametrize("xff,x,y", [
    (None, "none", "none"),
    ("8.8.8.8, 192.168.1.1", "lan", "g"),     # recursive skips the trusted 192.168
    ("1.2.3.4, 8.8.8.8", "g", "g"),
    ("bogus", "none", "none"),
])
def test_proxy_and_forwarded_for(srv, xff, x, y):
    v = vals(srv, xff=xff)
    assert (v["x"], v["y"]) == (x, y), v


@pytest.mark.parametrize("block,words", [
    ("geo $v { 10.0.0.0/33 x; }", ["invalid network"]),
    ("geo $v { ranges; 10.0.0.9-10.0.0.1 x; }", ["invalid range"]),
    ("geo $v { ranges; 2001:db8::1-2001:db8::2 x; }", ["invalid range"]),
    ("geo $v { 10.0.0.1 x; ranges; }", ["must come before"]),
    ("geo $v { 10.0.0.1 x y; }", ["invalid number of the geo parameters"]),
    ("geo v { default x; }", ["invalid variable name"]),
    ("geo $v { proxy bogus; }", ["invalid network"]),
])
def test_configuration_errors(tmp_path, block, words):
    conferr.check(tmp_path, words, http="    %s  # ERR\n" % block)
