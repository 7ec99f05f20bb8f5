"""Client certificates (mutual TLS): ssl_verify_client on | optional |
optional_no_ca | off, ssl_client_certificate, ssl_trusted_certificate,
ssl_verify_depth, ssl_crl, the $ssl_client_* variables, nginx's 495, 496
and 497 answers with their pages and error_page, the 421 for another name
than the handshake's, session resumption (tickets and the session cache)
keeping the verdict, and the configuration errors. Each answer is compared
with nginx 1.22's on the same configuration (certificates made at test
time: mtlsutil)."""
import os
import re
import signal
import socket
import ssl
from pathlib import Path

import pytest

import mtlsutil as m
import swsharness as h
import tlsutil as t
from test_nginx_sites import NGINX, server_token, start_server

VARS = ("$ssl_client_verify|$ssl_client_s_dn|$ssl_client_i_dn|$ssl_client_s_dn_legacy|"
        "$ssl_client_i_dn_legacy|$ssl_client_serial|$ssl_client_fingerprint|"
        "$ssl_client_v_start|$ssl_client_v_end|$ssl_client_v_remain|$https")

# One server per way of checking certificates, each on its own port.
SITE = """
    ssl_certificate @CERT@;
    ssl_certificate_key @KEY@;
    ssl_session_cache shared:mtls:1m;
    ssl_session_tickets @TICKETS@;
    server {
        listen 127.0.0.1:@P_on@ ssl http2;
        server_name localhost;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        ssl_crl @CRL@;
        location / { return 200 "@VARS@\\n"; }
        location /cert { return 200 "[$ssl_client_cert]"; }
        location /raw { return 200 "[$ssl_client_raw_cert]"; }
        location /escaped { return 200 "[$ssl_client_escaped_cert]"; }
        location /admin {
            satisfy any;
            allow 10.0.0.0/8;
            deny all;
            auth_basic "api";
            auth_basic_user_file @DIR@/htpasswd;
            root @DIR@/html;
        }
    }
    server {
        listen 127.0.0.1:@P_on@ ssl http2;
        server_name other.test;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        location / { return 200 "other $ssl_client_verify\\n"; }
    }
    server {
        listen 127.0.0.1:@P_optional@ ssl http2;
        server_name localhost;
        ssl_verify_client optional;
        ssl_verify_depth 2;
        ssl_client_certificate @CA@;
        location / { return 200 "@VARS@\\n"; }
        location /strict {
            if ($ssl_client_verify != SUCCESS) { return 403; }
            return 200 "strict $ssl_client_s_dn\\n";
        }
        location /login/ {
            auth_basic "api";
            auth_basic_user_file @DIR@/htpasswd;
            root @DIR@/html;
        }
    }
    server {
        listen 127.0.0.1:@P_no_ca@ ssl;
        ssl_verify_client optional_no_ca;
        location / { return 200 "@VARS@\\n"; }
    }
    server {
        listen 127.0.0.1:@P_off@ ssl http2;
        ssl_client_certificate @CA@;
        location / { return 200 "@VARS@\\n"; }
    }
    server {
        listen 127.0.0.1:@P_trusted@ ssl;
        ssl_verify_client on;
        ssl_verify_depth 3;
        ssl_client_certificate @SUB@;
        ssl_trusted_certificate @CA@;
        location / { return 200 "@VARS@\\n"; }
    }
    server {
        listen 127.0.0.1:@P_sni@ ssl http2;
        location / { return 200 "default @VARS@\n"; }
    }
    server {
        listen 127.0.0.1:@P_sni@ ssl http2;
        server_name secure.test;
        ssl_verify_client on;
        ssl_verify_depth 2;
        ssl_client_certificate @SUB@;
        ssl_trusted_certificate @CA@;
        location / { return 200 "secure @VARS@\n"; }
    }
    server {
        listen 127.0.0.1:@P_pages@ ssl http2;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        error_page 495 /bad-cert;
        error_page 496 =403 /no-cert;
        location = /bad-cert { return 200 "bad: $ssl_client_verify\\n"; }
        location = /no-cert { return 200 "none: $ssl_client_verify\\n"; }
        location / { return 200 "pages $ssl_client_verify\\n"; }
    }
    server {
        listen 127.0.0.1:@P_redirect@ ssl;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        error_page 495 496 https://login.example/cert;
        error_page 497 https://$host:$server_port$request_uri;
        location / { return 200 "redirect $ssl_client_verify\\n"; }
    }
"""
SERVERS = ("on", "optional", "no_ca", "off", "trusted", "pages", "redirect", "sni")
CERTS = (None, "valid", "intermediate", "expired", "future", "revoked", "wrongca",
         "selfsigned", "badsig")


