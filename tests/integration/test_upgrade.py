"""Binary upgrade as nginx does it: USR2 starts the new binary with the
listening sockets inherited and the pid file renamed to .oldbin; WINCH
stops the old master's workers, QUIT retires it; or, to go back, HUP starts
the old workers again and QUIT ends the new master. Under a keep-alive
load, no request fails or is cut."""
import os
import shutil
import signal
import time

import kaload
import swsharness as h

SMALL = os.urandom(4096)
KEEP = "    keepalive_requests 1000000;\n"


def read_pid(path):
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def oldbin(s):
    return s.pid_path.with_name(s.pid_path.name + ".oldbin")


def start_upgrade(s, workers):
    """USR2; returns the new master's pid once its workers are there."""
    old = s.pid
    s.signal(signal.SIGUSR2)
    assert h.wait_for(lambda: read_pid(oldbin(s)) == old, 5), \
        "no .oldbin pid file\n%s" % s.error_log()
    assert h.wait_for(lambda: read_pid(s.pid_path) not in (None, old), 5), \
        "the new binary wrote no pid file\n%s" % s.error_log()
    new = read_pid(s.pid_path)
    assert h.wait_for(lambda: len(h.children_of(new)) == workers, 5), \
        "the new master has children %r\n%s" % (h.children_of(new), s.error_log())
    return new


def stop_master(pid, timeout=10):
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    assert h.wait_for(lambda: h._state(pid) in (None, "Z"), timeout), "master %d stays" % pid


def loads_for(s):
    return [kaload.Load(s.port, "/file.txt", 8, expect_body=SMALL, duration=60),
            kaload.Load(s.port, "/respond", 8, expect_body=b"Hello, world!", duration=60)]


def wait_progress(loads, n=50, timeout=10):
    base = [ld.stats["ok"] for ld in loads]
    assert h.wait_for(lambda: all(ld.stats["ok"] >= b + n for ld, b in zip(loads, base)),
                      timeout), [ld.stats for ld in loads]


def check(loads, stats):
    for ld, st in zip(loads, stats):
        assert st["failed"] == 0 and st["cut"] == 0, (st, ld.errors)
        assert st["closes"] == st["announced"], (st, ld.errors)


def test_upgrade_under_load(sws):
    s = sws(workers=2, files={"html/file.txt": SMALL}, keepalive="60s", http=KEEP,
            loglevel="notice")
    upgrade_under_load(s, s.wait_children(2))


def upgrade_under_load(s, old_workers, hold=None, on_new=None):
    """USR2, WINCH, QUIT under loads_for(s), none of whose requests may
    fail. hold(): something begun before USR2, returning what finishes it
    after WINCH (the old workers must see it through); on_new(pid): checks
    of the new master (test_uring_audit21.py)."""
    loads = loads_for(s)
    new = None
    for ld in loads:
        ld.start()
    try:
        wait_progress(loads)
        finish = hold() if hold else None
        new = start_upgrade(s, 2)
        if on_new:
            on_new(new)
        wait_progress(loads)
        # Both masters' workers accept now; WINCH stops the old ones.
        s.signal(signal.SIGWINCH)
        if finish:
            finish()
        assert h.wait_for(lambda: not set(old_workers) & set(s.children()), 5), \
            "old workers stay after WINCH\n%s" % s.error_log()
        assert s.alive(), "the old master left on WINCH"
        wait_progress(loads)
        s.signal(signal.SIGQUIT)
        assert s.wait_exit(10) == 0, s.error_log()
        assert not oldbin(s).exists(), ".oldbin left behind"
        assert read_pid(s.pid_path) == new
        wait_progress(loads)
    finally:
        stats = [ld.stop() for ld in loads]
        if new:
            served = h.curl(s.url("/respond"), fresh=True)
            stop_master(new)
    check(loads, stats)
    assert served.status == 200 and served.body == b"Hello, world!"
    assert "binary upgrade: started the new binary" in s.error_log()
    assert "[alert]" not in s.error_log() and "[emerg]" not in s.error_log(), s.error_log()


