"""A binary upgrade (USR2) under a Type=notify unit with NotifyAccess=all
(contrib/systemd/scalws.service): the new master says READY=1 with its own
MAINPID=, so systemd follows it; the old master's end says nothing (no
STOPPING=1: the service goes on); a rollback gives MAINPID= back to the old
master and the new one's end says nothing either. The test plays systemd's
socket (test_notify.NotifySocket); the messages and their senders are
real."""
import os
import signal

import swsharness as h
from test_notify import notify, ready   # noqa: F401  (the fixture)
from test_upgrade import oldbin, read_pid, start_upgrade, stop_master


def expect_ready_from(ns, pid):
    m, sender = ns.expect("READY")
    assert sender == pid and m["READY"] == "1" and m["MAINPID"] == str(pid), (m, sender, pid)
    return m


def no_stopping(ns, timeout=1.0):
    """Nothing but STATUS= lines for timeout s (READY is checked apart)."""
    while True:
        m = ns.quiet(timeout)
        if m is None:
            return
        assert "STOPPING" not in m, m


def test_upgrade_hands_mainpid_to_the_new_master(sws, notify):  # noqa: F811
    s = sws(workers=1)
    ready(s, notify)
    old_workers = s.wait_children(1)
    new = start_upgrade(s, 1)
    try:
        m = expect_ready_from(notify, new)
        assert m["STATUS"].startswith("serving: "), m
        s.signal(signal.SIGWINCH)
        assert h.wait_for(lambda: not set(old_workers) & set(s.children()), 5), s.error_log()
        s.signal(signal.SIGQUIT)
        assert s.wait_exit(10) == 0, s.error_log()
        # The old master's QUIT: no STOPPING=1 (systemd would stop the unit).
        no_stopping(notify)
        assert read_pid(s.pid_path) == new
        assert h.curl(s.url("/respond"), fresh=True).status == 200
        # The new master is the service now: a reload, then its stop, say so.
        os.kill(new, signal.SIGHUP)
        m, sender = notify.expect("RELOADING")
        assert sender == new, (m, sender)
        expect_ready_from(notify, new)
        os.kill(new, signal.SIGQUIT)
        m, sender = notify.expect("STOPPING")
        assert sender == new and m["STATUS"] == "gracefully shutting down", (m, sender)
    finally:
        stop_master(new)


def test_rollback_hands_mainpid_back(sws, notify):  # noqa: F811
    s = sws(workers=1)
    ready(s, notify)
    old_workers = s.wait_children(1)
    new = start_upgrade(s, 1)
    try:
        expect_ready_from(notify, new)
        s.signal(signal.SIGWINCH)
        assert h.wait_for(lambda: not set(old_workers) & set(s.children()), 5), s.error_log()
        # HUP after WINCH: the old workers again, and the old master is the
        # main process again.
        s.signal(signal.SIGHUP)
        m = expect_ready_from(notify, s.pid)
        assert m["STATUS"].startswith("serving: "), m
        # The new master's QUIT: no STOPPING=1; once it is gone the old
        # master says READY again (it is the service).
        os.kill(new, signal.SIGQUIT)
        m = expect_ready_from(notify, s.pid)
        assert m["STATUS"] == "the new binary exited: generation 2 serves", m
        assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), s.error_log()
        assert not oldbin(s).exists()
        no_stopping(notify, 0.5)
        assert h.curl(s.url("/respond"), fresh=True).status == 200
    finally:
        stop_master(new)
    # and the old master's own stop is the service's
    s.signal(signal.SIGQUIT)
    m, sender = notify.expect("STOPPING")
    assert sender == s.pid, (m, sender)
