"""The adaptive runtime: worker_processes_min/max scale the workers by their
busy time (and the accept queue); a burst of work brings a second worker, idle
brings it back to one, and no request fails meanwhile. worker_cpus pins
each worker to one CPU of the set. Configuration errors."""
import base64
import gzip
import os
import threading
import time

import swsharness as h

# gzip at level 9 makes each response cost the worker a few ms of CPU: a few
# clients keep one worker busy whatever the machine's load.
BODY = base64.b64encode(os.urandom(150000))
HTTP = "    gzip on; gzip_comp_level 9; gzip_types text/plain;\n"
MAIN = "worker_processes_min 1;\nworker_processes_max 2;\n"


def burst(port, stop, results, errors):
    while not stop.is_set():
        try:
            with h.Conn(port, timeout=10) as c:
                c.send(h.request("GET", "/big.txt", headers=[("Accept-Encoding", "gzip"),
                                                             ("Connection", "close")]))
                r = c.read_response()
            if r is None or r.status != 200 or gzip.decompress(r.body) != BODY:
                errors.append(repr(r))
            else:
                results.append(1)
        except Exception as e:                 # counted: must stay empty
            errors.append(repr(e))


def workers(s):
    return s.children()


def test_burst_scales_up_then_idle_scales_down(sws):
    s = sws(main=MAIN, http=HTTP, files={"html/big.txt": BODY}, loglevel="notice")
    assert h.wait_for(lambda: len(workers(s)) == 1, 5), workers(s)
    stop = threading.Event()
    results, errors = [], []
    threads = [threading.Thread(target=burst, args=(s.port, stop, results, errors))
               for _ in range(6)]
    for t in threads:
        t.start()
    try:
        up = h.wait_for(lambda: len(workers(s)) == 2, 20)
        assert up, "no second worker under load\n%s" % s.error_log(3000)
        n = len(results)
        assert h.wait_for(lambda: len(results) > n + 10, 20), "no progress with 2 workers"
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert errors == [], errors[:5]
    assert "starting worker 1" in s.error_log()
    # Idle: back to the minimum, gracefully.
    down = h.wait_for(lambda: len(workers(s)) == 1, 20)
    assert down, "still %r workers when idle\n%s" % (workers(s), s.error_log(3000))
    assert "retiring worker 1" in s.error_log()
    assert h.curl(s.url("/respond"), fresh=True).status == 200
    assert "[alert]" not in s.error_log()


def test_never_below_min_nor_above_max(sws):
    s = sws(main="worker_processes_min 2;\nworker_processes_max 3;\n", loglevel="notice")
    assert h.wait_for(lambda: len(workers(s)) == 2, 5), workers(s)
    time.sleep(4.5)                      # idle: several samples, no retirement
    assert len(workers(s)) == 2, workers(s)
    assert "retiring" not in s.error_log()


def test_worker_cpus_pins_workers(sws):
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1]
    s = sws(workers=2, main="worker_cpus %d;" % cpu)
    kids = s.wait_children(2)
    assert len(kids) == 2
    for k in kids:
        with open("/proc/%d/status" % k) as f:
            line = [ln for ln in f if ln.startswith("Cpus_allowed_list")][0]
        assert line.split(":")[1].strip() == str(cpu), line


def test_reuseport_scales_too(sws):
    # One socket per worker no longer keeps the maximum (the ways it
    # retires one: test_adaptive_reuseport.py).
    s = sws(main=MAIN, loglevel="notice",
            server="        listen 127.0.0.1:@PORT2@ reuseport;\n", ports=2)
    assert h.wait_for(lambda: len(workers(s)) == 1, 5), workers(s)
    time.sleep(1.5)
    assert len(workers(s)) == 1, workers(s)
    assert "keep worker_processes_max" not in s.error_log()
    assert h.exchange(s.ports[1], h.request("GET", "/respond"), timeout=5).status == 200


def test_adaptive_configuration_errors(tmp_path):
    cases = [
        ("worker_processes_min 3;\nworker_processes_max 2;",
         "worker_processes_min 3 is more than worker_processes_max 2"),
        ("worker_processes_max 0;", "invalid value"),
        ("worker_processes_min x;", "invalid value"),
        ("worker_cpus 3-1;", "invalid CPU list"),
        ("worker_cpus 0-100000;", "invalid CPU list"),
        ("worker_cpu_affinity auto;\nworker_processes_max 2;", "use worker_cpus"),
    ]
    for i, (main, text) in enumerate(cases):
        d = tmp_path / ("c%d" % i)
        d.mkdir()
        rc, out, listening = h.start_expect_failure(d, main=main)
        assert rc not in (None, 0) and not listening, (main, out)
        assert text in out, (main, out)
        if "worker_cpus" in main or "x;" in main or "max 0" in main:
            assert "scalws.conf:" in out, (main, out)    # file and line


def test_worker_processes_is_where_it_starts(sws):
    # worker_processes 3 with a maximum of 2: starts at 2 (then idle brings
    # it down to the minimum, 1)
    s = sws(workers=3, main=MAIN, loglevel="notice")
    assert h.wait_for(lambda: len(workers(s)) == 2, 5), workers(s)
    assert h.wait_for(lambda: len(workers(s)) == 1, 20), workers(s)
