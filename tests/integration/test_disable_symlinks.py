"""disable_symlinks off|on|if_not_owner [from=PART]: each path component
opened with openat(O_NOFOLLOW), for the static handler, index, try_files and
alias, with the open file cache on (the default) and off. A link that is
refused answers 403 (as nginx), in try_files the next alternative is tried.
"""
import os
import shutil

import pytest

import conferr
import swsharness as h

CACHES = {"cache": "", "nocache": "open_file_cache off;"}


def tree(tmp):
    """html/ (the root) with links in and out of it; outside/ beside it."""
    html = tmp / "html"
    out = tmp / "outside"
    (html / "sub").mkdir(parents=True, exist_ok=True)
    out.mkdir(exist_ok=True)
    (html / "a.txt").write_text("A\n")
    (html / "index.html").write_text("INDEX\n")
    (html / "sub" / "b.txt").write_text("B\n")
    (html / "sub" / "index.html").write_text("SUBINDEX\n")
    (out / "secret.txt").write_text("SECRET\n")
    (out / "index.html").write_text("OUTINDEX\n")
    os.symlink("a.txt", html / "in_file")                   # to a file inside
    os.symlink("sub", html / "in_dir")                      # to a directory inside
    os.symlink("../outside/secret.txt", html / "out_file")  # to a file outside
    os.symlink(str(out), html / "out_dir")                  # to a directory outside
    os.symlink("../../outside/secret.txt", html / "sub" / "deep_out")
    os.symlink("missing", html / "dangling")
    h.make_traversable(out)
    for p in (html, html / "sub", out):
        os.chmod(p, 0o755)


def start(sws, tmp_path, http="", server=""):
    tree(tmp_path)
    return sws(http=http, server=server)


def status(srv, path):
    r = h.exchange(srv.port, h.request("GET", path))
    return r.status, r.body


# (path, status with off, status with on)
MATRIX = [
    ("/a.txt", 200, 200),
    ("/sub/b.txt", 200, 200),
    ("/sub/", 200, 200),
    ("/in_file", 200, 403),
    ("/in_dir/b.txt", 200, 403),
    ("/in_dir/", 200, 403),
    ("/out_file", 200, 403),
    ("/out_dir/secret.txt", 200, 403),
    ("/out_dir/", 200, 403),
    ("/sub/deep_out", 200, 403),
    ("/dangling", 404, 403),
    ("/missing", 404, 404),
    ("/a.txt/x", 404, 404),            # a file used as a directory: ENOTDIR
]


@pytest.mark.parametrize("cache", sorted(CACHES))
def test_off_follows_links_as_nginx(sws, tmp_path, cache):
    srv = start(sws, tmp_path, http=CACHES[cache])
    for path, want, _ in MATRIX:
        assert status(srv, path)[0] == want, path
    assert status(srv, "/out_file")[1] == b"SECRET\n"


@pytest.mark.parametrize("cache", sorted(CACHES))
def test_on_refuses_every_link(sws, tmp_path, cache):
    srv = start(sws, tmp_path, http=CACHES[cache] + "disable_symlinks on;")
    for path, _, want in MATRIX:
        st, body = status(srv, path)
        assert st == want, path
        assert b"SECRET" not in body and b"OUTINDEX" not in body
    # twice: a cached entry answers the same
    for path, _, want in MATRIX:
        assert status(srv, path)[0] == want, path
    assert "out_file\" failed: Too many levels of symbolic links" in srv.error_log()


def test_directory_link_without_slash(sws, tmp_path):
    srv = start(sws, tmp_path, http="disable_symlinks on;")
    assert status(srv, "/sub")[0] == 301
    assert status(srv, "/in_dir")[0] == 403
    assert status(srv, "/out_dir")[0] == 403


