"""A FastAPI (ASGI) application for test_apps.py, routed by the last
segment of the path (so that it serves under any location's prefix): the
page names the framework, /echo reads the body as a stream, /headers gives
the request's fields; a websocket at any path echoes text."""
import os

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, PlainTextResponse

import star          # the Starlette app beside it: the same echo

app = FastAPI()


@app.post("/{prefix:path}/echo")
async def echo(request: Request):
    return await star.echo(request)        # a FastAPI request is Starlette's


@app.get("/{prefix:path}/headers")
async def headers(request: Request):
    return JSONResponse(dict(request.headers))


@app.get("/{rest:path}")
async def home(request: Request):
    return PlainTextResponse("fastapi %d %s %s" % (os.getpid(), request.method,
                                                   request.url.path))


@app.websocket("/{rest:path}")
async def ws(websocket: WebSocket):
    await websocket.accept()
    try:
        while True:
            await websocket.send_text("fastapi " + await websocket.receive_text())
    except WebSocketDisconnect:
        pass
