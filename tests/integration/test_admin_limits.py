"""The admin module's limit_req and limit_conn counters (docs/admin.md):
passed, delayed and rejected per zone, in /api/limits and /metrics, adding
up exactly to a known load (and to the $limit_*_status of the access log)."""
import collections
import json
import os
import shutil
import signal
import threading

import pytest

import swsharness as h
from test_admin import admin_block, api, get, metric, promtool

HTTP = """
    limit_req_zone $arg_k zone=slow:64k rate=1r/m;
    limit_req_zone $arg_k zone=fast:64k rate=10r/s;
    limit_conn_zone $arg_k zone=conns:64k;
    log_format lim '$uri $status "$limit_req_status" "$limit_conn_status"';
    access_log @TMP@/lim.log lim;
"""

SERVER = """
        listen 127.0.0.1:@PORT2@ reuseport;
        location = /nodelay { limit_req zone=slow burst=2 nodelay; respond 200 "ok"; }
        location = /plain { limit_req zone=slow; limit_req_status 429; respond 200 "ok"; }
        location = /dry { limit_req zone=slow; limit_req_dry_run on; respond 200 "ok"; }
        location = /delay { limit_req zone=fast burst=5 delay=1; respond 200 "ok"; }
        location /held/ { alias @TMP@/html/; limit_rate 4k; limit_conn conns 1; }
        location /conndry/ { alias @TMP@/html/; limit_conn conns 1; limit_conn_dry_run on; }
        location = /ver { respond 200 "v1"; }
"""


@pytest.fixture
def srv(sws):
    return sws(ports=3, workers=2, http=admin_block() + HTTP, server=SERVER,
               files={"html/big.bin": os.urandom(40 * 1024), "html/small.txt": "small\n"})


def fetch(srv, path, port=None):
    return h.curl(srv.url(path, port=port), fresh=True)


def logged(srv, n, prefixes):
    """The access log's lines of URIs starting with one of prefixes, once
    there are n of them."""
    path = srv.tmp / "lim.log"

    def lines():
        return [line.split() for line in h._read(path).splitlines()
                if line.startswith(prefixes)]
    assert h.wait_for(lambda: len(lines()) >= n, 5), h._read(path)
    return lines()


REQ_RESULTS = ["passed", "delayed", "rejected", "delayed_dry_run", "rejected_dry_run"]


