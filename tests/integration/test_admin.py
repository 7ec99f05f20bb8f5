"""The admin module (docs/admin.md): its own listener, tokens, /health,
/ready, the JSON API and its counters, /metrics (checked by promtool)."""
import json
import shutil
import subprocess
import time

import pytest

import swsharness as h

RO = "ro-token-0123456789abcdef"
RW = "rw-token-0123456789abcdef"
TOKENS = "# admin tokens\nro %s\n\nrw %s\n" % (RO, RW)


def admin_block(port="@PORT3@", tokens=False, extra=""):
    return "admin { listen 127.0.0.1:%s; %s %s }" % (
        port, "token_file @TMP@/admin.tokens;" if tokens else "", extra)


def start(sws, tokens=False, extra="", http="", **kw):
    files = kw.pop("files", {})
    if tokens:
        files["admin.tokens"] = TOKENS
    # the admin listener on the last port; @PORT2@ for another server
    return sws(ports=3, http=admin_block(tokens=tokens, extra=extra) + "\n" + http,
               files=files, **kw)


def get(srv, path, token=None, method="GET", headers=(), body=None, port=None):
    hdrs = list(headers)
    if token:
        hdrs.append("Authorization: Bearer %s" % token)
    return h.curl("http://127.0.0.1:%d%s" % (port or srv.ports[-1], path), method=method,
                  headers=hdrs, body=body)


def api(srv, path="/api/", token=None):
    r = get(srv, path, token)
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/json"
    return json.loads(r.body)


# ---- access

def test_health_ready_and_api_without_tokens(sws):
    srv = start(sws)
    r = get(srv, "/health")
    assert r.status == 200 and json.loads(r.body) == {"status": "alive"}
    r = get(srv, "/ready")
    assert r.status == 200 and json.loads(r.body) == {"ready": True}
    assert r.header("Cache-Control") == "no-store"
    doc = api(srv)
    assert set(doc) == {"server", "connections", "http", "workers", "tls", "http2",
                        "upstreams", "helpers", "zones", "limits", "caches", "resolvers"}
    assert doc["helpers"] == []
    assert doc["server"]["version"]
    assert doc["server"]["abi"] == "%d.%d" % (h.ABI_MAJOR, h.ABI_MINOR)
    assert doc["server"]["config_file"] == str(srv.conf_path)
    assert len(doc["server"]["config_sha256"]) == 64
    import hashlib
    assert doc["server"]["config_sha256"] == hashlib.sha256(
        srv.conf_path.read_bytes()).hexdigest()
    one, slash = api(srv, "/api/server"), api(srv, "/api/server/")
    assert one.keys() == slash.keys() and one["start_time"] == slash["start_time"]
    r = get(srv, "/api/nothing")
    assert r.status == 404 and json.loads(r.body)["error"]["status"] == 404
    r = get(srv, "/elsewhere")
    assert r.status == 404
    r = get(srv, "/health", method="POST", body="x")
    assert r.status == 405


def test_admin_paths_are_not_on_ordinary_listeners(sws):
    srv = start(sws)
    for path in ("/api/", "/api/server", "/metrics", "/health", "/ready"):
        r = get(srv, path, port=srv.ports[0])
        assert r.status == 404, (path, r)
        assert b"generation" not in r.body


def test_tokens(sws):
    srv = start(sws, tokens=True)
    # the probes need none
    assert get(srv, "/health").status == 200
    assert get(srv, "/ready").status == 200
    for path in ("/api/", "/api/http", "/metrics"):
        r = get(srv, path)
        assert r.status == 401, r
        assert r.header("WWW-Authenticate").startswith("Bearer")
        assert json.loads(r.body)["error"]["status"] == 401 or path == "/metrics"
        assert get(srv, path, token=RO[:-1]).status == 401
        assert get(srv, path, token=RO + "x").status == 401
        assert get(srv, path, token="").status == 401
        assert get(srv, path, headers=["Authorization: Basic %s" % RO]).status == 401
        assert get(srv, path, token=RO).status == 200
        assert get(srv, path, token=RW).status == 200
        assert get(srv, path, headers=["Authorization: bearer  %s " % RW]).status == 200
    # a read-only token may not change anything
    r = get(srv, "/api/server", token=RO, method="POST", body="{}")
    assert r.status == 403 and b"only read" in r.body
    r = get(srv, "/api/server", method="POST", body="{}")
    assert r.status == 401


