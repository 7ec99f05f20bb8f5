"""WSGI (PEP 3333) over the bridge: one blocking loop per worker process.
Idle connections from scalwsd wait in epoll; a connection with a
request is served to the end (the application reads wsgi.input, which
pulls BODY frames from the socket as it goes, and its response is written
as it is produced, blocking while scalwsd does not read: back-pressure
both ways without buffering more than one read).

wsgi.file_wrapper: a response that is a FileWrapper of a regular file is
handed to scalwsd when the request says it takes one (REQUEST_FILE, on a
unix socket): a FILE frame with the range, the descriptor passed with it
(SCM_RIGHTS), and scalwsd sends the file itself. Otherwise it goes with
sendfile(2) from the file to the socket inside one DATA frame."""

import array
import os
import select
import signal
import socket
import sys
import traceback

from . import _bridge

READ_SIZE = 64 * 1024
END_KEEP = _bridge.end(_bridge.END_KEEP)
END_KEEP_FLAG = _bridge.END_KEEP
REQUEST_BODY = _bridge.REQUEST_BODY
REQUEST_FILE = _bridge.REQUEST_FILE
response = _bridge.response
send_some = _bridge.send_some
# "200 OK" -> 200: an application's few status lines, parsed once each
STATUS_CODES = {}
BASE_ENVIRON = {
    "wsgi.version": (1, 0),
    "wsgi.multithread": False,
    "wsgi.multiprocess": True,
    "wsgi.run_once": False,
    "wsgi.input_terminated": True,
    "wsgi.errors": sys.stderr,
    "SCRIPT_NAME": "",
}


def log(msg):
    sys.stderr.write("scalws_bridge: %s\n" % msg)
    sys.stderr.flush()


class Closed(Exception):
    """scalwsd closed the connection (or it failed)."""


class FileWrapper:
    """wsgi.file_wrapper: iterates over blocks; served with sendfile when it
    wraps a regular file."""

    def __init__(self, filelike, blksize=8192):
        self.filelike = filelike
        self.blksize = blksize
        if hasattr(filelike, "close"):
            self.close = filelike.close

    def __iter__(self):
        return self

    def __next__(self):
        data = self.filelike.read(self.blksize)
        if data:
            return data
        raise StopIteration


class EmptyInput:
    """wsgi.input of a request without a body: it has no state, so one
    serves every such request (set in the base environ; a request with a
    body gets an Input of its own)."""

    __slots__ = ()

    def read(self, size=-1):
        return b""

    def readline(self, size=-1):
        return b""

    def readlines(self, hint=-1):
        return []

    def __iter__(self):
        return iter(())


BASE_ENVIRON["wsgi.file_wrapper"] = FileWrapper      # copied into each environ in C
BASE_ENVIRON["wsgi.input"] = EmptyInput()


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.fd = sock.fileno()
        # recv_into one buffer (the parser copies what it keeps): no
        # READ_SIZE bytes object made and shrunk per read
        self.buf = bytearray(READ_SIZE)
        # no on_request: feed() returns the (environ, flags) it completed
        self.parser = _bridge.Parser(None, self.on_body, self.on_body_end,
                                     _bridge.MODE_WSGI, BASE_ENVIRON)
        self.chunks = []
        self.body_done = True
        self.file_ok = False
        # descriptors pass over unix sockets only
        self.can_pass = sock.family == socket.AF_UNIX
        # one per connection, made ready again for each request
        self.response = Response(self)
        self.start_response = self.response.start_response

    def on_body(self, data):
        self.chunks.append(data)

    def on_body_end(self):
        self.body_done = True

    def fill(self):
        """One read from scalwsd through the parser."""
        try:
            n = self.sock.recv_into(self.buf)
        except OSError as e:
            raise Closed() from e
        if not n:
            raise Closed()
        try:
            req = self.parser.feed(self.buf, n)
        except ValueError as e:
            log(str(e))
            raise Closed() from e
        if req is not None:
            log("a request before the previous one ended")
            raise Closed()

    def take_body(self):
        chunks = self.chunks
        self.chunks = []
        return chunks

    def send(self, data):
        """All of data: what the socket takes at once without the GIL's
        release (send_some), the rest, if any, waiting (sendall)."""
        try:
            n = send_some(self.fd, data)
            if n < len(data):
                self.sock.sendall(memoryview(data)[n:])
        except OSError as e:
            raise Closed() from e


