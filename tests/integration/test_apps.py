"""Managed and external applications (docs/apps.md): node_app and
python_app blocks run real Node.js, uvicorn and gunicorn processes on unix
sockets in a run directory, node_pass/python_pass reach them (and apps run
by someone else on TCP or a unix socket). The applications are in apps/:
a plain `http` Node.js app, an Express app (express from npm, installed by
a fixture), a Starlette app (uvicorn) and a Flask app (gunicorn)."""
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import swsharness as h

APPS = Path(__file__).resolve().parent / "apps"
NODE = shutil.which("node")
PY = "/usr/bin/python3"

need_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def have_py(*mods):
    return subprocess.run([PY, "-c", "import " + ",".join(mods)],
                          capture_output=True).returncode == 0


need_uvicorn = pytest.mark.skipif(not have_py("uvicorn", "starlette"),
                                  reason="python3-uvicorn and python3-starlette needed")
need_gunicorn = pytest.mark.skipif(not have_py("gunicorn", "flask"),
                                   reason="gunicorn and python3-flask needed")


@pytest.fixture
def rundir():
    d = tempfile.mkdtemp(prefix="swsapp")          # short: sun_path is 108 bytes
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def express(tmp_path_factory):
    """node_modules with express, from npm (its cache makes it quick)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    d = tmp_path_factory.mktemp("express")
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline",
                        "express"], cwd=d, capture_output=True, timeout=240)
    if r.returncode != 0 or not (d / "node_modules" / "express").is_dir():
        pytest.skip("npm install express failed: %s" % r.stderr.decode()[-500:])
    return d / "node_modules"


@pytest.fixture(scope="module")
def socketio(tmp_path_factory):
    """node_modules with socket.io and socket.io-client, from npm."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    d = tmp_path_factory.mktemp("socketio")
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline",
                        "socket.io", "socket.io-client"], cwd=d, capture_output=True, timeout=240)
    if r.returncode != 0 or not (d / "node_modules" / "socket.io-client").is_dir():
        pytest.skip("npm install socket.io failed: %s" % r.stderr.decode()[-500:])
    return d / "node_modules"


def node_app(name, script, rundir, extra=""):
    return ("node_app %s { root %s; script %s; run_dir %s; %s }\n"
            % (name, APPS, script, rundir, extra))


def python_app(name, rundir, extra, root=APPS):
    return "python_app %s { root %s; run_dir %s; %s }\n" % (name, root, rundir, extra)


def start(sws, http, server, **kw):
    if os.geteuid() == 0:
        kw.setdefault("main", "user root;")
    return sws(http=http, server=server, **kw)


def get(s, path="/", timeout=5, **kw):
    return h.curl(s.url(path), timeout=timeout, **kw)


def wait_serving(s, path="/", timeout=15):
    def ok():
        try:
            r = get(s, path, timeout=3)
        except Exception:
            return None
        return r if r.status == 200 else None
    r = h.wait_for(ok, timeout, 0.1)
    assert r, "the application never served\n" + s.error_log()[-4000:]
    return r


def app_pids(s, name):
    """pids of the application's processes started so far, in order."""
    return [int(p) for p in re.findall(r'started helper "%s-[0-9a-f]{8}\.\d+(?:\.1)?" process '
                                       r'(\d+)' % name, s.error_log())]


def ready_count(s, name):
    return len(re.findall(r'helper "%s-[0-9a-f]{8}\.\d+(?:\.1)?" process \d+ is ready' % name,
                          s.error_log()))


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return h._state(pid) != "Z"


@contextlib.contextmanager
def loading(s, clients, path="/", timeout=5):
    """clients threads sending GETs one after another while the block runs;
    out gets each (status or exception, seconds), complete at the end."""
    out = []
    stop = threading.Event()

    def client():
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                r = get(s, path, timeout=timeout)
                out.append((r.status, time.monotonic() - t0))
            except Exception as e:          # a hang shows as a timeout here
                out.append((repr(e), time.monotonic() - t0))
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    try:
        yield out
    finally:
        stop.set()
        for t in threads:
            t.join(timeout + 5)
        assert not any(t.is_alive() for t in threads)


@contextlib.contextmanager
def websocket(s, path="/ws"):
    """A websocket through scalwsd: (socket, bytes after the 101's head)."""
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                  b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                  b"Sec-WebSocket-Version: 13\r\n\r\n" % path.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            d = c.recv(4096)
            assert d, head
            head += d
        assert head.startswith(b"HTTP/1.1 101"), head
        assert b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head
        yield c, head.split(b"\r\n\r\n", 1)[1]


def ws_send(c, text):
    """A masked text frame (short)."""
    mask = b"\x05\x06\x07\x08"
    c.sendall(bytes([0x81, 0x80 | len(text)]) + mask
              + bytes(b ^ mask[i % 4] for i, b in enumerate(text)))


# ---------------------------------------------------------------- node