@pytest.mark.parametrize("listen,needle", [
    ("0.0.0.0:@PORT2@", "0.0.0.0:"),
    ("@PORT2@", ":"),
])
def test_public_listen_needs_a_token(tmp_path, listen, needle):
    conf_http = "admin {\n    listen %s;\n}" % listen
    rc, out, listening = h.start_expect_failure(tmp_path, http=conf_http, ports=2)
    assert rc not in (None, 0), out
    assert "not loopback or a unix socket, without a token_file" in out, out
    assert "scalws.conf:" in out and needle in out, out


def test_public_listen_with_a_token_starts(sws):
    srv = sws(ports=2, http="admin { listen 0.0.0.0:@PORT2@; token_file @TMP@/t; }",
              files={"t": TOKENS})
    assert get(srv, "/api/http").status == 401
    assert get(srv, "/api/http", token=RO).status == 200


def test_unix_socket_listener(sws, tmp_path):
    sock = tmp_path / "admin.sock"
    srv = sws(ports=1, http="admin { listen unix:%s; }" % sock, unix_paths=[str(sock)])
    r = h.curl("http://localhost/api/http", unix=str(sock))
    assert r.status == 200 and "requests" in json.loads(r.body)


@pytest.mark.parametrize("block,needle", [
    ("admin { listen 127.0.0.1:@PORT@; }", "is not shared with another server"),
    ("admin { token_file @TMP@/none; }", "open() \""),
    ("admin { token_file @TMP@/bad1; }", "line 1 of"),
    ("admin { token_file @TMP@/bad2; }", "shorter than 16"),
    ("admin { token_file @TMP@/bad3; }", "a character a bearer token may not have"),
    ("admin { token_file @TMP@/empty; }", "has no token"),
    ("admin { token_file @TMP@/t; token_file @TMP@/t; }", "is duplicate"),
    ("server { listen 127.0.0.1:@PORT2@; token_file @TMP@/t; }",
     "is only allowed in an admin block"),
    ("admin { listen 127.0.0.1:@PORT2@; } admin { listen 127.0.0.1:@PORT2@; }",
     "is not shared with another server"),
])
def test_configuration_errors(tmp_path, block, needle):
    files = {"t": TOKENS, "bad1": "rx %s\n" % RW, "bad2": "rw short\n",
             "bad3": "rw %s\"\n" % RW, "empty": "# nothing\n"}
    (tmp_path / "html").mkdir()
    for k, v in files.items():
        (tmp_path / k).write_text(v)
    rc, out, listening = h.start_expect_failure(tmp_path, http=block, ports=2)
    assert rc not in (None, 0) and needle in out, out
    assert "scalws.conf:" in out, out


# ---- counters

def test_counters_add_up_over_http1_and_http2(sws):
    srv = start(sws, files={"html/f.txt": "x" * 1000}, servers="""
        server { listen 127.0.0.1:@PORT2@ http2; root @TMP@/html; }""")
    base = "http://127.0.0.1:%d" % srv.port
    base2 = "http://127.0.0.1:%d" % srv.ports[1]
    before = api(srv, "/api/http")
    for _ in range(5):
        assert h.curl(base + "/respond").status == 200
    for _ in range(3):
        assert h.curl(base2 + "/f.txt", prior_knowledge=True).status == 200
    for _ in range(4):
        assert h.curl(base + "/missing").status == 404
    # a request the client breaks off while sending its head: a 400
    r = h.exchange(srv.port, b"GET /x HTTP/1.1\r\nHost: localhost\r\nBad header\r\n\r\n")
    assert r.status == 400
    after = api(srv, "/api/http")
    d = {k: after["responses"][k] - before["responses"][k] for k in after["responses"]}
    # the "before" request itself was answered after its own snapshot
    assert d == {"1xx": 0, "2xx": 5 + 3 + 1, "3xx": 0, "4xx": 4 + 1, "5xx": 0}, d
    assert after["requests"] - before["requests"] == 5 + 3 + 4 + 1 + 1
    assert after["bytes_out"] - before["bytes_out"] > 3 * 1000
    assert after["bytes_in"] - before["bytes_in"] > 13 * len("GET / HTTP/1.1\r\n")
    doc = api(srv, "/api/workers")
    assert sum(w["http"]["requests"] for w in doc) >= after["requests"]
    assert api(srv, "/api/http2") == {"connections": 3, "streams": 3}


