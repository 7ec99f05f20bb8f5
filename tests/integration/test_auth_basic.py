"""The auth_basic module: Basic authentication against htpasswd files, every
password scheme (made by Apache's htpasswd, openssl and Python), malformed
credentials, files that change, satisfy any|all with allow/deny."""
import base64
import hashlib
import os
import shutil
import subprocess
import warnings

import pytest

import swsharness as h

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt

HTPASSWD = shutil.which("htpasswd")
OPENSSL = shutil.which("openssl")


def htpasswd(flag, user, password):
    """A line made by Apache's htpasswd (-m apr1, -B bcrypt, -s {SHA}, -d crypt)."""
    out = subprocess.run([HTPASSWD, "-nb" + flag, user, password], capture_output=True,
                         check=True, timeout=30).stdout.decode()
    return out.strip().splitlines()[0]


def ssha(password, salt):
    d = hashlib.sha1(password.encode() + salt).digest()
    return "{SSHA}" + base64.b64encode(d + salt).decode()


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


@pytest.fixture(scope="module")
def users():
    if HTPASSWD is None:
        pytest.skip("htpasswd (apache2-utils) is not installed")
    lines = [
        "# a comment, then a blank line",
        "",
        htpasswd("m", "apr1", "apr1-secret"),
        htpasswd("B", "bcrypt", "bcrypt-secret"),
        htpasswd("s", "sha", "sha-secret"),
        htpasswd("d", "des", "des-pw1"),
        "sha512:" + crypt.crypt("sha512-secret", crypt.mksalt(crypt.METHOD_SHA512)),
        "sha256:" + crypt.crypt("sha256-secret", crypt.mksalt(crypt.METHOD_SHA256)),
        "md5crypt:" + crypt.crypt("md5-secret", crypt.mksalt(crypt.METHOD_MD5)),
        "plain:{PLAIN}plain-secret",
        "ssha:" + ssha("ssha-secret", b"\x01\x02salty"),
        "comment:{PLAIN}c-secret:a third field is a comment",
        "dup:{PLAIN}first",
        "dup:{PLAIN}second",
        "crlf:{PLAIN}crlf-secret\r",
        "unknown:!!notahash",
        "nocolon-line",
        ":{PLAIN}emptyuser",
    ]
    if OPENSSL:
        out = subprocess.run([OPENSSL, "passwd", "-apr1", "-salt", "s4lt", "openssl-secret"],
                             capture_output=True, check=True, timeout=30).stdout.decode()
        lines.append("openssl:" + out.strip())
    return "\n".join(lines) + "\n"


SERVER = """
        auth_basic "Restricted Area";
        auth_basic_user_file @TMP@/conf/users;
        location / { }
        location /open/ { auth_basic off; }
        location = /quoted { auth_basic 'say "hi" \\\\ bye'; respond 200 "q"; }
        location = /realmvar { auth_basic "realm of $host"; respond 200 "v"; }
        location = /byvar { auth_basic_user_file $arg_f; respond 200 "byvar"; }
        location = /relvar { auth_basic_user_file conf/$arg_f; respond 200 "relvar"; }
        location = /missing { auth_basic_user_file @TMP@/conf/none; respond 200 "m"; }
        location /custom/ { error_page 401 /custom401.html; }
        location = /custom401.html { auth_basic off; }
        location = /any-local { satisfy any; allow 127.0.0.1; deny all; respond 200 "any"; }
        location = /any-deny { satisfy any; deny all; respond 200 "anyd"; }
        location = /all-local { allow 127.0.0.1; deny all; respond 200 "all"; }
        location = /all-deny { deny all; respond 200 "alld"; }
        location = /any-noauth { satisfy any; auth_basic off; deny all; respond 200 "x"; }
        location = /who { auth_basic off; return 200 "[$remote_user]"; }
"""


@pytest.fixture(scope="module")
def srv(sws_module, users):
    files = {
        "html/index.html": b"secret page\n",
        "html/open/o.txt": b"open\n",
        "html/custom/p.txt": b"p\n",
        "html/custom401.html": b"please log in\n",
        "conf/users": users,
        "conf/other": "other:{PLAIN}other-secret\n",
    }
    return sws_module(server=SERVER, files=files, http="    access_log off;\n")


def get(srv, path, auth=None, headers=(), **kw):
    hdrs = list(headers)
    if auth is not None:
        hdrs.append(("Authorization", auth))
    return h.exchange(srv.port, h.request("GET", path, headers=hdrs), **kw)


