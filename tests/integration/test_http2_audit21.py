"""Issue 21's HTTP/2 text, bullet by bullet, against the server (audit21):
every abuse limit provoked with raw frames over h2c and TLS (the floods,
the HPACK bomb, header limits, refused streams and a flood of them,
zero-window stalls), the limits in combination (client_max_body_size with
padded DATA after a WINDOW_UPDATE, limit_req / limit_conn with many streams
on one connection, auth_basic and deny per stream), GOAWAY with graceful
drain on reload and on quit (epoll and io_uring), and RFC 9218
PRIORITY_UPDATE (before the stream opens, of a closed stream, bounded, on
a stream). What the older files test over TLS only is done here over both."""
import signal
import struct
import time

import pytest

import echomod
import h2raw
import swsharness as h
import tlsutil as t
from h2raw import raw_frame
from test_events_uring import _built_with_liburing
from test_http2_abuse import expect_goaway
from test_http2_frames import data_order

BIG = bytes(range(256)) * 4096                     # 1 MiB
FILES = {"html/big.bin": BIG, "html/small.txt": b"small\n",
         "html/lconn/big.bin": BIG,
         "html/a.bin": b"a" * 3000, "html/b.bin": b"b" * 3000,
         "htpasswd": "alice:{PLAIN}wonder\n"}

DATA, HEADERS, PRIORITY_UPDATE = 0x0, 0x1, 0x10
END_STREAM, END_HEADERS, PADDED = 0x1, 0x4, 0x8

HTTP = """
    limit_req_zone $arg_k zone=a21req:64k rate=1r/m;
    limit_conn_zone $arg_k zone=a21conn:64k;
"""

SERVER = """
        listen 127.0.0.1:@PORT2@ http2;
        send_timeout 1s;
        client_header_timeout 1s;
        http2_max_concurrent_streams 8;
        http2_max_field_size 1k;
        http2_max_header_size 4k;
        location /echo { echo; }
        location = /small { echo; client_max_body_size 1k; }
        location = /lreq { limit_req zone=a21req; respond 200 "req"; }
        location /lconn/ { limit_conn a21conn 1; }
        location = /auth { auth_basic "a21"; auth_basic_user_file @TMP@/htpasswd;
                           respond 200 "in"; }
        location = /deny { deny 127.0.0.1; respond 200 "no"; }
"""

TRANSPORTS = ["tls", "h2c"]


@pytest.fixture(scope="module")
def srv(sws_module, pki, tmp_path_factory):
    s = t.launch(sws_module, pki, listen="http2", ports=2, files=FILES, http=HTTP,
                 load=echomod.build(tmp_path_factory.mktemp("echo")), server=SERVER)
    s.port2 = s.ports[1]
    return s


def connect(srv, transport, settings=None, wait_ack=True):
    """A raw connection, its SETTINGS exchanged (the server's limits hold
    from its client's ACK on)."""
    if transport == "tls":
        c = h2raw.H2(srv.port, tls=True, settings=settings)
        c.scheme = "https"
    else:
        c = h2raw.H2(srv.port2, settings=settings)
        c.scheme = "http"
    if wait_ack:
        c.frames(timeout=3, until=lambda f: f is None or (
            isinstance(f, h2raw.SettingsFrame) and "ACK" in f.flags))
    return c


def req(c, path, method="GET", extra=()):
    return c.request_headers(path, method=method, scheme=c.scheme, extra=list(extra))


def still_serves(srv, transport):
    with connect(srv, transport) as c:
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt")))
    assert h2raw.status(hdrs) == 200 and body == b"small\n"


def send_all(c, data):
    try:
        c.send(data)
    except OSError:
        pass                                    # cut off while sending: fine


def stream_end(sid):
    return lambda f: f is None or (f.stream_id == sid and (
        isinstance(f, h2raw.RstStreamFrame) or "END_STREAM" in f.flags))


def statuses(frames):
    """{stream: :status} of the HEADERS among frames."""
    return {f.stream_id: h2raw.status(f.decoded) for f in frames
            if isinstance(f, h2raw.HeadersFrame) and f.decoded}


