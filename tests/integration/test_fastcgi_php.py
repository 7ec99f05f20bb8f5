"""FastCGI end to end against a real PHP-FPM (Debian's php8.2-fpm, a private
pool on a unix socket, tests/integration/phpfpm.py): the CGI variables,
queries, forms, raw, chunked and streamed bodies, uploads, request headers
as HTTP_*, statuses and headers set by scripts, a 3 MB output buffered and
not, kept connections, HTTP/2, local redirects, path info, timeouts, and
.php files never sent as files."""
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

import phpfpm
import swsharness as h


def www_files():
    files = {}
    for p in phpfpm.WWW.rglob("*"):
        if p.is_file():
            files["html/" + str(p.relative_to(phpfpm.WWW))] = p.read_bytes()
    return files


def php_server(start, sock, extra_server="", extra_http="", keepalive=2, server_params="",
               upstream_extra="", **kw):
    fastcgi = "include %s/conf/fastcgi_params;" % h.SRC
    one = lambda script: ("fastcgi_param SCRIPT_FILENAME $document_root/%s; %s "
                          "fastcgi_pass php;" % (script, fastcgi))
    server = """
        http2 on;
        location ~ \\.php$ {
            try_files $uri =404;
            fastcgi_pass php;
            fastcgi_keep_conn on;
            include %(src)s/conf/fastcgi.conf;
        }
        location ^~ /plain/ {
            fastcgi_pass unix:%(sock)s;
            fastcgi_param SCRIPT_FILENAME $document_root/conn.php;
            %(fastcgi)s
        }
        location ^~ /split/ {
            fastcgi_split_path_info ^/split(/.+\\.php)(/.*)$;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_param PATH_INFO $fastcgi_path_info;
            %(fastcgi)s
            fastcgi_pass php;
        }
        location ^~ /dir/ {
            fastcgi_index index.php;
            include %(src)s/conf/fastcgi.conf;
            fastcgi_pass php;
        }
        location ^~ /nobuf/ { fastcgi_buffering off; %(big)s }
        location ^~ /smallbuf/ { fastcgi_buffers 2 4k; fastcgi_buffer_size 1k; %(big)s }
        location ^~ /stream/ {
            fastcgi_request_buffering off;
            client_max_body_size 10m;
            %(info)s
        }
        location ^~ /slow/ { fastcgi_read_timeout 300ms; %(sleep)s }
        location ^~ /hide/ { fastcgi_hide_header X-Script; %(status)s }
        location ^~ /passhdr/ { fastcgi_pass_header X-Pad; %(status)s }
        location ^~ /icpt/ {
            fastcgi_intercept_errors on;
            error_page 418 /respond;
            %(status)s
        }
        location ^~ /noheaders/ { fastcgi_pass_request_headers off; %(info)s }
        location ^~ /catch/ { fastcgi_catch_stderr "fastcgi-test-message FATAL"; %(stderr)s }
        %(extra)s
""" % {"src": h.SRC, "sock": sock, "fastcgi": fastcgi, "big": one("big.php"),
       "info": one("info.php"), "sleep": one("sleep.php"), "status": one("status.php"),
       "stderr": one("stderr.php"),
       "extra": extra_server}
    http = """
    request_id on;
    upstream php { server unix:%s%s; keepalive %d; %s }
    %s
""" % (sock, server_params, keepalive, upstream_extra, extra_http)
    return start(server=server, http=http, files=www_files(), **kw)


@pytest.fixture(scope="module")
def fpm(tmp_path_factory):
    f = phpfpm.PhpFpm(tmp_path_factory.mktemp("fpm"), children=4)
    f.start()
    yield f
    f.stop()


@pytest.fixture(scope="module")
def srv(sws_module, fpm):
    return php_server(sws_module, fpm.sock)


def info(r):
    assert r.status == 200, (r.status, r.body[:500])
    return json.loads(r.body)


# ---- requests ----

