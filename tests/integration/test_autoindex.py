"""autoindex: listings in HTML, JSON and XML, names escaped, directories
first, the redirect of a directory without its slash, index files first,
403 with autoindex off, sizes and times."""
import calendar
import html.parser
import json
import os
import time
import urllib.parse
import xml.etree.ElementTree as ET

import conferr
import swsharness as h

MTIME = calendar.timegm((2024, 2, 29, 13, 45, 30))      # 29-Feb-2024 13:45:30 GMT
ODD = ["a<b>.txt", "amp&.txt", 'quote".txt', "apos'.txt", "sp ace.txt",
       "caf\u00e9 \u65e5\u672c.txt", "ctl\x01\x1f.txt", "pct%41.txt", "q?x#y.txt"]


def make_tree(tmp):
    d = tmp / "html" / "list"
    (d / "zdir").mkdir(parents=True)
    (d / "adir").mkdir()
    (d / ".hidden").write_text("h")
    (d / "b.txt").write_bytes(b"x" * 10)
    (d / "big.bin").write_bytes(b"\0" * 12345)
    (d / ("n" * 60 + ".txt")).write_text("long")
    (d / "empty").mkdir()
    for name in ODD:
        (d / name).write_text(name)
    for p in d.iterdir():
        os.utime(p, (MTIME, MTIME))
    (tmp / "html" / "withindex").mkdir()
    (tmp / "html" / "withindex" / "index.html").write_text("INDEX\n")
    (tmp / "html" / "withindex" / "other.txt").write_text("o")
    h.make_traversable(tmp / "html")
    for p in [d, d / "zdir", d / "adir", d / "empty", tmp / "html" / "withindex"]:
        os.chmod(p, 0o755)
    return d


def start(sws, tmp_path, server="autoindex on;", **kw):
    make_tree(tmp_path)
    return sws(server=server, **kw)


def get(srv, path, method="GET"):
    return h.exchange(srv.port, h.request(method, path), method=method)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.texts, self._in = [], [], False

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.links.append(dict(attrs)["href"])
            self._in = True
            self.texts.append("")

    def handle_endtag(self, tag):
        self._in = False if tag == "a" else self._in

    def handle_data(self, data):
        if self._in:
            self.texts[-1] += data


def test_html_listing(sws, tmp_path):
    srv = start(sws, tmp_path)
    r = get(srv, "/list/")
    assert r.status == 200 and r.header("Content-Type") == "text/html"
    body = r.body.decode("utf-8")
    assert body.startswith("<html>\r\n<head><title>Index of /list/</title></head>\r\n"
                           "<body>\r\n<h1>Index of /list/</h1><hr><pre>"
                           '<a href="../">../</a>\r\n')
    assert body.endswith("</pre><hr></body>\r\n</html>\r\n")
    p = Links()
    p.feed(body)
    names = [urllib.parse.unquote(x) for x in p.links[1:]]
    # directories first, then files, each by name (bytes); no dot files
    assert names[:3] == ["adir/", "empty/", "zdir/"]
    files = sorted([x.name for x in (tmp_path / "html" / "list").iterdir()
                    if not x.is_dir() and not x.name.startswith(".")],
                   key=lambda s: s.encode())
    assert names[3:] == files
    # every link leads to the file
    for link, name in zip(p.links[4:], files):
        rr = get(srv, "/list/" + link)
        assert rr.status == 200 and rr.body == (tmp_path / "html" / "list" / name).read_bytes()
    # each line: name column of 50, date, size right-aligned in 19
    line = [ln for ln in body.split("\r\n") if 'href="b.txt"' in ln][0]
    assert line == '<a href="b.txt">b.txt</a>' + " " * 45 + " 29-Feb-2024 13:45 " + " " * 17 + "10"
    line = [ln for ln in body.split("\r\n") if 'href="adir/"' in ln][0]
    assert line == '<a href="adir/">adir/</a>' + " " * 45 + " 29-Feb-2024 13:45 " + " " * 18 + "-"


def test_html_escaping(sws, tmp_path):
    srv = start(sws, tmp_path)
    body = get(srv, "/list/").body.decode("utf-8")
    assert "a&lt;b&gt;.txt" in body and "amp&amp;.txt" in body
    assert "quote&quot;.txt" in body and "apos&#39;.txt" in body
    assert "caf\u00e9 \u65e5\u672c.txt" in body               # UTF-8 as it is
    assert "ctl??.txt" in body and "\x01" not in body         # control bytes shown as ?
    p = Links()
    p.feed(body)
    hrefs = [urllib.parse.unquote(x) for x in p.links]
    for name in ODD:
        assert name in hrefs, name                           # the link keeps the exact name
    for x in p.links:
        assert not set(x) & set(' "<>\'&?#'), x               # all escaped in the link


def test_html_long_names_cut(sws, tmp_path):
    srv = start(sws, tmp_path)
    body = get(srv, "/list/").body.decode("utf-8")
    line = [ln for ln in body.split("\r\n") if "nnnnn" in ln][0]
    assert ">" + "n" * 47 + "..&gt;</a> 29-Feb-2024" in line


