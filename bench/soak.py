#!/usr/bin/python3
"""Memory over a long run: does a server's RSS grow under steady load?

    bench/soak [--minutes 10] [--scenarios static-small,respond] [--servers scalwsd]
               [--cap 0.3] [--interval 10]

For each scenario and server (set up exactly as bench/run does: the same
configurations, document root, certificate and backends), the server runs
under the scenario's load tool for --minutes, and every --interval seconds
the harness samples the resident set (VmRSS) and the open descriptors of the
server's worker processes. The first minute is warm-up (caches fill, pools
reach their working size); growth is measured from the sample at one minute
to the end, and as a least-squares slope over the samples after the first
minute. Writes docs/benchmarks/DATE-soak-HOST.md and the samples as CSV.

--cap runs the server in a cgroup limited to that fraction of a CPU: memory
behaviour under steady load does not need full speed, and the rest of the
machine stays usable meanwhile.

--mix runs one scalwsd instead, serving everything at once for the whole
run (bench/configs/scalwsd/mix.frag): HTTP/3 (small and 1 MiB files),
HTTP/2 over TLS with ten streams per connection, HTTP/1.1 over TLS (1 MiB),
and plain HTTP/1.1 (static, respond, proxy, cache hits), each driven by its
scenario's load tool at the same time (--scenarios is ignored; the
connections are shared out among them). Every request's answer counts:
the errors column is each tool's non-2xx answers plus its socket errors.
"""

import argparse
import csv
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import loadgen                                              # noqa: E402
import measure                                              # noqa: E402
import run as bench                                         # noqa: E402
import scenarios as scenario_table                          # noqa: E402
import soak_mix                                             # noqa: E402
from procs import Registry, free_port, wait_port            # noqa: E402
from servers import make_servers                            # noqa: E402

WARMUP_S = 60


def parse_args(argv):
    p = argparse.ArgumentParser(description="RSS over a long run (see bench/README.md)")
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--scenarios", default="static-small")
    p.add_argument("--servers", default="scalwsd")
    p.add_argument("--interval", type=float, default=10.0)
    p.add_argument("--cap", type=float, help="CPU fraction for the server's cgroup (e.g. 0.3)")
    p.add_argument("--mix", action="store_true",
                   help="one scalwsd, every protocol and handler at once (see above)")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--scalwsd", default=os.environ.get("SCALWSD") or os.path.join(bench.SRC, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.environ.get("SCALWS_MODULES") or os.path.join(bench.SRC, "objs", "modules"))
    p.add_argument("--out", default=os.path.join(bench.SRC, "docs", "benchmarks"))
    a = p.parse_args(argv)
    if a.minutes * 60 <= WARMUP_S + 2 * a.interval:
        p.error("--minutes must leave samples after the first minute")
    return a


def slope_kib_per_min(samples):
    """Least-squares slope of (seconds, KiB) pairs, in KiB per minute."""
    n = len(samples)
    if n < 2:
        return None
    mx = sum(t for t, _ in samples) / n
    my = sum(v for _, v in samples) / n
    var = sum((t - mx) ** 2 for t, _ in samples)
    if var == 0:
        return None
    return 60.0 * sum((t - mx) * (v - my) for t, v in samples) / var


def soak_one(a, reg, cap, server, sc, ctx, tmp, log):
    """Samples [(t, rss KiB, fds)] of the workers, and the load tool's result."""
    stmp = tempfile.mkdtemp(prefix="soak-%s-%s-" % (sc.name, server.name), dir=tmp)
    os.chmod(stmp, 0o755)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, sc, single=False, tmp=stmp)
    argv = ["taskset", "-c", str(a.server_cpu)] + server.argv(conf, stmp)
    if cap:
        argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cap.procs_file()] + argv
    r = reg.start(server.name, argv, os.path.join(stmp, "server.log"), server.stop_signal)
    samples, result = [], None
    try:
        if not wait_port(ctx["port"], r.popen, timeout=15):
            raise RuntimeError("did not start: " + r.log_tail().strip())
        loadgen.exact(sc, ctx["port"], 3, timeout=10)
        duration = int(a.minutes * 60)
        url = "%s://127.0.0.1:%d%s" % (sc.scheme, ctx["port"], sc.path)
        tool = loadgen.ARGV[sc.load_tool](url, duration, a.connections, 1, a.client_cpu)
        out_path = os.path.join(stmp, "load.txt")
        box = {}
        t = threading.Thread(target=lambda: box.update(
            r=loadgen.run_load(sc.load_tool, tool, out_path, duration)))
        t0 = time.monotonic()
        t.start()
        while True:
            t.join(a.interval)
            if not t.is_alive():
                break               # samples only while the load runs
            tree = r.tree()
            workers = measure.workers_of(r.pid, tree)
            samples.append((round(time.monotonic() - t0, 1),
                            sum(measure.vm_rss_kib(p) for p in workers),
                            sum(measure.open_fds(p) for p in workers)))
            log("    %5.0f s  worker RSS %6d KiB  fds %d" % samples[-1])
        t.join()
        result = box.get("r")
    finally:
        reg.stop(r)
    return samples, result


