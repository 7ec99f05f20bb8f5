#!/usr/bin/python3
"""What an HTTP/2 response costs on the wire and in the client: TLS records,
bytes and TCP segments per response, each way, and h2load's own CPU.

    bench/h2wire.py [--servers scalwsd,nginx,h2o]
                    [--cases tls-h2-static-small,tls-h2-mux-small]
                    [--counts 2000,8000] [--callgrind] [--out FILE]
                    [--scalwsd-http "etag off;"] [--label TEXT]
                    [--keep-profiles DIR] [--sched] [--scalwsd-events TEXT]

For each case and server (configured as bench/run does, from the same
templates: one worker), h2load sends exactly N1 and then N2 requests for
the 13-byte /hello.txt (tls-h2-static-small: -c16 -m1; tls-h2-mux-small:
-c64 -m10, as the issue's saturated run) while a packet socket on the
loopback interface (root: AF_PACKET, a BPF filter on the server's port)
sees every TCP segment. Each connection's two byte streams are put back
together and cut at the TLS record headers (5 bytes: type, version,
length), so the count does not depend on how TCP segmented them. A figure
per response is (run N2 - run N1) / (N2 - N1): the handshakes, tickets and
SETTINGS of the connections are the same in both runs and drop out.

TLS 1.3 hides the content type: every record after the handshake is
"application data" (23), HTTP/2 frames and the server's session tickets
alike; the tickets drop out with the difference.

The client's cost: h2load's user + system CPU time (getrusage of the child,
a time: the machine's load moves it a little) and, with --callgrind, its
user-space instructions under callgrind (a count: deterministic for the
same bytes in; those runs capture nothing: the wire figures come from
the runs without callgrind; --keep-profiles copies callgrind's files,
named CASE-SERVER-N, into a directory for callgrind_annotate). h2load
runs with -t1 on --client-cpu, the server on --server-cpu.

--sched adds what the wire does not show: how the two sides take turns
(counts, but counts that depend on timing: run it with large counts on a
quiet machine). Those runs capture nothing (the packet socket's reader
is woken by every segment: it would be counted): h2load's user and system
time apart, its system calls, the wake-ups it makes and the IPIs it sends
(perf stat on its process: raw_syscalls:sys_enter, sched:sched_waking,
ipi:ipi_send_cpu; and the wake-ups of the server among them: sched_waking
filtered by the woken task's name), and the server's sleeps (voluntary context switches of
its processes' threads, /proc/PID/task/*/status), and the server's system
calls and event waits (epoll_wait, epoll_pwait: perf stat on its
processes). A server that waits idle in epoll_wait
between two of the client's writes is woken by the client's write, and on
a VM that wake-up (an IPI to the halted vCPU) is the client's cost.
--scalwsd-events puts directives into scalwsd's events block
("wait_pause 200us;").
"""

import argparse
import collections
import ctypes
import os
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run as bench                                         # noqa: E402
import scenarios as scenario_table                          # noqa: E402
from idle import make_context, print_report, start_server   # noqa: E402
from procs import Registry                                  # noqa: E402
from servers import make_servers                            # noqa: E402

# case: (scenario for the configuration, h2load connections, streams per connection)
CASES = {
    "tls-h2-static-small": ("tls-h2-static-small", 16, 1),
    "tls-h2-mux-small": ("tls-h2-mux-small", 64, 10),
}

ETH_P_ALL = 0x0003
SO_ATTACH_FILTER = 26
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_OUTGOING = 4


