"""Run-time DNS (resolver, resolver_timeout): proxy_pass and fastcgi_pass
with variables resolve names at request time through c-ares in the event
loop, against a DNS server of the test's own on loopback (dnsserver.py)
whose answers change while the server runs. The failures (NXDOMAIN,
SERVFAIL, REFUSED, no answer, a malformed one) are compared with nginx
1.22 on the same configuration: the status and the error-log line."""
import os
import socket
import time

import pytest

import swsharness as h
from dnsserver import DnsServer
from test_nginx_sites import NGINX, start_server


@pytest.fixture
def dns():
    d = DnsServer()
    yield d
    d.stop()


def proxy(dns, params="ipv6=off", timeout="2s", more=""):
    return dict(http="resolver %s %s; resolver_timeout %s; %s" % (dns.addr, params, timeout,
                                                                  more),
                server="location / { proxy_pass http://$arg_h:$arg_p; }")


def test_name_resolved_and_cached(sws, origin, dns):
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=60)
    srv = sws(**proxy(dns))
    r = h.curl(srv.url("/name?h=app.test&p=%d" % a.port))
    assert r.status == 200 and r.body == b"a"
    # cached for the TTL (60 s): no second question, any case of the name
    for name in ("APP.test", "app.test."):
        assert h.curl(srv.url("/name?h=%s&p=%d" % (name, a.port))).body == b"a"
    assert dns.asked("app.test", "A") == 1
    assert dns.asked("app.test", "AAAA") == 0          # ipv6=off


def test_new_address_after_ttl(sws, origin, dns):
    a = origin("a", host="127.0.0.1")
    b = origin("b", host="127.0.0.2", port=a.port)
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    srv = sws(**proxy(dns))
    url = srv.url("/name?h=app.test&p=%d" % a.port)
    assert h.curl(url).body == b"a"
    dns.set("app.test", a=["127.0.0.2"], ttl=1)
    assert h.curl(url).body == b"a"                   # still the cached answer
    time.sleep(1.1)
    assert h.curl(url).body == b"b"
    assert dns.asked("app.test") == 2


def test_valid_overrides_ttl(sws, origin, dns):
    a = origin("a", host="127.0.0.1")
    b = origin("b", host="127.0.0.2", port=a.port)
    dns.set("app.test", a=["127.0.0.1"], ttl=3600)
    srv = sws(**proxy(dns, "ipv6=off valid=1s"))
    url = srv.url("/name?h=app.test&p=%d" % a.port)
    assert h.curl(url).body == b"a"
    dns.set("app.test", a=["127.0.0.2"], ttl=3600)
    time.sleep(1.1)
    assert h.curl(url).body == b"b"


def test_several_addresses_round_robin(sws, origin, dns):
    a = origin("a", host="127.0.0.1")
    b = origin("b", host="127.0.0.2", port=a.port)
    dns.set("app.test", a=["127.0.0.1", "127.0.0.2"])
    srv = sws(**proxy(dns))
    seen = {h.curl(srv.url("/name?h=app.test&p=%d" % a.port)).body for _ in range(4)}
    assert seen == {b"a", b"b"}


def test_ipv6_on_by_default(sws, origin, dns):
    """nginx looks up both A and AAAA unless ipv6=off; an address of each
    family is used."""
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"])
    srv = sws(**proxy(dns, params=""))
    assert h.curl(srv.url("/name?h=app.test&p=%d" % a.port)).body == b"a"
    assert dns.asked("app.test", "A") == 1 and dns.asked("app.test", "AAAA") == 1
    if h.have_ipv6():
        six = origin("six", host="::1")
        dns.set("six.test", aaaa=["::1"])
        r = h.curl(srv.url("/name?h=six.test&p=%d" % six.port))
        assert r.status == 200 and r.body == b"six"


def test_ipv4_off(sws, origin, dns):
    if not h.have_ipv6():
        pytest.skip("no IPv6 loopback")
    six = origin("six", host="::1")
    dns.set("six.test", a=["127.0.0.1"], aaaa=["::1"])
    srv = sws(**proxy(dns, params="ipv4=off"))
    assert h.curl(srv.url("/name?h=six.test&p=%d" % six.port)).body == b"six"
    assert dns.asked("six.test", "A") == 0


