"""Helper processes, ABI 1.7: socket handoff as systemd's socket activation
does it, readiness, and the ready and exit callbacks, with a real program
(sockapp.py) declared through the test module helpermod.py. The module's
callbacks write what they hear to a file, and put the helper's address in a
run-time server list of an upstream group that a location proxies to."""
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import helpermod
import swsharness as h

APP = Path(__file__).resolve().parent / "sockapp.py"
PY = sys.executable


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    return helpermod.build(tmp_path_factory.mktemp("helpermod"))


@pytest.fixture
def sockdir():
    d = tempfile.mkdtemp(prefix="swshs")          # short: sun_path is 108 bytes
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def start(sws, load, http, server="", **kw):
    if os.geteuid() == 0:
        kw.setdefault("main", "user root;")
    kw.setdefault("ports", 2)
    return sws(load=load, http=http, server=server, **kw)


def app(name, *args):
    return "test_helper_program %s %s %s %s;\n" % (name, PY, APP, " ".join(args))


def events(s):
    try:
        return (s.tmp / "events").read_text().splitlines()
    except OSError:
        return []


def wait_event(s, pattern, count=1, timeout=8.0):
    rx = re.compile(pattern)

    def f():
        m = [e for e in events(s) if rx.fullmatch(e)]
        return m if len(m) >= count else None
    return h.wait_for(f, timeout) or []


def helper_pids(s, name):
    return [int(p) for p in re.findall(r'started helper "%s" process (\d+)' % name,
                                       s.error_log())]


def held(pid, sock):
    """Whether process pid has the socket sock open (gone processes and fds
    closed while listing count as not holding it)."""
    names = set()
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return False
    for fd in fds:
        try:
            names.add(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return sock in names


def get(port, path="/", timeout=5):
    """The body of a GET straight to the program."""
    r = h.exchange(port, h.request(path=path), timeout=timeout)
    assert r is not None and r.status == 200, r
    return r.body.decode()


def test_program_serves_on_the_handed_over_socket(sws, load):
    # ready only once it accepts: the program waits 0.6 s first
    s = start(sws, load, app("web", "serve", "0.6")
              + "test_helper_socket web 127.0.0.1:@PORT2@ webfd;\n"
              + "test_helper_events web @TMP@/events g 127.0.0.1:@PORT2@;\n"
              + "upstream g { server 127.0.0.1:1 down; }\n",
              server="location /app/ { proxy_pass http://g; }\n")
    assert wait_event(s, r"ready web \d+"), s.error_log()[-3000:]
    pid = helper_pids(s, "web")[-1]
    assert events(s)[:2] == ["ready web %d" % pid, "add OK"]
    text = s.error_log()
    started = text.index('started helper "web" process %d' % pid)
    serving = text.index("stdout: serving fd 3 as webfd, pid %d" % pid)
    ready = text.index('helper "web" process %d is ready' % pid)
    assert started < serving < ready
    # what the program got: fd 3 listening, LISTEN_PID its own pid (checked
    # by the program), the name; it answers directly and through the group
    # the ready callback filled
    assert get(s.ports[1], "/direct").endswith("app %d webfd /direct\n" % pid)
    r = h.curl(s.url("/app/x"))
    assert r.status == 200 and r.body.decode() == "app %d webfd /app/x\n" % pid, r
    assert "sockapp" not in text                 # no complaint from the program
    # fd 3 of the program is the master's socket; no worker holds it
    sock = os.readlink("/proc/%d/fd/3" % pid)
    assert sock.startswith("socket:")
    assert held(s.pid, sock)
    workers = [k for k in s.wait_children(2) if k != pid]
    assert workers
    # a worker closes the inherited socket right after its fork: under load
    # the test may look in between, so it waits for the close
    assert h.wait_for(lambda: not any(held(w, sock) for w in workers), 5), workers


def test_ready_under_load_when_the_backlog_never_empties(sws, load):
    """Clients that connect and say nothing keep the backlog from emptying
    (the program takes one at a time and waits 5 s on each): the helper is
    ready all the same once it accepts, seen by the backlog shrinking."""
    s = start(sws, load, app("web", "serve", "1.0")
              + "test_helper_socket web 127.0.0.1:@PORT2@;\n"
              + "test_helper_ready_timeout web 3s;\n"
              + "test_helper_events web @TMP@/events;\n")
    assert h.wait_for(lambda: helper_pids(s, "web"), 5)
    idle = []
    try:
        for _ in range(4):        # while the program sleeps before accepting
            idle.append(socket.create_connection(("127.0.0.1", s.ports[1]), timeout=5))
            time.sleep(0.1)
        t0 = time.monotonic()
        assert wait_event(s, r"ready web \d+", timeout=4), s.error_log()[-2000:]
        assert time.monotonic() - t0 < 2.0
        assert "did not become ready" not in s.error_log()
    finally:
        for c in idle:
            c.close()


def start_behind_group(sws, load, serve_args, backoff):
    """Helper "web" on @PORT2@, added to group g (for /app/) when ready and
    drained when it exits."""
    return start(sws, load, app("web", "serve", *serve_args)
                 + "test_helper_socket web 127.0.0.1:@PORT2@;\n"
                 + "test_helper_backoff web %s 10s 10s;\n" % backoff
                 + "test_helper_events web @TMP@/events g 127.0.0.1:@PORT2@;\n"
                 + "upstream g { server 127.0.0.1:1 down; }\n",
                 server="location /app/ { proxy_pass http://g; }\n")


def test_killed_helper_restarts_and_the_socket_keeps_queuing(sws, load):
    s = start_behind_group(sws, load, ["0.3"], "800ms")
    assert wait_event(s, r"ready web \d+")
    p0 = helper_pids(s, "web")[-1]
    os.kill(p0, signal.SIGKILL)
    # while it is down (0.8 s backoff, then 0.3 s before it accepts) a
    # client connects: the connection waits in the master's backlog
    assert wait_event(s, r"exit web %d .*" % p0)
    t0 = time.monotonic()
    result = {}

    def client():
        try:
            result["r"] = get(s.ports[1], "/queued", timeout=10)
        except OSError as e:
            result["e"] = e

    t = threading.Thread(target=client)
    t.start()
    t.join(12)
    took = time.monotonic() - t0
    assert "r" in result, result
    p1 = helper_pids(s, "web")[-1]
    assert p1 != p0
    assert result["r"].endswith("app %d web /queued\n" % p1), result
    assert took >= 0.6, took               # it waited for the new process
    ex = [e for e in events(s) if e.startswith("exit web %d " % p0)][0]
    assert "code=-1 signal=9 core=0 stopped=0 ready=1 restarting=1" in ex, ex
    assert "starts=1 exits=1 size=" in ex, ex
    assert wait_event(s, r"ready web %d" % p1)
    # the exit drained it from the list, the ready added it again
    assert events(s) == ["ready web %d" % p0, "add OK", ex, "drain OK",
                         "ready web %d" % p1, "add OK"], events(s)
    assert h.curl(s.url("/app/y")).body.decode() == "app %d web /app/y\n" % p1


def reload(s, text):
    s.conf_text = text
    s.write_conf(text)
    n = s.error_log().count("configuration reloaded")
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: s.error_log().count("configuration reloaded") > n, 10), \
        s.error_log()[-3000:]


