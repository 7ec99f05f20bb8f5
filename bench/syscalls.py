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

--methods epoll,io_uring counts each scenario once per event method and
prints the methods side by side, one line each under the scenario's name
(--events is then not used).

--perf counts with `perf stat` on the syscall tracepoints instead of
strace: the server runs at its own speed (strace stops it at every call,
so many connections' requests pile up between two wake-ups), and only
the calls of the data path are named (PERF_CALLS; "other" is the rest).

--connections C sends the requests with `h2load --h1 -c C` (C keep-alive
connections, one request in flight on each, as wrk in bench/run) instead
of one connection: how the calls of many connections share a wake-up.
Scheduling makes those counts move a little from run to run.

A scenario with a backend (proxy: bench/backends.py's origin) has it
started as bench/budget.py does; only scalwsd's calls are counted.

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
import scenarios as scenario_table                          # noqa: E402
from budget import make_docroot                             # noqa: E402
from procs import Registry, free_port, wait_port            # noqa: E402
from servers import Scalwsd                                 # noqa: E402

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


def h1_connections(port, scenario, n, connections, timeout=300.0):
    """n HTTP/1.1 keep-alive requests over `connections` connections with
    h2load; raises unless all n succeed with 2xx."""
    argv = ["h2load", "--h1", "-n%d" % n, "-c%d" % connections, "-t1"]
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
PERF_CALLS = ("io_uring_enter", "epoll_pwait", "recvfrom", "sendto", "sendmsg", "writev",
              "sendfile64", "accept4", "close")


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
    calls["other"] = total - sum(calls.values())
    return calls


def one_run(reg, server, scenario, ctx, n, work_dir, per_connection=False, connections=0,
            perf=False):
    os.makedirs(work_dir, exist_ok=True)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, scenario, single=True, tmp=work_dir)
    out = os.path.join(work_dir, "strace.txt")
    if perf:
        events = ",".join(["raw_syscalls:sys_enter"]
                          + ["syscalls:sys_enter_" + c for c in PERF_CALLS])
        argv = ["perf", "stat", "-x,", "-o", out, "-e", events, "--"] + server.argv(conf, work_dir)
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
            h1_connections(ctx["port"], scenario, n, connections)
        else:
            loadgen.exact(scenario, ctx["port"], n, timeout=300)
        # The server itself is stopped, so that strace sees it exit and
        # writes its table (strace stopped by a signal may write none).
        with open(os.path.join(work_dir, "scalwsd.pid")) as f:
            os.kill(int(f.read().split()[0]), signal.SIGTERM)
        r.popen.wait(timeout=30)
    finally:
        reg.stop(r, timeout=30)
    return parse_perf_stat(out) if perf else parse_strace_c(out)


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
                   help="event methods to count side by side, e.g. epoll,io_uring")
    p.add_argument("--connection-each", action="store_true",
                   help="a new connection for each request (Connection: close)")
    p.add_argument("--connections", type=int, default=0, metavar="C",
                   help="C keep-alive connections at once (h2load --h1), not one")
    p.add_argument("--perf", action="store_true",
                   help="count with perf stat (syscall tracepoints), not strace")
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
    # (label, events block text) per method counted
    methods = ([(m, "" if m == "epoll" else "use %s;" % m) for m in a.methods.split(",")]
               if a.methods else [(a.events or "epoll", a.events)])
    servers = [(label, Scalwsd(os.path.abspath(a.scalwsd), os.path.abspath(a.modules_dir),
                               events_conf=events)) for label, events in methods]
    ctx = {"docroot": make_docroot(tmp), "modules_dir": os.path.abspath(a.modules_dir),
           "placeholders": {"UPSTREAM_KEEPALIVE": "64"}}
    with open(os.path.join(ctx["docroot"], "1m.bin"), "wb") as f:     # static-1m
        f.write(os.urandom(1 << 20))
    try:
        for name in a.scenarios.split(","):
            sc = table[name]
            sc = dataclasses.replace(sc, callgrind_counts=(n1, n2))
            backend = None
            rctx = ctx
            try:
                if sc.backend:
                    backend = backends.BACKENDS[sc.backend].start(reg, tmp, 1, lambda m: None)
                    rctx = dict(ctx, placeholders=dict(ctx["placeholders"],
                                                       **backend.placeholders))
                per_method = []
                for label, server in servers:
                    wd = os.path.join(tmp, "%s-%s" % (name, re.sub(r"\W+", "_", label)))
                    c1 = one_run(reg, server, sc, rctx, n1, wd + "-n1",
                                 a.connection_each, a.connections, a.perf)
                    c2 = one_run(reg, server, sc, rctx, n2, wd + "-n2",
                                 a.connection_each, a.connections, a.perf)
                    per_method.append((label, {k: (c2.get(k, 0) - c1.get(k, 0)) / float(n2 - n1)
                                               for k in set(c1) | set(c2)}))
            finally:
                if backend:
                    backend.stop()
            how = "%s%s" % (", a connection each" if a.connection_each else "",
                            ", %d connections" % a.connections if a.connections else "")
            for label, per in per_method:
                parts = sorted(((v, k) for k, v in per.items() if abs(v) >= 0.01), reverse=True)
                if len(per_method) == 1:
                    print("%-14s %5.2f system calls/request (%s%s)%s" % (
                        name, sum(per.values()), label, how,
                        "".join("  %s %.2f" % (k, v) for v, k in parts)))
                else:
                    if label == per_method[0][0]:
                        print("%s%s" % (name, how))
                    print("  %-12s %5.2f system calls/request%s" % (
                        label, sum(per.values()),
                        "".join("  %s %.2f" % (k, v) for v, k in parts)))
    finally:
        reg.cleanup()
        if os.environ.get("SWS_KEEP_TMP"):
            print("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
