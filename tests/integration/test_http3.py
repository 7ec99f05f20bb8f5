"""HTTP/3 over QUIC ("listen ... quic"), with Debian's gtlsclient (ngtcp2's
example client on GnuTLS) against the real server: static files small and
1 MiB (compared whole), 404, HEAD, respond, Date and Server, the access log
and the variables, several requests on one connection, a request body
proxied to an HTTP/1.1 origin, Alt-Svc over TCP, garbage and truncated
datagrams (a stateless reset for an unknown ID of ours, nothing for the
rest, the server serving on), quic_retry, and the configuration errors."""
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

import swsharness as h
import tlsutil as t

GTLS = shutil.which("gtlsclient")
pytestmark = pytest.mark.skipif(GTLS is None, reason="gtlsclient (ngtcp2-client) is missing")

BIG = os.urandom(1024 * 1024 + 7)
MTIME = 1577934245          # 2020-01-02 03:04:05 UTC
FILES = {
    "html/hello.txt": b"Hello, HTTP/3!\n",
    "html/big.bin": BIG,
    "html/a.txt": b"a" * 1000,
    "html/b.txt": b"b" * 30000,
    "html/c.txt": b"c" * 200000,
}
LOG_H3 = ('    log_format h3 "$server_protocol [$http3] $request $status $body_bytes_sent";\n'
          '    access_log @TMP@/h3.log h3;\n')
SERVER = """
        listen 127.0.0.1:@PORT@ quic;
        location = /gone { return 410; }
        location /proxy/ { proxy_pass http://@ORIGIN@/; }
        location /stream/ { proxy_pass http://@ORIGIN@/; proxy_request_buffering off; }
        location /small/ { proxy_pass http://@ORIGIN@/; client_max_body_size 1k; }
        location = /vars { return 200 "$server_protocol $http3 $scheme $https $server_port"; }
        location = /limited { alias @TMP@/html/c.txt; limit_rate 100k; }
"""


@pytest.fixture(scope="module")
def origin_mod():
    from proxyorigin import Origin
    o = Origin("h3origin")
    yield o
    o.stop()


@pytest.fixture(scope="module")
def srv(sws_module, pki, origin_mod):
    s = t.launch(sws_module, pki, files=FILES, server=SERVER, http=LOG_H3,
                 origin=origin_mod.addr)
    os.utime(s.tmp / "html" / "hello.txt", (MTIME, MTIME))
    return s


class H3Result:
    """What gtlsclient said: the response fields of each stream in order
    (a list of [(name, value)]), the downloaded bodies by file name, its
    exit status and output."""

    def __init__(self, rc, out, heads, bodies):
        self.rc = rc
        self.out = out
        self.heads = heads
        self.bodies = bodies

    def field(self, name, i=0):
        for k, v in (self.heads[i] if i < len(self.heads) else []):
            if k == name:
                return v
        return None

    def status(self, i=0):
        v = self.field(":status", i)
        return int(v) if v else None


# gtlsclient's trace of the response fields: "http: stream 0x4 [name: value]"
HEADER_RE = re.compile(r"^http: stream (0x[0-9a-f]+) \[(:?[a-z0-9-]+): (.*)\]$")


