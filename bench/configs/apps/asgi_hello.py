"""The python scenario's ASGI application: "Hello, world!" (13 bytes)."""

BODY = b"Hello, world!"
HEAD = [(b"content-type", b"text/plain"), (b"content-length", b"13")]


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    await send({"type": "http.response.start", "status": 200, "headers": HEAD})
    await send({"type": "http.response.body", "body": BODY})