def bpf_tcp_port(port):
    """A classic BPF program: IPv4 TCP segments from or to port, each once
    (lo shows a segment going out and coming in: the outgoing copy is
    dropped); those without payload (bare ACKs) cut to their headers.
    Jump offsets count from the next one."""
    skf_ad_pkttype = 0xfffff000 + 4
    prog = [
        (0x20, 0, 0, skf_ad_pkttype),  # 0 ld pkttype
        (0x15, 22, 0, PACKET_OUTGOING),  # 1 the outgoing copy: drop
        (0x28, 0, 0, 12),            # 2 ldh [12]: ethertype
        (0x15, 0, 20, 0x0800),       # 3 IPv4?
        (0x30, 0, 0, 23),            # 4 ldb [23]: protocol
        (0x15, 0, 18, 6),            # 5 TCP?
        (0x28, 0, 0, 20),            # 6 ldh [20]: fragment offset
        (0x45, 16, 0, 0x1fff),       # 7 a fragment: drop
        (0xb1, 0, 0, 14),            # 8 ldxb 4*([14]&0xf): X = IP header length
        (0x48, 0, 0, 14),            # 9 ldh [x+14]: source port
        (0x15, 2, 0, port),          # 10
        (0x48, 0, 0, 16),            # 11 ldh [x+16]: destination port
        (0x15, 0, 11, port),         # 12
        (0x28, 0, 0, 16),            # 13 ldh [16]: IP total length
        (0x1c, 0, 0, 0),             # 14 A -= X: the TCP segment's length
        (0x02, 0, 0, 0),             # 15 st M[0]
        (0x50, 0, 0, 26),            # 16 ldb [x+26]: TCP data offset
        (0x74, 0, 0, 2),             # 17 A >>= 2
        (0x54, 0, 0, 0x3c),          # 18 A &= 0x3c: the TCP header's length
        (0x07, 0, 0, 0),             # 19 tax
        (0x60, 0, 0, 0),             # 20 ld M[0]
        (0x2d, 0, 1, 0),             # 21 payload (A > X)?
        (0x06, 0, 0, 262144),        # 22 accept
        (0x06, 0, 0, 128),           # 23 a bare ACK: its headers
        (0x06, 0, 0, 0),             # 24 drop
    ]
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


class Capture:
    """Every TCP segment to or from port on lo, read by a thread into
    memory (the kernel's buffer is made large as well)."""

    def __init__(self, port):
        self.port = port
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        prog = bpf_tcp_port(port)
        buf = ctypes.create_string_buffer(prog)
        fprog = struct.pack("HL", len(prog) // 8, ctypes.addressof(buf))
        self._prog = buf
        self.sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)     # SO_RCVBUFFORCE
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        self.rcvbuf = self.sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
        self.sock.bind(("lo", 0))
        self.sock.settimeout(0.2)
        self.packets = []
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            try:
                data, addr = self.sock.recvfrom(262144)
            except socket.timeout:
                continue
            if addr[2] != PACKET_OUTGOING:        # lo shows each segment twice
                self.packets.append(data)

    def finish(self):
        time.sleep(0.3)
        self.stop = True
        self.thread.join()
        stats = self.sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8)
        self.sock.close()
        _, drops = struct.unpack("II", stats)
        return drops


def streams_of(packets, server_port):
    """{(client port, 'out'|'in'): bytes}: each connection's stream from
    the server ('out') and to it ('in'), and the segments with payload
    each way (and those without: 'out_acks', 'in_acks')."""
    flows, nseg, gaps = {}, collections.Counter(), 0
    for pkt in packets:
        ip = pkt[14:]
        ihl = (ip[0] & 0xf) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        off = (tcp[12] >> 4) * 4
        payload = tcp[off:]
        key = (dport, "out") if sport == server_port else (sport, "in")
        if not payload:
            nseg[key[1] + "_acks"] += 1
            continue
        nseg[key[1]] += 1
        f = flows.get(key)
        if f is None:
            flows[key] = f = [seq, bytearray()]
        if seq == f[0]:
            f[1] += payload
            f[0] = (seq + len(payload)) & 0xffffffff
        elif (f[0] - seq) & 0xffffffff < 0x80000000:
            skip = (f[0] - seq) & 0xffffffff          # a retransmission
            if skip < len(payload):
                f[1] += payload[skip:]
                f[0] = (seq + len(payload)) & 0xffffffff
        else:
            gaps += 1
    return {k: bytes(v[1]) for k, v in flows.items()}, nseg, gaps


