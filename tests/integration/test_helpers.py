"""Helper processes supervised by the master (sws_helper.h), declared by a
test module (helpermod.py): start, output to the error log, restarts with
backoff, reloads, graceful and fast stops, the master's death, bad
definitions. Every wait is bounded."""
import os
import re
import signal
import time
from pathlib import Path

import pytest

import helpermod
import swsharness as h

TICK = "test_helper_function tick @TMP@/state/tick 200ms;\n"

PROG_SH = r"""
echo "out one"
echo "err one" >&2
echo "env=$TEST_VAR cwd=$(pwd)"
head -c 3000 /dev/zero | tr '\0' 'x'; echo
while :; do sleep 0.1; done
"""


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    return helpermod.build(tmp_path_factory.mktemp("helpermod"))


def start(sws, load, http, files=None, **kw):
    """Helpers (and workers) run as root when the tests do: another pytest
    session on the machine may close /tmp/pytest-of-root (0700) for a while,
    and the helpers here read and write files under it. The users are
    tested apart, with helpers that touch no file."""
    files = dict(files or {})
    files.setdefault("prog.sh", PROG_SH)
    files.setdefault("work/.keep", "")
    if os.geteuid() == 0:
        kw.setdefault("main", "user root;")
    s = sws(load=load, http=http, files=files,
            server="        location = /ticks { test_helper_ticks; }\n", **kw)
    return s


@pytest.fixture
def state_dir(tmp_path):
    # helpers run as the workers' user (nobody, when the tests run as root)
    d = tmp_path / "state"
    d.mkdir(exist_ok=True)
    os.chmod(d, 0o777)
    return d


def read_tick(s):
    try:
        pid, n = (s.tmp / "state" / "tick").read_text().split()
        return int(pid), int(n)
    except (OSError, ValueError):
        return None


def wait_log(s, pattern, timeout=5.0, count=1):
    """Wait until the error log has count matches of the regex; returns them."""
    rx = re.compile(pattern)

    def f():
        m = rx.findall(s.error_log())
        return m if len(m) >= count else None
    return h.wait_for(f, timeout) or []


def helper_pid(s, name, timeout=5.0, exclude=()):
    """The pid of the last start of helper name (from the error log), once it
    is a live child of the master and not in exclude."""
    rx = re.compile(r'started helper "%s" process (\d+)' % re.escape(name))

    def f():
        pids = [int(p) for p in rx.findall(s.error_log())]
        if pids and pids[-1] not in exclude and pids[-1] in s.children():
            return pids[-1]
        return None
    return h.wait_for(f, timeout, step=0.01)


def gone(pid, timeout=5.0):
    return h.wait_for(lambda: h._state(pid) in (None, "Z"), timeout, step=0.02)


def uid(pid):
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[2])      # effective


def gid(pid):
    for line in Path("/proc/%d/status" % pid).read_text().splitlines():
        if line.startswith("Gid:"):
            return int(line.split()[2])


def fd_targets(pid, skip=()):
    out = set()
    d = "/proc/%d/fd" % pid
    for fd in os.listdir(d):
        if int(fd) in skip:
            continue
        try:
            out.add(os.readlink(os.path.join(d, fd)))
        except OSError:
            pass
    return out


# ---------------------------------------------------------------- start, output

