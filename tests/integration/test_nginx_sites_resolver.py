"""A proxy with `resolver` and variables in proxy_pass (tests/sites/
resolver-proxy.conf) under nginx 1.22 and scalwsd side by side, against a
DNS server of the test's own (dnsserver.py): the same answers for names
that resolve, that do not (NXDOMAIN, SERVFAIL, no answer at all), a pool
by name and an address, with error_page taking over a 502."""
import time

from dnsserver import DnsServer
from test_nginx_sites import echo_of, fetch, pair, same  # noqa: F401 (the fixture)


def test_resolver_proxy_site(pair):
    dns = DnsServer()
    try:
        o = pair.origin
        oport = o.addr.rsplit(":", 1)[1]
        for name in ("www.tenant.test", "beta.tenant.test", "api.svc.test", "img.svc.test"):
            dns.set(name, a=["127.0.0.1"], ttl=300)
        dns.set("gone.tenant.test", rcode=3)
        dns.set("broken.svc.test", rcode=2)
        dns.set("down.svc.test", mode="drop")
        ports = pair("resolver-proxy.conf", extra={"DNS": dns.addr, "OPORT": oport})
        host = ["Host: proxy.test"]
        same(ports, "GET", "/name", host, also=("x-proxied",))
        same(ports, "GET", "/name", host + ["X-Tenant: beta"])
        same(ports, "GET", "/status/404", host + ["X-Tenant: beta"])
        same(ports, "GET", "/name", host + ["X-Tenant: gone"])           # 502
        same(ports, "GET", "/pool/name", host, body=False)
        same(ports, "GET", "/direct/name", host)
        same(ports, "GET", "/maintenance/x", host)                       # 503 "back soon"
        t0 = time.monotonic()
        same(ports, "GET", "/flaky/x", host)                             # 502 after 1 s
        assert time.monotonic() - t0 < 5
        # the service from the path, with its URI and arguments
        rs = [fetch(p, "GET", "/svc/api/v1/items?q=1", host)[0] for p in ports]
        assert [r.status for r in rs] == [200, 200], rs
        en, es = (echo_of(r) for r in rs)
        assert en["target"] == es["target"] == "/echo/v1/items?q=1"
        hosts = [[v for k, v in e["headers"] if k.lower() == "host"] for e in (en, es)]
        assert hosts == [["api.svc.test"], ["api.svc.test"]]
        same(ports, "GET", "/svc/nosuch/x", host)                        # NXDOMAIN: 502
        # both servers asked the DNS server, and kept the answers (valid=30s)
        assert dns.asked("www.tenant.test") == 2 and dns.asked("api.svc.test") == 2
    finally:
        dns.stop()