def records(stream):
    """(records, record bytes) of a TLS byte stream, whole records only."""
    n = size = 0
    i = 0
    while i + 5 <= len(stream):
        length = struct.unpack(">H", stream[i + 3:i + 5])[0]
        if i + 5 + length > len(stream):
            break
        n += 1
        size += 5 + length
        i += 5 + length
    return n, size


SCHED_EVENTS = [("raw_syscalls:sys_enter", "client_syscalls"),
                ("sched:sched_waking", "client_wakeups"), ("ipi:ipi_send_cpu", "client_ipis")]
SERVER_EVENTS = [("raw_syscalls:sys_enter", "server_syscalls"),
                 ("syscalls:sys_enter_epoll_wait", "server_waits"),
                 ("syscalls:sys_enter_epoll_pwait", "server_waits")]


def server_sleeps(pids):
    """Voluntary context switches of the server's processes (all their
    threads: h2o runs its loop in one) so far."""
    n = 0
    for pid in pids:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            n += int(line.split()[1])
            except OSError:
                pass
    return n


def server_processes(pids):
    """Of the server's process tree, the server's own processes (h2o's
    tree has helper scripts that come and go)."""
    own = []
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().strip() not in ("perl", "sh"):
                    own.append(pid)
        except OSError:
            pass
    return own


def perf_counts(path, events):
    """{key: count} of perf stat -x, output for events [(event, key)], in
    their order (an event may come twice, filtered differently); keys that
    come twice add up."""
    r = collections.Counter()
    names = set(e for e, _ in events)
    with open(path) as f:
        lines = [x.strip().split(",") for x in f]
    lines = [x for x in lines if len(x) > 2 and x[2] in names]
    os.unlink(path)
    if [x[2] for x in lines] != [e for e, _ in events]:
        raise RuntimeError("perf stat: not the events asked for: %r" % lines)
    for fields, (_, key) in zip(lines, events):
        if fields[0].isdigit():
            r[key] += int(fields[0])
    return r


def process_names(pids):
    names = set()
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                names.add(f.read().strip())
        except OSError:
            pass
    return sorted(names)


def one_run(a, port, n, conns, streams, callgrind_dir=None, server_pids=()):
    """Counts of one h2load run of n requests."""
    url = "https://127.0.0.1:%d/hello.txt" % port
    argv = argv_h2load = ["h2load", "-n%d" % n, "-c%d" % conns, "-m%d" % streams, "-t1", url]
    if callgrind_dir:
        out = os.path.join(callgrind_dir, "callgrind.out.%d" % n)
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + argv
    perf_out = perf_server = None
    client_events = list(SCHED_EVENTS)
    if a.sched and not callgrind_dir:
        perf_out = os.path.join(tempfile.gettempdir(), "h2wire-perf.%d" % os.getpid())
        argv = ["perf", "stat", "-x,", "-o", perf_out,
                "-e", ",".join(e for e, _ in SCHED_EVENTS)]
        names = process_names(server_pids)
        if names:
            # the wake-ups of the server among them: a tracepoint filter on
            # the woken task's name
            argv += ["-e", "sched:sched_waking", "--filter",
                     " || ".join('comm == "%s"' % n for n in names)]
            client_events.append(("sched:sched_waking", "client_wakes_server"))
        argv += ["--"] + argv_h2load
    argv = ["taskset", "-c", str(a.client_cpu)] + argv
    if perf_out and server_pids:
        # the server's counts while h2load runs
        perf_server = perf_out + ".server"
        argv = ["perf", "stat", "-x,", "-o", perf_server,
                "-e", ",".join(e for e, _ in SERVER_EVENTS),
                "-p", ",".join(str(p) for p in server_pids), "--"] + argv
    sleeps0 = server_sleeps(server_pids)
    # (under callgrind the count of instructions is what is asked for: the
    # wire is counted by the runs without it)
    cap = None if callgrind_dir or a.sched else Capture(port)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.read().decode("utf-8", "replace")
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    drops = cap.finish() if cap else 0
    sleeps = server_sleeps(server_pids) - sleeps0
    if status != 0 or " %d succeeded" % n not in text:
        raise RuntimeError("h2load: not %d succeeded:\n%s" % (n, text))
    r = collections.Counter()
    gaps = 0
    if cap:
        flows, nseg, gaps = streams_of(cap.packets, port)
        for (_, way), data in flows.items():
            k, size = records(data)
            r[way + "_records"] += k
            r[way + "_bytes"] += size
        r["out_segments"] = nseg["out"]
        r["in_segments"] = nseg["in"]
        r["out_acks"] = nseg["out_acks"]
        r["in_acks"] = nseg["in_acks"]
    r["cpu_ms"] = (ru.ru_utime + ru.ru_stime) * 1000.0
    if perf_out:
        r["user_ms"] = ru.ru_utime * 1000.0
        r["sys_ms"] = ru.ru_stime * 1000.0
        r["server_sleeps"] = sleeps
        r.update(perf_counts(perf_out, client_events))
        if perf_server:
            r.update(perf_counts(perf_server, SERVER_EVENTS))
    if callgrind_dir:
        with open(out) as f:
            for line in f:
                if line.startswith("totals:") or line.startswith("summary:"):
                    r["client_ir"] = int(line.split()[1])
    if drops or gaps:
        raise RuntimeError("capture incomplete: %d dropped, %d gaps" % (drops, gaps))
    r["wall_ms"] = wall * 1000.0
    for line in text.splitlines():
        if line.startswith("traffic:"):
            r["h2load_traffic"] = line.strip()
    return r


