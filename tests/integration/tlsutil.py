"""
TLS helpers for the integration tests: a throwaway PKI made with the openssl
CLI at test time (a CA, RSA and ECDSA certificates for localhost, others for
SNI), TLS connections with Python's ssl module (OpenSSL), openssl s_client
runs, and OCSP responses. Everything is bounded in time.
"""
import os
import socket
import ssl
import subprocess
import time
from pathlib import Path

import swsharness as h

OPENSSL = "openssl"
CMD_TIMEOUT = 30


def run(args, cwd=None, input=None, timeout=CMD_TIMEOUT, check=True):
    r = subprocess.run([OPENSSL] + list(args), cwd=cwd, input=input,
                       capture_output=True, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("openssl %s failed:\n%s" % (" ".join(args),
                                                         r.stderr.decode()))
    return r


class Pki:
    """A CA and leaf certificates under dir. Leaves: (name, kind) ->
    (cert, key) with kind "rsa" or "ec"; the cert file holds the leaf only,
    chain_<name>_<kind>.crt the leaf then the CA."""

    def __init__(self, directory):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca = self.dir / "ca.crt"
        self.ca_key = self.dir / "ca.key"
        self.serial = 0x1000
        self.index = []      # for an OCSP responder: (serial, notAfter, subject)
        run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", str(self.ca_key), "-out", str(self.ca), "-days", "2",
             "-subj", "/CN=ScalWS Test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"])

    def leaf(self, name, kind="ec", ocsp_url=None):
        base = self.dir / ("%s_%s" % (name.replace("*", "star"), kind))
        key, csr, crt = (Path(str(base) + ext) for ext in (".key", ".csr", ".crt"))
        if crt.exists():
            return crt, key
        if kind == "rsa":
            run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                 "-out", str(key)])
        else:
            run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", str(key)])
        run(["req", "-new", "-key", str(key), "-out", str(csr), "-subj", "/CN=%s" % name])
        ext = base.with_suffix(".ext")
        lines = ["subjectAltName=DNS:%s%s" % (name, ",IP:127.0.0.1" if name == "localhost"
                                              else ""),
                 "basicConstraints=CA:FALSE",
                 "extendedKeyUsage=serverAuth"]
        if ocsp_url:
            lines.append("authorityInfoAccess=OCSP;URI:%s" % ocsp_url)
        ext.write_text("\n".join(lines) + "\n")
        self.serial += 1
        run(["x509", "-req", "-in", str(csr), "-CA", str(self.ca), "-CAkey", str(self.ca_key),
             "-set_serial", str(self.serial), "-days", "2", "-extfile", str(ext),
             "-out", str(crt)])
        end = run(["x509", "-in", str(crt), "-noout", "-enddate"]).stdout.decode()
        self.index.append((self.serial, end.strip().split("=", 1)[1], "/CN=%s" % name))
        chain = self.dir / ("chain_%s" % crt.name)
        chain.write_bytes(crt.read_bytes() + self.ca.read_bytes())
        h.make_traversable(self.dir)
        return crt, key

    def chain(self, name, kind="ec"):
        crt, key = self.leaf(name, kind)
        return self.dir / ("chain_%s" % crt.name), key

    def _sign(self, name, key, ext_lines, ca, ca_key, out):
        csr = Path(str(out) + ".csr")
        run(["req", "-new", "-key", str(key), "-out", str(csr), "-subj", "/CN=%s" % name])
        ext = Path(str(out) + ".ext")
        ext.write_text("\n".join(ext_lines) + "\n")
        self.serial += 1
        run(["x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key),
             "-set_serial", str(self.serial), "-days", "2", "-extfile", str(ext),
             "-out", str(out)])

    def _key(self, path):
        if not path.exists():
            run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", str(path)])
        return path

    def intermediate_chain(self, name):
        """A leaf for name signed by an intermediate CA (signed by the CA):
        (file with the leaf then the intermediate, key)."""
        base = self.dir / ("im_%s" % name)
        chain = Path(str(base) + "_chain.crt")
        key = self._key(Path(str(base) + ".key"))
        if chain.exists():
            return chain, key
        ikey = self._key(self.dir / "intermediate.key")
        icrt = self.dir / "intermediate.crt"
        if not icrt.exists():
            self._sign("ScalWS Test Intermediate", ikey,
                       ["basicConstraints=critical,CA:TRUE",
                        "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"],
                       self.ca, self.ca_key, icrt)
        crt = Path(str(base) + ".crt")
        self._sign(name, key, ["subjectAltName=DNS:%s" % name, "basicConstraints=CA:FALSE",
                               "extendedKeyUsage=serverAuth"], icrt, ikey, crt)
        chain.write_bytes(crt.read_bytes() + icrt.read_bytes())
        h.make_traversable(self.dir)
        return chain, key

    def client(self, name):
        """A client certificate (clientAuth) signed by the CA: (cert, key)."""
        base = self.dir / ("client_%s" % name)
        crt = Path(str(base) + ".crt")
        key = self._key(Path(str(base) + ".key"))
        if not crt.exists():
            self._sign(name, key, ["basicConstraints=CA:FALSE",
                                   "extendedKeyUsage=clientAuth"], self.ca, self.ca_key, crt)
            h.make_traversable(self.dir)
        return crt, key

    def der(self, crt):
        return ssl.PEM_cert_to_DER_cert(Path(crt).read_text())

    # -- OCSP
    def write_index(self, revoked=()):
        """index.txt for "openssl ocsp" (V or R per certificate)."""
        out = []
        for serial, not_after, subject in self.index:
            # notAfter "Mon DD HH:MM:SS YYYY GMT" -> YYMMDDHHMMSSZ
            t = time.strptime(not_after.replace(" GMT", ""), "%b %d %H:%M:%S %Y")
            stamp = time.strftime("%y%m%d%H%M%SZ", t)
            if serial in revoked:
                out.append("R\t%s\t%s\t%X\tunknown\t%s" % (stamp, stamp, serial, subject))
            else:
                out.append("V\t%s\t\t%X\tunknown\t%s" % (stamp, serial, subject))
        p = self.dir / "index.txt"
        p.write_text("\n".join(out) + "\n")
        (self.dir / "index.txt.attr").write_text("unique_subject = no\n")
        return p

    def ocsp_response(self, crt, out, revoked=()):
        """A DER OCSP response for crt signed by the CA (as a file)."""
        index = self.write_index(revoked)
        req = Path(str(out) + ".req")
        run(["ocsp", "-issuer", str(self.ca), "-cert", str(crt), "-reqout", str(req),
             "-no_nonce"])
        run(["ocsp", "-index", str(index), "-rsigner", str(self.ca), "-rkey", str(self.ca_key),
             "-CA", str(self.ca), "-reqin", str(req), "-respout", str(out), "-ndays", "1"])
        h.make_traversable(self.dir)
        return out

    def ocsp_responder(self, crt, tmpdir):
        """A responder on 127.0.0.1 answering every request with a fresh
        response for crt (made by "openssl ocsp", served by Python: the
        openssl responder cannot be bound to loopback)."""
        der = Path(self.ocsp_response(crt, Path(tmpdir) / "responder.der")).read_bytes()
        return OcspResponder(der)


