"""limit_req: request rates per key, shared by the workers, kept across reloads.

Rates are chosen so that nothing decays during a test (1r/m) unless the
test is about the decay or the delay, and every timing check is a bound
generous enough for a loaded machine.
"""
import signal
import subprocess
import threading
import time

import pytest

import swsharness as h

HTTP = """
    limit_req_zone $binary_remote_addr zone=one:64k rate=1r/m;
    limit_req_zone $arg_k zone=bykey:64k rate=1r/m;
    limit_req_zone $arg_k zone=fast:64k rate=2r/s sync;
    limit_req_zone $arg_k zone=tiny:32k rate=1r/m;
    limit_req_zone $server_name zone=srv:64k rate=1r/m;
    log_format lreq '$request_uri $status $limit_req_status $pid';
    access_log @TMP@/lreq.log lreq;
"""

SERVER = """
        listen 127.0.0.1:@PORT2@ reuseport;
        listen 127.0.0.1:@PORT3@ http2;
        location = /one { limit_req zone=one; respond 200 "one"; }
        location = /status { limit_req zone=bykey; limit_req_status 429; respond 200 "ok"; }
        location = /burst { limit_req zone=bykey burst=2 nodelay; respond 200 "ok"; }
        location = /delayed { limit_req zone=fast burst=3; respond 200 "ok"; }
        location = /delayn { limit_req zone=fast burst=3 delay=1; respond 200 "ok"; }
        location = /dry { limit_req zone=bykey; limit_req_dry_run on; respond 200 "ok"; }
        location = /two { limit_req zone=bykey burst=5 nodelay; limit_req zone=srv;
                          respond 200 "ok"; }
        location = /tiny { limit_req zone=tiny; respond 200 "ok"; }
        location = /ver { respond 200 "v1"; }
        location /file/ { alias @TMP@/html/; limit_req zone=bykey; }
"""


@pytest.fixture
def srv(sws):
    return sws(ports=3, workers=2, http=HTTP, server=SERVER, files={"html/f.txt": "file\n"})


def get(srv, path, port=None):
    return h.curl(srv.url(path, port=port), fresh=True)


def log(srv):
    return h._read(srv.tmp / "lreq.log")


def test_over_the_rate_is_refused(srv):
    assert get(srv, "/one").status == 200
    r = get(srv, "/one")
    assert r.status == 503, r
    assert h.wait_for(lambda: 'limiting requests, excess: 1.000 by zone "one", client: '
                      '127.0.0.1' in srv.error_log()), srv.error_log()


def test_status_and_keys_apart(srv):
    assert get(srv, "/status?k=a").status == 200
    assert get(srv, "/status?k=a").status == 429
    assert get(srv, "/status?k=b").status == 200       # another key
    # no key: not limited at all, and no verdict in $limit_req_status (as
    # nginx: the variable is not found, logged "-")
    for _ in range(3):
        assert get(srv, "/status").status == 200
    assert h.wait_for(lambda: log(srv).count("/status 200 - ") == 3), log(srv)
    assert "/status?k=b 200 PASSED " in log(srv)


def test_burst_nodelay(srv):
    t = time.monotonic()
    codes = [get(srv, "/burst?k=x").status for _ in range(4)]
    assert codes == [200, 200, 200, 503], codes
    assert time.monotonic() - t < 5


def concurrent(srv, paths):
    """The requests sent at once on connections of their own; each one's
    status and when its answer came. Each answer is read by a thread of its
    own: read in turn, an answer that came at once behind a delayed one on an
    earlier connection looked delayed too (the server's order is not the
    connections' order)."""
    conns = [h.Conn(srv.port, timeout=20) for _ in paths]
    out = [None] * len(conns)

    def read(i):
        r = conns[i].read_response()
        out[i] = (r.status, time.monotonic() - t0)

    readers = [threading.Thread(target=read, args=(i,)) for i in range(len(conns))]
    t0 = time.monotonic()
    for c, p in zip(conns, paths):
        c.send(h.request("GET", p))
    for t in readers:
        t.start()
    for t in readers:
        t.join(30)
    for c in conns:
        c.close()
    assert None not in out, out
    return out


