"""events { use epoll | io_uring; }: the io_uring method serves as epoll
does, closes connections at once, and a worker whose kernel refuses io_uring
(here: a seccomp filter that fails io_uring_setup with ENOSYS) uses epoll
with one notice line."""
import ctypes
import errno
import os
import platform
import socket
import struct

import pytest

import swsharness as h
from test_proxy_errors import test_client_abort_mid_response as abort_mid_response


def _built_with_liburing():
    cfg = os.path.join(os.path.dirname(h.SCALWSD), "sws_auto_config.h")
    try:
        with open(cfg) as f:
            return "#define SWS_HAVE_LIBURING 1" in f.read()
    except OSError:
        return False


needs_uring = pytest.mark.skipif(not _built_with_liburing(),
                                 reason="scalwsd built without liburing")

FALLBACK = "using epoll instead of io_uring"


def _fd_kinds(pid):
    kinds = []
    d = "/proc/%d/fd" % pid
    for name in os.listdir(d):
        try:
            kinds.append(os.readlink(os.path.join(d, name)))
        except OSError:
            pass
    return kinds


def _worker_fds(srv):
    """The fd kinds of the only worker once its event method is set up (it
    is a child before it has its ring or epoll instance)."""
    kids = srv.wait_children(1)
    assert len(kids) == 1, srv.diagnostics()
    methods = ("anon_inode:[io_uring]", "anon_inode:[eventpoll]")
    assert h.wait_for(lambda: any(m in _fd_kinds(kids[0]) for m in methods), timeout=5), \
        srv.diagnostics()
    return _fd_kinds(kids[0])


def _keepalive_requests(port, n):
    with h.Conn(port) as cl:
        for _ in range(n):
            cl.send(h.request("GET", "/respond"))
            r = cl.read_response()
            assert r.status == 200 and r.body == b"Hello, world!"


def _refuse_io_uring(err):
    """A preexec_fn: a seccomp filter that fails io_uring_setup(2) with err,
    as a kernel without io_uring (ENOSYS), one that forbids it (EPERM:
    kernel.io_uring_disabled) or one too old for the ring's flags (EINVAL)
    does."""
    return lambda: _seccomp_io_uring_setup(err)


def _seccomp_io_uring_setup(err):
    libc = ctypes.CDLL(None, use_errno=True)
    audit_arch_x86_64 = 0xC000003E
    nr_io_uring_setup = 425
    ret_errno = 0x00050000 | err
    ret_allow = 0x7FFF0000
    insns = [
        (0x20, 0, 0, 4),                       # A = arch
        (0x15, 0, 3, audit_arch_x86_64),       # other arch: allow
        (0x20, 0, 0, 0),                       # A = syscall number
        (0x15, 0, 1, nr_io_uring_setup),
        (0x06, 0, 0, ret_errno),
        (0x06, 0, 0, ret_allow),
    ]
    code = b"".join(struct.pack("HBBI", *i) for i in insns)
    buf = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(insns), ctypes.addressof(buf))
    if libc.prctl(38, 1, 0, 0, 0) != 0:          # PR_SET_NO_NEW_PRIVS
        os._exit(101)
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:   # SECCOMP_MODE_FILTER
        os._exit(102)


@needs_uring
def test_io_uring_serves_and_closes(tmp_path):
    srv = h.launch(tmp_path, events="use io_uring;",
                   files={"html/small.txt": "small file\n"})
    try:
        kinds = _worker_fds(srv)
        assert "anon_inode:[io_uring]" in kinds, kinds
        assert "anon_inode:[eventpoll]" not in kinds, kinds
        _keepalive_requests(srv.port, 20)
        r = h.curl(srv.url("/small.txt"))
        assert r.status == 200 and r.body == b"small file\n"
        # Connection: close ends the TCP connection at once: the poll that
        # holds the socket is removed with the close.
        with h.Conn(srv.port) as cl:
            cl.send(h.request("GET", "/respond", headers=[("Connection", "close")]))
            r = cl.read_response()
            assert r.status == 200
            assert cl.closed_within(2.0)
        # An idle client that goes away is seen (its poll reports the end).
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
        s.sendall(b"GET /respond HTTP/1.1\r\nHost: x\r\n")
        s.close()
        _keepalive_requests(srv.port, 2)
        assert FALLBACK not in srv.error_log()
    finally:
        srv.stop()


@needs_uring
def test_io_uring_client_abort_mid_response(sws, origin):
    # The client resets while the origin streams: the upstream connection
    # is closed while a wake-up of its poll waits to be run, and its socket
    # must go then (a poll that IORING_OP_POLL_REMOVE could not remove, with
    # EALREADY, kept it open). test_proxy_errors.py's test, on io_uring.
    abort_mid_response(lambda **kw: sws(events="use io_uring;", **kw), origin)


def test_epoll_is_the_default(tmp_path):
    srv = h.launch(tmp_path)
    try:
        kinds = _worker_fds(srv)
        if h.EVENTS_USE != "io_uring":
            assert "anon_inode:[eventpoll]" in kinds, kinds
            assert "anon_inode:[io_uring]" not in kinds, kinds
        _keepalive_requests(srv.port, 3)
    finally:
        srv.stop()


@needs_uring
@pytest.mark.skipif(platform.machine() != "x86_64",
                    reason="the seccomp filter is written for x86_64")
@pytest.mark.parametrize("err", [errno.ENOSYS, errno.EPERM, errno.EINVAL])
def test_refused_io_uring_falls_back_to_epoll(tmp_path, err):
    srv = h.launch(tmp_path, events="use io_uring;", preexec_fn=_refuse_io_uring(err))
    try:
        kinds = _worker_fds(srv)
        assert "anon_inode:[eventpoll]" in kinds, kinds
        assert "anon_inode:[io_uring]" not in kinds, kinds
        _keepalive_requests(srv.port, 3)
        log = srv.error_log()
        assert log.count(FALLBACK) == 1, log
        line = [x for x in log.splitlines() if FALLBACK in x][0]
        assert "[notice]" in line and os.strerror(err) in line, line
    finally:
        srv.stop()


@needs_uring
def test_io_uring_two_workers_and_reload(tmp_path):
    srv = h.launch(tmp_path, events="use io_uring;", workers=2)
    try:
        old = srv.wait_children(2)
        assert len(old) == 2, srv.diagnostics()
        for _ in range(4):
            _keepalive_requests(srv.port, 2)
        srv.signal(h._signal.SIGHUP)
        assert h.wait_for(lambda: len([p for p in srv.children() if p not in old]) == 2,
                          timeout=5), srv.diagnostics()
        _keepalive_requests(srv.port, 2)
        assert h.wait_for(lambda: not set(old) & set(srv.children()), timeout=5)
    finally:
        srv.stop()


def test_use_errors(tmp_path):
    cases = [
        ("events { use kqueue; }", 'supports only "epoll" and "io_uring"'),
        ("events { use epoll; use epoll; }", "is duplicate"),
    ]
    for i, (events, needle) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        conf = h.MAIN_TEMPLATE.replace("events { worker_connections 1024; @EVENTS@ }", events)
        rc, out, listening = h.start_expect_failure(d, conf=conf)
        assert rc not in (None, 0) and needle in out, (events, out)
        assert not listening
    if not _built_with_liburing():
        d = tmp_path / "nouring"
        d.mkdir()
        rc, out, _ = h.start_expect_failure(d, events="use io_uring;")
        assert rc not in (None, 0) and "built without liburing" in out, out