def responses(c, ids, timeout=10):
    """{stream: (:status, body)} of several streams read together (the
    frames of one may come while another is read)."""
    out = {sid: [None, b""] for sid in ids}
    left = set(ids)
    deadline = time.monotonic() + timeout
    while left:
        assert time.monotonic() < deadline, ("streams did not end", left, out)
        f = c.read_frame(max(0.05, deadline - time.monotonic()))
        assert f is not None, ("closed", left, out)
        if isinstance(f, h2raw.SettingsFrame) and "ACK" not in f.flags:
            c.send_quiet(h2raw.SettingsFrame(0, flags=["ACK"]))
        if f.stream_id not in out:
            continue
        if isinstance(f, h2raw.HeadersFrame) and f.decoded:
            out[f.stream_id][0] = h2raw.status(f.decoded)
        elif isinstance(f, h2raw.DataFrame):
            out[f.stream_id][1] += f.data
        if isinstance(f, h2raw.RstStreamFrame) or "END_STREAM" in f.flags:
            left.discard(f.stream_id)
    return {sid: tuple(v) for sid, v in out.items()}


# ---------------------------------------------------------------- floods, over both


def rapid_reset(c):
    out = b""
    for _ in range(600):
        sid = c.new_id()
        out += raw_frame(HEADERS, END_STREAM | END_HEADERS, sid,
                         c.block(req(c, "/small.txt")))
        out += h2raw.RstStreamFrame(sid, error_code=h2raw.CANCEL).serialize()
    return out


def continuation_flood(c):
    sid = c.new_id()
    block = c.block(req(c, "/small.txt", extra=[("x-pad", "p" * 100)]))
    out = raw_frame(HEADERS, END_STREAM, sid, block[:1])
    for i in range(1, len(block)):              # one octet per CONTINUATION
        out += raw_frame(0x9, 0, sid, block[i:i + 1])
    return out


def empty_data_flood(c):
    sid = c.headers(req(c, "/echo", method="POST"), end_stream=False)
    return raw_frame(DATA, 0, sid) * 3000