def test_upstream_counters(sws):
    dead = h.free_port()
    srv = start(sws, http="""
        upstream back { server 127.0.0.1:@PORT@; server 127.0.0.1:%d max_fails=0; }
        """ % dead, server="location /up/ { proxy_pass http://back/; }"
                           "location = /upstream-target/respond { return 200 ok; }")
    base = "http://127.0.0.1:%d" % srv.port
    for _ in range(6):
        assert h.curl(base + "/up/respond").status == 200
    ups = api(srv, "/api/upstreams")
    assert list(ups) == ["back"]
    servers = {s["server"]: s for s in ups["back"]["servers"]}
    assert set(servers) == {"127.0.0.1:%d" % srv.port, "127.0.0.1:%d" % dead}
    live, gone = servers["127.0.0.1:%d" % srv.port], servers["127.0.0.1:%d" % dead]
    # every request ends on the live server, some after a try on the dead one
    assert live["requests"] == 6 and live["failures"] == 0
    assert 1 <= gone["failures"] == gone["requests"] <= 6
    assert gone["responses"] == 0 and gone["active"] == 0 == live["active"]
    assert live["status"]["2xx"] == live["responses"] == live["requests"]
    hist = live["response_time_histogram"]
    assert [b["le_ms"] for b in hist] == [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000,
                                          10000]
    counts = [b["count"] for b in hist]
    assert counts == sorted(counts) and counts[-1] == live["responses"]


# ---- metrics

def promtool(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       timeout=30)
    return p.returncode, (p.stdout + p.stderr).decode()


def metric(text, name, **labels):
    """The value of the one sample of name with exactly these labels."""
    want = ",".join('%s="%s"' % kv for kv in labels.items())
    prefix = "%s{%s} " % (name, want)
    found = [line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)]
    assert len(found) == 1, (prefix, text)
    return int(found[0])


@pytest.mark.skipif(shutil.which("promtool") is None, reason="no promtool (prometheus)")
def test_metrics_pass_promtool(sws):
    srv = start(sws, http="upstream back { server 127.0.0.1:@PORT@; }",
                server="location /up/ { proxy_pass http://back/; }")
    h.curl("http://127.0.0.1:%d/up/respond" % srv.port)
    h.curl("http://127.0.0.1:%d/missing" % srv.port)
    r = get(srv, "/metrics")
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    text = r.body.decode()
    rc, out = promtool(r.body)
    assert rc == 0 and out.strip() == "", out
    assert 'scalws_http_requests_total{code="4xx"} 1\n' in text, text
    assert "# TYPE scalws_http_requests_total counter\n" in text
    assert 'scalws_build_info{version="' in text
    assert 'scalws_upstream_requests_total{upstream="back",server="127.0.0.1:%d"} 1' \
        % srv.port in text
    assert "# TYPE scalws_upstream_response_time_seconds histogram\n" in text
    up = 'upstream="back",server="127.0.0.1:%d"' % srv.port
    assert "scalws_upstream_response_time_seconds_bucket{%s,le=\"0.005\"} " % up in text
    assert "scalws_upstream_response_time_seconds_bucket{%s,le=\"0.01\"} " % up in text
    assert "scalws_upstream_response_time_seconds_bucket{%s,le=\"10\"} 1\n" % up in text
    assert "scalws_upstream_response_time_seconds_bucket{%s,le=\"+Inf\"} 1\n" % up in text
    assert "scalws_upstream_response_time_seconds_count{%s} 1\n" % up in text
    assert "# EOF" not in text
    # OpenMetrics on request
    r = get(srv, "/metrics", headers=["Accept: application/openmetrics-text; version=1.0.0"])
    assert r.header("Content-Type").startswith("application/openmetrics-text")
    om = r.body.decode()
    assert om.endswith("# EOF\n")
    assert "# TYPE scalws_http_requests counter\n" in om
    assert "# TYPE scalws_build info\n" in om
    assert 'scalws_http_requests_total{code="2xx"}' in om