def test_helpers_start_and_log_their_output(sws, load, state_dir):
    s = start(sws, load, TICK
              + "test_helper_program prog /bin/sh @TMP@/prog.sh;\n"
              + "test_helper_env prog TEST_VAR hello-env;\n"
              + "test_helper_dir prog work;\n", workers=2)
    tick = helper_pid(s, "tick")
    prog = helper_pid(s, "prog")
    assert tick and prog, s.error_log()

    # the function helper: its own process, named, writing its pid, logging
    assert h.wait_for(lambda: (read_tick(s) or (0, 0))[1] >= 3, 5), read_tick(s)
    assert read_tick(s)[0] == tick
    assert Path("/proc/%d/comm" % tick).read_text().strip() == "sws:tick"
    assert Path("/proc/%d/cmdline" % tick).read_bytes().rstrip(b"\0") \
        == b"scalwsd: helper tick"
    # the master keeps its command line
    assert Path("/proc/%d/cmdline" % s.pid).read_bytes().split(b"\0")[1] == b"-p"
    assert wait_log(s, r"\] %d#0: tick tick \d+" % tick, count=3)
    assert wait_log(s, r'helper "tick" \(pid %d\) stdout: function helper tick up\n' % tick)

    # the program: stdout and stderr line by line, tagged; environment, cwd
    assert wait_log(s, r'helper "prog" \(pid %d\) stdout: out one\n' % prog)
    assert wait_log(s, r'helper "prog" \(pid %d\) stderr: err one\n' % prog)
    assert wait_log(s, r'stdout: env=hello-env cwd=%s/work\n' % re.escape(str(s.tmp)))
    # a 3000-byte line comes in pieces of at most 1024 bytes, nothing lost
    pieces = wait_log(s, r'helper "prog" \(pid %d\) stdout: (x+)\n' % prog, count=3)
    assert [len(p) for p in pieces] == [1024, 1024, 952], [len(p) for p in pieces]

    # the function helper shares the workers' zone: the workers see its count
    a = int(h.curl(s.url("/ticks")).body.split()[1])
    assert h.wait_for(lambda: int(h.curl(s.url("/ticks")).body.split()[1]) >= a + 2, 5)

    # no worker holds a helper's pipe (the two ends of a pipe show the same
    # inode); the function helper holds no socket
    master_pipes = {t for t in fd_targets(s.pid) if t.startswith("pipe:")}
    assert len(master_pipes) >= 4, master_pipes
    workers = [k for k in s.wait_children(4) if k not in (tick, prog)]
    assert len(workers) == 2, workers
    for w in workers:
        assert not fd_targets(w) & master_pipes, w
    assert not [t for t in fd_targets(tick) if t.startswith("socket:")], fd_targets(tick)
    # stdin is /dev/null, not the master's
    assert os.readlink("/proc/%d/fd/0" % prog) == "/dev/null"
    # a helper's stdout and stderr are its own pipes' write ends: nothing else
    for pid in (tick, prog):
        assert not fd_targets(pid, skip=(1, 2)) & master_pipes, fd_targets(pid)
        assert {os.readlink("/proc/%d/fd/%d" % (pid, fd)) for fd in (1, 2)} <= master_pipes


READY = "/bin/sh -c 'echo ready; while :; do sleep 0.1; done'"


@pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root")
def test_helpers_run_as_their_user(sws, load):
    import grp
    import pwd
    daemon = pwd.getpwnam("daemon")
    group = grp.getgrnam("nogroup")
    # the workers run as nobody (the default), like a helper with no user
    s = sws(load=load, http="test_helper_program dflt %s;\n"
                            "test_helper_program prog %s;\n"
                            "test_helper_user prog daemon;\n"
                            "test_helper_program grouped %s;\n"
                            "test_helper_user grouped daemon nogroup;\n" % (READY, READY, READY))
    pids = {n: helper_pid(s, n) for n in ("dflt", "prog", "grouped")}
    assert all(pids.values()), s.error_log()
    for n, pid in pids.items():      # exec'd: the user is switched by now
        assert wait_log(s, r'helper "%s" \(pid %d\) stdout: ready' % (n, pid)), n
    workers = [k for k in s.wait_children(4) if k not in pids.values()]
    assert uid(pids["dflt"]) == uid(workers[0]) == pwd.getpwnam("nobody").pw_uid
    assert uid(pids["prog"]) == uid(pids["grouped"]) == daemon.pw_uid
    assert gid(pids["prog"]) == daemon.pw_gid and gid(pids["grouped"]) == group.gr_gid


# ---------------------------------------------------------------- restarts

def restart_delay(s, name, victim):
    t0 = time.monotonic()
    os.kill(victim, signal.SIGKILL)
    new = helper_pid(s, name, timeout=10, exclude=[victim])
    assert new, s.error_log()
    return new, time.monotonic() - t0