class Input:
    """wsgi.input: the body as the application reads it."""

    __slots__ = ("conn", "buf")

    def __init__(self, conn):
        self.conn = conn
        self.buf = b""

    def _more(self):
        c = self.conn
        while not c.chunks:
            if c.body_done:
                return False
            c.fill()
        rest = c.take_body()
        self.buf = self.buf + b"".join(rest) if self.buf else b"".join(rest)
        return True

    def read(self, size=-1):
        if size is None or size < 0:
            while self._more():
                pass
            data, self.buf = self.buf, b""
            return data
        while len(self.buf) < size and self._more():
            pass
        data, self.buf = self.buf[:size], self.buf[size:]
        return data

    def readline(self, size=-1):
        while True:
            i = self.buf.find(b"\n")
            if i >= 0 and (size is None or size < 0 or i < size):
                data, self.buf = self.buf[:i + 1], self.buf[i + 1:]
                return data
            if size is not None and 0 <= size <= len(self.buf):
                data, self.buf = self.buf[:size], self.buf[size:]
                return data
            if not self._more():
                data, self.buf = self.buf, b""
                return data

    def readlines(self, hint=-1):
        lines, n = [], 0
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)
            n += len(line)
            if hint is not None and 0 < hint <= n:
                return lines

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def regular_file(wrapper):
    """The fd and bytes left of a FileWrapper of a regular file, or None."""
    f = wrapper.filelike
    try:
        fd = f.fileno()
        st = os.fstat(fd)
        if not (st.st_mode & 0o170000 == 0o100000):
            return None
        pos = f.tell() if hasattr(f, "tell") else 0
        return fd, pos, max(0, st.st_size - pos)
    except (AttributeError, OSError, ValueError):
        return None


class Response:
    """start_response and the writing of one response."""

    __slots__ = ("conn", "status", "headers", "head_sent")

    def __init__(self, conn):
        self.conn = conn
        self.status = None
        self.headers = None
        self.head_sent = False

    def start_response(self, status, headers, exc_info=None):
        if exc_info:
            try:
                if self.head_sent:
                    raise exc_info[1].with_traceback(exc_info[2])
            finally:
                exc_info = None
        elif self.status is not None:
            raise AssertionError("start_response called twice")
        code = STATUS_CODES.get(status)
        if code is None:
            code = int(status[:3])             # PEP 3333: "200 OK"
            if len(STATUS_CODES) < 256:
                STATUS_CODES[status] = code
        self.status = code
        self.headers = headers
        return self.write

    def write(self, data):
        """The legacy write() callable, and each piece of the iterable."""
        if self.status is None:
            raise AssertionError("the response's body before start_response")
        if not self.head_sent:
            self.head_sent = True
            self.conn.send(_bridge.response(self.status, self.headers, data))
        elif data:
            self.conn.send(_bridge.data(data))

    def finish(self):
        if not self.head_sent:
            if self.status is None:
                raise AssertionError("the application returned before start_response")
            self.head_sent = True
            self.conn.send(_bridge.response(self.status, self.headers, None, _bridge.END_KEEP))
        else:
            self.conn.send(END_KEEP)

    def send_file(self, wrapper):
        """The whole response (END too) if wrapper is of a regular file."""
        f = regular_file(wrapper)
        if f is None:
            return False
        fd, pos, size = f
        length = None
        for name, value in self.headers:
            if name.lower() == "content-length":
                length = int(value)
                size = min(size, length)
        self.head_sent = True
        if self.conn.file_ok:
            self.pass_file(fd, pos, size, length is None)
            return True
        self.conn.send(_bridge.response(self.status, self.headers) + _bridge.data_head(size))
        self.copy_file(fd, pos, size)
        self.conn.send(END_KEEP)
        return True

    def pass_file(self, fd, pos, size, add_length):
        """RESPONSE, FILE and END, the descriptor with them: scalwsd sends
        the file (the kernel holds it: the application may close its own)."""
        headers = self.headers
        if add_length:
            headers = list(headers) + [("Content-Length", str(size))]
        frames = _bridge.response(self.status, headers) + _bridge.file(pos, size) + END_KEEP
        try:
            n = self.conn.sock.sendmsg([frames], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                                   array.array("i", [fd]))])
            if n < len(frames):
                self.conn.sock.sendall(frames[n:])
        except OSError as e:
            raise Closed() from e

    def copy_file(self, fd, pos, size):
        out = self.conn.sock.fileno()
        while size:
            try:
                n = os.sendfile(out, fd, pos, size)
            except OSError as e:
                raise Closed() from e
            if n == 0:
                raise Closed()       # the file shrank: the frame cannot be completed
            pos += n
            size -= n


