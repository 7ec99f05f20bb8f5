"""limit_except: the block's access rules apply to the methods not listed
(GET brings HEAD), the location's content handler and the rest stay;
WebDAV method names; configuration errors. Compared with what nginx
answers to the same locations."""
import base64

import pytest

import conferr
import swsharness as h
from proxyorigin import Origin


@pytest.fixture(scope="module")
def srv(sws_module):
    o = Origin("leorigin")
    s = sws_module(files={"html/le/f.txt": b"file\n", "html/dav/f.txt": b"dav\n",
                          "conf/users": "u:{PLAIN}p\n"}, server="""
        location /le/ { limit_except GET { deny all; } }
        location /allow/ { limit_except GET { allow 127.0.0.1; deny all; }
                           proxy_pass http://%s/; }
        location /auth/ { limit_except GET HEAD { auth_basic "w"; auth_basic_user_file
                          @TMP@/conf/users; } respond 200 "auth ok"; }
        location /dav/ { limit_except GET PROPFIND { deny all; } respond 200 "dav ok"; }
        location /lc/ { limit_except get propfind { deny all; } respond 200 "lc ok"; }
        location @named { limit_except GET { deny all; } respond 200 "named"; }
        location /toname/ { try_files /nothing @named; }
    """ % o.addr)
    yield s
    o.stop()


def status(srv, method, path, headers=()):
    r = h.exchange(srv.port, h.request(method, path, host="x", headers=list(headers),
                                       body=b"" if method != "POST" else b"a=1",
                                       ) if method != "POST" else
                   h.request(method, path, host="x", headers=list(headers) +
                             [("Content-Length", "3")], body=b"a=1"), method=method)
    return r.status


@pytest.mark.parametrize("method,path,expected", [
    ("GET", "/le/f.txt", 200), ("HEAD", "/le/f.txt", 200),
    ("POST", "/le/f.txt", 403), ("DELETE", "/le/f.txt", 403), ("OPTIONS", "/le/f.txt", 403),
    ("FOO", "/le/f.txt", 403),                          # unknown: limited too
    ("GET", "/allow/echo", 200), ("POST", "/allow/echo", 200),   # allowed, proxied
    ("GET", "/auth/x", 200), ("POST", "/auth/x", 401),
    ("PROPFIND", "/dav/f.txt", 200), ("MKCOL", "/dav/f.txt", 403), ("GET", "/dav/f.txt", 200),
    ("GET", "/toname/x", 200), ("POST", "/toname/x", 403),
    # names in lower case, as nginx takes them: the same methods
    ("GET", "/lc/x", 200), ("HEAD", "/lc/x", 200), ("PROPFIND", "/lc/x", 200),
    ("POST", "/lc/x", 403), ("MKCOL", "/lc/x", 403), ("get", "/lc/x", 403),
])
def test_methods(srv, method, path, expected):
    assert status(srv, method, path) == expected


def test_auth_inside_the_block(srv):
    auth = "Basic " + base64.b64encode(b"u:p").decode()
    assert status(srv, "POST", "/auth/x", [("Authorization", auth)]) == 200


@pytest.mark.parametrize("block,words", [
    ("location /a/ { limit_except BREW { deny all; } }  # ERR", ["invalid method"]),
    ("location /a/ { limit_except GET { deny all; } limit_except POST { deny all; } }  # ERR",
     ["is duplicate"]),
    ("limit_except GET { deny all; }  # ERR", ["not allowed here"]),
])
def test_configuration_errors(tmp_path, block, words):
    conferr.check(tmp_path, words, server="        %s\n" % block)
