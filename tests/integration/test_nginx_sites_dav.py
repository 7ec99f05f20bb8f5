"""A WebDAV upload area (tests/sites/dav-site.conf) under nginx and under
scalwsd side by side: each server gets its own copy of the same document
root, the same requests go to both, and the status, the headers a client
acts on, the body and then the files on disk (names, contents, modes)
must be the same. Where scalwsd answers otherwise on purpose, the request
is left out here and tests/integration/test_dav.py covers it
(docs/compat.md says why)."""
import os
import stat
from pathlib import Path

import pytest

import swsharness as h
from test_nginx_sites import NGINX, auth, htpasswd_sha, same, site_text, start_server

FILES = {
    "site/index.html": "<p>home</p>\n",
    "site/docs/a.txt": "A\n",
    "site/docs/sub/b.txt": "B\n",
    "site/archive/2024/01/report.txt": "r\n",
    "site/archive/2024/02/old.txt": "o\n",
    "store/s.txt": "S\n",
}
HOST = "Host: dav.test"
ED = auth("editor", "s3cret")


@pytest.fixture
def dav_pair(tmp_path):
    """(nginx port, scalwsd port, nginx root, scalwsd root): the site with
    a document root of its own for each server."""
    if not os.path.exists(NGINX):
        pytest.fail("nginx is not installed: `sh auto/deps test` installs it")
    running, out = [], []
    for who in ("nginx", "scalwsd"):
        root = tmp_path / (who + "-root")
        for rel, data in FILES.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(data)
        (root / "htpasswd").write_text(htpasswd_sha("editor", "s3cret"))
        d = tmp_path / who
        (d / "body").mkdir(parents=True)
        h.make_traversable(tmp_path)
        for p in [root] + list(root.rglob("*")) + [d / "body"]:
            os.chmod(p, 0o777 if p.is_dir() else 0o666)
        port = h.free_port()
        running.append(start_server(who, d, port, site_text("dav-site.conf", PORT=port,
                                                            ROOT=root, DIR=d)))
        out += [port, root]
    yield out[0], out[2], out[1], out[3]
    for r in running:
        r.stop()
    log = (tmp_path / "scalwsd" / "error.log").read_text(errors="replace")
    assert "exited on signal" not in log, log[-2000:]


def tree(root):
    """What a client left on disk: path, kind, contents, mode."""
    out = []
    for p in sorted(root.rglob("*")):
        if p.name == "htpasswd":
            continue
        st = p.lstat()
        out.append((str(p.relative_to(root)), stat.S_IMODE(st.st_mode),
                    p.read_bytes() if p.is_file() else b"<dir>"))
    return out


def both(ports, method, path, headers=(), body=b""):
    """A request with a body (or none) to both servers; the same answer."""
    headers = [HOST] + list(headers)
    if body:
        headers.append("Content-Length: %d" % len(body))
    rs = []
    for port in ports:
        rs.append(h.exchange(port, h.request(method, path, host=None, headers=headers,
                                              body=body), method=method))
    rn, rsw = rs
    what = (method, path, headers)
    assert rsw.status == rn.status, (what, rn, rsw)
    for name in ("location", "content-type", "content-length", "www-authenticate"):
        vn, vs = rn.header(name), rsw.header(name)
        vn = vn.replace(":%d" % ports[0], ":PORT") if vn else vn
        vs = vs.replace(":%d" % ports[1], ":PORT") if vs else vs
        assert vs == vn, (what, name, rn.headers, rsw.headers)
    return rsw