@need_node
def test_node_app_serves_with_the_forwarded_fields(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir, "processes 2;"),
              "location / { node_pass web; }\n")
    r = wait_serving(s, "/x?y=1")
    assert r.body.decode().startswith("plain ") and r.body.decode().endswith(" GET /x?y=1")
    # two processes, on sockets of the run directory, both taking requests
    assert h.wait_for(lambda: ready_count(s, "web") == 2, 5)
    pids = {int(get(s, "/pid", fresh=True).body) for _ in range(8)}
    assert pids == set(app_pids(s, "web")), (pids, s.error_log()[-2000:])
    socks = sorted(os.listdir(rundir))
    assert len(socks) == 2 and all(re.fullmatch(r"web-[0-9a-f]{8}\.[01]\.sock", x)
                                   for x in socks), socks
    # what the application gets: the client's Host, X-Forwarded-For and
    # -Proto, the client's own end-to-end fields, nothing else of ours
    # (not the hop-by-hop ones: TE, Keep-Alive, Upgrade, Connection and
    # what it names; the client's X-Forwarded-Proto is replaced)
    r = get(s, "/headers", headers=["X-Custom: 1", "X-Forwarded-For: 10.0.0.1",
                                    "X-Forwarded-For: 10.0.0.2", "X-Forwarded-Proto: https",
                                    "TE: trailers", "Keep-Alive: 300", "Upgrade: h2c",
                                    "Connection: keep-alive, X-Hop", "X-Hop: 1"])
    hd = json.loads(r.body)
    assert hd["host"] == "127.0.0.1:%d" % s.port
    assert hd["x-forwarded-for"] == "10.0.0.1, 10.0.0.2, 127.0.0.1"
    assert hd["x-forwarded-proto"] == "http"
    assert hd["x-custom"] == "1"
    assert set(hd) == {"host", "x-forwarded-for", "x-forwarded-proto", "x-custom",
                       "user-agent", "accept"}, hd
    # the program's output, line by line, under the application's name
    assert re.search(r'helper "web-[0-9a-f]{8}\.0" \(pid \d+\) stdout: plain app starting on '
                     + re.escape(rundir), s.error_log())


@need_node
def test_keepalive_of_an_application(sws, rundir):
    """keepalive N in the block is its group's: 0 keeps no connection (a
    new one per request), the default keeps them (one for all)."""
    s = start(sws, node_app("k0", "plain.js", rundir, "keepalive 0;")
              + node_app("kd", "plain.js", rundir),
              "location /k0/ { node_pass k0; }\nlocation /kd/ { node_pass kd; }\n")
    for p in ("/k0/conns", "/kd/conns"):
        wait_serving(s, p)
    k0 = [int(get(s, "/k0/conns").body) for _ in range(4)]
    kd = [int(get(s, "/kd/conns").body) for _ in range(4)]
    assert [b - a for a, b in zip(k0, k0[1:])] == [1, 1, 1], k0
    assert len(set(kd)) == 1, kd


@need_node
def test_node_request_id_is_forwarded_when_on(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir) + "request_id on;\n",
              "location / { node_pass web; }\n")
    r = wait_serving(s, "/headers")
    hd = json.loads(r.body)
    assert re.fullmatch(r"[0-9a-f]{32}", hd["x-request-id"]), hd


@need_node
def test_node_bodies_streams_and_websocket(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir)
              + "client_max_body_size 64m;\n",
              "location / { node_pass web; }\n")
    wait_serving(s)
    body = os.urandom(6 << 20)
    r = get(s, "/echo", method="POST", body=body, timeout=20)
    assert r.status == 200
    assert r.body.decode() == "%d %s" % (len(body), hashlib.sha256(body).hexdigest())

    # a streamed response comes as it is written: the first chunk long
    # before the last (8 chunks, 50 ms apart)
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as c:
        c.sendall(b"GET /stream?n=8 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        t0 = time.monotonic()
        first = None
        data = b""
        while True:
            d = c.recv(65536)
            if not d:
                break
            data += d
            if first is None and b"chunk 0" in data:
                first = time.monotonic() - t0
        total = time.monotonic() - t0
    assert b"chunk 7" in data and first is not None
    assert first < 0.2 and total > 0.3, (first, total)

    # a websocket echo through the HTTP/1.1 upgrade
    with websocket(s) as (c, rest):
        assert rest == b""
        for text in (b"hello", b"again"):
            ws_send(c, text)
            frame = c.recv(4096)
            assert frame == bytes([0x81, len(text)]) + text, frame


@need_node
def test_node_100_concurrent_clients(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir, "processes 2;"),
              "location / { node_pass web; }\n")
    wait_serving(s)

    def one(i):
        return get(s, "/slow?ms=200&i=%d" % i, timeout=15).status
    t0 = time.monotonic()
    with ThreadPoolExecutor(100) as ex:
        statuses = list(ex.map(one, range(100)))
    assert statuses == [200] * 100
    assert time.monotonic() - t0 < 10


@need_node
def test_node_killed_under_load_is_restarted_and_nothing_hangs(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir),
              "location / { node_pass web; }\n")
    wait_serving(s)
    pid = app_pids(s, "web")[-1]
    with loading(s, 4) as out:
        time.sleep(0.3)
        os.kill(pid, signal.SIGKILL)
        # restarted: a new process that serves (node may take a while to
        # start on a busy machine: until it is ready, 503)
        assert h.wait_for(lambda: len(app_pids(s, "web")) >= 2 and ready_count(s, "web") >= 2,
                          10), s.error_log()[-2000:]
        time.sleep(0.5)
    statuses = [x for x, _ in out]
    assert all(x in (200, 502, 503) for x in statuses), set(map(str, statuses))
    assert max(t for _, t in out) < 3.0
    assert statuses[-1] == 200 and statuses.count(200) > 10
    r = get(s, "/pid")
    assert int(r.body) == app_pids(s, "web")[-1] != pid


@need_node
def test_crash_loop_backs_off_and_the_location_answers_at_once(sws, rundir):
    s = start(sws, node_app("web", "crash.js", rundir),
              "location / { node_pass web; }\n")
    assert h.wait_for(lambda: len(app_pids(s, "web")) >= 4, 8), s.error_log()[-2000:]
    for _ in range(5):
        t0 = time.monotonic()
        r = get(s, "/")
        assert r.status == 503 and time.monotonic() - t0 < 1.0
    log = s.error_log()
    assert 'no process of application "web" is ready for "GET / HTTP/1.1"' in log
    assert "stderr: crash app: giving up" in log
    delays = [int(x) for x in re.findall(r'helper "web-[0-9a-f]{8}\.0" died: restarting it '
                                         r'in (\d+) ms', log)]
    assert delays[:3] == [100, 200, 400], delays


