"""The dav module (nginx's WebDAV methods): PUT streamed to a temporary file
and renamed into place, DELETE, MKCOL, COPY and MOVE with their headers,
the bad input nginx refuses, access rules (limit_except, auth_basic,
deny) guarding every method, and paths that never leave the root."""
import base64
import hashlib
import os
import stat
from pathlib import Path

import pytest

import conferr
import swsharness as h

DAV = "dav_methods PUT DELETE MKCOL COPY MOVE;"


@pytest.fixture(autouse=True)
def no_worker_died(tmp_path):
    """A worker that died (a sanitizer's abort after the answer went out)
    fails the test that made it."""
    yield
    for log in tmp_path.rglob("error.log"):
        text = log.read_text(errors="replace")
        assert "exited on signal" not in text, text[-2000:]


def open_to_workers(s):
    """The tree under the server's directory writable by its workers: run
    as root, the master starts them as nobody (as nginx's), and a DAV
    location writes where they can."""
    for p in [Path(s.tmp)] + list(Path(s.tmp).rglob("*")):
        if not p.is_symlink():
            os.chmod(p, 0o777 if p.is_dir() else 0o666)
    return s


def dav(sws, extra="", location="/", http="", files=None):
    s = sws(server="        location %s { %s %s }\n" % (location, DAV, extra), http=http,
            files=files or {})
    s.root = Path(s.tmp) / "html"
    return open_to_workers(s)


def req(s, method, path, headers=(), body=None):
    return h.curl(s.url(path), method=method, headers=list(headers), body=body)


def raw(s, method, path, headers=(), body=b""):
    if body:
        headers = list(headers) + ["Content-Length: %d" % len(body)]
    return h.exchange(s.port, h.request(method, path, headers=headers, body=body),
                      method=method)


def leftovers(d):
    """Temporary files a PUT or COPY left behind."""
    return [p.name for p in Path(d).rglob(".*dav-*")]


def test_put_creates_and_replaces(sws):
    s = dav(sws)
    r = req(s, "PUT", "/a.txt", body=b"hello")
    assert r.status == 201, r
    assert r.header("Location") == s.url("/a.txt"), r
    assert r.header("Content-Length") == "0" and r.body == b"", r
    f = s.root / "a.txt"
    assert f.read_bytes() == b"hello"
    assert stat.S_IMODE(f.stat().st_mode) == 0o600          # dav_access default
    r = req(s, "PUT", "/a.txt", body=b"again")
    assert r.status == 204 and r.header("Location") is None, r
    assert f.read_bytes() == b"again"
    assert req(s, "GET", "/a.txt").body == b"again"
    # an empty body makes an empty file; a name that needs escaping
    assert req(s, "PUT", "/empty", body=b"").status == 201
    assert (s.root / "empty").read_bytes() == b""
    r = req(s, "PUT", "/sp%20ace.txt", body=b"x")
    assert r.status == 201 and r.header("Location") == s.url("/sp%20ace.txt"), r
    assert (s.root / "sp ace.txt").read_bytes() == b"x"
    # the Date field sets the file's time (nginx's)
    r = req(s, "PUT", "/dated", headers=["Date: Sun, 06 Nov 1994 08:49:37 GMT"], body=b"d")
    assert r.status == 201 and int((s.root / "dated").stat().st_mtime) == 784111777
    assert leftovers(s.root) == []


def test_put_streams_large_and_chunked_bodies(sws):
    s = dav(sws, http="    client_max_body_size 64m; client_body_buffer_size 16k;\n")
    data = os.urandom(1 << 20) * 24                          # 24 MiB
    worker = s.children()[0]

    def peak():
        for line in Path("/proc/%d/status" % worker).read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    before = peak()
    r = req(s, "PUT", "/big.bin", body=data)
    assert r.status == 201, r
    got = (s.root / "big.bin").read_bytes()
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()
    # streamed to disk: the worker never held the body
    assert peak() - before < 8 << 20, (before, peak())
    # chunked, over a raw socket, several chunks
    body = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (b"abc", b"d" * 5000, b"e")) + b"0\r\n\r\n"
    r = h.exchange(s.port, h.request("PUT", "/chunked", headers=["Transfer-Encoding: chunked"],
                                     body=body), method="PUT")
    assert r.status == 201, r
    assert (s.root / "chunked").read_bytes() == b"abc" + b"d" * 5000 + b"e"
    assert leftovers(s.root) == []


