"""The Flask application the uwsgi and scgi tests run under Debian's uWSGI
(tests/integration/uwsgiapp.py): what it was sent, bodies of every size,
redirects, slow and dying responses, cacheable ones."""
import hashlib
import json
import os
import time

from flask import Flask, Response, redirect, request

app = Flask(__name__)
application = app

# The CGI variables a test looks at (the rest of environ is uWSGI's own).
SEEN = ("REQUEST_METHOD", "REQUEST_URI", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE",
        "CONTENT_LENGTH", "SERVER_PROTOCOL", "REQUEST_SCHEME", "HTTPS", "SERVER_NAME",
        "SERVER_PORT", "DOCUMENT_URI", "SCGI", "X_EXTRA", "X_EMPTY")


@app.route("/env", methods=["GET", "POST", "PUT"])
def env():
    e = request.environ
    out = {k: e[k] for k in SEEN if k in e}
    out["http"] = {k: v for k, v in e.items() if k.startswith("HTTP_")}
    out["body_len"] = len(request.get_data())
    return Response(json.dumps(out, sort_keys=True) + "\n", mimetype="application/json")


@app.route("/echo", methods=["POST", "PUT"])
def echo():
    data = request.get_data()
    text = "%d %s\n" % (len(data), hashlib.sha256(data).hexdigest())
    return Response(text, mimetype="text/plain")


@app.route("/big")
def big():
    n = int(request.args.get("n", "1000000"))
    chunk = bytes(range(256)) * 256
    stream = request.args.get("stream") == "1"

    def gen():
        left = n
        while left > 0:
            k = min(left, len(chunk))
            yield chunk[:k]
            left -= k
    if stream:
        return Response(gen(), mimetype="application/octet-stream")
    return Response(b"".join(gen()), mimetype="application/octet-stream")


@app.route("/to")
def to():
    return redirect(request.args.get("where", "http://example.test/there"),
                    code=int(request.args.get("code", "302")))


@app.route("/headers")
def headers():
    r = Response("headers\n", mimetype="text/plain")
    r.headers["X-App"] = "flask"
    r.headers.add("Set-Cookie", "a=1; Path=/")
    r.headers.add("Set-Cookie", "b=2; Path=/")
    r.headers["X-Secret"] = "hidden"
    return r


@app.route("/status/<int:code>")
def status(code):
    return Response("status %d\n" % code, status=code, mimetype="text/plain")


@app.route("/slow")
def slow():
    time.sleep(float(request.args.get("s", "3")))
    return Response("slow\n", mimetype="text/plain")


@app.route("/die")
def die():
    """A Content-Length of 1 MB, half of it, then the worker is gone."""
    def gen():
        yield b"x" * 500000
        os._exit(1)
    return Response(gen(), headers={"Content-Length": "1000000"},
                    mimetype="application/octet-stream")


_hits = {"n": 0}


@app.route("/cached")
def cached():
    _hits["n"] += 1
    r = Response("count %d pid %d\n" % (_hits["n"], os.getpid()), mimetype="text/plain")
    r.headers["Cache-Control"] = "max-age=60"
    return r
