"""The adaptive runtime under bursts measured by wrk: from idle to 1,000
concurrent keep-alive connections, a second worker starts (within a
generous bound: the machine may be crowded), back to idle it is retired,
and wrk counts no error at all (connect, read, write, timeout, non-2xx),
round after round, for a bounded time. Then the accept-queue signal on its
own: connections that wait in the queue while no worker is busy bring a
worker."""
import base64
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

import swsharness as h

WRK = shutil.which("wrk")
CONNS = 1000
BURST = 8            # s of wrk per round
ROUNDS = 2
TIME_BOUND = 100     # s for all rounds: no round starts after it
# Each request costs the worker some CPU (gzip at level 9 of 24 KB): the
# connections keep it busy whatever the machine's load and wrk's share of
# the CPUs (a fixed response, nearly free, would leave it waiting for wrk).
BODY = base64.b64encode(os.urandom(18000))
HTTP = "    gzip on; gzip_comp_level 9; gzip_types text/plain;\n"


def nofile(n):
    """Raise our soft fd limit (the server and wrk inherit it)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n if hard == resource.RLIM_INFINITY else min(n, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def conf(listen_extra=""):
    return (h.MAIN_TEMPLATE
            .replace("worker_connections 1024", "worker_connections 4096")
            .replace("listen 127.0.0.1:@PORT@;", "listen 127.0.0.1:@PORT@%s;" % listen_extra))


def wrk_errors(out):
    """wrk's error counts: {connect, read, write, timeout, non2xx}."""
    errs = {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non2xx": 0}
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errs.update(connect=int(m.group(1)), read=int(m.group(2)),
                    write=int(m.group(3)), timeout=int(m.group(4)))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errs["non2xx"] = int(m.group(1))
    return errs


def burst_rounds(s, port):
    started = time.monotonic()
    rounds = 0
    while rounds < ROUNDS and time.monotonic() - started < TIME_BOUND:
        assert h.wait_for(lambda: len(s.children()) == 1, 60), \
            "round %d: not idle\n%s" % (rounds, s.error_log(3000))
        most = [0]
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                most[0] = max(most[0], len(s.children()))
                time.sleep(0.05)

        w = threading.Thread(target=watch)
        w.start()
        t0 = time.monotonic()
        try:
            p = subprocess.run([WRK, "-t2", "-c%d" % CONNS, "-d%ds" % BURST, "--timeout", "10s",
                                "-H", "Accept-Encoding: gzip",
                                "http://127.0.0.1:%d/big.txt" % port],
                               capture_output=True, text=True, timeout=BURST + 60)
        finally:
            stop.set()
            w.join(5)
        took = time.monotonic() - t0
        out = p.stdout + p.stderr
        assert p.returncode == 0, out
        assert re.search(r"(\d+) requests in", out), out
        assert int(re.search(r"(\d+) requests in", out).group(1)) > 0, out
        assert wrk_errors(out) == {"connect": 0, "read": 0, "write": 0, "timeout": 0,
                                   "non2xx": 0}, out
        # The bound: within the burst (8 s; the master looks every second).
        assert most[0] == 2, "round %d: no second worker in %.1f s of %d connections\n%s\n%s" \
            % (rounds, took, CONNS, out, s.error_log(3000))
        # Back to idle: back to one (three calm looks, then the drain).
        assert h.wait_for(lambda: len(s.children()) == 1, 60), \
            "round %d: not retired\n%s" % (rounds, s.error_log(3000))
        rounds += 1
    return rounds


@pytest.mark.skipif(WRK is None, reason="wrk is not installed")
@pytest.mark.parametrize("listen", ["", " reuseport"])
def test_bursts_of_1000_connections(sws, listen):
    if nofile(8192) < 2 * CONNS + 200:
        pytest.skip("the fd limit cannot be raised to %d" % (2 * CONNS + 200))
    s = sws(conf=conf(listen), main="worker_processes_min 1;\nworker_processes_max 2;\n",
            http=HTTP, files={"html/big.txt": BODY}, loglevel="notice", keepalive="60s")
    rounds = burst_rounds(s, s.port)
    assert rounds >= 2, "only %d rounds in %d s" % (rounds, TIME_BOUND)
    log = s.error_log()
    assert log.count("starting worker 1") >= rounds, log[-3000:]
    assert "[alert]" not in log and "[crit]" not in log, log[-3000:]


def test_accept_queue_alone_adds_a_worker(sws):
    # The only worker is stopped (SIGSTOP): it is not busy, it accepts
    # nothing, and connections wait in the queue of the shared socket. The
    # master sees them in two looks and starts worker 1, which serves them.
    s = sws(main="worker_processes_min 1;\nworker_processes_max 2;\n", loglevel="notice")
    kids = s.wait_children(1)
    assert len(kids) == 1
    os.kill(kids[0], signal.SIGSTOP)
    socks = []
    try:
        for _ in range(3):
            c = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            c.sendall(h.request("GET", "/respond", headers=[("Connection", "close")]))
            socks.append(c)
        up = h.wait_for(lambda: len(s.children()) == 2, 15)
        assert up, s.error_log(3000)
        for c in socks:
            c.settimeout(10)
            data = b""
            while True:
                b = c.recv(4096)
                if not b:
                    break
                data += b
            assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"Hello, world!"), data
        log = s.error_log()
        m = re.search(r"adaptive: 1 workers (\d+) % busy, (\d+) connections waiting: "
                      r"starting worker 1", log)
        assert m, log[-3000:]
        assert int(m.group(1)) <= 75 and int(m.group(2)) >= 1, m.group(0)
    finally:
        os.kill(kids[0], signal.SIGCONT)
        for c in socks:
            c.close()
