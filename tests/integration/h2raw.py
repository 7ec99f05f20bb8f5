"""
A raw HTTP/2 client for the tests that need to say exactly what goes on the
wire (invalid frames, floods, stalls): frames from hyperframe, header blocks
from hpack, or hand-made bytes. Over TLS (ALPN h2) or cleartext (prior
knowledge). Every read is bounded in time.
"""
import socket
import ssl
import struct
import time

import hpack
from hyperframe.frame import (Frame, DataFrame, HeadersFrame, ContinuationFrame,
                              SettingsFrame, PingFrame, GoAwayFrame, RstStreamFrame,
                              WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# Error codes (RFC 9113 7)
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
SETTINGS_TIMEOUT, STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM = 0x4, 0x5, 0x6, 0x7
CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 0x8, 0x9, 0xb

# SETTINGS ids
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS = 0x1, 0x2, 0x3
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE, MAX_HEADER_LIST_SIZE = 0x4, 0x5, 0x6


def raw_frame(ftype, flags, stream_id, payload=b""):
    """A frame as bytes, whatever it says (for invalid ones)."""
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", ftype, flags,
                                                              stream_id) + payload


class Closed(Exception):
    pass


class H2:
    def __init__(self, port, tls=False, settings=None, preface=True, timeout=5.0,
                 server_name="localhost", host="127.0.0.1"):
        raw = socket.create_connection((host, port), timeout=timeout)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            ctx.set_alpn_protocols(["h2"])
            raw = ctx.wrap_socket(raw, server_hostname=server_name)
            assert raw.selected_alpn_protocol() == "h2", raw.selected_alpn_protocol()
        self.sock = raw
        self.sock.settimeout(timeout)
        self.timeout = timeout
        self.buf = b""
        self.eof = False
        self.enc = hpack.Encoder()
        self.dec = hpack.Decoder()
        self.dec.max_allowed_table_size = 65536
        self.server_settings = {}
        self.pending_block = b""
        self.next_id = 1
        if preface:
            self.send(PREFACE)
            self.send_frame(SettingsFrame(0, settings=settings or {}))

    # -- plumbing
    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def send(self, data):
        self.sock.sendall(data)

    def send_frame(self, frame):
        self.send(frame.serialize())

    def send_quiet(self, frame):
        """Send what a reader sends on its own (ACKs, window updates): the
        server may have closed already, which is not this test's business."""
        try:
            self.send(frame.serialize())
        except (OSError, ssl.SSLError):
            pass

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("no frame in time")
        self.sock.settimeout(left)
        try:
            d = self.sock.recv(65536)
        except (ConnectionResetError, ssl.SSLEOFError, BrokenPipeError):
            d = b""
        if not d:
            self.eof = True
            raise Closed()
        self.buf += d

    def read_frame(self, timeout=None):
        """The next frame, or None at EOF; socket.timeout if none comes."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        try:
            while len(self.buf) < 9:
                self._fill(deadline)
            length = int.from_bytes(self.buf[:3], "big")
            while len(self.buf) < 9 + length:
                self._fill(deadline)
        except Closed:
            return None
        head, body = self.buf[:9], self.buf[9:9 + length]
        self.buf = self.buf[9 + length:]
        frame, _ = Frame.parse_frame_header(memoryview(head))
        frame.parse_body(memoryview(body))
        if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
            self.server_settings.update(frame.settings)
        if isinstance(frame, (HeadersFrame, ContinuationFrame)):
            # Every block is decoded as it comes (the HPACK state is one
            # for the connection); CONTINUATIONs are not split by servers
            # here, but are handled for completeness.
            self.pending_block += frame.data
            frame.decoded = []
            if "END_HEADERS" in frame.flags:
                frame.decoded = [(k.decode() if isinstance(k, bytes) else k,
                                  v.decode() if isinstance(v, bytes) else v)
                                 for k, v in self.dec.decode(self.pending_block)]
                self.pending_block = b""
        return frame

    def frames(self, timeout=None, until=None, ack=True):
        """Read frames until until(frame) is true, EOF (None last) or the
        timeout; SETTINGS are acknowledged on the way."""
        out = []
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return out
            try:
                f = self.read_frame(left)
            except socket.timeout:
                return out
            out.append(f)
            if f is None:
                return out
            if ack and isinstance(f, SettingsFrame) and "ACK" not in f.flags:
                self.send_quiet(SettingsFrame(0, flags=["ACK"]))
            if until and until(f):
                return out

    # -- requests
    def new_id(self):
        sid = self.next_id
        self.next_id += 2
        return sid

    def block(self, headers):
        return self.enc.encode(headers)

    def headers(self, headers, sid=None, end_stream=True, end_headers=True, block=None,
                frame_size=16384):
        """HEADERS (and CONTINUATIONs for a block over frame_size)."""
        sid = sid or self.new_id()
        data = block if block is not None else self.block(headers)
        parts = [data[i:i + frame_size] for i in range(0, len(data), frame_size)] or [b""]
        f = HeadersFrame(sid)
        f.data = parts[0]
        f.flags = set()
        if end_stream:
            f.flags.add("END_STREAM")
        if end_headers and len(parts) == 1:
            f.flags.add("END_HEADERS")
        out = f.serialize()
        for i, part in enumerate(parts[1:], 1):
            cf = ContinuationFrame(sid, data=part)
            if end_headers and i == len(parts) - 1:
                cf.flags.add("END_HEADERS")
            out += cf.serialize()
        self.send(out)
        return sid

    def request_headers(self, path="/", method="GET", authority="localhost", scheme="https",
                        extra=()):
        return [(":method", method), (":scheme", scheme), (":authority", authority),
                (":path", path)] + list(extra)

    def get(self, path="/", **kw):
        return self.headers(self.request_headers(path, **kw))

    def data(self, sid, payload, end_stream=False):
        f = DataFrame(sid, data=payload)
        if end_stream:
            f.flags.add("END_STREAM")
        self.send_frame(f)

    def response(self, sid, timeout=None, window_update=True):
        """Read until stream sid ends: (headers dict/list, body, frames)."""
        hdrs, body, got = [], b"", []
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("stream %d did not end" % sid)
            f = self.read_frame(left)
            if f is None:
                raise Closed("connection closed; got %r" % got)
            got.append(f)
            if isinstance(f, SettingsFrame) and "ACK" not in f.flags:
                self.send_quiet(SettingsFrame(0, flags=["ACK"]))
            if f.stream_id != sid:
                continue
            if isinstance(f, (HeadersFrame, ContinuationFrame)):
                hdrs += f.decoded
            elif isinstance(f, DataFrame):
                body += f.data
                if window_update and f.flow_controlled_length:
                    self.send_quiet(WindowUpdateFrame(0, window_increment=f.flow_controlled_length))
                    self.send_quiet(WindowUpdateFrame(sid,
                                                      window_increment=f.flow_controlled_length))
            elif isinstance(f, RstStreamFrame):
                return hdrs, body, got
            if "END_STREAM" in f.flags:
                return hdrs, body, got

    def goaway(self, timeout=None):
        """Frames until GOAWAY or EOF: the GOAWAY frame, or None."""
        for f in self.frames(timeout=timeout,
                             until=lambda f: f is None or isinstance(f, GoAwayFrame)):
            if isinstance(f, GoAwayFrame):
                return f
        return None

    def closed_within(self, timeout=3.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                f = self.read_frame(deadline - time.monotonic())
            except socket.timeout:
                return False
            if f is None:
                return True
        return False


def status(hdrs):
    for k, v in hdrs:
        if k == ":status":
            return int(v)
    return None


def header(hdrs, name):
    for k, v in hdrs:
        if k == name:
            return v
    return None


def rst_code(frames, sid):
    for f in frames:
        if isinstance(f, RstStreamFrame) and f.stream_id == sid:
            return f.error_code
    return None
