"""HTTP/2 framing of our own (src/http/v2/sws_http_v2_frame.c): RFC 9218
priorities (the priority field and PRIORITY_UPDATE) decide which response
goes first, every frame read is processed before anything is written (an
invalid frame after a valid request in the same read gets the connection
error), content-length checked against DATA however the frames fall into
reads, frames split over reads, and the HPACK encoder an idle connection
gives back."""
import random
import struct
import time

import pytest

import echomod
import h2raw
from h2raw import raw_frame

DATA, HEADERS, RST_STREAM, SETTINGS, WINDOW_UPDATE, PRIORITY_UPDATE = 0x0, 0x1, 0x3, 0x4, 0x8, 0x10
END_STREAM, END_HEADERS = 0x1, 0x4
FILES = {"html/a.bin": b"a" * 3000, "html/b.bin": b"b" * 3000, "html/hello.txt": b"hello\n"}


@pytest.fixture(scope="module")
def srv(sws_module, tmp_path_factory):
    s = sws_module(files=FILES, load=echomod.build(tmp_path_factory.mktemp("echo")), ports=2,
                   server="        listen 127.0.0.1:@PORT2@ http2;\n"
                          "        http2_chunk_size 1k;\n"
                          "        http2_idle_timeout 10s;\n"
                          "        location /echo { echo; }\n"
                          "        location /small { echo; client_max_body_size 1k; }\n")
    s.h2port = s.ports[1]
    return s


def connect(srv, **kw):
    c = h2raw.H2(srv.h2port, **kw)
    c.scheme = "http"
    c.frames(timeout=3, until=lambda f: f is None or (
        isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
    return c


def get(c, path, extra=()):
    return c.headers(c.request_headers(path, scheme="http", extra=list(extra)))


def setting(ident, value):
    return struct.pack(">HI", ident, value)


def data_order(c, sids, timeout=5):
    """The stream of each DATA frame until all of sids ended."""
    order, left = [], set(sids)
    deadline = time.monotonic() + timeout
    while left and time.monotonic() < deadline:
        f = c.read_frame(deadline - time.monotonic())
        assert f is not None and not isinstance(f, h2raw.GoAwayFrame), f
        if isinstance(f, h2raw.DataFrame):
            order.append(f.stream_id)
            if "END_STREAM" in f.flags:
                left.discard(f.stream_id)
    assert not left, order
    return order


def windows_open(c):
    """The responses wait on stream windows of 0; then all may go."""
    c.send(raw_frame(SETTINGS, 0, 0, setting(h2raw.INITIAL_WINDOW_SIZE, 65535)))


# ---------------------------------------------------------------- RFC 9218

def test_urgency_of_the_priority_field_goes_first(srv):
    with connect(srv, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        a = get(c, "/a.bin")                               # u=3, the default
        b = get(c, "/b.bin", extra=[("priority", "u=0")])
        time.sleep(0.2)
        windows_open(c)
        order = data_order(c, [a, b])
    assert order == [b] * 3 + [a] * 3, order


def test_non_incremental_responses_go_one_after_the_other(srv):
    with connect(srv, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        a = get(c, "/a.bin")
        b = get(c, "/b.bin")
        time.sleep(0.2)
        windows_open(c)
        order = data_order(c, [a, b])
    assert order == [a] * 3 + [b] * 3, order


def test_incremental_responses_take_turns(srv):
    with connect(srv, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        a = get(c, "/a.bin", extra=[("priority", "u=3, i")])
        b = get(c, "/b.bin", extra=[("priority", "i=?1")])
        time.sleep(0.2)
        windows_open(c)
        order = data_order(c, [a, b])
    assert order == [a, b] * 3, order


def test_priority_update_changes_the_order(srv):
    with connect(srv, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        a = get(c, "/a.bin", extra=[("priority", "u=5")])
        b = get(c, "/b.bin", extra=[("priority", "u=1")])
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", a) + b"u=0"))
        time.sleep(0.2)
        windows_open(c)
        order = data_order(c, [a, b])
    assert order == [a] * 3 + [b] * 3, order


@pytest.mark.parametrize("value", ["u=9", "u=x", "garbage,,", "u=1;foo=bar, i=?2", ""])
def test_priority_values_not_understood_are_ignored(srv, value):
    with connect(srv) as c:
        hdrs, body, _ = c.response(get(c, "/hello.txt", extra=[("priority", value)]))
    assert h2raw.status(hdrs) == 200 and body == b"hello\n"


INVALID_PRIORITY_UPDATE = [
    ("on a stream", raw_frame(PRIORITY_UPDATE, 0, 1, struct.pack(">I", 1) + b"u=1"),
     h2raw.PROTOCOL_ERROR),
    ("of 3 bytes", raw_frame(PRIORITY_UPDATE, 0, 0, b"\x00\x00\x01"), h2raw.FRAME_SIZE_ERROR),
    ("of stream 0", raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 0) + b"u=1"),
     h2raw.PROTOCOL_ERROR),
    ("of a pushed stream", raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 2) + b"u=1"),
     h2raw.PROTOCOL_ERROR),
]


@pytest.mark.parametrize("what,frame,code", INVALID_PRIORITY_UPDATE,
                         ids=[x[0] for x in INVALID_PRIORITY_UPDATE])
def test_invalid_priority_update(srv, what, frame, code):
    with connect(srv) as c:
        c.send(frame)
        g = c.goaway(timeout=5)
        assert g is not None and g.error_code == code, (what, g)
        assert c.closed_within(5)


def test_priority_update_of_an_idle_stream_is_accepted(srv):
    with connect(srv) as c:
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 9) + b"u=1"))
        hdrs, body, _ = c.response(get(c, "/hello.txt"))
    assert h2raw.status(hdrs) == 200 and body == b"hello\n"


