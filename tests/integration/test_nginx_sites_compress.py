"""A compressing proxy (tests/sites/compressing-proxy.conf) under nginx and
scalwsd side by side: which responses get gzip, Vary and a weak ETag, for
GET and HEAD, direct and through another proxy (Via), as nginx 1.22 decides."""
from test_nginx_sites import pair, same  # noqa: F401 (fixture)

FILES = {"static/page.html": "<p>%d</p>\n" * 300 % tuple(range(300)),
         "static/tiny.html": "<p>tiny</p>\n"}
GZ = ("Accept-Encoding: gzip",)
VIA = ("Via: 1.1 cdn.example",)
ALSO = ("content-encoding", "vary", "etag")


def check(ports, method, path, headers=()):
    r = same(ports, method, path, headers, body=(method == "GET"), also=ALSO)
    return r


def test_compressing_proxy(pair):
    ports = pair("compressing-proxy.conf", FILES)
    for method in ("GET", "HEAD"):
        # proxied text: coded, Vary; a short one is neither coded nor varies
        r = check(ports, method, "/text/3000", GZ)
        assert r.header("content-encoding") == "gzip" and r.header("vary") == "Accept-Encoding"
        r = check(ports, method, "/text/50", GZ)
        assert r.header("content-encoding") is None and r.header("vary") is None
        check(ports, method, "/text/3000")
        # the upstream's ETag: a strong one turns weak, one without quotes goes
        r = check(ports, method, "/text/3000?etag=%22v1%22", GZ)
        assert r.header("etag") == 'W/"v1"'
        r = check(ports, method, "/text/3000?etag=v1", GZ)
        assert r.header("etag") is None
        check(ports, method, "/text/3000?etag=W/%22v1%22", GZ)
        # through another proxy (Via): gzip_proxied decides
        for q in ("", "?cc=no-cache", "?cc=public", "?cc=private", "?expires=Thu,%2001%20Jan%201970%2000:00:01%20GMT",
                  "?expires=Thu,%2001%20Jan%202099%2000:00:00%20GMT", "?lm=1"):
            check(ports, method, "/cdn/text/3000" + q, GZ + VIA)
            check(ports, method, "/strict/text/3000" + q + ("&" if q else "?") + "etag=%22e%22",
                  GZ + VIA)
            check(ports, method, "/strict/text/3000" + q, GZ + VIA)
        check(ports, method, "/cdn/text/3000", GZ + VIA + ("Authorization: Basic dTpw",))
        # static files alike
        r = check(ports, method, "/static/page.html", GZ)
        assert r.header("content-encoding") == "gzip"
        check(ports, method, "/static/tiny.html", GZ)
        check(ports, method, "/static/page.html", GZ + VIA)
