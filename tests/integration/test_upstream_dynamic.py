"""Server lists that change at run time (sws_http_upstream_server_add,
_drain, _remove, _weight), through tests/modules/tdyn.c behind a location,
with two workers and real origins (proxyorigin.py) that count what they
get. The list is in shared memory: a change made through one worker is
seen by the other."""
import threading
import time
from pathlib import Path

import pytest

import swsharness as h

TDYN_SRC = Path(h.SRC) / "tests" / "modules" / "tdyn.c"


@pytest.fixture(scope="module")
def tdyn(tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("tdyn"), "tdyn", TDYN_SRC.read_text())
    return "load_module %s;" % so


def start(sws, tdyn, servers, extra=""):
    # A second, reuseport, address: the kernel spreads its connections over
    # both workers' sockets (spread() uses it), where one shared socket may
    # hand them all to one worker.
    return sws(load=tdyn, workers=2, ports=2,
               http="upstream g { %s %s }" % ("".join("server %s;" % s for s in servers),
                                             extra),
               server="""listen 127.0.0.1:@PORT2@ reuseport;
                         location = /dyn { tdyn; }
                         location / { proxy_pass http://g; }""")


def op(srv, what, addr, w=None, up="g", handle=None):
    """handle: by handle (tdyn's h=: "name" resolves up in the worker)."""
    q = "/dyn?op=%s&up=%s&addr=%s" % (what, up, addr)
    if handle is not None:
        q += "&h=%s" % handle
    if w is not None:
        q += "&w=%d" % w
    r = h.curl(srv.url(q), fresh=True)
    assert r.status == 200, r
    return r.body.decode()


def spread(srv, n, path="/name"):
    """n requests on new connections: [(worker pid, origin name)]."""
    out = []
    for _ in range(n):
        r = h.curl(srv.url(path, port=srv.ports[1]), fresh=True)
        assert r.status == 200, r
        out.append((r.header("X-Worker"), r.body.decode()))
    return out


def count(o, path="/name"):
    return sum(1 for q in list(o.requests) if q.target == path)


def test_added_server_is_used_by_every_worker(sws, origin, tdyn):
    a, b = origin("a"), origin("b")
    srv = start(sws, tdyn, [a.addr])
    assert {n for _, n in spread(srv, 10)} == {"a"}
    assert op(srv, "add", b.addr) == "OK"
    # Which worker accepts a new connection is the kernel's choice: ask
    # until each of the two has answered both names (bounded).
    got = []
    for _ in range(20):
        got += spread(srv, 20)
        workers = {w for w, _ in got}
        if len(workers) == 2 and all({n for ww, n in got if ww == w} == {"a", "b"}
                                     for w in workers):
            break
    assert len(workers) == 2, got                  # both workers answered
    for w in workers:
        assert {n for ww, n in got if ww == w} == {"a", "b"}, (w, got)
    # adding it again is no new server
    assert op(srv, "add", b.addr) == "OK"
    before = count(b)
    spread(srv, 20)
    assert 5 <= count(b) - before <= 15


def test_drained_server_finishes_in_flight_requests(sws, origin, tdyn):
    a, b = origin("a"), origin("b")
    srv = start(sws, tdyn, [a.addr])
    assert op(srv, "add", b.addr) == "OK"
    assert op(srv, "remove", a.addr) == "OK"       # only b now
    result = {}

    def slow():
        r = h.curl(srv.url("/delay/1500"), fresh=True)
        result["r"] = r

    t = threading.Thread(target=slow)
    t.start()
    assert h.wait_for(lambda: any(q.target == "/delay/1500" for q in list(b.requests)), 3)
    assert op(srv, "drain", b.addr) == "OK"
    assert op(srv, "add", a.addr) == "OK"          # the configured one back
    before = count(b)
    assert {n for _, n in spread(srv, 20)} == {"a"}
    assert count(b) == before                      # no new request for b
    t.join(10)
    assert result["r"].status == 200 and result["r"].header("X-Origin") == "b"
    # a drained server can come back
    assert op(srv, "add", b.addr, w=1) == "OK"
    assert "b" in {n for _, n in spread(srv, 20)}