def h3get(port, *paths, method=None, data=None, timeout=15, extra=()):
    """Requests for paths over one QUIC connection to 127.0.0.1:port."""
    d = tempfile.mkdtemp(prefix="swsh3")
    try:
        args = [GTLS, "--exit-on-all-streams-close", "--no-quic-dump", "--no-http-dump",
                "--timeout=5s", "--download", d]
        if method:
            args += ["-m", method]
        if data is not None:
            f = os.path.join(d, ".body")
            with open(f, "wb") as fp:
                fp.write(data)
            args += ["-d", f]
        args += list(extra)
        args += ["127.0.0.1", str(port)]
        args += ["https://localhost:%d%s" % (port, p) for p in paths]
        r = subprocess.run(args, capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        out = (r.stdout + r.stderr).decode("latin-1")
        streams = {}
        for line in out.splitlines():
            m = HEADER_RE.match(line.strip())
            if m:
                streams.setdefault(int(m.group(1), 16), []).append((m.group(2), m.group(3)))
        heads = [streams[k] for k in sorted(streams)]
        bodies = {}
        for name in os.listdir(d):
            if not name.startswith("."):
                with open(os.path.join(d, name), "rb") as fp:
                    bodies[name] = fp.read()
        return H3Result(r.returncode, out, heads, bodies)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def log_lines(srv, name="h3.log", want=1, timeout=3.0):
    deadline = time.monotonic() + timeout
    path = srv.tmp / name
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= want or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


def test_small_file(srv):
    before = len(log_lines(srv, want=0, timeout=0))
    r = h3get(srv.port, "/hello.txt")
    assert r.status() == 200, r.out[-3000:]
    assert r.bodies.get("hello.txt") == FILES["html/hello.txt"]
    assert r.field("content-length") == str(len(FILES["html/hello.txt"]))
    assert r.field("content-type") == "text/plain"
    assert r.field("server", 0).startswith("scalws")
    assert r.field("last-modified") == "Thu, 02 Jan 2020 03:04:05 GMT"
    # Date: now, as over TCP
    date = r.field("date")
    assert date and re.match(r"^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$",
                             date)
    assert abs(time.mktime(time.strptime(date, "%a, %d %b %Y %H:%M:%S GMT"))
               - time.mktime(time.gmtime())) < 60
    lines = log_lines(srv, want=before + 1)
    assert lines[before] == "HTTP/3.0 [h3] GET /hello.txt HTTP/3.0 200 %d" % len(
        FILES["html/hello.txt"])


def test_big_file(srv):
    r = h3get(srv.port, "/big.bin", timeout=30)
    assert r.status() == 200, r.out[-3000:]
    assert r.field("content-length") == str(len(BIG))
    got = r.bodies.get("big.bin", b"")
    assert len(got) == len(BIG)
    assert hashlib.sha256(got).digest() == hashlib.sha256(BIG).digest()


def test_not_found_and_return(srv):
    r = h3get(srv.port, "/nothing.txt")
    assert r.status() == 404
    assert b"404 Not Found" in r.bodies.get("nothing.txt", b"")
    r = h3get(srv.port, "/gone")
    assert r.status() == 410


def test_head(srv):
    r = h3get(srv.port, "/big.bin", method="HEAD")
    assert r.status() == 200, r.out[-3000:]
    assert r.field("content-length") == str(len(BIG))
    assert r.bodies.get("big.bin", b"") == b""


def test_respond(srv):
    r = h3get(srv.port, "/respond")
    assert r.status() == 200
    assert r.bodies.get("respond") == b"Hello, world!"


def test_several_requests_one_connection(srv):
    paths = ["/a.txt", "/b.txt", "/c.txt", "/hello.txt", "/big.bin", "/respond"]
    r = h3get(srv.port, *paths, timeout=30)
    assert r.rc == 0, r.out[-3000:]
    assert sorted(x.status() for x in [H3Result(0, "", [hd], {}) for hd in r.heads]) \
        == [200] * len(paths)
    assert r.bodies["a.txt"] == FILES["html/a.txt"]
    assert r.bodies["b.txt"] == FILES["html/b.txt"]
    assert r.bodies["c.txt"] == FILES["html/c.txt"]
    assert r.bodies["big.bin"] == BIG
    assert r.bodies["respond"] == b"Hello, world!"
    # one connection: one handshake for all of them
    assert r.out.count("QUIC handshake has completed") == 1


def test_proxy_post_body(srv, origin_mod):
    body = os.urandom(150000)
    r = h3get(srv.port, "/proxy/echo", method="POST", data=body, timeout=30)
    assert r.status() == 200, r.out[-3000:]
    assert r.field("x-origin") == "h3origin"
    echo = json.loads(r.bodies["echo"])
    assert echo["method"] == "POST"
    assert echo["version"] == "HTTP/1.0" or echo["version"].startswith("HTTP/1.")
    assert echo["body"].encode("latin-1") == body


def test_proxy_streamed_body(srv, origin_mod):
    """proxy_request_buffering off: the body is pulled as it comes, its
    flow control given back as the proxy takes it."""
    body = os.urandom(700000)
    r = h3get(srv.port, "/stream/echo", method="POST", data=body, timeout=30)
    assert r.status() == 200, r.out[-3000:]
    echo = json.loads(r.bodies["echo"])
    assert echo["body"].encode("latin-1") == body


def test_body_too_large(srv):
    r = h3get(srv.port, "/small/echo", method="POST", data=b"x" * 5000)
    assert r.status() == 413, r.out[-3000:]
    # the connection serves on
    r = h3get(srv.port, "/hello.txt")
    assert r.status() == 200


def test_variables(srv):
    r = h3get(srv.port, "/vars")
    assert r.bodies.get("vars") == b"HTTP/3.0 h3 https on %d" % srv.port


def test_limit_rate(srv):
    start = time.monotonic()
    r = h3get(srv.port, "/limited", timeout=30)
    took = time.monotonic() - start
    assert r.status() == 200
    assert r.bodies.get("limited") == FILES["html/c.txt"]
    # 200000 bytes at 100k/s, the first second's worth at once: 0.95 s
    assert took >= 0.8


def test_alt_svc_over_tcp(srv):
    r = h.curl("https://localhost:%d/hello.txt" % srv.port, insecure=True)
    assert r.status == 200
    assert r.header("Alt-Svc") == 'h3=":%d"; ma=86400' % srv.port
    r = h.curl("https://localhost:%d/respond" % srv.port, insecure=True, http2=False)
    assert r.header("Alt-Svc") == 'h3=":%d"; ma=86400' % srv.port
    # not over HTTP/3 itself
    r3 = h3get(srv.port, "/hello.txt")
    assert r3.field("alt-svc") is None


def test_alt_svc_add_header_and_no_quic(sws, pki):
    s = t.launch(sws, pki, ports=2, server="""
        listen 127.0.0.1:@PORT@ quic;
        location /own { add_header Alt-Svc 'h3=":4433"'; return 200 own; }
    """, servers="""
    server {
        listen 127.0.0.1:@PORT2@;
        location / { return 200 plain; }
    }""")
    r = h.curl("https://localhost:%d/own" % s.port, insecure=True)
    assert r.headers_all("Alt-Svc") == ['h3=":4433"']
    r = h.curl("http://127.0.0.1:%d/" % s.ports[1])
    assert r.body == b"plain"
    assert r.header("Alt-Svc") is None


def _initial_from_client(port):
    """A real client Initial (gtlsclient's first datagram), caught on a
    UDP socket of ours."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    u.settimeout(5)
    p = subprocess.Popen([GTLS, "-q", "--timeout=1s", "127.0.0.1", str(u.getsockname()[1]),
                          "https://localhost/"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        data, _ = u.recvfrom(65536)
    finally:
        p.kill()
        p.wait()
        u.close()
    return data


def test_garbage_and_truncated_datagrams(srv):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.settimeout(0.5)
    dest = ("127.0.0.1", srv.port)
    try:
        initial = _initial_from_client(srv.port)
        assert len(initial) >= 1200
        # garbage: nothing back.  (Random bytes with the long-header bit
        # and 1200 bytes or more are a packet of an unknown version, which
        # rightly gets a version negotiation: so the long garbage here is a
        # short header for an ID that is not of our layout.)
        for g in (b"", b"\x00", b"hello world", b"\x40\x00" + os.urandom(1498),
                  b"\x00" + os.urandom(1499), b"\xc0" + os.urandom(40),
                  initial[:100], initial[:1199]):
            u.sendto(g, dest)
        with pytest.raises(socket.timeout):
            u.recvfrom(65536)
        # a short-header packet for an unknown ID of our layout: a
        # stateless reset, shorter than what triggered it
        pkt = b"\x40" + b"\x5c\x00\x00" + os.urandom(13) + os.urandom(60)
        u.sendto(pkt, dest)
        reset, _ = u.recvfrom(65536)
        assert 21 < len(reset) < len(pkt)
        assert reset[0] & 0xc0 == 0x40
        # the same ID gets the same token (the last 16 bytes)
        u.sendto(pkt, dest)
        again, _ = u.recvfrom(65536)
        assert again[-16:] == reset[-16:]
        # an unknown version: version negotiation, listing QUIC v1
        vn = bytearray(initial)
        vn[1:5] = b"\x1a\x2a\x3a\x4a"
        u.sendto(bytes(vn), dest)
        answer, _ = u.recvfrom(65536)
        assert answer[1:5] == b"\x00\x00\x00\x00"
        assert b"\x00\x00\x00\x01" in answer[5:]
    finally:
        u.close()
    r = h3get(srv.port, "/hello.txt")
    assert r.status() == 200
    assert srv.alive()


def test_quic_retry_and_gso(sws, pki):
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        quic_retry on;
        quic_gso on;
    """)
    r = h3get(s.port, "/hello.txt", "/big.bin", timeout=30)
    assert r.status() == 200, r.out[-3000:]
    assert r.bodies.get("hello.txt") == FILES["html/hello.txt"]
    assert r.bodies.get("big.bin") == BIG
    # the client went through a Retry first
    assert re.search(r"type=Retry", r.out), r.out[-3000:]


