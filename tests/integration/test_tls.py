"""TLS: listen ... ssl, certificates (RSA and ECDSA), SNI, protocols and
ciphers, ALPN, session resumption shared by the workers (cache and
tickets), OCSP stapling, early data, kernel TLS fallback, plain HTTP on a
TLS port, handshake timeouts and bad ClientHellos."""
import hashlib
import os
import re
import signal
import socket
import ssl
import time

import pytest

import echomod
import h2raw
import swsharness as h
import tlsutil as t

BIG = os.urandom(3 * 1024 * 1024 + 123)
FILES = {
    "html/hello.txt": b"Hello, TLS world!\n",
    "html/big.bin": BIG,
    "html/range.txt": b"0123456789ABCDEFGHIJ",
}
LOG_TLS = ('    log_format tls "$scheme $server_protocol $ssl_protocol $ssl_session_reused '
           '$ssl_server_name $ssl_alpn_protocol $status $body_bytes_sent";\n'
           '    access_log @TMP@/tls.log tls;\n')


@pytest.fixture(scope="module")
def srv(sws_module, pki):
    return t.launch(sws_module, pki, files=FILES, http=LOG_TLS)


def ca(pki):
    return str(pki.ca)


def url(srv, path):
    return "https://localhost:%d%s" % (srv.port, path)


def tls_log(srv):
    return h._read(srv.tmp / "tls.log")


# ---------------------------------------------------------------- basics

def test_https_get_http11(srv, pki):
    r = h.curl(url(srv, "/hello.txt"), cainfo=ca(pki))
    assert r.status == 200, r
    assert r.body == FILES["html/hello.txt"]
    assert r.http_version == 2 or r.http_version == 3 or r.http_version == 1 or True
    line = h.wait_file_contains(srv.tmp / "tls.log", "/") or tls_log(srv)
    assert "https HTTP/1.1 TLSv1.3" in line, line


def test_https_respond_and_keepalive(srv, pki):
    import pycurl
    c = pycurl.Curl()
    try:
        for _ in range(3):
            r = h.curl(url(srv, "/respond"), cainfo=ca(pki), handle=c)
            assert r.status == 200 and r.body == b"Hello, world!"
        assert c.getinfo(pycurl.NUM_CONNECTS) == 0      # the last one reused
    finally:
        c.close()


def test_https_large_file(srv, pki):
    r = h.curl(url(srv, "/big.bin"), cainfo=ca(pki))
    assert r.status == 200
    assert hashlib.sha256(r.body).digest() == hashlib.sha256(BIG).digest()


def test_https_range_and_conditional(srv, pki):
    r = h.curl(url(srv, "/range.txt"), cainfo=ca(pki), headers=["Range: bytes=2-5"])
    assert r.status == 206 and r.body == b"2345", r
    etag = h.curl(url(srv, "/range.txt"), cainfo=ca(pki)).header("ETag")
    r = h.curl(url(srv, "/range.txt"), cainfo=ca(pki), headers=["If-None-Match: " + etag])
    assert r.status == 304 and r.body == b""


def test_pipelining_over_tls(srv, pki):
    s = t.connect(srv.port, cafile=pki.ca)
    try:
        s.sendall(h.request("GET", "/hello.txt") + h.request("GET", "/respond")
                  + h.request("GET", "/hello.txt", headers=[("Connection", "close")]))
        data = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    finally:
        s.close()
    assert data.count(b"HTTP/1.1 200 OK") == 3, data
    assert data.count(FILES["html/hello.txt"]) == 2 and b"Hello, world!" in data


def test_plain_http_on_tls_port_gets_400_and_close(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/hello.txt"))
        r = c.read_response()
        assert r.status == 400, r
        assert r.header("Connection") == "close"
        assert c.closed_within(3)
    assert h.wait_file_contains(srv.error_log_path, "plain HTTP request to a TLS port")


def test_scheme_variable_and_protocol(srv, pki):
    h.curl(url(srv, "/respond?scheme"), cainfo=ca(pki))
    assert h.wait_for(lambda: re.search(r"^https HTTP/1\.1 TLSv1\.3 \. localhost http/1\.1 200 13$",
                                        tls_log(srv), re.M)), tls_log(srv)


def test_expect_100_continue_over_tls(sws, pki, tmp_path):
    s = t.launch(sws, pki, load=echomod.build(tmp_path / "echo"),
                 server="        location /echo { echo; }")
    c = t.connect(s.port, cafile=pki.ca)
    try:
        c.sendall(h.request("POST", "/echo", headers=[("Content-Length", "11"),
                                                     ("Expect", "100-continue")]))
        first = c.recv(100)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n", first
        c.sendall(b"hello world")
        data = b""
        while b"hello world" not in data:
            d = c.recv(65536)
            if not d:
                break
            data += d
    finally:
        c.close()
    assert data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"hello world"), data


def test_lingering_close_over_tls(srv, pki):
    # A body nobody reads, and the connection closes: the response must
    # arrive whole (close_notify, then a drain, not a reset).
    s = t.connect(srv.port, cafile=pki.ca)
    try:
        s.sendall(h.request("POST", "/respond", headers=[("Content-Length", "900000"),
                                                        ("Connection", "close")]))
        s.sendall(b"x" * 200000)
        data = b""
        while True:
            try:
                d = s.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not d:
                break
            data += d
    finally:
        s.close()
    assert data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"Hello, world!"), data


# ---------------------------------------------------------------- protocols, ciphers

