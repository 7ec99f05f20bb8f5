"""HTTP/3 connections: half-open handshakes bounded (quic_max_handshakes,
quic_max_handshakes_per_address, a Retry first past half of them) and
timed out (ssl_handshake_timeout), a client that goes silent cut at the
idle timeout without holding others up, connection migration (a NAT
rebinding, a new client address with path validation in the middle of a
download), 0-RTT (off by default, marked, 425 for unsafe methods, a
replay refused, tickets keyed by ssl_session_ticket_key), and HTTP/3 and
QPACK errors answered with their codes. Floods are made of a real client's Initial protected again under
new connection IDs (quicinitial.py), so that each is a new connection the
server answers with a full handshake flight."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import h3client
import quicinitial
import tlsutil as t
from test_http3 import GTLS, h3get, _initial_from_client, log_lines

pytestmark = pytest.mark.skipif(GTLS is None, reason="gtlsclient (ngtcp2-client) is missing")

BODY = os.urandom(300000)
FILES = {"html/hello.txt": b"Hello, HTTP/3!\n", "html/slow.bin": BODY}


def flood(port, initial, count):
    """count new connections' Initials from one UDP socket; returns the
    socket (the server's answers wait there)."""
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    dlen = initial[5]
    for _ in range(count):
        u.sendto(quicinitial.with_new_dcid(initial, os.urandom(dlen)), ("127.0.0.1", port))
    return u


def answers(u, quiet=0.5):
    """The datagrams that came to u until it was quiet for `quiet` s."""
    got = []
    u.settimeout(quiet)
    try:
        while True:
            got.append(u.recvfrom(65536)[0])
    except socket.timeout:
        pass
    return got


def server_scids(datagrams):
    """The server's connection IDs in the long-header packets answered:
    one per connection it keeps (a Retry's ID is not kept)."""
    ids = set()
    for d in datagrams:
        if quicinitial.packet_type(d) in ("initial", "handshake"):
            n = d[5]
            ids.add(d[7 + n:7 + n + d[6 + n]])
    return ids


needs_crypto = pytest.mark.skipif(quicinitial.MISSING is not None,
                                  reason=str(quicinitial.MISSING))


@needs_crypto
def test_flood_of_initials_gets_retry(sws, pki):
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        quic_max_handshakes 8;
    """)
    initial = _initial_from_client(s.port)
    u = flood(s.port, initial, 40)
    try:
        got = answers(u)
    finally:
        u.close()
    kinds = [quicinitial.packet_type(d) for d in got]
    # half of quic_max_handshakes got a handshake, the others a Retry
    assert len(server_scids(got)) == 4, kinds
    assert kinds.count("retry") == 36, kinds
    # a real client goes through a Retry and is served
    r = h3get(s.port, "/hello.txt")
    assert r.status() == 200, r.out[-3000:]
    assert re.search(r"type=Retry", r.out)
    assert s.alive()


@needs_crypto
def test_handshakes_per_address_and_timeout(sws, pki):
    """Two half-open handshakes from 127.0.0.1 at most: more get a Retry,
    and a client proven by one waits until the half-open ones time out
    (ssl_handshake_timeout 1s), then is served."""
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        quic_max_handshakes_per_address 2;
        ssl_handshake_timeout 1s;
    """)
    initial = _initial_from_client(s.port)
    u = flood(s.port, initial, 10)
    start = time.monotonic()
    try:
        got = answers(u, quiet=0.3)
        kinds = [quicinitial.packet_type(d) for d in got]
        assert len(server_scids(got)) == 2, kinds
        assert kinds.count("retry") == 8, kinds
        r = h3get(s.port, "/hello.txt", timeout=20)
        took = time.monotonic() - start
        assert r.status() == 200, r.out[-3000:]
        # it could not have been before the half-open ones went
        assert took >= 0.9
        # they went at the handshake timeout, and their flights stopped
        log = s.error_log()
        assert log.count("timed out (QUIC handshake)") == 2, log[-2000:]
        answers(u, quiet=0.1)
        assert answers(u, quiet=0.5) == []
    finally:
        u.close()