def test_get_cgi_variables(srv):
    j = info(h.curl(srv.url("/info.php")))
    s = j["server"]
    root = str(Path(srv.tmp) / "html")
    assert s["SCRIPT_FILENAME"] == root + "/info.php"
    assert s["SCRIPT_NAME"] == "/info.php" and s["PHP_SELF"] == "/info.php"
    assert s["DOCUMENT_ROOT"] == root and s["DOCUMENT_URI"] == "/info.php"
    assert s["REQUEST_METHOD"] == "GET" and s["QUERY_STRING"] == ""
    assert s["REQUEST_URI"] == "/info.php"
    assert s["SERVER_PROTOCOL"] == "HTTP/1.1" and s["REQUEST_SCHEME"] == "http"
    assert "HTTPS" not in s                     # if_not_empty
    assert s["GATEWAY_INTERFACE"] == "CGI/1.1" and s["REDIRECT_STATUS"] == "200"
    assert s["REMOTE_ADDR"] == "127.0.0.1" and int(s["REMOTE_PORT"]) > 0
    assert s["SERVER_ADDR"] == "127.0.0.1" and s["SERVER_PORT"] == str(srv.port)
    assert s["SERVER_NAME"] == "localhost"
    assert j["get"] == [] and j["body_len"] == 0


def test_get_with_query(srv):
    j = info(h.curl(srv.url("/info.php?a=1&b=%20two&c[]=x&c[]=y")))
    assert j["server"]["QUERY_STRING"] == "a=1&b=%20two&c[]=x&c[]=y"
    assert j["server"]["REQUEST_URI"] == "/info.php?a=1&b=%20two&c[]=x&c[]=y"
    assert j["get"] == {"a": "1", "b": " two", "c": ["x", "y"]}


def test_head(srv):
    r = h.curl(srv.url("/status.php?code=203"), method="HEAD")
    assert r.status == 203 and r.body == b"" and r.header("X-Script") == "status"


def test_post_form(srv):
    r = h.curl(srv.url("/info.php"), method="POST", body=b"name=caf%C3%A9&n=2",
               headers=["Content-Type: application/x-www-form-urlencoded"])
    j = info(r)
    assert j["post"] == {"name": "caf\u00e9", "n": "2"}
    assert j["server"]["CONTENT_LENGTH"] == "18"
    assert j["server"]["CONTENT_TYPE"] == "application/x-www-form-urlencoded"


def test_raw_body_over_many_stdin_records(srv):
    """200 kB: more than three STDIN records (65535 bytes each at most)."""
    body = os.urandom(200 * 1024)
    j = info(h.curl(srv.url("/info.php"), method="PUT", body=body,
                    headers=["Content-Type: application/octet-stream"]))
    assert j["body_len"] == len(body) and j["body_md5"] == hashlib.md5(body).hexdigest()
    assert j["server"]["REQUEST_METHOD"] == "PUT"


def test_chunked_body_gets_a_content_length(srv):
    """PHP reads CONTENT_LENGTH bytes: a chunked body is read whole first."""
    body = os.urandom(70000)
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 9000]), body[i:i + 9000])
                      for i in range(0, len(body), 9000))
    req = (b"POST /info.php HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
           b"Content-Type: application/octet-stream\r\n\r\n" + chunks + b"0\r\n\r\n")
    with h.Conn(srv.port) as c:
        c.send(req)
        r = c.read_response()
    assert r.status == 200
    j = json.loads(r.body)
    assert j["server"]["CONTENT_LENGTH"] == str(len(body))
    assert j["body_len"] == len(body) and j["body_md5"] == hashlib.md5(body).hexdigest()


def test_streamed_body_with_request_buffering_off(srv):
    """Pieces go as STDIN records while the client sends, the client paced
    by what PHP-FPM takes."""
    body = os.urandom(3 * 1024 * 1024)
    j = info(h.curl(srv.url("/stream/x"), method="POST", body=body,
                    headers=["Content-Type: application/octet-stream"]))
    assert j["body_len"] == len(body) and j["body_md5"] == hashlib.md5(body).hexdigest()
    assert j["server"]["CONTENT_LENGTH"] == str(len(body))


