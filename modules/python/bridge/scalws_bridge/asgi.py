"""ASGI over the bridge: one asyncio loop per worker (uvloop when it is
installed), a protocol per connection from scalwsd, one request at a time
on each (scalwsd sends the next only after END).

Back-pressure: request body pieces wait for the application's receive()
in a queue of at most BODY_HIGH_WATER bytes, beyond which the connection
stops being read (scalwsd then holds the rest, and in turn stops reading
the client); send() waits while the transport's write buffer is above its
high-water mark, so that a slow client (scalwsd stops reading) slows the
application instead of growing its memory."""

import asyncio
import builtins
import signal
from contextvars import copy_context
import socket
import sys
from sys import getrefcount
import traceback

from . import _bridge
from .websocket import WebSocket, is_websocket

ASGI_HTTP = {"version": "3.0", "spec_version": "2.4"}
ASGI_LIFESPAN = {"version": "3.0", "spec_version": "2.0"}
BODY_HIGH_WATER = 256 * 1024
WRITE_HIGH_WATER = 256 * 1024
STOP_TIMEOUT = 10.0
DISCONNECT = {"type": "http.disconnect"}
END_KEEP = _bridge.end(_bridge.END_KEEP)
END_KEEP_FLAG = _bridge.END_KEEP
DONE = _bridge.DONE
REQUEST_BODY = _bridge.REQUEST_BODY
REQUEST_UPGRADE = _bridge.REQUEST_UPGRADE
response = _bridge.response
Gate = _bridge.Gate
in_context = _bridge.in_context
current_task = asyncio.current_task
Task = asyncio.Task
# a serving task per connection needs Task.cancelling() (Python 3.11)
SERVE = hasattr(Task, "cancelling")
TASK_NAME = "scalws-request"


def log(msg):
    sys.stderr.write("scalws_bridge: %s\n" % msg)
    sys.stderr.flush()


ClientDisconnected = _bridge.ClientDisconnected
GROUP = getattr(builtins, "BaseExceptionGroup", None)        # Python 3.11


def gone(e):
    """Whether e is what the client's going away raised in the application:
    the cancellation of its task, send()'s ClientDisconnected (ASGI 2.4),
    or a group of them (an anyio task group's, Starlette's streaming)."""
    if isinstance(e, (asyncio.CancelledError, ClientDisconnected)):
        return True
    if GROUP is not None and isinstance(e, GROUP):
        return all(gone(x) for x in e.exceptions)
    return False


class Cycle(_bridge.Cycle):
    """One request: the application's receive() and send(). The state
    (conn, scope, chunks, size, more_body, final_given, waiter, status,
    headers, started, head_sent, complete, disconnected) and send() are the
    C base's: send() writes the message when it is called and returns what
    is awaited, _bridge.DONE (already done, and a coroutine to asyncio:
    create_task(send(m)) works) or the wait for the transport's buffer to
    drain; errors are raised by the call, before the await (a coroutine
    per call, and send() in Python, cost more than the rest of a plain
    request's send: docs/benchmarks/2026-12-05-bridge-cost.md)."""

    __slots__ = ()

    def wake(self):
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def run(self, app):
        """The request in a task of its own."""
        try:
            await app(self.scope, self.receive, self.send)
        except BaseException as e:
            self.failed(e)
        else:
            if not self.complete and not self.disconnected:
                self.returned_early()
        finally:
            self.conn.worker.request_done()

    def failed(self, e):
        """The application raised e (called in the except clause)."""
        if self.disconnected and gone(e):
            pass                     # the client went: nothing to tell anyone
        else:
            log("the application raised:\n" + traceback.format_exc().rstrip())
        if not self.head_sent and not self.disconnected:
            self.error_response()
        elif not self.complete:
            self.conn.abort()
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise

    def returned_early(self):
        """The application returned before its response was complete."""
        if not self.head_sent:
            log("the application returned without a complete response")
            self.error_response()
        else:
            log("the application returned before the end of its response")
            self.conn.abort()

    def error_response(self):
        self.head_sent = True
        self.conn.write(_bridge.response(500, [(b"content-type", b"text/plain"),
                                               (b"content-length", b"21")],
                                         b"Internal Server Error", _bridge.END_KEEP))
        self.response_complete()

    def response_complete(self):
        self.complete = True
        if self.waiter is not None:
            self.wake()              # a receive() waiting gets the disconnect
        self.conn.response_done(self)

    async def receive(self):
        while True:
            if self.disconnected:
                return DISCONNECT
            if self.chunks or (not self.more_body and not self.final_given):
                chunks = self.chunks
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self.chunks = []
                self.size = 0
                self.conn.resume_reading()
                if not self.more_body:
                    self.final_given = True
                return {"type": "http.request", "body": data, "more_body": self.more_body}
            if self.complete:
                return DISCONNECT
            self.waiter = self.conn.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None