def test_silent_client_cut_at_idle_timeout(sws, pki):
    """A client stops in the middle of a download (SIGSTOP: no more
    acknowledgements): the server drops it at its idle timeout
    (keepalive_timeout 1s), logs the request, and serves others meanwhile."""
    s = t.launch(sws, pki, files=FILES, keepalive="1s", http="""
    log_format h3 "$request $status $body_bytes_sent";
    access_log @TMP@/h3.log h3;
""", server="""
        listen 127.0.0.1:@PORT@ quic;
        location = /slow.bin { limit_rate 100k; }
    """)
    d = tempfile.mkdtemp(prefix="swsh3")
    p = subprocess.Popen([GTLS, "-q", "--timeout=30s", "--download", d, "127.0.0.1",
                          str(s.port), "https://localhost:%d/slow.bin" % s.port],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.6)
        p.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # others are served while it is silent
        r = h3get(s.port, "/hello.txt")
        assert r.status() == 200
        lines = log_lines(s, want=2, timeout=8)
        took = time.monotonic() - stopped
        log = s.error_log()
        assert "timed out (QUIC idle timeout)" in log, log[-2000:]
        assert took < 6
        cut = [x for x in lines if x.startswith("GET /slow.bin")]
        assert cut, lines
        sent = int(cut[0].split()[-1])
        assert 0 < sent < len(BODY)
    finally:
        p.send_signal(signal.SIGCONT)
        p.kill()
        p.wait()
        subprocess.run(["rm", "-rf", d])


@pytest.mark.parametrize("nat", [True, False], ids=["nat-rebinding", "new-address"])
def test_migration_during_download(sws, pki, nat):
    """The client moves to another local port 0.3 s after the handshake:
    a migration it starts itself with path validation, in the middle of a
    3 s download; or a NAT rebinding (it just sends from there): the
    server validates the new path, and the connection and the download go
    on."""
    s = t.launch(sws, pki, files=FILES, http="""
    log_format h3 "$remote_port $request $status $body_bytes_sent";
    access_log @TMP@/h3.log h3;
""", server="""
        listen 127.0.0.1:@PORT@ quic;
        location = /slow.bin { limit_rate 100k; }
    """)
    # (A rebound gtlsclient ignores what comes to its old port and sends
    # nothing until it has something to send, where a NAT would keep the
    # client acknowledging: so here its request goes 0.3 s after the
    # rebinding, from the new port, while the server still knows the old.)
    extra = (["--change-local-addr=300ms", "--nat-rebinding", "--delay-stream=600ms"] if nat
             else ["--change-local-addr=300ms"])
    r = h3get(s.port, "/slow.bin", timeout=30, extra=extra)
    assert r.status() == 200, r.out[-3000:]
    assert r.bodies.get("slow.bin") == BODY
    assert r.out.count("QUIC handshake has completed") == 1
    # the client did move, and the server validated its new path
    m = re.search(r"Local address is now \[127\.0\.0\.1\]:(\d+)", r.out)
    assert m, r.out[-3000:]
    assert re.search(r"frm rx \d+ 1RTT PATH_CHALLENGE", r.out), r.out[-3000:]
    # the request is logged with the address it ended on, as by nginx
    assert log_lines(s, want=1)[0] == "%s GET /slow.bin HTTP/3.0 200 %d" % (m.group(1),
                                                                            len(BODY))


# ---- 0-RTT ----

EARLY_LOG = """
    log_format early "$request $status $ssl_early_data";
    access_log @TMP@/early.log early;
"""


def resume(port, d, path="/hello.txt", method=None, data=None):
    """gtlsclient keeping its TLS session and the server's transport
    parameters in directory d: the first run stores them, the next ones
    resume and send their requests in 0-RTT."""
    return h3get(port, path, method=method, data=data,
                 extra=["--session-file", str(d / "sess"), "--tp-file", str(d / "tp")])


def early_log(srv, want):
    return log_lines(srv, name="early.log", want=want)


