"""Debian's uWSGI (uwsgi, uwsgi-plugin-python3) running the Flask
application tests/integration/uwsgi/app.py for the uwsgi and scgi tests,
speaking uwsgi (--socket) and SCGI (--scgi-socket) on unix and TCP
sockets, started and stopped by the test, every wait bounded."""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import swsharness as h

APP = Path(__file__).resolve().parent / "uwsgi" / "app.py"


def require():
    b = shutil.which("uwsgi") or "/usr/bin/uwsgi"
    if not os.access(b, os.X_OK):
        pytest.fail("uwsgi is not installed: `sh auto/deps test` installs it")
    return b


class UwsgiApp:
    """One uWSGI master serving the application on four sockets: uwsgi and
    SCGI, each on a TCP port and a unix socket in sockdir (short: sun_path
    is 108 bytes); with tls=(cert, key) a fifth, uwsgi over TLS, on
    ports["suwsgi"]. addr(proto, unix) is what *_pass takes."""

    def __init__(self, directory, sockdir, processes=2, threads=4, tls=None):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log = self.dir / "uwsgi.log"
        self.ports = {"uwsgi": h.free_port(), "scgi": h.free_port()}
        self.socks = {p: os.path.join(sockdir, "%s.sock" % p) for p in ("uwsgi", "scgi")}
        self.args = [require(), "--plugin", "python3", "--wsgi-file", str(APP),
                     "--master", "--processes", str(processes), "--threads", str(threads),
                     "--disable-logging", "--buffer-size", "65535",
                     "--chmod-socket=666", "--logto", str(self.log)]
        for proto, flag in (("uwsgi", "--socket"), ("scgi", "--scgi-socket")):
            self.args += [flag, "127.0.0.1:%d" % self.ports[proto], flag, self.socks[proto]]
        if tls:
            self.ports["suwsgi"] = h.free_port()
            self.args += ["--ssl-socket", "127.0.0.1:%d,%s,%s" % (self.ports["suwsgi"],
                                                                 tls[0], tls[1])]
        self.proc = None

    def addr(self, proto, unix=False):
        if unix:
            return "unix:" + self.socks[proto]
        return "127.0.0.1:%d" % self.ports[proto]

    def ready(self):
        """The sockets listen and the application is loaded."""
        return "WSGI app 0" in h._read(self.log) \
            and all(h.port_open(p) for p in self.ports.values()) \
            and all(h.unix_open(s) for s in self.socks.values())

    def start(self, timeout=15.0):
        self.log.write_bytes(b"")          # uWSGI appends: this run's lines only
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError("uwsgi did not start:\n" + h._read(self.log))
            time.sleep(0.05)
        return self

    def stop(self):
        if self.proc is None:
            return
        try:
            os.kill(self.proc.pid, signal.SIGINT)     # the master: stop now
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        self.proc = None
