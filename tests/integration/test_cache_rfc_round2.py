"""The cache's second round of RFC 9111 rules (issue 26, "Wrong today"),
each against a real origin (cacheorigin.py) that sends exactly the fields
the test chose, and beside nginx 1.22 where nginx does the right thing."""
import os
import shutil

import pytest

import swsharness as h
from cacheorigin import corigin, get, start  # noqa: F401
from test_nginx_sites import NGINX, start_server

LM = "Sun, 06 Nov 1994 08:49:37 GMT"


def cc(value, *more):
    return [("Cache-Control", value)] + list(more)


def twice(srv, path, **kw):
    return get(srv, path, **kw)[1], get(srv, path, **kw)[1]


@pytest.fixture
def side_by_side(tmp_path):
    """side_by_side(site) -> {who: port} for nginx and scalwsd, each with
    the http block's content site (@PORT@ and @DIR@ replaced)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []

    def run(site):
        ports = {}
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            running.append(start_server(who, d, port, site.replace("@PORT@", str(port))
                                        .replace("@DIR@", str(d))))
            ports[who] = port
        h.make_traversable(tmp_path)
        return ports

    yield run
    for s in running:
        s.stop()


# ---- proxying: the origin's Last-Modified whatever the status

def test_origin_last_modified_passes_with_every_status(side_by_side, corigin, tmp_path):
    o = corigin()
    for st in (200, 201, 403, 404, 502):
        o.set("/c/lm%d" % st, body=b"x", status=st,
              headers=cc("max-age=60", ("Last-Modified", LM)))
    root = tmp_path / "root"
    root.mkdir()
    (root / "404.html").write_text("not here\n")
    ports = side_by_side("""
        proxy_cache_path @DIR@/cache keys_zone=c:1m;
        server {
            listen 127.0.0.1:@PORT@;
            root %s;
            location /c/ { proxy_pass http://%s; }
            location /k/ { proxy_pass http://%s/c/; proxy_cache c;
                           proxy_cache_valid any 1m; }
            location /missing/ { error_page 404 /404.html; }
        }
    """ % (root, o.addr, o.addr))
    seen = {}
    for who, port in ports.items():
        for st in (200, 201, 403, 404, 502):
            for pre in ("c", "k", "k"):        # proxied; cached: miss, then hit
                r = h.curl("http://127.0.0.1:%d/%s/lm%d" % (port, pre, st))
                assert r.status == st
                seen.setdefault((pre, st), {})[who] = r.headers_all("Last-Modified")
        # an error page the server made from a file claims no date
        r = h.curl("http://127.0.0.1:%d/missing/x" % port)
        assert r.status == 404 and r.body == b"not here\n"
        seen.setdefault(("missing", 404), {})[who] = r.headers_all("Last-Modified")
    for key, by in seen.items():
        assert by["scalwsd"] == by["nginx"], key
        assert by["scalwsd"] == ([] if key[0] == "missing" else [LM]), key
