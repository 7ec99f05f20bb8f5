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
