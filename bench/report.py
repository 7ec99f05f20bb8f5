"""The Markdown report, the raw CSV files and the gnuplot chart of a run.

    docs/benchmarks/DATE-MODE-HOST.md              the report
    docs/benchmarks/DATE-MODE-ratios.svg           the chart of the ratios
    docs/benchmarks/raw/DATE-MODE-HOST.csv         one line per measured round
    docs/benchmarks/raw/DATE-MODE-HOST-callgrind.csv  instructions per request
    docs/benchmarks/raw/DATE-MODE-HOST-profiles.txt   per-request callgrind profiles
    docs/benchmarks/raw/DATE-MODE-HOST-ratios.{dat,gp} the chart's data and script

A run of only some scenarios or servers adds them to every name (MODE-HOST
becomes MODE-HOST-proxy, MODE-HOST-proxy+respond-scalwsd+nginx; the chart
DATE-MODE-proxy-ratios.svg ...), so that it does not overwrite the report of
a full run of the same day, nor a run of other subsets.

Every ratio is oriented so that above 1 means scalwsd does better:
req/s scalwsd / peer; CPU and instructions peer / scalwsd.
"""

import csv
import math
import os
import re
import shutil
import statistics
import subprocess
import time

BASE = "scalwsd"
# other scalwsd entries: they take scalwsd's configurations
SCALWSD_VARIANTS = ("scalwsd-base", "scalwsd-uring", "scalwsd-pause")

CSV_FIELDS = [
    "scenario", "server", "round", "position", "attempt", "valid", "error", "requests", "elapsed_s", "rps",
    "p50_ms", "p99_ms", "non2xx", "socket_errors", "cpu_user_s", "cpu_sys_s", "cpu_us_per_req",
    "user_us_per_req", "sys_us_per_req", "server_cpu_pct", "wrk_cpu_pct", "ksoftirqd_pct",
    "other_cpu_pct", "steal_pct", "tcp_segs_per_req", "rss_total_kib", "rss_worker_kib", "processes",
    "tcp_opens_per_req", "origin_cpu_pct", "origin_us_per_req", "cap", "capped_rps",
    "capped_p99_ms", "capped_non2xx", "capped_socket_errors", "capped_throttled_pct", "capped_valid",
]


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _num(v, digits=0, dash="–"):
    if v is None:
        return dash
    s = "{:,.{d}f}".format(v, d=digits)
    return s.replace(",", "\u202f")         # narrow no-break space between thousands


def _ratio(v):
    return "–" if v is None else "%.2f×" % v


def summarize(rows, cg, scenarios, servers):
    """{(scenario, server): medians over the valid rounds, ratios to scalwsd}."""
    out = {}
    for sc in scenarios:
        for srv in servers:
            key = (sc.name, srv)
            if (srv if srv not in SCALWSD_VARIANTS else "scalwsd") not in sc.fragments:
                out[key] = {"na": sc.not_applicable.get(srv, "not configured for this scenario")}
                if srv == "floor":
                    out[key]["hide"] = True     # a reference for fixed responses only
                continue
            rs = [r for r in rows if r["scenario"] == sc.name and r["server"] == srv]
            ok = [r for r in rs if r["valid"]]
            capped = [r for r in rs if r.get("capped_valid")]
            s = {"rounds": len(rs), "valid": len(ok),
                 "errors": sorted({r["error"] for r in rs if r["error"]}),
                 "non2xx": sum(r.get("non2xx") or 0 for r in rs)}
            for k in ("rps", "p99_ms", "cpu_us_per_req", "user_us_per_req", "sys_us_per_req",
                      "server_cpu_pct", "wrk_cpu_pct", "ksoftirqd_pct", "other_cpu_pct", "steal_pct",
                      "tcp_segs_per_req", "tcp_opens_per_req", "origin_cpu_pct", "origin_us_per_req",
                      "rss_total_kib", "rss_worker_kib"):
                s[k] = _median([r.get(k) for r in ok])
            s["capped_rps"] = _median([r.get("capped_rps") for r in capped])
            rps = [r["rps"] for r in ok if r.get("rps")]
            s["cv_pct"] = (100.0 * statistics.pstdev(rps) / statistics.mean(rps)) if len(rps) > 1 else None
            c = cg.get(key)
            s["ir_per_req"] = c.get("ir_per_req") if c else None
            s["cg_error"] = c.get("error") if c else None
            out[key] = s
    for sc in scenarios:
        base = out.get((sc.name, BASE))
        for srv in servers:
            s = out[(sc.name, srv)]
            if "na" in s:
                continue
            ok = base is not None and "na" not in base

            def div(x, y):
                return x / y if (x is not None and y) else None
            s["rps_ratio"] = div(base["rps"], s["rps"]) if ok else None
            s["cpu_ratio"] = div(s["cpu_us_per_req"], base["cpu_us_per_req"]) if ok else None
            s["capped_ratio"] = div(base["capped_rps"], s["capped_rps"]) if ok else None
            s["ir_ratio"] = div(s["ir_per_req"], base["ir_per_req"]) if ok else None
    return out