@need_node
def test_app_that_never_opens_its_socket_is_restarted(sws, rundir):
    s = start(sws, node_app("web", "silent.js", rundir, "start_timeout 500ms;"),
              "location / { node_pass web; }\n")
    assert h.wait_for(lambda: len(app_pids(s, "web")) >= 2, 6), s.error_log()[-2000:]
    log = s.error_log()
    assert re.search(r'helper "web-[0-9a-f]{8}\.0" process \d+ did not become ready within '
                     r'500 ms', log)
    assert re.search(r'helper "web-[0-9a-f]{8}\.0" was not ready: restarting it in \d+ ms', log)
    t0 = time.monotonic()
    assert get(s, "/").status == 503
    assert time.monotonic() - t0 < 1.0


def reload_under_load(s, new_http, wait):
    """HUP with a new http block while clients load the app; their results."""
    with loading(s, 3) as out:
        time.sleep(0.3)
        s.conf_text = s.conf_text.replace(s.http_block, new_http)
        s.http_block = new_http
        s.write_conf()
        s.signal(signal.SIGHUP)
        wait()
        time.sleep(0.5)
    return out


@need_node
def test_reload_keeps_an_unchanged_app_and_rolls_a_changed_one(sws, rundir):
    http = node_app("web", "plain.js", rundir, "processes 2;")
    s = start(sws, http, "location / { node_pass web; }\n")
    s.http_block = http
    wait_serving(s)
    assert h.wait_for(lambda: ready_count(s, "web") == 2, 5)
    old = app_pids(s, "web")

    # unchanged: the same processes, nothing started
    out = reload_under_load(s, http + "# a comment\n", lambda: h.wait_for(
        lambda: s.error_log().count("is unchanged: kept") >= 2, 5))
    assert [x for x, _ in out].count(200) == len(out) > 10
    assert app_pids(s, "web") == old and all(alive(p) for p in old)

    # changed: each process replaced by a new one, the old ones stopped
    # once their new ones are ready; no request fails meanwhile
    changed = node_app("web", "plain.js", rundir, "processes 2; env APP_V 2;")
    out = reload_under_load(s, changed, lambda: h.wait_for(
        lambda: len(app_pids(s, "web")) == 4 and not any(alive(p) for p in old), 10))
    statuses = [x for x, _ in out]
    assert statuses.count(200) == len(statuses) > 10, set(map(str, statuses))
    new = app_pids(s, "web")[2:]
    assert not any(alive(p) for p in old) and all(alive(p) for p in new)
    assert {int(get(s, "/pid", fresh=True).body) for _ in range(6)} == set(new)
    assert s.error_log().count("is replaced by helper") == 2
    # the old sockets went with their processes
    assert h.wait_for(lambda: len(os.listdir(rundir)) == 2, 3), os.listdir(rundir)


@need_node
def test_max_requests_recycles_without_a_failed_request(sws, rundir):
    """Past max_requests a process's twin starts; once it is ready it takes
    the requests and the old one leaves, then stops: none fails."""
    s = start(sws, node_app("web", "plain.js", rundir, "max_requests 40;"),
              "location / { node_pass web; }\n")
    wait_serving(s)
    first = app_pids(s, "web")[0]
    with loading(s, 3) as out:
        ok = h.wait_for(lambda: len(app_pids(s, "web")) >= 3, 8)
    assert ok, s.error_log()[-3000:]
    statuses = [x for x, _ in out]
    assert statuses.count(200) == len(statuses) > 40, set(map(str, statuses))
    log = s.error_log()
    assert re.search(r'application "web": process %d served \d+ requests \(max_requests 40\): '
                     r'starting its replacement' % first, log), log[-3000:]
    # the twins take turns, one process at a time once the old one went
    assert re.search(r'started helper "web-[0-9a-f]{8}\.0\.1" process', log)
    assert h.wait_for(lambda: sum(alive(p) for p in app_pids(s, "web")) == 1, 5)
    assert int(get(s, "/pid").body) == [p for p in app_pids(s, "web") if alive(p)][0]


@need_node
def test_rolling_restart_finishes_the_requests_in_flight(sws, rundir):
    """A reload that changes the block while a GET and a POST are in flight
    on the old process: it leaves the group at once, but gets its SIGTERM
    only once they are answered (by it: not retried elsewhere)."""
    http = node_app("web", "plain.js", rundir)
    s = start(sws, http, "location / { node_pass web; }\n")
    wait_serving(s)
    old = app_pids(s, "web")[0]
    ex = ThreadPoolExecutor(2)
    g = ex.submit(get, s, "/slow?ms=1500", timeout=10)
    p = ex.submit(get, s, "/slow?ms=1500", method="POST", body=b"x", timeout=10)
    time.sleep(0.3)
    s.conf_text = s.conf_text.replace(http, node_app("web", "plain.js", rundir, "env APP_V 2;"))
    s.write_conf()
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: len(app_pids(s, "web")) == 2 and ready_count(s, "web") == 2, 10)
    new = app_pids(s, "web")[1]
    assert int(get(s, "/pid").body) == new and alive(old)      # new requests: the new one
    for f in (g, p):
        r = f.result()
        assert (r.status, r.body) == (200, b"slow %d" % old), (r.status, r.body)
    assert h.wait_for(lambda: not alive(old), 5)
    log = s.error_log()
    assert re.search(r'process %d is replaced by helper "web-[0-9a-f]{8}\.0": stopping it once '
                     r'its requests in flight are done' % old, log), log[-3000:]
    assert re.search(r'process %d has finished its requests: stopping it' % old, log)


