"""Fields whose names have an underscore, and the variables that read
fields ($http_, $sent_http_, $upstream_http_, $upstream_trailer_, $cookie_,
$arg_), under nginx 1.22 and scalwsd side by side (tests/sites/httpvar.conf).

nginx reads a field for $http_NAME by lower-casing the field's name and
reading each '-' as '_': with underscores_in_headers on (or
ignore_invalid_headers off), "X_Foo: v" is $http_x_foo as "X-Foo: v" is.
The fields nginx keeps apart ($http_x_forwarded_for, $http_user_agent ...)
and realip's real_ip_header read their own spelling only, so that a
client's "X_Forwarded_For" cannot pass for the "X-Forwarded-For" a proxy
writes. Each request goes to both servers; the answers must be the same,
and each is also checked against the value nginx gives, so that the
comparison cannot pass with both wrong in the same way.
"""
import json
import os
import subprocess
import time

import pytest

import swsharness as h
from test_nginx_sites import NGINX, site_text, start_server


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """({"nginx": [port, port2, port3, h2c port], "scalwsd": [...]}, the origin, the
    directory with each server's own)."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    from proxyorigin import Origin
    tmp = tmp_path_factory.mktemp("httpvar")
    origin = Origin("app")
    running, ports = [], {}
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp / who
            d.mkdir()
            h.make_traversable(tmp)
            ps = [h.free_port() for _ in range(4)]
            running.append(start_server(who, d, ps[0], site_text(
                "httpvar.conf", PORT=ps[0], PORT2=ps[1], PORT3=ps[2], PORT4=ps[3],
                ORIGIN=origin.addr, DIR=d)))
            ports[who] = ps
        yield ports, origin, tmp
    finally:
        for r in running:
            r.stop()
        origin.stop()


def ask(port, target, *fields):
    """The response to a GET of target with these raw field lines."""
    data = "GET %s HTTP/1.1\r\nHost: localhost\r\n" % target
    data += "".join(f + "\r\n" for f in fields) + "\r\n"
    with h.Conn(port) as c:
        c.send(data.encode("latin-1"))
        return c.read_response()


def both(sites, server, target, *fields):
    """(nginx's response, scalwsd's) from the server-th server block."""
    ports = sites[0]
    return tuple(ask(ports[who][server], target, *fields) for who in ("nginx", "scalwsd"))


def same_body(sites, server, target, *fields):
    rn, rs = both(sites, server, target, *fields)
    assert (rs.status, rs.body) == (rn.status, rn.body), (target, fields, rn.body, rs.body)
    return rn.body.decode()


FIELDS = ("X_Foo: under", "X-Foo: dash", "X-Foo_: trail", "User_Agent: fake", "Referer: r1",
          "Referer: r2", "X_Forwarded_For: 1.2.3.4", "Cookie: a_b=1; A_B=2; c-d=3",
          "X_Api_Key: k1")


def test_request_field_variables(sites):
    body = same_body(sites, 0, "/vars?a_b=1&A_B=2&c-d=3", *FIELDS)
    # the first spelling of x_foo; Referer's first line; X_Forwarded_For and
    # User_Agent are not the fields nginx keeps apart; cookies and arguments
    # by name as written (any case, no '-' for '_')
    assert body == ("foo=[under] foo_=[trail] ua=[] ref=[r1] xff=[] "
                    "ck=[a_b=1; A_B=2; c-d=3] c_ab=[1] c_AB=[1] c_cd=[] a_ab=[1] a_AB=[1] "
                    "a_cd=[] host=[localhost] real=[127.0.0.1] ok=[yes]\n"), body
    # the other order: the dash spelling first; realip takes X-Forwarded-For
    # and not X_Forwarded_For; a map reads the first spelling
    body = same_body(sites, 0, "/vars", "X-Foo: dash", "X_Foo: under",
                     "X-Forwarded-For: 5.6.7.8", "X_Forwarded_For: 1.2.3.4",
                     "x_api_key: k2", "X-Api-Key: k1")
    assert body.startswith("foo=[dash] foo_=[] ua=[] ref=[] xff=[5.6.7.8] "), body
    assert body.endswith("real=[5.6.7.8] ok=[no]\n"), body
    # X_Forwarded_For alone moves nothing
    body = same_body(sites, 0, "/vars", "X_Forwarded_For: 1.2.3.4", "X_Real_IP: 1.2.3.4")
    assert "xff=[] " in body and "real=[127.0.0.1]" in body, body


def test_http2_fields(sites):
    # the same fields over HTTP/2 (cleartext, prior knowledge): names come
    # lower-cased, the variables read them alike; no Host field: $http_host
    # is the :authority
    bodies = []
    for who in ("nginx", "scalwsd"):
        cmd = ["curl", "-sS", "--max-time", "10", "--http2-prior-knowledge",
               "http://127.0.0.1:%d/vars?a_b=1" % sites[0][who][3]]
        for f in ("x_foo: under", "X-Foo_: trail", "X_Forwarded_For: 1.2.3.4",
                  "Cookie: a_b=1", "User-Agent:"):
            cmd += ["-H", f]
        out = subprocess.run(cmd, capture_output=True, timeout=15)
        assert out.returncode == 0, (who, out.stderr)
        # $http_host is the :authority as sent: each server's own port
        bodies.append(out.stdout.decode().replace(":%d]" % sites[0][who][3], ":PORT]"))
    assert bodies[0] == bodies[1], bodies
    assert "host=[127.0.0.1:PORT]" in bodies[0], bodies
    assert bodies[0].startswith("foo=[under] foo_=[trail] ua=[] ref=[] xff=[] "), bodies


def test_variable_names_any_case(sites):
    body = same_body(sites, 0, "/case?Q=7", "X_Foo: u", "User-Agent: ua", "Cookie: AB=1")
    assert body == "U=[/case] A=[u] B=[1] C=[7] D=[ua]\n", body


def last_log_lines(sites, name):
    """The last line of each server's log name (nginx's, scalwsd's)."""
    lines = []
    for who in ("nginx", "scalwsd"):
        path = sites[2] / who / name
        deadline = time.monotonic() + 5
        while not (path.exists() and path.read_text().endswith("\n")) \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        lines.append(path.read_text().splitlines()[-1])
    return lines