def main(argv):
    a = parse_args(argv)
    selected = scenario_table.select(bench.split_list(a.scenarios))
    servers = make_servers(a.scalwsd, a.modules_dir)
    names = bench.split_list(a.servers)
    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-soak-")
    cap = None
    log = bench.log
    try:
        os.sched_setaffinity(0, {a.client_cpu})
        os.chmod(tmp, 0o755)
        docroot = bench.make_docroot(tmp)
        placeholders = {"UPSTREAM_KEEPALIVE": str(bench.DEFAULT_UPSTREAM_KEEPALIVE)}
        if a.mix or any(sc.tls for sc in selected):
            placeholders.update(bench.make_certificate(tmp))
        ctx = {"docroot": docroot, "modules_dir": os.path.abspath(a.modules_dir),
               "placeholders": placeholders}
        if a.cap:
            cap = measure.CpuCap("scalws-soak-%d" % os.getpid())
            cap.set(a.cap)
        rows, all_samples = [], []
        started = time.time()
        if a.mix:
            selected = []
            sc = soak_mix.mix_scenario()
            log("[mix] scalwsd for %g min" % a.minutes)
            rctx, backend = bench.with_backend(a, reg, ctx, sc, tmp, {})
            try:
                samples, streams = soak_mix.run(a, reg, cap, servers["scalwsd"], rctx, tmp, log)
            finally:
                if backend:
                    backend.stop()
            rows.append(summary_row("mix", "scalwsd", samples, {
                "requests": sum(s["requests"] or 0 for s in streams),
                "non2xx": sum(s["errors"] or 0 for s in streams), "socket_errors": 0}))
            all_samples += [("mix", "scalwsd", t, v, f) for t, v, f in samples]
            write_report(a, rows, all_samples, started, log, soak_mix.report_lines(streams))
            return 0
        for sc in selected:
            for name in names:
                srv = servers[name]
                if name not in sc.fragments:
                    continue
                log("[%s] %s for %g min" % (sc.name, name, a.minutes))
                rctx, backend = bench.with_backend(a, reg, ctx, sc, tmp, {})
                try:
                    samples, res = soak_one(a, reg, cap, srv, sc, rctx, tmp, log)
                finally:
                    if backend:
                        backend.stop()
                rows.append(summary_row(sc.name, name, samples, res))
                all_samples += [(sc.name, name, t, v, f) for t, v, f in samples]
        write_report(a, rows, all_samples, started, log)
        return 0
    finally:
        reg.cleanup()
        if cap:
            cap.remove()
        shutil.rmtree(tmp, ignore_errors=True)


def summary_row(scenario, server, samples, res):
    """One line of the report: the load's counts and the RSS figures."""
    after = [(t, v) for t, v, _ in samples if t >= WARMUP_S]
    first = after[0][1] if after else None
    return {
        "scenario": scenario, "server": server,
        "requests": res and res["requests"],
        "errors": res and (res["non2xx"] + res["socket_errors"]),
        "rss_1min": first, "rss_end": samples[-1][1] if samples else None,
        "rss_max": max(v for _, v, _ in samples) if samples else None,
        "growth": (samples[-1][1] - first) if after else None,
        "slope": slope_kib_per_min(after),
        "fds_1min": next((f for t, _, f in samples if t >= WARMUP_S), None),
        "fds_end": samples[-1][2] if samples else None,
    }


def write_report(a, rows, samples, started, log, extra_lines=()):
    day = time.strftime("%Y-%m-%d", time.localtime(started))
    base = "%s-soak-%s" % (day, "+".join(sorted({r["scenario"] for r in rows})))
    os.makedirs(os.path.join(a.out, "raw"), exist_ok=True)
    with open(os.path.join(a.out, "raw", base + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "server", "seconds", "worker_rss_kib", "worker_fds"])
        w.writerows(samples)
    m = bench.machine()
    lines = [
        "# Memory over a %g-minute run (%s)" % (a.minutes, day), "",
        "Machine: %s, %s CPUs, %s, kernel %s, Debian %s." % (
            m.get("Model name", "?"), m.get("CPU(s)", "?"), m["memory"], m["kernel"], m["debian"]),
        "", "Command: `bench/soak %s`" % " ".join(sys.argv[1:]), "",
        "Each server as in `make bench` (one worker on CPU %d, the load tool on CPU %d, %d "
        "connections%s), worker RSS (VmRSS) and open descriptors sampled every %g s. "
        "Growth is from the sample at %d s to the last one; the slope is a least-squares "
        "fit over the samples after %d s." % (
            a.server_cpu, a.client_cpu, a.connections,
            ", the server capped to %d %% of a CPU by a cgroup" % round(a.cap * 100) if a.cap else "",
            a.interval, WARMUP_S, WARMUP_S), "",
        "| scenario | server | requests | errors | RSS at 1 min KiB | RSS at end KiB | max KiB "
        "| growth KiB | slope KiB/min | fds at 1 min → end |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s → %s |" % (
            r["scenario"], r["server"], r["requests"], r["errors"], r["rss_1min"], r["rss_end"],
            r["rss_max"], r["growth"], "–" if r["slope"] is None else "%.1f" % r["slope"],
            r["fds_1min"], r["fds_end"]))
    lines += list(extra_lines)
    lines += ["", "Samples: `raw/%s.csv`." % base, ""]
    path = os.path.join(a.out, base + ".md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    log("soak: wrote %s" % path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
