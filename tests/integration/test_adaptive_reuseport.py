"""The adaptive runtime with `reuseport` listening sockets (one socket per
worker): workers are added and retired under a load of new connections and
none is refused, reset or left waiting. Both ways the server has:
net.ipv4.tcp_migrate_req=1 (a retired worker's socket is closed and its
queue moves to the others) and 0 (a BPF program steers new connections to
the running workers' sockets; the retired worker drains its own). The
sysctl is set (as root) for the test and restored; a lock keeps the tests
that set it apart."""
import base64
import contextlib
import fcntl
import os
import signal
import socket
import threading
import time

import pytest

import swsharness as h

SYSCTL = "/proc/sys/net/ipv4/tcp_migrate_req"
LOCK = "/tmp/scalws-tcp_migrate_req.lock"
BODY = base64.b64encode(os.urandom(150000))
HTTP = "    gzip on; gzip_comp_level 9; gzip_types text/plain;\n"
MAIN = "worker_processes_min 1;\nworker_processes_max 2;\n"
SERVER = "        listen 127.0.0.1:@PORT2@ reuseport;\n"


@contextlib.contextmanager
def migrate_req(value):
    """tcp_migrate_req = value for the block (root), else skip when it is
    not that already."""
    if not os.path.exists(SYSCTL):
        pytest.skip("no net.ipv4.tcp_migrate_req (Linux < 5.14)")
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with open(SYSCTL) as f:
            old = f.read().strip()
        if old != str(value):
            if os.geteuid() != 0:
                pytest.skip("tcp_migrate_req is %s and setting it needs root" % old)
            with open(SYSCTL, "w") as f:
                f.write(str(value))
        try:
            yield
        finally:
            if old != str(value):
                with open(SYSCTL, "w") as f:
                    f.write(old)


def heavy(port, stop, errors):
    """gzip level 9 of 200 KB per request: keeps a worker busy."""
    while not stop.is_set():
        try:
            with h.Conn(port, timeout=20) as c:
                c.send(h.request("GET", "/big.txt", headers=[("Accept-Encoding", "gzip"),
                                                             ("Connection", "close")]))
                r = c.read_response()
            if r is None or r.status != 200:
                errors.append(repr(r))
        except Exception as e:
            errors.append("heavy: %r" % e)


def churn(port, stop, done, errors):
    """A new connection per request, a few a second: light enough for the
    workers to be retired meanwhile, and each one lands in the queue of
    some socket of the group. Refused, reset, or not answered in 10 s:
    an error."""
    while not stop.is_set():
        try:
            with h.Conn(port, timeout=10) as c:
                c.send(h.request("GET", "/respond", headers=[("Connection", "close")]))
                r = c.read_response()
            if r is None or r.status != 200 or r.body != b"Hello, world!":
                errors.append(repr(r))
            else:
                done.append(1)
        except Exception as e:
            errors.append("churn: %r" % e)
        time.sleep(0.05)


def scale_up_and_down(s, rounds=2):
    """Heavy load until a second worker runs, then light load until it is
    retired; new connections all along. Returns the requests done."""
    port = s.ports[1]
    stop_churn = threading.Event()
    done, errors = [], []
    churners = [threading.Thread(target=churn, args=(port, stop_churn, done, errors))
                for _ in range(2)]
    for t in churners:
        t.start()
    try:
        for rnd in range(rounds):
            stop = threading.Event()
            threads = [threading.Thread(target=heavy, args=(port, stop, errors))
                       for _ in range(6)]
            for t in threads:
                t.start()
            try:
                up = h.wait_for(lambda: len(s.children()) == 2, 30)
                assert up, "round %d: no second worker\n%s" % (rnd, s.error_log(3000))
                if rnd == 1:
                    # The second round with a reload at 2 workers: the new
                    # worker 0 must not keep a copy of worker 1's socket.
                    s.signal(signal.SIGHUP)
                    assert h.wait_for(lambda: "configuration reloaded" in s.error_log(), 10)
                n = len(done)
                assert h.wait_for(lambda: len(done) > n + 20, 20), "no progress"
            finally:
                stop.set()
                for t in threads:
                    t.join(60)
            down = h.wait_for(lambda: len(s.children()) == 1, 40)
            assert down, "round %d: not retired\n%s" % (rnd, s.error_log(3000))
            # New connections go on after the retirement: none must land
            # where nobody accepts (it would wait there until the master
            # saw it in two looks at the queues, and started a worker for
            # it: so the one worker stays alone).
            n = len(done)
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                assert len(s.children()) == 1, "a worker again after the retirement\n%s" \
                    % s.error_log(3000)
                time.sleep(0.05)
            assert h.wait_for(lambda: len(done) > n + 40, 30), "no progress after"
    finally:
        stop_churn.set()
        for t in churners:
            t.join(30)
    assert errors == [], errors[:5]
    return len(done)


