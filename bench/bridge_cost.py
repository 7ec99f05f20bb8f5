#!/usr/bin/python3
"""What a request costs the native Python bridge, deterministically
(docs/benchmarks/2026-12-05-apps-bridge-cost-notes.md): instructions per
request under callgrind of the runner's worker or of scalwsd's worker, or
system calls per request of both under strace.

    bench/bridge_cost.py SIDE APP IFACE [--requests N] [--build DIR] [--path DIR]
        SIDE   runner | server | strace | uvicorn | uwsgi
        APP    module:callable (bench/configs/apps and --path on sys.path)
        IFACE  asgi | wsgi

uvicorn and uwsgi: the peers' own process under callgrind the same way,
in place of the runner (the python and python-wsgi-uwsgi scenarios'
commands, one process): uvicorn (uvloop + httptools) on a TCP port behind
"proxy_pass http://peer" with "keepalive 64" (HTTP/1.1, kept alive, as
the bench's nginx), uWSGI on a unix socket behind "uwsgi_pass" (it closes
each connection after its response, as in the bench).

One runner worker on a unix socket (run in the measured process itself:
valgrind does not register forked children with vgdb, so callgrind_control
would not reach a worker the runner forks), scalwsd with one worker and
"upstream { server unix:...; keepalive 64; }", h2load --h1 -c 16: 400
requests to warm up, the counters zeroed, N requests, dumped."""
import argparse
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from procs import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = os.path.join(HERE, "configs", "apps")
# the runner's worker without its fork (see above)
SOLO = ("import os, sys\n"
        "from scalws_bridge import server\n"
        "a = server.parse_args(sys.argv[1:])\n"
        "sys.path[:0] = a.path + [os.getcwd()]\n"
        "sys.exit(server.worker(a, server.listening_socket(a), os.getppid()))\n")


# what the location does for each side (@SOCK@: the runner's socket)
LOCATIONS = {
    "runner": "python_bridge_pass bridge;",
    "server": "python_bridge_pass bridge;",
    "strace": "python_bridge_pass bridge;",
    # as the bench's nginx (bench/configs/nginx/app.frag): scalwsd keeps
    # HTTP/1.1 connections alive by default
    "uvicorn": "proxy_pass http://peer; proxy_set_header X-Forwarded-For "
               "$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Proto $scheme;",
    "uwsgi": "uwsgi_pass unix:@SOCK@; include " + os.path.join(HERE, "..", "conf", "uwsgi_params")
             + ";",
}


