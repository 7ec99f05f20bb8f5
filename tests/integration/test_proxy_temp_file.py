"""proxy_temp_path, proxy_max_temp_file_size, proxy_temp_file_write_size:
with buffering on, a response larger than the buffers goes on in a
temporary file, so that a slow client does not hold the server: the origin
finishes sending while the client has read nothing, the body arrives byte
for byte, and no temporary file is left."""
import gzip
import hashlib
import os
import socket
import subprocess
import threading
import time

import conferr
import swsharness as h

BIG = 32 << 20            # more than every socket buffer on the way can hold


def body_of(n):
    block = hashlib.sha256(b"seed").digest() * 2048          # 64 KiB, not compressible
    return (block * (n // len(block) + 1))[:n]


class BigOrigin:
    """A real HTTP/1.1 server on loopback: GET /N[.txt] answers N bytes and
    records when its last byte was handed to the kernel (sendall returned)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.done = threading.Event()
        self.conns = []
        self.stopping = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return
                    buf += d
                head, _, buf = buf.partition(b"\r\n\r\n")
                path = head.split(b" ")[1].decode()
                name = path.lstrip("/")
                text = name.endswith(".txt")
                n = int(name.split(".")[0])
                data = (b"the quick brown fox %d\n" * (n // 20))[:n] if text else body_of(n)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: %s\r\n\r\n"
                          % (len(data), b"text/plain" if text else b"application/octet-stream"))
                c.sendall(data)
                self.done.set()
        except OSError:
            return
        finally:
            c.close()

    def stop(self):
        self.stopping = True
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def slow_client(port, path):
    """Send the request and read nothing yet (a small receive buffer)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
               % path).encode())
    return s


def read_all(s):
    data = bytearray()
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data += d
    s.close()
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    return head, body


def temp_fds(srv):
    """The workers' descriptors open on files of the temporary directory."""
    out = []
    for pid in srv.children():
        d = "/proc/%d/fd" % pid
        for fd in os.listdir(d):
            try:
                link = os.readlink(os.path.join(d, fd))
            except OSError:
                continue
            if "proxy_temp" in link or "ptemp" in link:
                out.append(link)
    return out


def start(sws, origin, extra=""):
    return sws(server="""
        location / {
            proxy_pass http://%s;
            proxy_buffers 4 8k;
            %s
        }""" % (origin.addr, extra))


def test_slow_client_releases_the_origin(sws, tmp_path):
    o = BigOrigin()
    try:
        srv = start(sws, o, "proxy_temp_path @TMP@/ptemp 1 2;")
        s = slow_client(srv.port, "/%d" % BIG)
        # the origin gets rid of everything while the client reads nothing
        assert o.done.wait(20), "the origin could not finish: the proxy held it"
        fds = temp_fds(srv)
        assert fds and all(f.endswith("(deleted)") for f in fds), fds
        # nothing with a name in the directory: the file was unlinked at once
        assert [f for _, _, fs in os.walk(tmp_path / "ptemp") for f in fs] == []
        head, body = read_all(s)
        assert head.startswith(b"HTTP/1.1 200")
        assert len(body) == BIG and hashlib.sha1(body).digest() == \
            hashlib.sha1(body_of(BIG)).digest()
        assert h.wait_for(lambda: temp_fds(srv) == [], 5), temp_fds(srv)
    finally:
        o.stop()


def test_default_temp_path_under_the_prefix(sws, tmp_path):
    o = BigOrigin()
    try:
        srv = start(sws, o)
        assert (tmp_path / "proxy_temp").is_dir()        # made by the master
        s = slow_client(srv.port, "/%d" % BIG)
        assert o.done.wait(20)
        assert any("proxy_temp" in f for f in temp_fds(srv))
        head, body = read_all(s)
        assert body == body_of(BIG)
    finally:
        o.stop()


def test_max_temp_file_size_zero_keeps_the_origin_waiting(sws):
    o = BigOrigin()
    try:
        srv = start(sws, o, "proxy_max_temp_file_size 0;")
        s = slow_client(srv.port, "/%d" % BIG)
        # without a file the proxy holds at most its buffers: the origin
        # cannot be done while the client has read nothing
        assert not o.done.wait(1.5)
        assert temp_fds(srv) == []
        head, body = read_all(s)
        assert body == body_of(BIG) and o.done.wait(5)
    finally:
        o.stop()


