"""The HTTP/2 response head's memo (sws_hpack_memo_get): a connection's
response whose fields are the last one's while the HPACK table has not
changed reuses that block. Different responses interleaved on one
connection, HEAD, 304, 404, a response with a field of its own, a table
size change in between: each head, as python3-hpack decodes it, has the
fields the same request gets alone on a fresh connection (the date aside),
so a block reused where it should not be shows as a wrong field."""
import pytest

import h2raw
from test_http2_frames import connect      # h2c on srv.h2port, our SETTINGS acked

FILES = {"html/a.txt": b"A\n", "html/b.txt": b"BBBBBBB\n", "html/c.css": b"c{}\n"}


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(files=FILES, ports=2,
                   server="        listen 127.0.0.1:@PORT2@ http2;\n"
                          "        location = /own { add_header X-Own yes; return 200 \"own\"; }\n")
    s.h2port = s.ports[1]
    return s


def head_of(c, path, method="GET", extra=()):
    sid = c.headers(c.request_headers(path, method=method, scheme="http", extra=list(extra)))
    hdrs, body, _ = c.response(sid, timeout=5)
    return [(n, v) for n, v in hdrs if n not in (b"date", "date")], body


def alone(srv, path, method="GET", extra=()):
    with connect(srv) as c:
        return head_of(c, path, method, extra)


def test_interleaved_heads_as_alone(srv):
    etag = h2raw.header(alone(srv, "/a.txt")[0], "etag")
    assert etag
    seq = [("/a.txt", "GET", ()), ("/a.txt", "GET", ()), ("/b.txt", "GET", ()),
           ("/a.txt", "GET", ()), ("/a.txt", "HEAD", ()), ("/a.txt", "GET", ()),
           ("/a.txt", "GET", (("if-none-match", etag),)), ("/a.txt", "GET", ()),
           ("/nothing", "GET", ()), ("/own", "GET", ()), ("/a.txt", "GET", ()),
           ("/c.css", "GET", ()), ("/c.css", "GET", ()), ("/b.txt", "GET", ()),
           ("/b.txt", "GET", ())]
    want = {(p, m, x): alone(srv, p, m, x) for p, m, x in seq}
    with connect(srv) as c:
        for i, (p, m, x) in enumerate(seq):
            if i == 10:
                # a table size change, and back: size updates, then the
                # table to be filled again
                c.send(h2raw.raw_frame(0x4, 0, 0, b"\x00\x01\x00\x00\x00\x00"))
                c.send(h2raw.raw_frame(0x4, 0, 0, b"\x00\x01\x00\x00\x10\x00"))
            got = head_of(c, p, m, x)
            assert got == want[(p, m, x)], (i, p, m, got, want[(p, m, x)])
