"""nginx's proxy directives that configurations use: proxy_method,
proxy_set_body, proxy_bind, proxy_socket_keepalive, proxy_limit_rate and
proxy_busy_buffers_size (its checks), and the fastcgi_ ones through the
same framework. A real origin (proxyorigin.py) sees what was sent."""
import json
import re
import subprocess
import time

import pytest

import conferr
import swsharness as h


def echo(resp):
    assert resp.status == 200, resp
    return json.loads(resp.body)


def hdr(req, name):
    return [v for k, v in req["headers"] if k.lower() == name.lower()]


# ------------------------------------------------------------ proxy_method

def test_proxy_method(sws, origin):
    o = origin()
    srv = sws(server="""
        proxy_method PATCH;
        location = /fixed { proxy_pass http://%(o)s/echo; }
        location = /var { proxy_method $arg_m; proxy_pass http://%(o)s/echo; }
        location = /own { proxy_method POST; proxy_pass http://%(o)s/echo; }
    """ % {"o": o.addr})
    assert echo(h.curl(srv.url("/fixed")))["method"] == "PATCH"       # inherited
    assert echo(h.curl(srv.url("/own")))["method"] == "POST"
    assert echo(h.curl(srv.url("/var?m=PUT")))["method"] == "PUT"
    # a variable that is empty: the client's method
    assert echo(h.curl(srv.url("/var"), method="DELETE"))["method"] == "DELETE"


# ------------------------------------------------------------ proxy_set_body

def test_proxy_set_body(sws, origin):
    o = origin()
    srv = sws(server="""
        location /form { proxy_method POST; proxy_set_body "user=$arg_u&via=scalws";
                         proxy_pass http://%(o)s/echo; }
        location /empty { proxy_set_body ""; proxy_pass http://%(o)s/echo; }
    """ % {"o": o.addr})
    # instead of the client's body (which is read and dropped)
    req = echo(h.curl(srv.url("/form?u=ann"), method="POST", body=b"client body " * 100))
    assert req["method"] == "POST"
    assert req["body"] == "user=ann&via=scalws"
    assert hdr(req, "Content-Length") == [str(len("user=ann&via=scalws"))]
    assert hdr(req, "Transfer-Encoding") == []
    # a GET without a body gets one too
    req = echo(h.curl(srv.url("/form?u=bob")))
    assert (req["method"], req["body"]) == ("POST", "user=bob&via=scalws")
    # a chunked client body: not passed, and no chunked framing goes up
    req = echo(h.curl(srv.url("/form?u=c"), method="POST", body=b"x" * 5000,
                      headers=["Transfer-Encoding: chunked"]))
    assert req["body"] == "user=c&via=scalws" and hdr(req, "Transfer-Encoding") == []
    req = echo(h.curl(srv.url("/empty"), method="POST", body=b"dropped"))
    assert req["body"] == "" and hdr(req, "Content-Length") == ["0"]


def test_proxy_set_body_on_a_kept_connection(sws, origin):
    """The origin reads exactly Content-Length bytes: the next request on
    the same kept connection still parses."""
    o = origin()
    srv = sws(http="upstream back { server %s; keepalive 4; }" % o.addr, server="""
        location / { proxy_set_body "twelve bytes"; proxy_pass http://back/echo; }
    """)
    for _ in range(3):
        assert echo(h.curl(srv.url("/")))["body"] == "twelve bytes"
    assert o.accepted == 1, o.accepted


# ------------------------------------------------------------ proxy_bind

def test_proxy_bind(sws, origin):
    o = origin()
    srv = sws(server="""
        proxy_bind 127.0.0.2;
        location = /server { proxy_pass http://%(o)s/echo; }
        location = /off { proxy_bind off; proxy_pass http://%(o)s/echo; }
        location = /var { proxy_bind $arg_src; proxy_pass http://%(o)s/echo; }
        location = /port { proxy_bind 127.0.0.5:0; proxy_pass http://%(o)s/echo; }
    """ % {"o": o.addr})

    def source(path):
        n = len(o.peers)
        assert h.curl(srv.url(path)).status == 200
        assert len(o.peers) == n + 1, "a new connection for each bound request"
        return o.peers[-1][0]
    assert source("/server") == "127.0.0.2"
    assert source("/server?b") == "127.0.0.2"
    assert source("/var?src=127.0.0.3") == "127.0.0.3"
    assert source("/var?src=127.0.0.4") == "127.0.0.4"
    assert source("/port") == "127.0.0.5"
    assert h.curl(srv.url("/off")).status == 200
    assert o.peers[-1][0] == "127.0.0.1"
    # a variable that is empty binds nothing; one that is no address: 500
    assert h.curl(srv.url("/var")).status == 200 and o.peers[-1][0] == "127.0.0.1"
    r = h.curl(srv.url("/var?src=nonsense"))
    assert r.status == 500, r
    assert "invalid local address \"nonsense\"" in srv.error_log()


