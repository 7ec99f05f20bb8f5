"""A location types a response by its file extension (types, default_type);
a worker remembers the last extension it typed in a location, so requests
for other extensions in turn, in several letter cases, an unknown one and
none at all must each still get their own type, in one worker over one
keep-alive connection."""
import swsharness as h

FILES = {"html/" + n: "x\n" for n in
         ("a.txt", "b.html", "c.txt", "d.TXT", "e", "f.nosuchtype", "g.css",
          "h.verylongextension", "i.verylongextensiox", "j.html")}

EXPECT = [
    ("/a.txt", "text/plain"),
    ("/b.html", "text/html"),
    ("/c.txt", "text/plain"),
    ("/d.TXT", "text/plain"),
    ("/e", "application/x-test-default"),
    ("/f.nosuchtype", "application/x-test-default"),
    ("/a.txt", "text/plain"),
    ("/h.verylongextension", "application/x-long-one"),
    ("/i.verylongextensiox", "application/x-test-default"),
    ("/h.verylongextension", "application/x-long-one"),
    ("/g.css", "text/css"),
    ("/other/j.html", "text/x-other"),
    ("/b.html", "text/html"),
    ("/other/j.html", "text/x-other"),
]


def check_types(srv, expect):
    """The requests of expect in turn on one keep-alive connection (one
    worker), each answered 200 with its Content-Type."""
    c = h.Conn(srv.port)
    try:
        for path, ctype in expect:
            c.send(h.request("GET", path))
            resp = c.read_response()
            assert resp.status == 200, (path, resp.status)
            assert resp.header("content-type").split(";")[0] == ctype, (path, resp.headers)
    finally:
        c.close()


def test_each_extension_its_own_type(sws):
    srv = sws(files=dict(FILES, **{"html/other/j.html": "y\n"}),
              server="    types { text/plain txt; text/html html; text/css css;\n"
                     "            application/x-long-one verylongextension; }\n"
                     "    default_type application/x-test-default;\n"
                     "    location /other/ { types { text/x-other html; } }\n")
    check_types(srv, EXPECT)


# Extensions of every length the worker's memo keeps (1 to 8 bytes, as one
# word) and one past it, in turns that differ in one byte or in order only.
SHORT = [
    ("/k.js", "application/x-js"),
    ("/l.sj", "application/x-sj"),
    ("/m.c", "text/x-c"),
    ("/n.h", "text/x-h"),
    ("/m.c", "text/x-c"),
    ("/o.abc", "application/x-abc"),
    ("/p.axc", "application/x-axc"),
    ("/q.woff", "font/woff"),
    ("/r.woff2", "font/woff2"),
    ("/s.woff3", "application/x-test-default"),
    ("/t.abcdefgh", "application/x-eight"),
    ("/u.abcdefgx", "application/x-eight-x"),
    ("/v.xbcdefgh", "application/x-test-default"),
    ("/t.abcdefgh", "application/x-eight"),
    ("/w.abcdefghi", "application/x-nine"),
    ("/t.abcdefgh", "application/x-eight"),
    ("/k.js", "application/x-js"),
]


def test_short_and_eight_byte_extensions(sws):
    files = {"html" + path: "x\n" for path, _ in SHORT}
    srv = sws(files=files,
              server="    types { application/x-js js; application/x-sj sj; text/x-c c;\n"
                     "            text/x-h h; application/x-abc abc; application/x-axc axc;\n"
                     "            font/woff woff; font/woff2 woff2;\n"
                     "            application/x-eight abcdefgh; application/x-eight-x abcdefgx;\n"
                     "            application/x-nine abcdefghi; }\n"
                     "    default_type application/x-test-default;\n")
    check_types(srv, SHORT)
