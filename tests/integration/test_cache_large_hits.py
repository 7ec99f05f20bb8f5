"""Large hits (modules/cache): a memory copy's body is sent without being
copied (buffers into the shared entry, which the request pins until its last
byte is written or the connection goes), over HTTP/1 and over HTTP/2 (whose DATA frames are copied from it as the windows open). A purge
or an eviction while a slow client reads must never change what it gets;
the memory freed then is refilled with other bytes at once. The system
calls of a hit are counted against nginx's when nginx is installed.

Sending a large memory hit from its file with sendfile() instead was tried
and measured (docs/cache.md): on loopback it cost the worker more CPU per
100 KiB hit than writing from the zone, so hits write from memory.
"""
import os
import shutil
import socket
import subprocess
import time

import pytest

import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, entry_files, get, source, start, statuses  # noqa: F401

MB = 1024 * 1024
# The slow responses are larger than what the kernel takes from a writer at
# once (on loopback a socket's send buffer grows to megabytes however slowly
# the peer reads): the server is still writing when the entry goes.
BIG = 8 * MB


def numbered(n, seed=0):
    """n bytes where every 8 are their own offset: a shifted, mixed or
    reused piece shows."""
    return b"".join(b"%c%06x\n" % (97 + seed, i & 0xFFFFFF) for i in range(n // 8 + 1))[:n]


def cc(v):
    return [("Cache-Control", v), ("Content-Type", "application/octet-stream")]


def other(n, seed):
    """n bytes unlike numbered(n): what a refill puts where the old copy was."""
    return numbered(n, seed)


def purge(srv, path):
    return h.curl(srv.url(path), method="PURGE")


class SlowClient:
    """GET path on a socket with a small receive buffer, read a little at
    a time when asked: the server has to wait for room to write more."""

    def __init__(self, srv, path, tag):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.s.settimeout(20)
        self.s.connect(("127.0.0.1", srv.port))
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nX-Tag: %s\r\n"
                        "Connection: close\r\n\r\n" % (path, tag)).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        self.head, _, self.body = self.buf.partition(b"\r\n\r\n")

    def _more(self):
        d = self.s.recv(4096)
        if not d:
            raise EOFError("closed")
        self.buf += d
        return d

    def read(self, n):
        while len(self.body) < n:
            d = self.s.recv(4096)
            if not d:
                break
            self.body += d
        return self.body

    def rest(self):
        while True:
            d = self.s.recv(65536)
            if not d:
                break
            self.body += d
        self.s.close()
        return self.body


def logged(srv, tag):
    return any(s[-1] == tag for s in statuses(srv))


def big_server(sws, o, extra=""):
    # sendfile on: what a connection that could send files does with a hit
    return start(sws, o, "mem_size=40m mem_max_object=10m " + extra,
                 loc="proxy_cache_purge 127.0.0.1;", http="sendfile on;")


def refill_over(srv, o, n, paths):
    """Fill other entries whose bytes differ: memory freed too early would
    be taken by them."""
    for i, p in enumerate(paths):
        o.set(p, body=other(n, i + 1), headers=cc("max-age=600"))
        r, st = get(srv, p)
        assert st == "MISS" and r.body == other(n, i + 1)


def test_a_purge_while_a_slow_client_reads_a_memory_hit(sws, corigin):
    o = corigin()
    body = numbered(BIG)
    o.set("/c/big", body=body, headers=cc("max-age=600") + [("Accept-Ranges", "bytes")])
    srv = big_server(sws, o)
    assert get(srv, "/c/big")[1] == "MISS"
    r, st = get(srv, "/c/big")
    assert st == "HIT" and source(srv) == "memory" and r.body == body
    c = SlowClient(srv, "/c/big", "slow")
    c.read(64 * 1024)
    assert purge(srv, "/c/big").body == b"purged 1\n"
    assert entry_files(srv) == []
    refill_over(srv, o, BIG, ["/c/n1", "/c/n2", "/c/n3"])
    # the slow response is still being written: the test is not blind
    assert not logged(srv, "slow") and len(c.body) < BIG
    got = c.rest()
    assert b" 200 " in c.head.split(b"\r\n")[0] and b"Age: " in c.head
    assert c.head.lower().count(b"accept-ranges:") == 1            # not twice
    assert len(got) == BIG and got == body
    assert h.wait_for(lambda: logged(srv, "slow"), timeout=5)
    [line] = [s for s in statuses(srv) if s[-1] == "slow"]
    assert line[3] == "HIT" and line[4] == "memory"
    assert get(srv, "/c/big")[1] == "MISS"


def test_an_eviction_while_a_slow_client_reads_a_memory_hit(sws, corigin):
    o = corigin()
    body = numbered(BIG)
    o.set("/c/ev", body=body, headers=cc("max-age=600"))
    # room for one memory copy beside a fill's, and for two files: the
    # manager drops the copy (mem_size), then the file (max_size), of the
    # least recently used
    srv = start(sws, o, "mem_size=20m mem_max_object=10m max_size=20m",
                http="sendfile on;")
    get(srv, "/c/ev")
    [f] = entry_files(srv)
    r, st = get(srv, "/c/ev")
    assert st == "HIT" and source(srv) == "memory"
    c = SlowClient(srv, "/c/ev", "slow")
    c.read(64 * 1024)
    refill_over(srv, o, BIG, ["/c/e1", "/c/e2", "/c/e3"])
    assert h.wait_for(lambda: not os.path.exists(f), timeout=10)
    assert "manager removed" in srv.error_log()
    assert not logged(srv, "slow") and len(c.body) < BIG
    got = c.rest()
    assert len(got) == BIG and got == body
    assert h.wait_for(lambda: logged(srv, "slow"), timeout=5)
    # it was evicted indeed: the next request for it is a miss
    assert get(srv, "/c/ev")[1] == "MISS"


def test_http2_a_purge_while_a_slow_stream_reads_a_memory_hit(sws, corigin):
    if shutil.which("nghttp") is None:
        pytest.skip("needs nghttp")
    o = corigin()
    body = numbered(MB)
    o.set("/c/h2big", body=body, headers=cc("max-age=600"))
    srv = start(sws, o, "mem_size=8m mem_max_object=2m", loc="proxy_cache_purge 127.0.0.1;",
                server="http2 on;")
    get(srv, "/c/h2big")
    r, st = get(srv, "/c/h2big", prior_knowledge=True)
    assert st == "HIT" and source(srv) == "memory" and r.http_version == 3
    # nghttp writes DATA to stdout as it comes: a pipe nobody reads stops
    # it, and with it its WINDOW_UPDATEs (windows of 2^16-1)
    p = subprocess.Popen(["nghttp", "-w", "16", "-W", "16", "-H", "x-tag: slowh2",
                          srv.url("/c/h2big")], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    try:
        first = p.stdout.read(64 * 1024)
        assert purge(srv, "/c/h2big").body == b"purged 1\n"
        refill_over(srv, o, MB, ["/c/m1", "/c/m2", "/c/m3"])
        assert not logged(srv, "slowh2")
        got = first + p.stdout.read()
        assert p.wait(20) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert len(got) == MB and got == body
    assert h.wait_for(lambda: logged(srv, "slowh2"), timeout=5)
    [line] = [s for s in statuses(srv) if s[-1] == "slowh2"]
    assert line[3] == "HIT" and line[4] == "memory"


def test_a_large_memory_hit_on_a_replaced_file_sends_its_own_body(sws, corigin):
    # the copy held is the entry; another file put under its name (as a
    # refill renames one in) is not what a memory hit sends
    o = corigin()
    body = numbered(200000)
    o.set("/c/rf", body=body, headers=cc("max-age=600"))
    srv = big_server(sws, o)
    get(srv, "/c/rf")
    [f] = entry_files(srv)
    old = open(f, "rb").read()
    # a file of the same size under the name, as a refill makes it
    tmp = f + ".x"
    with open(tmp, "wb") as w:
        w.write(old[:len(old) - len(body)] + other(len(body), 9))
    os.rename(tmp, f)
    r, st = get(srv, "/c/rf")
    assert st == "HIT" and source(srv) == "memory" and r.body == body


def _workers(srv):
    # a helper that has just exited (the cache loader) may not be reaped
    # yet: a zombie has an empty command line
    def cmdline(p):
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                return f.read()
        except OSError:
            return b""
    return [p for p in srv.children() if cmdline(p) and b"helper" not in cmdline(p)]


def _worker(srv):
    [w] = _workers(srv)
    return w


def _keepalive_hits(port, path, n):
    s = socket.socket()
    # room for a whole response: the server's writes are not cut short
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * MB)
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    req = ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()
    buf = b""
    bodies = []
    for _ in range(n):
        s.sendall(req)
        while b"\r\n\r\n" not in buf:
            buf += s.recv(1 << 20)
        head, _, buf = buf.partition(b"\r\n\r\n")
        cl = [int(v.split(b":")[1]) for v in head.split(b"\r\n")
              if v.lower().startswith(b"content-length:")][0]
        while len(buf) < cl:
            buf += s.recv(1 << 20)
        bodies.append(buf[:cl])
        buf = buf[cl:]
    s.close()
    return bodies


# The event loop's wait: epoll's, or io_uring's (events { use io_uring; }).
WAITS = ("epoll_pwait", "epoll_wait", "io_uring_enter")


def _count_calls(pid, port, path, n, tmp):
    """System calls of pid while n keep-alive GETs of path are answered:
    {name: count}."""
    out = tmp / ("strace-%d.txt" % pid)
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-o", str(out), "-p", str(pid)],
                              stderr=subprocess.DEVNULL)
    try:
        # attached once it reports the process's waits
        def attached():
            _keepalive_hits(port, path, 1)
            return out.exists() and any(w in out.read_text() for w in WAITS)
        assert h.wait_for(attached, timeout=10)
        time.sleep(0.2)
        mark = len(out.read_text().splitlines())
        bodies = _keepalive_hits(port, path, n)
        time.sleep(0.2)
    finally:
        tracer.terminate()
        tracer.wait(10)
    counts = {}
    for line in out.read_text().splitlines()[mark:]:
        name = line.split("(", 1)[0].split()[-1] if "(" in line else None
        if name and not name.startswith("<") and "resumed" not in line:
            counts[name] = counts.get(name, 0) + 1
    return counts, bodies


