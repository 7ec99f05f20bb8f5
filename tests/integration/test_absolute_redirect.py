"""absolute_redirect, server_name_in_redirect and port_in_redirect: a
Location the server makes that starts with "/" goes out absolute, as nginx
sends it, over HTTP/1.1 and HTTP/2."""
import swsharness as h


def location(port, path, host="example.test", headers=()):
    r = h.exchange(port, h.request("GET", path, host=host, headers=headers))
    return r.status, r.header("location")


def test_directory_and_proxied_redirects_are_absolute(sws):
    srv = sws(files={"html/dir/index.html": "x"}, server="""
        location /off/ { absolute_redirect off; alias @TMP@/html/; }
        location /named/ { server_name_in_redirect on; alias @TMP@/html/; }
        location /noport/ { port_in_redirect off; alias @TMP@/html/; }
        """)
    p = srv.port
    assert location(p, "/dir") == (301, "http://example.test:%d/dir/" % p)
    assert location(p, "/dir?a=b") == (301, "http://example.test:%d/dir/?a=b" % p)
    # the Host's port is not used: the listening port is
    assert location(p, "/dir", host="example.test:9") == (301, "http://example.test:%d/dir/" % p)
    assert location(p, "/off/dir") == (301, "/off/dir/")
    assert location(p, "/named/dir") == (301, "http://localhost:%d/named/dir/" % p)
    assert location(p, "/noport/dir") == (301, "http://example.test/noport/dir/")
    # HTTP/1.0 without Host: the server's name
    r = h.exchange(p, h.request("GET", "/dir", host=None, version="HTTP/1.0"))
    assert r.status == 301 and r.header("location") == "http://localhost:%d/dir/" % p


def test_fixed_response_redirects(sws):
    srv = sws(server="""
        location = /rel { return 301 /target; }
        location = /abs { return 301 https://elsewhere.test/x; }
        location = /raw { absolute_redirect off; return 301 /target; }
        """)
    p = srv.port
    assert location(p, "/rel") == (301, "http://example.test:%d/target" % p)
    assert location(p, "/abs") == (301, "https://elsewhere.test/x")
    assert location(p, "/raw") == (301, "/target")


def test_http2_redirect_is_absolute(sws):
    srv = sws(files={"html/dir/index.html": "x"}, ports=2,
              server="        listen 127.0.0.1:@PORT2@ http2;\n")
    r = h.curl("http://127.0.0.1:%d/dir" % srv.ports[1], prior_knowledge=True)
    assert r.status == 301
    assert r.header("location") == "http://127.0.0.1:%d/dir/" % srv.ports[1]


def test_bad_values(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("absolute_redirect maybe;", "absolute_redirect"),
        ("port_in_redirect;", "port_in_redirect"),
        ("server_name_in_redirect on off;", "server_name_in_redirect"),
    ])
