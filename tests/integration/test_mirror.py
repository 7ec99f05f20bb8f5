"""mirror and mirror_request_body: each mirror URI gets a copy of the
client's request (method, args, headers, body), its response is dropped,
and a slow or hanging mirror never delays the client's response; over
HTTP/1.1 and HTTP/2; the directives' accepted and refused forms."""
import json
import socket
import time

import pytest

import swsharness as h
from test_auth_request import refused

SERVER = """
        location /m/ {
            mirror /mirror-a;
            mirror /mirror-b;
            proxy_pass http://@MAIN@/echo/;
        }
        location /nobody/ {
            mirror /mirror-a;
            mirror_request_body off;
            proxy_pass http://@MAIN@/echo/;
            proxy_request_buffering off;
        }
        location /stream/ {
            mirror /mirror-a;
            proxy_pass http://@MAIN@/echo/;
            proxy_request_buffering off;
        }
        location /slow/ { mirror /mirror-slow; }
        location /hang/ { mirror /mirror-hang; }
        location /off/ { mirror off; }
        location /sub/ { mirror /mirror-mirrored; }
        location = /mirror-a { internal; proxy_pass http://@MIRROR@/a; }
        location = /mirror-b { internal; proxy_pass http://@MIRROR@/b; }
        location = /mirror-slow { internal; proxy_pass http://@MIRROR@/delay/2000; }
        location = /mirror-hang { internal; proxy_pass http://@HANG@/h; proxy_read_timeout 1500ms; }
        location = /mirror-mirrored { internal; mirror /mirror-a; proxy_pass http://@MIRROR@/m2; }
"""

FILES = {"html/slow/x.txt": "main answer\n", "html/hang/x.txt": "main answer\n",
         "html/off/x.txt": "off\n", "html/sub/x.txt": "sub\n"}