def test_log_format(sites):
    ports = sites[0]
    for who in ("nginx", "scalwsd"):
        r = ask(ports[who][0], "/logged?a_b=3", "X_Foo: u", "X-Foo_: t",
                "X_Forwarded_For: 1.2.3.4", "Cookie: a_b=9")
        assert r.status == 204, (who, r)
    lines = last_log_lines(sites, "fields.log")
    assert lines[0] == lines[1] == "u|t|-|9|3|out", lines


def test_upstream_trailer(sites):
    # the server sends a trailer field; nginx's proxy keeps none (gRPC's
    # only): $upstream_trailer_x_t is empty in both, the configuration loads
    ports = sites[0]
    for who in ("nginx", "scalwsd"):
        r = ask(ports[who][0], "/trailer")
        assert (r.status, r.body) == (200, b"abc"), (who, r)
    lines = last_log_lines(sites, "trailer.log")
    assert lines[0] == lines[1] == "tr=[-] declared=[X-T]", lines


def test_if_reads_underscore_field(sites):
    for fields, status in ((("X_Block: 1",), 403), (("X-Block: 1",), 403), ((), 200),
                           (("X.Block: 1",), 200)):
        rn, rs = both(sites, 0, "/if", *fields)
        assert rn.status == rs.status == status, (fields, rn, rs)


def test_default_server_drops_underscore_fields(sites):
    # underscores_in_headers off: the field is dropped, no variable sees it
    assert same_body(sites, 1, "/vars", "X_Foo: under", "X-Foo_: trail") == "foo=[] foo_=[]\n"
    # ignore_invalid_headers off: kept, and read; '.' is not read as '_'
    body = same_body(sites, 2, "/vars", "X_Foo: under", "X-Foo_: trail", "X.A_B: dot")
    assert body == "foo=[under] foo_=[trail] dot=[]\n", body


def test_upstream_and_sent_fields(sites):
    rn, rs = both(sites, 0, "/fields?X_Up=u&X-Up=d&X-Up_=t&X-Dash=x")
    assert rn.status == rs.status == 200, (rn, rs)
    want = "up=[u] up_=[t] dash=[x] sent=[u] tr=[]"
    assert rn.header("x-seen") == rs.header("x-seen") == want, (rn.headers, rs.headers)
    # the field with '_' reaches the client from both
    for r in (rn, rs):
        assert r.header("x_up") == "u", r.headers


def seen_by_origin(origin, n_before, target):
    """The requests the origin got for target since n_before."""
    deadline = time.monotonic() + 5
    while True:
        with origin.lock:
            got = [q for q in origin.requests[n_before:] if q.target == target]
        if got or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def x_fields(req):
    return sorted((k.lower(), v) for k, v in req.headers if k.lower().startswith("x"))


def passed(sites, server, target, upstream_target, *fields):
    """What the origin saw of each server's request (x- and x_ fields)."""
    ports, origin = sites[0], sites[1]
    out = []
    for who in ("nginx", "scalwsd"):
        n = len(origin.requests)
        r = ask(ports[who][server], target, *fields)
        assert r.status == 200, (who, r)
        got = seen_by_origin(origin, n, upstream_target)
        assert len(got) == 1, (who, got, [(q.method, q.target) for q in origin.requests[n:]])
        out.append(x_fields(got[0]))
    assert out[0] == out[1], out
    return out[0]


