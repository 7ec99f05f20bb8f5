#!/usr/bin/python3
"""ScalWS benchmark harness: scalwsd side by side with nginx, h2o and lighttpd.

    bench/run [--mode quick|release] [--scenarios a,b] [--servers a,b]
              [--no-callgrind] [--cap 0.5] ...

Environment (what `make bench` passes on): BENCH_MODE, BENCH_SCENARIOS,
BENCH_SERVERS, BENCH_CALLGRIND=0, BENCH_CAP, BENCH_ARGS (extra arguments, read by
bench/run), SCALWSD, SCALWS_MODULES, SCALWS_SRC. See bench/README.md.
"""

import argparse
import atexit
import functools
import gzip
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import backends                                             # noqa: E402
import callgrind                                            # noqa: E402
import deps                                                 # noqa: E402
import loadgen                                              # noqa: E402
import measure                                              # noqa: E402
import report                                               # noqa: E402
import scenarios as scenario_table                          # noqa: E402
from procs import Registry, free_port, wait_port            # noqa: E402
from servers import TREE_SCALWSD, make_servers              # noqa: E402

MODES = {
    "quick": {"rounds": 2, "duration": 5, "warmup": 3},
    "release": {"rounds": 5, "duration": 30, "warmup": 10},
}

# Backends (origins, application servers) by name, started once per round
# before the servers of a scenario that names one (and once more for its
# callgrind runs), on the client's CPU; see backends.py.
BACKENDS = backends.BACKENDS

# Load tools by name: wrk, h2load, openssl s_time (-new or -reuse).
LOAD_TOOLS = loadgen.ARGV

# nginx's and scalwsd's `keepalive N` (idle upstream connections kept) in
# the proxy scenario, as the issue asks; see --upstream-keepalive
DEFAULT_UPSTREAM_KEEPALIVE = 64

SRC = os.environ.get("SCALWS_SRC") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(msg):
    print(msg, flush=True)


def split_list(text):
    return [x for x in re.split(r"[\s,]+", text or "") if x]