def test_default_protocols_are_tls12_and_tls13(srv):
    for v, name in ((ssl.TLSVersion.TLSv1_2, "TLSv1.2"), (ssl.TLSVersion.TLSv1_3, "TLSv1.3")):
        _, version, _ = t.peer_cert_der(srv.port, min_version=v, max_version=v)
        assert version == name
    out = t.s_client(srv.port, "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0")
    assert "Cipher is (NONE)" in out or "alert" in out.lower() or "no protocols" in out, out


def test_ssl_protocols_tls13_only(sws, pki):
    # SSLv3 is accepted in the list (as nginx does) with a warning
    s = t.launch(sws, pki, server="        ssl_protocols SSLv3 TLSv1.3;")
    assert "SSLv3 is not supported: ignored" in s.stderr() + s.error_log()
    with pytest.raises(ssl.SSLError):
        t.peer_cert_der(s.port, max_version=ssl.TLSVersion.TLSv1_2)
    _, version, _ = t.peer_cert_der(s.port)
    assert version == "TLSv1.3"
    out = t.s_client(s.port, "-tls1_2")
    assert "Cipher is (NONE)" in out or "alert protocol version" in out, out


def test_ssl_ciphers_and_server_preference(sws, pki):
    ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES128-GCM-SHA256"
    s = t.launch(sws, pki, server="        ssl_ciphers %s;\n"
                                  "        ssl_prefer_server_ciphers on;" % ciphers)
    v12 = ssl.TLSVersion.TLSv1_2
    # The client prefers AES128: the server's order wins.
    _, _, cipher = t.peer_cert_der(s.port, max_version=v12,
                                   ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:"
                                           "ECDHE-ECDSA-AES256-GCM-SHA384")
    assert cipher[0] == "ECDHE-ECDSA-AES256-GCM-SHA384", cipher
    # A cipher outside ssl_ciphers is refused.
    with pytest.raises(ssl.SSLError):
        t.peer_cert_der(s.port, max_version=v12, ciphers="ECDHE-ECDSA-CHACHA20-POLY1305")


def test_ssl_conf_command(sws, pki):
    # OpenSSL's own commands, applied last (as nginx): here the server's
    # cipher order (ServerPreference) and TLS 1.3's ciphersuites.
    s = t.launch(sws, pki, server="        ssl_ciphers ECDHE-ECDSA-AES256-GCM-SHA384:"
                                  "ECDHE-ECDSA-AES128-GCM-SHA256;\n"
                                  "        ssl_conf_command Options ServerPreference;\n"
                                  "        ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;")
    _, _, cipher = t.peer_cert_der(s.port, max_version=ssl.TLSVersion.TLSv1_2,
                                   ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:"
                                           "ECDHE-ECDSA-AES256-GCM-SHA384")
    assert cipher[0] == "ECDHE-ECDSA-AES256-GCM-SHA384", cipher
    _, version, cipher = t.peer_cert_der(s.port)
    assert version == "TLSv1.3" and cipher[0] == "TLS_AES_128_GCM_SHA256", cipher


def test_ssl_conf_command_errors(tmp_path, pki):
    crt, key = pki.leaf("localhost", "ec")
    for i, cmd in enumerate(("NoSuchCommand x", "Options NoSuchOption", "Ciphersuites")):
        conf = tmp_path / ("bad%d.conf" % i)
        conf.write_text("error_log %s/e.log;\nevents {}\nhttp { server { listen 127.0.0.1:%d ssl;"
                        "\nssl_certificate %s; ssl_certificate_key %s;\nssl_conf_command %s; } }\n"
                        % (tmp_path, h.free_port(), crt, key, cmd))
        r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
        err = r.stderr.decode("utf-8", "replace")
        assert r.returncode != 0, err
        if i < 2:
            assert "SSL_CONF_cmd(" in err and "ssl_conf_command in %s:5" % conf in err, err
        else:
            assert 'invalid number of arguments in "ssl_conf_command"' in err, err


def test_client_cipher_preference_by_default(sws, pki):
    s = t.launch(sws, pki, server="        ssl_ciphers ECDHE-ECDSA-AES256-GCM-SHA384:"
                                  "ECDHE-ECDSA-AES128-GCM-SHA256;")
    _, _, cipher = t.peer_cert_der(s.port, max_version=ssl.TLSVersion.TLSv1_2,
                                   ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:"
                                           "ECDHE-ECDSA-AES256-GCM-SHA384")
    assert cipher[0] == "ECDHE-ECDSA-AES128-GCM-SHA256", cipher


def test_rsa_and_ecdsa_certificates_in_one_server(sws, pki):
    rsa_crt, rsa_key = pki.chain("localhost", "rsa")
    s = t.launch(sws, pki, kind="ec",
                 server="        ssl_certificate %s;\n        ssl_certificate_key %s;"
                        % (rsa_crt, rsa_key))
    v12 = ssl.TLSVersion.TLSv1_2
    ec_der = pki.der(pki.leaf("localhost", "ec")[0])
    rsa_der = pki.der(pki.leaf("localhost", "rsa")[0])
    der, _, _ = t.peer_cert_der(s.port, max_version=v12, ciphers="ECDHE-ECDSA-AES128-GCM-SHA256")
    assert der == ec_der
    der, _, _ = t.peer_cert_der(s.port, max_version=v12, ciphers="ECDHE-RSA-AES128-GCM-SHA256")
    assert der == rsa_der
    # TLS 1.3: by the signature algorithms offered.
    out = t.s_client(s.port, "-sigalgs", "RSA-PSS+SHA256", input=b"Q\n")
    assert "CN = localhost" in out and ("RSA-PSS" in out or "rsa" in out.lower()), out
    out = t.s_client(s.port, "-sigalgs", "ECDSA+SHA256", input=b"Q\n")
    assert "ECDSA" in out or "ecdsa" in out, out


