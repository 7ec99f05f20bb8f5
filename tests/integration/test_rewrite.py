"""rewrite: internal rewrites, last/break/redirect/permanent, captures,
arguments, the redirect loop limit, rewrite_log, configuration errors."""
import pytest

import rwutil
import swsharness as h


def absolute(srv, path):
    """A relative Location as the server sends it (absolute_redirect on)."""
    return "http://127.0.0.1:%d%s" % (srv.port, path)

SERVER = r"""
        listen 127.0.0.1:@PORT2@ http2;
        rewrite ^/old/(.*)$ /new/$1;
        rewrite ^/srvlast/(.*)$ /new/last-$1 last;
        if ($arg_srvbreak) { break; }
        rewrite ^/brksrv/(.*)$ /new/srv-$1;
        location /new/ { return 200 "new uri=$uri args=$args"; }
        location /last/ {
            rewrite ^/last/(\w+)$ /new/$1 last;
            return 200 "not rewritten";
        }
        location /brk/ {
            rewrite ^/brk/(.*)$ /files/$1 break;
            return 200 "after break";
        }
        location /files/ { return 200 "wrong location"; }
        location /noflag/ {
            rewrite ^/noflag/(.*)$ /new/nf-$1;
            rewrite ^/new/nf-(.*)$ /new/twice-$1;
        }
        location /redir/ { rewrite ^/redir/(.*)$ /target/$1 redirect; }
        location /perm/ { rewrite ^/perm/(.*)$ /target/$1 permanent; }
        location /url/ { rewrite ^/url/(.*)$ https://example.com/$1; }
        location /scheme/ { rewrite ^ $scheme://$host/s; }
        location /noargs/ { rewrite ^ /new/x? last; }
        location /addargs/ { rewrite ^ /new/y?a=1 last; }
        location /redirnoargs/ { rewrite ^ /t? redirect; }
        location /redirargs/ { rewrite ^ /t?a=1 redirect; }
        location /named/ {
            rewrite "^/named/(?<year>\d{4})/(?<slug>[a-z]+)$" /new/$slug-$year last;
        }
        location /loop/ { rewrite ^ /loop/again last; }
        location /nomatch/ {
            rewrite ^/nomatch/x$ /new/x last;
            return 200 "kept $uri";
        }
        location /empty/ { rewrite ^/empty/(.*)$ $1 last; }
        location /dots/ { rewrite ^ /new/$arg_f last; }
        location /logged/ { rewrite_log on; rewrite ^/logged/(.*)$ /new/$1 last; }
        location ~ ^/re/(\d+)$ { rewrite ^ /new/re-$1 last; }
        location ~ ^/rx/(\d+)$ { return 200 "rx $1"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(server=SERVER, ports=2, files={"html/files/a.txt": "file a\n"})
    s.port2 = s.ports[1]
    return s


def body(r):
    return r.body.decode()


def test_server_level_rewrite_before_location(srv):
    r = h.curl(srv.url("/old/thing?q=1"))
    assert r.status == 200 and body(r) == "new uri=/new/thing args=q=1", r


def test_server_level_last(srv):
    r = h.curl(srv.url("/srvlast/z"))
    assert r.status == 200 and body(r) == "new uri=/new/last-z args=", r


def test_server_level_break(srv):
    r = h.curl(srv.url("/brksrv/q"))
    assert r.status == 200 and body(r) == "new uri=/new/srv-q args=", r
    # break in the server's if: the rewrites after it do not run
    r = h.curl(srv.url("/brksrv/q?srvbreak=1"))
    assert r.status == 404, r


def test_last_reselects_location(srv):
    r = h.curl(srv.url("/last/abc"))
    assert r.status == 200 and body(r) == "new uri=/new/abc args=", r


def test_break_stays_in_location(srv):
    # break: the rewritten URI is served by this location (its root), and
    # the directives after break do not run
    r = h.curl(srv.url("/brk/a.txt"))
    assert r.status == 200 and r.body == b"file a\n", r


def test_no_flag_goes_on_then_reselects(srv):
    r = h.curl(srv.url("/noflag/q"))
    assert r.status == 200 and body(r) == "new uri=/new/twice-q args=", r


def test_redirect_and_permanent(srv):
    r = h.curl(srv.url("/redir/p?x=1"))
    assert r.status == 302 and r.header("Location") == absolute(srv, "/target/p?x=1"), r
    r = h.curl(srv.url("/perm/p"))
    assert r.status == 301 and r.header("Location") == absolute(srv, "/target/p"), r


def test_url_replacement_is_redirect(srv):
    r = h.curl(srv.url("/url/a/b?k=v"))
    assert r.status == 302 and r.header("Location") == "https://example.com/a/b?k=v", r
    r = h.curl(srv.url("/scheme/x"))
    assert r.status == 302, r
    assert r.header("Location") == "http://127.0.0.1/s", r


def test_arguments(srv):
    r = h.curl(srv.url("/noargs/?drop=1"))
    assert body(r) == "new uri=/new/x args=", r
    r = h.curl(srv.url("/addargs/?b=2"))
    assert body(r) == "new uri=/new/y args=a=1&b=2", r
    r = h.curl(srv.url("/addargs/"))
    assert body(r) == "new uri=/new/y args=a=1", r
    r = h.curl(srv.url("/redirnoargs/?z=1"))
    assert r.status == 302 and r.header("Location") == absolute(srv, "/t"), r
    r = h.curl(srv.url("/redirargs/?z=1"))
    assert r.status == 302 and r.header("Location") == absolute(srv, "/t?a=1&z=1"), r


def test_named_captures(srv):
    r = h.curl(srv.url("/named/2024/hello"))
    assert r.status == 200 and body(r) == "new uri=/new/hello-2024 args=", r
    r = h.curl(srv.url("/named/24/hello"))
    assert r.status == 404, r


def test_captures_are_the_last_match(srv):
    # the location's captures are the request's until rewrite matches: "^"
    # has no group, so $1 is empty then, as in nginx
    r = h.curl(srv.url("/rx/42"))
    assert r.status == 200 and body(r) == "rx 42", r
    r = h.curl(srv.url("/re/42"))
    assert r.status == 200 and body(r) == "new uri=/new/re- args=", r


def test_no_match_goes_on(srv):
    r = h.curl(srv.url("/nomatch/y"))
    assert r.status == 200 and body(r) == "kept /nomatch/y", r


def test_redirect_loop_is_500_and_logged(srv):
    r = h.curl(srv.url("/loop/x"))
    assert r.status == 500, r
    assert "rewrite or internal redirection cycle" in srv.error_log()
    # the connection and the server go on
    r = h.curl(srv.url("/last/ok"))
    assert r.status == 200, r


def test_empty_result_is_500(srv):
    r = h.curl(srv.url("/empty/"))
    assert r.status == 500, r
    assert "zero length" in srv.error_log()


def test_dot_segments_of_a_rewritten_uri(srv):
    # the URI made from a client's argument has its dot segments removed;
    # one that climbs above the root is refused (nginx would take it as is)
    assert body(h.curl(srv.url("/dots/?f=a/./b"))) == "new uri=/new/a/b args=f=a/./b"
    assert body(h.curl(srv.url("/dots/?f=a/../b"))) == "new uri=/new/b args=f=a/../b"
    assert h.curl(srv.url("/dots/?f=../old/x")).status == 404
    assert h.curl(srv.url("/dots/?f=../../etc/passwd")).status == 400
    assert h.curl(srv.url("/dots/?f=..")).status == 403      # "/": no index there


def test_rewrite_log(srv):
    r = h.curl(srv.url("/logged/abc"))
    assert r.status == 200 and body(r) == "new uri=/new/abc args=", r
    log = srv.error_log()
    assert '"^/logged/(.*)$" matches "/logged/abc"' in log, log[-2000:]
    assert 'rewritten data: "/new/abc"' in log


def test_over_http2(srv):
    # the scripts see the request, not the protocol
    r = h.curl("http://127.0.0.1:%d/old/h2?x=1" % srv.port2, prior_knowledge=True)
    assert r.status == 200 and body(r) == "new uri=/new/h2 args=x=1", r
    r = h.curl("http://127.0.0.1:%d/redir/h2" % srv.port2, prior_knowledge=True)
    assert r.status == 302 and r.header("Location") == "http://127.0.0.1:%d/target/h2" % srv.port2, r
    r = h.curl("http://127.0.0.1:%d/loop/x" % srv.port2, prior_knowledge=True)
    assert r.status == 500, r


def test_hostile_uris(srv):
    # encoded bytes, long paths, dot segments: a rewrite sees the
    # normalised path and never crashes
    for path in ["/old/%00x", "/old/" + "a" * 3000, "/old/../old/%2e%2e/x",
                 "/last/%ff%fe", "/named/2024/%0d%0a"]:
        with h.Conn(srv.port) as c:
            c.send(h.request("GET", path))
            r = c.read_response()
            assert r is not None and r.status in (200, 400, 404), (path, r)
    assert h.curl(srv.url("/old/z")).status == 200


def test_config_errors(tmp_path):
    def case(directive, needle):
        return ("server { listen 127.0.0.1:@PORT@;\nlocation / {\n%s\n} }" % directive,
                needle, directive)

    rwutil.assert_errors_at(tmp_path, [
        case("rewrite ^/(a $1;", "missing closing parenthesis"),
        case("rewrite ^/a /b bogus;", 'invalid parameter "bogus"'),
        case("rewrite ^/a;", "invalid number of arguments"),
        case('rewrite ^/a "";', "empty replacement"),
        case("rewrite ^/a /$nosuch;", 'unknown variable "$nosuch"'),
        case("rewrite_log maybe;", "invalid value"),
        case("set a 1;", 'invalid variable name "a": it must start with "$"'),
        case("set $a-b 1;", 'invalid variable name "$a-b"'),
        case("set $uri /x;", 'variable "$uri" is the server\'s: it cannot be set'),
        case("set $http_x 1;", "cannot be set"),
        case("set $a;", "invalid number of arguments"),
        case("set $a $nosuch;", 'unknown variable "$nosuch"'),
        case("break 1;", "invalid number of arguments"),
        ("rewrite ^/a /b;", '"rewrite" directive is not allowed here', "rewrite ^/a"),
    ])


def test_set_variable_known_to_every_format(sws):
    # log_format comes before any "set": the name is resolved when the
    # http block ends; unset in a request, it is empty ("-" in the log)
    srv = sws(http='log_format v "$uri [$myvar]";\n    access_log @TMP@/v.log v;',
              server='location /s { set $myvar "hello $arg_n"; return 200 "ok"; }\n'
                     'location /o { return 200 "o=$myvar"; }')
    assert h.curl(srv.url("/s?n=1")).body == b"ok"
    assert h.curl(srv.url("/o")).body == b"o="
    lines = h.wait_for(lambda: (lambda t: len(t) >= 2 and t)(
        (srv.tmp / "v.log").read_text().splitlines() if (srv.tmp / "v.log").exists() else []), 5)
    assert lines == ["/s [hello 1]", "/o [-]"], lines
