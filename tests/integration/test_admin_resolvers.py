"""The resolver's status_zone=NAME (docs/resolver.md, docs/admin.md): the
DNS questions asked and their answers by outcome, per status zone, in
/api/resolvers and /metrics, adding up exactly to what a test DNS server
was asked and answered."""
import shutil

import pytest

import swsharness as h
from dnsserver import DnsServer
from test_admin import admin_block, api, get, metric, promtool

OUTCOMES = ["answers", "nxdomain", "servfail", "timeouts", "errors"]


@pytest.fixture
def dns():
    d = DnsServer()
    yield d
    d.stop()


def test_status_zone_counts_add_up(sws, origin, dns):
    a = origin("a")
    dns.set("ok.test", a=["127.0.0.1"], ttl=60)
    dns.set("ok2.test", a=["127.0.0.1"], ttl=60)
    dns.set("nx.test", rcode=3)
    dns.set("fail.test", rcode=2)
    dns.set("refused.test", rcode=5)
    dns.set("empty.test")                           # no address: as NXDOMAIN
    srv = sws(ports=3, http=admin_block() + """
        resolver %s ipv6=off status_zone=dns; resolver_timeout 5s;""" % dns.addr,
              server="""
        location / { proxy_pass http://$arg_h:%d; }
        location /o/ { resolver %s ipv6=off status_zone=other;
                       proxy_pass http://$arg_h:%d/name; }""" % (a.port, dns.addr, a.port))
    zero = {"queries": 0, **{k: 0 for k in OUTCOMES}}
    assert api(srv, "/api/resolvers") == {"dns": zero, "other": zero}

    for name, status in (("ok.test", 200), ("ok.test", 200), ("OK.test", 200),
                         ("nx.test", 502), ("fail.test", 502), ("refused.test", 502),
                         ("empty.test", 502)):
        assert h.curl(srv.url("/name?h=%s" % name)).status == status, name
    assert h.curl(srv.url("/o/?h=ok2.test")).status == 200
    assert h.curl(srv.url("/o/?h=ok2.test")).status == 200

    asked = sum(dns.asked(n, "A") for n in ("ok.test", "nx.test", "fail.test",
                                            "refused.test", "empty.test"))
    assert asked == 5                               # the answer was cached
    doc = api(srv, "/api/resolvers")
    assert doc["dns"] == {"queries": 5, "answers": 1, "nxdomain": 2, "servfail": 1,
                          "timeouts": 0, "errors": 1}, doc
    assert doc["other"] == dict(zero, queries=1, answers=1), doc
    assert "resolver_status" not in api(srv, "/api/limits")

    r = get(srv, "/metrics")
    text = r.body.decode()
    assert metric(text, "scalws_resolver_queries_total", zone="dns") == 5
    for k in OUTCOMES:
        assert metric(text, "scalws_resolver_responses_total", zone="dns",
                      result=k) == doc["dns"][k]
    if shutil.which("promtool"):
        rc, out = promtool(r.body)
        assert rc == 0 and out.strip() == "", out


def test_without_status_zone_nothing_is_counted(sws, origin, dns):
    a = origin("a")
    dns.set("ok.test", a=["127.0.0.1"])
    srv = sws(ports=3, http=admin_block() + "resolver %s ipv6=off;" % dns.addr,
              server="location / { proxy_pass http://$arg_h:%d; }" % a.port)
    assert h.curl(srv.url("/name?h=ok.test")).status == 200
    assert api(srv, "/api/resolvers") == {}
    assert "scalws_resolver_" not in get(srv, "/metrics").body.decode()
