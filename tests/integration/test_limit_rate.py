"""limit_rate and limit_rate_after: the body paced over HTTP/1 and HTTP/2.

Timing is only ever checked against generous bounds: a paced response can
not be faster than its rate allows (a lower bound that load cannot break),
and an unpaced one is not slowed to anything like it.
"""
import os
import re
import subprocess
import time

import pytest

import swsharness as h

BODY = os.urandom(100 * 1024)

SERVER = """
        listen 127.0.0.1:@PORT2@ http2;
        location /slow/ { alias @TMP@/html/; limit_rate 20k; }
        location /after/ { alias @TMP@/html/; limit_rate 20k; limit_rate_after 80k; }
        location /var/ { alias @TMP@/html/; limit_rate $arg_rate; }
        location /fast/ { alias @TMP@/html/; }
        location /zero/ { alias @TMP@/html/; limit_rate 0; }
"""

LOG = """
    log_format lr '$request_uri $status $body_bytes_sent rate=$limit_rate';
    access_log @TMP@/lr.log lr;
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(ports=2, server=SERVER, http=LOG,
                      files={"html/b.bin": BODY, "html/small.txt": b"x" * 1000})


def timed(fn):
    t = time.monotonic()
    r = fn()
    return r, time.monotonic() - t


def test_http1_paced(srv):
    # 20 KB/s, a second's worth at once: 100 KB cannot take less than 4 s.
    r, took = timed(lambda: h.curl(srv.url("/slow/b.bin")))
    assert r.status == 200 and r.body == BODY, r
    assert took >= 3.0, took
    assert took < 30, took


def test_http2_paced(srv):
    url = "http://127.0.0.1:%d/slow/b.bin" % srv.ports[1]
    r, took = timed(lambda: h.curl(url, prior_knowledge=True))
    assert r.status == 200 and r.body == BODY and r.http_version == 3, r
    assert took >= 3.0, took
    assert took < 30, took


def test_http2_other_streams_not_paced(srv):
    # one connection, a paced stream and an unpaced one: the unpaced one
    # ends long before the other (nghttp stamps each frame it receives)
    base = "http://127.0.0.1:%d" % srv.ports[1]
    r = subprocess.run(["nghttp", "-n", "-v", base + "/slow/b.bin", base + "/fast/b.bin"],
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    ends = {}
    for m in re.finditer(r"\[\s*([0-9.]+)\] recv DATA frame <length=\d+, flags=0x01, "
                         r"stream_id=(\d+)>", r.stdout.decode("latin-1")):
        ends[int(m.group(2))] = float(m.group(1))
    assert len(ends) == 2, r.stdout[-2000:]
    slow, fast = ends[min(ends)], ends[max(ends)]     # requested in that order
    assert slow >= 3.0, ends
    assert fast < slow - 1.0, ends


def test_unlimited_is_not_paced(srv):
    for path in ("/fast/b.bin", "/zero/b.bin"):
        r, took = timed(lambda: h.curl(srv.url(path)))
        assert r.status == 200 and r.body == BODY, r
        assert took < 2.5, (path, took)


def test_limit_rate_after(srv):
    # 80 KB free, then 20 KB/s with a second's worth at once: fast.
    r, took = timed(lambda: h.curl(srv.url("/after/b.bin")))
    assert r.status == 200 and r.body == BODY, r
    assert took < 2.5, took


def test_limit_rate_from_a_variable(srv):
    r, took = timed(lambda: h.curl(srv.url("/var/b.bin?rate=25k")))
    assert r.status == 200 and r.body == BODY, r
    assert took >= 2.0, took
    r, took = timed(lambda: h.curl(srv.url("/var/b.bin")))        # empty: no limit
    assert r.status == 200 and r.body == BODY and took < 2.5, took
    assert h.wait_for(lambda: "/var/b.bin?rate=25k 200 %d rate=25600" % len(BODY)
                      in h._read(srv.tmp / "lr.log")), h._read(srv.tmp / "lr.log")


def test_invalid_variable_value_is_not_limited(srv):
    r, took = timed(lambda: h.curl(srv.url("/var/b.bin?rate=fast")))
    assert r.status == 200 and r.body == BODY and took < 2.5, took
    assert h.wait_for(lambda: 'invalid limit_rate "fast"' in srv.error_log())


def test_paced_connection_is_kept_alive_and_no_busy_loop(srv):
    # Two paced responses in a row on one connection, the second one
    # whole, and the worker's CPU time over the ~4 s far below it (a busy
    # loop would burn the whole time).
    pids = srv.children()
    cpu0 = sum(worker_cpu(p) for p in pids)
    with h.Conn(srv.port, timeout=30) as c:
        c.send(h.request("GET", "/slow/small.txt") + h.request("GET", "/slow/b.bin"))
        r1 = c.read_response()
        r2 = c.read_response()
    assert r1.status == 200 and r1.body == b"x" * 1000, r1
    assert r2.status == 200 and r2.body == BODY, r2
    cpu = sum(worker_cpu(p) for p in pids) - cpu0
    assert cpu < 1.0, cpu


def worker_cpu(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_client_gone_mid_paced_response(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/slow/b.bin"))
        assert c._fill()
    # the server goes on serving
    r = h.curl(srv.url("/fast/small.txt"))
    assert r.status == 200, r


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("limit_rate fast;", 'invalid value "fast" in "limit_rate" directive in'),
        ("limit_rate_after 1x;", 'invalid value "1x" in "limit_rate_after" directive in'),
        ("limit_rate 1k; limit_rate 2k;", '"limit_rate" directive is duplicate in'),
        ("limit_rate $nosuchvar;", 'unknown variable'),
        ("limit_rate;", 'invalid number of arguments in "limit_rate"'),
    ])
