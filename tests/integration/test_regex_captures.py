"""Captures of a regex location: $1..$9 and named groups as variables, in
proxy_pass and proxy_set_header; bad patterns rejected at their line."""
import json

import swsharness as h


def echo(resp):
    assert resp.status == 200, resp
    return json.loads(resp.body)


def hdr(req, name):
    return [v for k, v in req["headers"] if k.lower() == name.lower()]


def test_numbered_and_named_captures(sws, origin):
    a = origin("a")
    srv = sws(server=r"""
        location ~ ^/u/(\d+)/(?<slug>[a-z]+)(/.*)?$ {
            proxy_set_header X-Id $1;
            proxy_set_header X-Slug $slug;
            proxy_set_header X-Rest "[$3]";
            proxy_set_header X-Id-Suffix $1st;
            proxy_pass http://%s/echo?id=$1&slug=$2;
        }
        location ~* ^/ECHO/(?<word>\w+) {
            proxy_set_header X-Word $word;
            proxy_set_header X-Other-Slug "[$slug]";
            proxy_pass http://%s;
        }""" % (a.addr, a.addr))
    req = echo(h.curl(srv.url("/u/42/hello/more")))
    assert req["target"] == "/echo?id=42&slug=hello"
    assert hdr(req, "X-Id") == ["42"]
    assert hdr(req, "X-Slug") == ["hello"]
    assert hdr(req, "X-Rest") == ["[/more]"]
    assert hdr(req, "X-Id-Suffix") == ["42st"]          # $1 then "st", as nginx
    req = echo(h.curl(srv.url("/u/7/x")))
    assert hdr(req, "X-Rest") == ["[]"]                   # an unset group is empty
    # another regex: its own groups; a name it lacks is empty
    req = echo(h.curl(srv.url("/echo/Word1")))
    assert hdr(req, "X-Word") == ["Word1"]
    assert hdr(req, "X-Other-Slug") == ["[]"]


def test_captures_are_per_request(sws, origin):
    a = origin("a")
    srv = sws(server=r"""
        location ~ ^/echo/c/(\w+)$ { proxy_set_header X-C $1; proxy_pass http://%s; }
        location / { proxy_set_header X-C "[$1]"; proxy_pass http://%s; }
        """ % (a.addr, a.addr))
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/echo/c/first"))
        r = c.read_response()
        assert hdr(json.loads(r.body), "X-C") == ["first"]
        c.send(h.request("GET", "/echo/plain"))
        r = c.read_response()
        assert hdr(json.loads(r.body), "X-C") == ["[]"]   # nothing of the last request


def test_bad_pattern_is_named_at_its_line(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { listen 127.0.0.1:@PORT@;\n location ~ ^/(a { } }",
         "pcre2_compile() failed: missing closing parenthesis in \"^/(a\""),
        ("server { listen 127.0.0.1:@PORT@;\n location ~* [z-a] { } }",
         "pcre2_compile() failed"),
    ])
