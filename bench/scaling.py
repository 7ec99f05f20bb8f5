#!/usr/bin/python3
"""
Scaling efficiency of the worker processes (issue 13): req/s with N workers
divided by N times req/s with one, for N = 1 .. --max, on this machine's
CPUs. Each N runs scalwsd with "worker_processes N; worker_cpus SET;" (the
workers pinned to the server's CPUs) and wrk pinned to the others, for
--rounds rounds of --duration seconds, rotating the order of N; the median
round counts.

    bench/scaling.py                          # all CPUs but one for the server
    bench/scaling.py --server-cpus 0-1 --client-cpus 2-3 --max 2
    bench/scaling.py --path /file.txt --json
    bench/scaling.py --duration 1 --rounds 1 --adaptive-duration 3   # smoke run

This is a timed benchmark: run it on a quiet machine (not while others
share it). Also reports the adaptive runtime's own choice: the number of
workers it settles on under the same wrk load with worker_processes_min 1
and worker_processes_max --max.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))

import loadgen  # noqa: E402


def cpu_list(text):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def wrk_argv(url, args, headers=(), duration=None):
    return (["taskset", "-c", args.client_cpus, "wrk", "-t%d" % args.threads,
             "-c%d" % args.connections, "-d%ds" % (duration or args.duration),
             "--timeout", "2s", "--latency"]
            + [a for h in headers for a in ("-H", h)] + [url])


def wrk(url, args, headers=()):
    p = subprocess.run(wrk_argv(url, args, headers), capture_output=True, text=True,
                       timeout=args.duration + 30)
    return loadgen.parse_wrk(p.stdout)


def run_n(h, n, args, server_cpus):
    main = "worker_cpus %s;" % server_cpus
    with tempfile.TemporaryDirectory(prefix="sws-scaling-") as tmp:
        s = h.launch(tmp, main=main, workers=n, files={"html/file.txt": b"x" * 4096},
                     access_log="off", loglevel="warn",
                     http="    keepalive_requests 1000000;\n")
        try:
            s.wait_children(n)
            return wrk(s.url(args.path), args, args.header)
        finally:
            s.stop()


def adaptive_choice(h, args, server_cpus):
    main = "worker_processes_min 1;\nworker_processes_max %d;\nworker_cpus %s;" % (
        args.max, server_cpus)
    with tempfile.TemporaryDirectory(prefix="sws-scaling-") as tmp:
        s = h.launch(tmp, main=main, files={"html/file.txt": b"x" * 4096},
                     access_log="off", loglevel="notice",
                     http="    keepalive_requests 1000000;\n")
        try:
            s.wait_children(1)
            # Its own duration: the master looks once a second, and adds or
            # retires one worker at a time. The number of workers is
            # followed meanwhile; "settled" is the one of the last third.
            d = args.adaptive_duration
            p = subprocess.Popen(wrk_argv(s.url(args.path), args, args.header, d),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            t0 = time.monotonic()
            timeline = []
            while p.poll() is None and time.monotonic() - t0 < d + 30:
                n = len(s.children())
                if not timeline or timeline[-1][1] != n:
                    timeline.append((round(time.monotonic() - t0, 2), n))
                time.sleep(0.25)
            out, _ = p.communicate(timeout=30)
            r = loadgen.parse_wrk(out)
            last = [n for t, n in timeline if t >= 2 * d / 3] or [timeline[-1][1]]
            return {"workers": timeline[-1][1], "settled": max(set(last), key=last.count),
                    "timeline": timeline, "rps": r["rps"], "errors": r["socket_errors"]
                    + r["non2xx"], "duration": d,
                    "log": [ln for ln in s.error_log().splitlines() if "adaptive:" in ln][-6:]}
        finally:
            s.stop()


def main():
    ncpu = os.cpu_count() or 1
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server-cpus", default="0-%d" % max(ncpu - 2, 0))
    p.add_argument("--client-cpus", default=str(ncpu - 1))
    p.add_argument("--max", type=int, default=0, help="most workers (default: server CPUs)")
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--adaptive-duration", type=int, default=30,
                   help="s of the adaptive runtime's run (default 30)")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--path", default="/respond")
    p.add_argument("--header", action="append", default=[],
                   help='e.g. "Connection: close" for a new connection per request')
    p.add_argument("--scalwsd")
    p.add_argument("--modules")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    if args.scalwsd:
        os.environ["SCALWSD"] = os.path.abspath(args.scalwsd)
    if args.modules:
        os.environ["SCALWS_MODULES"] = os.path.abspath(args.modules)
    import swsharness as h

    cpus = cpu_list(args.server_cpus)
    nmax = args.max or len(cpus)
    args.max = nmax
    rps = {n: [] for n in range(1, nmax + 1)}
    order = list(range(1, nmax + 1))
    for r in range(args.rounds):
        k = r % len(order)
        for n in order[k:] + order[:k]:
            res = run_n(h, n, args, args.server_cpus)
            rps[n].append(res["rps"] or 0.0)
    med = {n: statistics.median(v) for n, v in rps.items()}
    base = med[1] or 1.0
    result = {
        "server_cpus": args.server_cpus, "client_cpus": args.client_cpus,
        "path": args.path, "connections": args.connections, "duration": args.duration,
        "rounds": args.rounds,
        "workers": [{"n": n, "rps": med[n], "rounds": rps[n],
                     "efficiency": med[n] / (n * base)} for n in sorted(med)],
        "adaptive": adaptive_choice(h, args, args.server_cpus),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print("server CPUs %s, wrk on %s, %s, %d connections, %d x %d s"
          % (args.server_cpus, args.client_cpus, args.path, args.connections,
             args.rounds, args.duration))
    print("%8s %12s %11s" % ("workers", "req/s", "efficiency"))
    for w in result["workers"]:
        print("%8d %12.0f %10.0f %%" % (w["n"], w["rps"], 100 * w["efficiency"]))
    a = result["adaptive"]
    print("adaptive (min 1, max %d), %d s: settled on %d workers, %.0f req/s, %d errors"
          % (nmax, a["duration"], a["settled"], a["rps"] or 0, a["errors"]))
    print("  workers over time (s: n): "
          + ", ".join("%.1f: %d" % (t, n) for t, n in a["timeline"]))
    for ln in a["log"]:
        print("  " + re.sub(r"^\S+ \S+ ", "", ln))
    return 0


if __name__ == "__main__":
    sys.exit(main())
