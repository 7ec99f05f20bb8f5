"""The Starlette application of the python bridge's tests
(test_python_bridge.py), under the prefix /a: echo, the name of its task, uploads read as a
stream, streamed and endless responses, errors, a raw ASGI endpoint that
waits for the client to go away, a websocket echo, and lifespan. MARKS (an environment
variable) is a directory where it leaves files the tests look at."""
import asyncio
import hashlib
import os

from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Route, WebSocketRoute

MARKS = os.environ.get("MARKS", "/tmp")


def mark(name, text=""):
    with open(os.path.join(MARKS, name), "w") as f:
        f.write(text)


async def echo(request):
    body = await request.body()
    return JSONResponse({
        "method": request.method,
        "path": request.url.path,
        "raw_path": request.scope["raw_path"].decode("latin-1"),
        "query": request.scope["query_string"].decode("latin-1"),
        "args": dict(request.query_params),
        "headers": [[k.decode("latin-1"), v.decode("latin-1")]
                    for k, v in request.scope["headers"]],
        "client": list(request.scope["client"] or []),
        "server": list(request.scope["server"] or []),
        "http_version": request.scope["http_version"],
        "scheme": request.scope["scheme"],
        "length": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "started": getattr(request.state, "started", False),
        "pid": os.getpid(),
    })


async def task(request):
    return JSONResponse({"task": asyncio.current_task().get_name()})


async def upload(request):
    h = hashlib.sha256()
    n = pieces = 0
    async for chunk in request.stream():
        h.update(chunk)
        n += len(chunk)
        pieces += 1 if chunk else 0
    return JSONResponse({"length": n, "sha256": h.hexdigest(), "pieces": pieces})


async def lateread(request):
    """Reads nothing for a while, then all of the body."""
    await asyncio.sleep(float(request.query_params.get("wait", "1.5")))
    n = 0
    async for chunk in request.stream():
        n += len(chunk)
    return JSONResponse({"length": n})


async def stream(request):
    n = int(request.query_params.get("n", "10"))
    size = int(request.query_params.get("size", "1000"))
    delay = float(request.query_params.get("delay", "0"))

    async def gen():
        for i in range(n):
            if delay:
                await asyncio.sleep(delay)
            yield bytes([65 + i % 26]) * size
    return StreamingResponse(gen(), media_type="application/octet-stream")


async def endless(request):
    """A big response whose production is counted in MARKS/produced-asgi."""
    total = int(request.query_params.get("total", str(64 << 20)))
    chunk = b"x" * 65536

    async def gen():
        produced = 0
        while produced < total:
            produced += len(chunk)
            if produced % (1 << 20) == 0:
                mark("produced-asgi", str(produced))
            yield chunk
        mark("produced-asgi", str(produced))
    return StreamingResponse(gen(), media_type="application/octet-stream")


async def status(request):
    code = int(request.path_params["code"])
    r = PlainTextResponse("status %d\n" % code, status_code=code,
                          headers={"X-Test": "yes"})
    r.set_cookie("a", "1")
    r.set_cookie("b", "2")
    return r


async def streamfail(request):
    async def gen():
        yield b"first part, "
        raise RuntimeError("the stream failed on purpose")
    return StreamingResponse(gen(), media_type="text/plain")


async def error(request):
    raise RuntimeError("the application failed on purpose")


class WaitDisconnect:
    """Raw ASGI: answers nothing until http.disconnect comes."""

    async def __call__(self, scope, receive, send):
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                mark("disconnected")
                return


async def ws_echo(websocket):
    """Echoes text and bytes; "bye" closes with 4000; "?" asks for a
    subprotocol's name; "/a/ws-refuse" never accepts."""
    if websocket.url.path == "/a/ws-refuse":
        await websocket.close()
        return
    await websocket.accept(subprotocol="chat" if "chat" in
                           websocket.scope["subprotocols"] else None)
    while True:
        msg = await websocket.receive()
        if msg["type"] == "websocket.disconnect":
            mark("ws-disconnected", str(msg.get("code")))
            return
        if msg.get("text") == "bye":
            await websocket.close(4000)
            return
        if msg.get("text") is not None:
            await websocket.send_text("echo: " + msg["text"])
        else:
            await websocket.send_bytes(msg["bytes"][::-1])


async def ws_flood(websocket):
    """Sends 64 KiB binary messages until the client goes, counting what it
    sent in MARKS/ws-produced (a client that does not read must stop it);
    the send after the client went raises."""
    await websocket.accept()
    chunk = b"f" * 65536
    produced = 0
    try:
        while produced < (256 << 20):
            await websocket.send_bytes(chunk)
            produced += len(chunk)
            mark("ws-produced", str(produced))
    except OSError:
        mark("ws-flood-ended", "OSError")     # the client went (ASGI: an OSError)
        raise


async def ws_deaf(websocket):
    """Reads nothing for 1.5 s (a client's messages must then wait in the
    buffers, not pile up here), then counts the bytes of the messages until
    the client closes: MARKS/ws-deaf-got."""
    import asyncio
    await websocket.accept()
    await asyncio.sleep(1.5)
    got = 0
    while True:
        msg = await websocket.receive()
        if msg["type"] == "websocket.disconnect":
            mark("ws-deaf-got", str(got))
            return
        got += len(msg.get("bytes") or b"")


async def lifespan(app):
    mark("startup")
    yield {"started": True}
    mark("shutdown")


app = Starlette(routes=[
    Route("/a/echo", echo, methods=["GET", "POST", "PUT", "HEAD"]),
    Route("/a/upload", upload, methods=["POST"]),
    Route("/a/task", task),
    Route("/a/stream", stream),
    Route("/a/lateread", lateread, methods=["POST"]),
    Route("/a/endless", endless),
    Route("/a/status/{code}", status),
    Route("/a/error", error),
    Route("/a/streamfail", streamfail),
    Route("/a/disconnect", WaitDisconnect()),
    WebSocketRoute("/a/ws", ws_echo),
    WebSocketRoute("/a/ws-refuse", ws_echo),
    WebSocketRoute("/a/ws-flood", ws_flood),
    WebSocketRoute("/a/ws-deaf", ws_deaf),
], lifespan=lifespan)
