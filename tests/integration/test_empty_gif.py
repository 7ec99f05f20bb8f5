"""empty_gif: a transparent 1x1 GIF, GET and HEAD only, nginx's fixed
Last-Modified (so 304 to a conditional request)."""
import struct

import conferr
import swsharness as h


def test_empty_gif(sws):
    s = sws(server="        location = /p.gif { empty_gif; }\n")
    r = h.curl(s.url("/p.gif"))
    assert r.status == 200 and r.header("Content-Type") == "image/gif", r
    b = r.body
    assert len(b) == 43 and b[:6] == b"GIF89a" and b[-1:] == b";", b
    assert struct.unpack("<HH", b[6:10]) == (1, 1)               # 1 x 1
    gce = b.index(b"\x21\xf9\x04")
    assert b[gce + 3] & 1 == 1                                     # transparent
    assert r.header("Last-Modified") == "Mon, 28 Sep 1970 06:00:00 GMT", r
    r = h.curl(s.url("/p.gif"), method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "43", r
    r = h.curl(s.url("/p.gif"), headers=["If-Modified-Since: Mon, 28 Sep 1970 06:00:00 GMT"])
    assert r.status == 304, r
    assert h.curl(s.url("/p.gif"), method="POST", body=b"x").status == 405


def test_empty_gif_conflicts_with_another_handler(tmp_path):
    conferr.check(tmp_path, ["conflicts"], server=(
        "        location = /p.gif { respond 200 x;\n"
        "                            empty_gif;  # ERR\n        }\n"))
