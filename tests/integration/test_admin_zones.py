"""status_zone (docs/admin.md): requests grouped by server block and by
location, in /api/http/server_zones, /api/http/location_zones and
/metrics; counts that add up exactly to a known load over HTTP/1.1 and
HTTP/2, errors and discarded requests included; reloads that keep, drop
and add zones; the directive's refusals."""
import json
import shutil

import pytest

import swsharness as h
from test_admin import admin_block, api, get, metric, post, promtool

# the access log of the zones' servers, to add up what they should count
LOG = """log_format zone '$server_port $status $request_length $bytes_sent $request_time';
access_log @TMP@/zones.log zone;"""

SITE = """
    status_zone site;
    location /f/ {
        status_zone files;
        location /f/plain/ { status_zone off; }
    }
    location = /gone { return 444; }
    location = /err { return 500; }
"""

SERVERS = """
    server { listen 127.0.0.1:@PORT2@ http2; status_zone site; root @TMP@/html; }
    server { listen 127.0.0.1:@PORT3@; root @TMP@/html; }
"""

FILES = {"html/f/a.txt": "a" * 1000, "html/f/plain/b.txt": "b" * 10,
         "html/plain.txt": "p"}


def start(sws, http="", server=SITE, servers=SERVERS, **kw):
    return sws(ports=4, http=admin_block(port="@PORT4@") + "\n" + LOG + "\n" + http,
               server=server, servers=servers, files=dict(FILES), **kw)


def logged(srv, ports):
    """What the access log says of the requests to these ports: count,
    statuses, bytes in and out, milliseconds."""
    rows = [line.split() for line in (srv.tmp / "zones.log").read_text().splitlines()]
    rows = [r for r in rows if int(r[0]) in ports]
    return {"requests": len(rows),
            "bytes_in": sum(int(r[2]) for r in rows),
            "bytes_out": sum(int(r[3]) for r in rows),
            "ms": sum(round(float(r[4]) * 1000) for r in rows)}