def test_burst_is_delayed(srv):
    # 2r/s, burst=3: the third of three at once has an excess of 2, and
    # waits until it is back at 0: a second at 2 r/s.
    out = concurrent(srv, ["/delayed?k=d"] * 3)
    assert [s for s, _ in out] == [200, 200, 200], out
    assert max(t for _, t in out) >= 0.8, out
    assert max(t for _, t in out) < 10, out
    assert h.wait_for(lambda: "DELAYED" in log(srv)), log(srv)
    assert 'delaying requests' in srv.error_log()


def test_delay_threshold(srv):
    out = concurrent(srv, ["/delayn?k=n"] * 3)
    assert [s for s, _ in out] == [200, 200, 200], out
    times = sorted(t for _, t in out)
    assert times[1] < 0.45, out          # within delay=1: at once
    assert times[2] >= 0.4, out          # the second over it: 500 ms
    # over the burst (excess 4 > 3): refused at once
    out = concurrent(srv, ["/delayn?k=m"] * 5)
    assert sorted(s for s, _ in out) == [200, 200, 200, 200, 503], out


def test_delayed_over_http2(srv):
    # two streams of one HTTP/2 connection at once: the second waits 500 ms
    # (2r/s) while the first is answered
    base = "http://127.0.0.1:%d/delayed?k=h2&n=" % srv.ports[2]
    t = time.monotonic()
    r = subprocess.run(["nghttp", "-v", base + "1", base + "2"], capture_output=True,
                       timeout=30)
    took = time.monotonic() - t
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b":status: 200") == 2, r.stdout[-2000:]
    assert took >= 0.4, took
    assert h.wait_for(lambda: "/delayed?k=h2&n=2 200 DELAYED" in log(srv)
                      or "/delayed?k=h2&n=1 200 DELAYED" in log(srv)), log(srv)


def test_dry_run(srv):
    for _ in range(3):
        assert get(srv, "/dry?k=q").status == 200
    assert h.wait_for(lambda: "/dry?k=q 200 REJECTED_DRY_RUN" in log(srv)), log(srv)
    assert "limiting requests, dry run" in srv.error_log()


def test_two_limits_refused_by_one_counted_by_none(srv):
    assert get(srv, "/two?k=1").status == 200
    # srv (per server name) refuses now; bykey must not count these
    for _ in range(4):
        assert get(srv, "/two?k=1").status == 503
    # a fresh zone state for srv is not available, but bykey's burst is
    # untouched: /burst shares its zone (key "1" used once by /two)
    codes = [get(srv, "/burst?k=1").status for _ in range(3)]
    assert codes == [200, 200, 503], codes


def test_static_files_limited(srv):
    assert get(srv, "/file/f.txt?k=s").body == b"file\n"
    assert get(srv, "/file/f.txt?k=s").status == 503


def test_shared_by_two_workers(srv):
    # New connections to the reuseport socket spread over both workers;
    # one key, 1r/m: exactly one request passes whichever worker serves it.
    pids = set()
    codes = []
    deadline = time.monotonic() + 20
    while len(pids) < 2 and time.monotonic() < deadline:
        codes.append(get(srv, "/status?k=w", port=srv.ports[1]).status)
        assert h.wait_for(lambda: log(srv).count("/status?k=w ") == len(codes))
        pids = {line.split()[3] for line in log(srv).splitlines()
                if line.startswith("/status?k=w ")}
    assert len(pids) == 2, "one worker served everything: %r" % pids
    assert codes[0] == 200 and set(codes[1:]) == {429}, codes


def test_state_kept_across_reload(srv):
    assert get(srv, "/status?k=r").status == 200
    assert get(srv, "/status?k=r").status == 429
    srv.write_conf(srv.conf_text.replace('respond 200 "v1"', 'respond 200 "v2"'))
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: get(srv, "/ver").body == b"v2", 10), srv.error_log()
    # the new workers see the old state
    for _ in range(3):
        assert get(srv, "/status?k=r").status == 429