def test_upgrade_rollback(sws):
    s = sws(workers=1, files={"html/file.txt": SMALL}, keepalive="60s", http=KEEP,
            loglevel="notice")
    old_workers = s.wait_children(1)
    loads = loads_for(s)
    for ld in loads:
        ld.start()
    try:
        wait_progress(loads)
        new = start_upgrade(s, 1)
        s.signal(signal.SIGWINCH)
        assert h.wait_for(lambda: not set(old_workers) & set(s.children()), 5), s.error_log()
        wait_progress(loads)
        # Back: the old master's workers again, then the new master goes.
        s.signal(signal.SIGHUP)
        assert h.wait_for(lambda: len(set(s.children()) - {new}) == 1, 5), \
            "HUP after WINCH started no worker\n%s" % s.error_log()
        os.kill(new, signal.SIGQUIT)
        assert h.wait_for(lambda: new not in s.children(), 10), \
            "the new master stays after QUIT\n%s" % s.error_log()
        assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), \
            "the pid file did not get its name back\n%s" % s.error_log()
        assert not oldbin(s).exists()
        wait_progress(loads)
    finally:
        stats = [ld.stop() for ld in loads]
    check(loads, stats)
    assert s.alive()
    r = h.curl(s.url("/respond"), fresh=True)
    assert r.status == 200
    # and the old master can upgrade again
    new = start_upgrade(s, 1)
    stop_master(new)
    assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), s.error_log()


def test_upgrade_to_a_binary_that_cannot_start(sws, tmp_path, monkeypatch):
    binary = tmp_path / "bin" / "scalwsd"
    binary.parent.mkdir()
    shutil.copy(h.SCALWSD, binary)
    monkeypatch.setattr(h, "SCALWSD", str(binary))
    s = sws(workers=1)
    s.wait_children(1)
    # The file at the binary's path is replaced by one that fails.
    binary.unlink()
    binary.write_text("#!/bin/sh\nexit 3\n")
    binary.chmod(0o755)
    s.signal(signal.SIGUSR2)
    assert h.wait_file_contains(s.error_log_path, "exited with code 3", 5), s.error_log()
    assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), s.error_log()
    assert not oldbin(s).exists()
    assert h.curl(s.url("/respond"), fresh=True).status == 200
    # A binary that is not there at all: the same.
    binary.unlink()
    s.signal(signal.SIGUSR2)
    assert h.wait_file_contains(s.error_log_path, "execve(", 5), s.error_log()
    assert h.wait_for(lambda: read_pid(s.pid_path) == s.pid, 5), s.error_log()
    assert s.alive()


def test_second_usr2_while_upgrading_is_ignored(sws):
    s = sws(workers=1)
    s.wait_children(1)
    new = start_upgrade(s, 1)
    try:
        s.signal(signal.SIGUSR2)
        assert h.wait_file_contains(s.error_log_path, "USR2 ignored", 5), s.error_log()
        assert read_pid(s.pid_path) == new and read_pid(oldbin(s)) == s.pid
    finally:
        stop_master(new)


def test_new_binary_ignores_a_bad_socket_list(tmp_path):
    """SCALWS with a descriptor that is no socket (0: /dev/null) and
    garbage: both logged and ignored, the server binds its socket itself."""
    import subprocess
    env = dict(os.environ, SCALWS="0;abc;")
    port = h.free_port()
    (tmp_path / "html").mkdir(exist_ok=True)
    h.make_traversable(tmp_path)
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp_path, [port]))
    p = subprocess.Popen([h.SCALWSD, "-p", str(tmp_path) + "/", "-c", str(conf)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        assert h.wait_for(lambda: h.port_open(port), 5), "not listening"
        assert h.curl("http://127.0.0.1:%d/respond" % port, fresh=True).status == 200
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate(timeout=5)
    text = out.decode(errors="replace")
    assert "descriptor 0 of the SCALWS environment variable is not a usable socket" in text, text
    assert "invalid socket number" in text, text
