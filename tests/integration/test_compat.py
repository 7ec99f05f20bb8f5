"""nginx compatibility beyond the side-by-side sites (test_nginx_sites.py):
nested locations and their rules, server_name wildcards and regexes,
error_page to a URL, listen's socket options, return's pages and types,
and the configuration errors of each, named at their file and line."""
import socket

import pytest

import rwutil
import swsharness as h

SERVER = r"""
        location /a/ {
            add_header X-Loc a;
            location /a/b/ {
                add_header X-Loc ab;
                location ~ \.txt$ { add_header X-Loc ab-txt; return 200 "ab-txt $1"; }
            }
            location ~ ^/a/(re)/ { return 200 "a-re $1"; }
            location = /a/exact { return 200 "a-exact"; }
            return 200 "a";
        }
        location ~ ^/top/(\w+) {
            location ~ /top/in/ { return 200 "top-in $1"; }
            return 200 "top $1";
        }
        location ~ \.txt$ { return 200 "server-txt"; }
        location /ep/ { error_page 404 =301 https://example.test/gone; return 404; }
        location /ep2/ { error_page 404 http://example.test/x?y; return 404; }
        location /text { return 200 "plain"; }
        location /text.json { return 200 "{}"; }
        location /redirect { return 301 /elsewhere; }
        location /noloc { return 302; }
        location /teapot { return 418; }
"""

SERVERS = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name ~^(?<tenant>[a-z]+)\.apps\.test$ mail.*;
        location / { return 200 "tenant=$tenant host=$host"; }
    }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, servers=SERVERS)


def get(srv, path, host="localhost"):
    return h.exchange(srv.port, h.request("GET", path, host=host))


@pytest.mark.parametrize("path, status, body, loc", [
    ("/a/x", 200, b"a", "a"),
    # nested prefix: add_header inherited and replaced, return not (as nginx)
    ("/a/b/x", 404, None, None),
    ("/a/b/f.txt", 200, b"ab-txt ", "ab-txt"),  # a regex nested two levels down
    ("/a/re/x", 200, b"a-re re", "a"),          # a regex of the prefix, before the server's
    ("/a/exact", 200, b"a-exact", "a"),
    ("/a/z.txt", 200, b"server-txt", None),     # no regex of /a/ matches: the server's
    ("/top/abc", 200, b"top abc", None),
    # a nested regex without groups keeps its parent's captures, as nginx
    ("/top/in/x", 200, b"top-in in", None),
])
def test_nested_locations(srv, path, status, body, loc):
    r = get(srv, path)
    assert r.status == status and (body is None or r.body == body), (path, r)
    assert r.header("x-loc") == loc, (path, r)


def test_error_page_to_a_url(srv):
    r = get(srv, "/ep/x")
    assert r.status == 301 and r.header("location") == "https://example.test/gone", r
    assert b"<title>301 Moved Permanently</title>" in r.body, r.body
    r = get(srv, "/ep2/x")
    assert r.status == 302 and r.header("location") == "http://example.test/x?y", r


def test_return_pages_and_types(srv):
    r = get(srv, "/text")                     # default_type, as nginx
    assert r.body == b"plain" and r.header("content-type") == "application/octet-stream", r
    r = get(srv, "/text.json")
    assert r.header("content-type") == "application/json", r
    r = get(srv, "/redirect")
    assert r.status == 301 and r.header("content-type") == "text/html", r
    assert r.body.startswith(b"<html>\r\n<head><title>301 Moved Permanently</title>"), r.body
    assert r.header("location") == "http://localhost:%d/elsewhere" % srv.port, r
    r = get(srv, "/noloc")
    assert r.status == 302 and r.header("location") is None, r
    assert b"<title>302 Found</title>" in r.body, r.body
    r = get(srv, "/teapot")                   # no page for 418, as nginx
    assert r.status == 418 and r.body == b"" and r.header("content-type") is None, r


def test_types_block_after_included_mime_types(sws):
    # `include mime.types;` (the harness's http block) and then a site's own
    # types block in the same context: nginx adds it to the first, an
    # extension given again takes the later type with a warning naming the
    # line. Before, a second types block was refused as a duplicate.
    srv = sws(files={"html/a.json": "{}", "html/b.foo": "x", "html/c.txt": "t"}, http="""
    types { application/x-later json; }
    types { text/x-first foo; text/x-second foo; }
""")
    assert get(srv, "/a.json").header("content-type") == "application/x-later"
    assert get(srv, "/b.foo").header("content-type") == "text/x-second"
    assert get(srv, "/c.txt").header("content-type") == "text/plain"   # mime.types still
    log = srv.stderr() + srv.error_log()      # said while the configuration is read
    assert 'duplicate extension "json", content type: "application/x-later", previous ' \
           'content type: "application/json" in %s:' % srv.conf_path in log, log
    assert 'duplicate extension "foo", content type: "text/x-second"' in log, log


