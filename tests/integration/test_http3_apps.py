"""Applications over HTTP/3: 100 concurrent streams on one connection (and
more than http3_max_concurrent_streams, which QUIC's stream credit spaces
out), the cache (a miss then a hit), PHP through FastCGI, a proxied 1 MiB
request body streamed both ways, request trailers, Expect: 100-continue,
and limits the protocol enforces with its own error codes. Clients:
bench/h3load (h3client.py) and gtlsclient."""
import hashlib
import json
import os
import time

import pytest

import h3client
import tlsutil as t
from test_fastcgi_php import fpm, www_files  # noqa: F401 (fpm: a fixture)
from test_http3 import GTLS, h3get, log_lines, origin_mod  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.skipif(h3client.h3load_missing() is not None,
                       reason=str(h3client.h3load_missing())),
    pytest.mark.skipif(GTLS is None, reason="gtlsclient (ngtcp2-client) is missing"),
]

MIB = os.urandom(1024 * 1024)
FILES = {
    "html/hello.txt": b"Hello, HTTP/3!\n",
    "html/s30k.bin": os.urandom(30000),
    "html/mib.bin": MIB,
}
FILES.update(www_files())

SERVER = """
        listen 127.0.0.1:@PORT@ quic;
        location = /paced { alias @TMP@/html/s30k.bin; limit_rate 20k; }
        location /cached/ {
            proxy_pass http://@ORIGIN@/;
            proxy_cache c;
            proxy_cache_valid 200 1m;
            add_header X-Cache $upstream_cache_status;
        }
        location /stream/ {
            proxy_pass http://@ORIGIN@/;
            proxy_request_buffering off;
            proxy_buffering off;
            client_max_body_size 10m;
        }
        location /buffered/ { proxy_pass http://@ORIGIN@/; client_max_body_size 10m; }
        location ~ \\.php$ {
            try_files $uri =404;
            fastcgi_pass unix:@FPM@;
            include @SRC@/conf/fastcgi.conf;
            client_max_body_size 10m;
        }
"""


@pytest.fixture(scope="module")
def srv(sws_module, pki, origin_mod, fpm):
    return t.launch(sws_module, pki, files=FILES, server=SERVER, origin=origin_mod.addr,
                    fpm=fpm.sock, http="""
    proxy_cache_path @TMP@/cache keys_zone=c:1m;
    log_format h3 "$connection $request $status $body_bytes_sent";
    access_log @TMP@/h3.log h3;
""")


def url(srv, path):
    return "https://127.0.0.1:%d%s" % (srv.port, path)


# ---- many streams ----

def test_100_concurrent_streams_one_connection(srv):
    """100 requests in flight at once on one connection, each paced to
    about 0.5 s (limit_rate): together well under a second or two, one
    after the other they would take 50 s."""
    before = len(log_lines(srv, want=0, timeout=0))
    start = time.monotonic()
    r = h3client.h3load(url(srv, "/paced"), "-n", "100", "-c", "1", "-m", "100",
                        print_headers=False, timeout=30)
    took = time.monotonic() - start
    s = r.summary
    assert r.returncode == 0, (s, r.stderr[-2000:])
    assert s["done"] == 100 and s["status"]["2xx"] == 100, s
    assert s["connections"]["opened"] == 1 and s["max_streams"] == 100, s
    assert s["body_bytes"] == 100 * 30000
    assert took < 10, s
    lines = log_lines(srv, want=before + 100)[before:]
    assert len(lines) == 100
    # one connection served them all
    assert len({x.split()[0] for x in lines}) == 1, lines[:3]


def test_more_streams_than_allowed(sws, pki):
    """http3_max_concurrent_streams 10 and a client that wants 100 at once:
    QUIC's stream credit holds it to 10, and all 100 are served."""
    s = t.launch(sws, pki, files=FILES, server="""
        listen 127.0.0.1:@PORT@ quic;
        http3_max_concurrent_streams 10;
        location = /paced { alias @TMP@/html/s30k.bin; limit_rate 20k; }
    """)
    r = h3client.h3load(url(s, "/paced"), "-n", "40", "-c", "1", "-m", "100",
                        print_headers=False, timeout=30)
    assert r.returncode == 0, r.summary
    assert r.summary["status"]["2xx"] == 40
    assert r.summary["max_streams"] <= 10, r.summary


