"""Named locations: fallbacks of try_files and error_page, reachable only
internally, the method kept, the error page status rules."""
import pytest

import rwutil
import swsharness as h

SERVER = r"""
        location /t/ { try_files $uri @fallback; }
        location @fallback { return 200 "fallback $uri $request_method"; }
        location /e/ { error_page 404 = @notfound; }
        location @notfound { return 200 "nf $uri"; }
        location /e200/ { error_page 404 =200 @page; }
        location /e418/ { error_page 404 =418 @page; }
        location @page { respond 200 "page"; }
        location /ekeep/ { error_page 404 @page; }
        location /missing/ { try_files $uri @nowhere; }
        location /chain/ { try_files $uri @one; }
        location @one { rewrite ^ /t/chained last; }
        location @loop { try_files /nothing @loop; }
        location /loop/ { try_files $uri @loop; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server=SERVER, files={"html/t/real.txt": "real\n"})


def test_try_files_named_fallback(srv):
    r = h.curl(srv.url("/t/real.txt"))
    assert r.status == 200 and r.body == b"real\n", r
    r = h.curl(srv.url("/t/absent"))
    assert r.status == 200 and r.body == b"fallback /t/absent GET", r


def test_method_is_kept(srv):
    r = h.curl(srv.url("/t/absent"), method="POST", body=b"x=1")
    assert r.status == 200 and r.body == b"fallback /t/absent POST", r


def test_error_page_named(srv):
    r = h.curl(srv.url("/e/nothing"))
    assert r.status == 200 and r.body == b"nf /e/nothing", r


def test_error_page_status(srv):
    # =200: the fallback's response with 200; =418: with 418; without "=",
    # the error's status
    r = h.curl(srv.url("/e200/x"))
    assert r.status == 200 and r.body == b"page", r
    r = h.curl(srv.url("/e418/x"))
    assert r.status == 418 and r.body == b"page", r
    r = h.curl(srv.url("/ekeep/x"))
    assert r.status == 404 and r.body == b"page", r


def test_not_reachable_from_outside(srv):
    for path in ["/@fallback", "@fallback", "/%40fallback"]:
        with h.Conn(srv.port) as c:
            c.send(h.request("GET", path))
            r = c.read_response()
            assert r is not None and r.status in (400, 404), (path, r)
            assert b"fallback" not in r.body, r


def test_missing_named_location_is_500(srv):
    r = h.curl(srv.url("/missing/x"))
    assert r.status == 500, r
    assert 'could not find named location "@nowhere"' in srv.error_log()


def test_rewrite_in_named_location(srv):
    r = h.curl(srv.url("/chain/x"))
    assert r.status == 200 and r.body == b"fallback /t/chained GET", r


def test_loop_is_bounded(srv):
    r = h.curl(srv.url("/loop/x"))
    assert r.status == 500, r
    assert "rewrite or internal redirection cycle" in srv.error_log()


def test_config_errors(tmp_path):
    def case(text, needle, marker=None):
        return ("server { listen 127.0.0.1:@PORT@;\n%s\n}" % text, needle, marker or text)

    rwutil.assert_errors_at(tmp_path, [
        case("location @a { }\nlocation @a { return 204; }", 'duplicate location "@a"',
             "location @a { return"),
        case("location @ { }", 'empty name after "@"'),
        case("location = @a { }", 'must start with "/"'),
        case("location / { try_files @a $uri; }", 'must be the last try_files argument'),
        case("location / { error_page 404 x; }", 'URI must start with "/"'),
    ])