def test_put_body_too_large(sws):
    s = dav(sws, http="    client_max_body_size 1k;\n")
    r = req(s, "PUT", "/x", body=b"x" * 5000)
    assert r.status == 413, r
    body = b"".join(b"400\r\n" + b"y" * 1024 + b"\r\n" for _ in range(3)) + b"0\r\n\r\n"
    r = h.exchange(s.port, h.request("PUT", "/y", headers=["Transfer-Encoding: chunked"],
                                     body=body), method="PUT")
    assert r.status == 413, r
    assert not (s.root / "x").exists() and not (s.root / "y").exists()
    h.wait_for(lambda: leftovers(s.root) == [])
    assert leftovers(s.root) == []


def test_put_refusals(sws):
    s = dav(sws, files={"html/dir/f": "f"})
    assert req(s, "PUT", "/dir/", body=b"x").status == 409          # a collection
    assert req(s, "PUT", "/dir", body=b"x").status == 409           # onto a directory
    r = req(s, "PUT", "/r", headers=["Content-Range: bytes 0-0/1"], body=b"x")
    assert r.status == 501, r
    assert req(s, "PUT", "/no/such/f", body=b"x").status == 500     # nginx's, no parent
    assert not (s.root / "no").exists() and not (s.root / "r").exists()
    assert leftovers(s.root) == []


def test_create_full_put_path_and_access(sws):
    s = dav(sws, "create_full_put_path on; dav_access group:rw all:r;")
    r = req(s, "PUT", "/a/b/c.txt", body=b"deep")
    assert r.status == 201, r
    f = s.root / "a" / "b" / "c.txt"
    assert f.read_bytes() == b"deep"
    assert stat.S_IMODE(f.stat().st_mode) == 0o664
    # the directories with x where r is, less the umask (as nginx)
    um = os.umask(0)
    os.umask(um)
    assert stat.S_IMODE((s.root / "a" / "b").stat().st_mode) == 0o775 & ~um
    r = req(s, "MKCOL", "/a/col/")
    assert r.status == 201 and stat.S_ISDIR((s.root / "a" / "col").stat().st_mode), r


def test_delete(sws):
    outside = {"outside/keep": "k"}
    s = dav(sws, files=dict(outside, **{"html/f": "f", "html/d/x": "x", "html/d/s/y": "y",
                                        "html/g": "g"}))
    os.symlink(Path(s.tmp) / "outside", s.root / "d" / "link")
    assert req(s, "DELETE", "/f", headers=["Content-Length: 0"]).status == 204
    assert not (s.root / "f").exists()
    assert req(s, "DELETE", "/f").status == 404
    assert req(s, "DELETE", "/g/x").status == 409                   # ENOTDIR (nginx's)
    assert req(s, "DELETE", "/g/").status == 409
    assert req(s, "DELETE", "/g", headers=["Depth: 1"]).status == 400
    assert req(s, "DELETE", "/d").status == 409                     # a directory without '/'
    for depth in ("0", "1", "Infinity", "x"):
        assert req(s, "DELETE", "/d/", headers=["Depth: " + depth]).status == 400, depth
    assert raw(s, "DELETE", "/g", body=b"body").status == 415
    assert (s.root / "g").exists() and (s.root / "d" / "s" / "y").exists()
    r = req(s, "DELETE", "/d/", headers=["Depth: infinity"])
    assert r.status == 204, r
    assert not (s.root / "d").exists()
    # the link went, not what it pointed to
    assert (Path(s.tmp) / "outside" / "keep").read_text() == "k"
    # the root itself is not deleted (nginx empties it, then fails)
    assert req(s, "DELETE", "/").status == 403 and (s.root / "g").exists()


