"""bench/h3load, the HTTP/3 client of the bench and the tests, against a real
HTTP/3 server: Debian's Caddy 2.6 on a free loopback port (h3client.Caddy).
Small and 1 MiB files (bodies compared byte for byte, with and without
GSO/GRO), 100 requests in flight on one connection, a POST with a body
through Caddy's reverse proxy to the tests' origin, request headers (Range,
If-None-Match), error statuses, a timed load run, and h3load's own failures
(nothing listening, a certificate it must not accept, a bad URL)."""
import json
import os
import subprocess

import pytest

import h3client
import swsharness as h

pytestmark = pytest.mark.skipif(bool(h3client.h3load_missing() or h3client.caddy_missing()),
                                reason=h3client.h3load_missing() or h3client.caddy_missing()
                                or "")

HELLO = b"Hello, world!"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from proxyorigin import Origin
    tmp = tmp_path_factory.mktemp("caddy")
    root = tmp / "root"
    root.mkdir()
    (root / "hello.txt").write_bytes(HELLO)
    big = os.urandom(1024 * 1024)
    (root / "1m.bin").write_bytes(big)
    origin = Origin("h3origin")
    caddy = h3client.Caddy(tmp, root, extra="reverse_proxy /echo* 127.0.0.1:%d" % origin.port)
    yield {"caddy": caddy, "big": big, "origin": origin, "tmp": tmp}
    caddy.stop()
    origin.stop()


def test_small_file(site, tmp_path):
    r = h3client.h3get(site["caddy"].url("/hello.txt"), body_to=tmp_path / "body")
    assert r.returncode == 0, r
    assert r.status == 200
    assert r.body == HELLO
    assert r.header("content-length") == "13"
    s = r.summary
    assert (s["done"], s["succeeded"], s["errored"], s["status"]["2xx"]) == (1, 1, 0, 1)
    assert s["body_bytes"] == 13
    assert s["connections"] == {"opened": 1, "handshaken": 1, "failed": 0}
    assert s["latency_ms"]["p50"] > 0
    assert s["cpu"]["user_s"] + s["cpu"]["sys_s"] >= 0


@pytest.mark.parametrize("gso", [True, False], ids=["gso", "no-gso"])
def test_one_mib_file(site, tmp_path, gso):
    r = h3client.h3get(site["caddy"].url("/1m.bin"), body_to=tmp_path / "body", gso=gso)
    assert r.returncode == 0, r
    assert r.status == 200
    assert r.header("content-length") == str(1024 * 1024)
    assert len(r.body) == 1024 * 1024
    assert r.body == site["big"]
    assert r.summary["body_bytes"] == 1024 * 1024
    assert r.summary["gso"] is gso


def test_100_streams_on_one_connection(site):
    r = h3client.h3load(site["caddy"].url("/hello.txt"), "-n", "100", "-c", "1", "-m", "100",
                        print_headers=False)
    assert r.returncode == 0, r
    s = r.summary
    assert (s["issued"], s["done"], s["succeeded"], s["errored"], s["timeout"]) == (100, 100, 100,
                                                                                    0, 0)
    assert s["status"]["2xx"] == 100
    assert s["body_bytes"] == 100 * len(HELLO)
    assert s["connections"]["handshaken"] == 1
    # all at once: Caddy (quic-go) lets a client open 100 streams
    assert s["max_streams"] == 100


def test_several_paths_and_connections(site):
    r = h3client.h3load(site["caddy"].url("/hello.txt"), "-n", "20", "-c", "4", "-m", "3",
                        paths=["/1m.bin"], print_headers=False, timeout=30)
    assert r.returncode == 0, r
    s = r.summary
    assert (s["done"], s["succeeded"], s["connections"]["handshaken"]) == (20, 20, 4)
    # the paths in turn: 10 of each
    assert s["body_bytes"] == 10 * len(HELLO) + 10 * 1024 * 1024


def test_post_with_body(site, tmp_path):
    data = bytes(range(256)) * 400          # 100 KiB: more than one flight
    (tmp_path / "data").write_bytes(data)
    r = h3client.h3get(site["caddy"].url("/echo"), "--method", "POST",
                       "--data", "@%s" % (tmp_path / "data"), "-H", "X-Test: h3load",
                       body_to=tmp_path / "body")
    assert r.returncode == 0, r
    assert r.status == 200
    echo = json.loads(r.body)
    assert echo["method"] == "POST"
    assert echo["body"].encode("latin-1") == data
    hdrs = {k.lower(): v for k, v in echo["headers"]}
    assert hdrs["x-test"] == "h3load"
    assert hdrs["content-length"] == str(len(data))