if hasattr(asyncio.coroutines, "_is_coroutine"):
    # asyncio.iscoroutinefunction(cycle.send) is true, as for a coroutine
    # function (what some frameworks check before awaiting)
    _bridge.set_coroutine_marker(asyncio.coroutines._is_coroutine)


class Connection(asyncio.Protocol):
    """A connection from scalwsd."""

    def __init__(self, worker):
        self.worker = worker
        self.loop = worker.loop
        self.parser = _bridge.Parser(self.on_request, self.on_body, self.on_body_end,
                                     _bridge.MODE_ASGI, ASGI_HTTP)
        self.parser.state = worker.state
        self.transport = None
        self.fd = -1
        self.cycle = None
        self.read_paused = False
        self.write_paused = False
        self.drain_waiter = None
        self.closed = False
        self.ws = None               # a websocket, after its REQUEST
        self.serving = False         # its serving task runs (serve())
        self.gate = None             # ... and waits for a request on this
        # What the transport calls with each read: the parser's feed itself,
        # no Python call in between (an invalid frame's ValueError reaches
        # the loop, which logs it and closes the connection); a websocket
        # switches it (to_websocket).
        self.data_received = self.parser.feed

    # -- asyncio.Protocol

    def connection_made(self, transport):
        self.transport = transport
        # the socket, for send()'s writes when the transport holds nothing
        sock = transport.get_extra_info("socket")
        self.fd = sock.fileno() if sock is not None else -1
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        self.worker.connections.add(self)

    def data_received(self, data):
        """(the instance's is parser.feed until a websocket: ws_received)"""
        self.parser.feed(data)

    def ws_received(self, data):
        if self.ws.state == "open":
            self.ws.feed(data)

    def to_websocket(self, ws):
        self.ws = ws
        self.data_received = self.ws_received
        # the transport keeps the protocol's data_received (uvloop does):
        # given again, it takes the new one
        self.transport.set_protocol(self)

    def eof_received(self):
        return False

    def connection_lost(self, exc):
        self.closed = True
        self.worker.connections.discard(self)
        g = self.gate
        if g is not None:
            self.gate = None
            g.set_result(None)       # the serving task ends
        c = self.cycle
        if self.ws is not None:
            self.ws.lost()
        elif c is not None:
            c.disconnected = True
            c.wake()
        self.wake_drain()

    def pause_writing(self):
        self.write_paused = True

    def resume_writing(self):
        self.write_paused = False
        self.wake_drain()

    # -- the parser's callbacks

    def on_request(self, scope, flags):
        if self.cycle is not None or self.ws is not None:
            raise ValueError("python bridge: a request before the previous one ended")
        w = self.worker
        w.active += 1
        if flags & REQUEST_UPGRADE and is_websocket(scope):
            self.to_websocket(WebSocket(self, scope))
            self.loop.create_task(self.ws.run(w.app))
            return
        # (the connection's transport, socket and parser given: send() does
        # not look them up)
        c = self.cycle = Cycle(self, scope, flags & REQUEST_BODY != 0, self.transport,
                               self.fd, self.parser)
        g = self.gate
        if g is not None:
            # the serving task waits for it: it runs now, in this read
            self.gate = None
            g.hand_over(c)
        elif w.factory_set:
            self.loop.create_task(c.run(w.app))
        elif self.serving or not SERVE:
            # the serving task's application goes on after its response
            # (a background task of its own, say): this one gets a task
            # (named here: a task asyncio names itself is "Task-N", made with
            # a format, about 1,300 of the 7,000 or so instructions a task cost)
            Task(c.run(w.app), loop=self.loop, name=TASK_NAME)
        else:
            self.serving = True
            Task(self.serve(c), loop=self.loop, name=TASK_NAME)

    async def serve(self, c):
        """The connection's serving task: its requests one after another,
        each handed over by on_request() in the read that brought it
        (Gate.hand_over: no task made and no loop iteration per request; a task
        cost about a quarter of a plain request). For the application it is
        the request's task, as a task per request would be: current_task()
        gives it, each request runs in a fresh copy of the context, and
        cancelling it (anyio's cancel scopes) works as for a request's own
        task; a request that leaves it cancelled or being cancelled, or
        keeps a reference to it, ends it, and the next request gets a new
        one."""
        task = current_task()
        # what refers to it when nothing else does (the loop's current task,
        # this frame, the step's caller: the first step's handle, then the
        # task's wake-up that the gate keeps): more after a request, and the
        # request kept it somewhere (a timer that would cancel it, say)
        refs = getrefcount(task)
        base = copy_context()
        # where it waits for the next request (a future to asyncio, emptied
        # by each wait: none made per request)
        gate = Gate(self.loop)
        w = self.worker
        app = w.app
        try:
            while True:
                # Cycle.run(), inline: no coroutine of ours around the app's
                try:
                    await in_context(app, c, base)
                except BaseException as e:
                    c.failed(e)
                else:
                    if not c.complete and not c.disconnected:
                        c.returned_early()
                w.active -= 1                   # request_done(), inline
                if w.stopping and not w.active:
                    w.idle.set()
                if task.cancelling() or self.closed or getrefcount(task) > refs:
                    return
                self.gate = gate
                c = await gate
                if c is None:                # the connection is gone
                    return
        finally:
            self.gate = None
            self.serving = False

    def on_body(self, data):
        c = self.cycle
        if c.complete:
            return                   # the response is over: the rest is dropped
        c.chunks.append(data)
        c.size += len(data)
        if c.size > BODY_HIGH_WATER and not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()
        c.wake()

    def on_body_end(self):
        c = self.cycle
        c.more_body = False
        c.wake()
        if c.complete:
            self.cycle = None

    # -- for the cycle

    def write(self, data):
        if not self.closed:
            self.transport.write(data)

    def abort(self):
        if not self.closed:
            self.transport.abort()

    def pause_reading(self):
        if not self.read_paused and not self.closed:
            self.read_paused = True
            self.transport.pause_reading()

    def close_after_write(self):
        if not self.closed:
            self.transport.close()      # what is buffered goes first

    def resume_reading(self):
        if self.read_paused:
            self.read_paused = False
            if not self.closed:
                self.transport.resume_reading()

    async def drain(self):
        if self.closed or not self.write_paused:
            return
        self.drain_waiter = self.loop.create_future()
        try:
            await self.drain_waiter
        finally:
            self.drain_waiter = None

    def wake_drain(self):
        w = self.drain_waiter
        if w is not None and not w.done():
            w.set_result(None)

    def request_done(self, cycle):
        self.worker.request_done()

    def response_done(self, cycle):
        if not self.parser.in_body and self.cycle is cycle:
            self.cycle = None
        # else: the body's rest is read and dropped until BODY_END
        self.resume_reading()



