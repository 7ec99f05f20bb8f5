"""The python-wsgi scenario's WSGI application: "Hello, world!" (13 bytes)."""

BODY = b"Hello, world!"
HEAD = [("Content-Type", "text/plain"), ("Content-Length", "13")]


def app(environ, start_response):
    start_response("200 OK", HEAD)
    return [BODY]