def _floor_target(sc, summary, servers):
    """The line of a scenario measured beside the floor (the cache ones):
    scalwsd's CPU per request against the floor's and its capacity against
    nginx's, with issue 26's target for the 100 KiB hit (within 10 % of
    the floor, at least nginx's capacity, in the same run)."""
    if not sc.with_floor or BASE not in servers or "floor" not in servers:
        return None
    ours, floor = summary[(sc.name, BASE)], summary[(sc.name, "floor")]
    if "na" in ours or "na" in floor or not ours.get("cpu_us_per_req") \
            or not floor.get("cpu_us_per_req"):
        return None
    over = ours["cpu_us_per_req"] / floor["cpu_us_per_req"]
    text = ("Against the floor: scalwsd %s CPU µs/req, %.2f× the floor's %s (target: at most "
            "1.10×, %s)" % (_num(ours["cpu_us_per_req"], 2), over,
                           _num(floor["cpu_us_per_req"], 2), "met" if over <= 1.10 else "not met"))
    ngx = summary.get((sc.name, "nginx"))
    if ngx and "na" not in ngx and ngx.get("cpu_ratio"):
        text += ("; capacity %.2f× nginx's (target: at least 1.00×, %s)" % (
            ngx["cpu_ratio"], "met" if ngx["cpu_ratio"] >= 1.0 else "not met"))
    return text + "."


def _fn_label(name):
    """'file:function [object]' -> ('function', 'file', 'object')."""
    m = re.match(r"^(.*?):(.+?)(?: \[(.+)\])?$", name)
    if not m:
        return name, "", ""
    f, fn, obj = m.group(1), m.group(2), m.group(3) or ""
    if f.startswith("./") or f == "???":
        f = os.path.basename(f) if f != "???" else "?"
    return fn, f, os.path.basename(obj)


# ---- files -------------------------------------------------------------

def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})


def write_callgrind_csv(path, cg):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "server", "n1", "ir1", "n2", "ir2", "ir_per_req", "error"])
        for (sc, srv), c in cg.items():
            w.writerow([sc, srv, c.get("n1"), c.get("ir1"), c.get("n2"), c.get("ir2"),
                        round(c["ir_per_req"], 1) if c.get("ir_per_req") is not None else "",
                        c.get("error", "")])


def write_profiles(path, cg):
    with open(path, "w") as f:
        f.write("Per-request user-space instructions by function: (Ir(N2) - Ir(N1)) / (N2 - N1),\n"
                "self cost (callgrind_annotate --inclusive=no), from the two callgrind runs.\n")
        for (sc, srv), c in cg.items():
            f.write("\n== %s / %s" % (sc, srv))
            if c.get("error"):
                f.write(": ERROR %s\n" % c["error"])
                continue
            f.write(": %.0f instructions per request (N1 %d, N2 %d)\n" % (c["ir_per_req"], c["n1"], c["n2"]))
            f.write("-- by object\n")
            for obj, v in c["objects"].items():
                f.write("%10.1f  %s\n" % (v, obj))
            f.write("-- by function\n")
            for v, name in c["profile"]:
                f.write("%10.1f  %s\n" % (v, name))


