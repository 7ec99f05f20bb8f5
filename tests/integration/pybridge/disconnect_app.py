"""Endless streamed responses for test_python_bridge_disconnect.py, each
leaving in MARKS/NAME-end (a directory) how it ended once the client went
away: /raw/ a raw ASGI application that sends until send() raises, /grp/ the
same in a task group, /s/
Starlette's StreamingResponse, /f/ FastAPI's (each stops in LIMIT seconds
when nothing tells it). Each counts what it made in MARKS/NAME-made."""
import asyncio
import os
import time

from fastapi import FastAPI
from fastapi.responses import StreamingResponse as FastStreamingResponse
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route

MARKS = os.environ.get("MARKS", "/tmp")
CHUNK = b"x" * 16384
LIMIT = 20.0                 # seconds: an application that is never told stops


def mark(name, text=""):
    with open(os.path.join(MARKS, name), "w") as f:
        f.write(text)


async def raw(scope, receive, send):
    """Sends until send() raises (ASGI 2.4) or LIMIT passes (2.3: never
    told); its spec_version and what stopped it in MARKS/raw-end."""
    made = 0
    t0 = time.monotonic()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/octet-stream")]})
    try:
        while time.monotonic() - t0 < LIMIT:
            await send({"type": "http.response.body", "body": CHUNK, "more_body": True})
            made += len(CHUNK)
            if made % (1 << 20) == 0:
                mark("raw-made", str(made))
                await asyncio.sleep(0)
    except OSError as e:
        mark("raw-made", str(made))
        mark("raw-end", "%s %s %s" % (type(e).__name__, scope["asgi"]["spec_version"],
                                      time.monotonic()))
        raise                # as an application that does not catch it would
    mark("raw-end", "never told %s" % scope["asgi"]["spec_version"])


async def grouped(scope, receive, send):
    """The raw stream in a task group, as frameworks stream (and newer
    Starlette, which trusts ASGI 2.4's OSError): what leaves the
    application is an ExceptionGroup around ClientDisconnected."""
    async with asyncio.TaskGroup() as tg:
        tg.create_task(raw(dict(scope, path="/raw/"), receive, send))


def endless(name):
    """A generator for a StreamingResponse (the framework stops iterating
    it; it may close it only when it is collected)."""
    async def gen():
        made = 0
        t0 = time.monotonic()
        while time.monotonic() - t0 < LIMIT:
            made += len(CHUNK)
            if made % (1 << 20) == 0:
                mark(name + "-made", str(made))
                await asyncio.sleep(0)
            yield CHUNK
        mark(name + "-made", str(made))
    return gen()


async def framework(name, asgi, scope, receive, send):
    """How the framework's application call ended, in MARKS/NAME-end: what
    it raised (the client's going away, through its task group), or that
    it returned (its disconnect listener cancelled the stream first)."""
    t0 = time.monotonic()
    try:
        await asgi(scope, receive, send)
    except BaseException as e:
        mark(name + "-end", "raised %s %.3f" % (type(e).__name__, time.monotonic() - t0))
        raise
    mark(name + "-end", "returned %.3f" % (time.monotonic() - t0))


async def star_stream(request):
    return StreamingResponse(endless("s"), media_type="application/octet-stream")


star = Starlette(routes=[Route("/s/stream", star_stream)])
fast = FastAPI()


@fast.get("/f/stream")
async def fast_stream():
    return FastStreamingResponse(endless("f"), media_type="application/octet-stream")


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            await send({"type": msg["type"] + ".complete"})
            if msg["type"] == "lifespan.shutdown":
                return
    path = scope["path"]
    if path.startswith("/raw/"):
        await raw(scope, receive, send)
    elif path.startswith("/grp/"):
        await framework("grp", grouped, scope, receive, send)
    elif path.startswith("/s/"):
        await framework("s", star, scope, receive, send)
    else:
        await framework("f", fast, scope, receive, send)
