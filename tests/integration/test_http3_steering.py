"""QUIC datagrams reach the worker that owns their connection (the QUIC
slot in the connection ID, steered by the program of the socket group:
eBPF, or classic BPF with "quic_steering cbpf"), so that connections
survive a reload and the adaptive runtime adding and retiring workers.

Where a datagram lands is seen in the kernel: with every worker stopped
(SIGSTOP), the receive queue of one socket of the group grows
(/proc/net/udp), and /proc/PID/fd says whose socket it is."""
import hashlib
import os
import re
import signal
import socket
import threading
import time

import pytest

import swsharness as h
import tlsutil as t
from test_http3 import GTLS, h3get

pytestmark = [
    pytest.mark.skipif(GTLS is None, reason="gtlsclient (ngtcp2-client) is missing"),
    pytest.mark.skipif(os.geteuid() != 0, reason="BPF steering needs the master as root"),
]

BIG = os.urandom(1536 * 1024 + 5)
FILES = {"html/big.bin": BIG, "html/hello.txt": b"hello\n"}
HTTP = ('    log_format steer "$pid $request_uri $status $body_bytes_sent";\n'
        '    access_log @TMP@/h3.log steer;\n')
# 1.5 MiB at 400 KB/s: a download of about 4 s
SERVER = """
        listen 127.0.0.1:@PORT@ quic;
        location = /slow.bin { alias @TMP@/html/big.bin; limit_rate 400k; }
        location = /slower.bin { alias @TMP@/html/big.bin; limit_rate 150k; }
"""
STARTED = re.compile(r"started worker process (\d+) \(worker (\d+), QUIC slot (\d+)\)")


def launch(sws, pki, main="", workers=2, **kw):
    s = t.launch(sws, pki, files=FILES, server=SERVER, http=HTTP, main=main,
                 workers=workers, loglevel="notice", **kw)
    return s


def slots(s):
    """{pid: slot} of the workers started so far."""
    return {int(m.group(1)): int(m.group(3)) for m in STARTED.finditer(s.error_log())}


def udp_queues(port):
    """{inode: bytes queued} of the UDP sockets bound to 127.0.0.1:port."""
    want = "0100007F:%04X" % port
    found = {}
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == want:
                found[fields[9]] = int(fields[4].split(":")[1], 16)
    return found


def socket_inodes(pid):
    found = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            found.add(link[8:-1])
    return found


def stopped(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


def landing(s, datagram, pids):
    """The pid whose socket gets datagram (sent from a new port), all
    workers stopped meanwhile; None when it landed on no worker's."""
    for p in pids:
        os.kill(p, signal.SIGSTOP)
    try:
        # stopped indeed (kill returns before): else one reads it first
        assert h.wait_for(lambda: all(stopped(p) for p in pids), 3), pids
        before = udp_queues(s.port)
        c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        c.sendto(datagram, ("127.0.0.1", s.port))
        c.close()
        grown = []

        def arrived():
            now = udp_queues(s.port)
            grown[:] = [i for i, q in now.items() if q > before.get(i, 0)]
            return grown

        assert h.wait_for(arrived, 3), "the datagram reached no socket"
        for p in pids:
            if grown[0] in socket_inodes(p):
                return p
        return None
    finally:
        for p in pids:
            os.kill(p, signal.SIGCONT)


def short_packet(slot, magic=0x5c):
    return bytes([0x40 | 0x01, magic, slot >> 8, slot & 0xff]) + os.urandom(13) + b"x" * 40


def long_packet(slot):
    """A Handshake packet to a server ID of ours."""
    return (bytes([0xe0, 0, 0, 0, 1, 16, 0x5c, slot >> 8, slot & 0xff]) + os.urandom(13)
            + bytes([8]) + os.urandom(8) + b"y" * 60)


def initial_packet():
    """A client's first Initial: an ID of its own (8 random bytes)."""
    return bytes([0xc0, 0, 0, 0, 1, 8]) + os.urandom(8) + bytes([8]) + os.urandom(8) \
        + b"\0" * 1200


def workers_of(s):
    return {p: sl for p, sl in slots(s).items() if p in s.children()}


def check_steering(s):
    """Every datagram to a live slot's ID lands on that worker; a client's
    first Initial, an ID of no live slot and one not of our layout land
    on a running worker, spread over them."""
    live = workers_of(s)
    assert len(live) >= 2, (live, s.error_log(3000))
    pids = list(live)
    for pid, slot in live.items():
        for _ in range(3):
            assert landing(s, short_packet(slot), pids) == pid
        assert landing(s, long_packet(slot), pids) == pid
    seen = set()
    for _ in range(12):
        seen.add(landing(s, initial_packet(), pids))
    assert None not in seen and len(seen) >= 2, seen
    for dgram in (short_packet(999), short_packet(live[pids[0]], magic=0x11), b"\x40" * 5):
        assert landing(s, dgram, pids) in live


def download(port, path, out, key):
    try:
        out[key] = h3get(port, path, timeout=60, extra=["--timeout=30s"])
    except Exception as e:          # noqa: BLE001 (reported by the test)
        out[key] = e


def downloads(s, path, keys, out=None):
    """Downloads of path, one connection each, begun in threads: (results
    by key, threads)."""
    out = {} if out is None else out
    threads = [threading.Thread(target=download, args=(s.port, path, out, k)) for k in keys]
    for th in threads:
        th.start()
    return out, threads


def check_download(r, name="slow.bin"):
    assert not isinstance(r, Exception), r
    assert r.status() == 200 and r.rc == 0, r.out[-3000:]
    got = r.bodies.get(name, b"")
    assert len(got) == len(BIG) and hashlib.sha256(got).digest() == hashlib.sha256(BIG).digest()


def access_log(s):
    p = s.tmp / "h3.log"
    return [line.split() for line in p.read_text().splitlines()] if p.exists() else []


# ---------------------------------------------------------------- tests

def test_ebpf_steers_by_connection_id(sws, pki):
    s = launch(sws, pki)
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5), s.error_log(3000)
    assert "QUIC steering on 127.0.0.1:%d: eBPF" % s.port in s.error_log(), s.error_log(3000)
    assert sorted(workers_of(s).values()) == [0, 1]
    check_steering(s)