@pytest.mark.parametrize("cache", sorted(CACHES))
def test_if_not_owner(sws, tmp_path, cache):
    srv = start(sws, tmp_path, http=CACHES[cache] + "disable_symlinks if_not_owner;")
    # links and targets all belong to the test's user: followed
    assert status(srv, "/out_file") == (200, b"SECRET\n")
    assert status(srv, "/in_dir/b.txt") == (200, b"B\n")
    assert status(srv, "/dangling")[0] == 404
    if os.geteuid() != 0:
        pytest.skip("changing a link's owner needs root")
    # a link owned by someone else than its target: refused
    os.lchown(tmp_path / "html" / "sub" / "deep_out", 65534, 65534)
    os.symlink("a.txt", tmp_path / "html" / "other_owner")
    os.lchown(tmp_path / "html" / "other_owner", 65534, 65534)
    os.symlink(str(tmp_path / "outside"), tmp_path / "html" / "other_dir")
    os.lchown(tmp_path / "html" / "other_dir", 65534, 65534)
    assert status(srv, "/sub/deep_out")[0] == 403
    assert status(srv, "/other_owner")[0] == 403
    assert status(srv, "/other_dir/secret.txt")[0] == 403
    assert status(srv, "/a.txt")[0] == 200


def linked_root(tmp_path):
    """The root reached through a link: real/html, and link -> real."""
    real = tmp_path / "real"
    real.mkdir()
    tree(real)
    os.symlink(str(real), tmp_path / "link")
    h.make_traversable(real)
    os.chmod(real, 0o755)
    return tmp_path / "link" / "html"


@pytest.mark.parametrize("cache", sorted(CACHES))
def test_from_document_root(sws, tmp_path, cache):
    root = linked_root(tmp_path)
    srv = sws(http=CACHES[cache], server="""
        location /whole/ { alias %s/; disable_symlinks on; }
        location / { root %s; disable_symlinks on from=$document_root; }
        location /const/ { alias %s/; disable_symlinks on from=%s; }
    """ % (root, root, root, root))
    # the link above the root is allowed by from=, those below are not
    assert status(srv, "/a.txt") == (200, b"A\n")
    assert status(srv, "/out_file")[0] == 403
    assert status(srv, "/in_dir/b.txt")[0] == 403
    assert status(srv, "/const/sub/b.txt") == (200, b"B\n")
    assert status(srv, "/const/out_dir/secret.txt")[0] == 403
    # without from=, the link to the root itself is refused
    assert status(srv, "/whole/a.txt")[0] == 403


def test_from_outside_the_path_checks_everything(sws, tmp_path):
    root = linked_root(tmp_path)
    srv = sws(server="location / { root %s; disable_symlinks on from=/nonexistent/x; }"
              % root)
    assert status(srv, "/a.txt")[0] == 403


def test_try_files_skips_refused_links(sws, tmp_path):
    srv = start(sws, tmp_path, http="disable_symlinks on;", server="""
        location /t/ { try_files /out_file /in_file /a.txt =404; }
        location /d/ { try_files /out_dir/ /sub/ =404; }
        location /n/ { try_files /out_file =418; }
    """)
    assert status(srv, "/t/x") == (200, b"A\n")
    assert status(srv, "/n/x")[0] == 418
    r = h.exchange(srv.port, h.request("GET", "/d/x"))
    # not /out_dir/ (and absolute: absolute_redirect)
    assert r.status == 301 and r.header("Location") == "http://localhost:%d/sub/" % srv.port


def test_index_through_a_link_is_refused(sws, tmp_path):
    (tmp_path / "html" / "ix").mkdir(parents=True)
    srv = start(sws, tmp_path, http="disable_symlinks on;", server="""
        location /ix/ { index link.html index.html; }
    """)
    os.symlink("../../outside/index.html", tmp_path / "html" / "ix" / "link.html")
    (tmp_path / "html" / "ix" / "index.html").write_text("IX\n")
    st, body = status(srv, "/ix/")
    assert st == 403 and b"OUTINDEX" not in body


def test_alias(sws, tmp_path):
    srv = start(sws, tmp_path, server="""
        location /al/ { alias %s/html/; disable_symlinks on; }
        location /alo/ { alias %s/html/; }
    """ % (tmp_path, tmp_path))
    assert status(srv, "/al/a.txt") == (200, b"A\n")
    assert status(srv, "/al/out_file")[0] == 403
    assert status(srv, "/al/out_dir/secret.txt")[0] == 403
    assert status(srv, "/alo/out_file") == (200, b"SECRET\n")