# ---------------------------------------------------------------- one read

def test_invalid_frame_after_a_request_in_the_same_read(srv):
    """All of a read is processed first: the connection error is said with
    the last stream the server took, and no response body goes out."""
    with connect(srv) as c:
        block = c.block(c.request_headers("/hello.txt", scheme="http"))
        c.send(raw_frame(HEADERS, END_STREAM | END_HEADERS, 1, block)
               + raw_frame(WINDOW_UPDATE, 0, 0, b"\x00\x00\x00\x00"))
        frames = c.frames(timeout=5, until=lambda f: f is None or isinstance(f, h2raw.GoAwayFrame))
        g = frames[-1]
        assert isinstance(g, h2raw.GoAwayFrame), frames
        assert g.error_code == h2raw.PROTOCOL_ERROR and g.last_stream_id == 1, g
        assert not any(isinstance(f, h2raw.DataFrame) for f in frames), frames
        assert c.closed_within(5)


@pytest.mark.parametrize("chunks", [[b"x" * 6, b"x" * 6], [b"x" * 4, b"x" * 4]],
                         ids=["sum more", "sum less"])
def test_content_length_against_data_in_separate_reads(srv, chunks):
    with connect(srv) as c:
        sid = c.headers(c.request_headers("/echo", method="POST", scheme="http",
                                          extra=[("content-length", "10")]),
                        end_stream=False)
        for i, chunk in enumerate(chunks):
            time.sleep(0.1)                 # a read each
            c.send(raw_frame(DATA, END_STREAM if i == len(chunks) - 1 else 0, sid, chunk))
        frames = c.frames(timeout=5, until=lambda f: f is None or (
            isinstance(f, h2raw.RstStreamFrame) and f.stream_id == sid))
        assert h2raw.rst_code(frames, sid) == h2raw.PROTOCOL_ERROR, frames
        hdrs, body, _ = c.response(get(c, "/hello.txt"))
        assert body == b"hello\n"


def test_frame_split_across_reads(srv):
    """A frame whose bytes come in several reads (the rest kept between)."""
    with connect(srv) as c:
        block = c.block(c.request_headers("/hello.txt", scheme="http"))
        frame = raw_frame(HEADERS, END_STREAM | END_HEADERS, 1, block)
        for i in range(len(frame)):
            c.send(frame[i:i + 1])
            time.sleep(0.005)
        hdrs, body, _ = c.response(1)
    assert h2raw.status(hdrs) == 200 and body == b"hello\n"



# ---------------------------------------------------------------- idle

def response_block(c, sid):
    """The raw header block of stream sid's response (one HEADERS frame)."""
    frames = c.frames(timeout=5, until=lambda f: f is None or (
        isinstance(f, h2raw.HeadersFrame) and f.stream_id == sid))
    assert isinstance(frames[-1], h2raw.HeadersFrame), frames
    c.frames(timeout=1, until=lambda f: f is None or "END_STREAM" in f.flags)
    return bytes(frames[-1].data), frames[-1].decoded


def test_encoder_given_back_when_idle_starts_over_with_a_table_size_update(srv):
    """Idle for a second, the connection drops its HPACK encoder; the next
    response's block first empties the client's table (size update 0,
    then 4096: RFC 7541 4.2), and decodes to the same fields."""
    with connect(srv) as c:
        block1, fields1 = response_block(c, get(c, "/hello.txt"))
        block2, fields2 = response_block(c, get(c, "/hello.txt"))
        assert block2[0] & 0xe0 != 0x20, block2          # at once: no update
        time.sleep(1.6)
        block3, fields3 = response_block(c, get(c, "/hello.txt"))
        assert block3[:4] == b"\x20\x3f\xe1\x1f", block3  # 0, then 4096
        block4, fields4 = response_block(c, get(c, "/a.bin"))
    strip = lambda fields: [(k, v) for k, v in fields if k not in ("date",)]   # noqa: E731
    assert strip(fields1) == strip(fields2) == strip(fields3), (fields1, fields3)
    assert h2raw.status(fields4) == 200 and h2raw.header(fields4, "content-length") == "3000"


