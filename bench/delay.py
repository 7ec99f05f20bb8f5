#!/usr/bin/python3
"""
One large download over one stream through a path with delay (issue 22):
HTTP/3 (bench/h3load) against our HTTP/2 (curl --http2) and HTTP/1.1 over
TLS (curl --http1.1), scalwsd the server of all three, the same file.

The bench makes the path (--path), D = --delay-ms each way (25 by
default: a round trip of 50 ms):
  netem  a namespace for the clients, a veth pair with one end in it and
         `tc qdisc ... netem delay D` on each end; the server in the root
         namespace. Needs the kernel's sch_netem.
  tun    two namespaces, the server's and the clients', joined only by
         bench/delayline (a TUN device in each; every packet held D ms).
         Needs CONFIG_TUN; no qdisc. The root namespace is not touched.
  auto   netem where tc can add it, else tun (the default).
The clients run with `ip netns exec`; everything is removed afterwards,
also on an error, Ctrl-C or SIGTERM. Needs root and iproute2; where no
path can be made the run is skipped with the reason, exit status 0 and
{"skipped": WHY} with --json.

    bench/delay                            # 100 MiB, 25 ms each way, 3 rounds
    bench/delay --size-mib 20 --rounds 1 --json
    bench/delay --delay-ms 0 --size-mib 100  # the path alone: what it carries
    bench/delay --upload                     # the file POSTed: the server's windows

What it reports: the path's round trip (TCP connects from the clients'
namespace); per protocol the median of the rounds' throughput (bytes of
body over the client's whole time, handshake included), the server's and
the client's CPU time per MiB and share of the time, the server's
runqueue wait, and on the tun path the delay line's CPU, runqueue wait,
drops and deepest queue; and HTTP/3's throughput over HTTP/2's (target:
0.7 or more). It is a wall-clock measurement: on a shared machine the CPU
time per MiB is the steadier number.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SERVER_ADDR = "10.203.0.1"
CLIENT_ADDR = "10.203.0.2"

CONF = """\
modules_dir {modules};
daemon off;
master_process off;
worker_processes 1;
error_log {tmp}/error.log warn;
pid {tmp}/scalwsd.pid;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    server {{
        listen {addr}:{port} ssl http2;
        listen {addr}:{port} quic reuseport;
        http3 on;
        quic_gso on;
        server_name localhost;
        root {tmp}/html;
        ssl_certificate {tmp}/cert.pem;
        ssl_certificate_key {tmp}/key.pem;
        ssl_protocols TLSv1.3;
        # --upload: the body read whole (a temporary file), then passed on
        location = /upload {{
            client_max_body_size 0;
            proxy_pass http://127.0.0.1:{origin};
        }}
    }}
}}
"""

# --upload's origin, beside the server: reads a request's body, answers
# with its length
ORIGIN = """import http.server, sys
class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        left = int(self.headers.get("Content-Length", 0))
        while left:
            n = len(self.rfile.read(min(left, 1 << 20)))
            if not n:
                break
            left -= n
        body = str(int(self.headers.get("Content-Length", 0)) - left).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Skip(Exception):
    pass


def sh(*argv, check=True, ns=None, timeout=60):
    if ns:
        argv = ("ip", "netns", "exec", ns) + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), (p.stderr or p.stdout).strip()))
    return p


def netns_add(name):
    sh("ip", "netns", "add", name)


def netns_del(name):
    sh("ip", "netns", "del", name, check=False)


