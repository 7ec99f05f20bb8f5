"""The upstream framework through proxy_pass: keep-alive pools, balancing,
retries on the next server, passive and active health, $upstream_*."""
import signal
import socket
import threading
import time

import swsharness as h


def closed_port():
    """A loopback port where nothing listens (connect: refused)."""
    return h.free_port()


def names(srv, n, path="/name", fresh=False):
    out = []
    for _ in range(n):
        r = h.curl(srv.url(path), fresh=fresh)
        assert r.status == 200, r
        out.append(r.body.decode())
    return out


# ------------------------------------------------------------ keep-alive

def test_keepalive_reuse(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    for _ in range(5):                      # 5 client connections ...
        with h.Conn(srv.port) as c:
            for _ in range(4):              # ... of 4 requests each
                c.send(h.request("GET", "/len/100"))
                assert c.read_response().status == 200
    assert o.accepted == 1
    assert len(o.requests) == 20


def test_keepalive_in_upstream_block(sws, origin):
    o = origin()
    srv = sws(http="upstream b { server %s; keepalive 4; keepalive_requests 3; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    names(srv, 9)
    assert o.accepted == 3                  # a connection serves 3 requests


def test_keepalive_off(sws, origin):
    o = origin()
    srv = sws(http="upstream b { server %s; keepalive 0; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    names(srv, 5)
    assert o.accepted == 5
    assert all(r.header("Connection") == "close" for r in o.requests)


def test_keepalive_upstream_closes_idle(sws, origin):
    o = origin()
    o.idle_close = 0.1
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    for _ in range(4):
        assert h.curl(srv.url("/name")).status == 200
        time.sleep(0.3)                     # the origin closes meanwhile
    assert o.accepted == 4
    assert "error" not in srv.error_log().split("started")[-1].lower()


def test_keepalive_upstream_says_close(sws, origin):
    o = origin(keepalive=False)
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    names(srv, 4)
    assert o.accepted == 4


def test_keepalive_per_worker_pools(sws, origin):
    o = origin()
    srv = sws(workers=2, server="location / { proxy_pass http://%s; }" % o.addr)
    names(srv, 20, fresh=True)
    assert 1 <= o.accepted <= 2


def test_keepalive_not_reused_after_cut(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/cut/1000"))
        head = c.read_line()
        assert head.startswith(b"HTTP/1.1 200")
        c.read_until_close()
    assert h.curl(srv.url("/name")).status == 200
    assert o.accepted == 2


# ------------------------------------------------------------ balancing

def test_round_robin(sws, origin):
    os_ = [origin(n) for n in ("a", "b", "c")]
    srv = sws(http="upstream g { %s }" % " ".join("server %s;" % o.addr for o in os_),
              server="location / { proxy_pass http://g; }")
    got = names(srv, 30)
    assert got.count("a") == 10 and got.count("b") == 10 and got.count("c") == 10
    assert got[:3] in (["a", "b", "c"],)


def test_weights(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(http="upstream g { server %s weight=3; server %s; }" % (a.addr, b.addr),
              server="location / { proxy_pass http://g; }")
    got = names(srv, 40)
    assert got.count("a") == 30 and got.count("b") == 10
    # smooth: never three b in a row, a's are spread
    assert "bb" not in "".join(got)


def test_hash(sws, origin):
    os_ = [origin(n) for n in ("a", "b", "c")]
    for extra in ("", " consistent"):
        srv = sws(http="upstream g { hash $arg_k%s; %s }"
                  % (extra, " ".join("server %s;" % o.addr for o in os_)),
                  server="location / { proxy_pass http://g; }")
        first = {}
        for k in range(20):
            for _ in range(2):
                n = h.curl(srv.url("/name?k=%d" % k)).body.decode()
                assert first.setdefault(k, n) == n
        assert len(set(first.values())) >= 2
        srv.stop()


def test_hash_skips_failed_server(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="upstream g { hash $arg_k consistent; server %s; server 127.0.0.1:%d; }"
              % (a.addr, port), server="location / { proxy_pass http://g; }")
    for k in range(10):
        r = h.curl(srv.url("/name?k=%d" % k))
        assert r.status == 200 and r.body == b"a"


def test_ip_hash(sws, origin):
    # nginx's ip_hash: a client keeps its server by its network (an IPv4
    # address's first three bytes), as realip sets the address; `down`
    # takes a server out without moving the others' clients; a failed
    # server's clients go to another.
    os_ = [origin(n) for n in ("a", "b", "c")]
    port = closed_port()
    srv = sws(http="upstream g { ip_hash; %s server 127.0.0.1:%d; }\n"
              "upstream d { ip_hash; server %s down; %s }"
              % (" ".join("server %s;" % o.addr for o in os_), port,
                 os_[0].addr, " ".join("server %s;" % o.addr for o in os_[1:])),
              server="set_real_ip_from 127.0.0.1; real_ip_header X-Real-IP;\n"
                     "location / { proxy_pass http://g; }\n"
                     "location /d/ { proxy_pass http://d/; }")

    def name(ip, path="/name"):
        r = h.curl(srv.url(path), headers=["X-Real-IP: %s" % ip])
        assert r.status == 200, r
        return r.body.decode()

    first = {}
    for net in range(40):
        ip = "10.0.%d.1" % net
        first[net] = name(ip)
        assert name(ip) == first[net]                          # again: the same
        assert name("10.0.%d.200" % net) == first[net]         # its /24: the same
    assert set(first.values()) == {"a", "b", "c"}              # spread, the dead one skipped
    v6 = [name("2001:db8::%x" % k) for k in range(1, 30)]
    assert len(set(v6)) >= 2 and all(name("2001:db8::%x" % (k + 1)) == v for k, v in
                                     enumerate(v6))
    # the down server's clients go elsewhere; nobody is ever sent to it
    got = {net: name("10.0.%d.1" % net, "/d/name") for net in range(40)}
    assert set(got.values()) <= {"b", "c"} and len(set(got.values())) == 2, got


def test_ip_hash_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("upstream g { ip_hash x; server 127.0.0.1:1; }", '"ip_hash"'),
        ("upstream g { ip_hash; least_conn; server 127.0.0.1:1; }",
         "load balancing method redefined"),
        ("upstream g { ip_hash; server 127.0.0.1:1; server 127.0.0.1:2 backup; }",
         "does not support backup servers"),
    ])


def test_random(sws, origin):
    a, b = origin("a"), origin("b")
    for method in ("random", "random two least_conn"):
        srv = sws(http="upstream g { %s; server %s; server %s; }" % (method, a.addr, b.addr),
                  server="location / { proxy_pass http://g; }")
        got = names(srv, 40)
        assert got.count("a") > 0 and got.count("b") > 0
        srv.stop()


def test_least_conn(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(http="upstream g { least_conn; server %s; server %s; }" % (a.addr, b.addr),
              server="location / { proxy_pass http://g; }")
    slow = h.Background(lambda stop: h.curl(srv.url("/delay/1500")))
    slow.start()
    assert h.wait_for(lambda: len(a.requests) + len(b.requests) == 1, 3)
    busy = "a" if a.requests else "b"
    got = names(srv, 6)
    assert busy not in got
    assert slow.finish().status == 200


def test_backup(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(http="upstream g { server %s max_fails=1 fail_timeout=30s; server %s backup; }"
              % (a.addr, b.addr), server="location / { proxy_pass http://g; }")
    assert names(srv, 5) == ["a"] * 5
    a.stop()
    assert names(srv, 5) == ["b"] * 5


def test_down_servers_and_no_live_upstreams(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(http="""upstream g { server %s down; server %s; }
                      upstream none { server %s down; }""" % (a.addr, b.addr, a.addr),
              server="""location / { proxy_pass http://g; }
                        location /none/ { proxy_pass http://none; }""")
    assert names(srv, 4) == ["b"] * 4
    assert h.curl(srv.url("/none/x")).status == 502
    assert "no live upstreams" in srv.error_log()


# ------------------------------------------------------------ retries

def test_retry_on_refused(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="upstream g { server 127.0.0.1:%d max_fails=0; server %s; }"
              % (port, a.addr), server="location / { proxy_pass http://g; }")
    assert names(srv, 4) == ["a"] * 4
    assert "connect() to 127.0.0.1:%d failed" % port in srv.error_log()


def test_next_upstream_off_and_tries(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="upstream g { server 127.0.0.1:%d max_fails=0; server %s; }"
              % (port, a.addr),
              server="""location /off/ { proxy_pass http://g/; proxy_next_upstream off; }
                        location /one/ { proxy_pass http://g/; proxy_next_upstream_tries 1; }""")
    # round robin alternates: of two requests, one goes to the closed port
    got = sorted(h.curl(srv.url("/off/name")).status for _ in range(2))
    assert got == [200, 502]
    got = sorted(h.curl(srv.url("/one/name")).status for _ in range(2))
    assert got == [200, 502]


def test_retry_on_timeout(sws, origin):
    a, b = origin("a"), origin("b")
    a.hang = True
    srv = sws(http="upstream g { server %s max_fails=0; server %s; }" % (a.addr, b.addr),
              server="""location /t/ { proxy_pass http://g/; proxy_read_timeout 300ms; }
                        location /e/ { proxy_pass http://g/; proxy_read_timeout 300ms;
                                       proxy_next_upstream error; }""")
    t0 = time.monotonic()
    r = h.curl(srv.url("/t/name"))
    assert r.status == 200 and r.body == b"b"
    assert time.monotonic() - t0 >= 0.25
    got = sorted(h.curl(srv.url("/e/name")).status for _ in range(2))
    assert got == [200, 504]
    assert "timed out" in srv.error_log()


def test_retry_on_http_status(sws, origin):
    a, b = origin("a"), origin("b")
    a.fail = 502
    srv = sws(http="upstream g { server %s max_fails=0; server %s; }" % (a.addr, b.addr),
              server="""location /r/ { proxy_pass http://g/;
                                       proxy_next_upstream error timeout http_502; }
                        location /n/ { proxy_pass http://g/; }""")
    assert [h.curl(srv.url("/r/name")).body for _ in range(4)] == [b"b"] * 4
    got = sorted(h.curl(srv.url("/n/name")).status for _ in range(2))
    assert got == [200, 502]
    # every server fails: the last answer is passed on as it is
    b.fail = 502
    r = h.curl(srv.url("/r/name"))
    assert r.status == 502 and r.body == b"failing\n"


def test_non_idempotent_not_replayed(sws, origin):
    a, b = origin("a"), origin("b")
    a.drop = True                     # reads the request, closes without answer
    srv = sws(http="upstream g { server %s max_fails=0; server %s; }" % (a.addr, b.addr),
              server="""location /p/ { proxy_pass http://g/; }
                        location /ni/ { proxy_pass http://g/;
                                        proxy_next_upstream error timeout non_idempotent; }""")
    posts = [h.curl(srv.url("/p/name"), method="POST", body=b"x").status for _ in range(2)]
    assert sorted(posts) == [200, 502]
    gets = [h.curl(srv.url("/p/name")).status for _ in range(2)]
    assert gets == [200, 200]
    posts = [h.curl(srv.url("/ni/name"), method="POST", body=b"x").status for _ in range(2)]
    assert posts == [200, 200]


def test_streamed_body_not_replayed(sws, origin):
    a, b = origin("a"), origin("b")
    a.drop = True
    srv = sws(http="upstream g { server %s max_fails=0; server %s; }" % (a.addr, b.addr),
              server="""location / { proxy_pass http://g; proxy_request_buffering off;
                        proxy_next_upstream error timeout non_idempotent; }""")
    got = sorted(h.curl(srv.url("/name"), method="PUT", body=b"y" * 10).status
                 for _ in range(2))
    assert got == [200, 502]            # the body went: it cannot be sent again


def test_access_log_upstream_variables(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="""log_format ups "$upstream_addr|$upstream_status|$upstream_response_time|$upstream_connect_time|$upstream_header_time|$upstream_bytes_received";
                      upstream g { server 127.0.0.1:%d max_fails=0; server %s; }"""
              % (port, a.addr), access_log="off",
              server="access_log @TMP@/access.log ups; location / { proxy_pass http://g; }")
    for _ in range(2):
        assert h.curl(srv.url("/name")).status == 200
    h.wait_for(lambda: len([ln for ln in srv.access_log().splitlines() if ln]) == 2, 3)
    lines = [ln for ln in srv.access_log().splitlines() if ln]
    assert len(lines) == 2
    retried = [ln for ln in lines if ", " in ln.split("|")[0]][0].split("|")
    assert retried[0] == "127.0.0.1:%d, %s" % (port, a.addr)
    assert retried[1] == "502, 200"
    assert retried[3].startswith("-, 0.")
    direct = [ln for ln in lines if ", " not in ln.split("|")[0]][0].split("|")
    assert direct[1] == "200" and float(direct[2]) >= 0 and int(direct[5]) > 0


# ------------------------------------------------------------ passive health

def test_passive_health(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="upstream g { server 127.0.0.1:%d max_fails=2 fail_timeout=1s; server %s; }"
              % (port, a.addr), server="location / { proxy_pass http://g; }")
    msg = "connect() to 127.0.0.1:%d failed" % port
    assert names(srv, 10) == ["a"] * 10
    # two failures in fail_timeout take it out: no more tries for 1 s
    assert srv.error_log().count(msg) == 2
    assert "temporarily disabled" in srv.error_log()
    time.sleep(1.2)
    names(srv, 4)
    assert srv.error_log().count(msg) == 3        # tried once again, out again


def test_passive_health_shared_by_workers(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(workers=2, http="upstream g { server 127.0.0.1:%d max_fails=1 fail_timeout=30s;"
              " server %s; }" % (port, a.addr), server="location / { proxy_pass http://g; }")
    names(srv, 20, fresh=True)
    # one failure anywhere takes it out for every worker
    assert srv.error_log().count("connect() to 127.0.0.1:%d failed" % port) == 1


# ------------------------------------------------------------ active health

def test_active_health_checks(sws, origin):
    a, b = origin("a"), origin("b")
    srv = sws(workers=2, http="""upstream g { server %s; server %s;
                                  health_check interval=200ms uri=/status/200 fails=2 passes=2; }"""
              % (a.addr, b.addr), server="location / { proxy_pass http://g; }")
    assert h.wait_for(lambda: any(r.target == "/status/200" for r in b.requests), 3)
    b.fail = 500
    assert h.wait_file_contains(srv.error_log_path, "failed its health check", 4)
    got = names(srv, 20, fresh=True)
    assert got == ["a"] * 20                 # every worker knows
    b.fail = None
    assert h.wait_file_contains(srv.error_log_path, "healthy", 4)
    assert h.wait_for(lambda: "b" in names(srv, 4, fresh=True), 4)


def test_active_health_one_probe_per_interval(sws, origin):
    a = origin("a")
    srv = sws(workers=2, http="""upstream g { server %s;
                                  health_check interval=250ms uri=/status/204; }""" % a.addr,
              server="location / { proxy_pass http://g; }")
    time.sleep(0.3)
    n0 = len([r for r in a.requests if r.target == "/status/204"])
    time.sleep(1.5)
    n = len([r for r in a.requests if r.target == "/status/204"]) - n0
    # 6 intervals: one probe each, not one per worker
    assert 4 <= n <= 8, n
    probe = [r for r in a.requests if r.target == "/status/204"][0]
    assert probe.header("Connection") == "close" and probe.header("Host") == "127.0.0.1"


def test_active_health_refused(sws, origin):
    a = origin("a")
    port = closed_port()
    srv = sws(http="""upstream g { server %s; server 127.0.0.1:%d max_fails=0;
                                   health_check interval=100ms; }""" % (a.addr, port),
              server="location / { proxy_pass http://g; }")
    assert h.wait_file_contains(srv.error_log_path, "unhealthy", 3)
    err_before = srv.error_log().count("connect() to 127.0.0.1:%d" % port)
    assert names(srv, 10) == ["a"] * 10
    # requests never went there (only probes did)
    after = srv.error_log().count("connect() to 127.0.0.1:%d" % port)
    assert after - err_before <= 2




def time_wait_to(o):
    """Sockets in TIME_WAIT from the proxy to origin o (/proc/net/tcp):
    both ends must be one of o's connections, since other programs on the
    machine may have used the same port numbers before (their TIME_WAIT
    stays for a minute)."""
    with o.lock:
        ours = {"0100007F:%04X" % peer[1] for peer in o.peers
                if isinstance(peer, tuple) and peer[0] == "127.0.0.1"}
    assert ours                         # else nothing could be counted
    n = 0
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[2] == "0100007F:%04X" % o.port and fields[3] == "06" \
                    and fields[1] in ours:
                n += 1
    return n


def resets(o, n, timeout=5.0):
    """Waits until the origin saw n connections reset by the proxy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = sum("ConnectionResetError" in e for e in o.errors)
        if got >= n:
            return got
        time.sleep(0.05)
    return sum("ConnectionResetError" in e for e in o.errors)


def three_at_once(srv, o):
    """Three requests at the same time: three connections to origin o."""
    bgs = [h.Background(lambda stop: h.curl(srv.url("/delay/300"))) for _ in range(3)]
    for b in bgs:
        b.start()
    for b in bgs:
        assert b.finish().status == 200
    assert o.accepted == 3


def test_idle_connections_end_with_a_fin_when_the_worker_exits(sws, origin):
    # A graceful stop (QUIT) closes the kept connections as nginx does: the
    # server sees their end, no reset (an application makes an error of
    # each: Node.js an Error with its stack, uvicorn an exception).
    o = origin()
    srv = sws(http="upstream b { server %s; keepalive 4; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    three_at_once(srv, o)
    srv.stop(signal.SIGQUIT)
    assert srv.proc.poll() is not None
    time.sleep(0.2)
    assert resets(o, 1, timeout=0.5) == 0, o.errors


def test_keepalive_pool_overflow(sws, origin):
    # Idle connections the pool has no room for are reset, not shut down:
    # no TIME_WAIT (and ephemeral port) is left on the proxy's side.
    o = origin()
    srv = sws(http="upstream b { server %s; keepalive 1; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    three_at_once(srv, o)
    assert resets(o, 2) == 2                # two had no room; the third is kept
    assert time_wait_to(o) == 0
    assert names(srv, 5) == ["origin"] * 5
    assert o.accepted == 3                  # the one kept serves them


def test_keepalive_timeout_resets_idle_connection(sws, origin):
    o = origin()
    srv = sws(http="upstream b { server %s; keepalive 4; keepalive_timeout 300ms; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    assert names(srv, 2) == ["origin"] * 2
    assert o.accepted == 1
    assert resets(o, 1) == 1
    assert time_wait_to(o) == 0
    assert names(srv, 1) == ["origin"]
    assert o.accepted == 2                  # a new one after the timeout


def test_keepalive_closed_by_server_is_not_reset(sws, origin):
    # The server ending an idle connection gets an ordinary close back.
    o = origin()
    o.idle_close = 0.2
    srv = sws(http="upstream b { server %s; keepalive 4; }" % o.addr,
              server="location / { proxy_pass http://b; }")
    assert names(srv, 1) == ["origin"]
    time.sleep(0.6)
    assert names(srv, 1) == ["origin"]
    assert o.accepted == 2
    assert o.errors == []


def test_reload_with_idle_upstream_connections(sws, origin):
    o = origin()
    a = origin("a")
    srv = sws(http="upstream g { server %s; health_check interval=100ms; }" % a.addr,
              server="location / { proxy_pass http://%s; }" % o.addr)
    assert h.curl(srv.url("/name")).status == 200     # one idle upstream connection
    old = srv.children()
    assert len(old) == 1
    r = srv.control("reload")
    assert r.returncode == 0
    # the old worker does not wait for its idle upstream connection
    assert h.wait_for(lambda: not any(p in srv.children() for p in old), 3)
    assert h.curl(srv.url("/name")).status == 200
    assert h.wait_for(lambda: len(o.conns) == 1, 3)


def test_upstream_response_length_and_bytes_sent(sws, origin):
    # the body's decoded bytes, also of a chunked one; the request's bytes
    # as sent (the head and the body)
    a = origin("a")
    srv = sws(http='log_format ul "$request_uri|$upstream_response_length|'
                   '$upstream_bytes_sent|$upstream_bytes_received";',
              access_log="off",
              server="access_log @TMP@/access.log ul; location / { proxy_pass http://%s; }"
              % a.addr)
    assert h.curl(srv.url("/len/1234")).status == 200
    assert h.curl(srv.url("/chunked/5000?size=700")).status == 200
    assert h.curl(srv.url("/echo"), method="POST", body=b"b" * 300).status == 200
    h.wait_for(lambda: len([ln for ln in srv.access_log().splitlines() if ln]) == 3, 3)
    rows = {ln.split("|")[0]: [int(x) for x in ln.split("|")[1:]]
            for ln in srv.access_log().splitlines() if ln}
    assert rows["/len/1234"][0] == 1234 and rows["/len/1234"][2] > 1234
    assert rows["/chunked/5000?size=700"][0] == 5000
    assert rows["/chunked/5000?size=700"][2] > 5000            # chunk framing and head
    received = [q for q in a.requests if q.path == "/echo"][0]
    assert rows["/echo"][1] > 300 and received.body == b"b" * 300
