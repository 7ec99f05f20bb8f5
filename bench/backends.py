"""Backends: processes a scenario's servers talk to (an origin for proxy,
PHP-FPM for php; later node, uvicorn), started by the harness before the
servers.

A backend is started once per round (all the servers of the round share
it, so none gets a warmer or colder one) and once more for the callgrind
runs, always through the Registry so that it is stopped like the servers.
It runs on the client's CPU, never on the server's: its CPU time is
measured apart (origin %, origin CPU µs/req) and never counted as the
server's.

BACKENDS maps a scenario's `backend` name to a class with:
  packages()                Debian packages it needs that are missing
  start(reg, tmp, cpu, log) a started instance: .placeholders (filled into
                            the servers' configurations), .tree() (its pids),
                            .alive(), .stop(), .command (for the report)
  describe()                one line for the report: what it is, its version
"""

import os
import shlex
import shutil
import socket
import tempfile
import time

import loadgen
from procs import free_port, wait_port
from servers import CONFIG_DIR, Nginx, substitute, _run

HELLO = b"Hello, world!"
CACHE_100K = 100 * 1024


class Origin:
    """Debian's nginx answering every request with "Hello, world!" (13 bytes)
    from its configuration (`return 200`): one process (master_process off),
    access log off, keep-alive without request or idle limits (the servers
    under test decide when their upstream connections close).
    Placeholder: @ORIGIN_PORT@."""

    name = "origin"
    template = os.path.join(CONFIG_DIR, "origin", "nginx.conf.in")

    def __init__(self, reg, run, port, argv):
        self.reg = reg
        self.run = run
        self.placeholders = {"ORIGIN_PORT": str(port)}
        self.command = shlex.join(argv)

    @classmethod
    def packages(cls):
        return [] if Nginx().available() else list(Nginx.packages)

    @classmethod
    def describe(cls):
        return "Debian's nginx (%s), `return 200 \"Hello, world!\"`, one process" % (
            _run([Nginx().binary(), "-v"]).strip().replace("nginx version: ", ""))

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        port = free_port()
        d = tempfile.mkdtemp(prefix="origin-", dir=tmp)
        os.chmod(d, 0o755)
        with open(cls.template) as f:
            text = substitute(f.read(), {
                "ORIGIN_PORT": str(port), "TMP": d,
                # as root nginx would switch to nobody; the servers under test
                # run as the harness's user too
                "USER_LINE": "user root;" if os.geteuid() == 0 else ""})
        # the cache-hit-100k scenario's object
        with open(os.path.join(d, "c100k.bin"), "wb") as f:
            f.write(bytes(range(256)) * (CACHE_100K // 256))
        os.chmod(os.path.join(d, "c100k.bin"), 0o644)
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write(text)
        nginx = Nginx()
        argv = ["taskset", "-c", str(cpu), nginx.binary(), "-p", d + "/", "-c", conf,
                "-e", d + "/error.log"]
        run = reg.start("origin", argv, os.path.join(d, "origin.log"))
        o = cls(reg, run, port, argv)
        try:
            if not wait_port(port, run.popen, timeout=15):
                raise RuntimeError("the origin did not start: " +
                                   run.log_tail().strip().replace("\n", " | "))
            loadgen.sequential(port, "/api/x", 3, 200, len(HELLO), timeout=10)
        except BaseException:
            o.stop()
            raise
        o.command = o.command.replace(d, "$ORIGIN")
        return o

    def tree(self):
        return self.run.tree()

    def alive(self):
        return self.run.popen.poll() is None

    def stop(self):
        self.reg.stop(self.run)


class PhpFpm:
    """Debian's PHP-FPM (php8.2-fpm): one pool of PHP_CHILDREN static
    children on a unix socket, opcache on, serving @PHP_ROOT@/hello.php
    ("Hello, world!", 13 bytes). The pool is the bottleneck by design: the
    servers are compared on their own CPU per request in front of the same
    pool. A child serves one connection at a time: a server that keeps
    connections must open at most PHP_CHILDREN of them (scalwsd's
    max_conns with a queue), or its requests wait in PHP-FPM's listen queue
    behind kept connections (bench/README.md).
    Placeholders: @PHP_SOCK@, @PHP_ROOT@, @PHP_CHILDREN@,
    @SCALWS_FASTCGI_CONF@ (the repository's conf/fastcgi.conf)."""

    name = "php-fpm"
    template = os.path.join(CONFIG_DIR, "php-fpm", "php-fpm.conf.in")
    script = os.path.join(CONFIG_DIR, "php-fpm", "hello.php")
    children = 8
    binaries = ("/usr/sbin/php-fpm8.2", "/usr/sbin/php-fpm")

    def __init__(self, reg, run, d, argv):
        self.reg = reg
        self.run = run
        self.sock = os.path.join(d, "php.sock")
        self.placeholders = {
            "PHP_SOCK": self.sock, "PHP_ROOT": d, "PHP_CHILDREN": str(self.children),
            "SCALWS_FASTCGI_CONF": os.path.join(CONFIG_DIR, "..", "..", "conf",
                                                "fastcgi.conf")}
        self.command = shlex.join(argv)

    @classmethod
    def binary(cls):
        for b in cls.binaries:
            if os.access(b, os.X_OK):
                return b
        return shutil.which("php-fpm8.2")

    @classmethod
    def packages(cls):
        return [] if cls.binary() else ["php8.2-fpm"]

    @classmethod
    def describe(cls):
        v = _run([cls.binary(), "-v"]).splitlines()
        return "Debian's PHP-FPM (%s), %d static children, opcache on, hello.php" % (
            v[0] if v else "?", cls.children)

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        d = tempfile.mkdtemp(prefix="php-fpm-", dir=tmp)
        os.chmod(d, 0o755)
        with open(cls.template) as f:
            text = substitute(f.read(), {
                "DIR": d, "CHILDREN": str(cls.children),
                "USER_LINES": "user = root\ngroup = root" if os.geteuid() == 0 else ""})
        conf = os.path.join(d, "php-fpm.conf")
        with open(conf, "w") as f:
            f.write(text)
        shutil.copy(cls.script, os.path.join(d, "hello.php"))
        argv = ["taskset", "-c", str(cpu), cls.binary(), "-F", "-y", conf]
        if os.geteuid() == 0:
            argv.append("-R")
        run = reg.start("php-fpm", argv, os.path.join(d, "php-fpm.out"))
        b = cls(reg, run, d, argv)
        try:
            deadline = time.monotonic() + 15
            while True:
                if run.popen.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("php-fpm did not start: " +
                                       run.log_tail().strip().replace("\n", " | "))
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect(b.sock)
                    break
                except OSError:
                    time.sleep(0.05)
                finally:
                    s.close()
        except BaseException:
            b.stop()
            raise
        b.command = b.command.replace(d, "$PHPFPM")
        return b

    def tree(self):
        return self.run.tree()

    def alive(self):
        return self.run.popen.poll() is None

    def stop(self):
        self.reg.stop(self.run)


BACKENDS = {"origin": Origin, "php-fpm": PhpFpm}
