#!/usr/bin/python3
"""
One large download over one stream through a path with delay (issue 22):
HTTP/3 (bench/h3load) against our HTTP/2 (curl --http2) and HTTP/1.1 over
TLS (curl --http1.1), scalwsd the server of all three, the same file.

The bench makes the path: a network namespace with one end of a veth
pair in it, `tc qdisc ... netem delay D` on each end (D = --delay-ms, 25
by default: a round trip of 50 ms), the server on the root namespace's
end, the clients run in the namespace (`ip netns exec`). Everything is
removed afterwards. Needs root, iproute2 and the kernel's sch_netem; where
netem is missing (modprobe sch_netem fails, tc says "Specified qdisc kind
is unknown") the run is skipped with that error, exit status 0 and
{"skipped": WHY} with --json.

    bench/delay                            # 100 MiB, 25 ms each way, 3 rounds
    bench/delay --size-mib 20 --rounds 1 --json
    bench/delay --delay-ms 0 --size-mib 20   # the path without netem: a check

What it reports per protocol: the median of the rounds' throughput (bytes
of body over the client's whole time, handshake included) and the
server's CPU time per MiB; and HTTP/3's throughput over HTTP/2's (target:
0.7 or more). It is a wall-clock measurement: on a shared machine the CPU
time per MiB is the steadier number.
"""
import argparse
import json
import os
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
    }}
}}
"""


class Skip(Exception):
    pass


def sh(*argv, check=True, ns=None):
    if ns:
        argv = ("ip", "netns", "exec", ns) + argv
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(argv), (p.stderr or p.stdout).strip()))
    return p


class Path50:
    """The namespace and the veth pair, with netem on both ends."""

    def __init__(self, delay_ms):
        self.ns = "swsdelay%d" % os.getpid()
        self.host = "swsd%dh" % (os.getpid() % 100000)
        self.peer = "swsd%dp" % (os.getpid() % 100000)
        self.delay_ms = delay_ms
        self.made = False

    def __enter__(self):
        if os.geteuid() != 0:
            raise Skip("needs root (network namespaces, tc)")
        for tool in ("ip", "tc"):
            if shutil.which(tool) is None:
                raise Skip("%s is missing (apt-get install iproute2)" % tool)
        subprocess.run(["modprobe", "sch_netem"], capture_output=True)
        try:
            sh("ip", "netns", "add", self.ns)
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

    def __exit__(self, *exc):
        if self.made:
            sh("ip", "netns", "del", self.ns, check=False)
            self.made = False
        sh("ip", "link", "del", self.host, check=False)


def server_cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(a, tmp):
    port = a.port
    conf = CONF.format(modules=a.modules, tmp=tmp, addr=SERVER_ADDR, port=port)
    (tmp / "scalws.conf").write_text(conf)
    p = subprocess.Popen([a.scalwsd, "-c", str(tmp / "scalws.conf"), "-p", str(tmp)],
                         stdout=subprocess.DEVNULL, stderr=open(tmp / "stderr.txt", "wb"))
    deadline = time.time() + 10
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("scalwsd exited: %s" % (tmp / "stderr.txt").read_text())
        r = subprocess.run(["ss", "-Htln", "src", "%s:%d" % (SERVER_ADDR, port)],
                           capture_output=True, text=True)
        if r.stdout.strip():
            return p
        time.sleep(0.1)
    p.kill()
    raise RuntimeError("scalwsd did not listen on %s:%d" % (SERVER_ADDR, port))


def one(a, ns, proto, url, size):
    """One download in the namespace: (seconds, body bytes)."""
    if proto == "h3":
        p = sh(a.h3load, "-k", "--json", "-n", "1", "-c", "1", "-m", "1", "-t",
               str(a.timeout), url, ns=ns, check=False)
        try:
            s = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise RuntimeError("h3load: %s %s" % (p.stdout[-500:], p.stderr[-500:]))
        return s["elapsed_s"], s["body_bytes"]
    flag = "--http2" if proto == "h2" else "--http1.1"
    p = sh("curl", "-sk", flag, "--max-time", str(a.timeout), "-o", "/dev/null", "-w",
           "%{http_version} %{size_download} %{time_total}", url, ns=ns, check=False)
    version, got, seconds = p.stdout.split()
    want = "2" if proto == "h2" else "1.1"
    if version != want:
        raise RuntimeError("curl %s spoke HTTP/%s" % (flag, version))
    return float(seconds), int(got)


def run(a):
    with tempfile.TemporaryDirectory(prefix="sws-delay-") as d, Path50(a.delay_ms) as path:
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
        srv = start_server(a, tmp)
        url = "https://%s:%d/big.bin" % (SERVER_ADDR, a.port)
        results = {}
        try:
            for proto in ("h3", "h2", "h1"):
                rounds = []
                for _ in range(a.rounds):
                    c0 = server_cpu(srv.pid)
                    seconds, got = one(a, path.ns, proto, url, size)
                    cpu = server_cpu(srv.pid) - c0
                    if got != size:
                        raise RuntimeError("%s: %d bytes of %d" % (proto, got, size))
                    rounds.append({"seconds": seconds, "bytes_per_s": got / seconds,
                                   "server_cpu_ms_per_mib": cpu * 1000 / a.size_mib})
                results[proto] = {
                    "rounds": rounds,
                    "bytes_per_s": statistics.median(r["bytes_per_s"] for r in rounds),
                    "server_cpu_ms_per_mib": statistics.median(
                        r["server_cpu_ms_per_mib"] for r in rounds),
                }
        finally:
            srv.send_signal(signal.SIGTERM)
            try:
                srv.wait(10)
            except subprocess.TimeoutExpired:
                srv.kill()
        return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delay-ms", type=int, default=25,
                    help="added each way (25); 0: no netem, the namespace's path alone")
    ap.add_argument("--size-mib", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300, help="seconds per download")
    ap.add_argument("--port", type=int, default=8443)
    ap.add_argument("--scalwsd", default=str(ROOT / "objs" / "scalwsd"))
    ap.add_argument("--modules", default=None, help="(objs/modules beside --scalwsd)")
    ap.add_argument("--h3load", default=None, help="(bench/h3load beside --scalwsd)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.scalwsd = os.path.abspath(a.scalwsd)
    build = os.path.dirname(a.scalwsd)
    a.modules = os.path.abspath(a.modules or os.path.join(build, "modules"))
    a.h3load = os.path.abspath(a.h3load or os.path.join(build, "bench", "h3load"))
    try:
        for f in (a.scalwsd, a.h3load):
            if not os.access(f, os.X_OK):
                raise Skip("%s is not built" % f)
        results = run(a)
    except Skip as e:
        if a.json:
            print(json.dumps({"skipped": str(e)}))
        else:
            print("bench/delay: skipped: %s" % e)
        return 0
    ratio = results["h3"]["bytes_per_s"] / results["h2"]["bytes_per_s"]
    if a.json:
        print(json.dumps({"delay_ms_each_way": a.delay_ms, "size_mib": a.size_mib,
                          "results": results, "h3_over_h2": ratio}))
        return 0
    print("one %d MiB download, one stream, %d ms added each way (RTT +%d ms), median of %d"
          % (a.size_mib, a.delay_ms, 2 * a.delay_ms, a.rounds))
    print("%-10s %12s %22s" % ("protocol", "MB/s", "server CPU ms per MiB"))
    for proto, name in (("h3", "HTTP/3"), ("h2", "HTTP/2"), ("h1", "HTTP/1.1")):
        r = results[proto]
        print("%-10s %12.1f %22.2f" % (name, r["bytes_per_s"] / 1e6, r["server_cpu_ms_per_mib"]))
    print("HTTP/3 / HTTP/2: %.2fx (target 0.7x)" % ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