class OcspResponder:
    def __init__(self, der):
        import http.server
        import threading
        outer = self
        self.requests = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(n)
                outer.requests += 1
                self.send_response(200)
                self.send_header("Content-Type", "application/ocsp-response")
                self.send_header("Content-Length", str(len(der)))
                self.end_headers()
                self.wfile.write(der)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.timeout = 1
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


# ---------------------------------------------------------------- servers

# MAIN_TEMPLATE with the default server on TLS: @CERT@ @KEY@ (more
# certificate lines may come in @SERVER@), @LISTEN@ for more listen
# parameters (http2, reuseport).
TLS_TEMPLATE = h.MAIN_TEMPLATE.replace(
    "        listen 127.0.0.1:@PORT@;\n",
    "        listen 127.0.0.1:@PORT@ ssl @LISTEN@;\n"
    "        ssl_certificate @CERT@;\n"
    "        ssl_certificate_key @KEY@;\n")
assert TLS_TEMPLATE != h.MAIN_TEMPLATE


def launch(start, pki, kind="ec", listen="", **kw):
    """Start (with the sws fixture) a server whose default server is on TLS
    with pki's localhost certificate of kind (chain included)."""
    crt, key = pki.chain("localhost", kind)
    return start(conf=TLS_TEMPLATE, cert=crt, key=key, listen=listen, **kw)


# ---------------------------------------------------------------- clients

def context(cafile=None, alpn=None, min_version=None, max_version=None, ciphers=None,
            verify=True):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if cafile and verify:
        ctx.load_verify_locations(str(cafile))
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(list(alpn))
    if min_version:
        ctx.minimum_version = min_version
    if max_version:
        ctx.maximum_version = max_version
    if ciphers:
        ctx.set_ciphers(ciphers)
    return ctx


def connect(port, ctx=None, server_name="localhost", session=None, timeout=h.NET_TIMEOUT,
            **kw):
    """A TLS connection to 127.0.0.1:port (handshake done)."""
    ctx = ctx or context(**kw)
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s = ctx.wrap_socket(raw, server_hostname=server_name, session=session)
    except Exception:
        raw.close()
        raise
    s.settimeout(timeout)
    return s


def get(port, path="/", ctx=None, server_name="localhost", host=None, session=None,
        headers=(), **kw):
    """One HTTP/1.1 request over TLS (more header fields: headers, as
    (name, value)); returns (RawResponse, session, reused)."""
    s = connect(port, ctx=ctx, server_name=server_name, session=session, **kw)
    try:
        s.sendall(h.request("GET", path, host=host or server_name,
                            headers=[("Connection", "close")] + list(headers)))
        data = b""
        while True:
            try:
                d = s.recv(65536)
            except (ssl.SSLEOFError, ConnectionResetError):
                break
            if not d:
                break
            data += d
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = [tuple(x.strip() for x in ln.decode("latin-1").split(":", 1))
                   for ln in lines[1:]]
        resp = h.RawResponse("HTTP/1.1", status, "", headers, body, head)
        # TLS 1.3 tickets arrive after the handshake: read before taking it.
        return resp, s.session, s.session_reused
    finally:
        s.close()


def s_client(port, *args, servername="localhost", input=b"", timeout=10):
    """openssl s_client -connect 127.0.0.1:port ARGS; returns stdout+stderr."""
    cmd = ["s_client", "-connect", "127.0.0.1:%d" % port]
    if servername:
        cmd += ["-servername", servername]
    r = run(cmd + list(args), input=input, timeout=timeout, check=False)
    return r.stdout.decode("latin-1") + r.stderr.decode("latin-1")


def peer_cert_der(port, **kw):
    s = connect(port, verify=False, **kw)
    try:
        return s.getpeercert(binary_form=True), s.version(), s.cipher()
    finally:
        s.close()


def wait_listening(port, timeout=5.0):
    return h.wait_for(lambda: h.port_open(port), timeout)