class Lifespan:
    """The ASGI lifespan protocol around the serving."""

    def __init__(self, app, state, mode):
        self.app = app
        self.state = state
        self.mode = mode
        self.incoming = asyncio.Queue()
        self.startup_done = asyncio.Event()
        self.shutdown_done = asyncio.Event()
        self.failed = None
        self.unsupported = False
        self.task = None

    async def run(self):
        scope = {"type": "lifespan", "asgi": ASGI_LIFESPAN, "state": self.state}
        try:
            await self.app(scope, self.incoming.get, self.send)
        except BaseException:
            if not self.startup_done.is_set():
                self.unsupported = True
                if self.mode == "on":
                    self.failed = "the application's lifespan raised:\n" + \
                        traceback.format_exc().rstrip()
        finally:
            self.startup_done.set()
            self.shutdown_done.set()

    async def send(self, message):
        kind = message["type"]
        if kind in ("lifespan.startup.complete", "lifespan.startup.failed"):
            if kind.endswith("failed"):
                self.failed = message.get("message", "") or "lifespan.startup.failed"
            self.startup_done.set()
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed"):
            self.shutdown_done.set()

    async def startup(self):
        if self.mode == "off":
            return True
        self.task = asyncio.get_running_loop().create_task(self.run())
        await self.incoming.put({"type": "lifespan.startup"})
        await self.startup_done.wait()
        if self.failed:
            log("startup failed: %s" % self.failed)
            return False
        return True

    async def shutdown(self):
        if self.mode == "off" or self.unsupported or self.task is None:
            return
        await self.incoming.put({"type": "lifespan.shutdown"})
        try:
            await asyncio.wait_for(self.shutdown_done.wait(), STOP_TIMEOUT)
        except asyncio.TimeoutError:
            log("lifespan shutdown timed out")