def test_the_list_the_callbacks_fill_survives_reloads(sws, load):
    s = start_behind_group(sws, load, [], "200ms")
    assert wait_event(s, r"add OK")
    pid = helper_pids(s, "web")[-1]
    assert h.curl(s.url("/app/1")).body.decode() == "app %d web /app/1\n" % pid
    # the helper is kept, and so is the server its ready callback added:
    # no new ready, the new workers send to it all the same
    old = s.children()
    reload(s, s.conf_text + "\n# nothing\n")
    workers = s.wait_children(2, exclude=old)
    assert workers
    for i in range(5):
        r = h.curl(s.url("/app/2"), fresh=True)
        assert r.status == 200 and r.body.decode() == "app %d web /app/2\n" % pid, r
    # the group changes (one more configured server, a down one): the same
    reload(s, s.conf_text.replace("server 127.0.0.1:1 down;",
                                  "server 127.0.0.1:1 down; server 127.0.0.1:2 down;"))
    time.sleep(0.3)
    assert h.curl(s.url("/app/3"), fresh=True).body.decode() == "app %d web /app/3\n" % pid
    assert events(s) == ["ready web %d" % pid, "add OK"]
    # the handle the module resolved before the reloads still works
    os.kill(pid, signal.SIGKILL)
    assert wait_event(s, r"add OK", count=2)
    p1 = helper_pids(s, "web")[-1]
    assert events(s)[2:] == [events(s)[2], "drain OK", "ready web %d" % p1, "add OK"]
    assert h.curl(s.url("/app/4"), fresh=True).body.decode() == "app %d web /app/4\n" % p1
    # a configuration without the group: the handle says DECLINED
    reload(s, s.conf_text.replace("upstream g {", "upstream g2 {")
                          .replace("proxy_pass http://g;", "proxy_pass http://g2;"))
    os.kill(p1, signal.SIGKILL)
    assert wait_event(s, r"add DECLINED")
    assert events(s)[6:] == [events(s)[6], "drain DECLINED", events(s)[8], "add DECLINED"]
    assert h.curl(s.url("/app/5"), fresh=True).status == 502


