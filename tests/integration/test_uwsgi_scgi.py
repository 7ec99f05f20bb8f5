"""uwsgi_pass and scgi_pass against Debian's uWSGI running a Flask
application (tests/integration/uwsgi/app.py, through uwsgiapp.py), over
TCP and unix sockets: the CGI variables and the client's fields, request
bodies (small, large, chunked), the response's fields, redirects, large
responses with buffering on and off, the cache; a server that is down,
slow, or dies in the middle of a response; and against a fake server on a
raw socket (cgipeer.py): the wire format byte by byte, and replies that
are not valid (a 502 and an error-log line). Each test runs for both
protocols."""
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time

import pytest

import cgipeer
import conferr
import swsharness as h
import uwsgiapp

PROTOS = ("uwsgi", "scgi")
# What each protocol's locations start with; the URI after it is the
# application's (PATH_INFO).
PREFIX = {"uwsgi": "/u", "scgi": "/s"}


def locations(proto, app, peer, dead_port):
    p, P = PREFIX[proto], proto
    params = "include %s/conf/%s_params;" % (h.SRC, proto)
    return """
        location ~ ^{p}(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_param X_EXTRA "extra $request_method";
            {P}_param X_EMPTY $http_x_none if_not_empty;
            {P}_pass {tcp}; }}
        location ~ ^{p}unix(/.*)$ {{ {params} {P}_param PATH_INFO $1; {P}_pass {unix}; }}
        location ~ ^{p}nobuf(/.*)$ {{ {params} {P}_param PATH_INFO $1; {P}_buffering off;
            {P}_pass {tcp}; }}
        location ~ ^{p}small(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_buffers 2 4k; {P}_buffer_size 4k; {P}_max_temp_file_size 0;
            {P}_pass {tcp}; }}
        location ~ ^{p}hide(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_hide_header X-Secret; {P}_pass_request_headers off; {P}_pass {tcp}; }}
        location ~ ^{p}slow(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_read_timeout 1s; {P}_pass {tcp}; }}
        location ~ ^{p}down(/.*)$ {{ {params} {P}_pass 127.0.0.1:{dead}; }}
        location ~ ^{p}err(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_intercept_errors on; error_page 404 = /respond; {P}_pass {tcp}; }}
        location ~ ^{p}cache(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            {P}_cache {P}zone; {P}_cache_valid 200 1m; access_log @TMP@/{P}cache.log cs;
            add_header X-Cache $upstream_cache_status; {P}_pass {tcp}; }}
        location ~ ^{p}var(/.*)$ {{ {params} {P}_param PATH_INFO $1;
            set $backend "{tcp}"; {P}_pass $backend; }}
        location {p}fake/ {{ {params} {P}_param X_EXTRA "extra $request_method";
            {P}_param X_EMPTY $http_x_none if_not_empty;
            {P}_param HTTP_X_REPLACED "from the param";
            {mods}
            {P}_pass {peer}; }}
        location {p}big/ {{ {big} {P}_pass {peer}; }}
    """.format(big="".join("%s_param X_BIG%d $http_x_big;" % (proto, i) for i in range(10)),
               p=p, P=P, params=params, tcp=app.addr(proto), unix=app.addr(proto, True),
               peer=peer.addr, dead=dead_port,
               mods="uwsgi_modifier1 5; uwsgi_modifier2 7;" if proto == "uwsgi" else "")