@pytest.fixture
def srv(tmp_path, origin):
    main, mirror, hang = origin("main"), origin("mirror"), origin("hang")
    hang.hang = True
    server = SERVER.replace("@MAIN@", main.addr).replace("@MIRROR@", mirror.addr) \
        .replace("@HANG@", hang.addr)
    s = h.launch(tmp_path, ports=2, files=FILES, server=server, servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
%s
    }""" % server)
    s.main, s.mirror, s.hang = main, mirror, hang
    yield s
    s.stop()


def get(s, path, h2=False, **kw):
    port = s.ports[1] if h2 else s.ports[0]
    return h.curl("http://127.0.0.1:%d%s" % (port, path), prior_knowledge=h2, **kw)


def mirrored(o, n, timeout=5):
    """The first n requests o got (waiting for them)."""
    deadline = time.monotonic() + timeout
    while len(o.requests) < n and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(o.requests) >= n, o.requests
    return o.requests[:n]


@pytest.mark.parametrize("h2", [False, True])
def test_copies(srv, h2):
    r = get(srv, "/m/x?q=1", h2=h2, method="POST", body=b"the body", headers=["X-Mine: 1"])
    assert r.status == 200, r
    assert json.loads(r.body)["body"] == "the body"      # the client's request is whole
    got = sorted(mirrored(srv.mirror, 2), key=lambda q: q.target)
    assert [q.target for q in got] == ["/a?q=1", "/b?q=1"], got
    for q in got:
        assert q.method == "POST" and q.body == b"the body", (q.method, q.body)
        assert ("x-mine", "1") in [(k.lower(), v) for k, v in q.headers], q.headers
    # a GET: no body, no length
    srv.mirror.requests.clear()
    r = get(srv, "/m/y", h2=h2)
    assert r.status == 200
    for q in mirrored(srv.mirror, 2):
        assert q.method == "GET" and q.body == b"" and q.target in ("/a", "/b"), q.target
    time.sleep(0.2)
    assert len(srv.mirror.requests) == 2                  # one copy each, no more


def test_request_body(srv):
    body = b"0123456789" * 20000                           # in a temporary file
    r = get(srv, "/m/big", method="PUT", body=body)
    assert r.status == 200 and json.loads(r.body)["body"].encode() == body
    for q in mirrored(srv.mirror, 2):
        assert q.method == "PUT" and q.body == body, len(q.body)
    # mirror_request_body off: the copy goes without the body, the client's
    # request keeps it (streamed)
    srv.mirror.requests.clear()
    r = get(srv, "/nobody/x", method="POST", body=b"abc")
    assert r.status == 200 and json.loads(r.body)["body"] == "abc", r
    q, = mirrored(srv.mirror, 1)
    assert q.method == "POST" and q.body == b"", q.body
    # proxy_request_buffering off after the mirror read the body whole
    srv.mirror.requests.clear()
    r = get(srv, "/stream/x", method="POST", body=b"streamed")
    assert r.status == 200 and json.loads(r.body)["body"] == "streamed", r
    q, = mirrored(srv.mirror, 1)
    assert q.body == b"streamed"


@pytest.mark.parametrize("h2", [False, True])
def test_slow_mirror_never_delays(srv, h2):
    for path, o in (("/slow/x.txt", srv.mirror), ("/hang/x.txt", srv.hang)):
        t0 = time.monotonic()
        r = get(srv, path, h2=h2)
        took = time.monotonic() - t0
        assert (r.status, r.body) == (200, b"main answer\n"), r
        assert took < 0.8, (path, took)                 # the mirror waits 1.5-2 s
        mirrored(o, 1)
        o.requests.clear()
    # the mirrors end by themselves (the hanging one by its timeout)
    time.sleep(2.2)
    assert "timed out sending the response header" in srv.error_log()
    assert get(srv, "/off/x.txt", h2=h2).body == b"off\n"


def test_client_leaves_during_mirror(srv):
    """The client's response is over and it goes away while the mirror runs,
    over HTTP/1.1 and HTTP/2: the request ends after the mirror, nothing
    leaks (the ASan run checks), the server goes on."""
    with socket.create_connection(("127.0.0.1", srv.ports[0])) as c:
        c.sendall(b"GET /hang/x.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        c.settimeout(2)
        assert c.recv(4096).startswith(b"HTTP/1.1 200")
    r = get(srv, "/hang/x.txt", h2=True)
    assert r.status == 200
    # the HTTP/2 connection closed with the request kept for its mirror
    assert h.wait_for(lambda: "background requests run: they go on" in srv.error_log())
    srv.stop()                         # a worker with a mirror running exits cleanly
    assert "alert" not in srv.error_log().lower()


def test_subrequests_not_mirrored(srv):
    r = get(srv, "/sub/x.txt")
    assert r.body == b"sub\n"
    q, = mirrored(srv.mirror, 1)
    assert q.target == "/m2"
    time.sleep(0.3)
    assert len(srv.mirror.requests) == 1                # the mirror's own mirror did not run


def test_directives(tmp_path):
    ok = h.launch(tmp_path / "ok", http="mirror /a; mirror_request_body off;", server="""
        mirror /b;
        mirror /c;
        location /x/ { mirror off; mirror_request_body on; }
        location = /b { return 204; }
    """)
    ok.stop()
    refused(tmp_path, [
        ("mirror;", 'invalid number of arguments in "mirror"'),
        ("mirror /a /b;", 'invalid number of arguments in "mirror"'),
        ("mirror off; mirror /a;", '"mirror" directive is duplicate'),
        ("mirror /a; mirror off;", '"mirror" directive is duplicate'),
        ("mirror_request_body maybe;", 'invalid value "maybe" in "mirror_request_body"'),
        ("mirror_request_body on; mirror_request_body off;",
         '"mirror_request_body" directive is duplicate'),
        ("server { if ($uri) { mirror /a; } }", '"mirror" directive is not allowed here'),
    ])