@pytest.fixture(scope="module")
def cpki(tmp_path_factory):
    d = tmp_path_factory.mktemp("mtls")
    pki = t.Pki(d / "pki")
    c = m.ClientPki(pki, d / "clients")
    # a certificate whose signature bytes were changed: it parses, and fails
    der = bytearray(pki.der(c.certs["valid"][0]))
    der[-5] ^= 0x55
    bad = d / "clients" / "badsig.crt"
    bad.write_text(ssl.DER_cert_to_PEM_cert(bytes(der)))
    c.certs["badsig"] = (bad, c.certs["valid"][1])
    h.make_traversable(d)
    return c


def site(cpki, d, ports, tickets="on"):
    crt, key = cpki.pki.chain("localhost")
    (Path(d) / "htpasswd").write_text("api:{PLAIN}secret\n")
    (Path(d) / "html" / "admin").mkdir(parents=True, exist_ok=True)
    (Path(d) / "html" / "admin" / "index.html").write_text("admin\n")
    (Path(d) / "html" / "login").mkdir(parents=True, exist_ok=True)
    (Path(d) / "html" / "login" / "index.html").write_text("login\n")
    text = SITE.replace("@VARS@", VARS)
    for name, port in ports.items():
        text = text.replace("@P_%s@" % name, str(port))
    return (text.replace("@CERT@", str(crt)).replace("@KEY@", str(key))
            .replace("@CA@", str(cpki.ca)).replace("@SUB@", str(cpki.sub.cert))
            .replace("@CRL@", str(cpki.crl)).replace("@DIR@", str(d))
            .replace("@TICKETS@", tickets))


@pytest.fixture
def pair(tmp_path, cpki):
    """pair(tickets) -> ({server: port} of nginx, {server: port} of scalwsd)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running = []

    def start(tickets="on"):
        out = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            ports = {s: h.free_port() for s in SERVERS}
            h.make_traversable(tmp_path)
            running.append(start_server(who, d, ports["on"], site(cpki, d, ports, tickets)))
            for p in ports.values():
                assert t.wait_listening(p), (who, p)
            out.append(ports)
        return out

    yield start
    for r in running:
        r.stop()


def normal(body):
    """Bodies compared: the server's name in generated pages left out."""
    return server_token(body) if isinstance(body, bytes) else body


def both(ports, server, fn):
    """fn(port) on nginx's and scalwsd's server; asserts the same result."""
    rn, rs = fn(ports[0][server]), fn(ports[1][server])
    assert tuple(map(normal, rs)) == tuple(map(normal, rn)), (server, getattr(fn, "what", None), rn, rs)
    return rs