def _per_hit(counts, n):
    """Calls per hit on the server's path: a write the kernel cut short and
    its retry, and the waits between, are the socket's doing, not the
    path's: writes count once per hit at most, waits once per hit."""
    total = 0
    for k, v in counts.items():
        if k in ("sendfile", "sendto", "sendmsg", "writev", "write") or k.startswith("epoll_") \
                or k == "io_uring_enter":
            v = min(v, n)
        total += v
    return total / n


NGINX_CONF = """
daemon off; master_process on; worker_processes 1;
error_log %(tmp)s/error.log warn; pid %(tmp)s/nginx.pid;
events { worker_connections 64; }
http { access_log off; sendfile on;
 client_body_temp_path %(tmp)s/cb; proxy_temp_path %(tmp)s/p; fastcgi_temp_path %(tmp)s/f;
 uwsgi_temp_path %(tmp)s/u; scgi_temp_path %(tmp)s/s;
 proxy_cache_path %(tmp)s/cache keys_zone=n:1m;
 server { listen 127.0.0.1:%(port)d;
  location /c/ { proxy_pass http://%(origin)s; proxy_cache n; } } }
"""


def nginx_hit_calls(nginx, o, path, body, n, tmp_path):
    """nginx's system calls ({name: count}) while n keep-alive hits of path
    (cached from o, answering body) are answered, as _count_calls counts
    ours: nginx in front of o with its default file cache (NGINX_CONF)."""
    nd = tmp_path / "nginx"
    nd.mkdir()
    port = h.free_port()
    (nd / "nginx.conf").write_text(NGINX_CONF % dict(tmp=nd, port=port, origin=o.addr))
    p = subprocess.Popen([nginx, "-p", str(nd), "-c", str(nd / "nginx.conf")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert h.wait_for(lambda: (nd / "nginx.pid").exists() and h.port_open(port),
                          timeout=10)
        _keepalive_hits(port, path, 2)                 # the fill, then a hit
        master = int((nd / "nginx.pid").read_text())
        kids = subprocess.run(["pgrep", "-P", str(master)], capture_output=True,
                              text=True).stdout.split()
        workers = [int(k) for k in kids
                   if b"worker" in open("/proc/%s/cmdline" % k, "rb").read()]
        theirs, nbodies = _count_calls(workers[0], port, path, n, nd)
        assert nbodies == [body] * n
    finally:
        p.terminate()
        p.wait(10)
    return theirs


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_large_memory_hit_makes_no_more_system_calls_than_nginx(sws, corigin, tmp_path):
    o = corigin()
    body = numbered(100 * 1024)
    o.set("/c/100k", body=body, headers=cc("max-age=600"))
    # as bench/'s cache-hit-100k: no access log (nginx's has none either)
    srv = sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m mem_size=8m mem_max_object=1m;
        sendfile on;
    """, server="""
        location /c/ { proxy_pass http://%s; proxy_cache c; access_log off; }
    """ % o.addr)
    _keepalive_hits(srv.port, "/c/100k", 2)
    n = 20
    ours, bodies = _count_calls(_worker(srv), srv.port, "/c/100k", n, srv.tmp)
    assert bodies == [body] * n and o.count("/c/100k") == 1
    # head and body in one write from the zone: nothing opened or read
    writes = sum(ours.get(k, 0) for k in ("sendto", "sendmsg", "writev", "write"))
    assert writes >= n and "sendfile" not in ours, ours
    assert not any(k in ours for k in ("open", "openat", "read", "pread64", "preadv",
                                       "newfstatat", "fstat")), ours
    assert ours.get("close", 0) <= 2, ours        # the connections, not files
    total = _per_hit(ours, n)
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                      else None)
    if nginx is None:
        assert total <= 4, ours             # recv, the write, a wait (nginx 1.22: 8)
        return
    theirs = nginx_hit_calls(nginx, o, "/c/100k", body, n, tmp_path)
    assert total <= _per_hit(theirs, n), (ours, theirs)