class Relay:
    """A UDP relay on 127.0.0.1 in front of the server's port that keeps
    what the client sent, in order (a thread; stop() ends it)."""

    def __init__(self, port):
        import threading
        self.server = ("127.0.0.1", port)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.connect(self.server)
        self.port = self.front.getsockname()[1]
        self.sent = []              # (datagram, whether the server had answered yet)
        self.answered = False
        self.client = None
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import select
        while self.running:
            ready, _, _ = select.select([self.front, self.back], [], [], 0.1)
            for s in ready:
                if s is self.front:
                    data, self.client = self.front.recvfrom(65536)
                    self.sent.append((data, self.answered))
                    self.back.send(data)
                else:
                    data = self.back.recv(65536)
                    self.answered = True
                    if self.client:
                        self.front.sendto(data, self.client)

    def first_flight(self):
        """What the client sent before the server said anything."""
        return [d for d, answered in self.sent if not answered]

    def stop(self, quiet=0.3):
        """After quiet seconds without a datagram (the client's last ones,
        its CONNECTION_CLOSE, are passed on)."""
        n = -1
        while n != len(self.sent):
            n = len(self.sent)
            time.sleep(quiet)
        self.running = False
        self.thread.join(2)
        self.front.close()
        self.back.close()


def test_0rtt_off_by_default(sws, pki, tmp_path):
    """Without ssl_early_data a resuming client's 0-RTT is refused: it
    sends its request again after the handshake."""
    s = t.launch(sws, pki, files=FILES, http=EARLY_LOG,
                 server="        listen 127.0.0.1:@PORT@ quic;\n")
    assert resume(s.port, tmp_path).status() == 200
    r = resume(s.port, tmp_path)
    assert r.status() == 200 and r.bodies.get("hello.txt") == FILES["html/hello.txt"]
    assert "type=0RTT" in r.out             # it tried
    assert early_log(s, 2) == ["GET /hello.txt HTTP/3.0 200 -"] * 2


def test_0rtt_requests(sws, pki, tmp_path):
    """ssl_early_data on: a resumed client's request is served from its
    0-RTT packets, marked ($ssl_early_data 1); an unsafe method there gets
    425 Too Early (RFC 8470), as in TLS early data over TCP."""
    s = t.launch(sws, pki, files=FILES, http=EARLY_LOG, server="""
        listen 127.0.0.1:@PORT@ quic;
        ssl_early_data on;
        location = /post { return 200 posted; }
    """)
    assert resume(s.port, tmp_path).status() == 200
    r = resume(s.port, tmp_path)
    assert r.status() == 200 and r.bodies.get("hello.txt") == FILES["html/hello.txt"]
    r = resume(s.port, tmp_path, "/post", method="POST", data=b"x=1")
    assert r.status() == 425, r.out[-3000:]
    assert early_log(s, 3) == ["GET /hello.txt HTTP/3.0 200 -", "GET /hello.txt HTTP/3.0 200 1",
                               "POST /post HTTP/3.0 425 1"]
    # a full handshake's requests are not early
    r = h3get(s.port, "/post", method="POST", data=b"x=1")
    assert r.status() == 200
    assert early_log(s, 4)[3] == "POST /post HTTP/3.0 200 -"


def test_0rtt_replay_refused(sws, pki, tmp_path):
    """The first flight of a 0-RTT connection (its Initial and 0-RTT
    packets), sent again from elsewhere: the server makes a connection of
    it, but its early data is refused, so the request is not served twice."""
    s = t.launch(sws, pki, files=FILES, http=EARLY_LOG, server="""
        listen 127.0.0.1:@PORT@ quic;
        ssl_early_data on;
    """)
    assert resume(s.port, tmp_path).status() == 200
    relay = Relay(s.port)
    try:
        r = resume(relay.port, tmp_path)
    finally:
        relay.stop()
    assert r.status() == 200
    assert early_log(s, 2)[1] == "GET /hello.txt HTTP/3.0 200 1"
    flight = relay.first_flight()
    assert any(quicinitial.packet_type(d) == "initial" for d in flight)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for d in flight:
            u.sendto(d, ("127.0.0.1", s.port))
        got = answers(u)
    finally:
        u.close()
    assert got, "the replayed Initial was not answered"
    time.sleep(0.3)
    assert len(early_log(s, 3, )) == 2, early_log(s, 3)
    assert "QUIC 0-RTT refused: the ClientHello was seen before" in s.error_log()