FLOODS = {
    "rapid reset": rapid_reset,
    "CONTINUATION": continuation_flood,
    "SETTINGS": lambda c: h2raw.SettingsFrame(
        0, settings={h2raw.MAX_CONCURRENT_STREAMS: 100}).serialize() * 3000,
    "PING": lambda c: h2raw.PingFrame(0, opaque_data=b"a21a21a2").serialize() * 3000,
    "PRIORITY": lambda c: raw_frame(0x2, 0, 1, b"\x00\x00\x00\x00\x10") * 3000,
    "PRIORITY_UPDATE": lambda c: raw_frame(PRIORITY_UPDATE, 0, 0,
                                           struct.pack(">I", 1) + b"u=1") * 3000,
    "empty DATA": empty_data_flood,
}


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", list(FLOODS))
def test_flood_ends_the_connection(srv, transport, kind):
    with connect(srv, transport) as c:
        send_all(c, FLOODS[kind](c))
        expect_goaway(c, h2raw.ENHANCE_YOUR_CALM)
    still_serves(srv, transport)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_hpack_bomb_is_reset_without_decoding(srv, transport):
    with connect(srv, transport) as c:
        # A 900-octet entry (under http2_max_field_size) goes into the table ...
        sid = c.headers(req(c, "/small.txt", extra=[("x-bomb", "B" * 900)]))
        hdrs, _, _ = c.response(sid)
        assert h2raw.status(hdrs) == 200
        # ... then a block of 2,000 references to it: 1.8 MB decoded from 2 KB,
        # far over four times http2_max_header_size.
        pseudo = b"\x82" + (b"\x87" if c.scheme == "https" else b"\x86") + b"\x84" \
            + b"\x01\x09localhost"
        sid = c.headers(None, block=pseudo + bytes([0x80 | 62]) * 2000)
        frames = c.frames(timeout=5, until=stream_end(sid))
        assert h2raw.rst_code(frames, sid) == h2raw.ENHANCE_YOUR_CALM, frames
        # The connection goes on (one bomb is a stream error).
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200 and body == b"small\n"


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("what,extra", [
    ("a field over http2_max_field_size", [("x-field", "f" * 1100)]),
    ("a list over http2_max_header_size", [("x-l%d" % i, "v" * 500) for i in range(10)]),
], ids=["field", "list"])
def test_header_limits_answer_431(srv, transport, what, extra):
    with connect(srv, transport) as c:
        hdrs, _, frames = c.response(c.headers(req(c, "/small.txt", extra=extra)))
        assert h2raw.status(hdrs) == 431, (what, frames)
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200 and body == b"small\n"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_streams_over_the_limit_are_refused(srv, transport):
    with connect(srv, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        ids = [c.headers(req(c, "/big.bin")) for _ in range(10)]
        frames = c.frames(timeout=1.5)
        refused = [i for i in ids if h2raw.rst_code(frames, i) == h2raw.REFUSED_STREAM]
        assert refused == ids[8:], frames
        assert set(statuses(frames)) == set(ids[:8]), frames
        assert not any(isinstance(f, h2raw.GoAwayFrame) for f in frames), frames


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_refused_stream_flood_ends_the_connection(srv, transport):
    """Streams over the limit, again and again (a rapid reset where the
    server does the resets): they share the rapid reset's token bucket,
    as nginx ends such a connection too."""
    with connect(srv, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        block = c.block(req(c, "/big.bin"))
        send_all(c, b"".join(raw_frame(HEADERS, END_STREAM | END_HEADERS, c.new_id(), block)
                             for _ in range(600)))
        expect_goaway(c, h2raw.ENHANCE_YOUR_CALM)
    assert h.wait_file_contains(srv.error_log_path, "too many refused streams")
    still_serves(srv, transport)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_zero_window_stall_is_reset(srv, transport):
    with connect(srv, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        sid = c.headers(req(c, "/big.bin"))
        start = time.monotonic()
        frames = c.frames(timeout=5, until=stream_end(sid))
        assert h2raw.rst_code(frames, sid) == h2raw.CANCEL, frames
        assert 0.7 < time.monotonic() - start < 4.5
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt", method="HEAD")))
        assert h2raw.status(hdrs) == 200


# ---------------------------------------------------------------- limits in combination


def padded_data(sid, payload, pad, end_stream=False):
    flags = PADDED | (END_STREAM if end_stream else 0)
    return raw_frame(DATA, flags, sid, bytes([pad]) + payload + b"\x00" * pad)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("length", [None, 2000], ids=["no content-length", "content-length"])
def test_body_over_client_max_body_size_in_padded_frames(srv, transport, length):
    """2,000 octets in 20 padded DATA frames (6,000 octets of flow control
    with the padding) after a WINDOW_UPDATE: 413 from location /small's 1k."""
    with connect(srv, transport) as c:
        extra = [("content-length", str(length))] if length else []
        sid = c.headers(req(c, "/small", method="POST", extra=extra), end_stream=False)
        out = h2raw.WindowUpdateFrame(0, window_increment=1 << 20).serialize()
        for i in range(20):
            out += padded_data(sid, b"x" * 100, 200, end_stream=(i == 19))
        send_all(c, out)
        frames = c.frames(timeout=5, until=stream_end(sid))
        assert statuses(frames).get(sid) == 413, frames
        # The connection is fine: the same body under the limit is taken.
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_padding_is_flow_control_not_body(srv, transport):
    """900 octets in padded frames whose padding is 2,000 more: under the
    1k limit, echoed whole."""
    with connect(srv, transport) as c:
        sid = c.headers(req(c, "/small", method="POST", extra=[("content-length", "900")]),
                        end_stream=False)
        out = h2raw.WindowUpdateFrame(0, window_increment=1 << 20).serialize()
        for i in range(10):
            out += padded_data(sid, bytes([0x41 + i]) * 90, 200, end_stream=(i == 9))
        send_all(c, out)
        hdrs, body, frames = c.response(sid)
        assert h2raw.status(hdrs) == 200, frames
        assert body == b"".join(bytes([0x41 + i]) * 90 for i in range(10))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_limit_req_counts_each_stream(srv, transport):
    with connect(srv, transport) as c:
        ids = [c.headers(req(c, "/lreq?k=r-%s" % transport)) for _ in range(5)]
        got = responses(c, ids)
    assert sorted(st for st, _ in got.values()) == [200, 503, 503, 503, 503], got


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_limit_conn_counts_each_stream(srv, transport):
    """As nginx: on HTTP/2 each stream in flight is a connection of
    limit_conn's. The first download is held by a window of 0."""
    with connect(srv, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        key = "c-%s" % transport
        first = c.headers(req(c, "/lconn/big.bin?k=" + key))
        c.frames(timeout=2, until=lambda f: f is None or (
            isinstance(f, h2raw.HeadersFrame) and f.stream_id == first))
        more = [c.headers(req(c, "/lconn/big.bin?k=" + key)) for _ in range(3)]
        frames = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not all(i in statuses(frames) for i in more):
            frames += c.frames(timeout=0.2)
        st = statuses(frames)
        assert all(st.get(i) == 503 for i in more), frames
        c.send_frame(h2raw.RstStreamFrame(first, error_code=h2raw.CANCEL))
        # Once it is gone, the key is free again on the same connection.
        time.sleep(0.1)
        c.send_frame(h2raw.SettingsFrame(0, settings={h2raw.INITIAL_WINDOW_SIZE: 65535}))
        hdrs, body, _ = c.response(c.headers(req(c, "/lconn/big.bin?k=" + key)), timeout=20)
        assert h2raw.status(hdrs) == 200 and body == BIG


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_access_is_decided_per_stream(srv, transport):
    """auth_basic, deny and an open location on one connection, interleaved."""
    import base64
    good = "Basic " + base64.b64encode(b"alice:wonder").decode()
    bad = "Basic " + base64.b64encode(b"alice:nope").decode()
    with connect(srv, transport) as c:
        asks = [("/auth", []), ("/auth", [("authorization", good)]), ("/deny", []),
                ("/auth", [("authorization", bad)]), ("/small.txt", []),
                ("/deny", [("authorization", good)]), ("/auth", [("authorization", good)])]
        ids = [c.headers(req(c, p, extra=e)) for p, e in asks]
        r = responses(c, ids)
        got = [r[sid][0] for sid in ids]
    assert got == [401, 200, 403, 401, 200, 403, 200], got


# ---------------------------------------------------------------- RFC 9218


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_priority_update_of_a_closed_stream_is_ignored(srv, transport):
    with connect(srv, transport) as c:
        sid = c.headers(req(c, "/small.txt"))
        c.response(sid)
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", sid) + b"u=0, i"))
        hdrs, body, frames = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200 and body == b"small\n"
        assert not any(isinstance(f, h2raw.GoAwayFrame) for f in frames)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_priority_update_before_the_stream_opens_is_kept(srv, transport):
    """RFC 9218 7.1: the update of an idle stream applies when its HEADERS
    come, over the request's own priority field (u=7 here)."""
    with connect(srv, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        b = c.headers(req(c, "/b.bin", extra=[("priority", "u=1")]))
        a = c.next_id
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", a) + b"u=0"))
        assert c.headers(req(c, "/a.bin", extra=[("priority", "u=7")])) == a
        time.sleep(0.2)
        c.send(raw_frame(0x4, 0, 0, struct.pack(">HI", h2raw.INITIAL_WINDOW_SIZE, 65535)))
        order = data_order(c, [a, b])
    assert order[0] == a and order[-1] == b, order


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_priority_update_of_a_skipped_stream_is_dropped(srv, transport):
    """An update kept for stream 5 goes when stream 7 opens (5 is closed
    then, never opened); the connection goes on."""
    with connect(srv, transport) as c:
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 5) + b"u=0"))
        c.next_id = 7
        hdrs, body, _ = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200 and body == b"small\n"
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 5) + b"u=1"))
        hdrs, body, frames = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200
        assert not any(isinstance(f, h2raw.GoAwayFrame) for f in frames), frames


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_priority_updates_of_idle_streams_are_bounded(srv, transport):
    """RFC 9218 7.1: idle streams prioritized plus open ones over
    MAX_CONCURRENT_STREAMS (8 here) is a PROTOCOL_ERROR."""
    with connect(srv, transport) as c:
        out = b"".join(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 101 + 2 * i) + b"u=2")
                       for i in range(8))
        c.send(out)
        hdrs, body, frames = c.response(c.headers(req(c, "/small.txt")))
        assert h2raw.status(hdrs) == 200, frames
        # The stream just served is closed again: 8 idle ones kept, the 9th is too many.
        c.send(raw_frame(PRIORITY_UPDATE, 0, 0, struct.pack(">I", 201) + b"u=2"))
        expect_goaway(c, h2raw.PROTOCOL_ERROR)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_priority_update_on_a_stream_is_a_connection_error(srv, transport):
    with connect(srv, transport) as c:
        c.send(raw_frame(PRIORITY_UPDATE, 0, 1, struct.pack(">I", 1) + b"u=1"))
        expect_goaway(c, h2raw.PROTOCOL_ERROR)