def test_post_inline_data(site, tmp_path):
    r = h3client.h3get(site["caddy"].url("/echo"), "--method", "PUT", "--data", "abc=1",
                       body_to=tmp_path / "body")
    assert r.status == 200
    echo = json.loads(r.body)
    assert (echo["method"], echo["body"]) == ("PUT", "abc=1")


def test_range_and_conditional(site, tmp_path):
    url = site["caddy"].url("/hello.txt")
    r = h3client.h3get(url, "-H", "Range: bytes=0-4", body_to=tmp_path / "range")
    assert r.status == 206
    assert r.body == b"Hello"
    assert r.header("content-range") == "bytes 0-4/13"
    etag = h3client.h3get(url).header("etag")
    assert etag
    r = h3client.h3get(url, "-H", "If-None-Match: %s" % etag, body_to=tmp_path / "cond")
    assert r.returncode == 0, r
    assert r.status == 304
    assert r.body == b""
    assert r.summary["status"]["3xx"] == 1


def test_not_found_counts_as_failed(site):
    r = h3client.h3get(site["caddy"].url("/nothing-here"))
    assert r.returncode == 0, r        # answered: not an error of the transport
    assert r.status == 404
    s = r.summary
    assert (s["succeeded"], s["failed"], s["errored"], s["status"]["4xx"]) == (0, 1, 0, 1)


def test_timed_load(site):
    r = h3client.h3load(site["caddy"].url("/hello.txt"), "-d", "1", "-c", "2", "-m", "4",
                        print_headers=False)
    assert r.returncode == 0, r
    s = r.summary
    assert s["requested"] == 0 and s["done"] == s["issued"] > 10
    assert s["errored"] == 0 and s["timeout"] == 0
    assert 0.9 < s["elapsed_s"] < 3.0
    assert s["rps"] > 0 and s["latency_ms"]["p99"] >= s["latency_ms"]["p50"] > 0
    assert s["cpu"]["us_per_req"] > 0


def test_text_summary(site):
    """Without --json: one fact per line (what bench/loadgen.py reads)."""
    p = subprocess.run([h3client.H3LOAD, "-k", "-n", "3", site["caddy"].url("/hello.txt")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    assert "requests: 3 issued, 3 done, 3 succeeded, 0 failed, 0 errored, 0 timeout\n" in out
    assert "status codes: 3 2xx, 0 3xx, 0 4xx, 0 5xx, 0 other\n" in out
    assert "body bytes: 39\n" in out
    for prefix in ("finished in ", "latency ms: min ", "cpu: user ", "connections: 1 opened"):
        assert ("\n" + prefix) in ("\n" + out), prefix


def test_self_signed_certificate_refused_without_k(site):
    p = subprocess.run([h3client.H3LOAD, "--json", "-t", "5", site["caddy"].url("/hello.txt")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
    assert p.returncode == 1
    s = json.loads(p.stdout.decode().splitlines()[-1])
    assert s["connections"]["failed"] == 1 and s["done"] == 0
    assert "TLS" in s["error"] or "handshake" in s["error"], s["error"]


def test_nothing_listening():
    port = h.free_port()
    p = subprocess.run([h3client.H3LOAD, "-k", "--json", "-t", "5",
                        "https://127.0.0.1:%d/" % port],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
    assert p.returncode == 1
    s = json.loads(p.stdout.decode().splitlines()[-1])
    assert s["connections"]["failed"] == 1 and s["done"] == 0 and s["error"]


def test_silent_server():
    """A UDP port that takes the Initial and never answers: given up after
    -t, the connection counted as failed."""
    import socket
    import time
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        t0 = time.monotonic()
        p = subprocess.run([h3client.H3LOAD, "-k", "--json", "-t", "1",
                            "https://127.0.0.1:%d/" % silent.getsockname()[1]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=20, check=False)
        elapsed = time.monotonic() - t0
        assert silent.recv(2048)                # its Initial came
    assert p.returncode == 1
    assert elapsed < 5
    s = json.loads(p.stdout.decode().splitlines()[-1])
    assert s["connections"] == {"opened": 1, "handshaken": 0, "failed": 1}
    assert s["done"] == 0 and "handshake timed out" in s["error"], s["error"]


@pytest.mark.parametrize("args", [["http://127.0.0.1:1/"], ["-H", "no colon", "https://x/"],
                                  ["-c", "0", "https://x/"], ["https://x/", "relative"]])
def test_bad_arguments(args):
    p = subprocess.run([h3client.H3LOAD] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=10, check=False)
    assert p.returncode == 2
    assert p.stderr.startswith(b"h3load: ") or b"usage" in p.stderr
