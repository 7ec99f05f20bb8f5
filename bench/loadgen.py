"""Load tools: wrk (HTTP/1.1, plain or TLS), h2load (HTTP/2 over TLS),
h3load (HTTP/3, bench/h3load.c) and openssl s_time (TLS handshakes), each
an argv maker plus a parser of its output into the same dict; and the exact-count clients: a sequential
keep-alive client (plain or TLS) that sends exactly N requests, and one that
opens N TLS connections (for callgrind, where the request count must be
exact, and to check a server's answer before it is measured)."""

import json
import os
import re
import shlex
import signal
import socket
import ssl
import subprocess
import threading
import time
from urllib.parse import urlsplit


# ---- wrk ---------------------------------------------------------------

def wrk_argv(url, duration, connections, threads, cpu, timeout_s=2, headers=()):
    hdrs = [a for h in headers for a in ("-H", h)]
    return ["taskset", "-c", str(cpu), "wrk", "-t%d" % threads, "-c%d" % connections,
            "-d%ds" % duration, "--timeout", "%ds" % timeout_s, "--latency"] + hdrs + [url]


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _ms(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError("not a wrk duration: %r" % text)
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_wrk(out):
    """The numbers in wrk's text output (wrk 4.x with --latency)."""
    r = {"requests": None, "elapsed_s": None, "rps": None, "p50_ms": None, "p99_ms": None,
         "non2xx": 0, "socket_errors": 0, "errors_detail": ""}
    m = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m),", out, re.M)
    if m:
        r["requests"] = int(m.group(1))
        r["elapsed_s"] = _ms(m.group(2) + m.group(3)) / 1000.0
    m = re.search(r"^Requests/sec:\s*([\d.]+)", out, re.M)
    if m:
        r["rps"] = float(m.group(1))
    # the mean latency (Thread Stats: Avg): with requests/s, how many
    # connections were busy on average (Little's law)
    m = re.search(r"^\s*Latency\s+([\d.]+(?:us|ms|s|m))\s", out, re.M)
    r["mean_ms"] = _ms(m.group(1)) if m else None
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(r"^\s*%s%%\s+(\S+)" % pct, out, re.M)
        if m:
            r[key] = _ms(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    if m:
        r["non2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        r["socket_errors"] = sum(int(g) for g in m.groups())
        r["errors_detail"] = m.group(0)
    return r


# ---- h2load --------------------------------------------------------------

def h2load_argv(url, duration, connections, threads, cpu, streams=1):
    """h2load for `duration` seconds, one stream at a time per connection
    (as wrk: a request, its answer, the next), or `streams` at a time. No
    --warm-up-time: the harness warms up with a run of its own, so the
    connections' 64 handshakes fall inside the measured window (about 0.5 %
    of its CPU)."""
    return ["taskset", "-c", str(cpu), "h2load", "-c%d" % connections, "-t%d" % threads,
            "-m%d" % streams, "-D%d" % duration, url]


# the h2load tools: streams in flight per connection
H2LOAD_STREAMS = {"h2load": 1, "h2load-m10": 10}


def h2load_m10_argv(url, duration, connections, threads, cpu):
    """h2load with ten streams in flight on each connection."""
    return h2load_argv(url, duration, connections, threads, cpu,
                       streams=H2LOAD_STREAMS["h2load-m10"])


def parse_h2load(out):
    """The numbers in h2load's output (nghttp2 1.5x); h2load prints no
    percentiles, so p99 is the mean request time's place holder: None."""
    r = {"requests": None, "elapsed_s": None, "rps": None, "p50_ms": None, "p99_ms": None,
         "non2xx": 0, "socket_errors": 0, "errors_detail": ""}
    m = re.search(r"^finished in ([\d.]+)(us|ms|s|m), ([\d.]+) req/s", out, re.M)
    if m:
        r["elapsed_s"] = _ms(m.group(1) + m.group(2)) / 1000.0
        r["rps"] = float(m.group(3))
    m = re.search(r"^requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored, (\d+) timeout", out, re.M)
    if m:
        r["requests"] = int(m.group(2))
        bad = [int(g) for g in m.group(4, 5, 6)]
        r["socket_errors"] = sum(bad)
        if r["socket_errors"]:
            r["errors_detail"] = "h2load: %d failed, %d errored, %d timeout" % tuple(bad)
    m = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out, re.M)
    if m:
        r["non2xx"] = int(m.group(3)) + int(m.group(4))
    m = re.search(r"^time for request:\s+\S+\s+\S+\s+(\S+)", out, re.M)
    if m:
        r["p50_ms"] = _ms(m.group(1))          # the mean: h2load has no median
    return r


# ---- h3load (HTTP/3) --------------------------------------------------------

# bench/h3load.c as the build makes it (BUILDDIR/bench/h3load); bench/run
# sets it from --h3load
H3LOAD = os.environ.get("H3LOAD") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "objs", "bench", "h3load")

