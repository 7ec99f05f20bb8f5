"""The servers under test: where their binaries are, how their configuration
is made from bench/configs/SERVER/, how they are started in the foreground,
and how they report their version.

Every server runs one event loop in one worker process (nginx and scalwsd: a
master and one worker; h2o: one process with num-threads 1; lighttpd: one
process; Caddy: one Go process on one CPU). For callgrind they run as a single process (`single=True`):
master_process off for nginx and scalwsd, unchanged for h2o and lighttpd.
"""

import hashlib
import os
import re
import shutil
import subprocess
import tempfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
CONFIG_DIR = os.path.join(BENCH_DIR, "configs")


def _run(argv, timeout=10):
    """stdout + stderr of a short command, "" when it cannot run."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, check=False)
        return p.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.TimeoutExpired):
        return ""


class ServerDef:
    name = ""
    config_dir = None           # bench/configs/ folder and fragment key; None: name
    template = "base.conf.in"
    conf_name = "server.conf"
    packages = ()               # Debian packages providing it
    stop_signal = 15            # SIGTERM: every server here exits promptly on it
    no_callgrind = None         # why its instructions are not counted, if not

    def binary(self):
        raise NotImplementedError

    def available(self):
        b = self.binary()
        return b is not None and os.access(b, os.X_OK)

    def version(self):
        raise NotImplementedError

    def argv(self, conf_path, tmp):
        raise NotImplementedError

    def extra_placeholders(self, ctx, single):
        return {}

    def listen_placeholders(self, scenario, ctx):
        """What turns TLS (and HTTP/2) on for the listener in a TLS scenario:
        nginx and scalwsd take " ssl http2" after the address."""
        return {"LISTEN_OPTS": " ssl http2" if scenario.tls else ""}

    def missing_packages(self, scenarios):
        """Packages to install for this server to run these scenarios."""
        return [] if self.available() else list(self.packages)

    def kind(self):
        """The configuration folder and the scenarios' fragment key: a
        baseline scalwsd uses scalwsd's."""
        return self.config_dir or self.name

    # ---- configuration -------------------------------------------------

    def render(self, ctx, scenario, single, tmp):
        """Write this server's configuration for `scenario` into `tmp`;
        returns its path. ctx: port, docroot, modules_dir (see run.py)."""
        sdir = os.path.join(CONFIG_DIR, self.kind())
        values = {
            "PORT": str(ctx["port"]),
            "DOCROOT": ctx["docroot"],
            "TMP": tmp,
            "CONFDIR": sdir,
            "MODULES_DIR": ctx.get("modules_dir", ""),
            "MASTER": "off" if single else "on",
            # worker_connections (bench/idle raises it)
            "MAX_CONNECTIONS": "1024",
        }
        values.update(ctx.get("placeholders", {}))
        values.update(self.extra_placeholders(ctx, single))
        values.update(self.listen_placeholders(scenario, ctx))
        if values.get("HTTP_EXTRA"):        # its own placeholders (@TMP@) filled in
            values["HTTP_EXTRA"] = substitute(values["HTTP_EXTRA"], values)

        fragment = http_fragment = ""
        name = scenario.fragments.get(self.kind())
        if name:
            with open(os.path.join(sdir, name + ".frag")) as f:
                fragment = f.read()
            # an optional http-level part (upstream blocks), where the base
            # template has an HTTP_FRAGMENTS placeholder
            http_path = os.path.join(sdir, name + ".http.frag")
            if os.path.exists(http_path):
                with open(http_path) as f:
                    http_fragment = f.read()
        with open(os.path.join(sdir, self.template)) as f:
            text = f.read()
        if http_fragment and "@HTTP_FRAGMENTS@" not in text:
            raise KeyError("%s has no @HTTP_FRAGMENTS@ for %s.http.frag" % (self.template, name))
        text = text.replace("@FRAGMENTS@", fragment.rstrip("\n"))
        text = text.replace("@HTTP_FRAGMENTS@", http_fragment.rstrip("\n"))
        text = substitute(text, values)
        path = os.path.join(tmp, self.conf_name)
        with open(path, "w") as f:
            f.write(text)
        return path


def substitute(text, values):
    """Replace @NAME@ placeholders; an unknown one is an error (a typo in a
    template must not reach a server as a literal)."""
    def one(m):
        key = m.group(1)
        if key not in values:
            raise KeyError("unknown placeholder @%s@" % key)
        return values[key]
    return re.sub(r"@([A-Z][A-Z0-9_]*)@", one, text)


def _nginx_user_line():
    return {"USER_LINE": "user root;" if os.geteuid() == 0 else ""}


