"""`set $args` (tests/sites/query-args.conf) under nginx and scalwsd side by
side: the variables that read the query follow it, $request_uri keeps the
client's, and a proxied request carries the new query."""
import json

from test_nginx_sites import fetch, pair, same  # noqa: F401 (fixture)


def target(port, path):
    r, body = fetch(port, "GET", path)
    assert r.status == 200, r
    return json.loads(body)["target"]


def test_set_args(pair):
    ports = pair("query-args.conf", {})
    for path in ("/show/x", "/show/x?q=7", "/show/x?q=7&a=9", "/clear/y?z=1", "/clear/y"):
        same(ports, "GET", path)
    for path in ("/echo", "/echo?x=1", "/echo?key=k", "/echo/sub?x=%20y",
                 "/v1/p", "/v1/p?old=1", "/keep/p?old=1", "/keep/p"):
        tn, ts = (target(p, path) for p in ports)
        assert tn == ts, (path, tn, ts)
    assert target(ports[1], "/echo?x=1") == "/echo?x=1&key=default"
    assert target(ports[1], "/v1/p?old=1") == "/echo/p?version=1"
