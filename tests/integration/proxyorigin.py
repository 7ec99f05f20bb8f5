"""
A small HTTP/1.1 origin server for the proxy tests, on raw sockets so that
it can misbehave on purpose. One thread per connection; it counts the
connections it accepted and records every request it got.

Routes (the path decides what it does; the query is ignored unless said):
  /echo            200, JSON of the request: method, target, version,
                   headers (in order), body (latin-1)
  /len/N           N bytes with Content-Length
  /chunked/N       N bytes in chunks (of 1000 bytes, or ?size=S)
  /close/N         N bytes without length, then close
  /status/NNN      that status, small body (none for 204/304)
  /delay/MS        wait MS ms before the head (then like /echo)
  /delaybody/MS    the head at once, the body (5 bytes) after MS ms
  /cut/N           Content-Length N, N/2 bytes, close
  /cutchunked      one chunk, then close without the last chunk
  /interim         100 Continue and 103 Early Hints, then 200
  /interimmany/N   N 103 responses (header X-N: i), then 200
  /interimbad      a 103 with an invalid header line, then 200
  /interimfill     a 103 (2 kB Link) and a 7 kB final head in one write
  /notmod          304 with ETag
  /cond/V          200, body V, ETag "V", Last-Modified (a fixed date); 304 when
                   If-None-Match names "V" or If-Modified-Since is that date
  /head            Content-Length 1234 (the body only for GET)
  /headers         a response with hop-by-hop and hidden headers
  /fields?N=V&...  200 with the fields N: V of the query, in order (%-decoded)
  /redirect        302 with Location http://<Host>/<...>
  /ws              WebSocket: 101, then echo every frame back
  /drop            close without answering
  /garbage         an invalid status line
  /big/N           N bytes (pattern), written as fast as the socket takes
  /name            "name of the origin" (balancing tests)
  /hdr/V           body V with X-Value: V, Content-Type: text/x-V, ETag: "V"
  /hdr/N/V         the same, held until N such requests wait, then all at once
  /sse/N           N events 100 ms apart, chunked, flushed one by one
  /trailer         "abc", chunked, with a trailer field X-T: v
  /text/N          N bytes of text (text_body(N)), shaped by the query:
                   type=T ce=E cc=C expires=X etag=V lm=1 (headers),
                   chunked=1 (in chunks of 4096), pause=MS (between halves);
                   a HEAD gets the head alone
Every response carries "X-Origin: <name>".
"""
import base64
import hashlib
import json
import os
import socket
import threading

from swsharness import HeaderList
import time
import urllib.parse