def test_zones_add_up_over_http1_and_http2(sws):
    srv = start(sws)
    one, two, bare = ("http://127.0.0.1:%d" % p for p in srv.ports[:3])
    for _ in range(5):
        assert h.curl(one + "/respond").status == 200
    for _ in range(3):
        assert h.curl(one + "/f/a.txt").status == 200
    for _ in range(2):
        assert h.curl(one + "/f/missing").status == 404
    assert h.curl(one + "/f/plain/b.txt").status == 200
    assert h.curl(one + "/err").status == 500
    # 444: closed without a response: discarded
    r = h.exchange(srv.port, b"GET /gone HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert r is None
    # a bad head: answered 400 by the server it came to
    r = h.exchange(srv.port, b"GET /x HTTP/1.1\r\nHost: localhost\r\nBad header\r\n\r\n")
    assert r.status == 400
    for _ in range(3):
        assert h.curl(two + "/f/a.txt", prior_knowledge=True).status == 200
    assert h.curl(two + "/nothing", prior_knowledge=True).status == 404
    # a server without a zone counts in none
    for _ in range(2):
        assert h.curl(bare + "/plain.txt").status == 200

    assert h.wait_for(lambda: logged(srv, srv.ports[:3])["requests"] == 5 + 3 + 2 + 1 + 1
                      + 1 + 1 + 3 + 1 + 2, 5)
    doc = api(srv, "/api/http")
    zones = doc["server_zones"]
    assert list(zones) == ["site"], zones
    site = zones["site"]
    expect = logged(srv, srv.ports[:2])
    assert site["requests"] == expect["requests"] == 18
    assert site["responses"] == {"1xx": 0, "2xx": 5 + 3 + 1 + 3, "3xx": 0,
                                 "4xx": 2 + 1 + 1, "5xx": 1}, site
    assert site["codes"] == {"200": 12, "400": 1, "404": 3, "500": 1}, site
    assert site["discarded"] == 1
    assert site["bytes_in"] == expect["bytes_in"]
    assert site["bytes_out"] == expect["bytes_out"] > 6 * 1000
    assert site["request_time_ms_total"] == expect["ms"]
    files = doc["location_zones"]["files"]
    assert files["requests"] == 5
    assert files["responses"]["2xx"] == 3 and files["responses"]["4xx"] == 2
    assert files["codes"] == {"200": 3, "404": 2}
    assert files["discarded"] == 0 and files["bytes_out"] > 3 * 1000
    assert list(doc["location_zones"]) == ["files"]
    # each zone is a shared zone of its own
    shm = {z["name"]: z for z in api(srv, "/api/zones")}
    assert shm["server_zone:site"]["owner"] == "http_status_zone"
    assert "location_zone:files" in shm
    # the zones on their own paths, and not twice in /api/
    assert api(srv, "/api/http/server_zones") == zones
    assert api(srv, "/api/http/location_zones/") == doc["location_zones"]
    assert "http/server_zones" not in api(srv)
    assert get(srv, "/api/http/nothing").status == 404
    # one zone by name, as nginx Plus's API has it
    assert api(srv, "/api/http/server_zones/site") == site
    assert api(srv, "/api/http/location_zones/files/") == files
    r = get(srv, "/api/http/server_zones/files")        # a location's zone
    assert r.status == 404 and b"no such status zone" in r.body

    # /metrics: the same figures, which promtool takes
    text = get(srv, "/metrics").body.decode()
    if shutil.which("promtool"):
        rc, out = promtool(text.encode())
        assert rc == 0 and out.strip() == "", out
    assert metric(text, "scalws_server_zone_requests_total", zone="site", code="2xx") == 12
    assert metric(text, "scalws_server_zone_responses_total", zone="site", code="404") == 3
    assert metric(text, "scalws_server_zone_discarded_requests_total", zone="site") == 1
    assert metric(text, "scalws_server_zone_sent_bytes_total", zone="site") \
        == expect["bytes_out"]
    assert metric(text, "scalws_server_zone_received_bytes_total", zone="site") \
        == expect["bytes_in"]
    assert metric(text, "scalws_location_zone_requests_total", zone="files", code="4xx") == 2
    assert "# TYPE scalws_server_zone_request_time_seconds_total counter\n" in text
    assert 'scalws_server_zone_request_time_seconds_total{zone="site"} %d.%03d\n' \
        % divmod(expect["ms"], 1000) in text
    om = get(srv, "/metrics", headers=["Accept: application/openmetrics-text"]).body.decode()
    assert "# TYPE scalws_location_zone_requests counter\n" in om


def test_without_zones_the_sections_are_empty(sws):
    srv = start(sws, server="", servers="")
    h.curl("http://127.0.0.1:%d/respond" % srv.port)
    doc = api(srv, "/api/http")
    assert doc["server_zones"] == {} and doc["location_zones"] == {}
    assert doc["requests"] >= 1
    text = get(srv, "/metrics").body.decode()
    assert "scalws_server_zone" not in text and "scalws_location_zone" not in text


def test_a_reload_keeps_drops_and_adds_zones(sws):
    srv = start(sws)
    one = "http://127.0.0.1:%d" % srv.port
    for _ in range(4):
        h.curl(one + "/f/a.txt")
    doc = api(srv, "/api/http")
    assert doc["server_zones"]["site"]["requests"] == 4
    assert doc["location_zones"]["files"]["requests"] == 4
    # "files" goes, "other" comes; "site" stays with its counts
    conf = srv.conf_path.read_text()
    srv.conf_path.write_text(conf.replace("status_zone files;", "status_zone other;"))
    r = post(srv, "/api/reload")
    assert r.status == 200, r
    doc = api(srv, "/api/http")
    assert doc["server_zones"]["site"]["requests"] == 4
    assert list(doc["location_zones"]) == ["other"]
    assert doc["location_zones"]["other"]["requests"] == 0
    h.curl(one + "/f/a.txt")
    doc = api(srv, "/api/http")
    assert doc["server_zones"]["site"]["requests"] == 5
    assert doc["location_zones"]["other"]["requests"] == 1
    # a refused reload changes nothing
    srv.conf_path.write_text(conf.replace("status_zone site;", "status_zone $host;"))
    r = post(srv, "/api/reload")
    assert r.status == 422 and b"status_zone" in r.body, r
    assert api(srv, "/api/http")["server_zones"]["site"]["requests"] == 5


@pytest.mark.parametrize("http, server, needle", [
    ("status_zone one;", "", '"status_zone" directive is not allowed here'),
    ("", "status_zone one; status_zone two;", '"status_zone" directive is duplicate'),
    ("", "location / { status_zone a; status_zone b; }",
     '"status_zone" directive is duplicate'),
    ("", "status_zone;", 'invalid number of arguments in "status_zone" directive'),
    ("", "status_zone a b;", 'invalid number of arguments in "status_zone" directive'),
    ("", "status_zone $host;", 'invalid zone name "$host" in "status_zone"'),
    ("", "if ($args) { status_zone a; }", '"status_zone" directive is not allowed here'),
])
def test_configuration_errors(tmp_path, http, server, needle):
    rc, out, listening = h.start_expect_failure(tmp_path, http=http, server=server)
    assert rc not in (None, 0) and needle in out, out
    assert "scalws.conf:" in out, out
    assert not listening


def test_zones_in_an_if_of_a_location_and_shared_by_locations(sws):
    srv = start(sws, server="""
        location /a/ { status_zone both; }
        location /b/ { status_zone both; if ($arg_x) { status_zone x; } }
    """, servers="")
    one = "http://127.0.0.1:%d" % srv.port
    assert h.curl(one + "/a/n").status == 404
    assert h.curl(one + "/b/n").status == 404
    assert h.curl(one + "/b/n?x=1").status == 404
    zones = api(srv, "/api/http/location_zones")
    assert zones["both"]["requests"] == 2 and zones["x"]["requests"] == 1, zones
    assert api(srv, "/api/http/server_zones") == {}


NGINX = "/usr/sbin/nginx"


@pytest.mark.skipif(not shutil.which(NGINX), reason="no nginx")
def test_nginx_refuses_what_plus_and_scalwsd_take(tmp_path):
    # status_zone is nginx Plus's: nginx 1.22 does not know it, scalwsd
    # takes it as Plus does (docs/compat.md)
    import subprocess
    conf = tmp_path / "site.conf"
    conf.write_text("""error_log stderr;
pid %s/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    server { listen 127.0.0.1:%d; status_zone site;
             location / { status_zone all; location /x/ { status_zone off; } } }
}
""" % (tmp_path, h.free_port()))
    p = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(conf), "-e", "stderr"],
                       capture_output=True, timeout=30)
    out = (p.stdout + p.stderr).decode()
    assert p.returncode != 0 and 'unknown directive "status_zone"' in out, out
    p = h.run_scalwsd(["-t", "-p", str(tmp_path), "-c", str(conf)])
    out = (p.stdout + p.stderr).decode()
    assert p.returncode == 0, out


