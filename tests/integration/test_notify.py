"""sd_notify: the master tells a Type=notify unit when it serves (READY=1),
reloads (RELOADING=1 with MONOTONIC_USEC, then READY=1) and stops
(STOPPING=1), with STATUS= lines. The test plays systemd: it binds the
AF_UNIX datagram socket itself and passes it as NOTIFY_SOCKET; the kernel
tells it which process sent each message (SO_PASSCRED)."""
import os
import signal
import socket
import struct
import tempfile
import time

import pytest

import swsharness as h

WAIT = 10.0     # bound on each message


class NotifySocket:
    """What systemd's manager does: one datagram per sd_notify() call."""

    def __init__(self, address):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind(address)
        self.address = address

    def env(self):
        a = self.address
        return "@" + a[1:].decode() if isinstance(a, bytes) else a

    def recv(self, timeout=WAIT):
        """(fields, sender pid), or (None, None) after timeout."""
        self.sock.settimeout(timeout)
        try:
            data, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
        except socket.timeout:
            return None, None
        pid = None
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", payload[:12])[0]
        fields = {}
        for line in data.decode().split("\n"):
            if line:
                k, _, v = line.partition("=")
                fields[k] = v
        return fields, pid

    def expect(self, key, timeout=WAIT):
        """The next message must carry key=...; messages before it with
        only STATUS= are skipped."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            m, pid = self.recv(max(left, 0.01))
            assert m is not None, "no %s= message within %.0f s" % (key, timeout)
            if key in m:
                return m, pid
            assert set(m) == {"STATUS"}, "expected %s=, got %r" % (key, m)

    def quiet(self, timeout=0.3):
        m, _ = self.recv(timeout)
        return m

    def close(self):
        self.sock.close()
        if isinstance(self.address, str):
            try:
                os.unlink(self.address)
            except OSError:
                pass


@pytest.fixture
def notify(monkeypatch):
    """A notify socket in a short directory (sun_path holds 108 bytes),
    exported as NOTIFY_SOCKET for the servers the test starts."""
    d = tempfile.mkdtemp(prefix="swsn")
    ns = NotifySocket(os.path.join(d, "notify"))
    monkeypatch.setenv("NOTIFY_SOCKET", ns.env())
    yield ns
    ns.close()
    os.rmdir(d)


def skip_without_libsystemd(s):
    if "built without libsystemd" in s.error_log():
        pytest.skip("scalwsd was built without libsystemd")


def ready(s, ns):
    m, pid = ns.expect("READY")
    skip_without_libsystemd(s)
    assert m["READY"] == "1" and pid == s.pid, (m, pid, s.pid)
    assert m["MAINPID"] == str(s.pid), m
    return m


def test_ready_after_listeners_and_workers(sws, notify):
    s = sws(workers=2)
    m = ready(s, notify)
    assert m["STATUS"] == "serving: 2 workers, generation 1", m
    # READY promises the listeners: a request right after it is served.
    r = h.curl(s.url("/respond"), fresh=True)
    assert r.status == 200 and r.body == b"Hello, world!"
    assert len(s.wait_children(2)) == 2
    # the workers say nothing
    assert notify.quiet() is None


def test_reload_reloading_then_ready(sws, notify):
    s = sws(workers=1, server='        location = /ver { respond 200 "v1"; }\n')
    ready(s, notify)

    s.write_conf(s.conf_text.replace('"v1"', '"v2"'))
    before = time.monotonic_ns() // 1000
    s.signal(signal.SIGHUP)
    m, pid = notify.expect("RELOADING")
    after = time.monotonic_ns() // 1000
    assert pid == s.pid and m["RELOADING"] == "1", (m, pid)
    # CLOCK_MONOTONIC, as systemd 253+ compares it with its own
    assert before <= int(m["MONOTONIC_USEC"]) <= after, (before, m, after)
    assert m["STATUS"] == "reloading the configuration", m
    m, pid = notify.expect("READY")
    assert pid == s.pid and m["STATUS"] == "serving: 1 worker, generation 2", m
    # the new workers serve; an old one may still take a connection while
    # it closes its listeners
    assert h.wait_for(lambda: h.curl(s.url("/ver"), fresh=True).body == b"v2", 5)


def test_failed_reload_is_ready_again(sws, notify):
    s = sws(workers=1, server='        location = /ver { respond 200 "v1"; }\n')
    ready(s, notify)

    s.write_conf(s.conf_text.replace("location = /ver", "location_typo = /ver"))
    s.signal(signal.SIGHUP)
    notify.expect("RELOADING")
    m, pid = notify.expect("READY")
    assert pid == s.pid, (pid, s.pid)
    assert m["STATUS"] == "reload failed: generation 1 keeps serving", m
    assert h.curl(s.url("/ver"), fresh=True).body == b"v1"
    assert s.alive()


@pytest.mark.parametrize("sig,status", [
    (signal.SIGQUIT, "gracefully shutting down"),
    (signal.SIGTERM, "shutting down"),
])
def test_stopping(sws, notify, sig, status):
    s = sws(workers=2)
    ready(s, notify)
    s.signal(sig)
    m, pid = notify.expect("STOPPING")
    assert pid == s.pid and m == {"STOPPING": "1", "STATUS": status}, (m, pid)
    assert s.wait_exit() == 0
    # exactly one STOPPING: the exit itself says nothing more
    assert notify.quiet() is None


def test_single_process(sws, notify):
    s = sws(conf=h.MAIN_TEMPLATE.replace("master_process on;", "master_process off;"))
    m = ready(s, notify)
    assert m["STATUS"] == "serving: single process", m
    assert h.curl(s.url("/respond"), fresh=True).status == 200
    s.signal(signal.SIGTERM)
    m, pid = notify.expect("STOPPING")
    assert pid == s.pid, (pid, s.pid)
    assert s.wait_exit() == 0


def test_abstract_socket(sws, monkeypatch):
    # "@name": the abstract namespace, as systemd may hand it out
    name = b"\0scalws-test-%d-%d" % (os.getpid(), time.monotonic_ns())
    ns = NotifySocket(name)
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", ns.env())
        s = sws(workers=1)
        ready(s, ns)
        s.signal(signal.SIGTERM)
        ns.expect("STOPPING")
    finally:
        ns.close()


def test_no_listener_on_the_socket(sws, tmp_path, monkeypatch):
    # systemd gone (or a stale variable): the server starts and serves; the
    # failure is a warning in the log, not a stop.
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    s = sws(workers=1)
    assert h.curl(s.url("/respond"), fresh=True).status == 200
    log = h.wait_file_contains(s.error_log_path, "sd_notify(\"READY=1\") failed")
    if log is None:
        skip_without_libsystemd(s)
    assert log is not None, s.error_log()
    s.signal(signal.SIGHUP)
    assert h.wait_file_contains(s.error_log_path, "configuration reloaded", 10)
    assert s.alive()
    assert h.curl(s.url("/respond"), fresh=True).status == 200


def test_without_notify_socket_nothing_is_sent(sws, notify, monkeypatch):
    # The variable unset: nothing reaches the socket the test still holds.
    monkeypatch.delenv("NOTIFY_SOCKET")
    s = sws(workers=1)
    s.signal(signal.SIGHUP)
    assert h.wait_file_contains(s.error_log_path, "configuration reloaded", 10)
    assert notify.quiet(0.5) is None
    assert "sd_notify" not in s.error_log()
