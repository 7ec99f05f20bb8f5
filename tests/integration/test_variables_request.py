"""Variables of the request's transfer, as nginx has them: $request_length,
$request_body, $request_body_file, $request_completion, $pipe,
$connection_time, $tcpinfo_*, $http2, $hostname, $nginx_version, each read
back from an access log line."""
import os
import re
import socket
import time

import pytest

import swsharness as h

FORMAT = ("    log_format v '$request_uri|$request_length|$request_completion|$pipe|"
          "$connection_time|$tcpinfo_rtt|$tcpinfo_rttvar|$tcpinfo_snd_cwnd|"
          "$tcpinfo_rcv_space|$http2|$hostname|$nginx_version|$request_body_file|"
          "[$request_body]';\n"
          "    access_log @TMP@/v.log v;\n")
FIELDS = ("uri length completion pipe ctime rtt rttvar cwnd rcvspace http2 hostname "
          "version bodyfile body").split()


@pytest.fixture(scope="module")
def srv(sws_module, tmp_path_factory):
    from proxyorigin import Origin
    o = Origin("vorigin")
    s = sws_module(http=FORMAT + "    http2 on;\n", server="""
        client_body_temp_path @TMP@/body;
        location /p/ { proxy_pass http://%s/; }
        location /pf/ { client_body_in_file_only clean; proxy_pass http://%s/; }
        location / { respond 200 "v"; }
    """ % (o.addr, o.addr))
    yield s
    o.stop()


def line(srv, uri):
    [ln] = [x for x in h.wait_file_contains(srv.tmp / "v.log", uri + "|", 5).splitlines()
            if x.startswith(uri + "|")]
    return dict(zip(FIELDS, ln.split("|")))


def test_request_length_and_completion_http1(srv):
    data = h.request("GET", "/len1", host="x", headers=[("X-A", "bcd")])
    r = h.exchange(srv.port, data)
    assert r.status == 200
    d = line(srv, "/len1")
    assert int(d["length"]) == len(data), (d, data)
    assert d["completion"] == "OK" and d["pipe"] == "."
    assert re.match(r"^\d+\.\d{3}$", d["ctime"]), d
    for k in ("rtt", "rttvar", "cwnd", "rcvspace"):
        assert d[k].isdigit(), d
    assert d["http2"] == "-" and d["hostname"] == socket.gethostname()   # empty: "-"
    assert re.match(r"^\d+\.\d+\.\d+", d["version"]), d


def test_request_body_in_memory_and_length(srv):
    body = b"name=value&x=" + b"y" * 100
    data = h.request("POST", "/p/echo?body1", host="x",
                     headers=[("Content-Length", str(len(body)))], body=body)
    r = h.exchange(srv.port, data)
    assert r.status == 200, r
    d = line(srv, "/p/echo?body1")
    assert d["body"] == "[%s]" % body.decode(), d
    assert d["bodyfile"] == "-", d
    assert int(d["length"]) == len(data), d


def test_request_body_chunked_is_counted_decoded(srv):
    data = h.request("POST", "/p/echo?chunk1", host="x",
                     headers=[("Transfer-Encoding", "chunked")]) + b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
    r = h.exchange(srv.port, data)
    assert r.status == 200, r
    d = line(srv, "/p/echo?chunk1")
    assert d["body"] == "[abcde]", d
    head = data.index(b"\r\n\r\n") + 4
    assert int(d["length"]) == head + 5, d


def test_request_body_in_a_file(srv):
    body = b"z" * 5000
    r = h.curl(srv.url("/pf/echo?file1"), method="POST", body=body)
    assert r.status == 200, r
    d = line(srv, "/pf/echo?file1")
    assert d["body"] == "[-]", d                  # in a file: empty, as nginx
    assert d["bodyfile"].startswith(str(srv.tmp / "body")), d
    assert not os.path.exists(d["bodyfile"])      # "clean": gone after the request


def test_pipe(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/pipe1", host="x") + h.request("GET", "/pipe2", host="x"))
        assert c.read_response().status == 200
        assert c.read_response().status == 200
    assert line(srv, "/pipe1")["pipe"] == "."
    assert line(srv, "/pipe2")["pipe"] == "p"


def test_http2(srv):
    r = h.curl(srv.url("/h2c1"), prior_knowledge=True)
    assert r.status == 200 and r.http_version == 3, r
    d = line(srv, "/h2c1")
    assert d["http2"] == "h2c" and d["completion"] == "OK", d
    assert int(d["length"]) > len("GET /h2c1 HTTP/2.0"), d


def test_completion_empty_when_the_client_goes(srv):
    # a response the client does not wait for is not complete
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/p/delay/1000?cut1", host="x"))
        time.sleep(0.2)                        # the request is with the upstream
        c.close()
    d = line(srv, "/p/delay/1000?cut1")
    assert d["completion"] == "-", d
