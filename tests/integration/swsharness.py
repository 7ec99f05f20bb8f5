"""
Harness for the ScalWS integration tests: start the real scalwsd binary on
free loopback ports with a configuration written from a template, talk to it
with pycurl (libcurl) and with raw sockets, build tiny modules, and stop
everything afterwards. Every network and process operation is bounded.
"""
import os
import re
import signal as _signal
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent


def _env_path(var, default):
    v = os.environ.get(var)
    return os.path.abspath(v) if v else str(default)


SCALWSD = _env_path("SCALWSD", REPO / "objs" / "scalwsd")
MODULES = _env_path("SCALWS_MODULES", REPO / "objs" / "modules")
SRC = _env_path("SCALWS_SRC", REPO)
INCLUDE = _env_path("SCALWS_INCLUDE", REPO / "include")
MIME = os.path.join(SRC, "conf", "mime.types")

NET_TIMEOUT = 5.0        # sockets
CURL_TIMEOUT = 10        # pycurl
START_TIMEOUT = 5.0      # until the port accepts
STOP_TIMEOUT = 5.0       # SIGTERM -> exit, then SIGKILL


def _header_define(name, default):
    try:
        text = Path(INCLUDE, "scalws", "scalws.h").read_text()
        text += Path(INCLUDE, "scalws", "sws_module.h").read_text()
    except OSError:
        return default
    m = re.search(r"#define\s+%s\s+(\S+)" % name, text)
    return m.group(1).strip('"') if m else default


VERSION = _header_define("SCALWS_VERSION", "0.1.0")
ABI_MAJOR = int(_header_define("SWS_ABI_MAJOR", "1"))
ABI_MINOR = int(_header_define("SWS_ABI_MINOR", "0"))

# Servers currently running, so that a failing test can show their logs.
RUNNING = []
# Crashes (a worker's or helper's process ended by SIGILL, SIGABRT, SIGBUS,
# SIGFPE or SIGSEGV, as its master logged them) found in the error logs of
# the servers stopped so far: conftest fails the test that stopped them. A
# sanitizer's report ends the process with SIGABRT (abort_on_error=1), and a
# worker that dies after answering would otherwise pass its test.
CRASHES = []
_CRASH_RE = re.compile(r"process \d+ .*exited on signal (?:4|6|7|8|11)\b.*")


class StartError(Exception):
    pass


# ---------------------------------------------------------------- ports

