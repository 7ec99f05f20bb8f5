"""limit_conn: requests in flight per key, shared by the workers, kept
across reloads. A request is held in flight by a paced response
(limit_rate) whose client does not read."""
import os
import signal
import subprocess
import time

import pytest

import swsharness as h

BODY = os.urandom(40 * 1024)

HTTP = """
    limit_conn_zone $arg_k zone=perkey:64k;
    limit_conn_zone $server_name zone=persrv:64k;
    log_format lconn '$request_uri $status $limit_conn_status $pid';
    access_log @TMP@/lconn.log lconn;
"""

SERVER = """
        listen 127.0.0.1:@PORT2@ reuseport;
        listen 127.0.0.1:@PORT3@ http2;
        location /held/ { alias @TMP@/html/; limit_rate 4k; limit_conn perkey 1; }
        location /two/ { alias @TMP@/html/; limit_rate 4k; limit_conn perkey 2;
                         limit_conn_status 429; }
        location /dry/ { alias @TMP@/html/; limit_rate 4k; limit_conn perkey 1;
                         limit_conn_dry_run on; }
        location /quick/ { alias @TMP@/html/; limit_conn perkey 1; limit_conn_log_level warn; }
        location = /ver { respond 200 "v1"; }
"""


@pytest.fixture
def srv(sws):
    return sws(ports=3, workers=2, http=HTTP, server=SERVER,
               files={"html/big.bin": BODY, "html/mid.bin": BODY[:12 * 1024],
                      "html/small.txt": "small\n"})


def log(srv):
    return h._read(srv.tmp / "lconn.log")


def get(srv, path, port=None):
    return h.curl(srv.url(path, port=port), fresh=True)


def hold(srv, path, port=None):
    """A request whose paced response keeps it in flight (for ~10 s)."""
    c = h.Conn(port or srv.port, timeout=20, rcvbuf=4096)
    c.send(h.request("GET", path))
    while b"\r\n\r\n" not in c.buf:
        assert c._fill(), "closed before the head"
    assert c.buf.startswith(b"HTTP/1.1 200"), c.buf[:100]
    return c


def test_one_in_flight(srv):
    c = hold(srv, "/held/big.bin?k=a")
    try:
        r = get(srv, "/held/small.txt?k=a")
        assert r.status == 503, r
        assert get(srv, "/held/small.txt?k=b").status == 200     # another key
        assert get(srv, "/held/small.txt").status == 200         # no key
        assert 'limiting connections by zone "perkey", client: 127.0.0.1' in srv.error_log()
    finally:
        c.close()
    # the held request ends when its client is gone: the count goes with it
    assert h.wait_for(lambda: get(srv, "/held/small.txt?k=a").status == 200, 10), log(srv)


def test_count_and_status(srv):
    c1 = hold(srv, "/two/big.bin?k=t")
    c2 = hold(srv, "/two/big.bin?k=t")
    try:
        r = get(srv, "/two/small.txt?k=t")
        assert r.status == 429, r
    finally:
        c1.close()
    assert h.wait_for(lambda: get(srv, "/two/small.txt?k=t").status == 200, 10)
    c2.close()


def test_sequential_requests_are_not_counted_twice(srv):
    # one keep-alive connection, requests one after the other: each one's
    # count is given back when it ends
    with h.Conn(srv.port) as c:
        for _ in range(5):
            c.send(h.request("GET", "/quick/small.txt?k=s"))
            r = c.read_response()
            assert r.status == 200 and r.body == b"small\n", r


def test_http2_streams_count_each(srv):
    # two streams of one connection at once, limit 1: one is served (paced,
    # about 2 s), the other refused while it is
    base = "http://127.0.0.1:%d/held/mid.bin?k=h2&n=" % srv.ports[2]
    r = subprocess.run(["nghttp", "-v", base + "1", base + "2"], capture_output=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b":status: 200") == 1, r.stdout[-3000:]
    assert r.stdout.count(b":status: 503") == 1, r.stdout[-3000:]


def test_dry_run(srv):
    c = hold(srv, "/dry/big.bin?k=d")
    try:
        assert get(srv, "/dry/small.txt?k=d").status == 200
        assert h.wait_for(lambda: "/dry/small.txt?k=d 200 REJECTED_DRY_RUN" in log(srv))
        assert "limiting connections, dry run" in srv.error_log()
    finally:
        c.close()


def test_shared_by_two_workers(srv):
    # The held request is on one worker; refusals must come from both.
    c = hold(srv, "/held/big.bin?k=w", port=srv.ports[1])
    try:
        pids = set()
        deadline = time.monotonic() + 8
        n = 0
        while len(pids) < 2 and time.monotonic() < deadline:
            assert get(srv, "/held/small.txt?k=w", port=srv.ports[1]).status == 503
            n += 1
            assert h.wait_for(lambda: log(srv).count("/held/small.txt?k=w 503") == n)
            pids = {line.split()[3] for line in log(srv).splitlines()
                    if line.startswith("/held/small.txt?k=w 503")}
        assert len(pids) == 2, "one worker answered every request: %r" % pids
    finally:
        c.close()


def test_count_kept_across_reload(srv):
    c = hold(srv, "/held/big.bin?k=r")
    try:
        srv.write_conf(srv.conf_text.replace('respond 200 "v1"', 'respond 200 "v2"'))
        srv.signal(signal.SIGHUP)
        assert h.wait_for(lambda: get(srv, "/ver").body == b"v2", 10), srv.error_log()
        # the old worker still serves the held request: the new ones count it
        assert get(srv, "/held/small.txt?k=r").status == 503
    finally:
        c.close()
    assert h.wait_for(lambda: get(srv, "/held/small.txt?k=r").status == 200, 10)


def test_config_errors(tmp_path):
    z = "limit_conn_zone $binary_remote_addr zone=z:64k;"
    h.assert_config_errors(tmp_path, [
        ("limit_conn_zone $binary_remote_addr size=1m;", 'invalid parameter "size=1m"'),
        ("limit_conn_zone $binary_remote_addr zone=z;", 'invalid zone size "z"'),
        ("limit_conn_zone $binary_remote_addr zone=z:1k;", 'zone "z:1k" is too small'),
        ("limit_conn_zone $nope zone=z:64k;", 'unknown variable'),
        # nginx's words for a zone declared twice, or named and not declared
        (z + z, 'limit_conn_zone "z" is already bound to key "$binary_remote_addr"'),
        (z + z.replace("z:64k", "z:128k"),
         'the size 131072 of shared memory zone "z" conflicts with already declared '
         'size 65536'),
        ("limit_conn nosuch 1;", 'zero size shared memory zone "nosuch" in'),
        (z + "limit_conn z 0;", 'invalid number of connections "0"'),
        (z + "limit_conn z many;", 'invalid number of connections "many"'),
        (z + "limit_conn z 1; limit_conn z 2;", '"limit_conn" directive is duplicate'),
        ("limit_conn_status 99;", 'value must be between 400 and 599'),
        ("limit_conn_log_level loud;", 'invalid value "loud"'),
        ("limit_conn z;", 'invalid number of arguments in "limit_conn"'),
    ])
