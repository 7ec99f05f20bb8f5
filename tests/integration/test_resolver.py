"""Run-time DNS (resolver, resolver_timeout): proxy_pass and fastcgi_pass
with variables resolve names at request time through c-ares in the event
loop, against a DNS server of the test's own on loopback (dnsserver.py)
whose answers change while the server runs."""
import time

import pytest

import swsharness as h
from dnsserver import DnsServer


@pytest.fixture
def dns():
    d = DnsServer()
    yield d
    d.stop()


def proxy_conf(dns, extra=""):
    return ("resolver %s %s; resolver_timeout 2s;" % (dns.addr, extra),
            "location / { proxy_pass http://$arg_h:$arg_p; }")


def test_name_resolved_and_used(sws, origin, dns):
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=60)
    http, server = proxy_conf(dns, "ipv6=off")
    srv = sws(http=http, server=server)
    r = h.curl(srv.url("/name?h=app.test&p=%d" % a.port))
    assert r.status == 200 and r.body == b"a"
    # cached (TTL 60 s): no second question
    for _ in range(3):
        assert h.curl(srv.url("/name?h=APP.test&p=%d" % a.port)).body == b"a"
    assert dns.asked("app.test", "A") == 1
    assert dns.asked("app.test", "AAAA") == 0          # ipv6=off