def test_every_certificate_on_every_server_h1_and_h2(pair, cpki):
    ports = pair()
    seen = {}
    for server in SERVERS:
        for name in CERTS:
            for http2 in (False, True):
                cert = cpki.certs[name] if name else None

                def fn(p):
                    return m.curl(p, cert=cert, http2=http2)[:2]
                fn.what = (name, http2)
                r = fn(ports[1][server])
                rn = fn(ports[0][server])
                if not (name == "badsig" and rn[0] is None and r[0] in (400, 403, 302)):
                    # (nginx drops the connection, or answers, depending
                    # on how the client's records arrive: a bad signature
                    # leaves an error in OpenSSL's queue)
                    assert tuple(map(normal, r)) == tuple(map(normal, rn)), \
                        (server, name, http2, rn, r)
                seen[(server, name, http2)] = r
    # the answers themselves (besides being nginx's)
    on = {n: seen[("on", n, False)] for n in CERTS}
    assert on["valid"][0] == 200 and on["valid"][1].startswith(
        b"SUCCESS|CN=alice,OU=api,O=ScalWS\\, Inc.,C=FR|CN=ScalWS Test CA|"
        b"/C=FR/O=ScalWS, Inc./OU=api/CN=alice|/CN=ScalWS Test CA|"), on["valid"]
    assert on[None][0] == 400 and b"<title>400 No required SSL certificate was sent" \
        in on[None][1], on[None]
    assert on["intermediate"][0] == 200        # depth 1: one intermediate
    for n in ("expired", "future", "revoked", "wrongca", "selfsigned", "badsig"):
        assert on[n][0] == 400 and b"<title>400 The SSL certificate error</title>" \
            in on[n][1], (n, on[n])
    # optional: no certificate, or one that verifies, passes; one that
    # does not is a 495 all the same
    opt = {n: seen[("optional", n, True)] for n in CERTS}
    assert opt[None] == (200, b"NONE||||||||||on\n")
    assert opt["intermediate"][1].startswith(b"SUCCESS|CN=bob,O=ScalWS|"), opt
    assert opt["revoked"][1].startswith(b"SUCCESS|"), opt     # no CRL there
    for n in ("expired", "future", "wrongca", "selfsigned", "badsig"):
        assert opt[n][0] == 400, (n, opt[n])
    # optional_no_ca: an unknown issuer passes (and says so), the rest not
    no_ca = {n: seen[("no_ca", n, False)] for n in CERTS}
    for n in ("wrongca", "selfsigned", "valid", "badsig"):
        assert no_ca[n][0] == 200 and no_ca[n][1].startswith(b"FAILED:"), (n, no_ca[n])
    for n in ("expired", "future"):
        assert no_ca[n][0] == 400, (n, no_ca[n])
    assert seen[("on", "revoked", True)][0] == 400
    assert seen[("off", "valid", True)] == (200, b"NONE||||||||||on\n")
    # trusted: the intermediate's leaf verifies through the root
    assert seen[("trusted", "intermediate", False)][0] == 200
    assert seen[("pages", "expired", True)][0] == 400
    assert seen[("pages", None, True)][0] == 403


def test_certificate_in_variables_pem_forms(pair, cpki):
    ports = pair()
    cert = cpki.certs["valid"]
    pem = cert[0].read_bytes()
    pem = pem[pem.index(b"-----BEGIN"):]
    for path in ("/cert", "/raw", "/escaped"):
        for http2 in (False, True):
            r = both(ports, "on", lambda p: m.curl(p, path, cert=cert, http2=http2)[:2])
            assert r[0] == 200
    assert m.curl(ports[1]["on"], "/raw", cert=cert)[1] == b"[" + pem + b"]"
    folded = m.curl(ports[1]["on"], "/cert", cert=cert)[1]
    assert folded == b"[" + pem[:-1].replace(b"\n", b"\n\t") + b"]"
    escaped = m.curl(ports[1]["on"], "/escaped", cert=cert)[1]
    assert b"-----BEGIN%20CERTIFICATE-----%0A" in escaped and b"\n" not in escaped
    # no certificate: empty
    assert m.curl(ports[1]["optional"], "/", http2=True)[1].startswith(b"NONE|||")


def test_access_checks_with_certificates(pair, cpki):
    """if ($ssl_client_verify != SUCCESS), satisfy any with allow/deny and
    auth_basic: the certificate's verdict and the other checks together."""
    ports = pair()
    valid, expired = cpki.certs["valid"], cpki.certs["expired"]
    for cert, want in ((valid, 200), (expired, 400), (None, 403)):
        r = both(ports, "optional", lambda p: m.curl(p, "/strict", cert=cert)[:2])
        assert r[0] == want, (cert, r)

    def basic(port, path, cert, user=None):
        import base64
        headers = [("Authorization", "Basic " + base64.b64encode(user).decode())] \
            if user else []
        r, _, _ = t.get(port, path, ctx=m.context(cert), headers=headers)
        return r.status, r.body

    for server, path, cert, user, want in (
            ("on", "/admin/", valid, None, 401),
            ("on", "/admin/", valid, b"api:secret", 200),
            ("on", "/admin/", valid, b"api:wrong", 401),
            ("on", "/admin/", expired, b"api:secret", 400),
            ("on", "/admin/", None, b"api:secret", 400),
            ("optional", "/login/", None, b"api:secret", 200),
            ("optional", "/login/", valid, None, 401),
            ("optional", "/login/", expired, b"api:secret", 400)):
        r = both(ports, server, lambda p: basic(p, path, cert, user))
        assert r[0] == want, (server, path, cert, user, r)