def test_min_delete_depth(sws):
    s = dav(sws, "min_delete_depth 2;", files={"html/a/b/f": "f", "html/a/g": "g"})
    assert req(s, "DELETE", "/a/g").status == 204
    assert req(s, "DELETE", "/a/").status == 409
    assert req(s, "DELETE", "/a/b/f").status == 204
    assert req(s, "DELETE", "/a/b/").status == 204
    assert (s.root / "a").is_dir()


def test_mkcol(sws):
    s = dav(sws)
    r = req(s, "MKCOL", "/c/")
    assert r.status == 201 and r.header("Location") == s.url("/c/"), r
    assert r.header("Content-Length") == "0"
    assert stat.S_IMODE((s.root / "c").stat().st_mode) == 0o700
    assert req(s, "MKCOL", "/c/").status == 405                      # exists
    assert req(s, "MKCOL", "/c2").status == 409                      # not a collection
    assert req(s, "MKCOL", "/no/c/").status == 409                   # no parent
    assert raw(s, "MKCOL", "/c3/", body=b"<x/>").status == 415
    assert not (s.root / "c2").exists() and not (s.root / "c3").exists()


def test_copy_and_move_files(sws):
    s = dav(sws, files={"html/a.txt": "A", "html/d/x": "x"})
    os.chmod(s.root / "a.txt", 0o604)
    dest = "http://127.0.0.1:%d" % s.port
    r = req(s, "COPY", "/a.txt", headers=["Destination: %s/b.txt" % dest])
    assert r.status == 204, r                                        # nginx: 204, new or not
    assert (s.root / "b.txt").read_text() == "A"
    assert stat.S_IMODE((s.root / "b.txt").stat().st_mode) == 0o604
    assert req(s, "COPY", "/a.txt", headers=["Destination: /b.txt"]).status == 204
    r = req(s, "COPY", "/a.txt", headers=["Destination: /b.txt", "Overwrite: F"])
    assert r.status == 412, r
    assert req(s, "COPY", "/a.txt", headers=["Destination: /c.txt", "Overwrite: f"]).status == 204
    assert req(s, "COPY", "/a.txt", headers=["Destination: /e.txt", "Depth: 0"]).status == 204
    assert req(s, "COPY", "/a.txt", headers=["Destination: /b.txt?q=1"]).status == 204
    assert req(s, "COPY", "/a.txt", headers=["Destination: /./dot.txt"]).status == 204
    assert (s.root / "dot.txt").exists()
    assert req(s, "COPY", "/a.txt", headers=["Destination: /d/"]).status == 409
    assert req(s, "COPY", "/a.txt", headers=["Destination: /d"]).status == 409
    assert req(s, "COPY", "/missing", headers=["Destination: /m"]).status == 404
    assert req(s, "COPY", "/a.txt", headers=["Destination: /no/x"]).status == 500
    # MOVE of a file makes the destination's directories (nginx's)
    r = req(s, "MOVE", "/c.txt", headers=["Destination: %s/new/dir/c.txt" % dest])
    assert r.status == 204, r
    assert not (s.root / "c.txt").exists()
    assert (s.root / "new" / "dir" / "c.txt").read_text() == "A"
    # the same file: refused, and left whole (nginx truncates it)
    assert req(s, "COPY", "/a.txt", headers=["Destination: /a.txt"]).status == 403
    assert req(s, "MOVE", "/a.txt", headers=["Destination: /a.txt"]).status == 403
    assert (s.root / "a.txt").read_text() == "A"
    assert leftovers(s.root) == []


