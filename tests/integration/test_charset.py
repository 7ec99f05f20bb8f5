"""The charset module: "; charset=NAME" on the Content-Type of the
charset_types (text/html always), never on one that names a charset
already nor on 301/302, off per location or in an if; configuration
errors."""
import pytest

import conferr
import swsharness as h
from proxyorigin import Origin

FILES = {
    "html/a.html": b"<p>x</p>\n",
    "html/a.json": b"{}\n",
    "html/a.png": b"\x89PNG\r\n",
    "html/a.txt": b"text\n",
}


@pytest.fixture(scope="module")
def srv(sws_module):
    o = Origin("csorigin")
    s = sws_module(files=FILES, server="""
        charset utf-8;
        location = /ret { return 200 "text"; }
        location = /ret.txt { return 200 "text"; }
        location = /ret404 { return 404; }
        location = /r301 { return 301 /x; }
        location = /r307 { return 307 /x; }
        location /json/ { charset_types application/json; alias @TMP@/html/; }
        location /any/ { charset_types *; alias @TMP@/html/; }
        location /off/ { charset off; alias @TMP@/html/; }
        location /koi/ { charset koi8-r; source_charset KOI8-R; alias @TMP@/html/; }
        location /iff/ { if ($arg_cs) { charset iso-8859-1; } alias @TMP@/html/; }
        location /p/ { proxy_pass http://%s/; }
    """ % o.addr)
    yield s
    o.stop()


def ctype(srv, path, method="GET"):
    r = h.curl(srv.url(path), method=method)
    return r.status, r.header("Content-Type")


@pytest.mark.parametrize("path,status,expected", [
    ("/a.html", 200, "text/html; charset=utf-8"),
    ("/a.txt", 200, "text/plain; charset=utf-8"),
    ("/a.json", 200, "application/json"),              # not a charset type
    ("/a.png", 200, "image/png"),
    ("/ret", 200, "application/octet-stream"),         # return's default_type: not text
    ("/ret.txt", 200, "text/plain; charset=utf-8"),    # typed by its extension
    ("/ret404", 404, "text/html; charset=utf-8"),      # the error page
    ("/r307", 307, "text/html; charset=utf-8"),
    ("/missing", 404, "text/html; charset=utf-8"),
    ("/json/a.json", 200, "application/json; charset=utf-8"),
    ("/any/a.png", 200, "image/png; charset=utf-8"),
    ("/off/a.html", 200, "text/html"),
    ("/koi/a.html", 200, "text/html; charset=koi8-r"),  # source = charset: no recoding
    ("/iff/a.html?cs=1", 200, "text/html; charset=iso-8859-1"),
    ("/iff/a.html", 200, "text/html; charset=utf-8"),
    ("/p/text/5?type=text/html", 200, "text/html; charset=utf-8"),
    ("/p/text/5?type=text/html;%20charset=windows-1251", 200,
     "text/html; charset=windows-1251"),                # the upstream's stays
    ("/p/text/5?type=text/plain;%20CHARSET=latin1", 200, "text/plain; CHARSET=latin1"),
])
def test_content_type(srv, path, status, expected):
    assert ctype(srv, path) == (status, expected)


def test_no_charset_on_301_and_302(srv):
    # as nginx: a redirect's charset was taken for the next page's
    r = h.curl(srv.url("/r301"))
    assert r.status == 301
    assert "charset" not in (r.header("Content-Type") or ""), r


def test_method_not_allowed_page(srv):
    assert ctype(srv, "/a.html", method="POST") == (405, "text/html; charset=utf-8")


@pytest.mark.parametrize("line,words", [
    ("charset utf 8;", ["invalid number of arguments"]),
    ('charset "utf 8";', ["invalid charset name"]),
    ("charset utf-8; charset koi8-r;", ["is duplicate"]),
    ("charset_types text/css; charset_types text/xml;", ["is duplicate"]),
])
def test_configuration_errors(tmp_path, line, words):
    conferr.check(tmp_path, words, server="        %s  # ERR\n" % line)


def test_source_charset_without_recoding_is_refused(tmp_path):
    (tmp_path / "html").mkdir()
    h.make_traversable(tmp_path)
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()],
                             server="        charset utf-8; source_charset koi8-r;\n"))
    r = h.run_scalwsd(["-t", "-p", str(tmp_path) + "/", "-c", str(conf)])
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0 and "no recoding" in err and "koi8-r" in err, err
    assert str(conf) in err, err