def test_upload(srv):
    import pycurl
    from io import BytesIO
    data = os.urandom(300 * 1024)
    tmpf = Path(srv.tmp) / "upload.bin"
    tmpf.write_bytes(data)
    c = pycurl.Curl()
    out = BytesIO()
    try:
        c.setopt(pycurl.URL, srv.url("/upload.php"))
        c.setopt(pycurl.WRITEDATA, out)
        c.setopt(pycurl.TIMEOUT, 10)
        c.setopt(pycurl.HTTPHEADER, ["Expect:"])
        c.setopt(pycurl.HTTPPOST, [("file", (pycurl.FORM_FILE, str(tmpf))),
                                   ("note", "hello")])
        c.perform()
        assert c.getinfo(pycurl.RESPONSE_CODE) == 200
    finally:
        c.close()
    j = json.loads(out.getvalue())
    f = j["files"]["file"]
    assert f["error"] == 0 and f["size"] == len(data) and f["name"] == "upload.bin"
    assert f["md5"] == hashlib.md5(data).hexdigest()
    assert j["post"] == {"note": "hello"}


def test_request_headers_as_http_params(srv):
    r = h.curl(srv.url("/info.php"), headers=["X-Foo: bar", "X-Multi: a", "X-Multi: b",
                                              "Cookie: c1=1", "Cookie: c2=2",
                                              "X_Under: spoof", "Proxy: http://evil/",
                                              "Accept-Language: fr"])
    http = info(r)["http"]
    assert http["HTTP_X_FOO"] == "bar"
    assert http["HTTP_X_MULTI"] == "a, b"
    assert http["HTTP_COOKIE"] == "c1=1; c2=2"
    assert http["HTTP_ACCEPT_LANGUAGE"] == "fr"
    assert http["HTTP_HOST"].startswith("127.0.0.1:")
    assert "HTTP_X_UNDER" not in http          # '_' could pose as '-'
    assert "HTTP_PROXY" not in http            # httpoxy


def test_pass_request_headers_off(srv):
    http = info(h.curl(srv.url("/noheaders/"), headers=["X-Foo: bar"]))["http"]
    assert http == [] or http == {}


def test_status_and_headers_set_by_the_script(srv):
    r = h.curl(srv.url("/status.php?code=418&h=X-One:%201"))
    assert r.status == 418 and r.body == b"code 418\n"
    assert r.header("X-Script") == "status" and r.header("X-One") == "1"
    assert r.headers_all("Set-Cookie") == ["a=1", "b=2"]
    assert r.header("Content-Type") == "text/html; charset=UTF-8"
    assert h.curl(srv.url("/status.php?code=503")).status == 503


def test_hide_header(srv):
    r = h.curl(srv.url("/hide/x"))
    assert r.status == 200 and r.header("X-Script") is None
    assert r.headers_all("Set-Cookie") == ["a=1", "b=2"]


def test_pass_header(srv):
    """X-Pad is hidden by default (as nginx), passed where told."""
    assert h.curl(srv.url("/status.php?h=X-Pad:%20yes")).header("X-Pad") is None
    assert h.curl(srv.url("/passhdr/x?h=X-Pad:%20yes")).header("X-Pad") == "yes"


def test_intercept_errors(srv):
    # The error page's answer instead of the script's (what status the page
    # keeps is error_page's business, tested with it).
    r = h.curl(srv.url("/icpt/x?code=418"))
    assert r.body == b"Hello, world!" and r.header("X-Script") is None
    r = h.curl(srv.url("/icpt/x?code=200"))
    assert r.status == 200 and r.body == b"code 200\n"


def test_missing_script_is_ours_404(srv):
    r = h.curl(srv.url("/nope.php"))
    assert r.status == 404 and b"scalws" in r.body


def test_php_source_never_sent(srv):
    """The documented location: the script runs, and no URI that names it
    some other way gets its source."""
    r = h.curl(srv.url("/secret.php"))
    assert r.status == 200 and r.body == b"ran\n"
    for path in ("/secret.php/", "/secret.php/x", "/secret.php%20", "/secret.php.",
                 "/secret.PHP", "/secret.ph%70", "/./secret.php", "/dir/../secret.php",
                 "/secret.php%00.txt", "/secret.php?x=.txt"):
        r = h.curl(srv.url(path))
        assert b"SOURCE-MARKER-IN-SOURCE" not in r.body, path


def test_big_output_buffered(srv):
    check_big(h.curl(srv.url("/big.php"), timeout=30), 3 * 1024 * 1024)


def test_big_output_unbuffered_and_small_buffers(srv):
    check_big(h.curl(srv.url("/nobuf/x?n=3500000"), timeout=30), 3500000)
    check_big(h.curl(srv.url("/smallbuf/x?n=3200000"), timeout=30), 3200000)


