"""Master and workers: respawn, reload under load, graceful and fast stop,
log reopening, the pid file."""
import hashlib
import os
import signal
import time

import pytest

import swsharness as h

V1 = '        location = /ver { respond 200 "v1"; }\n'
V2 = '        location = /ver { respond 200 "v2"; }\n'


def ok_requests(s, n=10, path="/respond", body=b"Hello, world!"):
    for i in range(n):
        r = h.curl(s.url(path), fresh=True)
        assert r.status == 200 and r.body == body, (i, r)


# ---------------------------------------------------------------- workers

def test_master_and_two_workers(sws):
    s = sws(workers=2)
    kids = s.wait_children(2)
    assert len(kids) == 2, "master %d has children %r" % (s.pid, kids)
    for k in kids:
        assert h._pgid(k) == s.pgid
    ok_requests(s)


def test_killed_worker_is_replaced(sws):
    s = sws(workers=2)
    kids = s.wait_children(2)
    assert len(kids) == 2, kids
    victim = kids[0]
    os.kill(victim, signal.SIGKILL)
    new = s.wait_children(2, timeout=5, exclude=[victim])
    assert len(new) == 2 and victim not in new, \
        "worker %d not replaced: children now %r" % (victim, new)
    assert s.alive()
    ok_requests(s, 20)


def test_single_worker_killed_is_replaced(sws):
    s = sws(workers=1)
    kids = s.wait_children(1)
    assert len(kids) == 1, kids
    os.kill(kids[0], signal.SIGKILL)
    new = s.wait_children(1, timeout=5, exclude=kids)
    assert len(new) == 1 and new != kids, new
    ok_requests(s, 5)


# ---------------------------------------------------------------- reload

def client_loop(url, fresh):
    def run(stop):
        import pycurl
        handle = None if fresh else pycurl.Curl()
        results = []
        deadline = time.monotonic() + 30
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    r = h.curl(url, handle=handle, fresh=fresh, timeout=5)
                    results.append((r.status, r.body))
                except Exception as e:        # counted as a failure
                    results.append(("error", repr(e)))
                time.sleep(0.003)
        finally:
            if handle is not None:
                handle.close()
        return results
    return run


def failures(results):
    return [x for x in results if x[0] != 200 or x[1] not in (b"v1", b"v2")]


@pytest.mark.parametrize("how", ["-s reload", "SIGHUP"])
def test_reload_under_load_no_failures(sws, how):
    s = sws(workers=2, server=V1)
    old_workers = s.wait_children(2)
    assert h.curl(s.url("/ver")).body == b"v1"
    fresh = h.Background(client_loop(s.url("/ver"), fresh=True))
    keep = h.Background(client_loop(s.url("/ver"), fresh=False))
    fresh.start()
    keep.start()
    try:
        time.sleep(0.5)
        s.write_conf(s.conf_text.replace(V1, V2))
        if how == "SIGHUP":
            s.signal(signal.SIGHUP)
        else:
            r = s.control("reload")
            assert r.returncode == 0, r.stderr.decode()
        got = h.wait_for(lambda: h.curl(s.url("/ver"), fresh=True).body == b"v2", 5)
        assert got, "new configuration not served 5 s after the reload\n%s" % s.error_log()
        time.sleep(0.5)
    finally:
        rf = fresh.finish()
        rk = keep.finish()
    assert len(rf) > 20 and len(rk) > 20, (len(rf), len(rk))
    assert failures(rf) == [], "new-connection client failures: %r" % failures(rf)[:10]
    assert failures(rk) == [], "keep-alive client failures: %r" % failures(rk)[:10]
    assert rf[-1] == (200, b"v2") and rk[-1] == (200, b"v2"), (rf[-1], rk[-1])
    assert s.alive()
    new_workers = s.wait_children(2, timeout=5, exclude=old_workers)
    assert len(new_workers) == 2 and not set(new_workers) & set(old_workers), \
        "old workers %r, now %r" % (old_workers, new_workers)


