#!/usr/bin/python3
"""What an idle keep-alive connection costs a server, measured from outside.

    bench/idle [--connections 10000] [--servers scalwsd,nginx]
               [--protocols http,tls-h1,tls-h2] [--settle 3] [--out FILE]

For each protocol and server (configured as bench/run does, from the same
templates, with one worker pinned to --server-cpu and room for the
connections): start the server, make a few warm-up requests on connections
that are then closed, read the resident set (VmRSS) of all the server's
processes, open --connections keep-alive connections over loopback, send one
request on each (GET /hello.txt) and read its answer, leave them all idle
for --settle seconds, and read the resident set again. The cost of an idle
connection is (RSS after - RSS before) / connections.

Protocols: plain HTTP/1.1 (`http`), HTTP/1.1 over TLS 1.3 (`tls-h1`, ALPN
http/1.1) and HTTP/2 over TLS 1.3 (`tls-h2`, ALPN h2: the preface, SETTINGS,
one HEADERS frame, the SETTINGS ACK). The client is this script (one
thread, non-blocking sockets, at most --parallel connections being set up
at a time) on --client-cpu; its own memory is not counted. RLIMIT_NOFILE is
raised to its hard limit first, and the servers inherit it.

Kernel memory (socket buffers) is not in RSS: what is measured is the
server's own state per connection.
"""

import argparse
import os
import resource
import selectors
import shlex
import shutil
import socket
import ssl
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import measure                                              # noqa: E402
import run as bench                                         # noqa: E402
import scenarios as scenario_table                          # noqa: E402
from procs import Registry, free_port, wait_port            # noqa: E402
from servers import make_servers                            # noqa: E402

PATH = "/hello.txt"
PROTOCOLS = ("http", "tls-h1", "tls-h2")

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def h2_request():
    """The preface, an empty SETTINGS and GET /hello.txt on stream 1, its
    header block in HPACK without Huffman: :method GET (static 2), :scheme
    https (7), then :path and :authority as literals without indexing
    whose names are static entries 4 and 1."""
    block = bytes([0x82, 0x87, 0x04, len(PATH)]) + PATH.encode() + bytes([0x01, 9]) + b"localhost"
    return H2_PREFACE + h2_frame(4, 0, 0) + h2_frame(1, 0x5, 1, block)


class Conn:
    """One client connection: connect, TLS handshake, one request, its answer."""

    def __init__(self, port, proto, ctx):
        self.proto = proto
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setblocking(False)
        self.state = "connect"
        self.sock.connect_ex(("127.0.0.1", port))
        self.ctx = ctx
        self.tls = None
        self.io = self.sock
        self.out = h2_request() if proto == "tls-h2" else (
            b"GET " + PATH.encode() + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
        self.inb = b""
        self.acked = False

    def fileno(self):
        return self.io.fileno()

    def close(self):
        try:
            self.io.close()
        except OSError:
            pass

    def step(self):
        """Advance as far as possible. Returns the events to wait for,
        or None when the answer is complete."""
        if self.state == "connect":
            err = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, os.strerror(err))
            if self.ctx:
                # wrapped once connected: the TLS object is made then
                self.tls = self.io = self.ctx.wrap_socket(self.sock, server_hostname="localhost",
                                                          do_handshake_on_connect=False)
                self.state = "handshake"
            else:
                self.state = "send"
        if self.state == "handshake":
            try:
                self.tls.do_handshake()
            except ssl.SSLWantReadError:
                return selectors.EVENT_READ
            except ssl.SSLWantWriteError:
                return selectors.EVENT_WRITE
            alpn = self.tls.selected_alpn_protocol()
            if alpn != ("h2" if self.proto == "tls-h2" else "http/1.1") and (
                    self.proto == "tls-h2" or alpn is not None):
                raise OSError("ALPN: %r" % alpn)
            self.state = "send"
        while self.out:
            try:
                n = self.io.send(self.out)
            except (BlockingIOError, ssl.SSLWantWriteError):
                return selectors.EVENT_WRITE
            except ssl.SSLWantReadError:
                return selectors.EVENT_READ
            self.out = self.out[n:]
        self.state = "read"
        while True:
            try:
                data = self.io.recv(65536)
            except (BlockingIOError, ssl.SSLWantReadError):
                return selectors.EVENT_READ
            except ssl.SSLWantWriteError:
                return selectors.EVENT_WRITE
            if not data:
                raise OSError("the server closed the connection")
            self.inb += data
            if self.complete():
                self.state = "idle"
                return None

    def complete(self):
        if self.proto != "tls-h2":
            head_end = self.inb.find(b"\r\n\r\n")
            if head_end < 0:
                return False
            head = self.inb[:head_end].decode("latin-1").lower()
            if not head.startswith("http/1.1 200"):
                raise OSError("answer: %r" % head.splitlines()[0])
            length = 0
            for line in head.split("\r\n")[1:]:
                if line.startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            return len(self.inb) >= head_end + 4 + length
        # HTTP/2: frames until one of stream 1 ends it; the server's
        # SETTINGS are acknowledged (a server may wait for that)
        done = False
        while len(self.inb) >= 9:
            length = int.from_bytes(self.inb[:3], "big")
            if len(self.inb) < 9 + length:
                break
            ftype, flags = self.inb[3], self.inb[4]
            stream = int.from_bytes(self.inb[5:9], "big") & 0x7fffffff
            self.inb = self.inb[9 + length:]
            if ftype == 4 and not flags & 1 and not self.acked:
                self.acked = True
                self.tls.sendall(h2_frame(4, 1, 0))     # small: fits the socket
            elif ftype == 7:
                raise OSError("GOAWAY")
            elif stream == 1 and ftype in (0, 1) and flags & 1:
                done = True
        return done and self.acked


