"""HTTP/2 over TLS keeps OpenSSL's record buffers while a connection goes
on at once (no allocation per request), frees them once it has been idle
for a second, with the HPACK tables (sws_http_v2_trim), and at once when
its open streams wait with nothing to write (a long poll must not hold
them): the idle memory of bench/idle stays what it was, and the
connection serves on."""
import time

import h2raw
import swsharness as h
import tlsutil as t

FILES = {"html/hello.txt": b"Hello, buffers!\n"}
FREED = "http2 connection idle: TLS record buffers freed"


def get(c, path="/hello.txt"):
    sid = c.get(path)
    hdrs, body, _ = c.response(sid)
    return h2raw.status(hdrs), body


def freed(srv):
    return srv.error_log().count(FREED)


def test_busy_connection_keeps_then_idle_frees_and_serves_on(sws, pki):
    srv = t.launch(sws, pki, listen="http2", files=FILES, loglevel="debug", keepalive="30s")
    with h2raw.H2(srv.port, tls=True) as c:
        for _ in range(5):          # back to back: nothing freed between them
            assert get(c) == (200, FILES["html/hello.txt"])
        assert freed(srv) == 0, srv.error_log()
        assert h.wait_for(lambda: freed(srv) == 1, timeout=4.0), srv.error_log()[-2000:]
        # taken again by the next request, freed again after the next pause
        assert get(c) == (200, FILES["html/hello.txt"])
        assert h.wait_for(lambda: freed(srv) == 2, timeout=4.0), srv.error_log()[-2000:]
        time.sleep(1.3)             # idle on: nothing more to free
        assert freed(srv) == 2
        assert get(c) == (200, FILES["html/hello.txt"])


def test_cleartext_h2_has_no_tls_buffers(sws, pki):
    srv = t.launch(sws, pki, listen="http2", files=FILES, loglevel="debug", keepalive="30s",
                   server="        listen 127.0.0.1:@PORT2@ http2;\n", ports=2)
    with h2raw.H2(srv.ports[1]) as c:
        assert get(c) == (200, FILES["html/hello.txt"])
        time.sleep(1.5)
        assert get(c) == (200, FILES["html/hello.txt"])
    assert freed(srv) == 0


def test_streams_waiting_free_them_at_once(sws, pki):
    # The response is complete but the request body is still to come: the
    # stream stays open, nothing is to be written, and the buffers go.
    srv = t.launch(sws, pki, listen="http2", files=FILES, loglevel="debug", keepalive="30s")
    waiting = "http2 streams waiting: TLS record buffers freed"
    with h2raw.H2(srv.port, tls=True) as c:
        assert get(c) == (200, FILES["html/hello.txt"])
        assert waiting not in srv.error_log()
        sid = c.headers(c.request_headers("/respond", method="POST",
                                          extra=[("content-length", "5")]), end_stream=False)
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"Hello, world!"
        assert h.wait_for(lambda: waiting in srv.error_log()), srv.error_log()[-2000:]
        c.data(sid, b"12345", end_stream=True)
        assert get(c) == (200, FILES["html/hello.txt"])
