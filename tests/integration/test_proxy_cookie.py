"""proxy_cookie_domain and proxy_cookie_path: the domain= and path= of the
server's Set-Cookie rewritten (literal, ~regex with captures, variables),
the first rule that matches, off, inheritance. Expected values as nginx
gives them for the same rules."""
import pytest

import conferr
import swsharness as h
from cacheorigin import corigin  # noqa: F401


COOKIES = {
    "/c/d1": "a=1; Domain=backend.local; Path=/",
    "/c/d2": "b=2; path=/app/x; domain=.backend.local; HttpOnly",
    "/c/d3": "c=3; Domain=other.test; Path=/else",
    "/c/d4": "d=4; Domain=shop.backend.local",
    "/c/d5": "e=5",
}


@pytest.fixture
def srv(sws, corigin):
    o = corigin()
    for path, value in COOKIES.items():
        o.set(path, headers=[("Set-Cookie", value)])
    o.set("/c/two", headers=[("Set-Cookie", "x=1; domain=backend.local"),
                             ("Set-Cookie", "y=2; path=/app/")])
    return sws(server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cookie_domain backend.local $host;
            proxy_cookie_domain ~^(\\w+)\\.backend\\.local$ $1.example.org;
            proxy_cookie_path /app/ /;
            proxy_cookie_path ~*^/ELSE(.*)$ /other$1;
        }
        location /off/ {
            proxy_pass http://%s/c/;
            proxy_cookie_domain off;
        }
    """ % (o.addr, o.addr))


@pytest.mark.parametrize("path,expected", [
    ("/c/d1", "a=1; Domain=www.test; Path=/"),
    ("/c/d2", "b=2; path=/x; domain=.www.test; HttpOnly"),
    ("/c/d3", "c=3; Domain=other.test; Path=/other"),
    ("/c/d4", "d=4; Domain=shop.example.org"),
    ("/c/d5", "e=5"),
    ("/off/d1", "a=1; Domain=backend.local; Path=/"),
])
def test_set_cookie_rewritten(srv, path, expected):
    r = h.curl(srv.url(path), headers=["Host: www.test"])
    assert r.status == 200 and r.header("Set-Cookie") == expected, r


def test_every_set_cookie_field(srv):
    r = h.curl(srv.url("/c/two"), headers=["Host: www.test"])
    assert r.headers_all("Set-Cookie") == ["x=1; domain=www.test", "y=2; path=/"], r


@pytest.mark.parametrize("line,words", [
    ("proxy_cookie_domain on;", ['takes "off"']),
    ("proxy_cookie_path ~( /;", ["pcre2_compile"]),
    ("proxy_cookie_domain a b; proxy_cookie_domain off;", ['"off" cannot be combined']),
])
def test_configuration_errors(tmp_path, line, words):
    conferr.check(tmp_path, words, server="        location / { %s }  # ERR\n" % line)