def parse_args(argv):
    env = os.environ
    p = argparse.ArgumentParser(description="ScalWS benchmark harness (see bench/README.md)")
    p.add_argument("--mode", default=env.get("BENCH_MODE", "quick"), choices=sorted(MODES))
    p.add_argument("--scenarios", default=env.get("BENCH_SCENARIOS", ""),
                   help="comma or space separated (default: all): "
                        + ", ".join(s.name for s in scenario_table.SCENARIOS))
    p.add_argument("--servers", default=env.get("BENCH_SERVERS", ""),
                   help="comma or space separated (default: all): "
                        + ", ".join(scenario_table.ALL_SERVERS))
    p.add_argument("--no-callgrind", action="store_true",
                   default=env.get("BENCH_CALLGRIND", "1") in ("0", "no", "off"),
                   help="skip the instructions-per-request measurement (slow)")
    p.add_argument("--cap", type=float, default=float(env["BENCH_CAP"]) if env.get("BENCH_CAP") else None,
                   help="also measure req/s with the server capped to this fraction of one "
                        "CPU through a cgroup (0.5 = 50%%)")
    p.add_argument("--rounds", type=int)
    p.add_argument("--duration", type=int, help="measured window, seconds")
    p.add_argument("--warmup", type=int, help="warm-up, seconds")
    p.add_argument("--max-other", type=float, default=float(env.get("BENCH_MAX_OTHER", 20)),
                   help="a round during which other processes used more than this %% of a CPU "
                        "is repeated (default 20)")
    p.add_argument("--retries", type=int, default=2, help="repeats of a noisy round (default 2)")
    p.add_argument("--quiet-wait", type=float, default=60,
                   help="before a round, wait up to this many seconds for other load to drop "
                        "below --max-other (default 60)")
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--upstream-keepalive", type=int, default=int(env.get("BENCH_UPSTREAM_KEEPALIVE", DEFAULT_UPSTREAM_KEEPALIVE)),
                   help="idle upstream connections nginx and scalwsd keep (their `keepalive N`) in the "
                        "proxy scenario (default %d; below --connections, some requests open a new "
                        "upstream connection)" % DEFAULT_UPSTREAM_KEEPALIVE)
    p.add_argument("--server-cpu", type=int, default=0)
    p.add_argument("--client-cpu", type=int, default=1)
    p.add_argument("--scalwsd", default=env.get("SCALWSD") or os.path.join(SRC, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=env.get("SCALWS_MODULES") or os.path.join(SRC, "objs", "modules"))
    p.add_argument("--h3load", default=env.get("H3LOAD"),
                   help="the HTTP/3 load client of the h3-* scenarios (default: bench/h3load "
                        "in scalwsd's build directory, as make builds it, else in objs/)")
    p.add_argument("--out", default=os.path.join(SRC, "docs", "benchmarks"),
                   help="report directory (default: docs/benchmarks)")
    p.add_argument("--no-install", action="store_true", help="never run apt-get")
    p.add_argument("--baseline", metavar="DIR",
                   help="also measure another scalwsd build, DIR/scalwsd with DIR/modules, as the "
                        "server scalwsd-base (added to --servers): a before/after run")
    p.add_argument("--scalwsd-http-conf", metavar="FILE",
                   help="text put at the http level of the tree's scalwsd only (not the baseline's), "
                        "e.g. an admin block; @TMP@ is the run's temp dir")
    p.add_argument("--keep-tmp", action="store_true", help="keep the temp dir (configs, logs, callgrind files)")
    a = p.parse_args(argv)
    mode = MODES[a.mode]
    a.rounds = a.rounds or mode["rounds"]
    a.duration = a.duration or mode["duration"]
    a.warmup = mode["warmup"] if a.warmup is None else a.warmup
    if a.cap is not None and not 0.01 <= a.cap <= 1.0:
        p.error("--cap takes a fraction of one CPU between 0.01 and 1")
    return a


# ---- the machine ---------------------------------------------------------

def _cmd(argv):
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=10, check=False).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine():
    info = {}
    lscpu = _cmd(["lscpu"])
    for key in ("Model name", "CPU(s)", "Thread(s) per core", "Core(s) per socket",
                "Socket(s)", "Hypervisor vendor", "CPU max MHz"):
        m = re.search(r"^%s:\s*(.+)$" % re.escape(key), lscpu, re.M)
        if m:
            info[key] = m.group(1).strip()
    with open("/proc/meminfo") as f:
        m = re.search(r"MemTotal:\s*(\d+)", f.read())
        info["memory"] = "%.1f GiB" % (int(m.group(1)) / 1048576.0) if m else "?"
    info["kernel"] = platform.release()
    try:
        with open("/etc/debian_version") as f:
            info["debian"] = f.read().strip()
    except OSError:
        info["debian"] = "?"
    gov = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
    info["governor"] = open(gov).read().strip() if os.path.exists(gov) else "n/a (no cpufreq)"
    info["hostname"] = socket.gethostname()
    # loopback TCP behaviour (static-1m depends on it): congestion control, buffers
    tcp = []
    # ... and connection churn (the proxy scenario's upstream connections)
    for name in ("tcp_congestion_control", "tcp_rmem", "tcp_wmem", "ip_local_port_range",
                 "tcp_tw_reuse", "tcp_tw_reuse_delay"):
        try:
            with open("/proc/sys/net/ipv4/" + name) as f:
                tcp.append("%s = %s" % (name, " ".join(f.read().split())))
        except OSError:
            pass
    info["tcp"] = "; ".join(tcp) or "?"
    return info


def tool_versions(callgrind_on):
    v = {"wrk": _cmd(["wrk", "-v"]).splitlines()[0:1],
         "python": [platform.python_version()]}
    if callgrind_on:
        v["valgrind"] = _cmd(["valgrind", "--version"]).split()[0:1]
    v["gnuplot"] = _cmd(["gnuplot", "--version"]).split("\n")[0:1]
    return {k: (x[0].strip() if x else "?") for k, x in v.items()}