def test_cache_shared_by_rules(sws, tmp_path):
    """One file, two locations with different rules: the cache keeps them
    apart (one's entry never answers for the other)."""
    srv = start(sws, tmp_path, server="""
        location /off/ { alias %s/html/; }
        location / { disable_symlinks on; }
    """ % tmp_path)
    for _ in range(3):
        assert status(srv, "/off/out_file") == (200, b"SECRET\n")
        assert status(srv, "/out_file")[0] == 403
        assert status(srv, "/off/in_dir/b.txt")[0] == 200
        assert status(srv, "/in_dir/b.txt")[0] == 403


def test_cache_sees_a_directory_replaced_by_a_link(sws, tmp_path):
    srv = start(sws, tmp_path, http="disable_symlinks on; open_file_cache_valid 100ms;")
    assert status(srv, "/sub/b.txt") == (200, b"B\n")
    html = tmp_path / "html"
    os.rename(html / "sub", html / "sub2")
    os.symlink("sub2", html / "sub")
    assert h.wait_for(lambda: status(srv, "/sub/b.txt")[0] == 403, 5)
    # and back
    os.unlink(html / "sub")
    os.rename(html / "sub2", html / "sub")
    assert h.wait_for(lambda: status(srv, "/sub/b.txt")[0] == 200, 5)


def test_levels(sws, tmp_path):
    srv = start(sws, tmp_path, http="disable_symlinks on;", server="""
        location /free/ { alias %s/html/; disable_symlinks off; }
    """ % tmp_path)
    assert status(srv, "/out_file")[0] == 403
    assert status(srv, "/free/out_file")[0] == 200


def test_config_errors(tmp_path):
    cases = [
        ("disable_symlinks maybe;", ["invalid value", "maybe"]),
        ("disable_symlinks on to=/x;", ["invalid parameter", "to=/x"]),
        ("disable_symlinks on from=relative;", ["invalid parameter"]),
        ("disable_symlinks on from=$uri;", ["invalid parameter"]),
        ("disable_symlinks on from=;", ["invalid parameter"]),
        ("disable_symlinks off from=/x;", ["from="]),
        ("disable_symlinks on; disable_symlinks off;", ["duplicate"]),
        ("disable_symlinks on from=/a extra;", ["disable_symlinks"]),
    ]
    for i, (d, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server="        %s  # ERR\n" % d)
    conferr.check_ok(tmp_path / "ok", server="disable_symlinks if_not_owner from=/srv;")


@pytest.mark.parametrize("name", ["scalws.conf", "scalws.yaml"])
def test_default_configuration_refuses_links_out_of_root(tmp_path, name):
    """The issue's case: conf/scalws.conf as shipped, a link in the document
    root to a file outside it: not served."""
    repo = h.SRC
    shutil.copytree(os.path.join(repo, "conf"), tmp_path / "conf")
    shutil.copytree(os.path.join(repo, "html"), tmp_path / "html")
    (tmp_path / "logs").mkdir()
    (tmp_path / "secret.txt").write_text("SECRET\n")
    os.symlink(str(tmp_path / "secret.txt"), tmp_path / "html" / "leak.txt")
    h.make_traversable(tmp_path / "html")
    port = h.free_port()
    text = (tmp_path / "conf" / name).read_text()
    assert "8080" in text
    text = (text.replace("8080", "127.0.0.1:%d" % port)
            .replace("worker_processes auto", "worker_processes 1")
            .replace("worker_processes: auto", "worker_processes: 1"))
    if name.endswith(".yaml"):
        text = "modules_dir: %s\ndaemon: off\n" % h.MODULES + text
    else:
        text = "modules_dir %s;\ndaemon off;\n" % h.MODULES + text
    srv = h.Server(tmp_path, text, [port], conf_name="conf/" + name)
    try:
        srv.start()
        r = h.exchange(port, h.request("GET", "/leak.txt"))
        assert r.status == 403 and b"SECRET" not in r.body
        assert h.exchange(port, h.request("GET", "/")).status == 200
    finally:
        srv.stop()