class Scalwsd(ServerDef):
    name = "scalwsd"
    conf_name = "scalws.conf"

    def __init__(self, binary=None, modules_dir=None, http_conf="", events_conf=""):
        self._binary = binary
        self.modules_dir = modules_dir
        self.http_conf = http_conf      # --scalwsd-http-conf: the tree's build only
        self.events_conf = events_conf  # in the events block ("use io_uring;")

    def binary(self):
        return self._binary

    def missing_packages(self, scenarios):
        return []           # built by make, not installed

    def version(self):
        out = _run([self.binary(), "-v"]).strip()
        with open(self.binary(), "rb") as f:
            out += ", sha256 %s" % hashlib.sha256(f.read()).hexdigest()[:12]
        src = os.path.dirname(BENCH_DIR)
        rev = _run(["git", "-C", src, "rev-parse", "--short", "HEAD"]).strip()
        if rev and re.fullmatch(r"[0-9a-f]+", rev):
            dirty = _run(["git", "-C", src, "status", "--porcelain", "--untracked-files=no"])
            out += " (git %s%s)" % (rev, ", with uncommitted changes" if dirty.strip() else "")
        return out

    def argv(self, conf_path, tmp):
        return [self.binary(), "-p", tmp + "/", "-c", conf_path]

    def config_error(self, conf_path, tmp):
        """scalwsd -t on the configuration: its complaint, or None."""
        try:
            p = subprocess.run([self.binary(), "-t", "-p", tmp + "/", "-c", conf_path],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                               check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
        if p.returncode == 0:
            return None
        out = p.stdout.decode("utf-8", "replace").replace(conf_path, self.conf_name)
        m = re.search(r"\[emerg\] \S+ (.*)", out)
        return (m.group(1) if m else out.strip().replace("\n", " | "))[:300]

    def extra_placeholders(self, ctx, single):
        values = _nginx_user_line()
        values["HTTP_EXTRA"] = self.http_conf
        values["EVENTS_EXTRA"] = self.events_conf
        return values


class Nginx(ServerDef):
    name = "nginx"
    conf_name = "nginx.conf"
    packages = ("nginx-light",)     # any Debian nginx flavour will do

    def binary(self):
        return shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)

    def version(self):
        out = _run([self.binary(), "-v"]).strip()
        pkg = _run(["dpkg-query", "-W", "-f", "${db:Status-Abbrev} ${Package} ${Version}\n",
                    "nginx-light", "nginx", "nginx-core", "nginx-full", "nginx-extras"])
        pkgs = [" ".join(l.split()[1:]) for l in pkg.splitlines() if l.startswith("ii")]
        return out + (" (Debian: %s)" % ", ".join(pkgs) if pkgs else "")

    def argv(self, conf_path, tmp):
        return [self.binary(), "-p", tmp + "/", "-c", conf_path, "-e", tmp + "/error.log"]

    def extra_placeholders(self, ctx, single):
        return _nginx_user_line()


class H2o(ServerDef):
    name = "h2o"
    template = "base.yaml.in"
    conf_name = "h2o.conf"
    packages = ("h2o",)

    def binary(self):
        return shutil.which("h2o") or ("/usr/sbin/h2o" if os.path.exists("/usr/sbin/h2o") else None)

    def version(self):
        out = _run([self.binary(), "--version"])
        lines = [l.strip() for l in out.splitlines() if l.strip()]
        return ", ".join(lines[:3])

    def argv(self, conf_path, tmp):
        return [self.binary(), "-c", conf_path]

    def extra_placeholders(self, ctx, single):
        # Every server runs as the harness's user, as lighttpd does: as root,
        # h2o would switch to nobody (who could not write callgrind's
        # output), and nginx and scalwsd too (which changes their RSS).
        return {"USER_LINE": "user: root" if os.geteuid() == 0 else ""}

    def listen_placeholders(self, scenario, ctx):
        if not scenario.tls:
            return {"LISTEN_TLS": ""}
        ph = ctx["placeholders"]
        return {"LISTEN_TLS": "  ssl:\n    certificate-file: %s\n    key-file: %s\n"
                              "    minimum-version: TLSv1.3\n" % (ph["CERT"], ph["KEY"])}


class Lighttpd(ServerDef):
    name = "lighttpd"
    conf_name = "lighttpd.conf"
    packages = ("lighttpd",)
    MAGNET = "/usr/lib/lighttpd/mod_magnet.so"
    OPENSSL = "/usr/lib/lighttpd/mod_openssl.so"

    def binary(self):
        return shutil.which("lighttpd") or ("/usr/sbin/lighttpd" if os.path.exists("/usr/sbin/lighttpd") else None)

    def missing_packages(self, scenarios):
        pkgs = super().missing_packages(scenarios)
        # mod_magnet (fixed responses) is packaged apart, in lighttpd-modules-lua
        wants_magnet = any(s.fragments.get(self.name) == "respond" for s in scenarios)
        if wants_magnet and not os.path.exists(self.MAGNET):
            pkgs.append("lighttpd-modules-lua")
        # TLS is packaged apart too, in lighttpd-mod-openssl
        if any(s.tls for s in scenarios) and not os.path.exists(self.OPENSSL):
            pkgs.append("lighttpd-mod-openssl")
        return pkgs

    def version(self):
        return _run([self.binary(), "-v"]).strip().splitlines()[0] if self.available() else ""

    def argv(self, conf_path, tmp):
        return [self.binary(), "-D", "-f", conf_path]


