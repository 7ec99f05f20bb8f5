"""User-space instructions per request with callgrind.

The server runs as one process under `valgrind --tool=callgrind` twice: once
for N1 requests and once for N2, each sent by the sequential keep-alive client
on one connection (over TLS in the TLS scenarios; HTTP/2 by h2load in
tls-h2-static-small; a new connection each in the handshake ones). Start-up, the first-request warm-up and shutdown are the
same in both runs, so (Ir2 - Ir1) / (N2 - N1) is the cost of one request in
steady state; being a count of instructions, not of time, it does not depend
on the machine's load. The same difference taken per function (from
callgrind_annotate) gives the per-request profile.
"""

import glob
import os
import re
import subprocess

import loadgen
from procs import free_port, wait_port


def valgrind_argv(out_dir, cpu):
    return ["taskset", "-c", str(cpu), "valgrind", "--tool=callgrind",
            "--callgrind-out-file=%s/callgrind.out.%%p" % out_dir,
            "--dump-instr=no", "--vgdb=yes"]


def _totals(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise ValueError("no totals in %s" % path)


def one_run(reg, server, scenario, ctx, n, work_dir, cpu, log):
    """Starts `server` under callgrind, sends n requests, stops it; returns
    (Ir total, callgrind output file)."""
    os.makedirs(work_dir, exist_ok=True)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, scenario, single=True, tmp=work_dir)
    argv = valgrind_argv(work_dir, cpu) + server.argv(conf, work_dir)
    r = reg.start(server.name + "-callgrind", argv, os.path.join(work_dir, "server.log"),
                  stop_signal=server.stop_signal)
    try:
        if not wait_port(ctx["port"], r.popen, timeout=90):
            raise RuntimeError("%s did not start under callgrind:\n%s" % (server.name, r.log_tail()))
        loadgen.exact(scenario, ctx["port"], n, timeout=600)
        # The counts so far, dumped now (callgrind.out.PID.1): a server
        # that is slow to exit under valgrind (nginx after HTTP/2 over TLS
        # took minutes to act on SIGTERM) is then stopped by force without
        # losing them; its shutdown is left out, as from both runs alike.
        subprocess.run(["callgrind_control", "--dump", str(r.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120, check=False)
    finally:
        reg.stop(r, timeout=30)
    files = sorted(glob.glob(os.path.join(work_dir, "callgrind.out.%d.*" % r.pid)))
    files = [f for f in files if os.path.getsize(f) > 0] or \
        glob.glob(os.path.join(work_dir, "callgrind.out.%d" % r.pid))
    if not files:
        raise RuntimeError("callgrind wrote no output for %s:\n%s" % (server.name, r.log_tail()))
    log("    callgrind %s n=%d: %s" % (server.name, n, files[0]))
    return _totals(files[0]), files[0]


_LINE = re.compile(r"^\s*([\d,]+)\s+(?:\(\s*[\d.]+%\)\s+)?(\S.*?)\s*$")


def functions(path):
    """{"file:function [object]": Ir} (self cost) from callgrind_annotate."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", path],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300,
                         check=False).stdout.decode("utf-8", "replace")
    costs, started = {}, False
    for line in out.splitlines():
        if "file:function" in line:
            started = True
            continue
        if not started or line.startswith("---"):
            continue
        m = _LINE.match(line)
        if not m:
            if started and costs and not line.strip():
                break           # the per-function table ends at a blank line
            continue
        name = m.group(2)
        if name == "PROGRAM TOTALS":
            continue
        costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def _object(name):
    m = re.search(r"\[([^\]]+)\]\s*$", name)
    return os.path.basename(m.group(1)) if m else "?"


def per_request_profile(path1, n1, path2, n2):
    """[(Ir per request, function)] and {object: Ir per request}, largest first."""
    f1, f2 = functions(path1), functions(path2)
    dn = float(n2 - n1)
    per_fn = []
    for name in set(f1) | set(f2):
        v = (f2.get(name, 0) - f1.get(name, 0)) / dn
        if abs(v) >= 0.5:
            per_fn.append((v, name))
    per_fn.sort(reverse=True)
    per_obj = {}
    for v, name in per_fn:
        per_obj[_object(name)] = per_obj.get(_object(name), 0.0) + v
    return per_fn, dict(sorted(per_obj.items(), key=lambda kv: -kv[1]))


def measure(reg, server, scenario, ctx, work_root, cpu, log):
    """Instructions per request of `server` on `scenario`: a dict with n1, n2,
    ir1, ir2, ir_per_req, profile (top functions), objects."""
    n1, n2 = scenario.callgrind_counts
    base = os.path.join(work_root, "%s-%s" % (scenario.name, server.name))
    ir1, p1 = one_run(reg, server, scenario, ctx, n1, base + "-n1", cpu, log)
    ir2, p2 = one_run(reg, server, scenario, ctx, n2, base + "-n2", cpu, log)
    per_fn, per_obj = per_request_profile(p1, n1, p2, n2)
    return {"n1": n1, "n2": n2, "ir1": ir1, "ir2": ir2,
            "ir_per_req": (ir2 - ir1) / float(n2 - n1),
            "profile": per_fn, "objects": per_obj}
