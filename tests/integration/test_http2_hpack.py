"""Our HPACK encoder (src/http/sws_hpack_encoder.c) as a client sees it:
the header blocks of real responses, walked representation by
representation (RFC 7541 6) beside what python3-hpack decodes from them.
A second response of the same file is all references to the static and
dynamic tables (the ETag among them, which nghttp2's encoder would resend
as a literal every time); Set-Cookie goes as never indexed; a client's
SETTINGS_HEADER_TABLE_SIZE of 0 gets a size update of 0 and no entry
added after it, and a size raised again is said in the next block."""
import struct

import pytest

import h2raw
from h2raw import raw_frame
from test_http2_frames import connect      # h2c on srv.h2port, our SETTINGS acked

SETTINGS = 0x4
FILES = {"html/hello.txt": b"hello\n"}


@pytest.fixture(scope="module")
def srv(sws_module):
    s = sws_module(files=FILES, ports=2,
                   server="        listen 127.0.0.1:@PORT2@ http2;\n"
                          "        location = /cookie {\n"
                          "            add_header Set-Cookie \"id=1; HttpOnly\";\n"
                          "            add_header X-Kept \"the same each time\";\n"
                          "            return 200 \"c\";\n"
                          "        }\n")
    s.h2port = s.ports[1]
    return s


def representations(block):
    """[(kind, index)] of an HPACK block: kind is "indexed", "incremental",
    "without", "never" or "size" (a dynamic table size update, whose
    index is the size); index 0 for a literal name."""
    out, i = [], 0

    def integer(prefix):
        nonlocal i
        mask = (1 << prefix) - 1
        v = block[i] & mask
        i += 1
        if v == mask:
            shift = 0
            while True:
                b = block[i]
                i += 1
                v += (b & 0x7f) << shift
                shift += 7
                if not b & 0x80:
                    break
        return v

    def skip_string():
        nonlocal i
        n = integer(7)
        i += n

    while i < len(block):
        b = block[i]
        if b & 0x80:
            out.append(("indexed", integer(7)))
            continue
        if b & 0x40:
            kind, index = "incremental", integer(6)
        elif b & 0x20:
            out.append(("size", integer(5)))
            continue
        elif b & 0x10:
            kind, index = "never", integer(4)
        else:
            kind, index = "without", integer(4)
        if index == 0:
            skip_string()
        skip_string()
        out.append((kind, index))
    assert i == len(block), block
    return out


def response(c, path):
    """(raw block, decoded fields, {name: (kind, index)}) of GET path."""
    sid = c.headers(c.request_headers(path, scheme="http"))
    frames = c.frames(timeout=5, until=lambda f: f is None or (
        isinstance(f, h2raw.HeadersFrame) and f.stream_id == sid))
    head = frames[-1]
    assert isinstance(head, h2raw.HeadersFrame) and "END_HEADERS" in head.flags, frames
    c.frames(timeout=2, until=lambda f: f is None or (
        f.stream_id == sid and "END_STREAM" in f.flags))
    block = bytes(head.data)
    reps = [r for r in representations(block) if r[0] != "size"]
    assert len(reps) == len(head.decoded), (reps, head.decoded)
    return block, head.decoded, {k: r for (k, _), r in zip(head.decoded, reps)}


def test_second_response_refers_to_the_etag(srv):
    with connect(srv) as c:
        block1, fields1, kinds1 = response(c, "/hello.txt")
        block2, fields2, kinds2 = response(c, "/hello.txt")
    assert h2raw.status(fields1) == 200 and h2raw.header(fields1, "etag"), fields1
    assert kinds1[":status"] == ("indexed", 8)
    # the first time: literals that add an entry, the names by static index
    assert kinds1["etag"] == ("incremental", 34), kinds1
    assert kinds1["last-modified"] == ("incremental", 44), kinds1
    assert kinds1["content-length"] == ("incremental", 28), kinds1
    # the second time: each field one reference, the ETag into the dynamic table
    kind, index = kinds2["etag"]
    assert kind == "indexed" and index > 61, kinds2
    assert h2raw.header(fields2, "etag") == h2raw.header(fields1, "etag")
    for name, (kind, _) in kinds2.items():
        if name != "date":                    # (a new second adds a new date)
            assert kind == "indexed", (name, kinds2)
    if kinds2["date"][0] == "indexed":
        assert len(block2) == len(fields2), block2     # one octet each
    else:
        assert len(block2) < len(block1) // 2, (block1, block2)


def test_set_cookie_is_never_indexed(srv):
    with connect(srv) as c:
        _, fields1, kinds1 = response(c, "/cookie")
        _, fields2, kinds2 = response(c, "/cookie")
    assert h2raw.header(fields1, "set-cookie") == "id=1; HttpOnly", fields1
    assert kinds1["set-cookie"] == kinds2["set-cookie"] == ("never", 55), (kinds1, kinds2)
    assert kinds1["x-kept"] == ("incremental", 0), kinds1
    assert kinds2["x-kept"][0] == "indexed", kinds2
    assert not any(isinstance(v, str) and v == "id=1; HttpOnly"
                   for _, v in c.dec.header_table.dynamic_entries)


def test_client_table_size_zero_is_respected(srv):
    with connect(srv, settings={h2raw.HEADER_TABLE_SIZE: 0}) as c:
        c.dec.max_allowed_table_size = 0
        block1, fields1, kinds1 = response(c, "/hello.txt")
        block2, fields2, kinds2 = response(c, "/hello.txt")
        assert len(c.dec.header_table.dynamic_entries) == 0
    assert representations(block1)[0] == ("size", 0), block1
    assert representations(block2)[0][0] != "size", block2
    for kinds in (kinds1, kinds2):
        assert "incremental" not in {k for k, _ in kinds.values()}, kinds
    assert kinds2["etag"] == ("without", 34), kinds2
    strip = lambda fields: [f for f in fields if f[0] != "date"]   # noqa: E731
    assert strip(fields1) == strip(fields2)


def test_table_size_changes_during_the_connection(srv):
    """4096, then 0 (the entries go: a size update of 0, literals), then
    4096 again (the next block says so, and the fields are added anew)."""
    with connect(srv) as c:
        response(c, "/hello.txt")
        _, _, kinds = response(c, "/hello.txt")
        assert kinds["etag"][0] == "indexed"
        c.send(raw_frame(SETTINGS, 0, 0, struct.pack(">HI", h2raw.HEADER_TABLE_SIZE, 0)))
        block, _, kinds = response(c, "/hello.txt")
        assert representations(block)[0] == ("size", 0), block
        assert kinds["etag"] == ("without", 34), kinds
        assert len(c.dec.header_table.dynamic_entries) == 0
        c.send(raw_frame(SETTINGS, 0, 0, struct.pack(">HI", h2raw.HEADER_TABLE_SIZE, 4096)))
        block, fields, kinds = response(c, "/hello.txt")
        assert representations(block)[0] == ("size", 4096), block
        assert kinds["etag"] == ("incremental", 34), kinds
        _, fields2, kinds = response(c, "/hello.txt")
        assert kinds["etag"][0] == "indexed", kinds
        assert h2raw.header(fields2, "etag") == h2raw.header(fields, "etag")