class Caddy(ServerDef):
    """Debian's Caddy 2.6: HTTPS (HTTP/1.1, HTTP/2) and HTTP/3 on one port, the
    TLS and HTTP/3 scenarios only. Its home, data and configuration
    directories are the run's (never the user's ~/.local/share/caddy)."""
    name = "caddy"
    template = "Caddyfile.in"
    conf_name = "Caddyfile"
    packages = ("caddy",)
    no_callgrind = "a Go program: not run under callgrind"

    def binary(self):
        return shutil.which("caddy") or ("/usr/bin/caddy" if os.path.exists("/usr/bin/caddy") else None)

    def version(self):
        return _run([self.binary(), "version"]).strip().split(" ")[0]

    def argv(self, conf_path, tmp):
        return ["env", "HOME=" + tmp, "XDG_DATA_HOME=%s/caddy-data" % tmp,
                "XDG_CONFIG_HOME=%s/caddy-config" % tmp,
                self.binary(), "run", "--config", conf_path, "--adapter", "caddyfile"]


class Floor(ServerDef):
    """The reference of bench/floor.c: built here with cc, once per source
    (the binary is named after the source's hash, in the system's temp dir)."""
    name = "floor"
    conf_name = "floor.conf"

    def __init__(self):
        self._binary = None

    def binary(self):
        if self._binary:
            return self._binary
        src = os.path.join(BENCH_DIR, "floor.c")
        with open(src, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        out = os.path.join(tempfile.gettempdir(), "scalws-bench-floor-%s" % digest)
        if not os.access(out, os.X_OK):
            tmp_out = "%s.%d" % (out, os.getpid())
            if subprocess.run(["cc", "-O2", "-o", tmp_out, src], check=False).returncode != 0:
                return None
            os.replace(tmp_out, out)
        self._binary = out
        return out

    def missing_packages(self, scenarios):
        return []           # only a C compiler, which the build needs anyway

    def version(self):
        return "bench/floor.c, %s" % os.path.basename(self.binary() or "not built")

    def argv(self, conf_path, tmp):
        return [self.binary(), conf_path]


class ScalwsdBaseline(Scalwsd):
    """Another scalwsd build (--baseline DIR: DIR/scalwsd and DIR/modules),
    measured beside the tree's own in the same run: before/after reports."""
    name = "scalwsd-base"
    config_dir = "scalwsd"

    def version(self):
        with open(self.binary(), "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        return "%s, sha256 %s (baseline build)" % (_run([self.binary(), "-v"]).strip(), digest)

    def extra_placeholders(self, ctx, single):
        values = super().extra_placeholders(ctx, single)
        values["MODULES_DIR"] = os.path.abspath(self.modules_dir)
        values["HTTP_EXTRA"] = ""
        return values


class ScalwsdUring(Scalwsd):
    """The tree's scalwsd with `events { use io_uring; }`, as a server of its
    own beside the default (epoll) one: `--servers scalwsd,scalwsd-uring,nginx`
    compares the two event methods in one run, on the same build."""
    name = "scalwsd-uring"
    config_dir = "scalwsd"

    def __init__(self, binary=None, modules_dir=None, http_conf=""):
        super().__init__(binary, modules_dir, http_conf, events_conf="use io_uring;")

    def version(self):
        return super().version() + ", events { use io_uring; }"


class ScalwsdPause(Scalwsd):
    """The tree's scalwsd with `events { wait_pause 200us; }` (off by
    default: docs/directives.md#wait_pause), beside the default one:
    `--servers scalwsd,scalwsd-pause,h2o --scenarios tls-h2-mux-small`
    shows what the pause before a wait does to the clients' rate."""
    name = "scalwsd-pause"
    config_dir = "scalwsd"

    def __init__(self, binary=None, modules_dir=None, http_conf=""):
        super().__init__(binary, modules_dir, http_conf, events_conf="wait_pause 200us;")

    def version(self):
        return super().version() + ", events { wait_pause 200us; }"


# The scalwsd entries that run the tree's build (bench/run snapshots it for
# them all).
TREE_SCALWSD = ("scalwsd", "scalwsd-uring", "scalwsd-pause")


def make_servers(scalwsd_binary, modules_dir, baseline=None, scalwsd_http_conf=""):
    servers = {
        "scalwsd": Scalwsd(scalwsd_binary, modules_dir, scalwsd_http_conf),
        "scalwsd-uring": ScalwsdUring(scalwsd_binary, modules_dir, scalwsd_http_conf),
        "scalwsd-pause": ScalwsdPause(scalwsd_binary, modules_dir, scalwsd_http_conf),
        "nginx": Nginx(),
        "h2o": H2o(),
        "lighttpd": Lighttpd(),
        "caddy": Caddy(),
        "floor": Floor(),
    }
    if baseline:
        servers["scalwsd-base"] = ScalwsdBaseline(os.path.join(baseline, "scalwsd"),
                                                  os.path.join(baseline, "modules"))
    return servers