def measure(a, reg, server, case, ctx, tmp):
    name, conns, streams = CASES[case]
    sc = scenario_table.select([name])[0]
    r, ctx = start_server(reg, server, sc, ctx, tmp, "wire-" + case, a.server_cpu)
    stmp = os.path.dirname(r.log_path)          # (its directory: callgrind's files)
    try:
        one_run(a, ctx["port"], conns * streams, conns, streams)      # warm-up
        pids = server_processes(r.tree()) if a.sched else ()
        runs = []
        for n in a.counts:
            runs.append(one_run(a, ctx["port"], n, conns, streams,
                                stmp if a.callgrind else None, pids))
        (n1, r1), (n2, r2) = zip(a.counts, runs)
        per = {k: (r2[k] - r1[k]) / float(n2 - n1) for k in r2 if not k.startswith("h2load")}
        per["traffic"] = r2.get("h2load_traffic", "")
        if a.callgrind and a.keep_profiles:
            os.makedirs(a.keep_profiles, exist_ok=True)
            for n in a.counts:
                shutil.copy(os.path.join(stmp, "callgrind.out.%d" % n),
                            os.path.join(a.keep_profiles, "%s-%s-%d" % (case, server.name, n)))
        return per
    finally:
        reg.stop(r)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--servers", default="scalwsd,nginx,h2o")
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--counts", default="2000,8000", help="N1,N2 requests")
    p.add_argument("--callgrind", action="store_true", help="h2load under callgrind as well")
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--scalwsd", default=os.environ.get("SCALWSD") or os.path.join(bench.SRC, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.environ.get("SCALWS_MODULES") or os.path.join(bench.SRC, "objs", "modules"))
    p.add_argument("--label", default="")
    p.add_argument("--scalwsd-http", default="", metavar="TEXT",
                   help='directives for scalwsd\'s http block, e.g. "etag off;"')
    p.add_argument("--scalwsd-events", default="", metavar="TEXT",
                   help='directives for scalwsd\'s events block, e.g. "wait_pause 200us;"')
    p.add_argument("--out", help="also append the Markdown table to this file")
    p.add_argument("--sched", action="store_true",
                   help="instead of the capture: h2load's user/system time, system calls, wake-ups and IPIs "
                        "(perf stat) and the server's sleeps")
    p.add_argument("--keep-profiles", metavar="DIR",
                   help="with --callgrind: keep h2load's callgrind files in DIR")
    a = p.parse_args(argv)
    a.counts = [int(x) for x in a.counts.split(",")]
    a.cases = bench.split_list(a.cases)
    for c in a.cases:
        if c not in CASES:
            p.error("unknown case %s (known: %s)" % (c, ", ".join(CASES)))
    return a


