"""error_page: the page is served with the error's status (or =CODE), for
missing files and return codes; keep-alive survives non-framing errors."""
import swsharness as h

FILES = {
    "html/errors/404.html": b"custom not found\n",
    "html/errors/50x.html": b"custom server error\n",
}

SERVER = """
        error_page 404 /errors/404.html;
        location /errors/ { }
        location = /boom { return 503; }
        location = /gone { return 410; }
        location /eq/ { error_page 404 =200 /errors/404.html; }
        location /plain/ { error_page 404 = /errors/404.html; }
        location /loop/ { error_page 404 /loop/missing.html; }
        location = /five { error_page 503 /errors/50x.html; return 503; }
"""


def test_error_page_keeps_status(sws):
    s = sws(files=FILES, server=SERVER)
    r = h.curl(s.url("/missing.txt"))
    assert r.status == 404 and r.body == b"custom not found\n", r
    r = h.curl(s.url("/five"))
    assert r.status == 503 and r.body == b"custom server error\n", r


def test_error_page_overwrite_codes(sws):
    s = sws(files=FILES, server=SERVER)
    r = h.curl(s.url("/eq/missing"))
    assert r.status == 200 and r.body == b"custom not found\n", r
    r = h.curl(s.url("/plain/missing"))
    assert r.status == 200 and r.body == b"custom not found\n", r


def test_error_page_missing_page_falls_back(sws):
    s = sws(files=FILES, server=SERVER)
    r = h.curl(s.url("/loop/x"))
    assert r.status == 404, r


def test_non_framing_errors_keep_alive(sws):
    s = sws(files=FILES, server=SERVER)
    with h.Conn(s.port) as c:
        for path in ("/gone", "/boom", "/missing.txt", "/gone"):
            c.send(h.request("GET", path))
            r = c.read_response()
            assert r is not None and r.status in (410, 503, 404), (path, r)
            assert (r.header("Connection") or "").lower() != "close", (path, r)


def test_recursive_error_pages(sws):
    # the page's own error: the built-in page, unless recursive_error_pages
    # (then its error_page applies too, and a loop still ends)
    s = sws(files=FILES, server="""
        location /off/ { error_page 404 /gone403; }
        location /on/ { recursive_error_pages on; error_page 404 /gone403; }
        location = /gone403 { recursive_error_pages on; error_page 403 /errors/50x.html;
                              return 403; }
        location /loop/ { recursive_error_pages on; error_page 404 /loop/again; }
    """)
    r = h.curl(s.url("/off/x"))
    assert r.status == 403 and b"custom" not in r.body, r
    r = h.curl(s.url("/on/x"))
    assert r.status == 403 and r.body == b"custom server error\n", r
    r = h.curl(s.url("/loop/x"))
    assert r.status in (404, 500), r                 # bounded: no endless redirects


def test_reset_timedout_connection_444(sws):
    # "return 444" closes without an answer: with reset_timedout_connection
    # on the client sees a reset, else an orderly close
    import socket
    s = sws(server="""
        location = /quiet { return 444; }
        location = /reset { reset_timedout_connection on; return 444; }
    """)

    def outcome(path):
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
            c.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            try:
                return "close" if c.recv(100) == b"" else "data"
            except ConnectionResetError:
                return "reset"
    assert outcome("/quiet") == "close"
    assert outcome("/reset") == "reset"


def test_reset_timedout_connection_send_timeout(sws):
    # a client that stops reading: after send_timeout the connection is
    # reset (on) or closed (off); the client reading afterwards sees which
    import socket
    import time
    big = b"z" * (16 << 20)
    s = sws(files={"html/r/big.bin": big, "html/q/big.bin": big}, server="""
        location /r/ { send_timeout 1s; reset_timedout_connection on; }
        location /q/ { send_timeout 1s; }
    """)

    def outcome(path):
        c = socket.socket()
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.settimeout(10)
        c.connect(("127.0.0.1", s.port))
        try:
            c.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path).encode())
            time.sleep(2.5)                      # past send_timeout, reading nothing
            got = 0
            while True:
                d = c.recv(1 << 20)
                if not d:
                    return "close", got
                got += len(d)
        except ConnectionResetError:
            return "reset", got
        finally:
            c.close()
    kind, got = outcome("/r/big.bin")
    assert kind == "reset" and got < len(big), (kind, got)
    kind, got = outcome("/q/big.bin")
    assert kind == "close" and got < len(big), (kind, got)


def test_error_page_uri_with_variables(sws, tmp_path):
    """The URI may hold variables, as nginx's: a page per host, a redirect
    built from the request; an unknown variable is refused."""
    s = sws(files={"html/errors/127.0.0.1.html": b"the host's page\n"},
            server="""
        location /byhost/ { error_page 404 /errors/$host.html?from=$uri; }
        location /errors/ { }
        location /away/ { error_page 404 =301 https://$host:8443$request_uri; }
""")
    r = h.curl(s.url("/byhost/x"))
    assert r.status == 404 and r.body == b"the host's page\n", r
    r = h.curl(s.url("/away/x?y=1"))
    assert r.status == 301 and r.header("Location") == "https://127.0.0.1:8443/away/x?y=1", r
    bad = tmp_path / "bad"
    bad.mkdir()
    h.assert_config_errors(bad, [("server { listen 127.0.0.1:@PORT2@; "
                                  "error_page 404 /e/$nosuchvar; }",
                                  'unknown variable "$nosuchvar"')], ports=2)