def test_html_sizes_not_exact(sws, tmp_path):
    srv = start(sws, tmp_path, server="autoindex on; autoindex_exact_size off;")
    body = get(srv, "/list/").body.decode("utf-8")
    lines = {ln.split('"')[1]: ln for ln in body.split("\r\n") if ln.startswith("<a href")}
    assert lines["big.bin"].endswith("13:45     12K")          # 12345 / 1024 = 12.06
    assert lines["b.txt"].endswith("13:45      10")
    assert lines["adir/"].endswith("13:45       -")


def test_localtime(sws, tmp_path, monkeypatch):
    # a zone with no tzdata needed: UTC+5:30
    monkeypatch.setenv("TZ", "XST-5:30")
    srv = start(sws, tmp_path, server="""
        location /gmt/ { alias %s/html/list/; autoindex on; }
        location /list/ { autoindex on; autoindex_localtime on; }
    """ % tmp_path)
    assert "29-Feb-2024 19:15 " in get(srv, "/list/").body.decode("utf-8")
    assert "29-Feb-2024 13:45 " in get(srv, "/gmt/").body.decode("utf-8")


def test_json(sws, tmp_path):
    srv = start(sws, tmp_path, server="autoindex on; autoindex_format json;")
    r = get(srv, "/list/")
    assert r.status == 200 and r.header("Content-Type") == "application/json"
    items = json.loads(r.body.decode("utf-8"))
    assert [i["name"] for i in items[:3]] == ["adir", "empty", "zdir"]
    assert all(i["type"] == "directory" and "size" not in i for i in items[:3])
    byname = {i["name"]: i for i in items}
    assert byname["b.txt"] == {"name": "b.txt", "type": "file",
                               "mtime": "Thu, 29 Feb 2024 13:45:30 GMT", "size": 10}
    for name in ODD:
        assert byname[name]["type"] == "file", name         # exact, control bytes too
    assert b"\\u0001\\u001f" in r.body
    assert ".hidden" not in byname


def test_xml(sws, tmp_path):
    srv = start(sws, tmp_path, server="autoindex on; autoindex_format xml;")
    r = get(srv, "/list/")
    assert r.status == 200 and r.header("Content-Type") == "text/xml"
    root = ET.fromstring(r.body)
    assert root.tag == "list"
    assert [e.text for e in root[:3]] == ["adir", "empty", "zdir"]
    byname = {e.text: e for e in root}
    assert byname["b.txt"].tag == "file" and byname["b.txt"].get("size") == "10"
    assert byname["b.txt"].get("mtime") == "2024-02-29T13:45:30Z"
    for name in ODD:
        if "\x01" not in name:
            assert byname[name].tag == "file", name
    assert "ctl??.txt" in byname


def test_empty_directory(sws, tmp_path):
    srv = start(sws, tmp_path, server="autoindex on; autoindex_format json;")
    assert json.loads(get(srv, "/list/empty/").body) == []


def test_redirect_without_slash(sws, tmp_path):
    srv = start(sws, tmp_path)
    r = get(srv, "/list/adir")
    # made absolute (absolute_redirect), as nginx
    assert r.status == 301 and r.header("Location") == "http://localhost:%d/list/adir/" % srv.port
    r = get(srv, "/list/sp%20ace.txt")
    assert r.status == 200


def test_index_file_first_and_off(sws, tmp_path):
    srv = start(sws, tmp_path, server="""
        location /withindex/ { autoindex on; }
        location /list/ { }
    """)
    assert get(srv, "/withindex/").body == b"INDEX\n"
    r = get(srv, "/list/")                      # autoindex off (the default): 403
    assert r.status == 403
    assert "directory index of" in srv.error_log()
    assert get(srv, "/list/nothere/").status == 404


def test_methods_and_head(sws, tmp_path):
    srv = start(sws, tmp_path)
    r = get(srv, "/list/", "HEAD")
    assert r.status == 200 and r.body == b"" and int(r.header("Content-Length")) > 100
    assert get(srv, "/list/", "DELETE").status in (403, 405)


def test_disable_symlinks_applies(sws, tmp_path):
    srv = start(sws, tmp_path, server="autoindex on; disable_symlinks on;")
    os.symlink(str(tmp_path / "html" / "list"), tmp_path / "html" / "linked")
    assert get(srv, "/linked/").status == 403
    assert get(srv, "/list/").status == 200


def test_http2(sws, tmp_path):
    srv = start(sws, tmp_path, ports=2, servers="""
    server {
        listen 127.0.0.1:@PORT2@ http2;
        root @TMP@/html;
        autoindex on;
        autoindex_format json;
    }""")
    r = h.curl("http://127.0.0.1:%d/list/" % srv.ports[1], prior_knowledge=True)
    assert r.status == 200 and r.http_version == 3
    assert json.loads(r.body)[0]["name"] == "adir"


def test_config_errors(tmp_path):
    cases = [
        ("autoindex maybe;", ["autoindex"]),
        ("autoindex_format yaml;", ["invalid value", "yaml"]),
        ("autoindex_exact_size 1;", ["autoindex_exact_size"]),
        ("autoindex_localtime on off;", ["autoindex_localtime"]),
        ("autoindex on; autoindex off;", ["duplicate"]),
    ]
    for i, (d, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server="        %s  # ERR\n" % d)
    conferr.check_ok(tmp_path / "ok", http="autoindex on; autoindex_format xml;")