def test_truncated_answer_asked_again_over_tcp(sws, origin, dns):
    a = origin("a")
    dns.set("big.test", a=["127.0.0.1"], mode="truncate")
    srv = sws(**proxy(dns))
    r = h.curl(srv.url("/name?h=big.test&p=%d" % a.port))
    assert r.status == 200 and r.body == b"a"
    assert dns.asked("big.test", "A", "udp") >= 1 and dns.asked("big.test", "A", "tcp") >= 1


def test_upstream_name_and_literal_need_no_question(sws, origin, dns):
    a = origin("a")
    srv = sws(http="resolver %s; upstream app.test { server %s; }" % (dns.addr, a.addr),
              server="location / { proxy_pass http://$arg_h; }")
    assert h.curl(srv.url("/name?h=app.test")).body == b"a"
    assert h.curl(srv.url("/name?h=%s" % a.addr)).body == b"a"
    assert dns.asked("app.test", "A") == 0 and dns.asked("app.test", "AAAA") == 0


def test_static_proxy_pass_untouched(sws, origin, dns):
    """A proxy_pass without variables is resolved at start-up, as before."""
    a = origin("a")
    srv = sws(http="resolver %s;" % dns.addr,
              server="location / { proxy_pass http://%s; }" % a.addr)
    assert h.curl(srv.url("/name")).body == b"a"
    assert sum(dns.counts.values()) == 0


def test_fastcgi_pass_name(sws, dns, tmp_path):
    from test_fastcgi_records import Peer, ok
    p = Peer(None, lambda r: ok(b"fcgi by name"), tcp=True)
    try:
        port = p.path.rsplit(":", 1)[1]
        dns.set("fcgi.test", a=["127.0.0.1"])
        s = sws(http="resolver %s ipv6=off;" % dns.addr,
                server="location / { fastcgi_pass $arg_h:%s; include %s/conf/fastcgi.conf; }"
                       % (port, h.SRC))
        assert h.curl(s.url("/x.php?h=fcgi.test")).body == b"fcgi by name"
        assert h.curl(s.url("/x.php?h=nx.test")).status == 502
        h.wait_for(lambda: "nx.test could not be resolved (3: Host not found)"
                   in s.error_log(), 2)
    finally:
        p.close()


def test_client_leaves_while_resolving(sws, origin, dns):
    """The request ends before the answer: its question is cancelled, the
    worker goes on (and answers the next one)."""
    a = origin("a")
    dns.set("slow.test", mode="drop")
    dns.set("app.test", a=["127.0.0.1"])
    srv = sws(**proxy(dns, timeout="3s"))
    for _ in range(3):
        with h.Conn(srv.port) as c:
            c.send(h.request("GET", "/name?h=slow.test&p=%d" % a.port))
            time.sleep(0.2)
    assert h.curl(srv.url("/name?h=app.test&p=%d" % a.port)).body == b"a"
    time.sleep(3.2)                        # the cancelled questions' timeouts pass
    assert h.curl(srv.url("/name?h=app.test&p=%d" % a.port)).body == b"a"
    assert srv.alive()
    assert "signal" not in srv.error_log() and "[alert]" not in srv.error_log()


def test_shared_cache_between_workers(sws, origin, dns):
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"])
    srv = sws(WORKERS=2, **proxy(dns))
    for _ in range(8):
        assert h.curl(srv.url("/name?h=app.test&p=%d" % a.port), fresh=True).body == b"a"
    assert dns.asked("app.test") == 1


