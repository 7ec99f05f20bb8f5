"""HTTP/2 conformance, requirement by requirement: RFC 9113 (sections 3 to
9) and RFC 7541 (HPACK, as a decoder). One table row per MUST: the exact
frames sent over a real socket, each test twice (the `tls` fixture:
cleartext with prior knowledge, and TLS with ALPN h2), and the exact
reaction expected, each read bounded in time.

Expectations:
  GOAWAY(code)   a connection error: GOAWAY with code, then the close
  STREAM(code)   a stream error: RST_STREAM with code on the stream (a
                 GOAWAY with the same code is allowed too: RFC 9113 5.4.1
                 lets an endpoint treat any stream error as a connection one)
  RESET(code)    RST_STREAM with code on the stream, and nothing broader
  STATUS(n)      a response with :status n on the stream
  BODY(b)        a 200 response whose body is b (echo: the request body)
  ECHOED(b)      a 200 response whose body holds b (echo: the request head)
  ALIVE          nothing is answered and the connection goes on (a PING
                 sent after it comes back with its ACK)
"""
import socket
import struct
import threading
import time

# Where each part of RFC 9113 / RFC 7541 is tested (this file, and what
# other files cover already and is not repeated here):
#
#   3.1 h2c Upgrade ignored     test_3_upgrade_h2c_is_ignored
#   3.4 preface                 test_3_4_*; test_http2.py test_h2_preface_byte_by_byte;
#                               test_http2_abuse.py test_bad_preface(_over_tls),
#                               test_idle_connection_without_preface_is_closed
#   4.1 format, unknown flags   ROWS 4.1, 5.5
#   4.2 frame size              ROWS 4.2; test_4_2_data_frames_within_the_clients_max_frame_size;
#                               test_http2_abuse.py test_invalid_frames_goaway
#   4.3 field blocks            ROWS 4.3; test_4_3_* (blocks of refused and closed streams)
#   5.1 stream states           ROWS 5.1; test_5_1_*
#   5.1.1 stream identifiers    ROWS 5.1.1; test_http2_abuse.py test_stream_id_going_backwards
#   5.1.2 concurrency           test_5_1_2_*; test_http2_abuse.py test_concurrent_stream_limit*
#   5.3 priority (9113)         ROWS 5.3.x, 6.3; RFC 9218: test_http2_frames.py
#   5.4 error handling          ROWS 5.4.1, 7; test_5_4_*; test_http2_frames.py
#                               test_invalid_frame_after_a_request_in_the_same_read
#   5.5 extensions              ROWS 5.5
#   6.1 DATA ... 6.10           ROWS 6.x; test_6_*; test_http2_abuse.py (floods)
#   6.5.2 our settings          test_http2.py test_server_settings, test_settings_from_configuration
#   6.9 flow control            ROWS 6.9.x; test_6_9_*; test_http2.py
#                               test_large_file_with_small_client_windows;
#                               test_http2_frames.py test_a_stored_body_gets_a_wide_window
#   8.1 framing, trailers,      test_8_1_*; test_http2.py test_post_*; test_http2_frames.py
#       content-length          test_content_length_against_data_in_separate_reads
#   8.2 field validity          MALFORMED (test_malformed_request); test_8_2_*;
#                               test_http2.py test_invalid_request_headers_reset_stream,
#                               test_header_names_lowercase_and_no_connection_headers
#   8.3 pseudo-headers, Host    MALFORMED 8.3.x; test_8_3_*; test_http2.py
#                               test_pseudo_headers_map_to_request,
#                               test_authority_selects_virtual_server
#   8.5 CONNECT                 MALFORMED 8.5; test_8_5_*; test_http2.py test_connect_is_not_allowed
#   9.2 TLS versions            test_9_2_h2_over_tls_1_2_and_1_3
#   RFC 7541 decoder            ROWS 7541 x; test_7541_*; the decoder's Check tests
#                               (tests/unit) and its differential fuzz target
#   RFC 7541 encoder            test_http2_hpack.py (table size 0 and changes, never indexed)

import pytest

import echomod
import h2raw
import swsharness as h
import tlsutil as t
from h2raw import raw_frame

# frame types and flags (RFC 9113 6)
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE = 0x0, 0x1, 0x2, 0x3, 0x4, 0x5
PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0x6, 0x7, 0x8, 0x9
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 0x1, 0x1, 0x4, 0x8, 0x20
E = h2raw

BIG = bytes(range(256)) * 400           # 102400 bytes: past the connection window
FILES = {"html/hello.txt": b"Hello, HTTP/2!\n", "html/big.bin": BIG}


