"""The FastAPI application of test_python_bridge_tasks.py, under /f: what
each request sees of its task and its context (the bridge runs a
connection's requests in one serving task), anyio's cancel scopes,
run_in_threadpool (sync endpoints), BaseHTTPMiddleware, background tasks
and a dependency with yield. MARKS (an environment variable) is a
directory where it leaves files the tests look at."""
import asyncio
import contextvars
import os
import threading

import anyio
from fastapi import BackgroundTasks, Depends, FastAPI
from fastapi.responses import PlainTextResponse, StreamingResponse
from starlette.middleware.base import BaseHTTPMiddleware

MARKS = os.environ.get("MARKS", "/tmp")
seen = contextvars.ContextVar("seen", default="unset")
host_seen = contextvars.ContextVar("host_seen", default="unset")
KEPT = []                    # tasks that requests kept (/f/keep)
api = FastAPI()


def mark(name, text=""):
    with open(os.path.join(MARKS, name), "w") as f:
        f.write(text)


class Stamp(BaseHTTPMiddleware):
    """BaseHTTPMiddleware (anyio task groups around call_next)."""

    async def dispatch(self, request, call_next):
        response = await call_next(request)
        response.headers["x-stamp"] = "yes"
        return response


api.add_middleware(Stamp)


def state(tag):
    """What this request sees, then what it leaves in its context."""
    t = asyncio.current_task()
    before = seen.get()
    seen.set(tag)
    return {"seen": before, "task": t.get_name(), "done": t.done(),
            "cancelling": t.cancelling(), "tasks": len(asyncio.all_tasks())}


@api.get("/f/state")
async def get_state(tag: str = "x"):
    return state(tag)


@api.get("/f/cancel")
async def cancel(tag: str = "x"):
    """An anyio cancel scope whose deadline passes."""
    with anyio.move_on_after(0.05) as scope:
        await asyncio.sleep(10)
    return dict(state(tag), moved_on=scope.cancel_called)


@api.get("/f/awaitable")
async def awaitable():
    return state("a")


@api.get("/f/hostcancel")
async def hostcancel():
    return state("h")


@api.get("/f/timeout")
async def timeout(tag: str = "x"):
    """asyncio.timeout (3.11) whose deadline passes."""
    try:
        async with asyncio.timeout(0.05):
            await asyncio.sleep(10)
        timed_out = False
    except TimeoutError:
        timed_out = True
    return dict(state(tag), timed_out=timed_out)


@api.get("/f/fail")
async def fail():
    """fail_after: the TimeoutError becomes a 500."""
    with anyio.fail_after(0.05):
        await asyncio.sleep(10)


@api.get("/f/sync")
def sync_endpoint():
    """A sync endpoint: run_in_threadpool (anyio's worker threads)."""
    return {"thread": threading.current_thread() is not threading.main_thread()}


@api.get("/f/group")
async def group():
    """An anyio task group with children."""
    out = []

    async def child(i):
        await asyncio.sleep(0.01 * i)
        out.append(i)
    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(child, i)
    return {"children": out}


async def later():
    await asyncio.sleep(1.0)
    mark("background-done")


@api.get("/f/background")
async def background(tasks: BackgroundTasks):
    """Its application goes on after the response (the background task)."""
    tasks.add_task(later)
    return PlainTextResponse("answered")


async def resource():
    mark("resource-open")
    yield "r"
    mark("resource-closed")


@api.get("/f/dep")
async def dep(r: str = Depends(resource)):
    return {"resource": r}


@api.get("/f/stream")
async def stream():
    async def gen():
        for i in range(5):
            await asyncio.sleep(0)
            yield b"%d," % i
    return StreamingResponse(gen(), media_type="text/plain")


async def wrapper(scope, receive, send):
    """Plain ASGI around FastAPI: what the request's own task (the one the
    runner gives it) looks like, in an x-host field: its name, whether it
    is being cancelled, and the context variable it found (then set)."""
    if scope["type"] != "http":
        return await api(scope, receive, send)
    t = asyncio.current_task()
    host = "%s,%d,%s,%s" % (t.get_name(), t.cancelling(), host_seen.get(),
                            "kept" if t in KEPT else "new")
    host_seen.set("set")
    if scope["path"] in ("/f/plain", "/f/keep"):
        # answered here, without FastAPI's BaseHTTPMiddleware (whose task
        # group leaves the request's task being cancelled: the runner gives
        # the next request a new one), so that the serving task goes on
        if scope["path"] == "/f/keep":
            # a request that keeps its task (a timer that would cancel it
            # later, say): no later request may run in it
            KEPT.append(t)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"x-host", host.encode()), (b"x-stamp", b"yes")]})
        await send({"type": "http.response.body", "body": b'{"seen": "unset"}'})
        return
    if scope["path"] == "/f/hostcancel":
        # a cancel scope in the request's own task: anyio 3 leaves it
        # cancelling() 1 (no uncancel), which the next request must not see
        with anyio.move_on_after(0.01):
            await asyncio.sleep(5)

    async def send_host(message):
        if message["type"] == "http.response.start":
            message = dict(message, headers=list(message.get("headers", []))
                           + [(b"x-host", host.encode())])
        await send(message)
    await api(scope, receive, send_host)


class Awaitable:
    """An awaitable that is not a coroutine."""

    def __init__(self, coro):
        self.coro = coro

    def __await__(self):
        return self.coro.__await__()


class App:
    """The application: a callable that is not a coroutine function;
    /f/awaitable answers through an awaitable that is not a coroutine,
    /f/raise-at-call raises when called (before anything is awaited)."""

    def __call__(self, scope, receive, send):
        path = scope.get("path")
        if path == "/f/raise-at-call":
            raise RuntimeError("raised when called, on purpose")
        if path == "/f/awaitable":
            return Awaitable(wrapper(scope, receive, send))
        return wrapper(scope, receive, send)


app = App()