# ---- the cache ----

def test_cache_miss_then_hit(srv, origin_mod):
    before = len(origin_mod.requests)
    r1 = h3client.h3get(url(srv, "/cached/len/5000"))
    r2 = h3client.h3get(url(srv, "/cached/len/5000"))
    assert r1.status == 200 and r2.status == 200
    assert r1.header("x-cache") == "MISS" and r2.header("x-cache") == "HIT", (r1, r2)
    assert r1.summary["body_bytes"] == r2.summary["body_bytes"] == 5000
    assert len(origin_mod.requests) == before + 1


# ---- PHP ----

def test_php_over_http3(srv, tmp_path):
    out = tmp_path / "body"
    r = h3client.h3get(url(srv, "/info.php?a=1"), body_to=out)
    assert r.status == 200, (r, r.stderr[-2000:])
    j = json.loads(r.body)
    assert j["server"]["SERVER_PROTOCOL"] == "HTTP/3.0"
    assert j["server"]["HTTPS"] == "on" and j["server"]["REQUEST_SCHEME"] == "https"
    assert j["get"] == {"a": "1"}
    body = os.urandom(300000)
    f = tmp_path / "up"
    f.write_bytes(body)
    r = h3client.h3get(url(srv, "/info.php"), "--method", "POST", "--data", "@%s" % f,
                       body_to=out)
    j = json.loads(r.body)
    assert j["server"]["REQUEST_METHOD"] == "POST"
    assert j["server"]["CONTENT_LENGTH"] == str(len(body))
    assert j["body_len"] == len(body) and j["body_md5"] == hashlib.md5(body).hexdigest()


# ---- request bodies ----

@pytest.mark.parametrize("where", ["stream", "buffered"])
def test_proxy_1mib_body_both_ways(srv, where):
    """A 1 MiB request body to the origin and its echo (some 3 MiB of
    JSON) back: pulled and pushed as they come (proxy_request_buffering
    off, proxy_buffering off), or kept whole first."""
    r = h3get(srv.port, "/%s/echo" % where, method="POST", data=MIB, timeout=30)
    assert r.status() == 200, r.out[-3000:]
    echo = json.loads(r.bodies["echo"])
    assert echo["body"].encode("latin-1") == MIB
    assert echo["method"] == "POST"


def test_request_trailers(srv, tmp_path):
    """A trailer section after the body (RFC 9114 4.1): the body arrives
    whole, the trailer fields are not passed on (nginx drops them too)."""
    out = tmp_path / "body"
    r = h3client.h3get(url(srv, "/buffered/echo"), "--method", "POST", "--data", "abcdef",
                       "--trailer", "x-checksum: 1234", body_to=out)
    assert r.status == 200, (r, r.stderr[-2000:])
    echo = json.loads(r.body)
    assert echo["body"] == "abcdef"
    assert "x-checksum" not in json.dumps(echo["headers"]).lower()
    assert h3client.h3get(url(srv, "/hello.txt")).status == 200


def test_expect_100_continue(srv, tmp_path):
    """RFC 9110 10.1.1: a server that will read the content answers
    100-continue with 100 (Continue) first, over HTTP/3 as over HTTP/1.1
    and HTTP/2; the final response follows. (h3load --expect-continue
    holds the body until the 100 comes.)"""
    out = tmp_path / "body"
    r = h3client.h3get(url(srv, "/buffered/echo"), "--method", "POST", "--data", "x" * 5000,
                       "--expect-continue", body_to=out, timeout=10)
    assert [dict(x).get(":status") for x in r.responses] == ["100", "200"], r.responses
    echo = json.loads(r.body)
    assert echo["body"] == "x" * 5000
    # a final answer without reading the content: no 100
    r = h3client.h3get(url(srv, "/nothing.txt"), "--method", "POST", "--data", "x" * 5000,
                       "--expect-continue", body_to=out, timeout=10)
    assert [dict(x).get(":status") for x in r.responses] == ["404"], r.responses
