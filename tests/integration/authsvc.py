"""A small authentication service for the auth_request tests, in the way
of oauth2-proxy's /oauth2/auth: a Python http.server process the tests
start on a free port (python3 authsvc.py PORT).

  any path       200 when the request has "Cookie: session=good" or
                 "X-Token: good" (X-Auth-Request-User: alice,
                 X-Auth-Request-Email: alice@example.test, a Set-Cookie
                 that refreshes the session), else 401 with
                 WWW-Authenticate: Bearer realm="test"
  /code/NNN      that status (401: two WWW-Authenticate fields; 3xx: a
                 Location)
  /slow/MS       waits MS ms, then as any path
  .../sign_in    200 "sign in" (the error_page of the gatekeeper site)

Every answer has X-Seen-Uri (the X-Original-URI it got), X-Seen-Method,
X-Seen-Length (the Content-Length it got, "-" if none), X-Seen-Path, and a
body that the client must never see.
"""
import http.server
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        path = self.path.split("?", 1)[0]
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        if path.startswith("/slow/"):
            time.sleep(int(path.split("/")[2]) / 1000.0)
        good = ("session=good" in self.headers.get("Cookie", "")
                or self.headers.get("X-Token") == "good")
        status = 200 if good else 401
        if path.startswith("/code/"):
            status = int(path.split("/")[2])
        body = b"the auth service's own body"
        if path.endswith("/sign_in"):
            status, body = 200, b"sign in\n"
        self.send_response(status)
        if status == 200 and good:
            self.send_header("X-Auth-Request-User", "alice")
            self.send_header("X-Auth-Request-Email", "alice@example.test")
            self.send_header("Set-Cookie", "session=good; Path=/; HttpOnly")
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="test"')
            if path.startswith("/code/"):
                self.send_header("WWW-Authenticate", 'Basic realm="second"')
        if 300 <= status < 400:
            self.send_header("Location", "http://login.test/")
        self.send_header("X-Seen-Uri", self.headers.get("X-Original-URI", "-"))
        self.send_header("X-Seen-Method", self.command)
        self.send_header("X-Seen-Length", self.headers.get("Content-Length", "-"))
        self.send_header("X-Seen-Path", self.path)
        if status in (204, 304):
            body = b""                      # none may follow (RFC 9110)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = answer


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


if __name__ == "__main__":
    Server(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