# the h3load tools: h3load's options beside -c and -m (streams in flight per
# connection: one, as tls-h2-static-small's h2load)
H3LOAD_TOOLS = {"h3load": [], "h3load-nogso": ["--no-gso"]}


def h3load_argv(url, duration, connections, threads, cpu, extra=()):
    """h3load for `duration` seconds, one request at a time per connection
    (then 5 s at most for the answers in flight); its summary as one JSON
    line (--json), the self-signed certificate accepted (-k)."""
    return (["taskset", "-c", str(cpu), H3LOAD, "-k", "--json", "-c%d" % connections, "-m1",
             "-d%d" % duration, "-t5"] + list(extra) + [url])


def h3load_nogso_argv(url, duration, connections, threads, cpu):
    """h3load without GSO (and GRO) on its own sockets."""
    return h3load_argv(url, duration, connections, threads, cpu,
                       extra=H3LOAD_TOOLS["h3load-nogso"])


def parse_h3load(out):
    """The numbers in h3load's --json summary (its last line)."""
    r = {"requests": None, "elapsed_s": None, "rps": None, "p50_ms": None, "p99_ms": None,
         "non2xx": 0, "socket_errors": 0, "errors_detail": ""}
    lines = out.strip().splitlines()
    try:
        s = json.loads(lines[-1]) if lines else None
    except ValueError:
        s = None
    if not isinstance(s, dict):
        r["socket_errors"] = 1
        r["errors_detail"] = "h3load printed no summary"
        return r
    r.update({"requests": s["succeeded"] + s["failed"], "elapsed_s": s["elapsed_s"],
              "rps": s["rps"], "p50_ms": s["latency_ms"]["p50"], "p99_ms": s["latency_ms"]["p99"],
              "mean_ms": s["latency_ms"]["mean"], "body_bytes": s["body_bytes"],
              "non2xx": s["failed"] + s["status"]["1xx"] + s["status"]["other"]})
    bad = s["errored"] + s["timeout"] + s["connections"]["failed"]
    if bad:
        r["socket_errors"] = bad
        r["errors_detail"] = "h3load: %d errored, %d timeout, %d connections failed: %s" % (
            s["errored"], s["timeout"], s["connections"]["failed"], s["error"])
    return r


def h3load_exact(port, path, n, expect_length=-1, timeout=120.0, extra=()):
    """Exactly n HTTP/3 requests on one connection with h3load; raises
    HttpError unless all n succeed with 2xx (and expect_length body bytes
    each, when not -1)."""
    argv = [H3LOAD, "-k", "--json", "-n%d" % n, "-c1", "-m1", "-t%d" % max(2, timeout - 1)] + \
        list(extra) + ["https://127.0.0.1:%d%s" % (port, path)]
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise HttpError("h3load: no answer in %.0f s" % timeout)
    r = parse_h3load(p.stdout.decode("utf-8", "replace"))
    if r["requests"] != n or r["non2xx"] or r["socket_errors"]:
        raise HttpError("h3load: %s of %d requests done, %d non-2xx, %s"
                        % (r["requests"], n, r["non2xx"], r["errors_detail"] or "no errors"))
    if expect_length >= 0 and r["body_bytes"] != n * expect_length:
        raise HttpError("h3load: %d body bytes for %d requests (expected %d each)"
                        % (r["body_bytes"], n, expect_length))


# ---- openssl s_time -------------------------------------------------------

S_TIME_CLIENTS = 8


def _s_time_argv(url, duration, cpu, reuse):
    """S_TIME_CLIENTS `openssl s_time` processes at once, each a new
    connection per request (TLS handshake, GET over HTTP/1.0, close):
    -new for full handshakes, -reuse to resume the first connection's
    session."""
    u = urlsplit(url)
    one = ["openssl", "s_time", "-connect", "%s:%d" % (u.hostname, u.port),
           "-reuse" if reuse else "-new", "-time", str(duration), "-www", u.path]
    script = "for i in $(seq %d); do %s & done; wait" % (S_TIME_CLIENTS, shlex.join(one))
    return ["taskset", "-c", str(cpu), "sh", "-c", script]


def s_time_new_argv(url, duration, connections, threads, cpu):
    return _s_time_argv(url, duration, cpu, reuse=False)


