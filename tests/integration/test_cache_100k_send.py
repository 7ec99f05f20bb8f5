"""The 100 KiB hit's send path (issue 26, "The 100 KiB hit"): from a memory
copy (one write of head and body from the zone) and from the entry's file
(the head, then one sendfile()), with sendfile on and off. A client that
reads slowly gets every byte, the origin's, while the worker waits for room
instead of spinning and other hits go on (no zone lock is held meanwhile);
HEAD, ranges, a conditional 304 and a Vary'd 100 KiB entry answer as from
any entry. A file hit's head is held back for the body (MSG_MORE) only when
sendfile()'s first chunk fills a segment with it (src/event/sws_unix_io.c,
docs/benchmarks/2026-12-05-cache-100k-syscalls.md).
"""
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import swsharness as h
from cacheorigin import LOG_FORMAT, corigin, get, source  # noqa: F401
from test_cache_large_hits import _keepalive_hits, _worker, cc, numbered

KB = 1024
SIZE = 100 * KB

# Where a 100 KiB hit comes from, and the path parameters that make it so:
# a memory copy (as bench/'s cache-hit-100k), the file (the default
# mem_max_object, 64k, leaves a 100 KiB entry in its file), the file opened
# per hit (open_files=0).
SOURCES = {
    "memory": ("mem_size=8m mem_max_object=1m", "memory"),
    "file": ("", "file"),
    "file-unkept": ("open_files=0", "file"),
}


def start(sws, o, params, sendfile="on"):
    """The cache in front of o at /c/; the second port's connections have a
    send buffer of 8k (on loopback a socket's grows past 100 KiB at once,
    however slowly the peer reads): there a 100 KiB write is cut short."""
    return sws(ports=2, http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m %s;
        %s
        sendfile %s;
    """ % (params, LOG_FORMAT, sendfile), server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache c;
            access_log @TMP@/cache.log cachelog;
        }
        location /static/ { root @TMP@/html; }
    """ % (o.addr,), servers="""
    server {
        listen 127.0.0.1:@PORT2@ sndbuf=8k;
        location /c/ { proxy_pass http://%s; proxy_cache c; access_log off; }
    }
    """ % (o.addr,))


def cached(sws, corigin, where, sendfile="on", headers=(), params=None):
    """A server with /c/100k (numbered bytes) cached, its hits from where
    (params: the cache's, instead of where's)."""
    o = corigin()
    body = numbered(SIZE)
    o.set("/c/100k", body=body, headers=cc("max-age=600") + [("ETag", '"v100k"')]
          + list(headers))
    src = SOURCES[where][1]
    srv = start(sws, o, SOURCES[where][0] if params is None else params, sendfile)
    assert get(srv, "/c/100k")[1] == "MISS"
    r, st = get(srv, "/c/100k")
    assert st == "HIT" and source(srv) == src and r.body == body
    return o, srv, body


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


class Tracer:
    """strace of the worker's socket writes (with their flags) while it runs."""

    CALLS = "sendto,sendmsg,sendfile,writev,write"

    def __init__(self, srv, tmp):
        self.out = tmp / "writes.txt"
        self.p = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=" + self.CALLS,
                                   "-o", str(self.out), "-p", str(_worker(srv))],
                                  stderr=subprocess.DEVNULL)

        def attached():
            _keepalive_hits(srv.port, "/c/100k", 1)
            return self.out.exists() and "send" in self.out.read_text()
        assert h.wait_for(attached, timeout=10)
        time.sleep(0.1)
        self.mark = len(self.out.read_text().splitlines())

    def lines(self):
        time.sleep(0.1)
        self.p.terminate()
        self.p.wait(10)
        self.lines_seen = self.out.read_text().splitlines()[self.mark:]
        return self.lines_seen