def test_questions_for_one_name_shared(sws, origin, dns):
    """Requests waiting for the same name wait for one question."""
    import threading
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=60)
    srv = sws(**proxy(dns))
    out = []
    ts = [threading.Thread(target=lambda: out.append(
        h.curl(srv.url("/name?h=app.test&p=%d" % a.port), fresh=True).body)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert out == [b"a"] * 4
    assert dns.asked("app.test") == 1


# ---- failures, side by side with nginx 1.22 ----

FAILURES = [
    # (name, dns settings, nginx's error-log line)
    ("nx.test", dict(rcode=3), "nx.test could not be resolved (3: Host not found)"),
    ("fail.test", dict(rcode=2), "fail.test could not be resolved (2: Server failure)"),
    ("refused.test", dict(rcode=5), "refused.test could not be resolved (5: Operation refused)"),
    ("empty.test", dict(), "empty.test could not be resolved (3: Host not found)"),
    ("drop.test", dict(mode="drop"), "drop.test could not be resolved (110: Operation timed out)"),
    ("bad.test", dict(a=["127.0.0.1"], mode="malformed"), "bad.test could not be resolved"),
    ("junk.test", dict(mode="garbage"), "junk.test could not be resolved"),
]


@pytest.fixture
def both(tmp_path, dns):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []

    def start(site):
        ports = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            running.append(start_server(who, d, port, site.replace("@PORT@", str(port))))
            ports.append((port, d))
        return ports

    yield start
    for r in running:
        r.stop()


def test_failures_as_nginx(both, dns, origin):
    a = origin("a")
    for name, kw, _ in FAILURES:
        dns.set(name, **kw)
    site = """resolver %s ipv6=off; resolver_timeout 1s;
        server { listen 127.0.0.1:@PORT@; location / { proxy_pass http://$arg_h:%d; } }
        """ % (dns.addr, a.port)
    (ng, ngdir), (sw, swdir) = both(site)
    for name, _, line in FAILURES:
        t0 = time.monotonic()
        rn = h.curl("http://127.0.0.1:%d/?h=%s" % (ng, name))
        rs = h.curl("http://127.0.0.1:%d/?h=%s" % (sw, name))
        assert rs.status == rn.status == 502, (name, rn.status, rs.status)
        assert time.monotonic() - t0 < 6                 # never a hang
        h.wait_for(lambda: line in h._read(swdir / "error.log"), 2)
        if name not in ("bad.test", "junk.test"):        # nginx: "invalid DNS response", then
            assert line in h._read(ngdir / "error.log")  # the timeout
    # and an answer, after all that
    dns.set("ok.test", a=["127.0.0.1"])
    for port in (ng, sw):
        assert h.curl("http://127.0.0.1:%d/name?h=ok.test" % port).body == b"a"


def test_no_resolver_as_nginx(both, origin):
    a = origin("a")
    site = """server { listen 127.0.0.1:@PORT@;
                  location / { proxy_pass http://$arg_h:%d; } }""" % a.port
    (ng, ngdir), (sw, swdir) = both(site)
    for port, d in ((ng, ngdir), (sw, swdir)):
        assert h.curl("http://127.0.0.1:%d/?h=app.test" % port).status == 502
        assert h.curl("http://127.0.0.1:%d/name?h=127.0.0.1" % port).body == b"a"
        h.wait_for(lambda: "no resolver defined to resolve app.test"
                   in h._read(d / "error.log"), 2)


# ---- the directives ----

def test_directive_forms_accepted(sws, origin, dns):
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"])
    srv = sws(http="resolver 127.0.0.1 [::1]:5353 valid=30s ipv6=on ipv4=on "
                   "status_zone=dns; resolver_timeout 10s;",
              server="location / { resolver %s ipv6=off valid=5; resolver_timeout 1s; "
                     "proxy_pass http://$arg_h:%d; }" % (dns.addr, a.port))
    assert h.curl(srv.url("/name?h=app.test")).body == b"a"


def test_directive_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("resolver;", 'invalid number of arguments in "resolver"'),
        ("resolver 127.0.0.1 ipv6=maybe;", "invalid parameter: ipv6=maybe"),
        ("resolver 127.0.0.1 valid=soon;", "invalid parameter: valid=soon"),
        ("resolver 127.0.0.1:99999;", 'invalid port in resolver "127.0.0.1:99999"'),
        ("resolver no.such.host.invalid;", 'host not found in resolver "no.such.host.invalid"'),
        ("resolver 127.0.0.1 ipv4=off ipv6=off;", '"ipv4" and "ipv6" cannot both be "off"'),
        ("resolver 127.0.0.1; resolver 127.0.0.2;", '"resolver" directive is duplicate'),
        ("resolver_timeout never;", "resolver_timeout"),
        ("resolver valid=1s;", "no name servers defined in resolver"),
    ])


