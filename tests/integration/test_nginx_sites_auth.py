"""A site behind an auth_request gatekeeper (tests/sites/auth-gatekeeper.conf,
in the style of oauth2-proxy) under nginx 1.22 and under scalwsd, side by
side: the same gatekeeper (authsvc.py) and application (the test origin)
behind both, the same requests, the same answers."""
import json

import swsharness as h
import test_nginx_sites as ns
from test_auth_request import authsvc  # noqa: F401  (fixtures)
from test_nginx_sites import pair  # noqa: F401

HOST = ["Host: app.test"]
GOOD = ["Cookie: session=good"]
FILES = {"static/app.css": "body { margin: 0 }\n", "index.html": "home\n"}


def test_auth_gatekeeper_site(pair, authsvc):  # noqa: F811
    ports = pair("auth-gatekeeper.conf", FILES, extra={"AUTH": authsvc})
    also = ("set-cookie",)
    # no session: the sign-in page in the place of the 401, from the gatekeeper
    r = ns.same(ports, "GET", "/dashboard?tab=1", HOST, also=also)
    assert (r.status, r.body) == (200, b"sign in\n"), r
    rs = [h.exchange(p, h.request("POST", "/dashboard", host="app.test",
                                  headers=["Content-Length: 3"], body=b"a=b")) for p in ports]
    assert [(r.status, r.body, r.header("www-authenticate")) for r in rs] == \
        [(200, b"sign in\n", 'Bearer realm="test"')] * 2, rs
    # a session: the application gets the request with the user's headers
    # (the echo is compared without the client's port), the client the cookie
    answers = []
    for port in ports:
        resp, body = ns.fetch(port, "GET", "/dashboard?tab=1", HOST + GOOD)
        assert resp.status == 200, resp
        assert resp.header("set-cookie") == "session=good; Path=/; HttpOnly", resp.headers
        echo = json.loads(body)
        answers.append((echo["method"], echo["target"],
                        [(k.lower(), v) for k, v in echo["headers"]
                         if k.lower() in ("x-user", "x-email", "cookie")]))
    assert answers[0] == answers[1], answers
    assert answers[1] == ("GET", "/echo/dashboard?tab=1",
                          [("x-user", "alice"), ("x-email", "alice@example.test"),
                           ("cookie", "session=good")]), answers
    # a POST with a session: the body goes to the application whole
    posts = []
    for port in ports:
        resp = h.exchange(port, h.request("POST", "/form", host="app.test",
                                          headers=GOOD + ["Content-Length: 5"], body=b"a=b&c"))
        echo = json.loads(resp.body)
        posts.append((resp.status, echo["method"], echo["body"]))
    assert posts == [(200, "POST", "a=b&c")] * 2, posts
    # open parts, the admin part's 403, the gatekeeper's own pages
    ns.same(ports, "GET", "/static/app.css", HOST)
    ns.same(ports, "GET", "/static/none.css", HOST)
    ns.same(ports, "GET", "/healthz", HOST)
    ns.same(ports, "GET", "/admin/users", HOST + GOOD)
    ns.same(ports, "GET", "/admin/users", HOST)
    ns.same(ports, "GET", "/oauth2/sign_in", HOST)
    ns.same(ports, "GET", "/oauth2/auth", HOST)              # internal: 404
