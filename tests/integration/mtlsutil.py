"""
Client certificates for the mutual-TLS tests, made with "openssl ca" at test
time: on top of tlsutil.Pki's CA (which also signs the server's certificate),
client certificates that verify (directly and through an intermediate CA),
that expired, that are not valid yet, that were revoked (in a CRL), that a
CA nobody trusts signed, and self-signed ones; and clients that present
them (pycurl with GnuTLS, Python's ssl with OpenSSL, openssl s_client).
"""
import time
import socket
import ssl
from pathlib import Path

import swsharness as h
import tlsutil as t

CA_CONF = """\
[ ca ]
default_ca = sws
[ sws ]
dir = {dir}
database = {dir}/index.txt
new_certs_dir = {dir}/new
serial = {dir}/serial
crlnumber = {dir}/crlnumber
certificate = {cert}
private_key = {key}
default_md = sha256
default_days = 2
default_crl_days = 2
policy = anything
unique_subject = no
[ anything ]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
[ client ]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
[ subca ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
"""


class Ca:
    """An "openssl ca" directory for cert/key (made self-signed if absent)."""

    def __init__(self, directory, name, cert=None, key=None):
        self.dir = Path(directory)
        (self.dir / "new").mkdir(parents=True, exist_ok=True)
        self.key = Path(key) if key else self.dir / "ca.key"
        self.cert = Path(cert) if cert else self.dir / "ca.crt"
        if not self.cert.exists():
            t.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                   "-nodes", "-keyout", str(self.key), "-out", str(self.cert), "-days", "2",
                   "-subj", "/CN=%s" % name,
                   "-addext", "basicConstraints=critical,CA:TRUE",
                   "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"])
        (self.dir / "index.txt").write_text("")
        (self.dir / "serial").write_text("5000\n")
        (self.dir / "crlnumber").write_text("01\n")
        self.conf = self.dir / "ca.cnf"
        self.conf.write_text(CA_CONF.format(dir=self.dir, cert=self.cert, key=self.key))

    def issue(self, out, subj, ext="client", start=None, end=None, key=None):
        """A certificate for subj ("/O=x/CN=y") at out (.crt; key beside)."""
        out = Path(out)
        key = Path(key) if key else out.with_suffix(".key")
        if not key.exists():
            t.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                   "-out", str(key)])
        csr = out.with_suffix(".csr")
        t.run(["req", "-new", "-key", str(key), "-out", str(csr), "-subj", subj])
        args = ["ca", "-batch", "-notext", "-config", str(self.conf), "-in", str(csr),
                "-out", str(out), "-extensions", ext]
        if start:
            args += ["-startdate", start]
        if not end:
            # two and a half days: $ssl_client_v_remain (whole days, as the
            # two servers compute it a moment apart) is 2 whatever the
            # second each asks in; a whole 2 days made it 1 or 2
            end = time.strftime("%Y%m%d%H%M%SZ", time.gmtime(time.time() + 60 * 3600))
        args += ["-enddate", end]
        t.run(args)
        return out, key

    def revoke(self, crt):
        t.run(["ca", "-config", str(self.conf), "-revoke", str(crt)])

    def crl(self, out):
        t.run(["ca", "-config", str(self.conf), "-gencrl", "-out", str(out)])
        return Path(out)


class ClientPki:
    """pki (tlsutil.Pki) plus the client certificates: self.certs[name] =
    (cert file, key file), the cert file holding the chain to present."""

    def __init__(self, pki, directory):
        d = Path(directory)
        self.pki = pki
        self.root = Ca(d / "root", "ScalWS Test CA", pki.ca, pki.ca_key)
        # the intermediate: signed by the root
        (d / "sub").mkdir(parents=True, exist_ok=True)
        self.root.issue(d / "sub" / "sub.crt", "/O=ScalWS/CN=ScalWS Test Intermediate",
                        ext="subca", key=d / "sub" / "sub.key")
        self.sub = Ca(d / "sub", None, d / "sub" / "sub.crt", d / "sub" / "sub.key")
        self.other = Ca(d / "other", "Some Other CA")
        self.certs = {}
        c = self.certs
        c["valid"] = self.root.issue(d / "valid.crt", "/C=FR/O=ScalWS, Inc./OU=api/CN=alice")
        c["expired"] = self.root.issue(d / "expired.crt", "/CN=expired",
                                       start="20200101000000Z", end="20210101000000Z")
        c["future"] = self.root.issue(d / "future.crt", "/CN=future",
                                      start="20990101000000Z", end="20991231000000Z")
        c["revoked"] = self.root.issue(d / "revoked.crt", "/CN=revoked")
        self.root.revoke(c["revoked"][0])
        leaf, key = self.sub.issue(d / "im_leaf.crt", "/O=ScalWS/CN=bob")
        chain = d / "intermediate.crt"
        chain.write_bytes(leaf.read_bytes() + self.sub.cert.read_bytes())
        c["intermediate"] = (chain, key)
        c["wrongca"] = self.other.issue(d / "wrongca.crt", "/CN=mallory")
        self_key = d / "self.key"
        t.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
               "-nodes", "-keyout", str(self_key), "-out", str(d / "self.crt"), "-days", "2",
               "-subj", "/CN=self"])
        c["selfsigned"] = (d / "self.crt", self_key)
        # CRLs of both CAs (ssl_crl checks every certificate of a chain)
        self.crl = d / "crl.pem"
        self.crl.write_bytes(self.root.crl(d / "root.crl").read_bytes()
                             + self.sub.crl(d / "sub.crl").read_bytes())
        # the CAs a server trusts: the root, and the root with the intermediate
        self.ca = pki.ca
        self.ca_chain = d / "ca_chain.crt"
        self.ca_chain.write_bytes(pki.ca.read_bytes() + self.sub.cert.read_bytes())
        h.make_traversable(d)