def test_connections_stay_on_their_worker(sws, pki):
    s = launch(sws, pki, workers=3)
    assert h.wait_for(lambda: len(workers_of(s)) == 3, 5)
    # 12 connections of 6 requests each: each is served by one worker, and
    # the connections are spread over the workers.
    results = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(
        i, h3get(s.port, *["/hello.txt?c=%d&r=%d" % (i, r) for r in range(6)], timeout=30)))
        for i in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    for i, r in results.items():
        assert r.rc == 0 and [x[0][1] for x in r.heads] == ["200"] * 6, r.out[-2000:]
    assert h.wait_for(lambda: len(access_log(s)) >= 72, 5)
    by_conn = {}
    for pid, uri, status, _ in access_log(s):
        by_conn.setdefault(uri.split("&")[0], set()).add(pid)
    assert len(by_conn) == 12 and all(len(p) == 1 for p in by_conn.values()), by_conn
    assert len(set().union(*by_conn.values())) >= 2, by_conn


def reload_during_download(s):
    """Downloads begun before a reload end intact, served by the old
    workers, which exit after them; new connections go to the new ones."""
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5)
    old = set(workers_of(s))
    out, threads = downloads(s, "/slow.bin", range(4))
    time.sleep(1.0)
    s.signal(signal.SIGHUP)
    assert h.wait_file_contains(s.error_log_path, "configuration reloaded", 10)
    assert h.wait_for(lambda: len(set(s.children()) - old) == 2, 5)
    # the old ones still serve their downloads: new connections go to the new
    r = h3get(s.port, "/hello.txt?after", timeout=20)
    assert r.status() == 200, r.out[-2000:]
    for th in threads:
        th.join(60)
    for i in range(4):
        check_download(out.get(i))
    assert h.wait_for(lambda: not (old & set(s.children())), 10), "the old workers stay"
    log = access_log(s)
    served = [int(x[0]) for x in log if x[1] == "/slow.bin"]
    assert len(served) == 4 and set(served) <= old, (served, old)
    after = [int(x[0]) for x in log if x[1] == "/hello.txt?after"]
    assert after and after[0] not in old
    text = s.error_log()
    assert "[alert]" not in text and "[crit]" not in text, text[-3000:]
    return set(s.children())


def test_reload_keeps_live_connections(sws, pki):
    s = launch(sws, pki)
    new = reload_during_download(s)
    # the new generation took new slots, and is steered like the first
    assert sorted(workers_of(s).values()) == [2, 3], s.error_log(3000)
    assert set(workers_of(s)) == new
    check_steering(s)


def test_classic_bpf_fallback(sws, pki):
    s = launch(sws, pki, main="quic_steering cbpf;")
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5)
    log = s.error_log()
    assert "QUIC steering on 127.0.0.1:%d: classic BPF" % s.port in log, log[-3000:]
    assert "eBPF" not in log
    check_steering(s)
    reload_during_download(s)
    check_steering(s)


def test_steering_off_is_the_kernel_hash(sws, pki):
    s = launch(sws, pki, main="quic_steering off;")
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5)
    assert ("QUIC steering on 127.0.0.1:%d: the kernel's hash" % s.port) in s.error_log()
    r = h3get(s.port, "/hello.txt")
    assert r.status() == 200


def test_quic_steering_bad_value(tmp_path):
    rc, out, _ = h.start_expect_failure(tmp_path, main="quic_steering ebpf;")
    assert rc not in (0, None)
    assert 'it must be one of "auto", "cbpf", "off"' in out, out


