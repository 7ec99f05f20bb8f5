"""Typical nginx site configurations (tests/sites/*.conf) under nginx and
under scalwsd, side by side: each site's requests are sent to both servers,
and the status, the headers a client acts on and the body must be the same.
Only paths and scalwsd's module line differ between the two configurations
(see tests/sites/README.md)."""
import base64
import email.utils
import gzip
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import swsharness as h

SITES = Path(h.SRC) / "tests" / "sites"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

# Both servers get this around the site (the first line is scalwsd's only).
MAIN = """\
@MODULE_LINE@
error_log @TMP@/error.log info;
pid @TMP@/server.pid;
daemon off;
master_process on;
worker_processes 1;
user root;
events { worker_connections 256; }
http {
    include @MIME@;
    default_type application/octet-stream;
    access_log @TMP@/access.log;
@SITE@
}
"""


class Nginx:
    def __init__(self, tmp, conf_text, port, extra=()):
        self.tmp, self.port = Path(tmp), port
        (self.tmp / "logs").mkdir(parents=True, exist_ok=True)
        (self.tmp / "nginx.conf").write_text(conf_text)
        self.err = open(self.tmp / "stderr.txt", "ab")
        self.proc = subprocess.Popen([NGINX, "-p", str(self.tmp), "-c", str(self.tmp / "nginx.conf")]
                                     + list(extra),
                                     stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err,
                                     start_new_session=True)
        deadline = time.monotonic() + 10
        while not h.port_open(port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("nginx did not start:\n%s\n%s" % (
                    h._read(self.tmp / "stderr.txt"), h._read(self.tmp / "error.log")))
            time.sleep(0.02)

    def stop(self):
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self.err.close()


def start_server(who, d, port, site):
    """nginx or scalwsd ("who") started in directory d on port, with the
    http block's content site (MAIN around it)."""
    text = MAIN.replace("@SITE@", site)
    text = text.replace("@MODULE_LINE@", "modules_dir %s;" % h.MODULES if who == "scalwsd" else "")
    text = text.replace("@TMP@", str(d)).replace("@MIME@", h.MIME)
    if who == "nginx":
        return Nginx(d, text, port)
    srv = h.Server(d, text, [port])
    srv.start()
    return srv


def site_text(name, **subst):
    text = (SITES / name).read_text()
    for k, v in subst.items():
        text = text.replace("@%s@" % k, str(v))
    return text


@pytest.fixture
def pair(tmp_path, origin):
    """pair(site, files) -> (nginx, scalwsd) ports, both serving the site
    from the same document root, proxying to the same origin."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []
    o = origin("app")

    def start(site, files=None, extra=None, prepare=None):
        root = tmp_path / "root"
        for rel, data in (files or {}).items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data if isinstance(data, bytes) else data.encode())
        root.mkdir(exist_ok=True)
        h.make_traversable(tmp_path)
        ports = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            if prepare:
                prepare(who, d)
            running.append(start_server(who, d, port,
                                        site_text(site, PORT=port, ROOT=root, DIR=d,
                                                  ORIGIN=o.addr, CONF=SITES, **(extra or {}))))
            ports.append(port)
        return ports

    start.origin = o
    yield start
    for r in running:
        r.stop()


# The response headers a client acts on; the rest (Server, Date,
# Connection, Keep-Alive ...) may differ.
COMPARED = ("location", "content-type", "cache-control", "content-encoding", "vary",
            "www-authenticate", "x-frame-options", "x-asset", "x-proxied", "upgrade",
            "content-range", "etag", "last-modified")


def fetch(port, method, path, headers=()):
    host = None if any(x.lower().startswith("host:") for x in headers) else "localhost"
    r = h.exchange(port, h.request(method, path, host=host, headers=headers), method=method)
    body = r.body
    if r.header("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return r, body


def same(ports, method, path, headers=(), body=True, also=()):
    """Send the request to both; assert the same answer; return scalwsd's.
    Each server's own port in a header value is compared as PORT."""
    (rn, bn), (rs, bs) = (fetch(p, method, path, headers) for p in ports)
    what = "%s %s %s" % (method, path, list(headers))
    assert rs.status == rn.status, (what, rn, rs)

    def value(r, port, name):
        v = r.header(name)
        return v.replace(":%d" % port, ":PORT") if v else v
    for name in COMPARED + tuple(also):
        assert value(rs, ports[1], name) == value(rn, ports[0], name), \
            (what, name, rn.headers, rs.headers)
    if rn.header("expires"):
        assert rs.header("expires"), (what, rs.headers)
        dn = email.utils.parsedate_to_datetime(rn.header("expires")).timestamp()
        ds = email.utils.parsedate_to_datetime(rs.header("expires")).timestamp()
        assert abs(dn - ds) <= 5, (what, rn.header("expires"), rs.header("expires"))
    else:
        assert rs.header("expires") is None, (what, rs.headers)
    if body:
        assert server_token(bs) == server_token(bn), (what, bn[:300], bs[:300])
    return rs


def server_token(body):
    """The generated pages are nginx's bytes but the server's name."""
    return re.sub(rb"<hr><center>(?:nginx|scalws)(?:/[0-9.]+)?</center>",
                  b"<hr><center>SERVER</center>", body)


# ------------------------------------------------------------ static site

STATIC_FILES = {
    "static/index.html": "<h1>home</h1>\n",
    "static/new-page.html": "<p>new</p>\n",
    "static/posts/hello-world.html": "<p>hello world post</p>\n",
    "static/manual/intro.html": "<p>manual</p>\n",
    "static/style.css": "body { color: black; }\n" * 40,
    "static/app.js": "console.log('x');\n",
    "static/logo.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
    "static/404.html": "<h1>not here</h1>\n",
    "static/dir/index.html": "<p>dir</p>\n",
    "static/private/secret.txt": "secret\n",
}


def test_static_site(pair):
    ports = pair("static-site.conf", STATIC_FILES)
    host = ["Host: static.test"]
    for path in ("/", "/index.html", "/new-page.html", "/dir/", "/app.js", "/logo.png"):
        same(ports, "GET", path, host)
    same(ports, "GET", "/style.css", host + ["Accept-Encoding: gzip"])
    same(ports, "HEAD", "/new-page.html", host)
    # redirects: canonical host, an old page, a rewritten section
    same(ports, "GET", "/x?y=1", ["Host: www.static.test"], body=False)
    same(ports, "GET", "/old-page", host, body=False)
    same(ports, "GET", "/docs/intro.html", host, body=False)
    same(ports, "GET", "/dir", host, body=False)
    # an internal rewrite, the custom 404 page, an internal-only location
    same(ports, "GET", "/blog/2024/hello-world", host)
    same(ports, "GET", "/missing", host)
    same(ports, "GET", "/404.html", host)
    same(ports, "GET", "/private/secret.txt", host, body=False)
    # conditional and range requests on a static file
    r = same(ports, "GET", "/new-page.html", host)
    same(ports, "GET", "/new-page.html", host + ["If-None-Match: %s" % r.header("etag")])
    same(ports, "GET", "/new-page.html", host + ["Range: bytes=2-5"])


# ------------------------------------------------------------ hotlinking

def test_hotlink_site(pair):
    ports = pair("hotlink-site.conf", {"img/a.png": b"\x89PNG\r\n\x1a\n" + bytes(64),
                                       "img/embed/x.html": "<p>embed</p>\n"})
    host = ["Host: img.test"]
    for referer in (None, "", "example.test/hidden", "http://img.test/page",
                    "https://cdn.img.test/p", "http://partner.test/gallery/2",
                    "http://partner.test/other", "https://www.google.com/search?q=a",
                    "http://evil.test/", "http://img.test.evil.test/"):
        hdrs = host + ([] if referer is None else ["Referer: " + referer])
        same(ports, "GET", "/a.png", hdrs)
    same(ports, "GET", "/embed/x.html", host + ["Referer: http://img.test/"])
    same(ports, "GET", "/embed/x.html", host, body=False)
    same(ports, "GET", "/embed/x.html", host + ["Referer: http://evil.test/"], body=False)


# ------------------------------------------------------------ reverse proxy

def htpasswd_sha(user, password):
    import hashlib
    return "%s:{SHA}%s\n" % (user, base64.b64encode(hashlib.sha1(password.encode()).digest()).decode())


def auth(user, password):
    return "Authorization: Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def echo_of(resp):
    import json
    return json.loads(resp.body)


def test_reverse_proxy(pair):
    ports = pair("reverse-proxy.conf", {"htpasswd": htpasswd_sha("admin", "s3cret")})
    host = ["Host: app.test"]
    same(ports, "GET", "/name", host)
    same(ports, "GET", "/status/404", host)
    same(ports, "GET", "/internal/x", host, body=False)
    same(ports, "GET", "/admin/x", host, body=False)
    same(ports, "GET", "/admin/x", host + [auth("admin", "wrong")], body=False)
    # the origin sees the same request from both (the echo is compared
    # without the addresses and ports, which differ)
    rs = [fetch(p, "GET", "/admin/x?q=1", host + [auth("admin", "s3cret")])[0] for p in ports]
    assert [r.status for r in rs] == [200, 200], rs
    en, es = (echo_of(r) for r in rs)
    assert en["target"] == es["target"] == "/echo/x?q=1"
    def fwd(e):
        return sorted((k.lower(), v) for k, v in e["headers"]
                      if k.lower() in ("host", "x-real-ip", "x-forwarded-for", "x-forwarded-proto",
                                       "authorization"))
    assert fwd(en) == fwd(es), (en, es)
    # the API's rate: 2 r/s with a burst of 3, nodelay: in a quick run of
    # 8 requests both let the first ones through and refuse the rest with 429
    for port in ports:
        codes = [fetch(port, "GET", "/api/x", host)[0].status for _ in range(8)]
        assert codes[:4] == [200] * 4 and 429 in codes[4:], (port, codes)


# ------------------------------------------------------------ gateway

def test_gateway_site(pair):
    ports = pair("gateway.conf")
    o = pair.origin
    host = ["Host: gw.test"]
    seen = []
    for port in ports:
        r, _ = fetch(port, "GET", "/check?token=abc", host)
        seen.append(echo_of(r))
    for e in seen:
        assert (e["method"], e["body"]) == ("POST", "token=abc&uri=/check"), e
    assert [dict((k.lower(), v) for k, v in e["headers"])["content-length"] for e in seen] \
        == ["20", "20"]
    # the legacy backend sees both servers come from 127.0.0.2
    for port in ports:
        r, _ = fetch(port, "GET", "/legacy/x", host)
        assert r.status == 200, r
        assert o.peers[-1][0] == "127.0.0.2", (port, o.peers[-3:])
    # a slow download: the same bytes, neither server faster than the rate allows
    for port in ports:
        t0 = time.monotonic()
        r, body = fetch(port, "GET", "/files/500000", host)
        assert r.status == 200 and len(body) == 500000, r
        assert time.monotonic() - t0 >= 1.2, port


# ------------------------------------------------------------ websocket

def ws_handshake(port, path="/ws"):
    key = base64.b64encode(os.urandom(16)).decode()
    c = h.Conn(port)
    c.send(h.request("GET", path, host="ws.test", headers=[
        "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: " + key,
        "Sec-WebSocket-Version: 13"]))
    return c, c.read_response()


def test_websocket_app(pair):
    ports = pair("websocket-app.conf")
    for port in ports:
        c, r = ws_handshake(port)
        try:
            assert r.status == 101, r
            assert r.header("upgrade").lower() == "websocket"
            # one masked text frame, echoed back unmasked by the origin
            mask = os.urandom(4)
            data = b"hello"
            c.send(bytes([0x81, 0x80 | len(data)]) + mask
                   + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
            head = c.read_exact(2)
            assert head[0] == 0x81 and head[1] == len(data), head
            assert c.read_exact(len(data)) == data
        finally:
            c.close()
    same(ports, "GET", "/name", ["Host: ws.test"])


# ------------------------------------------------------------ Debian's stock configuration

def stock_tree(dst, port):
    """/etc/nginx copied to dst with its paths moved under dst and port 80
    changed to port; returns the main file."""
    shutil.copytree("/etc/nginx", dst, symlinks=False)
    subst = (("/etc/nginx", str(dst)), ("/var/log/nginx", str(dst)),
             ("/run/nginx.pid", str(dst / "nginx.pid")), ("/var/www/html", str(dst / "www")),
             ("listen 80 ", "listen 127.0.0.1:%d " % port),
             ("listen [::]:80 ", "listen [::1]:%d " % port))
    for f in (dst / "nginx.conf", dst / "sites-available" / "default"):
        text = f.read_text()
        for a, b in subst:
            text = text.replace(a, b)
        f.write_text(text)
    enabled = dst / "sites-enabled" / "default"
    if enabled.exists() or enabled.is_symlink():
        enabled.unlink()
    shutil.copy(dst / "sites-available" / "default", enabled)
    (dst / "www").mkdir()
    (dst / "www" / "index.nginx-debian.html").write_text("<h1>Welcome</h1>\n")
    (dst / "www" / "page.html").write_text("<p>%s</p>\n" % ("text " * 200))
    # one mtime for both servers' copies: their ETags and Last-Modified
    # must not differ because the copies were made a second apart
    for f in (dst / "www").iterdir():
        os.utime(f, (1700000000, 1700000000))
    return dst / "nginx.conf"


class ForegroundServer(h.Server):
    """A configuration without "daemon off" (Debian's), kept in the
    foreground from the command line, as systemd runs nginx."""

    def cmd(self, *extra):
        return super().cmd("-g", "daemon off;", *extra)


def test_debian_stock_configuration(tmp_path):
    """Debian's /etc/nginx (nginx.conf, sites-available/default), paths moved
    and scalwsd's module line added: scalwsd -t accepts it, and both servers
    answer the same."""
    if not os.path.exists("/etc/nginx/nginx.conf"):
        pytest.fail("Debian's nginx is not installed: `sh auto/deps test` installs it")
    ports, running = [], []
    try:
        for who in ("nginx", "scalwsd"):
            port = h.free_port()
            conf = stock_tree(tmp_path / who, port)
            h.make_traversable(tmp_path)
            if who == "scalwsd":
                conf.write_text("modules_dir %s;\n" % h.MODULES + conf.read_text())
                rc = h.run_scalwsd(["-t", "-p", str(conf.parent), "-c", str(conf)])
                assert rc.returncode == 0, rc.stderr.decode()
                srv = ForegroundServer(conf.parent, conf.read_text(), [port],
                                       conf_name="nginx.conf")
                srv.start()
                running.append(srv)
            else:
                running.append(Nginx(conf.parent, conf.read_text(), port,
                                     extra=("-g", "daemon off;")))
            ports.append(port)
        same(ports, "GET", "/")
        same(ports, "GET", "/page.html", ["Accept-Encoding: gzip"])
        same(ports, "GET", "/missing", body=False)
        same(ports, "HEAD", "/")
    finally:
        for r in running:
            r.stop()


# ------------------------------------------------------------ PHP site

PHP_FILES = {
    "php/index.php": "<?php header('X-Front: index'); echo 'front ', $_SERVER['REQUEST_URI'], "
                     "' args=', $_SERVER['QUERY_STRING'], \"\\n\";",
    "php/info.php": "<?php header('Content-Type: text/plain'); echo $_SERVER['SCRIPT_NAME'], '|', "
                    "$_SERVER['PATH_INFO'] ?? '', '|', $_GET['a'] ?? '', '|', "
                    "$_SERVER['REQUEST_METHOD'], '|', file_get_contents('php://input'), "
                    "\"\\n\";",
    "php/form.php": "<?php http_response_code(201); header('X-Got: ' . ($_POST['name'] ?? '')); "
                    "echo 'ok';",
    "php/style.css": "body{}\n",
    "php/.htaccess": "deny\n",
}


def test_php_site(pair, tmp_path):
    import phpfpm
    fpm = phpfpm.PhpFpm(tmp_path / "fpm")
    fpm.start()

    def prepare(who, d):
        # each server includes Debian's own snippet, which includes
        # fastcgi.conf from its configuration directory: nginx's from
        # /etc/nginx, scalwsd's from its conf/
        (d / "snippets").mkdir()
        shutil.copy("/etc/nginx/snippets/fastcgi-php.conf", d / "snippets")
        src = "/etc/nginx/fastcgi.conf" if who == "nginx" else os.path.join(h.SRC, "conf",
                                                                              "fastcgi.conf")
        shutil.copy(src, d / "fastcgi.conf")

    try:
        ports = pair("php-site.conf", PHP_FILES, extra={"PHP_SOCK": fpm.sock}, prepare=prepare)
        host = ["Host: php.test"]
        for path in ("/", "/index.php", "/some/permalink/", "/some/permalink/?p=3",
                     "/info.php", "/info.php?a=b", "/info.php/extra/path?a=1", "/style.css",
                     "/missing.php"):
            same(ports, "GET", path, host, also=("x-front",), body=not path.startswith("/missing"))
        same(ports, "GET", "/.htaccess", host, body=False)
        same(ports, "HEAD", "/info.php", host)
        body = b"name=alice&x=1"
        for port in ports:
            r = h.exchange(port, h.request("POST", "/form.php", host="php.test", headers=[
                "Content-Type: application/x-www-form-urlencoded", "Content-Length: %d" % len(body)],
                body=body))
            assert r.status == 201 and r.header("x-got") == "alice", r
    finally:
        fpm.kill()


# ------------------------------------------------------------ rewrites, locations, error pages

RW_FILES = {
    "rw/index.html": "<p>index</p>\n",
    "rw/404.html": "<h1>custom 404</h1>\n",
    "rw/50x.html": "<h1>50x</h1>\n",
    "rw/exact.html": "exact\n",
    "rw/pref.html": "pref\n",
    "rw/a/index.html": "A\n",
    "rw/a/x.txt": "ax\n",
    "rw/a/b/page.html": "AB\n",
    "rw/a/b/y.txt": "aby\n",
    "rw/n/plain.css": "n{}\n",
    "rw/n/deep/z.txt": "z\n",
    "rw/docs/one.txt": "doc1\n",
    "rw/img/x.png": b"\x89PNG\r\n\x1a\n",
    "rw/if/f.txt": "f\n",
    "rw/if/d/index.html": "d\n",
    "rw/list/one.txt": "1\n",
}


def test_rewrite_site(pair):
    """rewrite's flags and captures, if, map, return, error_page,
    try_files, alias/root and nested locations, as nginx answers them."""
    ports = pair("rewrite-site.conf", RW_FILES)
    host = ["Host: rw.test"]
    x_loc = ("x-loc", "x-if")
    for path in (
            # rewrite: last, permanent, redirect, a URL, new arguments, "?"
            "/old/index.html", "/perm/x?y=1", "/tmp/x", "/abs/z?k=v", "/q/index.html?o=2",
            "/qq/index.html?o=2", "/two/abc/42", "/brk/index.html", "/lst/p?z=1",
            # map: exact key, regex with a named capture, caseless, default
            "/m/exact", "/m/re/42", "/m/ci", "/m/CI", "/m/other",
            # if: -f -d !-e, = != ~*, add_header and expires inside
            "/if/f.txt", "/if/d", "/if/d/", "/if/zz", "/ifr/?a=x", "/ifr/?a=y", "/ifr/",
            "/ifr/?h=1",
            # the order of locations: =, ^~, ~, ~*, prefixes, nested ones
            "/exact.html", "/pref.html", "/index.html", "/img/x.png", "/a/index.html",
            "/a/x.txt", "/a/b/page.html", "/a/b/y.txt", "/n/plain.css", "/n/deep/z.txt",
            # alias and root, in prefix and regex locations
            "/al/index.html", "/al/missing", "/re-al/one.txt", "/re-al/missing",
            "/rt/index.html",
            # try_files
            "/try/nothing", "/try/a/", "/try404/nothing", "/trynamed/nothing",
            # return
            "/r/301", "/r/302", "/r/303", "/r/307?k=v", "/r/308", "/r/url", "/r/200",
            "/r/200.json", "/r/empty", "/r/204", "/r/404", "/r/418", "/r/503",
            "/r/text404",
            # error_page: a URI, =code, @named, =, a URL, =301 URL
            "/missing", "/ep/missing", "/ep/f", "/ep/e", "/ep/g", "/ep/t",
            # directories
            "/a", "/a/b", "/list/"):
        same(ports, "GET", path, host, also=x_loc)
    same(ports, "GET", "/ifr/", host + ["User-Agent: SomeBot/1.0"], also=x_loc)
    for path in ("/r/301", "/r/404", "/r/200", "/missing", "/ep/f"):
        same(ports, "HEAD", path, host, also=x_loc)


def test_virtual_hosts(pair):
    """server_name: exact, *.x, .x, x.*, regexes with captures, the
    default server, "" for a request without Host."""
    ports = pair("vhosts.conf")
    for name in ("first.test", "default.test", "exact.test", "www.exact.test",
                 "EXACT.test", "exact.test.", "exact.test:8080", "x.wild.test",
                 "a.wild.test", "b.a.wild.test", "x.deep.wild.test", "wild.test",
                 "mail.example.org", "mail.x", "dot.test", "q.dot.test", "abc.re.test",
                 "www.one.num.test", "mail.re2.test", "re.test", "unknown.test"):
        same(ports, "GET", "/", ["Host: " + name])
    # HTTP/1.0 without Host: the server named ""
    rs = []
    for port in ports:
        with h.Conn(port) as c:
            c.send(b"GET / HTTP/1.0\r\n\r\n")
            rs.append(c.read_response())
    assert [r.body for r in rs] == [b"no host", b"no host"], rs


def raw(port, data):
    """The response to data sent as it is, and whether the connection was
    then closed; None if closed without one."""
    with h.Conn(port) as c:
        c.send(data)
        try:
            return c.read_response()
        except (ConnectionError, AssertionError, OSError):
            return None


# Malformed or refused requests on which both answer the same status.
MALFORMED = [
    b"GET / HTTP/1.1\r\n\r\n",                                    # no Host
    b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",              # two
    b"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
    b"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
    b"GET /../x HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET x HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"
    b"0\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\n : x\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\n Folded: x\r\n\r\n",
    b"GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /%00 HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.1\nHost: a\n\n",                               # bare LF
    b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n",     # 414
    b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n",
]

# Where scalwsd answers otherwise on purpose (docs/compat.md): nginx's
# status, ours, and why.
MALFORMED_DIFFERENT = [
    # an unknown method: 501 (RFC 9110 15.6.2), nginx's static files say 405
    (b"FOO / HTTP/1.1\r\nHost: a\r\n\r\n", 405, 501),
    # methods are case-sensitive (RFC 9110 9.1): "get" is unknown: 501
    (b"get / HTTP/1.1\r\nHost: a\r\n\r\n", 400, 501),
    # an invalid Host (RFC 9112 3.2: 400); nginx takes it
    (b"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", 200, 400),
    # HTTP-version is one digit each (RFC 9112 2.3); nginx takes 1.10
    (b"GET / HTTP/1.10\r\nHost: a\r\n\r\n", 200, 400),
    # the request line's single spaces (RFC 9112 3)
    (b"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 200, 400),
    # a header too large: 431 (RFC 6585), nginx's 400
    (b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n", 400, 431),
    # OPTIONS * (RFC 9110 9.3.7) is answered
    (b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 400, 200),
]


def test_malformed_requests(pair):
    ports = pair("static-site.conf", STATIC_FILES)
    for data in MALFORMED:
        rn, rs = (raw(p, data) for p in ports)
        assert rn is not None and rs is not None, (data[:80], rn, rs)
        assert rs.status == rn.status, (data[:80], rn, rs)
        if rn.header("content-type") == "text/html" and rn.status >= 400:
            assert server_token(rs.body) == server_token(rn.body), (data[:80], rn.body, rs.body)
    for data, nginx_status, ours in MALFORMED_DIFFERENT:
        rn, rs = (raw(p, data) for p in ports)
        assert rn is not None and rn.status == nginx_status, (data[:80], rn)
        assert rs is not None and rs.status == ours, (data[:80], rs)


def test_static_conditional_and_ranges(pair):
    """HEAD, conditional GET and Range on a static file; 412 and 416 carry
    nginx's page."""
    ports = pair("static-site.conf", STATIC_FILES)
    host = ["Host: static.test"]
    r = same(ports, "GET", "/new-page.html", host)
    etag, lm = r.header("etag"), r.header("last-modified")
    for extra in (["If-None-Match: %s" % etag], ["If-None-Match: *"], ['If-None-Match: "x"'],
                  ["If-Modified-Since: %s" % lm], ["If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT"],
                  ['If-Match: "nope"'], ["If-Match: %s" % etag],
                  ["If-Unmodified-Since: Thu, 01 Jan 1970 00:00:01 GMT"],
                  ["Range: bytes=0-3"], ["Range: bytes=-3"], ["Range: bytes=3-"],
                  ["Range: bytes=100-"], ["Range: junk"],
                  ["Range: bytes=0-3", "If-Range: %s" % etag],
                  ["Range: bytes=0-3", 'If-Range: "other"']):
        same(ports, "GET", "/new-page.html", host + extra, also=("content-range", "accept-ranges"))
    for extra in ([], ["If-None-Match: %s" % etag], ['If-Match: "nope"']):
        same(ports, "HEAD", "/new-page.html", host + extra)
    # a multipart answer: the same parts (the boundaries are ours: random)
    for port in ports:
        r = fetch(port, "GET", "/new-page.html", host + ["Range: bytes=0-0,-1"])[0]
        assert r.status == 206 and r.header("content-type").startswith(
            "multipart/byteranges; boundary="), r
        assert b"Content-Range: bytes 0-0/11" in r.body and b"Content-Range: bytes 10-10/11" \
            in r.body, r.body


# ------------------------------------------------------------ charset, listings

CL_FILES = {
    "cl/index.html": "<p>index</p>\n",
    "cl/a.foo": "foo\n",
    "cl/page.txt": "text\n",
    "cl/style.css": "b{}\n",
    "cl/data.json": "{}\n",
    "cl/sub/index.html": "sub\n",
    "cl/list/one.txt": "1\n",
    "cl/list/two words.txt": "22\n",
    "cl/list/big.bin": b"\0" * 5000,
    "cl/list/dir/x": "x\n",
}


def test_charset_and_listings(pair):
    """charset (and charset_types, off), autoindex in html, json, jsonp and
    xml, index with several names, etag off, internal, types."""
    ports = pair("charset-listing.conf", CL_FILES)
    host = ["Host: cl.test"]
    for path in ("/", "/index.html", "/page.txt", "/style.css", "/data.json", "/sub/",
                 "/sub", "/missing", "/etag/index.html", "/int/x", "/list/", "/list/dir/",
                 "/sizes/", "/json/", "/jsonp/?callback=cb", "/jsonp/?a=1&callback=x.y_z",
                 "/jsonp/", "/jsonp/?callback=a(b", "/xml/", "/def/", "/ctype/a.foo",
                 "/ctype/index.html", "/ctype/page.txt", "/latin/page.txt", "/nocs/page.txt",
                 "/types/style.css", "/types/page.txt"):
        same(ports, "GET", path, host)
