"""satisfy all|any with allow/deny, auth_basic, limit_req and limit_conn,
side by side with nginx 1.22 on the same configuration.

limit_req and limit_conn run in the PREACCESS phase, before the access
checks: no "satisfy any" and no allow lets a client past a limit, and a
request that is refused (403, 401) still counts against limit_req. Every
combination gets the same sequence of requests (right, wrong and missing
credentials) on both servers; the statuses (and whether the client is
asked for credentials) must be the same, and in each case a limit that
applies must have refused what it had to.
"""
import base64
import itertools
import os
import socket
import time

import pytest

import swsharness as h
from test_nginx_sites import NGINX, start_server

SATISFY = ("all", "any")
ACCESS = {"none": "", "allow": "allow 127.0.0.1; deny all;", "deny": "deny all;"}
AUTH = {"off": "", "on": 'auth_basic "zone"; auth_basic_user_file @DIR@/htpasswd;'}
LIMITS = {
    "none": "",
    "req": "limit_req zone=perloc nodelay;",
    "conn": "limit_conn slots 1;",
    "both": "limit_req zone=perloc nodelay; limit_conn slots 1;",
}
CASES = list(itertools.product(SATISFY, ACCESS, AUTH, LIMITS))

# (credentials, limit_conn slot): "held" is the slot the holder keeps busy
RIGHT, WRONG, MISSING = "right", "wrong", "missing"
FREE_SEQUENCE = [(RIGHT, "free"), (WRONG, "free"), (MISSING, "free"), (RIGHT, "free")]
HELD_SEQUENCE = [(RIGHT, "held"), (MISSING, "held")]

# the http block's content, in test_nginx_sites' MAIN around it
SITE = """\
    # one limit_req counter per location; limit_conn's slot named by the client
    limit_req_zone $uri zone=perloc:1m rate=1r/m;
    limit_conn_zone $http_x_slot zone=slots:1m;
    server {
        listen 127.0.0.1:@PORT@;
        root @ROOT@;
        location = /hold {
            limit_conn slots 1;
            limit_rate 1k;
            try_files /big.bin =404;
        }
@LOCATIONS@
    }
"""


def location_path(case):
    return "/%s-%s-%s-%s" % case


def locations():
    out = []
    for case in CASES:
        satisfy, access, auth, limit = case
        # try_files: the content comes after every check (PRE_CONTENT)
        out.append("        location = %s { satisfy %s; %s %s %s try_files /ok.txt =404; }"
                   % (location_path(case), satisfy, ACCESS[access], AUTH[auth], LIMITS[limit]))
    return "\n".join(out)


def request(port, path, creds, slot):
    """(status, asks for credentials) of one request on its own connection."""
    headers = [("X-Slot", slot), ("Connection", "close")]
    if creds != MISSING:
        pw = "secret" if creds == RIGHT else "guess"
        headers.append(("Authorization",
                        "Basic " + base64.b64encode(("alice:" + pw).encode()).decode()))
    r = h.exchange(port, h.request(path=path, host="t", headers=headers))
    assert r is not None, path
    return r.status, r.header("WWW-Authenticate") is not None


class Holder:
    """A request to /hold that keeps the limit_conn slot "held" busy: a large
    file sent at 1 KiB/s to a client that reads nothing."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(b"GET /hold HTTP/1.1\r\nHost: t\r\nX-Slot: held\r\n\r\n")
        first = self.sock.recv(64)
        assert first.startswith(b"HTTP/1.1 200"), first

    def close(self):
        self.sock.close()


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    tmp = tmp_path_factory.mktemp("satisfy")
    root = tmp / "root"
    root.mkdir()
    (root / "ok.txt").write_text("ok\n")
    (root / "big.bin").write_bytes(b"x" * (8 << 20))
    running, ports = [], {}
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp / who
            d.mkdir()
            (d / "htpasswd").write_text("alice:{PLAIN}secret\n")
            port = h.free_port()
            site = SITE.replace("@LOCATIONS@", locations())
            site = (site.replace("@DIR@", str(d)).replace("@ROOT@", str(root))
                    .replace("@PORT@", str(port)))
            h.make_traversable(tmp)
            running.append(start_server(who, d, port, site))
            ports[who] = port
        holders = [Holder(ports["nginx"]), Holder(ports["scalwsd"])]
        time.sleep(0.1)
        yield ports
        for x in holders:
            x.close()
    finally:
        for x in running:
            x.stop()


def expected(case, seq):
    """What the statuses must show in any case (not only nginx's word):
    a limit that applies refuses, whatever satisfy and the access checks say."""
    satisfy, access, auth, limit = case
    out = []
    for n, (creds, slot) in enumerate(seq):
        if limit in ("conn", "both") and slot == "held":
            out.append(503)
        elif limit in ("req", "both") and n > 0:
            out.append(503)
        else:
            out.append(None)          # decided by access/auth: nginx's answer
    return out


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_same_answers_as_nginx(servers, case):
    seq = FREE_SEQUENCE + (HELD_SEQUENCE if case[3] in ("conn", "both") else [])
    path = location_path(case)
    got = {who: [request(port, path, creds, slot) for creds, slot in seq]
           for who, port in servers.items()}
    assert got["scalwsd"] == got["nginx"], "%s: %s" % (path, got)
    statuses = [s for s, _ in got["scalwsd"]]
    for n, want in enumerate(expected(case, seq)):
        if want is not None:
            assert statuses[n] == want, "%s request %d: %s" % (path, n + 1, statuses)
    # the bug this file was written for: limit_req behind "satisfy any; allow"
    if case == ("any", "allow", "on", "req"):
        assert statuses == [200, 503, 503, 503]