@need_node
def test_rolling_restart_waits_no_longer_than_stop_timeout(sws, rundir):
    """A request in flight longer than stop_timeout does not hold the old
    process: it is stopped once that time is over (its request fails)."""
    http = node_app("web", "plain.js", rundir, "stop_timeout 500ms;")
    s = start(sws, http, "location / { node_pass web; }\n")
    wait_serving(s)
    old = app_pids(s, "web")[0]
    p = ThreadPoolExecutor(1).submit(get, s, "/slow?ms=4000", method="POST", body=b"x",
                                     timeout=10)
    time.sleep(0.3)
    s.conf_text = s.conf_text.replace(http, node_app("web", "plain.js", rundir,
                                                     "stop_timeout 500ms; env APP_V 2;"))
    s.write_conf()
    s.signal(signal.SIGHUP)
    t0 = time.monotonic()
    assert h.wait_for(lambda: not alive(old), 5), s.error_log()[-3000:]
    assert time.monotonic() - t0 < 3.0
    assert p.result().status == 502
    assert re.search(r'process %d still has requests after its stop timeout: stopping it' % old,
                     s.error_log())
    assert int(get(s, "/pid").body) == app_pids(s, "web")[1]


@need_node
def test_recycling_finishes_the_requests_in_flight(sws, rundir):
    """max_requests reached while a slow POST is on the process: its twin
    takes the new requests, it answers the POST, then stops."""
    s = start(sws, node_app("web", "plain.js", rundir, "max_requests 3;"),
              "location / { node_pass web; }\n")
    wait_serving(s)
    first = app_pids(s, "web")[0]
    for _ in range(3):
        assert get(s, "/").status == 200
    r = get(s, "/slow?ms=2500", method="POST", body=b"x", timeout=10)
    assert (r.status, r.body) == (200, b"slow %d" % first), (r.status, r.body)
    assert h.wait_for(lambda: not alive(first), 5), s.error_log()[-3000:]
    twin = app_pids(s, "web")[1]
    assert int(get(s, "/pid").body) == twin


@need_node
def test_max_memory_recycles(sws, rundir):
    s = start(sws, node_app("web", "plain.js", rundir, "max_memory 8m;"),
              "location / { node_pass web; }\n")
    wait_serving(s)
    first = app_pids(s, "web")[0]
    # under load: the replacement takes the requests before the old one
    # stops, none fails
    with loading(s, 3) as out:
        ok = h.wait_for(lambda: not alive(first) and len(app_pids(s, "web")) >= 2, 6)
    assert ok, s.error_log()[-3000:]
    statuses = [x for x, _ in out]
    assert statuses.count(200) == len(statuses) > 10, set(map(str, statuses))
    assert re.search(r'application "web": process %d has \d+ bytes resident \(max_memory '
                     r'8388608\): starting its replacement' % first, s.error_log())
    assert get(s, "/").status == 200


@need_node
def test_reloads_that_change_the_number_of_processes(sws, rundir):
    """Fewer processes: those of the slots that went stop, and leave the
    group when a new process is ready; reloads after reloads always find
    room in the group for the new processes."""
    http = node_app("web", "plain.js", rundir, "processes 3;")
    s = start(sws, http, "location / { node_pass web; }\n")
    s.http_block = http
    wait_serving(s)
    assert h.wait_for(lambda: ready_count(s, "web") == 3, 5)
    for i, n in enumerate((1, 2, 2, 3)):
        before = set(app_pids(s, "web"))
        changed = node_app("web", "plain.js", rundir, "processes %d; env APP_V %d;" % (n, i))
        out = reload_under_load(s, changed, lambda: h.wait_for(
            lambda: sum(alive(p) for p in app_pids(s, "web")) == n
            and not any(alive(p) for p in before), 10))
        statuses = [x for x, _ in out]
        assert statuses.count(200) == len(statuses) > 10, (n, set(map(str, statuses)))
        now = [p for p in app_pids(s, "web") if alive(p)]
        assert len(now) == n and not set(now) & before
        assert h.wait_for(lambda: {int(get(s, "/pid", fresh=True).body)
                                   for _ in range(3 * n)} == set(now), 3), now
    assert "could not join" not in s.error_log()
    assert h.wait_for(lambda: len(os.listdir(rundir)) == 3, 3), os.listdir(rundir)


@need_node
def test_processes_follow_the_load(sws, rundir):
    """processes 1..3: more requests in flight than processes starts one
    more, each second; two processes' worth to spare for idle_timeout stops
    the last one."""
    s = start(sws, node_app("web", "plain.js", rundir, "processes 1..3; idle_timeout 1s;"),
              "location / { node_pass web; }\n")
    wait_serving(s)
    assert app_pids(s, "web") and len(os.listdir(rundir)) == 1      # MIN started
    with loading(s, 8, "/slow?ms=300") as out:
        grew = h.wait_for(lambda: ready_count(s, "web") >= 3, 6)
    assert grew, s.error_log()[-3000:]
    statuses = [x for x, _ in out]
    assert statuses.count(200) == len(statuses) > 8, set(map(str, statuses))
    log = s.error_log()
    assert re.search(r'application "web": \d+ requests in flight for 1 processes: starting '
                     r'process 1', log), log[-3000:]
    assert re.search(r'for 2 processes: starting process 2', log)
    assert "starting process 3" not in log                            # MAX
    # idle: back to MIN, one process at a time
    assert h.wait_for(lambda: sum(alive(p) for p in app_pids(s, "web")) == 1, 8), \
        s.error_log()[-3000:]
    log = s.error_log()
    assert log.index("for 3 processes: stopping process 2") \
        < log.index("for 2 processes: stopping process 1")
    assert get(s, "/pid").status == 200