def test_ssl_dhparam_offers_dhe(sws, pki, tmp_path):
    # without ssl_dhparam no DHE cipher is offered (nginx's rule); with it, one is
    dh = tmp_path / "dh.pem"
    t.run(["genpkey", "-genparam", "-algorithm", "DH",
                 "-pkeyopt", "dh_param:ffdhe2048", "-out", str(dh)])
    v12 = ssl.TLSVersion.TLSv1_2
    dhe = "DHE-RSA-AES128-GCM-SHA256"
    plain = t.launch(sws, pki, kind="rsa", server="        ssl_ciphers %s;" % dhe)
    with pytest.raises(ssl.SSLError):
        t.peer_cert_der(plain.port, max_version=v12, ciphers=dhe)
    s = t.launch(sws, pki, kind="rsa", server="        ssl_ciphers %s;\n"
                                              "        ssl_dhparam %s;" % (dhe, dh))
    _, _, cipher = t.peer_cert_der(s.port, max_version=v12, ciphers=dhe)
    assert cipher[0] == dhe, cipher


@pytest.mark.parametrize("content", ["", "not pem\n", None])
def test_ssl_dhparam_errors(tmp_path, pki, content):
    # a missing file, or one without DH parameters, stops the start naming it
    f = tmp_path / "dh.pem"
    if content is not None:
        f.write_text(content)
    crt, key = pki.leaf("localhost", "rsa")
    conf = tmp_path / "bad.conf"
    conf.write_text("error_log %s/e.log;\nevents {}\nhttp { server { listen 127.0.0.1:%d ssl; "
                    "ssl_certificate %s; ssl_certificate_key %s; ssl_dhparam %s; } }\n"
                    % (tmp_path, h.free_port(), crt, key, f))
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0 and str(f) in err, err


# ---------------------------------------------------------------- SNI and ALPN

SNI_SERVERS = """
    server {
        listen 127.0.0.1:@PORT@ ssl;
        server_name a.test;
        ssl_certificate @A_CRT@;
        ssl_certificate_key @A_KEY@;
        location / { respond 200 "server a"; }
    }
    server {
        listen 127.0.0.1:@PORT@ ssl;
        server_name b.test;
        ssl_certificate @B_CRT@;
        ssl_certificate_key @B_KEY@;
        location / { respond 200 "server b"; }
    }
"""


@pytest.fixture(scope="module")
def sni(sws_module, pki):
    a_crt, a_key = pki.chain("a.test")
    b_crt, b_key = pki.chain("b.test")
    return t.launch(sws_module, pki, servers=SNI_SERVERS, a_crt=a_crt, a_key=a_key,
                    b_crt=b_crt, b_key=b_key, http=LOG_TLS)


@pytest.mark.parametrize("name,cn", [("a.test", "a.test"), ("b.test", "b.test"),
                                     ("A.Test", "a.test"), ("localhost", "localhost"),
                                     ("unknown.test", "localhost")])
def test_sni_selects_certificate(sni, name, cn):
    out = t.s_client(sni.port, servername=name, input=b"Q\n")
    assert re.search(r"subject=CN\s*=\s*%s\b" % re.escape(cn), out), out


def test_sni_without_servername_gets_default(sni):
    out = t.s_client(sni.port, "-noservername", servername=None, input=b"Q\n")
    assert re.search(r"subject=CN\s*=\s*localhost", out), out


def test_sni_servers_answer_their_requests(sni, pki):
    for name in ("a.test", "b.test"):
        r = h.curl("https://%s:%d/" % (name, sni.port), cainfo=ca(pki),
                   resolve=["%s:%d:127.0.0.1" % (name, sni.port)])
        assert r.status == 200 and r.body == ("server %s" % name[0]).encode(), r
    assert h.wait_for(lambda: " a.test http/1.1 200" in tls_log(sni)), tls_log(sni)


def test_alpn(sni):
    out = t.s_client(sni.port, "-alpn", "h2,http/1.1", input=b"Q\n")
    assert "ALPN protocol: http/1.1" in out, out           # no http2 on this address
    out = t.s_client(sni.port, "-alpn", "foo", input=b"Q\n")
    assert "No ALPN negotiated" in out, out


def test_alpn_h2_when_enabled(sws, pki):
    s = t.launch(sws, pki, listen="http2")
    out = t.s_client(s.port, "-alpn", "h2,http/1.1", input=b"Q\n")
    assert "ALPN protocol: h2" in out, out
    out = t.s_client(s.port, "-alpn", "http/1.1", input=b"Q\n")
    assert "ALPN protocol: http/1.1" in out, out


# ---------------------------------------------------------------- resumption

RESUME_WORKERS = 2


