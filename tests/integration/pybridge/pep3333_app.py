"""A raw WSGI application under wsgiref.validate's validator (which fails
the request on anything PEP 3333 forbids in the environ, wsgi.input,
wsgi.errors, start_response or the iterable) for test_python_bridge.py:
it answers with what a PEP 3333 reader checks, as JSON. /lines reads the
body with readline(), read(n) and iteration, as frameworks do."""
import json

from wsgiref.validate import validator

CGI = ("REQUEST_METHOD", "SCRIPT_NAME", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE",
       "CONTENT_LENGTH", "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL")

def raw(environ, start_response):
    inp = environ["wsgi.input"]
    out = {k: environ.get(k) for k in CGI}
    out["native"] = all(type(v) is str for k, v in environ.items()
                        if k.isupper() and "." not in k)
    out["http"] = {k: v for k, v in environ.items() if k.startswith("HTTP_")}
    out["wsgi"] = {
        "version": list(environ["wsgi.version"]),
        "url_scheme": environ["wsgi.url_scheme"],
        "flags": [type(environ[k]) is bool
                  for k in ("wsgi.multithread", "wsgi.multiprocess", "wsgi.run_once")],
        "run_once": environ["wsgi.run_once"],
        "errors": environ["wsgi.errors"] is not None,
    }
    environ["wsgi.errors"].write("pep3333 app: wsgi.errors works\n")
    environ["wsgi.errors"].flush()
    if environ["PATH_INFO"].endswith("/lines"):
        first = inp.readline()
        part = inp.read(5)
        rest = list(inp)
        out["lines"] = [first.decode("latin-1"), part.decode("latin-1")] \
            + [x.decode("latin-1") for x in rest]
        out["eof"] = inp.read(10) == b"" and inp.readline() == b""
    else:
        out["body"] = len(inp.read(int(environ.get("CONTENT_LENGTH") or 0)))
    body = json.dumps(out).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]

app = validator(raw)
