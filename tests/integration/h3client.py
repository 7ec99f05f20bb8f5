"""HTTP/3 for the tests: bench/h3load (the build's BUILDDIR/bench/h3load,
next to SCALWSD) as a one-shot or concurrent client, and Caddy (Debian's
2.6, which serves HTTP/3) on a free loopback port as a reference server.

    r = h3get("https://127.0.0.1:%d/x" % port, body_to=path)
    r.status, r.headers (HeaderList), r.summary (h3load --json), r.body

h3load's own exit status is 0 when every request got an answer (any
status), 1 otherwise; its summary is the last line of its output (--json).
"""
import json
import os
import shutil
import socket
import subprocess
import time

import swsharness as h

H3LOAD = os.environ.get("H3LOAD") or os.path.join(os.path.dirname(h.SCALWSD), "bench", "h3load")
CADDY = shutil.which("caddy") or "/usr/bin/caddy"


def h3load_missing():
    """Why h3load cannot run here, or None."""
    if not os.access(H3LOAD, os.X_OK):
        return ("%s is not built (configure found no ngtcp2/nghttp3: apt-get install "
                "libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev libgnutls28-dev)"
                % H3LOAD)
    return None


def caddy_missing():
    if not os.access(CADDY, os.X_OK):
        return "no caddy (apt-get install caddy)"
    return None


class H3Result(h.HeaderList):
    def __init__(self, proc, body_path):
        self.returncode = proc.returncode
        self.output = proc.stdout.decode("utf-8", "replace")
        self.stderr = proc.stderr.decode("utf-8", "replace")
        lines = self.output.rstrip("\n").split("\n")
        try:
            self.summary = json.loads(lines[-1])
        except ValueError:
            raise AssertionError("h3load printed no summary: %r / %r"
                                 % (self.output[-2000:], self.stderr[-2000:]))
        # --print: the header fields of each response, a blank line after each
        headers, self.responses = [], []
        for line in lines[:-1]:
            if line == "":
                self.responses.append(headers)
                headers = []
            else:
                name, _, value = line.partition(": ")
                headers.append((name, value))
        self.headers = self.responses[0] if self.responses else []
        status = self.header(":status")
        self.status = int(status) if status else None
        self.body = None
        if body_path and os.path.exists(body_path):
            with open(body_path, "rb") as f:
                self.body = f.read()

    def __repr__(self):
        return "H3Result(rc=%s, status=%s, %s)" % (self.returncode, self.status, self.summary)


def h3load(url, *args, timeout=20.0, body_to=None, print_headers=True, gso=True, paths=()):
    """Runs h3load -k --json [--print] [-o body_to] ARGS URL PATHS (args may
    carry -n, -c, -m, -H, --method, --data; paths: more paths to go round)."""
    argv = [H3LOAD, "-k", "--json", "-t", str(max(1.0, timeout - 5))]
    if print_headers:
        argv.append("--print")
    if body_to:
        argv += ["-o", str(body_to)]
    if not gso:
        argv.append("--no-gso")
    argv += [str(a) for a in args] + [url] + list(paths)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       check=False)
    return H3Result(p, body_to)


def h3get(url, *args, **kw):
    """One request on one connection."""
    return h3load(url, "-n", "1", "-c", "1", "-m", "1", *args, **kw)


CADDYFILE = """\
{
	admin off
	auto_https disable_redirects
	default_sni localhost
	storage file_system %(tmp)s/data
	servers {
		protocols h1 h2 h3
	}
	log {
		output file %(tmp)s/caddy.log
		level WARN
	}
}

https://127.0.0.1:%(port)d, https://localhost:%(port)d {
	bind 127.0.0.1
	tls %(cert)s %(key)s
	%(extra)s
	root * %(root)s
	file_server
}
"""


class Caddy:
    """caddy run on a Caddyfile of our own: 127.0.0.1:PORT over TCP (HTTP/1.1,
    HTTP/2) and UDP (HTTP/3), a self-signed certificate made here, no admin
    endpoint, its data and configuration directories in tmp (never the
    user's), its document root `root`. `extra` goes into the site block
    before the file server (a reverse_proxy route, say)."""

    def __init__(self, tmp, root, extra=""):
        self.tmp = str(tmp)
        self.root = str(root)
        self.cert = os.path.join(self.tmp, "cert.pem")
        self.key = os.path.join(self.tmp, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-nodes", "-keyout", self.key, "-out", self.cert,
                        "-days", "2", "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30, check=True)
        self.proc = None
        for _ in range(3):                  # a port taken meanwhile: another one
            self.port = h.free_port()
            conf = os.path.join(self.tmp, "Caddyfile")
            with open(conf, "w") as f:
                f.write(CADDYFILE % {"tmp": self.tmp, "port": self.port, "cert": self.cert,
                                     "key": self.key, "root": self.root, "extra": extra})
            env = dict(os.environ, HOME=self.tmp, XDG_DATA_HOME=os.path.join(self.tmp, "data"),
                       XDG_CONFIG_HOME=os.path.join(self.tmp, "config"))
            self.out = open(os.path.join(self.tmp, "caddy.out"), "wb")
            self.proc = subprocess.Popen([CADDY, "run", "--config", conf, "--adapter", "caddyfile"],
                                         stdout=self.out, stderr=subprocess.STDOUT, env=env,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
            if self._wait_up(10.0):
                return
            self.stop()
        raise h.StartError("caddy did not start: %s" % self.log_tail())

    def _wait_up(self, timeout):
        """TCP accepts and a UDP socket is bound on the port (quic-go binds it
        as it starts the server)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if h.port_open(self.port) and self._udp_bound():
                return True
            time.sleep(0.05)
        return False

    def _udp_bound(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind(("127.0.0.1", self.port))
            return False
        except OSError:
            return True
        finally:
            s.close()

    def url(self, path="/"):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def log_tail(self, n=3000):
        try:
            with open(os.path.join(self.tmp, "caddy.out"), "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(5)
        if self.proc:
            self.out.close()
        self.proc = None
