"""bench/delayline, the TUN delay line of bench/delay, and bench/delay over
it. Needs root, /dev/net/tun and network namespaces; skipped otherwise.

Two throwaway namespaces joined only by the delay line (nothing in the
root namespace changes): the round trip TCP's connect() sees is at least
the two delays added and not much more; a 1 MiB TCP download and UDP
datagrams pass unchanged; a full queue drops and counts instead of
growing; the devices go with the process. Then bench/delay end to end
with a small file (all three protocols through the delay line), and its
teardown when it is stopped mid-run. The command line's errors need no
root."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import swsharness as h

BUILD = os.path.dirname(h.SCALWSD)
DELAYLINE = os.path.join(BUILD, "bench", "delayline")
H3LOAD = os.path.join(BUILD, "bench", "h3load")
BENCH_DELAY = os.path.join(h.SRC, "bench", "delay.py")

A_ADDR, B_ADDR = "10.203.2.1", "10.203.2.2"


def why_not():
    if not os.access(DELAYLINE, os.X_OK):
        return "%s is not built" % DELAYLINE
    if os.geteuid() != 0:
        return "needs root (network namespaces, TUN devices)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    p = subprocess.run(["ip", "netns", "add", "swsdltprobe%d" % os.getpid()],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return "cannot make a network namespace: %s" % p.stderr.strip()
    subprocess.run(["ip", "netns", "del", "swsdltprobe%d" % os.getpid()], capture_output=True)
    return None


WHY_NOT = why_not()
needs_netns = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


def ip(*argv, ns=None):
    argv = ("ip",) + (("-n", ns) if ns else ()) + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    assert p.returncode == 0, p
    return p


def in_ns(ns, code, *args, timeout=20):
    return subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", code]
                          + [str(x) for x in args], capture_output=True, text=True,
                          timeout=timeout)


class Line:
    """Two namespaces, the delay line between them, addresses set."""

    def __init__(self, delay_ms, queue_packets=4096):
        tag = "%d_%d" % (os.getpid(), int(time.monotonic() * 1000) % 100000)
        self.a, self.b = "swsdlta" + tag, "swsdltb" + tag
        self.deva, self.devb = "dlta%d" % (os.getpid() % 100000), "dltb%d" % (os.getpid() % 100000)
        self.proc = None
        for ns in (self.a, self.b):
            ip("netns", "add", ns)
        try:
            self.proc = subprocess.Popen(
                [DELAYLINE, "--dev-a", self.deva, "--ns-a", self.a, "--dev-b", self.devb,
                 "--ns-b", self.b, "--delay-ms", str(delay_ms),
                 "--queue-packets", str(queue_packets)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.ready = json.loads(self.proc.stdout.readline())
            for ns, dev, local, peer in ((self.a, self.deva, A_ADDR, B_ADDR),
                                         (self.b, self.devb, B_ADDR, A_ADDR)):
                ip("addr", "add", local, "peer", peer, "dev", dev, ns=ns)
                ip("link", "set", dev, "mtu", "1500", "up", ns=ns)
                ip("link", "set", "lo", "up", ns=ns)
        except BaseException:
            self.close()
            raise

    def counters(self):
        self.proc.send_signal(signal.SIGUSR1)
        return json.loads(self.proc.stdout.readline())

    def close(self):
        out = None
        if self.proc is not None:
            self.proc.terminate()
            out, _ = self.proc.communicate(timeout=10)
        for ns in (self.a, self.b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        return out


@pytest.fixture
def line20():
    line = Line(20)
    yield line
    line.close()


SERVE_ONCE = """\
import socket, sys
s = socket.socket()
s.bind((sys.argv[1], 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
body = bytes(range(256)) * 4096
while True:
    c, _ = s.accept()
    if c.recv(1) == b"g":
        c.sendall(body)
    c.close()
"""

CONNECT_TIMES = """\
import socket, sys, time
for _ in range(5):
    t = time.monotonic()
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
    print((time.monotonic() - t) * 1000)
"""

DOWNLOAD = """\
import hashlib, socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
c.sendall(b"g")
got = b""
while True:
    d = c.recv(65536)
    if not d:
        break
    got += d
print(len(got), hashlib.sha256(got).hexdigest())
"""

UDP_ECHO = """\
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1], flush=True)
while True:
    d, peer = s.recvfrom(65536)
    s.sendto(d, peer)
