"""Which Upgrade requests the proxy tunnels (proxy_upgrade): WebSocket by
default, a configured list otherwise, never h2c ("h2c smuggling": a tunnel
speaking HTTP/2 to the origin would carry requests that no location rule of
this server sees). Anything else goes as a plain request, without Upgrade,
HTTP2-Settings or "Connection: upgrade"."""
import base64
import json
import os

import conferr
import swsharness as h
from proxyorigin import read_ws_frame, ws_frame

H2C = [("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"),
       ("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")]


def names(req):
    return [k.lower() for k, v in req["headers"]]


def value(req, name):
    return [v for k, v in req["headers"] if k.lower() == name]


def echo(port, headers, path="/echo"):
    r = h.exchange(port, h.request("GET", path, headers=headers))
    assert r.status == 200, r
    return json.loads(r.body)


def assert_plain(req):
    for n in ("upgrade", "http2-settings"):
        assert n not in names(req), req
    assert all("upgrade" not in v.lower() for v in value(req, "connection")), req


def ws_upgrade(port, proto="websocket", path="/ws"):
    key = base64.b64encode(os.urandom(16)).decode()
    c = h.Conn(port)
    c.send(h.request("GET", path, headers=[("Upgrade", proto), ("Connection", "Upgrade"),
                                            ("Sec-WebSocket-Key", key),
                                            ("Sec-WebSocket-Version", "13")]))
    return c


def assert_tunnel(port, proto="websocket"):
    c = ws_upgrade(port, proto)
    try:
        r = c.read_response()
        assert r.status == 101, r
        c.send(ws_frame(1, b"through"))
        frame, _ = read_ws_frame(c.sock, c.buf)
        assert frame == (1, b"through")
    finally:
        c.close()


def test_h2c_not_forwarded_by_default(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    req = echo(srv.port, H2C)
    assert_plain(req)
    assert req["version"] == "HTTP/1.1"


def test_h2c_origin_answering_101_is_not_tunnelled(sws, origin):
    # /ws answers 101 whatever it is asked: the proxy did not ask, so 502
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    c = h.Conn(srv.port)
    c.send(h.request("GET", "/ws", headers=H2C))
    assert c.read_response().status == 502
    c.close()
    assert "asked for no upgrade" in srv.error_log()


def test_h2c_refused_even_when_listed_with_websocket(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    for up in ("h2c, websocket", "websocket, h2c", "H2C"):
        assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", up)]))
    # two Upgrade fields: each one must be allowed
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "websocket"),
                                 ("Upgrade", "h2c")]))


def test_http2_settings_always_stripped(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    req = echo(srv.port, [("HTTP2-Settings", "AAMAAABk"), ("X-Kept", "1")])
    assert "http2-settings" not in names(req)
    assert value(req, "x-kept") == ["1"]


def test_websocket_tunnelled_by_default(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    assert_tunnel(srv.port)
    assert_tunnel(srv.port, "WebSocket")          # names are case-insensitive
    assert_tunnel(srv.port, "websocket/13")       # the version is not compared
    assert o.last().header("Upgrade") == "websocket/13"


def test_other_protocol_not_forwarded_by_default(sws, origin):
    o = origin()
    srv = sws(server="location / { proxy_pass http://%s; }" % o.addr)
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "foo")]))


def test_configured_list(sws, origin):
    o = origin()
    srv = sws(server="""
        location / { proxy_pass http://%s; proxy_upgrade foo Bar; }
        location /on/ { proxy_pass http://%s/; proxy_upgrade on; }
        location /off/ { proxy_pass http://%s/; proxy_upgrade off; }
    """ % (o.addr, o.addr, o.addr))
    assert_tunnel(srv.port, "foo")
    assert_tunnel(srv.port, "bar/2")
    # websocket is not in this location's list
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "websocket")]))
    # on: the default list
    c = ws_upgrade(srv.port, "websocket", "/on/ws")
    assert c.read_response().status == 101
    c.close()
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "foo")], "/on/echo"))
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "websocket")],
                      "/off/echo"))


def test_inherited_from_server_level(sws, origin):
    o = origin()
    srv = sws(server="""
        proxy_upgrade foo;
        location / { proxy_pass http://%s; }
    """ % o.addr)
    assert_tunnel(srv.port, "foo")
    assert_plain(echo(srv.port, [("Connection", "upgrade"), ("Upgrade", "websocket")]))


def test_nginx_style_set_header_does_not_leak_h2c(sws, origin):
    # nginx's WebSocket recipe: the Upgrade field from a variable. It is
    # sent only for an upgrade the location allows.
    o = origin()
    srv = sws(server="""
        location / {
            proxy_pass http://%s;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
        }
    """ % o.addr)
    req = echo(srv.port, H2C)
    assert "upgrade" not in names(req) and "http2-settings" not in names(req), req
    assert_tunnel(srv.port)
    assert o.last().header("Upgrade") == "websocket"


def test_config_errors(tmp_path):
    loc = "        location / { proxy_pass http://127.0.0.1:1; %s }  # ERR\n"
    cases = [
        ("proxy_upgrade h2c;", ["h2c"]),
        ("proxy_upgrade websocket H2C;", ["h2c"]),
        ("proxy_upgrade on websocket;", ["invalid protocol", "on"]),
        ("proxy_upgrade \"web socket\";", ["invalid protocol"]),
        ("proxy_upgrade \"\";", ["invalid protocol"]),
        ("proxy_upgrade a/1;", ["invalid protocol"]),
        ("proxy_upgrade foo; proxy_upgrade bar;", ["duplicate"]),
        ("proxy_upgrade;", ["proxy_upgrade"]),
    ]
    for i, (d, words) in enumerate(cases):
        conferr.check(tmp_path / ("c%d" % i), words, server=loc % d)
    conferr.check_ok(tmp_path / "ok", server=loc % "proxy_upgrade websocket foo;")