def test_removed_server_is_gone(sws, origin, tdyn):
    a, b = origin("a"), origin("b")
    srv = start(sws, tdyn, [a.addr, b.addr])
    assert {n for _, n in spread(srv, 20)} == {"a", "b"}
    assert op(srv, "remove", b.addr) == "OK"
    before = count(b)
    assert {n for _, n in spread(srv, 30)} == {"a"}
    assert count(b) == before
    # removing it twice: it is not there any more
    assert op(srv, "remove", b.addr) == "DECLINED"
    # every server removed: 502, no live upstream
    assert op(srv, "remove", a.addr) == "OK"
    assert h.curl(srv.url("/name"), fresh=True).status == 502
    assert "no live upstreams" in srv.error_log()


def test_weights_change_the_split(sws, origin, tdyn):
    a, b = origin("a"), origin("b")
    srv = start(sws, tdyn, [a.addr, b.addr])
    assert op(srv, "weight", b.addr, w=4) == "OK"
    got = [n for _, n in spread(srv, 100)]
    # 1:4, per worker (smooth round robin): generous bounds
    assert 65 <= got.count("b") <= 92, got.count("b")
    assert op(srv, "weight", b.addr, w=1) == "OK"
    assert op(srv, "weight", a.addr, w=3) == "OK"
    got = [n for _, n in spread(srv, 100)]
    assert 60 <= got.count("a") <= 90, got.count("a")


def test_room_for_added_servers_and_errors(sws, origin, tdyn):
    a, b, c = origin("a"), origin("b"), origin("c")
    srv = start(sws, tdyn, [a.addr], extra="dynamic_servers 1;")
    assert op(srv, "add", b.addr) == "OK"
    assert op(srv, "add", c.addr) == "BUSY"        # one slot only
    assert op(srv, "remove", b.addr) == "OK"       # its slot is free again
    assert op(srv, "add", c.addr) == "OK"
    assert {n for _, n in spread(srv, 20)} == {"a", "c"}
    assert op(srv, "add", b.addr, up="nope") == "DECLINED"
    assert op(srv, "add", "example.com:80") == "ERROR"      # no resolver
    assert op(srv, "add", b.addr, w=0) == "ERROR"
    assert op(srv, "weight", b.addr, w=2000) == "ERROR"
    assert op(srv, "drain", b.addr) == "DECLINED"           # not in the list now
    assert op(srv, "weight", "127.0.0.1:1", w=2) == "DECLINED"


def test_added_server_connections_and_health(sws, origin, tdyn):
    """An added server gets kept connections and active health checks."""
    a, b = origin("a"), origin("b")
    srv = start(sws, tdyn, [a.addr], extra="health_check interval=100ms uri=/status/200;")
    assert op(srv, "add", b.addr) == "OK"
    assert h.wait_for(lambda: any(q.target == "/status/200" for q in list(b.requests)), 3)
    b.fail = 500
    assert h.wait_file_contains(srv.error_log_path, "%s of \"g\" failed its health check"
                                % b.addr, 3)
    time.sleep(0.3)
    assert {n for _, n in spread(srv, 20)} == {"a"}


def test_dynamic_servers_directive_is_checked(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("upstream u { server 127.0.0.1:1; dynamic_servers 2000; }", "invalid value"),
        ("upstream u { server 127.0.0.1:1; dynamic_servers 1; dynamic_servers 2; }",
         "is duplicate"),
    ])


