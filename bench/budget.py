#!/usr/bin/env python3
"""The instruction budget check of `make test`.

scalwsd runs under callgrind as bench/callgrind.py runs it (one process, a
sequential keep-alive client, the difference of two runs of N1 and N2
requests) on the scenarios named in bench/budgets, with every module of the
build loaded. A scenario whose instructions per request exceed its budget
by more than the tolerance (3 %) fails the check; one that fell well below
its budget (more than 3 % too) is reported so that the budget is lowered in
the same commit: budgets only move down.

    bench/budget.py [--scalwsd objs/scalwsd] [--modules-dir objs/modules]
                    [--budgets bench/budgets] [--scenarios a,b] [--counts N1,N2]
                    [--show-profile N] [--nginx] [--h2o] [--events "use io_uring;"]

--nginx (--h2o) also measures nginx (h2o) (bench/configs/nginx, the same scenarios,
fragments and client) and prints its figure beside each, for comparison
only: budgets are scalwsd's. --events puts directives into scalwsd's
events block. A scenario named in --scenarios that has no line in the
budgets file (node, python, node-unix, python-unix: the front end's own
instructions in front of an application) is measured and printed with
"no budget", never failing the check.

Exit status: 0 within budget (or skipped, with the reason printed),
1 over budget, 2 could not measure.
"""

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)

import backends                                             # noqa: E402
import callgrind                                            # noqa: E402
import run                                                  # noqa: E402
import scenarios as scenario_table                          # noqa: E402
from procs import Registry                                  # noqa: E402
from servers import H2o, Nginx, Scalwsd                     # noqa: E402

TOLERANCE = 0.03
# As bench/run's callgrind part: 4,000 keep-alive requests between the two
# runs; the count is deterministic, the check takes about half a minute.
COUNTS = (2000, 6000)


def read_budgets(path):
    """[(scenario, budget)] in the file's order; '#' starts a comment."""
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            if len(line) != 2 or not line[1].isdigit():
                raise ValueError("%s:%d: expected \"SCENARIO INSTRUCTIONS\"" % (path, n))
            out.append((line[0], int(line[1])))
    return out


def skip_reason(scalwsd):
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        return "valgrind is not installed (sh auto/deps test installs it)"
    # A sanitizer build counts its own instrumentation: its figures mean nothing.
    build = os.path.dirname(os.path.abspath(scalwsd))
    if os.path.basename(build) == "objs-san":
        return "a sanitizer build (%s)" % build
    try:
        with open(os.path.join(build, "config.mk")) as f:
            if "-fsanitize" in f.read():
                return "a sanitizer build (%s/config.mk has -fsanitize)" % build
    except OSError:
        pass
    return None


