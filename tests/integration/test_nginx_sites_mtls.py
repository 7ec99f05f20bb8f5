"""An mTLS API (tests/sites/mtls-api.conf) under nginx and under scalwsd,
side by side: clients with certificates that verify, expire, were revoked
or come from another CA, or none, over HTTP/1.1 and HTTP/2; the answers
(status and body), and what the backend is told about the client, must be
the same."""
import json

import pytest

import mtlsutil as m
import swsharness as h
import tlsutil as t
from test_nginx_sites import echo_of, pair, server_token  # noqa: F401 (fixture)


@pytest.fixture(scope="module")
def cpki(tmp_path_factory):
    d = tmp_path_factory.mktemp("mtls-site")
    return m.ClientPki(t.Pki(d / "pki"), d / "clients")


def start(pair, cpki):
    crt, key = cpki.pki.chain("localhost")
    return pair("mtls-api.conf", extra={"CERT": crt, "KEY": key, "CA": cpki.ca,
                                        "CRL": cpki.crl})


def ask(port, path, cert, name="api.test", http2=False):
    status, body, version = m.curl(port, path, cert=cert, http2=http2, sni=name, host=name)
    return status, server_token(body) if isinstance(body, bytes) else body, version


def test_mtls_api_site(pair, cpki):
    ports = start(pair, cpki)
    certs = [None] + ["valid", "intermediate", "expired", "revoked", "wrongca", "selfsigned"]
    seen = {}
    for name in certs:
        cert = cpki.certs[name] if name else None
        for http2 in (False, True):
            for path in ("/health", "/whoami", "/v1/orders?id=7", "/admin/users"):
                rn, rs = (ask(p, path, cert, http2=http2) for p in ports)
                what = (name, http2, path)
                assert rs[0] == rn[0] and rs[2] == rn[2], (what, rn, rs)
                if path.startswith(("/v1/", "/admin/")) and rs[0] == 200:
                    # what the backend was told: the client's facts, alike
                    en, es = (json.loads(r[1]) for r in (rn, rs))
                    hn, hs = (dict((k.lower(), v) for k, v in e["headers"]) for e in (en, es))
                    for k in ("x-client-verify", "x-client-dn", "x-client-issuer",
                              "x-client-serial", "x-client-fingerprint", "x-client-cert",
                              "x-admin"):
                        assert hs.get(k) == hn.get(k), (what, k, hn, hs)
                    assert es["target"] == en["target"], (what, en, es)
                else:
                    assert rs[1] == rn[1], (what, rn, rs)
                seen[what] = rs
    assert seen[("valid", True, "/whoami")][:2] == (200, (
        b'{"verify":"SUCCESS","dn":"CN=alice,OU=api,O=ScalWS\\, Inc.,C=FR",'
        b'"issuer":"CN=ScalWS Test CA","serial":"5001","days":"2"}\n')), seen
    assert seen[(None, False, "/v1/orders?id=7")][0] == 401
    assert seen[("valid", False, "/v1/orders?id=7")][0] == 200
    assert seen[("intermediate", True, "/admin/users")][0] == 403
    assert seen[("valid", True, "/admin/users")][0] == 200
    for name in ("expired", "revoked", "wrongca", "selfsigned"):
        assert seen[(name, False, "/health")][:2] == (403, (
            b'{"error":"bad client certificate","verify":"FAILED:%s"}\n'
            % {"expired": b"certificate has expired", "revoked": b"certificate revoked",
               "wrongca": b"unable to verify the first certificate",
               "selfsigned": b"unable to get certificate CRL"}[name])), name


def test_mtls_strict_twin(pair, cpki):
    ports = start(pair, cpki)
    for name in (None, "valid", "expired"):
        cert = cpki.certs[name] if name else None
        for http2 in (False, True):
            rn, rs = (ask(p, "/x", cert, name="strict.test", http2=http2) for p in ports)
            assert rs == rn, (name, http2, rn, rs)
            assert rs[0] == (200 if name == "valid" else 400), rs
    # another name than the handshake's, on a server that checks: 421
    rn, rs = (m.curl(p, "/x", cert=cpki.certs["valid"], sni="strict.test", host="api.test")
              for p in ports)
    assert rs[0] == rn[0] == 421, (rn, rs)
    # plain HTTP: sent to https on the same port
    for p in ports:
        r = h.exchange(p, h.request("GET", "/a?b=1", host="strict.test"))
        assert r.status == 302 and r.header("location") == "https://strict.test:%d/a?b=1" % p, r