def test_http3_off(sws, pki):
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        http3 off;
    """)
    r = h3get(s.port, "/hello.txt", timeout=15)
    assert r.status() is None
    r = h.curl("https://localhost:%d/hello.txt" % s.port, insecure=True)
    assert r.header("Alt-Svc") is None


def test_config_errors(tmp_path, pki):
    crt, key = pki.chain("localhost", "ec")
    cases = [
        ("listen 127.0.0.1:@PORT@ quic ssl;", '"quic" cannot go with "ssl"'),
        ("listen 127.0.0.1:@PORT@ quic http2;", '"quic" cannot go with "http2"'),
        ("listen unix:@TMP@/q.sock quic;", '"quic" needs an IP address'),
        ("http3_max_concurrent_streams 0;", "http3_max_concurrent_streams must be"),
        ("http3_stream_buffer_size 1k;", "http3_stream_buffer_size must be"),
    ]
    for i, (directive, message) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        conf = t.TLS_TEMPLATE.replace("@SERVER@", "        %s\n@SERVER@" % directive)
        rc, out, _ = h.start_expect_failure(d, conf=conf, cert=crt, key=key, listen="")
        assert rc not in (None, 0), directive
        assert message in out, (directive, out[-2000:])
    # quic without a certificate
    d = tmp_path / "nocert"
    d.mkdir()
    rc, out, _ = h.start_expect_failure(d, server="        listen 127.0.0.1:@PORT@ quic;\n")
    assert rc not in (None, 0)
    assert 'no "ssl_certificate" is defined' in out


def test_graceful_stop_finishes_transfers(sws, pki):
    """QUIT while a response is on its way: the worker sends GOAWAY, the
    response completes, then the worker (and the master) exit."""
    import signal
    import threading
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        location = /limited { alias @TMP@/html/c.txt; limit_rate 100k; }
    """)
    result = {}

    def fetch():
        start = time.monotonic()
        result["r"] = h3get(s.port, "/limited", timeout=30)
        result["took"] = time.monotonic() - start

    th = threading.Thread(target=fetch)
    th.start()
    time.sleep(0.4)                 # the transfer has begun (about 1 s long)
    s.signal(signal.SIGQUIT)
    th.join(30)
    r = result["r"]
    assert r.status() == 200, r.out[-3000:]
    assert r.bodies.get("limited") == FILES["html/c.txt"]
    assert result["took"] >= 0.8        # paced to its end, not cut at the QUIT
    assert s.wait_exit(10) is not None
    assert "worker process" in s.error_log() and "exited with code 0" in s.error_log()