def test_no_credentials_gets_a_challenge(srv):
    r = get(srv, "/")
    assert r.status == 401, r
    assert r.headers_all("WWW-Authenticate") == ['Basic realm="Restricted Area"'], r
    assert b"401" in r.body, r


@pytest.mark.parametrize("user,password", [
    ("apr1", "apr1-secret"), ("bcrypt", "bcrypt-secret"), ("sha", "sha-secret"),
    ("des", "des-pw1"), ("sha512", "sha512-secret"), ("sha256", "sha256-secret"),
    ("md5crypt", "md5-secret"), ("plain", "plain-secret"), ("ssha", "ssha-secret"),
    ("comment", "c-secret"), ("crlf", "crlf-secret"), ("openssl", "openssl-secret"),
])
def test_every_scheme_right_and_wrong(srv, users, user, password):
    if user + ":" not in users:
        pytest.skip("no openssl")
    r = get(srv, "/", basic(user, password))
    assert r.status == 200 and r.body == b"secret page\n", (user, r)
    r = get(srv, "/", basic(user, password + "x"))
    assert r.status == 401 and r.header("WWW-Authenticate"), (user, r)
    r = get(srv, "/", basic(user, password[:-1]))
    assert r.status == 401, (user, r)
    r = get(srv, "/", basic(user, ""))
    assert r.status == 401, (user, r)


def test_scheme_is_case_insensitive(srv):
    r = get(srv, "/", "basic " + basic("plain", "plain-secret")[6:])
    assert r.status == 200, r
    r = get(srv, "/", "BASIC   " + basic("plain", "plain-secret")[6:] + "  ")
    assert r.status == 200, r


def test_user_names_and_first_line_wins(srv):
    assert get(srv, "/", basic("nobody", "x")).status == 401
    assert get(srv, "/", basic("Plain", "plain-secret")).status == 401   # case matters
    assert get(srv, "/", basic("dup", "first")).status == 200
    assert get(srv, "/", basic("dup", "second")).status == 401
    assert get(srv, "/", basic("", "emptyuser")).status == 401
    assert get(srv, "/", basic("nocolon-line", "")).status == 401
    # a hash in no known scheme: refused, never accepted
    assert get(srv, "/", basic("unknown", "!!notahash")).status == 401
    assert h.wait_file_contains(srv.error_log_path, 'user "nobody" was not found in')
    assert get(srv, "/", basic("plain", "wrong")).status == 401
    assert h.wait_file_contains(srv.error_log_path, 'user "plain": password mismatch')


def test_password_with_colon(srv, tmp_path):
    # only the first ':' separates the user from the password
    r = get(srv, "/byvar?f=%s" % (srv.tmp / "conf" / "colon"),
            basic("c", "a:b"))
    assert r.status == 403, r          # that file does not exist yet
    (srv.tmp / "conf" / "colon").write_text("c:{PLAIN}a:b\n")
    # the third field is a comment: the stored password is "a"
    assert h.wait_for(lambda: get(srv, "/byvar?f=%s" % (srv.tmp / "conf" / "colon"),
                                  basic("c", "a")).status == 200, timeout=5)


@pytest.mark.parametrize("value", [
    "Basic", "Basic ", "Basic !!!!", "Basic " + base64.b64encode(b"nocolon").decode(),
    "Basic " + base64.b64encode(b"plain:plain-\x00secret").decode(),
    "Basic " + base64.b64encode(b"plain:plain-secret").decode()[:-1],
    "Basic " + base64.b64encode(b"plain:plain-secret").decode() + "=",
    "Basic =" + base64.b64encode(b"plain:plain-secret").decode(),
    "Bearer abc.def.ghi", "Digest username=\"plain\"", "plain-secret",
    "Basic " + "A" * 5000, "Basic " + base64.b64encode(b"plain:" + b"x" * 2000).decode(),
    "Basicx " + base64.b64encode(b"plain:plain-secret").decode(),
])
def test_malformed_authorization_is_401(srv, value):
    r = get(srv, "/", value)
    assert r.status == 401 and r.header("WWW-Authenticate"), (value, r)
    # and the worker is still there
    assert get(srv, "/", basic("plain", "plain-secret")).status == 200