def test_killed_helper_restarts_with_backoff(sws, load, state_dir):
    s = start(sws, load, "test_helper_program prog /bin/sh @TMP@/prog.sh;\n"
                         "test_helper_backoff prog 500ms 10s 2s;\n")
    p0 = helper_pid(s, "prog")
    assert p0
    p1, d1 = restart_delay(s, "prog", p0)
    p2, d2 = restart_delay(s, "prog", p1)     # died again at once: twice the delay
    assert 0.45 <= d1 < 5, d1
    assert d2 >= 0.95 and d2 >= d1 + 0.2 and d2 < 6, (d1, d2)
    assert wait_log(s, r'helper "prog" process %d exited on signal 9' % p0)
    assert wait_log(s, r'helper "prog" died: restarting it in 500 ms')
    assert wait_log(s, r'helper "prog" died: restarting it in 1000 ms')
    # it ran for longer than the reset time (2 s): the delay is back to 500 ms
    time.sleep(2.2)
    p3, d3 = restart_delay(s, "prog", p2)
    assert 0.45 <= d3 < d2 - 0.2, (d1, d2, d3)
    assert wait_log(s, r'helper "prog" died: restarting it in 500 ms', count=2)
    assert s.alive()


def test_failing_helper_is_backed_off(sws, load, state_dir):
    s = start(sws, load, "test_helper_program bad /bin/sh -c 'echo start; exit 3';\n"
                         "test_helper_backoff bad 100ms 800ms 10s;\n")
    time.sleep(3.0)
    text = s.error_log()
    n = len(re.findall(r'helper "bad" process \d+ exited with code 3', text))
    # 100 + 200 + 400 + 800 + 800 ms ...: about 6 starts in 3 s, not hundreds
    assert 3 <= n <= 10, (n, text[-2000:])
    for ms in (100, 200, 400, 800):
        assert 'helper "bad" died: restarting it in %d ms' % ms in text
    assert "restarting it in 1600 ms" not in text     # the cap
    assert s.alive()


def test_restart_policies_and_last_partial_line(sws, load, state_dir):
    s = start(sws, load,
              "test_helper_program once /bin/sh -c 'printf \"no newline\"; exit 0';\n"
              "test_helper_restart once on-failure;\n"
              "test_helper_program never /bin/sh -c 'exit 4';\n"
              "test_helper_restart never never;\n"
              "test_helper_program always /bin/sh -c 'exit 0';\n"
              "test_helper_backoff always 100ms 100ms 10s;\n")
    assert wait_log(s, r'helper "once" \(pid \d+\) stdout: no newline\n')
    assert wait_log(s, r'helper "once" is not restarted \(restart on-failure\)')
    assert wait_log(s, r'helper "never" process \d+ exited with code 4')
    assert wait_log(s, r'helper "never" is not restarted \(restart never\)')
    assert wait_log(s, r'started helper "always" process', count=4)
    time.sleep(0.5)
    text = s.error_log()
    assert text.count('started helper "once"') == 1
    assert text.count('started helper "never"') == 1
    # a helper that ends its work (code 0, restart on-failure) is not an alert;
    # one that fails, or a restart-always helper that ends, is
    assert re.search(r'notice\] \d+#0: helper "once" process \d+ exited with code 0', text)
    assert re.search(r'alert\] \d+#0: helper "never" process \d+ exited with code 4', text)
    assert re.search(r'alert\] \d+#0: helper "always" process \d+ exited with code 0', text)


# ---------------------------------------------------------------- reload

def reload(s, text):
    s.write_conf(text)
    n = s.error_log().count("configuration reloaded")
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: s.error_log().count("configuration reloaded") > n, 10), \
        s.error_log()[-3000:]


def test_reload_keeps_unchanged_helpers(sws, load, state_dir):
    s = start(sws, load, TICK + "test_helper_program prog /bin/sh @TMP@/prog.sh;\n")
    tick, prog = helper_pid(s, "tick"), helper_pid(s, "prog")
    assert tick and prog
    reload(s, s.conf_text + "\n# a comment changes nothing\n")
    reload(s, s.conf_text.replace("keepalive_timeout 5s", "keepalive_timeout 6s"))
    assert wait_log(s, r'helper "tick" process %d is unchanged: kept' % tick, count=2)
    assert wait_log(s, r'helper "prog" process %d is unchanged: kept' % prog, count=2)
    assert h.children_of(s.pid).count(tick) == 1 and prog in s.children()
    n = read_tick(s)[1]
    assert h.wait_for(lambda: read_tick(s)[1] > n + 1, 5)     # still ticking
    assert read_tick(s)[0] == tick
    assert s.error_log().count('started helper "tick"') == 1


