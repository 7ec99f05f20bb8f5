"""bench/soak --mix: one scalwsd serving every protocol and the everyday
handlers at the same time, for the whole run (see soak.py's docstring).

Each stream is a scenario of the table driven by its own load tool, with
its share of --connections; all of them start together and stop together,
and the server's worker RSS and descriptors are sampled meanwhile, as for
the other soaks.
"""

import dataclasses
import os
import tempfile
import threading
import time

import loadgen
import measure
import run as bench
import scenarios as scenario_table
from procs import free_port, wait_port

# (scenario, share of the connections in 64ths): plain HTTP/1.1 on the
# second port, the TLS scenarios on the TLS/QUIC port.
STREAMS = (
    ("static-small", 8),
    ("respond", 8),
    ("proxy", 8),
    ("cache-hit", 8),
    ("tls-h2-mux-small", 8),
    ("tls-static-1m", 4),
    ("h3-static-small", 16),
    ("h3-static-1m", 4),
)


def mix_scenario():
    """The scenario the server is configured for: TLS (HTTP/1.1 and
    HTTP/2) on PORT, QUIC on the same number, plain HTTP on PLAIN_PORT."""
    base = scenario_table.BY_NAME["h3-static-small"]
    return dataclasses.replace(base, name="mix", fragments={"scalwsd": "mix"},
                               backend="origin", tls=True, scheme="https")


def streams(connections):
    out = []
    for name, share in STREAMS:
        sc = scenario_table.BY_NAME[name]
        out.append((sc, max(1, connections * share // 64)))
    return out


def run(a, reg, cap, server, ctx, tmp, log):
    """(samples [(t, rss KiB, fds)], rows per stream)."""
    stmp = tempfile.mkdtemp(prefix="soak-mix-", dir=tmp)
    os.chmod(stmp, 0o755)
    port, plain = free_port(), free_port()
    ctx = dict(ctx, port=port,
               placeholders=dict(ctx["placeholders"], PLAIN_PORT=str(plain)))
    conf = server.render(ctx, mix_scenario(), single=False, tmp=stmp)
    argv = ["taskset", "-c", str(a.server_cpu)] + server.argv(conf, stmp)
    if cap:
        argv = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', cap.procs_file()] + argv
    r = reg.start(server.name, argv, os.path.join(stmp, "server.log"), server.stop_signal)
    samples, rows = [], []
    try:
        if not wait_port(plain, r.popen, timeout=15):
            raise RuntimeError("did not start: " + r.log_tail().strip())
        duration = int(a.minutes * 60)
        threads, boxes = [], []
        for sc, conns in streams(a.connections):
            sport = port if sc.tls else plain
            loadgen.exact(sc, sport, 3, timeout=30)      # a wrong answer stops the soak here
            url = "%s://127.0.0.1:%d%s" % (sc.scheme, sport, sc.path)
            tool = loadgen.ARGV[sc.load_tool](url, duration, conns, 1, a.client_cpu)
            out_path = os.path.join(stmp, "load-%s.txt" % sc.name)
            box = {"sc": sc, "connections": conns}
            threads.append(threading.Thread(target=lambda b=box, t=tool, o=out_path: b.update(
                r=loadgen.run_load(b["sc"].load_tool, t, o, duration))))
            boxes.append(box)
        t0 = time.monotonic()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            threads[0].join(a.interval)
            for t in threads:
                t.join(0.01)
            if not any(t.is_alive() for t in threads):
                break
            workers = measure.workers_of(r.pid, r.tree())
            samples.append((round(time.monotonic() - t0, 1),
                            sum(measure.vm_rss_kib(p) for p in workers),
                            sum(measure.open_fds(p) for p in workers)))
            log("    %5.0f s  worker RSS %6d KiB  fds %d" % samples[-1])
        for t in threads:
            t.join()
        for b in boxes:
            res = b.get("r") or {}
            rows.append({
                "scenario": b["sc"].name, "tool": b["sc"].load_tool,
                "connections": b["connections"],
                "requests": res.get("requests"),
                "errors": (res.get("non2xx") or 0) + (res.get("socket_errors") or 0)
                if res else None,
                "rps": res.get("rps"),
                "status": res.get("wrk_status"),
            })
    finally:
        reg.stop(r)
    return samples, rows


def report_lines(rows):
    lines = ["", "One scalwsd served all of these at the same time, for the whole run:", "",
             "| stream (scenario) | load tool | connections | requests | errors | req/s | tool exit |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append("| %s | %s | %d | %s | %s | %s | %s |" % (
            r["scenario"], r["tool"], r["connections"], r["requests"], r["errors"],
            "–" if r["rps"] is None else "%.0f" % r["rps"], r["status"]))
    total = sum(r["requests"] or 0 for r in rows)
    errors = sum(r["errors"] or 0 for r in rows)
    h3 = sum(r["requests"] or 0 for r in rows if r["tool"].startswith("h3load"))
    lines.append("| **all** | | | %d | %d | | |" % (total, errors))
    lines += ["", "HTTP/3 requests: %d." % h3]
    return lines