def test_binary_garbage_authorization(srv):
    for raw in (b"Basic \xff\xfe\xfd", b"Basic " + base64.b64encode(b"\xff:\xfe")):
        data = (b"GET / HTTP/1.1\r\nHost: localhost\r\nAuthorization: " + raw + b"\r\n\r\n")
        with h.Conn(srv.port) as c:
            c.send(data)
            r = c.read_response()
        assert r is not None and r.status in (400, 401), r
    assert get(srv, "/", basic("plain", "plain-secret")).status == 200


def test_duplicate_authorization_is_400(srv):
    # which of two a check would look at must not be a guess (nginx: 400)
    data = h.request("GET", "/", headers=[("Authorization", basic("plain", "wrong")),
                                          ("Authorization", basic("plain", "plain-secret"))])
    r = h.exchange(srv.port, data)
    assert r.status == 400, r
    assert get(srv, "/", basic("plain", "plain-secret")).status == 200


def test_auth_basic_off_and_realm_forms(srv):
    r = get(srv, "/open/o.txt")
    assert r.status == 200 and r.body == b"open\n", r
    r = get(srv, "/quoted")
    assert r.headers_all("WWW-Authenticate") == ['Basic realm="say \\"hi\\" \\\\ bye"'], r
    r = get(srv, "/realmvar")
    assert r.header("WWW-Authenticate") == 'Basic realm="realm of localhost"', r


def test_user_file_with_variables(srv):
    other = srv.tmp / "conf" / "other"
    r = get(srv, "/byvar?f=%s" % other, basic("other", "other-secret"))
    assert r.status == 200 and r.body == b"byvar", r
    r = get(srv, "/byvar?f=%s" % other, basic("plain", "plain-secret"))
    assert r.status == 401, r
    # relative: against the configuration file's directory (TMP)
    r = get(srv, "/relvar?f=other", basic("other", "other-secret"))
    assert r.status == 200 and r.body == b"relvar", r


def test_missing_file_is_403(srv):
    r = get(srv, "/missing", basic("plain", "plain-secret"))
    assert r.status == 403, r
    assert h.wait_file_contains(srv.error_log_path, 'open() "%s/conf/none" failed' % srv.tmp)


def test_error_page_for_401_keeps_the_challenge(srv):
    r = get(srv, "/custom/p.txt")
    assert r.status == 401 and r.body == b"please log in\n", r
    assert r.header("WWW-Authenticate") == 'Basic realm="Restricted Area"', r
    r = get(srv, "/custom/p.txt", basic("plain", "plain-secret"))
    assert r.status == 200 and r.body == b"p\n", r


def test_http10_and_keepalive(srv):
    r = h.exchange(srv.port, h.request("GET", "/", version="HTTP/1.0",
                                       headers=[("Authorization", basic("plain", "plain-secret"))]))
    assert r.status == 200, r
    with h.Conn(srv.port) as c:
        c.send(h.request("GET", "/") + h.request("GET", "/", headers=[
            ("Authorization", basic("sha", "sha-secret"))]))
        r1 = c.read_response()
        r2 = c.read_response()
    assert r1.status == 401 and r2.status == 200, (r1, r2)


# ---------------------------------------------------------------- satisfy

def test_satisfy_any(srv):
    # allowed by address: no credentials needed
    r = get(srv, "/any-local")
    assert r.status == 200 and r.body == b"any", r
    # denied by address: the password is the other way in
    r = get(srv, "/any-deny")
    assert r.status == 401 and r.header("WWW-Authenticate"), r
    r = get(srv, "/any-deny", basic("apr1", "apr1-secret"))
    assert r.status == 200 and r.body == b"anyd", r
    r = get(srv, "/any-deny", basic("apr1", "wrong"))
    assert r.status == 401, r
    # no check says yes: the 403
    r = get(srv, "/any-noauth")
    assert r.status == 403, r


def test_satisfy_all(srv):
    r = get(srv, "/all-local")
    assert r.status == 401, r
    r = get(srv, "/all-local", basic("apr1", "apr1-secret"))
    assert r.status == 200 and r.body == b"all", r
    r = get(srv, "/all-deny", basic("apr1", "apr1-secret"))
    assert r.status == 403, r


# ---------------------------------------------------------------- the file changes