"""

UDP_ASK = """\
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
sizes = (1, 100, 1200, 1472)
sent = [os.urandom(n) for n in sizes]
for d in sent:
    s.sendto(d, (sys.argv[1], int(sys.argv[2])))
got = [s.recvfrom(65536)[0] for _ in sizes]
print(got == sent)
"""


def serve(ns, code):
    p = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", code, A_ADDR],
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


@needs_netns
def test_round_trip_and_tcp_download(line20):
    srv, port = serve(line20.a, SERVE_ONCE)
    # (a packet sent while the other device was still down fails its write)
    c0 = line20.counters()
    try:
        r = in_ns(line20.b, CONNECT_TIMES, A_ADDR, port)
        assert r.returncode == 0, r
        times = sorted(float(x) for x in r.stdout.split())
        # SYN one way, SYN-ACK the other: never less than both delays
        assert times[0] >= 40.0, times
        assert times[len(times) // 2] < 40.0 + 100.0, times
        r = in_ns(line20.b, DOWNLOAD, A_ADDR, port)
        assert r.returncode == 0, r
        body = bytes(range(256)) * 4096
        import hashlib
        assert r.stdout.split() == [str(len(body)), hashlib.sha256(body).hexdigest()]
    finally:
        srv.kill()
        srv.wait()
    c = line20.counters()
    assert c["a_to_b"]["packets"] > len(body) // 1500
    assert c["a_to_b"]["bytes"] > len(body)
    assert c["b_to_a"]["packets"] > 0
    for way in ("a_to_b", "b_to_a"):
        assert (c[way]["drops"], c[way]["oversize"]) == (0, 0)
        assert c[way]["write_errors"] == c0[way]["write_errors"]
        assert c[way]["max_queue"] >= 1
    # (tick-sampled: a light run may show 0 CPU time; the wait is read
    # from /proc/thread-self/schedstat, -1 where that is missing)
    assert c["cpu_user_s"] >= 0 and c["cpu_sys_s"] >= 0 and c["sched_wait_s"] >= 0


@needs_netns
def test_udp_passes_unchanged(line20):
    srv, port = serve(line20.a, UDP_ECHO)
    try:
        r = in_ns(line20.b, UDP_ASK, A_ADDR, port)
        assert (r.returncode, r.stdout.strip()) == (0, "True"), r
    finally:
        srv.kill()
        srv.wait()


@needs_netns
def test_full_queue_drops_and_counts():
    # 300 datagrams at once into a queue of 16 held for 300 ms: most are
    # dropped, and every one is either passed or counted as dropped
    line = Line(300, queue_packets=16)
    try:
        flood = ("import socket, sys\n"
                 "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                 "for _ in range(300):\n"
                 "    s.sendto(b'x' * 1000, (sys.argv[1], 9))\n")
        r = in_ns(line.a, flood, B_ADDR)
        assert r.returncode == 0, r
        time.sleep(0.5)
        c = line.counters()["a_to_b"]
        assert c["max_queue"] == 16
        assert c["drops"] >= 300 - 16 - 100, c
        assert c["packets"] <= 16 + 100, c
    finally:
        out = line.close()
    final = json.loads(out.splitlines()[-1])
    assert final["exit"] is True
    assert final["a_to_b"]["drops"] >= 300 - 16 - 100


@needs_netns
def test_devices_go_with_the_process():
    line = Line(1)
    try:
        ip("link", "show", line.deva, ns=line.a)
        line.proc.terminate()
        line.proc.communicate(timeout=10)
        assert line.proc.returncode == 0
        p = subprocess.run(["ip", "-n", line.a, "link", "show", line.deva], capture_output=True)
        assert p.returncode != 0
        line.proc = None
    finally:
        line.close()


@pytest.mark.skipif(not os.access(DELAYLINE, os.X_OK), reason="%s is not built" % DELAYLINE)
@pytest.mark.parametrize("argv,status,message", [
    ([], 2, "usage"),
    (["--dev-a", "x"], 2, "usage"),
    (["--dev-a", "x", "--dev-b", "y", "--delay-ms", "abc"], 1, "--delay-ms takes a number"),
    (["--dev-a", "x", "--dev-b", "y", "--delay-ms", "-1"], 1, "--delay-ms is 0 to 10000"),
    (["--dev-a", "x", "--dev-b", "y", "--queue-packets", "8"], 1, "--queue-packets 16"),
    (["--dev-a", "x", "--dev-b", "y", "--fifo", "100"], 1, "--fifo 0 to 99"),
    (["--dev-a", "x" * 16, "--dev-b", "y"], 1, "at most 15 characters"),
    (["--dev-a", "x", "--ns-a", "swsdl-no-such-netns", "--dev-b", "y"], 1,
     "/run/netns/swsdl-no-such-netns"),
], ids=["nothing", "one-device", "bad-delay", "negative-delay", "small-queue", "fifo",
        "long-name", "no-netns"])
def test_command_line_errors(argv, status, message):
    p = subprocess.run([DELAYLINE] + argv, capture_output=True, text=True, timeout=10)
    assert p.returncode == status, p
    assert message in p.stderr, p
    assert p.stdout == ""


def namespaces():
    p = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return {line.split()[0] for line in p.stdout.splitlines() if line.strip()}


def processes_with_args(args):
    """The pids whose command line holds args, in a row."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        if any(argv[i:i + len(args)] == args for i in range(len(argv))):
            found.append(int(pid))
    return found


