"""The native Python bridge's runner (python3 -m scalws_bridge, built into
BUILDDIR/python) started by the tests on a unix socket, with the test
applications of tests/integration/pybridge; every wait bounded."""
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import swsharness as h

APPS = Path(__file__).resolve().parent / "pybridge"
# BUILDDIR/python next to BUILDDIR/scalwsd (objs-san's is built without the
# sanitizers: python3 itself has none).
BRIDGE = os.environ.get("SCALWS_PYBRIDGE") or os.path.join(os.path.dirname(h.SCALWSD),
                                                            "python")


def require():
    if not os.path.isdir(os.path.join(BRIDGE, "scalws_bridge")):
        pytest.fail("the bridge's runner is not built in %s (python3-dev missing?)" % BRIDGE)


class Runner:
    """One runner: app is "module:callable" of APPS; marks is the
    directory where the applications leave their files."""

    def __init__(self, sock, app, interface, marks, workers=2, log=None, extra=()):
        require()
        self.sock = str(sock)
        self.marks = Path(marks)
        self.marks.mkdir(parents=True, exist_ok=True)
        self.log = Path(log or self.marks / "runner.log")
        self.args = ["/usr/bin/python3", "-m", "scalws_bridge", "--socket", self.sock,
                     "--socket-mode", "666", "--app", app, "--interface", interface,
                     "--workers", str(workers), "--path", str(APPS)] + list(extra)
        self.proc = None

    def start(self, timeout=15.0, check=True):
        """Until it listens (or, check False, exits)."""
        env = dict(os.environ, PYTHONPATH=BRIDGE, MARKS=str(self.marks))
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=out, env=env,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        if not h.wait_for(lambda: h.unix_open(self.sock) or self.proc.poll() is not None,
                          timeout):
            self.kill()
            raise AssertionError("the runner did not listen: " + self.output())
        if check and self.proc.poll() is not None:
            raise AssertionError("the runner exited: " + self.output())
        return self

    def output(self):
        return h._read(self.log, 4000)

    def stop(self, timeout=12.0):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        """SIGKILL to the runner and its workers (its process group)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def mark(self, name):
        p = self.marks / name
        return p.read_text() if p.exists() else None


@contextlib.contextmanager
def one_runner(tmp, prefix, app, interface, launch):
    """One runner of app (one worker) and a scalwsd in front of it:
    launch(runner) gives swsharness.launch's keyword arguments; yields
    (server, runner) and stops both."""
    sockdir = tempfile.mkdtemp(prefix=prefix)       # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)
    runner = Runner(os.path.join(sockdir, "r.sock"), app, interface, tmp / "marks", workers=1)
    srv = None
    try:
        runner.start()
        srv = h.launch(tmp / "sws", **launch(runner))
        yield srv, runner
    finally:
        if srv:
            srv.stop()
        runner.stop()
        shutil.rmtree(sockdir, ignore_errors=True)


def wait_mark(runner, name, timeout=5.0):
    assert h.wait_for(lambda: runner.mark(name) is not None, timeout), \
        (name, runner.output())
    return runner.mark(name)


def now():
    return time.monotonic()