def test_file_reread_when_changed(sws):
    srv = sws(server="""
        location / { auth_basic "r"; auth_basic_user_file @TMP@/pw; respond 200 "ok"; }
""", files={"pw": "a:{PLAIN}one\n"})
    pw = srv.tmp / "pw"
    assert get(srv, "/", basic("a", "one")).status == 200
    assert get(srv, "/", basic("b", "two")).status == 401
    # replaced as htpasswd does it: a new file renamed over the old one
    tmp = srv.tmp / "pw.tmp"
    tmp.write_text("a:{PLAIN}one\nb:{PLAIN}two\n")
    os.rename(tmp, pw)
    assert h.wait_for(lambda: get(srv, "/", basic("b", "two")).status == 200, timeout=5)
    # edited in place, same size
    pw.write_text("a:{PLAIN}uno\nb:{PLAIN}two\n")
    st = os.stat(pw)
    os.utime(pw, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    assert h.wait_for(lambda: get(srv, "/", basic("a", "uno")).status == 200, timeout=5)
    assert get(srv, "/", basic("a", "one")).status == 401
    # removed: 403 until it is back
    os.unlink(pw)
    assert h.wait_for(lambda: get(srv, "/", basic("a", "uno")).status == 403, timeout=5)
    pw.write_text("a:{PLAIN}back\n")
    assert h.wait_for(lambda: get(srv, "/", basic("a", "back")).status == 200, timeout=5)


def test_unreadable_file_is_500(sws):
    srv = sws(server="""
        location / { auth_basic "r"; auth_basic_user_file @TMP@/pw; respond 200 "ok"; }
""", files={"pw": "a:{PLAIN}one\n"})
    def worker_uids():
        uids = []
        for pid in srv.children():
            try:
                with open("/proc/%d/status" % pid) as f:
                    uids += [int(ln.split()[1]) for ln in f if ln.startswith("Uid:")]
            except OSError:
                pass
        return uids

    # a worker just forked may not have dropped its privileges yet
    if not h.wait_for(lambda: worker_uids() and 0 not in worker_uids(), timeout=3):
        pytest.skip("the worker runs as root: it can read any file")
    os.chmod(srv.tmp / "pw", 0)
    r = get(srv, "/", basic("a", "one"))
    assert r.status == 500, r


def test_http2_credentials(sws):
    srv = sws(server="""
        listen 127.0.0.1:@PORT2@ http2;
        location / { auth_basic "h2"; auth_basic_user_file @TMP@/pw; respond 200 "ok"; }
""", files={"pw": "a:{PLAIN}one\n"}, ports=2)
    url = "http://127.0.0.1:%d/" % srv.ports[1]
    r = h.curl(url, prior_knowledge=True)
    assert r.status == 401 and r.header("www-authenticate") == 'Basic realm="h2"', r
    r = h.curl(url, prior_knowledge=True, headers=["Authorization: " + basic("a", "one")])
    assert r.status == 200 and r.body == b"ok", r


def test_config_errors_name_file_and_line(tmp_path):
    cases = [
        ('    auth_basic "a";\n    auth_basic "b";\n', '"auth_basic" directive is duplicate in'),
        ("    auth_basic_user_file a;\n    auth_basic_user_file b;\n",
         '"auth_basic_user_file" directive is duplicate'),
        ("    auth_basic_user_file $nosuchvar;\n", 'unknown variable'),
        ('    auth_basic "realm ${unterminated";\n', 'in "auth_basic" directive'),
        ('    auth_basic_user_file "";\n', '"auth_basic_user_file" directive has an empty file name'),
        ("    auth_basic a b;\n", 'invalid number of arguments in "auth_basic" directive'),
        ("    satisfy maybe;\n", 'invalid value "maybe" in "satisfy" directive'),
    ]
    for i, (http, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, http=http)
        assert rc not in (None, 0) and needle in out, (http, out)
        assert "scalws.conf:1" in out, out
        assert not listening, http


@pytest.mark.parametrize("auth,user", [
    (None, ""), ("basic", "plain"), ("Basic !!!", ""), ("Bearer abc", ""),
    ("Basic " + base64.b64encode(b"nocolon").decode(), ""),
    ("Basic " + base64.b64encode(b"u\x01x:p").decode(), ""),
    ("Basic " + base64.b64encode(b"x" * 2000 + b":p").decode(), ""),
    ("Basic " + base64.b64encode(b"\xc3\xa9t\xc3\xa9:p").decode(), "\u00e9t\u00e9"),
])
def test_remote_user(srv, auth, user):
    # $remote_user is the user of Basic credentials, checked or not (as nginx)
    if auth == "basic":
        auth = basic("plain", "anything")
    r = get(srv, "/who", auth)
    assert r.status == 200 and r.body.decode() == "[%s]" % user, r