def test_reload_restarts_changed_helpers(sws, load, state_dir):
    s = start(sws, load, TICK + "test_helper_program prog /bin/sh @TMP@/prog.sh;\n"
              "test_helper_program gone /bin/sh @TMP@/prog.sh;\n")
    tick, prog, old = helper_pid(s, "tick"), helper_pid(s, "prog"), helper_pid(s, "gone")
    assert tick and prog and old
    text = s.conf_text.replace("tick 200ms", "tick 150ms")
    text = text.replace("prog /bin/sh %s/prog.sh;" % s.tmp,
                        "prog /bin/sh %s/prog.sh extra-arg;" % s.tmp)
    text = text.replace("test_helper_program gone", "test_helper_program fresh")
    reload(s, text)
    tick2 = helper_pid(s, "tick", exclude=[tick])
    prog2 = helper_pid(s, "prog", exclude=[prog])
    fresh = helper_pid(s, "fresh")
    assert tick2 and prog2 and fresh, s.error_log()[-3000:]
    assert gone(tick) and gone(prog) and gone(old)
    assert wait_log(s, r'helper "tick" has changed: restarting it')
    assert wait_log(s, r'helper "gone" is no longer configured: stopping it')
    # the old function helper stopped gracefully, then the new one started
    text = s.error_log()
    assert re.search(r'\] %d#0: tick tick stopping after \d+' % tick, text)
    assert re.search(r'notice\] \d+#0: helper "tick" process %d exited with code 0' % tick, text)
    assert text.index("tick tick stopping") < text.index('started helper "tick" process %d'
                                                         % tick2)
    assert h.wait_for(lambda: (read_tick(s) or (0,))[0] == tick2, 5)


# ---------------------------------------------------------------- stop

def test_quit_stops_helpers_after_the_workers(sws, load, state_dir):
    s = start(sws, load, TICK + "test_helper_program prog /bin/sh @TMP@/prog.sh;\n")
    tick, prog = helper_pid(s, "tick"), helper_pid(s, "prog")
    assert tick and prog
    # the worker may not be forked yet when the port accepts
    workers = [k for k in s.wait_children(3) if k not in (tick, prog)]
    assert len(workers) == 1, workers
    t0 = time.monotonic()
    s.signal(signal.SIGQUIT)
    assert s.wait_exit(10) == 0, s.error_log()[-3000:]
    assert time.monotonic() - t0 < 5
    assert gone(tick, 1) and gone(prog, 1)
    text = s.error_log()
    assert re.search(r'\] %d#0: tick tick stopping after' % tick, text)
    assert "killing it" not in text
    # the order: the worker went first, then the helpers were asked to stop
    assert text.index("worker process %d (worker 0) exited" % workers[0]) \
        < text.index("stopping the helpers") < text.index('helper "prog" process %d exited'
                                                          % prog)


def test_term_stops_helpers_fast(sws, load, state_dir):
    # TERM cuts even a 30 s stop timeout to 1 s
    s = start(sws, load, TICK + "test_helper_program prog /bin/sh @TMP@/prog.sh;\n"
                         "test_helper_program stubborn /bin/sh -c "
                         "'trap \"\" TERM; echo ready; while :; do sleep 0.1; done';\n"
                         "test_helper_stop stubborn TERM 30s;\n")
    tick, prog, stub = helper_pid(s, "tick"), helper_pid(s, "prog"), helper_pid(s, "stubborn")
    assert tick and prog and stub
    assert wait_log(s, r'helper "stubborn" \(pid \d+\) stdout: ready')
    t0 = time.monotonic()
    s.signal(signal.SIGTERM)
    assert s.wait_exit(10) == 0
    assert 0.8 <= time.monotonic() - t0 < 4
    assert gone(tick, 1) and gone(prog, 1) and gone(stub, 1)
    assert re.search(r'helper "stubborn" process %d did not stop within 1\d\d\d ms: killing it'
                     % stub, s.error_log())


