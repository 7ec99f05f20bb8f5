"""bench/budget.py, the instruction budget check of `make test`: a figure over
its budget fails with the scenario, the budget and the figure named; one
well below is reported so that the budget is lowered; a malformed budgets
file is an error; a sanitizer build is skipped with the reason."""
import os
import shutil
import subprocess
import sys

import pytest

import swsharness as h

BUDGET = os.path.join(h.SRC, "bench", "budget.py")
SANITIZED = os.path.basename(os.path.dirname(os.path.abspath(h.SCALWSD))) == "objs-san"


def run(tmp_path, budgets, *extra):
    path = tmp_path / "budgets"
    path.write_text(budgets)
    p = subprocess.run([sys.executable, BUDGET, "--scalwsd", h.SCALWSD, "--modules-dir", h.MODULES,
                        "--budgets", str(path), "--counts", "100,300"] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return p.returncode, p.stdout.decode()


def need_valgrind():
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed: `sh auto/deps test` installs it")
    if SANITIZED:
        pytest.skip("a sanitizer build: the check skips itself (see test_sanitizer_build_skipped)")


def test_over_budget_fails_naming_scenario_budget_and_figure(tmp_path):
    need_valgrind()
    rc, out = run(tmp_path, "respond 100\n")
    assert rc == 1, out
    line = [x for x in out.splitlines() if "FAIL" in x]
    assert line and "scenario respond" in line[0] and "budget of 100" in line[0], out
    figure = int(line[0].split(": ", 2)[2].split()[0])
    assert figure > 1000, out


def test_well_below_budget_is_told(tmp_path):
    need_valgrind()
    rc, out = run(tmp_path, "# comment\n\nrespond 1000000  # far above\n")
    assert rc == 0, out
    assert "NOTE scenario respond" in out and "lower the budget" in out, out
    assert "FAIL" not in out


def test_malformed_budgets_and_unknown_scenario(tmp_path):
    need_valgrind()
    rc, out = run(tmp_path, "respond lots\n")
    assert rc == 2 and "budgets:1: expected" in out, out
    rc, out = run(tmp_path, "no-such-scenario 100\n")
    assert rc == 2 and "no such scenario" in out, out


def test_sanitizer_build_skipped(tmp_path):
    fake = tmp_path / "objs-san"
    fake.mkdir()
    (fake / "scalwsd").write_text("")
    path = tmp_path / "budgets"
    path.write_text("respond 100\n")
    p = subprocess.run([sys.executable, BUDGET, "--scalwsd", str(fake / "scalwsd"),
                        "--budgets", str(path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 0 and "skipped: a sanitizer build" in out, out


def test_scenario_without_budget_is_measured_not_checked(tmp_path):
    """--scenarios may name one the budgets file has no line for (the
    node and python front-end scenarios): its figure is printed with "no
    budget" and never fails the check; a name that is no scenario at all
    is still an error."""
    need_valgrind()
    rc, out = run(tmp_path, "static-small 1\n", "--scenarios", "respond")
    assert rc == 0, out
    line = [x for x in out.splitlines() if "respond" in x]
    assert line and "no budget" in line[0], out
    assert int(line[0].split()[3]) > 1000, out
    assert "static-small" not in out and "FAIL" not in out, out
    rc, out = run(tmp_path, "respond 1000000\n", "--scenarios", "respond,no-such-scenario")
    assert rc == 2 and "no-such-scenario: no such scenario" in out, out
