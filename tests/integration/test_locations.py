"""Location matching, virtual servers (server_name) and listen addresses."""
import socket

import pytest

import swsharness as h

LOCATIONS = r"""
        location = /exact { respond 200 "exact"; }
        location /exact { respond 200 "prefix-exact"; }
        location / { respond 200 "root"; }
        location /a/ { respond 200 "a"; }
        location /a/b/ { respond 200 "ab"; }
        location ^~ /static/ { respond 200 "static-noregex"; }
        location /plain/ { respond 200 "plain-prefix"; }
        location ~ \.php$ { respond 200 "php"; }
        location ~ ^/a/b/.*\.php$ { respond 200 "ab-php"; }
        location ~* \.JPG$ { respond 200 "jpg"; }
        location ~ /order { respond 200 "re-first"; }
        location ~ /ord { respond 200 "re-second"; }
        location = / { respond 200 "exact-root"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=LOCATIONS)


@pytest.mark.parametrize("path,name", [
    ("/exact", "exact"),
    ("/exact/", "prefix-exact"),
    ("/exactly", "prefix-exact"),
    ("/exact?x=1", "exact"),
    ("/", "exact-root"),
    ("/other", "root"),
    ("/a/", "a"),
    ("/a/c", "a"),
    ("/a/b/", "ab"),
    ("/a/b/c/d", "ab"),
    ("/a", "root"),                    # "/a/" does not match "/a"
    ("/static/x.php", "static-noregex"),   # ^~ beats regex
    ("/static/x.jpg", "static-noregex"),
    ("/plain/x.php", "php"),           # regex beats a plain prefix
    ("/a/b/x.php", "php"),             # regexes in order: the first wins
    ("/x.PHP", "root"),                # ~ is case-sensitive
    ("/x.jpg", "jpg"),                 # ~* is caseless
    ("/x.Jpg", "jpg"),
    ("/x.JPG", "jpg"),
    ("/order", "re-first"),            # both regexes match: the first wins
    ("/ord", "re-second"),
    ("/%65xact", "exact"),             # matching uses the decoded path
    ("/a/./b/../b/", "ab"),            # and the normalised one
])
def test_location_match(srv, path, name):
    r = h.exchange(srv.port, h.request("GET", path))
    assert r is not None and r.status == 200, (path, r)
    assert r.body == name.encode(), "%s matched %r, expected %r" % (path, r.body, name)


def test_duplicate_location_is_config_error(tmp_path):
    conf = tmp_path / "dup.conf"
    text = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()], server="""
        location /dup/ { respond 200 "1"; }
        location /dup/ { respond 200 "2"; }