COLUMNS = [("out_records", "records to client", "%.3f"), ("out_bytes", "bytes to client", "%.1f"),
           ("out_segments", "segments to client", "%.3f"),
           ("out_acks", "bare ACKs to client", "%.3f"),
           ("in_records", "records from client", "%.3f"), ("in_bytes", "bytes from client", "%.1f"),
           ("in_acks", "bare ACKs from client", "%.3f"),
           ("cpu_ms", "h2load CPU us", "%.2f"), ("user_ms", "h2load user us", "%.2f"),
           ("sys_ms", "h2load system us", "%.2f"), ("client_syscalls", "h2load system calls", "%.3f"),
           ("client_wakeups", "h2load wake-ups", "%.4f"),
           ("client_wakes_server", "h2load wake-ups of the server", "%.4f"),
           ("client_ipis", "h2load IPIs", "%.4f"),
           ("server_sleeps", "server sleeps", "%.4f"),
           ("server_syscalls", "server system calls", "%.4f"),
           ("server_waits", "server epoll waits", "%.4f"),
           ("client_ir", "h2load instructions", "%.0f")]


def report(a, rows, versions, commands):
    m = bench.machine()
    lines = ["Run %s UTC on %s (%s CPUs, kernel %s), counts %s:" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()), m.get("Model name", "?"),
        m.get("CPU(s)", "?"), m["kernel"], ",".join(str(x) for x in a.counts)),
        "`bench/h2wire.py %s`" % " ".join(shlex.quote(x) for x in sys.argv[1:]), ""]
    for n, v in versions.items():
        label = " (%s)" % a.label if n == "scalwsd" and a.label else ""
        lines.append("- %s%s: %s" % (n, label, v))
    cols = [c for c in COLUMNS if any(c[0] in r for _, _, r in rows)]
    lines += ["", "Per response:", "",
              "| case | server | " + " | ".join(c[1] for c in cols) + " |",
              "|---|---|" + "---:|" * len(cols)]
    for case, name, r in rows:
        vals = []
        for key, _, fmt in cols:
            v = r.get(key)
            if key in ("cpu_ms", "user_ms", "sys_ms") and v is not None:
                v *= 1000.0                    # ms -> us per response
            vals.append(fmt % v if v is not None else "-")
        lines.append("| %s | %s | %s |" % (case, name, " | ".join(vals)))
    lines += ["", "h2load's traffic line of the N2 run:", ""]
    for case, name, r in rows:
        lines.append("- %s, %s: %s" % (case, name, r.get("traffic", "")))
    return "\n".join(lines)


def main(argv):
    a = parse_args(argv)
    if os.geteuid() != 0:
        bench.log("h2wire: the packet socket needs root")
        return 2
    for tool in ("h2load", "taskset") + (("valgrind",) if a.callgrind else ()) + (("perf",) if a.sched else ()):
        if shutil.which(tool) is None:
            bench.log("h2wire: %s is not installed" % tool)
            return 2
    servers = make_servers(a.scalwsd, a.modules_dir, scalwsd_http_conf=a.scalwsd_http)
    servers["scalwsd"].events_conf = a.scalwsd_events
    names = bench.split_list(a.servers)
    for n in names:
        if n not in servers or not servers[n].available():
            bench.log("h2wire: %s is not available" % n)
            return 2
    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-h2wire-")
    rows = []
    try:
        os.chmod(tmp, 0o755)
        ctx = make_context(tmp, a.modules_dir, 1024, True)
        versions = {n: servers[n].version() for n in names}
        for case in a.cases:
            for name in names:
                bench.log("[%s] %s" % (case, name))
                per = measure(a, reg, servers[name], case, ctx, tmp)
                bench.log("    " + ", ".join("%s %.3f" % (k, v) for k, v in sorted(per.items())
                                             if isinstance(v, float)))
                rows.append((case, name, per))
        print_report(report(a, rows, versions, ctx["commands"]), a.out)
        return 0
    finally:
        reg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
