"""Plain ASGI applications for test_python_bridge.py's lifespan cases:
`failing` refuses its startup (lifespan.startup.failed), `unsupported`
raises on the lifespan scope as applications without one do (the runner
then serves without it)."""


async def answer(scope, receive, send, text):
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": text})


async def failing(scope, receive, send):
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database here"})
        return
    await answer(scope, receive, send, b"never")


async def unsupported(scope, receive, send):
    if scope["type"] != "http":
        raise RuntimeError("only http here")
    await answer(scope, receive, send, b"served without a lifespan, state %r"
                 % (scope.get("state"),))