# ---- server NAME resolve (an upstream { } block) ----

def ups_resolve(dns, port, more=""):
    return dict(http="resolver %s ipv6=off; upstream backend { zone backend 64k; "
                     "server app.test:%d resolve; keepalive 4; %s }" % (dns.addr, port, more),
                server="location / { proxy_pass http://backend; proxy_http_version 1.1; "
                       "proxy_set_header Connection \"\"; }")


def names(conn, n):
    out = []
    for _ in range(n):
        conn.send(h.request("GET", "/name"))
        r = conn.read_response()
        out.append(r.body if r.status == 200 else r.status)
    return out


def test_upstream_server_follows_the_name(sws, origin, dns):
    a = origin("a", host="127.0.0.1")
    b = origin("b", host="127.0.0.2", port=a.port)
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    srv = sws(WORKERS=2, **ups_resolve(dns, a.port))
    h.wait_for(lambda: h.curl(srv.url("/name")).status == 200, 3)
    with h.Conn(srv.port) as c:
        assert names(c, 3) == [b"a"] * 3
        accepted = a.accepted
        dns.set("app.test", a=["127.0.0.1", "127.0.0.2"], ttl=1)
        h.wait_for(lambda: b"b" in names(c, 2), 4)
        assert set(names(c, 4)) == {b"a", b"b"}
        # the address that stayed kept its kept-alive connection
        assert a.accepted == accepted
        dns.set("app.test", a=["127.0.0.2"], ttl=1)
        h.wait_for(lambda: names(c, 2) == [b"b", b"b"], 4)
        assert names(c, 4) == [b"b"] * 4
    # every worker sees the list
    assert {h.curl(srv.url("/name"), fresh=True).body for _ in range(6)} == {b"b"}
    # the name goes: no server left, 502 (nginx's "no live upstreams")
    dns.set("app.test", rcode=3, ttl=1)
    h.wait_for(lambda: h.curl(srv.url("/name")).status == 502, 8)
    assert "app.test could not be resolved (3: Host not found)" in srv.error_log()
    # and comes back
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    h.wait_for(lambda: h.curl(srv.url("/name")).body == b"a", 8)


def test_upstream_server_resolve_keeps_addresses_on_failure(sws, origin, dns):
    """A SERVFAIL or no answer is no news: the servers stay."""
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    srv = sws(**ups_resolve(dns, a.port))
    h.wait_for(lambda: h.curl(srv.url("/name")).status == 200, 3)
    dns.set("app.test", rcode=2, ttl=1)
    h.wait_for(lambda: "app.test could not be resolved (2: Server failure)" in srv.error_log(),
               4)
    assert h.curl(srv.url("/name")).body == b"a"


def test_upstream_server_resolve_errors(tmp_path, dns):
    h.assert_config_errors(tmp_path, [
        ("resolver %s; upstream u { server app.test:80 resolve; }" % dns.addr,
         'resolving names at run time requires upstream "u"'),
        ("upstream u { zone u 64k; server app.test:80 resolve; }",
         'no resolver defined to resolve names at run time in upstream "u"'),
        ("resolver %s; upstream u { zone u 64k; dynamic_servers 0; server a.test resolve; }"
         % dns.addr, "needs room for run-time servers"),
        ("resolver %s; upstream u { zone u 64k; server a.test:0 resolve; }" % dns.addr,
         'invalid port in upstream "a.test:0"'),
    ])


