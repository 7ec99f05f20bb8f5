"""Active health probes as an operation of the protocol module
(sws_http_upstream_probe_t): tests/modules/tping.c probes in a line
protocol of its own ("PING uri" / "PONG") against a raw TCP server here;
HTTP's probe stays the default (test_proxy_upstream.py has its cases)."""
import socket
import threading
from pathlib import Path

import pytest

import swsharness as h

TPING_SRC = Path(h.SRC) / "tests" / "modules" / "tping.c"


@pytest.fixture(scope="module")
def tping(tmp_path_factory):
    so = h.build_module(tmp_path_factory.mktemp("tping"), "tping", TPING_SRC.read_text())
    return "load_module %s;" % so


class LineServer:
    """Reads one line per connection, records it, answers self.answer, closes."""

    def __init__(self):
        self.answer = b"PONG\r\n"
        self.lines = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.port

    def _run(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            c.settimeout(2)
            buf = b""
            try:
                while b"\n" not in buf:
                    d = c.recv(4096)
                    if not d:
                        break
                    buf += d
                self.lines.append(buf)
                c.sendall(self.answer)
            except OSError:
                pass
            finally:
                c.close()

    def stop(self):
        self.stopping = True
        self.sock.close()
        self.thread.join(2)


@pytest.fixture
def line_server():
    s = LineServer()
    yield s
    s.stop()


def test_probe_speaks_the_modules_protocol(sws, tping, line_server):
    s = line_server
    srv = sws(load=tping, http="""upstream g { server %s;
                health_check interval=100ms uri=/ready fails=1 passes=1; }""" % s.addr,
              server="location /t { tping_pass g; }")
    assert h.wait_for(lambda: len(s.lines) >= 2, 3)
    assert s.lines[0] == b"PING /ready\r\n"          # not an HTTP GET
    assert "failed its health check" not in srv.error_log()
    s.answer = b"NOPE\r\n"
    assert h.wait_file_contains(srv.error_log_path,
                                'of "g" failed its health check (no pong): unhealthy', 3)
    s.answer = b"PONG\r\n"
    assert h.wait_file_contains(srv.error_log_path,
                                'of "g" passed its health checks: healthy', 3)
    s.answer = b""                                   # closed without a line
    assert h.wait_file_contains(srv.error_log_path, "failed its health check (no line)", 3)


def test_group_of_two_protocols_takes_the_first(sws, tping, line_server):
    s = line_server
    srv = sws(load=tping, http="""upstream g { server %s;
                health_check interval=100ms uri=/ready; }""" % s.addr,
              server="""location /p { proxy_pass http://g; }
                        location /t { tping_pass g; }""")
    assert h.wait_for(lambda: len(s.lines) >= 1, 3)
    assert s.lines[0].startswith(b"GET /ready HTTP/1.1\r\n")   # HTTP's: the first
    assert ('upstream "g" is reached by protocols with different health probes: '
            'its probes are http') in srv.stderr() + srv.error_log()


def test_probe_request_that_does_not_fit_fails(sws, origin):
    o = origin()
    uri = "/" + "x" * 2100                          # beyond the 2 kB of a probe
    srv = sws(http="upstream g { server %s; health_check interval=100ms uri=%s fails=1; }"
              % (o.addr, uri), server="location / { proxy_pass http://g; }")
    assert h.wait_file_contains(srv.error_log_path,
                                "failed its health check (no probe request)", 3)
    assert not any(r.target.startswith("/xxx") for r in list(o.requests))
