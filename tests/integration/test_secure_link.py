"""secure_link, secure_link_md5, secure_link_secret, $secure_link and
$secure_link_expires (modules/secure_link) against nginx 1.22 side by
side: correct, wrong, expired and malformed links in both modes, with the
usual `if ($secure_link = "") { return 403; }` configurations."""
import base64
import hashlib
import os
import time

import pytest

import conferr
from nginxcheck import nginx_t
import swsharness as h
from test_nginx_sites import NGINX, start_server

SITE = """
    server {
        listen 127.0.0.1:@PORT@;
        location /s/ {
            secure_link $arg_md5,$arg_expires;
            secure_link_md5 "$secure_link_expires$uri$remote_addr secret";
            if ($secure_link = "") { return 403; }
            if ($secure_link = "0") { return 410; }
            return 200 "ok [$secure_link] [$secure_link_expires]\\n";
        }
        location /n/ {
            secure_link $arg_h;
            secure_link_md5 "$uri secret";
            return 200 "[$secure_link] [$secure_link_expires]\\n";
        }
        location /order/ {
            secure_link $arg_h,$arg_e;
            secure_link_md5 "$uri";
            return 200 "[$secure_link_expires] [$secure_link] [$secure_link_expires]\\n";
        }
        location /p/ {
            secure_link_secret w0rd;
            if ($secure_link = "") { return 403; }
            return 200 "[$secure_link]\\n";
        }
        location /i/ {
            secure_link_secret other;
            location ~ \\.txt$ { return 200 "[$secure_link]\\n"; }
            return 200 "[$secure_link]\\n";
        }
        location /j/ {
            location /j/p/ { secure_link_secret other; return 200 "[$secure_link]\\n"; }
            return 200 "[$secure_link]\\n";
        }
        location /v { return 200 "[$secure_link] [$secure_link_expires]\\n"; }
    }
"""


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def md5(text):
    return hashlib.md5(text.encode()).digest()


@pytest.fixture(scope="module")
def ports(tmp_path_factory):
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    tmp = tmp_path_factory.mktemp("secure_link")
    running, out = [], []
    h.make_traversable(tmp)
    try:
        for who in ("nginx", "scalwsd"):
            d = tmp / who
            d.mkdir()
            port = h.free_port()
            running.append(start_server(who, d, port, SITE.replace("@PORT@", str(port))))
            out.append(port)
        yield out
    finally:
        for r in running:
            r.stop()


def same(ports, path):
    """The same status and body from both; returns them."""
    answers = []
    for port in ports:
        r = h.exchange(port, h.request("GET", path))
        answers.append((r.status, r.body if r.status == 200 else b""))
    assert answers[0] == answers[1], (path, answers)
    return answers[1]


def test_md5_mode_with_expiry(ports):
    future, past = int(time.time()) + 3600, int(time.time()) - 10
    good = b64url(md5("%d/s/f.txt127.0.0.1 secret" % future))
    assert same(ports, "/s/f.txt?md5=%s&expires=%d" % (good, future)) == \
        (200, b"ok [1] [%d]\n" % future)
    old = b64url(md5("%d/s/f.txt127.0.0.1 secret" % past))
    assert same(ports, "/s/f.txt?md5=%s&expires=%d" % (old, past)) == (410, b"")
    # the hash of another expiry, another path, another secret
    assert same(ports, "/s/f.txt?md5=%s&expires=%d" % (old, future))[0] == 403
    assert same(ports, "/s/g.txt?md5=%s&expires=%d" % (good, future))[0] == 403
    bad = b64url(md5("%d/s/f.txt127.0.0.1 other" % future))
    assert same(ports, "/s/f.txt?md5=%s&expires=%d" % (bad, future))[0] == 403


@pytest.mark.parametrize("query", [
    "",                                   # nothing
    "md5=&expires=",
    "md5=%(good)s",                       # no expires: ",": empty expires
    "md5=%(good)s&expires=",
    "md5=%(good)s&expires=0",
    "md5=%(good)s&expires=-5",
    "md5=%(good)s&expires=12abc",
    "md5=%(good)s&expires=%(future)d,1",
    "md5=%(good)s==&expires=%(future)d",  # padding: decoded up to '='
    "md5=%(good)sA&expires=%(future)d",   # 23 characters: 17 bytes
    "md5=%(good)sAAA&expires=%(future)d",  # 25: too long
    "md5=%(short)s&expires=%(future)d",
    "md5=%(plus)s&expires=%(future)d",    # the standard alphabet's + and /
    "md5=%(lowbits)s&expires=%(future)d",  # other unused low bits
    "md5=A&expires=%(future)d",           # 1 over a multiple of 4
    "md5=%(good)s%%00&expires=%(future)d",
])
def test_md5_mode_malformed(ports, query):
    future = int(time.time()) + 3600
    digest = md5("%d/s/x127.0.0.1 secret" % future)
    good = b64url(digest)
    # the last character carries 2 bits that are not used: nginx ignores them
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(good[-1])
    lowbits = good[:-1] + alphabet[last ^ 1]
    plus = base64.b64encode(digest).rstrip(b"=").decode().replace("-", "+")
    q = query % {"good": good, "future": future, "short": good[:20], "plus": plus,
                 "lowbits": lowbits}
    status, body = same(ports, "/s/x?" + q)
    if query in ("md5=%(good)s==&expires=%(future)d", "md5=%(lowbits)s&expires=%(future)d"):
        assert status == 200, q
    elif query == "md5=%(plus)s&expires=%(future)d":
        assert status == (200 if plus == good else 403)
    else:
        assert status == 403, q