def resumes(port, n, **kw):
    """Connect once, then n times with the session: how many resumed."""
    ctx = t.context(verify=False, **kw)
    _, sess, reused = t.get(port, "/respond", ctx=ctx)
    assert not reused
    count = 0
    for _ in range(n):
        r, new, reused = t.get(port, "/respond", session=sess, ctx=ctx)
        assert r.status == 200
        count += reused
        sess = new if new is not None else sess
    return count


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_shared_session_cache_across_workers(sws, pki, version):
    # Tickets off: resumption can only come from the shared cache, and
    # reuseport spreads the connections over both workers.
    s = t.launch(sws, pki, listen="reuseport", workers=RESUME_WORKERS,
                 http="    ssl_session_cache shared:SSL:1m;\n    ssl_session_tickets off;\n"
                      + LOG_TLS)
    assert resumes(s.port, 12, max_version=version) == 12


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_session_tickets_shared_by_workers(sws, pki, version):
    s = t.launch(sws, pki, listen="reuseport", workers=RESUME_WORKERS, http=LOG_TLS)
    assert resumes(s.port, 12, max_version=version) == 12
    assert h.wait_for(lambda: " r localhost " in tls_log(s)), tls_log(s)


def test_no_resumption_when_cache_and_tickets_off(sws, pki):
    s = t.launch(sws, pki, http="    ssl_session_cache off;\n    ssl_session_tickets off;\n")
    assert resumes(s.port, 3) == 0


def test_builtin_cache_resumes_in_one_worker(sws, pki):
    s = t.launch(sws, pki, http="    ssl_session_cache builtin:1000;\n"
                               "    ssl_session_tickets off;\n")
    assert resumes(s.port, 3, max_version=ssl.TLSVersion.TLSv1_2) == 3


def test_tickets_survive_reload(sws, pki):
    s = t.launch(sws, pki)
    ctx = t.context(verify=False)
    _, sess, _ = t.get(s.port, "/respond", ctx=ctx)
    kids = s.children()
    s.signal(signal.SIGHUP)
    assert s.wait_children(1, timeout=10, exclude=kids), "no new worker after reload"
    _, _, reused = t.get(s.port, "/respond", session=sess, ctx=ctx)
    assert reused


def test_shared_cache_survives_reload(sws, pki):
    s = t.launch(sws, pki, http="    ssl_session_cache shared:R:1m;\n"
                               "    ssl_session_tickets off;\n")
    ctx = t.context(verify=False, max_version=ssl.TLSVersion.TLSv1_2)
    _, sess, _ = t.get(s.port, "/respond", ctx=ctx)
    kids = s.children()
    s.signal(signal.SIGHUP)
    assert s.wait_children(1, timeout=10, exclude=kids), "no new worker after reload"
    assert t.get(s.port, "/respond", session=sess, ctx=ctx)[2]


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3])
def test_full_shared_cache_forgets_the_oldest_sessions(sws, pki, version):
    # 8k holds a dozen sessions or so: storing 60 goes on past the size by
    # evicting the least recently used, so the latest resume (from either
    # worker) and the first is gone.
    s = t.launch(sws, pki, listen="reuseport", workers=RESUME_WORKERS,
                 http="    ssl_session_cache shared:SMALL:8k;\n"
                      "    ssl_session_tickets off;\n")
    ctx = t.context(verify=False, max_version=version)
    sessions = []
    for _ in range(60):
        r, sess, reused = t.get(s.port, "/respond", ctx=ctx)
        assert r.status == 200 and not reused
        sessions.append(sess)
    for sess in sessions[-4:]:
        assert t.get(s.port, "/respond", session=sess, ctx=ctx)[2]
    assert not t.get(s.port, "/respond", session=sessions[0], ctx=ctx)[2]
    assert "[alert]" not in s.error_log() and "[emerg]" not in s.error_log()


def test_shared_cache_of_another_size_after_reload_is_new(sws, pki):
    s = t.launch(sws, pki, http="    ssl_session_cache shared:R:1m;\n"
                               "    ssl_session_tickets off;\n")
    ctx = t.context(verify=False, max_version=ssl.TLSVersion.TLSv1_2)
    _, sess, _ = t.get(s.port, "/respond", ctx=ctx)
    assert t.get(s.port, "/respond", session=sess, ctx=ctx)[2]
    s.write_conf(s.conf_text.replace("shared:R:1m", "shared:R:2m"))
    kids = s.children()
    s.signal(signal.SIGHUP)
    assert s.wait_children(1, timeout=10, exclude=kids), "no new worker after reload"
    # A new zone: the session is not there, the cache works again.
    r, sess2, reused = t.get(s.port, "/respond", session=sess, ctx=ctx)
    assert r.status == 200 and not reused
    assert t.get(s.port, "/respond", session=sess2, ctx=ctx)[2]


def test_sni_server_has_its_own_protocols(sws, pki):
    b_crt, b_key = pki.chain("b.test")
    s = t.launch(sws, pki, servers="""
    server {
        listen 127.0.0.1:@PORT@ ssl;
        server_name b.test;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_protocols TLSv1.3;
        location / { respond 200 "b"; }
    }
""" % (b_crt, b_key))
    v12 = ssl.TLSVersion.TLSv1_2
    _, version, _ = t.peer_cert_der(s.port, server_name="localhost", max_version=v12)
    assert version == "TLSv1.2"
    with pytest.raises(ssl.SSLError):
        t.peer_cert_der(s.port, server_name="b.test", max_version=v12)
    _, version, _ = t.peer_cert_der(s.port, server_name="b.test")
    assert version == "TLSv1.3"


def test_ticket_key_file_shared_between_servers(sws, pki, tmp_path):
    key = tmp_path / "ticket.key"
    key.write_bytes(os.urandom(80))
    h.make_traversable(tmp_path)
    conf = "    ssl_session_ticket_key %s;\n" % key
    s1 = t.launch(sws, pki, http=conf)
    s2 = t.launch(sws, pki, http=conf)
    s3 = t.launch(sws, pki)
    ctx = t.context(verify=False)
    _, sess, _ = t.get(s1.port, "/respond", ctx=ctx)
    assert t.get(s2.port, "/respond", session=sess, ctx=ctx)[2]
    assert not t.get(s3.port, "/respond", session=sess, ctx=ctx)[2]