def test_error_pages_and_redirects(pair, cpki):
    ports = pair()
    expired = cpki.certs["expired"]

    def raw(port, cert, path="/"):
        conn = t.connect(port, ctx=m.context(cert))
        try:
            conn.sendall(h.request("GET", path, host="localhost"))
            data = b""
            while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < clen(data):
                d = conn.recv(65536)
                if not d:
                    break
                data += d
            closed = True
            try:
                conn.settimeout(2)
                closed = conn.recv(1) == b""
            except (ssl.SSLError, ConnectionError):
                pass
            except socket.timeout:
                closed = False
        finally:
            conn.close()
        head, _, body = data.partition(b"\r\n\r\n")
        fields = dict((k.strip().lower(), v.strip()) for k, _, v in
                      (ln.partition(":") for ln in head.decode().split("\r\n")[1:]))
        return (head.split(b" ")[1], fields.get("location"), fields.get("content-type"),
                body, closed)

    def clen(data):
        m_ = re.search(rb"content-length: *(\d+)", data.partition(b"\r\n\r\n")[0], re.I)
        return int(m_.group(1)) if m_ else 0

    for server, cert in (("on", None), ("on", expired), ("pages", None), ("pages", expired),
                         ("redirect", None), ("redirect", expired)):
        r = both(ports, server, lambda p: raw(p, cert))
        assert r[-1], ("the connection stays open after", server, cert, r)
    assert both(ports, "pages", lambda p: raw(p, expired))[:4] == (
        b"400", None, "application/octet-stream", b"bad: FAILED:certificate has expired\n")
    assert both(ports, "redirect", lambda p: raw(p, None))[1] == "https://login.example/cert"

    # plain HTTP to the TLS port: nginx's 497 page as a 400, or error_page's redirect
    def plain(port):
        with h.Conn(port) as c:
            c.send(h.request("GET", "/x?y=1"))
            r = c.read_response()
            return r.status, r.header("location"), server_token(r.body), c.closed_within(3)
    r = both(ports, "on", plain)
    assert r[0] == 400 and b"<title>400 The plain HTTP request was sent to HTTPS port" in r[2]
    assert r[3]
    r = both(ports, "redirect",
             lambda p: (plain(p)[0], plain(p)[1].replace(":%d/" % p, ":PORT/")))
    assert r == (302, "https://localhost:PORT/x?y=1")


def test_other_name_than_the_handshakes_is_misdirected(pair, cpki):
    ports = pair()
    valid = cpki.certs["valid"]
    for host, want in (("other.test", 421), ("localhost", 200), ("LOCALHOST", 200)):
        for http2 in (False, True):
            r = both(ports, "on", lambda p: m.curl(p, cert=valid, host=host, http2=http2)[:2])
            assert r[0] == want, (host, r)


def test_the_servers_sni_chooses_ask_for_certificates(pair, cpki):
    """A server chosen by SNI brings its own client certificate settings to
    the handshake (the address's default server asks for none)."""
    ports = pair()
    for name in (None, "valid", "intermediate", "expired"):
        cert = cpki.certs[name] if name else None
        for sni in ("secure.test", "localhost"):
            for http2 in (False, True):
                r = both(ports, "sni", lambda p: m.curl(p, cert=cert, sni=sni, host=sni,
                                                        http2=http2)[:2])
                if sni == "localhost":
                    assert r[1].startswith(b"default NONE|"), (name, r)
                elif name in ("valid", "intermediate"):
                    assert r[1].startswith(b"secure SUCCESS|CN="), (name, r)
                else:
                    assert r[0] == 400, (name, sni, r)
    names = t.s_client(ports[1]["sni"], "-tls1_2", servername="secure.test", input=b"")
    assert "Acceptable client certificate CA names\nO = ScalWS, CN = ScalWS Test " \
           "Intermediate\n" in names, names


