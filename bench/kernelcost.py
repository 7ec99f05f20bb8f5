#!/usr/bin/env python3
"""The kernel's side of one scenario's request, server by server, from the
kernel's own counters rather than from a load test's wall clock.

Each server runs as one process (master_process off) pinned to one CPU,
its scenario's backend on the other; a client pinned beside the backend
sends N requests one after the other on one keep-alive connection, or
spread over K connections with --connections K (64: bench/run's wrk
regime, each connection asking again once it has read a whole response).
The servers: scalwsd, nginx and the floor (bench/floor.c). Over those N
requests, per request:

  cpu           the server's CPU time: the scheduler's exact run time
                (/proc/PID/schedstat)
  user, sys     that time split as /proc/PID/stat splits it (in clock
                ticks: coarse over short runs)
  segs, data    TCP segments the server's client socket sent, and those
                with data (ss -ti: segs_out, data_segs_out)
  events        with --events, tracepoints per request (perf stat -p on
                the server's process: system calls, skbs sent and received,
                allocations, wake-ups, softirqs; counts, not times)

Servers are measured in turns, round after round, so that a change of the
machine's load shows as spread between rounds, not as a difference between
servers; the minimum of the rounds is the figure least touched by other
processes on a shared machine (their load only ever adds). --perf FILE samples where the server's process spends its CPU
time during one more run of each server (perf record -e cpu-clock -p PID:
shares of its own run time, which other processes' load changes little),
FILE.SERVER; --strace FILE writes the system calls of 3 more requests;
--syscalls counts each system call per request (strace -c over one more
run of N requests).

    bench/kernelcost.py [--scalwsd objs/scalwsd] [--modules-dir objs/modules]
        [--scenario cache-hit-file] [--servers scalwsd,nginx,floor]
        [--requests 20000] [--connections 1] [--rounds 3] [--events]
        [--syscalls] [--perf /tmp/kc] [--strace /tmp/kc]
        [--scalwsd-http-conf TEXT]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import backends                                              # noqa: E402
import scenarios as scenario_table                           # noqa: E402
from budget import make_docroot                              # noqa: E402
from procs import Registry, free_port, wait_port             # noqa: E402
from syscalls import parse_strace_c                          # noqa: E402
from servers import Floor, Nginx, Scalwsd                    # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")

# The client: N requests in all on K keep-alive connections (K = 1: one
# after the other; K = 64: wrk's regime, each connection sending its next
# request once it has read the last byte of the previous response), each
# response read to its last byte and checked.
CLIENT = r"""
import selectors, socket, sys
port, path, n, k = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
req = ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()
sel = selectors.DefaultSelector()
buf = bytearray(1 << 20)
view = memoryview(buf)
sent = done = 0
class Conn:
    pass
conns = []
for i in range(min(k, n)):
    c = Conn()
    c.s = socket.create_connection(("127.0.0.1", port))
    c.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.s.setblocking(False)
    c.got, c.need, c.head = 0, -1, bytearray()
    conns.append(c)
    sel.register(c.s, selectors.EVENT_READ, c)
    c.s.sendall(req)
    sent += 1
while done < n:
    for key, _ in sel.select(30):
        c = key.data
        try:
            r = c.s.recv_into(view)
        except BlockingIOError:
            continue
        if r == 0:
            raise SystemExit("closed after %d requests" % done)
        if c.need < 0:
            c.head += view[:r]
            end = c.head.find(b"\r\n\r\n")
            if end < 0:
                continue
            head = bytes(c.head[:end]).lower()
            if not head.startswith(b"http/1.1 200"):
                raise SystemExit("request %d: %r" % (done, head[:100]))
            cl = head.index(b"content-length:") + 15
            cr = head.find(b"\r", cl)       # the last field has none after it
            c.need = end + 4 + int(head[cl:cr if cr >= 0 else len(head)])
            c.got = len(c.head)
            c.head = bytearray()
        else:
            c.got += r
        if c.got > c.need:
            raise SystemExit("request %d: %d bytes, not %d" % (done, c.got, c.need))
        if c.got == c.need:
            done += 1
            c.got, c.need = 0, -1
            if sent < n:
                c.s.sendall(req)
                sent += 1
sys.stdout.write("ok\n")
sys.stdout.flush()
sys.stdin.read()          # the connections stay open until the harness has read ss
"""


def cpu_times(pid):
    """(user, sys) seconds of pid: /proc/PID/stat's split applied to the
    exact run time of /proc/PID/schedstat."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ut, st = int(fields[11]), int(fields[12])
    with open("/proc/%d/schedstat" % pid) as f:
        run = int(f.read().split()[0]) / 1e9
    if ut + st == 0:
        return 0.0, 0.0
    return run * ut / (ut + st), run * st / (ut + st)