class NetemPath:
    """The namespace and a veth pair, with netem on both ends."""

    kind = "netem"
    server_ns = None            # the server runs in the root namespace

    def __init__(self, delay_ms):
        self.ns = "swsdelay%d" % os.getpid()
        self.host = "swsd%dh" % (os.getpid() % 100000)
        self.peer = "swsd%dp" % (os.getpid() % 100000)
        self.delay_ms = delay_ms
        self.made = False

    @staticmethod
    def available():
        """None when tc can add a netem qdisc, else why not: tried on the
        loopback of a namespace of its own, so the machine's is untouched."""
        subprocess.run(["modprobe", "sch_netem"], capture_output=True)
        probe = "swsnetem%d" % os.getpid()
        try:
            netns_add(probe)
        except RuntimeError as e:
            return "cannot make a network namespace: %s" % e
        try:
            p = sh("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
                   check=False, ns=probe)
        finally:
            netns_del(probe)
        if p.returncode != 0:
            return "no netem (kernel without sch_netem): tc: %s" % (p.stderr or p.stdout).strip()
        return None

    def __enter__(self):
        try:
            netns_add(self.ns)
            self.made = True
            sh("ip", "link", "add", self.host, "type", "veth", "peer", "name", self.peer)
            sh("ip", "link", "set", self.peer, "netns", self.ns)
            sh("ip", "addr", "add", SERVER_ADDR + "/30", "dev", self.host)
            sh("ip", "link", "set", self.host, "up")
            sh("ip", "-n", self.ns, "addr", "add", CLIENT_ADDR + "/30", "dev", self.peer)
            sh("ip", "-n", self.ns, "link", "set", self.peer, "up")
            sh("ip", "-n", self.ns, "link", "set", "lo", "up")
        except RuntimeError as e:
            self.__exit__()
            raise Skip("cannot make the namespace and veth pair: %s" % e)
        except BaseException:
            self.__exit__()
            raise
        delay = "%dms" % self.delay_ms
        # netem's queue: a large window of full-size packets in flight
        for ns, dev in ((None, self.host), (self.ns, self.peer)) if self.delay_ms else ():
            p = sh("tc", "qdisc", "add", "dev", dev, "root", "netem", "delay", delay,
                   "limit", "100000", check=False, ns=ns)
            if p.returncode != 0:
                self.__exit__()
                raise Skip("no netem delay (kernel without sch_netem): tc: %s"
                           % (p.stderr or p.stdout).strip())
        return self

    def counters(self):
        return None

    def __exit__(self, *exc):
        if self.made:
            netns_del(self.ns)
            self.made = False
        sh("ip", "link", "del", self.host, check=False)