""")
    conf.write_text(text)
    (tmp_path / "html").mkdir(exist_ok=True)
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    assert r.returncode != 0, r
    assert b"/dup/" in r.stderr, r.stderr


def test_bad_regex_is_config_error(tmp_path):
    conf = tmp_path / "re.conf"
    text = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()], server="""
        location ~ ^/(unclosed { respond 200 "1"; }
""")
    conf.write_text(text)
    (tmp_path / "html").mkdir(exist_ok=True)
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    assert r.returncode != 0, r
    line = text.splitlines().index('        location ~ ^/(unclosed { respond 200 "1"; }') + 1
    assert ("%s:%d" % (conf, line)).encode() in r.stderr, r.stderr


# ---------------------------------------------------------------- server_name

SERVERS = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name exact.example.com;
        location / { respond 200 "exact-server"; }
    }
    server {
        listen 127.0.0.1:@PORT@;
        server_name *.example.com;
        location / { respond 200 "wildcard-server"; }
    }
    server {
        listen 127.0.0.1:@PORT@ default_server;
        server_name other.test;
        location / { respond 200 "default-server"; }
    }
    server {
        listen 127.0.0.1:@PORT2@;
        server_name second-port.test;
        location / { respond 200 "second-port"; }
    }
"""


@pytest.fixture(scope="module")
def vhosts(sws_module):
    return sws_module(ports=2, servers=SERVERS)


@pytest.mark.parametrize("host,name", [
    ("exact.example.com", b"exact-server"),
    ("EXACT.Example.COM", b"exact-server"),
    ("exact.example.com:8080", b"exact-server"),
    ("exact.example.com.", b"exact-server"),     # trailing dot
    ("foo.example.com", b"wildcard-server"),
    ("a.b.example.com", b"wildcard-server"),
    ("unknown.test", b"default-server"),
    ("other.test", b"default-server"),
    ("localhost", b"Hello, world!"),
    ("example.com", b"default-server"),          # *.example.com needs a label
])
def test_server_name(vhosts, host, name):
    path = "/respond" if name == b"Hello, world!" else "/"
    r = h.exchange(vhosts.port, h.request("GET", path, host=host))
    assert r is not None and r.status == 200 and r.body == name, (host, r)


def test_server_name_from_absolute_form(vhosts):
    r = h.exchange(vhosts.port, b"GET http://exact.example.com/ HTTP/1.1\r\n"
                                b"Host: other.test\r\n\r\n")
    assert r is not None and r.body == b"exact-server", r


def test_server_name_http10_no_host_default(vhosts):
    r = h.exchange(vhosts.port, b"GET / HTTP/1.0\r\n\r\n")
    assert r is not None and r.body == b"default-server", r


def test_second_port(vhosts):
    r = h.exchange(vhosts.ports[1],
                   h.request("GET", "/", host="exact.example.com"))
    assert r is not None and r.body == b"second-port", r


def test_first_server_is_default_without_default_server(sws):
    s = sws(servers="""
    server {
        listen 127.0.0.1:@PORT@;
        server_name two.test;
        location / { respond 200 "second"; }
    }
""")
    r = h.exchange(s.port, h.request("GET", "/respond", host="nomatch.test"))
    assert r is not None and r.body == b"Hello, world!", r
    r = h.exchange(s.port, h.request("GET", "/", host="two.test"))
    assert r is not None and r.body == b"second", r


# ---------------------------------------------------------------- listen

@pytest.mark.skipif(not h.have_ipv6(), reason="no IPv6 loopback on this machine")
def test_listen_ipv6(sws):
    s = sws(ipv6=True, servers="""
    server {
        listen [::1]:@PORT6@;
        server_name v6.test;
        location / { respond 200 "over-ipv6"; }
    }
""")
    with h.Conn(s.port6, host="::1", family=socket.AF_INET6) as c:
        c.send(h.request("GET", "/", host="[::1]"))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"over-ipv6", r
    r = h.curl("http://[::1]:%d/" % s.port6)
    assert r.status == 200 and r.body == b"over-ipv6", r


def test_listen_unix_socket(sws, tmp_path):
    sws(unix_paths=["@TMP@/s.sock"], servers="""
    server {
        listen unix:@TMP@/s.sock;
        server_name unix.test;
        location / { respond 200 "over-unix"; }
    }
""")
    path = str(tmp_path / "s.sock")
    with h.Conn(unix=path) as c:
        c.send(h.request("GET", "/", host="localhost"))
        r = c.read_response()
        assert r is not None and r.status == 200 and r.body == b"over-unix", r
        c.send(h.request("GET", "/again"))
        r = c.read_response()
        assert r is not None and r.body == b"over-unix", r
    r = h.curl("http://localhost/", unix=path)
    assert r.status == 200 and r.body == b"over-unix", r


def test_unix_socket_removed_at_exit(sws, tmp_path):
    s = sws(unix_paths=["@TMP@/s.sock"], servers="""
    server {
        listen unix:@TMP@/s.sock;
        location / { respond 200 "over-unix"; }
    }
""")
    s.stop()
    assert not (tmp_path / "s.sock").exists(), "unix socket left behind"