def test_client_ca_names_sent(pair, cpki):
    """ssl_client_certificate's CAs are named in the CertificateRequest,
    ssl_trusted_certificate's are not; none with optional_no_ca."""
    ports = pair()

    def names(port):
        out = t.s_client(port, "-tls1_2", input=b"")
        if "No client certificate CA names sent" in out:
            return ("",)
        m_ = re.search(r"Acceptable client certificate CA names\n(.*?)\nClient Certificate",
                       out, re.S)
        return (m_.group(1) if m_ else None,)

    for server in ("on", "trusted", "no_ca", "off"):
        both(ports, server, names)
    assert names(ports[1]["on"]) == ("CN = ScalWS Test CA",)
    assert names(ports[1]["trusted"]) == ("O = ScalWS, CN = ScalWS Test Intermediate",)
    assert names(ports[1]["no_ca"]) == ("",)
    assert names(ports[1]["off"]) == ("",)            # not asked for one


@pytest.mark.parametrize("tickets", ["on", "off"])
def test_resumed_session_keeps_the_verdict(pair, cpki, tickets):
    """A session resumed (ticket, or the shared cache with TLS 1.2 and no
    tickets) without a certificate is the session's certificate's: its
    verdict holds, and a session made without one does not pass
    "ssl_verify_client on"."""
    ports = pair(tickets)
    valid, expired = cpki.certs["valid"], cpki.certs["expired"]

    def run(port, cert, second_port=None):
        """Two connections with one client context (presenting cert, if it
        is asked for): the second resumes the first's session."""
        ctx = m.context(cert, tickets=tickets == "on")
        if tickets == "off":
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        status, body, sess, _ = m.get(port, ctx=ctx)
        results = [(status, body.split(b"|")[0])]
        status, body, _, reused = m.get(second_port or port, ctx=ctx, session=sess)
        results.append((status, body.split(b"|")[0], reused))
        return results

    for who in (0, 1):
        p = ports[who]
        # made with a valid certificate, resumed without one: still the certificate's
        r = run(p["on"], valid)
        assert r[0] == (200, b"SUCCESS") and r[1][:2] == (200, b"SUCCESS"), (who, r)
        assert r[1][2], ("not resumed", who, r)
        # made without one on "optional", taken to "on": no certificate, 496
        r = run(p["optional"], None, p["on"])
        assert r[0] == (200, b"NONE") and r[1][0] == 400, (who, r)
        # made with an expired one on "on" (495, the session dropped from
        # the cache; a ticket still resumes it with its verdict): never 200
        r = run(p["on"], expired)
        assert r[0][0] == 400 and r[1][0] == 400, (who, r)
        if tickets == "off":
            assert not r[1][2], ("resumed from the cache", who, r)
        # optional_no_ca: the verdict comes back with the session
        r = run(p["no_ca"], cpki.certs["wrongca"])
        assert r[0] == (200, b"FAILED:unable to verify the first certificate"), (who, r)
        assert r[1] == (200, b"FAILED:unable to verify the first certificate", True), (who, r)


# ------------------------------------------------------------ configuration

CONF = """
    server {
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        %s
        location / { return 200; }
    }
"""