def test_exit_reports_its_code(sws, load):
    s = start(sws, load, app("bye", "exit", "3")
              + "test_helper_restart bye never;\n"
              + "test_helper_events bye @TMP@/events;\n"
              + app("sig", "stall")
              + "test_helper_socket sig 127.0.0.1:@PORT2@;\n"
              + "test_helper_restart sig never;\n"
              + "test_helper_events sig @TMP@/events;\n")
    bye = wait_event(s, r"exit bye .*")
    assert bye, s.error_log()[-2000:]
    pid = helper_pids(s, "bye")[0]
    # no socket, no probe: ready once started
    assert events(s).index("ready bye %d" % pid) < events(s).index(bye[0])
    assert bye[0].startswith("exit bye %d code=3 signal=0 core=0 stopped=0 ready=1 "
                             "restarting=0 starts=1 exits=1" % pid), bye
    # a signal: the code is -1
    assert h.wait_for(lambda: helper_pids(s, "sig"), 5)
    sig = helper_pids(s, "sig")[0]
    time.sleep(0.2)
    os.kill(sig, signal.SIGTERM)
    ev = wait_event(s, r"exit sig .*")
    assert ev and ev[0].startswith("exit sig %d code=-1 signal=15 core=0 stopped=0 ready=0 "
                                   "restarting=0" % sig), ev
    assert "ready sig" not in "\n".join(events(s))


def test_a_helper_never_ready_is_restarted_as_failed(sws, load):
    s = start(sws, load, app("stuck", "stall")
              + "test_helper_socket stuck 127.0.0.1:@PORT2@;\n"
              + "test_helper_ready_timeout stuck 400ms;\n"
              + "test_helper_backoff stuck 300ms 10s 10s;\n"
              + "test_helper_stop stuck TERM 1s;\n"
              + "test_helper_events stuck @TMP@/events;\n")
    ex = wait_event(s, r"exit stuck .*", count=2, timeout=10)
    assert len(ex) == 2, (events(s), s.error_log()[-3000:])
    pids = helper_pids(s, "stuck")
    assert len(pids) >= 2
    for e, pid in zip(ex, pids):
        assert e.startswith("exit stuck %d code=-1 signal=15 core=0 stopped=1 ready=0 "
                            "restarting=1" % pid), e
    text = s.error_log()
    assert re.search(r'\[error\] \d+#0: helper "stuck" process %d did not become ready '
                     r'within 400 ms' % pids[0], text), text[-2000:]
    # restarted with the backoff: 300 ms, then 600 ms
    assert 'helper "stuck" was not ready: restarting it in 300 ms' in text
    assert h.wait_for(lambda: 'helper "stuck" was not ready: restarting it in 600 ms'
                      in s.error_log(), 5)
    assert "ready stuck" not in "\n".join(events(s))


@pytest.mark.skipif(not h.have_ipv6(), reason="no IPv6 on loopback")
def test_ipv6_socket(sws, load):
    port = h.free_port(socket.AF_INET6, "::1")
    s = start(sws, load, app("web6", "serve")
              + "test_helper_socket web6 [::1]:%d;\n" % port
              + "test_helper_events web6 @TMP@/events;\n")
    assert wait_event(s, r"ready web6 \d+"), s.error_log()[-2000:]
    pid = helper_pids(s, "web6")[-1]
    r = h.exchange(port, h.request(path="/six"), family=socket.AF_INET6, host="::1")
    assert r is not None and r.body.decode() == "app %d web6 /six\n" % pid, r


def test_ready_probe_of_a_program_that_listens_itself(sws, load):
    s = start(sws, load, app("own", "bind", "@PORT2@", "0.7")
              + "test_helper_probe own 127.0.0.1:@PORT2@;\n"
              + "test_helper_events own @TMP@/events;\n")
    t0 = time.monotonic()
    assert wait_event(s, r"ready own \d+"), s.error_log()[-2000:]
    assert time.monotonic() - t0 >= 0.5
    pid = helper_pids(s, "own")[-1]
    text = s.error_log()
    assert text.index("stdout: serving port %d" % s.ports[1]) \
        < text.index('helper "own" process %d is ready' % pid)
    assert get(s.ports[1], "/p").endswith("app %d bound /p\n" % pid)


