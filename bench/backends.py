"""Backends: processes a scenario's servers talk to (an origin for proxy,
PHP-FPM for php, a Node.js or Python application for node, python and
python-wsgi), started by the harness before the servers.

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
import subprocess
import tempfile
import time
import uuid

import loadgen
from procs import free_port, wait_port
from servers import CONFIG_DIR, Nginx, substitute, _run

HELLO = b"Hello, world!"
CACHE_100K = 100 * 1024


class OneProcess:
    """A backend that is one process started through the Registry (self.reg,
    self.run)."""

    def tree(self):
        return self.run.tree()

    def alive(self):
        return self.run.popen.poll() is None

    def stop(self):
        self.reg.stop(self.run)


def wait_unix(sock, run, what, timeout=15):
    """Until sock accepts a connection; RuntimeError if run exits first or
    the time is up."""
    deadline = time.monotonic() + timeout
    while True:
        if run.popen.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("%s did not start: %s" % (
                what, run.log_tail().strip().replace("\n", " | ")))
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(sock)
            return
        except OSError:
            time.sleep(0.05)
        finally:
            s.close()


# What issue 23 gives managed Python processes (sws_python_app.c): glibc's
# adaptive mmap threshold costs uvicorn 5-7 % per request.
PY_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "524288", "MALLOC_TRIM_THRESHOLD_": "1048576"}


def start_on_unix(cls, reg, tmp, prefix, argv_of, what, env=None, cwd=None, sock_env=False):
    """A one-process backend on a unix socket in a new directory of tmp
    (prefix: short, sun_path is 108 bytes): argv_of(sock) is its command
    (sock_env: the path in its environment's SOCK too); returns
    cls(reg, run, sock, argv) once the socket accepts."""
    d = tempfile.mkdtemp(prefix=prefix, dir=tmp)
    os.chmod(d, 0o755)
    sock = os.path.join(d, cls.name + ".sock")
    argv = argv_of(sock)
    if sock_env:
        env = dict(env or os.environ, SOCK=sock)
    run = reg.start(cls.name, argv, os.path.join(d, cls.name + ".log"), env=env, cwd=cwd)
    b = cls(reg, run, sock, argv)
    try:
        wait_unix(sock, run, what, 20)
    except BaseException:
        b.stop()
        raise
    b.command = b.command.replace(d, "$" + prefix.strip("-").upper())
    return b


class Origin(OneProcess):
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



class PhpFpm(OneProcess):
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

    def __init__(self, reg, run, d, argv, root=None):
        self.reg = reg
        self.run = run
        self.sock = os.path.join(d, "php.sock")
        self.placeholders = {
            "PHP_SOCK": self.sock, "PHP_ROOT": root or d, "PHP_CHILDREN": str(self.children),
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
    def start(cls, reg, tmp, cpu, log, root=None):
        """root: the scripts' directory (None: hello.php in the pool's own)."""
        d = tempfile.mkdtemp(prefix="php-fpm-", dir=tmp)
        os.chmod(d, 0o755)
        with open(cls.template) as f:
            text = substitute(f.read(), {
                "DIR": d, "CHILDREN": str(cls.children),
                "USER_LINES": "user = root\ngroup = root" if os.geteuid() == 0 else ""})
        conf = os.path.join(d, "php-fpm.conf")
        with open(conf, "w") as f:
            f.write(text)
        if root is None:
            shutil.copy(cls.script, os.path.join(d, "hello.php"))
        argv = ["taskset", "-c", str(cpu), cls.binary(), "-F", "-y", conf]
        if os.geteuid() == 0:
            argv.append("-R")
        run = reg.start("php-fpm", argv, os.path.join(d, "php-fpm.out"))
        b = cls(reg, run, d, argv, root)
        try:
            wait_unix(b.sock, run, "php-fpm")
        except BaseException:
            b.stop()
            raise
        b.command = b.command.replace(d, "$PHPFPM")
        return b



class WordPress:
    """WordPress's home page: Debian's wordpress package on a private
    MariaDB (its own data directory and socket in the run's temp dir, no
    networking, no grant tables: what tests/integration/wordpress.py does),
    the site installed by tests/integration/wordpress/install.php (the
    integration tests' script), served by the php scenario's pool (8
    children, opcache on) with /usr/share/wordpress as its root. MariaDB and
    PHP-FPM run on the client's CPU; both are the backend's CPU time.
    Debian's wp-config.php reads /etc/wordpress/config-NAME.php, NAME from
    the WORDPRESS_CONFIG parameter each server passes (@WP_CONFIG@): a file
    of this run only, removed when it stops. The site's address follows the
    request's Host (every server has its own port), so WordPress never
    redirects the home page to another port.
    Placeholders: those of PhpFpm (PHP_ROOT is /usr/share/wordpress) and
    @WP_CONFIG@."""

    name = "wordpress"
    root = "/usr/share/wordpress"
    install_script = os.path.join(CONFIG_DIR, "..", "..", "tests", "integration", "wordpress",
                                  "install.php")
    tools = {"mariadbd": "mariadb-server", "mariadb-install-db": "mariadb-server",
             "mariadb": "mariadb-client", "php8.2": "php8.2-cli"}

    def __init__(self, reg, db, db_sock, config, d):
        self.reg = reg
        self.db = db
        self.db_sock = db_sock
        self.config = config
        self.dir = d
        self.fpm = None
        self.placeholders = {}
        self.command = ""

    @staticmethod
    def _which(name):
        return shutil.which(name) or ("/usr/sbin/" + name
                                      if os.access("/usr/sbin/" + name, os.X_OK) else None)

    @classmethod
    def packages(cls):
        pkgs = PhpFpm.packages()
        for tool, pkg in cls.tools.items():
            if cls._which(tool) is None and pkg not in pkgs:
                pkgs.append(pkg)
        if not os.path.exists(cls.root + "/wp-load.php"):
            pkgs.append("wordpress")
        if not os.path.exists("/usr/share/wordpress/wp-content/themes/twentytwentyone"):
            pkgs.append("wordpress-theme-twentytwentyone")
        if cls._which("php8.2") and "mysqli" not in _run(["php8.2", "-m"]):
            pkgs.append("php8.2-mysql")
        return pkgs

    @classmethod
    def describe(cls):
        wp = _run(["dpkg-query", "-W", "-f", "${Version}", "wordpress"]).strip() or "?"
        db = _run([cls._which("mariadbd") or "mariadbd", "--version"]).strip()
        return "WordPress %s (Debian), home page, on %s; %s" % (
            wp, db.split(" for ")[0], PhpFpm.describe())

    def _sql(self, statement, check=True):
        r = subprocess.run([self._which("mariadb"), "--no-defaults", "-S", self.db_sock,
                            "-u", "root", "-e", statement], capture_output=True, timeout=20,
                           stdin=subprocess.DEVNULL, check=False)
        if check and r.returncode != 0:
            raise RuntimeError("mariadb: %s" % r.stderr.decode("utf-8", "replace"))
        return r.returncode

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        if os.geteuid() != 0 or not os.access("/etc/wordpress", os.W_OK):
            raise RuntimeError("the wordpress scenario writes /etc/wordpress/config-NAME.php: "
                               "run as root")
        d = tempfile.mkdtemp(prefix="wordpress-", dir=tmp)
        os.chmod(d, 0o755)
        data, sock = os.path.join(d, "data"), os.path.join(d, "mysqld.sock")
        r = subprocess.run([cls._which("mariadb-install-db"), "--no-defaults",
                            "--datadir=" + data, "--user=root",
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
                           check=False)
        if r.returncode != 0:
            raise RuntimeError("mariadb-install-db: " + r.stderr.decode("utf-8", "replace")[-500:])
        argv = ["taskset", "-c", str(cpu), cls._which("mariadbd"), "--no-defaults",
                "--datadir=" + data, "--socket=" + sock, "--skip-networking",
                "--skip-grant-tables", "--pid-file=" + os.path.join(d, "mysqld.pid"),
                "--log-error=" + os.path.join(d, "mysqld.log"), "--user=root",
                "--innodb-buffer-pool-size=64M", "--skip-log-bin"]
        db = reg.start("mariadbd", argv, os.path.join(d, "mysqld.out"))
        config = "/etc/wordpress/config-scalws-bench-%s.php" % uuid.uuid4().hex[:12]
        name = os.path.basename(config)[len("config-"):-len(".php")]
        w = cls(reg, db, sock, config, d)
        try:
            deadline = time.monotonic() + 60
            while True:
                if db.popen.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("mariadbd did not start: "
                                       + _tail(os.path.join(d, "mysqld.log")))
                if os.path.exists(sock) and w._sql("SELECT 1", check=False) == 0:
                    break
                time.sleep(0.1)
            w._sql("CREATE DATABASE wordpress")
            with open(config, "w") as f:
                f.write(_WP_CONFIG % {"sock": sock, "root": cls.root})
            r = subprocess.run([cls._which("php8.2"), cls.install_script, name],
                               capture_output=True, timeout=300, stdin=subprocess.DEVNULL,
                               check=False)
            if r.returncode != 0:
                raise RuntimeError("install.php: " + (r.stdout + r.stderr).decode(
                    "utf-8", "replace")[-500:])
            w.fpm = PhpFpm.start(reg, tmp, cpu, log, root=cls.root)
        except BaseException:
            w.stop()
            raise
        w.placeholders = dict(w.fpm.placeholders, WP_CONFIG=name)
        w.command = w.fpm.command + "\n# mariadbd ($WORDPRESS = its own dir in $TMP)\n" \
            + shlex.join(argv).replace(d, "$WORDPRESS")
        return w

    def tree(self):
        return self.db.tree() + (self.fpm.tree() if self.fpm else [])

    def alive(self):
        return self.db.popen.poll() is None and self.fpm.alive()

    def stop(self):
        try:
            if self.fpm:
                self.fpm.stop()
            self.reg.stop(self.db)
        finally:
            try:
                os.unlink(self.config)
            except OSError:
                pass


# The run's WordPress configuration (Debian's wp-config.php includes it).
_WP_CONFIG = """<?php
// Written by ScalWS bench/backends.py for one benchmark run; removed after it.
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:%(sock)s');
define('WP_CONTENT_DIR', '%(root)s/wp-content');
$bench_host = isset($_SERVER['HTTP_HOST']) ? $_SERVER['HTTP_HOST'] : '127.0.0.1';
define('WP_HOME', 'http://' . $bench_host);
define('WP_SITEURL', 'http://' . $bench_host);
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
$table_prefix = 'wp_';
"""


def _tail(path, n=500):
    try:
        with open(path, errors="replace") as f:
            return f.read()[-n:].replace("\n", " | ")
    except OSError:
        return ""


APPS_DIR = os.path.join(CONFIG_DIR, "apps")


class App(OneProcess):
    """An application on a TCP port of its own (@APP_PORT@), one process,
    answering every request with "Hello, world!" (13 bytes): the same one
    behind every server, on the client's CPU, its CPU time measured apart
    (the issue asks that it cost the application no more behind scalwsd
    than behind nginx). Subclasses give the command."""

    name = ""
    config_dir = "apps"         # bench/configs/apps: the applications' code
    tools = {}                  # command or python module -> Debian package

    def __init__(self, reg, run, port, argv):
        self.reg = reg
        self.run = run
        self.placeholders = {"APP_PORT": str(port)}
        self.command = shlex.join(argv)

    @classmethod
    def argv(cls, port, d):
        raise NotImplementedError

    @classmethod
    def packages(cls):
        missing = []
        for tool, pkg in cls.tools.items():
            if tool.startswith("py:"):
                found = subprocess.run(["/usr/bin/python3", "-c", "import " + tool[3:]],
                                       capture_output=True, check=False).returncode == 0
            else:
                found = shutil.which(tool) is not None
            if not found and pkg not in missing:
                missing.append(pkg)
        return missing

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        port = free_port()
        d = tempfile.mkdtemp(prefix=cls.name + "-", dir=tmp)
        os.chmod(d, 0o755)
        argv = ["taskset", "-c", str(cpu)] + cls.argv(port, d)
        env = dict(os.environ, PORT=str(port), PYTHONPATH=APPS_DIR, **PY_MALLOC)
        run = reg.start(cls.name, argv, os.path.join(d, cls.name + ".log"), env=env)
        b = cls(reg, run, port, argv)
        try:
            if not wait_port(port, run.popen, timeout=20):
                raise RuntimeError("%s did not start: %s" % (
                    cls.name, run.log_tail().strip().replace("\n", " | ")))
            loadgen.sequential(port, "/app/x", 3, 200, len(HELLO), timeout=10)
        except BaseException:
            b.stop()
            raise
        return b



class NodeApp(App):
    """Node.js's http module (bench/configs/apps/hello.js), one process."""
    name = "node"
    tools = {"node": "nodejs"}

    @classmethod
    def argv(cls, port, d):
        return [shutil.which("node") or "node", os.path.join(APPS_DIR, "hello.js")]

    @classmethod
    def describe(cls):
        return "Node.js %s, http module (bench/configs/apps/hello.js), one process" % (
            _run([shutil.which("node") or "node", "--version"]).strip())


class Uvicorn(App):
    """uvicorn with uvloop and httptools (its fastest), one worker, the ASGI
    app bench/configs/apps/asgi_hello.py."""
    name = "uvicorn"
    tools = {"py:uvicorn": "python3-uvicorn", "py:uvloop": "python3-uvloop",
             "py:httptools": "python3-httptools"}

    @classmethod
    def argv(cls, port, d):
        return ["/usr/bin/python3", "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(port),
                "--loop", "uvloop", "--http", "httptools", "--no-access-log",
                "--log-level", "warning", "--workers", "1", "asgi_hello:app"]

    @classmethod
    def describe(cls):
        v = _run(["/usr/bin/python3", "-c", "import uvicorn; print(uvicorn.__version__)"]).strip()
        return ("uvicorn %s (Debian), uvloop + httptools, one worker, "
                "bench/configs/apps/asgi_hello.py" % v)


class Gunicorn(App):
    """gunicorn, one worker process of the gthread kind (keep-alive; the
    sync kind closes every connection), 8 threads, the WSGI app
    bench/configs/apps/wsgi_hello.py."""
    name = "gunicorn"
    tools = {"py:gunicorn": "gunicorn"}

    @classmethod
    def argv(cls, port, d):
        return ["/usr/bin/python3", "-m", "gunicorn", "--bind", "127.0.0.1:%d" % port,
                "--workers", "1", "--worker-class", "gthread", "--threads", "8",
                "--keep-alive", "60", "--log-level", "warning", "wsgi_hello:app"]

    @classmethod
    def describe(cls):
        v = _run(["/usr/bin/python3", "-c", "import gunicorn; print(gunicorn.__version__)"]).strip()
        return ("gunicorn %s (Debian), one gthread worker with 8 threads, "
                "bench/configs/apps/wsgi_hello.py" % v)


class UnixApp(App):
    """An App on a unix socket (@APP_SOCK@) instead of a TCP port: the
    node-unix and python-unix scenarios, the front end's cost with the
    application on a socket file (what a managed application uses).
    Subclasses give the command (argv_of: the socket's path)."""

    def __init__(self, reg, run, sock, argv):
        self.reg = reg
        self.run = run
        self.placeholders = {"APP_SOCK": sock}
        self.command = shlex.join(argv)

    @classmethod
    def argv_of(cls, sock):
        raise NotImplementedError

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        return start_on_unix(cls, reg, tmp, cls.name[:5] + "-", lambda sock: [
            "taskset", "-c", str(cpu)] + cls.argv_of(sock), cls.name,
            env=dict(os.environ, SOCK="", PYTHONPATH=APPS_DIR, **PY_MALLOC), cwd=APPS_DIR,
            sock_env=True)


class NodeUnixApp(UnixApp):
    """The node scenario's app (hello.js) listening on a unix socket."""
    name = "node-unix"
    tools = NodeApp.tools

    @classmethod
    def argv_of(cls, sock):
        return NodeApp.argv(0, None)

    @classmethod
    def describe(cls):
        return NodeApp.describe() + ", on a unix socket"


class UvicornUnixApp(UnixApp):
    """The python scenario's uvicorn (uvloop + httptools, one worker) on a
    unix socket (--uds)."""
    name = "python-unix"
    tools = Uvicorn.tools

    @classmethod
    def argv_of(cls, sock):
        argv = Uvicorn.argv(0, None)
        i = argv.index("--host")
        return argv[:i] + ["--uds", sock] + argv[i + 4:]

    @classmethod
    def describe(cls):
        return Uvicorn.describe() + ", on a unix socket"


class Bridge(App):
    """scalwsd's native Python bridge: the runner (python3 -m scalws_bridge,
    built with the python module into BUILDDIR/python) with one worker, on a
    unix socket (@BRIDGE_SOCK@), serving the same app as the python
    scenario; scalwsd reaches it with python_bridge_pass."""
    name = "bridge"
    interface = "asgi"
    app = "asgi_hello:app"

    def __init__(self, reg, run, sock, argv):
        self.reg = reg
        self.run = run
        self.placeholders = {"BRIDGE_SOCK": sock}
        self.command = shlex.join(argv)

    @classmethod
    def pythonpath(cls):
        build = os.path.join(CONFIG_DIR, "..", "..", "objs", "python")
        return os.path.abspath(os.environ.get("SCALWS_PYTHON") or build)

    @classmethod
    def packages(cls):
        return []       # built with scalwsd (python3-dev); checked at start

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        return start_on_unix(cls, reg, tmp, "bridge-", lambda sock: [
            "taskset", "-c", str(cpu), "/usr/bin/python3", "-m", "scalws_bridge",
            "--socket", sock, "--app", cls.app, "--interface", cls.interface,
            "--workers", "1", "--path", APPS_DIR],
            "the bridge's runner (is objs/python built? python3-dev)",
            env=dict(os.environ, PYTHONPATH=cls.pythonpath(), **PY_MALLOC))

    @classmethod
    def describe(cls):
        return ("scalwsd's native Python bridge (python3 -m scalws_bridge), one worker, "
                "%s, bench/configs/apps/%s.py" % (cls.interface.upper(), cls.app.split(":")[0]))


class BridgeWsgi(Bridge):
    name = "bridge-wsgi"
    interface = "wsgi"
    app = "wsgi_hello:app"


class Uwsgi(OneProcess):
    """uWSGI (Debian's uwsgi-core with uwsgi-plugin-python3), one process
    with one thread, speaking the uwsgi protocol on a unix socket
    (@UWSGI_SOCK@), serving the python-wsgi scenario's app
    (bench/configs/apps/wsgi_hello.py): nginx's and scalwsd's uwsgi_pass
    with their uwsgi_params (@SCALWS_UWSGI_PARAMS@: the repository's). uWSGI
    closes the connection after each response: no kept connections."""
    name = "uwsgi"
    config_dir = "apps"

    def __init__(self, reg, run, sock, argv):
        self.reg = reg
        self.run = run
        self.placeholders = {
            "UWSGI_SOCK": sock,
            "SCALWS_UWSGI_PARAMS": os.path.abspath(os.path.join(CONFIG_DIR, "..", "..", "conf",
                                                                "uwsgi_params"))}
        self.command = shlex.join(argv)

    @classmethod
    def packages(cls):
        missing = [] if shutil.which("uwsgi") else ["uwsgi-core"]
        if not any(os.path.exists(os.path.join(d, "python3_plugin.so"))
                   for d in ("/usr/lib/uwsgi/plugins", "/usr/lib/uwsgi")):
            missing.append("uwsgi-plugin-python3")
        return missing

    @classmethod
    def describe(cls):
        v = _run([shutil.which("uwsgi") or "uwsgi", "--version"]).strip()
        return ("uWSGI %s (Debian, uwsgi-plugin-python3), one process, one thread, "
                "uwsgi protocol on a unix socket, bench/configs/apps/wsgi_hello.py" % v)

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        return start_on_unix(cls, reg, tmp, "uwsgi-", lambda sock: [
            "taskset", "-c", str(cpu), shutil.which("uwsgi") or "uwsgi",
            "--plugin", "python3", "--socket", sock, "--chmod-socket=666",
            "--processes", "1", "--threads", "1", "--listen", "1024",
            "--pythonpath", APPS_DIR, "--module", "wsgi_hello:app",
            "--need-app", "--disable-logging", "--die-on-term"], "uwsgi",
            env=dict(os.environ, **PY_MALLOC))


class UvicornUnix(UnixApp):
    """The command python_app runs for "asgi asgi_hello:app; server
    uvicorn" (sws_python_app.c: python3 -m uvicorn --no-access-log
    --uds=SOCKET, uvloop and httptools chosen by uvicorn as installed,
    the same environment), started by the harness on the client's CPU:
    the external half of the managed-against-external comparison
    (scenario python-external; python_pass unix:@APP_SOCK@)."""
    name = "uvicorn-unix"
    config_dir = "apps"
    tools = Uvicorn.tools

    @classmethod
    def describe(cls):
        return ("uvicorn as python_app runs it (--no-access-log --uds, uvloop + httptools), "
                "one process, bench/configs/apps/asgi_hello.py, started by the harness")

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        return start_on_unix(cls, reg, tmp, "uvu-", lambda sock: [
            "taskset", "-c", str(cpu), "/usr/bin/python3", "-m", "uvicorn",
            "--no-access-log", "--uds=" + sock, "asgi_hello:app"], "uvicorn",
            env=dict(os.environ, PYTHONUNBUFFERED="1", **PY_MALLOC), cwd=APPS_DIR)


class ManagedApp(App):
    """The managed half: nothing started by the harness; scalwsd's
    node_app or python_app runs the application itself
    (bench/configs/scalwsd/node-managed.*, python-managed.*). Its
    interpreter is a wrapper (@MANAGED_NODE@, @MANAGED_PYTHON@) that runs
    the real one under taskset on the client's CPU, like every other
    backend, instead of on the server's CPU that scalwsd's children would
    inherit. Its processes are in scalwsd's tree: claim() takes them out of
    the server's CPU time and counts them as the backend's; wait_ready()
    waits until the application answers (the master starts it after the
    listening socket is open). Subclasses: the interpreter, its
    placeholder and what its command line has (marker)."""
    config_dir = "apps"
    interpreter = None
    placeholder = None
    marker = None

    def __init__(self, d, wrapper):
        self.placeholders = {self.placeholder: wrapper, "APPS_DIR": APPS_DIR,
                             "MANAGED_RUN_DIR": d}
        self.claimed = []

    @classmethod
    def start(cls, reg, tmp, cpu, log):
        d = tempfile.mkdtemp(prefix="mgd-", dir=tmp)       # short: sun_path
        os.chmod(d, 0o755)
        wrapper = os.path.join(d, os.path.basename(cls.interpreter))
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\nexec taskset -c %d %s "$@"\n' % (cpu, cls.interpreter))
        os.chmod(wrapper, 0o755)
        return cls(d, wrapper)

    @classmethod
    def _is_app(cls, pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return cls.marker in f.read()
        except OSError:
            return False

    def claim(self, server_tree):
        """The application's pids among server_tree (scalwsd's)."""
        self.claimed = [p for p in server_tree if self._is_app(p)]
        return self.claimed

    def wait_ready(self, port, path, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            try:
                loadgen.sequential(port, path, 1, 200, len(HELLO), timeout=2)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def tree(self):
        return list(self.claimed)

    def alive(self):
        return all(os.path.exists("/proc/%d" % p) for p in self.claimed)

    def stop(self):
        pass                    # scalwsd stops its application


class ManagedUvicorn(ManagedApp):
    """python-managed: uvicorn run by python_app (server uvicorn)."""
    name = "managed-uvicorn"
    tools = Uvicorn.tools
    interpreter = "/usr/bin/python3"
    placeholder = "MANAGED_PYTHON"
    marker = b"\0uvicorn\0"

    def __init__(self, d, wrapper):
        super().__init__(d, wrapper)
        self.command = "(scalwsd's python_app: %s -m uvicorn --no-access-log --uds=SOCKET " \
            "asgi_hello:app)" % "$MANAGED/python3"

    @classmethod
    def describe(cls):
        return ("uvicorn run by scalwsd's python_app (server uvicorn, processes 1), "
                "bench/configs/apps/asgi_hello.py, on the client's CPU")


class ManagedNode(ManagedApp):
    """node-managed: hello.js run by node_app (PORT: its socket's path)."""
    name = "managed-node"
    tools = NodeApp.tools
    interpreter = shutil.which("node") or "/usr/bin/node"
    placeholder = "MANAGED_NODE"
    marker = b"hello.js"

    def __init__(self, d, wrapper):
        super().__init__(d, wrapper)
        self.command = "(scalwsd's node_app: $MANAGED/node hello.js, PORT=SOCKET)"

    @classmethod
    def describe(cls):
        return NodeApp.describe() + ", run by scalwsd's node_app (processes 1), on the " \
            "client's CPU"


BACKENDS = {"origin": Origin, "php-fpm": PhpFpm, "wordpress": WordPress,
            "node": NodeApp, "uvicorn": Uvicorn, "gunicorn": Gunicorn,
            "bridge": Bridge, "bridge-wsgi": BridgeWsgi, "uwsgi": Uwsgi,
            "uvicorn-unix": UvicornUnix, "managed-uvicorn": ManagedUvicorn,
            "node-unix": NodeUnixApp, "python-unix": UvicornUnixApp,
            "managed-node": ManagedNode}
