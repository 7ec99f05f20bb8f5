"""Managed applications' run-time server lists through process deaths
(docs/apps.md): whatever dies while an old process drains (its
replacement, the old one itself) and whatever comes meanwhile (a reload,
a recycling), the application's group lists exactly its live processes,
a draining one only while it has a replacement, and requests neither hang
nor go to a dead socket. Each case is provoked deterministically: a slow
request keeps the old process draining while the test kills a process
with SIGKILL. The group's list is read through the admin API."""
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import swsharness as h
from test_apps import (alive, get, need_node, node_app, ready_count, wait_serving)
from test_apps import rundir  # noqa: F401  (the fixture)


def start(sws, app_block):
    kw = {"main": "user root;"} if os.geteuid() == 0 else {}
    s = sws(http=app_block, server="location / { node_pass web; }\n", **kw)
    s.app_block = app_block
    return s


CHANGE = re.compile(r'application "web": server unix:\S+/(web-[0-9a-f]{8}\.\d+(?:\.1)?)\.sock '
                    r'(joins|goes back up|drains|leaves)$', re.M)


def servers(s):
    """{helper name: "up" or "draining"}: the group web's list, as the
    master's changes to it (each logged) left it."""
    out = {}
    for name, change in CHANGE.findall(s.error_log()):
        if change == "leaves":
            out.pop(name, None)
        else:
            out[name] = "draining" if change == "drains" else "up"
    return out


def pid_of(s, name):
    """The last process started for helper name."""
    pids = re.findall(r'started helper "%s" process (\d+)' % re.escape(name), s.error_log())
    return int(pids[-1]) if pids else None


def names(s):
    return set(re.findall(r'started helper "(web-[0-9a-f]{8}\.\d+(?:\.1)?)" process',
                          s.error_log()))


def live(s):
    """Helpers whose last process is alive and has been ready."""
    out = set()
    for n in names(s):
        pid = pid_of(s, n)
        if alive(pid) and re.search(r'helper "%s" process %d is ready' % (re.escape(n), pid),
                                    s.error_log()):
            out.add(n)
    return out


def wait_list(s, pred, timeout=8, what=""):
    last = {}

    def ok():
        nonlocal last
        last = servers(s)
        return pred(last)
    assert h.wait_for(ok, timeout, 0.05), "%s: %r\n%s" % (what, last, s.error_log()[-3000:])
    return last


def settled(s):
    """The list is exactly the live processes, all up."""
    return wait_list(s, lambda l: l and set(l) == live(s)
                     and set(l.values()) == {"up"}, 10, "not settled")


def slow(s, ms):
    return ThreadPoolExecutor(1).submit(get, s, "/slow?ms=%d" % ms, timeout=15)


def reload(s, block):
    s.conf_text = s.conf_text.replace(s.app_block, block)
    s.app_block = block
    s.write_conf()
    s.signal(signal.SIGHUP)


def recycling_with_a_slow_request(s):
    """max_requests 3: the first process gets a slow request, its twin is
    ready and it drains; (old, twin, future of the slow request)."""
    wait_serving(s)
    for _ in range(3):
        assert get(s, "/").status == 200
    old = next(iter(servers(s)))
    f = slow(s, 3000)
    twin = old + ".1"
    wait_list(s, lambda l: l.get(old) == "draining" and l.get(twin) == "up", 8,
              "the twin never took over")
    return old, twin, f


def reload_with_a_slow_request(s, rundir):
    """A slow request on the only process, then a reload that changes the
    block: its new process is ready and it drains; (old, its pid, new,
    future of the slow request)."""
    wait_serving(s)
    old = next(iter(servers(s)))
    f = slow(s, 3000)
    time.sleep(0.2)
    reload(s, node_app("web", "plain.js", rundir, "env APP_V 2;"))
    l = wait_list(s, lambda l: l.get(old) == "draining" and len(l) == 2, 8, "no drain")
    return old, pid_of(s, old), [n for n in l if n != old][0], f


@need_node
def test_replacement_killed_while_the_old_one_drains(sws, rundir):
    """The twin that took over dies: the draining process, alive, goes
    back up at once (no 503 while the twin restarts), drains again when
    the twin's new process is ready, and leaves once its request is done."""
    s = start(sws, node_app("web", "plain.js", rundir, "max_requests 3;"))
    old, twin, f = recycling_with_a_slow_request(s)
    old_pid, twin_pid = pid_of(s, old), pid_of(s, twin)
    os.kill(twin_pid, signal.SIGKILL)
    l = wait_list(s, lambda l: twin not in l, 3, "the dead twin stayed listed")
    assert l == {old: "up"}, l
    r = get(s, "/pid")
    assert (r.status, r.body) == (200, str(old_pid).encode()), r
    # the twin's restart takes over again; the slow request ends on old
    assert h.wait_for(lambda: pid_of(s, twin) != twin_pid and alive(pid_of(s, twin)), 8)
    r = f.result()
    assert (r.status, r.body) == (200, b"slow %d" % old_pid), r
    assert h.wait_for(lambda: not alive(old_pid), 5), s.error_log()[-3000:]
    assert settled(s) == {twin: "up"}


