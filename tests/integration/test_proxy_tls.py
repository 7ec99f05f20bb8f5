"""proxy_pass https://: TLS to upstream servers against real TLS origins
(nginx, and a second scalwsd): keep-alive over TLS, SNI, verification (CA,
name, depth), client certificates, session reuse, the handshake timeout,
and the configuration errors. Certificates are made at test time
(tlsutil.Pki)."""
import os
import signal
import socket

import pytest

import swsharness as h
import tlsutil
from test_proxy_real import NGINX, Proc

ORIGIN_CONF = """
daemon off;
master_process off;
worker_processes 1;
error_log %(tmp)s/nginx-error.log info;
pid %(tmp)s/nginx.pid;
events { worker_connections 64; }
http {
    log_format t "$connection|$ssl_session_reused|$ssl_server_name|$request_uri";
    access_log %(tmp)s/access.log t;
    client_body_temp_path %(tmp)s/cb;
    proxy_temp_path %(tmp)s/pt;
    fastcgi_temp_path %(tmp)s/ft;
    uwsgi_temp_path %(tmp)s/ut;
    scgi_temp_path %(tmp)s/st;
    keepalive_requests 10000;
    ssl_session_cache shared:S:1m;
    server {
        listen 127.0.0.1:%(port)d ssl;
        server_name a.test;
        ssl_certificate %(a_crt)s;
        ssl_certificate_key %(a_key)s;
        %(extra)s
        location / {
            return 200 "a|$ssl_server_name|$ssl_session_reused|$ssl_client_s_dn|$request_uri";
        }
    }
    server {
        listen 127.0.0.1:%(port)d ssl;
        server_name b.test;
        ssl_certificate %(b_crt)s;
        ssl_certificate_key %(b_key)s;
        location / { return 200 "b|$ssl_server_name|$ssl_session_reused||$request_uri"; }
    }
}
"""


class TlsOrigin:
    def __init__(self, d, port, proc):
        self.dir = d
        self.port = port
        self.proc = proc
        self.addr = "127.0.0.1:%d" % port

    def log(self, n, timeout=3):
        path = self.dir / "access.log"
        read = lambda: [ln.split("|") for ln in
                        (path.read_text().splitlines() if path.exists() else []) if ln]
        h.wait_for(lambda: len(read()) >= n, timeout)
        return read()


@pytest.fixture
def tls_origin(tmp_path, pki):
    """Factory: an nginx TLS origin (servers a.test, the default, and
    b.test) with optional extra directives for a.test and another
    certificate for it."""
    if NGINX is None:
        pytest.skip("nginx is not installed")
    started = []

    def start(extra="", a_cert=None):
        d = tmp_path / ("nginx%d" % len(started))
        d.mkdir(parents=True)
        h.make_traversable(d)
        port = h.free_port()
        a_crt, a_key = a_cert or pki.chain("a.test")
        b_crt, b_key = pki.chain("b.test")
        (d / "nginx.conf").write_text(ORIGIN_CONF % {
            "tmp": d, "port": port, "extra": extra, "a_crt": a_crt, "a_key": a_key,
            "b_crt": b_crt, "b_key": b_key})
        p = Proc([NGINX, "-p", str(d) + "/", "-c", str(d / "nginx.conf"), "-e",
                  str(d / "nginx-error.log")], port, d, d / "stdout.txt")
        o = TlsOrigin(d, port, p)
        started.append(o)
        return o

    yield start
    for o in started:
        o.proc.stop()


def body(r):
    assert r.status == 200, r
    return r.body.decode().split("|")


# ------------------------------------------------------------ proxying

def test_https_proxying(sws, tls_origin):
    o = tls_origin()
    srv = sws(server="location / { proxy_pass https://%s; }" % o.addr)
    b = body(h.curl(srv.url("/x?y=1")))
    assert b[0] == "a" and b[4] == "/x?y=1"
    assert b[1] == ""                                 # no SNI by default (like nginx)
    r = h.curl(srv.url("/p"), method="POST", body=b"z" * 100000)
    assert r.status == 200


def test_keepalive_over_tls(sws, tls_origin):
    o = tls_origin()
    srv = sws(server="location / { proxy_pass https://%s; }" % o.addr)
    for _ in range(3):
        with h.Conn(srv.port) as c:
            for i in range(3):
                c.send(h.request("GET", "/k%d" % i))
                assert c.read_response().status == 200
    lines = o.log(9)
    assert len({ln[0] for ln in lines}) == 1          # one TLS connection for all 9


def test_scalwsd_origin(sws, pki):
    origin = tlsutil.launch(sws, pki, server="location /r { respond 200 \"tls origin\"; }")
    srv = sws(server="location / { proxy_pass https://127.0.0.1:%d; }" % origin.port)
    r = h.curl(srv.url("/r"))
    assert r.status == 200 and r.body == b"tls origin"