def test_reuseport_steered_without_migration(sws):
    with migrate_req(0):
        s = sws(main=MAIN, http=HTTP, server=SERVER, ports=2, loglevel="notice",
                files={"html/big.txt": BODY})
        assert h.wait_for(lambda: len(s.children()) == 1, 5), s.children()
        assert "go to the running workers (BPF)" in s.error_log()
        scale_up_and_down(s)
    log = s.error_log()
    assert log.count("retiring worker 1") == 2, log[-3000:]
    assert log.count("starting worker 1") == 2, log[-3000:]
    assert "[alert]" not in log and "[crit]" not in log


def test_reuseport_closed_with_migration(sws):
    with migrate_req(1):
        s = sws(main=MAIN, http=HTTP, server=SERVER, ports=2, loglevel="notice",
                files={"html/big.txt": BODY})
        assert h.wait_for(lambda: len(s.children()) == 1, 5), s.children()
        assert "retired worker are closed (tcp_migrate_req" in s.error_log()
        scale_up_and_down(s)
    log = s.error_log()
    assert log.count("retiring worker 1") == 2, log[-3000:]
    assert "[alert]" not in log and "[crit]" not in log


def listeners(port):
    """Inodes of the TCP sockets listening on 127.0.0.1:port."""
    found = set()
    want = "0100007F:%04X" % port
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == want and fields[3] == "0A":
                found.add(fields[9])
    return found


def test_reuseport_sockets_follow_the_workers(sws):
    # With migration the master keeps a socket only for each running
    # worker; without it, one per possible worker (steered).
    with migrate_req(1):
        s = sws(main=MAIN, server=SERVER, ports=2, loglevel="notice")
        assert h.wait_for(lambda: len(s.children()) == 1, 5)
        assert len(listeners(s.ports[1])) == 1
    s.stop()
    with migrate_req(0):
        s = sws(main=MAIN, server=SERVER, ports=2, loglevel="notice")
        assert h.wait_for(lambda: len(s.children()) == 1, 5)
        assert len(listeners(s.ports[1])) == 2
        # Steered: every new connection goes to worker 0's socket, so all
        # are answered by the one worker (none waits in the other queue).
        for _ in range(50):
            r = h.exchange(s.ports[1], h.request("GET", "/respond"), timeout=5)
            assert r is not None and r.status == 200


def test_reuseport_queue_of_a_retired_socket_brings_a_worker(sws):
    # A connection that ends up in the queue of a socket nobody accepts
    # (here: put there by a program of the test's own, in place of the
    # server's) is the accept-queue signal: the master starts a worker.
    with migrate_req(0):
        s = sws(main=MAIN, server=SERVER, ports=2, loglevel="notice")
        assert h.wait_for(lambda: len(s.children()) == 1, 5)
        port = s.ports[1]
        # Join the group (same user, SO_REUSEPORT) and steer everything to
        # its second socket: that of the retired (never started) worker 1.
        me = socket.socket()
        me.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        me.bind(("127.0.0.1", port))
        me.listen(8)
        try:
            import struct
            SO_ATTACH_REUSEPORT_CBPF = 51
            code = struct.pack("HBBI", 0x06, 0, 0, 1)       # ret #1
            buf = __import__("ctypes").create_string_buffer(code)
            addr = __import__("ctypes").addressof(buf)
            prog = struct.pack("HL", 1, addr)
            me.setsockopt(socket.SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, prog)
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(h.request("GET", "/respond"))
            # Back to the server's steering, as after its next change: the
            # next worker started re-attaches its program.
            up = h.wait_for(lambda: len(s.children()) == 2, 10)
            assert up, s.error_log(3000)
            assert "connections waiting: starting worker 1" in s.error_log()
            c.settimeout(10)
            data = c.recv(4096)
            assert data.startswith(b"HTTP/1.1 200"), data
            c.close()
        finally:
            me.close()


def test_reload_and_upgrade_keep_the_steering(sws):
    # A reload (and a binary upgrade) keeps the sockets of the group and
    # steers them again; new connections all along find a worker.
    from test_upgrade import start_upgrade, stop_master
    with migrate_req(0):
        s = sws(main=MAIN, server=SERVER, ports=2, loglevel="notice")
        assert h.wait_for(lambda: len(s.children()) == 1, 5)
        stop = threading.Event()
        done, errors = [], []
        t = threading.Thread(target=churn, args=(s.ports[1], stop, done, errors))
        t.start()
        new = None
        try:
            for _ in range(3):
                s.signal(signal.SIGHUP)
                assert h.wait_file_contains(s.error_log_path, "configuration reloaded", 10)
                n = len(done)
                assert h.wait_for(lambda: len(done) > n + 10, 20), "no progress"
            new = start_upgrade(s, 1)
            n = len(done)
            assert h.wait_for(lambda: len(done) > n + 10, 20), "no progress"
            s.signal(signal.SIGWINCH)
            s.signal(signal.SIGQUIT)
            assert s.wait_exit(10) == 0, s.error_log()
            n = len(done)
            assert h.wait_for(lambda: len(done) > n + 40, 20), "no progress"
        finally:
            stop.set()
            t.join(30)
            if new:
                stop_master(new)
        assert errors == [], errors[:5]
        assert s.error_log().count("go to the running workers (BPF)") == 5, s.error_log()