def test_tls_with_the_ordinary_ssl_directives(sws, pki):
    crt, key = pki.leaf("localhost")
    srv = sws(ports=2, http="""admin {
        listen 127.0.0.1:@PORT2@ ssl http2;
        ssl_certificate %s;
        ssl_certificate_key %s;
    }""" % (crt, key))
    url = "https://localhost:%d/api/server" % srv.ports[1]
    resolve = ["localhost:%d:127.0.0.1" % srv.ports[1]]
    r = h.curl(url, cainfo=pki.ca, resolve=resolve)
    assert r.status == 200 and json.loads(r.body)["abi"] == "%d.%d" % (h.ABI_MAJOR, h.ABI_MINOR)
    r = h.curl(url, cainfo=pki.ca, resolve=resolve, http2=True)
    assert r.status == 200 and r.http_version == 3     # CURL_HTTP_VERSION_2_0
    # a client that gives up in the handshake
    with h.Conn(srv.ports[1]) as c:
        c.send(b"\x16\x03\x01\x00\x05hello")
    def tls():
        return json.loads(h.curl(url.replace("/api/server", "/api/tls"), cainfo=pki.ca,
                                 resolve=resolve).body)
    assert h.wait_for(lambda: tls()["failed"] == 1, 5), tls()
    t = tls()
    # each curl is a connection of its own: two above, the waits, this one
    assert t["handshakes"] + t["resumed"] == t["versions"]["TLSv1.3"] >= 4, t
    h2 = json.loads(h.curl(url.replace("/api/server", "/api/http2"), cainfo=pki.ca,
                           resolve=resolve).body)
    assert h2 == {"connections": 1, "streams": 1}, h2
    # plain text on the TLS port is not served
    r = h.exchange(srv.ports[1], h.request("GET", "/api/server"))
    assert r is None or r.status == 400


# ---- changes

def post(srv, path, body=None, token=None, method="POST"):
    return get(srv, path, token=token, method=method,
               body=body if body is not None else "",
               headers=["Content-Type: application/json"])


def test_writes_need_a_read_write_token(sws):
    srv = start(sws, tokens=True, http="upstream back { server 127.0.0.1:@PORT@; }")
    path = "/api/upstreams/back/servers"
    body = json.dumps({"server": "127.0.0.1:1"})
    for token, status in ((None, 401), ("wrong-token-0123456789", 401), (RO, 403)):
        r = post(srv, path, body, token=token)
        assert r.status == status, (token, r)
    assert len(api(srv, "/api/upstreams", token=RO)["back"]["servers"]) == 1
    r = post(srv, path, body, token=RW)
    assert r.status == 201, r
    assert json.loads(r.body)["state"] == "up"
    assert len(api(srv, "/api/upstreams", token=RO)["back"]["servers"]) == 2


def test_reload_and_its_refusal(sws):
    srv = start(sws)
    gen = api(srv, "/api/server")["generation"]
    r = post(srv, "/api/reload")
    assert r.status == 200, r
    doc = json.loads(r.body)
    assert doc["reloaded"] is True and doc["generation"] == 2
    assert h.wait_for(lambda: api(srv, "/api/server")["generation"] == gen + 1, 5)
    # a configuration with an error: refused, file and line in the answer
    good = srv.conf_path.read_text()
    srv.conf_path.write_text(good.replace("http {", "http {\n    no_such_directive 1;", 1))
    r = post(srv, "/api/reload")
    assert r.status == 422, r
    msg = json.loads(r.body)["error"]["message"]
    assert 'unknown directive "no_such_directive"' in msg, msg
    assert "%s:%d" % (srv.conf_path, good.split("\n").index("http {") + 2) in msg, msg
    # the old one keeps serving
    assert h.curl("http://127.0.0.1:%d/respond" % srv.port).status == 200
    info = api(srv, "/api/server")
    assert info["reload_failures"] == 1 and info["last_reload_ok"] is False
    assert "no_such_directive" in info["last_reload_error"]
    assert "admin: reload refused" in srv.error_log()
    assert "(asked by 127.0.0.1)" in srv.error_log()
    r = post(srv, "/api/reload", "{\"x\": 1}")
    assert r.status == 400 and b"unknown field" in r.body