@pytest.mark.parametrize("lines,ok,msg", [
    ("ssl_verify_client on;", False, "no ssl_client_certificate for ssl_verify_client"),
    ("ssl_verify_client optional;", False, "no ssl_client_certificate for ssl_verify_client"),
    ("ssl_verify_client optional_no_ca;", True, None),
    ("ssl_verify_client on; ssl_client_certificate @DIR@/missing.pem;", False,
     "missing.pem"),
    ("ssl_verify_client on; ssl_client_certificate @KEY@;", False,
     "SSL_CTX_load_verify_locations() failed"),
    ("ssl_verify_client on; ssl_client_certificate @CA@; ssl_crl @KEY@;", False,
     "X509_LOOKUP_load_file() failed"),
    ("ssl_verify_client on; ssl_client_certificate @CA@; ssl_crl @DIR@/none.crl;", False,
     "none.crl"),
    ("ssl_trusted_certificate @DIR@/missing.pem;", False, "missing.pem"),
    ("ssl_verify_client maybe;", False, "invalid value"),
    ("ssl_verify_depth x;", False, "invalid"),
    ("ssl_verify_client on; ssl_client_certificate @CA@; ssl_crl @CRL@; "
     "ssl_verify_depth 3; ssl_trusted_certificate @CA@;", True, None),
])
def test_configuration_like_nginx(tmp_path, cpki, lines, ok, msg):
    import subprocess
    crt, key = cpki.pki.chain("localhost")
    text = CONF % lines
    text = (text.replace("@CERT@", str(crt)).replace("@KEY@", str(key))
            .replace("@CA@", str(cpki.ca)).replace("@CRL@", str(cpki.crl))
            .replace("@DIR@", str(tmp_path)).replace("@PORT@", str(h.free_port())))
    conf = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()], servers=text)
    p = tmp_path / "scalws.conf"
    p.write_text(conf)
    r = h.run_scalwsd(["-t", "-c", str(p), "-p", str(tmp_path)])
    out = r.stdout.decode() + r.stderr.decode()
    assert (r.returncode == 0) == ok, out
    if msg:
        assert msg in out, out
        # named with the file and the directives' line
        where = "%s:%d" % (p, conf[:conf.index(lines.split()[0])].count("\n") + 1)
        assert where in out, (where, out)
    # nginx on the same server block
    nconf = tmp_path / "nginx.conf"
    nconf.write_text("error_log %s/n.log;\npid %s/n.pid;\nevents {}\nhttp {\n%s\n}\n"
                     % (tmp_path, tmp_path, text))
    n = subprocess.run([NGINX, "-t", "-p", str(tmp_path), "-c", str(nconf)],
                       capture_output=True, timeout=20)
    assert (n.returncode == 0) == ok, n.stderr.decode()


# ------------------------------------------------------------ to upstream servers

UPSTREAM = """
    server {
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        location / { return 200 "upstream $ssl_client_verify $ssl_client_s_dn $uri\\n"; }
    }
"""

# (session reuse off: nginx resumes the session /with/ made for /expired/,
# its certificate with it; scalwsd keeps sessions per client certificate)
FRONT = """
    server {
        listen 127.0.0.1:@PORT@;
        proxy_ssl_session_reuse off;
        location /with/ {
            proxy_ssl_certificate @VALID@;
            proxy_ssl_certificate_key @VALID_KEY@;
            proxy_pass https://127.0.0.1:@UP@/;
        }
        location /expired/ {
            proxy_ssl_certificate @EXPIRED@;
            proxy_ssl_certificate_key @EXPIRED_KEY@;
            proxy_pass https://127.0.0.1:@UP@/;
        }
        location /without/ {
            proxy_pass https://127.0.0.1:@UP@/;
        }
    }
"""


