#!/usr/bin/python3
"""A recording origin: what a front end sends to an application.

Listens on 127.0.0.1:PORT (or a unix socket), answers every request with
"Hello, world!" (13 bytes, keep-alive, as bench/configs/apps/hello.js does)
and records, per connection, each recv() size, each request head as
received, and how the connection ended: the front end's FIN (eof), its
reset (rst), or still open when the recorder stops. On SIGTERM or SIGINT
it prints a JSON summary (and writes it to --out):

    connections, requests, requests per connection, the distinct request
    heads with their counts, bytes per request, recv() calls per request,
    requests per recv() (the front end's batching on one connection),
    the ends of the connections

Used to compare scalwsd's and nginx's requests to the same app byte for
byte (docs/benchmarks/2026-12-05-apps-cost-notes.md):

    bench/upstream_record.py --port 18090 --out scalwsd.json &
    ... point the front end's upstream at 127.0.0.1:18090, load it ...
    kill -TERM %1
"""

import argparse
import collections
import errno
import json
import os
import selectors
import signal
import socket
import sys

RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n"
            b"Hello, world!")
KEEP_HEADS = 20          # distinct heads kept verbatim


class Conn:
    def __init__(self, sock, n):
        self.sock = sock
        self.n = n
        self.buf = b""
        self.requests = 0
        self.recvs = 0
        self.end = "open"
        self.out = b""


class Recorder:
    def __init__(self):
        self.sel = selectors.DefaultSelector()
        self.conns = []
        self.heads = collections.Counter()
        self.recv_sizes = collections.Counter()
        self.per_recv = collections.Counter()      # complete requests per recv()
        self.bytes = 0

    def accept(self, lsock):
        while True:
            try:
                s, _ = lsock.accept()
            except BlockingIOError:
                return
            s.setblocking(False)
            c = Conn(s, len(self.conns))
            self.conns.append(c)
            self.sel.register(s, selectors.EVENT_READ, c)

    def close(self, c, end):
        c.end = end
        self.sel.unregister(c.sock)
        c.sock.close()

    def read(self, c):
        try:
            data = c.sock.recv(65536)
        except BlockingIOError:
            return
        except ConnectionResetError:
            self.close(c, "rst")
            return
        if not data:
            self.close(c, "eof" if not c.buf else "eof-mid-request")
            return
        c.recvs += 1
        self.recv_sizes[len(data)] += 1
        self.bytes += len(data)
        c.buf += data
        done = 0
        while True:
            i = c.buf.find(b"\r\n\r\n")
            if i < 0:
                break
            head, c.buf = c.buf[:i + 4], c.buf[i + 4:]
            # a GET of the bench has no body; a body would be a finding too
            if len(self.heads) < KEEP_HEADS or head in self.heads:
                self.heads[head] += 1
            else:
                self.heads[b"(other)"] += 1
            c.requests += 1
            done += 1
        self.per_recv[done] += 1
        if done:
            try:
                c.sock.sendall(RESPONSE * done)
            except OSError as e:
                self.close(c, "rst" if e.errno in (errno.ECONNRESET, errno.EPIPE) else "err")

    def summary(self):
        reqs = [c.requests for c in self.conns]
        total = sum(reqs)
        ends = collections.Counter(c.end for c in self.conns)
        return {
            "connections": len(self.conns),
            "requests": total,
            "requests_per_connection": {
                "min": min(reqs) if reqs else 0, "max": max(reqs) if reqs else 0,
                "mean": round(total / len(reqs), 1) if reqs else 0},
            "bytes_per_request": round(self.bytes / total, 1) if total else 0,
            "recv_calls_per_request": round(sum(c.recvs for c in self.conns) / total, 3)
            if total else 0,
            "requests_per_recv": {str(k): v for k, v in sorted(self.per_recv.items())},
            "connection_ends": dict(ends),
            "heads": [{"count": n, "bytes": len(h), "head": h.decode("latin-1")}
                      for h, n in self.heads.most_common()],
        }

    def run(self, lsock, out):
        lsock.setblocking(False)
        self.sel.register(lsock, selectors.EVENT_READ, None)
        stop = []
        signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
        signal.signal(signal.SIGINT, lambda *a: stop.append(1))
        print("ready", flush=True)
        while not stop:
            try:
                events = self.sel.select(0.5)
            except InterruptedError:
                continue
            for key, _ in events:
                if key.data is None:
                    self.accept(lsock)
                else:
                    self.read(key.data)
        text = json.dumps(self.summary(), indent=1)
        if out:
            with open(out, "w") as f:
                f.write(text + "\n")
        print(text, flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, help="TCP port on 127.0.0.1")
    p.add_argument("--unix", help="a unix socket path instead")
    p.add_argument("--out", help="also write the summary (JSON) here")
    a = p.parse_args()
    if a.unix:
        if os.path.exists(a.unix):
            os.unlink(a.unix)
        lsock = socket.socket(socket.AF_UNIX)
        lsock.bind(a.unix)
    elif a.port:
        lsock = socket.socket()
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(("127.0.0.1", a.port))
    else:
        p.error("--port or --unix")
    lsock.listen(1024)
    Recorder().run(lsock, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