@need_node
def test_reload_without_the_app_stops_it(sws, rundir):
    http = node_app("web", "plain.js", rundir)
    s = start(sws, http, "location / { node_pass web; }\n"
                         "location /pp/ { proxy_pass http://web; }\n")
    wait_serving(s)
    # the group is an upstream like any: proxy_pass reaches it (with
    # proxy_pass's Host, the group's name)
    assert json.loads(get(s, "/pp/headers").body)["host"] == "web"
    pid = app_pids(s, "web")[-1]
    # a request in flight on the old worker: the application serves it
    # (it is stopped once the old workers have gone, not at the reload)
    slow = ThreadPoolExecutor(1).submit(get, s, "/slow?ms=1500")
    time.sleep(0.3)
    s.conf_text = s.conf_text.replace(http, "").replace("node_pass web;", "return 204;") \
        .replace("proxy_pass http://web;", "return 204;")
    s.write_conf()
    s.signal(signal.SIGHUP)
    r = slow.result(10)
    assert r.status == 200 and r.body.startswith(b"slow "), (r.status, s.error_log()[-2000:])
    assert h.wait_for(lambda: not alive(pid), 10), s.error_log()[-2000:]
    log = s.error_log()
    assert re.search(r'helper "web-[0-9a-f]{8}\.0" is no longer configured: stopping it once '
                     r'the older workers have gone', log)
    old_worker = re.search(r"started worker process (\d+)", log).group(1)
    assert log.index("worker process %s (worker 0) exited" % old_worker) \
        < log.rindex("is no longer configured: stopping it\n"), log[-2000:]
    assert get(s, "/").status == 204
    assert h.wait_for(lambda: os.listdir(rundir) == [], 3), os.listdir(rundir)


@need_node
def test_quit_stops_the_app_gracefully(sws, rundir):
    """QUIT: the request in flight is answered, then the application gets
    SIGTERM; one that ignores it gets SIGKILL after stop_timeout."""
    s = start(sws, node_app("web", "plain.js", rundir)
              + node_app("deaf", "plain.js", rundir, "env IGNORE_TERM 1; stop_timeout 300ms;"),
              "location / { node_pass web; }\nlocation /deaf/ { node_pass deaf; }\n")
    wait_serving(s)
    wait_serving(s, "/deaf/")
    pid, deaf = app_pids(s, "web")[-1], app_pids(s, "deaf")[-1]
    slow = ThreadPoolExecutor(1).submit(get, s, "/slow?ms=1000")
    time.sleep(0.3)
    s.signal(signal.SIGQUIT)
    r = slow.result(10)
    assert r.status == 200 and r.body == b"slow %d" % pid
    assert s.wait_exit(10) == 0
    assert not alive(pid) and not alive(deaf)
    log = s.error_log()
    assert re.search(r'helper "web-[0-9a-f]{8}\.0" process %d exited on signal 15' % pid, log)
    assert "stdout: plain app ignores SIGTERM" in log
    assert re.search(r'helper "deaf-[0-9a-f]{8}\.0" process %d did not stop within \d+ ms: '
                     r'killing it' % deaf, log), log[-2000:]
    assert re.search(r'helper "deaf-[0-9a-f]{8}\.0" process %d exited on signal 9' % deaf, log)


@need_node
def test_express_app(sws, rundir, express):
    s = start(sws, node_app("shop", "express.js", rundir, "env NODE_PATH %s;" % express),
              "location / { node_pass shop; }\n")
    r = wait_serving(s)
    assert re.fullmatch(r"express \d+ 127\.0\.0\.1", r.body.decode()), r.body
    hd = json.loads(get(s, "/proto").body)
    assert hd["protocol"] == "http" and hd["xff"] == "127.0.0.1"
    r = get(s, "/json", method="POST", body=b'{"a": [1, 2]}',
            headers=["Content-Type: application/json"])
    assert json.loads(r.body) == {"got": {"a": [1, 2]}}
    assert "stdout: express listening" in s.error_log()


@need_node
def test_socketio_polling_then_websocket(sws, rundir, socketio):
    # Socket.IO through node_pass: a client kept on long polling (its
    # messages in GET and POST requests) and one as browsers connect
    # (polling, then the upgrade to a WebSocket on the same session); a
    # broadcast of the one reaches the other. Two processes: ip_hash keeps
    # a client's polling requests on the process that holds its session
    # (round robin gives "xhr poll error").
    s = start(sws, node_app("chat", "socketio.js", rundir,
                            "env NODE_PATH %s; processes 2; ip_hash;" % socketio),
              "location / { node_pass chat; }\n")
    wait_serving(s)
    r = subprocess.run(["node", os.path.join(APPS, "socketio_client.js"),
                        "http://127.0.0.1:%d" % s.port],
                       env=dict(os.environ, NODE_PATH=str(socketio)),
                       capture_output=True, timeout=20)
    out = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert out == {"polled": {"msg": "first", "transport": "polling"},
                   "upgraded": {"msg": "second", "transport": "websocket"},
                   "heard": "to all"}, (out, r.stderr.decode()[-1000:])
    assert "stdout: socket.io listening" in s.error_log()


# ---------------------------------------------------------------- python

@need_uvicorn
def test_uvicorn_starlette(sws, rundir):
    s = start(sws, python_app("api", rundir, "asgi star:app; server uvicorn;")
              + "client_max_body_size 16m;\n",
              "location / { python_pass api; }\n")
    r = wait_serving(s, "/a")
    assert re.fullmatch(r"starlette \d+ GET /a", r.body.decode()), r.body
    env = json.loads(get(s, "/env").body)
    assert env["MALLOC_MMAP_THRESHOLD_"] == "524288"
    assert env["MALLOC_TRIM_THRESHOLD_"] == "1048576"
    assert env["PYTHONUNBUFFERED"] == "1"
    hd = json.loads(get(s, "/headers").body)
    assert hd["host"] == "127.0.0.1:%d" % s.port and hd["x-forwarded-proto"] == "http"
    body = os.urandom(3 << 20)
    r = get(s, "/echo", method="POST", body=body, timeout=20)
    assert r.body.decode() == "%d %s" % (len(body), hashlib.sha256(body).hexdigest())
    r = get(s, "/stream?n=4")
    assert r.body.count(b"chunk") == 4

    with websocket(s) as (c, rest):
        ws_send(c, b"hi")
        while len(rest) < 9:
            rest += c.recv(4096)
        assert rest[:9] == bytes([0x81, 7]) + b"echo hi", rest