def unindexed_block(path):
    """GET path in HPACK that adds nothing to the server's decoder table:
    :method GET and :scheme http from the static table, :path and
    :authority as literals without indexing (names static 4 and 1)."""
    return (bytes([0x82, 0x86, 0x04, len(path)]) + path.encode()
            + bytes([0x01, len("localhost")]) + b"localhost")


def test_decoder_given_back_when_idle_only_with_an_empty_table(srv):
    """Idle for a second, a connection whose decoder table is empty (a
    client that indexes nothing) drops the decoder, and the next block is
    decoded by a new one; a decoder holding the client's entries stays, so
    a block that refers to them after the idle time still decodes."""
    with connect(srv) as c:
        for path, body in (("/hello.txt", b"hello\n"), ("/a.bin", b"a" * 3000)):
            sid = c.headers(None, block=unindexed_block(path))
            hdrs, got, _ = c.response(sid)
            assert h2raw.status(hdrs) == 200 and got == body, (path, hdrs)
            time.sleep(1.6)
        extra = [("x-indexed", "a value the client's encoder indexes")]
        for _ in range(2):
            sid = get(c, "/hello.txt", extra)
            hdrs, got, frames = c.response(sid)
            assert h2raw.status(hdrs) == 200 and got == b"hello\n", frames
            time.sleep(1.6)
        assert len(c.enc.header_table.dynamic_entries) > 0   # it referred to its entries


def test_many_open_streams_each_frame_reaches_its_own(srv):
    """A hundred streams open at once (their windows 0: the responses
    wait), then a WINDOW_UPDATE or a RST_STREAM for each in a shuffled
    order: each reaches its own stream (open streams are found by id), the
    reset ones send nothing more, the others their body."""
    order = list(range(1, 201, 2))
    random.Random(21).shuffle(order)
    reset = set(order[::2])
    with connect(srv, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        sids = [get(c, "/hello.txt") for _ in range(100)]
        assert sorted(sids) == sorted(order)
        time.sleep(0.2)
        c.send(b"".join(raw_frame(RST_STREAM, 0, sid, struct.pack(">I", 8)) if sid in reset
                        else raw_frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", 100))
                        for sid in order))
        bodies, ended = {}, set()
        deadline = time.monotonic() + 5
        while len(ended) < 50 and time.monotonic() < deadline:
            f = c.read_frame(deadline - time.monotonic())
            assert f is not None and not isinstance(f, h2raw.GoAwayFrame), f
            if isinstance(f, h2raw.DataFrame):
                bodies[f.stream_id] = bodies.get(f.stream_id, b"") + bytes(f.data)
                if "END_STREAM" in f.flags:
                    ended.add(f.stream_id)
    assert ended == set(order) - reset, sorted(ended ^ (set(order) - reset))
    assert all(bodies[sid] == b"hello\n" for sid in ended)
    assert not reset & set(bodies)


def test_a_stored_body_gets_a_wide_window(srv):
    # A body the core stores as it comes (memory, then a temporary file):
    # the stream's window opens to 8 MiB when the handler starts reading,
    # so that an upload is not held to 64 KiB a round trip; the client
    # sends 1 MiB without waiting for a WINDOW_UPDATE after the first.
    c = connect(srv)
    size = 1 << 20
    sid = c.headers(c.request_headers("/echo", method="POST", scheme="http",
                                      extra=[("content-length", str(size))]), end_stream=False)
    opened = 0
    deadline = time.monotonic() + 3
    while opened < size and time.monotonic() < deadline:
        f = c.read_frame(deadline - time.monotonic())
        assert f is not None, "closed"
        if isinstance(f, h2raw.WindowUpdateFrame) and f.stream_id == sid:
            opened += f.window_increment
    assert opened >= (8 << 20) - 65536, opened          # beyond the first 64 KiB
    sent, chunk = 0, b"u" * 16384
    while sent < size:
        c.data(sid, chunk, end_stream=sent + len(chunk) == size)
        sent += len(chunk)
    hdrs, body, _ = c.response(sid, timeout=10)
    assert h2raw.status(hdrs) == 200 and body == b"u" * size


def test_a_wide_window_still_ends_a_body_too_large(srv):
    # The 8 MiB window does not let a body past client_max_body_size into
    # memory: the 413 goes out, what the client had in flight is dropped
    # (its window given back), and the connection serves on.
    c = connect(srv)
    sid = c.headers(c.request_headers("/small", method="POST", scheme="http"), end_stream=False)
    chunk = b"v" * 16384
    for i in range(128):                                  # 2 MiB, without waiting
        c.data(sid, chunk, end_stream=i == 127)
    hdrs, _, _ = c.response(sid, timeout=10)
    assert h2raw.status(hdrs) == 413
    hdrs, body, _ = c.response(get(c, "/hello.txt"), timeout=5)
    assert h2raw.status(hdrs) == 200 and body == b"hello\n"