def free_port(family=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.bind((host, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def have_ipv6():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def port_open(port, host="127.0.0.1", family=socket.AF_INET, timeout=0.5):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((host, port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def unix_open(path, timeout=0.5):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def make_traversable(path):
    """pytest's temp dirs are 0700; workers may run as another user (nobody),
    so open the directories from the system temp dir down to path."""
    top = Path(tempfile.gettempdir()).resolve()
    p = Path(path).resolve()
    chain = []
    while p != top and top in p.parents:
        chain.append(p)
        p = p.parent
    for d in chain:
        try:
            os.chmod(d, os.stat(d).st_mode | 0o755)
        except OSError:
            pass


def copy_for_other_user(tmp):
    """The server's binary, its modules and mime.types copied under tmp,
    opened to every user, for a test that runs scalwsd as another user
    (nobody): the checkout itself may lie where only its owner can reach it
    (cloned as root into /root, mode 0700). Returns (scalwsd, modules_dir,
    mime_types)."""
    d = Path(tmp, "for-other-user")
    (d / "modules").mkdir(parents=True, exist_ok=True)
    shutil.copy2(SCALWSD, d / "scalwsd")
    for so in Path(MODULES).glob("*.so"):
        shutil.copy2(so, d / "modules" / so.name)
    shutil.copy2(MIME, d / "mime.types")
    for f in [d, d / "modules"] + list(d.rglob("*")):
        os.chmod(f, 0o755)
    make_traversable(d)
    return str(d / "scalwsd"), str(d / "modules"), str(d / "mime.types")


# ---------------------------------------------------------------- config

MAIN_TEMPLATE = """\
modules_dir @MODULES@;
@LOAD@
error_log @TMP@/error.log @LOGLEVEL@;
pid @TMP@/scalws.pid;
daemon off;
master_process on;
worker_processes @WORKERS@;
@MAIN@
events { worker_connections 1024; @EVENTS@ }
http {
    include @MIME@;
    default_type application/octet-stream;
    access_log @ACCESS_LOG@;
    keepalive_timeout @KEEPALIVE@;
@HTTP@
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @TMP@/html;
        location = /respond { respond 200 "Hello, world!"; }
@SERVER@
    }
@SERVERS@
}
"""


def render(template, tmp, ports, **kw):
    """Replace @NAME@ placeholders. Ports: @PORT@, @PORT2@, @PORT3@ (IPv4),
    @PORT6@ (a free port on ::1 when IPv6 is there)."""
    subst = {
        "MODULES": MODULES,
        "MIME": MIME,
        "SRC": SRC,
        "TMP": str(tmp),
        "WORKERS": "1",
        "LOGLEVEL": "info",
        "KEEPALIVE": "5s",
        "ACCESS_LOG": "%s/access.log" % tmp,
        "LOAD": "",
        "MAIN": "",
        "EVENTS": "",
        "HTTP": "",
        "SERVER": "",
        "SERVERS": "",
    }
    for k, v in kw.items():
        subst[k.upper()] = str(v)
    # SWS_TEST_HTTP_EXTRA: directives added to every http block, to run the
    # whole suite under another setting (e.g. "open_file_cache max=1000;").
    extra = os.environ.get("SWS_TEST_HTTP_EXTRA", "")
    if extra:
        subst["HTTP"] = extra + "\n" + subst["HTTP"]
    for i, p in enumerate(ports):
        subst["PORT" if i == 0 else "PORT%d" % (i + 1)] = str(p)
    text = template
    # Two passes so that inserted blocks may use @TMP@, @PORT2@ ...
    for _ in range(2):
        for k, v in subst.items():
            text = text.replace("@%s@" % k, v)
    return text


# SWS_TEST_EVENTS_USE=io_uring: every configuration a Server writes gets
# "use io_uring;" in its events block (one is added to a main configuration
# that has none), to run the whole suite on that event method (make
# test-io-uring). A configuration that chose its method keeps it.
EVENTS_USE = os.environ.get("SWS_TEST_EVENTS_USE", "")


def with_events_use(text, method=None):
    method = method if method is not None else EVENTS_USE
    if not method or re.search(r"(?:^|[{;\s])use\s+\w+\s*;", text):
        return text
    if re.search(r"^\s*events\s*\{", text, re.M):
        return re.sub(r"^(\s*events\s*\{)", r"\1 use %s;" % method, text, count=1,
                      flags=re.M)
    if re.search(r"^\s*(http|stream)\s*\{", text, re.M):
        return text + "\nevents { use %s; }\n" % method
    return text


# ---------------------------------------------------------------- server

def _read(path, limit=None):
    try:
        data = Path(path).read_bytes()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    if limit and len(text) > limit:
        text = "...\n" + text[-limit:]
    return text


class Server:
    """One scalwsd master started with -p TMP/ -c TMP/<conf>."""

    def __init__(self, tmp, conf_text, ports, conf_name="scalws.conf",
                 unix_paths=(), wait=True, port6=None, preexec_fn=None):
        self.tmp = Path(tmp)
        self.conf_text = conf_text
        self.ports = ports
        self.port = ports[0] if ports else None
        self.port6 = port6
        self.conf_path = self.tmp / conf_name
        self.unix_paths = list(unix_paths)
        self.proc = None
        self.wait = wait
        self.preexec_fn = preexec_fn     # run in the child before exec
        self.stderr_path = self.tmp / "stderr.txt"
        self._stderr = None

    # -- paths
    @property
    def error_log_path(self):
        return self.tmp / "error.log"

    @property
    def access_log_path(self):
        return self.tmp / "access.log"

    @property
    def pid_path(self):
        return self.tmp / "scalws.pid"

    def error_log(self, limit=None):
        return _read(self.error_log_path, limit)

    def stderr(self, limit=None):
        return _read(self.stderr_path, limit)

    def access_log(self):
        return _read(self.access_log_path)

    def diagnostics(self, limit=4000):
        return "--- stderr ---\n%s\n--- error.log ---\n%s" % (
            self.stderr(limit), self.error_log(limit))

    # -- life cycle
    def write_conf(self, text=None, path=None):
        p = Path(path) if path else self.conf_path
        p.write_text(with_events_use(self.conf_text if text is None else text))

    def cmd(self, *extra):
        return [SCALWSD, "-p", str(self.tmp) + "/", "-c", str(self.conf_path)] + list(extra)

    def start(self):
        if not os.path.exists(SCALWSD):
            raise StartError("server binary %s does not exist (build it first)" % SCALWSD)
        self.write_conf()
        self._stderr = open(self.stderr_path, "ab")
        self.proc = subprocess.Popen(self.cmd(), stdin=subprocess.DEVNULL,
                                     stdout=self._stderr, stderr=self._stderr,
                                     cwd=str(self.tmp), start_new_session=True,
                                     preexec_fn=self.preexec_fn)
        self.pgid = self.proc.pid
        RUNNING.append(self)
        if not self.wait:
            return
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            rc = self.proc.poll()
            if rc is not None:
                self._close_stderr()
                RUNNING.remove(self)
                raise StartError("scalwsd exited with status %s at start-up\n%s"
                                 % (rc, self.diagnostics()))
            if self._listening():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise StartError("scalwsd did not accept connections within %.0f s\n%s"
                                 % (START_TIMEOUT, self.diagnostics()))
            time.sleep(0.02)

    def _listening(self):
        ok = True
        if self.port is not None:
            ok = ok and port_open(self.port)
        for p in self.unix_paths:
            ok = ok and unix_open(p)
        if self.port6 is not None:
            ok = ok and port_open(self.port6, "::1", socket.AF_INET6)
        return ok

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        os.kill(self.proc.pid, sig)

    def wait_exit(self, timeout=STOP_TIMEOUT):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def group_pids(self):
        """Processes still in the server's process group."""
        return [p for p in _all_pids() if _pgid(p) == self.pgid and _state(p) != "Z"]

    def stop(self, sig=_signal.SIGTERM):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.pgid, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        self._close_stderr()
        if self in RUNNING:
            RUNNING.remove(self)
            for m in _CRASH_RE.finditer(self.error_log()):
                CRASHES.append("%s: %s" % (self.error_log_path, m.group(0)))

    def _close_stderr(self):
        if self._stderr:
            self._stderr.close()
            self._stderr = None

    # -- processes
    def children(self):
        return children_of(self.proc.pid)

    def wait_children(self, n, timeout=5.0, exclude=()):
        """Wait until the master has exactly n children (none in exclude)."""
        deadline = time.monotonic() + timeout
        kids = []
        while time.monotonic() < deadline:
            kids = self.children()
            if len(kids) == n and not set(kids) & set(exclude):
                return kids
            time.sleep(0.05)
        return kids

    def control(self, action, timeout=10):
        """scalwsd -p -c -s ACTION."""
        return subprocess.run(self.cmd("-s", action), capture_output=True,
                              timeout=timeout, cwd=str(self.tmp))

    # -- urls
    def url(self, path="/", port=None):
        return "http://127.0.0.1:%d%s" % (port or self.port, path)


def _all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def _stat_fields(pid):
    try:
        s = Path("/proc/%d/stat" % pid).read_text()
    except OSError:
        return None
    # comm may contain spaces and parens: split after the last ')'
    rest = s[s.rindex(")") + 2:].split()
    return rest   # [state, ppid, pgrp, ...]


def _state(pid):
    f = _stat_fields(pid)
    return f[0] if f else None


def _pgid(pid):
    f = _stat_fields(pid)
    return int(f[2]) if f else None


def open_files(pid):
    """What the open descriptors of process pid point to (/proc/PID/fd)."""
    d = "/proc/%d/fd" % pid
    out = []
    for n in os.listdir(d):
        try:
            out.append(os.readlink(os.path.join(d, n)))
        except OSError:
            pass
    return out


def children_of(ppid):
    out = []
    for p in _all_pids():
        f = _stat_fields(p)
        if f and int(f[1]) == ppid and f[0] != "Z":
            out.append(p)
    return sorted(out)


def launch(tmp, conf=None, ports=1, files=None, unix_paths=(), ipv6=False,
           conf_name="scalws.conf", wait=True, preexec_fn=None, **kw):
    """Write files (relative to TMP), render the configuration (conf or the
    default template with the keyword blocks) and start the server; retried
    with new ports up to 3 times when a port was taken meanwhile."""
    tmp = Path(tmp)
    (tmp / "html").mkdir(parents=True, exist_ok=True)
    make_traversable(tmp)
    for name, data in (files or {}).items():
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            data = data.encode()
        p.write_bytes(data)
    last = None
    for attempt in range(3):
        port_list = [free_port() for _ in range(ports)]
        port6 = free_port(socket.AF_INET6, "::1") if ipv6 else None
        text = render(conf or MAIN_TEMPLATE, tmp, port_list, **kw)
        if port6 is not None:
            text = text.replace("@PORT6@", str(port6))
        srv = Server(tmp, text, port_list, conf_name=conf_name,
                     unix_paths=[render(u, tmp, port_list) for u in unix_paths],
                     wait=wait, port6=port6, preexec_fn=preexec_fn)
        try:
            srv.start()
            return srv
        except StartError as e:
            last = e
            if "in use" not in str(e):
                raise
            for f in ("error.log", "stderr.txt"):
                try:
                    os.rename(tmp / f, tmp / ("%s.attempt%d" % (f, attempt)))
                except OSError:
                    pass
    raise last


def run_scalwsd(args, timeout=10, cwd=None):
    """Run the binary to completion (e.g. -t, -T, or a start-up that must fail)."""
    return subprocess.run([SCALWSD] + list(args), capture_output=True,
                          timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)


def start_expect_failure(tmp, conf=None, ports=1, timeout=5.0, **kw):
    """Start a server that must refuse to start: returns (returncode or None
    if still running after timeout, combined stderr + error.log, port list).
    Anything still running is killed."""
    tmp = Path(tmp)
    (tmp / "html").mkdir(parents=True, exist_ok=True)
    make_traversable(tmp)
    port_list = [free_port() for _ in range(ports)]
    text = render(conf or MAIN_TEMPLATE, tmp, port_list, **kw)
    srv = Server(tmp, text, port_list, wait=False)
    srv.start()
    rc = srv.wait_exit(timeout)
    listening = any(port_open(p) for p in port_list)
    srv.stop(_signal.SIGKILL)
    out = srv.stderr() + "\n" + srv.error_log()
    return rc, out, listening


def assert_config_errors(tmp, cases, **kw):
    """Each (http block, text) of cases must keep the server from starting
    (a non-zero exit, nothing listening) with text in its output."""
    for i, (http, needle) in enumerate(cases):
        d = Path(tmp) / ("c%d" % i)
        d.mkdir()
        rc, out, listening = start_expect_failure(d, http=http, **kw)
        assert rc not in (None, 0) and needle in out, (http, out)
        assert not listening, http


# ---------------------------------------------------------------- raw HTTP

class ProtocolError(AssertionError):
    pass


class HeaderList:
    """Lookups in self.headers, a list of (name, value) in arrival order."""

    def header(self, name, default=None):
        n = name.lower()
        for k, v in self.headers:
            if k.lower() == n:
                return v
        return default

    def headers_all(self, name):
        n = name.lower()
        return [v for k, v in self.headers if k.lower() == n]


class RawResponse(HeaderList):
    def __init__(self, version, status, reason, headers, body, head):
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers        # [(name, value)] in order
        self.body = body
        self.head = head              # raw bytes of the head

    def __repr__(self):
        return "<%s %s %r body=%d bytes>" % (self.version, self.status, self.headers,
                                             len(self.body))


class Conn:
    """A raw client connection with a receive buffer."""

    def __init__(self, port=None, host="127.0.0.1", family=socket.AF_INET,
                 unix=None, timeout=NET_TIMEOUT, rcvbuf=None):
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            self.sock = socket.socket(family, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(unix if unix else (host, port))
        self.timeout = timeout
        self.buf = b""
        self.eof = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode("latin-1")
        self.sock.sendall(data)

    def _fill(self, timeout=None):
        """Read more into buf; returns False on EOF/reset."""
        if self.eof:
            return False
        self.sock.settimeout(timeout if timeout is not None else self.timeout)
        try:
            d = self.sock.recv(65536)
        except ConnectionResetError:
            d = b""
        if not d:
            self.eof = True
            return False
        self.buf += d
        return True

    def _take(self, n):
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def read_exact(self, n):
        while len(self.buf) < n:
            if not self._fill():
                raise ProtocolError("connection closed after %d of %d body bytes"
                                    % (len(self.buf), n))
        return self._take(n)

    def read_line(self):
        while b"\r\n" not in self.buf:
            if not self._fill():
                raise ProtocolError("connection closed inside a line: %r" % self.buf[:200])
        i = self.buf.index(b"\r\n")
        line = self._take(i + 2)
        return line[:-2]

    def read_until_close(self, timeout=None, limit=64 << 20):
        deadline = time.monotonic() + (timeout or self.timeout)
        while not self.eof and len(self.buf) < limit:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ProtocolError("connection not closed within the time allowed")
            try:
                self._fill(left)
            except socket.timeout:
                raise ProtocolError("connection not closed within the time allowed")
        return self._take(len(self.buf))

    def read_response(self, method="GET"):
        """One response; None if the connection closed before any byte."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                if not self.buf:
                    return None
                raise ProtocolError("connection closed inside a response head: %r"
                                    % self.buf[:300])
        i = self.buf.index(b"\r\n\r\n")
        head = self._take(i + 4)
        lines = head[:-4].split(b"\r\n")
        m = re.match(rb"^(HTTP/\d\.\d) (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise ProtocolError("bad status line %r" % lines[0])
        version = m.group(1).decode()
        status = int(m.group(2))
        reason = (m.group(3) or b"").decode("latin-1")
        headers = []
        for ln in lines[1:]:
            if b":" not in ln or ln[:1] in (b" ", b"\t"):
                raise ProtocolError("bad header line %r" % ln)
            k, v = ln.split(b":", 1)
            if k != k.strip():
                raise ProtocolError("whitespace around header name %r" % ln)
            headers.append((k.decode("latin-1"), v.strip().decode("latin-1")))
        resp = RawResponse(version, status, reason, headers, b"", head)
        if method == "HEAD" or status < 200 or status in (204, 304):
            return resp
        te = resp.header("Transfer-Encoding")
        cl = resp.header("Content-Length")
        if te is not None:
            if te.lower() != "chunked":
                raise ProtocolError("unexpected Transfer-Encoding %r" % te)
            resp.body = self._read_chunked()
        elif cl is not None:
            if not re.match(r"^\d+$", cl):
                raise ProtocolError("bad Content-Length %r" % cl)
            resp.body = self.read_exact(int(cl))
        else:
            resp.body = self.read_until_close()
        return resp

    def _read_chunked(self):
        body = b""
        while True:
            line = self.read_line()
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                while self.read_line() != b"":
                    pass
                return body
            body += self.read_exact(size)
            if self.read_line() != b"":
                raise ProtocolError("missing CRLF after chunk data")

    def closed_within(self, timeout=3.0):
        """True if the peer closes (EOF or reset) within timeout with no more
        data; raises if data arrives; False if still open."""
        deadline = time.monotonic() + timeout
        while not self.eof:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self._fill(left)
            except socket.timeout:
                return False
            if self.buf:
                raise ProtocolError("unexpected data after the response: %r"
                                    % self.buf[:300])
        return True

    def still_open(self, wait=0.3):
        """True if nothing (no EOF, no data) arrives within wait seconds."""
        try:
            return not self.closed_within(wait)
        except ProtocolError:
            return False


def request(method="GET", path="/", host="localhost", headers=(), body=b"",
            version="HTTP/1.1"):
    """Build a request's bytes. headers: [(name, value)] or raw header lines."""
    lines = ["%s %s %s" % (method, path, version)]
    if host is not None:
        lines.append("Host: %s" % host)
    for h in headers:
        lines.append(h if isinstance(h, str) else "%s: %s" % h)
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    if isinstance(body, str):
        body = body.encode()
    return data + body


def exchange(port, data, method="GET", timeout=NET_TIMEOUT, **kw):
    """Send data on a new connection and read one response (or None)."""
    with Conn(port, timeout=timeout, **kw) as c:
        c.send(data)
        return c.read_response(method)


# ---------------------------------------------------------------- pycurl

class CurlResponse(HeaderList):
    def __init__(self, status, headers, body, http_version, num_connects):
        self.status = status
        self.headers = headers
        self.body = body
        self.http_version = http_version
        self.num_connects = num_connects

    def __repr__(self):
        return "<curl %s %r body=%r>" % (self.status, self.headers, self.body[:200])


def curl(url, method="GET", headers=(), body=None, handle=None, unix=None,
         timeout=CURL_TIMEOUT, fresh=False, http10=False, http2=False,
         prior_knowledge=False, cainfo=None, resolve=(), insecure=False):
    """One request with libcurl. headers: ["Name: value"]. handle: a reused
    pycurl.Curl for keep-alive (the caller closes it). https: cainfo is the
    CA file to trust (or insecure=True); http2: ask for h2 by ALPN;
    prior_knowledge: h2c on a plain port; resolve: ["name:port:127.0.0.1"]
    to reach other server names (SNI)."""
    import pycurl
    from io import BytesIO

    c = handle or pycurl.Curl()
    if handle is not None:
        c.reset()
    out = BytesIO()
    hdrs = []

    def on_header(line):
        line = line.decode("latin-1").rstrip("\r\n")
        if line.startswith("HTTP/"):
            hdrs.clear()
        elif ":" in line:
            k, v = line.split(":", 1)
            hdrs.append((k.strip(), v.strip()))

    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.WRITEDATA, out)
    c.setopt(pycurl.HEADERFUNCTION, on_header)
    c.setopt(pycurl.TIMEOUT, timeout)
    c.setopt(pycurl.CONNECTTIMEOUT, 5)
    c.setopt(pycurl.NOSIGNAL, 1)
    c.setopt(pycurl.FOLLOWLOCATION, 0)
    if prior_knowledge:
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
    elif http2:
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS)
    else:
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_0 if http10
                 else pycurl.CURL_HTTP_VERSION_1_1)
    if cainfo:
        c.setopt(pycurl.CAINFO, str(cainfo))
    if insecure:
        c.setopt(pycurl.SSL_VERIFYPEER, 0)
        c.setopt(pycurl.SSL_VERIFYHOST, 0)
    if resolve:
        c.setopt(pycurl.RESOLVE, list(resolve))
    if unix:
        c.setopt(pycurl.UNIX_SOCKET_PATH, unix)
    if fresh:
        c.setopt(pycurl.FRESH_CONNECT, 1)
        c.setopt(pycurl.FORBID_REUSE, 1)
    h = list(headers)
    if method == "HEAD":
        c.setopt(pycurl.NOBODY, 1)
    elif body is not None:
        c.setopt(pycurl.POSTFIELDS, body)
        if method != "POST":
            c.setopt(pycurl.CUSTOMREQUEST, method)
        if not any(x.lower().startswith("expect:") for x in h):
            h.append("Expect:")
    elif method != "GET":
        c.setopt(pycurl.CUSTOMREQUEST, method)
    c.setopt(pycurl.HTTPHEADER, h)
    try:
        c.perform()
        status = c.getinfo(pycurl.RESPONSE_CODE)
        ver = c.getinfo(pycurl.INFO_HTTP_VERSION)
        nconn = c.getinfo(pycurl.NUM_CONNECTS)
    finally:
        if handle is None:
            c.close()
    return CurlResponse(status, list(hdrs), out.getvalue(), ver, nconn)


# ---------------------------------------------------------------- modules

def build_module(directory, name, source, timeout=60):
    """cc -shared -fPIC -I$SCALWS_INCLUDE -o NAME.so NAME.c; returns the path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    src = d / ("%s.c" % name)
    so = d / ("%s.so" % name)
    src.write_text(source)
    r = subprocess.run(["cc", "-std=gnu11", "-shared", "-fPIC", "-O1", "-Wall",
                        "-I", INCLUDE, "-o", str(so), str(src)],
                       capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError("building %s failed:\n%s" % (src, r.stderr.decode()))
    make_traversable(d)
    return so


# ---------------------------------------------------------------- misc

IMF_FIXDATE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} "
    r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
    r"\d{2}:\d{2}:\d{2} GMT$")


def wait_for(pred, timeout=3.0, step=0.05):
    """Poll pred until it returns a true value or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


def wait_file_contains(path, needle, timeout=3.0):
    def f():
        t = _read(path)
        return t if needle in t else None
    return wait_for(f, timeout)


class Background(threading.Thread):
    """Run fn(stop_event) in a daemon thread; join() bounded."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn = fn
        self.stop_event = threading.Event()
        self.result = None
        self.error = None

    def run(self):
        try:
            self.result = self.fn(self.stop_event)
        except BaseException as e:     # reported by the test
            self.error = e

    def finish(self, timeout=15):
        self.stop_event.set()
        self.join(timeout)
        if self.is_alive():
            raise AssertionError("background client did not stop")
        if self.error:
            raise self.error
        return self.result
