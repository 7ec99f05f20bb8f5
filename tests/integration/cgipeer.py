"""A fake uwsgi or SCGI server on a raw socket, for the tests of the wire
formats and of bad replies: it reads each request whole (the uwsgi packet
or the SCGI netstring, then CONTENT_LENGTH bytes of body), keeps what it
read, parsed, and answers with the bytes it is given (or a function of the
request), then closes. Every socket operation is bounded."""
import socket
import struct
import threading

import swsharness as h


def parse_uwsgi(head):
    """(modifier1, modifier2, [(name, value)]) of a whole uwsgi packet
    header + variables; asserts the framing is exact."""
    m1, size, m2 = struct.unpack("<BHB", head[:4])
    data, pairs, at = head[4:], [], 0
    assert len(data) == size, (len(data), size)
    while at < size:
        (n,) = struct.unpack("<H", data[at:at + 2])
        name = data[at + 2:at + 2 + n]
        at += 2 + n
        (v,) = struct.unpack("<H", data[at:at + 2])
        value = data[at + 2:at + 2 + v]
        at += 2 + v
        assert at <= size, "a variable runs past the packet"
        pairs.append((name.decode("latin-1"), value.decode("latin-1")))
    return m1, m2, pairs


def parse_scgi(head):
    """[(name, value)] of a whole SCGI netstring; asserts its framing."""
    colon = head.index(b":")
    n = int(head[:colon])
    data = head[colon + 1:colon + 1 + n]
    assert head[colon + 1 + n:] == b",", head[colon + 1 + n:]
    items = data.split(b"\0")
    assert items[-1] == b"" and len(items) % 2 == 1, "not NUL-ended pairs"
    items = items[:-1]
    return [(items[i].decode("latin-1"), items[i + 1].decode("latin-1"))
            for i in range(0, len(items), 2)]


class Peer(threading.Thread):
    """proto "uwsgi" or "scgi". reply: bytes, or fn(vars, body) -> bytes;
    None: close without a word. requests: (head, vars, body) as read."""

    def __init__(self, proto):
        super().__init__(daemon=True)
        self.proto = proto
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.addr = "127.0.0.1:%d" % self.port
        self.reply = b""
        self.requests = []
        self.stopping = False
        self.start()

    def _read_exact(self, c, n, buf):
        while len(buf) < n:
            d = c.recv(65536)
            if not d:
                raise EOFError
            buf += d
        return buf

    def _read_request(self, c):
        buf = b""
        if self.proto == "uwsgi":
            buf = self._read_exact(c, 4, buf)
            size = struct.unpack("<H", buf[1:3])[0]
            buf = self._read_exact(c, 4 + size, buf)
            head = buf[:4 + size]
            pairs = parse_uwsgi(head)[2]
        else:
            while b":" not in buf:
                buf = self._read_exact(c, len(buf) + 1, buf)
            colon = buf.index(b":")
            end = colon + 1 + int(buf[:colon]) + 1
            buf = self._read_exact(c, end, buf)
            head = buf[:end]
            pairs = parse_scgi(head)
        env = dict(pairs)
        n = int(env.get("CONTENT_LENGTH") or 0)
        buf = self._read_exact(c, len(head) + n, buf)
        return head, pairs, buf[len(head):len(head) + n]

    def run(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with c:
                c.settimeout(h.NET_TIMEOUT)
                try:
                    head, pairs, body = self._read_request(c)
                except (EOFError, OSError, ValueError, AssertionError) as e:
                    self.requests.append((None, repr(e), None))
                    continue
                self.requests.append((head, pairs, body))
                reply = self.reply(dict(pairs), body) if callable(self.reply) else self.reply
                try:
                    if reply:
                        c.sendall(reply)
                except OSError:
                    pass

    def stop(self):
        self.stopping = True
        self.join(2)
        self.sock.close()