def test_reopen(sws):
    srv = start(sws)
    log = srv.tmp / "access.log"
    h.curl("http://127.0.0.1:%d/respond" % srv.port)
    assert h.wait_for(lambda: log.exists() and log.stat().st_size > 0, 5)
    log.rename(srv.tmp / "access.log.1")
    r = post(srv, "/api/reopen")
    assert r.status == 200 and json.loads(r.body) == {"reopened": True}
    assert h.wait_file_contains(srv.error_log_path, "reopen", 5)

    def logged():
        h.curl("http://127.0.0.1:%d/respond" % srv.port)
        return log.exists() and b"/respond" in log.read_bytes()
    assert h.wait_for(logged, 5)


def test_drain_under_load(sws):
    import threading
    srv = start(sws)
    stop = threading.Event()
    results = []

    def load():
        while not stop.is_set():
            try:
                results.append(h.curl("http://127.0.0.1:%d/respond" % srv.port).status)
            except Exception as e:      # a refused or cut connection is a failure
                results.append(repr(e))
    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        assert h.wait_for(lambda: len(results) > 20, 5)
        r = post(srv, "/api/drain", json.dumps({"seconds": 2}))
        assert r.status == 202
        n = len(results)
        time.sleep(1.5)                 # inside the drain window
        window = results[n:]
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    assert len(window) > 20 and set(window) == {200}, set(window)
    assert srv.wait_exit(10) is not None


def test_drain(sws):
    srv = start(sws, extra="drain_time 1s;")
    r = post(srv, "/api/drain", json.dumps({"seconds": "x"}))
    assert r.status == 400
    assert get(srv, "/ready").status == 200
    r = post(srv, "/api/drain", json.dumps({"seconds": 2}))
    assert r.status == 202 and json.loads(r.body)["quit_in_ms"] == 2000
    # not ready at once; still serving
    r = get(srv, "/ready")
    assert r.status == 503 and json.loads(r.body) == {"ready": False}
    assert get(srv, "/health").status == 200
    ok = 0
    while srv.alive() and ok < 10:
        assert h.curl("http://127.0.0.1:%d/respond" % srv.port).status == 200
        ok += 1
    assert ok == 10
    assert api(srv, "/api/server")["draining"] is True
    # then it quits by itself
    assert srv.wait_exit(10) is not None
    assert "the drain asked for is over" in srv.error_log()


BAD_BODIES = [
    ("{", 400, "not JSON"),
    ("[1]", 400, "not a JSON object"),
    ('{"server": "127.0.0.1:1", "server": "127.0.0.1:2"}', 400, "not JSON"),
    ('{"server": 5}', 400, "\\\"server\\\""),
    ('{"server": "127.0.0.1:1", "weight": 0}', 400, "weight"),
    ('{"server": "127.0.0.1:1", "weight": 1001}', 400, "weight"),
    ('{"server": "127.0.0.1:1", "weight": "2"}', 400, "weight"),
    ('{"server": "127.0.0.1:1", "colour": "red"}', 400, "unknown field"),
    ('{"server": "no.such.name.invalid:80"}', 400, "not an address"),
]


