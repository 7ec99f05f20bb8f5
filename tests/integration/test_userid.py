"""userid and its directives, $uid_got, $uid_set, $uid_reset
(modules/userid) against nginx 1.22 side by side: the cookie's attributes,
its four words, a cookie one server set read by the other, marks, resets,
the log/v1/off modes, and bad cookies (logged at info and ignored)."""
import base64
import email.utils
import os
import re
import struct
import time

import pytest

import conferr
from nginxcheck import nginx_t
import swsharness as h
from test_nginx_sites import NGINX, start_server

SITE = """
    server {
        listen 127.0.0.1:@PORT@;
        userid on;
        userid_domain example.com;
        userid_path /p/;
        userid_expires 365d;
        userid_p3p 'policyref="/w3c/p3p.xml", CP="CUR ADM OUR"';
        userid_flags secure httponly samesite=lax;
        userid_service 7;
        location / { return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /v1 { userid v1; return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /log { userid log; return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /off { userid off; return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /mark { userid_mark X; userid_expires max;
                         return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /reset { set $uid_reset 1; return 200 "got=[$uid_got] set=[$uid_set]\\n"; }
        location /resetlog { set $uid_reset log; return 200 "[$uid_got]\\n"; }
        location /missing { }
    }
    server {
        listen 127.0.0.1:@PORT2@;
        userid on;
        userid_name sid;
        location / { return 204; }
    }
"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """[(port, port2, dir)] of nginx and scalwsd."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    tmp = tmp_path_factory.mktemp("userid")
    h.make_traversable(tmp)
    running, out = [], []
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp / who
            d.mkdir()
            port, port2 = h.free_port(), h.free_port()
            running.append(start_server(who, d, port, SITE.replace("@PORT@", str(port))
                                        .replace("@PORT2@", str(port2))))
            assert h.wait_for(lambda: h.port_open(port2), 5)
            out.append((port, port2, d))
        yield out
    finally:
        for r in running:
            r.stop()


def get(port, path, cookie=None):
    headers = [("Cookie", cookie)] if cookie else []
    r = h.exchange(port, h.request("GET", path, headers=headers))
    return r, r.headers_all("set-cookie")


EXPIRES = re.compile(r"; expires=([^;]+)")


def attrs(set_cookie):
    """(name, the attributes with the expiry as seconds from now)"""
    name, _, rest = set_cookie.partition("=")
    value, _, tail = rest.partition(";")
    m = EXPIRES.search(";" + tail)
    when = None
    if m:
        when = email.utils.parsedate_to_datetime(
            m.group(1).replace("-", " ")).timestamp() - time.time()
        tail = tail.replace(m.group(1), "DATE")
    return name, value, tail, when


def words(value, order=">"):
    return struct.unpack(order + "4I", base64.b64decode(value[:22] + "=="))


def test_new_cookie_attributes_and_words(servers):
    out = []
    for port, _, _ in servers:
        r, cookies = get(port, "/a")
        assert r.status == 200 and len(cookies) == 1, cookies
        assert r.header("p3p") == 'policyref="/w3c/p3p.xml", CP="CUR ADM OUR"'
        out.append((attrs(cookies[0]), r.body))
    (n, nbody), (s, sbody) = out
    assert n[0] == s[0] == "uid"
    assert n[2] == s[2] == " expires=DATE; domain=example.com; path=/p/; secure; httponly; samesite=lax"
    assert abs(n[3] - 365 * 86400) < 10 and abs(s[3] - 365 * 86400) < 10
    for value, body in ((n[1], nbody), (s[1], sbody)):
        assert len(value) == 24 and value.endswith("==")
        service, made, start, seq = words(value)
        assert service == 7 and abs(made - time.time()) < 10 and seq & 0xff == 0x02
        # $uid_set: the words as they lie in memory, in hexadecimal
        raw = base64.b64decode(value)
        mem = "".join("%08X" % w for w in struct.unpack("<4I", raw))
        assert body == ("got=[] set=[uid=%s]\n" % mem).encode()


def test_cookie_of_one_read_by_the_other(servers):
    """Each server's cookie sent to both: the same $uid_got, and no new
    cookie."""
    (np, _, _), (sp, _, _) = servers
    for port in (np, sp):
        value = attrs(get(port, "/a")[1][0])[1]
        answers = []
        for p in (np, sp):
            r, cookies = get(p, "/a", "other=1; uid=%s; x=y" % value)
            answers.append((r.body, cookies))
        assert answers[0] == answers[1], answers
        assert answers[0][1] == [] and answers[0][0].startswith(b"got=[uid=")
        assert answers[0][0].endswith(b"] set=[]\n")


def test_v1_log_off_and_defaults(servers):
    (np, _, _), _ = servers
    nginx_v1 = attrs(get(np, "/v1")[1][0])[1]
    bodies = []
    for port, port2, _ in servers:
        r, cookies = get(port, "/v1")
        value = attrs(cookies[0])[1]
        service, made, start, seq = words(value, "<")     # the host's order
        assert service == 7 and abs(made - time.time()) < 10 and seq % 0x100 == 1
        r2, c2 = get(port, "/log")
        r3, c3 = get(port, "/off", "uid=%s" % nginx_v1)
        r4, c4 = get(port, "/log", "uid=%s" % nginx_v1)
        assert c2 == c3 == c4 == []
        bodies.append((r2.body, r3.body, r4.body))
        # another server: the name, the path "/", no expiry, and the server's
        # address as the first word
        r5, c5 = get(port2, "/")
        name, v5, tail, when = attrs(c5[0])
        assert (name, tail, when) == ("sid", " path=/", None), c5
        assert base64.b64decode(v5)[:4] == bytes([127, 0, 0, 1])
    assert bodies[0] == bodies[1]
    assert bodies[0][0] == bodies[0][1] == b"got=[] set=[]\n"
    assert bodies[0][2].startswith(b"got=[uid=") and bodies[0][2].endswith(b"] set=[]\n")


