#!/usr/bin/env python3
"""System calls per request of scalwsd, counted by `strace -c -f`.

As bench/callgrind.py measures instructions: the server runs as one process
(master_process off) under strace twice, once for N1 and once for N2
requests sent by the exact-count client of the scenario (bench/loadgen.py),
and (calls2 - calls1) / (N2 - N1) is what one request costs in steady
state, start-up and shutdown being the same in both runs. A count, not a
time: the machine's load does not change it.

    bench/syscalls.py [--scalwsd objs/scalwsd] [--modules-dir objs/modules]
                      [--scenarios respond,static-small] [--counts N1,N2]
                      [--events "use io_uring;" | --methods epoll,io_uring]
                      [--connection-each] [--connections 64] [--perf]
                      [--server nginx] [--detail]

--methods epoll,io_uring counts scalwsd once per event method and prints
the methods one after the other under each scenario (--events is then not
used).

--perf counts with `perf stat` on the syscall tracepoints instead of
strace: the server runs at its own speed (strace stops it at every call,
so many connections' requests pile up between two wake-ups), and only
the calls of the data path are named (PERF_CALLS; "other" is the rest).

--connections C sends the requests with `h2load --h1 -c C` (C keep-alive
connections, one request in flight on each, as wrk in bench/run) instead
of one connection: how the calls of many connections share a wake-up.
Scheduling makes those counts move a little from run to run. A scenario
that h2load loads over HTTP/2 (tls-h2-static-small, tls-h2-mux-small) is
sent over HTTP/2 and TLS then, as bench/run sends it, its streams per
connection included.

--h2o also counts h2o's calls (bench/configs/h2o, the same scenario,
client and counts; its whole process tree), printed beside the counted
server's for comparison.

A scenario with a backend (proxy: bench/backends.py's origin) has it
started as bench/budget.py does; only scalwsd's calls are counted.

--server nginx counts nginx (bench/configs/nginx, one process) instead of
scalwsd (--server h2o: h2o): the peer the front-end scenarios (node, python) are held against.

--detail traces every call (strace -f without -c) and also prints, per
request, the event waits (epoll_wait/epoll_pwait returns) with the events
per return, the connect() calls (new upstream connections: ~0 with
upstream keep-alive) and the calls that found nothing (EAGAIN); and, from
a third pair of runs with no tracer (a traced process stops at every
call), the server's voluntary context switches per request
(/proc/PID/status before it is stopped; with --perf, those of the counted
runs themselves, perf stat not stopping the server). With --perf, the reads that found
nothing are counted on exit tracepoints (PERF_EAGAIN) and the events per
return are not known (only strace sees return values): use --perf
--detail with --connections, where strace would slow the server into
batches no real load makes.

Prints, per scenario, the calls per request in all and the calls that make
them up (those of at least 0.01 per request).
"""

import argparse
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import backends                                             # noqa: E402
import loadgen                                              # noqa: E402
import run                                                  # noqa: E402
import scenarios as scenario_table                          # noqa: E402
from budget import make_docroot                             # noqa: E402
from procs import Registry, free_port, wait_port            # noqa: E402
from measure import process_tree                            # noqa: E402
from servers import H2o, Nginx, Scalwsd                     # noqa: E402

_ROW = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$")


def parse_strace_c(path):
    """{syscall: calls} from the table strace -c writes."""
    calls = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = _ROW.match(line)
            if m and m.group(2) != "total":
                calls[m.group(2)] = int(m.group(1))
    return calls