def test_server_name_regex_and_trailing_wildcard(srv):
    r = get(srv, "/", host="acme.apps.test")
    assert r.body == b"tenant=acme host=acme.apps.test", r
    r = get(srv, "/", host="ACME.apps.test")          # hosts compare lower-cased
    assert r.body == b"tenant=acme host=acme.apps.test", r
    r = get(srv, "/", host="mail.anything.example")
    assert r.body.startswith(b"tenant= host=mail."), r
    r = get(srv, "/", host="acme.apps.test.evil")     # anchored: the default server
    assert not r.body.startswith(b"tenant"), r


def test_listen_socket_options(sws):
    srv = sws(servers="""
    server {
        listen 127.0.0.1:@PORT2@ rcvbuf=64k sndbuf=64k so_keepalive=on deferred fastopen=8
               backlog=64;
        return 200 "options";
    }
""", ports=2)
    r = h.exchange(srv.ports[1], h.request("GET", "/"))
    assert r.status == 200 and r.body == b"options", r


def test_config_errors(tmp_path):
    def case(text, needle, marker=None):
        return ("server { listen 127.0.0.1:@PORT@;\n%s\n}" % text, needle, marker or text)

    rwutil.assert_errors_at(tmp_path, [
        case("location /a/ {\nlocation /b/ { }\n}", 'location "/b/" is outside location "/a/"',
             "location /b/"),
        case("location = /a {\nlocation /a/b { }\n}",
             'location "/a/b" cannot be inside the exact location "/a"', "location /a/b"),
        case("location @n {\nlocation /x { }\n}",
             'location "/x" cannot be inside the named location "@n"', "location /x"),
        case("location /a/ {\nlocation @n { }\n}",
             'named location "@n" can be on the server level only', "location @n"),
        case("location /a/ {\nif ($arg_x) {\nlocation /a/b { }\n}\n}",
             '"location" directive is not allowed inside "if"', "location /a/b"),
        case("location /a/ {\nlocation /a/b { }\nlocation /a/b { return 204; }\n}",
             'duplicate location "/a/b"', "location /a/b { return"),
        # nginx: a prefix location in a regex one is "outside" it
        case("location ~ \\.php$ {\nlocation /b/ { }\n}",
             'location "/b/" is outside location "\\.php$"', "location /b/"),
        case("location / { proxy_pass http://127.0.0.1:1;\nproxy_redirect off;\n"
             "proxy_redirect http://a/ /b/; }", '"proxy_redirect" directive is duplicate',
             "proxy_redirect http://a/"),
        case("server_tokens maybe;", 'invalid value "maybe" in "server_tokens"'),
        case("server_name ~^(unclosed;", "missing closing parenthesis"),
        case("server_name a*b.test;", 'invalid server name "a*b.test"'),
        case("server_name mail*;", 'invalid server name "mail*"'),
        case("location / { error_page 404 ftp://x/; }", 'URI must start with "/"'),
        case("listen 127.0.0.1:@PORT@ rcvbuf=lots;", 'invalid parameter "rcvbuf=lots"',
             "rcvbuf=lots"),
        case("listen 127.0.0.1:@PORT@ ipv6only=maybe;", 'invalid parameter "ipv6only=maybe"',
             "ipv6only=maybe"),
        case("listen 127.0.0.1:@PORT@ so_keepalive=sometimes;",
             'invalid parameter "so_keepalive=sometimes"', "so_keepalive=sometimes"),
        case("listen 127.0.0.1:@PORT@ fastopen=0;", 'invalid parameter "fastopen=0"',
             "fastopen=0"),
        case("charset \"utf 8\";", 'invalid charset name "utf 8"'),
        case("charset utf-8;\ncharset latin1;", '"charset" directive is duplicate',
             "charset latin1"),
        case("location / { charset_types text/css;\ncharset_types text/xml; }",
             '"charset_types" directive is duplicate', "charset_types text/xml"),
        case("location / { autoindex_format yaml; }", 'it must be one of "html", "json", '
             '"xml", "jsonp"'),
    ])
    (tmp_path / "main").mkdir()
    rwutil.assert_errors_at(tmp_path / "main", [
        ("charset_map koi8-r utf-8 { }", "does not recode responses", "charset_map"),
    ])