def test_variables_https(sws, tls_origin):
    o = tls_origin()
    srv = sws(server="location / { proxy_pass https://127.0.0.1:$arg_p/fixed; }")
    b = body(h.curl(srv.url("/any?p=%d" % o.port)))
    assert b[0] == "a" and b[4] == "/fixed"


# ------------------------------------------------------------ SNI

def test_sni(sws, tls_origin):
    o = tls_origin()
    srv = sws(http="upstream b.test { server %s; keepalive 8; }" % o.addr,
              server="location /sni/ { proxy_ssl_server_name on; proxy_pass https://b.test/; } "
                     "location /named/ { proxy_ssl_server_name on; proxy_ssl_name a.test; "
                     "proxy_pass https://b.test/; } "
                     "location /nosni/ { proxy_pass https://b.test/; }")
    # alternating: kept connections are only reused by requests of the same name
    for _ in range(2):
        assert body(h.curl(srv.url("/sni/x")))[:2] == ["b", "b.test"]
        # nginx picks its server by Host (b.test) once the SNI (a.test) chose the certificate
        assert body(h.curl(srv.url("/named/x")))[:2] == ["b", "a.test"]
        assert body(h.curl(srv.url("/nosni/x")))[:2] == ["b", ""]


def test_no_sni_for_ip_address(sws, tls_origin):
    o = tls_origin()
    srv = sws(server="location / { proxy_ssl_server_name on; proxy_pass https://%s; }" % o.addr)
    assert body(h.curl(srv.url("/")))[:2] == ["a", ""]


# ------------------------------------------------------------ verification

