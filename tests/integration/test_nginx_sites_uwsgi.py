"""A Python application behind uWSGI (tests/sites/uwsgi-site.conf): the
same Flask application (tests/integration/uwsgi/app.py) under one uWSGI
speaking uwsgi and SCGI, in front of it nginx 1.22 and scalwsd with the
same site, side by side: status, the headers a client acts on, the body."""
import json
import os
import shutil
import tempfile

import pytest

import swsharness as h
import test_nginx_sites as ns
import uwsgiapp


@pytest.fixture
def site(tmp_path):
    sockdir = tempfile.mkdtemp(prefix="swsuw")      # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)
    app = uwsgiapp.UwsgiApp(tmp_path / "app", sockdir).start()
    running = []
    try:
        root = tmp_path / "root"
        root.mkdir()
        (root / "missing.html").write_text("<p>the site's own page</p>\n")
        h.make_traversable(tmp_path)
        ports = []
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            port = h.free_port()
            text = ns.site_text("uwsgi-site.conf", PORT=port, ROOT=root, DIR=d, SRC=h.SRC,
                                UWSGI=app.addr("uwsgi", unix=True), SCGI=app.addr("scgi"))
            running.append(ns.start_server(who, d, port, text))
            ports.append(port)
        yield ports
    finally:
        for r in running:
            r.stop()
        app.stop()
        shutil.rmtree(sockdir, ignore_errors=True)


HOST = ["Host: app.test"]


def env_same(ports, method, path, headers=(), body=b""):
    """/env answers what the application was given: the same for both but
    the server's own port."""
    out = []
    for port in ports:
        r = h.exchange(port, h.request(method, path, host=None, headers=list(HOST) + list(headers),
                                       body=body), method=method)
        assert r.status == 200, (path, r.status, r.body[:200])
        e = json.loads(r.body)
        assert e.pop("SERVER_PORT") == str(port)
        out.append(e)
    assert out[0] == out[1], (method, path, out)
    return out[1]


def test_uwsgi_site(site):
    ports = site
    for path in ("/headers", "/to", "/to?where=/relative", "/to?code=301&where=/r2",
                 "/status/404", "/status/500", "/status/204", "/nothing-here",
                 "/big?n=300000", "/big?n=300000&stream=1", "/downloads/any?n=1000000",
                 "/errors/x", "/scgi/headers", "/scgi/to?where=/back", "/scgi/status/418",
                 "/scgi/big?n=200000&stream=1"):
        ns.same(ports, "GET", path, HOST, also=("x-app", "x-secret", "content-length",
                                                "set-cookie"))
        ns.same(ports, "HEAD", path, HOST, body=False,
                also=("x-app", "x-secret", "content-length"))


def test_uwsgi_site_variables(site):
    ports = site
    e = env_same(ports, "GET", "/env?a=1&b=%20x", ["X-Custom: one", "Cookie: a=1; b=2"])
    assert e["QUERY_STRING"] == "a=1&b=%20x" and e["SERVER_NAME"] == "app.test"
    assert e["http"]["HTTP_X_CUSTOM"] == "one"
    # A field sent twice: nginx 1.22 sends two HTTP_X_CUSTOM (the program
    # keeps the last), scalwsd one with both values (docs/compat.md).
    seen = []
    for port in ports:
        r = h.exchange(port, h.request("GET", "/env", host="app.test",
                                       headers=["X-Custom: one", "X-Custom: two",
                                                "Cookie: a=1", "Cookie: b=2"]))
        seen.append(json.loads(r.body)["http"])
    assert (seen[0]["HTTP_X_CUSTOM"], seen[0]["HTTP_COOKIE"]) == ("two", "b=2")
    assert (seen[1]["HTTP_X_CUSTOM"], seen[1]["HTTP_COOKIE"]) == ("one, two", "a=1; b=2")
    e = env_same(ports, "GET", "/scgi/env?q", ["Accept-Language: fr"])
    assert e["SCGI"] == "1" and e["CONTENT_LENGTH"] == "0"
    for path in ("/env", "/scgi/env"):
        e = env_same(ports, "POST", path, ["Content-Type: text/plain", "Content-Length: 11"],
                     b"hello world")
        assert e["body_len"] == 11


def test_uwsgi_site_bodies(site):
    ports = site
    body = bytes(range(256)) * 4000
    answers = []
    for port in ports:
        r = h.exchange(port, h.request("POST", "/echo", host="app.test",
                                       headers=["Content-Length: %d" % len(body)], body=body))
        answers.append((r.status, r.body))
    assert answers[0] == answers[1] and answers[0][0] == 200


def test_uwsgi_site_cache(site):
    ports = site
    first = [ns.fetch(p, "GET", "/cached", HOST)[0] for p in ports]
    again = [ns.fetch(p, "GET", "/cached", HOST)[0] for p in ports]
    assert [r.header("x-cache") for r in first] == ["MISS", "MISS"]
    assert [r.header("x-cache") for r in again] == ["HIT", "HIT"]
    assert again[1].body == first[1].body