def test_proxy_presents_a_certificate_to_a_scalwsd_upstream(tmp_path, cpki):
    """proxy_ssl_certificate: nginx and scalwsd in front of a scalwsd that
    requires a client certificate, with a valid one, an expired one, none."""
    crt, key = cpki.pki.chain("localhost")
    up_dir = tmp_path / "up"
    up_dir.mkdir()
    up_port = h.free_port()
    running = [start_server("scalwsd", up_dir, up_port, UPSTREAM.replace("@PORT@", str(up_port))
                            .replace("@CERT@", str(crt)).replace("@KEY@", str(key))
                            .replace("@CA@", str(cpki.ca)))]
    try:
        ports = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            text = FRONT.replace("@PORT@", str(port)).replace("@UP@", str(up_port))
            for name in ("valid", "expired"):
                text = (text.replace("@%s@" % name.upper(), str(cpki.certs[name][0]))
                        .replace("@%s_KEY@" % name.upper(), str(cpki.certs[name][1])))
            h.make_traversable(tmp_path)
            running.append(start_server(who, d, port, text))
            ports.append(port)
        for path, status, start in (("/with/a", 200, b"upstream SUCCESS CN=alice,"),
                                    ("/expired/a", 400, b"<html>"),
                                    ("/without/a", 400, b"<html>")):
            rn, rs = (h.exchange(p, h.request("GET", path)) for p in ports)
            assert (rs.status, server_token(rs.body)) == (rn.status, server_token(rn.body)), \
                (path, rn, rs)
            assert rs.status == status and rs.body.startswith(start), (path, rs)
    finally:
        for r in running:
            r.stop()


def certificate_list(*certs):
    body = b"".join(len(c).to_bytes(3, "big") + c for c in certs)
    return len(body).to_bytes(3, "big") + body