class TunPath:
    """Two namespaces, the server's and the clients', and bench/delayline
    between them on two TUN devices, one in each; the delay line holds
    every packet for delay_ms each way. The root namespace is not
    touched, so runs do not collide; the devices go with the delay line."""

    kind = "tun"

    def __init__(self, delay_ms, delayline, queue_packets, fifo):
        self.ns = "swsdelay%d" % os.getpid()
        self.server_ns = "swsdelay%ds" % os.getpid()
        self.host = "swst%ds" % (os.getpid() % 100000)
        self.peer = "swst%dc" % (os.getpid() % 100000)
        self.delay_ms = delay_ms
        self.delayline = delayline
        self.queue_packets = queue_packets
        self.fifo = fifo
        self.proc = None
        self.made = []
        self.ready = None

    @staticmethod
    def available(delayline):
        if not os.access(delayline, os.X_OK):
            return "%s is not built" % delayline
        if not os.path.exists("/dev/net/tun"):
            return "no /dev/net/tun (kernel without CONFIG_TUN)"
        return None

    def __enter__(self):
        try:
            for ns in (self.server_ns, self.ns):
                netns_add(ns)
                self.made.append(ns)
            self.proc = subprocess.Popen(
                [self.delayline, "--dev-a", self.host, "--ns-a", self.server_ns,
                 "--dev-b", self.peer, "--ns-b", self.ns, "--delay-ms", str(self.delay_ms),
                 "--queue-packets", str(self.queue_packets), "--fifo", str(self.fifo)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("delayline: %s" % self.proc.stderr.read().strip())
            self.ready = json.loads(line)
            # point to point: each side's address with the other as its peer;
            # the transmit queues long enough that the kernel never drops
            # between the stack and the delay line
            for ns, dev, local, peer in ((self.server_ns, self.host, SERVER_ADDR, CLIENT_ADDR),
                                         (self.ns, self.peer, CLIENT_ADDR, SERVER_ADDR)):
                sh("ip", "addr", "add", local, "peer", peer, "dev", dev, ns=ns)
                sh("ip", "link", "set", dev, "mtu", "1500", "txqueuelen", "10000", "up", ns=ns)
                sh("ip", "link", "set", "lo", "up", ns=ns)
        except (RuntimeError, OSError, ValueError) as e:
            self.__exit__()
            raise Skip("cannot make the namespace and the TUN delay line: %s" % e)
        except BaseException:
            self.__exit__()
            raise
        return self

    def counters(self):
        """The delay line's counters now and the devices' own drops."""
        self.proc.send_signal(signal.SIGUSR1)
        c = json.loads(self.proc.stdout.readline())
        c["tun_tx_dropped"] = sum(tun_dropped(dev, ns) for ns, dev in
                                  ((self.server_ns, self.host), (self.ns, self.peer)))
        c["cpu_s"] = c["cpu_user_s"] + c["cpu_sys_s"]
        return c

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()
            self.proc = None
        while self.made:
            netns_del(self.made.pop())


def ns_sysctl(ns, name, value=None):
    """net.ipv4.NAME in netns `ns` (None: the root one), set to value when
    given; /proc/sys/net shows the namespace of the process reading it."""
    path = "/proc/sys/net/ipv4/" + name
    if value is not None:
        sh("sh", "-c", 'echo "$1" > "$2"', "sh", value, path, ns=ns)
    return sh("cat", path, ns=ns).stdout


def tun_dropped(dev, ns):
    p = sh("cat", "/sys/class/net/%s/statistics/tx_dropped" % dev, ns=ns, check=False)
    return int(p.stdout.strip() or 0)


def make_path(a):
    """The delayed path --path asks for; auto: netem where the kernel has it."""
    if os.geteuid() != 0:
        raise Skip("needs root (network namespaces, tc, TUN devices)")
    if shutil.which("ip") is None:
        raise Skip("ip is missing (apt-get install iproute2)")
    why_not_netem = None
    if a.path in ("netem", "auto"):
        why_not_netem = ("tc is missing (apt-get install iproute2)"
                         if shutil.which("tc") is None else NetemPath.available())
        if why_not_netem is None:
            return NetemPath(a.delay_ms)
        if a.path == "netem":
            raise Skip(why_not_netem)
    why_not_tun = TunPath.available(a.delayline)
    if why_not_tun:
        raise Skip("; ".join(w for w in (why_not_netem, why_not_tun) if w))
    return TunPath(a.delay_ms, a.delayline, a.queue_packets, a.fifo)


RTT_PROBE = """import socket, statistics, sys, time
times = []
for _ in range(int(sys.argv[3])):
    t = time.monotonic()
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10).close()
    times.append((time.monotonic() - t) * 1000)
    time.sleep(0.02)
print(statistics.median(times), min(times), max(times))
"""


def measure_rtt(ns, port, count=5):
    """The path's round trip as TCP sees it: connect() from the clients'
    namespace to the server's listener (SYN out, SYN-ACK back), in ms."""
    p = sh(sys.executable, "-c", RTT_PROBE, SERVER_ADDR, str(port), str(count), ns=ns)
    median, low, high = (float(x) for x in p.stdout.split())
    return {"median_ms": median, "min_ms": low, "max_ms": high, "probes": count}


def sched_wait(pid):
    """Seconds the process's threads were runnable but waited for a CPU."""
    total = 0.0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
            total += int(f.read().split()[1]) / 1e9
    return total


def server_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_origin(ns):
    """--upload's origin in netns `ns`: (process, port)."""
    inns = ["ip", "netns", "exec", ns] if ns else []
    p = subprocess.Popen(inns + [sys.executable, "-c", ORIGIN], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.strip().isdigit():
        p.kill()
        raise RuntimeError("the upload origin did not start")
    return p, int(line)


def start_server(a, tmp, ns, origin_port):
    """scalwsd in netns `ns` (`ip netns exec` execs it: the pid is its own)."""
    port = a.port
    conf = CONF.format(modules=a.modules, tmp=tmp, addr=SERVER_ADDR, port=port,
                       origin=origin_port)
    (tmp / "scalws.conf").write_text(conf)
    inns = ["ip", "netns", "exec", ns] if ns else []
    p = subprocess.Popen(inns + [a.scalwsd, "-c", str(tmp / "scalws.conf"), "-p", str(tmp)],
                         stdout=subprocess.DEVNULL, stderr=open(tmp / "stderr.txt", "wb"))
    deadline = time.time() + 10
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("scalwsd exited: %s" % (tmp / "stderr.txt").read_text())
        r = subprocess.run(inns + ["ss", "-Htln", "src", "%s:%d" % (SERVER_ADDR, port)],
                           capture_output=True, text=True)
        if r.stdout.strip():
            return p
        time.sleep(0.1)
    p.kill()
    raise RuntimeError("scalwsd did not listen on %s:%d" % (SERVER_ADDR, port))


def one(a, ns, proto, url, size, upload):
    """One download (or with upload, one POST of that file) in the
    namespace: (seconds, body bytes moved). An upload's answer is the
    length the origin read, checked here."""
    with tempfile.NamedTemporaryFile(prefix="sws-delay-answer-") as answer:
        seconds, moved = one_transfer(a, ns, proto, url, upload, answer.name)
        if upload:
            told = open(answer.name).read().strip()
            if told != str(size):
                raise RuntimeError("%s: the origin read %r bytes of %d" % (proto, told, size))
            return seconds, size
        return seconds, moved


def one_transfer(a, ns, proto, url, upload, out):
    if proto == "h3":
        window = ("--window", str(a.h3_window)) if a.h3_window else ()
        post = ("--method", "POST", "--data", "@" + upload, "-o", out) if upload else ()
        p = sh(a.h3load, "-k", "--json", "-n", "1", "-c", "1", "-m", "1", "-t",
               str(a.timeout), *window, *post, url, ns=ns, check=False,
               timeout=a.timeout + 30)
        try:
            s = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RuntimeError("h3load: %s %s" % (p.stdout[-500:], p.stderr[-500:]))
        if s["status"]["2xx"] != 1:
            raise RuntimeError("h3load: not answered 2xx: %s" % s)
        return s["elapsed_s"], s["body_bytes"]
    flag = "--http2" if proto == "h2" else "--http1.1"
    post = ("--data-binary", "@" + upload, "-H", "Content-Type: application/octet-stream",
            "-H", "Expect:") if upload else ()
    p = sh("curl", "-sk", flag, "--max-time", str(a.timeout), "-o", out if upload else "/dev/null",
           "-w", "%{http_version} %{response_code} %{size_download} %{time_total}",
           *post, url, ns=ns, check=False, timeout=a.timeout + 30)
    try:
        version, code, got, seconds = p.stdout.split()
    except ValueError:
        raise RuntimeError("curl %s: %s %s" % (flag, p.stdout[-500:], p.stderr[-500:]))
    want = "2" if proto == "h2" else "1.1"
    if version != want:
        raise RuntimeError("curl %s spoke HTTP/%s" % (flag, version))
    if code != "200":
        raise RuntimeError("curl %s: status %s" % (flag, code))
    return float(seconds), int(got)


def run(a, path):
    with tempfile.TemporaryDirectory(prefix="sws-delay-") as d, path:
        tmp = Path(d)
        os.chmod(tmp, 0o755)
        (tmp / "html").mkdir()
        size = a.size_mib * 1024 * 1024
        with open(tmp / "html" / "big.bin", "wb") as f:
            for _ in range(a.size_mib):
                f.write(os.urandom(1024 * 1024))
        os.chmod(tmp / "html" / "big.bin", 0o644)
        sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
           "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(tmp / "key.pem"), "-out",
           str(tmp / "cert.pem"), "-days", "2", "-subj", "/CN=localhost")
        if a.tcp_rmem:
            # the clients' TCP receive buffer limit (a namespace's own sysctl)
            ns_sysctl(path.ns, "tcp_rmem", "4096 131072 %d" % a.tcp_rmem)
        if a.tcp_wmem:
            if path.server_ns is None:
                raise Skip("--tcp-wmem needs --path tun (the server in a namespace of its own)")
            ns_sysctl(path.server_ns, "tcp_wmem", "4096 16384 %d" % a.tcp_wmem)
        out_rmem = ns_sysctl(path.ns, "tcp_rmem").split()
        out_wmem = ns_sysctl(path.server_ns, "tcp_wmem").split()
        out_cc = ns_sysctl(path.server_ns, "tcp_congestion_control").strip()
        origin, origin_port = start_origin(path.server_ns)
        try:
            srv = start_server(a, tmp, path.server_ns, origin_port)
        except BaseException:
            origin.kill()
            origin.wait()
            raise
        url = "https://%s:%d/%s" % (SERVER_ADDR, a.port, "upload" if a.upload else "big.bin")
        out = {"path": path.kind, "results": {}, "client_tcp_rmem": [int(x) for x in out_rmem],
               "server_tcp_wmem": [int(x) for x in out_wmem], "server_tcp_cc": out_cc}
        try:
            out["rtt"] = measure_rtt(path.ns, a.port)
            protocols = a.protocols.split(",")
            rounds = {proto: [] for proto in protocols}
            # the protocols take turns, so that a change in the machine's
            # load falls on all of them alike
            for _ in range(a.rounds):
                for proto in protocols:
                    rounds[proto].append(one_round(a, srv, path, proto, url, size,
                                                   str(tmp / "html" / "big.bin")
                                                   if a.upload else None))
            for proto in protocols:
                out["results"][proto] = summarize(rounds[proto], path.kind == "tun")
        finally:
            srv.send_signal(signal.SIGTERM)
            try:
                srv.wait(10)
            except subprocess.TimeoutExpired:
                srv.kill()
            origin.kill()
            origin.wait()
        return out


def one_round(a, srv, path, proto, url, size, upload):
    """One download, with the CPU time the server, the client and the
    delay line spent on it (the client: this process's waited-for children,
    which during the download is the client alone: `ip netns exec` execs it)."""
    c0, w0, d0 = server_cpu(srv.pid), sched_wait(srv.pid), path.counters()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, got = one(a, path.ns, proto, url, size, upload)
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu, wait, d1 = server_cpu(srv.pid) - c0, sched_wait(srv.pid) - w0, path.counters()
    if got != size:
        raise RuntimeError("%s: %d bytes of %d" % (proto, got, size))
    client = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    r = {"seconds": seconds, "bytes_per_s": got / seconds,
         "server_cpu_ms_per_mib": cpu * 1000 / a.size_mib, "server_cpu_share": cpu / seconds,
         "server_sched_wait_share": wait / seconds,
         "client_cpu_ms_per_mib": client * 1000 / a.size_mib,
         "client_cpu_share": client / seconds}
    if d0 is not None:
        r["delayline"] = delayline_round(d0, d1, a.size_mib, seconds)
    return r


def summarize(rounds, tun):
    """A protocol's rounds: medians, and the delay line's drops summed."""
    def median(key, sub=None):
        return statistics.median((r[sub] if sub else r)[key] for r in rounds)

    res = {"rounds": rounds}
    for key in ("bytes_per_s", "server_cpu_ms_per_mib", "server_cpu_share",
                "server_sched_wait_share",
                "client_cpu_ms_per_mib", "client_cpu_share"):
        res[key] = median(key)
    if tun:
        res["delayline_cpu_ms_per_mib"] = median("cpu_ms_per_mib", "delayline")
        res["delayline_cpu_share"] = median("cpu_share", "delayline")
        res["delayline_sched_wait_share"] = median("sched_wait_share", "delayline")
        res["delayline_drops"] = sum(r["delayline"]["drops"] for r in rounds)
        res["tun_drops"] = sum(r["delayline"]["tun_drops"] for r in rounds)
        res["delayline_max_queue"] = max(r["delayline"]["max_queue"] for r in rounds)
    return res


def delayline_round(before, after, size_mib, seconds):
    """What the delay line did during one download: its CPU time (per MiB
    of body and as a share of the download's time), the packets it
    dropped (its queues, the devices' transmit queues) and its deepest
    queue (over the whole run so far: a high-water mark)."""
    cpu = after["cpu_s"] - before["cpu_s"]
    return {
        "cpu_ms_per_mib": cpu * 1000 / size_mib,
        "cpu_share": cpu / seconds,
        "sched_wait_share": (after["sched_wait_s"] - before["sched_wait_s"]) / seconds,
        "packets": sum(after[q]["packets"] - before[q]["packets"] for q in ("a_to_b", "b_to_a")),
        "drops": sum(after[q]["drops"] - before[q]["drops"] for q in ("a_to_b", "b_to_a")),
        "tun_drops": after["tun_tx_dropped"] - before["tun_tx_dropped"],
        "max_queue": max(after[q]["max_queue"] for q in ("a_to_b", "b_to_a")),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay-ms", type=int, default=25,
                    help="added each way (25); 0: no delay, the path alone (a check)")
    ap.add_argument("--path", choices=("auto", "netem", "tun"), default="auto",
                    help="how the delay is made: tc netem on a veth pair, bench/delayline "
                         "between two TUN devices, or netem where the kernel has it (auto)")
    ap.add_argument("--queue-packets", type=int, default=65536,
                    help="the delay line's queue each way, packets (65536)")
    ap.add_argument("--tcp-rmem", type=int, default=0, metavar="BYTES",
                    help="the clients' net.ipv4.tcp_rmem maximum (default: the kernel's), "
                         "which bounds the TCP receive window of HTTP/1.1 and HTTP/2")
    ap.add_argument("--tcp-wmem", type=int, default=0, metavar="BYTES",
                    help="the server's net.ipv4.tcp_wmem maximum (default: the kernel's, "
                         "4 MiB), which bounds the data TCP keeps in flight; --path tun only "
                         "(the server has a namespace of its own there)")
    ap.add_argument("--fifo", type=int, default=1, metavar="PRIORITY",
                    help="the delay line's SCHED_FIFO priority (1), so that on a busy machine "
                         "it does not wait for a CPU; 0: an ordinary process")
    ap.add_argument("--h3-window", type=int, default=0, metavar="BYTES",
                    help="h3load's initial stream receive window (its default, 1 MiB); "
                         "it grows with the path (ngtcp2's auto-tuning) to 16 MiB or this")
    ap.add_argument("--upload", action="store_true",
                    help="POST the file instead (to an origin behind the server's proxy, "
                         "the body read whole first): the server's receive windows")
    ap.add_argument("--size-mib", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--protocols", default="h3,h2,h1",
                    help="which downloads, in this order (h3,h2,h1)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per download")
    ap.add_argument("--port", type=int, default=8443)
    ap.add_argument("--scalwsd", default=str(ROOT / "objs" / "scalwsd"))
    ap.add_argument("--modules", default=None, help="(objs/modules beside --scalwsd)")
    ap.add_argument("--h3load", default=None, help="(bench/h3load beside --scalwsd)")
    ap.add_argument("--delayline", default=None, help="(bench/delayline beside --scalwsd)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.scalwsd = os.path.abspath(a.scalwsd)
    build = os.path.dirname(a.scalwsd)
    a.modules = os.path.abspath(a.modules or os.path.join(build, "modules"))
    a.h3load = os.path.abspath(a.h3load or os.path.join(build, "bench", "h3load"))
    a.delayline = os.path.abspath(a.delayline or os.path.join(build, "bench", "delayline"))
    protocols = a.protocols.split(",")
    if not protocols or any(p not in ("h3", "h2", "h1") for p in protocols):
        ap.error("--protocols: a list of h3, h2, h1")
    # SIGTERM unwinds like Ctrl-C, so the namespace, devices and processes
    # go (SIGINT too where a shell started us in the background, ignoring it)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for f in (a.scalwsd,) + ((a.h3load,) if "h3" in protocols else ()):
            if not os.access(f, os.X_OK):
                raise Skip("%s is not built" % f)
        out = run(a, make_path(a))
    except KeyboardInterrupt:
        print("bench/delay: interrupted (the namespaces, devices and processes are gone)",
              file=sys.stderr)
        return 130
    except Skip as e:
        if a.json:
            print(json.dumps({"skipped": str(e)}))
        else:
            print("bench/delay: skipped: %s" % e)
        return 0
    results = out["results"]
    ratio = (results["h3"]["bytes_per_s"] / results["h2"]["bytes_per_s"]
             if "h3" in results and "h2" in results else None)
    if a.json:
        print(json.dumps({"delay_ms_each_way": a.delay_ms, "size_mib": a.size_mib,
                          "direction": "upload" if a.upload else "download",
                          "path": out["path"], "rtt": out["rtt"], "results": results,
                          "client_tcp_rmem": out["client_tcp_rmem"],
                          "server_tcp_wmem": out["server_tcp_wmem"],
                          "server_tcp_cc": out["server_tcp_cc"],
                          "h3_over_h2": ratio}))
        return 0
    rtt = out["rtt"]
    print("one %d MiB %s, one stream, %d ms added each way (RTT +%d ms) by %s, "
          "median of %d" % (a.size_mib, "upload" if a.upload else "download", a.delay_ms,
                            2 * a.delay_ms,
                            "tc netem" if out["path"] == "netem" else "bench/delayline (TUN)",
                            a.rounds))
    print("measured RTT (TCP connect from the clients' namespace): median %.1f ms "
          "(min %.1f, max %.1f, %d probes)"
          % (rtt["median_ms"], rtt["min_ms"], rtt["max_ms"], rtt["probes"]))
    print("clients' net.ipv4.tcp_rmem: %s; server's net.ipv4.tcp_wmem: %s; "
          "server's TCP congestion control: %s (HTTP/3: ngtcp2's default, CUBIC)"
          % (" ".join(map(str, out["client_tcp_rmem"])),
             " ".join(map(str, out["server_tcp_wmem"])), out["server_tcp_cc"]))
    tun = out["path"] == "tun"
    print("%-10s %10s %18s %5s %5s %18s %5s" % ("protocol", "MB/s", "server CPU ms/MiB", "busy",
                                                "wait", "client CPU ms/MiB", "busy")
          + ("  %20s %5s %5s %6s %9s %9s" % ("delayline CPU ms/MiB", "busy", "wait",
                                                "drops", "tun drops", "max queue")
             if tun else ""))
    for proto, name in (("h3", "HTTP/3"), ("h2", "HTTP/2"), ("h1", "HTTP/1.1")):
        if proto not in results:
            continue
        r = results[proto]
        line = "%-10s %10.1f %18.2f %4.0f%% %4.0f%% %18.2f %4.0f%%" % (
            name, r["bytes_per_s"] / 1e6, r["server_cpu_ms_per_mib"],
            100 * r["server_cpu_share"], 100 * r["server_sched_wait_share"],
            r["client_cpu_ms_per_mib"],
            100 * r["client_cpu_share"])
        if tun:
            line += "  %20.2f %4.0f%% %4.1f%% %6d %9d %9d" % (
                r["delayline_cpu_ms_per_mib"], 100 * r["delayline_cpu_share"],
                100 * r["delayline_sched_wait_share"],
                r["delayline_drops"], r["tun_drops"], r["delayline_max_queue"])
        print(line)
    if ratio is not None:
        print("HTTP/3 / HTTP/2: %.2fx%s" % (ratio, "" if a.upload else " (target 0.7x)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
