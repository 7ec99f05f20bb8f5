"""A handler that answers without reading the request discards its body; a
request without one gets no body object then (nothing to discard), and an
error_page that sends the request on to the proxy reads it afresh: an empty
body for a GET, over HTTP/1.1 and HTTP/2 (h2c), and the connection goes on.
(A POST whose body was discarded so is answered 500 by the proxy: its body
is gone.)"""
import json

import swsharness as h


def test_get_after_a_discard(sws, origin):
    o = origin()
    srv = sws(ports=2, server="""
        listen 127.0.0.1:@PORT2@ http2;
        location = /gone { error_page 404 = /to-origin; return 404; }
        location = /to-origin { internal; proxy_pass http://%s/echo; }
        """ % o.addr)
    for base, h2 in (("http://127.0.0.1:%d" % srv.port, False),
                     ("http://127.0.0.1:%d" % srv.ports[1], True)):
        for path in ("/gone",):
            r = h.curl(base + path, prior_knowledge=h2)
            assert r.status == 200, (base, path, r.status, r.body)
            got = json.loads(r.body)
            assert got["method"] == "GET" and got["body"] == ""
            names = [k.lower() for k in (got["headers"].keys() if isinstance(got["headers"], dict)
                                         else (pair[0] for pair in got["headers"]))]
            assert "host" in names and "content-length" not in names, got
            assert not got["chunked"], got
    # the connection stays usable after each: keep-alive GETs in a row
    c = h.Conn(srv.port)
    try:
        for _ in range(3):
            c.send(h.request("GET", "/gone"))
            assert c.read_response().status == 200
    finally:
        c.close()
