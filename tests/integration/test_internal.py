"""`internal` locations (reached only by internal redirects: error_page,
try_files, an intercepted upstream error), proxy_intercept_errors with
error_page, and nginx's hash-size directives (accepted, values checked)."""
import conferr
import swsharness as h

FILES = {"html/int/page.html": "INTERNAL PAGE\n", "html/pub.txt": "PUBLIC\n",
         "html/err/403.html": "denied page\n", "html/err/oops.html": "our page\n"}


def get(srv, path, c=None):
    if c is None:
        return h.exchange(srv.port, h.request("GET", path))
    c.send(h.request("GET", path))
    return c.read_response()


def test_internal_location_not_for_clients(sws):
    srv = sws(files=FILES, server="""
        location /int/ { internal; }
        location = /fixed { internal; respond 200 "fixed"; }
    """)
    with h.Conn(srv.port) as c:
        for path in ("/int/page.html", "/int/missing", "/fixed"):
            r = get(srv, path, c)
            assert r.status == 404 and b"INTERNAL" not in r.body and b"fixed" not in r.body
        assert get(srv, "/pub.txt", c).body == b"PUBLIC\n"     # same connection, kept


def test_internal_reached_by_error_page(sws):
    srv = sws(files=FILES, server="""
        error_page 404 /int/page.html;
        error_page 403 /err/403.html;
        location /int/ { internal; }
        location /err/ { internal; }
    """)
    (srv.tmp / "html" / "forbid").write_text("unreadable for the workers\n")
    (srv.tmp / "html" / "forbid").chmod(0)
    r = get(srv, "/nothing-here")
    assert r.status == 404 and r.body == b"INTERNAL PAGE\n"
    # the internal location itself, asked directly: its 404 goes to the page
    r = get(srv, "/int/page.html")
    assert r.status == 404 and r.body == b"INTERNAL PAGE\n"
    r = get(srv, "/forbid")
    assert r.status == 403 and r.body == b"denied page\n"
    r = get(srv, "/err/403.html")
    assert r.status == 404 and r.body == b"INTERNAL PAGE\n"


def test_internal_reached_by_try_files(sws):
    srv = sws(files=FILES, server="""
        location / { try_files $uri /fallback; }
        location = /fallback { internal; respond 200 "fallback"; }
    """)
    assert get(srv, "/pub.txt").body == b"PUBLIC\n"
    r = get(srv, "/missing")
    assert r.status == 200 and r.body == b"fallback"
    assert get(srv, "/fallback").status == 404


def test_internal_over_http2(sws):
    srv = sws(files=FILES, ports=2, servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
        location /int/ { internal; }
        location /e/ { error_page 404 /int/page.html; }
    }
    """)
    url = "http://127.0.0.1:%d%%s" % srv.ports[1]
    r = h.curl(url % "/int/page.html", prior_knowledge=True)
    assert r.http_version == 3 and r.status == 404 and b"INTERNAL" not in r.body
    r = h.curl(url % "/e/missing", prior_knowledge=True)
    assert r.status == 404 and r.body == b"INTERNAL PAGE\n"


def test_intercept_errors_to_internal_page(sws, origin):
    o = origin()
    srv = sws(files=FILES, server="""
        error_page 404 502 /err/oops.html;
        location /err/ { internal; }
        location /on/ { proxy_pass http://%s/; proxy_intercept_errors on; }
        location /off/ { proxy_pass http://%s/; }
    """ % (o.addr, o.addr))
    r = get(srv, "/on/status/404")
    assert r.status == 404 and r.body == b"our page\n"
    r = get(srv, "/on/status/502")
    assert r.status == 502 and r.body == b"our page\n"
    r = get(srv, "/on/status/500")                 # no error_page for 500: the origin's
    assert r.status == 500 and r.body == b"status 500\n"
    r = get(srv, "/on/status/200")
    assert r.status == 200
    r = get(srv, "/off/status/404")                # off: the origin's body
    assert r.status == 404 and r.body == b"status 404\n"
    assert get(srv, "/err/oops.html").status == 404


def test_intercept_errors_keeps_the_connection_usable(sws, origin):
    o = origin()
    srv = sws(files=FILES, server="""
        error_page 404 /err/oops.html;
        location /err/ { internal; }
        location / { proxy_pass http://%s; proxy_intercept_errors on; }
    """ % o.addr)
    with h.Conn(srv.port) as c:
        for _ in range(3):
            r = get(srv, "/status/404", c)
            assert r.status == 404 and r.body == b"our page\n"
            assert get(srv, "/name", c).body == b"origin"


HASH_MAIN = ["server_names_hash_max_size", "server_names_hash_bucket_size",
             "variables_hash_max_size", "variables_hash_bucket_size",
             "map_hash_max_size", "map_hash_bucket_size"]
HASH_ALL = ["types_hash_max_size", "types_hash_bucket_size",
            "proxy_headers_hash_max_size", "proxy_headers_hash_bucket_size"]


def test_hash_size_directives_accepted(sws):
    http = "".join("%s 2048;\n" % d for d in HASH_MAIN + HASH_ALL)
    server = "".join("%s 128;\n" % d for d in HASH_ALL)
    srv = sws(files=FILES, http=http, server=server + "location /x/ { types_hash_bucket_size 4k; "
                                                      "proxy_headers_hash_max_size 64; }")
    assert get(srv, "/pub.txt").body == b"PUBLIC\n"


def test_hash_size_bad_values(tmp_path):
    n = 0
    for d in HASH_MAIN + HASH_ALL:
        for bad in ("0", "-1", "abc", "17m"):
            conferr.check(tmp_path / ("c%d" % n), ["invalid value", d],
                          http="    %s %s;  # ERR\n" % (d, bad))
            n += 1
    for d in HASH_MAIN:          # http level only, as nginx
        conferr.check(tmp_path / ("c%d" % n), [d], server="        %s 512;  # ERR\n" % d)
        n += 1
    conferr.check(tmp_path / ("c%d" % n), ["types_hash_max_size"],
                  http="    types_hash_max_size 1 2;  # ERR\n")
    conferr.check_ok(tmp_path / "ok", http="    types_hash_max_size 16m;\n"
                     "    types_hash_bucket_size 1;\n")


def test_internal_config_errors(tmp_path):
    cases = [
        ("        location /a/ { internal on; }  # ERR\n", ["internal"]),
        ("        location /a/ { internal; internal; }  # ERR\n", ["duplicate"]),
        ("        internal;  # ERR\n", ["internal"]),
    ]
    for i, (server, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server=server)
    conferr.check(tmp_path / "http", ["internal"], http="    internal;  # ERR\n")
