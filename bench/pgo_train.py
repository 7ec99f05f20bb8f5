#!/usr/bin/env python3
"""Training load for the profile-guided build (make pgo).

Starts the instrumented scalwsd on a free loopback port with a temporary
prefix, sends a fixed mix of requests that looks like the benchmarks and
the common paths (fixed responses, small and large static files, 404s,
HEAD, ranges, conditionals, pipelining, a few malformed requests), then
stops it gracefully so that every process writes its profile.

usage: pgo_train.py SCALWSD MODULES_DIR SRC_DIR
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

CONF = """
daemon off;
master_process on;
worker_processes 1;
user {user};
error_log {tmp}/error.log error;
pid {tmp}/scalws.pid;
modules_dir {modules};
events {{ worker_connections 1024; }}
http {{
    include {src}/conf/mime.types;
    default_type application/octet-stream;
    access_log off;
    # not the configure-time defaults: they may be system paths that do not
    # exist where the package is built (--http-client-body-temp-path,
    # --http-proxy-temp-path; fastcgi's default is the proxy's)
    client_body_temp_path {tmp}/client_body_temp;
    proxy_temp_path {tmp}/proxy_temp;
    fastcgi_temp_path {tmp}/fastcgi_temp;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {tmp}/html;
        location = /respond {{ respond 200 "Hello, world!"; }}
        location /cached/ {{ open_file_cache max=100; }}
    }}
}}
"""


def read_file(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_response(sock, buf):
    """Read one response; returns the rest of the buffer."""
    while True:
        i = buf.find(b"\r\n\r\n")
        if i >= 0:
            head = buf[:i].decode("latin-1").lower()
            n = 0
            for line in head.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k == "content-length":
                    n = int(v)
            if head.startswith("http/1.1 304") or " head " in head:
                n = 0
            if len(buf) >= i + 4 + n:
                return buf[i + 4 + n:]
        data = sock.recv(1 << 20)
        if not data:
            return b""
        buf += data


def request(path, method="GET", extra=""):
    return ("%s %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: train\r\n"
            "Accept: */*\r\n%s\r\n" % (method, path, extra)).encode()


def keepalive_round(port, reqs, heads):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        buf = b""
        for req, is_head in zip(reqs, heads):
            s.sendall(req)
            if is_head:
                while b"\r\n\r\n" not in buf:
                    buf += s.recv(65536)
                buf = buf[buf.find(b"\r\n\r\n") + 4:]
            else:
                buf = read_response(s, buf)


def one_shot(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass


def main():
    scalwsd, modules, src = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="sws-pgo-")
    os.makedirs(tmp + "/html/cached")
    with open(tmp + "/html/hello.txt", "wb") as f:
        f.write(b"Hello, world!")
    with open(tmp + "/html/cached/hello.txt", "wb") as f:
        f.write(b"Hello, world!")
    with open(tmp + "/html/1m.bin", "wb") as f:
        f.write(os.urandom(1 << 20))
    with open(tmp + "/html/index.html", "wb") as f:
        f.write(b"<html>index</html>\n")
    os.chmod(tmp, 0o755)
    port = free_port()
    import pwd
    user = pwd.getpwuid(os.getuid()).pw_name
    with open(tmp + "/scalws.conf", "w") as f:
        f.write(CONF.format(tmp=tmp, modules=modules, src=src, port=port, user=user))
    proc = subprocess.Popen([scalwsd, "-p", tmp + "/", "-c", tmp + "/scalws.conf"])
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    sys.exit("pgo training: scalwsd exited with %d at start:\n%s"
                             % (proc.returncode, read_file(tmp + "/error.log")))
                time.sleep(0.05)
        mix = [("/respond", False), ("/hello.txt", False), ("/cached/hello.txt", False),
               ("/respond", False), ("/hello.txt", False), ("/", False),
               ("/missing.txt", False)]
        reqs = [request(p) for p, _ in mix] + [request("/hello.txt", "HEAD")]
        heads = [h for _, h in mix] + [True]
        for _ in range(1500):
            keepalive_round(port, reqs, heads)
        for _ in range(20):
            keepalive_round(port, [request("/1m.bin")], [False])
            keepalive_round(port, [request("/hello.txt", extra="Range: bytes=0-4\r\n"),
                                   request("/hello.txt",
                                           extra="If-Modified-Since: Thu, 01 Jan 2037 00:00:00 GMT\r\n")],
                            [False, False])
        pipelined = b"".join(request("/respond") for _ in range(16))
        for _ in range(200):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.sendall(pipelined + request("/respond", extra="Connection: close\r\n"))
                while s.recv(65536):
                    pass
        for bad in (b"GET / HTTP/1.1\r\n\r\n", b"GET /x HTTP/2.0\r\nHost: a\r\n\r\n",
                    b"BAD LINE\r\n\r\n", b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n"):
            for _ in range(50):
                one_shot(port, bad)
    finally:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    subprocess.call(["rm", "-rf", tmp])
    print("pgo training done")


if __name__ == "__main__":
    main()