def test_proxy_passes_underscore_fields(sites):
    # proxy_set_header X-Forwarded-For / X-User replace the client's fields
    # (realip made the address 9.9.9.9 from X-Forwarded-For, not X_Forwarded_For)
    # of that spelling; the '_' spellings are other fields and pass, as
    # nginx passes them: the application must not read them as the same
    # (PHP, WSGI and CGI do: docs/directives.md, underscores_in_headers)
    got = passed(sites, 0, "/echo", "/echo", "X_Forwarded_For: 1.2.3.4", "X-Forwarded-For: 9.9.9.9",
                 "X_User: admin", "X-User: admin", "X_Foo: v")
    assert got == [("x-forwarded-for", "9.9.9.9, 9.9.9.9"), ("x-user", "verified"),
                   ("x_foo", "v"), ("x_forwarded_for", "1.2.3.4"), ("x_user", "admin")], got
    # proxy_set_header of the '_' spelling, empty: the client's is dropped
    assert passed(sites, 0, "/strip", "/echo", "X_User: admin", "X-User: admin") \
        == [("x-user", "verified")]
    # the default: dropped before they reach anything
    assert passed(sites, 1, "/echo", "/echo", "X_Foo: v", "X_User: admin") == []
    # ignore_invalid_headers off: every field passes
    assert passed(sites, 2, "/echo", "/echo", "X_Foo: v", "X.Dot: d") \
        == [("x.dot", "d"), ("x_foo", "v")]


def test_auth_request_sees_underscore_fields(sites):
    got = passed(sites, 0, "/auth", "/echo", "X_Foo: v", "X_Forwarded_For: 1.2.3.4")
    assert got == [("x_foo", "v"), ("x_forwarded_for", "1.2.3.4")], got


def test_cache_key_from_underscore_field(sites):
    # proxy_cache_key "$http_x_tenant": X_Tenant and X-Tenant are one key
    ports = sites[0]
    for who in ("nginx", "scalwsd"):
        first = ask(ports[who][0], "/cached", "X_Tenant: %s" % who)
        again = ask(ports[who][0], "/cached", "X-Tenant: %s" % who)
        assert first.status == again.status == 200, (who, first, again)
        assert json.loads(again.body)["headers"] == json.loads(first.body)["headers"], who
        other = ask(ports[who][0], "/cached", "X-Tenant: other-%s" % who)
        assert json.loads(other.body)["headers"] != json.loads(first.body)["headers"], who


CGI_SITE = """
    server {
        listen 127.0.0.1:@PORT@;
        server_name app.test;
        underscores_in_headers on;
        location / {
            include @SRC@/conf/uwsgi_params;
            uwsgi_pass @UWSGI@;
        }
    }
"""


def test_cgi_style_backend(tmp_path):
    """A field with '_' to uwsgi (fastcgi and scgi share the code): nginx
    passes X_Foo as HTTP_X_FOO beside X-Foo's, the application keeps the
    later, so that a client's X_Foo can pose as X-Foo; scalwsd never passes
    it (docs/compat.md: RFC 3875 4.1.18 names both HTTP_X_FOO)."""
    import shutil
    import tempfile
    import uwsgiapp
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    sockdir = tempfile.mkdtemp(prefix="swshv")      # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)
    app = uwsgiapp.UwsgiApp(tmp_path / "app", sockdir).start()
    running, ports = [], {}
    try:
        h.make_traversable(tmp_path)
        for who in ("nginx", "scalwsd"):
            d = tmp_path / who
            d.mkdir()
            ports[who] = h.free_port()
            text = CGI_SITE.replace("@PORT@", str(ports[who])).replace("@SRC@", h.SRC) \
                .replace("@UWSGI@", app.addr("uwsgi", unix=True))
            running.append(start_server(who, d, ports[who], text))

        def env(who, *fields):
            r = ask(ports[who], "/env", *fields)
            assert r.status == 200, (who, r)
            return json.loads(r.body)["http"].get("HTTP_X_FOO")
        assert env("nginx", "X-Foo: good", "X_Foo: evil") == "evil"
        assert env("scalwsd", "X-Foo: good", "X_Foo: evil") == "good"
        assert env("nginx", "X_Foo: evil") == "evil"
        assert env("scalwsd", "X_Foo: evil") is None
    finally:
        for r in running:
            r.stop()
        app.stop()
        shutil.rmtree(sockdir, ignore_errors=True)
