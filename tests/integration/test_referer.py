"""valid_referers and $invalid_referer (the referer module): none, blocked,
hosts with a URI part, "*.x.com", ".x.com" and "www.x.*" wildcards,
regexes against the Referer without its scheme, server_names (exact,
wildcard and regex server names), inheritance, the usual
"if ($invalid_referer) { return 403; }", and configuration errors. The
expected values are what nginx 1.22 answers to the same configuration
(test_nginx_sites.py runs a site with valid_referers under both)."""
import pytest

import conferr
import swsharness as h

SERVER = r"""
        listen 127.0.0.1:@PORT2@ http2;
        server_name *.site.test www.site.* ~^re\d+\.site\.org;
        location = /a {
            valid_referers none blocked example.com/pics *.example.org .example.net
                           www.shop.* ~\.regex\.test/ok;
            return 200 "[$invalid_referer]";
        }
        location = /strict { valid_referers example.com; return 200 "[$invalid_referer]"; }
        location = /names { valid_referers server_names; return 200 "[$invalid_referer]"; }
        location = /plain { return 200 "[$invalid_referer]"; }
        location /inh {
            valid_referers a.test;
            valid_referers b.test;
            location /inh/child { return 200 "[$invalid_referer]"; }
            location /inh/own { valid_referers c.test; return 200 "[$invalid_referer]"; }
        }
        location = /deny {
            valid_referers none example.com;
            if ($invalid_referer) { return 403; }
            return 200 "welcome";
        }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, ports=2)


def ask(srv, path, referer=None):
    hdrs = [] if referer is None else ["Referer: " + referer]
    r = h.exchange(srv.port, h.request("GET", path, headers=hdrs))
    assert r is not None and r.status in (200, 403), r
    return r


LONG = "http://" + "a" * 300 + ".example.net/"

@pytest.mark.parametrize("referer,invalid", [
    (None, ""),                                   # none
    ("", ""),                                     # blocked: no scheme
    ("foo", ""),
    ("ftp://example.com/pics", ""),
    ("http://i.r", ""),                           # shorter than http://i.ru
    ("http://example.com/pics/1.png", ""),
    ("HTTP://EXAMPLE.COM/pics", ""),              # scheme and host: any case
    ("https://example.com:8443/pics/a", ""),      # the port is skipped
    ("http://example.com/PICS", "1"),             # the URI part: exact case
    ("http://example.com/other", "1"),
    ("http://example.com", "1"),
    ("http://example.com.evil.test/pics", "1"),
    ("http://evil.test/?example.com/pics", "1"),
    ("http://a.example.org/", ""),                # *.example.org
    ("http://a.b.example.org", ""),
    ("http://example.org/", "1"),                 # not the bare name
    ("http://example.net/", ""),                  # .example.net: the bare name too
    ("http://x.y.example.net/z", ""),
    ("http://www.shop.co.uk/", ""),               # www.shop.*
    ("http://shop.co.uk/", "1"),
    ("http://foo.regex.test/ok", ""),             # ~: host and URI
    ("http://FOO.REGEX.TEST/OK", ""),             # caseless
    ("http://foo.regex.test/no", "1"),
    (LONG, "1"),                                  # a host of more than 256 bytes
])
def test_listed(srv, referer, invalid):
    assert ask(srv, "/a", referer).body.decode() == "[%s]" % invalid


@pytest.mark.parametrize("referer,invalid", [
    (None, "1"), ("", "1"), ("foo", "1"), ("http://example.com/any", ""),
    ("https://example.com", ""), ("http://www.example.com/", "1"),
])
def test_without_none_or_blocked(srv, referer, invalid):
    assert ask(srv, "/strict", referer).body.decode() == "[%s]" % invalid


@pytest.mark.parametrize("referer,invalid", [
    ("http://localhost/x", ""), ("http://LOCALHOST:8080/", ""),
    ("http://a.site.test/", ""), ("http://site.test/", "1"),
    ("http://www.site.co/", ""), ("http://re12.site.org/p", ""),
    ("http://rex.site.org/", "1"), ("http://other.test/", "1"), (None, "1"),
])
def test_server_names(srv, referer, invalid):
    assert ask(srv, "/names", referer).body.decode() == "[%s]" % invalid


@pytest.mark.parametrize("referer", [None, "foo", "http://anything.test/"])
def test_without_valid_referers_all_are_valid(srv, referer):
    assert ask(srv, "/plain", referer).body.decode() == "[]"


@pytest.mark.parametrize("path,referer,invalid", [
    ("/inh/child", "http://a.test/", ""),         # both directives, inherited
    ("/inh/child", "http://b.test/", ""),
    ("/inh/child", "http://c.test/", "1"),
    ("/inh/own", "http://c.test/", ""),           # its own list replaces the parent's
    ("/inh/own", "http://a.test/", "1"),
])
def test_inheritance(srv, path, referer, invalid):
    assert ask(srv, path, referer).body.decode() == "[%s]" % invalid


@pytest.mark.parametrize("referer,status", [
    (None, 200), ("http://example.com/page", 200), ("http://evil.test/", 403),
    ("nonsense", 403),
])
def test_if_invalid_referer_return_403(srv, referer, status):
    r = ask(srv, "/deny", referer)
    assert r.status == status, r
    if status == 200:
        assert r.body == b"welcome"


def test_http2(srv):
    url = "http://127.0.0.1:%d/strict" % srv.ports[1]
    r = h.curl(url, prior_knowledge=True, headers=["Referer: http://evil.test/"])
    assert (r.http_version, r.body) == (3, b"[1]"), r     # 3: pycurl's HTTP/2
    r = h.curl(url, prior_knowledge=True, headers=["Referer: http://example.com/"])
    assert r.body == b"[]", r


@pytest.mark.parametrize("args,words", [
    ("none *x.com", ['invalid hostname or wildcard "*x.com"']),
    ("none ex*.com", ['invalid hostname or wildcard "ex*.com"']),
    ("none a.*.com", ['invalid hostname or wildcard "a.*.com"']),
    ("none *", ['invalid hostname or wildcard "*"']),
    ("none a.com A.com", ["conflicting parameter"]),
    ("none .a.com *.a.com", ['conflicting parameter "*.a.com"']),
    ("none a.com/x a.com/y", ['conflicting parameter "a.com"']),
    ("none ~", ['empty regex in "~"']),
    ("none ~(a", ["pcre2_compile() failed"]),
    ("none ''", ["invalid referer"]),
])
def test_configuration_errors(tmp_path, args, words):
    conferr.check(tmp_path, words,
                  server="        location /x { valid_referers %s; }  # ERR\n" % args)


@pytest.mark.parametrize("args", ["none blocked", "none ~foo"])
def test_none_or_blocked_alone_is_refused(tmp_path, args):
    # nginx's check: at least one host (a regex does not count)
    tmp_path.joinpath("html").mkdir()
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()],
                             SERVER="location /x { valid_referers %s; }" % args))
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    assert r.returncode != 0
    assert b'the "none" or "blocked" referers are specified' in r.stderr, r.stderr


def test_accepted_forms(tmp_path):
    conferr.check_ok(tmp_path, server="""
        valid_referers blocked server_names;
        referer_hash_max_size 2048;
        referer_hash_bucket_size 64;
        location /x { valid_referers none a.com:80 www.a.* ~^b; }
    """)