def test_copy_and_move_collections(sws):
    s = dav(sws, files={"html/d/x": "x", "html/d/s/y": "y", "html/e/old": "o",
                        "outside/secret": "s"})
    os.symlink(Path(s.tmp) / "outside", s.root / "d" / "link")
    r = req(s, "COPY", "/d/", headers=["Destination: /c/"])
    assert r.status == 201 and r.header("Content-Length") == "0", r
    assert (s.root / "c" / "s" / "y").read_text() == "y"
    assert not (s.root / "c" / "link").exists()                      # links are not copied
    # Depth 0: the collection alone (RFC 4918 9.8.3)
    assert req(s, "COPY", "/d/", headers=["Destination: /z/", "Depth: 0"]).status == 201
    assert (s.root / "z").is_dir() and list((s.root / "z").iterdir()) == []
    assert req(s, "COPY", "/d/", headers=["Destination: /y/", "Depth: 1"]).status == 400
    # over an existing collection: replaced, unless Overwrite: F
    assert req(s, "COPY", "/d/", headers=["Destination: /e/", "Overwrite: F"]).status == 412
    assert req(s, "COPY", "/d/", headers=["Destination: /e/"]).status == 201
    assert not (s.root / "e" / "old").exists() and (s.root / "e" / "x").exists()
    assert req(s, "COPY", "/d", headers=["Destination: /q"]).status == 400   # no '/'
    assert req(s, "COPY", "/d/", headers=["Destination: /q"]).status == 409
    assert req(s, "COPY", "/d/", headers=["Destination: /none/q/"]).status == 404
    # into itself or over its parent: refused
    assert req(s, "COPY", "/d/", headers=["Destination: /d/s/in/"]).status == 403
    assert req(s, "MOVE", "/d/s/", headers=["Destination: /d/"]).status == 403
    assert req(s, "MOVE", "/c/", headers=["Destination: /m/", "Depth: 0"]).status == 400
    r = req(s, "MOVE", "/c/", headers=["Destination: /m/"])
    assert r.status == 201, r
    assert not (s.root / "c").exists() and (s.root / "m" / "s" / "y").exists()
    assert (Path(s.tmp) / "outside" / "secret").exists()


def test_bad_destination_and_headers(sws):
    s = dav(sws, files={"html/a.txt": "A"})
    p = s.port
    bad = [None, "b.txt", "", "http://other/b.txt", "https://127.0.0.1:%d/b.txt" % p,
           "http://127.0.0.1.evil.test/b.txt", "http://127.0.0.1", "http://127.0.0.1:%d" % p,
           "/../b.txt", "/%2e%2e/b.txt", "/x/%2E%2E/b.txt", "/b%00.txt", "/b%zz.txt",
           "/x/.."]
    for d in bad:
        hdrs = [] if d is None else ["Destination: " + d]
        assert raw(s, "COPY", "/a.txt", hdrs).status == 400, d
        assert raw(s, "MOVE", "/a.txt", hdrs).status == 400, d
    for hdr in ("Overwrite: X", "Overwrite: TT", "Depth: 1", "Depth: Infinity"):
        assert req(s, "COPY", "/a.txt", headers=["Destination: /b.txt", hdr]).status == 400, hdr
    assert req(s, "MOVE", "/a.txt", headers=["Destination: /b.txt", "Depth: 0"]).status == 400
    assert raw(s, "COPY", "/a.txt", ["Destination: /b.txt"], body=b"x").status == 415
    # any port of this host is this server (nginx's)
    r = req(s, "COPY", "/a.txt", headers=["Destination: http://127.0.0.1:1/b.txt"])
    assert r.status == 204, r
    assert sorted(x.name for x in s.root.iterdir()) == ["a.txt", "b.txt"]


def test_methods_not_enabled(sws):
    s = sws(server="        location / { dav_methods PUT; }\n"
                   "        location /off/ { dav_methods off; }\n",
            files={"html/a.txt": "A", "html/off/f": "f"})
    open_to_workers(s)
    assert req(s, "PUT", "/p", body=b"x").status == 201
    for m in ("DELETE", "MKCOL", "COPY", "MOVE", "PROPFIND", "LOCK"):
        assert req(s, m, "/a.txt", headers=["Destination: /b"]).status == 405, m
    assert req(s, "PUT", "/off/x", body=b"x").status == 405
    assert req(s, "GET", "/a.txt").body == b"A"