def make_docroot(tmp):
    docroot = os.path.join(tmp, "docroot")
    os.makedirs(docroot)
    with open(os.path.join(docroot, "hello.txt"), "wb") as f:
        f.write(scenario_table.HELLO)
    return docroot


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = os.path.dirname(BENCH)
    p.add_argument("--scalwsd", default=os.environ.get("SCALWSD") or os.path.join(src, "objs", "scalwsd"))
    p.add_argument("--modules-dir", default=os.environ.get("SCALWS_MODULES") or os.path.join(src, "objs", "modules"))
    p.add_argument("--budgets", default=os.path.join(BENCH, "budgets"))
    p.add_argument("--scenarios", default="", help="only these (comma-separated)")
    p.add_argument("--counts", default="%d,%d" % COUNTS, help="N1,N2 (default %(default)s)")
    p.add_argument("--show-profile", type=int, default=0, metavar="N",
                   help="print the N costliest functions per request of each scenario")
    p.add_argument("--cpu", type=int, default=0, help="the server's CPU (taskset)")
    p.add_argument("--nginx", action="store_true",
                   help="also measure nginx on the same scenarios (printed, not budgeted)")
    p.add_argument("--h2o", action="store_true",
                   help="also measure h2o on the same scenarios (printed, not budgeted)")
    p.add_argument("--events", default="", metavar="TEXT",
                   help='directives for the events block, e.g. "use io_uring;"')
    p.add_argument("--keep-tmp", action="store_true",
                   help="keep the temp dir (configurations, callgrind files) and print it")
    a = p.parse_args(argv)

    why = skip_reason(a.scalwsd)
    if why:
        print("instruction budgets: skipped: %s" % why)
        return 0
    try:
        budgets = read_budgets(a.budgets)
    except (OSError, ValueError) as e:
        print("instruction budgets: ERROR %s" % e)
        return 2
    if a.scenarios:
        only = a.scenarios.split(",")
        named = [b[0] for b in budgets]
        budgets = [b for b in budgets if b[0] in only] + \
            [(n, None) for n in only if n not in named]     # measured, not budgeted
    n1, n2 = (int(x) for x in a.counts.split(","))
    table = {sc.name: sc for sc in scenario_table.SCENARIOS}

    reg = Registry()
    tmp = tempfile.mkdtemp(prefix="scalws-budget-")
    os.chmod(tmp, 0o755)
    server = Scalwsd(os.path.abspath(a.scalwsd), os.path.abspath(a.modules_dir),
                     events_conf=a.events)
    # (the TLS scenarios' certificate, as bench/run makes it)
    ctx = {"docroot": make_docroot(tmp), "modules_dir": os.path.abspath(a.modules_dir),
           "placeholders": dict({"UPSTREAM_KEEPALIVE": "64"}, **run.make_certificate(tmp))}
    over, under, failed = [], [], []
    try:
        for name, budget in budgets:
            sc = table.get(name)
            if sc is None:
                failed.append("%s: no such scenario in bench/scenarios.py" % name)
                continue
            sc = dataclasses.replace(sc, callgrind_counts=(n1, n2))
            backend = None
            try:
                rctx = ctx
                if sc.backend:
                    backend = backends.BACKENDS[sc.backend].start(reg, tmp, 1 if a.cpu == 0 else 0,
                                                                  lambda m: None)
                    rctx = dict(ctx, placeholders=dict(ctx["placeholders"], **backend.placeholders))
                res = callgrind.measure(reg, server, sc, rctx, os.path.join(tmp, "callgrind"),
                                        a.cpu, lambda m: None)
                peers = []
                for want, peer in ((a.nginx, Nginx()), (a.h2o, H2o())):
                    if want and peer.available() and peer.name in sc.fragments \
                            and peer.name not in sc.not_applicable:
                        peers.append((peer.name, callgrind.measure(
                            reg, peer, sc, rctx, os.path.join(tmp, "callgrind"), a.cpu,
                            lambda m: None)))
            except Exception as e:               # noqa: BLE001 (reported, the check fails)
                failed.append("%s: %s: %s" % (name, type(e).__name__, e))
                continue
            finally:
                if backend:
                    backend.stop()
            got = res["ir_per_req"]
            if budget is None:
                line = "%-14s %8.0f instructions/request, no budget" % (name, got)
            else:
                line = "%-14s %8.0f instructions/request, budget %d (%+.1f %%)" % (
                    name, got, budget, 100.0 * (got - budget) / budget)
            print("instruction budgets: " + line, flush=True)
            for v, fn in res["profile"][:a.show_profile]:
                print("    %8.1f  %s" % (v, fn))
            for peer, pres in peers:
                print("instruction budgets: %-14s %8.0f instructions/request of %s (%.2fx "
                      "scalwsd's)" % (name, pres["ir_per_req"], peer, pres["ir_per_req"] / got),
                      flush=True)
                for v, fn in pres["profile"][:a.show_profile]:
                    print("    %8.1f  %s" % (v, fn))
            if budget is None:
                pass
            elif got > budget * (1 + TOLERANCE):
                over.append("scenario %s: %.0f instructions/request, over its budget of %d "
                            "by more than %d %%" % (name, got, budget, TOLERANCE * 100))
            elif got < budget * (1 - TOLERANCE):
                under.append("scenario %s: %.0f instructions/request, well below its budget "
                             "of %d: lower the budget in %s to %.0f in this commit"
                             % (name, got, budget, os.path.relpath(a.budgets, src), got))
    finally:
        reg.cleanup()
        if a.keep_tmp:
            print("instruction budgets: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    for m in under:
        print("instruction budgets: NOTE " + m)
    for m in over:
        print("instruction budgets: FAIL " + m)
    for m in failed:
        print("instruction budgets: ERROR " + m)
    if over:
        return 1
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