def reload(srv, text=None):
    import signal
    old = srv.children()
    n = srv.error_log().count("configuration reloaded")
    if text is not None:
        srv.conf_text = text
        srv.write_conf(text)
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: srv.error_log().count("configuration reloaded") > n, 10), \
        srv.error_log()[-2000:]
    assert len(srv.wait_children(2, timeout=5, exclude=old)) == 2
    # the old workers are gone: every answer is the new configuration's
    assert h.wait_for(lambda: not set(old) & set(srv.children()), 10)


def listing(srv, up="g", handle=None):
    q = "/dyn?op=list&up=%s" % up + ("&h=%s" % handle if handle else "")
    r = h.curl(srv.url(q), fresh=True)
    assert r.status == 200, r
    return [tuple(line.split()[:3]) for line in r.body.decode().splitlines()]


def test_added_servers_survive_a_reload(sws, origin, tdyn):
    a, b, c = origin("a"), origin("b"), origin("c")
    srv = start(sws, tdyn, [a.addr])
    assert op(srv, "add", b.addr) == "OK"
    assert {n for _, n in spread(srv, 20)} == {"a", "b"}
    # the same servers: the list is reused in place, b stays
    reload(srv)
    assert {n for _, n in spread(srv, 20)} == {"a", "b"}
    assert listing(srv) == [(a.addr, "1", "up"), (b.addr, "1", "up")]
    # the group changed (another configured server, more room): b is
    # carried into the new list, with its weight; a drained one stays drained
    assert op(srv, "weight", b.addr, w=3) == "OK"
    assert op(srv, "add", "127.0.0.1:9", w=2) == "OK"
    assert op(srv, "drain", "127.0.0.1:9") == "OK"
    reload(srv, srv.conf_text.replace("server %s;" % a.addr,
                                      "server %s; server %s; dynamic_servers 4;"
                                      % (a.addr, c.addr)))
    assert listing(srv) == [(a.addr, "1", "up"), (c.addr, "1", "up"), (b.addr, "3", "up"),
                            ("127.0.0.1:9", "2", "draining")]
    got = [n for _, n in spread(srv, 50)]
    assert set(got) == {"a", "b", "c"} and got.count("b") > got.count("a"), got
    # a group the configuration drops loses its list; back later, it is empty
    text = srv.conf_text
    reload(srv, text.replace("upstream g {", "upstream other {")
                    .replace("proxy_pass http://g;", "proxy_pass http://other;"))
    assert op(srv, "add", b.addr) == "DECLINED"
    assert listing(srv, up="other") == [(a.addr, "1", "up"), (c.addr, "1", "up")]
    reload(srv, text)
    assert listing(srv) == [(a.addr, "1", "up"), (c.addr, "1", "up")]
    assert {n for _, n in spread(srv, 20)} == {"a", "c"}


def test_reload_rules_for_configured_and_added_servers(sws, origin, tdyn):
    a, b, c, d = origin("a"), origin("b"), origin("c"), origin("d")
    srv = start(sws, tdyn, [a.addr, b.addr], extra="dynamic_servers 2;")
    assert op(srv, "add", c.addr, w=2) == "OK"
    assert op(srv, "add", d.addr) == "OK"
    assert op(srv, "add", "127.0.0.1:9") == "BUSY"
    # run-time changes to a configured server last until the next reload
    assert op(srv, "drain", b.addr) == "OK"
    assert op(srv, "weight", a.addr, w=5) == "OK"
    reload(srv)
    assert listing(srv) == [(a.addr, "1", "up"), (b.addr, "1", "up"), (c.addr, "2", "up"),
                            (d.addr, "1", "up")]
    # the configuration names c now, and has room for one: c is the
    # configured one, d stays; with room for none, d goes, logged
    reload(srv, srv.conf_text.replace("server %s;" % b.addr,
                                      "server %s; server %s;" % (b.addr, c.addr)))
    assert listing(srv) == [(a.addr, "1", "up"), (b.addr, "1", "up"), (c.addr, "1", "up"),
                            (d.addr, "1", "up")]
    reload(srv, srv.conf_text.replace("dynamic_servers 2;", "dynamic_servers 0;"))
    assert listing(srv) == [(a.addr, "1", "up"), (b.addr, "1", "up"), (c.addr, "1", "up")]
    assert 'upstream "g" has no room for server %s added at run time: dropped' % d.addr \
        in srv.error_log()
    assert {n for _, n in spread(srv, 30)} == {"a", "b", "c"}