def chart(base_dir, raw_dir, stem, svg_name, summary, scenarios, servers, log):
    """gnuplot clustered histogram of the ratios; returns the SVG path or None."""
    series = [("rps_ratio", "req/s (scalwsd / peer)"),
              ("cpu_ratio", "capacity: CPU µs/req (peer / scalwsd)"),
              ("capped_ratio", "req/s with the server capped (scalwsd / peer)"),
              ("ir_ratio", "instructions/req (peer / scalwsd)")]
    peers = [s for s in servers if s != BASE]
    lines, labels = [], []
    for sc in scenarios:
        for p in peers:
            s = summary.get((sc.name, p), {})
            if "na" in s or not s:
                continue
            lines.append(["%s %s" % (sc.name, p)] + [s.get(k) for k, _ in series])
            labels.append((sc.name, p))
    used = [i for i, _ in enumerate(series) if any(l[i + 1] is not None for l in lines)]
    if not lines or not used:
        return None
    dat = os.path.join(raw_dir, stem + "-ratios.dat")
    gp = os.path.join(raw_dir, stem + "-ratios.gp")
    svg = os.path.join(base_dir, svg_name)
    with open(dat, "w") as f:
        f.write("# label\t" + "\t".join(series[i][0] for i in used) + "\n")
        for l in lines:
            f.write("\"%s\"\t" % l[0] + "\t".join("?" if l[i + 1] is None else "%.4f" % l[i + 1]
                                                  for i in used) + "\n")
    plots = []
    for n, i in enumerate(used):
        src = "'%s'" % os.path.basename(dat) if n == 0 else "''"
        plots.append("%s using %d title '%s'" % (src, n + 2, series[i][1]))
    width = max(900, 30 * len(lines) * (len(used) + 1) + 200)
    # a log2 axis: 0.5x and 2x are as far from parity
    vals = [v for l in lines for v in l[1:] if v]
    lo = 2.0 ** min(-1, math.floor(math.log2(min(vals) * 0.8)))
    hi = 2.0 ** max(1, math.ceil(math.log2(max(vals) * 1.1)))
    tics = []
    t = lo
    while t <= hi * 1.001:
        tics.append("\"%g\" %g" % (t, t))
        t *= 2
    with open(gp, "w") as f:
        f.write("""# ScalWS benchmark ratios (bench/report.py); run from this directory:
#   gnuplot %(gp)s
set terminal svg size %(w)d,600 dynamic font 'sans,12' background rgb 'white'
set output '%(svg)s'
set title "scalwsd against each peer: above 1 = scalwsd better" noenhanced
set datafile separator '\\t'
set datafile missing '?'
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'ratio (log scale)'
set logscale y 2
set yrange [%(lo)g:%(hi)g]
set ytics (%(tics)s)
set grid ytics
set bmargin 7
set key outside bottom center horizontal noenhanced
set xtics (%(xtics)s) scale 0 noenhanced
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#333333' front
plot %(plots)s
""" % {"gp": os.path.basename(gp), "w": width, "svg": os.path.relpath(svg, raw_dir),
                "lo": lo, "hi": hi, "tics": ", ".join(tics),
                "xtics": ", ".join('"%s\\n%s" %d' % (sc, p, k) for k, (sc, p) in enumerate(labels)),
                "plots": ", \\\n     ".join(plots)})
    if not shutil.which("gnuplot"):
        log("bench: gnuplot is not installed: no chart")
        return None
    p = subprocess.run(["gnuplot", os.path.basename(gp)], cwd=raw_dir, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60, check=False)
    if p.returncode != 0 or not os.path.exists(svg):
        log("bench: gnuplot failed: " + p.stdout.decode("utf-8", "replace")[-500:])
        return None
    return svg


# ---- the Markdown report ----------------------------------------------