def test_upstream_changes(sws):
    srv = start(sws, extra="state_file @TMP@/state/admin.state;",
                http="upstream back { server 127.0.0.1:@PORT@; }",
                server="location /up/ { proxy_pass http://back/; }")
    path = "/api/upstreams/back/servers"
    me = "127.0.0.1:%d" % srv.port

    def servers():
        return {s["server"]: s for s in api(srv, "/api/upstreams")["back"]["servers"]}
    for body, status, needle in BAD_BODIES:
        r = post(srv, path, body)
        assert r.status == status and needle.encode() in r.body, (body, r)
    assert list(servers()) == [me]
    # unknown groups and servers
    r = post(srv, "/api/upstreams/nothing/servers", json.dumps({"server": "127.0.0.1:1"}))
    assert r.status == 404 and b"no upstream group" in r.body
    r = post(srv, path + "/127.0.0.1:1", json.dumps({"state": "down"}), method="PATCH")
    assert r.status == 404 and b"no server" in r.body
    r = post(srv, path + "/127.0.0.1:1", method="DELETE")
    assert r.status == 404
    r = post(srv, path + "/" + me, json.dumps({"state": "sleeping"}), method="PATCH")
    assert r.status == 400
    r = post(srv, path + "/" + me, json.dumps({}), method="PATCH")
    assert r.status == 400 and b"nothing to change" in r.body
    r = post(srv, path + "/" + me, method="GET")
    assert r.status == 404
    assert servers()[me]["state"] == "up" and servers()[me]["weight"] == 1
    assert not (srv.tmp / "state" / "admin.state").exists()
    # add, weight, drain, down, up, remove
    other = "127.0.0.1:%d" % h.free_port()
    r = post(srv, path, json.dumps({"server": other, "weight": 3}))
    assert r.status == 201 and json.loads(r.body)["weight"] == 3, r
    assert servers()[other]["state"] == "up"
    r = post(srv, path + "/" + me, json.dumps({"weight": 5, "state": "draining"}),
             method="PATCH")
    assert r.status == 200, r
    assert json.loads(r.body) == {"server": me, "address": me, "state": "draining",
                                  "weight": 5}
    assert servers()[me]["state"] == "draining"
    r = post(srv, path + "/" + other, json.dumps({"state": "draining"}), method="PATCH")
    assert r.status == 200 and json.loads(r.body)["state"] == "draining"
    r = post(srv, path + "/" + other, json.dumps({"state": "up"}), method="PATCH")
    assert r.status == 200 and json.loads(r.body)["state"] == "up"
    assert "admin: upstream \"back\": server %s added, weight 3 (asked by 127.0.0.1)" \
        % other in srv.error_log()
    state = json.loads((srv.tmp / "state" / "admin.state").read_text())
    assert state == {"upstreams": {"back": [
        {"server": me, "weight": 5, "state": "draining", "added": False},
        {"server": other, "weight": 3, "state": "up", "added": True}]}}
    # kept across a reload ...
    assert post(srv, "/api/reload").status == 200
    s = servers()
    assert s[me]["state"] == "draining" and s[me]["weight"] == 5, s
    assert s[other]["state"] == "up" and s[other]["weight"] == 3, s
    # ... and a restart
    srv.stop()
    srv.start()
    s = servers()
    assert s[me]["state"] == "draining" and s[me]["weight"] == 5, s
    assert s[other]["state"] == "up" and s[other]["weight"] == 3, s
    # a server added at run time goes when removed; a configured one is down
    r = post(srv, path + "/" + other, method="DELETE")
    assert r.status == 200 and json.loads(r.body)["state"] == "removed"
    assert other not in servers()
    r = post(srv, path + "/" + me, json.dumps({"state": "down"}), method="PATCH")
    assert r.status == 200 and json.loads(r.body)["state"] == "down"
    assert servers()[me]["state"] == "down"
    assert h.curl("http://127.0.0.1:%d/up/respond" % srv.port).status == 502
    assert post(srv, path + "/" + me, json.dumps({"state": "up"}), method="PATCH").status == 200
    assert servers()[me]["state"] == "up"
    assert h.curl("http://127.0.0.1:%d/up/respond" % srv.port).status == 200