def test_helper_ignoring_its_stop_signal_is_killed(sws, load, state_dir):
    s = start(sws, load, "test_helper_program stubborn /bin/sh -c "
                         "'trap \"\" TERM; echo ready; while :; do sleep 0.1; done';\n"
                         "test_helper_stop stubborn TERM 1s;\n"
                         "test_helper_program polite /bin/sh -c "
                         "'trap \"echo bye; exit 0\" INT; while :; do sleep 0.1; done';\n"
                         "test_helper_stop polite INT 10s;\n")
    pid = helper_pid(s, "stubborn")
    polite = helper_pid(s, "polite")
    assert pid and polite and wait_log(s, r'helper "stubborn" \(pid \d+\) stdout: ready')
    time.sleep(0.3)     # the trap is set
    t0 = time.monotonic()
    s.signal(signal.SIGQUIT)
    assert s.wait_exit(10) == 0
    took = time.monotonic() - t0
    assert 0.8 <= took < 5, took
    text = s.error_log()
    assert re.search(r'helper "stubborn" process %d did not stop within 1\d\d\d ms: killing it'
                     % pid, text), text[-2000:]
    assert 'helper "stubborn" process %d exited on signal 9' % pid in text
    # its own stop signal (INT) reached the other one
    assert 'helper "polite" (pid %d) stdout: bye' % polite in text
    assert 'helper "polite" process %d exited with code 0' % polite in text


def test_master_killed_takes_the_helpers_along(sws, load, state_dir):
    s = start(sws, load, TICK + "test_helper_program stubborn /bin/sh -c "
                         "'trap \"\" TERM; while :; do sleep 0.1; done';\n")
    tick, stub = helper_pid(s, "tick"), helper_pid(s, "stubborn")
    assert tick and stub
    os.kill(s.pid, signal.SIGKILL)
    s.wait_exit(5)
    assert gone(tick, 5) and gone(stub, 5), (h._state(tick), h._state(stub))


# ---------------------------------------------------------------- logs

def test_usr1_reopens_the_function_helpers_log(sws, load, state_dir):
    s = start(sws, load, TICK)
    tick = helper_pid(s, "tick")
    assert tick and wait_log(s, r"\] %d#0: tick tick" % tick)
    os.rename(s.error_log_path, s.tmp / "error.log.1")
    s.signal(signal.SIGUSR1)
    assert wait_log(s, r"\] %d#0: tick tick \d+" % tick, count=2), s.error_log()


# ---------------------------------------------------------------- errors

def test_bad_definitions_are_configuration_errors(tmp_path, load):
    (tmp_path / "noexec.sh").write_text("echo\n")
    cases = [
        ("test_helper_program app no-such-program-xyz;\n",
         'helper "app": program "no-such-program-xyz" not found in PATH'),
        ("test_helper_program app %s/noexec.sh;\n" % tmp_path,
         'helper "app": cannot execute program %s/noexec.sh' % tmp_path),
        ("test_helper_program app /bin/true;\ntest_helper_dir app /no/such/dir;\n",
         'helper "app": no such directory /no/such/dir'),
        ("test_helper_program 'bad name' /bin/true;\n", 'invalid helper name "bad name"'),
        ("test_helper_program app /bin/true;\ntest_helper_program app /bin/true;\n",
         'helper "app" is already declared'),
        ("test_helper_program app /bin/true;\ntest_helper_backoff app 2s 1s 0;\n",
         'helper "app": the backoff needs 0 < first <= max'),
    ]
    if os.geteuid() == 0:
        cases.append(("test_helper_program app /bin/true;\n"
                      "test_helper_user app no-such-user-xyz;\n",
                      'helper "app": unknown user no-such-user-xyz'))
    h.assert_config_errors(tmp_path, cases, load=load)


def test_exec_failure_is_logged_and_backed_off(sws, load, state_dir, tmp_path):
    script = tmp_path / "badinterp.sh"
    script.write_text("#!/no/such/interpreter\necho hi\n")
    os.chmod(script, 0o755)
    s = start(sws, load, "test_helper_program bad %s;\n"
                         "test_helper_backoff bad 200ms 1s 10s;\n" % script)
    assert wait_log(s, r'helper "bad": execv "%s" failed: No such file or directory'
                    % re.escape(str(script)))
    assert wait_log(s, r'helper "bad" process \d+ exited with code 127', count=2)
    assert wait_log(s, r'helper "bad" died: restarting it in 400 ms')
    assert s.alive() and h.curl(s.url("/respond")).status == 200