@pytest.fixture(scope="module")
def env(tmp_path_factory, pki):
    tmp = tmp_path_factory.mktemp("uwsgi")
    sockdir = tempfile.mkdtemp(prefix="swsuw")      # short: sun_path is 108 bytes
    os.chmod(sockdir, 0o755)
    app = uwsgiapp.UwsgiApp(tmp / "app", sockdir, tls=pki.leaf("localhost")).start()
    peers = {p: cgipeer.Peer(p) for p in PROTOS}
    dead = h.free_port()
    srv = None
    try:
        srv = h.launch(tmp / "sws", http="""
            uwsgi_cache_path @TMP@/ucache keys_zone=uwsgizone:1m;
            scgi_cache_path @TMP@/scache keys_zone=scgizone:1m;
            log_format cs '$request_uri $upstream_cache_status';
            client_max_body_size 10m;
        """, server="".join(locations(p, app, peers[p], dead) for p in PROTOS) + """
            location ~ ^/tls(/.*)$ {{ include @SRC@/conf/uwsgi_params; uwsgi_param PATH_INFO $1;
                uwsgi_pass suwsgi://127.0.0.1:{tls}; }}
            location ~ ^/tlsverify(/.*)$ {{ include @SRC@/conf/uwsgi_params;
                uwsgi_param PATH_INFO $1; uwsgi_ssl_verify on; uwsgi_ssl_name localhost;
                uwsgi_ssl_trusted_certificate {ca}; uwsgi_pass suwsgi://127.0.0.1:{tls}; }}
            location ~ ^/tlswrong(/.*)$ {{ include @SRC@/conf/uwsgi_params;
                uwsgi_param PATH_INFO $1; uwsgi_ssl_verify on; uwsgi_ssl_name other.test;
                uwsgi_ssl_trusted_certificate {ca}; uwsgi_pass suwsgi://127.0.0.1:{tls}; }}
            location ~ ^/tlsplain(/.*)$ {{ include @SRC@/conf/uwsgi_params;
                uwsgi_param PATH_INFO $1; uwsgi_pass suwsgi://{plain}; }}
        """.format(tls=app.ports["suwsgi"], ca=pki.ca, plain=app.addr("uwsgi")))
        yield srv, app, peers
    finally:
        if srv:
            srv.stop()
        for p in peers.values():
            p.stop()
        app.stop()
        shutil.rmtree(sockdir, ignore_errors=True)


def get(srv, path, **kw):
    return h.curl(srv.url(path), **kw)


def log_size(srv):
    return len(h._read(srv.error_log_path))


def logged(srv, since, needle, timeout=3.0):
    """needle in what the error log got after since (its size then)."""
    return h.wait_for(lambda: needle in h._read(srv.error_log_path)[since:], timeout)


def env_of(r):
    assert r.status == 200, (r.status, r.body[:300])
    return json.loads(r.body)


# ---------------------------------------------------------------- requests

