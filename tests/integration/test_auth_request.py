"""auth_request and auth_request_set: a real small auth service (authsvc.py,
a Python http.server process) behind an internal location; its verdicts
(2xx, 401, 403, others), the service down and slow, variables from its
headers, HTTP/1.1 and HTTP/2 clients, a client that leaves while the check
runs, the directives' accepted and refused forms, and "satisfy" with
allow/deny and auth_basic side by side with nginx 1.22."""
import base64
import hashlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import swsharness as h

HERE = Path(__file__).resolve().parent


@pytest.fixture
def authsvc():
    port = h.free_port()
    p = subprocess.Popen([sys.executable, str(HERE / "authsvc.py"), str(port)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not h.port_open(port):
        assert p.poll() is None and time.monotonic() < deadline, "authsvc did not start"
        time.sleep(0.02)
    yield port
    p.kill()
    p.wait(5)


CODES = (204, 302, 401, 403, 404, 500)

AUTH_LOCATIONS = """
        location = /auth {
            internal;
            proxy_pass http://127.0.0.1:@AUTH@;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI $request_uri;
        }
        location = /auth-down { internal; proxy_pass http://127.0.0.1:@DEAD@/; }
        location = /auth-slow {
            internal;
            proxy_pass http://127.0.0.1:@AUTH@/slow/3000;
            proxy_read_timeout 300ms;
        }
        location = /auth-plain { internal; proxy_pass http://127.0.0.1:@AUTH@; }
""" + "".join("""
        location = /auth-%d { internal; proxy_pass http://127.0.0.1:@AUTH@/code/%d; }
        location = /c%d { auth_request /auth-%d; }""" % (c, c, c, c) for c in CODES)

SERVER = AUTH_LOCATIONS + """
        location / {
            auth_request /auth;
            auth_request_set $user $upstream_http_x_auth_request_user;
            auth_request_set $ustatus "[$upstream_status]";
            add_header X-User $user always;
            add_header X-Auth-Status $ustatus always;
            auth_request_set $seen "$upstream_http_x_seen_method $upstream_http_x_seen_path $upstream_http_x_seen_uri $upstream_http_x_seen_length";
            add_header X-Seen $seen always;
        }
        location /app/ {
            auth_request /auth-plain;
            auth_request_set $email $upstream_http_x_auth_request_email;
            proxy_set_header X-Email $email;
            proxy_pass http://@ORIGIN@/echo/;
        }
        location = /down { auth_request /auth-down; }
        location = /slow { auth_request /auth-slow; }
        location = /missing { auth_request /no-such-location; }
        location = /notpath { auth_request relative; }
        location /open/ { auth_request off; }
        location = /unauth-page { auth_request /auth-401; error_page 401 = /sign-in; }
        location = /sign-in { return 200 "please sign in\\n"; }
"""

FILES = {"html/index.html": "home\n", "html/open/x.html": "open\n", "html/c204": "c\n",
         "html/c302": "c\n", "html/c401": "c\n", "html/c403": "c\n", "html/c404": "c\n",
         "html/c500": "c\n", "html/unauth-page": "x\n"}


@pytest.fixture
def srv(tmp_path, authsvc, origin):
    o = origin("app")
    s = h.launch(tmp_path, ports=2, files=FILES, server=SERVER.replace("@AUTH@", str(authsvc))
                 .replace("@DEAD@", str(h.free_port())).replace("@ORIGIN@", o.addr),
                 servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
%s
    }""" % SERVER.replace("@AUTH@", str(authsvc)).replace("@DEAD@", str(h.free_port()))
                 .replace("@ORIGIN@", o.addr))
    s.origin = o
    yield s
    s.stop()


def get(s, path, headers=(), h2=False, **kw):
    port = s.ports[1] if h2 else s.ports[0]
    return h.curl("http://127.0.0.1:%d%s" % (port, path), headers=list(headers),
                  prior_knowledge=h2, **kw)


@pytest.mark.parametrize("h2", [False, True])
def test_verdicts(srv, h2):
    r = get(srv, "/index.html", ["Cookie: session=good"], h2=h2)
    assert (r.status, r.body) == (200, b"home\n"), r
    assert r.header("X-User") == "alice" and r.header("X-Auth-Status") == "[200]", r.headers
    assert r.http_version == (3 if h2 else 2)     # pycurl: 3 = HTTP/2, 2 = 1.1

    r = get(srv, "/index.html", h2=h2)
    assert r.status == 401 and b"401 Authorization Required" in r.body, r
    assert r.headers_all("WWW-Authenticate") == ['Bearer realm="test"'], r.headers
    # the variables were made from the 401 too; the service's body never shows
    assert r.header("X-Auth-Status") == "[401]" and b"auth service" not in r.body, r

    for code in CODES:
        r = get(srv, "/c%d" % code, h2=h2)
        want = 200 if code == 204 else code if code in (401, 403) else 500
        assert r.status == want, (code, r)
        assert b"the auth service" not in r.body
        if code == 401:
            # the first challenge of the subrequest's 401, as nginx 1.22
            assert r.headers_all("WWW-Authenticate") == ['Bearer realm="test"'], r.headers
        else:
            assert r.header("WWW-Authenticate") is None and r.header("Location") is None, r
    # the service down (502), slow (504 at proxy_read_timeout): 500, at once
    t0 = time.monotonic()
    assert get(srv, "/down", h2=h2).status == 500
    assert get(srv, "/slow", h2=h2).status == 500
    assert time.monotonic() - t0 < 2.5


def test_error_log_and_failures(srv):
    t0 = time.monotonic()
    assert get(srv, "/down").status == 500                # connect() refused: 502 -> 500
    assert get(srv, "/slow").status == 500                # proxy_read_timeout: 504 -> 500
    assert time.monotonic() - t0 < 2.5, "the slow service held the client"
    assert get(srv, "/missing").status == 500             # 404 of the subrequest
    assert get(srv, "/notpath").status == 500
    log = srv.error_log()
    assert "auth request unexpected status: 502" in log, log[-2000:]
    assert "auth request unexpected status: 504" in log
    assert "auth request unexpected status: 404" in log
    # the internal location is the server's only, and auth_request off opens
    assert get(srv, "/auth").status == 404
    assert get(srv, "/open/x.html").body == b"open\n"
    # error_page 401 = another location, as oauth2-proxy's sign-in
    r = get(srv, "/unauth-page")
    assert (r.status, r.body) == (200, b"please sign in\n"), r


def test_keepalive(srv):
    """Checked requests one after another on one connection (HTTP/1.1 and
    HTTP/2): each is asked of the service, the connection goes on."""
    import pycurl
    import h2raw
    from test_cache_background_h2 import responses
    c = pycurl.Curl()
    try:
        got = [get(srv, "/index.html", [] if i == 1 else ["Cookie: session=good"], handle=c)
               for i in range(4)]
    finally:
        c.close()
    assert [r.status for r in got] == [200, 401, 200, 200], got
    assert sum(r.num_connects for r in got) == 1, [r.num_connects for r in got]
    # (curl 7.88 does not reuse an h2c prior-knowledge connection: raw frames,
    # one stream after another, then three at once)
    with h2raw.H2(srv.ports[1]) as conn:
        good = [("cookie", "session=good")]
        statuses = []
        for extra in (good, [], good):
            sid = conn.get("/index.html", scheme="http", extra=extra)
            statuses.append(h2raw.status(conn.response(sid)[0]))
        sids = [conn.get("/index.html", scheme="http", extra=e) for e in (good, [], good)]
        got = responses(conn, sids, 5)
        statuses += [got[sid][0] for sid in sids]
    assert statuses == [200, 401, 200, 200, 401, 200], statuses


def test_proxied_after_auth(srv):
    import json
    r = get(srv, "/app/x?q=1", ["X-Token: good"])
    assert r.status == 200, r
    echo = json.loads(r.body)
    assert echo["target"] == "/echo/x?q=1", echo
    assert ["X-Email", "alice@example.test"] in echo["headers"], echo
    # a POST: the check has no body, the proxied request has it whole
    r = get(srv, "/app/p", ["X-Token: good"], method="POST", body=b"payload=1")
    assert r.status == 200, r
    echo = json.loads(r.body)
    assert (echo["method"], echo["body"]) == ("POST", "payload=1"), echo
    r = get(srv, "/index.html", ["Cookie: session=good"], method="POST", body=b"x" * 5000)
    assert r.status == 405, r                            # the static module's answer
    before = len(srv.origin.requests)
    r = get(srv, "/app/p", method="POST", body=b"payload=1")
    assert r.status == 401, r
    assert len(srv.origin.requests) == before       # refused: never proxied


@pytest.mark.parametrize("h2", [False, True])
def test_service_sees(srv, h2):
    """What the auth service gets: a GET of the auth location's URI with
    no args of the client's, the client's headers, $request_uri, no body."""
    r = get(srv, "/index.html?a=b", ["Cookie: session=good"], method="POST", body=b"abc", h2=h2)
    assert r.status == 405, r
    # (proxy_pass without a URI part sends the subrequest's URI, as nginx;
    # Content-Length "" leaves out the length of the body not passed)
    assert r.header("X-Seen") == "GET /auth /index.html?a=b -", r.headers
    r = get(srv, "/index.html", ["Cookie: session=good"], h2=h2)
    assert r.header("X-Seen") == "GET /auth /index.html -", r.headers


def test_client_leaves_during_check(srv):
    """The client goes away while the subrequest waits on the slow service:
    over HTTP/1.1 and HTTP/2 the request and its subrequest end cleanly
    (the ASan run of this file checks the memory), the server goes on."""
    import struct
    import h2raw
    for i in range(3):
        with socket.create_connection(("127.0.0.1", srv.ports[0])) as c:
            c.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(0.05)
        with h2raw.H2(srv.ports[1]) as conn:      # the connection closes
            conn.get("/slow", scheme="http")
            time.sleep(0.05)
    with h2raw.H2(srv.ports[1]) as conn:          # a stream reset, the connection goes on
        sid = conn.get("/slow", scheme="http")
        time.sleep(0.05)
        conn.send(h2raw.raw_frame(0x3, 0, sid, struct.pack("!I", 0x8)))     # CANCEL
        sid = conn.get("/index.html", scheme="http", extra=[("cookie", "session=good")])
        hdrs, body = conn.response(sid)[:2]
        assert h2raw.status(hdrs) == 200 and body == b"home\n", hdrs
    time.sleep(0.5)
    # the HTTP/2 requests went with their streams, their checks with them
    assert srv.error_log().count('subrequest "/auth-slow" ends with its request') == 4, \
        srv.error_log()[-3000:]
    assert get(srv, "/index.html", ["Cookie: session=good"]).status == 200
    assert get(srv, "/index.html", ["Cookie: session=good"], h2=True).status == 200
    assert srv.alive()


def test_directives(tmp_path):
    ok = h.launch(tmp_path / "ok", server="""
        auth_request /a;
        auth_request_set $x "v-$host";
        auth_request_set $x again;
        location = /a { return 204; }
        location /b/ { auth_request off; }
        location /c/ { auth_request ""; }
    """, http="auth_request_set $y 1; auth_request off;")
    ok.stop()
    refused(tmp_path, [
        ("auth_request;", 'invalid number of arguments in "auth_request"'),
        ("auth_request /a /b;", 'invalid number of arguments in "auth_request"'),
        ("server { auth_request /a; auth_request /b; }", '"auth_request" directive is duplicate'),
        ("auth_request_set $x;", 'invalid number of arguments in "auth_request_set"'),
        ("auth_request_set x 1;", 'invalid variable name "x"'),
        ("auth_request_set $ 1;", 'invalid variable name "$"'),
        ("auth_request_set $uri 1;", '"$uri" is the server\'s'),
        ("auth_request_set $x $nosuch;", 'unknown variable'),
        ("server { if ($uri) { auth_request /a; } }", '"auth_request" directive is not allowed here'),
        ("server { if ($uri) { auth_request_set $x 1; } }",
         '"auth_request_set" directive is not allowed here'),
    ])


def refused(tmp, cases):
    """Each (http block, message) keeps the server from starting, with the
    message followed by the file and line of the directive."""
    import re
    for i, (http, needle) in enumerate(cases):
        d = Path(tmp) / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, http=http)
        assert rc not in (None, 0) and not listening, (http, out)
        assert re.search(re.escape(needle) + r".* in \S+/scalws\.conf:\d+", out), (http, out)


# ---------------------------------------------------- satisfy, beside nginx

SATISFY_SITE = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @ROOT@;
        location = /auth {
            internal;
            proxy_pass http://127.0.0.1:@AUTH@;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
        }
        location = /auth-403 { internal; proxy_pass http://127.0.0.1:@AUTH@/code/403; }
        location = /auth-500 { internal; proxy_pass http://127.0.0.1:@AUTH@/code/500; }
        location /any-ip-no/ { satisfy any; allow 127.0.0.2; deny all; auth_request /auth; }
        location /any-ip-yes/ { satisfy any; allow 127.0.0.1; deny all; auth_request /auth-500; }
        location /all-ip-yes/ { satisfy all; allow 127.0.0.1; deny all; auth_request /auth; }
        location /all-ip-no/ { satisfy all; deny all; auth_request /auth; }
        location /any-basic/ {
            satisfy any;
            auth_basic "realm b";
            auth_basic_user_file @ROOT@/htpasswd;
            auth_request /auth;
        }
        location /all-basic/ {
            auth_basic "realm b";
            auth_basic_user_file @ROOT@/htpasswd;
            auth_request /auth;
        }
        location /any-deny-basic/ {
            satisfy any;
            deny all;
            auth_basic "realm b";
            auth_basic_user_file @ROOT@/htpasswd;
            auth_request /auth-403;
        }
        location /any-deny-500/ { satisfy any; deny all; auth_request /auth-500; }
        location /any-basic-403/ {
            satisfy any;
            auth_basic "realm b";
            auth_basic_user_file @ROOT@/htpasswd;
            auth_request /auth-403;
        }
        location = /auth-401 { internal; proxy_pass http://127.0.0.1:@AUTH@/code/401; }
        location = /auth-302 { internal; proxy_pass http://127.0.0.1:@AUTH@/code/302; }
        location = /auth-204 { internal; proxy_pass http://127.0.0.1:@AUTH@/code/204; }
        location /code-401/ { auth_request /auth-401; }
        location /code-302/ { auth_request /auth-302; }
        location /code-204/ { auth_request /auth-204; }
        location /code-500/ { auth_request /auth-500; }
        location = /auth-static { internal; }
        location /cond/ { auth_request /auth-static; }
        location /vars/ {
            auth_request /auth;
            auth_request_set $user $upstream_http_x_auth_request_user;
            auth_request_set $st $upstream_status;
            add_header X-User "[$user]" always;
            add_header X-St "[$st]" always;
        }
        location /inherit/ {
            auth_request /auth;
            location /inherit/open/ { auth_request off; }
            location /inherit/deny/ { deny all; }
        }
    }
"""

SATISFY_DIRS = ("any-ip-no", "any-ip-yes", "all-ip-yes", "all-ip-no", "any-basic", "all-basic",
                "any-deny-basic", "any-deny-500", "any-basic-403", "inherit", "inherit/open",
                "inherit/deny", "code-401", "code-302", "code-204", "code-500", "vars", "cond")


def test_satisfy_beside_nginx(tmp_path, authsvc, origin):
    import test_nginx_sites as ns
    if not os.path.exists(ns.NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    root = tmp_path / "root"
    for d in SATISFY_DIRS:
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "f.txt").write_text("file of %s\n" % d)
    (root / "auth-static").write_text("a file is a 200 for the check\n")
    (root / "htpasswd").write_text("bob:{SHA}%s\n" % base64.b64encode(
        hashlib.sha1(b"pw").digest()).decode())
    h.make_traversable(tmp_path)
    running, ports = [], []
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            site = SATISFY_SITE.replace("@PORT@", str(port)).replace("@ROOT@", str(root)) \
                .replace("@AUTH@", str(authsvc))
            running.append(ns.start_server(who, d, port, site))
            ports.append(port)
        good_basic = "Authorization: Basic " + base64.b64encode(b"bob:pw").decode()
        bad_basic = "Authorization: Basic " + base64.b64encode(b"bob:no").decode()
        compared = 0
        for d in SATISFY_DIRS:
            for hdrs in ([], ["Cookie: session=good"], [good_basic], [bad_basic],
                         [good_basic, "Cookie: session=good"], [bad_basic, "X-Token: good"]):
                rn, rs = (h.exchange(p, h.request("GET", "/%s/f.txt" % d, headers=hdrs))
                          for p in ports)
                what = (d, hdrs)
                assert rs.status == rn.status, (what, rn, rs)
                assert rs.headers_all("www-authenticate") == rn.headers_all("www-authenticate"), \
                    (what, rn.headers, rs.headers)
                assert rs.body == rn.body or rs.status >= 400, (what, rn.body, rs.body)
                for name in ("x-user", "x-st", "location"):
                    assert rs.header(name) == rn.header(name), (what, rn.headers, rs.headers)
                compared += 1
        assert compared == len(SATISFY_DIRS) * 6
        # the client's conditions and ranges are not the subrequest's: the
        # auth location's file stays a 200 there (not a 304, 412 or 206)
        for hdrs in (["If-None-Match: *"], ["If-Match: \"nope\""], ["Range: bytes=0-1"],
                     ["If-Modified-Since: Sat, 01 Jan 2050 00:00:00 GMT"]):
            rn, rs = (h.exchange(p, h.request("GET", "/cond/f.txt", headers=hdrs)) for p in ports)
            assert (rs.status, ns.server_token(rs.body)) == (rn.status, ns.server_token(rn.body)), \
                (hdrs, rn, rs)
            # (the client's file answers them itself; a date ahead is ignored)
            assert rs.status == (200 if "2050" in hdrs[0] else 206 if "Range" in hdrs[0]
                                 else 304 if "None" in hdrs[0] else 412), (hdrs, rs)
    finally:
        for r in running:
            r.stop()


LOG_SITE = """
    log_format sub '$uri $status';
    server {
        listen 127.0.0.1:@PORT@;
        root @ROOT@;
        access_log @LOG@ sub;
        location = /auth-on { internal; log_subrequest on; proxy_pass http://127.0.0.1:@AUTH@/code/204; }
        location = /auth-off { internal; proxy_pass http://127.0.0.1:@AUTH@/code/204; }
        location = /auth-deny { internal; log_subrequest on; proxy_pass http://127.0.0.1:@AUTH@/code/403; }
        location /on/ { auth_request /auth-on; }
        location /off/ { auth_request /auth-off; }
        location /deny/ { auth_request /auth-deny; }
    }
"""


def test_log_subrequest_beside_nginx(tmp_path, authsvc):
    """log_subrequest on writes the subrequest's own line (its URI and its
    status) before the client's, in the location the subrequest ended in;
    off (the default) writes only the client's, as nginx 1.22 does."""
    import test_nginx_sites as ns
    root = tmp_path / "root"
    for d in ("on", "off", "deny"):
        (root / d).mkdir(parents=True)
        (root / d / "f.txt").write_text("f\n")
    h.make_traversable(tmp_path)
    running, ports, logs = [], [], []
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            log = d / "sub.log"
            site = LOG_SITE.replace("@PORT@", str(port)).replace("@ROOT@", str(root)) \
                .replace("@AUTH@", str(authsvc)).replace("@LOG@", str(log))
            running.append(ns.start_server(who, d, port, site))
            ports.append(port)
            logs.append(log)
        for port in ports:
            for d in ("on", "off", "deny"):
                h.exchange(port, h.request("GET", "/%s/f.txt" % d))
        want = ["/auth-on 204", "/on/f.txt 200", "/off/f.txt 200",
                "/auth-deny 403", "/deny/f.txt 403"]
        for log in logs:
            deadline = time.monotonic() + 5
            while len(log.read_text().splitlines()) < len(want) and time.monotonic() < deadline:
                time.sleep(0.02)
        got = [log.read_text().splitlines() for log in logs]
        assert got[0] == want, got
        assert got[1] == got[0], got
    finally:
        for r in running:
            r.stop()