def test_reload_broken_config_keeps_old(sws):
    s = sws(workers=1, server=V1)
    kids = s.wait_children(1)
    s.write_conf(s.conf_text.replace(V1, V2 + "        bogus_directive_xyz on;\n"))
    s.signal(signal.SIGHUP)
    logged = h.wait_file_contains(s.error_log_path, "bogus_directive_xyz", 5)
    assert logged, "master did not log the broken configuration:\n%s" % s.error_log()
    time.sleep(0.3)
    assert s.alive(), "master died on a broken reload"
    for _ in range(5):
        r = h.curl(s.url("/ver"), fresh=True)
        assert r.status == 200 and r.body == b"v1", r
    assert s.children() == kids, "workers changed on a failed reload"
    # and a later good reload still works
    s.write_conf(s.conf_text.replace(V1, V2))
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: h.curl(s.url("/ver"), fresh=True).body == b"v2", 5)


def test_reload_adds_listener(sws):
    s = sws(ports=2, server=V1)
    assert not h.port_open(s.ports[1])
    text = s.conf_text.replace(V1, V2).replace(
        "        server_name localhost;",
        "        listen 127.0.0.1:%d;\n        server_name localhost;" % s.ports[1])
    s.write_conf(text)
    s.signal(signal.SIGHUP)
    assert h.wait_for(lambda: h.port_open(s.ports[1]), 5), s.error_log()
    r = h.curl(s.url("/ver", port=s.ports[1]))
    assert r.body == b"v2", r


# ---------------------------------------------------------------- stop

def slow_reader_start(port, path, rcvbuf=65536):
    c = h.Conn(port, rcvbuf=rcvbuf, timeout=10)
    c.send(h.request("GET", path))
    while b"\r\n\r\n" not in c.buf:
        assert c._fill(), "closed before the head"
    head, _, rest = c.buf.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    c.buf = b""
    return c, rest


def test_sigquit_finishes_inflight_then_exits(sws):
    size = 20 << 20
    data = os.urandom(size)
    s = sws(files={"html/big.bin": data})
    c, first = slow_reader_start(s.port, "/big.bin")
    digest = hashlib.sha256(first)
    n = len(first)
    try:
        while n < (1 << 20):
            d = c.sock.recv(65536)
            assert d
            digest.update(d)
            n += len(d)
        s.signal(signal.SIGQUIT)
        t_quit = time.monotonic()
        checked_alive = False
        while n < size:
            assert time.monotonic() - t_quit < 30, "slow download stalled at %d" % n
            d = c.sock.recv(65536)
            assert d, "in-flight response cut at %d of %d bytes after SIGQUIT" % (n, size)
            digest.update(d)
            n += len(d)
            if not checked_alive and time.monotonic() - t_quit > 0.5:
                checked_alive = True
                assert s.alive(), "master exited while a response was in flight"
            time.sleep(0.01)
        assert n == size and digest.hexdigest() == hashlib.sha256(data).hexdigest()
    finally:
        c.close()
    rc = s.wait_exit(5)
    assert rc is not None, "master still running 5 s after the last response"
    assert rc == 0, rc
    assert h.wait_for(lambda: not s.group_pids(), 3), s.group_pids()
    assert not s.pid_path.exists(), "pid file left behind"


def test_sigquit_stops_accepting(sws):
    data = os.urandom(8 << 20)
    s = sws(files={"html/big.bin": data})
    c, _ = slow_reader_start(s.port, "/big.bin", rcvbuf=16384)
    try:
        s.signal(signal.SIGQUIT)
        closed = h.wait_for(lambda: not h.port_open(s.port), 3)
        assert closed, "still accepting new connections after SIGQUIT"
    finally:
        c.close()
    assert s.wait_exit(5) is not None


def test_sigquit_idle_exits_quickly(sws):
    s = sws()
    with h.Conn(s.port) as c:      # an idle keep-alive connection
        c.send(h.request("GET", "/respond"))
        assert c.read_response().status == 200
        s.signal(signal.SIGQUIT)
        assert c.closed_within(3.0), "idle keep-alive connection kept after SIGQUIT"
    assert s.wait_exit(5) is not None