@need_node
def test_twin_crash_loop_keeps_the_old_process_serving(sws, rundir):
    """Killed again and again as soon as it is ready, the twin never
    takes the slot for long: the old process serves between, and every
    request is answered, never from a dead socket."""
    s = start(sws, node_app("web", "plain.js", rundir, "max_requests 3;"))
    old, twin, f = recycling_with_a_slow_request(s)
    old_pid = pid_of(s, old)
    for _ in range(3):
        os.kill(pid_of(s, twin), signal.SIGKILL)
        wait_list(s, lambda l: l == {old: "up"}, 3, "old not back up")
        for _ in range(3):
            t0 = time.monotonic()
            r = get(s, "/pid")
            assert r.status == 200 and time.monotonic() - t0 < 2, r
        n = ready_count(s, "web")
        assert h.wait_for(lambda: ready_count(s, "web") > n, 8), s.error_log()[-3000:]
    assert f.result().status == 200
    assert h.wait_for(lambda: not alive(old_pid), 5), s.error_log()[-3000:]
    assert settled(s) == {twin: "up"}


@need_node
def test_recycled_process_killed_while_it_drains_is_not_restarted(sws, rundir):
    """It was going: it leaves the list and is not started again (its
    twin serves, and a restart would only replace the twin)."""
    s = start(sws, node_app("web", "plain.js", rundir, "max_requests 3;"))
    old, twin, f = recycling_with_a_slow_request(s)
    old_pid = pid_of(s, old)
    os.kill(old_pid, signal.SIGKILL)
    assert f.result().status in (200, 502)
    l = wait_list(s, lambda l: old not in l, 3, "the dead process stayed listed")
    assert l == {twin: "up"}, l
    time.sleep(0.5)                          # past the restart's 100 ms backoff
    assert pid_of(s, old) == old_pid, s.error_log()[-2000:]
    assert settled(s) == {twin: "up"}


@need_node
def test_reload_while_a_recycled_process_drains(sws, rundir):
    """A reload that keeps the block (same processes) while the recycled
    process drains: it still leaves and stops once its request is done,
    and recycling goes on afterwards (the twins take turns again)."""
    block = node_app("web", "plain.js", rundir, "max_requests 3;")
    s = start(sws, block)
    old, twin, f = recycling_with_a_slow_request(s)
    old_pid = pid_of(s, old)
    n = s.error_log().count("is unchanged: kept")
    reload(s, block + "# a comment\n")
    assert h.wait_for(lambda: s.error_log().count("is unchanged: kept") > n, 5)
    assert f.result().status == 200
    assert h.wait_for(lambda: not alive(old_pid), 5), s.error_log()[-3000:]
    assert settled(s) == {twin: "up"}
    # and the twin is recycled in its turn
    twin_pid = pid_of(s, twin)
    for _ in range(4):
        assert get(s, "/").status == 200
    assert h.wait_for(lambda: not alive(twin_pid), 8), s.error_log()[-3000:]
    assert settled(s) == {old: "up"}


@need_node
def test_old_process_killed_while_it_drains_after_a_reload(sws, rundir):
    """A reload that changed the block: the old process drains its slow
    request; killed meanwhile, it leaves the list at once (its helper is
    no longer configured: nothing else would take it out)."""
    s = start(sws, node_app("web", "plain.js", rundir))
    old, old_pid, new, f = reload_with_a_slow_request(s, rundir)
    os.kill(old_pid, signal.SIGKILL)
    assert f.result().status in (200, 502)          # a GET may be retried on the new one
    l = settled(s)
    assert len(l) == 1 and old not in l, l


@need_node
def test_old_process_killed_before_its_replacement_is_ready(sws, rundir):
    """Killed while still serving (its replacement not ready yet): it
    leaves the list at once; no request goes to its dead socket."""
    s = start(sws, node_app("web", "plain.js", rundir))
    wait_serving(s)
    old = next(iter(servers(s)))
    # the new block's process takes 1.5 s to listen
    reload(s, node_app("web", "plain.js", rundir, "env LISTEN_DELAY_MS 1500;"))
    assert h.wait_for(lambda: len(names(s)) == 2, 5)
    os.kill(pid_of(s, old), signal.SIGKILL)
    wait_list(s, lambda l: old not in l, 3, "the dead process stayed listed")
    l = settled(s)
    assert len(l) == 1 and old not in l, l
    assert get(s, "/").status == 200


@need_node
def test_replacement_killed_while_the_old_one_drains_after_a_reload(sws, rundir):
    """A reload's new process dies while the old one drains: the old one
    goes back up, drains again once the new one's restart is ready, and
    stops after its request."""
    s = start(sws, node_app("web", "plain.js", rundir))
    old, old_pid, new, f = reload_with_a_slow_request(s, rundir)
    new_pid = pid_of(s, new)
    os.kill(new_pid, signal.SIGKILL)
    l = wait_list(s, lambda l: new not in l, 3, "the dead process stayed listed")
    assert l == {old: "up"}, l
    assert get(s, "/pid").body == str(old_pid).encode()
    assert h.wait_for(lambda: pid_of(s, new) != new_pid and alive(pid_of(s, new)), 8)
    r = f.result()
    assert (r.status, r.body) == (200, b"slow %d" % old_pid), r
    assert h.wait_for(lambda: not alive(old_pid), 5), s.error_log()[-3000:]
    assert settled(s) == {new: "up"}
