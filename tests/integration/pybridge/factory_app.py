"""A plain ASGI application for test_python_bridge.py whose lifespan sets
the loop's task factory: its requests report the name of the task they run
in and how many tasks the factory made (the runner names its own tasks
unless the application has a factory)."""
import asyncio
import json

made = [0]


def factory(loop, coro, **kw):
    made[0] += 1
    task = asyncio.Task(coro, loop=loop, **kw)
    task.set_name("from-factory-%d" % made[0])
    return task


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                asyncio.get_running_loop().set_task_factory(factory)
                await send({"type": "lifespan.startup.complete"})
            elif msg["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = json.dumps({"task": asyncio.current_task().get_name(),
                       "made": made[0]}).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
