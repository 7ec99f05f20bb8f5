"""A Flask (WSGI) application for test_apps.py."""
import hashlib
import os

from flask import Flask, Response, jsonify, request

app = Flask(__name__)


@app.route("/")
@app.route("/<path:rest>")
def home(rest=""):
    return "flask %d %s" % (os.getpid(), request.path)


@app.route("/pid")
def pid():
    return str(os.getpid())


@app.route("/headers")
def headers():
    return jsonify(dict(request.headers))


@app.route("/env")
def env():
    return jsonify({k: v for k, v in os.environ.items() if k.startswith(("MALLOC_", "APP_"))})


@app.route("/echo", methods=["POST"])
@app.route("/<path:prefix>/echo", methods=["POST"])
def echo(prefix=""):
    h = hashlib.sha256()
    n = 0
    while True:
        chunk = request.stream.read(65536)
        if not chunk:
            break
        n += len(chunk)
        h.update(chunk)
    return "%d %s" % (n, h.hexdigest())


@app.route("/stream")
def stream():
    import time

    n = int(request.args.get("n", "5"))

    def gen():
        for i in range(n):
            yield "chunk %d %d\n" % (i, int(time.time() * 1000))
            time.sleep(0.05)
    return Response(gen(), mimetype="text/plain")