# ---- one measured round --------------------------------------------------

def measure_round(a, reg, cap, server, scenario, ctx, tmp, round_no, position):
    row = {"scenario": scenario.name, "server": server.name, "round": round_no + 1,
           "position": position + 1, "valid": False, "error": ""}
    stmp = tempfile.mkdtemp(prefix="run-%s-%s-r%d-" % (scenario.name, server.name, round_no + 1), dir=tmp)
    os.chmod(stmp, 0o755)
    ctx = dict(ctx, port=free_port())
    conf = server.render(ctx, scenario, single=False, tmp=stmp)
    if scenario.load_tool in loadgen.H3LOAD_TOOLS and hasattr(server, "config_error"):
        # a scalwsd without HTTP/3 (built before src/http/v3) refuses the
        # quic listener: skipped, not measured
        err = server.config_error(conf, stmp)
        if err:
            row["error"] = "skipped: this scalwsd has no HTTP/3 (scalwsd -t: %s)" % err
            return row
    argv = ["taskset", "-c", str(a.server_cpu)] + server.argv(conf, stmp)
    ctx["commands"].setdefault(server.name, shlex.join(argv).replace(stmp, "$RUN").replace(tmp, "$TMP"))
    if cap:
        # the server starts inside the cgroup, so every process it forks is in it
        argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cap.procs_file()] + argv
    url = "%s://127.0.0.1:%d%s" % (scenario.scheme, ctx["port"], scenario.path)
    conns = scenario.connections or a.connections
    tool = LOAD_TOOLS[scenario.load_tool]
    if scenario.request_headers:
        tool = functools.partial(tool, headers=scenario.request_headers)
    r = reg.start(server.name, argv, os.path.join(stmp, "server.log"), server.stop_signal)
    try:
        if not wait_port(ctx["port"], r.popen, timeout=15):
            raise RuntimeError("did not start: " + r.log_tail().strip().replace("\n", " | "))
        backend = ctx.get("backend")
        if backend is not None and hasattr(backend, "wait_ready"):
            # an application the server runs itself (python-managed)
            backend.wait_ready(ctx["port"], scenario.path)
        # a wrong answer must never be measured
        loadgen.exact(scenario, ctx["port"], 3, timeout=10)
        if a.warmup > 0:
            loadgen.run_load(scenario.load_tool, tool(url, a.warmup, conns, 1, a.client_cpu),
                             os.path.join(stmp, "wrk-warmup.txt"), a.warmup)

        wrk = tool(url, a.duration, conns, 1, a.client_cpu)
        ctx["wrk_command"].setdefault(scenario.name, " ".join(wrk).replace(str(ctx["port"]), "PORT"))
        before = measure.cpu_ticks(server_pids(r, backend))
        back0 = measure.cpu_ticks(backend.tree()) if backend else {}
        ksoft0 = measure.cpu_ticks(ctx["ksoftirqd"])
        cpus0 = measure.cpu_ticks_by_cpu()
        segs0 = measure.tcp_out_segments()
        opens0 = measure.tcp_active_opens()
        t0 = time.monotonic()
        w = loadgen.run_load(scenario.load_tool, wrk, os.path.join(stmp, "wrk.txt"), a.duration)
        wall = time.monotonic() - t0
        segs1 = measure.tcp_out_segments()
        opens1 = measure.tcp_active_opens()
        tree = server_pids(r, backend)
        after = measure.cpu_ticks(tree)
        back1 = measure.cpu_ticks(backend.tree()) if backend else {}
        ksoft1 = measure.cpu_ticks(ctx["ksoftirqd"])
        cpus1 = measure.cpu_ticks_by_cpu()
        user, sys_ = measure.cpu_delta_seconds(before, after)
        # the backend (origin) is measured apart, never counted as the server's
        back = sum(measure.cpu_delta_seconds(back0, back1))
        ksoft = sum(measure.cpu_delta_seconds(ksoft0, ksoft1))
        workers = measure.workers_of(r.pid, tree)
        busy = sum(cpus1[c][0] - cpus0[c][0] for c in cpus1 if c in cpus0) / measure.CLK_TCK
        steal = sum(cpus1[c][1] - cpus0[c][1] for c in cpus1 if c in cpus0) / measure.CLK_TCK
        n = w["requests"] or 0
        row.update({
            "requests": n, "elapsed_s": w["elapsed_s"], "rps": w["rps"],
            "p50_ms": w["p50_ms"], "p99_ms": w["p99_ms"], "non2xx": w["non2xx"],
            "socket_errors": w["socket_errors"],
            "cpu_user_s": round(user, 3), "cpu_sys_s": round(sys_, 3),
            "cpu_us_per_req": (user + sys_) * 1e6 / n if n else None,
            "user_us_per_req": user * 1e6 / n if n else None,
            "sys_us_per_req": sys_ * 1e6 / n if n else None,
            "server_cpu_pct": 100.0 * (user + sys_) / wall,
            "wrk_cpu_pct": 100.0 * w["wrk_cpu_s"] / wall,
            # network work the kernel did in its softirq threads, charged to
            # neither side
            "ksoftirqd_pct": 100.0 * ksoft / wall,
            # what else ran on the two CPUs during the window (other users of
            # the machine, the harness itself, softirqs taken while idle):
            # busy time minus server, wrk, backend and ksoftirqd
            "other_cpu_pct": max(0.0, 100.0 * (busy - user - sys_ - w["wrk_cpu_s"] - back - ksoft) / wall),
            "steal_pct": 100.0 * steal / wall,
            # TCP segments (both directions, whole machine) per request
            "tcp_segs_per_req": (segs1 - segs0) / float(n) if n else None,
            # connections opened (connect()) on the machine per request: 0 for
            # wrk's keep-alive connections, the upstream connections with a proxy
            "tcp_opens_per_req": (opens1 - opens0) / float(n) if n else None,
            "rss_total_kib": sum(measure.vm_hwm_kib(p) for p in tree),
            "rss_worker_kib": sum(measure.vm_hwm_kib(p) for p in workers),
            "processes": len(tree),
        })
        if backend:
            row.update({"origin_cpu_pct": 100.0 * back / wall,
                        "origin_us_per_req": back * 1e6 / n if n else None})
        problems = []
        if w["wrk_status"] != 0 or not n:
            problems.append("wrk failed (exit %s)" % w["wrk_status"])
        if w["non2xx"]:
            problems.append("%d non-2xx answers" % w["non2xx"])
        if w["socket_errors"]:
            problems.append(w["errors_detail"])
        if w.get("mean_ms") and w["rps"]:
            # wrk counts a request as timed out only when its answer comes:
            # connections that get none in the whole window (a server's
            # FastCGI connection left in PHP-FPM's listen queue) show only
            # as fewer busy connections than wrk has (requests/s x mean
            # latency, Little's law; about all of them otherwise)
            busy = w["rps"] * w["mean_ms"] / 1000.0
            if busy < 0.5 * conns:
                problems.append("only %.0f of %d connections busy on average (requests/s x "
                                "mean latency): the others got no answer in the window"
                                % (busy, conns))
        if r.popen.poll() is not None:
            problems.append("the server exited during the run")
        if backend and not backend.alive():
            problems.append("the %s exited during the run" % backend.name)
        row["valid"] = not problems
        row["error"] = "; ".join(problems)

        if cap and a.cap:
            thr0 = cap.throttled()
            cap.set(a.cap)
            try:
                wc = loadgen.run_load(scenario.load_tool, wrk, os.path.join(stmp, "wrk-capped.txt"),
                                      a.duration)
            finally:
                cap.set(None)
            thr1 = cap.throttled()
            row.update({"cap": a.cap, "capped_rps": wc["rps"], "capped_p99_ms": wc["p99_ms"],
                        "capped_non2xx": wc["non2xx"], "capped_socket_errors": wc["socket_errors"],
                        "capped_throttled_pct": 100.0 * (thr1[0] - thr0[0]) / max(1, thr1[1] - thr0[1]),
                        "capped_valid": wc["wrk_status"] == 0 and not wc["non2xx"]
                        and not wc["socket_errors"] and bool(wc["requests"])})
    except Exception as e:                      # recorded, the run goes on
        row["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        reg.stop(r)
    return row


def subset_suffix(selected, server_names, upstream_keepalive):
    """Nothing for a run of every scenario and server with the default
    settings; else "-SCENARIO+SCENARIO" and/or "-SERVER+SERVER" (in table
    order) and "-keepaliveN" (proxy), added to the report's file names so that a partial or
    different run never overwrites a full one."""
    out = ""
    if len(selected) != len(scenario_table.SCENARIOS):
        out += "-" + "+".join(s.name for s in selected)
    if set(server_names) != set(scenario_table.ALL_SERVERS):
        out += "-" + "+".join(s for s in scenario_table.ALL_SERVERS if s in server_names)
    if "scalwsd-uring" in server_names:
        out += "-io-uring"
    if "scalwsd-pause" in server_names:
        out += "-wait-pause"
    if "scalwsd-base" in server_names:
        out += "-vs-baseline"
    if upstream_keepalive != DEFAULT_UPSTREAM_KEEPALIVE and any(s.backend for s in selected):
        out += "-keepalive%d" % upstream_keepalive
    return out


def server_pids(r, backend):
    """The server's processes, without those of an application it runs
    itself (a backend with claim(): they are the backend's CPU time)."""
    tree = r.tree()
    if backend is not None and hasattr(backend, "claim"):
        app = set(backend.claim(tree))
        tree = [p for p in tree if p not in app]
    return tree


def with_backend(a, reg, ctx, sc, tmp, backend_info):
    """(context for this round, started backend or None): the scenario's
    backend started on the client's CPU, its placeholders in the context."""
    if not sc.backend:
        return ctx, None
    kind = BACKENDS[sc.backend]
    b = kind.start(reg, tmp, a.client_cpu, log)
    if sc.backend not in backend_info:
        backend_info[sc.backend] = {"command": b.command, "description": kind.describe(),
                                    "scenarios": [],
                                    "config_dir": getattr(kind, "config_dir", sc.backend)}
    if sc.name not in backend_info[sc.backend]["scenarios"]:
        backend_info[sc.backend]["scenarios"].append(sc.name)
    return dict(ctx, placeholders=dict(ctx["placeholders"], **b.placeholders), backend=b), b


def make_docroot(tmp):
    """The document root every scenario shares: hello.txt (13 bytes),
    1m.bin (1 MiB of random bytes), page.html (100 KiB of HTML) and its
    page.html.gz, readable by workers that drop to nobody."""
    docroot = os.path.join(tmp, "docroot")
    os.makedirs(docroot)
    with open(os.path.join(docroot, "hello.txt"), "wb") as f:
        f.write(scenario_table.HELLO)
    with open(os.path.join(docroot, "1m.bin"), "wb") as f:
        f.write(os.urandom(scenario_table.ONE_MIB))
    page = scenario_table.page_html()
    with open(os.path.join(docroot, "page.html"), "wb") as f:
        f.write(page)
    # the precompressed sibling (static-gzip), as new as the page or newer
    with open(os.path.join(docroot, "page.html.gz"), "wb") as f:
        f.write(gzip.compress(page, 9, mtime=0))
    for name in os.listdir(docroot):
        os.chmod(os.path.join(docroot, name), 0o644)
    os.chmod(docroot, 0o755)
    return docroot


def make_certificate(tmp):
    """The TLS scenarios' certificate: self-signed ECDSA P-256 for
    localhost, the same for every server. Returns the CERT and KEY
    placeholders."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "7", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)
    os.chmod(key, 0o644)            # workers that drop to nobody read it too
    return {"CERT": cert, "KEY": key}


def wait_quiet(a):
    """Before a round: wait (at most --quiet-wait seconds) until the rest of the
    machine uses no more than --max-other % of a CPU, so that a round is not
    measured next to someone else's build."""
    deadline = time.monotonic() + a.quiet_wait
    said = False
    while True:
        busy = measure.busy_percent(1.0)
        if busy <= a.max_other or time.monotonic() >= deadline:
            if said:
                log("    machine at %.0f %% of a CPU: going on" % busy)
            return
        if not said:
            log("    waiting for other load to drop (%.0f %% of a CPU now)" % busy)
            said = True
        time.sleep(2)


def fmt_row(row):
    if row.get("rps") is None:
        return "ERROR " + row["error"]
    s = "%9.0f req/s  p99 %6.2f ms  CPU %6.2f µs/req  server %3.0f%%  wrk %3.0f%%  ksoftirqd %2.0f%%  other %3.0f%%" % (
        row["rps"], row["p99_ms"] or 0, row["cpu_us_per_req"] or 0, row["server_cpu_pct"],
        row["wrk_cpu_pct"], row["ksoftirqd_pct"], row["other_cpu_pct"])
    if row.get("origin_cpu_pct") is not None:
        s += "  origin %3.0f%%" % row["origin_cpu_pct"]
    if row.get("capped_rps") is not None:
        s += "  capped %7.0f req/s" % row["capped_rps"]
    if row["error"]:
        s += ("  " if row["valid"] else "  INVALID: ") + row["error"]
    return s


# ---- main --------------------------------------------------------------

def main(argv):
    a = parse_args(argv)
    try:
        selected = scenario_table.select(split_list(a.scenarios))
    except ValueError as e:
        log("bench: %s" % e)
        return 2
    http_conf = ""
    if a.scalwsd_http_conf:
        with open(a.scalwsd_http_conf) as f:
            http_conf = f.read()
    all_servers = make_servers(a.scalwsd, a.modules_dir, a.baseline, http_conf)
    names = split_list(a.servers) or list(scenario_table.ALL_SERVERS)
    if a.baseline and "scalwsd-base" not in names:
        names.append("scalwsd-base")
    if "floor" not in names and any(sc.with_floor for sc in selected):
        # the cache scenarios' report shows the kernel's floor every time
        log("bench: floor added to the servers: %s measured beside it" %
            ", ".join(sc.name for sc in selected if sc.with_floor))
        names.append("floor")
    unknown = [n for n in names if n not in all_servers]
    if unknown:
        log("bench: unknown server(s): %s (known: %s)" % (", ".join(unknown), ", ".join(all_servers)))
        return 2
    servers = [all_servers[n] for n in names]
    # h3load: beside the scalwsd measured (its build), else this tree's build's
    loadgen.H3LOAD = a.h3load or next(
        (p for p in (os.path.join(os.path.dirname(os.path.abspath(a.scalwsd)), "bench", "h3load"),
                     os.path.join(SRC, "objs", "bench", "h3load")) if os.access(p, os.X_OK)),
        os.path.join(os.path.dirname(os.path.abspath(a.scalwsd)), "bench", "h3load"))
    h3 = [sc for sc in selected if sc.load_tool in loadgen.H3LOAD_TOOLS]
    if h3 and not os.access(loadgen.H3LOAD, os.X_OK):
        why = ("%s is not built (configure needs libngtcp2-dev libngtcp2-crypto-gnutls-dev "
               "libnghttp3-dev libgnutls28-dev)" % loadgen.H3LOAD)
        if split_list(a.scenarios):
            log("bench: " + why)
            return 2
        log("bench: leaving out %s: %s" % (", ".join(sc.name for sc in h3), why))
        selected = [sc for sc in selected if sc not in h3]
    if not all_servers["scalwsd"].available() and any(n in names for n in TREE_SCALWSD):
        log("bench: %s is not built (run make first)" % a.scalwsd)
        return 2
    if os.cpu_count() < 2 or max(a.server_cpu, a.client_cpu) >= os.cpu_count():
        log("bench: needs CPUs %d and %d; this machine has %d" % (a.server_cpu, a.client_cpu, os.cpu_count()))
        return 2

    pkgs = deps.missing(servers, selected, not a.no_callgrind,
                        [p for sc in selected if sc.backend for p in BACKENDS[sc.backend].packages()])
    if pkgs and (a.no_install or not deps.ensure(pkgs, log)):
        if a.no_install:
            log("bench: missing packages (--no-install): " + " ".join(pkgs))
        return 2
    for s in servers:
        if not s.available():
            log("bench: %s is still not installed" % s.name)
            return 2

    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-bench-")
    cap = None
    scalwsd_built = (a.scalwsd, a.modules_dir)

    def on_signal(signo, _frame):
        raise SystemExit(128 + signo)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    atexit.register(reg.cleanup)

    try:
        # the harness itself stays off the server's CPU
        os.sched_setaffinity(0, {a.client_cpu})
        os.chmod(tmp, 0o755)        # nginx and h2o workers drop to nobody
        docroot = make_docroot(tmp)

        # The run measures one build: a copy of scalwsd and its modules, so
        # that a rebuild in the tree during the run changes nothing.
        tree = [n for n in TREE_SCALWSD if n in names]
        if tree:
            snap = os.path.join(tmp, "scalwsd-build")
            os.makedirs(snap)
            shutil.copy2(a.scalwsd, os.path.join(snap, "scalwsd"))
            shutil.copytree(a.modules_dir, os.path.join(snap, "modules"))
            os.chmod(snap, 0o755)
            for n in tree:
                s = all_servers[n]
                s._binary = os.path.join(snap, "scalwsd")
                s.modules_dir = os.path.join(snap, "modules")
            a.modules_dir = os.path.join(snap, "modules")
        versions = {s.name: s.version() for s in servers}

        cap_info = None
        if a.cap:
            try:
                cap = measure.CpuCap("scalws-bench-%d" % os.getpid())
                cap_info = cap.describe()
            except OSError as e:
                log("bench: --cap unavailable here (%s): measuring without it" % e)
                a.cap = None

        started = time.time()
        per_run = a.warmup + a.duration * (2 if a.cap else 1) + 2
        runs = len(selected) * len(servers) * a.rounds
        log("bench: %s mode, %d scenario(s) x %d server(s) x %d round(s), about %d min%s"
            % (a.mode, len(selected), len(servers), a.rounds, (runs * per_run + 59) // 60,
               "" if a.no_callgrind else " plus callgrind"))
        log("bench: temp dir %s" % tmp)

        placeholders = {"UPSTREAM_KEEPALIVE": str(a.upstream_keepalive)}
        if any(sc.tls for sc in selected):
            placeholders.update(make_certificate(tmp))
        ctx = {"docroot": docroot, "modules_dir": os.path.abspath(a.modules_dir),
               "ksoftirqd": measure.kernel_threads("ksoftirqd/"),
               "commands": {}, "wrk_command": {},
               "placeholders": placeholders}
        rows, cg = [], {}
        backend_info = {}
        for sc in selected:
            names_here = [s for s in servers if s.kind() in sc.fragments]
            for rnd in range(a.rounds):
                k = rnd % len(names_here)
                order = names_here[k:] + names_here[:k]
                # the backend: one per round, shared by the round's servers
                try:
                    rctx, backend = with_backend(a, reg, ctx, sc, tmp, backend_info)
                except Exception as e:
                    err = "%s did not start: %s: %s" % (sc.backend, type(e).__name__, e)
                    log("[%s] round %d/%d ERROR %s" % (sc.name, rnd + 1, a.rounds, err))
                    for pos, srv in enumerate(order):
                        rows.append({"scenario": sc.name, "server": srv.name, "round": rnd + 1,
                                     "position": pos + 1, "attempt": 1, "valid": False, "error": err})
                    continue
                try:
                    for pos, srv in enumerate(order):
                        for attempt in range(1 + a.retries):
                            log("[%s] round %d/%d %-9s%s" % (sc.name, rnd + 1, a.rounds, srv.name,
                                                             " (again)" if attempt else ""))
                            wait_quiet(a)
                            row = measure_round(a, reg, cap, srv, sc, rctx, tmp, rnd, pos)
                            row["attempt"] = attempt + 1
                            noisy = row["valid"] and (row.get("other_cpu_pct") or 0) > a.max_other
                            if noisy:
                                why = "noisy: other processes used %.0f %% of a CPU (> %g %%)" % (
                                    row["other_cpu_pct"], a.max_other)
                                if attempt < a.retries:
                                    # kept in the raw data, out of the medians
                                    row["valid"] = False
                                    row["error"] = why + "; repeated"
                                else:
                                    row["error"] = why + "; kept, no repeat left"
                            log("    " + fmt_row(row))
                            rows.append(row)
                            if not (noisy and attempt < a.retries):
                                break
                finally:
                    if backend:
                        backend.stop()
            if not a.no_callgrind:
                # the server under callgrind needs the backend too (on the
                # client's CPU, outside callgrind)
                try:
                    rctx, backend = with_backend(a, reg, ctx, sc, tmp, backend_info)
                except Exception as e:
                    rctx, backend = None, None
                    err = "%s did not start: %s: %s" % (sc.backend, type(e).__name__, e)
                try:
                    for srv in names_here:
                        log("[%s] callgrind %s" % (sc.name, srv.name))
                        # not run under callgrind (Caddy), or skipped in the
                        # rounds (a scalwsd without HTTP/3)
                        why = srv.no_callgrind and "skipped: " + srv.no_callgrind
                        why = why or next((r["error"] for r in rows if r["scenario"] == sc.name
                                           and r["server"] == srv.name
                                           and r["error"].startswith("skipped:")), None)
                        if why:
                            log("    " + why)
                            cg[(sc.name, srv.name)] = {"error": why}
                            continue
                        try:
                            if rctx is None:
                                raise RuntimeError(err)
                            res = callgrind.measure(reg, srv, sc, rctx, os.path.join(tmp, "callgrind"),
                                                    a.server_cpu, log)
                            log("    %.0f instructions/request" % res["ir_per_req"])
                        except Exception as e:
                            res = {"error": "%s: %s" % (type(e).__name__, e)}
                            log("    ERROR " + res["error"])
                        cg[(sc.name, srv.name)] = res
                finally:
                    if backend:
                        backend.stop()

        info = {
            "mode": a.mode, "args": a, "started": started, "finished": time.time(),
            "machine": machine(), "tools": tool_versions(not a.no_callgrind),
            "versions": versions,
            "scalwsd_built": scalwsd_built,
            "servers": [s.name for s in servers], "scenarios": selected,
            "commands": ctx["commands"], "wrk_command": ctx["wrk_command"],
            "subset": subset_suffix(selected, names, a.upstream_keepalive),
            "cap_info": cap_info, "backends": backend_info, "callgrind_argv": " ".join(callgrind.valgrind_argv("$DIR", a.server_cpu)),
        }
        paths = report.write(info, rows, cg, a.out, log)
        for p in paths:
            log("bench: wrote %s" % (os.path.relpath(p, SRC) if p.startswith(SRC) else p))
        return 0
    finally:
        reg.cleanup()
        if cap:
            cap.remove()
        if a.keep_tmp:
            log("bench: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