def open_idle(port, proto, n, parallel, timeout):
    """n connections, each after one complete request; raises on any error."""
    ctx = None
    if proto != "http":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.set_alpn_protocols(["h2"] if proto == "tls-h2" else ["http/1.1"])
    sel = selectors.DefaultSelector()
    done, busy, started = [], 0, 0
    deadline = time.monotonic() + timeout
    try:
        while len(done) < n:
            while busy < parallel and started < n:
                c = Conn(port, proto, ctx)
                started += 1
                busy += 1
                sel.register(c, selectors.EVENT_WRITE)
            if time.monotonic() > deadline:
                raise TimeoutError("%d of %d connections done in %d s" % (len(done), n, timeout))
            for key, _ in sel.select(timeout=1.0):
                c = key.fileobj
                want = c.step()
                if want is None:
                    sel.unregister(c)
                    done.append(c)
                    busy -= 1
                else:
                    sel.modify(c, want)
        return done
    except BaseException:
        for key in list(sel.get_map().values()):
            key.fileobj.close()
        for c in done:
            c.close()
        raise
    finally:
        sel.close()


def close_all(conns):
    for c in conns:
        c.close()


def rss_kib(r):
    return sum(measure.vm_rss_kib(p) for p in r.tree())


def start_server(reg, server, scenario, ctx, tmp, name, cpu):
    """server set up for scenario as bench/run does it (one worker, pinned
    to cpu), in a directory of its own under tmp, on a free port, and
    listening: (its process, ctx with its port). Its command line goes to
    ctx["commands"]."""
    stmp = tempfile.mkdtemp(prefix="%s-%s-" % (name, server.name), dir=tmp)
    os.chmod(stmp, 0o755)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, scenario, single=False, tmp=stmp)
    argv = ["taskset", "-c", str(cpu)] + server.argv(conf, stmp)
    ctx["commands"].setdefault(server.name, shlex.join(argv).replace(stmp, "$RUN").replace(tmp, "$TMP"))
    r = reg.start(server.name, argv, os.path.join(stmp, "server.log"), server.stop_signal)
    if not wait_port(ctx["port"], r.popen, timeout=15):
        why = r.log_tail().strip().replace("\n", " | ")
        reg.stop(r)
        raise RuntimeError("did not start: " + why)
    return r, ctx


def make_context(tmp, modules_dir, max_connections, tls):
    """What the servers' templates are filled with: a docroot in tmp, room
    for max_connections, the certificate when tls."""
    placeholders = {"UPSTREAM_KEEPALIVE": str(bench.DEFAULT_UPSTREAM_KEEPALIVE),
                    "MAX_CONNECTIONS": str(max_connections)}
    if tls:
        placeholders.update(bench.make_certificate(tmp))
    return {"docroot": bench.make_docroot(tmp), "modules_dir": os.path.abspath(modules_dir),
            "placeholders": placeholders, "commands": {}}


def print_report(text, out):
    """The Markdown table to stdout, and appended to out if given."""
    print(text)
    if out:
        with open(out, "a") as f:
            f.write(text + "\n")


