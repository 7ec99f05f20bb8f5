"""The runner's processes: the listening socket (a unix socket it makes, or
one inherited as systemd's socket activation gives it, the way scalwsd's
helper processes hand theirs over), N workers forked from here that each
load the application and serve, restarted when they die; TERM or INT stops
them gracefully."""

import argparse
import importlib
import inspect
import os
import signal
import socket
import stat
import sys
import time

# A worker that cannot load the application exits with this: the runner
# then stops rather than restart it in a loop.
EXIT_LOAD_FAILED = 3
STOP_TIMEOUT = 10.0


def log(msg):
    sys.stderr.write("scalws_bridge[%d]: %s\n" % (os.getpid(), msg))
    sys.stderr.flush()


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m scalws_bridge",
                                 description="Serve an ASGI or WSGI application to "
                                             "scalwsd's python_bridge_pass.")
    ap.add_argument("--app", required=True, help="module:callable (module.attr.attr ...)")
    ap.add_argument("--interface", choices=("asgi", "wsgi", "auto"), default="auto")
    ap.add_argument("--socket", help="the unix socket to listen on (made here)")
    ap.add_argument("--socket-mode", default="660",
                    help="its permissions, octal (default 660)")
    ap.add_argument("--fd", type=int,
                    help="an inherited listening socket (default: fd 3 when "
                         "LISTEN_FDS/LISTEN_PID say so)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--lifespan", choices=("auto", "on", "off"), default="auto",
                    help="ASGI lifespan (auto: used if the application supports it)")
    ap.add_argument("--chdir", help="change to this directory first")
    ap.add_argument("--path", action="append", default=[],
                    help="a directory to put first on sys.path (repeatable; the "
                         "working directory is always there)")
    a = ap.parse_args(argv)
    if a.workers < 1:
        ap.error("--workers must be at least 1")
    return a


def listening_socket(a):
    if a.socket:
        try:
            if stat.S_ISSOCK(os.lstat(a.socket).st_mode):
                os.unlink(a.socket)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(a.socket)
        os.chmod(a.socket, int(a.socket_mode, 8))
        s.listen(1024)
        return s
    fd = a.fd
    if fd is None:
        if (os.environ.get("LISTEN_PID") == str(os.getpid())
                and int(os.environ.get("LISTEN_FDS", "0")) >= 1):
            fd = 3
        else:
            raise SystemExit("scalws_bridge: no --socket, no --fd and no LISTEN_FDS")
    for k in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(k, None)
    return socket.socket(fileno=fd)


def load_app(spec):
    mod, _, attr = spec.partition(":")
    if not mod or not attr:
        raise ValueError("--app must be module:callable, not %r" % spec)
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def guess_interface(app):
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else \
        getattr(app, "__call__", None)
    if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
        return "asgi"
    return "wsgi"


def die_with(parent):
    """TERM when the runner's first process dies (SIGKILL gives it no chance
    to stop its workers): PR_SET_PDEATHSIG, Linux's."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:          # it died before the call
        os._exit(0)


def worker(a, sock, parent):
    """A worker's life: load, serve until TERM; its exit code."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    die_with(parent)
    try:
        app = load_app(a.app)
    except Exception:
        import traceback
        traceback.print_exc()
        return EXIT_LOAD_FAILED
    kind = a.interface if a.interface != "auto" else guess_interface(app)
    if kind == "asgi":
        from .asgi import serve
        return serve(app, sock, a.lifespan)
    from .wsgi import serve
    return serve(app, sock)


def main(argv=None):
    a = parse_args(argv)
    if a.chdir:
        os.chdir(a.chdir)
    sys.path[:0] = a.path + [os.getcwd()]
    sock = listening_socket(a)
    stopping = []

    class Stop(Exception):
        pass

    def on_stop(signo, frame):
        # raised: waitpid() is not interrupted by a handler that returns
        if not stopping:
            stopping.append(signo)
            raise Stop()

    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    children = {}

    me = os.getpid()

    def spawn(slot):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = worker(a, sock, me)
            finally:
                os._exit(code if isinstance(code, int) else 0)
        children[pid] = (slot, time.monotonic())

    for i in range(a.workers):
        spawn(i)
    log("serving %s with %d worker(s)" % (a.app, a.workers))
    failed = 0
    try:
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            slot, started = children.pop(pid, (None, 0))
            if slot is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            if code == EXIT_LOAD_FAILED:
                log("worker %d could not load %s: stopping" % (pid, a.app))
                failed = EXIT_LOAD_FAILED
                break
            log("worker %d exited (%d): starting another" % (pid, code))
            if time.monotonic() - started < 1.0:
                time.sleep(1.0)          # a crash at start: not in a tight loop
            spawn(slot)
    except Stop:
        pass
    stopping.append(0)
    for pid in children:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT
    while children:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid:
            children.pop(pid, None)
            continue
        if time.monotonic() > deadline:
            for pid in children:
                os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.05)
    if a.socket:
        try:
            os.unlink(a.socket)
        except OSError:
            pass
    return failed