def test_md5_mode_without_expiry_and_order(ports):
    h_ = b64url(md5("/n/a secret"))
    assert same(ports, "/n/a?h=" + h_) == (200, b"[1] []\n")
    assert same(ports, "/n/a?h=x" + h_) == (200, b"[] []\n")
    assert same(ports, "/n/b?h=" + h_) == (200, b"[] []\n")
    # $secure_link_expires is known once $secure_link has been evaluated
    h2 = b64url(md5("/order/a"))
    # (and keeps its first value for the request, as nginx's variables do)
    assert same(ports, "/order/a?h=%s&e=99" % h2) == (200, b"[] [0] []\n")
    assert same(ports, "/order/a?h=%s&e=%d" % (h2, time.time() + 60)) == (200, b"[] [1] []\n")
    assert same(ports, "/v") == (200, b"[] []\n")


def test_secret_mode(ports):
    link = "dir/file.txt"
    hexd = hashlib.md5((link + "w0rd").encode()).hexdigest()
    assert same(ports, "/p/%s/%s" % (hexd, link)) == (200, b"[dir/file.txt]\n")
    assert same(ports, "/p/%s/%s" % (hexd.upper(), link)) == (200, b"[dir/file.txt]\n")
    withq = hashlib.md5(b"f?a=1w0rd").hexdigest()
    assert same(ports, "/p/%s/f?a=1" % withq) == (200, b"[f?a=1]\n")
    for path in ("/p/%s/%s" % (hexd, "dir/other.txt"),
                 "/p/%s/%s" % (hexd[:31], link),
                 "/p/%s0/%s" % (hexd, link),
                 "/p/%s/" % hexd,
                 "/p/%s" % hexd,
                 "/p/",
                 "/p/%s/%s" % ("g" + hexd[1:], link)):
        assert same(ports, path)[0] == 403, path
    # a nested location inherits the secret; the hash is the second
    # segment whatever the location's prefix
    other = hashlib.md5(b"a.txtother").hexdigest()
    assert same(ports, "/i/%s/a.txt" % other) == (200, b"[a.txt]\n")
    assert same(ports, "/i/%s/b.txt" % other) == (200, b"[]\n")
    assert same(ports, "/j/%s/a.txt" % other) == (200, b"[]\n")
    assert same(ports, "/j/p/%s/a.txt" % other) == (200, b"[]\n")
    pother = hashlib.md5(b"%s/a.txtother" % other.encode()).hexdigest()
    assert same(ports, "/j/p/%s/a.txt" % other.replace(other, pother)) == (200, b"[]\n")


MIXED = '"secure_link_secret" cannot be mixed with "secure_link" and "secure_link_md5"'
REFUSED = [
    ("server { if ($uri) { secure_link_secret a;  # ERR\n} }",
     '"secure_link_secret" directive is not allowed here'),
    ("server { if ($uri) { secure_link $uri;  # ERR\n} }",
     '"secure_link" directive is not allowed here'),
    ("secure_link $arg_a; secure_link $arg_b;  # ERR", '"secure_link" directive is duplicate'),
    ("secure_link_md5 $a; secure_link_md5 $b;  # ERR", 'directive is duplicate'),
    ("server { location / { secure_link_secret a; secure_link_secret b;  # ERR\n} }",
     '"secure_link_secret" directive is duplicate'),
    ("secure_link a b;  # ERR", 'invalid number of arguments in "secure_link" directive'),
]


def test_refused_forms(tmp_path):
    for i, (http, words) in enumerate(REFUSED):
        d = tmp_path / str(i)
        d.mkdir()
        rc, err = nginx_t(d, http.replace("# ERR", ""))
        assert rc != 0 and words in err, (http, err)
        conferr.check(d / "s", [words], http=http)


def test_mixed_in_one_location(tmp_path):
    """Found when the levels are merged: nginx names the end of the http
    block, scalwsd the http block's line; both name the file."""
    for i, http in enumerate(["server { location / { secure_link_secret a; secure_link $uri; } }",
                              "server { location / { secure_link_md5 $uri; secure_link_secret a; } }"]):
        d = tmp_path / str(i)
        d.mkdir()
        rc, err = nginx_t(d, http)
        assert rc != 0 and MIXED in err, err
        (d / "s").mkdir()
        (d / "s" / "html").mkdir()
        conf = d / "s" / "scalws.conf"
        conf.write_text(h.render(h.MAIN_TEMPLATE, d / "s", [h.free_port()], http=http))
        r = h.run_scalwsd(["-t", "-p", str(d / "s") + "/", "-c", str(conf)])
        assert r.returncode != 0 and MIXED in r.stderr.decode(), r.stderr
        assert "%s:" % conf in r.stderr.decode()


def test_accepted_forms(tmp_path):
    # the secret with secure_link_md5 inherited (not the location's own) is
    # accepted, as nginx does
    http = ('secure_link $arg_md5,$arg_expires; secure_link_md5 "$uri secret";\n'
            'server { location / { secure_link_secret ""; }\n'
            '         location /x { secure_link $cookie_h; } }\n'
            'server { listen 127.0.0.1:1; secure_link_secret s; }')
    rc, err = nginx_t(tmp_path, http)
    assert rc == 0, err
    conferr.check_ok(tmp_path / "s", http=http)