# ---------------------------------------------------------------- graceful drain


def read_until(c, pred, timeout=5):
    frames = c.frames(timeout=timeout, until=lambda f: f is None or pred(f))
    assert frames and frames[-1] is not None and pred(frames[-1]), frames
    return frames


@pytest.mark.parametrize("events", ["epoll", "io_uring"])
@pytest.mark.parametrize("sig", ["HUP", "QUIT"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_goaway_drains_on_reload_and_quit(sws, pki, transport, sig, events):
    """A stream in flight finishes; one opened after the notice but before
    the PING came back is served; the final GOAWAY names it; a stream after
    that is refused (REFUSED_STREAM); the connection closes after the last
    stream. The server (HUP) serves new connections meanwhile."""
    if events == "io_uring" and not _built_with_liburing():
        pytest.skip("scalwsd built without liburing")
    s = t.launch(sws, pki, listen="http2", ports=2, files=FILES,
                 events="use %s;" % events if events == "io_uring" else "",
                 main="worker_shutdown_idle 5s;",      # the wait for the PING's ack
                 server="        listen 127.0.0.1:@PORT2@ http2;\n")
    s.port2 = s.ports[1]
    old = s.wait_children(1)
    with connect(s, transport, settings={h2raw.INITIAL_WINDOW_SIZE: 0}) as c:
        first = c.headers(req(c, "/big.bin"))
        pre = read_until(c, lambda f: isinstance(f, h2raw.HeadersFrame) and f.stream_id == first)
        s.signal(getattr(signal, "SIG" + sig))
        got = read_until(c, lambda f: isinstance(f, h2raw.PingFrame) and "ACK" not in f.flags)
        notice = [f for f in got if isinstance(f, h2raw.GoAwayFrame)]
        assert notice and notice[0].error_code == h2raw.NO_ERROR, got
        assert notice[0].last_stream_id == 2**31 - 1, notice
        ping = got[-1]
        second = c.headers(req(c, "/small.txt"))           # before the ack: taken
        c.send_frame(h2raw.PingFrame(0, flags=["ACK"], opaque_data=ping.opaque_data))
        got = read_until(c, lambda f: isinstance(f, h2raw.GoAwayFrame))
        final = got[-1]
        assert final.error_code == h2raw.NO_ERROR and final.last_stream_id == second, final
        late = c.headers(req(c, "/small.txt"))             # after the final GOAWAY
        c.send_frame(h2raw.WindowUpdateFrame(0, window_increment=1 << 24))
        c.send_frame(h2raw.SettingsFrame(0, settings={h2raw.INITIAL_WINDOW_SIZE: 1 << 24}))
        frames = pre + got + c.frames(timeout=20, until=lambda f: f is None)
        assert frames[-1] is None, "connection not closed after its last stream"
        st = statuses(frames)
        body = {sid: b"".join(f.data for f in frames
                              if isinstance(f, h2raw.DataFrame) and f.stream_id == sid)
                for sid in (first, second)}
        assert st.get(second) == 200 and body[second] == b"small\n", frames
        assert st.get(first) == 200 and body[first] == BIG
        assert h2raw.rst_code(frames, late) == h2raw.REFUSED_STREAM, frames
        assert late not in statuses(frames), frames
    if sig == "HUP":
        assert h.wait_for(lambda: not set(old) & set(s.children()), 5), s.diagnostics()
        still_serves(s, transport)
    else:
        assert s.wait_exit(10) == 0, s.error_log()