def test_cache_in_front_as_nginx(both, dns, origin):
    """proxy_cache in front: a fresh hit is answered without the name
    (nginx looks in the cache first too); a name that cannot be resolved
    is a 502 even with an expired entry and proxy_cache_use_stale error
    (nginx finalizes at once, without the stale one)."""
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    site = """resolver %s ipv6=off; resolver_timeout 1s;
        proxy_cache_path @TMP@/cache keys_zone=c:1m;
        server { listen 127.0.0.1:@PORT@;
          proxy_cache c; proxy_cache_use_stale error; proxy_cache_key $request_uri;
          add_header X-Cache $upstream_cache_status;
          location /long/ { proxy_pass http://$arg_h:%d/name; proxy_cache_valid 200 1m; }
          location /short/ { proxy_pass http://$arg_h:%d/name; proxy_cache_valid 200 1s; } }
        """ % (dns.addr, a.port, a.port)
    (ng, _), (sw, swdir) = both(site)
    for port in (ng, sw):
        for loc in ("long", "short"):
            r = h.curl("http://127.0.0.1:%d/%s/?h=app.test" % (port, loc))
            assert r.body == b"a" and r.header("x-cache") == "MISS", (port, loc)
    dns.set("app.test", rcode=2)
    time.sleep(2.1)                     # the answer and the short entries expire
    for port in (ng, sw):
        r = h.curl("http://127.0.0.1:%d/long/?h=app.test" % port)
        assert r.body == b"a" and r.header("x-cache") == "HIT", port
        assert h.curl("http://127.0.0.1:%d/short/?h=app.test" % port).status == 502, port
    assert "app.test could not be resolved (2: Server failure)" in h._read(swdir / "error.log")


def test_resolver_in_the_upstream_block(sws, origin, dns):
    """nginx 1.27.3's form: the upstream's own resolver and timeout."""
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"])
    srv = sws(http="upstream backend { zone backend 64k; resolver %s ipv6=off; "
                   "resolver_timeout 2s; server app.test:%d resolve; }" % (dns.addr, a.port),
              server="location / { proxy_pass http://backend; }")
    assert h.wait_for(lambda: h.curl(srv.url("/name")).body == b"a", 3)


def test_http2_requests_wait_for_the_name(sws, origin, dns):
    """Over HTTP/2 (h2c) too: a name, one that never comes (resolver_timeout),
    one not found."""
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"])
    dns.set("slow.test", mode="drop")
    srv = sws(ports=2, http="resolver %s ipv6=off; resolver_timeout 1s;" % dns.addr,
              server="listen 127.0.0.1:@PORT2@ http2; "
                     "location / { proxy_pass http://$arg_h:%d; }" % a.port)
    base = "http://127.0.0.1:%d" % srv.ports[1]
    r = h.curl(base + "/name?h=app.test", prior_knowledge=True)
    assert r.status == 200 and r.body == b"a"
    assert h.curl(base + "/name?h=slow.test", prior_knowledge=True).status == 502
    assert h.curl(base + "/name?h=nx.test", prior_knowledge=True).status == 502


def test_reload_keeps_resolving(sws, origin, dns):
    import signal
    a = origin("a")
    dns.set("app.test", a=["127.0.0.1"], ttl=60)
    srv = sws(**proxy(dns))
    url = srv.url("/name?h=app.test&p=%d" % a.port)
    assert h.curl(url).body == b"a"
    n = srv.error_log().count("configuration reloaded")
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: srv.error_log().count("configuration reloaded") > n, 10)
    for _ in range(3):
        assert h.curl(url, fresh=True).body == b"a"
    assert dns.asked("app.test") == 1          # the cache's zone was kept


def test_upstream_server_resolve_across_reloads(sws, origin, dns):
    """A reload keeps the addresses of the names it still follows (no
    moment without servers); those of a name it no longer has go."""
    import signal
    a = origin("a", host="127.0.0.1")
    b = origin("b", host="127.0.0.2", port=a.port)
    dns.set("app.test", a=["127.0.0.1"], ttl=60)
    dns.set("other.test", a=["127.0.0.2"], ttl=60)
    srv = sws(**ups_resolve(dns, a.port))
    assert h.wait_for(lambda: h.curl(srv.url("/name")).body == b"a", 3)

    def reload(text):
        n = srv.error_log().count("configuration reloaded")
        srv.write_conf(text)
        srv.signal(signal.SIGHUP)
        assert h.wait_for(lambda: srv.error_log().count("configuration reloaded") > n, 10)

    reload(srv.conf_text)
    for _ in range(5):
        assert h.curl(srv.url("/name"), fresh=True).body == b"a"
    reload(srv.conf_text.replace("server app.test:", "server other.test:"))
    assert h.wait_for(lambda: {h.curl(srv.url("/name"), fresh=True).body
                               for _ in range(4)} == {b"b"}, 5)
    assert "removed 127.0.0.1:%d (other.test)" % a.port in srv.error_log()