def s_time_reuse_argv(url, duration, connections, threads, cpu):
    return _s_time_argv(url, duration, cpu, reuse=True)


def parse_s_time(out):
    """Connections (= requests) summed over the s_time processes. s_time
    prints whole seconds of real time, so the elapsed time is the window
    (-time) the harness asked for: the caller's `duration`."""
    r = {"requests": None, "elapsed_s": None, "rps": None, "p50_ms": None, "p99_ms": None,
         "non2xx": 0, "socket_errors": 0, "errors_detail": ""}
    counts = [int(x) for x in re.findall(r"^(\d+) connections in [\d.]+ real seconds", out, re.M)]
    if len(counts) == S_TIME_CLIENTS:
        r["requests"] = sum(counts)
    else:
        r["socket_errors"] = S_TIME_CLIENTS - len(counts)
        r["errors_detail"] = "only %d of %d s_time clients finished" % (len(counts), S_TIME_CLIENTS)
    # each s_time stops at the first failed connection or read
    if re.search(r"^(ERROR|.*:error:)", out, re.M):
        r["socket_errors"] += 1
        r["errors_detail"] = (r["errors_detail"] + "; " if r["errors_detail"] else "") + "s_time: error"
    return r


PARSERS = {"wrk": parse_wrk, "h2load": parse_h2load, "h2load-m10": parse_h2load,
           "s_time-new": parse_s_time, "s_time-reuse": parse_s_time,
           "h3load": parse_h3load, "h3load-nogso": parse_h3load}
ARGV = {"wrk": wrk_argv, "h2load": h2load_argv, "h2load-m10": h2load_m10_argv,
        "s_time-new": s_time_new_argv, "s_time-reuse": s_time_reuse_argv,
        "h3load": h3load_argv, "h3load-nogso": h3load_nogso_argv}


def run_load(tool, argv, out_path, duration):
    """run_wrk() for any of the load tools (by name, see ARGV)."""
    r = run_wrk(argv, out_path, duration, PARSERS[tool])
    if tool.startswith("s_time") and r["requests"]:
        r["elapsed_s"] = float(duration)
        r["rps"] = r["requests"] / float(duration)
    return r


def run_wrk(argv, out_path, duration, parse=parse_wrk):
    """Runs wrk (or another load tool, with its parser), killing it if it
    overruns by 30 s. Returns parse's dict plus the tool's own CPU time
    (user + sys seconds, children included) and its exit status."""
    with open(out_path, "wb") as out:
        popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
    timer = threading.Timer(duration + 30, lambda: _kill_group(popen.pid))
    timer.start()
    try:
        _, status, ru = os.wait4(popen.pid, 0)
    finally:
        timer.cancel()
        popen.returncode = 0        # reaped by wait4 above
    with open(out_path, errors="replace") as f:
        text = f.read()
    r = parse(text)
    # (s_time runs under a shell: a reaped child's usage includes its own
    # reaped children's)
    r["wrk_cpu_s"] = ru.ru_utime + ru.ru_stime
    r["wrk_status"] = os.waitstatus_to_exitcode(status)
    r["output"] = text
    return r


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


# ---- the sequential keep-alive client -----------------------------------

class HttpError(Exception):
    pass