class Worker:
    def __init__(self, app, loop):
        self.app = app
        self.loop = loop
        self.state = {}
        self.connections = set()
        self.active = 0
        self.stopping = False
        self.idle = asyncio.Event()
        # a request's task is made by Connection.on_request itself, unless
        # the application set a task factory in its lifespan: then the loop's
        self.factory_set = False

    def request_done(self):
        self.active -= 1
        if self.stopping and not self.active:
            self.idle.set()

    async def main(self, sock, lifespan):
        ls = Lifespan(self.app, self.state, lifespan)
        if not await ls.startup():
            return 3
        if ls.unsupported or lifespan == "off":
            self.state = None
        if self.loop.get_task_factory() is not None:
            self.factory_set = True
        factory = lambda: Connection(self)      # noqa: E731
        if sock.family == socket.AF_UNIX:
            server = await self.loop.create_unix_server(factory, sock=sock)
        else:
            server = await self.loop.create_server(factory, sock=sock)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            self.loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        server.close()
        self.stopping = True
        if self.active:
            try:
                await asyncio.wait_for(self.idle.wait(), STOP_TIMEOUT)
            except asyncio.TimeoutError:
                pass
        for c in list(self.connections):
            c.transport.close()
        await ls.shutdown()
        return 0


def exception_handler(loop, context):
    """The parser's ValueError (invalid frames from scalwsd), which the
    transport hands to the loop (Connection.data_received is parser.feed):
    one line, as the runner logs; the rest as asyncio does."""
    exc = context.get("exception")
    if isinstance(exc, ValueError) and isinstance(context.get("protocol"), Connection):
        log(str(exc))
        return
    loop.default_exception_handler(context)


def new_loop():
    try:
        import uvloop
        return uvloop.new_event_loop()
    except ImportError:
        return asyncio.new_event_loop()


def serve(app, sock, lifespan="auto"):
    loop = new_loop()
    loop.set_exception_handler(exception_handler)
    asyncio.set_event_loop(loop)
    sock.setblocking(False)
    w = Worker(app, loop)
    try:
        return loop.run_until_complete(w.main(sock, lifespan))
    finally:
        loop.close()
