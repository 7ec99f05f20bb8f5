"""
A keep-alive HTTP/1.1 load that says what a reload did to it: N connections,
each sending its next GET as soon as the last response was read (as wrk
does), from one thread with non-blocking sockets. Every way a connection
can end is counted apart:

  closes     the server ended a connection (EOF or reset), in all
  announced  ... after a response that said "Connection: close" (what a
             graceful reload should do: the client knew)
  idle       ... with no request outstanding (cannot happen here: a
             request is always outstanding, but counted if it does)
  cut        ... while a request was outstanding: sent, and no complete
             response came (nothing, or part of it). The client cannot know
             whether it was served.
  failed     a complete response that was not the expected one (status,
             length, body), or a connection that could not be made

Used by tests/integration/test_reload.py and bench/reload.py.
"""
import errno
import selectors
import socket
import threading
import time


class _Conn:
    __slots__ = ("sock", "buf", "outstanding", "sent", "connecting", "close_said")

    def __init__(self):
        self.sock = None
        self.buf = b""
        self.outstanding = False
        self.sent = 0
        self.connecting = False
        self.close_said = False


class Load:
    def __init__(self, port, path, conns=16, host="127.0.0.1", expect_body=None,
                 expect_status=200, duration=60.0):
        self.addr = (host, port)
        self.path = path
        self.nconns = conns
        self.expect_body = expect_body
        self.expect_status = expect_status
        self.request = ("GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n" % path).encode()
        self.duration = duration           # bound on the run, whatever happens
        self.stats = dict(requests=0, ok=0, failed=0, cut=0, closes=0, announced=0,
                          idle=0, connects=0, connect_errors=0)
        self.errors = []                   # the first few failures and cuts, for messages
        self._stop = threading.Event()
        self._thread = None
        self._sel = None

    # ---- the run
    def start(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout=10.0):
        self._stop.set()
        self._thread.join(timeout)
        return self.stats

    def _note(self, what):
        if len(self.errors) < 20:
            self.errors.append(what)

    def _connect(self, c):
        c.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        c.sock.setblocking(False)
        c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c.buf = b""
        c.outstanding = False
        c.close_said = False
        c.connecting = True
        self.stats["connects"] += 1
        rc = c.sock.connect_ex(self.addr)
        if rc not in (0, errno.EINPROGRESS):
            self._connect_failed(c, rc)
            return
        self._sel.register(c.sock, selectors.EVENT_WRITE, c)

    def _connect_failed(self, c, err):
        self.stats["connect_errors"] += 1
        self.stats["failed"] += 1
        self._note("connect: %s" % errno.errorcode.get(err, err))
        c.sock.close()
        c.sock = None
        time.sleep(0.001)

    def _send(self, c):
        try:
            c.sock.send(self.request)     # a few bytes: the socket takes them
        except OSError as e:
            self._ended(c, "send: %s" % e)
            return False
        c.outstanding = True
        c.sent = time.monotonic()
        self.stats["requests"] += 1
        return True

    def _ended(self, c, why):
        """The server ended c (EOF or reset)."""
        self.stats["closes"] += 1
        if c.close_said and not c.outstanding:
            self.stats["announced"] += 1
        elif c.outstanding:
            self.stats["cut"] += 1
            self._note("cut (%s) after %d bytes of the response" % (why, len(c.buf)))
        else:
            self.stats["idle"] += 1
        try:
            self._sel.unregister(c.sock)
        except (KeyError, ValueError):
            pass
        c.sock.close()
        c.sock = None

    def _response(self, c):
        """Take complete responses from c.buf: True while c stays usable."""
        while True:
            end = c.buf.find(b"\r\n\r\n")
            if end < 0:
                return True
            head = c.buf[:end].decode("latin-1").split("\r\n")
            try:
                status = int(head[0].split(" ")[1])
            except (IndexError, ValueError):
                self.stats["failed"] += 1
                self._note("bad status line %r" % head[0])
                c.outstanding = False
                return False
            length = None
            close = False
            for line in head[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                if name == "content-length":
                    length = int(value.strip())
                elif name == "connection" and "close" in value.lower():
                    close = True
            if length is None:
                self.stats["failed"] += 1
                self._note("no Content-Length: %r" % head)
                c.outstanding = False
                return False
            if len(c.buf) < end + 4 + length:
                return True
            body = c.buf[end + 4:end + 4 + length]
            c.buf = c.buf[end + 4 + length:]
            c.outstanding = False
            if status != self.expect_status or (self.expect_body is not None
                                                and body != self.expect_body):
                self.stats["failed"] += 1
                self._note("unexpected response %d, %d bytes" % (status, len(body)))
            else:
                self.stats["ok"] += 1
            if close:
                c.close_said = True
                return True            # the EOF that follows is announced
            return True

    def _readable(self, c):
        try:
            data = c.sock.recv(262144)
        except BlockingIOError:
            return
        except OSError as e:
            self._ended(c, "recv: %s" % e)
            return
        if not data:
            self._ended(c, "EOF")
            return
        c.buf += data
        if not self._response(c):
            self._ended(c, "bad response")
            return
        if not c.outstanding and not c.close_said and not self._stop.is_set():
            self._send(c)

    def _run(self):
        self._sel = selectors.DefaultSelector()
        conns = [_Conn() for _ in range(self.nconns)]
        deadline = time.monotonic() + self.duration
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                for c in conns:
                    if c.sock is None:
                        self._connect(c)
                for key, _ in self._sel.select(0.05):
                    c = key.data
                    if c.sock is None:
                        continue
                    if c.connecting:
                        err = c.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                        self._sel.unregister(c.sock)
                        if err:
                            self._connect_failed(c, err)
                            continue
                        c.connecting = False
                        self._sel.register(c.sock, selectors.EVENT_READ, c)
                        self._send(c)
                        continue
                    self._readable(c)
            # The last responses: wait for them (bounded), then count what
            # is still outstanding as cut.
            end = time.monotonic() + 5
            while any(c.sock is not None and c.outstanding for c in conns) \
                    and time.monotonic() < end:
                for key, _ in self._sel.select(0.05):
                    c = key.data
                    if c.sock is not None and not c.connecting:
                        self._readable(c)
            for c in conns:
                if c.sock is not None:
                    if c.outstanding and not c.connecting:
                        self.stats["cut"] += 1
                        self._note("no response within 5 s at the end")
                    c.sock.close()
                    c.sock = None
        finally:
            self._sel.close()


class WorkerWatch:
    """Polls the master's children every few ms: when each process was seen
    first and last, so that the time old workers take to go after a reload
    can be told."""

    def __init__(self, master_pid, period=0.005):
        self.master = master_pid
        self.period = period
        self.first = {}
        self.last = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(5)

    def children(self):
        import os
        out = set()
        try:
            names = os.listdir("/proc")
        except OSError:
            return out
        for p in names:
            if not p.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % p) as f:
                    s = f.read()
            except OSError:
                continue
            rest = s[s.rindex(")") + 2:].split()
            if int(rest[1]) == self.master and rest[0] != "Z":
                out.add(int(p))
        return out

    def _run(self):
        while not self._stop.is_set():
            now = time.monotonic()
            for p in self.children():
                self.first.setdefault(p, now)
                self.last[p] = now
            time.sleep(self.period)

    def gone_after(self, pids, since):
        """Seconds from since until the last of pids was last seen (None if
        one is still there)."""
        now = time.monotonic()
        t = since
        for p in pids:
            last = self.last.get(p)
            if last is None:
                continue
            if now - last < 3 * self.period + 0.05 and p in self.children():
                return None
            t = max(t, last)
        return t - since