@pytest.fixture(scope="module")
def srv(sws_module, pki, tmp_path_factory):
    # An origin that accepts and never answers: a request proxied there
    # keeps its stream half-closed (remote) for as long as a test needs.
    hold = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hold.bind(("127.0.0.1", 0))
    hold.listen(256)
    held = []

    def accept():
        while True:
            try:
                held.append(hold.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    s = t.launch(sws_module, pki, listen="http2", ports=3, files=FILES,
                 load=echomod.build(tmp_path_factory.mktemp("echo")),
                 server="        listen 127.0.0.1:@PORT2@ http2;\n"
                        "        listen 127.0.0.1:@PORT3@;\n"
                        "        location /echo { echo; }\n"
                        "        location /hold { proxy_pass http://127.0.0.1:%d;\n"
                        "                         proxy_read_timeout 10s; }\n"
                        % hold.getsockname()[1])
    s.port2, s.port3 = s.ports[1], s.ports[2]
    yield s
    s.stop()
    hold.close()
    for x in held:
        x.close()


@pytest.fixture(params=[False, True], ids=["h2c", "tls"])
def tls(request):
    """Each test over cleartext (prior knowledge) and over TLS (ALPN h2)."""
    return request.param


def connect(srv, tls=False, settings=None):
    """A connection past the handshake: the server's SETTINGS read (and
    acknowledged), ours acknowledged."""
    c = h2raw.H2(srv.port if tls else srv.port2, tls=tls, settings=settings)
    c.scheme = "https" if tls else "http"
    got = c.frames(timeout=3, until=lambda f: f is None or (
        isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
    assert got and got[-1] is not None, got
    return c


# ---------------------------------------------------------------- building blocks

def hdr_block(c, path="/respond", method="GET", extra=(), pseudo=None):
    fields = pseudo if pseudo is not None else [
        (":method", method), (":scheme", c.scheme), (":authority", "localhost"),
        (":path", path)]
    return c.block(list(fields) + list(extra))


def headers(c, sid=None, flags=END_STREAM | END_HEADERS, block=None, **kw):
    """One HEADERS frame (raw, so any flags go); returns its stream id."""
    sid = c.new_id() if sid is None else sid
    c.send(raw_frame(HEADERS, flags, sid, block if block is not None else hdr_block(c, **kw)))
    return sid


def open_stream(c, path="/hold", **kw):
    """A request whose body is still to come: the stream is open."""
    return headers(c, flags=END_HEADERS, path=path, method="POST", **kw)


def half_closed(c):
    """A request whose response will not come soon: half-closed (remote)."""
    return headers(c, path="/hold")


def finished(c):
    """A stream closed both ways: request sent, response read whole."""
    sid = headers(c)
    hdrs, body, _ = c.response(sid)
    assert h2raw.status(hdrs) == 200 and body == b"Hello, world!"
    return sid


def reset_by_client(c):
    sid = open_stream(c)
    c.send(raw_frame(RST_STREAM, 0, sid, struct.pack(">I", E.CANCEL)))
    return sid


def u32(v):
    return struct.pack(">I", v)


def setting(ident, value):
    return struct.pack(">HI", ident, value)


def wu(sid, inc):
    return raw_frame(WINDOW_UPDATE, 0, sid, u32(inc))


def ping(data=b"conform!", flags=0):
    return raw_frame(PING, flags, 0, data)


# HPACK (RFC 7541) by hand: 0x82 is ":method: GET" (static index 2), 0x84
# ":path: /", 0x86 ":scheme: http", 0x87 ":scheme: https".
def get_prefix(c):
    return b"\x82\x84" + (b"\x87" if c.scheme == "https" else b"\x86")


def literal(name, value):
    """A literal field without indexing, new name, no Huffman."""
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value

def hpack_int(value, prefix, first=0):
    """An integer of RFC 7541 5.1 on a prefix of that many bits (the first
    octet's other bits from first)."""
    limit = (1 << prefix) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    return bytes(out + [value])


def indexed_literal(name, value):
    """A literal with incremental indexing, new name, no Huffman: it enters
    the decoder's dynamic table as index 62."""
    return b"\x40" + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def plain_request(c, path=b"/respond", extra=b""):
    """A request block that neither reads nor writes the dynamic table (nor
    the encoder of c): static references and literals without indexing, so
    that tests can say exactly which entries the server's table holds."""
    return (get_prefix(c)[:1] + get_prefix(c)[2:] + b"\x04" + hpack_int(len(path), 7) + path
            + b"\x01\x09localhost" + extra)


def served(c, block, want=200):
    """A request sent and its response read whole: the body."""
    sid = headers(c, block=block)
    hdrs, body, frames = c.response(sid)
    assert h2raw.status(hdrs) == want, (hdrs, frames)
    return body


def then(*steps):
    """Steps of a row in order; the last one's value (a stream id or None)."""
    out = None
    for step in steps:
        out = step()
    return out


# ---------------------------------------------------------------- expectations

class Expect:
    def __init__(self, kind, code=None, data=None):
        self.kind, self.code, self.data = kind, code, data

    def __repr__(self):
        return "%s(%s)" % (self.kind, self.code)


def GOAWAY_(code):
    return Expect("goaway", code)


def STREAM(code):
    return Expect("stream", code)


def RESET(code):
    return Expect("reset", code)


def STATUS(n):
    return Expect("status", n)


def BODY(data):
    return Expect("body", 200, data)


def ECHOED(data):
    return Expect("echoed", 200, data)


ALIVE = Expect("alive")


def check(c, sid, exp, what):
    if exp.kind == "goaway":
        g = c.goaway(timeout=5)
        assert g is not None, "%s: no GOAWAY" % what
        assert g.error_code == exp.code, (what, g.error_code, g.additional_data)
        assert c.closed_within(5), "%s: not closed after GOAWAY" % what
        return
    if exp.kind in ("stream", "reset"):
        frames = c.frames(timeout=5, until=lambda f: f is None
                          or isinstance(f, h2raw.GoAwayFrame)
                          or (isinstance(f, h2raw.RstStreamFrame) and f.stream_id == sid))
        last = frames[-1] if frames else None
        if exp.kind == "stream" and isinstance(last, h2raw.GoAwayFrame):
            assert last.error_code == exp.code, (what, last.error_code, last.additional_data)
            return
        assert isinstance(last, h2raw.RstStreamFrame), (what, frames)
        assert last.error_code == exp.code, (what, last.error_code)
        expect_alive(c, what)
        return
    if exp.kind in ("status", "body", "echoed"):
        hdrs, body, frames = c.response(sid)
        assert h2raw.status(hdrs) == exp.code, (what, hdrs, frames)
        if exp.kind == "body":
            assert body == exp.data, (what, body)
        elif exp.kind == "echoed":
            assert exp.data in body, (what, body)
        expect_alive(c, what)
        return
    expect_alive(c, what)


def expect_alive(c, what):
    """A PING round trip with nothing bad before it."""
    c.send(ping(b"alive?!!"))
    frames = c.frames(timeout=5, until=lambda f: f is None or (
        isinstance(f, h2raw.PingFrame) and "ACK" in f.flags and f.opaque_data == b"alive?!!"))
    bad = [f for f in frames if f is None or isinstance(f, h2raw.GoAwayFrame)]
    assert not bad, (what, frames)
    assert frames and frames[-1].opaque_data == b"alive?!!", (what, frames)


# ---------------------------------------------------------------- the table
#
# (section, requirement, action(c) -> stream id or None, expectation)

ROWS = [
    # 4.1 frame format
    ("4.1", "an unknown frame type is ignored",
     lambda c: c.send(raw_frame(0x20, 0xff, 0, b"whatever")), ALIVE),
    ("4.1", "an unknown frame type on a stream is ignored",
     lambda c: c.send(raw_frame(0x21, 0, 1, b"x")), ALIVE),
    ("4.1", "unknown flags are ignored",
     lambda c: c.send(ping(flags=0xfe)), ALIVE),
    ("4.1", "the reserved bit of a stream identifier is ignored",
     lambda c: headers(c, sid=0x80000001) and 1, STATUS(200)),
    # 4.2 frame size
    ("4.2", "DATA over SETTINGS_MAX_FRAME_SIZE",
     lambda c: c.send(raw_frame(DATA, 0, open_stream(c), b"x" * 16385)) or 1,
     STREAM(E.FRAME_SIZE_ERROR)),
    ("4.2", "HEADERS over SETTINGS_MAX_FRAME_SIZE is a connection error",
     lambda c: headers(c, block=hdr_block(c) + literal(b"x-pad", b"p" * 120) * 140),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "SETTINGS over SETTINGS_MAX_FRAME_SIZE",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(0x99, 0) * 2731)),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "DATA of exactly SETTINGS_MAX_FRAME_SIZE is served",
     lambda c: c.send(raw_frame(DATA, END_STREAM, open_stream(c, path="/echo"),
                                b"x" * 16384)) or 1, STATUS(200)),
    # 4.3 field blocks
    ("4.3", "a field block that cannot be decoded",
     lambda c: headers(c, block=b"\x82\x84\x86\xbf\x87"),    # index 63: past both tables
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("4.3", "PRIORITY inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(PRIORITY, 0, 3, u32(0) + b"\x10")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "DATA inside a field block",
     lambda c: c.send(raw_frame(HEADERS, 0, 1, get_prefix(c))
                      + raw_frame(DATA, 0, 1, b"x")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "HEADERS of another stream inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(HEADERS, END_STREAM | END_HEADERS, 3, get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.5", "an unknown frame type inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(0x20, 0, 1, b"ext")),
     GOAWAY_(E.PROTOCOL_ERROR)),

    # 5.1 stream states: idle
    ("5.1", "DATA on an idle stream",
     lambda c: c.send(raw_frame(DATA, 0, 1, b"x")), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "RST_STREAM on an idle stream",
     lambda c: c.send(raw_frame(RST_STREAM, 0, 1, u32(E.CANCEL))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "WINDOW_UPDATE on an idle stream",
     lambda c: c.send(wu(1, 100)), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "CONTINUATION on an idle stream",
     lambda c: c.send(raw_frame(CONTINUATION, END_HEADERS, 1, get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "PRIORITY on an idle stream is accepted, the stream opens later",
     lambda c: c.send(raw_frame(PRIORITY, 0, 1, u32(0) + b"\x10")) or headers(c, sid=1),
     STATUS(200)),
    # half-closed (remote)
    ("5.1", "DATA on a half-closed (remote) stream",
     lambda c: c.send(raw_frame(DATA, 0, half_closed(c), b"x")) or 1,
     STREAM(E.STREAM_CLOSED)),
    ("5.1", "HEADERS on a half-closed (remote) stream",
     lambda c: headers(c, sid=half_closed(c), block=b"\x40\x01a\x01b"),
     STREAM(E.STREAM_CLOSED)),
    ("5.1", "WINDOW_UPDATE on a half-closed (remote) stream is accepted",
     lambda c: c.send(wu(half_closed(c), 1000)), ALIVE),
    ("5.1", "PRIORITY on a half-closed (remote) stream is accepted",
     lambda c: c.send(raw_frame(PRIORITY, 0, half_closed(c), u32(0) + b"\x10")), ALIVE),
    ("5.1", "RST_STREAM on a half-closed (remote) stream is accepted",
     lambda c: c.send(raw_frame(RST_STREAM, 0, half_closed(c), u32(E.CANCEL))), ALIVE),
    # closed
    ("5.1", "DATA on a stream the client reset",
     lambda c: c.send(raw_frame(DATA, 0, reset_by_client(c), b"x")) or 1,
     STREAM(E.STREAM_CLOSED)),
    ("5.1", "HEADERS on a stream the client reset",
     lambda c: headers(c, sid=reset_by_client(c)), STREAM(E.STREAM_CLOSED)),
    ("5.1", "DATA on a closed stream",
     lambda c: c.send(raw_frame(DATA, 0, finished(c), b"x")) or 1,
     STREAM(E.STREAM_CLOSED)),
    ("5.1", "HEADERS on a closed stream",
     lambda c: headers(c, sid=finished(c)), STREAM(E.STREAM_CLOSED)),
    ("5.1", "PRIORITY on a closed stream is accepted",
     lambda c: c.send(raw_frame(PRIORITY, 0, finished(c), u32(0) + b"\x10")), ALIVE),
    ("5.1", "WINDOW_UPDATE on a closed stream is accepted",
     lambda c: c.send(wu(finished(c), 1)), ALIVE),
    ("5.1", "RST_STREAM on a closed stream is accepted",
     lambda c: c.send(raw_frame(RST_STREAM, 0, finished(c), u32(E.CANCEL))), ALIVE),
    # 5.1.1 stream identifiers
    ("5.1.1", "a client stream with an even identifier",
     lambda c: headers(c, sid=2), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1.1", "a new stream numerically smaller than one used before",
     lambda c: headers(c, sid=5) and headers(c, sid=3), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1.1", "a new stream below one used before, made idle by PRIORITY",
     lambda c: c.send(raw_frame(PRIORITY, 0, 3, u32(0) + b"\x10"))
     or (headers(c, sid=5) and headers(c, sid=3)), GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1.1", "the largest stream identifier, 2^31-1, is served",
     lambda c: headers(c, sid=0x7fffffff), STATUS(200)),
    # 5.3 priority (deprecated signals are parsed, their errors still hold)
    ("5.3.1", "HEADERS depending on its own stream",
     lambda c: headers(c, sid=1, flags=END_STREAM | END_HEADERS | PRIO,
                       block=u32(1) + b"\x10" + hdr_block(c)),
     STREAM(E.PROTOCOL_ERROR)),
    ("5.3.1", "PRIORITY depending on its own stream",
     lambda c: c.send(raw_frame(PRIORITY, 0, 1, u32(1) + b"\x10")) or 1,
     STREAM(E.PROTOCOL_ERROR)),
    ("5.3.2", "HEADERS with a priority block is served",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PRIO,
                       block=u32(0x80000000) + b"\xff" + hdr_block(c)), STATUS(200)),
    # 5.4 error handling
    ("5.4.1", "an invalid PING ends the connection",
     lambda c: c.send(raw_frame(PING, 0, 0, b"short")), GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("7", "an unknown error code in RST_STREAM does not matter",
     lambda c: c.send(raw_frame(RST_STREAM, 0, open_stream(c), u32(0xabcdef))), ALIVE),

    # 6.1 DATA
    ("6.1", "DATA on stream 0",
     lambda c: c.send(raw_frame(DATA, 0, 0, b"x")), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.1", "DATA whose padding is as long as the payload",
     lambda c: c.send(raw_frame(DATA, PADDED, open_stream(c), b"\x05abcd")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.1", "DATA with padding is served",
     lambda c: c.send(raw_frame(DATA, PADDED | END_STREAM, open_stream(c, path="/echo"),
                                b"\x03abc\x00\x00\x00")) or 1, STATUS(200)),
    # 6.2 HEADERS
    ("6.2", "HEADERS on stream 0",
     lambda c: headers(c, sid=0) and None, GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.2", "HEADERS whose padding is as long as the payload",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PADDED, block=b"\x03\x82\x84"),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.2", "HEADERS with padding is served",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PADDED,
                       block=b"\x04" + hdr_block(c) + b"\x00" * 4), STATUS(200)),
    # 6.3 PRIORITY
    ("6.3", "PRIORITY on stream 0",
     lambda c: c.send(raw_frame(PRIORITY, 0, 0, u32(1) + b"\x10")), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.3", "PRIORITY of 4 bytes",
     lambda c: c.send(raw_frame(PRIORITY, 0, 1, u32(0))) or 1, STREAM(E.FRAME_SIZE_ERROR)),
    # 6.4 RST_STREAM
    ("6.4", "RST_STREAM on stream 0",
     lambda c: c.send(raw_frame(RST_STREAM, 0, 0, u32(0))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.4", "RST_STREAM of 3 bytes",
     lambda c: c.send(raw_frame(RST_STREAM, 0, open_stream(c), b"\x00\x00\x08")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("6.4", "RST_STREAM of 5 bytes",
     lambda c: c.send(raw_frame(RST_STREAM, 0, open_stream(c), b"\x00\x00\x00\x08\x00")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    # 6.5 SETTINGS
    ("6.5", "SETTINGS ACK with a payload",
     lambda c: c.send(raw_frame(SETTINGS, ACK, 0, setting(3, 100))), GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("6.5", "SETTINGS on a stream",
     lambda c: c.send(raw_frame(SETTINGS, 0, 1, b"")), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5", "SETTINGS not a multiple of 6 bytes",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(3, 100) + b"\x00\x00")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("6.5.2", "SETTINGS_ENABLE_PUSH 0 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(2, 0))) or headers(c), STATUS(200)),
    ("6.5.2", "SETTINGS_ENABLE_PUSH 1 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(2, 1))) or headers(c), STATUS(200)),
    ("6.5.2", "SETTINGS_ENABLE_PUSH 2",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(2, 2))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5.2", "SETTINGS_INITIAL_WINDOW_SIZE 2^31",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(4, 1 << 31))),
     GOAWAY_(E.FLOW_CONTROL_ERROR)),
    ("6.5.2", "SETTINGS_INITIAL_WINDOW_SIZE 2^31-1 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(4, (1 << 31) - 1))) or headers(c),
     STATUS(200)),
    ("6.5.2", "SETTINGS_MAX_FRAME_SIZE below 2^14",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, 16383))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5.2", "SETTINGS_MAX_FRAME_SIZE above 2^24-1",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, 1 << 24))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5.2", "SETTINGS_MAX_FRAME_SIZE 2^24-1 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, (1 << 24) - 1))) or headers(c),
     STATUS(200)),
    ("6.5.2", "SETTINGS_HEADER_TABLE_SIZE 0 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(1, 0))) or headers(c), STATUS(200)),
    ("6.5.2", "SETTINGS_MAX_CONCURRENT_STREAMS 0 is accepted (no push anyway)",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(3, 0))) or headers(c), STATUS(200)),
    ("6.5.2", "an unknown setting is ignored",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(0xfe, 12345))) or headers(c),
     STATUS(200)),
    # 6.6 PUSH_PROMISE
    ("6.6", "PUSH_PROMISE from a client",
     lambda c: c.send(raw_frame(PUSH_PROMISE, END_HEADERS, open_stream(c),
                                u32(2) + get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    # 6.7 PING
    ("6.7", "PING on a stream",
     lambda c: c.send(raw_frame(PING, 0, 1, b"12345678")), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.7", "PING of 9 bytes",
     lambda c: c.send(raw_frame(PING, 0, 0, b"123456789")), GOAWAY_(E.FRAME_SIZE_ERROR)),
    # 6.8 GOAWAY
    ("6.8", "GOAWAY on a stream",
     lambda c: c.send(raw_frame(GOAWAY, 0, 1, u32(0) + u32(0))), GOAWAY_(E.PROTOCOL_ERROR)),
    # 6.9 WINDOW_UPDATE
    ("6.9", "WINDOW_UPDATE of 0 on the connection",
     lambda c: c.send(wu(0, 0)), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.9", "WINDOW_UPDATE of 0 on a stream",
     lambda c: c.send(wu(open_stream(c), 0)) or 1, STREAM(E.PROTOCOL_ERROR)),
    ("6.9", "WINDOW_UPDATE of 3 bytes",
     lambda c: c.send(raw_frame(WINDOW_UPDATE, 0, 0, b"\x00\x00\x01")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("6.9", "WINDOW_UPDATE of 5 bytes on a stream",
     lambda c: c.send(raw_frame(WINDOW_UPDATE, 0, open_stream(c), b"\x00\x00\x00\x01\x00")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("6.9", "the reserved bit of a window increment is ignored",
     lambda c: c.send(wu(0, 0x80000001)), ALIVE),
    ("6.9.1", "WINDOW_UPDATE overflowing the connection window",
     lambda c: c.send(wu(0, 0x7fffffff)), GOAWAY_(E.FLOW_CONTROL_ERROR)),
    ("6.9.1", "WINDOW_UPDATEs adding up past 2^31-1 on the connection",
     lambda c: c.send(wu(0, 0x40000000) + wu(0, 0x40000000)), GOAWAY_(E.FLOW_CONTROL_ERROR)),
    ("6.9.1", "WINDOW_UPDATE overflowing a stream window",
     lambda c: c.send(wu(half_closed(c), 0x7fffffff)) or 1, STREAM(E.FLOW_CONTROL_ERROR)),
    ("6.9.2", "SETTINGS_INITIAL_WINDOW_SIZE pushing a stream window past 2^31-1",
     lambda c: c.send(wu(half_closed(c), 0x7fffffff - 65535)
                      + raw_frame(SETTINGS, 0, 0, setting(4, 65536))),
     GOAWAY_(E.FLOW_CONTROL_ERROR)),
    # 6.10 CONTINUATION
    # (a block split over CONTINUATIONs: test_6_10_field_block_split_over_continuations)
    ("6.10", "CONTINUATION after END_HEADERS",
     lambda c: headers(c, sid=1) and c.send(raw_frame(CONTINUATION, END_HEADERS, 1,
                                                      literal(b"a", b"b"))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.10", "CONTINUATION after a CONTINUATION with END_HEADERS",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 1, b"")
                      + raw_frame(CONTINUATION, END_HEADERS, 1, literal(b"a", b"b"))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.10", "CONTINUATION on stream 0",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 0, b"")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.10", "CONTINUATION of another stream",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 3, b"")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.10", "CONTINUATION after DATA",
     lambda c: c.send(raw_frame(DATA, 0, open_stream(c), b"x")
                      + raw_frame(CONTINUATION, END_HEADERS, 1, literal(b"a", b"b"))),
     GOAWAY_(E.PROTOCOL_ERROR)),

    # RFC 7541 HPACK: a block that cannot be decoded is a connection error
    # of type COMPRESSION_ERROR (RFC 9113 4.3)
    ("7541 2.3.3", "an indexed field past the dynamic table",
     lambda c: headers(c, block=get_prefix(c) + b"\xbe"), GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 2.3.3", "a literal whose name index is past the tables",
     lambda c: headers(c, block=get_prefix(c) + b"\x7e\x01a"), GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 4.2", "a table size update above SETTINGS_HEADER_TABLE_SIZE",
     lambda c: headers(c, block=b"\x3f\xe2\x1f" + get_prefix(c)),      # 4097
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 4.2", "a table size update at the start is accepted",
     lambda c: headers(c, block=b"\x3f\xe1\x1f\x20" + hdr_block(c)), STATUS(200)),
    ("7541 4.2", "a table size update after a field",
     lambda c: headers(c, block=get_prefix(c) + b"\x20"), GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.1", "an integer that overflows",
     lambda c: headers(c, block=get_prefix(c) + b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "a string longer than the block",
     lambda c: headers(c, block=get_prefix(c) + b"\x00\x01a\x7f\x80\x01b"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "a Huffman string with the EOS symbol",
     lambda c: headers(c, block=get_prefix(c) + b"\x00\x01a\x84\xff\xff\xff\xff"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "Huffman padding longer than 7 bits",
     lambda c: headers(c, block=get_prefix(c) + b"\x00\x01a\x82\x1f\xff"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "Huffman padding not of ones",
     lambda c: headers(c, block=get_prefix(c) + b"\x00\x01a\x81\x18"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "a Huffman string with valid padding is served",
     lambda c: headers(c, block=hdr_block(c) + b"\x00\x01a\x81\x1f"), STATUS(200)),
    ("7541 6.2.3", "a literal never indexed is served",
     lambda c: headers(c, block=hdr_block(c) + b"\x10\x05x-sec\x03abc"), STATUS(200)),
    ("7541 6.1", "an indexed field with index 0",
     lambda c: headers(c, block=get_prefix(c) + b"\x80"), GOAWAY_(E.COMPRESSION_ERROR)),
]

# Rows of the sections above that the first table left out.
ROWS += [
    # 4.1 frame format: flags a type does not define are ignored
    ("4.1", "undefined flags on HEADERS are ignored",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | 0x02 | 0x10 | 0x40 | 0x80),
     STATUS(200)),
    ("4.1", "undefined flags on DATA are ignored",
     lambda c: c.send(raw_frame(DATA, END_STREAM | 0xf6, open_stream(c, path="/echo"),
                                b"body")) or 1, BODY(b"body")),
    ("4.1", "undefined flags on SETTINGS are ignored (no ACK meant)",
     lambda c: c.send(raw_frame(SETTINGS, 0xfe, 0, setting(4, 65535))), ALIVE),
    ("4.1", "undefined flags on WINDOW_UPDATE are ignored",
     lambda c: c.send(raw_frame(WINDOW_UPDATE, 0xff, 0, u32(100))), ALIVE),
    ("4.1", "the reserved bit of a DATA frame's stream identifier is ignored",
     lambda c: c.send(raw_frame(DATA, END_STREAM, 0x80000000 | open_stream(c, path="/echo"),
                                b"body")) or 1, BODY(b"body")),
    # 4.2 frame size: too large, or too small for the frame's fields
    ("4.2", "CONTINUATION over SETTINGS_MAX_FRAME_SIZE",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 1,
                                  literal(b"x-pad", b"p" * 120) * 129)),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "a frame of an unknown type over SETTINGS_MAX_FRAME_SIZE on stream 0",
     lambda c: c.send(raw_frame(0x25, 0, 0, b"u" * 16385)), GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "PING over SETTINGS_MAX_FRAME_SIZE",
     lambda c: c.send(raw_frame(PING, 0, 0, b"p" * 16385)), GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "a padded DATA too short for its Pad Length",
     lambda c: c.send(raw_frame(DATA, PADDED, open_stream(c), b"")) or 1,
     STREAM(E.FRAME_SIZE_ERROR)),
    ("4.2", "a padded HEADERS too short for its Pad Length",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PADDED, block=b""),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "HEADERS with the PRIORITY flag too short for its fields",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PRIO, block=u32(0)),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "PRIORITY of 6 bytes",
     lambda c: c.send(raw_frame(PRIORITY, 0, 1, u32(0) + b"\x10\x00")) or 1,
     STREAM(E.FRAME_SIZE_ERROR)),
    ("4.2", "GOAWAY of 7 bytes",
     lambda c: c.send(raw_frame(GOAWAY, 0, 0, u32(0) + b"\x00\x00\x00")),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    ("4.2", "PING ACK of 7 bytes",
     lambda c: c.send(raw_frame(PING, ACK, 0, b"1234567")), GOAWAY_(E.FRAME_SIZE_ERROR)),
    # 4.3 / 6.10: a field block is contiguous frames
    ("4.3", "PING inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c)) + ping()),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "SETTINGS inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(SETTINGS, 0, 0, b"")),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "WINDOW_UPDATE inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c)) + wu(0, 100)),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "RST_STREAM of the same stream inside a field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(RST_STREAM, 0, 1, u32(E.CANCEL))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("4.3", "HEADERS of the same stream inside its field block",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(HEADERS, END_STREAM | END_HEADERS, 1, get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    # 5.1 stream states
    ("5.1", "PUSH_PROMISE on an idle stream",
     lambda c: c.send(raw_frame(PUSH_PROMISE, END_HEADERS, 1, u32(2) + get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "CONTINUATION on a half-closed (remote) stream",
     lambda c: c.send(raw_frame(CONTINUATION, END_HEADERS, half_closed(c), literal(b"a", b"b"))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("5.1", "DATA on a stream a higher one closed while idle",
     lambda c: then(lambda: headers(c, sid=3), lambda: c.send(raw_frame(DATA, 0, 1, b"x")),
                    lambda: 1),
     STREAM(E.STREAM_CLOSED)),
    ("5.1", "an unknown frame type on a half-closed (remote) stream is ignored",
     lambda c: c.send(raw_frame(0x24, 0, half_closed(c), b"x")), ALIVE),
    ("5.1", "RST_STREAM on an open stream closes it, the connection goes on",
     lambda c: c.send(raw_frame(RST_STREAM, 0, open_stream(c), u32(E.CANCEL))), ALIVE),
    # 5.3 priority
    ("5.3.1", "PRIORITY of an open stream depending on itself",
     lambda c: c.send(raw_frame(PRIORITY, 0, open_stream(c), u32(1) + b"\x10")) or 1,
     STREAM(E.PROTOCOL_ERROR)),
    ("5.3.1", "PRIORITY of a half-closed stream depending on itself",
     lambda c: c.send(raw_frame(PRIORITY, 0, half_closed(c), u32(1) + b"\x10")) or 1,
     STREAM(E.PROTOCOL_ERROR)),
    ("5.3.2", "an exclusive PRIORITY on an idle stream, then the stream, is served",
     lambda c: c.send(raw_frame(PRIORITY, 0, 1, u32(0x80000003) + b"\x00")) or headers(c),
     STATUS(200)),
    # 5.5 extensions: unknown types anywhere outside a field block
    ("5.5", "an unknown frame type on an idle stream does not open it",
     lambda c: c.send(raw_frame(0x22, 0, 7, b"x")) or headers(c, sid=1), STATUS(200)),
    ("5.5", "an unknown frame type of SETTINGS_MAX_FRAME_SIZE is ignored",
     lambda c: c.send(raw_frame(0x23, 0, 0, b"u" * 16384)), ALIVE),
    ("5.5", "an unknown frame type between a request's DATA frames",
     lambda c: then(lambda: open_stream(c, path="/echo"),
                    lambda: c.send(raw_frame(DATA, 0, 1, b"one, ") + raw_frame(0x26, 0, 1, b"?")
                                   + raw_frame(DATA, END_STREAM, 1, b"two")),
                    lambda: 1), BODY(b"one, two")),
    # 6.1 DATA
    ("6.1", "DATA whose padding leaves no data is served",
     lambda c: c.send(raw_frame(DATA, PADDED | END_STREAM, open_stream(c, path="/echo"),
                                b"\x03\x00\x00\x00")) or 1, STATUS(200)),
    ("6.1", "DATA with padding of 255 is served",
     lambda c: c.send(raw_frame(DATA, PADDED | END_STREAM, open_stream(c, path="/echo"),
                                b"\xffbody" + b"\x00" * 255)) or 1, BODY(b"body")),
    # 6.2 HEADERS
    ("6.2", "HEADERS padded and with priority, the padding longer than the rest",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PADDED | PRIO,
                       block=b"\x05" + u32(0) + b"\x10" + get_prefix(c) + b"\x00"),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.2", "HEADERS padded and with priority is served",
     lambda c: headers(c, flags=END_STREAM | END_HEADERS | PADDED | PRIO,
                       block=b"\x02" + u32(0) + b"\x10" + hdr_block(c) + b"\x00\x00"),
     STATUS(200)),
    ("6.2", "END_STREAM on a HEADERS its CONTINUATION ends",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, hdr_block(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 1, b"")) or 1, STATUS(200)),
    # 6.3 PRIORITY
    ("6.3", "PRIORITY on an open stream is accepted",
     lambda c: c.send(raw_frame(PRIORITY, 0, open_stream(c), u32(0) + b"\x10")), ALIVE),
    # 6.5 SETTINGS: each value at and past its bounds
    ("6.5.2", "SETTINGS_ENABLE_PUSH 2^32-1",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(2, 0xffffffff))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5.2", "SETTINGS_INITIAL_WINDOW_SIZE 2^32-1",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(4, 0xffffffff))),
     GOAWAY_(E.FLOW_CONTROL_ERROR)),
    ("6.5.2", "SETTINGS_MAX_FRAME_SIZE 0",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, 0))), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5.2", "SETTINGS_MAX_FRAME_SIZE 2^14 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, 16384))) or headers(c),
     STATUS(200)),
    ("6.5.2", "SETTINGS_HEADER_TABLE_SIZE 2^32-1 is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(1, 0xffffffff))) or headers(c),
     STATUS(200)),
    ("6.5.2", "SETTINGS_MAX_HEADER_LIST_SIZE is accepted",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(6, 100))) or headers(c), STATUS(200)),
    ("6.5.2", "an invalid value after a valid one in the same frame",
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(5, 20000) + setting(5, 16383))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.5", "SETTINGS ACK with a payload and undefined flags",
     lambda c: c.send(raw_frame(SETTINGS, ACK | 0xf0, 0, setting(3, 100))),
     GOAWAY_(E.FRAME_SIZE_ERROR)),
    # 6.6 PUSH_PROMISE
    ("6.6", "PUSH_PROMISE on stream 0",
     lambda c: c.send(raw_frame(PUSH_PROMISE, END_HEADERS, 0, u32(2) + get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.6", "PUSH_PROMISE on a half-closed (remote) stream",
     lambda c: c.send(raw_frame(PUSH_PROMISE, END_HEADERS, half_closed(c),
                                u32(2) + get_prefix(c))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    # 6.8 GOAWAY
    ("6.8", "GOAWAY on a stream, with the reserved bit",
     lambda c: c.send(raw_frame(GOAWAY, 0, 0x80000001, u32(0) + u32(0))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    # 6.9 WINDOW_UPDATE and 6.9.1 the windows' bounds
    ("6.9", "WINDOW_UPDATE of 0 on a half-closed (remote) stream",
     lambda c: c.send(wu(half_closed(c), 0)) or 1, STREAM(E.PROTOCOL_ERROR)),
    ("6.9", "WINDOW_UPDATE of 0 after the reserved bit is taken off",
     lambda c: c.send(wu(0, 0x80000000)), GOAWAY_(E.PROTOCOL_ERROR)),
    ("6.9.1", "the connection window up to exactly 2^31-1 is accepted",
     lambda c: c.send(wu(0, 0x7fffffff - 65535)), ALIVE),
    ("6.9.1", "the connection window one past 2^31-1",
     lambda c: c.send(wu(0, 0x7fffffff - 65535 + 1)), GOAWAY_(E.FLOW_CONTROL_ERROR)),
    ("6.9.1", "a stream window up to exactly 2^31-1 is accepted",
     lambda c: c.send(wu(half_closed(c), 0x7fffffff - 65535)), ALIVE),
    ("6.9.1", "a stream window one past 2^31-1",
     lambda c: c.send(wu(half_closed(c), 0x7fffffff - 65535 + 1)) or 1,
     STREAM(E.FLOW_CONTROL_ERROR)),
    ("6.9.1", "a stream window at 2^31-1 after the initial size fell is accepted",
     # 65535 - 65535 = 0 (SETTINGS 0), then 2^31-1: exactly the maximum
     lambda c: c.send(raw_frame(SETTINGS, 0, 0, setting(4, 0))
                      + wu(half_closed(c), 0x7fffffff)), ALIVE),
    # 6.10 CONTINUATION
    ("6.10", "CONTINUATION after END_HEADERS on a half-closed stream's trailers",
     lambda c: then(lambda: open_stream(c, path="/echo"),
                    lambda: c.send(raw_frame(HEADERS, END_STREAM | END_HEADERS, 1,
                                             literal(b"x-t", b"1"))
                                   + raw_frame(CONTINUATION, END_HEADERS, 1,
                                               literal(b"x-u", b"2")))),
     GOAWAY_(E.PROTOCOL_ERROR)),
    # 8.1 an empty trailer block ends the request
    ("8.1", "an empty trailer block is served",
     lambda c: then(lambda: open_stream(c, path="/echo"),
                    lambda: c.send(raw_frame(DATA, 0, 1, b"body")
                                   + raw_frame(HEADERS, END_STREAM | END_HEADERS, 1, b"")),
                    lambda: 1), BODY(b"body")),
    ("8.1.1", "content-length 0 with END_STREAM on HEADERS is served",
     lambda c: headers(c, method="POST", path="/echo", extra=[("content-length", "0")]),
     STATUS(200)),
    ("8.1.1", "a body shorter than its content-length ended by trailers",
     lambda c: then(lambda: open_stream(c, path="/echo", extra=[("content-length", "10")]),
                    lambda: c.send(raw_frame(DATA, 0, 1, b"12345")
                                   + raw_frame(HEADERS, END_STREAM | END_HEADERS, 1,
                                               literal(b"x-t", b"1"))),
                    lambda: 1), STREAM(E.PROTOCOL_ERROR)),
    # RFC 7541, the decoder
    ("7541 2.3.3", "the newest dynamic entry is index 62",
     lambda c: then(lambda: served(c, plain_request(c, extra=indexed_literal(b"x-e", b"1"))),
                    lambda: headers(c, block=plain_request(c, b"/echo") + b"\xbe")),
     ECHOED(b"x-e: 1")),
    ("7541 2.3.3", "one past the dynamic table's entries",
     lambda c: then(lambda: served(c, plain_request(c, extra=indexed_literal(b"x-e", b"1"))),
                    lambda: headers(c, block=plain_request(c) + b"\xbf")),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 2.3.3", "the last static entry (61) is served",
     lambda c: headers(c, block=plain_request(c) + b"\xbd"), STATUS(200)),
    ("7541 4.2", "a table size update to 0 evicts every entry",
     lambda c: then(lambda: served(c, plain_request(c, extra=indexed_literal(b"x-e", b"1"))),
                    lambda: headers(c, block=b"\x20\x3f\xe1\x1f" + plain_request(c) + b"\xbe")),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 4.2", "two table size updates at the start are accepted",
     lambda c: headers(c, block=b"\x20\x3f\xe1\x1f" + plain_request(c)), STATUS(200)),
    ("7541 4.2", "a table size update after a field, in a CONTINUATION",
     lambda c: c.send(raw_frame(HEADERS, END_STREAM, 1, get_prefix(c))
                      + raw_frame(CONTINUATION, END_HEADERS, 1, b"\x20")),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 4.2", "a table size update at the end of a block",
     lambda c: headers(c, block=plain_request(c) + b"\x3f\xe1\x1f"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 4.4", "an entry larger than the table empties it",
     lambda c: then(lambda: served(c, plain_request(c, extra=indexed_literal(b"x-e", b"1"))),
                    lambda: served(c, plain_request(c, extra=indexed_literal(b"x-big",
                                                                             b"b" * 4100))),
                    lambda: headers(c, block=plain_request(c) + b"\xbe")),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.1", "a string length that overflows",
     lambda c: headers(c, block=plain_request(c) + b"\x00\x7f\xff\xff\xff\xff\xff\xff\xff\xff\x0f"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.1", "an index that overflows",
     lambda c: headers(c, block=plain_request(c) + b"\x7f\xff\xff\xff\xff\xff\xff\xff\xff\x0f"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.1", "a block that ends within an integer",
     lambda c: headers(c, block=plain_request(c) + b"\x00\x7f\xff"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 5.2", "an empty Huffman string is served",
     lambda c: headers(c, block=plain_request(c, b"/echo") + b"\x00\x03x-h\x80"),
     ECHOED(b"x-h: \n")),
    ("7541 5.2", "a Huffman name with the EOS symbol",
     lambda c: headers(c, block=plain_request(c) + b"\x00\x84\xff\xff\xff\xff\x01v"),
     GOAWAY_(E.COMPRESSION_ERROR)),
    ("7541 6.3", "a table size update above the maximum after one within it",
     lambda c: headers(c, block=b"\x20\x3f\xe2\x1f" + plain_request(c)),
     GOAWAY_(E.COMPRESSION_ERROR)),
]


# 8 HTTP semantics: requests that are malformed (8.1.1: a stream error of
# type PROTOCOL_ERROR), as (section, requirement, pseudo fields or None for
# the usual four, regular fields, HEADERS flags).
REQ = [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"),
       (":path", "/respond")]


def without(name):
    return [f for f in REQ if f[0] != name]


MALFORMED = [
    ("8.2", "an upper-case field name", None, [("X-Upper", "1")]),
    ("8.2", "a field name with a space", None, [("x bad", "1")]),
    ("8.2", "a field name with a colon inside", None, [("x:bad", "1")]),
    ("8.2", "an empty field name", None, [("", "1")]),
    ("8.2.1", "a field value with NUL", None, [("x-bad", "a\x00b")]),
    ("8.2.1", "a field value with CR", None, [("x-bad", "a\rb")]),
    ("8.2.1", "a field value with LF", None, [("x-bad", "a\nb")]),
    ("8.2.1", "a field value with leading whitespace", None, [("x-bad", " ab")]),
    ("8.2.1", "a field value with trailing whitespace", None, [("x-bad", "ab\t")]),
    ("8.2.2", "connection", None, [("connection", "keep-alive")]),
    ("8.2.2", "keep-alive", None, [("keep-alive", "timeout=5")]),
    ("8.2.2", "proxy-connection", None, [("proxy-connection", "keep-alive")]),
    ("8.2.2", "transfer-encoding", None, [("transfer-encoding", "chunked")]),
    ("8.2.2", "upgrade", None, [("upgrade", "h2c")]),
    ("8.2.2", "TE other than trailers", None, [("te", "gzip")]),
    ("8.3", "an unknown pseudo-header field", REQ + [(":foo", "bar")], []),
    ("8.3", "a response pseudo-header field in a request", REQ + [(":status", "200")], []),
    ("8.3", "a pseudo-header field after a regular one",
     REQ[:2] + [("x-a", "1")] + REQ[2:], []),
    ("8.3.1", "no :method", without(":method"), []),
    ("8.3.1", "no :scheme", without(":scheme"), []),
    ("8.3.1", "no :path", without(":path"), []),
    ("8.3.1", "an empty :path", without(":path") + [(":path", "")], []),
    ("8.3.1", "two :method", REQ + [(":method", "GET")], []),
    ("8.3.1", "two :scheme", REQ + [(":scheme", "http")], []),
    ("8.3.1", "two :path", REQ + [(":path", "/respond")], []),
    ("8.3.1", "two :authority", REQ + [(":authority", "localhost")], []),
    ("8.3.1", ":authority and a host that differs", None, [("host", "other.example")]),
    ("8.5", "CONNECT with :path", [(":method", "CONNECT"), (":authority", "localhost:80"),
                                   (":path", "/")], []),
    ("8.5", "CONNECT without :authority", [(":method", "CONNECT")], []),
    ("8.5", "CONNECT with :scheme", [(":method", "CONNECT"), (":scheme", "http"),
                                     (":authority", "localhost:80")], []),
    ("8.3", ":protocol without SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 3)",
     REQ + [(":protocol", "websocket")], []),
    ("8.3", "a pseudo-header field in upper case", without(":path") + [(":PATH", "/")], []),
    ("8.3.1", "two :path, the second empty", REQ + [(":path", "")], []),
    # Values are checked a word (8 or 4 bytes) at a time, the last word
    # overlapping: a bad byte in each place and at each length.
    ("8.2.1", "a value of 5 bytes with NUL", None, [("x-bad", "ab\x00de")]),
    ("8.2.1", "a value of 7 bytes with CR last", None, [("x-bad", "abcdef\r")]),
    ("8.2.1", "a value of 12 bytes with NUL in its first word", None,
     [("x-bad", "abc\x00efghijkl")]),
    ("8.2.1", "a value of 13 bytes with CR only in its last word", None,
     [("x-bad", "abcdefghijk\rm")]),
    ("8.2.1", "a value of 24 bytes with LF in its third word", None,
     [("x-bad", "a" * 20 + "\n" + "bcd")]),
    ("8.2.1", "a value of 16 bytes with LF last", None, [("x-bad", "a" * 15 + "\n")]),
    ("8.2.1", "a long value with trailing SP", None, [("x-bad", "abcdefghijkl ")]),
    ("8.2.1", "a long value with leading HTAB", None, [("x-bad", "\tabcdefghijkl")]),
    ("8.2.1", "a value that is one SP", None, [("x-bad", " ")]),
    ("8.2.1", "a :path with LF", without(":path") + [(":path", "/respond\n")], []),
    ("8.2.1", "a :method with CR", without(":method") + [(":method", "GE\rT")], []),
    ("8.2.1", "an :authority with NUL", without(":authority") + [(":authority", "local\x00host")],
     []),
    ("8.2.1", "a :scheme with trailing SP", without(":scheme") + [(":scheme", "http ")], []),
    ("8.2", "an upper-case letter at a long name's end", None, [("x-long-field-namE", "1")]),
    ("8.2", "a field name with a byte over 0x7f", None, [(b"x-\xe9t\xe9", b"1")]),
    ("8.2", "a field name with DEL", None, [("x-del\x7f", "1")]),
    ("8.2", "a field name with NUL", None, [("x\x00y", "1")]),
    ("8.2.2", "TE with trailers and more", None, [("te", "trailers, gzip")]),
    ("8.2.2", "a connection-specific field after a valid one", None,
     [("x-ok", "1"), ("transfer-encoding", "identity")]),
    ("8.3", "a pseudo-header name one letter off (:methoD)",
     [(":methoD", "GET")] + without(":method"), []),
    ("8.3", "a pseudo-header name one letter off (:authoritY)",
     without(":authority") + [(":authoritY", "localhost")], []),
    ("8.3", "a pseudo-header name a prefix of one (:pat)", REQ + [(":pat", "/")], []),
    ("8.3", "a pseudo-header field after a regular one in a long block",
     REQ[:3] + [("user-agent", "a" * 40), ("accept", "*/*")] + REQ[3:], []),
]


def malformed_rows():
    out = []
    for sec, what, pseudo, regular in MALFORMED:
        out.append(pytest.param(sec, what, pseudo, regular, id="%s %s" % (sec, what)))
    return out


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("sec,what,action,exp", [
    pytest.param(*r, id="%s %s" % (r[0], r[1])) for r in ROWS])
def test_frames(srv, tls, sec, what, action, exp):
    with connect(srv, tls=tls) as c:
        sid = action(c)
        check(c, sid if isinstance(sid, int) and sid > 0 else 1, exp, what)


@pytest.mark.parametrize("sec,what,pseudo,regular", malformed_rows())
def test_malformed_request(srv, tls, sec, what, pseudo, regular):
    with connect(srv, tls=tls) as c:
        fields = [(k, c.scheme if k == ":scheme" and v == "http" else v)
                  for k, v in (pseudo if pseudo is not None else REQ)] + list(regular)
        sid = headers(c, block=c.block(fields))
        check(c, sid, STREAM(E.PROTOCOL_ERROR), what)
        # The same fields again: now references to the dynamic table, whose
        # entries were checked as they entered it.
        again = c.block(fields)
        sid = headers(c, block=again)
        check(c, sid, STREAM(E.PROTOCOL_ERROR), what + " (from the dynamic table)")
        check(c, headers(c), STATUS(200), "then a good request")


# ---------------------------------------------------------------- sequences

def test_3_4_server_preface_is_settings(srv):
    for tls in (False, True):
        with h2raw.H2(srv.port if tls else srv.port2, tls=tls) as c:
            first = c.read_frame(3)
            assert isinstance(first, h2raw.SettingsFrame) and "ACK" not in first.flags, first
            frames = c.frames(timeout=3, until=lambda f: f is None or (
                isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
            assert frames and isinstance(frames[-1], h2raw.SettingsFrame), frames


@pytest.mark.parametrize("first", [ping(), raw_frame(SETTINGS, ACK, 0), wu(0, 100),
                                   raw_frame(0x20, 0, 0, b"ext")],
                         ids=["PING", "SETTINGS ACK", "WINDOW_UPDATE", "an unknown type"])
def test_3_4_preface_not_followed_by_settings(srv, tls, first):
    """The client preface's SETTINGS must be its first frame (an ACK
    acknowledges nothing yet, an extension frame is not SETTINGS)."""
    with h2raw.H2(srv.port if tls else srv.port2, tls=tls, preface=False) as c:
        c.send(h2raw.PREFACE + first)
        check(c, None, GOAWAY_(E.PROTOCOL_ERROR), "a preface not followed by SETTINGS")


def test_3_4_invalid_preface_over_tls(srv):
    with h2raw.H2(srv.port, tls=True, preface=False) as c:
        c.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + raw_frame(SETTINGS, 0, 0))
        g = c.goaway(timeout=4)
        assert g is None or g.error_code == E.PROTOCOL_ERROR, g
        assert c.closed_within(4)


@pytest.mark.parametrize("port", ["port2", "port3"], ids=["h2c port", "http/1 port"])
def test_3_upgrade_h2c_is_ignored(srv, port):
    """RFC 9113 3.1: the Upgrade to h2c is deprecated; the request is
    served over HTTP/1.1."""
    with h.Conn(getattr(srv, port)) as c:
        c.send("GET /hello.txt HTTP/1.1\r\nHost: localhost\r\n"
               "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
               "HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.version == "HTTP/1.1", r
    assert r.body == b"Hello, HTTP/2!\n"
    assert r.header("upgrade") is None


def test_6_5_3_settings_are_acknowledged(srv, tls):
    with connect(srv, tls=tls) as c:
        c.send(raw_frame(SETTINGS, 0, 0, setting(4, 100000) + setting(1, 8192)))
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(f, h2raw.SettingsFrame))
        assert isinstance(frames[-1], h2raw.SettingsFrame) and "ACK" in frames[-1].flags
        assert frames[-1].body_len == 0


def test_6_7_ping_is_answered_and_ack_is_not(srv, tls):
    with connect(srv, tls=tls) as c:
        c.send(ping(b"\x00\x01\x02\x03\x04\x05\x06\x07", flags=ACK))   # not answered
        c.send(ping(b"abcdefgh"))
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(f, h2raw.PingFrame))
        assert isinstance(frames[-1], h2raw.PingFrame), frames
        assert "ACK" in frames[-1].flags and frames[-1].opaque_data == b"abcdefgh"


def test_6_8_client_goaway_lets_the_stream_finish(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c)
        c.send(raw_frame(GOAWAY, 0, 0, u32(0) + u32(E.NO_ERROR)))   # no pushed stream
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"Hello, world!"


def data_frames(c, sid, timeout=3):
    frames = c.frames(timeout=timeout, until=lambda f: f is None or (
        isinstance(f, h2raw.DataFrame) and f.stream_id == sid))
    return [f for f in frames if isinstance(f, h2raw.DataFrame) and f.stream_id == sid]


def test_6_9_1_initial_window_of_one_byte(srv, tls):
    with connect(srv, tls=tls, settings={E.INITIAL_WINDOW_SIZE: 1}) as c:
        sid = headers(c, path="/hello.txt")
        got = data_frames(c, sid)
        assert len(got) == 1 and got[0].data == b"H", got
        assert not data_frames(c, sid, timeout=0.5), "sent past the window"
        c.send(wu(sid, 100))
        _, body, _ = c.response(sid)
        assert body == b"ello, HTTP/2!\n"


@pytest.mark.parametrize("why", ["response before the body", "malformed request"])
def test_5_1_frames_after_the_servers_rst_stream_are_ignored(srv, tls, why):
    """RFC 9113 5.1: after sending RST_STREAM, frames still in flight on the
    stream are ignored, not errors."""
    with connect(srv, tls=tls) as c:
        extra = [("connection", "close")] if why == "malformed request" else []
        sid = headers(c, flags=END_HEADERS, path="/respond", method="POST", extra=extra)
        c.send(raw_frame(DATA, 0, sid, b"part"))
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(f, h2raw.RstStreamFrame))
        assert isinstance(frames[-1], h2raw.RstStreamFrame), frames
        c.send(raw_frame(DATA, 0, sid, b"more") + wu(sid, 10)
               + raw_frame(HEADERS, END_STREAM | END_HEADERS, sid, c.block([("x-t", "1")])))
        expect_alive(c, why)
        check(c, headers(c), STATUS(200), "then a new stream")


def test_5_4_2_no_rst_stream_in_answer_to_rst_stream(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = reset_by_client(c)
        c.send(ping(b"after-rs"))
        frames = c.frames(timeout=3, until=lambda f: f is None or (
            isinstance(f, h2raw.PingFrame) and f.opaque_data == b"after-rs"))
        assert frames and frames[-1] is not None, frames
        more = c.frames(timeout=0.5)
        assert not any(isinstance(f, (h2raw.RstStreamFrame, h2raw.GoAwayFrame))
                       for f in frames + more if f is not None), frames + more
        assert h2raw.rst_code(frames + more, sid) is None


def test_6_5_3_settings_values_are_processed_in_order(srv, tls):
    with h2raw.H2(srv.port if tls else srv.port2, tls=tls, preface=False) as c:
        c.scheme = "https" if tls else "http"
        c.send(h2raw.PREFACE + raw_frame(SETTINGS, 0, 0, setting(4, 100) + setting(4, 1)))
        sid = headers(c, path="/hello.txt")
        got = data_frames(c, sid)
        assert len(got) == 1 and got[0].data == b"H", got


def test_6_9_2_initial_window_change_can_make_a_window_negative(srv, tls):
    with connect(srv, tls=tls, settings={E.INITIAL_WINDOW_SIZE: 5}) as c:
        sid = headers(c, path="/hello.txt")
        got = data_frames(c, sid)
        assert b"".join(f.data for f in got) == b"Hello"
        # 5 - 5 sent = 0; the initial size 2 makes it -3 (RFC 9113 6.9.2)
        c.send(raw_frame(SETTINGS, 0, 0, setting(4, 2)))
        c.send(wu(sid, 3))           # back to 0: nothing may be sent
        assert not data_frames(c, sid, timeout=0.5), "sent on a window <= 0"
        c.send(wu(sid, 1))           # 1 byte
        got = data_frames(c, sid)
        assert len(got) == 1 and got[0].data == b",", got
        c.send(wu(sid, 100))
        _, body, _ = c.response(sid)
        assert body == b" HTTP/2!\n"


def test_6_9_2_initial_window_change_increases_open_windows(srv, tls):
    with connect(srv, tls=tls, settings={E.INITIAL_WINDOW_SIZE: 0}) as c:
        sid = headers(c, path="/hello.txt")
        assert not data_frames(c, sid, timeout=0.5)
        c.send(raw_frame(SETTINGS, 0, 0, setting(4, 65535)))
        _, body, _ = c.response(sid)
        assert body == b"Hello, HTTP/2!\n"


def test_5_1_2_concurrent_streams_over_the_limit(srv, tls):
    with connect(srv, tls=tls) as c:
        limit = c.server_settings[E.MAX_CONCURRENT_STREAMS]
        out = b""
        for _ in range(limit + 1):
            out += raw_frame(HEADERS, END_STREAM | END_HEADERS, c.new_id(), hdr_block(c, "/hold"))
        c.send(out)
        last = c.next_id - 2
        frames = c.frames(timeout=5, until=lambda f: f is None or isinstance(
            f, (h2raw.RstStreamFrame, h2raw.GoAwayFrame)))
        f = frames[-1]
        assert (isinstance(f, h2raw.RstStreamFrame) and f.stream_id == last
                and f.error_code in (E.REFUSED_STREAM, E.PROTOCOL_ERROR)) or (
            isinstance(f, h2raw.GoAwayFrame) and f.error_code == E.PROTOCOL_ERROR), frames


def test_6_10_field_block_split_over_continuations(srv, tls):
    with connect(srv, tls=tls) as c:
        block = hdr_block(c)
        c.send(raw_frame(HEADERS, END_STREAM, 1, block[:2])
               + raw_frame(CONTINUATION, 0, 1, block[2:3])
               + raw_frame(CONTINUATION, 0, 1, b"")
               + raw_frame(CONTINUATION, END_HEADERS, 1, block[3:]))
        check(c, 1, STATUS(200), "split block")


def test_6_10_representations_cut_by_every_frame(srv, tls):
    """Each HEADERS and CONTINUATION ends within a representation (an
    integer, a string's length, a Huffman string): each one's octets wait
    for the next frame's; the request and the table it fills are whole."""
    with connect(srv, tls=tls) as c:
        extra = [("x-long-name-for-a-field", "a value of some length, Huffman-coded; " * 3 + "end")]
        for _ in range(2):             # literals, then references to the table
            block = hdr_block(c, path="/echo", extra=extra)
            cuts = sorted({1, 3, len(block) // 3, len(block) // 2, len(block) - 2, len(block)})
            sid = c.new_id()
            frames, last = b"", 0
            for i, cut in enumerate(cuts):
                flags = END_HEADERS if cut == len(block) else 0
                frames += raw_frame(HEADERS if i == 0 else CONTINUATION,
                                    flags | (END_STREAM if i == 0 else 0), sid, block[last:cut])
                last = cut
            c.send(frames)
            hdrs, body, _ = c.response(sid)
            assert h2raw.status(hdrs) == 200, hdrs
            assert ("%s: %s" % extra[0]).encode() in body, body


def test_6_10_block_ending_within_a_representation(srv, tls):
    with connect(srv, tls=tls) as c:
        block = hdr_block(c) + literal(b"x-cut", b"value")
        c.send(raw_frame(HEADERS, END_STREAM, 1, block[:-3])
               + raw_frame(CONTINUATION, END_HEADERS, 1, b""))
        check(c, 1, GOAWAY_(E.COMPRESSION_ERROR), "a block that ends within a field")


# 8.1 messages: bodies, trailers, content-length

def post(c, path, chunks, extra=(), trailers=None, sid=None, method="POST"):
    sid = headers(c, sid=sid, flags=END_HEADERS, path=path, method=method, extra=extra)
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1 and trailers is None
        c.send(raw_frame(DATA, END_STREAM if last else 0, sid, chunk))
    if trailers is not None:
        c.send(raw_frame(HEADERS, END_STREAM | END_HEADERS, sid, c.block(trailers)))
    return sid


@pytest.mark.parametrize("method,path,want", [
    ("POST", "/echo", b"part one, part two"), ("POST", "/respond", b"Hello, world!"),
    ("GET", "/hello.txt", b"Hello, HTTP/2!\n")])
def test_8_1_request_trailers_are_accepted(srv, method, path, want):
    for tls in (False, True):
        with connect(srv, tls=tls) as c:
            sid = post(c, path, [b"part one, ", b"part two"], trailers=[("x-checksum", "abc")],
                       method=method)
            hdrs, body, frames = c.response(sid)
            assert h2raw.status(hdrs) == 200 and body == want, frames
            expect_alive(c, "after trailers")


def test_8_1_trailers_without_data(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = post(c, "/echo", [], trailers=[("x-t", "1")])
        hdrs, body, frames = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"", frames


def test_8_1_trailers_without_end_stream(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, flags=END_HEADERS, path="/echo", method="POST")
        c.send(raw_frame(DATA, 0, sid, b"body"))
        c.send(raw_frame(HEADERS, END_HEADERS, sid, c.block([("x-t", "1")])))
        check(c, sid, STREAM(E.PROTOCOL_ERROR), "trailers without END_STREAM")


def test_8_1_pseudo_header_in_trailers(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = post(c, "/echo", [b"body"], trailers=[(":path", "/x")])
        check(c, sid, STREAM(E.PROTOCOL_ERROR), "pseudo-header in trailers")


@pytest.mark.parametrize("length,chunks", [
    ("20", [b"x" * 10]), ("5", [b"x" * 10]), ("10", [b"x" * 4, b"x" * 4]),
    ("10", [b"x" * 6, b"x" * 6]), ("3", [])],
    ids=["less", "more", "sum less", "sum more", "END_STREAM on HEADERS"])
def test_8_1_1_content_length_mismatch(srv, tls, length, chunks):
    with connect(srv, tls=tls) as c:
        if chunks:
            sid = post(c, "/echo", chunks, extra=[("content-length", length)])
        else:
            sid = headers(c, path="/echo", method="POST", extra=[("content-length", length)])
        check(c, sid, STREAM(E.PROTOCOL_ERROR), "content-length %s" % length)


def test_8_1_1_content_length_matching_is_served(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = post(c, "/echo", [b"x" * 6, b"y" * 4], extra=[("content-length", "10")])
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"xxxxxxyyyy"


def test_8_2_3_cookie_crumbs(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, path="/echo", extra=[("cookie", "a=1"), ("cookie", "b=2")])
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and b"a=1; b=2" in body, body


def test_8_2_1_valid_values_of_every_length_reach_the_application(srv, tls):
    """The word-at-a-time check lets every valid value through unchanged:
    each length from 1 to 26, an HTAB and other controls inside one, bytes
    over 0x7f, an empty value."""
    vals = ["abcdefghijklmnopqrstuvwxyz"[:n] for n in range(1, 27)]
    extra = [("x-v%02d" % n, v) for n, v in enumerate(vals, 1)]
    extra += [("x-tab", "a\tb\tcdefghij"), ("x-ctl", "a\x01b\x0bc\x0cd\x7f"),
              ("x-empty", ""), ("x-high", "caf\xe9 cr\xe8me")]
    with connect(srv, tls=tls) as c:
        for _ in range(2):          # literals, then references to the table
            sid = headers(c, path="/echo", extra=extra)
            hdrs, body, _ = c.response(sid)
            assert h2raw.status(hdrs) == 200, hdrs
            for name, value in extra:
                assert ("%s: %s" % (name, value)).encode("utf-8") in body, (name, body)


def test_8_2_2_te_trailers_is_served(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, path="/echo", extra=[("te", "trailers")])
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and b"te: trailers" in body, body


def test_8_3_1_host_without_authority(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, pseudo=[(":method", "GET"), (":scheme", c.scheme), (":path", "/echo")],
                      extra=[("host", "localhost")])
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200, hdrs


def test_8_3_1_authority_and_same_host(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, path="/echo", extra=[("host", "LocalHost")])
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200, hdrs


def test_8_5_connect_is_answered_405(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = headers(c, pseudo=[(":method", "CONNECT"), (":authority", "localhost:443")])
        hdrs, _, _ = c.response(sid)
        assert h2raw.status(hdrs) == 405
        expect_alive(c, "after CONNECT")


def test_8_request_trailers_reach_a_proxied_upstream(sws, origin):
    import json
    o = origin()
    s = sws(server="http2 on;\n        location / { proxy_pass http://%s; }\n"
                   "        location /s/ { proxy_pass http://%s/; proxy_request_buffering off; }"
                   % (o.addr, o.addr))
    for path in ("/echo", "/s/echo"):        # buffered, then streamed
        with h2raw.H2(s.port) as c:
            c.scheme = "http"
            sid = post(c, path, [b"to the ", b"origin"], trailers=[("x-trailer", "t")])
            hdrs, body, frames = c.response(sid)
            assert h2raw.status(hdrs) == 200, (path, frames)
            got = json.loads(body)
            assert got["method"] == "POST" and got["body"] == "to the origin", (path, got)
            expect_alive(c, path)


@pytest.mark.parametrize("tls", [False, True], ids=["h2c", "tls without alpn"])
def test_3_4_invalid_preface_after_its_first_line(srv, tls):
    """The first line of the preface, then not the rest: an HTTP/2 client
    with an invalid preface (not HTTP/1), on a port that serves both."""
    if tls:
        sock = t.connect(srv.port, verify=False)
    else:
        sock = socket.create_connection(("127.0.0.1", srv.port2), timeout=5)
    with sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + raw_frame(SETTINGS, 0, 0))
        data = b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                d = sock.recv(4096)
            except OSError:
                break
            if not d:
                break
            data += d
    assert data == raw_frame(GOAWAY, 0, 0, u32(0) + u32(E.PROTOCOL_ERROR)), data


def test_9_2_h2_over_tls_1_2_and_1_3(srv):
    import ssl
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        ctx = t.context(verify=False, alpn=["h2"], min_version=version, max_version=version)
        raw = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            assert s.selected_alpn_protocol() == "h2" and s.version() in ("TLSv1.2", "TLSv1.3")
            s.sendall(h2raw.PREFACE + raw_frame(SETTINGS, 0, 0) + ping())
            s.settimeout(5)
            data = b""
            deadline = time.monotonic() + 5
            while ping(flags=ACK) not in data and time.monotonic() < deadline:
                data += s.recv(4096)
            assert ping(flags=ACK) in data, (version, data)


# ---------------------------------------------------------------- more sequences

def test_3_4_preface_and_settings_in_pieces(srv, tls):
    """The preface and the first SETTINGS in several writes (and so, most
    likely, reads), one cut within each."""
    with h2raw.H2(srv.port if tls else srv.port2, tls=tls, preface=False) as c:
        c.scheme = "https" if tls else "http"
        data = h2raw.PREFACE + raw_frame(SETTINGS, 0, 0, setting(4, 65535))
        for a, b in ((0, 5), (5, 20), (20, 24), (24, 30), (30, len(data))):
            c.send(data[a:b])
            time.sleep(0.02)
        check(c, headers(c), STATUS(200), "after a preface in pieces")


def test_4_2_data_frames_within_the_clients_max_frame_size(srv, tls):
    """SETTINGS_MAX_FRAME_SIZE is the client's default (2^14): no DATA frame
    of ours is longer, however wide the windows."""
    with connect(srv, tls=tls, settings={E.INITIAL_WINDOW_SIZE: 1 << 20}) as c:
        c.send(wu(0, 1 << 20))
        sid = headers(c, path="/big.bin")
        hdrs, body, frames = c.response(sid, window_update=False)
        sizes = [len(f.data) for f in frames if isinstance(f, h2raw.DataFrame)]
        assert body == BIG and max(sizes) <= 16384, sizes


def test_6_9_1_the_connection_window_bounds_a_response(srv, tls):
    """A stream window far wider than the connection's: the response stops
    at the connection window (65535), whatever SETTINGS_INITIAL_WINDOW_SIZE
    says (6.9.2: it changes stream windows only), until a WINDOW_UPDATE on
    stream 0."""
    with connect(srv, tls=tls, settings={E.INITIAL_WINDOW_SIZE: 1 << 30}) as c:
        sid = headers(c, path="/big.bin")
        got = b""
        deadline = time.monotonic() + 5
        while len(got) < 65535 and time.monotonic() < deadline:
            got += b"".join(f.data for f in data_frames(c, sid, timeout=1))
        assert len(got) == 65535, len(got)
        assert not data_frames(c, sid, timeout=0.5), "sent past the connection window"
        c.send(wu(0, len(BIG)))
        _, rest, _ = c.response(sid, window_update=False)
        assert got + rest == BIG


def test_5_4_1_goaway_names_the_last_stream_processed(srv, tls):
    with connect(srv, tls=tls) as c:
        finished(c)
        finished(c)
        c.send(raw_frame(DATA, 0, 0, b"x"))
        g = c.goaway(timeout=5)
        assert g is not None and g.error_code == E.PROTOCOL_ERROR, g
        assert g.last_stream_id == 3, g.last_stream_id
        assert c.closed_within(5)


def test_6_8_client_goaway_with_an_unknown_code_and_debug_data(srv, tls):
    """7: an unknown error code means nothing special; the stream the
    client opened is still answered."""
    with connect(srv, tls=tls) as c:
        sid = headers(c)
        c.send(raw_frame(GOAWAY, 0, 0, u32(0) + u32(0xdeadbeef) + b"debug data"))
        hdrs, body, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200 and body == b"Hello, world!"


# 4.3: a field block is decoded whatever becomes of its stream, or the two
# tables part ways. Each case puts "x-e: 1" in the server's table on a
# stream in error; the next request refers to it (index 62).
def _closed_stream(c):
    sid = headers(c, block=plain_request(c))
    c.response(sid)
    return sid, E.STREAM_CLOSED


def _reset_stream(c):
    sid = c.new_id()
    c.send(raw_frame(HEADERS, END_HEADERS, sid, plain_request(c, b"/hold"))
           + raw_frame(RST_STREAM, 0, sid, u32(E.CANCEL)))
    return sid, E.STREAM_CLOSED


BLOCK_CASES = {
    "on a closed stream": lambda c: _closed_stream(c) + (END_STREAM | END_HEADERS, b""),
    "on a stream the client reset": lambda c: _reset_stream(c) + (END_STREAM | END_HEADERS, b""),
    "of a stream depending on itself":
        lambda c: (c.next_id, E.PROTOCOL_ERROR, END_STREAM | END_HEADERS | PRIO,
                   u32(c.next_id) + b"\x10"),
}


@pytest.mark.parametrize("case", list(BLOCK_CASES))
def test_4_3_blocks_of_streams_in_error_still_fill_the_table(srv, tls, case):
    with connect(srv, tls=tls) as c:
        sid, code, flags, prefix = BLOCK_CASES[case](c)
        if sid == c.next_id:
            c.new_id()
        c.send(raw_frame(HEADERS, flags, sid,
                         prefix + plain_request(c, extra=indexed_literal(b"x-e", b"1"))))
        frames = c.frames(timeout=5, until=lambda f: f is None or isinstance(
            f, h2raw.GoAwayFrame) or (isinstance(f, h2raw.RstStreamFrame) and f.stream_id == sid))
        last = frames[-1] if frames else None
        assert isinstance(last, h2raw.RstStreamFrame) and last.error_code == code, frames
        body = served(c, plain_request(c, b"/echo", b"\xbe"))
        assert b"x-e: 1\n" in body, body


def test_4_3_trailers_after_the_servers_reset_still_fill_the_table(srv, tls):
    """Frames in flight after our RST_STREAM are ignored, but a field block
    among them is decoded all the same."""
    with connect(srv, tls=tls) as c:
        sid = open_stream(c, path="/echo", extra=[("content-length", "2")])
        c.send(raw_frame(DATA, 0, sid, b"too long"))
        frames = c.frames(timeout=5, until=lambda f: f is None
                          or isinstance(f, h2raw.RstStreamFrame))
        assert h2raw.rst_code(frames, sid) == E.PROTOCOL_ERROR, frames
        c.send(raw_frame(HEADERS, END_STREAM | END_HEADERS, sid, indexed_literal(b"x-e", b"1")))
        body = served(c, plain_request(c, b"/echo", b"\xbe"))
        assert b"x-e: 1\n" in body, body


def test_5_1_2_a_refused_stream_fills_the_table_and_a_closed_one_frees_its_slot(srv, tls):
    """Streams up to SETTINGS_MAX_CONCURRENT_STREAMS are open (waiting for
    an origin that never answers); one more is refused with a stream error
    (REFUSED_STREAM or PROTOCOL_ERROR, 5.1.2), its field block decoded
    still (4.3); once the client resets one, a new stream is served."""
    with connect(srv, tls=tls) as c:
        limit = c.server_settings[E.MAX_CONCURRENT_STREAMS]
        held = [c.new_id() for _ in range(limit)]
        c.send(b"".join(raw_frame(HEADERS, END_STREAM | END_HEADERS, sid,
                                  plain_request(c, b"/hold")) for sid in held))
        expect_alive(c, "the streams up to the limit")
        refused = c.new_id()
        c.send(raw_frame(HEADERS, END_STREAM | END_HEADERS, refused,
                         plain_request(c, extra=indexed_literal(b"x-e", b"1"))))
        frames = c.frames(timeout=5, until=lambda f: f is None or isinstance(
            f, (h2raw.RstStreamFrame, h2raw.GoAwayFrame)))
        f = frames[-1]
        assert isinstance(f, h2raw.RstStreamFrame) and f.stream_id == refused, frames
        assert f.error_code in (E.REFUSED_STREAM, E.PROTOCOL_ERROR), f.error_code
        c.send(raw_frame(RST_STREAM, 0, held[0], u32(E.CANCEL)))
        body = served(c, plain_request(c, b"/echo", b"\xbe"))
        assert b"x-e: 1\n" in body, body


def test_6_10_the_end_stream_bit_of_a_continuation_is_ignored(srv, tls):
    """END_STREAM is a flag of HEADERS only: 0x1 on a CONTINUATION does not
    end the request, whose body follows."""
    with connect(srv, tls=tls) as c:
        sid = c.new_id()
        c.send(raw_frame(HEADERS, 0, sid, hdr_block(c, path="/echo", method="POST"))
               + raw_frame(CONTINUATION, END_HEADERS | END_STREAM, sid, b""))
        c.send(raw_frame(DATA, END_STREAM, sid, b"the body"))
        check(c, sid, BODY(b"the body"), "a body after a CONTINUATION with bit 0x1")


def test_6_10_trailers_split_over_continuations(srv, tls):
    with connect(srv, tls=tls) as c:
        sid = open_stream(c, path="/echo")
        block = c.block([("x-trailer-one", "1"), ("x-trailer-two", "2")])
        c.send(raw_frame(DATA, 0, sid, b"abc")
               + raw_frame(HEADERS, END_STREAM, sid, block[:3])
               + raw_frame(CONTINUATION, END_HEADERS, sid, block[3:]))
        check(c, sid, BODY(b"abc"), "trailers over a CONTINUATION")


@pytest.mark.parametrize("field", [("connection", "close"), ("keep-alive", "5"),
                                   ("transfer-encoding", "chunked"), ("upgrade", "h2c"),
                                   ("proxy-connection", "close"), ("X-Upper", "1"),
                                   ("x-bad", "a\rb"), ("x-bad", " lead")],
                         ids=lambda f: f[0] + ("" if f[0] != "x-bad" else " " + repr(f[1])))
def test_8_2_malformed_trailers(srv, tls, field):
    """8.1, 8.2: trailers are fields of the message like the others: names
    in lower case, valid values, no connection-specific field."""
    with connect(srv, tls=tls) as c:
        sid = post(c, "/echo", [b"body"], trailers=[field])
        check(c, sid, STREAM(E.PROTOCOL_ERROR), "trailer %r" % (field,))


# 8.1.1: a content-length that differs from the DATA is a stream error
# (PROTOCOL_ERROR) however the frames fall into the server's reads, and
# whether or not the handler reads the body (echo does; respond and the
# static file answer at once). The first RST_STREAM of the stream says so.
SPLITS = ["one write", "then the DATA", "each frame", "cut within frames"]


def send_split(c, frames, split):
    if split == "one write":
        c.send(b"".join(frames))
    elif split == "then the DATA":
        c.send(frames[0])
        time.sleep(0.1)
        c.send(b"".join(frames[1:]))
    elif split == "each frame":
        for f in frames:
            c.send(f)
            time.sleep(0.05)
    else:
        data = b"".join(frames)
        for i in range(0, len(data), 7):
            c.send(data[i:i + 7])
            time.sleep(0.01)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("method,path", [("POST", "/echo"), ("POST", "/respond"),
                                         ("GET", "/hello.txt")])
@pytest.mark.parametrize("chunks", [[b"x" * 6, b"x" * 6], [b"x" * 4, b"x" * 4],
                                    [b"x" * 6, b"x" * 4]],
                         ids=["sum more", "sum less", "sum equal"])
def test_8_1_1_content_length_against_data_however_it_is_read(srv, tls, split, method, path,
                                                              chunks):
    with connect(srv, tls=tls) as c:
        sid = c.new_id()
        frames = [raw_frame(HEADERS, END_HEADERS, sid,
                            hdr_block(c, path=path, method=method,
                                      extra=[("content-length", "10")]))]
        frames += [raw_frame(DATA, END_STREAM if i == len(chunks) - 1 else 0, sid, chunk)
                   for i, chunk in enumerate(chunks)]
        send_split(c, frames, split)
        if sum(map(len, chunks)) == 10:
            hdrs, body, got = c.response(sid)
            assert h2raw.status(hdrs) == 200, got
            assert path != "/echo" or body == b"x" * 10, body
            assert h2raw.rst_code(got, sid) in (None, E.NO_ERROR), got
        else:
            got = c.frames(timeout=5, until=lambda f: f is None or isinstance(
                f, h2raw.GoAwayFrame) or (isinstance(f, h2raw.RstStreamFrame)
                                          and f.stream_id == sid))
            last = got[-1] if got else None
            assert isinstance(last, (h2raw.RstStreamFrame, h2raw.GoAwayFrame)), got
            assert last.error_code == E.PROTOCOL_ERROR, got
            if isinstance(last, h2raw.GoAwayFrame):
                return
        check(c, headers(c), STATUS(200), "then a new stream")


@pytest.fixture(scope="module")
def one_stream_srv(sws_module, pki):
    """One stream at a time, and a second for the body to come."""
    s = t.launch(sws_module, pki, listen="http2", ports=2, files=FILES,
                 server="        listen 127.0.0.1:@PORT2@ http2;\n"
                        "        http2_max_concurrent_streams 1;\n"
                        "        client_body_timeout 1s;\n")
    s.port2 = s.ports[1]
    return s


def early_response(c, length, first):
    """A POST answered before its body ends (respond does not read it)."""
    sid = headers(c, flags=END_HEADERS, method="POST", extra=[("content-length", str(length))])
    c.send(raw_frame(DATA, 0, sid, first))
    hdrs, body, frames = c.response(sid)
    assert h2raw.status(hdrs) == 200 and body == b"Hello, world!", frames
    return sid


def test_8_1_1_the_rest_of_a_body_after_the_response_closes_the_stream(one_stream_srv, tls):
    """The stream waits for the rest of a body of known length (its window
    holds it); the END_STREAM closes it without a word, and its slot goes
    to the next stream."""
    with connect(one_stream_srv, tls=tls) as c:
        sid = early_response(c, 10, b"1234")
        time.sleep(0.1)
        c.send(raw_frame(DATA, END_STREAM, sid, b"567890"))
        check(c, headers(c), STATUS(200), "the next stream")
        frames = c.frames(timeout=0.3)
        assert h2raw.rst_code(frames, sid) is None, frames


def test_8_1_1_a_rest_that_does_not_come_is_reset_after_client_body_timeout(one_stream_srv,
                                                                            tls):
    with connect(one_stream_srv, tls=tls) as c:
        sid = early_response(c, 10, b"1234")
        frames = c.frames(timeout=0.5)
        assert h2raw.rst_code(frames, sid) is None, "reset before client_body_timeout"
        frames = c.frames(timeout=3, until=lambda f: f is None or isinstance(
            f, h2raw.RstStreamFrame))
        assert h2raw.rst_code(frames, sid) == E.NO_ERROR, frames
        check(c, headers(c), STATUS(200), "the next stream")


def test_8_1_a_rest_beyond_the_window_is_not_awaited(one_stream_srv, tls):
    """A body whose rest the window does not hold: RST_STREAM NO_ERROR at
    once after the response (8.1), the client need not send it."""
    with connect(one_stream_srv, tls=tls) as c:
        sid = early_response(c, 1 << 20, b"1234")
        frames = c.frames(timeout=0.5, until=lambda f: f is None or isinstance(
            f, h2raw.RstStreamFrame))
        assert h2raw.rst_code(frames, sid) == E.NO_ERROR, frames
        check(c, headers(c), STATUS(200), "the next stream")


@pytest.fixture(scope="module")
def proxy_srv(sws_module, pki):
    """A server in front of an HTTP/1.1 origin, and a location whose
    add_header fields are HTTP/1 connection fields."""
    from proxyorigin import Origin
    o = Origin("conform")
    s = t.launch(sws_module, pki, listen="http2", ports=2,
                 server="        listen 127.0.0.1:@PORT2@ http2;\n"
                        "        location / { proxy_pass http://%s; }\n"
                        "        location = /added { add_header Connection close;\n"
                        "            add_header Keep-Alive timeout=5; add_header Upgrade h2c;\n"
                        "            add_header Proxy-Connection close;\n"
                        "            add_header X-Mixed-Case kept; respond 200 \"added\"; }\n"
                        % o.addr)
    s.port2 = s.ports[1]
    yield s
    o.stop()


@pytest.mark.parametrize("path,body", [("/headers", b"headers\n"), ("/chunked/3000", 3000),
                                       ("/added", b"added")])
def test_8_2_2_responses_carry_no_connection_specific_fields(proxy_srv, tls, path, body):
    """An HTTP/1.1 origin's connection-specific fields (Connection and the
    fields it names, Keep-Alive, Proxy-Connection, Transfer-Encoding), or
    ones add_header names, are not in the HTTP/2 response, whose field
    names are in lower case and whose only pseudo-header field, :status,
    comes first."""
    with connect(proxy_srv, tls=tls) as c:
        sid = headers(c, path=path)
        hdrs, got, frames = c.response(sid)
        assert hdrs and hdrs[0] == (":status", "200"), hdrs
        names = [k for k, _ in hdrs]
        assert [n for n in names if n.startswith(":")] == [":status"], names
        assert all(n == n.lower() for n in names), names
        bad = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
               "x-hop"}
        assert not bad & set(names), names
        assert got == body or len(got) == body, got[:100]
        if path == "/added":
            assert ("x-mixed-case", "kept") in hdrs, hdrs
