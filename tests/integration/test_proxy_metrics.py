"""Addresses of every kind, and the per-server metrics a module reads
through the SDK (<scalws/sws_upstream.h>): a tiny module built here serves
them, as the admin module will."""
import socket

import pytest

import swsharness as h

STATS_MODULE = r"""
#include <scalws/scalws.h>

static sws_int_t
stats_handler(sws_http_request_t *r)
{
    static const sws_str_t  type = sws_string("text/plain");
    sws_http_upstream_stats_t st;
    sws_uint_t                i, n = sws_http_upstream_stats_count();
    u_char                   *buf, *p, *end;
    sws_str_t                 body;

    buf = sws_pnalloc(sws_http_pool(r), 256 * (n + 1));
    if (buf == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = buf;
    end = buf + 256 * (n + 1);
    for (i = 0; i < n; i++) {
        if (sws_http_upstream_stats_get(i, &st) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        p = sws_slprintf(p, end, "%.*s %.*s %.*s %s %llu %llu %llu %llu %llu %llu %llu\n",
                         (int) st.upstream.len, st.upstream.data,
                         (int) st.server.len, st.server.data,
                         (int) st.addr.len, st.addr.data, st.state,
                         (unsigned long long) st.requests, (unsigned long long) st.responses,
                         (unsigned long long) st.failures, (unsigned long long) st.active,
                         (unsigned long long) st.status[1], (unsigned long long) st.status[4],
                         (unsigned long long) st.health_checks);
    }
    body.data = buf;
    body.len = (size_t) (p - buf);
    return sws_http_send_response(r, SWS_HTTP_OK, &type, &body);
}

static char *
set_stats(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    return sws_http_set_content_handler(cf, stats_handler, "upstream_stats") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static const sws_command_t cmds[] = {
    { "upstream_stats", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, set_stats, 0, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = { SWS_MODULE_ABI, .name = "upstats", .commands = cmds };
"""


@pytest.fixture(scope="module")
def stats_so(tmp_path_factory):
    return h.build_module(tmp_path_factory.mktemp("mod"), "upstats", STATS_MODULE)


def stats(srv):
    r = h.curl(srv.url("/stats"))
    assert r.status == 200
    out = {}
    for ln in r.body.decode().splitlines():
        f = ln.split()
        out[(f[0], f[2])] = dict(state=f[3], requests=int(f[4]), responses=int(f[5]),
                                 failures=int(f[6]), active=int(f[7]), s2xx=int(f[8]),
                                 s5xx=int(f[9]), checks=int(f[10]))
    return out


def test_metrics_shared_by_workers(sws, origin, stats_so):
    a, b = origin("a"), origin("b")
    port = h.free_port()
    srv = sws(workers=2, load="load_module %s;" % stats_so,
              http="upstream g { server %s; server %s; server 127.0.0.1:%d max_fails=1 "
                   "fail_timeout=30s; }" % (a.addr, b.addr, port),
              server="""location = /stats { upstream_stats; }
                        location / { proxy_pass http://g; }""")
    for _ in range(20):
        assert h.curl(srv.url("/name"), fresh=True).status == 200
    h.curl(srv.url("/status/503"))
    st = stats(srv)
    dead = st[("g", "127.0.0.1:%d" % port)]
    assert dead["state"] == "unavail" and dead["failures"] == 1 and dead["responses"] == 0
    sa, sb = st[("g", a.addr)], st[("g", b.addr)]
    assert sa["requests"] + sb["requests"] == 21
    assert sa["responses"] + sb["responses"] == 21
    assert sa["s5xx"] + sb["s5xx"] == 1 and sa["s2xx"] + sb["s2xx"] == 20
    assert sa["active"] == 0 and sb["active"] == 0
    assert sa["state"] == "up"


def test_metrics_kept_across_reload(sws, origin, stats_so):
    a = origin("a")
    srv = sws(load="load_module %s;" % stats_so,
              http="upstream g { server %s; }" % a.addr,
              server="""location = /stats { upstream_stats; }
                        location / { proxy_pass http://g; }""")
    for _ in range(3):
        h.curl(srv.url("/name"))
    assert stats(srv)[("g", a.addr)]["requests"] == 3
    old = srv.children()
    assert srv.control("reload").returncode == 0
    assert h.wait_for(lambda: not any(p in srv.children() for p in old), 3)
    h.curl(srv.url("/name"))
    assert stats(srv)[("g", a.addr)]["requests"] == 4       # same servers: same zone


def test_metrics_health_checks(sws, origin, stats_so):
    a = origin("a")
    srv = sws(load="load_module %s;" % stats_so,
              http="upstream g { server %s; health_check interval=100ms uri=/status/500; }"
                   % a.addr,
              server="""location = /stats { upstream_stats; }
                        location / { proxy_pass http://g; }""")
    assert h.wait_for(lambda: stats(srv)[("g", a.addr)]["state"] == "unhealthy", 3)
    assert stats(srv)[("g", a.addr)]["checks"] >= 1
    assert h.curl(srv.url("/name")).status == 502


def test_ipv6_upstream(sws, origin):
    if not h.have_ipv6():
        pytest.skip("no IPv6 loopback")
    o = origin("v6", host="::1")
    srv = sws(http="upstream g { server %s; }" % o.addr,
              server="""location /g/ { proxy_pass http://g/; }
                        location /d/ { proxy_pass http://%s/; }""" % o.addr)
    assert h.curl(srv.url("/g/name")).body == b"v6"
    assert h.curl(srv.url("/d/name")).body == b"v6"
    assert o.requests[-1].header("Host") == o.addr


def test_hostname_upstream(sws, origin):
    """localhost resolves to 127.0.0.1 (and maybe ::1): every address is a
    server; one that refuses is passed over."""
    o = origin("lh")
    srv = sws(server="location / { proxy_pass http://localhost:%d; }" % o.port)
    for _ in range(4):
        r = h.curl(srv.url("/name"))
        assert r.status == 200 and r.body == b"lh"
    assert o.requests[-1].header("Host") == "localhost:%d" % o.port
