"""A Starlette (ASGI) application for test_apps.py."""
import hashlib
import os

from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route, WebSocketRoute


async def home(request):
    return PlainTextResponse("starlette %d %s %s" % (os.getpid(), request.method,
                                                     request.url.path))


async def pid(request):
    return PlainTextResponse(str(os.getpid()))


async def headers(request):
    return JSONResponse({k: v for k, v in request.headers.items()})


async def env(request):
    return JSONResponse({k: v for k, v in os.environ.items()
                         if k.startswith(("MALLOC_", "APP_", "PYTHON"))})


async def echo(request):
    h = hashlib.sha256()
    n = 0
    async for chunk in request.stream():
        n += len(chunk)
        h.update(chunk)
    return PlainTextResponse("%d %s" % (n, h.hexdigest()))


async def stream(request):
    import asyncio
    import time

    async def gen():
        for i in range(int(request.query_params.get("n", "5"))):
            yield "chunk %d %d\n" % (i, int(time.time() * 1000))
            await asyncio.sleep(0.05)
    return StreamingResponse(gen(), media_type="text/plain")


async def ws(websocket):
    await websocket.accept()
    try:
        while True:
            text = await websocket.receive_text()
            await websocket.send_text("echo " + text)
    except Exception:
        pass


ROUTES = {"pid": pid, "headers": headers, "env": env, "echo": echo, "stream": stream}


async def dispatch(request):
    """By the last segment of the path: /pid and /prefix/pid alike."""
    return await ROUTES.get(request.url.path.rsplit("/", 1)[-1], home)(request)


app = Starlette(routes=[WebSocketRoute("/ws", ws), WebSocketRoute("/{prefix:path}/ws", ws),
                        Route("/{path:path}", dispatch, methods=["GET", "POST", "HEAD"])])