def auth(user, password):
    return "Authorization: Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def test_access_rules_guard_every_method(sws):
    files = {"html/ro/f": "f", "html/ro/d/x": "x", "html/au/f": "f", "html/no/f": "f",
             "html/mk/f": "f",
             "htpasswd": "w:{PLAIN}pw\n"}
    s = sws(server=(
        "        location /ro/ { %s limit_except GET { deny all; } }\n"
        "        location /au/ { %s auth_basic dav; auth_basic_user_file htpasswd; }\n"
        "        location /no/ { %s deny all; }\n"
        "        location /mk/ { %s limit_except GET MKCOL { deny all; } }\n"
        % (DAV, DAV, DAV, DAV)), files=files)
    open_to_workers(s)
    root = Path(s.tmp) / "html"
    before = sorted(str(p) for p in root.rglob("*"))
    for loc in ("/ro/", "/no/"):
        for m, path, hdrs in (("PUT", "n", []), ("DELETE", "f", []), ("MKCOL", "c/", []),
                              ("COPY", "f", ["Destination: %sg" % loc]),
                              ("MOVE", "f", ["Destination: %sg" % loc]),
                              ("DELETE", "d/", ["Depth: infinity"])):
            r = req(s, m, loc + path, headers=hdrs, body=b"x" if m == "PUT" else None)
            assert r.status == 403, (loc, m, r)
        assert req(s, "GET", loc + "f").status == (200 if loc == "/ro/" else 403)
    # limit_except names MKCOL: it passes, COPY does not
    assert req(s, "MKCOL", "/mk/c/").status == 201
    assert req(s, "COPY", "/mk/f", headers=["Destination: /mk/g"]).status == 403
    # auth_basic: PUT and DELETE need the password
    assert req(s, "PUT", "/au/n", body=b"x").status == 401
    assert req(s, "PUT", "/au/n", headers=[auth("w", "bad")], body=b"x").status == 401
    assert req(s, "DELETE", "/au/f").status == 401
    assert req(s, "COPY", "/au/f", headers=["Destination: /au/g"]).status == 401
    after = sorted(str(p) for p in root.rglob("*"))
    assert after == sorted(before + [str(root / "mk" / "c")])
    assert req(s, "PUT", "/au/n", headers=[auth("w", "pw")], body=b"x").status == 201
    assert req(s, "DELETE", "/au/f", headers=[auth("w", "pw")]).status == 204


def test_paths_stay_under_the_root(sws):
    s = sws(server=(
        "        location /dav/ { %s alias @TMP@/store/; }\n"
        "        location /sl/ { %s disable_symlinks on; }\n" % (DAV, DAV)),
        files={"store/a": "a", "html/sl/f": "f", "outside/o": "o"})
    open_to_workers(s)
    tmp = Path(s.tmp)
    store = tmp / "store"
    os.symlink(tmp / "outside", tmp / "html" / "sl" / "link")
    # alias: the destination is mapped under the alias, and only there
    assert req(s, "COPY", "/dav/a", headers=["Destination: /dav/b"]).status == 204
    assert (store / "b").read_text() == "a"
    assert req(s, "COPY", "/dav/a", headers=["Destination: /elsewhere/b"]).status == 403
    assert req(s, "COPY", "/dav/a", headers=["Destination: /dav"]).status == 403
    # dot segments and encoded slashes in the request target
    for path in ("/dav/../x", "/dav/%2e%2e/x", "/dav/..%2fx", "/dav/%2e%2e%2fx"):
        r = raw(s, "PUT", path, body=b"x")
        assert r.status in (400, 403, 404, 405, 409, 500), (path, r)
    assert not (tmp / "x").exists() and not (tmp / "html" / "x").exists()
    # disable_symlinks: nothing written, copied or made through a link
    assert req(s, "PUT", "/sl/link/new", body=b"x").status == 403
    assert req(s, "MKCOL", "/sl/link/c/").status == 403
    assert req(s, "COPY", "/sl/f", headers=["Destination: /sl/link/f"]).status == 403
    assert req(s, "COPY", "/sl/link/o", headers=["Destination: /sl/o"]).status == 403
    assert req(s, "DELETE", "/sl/link/o").status == 403
    assert sorted(p.name for p in (tmp / "outside").iterdir()) == ["o"]
    assert not (tmp / "html" / "sl" / "o").exists()