def big_pattern(n):
    out = bytearray()
    i = 0
    while len(out) < n:
        out += b"%07d" % i + b"x" * 56 + b"\n"
        i += 1
    return bytes(out[:n])


def check_big(r, n):
    assert r.status == 200 and len(r.body) == n
    assert r.body == big_pattern(n)


def test_big_output_to_a_slow_client(srv):
    """A client that reads slowly: the body comes whole and in order."""
    n = 3 * 1024 * 1024
    with h.Conn(srv.port, rcvbuf=8192) as c:
        c.send(b"GET /nobuf/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        time.sleep(0.3)
        data = c.read_until_close(timeout=30)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert dechunk(body) == big_pattern(n)


def test_buffered_response_spills_to_a_temp_file(sws_module, fpm, tmp_path):
    """fastcgi_buffering on (the default) with fastcgi_temp_path: a response
    larger than the buffers goes on in a temporary file, so the PHP-FPM
    child is free while the client has read nothing yet."""
    temp = tmp_path / "fcgi_temp"
    h.make_traversable(tmp_path)            # the workers run as nobody
    srv = php_server(sws_module, fpm.sock, extra_server="""
        location ^~ /spill/ {
            fastcgi_buffers 4 4k; fastcgi_temp_path %s;
            fastcgi_param SCRIPT_FILENAME $document_root/bigdone.php;
            include %s/conf/fastcgi_params;
            fastcgi_pass php;
        }
        location ^~ /nospill/ {
            fastcgi_buffers 4 4k; fastcgi_max_temp_file_size 0;
            fastcgi_param SCRIPT_FILENAME $document_root/bigdone.php;
            include %s/conf/fastcgi_params;
            fastcgi_pass php;
        }""" % (temp, h.SRC, h.SRC))
    n = 8 * 1024 * 1024                    # more than the sockets on the way hold
    for where, spills in (("spill", True), ("nospill", False)):
        mark = tmp_path / ("%s.done" % where)
        with h.Conn(srv.port, rcvbuf=8192) as c:
            c.send(("GET /%s/x?n=%d&mark=%s HTTP/1.1\r\nHost: localhost\r\n"
                    "Connection: close\r\n\r\n" % (where, n, mark)).encode())
            # the child is done at once with a temporary file; without one
            # it waits for the client (5 s of it, not reading, is proof)
            done = h.wait_for(mark.exists, 15 if spills else 5)
            assert done == spills, (where, done)
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            data = c.read_until_close(timeout=60)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        got = dechunk(body) if b"chunked" in head.lower() else body
        assert got == big_pattern(n), where
    assert temp.is_dir() and list(temp.rglob("*")) == []    # unlinked at once


def dechunk(b):
    out = bytearray()
    while True:
        line, _, b = b.partition(b"\r\n")
        n = int(line, 16)
        if n == 0:
            return bytes(out)
        out += b[:n]
        b = b[n + 2:]


def test_local_redirect(srv):
    """A Location that is a path, without a status (RFC 3875 6.2.2): the
    request goes on there; the client sees that location's answer."""
    r = h.curl(srv.url("/redirect.php?to=/respond"))
    assert r.status == 200 and r.body == b"Hello, world!" and r.header("Location") is None
    r = h.curl(srv.url("/redirect.php?to=/info.php%3Fq=1"), method="POST", body=b"x=1",
               headers=["Content-Type: application/x-www-form-urlencoded"])
    j = info(r)
    assert j["server"]["REQUEST_METHOD"] == "GET" and j["get"] == {"q": "1"}


def test_client_redirect(srv):
    r = h.curl(srv.url("/redirect.php?abs=http://example.test/x"))
    assert r.status == 302 and r.header("Location") == "http://example.test/x"


def test_split_path_info(srv):
    j = info(h.curl(srv.url("/split/info.php/extra/path")))
    assert j["server"]["SCRIPT_NAME"] == "/info.php"
    assert j["server"]["PATH_INFO"] == "/extra/path"
    assert j["server"]["SCRIPT_FILENAME"].endswith("/html/info.php")


def test_index(srv):
    r = h.curl(srv.url("/dir/"))
    assert r.status == 200 and r.body == b"index of dir: /dir/index.php\n"


def test_stderr_logged_with_the_request(srv):
    r = h.curl(srv.url("/stderr.php?m=abc123"))
    assert r.status == 200 and r.body == b"logged\n"
    h.wait_file_contains(srv.error_log_path, "fastcgi-test-message abc123")
    line = [x for x in srv.error_log().splitlines() if "fastcgi-test-message abc123" in x][0]
    assert "FastCGI sent in stderr" in line and "request id " in line
    assert '"GET /stderr.php?m=abc123"' in line


def test_catch_stderr(srv):
    # fastcgi_catch_stderr: the text in the script's stderr before its
    # output makes the response invalid (502, as nginx); other messages
    # are only logged.
    r = h.curl(srv.url("/catch/?m=FATAL-1"))
    assert r.status == 502, r
    h.wait_file_contains(srv.error_log_path, "its stderr has a fastcgi_catch_stderr text")
    r = h.curl(srv.url("/catch/?m=fine"))
    assert r.status == 200 and r.body == b"logged\n", r


def test_read_timeout_504(srv):
    t0 = time.monotonic()
    r = h.curl(srv.url("/slow/x?ms=3000"))
    assert r.status == 504 and time.monotonic() - t0 < 2.5
    assert h.curl(srv.url("/slow/x?ms=1")).body == b"slept\n"


def test_http2(srv):
    r = h.curl(srv.url("/info.php?h2=1"), prior_knowledge=True)
    j = info(r)
    assert r.http_version == 3 or r.http_version >= 2  # pycurl: CURL_HTTP_VERSION_2_0 == 3
    assert j["server"]["SERVER_PROTOCOL"] == "HTTP/2.0"
    assert j["get"] == {"h2": "1"}
    body = os.urandom(150000)
    j = info(h.curl(srv.url("/info.php"), method="POST", body=body, prior_knowledge=True,
                    headers=["Content-Type: application/octet-stream"]))
    assert j["body_md5"] == hashlib.md5(body).hexdigest()
    check_big(h.curl(srv.url("/big.php"), prior_knowledge=True, timeout=30), 3 * 1024 * 1024)


# ---- kept connections ----

def conn_socket(srv, path="/conn.php", handle=None):
    r = h.curl(srv.url(path), handle=handle)
    assert r.status == 200
    j = json.loads(r.body)
    return j["pid"], tuple(sorted(j["sockets"]))


def test_many_requests_on_one_kept_connection(srv):
    """fastcgi_keep_conn on with a keepalive group: sequential requests go
    over one FastCGI connection (the PHP child sees the same socket)."""
    seen = {conn_socket(srv) for _ in range(40)}
    assert len(seen) == 1, seen


def test_without_keep_conn_every_request_connects(srv):
    seen = {conn_socket(srv, "/plain/x") for _ in range(10)}
    assert len(seen) == 10


def test_concurrent_requests_never_stall(sws, tmp_path):
    """The documented cap: keepalive x worker_processes < pm.max_children.
    Concurrent clients on two workers, each keeping connections: every
    request is answered, none waits for a child pinned by an idle kept
    connection."""
    f = phpfpm.PhpFpm(tmp_path / "fpm", children=3).start()
    try:
        s = php_server(sws, f.sock, keepalive=1, workers=2)
        errors = []

        def client(k):
            try:
                for i in range(15):
                    r = h.curl(s.url("/sleep.php?ms=%d" % (k % 3 * 5)), timeout=10)
                    if r.status != 200 or r.body != b"slept\n":
                        errors.append((k, i, r.status))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append((k, repr(e)))
        threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert time.monotonic() - t0 < 20
    finally:
        f.stop()


def test_more_clients_than_children_with_max_conns(sws, tmp_path):
    """max_conns = the children, with a queue: eight clients in front of two
    children, every request answered over at most two FastCGI connections
    (each child keeps the one it accepted; none waits in PHP-FPM's listen
    queue). docs/upstream-queue.md."""
    f = phpfpm.PhpFpm(tmp_path / "fpm", children=2).start()
    try:
        s = php_server(sws, f.sock, keepalive=2, server_params=" max_conns=2",
                       upstream_extra="queue 64 timeout=20s;")
        seen, errors = set(), []

        def client(k):
            try:
                for _ in range(10):
                    r = h.curl(s.url("/conn.php"), timeout=30)
                    if r.status != 200:
                        errors.append((k, r.status))
                        continue
                    j = json.loads(r.body)
                    seen.add((j["pid"], tuple(sorted(j["sockets"]))))
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append((k, repr(e)))
        threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert 1 <= len(seen) <= 2, seen
    finally:
        f.stop()


def test_php_fpm_killed_and_restarted(sws, tmp_path):
    f = phpfpm.PhpFpm(tmp_path / "fpm", children=2)
    f.start()
    try:
        s = php_server(sws, f.sock)
        assert conn_socket(s)                          # a kept connection now
        f.kill()
        r = h.curl(s.url("/info.php"))
        assert r.status == 502
        assert "php.sock" in s.error_log()
        f.start()
        # The kept connection died with the old pool: a fresh one is used.
        for _ in range(5):
            assert info(h.curl(s.url("/info.php")))["get"] == []
    finally:
        f.stop()


def test_php_fpm_socket_missing_502(sws, tmp_path):
    s = sws(server="location ~ \\.php$ { fastcgi_pass unix:%s/none.sock; "
                   "include %s/conf/fastcgi.conf; }" % (tmp_path, h.SRC),
            files={"html/a.php": "<?php echo 1;"})
    r = h.curl(s.url("/a.php"))
    assert r.status == 502
    assert "none.sock" in s.error_log()


# ---- health probes ----

def test_health_probes_speak_fastcgi(sws, tmp_path):
    """health_check in a group that fastcgi_pass names probes in FastCGI:
    PHP-FPM's ping.path answers (a child has to be free for that); a pool
    gone fails, back it passes again; a missing script fails (404)."""
    f = phpfpm.PhpFpm(tmp_path / "fpm", children=2).start()
    try:
        s = sws(http="""upstream php { server unix:%s;
                    health_check interval=100ms uri=/ping fails=1 passes=1; }
                    upstream nope { server unix:%s;
                    health_check interval=100ms uri=/nope.php fails=1; }""" % (f.sock, f.sock),
                server="""location /a { fastcgi_pass php; include %s/conf/fastcgi.conf; }
                          location /b { fastcgi_pass nope; include %s/conf/fastcgi.conf; }"""
                       % (h.SRC, h.SRC))
        assert h.wait_file_contains(s.error_log_path,
                                    'of "nope" failed its health check (bad status)', 5)
        assert 'of "php" failed' not in s.error_log()
        f.kill()
        assert h.wait_file_contains(s.error_log_path, 'of "php" failed its health check', 5)
        f.start()
        assert h.wait_file_contains(s.error_log_path,
                                    'of "php" passed its health checks: healthy', 5)
    finally:
        f.stop()


# ---- the default configuration ----

@pytest.mark.parametrize("name", ["scalws.conf", "scalws.yaml"])
def test_default_conf_never_sends_php_source(tmp_path, name):
    """conf/scalws.conf and scalws.yaml (no PHP-FPM in them) answer 404 for
    a .php file instead of sending it."""
    import shutil
    repo = Path(h.SRC)
    shutil.copytree(repo / "conf", tmp_path / "conf")
    shutil.copytree(repo / "html", tmp_path / "html")
    (tmp_path / "logs").mkdir()
    (tmp_path / "html" / "x.php").write_bytes((phpfpm.WWW / "secret.php").read_bytes())
    (tmp_path / "html" / "x.txt").write_text("plain\n")
    port = h.free_port()
    conf = tmp_path / "conf" / name
    conf.write_text(conf.read_text().replace("8080", str(port))
                    .replace("worker_processes auto", "worker_processes 1")
                    .replace("worker_processes: auto", "worker_processes: 1"))
    h.make_traversable(tmp_path)
    import subprocess
    p = subprocess.Popen([h.SCALWSD, "-p", str(tmp_path) + "/", "-c", str(conf), "-g",
                          "modules_dir %s; daemon off;" % h.MODULES],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert h.wait_for(lambda: h.port_open(port), 5)
        base = "http://127.0.0.1:%d" % port
        assert h.curl(base + "/x.txt").body == b"plain\n"
        r = h.curl(base + "/x.php")
        assert r.status == 404 and b"SOURCE-MARKER-IN-SOURCE" not in r.body
    finally:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