def slow_get(port, path, rcvbuf=4096, chunk=4096, pause=0.01, during=None):
    """GET path on a connection that reads chunk bytes every pause seconds
    (its receive buffer small: the server's writes are cut short). during()
    is called once a quarter of the body has come. Returns (head, body)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(20)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
               % path).encode())
    buf = b""
    called = False
    while True:
        d = s.recv(chunk)
        if not d:
            break
        buf += d
        if during and not called and len(buf) > SIZE // 4:
            called = True
            during()
        time.sleep(pause)
    s.close()
    head, _, body = buf.partition(b"\r\n\r\n")
    return head, body


@pytest.mark.parametrize("sendfile", ["on", "off"])
@pytest.mark.parametrize("where", sorted(SOURCES))
def test_a_slow_reader_gets_every_byte_while_other_hits_go_on(sws, corigin, where, sendfile):
    o, srv, body = cached(sws, corigin, where, sendfile)
    worker = _worker(srv)
    others = []

    def another_hit():
        # while the slow response is half written: the entry is not locked
        t = time.monotonic()
        r, st = get(srv, "/c/100k")
        others.append((r.body == body, st, time.monotonic() - t))

    cpu0 = cpu_seconds(worker)
    t0 = time.monotonic()
    head, got = slow_get(srv.ports[1], "/c/100k", during=another_hit)
    took = time.monotonic() - t0
    cpu = cpu_seconds(worker) - cpu0
    assert head.startswith(b"HTTP/1.1 200 ") and b"\r\nAge: " in head
    assert len(got) == SIZE and got == body
    assert others and others[0][:2] == (True, "HIT") and others[0][2] < 2.0, others
    # the read took a while (the test is not blind) and the worker waited
    # for room meanwhile instead of trying again and again
    assert took > 0.2
    assert cpu < 0.25 * took, (cpu, took)
    assert o.count("/c/100k") == 1


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
@pytest.mark.parametrize("where", ["memory", "file"])
def test_a_write_cut_short_is_resumed_where_it_stopped(sws, corigin, where, tmp_path):
    o, srv, body = cached(sws, corigin, where)
    t = Tracer(srv, tmp_path)
    head, got = slow_get(srv.ports[1], "/c/100k", pause=0.005)
    lines = t.lines()
    assert len(got) == SIZE and got == body
    # the response took several writes (cut short by the small window),
    # each of what was left, and not one per byte or per wake-up spun
    writes = [ln for ln in lines if re.search(r"\b(sendto|sendmsg|sendfile|writev)\(", ln)]
    done = [ln for ln in writes if re.search(r"= \d+$", ln)]
    again = [ln for ln in writes if "EAGAIN" in ln]
    assert len(done) >= 3, lines
    assert len(done) + len(again) <= 200, lines
    assert len(again) <= len(done) + 1, lines


@pytest.mark.parametrize("where", sorted(SOURCES))
def test_head_ranges_and_a_304_from_a_100k_entry(sws, corigin, where):
    o, srv, body = cached(sws, corigin, where)
    r, st = get(srv, "/c/100k", method="HEAD")
    assert st == "HIT" and r.status == 200 and r.body == b""
    assert r.header("Content-Length") == str(SIZE)
    for spec, lo, hi in [("0-0", 0, 0), ("65000-70000", 65000, 70000),
                         ("-100", SIZE - 100, SIZE - 1), ("102000-", 102000, SIZE - 1),
                         ("4000-102399", 4000, SIZE - 1)]:
        r, st = get(srv, "/c/100k", headers=["Range: bytes=" + spec])
        assert st == "HIT" and r.status == 206, spec
        assert r.header("Content-Range") == "bytes %d-%d/%d" % (lo, hi, SIZE), spec
        assert r.body == body[lo:hi + 1], spec
    r, st = get(srv, "/c/100k", headers=["Range: bytes=0-9,70000-70009"])
    assert st == "HIT" and r.status == 206
    assert r.header("Content-Type").startswith("multipart/byteranges")
    assert body[0:10] in r.body and body[70000:70010] in r.body
    r, st = get(srv, "/c/100k", headers=["Range: bytes=200000-"])
    assert st == "HIT" and r.status == 416
    r, st = get(srv, "/c/100k", headers=['If-None-Match: "v100k"'])
    assert st == "HIT" and r.status == 304 and r.body == b""
    assert o.count("/c/100k") == 1


@pytest.mark.parametrize("where", ["memory", "file"])
def test_a_varied_100k_entry_sends_each_variant_its_own_bytes(sws, corigin, where):
    o = corigin()
    params, src = SOURCES[where]
    srv = start(sws, o, params)
    bodies = {}
    for lang in ("en", "fr"):
        bodies[lang] = numbered(SIZE, seed=len(bodies))
        o.set("/c/v", body=bodies[lang], headers=cc("max-age=600")
              + [("Vary", "Accept-Language")])
        assert get(srv, "/c/v", headers=["Accept-Language: " + lang])[1] == "MISS"
    for lang in ("fr", "en", "fr"):
        r, st = get(srv, "/c/v", headers=["Accept-Language: " + lang])
        assert st == "HIT" and source(srv) == src and r.body == bodies[lang]


def heads_and_sendfiles(lines):
    """[(head bytes, MSG_MORE?, the sendfile's offset and count after it)] of
    the responses whose body went by sendfile()."""
    out = []
    head = None
    for ln in lines:
        m = re.search(r'\bsendto\(\d+, "HTTP/1\.1 200 .*, (MSG_[A-Z_|]+), NULL, 0\) = (\d+)', ln)
        if m:
            head = (int(m.group(2)), "MSG_MORE" in m.group(1))
            continue
        m = re.search(r"\bsendfile\(\d+, \d+, \[(\d+)\] => \[\d+\], (\d+)\)", ln)
        if m and head:
            out.append(head + (int(m.group(1)), int(m.group(2))))
            head = None
    return out


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_a_file_hits_head_waits_for_the_body_only_when_they_fill_a_segment(sws, corigin,
                                                                            tmp_path):
    # sendfile() queues 16 pages at a time, less the part of the first page
    # before the data: a head held back (MSG_MORE) leaves with that chunk,
    # and when they make less than 64 KiB it waits for the next one. A
    # cache entry's body starts after its header, inside a page (a long
    # key makes the header longer than the head sent): its head goes alone;
    # a static file's body starts on a page, and a 20 KiB body is one
    # chunk: their heads wait for them.
    o = corigin()
    body = numbered(SIZE)
    o.set("/c/100k", body=body, headers=cc("max-age=600"))
    o.set("/c/20k", body=numbered(20 * KB), headers=cc("max-age=600"))
    srv = sws(http="""
        proxy_cache_path @TMP@/cache keys_zone=c:1m mem_size=0;
        %s
        sendfile on;
    """ % LOG_FORMAT, server="""
        location /c/ {
            proxy_pass http://%s;
            proxy_cache c;
            proxy_cache_key "$scheme$request_uri/%s";
            access_log @TMP@/cache.log cachelog;
        }
        location /static/ { root @TMP@/html; }
    """ % (o.addr, "k" * 600), files={"html/static/100k.bin": body})
    for path in ("/c/100k", "/c/20k"):
        assert get(srv, path)[1] == "MISS"
        assert get(srv, path)[1] == "HIT" and source(srv) == "file"
    t = Tracer(srv, tmp_path)
    assert _keepalive_hits(srv.port, "/c/100k", 3) == [body] * 3
    assert _keepalive_hits(srv.port, "/static/100k.bin", 3) == [body] * 3
    assert _keepalive_hits(srv.port, "/c/20k", 3) == [numbered(20 * KB)] * 3
    sent = heads_and_sendfiles(t.lines())
    assert len(sent) == 9, "\n".join(t.lines_seen)
    for head, more, off, count in sent:
        chunk = 64 * KB - off % 4096
        assert more == (count <= chunk or head + chunk >= 64 * KB), sent
    assert [more for _, more, _, _ in sent] == [False] * 3 + [True] * 6, sent
