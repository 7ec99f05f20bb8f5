"""Load tools: wrk (throughput, latency) and a sequential keep-alive client
that sends exactly N requests (for callgrind, where the request count must be
exact, and to check a server's answer before it is measured)."""

import os
import re
import signal
import socket
import subprocess
import threading
import time


# ---- wrk ---------------------------------------------------------------

def wrk_argv(url, duration, connections, threads, cpu, timeout_s=2):
    return ["taskset", "-c", str(cpu), "wrk", "-t%d" % threads, "-c%d" % connections,
            "-d%ds" % duration, "--timeout", "%ds" % timeout_s, "--latency", url]


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


def run_wrk(argv, out_path, duration):
    """Runs wrk, killing it if it overruns by 30 s. Returns parse_wrk()'s
    dict plus wrk's own CPU time (user + sys seconds) and its exit status."""
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
    r = parse_wrk(text)
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

    def __init__(self, port, host="127.0.0.1", timeout=60.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
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

    def get(self, path):
        """(status, body length, headers dict with lower-case names)."""
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, self.host)).encode())
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


def sequential(port, path, n, expect_status, expect_length, timeout=120.0):
    """Sends exactly n requests on one keep-alive connection; raises HttpError
    on the first wrong answer. Returns the elapsed seconds."""
    t0 = time.monotonic()
    c = Client(port, timeout=timeout)
    try:
        for i in range(n):
            status, length, _ = c.get(path)
            if status != expect_status or length != expect_length:
                raise HttpError("request %d: status %d, %d body bytes (expected %d, %d)"
                                % (i + 1, status, length, expect_status, expect_length))
    finally:
        c.close()
    return time.monotonic() - t0
