"""A small DNS server for the resolver tests: UDP and TCP on one loopback
port, answering A and AAAA questions from a table the test changes while it
runs (dns.set(name, a=[...], aaaa=[...], ttl=N, rcode=N, mode=...)).

mode: "answer" (the records), "drop" (never answers), "truncate" (over UDP
an empty answer with the TC bit: the client must ask again over TCP, where
the records come), "malformed" (a header and question that match, records
cut short), "garbage" (the question's id, then random bytes). Every question is counted (dns.asked(name, "A"))."""
import os
import random
import socket
import struct
import threading

TYPES = {1: "A", 28: "AAAA"}


def _name(msg, off):
    labels = []
    while off < len(msg):
        n = msg[off]
        off += 1
        if n == 0:
            return ".".join(labels), off
        if n & 0xC0:
            raise ValueError("a pointer in a question")
        labels.append(msg[off:off + n].decode("ascii", "replace"))
        off += n
    raise ValueError("a name past the end")


def _encode_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        out += bytes([len(label)]) + label.encode()
    return out + b"\0"


class DnsServer:
    def __init__(self, host="127.0.0.1"):
        self.lock = threading.Lock()
        self.table = {}
        self.counts = {}
        for _ in range(50):          # a port free for both protocols
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind((host, 0))
            self.port = self.udp.getsockname()[1]
            self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                self.tcp.bind((host, self.port))
                break
            except OSError:
                self.udp.close()
                self.tcp.close()
        self.tcp.listen(16)
        self.addr = "%s:%d" % (host, self.port)
        self.stopped = False
        for target in (self._serve_udp, self._serve_tcp):
            threading.Thread(target=target, daemon=True).start()

    def set(self, name, a=(), aaaa=(), ttl=60, rcode=0, mode="answer"):
        with self.lock:
            self.table[name.lower().rstrip(".")] = dict(a=list(a), aaaa=list(aaaa), ttl=ttl,
                                                      rcode=rcode, mode=mode)

    def asked(self, name, qtype="A", proto=None):
        with self.lock:
            if proto:
                return self.counts.get((name.lower(), qtype, proto), 0)
            return sum(v for k, v in self.counts.items() if k[:2] == (name.lower(), qtype))

    def stop(self):
        self.stopped = True
        for s in (self.udp, self.tcp):
            try:
                s.close()
            except OSError:
                pass

    # ---- answers ----

    def answer(self, query, proto):
        """The reply to query (bytes), or None for no reply."""
        if len(query) < 12:
            return None
        qid, flags, qd = struct.unpack("!HHH", query[:6])
        if qd != 1:
            return None
        name, off = _name(query, 12)
        if off + 4 > len(query):
            return None
        qtype, qclass = struct.unpack("!HH", query[off:off + 4])
        question = query[12:off + 4]
        key = name.lower().rstrip(".")
        with self.lock:
            ck = (key, TYPES.get(qtype, str(qtype)), proto)
            self.counts[ck] = self.counts.get(ck, 0) + 1
            entry = self.table.get(key)
        if entry is None:
            entry = dict(a=[], aaaa=[], ttl=60, rcode=3, mode="answer")
        mode = entry["mode"]
        if mode == "drop":
            return None
        if mode == "garbage":
            return query[:2] + os.urandom(random.randrange(0, 200))
        rd = flags & 0x0100
        records = []
        if qtype == 1:
            records = [socket.inet_pton(socket.AF_INET, ip) for ip in entry["a"]]
        elif qtype == 28:
            records = [socket.inet_pton(socket.AF_INET6, ip) for ip in entry["aaaa"]]
        rcode = entry["rcode"]
        if rcode:
            records = []
        tc = 0
        if mode == "truncate" and proto == "udp":
            tc, records = 0x0200, []
        head = struct.pack("!HHHHHH", qid, 0x8000 | 0x0400 | rd | 0x0080 | tc | rcode, 1,
                           len(records), 0, 0)
        body = b""
        for rdata in records:
            body += struct.pack("!HHHIH", 0xC00C, qtype, qclass, entry["ttl"], len(rdata)) + rdata
        if mode == "malformed" and records:
            body = body[:len(body) - 3]          # the last record cut short
        return head + question + body

    def _serve_udp(self):
        while not self.stopped:
            try:
                data, peer = self.udp.recvfrom(4096)
            except OSError:
                return
            try:
                reply = self.answer(data, "udp")
            except (ValueError, UnicodeError, struct.error):
                reply = None
            if reply is not None:
                try:
                    self.udp.sendto(reply, peer)
                except OSError:
                    pass

    def _serve_tcp(self):
        while not self.stopped:
            try:
                c, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._tcp_client, args=(c,), daemon=True).start()

    def _tcp_client(self, c):
        c.settimeout(10)
        buf = b""
        try:
            while True:
                data = c.recv(4096)
                if not data:
                    return
                buf += data
                while len(buf) >= 2:
                    n = struct.unpack("!H", buf[:2])[0]
                    if len(buf) < 2 + n:
                        break
                    query, buf = buf[2:2 + n], buf[2 + n:]
                    try:
                        reply = self.answer(query, "tcp")
                    except (ValueError, UnicodeError, struct.error):
                        reply = None
                    if reply is not None:
                        c.sendall(struct.pack("!H", len(reply)) + reply)
        except OSError:
            pass
        finally:
            c.close()
