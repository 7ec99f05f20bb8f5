"""ASGI websockets over the bridge. A REQUEST with the UPGRADE flag and
"upgrade: websocket" becomes a websocket scope; the application's
websocket.accept is answered with a RESPONSE of 101 (scalwsd sends it to
the client and from then on tunnels the bytes of both sides), and the
connection then carries RFC 6455 frames between the client and here.

Back-pressure: received messages wait in a queue of at most
QUEUE_HIGH_WATER bytes, beyond which the connection stops being read;
send() waits while the transport's write buffer is full."""

import base64
import collections
import hashlib
import struct
import sys
import traceback

from . import _bridge

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_MESSAGE = 16 << 20
QUEUE_HIGH_WATER = 1 << 20
TEXT, BINARY, CLOSE, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA


def log(msg):
    sys.stderr.write("scalws_bridge: %s\n" % msg)
    sys.stderr.flush()


# websocket.send (and http.response.*) after the client went away: ASGI asks
# for a subclass of OSError, so that an application that only sends (a
# feed, a ticker) learns it and its task ends. The C extension's, which
# raises it for HTTP.
ClientDisconnected = _bridge.ClientDisconnected


def is_websocket(scope):
    for name, value in scope["headers"]:
        if name == b"upgrade":
            return value.lower() == b"websocket"
    return False


def unmask(data, key):
    n = len(data)
    if n == 0:
        return b""
    k = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(data, "big") ^ int.from_bytes(k, "big")).to_bytes(n, "big")


def frame(opcode, payload):
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x80 | opcode, 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, n)
    return head + payload


def close_frame(code, reason=""):
    return frame(CLOSE, struct.pack("!H", code) + reason.encode("utf-8")[:123])