def heavy(port, stop, errors):
    """gzip level 9 of 200 KB per request over TCP: keeps a worker busy."""
    while not stop.is_set():
        try:
            with t.connect(port, verify=False) as c:
                c.sendall(h.request("GET", "/big.txt", headers=[("Accept-Encoding", "gzip"),
                                                                ("Connection", "close")]))
                while c.recv(65536):
                    pass
        except Exception as e:      # noqa: BLE001
            errors.append("heavy: %r" % e)


def test_adaptive_add_and_retire_keep_downloads(sws, pki):
    import base64
    files = dict(FILES)
    files["html/big.txt"] = base64.b64encode(os.urandom(150000))
    s = t.launch(sws, pki, files=files, server=SERVER, http=HTTP + "    gzip on; "
                 "gzip_comp_level 9; gzip_types text/plain;\n", loglevel="notice",
                 main="worker_processes_min 1;\nworker_processes_max 2;\n")
    assert h.wait_for(lambda: len(s.children()) == 1, 5)
    assert "QUIC steering on 127.0.0.1:%d: eBPF" % s.port in s.error_log()
    assert "keep worker_processes_max" not in s.error_log()
    first = set(s.children())
    # wave A: on the one worker, before a second is added
    out, wave_a = downloads(s, "/slower.bin", ["a0", "a1"])
    stop, errors = threading.Event(), []
    load = [threading.Thread(target=heavy, args=(s.port, stop, errors)) for _ in range(6)]
    for th in load:
        th.start()
    try:
        assert h.wait_for(lambda: len(s.children()) == 2, 30), s.error_log(3000)
        second = set(s.children()) - first
        # wave B: spread over both, some on the worker to be retired (the
        # pick is a hash of the addresses: all 10 on one, 1 in 1024)
        _, wave_b = downloads(s, "/slower.bin", ["b%d" % i for i in range(10)], out)
        time.sleep(0.5)
    finally:
        stop.set()
        for th in load:
            th.join(60)
    assert h.wait_file_contains(s.error_log_path, "retiring worker 1", 30), s.error_log(3000)
    for th in wave_a + wave_b:
        th.join(90)
    for key in ["a0", "a1"] + ["b%d" % i for i in range(10)]:
        check_download(out.get(key), "slower.bin")
    served = [int(x[0]) for x in access_log(s) if x[1] == "/slower.bin"]
    assert len(served) == 12
    # the retired worker served some of them to the end
    assert second & set(served), (served, second)
    assert h.wait_for(lambda: not (second & set(s.children())), 10)
    assert errors == [], errors[:3]
    text = s.error_log()
    assert "[alert]" not in text and "[crit]" not in text, text[-3000:]


def test_idle_connection_at_a_reload_gets_goaway_first(sws, pki):
    # A connection idle at the reload is not closed at once: it gets the
    # GOAWAY notice (the client then refuses its own later request on it,
    # RFC 9114 5.2: "ERR_CONN_CLOSING"), and the final GOAWAY and the end
    # come worker_shutdown_idle (3 s) later: only then does its old worker
    # exit.
    s = launch(sws, pki, main="worker_shutdown_idle 3s;")
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5)
    old = set(workers_of(s))
    result = {}
    th = threading.Thread(target=lambda: result.__setitem__("r", h3get(
        s.port, "/hello.txt?idle", timeout=30, extra=["--delay-stream=1500ms"])))
    th.start()
    time.sleep(0.8)                 # handshake done, the request not sent yet
    s.signal(signal.SIGHUP)
    start = time.monotonic()
    assert h.wait_for(lambda: not (old & set(s.children())), 10), "the old workers stay"
    took = time.monotonic() - start
    th.join(30)
    r = result["r"]
    assert "ERR_CONN_CLOSING" in r.out, r.out[-3000:]
    assert took >= 2.5, took


def test_quit_keeps_downloads_with_classic_bpf(sws, pki):
    # A graceful stop after a reload: the sockets of the first workers'
    # slots have no process any more. The master keeps the QUIC groups
    # until it exits (closed, they would move the last sockets into their
    # places, and the classic program, which steers by place, would send
    # the downloads' datagrams to the wrong worker).
    s = launch(sws, pki, main="quic_steering cbpf;")
    assert h.wait_for(lambda: len(workers_of(s)) == 2, 5)
    first = set(workers_of(s))
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: not (first & set(s.children()))
                      and len(s.children()) == 2, 10), s.error_log(3000)
    out, threads = downloads(s, "/slow.bin", range(4))
    time.sleep(1.0)
    s.signal(signal.SIGQUIT)
    for th in threads:
        th.join(60)
    for i in range(4):
        check_download(out.get(i))
    assert s.wait_exit(10) is not None
