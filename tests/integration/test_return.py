"""return (the rewrite module's): fixed and with variables, redirects, the
URL form, 444, the server level before locations, and errors."""
import time

import pytest

import rwutil
import swsharness as h


def absolute(srv, path):
    """A relative Location as the server sends it (absolute_redirect on)."""
    return "http://127.0.0.1:%d%s" % (srv.port, path)

SERVER = r"""
        location = /text { return 200 "uri=$uri host=$host arg=$arg_a"; }
        location = /fixed { return 201 "made"; }
        location = /redir { return 301 https://$host/moved$request_uri; }
        location = /redir307 { return 307 /elsewhere?x=$arg_x; }
        location = /url { return http://example.com/u; }
        location = /schemeurl { return $scheme://$host/s; }
        location = /r404 { return 404; }
        location = /r204 { return 204; }
        location = /close { return 444; }
        location = /shadow { return 200 "return wins"; respond 200 "respond"; }
        location = /cookie { return 200 "c=$cookie_session|$cookie_other"; }
        location = /typed.txt { return 200 "typed"; }
        location = /typed.dir/plain { return 200 "untyped"; }
        location = /retyped { rewrite ^ /re.txt; return 200 "retyped"; }
"""

SERVERS = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name gone.example;
        return 410;
        location / { respond 200 "location"; }
    }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, servers=SERVERS)


def test_text_with_variables(srv):
    r = h.curl(srv.url("/text?a=b%20c"))
    assert r.status == 200 and r.body == b"uri=/text host=127.0.0.1 arg=b%20c", r
    assert r.header("Content-Length") == str(len(r.body)), r


def test_fixed_text(srv):
    r = h.curl(srv.url("/fixed"))
    assert r.status == 201 and r.body == b"made", r


def test_redirect_with_variables(srv):
    r = h.curl(srv.url("/redir?q=1"))
    assert r.status == 301 and r.header("Location") == "https://127.0.0.1/moved/redir?q=1", r
    r = h.curl(srv.url("/redir307?x=9"))
    assert r.status == 307 and r.header("Location") == absolute(srv, "/elsewhere?x=9"), r


def test_url_form(srv):
    r = h.curl(srv.url("/url"))
    assert r.status == 302 and r.header("Location") == "http://example.com/u", r
    r = h.curl(srv.url("/schemeurl"))
    assert r.status == 302 and r.header("Location") == "http://127.0.0.1/s", r


def test_error_and_bodiless(srv):
    r = h.curl(srv.url("/r404"))
    assert r.status == 404 and b"404" in r.body, r
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/r204") + h.request("GET", "/fixed"))
        r1 = c.read_response()
        assert r1.status == 204 and r1.body == b"", r1
        r2 = c.read_response()
        assert r2.status == 201 and r2.body == b"made", r2


def test_444_closes(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/close"))
        assert c.closed_within(3.0)
        assert c.buf == b""


def test_answer_on_a_closing_connection_keeps_the_worker(srv):
    """The connection closes with the answer (Connection: close, HTTP/1.0):
    the request is gone when return's handler comes back, and the phase
    loop must not read it (a sanitizer's abort killed the worker after the
    answer went out)."""
    for path, version in (("/fixed", "HTTP/1.1"), ("/text?a=1", "HTTP/1.1"),
                          ("/fixed", "HTTP/1.0")):
        with h.Conn(srv.port) as c:
            c.send(h.request("GET", path, headers=[("Connection", "close")],
                             version=version))
            r = c.read_response()
            assert r is not None and r.status in (200, 201), r
            assert c.closed_within(3.0)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        assert "exited on signal" not in srv.error_log(), srv.error_log()[-2000:]
        time.sleep(0.1)


def test_return_runs_before_the_content_handler(srv):
    r = h.curl(srv.url("/shadow"))
    assert r.status == 200 and r.body == b"return wins", r


def test_server_level_return_before_locations(srv):
    with h.Conn(srv.port) as c:
        c.send(b"GET / HTTP/1.1\r\nHost: gone.example\r\n\r\n")
        r = c.read_response()
        assert r.status == 410, r


def test_cookie_variable(srv):
    r = h.curl(srv.url("/cookie"), headers=["Cookie: a=1; session=abc; other="])
    assert r.body == b"c=abc|", r
    r = h.curl(srv.url("/cookie"), headers=["Cookie: SESSION=up", "Cookie: other=2"])
    assert r.body == b"c=up|2", r
    r = h.curl(srv.url("/cookie"))
    assert r.body == b"c=|", r


def test_post_body_is_consumed(srv):
    with h.Conn(srv.port) as c:
        c.send(h.request("POST", "/text", headers=[("Content-Length", "5")], body=b"hello")
               + h.request("GET", "/fixed"))
        r1 = c.read_response()
        assert r1.status == 200, r1
        r2 = c.read_response()
        assert r2 is not None and r2.status == 201, r2


def test_config_errors(tmp_path):
    def case(text, needle):
        return ("server { listen 127.0.0.1:@PORT@;\nlocation / {\n%s\n} }" % text,
                needle, text)

    rwutil.assert_errors_at(tmp_path, [
        case("return abc;", 'invalid return code "abc"'),
        case("return 99;", 'invalid return code "99"'),
        case("return 700;", 'invalid status "700"'),
        case("return 101;", "1xx responses cannot be configured"),
        case('return 204 "body";', "a 204 response cannot have a body"),
        case('return 444 "x";', "takes no text with 444"),
        case('return 301 "/a b";', "spaces and control characters"),
        case("return 200 $nosuch;", 'unknown variable "$nosuch"'),
        case("return;", "invalid number of arguments"),
    ])


def test_text_typed_by_the_uri(srv):
    """The one-write path: the URI's type goes before the preformatted
    fields, once; a '.' in a directory is no extension."""
    r = h.exchange(srv.port, h.request(path="/typed.txt"))
    assert r.status == 200 and r.body == b"typed", r
    assert r.headers_all("Content-Type") == ["text/plain"], r
    assert r.header("Content-Length") == "5", r
    r = h.curl(srv.url("/typed.txt"), method="HEAD")
    assert r.status == 200 and r.header("Content-Type") == "text/plain" and r.body == b"", r
    r = h.curl(srv.url("/typed.dir/plain"))
    assert r.status == 200 and r.header("Content-Type") == "application/octet-stream", r
    assert r.body == b"untyped", r


def test_text_typed_by_the_uri_rewritten(srv):
    """An exact location's name types its text until a rewrite changes the
    URI: then the new URI's extension does."""
    r = h.exchange(srv.port, h.request(path="/retyped"))
    assert r.status == 200 and r.body == b"retyped", r
    assert r.headers_all("Content-Type") == ["text/plain"], r