def curl(port, path="/", cert=None, cafile=None, http2=False, host="localhost",
         sni="localhost", timeout=10):
    """One request with pycurl (GnuTLS) presenting cert (a ClientPki entry):
    (status, body, http version) or (None, error text, None) when the
    connection failed."""
    import pycurl
    from io import BytesIO

    c = pycurl.Curl()
    out = BytesIO()
    try:
        c.setopt(pycurl.URL, "https://%s:%d%s" % (sni, port, path))
        c.setopt(pycurl.RESOLVE, ["%s:%d:127.0.0.1" % (sni, port)])
        c.setopt(pycurl.WRITEDATA, out)
        c.setopt(pycurl.TIMEOUT, timeout)
        c.setopt(pycurl.CONNECTTIMEOUT, 5)
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2TLS if http2
                 else pycurl.CURL_HTTP_VERSION_1_1)
        if cafile:
            c.setopt(pycurl.CAINFO, str(cafile))
        else:
            c.setopt(pycurl.SSL_VERIFYPEER, 0)
            c.setopt(pycurl.SSL_VERIFYHOST, 0)
        if host != sni:
            c.setopt(pycurl.HTTPHEADER, ["Host: %s" % host])
        if cert:
            c.setopt(pycurl.SSLCERT, str(cert[0]))
            c.setopt(pycurl.SSLKEY, str(cert[1]))
        try:
            c.perform()
        except pycurl.error as e:
            return None, str(e), None
        version = {pycurl.CURL_HTTP_VERSION_2_0: 2}.get(
            c.getinfo(pycurl.INFO_HTTP_VERSION), 1)
        return c.getinfo(pycurl.RESPONSE_CODE), out.getvalue(), version
    finally:
        c.close()


def context(cert=None, tickets=True):
    """A Python ssl (OpenSSL) client context presenting cert, not checking
    the server (the tests look at the server's side)."""
    ctx = t.context(verify=False)
    if cert:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    if not tickets:
        ctx.options |= ssl.OP_NO_TICKET
    return ctx


def get(port, path="/", ctx=None, session=None, host="localhost"):
    """One HTTP/1.1 request with Python's ssl: (status, body, session, reused);
    status None if the handshake or the connection failed."""
    try:
        r, sess, reused = t.get(port, path, ctx=ctx, session=session, host=host)
    except (ssl.SSLError, ConnectionError, socket.timeout, IndexError, ValueError):
        return None, b"", None, False
    return r.status, r.body, sess, reused


# ------------------------------------------------------------ a raw TLS 1.2 client

def _record(ctype, body):
    return bytes([ctype, 3, 3]) + len(body).to_bytes(2, "big") + body


def _handshake(htype, body):
    return bytes([htype]) + len(body).to_bytes(3, "big") + body


def _ext(etype, body):
    return etype.to_bytes(2, "big") + len(body).to_bytes(2, "big") + body


def client_hello(name=b"localhost"):
    """A TLS 1.2 ClientHello (ECDHE with ECDSA or RSA, AES-GCM)."""
    import os as _os
    suites = b"\xc0\x2b\xc0\x2f\xc0\x2c\xc0\x30"
    sni = b"\x00" + len(name).to_bytes(2, "big") + name
    exts = (_ext(0, (len(sni)).to_bytes(2, "big") + sni)
            + _ext(0x0a, b"\x00\x04\x00\x1d\x00\x17")          # x25519, P-256
            + _ext(0x0b, b"\x01\x00")                          # uncompressed points
            + _ext(0x0d, b"\x00\x06\x04\x03\x08\x04\x04\x01"))  # signature algorithms
    body = (b"\x03\x03" + _os.urandom(32) + b"\x00" + len(suites).to_bytes(2, "big") + suites
            + b"\x01\x00" + len(exts).to_bytes(2, "big") + exts)
    return _record(0x16, _handshake(1, body))


def garbage_certificate(port, cert_list, timeout=5):
    """TLS 1.2 by hand up to the client's Certificate message, whose body is
    cert_list (bytes: what goes after the message header, the list's own
    length included or not, as the test likes). Returns (handshake message
    types the server sent, the alert it answered with as (level,
    description), or None if it closed without one)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(client_hello())
        buf, hs, types = b"", b"", []
        while 14 not in types:                       # ServerHelloDone
            while len(buf) < 5 or len(buf) < 5 + int.from_bytes(buf[3:5], "big"):
                d = s.recv(65536)
                if not d:
                    return types, None
                buf += d
            n = 5 + int.from_bytes(buf[3:5], "big")
            rec, buf = buf[:n], buf[n:]
            if rec[0] == 0x15:
                return types, (rec[5], rec[6])
            hs += rec[5:]
            while len(hs) >= 4 and len(hs) >= 4 + int.from_bytes(hs[1:4], "big"):
                types.append(hs[0])
                hs = hs[4 + int.from_bytes(hs[1:4], "big"):]
        s.sendall(_record(0x16, _handshake(11, cert_list)))
        data = b""
        while True:
            try:
                d = s.recv(65536)
            except (ConnectionError, socket.timeout):
                break
            if not d:
                break
            data += d
        if len(data) >= 7 and data[0] == 0x15:
            return types, (data[5], data[6])
        return types, None
    finally:
        s.close()
