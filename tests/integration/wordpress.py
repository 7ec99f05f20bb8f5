"""WordPress from Debian's package on a private MariaDB, for the fastcgi
tests: a data directory and a socket in the test's directory (mariadbd
without networking and without grant tables: nothing but this test can
reach it), a per-test config file /etc/wordpress/config-NAME.php (Debian's
wp-config.php picks it from the WORDPRESS_CONFIG parameter; removed
afterwards), and the site installed by wordpress/install.php with the PHP
CLI. Every wait is bounded."""
import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import swsharness as h

HERE = Path(__file__).resolve().parent
WP_ROOT = "/usr/share/wordpress"


def require():
    missing = [p for p in ("mariadb-install-db", "mariadbd", "mariadb", "php8.2")
               if shutil.which(p) is None and not os.access("/usr/sbin/" + p, os.X_OK)]
    if missing or not os.path.exists(WP_ROOT + "/wp-load.php"):
        pytest.skip("WordPress tests need Debian's wordpress, mariadb-server and "
                    "php8.2-cli, php8.2-mysql (missing: %s)" % (missing or ["wordpress"]))
    if not os.access("/etc/wordpress", os.W_OK):
        pytest.skip("WordPress tests write /etc/wordpress/config-NAME.php (run as root)")


def _which(name):
    return shutil.which(name) or "/usr/sbin/" + name


class MariaDB:
    def __init__(self, directory):
        self.dir = Path(directory)
        self.data = self.dir / "data"
        self.sock = str(self.dir / "mysqld.sock")
        self.proc = None

    def start(self, timeout=60):
        self.dir.mkdir(parents=True, exist_ok=True)
        h.make_traversable(self.dir)
        r = subprocess.run([_which("mariadb-install-db"), "--no-defaults",
                            "--datadir=%s" % self.data, "--user=root",
                            "--auth-root-authentication-method=normal", "--skip-test-db"],
                           capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("mariadb-install-db: %s" % r.stderr.decode()[-2000:])
        self.proc = subprocess.Popen(
            [_which("mariadbd"), "--no-defaults", "--datadir=%s" % self.data,
             "--socket=%s" % self.sock, "--skip-networking", "--skip-grant-tables",
             "--pid-file=%s" % (self.dir / "mysqld.pid"),
             "--log-error=%s" % (self.dir / "mysqld.log"), "--user=root",
             "--innodb-buffer-pool-size=16M", "--skip-log-bin"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("mariadbd exited: %s" % self.log())
            if h.unix_open(self.sock) and self.sql("SELECT 1", check=False) == 0:
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("mariadbd did not start: %s" % self.log())

    def sql(self, statement, check=True):
        r = subprocess.run([_which("mariadb"), "--no-defaults", "-S", self.sock, "-u", "root",
                            "-e", statement], capture_output=True, timeout=20,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise RuntimeError("mariadb: %s" % r.stderr.decode())
        return r.returncode

    def log(self):
        try:
            return (self.dir / "mysqld.log").read_text()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass


class WordPress:
    """The site for base_url ("http://127.0.0.1:PORT") on db."""

    def __init__(self, db, base_url):
        self.db = db
        self.base = base_url
        self.name = "scalws-test-%s" % uuid.uuid4().hex[:12]
        self.config = Path("/etc/wordpress/config-%s.php" % self.name)
        self.post = None

    def install(self, timeout=120):
        self.db.sql("CREATE DATABASE wordpress")
        self.config.write_text("""<?php
// Written by tests/integration/wordpress.py for one test run.
define('DB_NAME', 'wordpress');
define('DB_USER', 'root');
define('DB_PASSWORD', '');
define('DB_HOST', 'localhost:%(sock)s');
define('WP_CONTENT_DIR', '%(root)s/wp-content');
define('WP_HOME', '%(base)s');
define('WP_SITEURL', '%(base)s');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
$table_prefix = 'wp_';
""" % {"sock": self.db.sock, "root": WP_ROOT, "base": self.base})
        r = subprocess.run([_which("php8.2"), str(HERE / "wordpress" / "install.php"),
                            self.name], capture_output=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise RuntimeError("install.php: %s %s" % (r.stdout.decode()[-2000:],
                                                        r.stderr.decode()[-2000:]))
        j = json.loads(r.stdout.decode().strip().splitlines()[-1])
        self.post = j["post"]
        self.theme = j["theme"]
        return self

    def remove(self):
        try:
            self.config.unlink()
        except OSError:
            pass


def server_block(sock, name):
    """WordPress's nginx configuration, as is: permalinks through
    try_files, PHP through the documented location."""
    return """
    server {
        listen 127.0.0.1:@PORT2@;
        server_name _;
        root %(root)s;
        index index.php;
        location / {
            try_files $uri $uri/ /index.php?$args;
        }
        location ~ \\.php$ {
            try_files $uri =404;
            fastcgi_pass unix:%(sock)s;
            include %(src)s/conf/fastcgi.conf;
            fastcgi_param WORDPRESS_CONFIG %(name)s;
        }
    }
""" % {"root": WP_ROOT, "sock": sock, "src": h.SRC, "name": name}
