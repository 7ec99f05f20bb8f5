"""POST and other methods on a site of files with an application behind
error_page (tests/sites/form-fallback.conf), under nginx and scalwsd side
by side: the request body reaches the application through error_page (to a
named location with the method kept, to a URI as GET), and files refuse
POST only when they exist (a missing one is 404, a directory redirected or
its index refused)."""
import json

from test_nginx_sites import fetch, pair, same  # noqa: F401 (pair: a fixture)

FILES = {"page.html": "<p>page</p>\n", "docs/index.html": "<p>docs</p>\n",
         "plain/f.txt": "f\n", "plain/dir/index.html": "i\n"}
HOST = "Host: forms.test"


def post(method, body):
    return [HOST, "Content-Type: application/x-www-form-urlencoded",
            "Content-Length: %d" % len(body)], body


def exchange(ports, method, path, body):
    """Both servers' answers to one request with a body."""
    import swsharness as h
    out = []
    for port in ports:
        headers, data = post(method, body)
        out.append(h.exchange(port, h.request(method, path, host=None, headers=headers,
                                              body=data), method=method))
    return out


def test_bodies_through_error_page(pair):  # noqa: F811
    ports = pair("form-fallback.conf", FILES)
    body = "name=ada&lang=en"
    for method, path, seen in (("POST", "/signup", ("POST", "/echo")),
                               ("PUT", "/gone/x", ("PUT", "/echo")),
                               ("POST", "/legacy/form", ("GET", "/echo/"))):
        rn, rs = exchange(ports, method, path, body)
        assert rs.status == rn.status == 200, (method, path, rn, rs)
        en, es = json.loads(rn.body), json.loads(rs.body)
        assert (es["method"], es["target"]) == (en["method"], en["target"]) == seen, (en, es)
        # the method kept: the body goes on with it
        assert es["body"] == en["body"], (method, path, en, es)


def test_files_and_post(pair):  # noqa: F811
    ports = pair("form-fallback.conf", FILES)
    for method in ("POST", "PUT", "DELETE"):
        for path in ("/plain/f.txt", "/plain/missing", "/plain/dir", "/plain/dir/",
                     "/plain/", "/page.html", "/docs/"):
            headers, data = post(method, "a=1")
            same(ports, method, path, headers + [], body=False)
    # several posts on one connection: the refused bodies are read and dropped
    import swsharness as h
    for port in ports:
        with h.Conn(port) as c:
            for path in ("/plain/missing", "/plain/f.txt", "/plain/missing"):
                headers, data = post("POST", "x" * 5000)
                c.send(h.request("POST", path, host=None, headers=headers, body=data))
                r = c.read_response("POST")
                assert r.status in (404, 405), r
            headers, data = post("POST", "")
            c.send(h.request("GET", "/page.html", host=None, headers=[HOST]))
            assert c.read_response("GET").status == 200