def test_proxy_bind_to_an_address_not_here(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_bind 192.0.2.1; proxy_pass http://%s; }" % o.addr)
    r = h.curl(srv.url("/echo"))
    assert r.status == 500, r
    assert "bind() to a local address for an upstream connection failed" in srv.error_log()
    assert o.accepted == 0


@pytest.mark.parametrize("args,words", [
    ("not-an-address", ['invalid address "not-an-address"']),
    ("127.0.0.1:99999", ['invalid address']),
    ("[::1", ['invalid address']),
    ("127.0.0.2 transparent", ["transparent is not supported"]),
    ("127.0.0.2 other", ['invalid parameter "other"']),
])
def test_proxy_bind_errors(tmp_path, args, words):
    conferr.check(tmp_path, words, server="        proxy_bind %s;  # ERR\n" % args)


def test_bind_forms_accepted(tmp_path):
    conferr.check_ok(tmp_path, server="""
        proxy_bind [::1]:0;
        location /a { proxy_bind ::1; }
        location /b { proxy_bind 127.0.0.1:4000; }
        location /c { fastcgi_bind 127.0.0.2; fastcgi_socket_keepalive on;
                      fastcgi_limit_rate 10k; fastcgi_busy_buffers_size 16k; }
    """)


# ------------------------------------------------------------ proxy_socket_keepalive

def keepalive_timers(origin_port):
    """ss's view of the connections to the origin (their local side is
    scalwsd's): the timer each has."""
    out = subprocess.run(["ss", "-tnoH", "state", "established",
                          "( dport = :%d )" % origin_port],
                         capture_output=True, text=True, timeout=10).stdout
    return [l for l in out.splitlines() if l.strip()]


@pytest.mark.parametrize("flag,expect", [("on", True), ("off", False)])
def test_proxy_socket_keepalive(sws, origin, flag, expect):
    o = origin()
    port = int(o.addr.rsplit(":", 1)[1])
    srv = sws(http="upstream back { server %s; keepalive 2; }" % o.addr, server="""
        location / { proxy_socket_keepalive %s; proxy_pass http://back; }
    """ % flag)
    assert h.curl(srv.url("/echo")).status == 200
    lines = []
    deadline = time.monotonic() + 3
    while not lines and time.monotonic() < deadline:
        lines = keepalive_timers(port)       # the kept connection, idle
        time.sleep(0.05)
    assert lines, "no connection to the origin is open"
    assert any("timer:(keepalive" in l for l in lines) == expect, lines


# ------------------------------------------------------------ proxy_limit_rate

def test_proxy_limit_rate(sws, origin):
    o = origin()
    srv = sws(server="""
        location /slow/ { proxy_limit_rate 100k; proxy_pass http://%(o)s/; }
        location /fast/ { proxy_pass http://%(o)s/; }
    """ % {"o": o.addr})
    size = 300 * 1024
    t0 = time.monotonic()
    r = h.curl(srv.url("/fast/big/%d" % size))
    fast = time.monotonic() - t0
    assert r.status == 200 and len(r.body) == size
    t0 = time.monotonic()
    r = h.curl(srv.url("/slow/big/%d" % size))
    slow = time.monotonic() - t0
    assert r.status == 200 and len(r.body) == size
    # 100k/s with nginx's first-second allowance: 300k take about 2 s
    assert slow >= 1.7, (slow, fast)
    assert slow < 8, slow


def test_proxy_limit_rate_unbuffered(sws, origin):
    o = origin()
    srv = sws(server="""
        location / { proxy_buffering off; proxy_limit_rate 64k; proxy_pass http://%s; }
    """ % o.addr)
    t0 = time.monotonic()
    r = h.curl(srv.url("/big/%d" % (160 * 1024)))
    took = time.monotonic() - t0
    assert r.status == 200 and len(r.body) == 160 * 1024
    assert took >= 1.3, took


# ------------------------------------------------------------ proxy_busy_buffers_size

@pytest.mark.parametrize("conf,words", [
    ("proxy_buffers 8 8k; proxy_busy_buffers_size 4k;",
     ['"proxy_busy_buffers_size" must be equal to or greater than the maximum of the '
      'value of "proxy_buffer_size" and one of the "proxy_buffers"']),
    ("proxy_buffers 4 8k; proxy_busy_buffers_size 32k;",
     ['"proxy_busy_buffers_size" must be less than the size of all "proxy_buffers" '
      'minus one buffer']),
    ("proxy_buffer_size 16k; proxy_busy_buffers_size 8k;",
     ['"proxy_busy_buffers_size" must be equal to or greater']),
    ("fastcgi_buffers 2 4k; fastcgi_busy_buffers_size 8k;",
     ['"fastcgi_busy_buffers_size" must be less than the size of all "fastcgi_buffers"']),
    ("proxy_busy_buffers_size lots;", ['invalid value "lots"']),
])
def test_busy_buffers_checks(tmp_path, conf, words):
    # reported at the end of the location (nginx's merge)
    tmp = tmp_path
    (tmp / "html").mkdir()
    text = h.render(h.MAIN_TEMPLATE, tmp, [h.free_port()],
                    SERVER="location /x { %s }" % conf)
    (tmp / "scalws.conf").write_text(text)
    r = h.run_scalwsd(["-t", "-p", str(tmp) + "/", "-c", str(tmp / "scalws.conf")])
    err = r.stderr.decode()
    assert r.returncode != 0, err
    for w in words:
        assert w in err, err


def test_busy_buffers_accepted(sws, origin):
    o = origin()
    srv = sws(server="""
        proxy_busy_buffers_size 16k;
        location / { proxy_buffers 4 8k; proxy_pass http://%s; }
        location /more/ { proxy_buffers 16 4k; proxy_busy_buffers_size 8k;
                          proxy_pass http://%s/; }
    """ % (o.addr, o.addr))
    r = h.curl(srv.url("/big/100000"))
    assert r.status == 200 and len(r.body) == 100000
    r = h.curl(srv.url("/more/big/100000"))
    assert r.status == 200 and len(r.body) == 100000