@need_gunicorn
def test_gunicorn_flask_and_own_malloc_settings(sws, rundir):
    s = start(sws, python_app("shop", rundir, "wsgi flaskapp:app; server gunicorn; processes 2;"
                              "env MALLOC_ARENA_MAX 2; env APP_X y;")
              + "client_max_body_size 16m;\n",
              "location / { python_pass shop; }\n")
    r = wait_serving(s, "/b")
    assert re.fullmatch(r"flask \d+ /b", r.body.decode()), r.body
    # the block sets a MALLOC_* itself: none of ours
    assert json.loads(get(s, "/env").body) == {"MALLOC_ARENA_MAX": "2", "APP_X": "y"}
    body = os.urandom(2 << 20)
    r = get(s, "/echo", method="POST", body=body, timeout=20)
    assert r.body.decode() == "%d %s" % (len(body), hashlib.sha256(body).hexdigest())
    assert get(s, "/stream?n=3").body.count(b"chunk") == 3


def bridge_built():
    return (Path(h.SCALWSD).parent / "python" / "scalws_bridge").is_dir()


@pytest.mark.skipif(not have_py("starlette", "flask"),
                    reason="python3-starlette and python3-flask needed")
def test_native_bridge_apps_asgi_and_wsgi(sws, rundir):
    """server native: the bridge's runner as the managed processes (found
    beside the modules' directory), reached with python_bridge_pass; one
    killed is started again and its requests meanwhile get 502/503."""
    assert bridge_built(), "objs/python/scalws_bridge is not built (python3-dev)"
    s = start(sws, python_app("nat", rundir, "asgi star:app; server native; processes 2;")
              + python_app("natw", rundir, "wsgi flaskapp:app; server native;")
              + "client_max_body_size 16m;\n",
              "location / { python_bridge_pass nat; }\n"
              "location /w/ { python_bridge_pass natw; }\n")
    r = wait_serving(s, "/a")
    assert re.fullmatch(r"starlette \d+ GET /a", r.body.decode()), r.body
    env = json.loads(get(s, "/env").body)
    assert env["MALLOC_MMAP_THRESHOLD_"] == "524288" and env["PYTHONUNBUFFERED"] == "1"
    assert env["PYTHONPATH"].endswith("/python"), env
    body = os.urandom(3 << 20)
    r = get(s, "/echo", method="POST", body=body, timeout=20)
    assert r.body.decode() == "%d %s" % (len(body), hashlib.sha256(body).hexdigest())
    r = wait_serving(s, "/w/b")
    assert re.fullmatch(r"flask \d+ /w/b", r.body.decode()), r.body

    # both processes of nat killed: restarted; nothing hangs meanwhile
    assert h.wait_for(lambda: ready_count(s, "nat") >= 2, 15), s.error_log()[-3000:]
    pids = app_pids(s, "nat")
    for pid in pids[:2]:
        os.kill(pid, signal.SIGKILL)
    t = time.monotonic()
    st = get(s, "/a", timeout=5).status
    assert st in (200, 502, 503) and time.monotonic() - t < 4, st
    wait_serving(s, "/a")
    assert h.wait_for(lambda: len(app_pids(s, "nat")) >= 3, 10), s.error_log()[-3000:]


# Each framework under each server that runs it: (name, block, the pass
# directive, what its page starts with, has a websocket route)
FRAMEWORKS = [
    ("fauv", "asgi fastapp:app; server uvicorn;", "python_pass", "fastapi", True),
    ("fagu", "asgi fastapp:app; server gunicorn;", "python_pass", "fastapi", True),
    ("fana", "asgi fastapp:app; server native;", "python_bridge_pass", "fastapi", True),
    ("stgu", "asgi star:app; server gunicorn;", "python_pass", "starlette", True),
    ("stna", "asgi star:app; server native;", "python_bridge_pass", "starlette", True),
    ("fluv", "wsgi flaskapp:app; server uvicorn;", "python_pass", "flask", False),
    ("djuv", "asgi django_app:asgi_app; server uvicorn;", "python_pass", "django", False),
    ("djgu", "wsgi django_app:application; server gunicorn;", "python_pass", "django", False),
    ("djna", "wsgi django_app:application; server native;", "python_bridge_pass", "django",
     False),
]
PYBRIDGE = APPS.parent / "pybridge"        # where the Django app is


@pytest.mark.skipif(not have_py("fastapi", "starlette", "flask", "django", "uvicorn",
                                "gunicorn"),
                    reason="python3-fastapi, -starlette, -flask, -django, -uvicorn, gunicorn")