def test_limit_req_counts_add_up(srv):
    zero = {r: 0 for r in REQ_RESULTS}
    assert api(srv, "/api/limits") == {
        "limit_req": {"slow": dict(zero, keys=0), "fast": dict(zero, keys=0)},
        "limit_conn": {"conns": {"keys": 0, "passed": 0, "rejected": 0,
                                 "rejected_dry_run": 0}}}
    # burst=2 nodelay at 1r/m: the first three go at once, the next two are
    # refused; both workers (two ports) count into the zone
    statuses = [fetch(srv, "/nodelay?k=a", port=srv.ports[i % 2]).status for i in range(5)]
    assert statuses == [200, 200, 200, 503, 503], statuses
    # no burst: one passes, then 429s; another key passes; no key counts nothing
    statuses = [fetch(srv, "/plain?k=b").status for _ in range(3)]
    assert statuses == [200, 429, 429], statuses
    assert fetch(srv, "/plain?k=c").status == 200
    assert fetch(srv, "/plain").status == 200
    # dry run: all answered, the refusals counted as such
    assert [fetch(srv, "/dry?k=d").status for _ in range(3)] == [200] * 3
    # burst=5 delay=1 at 10r/s: six at once, the ones over the first extra
    # wait; the access log says which
    out = []
    threads = [threading.Thread(target=lambda: out.append(fetch(srv, "/delay?k=e").status))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15)
    assert sorted(out) == [200] * 6, out

    lines = logged(srv, 5 + 3 + 1 + 1 + 3 + 6, ("/nodelay", "/plain", "/dry", "/delay"))
    slow = collections.Counter(l[2].strip('"') for l in lines if l[0] != "/delay")
    fast = collections.Counter(l[2].strip('"') for l in lines if l[0] == "/delay")
    # (the request without a key has no verdict: no zone judged it, "-"
    # as in nginx)
    assert slow == {"PASSED": 3 + 1 + 1 + 1, "REJECTED": 2 + 2, "REJECTED_DRY_RUN": 2,
                    "-": 1}, slow
    assert fast["DELAYED"] >= 1 and sum(fast.values()) == 6, fast

    doc = api(srv, "/api/limits")["limit_req"]
    assert doc["slow"] == {"keys": 4, "passed": 3 + 1 + 1 + 1, "delayed": 0,
                           "rejected": 2 + 2, "delayed_dry_run": 0,
                           "rejected_dry_run": 2}, doc
    assert doc["fast"] == {"keys": 1, "passed": fast["PASSED"], "delayed": fast["DELAYED"],
                           "rejected": 0, "delayed_dry_run": 0, "rejected_dry_run": 0}, doc

    r = get(srv, "/metrics")
    text = r.body.decode()
    assert "# TYPE scalws_limit_req_requests_total counter\n" in text
    for zone in ("slow", "fast"):
        for result in REQ_RESULTS:
            assert metric(text, "scalws_limit_req_requests_total", zone=zone,
                          result=result) == doc[zone][result]
    if shutil.which("promtool"):
        rc, out = promtool(r.body)
        assert rc == 0 and out.strip() == "", out
    om = get(srv, "/metrics", headers=["Accept: application/openmetrics-text"]).body.decode()
    assert "# TYPE scalws_limit_req_requests counter\n" in om
    assert 'scalws_limit_req_requests_total{zone="slow",result="rejected"} 4\n' in om

    # a reload keeps the zones and their counts; the new workers add to them
    srv.write_conf(srv.conf_text.replace('respond 200 "v1"', 'respond 200 "v2"'))
    srv.signal(signal.SIGHUP)
    assert h.wait_for(lambda: fetch(srv, "/ver").body == b"v2", 10), srv.error_log()
    assert fetch(srv, "/plain?k=b").status == 429
    assert h.wait_for(lambda: api(srv, "/api/limits")["limit_req"]["slow"]["rejected"] == 5,
                      5), api(srv, "/api/limits")


def test_limit_conn_counts_add_up(srv):
    c = h.Conn(srv.port, timeout=20, rcvbuf=4096)
    c.send(h.request("GET", "/held/big.bin?k=a"))
    try:
        while b"\r\n\r\n" not in c.buf:
            assert c._fill(), "closed before the head"
        assert c.buf.startswith(b"HTTP/1.1 200"), c.buf[:100]
        # one in flight for key a: more are refused, others pass
        assert [fetch(srv, "/held/small.txt?k=a").status for _ in range(3)] == [503] * 3
        assert fetch(srv, "/held/small.txt?k=b").status == 200
        assert fetch(srv, "/conndry/small.txt?k=a").status == 200
        # key a's held connection; b's and the dry run's go once their
        # requests have ended (a moment after their answers)
        assert h.wait_for(lambda: api(srv, "/api/limits")["limit_conn"]["conns"]["keys"] == 1,
                          5), api(srv, "/api/limits")
    finally:
        c.close()
    lines = logged(srv, 3 + 1 + 1 + 1, ("/held/", "/conndry/"))
    seen = collections.Counter(l[3].strip('"') for l in lines if l[0] != "/held/big.bin")
    assert seen == {"REJECTED": 3, "PASSED": 1, "REJECTED_DRY_RUN": 1}, seen
    doc = api(srv, "/api/limits")["limit_conn"]["conns"]
    assert doc["passed"] == 2 and doc["rejected"] == 3 and doc["rejected_dry_run"] == 1, doc
    text = get(srv, "/metrics").body.decode()
    assert metric(text, "scalws_limit_conn_requests_total", zone="conns",
                  result="passed") == 2
    assert metric(text, "scalws_limit_conn_requests_total", zone="conns",
                  result="rejected") == 3
    # the held request's record goes with it
    assert h.wait_for(lambda: api(srv, "/api/limits")["limit_conn"]["conns"]["keys"] == 0,
                      10)


def test_no_zones_no_limits(sws):
    srv = sws(ports=3, http=admin_block())
    assert api(srv, "/api/limits") == {}
    assert "scalws_limit_" not in get(srv, "/metrics").body.decode()
    assert json.loads(get(srv, "/api/").body)["limits"] == {}