@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("where", ["", "unix"])
def test_get_variables_and_fields(env, proto, where):
    srv = env[0]
    r = get(srv, PREFIX[proto] + where + "/env?a=1&b=two",
            headers=["X-Custom: v1", "X-Custom: v2", "Cookie: a=1", "Cookie: b=2",
                     "Proxy: http://evil/", "X_Under: no"])
    e = env_of(r)
    assert e["REQUEST_METHOD"] == "GET"
    assert e["QUERY_STRING"] == "a=1&b=two"
    assert e["REQUEST_URI"] == PREFIX[proto] + where + "/env?a=1&b=two"
    assert e["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert e["REQUEST_SCHEME"] == "http" and "HTTPS" not in e
    http = e["http"]
    assert http["HTTP_X_CUSTOM"] == "v1, v2"
    assert http["HTTP_COOKIE"] == "a=1; b=2"
    assert http["HTTP_HOST"].startswith("127.0.0.1:")
    # httpoxy, and a name that could pose as another field
    assert "HTTP_PROXY" not in http and "HTTP_X_UNDER" not in http
    if proto == "scgi":
        assert e["SCGI"] == "1" and e["CONTENT_LENGTH"] == "0"
    if where == "":
        assert e["X_EXTRA"] == "extra GET" and "X_EMPTY" not in e


@pytest.mark.parametrize("proto", PROTOS)
def test_request_fields_off(env, proto):
    e = env_of(get(env[0], PREFIX[proto] + "hide/env", headers=["X-Custom: v"]))
    assert e["http"] == {}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("size,chunked", [(7, False), (3 << 20, False), (200000, True)])
def test_post_bodies(env, proto, size, chunked):
    body = bytes((i * 7) % 251 for i in range(size))
    headers = ["Content-Type: application/x-test"]
    if chunked:
        headers.append("Transfer-Encoding: chunked")
    r = get(env[0], PREFIX[proto] + "/echo", method="POST", body=body, headers=headers)
    assert r.status == 200, r.body[:300]
    assert r.body.decode() == "%d %s\n" % (size, hashlib.sha256(body).hexdigest())


@pytest.mark.parametrize("proto", PROTOS)
def test_post_variables(env, proto):
    e = env_of(get(env[0], PREFIX[proto] + "/env", method="POST", body=b"x=1&y=2",
                   headers=["Content-Type: application/x-www-form-urlencoded"]))
    assert e["REQUEST_METHOD"] == "POST" and e["body_len"] == 7
    assert e["CONTENT_LENGTH"] == "7"
    assert e["CONTENT_TYPE"] == "application/x-www-form-urlencoded"


# ---------------------------------------------------------------- responses

@pytest.mark.parametrize("proto", PROTOS)
def test_response_fields(env, proto):
    r = get(env[0], PREFIX[proto] + "/headers")
    assert r.status == 200 and r.body == b"headers\n"
    assert r.header("x-app") == "flask" and r.header("x-secret") == "hidden"
    assert r.headers_all("set-cookie") == ["a=1; Path=/", "b=2; Path=/"]
    assert r.header("content-type").startswith("text/plain")
    assert r.header("content-length") == "8"
    r = get(env[0], PREFIX[proto] + "hide/headers")
    assert r.header("x-secret") is None and r.header("x-app") == "flask"


@pytest.mark.parametrize("proto", PROTOS)
def test_redirects_and_statuses(env, proto):
    r = get(env[0], PREFIX[proto] + "/to")
    assert r.status == 302 and r.header("location") == "http://example.test/there"
    r = get(env[0], PREFIX[proto] + "/to?code=301&where=http://example.test/moved")
    assert r.status == 301 and r.header("location") == "http://example.test/moved"
    r = get(env[0], PREFIX[proto] + "/status/404")
    assert r.status == 404 and r.body == b"status 404\n"
    r = get(env[0], PREFIX[proto] + "/status/503")
    assert r.status == 503 and r.body == b"status 503\n"
    # intercepted: the server's error page
    r = get(env[0], PREFIX[proto] + "err/status/404")
    assert r.status == 200 and r.body == b"Hello, world!"
    r = get(env[0], PREFIX[proto] + "/env", method="HEAD")
    assert r.status == 200 and r.body == b""


def expected_big(n):
    chunk = bytes(range(256)) * 256
    return (chunk * (n // len(chunk) + 1))[:n]


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("where", ["", "nobuf", "small"])
@pytest.mark.parametrize("stream", [False, True])
def test_large_responses(env, proto, where, stream):
    n = 2500000 + 17
    r = get(env[0], PREFIX[proto] + where + "/big?n=%d&stream=%d" % (n, stream))
    assert r.status == 200
    assert len(r.body) == n and r.body == expected_big(n)
    if not stream:
        assert r.header("content-length") == str(n)


@pytest.mark.parametrize("proto", PROTOS)
def test_target_with_variables(env, proto):
    e = env_of(get(env[0], PREFIX[proto] + "var/env"))
    assert e["REQUEST_METHOD"] == "GET"


@pytest.mark.parametrize("proto", PROTOS)
def test_cache(env, proto):
    srv = env[0]
    path = PREFIX[proto] + "cache/cached"
    r1 = get(srv, path)
    r2 = get(srv, path)
    assert r1.status == r2.status == 200
    assert r1.header("x-cache") == "MISS" and r2.header("x-cache") == "HIT"
    assert r1.body == r2.body and r1.body.startswith(b"count ")
    log = srv.tmp / ("%scache.log" % proto)
    assert h.wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 2)
    assert [x.split()[1] for x in log.read_text().splitlines()[:2]] == ["MISS", "HIT"]


# ---------------------------------------------------------------- failures

@pytest.mark.parametrize("proto", PROTOS)
def test_server_down(env, proto):
    srv = env[0]
    since = log_size(srv)
    r = get(srv, PREFIX[proto] + "down/env")
    assert r.status == 502
    assert logged(srv, since, "connect")


@pytest.mark.parametrize("proto", PROTOS)
def test_server_slow(env, proto):
    since = log_size(env[0])
    t = time.monotonic()
    r = get(env[0], PREFIX[proto] + "slow/slow?s=3")
    assert r.status == 504
    assert time.monotonic() - t < 2.8
    assert logged(env[0], since, "timed out")


@pytest.mark.parametrize("proto", PROTOS)
def test_server_dies_mid_response(env, proto):
    srv = env[0]
    since = log_size(srv)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", PREFIX[proto] + "/die"))
        data = c.read_until_close(timeout=5)
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and b"Content-Length: 1000000" in head
    assert 0 < len(rest) < 1000000
    assert logged(srv, since, "prematurely closed")
    # the server is fine afterwards (uWSGI replaces its worker)
    assert h.wait_for(lambda: get(srv, PREFIX[proto] + "/env").status == 200, timeout=10)


# ---------------------------------------------------------------- the wire

@pytest.mark.parametrize("proto", PROTOS)
def test_wire_format(env, proto):
    srv, peer = env[0], env[2][proto]
    peer.requests.clear()
    peer.reply = (b"Status: 201 Created\r\nX-Fake: yes\r\nContent-Type: text/x-fake\r\n"
                  b"Content-Length: 5\r\n\r\nhelloEXTRA")
    r = get(srv, PREFIX[proto] + "fake/x?q=1", method="POST", body=b"0123456789",
            headers=["X-Replaced: from the client", "X-Other: o"])
    assert r.status == 201 and r.body == b"hello", (r.status, r.body)
    assert r.header("x-fake") == "yes" and r.header("content-type") == "text/x-fake"
    head, pairs, body = peer.requests[-1]
    assert head is not None, pairs
    names = [n for n, _ in pairs]
    env_ = dict(pairs)
    assert body == b"0123456789"
    if proto == "uwsgi":
        m1, m2, _ = cgipeer.parse_uwsgi(head)
        assert (m1, m2) == (5, 7)
        assert env_["CONTENT_LENGTH"] == "10"
    else:
        # CONTENT_LENGTH first, the body's length; SCGI=1 (from scgi_params)
        assert pairs[0] == ("CONTENT_LENGTH", "10")
        assert names.count("SCGI") == 1 and env_["SCGI"] == "1"
    assert env_["X_EXTRA"] == "extra POST" and "X_EMPTY" not in env_
    assert env_["HTTP_X_REPLACED"] == "from the param"
    assert names.count("HTTP_X_REPLACED") == 1
    # in the configuration's order, constants and variables alike
    assert names.index("REQUEST_METHOD") < names.index("X_EXTRA") \
        < names.index("HTTP_X_REPLACED") < names.index("HTTP_X_OTHER")
    assert env_["HTTP_X_OTHER"] == "o"
    assert env_["QUERY_STRING"] == "q=1" and env_["REQUEST_METHOD"] == "POST"


@pytest.mark.parametrize("proto", PROTOS)
def test_wire_http_status_line(env, proto):
    srv, peer = env[0], env[2][proto]
    peer.reply = b"HTTP/1.1 418 I'm a teapot\r\nX-Fake: tea\r\n\r\nshort and stout"
    r = get(srv, PREFIX[proto] + "fake/tea")
    assert r.status == 418 and r.body == b"short and stout"
    assert r.header("x-fake") == "tea"
    # a Location without a status: a 302 (no local redirect, as nginx),
    # passed as it came (nginx does not complete an upstream's)
    peer.reply = b"Location: /elsewhere\r\n\r\n"
    r = get(srv, PREFIX[proto] + "fake/loc")
    assert r.status == 302 and r.header("location") == "/elsewhere"


BAD_REPLIES = [
    (b"no colon in this line\r\n\r\n", "invalid header line"),
    (b"HTTP/1.1 9x9 Bad\r\n\r\n", "invalid status line"),
    (b"Status: abc\r\n\r\n", "invalid \"Status\" header"),
    (b"Status: 200\r\nStatus: 404\r\n\r\n", "invalid \"Status\" header"),
    (b"Content-Length: 12x\r\n\r\n", "invalid \"Content-Length\" header"),
    (b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", "invalid \"Content-Length\""),
    (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello", "both"),
    (b"Location:\r\n\r\n", "invalid \"Location\" header"),
    (b"Bad\x01Name: x\r\n\r\n", "invalid header line"),
    (b"X-Ok: 1\r\nX-Bad: a\x00b\r\n\r\n", "invalid header line"),
    (b"Content-Type: text/plain\r\n", "closed the connection"),
    (None, "closed the connection"),
]


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("reply,why", BAD_REPLIES)
def test_bad_replies(env, proto, reply, why):
    srv, peer = env[0], env[2][proto]
    peer.reply = reply
    since = log_size(srv)
    r = get(srv, PREFIX[proto] + "fake/bad")
    assert r.status == 502, (reply, r.status, r.body[:200])
    assert logged(srv, since, why), srv.error_log()[since:]
    assert srv.alive()


@pytest.mark.parametrize("proto", PROTOS)
def test_short_body(env, proto):
    """A Content-Length the server does not keep: the client's response is
    cut (its connection closed), the error logged."""
    srv, peer = env[0], env[2][proto]
    peer.reply = b"Status: 200 OK\r\nContent-Length: 100\r\n\r\nonly this"
    since = log_size(srv)
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", PREFIX[proto] + "fake/short"))
        data = c.read_until_close(timeout=5)
    assert data.startswith(b"HTTP/1.1 200") and b"Content-Length: 100" in data
    assert data.endswith(b"only this")
    assert logged(srv, since, "prematurely closed")


def test_uwsgi_over_tls(env):
    """uwsgi_pass suwsgi:// to uWSGI's --ssl-socket, with uwsgi_ssl_verify
    against the right and a wrong name, and to a server without TLS."""
    srv = env[0]
    e = env_of(get(srv, "/tls/env?x=1"))
    assert e["QUERY_STRING"] == "x=1"
    body = bytes(range(256)) * 4000
    r = get(srv, "/tlsverify/echo", method="POST", body=body)
    assert r.status == 200 and r.body.startswith(b"%d " % len(body))
    since = log_size(srv)
    assert get(srv, "/tlswrong/env").status == 502
    assert logged(srv, since, "certificate")
    since = log_size(srv)
    assert get(srv, "/tlsplain/env").status == 502
    assert logged(srv, since, "TLS handshake")


def test_uwsgi_packet_too_big(env):
    """The variables of a uwsgi packet are 64 kB at most: a 500, logged."""
    srv = env[0]
    since = log_size(srv)
    r = get(srv, "/ubig/", headers=["X-Big: " + "b" * 7000])
    assert r.status == 500
    assert logged(srv, since, "uwsgi request is too big")


# ---------------------------------------------------------------- configuration

FAMILY = """
    location /{P}a/ {{
        {P}_pass 127.0.0.1:9; {P}_param A $uri if_not_empty; {P}_param B c;
        {P}_pass_request_headers off; {P}_pass_request_body on;
        {P}_pass_header X-A; {P}_hide_header X-B; {P}_ignore_headers Expires;
        {P}_buffering off; {P}_buffer_size 8k; {P}_buffers 8 8k; {P}_busy_buffers_size 16k;
        {P}_read_timeout 5s; {P}_send_timeout 5s; {P}_connect_timeout 2s;
        {P}_next_upstream error timeout http_502; {P}_next_upstream_tries 2;
        {P}_next_upstream_timeout 10s; {P}_intercept_errors on; {P}_request_buffering off;
        {P}_ignore_client_abort on; {P}_socket_keepalive on; {P}_limit_rate 0;
        {P}_temp_path @TMP@/{P}t 1 2; {P}_max_temp_file_size 10m;
        {P}_temp_file_write_size 16k; {P}_bind 127.0.0.1;
        {P}_cache cz{P}; {P}_cache_key $uri; {P}_cache_valid 200 1m;
        {P}_cache_methods GET HEAD; {P}_cache_min_uses 1; {P}_cache_bypass $arg_nc;
        {P}_no_cache $arg_nc; {P}_cache_revalidate on; {P}_cache_lock on;
        {P}_cache_lock_timeout 5s; {P}_cache_lock_age 5s; {P}_cache_use_stale error timeout;
        {P}_cache_background_update on; {EXTRA}
    }}
    location /{P}b/ {{ {P}_pass unix:/tmp/x.sock; }}
    location /{P}d/ {{ {P}_pass {SCHEME}127.0.0.1:9; }}
    location /{P}c/ {{ {P}_pass $arg_to; }}
"""


@pytest.mark.parametrize("proto", PROTOS)
def test_directives_accepted(tmp_path, proto):
    extra = ("uwsgi_modifier1 30; uwsgi_modifier2 0; uwsgi_ssl_server_name on; "
             "uwsgi_ssl_name a.test; uwsgi_ssl_verify off; uwsgi_ssl_verify_depth 2; "
             "uwsgi_ssl_protocols TLSv1.2 TLSv1.3; uwsgi_ssl_ciphers DEFAULT; "
             "uwsgi_ssl_session_reuse on; uwsgi_ssl_password_file @TMP@/pw;"
             if proto == "uwsgi" else "")
    (tmp_path / "pw").write_text("secret\n")
    conferr.check_ok(tmp_path, http="%s_cache_path @TMP@/c keys_zone=cz%s:1m;" % (proto, proto),
                     server=FAMILY.format(P=proto, EXTRA=extra,
                                          SCHEME="suwsgi://" if proto == "uwsgi" else ""))


@pytest.mark.parametrize("server,words", [
    ("location /a/ { uwsgi_pass 127.0.0.1:1; uwsgi_pass 127.0.0.1:2; # ERR\n }",
     ["is duplicate"]),
    ("location /a/ { scgi_param A b maybe; # ERR\n }", ["invalid parameter \"maybe\""]),
    ("location /a/ { uwsgi_param \"\" b; # ERR\n }", ["has an empty name"]),
    ("location /a/ { uwsgi_modifier1 256; # ERR\n }", ["invalid number \"256\""]),
    ("location /a/ { uwsgi_modifier1 x; # ERR\n }", ["invalid number \"x\""]),
    ("location /a/ { scgi_pass http://127.0.0.1:1; # ERR\n }", ["takes an address"]),
    ("location /a/ { scgi_ssl_verify on; # ERR\n }", ["unknown directive"]),
    ("location /a/ { scgi_param A; # ERR\n }", ["invalid number of arguments"]),
    ("location /a/ { uwsgi_param A \"${x\"; # ERR\n }", ["uwsgi_param A"]),
    ("scgi_pass 127.0.0.1:1; # ERR\n", ["not allowed here"]),
])
def test_directives_refused(tmp_path, server, words):
    conferr.check(tmp_path, words, server=server)


def test_uwsgi_scheme_accepted(tmp_path):
    conferr.check_ok(tmp_path, server="location /a/ { uwsgi_pass uwsgi://127.0.0.1:9; }")


def test_scgi_without_params(env):
    """No scgi_param at all: CONTENT_LENGTH first, then SCGI 1, which the
    specification requires (nginx sends only what the parameters say)."""
    srv, peer = env[0], env[2]["scgi"]
    peer.reply = b"Status: 204 No Content\r\n\r\n"
    r = get(srv, "/sbig/", method="POST", body=b"abc", headers=["X-Big: b"])
    assert r.status == 204
    pairs = peer.requests[-1][1]
    assert pairs[:2] == [("CONTENT_LENGTH", "3"), ("SCGI", "1")]
    assert dict(pairs)["X_BIG0"] == "b" and peer.requests[-1][2] == b"abc"