def test_frameworks_under_uvicorn_gunicorn_and_native(sws, rundir):
    """FastAPI, Starlette, Flask and Django, each under uvicorn, gunicorn
    and the native bridge behind scalwsd: a page, a 1 MiB POST read as a
    stream (a form for Django), the client's Host, and the websocket routes
    of the ASGI ones."""
    assert bridge_built(), "objs/python/scalws_bridge is not built (python3-dev)"
    s = start(sws, "".join(python_app(n, rundir, b, PYBRIDGE if p == "django" else APPS)
                           for n, b, _, p, _ in FRAMEWORKS)
              + "client_max_body_size 16m;\n",
              "".join("location /%s/ { %s %s; }\n" % (n, d, n) for n, _, d, _, _ in FRAMEWORKS))
    for name, block, _, page, ws in FRAMEWORKS:
        if page == "django":
            e = json.loads(wait_serving(s, "/%s/echo?x=1" % name, timeout=40).body)
            assert (e["path"], e["get"], e["interface"], e["host"]) \
                == ("/%s/echo" % name, {"x": "1"}, block[:4], "127.0.0.1:%d" % s.port), e
            body = b"a=" + os.urandom(300000).hex().encode()
            e = json.loads(get(s, "/%s/echo" % name, method="POST", body=body, timeout=20,
                               headers=["Content-Type: application/x-www-form-urlencoded"]).body)
            assert (e["post"], e["length"], e["sha256"]) == (
                {"a": body[2:].decode()}, len(body), hashlib.sha256(body).hexdigest()), name
            continue
        r = wait_serving(s, "/%s/x" % name, timeout=40)
        assert r.body.decode().startswith(page + " ") and "/%s/x" % name in r.body.decode(), \
            (name, r.body)
        body = os.urandom(1 << 20)
        r = get(s, "/%s/echo" % name, method="POST", body=body, timeout=20)
        assert r.body.decode() == "%d %s" % (len(body), hashlib.sha256(body).hexdigest()), \
            (name, r.status, r.body[:200])
        if page != "flask":
            hd = json.loads(get(s, "/%s/headers" % name).body)
            assert hd["host"] == "127.0.0.1:%d" % s.port, (name, hd)
        if ws:
            with websocket(s, "/%s/ws" % name) as (c, rest):
                ws_send(c, b"hi")
                text = b"echo hi" if page == "starlette" else b"fastapi hi"
                want = bytes([0x81, len(text)]) + text
                while len(rest) < len(want):
                    d = c.recv(4096)
                    assert d, (name, rest)
                    rest += d
                assert rest == want, (name, rest)


@need_uvicorn
def test_uvicorn_reload_with_a_changed_block_loses_nothing(sws, rundir):
    http = python_app("api", rundir, "asgi star:app;")
    s = start(sws, http, "location / { python_pass api; }\n")
    s.http_block = http
    wait_serving(s)
    old = app_pids(s, "api")
    changed = python_app("api", rundir, "asgi star:app; env APP_V 2;")
    out = reload_under_load(s, changed, lambda: h.wait_for(
        lambda: len(app_pids(s, "api")) == 2 and not any(alive(p) for p in old), 10))
    statuses = [x for x, _ in out]
    assert statuses.count(200) == len(statuses) > 10, set(map(str, statuses))
    assert json.loads(get(s, "/env").body)["APP_V"] == "2"


# ---------------------------------------------------------------- external

