"""
An HTTP/1.1 origin for the body filter tests (sub_filter, gunzip) that
chooses how its body reaches the proxy: in pieces split at given offsets,
byte by byte, gzipped, or gzipped and then broken. One thread per
connection, "Connection: close" on every response. Bodies are registered
by name (Origin.bodies); routes:

  /split/K/NAME     body NAME: its first K bytes, a pause, the rest
  /bytes/NAME       body NAME one byte at a time, a short pause between
  /slow/K/NAME      its first K bytes, a pause of SLOW seconds, the rest
  /plain/NAME       body NAME in one write
  /gz/NAME          body NAME gzipped, with Content-Encoding: gzip
                    (whatever the request's Accept-Encoding)
  /ae/NAME          gzipped as /gz when the request accepts gzip, else plain
  /gzsplit/K/NAME   the gzipped body split at K, with a pause
  /gzbad/NAME       gzipped, with bytes in the middle of the deflate data
                    changed (a corrupt stream)
  /gzcut/NAME       gzipped, the last half cut off (Content-Length as sent)
  /gz2/NAME         gzipped as two gzip members (each half of the body)

Each response is text/html (or ?type=T) with Content-Length, an ETag and a
Last-Modified. The headers of the last request are kept (last_headers).
"""
import gzip
import socket
import threading
import time

PAUSE = 0.02
SLOW = 0.6
LAST_MODIFIED = "Mon, 02 Jan 2023 03:04:05 GMT"


class Origin:
    def __init__(self):
        self.bodies = {}
        self.last_headers = {}
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.addr = "127.0.0.1:%d" % self.port
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.running = False
        self.sock.close()

    def _accept(self):
        while self.running:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            c.settimeout(5)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            buf = b""
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d:
                    return
                buf += d
            head = buf.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
            target = head[0].split(" ")[1]
            headers = {}
            for line in head[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            self.last_headers = headers
            self._route(c, target, headers)
        except OSError:
            pass
        finally:
            c.close()

    def _route(self, c, target, headers):
        path, _, query = target.partition("?")
        args = dict(kv.partition("=")[::2] for kv in query.split("&") if kv)
        parts = path.strip("/").split("/")
        kind, name = parts[0], parts[-1]
        body = self.bodies[name]
        encoding = None
        if kind in ("gz", "gzsplit", "gzbad", "gzcut") or (
                kind == "ae" and "gzip" in headers.get("accept-encoding", "")):
            body = gzip.compress(body, mtime=0)
            encoding = "gzip"
        if kind == "gz2":
            half = len(body) // 2
            body = gzip.compress(body[:half], mtime=0) + gzip.compress(body[half:], mtime=0)
            encoding = "gzip"
        if kind == "gzbad":
            mid = len(body) // 2
            body = body[:mid] + bytes(b ^ 0x5a for b in body[mid:mid + 8]) + body[mid + 8:]
        if kind == "gzcut":
            body = body[:len(body) // 2]
        fields = ["HTTP/1.1 200 OK", "Content-Type: %s" % args.get("type", "text/html"),
                  "Content-Length: %d" % len(body), 'ETag: "origin-etag"',
                  "Last-Modified: " + LAST_MODIFIED, "Connection: close"]
        if encoding:
            fields.append("Content-Encoding: " + encoding)
        c.sendall(("\r\n".join(fields) + "\r\n\r\n").encode())
        if kind in ("split", "gzsplit", "slow"):
            k = int(parts[1])
            c.sendall(body[:k])
            time.sleep(SLOW if kind == "slow" else PAUSE)
            c.sendall(body[k:])
        elif kind == "bytes":
            for i in range(len(body)):
                c.sendall(body[i:i + 1])
                time.sleep(0.002)
        else:
            c.sendall(body)
