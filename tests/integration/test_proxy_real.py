"""The proxy in front of real servers: nginx (Debian's) and node. Each runs
on a free loopback port with its own temporary prefix, bounded in time."""
import base64
import gzip
import hashlib
import os
import shutil
import subprocess
import time
import zlib

import pytest

import swsharness as h
from proxyorigin import pattern, read_ws_frame, ws_frame

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
NODE = shutil.which("node") or shutil.which("nodejs")


class Proc:
    def __init__(self, argv, port, cwd, log):
        self.log = log
        self.port = port
        self.out = open(log, "ab")
        self.p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self.out,
                                  stderr=self.out, start_new_session=True)
        deadline = time.monotonic() + 5
        while not h.port_open(port):
            if self.p.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("%s did not start:\n%s" % (argv[0], open(log).read()))
            time.sleep(0.05)

    def stop(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, 15)
            try:
                self.p.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, 9)
                self.p.wait(5)
        self.out.close()


# ------------------------------------------------------------ nginx

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log %(tmp)s/nginx-error.log info;
pid %(tmp)s/nginx.pid;
events { worker_connections 64; }
http {
    log_format c "$connection $request";
    access_log %(tmp)s/nginx-access.log c;
    client_body_temp_path %(tmp)s/cb;
    proxy_temp_path %(tmp)s/pt;
    fastcgi_temp_path %(tmp)s/ft;
    uwsgi_temp_path %(tmp)s/ut;
    scgi_temp_path %(tmp)s/st;
    keepalive_requests 10000;
    server {
        listen 127.0.0.1:%(port)d;
        root %(tmp)s/www;
        gzip on;
        gzip_types text/plain;
        gzip_min_length 0;
        location = /info {
            return 200 "$request_method $request_uri|$http_host|$http_x_forwarded_for|$http_connection\\n";
        }
        location = /body { return 200 "$http_content_length $http_transfer_encoding\\n"; }
    }
}
"""


@pytest.fixture
def nginx(tmp_path):
    if NGINX is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    d = tmp_path / "nginx"
    (d / "www").mkdir(parents=True)
    (d / "www" / "big.bin").write_bytes(pattern(1500000))
    (d / "www" / "text.txt").write_bytes(b"hello nginx " * 5000)
    h.make_traversable(d)
    port = h.free_port()
    (d / "nginx.conf").write_text(NGINX_CONF % {"tmp": d, "port": port})
    p = Proc([NGINX, "-p", str(d) + "/", "-c", str(d / "nginx.conf"), "-e",
              str(d / "nginx-error.log")], port, str(d), str(d / "out.txt"))
    p.dir = d
    yield p
    p.stop()


def nginx_connections(p):
    lines = [ln for ln in (p.dir / "nginx-access.log").read_text().splitlines() if ln]
    return len({ln.split()[0] for ln in lines}), len(lines)


def test_nginx_static_and_keepalive(sws, nginx):
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % nginx.port)
    with h.Conn(srv.port) as c:
        for _ in range(3):
            c.send(h.request("GET", "/big.bin"))
            r = c.read_response()
            assert r.status == 200 and r.body == pattern(1500000)
            assert r.header("Content-Length") == "1500000"
            assert r.header("Server").startswith("scalws")
    for _ in range(5):
        assert h.curl(srv.url("/info")).status == 200
    conns, reqs = h.wait_for(lambda: nginx_connections(nginx)[1] == 8 and nginx_connections(nginx), 3)
    assert reqs == 8 and conns == 1                  # one upstream connection for all


def test_nginx_headers(sws, nginx):
    srv = sws(server="""location / { proxy_pass http://127.0.0.1:%d;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; }""" % nginx.port)
    r = h.curl(srv.url("/info?a=b"), headers=["X-Forwarded-For: 9.9.9.9", "Connection: close"])
    assert r.body == b"GET /info?a=b|127.0.0.1:%d|9.9.9.9, 127.0.0.1|\n" % nginx.port


def test_nginx_gzip_chunked(sws, nginx):
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % nginx.port)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/text.txt", headers=[("Accept-Encoding", "gzip")]))
        r = c.read_response()
        assert r.status == 200
        assert r.header("Content-Encoding") == "gzip"
        assert r.header("Transfer-Encoding") == "chunked"       # nginx sent it chunked
        assert gzip.decompress(r.body) == b"hello nginx " * 5000


def test_nginx_conditional_and_head(sws, nginx):
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % nginx.port)
    r = h.curl(srv.url("/big.bin"))
    lm, etag = r.header("Last-Modified"), r.header("ETag")
    assert lm and etag
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/big.bin", headers=[("If-None-Match", etag)]))
        r = c.read_response()
        assert r.status == 304 and r.body == b""
        c.send(h.request("HEAD", "/big.bin"))
        r = c.read_response("HEAD")
        assert r.status == 200 and r.header("Content-Length") == "1500000"
        c.send(h.request("GET", "/nothing"))
        assert c.read_response().status == 404