class WebSocket:
    """One websocket: the application's receive() and send(), and the
    frames of the connection once it is accepted."""

    def __init__(self, conn, scope):
        self.conn = conn
        scope["type"] = "websocket"
        scope["scheme"] = "wss" if scope["scheme"] == "https" else "ws"
        scope.pop("method", None)
        self.key = b""
        protocols = []
        for name, value in scope["headers"]:
            if name == b"sec-websocket-key":
                self.key = value.strip()
            elif name == b"sec-websocket-protocol":
                protocols += [p.strip().decode("latin-1") for p in value.split(b",")
                              if p.strip()]
        scope["subprotocols"] = protocols
        self.scope = scope
        self.queue = collections.deque([{"type": "websocket.connect"}])
        self.queued = 0
        self.waiter = None
        self.state = "connecting"      # open, closing, closed
        self.buf = b""                 # the start of a frame not whole yet
        self.parts = None              # a long frame's pieces: [buf, data, ...]
        self.need = 0                  # ... until they make this many bytes
        self.fragments = None          # (opcode, [payloads]) of a message in pieces
        self.size = 0
        self.app_closed = False        # the application's websocket.close

    # -- the application's side

    async def run(self, app):
        try:
            await app(self.scope, self.receive, self.send)
        except ClientDisconnected:
            pass                        # the client went: nothing to tell it
        except BaseException as e:
            log("the application raised:\n" + traceback.format_exc().rstrip())
            if self.state == "connecting":
                self.refuse(500)
            elif self.state == "open":
                self.close(1011)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
        else:
            if self.state == "connecting":
                self.refuse(403)
            elif self.state == "open":
                self.close(1000)
        finally:
            self.conn.request_done(self)

    def wake(self):
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    def put(self, message, size=0):
        self.queue.append(message)
        self.queued += size
        if self.queued > QUEUE_HIGH_WATER:
            self.conn.pause_reading()
        self.wake()

    async def receive(self):
        while not self.queue:
            if self.state == "closed":
                return {"type": "websocket.disconnect", "code": 1006}
            self.waiter = self.conn.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        message = self.queue.popleft()
        size = len(message.get("bytes") or message.get("text") or "")
        self.queued -= size
        if self.queued <= QUEUE_HIGH_WATER:
            self.conn.resume_reading()
        return message

    async def send(self, message):
        kind = message["type"]
        conn = self.conn
        if kind == "websocket.accept":
            if self.state != "connecting":
                raise RuntimeError("websocket.accept out of place")
            accept = base64.b64encode(hashlib.sha1(self.key + GUID).digest())
            fields = [(b"upgrade", b"websocket"), (b"sec-websocket-accept", accept)]
            if message.get("subprotocol"):
                fields.append((b"sec-websocket-protocol",
                               message["subprotocol"].encode("latin-1")))
            fields += list(message.get("headers") or ())
            conn.write(_bridge.response(101, fields))
            self.state = "open"
            return
        if kind == "websocket.close":
            self.app_closed = True
            if self.state == "connecting":
                self.refuse(403)
            elif self.state == "open":
                self.close(message.get("code", 1000), message.get("reason") or "")
            return
        if kind != "websocket.send":
            raise RuntimeError("unexpected ASGI message %r" % kind)
        if self.state == "connecting":
            raise RuntimeError("websocket.send before websocket.accept")
        if self.state != "open":
            if self.app_closed:
                raise RuntimeError("websocket.send after websocket.close")
            raise ClientDisconnected("the websocket's client went away")
        if message.get("bytes") is not None:
            conn.write(frame(BINARY, message["bytes"]))
        else:
            conn.write(frame(TEXT, message["text"].encode("utf-8")))
        if conn.write_paused:
            await conn.drain()

    def refuse(self, status):
        """No accept: an HTTP answer instead of the 101."""
        self.conn.write(_bridge.response(status, [(b"content-length", b"0")], None, 0))
        self.state = "closed"
        self.conn.close_after_write()

    def close(self, code, reason=""):
        self.conn.write(close_frame(code, reason))
        self.state = "closed"
        self.conn.close_after_write()

    # -- the connection's side

    def lost(self):
        if self.state != "closed":
            self.state = "closed"
            self.put({"type": "websocket.disconnect", "code": 1006})

    def feed(self, data):
        """The client's frames (after the 101)."""
        if self.parts is not None:
            # a long frame comes in many reads: joined once, when whole
            # (not copied again with each read)
            self.parts.append(data)
            self.need -= len(data)
            if self.need > 0:
                return
            buf = b"".join(self.parts)
            self.parts = None
        else:
            buf = self.buf + data if self.buf else data
        at = 0
        need = 0
        while self.state == "open":
            if len(buf) - at < 2:
                break
            b0, b1 = buf[at], buf[at + 1]
            n = b1 & 0x7F
            p = at + 2
            if n == 126:
                if len(buf) - p < 2:
                    break
                (n,) = struct.unpack_from("!H", buf, p)
                p += 2
            elif n == 127:
                if len(buf) - p < 8:
                    break
                (n,) = struct.unpack_from("!Q", buf, p)
                p += 8
            if not b1 & 0x80 or b0 & 0x70 or n > MAX_MESSAGE:
                # unmasked (RFC 6455 5.1), reserved bits, or too big
                self.fail(1009 if n > MAX_MESSAGE else 1002)
                return
            if len(buf) - p < 4 + n:
                need = p + 4 + n - len(buf)
                break
            payload = unmask(buf[p + 4:p + 4 + n], buf[p:p + 4])
            at = p + 4 + n
            self.frame(b0 & 0x80, b0 & 0x0F, payload)
        self.buf = buf[at:]
        if need > 65536:
            self.parts = [self.buf]
            self.need = need
            self.buf = b""

    def fail(self, code):
        self.close(code)
        self.put({"type": "websocket.disconnect", "code": code})

    def frame(self, fin, opcode, payload):
        if opcode == CLOSE:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            self.conn.write(close_frame(1000 if code == 1005 else code))
            self.state = "closed"
            self.put({"type": "websocket.disconnect", "code": code})
            self.conn.close_after_write()
            return
        if opcode == PING:
            self.conn.write(frame(PONG, payload))
            return
        if opcode == PONG:
            return
        if opcode in (TEXT, BINARY):
            if self.fragments is not None:
                return self.fail(1002)
            if not fin:
                self.fragments = (opcode, [payload])
                self.size = len(payload)
                return
        elif opcode == 0 and self.fragments is not None:
            self.fragments[1].append(payload)
            self.size += len(payload)
            if self.size > MAX_MESSAGE:
                return self.fail(1009)
            if not fin:
                return
            opcode, parts = self.fragments
            self.fragments = None
            payload = b"".join(parts)
        else:
            return self.fail(1002)
        if opcode == TEXT:
            try:
                text = payload.decode("utf-8")
            except UnicodeDecodeError:
                return self.fail(1007)
            self.put({"type": "websocket.receive", "text": text}, len(text))
        else:
            self.put({"type": "websocket.receive", "bytes": payload}, len(payload))
