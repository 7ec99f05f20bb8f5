"""A private PHP-FPM for the fastcgi tests: Debian's php-fpm8.2 with the
pool of tests/integration/fastcgi/php-fpm.conf, on a unix socket in the
test's directory, started and stopped by the test (as root with -R and
user root: the children then run as the test does)."""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import swsharness as h

HERE = Path(__file__).resolve().parent
CONF = HERE / "fastcgi" / "php-fpm.conf"
WWW = HERE / "fastcgi" / "www"


def binary():
    for name in ("php-fpm8.2", "php-fpm"):
        for d in ("/usr/sbin", "/usr/bin", "/usr/local/sbin"):
            p = os.path.join(d, name)
            if os.access(p, os.X_OK):
                return p
    return shutil.which("php-fpm8.2") or shutil.which("php-fpm")


def require():
    b = binary()
    if b is None:
        pytest.skip("php-fpm is not installed (Debian: apt-get install php8.2-fpm)")
    return b


class PhpFpm:
    def __init__(self, directory, children=4, max_requests=0):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        h.make_traversable(self.dir)
        self.sock = str(self.dir / "php.sock")
        self.log = self.dir / "php-fpm.log"
        self.children = children
        self.max_requests = max_requests
        self.proc = None
        self.bin = require()

    def write_conf(self):
        user = "user = root\ngroup = root" if os.geteuid() == 0 else ""
        text = CONF.read_text()
        for k, v in (("DIR", str(self.dir)), ("USER", user), ("CHILDREN", self.children),
                     ("MAX_REQUESTS", self.max_requests)):
            text = text.replace("@%s@" % k, str(v))
        p = self.dir / "php-fpm.conf"
        p.write_text(text)
        return p

    def start(self, timeout=10.0):
        conf = self.write_conf()
        try:
            os.unlink(self.sock)
        except OSError:
            pass
        args = [self.bin, "-F", "-y", str(conf)]
        if os.geteuid() == 0:
            args.append("-R")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=open(self.dir / "php-fpm.out", "ab"),
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("php-fpm exited: %s" % self.diagnostics())
            if h.unix_open(self.sock) and len(self.children_pids()) >= self.children:
                return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("php-fpm did not start: %s" % self.diagnostics())

    def children_pids(self):
        if self.proc is None:
            return []
        return h.children_of(self.proc.pid)

    def diagnostics(self):
        out = ""
        for f in ("php-fpm.log", "php-fpm.out"):
            try:
                out += (self.dir / f).read_text()[-3000:]
            except OSError:
                pass
        return out

    def kill(self):
        """Gone at once, children too (as a crash would)."""
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


def location(sock, extra=""):
    """The documented PHP location: a .php file that does not exist is a
    404 of ours, an existing one runs, never is it sent as a file."""
    return """
        location ~ \\.php$ {
            try_files $uri =404;
            fastcgi_pass unix:%s;
            include %s/conf/fastcgi.conf;
            %s
        }
""" % (sock, h.SRC, extra)