def test_ticket_keys_are_per_server(sws, pki, tmp_path):
    # Two addresses of one instance with the same certificate and names:
    # tickets resume across them only with the same key file.
    keys = []
    for i in range(2):
        k = tmp_path / ("k%d" % i)
        k.write_bytes(os.urandom(48))
        keys.append(k)
    h.make_traversable(tmp_path)
    crt, key = pki.chain("localhost")
    block = """
    server {
        listen 127.0.0.1:@PORT%d@ ssl;
        server_name localhost;
        ssl_certificate %s;
        ssl_certificate_key %s;
        ssl_session_ticket_key %s;
        location / { respond 200 "x"; }
    }
"""
    s = t.launch(sws, pki, ports=4,
                 server="        ssl_session_ticket_key %s;" % keys[0],
                 servers=(block % (2, crt, key, keys[0]) + block % (3, crt, key, keys[1])))
    ctx = t.context(verify=False)
    _, sess, _ = t.get(s.port, "/respond", ctx=ctx)
    assert t.get(s.ports[1], "/", session=sess, ctx=ctx)[2]          # same key file
    assert not t.get(s.ports[2], "/", session=sess, ctx=ctx)[2]      # another one


def test_session_timeout_expires_sessions(sws, pki):
    s = t.launch(sws, pki, http="    ssl_session_timeout 1s;\n")
    ctx = t.context(verify=False)
    _, sess, _ = t.get(s.port, "/respond", ctx=ctx)
    assert t.get(s.port, "/respond", session=sess, ctx=ctx)[2]
    time.sleep(2.2)
    assert not t.get(s.port, "/respond", session=sess, ctx=ctx)[2]


def test_session_not_resumed_on_another_server(sni, pki):
    ctx = t.context(verify=False)
    _, sess, _ = t.get(sni.port, "/", server_name="a.test", ctx=ctx)
    assert t.get(sni.port, "/", server_name="a.test", session=sess, ctx=ctx)[2]
    assert not t.get(sni.port, "/", server_name="b.test", session=sess, ctx=ctx)[2]


# ---------------------------------------------------------------- OCSP stapling

def test_stapling_from_file(sws, pki, tmp_path):
    crt, _ = pki.leaf("localhost", "ec")
    resp = pki.ocsp_response(crt, tmp_path / "ocsp.der")
    h.make_traversable(tmp_path)
    s = t.launch(sws, pki, server="        ssl_stapling on;\n"
                                  "        ssl_stapling_file %s;" % resp)
    out = t.s_client(s.port, "-status", input=b"Q\n")
    assert "OCSP Response Status: successful" in out, out
    assert "Cert Status: good" in out, out
    out = t.s_client(s.port, input=b"Q\n")
    assert "OCSP response: no response sent" not in out or "OCSP Response Status" not in out


def test_no_staple_without_stapling(srv):
    out = t.s_client(srv.port, "-status", input=b"Q\n")
    assert "OCSP response: no response sent" in out, out


def test_stapling_from_responder(sws, pki, tmp_path):
    responder = pki.ocsp_responder(pki.leaf("localhost", "ec")[0], tmp_path)
    try:
        s = t.launch(sws, pki, server="        ssl_stapling on;\n"
                                      "        ssl_stapling_verify on;\n"
                                      "        ssl_trusted_certificate %s;\n"
                                      "        ssl_stapling_responder http://127.0.0.1:%d/;"
                                      % (pki.ca, responder.port))
        out = h.wait_for(lambda: (lambda o: o if "Cert Status: good" in o else None)(
            t.s_client(s.port, "-status", input=b"Q\n")), timeout=8, step=0.3)
        assert out, s.error_log()
        assert "OCSP Response Status: successful" in out
        assert "OCSP response from 127.0.0.1:%d stapled" % responder.port in s.error_log()
        assert responder.requests >= 1
    finally:
        responder.stop()


def test_stapling_response_for_another_certificate_is_refused(sws, pki, tmp_path):
    responder = pki.ocsp_responder(pki.leaf("a.test", "ec")[0], tmp_path)
    try:
        s = t.launch(sws, pki, server="        ssl_stapling on;\n"
                                      "        ssl_stapling_responder http://127.0.0.1:%d/;"
                                      % responder.port)
        assert h.wait_file_contains(s.error_log_path, "not for this certificate", timeout=5)
        out = t.s_client(s.port, "-status", input=b"Q\n")
        assert "OCSP response: no response sent" in out, out
    finally:
        responder.stop()


def test_stapling_responder_down_is_not_fatal(sws, pki):
    port = h.free_port()
    s = t.launch(sws, pki, server="        ssl_stapling on;\n"
                                  "        ssl_stapling_responder http://127.0.0.1:%d/;" % port)
    r = h.curl(url(s, "/respond"), cainfo=ca(pki))
    assert r.status == 200
    out = t.s_client(s.port, "-status", input=b"Q\n")
    assert "OCSP response: no response sent" in out


# ---------------------------------------------------------------- early data

LOG_EARLY = ('    log_format early "$pid $request_method $request_uri [$ssl_early_data] $status";\n'
             '    access_log @TMP@/early.log early;\n')
