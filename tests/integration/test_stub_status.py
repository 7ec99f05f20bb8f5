"""stub_status: nginx's text, byte for byte in its shape, with counters
summed over all workers (shared memory), over HTTP/1 and HTTP/2."""
import re
import signal
import socket
import subprocess
import threading

import conferr
import swsharness as h

FORMAT = re.compile(rb"\AActive connections: (\d+) \n"
                    rb"server accepts handled requests\n"
                    rb" (\d+) (\d+) (\d+) \n"
                    rb"Reading: (\d+) Writing: (\d+) Waiting: (\d+) \n\Z")
KEYS = ("active", "accepts", "handled", "requests", "reading", "writing", "waiting")


def parse(body):
    m = FORMAT.match(body)
    assert m, body
    return dict(zip(KEYS, (int(x) for x in m.groups())))


def status(port, c=None):
    if c is None:
        r = h.exchange(port, h.request("GET", "/status"))
    else:
        c.send(h.request("GET", "/status"))
        r = c.read_response()
    assert r.status == 200 and r.header("Content-Type") == "text/plain", r
    return parse(r.body)


def start(sws, **kw):
    kw.setdefault("server", "location = /status { stub_status; }")
    return sws(**kw)


def test_format_and_first_request(sws):
    srv = start(sws)
    r = h.exchange(srv.port, h.request("GET", "/status"))
    assert r.status == 200
    s = parse(r.body)
    # this request, on its connection (the harness's readiness probe may
    # have been accepted before: a connection without a request)
    # (the probe's close may not have been seen yet: active waits for it)
    assert s["active"] >= 1 and s["accepts"] == s["handled"] >= 1
    assert (s["requests"], s["reading"], s["writing"]) == (1, 0, 1), s
    with h.Conn(srv.port) as c:
        assert h.wait_for(lambda: status(srv.port, c)["active"] == 1, 5)
        s = status(srv.port, c)
        assert (s["reading"], s["writing"], s["waiting"]) == (0, 1, 0), s
    assert r.header("Content-Length") == str(len(r.body))


def test_methods(sws):
    srv = start(sws, server="location = /status { stub_status on; }")
    r = h.exchange(srv.port, h.request("HEAD", "/status"), method="HEAD")
    assert r.status == 200 and r.body == b""
    r = h.exchange(srv.port, h.request("POST", "/status", body=b"x"))
    assert r.status == 405


def test_counts_connections_and_requests(sws):
    srv = start(sws)
    with h.Conn(srv.port) as c:
        for i in range(5):
            c.send(h.request("GET", "/respond"))
            assert c.read_response().status == 200
        s = status(srv.port, c)
        assert s["requests"] == 6
        assert h.wait_for(lambda: status(srv.port, c)["active"] == 1, 5)
        a0 = status(srv.port, c)["accepts"]
        idle = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(3)]
        try:
            # accepted (asynchronously): 3 more, waiting for their first bytes
            assert h.wait_for(lambda: status(srv.port, c)["active"] == 4, 5)
            s = status(srv.port, c)
            assert s["accepts"] == a0 + 3 and s["handled"] == a0 + 3
            assert s["writing"] == 1 and s["reading"] == 0 and s["waiting"] == 3, s
            # one sends half a head: reading
            idle[0].sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            assert h.wait_for(lambda: status(srv.port, c)["reading"] == 1, 5)
            s = status(srv.port, c)
            assert s["waiting"] == 2 and s["writing"] == 1, s
        finally:
            for s_ in idle:
                s_.close()
        assert h.wait_for(lambda: status(srv.port, c)["active"] == 1, 5)
        s = status(srv.port, c)
        assert s["reading"] == 0 and s["waiting"] == 0 and s["writing"] == 1, s
        # each request once (the polls above are requests too)
        assert status(srv.port, c)["requests"] == s["requests"] + 1


def test_writing_while_a_response_is_produced(sws, origin):
    o = origin()
    srv = start(sws, server="""
        location = /status { stub_status; }
        location / { proxy_pass http://%s; }
    """ % o.addr)
    done = []
    t = threading.Thread(target=lambda: done.append(
        h.exchange(srv.port, h.request("GET", "/delay/1500"), timeout=10)))
    t.start()
    try:
        assert h.wait_for(lambda: status(srv.port)["writing"] == 2, 5)
    finally:
        t.join(10)
    assert done and done[0].status == 200
    assert h.wait_for(lambda: status(srv.port)["writing"] == 1, 5)