def text_body(n):
    """n bytes of compressible text (numbered lines)."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += b"line %d: the quick brown fox jumps over the lazy dog\n" % i
        i += 1
    return bytes(out[:n])


def pattern(n):
    block = bytes(range(256)) * 64
    out = bytearray()
    while len(out) < n:
        out += block
    return bytes(out[:n])


class Request(HeaderList):
    def __init__(self, method, target, version, headers, body):
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body

    @property
    def path(self):
        return self.target.split("?", 1)[0]


class Origin:
    def __init__(self, name="origin", unix=None, keepalive=True, backlog=64, host="127.0.0.1",
                 port=0):
        self.name = name
        self.keepalive = keepalive
        self.accepted = 0
        self.requests = []
        self.errors = []
        self.lock = threading.Lock()
        self.stopping = False
        self.conns = []
        self.peers = []          # (address, port) of each accepted connection
        self.unix = unix
        self.fail = None        # None, or a status every request gets
        self.hang = False       # accept, read, never answer
        self.drop = False       # read the request, close without answering
        self.idle_close = None  # close a kept connection idle this long (s)
        self.read_delay = 0     # sleep between reads of a body (s): a slow server
        self.barriers = {}      # /hdr/N/V: N -> the threading.Barrier they wait at
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(unix)
            os.chmod(unix, 0o777)
            self.port = None
        else:
            self.host = host
            fam = socket.AF_INET6 if ":" in host else socket.AF_INET
            self.sock = socket.socket(fam, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind((host, port))
            self.port = self.sock.getsockname()[1]
        self.sock.listen(backlog)
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._accept_loop, daemon=True)
        self.thread.start()

    @property
    def addr(self):
        if self.unix:
            return "unix:%s" % self.unix
        if ":" in self.host:
            return "[%s]:%d" % (self.host, self.port)
        return "%s:%d" % (self.host, self.port)

    def stop(self):
        self.stopping = True
        try:
            self.sock.close()
        except OSError:
            pass
        for c in list(self.conns):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                c.close()
            except OSError:
                pass
        self.thread.join(2)

    def last(self):
        with self.lock:
            return self.requests[-1] if self.requests else None

    def _accept_loop(self):
        while not self.stopping:
            try:
                c, peer = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.accepted += 1
                self.conns.append(c)
                self.peers.append(peer)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    # ---------------------------------------------------------- reading

    def _read_request(self, c, buf):
        while b"\r\n\r\n" not in buf:
            d = c.recv(65536)
            if not d:
                return None, buf
            buf += d
        i = buf.index(b"\r\n\r\n")
        head, buf = buf[:i].decode("latin-1"), buf[i + 4:]
        lines = head.split("\r\n")
        method, target, version = lines[0].split(" ")
        headers = []
        for ln in lines[1:]:
            k, v = ln.split(":", 1)
            headers.append((k, v.strip()))
        req = Request(method, target, version, headers, b"")
        te = req.header("transfer-encoding")
        if te and te.lower() == "chunked":
            body = b""
            while True:
                while b"\r\n" not in buf:
                    d = c.recv(65536)
                    if not d:
                        return None, buf
                    buf += d
                i = buf.index(b"\r\n")
                size = int(buf[:i].split(b";")[0], 16)
                buf = buf[i + 2:]
                if size == 0:
                    while b"\r\n" not in buf:
                        d = c.recv(65536)
                        if not d:
                            return None, buf
                        buf += d
                    buf = buf[buf.index(b"\r\n") + 2:]
                    break
                while len(buf) < size + 2:
                    d = c.recv(65536)
                    if not d:
                        return None, buf
                    buf += d
                body += buf[:size]
                buf = buf[size + 2:]
            req.body = body
            req.chunked = True
        else:
            n = int(req.header("content-length", "0"))
            while len(buf) < n:
                if self.read_delay:
                    time.sleep(self.read_delay)
                d = c.recv(65536)
                if not d:
                    return None, buf
                buf += d
            req.body, buf = buf[:n], buf[n:]
            req.chunked = False
        return req, buf

    # ---------------------------------------------------------- writing

    def _head(self, status, headers, reason="X"):
        lines = ["HTTP/1.1 %d %s" % (status, reason), "X-Origin: %s" % self.name]
        for k, v in headers:
            lines.append("%s: %s" % (k, v))
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send(self, c, status, body=b"", headers=(), close=False):
        h = list(headers)
        h.append(("Content-Length", str(len(body))))
        if close:
            h.append(("Connection", "close"))
        c.sendall(self._head(status, h) + body)

    def _serve(self, c):
        buf = b""
        try:
            c.settimeout(30)
            first = True
            while not self.stopping:
                if self.idle_close is not None and not first and not buf:
                    c.settimeout(self.idle_close)
                    try:
                        d = c.recv(65536)
                    except socket.timeout:
                        return              # idle too long: close, unasked
                    if not d:
                        return
                    buf += d
                    c.settimeout(30)
                first = False
                req, buf = self._read_request(c, buf)
                if req is None:
                    return
                with self.lock:
                    self.requests.append(req)
                if self.hang:
                    time.sleep(30)
                    return
                if self.drop:
                    return
                if self.fail:
                    self._send(c, self.fail, b"failing\n")
                    continue
                keep = self._route(c, req)
                if not keep or not self.keepalive:
                    return
        except (OSError, ValueError) as e:
            if not self.stopping:
                self.errors.append(repr(e))
        finally:
            try:
                c.close()
            except OSError:
                pass
            with self.lock:
                if c in self.conns:
                    self.conns.remove(c)

    def _route(self, c, req):
        p = req.path.split("/")[1:]
        r0 = p[0] if p else ""
        arg = p[1] if len(p) > 1 else ""
        closing = not self.keepalive
        if r0 == "echo" or r0 == "":
            body = json.dumps({
                "method": req.method, "target": req.target, "version": req.version,
                "headers": req.headers, "body": req.body.decode("latin-1"),
                "chunked": getattr(req, "chunked", False)}).encode()
            self._send(c, 200, body, [("Content-Type", "application/json")], close=closing)
        elif r0 == "name":
            self._send(c, 200, self.name.encode(), close=closing)
        elif r0 == "hdr":
            if len(p) > 2:
                # /hdr/N/V: held until N of them are waiting, then all at once
                with self.lock:
                    if arg not in self.barriers:
                        self.barriers[arg] = threading.Barrier(int(arg))
                    barrier = self.barriers[arg]
                barrier.wait(10)
                arg = p[2]
            self._send(c, 200, arg.encode(), [("X-Value", arg), ("Content-Type", "text/x-" + arg),
                                              ("ETag", '"%s"' % arg)], close=closing)
        elif r0 == "len":
            self._send(c, 200, pattern(int(arg)), close=closing)
        elif r0 == "chunked":
            n = int(arg)
            size = 1000
            if "size=" in req.target:
                size = int(req.target.split("size=")[1])
            data = pattern(n)
            out = self._head(200, [("Transfer-Encoding", "chunked")])
            for i in range(0, n, size):
                piece = data[i:i + size]
                out += b"%x\r\n" % len(piece) + piece + b"\r\n"
            out += b"0\r\n\r\n"
            c.sendall(out)
        elif r0 == "trailer":
            c.sendall(self._head(200, [("Transfer-Encoding", "chunked"), ("Trailer", "X-T")])
                      + b"3\r\nabc\r\n0\r\nX-T: v\r\n\r\n")
        elif r0 == "close":
            c.sendall(self._head(200, [("Connection", "close")]) + pattern(int(arg)))
            return False
        elif r0 == "status":
            st = int(arg)
            if st in (204, 304):
                c.sendall(self._head(st, []))
            else:
                self._send(c, st, b"status %d\n" % st, close=closing)
        elif r0 == "delay":
            time.sleep(int(arg) / 1000.0)
            self._send(c, 200, b"late\n", close=closing)
        elif r0 == "delaybody":
            c.sendall(self._head(200, [("Content-Length", "5")]))
            time.sleep(int(arg) / 1000.0)
            c.sendall(b"late\n")
        elif r0 == "cut":
            n = int(arg)
            c.sendall(self._head(200, [("Content-Length", str(n))]) + pattern(n // 2))
            time.sleep(0.05)
            return False
        elif r0 == "cutchunked":
            c.sendall(self._head(200, [("Transfer-Encoding", "chunked")])
                      + b"5\r\nhello\r\n")
            time.sleep(0.05)
            return False
        elif r0 == "interim":
            c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            c.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </x.css>; rel=preload\r\n\r\n")
            self._send(c, 200, b"final\n", close=closing)
        elif r0 == "interimmany":
            c.sendall(b"".join(b"HTTP/1.1 103 Early Hints\r\nX-N: %d\r\n\r\n" % i
                               for i in range(int(arg))))
            self._send(c, 200, b"final\n", close=closing)
        elif r0 == "interimfill":
            # a 103 and a final head too big to share the proxy's head
            # buffer (8k), in one write: the 103 is parsed before the
            # buffer has to make room
            link = "</%s.css>; rel=preload" % ("a" * 2000)
            c.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: " + link.encode() + b"\r\n\r\n"
                      + self._head(200, [("X-Fill", "p" * 7000), ("Content-Length", "6")])
                      + b"final\n")
        elif r0 == "interimbad":
            c.sendall(b"HTTP/1.1 103 Early Hints\r\nBad Name: x\r\n\r\n")
            self._send(c, 200, b"final\n", close=closing)
        elif r0 == "notmod":
            c.sendall(self._head(304, [("ETag", '"v1"')]))
        elif r0 == "cond":
            lm = "Sun, 06 Nov 1994 08:49:37 GMT"
            tag = '"%s"' % arg
            if tag in (req.header("If-None-Match") or "") or req.header("If-Modified-Since") == lm:
                c.sendall(self._head(304, [("ETag", tag), ("X-Revalidated", "yes")]))
            else:
                self._send(c, 200, arg.encode(), [("ETag", tag), ("Last-Modified", lm),
                                                  ("Content-Type", "text/plain")], close=closing)
        elif r0 == "head":
            h = self._head(200, [("Content-Length", "1234")])
            c.sendall(h if req.method == "HEAD" else h + pattern(1234))
        elif r0 == "headers":
            h = [("Connection", "X-Hop"), ("X-Hop", "secret"), ("Keep-Alive", "timeout=5"),
                 ("Server", "origin-server"), ("Date", "Mon, 01 Jan 2001 00:00:00 GMT"),
                 ("X-Pad", "pad"), ("X-Accel-Expires", "10"), ("X-Custom", "kept"),
                 ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Type", "text/x-test"),
                 ("ETag", '"e1"'), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                 ("Proxy-Connection", "keep-alive"), ("Trailer", "X-T")]
            self._send(c, 200, b"headers\n", h, close=closing)
        elif r0 == "fields":
            q = req.target.split("?", 1)[1] if "?" in req.target else ""
            self._send(c, 200, b"fields\n", urllib.parse.parse_qsl(q, keep_blank_values=True),
                       close=closing)
        elif r0 == "redirect":
            host = req.header("host", "")
            self._send(c, 302, b"", [("Location", "http://%s/two/x?y=1" % host)],
                       close=closing)
        elif r0 == "ws":
            self._websocket(c, req)
            return False
        elif r0 == "drop":
            return False
        elif r0 == "garbage":
            c.sendall(b"HTTP/x 200\r\n\r\n")
            return False
        elif r0 == "big":
            n = int(arg)
            c.sendall(self._head(200, [("Content-Length", str(n))]))
            data = pattern(n)
            view = memoryview(data)
            while view:
                k = c.send(view[:65536])
                view = view[k:]
        elif r0 == "sse":
            c.sendall(self._head(200, [("Content-Type", "text/event-stream"),
                                       ("Transfer-Encoding", "chunked")]))
            for i in range(int(arg)):
                ev = b"data: %d\n\n" % i
                c.sendall(b"%x\r\n" % len(ev) + ev + b"\r\n")
                time.sleep(0.1)
            c.sendall(b"0\r\n\r\n")
        elif r0 == "text":
            self._text(c, req, int(arg))
        else:
            self._send(c, 404, b"no such route\n", close=closing)
        return True

    def _text(self, c, req, n):
        from urllib.parse import parse_qs
        q = {k: v[0] for k, v in parse_qs(req.target.partition("?")[2]).items()}
        h = [("Content-Type", q.get("type", "text/html"))]
        for key, name in (("ce", "Content-Encoding"), ("cc", "Cache-Control"),
                          ("expires", "Expires"), ("etag", "ETag")):
            if key in q:
                h.append((name, q[key]))
        if "lm" in q:
            h.append(("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"))
        body = text_body(n)
        if req.method == "HEAD":              # the fields of the GET, no body
            c.sendall(self._head(200, h + [("Content-Length", str(n))]))
            return
        if q.get("chunked") == "1":
            c.sendall(self._head(200, h + [("Transfer-Encoding", "chunked")]))
            pieces = [body[i:i + 4096] for i in range(0, n, 4096)]
            half = len(pieces) // 2
            for i, piece in enumerate(pieces):
                if "pause" in q and i == half:
                    time.sleep(int(q["pause"]) / 1000.0)
                c.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
            c.sendall(b"0\r\n\r\n")
        else:
            c.sendall(self._head(200, h + [("Content-Length", str(n))]))
            if "pause" in q:
                c.sendall(body[:n // 2])
                time.sleep(int(q["pause"]) / 1000.0)
                c.sendall(body[n // 2:])
            else:
                c.sendall(body)

    # ---------------------------------------------------------- websocket

    def _websocket(self, c, req):
        key = req.header("sec-websocket-key", "")
        accept = base64.b64encode(hashlib.sha1(
            (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        c.sendall(self._head(101, [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                   ("Sec-WebSocket-Accept", accept)], "Switching Protocols"))
        buf = b""
        while True:
            frame, buf = read_ws_frame(c, buf)
            if frame is None:
                return
            opcode, payload = frame
            if opcode == 8:
                c.sendall(ws_frame(8, payload, mask=False))
                return
            c.sendall(ws_frame(opcode, payload, mask=False))


def ws_frame(opcode, payload, mask=True):
    head = bytes([0x80 | opcode])
    n = len(payload)
    mbit = 0x80 if mask else 0
    if n < 126:
        head += bytes([mbit | n])
    elif n < 65536:
        head += bytes([mbit | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([mbit | 127]) + n.to_bytes(8, "big")
    if mask:
        key = os.urandom(4)
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        head += key
    return head + payload


def read_ws_frame(c, buf):
    def need(n):
        nonlocal buf
        while len(buf) < n:
            d = c.recv(65536)
            if not d:
                return False
            buf += d
        return True
    if not need(2):
        return None, buf
    opcode = buf[0] & 0x0f
    masked = buf[1] & 0x80
    n = buf[1] & 0x7f
    off = 2
    if n == 126:
        if not need(4):
            return None, buf
        n = int.from_bytes(buf[2:4], "big")
        off = 4
    elif n == 127:
        if not need(10):
            return None, buf
        n = int.from_bytes(buf[2:10], "big")
        off = 10
    key = b""
    if masked:
        if not need(off + 4):
            return None, buf
        key = buf[off:off + 4]
        off += 4
    if not need(off + n):
        return None, buf
    payload = buf[off:off + n]
    if masked:
        payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
    return (opcode, payload), buf[off + n:]