def test_max_temp_file_size_bounds_the_file(sws):
    o = BigOrigin()
    try:
        srv = start(sws, o, "proxy_max_temp_file_size 1m; proxy_temp_file_write_size 64k;")
        s = slow_client(srv.port, "/%d" % BIG)
        assert not o.done.wait(1.5)                 # 1 MB of file cannot take 32 MB
        pid = srv.children()[0]
        sizes = [os.fstat(os.open("/proc/%d/fd/%s" % (pid, fd), os.O_RDONLY)).st_size
                 for fd in os.listdir("/proc/%d/fd" % pid)
                 if "proxy_temp" in (os.readlink("/proc/%d/fd/%s" % (pid, fd))
                                     if os.path.exists("/proc/%d/fd/%s" % (pid, fd)) else "")]
        assert sizes and max(sizes) <= (1 << 20) + (64 << 10), sizes
        head, body = read_all(s)
        assert body == body_of(BIG)
    finally:
        o.stop()


def test_unwritable_temp_path_falls_back_to_memory(sws, tmp_path):
    # levels "1": the file goes in DIR/D/; every D is a plain file here,
    # so no temporary file can be made
    d = tmp_path / "ptemp"
    d.mkdir()
    for i in range(10):
        (d / str(i)).write_text("not a directory")
    o = BigOrigin()
    try:
        srv = start(sws, o, "proxy_temp_path @TMP@/ptemp 1;")
        s = slow_client(srv.port, "/%d" % BIG)
        assert h.wait_for(lambda: "stays in memory" in srv.error_log(), 10), srv.error_log()
        head, body = read_all(s)
        assert head.startswith(b"HTTP/1.1 200") and body == body_of(BIG)
        assert "open() \"%s/" % d in srv.error_log()
    finally:
        o.stop()


def test_buffering_off_no_file(sws):
    o = BigOrigin()
    try:
        srv = start(sws, o, "proxy_buffering off;")
        s = slow_client(srv.port, "/%d" % BIG)
        assert not o.done.wait(1.5)
        assert temp_fds(srv) == []
        assert read_all(s)[1] == body_of(BIG)
    finally:
        o.stop()


def test_small_and_many(sws):
    """Responses that fit the buffers need no file; many in a row, kept
    connections, each byte-exact."""
    o = BigOrigin()
    try:
        srv = start(sws, o)
        with h.Conn(srv.port) as c:
            for n in (0, 1, 8191, 8192, 40000, 300000, 3 << 20):
                c.send(h.request("GET", "/%d" % n))
                r = c.read_response()
                assert r.status == 200 and r.body == body_of(n), n
    finally:
        o.stop()


def test_gzip_over_the_file(sws):
    o = BigOrigin()
    try:
        srv = sws(http="gzip on; gzip_types text/plain;", server="""
            location / { proxy_pass http://%s; proxy_buffers 2 8k; }""" % o.addr)
        n = 8 << 20
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32768)
        s.connect(("127.0.0.1", srv.port))
        s.sendall(b"GET /%d.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n"
                  b"Connection: close\r\n\r\n" % n)
        assert o.done.wait(20)
        head, body = read_all(s)
        assert b"Content-Encoding: gzip" in head
        # chunked: undo the framing, then the coding
        out, rest = b"", body
        while True:
            size, _, rest = rest.partition(b"\r\n")
            k = int(size, 16)
            if k == 0:
                break
            out += rest[:k]
            rest = rest[k + 2:]
        assert gzip.decompress(out) == (b"the quick brown fox %d\n" * (n // 20))[:n]
    finally:
        o.stop()


def test_http2_client(sws):
    o = BigOrigin()
    try:
        srv = sws(ports=2, servers="""
        server {
            listen 127.0.0.1:@PORT2@ http2;
            location / { proxy_pass http://%s; proxy_buffers 4 8k; }
        }""" % o.addr)
        r = subprocess.run(["nghttp", "http://127.0.0.1:%d/%d" % (srv.ports[1], 4 << 20)],
                           capture_output=True, timeout=30)
        assert r.returncode == 0 and r.stdout == body_of(4 << 20)
    finally:
        o.stop()


def test_config_errors(tmp_path):
    loc = "        location / { proxy_pass http://127.0.0.1:1; %s }  # ERR\n"
    cases = [
        ("proxy_temp_path /tmp/x 3;", ["invalid level"]),
        ("proxy_temp_path /tmp/x 1 2 1 2;", ["proxy_temp_path"]),
        ("proxy_max_temp_file_size lots;", ["invalid value", "lots"]),
        ("proxy_temp_file_write_size 100;", ["invalid value", "1k"]),
        ("proxy_temp_file_write_size 64m;", ["invalid value"]),
        ("proxy_max_temp_file_size 8k; proxy_temp_file_write_size 16k;",
         ["max_temp_file_size must be 0 or at least"]),
        ("proxy_max_temp_file_size 1m; proxy_max_temp_file_size 2m;", ["duplicate"]),
        ("proxy_temp_path /a; proxy_temp_path /b;", ["duplicate"]),
    ]
    for i, (d, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server=loc % d)
    conferr.check_ok(tmp_path / "ok", server=loc.replace("  # ERR", "")
                     % "proxy_temp_path /tmp/x 1 2; proxy_max_temp_file_size 0;")
