#!/usr/bin/python3
"""
Reloads under load, measured from outside (issue 13): two keep-alive loads
of 16 connections each (a static file and a fixed response) against
scalwsd with 2 workers, and --reloads reloads (HUP) --interval s apart.
Reports per load the requests answered, the closes (announced with
"Connection: close" or not), the failed and the cut requests
(tests/integration/kaload.py says what each means), and how long the old
workers took to go after each reload.

    bench/reload.py                       # 30 reloads 0.3 s apart
    bench/reload.py --reloads 100
    bench/reload.py --scalwsd objs/scalwsd --modules objs/modules --json

Not a timing benchmark: the numbers are counts, and the time the old
workers take, which depends little on the machine's load.
"""
import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))

import kaload  # noqa: E402


def run(args):
    if args.scalwsd:
        os.environ["SCALWSD"] = os.path.abspath(args.scalwsd)
    if args.modules:
        os.environ["SCALWS_MODULES"] = os.path.abspath(args.modules)
    import swsharness as h

    small = b"x" * args.file_size
    with tempfile.TemporaryDirectory(prefix="sws-reload-") as tmp:
        s = h.launch(tmp, workers=args.workers, files={"html/file.txt": small},
                     keepalive="60s", main=args.main, loglevel="notice",
                     access_log="off",
                     http="    keepalive_requests 1000000;\n")
        try:
            return measure(h, s, small, args)
        finally:
            s.stop()


def measure(h, s, small, args):
    s.wait_children(args.workers)
    watch = kaload.WorkerWatch(s.pid).start()
    loads = {
        "static": kaload.Load(s.port, "/file.txt", args.conns, expect_body=small),
        "respond": kaload.Load(s.port, "/respond", args.conns,
                               expect_body=b"Hello, world!"),
    }
    for ld in loads.values():
        ld.start()
    time.sleep(args.warmup)
    reloads = []
    for i in range(args.reloads):
        before = set(watch.children())
        t = time.monotonic()
        s.signal(signal.SIGHUP)
        reloads.append((t, before))
        time.sleep(args.interval)
    t_last = reloads[-1][0] if reloads else time.monotonic()
    # Keep the load on until the old workers are gone (bounded).
    deadline = time.monotonic() + args.settle
    gone = [None] * len(reloads)
    while time.monotonic() < deadline:
        gone = [watch.gone_after(pids, t) for t, pids in reloads]
        if all(g is not None for g in gone):
            break
        time.sleep(0.05)
    time.sleep(0.2)
    result = {"reloads": len(reloads), "interval": args.interval, "workers": args.workers,
              "conns": args.conns, "loads": {}}
    for name, ld in loads.items():
        result["loads"][name] = dict(ld.stop(), errors=ld.errors[:5])
    watch.stop()
    done = [g for g in gone if g is not None]
    # When each reload's new workers appeared: the master's own part (the
    # new configuration read, modules loaded, workers forked).
    started = []
    for t, pids in reloads:
        firsts = [f - t for p, f in watch.first.items() if f >= t and p not in pids]
        if firsts:
            started.append(min(firsts))
    result["new_workers_up"] = {
        "mean": sum(started) / len(started) if started else None,
        "max": max(started) if started else None,
    }
    result["old_workers_gone"] = {
        "all": all(g is not None for g in gone),
        "after_last_reload": gone[-1] if gone else None,
        "max": max(done) if done else None,
        "mean": sum(done) / len(done) if done else None,
    }
    result["server_alive"] = s.alive()
    result["alerts"] = [line for line in s.error_log().splitlines()
                        if "[alert]" in line or "[crit]" in line or "[emerg]" in line][:10]
    return result


def report(r):
    print("%d reloads %.2f s apart, %d workers, 2 loads x %d keep-alive connections"
          % (r["reloads"], r["interval"], r["workers"], r["conns"]))
    print("%-8s %9s %7s %7s %9s %6s %6s %4s" % ("load", "requests", "ok", "failed", "closes",
                                                 "annc", "cut", "idle"))
    for name, st in r["loads"].items():
        print("%-8s %9d %7d %7d %9d %6d %6d %4d" % (name, st["requests"], st["ok"],
                                                     st["failed"], st["closes"],
                                                     st["announced"], st["cut"], st["idle"]))
        for e in st["errors"]:
            print("         %s" % e)
    g = r["old_workers_gone"]
    fmt = lambda v: "-" if v is None else "%.3f s" % v  # noqa: E731
    print("old workers gone: after the last reload %s, mean %s, max %s%s"
          % (fmt(g["after_last_reload"]), fmt(g["mean"]), fmt(g["max"]),
             "" if g["all"] else " (some still there)"))
    u = r["new_workers_up"]
    print("new workers forked after the HUP: mean %s, max %s" % (fmt(u["mean"]), fmt(u["max"])))
    for a in r["alerts"]:
        print("log: %s" % a)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reloads", type=int, default=30)
    p.add_argument("--interval", type=float, default=0.3)
    p.add_argument("--conns", type=int, default=16)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--file-size", type=int, default=4096)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--settle", type=float, default=15.0,
                   help="longest wait for the old workers after the last reload")
    p.add_argument("--main", default="", help="extra main-level directives")
    p.add_argument("--scalwsd")
    p.add_argument("--modules")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    r = run(args)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        report(r)
    bad = sum(st["failed"] + st["cut"] for st in r["loads"].values())
    return 1 if bad or not r["old_workers_gone"]["all"] or not r["server_alive"] else 0


if __name__ == "__main__":
    sys.exit(main())
