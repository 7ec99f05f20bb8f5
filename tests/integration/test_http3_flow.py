"""HTTP/3 responses under QUIC's flow and congestion control (issue 22):
several 1 MiB and larger downloads at once, on one connection and on
several, with and without GSO, all whole (SHA-256); packets that grow
past 1200 bytes with the path (MTU discovery); fairness between
connections (h3load's per-connection counts: none served far less than the
others); a client that stops reading (its window closed, h3load --stall)
holds nobody else up, costs the server a bounded amount of memory (not the
file) and is cut at the idle timeout (the access log says when and how much
went)."""
import hashlib
import os
import subprocess
import time

import pytest

import h3client
import swsharness as h
import tlsutil as t
from test_http3 import GTLS, h3get as gtls_get

pytestmark = pytest.mark.skipif(bool(h3client.h3load_missing()),
                                reason=h3client.h3load_missing() or "")

BIGS = [os.urandom(1024 * 1024 + 4099 * i + 7) for i in range(3)]
HUGE = os.urandom(16 * 1024 * 1024)
FILES = dict({"html/big%d.bin" % i: b for i, b in enumerate(BIGS)}, **{"html/huge.bin": HUGE})
IDLE = 3                                # keepalive_timeout: QUIC's idle timeout
SERVER = """
        listen 127.0.0.1:@PORT@ quic;
        quic_gso on;
        location /nogso/ { alias @TMP@/html/; }
"""
SERVER_NOGSO = """
        listen 127.0.0.1:@PORT@ quic;
"""
LOG = ('    log_format flow "$request_uri $status $body_bytes_sent $request_time";\n'
       '    access_log @TMP@/flow.log flow;\n')


def sha(b):
    return hashlib.sha256(b).hexdigest()


@pytest.fixture(scope="module")
def srv(sws_module, pki):
    return t.launch(sws_module, pki, files=FILES, server=SERVER, http=LOG,
                    keepalive="%ds" % IDLE)


def url(srv, path):
    return "https://127.0.0.1:%d%s" % (srv.port, path)


