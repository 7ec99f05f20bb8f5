"""split_clients: the same strings split the same way as nginx (run side by
side when nginx is installed), the ranges' sizes, "*" and errors."""
import os
import shutil

import pytest

import rwutil
import swsharness as h

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                  else None)

SPLIT = """
    split_clients "${arg_k}salt" $variant {
        0.5%  tiny;
        20.5% b;
        30%   c;
        *     rest;
    }
    split_clients "$arg_k" $partial { 50% half; }
"""

SERVER = 'location = /v { return 200 "$variant|$partial"; }'

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log %(tmp)s/nginx-error.log info;
pid %(tmp)s/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %(tmp)s/cb;
    proxy_temp_path %(tmp)s/pt;
    fastcgi_temp_path %(tmp)s/ft;
    uwsgi_temp_path %(tmp)s/ut;
    scgi_temp_path %(tmp)s/st;
%(split)s
    server {
        listen 127.0.0.1:%(port)d;
        %(server)s
    }
}
"""

KEYS = ["k%d" % i for i in range(400)] + ["", "a", "ab", "abc", "abcd", "abcde",
                                          "\u00e9t\u00e9", "x" * 1000]


def values(port, keys):
    import pycurl
    from urllib.parse import quote
    c = pycurl.Curl()
    out = []
    try:
        for k in keys:
            r = h.curl("http://127.0.0.1:%d/v?k=%s" % (port, quote(k)), handle=c)
            assert r.status == 200, r
            out.append(r.body.decode())
    finally:
        c.close()
    return out


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(http=SPLIT, server=SERVER)


def test_parts_have_their_share(srv):
    got = values(srv.port, KEYS[:400])
    variants = [v.split("|")[0] for v in got]
    counts = {n: variants.count(n) for n in ("tiny", "b", "c", "rest")}
    assert sum(counts.values()) == 400, counts
    # 400 hashes: each part near its share (binomial, far from the bounds)
    assert counts["tiny"] <= 10, counts
    assert 50 <= counts["b"] <= 115, counts
    assert 80 <= counts["c"] <= 160, counts
    assert 130 <= counts["rest"] <= 230, counts
    halves = [v.split("|")[1] for v in got]
    assert set(halves) == {"half", ""}, halves


def test_same_split_as_nginx(srv, tmp_path):
    if NGINX is None:
        pytest.skip("nginx is not installed")
    from test_proxy_real import Proc
    d = tmp_path / "nginx"
    d.mkdir()
    h.make_traversable(d)
    port = h.free_port()
    (d / "nginx.conf").write_text(NGINX_CONF % {"tmp": d, "port": port, "split": SPLIT,
                                                "server": SERVER})
    p = Proc([NGINX, "-p", str(d) + "/", "-c", str(d / "nginx.conf"), "-e",
              str(d / "nginx-error.log")], port, str(d), str(d / "out.txt"))
    try:
        theirs = values(port, KEYS)
    finally:
        p.stop()
    ours = values(srv.port, KEYS)
    assert ours == theirs


def test_config_errors(tmp_path):
    def case(text, needle, marker):
        return (text, needle, marker)

    rwutil.assert_errors_at(tmp_path, [
        case("split_clients $arg_a $s {\n 60% a;\n 50% b;\n}", "greater than 100%",
             " 50% b;"),
        case("split_clients $arg_a $s {\n ten% a;\n}", 'invalid percent value "ten%"',
             " ten% a;"),
        case("split_clients $arg_a $s {\n 1.234% a;\n}", "invalid percent value",
             " 1.234% a;"),
        case("split_clients $arg_a $s {\n * a;\n 5% b;\n}", '"*" must be the last',
             " 5% b;"),
        case("split_clients $arg_a $s {\n 5%;\n}", "invalid split_clients part", " 5%;"),
        case("split_clients $arg_a s {\n * a;\n}", 'invalid variable name "s"',
             "split_clients $arg_a s"),
        case("split_clients $arg_a $s {\n}", "has no parts", "split_clients $arg_a $s"),
    ])