def test_garbage_in_place_of_a_certificate(pair, cpki):
    """A raw TLS 1.2 client sends bytes that are no certificate (random
    bytes, a truncated certificate, lengths that do not add up) in its
    Certificate message: the handshake ends with OpenSSL's alert, as with
    nginx, the worker goes on."""
    ports = pair()
    der = cpki.pki.der(cpki.certs["valid"][0])
    cases = (certificate_list(os.urandom(300)),
             certificate_list(der[:len(der) // 2]),
             certificate_list(b"\x30\x82\xff\xff" + der[4:]),
             b"\x00\x10\x00" + der[:50],                  # list longer than the message
             b"\x00\x00\x05\x00\x00\x09abcde")            # entry longer than the list
    for server in ("on", "optional", "no_ca"):
        for body in cases:
            r = both(ports, server, lambda p: m.garbage_certificate(p, body))
            assert 13 in r[0], ("no CertificateRequest", server, r)   # it asked for one
            assert r[1] is not None and r[1][0] == 2, (server, body[:8], r)
    # still serving
    for server in ("on", "optional"):
        assert m.curl(ports[1][server], cert=cpki.certs["valid"])[0] == 200


# ------------------------------------------------------------ encrypted keys

def encrypted(key, out, passphrase):
    t.run(["pkey", "-in", str(key), "-out", str(out), "-aes256", "-passout",
           "pass:" + passphrase])
    return out


def test_password_files(tmp_path, cpki):
    """ssl_password_file (the server's key) and proxy_ssl_password_file (a
    client certificate's key): each passphrase in turn, as nginx; a file
    without the right one is refused by both."""
    import subprocess
    crt, key = cpki.pki.chain("localhost")
    skey = encrypted(key, tmp_path / "server.key", "s3rv3r")
    ckey = encrypted(cpki.certs["valid"][1], tmp_path / "client.key", "cl13nt")
    (tmp_path / "good.pass").write_text("wrong\n\nalso wrong\r\ns3rv3r\ncl13nt")
    (tmp_path / "bad.pass").write_text("wrong\n")
    h.make_traversable(tmp_path)
    up_port = h.free_port()
    site = """
    server {
        listen 127.0.0.1:@UP@ ssl;
        ssl_certificate @CERT@;
        ssl_certificate_key @SKEY@;
        ssl_password_file @PASS@;
        ssl_verify_client on;
        ssl_client_certificate @CA@;
        location / { return 200 "up $ssl_client_s_dn\\n"; }
    }
    server {
        listen 127.0.0.1:@PORT@;
        location / {
            proxy_ssl_certificate @CCERT@;
            proxy_ssl_certificate_key @CKEY@;
            proxy_ssl_password_file @PASS@;
            proxy_ssl_session_reuse off;
            proxy_pass https://127.0.0.1:@UP@;
        }
    }
"""

    def text(port, pass_file):
        return (site.replace("@UP@", str(up_port)).replace("@PORT@", str(port))
                .replace("@CERT@", str(crt)).replace("@SKEY@", str(skey))
                .replace("@CA@", str(cpki.ca)).replace("@CCERT@", str(cpki.certs["valid"][0]))
                .replace("@CKEY@", str(ckey)).replace("@PASS@", str(pass_file)))

    # refused by both with a file of wrong passphrases
    for who in ("nginx", "scalwsd"):
        d = tmp_path / ("bad-" + who)
        d.mkdir()
        body = text(h.free_port(), tmp_path / "bad.pass")
        if who == "nginx":
            (d / "n.conf").write_text("error_log %s/e.log;\npid %s/n.pid;\nevents {}\n"
                                      "http {\n%s\n}\n" % (d, d, body))
            r = subprocess.run([NGINX, "-t", "-p", str(d), "-c", str(d / "n.conf")],
                               capture_output=True, timeout=20)
        else:
            conf = d / "s.conf"
            conf.write_text(h.render(h.MAIN_TEMPLATE, d, [h.free_port()], servers=body))
            r = subprocess.run([h.SCALWSD, "-t", "-c", str(conf), "-p", str(d)],
                               capture_output=True, timeout=20, stdin=subprocess.DEVNULL)
            assert b"every passphrase" in r.stderr + r.stdout, r
        assert r.returncode != 0, (who, r)
    # served by both with the right one among others (scalwsd upstream, then
    # nginx in front of it; then scalwsd in front)
    running = []
    try:
        up = tmp_path / "up"
        up.mkdir()
        body = text(h.free_port(), tmp_path / "good.pass")
        up_only = body.split("    server {")[1]
        running.append(start_server("scalwsd", up, up_port, "    server {" + up_only))
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            front = text(port, tmp_path / "good.pass").split("    server {")[2]
            running.append(start_server(who, d, port, "    server {" + front))
            r = h.exchange(port, h.request("GET", "/x"))
            assert (r.status, r.body) == (200, b"up CN=alice,OU=api,O=ScalWS\\, Inc.,C=FR\n"), \
                (who, r)
    finally:
        for r in running:
            r.stop()


def test_a_reload_to_on_does_not_let_old_sessions_in(tmp_path, cpki):
    """Sessions made while a server took clients without certificates
    (optional) do not pass it once a reload makes it "on": not resumed
    (tickets and the shared cache), and answered 496 if they were."""
    crt, key = cpki.pki.chain("localhost")
    port = h.free_port()
    conf = """
    ssl_session_cache shared:R:1m;
    ssl_session_tickets @TICKETS@;
    server {
        listen 127.0.0.1:@P@ ssl;
        ssl_certificate @CERT@;
        ssl_certificate_key @KEY@;
        ssl_client_certificate @CA@;
        ssl_verify_client @MODE@;
        location / { return 200 "$ssl_client_verify\\n"; }
    }
"""
    for tickets in ("on", "off"):
        d = tmp_path / tickets
        d.mkdir()

        def text(mode):
            return (conf.replace("@P@", str(port)).replace("@CERT@", str(crt))
                    .replace("@KEY@", str(key)).replace("@CA@", str(cpki.ca))
                    .replace("@MODE@", mode).replace("@TICKETS@", tickets))
        srv = start_server("scalwsd", d, port, text("optional"))
        try:
            ctx = m.context(None, tickets=tickets == "on")
            ctx.maximum_version = ssl.TLSVersion.TLSv1_3 if tickets == "on" \
                else ssl.TLSVersion.TLSv1_2
            status, body, sess, _ = m.get(port, ctx=ctx)
            assert (status, body) == (200, b"NONE\n")
            assert m.get(port, ctx=ctx, session=sess)[3], "resumed before the reload"
            conf_path = next(d.glob("*.conf"))
            conf_path.write_text(conf_path.read_text().replace(
                "ssl_verify_client optional;", "ssl_verify_client on;"))
            kids = srv.children()
            srv.signal(signal.SIGHUP)
            assert srv.wait_children(1, timeout=10, exclude=kids), "no new worker"
            status, body, _, reused = m.get(port, ctx=ctx, session=sess)
            assert status == 400 and b"No required SSL certificate was sent" in body, body
            assert not reused, tickets
        finally:
            srv.stop()