def start_h3load(argv_tail, out=None, gso=True):
    argv = [h3client.H3LOAD, "-k", "--json"]
    if out:
        argv += ["-o", str(out)]
    if not gso:
        argv.append("--no-gso")
    return subprocess.Popen(argv + [str(a) for a in argv_tail], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def worker_rss_kib(srv):
    (pid,) = srv.children()
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def flow_log(srv, path, want, timeout):
    """The access log's lines of path (uri status bytes seconds), once
    there are want of them."""
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        try:
            text = (srv.tmp / "flow.log").read_text()
        except OSError:
            text = ""
        lines = [ln.split() for ln in text.splitlines() if ln.startswith(path + " ")]
        if len(lines) >= want:
            return lines
        time.sleep(0.1)
    raise AssertionError("%d of %d log lines of %s: %r" % (len(lines), want, path, lines))


def test_concurrent_downloads_whole(srv, tmp_path):
    """Six connections at once (half without GSO, through a location
    without it too), each one file, each compared whole."""
    procs = []
    for i in range(6):
        n = i % 3
        path = "/big%d.bin" % n if i < 3 else "/nogso/big%d.bin" % n
        out = tmp_path / ("body%d" % i)
        procs.append((n, out, start_h3load(["-n", "1", "-c", "1", "-m", "1", "-t", "20",
                                            url(srv, path)], out=out, gso=i < 3)))
    for n, out, p in procs:
        p.communicate(timeout=30)
        assert p.returncode == 0, (out, p.returncode)
        assert sha(out.read_bytes()) == sha(BIGS[n]), out


@pytest.mark.skipif(GTLS is None, reason="gtlsclient (ngtcp2-client) is missing")
def test_streams_of_one_connection_whole(srv):
    """Three large responses multiplexed on one connection (another
    client: Debian's gtlsclient), each saved apart and compared whole."""
    r = gtls_get(srv.port, "/big0.bin", "/big1.bin", "/big2.bin", timeout=30)
    assert r.rc == 0, r.out[-2000:]
    for i in range(3):
        assert sha(r.bodies.get("big%d.bin" % i, b"")) == sha(BIGS[i]), i


def test_packets_grow_with_the_path(srv, tmp_path):
    """ngtcp2's path MTU discovery raises the packets from QUIC's 1200
    bytes to what the path takes (on loopback our 1452-byte ceiling, less
    ngtcp2's probe steps): the server gives its probes room. It never did
    before (every datagram of a download was 1200 bytes)."""
    r = h3client.h3get(url(srv, "/big1.bin"), body_to=tmp_path / "b", timeout=20)
    assert r.returncode == 0, r
    assert sha(r.body) == sha(BIGS[1])
    assert 1200 < r.summary["packets"]["largest_in"] <= 1452, r.summary["packets"]


def test_no_gso_server(sws, pki, tmp_path):
    """quic_gso off (the default): one datagram per entry, the same bytes."""
    s = t.launch(sws, pki, files={"html/big1.bin": BIGS[1]}, server=SERVER_NOGSO)
    r = h3client.h3get(url(s, "/big1.bin"), body_to=tmp_path / "b", timeout=30)
    assert r.returncode == 0, r
    assert sha(r.body) == sha(BIGS[1])


def test_fairness_between_connections(srv):
    """Sixteen connections downloading 1 MiB after 1 MiB for 2 s: each
    gets its turn (the server's writes and h3load's reads), so none is
    served far less than the busiest. When a connection wrote all its
    congestion window at once and h3load read one socket until it was
    empty, the busiest did 5 to 6 times as many as the least served (4 to
    21, 7 to 43, 6 to 31, 9 to 58 in four runs here); now 1.5 to 2 times
    typically, up to 4 times on a starved machine (14 to 60 the worst of
    about twenty runs). A check against gross unfairness: finer
    differences drown in a shared machine's noise."""
    r = h3client.h3load(url(srv, "/big0.bin"), "-c", "16", "-m", "1", "-d", "2",
                        print_headers=False, timeout=30)
    assert r.returncode == 0, r
    s = r.summary
    assert s["errored"] == 0 and s["failed"] == 0, s
    pc = s["per_connection"]
    assert pc["done_min"] >= 1, pc
    assert pc["done_max"] <= 4 * pc["done_min"] + 4, pc


def test_stalled_clients_hold_nobody_and_are_cut(srv, tmp_path):
    """Twelve connections whose client stops reading at once (128 KiB
    windows never given back) of a 16 MiB file: another client's 1 MiB
    download completes meanwhile, whole and well before the idle timeout;
    the worker's memory grows by far less than the file per stalled stream
    (what is unacknowledged is bounded by the window: freed once
    acknowledged); and each stalled request ends at the idle timeout, cut
    (the log: less than the file sent, IDLE seconds)."""
    warm = h3client.h3get(url(srv, "/big2.bin"), body_to=tmp_path / "warm", timeout=20)
    assert warm.returncode == 0, warm
    before = worker_rss_kib(srv)
    stalled = start_h3load(["--stall", "--window", "131072", "-c", "12", "-m", "1", "-n", "12",
                            "-t", "20", url(srv, "/huge.bin")])
    try:
        time.sleep(0.5)
        t0 = time.monotonic()
        r = h3client.h3get(url(srv, "/big1.bin"), body_to=tmp_path / "other", timeout=20)
        took = time.monotonic() - t0
        assert r.returncode == 0, r
        assert sha(r.body) == sha(BIGS[1])
        assert took < IDLE - 0.5, took
        grown = worker_rss_kib(srv) - before
        assert grown < 12 * 1024, "worker RSS grew by %d KiB" % grown
        assert stalled.poll() is None, "the stalled client ended early"
        lines = flow_log(srv, "/huge.bin", 12, IDLE + 6)
    finally:
        stalled.kill()
        stalled.communicate()
    for uri, status, sent, seconds in lines:
        assert status == "200"
        assert 0 < int(sent) < len(HUGE) // 4, sent
        assert IDLE - 0.5 <= float(seconds) <= IDLE + 3, seconds