def test_dav_site(dav_pair):
    pn, ps, rootn, roots = dav_pair
    ports = (pn, ps)
    # publishing: new, replaced, in new directories, refused ones
    both(ports, "PUT", "/docs/new.txt", [ED], b"new\n")
    both(ports, "PUT", "/docs/new.txt", [ED], b"newer\n")
    both(ports, "PUT", "/deep/er/page.html", [ED], b"<p>deep</p>\n")
    both(ports, "PUT", "/docs/none.txt", [], b"x")                     # 401
    both(ports, "PUT", "/docs/none.txt", [auth("editor", "no")], b"x")
    both(ports, "PUT", "/docs/", [ED], b"x")                           # 409
    both(ports, "PUT", "/docs/sub", [ED], b"x")                        # onto a directory
    both(ports, "PUT", "/docs/r.txt", [ED, "Content-Range: bytes 0-0/1"], b"x")
    both(ports, "PUT", "/docs/big.bin", [ED], os.urandom(70000))       # 413
    both(ports, "PUT", "/docs/dated.txt", [ED, "Date: Sun, 06 Nov 1994 08:49:37 GMT"], b"d")
    # preconditions are not PUT's business in nginx: taken as if absent
    both(ports, "PUT", "/docs/new.txt", [ED, 'If-Match: "nope"'], b"newest\n")
    both(ports, "PUT", "/docs/new.txt", [ED, "If-Unmodified-Since: Sun, 06 Nov 1994 08:49:37 GMT"],
         b"newest\n")
    same(ports, "GET", "/docs/new.txt", [HOST])
    # collections
    both(ports, "MKCOL", "/col/", [ED])
    both(ports, "MKCOL", "/col/", [ED])                                # 405
    both(ports, "MKCOL", "/col2", [ED])                                # 409
    both(ports, "MKCOL", "/no/col/", [ED])
    both(ports, "MKCOL", "/col3/", [ED], b"<x/>")                      # 415
    # copies and moves
    dest = "Destination: http://dav.test/"
    both(ports, "COPY", "/docs/a.txt", [ED, dest + "col/a.txt"])
    both(ports, "COPY", "/docs/a.txt", [ED, dest + "col/a.txt", "Overwrite: F"])
    both(ports, "COPY", "/docs/a.txt", [ED, "Destination: /col/a2.txt", "Overwrite: t"])
    both(ports, "COPY", "/docs/", [ED, dest + "copy/"])
    both(ports, "COPY", "/docs", [ED, dest + "copy2"])
    both(ports, "COPY", "/docs/", [ED, dest + "copy3"])
    both(ports, "MOVE", "/copy/", [ED, dest + "moved/"])
    both(ports, "MOVE", "/col/a2.txt", [ED, dest + "made/for/it.txt"])
    both(ports, "MOVE", "/moved/", [ED, dest + "m2/", "Depth: 0"])
    both(ports, "MOVE", "/nothing", [ED, dest + "x"])
    # bad input
    for hdrs in ([], ["Destination: http://other.test/x"], ["Destination: https://dav.test/x"],
                 ["Destination: x"], ["Destination: http://dav.test/../x"],
                 ["Destination: /%2e%2e/x"], ["Destination: /x", "Overwrite: maybe"],
                 ["Destination: /x", "Depth: 1"], ["Destination: /x", "Depth: infinite"]):
        both(ports, "COPY", "/docs/a.txt", [ED] + hdrs)
    both(ports, "COPY", "/docs/a.txt", [ED, "Destination: /x"], b"body")
    # deletions
    both(ports, "DELETE", "/docs/new.txt", [ED])
    both(ports, "DELETE", "/docs/new.txt", [ED])                       # 404
    both(ports, "DELETE", "/docs/sub", [ED])                           # 409
    both(ports, "DELETE", "/docs/sub/", [ED, "Depth: 1"])              # 400
    both(ports, "DELETE", "/docs/a.txt", [ED, "Depth: 1"])
    both(ports, "DELETE", "/docs/a.txt", [ED], b"x")                   # 415
    both(ports, "DELETE", "/docs/a.txt/", [ED])                        # ENOTDIR: 409
    both(ports, "DELETE", "/docs/a.txt/x", [ED])
    both(ports, "PUT", "/docs/a.txt/x", [ED], b"x")                    # 500
    both(ports, "MKCOL", "/docs/a.txt/c/", [ED])
    both(ports, "DELETE", "/moved/", [ED, "Depth: infinity"])
    both(ports, "DELETE", "/m2/", [ED])
    # the drop box: PUT only
    both(ports, "PUT", "/drop/up.txt", [], b"up\n")
    for m, hdrs in (("DELETE", []), ("MKCOL", []), ("COPY", ["Destination: /drop/c"]),
                    ("MOVE", ["Destination: /drop/c"])):
        both(ports, m, "/drop/up.txt" if m != "MKCOL" else "/drop/c/", hdrs)
    # the archive: min_delete_depth, methods not enabled there
    both(ports, "DELETE", "/archive/2024/")
    both(ports, "DELETE", "/archive/2024/02/")
    both(ports, "DELETE", "/archive/2024/01/report.txt")
    both(ports, "PUT", "/archive/x.txt", [], b"x")                     # 405
    both(ports, "MKCOL", "/archive/2025/")
    both(ports, "COPY", "/archive/2025/", ["Destination: /archive/2026/"])
    # alias: the destination under the alias
    both(ports, "COPY", "/files/s.txt", ["Destination: /files/t.txt"])
    both(ports, "PUT", "/files/u.txt", [], b"u")
    both(ports, "MOVE", "/files/u.txt", ["Destination: /files/v.txt"])
    same(ports, "GET", "/files/v.txt", [HOST])
    tn, ts = tree(rootn), tree(roots)
    assert ts == tn, "\n".join("%r %r" % x for x in zip(tn, ts) if x[0] != x[1])