def socket_counts(port):
    """segs_out, data_segs_out of the server's side of the connections to
    the client (their local port is the server's), summed."""
    out = subprocess.run(["ss", "-tinH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True).stdout
    segs = sum(int(x) for x in re.findall(r"\bsegs_out:(\d+)", out))
    data = sum(int(x) for x in re.findall(r"\bdata_segs_out:(\d+)", out))
    return segs, data


def client(port, path, n, cpu, connections=1):
    return subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c", CLIENT,
                             str(port), path, str(n), str(connections)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def measure(server_pid, port, path, n, cpu, events, connections=1):
    """One run of n requests: the per-request figures."""
    perf = None
    u0, s0 = cpu_times(server_pid)
    if events:
        perf_out = tempfile.mktemp(prefix="kc-perf-")
        perf = subprocess.Popen(["perf", "stat", "-x,", "-o", perf_out, "-e",
                                 ",".join(events), "-p", str(server_pid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
    c = client(port, path, n, cpu, connections)
    line = c.stdout.readline()
    if line.strip() != "ok":
        raise RuntimeError("client: %r" % line)
    u1, s1 = cpu_times(server_pid)
    segs, data = socket_counts(port)
    c.stdin.close()
    c.wait(timeout=10)
    res = {"cpu": (u1 + s1 - u0 - s0) / n * 1e6,
           "user": (u1 - u0) / n * 1e6, "sys": (s1 - s0) / n * 1e6,
           "segs": segs / float(n), "data": data / float(n)}
    if perf:
        perf.send_signal(2)
        perf.wait(timeout=10)
        with open(perf_out) as f:
            for row in f:
                parts = row.split(",")
                if len(parts) > 2 and parts[2] in events and parts[0].isdigit():
                    res[SHORT.get(parts[2], parts[2])] = int(parts[0]) / float(n)
        os.unlink(perf_out)
    return res


# Tracepoints counted per request with --events (counts, not times: the
# machine's load does not change them). The server's process only: what
# runs in its context, the softirqs its sends raise on its CPU included.
EVENTS = ["raw_syscalls:sys_enter", "net:net_dev_xmit", "net:netif_receive_skb",
          "skb:consume_skb", "skb:kfree_skb", "kmem:kmalloc", "kmem:kmem_cache_alloc",
          "kmem:mm_page_alloc", "sched:sched_wakeup", "sched:sched_switch",
          "ipi:ipi_send_cpu", "irq:softirq_entry", "sock:sk_data_ready", "tcp:tcp_probe",
          "filemap:mm_filemap_get_pages"]
SHORT = {"raw_syscalls:sys_enter": "syscalls"}


def start_server(reg, server, sc, ctx, tmp, cpu, env=None):
    os.makedirs(tmp, exist_ok=True)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, sc, single=True, tmp=tmp)
    run = reg.start(server.name, ["taskset", "-c", str(cpu)] + server.argv(conf, tmp),
                    os.path.join(tmp, "server.log"), stop_signal=server.stop_signal,
                    env=env)
    if not wait_port(ctx["port"], run.popen, timeout=30):
        raise RuntimeError("%s did not start:\n%s" % (server.name, run.log_tail()))
    # taskset execs the server: the pid is the server's
    return run, ctx["port"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = os.path.dirname(BENCH)
    p.add_argument("--scalwsd", default=os.path.join(src, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.path.join(src, "objs", "modules"))
    p.add_argument("--scenario", default="cache-hit-file")
    p.add_argument("--servers", default="scalwsd,nginx",
                   help="scalwsd, nginx, floor, or SERVER+VAR=VALUE: with VAR=VALUE in its "
                        "environment (a variant of the same binary)")
    p.add_argument("--requests", type=int, default=20000)
    p.add_argument("--connections", type=int, default=1,
                   help="keep-alive connections the client spreads the requests over "
                        "(64: wrk's regime in bench/run; 1: one request after the other)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--settle", type=float, default=0.0, metavar="SECONDS",
                   help="wait this long after the first requests (the fill) before measuring")
    p.add_argument("--events", action="store_true",
                   help="count the tracepoints of EVENTS per request (perf stat -p)")
    p.add_argument("--perf", metavar="FILE")
    p.add_argument("--strace", metavar="FILE",
                   help="strace the server over 3 more requests into FILE.SERVER")
    p.add_argument("--syscalls", action="store_true",
                   help="each system call's count per request (strace -c over one more "
                        "run of --requests)")
    p.add_argument("--scalwsd-http-conf", default="")
    a = p.parse_args(argv)

    sc = {s.name: s for s in scenario_table.SCENARIOS}[a.scenario]
    all_servers = {"scalwsd": Scalwsd(os.path.abspath(a.scalwsd),
                                      os.path.abspath(a.modules_dir),
                                      http_conf=a.scalwsd_http_conf),
                   "nginx": Nginx(), "floor": Floor()}
    names = a.servers.split(",")
    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-kernelcost-")
    os.chmod(tmp, 0o755)
    ctx = {"docroot": make_docroot(tmp), "modules_dir": os.path.abspath(a.modules_dir),
           "placeholders": {"UPSTREAM_KEEPALIVE": "64"}}
    origin = None
    running = {}
    try:
        if sc.backend:
            origin = backends.BACKENDS[sc.backend].start(reg, tmp, a.client_cpu,
                                                         os.path.join(tmp, "backend.log"))
            ctx["placeholders"].update(origin.placeholders)
        for i, name in enumerate(names):
            # NAME+VAR=VALUE: the server with VAR=VALUE in its environment
            base, _, assign = name.partition("+")
            env = None
            if assign:
                var, _, value = assign.partition("=")
                env = dict(os.environ, **{var: value})
            run, port = start_server(reg, all_servers[base], sc, ctx,
                                     os.path.join(tmp, "s%d" % i), a.server_cpu, env)
            running[name] = (run, port)
            c = client(port, sc.path, 200, a.client_cpu)       # the fill, a warm cache
            assert c.stdout.readline().strip() == "ok"
            c.stdin.close()
            c.wait(timeout=10)
        time.sleep(a.settle)
        rows = {name: [] for name in names}
        for rnd in range(a.rounds):
            for name in names:
                run, port = running[name]
                rows[name].append(measure(run.popen.pid, port, sc.path, a.requests,
                                          a.client_cpu, EVENTS if a.events else None,
                                          a.connections))
        print("%s, %d requests a run on %d connection(s), %d rounds, server on CPU %d, "
              "client on CPU %d" % (a.scenario, a.requests, a.connections, a.rounds,
                                    a.server_cpu, a.client_cpu))
        for name in names:
            keys = ["cpu", "user", "sys", "segs", "data"] + [SHORT.get(e, e) for e in EVENTS]
            for k in keys:
                vals = [r[k] for r in rows[name] if k in r]
                if vals:
                    srt = sorted(vals)
                    print("  %-8s %-28s %s   min %.2f median %.2f" % (
                        name, k, " ".join("%7.2f" % v for v in vals), srt[0],
                        srt[len(srt) // 2]))
        if a.syscalls:
            for name in names:
                run, port = running[name]
                out = os.path.join(tmp, "strace-c.%s" % name)
                st = subprocess.Popen(["strace", "-c", "-f", "-p", str(run.popen.pid),
                                       "-o", out],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                measure(run.popen.pid, port, sc.path, a.requests, a.client_cpu, False,
                        a.connections)
                time.sleep(0.2)
                st.send_signal(2)
                st.wait(timeout=30)
                calls = parse_strace_c(out)
                parts = sorted(((v, k) for k, v in calls.items()), reverse=True)
                print("  %-8s %5.2f system calls/request (strace -c):%s" % (
                    name, sum(calls.values()) / float(a.requests),
                    "".join("  %s %.2f" % (k, v / float(a.requests)) for v, k in parts
                            if v / float(a.requests) >= 0.01)))
        if a.strace:
            for name in names:
                run, port = running[name]
                st = subprocess.Popen(["strace", "-f", "-tt", "-p", str(run.popen.pid),
                                       "-o", "%s.%s" % (a.strace, name)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                measure(run.popen.pid, port, sc.path, 3, a.client_cpu, False)
                time.sleep(0.2)
                st.send_signal(2)
                st.wait(timeout=10)
                print("  strace: %s.%s" % (a.strace, name))
        if a.perf:
            for name in names:
                run, port = running[name]
                rec = subprocess.Popen(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "20000",
                                        "-p", str(run.popen.pid),
                                        "-o", "%s.%s" % (a.perf, name.replace("+", "_"))],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                measure(run.popen.pid, port, sc.path, a.requests, a.client_cpu, False)
                rec.send_signal(2)
                rec.wait(timeout=60)
                print("  perf data: %s.%s (%d requests)" % (a.perf, name.replace("+", "_"),
                                                            a.requests))
    finally:
        for name, (run, port) in running.items():
            reg.stop(run, timeout=10)
        if origin:
            origin.stop()
        reg.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