def bench_argv(*extra):
    return [sys.executable, BENCH_DELAY, "--path", "tun", "--scalwsd", h.SCALWSD,
            "--modules", str(h.MODULES),
            "--delayline", DELAYLINE, "--h3load", H3LOAD] + list(extra)


needs_bench = pytest.mark.skipif(
    WHY_NOT is not None or not os.access(H3LOAD, os.X_OK),
    reason=WHY_NOT or "%s is not built" % H3LOAD)


@needs_bench
@pytest.mark.parametrize("upload", [False, True], ids=["download", "upload"])
def test_bench_delay_through_the_delay_line(upload):
    before = namespaces()
    p = subprocess.run(bench_argv("--delay-ms", "10", "--size-mib", "2", "--rounds", "1",
                                  "--json", "--port", str(h.free_port()),
                                  *(["--upload"] if upload else [])),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert "skipped" not in out, out
    assert out["direction"] == ("upload" if upload else "download")
    assert out["path"] == "tun"
    assert 20.0 <= out["rtt"]["min_ms"] and out["rtt"]["median_ms"] < 20.0 + 100.0, out["rtt"]
    assert set(out["results"]) == {"h3", "h2", "h1"}
    for proto, r in out["results"].items():
        assert r["bytes_per_s"] > 0
        assert r["delayline_drops"] == 0 and r["tun_drops"] == 0, (proto, r)
        assert r["rounds"][0]["delayline"]["packets"] > 2 * 1024 * 1024 // 1500
    assert namespaces() <= before


@needs_bench
def test_bench_delay_tears_down_when_stopped():
    before = namespaces()
    p = subprocess.Popen(bench_argv("--delay-ms", "50", "--size-mib", "64", "--rounds", "5",
                                    "--port", str(h.free_port())),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ns = "swsdelay%d" % p.pid
    deadline = time.monotonic() + 30
    while ns not in namespaces() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    assert ns in namespaces(), p.communicate()
    time.sleep(1.0)                     # into the run: the server and the delay line up
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert not {ns, ns + "s"} & namespaces()
    assert namespaces() <= before
    assert not processes_with_args(["--ns-b", ns])