def udp_buffers(port):
    """(rb, tb) of the UDP sockets bound to 127.0.0.1:port, as ss reports
    them (the kernel doubles what was asked)."""
    out = subprocess.run(["ss", "-u", "-a", "-n", "-m"], capture_output=True,
                         text=True, timeout=10).stdout
    found, lines = [], out.splitlines()
    for i, line in enumerate(lines):
        if "127.0.0.1:%d " % port in line and i + 1 < len(lines):
            m = re.search(r"rb(\d+),t\d+,tb(\d+)", lines[i + 1])
            if m:
                found.append((int(m.group(1)), int(m.group(2))))
    return found


@pytest.mark.skipif(shutil.which("ss") is None, reason="ss (iproute2) is missing")
def test_quic_socket_buffers(sws, pki):
    # the datagrams of every connection arrive on one socket: far more
    # than the system's 208 KiB by default (drops there stalled 1 MiB
    # downloads for seconds), and listen's rcvbuf=/sndbuf= when given
    s = t.launch(sws, pki, files=FILES, server="        listen 127.0.0.1:@PORT@ quic;\n")
    bufs = udp_buffers(s.port)
    assert bufs and all(rb >= 2 * 1024 * 1024 and tb >= 2 * 1024 * 1024 for rb, tb in bufs), bufs
    s2 = t.launch(sws, pki, files=FILES,
                  server="        listen 127.0.0.1:@PORT@ quic rcvbuf=1m sndbuf=512k;\n")
    bufs = udp_buffers(s2.port)
    assert bufs and all(rb == 2 * 1024 * 1024 and tb == 1024 * 1024 for rb, tb in bufs), bufs
    assert h3get(s2.port, "/hello.txt").status() == 200
