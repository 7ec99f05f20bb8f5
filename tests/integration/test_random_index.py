"""random_index: a URI ending in '/' goes (an internal redirect, the query
kept) to one of the directory's regular files (or links to one), at
random; dot files, directories and dangling links are never chosen; a directory without a
file is declined. Compared with nginx in test_nginx_sites_smallmods.py."""
import conferr
import swsharness as h

FILES = {
    "html/r/a.pick": "a", "html/r/b.pick": "b", "html/r/c.pick": "c",
    "html/r/.dot.pick": "dot", "html/r/sub/d.pick": "d",
    "html/empty/.keep": "", "html/listed/.keep": "",
    "html/one/only.txt": "only\n",
    "html/file.txt": "file\n",
}
SERVER = ("        location /r/ { random_index on; }\n"
          "        location ~ \\.pick$ { return 200 \"$uri|$args\"; }\n"
          "        location /empty/ { random_index on; }\n"
          "        location /listed/ { random_index on; autoindex on; }\n"
          "        location /one/ { random_index on; }\n"
          "        location /off/ { alias @TMP@/html/one/; }\n"
          "        location / { random_index on; }\n")


def test_a_random_file_through_an_internal_redirect(sws, tmp_path):
    s = sws(server=SERVER, files=FILES)
    (tmp_path / "html" / "r" / "link.pick").symlink_to(tmp_path / "html" / "r" / "a.pick")
    (tmp_path / "html" / "r" / "dirlink").symlink_to(tmp_path / "html" / "r" / "sub")
    (tmp_path / "html" / "r" / "dangling.pick").symlink_to(tmp_path / "none")
    seen = set()
    for i in range(40):
        r = h.curl(s.url("/r/?q=%d" % i))
        assert r.status == 200, r
        uri, args = r.body.decode().split("|")
        assert uri in ("/r/a.pick", "/r/b.pick", "/r/c.pick", "/r/link.pick"), r
        assert args == "q=%d" % i, r
        seen.add(uri)
    assert len(seen) > 1, seen                  # 3 * (1/3)^40 if it were not random
    r = h.curl(s.url("/one/"))
    assert (r.status, r.body) == (200, b"only\n"), r
    assert h.curl(s.url("/one/"), method="HEAD").header("Content-Length") == "5"
    # the chosen file refuses POST itself, as nginx's static handler does
    assert h.curl(s.url("/one/"), method="POST", body=b"x").status == 405
    assert h.curl(s.url("/off/")).status == 403          # off: the index handler's


def test_no_file_to_choose(sws):
    s = sws(server=SERVER, files=FILES)
    assert h.curl(s.url("/empty/")).status == 403         # declined: no index, no listing
    r = h.curl(s.url("/listed/"))
    assert r.status == 200 and b"Index of /listed/" in r.body and b".keep" not in r.body, r
    assert h.curl(s.url("/missing/")).status == 404
    assert h.curl(s.url("/file.txt/")).status == 404      # not a directory
    assert h.curl(s.url("/one")).status == 301


def test_it_stays_under_the_root(sws, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    s = sws(server=SERVER, files=FILES)
    for target in ("/../outside/", "/%2e%2e/outside/", "/r/../../outside/",
                   "/r/%2E%2E/%2E%2E/outside/"):
        r = h.exchange(s.port, h.request("GET", target))
        assert r is not None and b"secret" not in r.body, (target, r)
        assert r.status in (400, 404), (target, r)


def test_random_index_directive_errors(tmp_path):
    conferr.check(tmp_path / "a", ["it must be \"on\" or \"off\""],
                  server="        location /r/ { random_index yes;  # ERR\n }\n")
    conferr.check(tmp_path / "b", ["not allowed"], server="        random_index on;  # ERR\n")
    conferr.check(tmp_path / "c", ["is duplicate"],
                  server="        location /r/ { random_index on;\n random_index off;  # ERR\n }\n")
    conferr.check_ok(tmp_path / "d", server="        location /r/ { random_index on; }\n")