def test_nginx_request_bodies(sws, nginx):
    srv = sws(server="""location / { proxy_pass http://127.0.0.1:%d; }
                        location /s/ { proxy_pass http://127.0.0.1:%d/;
                                       proxy_request_buffering off; }""" % (nginx.port, nginx.port))
    r = h.curl(srv.url("/body"), method="POST", body=b"x" * 1000)
    assert r.body == b"1000 \n"
    raw = (h.request("POST", "/s/body", headers=[("Transfer-Encoding", "chunked")])
           + b"3\r\nabc\r\n0\r\n\r\n")
    assert h.exchange(srv.port, raw).body == b" chunked\n"


# ------------------------------------------------------------ node

NODE_APP = r"""
const http = require('http');
const crypto = require('crypto');
let conns = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/conns') {
    res.end(String(conns));
  } else if (req.url === '/chunked') {
    res.writeHead(200, {'Content-Type': 'text/plain'});
    let i = 0;
    const t = setInterval(() => {
      res.write('part' + i + '\n');
      if (++i === 5) { clearInterval(t); res.end(); }
    }, 20);
  } else if (req.url === '/echo') {
    const h = crypto.createHash('sha1');
    let n = 0;
    req.on('data', (d) => { h.update(d); n += d.length; });
    req.on('end', () => res.end(n + ' ' + h.digest('hex') + ' ' +
                                (req.headers['transfer-encoding'] || '-')));
  } else if (req.url === '/early') {
    res.statusCode = 413;
    res.end('too big');
  } else {
    res.end(req.method + ' ' + req.url + ' ' + (req.headers['x-forwarded-proto'] || ''));
  }
});
server.on('connection', () => { conns++; });
server.on('clientError', (err, socket) => { console.log('clientError', err.code, err.message); socket.destroy(); });
server.on('upgrade', (req, socket, head) => {
  const key = req.headers['sec-websocket-key'];
  const accept = crypto.createHash('sha1')
      .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
               'Connection: Upgrade\r\nSec-WebSocket-Accept: ' + accept + '\r\n\r\n');
  if (head.length) socket.write(head);
  socket.pipe(socket);     // raw echo: the frames come back as they were sent
});
server.keepAliveTimeout = 1000;
server.listen(Number(process.argv[2]), '127.0.0.1');
"""


@pytest.fixture
def node(tmp_path):
    if NODE is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    d = tmp_path / "node"
    d.mkdir()
    (d / "app.js").write_text(NODE_APP)
    port = h.free_port()
    p = Proc([NODE, str(d / "app.js"), str(port)], port, str(d), str(d / "out.txt"))
    yield p
    p.stop()


def test_node_keepalive_and_chunked(sws, node):
    srv = sws(server="""location / { proxy_pass http://127.0.0.1:%d;
        proxy_set_header X-Forwarded-Proto $scheme; }""" % node.port)
    base = h.curl(srv.url("/conns")).body     # (the start-up probe counts too)
    with h.Conn(srv.port) as c:
        for _ in range(3):
            c.send(h.request("GET", "/chunked"))
            r = c.read_response()
            assert r.body == b"".join(b"part%d\n" % i for i in range(5))
            assert r.header("Transfer-Encoding") == "chunked"
    for _ in range(5):
        assert h.curl(srv.url("/x")).body == b"GET /x http"
    assert h.curl(srv.url("/conns")).body == base


def test_node_closes_idle_connections(sws, node):
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % node.port)
    base = int(h.curl(srv.url("/conns")).body)
    time.sleep(2.5)                     # node closes idle ones after 1 s (+1 s)
    assert h.curl(srv.url("/x")).status == 200
    assert int(h.curl(srv.url("/conns")).body) == base + 1


def test_node_request_bodies(sws, node):
    srv = sws(server="""client_max_body_size 0;
                        location / { proxy_pass http://127.0.0.1:%d; }
                        location /s/ { proxy_pass http://127.0.0.1:%d/;
                                       proxy_request_buffering off; }""" % (node.port, node.port))
    data = os.urandom(3000000)
    sha = hashlib.sha1(data).hexdigest().encode()
    r = h.curl(srv.url("/echo"), method="POST", body=data)
    assert r.body == b"3000000 " + sha + b" -"
    r = h.curl(srv.url("/s/echo"), method="POST", body=data)
    assert r.body == b"3000000 " + sha + b" -"
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/s/echo", headers=[("Transfer-Encoding", "chunked")]))
        for i in range(0, len(data), 100000):
            piece = data[i:i + 100000]
            c.send(b"%x\r\n" % len(piece) + piece + b"\r\n")
        c.send(b"0\r\n\r\n")
        assert c.read_response().body == b"3000000 " + sha + b" chunked"


def test_node_websocket(sws, node):
    srv = sws(server="location / { proxy_pass http://127.0.0.1:%d; }" % node.port)
    key = base64.b64encode(os.urandom(16)).decode()
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/ws", headers=[("Upgrade", "websocket"),
                                                ("Connection", "Upgrade"),
                                                ("Sec-WebSocket-Key", key),
                                                ("Sec-WebSocket-Version", "13")]))
        r = c.read_response()
        assert r.status == 101 and r.header("Upgrade") == "websocket"
        buf = c.buf
        for payload in (b"one", os.urandom(200000), b"three"):
            c.send(ws_frame(2, payload))
            frame, buf = read_ws_frame(c.sock, buf)
            assert frame == (2, payload)