def measure_one(a, reg, server, proto, ctx, tmp):
    """(RSS before, RSS after, processes) for one server and protocol."""
    sc = scenario_table.select(["tls-static-small" if proto != "http" else "static-small"])[0]
    r, ctx = start_server(reg, server, sc, ctx, tmp, "idle-" + proto, a.server_cpu)
    try:
        # warm-up: first-use work (file lookups, TLS session machinery,
        # the allocator's first arenas) is not an idle connection's cost
        close_all(open_idle(ctx["port"], proto, a.warmup, a.parallel, 60))
        time.sleep(a.settle)
        before = rss_kib(r)
        conns = open_idle(ctx["port"], proto, a.connections, a.parallel, a.timeout)
        try:
            time.sleep(a.settle)
            after = rss_kib(r)
            if r.popen.poll() is not None:
                raise RuntimeError("the server exited")
            return before, after, len(r.tree())
        finally:
            close_all(conns)
    finally:
        reg.stop(r)


def parse_args(argv):
    p = argparse.ArgumentParser(description="memory per idle keep-alive connection (bench/README.md)")
    p.add_argument("--connections", type=int, default=10000)
    p.add_argument("--servers", default="scalwsd,nginx")
    p.add_argument("--protocols", default=",".join(PROTOCOLS))
    p.add_argument("--settle", type=float, default=3.0, help="seconds idle before reading RSS")
    p.add_argument("--warmup", type=int, default=16, help="connections made (and closed) first")
    p.add_argument("--parallel", type=int, default=100, help="connections being set up at a time")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--scalwsd", default=os.environ.get("SCALWSD") or os.path.join(bench.SRC, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.environ.get("SCALWS_MODULES") or os.path.join(bench.SRC, "objs", "modules"))
    p.add_argument("--label", default="", help="a name for this scalwsd build in the table")
    p.add_argument("--out", help="also append the Markdown table to this file")
    a = p.parse_args(argv)
    a.protocols = bench.split_list(a.protocols)
    for x in a.protocols:
        if x not in PROTOCOLS:
            p.error("unknown protocol %s (known: %s)" % (x, ", ".join(PROTOCOLS)))
    return a


def main(argv):
    a = parse_args(argv)
    servers = make_servers(a.scalwsd, a.modules_dir)
    names = bench.split_list(a.servers)
    for n in names:
        if n not in servers or not servers[n].available():
            bench.log("idle: %s is not available" % n)
            return 2
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = a.connections + a.parallel + 64
    if hard < need:
        bench.log("idle: RLIMIT_NOFILE hard limit %d is below %d" % (hard, need))
        return 2
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-idle-")
    rows = []
    try:
        os.sched_setaffinity(0, {a.client_cpu})
        os.chmod(tmp, 0o755)
        # room for every connection, the warm-up's and a margin
        ctx = make_context(tmp, a.modules_dir, need, any(x != "http" for x in a.protocols))
        versions = {n: servers[n].version() for n in names}
        for proto in a.protocols:
            for name in names:
                bench.log("[%s] %s: %d connections" % (proto, name, a.connections))
                before, after, procs = measure_one(a, reg, servers[name], proto, ctx, tmp)
                per = (after - before) / float(a.connections)
                bench.log("    RSS %d -> %d KiB (%d processes): %.2f KiB per idle connection"
                          % (before, after, procs, per))
                rows.append((proto, name, before, after, per))
        print_report(report(a, rows, versions, ctx["commands"]), a.out)
        return 0
    finally:
        reg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def report(a, rows, versions, commands):
    m = bench.machine()
    lines = [
        "Run %s UTC on %s (%s CPUs, %s, kernel %s, Debian %s):" % (
            time.strftime("%Y-%m-%d %H:%M", time.gmtime()), m.get("Model name", "?"),
            m.get("CPU(s)", "?"), m["memory"], m["kernel"], m["debian"]),
        "`bench/idle %s`" % " ".join(shlex.quote(x) for x in sys.argv[1:]), "",
    ]
    for n, v in versions.items():
        label = " (%s)" % a.label if n == "scalwsd" and a.label else ""
        lines.append("- %s%s: %s" % (n, label, v))
    lines += ["", "| protocol | server | RSS before KiB | RSS after KiB | KiB per idle connection |",
              "|---|---|---:|---:|---:|"]
    for proto, name, before, after, per in rows:
        label = " (%s)" % a.label if name == "scalwsd" and a.label else ""
        lines.append("| %s | %s%s | %d | %d | %.2f |" % (proto, name, label, before, after, per))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