class Client:
    """One keep-alive HTTP/1.1 connection; get() sends one request and reads
    the whole response (Content-Length or chunked)."""

    def __init__(self, port, host="127.0.0.1", timeout=60.0, tls=False, session=None):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            self.sock = tls_context().wrap_socket(self.sock, server_hostname="localhost",
                                                  session=session)
        self.host = "%s:%d" % (host, port)
        self.buf = bytearray()
        self.chunk = bytearray(256 * 1024)

    def close(self):
        self.sock.close()

    def _fill(self):
        n = self.sock.recv_into(self.chunk)
        if n == 0:
            raise HttpError("connection closed by the server")
        self.buf += memoryview(self.chunk)[:n]

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def _skip(self, n):
        """Consumes n body bytes without keeping them."""
        take = min(n, len(self.buf))
        del self.buf[:take]
        n -= take
        while n > 0:
            got = self.sock.recv_into(self.chunk, min(n, len(self.chunk)))
            if got == 0:
                raise HttpError("connection closed in the body")
            n -= got

    def get(self, path, headers=()):
        """(status, body length, headers dict with lower-case names)."""
        extra = "".join("%s\r\n" % h for h in headers)
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n"
                           % (path, self.host, extra)).encode())
        status_line = self._line()
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise HttpError("bad status line %r" % status_line[:80])
        status = int(parts[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, _, v = line.partition(b":")
            headers[k.strip().lower().decode()] = v.strip().decode("latin-1")
        if "content-length" in headers:
            length = int(headers["content-length"])
            self._skip(length)
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            length = 0
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():     # trailers
                        pass
                    break
                self._skip(size)
                self._line()
                length += size
        else:
            raise HttpError("response without Content-Length or chunked body")
        if headers.get("connection", "").lower() == "close":
            raise HttpError("the server closed the keep-alive connection")
        return status, length, headers


_TLS_CONTEXT = None


def tls_context():
    """A client context for the harness's self-signed certificate: no
    verification, HTTP/1.1 by ALPN."""
    global _TLS_CONTEXT
    if _TLS_CONTEXT is None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols(["http/1.1"])
        _TLS_CONTEXT = ctx
    return _TLS_CONTEXT


def _check(i, status, length, expect_status, expect_length, headers=None, encoding=None):
    if status != expect_status or (length != expect_length if expect_length >= 0 else length <= 0):
        raise HttpError("request %d: status %d, %d body bytes (expected %d, %d)"
                        % (i + 1, status, length, expect_status, expect_length))
    if encoding is not None and (headers or {}).get("content-encoding") != encoding:
        raise HttpError("request %d: Content-Encoding %r (expected %r)"
                        % (i + 1, (headers or {}).get("content-encoding"), encoding))


def connections(port, path, n, expect_status, expect_length, resume, timeout=120.0):
    """n TLS connections one after the other, one request each (then
    close), resuming the first connection's session when `resume`; raises
    HttpError on a wrong answer or a session not resumed. Returns the
    elapsed seconds."""
    t0 = time.monotonic()
    session = None
    for i in range(n):
        c = Client(port, timeout=timeout, tls=True, session=session)
        try:
            status, length, _ = c.get(path)
            _check(i, status, length, expect_status, expect_length)
            if resume and session is not None and not c.sock.session_reused:
                raise HttpError("connection %d: the session was not resumed" % (i + 1))
            if resume and session is None:
                session = c.sock.session        # the ticket came with the answer
        finally:
            c.close()
    return time.monotonic() - t0


def sequential(port, path, n, expect_status, expect_length, timeout=120.0, tls=False,
               headers=(), encoding=None):
    """Sends exactly n requests on one keep-alive connection; raises HttpError
    on the first wrong answer. Returns the elapsed seconds."""
    t0 = time.monotonic()
    c = Client(port, timeout=timeout, tls=tls)
    try:
        for i in range(n):
            status, length, hdrs = c.get(path, headers)
            _check(i, status, length, expect_status, expect_length, hdrs, encoding)
    finally:
        c.close()
    return time.monotonic() - t0


def h2load_exact(port, path, n, timeout=300.0, streams=1):
    """Exactly n HTTP/2 requests over TLS on one connection with h2load,
    `streams` at a time; raises HttpError unless all n succeed with 2xx."""
    argv = ["h2load", "-n%d" % n, "-c1", "-t1", "-m%d" % streams,
            "https://127.0.0.1:%d%s" % (port, path)]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                       check=False)
    r = parse_h2load(p.stdout.decode("utf-8", "replace"))
    if r["requests"] != n or r["non2xx"] or r["socket_errors"]:
        raise HttpError("h2load: %s of %d requests done, %d non-2xx, %s"
                        % (r["requests"], n, r["non2xx"], r["errors_detail"] or "no errors"))


def exact(scenario, port, n, timeout=120.0):
    """Exactly n requests of `scenario` the way its load tool sends them
    (HTTP/2 for h2load, a connection each for s_time, else HTTP/1.1
    keep-alive, over TLS in the TLS scenarios); raises HttpError on the
    first wrong answer."""
    if scenario.load_tool in H3LOAD_TOOLS:
        return h3load_exact(port, scenario.path, n, scenario.expect_length,
                            timeout=max(timeout, 30.0), extra=H3LOAD_TOOLS[scenario.load_tool])
    if scenario.load_tool in H2LOAD_STREAMS:
        return h2load_exact(port, scenario.path, n, timeout=max(timeout, 300.0),
                            streams=H2LOAD_STREAMS[scenario.load_tool])
    if scenario.load_tool.startswith("s_time"):
        return connections(port, scenario.path, n, scenario.expect_status, scenario.expect_length,
                           resume=scenario.load_tool.endswith("reuse"), timeout=timeout)
    return sequential(port, scenario.path, n, scenario.expect_status, scenario.expect_length,
                      timeout=timeout, tls=scenario.tls, headers=scenario.request_headers,
                      encoding=scenario.expect_encoding)
