"""listen ... proxy_protocol: PROXY v1 and v2 headers before HTTP and TLS,
malformed ones closed at once, the addresses as variables and (realip)
as the client."""
import socket
import subprocess
import struct
import time

import pytest

import swsharness as h
import tlsutil

V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"

HTTP = """
    log_format pp '$request_uri $remote_addr pp=$proxy_protocol_addr:$proxy_protocol_port '
                  'to=$proxy_protocol_server_addr:$proxy_protocol_server_port '
                  'realip=$realip_remote_addr';
    access_log @TMP@/pp.log pp;
    client_header_timeout 2s;
"""

SERVERS = """
    server {
        listen 127.0.0.1:@PORT2@ proxy_protocol;
        listen 127.0.0.1:@PORT4@ proxy_protocol http2;
        location / { respond 200 "plain"; }
    }
    server {
        listen 127.0.0.1:@PORT3@ proxy_protocol;
        set_real_ip_from 127.0.0.1;
        real_ip_header proxy_protocol;
        location / { respond 200 "realip"; }
    }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(ports=4, http=HTTP, servers=SERVERS)


def log(srv):
    return h._read(srv.tmp / "pp.log")


def v1(src="192.0.2.7", dst="198.51.100.1", sport=4321, dport=443, proto="TCP4"):
    return ("PROXY %s %s %s %d %d\r\n" % (proto, src, dst, sport, dport)).encode()


def v2(cmd=1, fam=0x11, addrs=b"", tlvs=b"", ver=2, length=None):
    body = addrs + tlvs
    n = len(body) if length is None else length
    return V2_SIG + bytes([(ver << 4) | cmd, fam]) + struct.pack("!H", n) + body


def v2_inet(src, dst, sport, dport, tlvs=b""):
    return v2(fam=0x11, addrs=socket.inet_aton(src) + socket.inet_aton(dst)
              + struct.pack("!HH", sport, dport), tlvs=tlvs)


def v2_inet6(src, dst, sport, dport):
    return v2(fam=0x21, addrs=socket.inet_pton(socket.AF_INET6, src)
              + socket.inet_pton(socket.AF_INET6, dst) + struct.pack("!HH", sport, dport))


def ask(srv, header, path, port=None, split=False):
    with h.Conn(port or srv.ports[1]) as c:
        data = header + h.request("GET", path)
        if split:
            for i in range(len(data)):
                c.send(data[i:i + 1])
        else:
            c.send(data)
        return c.read_response()


def logged(srv, path):
    assert h.wait_for(lambda: path + " " in log(srv)), log(srv)
    return [line for line in log(srv).splitlines() if line.startswith(path + " ")][-1]


def test_v1_tcp4(srv):
    r = ask(srv, v1(), "/v1")
    assert r.status == 200 and r.body == b"plain", r
    assert logged(srv, "/v1") == ("/v1 127.0.0.1 pp=192.0.2.7:4321 to=198.51.100.1:443 "
                                  "realip=127.0.0.1")


def test_v1_byte_by_byte(srv):
    r = ask(srv, v1(sport=1, dport=65535), "/bytes", split=True)
    assert r.status == 200, r
    assert "pp=192.0.2.7:1 to=198.51.100.1:65535" in logged(srv, "/bytes")


def test_v1_tcp6_and_unknown(srv):
    r = ask(srv, v1("2001:db8::5", "2001:db8::1", 80, 8080, "TCP6"), "/v16")
    assert r.status == 200, r
    assert "pp=2001:db8::5:80 to=2001:db8::1:8080" in logged(srv, "/v16")
    r = ask(srv, b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", "/unknown")
    assert r.status == 200, r
    assert "/unknown 127.0.0.1 pp=-:- to=-:-" in logged(srv, "/unknown")


def test_v2_inet_inet6_with_tlvs(srv):
    tlvs = b"\x01\x00\x02h2" + b"\x04\x00\x00" + b"\xea\x00\x03abc"
    r = ask(srv, v2_inet("203.0.113.9", "10.0.0.1", 5555, 80, tlvs), "/v2")
    assert r.status == 200, r
    assert "pp=203.0.113.9:5555 to=10.0.0.1:80" in logged(srv, "/v2")
    r = ask(srv, v2_inet6("2001:db8::9", "::1", 1000, 2000), "/v26", split=True)
    assert r.status == 200, r
    assert "pp=2001:db8::9:1000 to=::1:2000" in logged(srv, "/v26")


def test_v2_local_and_unspec(srv):
    # LOCAL (the balancer's own health check): the connection's addresses
    r = ask(srv, v2(cmd=0, fam=0x00, addrs=b"ignored"), "/local")
    assert r.status == 200, r
    assert "/local 127.0.0.1 pp=-:- to=-:-" in logged(srv, "/local")
    r = ask(srv, v2(cmd=1, fam=0x00), "/unspec")
    assert r.status == 200, r


def test_realip_from_proxy_protocol(srv):
    r = ask(srv, v1("192.0.2.99", "192.0.2.1", 7777, 80), "/real", port=srv.ports[2])
    assert r.status == 200 and r.body == b"realip", r
    assert logged(srv, "/real").startswith("/real 192.0.2.99 pp=192.0.2.99:7777")
    assert logged(srv, "/real").endswith("realip=127.0.0.1")


def test_keepalive_after_header(srv):
    with h.Conn(srv.ports[1]) as c:
        c.send(v1() + h.request("GET", "/ka1"))
        assert c.read_response().status == 200
        c.send(h.request("GET", "/ka2"))
        assert c.read_response().status == 200
    assert "pp=192.0.2.7:4321" in logged(srv, "/ka2")


@pytest.mark.parametrize("data", [
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",                  # no header at all
    b"\x16\x03\x01\x00\x05hello",                          # TLS straight away
    b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n",                   # LF without CR
    b"PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n",                   # a field missing
    b"PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n",               # one too many
    b"PROXY TCP4 1.2.3.999 5.6.7.8 1 2\r\n",               # not an address
    b"PROXY TCP4 ::1 ::2 1 2\r\n",                         # family mismatch
    b"PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n",             # port too large
    b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",
    b"PROXY UNKNOWN " + b"x" * 120 + b"\r\n",               # over 107 bytes
    b"PROXY\r\n",
    V2_SIG[:11] + b"X",                                    # signature broken
    v2(ver=1),                                             # version 1 in v2 framing
    v2(cmd=2),                                             # unknown command
    v2(fam=0x41),                                          # unknown family
    v2(fam=0x11, addrs=b"\x01" * 11),                      # inet needs 12 bytes
    v2(length=4000),                                       # oversized
    v2_inet("1.2.3.4", "5.6.7.8", 1, 2, tlvs=b"\x01\x00\x09ab"),  # TLV past the end
    v2_inet("1.2.3.4", "5.6.7.8", 1, 2, tlvs=b"\x01\x00"),        # TLV header cut
])
def test_malformed_closed_without_response(srv, data):
    with h.Conn(srv.ports[1]) as c:
        c.send(data + b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert c.closed_within(3.0)
        assert c.buf == b"", c.buf
    assert "broken PROXY protocol header" in srv.error_log()


def test_incomplete_header_times_out(srv):
    with h.Conn(srv.ports[1], timeout=10) as c:
        c.send(b"PROXY TCP4 1.2")
        t = time.monotonic()
        assert c.closed_within(8.0)
        assert time.monotonic() - t >= 1.0          # client_header_timeout 2s
        assert c.buf == b""
    assert h.wait_for(lambda: "timed out sending the PROXY protocol header"
                      in srv.error_log())


@pytest.mark.parametrize("opts", [["--http1.1"], ["--http2-prior-knowledge"]])
def test_curl_haproxy_protocol(srv, opts):
    # a real client that sends the header itself (v1), then HTTP/1.1 or h2c
    path = "/curl%d" % len(opts[0])
    r = subprocess.run(["curl", "-sS", "--max-time", "10", "--haproxy-protocol",
                        "-o", "-", "-w", "%{http_version}"] + opts
                       + ["http://127.0.0.1:%d%s" % (srv.ports[3], path)],
                       capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout in (b"plain1.1", b"plain2"), r.stdout
    line = logged(srv, path)
    assert line.startswith(path + " 127.0.0.1 pp=127.0.0.1:"), line


def test_plain_port_unaffected(srv):
    r = h.curl(srv.url("/respond"))
    assert r.status == 200 and r.body == b"Hello, world!"


def test_before_tls(sws, pki):
    s = tlsutil.launch(sws, pki, listen="proxy_protocol", http=HTTP)
    raw = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    try:
        raw.sendall(v2_inet("198.51.100.77", "127.0.0.1", 999, 443))
        tls = tlsutil.context().wrap_socket(raw, server_hostname="localhost")
        tls.sendall(h.request("GET", "/respond"))
        data = b""
        while b"Hello, world!" not in data:
            chunk = tls.recv(4096)
            assert chunk, data
            data += chunk
        assert data.startswith(b"HTTP/1.1 200"), data
    finally:
        raw.close()
    assert h.wait_for(lambda: "pp=198.51.100.77:999" in h._read(s.tmp / "pp.log"))
    # without the header, the TLS port closes at once
    with h.Conn(s.port) as c:
        c.send(b"\x16\x03\x01\x00\x05hello")
        assert c.closed_within(3.0) and c.buf == b""


def test_config_errors(tmp_path):
    h.assert_config_errors(tmp_path, [
        ("server { listen 127.0.0.1:@PORT2@ proxy_protocols; }",
         'invalid parameter "proxy_protocols"'),
    ], ports=2)
