"""A binary upgrade (USR2, then QUIT to the old master; or the rollback:
HUP to the old master, QUIT to the new) keeps the live HTTP/3 connections
of both binaries' workers: the new master takes over the old one's QUIC
slots (sockets, BPF maps and the table of who holds which slot), gives
its workers free slots, and the datagrams of every connection go on
reaching the worker that owns it; first Initials go to the newest
binary's workers. With eBPF and with classic BPF steering."""
import os
import re
import signal
import threading
import time

import pytest

import swsharness as h
import tlsutil as t
from test_http3 import h3get
from test_http3_steering import (FILES, HTTP, SERVER, access_log, check_download, downloads,
                                 landing, pytestmark, short_packet)  # noqa: F401 (the skips)
from test_upgrade import oldbin, read_pid, start_upgrade, stop_master

STEERING = {"ebpf": ("", "eBPF"), "cbpf": ("quic_steering cbpf;", "classic BPF")}
STARTED = re.compile(r"(\d+)#0: started worker process \d+ \(worker \d+, QUIC slot (\d+)\)")


@pytest.fixture(params=sorted(STEERING))
def steering(request):
    return STEERING[request.param]


def launch(sws, pki, steering):
    s = t.launch(sws, pki, files=FILES, server=SERVER, http=HTTP, main=steering[0],
                 workers=2, loglevel="notice", keepalive="60s")
    s.wait_children(2)
    assert "QUIC steering on 127.0.0.1:%d: %s" % (s.port, steering[1]) in s.error_log(), \
        s.error_log(3000)
    return s


def idle_then_get(port, path, delay_ms, out, key):
    """A connection whose request goes out delay_ms after its handshake."""
    try:
        out[key] = h3get(port, path, timeout=60, extra=["--delay-stream=%dms" % delay_ms,
                                                        "--timeout=30s"])
    except Exception as e:          # noqa: BLE001 (reported by the test)
        out[key] = e


def slots_of(text, master):
    """The QUIC slots master gave its workers."""
    return [int(m.group(2)) for m in STARTED.finditer(text) if int(m.group(1)) == master]


def served_by(s, uri):
    return [int(x[0]) for x in access_log(s) if x[1] == uri]


def check_log(text):
    assert "[alert]" not in text and "[crit]" not in text and "[emerg]" not in text, \
        text[-3000:]


def test_upgrade_keeps_http3_connections(sws, pki, steering):
    upgrade_then_quit(launch(sws, pki, steering), steering[1])


def test_upgrade_to_other_steering(sws, pki):
    # the new binary's configuration steers with classic BPF, the old
    # one's with eBPF: the program attached last (the new master's) is the
    # one both masters update
    s = launch(sws, pki, STEERING["ebpf"])
    conf = s.conf_path.read_text()
    s.conf_path.write_text(conf.replace("daemon off;\n", "daemon off;\nquic_steering cbpf;\n"))
    upgrade_then_quit(s, STEERING["cbpf"][1])


def upgrade_then_quit(s, new_steering):
    """Downloads and idle connections begun on the old binary's workers
    complete across USR2 and QUIT to the old master; new connections go
    to the new binary's workers, which take the old ones' slots once they
    are free."""
    old_workers = set(s.children())
    new = None
    try:
        out, threads = downloads(s, "/slow.bin", range(3))
        idle = [threading.Thread(target=idle_then_get, args=(s.port, "/hello.txt?idle%d" % i,
                                                             2500, out, "idle%d" % i))
                for i in range(3)]
        for th in idle:
            th.start()
        time.sleep(0.8)             # every handshake done
        new = start_upgrade(s, 2)
        new_workers = set(h.children_of(new))
        assert "%d#0: QUIC steering on 127.0.0.1:%d: %s" % (new, s.port, new_steering) \
            in s.error_log(), s.error_log(3000)
        # new connections go to the new binary's workers
        for i in range(3):
            r = h3get(s.port, "/hello.txt?after%d" % i, timeout=20)
            assert r.status() == 200, r.out[-2000:]
        # the idle connections send their requests now, to the old workers
        for th in idle:
            th.join(30)
        for i in range(3):
            r = out.get("idle%d" % i)
            assert not isinstance(r, Exception), r
            assert r.rc == 0 and r.status() == 200, r.out[-3000:]
            assert r.bodies.get("hello.txt?idle%d" % i) == b"hello\n"
        # the old master goes while the downloads run
        s.signal(signal.SIGQUIT)
        for th in threads:
            th.join(60)
        for i in range(3):
            check_download(out.get(i))
        assert s.wait_exit(10) == 0, s.error_log(3000)
        assert not oldbin(s).exists() and read_pid(s.pid_path) == new
        log = access_log(s)
        assert h.wait_for(lambda: len(access_log(s)) >= 9, 5), log
        for i in range(3):
            assert set(served_by(s, "/hello.txt?idle%d" % i)) <= old_workers, log
            assert set(served_by(s, "/hello.txt?after%d" % i)) <= new_workers, log
        assert len(served_by(s, "/slow.bin")) == 3
        assert set(served_by(s, "/slow.bin")) <= old_workers, log
        # the old binary's slots are free: IDs that name them go to the new
        # workers (the old master's last word to the program), which go on
        # (their slots steered, TCP too)
        for slot in (0, 1):
            assert landing(s, short_packet(slot), list(new_workers)) in new_workers
        r = h3get(s.port, "/hello.txt?last", timeout=20)
        assert r.status() == 200, r.out[-2000:]
        tcp, _, _ = t.get(s.port, "/hello.txt", verify=False)
        assert tcp.status == 200 and tcp.body == b"hello\n", tcp
        text = s.error_log()
        check_log(text)
        # the new binary's workers took the slots the old ones did not hold
        assert sorted(slots_of(text, new)) == [2, 3], text[-3000:]
        # and the old ones' are free now: a reload of the new master takes them
        os.kill(new, signal.SIGHUP)
        assert h.wait_for(lambda: len(slots_of(s.error_log(), new)) == 4, 10), \
            s.error_log(3000)
        assert sorted(slots_of(s.error_log(), new)[2:]) == [0, 1], s.error_log(3000)
        assert h.wait_for(lambda: not (new_workers & set(h.children_of(new))), 10)
        r = h3get(s.port, "/hello.txt?reloaded", timeout=20)
        assert r.status() == 200, r.out[-2000:]
        check_log(s.error_log())
    finally:
        if new:
            stop_master(new)