def test_keepalive_connection_waits(sws):
    srv = start(sws)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/respond"))
        c.read_response()
        with h.Conn(srv.port) as c2:       # from another connection
            assert h.wait_for(lambda: status(srv.port, c2)["active"] == 2, 5)
            s = status(srv.port, c2)
            assert s["waiting"] == 1 and s["writing"] == 1 and s["reading"] == 0, s


def test_summed_over_workers(sws):
    # a reuseport address: the kernel spreads connections over both workers
    srv = start(sws, workers=2, ports=2,
                http='log_format pids "$pid $request_uri";',
                servers="""
    server {
        listen 127.0.0.1:@PORT2@ reuseport;
        access_log @TMP@/pids.log pids;
        location = /status { stub_status; }
        location / { return 204; }
    }""")
    port = srv.ports[1]
    assert len(srv.wait_children(2)) == 2
    n = 40
    for _ in range(n):
        assert h.exchange(port, h.request("GET", "/x")).status == 204
    assert h.wait_for(lambda: len((srv.tmp / "pids.log").read_text().splitlines()) >= n, 5)
    pids = {ln.split()[0] for ln in (srv.tmp / "pids.log").read_text().splitlines()}
    assert len(pids) == 2, pids                     # both workers answered some
    base = status(port)
    for i in range(4):                              # whichever worker answers: the sum
        s = status(port)
        assert s["accepts"] == base["accepts"] + i + 1, (base, s)
        assert s["requests"] == base["requests"] + i + 1 >= n + 1, (base, s)
        # this request; the one before may still be ending in the other
        # worker (its answer sent, the request not yet finished there)
        assert 1 <= s["writing"] <= 2, s


def nghttp(*urls):
    r = subprocess.run(["nghttp"] + list(urls), capture_output=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_http2(sws):
    srv = start(sws, ports=2, servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        location = /status { stub_status; }
        location / { return 200 "ok"; }
    }""")
    base = status(srv.port)
    url = "http://127.0.0.1:%d%%s" % srv.ports[1]
    # five streams on one connection
    assert nghttp(*[url % ("/%d" % i) for i in range(5)]) == b"ok" * 5
    s = status(srv.port)
    assert s["accepts"] == base["accepts"] + 2, (base, s)
    assert s["requests"] == base["requests"] + 6, (base, s)
    # the page over HTTP/2: the stream being answered is writing
    s = parse(nghttp(url % "/status"))
    assert s["requests"] == base["requests"] + 7 and s["writing"] == 1, s
    assert s["reading"] == 0 and s["active"] >= 1
    assert h.wait_for(lambda: status(srv.port)["active"] == 1, 5)
    assert status(srv.port)["waiting"] == 0


def test_variables(sws):
    srv = start(sws, http='log_format st "$request_uri $connections_active $connections_reading '
                          '$connections_writing $connections_waiting";',
                server="access_log @TMP@/st.log st;\n"
                       "location = /status { stub_status; }")
    with h.Conn(srv.port) as c:
        # alone on the server: then one request, logged as it is answered
        assert h.wait_for(lambda: status(srv.port, c)["active"] == 1, 5)
        c.send(h.request("GET", "/respond"))
        assert c.read_response().status == 200
    def line():
        for ln in (srv.tmp / "st.log").read_text().splitlines():
            if ln.startswith("/respond "):
                return ln
    assert h.wait_for(line, 5)
    assert line().split()[1:] == ["1", "0", "1", "0"], line()


def test_reload_keeps_counting(sws):
    srv = start(sws)
    for _ in range(3):
        h.exchange(srv.port, h.request("GET", "/respond"))
    before = status(srv.port)
    old = srv.children()
    srv.signal(signal.SIGHUP)
    assert len(srv.wait_children(1, timeout=10, exclude=old)) == 1
    after = status(srv.port)
    assert after["accepts"] == before["accepts"] + 1, (before, after)
    assert after["active"] == 1 and after["writing"] == 1, after


def test_config_errors(tmp_path):
    cases = [
        ("location /s { stub_status off; }", ["invalid value", "off"]),
        ("location /s { stub_status on on; }", ["stub_status"]),
        ("location /s { stub_status; stub_status; }", ["duplicate"]),
        ("location /s { stub_status; respond 200; }", ["content handler"]),
    ]
    for i, (d, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server="        %s  # ERR\n" % d)
    conferr.check(tmp_path / "http", ["stub_status"], http="    stub_status;  # ERR\n")
    conferr.check_ok(tmp_path / "ok", server="location /s { stub_status; }")