def test_config_errors(tmp_path):
    conferr.check(tmp_path, ["invalid value", "GET"],
                  server="        location / { dav_methods PUT GET;  # ERR\n }\n")
    conferr.check(tmp_path / "b", ["invalid value", "other:rw"],
                  server="        location / { dav_access user:rw other:rw;  # ERR\n }\n")
    conferr.check(tmp_path / "c", ["invalid value", "all:w"],
                  server="        location / { dav_access all:w;  # ERR\n }\n")
    conferr.check(tmp_path / "d", ["duplicate"],
                  server="        location / { dav_methods PUT;\n"
                         "            dav_methods DELETE;  # ERR\n }\n")
    conferr.check(tmp_path / "e", ["off"],
                  server="        location / { dav_methods off PUT;  # ERR\n }\n")
    conferr.check_ok(tmp_path / "f", server=(
        "        location / { dav_methods put delete mkcol copy move; dav_access user:r all:r;\n"
        "            create_full_put_path on; min_delete_depth 3; }\n"))


def test_put_client_gone_mid_body(sws):
    """A client that leaves before its body is whole: no target, and the
    temporary file goes with the request."""
    s = dav(sws, files={"html/keep.txt": "old"})
    for path in ("/new.bin", "/keep.txt"):
        with h.Conn(s.port) as c:
            c.send(h.request("PUT", path, headers=["Content-Length: 1000000"], body=b"x" * 70000))
            assert h.wait_for(lambda: leftovers(s.root) != [], timeout=3)   # being written
    assert h.wait_for(lambda: leftovers(s.root) == [], timeout=5), leftovers(s.root)
    assert not (s.root / "new.bin").exists()
    assert (s.root / "keep.txt").read_text() == "old"
    assert req(s, "GET", "/keep.txt").body == b"old"


def test_over_http2(sws):
    """The same methods over HTTP/2 (h2c): the body streams the same way."""
    s = sws(ports=2, server="        listen 127.0.0.1:@PORT2@ http2;\n"
                            "        location / { %s }\n" % DAV)
    open_to_workers(s)
    root = Path(s.tmp) / "html"
    base = "http://127.0.0.1:%d" % s.ports[1]
    data = os.urandom(300000)
    r = h.curl(base + "/h2.bin", method="PUT", body=data, prior_knowledge=True)
    assert r.status == 201 and r.http_version == 3, r       # CURL_HTTP_VERSION_2_0
    assert r.header("location") == base + "/h2.bin", r
    assert (root / "h2.bin").read_bytes() == data
    r = h.curl(base + "/h2.bin", method="COPY", headers=["Destination: /h2b.bin"],
               prior_knowledge=True)
    assert r.status == 204 and (root / "h2b.bin").read_bytes() == data, r
    assert h.curl(base + "/c/", method="MKCOL", prior_knowledge=True).status == 201
    assert h.curl(base + "/h2.bin", method="DELETE", prior_knowledge=True).status == 204
    assert not (root / "h2.bin").exists() and leftovers(root) == []


def test_keepalive_across_methods(sws):
    """Answers without a body (201, 204) and the refused ones keep the
    connection for the next request."""
    s = dav(sws, files={"html/f": "f"})
    with h.Conn(s.port) as c:
        for method, path, hdrs, body, status in (
                ("PUT", "/k1", [], b"one", 201), ("PUT", "/k1", [], b"two", 204),
                ("MKCOL", "/kc/", [], b"", 201), ("COPY", "/k1", ["Destination: /kc/k2"], b"", 204),
                ("PUT", "/kc/", [], b"body", 409), ("DELETE", "/kc/", [], b"", 204),
                ("GET", "/k1", [], b"", 200)):
            if body:
                hdrs = hdrs + ["Content-Length: %d" % len(body)]
            c.send(h.request(method, path, headers=hdrs, body=body))
            r = c.read_response(method)
            assert r.status == status, (method, path, r)
        assert r.body == b"two"
