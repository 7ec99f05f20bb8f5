"""The end of a request is the core's whatever the protocol
(src/http/sws_http_request_end.c): every request is logged once, with the
status the client saw or 400/499 when the client left first, and
$request_completion says whether the response reached it whole."""

import socket
import time

import pytest

import h2raw
import swsharness as h

HTTP = ('    log_format end "$request_uri $status $request_completion '
        '$server_protocol";\n'
        '    access_log @TMP@/end.log end;\n')
SERVER = ('        http2 on;\n'
          '        location /v { respond 200 "v"; }\n'
          '        location /slow { proxy_pass http://127.0.0.1:%d; proxy_read_timeout 5s; }\n'
          '        location /close { return 444; }\n')


@pytest.fixture(scope="module")
def srv(sws_module):
    # A backend that takes connections (the kernel's backlog) and never
    # answers: the response is being produced while the client leaves.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    srv = sws_module(http=HTTP, server=SERVER % silent.getsockname()[1])
    srv.silent = silent
    return srv


def lines(srv, needle):
    return [l for l in h._read(srv.tmp / "end.log").splitlines() if needle in l]


def test_complete_requests_logged_once_over_both_protocols(srv):
    r = h.curl(srv.url("/v?h1"))
    assert r.status == 200, r
    r = h.curl(srv.url("/v?h2"), prior_knowledge=True)
    assert r.status == 200, r
    assert h.wait_for(lambda: lines(srv, "/v?h2"), 3)
    time.sleep(0.2)
    assert lines(srv, "/v?h1") == ["/v?h1 200 OK HTTP/1.1"]
    assert lines(srv, "/v?h2") == ["/v?h2 200 OK HTTP/2.0"]


def test_client_leaving_mid_head_is_logged_400_once(srv):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=h.NET_TIMEOUT)
    s.sendall(b"GET /v?mid-head HTTP/1.1\r\nHost: localhost\r\n")
    time.sleep(0.2)
    s.close()
    assert h.wait_for(lambda: lines(srv, "/v?mid-head"), 3), h._read(srv.tmp / "end.log")
    time.sleep(0.2)
    [line] = lines(srv, "/v?mid-head")
    assert line.split()[1:3] == ["400", "-"], line


def test_client_leaving_during_the_response_is_logged_499_once(srv):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=h.NET_TIMEOUT)
    s.sendall(b"GET /slow?h1-gone HTTP/1.1\r\nHost: localhost\r\n\r\n")
    time.sleep(0.3)
    s.close()
    assert h.wait_for(lambda: lines(srv, "/slow?h1-gone"), 6), h._read(srv.tmp / "end.log")
    time.sleep(0.2)
    [line] = lines(srv, "/slow?h1-gone")
    assert line.split()[1:3] == ["499", "-"], line


@pytest.mark.parametrize("how", ["reset", "closed"])
def test_h2_client_leaving_during_the_response_is_logged_499_once(srv, how):
    # The stream reset (the connection goes on), or the connection closed.
    uri = "/slow?h2-" + how
    with h2raw.H2(srv.port) as c:
        sid = c.get(uri)
        time.sleep(0.3)
        if how == "reset":
            c.send_frame(h2raw.RstStreamFrame(sid, error_code=h2raw.CANCEL))
            _, body, _ = c.response(c.get("/v?h2-after"))
            assert body == b"v"
    assert h.wait_for(lambda: lines(srv, uri), 3), h._read(srv.tmp / "end.log")
    time.sleep(0.2)
    [line] = lines(srv, uri)
    assert line.split()[1:] == ["499", "-", "HTTP/2.0"], line


def test_cut_response_is_not_complete(srv):
    # "return 444" closes without an answer: logged 444, not complete.
    with pytest.raises(Exception):
        h.curl(srv.url("/close?cut"))
    assert h.wait_for(lambda: lines(srv, "/close?cut"), 3), h._read(srv.tmp / "end.log")
    [line] = lines(srv, "/close?cut")
    assert line.split()[1:3] == ["444", "-"], line