def test_mark_and_reset(servers):
    (np, _, nd), (sp, _, sd) = servers
    value = attrs(get(np, "/a")[1][0])[1]        # nginx's cookie, to both
    out = []
    for port in (np, sp):
        _, marked = get(port, "/mark", "uid=" + value)
        _, again = get(port, "/mark", "uid=%sX=" % value[:22])
        _, reset = get(port, "/reset", "uid=" + value)
        r, relog = get(port, "/resetlog", "uid=" + value)
        out.append((marked, again, r.body))
        assert len(reset) == 1 and attrs(reset[0])[1] != value
        assert len(relog) == 1 and attrs(relog[0])[1] != value
    assert out[0] == out[1], out
    marked, again, body = out[1]
    assert marked == ["uid=%sX=; expires=Thu, 31-Dec-37 23:55:55 GMT; domain=example.com; "
                      "path=/p/; secure; httponly; samesite=lax" % value[:22]]
    assert again == []
    got = body.decode().strip("[]\n")
    for d in (nd, sd):
        assert h.wait_file_contains(d / "error.log", 'userid cookie "%s" was reset' % got)


@pytest.mark.parametrize("cookie, message", [
    ("uid=short", 'client sent too short userid cookie "uid=short"'),
    ("a=1; uid=!!!!!!!!!!!!!!!!!!!!!!!!", 'client sent invalid userid cookie "a=1; uid=!!!!'),
    ("uid=AAAAAAAAAAAAAAAAAAAAA", 'client sent too short userid cookie "uid=AAAAAAAAAAAAAAAAAAAAA"'),
    ("uid=AAAAAAAAAAAAAAAAAAAAA*", 'client sent invalid userid cookie "uid=AAAAAAAAAAAAAAAAAAAAA*"'),
])
def test_bad_cookies_logged_and_ignored(servers, cookie, message):
    answers = []
    for port, _, d in servers:
        r, cookies = get(port, "/a", cookie)
        assert r.status == 200 and len(cookies) == 1, cookies   # a new one
        answers.append(r.body.split(b" set=")[0])
        assert h.wait_file_contains(d / "error.log", message), d
    assert answers == [b"got=[]", b"got=[]"]


def test_padding_and_trailing_garbage(servers):
    """nginx reads 22 characters: "==" or anything after them is ignored;
    an '=' inside them ends the decoding."""
    (np, _, _), (sp, _, _) = servers
    value = attrs(get(sp, "/a")[1][0])[1][:22]
    for cookie in ("uid=%s" % value, "uid=%sgarbage" % value,
                   "uid=AAAAAAAAAAAAAAAAAAAA==", "uid=AAAAAAAAAAAAAAAA=AAAAA"):
        answers = [get(p, "/a", cookie)[0].body.split(b" set=")[0] for p in (np, sp)]
        assert answers[0] == answers[1], (cookie, answers)


REFUSED = [
    ("userid bad;", 'invalid value "bad"'),
    ("userid_mark ab;", '"userid_mark" directive value must be "off" or a single letter, digit or "="'),
    ("userid_mark -;", 'value must be "off" or a single letter'),
    ("userid_expires abc;", '"userid_expires" directive invalid value'),
    ("userid_flags bogus;", 'invalid value "bogus"'),
    ("userid_service abc;", '"userid_service" directive invalid number'),
    ("userid on; userid off;", '"userid" directive is duplicate'),
    ("userid_name a; userid_name b;", '"userid_name" directive is duplicate'),
    ("userid_domain a; userid_domain b;", '"userid_domain" directive is duplicate'),
    ("userid_path a; userid_path b;", '"userid_path" directive is duplicate'),
    ("userid_p3p a; userid_p3p b;", '"userid_p3p" directive is duplicate'),
    ("userid_expires 1d; userid_expires 2d;", '"userid_expires" directive is duplicate'),
    ("userid_mark a; userid_mark b;", '"userid_mark" directive is duplicate'),
    ("userid_service 1; userid_service 2;", '"userid_service" directive is duplicate'),
    ("server { if ($uri) { userid on; } }", '"userid" directive is not allowed here'),
    ("server { location / { set $uid_set 1; } }", 'uid_set"'),
]


def test_refused_forms(tmp_path):
    for i, (http, words_) in enumerate(REFUSED):
        d = tmp_path / str(i)
        d.mkdir()
        rc, err = nginx_t(d, http)
        assert rc != 0 and words_ in err, (http, err)
        conferr.check(d / "s", [words_], http=http + "  # ERR")


def test_accepted_forms(tmp_path):
    http = ("userid_expires 1y; userid_flags off secure; userid_flags SameSite=Lax;\n"
            "userid_name \"\"; userid_domain none; userid_p3p none; userid_mark =;\n"
            "server { location / { set $uid_reset 1; userid v1; userid_service 0; } }")
    rc, err = nginx_t(tmp_path, http)
    assert rc == 0, err
    conferr.check_ok(tmp_path / "s", http=http)
    rc, err = nginx_t(tmp_path, "userid_flags secure secure;")
    assert rc == 0 and 'duplicate value "secure"' in err
    d = tmp_path / "dup"
    d.mkdir()
    (d / "html").mkdir()
    conf = d / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, d, [h.free_port()],
                             http="userid_flags secure secure;"))
    r = h.run_scalwsd(["-t", "-p", str(d) + "/", "-c", str(conf)])
    assert r.returncode == 0 and b'duplicate value "secure"' in r.stderr, r.stderr
