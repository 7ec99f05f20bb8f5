"""HTTP/1 field lines read a chunk at a time (16 bytes with SSE2, 8
without): a bad byte refused, and a good one taken, wherever it falls
against a chunk's edge, in a client's request head (raw sockets) and in an
origin's response head (proxy_pass to tests/integration/proxyorigin.py)."""
import urllib.parse

import pytest

import swsharness as h

# positions around the edges of 8- and 16-byte chunks
EDGES = (0, 6, 7, 8, 9, 14, 15, 16, 17, 23, 31, 32, 33)


@pytest.fixture(scope="module")
def srv(sws_module):
    return sws_module(server='location = /field { return 200 "$http_x_a_padded_field_name\n"; }')


def ask(srv, line):
    """The status of a GET with one extra field line (bytes)."""
    with h.Conn(srv.port) as c:
        c.send(b"GET /field HTTP/1.1\r\nHost: localhost\r\n" + line + b"\r\n\r\n")
        r = c.read_response("GET")
        assert r is not None, "no response to %r" % line
        return r


def name_at(n, pos, byte):
    name = bytearray(b"X-A-Padded-Field-Name-0123456789abcdef"[:n])
    name[pos] = byte
    return bytes(name)


@pytest.mark.parametrize("byte", [0x00, 0x01, 0x09, 0x20, 0x22, 0x28, 0x2c, 0x2f, 0x3b, 0x3d,
                                  0x40, 0x5b, 0x5c, 0x7b, 0x7d, 0x7f, 0x80, 0xff])
def test_request_name_bad_byte_at_chunk_edges_400(srv, byte):
    for n in (8, 9, 16, 17, 33):
        for pos in [p for p in EDGES if p < n]:
            r = ask(srv, name_at(n, pos, byte) + b": v")
            assert r.status == 400, (n, pos, hex(byte), r)


@pytest.mark.parametrize("byte", [0x00, 0x01, 0x0b, 0x0d, 0x1f, 0x7f])
def test_request_value_ctl_at_chunk_edges_400(srv, byte):
    for pos in EDGES:
        value = bytearray(b"abcdefghijklmnopqrstuvwxyz0123456789")
        value[pos] = byte
        r = ask(srv, b"X-A: " + bytes(value))
        assert r.status == 400, (pos, hex(byte), r)
        # the last chunk of a short value reaches back over the name
        r = ask(srv, b"Content-Type: " + bytes(value[pos:pos + 3]))
        assert r.status == 400, (pos, hex(byte), r)


def test_request_name_lower_cased_value_kept(srv):
    """The name is lower-cased in place a chunk at a time (found by
    $http_x_a_padded_field_name); the value in the same chunk stays as
    sent."""
    r = ask(srv, b"X-A-PADDED-field-NAME: Vx\tY\x80\xff")
    assert r.status == 200, r
    assert r.body == b"Vx\tY\x80\xff\n"
    for pos in EDGES:
        value = bytearray(b"abcdefghijklmnopqrstuvwxyz0123456789")
        value[pos] = 0x09
        r = ask(srv, b"X-A-Padded-Field-Name:" + bytes(value))
        assert r.status == 200, (pos, r)
        assert r.body == bytes(value).strip(b"\t") + b"\n"


@pytest.fixture
def proxied(sws, origin):
    o = origin()
    return sws(server="location / { proxy_pass http://%s; }" % o.addr)


def fields_url(srv, name, value):
    return srv.url("/fields?" + urllib.parse.urlencode([(name, value)]))


def test_response_fields_at_chunk_edges(proxied):
    # good: a name in mixed case passed as written, a value with HTAB kept
    r = h.curl(fields_url(proxied, "X-Mixed-CASE-Name-Over-16_Bytes", "a\tb c"))
    assert r.status == 200, r
    assert r.header("X-Mixed-CASE-Name-Over-16_Bytes") == "a\tb c"
    # bad: a CTL or DEL in a value, a separator in a name, at chunk edges
    for pos in (0, 7, 8, 15, 16, 17):
        value = list("abcdefghijklmnopqrstuvwxyz")
        value[pos] = "\x01" if pos % 2 else "\x7f"
        assert h.curl(fields_url(proxied, "X-V", "".join(value))).status == 502, pos
        name = list("X-Name-Of-Thirty-Two-Bytes-Here")
        name[pos] = "(" if pos % 2 else "\""
        assert h.curl(fields_url(proxied, "".join(name), "v")).status == 502, pos
    assert "upstream sent an invalid header line" in proxied.error_log()