@need_node
@need_uvicorn
def test_external_apps_on_tcp_and_unix_sockets(sws, rundir):
    port = h.free_port()
    path = os.path.join(rundir, "ext.sock")
    procs = [subprocess.Popen([NODE, str(APPS / "plain.js")], env=dict(os.environ, PORT=str(port)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
             subprocess.Popen([PY, "-m", "uvicorn", "--uds", path, "--no-access-log", "star:app"],
                              cwd=str(APPS), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        assert h.wait_for(lambda: h.port_open(port) and h.unix_open(path), 10)
        s = start(sws, "upstream py { server unix:%s; keepalive 4; }\n" % path,
                  "location /n/ { node_pass 127.0.0.1:%d; }\n"
                  "location /p/ { python_pass unix:%s; }\n"
                  "location /g/ { python_pass py; }\n" % (port, path))
        r = get(s, "/n/x")
        assert r.status == 200 and r.body.decode().endswith("GET /n/x")
        assert json.loads(get(s, "/n/headers").body)["host"] == "127.0.0.1:%d" % s.port
        r = get(s, "/p/y")
        assert r.status == 200 and r.body.decode().endswith("GET /p/y")
        assert get(s, "/g/z").body.decode().endswith("GET /g/z")
        # kept alive: one connection to the app for several requests
        pids = {get(s, "/p/pid").body for _ in range(3)}
        assert len(pids) == 1
    finally:
        for p in procs:
            p.terminate()
            p.wait(5)


@need_node
def test_external_app_with_health_checks_retries_and_a_queue(sws, rundir):
    """An external app in an upstream group beside a server that is down:
    its requests go to the live one (retried at once, none fails) and the
    health checks mark the other unhealthy; with max_conns=1 and a queue,
    concurrent requests wait their turn and all get their answer."""
    port, dead = h.free_port(), h.free_port()
    proc = subprocess.Popen([NODE, str(APPS / "plain.js")], env=dict(os.environ, PORT=str(port)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert h.wait_for(lambda: h.port_open(port), 10)
        s = start(sws, "upstream ext { server 127.0.0.1:%d; server 127.0.0.1:%d; keepalive 4;"
                       " health_check interval=200ms; }\n"
                       "upstream q { server 127.0.0.1:%d max_conns=1; queue 20 timeout=10s; }\n"
                       % (dead, port, port),
                  "location /e/ { node_pass ext; }\nlocation /q/ { python_pass q; }\n")
        assert [get(s, "/e/x").status for _ in range(6)] == [200] * 6
        assert h.wait_for(lambda: re.search(
            r'upstream server 127\.0\.0\.1:%d of "ext" failed its health check \(.*\): '
            r'unhealthy' % dead, s.error_log()), 5), s.error_log()[-2000:]
        assert "passed its health checks" not in s.error_log()

        t0 = time.monotonic()
        with ThreadPoolExecutor(8) as ex:
            rs = list(ex.map(lambda i: get(s, "/q/slow?ms=200&i=%d" % i, timeout=15), range(8)))
        assert [r.status for r in rs] == [200] * 8
        assert time.monotonic() - t0 >= 8 * 0.2 * 0.9        # one at a time
    finally:
        proc.terminate()
        proc.wait(5)


# ---------------------------------------------------------------- errors

def test_configuration_errors(tmp_path, rundir):
    a = "root %s; run_dir %s;" % (APPS, rundir)
    h.assert_config_errors(tmp_path, [
        ("node_app web { %s }" % a, 'node_app "web" has no script'),
        ("python_app api { %s }" % a, 'python_app "api" needs asgi or wsgi'),
        ("node_app web { %s script x.js; processes 4..1; }" % a, "N or MIN..MAX"),
        ("node_app web { %s script x.js; processes 0; }" % a, "from 1 to 64"),
        ("node_app web { %s script x.js; processes 1..65; }" % a, "from 1 to 64"),
        ("node_app web { %s script x.js; max_requests 0; }" % a, "takes a number above 0"),
        ("node_app web { %s script x.js; max_memory lots; }" % a, "takes a size above 0"),
        ("node_app web { %s script x.js; keepalive many; }" % a,
         "takes a number of connections"),
        ("node_app web { %s script x.js; keepalive 1; keepalive 2; }" % a, "is duplicate"),
        ("node_app web { %s script x.js; ip_hash; least_conn; }" % a,
         "load balancing method redefined"),
        ("node_app web { %s script x.js; ip_hash on; }" % a,
         "has an invalid number of arguments"),
        ("node_app web { %s script x.js; colour blue; }" % a,
         'unknown directive "colour" in node_app'),
        ("python_app api { %s asgi star:app; server hypercorn; }" % a,
         "takes uvicorn, gunicorn or native"),
        ("python_app api { %s asgi star; }" % a, "takes MODULE:CALLABLE"),
        ("node_app a.b { %s script x.js; }" % a, 'invalid application name "a.b"'),
        ("upstream web { server 127.0.0.1:1; }\nnode_app web { %s script x.js; }" % a,
         'an upstream "web" is already defined'),
        ("node_app web { %s script x.js; }\nnode_app web { %s script y.js; }" % (a, a),
         'an application "web" is already defined'),
        ("node_app web { root %s; script x.js; run_dir /tmp/%s; }" % (APPS, "d" * 100),
         "too long for a unix socket"),
    ])


def test_pass_takes_no_uri(tmp_path):
    rc, out, _ = h.start_expect_failure(tmp_path, server="location / { node_pass web/x; }\n")
    assert rc not in (None, 0) and "no URI, no variables" in out, out


def test_a_pass_in_the_wrong_protocol_is_refused(tmp_path, rundir):
    """python_pass (HTTP) to a native application, python_bridge_pass to
    one under uvicorn or gunicorn (or to a node_app), proxy_pass to a
    native one: refused once the http block is read (the application may
    come after the location), naming the pass's file and line and the
    directive to use."""
    a = "root %s; run_dir %s;" % (APPS, rundir)
    native = "python_app nat { %s asgi star:app; server native; }\n" % a
    uvicorn = "python_app uvi { %s asgi star:app; server uvicorn; }\n" % a
    gunicorn = "python_app gun { %s wsgi flaskapp:app; }\n" % a
    node = "node_app web { %s script plain.js; }\n" % a
    other = "server { listen 127.0.0.1:%d; location / { %%s } }\n" % h.free_port()
    cases = [
        (native, "python_pass nat;", "python_pass", "nat", "python-bridge", "http",
         "python_bridge_pass"),
        # the application after the location that names it
        (other % "python_pass nat;" + native, None, "python_pass", "nat", "python-bridge",
         "http", "python_bridge_pass"),
        (native, "proxy_pass http://nat;", "proxy_pass", "nat", "python-bridge", "http",
         "python_bridge_pass"),
        (uvicorn, "python_bridge_pass uvi;", "python_bridge_pass", "uvi", "http",
         "python-bridge", "python_pass"),
        (gunicorn, "python_bridge_pass gun;", "python_bridge_pass", "gun", "http",
         "python-bridge", "python_pass"),
        (node, "python_bridge_pass web;", "python_bridge_pass", "web", "http",
         "python-bridge", "node_pass"),
    ]
    for i, (http, loc, directive, name, speaks, wants, use) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(
            d, http=http, server="location / { %s }\n" % loc if loc else "")
        assert rc not in (None, 0) and not listening, (http, loc, out)
        m = re.search(r'%s "%s" in (\S+):(\d+): application "%s" \((\S+):(\d+)\) speaks %s, '
                      r'not %s: use %s' % (directive, name, name, speaks, wants, use), out)
        assert m, (http, loc, out)
        lines = Path(m.group(1)).read_text().splitlines()
        assert directive + " " in lines[int(m.group(2)) - 1], (lines, m.group(0))
        assert "_app %s {" % name in Path(m.group(3)).read_text().splitlines()[
            int(m.group(4)) - 1], m.group(0)


def test_passes_in_the_right_protocol_start(tmp_path, rundir):
    """The same applications reached by the directives that speak their
    protocol, and a pass to a group that is no application's, start
    (checked with -t: no process is run)."""
    a = "root %s; run_dir %s;" % (APPS, rundir)
    conf = h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()],
                    http="python_app nat { %s asgi star:app; server native; }\n"
                         "python_app uvi { %s asgi star:app; }\n"
                         "upstream plain { server 127.0.0.1:1; }\n" % (a, a),
                    server="location /n/ { python_bridge_pass nat; }\n"
                           "location /u/ { python_pass uvi; }\n"
                           "location /p/ { proxy_pass http://plain; }\n"
                           "location /b/ { python_bridge_pass plain; }\n")
    path = tmp_path / "t.conf"
    path.write_text(conf)
    h.make_traversable(tmp_path)
    r = subprocess.run([h.SCALWSD, "-p", str(tmp_path) + "/", "-t", "-c", str(path)],
                       capture_output=True, timeout=20)
    assert r.returncode == 0, r.stderr.decode()
