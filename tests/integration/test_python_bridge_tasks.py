"""The native Python bridge's ASGI tasks: scalwsd's requests on one
connection to the runner are served one after another by a serving task
of the connection (each handed over in the read that brought it), and
to a FastAPI application (tests/integration/pybridge/fastapi_app.py) each
must look as if it had a task of its own: current_task() a pending task
that is not being cancelled, a fresh contextvars context, anyio's cancel
scopes and asyncio.timeout working and leaving nothing behind for the
next request, sync endpoints in anyio's threads, BaseHTTPMiddleware, a
background task that goes on after its response without holding the next
request back, and a dependency with yield closed after the response."""
import json
import time

import pytest

import pybridge_runner as pr
import swsharness as h

pytest.importorskip("fastapi", reason="python3-fastapi (auto/deps) needed")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    # one worker and one kept connection: the requests go one after another
    # on the same connection, to the same serving task
    def launch(runner):
        return dict(http="""
            upstream fapi {{ server unix:{s}; keepalive 1; }}
        """.format(s=runner.sock), server="""
            location /f/ { python_bridge_pass fapi; }
        """)
    with pr.one_runner(tmp_path_factory.mktemp("pybridge-tasks"), "swspt", "fastapi_app:app",
                       "asgi", launch) as env:
        yield env


def get(srv, path, stamp=True):
    r = h.curl(srv.url(path))
    # the request's own task: named as the runner names them, not being
    # cancelled, and the context as new (fastapi_app.app)
    assert r.header("x-host") == "scalws-request,0,unset,new", r.headers
    if stamp:
        assert r.header("x-stamp") == "yes", r.headers       # BaseHTTPMiddleware ran
    return r


def as_json(r):
    assert r.status == 200, (r.status, r.body[:500])
    return json.loads(r.body)


def fresh(e):
    """The endpoint's view (in BaseHTTPMiddleware's task): its task pending
    and not being cancelled; the context variable unset."""
    assert e["seen"] == "unset", e
    assert not e["done"] and e["cancelling"] == 0, e


def test_each_request_has_a_fresh_context(env):
    srv, _ = env
    for i in range(4):
        fresh(as_json(get(srv, "/f/state?tag=s%d" % i)))


def test_cancel_scopes_leave_nothing_behind(env):
    srv, _ = env
    for i in range(3):
        e = as_json(get(srv, "/f/cancel?tag=c%d" % i))
        # anyio 3 does not uncancel() the task it cancelled (as under uvicorn)
        assert e["seen"] == "unset" and not e["done"] and e["moved_on"] is True, e
        fresh(as_json(get(srv, "/f/state")))
        e = as_json(get(srv, "/f/timeout?tag=t%d" % i))
        fresh(e)
        assert e["timed_out"] is True, e
        fresh(as_json(get(srv, "/f/state")))
    for i in range(3):
        fresh(as_json(get(srv, "/f/hostcancel")))
        fresh(as_json(get(srv, "/f/state")))
    # fail_after's TimeoutError: Starlette's 500 (then the runner logs it)
    r = get(srv, "/f/fail", stamp=False)
    assert r.status == 500, (r.status, r.body)
    fresh(as_json(get(srv, "/f/state")))


def test_sync_endpoints_and_task_groups(env):
    srv, _ = env
    for _ in range(3):
        assert as_json(get(srv, "/f/sync")) == {"thread": True}
        assert as_json(get(srv, "/f/group")) == {"children": [0, 1, 2]}
        fresh(as_json(get(srv, "/f/state")))


def unmarked(runner, name):
    """MARKS/name, removed if a test before left it."""
    path = runner.marks / name
    if path.exists():
        path.unlink()
    return path


def test_background_task_does_not_hold_the_next_request(env):
    srv, runner = env
    done = unmarked(runner, "background-done")
    t0 = time.monotonic()
    r = get(srv, "/f/background")
    assert r.status == 200 and r.body == b"answered"
    # the same connection, while the background task still sleeps (1 s):
    # answered before it ends
    fresh(as_json(get(srv, "/f/state")))
    fresh(as_json(get(srv, "/f/state")))
    assert time.monotonic() - t0 < 0.9 or not done.exists()
    assert h.wait_for(done.exists, 5.0)
    fresh(as_json(get(srv, "/f/state")))


def test_dependency_with_yield_and_streaming(env):
    srv, runner = env
    closed = unmarked(runner, "resource-closed")
    assert as_json(get(srv, "/f/dep")) == {"resource": "r"}
    assert h.wait_for(closed.exists, 3.0)
    r = get(srv, "/f/stream")
    assert r.status == 200 and r.body == b"0,1,2,3,4,"
    fresh(as_json(get(srv, "/f/state")))


def test_applications_that_are_not_coroutine_functions(env):
    srv, runner = env
    for _ in range(2):
        fresh(as_json(get(srv, "/f/awaitable")))
        r = h.curl(srv.url("/f/raise-at-call"))
        assert r.status == 500 and r.body == b"Internal Server Error", (r.status, r.body)
        fresh(as_json(get(srv, "/f/state")))
    assert h.wait_for(lambda: "raised when called, on purpose" in runner.output())


def test_a_task_kept_by_a_request_serves_no_later_request(env):
    """(plain ASGI answers: the serving task goes on from one to the next)"""
    srv, _ = env
    for _ in range(3):
        for path in ("/f/plain", "/f/plain", "/f/keep", "/f/plain"):
            assert as_json(get(srv, path)) == {"seen": "unset"}
