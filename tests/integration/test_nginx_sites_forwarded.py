"""What the origin gets behind a plain proxy_pass (tests/sites/plain-proxy.conf),
under nginx and scalwsd side by side: the same fields, the client's
X-Forwarded-* passed as they came unless proxy_set_header makes them. (The
request line's version and Connection differ on purpose: docs/compat.md.)"""
import json

from test_nginx_sites import fetch, pair  # noqa: F401 (fixture)

CLIENT = [["X-Forwarded-For: 198.51.100.7", "X-Forwarded-Proto: https", "X-Custom: c"],
          ["X-Forwarded-For: 198.51.100.7", "X-Forwarded-For: 10.0.0.1"],
          []]


def fields(port, path, headers):
    r, body = fetch(port, "GET", path, headers)
    assert r.status == 200, r
    return sorted((k.lower(), v) for k, v in json.loads(body)["headers"]
                  if k.lower() not in ("connection",))


def test_forwarded_fields_as_nginx(pair):
    ports = pair("plain-proxy.conf", {})
    for path in ("/echo", "/set/x"):
        for headers in CLIENT:
            fn, fs = (fields(p, path, headers) for p in ports)
            assert fn == fs, (path, headers, fn, fs)
    # and what they are
    got = dict(fields(ports[1], "/echo", CLIENT[0]))
    assert got["x-forwarded-for"] == "198.51.100.7" and got["x-forwarded-proto"] == "https"
    got = fields(ports[1], "/set/x", CLIENT[1])
    assert ("x-forwarded-for", "198.51.100.7, 10.0.0.1, 127.0.0.1") in got
    assert ("x-forwarded-proto", "http") in got and ("x-real-ip", "127.0.0.1") in got
    assert "x-forwarded-for" not in dict(fields(ports[1], "/echo", []))