def test_rollback_keeps_http3_connections(sws, pki, steering):
    s = launch(sws, pki, steering)
    old_workers = set(s.children())
    new = start_upgrade(s, 2)
    try:
        new_workers = set(h.children_of(new))
        # downloads on the new binary's workers
        out, threads = downloads(s, "/slow.bin", range(3))
        time.sleep(0.8)
        s.signal(signal.SIGWINCH)
        assert h.wait_for(lambda: not (old_workers & set(s.children())), 5), s.error_log(3000)
        # back: the old master's workers again (free slots), the new master goes
        s.signal(signal.SIGHUP)
        assert h.wait_for(lambda: len(set(s.children()) - {new}) == 2, 5), s.error_log(3000)
        again = set(s.children()) - {new}
        # the old binary's new workers: slots the new binary's do not hold
        assert sorted(slots_of(s.error_log(), s.pid)) == [0, 0, 1, 1], s.error_log(3000)
        os.kill(new, signal.SIGQUIT)
        for th in threads:
            th.join(60)
        for i in range(3):
            check_download(out.get(i))
        assert h.wait_for(lambda: new not in s.children(), 10), s.error_log(3000)
        assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), s.error_log(3000)
        new = None
        assert set(served_by(s, "/slow.bin")) <= new_workers, access_log(s)
        # new connections to the old binary's new workers
        for i in range(3):
            r = h3get(s.port, "/hello.txt?back%d" % i, timeout=20)
            assert r.status() == 200, r.out[-2000:]
        assert h.wait_for(lambda: len(served_by(s, "/hello.txt?back2")) == 1, 5)
        for i in range(3):
            assert set(served_by(s, "/hello.txt?back%d" % i)) <= again, access_log(s)
        check_log(s.error_log())
    finally:
        if new:
            stop_master(new)


def test_bad_quic_state_is_ignored(sws, pki, monkeypatch):
    # SCALWS_QUIC with a descriptor that is no table (0: /dev/null) and
    # garbage: both logged and ignored, a table of its own made
    monkeypatch.setenv("SCALWS_QUIC", "0;abc;")
    s = launch(sws, pki, STEERING["ebpf"])
    err = s.stderr()
    assert "descriptor 0 is not a table of QUIC slots, ignored" in err, err
    assert 'invalid descriptor in the SCALWS_QUIC environment variable: ";abc;"' in err, err
    r = h3get(s.port, "/hello.txt", timeout=20)
    assert r.status() == 200 and r.bodies.get("hello.txt") == b"hello\n", r.out[-2000:]
    assert sorted(slots_of(s.error_log(), s.pid)) == [0, 1]


def test_slots_given_back_without_steering(sws, pki):
    # the table of slots is kept without a program too: a worker's slot is
    # free again once it has exited, so reloads do not use up the slots
    s = t.launch(sws, pki, files=FILES, server=SERVER, http=HTTP, workers=2,
                 main="quic_steering off;", loglevel="notice")
    first = set(s.wait_children(2))
    for gen in range(2):
        s.signal(signal.SIGHUP)
        assert h.wait_for(lambda: len(set(s.children()) - first) == 2
                          and not (first & set(s.children())), 10), s.error_log(3000)
        first = set(s.children())
    assert slots_of(s.error_log(), s.pid) == [0, 1, 2, 3, 0, 1], s.error_log(3000)