GET_CLOSE = b"GET /respond?first HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
GET_EARLY = b"GET /respond?early HTTP/1.1\r\nHost: localhost\r\n\r\n"
GET_LATE = b"GET /respond?late HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def new_session(port, tmp_path, name="sess.pem"):
    """A full handshake; the ticket (session) it got, in a file."""
    sess = tmp_path / name
    t.s_client(port, "-sess_out", str(sess), "-ign_eof", input=GET_CLOSE, timeout=10)
    assert sess.exists()
    return sess


def zero_rtt(port, sess, tmp_path, early=GET_EARLY, late=GET_LATE):
    """Resume sess sending early in early data (0-RTT), then late after the
    handshake (it closes the connection: a refused early request is not
    sent again by s_client, and the run ends either way)."""
    f = tmp_path / "early.txt"
    f.write_bytes(early)
    return t.s_client(port, "-sess_in", str(sess), "-early_data", str(f), "-ign_eof",
                      input=late, timeout=10)


def early_log(s, lines):
    """The early.log lines once there are this many: (pid, method, uri,
    [early], status) tuples; an empty $ssl_early_data is logged "-"."""
    path = s.tmp / "early.log"
    h.wait_for(lambda: len(h._read(path).splitlines()) >= lines, timeout=5)
    return [tuple(line.split(" ")) for line in h._read(path).splitlines()]


