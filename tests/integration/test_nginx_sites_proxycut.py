"""The response fields behind proxy_pass (tests/sites/proxy-hidden.conf),
under nginx and scalwsd side by side: the default hidden fields (Date,
Server, X-Pad, X-Accel-*) dropped and still seen by $upstream_http_NAME,
proxy_hide_header (a name of the same length as a passed one; names longer
than 63 bytes), proxy_pass_header, hop-by-hop fields dropped. The fields
scalwsd drops before it copies them (issue 21's proxy path) must be the
ones nginx drops."""
import urllib.parse

from test_nginx_sites import fetch, pair  # noqa: F401 (fixture)

LONG = "x-a-field-name-longer-than-sixty-three-bytes-to-fill-the-top-bit-of-it"
LONG2 = "x-another-field-name-longer-than-sixty-three-bytes-passed-on-as-is"
FIELDS = [("Server", "origin-srv"), ("Date", "Mon, 01 Jan 2001 00:00:00 GMT"),
          ("X-Pad", "pad"), ("X-Accel-Expires", "10"), ("Keep-Alive", "timeout=5"),
          ("X-Secret-A", "a"), ("X-Secret-B", "b"), (LONG, "l"), (LONG2, "m"),
          ("Content-Type", "text/x-f"), ("Set-Cookie", "c=1")]
QUERY = "fields?" + urllib.parse.urlencode(FIELDS)
# each server's own (or absent): compared apart
OWN = ("date", "server", "connection")


def answer(port, path):
    r, body = fetch(port, "GET", path)
    assert r.status == 200 and body == b"fields\n", (path, r)
    return r, sorted((k.lower(), v) for k, v in r.headers if k.lower() not in OWN)


def test_hidden_and_passed_fields_as_nginx(pair):
    ports = pair("proxy-hidden.conf", {})
    for loc in ("plain", "hide", "pass", "seen"):
        for _ in range(2):              # a fresh and a kept upstream connection
            (rn, fn), (rs, fs) = (answer(p, "/%s/%s" % (loc, QUERY)) for p in ports)
            assert fn == fs, (loc, fn, fs)
            if loc == "pass":
                assert rs.header("Server") == rn.header("Server") == "origin-srv"
                assert rs.header("Date") == rn.header("Date") == FIELDS[1][1]
            else:
                assert rs.header("Server") != "origin-srv" and rs.header("Date") != FIELDS[1][1]
                assert rn.header("Server") != "origin-srv" and rn.header("Date") != FIELDS[1][1]
    # and what they are
    _, got = answer(ports[1], "/hide/" + QUERY)
    names = [k for k, _ in got]
    for gone in ("x-pad", "x-accel-expires", "keep-alive", "x-secret-a", LONG):
        assert gone not in names, (gone, got)
    for kept in (("x-secret-b", "b"), (LONG2, "m"), ("content-type", "text/x-f"),
                 ("set-cookie", "c=1")):
        assert kept in got, (kept, got)
    _, got = answer(ports[1], "/plain/" + QUERY)
    assert ("x-secret-a", "a") in got and (LONG, "l") in got, got
    _, got = answer(ports[1], "/seen/" + QUERY)
    for seen in (("x-up-server", "origin-srv"), ("x-up-date", FIELDS[1][1]),
                 ("x-up-pad", "pad"), ("x-up-ka", "timeout=5")):
        assert seen in got, (seen, got)