def listening(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def load(url, n, c=16):
    out = subprocess.run(["h2load", "--h1", "-c", str(c), "-n", str(n), url],
                         capture_output=True, text=True).stdout
    m = re.search(r"(\d+) succeeded", out)
    if not m or int(m.group(1)) != n:
        raise RuntimeError("h2load: " + out[-800:])


def per_request(path, n):
    """strace -c's table as {syscall: calls per request}."""
    calls = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0][0].isdigit() and f[-1] != "total":
            calls[f[-1]] = int(f[3]) / n
    return calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("side", choices=("runner", "server", "strace", "uvicorn", "uwsgi"))
    ap.add_argument("app")
    ap.add_argument("iface", choices=("asgi", "wsgi"))
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--build", default=os.path.join(HERE, "..", "objs"))
    ap.add_argument("--path", action="append", default=[])
    ap.add_argument("--dump", help="keep the callgrind dump as this file "
                                   "(for callgrind_annotate)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    d = tempfile.mkdtemp(prefix="bcost-")
    os.chmod(d, 0o755)
    sock = os.path.join(d, "b.sock")
    port = free_port()
    peer_port = free_port()
    with open(os.path.join(d, "s.conf"), "w") as f:
        f.write("modules_dir %s/modules;\ndaemon off;\nmaster_process %s;\n"
                "worker_processes 1;\nerror_log %s/error.log warn;\npid %s/scalwsd.pid;\n"
                "events { worker_connections 1024; }\n"
                "http { access_log off; keepalive_requests 1000000;\n"
                "  upstream bridge { server unix:%s; keepalive 64; }\n"
                "  upstream peer { server 127.0.0.1:%d; keepalive 64; }\n"
                "  server { listen 127.0.0.1:%d;\n"
                "           location /app/ { %s } } }\n"
                % (build, "off" if a.side == "server" else "on", d, d, sock, peer_port, port,
                   LOCATIONS[a.side].replace("@SOCK@", sock)))
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"),
               MALLOC_MMAP_THRESHOLD_="524288", MALLOC_TRIM_THRESHOLD_="1048576")
    cg = ["valgrind", "--tool=callgrind", "--callgrind-out-file=%s/cg.%%p" % d]
    rargv = ["/usr/bin/python3", "-c", SOLO, "--socket", sock, "--socket-mode", "666",
             "--app", a.app, "--interface", a.iface, "--workers", "1", "--path", APPS]
    for p in a.path:
        rargv += ["--path", os.path.abspath(p)]
    if a.side == "uvicorn":
        rargv = ["/usr/bin/python3", "-m", "uvicorn", "--host", "127.0.0.1",
                 "--port", str(peer_port), "--loop", "uvloop", "--http", "httptools",
                 "--no-access-log", "--log-level", "warning", "--workers", "1",
                 "--app-dir", APPS, a.app]
    elif a.side == "uwsgi":
        rargv = [shutil.which("uwsgi") or "uwsgi", "--plugin", "python3", "--socket", sock,
                 "--chmod-socket=666", "--processes", "1", "--threads", "1",
                 "--listen", "1024", "--pythonpath", APPS, "--module", a.app,
                 "--need-app", "--disable-logging", "--die-on-term"]
    for p in a.path if a.side in ("uvicorn", "uwsgi") else ():
        rargv[-1:-1] = (["--app-dir", os.path.abspath(p)] if a.side == "uvicorn"
                        else ["--pythonpath", os.path.abspath(p)])
    procs = []
    try:
        runner = subprocess.Popen((cg if a.side not in ("server", "strace") else []) + rargv,
                                  env=env,
                                  stdout=open(os.path.join(d, "runner.log"), "w"),
                                  stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(runner)
        deadline = time.monotonic() + 60
        while not (os.path.exists(sock) if a.side != "uvicorn" else listening(peer_port)):
            if time.monotonic() > deadline or runner.poll() is not None:
                raise RuntimeError("the runner did not start: see %s/runner.log" % d)
            time.sleep(0.1)
        server = subprocess.Popen((cg if a.side == "server" else [])
                                  + [os.path.join(build, "scalwsd"), "-p", d + "/", "-c",
                                     os.path.join(d, "s.conf")],
                                  stdout=open(os.path.join(d, "server.log"), "w"),
                                  stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(server)
        url = "http://127.0.0.1:%d/app/x" % port
        for _ in range(300):
            try:
                load(url, 1, 1)
                break
            except RuntimeError:
                time.sleep(0.2)
        load(url, 400)
        n = a.requests
        if a.side == "strace":
            with open("/proc/%d/task/%d/children" % (server.pid, server.pid)) as f:
                worker = int(f.read().split()[0])
            traces = {"runner": runner.pid, "scalwsd": worker}
            st = [subprocess.Popen(["strace", "-c", "-f", "-o", "%s/strace.%s" % (d, k),
                                    "-p", str(pid)], stderr=subprocess.DEVNULL)
                  for k, pid in traces.items()]
            time.sleep(1.0)
            load(url, n)
            time.sleep(0.3)
            for p in st:
                p.send_signal(signal.SIGINT)
                p.wait(10)
            for k in traces:
                calls = per_request("%s/strace.%s" % (d, k), n)
                print("%s %s %s, system calls per request: %s" % (
                    k, a.app, a.iface, ", ".join("%s %.3f" % kv for kv in
                                                 sorted(calls.items(), key=lambda x: -x[1]))))
            return 0
        target = server.pid if a.side == "server" else runner.pid
        subprocess.run(["callgrind_control", "-z", str(target)], capture_output=True)
        load(url, n)
        subprocess.run(["callgrind_control", "-d", str(target)], capture_output=True)
        dumps = sorted(glob.glob("%s/cg.%d.*" % (d, target)))
        if not dumps:
            raise RuntimeError("no callgrind dump of %d" % target)
        if a.dump:
            shutil.copy(dumps[-1], a.dump)
        total = 0
        for line in open(dumps[-1]):
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
                break
        print("%s %s %s: %.0f instructions per request (%d requests)"
              % (a.side, a.app, a.iface, total / n, n))
        return 0
    finally:
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in reversed(procs):
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