def test_0rtt_ticket_key(sws, pki, tmp_path):
    """ssl_session_ticket_key: a ticket of one server is good for 0-RTT on
    another with the same key file, not on one whose limits differ (the
    client's remembered transport parameters would be wrong: RFC 9000
    7.4.1), nor on one without the file."""
    keyfile = tmp_path / "ticket.key"
    keyfile.write_bytes(os.urandom(80))
    servers = []
    for extra in ("ssl_session_ticket_key %s;" % keyfile,
                  "ssl_session_ticket_key %s;" % keyfile,
                  "ssl_session_ticket_key %s; http3_max_concurrent_streams 50;" % keyfile,
                  ""):
        servers.append(t.launch(sws, pki, files=FILES, http=EARLY_LOG, server="""
        listen 127.0.0.1:@PORT@ quic;
        ssl_early_data on;
        %s
    """ % extra))
    a, b, other_limits, no_key = servers
    d = tmp_path / "client"
    d.mkdir()
    assert resume(a.port, d).status() == 200
    assert resume(b.port, d).status() == 200
    assert early_log(b, 1) == ["GET /hello.txt HTTP/3.0 200 1"]
    for srv in (other_limits, no_key):
        e = tmp_path / ("c%d" % srv.port)
        e.mkdir()
        for f in ("sess", "tp"):
            (e / f).write_bytes((d / f).read_bytes())
        assert resume(srv.port, e).status() == 200
        assert early_log(srv, 1) == ["GET /hello.txt HTTP/3.0 200 -"]


# ---- protocol errors ----

# Bytes on a request stream (h3load --raw) and what the server must answer:
# the connection closed with the error of RFC 9114 / RFC 9204.
FRAME_ERRORS = [
    # DATA before HEADERS (RFC 9114 4.1): H3_FRAME_UNEXPECTED
    ("0003616263", "closed by the server: application error 0x105"),
    # SETTINGS on a request stream (7.2.4)
    ("0400", "closed by the server: application error 0x105"),
    # HTTP/2's PING frame type, reserved (7.2.8)
    ("0600", "closed by the server: application error 0x105"),
    # a HEADERS frame cut short by the end of the stream (7.1): H3_FRAME_ERROR
    ("01100000", "closed by the server: application error 0x106"),
    # a field line of a static table index past its end (RFC 9204 3.1, 6):
    # QPACK_DECOMPRESSION_FAILED
    ("01040000ff25", "closed by the server: application error 0x200"),
]


@pytest.mark.skipif(h3client.h3load_missing() is not None,
                    reason=str(h3client.h3load_missing()))
def test_protocol_errors(sws, pki):
    s = t.launch(sws, pki, files=FILES, server="        listen 127.0.0.1:@PORT@ quic;\n")
    url = "https://127.0.0.1:%d/hello.txt" % s.port
    for raw, error in FRAME_ERRORS:
        r = h3client.h3load(url, "-n", "1", "-c", "1", "--raw", raw, print_headers=False,
                            timeout=10)
        assert error in r.summary["error"], (raw, r.summary)
    # a malformed request (a HEADERS of :method alone, RFC 9114 4.1.2): a
    # stream error, H3_MESSAGE_ERROR; the connection serves on
    r = h3client.h3load(url, "-n", "3", "-c", "1", "--raw", "01030000d1",
                        print_headers=False, timeout=10)
    assert "raw stream was reset by the server: error 0x10e" in r.summary["error"], r.summary
    assert r.summary["status"]["2xx"] == 3
    assert s.alive()


def test_config_errors(tmp_path, pki):
    import swsharness as h
    crt, key = pki.chain("localhost", "ec")
    cases = [
        ("quic_max_handshakes 0;", "quic_max_handshakes and quic_max_handshakes_per_address "
                                   "must be 1 or more"),
        ("quic_max_handshakes_per_address 0;", "must be 1 or more"),
        ("quic_max_handshakes many;", "invalid"),
        ("ssl_session_ticket_key @TMP@/none.key;", "none.key"),
    ]
    for i, (directive, message) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        conf = t.TLS_TEMPLATE.replace(
            "@SERVER@", "        listen 127.0.0.1:@PORT@ quic;\n        %s\n@SERVER@" % directive)
        rc, out, _ = h.start_expect_failure(d, conf=conf, cert=crt, key=key, listen="")
        assert rc not in (None, 0), directive
        assert message in out, (directive, out[-2000:])
