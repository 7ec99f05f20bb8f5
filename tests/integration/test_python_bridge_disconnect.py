"""ASGI 2.4 under the native bridge (docs/python-bridge.md): an
http.response.* send() after the client went away raises an OSError
(scalws_bridge's ClientDisconnected), so that an application that streams
stops producing; Starlette's and FastAPI's StreamingResponse end their
generator; the runner logs nothing for it, its memory stays where it was,
and the next request is served. A real client reads part of an endless
response and closes its connection, with scalwsd buffering the response
and without."""
import os
import time

import pytest

import pybridge_runner as pr
import swsharness as h


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    def launch(runner):
        return dict(ports=2, server="""
            location / {{ python_bridge_pass unix:{s}; }}
        """.format(s=runner.sock), servers="""
            server {{
                listen 127.0.0.1:@PORT2@;
                python_bridge_buffering off;
                location / {{ python_bridge_pass unix:{s}; }}
            }}
        """.format(s=runner.sock))
    with pr.one_runner(tmp_path_factory.mktemp("pbdisc"), "swspd", "disconnect_app:app",
                       "asgi", launch) as env:
        yield env


def worker_rss(runner):
    pid = runner.proc.pid
    with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
        w = int(f.read().split()[0])
    with open("/proc/%d/status" % w) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) << 10
    return 0


def stream(srv, runner, name, port, size):
    """Read size bytes of NAME's endless stream and go: how it ended, and
    how long after the client went."""
    for m in (name + "-end", name + "-made", "raw-made"):
        try:
            os.unlink(runner.marks / m)
        except FileNotFoundError:
            pass
    with h.Conn(srv.ports[port], timeout=5) as c:
        c.send(h.request(path="/%s/stream" % name))
        while len(c.buf) < size:
            c._fill(5)
    gone = time.monotonic()
    end = pr.wait_mark(runner, name + "-end", timeout=5)
    return end, time.monotonic() - gone


@pytest.mark.parametrize("port", [0, 1], ids=["buffering", "nobuffering"])
@pytest.mark.parametrize("name", ["raw", "grp", "s", "f"])
def test_streaming_app_stops_when_the_client_goes(env, name, port):
    srv, runner = env
    since = len(runner.output())
    rss0 = worker_rss(runner)
    end, after = stream(srv, runner, name, port, 1 << 20)
    print("%s: %s, %.2f s after the client went" % (name, end, after))
    # told within a bounded time, and it stopped making anything
    if name == "raw":
        kind, spec, _ = end.split()
        assert (kind, spec) == ("ClientDisconnected", "2.4"), end
    elif name == "grp":
        assert end.startswith("raised ExceptionGroup"), end
    else:
        assert end.startswith(("raised ClientDisconnected", "raised ExceptionGroup",
                               "returned")), end
    counter = ("raw" if name == "grp" else name) + "-made"     # grp runs raw
    made = runner.mark(counter)
    time.sleep(0.5)
    assert runner.mark(counter) == made, "it went on"
    assert worker_rss(runner) < rss0 + (32 << 20), (rss0, worker_rss(runner))
    # nothing logged for it, and the worker serves on
    out = runner.output()[since:]
    assert "raised" not in out and "Traceback" not in out, out
    assert not stream(srv, runner, name, port, 65536)[0].startswith("never")