def write(info, rows, cg, out_dir, log):
    a = info["args"]
    date = time.strftime("%Y-%m-%d", time.localtime(info["started"]))
    host = re.sub(r"[^A-Za-z0-9-]+", "-", info["machine"]["hostname"].split(".")[0]) or "host"
    subset = info.get("subset", "")
    stem = "%s-%s-%s%s" % (date, info["mode"], host, subset)
    svg_name = "%s-%s%s-ratios.svg" % (date, info["mode"], subset)
    if os.path.exists(os.path.join(out_dir, stem + ".md")):
        # a second run of the same scenarios and servers on the same day
        # keeps the first report: this one is named by its start time too
        hhmm = time.strftime("%H%M", time.localtime(info["started"]))
        stem = "%s-%s-%s-%s%s" % (date, hhmm, info["mode"], host, subset)
        svg_name = "%s-%s-%s%s-ratios.svg" % (date, hhmm, info["mode"], subset)
    raw_dir = os.path.join(out_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    scenarios, servers = info["scenarios"], info["servers"]
    summary = summarize(rows, cg, scenarios, servers)

    paths = []
    csv_path = os.path.join(raw_dir, stem + ".csv")
    write_csv(csv_path, rows)
    paths.append(csv_path)
    cg_csv = prof = None
    if cg:
        cg_csv = os.path.join(raw_dir, stem + "-callgrind.csv")
        write_callgrind_csv(cg_csv, cg)
        prof = os.path.join(raw_dir, stem + "-profiles.txt")
        write_profiles(prof, cg)
        paths += [cg_csv, prof]
    svg = chart(out_dir, raw_dir, stem, svg_name, summary, scenarios, servers, log)
    if svg:
        paths.append(svg)

    m = info["machine"]
    L = []
    add = L.append
    add("# Benchmark: %s mode, %s, host %s" % (info["mode"], date, m["hostname"]))
    add("")
    add("scalwsd side by side with %s in one run (`bench/run`, %s to %s local time). "
        "Every ratio reads *above 1 = scalwsd better*." % (
            ", ".join(s for s in servers if s != BASE) or "no peer",
            time.strftime("%H:%M", time.localtime(info["started"])),
            time.strftime("%H:%M", time.localtime(info["finished"]))))
    add("")

    # -- at a glance
    peers = [s for s in servers if s != BASE]
    if BASE in servers and peers:
        add("## Ratios at a glance")
        add("")
        hdr = ["scenario", "peer", "req/s scalwsd ÷ peer", "capacity: CPU µs/req peer ÷ scalwsd"]
        if a.cap:
            hdr.append("req/s at %d %% CPU scalwsd ÷ peer" % round(a.cap * 100))
        if cg:
            hdr.append("instructions/req peer ÷ scalwsd")
        add("| " + " | ".join(hdr) + " |")
        add("|" + "---|" * len(hdr))
        for sc in scenarios:
            for p in peers:
                s = summary[(sc.name, p)]
                if s.get("hide"):
                    continue
                if "na" in s:
                    cells = [sc.name, p] + ["n/a"] * (len(hdr) - 2)
                else:
                    cells = [sc.name, p, _ratio(s["rps_ratio"]), _ratio(s["cpu_ratio"])]
                    if a.cap:
                        cells.append(_ratio(s["capped_ratio"]))
                    if cg:
                        cells.append(_ratio(s["ir_ratio"]))
                add("| " + " | ".join(cells) + " |")
        add("")
        if svg:
            add("![scalwsd / peer ratios](%s)" % os.path.basename(svg))
            add("")

    # -- machine and software
    add("## Machine")
    add("")
    add("- CPU: %s, %s CPU(s) (%s core(s) per socket, %s thread(s) per core)%s" % (
        m.get("Model name", "?"), m.get("CPU(s)", "?"), m.get("Core(s) per socket", "?"),
        m.get("Thread(s) per core", "?"),
        ", virtual machine (%s)" % m["Hypervisor vendor"] if m.get("Hypervisor vendor") else ""))
    add("- Memory: %s; kernel %s; Debian %s; CPU frequency governor: %s" % (
        m["memory"], m["kernel"], m["debian"], m["governor"]))
    add("- TCP: %s" % m.get("tcp", "?"))
    backends = info.get("backends") or {}
    add("- Server on CPU %d, wrk and the harness on CPU %d (`taskset`)%s." % (
        a.server_cpu, a.client_cpu,
        "; %s's %s on CPU %d too, sharing it with wrk" % (
            " and ".join(", ".join(b["scenarios"]) for b in backends.values()),
            " and ".join(backends), a.client_cpu) if backends else ""))
    add("")
    add("## Software")
    add("")
    add("| program | version |")
    add("|---|---|")
    for s in servers:
        add("| %s | %s |" % (s, info["versions"].get(s, "?").replace("|", "/")))
    for k, v in info["tools"].items():
        add("| %s | %s |" % (k, v))
    for k, b in backends.items():
        add("| %s (%s) | %s |" % (k, ", ".join(b["scenarios"]), b["description"].replace("|", "/")))
    add("")

    # -- method
    add("## Method")
    add("")
    add("- Mode %s: %d round(s) per scenario; in each round every server is started fresh "
        "(server order rotated by one each round), warmed up for %d s with the same wrk "
        "command, then measured for %d s. Medians over the valid rounds." % (
            info["mode"], a.rounds, a.warmup, a.duration))
    add("- %d connections, HTTP/1.1 keep-alive, one wrk thread; one worker process (or "
        "event-loop thread) per server pinned to CPU %d; access logs off everywhere; "
        "keep-alive request limits raised to 1 000 000 where a server has one; same document "
        "root (`hello.txt` = 13 bytes, `1m.bin` = 1 MiB random) made in a temp dir." % (
            a.connections, a.server_cpu))
    add("- Configurations: `bench/configs/SERVER/` (a base template and one fragment per "
        "scenario that needs one).")
    if BASE in servers:
        add("- scalwsd: a copy of `%s` and of the modules in `%s`, taken when the run started." %
            tuple(os.path.relpath(p, os.getcwd()) if p.startswith(os.getcwd()) else p
                  for p in info["scalwsd_built"]))
    if "floor" in servers:
        add("- floor: not a web server but a reference (`bench/floor.c`, built by the harness): "
            "one process that answers every request of the fixed-response scenarios with one "
            "`writev()` of a prebuilt head and a body in memory, and does nothing else. Its CPU "
            "per request is about the kernel's share of the exchange, which no server goes "
            "below; scalwsd's capacity against it (below 1) shows how close to that floor it is.")
    add("- CPU µs/req: user + system time of all the server's processes (`/proc/PID/stat`, "
        "reaped children included) over the measured window, divided by wrk's request count. "
        "Peak RSS: `VmHWM` summed over all the server's processes / over the workers only.")
    for k, b in backends.items():
        add("- %s (%s): started by the harness once per round, before the round's servers, which "
            "all use it (and once more for the callgrind runs), pinned to CPU %d with wrk: "
            "wrk and the %s share that CPU, so the client side can run out of CPU sooner than "
            "in the other scenarios (wrk %% + origin %% near 100). Its CPU time (origin %%, origin CPU µs/req) is measured from "
            "`/proc` like the server's and never counted as the server's; \"other\" excludes it. "
            "Configuration: `bench/configs/%s/`." % (k, ", ".join(b["scenarios"]), a.client_cpu, k,
                                                      b.get("config_dir", k)))
    if a.cap:
        add("- Capped: right after the measured window, another %d s window with the server's "
            "process tree limited to %d %% of one CPU by %s; the server is then the bottleneck, "
            "not wrk." % (a.duration, round(a.cap * 100), info.get("cap_info") or "a cgroup"))
    if cg:
        add("- Instructions/request: the server as a single process under callgrind, run twice "
            "with N1 and N2 requests sent one after another on one keep-alive connection by "
            "bench/loadgen.py; (Ir(N2) − Ir(N1)) / (N2 − N1), user space only. Command: `%s "
            "SERVER-COMMAND` (nginx and scalwsd with `master_process off`)." % info["callgrind_argv"])
    add("- A round with any non-2xx answer, socket error or wrk failure is invalid: it is "
        "listed below and left out of the medians. Before each round the harness waits (up to "
        "%g s) for the rest of the machine to use less than %g %% of a CPU; a round during which "
        "other processes used more than that is repeated (up to %d times), the noisy attempt "
        "staying in the raw data, out of the medians." % (a.quiet_wait, a.max_other, a.retries))
    add("")
    add("Exact commands (`$TMP` = the run's temp dir, `$RUN` = the round's own dir in it; "
        "PORT = a free loopback port%s):" % (
            "; each server is started inside the cgroup: `sh -c 'echo $$ > CGROUP/cgroup.procs "
            "&& exec \"$@\"'` in front of its command" if a.cap else ""))
    add("")
    add("```")
    for sc in scenarios:
        if sc.name in info["wrk_command"]:
            add("# %s" % sc.name)
            add(info["wrk_command"][sc.name])
    for s in servers:
        if s in info["commands"]:
            add("# %s" % s)
            add(info["commands"][s])
    for k, b in backends.items():
        add("# %s" % k + (" ($ORIGIN = its own dir in $TMP)" if "$ORIGIN" in b["command"] else ""))
        add(b["command"])
    add("```")
    add("")

    # -- results
    add("## Results")
    add("")
    notes = []
    for sc in scenarios:
        add("### %s" % sc.name)
        add("")
        add(sc.description + ".")
        add("")
        hdr = ["server", "req/s", "scalwsd ÷ peer", "CV %", "p99 ms", "non-2xx",
               "CPU µs/req (user + sys)", "capacity ratio", "TCP segments/req"]
        if a.cap:
            hdr += ["req/s at %d %% CPU" % round(a.cap * 100), "scalwsd ÷ peer "]
        hdr += ["peak RSS MiB all / worker"]
        if cg:
            hdr += ["instructions/req", "peer ÷ scalwsd"]
        if sc.backend:
            hdr += ["%s CPU µs/req" % sc.backend, "upstream connections opened/req"]
        hdr += ["valid rounds"]
        add("| " + " | ".join(hdr) + " |")
        add("|" + "---|" * len(hdr))
        for srv in servers:
            s = summary[(sc.name, srv)]
            if s.get("hide"):
                continue
            if "na" in s:
                add("| " + " | ".join([srv] + ["n/a"] * (len(hdr) - 2) + [s["na"]]) + " |")
                continue
            is_base = srv == BASE
            cells = [("**%s**" % srv) if is_base else srv, _num(s["rps"]),
                     "" if is_base else _ratio(s["rps_ratio"]), _num(s["cv_pct"], 1),
                     _num(s["p99_ms"], 2), str(s["non2xx"]),
                     "%s (%s + %s)" % (_num(s["cpu_us_per_req"], 2), _num(s["user_us_per_req"], 2),
                                        _num(s["sys_us_per_req"], 2)),
                     "" if is_base else _ratio(s["cpu_ratio"]), _num(s["tcp_segs_per_req"], 1)]
            if a.cap:
                cells += [_num(s["capped_rps"]), "" if is_base else _ratio(s["capped_ratio"])]
            cells.append("%s / %s" % (_num(s["rss_total_kib"] and s["rss_total_kib"] / 1024.0, 1),
                                      _num(s["rss_worker_kib"] and s["rss_worker_kib"] / 1024.0, 1)))
            if cg:
                cells += [_num(s["ir_per_req"]) if not s["cg_error"] else "error",
                          "" if is_base else _ratio(s["ir_ratio"])]
            if sc.backend:
                cells += [_num(s["origin_us_per_req"], 2), _num(s["tcp_opens_per_req"], 3)]
            cells.append("%d / %d" % (s["valid"], s["rounds"]))
            add("| " + " | ".join(cells) + " |")
            for e in s["errors"]:
                notes.append("%s / %s: %s" % (sc.name, srv, e))
            if s["cg_error"]:
                notes.append("%s / %s callgrind: %s" % (sc.name, srv, s["cg_error"]))
        add("")
        target = _floor_target(sc, summary, servers)
        if target:
            add(target)
            add("")
        wrk_cpu = _median([summary[(sc.name, x)].get("wrk_cpu_pct") for x in servers])
        srv_cpu = {x: summary[(sc.name, x)].get("server_cpu_pct") for x in servers}
        other = _median([summary[(sc.name, x)].get("other_cpu_pct") for x in servers])
        ksoft = _median([summary[(sc.name, x)].get("ksoftirqd_pct") for x in servers])
        steal = _median([summary[(sc.name, x)].get("steal_pct") for x in servers])
        origin = _median([summary[(sc.name, x)].get("origin_cpu_pct") for x in servers])
        client = (wrk_cpu or 0) + (origin or 0) if wrk_cpu is not None else None
        bits = []
        if wrk_cpu is not None:
            bits.append("wrk used %.0f %% of its CPU (median)" % wrk_cpu)
        if origin is not None:
            bits.append("the %s %.0f %% of the same CPU (%s)" % (sc.backend, origin, ", ".join(
                "%s %.0f %%" % (x, summary[(sc.name, x)]["origin_cpu_pct"]) for x in servers
                if summary[(sc.name, x)].get("origin_cpu_pct") is not None)))
        if any(v is not None for v in srv_cpu.values()):
            bits.append("server CPU use: " + ", ".join("%s %.0f %%" % (k, v) for k, v in srv_cpu.items()
                                                        if v is not None))
        if other is not None:
            bits.append("ksoftirqd %.0f %%; other load on the two CPUs %.0f %%, steal %.1f %%" % (
                ksoft or 0, other, steal or 0))
        if bits:
            add("*" + "; ".join(bits) + ".*")
            add("")
        if client is not None and client >= 90:
            sat = [k for k, v in srv_cpu.items() if v is not None and v < 90]
            add("%s CPU-bound here%s: the req/s ratio partly measures the client; the CPU µs/req "
                "%s the capacity comparison." % (
                    "wrk and the %s together were" % sc.backend if origin is not None else "wrk was",
                    " and %s did not fill %s CPU" % (" and ".join(sat), "its" if len(sat) == 1 else "their")
                    if sat else "",
                    "and the capped req/s are" if a.cap else "is"))
            add("")
        churn = [(x, summary[(sc.name, x)]["tcp_opens_per_req"]) for x in servers
                 if (summary[(sc.name, x)].get("tcp_opens_per_req") or 0) >= 0.01]
        # TCP connections to an origin (the php and wordpress backends are
        # reached over unix sockets: the machine's counter is other traffic)
        if sc.backend == "origin" and churn:
            add("New connections to the %s per request: %s (nginx and scalwsd: `keepalive %d` "
                "for %d client connections)." % (sc.backend, ", ".join(
                    "%s %.3f" % (x, v) for x, v in churn), a.upstream_keepalive, a.connections))
            add("")
        if other is not None and other > 10:
            add("Other processes used %.0f %% of a CPU during these windows (median): expect noise." % other)
            add("")

    if notes:
        add("### Invalid or noisy rounds and errors")
        add("")
        for n in notes:
            add("- " + n)
        add("")

    # -- profiles
    if cg:
        add("## Where scalwsd's instructions go (callgrind, per request)")
        add("")
        add("Self cost per request by function, (Ir(N2) − Ir(N1)) / (N2 − N1); all servers and "
            "all functions: `raw/%s`." % os.path.basename(prof))
        add("")
        for sc in scenarios:
            c = cg.get((sc.name, BASE))
            if not c or c.get("error"):
                continue
            add("**%s**: %.0f instructions per request. By object: %s." % (
                sc.name, c["ir_per_req"],
                ", ".join("%s %.0f" % (o, v) for o, v in c["objects"].items() if v >= 1)))
            for p in peers:
                pc = cg.get((sc.name, p))
                if pc and not pc.get("error"):
                    add("%s: %.0f (%s)." % (p, pc["ir_per_req"], ", ".join(
                        "%s %.0f" % (o, v) for o, v in list(pc["objects"].items())[:4] if v >= 1)))
            add("")
            add("| instructions/req | share | function | file | object |")
            add("|---:|---:|---|---|---|")
            for v, name in c["profile"][:20]:
                fn, f, obj = _fn_label(name)
                add("| %.1f | %.1f %% | `%s` | %s | %s |" % (v, 100.0 * v / c["ir_per_req"], fn, f, obj))
            add("")

    # -- raw rounds
    add("## Per-round numbers")
    add("")
    add("All rounds, repeated ones included (also `raw/%s`). server, wrk, ksoftirqd, %sother: CPU "
        "use in %% of one CPU over the measured window; other = busy time on both CPUs used "
        "by none of those (other processes, the harness, softirqs taken while idle)."
        % (os.path.basename(csv_path), "origin, " if any(r.get("origin_cpu_pct") is not None
                                                          for r in rows) else ""))
    add("")
    hdr = ["scenario", "round", "pos", "server", "req/s", "p99 ms", "non-2xx", "CPU µs/req",
           "server %", "wrk %", "ksoftirqd %", "other %", "steal %", "TCP segments/req",
           "RSS KiB all / worker"]
    with_origin = any(r.get("origin_cpu_pct") is not None for r in rows)
    if with_origin:
        hdr += ["origin %", "connections opened/req"]
    if a.cap:
        hdr += ["capped req/s", "throttled %"]
    hdr += ["valid"]
    add("| " + " | ".join(hdr) + " |")
    add("|" + "---|" * len(hdr))
    for r in rows:
        cells = [r["scenario"], str(r["round"]), str(r["position"]), r["server"],
                 _num(r.get("rps")), _num(r.get("p99_ms"), 2), str(r.get("non2xx", "–")),
                 _num(r.get("cpu_us_per_req"), 2), _num(r.get("server_cpu_pct")),
                 _num(r.get("wrk_cpu_pct")), _num(r.get("ksoftirqd_pct")), _num(r.get("other_cpu_pct")),
                 _num(r.get("steal_pct"), 1), _num(r.get("tcp_segs_per_req"), 1),
                 "%s / %s" % (_num(r.get("rss_total_kib")), _num(r.get("rss_worker_kib")))]
        if with_origin:
            cells += [_num(r.get("origin_cpu_pct")), _num(r.get("tcp_opens_per_req"), 3)]
        if a.cap:
            cells += [_num(r.get("capped_rps")), _num(r.get("capped_throttled_pct"))]
        cells.append("yes" if r["valid"] else "**no**: " + r["error"])
        add("| " + " | ".join(cells) + " |")
    add("")
    if cg:
        add("Callgrind runs (`raw/%s`):" % os.path.basename(cg_csv))
        add("")
        add("| scenario | server | N1 | Ir(N1) | N2 | Ir(N2) | instructions/req |")
        add("|---|---|---:|---:|---:|---:|---:|")
        for (scn, srv), c in cg.items():
            if c.get("error"):
                add("| %s | %s | | | | | error |" % (scn, srv))
            else:
                add("| %s | %s | %d | %s | %d | %s | %.1f |" % (scn, srv, c["n1"], _num(c["ir1"]), c["n2"],
                                                             _num(c["ir2"]), c["ir_per_req"]))
        add("")
    add("## Caveats")
    add("")
    add("- Two CPUs shared by everything: the server has CPU %d to itself only as far as the "
        "rest of the machine lets it (see \"other\" above); the loopback network stack's work "
        "is charged to whichever side the kernel runs it on. See bench/README.md." % a.server_cpu)
    add("- One wrk thread on one CPU can be slower than a fast server: then req/s compares the "
        "client's limit, and CPU µs/req (and the capped req/s) are the numbers that rank the servers.")
    names = [sc.name for sc in scenarios]
    if "respond" in names:
        add("- Fixed responses: nginx and scalwsd answer from their configuration; h2o runs an mruby "
            "handler and lighttpd a mod_magnet Lua script per request (neither has a native fixed "
            "response).")
    if "proxy" in names:
        add("- proxy: the origin shares CPU %d with wrk, so the client side (wrk + origin) can "
            "run out of CPU sooner than in the other scenarios; when wrk %% + origin %% nears 100 "
            "and the server is below ~90 %%, req/s measures the client: rank the servers by CPU "
            "µs/req, the capped req/s and instructions/req. TCP segments/req count "
            "both hops (client ↔ server and server ↔ origin). Every server sends the origin "
            "X-Forwarded-For and X-Forwarded-Proto (nginx configured to, as scalwsd, h2o and "
            "lighttpd do by default; h2o's Via is turned off); lighttpd also sends X-Host and "
            "X-Forwarded-Host. Upstream keep-alive: nginx (`keepalive %d`, HTTP/1.1, empty "
            "Connection), scalwsd (`keepalive %d`; 32 is its default), h2o (its default, no limit "
            "on the idle connections it keeps); lighttpd 1.4 has none and opens one connection to "
            "the origin per request (`Connection: close`), which costs it and the origin more per "
            "request. `keepalive N` bounds the idle connections kept: with N below the %d client "
            "connections, a connection that comes back idle when N are already idle is closed, and "
            "a later request opens a new one (\"upstream connections opened/req\"; "
            "`--upstream-keepalive` changes N)." % (
                a.client_cpu, a.upstream_keepalive, a.upstream_keepalive, a.connections))
    add("")

    md = os.path.join(out_dir, stem + ".md")
    with open(md, "w") as f:
        f.write("\n".join(L))
    paths.insert(0, md)
    return paths