def test_a_client_that_leaves_is_discarded_and_http2_errors_count(sws):
    import socket
    import time
    hang = socket.socket()                  # accepts (backlog), never answers
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)
    try:
        srv = start(sws, server="""
            status_zone site;
            location /hang/ { status_zone hang; proxy_pass http://127.0.0.1:%d; }
        """ % hang.getsockname()[1], servers="""
            server { listen 127.0.0.1:@PORT2@ http2; status_zone site;
                     location = /err { return 503; } }
        """)
        with h.Conn(srv.port) as c:
            c.send(b"GET /hang/x HTTP/1.1\r\nHost: localhost\r\n\r\n")
            time.sleep(0.3)                 # the request is waiting on the upstream
        assert h.curl("http://127.0.0.1:%d/err" % srv.ports[1],
                      prior_knowledge=True).status == 503
        assert h.wait_for(lambda: api(srv, "/api/http/location_zones")["hang"]["requests"]
                          == 1, 5)
        hz = api(srv, "/api/http/location_zones")["hang"]
        assert hz["discarded"] == 1 and sum(hz["responses"].values()) == 0, hz
        assert " 499 " in (srv.tmp / "zones.log").read_text()
        site = api(srv, "/api/http/server_zones")["site"]
        assert site["requests"] == 2 and site["discarded"] == 1, site
        assert site["responses"]["5xx"] == 1 and site["codes"] == {"503": 1}, site
        assert hz["request_time_ms_total"] >= 250, hz
    finally:
        hang.close()