_CALL = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\((.*)\s+=\s+(-?\d+|\?)(?:\s+(E[A-Z]+))?")
_RESUMED = re.compile(r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?<\.\.\. (\w+) resumed>.*=\s+(-?\d+)(?:\s+(E[A-Z]+))?")


def parse_strace_full(path):
    """{key: count} from a full `strace -f` log: every call by name, and
    "waits"/"wait events" (epoll returns and the events they carried),
    "EAGAIN NAME" (calls that found nothing)."""
    calls = {}

    def add(k, v=1):
        calls[k] = calls.get(k, 0) + v

    with open(path, errors="replace") as f:
        for line in f:
            m = _CALL.match(line)
            if m:
                name, ret, err = m.group(1), m.group(3), m.group(4)
            else:
                m = _RESUMED.match(line)
                if not m:
                    continue
                name, ret, err = m.group(1), m.group(2), m.group(3)
            add(name)
            if err == "EAGAIN":
                add("EAGAIN " + name)
            if name in ("epoll_wait", "epoll_pwait", "epoll_pwait2") and ret.isdigit():
                add("waits")
                add("wait events", int(ret))
    return calls


def voluntary_switches(pid):
    """The process's voluntary context switches so far (its threads')."""
    total = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    total += int(line.split()[1])
    return total


def close_each(port, path, n, timeout=10.0):
    """n requests, each on a connection of its own ("Connection: close")."""
    req = ("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
           % path).encode()
    for i in range(n):
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(req)
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
            if not data.startswith(b"HTTP/1.1 200"):
                raise RuntimeError("request %d: %r" % (i, data[:200]))


def h2load_connections(port, scenario, n, connections, timeout=300.0):
    """n requests over `connections` connections with h2load: HTTP/2 over
    TLS with the scenario's streams in flight on each for an HTTP/2
    scenario (tls-h2-static-small), else HTTP/1.1 keep-alive; raises
    unless all n succeed with 2xx."""
    argv = ["h2load", "-n%d" % n, "-c%d" % connections, "-t1"]
    if scenario.load_tool in loadgen.H2LOAD_STREAMS:
        argv += ["-m%d" % loadgen.H2LOAD_STREAMS[scenario.load_tool],
                 "https://127.0.0.1:%d%s" % (port, scenario.path)]
    else:
        argv.append("--h1")
        for h in scenario.request_headers:
            argv += ["-H", h]
        argv.append("http://127.0.0.1:%d%s" % (port, scenario.path))
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                       check=False)
    r = loadgen.parse_h2load(p.stdout.decode("utf-8", "replace"))
    if r["requests"] != n or r["non2xx"] or r["socket_errors"]:
        raise RuntimeError("h2load: %s of %d requests done, %d non-2xx, %s"
                           % (r["requests"], n, r["non2xx"], r["errors_detail"] or "no errors"))


# --perf: the calls counted by name (tracepoints syscalls:sys_enter_NAME)
PERF_CALLS = ("io_uring_enter", "epoll_pwait", "epoll_wait", "epoll_ctl", "recvfrom",
              "recvmsg", "readv", "sendto", "sendmsg", "writev", "sendfile64", "accept4",
              "connect", "getsockopt", "close")
# with --detail: reads that found nothing (exit tracepoints filtered on -EAGAIN)
PERF_EAGAIN = ("recvfrom", "recvmsg", "readv")


def parse_perf_stat(path):
    """{syscall: calls} from `perf stat -x,` output; "other" is what the
    named calls leave of raw_syscalls:sys_enter."""
    calls, total = {}, 0
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 3 or not parts[0].isdigit():
                continue
            if parts[2] == "raw_syscalls:sys_enter":
                total = int(parts[0])
            elif parts[2].startswith("syscalls:sys_enter_"):
                calls[parts[2][len("syscalls:sys_enter_"):]] = int(parts[0])
            elif parts[2].startswith("syscalls:sys_exit_"):
                calls["EAGAIN " + parts[2][len("syscalls:sys_exit_"):]] = int(parts[0])
    calls["other"] = total - sum(v for k, v in calls.items() if not k.startswith("EAGAIN "))
    return calls


def one_run(reg, server, scenario, ctx, n, work_dir, per_connection=False, connections=0,
            perf=False, mode="count"):
    """mode: "count" (strace -c or perf), "detail" (strace -f, every call),
    "switches" (no tracer: {"voluntary switches": N})."""
    os.makedirs(work_dir, exist_ok=True)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, scenario, single=True, tmp=work_dir)
    out = os.path.join(work_dir, "strace.txt")
    if perf:
        events = ",".join(["raw_syscalls:sys_enter"]
                          + ["syscalls:sys_enter_" + c for c in PERF_CALLS])
        argv = ["perf", "stat", "-x,", "-o", out, "-e", events]
        if mode == "detail":
            for c in PERF_EAGAIN:
                argv += ["-e", "syscalls:sys_exit_" + c, "--filter", "ret == -11"]
        argv += ["--"] + server.argv(conf, work_dir)
    elif mode == "detail":
        argv = ["strace", "-f", "-o", out] + server.argv(conf, work_dir)
    elif mode == "switches":
        argv = server.argv(conf, work_dir)
    else:
        argv = ["strace", "-f", "-c", "-o", out] + server.argv(conf, work_dir)
    r = reg.start(server.name + "-strace", argv, os.path.join(work_dir, "server.log"),
                  stop_signal=server.stop_signal)
    try:
        if not wait_port(ctx["port"], r.popen, timeout=30):
            raise RuntimeError("%s did not start under strace:\n%s" % (server.name, r.log_tail()))
        if per_connection:
            close_each(ctx["port"], scenario.path, n)
        elif connections:
            h2load_connections(ctx["port"], scenario, n, connections)
        else:
            loadgen.exact(scenario, ctx["port"], n, timeout=300)
        # The server itself is stopped, so that strace sees it exit and
        # writes its table (strace stopped by a signal may write none):
        # by its pid file, or (h2o) the process the tracer runs.
        pid_file = os.path.join(work_dir, server.name + ".pid")
        if os.path.exists(pid_file):
            with open(pid_file) as f:
                pid = int(f.read().split()[0])
            stop = signal.SIGTERM
        else:
            tree = process_tree(r.pid)
            pid = tree[0] if mode == "switches" else tree[1]
            stop = server.stop_signal
        # a traced process stops at every call: its switches are strace's
        switches = voluntary_switches(pid) if mode == "switches" or perf else 0
        os.kill(pid, stop)
        r.popen.wait(timeout=30)
    finally:
        reg.stop(r, timeout=30)
    if mode == "switches":
        return {"voluntary switches": switches}
    if mode == "detail" and not perf:
        return parse_strace_full(out)
    if perf:
        return dict(parse_perf_stat(out), **{"voluntary switches": switches})
    return parse_strace_c(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = os.path.dirname(BENCH)
    p.add_argument("--scalwsd", default=os.path.join(src, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.path.join(src, "objs", "modules"))
    p.add_argument("--scenarios", default="respond,static-small")
    p.add_argument("--counts", default="1000,3000")
    p.add_argument("--events", default="", metavar="TEXT",
                   help='directives for the events block, e.g. "use io_uring;"')
    p.add_argument("--methods", default="", metavar="M1,M2",
                   help="scalwsd's event methods to count side by side, e.g. epoll,io_uring")
    p.add_argument("--connection-each", action="store_true",
                   help="a new connection for each request (Connection: close)")
    p.add_argument("--connections", type=int, default=0, metavar="C",
                   help="C keep-alive connections at once (h2load --h1), not one")
    p.add_argument("--perf", action="store_true",
                   help="count with perf stat (syscall tracepoints), not strace")
    p.add_argument("--server", default="scalwsd", choices=("scalwsd", "nginx", "h2o"),
                   help="the server counted (nginx, h2o: bench/configs, as a peer)")
    p.add_argument("--h2o", action="store_true",
                   help="also count h2o's calls on the same scenarios (printed, for comparison)")
    p.add_argument("--detail", action="store_true",
                   help="trace every call: event waits and events per wait, connects, "
                        "EAGAIN reads, and the voluntary context switches")
    a = p.parse_args(argv)
    if a.perf and shutil.which("perf") is None:
        print("system calls: perf is not installed (linux-perf)")
        return 2
    if a.connections and shutil.which("h2load") is None:
        print("system calls: h2load is not installed (nghttp2-client)")
        return 2

    if not a.perf and shutil.which("strace") is None:
        print("system calls: skipped: strace is not installed")
        return 0
    n1, n2 = (int(x) for x in a.counts.split(","))
    table = {sc.name: sc for sc in scenario_table.SCENARIOS}
    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-syscalls-")
    os.chmod(tmp, 0o755)
    if a.server == "nginx":
        servers = [Nginx()]
    elif a.server == "h2o":
        servers = [H2o()]
    else:
        # one scalwsd per event method counted
        methods = ([(m, "" if m == "epoll" else "use %s;" % m) for m in a.methods.split(",")]
                   if a.methods else [(a.events or "epoll", a.events)])
        servers = []
        for label, events in methods:
            servers.append(Scalwsd(os.path.abspath(a.scalwsd), os.path.abspath(a.modules_dir),
                                   events_conf=events))
            servers[-1].label = label
    if a.h2o and a.server != "h2o":
        servers.append(H2o())
    for server in servers:
        if server.name == "h2o" and not server.available():
            print("system calls: h2o is not installed")
            return 2
    # (the TLS scenarios' certificate, as bench/run and bench/budget.py make it)
    ctx = {"docroot": make_docroot(tmp), "modules_dir": os.path.abspath(a.modules_dir),
           "placeholders": dict({"UPSTREAM_KEEPALIVE": "64"}, **run.make_certificate(tmp))}
    with open(os.path.join(ctx["docroot"], "1m.bin"), "wb") as f:     # static-1m
        f.write(os.urandom(1 << 20))
    try:
        for name, server in [(n, s) for n in a.scenarios.split(",") for s in servers]:
            sc = table[name]
            if server.name != "scalwsd" and (server.name in sc.not_applicable
                                             or server.kind() not in sc.fragments):
                print("%-14s %s: not configured for this scenario" % (name, server.name))
                continue
            label = getattr(server, "label", "")
            run_dir = os.path.join(tmp, "%s-%s%s" % (name, server.name,
                                                     re.sub(r"\W+", "_", label)))
            sc = dataclasses.replace(sc, callgrind_counts=(n1, n2))
            backend = None
            rctx = ctx
            try:
                if sc.backend:
                    backend = backends.BACKENDS[sc.backend].start(reg, tmp, 1, lambda m: None)
                    rctx = dict(ctx, placeholders=dict(ctx["placeholders"],
                                                       **backend.placeholders))
                mode = "detail" if a.detail else "count"
                c1 = one_run(reg, server, sc, rctx, n1, run_dir + "-n1",
                             a.connection_each, a.connections, a.perf, mode)
                c2 = one_run(reg, server, sc, rctx, n2, run_dir + "-n2",
                             a.connection_each, a.connections, a.perf, mode)
                if a.detail and not a.perf:
                    s1 = one_run(reg, server, sc, rctx, n1, run_dir + "-s1",
                                 a.connection_each, a.connections, False, "switches")
                    s2 = one_run(reg, server, sc, rctx, n2, run_dir + "-s2",
                                 a.connection_each, a.connections, False, "switches")
                    c1.update(s1)
                    c2.update(s2)
            finally:
                if backend:
                    backend.stop()
            per = {k: (c2.get(k, 0) - c1.get(k, 0)) / float(n2 - n1) for k in set(c1) | set(c2)}
            extra = {k: per.pop(k) for k in list(per)
                     if k in ("waits", "wait events", "voluntary switches")
                     or k.startswith("EAGAIN ")}
            parts = sorted(((v, k) for k, v in per.items() if abs(v) >= 0.01), reverse=True)
            if a.detail:
                waits = extra.get("waits", per.get("epoll_pwait", 0) + per.get("epoll_wait", 0))
                parts.append((0, "|"))
                parts += [(waits, "epoll returns"),
                          (extra.get("wait events", 0) / waits if waits else 0, "events/return"),
                          (extra.get("voluntary switches", 0), "voluntary switches"),
                          (per.get("connect", 0), "connects")]
                parts += sorted((v, k) for k, v in extra.items() if k.startswith("EAGAIN "))
            print("%-14s %s %5.2f system calls/request (%s%s%s)%s" % (
                name, server.name, sum(per.values()),
                label,
                ", a connection each" if a.connection_each else "",
                ", %d connections" % a.connections if a.connections else "",
                "".join("  %s %.2f" % (k, v) if k != "|" else "  |" for v, k in parts)))
    finally:
        reg.cleanup()
        if os.environ.get("SWS_KEEP_TMP"):
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
