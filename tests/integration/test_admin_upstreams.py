"""The admin API's upstream servers (docs/admin.md): down, drain, weight
and up act on servers added at run time as on configured ones, and the
state file keeps what was set across a reload and a restart; the idle
keep-alive connections of each server."""
import json

import swsharness as h
from test_admin import api, get, post, start

PATH = "/api/upstreams/back/servers"


def servers(srv):
    return {s["server"]: s for s in api(srv, "/api/upstreams")["back"]["servers"]}


def patch(srv, server, body):
    r = post(srv, PATH + "/" + server, json.dumps(body), method="PATCH")
    assert r.status == 200, r
    return json.loads(r.body)


def test_an_added_server_marked_down_stays_listed(sws):
    srv = start(sws, extra="state_file @TMP@/state/admin.state;",
                http="upstream back { server 127.0.0.1:@PORT@; }",
                server="location /up/ { proxy_pass http://back/; }")
    me = "127.0.0.1:%d" % srv.port
    added = "127.0.0.1:%d" % h.free_port()          # nothing listens there
    r = post(srv, PATH, json.dumps({"server": added, "weight": 4}))
    assert r.status == 201, r

    # down: listed as down, with its weight, and never chosen
    assert patch(srv, added, {"state": "down"}) == {
        "server": added, "address": added, "state": "down", "weight": 4}
    s = servers(srv)
    assert list(s) == [me, added], s
    assert s[added]["state"] == "down" and s[added]["weight"] == 4, s
    for _ in range(6):
        assert h.curl("http://127.0.0.1:%d/up/respond" % srv.port).status == 200
    assert servers(srv)[added]["requests"] == 0
    assert 'admin: upstream "back": server %s set down, weight 4' % added in srv.error_log()
    # a weight while down, then draining, then up again
    assert patch(srv, added, {"weight": 2})["state"] == "down"
    assert patch(srv, added, {"state": "draining"})["state"] == "draining"
    assert patch(srv, added, {"state": "down"})["state"] == "down"
    state = json.loads((srv.tmp / "state" / "admin.state").read_text())
    assert state == {"upstreams": {"back": [
        {"server": me, "weight": 1, "state": "up", "added": False},
        {"server": added, "weight": 2, "state": "down", "added": True}]}}, state

    # kept down across a reload and a restart
    assert post(srv, "/api/reload").status == 200
    s = servers(srv)
    assert s[added]["state"] == "down" and s[added]["weight"] == 2, s
    srv.stop()
    srv.start()
    s = servers(srv)
    assert list(s) == [me, added], s
    assert s[added]["state"] == "down" and s[added]["weight"] == 2, s

    # up: chosen again (it fails: nothing listens), its place kept
    assert patch(srv, added, {"state": "up"})["state"] == "up"
    for _ in range(4):
        h.curl("http://127.0.0.1:%d/up/respond" % srv.port)
    assert servers(srv)[added]["requests"] >= 1
    # draining is kept across a restart too; DELETE removes it for good
    assert patch(srv, added, {"state": "draining"})["state"] == "draining"
    srv.stop()
    srv.start()
    assert servers(srv)[added]["state"] == "draining"
    r = post(srv, PATH + "/" + added, method="DELETE")
    assert r.status == 200 and json.loads(r.body)["state"] == "removed"
    assert list(servers(srv)) == [me]
    r = post(srv, PATH + "/" + added, json.dumps({"state": "down"}), method="PATCH")
    assert r.status == 404


def test_a_configured_down_server_takes_changes(sws):
    # "down" in the configuration: weighted, drained and brought up
    # through the API (it answered 500 before: its slot was free)
    srv = start(sws, http="upstream back { server 127.0.0.1:@PORT@; "
                          "server 127.0.0.1:%d down; }" % h.free_port())
    gone = [s for s, v in servers(srv).items() if v["state"] == "down"][0]
    assert patch(srv, gone, {"weight": 3})["weight"] == 3
    assert patch(srv, gone, {"state": "draining"})["state"] == "draining"
    assert patch(srv, gone, {"state": "down"})["state"] == "down"
    assert patch(srv, gone, {"state": "up"})["state"] == "up"
    # a configured server removed (DELETE) is listed down, and only "up"
    # brings it back: another change is a 409 that changes nothing
    assert post(srv, PATH + "/" + gone, method="DELETE").status == 200
    assert servers(srv)[gone]["state"] == "down"
    for body in ({"weight": 2}, {"state": "draining"}, {"state": "down"}):
        r = post(srv, PATH + "/" + gone, json.dumps(body), method="PATCH")
        assert r.status == 409 and b"was removed" in r.body, (body, r)
    assert servers(srv)[gone]["weight"] == 3
    assert patch(srv, gone, {"state": "up", "weight": 5}) == {
        "server": gone, "address": gone, "state": "up", "weight": 5}


def test_idle_keepalive_connections(sws):
    srv = start(sws, http="upstream back { server 127.0.0.1:@PORT@; keepalive 4; }",
                server="location /up/ { proxy_pass http://back/; }")
    me = "127.0.0.1:%d" % srv.port
    assert servers(srv)[me]["idle"] == 0
    for _ in range(3):
        assert h.curl("http://127.0.0.1:%d/up/respond" % srv.port).status == 200
    s = servers(srv)[me]
    assert s["idle"] == 1 and s["active"] == 0, s
    assert 'scalws_upstream_connections_idle{upstream="back",server="%s"} 1\n' % me \
        in get(srv, "/metrics").body.decode()
    # the old worker's pool closes with it
    assert post(srv, "/api/reload").status == 200
    assert h.wait_for(lambda: servers(srv)[me]["idle"] == 0, 5)


def test_a_slot_taken_by_another_server_keeps_its_gauges_whole(sws):
    # a request in flight on an added server that is removed and whose
    # slot another server takes: its end is counted off the slot's
    # "active", which must not fall below 0 (it read 2^64 - 1)
    import socket
    import time
    hang = socket.socket()                  # accepts (backlog), never answers
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)
    try:
        srv = start(sws, http="upstream back { server 127.0.0.1:@PORT@; "
                              "dynamic_servers 1; }",
                    server="location /up/ { proxy_pass http://back/; }")
        me = "127.0.0.1:%d" % srv.port
        x = "127.0.0.1:%d" % hang.getsockname()[1]
        y = "127.0.0.1:%d" % h.free_port()
        assert post(srv, PATH, json.dumps({"server": x})).status == 201
        assert patch(srv, me, {"state": "down"})["state"] == "down"
        with h.Conn(srv.port) as c:
            c.send(b"GET /up/x HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert h.wait_for(lambda: servers(srv)[x]["active"] == 1, 5)
            assert post(srv, PATH + "/" + x, method="DELETE").status == 200
            assert post(srv, PATH, json.dumps({"server": y})).status == 201
        time.sleep(0.2)
        assert h.wait_for(lambda: servers(srv)[y]["active"] == 0, 5), servers(srv)
        s = servers(srv)[y]
        assert s["idle"] == 0 and s["requests"] == 0, s
    finally:
        hang.close()