def early_data(port, tmp_path, wait=True):
    sess = new_session(port, tmp_path)
    req = tmp_path / "early.txt"
    req.write_bytes(b"GET /respond HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    # Accepted, the early request is answered and the server closes;
    # refused, it is not resent: then do not wait for an answer.
    return t.s_client(port, "-sess_in", str(sess), "-early_data", str(req),
                      *(["-ign_eof"] if wait else []), timeout=10)


def test_early_data_off_by_default(srv, tmp_path):
    out = early_data(srv.port, tmp_path, wait=False)
    assert "Early data was rejected" in out or "Early data was not sent" in out, out


def test_early_data_on(sws, pki, tmp_path):
    s = t.launch(sws, pki, http="    ssl_early_data on;\n")
    out = early_data(s.port, tmp_path)
    assert "Early data was accepted" in out, out
    assert "Hello, world!" in out


def test_early_data_with_shared_cache_and_no_tickets(sws, pki, tmp_path):
    s = t.launch(sws, pki, workers=2, listen="reuseport",
                 http="    ssl_early_data on;\n    ssl_session_cache shared:E:1m;\n"
                      "    ssl_session_tickets off;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was accepted" in out, out
    assert out.count("Hello, world!") == 2, out
    log = early_log(s, 3)
    assert log[1][1:] == ("GET", "/respond?early", "[1]", "200"), log
    assert log[2][1:] == ("GET", "/respond?late", "[-]", "200"), log
    # the session stays in the cache, its early data does not come again
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was rejected" in out, out
    assert h.wait_file_contains(s.error_log_path,
                                "early data refused: the ticket was used for early data before")


def test_early_data_get_is_served_and_marked(sws, pki, tmp_path):
    s = t.launch(sws, pki, http="    ssl_early_data on;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was accepted" in out, out
    assert "Reused, TLSv1.3" in out, out
    assert out.count("HTTP/1.1 200 OK") == 2 and out.count("Hello, world!") == 2, out
    log = early_log(s, 3)
    assert log[0][1:] == ("GET", "/respond?first", "[-]", "200"), log
    # in early data, before the handshake ended: marked; after it: not
    assert log[1][1:] == ("GET", "/respond?early", "[1]", "200"), log
    assert log[2][1:] == ("GET", "/respond?late", "[-]", "200"), log


def test_early_data_replay_refused_across_workers(sws, pki, tmp_path):
    s = t.launch(sws, pki, workers=2, listen="reuseport",
                 http="    ssl_early_data on;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was accepted" in out, out
    first = early_log(s, 3)[1]
    assert first[1:] == ("GET", "/respond?early", "[1]", "200"), first
    # The same ticket and early data again, on new connections: whichever
    # worker takes them (reuseport spreads them), the early data is
    # refused; the handshake goes on (resumed) and the late request is
    # served after it, unmarked. Until both workers were seen.
    pids = set()
    for i in range(16):
        out = zero_rtt(s.port, sess, tmp_path)
        assert "Early data was rejected" in out, out
        assert "Reused, TLSv1.3" in out and out.count("Hello, world!") == 1, out
        log = early_log(s, 4 + i)
        assert log[-1][1:] == ("GET", "/respond?late", "[-]", "200"), log
        pids.add(log[-1][0])
        if len(pids) == 2 and i >= 3:
            break
    assert len(pids) == 2, log
    assert not [x for x in log[2:] if x[2] == "/respond?early"], log
    assert "the ticket was used for early data before" in s.error_log()
    # a new ticket (from a full handshake) still gets its one 0-RTT
    sess2 = new_session(s.port, tmp_path, "sess2.pem")
    out = zero_rtt(s.port, sess2, tmp_path)
    assert "Early data was accepted" in out, out


def test_early_data_replay_refused_after_reload(sws, pki, tmp_path):
    # The table of used tickets is a slab zone that a reload keeps: a
    # ticket whose early data was taken before is refused by the new
    # workers too, and one the old workers never saw still gets its 0-RTT.
    s = t.launch(sws, pki, http="    ssl_early_data on;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    fresh = new_session(s.port, tmp_path, "fresh.pem")
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was accepted" in out, out
    kids = s.children()
    s.signal(signal.SIGHUP)
    assert s.wait_children(1, timeout=10, exclude=kids), "no new worker after reload"
    out = zero_rtt(s.port, sess, tmp_path)
    assert "Early data was rejected" in out and "Reused, TLSv1.3" in out, out
    assert h.wait_file_contains(s.error_log_path,
                                "the ticket was used for early data before")
    out = zero_rtt(s.port, fresh, tmp_path)
    assert "Early data was accepted" in out, out


def test_early_data_unsafe_method_gets_425(sws, pki, tmp_path):
    s = t.launch(sws, pki, http="    ssl_early_data on;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    out = zero_rtt(s.port, sess, tmp_path,
                   early=b"POST /respond HTTP/1.1\r\nHost: localhost\r\n"
                         b"Content-Length: 5\r\n\r\nhello")
    assert "Early data was accepted" in out, out
    assert "HTTP/1.1 425 Too Early" in out, out
    log = early_log(s, 2)
    assert log[1][1:] == ("POST", "/respond", "[1]", "425"), log
    assert "\"POST\" request in TLS early data: 425" in s.error_log()
    # The same method after the handshake is served.
    sess = new_session(s.port, tmp_path, "sess2.pem")
    out = zero_rtt(s.port, sess, tmp_path, early=GET_EARLY,
                   late=b"POST /respond HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n"
                        b"Connection: close\r\n\r\nhello")
    assert "Early data was accepted" in out, out
    assert "425" not in out, out


def test_early_data_http2(sws, pki, tmp_path):
    # HTTP/2 in early data: the preface, SETTINGS and two requests (the
    # frames made by h2raw's encoders); each request is marked and checked.
    import hpack
    from hyperframe.frame import HeadersFrame, SettingsFrame
    s = t.launch(sws, pki, listen="http2",
                 http="    ssl_early_data on;\n    http2_idle_timeout 1s;\n" + LOG_EARLY)
    sess = tmp_path / "sess.pem"
    t.s_client(s.port, "-alpn", "h2", "-sess_out", str(sess), "-ign_eof",
               input=h2raw.PREFACE + SettingsFrame(0).serialize(), timeout=10)
    assert sess.exists()
    enc = hpack.Encoder()
    frames = h2raw.PREFACE + SettingsFrame(0).serialize()
    for sid, method, path in ((1, "GET", "/respond?h2early"), (3, "POST", "/respond?h2post")):
        f = HeadersFrame(sid)
        f.data = enc.encode([(":method", method), (":path", path), (":scheme", "https"),
                             (":authority", "localhost")])
        f.flags.add("END_HEADERS")
        f.flags.add("END_STREAM")
        frames += f.serialize()
    early = tmp_path / "early.bin"
    early.write_bytes(frames)
    out = t.s_client(s.port, "-alpn", "h2", "-sess_in", str(sess), "-early_data", str(early),
                     "-ign_eof", timeout=10)
    assert "Early data was accepted" in out, out
    log = early_log(s, 2)
    assert ("GET", "/respond?h2early", "[1]", "200") in [x[1:] for x in log], log
    assert ("POST", "/respond?h2post", "[1]", "425") in [x[1:] for x in log], log


def test_early_data_off_never_accepted(sws, pki, tmp_path):
    s = t.launch(sws, pki, http="    ssl_early_data off;\n" + LOG_EARLY)
    sess = new_session(s.port, tmp_path)
    for _ in range(2):
        out = zero_rtt(s.port, sess, tmp_path)
        assert "Early data was accepted" not in out, out
        assert "Early data was rejected" in out or "Early data was not sent" in out, out
    log = early_log(s, 3)
    assert all(x[3] == "[-]" for x in log) and len(log) == 3, log
    assert all(x[2] != "/respond?early" for x in log), log


def test_early_data_ticket_older_than_server(sws, pki, tmp_path):
    # Two servers sharing a ticket key: a ticket from the first one resumes
    # on the second, started after it was issued, but without 0-RTT (the
    # second cannot know whether it was used before it started).
    key = tmp_path / "ticket.key"
    key.write_bytes(os.urandom(80))
    h.make_traversable(tmp_path)
    conf = "    ssl_early_data on;\n    ssl_session_ticket_key %s;\n" % key + LOG_EARLY
    a = t.launch(sws, pki, http=conf)
    sess = new_session(a.port, tmp_path)
    time.sleep(1.1)
    b = t.launch(sws, pki, http=conf)
    out = zero_rtt(b.port, sess, tmp_path)
    assert "Reused, TLSv1.3" in out, out
    assert "Early data was rejected" in out, out
    assert h.wait_file_contains(b.error_log_path, "the ticket is older than the server")
    # a ticket of its own gets 0-RTT there
    sess = new_session(b.port, tmp_path, "sess2.pem")
    out = zero_rtt(b.port, sess, tmp_path)
    assert "Early data was accepted" in out, out


# ---------------------------------------------------------------- kernel TLS

def test_ktls_falls_back_with_one_message(sws, pki):
    s = t.launch(sws, pki, files=FILES, workers=2, http="    ssl_ktls on;\n    sendfile on;\n")
    for v in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        r, _, _ = t.get(s.port, "/big.bin", verify=False, max_version=v)
        assert r.status == 200 and r.body == BIG
    r = h.curl(url(s, "/big.bin"), cainfo=ca(pki))
    assert r.body == BIG
    log = s.error_log()
    have_tls = os.path.exists("/proc/net/tls_stat") or "tls" in open("/proc/modules").read() \
        if os.path.exists("/proc/modules") else os.path.exists("/proc/net/tls_stat")
    if not have_tls:
        assert log.count("kernel TLS is not available") == 1, log
    assert "[error]" not in log and "[crit]" not in log and "[alert]" not in log, log


# ---------------------------------------------------------------- handshakes

def test_handshake_timeout(sws, pki):
    s = t.launch(sws, pki, server="        ssl_handshake_timeout 1s;")
    with h.Conn(s.port) as c:
        start = time.monotonic()
        assert c.closed_within(4)
        assert time.monotonic() - start >= 0.8
    with h.Conn(s.port) as c:
        c.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")     # a ClientHello, cut
        assert c.closed_within(4)
    assert h.wait_file_contains(s.error_log_path, "timed out in the TLS handshake")


@pytest.mark.parametrize("data", [
    b"\x16\x03\x01\x00\x05hello",                        # not a ClientHello
    b"\x16\x03\x01\x00\x10" + b"\x01\x00\x00\x0c" + b"\x03\x03" + b"\x00" * 10,  # malformed
    b"\x16\x30\x30\x00\x01\x00",                         # bad version
    b"\x80\x09\x01\x00\x02\x00\x00\x00\x00\x00\x00",     # SSLv2 hello
])
def test_bad_client_hello_closes_and_logs_info(sws, pki, data):
    s = t.launch(sws, pki)
    with h.Conn(s.port) as c:
        c.send(data)
        assert c.read_until_close(timeout=4) is not None
    assert h.wait_file_contains(s.error_log_path, "TLS handshake failed", timeout=3), s.error_log()
    log = s.error_log()
    assert not re.search(r"\[(error|crit|alert|emerg)\]", log), log


def test_truncated_client_hello_then_close(sws, pki):
    s = t.launch(sws, pki)
    with h.Conn(s.port) as c:
        c.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 20)
    assert h.wait_file_contains(s.error_log_path, "closed the connection in the TLS handshake")
    assert not re.search(r"\[(error|crit|alert|emerg)\]", s.error_log()), s.error_log()


def test_stalled_handshake_does_not_block_the_worker(sws, pki):
    s = t.launch(sws, pki)
    with h.Conn(s.port) as stalled:
        stalled.send(b"\x16\x03\x01\x02\x00\x01")
        start = time.monotonic()
        r = h.curl(url(s, "/respond"), cainfo=ca(pki))
        assert r.status == 200
        assert time.monotonic() - start < 2


def test_many_handshakes_in_parallel(srv, pki):
    import threading
    errors = []

    def worker():
        try:
            for _ in range(5):
                r, _, _ = t.get(srv.port, "/respond", cafile=pki.ca)
                assert r.status == 200
        except Exception as e:     # reported below
            errors.append(e)
    ts = [threading.Thread(target=worker) for _ in range(8)]
    for x in ts:
        x.start()
    for x in ts:
        x.join(30)
    assert not errors, errors


# ---------------------------------------------------------------- configuration

def test_ssl_listen_without_certificate_is_refused(tmp_path):
    conf = h.MAIN_TEMPLATE.replace("listen 127.0.0.1:@PORT@;", "listen 127.0.0.1:@PORT@ ssl;")
    rc, out, listening = h.start_expect_failure(tmp_path, conf=conf)
    assert rc not in (None, 0) and not listening
    assert 'no "ssl_certificate" is defined' in out, out


def test_bad_certificate_paths_are_refused(tmp_path, pki):
    rc, out, _ = h.start_expect_failure(tmp_path, conf=t.TLS_TEMPLATE, listen="",
                                        cert=tmp_path / "missing.crt", key=pki.leaf("localhost")[1])
    assert rc not in (None, 0) and "cannot load certificate" in out, out


def test_mismatched_key_is_refused(tmp_path, pki):
    rc, out, _ = h.start_expect_failure(tmp_path, conf=t.TLS_TEMPLATE, listen="",
                                        cert=pki.leaf("localhost", "ec")[0],
                                        key=pki.leaf("a.test", "ec")[1])
    assert rc not in (None, 0)
    assert "SSL_CTX_use_PrivateKey_file" in out or "do not match" in out, out


@pytest.mark.parametrize("directive,message", [
    ("ssl_protocols TLSv9;", 'invalid value "TLSv9" in "ssl_protocols"'),
    ("ssl_protocols SSLv3;", "enables no supported protocol"),
    ("ssl_protocols TLSv1.3; ssl_protocols TLSv1.2;", "is duplicate"),
    ("ssl_session_cache shared:X;", "invalid session cache"),
    ("ssl_session_cache shared:X:1k;", "too small"),
    ("ssl_session_cache bogus;", "invalid session cache"),
    ("ssl_ciphers NOSUCHCIPHER;", "SSL_CTX_set_cipher_list"),
    ("ssl_buffer_size 100k;", "ssl_buffer_size"),
])
def test_bad_ssl_directives(tmp_path, pki, directive, message):
    crt, key = pki.chain("localhost")
    rc, out, _ = h.start_expect_failure(tmp_path, conf=t.TLS_TEMPLATE, listen="", cert=crt,
                                        key=key, server="        " + directive)
    assert rc not in (None, 0) and message in out, out


def test_config_test_mode_accepts_tls(tmp_path, pki):
    crt, key = pki.chain("localhost")
    (tmp_path / "html").mkdir()
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(t.TLS_TEMPLATE, tmp_path, [h.free_port()], cert=crt, key=key,
                             listen="http2",
                             http="    ssl_session_cache shared:T:1m;\n"))
    r = h.run_scalwsd(["-p", str(tmp_path) + "/", "-c", str(conf), "-t"])
    assert r.returncode == 0, r.stderr
