"""A fake bridge runner on a unix socket, for the tests of the framing:
it reads each request's frames (REQUEST, and BODY frames up to BODY_END
when the REQUEST says a body follows), decodes them as
docs/python-bridge.md describes, keeps them, and answers with the bytes it
is given (or a function of the request); then it closes, or with keep
waits for the next request on the same connection. Every socket
operation is bounded."""
import array
import os
import socket
import struct
import threading

REQUEST, BODY, BODY_END = 0x01, 0x02, 0x03
RESPONSE, DATA, END, FILE = 0x11, 0x12, 0x13, 0x14


def frame(kind, payload=b"", flags=0):
    return struct.pack(">BBHI", kind, flags, 0, len(payload)) + payload


def s16(b):
    if isinstance(b, str):
        b = b.encode("latin-1")
    return struct.pack(">H", len(b)) + b


def response(status, fields=(), body=b"", end=True, keep=True):
    payload = struct.pack(">HH", status, len(fields))
    for n, v in fields:
        payload += s16(n) + s16(v)
    out = frame(RESPONSE, payload)
    if body:
        out += frame(DATA, body)
    if end:
        out += frame(END, flags=1 if keep else 0)
    return out


def parse_request(payload):
    """The REQUEST payload as a dict; asserts its layout is exact."""
    major, minor, flags, zero, cport, sport, clen, nfields, zero2 = \
        struct.unpack(">BBBBHHQHH", payload[:20])
    assert zero == 0 and zero2 == 0
    at, strings = 20, []
    for _ in range(7):
        (n,) = struct.unpack(">H", payload[at:at + 2])
        strings.append(payload[at + 2:at + 2 + n].decode("latin-1"))
        at += 2 + n
    fields = []
    for _ in range(nfields):
        pair = []
        for _ in range(2):
            (n,) = struct.unpack(">H", payload[at:at + 2])
            pair.append(payload[at + 2:at + 2 + n].decode("latin-1"))
            at += 2 + n
        fields.append(tuple(pair))
    assert at == len(payload), "bytes after the last field"
    names = ("method", "path", "raw", "query", "client", "server", "host")
    r = dict(zip(names, strings))
    r.update(version=(major, minor), https=bool(flags & 1), client_port=cport,
             server_port=sport, content_length=None if clen == (1 << 64) - 1 else clen,
             fields=fields)
    return r


class Peer(threading.Thread):
    """reply: bytes, or fn(request) -> bytes; None: close without a word;
    (bytes, [fd ...]): the descriptors passed with the bytes (SCM_RIGHTS).
    requests: the decoded REQUESTs, each with "body" (bytes) and "pieces"
    (the BODY frames' count)."""

    def __init__(self, path, keep=False):
        super().__init__(daemon=True)
        self.path = path
        self.keep = keep
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o666)             # the workers may run as another user
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.reply = b""
        self.requests = []
        self.connections = 0
        self.stopping = False
        self.start()

    def stop(self):
        self.stopping = True
        self.join(5)
        self.sock.close()

    def run(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            c.settimeout(0.3)
            try:
                while not self.stopping:
                    try:
                        if not self.serve(c) or not self.keep:
                            break
                    except socket.timeout:
                        continue         # idle between requests: stop() may come
            except (OSError, AssertionError):
                pass
            finally:
                c.close()

    def read_frame(self, c, buf):
        while len(buf) < 8:
            d = c.recv(65536)
            if not d:
                return None, None, None, buf
            buf += d
        kind, flags, zero, n = struct.unpack(">BBHI", buf[:8])
        assert zero == 0
        while len(buf) < 8 + n:
            d = c.recv(65536)
            if not d:
                return None, None, None, buf
            buf += d
        return kind, flags, buf[8:8 + n], buf[8 + n:]

    def serve(self, c):
        kind, flags, payload, buf = self.read_frame(c, b"")
        if kind is None:
            return False
        assert kind == REQUEST, kind
        req = parse_request(payload)
        req["frame_flags"] = flags
        req["body"], req["pieces"] = b"", 0
        while flags & 1:
            kind, f, payload, buf = self.read_frame(c, buf)
            assert kind in (BODY, BODY_END), kind
            if kind == BODY_END:
                break
            req["body"] += payload
            req["pieces"] += 1
        self.requests.append(req)
        reply = self.reply(req) if callable(self.reply) else self.reply
        if reply is None:
            return False
        if isinstance(reply, tuple):
            # (bytes, descriptors): the descriptors passed with the bytes
            data, fds = reply
            n = c.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                    array.array("i", fds))])
            c.sendall(data[n:])
            return True
        c.sendall(reply)
        return True