def serve_ready(app, conn):
    """conn is readable: a request (or the end). False: close it. One
    function for the read, the call and the answer (one Python call less
    each than a method per step)."""
    try:
        # one recv that does not wait (epoll said it is readable), fed
        req = conn.parser.read_from(conn.fd)
    except ValueError as e:
        log(str(e))
        return False
    except (OSError, EOFError):
        return False
    if req is None:
        return True
    # (an upgrade is served as a plain request: WSGI has none)
    environ, flags = req
    if flags & REQUEST_BODY:
        # (the same read may have brought the body, BODY_END too)
        conn.body_done = not conn.parser.in_body
        environ["wsgi.input"] = Input(conn)
    else:
        conn.body_done = True      # and the base environ's EmptyInput
    conn.file_ok = conn.can_pass and flags & REQUEST_FILE
    rs = conn.response
    rs.status = rs.headers = None
    rs.head_sent = False
    try:
        try:
            result = app(environ, conn.start_response)
            try:
                kind = type(result)
                if (kind is list or kind is tuple) and len(result) == 1 \
                        and rs.status is not None and not rs.head_sent:
                    # the common case in one write: head, body, end
                    rs.head_sent = True
                    conn.send(response(rs.status, rs.headers, result[0], END_KEEP_FLAG))
                    result = None          # a list or tuple: nothing to close
                elif kind is FileWrapper and rs.status is not None \
                        and rs.send_file(result):
                    pass
                else:
                    for data in result:
                        if data:
                            rs.write(data)
                    rs.finish()
            finally:
                if result is not None:
                    close = getattr(result, "close", None)
                    if close is not None:
                        close()
        except Closed:
            raise
        except Exception:
            log("the application raised:\n" + traceback.format_exc().rstrip())
            if rs.head_sent:
                raise Closed()           # the response is cut: scalwsd sees the close
            conn.send(response(500, [("Content-Type", "text/plain"),
                                     ("Content-Length", "21")],
                               b"Internal Server Error", END_KEEP_FLAG))
        # the body's rest, if the application did not read it all
        while not conn.body_done:
            conn.take_body()
            conn.fill()
        if conn.chunks:
            conn.chunks = []
        return True
    except Closed:
        return False


class Stop(Exception):
    """TERM or INT while waiting for work."""


def serve(app, lsock):
    stop = []
    idle = [True]

    def on_stop(signo, frame):
        stop.append(signo)
        if idle[0]:
            raise Stop()         # select() would be restarted, not ended
        # else: the request in hand finishes first

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    lsock.setblocking(False)
    # epoll itself, not selectors: one poll and a dict lookup per ready
    # connection, without the selectors module's wrapping of every event
    # (docs/benchmarks/2026-12-05-apps-bridge-cost-notes.md)
    ep = select.epoll()
    lfd = lsock.fileno()
    ep.register(lfd, select.EPOLLIN)
    conns = {}
    try:
        while not stop:
            idle[0] = True
            events = ep.poll(1.0)
            idle[0] = False
            for fd, _ in events:
                if fd == lfd:
                    try:
                        s, _ = lsock.accept()
                    except (BlockingIOError, InterruptedError):
                        continue
                    s.setblocking(True)
                    conns[s.fileno()] = Connection(s)
                    ep.register(s.fileno(), select.EPOLLIN)
                    continue
                conn = conns.get(fd)
                if conn is not None and not serve_ready(app, conn):
                    ep.unregister(fd)
                    del conns[fd]
                    conn.sock.close()
    except Stop:
        pass
    finally:
        idle[0] = False
        for conn in conns.values():
            conn.sock.close()
        ep.close()
        lsock.close()
    return 0