def test_verify_right_ca(sws, tls_origin, pki):
    o = tls_origin()
    srv = sws(http="upstream a.test { server %s; }" % o.addr,
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_pass https://a.test; }" % pki.ca)
    assert body(h.curl(srv.url("/")))[0] == "a"


def test_verify_wrong_ca(sws, tls_origin, tmp_path):
    other = tlsutil.Pki(tmp_path / "other-pki")
    o = tls_origin()
    srv = sws(http="upstream a.test { server %s; }" % o.addr,
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_pass https://a.test; }" % other.ca)
    assert h.curl(srv.url("/")).status == 502
    assert h.wait_for(lambda: "certificate verify error" in srv.error_log(), 2)
    # the origin sends its chain with the (other) root: "self-signed ... in chain"
    assert "self-signed certificate in certificate chain" in srv.error_log()


def test_verify_name_mismatch(sws, tls_origin, pki):
    o = tls_origin()
    srv = sws(http="upstream a.test { server %s; }" % o.addr,
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_ssl_name c.test; proxy_pass https://a.test; }" % pki.ca)
    assert h.curl(srv.url("/")).status == 502
    assert h.wait_for(lambda: "hostname mismatch" in srv.error_log(), 2)
    assert 'for name "c.test"' in srv.error_log()


def test_verify_off_accepts_anything(sws, tls_origin, tmp_path):
    other = tlsutil.Pki(tmp_path / "other-pki")
    o = tls_origin()
    srv = sws(server="location / { proxy_ssl_trusted_certificate %s; proxy_ssl_name x.y; "
                     "proxy_pass https://%s; }" % (other.ca, o.addr))
    assert body(h.curl(srv.url("/")))[0] == "a"


def test_verify_depth(sws, tls_origin, pki):
    o = tls_origin(a_cert=pki.intermediate_chain("a.test"))
    srv = sws(http="upstream a.test { server %s; }" % o.addr,
              server="proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "location /d0/ { proxy_ssl_verify_depth 0; proxy_pass https://a.test/; } "
                     "location / { proxy_pass https://a.test; }" % pki.ca)
    assert body(h.curl(srv.url("/ok")))[0] == "a"     # default 1: one intermediate
    assert h.curl(srv.url("/d0/x")).status == 502
    assert h.wait_for(lambda: "certificate chain too long" in srv.error_log(), 2)


# ------------------------------------------------------------ client certificates

def test_client_certificate(sws, tls_origin, pki):
    o = tls_origin(extra="ssl_verify_client on; ssl_client_certificate %s;" % pki.ca)
    crt, key = pki.client("proxy-client")
    srv = sws(server="location /with/ { proxy_ssl_certificate %s; "
                     "proxy_ssl_certificate_key %s; proxy_pass https://%s/; } "
                     "location /without/ { proxy_pass https://%s/; }"
                     % (crt, key, o.addr, o.addr))
    b = body(h.curl(srv.url("/with/x")))
    assert b[0] == "a" and b[3] == "CN=proxy-client"
    assert h.curl(srv.url("/without/x")).status == 400  # nginx: no certificate sent


# ------------------------------------------------------------ sessions

def test_session_reuse(sws, tls_origin):
    o = tls_origin()
    srv = sws(http="upstream nokeep { server %s; keepalive 0; }" % o.addr,
              server="location /on/ { proxy_pass https://nokeep/; } "
                     "location /off/ { proxy_ssl_session_reuse off; proxy_pass https://nokeep/; }")
    for _ in range(3):
        assert h.curl(srv.url("/on/x")).status == 200
    lines = o.log(3)
    assert [ln[1] for ln in lines] == [".", "r", "r"]
    assert len({ln[0] for ln in lines}) == 3           # three connections
    for _ in range(2):
        assert h.curl(srv.url("/off/x")).status == 200
    assert [ln[1] for ln in o.log(5)[3:]] == [".", "."]


# ------------------------------------------------------------ failures

def test_handshake_timeout(sws):
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)                    # connects complete; nothing ever answers
    try:
        port = lsock.getsockname()[1]
        srv = sws(server="location / { proxy_connect_timeout 500ms; "
                         "proxy_pass https://127.0.0.1:%d; }" % port)
        r = h.curl(srv.url("/"))
        assert r.status == 504
        assert h.wait_for(lambda: "timed out in the TLS handshake" in srv.error_log(), 2)
        # the worker was not blocked meanwhile, and still serves
        assert h.curl(srv.url("/respond")).status == 200
    finally:
        lsock.close()


def test_handshake_with_plain_server(sws):
    plain = sws()                      # answers a ClientHello with a plain 400
    srv = sws(server="location / { proxy_connect_timeout 2s; "
                     "proxy_pass https://127.0.0.1:%d; }" % plain.port)
    assert h.curl(srv.url("/")).status == 502
    assert h.wait_for(lambda: "TLS handshake with upstream" in srv.error_log(), 2)


def test_failed_handshake_tries_next_server(sws, tls_origin):
    plain = sws()
    o = tls_origin()
    srv = sws(http="upstream mixed { server 127.0.0.1:%d max_fails=0; server %s; }"
              % (plain.port, o.addr),
              server="location / { proxy_pass https://mixed; }")
    for _ in range(3):
        assert body(h.curl(srv.url("/")))[0] == "a"


# ------------------------------------------------------------ health checks over TLS

def probes(o, uri="/hc"):
    path = o.dir / "access.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [ln.split("|") for ln in lines if ln.endswith("|" + uri)]


def test_health_tls_probes_stay_up(sws, tls_origin, pki):
    o = tls_origin()
    srv = sws(http="upstream g { server %s; health_check interval=100ms uri=/hc; }" % o.addr,
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_ssl_server_name on; proxy_ssl_name a.test; "
                     "proxy_pass https://g; }" % pki.ca)
    # nginx logs a probe only after a good handshake: TLS, with the location's name
    assert h.wait_for(lambda: len(probes(o)) >= 5, 4)
    assert all(p[2] == "a.test" for p in probes(o))
    # later probes resume the session of an earlier one
    assert "r" in [p[1] for p in probes(o)]
    assert "unhealthy" not in srv.error_log()
    assert body(h.curl(srv.url("/x")))[:2] == ["a", "a.test"]


def test_health_tls_default_name_is_the_group(sws, tls_origin, pki):
    o = tls_origin()
    srv = sws(http="upstream b.test { server %s; health_check interval=100ms uri=/hc; }"
              % o.addr,
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_ssl_server_name on; proxy_pass https://b.test; }" % pki.ca)
    assert h.wait_for(lambda: len(probes(o)) >= 3, 4)
    assert {p[2] for p in probes(o)} == {"b.test"}
    assert "unhealthy" not in srv.error_log()


def test_health_tls_origin_stops_answering(sws, tls_origin):
    good, o = tls_origin(), tls_origin()
    srv = sws(workers=2,
              http="upstream g { server %s; server %s; "
                   "health_check interval=100ms timeout=300ms uri=/hc fails=2 passes=2; }"
                   % (good.addr, o.addr),
              server="location / { proxy_pass https://g; }")
    assert h.wait_for(lambda: len(probes(o)) >= 2, 4)
    os.killpg(o.proc.p.pid, signal.SIGSTOP)      # connects complete; no handshake
    try:
        assert h.wait_file_contains(srv.error_log_path,
                                    "%s of \"g\" failed its health check (timed out in the "
                                    "TLS handshake)" % o.addr, 4)
        n = len(good.log(1))
        for _ in range(10):
            assert body(h.curl(srv.url("/q")))[0] == "a"   # each within the timeout
        assert len(good.log(n + 10)) >= n + 10            # all went to the good one
    finally:
        os.killpg(o.proc.p.pid, signal.SIGCONT)
    assert h.wait_file_contains(srv.error_log_path, "%s of \"g\" passed its health checks"
                                % o.addr, 4)
    assert h.curl(srv.url("/respond")).status == 200


def test_health_tls_handshake_fails(sws, tls_origin):
    plain = sws()                      # answers a ClientHello with a plain 400
    o = tls_origin()
    srv = sws(http="upstream g { server 127.0.0.1:%d; server %s; "
                   "health_check interval=100ms uri=/hc; }" % (plain.port, o.addr),
              server="location / { proxy_pass https://g; }")
    assert h.wait_file_contains(srv.error_log_path, "127.0.0.1:%d of \"g\" failed its "
                                "health check (TLS handshake failed)" % plain.port, 4)
    assert "%s of \"g\" failed" % o.addr not in srv.error_log()
    for _ in range(5):
        assert body(h.curl(srv.url("/")))[0] == "a"


def test_health_tls_verification_fails(sws, tls_origin, pki):
    good = tls_origin()
    wrong = tls_origin(a_cert=pki.chain("c.test"))     # a good chain for another name
    srv = sws(http="upstream g { server %s; server %s; health_check interval=100ms "
                   "uri=/hc; }" % (good.addr, wrong.addr),
              server="location / { proxy_ssl_verify on; proxy_ssl_trusted_certificate %s; "
                     "proxy_ssl_name a.test; proxy_pass https://g; }" % pki.ca)
    assert h.wait_file_contains(srv.error_log_path, "%s of \"g\" failed its health check "
                                "(hostname mismatch)" % wrong.addr, 4)
    assert "%s of \"g\" failed" % good.addr not in srv.error_log()
    for _ in range(6):
        assert body(h.curl(srv.url("/v")))[0] == "a"
    assert not [ln for ln in wrong.log(0) if ln[-1] == "/v"]


def test_health_tls_refused_then_back(sws, tls_origin):
    good, o = tls_origin(), tls_origin()
    srv = sws(http="upstream g { server %s; server %s max_fails=0; "
                   "health_check interval=100ms uri=/hc; }" % (good.addr, o.addr),
              server="location / { proxy_pass https://g; }")
    assert h.wait_for(lambda: len(probes(o)) >= 1, 4)
    o.proc.stop()
    assert h.wait_file_contains(srv.error_log_path, "%s of \"g\" failed its health check "
                                "(connect failed)" % o.addr, 4)
    o.proc = Proc(o.proc.p.args, o.port, o.dir, o.dir / "stdout.txt")
    assert h.wait_file_contains(srv.error_log_path, "%s of \"g\" passed" % o.addr, 4)
    n = len(probes(o))
    assert h.wait_for(lambda: len(probes(o)) > n, 2)


def test_health_plain_group_stays_plain(sws, tls_origin):
    o = tls_origin()
    srv = sws(http="upstream g { server %s; health_check interval=100ms uri=/hc; }" % o.addr,
              server="location / { proxy_pass http://g; }")
    # the TLS origin answers plain probes with 400: the group is plain HTTP
    assert h.wait_file_contains(srv.error_log_path, "failed its health check (bad status)",
                                4)


def test_health_tls_mixed_use_warns(sws, tls_origin):
    o = tls_origin()
    srv = sws(http="upstream g { server %s; health_check interval=100ms uri=/hc; }" % o.addr,
              server="location /p/ { proxy_pass http://g/; } "
                     "location / { proxy_ssl_name $host; proxy_pass https://g; }")
    out = srv.stderr() + srv.error_log()
    assert 'upstream "g" is used over both http:// and https://' in out
    assert 'the health probes of upstream "g" use its name for TLS' in out
    assert h.wait_for(lambda: len(probes(o)) >= 2, 4)
    assert "unhealthy" not in srv.error_log()


def test_config_errors(tmp_path, pki):
    cases = [
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_verify on; "
         "proxy_pass https://127.0.0.1:1; } }", "needs a trusted certificate"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_certificate %s; "
         "proxy_pass https://127.0.0.1:1; } }" % pki.ca, "both ssl_certificate"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_protocols SSLv9; "
         "proxy_pass https://127.0.0.1:1; } }", 'invalid value "SSLv9"'),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_verify_depth x; "
         "proxy_pass https://127.0.0.1:1; } }", "invalid value"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_trusted_certificate "
         "/nonexistent/ca.pem; proxy_pass https://127.0.0.1:1; } }",
         "cannot load trusted certificates"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_ciphers NOTACIPHER; "
         "proxy_pass https://127.0.0.1:1; } }", "NOTACIPHER"),
        ("server { listen 127.0.0.1:@PORT@; location / { proxy_ssl_name $nosuch; "
         "proxy_pass https://127.0.0.1:1; } }", 'unknown variable "$nosuch"'),
    ]
    h.assert_config_errors(tmp_path, cases)
