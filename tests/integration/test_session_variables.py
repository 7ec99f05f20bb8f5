"""The client's variables ($ssl_*, $tcpinfo_*, $scheme, $https, $server_port,
$server_addr, $remote_addr, $connection, $connection_requests) come from the
client session, not from a protocol's connection: HTTP/1.1 and HTTP/2 give
the same answers over TLS, and over plain TCP (h2c by prior knowledge)."""

import re

import pytest

import swsharness as h
import tlsutil as t

FIELDS = ("ssl_protocol", "ssl_cipher", "ssl_server_name", "ssl_session_reused",
          "ssl_alpn_protocol", "https", "scheme", "server_port", "server_addr",
          "remote_addr", "connection_requests", "tcpinfo_rtt", "tcpinfo_rttvar",
          "tcpinfo_snd_cwnd", "tcpinfo_rcv_space", "server_protocol", "http2",
          "request_completion", "status")
FORMAT = ('    log_format sess "$uri ' + " ".join("[$%s]" % f for f in FIELDS) + '";\n'
          '    access_log @TMP@/sess.log sess;\n')


@pytest.fixture(scope="module")
def srv(sws_module, pki):
    # One server on a TLS port (ALPN h2 or http/1.1) and a plain one (h2c
    # by prior knowledge, or HTTP/1.1).
    return t.launch(sws_module, pki, listen="http2", http=FORMAT, ports=2,
                    server="        listen 127.0.0.1:@PORT2@ http2;\n"
                           "        location /v { respond 200 \"v\"; }\n")


def logged(srv, uri):
    """The fields of the log line of uri, by name."""
    line = h.wait_file_contains(srv.tmp / "sess.log", uri + " ")
    assert line, h._read(srv.tmp / "sess.log")
    line = [l for l in line.splitlines() if l.startswith(uri + " ")][-1]
    values = re.findall(r"\[([^\]]*)\]", line)
    assert len(values) == len(FIELDS), line
    # the access log writes an empty value as "-"
    return dict(zip(FIELDS, ("" if v == "-" else v for v in values)))


def get(srv, pki, uri, tls, http2):
    if tls:
        url = "https://localhost:%d%s" % (srv.ports[0], uri)
        r = h.curl(url, cainfo=str(pki.ca), http2=http2, fresh=True)
    else:
        url = "http://127.0.0.1:%d%s" % (srv.ports[1], uri)
        r = h.curl(url, prior_knowledge=http2, fresh=True)
    assert r.status == 200 and r.body == b"v", r
    return logged(srv, uri)


def transport_numbers(v):
    for name in ("tcpinfo_rtt", "tcpinfo_rttvar", "tcpinfo_snd_cwnd", "tcpinfo_rcv_space"):
        assert v[name].isdigit(), (name, v)
    assert int(v["tcpinfo_snd_cwnd"]) > 0 and int(v["tcpinfo_rcv_space"]) > 0, v


SAME = ("ssl_protocol", "ssl_cipher", "ssl_server_name", "ssl_session_reused", "https",
        "scheme", "server_port", "server_addr", "remote_addr", "connection_requests",
        "request_completion", "status")


def test_tls_http1_and_http2_answer_alike(srv, pki):
    v1 = get(srv, pki, "/v/tls1", tls=True, http2=False)
    v2 = get(srv, pki, "/v/tls2", tls=True, http2=True)
    assert v1["server_protocol"] == "HTTP/1.1" and v2["server_protocol"] == "HTTP/2.0"
    for name in SAME:
        assert v1[name] == v2[name], (name, v1, v2)
    assert v1["ssl_protocol"].startswith("TLSv1."), v1
    assert v1["ssl_cipher"] and v1["ssl_server_name"] == "localhost", v1
    assert v1["scheme"] == "https" and v1["https"] == "on", v1
    assert v1["server_port"] == str(srv.ports[0]) and v1["server_addr"] == "127.0.0.1", v1
    assert v1["remote_addr"] == "127.0.0.1" and v1["request_completion"] == "OK", v1
    # what differs is what the protocol is: ALPN's choice and $http2
    assert (v1["ssl_alpn_protocol"], v2["ssl_alpn_protocol"]) == ("http/1.1", "h2")
    assert (v1["http2"], v2["http2"]) == ("", "h2")
    transport_numbers(v1)
    transport_numbers(v2)


def test_plain_http1_and_http2_answer_alike(srv, pki):
    v1 = get(srv, pki, "/v/plain1", tls=False, http2=False)
    v2 = get(srv, pki, "/v/plain2", tls=False, http2=True)
    assert v1["server_protocol"] == "HTTP/1.1" and v2["server_protocol"] == "HTTP/2.0"
    for name in SAME + ("ssl_alpn_protocol",):
        assert v1[name] == v2[name], (name, v1, v2)
    for name in ("ssl_protocol", "ssl_cipher", "ssl_server_name", "ssl_alpn_protocol",
                 "https"):
        assert v1[name] == "", (name, v1)
    assert v1["ssl_session_reused"] == "."
    assert v1["scheme"] == "http" and v1["server_port"] == str(srv.ports[1]), v1
    assert (v1["http2"], v2["http2"]) == ("", "h2c")
    transport_numbers(v1)
    transport_numbers(v2)


def test_connection_requests_count_per_session_on_both(srv, pki):
    # Two requests on one HTTP/1.1 connection and on one HTTP/2 connection
    # (nghttp sends both on it): the session counts them, whatever the
    # protocol.
    import pycurl
    import subprocess
    c = pycurl.Curl()
    try:
        for i in (1, 2):
            url = "http://127.0.0.1:%d/v/c1-%d" % (srv.ports[1], i)
            r = h.curl(url, handle=c)
            assert r.status == 200, r
    finally:
        c.close()
    base = "http://127.0.0.1:%d/v/c2-" % srv.ports[1]
    p = subprocess.run(["nghttp", "-n", base + "1", base + "2"], capture_output=True,
                       timeout=h.NET_TIMEOUT)
    assert p.returncode == 0, p
    counts = [logged(srv, "/v/c1-%d" % i)["connection_requests"] for i in (1, 2)]
    assert counts == ["1", "2"], counts
    # streams run side by side: the later log line has seen both start
    counts = sorted(logged(srv, "/v/c2-%d" % i)["connection_requests"] for i in (1, 2))
    assert counts[-1] == "2" and counts[0] in ("1", "2"), counts
    assert logged(srv, "/v/c2-1")["http2"] == "h2c"