def test_two_clients_change_one_group_at_once(sws):
    import threading
    srv = start(sws, http="upstream back { server 127.0.0.1:@PORT@; }",
                extra="state_file @TMP@/state/admin.state;")
    ports = [h.free_port() for _ in range(6)]
    results = []

    def add(ps):
        for p in ps:
            results.append(post(srv, "/api/upstreams/back/servers",
                                json.dumps({"server": "127.0.0.1:%d" % p})).status)
    threads = [threading.Thread(target=add, args=(ports[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [201] * 6
    names = {s["server"] for s in api(srv, "/api/upstreams")["back"]["servers"]}
    assert names == {"127.0.0.1:%d" % p for p in [srv.port] + ports}
    state = json.loads((srv.tmp / "state" / "admin.state").read_text())
    assert {s["server"] for s in state["upstreams"]["back"]} == names


def test_cache_purge(sws):
    srv = start(sws, http="proxy_cache_path @TMP@/cache keys_zone=one:1m;"
                          "upstream back { server 127.0.0.1:@PORT@; }",
                server="location /c/ { proxy_pass http://back/; proxy_cache one;"
                       " proxy_cache_valid 200 1h; proxy_cache_key $uri;"
                       " add_header X-Cache $upstream_cache_status; }")
    base = "http://127.0.0.1:%d" % srv.port
    for u in ("/c/respond", "/c/respond?a", "/c/respond2"):
        h.curl(base + u)
    assert h.curl(base + "/c/respond").header("X-Cache") == "HIT"
    r = post(srv, "/api/caches/one/purge", json.dumps({"key": "/c/respond"}))
    assert r.status == 200 and json.loads(r.body) == {"purged": 1}, r
    assert h.curl(base + "/c/respond").header("X-Cache") == "MISS"
    r = post(srv, "/api/caches/one/purge", json.dumps({"prefix": "/c/"}))
    assert r.status == 200 and json.loads(r.body)["purged"] >= 1, r
    r = post(srv, "/api/caches/none/purge", json.dumps({"key": "/c/respond"}))
    assert r.status == 404
    for body in ("{}", '{"key": "a", "prefix": "b"}', '{"key": ""}', '{"key": "a*"}',
                 '{"key": 1}'):
        r = post(srv, "/api/caches/one/purge", body)
        assert r.status == 400, (body, r)
    assert "admin: cache \"one\": 1 entries of key \"/c/respond\" purged" in srv.error_log()
    # what the client names is logged on one line
    r = post(srv, "/api/caches/one/purge", json.dumps({"key": "/x\n2026/01/01 [emerg] forged"}))
    assert r.status == 200
    assert "\n2026/01/01 [emerg] forged" not in srv.error_log()
    assert "key \"/x?2026/01/01 [emerg] forged\" purged" in srv.error_log()


@pytest.fixture(scope="module")
def helper_load(tmp_path_factory):
    import helpermod
    return helpermod.build(tmp_path_factory.mktemp("helpermod"))


def test_helpers(sws, helper_load):
    srv = start(sws, load=helper_load,
                http="test_helper_program steady /bin/sh -c 'exec sleep 60';\n"
                     "test_helper_program flaky /bin/sh -c 'exit 3';\n"
                     "test_helper_restart flaky always;\n"
                     "test_helper_backoff flaky 50ms 50ms 1s;\n")

    def helpers():
        return {x["name"]: x for x in api(srv, "/api/helpers")}
    assert h.wait_for(lambda: helpers().get("flaky", {}).get("restarts", 0) >= 2, 10), \
        helpers()
    hs = helpers()
    assert set(hs) == {"steady", "flaky"}, hs
    steady = hs["steady"]
    assert steady["pid"] > 0 and steady["starts"] == 1 and steady["exits"] == 0
    assert steady["state"] in ("ready", "starting") and "last_exit" not in steady
    assert open("/proc/%d/cmdline" % steady["pid"], "rb").read().startswith(b"sleep")
    flaky = hs["flaky"]
    assert flaky["exits"] >= 2 and flaky["last_exit"] == {"code": 3, "signal": 0}, flaky
    text = get(srv, "/metrics").body.decode()
    assert 'scalws_helper_up{helper="steady"} 1\n' in text
    assert 'scalws_helper_starts_total{helper="flaky"} ' in text
    if shutil.which("promtool"):
        rc, out = promtool(text.encode())
        assert rc == 0, out


def test_without_a_master_the_server_changes_answer_409(sws):
    conf = h.MAIN_TEMPLATE.replace("master_process on;", "master_process off;")
    srv = sws(conf=conf, ports=2, http="admin { listen 127.0.0.1:@PORT2@; }")
    for path in ("/api/reload", "/api/reopen", "/api/drain"):
        r = post(srv, path)
        assert r.status == 409 and b"no master" in r.body, (path, r)
    assert get(srv, "/ready").status == 200
    doc = api(srv, "/api/server")
    assert "generation" not in doc and doc["draining"] is False


def test_server_directives_apply_in_the_admin_block(sws):
    # allow/deny and the rest of a server's directives work as in a server
    srv = start(sws, extra="deny 127.0.0.1; access_log @TMP@/admin_access.log;")
    assert get(srv, "/api/http").status == 403
    assert get(srv, "/health").status == 403
    assert h.wait_file_contains(srv.tmp / "admin_access.log", "GET /api/http", 5)