def test_sigterm_exits_quickly(sws):
    s = sws(workers=2)
    s.wait_children(2)
    assert s.pid_path.exists()
    t0 = time.monotonic()
    s.signal(signal.SIGTERM)
    rc = s.wait_exit(3)
    assert rc is not None, "master still running 3 s after SIGTERM"
    assert time.monotonic() - t0 < 3
    assert h.wait_for(lambda: not s.group_pids(), 3), "workers left: %r" % s.group_pids()
    assert not s.pid_path.exists(), "pid file left behind"


def test_sigterm_with_inflight_download_exits_quickly(sws):
    s = sws(files={"html/big.bin": os.urandom(16 << 20)})
    c, _ = slow_reader_start(s.port, "/big.bin", rcvbuf=16384)
    try:
        s.signal(signal.SIGTERM)
        rc = s.wait_exit(3)
        assert rc is not None, "SIGTERM waited for an in-flight response"
    finally:
        c.close()


def test_s_stop(sws):
    s = sws()
    r = s.control("stop")
    assert r.returncode == 0, r.stderr.decode()
    assert s.wait_exit(5) is not None
    assert not s.pid_path.exists()


def test_s_quit(sws):
    s = sws()
    r = s.control("quit")
    assert r.returncode == 0, r.stderr.decode()
    assert s.wait_exit(5) is not None


def test_s_without_running_server_fails(tmp_path):
    (tmp_path / "html").mkdir()
    conf = tmp_path / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp_path, [h.free_port()]))
    r = h.run_scalwsd(["-p", str(tmp_path) + "/", "-c", str(conf), "-s", "reload"])
    assert r.returncode != 0
    assert r.stderr, "no message"


# ---------------------------------------------------------------- logs, pid

def test_usr1_reopens_logs(sws):
    s = sws()
    h.curl(s.url("/respond?before"))
    assert h.wait_file_contains(s.access_log_path, "/respond?before", 3), s.access_log()
    rotated = s.tmp / "access.log.1"
    os.rename(s.access_log_path, rotated)
    os.rename(s.error_log_path, s.tmp / "error.log.1")
    s.signal(signal.SIGUSR1)
    # the master's and then the worker's "reopening logs", each written to
    # the old file just before that process reopens
    assert h.wait_for(lambda: (s.tmp / "error.log.1").read_text().count("reopening logs") >= 2,
                      timeout=5)
    h.curl(s.url("/respond?after"))
    assert h.wait_file_contains(s.access_log_path, "/respond?after", 3), \
        "new access.log missing or without the request after USR1"
    assert "/respond?after" not in rotated.read_text()
    assert h.wait_for(lambda: s.error_log_path.exists(), 3), "error.log not reopened"


def test_pid_file_written_and_removed(sws):
    s = sws(workers=2)
    assert h.wait_for(lambda: s.pid_path.exists(), 3)
    assert s.pid_path.read_text().strip() == str(s.pid)
    s.signal(signal.SIGTERM)
    assert s.wait_exit(5) is not None
    assert not s.pid_path.exists()


def test_second_instance_same_port_fails(sws, tmp_path):
    s = sws()
    other = tmp_path / "second"
    other.mkdir()
    conf = s.conf_text.replace(str(s.tmp), str(other))
    rc, out, _ = h.start_expect_failure(other, conf=conf)
    assert rc not in (None, 0), out
    assert "in use" in out.lower() or "bind" in out.lower(), out
    assert h.curl(s.url("/respond")).status == 200


def test_worker_processes_auto(sws):
    s = sws(workers="auto")
    n = os.cpu_count()
    kids = s.wait_children(n)
    assert len(kids) == n, "worker_processes auto: %d children, %d CPUs" % (len(kids), n)
    ok_requests(s, 5)


def test_many_reloads_no_leak_of_workers(sws):
    s = sws(workers=1, server=V1)
    for i in range(5):
        s.signal(signal.SIGHUP)
        time.sleep(0.3)
    kids = s.wait_children(1, timeout=5)
    assert len(kids) == 1, "after 5 reloads the master has children %r" % kids
    ok_requests(s, 3, path="/ver", body=b"v1")