def test_full_zone_forgets_the_oldest(srv):
    # 32 KiB hold a few hundred keys: 1500 of them push the first ones out.
    handle = None
    import pycurl
    handle = pycurl.Curl()
    try:
        for i in range(1500):
            r = h.curl(srv.url("/tiny?k=key%d" % i), handle=handle)
            assert r.status == 200, (i, r)
        # the most recent one is remembered, the first one forgotten
        assert h.curl(srv.url("/tiny?k=key1499"), handle=handle).status == 503
        assert h.curl(srv.url("/tiny?k=key0"), handle=handle).status == 200
    finally:
        handle.close()
    assert srv.alive()


def test_client_gone_while_delayed(srv):
    # excess 2 at 2 r/s: the third waits a second; its client leaves.
    conns = [h.Conn(srv.port, timeout=10) for _ in range(3)]
    for c in conns:
        c.send(h.request("GET", "/delayed?k=gone"))
    time.sleep(0.2)                      # read and waiting, well inside its second
    conns[2].sock.close()
    conns[2].close()
    statuses = []
    for c in conns[:2]:
        statuses.append(c.read_response().status)
    for c in conns[:2]:
        c.close()
    assert statuses == [200, 200], statuses
    assert h.wait_for(lambda: "/delayed?k=gone 499" in log(srv), 5), log(srv)
    assert get(srv, "/one").status in (200, 503)


def test_config_errors(tmp_path):
    z = "limit_req_zone $binary_remote_addr zone=z:64k rate=1r/s;"
    h.assert_config_errors(tmp_path, [
        ("limit_req_zone $binary_remote_addr rate=1r/s;", 'must have "zone" parameter'),
        ("limit_req_zone $binary_remote_addr zone=z:64k;", 'must have "rate" parameter'),
        ("limit_req_zone $binary_remote_addr zone=z:64k rate=1r/h;", 'invalid rate "1r/h"'),
        ("limit_req_zone $binary_remote_addr zone=z:64k rate=0r/s;", 'invalid rate "0r/s"'),
        ("limit_req_zone $binary_remote_addr zone=z:1k rate=1r/s;", 'zone "z:1k" is too small'),
        ("limit_req_zone $binary_remote_addr zone=z:xx rate=1r/s;", 'invalid zone size "z:xx"'),
        ("limit_req_zone $nope zone=z:64k rate=1r/s;", 'unknown variable'),
        ("limit_req_zone $binary_remote_addr zone=z:64k rate=1r/s bogus;",
         'invalid parameter "bogus"'),
        # nginx's words for a zone declared twice, or named and not declared
        (z + z, 'limit_req_zone "z" is already bound to key "$binary_remote_addr"'),
        (z + z.replace("z:64k", "z:128k"),
         'the size 131072 of shared memory zone "z" conflicts with already declared '
         'size 65536'),
        ("limit_req zone=nosuch;", 'zero size shared memory zone "nosuch" in'),
        (z + "limit_req zone=z burst=x;", 'invalid burst value "burst=x"'),
        (z + "limit_req zone=z delay=-1;", 'invalid delay value "delay=-1"'),
        (z + "limit_req zone=z nodelay delay=2;", 'exclude each other'),
        (z + "limit_req burst=2;", 'must have "zone" parameter'),
        (z + "limit_req zone=z; limit_req zone=z;", '"limit_req" directive is duplicate'),
        ("limit_req_status 200;", 'value must be between 400 and 599'),
        ("limit_req_log_level loud;", 'invalid value "loud"'),
        ("limit_req_dry_run maybe;", 'invalid value "maybe"'),
    ])


def test_config_error_names_the_line(tmp_path):
    conf = h.MAIN_TEMPLATE.replace(
        "@HTTP@", "limit_req_zone $binary_remote_addr zone=z:64k rate=1r/s;\n"
                  "    limit_req zone=z burst=;\n")
    rc, out, _ = h.start_expect_failure(tmp_path, conf=conf)
    line = conf.splitlines().index("    limit_req zone=z burst=;") + 1
    assert rc not in (None, 0) and ("scalws.conf:%d" % line) in out, out
