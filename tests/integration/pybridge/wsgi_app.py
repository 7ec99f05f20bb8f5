"""The Flask application of the python bridge's tests (test_python_bridge.py),
under the prefix /w, with raw WSGI endpoints beside it (/w/raw/...) for
what PEP 3333 says of iterables with close() and wsgi.file_wrapper. MARKS
(an environment variable) is a directory where it leaves files the tests
look at."""
import hashlib
import os
import time

import io

from flask import Flask, Response, jsonify, request, send_file

MARKS = os.environ.get("MARKS", "/tmp")


def mark(name, text=""):
    with open(os.path.join(MARKS, name), "w") as f:
        f.write(text)


flask_app = Flask(__name__)


@flask_app.route("/w/echo", methods=["GET", "POST", "PUT", "HEAD"])
def echo():
    body = request.get_data()
    env = request.environ
    return jsonify({
        "method": request.method,
        "path": env["PATH_INFO"],
        "query": env["QUERY_STRING"],
        "args": request.args.to_dict(),
        "request_uri": env.get("REQUEST_URI"),
        "http": {k: v for k, v in env.items() if k.startswith("HTTP_")},
        "content_type": env.get("CONTENT_TYPE"),
        "content_length": env.get("CONTENT_LENGTH"),
        "remote_addr": env["REMOTE_ADDR"],
        "server_name": env["SERVER_NAME"],
        "server_port": env["SERVER_PORT"],
        "protocol": env["SERVER_PROTOCOL"],
        "scheme": env["wsgi.url_scheme"],
        "length": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
        "pid": os.getpid(),
    })


@flask_app.route("/w/upload", methods=["POST"])
def upload():
    h = hashlib.sha256()
    n = 0
    while True:
        chunk = request.stream.read(8192)
        if not chunk:
            break
        h.update(chunk)
        n += len(chunk)
    return jsonify({"length": n, "sha256": h.hexdigest()})


@flask_app.route("/w/lateread", methods=["POST"])
def lateread():
    time.sleep(float(request.args.get("wait", "1.5")))
    n = 0
    while True:
        chunk = request.stream.read(65536)
        if not chunk:
            break
        n += len(chunk)
    return jsonify({"length": n})


@flask_app.route("/w/stream")
def stream():
    n = int(request.args.get("n", "10"))
    size = int(request.args.get("size", "1000"))

    def gen():
        for i in range(n):
            yield bytes([65 + i % 26]) * size
    return Response(gen(), mimetype="application/octet-stream")


@flask_app.route("/w/endless")
def endless():
    total = int(request.args.get("total", str(64 << 20)))
    chunk = b"x" * 65536

    def gen():
        produced = 0
        while produced < total:
            produced += len(chunk)
            if produced % (1 << 20) == 0:
                mark("produced-wsgi", str(produced))
            yield chunk
        mark("produced-wsgi", str(produced))
    return Response(gen(), mimetype="application/octet-stream")


@flask_app.route("/w/status/<int:code>")
def status(code):
    r = Response("status %d\n" % code, status=code, headers={"X-Test": "yes"})
    r.set_cookie("a", "1")
    r.set_cookie("b", "2")
    return r


@flask_app.route("/w/streamfail")
def streamfail():
    def gen():
        yield b"first part, "
        raise RuntimeError("the stream failed on purpose")
    return Response(gen(), mimetype="text/plain")


@flask_app.route("/w/error")
def error():
    raise RuntimeError("the application failed on purpose")


@flask_app.route("/w/sendfile")
def sendfile():
    """Flask's send_file of MARKS/big.bin: a wsgi.file_wrapper of the file
    (Werkzeug answers a Range itself, with a wrapper of its own)."""
    return send_file(os.path.join(MARKS, "big.bin"), mimetype="application/octet-stream",
                     conditional=True)


class Closing:
    """An iterable with close() (PEP 3333: the server calls it)."""

    def __init__(self, parts):
        self.parts = parts

    def __iter__(self):
        return iter(self.parts)

    def close(self):
        mark("closed")


class Endless:
    """64 KiB parts up to 1 GiB, close() marked "closed-endless": a client
    that goes in the middle must still get it called (PEP 3333)."""

    def __iter__(self):
        part = b"e" * 65536
        for _ in range(16384):
            yield part

    def close(self):
        mark("closed-endless")


def raw(environ, start_response):
    path = environ["PATH_INFO"]
    if path == "/w/raw/endless":
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return Endless()
    if path == "/w/raw/closing":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Closing([b"one ", b"two ", b"three"])
    if path == "/w/raw/file":
        f = open(os.path.join(MARKS, "file.bin"), "rb")
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return environ["wsgi.file_wrapper"](f, 32768)
    if path == "/w/raw/fileat":
        # from the file's position on, with the application's length
        f = open(os.path.join(MARKS, "big.bin"), "rb")
        f.seek(1000)
        start_response("200 OK", [("Content-Type", "application/octet-stream"),
                                  ("Content-Length", "5000")])
        return environ["wsgi.file_wrapper"](f)
    if path == "/w/raw/bytesio":
        # no descriptor: the iterable's path
        start_response("200 OK", [("Content-Type", "text/plain")])
        return environ["wsgi.file_wrapper"](io.BytesIO(b"not a file, " * 1000), 4096)
    if path == "/w/raw/write":
        write = start_response("201 Created", [("Content-Type", "text/plain")])
        write(b"written ")
        return [b"and returned"]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no such raw endpoint\n"]


def app(environ, start_response):
    if environ["PATH_INFO"].startswith("/w/raw/"):
        return raw(environ, start_response)
    return flask_app(environ, start_response)