def test_unix_socket_is_kept_across_reloads_and_removed_on_quit(sws, load, sockdir):
    path = os.path.join(sockdir, "app.sock")
    conf = (app("web", "serve")
            + "test_helper_socket web unix:%s;\n" % path
            + "test_helper_events web @TMP@/events;\n"
            + "upstream u { server unix:%s; }\n" % path)
    s = start(sws, load, conf, server="location /app/ { proxy_pass http://u; }\n")
    assert wait_event(s, r"ready web \d+")
    pid = helper_pids(s, "web")[-1]
    st = os.stat(path)
    assert oct(st.st_mode & 0o777) == "0o666"
    assert h.curl(s.url("/app/u")).body.decode() == "app %d web /app/u\n" % pid
    ino = st.st_ino
    # a reload that changes the program restarts it on the same socket
    s.write_conf(s.conf_text.replace("sockapp.py serve", "sockapp.py serve 0.1"))
    n = s.error_log().count("configuration reloaded")
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: s.error_log().count("configuration reloaded") > n, 10)
    assert wait_event(s, r"ready web \d+", count=2)
    p1 = helper_pids(s, "web")[-1]
    assert p1 != pid and os.stat(path).st_ino == ino
    ex = [e for e in events(s) if e.startswith("exit web %d " % pid)]
    assert ex and "stopped=1 ready=1 restarting=1" in ex[0], events(s)
    assert h.curl(s.url("/app/v")).body.decode() == "app %d web /app/v\n" % p1
    s.signal(signal.SIGQUIT)
    assert s.wait_exit(10) == 0
    assert not os.path.exists(path)


def test_a_stale_unix_socket_is_replaced_and_a_busy_one_is_not(sws, load, sockdir):
    path = os.path.join(sockdir, "stale.sock")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)
    dead.close()                             # a socket file nobody listens on
    busy_path = os.path.join(sockdir, "busy.sock")
    busy = socket.socket(socket.AF_UNIX)
    busy.bind(busy_path)
    busy.listen(1)
    try:
        s = start(sws, load, app("web", "serve")
                  + "test_helper_socket web unix:%s;\n" % path
                  + "test_helper_events web @TMP@/events;\n"
                  + app("other", "serve")
                  + "test_helper_socket other unix:%s;\n" % busy_path
                  + "test_helper_backoff other 5s 5s 5s;\n")
        assert wait_event(s, r"ready web \d+")
        assert h.wait_for(lambda: 'helper "other": cannot listen on unix:%s' % busy_path
                          in s.error_log(), 5)
        assert 'helper "other" could not be started: restarting it in 5000 ms' \
            in s.error_log()
        assert os.path.exists(busy_path)      # another's: left alone
    finally:
        busy.close()


def test_a_changed_helper_reports_its_old_exit_before_the_new_ready(sws, load):
    # no socket, no probe: the new process is ready as soon as it starts
    loop = "'while :; do sleep 0.1; done'"
    s = start(sws, load, "test_helper_program plain /bin/sh -c %s;\n" % loop
              + "test_helper_events plain @TMP@/events;\n")
    assert wait_event(s, r"ready plain \d+")
    p0 = helper_pids(s, "plain")[-1]
    reload(s, s.conf_text.replace(loop, "'while :; do sleep 0.2; done'"))
    assert wait_event(s, r"ready plain \d+", count=2)
    p1 = helper_pids(s, "plain")[-1]
    ev = events(s)
    assert ev[0] == "ready plain %d" % p0 and ev[2] == "ready plain %d" % p1, ev
    assert ev[1].startswith("exit plain %d code=-1 signal=15 core=0 stopped=1 ready=1 "
                            "restarting=1 starts=1 exits=1" % p0), ev


def test_exec_failure_of_a_socket_helper_is_logged(sws, load, tmp_path):
    # the error log may be the master's fd 3: it is moved aside for the socket
    script = tmp_path / "badinterp.sh"
    script.write_text("#!/no/such/interpreter\necho hi\n")
    os.chmod(script, 0o755)
    s = start(sws, load, "test_helper_program bad %s;\n" % script
              + "test_helper_socket bad 127.0.0.1:@PORT2@;\n"
              + "test_helper_backoff bad 200ms 1s 10s;\n")
    assert h.wait_for(lambda: 'helper "bad": execv "%s" failed: No such file or directory'
                      % script in s.error_log(), 5), s.error_log()[-2000:]
    assert h.wait_for(lambda: len(re.findall(r'helper "bad" process \d+ exited with code 127',
                                             s.error_log())) >= 2, 5)


def test_bad_socket_definitions_are_configuration_errors(tmp_path, load):
    h.assert_config_errors(tmp_path, [
        ("test_helper_program app /bin/true;\ntest_helper_socket app nonsense:x;\n",
         'helper "app": invalid socket address'),
        ("test_helper_program app /bin/true;\ntest_helper_socket app 127.0.0.1:1 'a:b';\n",
         'helper "app": invalid socket name'),
        ("test_helper_program app /bin/true;\ntest_helper_probe app unix:;\n",
         'helper "app": invalid ready probe address'),
        ("test_helper_function app /tmp/x 1s;\ntest_helper_socket app 127.0.0.1:1;\n",
         'helper "app": a socket is handed to a program only'),
        ("test_helper_program app /bin/true;\ntest_helper_socket app 127.0.0.1:1;\n"
         "test_helper_probe app 127.0.0.1:2;\n",
         'helper "app": has both a socket and a ready probe'),
    ], load=load)