def test_lists_by_handle(sws, origin, tdyn):
    """Handles are a process's own: tdyn resolves one in the worker that
    serves each request (h=name), where it is the same every time."""
    a, b, c = origin("a"), origin("b"), origin("c")
    srv = start(sws, tdyn, [a.addr], extra="dynamic_servers 1;")
    hd = op(srv, "handle", "")
    assert hd.isdigit() and int(hd) > 0, hd
    assert op(srv, "handle", "", up="G") == hd           # names are case-insensitive
    assert op(srv, "handle", "", up="nope") == "DECLINED"

    def hop(what, addr, w=None, handle="name"):
        return op(srv, what, addr, w=w, handle=handle)

    assert hop("add", b.addr, w=2) == "OK"
    assert hop("add", c.addr) == "BUSY"                  # the room is full
    assert listing(srv, handle="name") == [(a.addr, "1", "up"), (b.addr, "2", "up")]
    assert {n for _, n in spread(srv, 20)} == {"a", "b"}
    assert hop("weight", b.addr, w=1) == "OK"
    assert hop("weight", b.addr, w=0) == "ERROR"
    assert hop("drain", b.addr) == "OK"
    assert {n for _, n in spread(srv, 20)} == {"a"}
    assert hop("remove", b.addr) == "OK"
    assert hop("remove", b.addr) == "DECLINED"           # not in the list any more
    assert hop("add", "example.com:80") == "ERROR"       # no resolver
    # no such handle
    for bad in ("0", "-1", "999"):
        assert hop("add", c.addr, handle=bad) == "ERROR", bad
    assert listing(srv, handle="999") == []
    assert hop("add", c.addr) == "OK"
    reload(srv)
    assert listing(srv, handle="name") == [(a.addr, "1", "up"), (c.addr, "1", "up")]


def test_list_shows_states_weights_and_counts(sws, origin, tdyn):
    a, b, c = origin("a"), origin("b"), origin("c")
    srv = start(sws, tdyn, [a.addr])
    assert op(srv, "add", b.addr, w=3) == "OK"
    assert op(srv, "add", c.addr) == "OK"
    spread(srv, 20)
    assert op(srv, "drain", b.addr) == "OK"
    assert op(srv, "remove", c.addr) == "OK"

    def rows_now():
        r = h.curl(srv.url("/dyn?op=list&up=g"), fresh=True)
        return [line.split() for line in r.body.decode().splitlines()]

    rows = rows_now()
    assert [(x[0], x[1], x[2]) for x in rows] == [(a.addr, "1", "up"), (b.addr, "3", "draining")]
    # the counters are shared: both workers' requests are in them
    assert int(rows[0][3]) + int(rows[1][3]) >= 20 - count(c)
    assert int(rows[1][3]) == count(b)
    assert h.curl(srv.url("/dyn?op=list&up=nope"), fresh=True).body == b""


def test_statistics_structs_say_their_size(sws, origin, tdyn):
    """ABI 1.7: the size fields; the functions of earlier SDKs write nothing
    from size on (a module built against them has a shorter struct)."""
    a = origin("a")
    srv = start(sws, tdyn, [a.addr])
    r = h.curl(srv.url("/dyn?op=sizes&up=g"), fresh=True)
    f = r.body.decode().split()
    assert f[0] == "status" and f[1].split("/")[0] == f[1].split("/")[1], f
    assert f[2] == "stats" and f[3].split("/")[0] == f[3].split("/")[1], f
    assert f[4:] == ["get", "7", "info", "7"], f
