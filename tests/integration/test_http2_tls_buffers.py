"""HTTP/2 over TLS keeps OpenSSL's record buffers between requests once a
connection has come back for a second stream (no allocation per request
then), frees them once it has been idle for a second, with the HPACK
tables (sws_http_v2_trim), and at once when its open streams wait with
nothing to write (a long poll must not hold them). A connection left
idle after one request never keeps them: bench/idle's connections cost
what they did."""
import time

import h2raw
import swsharness as h
import tlsutil as t

FILES = {"html/hello.txt": b"Hello, buffers!\n"}
FREED = "http2 connection idle: TLS record buffers freed"
WAITING = "http2 streams waiting: TLS record buffers freed"
HELLO = (200, FILES["html/hello.txt"])


def get(c, path="/hello.txt"):
    sid = c.get(path)
    hdrs, body, _ = c.response(sid)
    return h2raw.status(hdrs), body


def freed(srv):
    return srv.error_log().count(FREED)


def launch(sws, pki, **kw):
    return t.launch(sws, pki, listen="http2", files=FILES, loglevel="debug", keepalive="30s",
                    **kw)


def test_busy_connection_keeps_then_idle_frees_and_serves_on(sws, pki):
    srv = launch(sws, pki)
    with h2raw.H2(srv.port, tls=True) as c:
        for _ in range(5):          # back to back: nothing freed between them
            assert get(c) == HELLO
        assert freed(srv) == 0, srv.error_log()
        assert h.wait_for(lambda: freed(srv) == 1, timeout=4.0), srv.error_log()[-2000:]
        # taken again by the next requests, freed again after the next pause
        assert get(c) == HELLO
        assert h.wait_for(lambda: freed(srv) == 2, timeout=4.0), srv.error_log()[-2000:]
        time.sleep(1.3)             # idle on: nothing more to free
        assert freed(srv) == 2
        assert get(c) == HELLO


def test_one_request_then_idle_never_keeps_them(sws, pki):
    srv = launch(sws, pki)
    with h2raw.H2(srv.port, tls=True) as c:
        assert get(c) == HELLO
        time.sleep(1.5)             # past the second after which kept ones go
        assert freed(srv) == 0, srv.error_log()[-2000:]
        assert get(c) == HELLO


def test_streams_waiting_free_them_at_once(sws, pki):
    # The response is complete but the request body is still to come: the
    # stream stays open, nothing is to be written, and the buffers go.
    srv = launch(sws, pki)
    with h2raw.H2(srv.port, tls=True) as c:
        assert get(c) == HELLO and get(c) == HELLO
        assert WAITING not in srv.error_log()
        sid = c.headers(c.request_headers("/respond", method="POST",
                                          extra=[("content-length", "5")]), end_stream=False)
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"Hello, world!"
        assert h.wait_for(lambda: WAITING in srv.error_log()), srv.error_log()[-2000:]
        c.data(sid, b"12345", end_stream=True)
        assert get(c) == HELLO


def test_cleartext_h2_has_no_tls_buffers(sws, pki):
    srv = launch(sws, pki, server="        listen 127.0.0.1:@PORT2@ http2;\n", ports=2)
    with h2raw.H2(srv.ports[1]) as c:
        assert get(c) == HELLO and get(c) == HELLO
        time.sleep(1.5)
        assert get(c) == HELLO
    assert freed(srv) == 0
